//! Talking to Fairy-Stockfish over UCI, for the Makruk cross-checks.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Sends UCI commands (after selecting the makruk variant) and returns everything printed.
pub fn uci_session(program: &Path, commands: &[String]) -> String {
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fairy-stockfish starts");
    {
        let stdin = child.stdin.as_mut().expect("stdin is piped");
        writeln!(stdin, "uci\nsetoption name UCI_Variant value makruk").expect("write to engine");
        for command in commands {
            writeln!(stdin, "{command}").expect("write to engine");
        }
        writeln!(stdin, "quit").expect("write to engine");
    }
    let output = child.wait_with_output().expect("fairy-stockfish runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `go perft depth` for a FEN: the count per first move (UCI) and the total.
pub fn perft_divide(program: &Path, fen: &str, depth: u32) -> (BTreeMap<String, u64>, u64) {
    let output = uci_session(
        program,
        &[format!("position fen {fen}"), format!("go perft {depth}")],
    );
    let mut divide = BTreeMap::new();
    let mut total = None;
    for line in output.lines() {
        if let Some(nodes) = line.strip_prefix("Nodes searched: ") {
            total = nodes.trim().parse().ok();
        } else if let Some((mv, count)) = line.split_once(": ")
            && mv.len() <= 5
            && mv.chars().all(|c| c.is_ascii_alphanumeric())
            && let Ok(count) = count.trim().parse()
        {
            divide.insert(mv.to_string(), count);
        }
    }
    (
        divide,
        total.expect("fairy-stockfish printed the node count"),
    )
}

/// The FEN Fairy-Stockfish's `d` prints after `position fen <fen> moves <moves>`.
pub fn fen_after(program: &Path, fen: &str, moves: &[String]) -> String {
    let position = if moves.is_empty() {
        format!("position fen {fen}")
    } else {
        format!("position fen {fen} moves {}", moves.join(" "))
    };
    let output = uci_session(program, &[position, "d".to_string()]);
    output
        .lines()
        .find_map(|line| line.strip_prefix("Fen: "))
        .expect("d prints a Fen line")
        .trim()
        .to_string()
}
