//! The overlay and the referee desk in headless Chromium (Debian's `chromium` and
//! `chromium-driver`, driven over WebDriver by fantoccini), against the real `kradan serve`
//! recording rendered clips played as cameras. Screenshots go to `docs/` to be looked at.
//! Where Chromium is absent the test is skipped with the reason printed.

mod serve_support;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use serve_support::{Server, event_file, free_port, sample};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn browser(profile: &Path) -> (Client, Driver) {
    let port = free_port();
    let driver = Driver(
        Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts"),
    );
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000", "--hide-scrollbars",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(capabilities.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return (client, driver),
            Err(error) => {
                assert!(Instant::now() < deadline, "chromedriver: {error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Evaluates `script` (returning a value) until `done` holds, or panics after `seconds`.
async fn until(
    client: &Client,
    script: &str,
    seconds: u64,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let value = client.execute(script, vec![]).await.unwrap();
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{script} stayed {value}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Saves the page as `name`: into `docs/` when `KRADAN_REFRESH_DOCS` is set (the pictures
/// the docs show), else into the temporary folder, so a test run leaves the tree clean.
async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    let folder = if std::env::var_os("KRADAN_REFRESH_DOCS").is_some() {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")
    } else {
        std::env::temp_dir()
    };
    let path = folder.join(name);
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());
}

fn number(value: &Value) -> u64 {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .or(value.as_u64())
        .unwrap_or(0)
}

#[test]
fn the_overlay_follows_the_game_and_the_referee_desk_steps_and_resolves() {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        eprintln!(
            "skipped: {CHROMIUM} or {CHROMEDRIVER} is absent (apt-get install chromium chromium-driver)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let nine = format!("play:{}", sample("go/clip-9x9/footage.mp4"));
    let nineteen = format!("play:{}", sample("go/clip-19x19-opening/footage.mp4"));
    // Read as a file, not paced: it is recorded by the time the pages look at it.
    let makruk = sample("makruk/clip/footage.mp4");
    let event = event_file(
        dir.path(),
        &[
            ("table-9", "go", &nine, Some(9)),
            ("table-19", "go", &nineteen, None),
            ("table-mk", "makruk", &makruk, None),
        ],
    );
    let server = Server::start(&dir.path().join("data"), Some(&event));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (client, _driver) = browser(&dir.path().join("profile")).await;

        // The overlay, opened once, redraws as the footage advances a move.
        client
            .goto(&format!("{}/overlay/table-9", server.base))
            .await
            .unwrap();
        let first = until(&client, "return document.body.dataset.moves", 60, |v| number(v) >= 1).await;
        client
            .execute("window.notReloaded = true; return 0", vec![])
            .await
            .unwrap();
        let later = until(&client, "return document.body.dataset.moves", 60, |v| {
            number(v) > number(&first)
        })
        .await;
        let pushed = client
            .execute(
                "return [window.notReloaded === true, window.kradanUpdates.length, document.querySelectorAll('svg .stone').length, document.querySelectorAll('svg .last-move').length, document.getElementById('move').textContent]",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(pushed[0], true, "updated in place, not reloaded");
        let delays = client
            .execute(
                "return window.kradanUpdates.map(u => u.received_ms - u.synced_ms)",
                vec![],
            )
            .await
            .unwrap();
        eprintln!("overlay: event synced to disk -> page has it, ms: {delays}");
        assert!(pushed[1].as_u64().unwrap() >= 1, "{pushed}");
        let view = server.json("/api/boards/table-9");
        let stones: usize = view["now"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().chars().filter(|c| *c == 'B' || *c == 'W').count())
            .sum();
        if view["now"]["number"].as_u64() == Some(number(&later)) {
            assert_eq!(pushed[2].as_u64().unwrap() as usize, stones, "{pushed}");
        }
        assert_eq!(pushed[3], 1, "the last move is marked");
        assert!(pushed[4].as_str().unwrap().starts_with("Move "), "{pushed}");

        // The 19×19 clip: a double move is flagged; the overlay shows the banner.
        client
            .goto(&format!("{}/overlay/table-19", server.base))
            .await
            .unwrap();
        let banner = until(
            &client,
            "const b = document.getElementById('banner'); return b.classList.contains('on') ? b.textContent : ''",
            90,
            |v| v.as_str().is_some_and(|t| !t.is_empty()),
        )
        .await;
        assert!(banner.as_str().unwrap().contains("double-move"), "{banner}");
        assert!(banner.as_str().unwrap().contains("TGA 20"), "{banner}");
        screenshot(&client, "serve-overlay.png").await;

        // The referee desk: the flag with its rule, the timeline, then the flag resolved.
        client
            .goto(&format!("{}/referee?board=table-19", server.base))
            .await
            .unwrap();
        client.find(Locator::Id("by")).await.unwrap().send_keys("Chief").await.unwrap();
        client
            .find(Locator::Id("token"))
            .await
            .unwrap()
            .send_keys(serve_support::TOKEN)
            .await
            .unwrap();
        let flag_id = until(
            &client,
            "const f = document.querySelector('.flagbox'); return f ? f.dataset.flag : ''",
            30,
            |v| v.as_str().is_some_and(|t| !t.is_empty()),
        )
        .await;
        client.find(Locator::Id("first")).await.unwrap().click().await.unwrap();
        until(&client, "return document.getElementById('moment-board').dataset.step", 10, |v| {
            number(v) == 0 && v.as_str() == Some("0")
        })
        .await;
        client.find(Locator::Id("next")).await.unwrap().click().await.unwrap();
        let shown = until(
            &client,
            "return [document.getElementById('moment-board').dataset.step, document.getElementById('moment-frame').getAttribute('src') || '', document.getElementById('moment-caption').textContent]",
            10,
            |v| v[0].as_str() == Some("1"),
        )
        .await;
        assert!(shown[1].as_str().unwrap().contains("/evidence/"), "{shown}");
        assert!(shown[2].as_str().unwrap().starts_with("1. "), "{shown}");
        // Step to the flagged move: the recorded position beside the frame of that moment.
        client
            .find(Locator::Css(".flagbox button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        until(&client, "return document.getElementById('moment-board').dataset.step", 10, |v| {
            number(v) >= 4
        })
        .await;
        let events_listed = client
            .execute("return document.querySelectorAll('#events tr.flag').length", vec![])
            .await
            .unwrap();
        assert!(events_listed.as_u64().unwrap() >= 1);
        tokio::time::sleep(Duration::from_millis(500)).await;
        screenshot(&client, "serve-referee.png").await;

        client
            .find(Locator::Css(".flagbox .resolve"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let outcome = until(&client, "return document.getElementById('outcome').textContent", 20, |v| {
            v.as_str().is_some_and(|t| !t.is_empty())
        })
        .await;
        assert!(outcome.as_str().unwrap().contains("resolved by the referee"), "{outcome}");
        let id = flag_id.as_str().unwrap().to_string();
        until(
            &client,
            &format!("return document.querySelector('.flagbox[data-flag=\"{id}\"]') === null"),
            20,
            |v| v == &Value::Bool(true),
        )
        .await;

        // A Makruk board: its figures drawn in their squares, the Go actions hidden.
        let view = server.wait_for("table-mk", 120, |view| view["status"] == "finished");
        let pieces: usize = view["now"]["pieces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().chars().filter(|c| *c != '.').count())
            .sum();
        client
            .goto(&format!("{}/overlay/table-mk", server.base))
            .await
            .unwrap();
        let drawn = until(
            &client,
            "return [document.querySelectorAll('svg .piece').length, document.querySelectorAll('svg text').length]",
            20,
            |v| v[0].as_u64().is_some_and(|n| n > 0),
        )
        .await;
        assert_eq!(drawn[0].as_u64().unwrap() as usize, pieces, "{drawn}");
        assert_eq!(drawn[1].as_u64().unwrap() as usize, pieces, "a glyph per figure: {drawn}");
        client
            .goto(&format!("{}/referee?board=table-mk", server.base))
            .await
            .unwrap();
        let actions = until(
            &client,
            "return [document.getElementById('go-actions').hidden, document.getElementById('eight-actions').hidden, document.getElementById('download').getAttribute('href')]",
            20,
            |v| v[0] == Value::Bool(true),
        )
        .await;
        assert_eq!(actions[1], false, "{actions}");
        assert!(actions[2].as_str().unwrap().ends_with("/record.pgn"), "{actions}");
        client.close().await.unwrap();
    });

    let events = server.json("/api/boards/table-19/events");
    let resolved = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "resolved" && e["detail"]["by"] == "referee:Chief")
        .expect("the resolution is in the chain, naming the referee");
    assert_eq!(resolved["detail"]["decision"], "resolved");
}
