//! Helpers shared by the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Finds a peer program that nobody here wrote (GNU Go, Fairy-Stockfish) to test against.
///
/// Where it is missing, the test is skipped with a printed reason on a developer's machine,
/// but fails under CI (`CI` set): `.ci/run` installs the peers, so a missing one there
/// means the cross-check silently stopped running.
pub fn peer_program(name: &str) -> Option<PathBuf> {
    let found = kradan::peers::locate(name);
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name} is not installed, but CI must run this cross-check: install it in .ci/run"
        );
        eprintln!("skipped: {name} is not installed (apt-get install {name})");
    }
    found
}

/// `../shared/data` beside the repository, where the real photos with ground truth live.
/// Absent on machines without the shared folder: tests then skip with a printed reason.
pub fn shared_data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: {} is absent", dir.display());
        None
    }
}

/// The `kradan` binary cargo built for this test run.
pub fn kradan() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_kradan"))
}

/// Runs `kradan` with `args` (a recording into `out`) and kills it with SIGKILL, no chance
/// to tidy up, once `out/events.jsonl` holds `moves` moves or `patience` has passed: what
/// a crash or a pulled plug leaves behind, for the `--resume` tests.
pub fn record_then_kill(args: &[&str], out: &Path, moves: usize, patience: std::time::Duration) {
    let mut child = kradan()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + patience;
    loop {
        let recorded = std::fs::read_to_string(out.join("events.jsonl"))
            .map(|t| t.matches("\"kind\":\"move\"").count())
            .unwrap_or(0);
        if recorded >= moves || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    if status.success() {
        eprintln!("the recording finished before it could be killed; the resume is still checked");
    }
}
