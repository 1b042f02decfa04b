//! The `kradan` command line: argument parsing only; the work is in the library.

use anyhow::Context;
use clap::{Parser, Subcommand};
use kradan::replay::Report;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kradan",
    version,
    about = "Keeps the record of a Go, Mak-hos or Makruk game and flags what a referee must know"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a game record (SGF for Go, PDN for Mak-hos, PGN for Makruk) move by move
    /// against the Thai rules.
    ///
    /// Exit status: 0 when every move is legal, 1 when the record holds illegal moves,
    /// 2 when the file cannot be read.
    Replay {
        /// The record: .sgf (Go), .pdn (Mak-hos) or .pgn (Makruk)
        file: PathBuf,
        /// Print JSON lines (one per problem, then a final summary) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Report the versions of the libraries and peer programs Kradan relies on.
    Doctor,
}

const EXIT_ILLEGAL: u8 = 1;
const EXIT_UNREADABLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay { file, json } => match replay(&file) {
            Ok(report) => {
                let mut out = std::io::stdout().lock();
                let written = if json {
                    report.write_json_lines(&mut out)
                } else {
                    report.write_text(&mut out)
                };
                if let Err(error) = written.and_then(|()| out.flush()) {
                    eprintln!("kradan: cannot write the report: {error}");
                    return ExitCode::from(EXIT_UNREADABLE);
                }
                if report.has_illegal_moves() {
                    ExitCode::from(EXIT_ILLEGAL)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::Doctor => {
            doctor();
            ExitCode::SUCCESS
        }
    }
}

fn replay(file: &Path) -> anyhow::Result<Report> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    // Old records are often in a legacy code page; the moves are ASCII either way, so a
    // lossy decoding only blurs names and comments.
    let text = String::from_utf8_lossy(&bytes);
    let extension = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let report = match extension.as_deref() {
        Some("sgf") => kradan::games::go::replay::replay(&text),
        Some("pdn") => kradan::games::makhos::replay(&text),
        Some("pgn") => kradan::games::makruk::replay(&text),
        _ => anyhow::bail!(
            "{}: unknown record type (expected .sgf for Go, .pdn for Mak-hos, .pgn for Makruk)",
            file.display()
        ),
    };
    report.with_context(|| format!("{} is not a readable record", file.display()))
}

fn doctor() {
    println!("kradan {}", env!("CARGO_PKG_VERSION"));
    match opencv::core::get_version_string() {
        Ok(version) => println!("OpenCV {version}"),
        Err(error) => println!("OpenCV: not usable ({error})"),
    }
    for peer in ["gnugo", "fairy-stockfish"] {
        match kradan::peers::locate(peer) {
            Some(path) => println!("{peer}: {}", path.display()),
            None => println!(
                "{peer}: not installed (apt-get install {peer}); the cross-check tests need it"
            ),
        }
    }
}
