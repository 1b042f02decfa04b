//! `kradan verify` end to end, and a recorder killed with SIGKILL in the middle of a game.

mod common;

use common::kradan;
use kradan::games::{Article, Color, Penalty, Source};
use kradan::record::{Event, EventLog, Kind};
use serde_json::Map;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Output, Stdio};

fn verify(args: &[&Path]) -> Output {
    kradan()
        .arg("verify")
        .args(args)
        .output()
        .expect("kradan runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A session start, `moves` moves, and a flag with two frames after every fourth move.
fn record(dir: &Path, moves: u32) -> EventLog {
    let mut log = EventLog::create(dir, Map::new()).unwrap();
    append_moves(&mut log, 1..=moves);
    log
}

fn append_moves(log: &mut EventLog, moves: impl IntoIterator<Item = u32>) {
    for n in moves {
        let color = if n % 2 == 1 {
            Color::Black
        } else {
            Color::White
        };
        log.append(
            Event::new(Kind::Move)
                .at(f64::from(n) * 3.0)
                .with_move(n, color, format!("m{n}"))
                .with_confidence(0.95),
        )
        .unwrap();
        if n % 4 == 0 {
            let seq = log.next_seq();
            let before = log
                .write_evidence(&format!("{seq:06}-before.png"), &[n as u8; 64])
                .unwrap();
            let after = log
                .write_evidence(&format!("{seq:06}-after.png"), &[n as u8 + 1; 64])
                .unwrap();
            log.append(
                Event::new(Kind::Flag)
                    .at(f64::from(n) * 3.0 + 1.0)
                    .with_move(n, color, format!("m{n}"))
                    .cite(&[Article::new(Source::Tga, "20")], &[Penalty::Loss])
                    .with_evidence(before)
                    .with_evidence(after),
            )
            .unwrap();
        }
    }
}

#[test]
fn an_intact_record_exits_0_with_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let log = record(dir.path(), 8);
    let head = log.head().to_owned();
    drop(log);
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.starts_with("chain intact: 11 events, 4 evidence files\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("head: {head} (line 11, 1 session)")),
        "{text}"
    );

    let output = kradan()
        .args(["verify", "--json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["intact"], true);
    assert_eq!(report["events"], 11);
    assert_eq!(report["evidence_files"], 4);
    assert_eq!(report["head"], head.as_str());
    assert!(report["break"].is_null());
}

#[test]
fn a_tampered_record_exits_1_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    drop(record(dir.path(), 8));
    let path = dir.path().join("events.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    // Line 4 is move 3 (after the session start and moves 1 and 2).
    assert!(text.lines().nth(3).unwrap().contains(r#""notation":"m3""#));
    std::fs::write(&path, text.replacen(r#""m3""#, r#""m9""#, 1)).unwrap();
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let message = stdout(&output);
    assert!(
        message.starts_with("chain broken at line 4: changed after it was written"),
        "{message}"
    );

    let output = kradan()
        .args(["verify", "--json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["intact"], false);
    assert_eq!(report["break"]["line"], 4);
    assert_eq!(report["break"]["problem"], "changed");
}

#[test]
fn a_retouched_frame_exits_1_naming_its_event() {
    let dir = tempfile::tempdir().unwrap();
    drop(record(dir.path(), 8));
    // The first flag follows move 4: line 6, seq 5.
    std::fs::write(dir.path().join("evidence/000005-after.png"), [0u8; 64]).unwrap();
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let message = stdout(&output);
    assert!(
        message.starts_with("chain broken at line 6: evidence file evidence/000005-after.png is not the one recorded"),
        "{message}"
    );
}

#[test]
fn an_unreadable_record_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-record");
    let output = verify(&[&missing]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let message = stderr(&output);
    assert!(
        message.contains("cannot read the record folder") && message.contains("no-such-record"),
        "{message}"
    );
    assert!(stdout(&output).is_empty());

    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        stderr(&output).contains("events.jsonl is missing"),
        "{output:?}"
    );

    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let output = verify(&[&file]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stderr(&output).contains("is not a folder"), "{output:?}");
}

const CHILD_DIR: &str = "KRADAN_TEST_RECORDER_DIR";

/// Not a test on its own: the recorder that `a_recorder_killed_mid_game…` runs in a child
/// process (this same test binary, with the record folder in an environment variable).
/// It appends events until it is killed, printing `ack SEQ` once each is on disk.
#[test]
fn recorder_child_process() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let mut log = EventLog::create(Path::new(&dir), Map::new()).unwrap();
    let mut out = std::io::stdout().lock();
    for n in 1.. {
        append_moves(&mut log, [n]);
        use std::io::Write;
        writeln!(out, "ack {}", log.next_seq() - 1).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn a_recorder_killed_mid_game_resumes_with_every_acknowledged_event() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["recorder_child_process", "--exact", "--nocapture"])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acknowledged = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(seq) = line.strip_prefix("ack ") {
            let seq: u64 = seq.parse().unwrap();
            acknowledged = Some(seq);
            if seq >= 150 {
                break;
            }
        }
    }
    // SIGKILL: no destructor, no flush, in the middle of whatever it was writing.
    child.kill().unwrap();
    child.wait().unwrap();
    let acknowledged = acknowledged.expect("the recorder wrote events");
    assert!(acknowledged >= 150);

    // Whatever the kill interrupted, the record verifies as it was left…
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // …and resumes with every event the recorder had acknowledged.
    let (mut log, resumed) = EventLog::resume(dir.path(), Map::new()).unwrap();
    let recovered = resumed.events.len() as u64;
    assert!(recovered > acknowledged, "{recovered} <= {acknowledged}");
    for (i, event) in resumed.events.iter().enumerate() {
        assert_eq!(event.seq, i as u64);
    }
    let resume = log.last().unwrap().clone();
    assert_eq!((resume.kind, resume.seq), (Kind::SessionResume, recovered));
    append_moves(&mut log, [1000]);
    drop(log);
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("(line "), "{output:?}");
    assert!(stdout(&output).contains("2 sessions"), "{output:?}");

    // A torn line after a second crash is cut off by the next resume, and the chain goes on.
    let events = dir.path().join("events.jsonl");
    let mut bytes = std::fs::read(&events).unwrap();
    let complete = bytes.len();
    bytes.extend_from_slice(br#"{"seq":999,"kind":"mo"#);
    std::fs::write(&events, &bytes).unwrap();
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("incomplete line"), "{output:?}");
    let (log, resumed) = EventLog::resume(dir.path(), Map::new()).unwrap();
    assert_eq!(resumed.notes.len(), 1, "{:?}", resumed.notes);
    drop(log);
    assert!(std::fs::read(&events).unwrap().len() > complete);
    let output = verify(&[dir.path()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("3 sessions"), "{output:?}");
}
