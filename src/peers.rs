//! Programs nobody here wrote that Kradan is checked against (GNU Go, Fairy-Stockfish).
//! `kradan doctor` and the cross-check tests must agree on where they are found, so the
//! search lives in one place, and so does the talking to them over their text protocols.

use anyhow::Context as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The program `name` on PATH, or under /usr/games where Debian installs games and which
/// is not on every PATH.
pub fn locate(name: &str) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_dirs)
        .chain([PathBuf::from("/usr/games")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A peer program spoken to line by line over its standard input and output. It is killed
/// when dropped, so that a run that fails half-way leaves no engine behind.
pub struct Peer {
    name: &'static str,
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts `program args…` with its error output discarded; `name` says who stopped
    /// answering in errors.
    pub fn start(name: &'static str, program: &Path, args: &[String]) -> anyhow::Result<Peer> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {name} ({})", program.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            anyhow::bail!("{name}: no pipes to talk over");
        };
        Ok(Peer {
            name,
            child,
            input: BufWriter::new(stdin),
            output: BufReader::new(stdout),
        })
    }

    /// Writes the lines and flushes them once: pipelining a batch saves a context switch
    /// per command.
    pub fn send<S: AsRef<str>>(&mut self, lines: &[S]) -> anyhow::Result<()> {
        for line in lines {
            writeln!(self.input, "{}", line.as_ref())
                .with_context(|| format!("{} closed its input", self.name))?;
        }
        self.input
            .flush()
            .with_context(|| format!("{} closed its input", self.name))
    }

    /// The next line the program printed, with its line end.
    pub fn line(&mut self) -> anyhow::Result<String> {
        let mut line = String::new();
        let read = self.output.read_line(&mut line)?;
        anyhow::ensure!(read > 0, "{} stopped answering", self.name);
        Ok(line)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GNU Go (or any engine) over GTP.
pub struct Gtp {
    peer: Peer,
}

impl Gtp {
    pub fn start(program: &Path, args: &[String]) -> anyhow::Result<Gtp> {
        let mut args = args.to_vec();
        args.splice(0..0, ["--mode".to_string(), "gtp".to_string()]);
        Ok(Gtp {
            peer: Peer::start("GNU Go", program, &args)?,
        })
    }

    /// Sends every command, then reads one answer per command: `Ok` for `= …`, `Err` for
    /// `? …`, with the text after the status (line ends trimmed; `showboard`'s indented
    /// first line keeps its indent).
    pub fn batch(&mut self, commands: &[String]) -> anyhow::Result<Vec<Result<String, String>>> {
        self.peer.send(commands)?;
        commands.iter().map(|c| self.answer(c)).collect()
    }

    pub fn ask(&mut self, command: &str) -> anyhow::Result<Result<String, String>> {
        self.peer.send(&[command])?;
        self.answer(command)
    }

    /// The answer's body, or an error naming the command GNU Go refused.
    pub fn must(&mut self, command: &str) -> anyhow::Result<String> {
        self.ask(command)?
            .map_err(|refusal| anyhow::anyhow!("GNU Go refused {command:?}: {refusal}"))
    }

    fn answer(&mut self, command: &str) -> anyhow::Result<Result<String, String>> {
        let mut text = String::new();
        loop {
            let line = self.peer.line()?;
            if line.trim_end().is_empty() && !text.is_empty() {
                break;
            }
            text.push_str(&line);
        }
        let body = text[1..]
            .trim_start_matches(' ')
            .trim_start_matches('\n')
            .trim_end()
            .to_string();
        match text.as_bytes()[0] {
            b'=' => Ok(Ok(body)),
            b'?' => Ok(Err(body)),
            _ => anyhow::bail!("{command:?}: not a GTP answer: {text:?}"),
        }
    }
}

impl Drop for Gtp {
    fn drop(&mut self) {
        let _ = self.peer.send(&["quit"]);
        let _ = self.peer.child.wait();
    }
}

/// Fairy-Stockfish (or any engine) over UCI.
pub struct Uci {
    peer: Peer,
    /// What the engine called itself in answer to `uci`.
    pub name: Option<String>,
}

impl Uci {
    /// Starts the engine and waits for `uciok`.
    pub fn start(program: &Path) -> anyhow::Result<Uci> {
        let mut uci = Uci {
            peer: Peer::start("Fairy-Stockfish", program, &[])?,
            name: None,
        };
        uci.send(&["uci"])?;
        uci.until("uciok")?;
        Ok(uci)
    }

    pub fn send<S: AsRef<str>>(&mut self, lines: &[S]) -> anyhow::Result<()> {
        self.peer.send(lines)
    }

    /// The next answer line whose first word is `word`, trimmed; an `id name` line read on
    /// the way is kept in [`Uci::name`].
    pub fn until(&mut self, word: &str) -> anyhow::Result<String> {
        loop {
            let line = self.peer.line()?;
            if let Some(id) = line.strip_prefix("id name ") {
                self.name = Some(id.trim().to_string());
            }
            if line.split_whitespace().next() == Some(word) {
                return Ok(line.trim().to_string());
            }
        }
    }
}

impl Drop for Uci {
    fn drop(&mut self) {
        let _ = self.peer.send(&["quit"]);
    }
}
