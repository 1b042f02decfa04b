//! Programs nobody here wrote that Kradan is checked against (GNU Go, Fairy-Stockfish).
//! `kradan doctor` and the cross-check tests must agree on where they are found, so the
//! search lives in one place.

use std::path::PathBuf;

/// The program `name` on PATH, or under /usr/games where Debian installs games and which
/// is not on every PATH.
pub fn locate(name: &str) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_dirs)
        .chain([PathBuf::from("/usr/games")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
