//! Runs the real `kradan serve` on a free loopback port for the end-to-end tests, and
//! talks HTTP and server-sent events to it.
#![allow(dead_code)]

pub mod sse;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub const TOKEN: &str = "test-token-0123";

pub fn sample(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(path)
        .display()
        .to_string()
}

/// An event file with these boards: `(name, game, source, size)`.
pub fn event_file(dir: &Path, boards: &[(&str, &str, &str, Option<usize>)]) -> PathBuf {
    let mut text = String::new();
    for (name, game, source, size) in boards {
        text.push_str(&format!(
            "[[board]]\nname = \"{name}\"\ngame = \"{game}\"\nsource = \"{source}\"\n"
        ));
        if let Some(size) = size {
            text.push_str(&format!("size = {size}\n"));
        }
        text.push_str("players = { black = \"Somchai\", white = \"Nida\" }\n\n");
    }
    let path = dir.join("hall.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub struct Server {
    child: Child,
    pub base: String,
    pub stderr: PathBuf,
}

impl Server {
    /// Starts `kradan serve` and waits until it answers.
    pub fn start(data: &Path, event: Option<&Path>) -> Server {
        let port = free_port();
        let stderr = data.with_extension(format!("{port}.log"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_kradan"));
        command
            .arg("serve")
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--data")
            .arg(data)
            .arg("--token")
            .arg(TOKEN)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap());
        if let Some(event) = event {
            command.arg("--event").arg(event);
        }
        let child = command.spawn().expect("kradan serve starts");
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stderr,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while server.try_get("/api/boards").is_none() {
            assert!(
                Instant::now() < deadline,
                "kradan serve did not answer: {}",
                std::fs::read_to_string(&server.stderr).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn try_get(&self, path: &str) -> Option<(u16, String)> {
        let agent = agent();
        let mut response = agent.get(format!("{}{path}", self.base)).call().ok()?;
        let status = response.status().as_u16();
        Some((status, response.body_mut().read_to_string().ok()?))
    }

    /// GET: the status and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        self.try_get(path)
            .unwrap_or_else(|| panic!("GET {path} got no answer"))
    }

    pub fn get_bytes(&self, path: &str) -> (u16, Vec<u8>) {
        let mut response = agent().get(format!("{}{path}", self.base)).call().unwrap();
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(256 * 1024 * 1024)
            .read_to_vec()
            .unwrap();
        (status, bytes)
    }

    pub fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// POST an action with this Authorization header (none when `None`).
    pub fn act(&self, board: &str, authorization: Option<&str>, body: &str) -> (u16, Value) {
        let mut request = agent()
            .post(format!("{}/api/boards/{board}/actions", self.base))
            .header("Content-Type", "application/json");
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        let mut response = request.send(body).unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub fn act_as_referee(&self, board: &str, body: &str) -> (u16, Value) {
        self.act(board, Some(&format!("Bearer {TOKEN}")), body)
    }

    /// Listens to `/api/stream?QUERY`: each `update` as JSON with the local time it arrived
    /// (milliseconds since 1970), on a channel.
    pub fn listen(&self, query: &str) -> mpsc::Receiver<(Value, u64)> {
        let (sender, receiver) = mpsc::channel();
        let url = format!("{}/api/stream{query}", self.base);
        std::thread::spawn(move || {
            let Ok(response) = agent().get(url).call() else {
                return;
            };
            sse::read_events(response.into_body().into_reader(), |name, data| {
                if name != "update" {
                    return true;
                }
                let value: Value = serde_json::from_str(data).unwrap();
                sender.send((value, now_ms())).is_ok()
            });
        });
        receiver
    }

    /// Waits until the board's view satisfies `done`, or panics after `seconds`.
    pub fn wait_for(&self, board: &str, seconds: u64, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        loop {
            let view = self.json(&format!("/api/boards/{board}"));
            if done(&view) {
                return view;
            }
            assert!(
                Instant::now() < deadline,
                "board {board} did not get there in {seconds} s: {view}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Ends the server as an operator would (SIGTERM) and waits for it.
    pub fn stop(mut self) -> std::process::ExitStatus {
        self.terminate()
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return self.child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.terminate();
        }
    }
}

pub fn moves(view: &Value) -> u64 {
    view["now"]["number"].as_u64().unwrap_or(0)
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
