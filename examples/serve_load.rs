//! Load test of `kradan serve`: many boards recording rendered footage at once (each a
//! bundled 640×480 clip played as a camera), many overlay clients listening to the pushed
//! updates on loopback. Reports updates dropped (must be 0), the latency from an event's
//! commit to a client, and the server's peak memory.
//!
//! ```sh
//! cargo build --release --bin kradan --example serve_load
//! target/release/examples/serve_load [--boards 16] [--clients 200] [--seconds 75] [--rate 10]
//! ```

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[path = "../tests/serve_support/sse.rs"]
mod sse;

const TOKEN: &str = "load-test-token";

struct Options {
    boards: usize,
    clients: usize,
    seconds: u64,
    rate: f64,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        boards: 16,
        clients: 200,
        seconds: 75,
        rate: 10.0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |_| format!("{flag} {value}: not a number");
        match flag.as_str() {
            "--boards" => options.boards = value.parse().map_err(bad)?,
            "--clients" => options.clients = value.parse().map_err(bad)?,
            "--seconds" => options.seconds = value.parse().map_err(bad)?,
            "--rate" => {
                options.rate = value
                    .parse()
                    .map_err(|_| format!("--rate {value}: not a number"))?
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if options.boards == 0 || options.boards > 64 {
        return Err("--boards: 1 to 64".into());
    }
    Ok(options)
}

/// One update as a client had it.
struct Received {
    board: String,
    seq: u64,
    server_ms: u64,
    /// When the recorder handed the event over, just after its fsync.
    committed_ms: Option<u64>,
    received_ms: u64,
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("serve_load: {error}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let options = options()?;
    let kradan = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("kradan")))
        .filter(|path| path.exists())
        .ok_or("build the server first: cargo build --release --bin kradan")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let clips = [
        root.join("samples/go/clip-9x9/footage.mp4"),
        root.join("samples/go/clip-19x19-opening/footage.mp4"),
    ];
    let work = std::env::temp_dir().join(format!("kradan-serve-load-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    let mut event = String::new();
    for board in 0..options.boards {
        let clip = &clips[board % clips.len()];
        event.push_str(&format!(
            "[[board]]\nname = \"table-{board}\"\ngame = \"go\"\nsource = \"play:{}\"\nrate = {}\n\n",
            clip.display(),
            options.rate
        ));
    }
    std::fs::write(work.join("hall.toml"), event).map_err(|e| e.to_string())?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let base = format!("http://127.0.0.1:{port}");
    let mut server = Command::new(&kradan)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--token",
            TOKEN,
        ])
        .arg("--event")
        .arg(work.join("hall.toml"))
        .arg("--data")
        .arg(work.join("data"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", kradan.display()))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let started = Instant::now();
    while get_json(&agent, &format!("{base}/api/stats")).is_none() {
        if started.elapsed() > Duration::from_secs(30) {
            let _ = server.kill();
            return Err("the server did not answer in 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }

    // The clients connect before the boards have written much: each follows one board.
    let received: Arc<Mutex<Vec<Vec<Received>>>> = Arc::new(Mutex::new(
        (0..options.clients).map(|_| Vec::new()).collect(),
    ));
    let missed = Arc::new(Mutex::new(0u64));
    for client in 0..options.clients {
        let url = format!("{base}/api/stream?board=table-{}", client % options.boards);
        let received = Arc::clone(&received);
        let missed = Arc::clone(&missed);
        let agent = agent.clone();
        std::thread::spawn(move || listen(&agent, &url, client, &received, &missed));
    }
    eprintln!(
        "{} boards recording, {} clients listening, for {} s…",
        options.boards, options.clients, options.seconds
    );
    std::thread::sleep(Duration::from_secs(options.seconds));

    let stats = get_json(&agent, &format!("{base}/api/stats")).unwrap_or(Value::Null);
    let mut events: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut moves = Vec::new();
    for board in 0..options.boards {
        let name = format!("table-{board}");
        let listed = get_json(&agent, &format!("{base}/api/boards/{name}/events"))
            .ok_or("cannot read the events")?;
        let seqs = listed["events"]
            .as_array()
            .map(|a| a.iter().filter_map(|e| e["seq"].as_u64()).collect())
            .unwrap_or_default();
        events.insert(name.clone(), seqs);
        let view = get_json(&agent, &format!("{base}/api/boards/{name}")).unwrap_or(Value::Null);
        moves.push(view["now"]["number"].as_u64().unwrap_or(0));
    }
    // Let the last pushes arrive before counting.
    std::thread::sleep(Duration::from_secs(1));
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(server.id().to_string())
        .status();
    let _ = server.wait();

    let received = received.lock().map_err(|_| "a client panicked")?;
    let mut dropped = 0usize;
    let mut delivered = 0usize;
    let mut push_latency = Vec::new();
    let mut commit_latency = Vec::new();
    for (client, updates) in received.iter().enumerate() {
        let board = format!("table-{}", client % options.boards);
        let got: BTreeSet<u64> = updates.iter().map(|u| u.seq).collect();
        let Some(&first) = got.first() else {
            dropped += events[&board].len();
            continue;
        };
        // Every event from the first this client had to the last listed must have come.
        dropped += events[&board]
            .iter()
            .filter(|&&seq| seq >= first && !got.contains(&seq))
            .count();
        for update in updates {
            debug_assert_eq!(update.board, board);
            delivered += 1;
            push_latency.push(update.received_ms.saturating_sub(update.server_ms));
            if let Some(committed) = update.committed_ms {
                commit_latency.push(update.received_ms.saturating_sub(committed));
            }
        }
    }
    push_latency.sort_unstable();
    commit_latency.sort_unstable();
    let total_events: usize = events.values().map(Vec::len).sum();
    println!(
        "boards {}, clients {}, {} s, rate {} looks/s",
        options.boards, options.clients, options.seconds, options.rate
    );
    println!(
        "events written {total_events}, updates delivered {delivered}, dropped {dropped}, missed (server) {}, missed (clients) {}",
        stats["missed"],
        missed.lock().map(|m| *m).unwrap_or(0)
    );
    println!("moves per board {moves:?}");
    println!(
        "pushed by the server -> client: median {} ms, p95 {} ms, max {} ms",
        percentile(&push_latency, 0.5),
        percentile(&push_latency, 0.95),
        push_latency.last().copied().unwrap_or(0)
    );
    println!(
        "event committed (synced to disk) -> client: median {} ms, p95 {} ms, max {} ms",
        percentile(&commit_latency, 0.5),
        percentile(&commit_latency, 0.95),
        commit_latency.last().copied().unwrap_or(0)
    );
    println!(
        "server peak memory (VmHWM): {} MiB",
        stats["peak_rss_kib"].as_u64().map_or(0, |k| k / 1024)
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn listen(
    agent: &ureq::Agent,
    url: &str,
    client: usize,
    received: &Mutex<Vec<Vec<Received>>>,
    missed: &Mutex<u64>,
) {
    let Ok(response) = agent.get(url).call() else {
        return;
    };
    sse::read_events(response.into_body().into_reader(), |name, data| {
        let received_ms = now_ms();
        if name == "missed"
            && let Ok(mut m) = missed.lock()
        {
            *m += 1;
        }
        if name != "update" {
            return true;
        }
        let Ok(update) = serde_json::from_str::<Value>(data) else {
            return true;
        };
        let entry = Received {
            board: update["board"].as_str().unwrap_or_default().to_string(),
            seq: update["seq"].as_u64().unwrap_or(0),
            server_ms: update["server_ms"].as_u64().unwrap_or(0),
            committed_ms: update["synced_ms"].as_u64(),
            received_ms,
        };
        received
            .lock()
            .map(|mut all| all[client].push(entry))
            .is_ok()
    });
}

fn get_json(agent: &ureq::Agent, url: &str) -> Option<Value> {
    let mut response = agent.get(url).call().ok()?;
    if response.status() != 200 {
        return None;
    }
    serde_json::from_str(&response.body_mut().read_to_string().ok()?).ok()
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
