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
