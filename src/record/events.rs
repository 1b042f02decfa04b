//! The event log: `events.jsonl`, one JSON object per line, each line chained to the one
//! before by the SHA-256 of its exact bytes, and `events.head`, which holds the number of
//! lines and the SHA-256 of the last one.
//!
//! The hash of a line is taken over the bytes of the line as written, without its trailing
//! `\n`. Nothing is ever re-serialised to be checked: [`verify`] hashes the bytes it reads,
//! so the check does not depend on serde's field order or float formatting, only the writer
//! does (and it writes the fields in the order of [`Event`]'s declaration, `detail`'s keys
//! sorted).
//!
//! Durability: [`EventLog::append`] writes one line with a single `write`, then
//! `sync_data`s the file before it returns; evidence files are synced (and their folder)
//! before the event that names them is written. A crash can therefore leave at most one
//! torn line at the end, and frames that no event names; [`EventLog::resume`] repairs the
//! first and [`verify`] notes the second.

use crate::games::{Article, Color, Penalty};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The event log inside a record folder.
pub const EVENTS_FILE: &str = "events.jsonl";
/// The number of lines and the SHA-256 of the last one, rewritten after every line.
pub const HEAD_FILE: &str = "events.head";
/// The folder of evidence frames inside a record folder.
pub const EVIDENCE_DIR: &str = "evidence";
/// The `prev` of the first line: 64 zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// Written into the `detail` of every session-start event.
pub const FORMAT: &str = "kradan-events/1";

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Line 0 of every log: the recorder started (its `detail` holds the format, the
    /// Kradan version and what the caller gave: game, source, options).
    SessionStart,
    /// The recorder continued the log after a stop or a crash (`detail` says what it found
    /// and what it repaired).
    SessionResume,
    /// The recorder stopped cleanly.
    SessionEnd,
    /// A committed move.
    Move,
    /// Something a referee must know: an irregularity, an unexplained change.
    Flag,
    /// A referee's decision on an earlier flag (`detail.resolves` = that flag's `seq`).
    Resolved,
    /// Anything else worth keeping (the board lost and found again, a clock reading…).
    Note,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SessionStart => "session-start",
            Kind::SessionResume => "session-resume",
            Kind::SessionEnd => "session-end",
            Kind::Move => "move",
            Kind::Flag => "flag",
            Kind::Resolved => "resolved",
            Kind::Note => "note",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One evidence file: its path relative to the record folder (always with `/`) and the
/// SHA-256 of its bytes, so a swapped or retouched frame is caught, not only a missing one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub path: String,
    pub sha256: String,
}

/// One line of `events.jsonl`. The fields are serialised in this order, every one of them
/// on every line (absent values as `null` or `[]`), so lines are easy to read with any
/// JSON tool and the log's shape never depends on what an event happens to carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// 0-based line number; filled by [`EventLog::append`].
    pub seq: u64,
    pub kind: Kind,
    /// Seconds from the start of the footage; `None` for a live camera.
    pub video_time: Option<f64>,
    /// When the event was recorded, RFC 3339 in UTC with milliseconds
    /// (`2025-03-01T09:30:12.345Z`).
    pub wall_time: String,
    /// The move's number in the game (1 for the first move), for moves and the flags
    /// about one.
    pub move_number: Option<u32>,
    /// Who moved (dark pieces are black, light are white, in all three games).
    pub color: Option<Color>,
    /// The move in the game's record notation (SGF point for Go, PDN for Mak-hos, SAN
    /// for Makruk), or `pass`.
    pub notation: Option<String>,
    /// The board cells the event is about, `[row, column]` as in `games::Occupancy`
    /// (row 0 on top): the stone played, the stones that should have been lifted…
    pub points: Vec<[usize; 2]>,
    /// The articles the event cites, as RULES.md names them (`TGA 20`).
    pub rules: Vec<String>,
    /// What those articles give (`loss`, `warning`, `lose-turn`, `points(2)`…).
    pub penalties: Vec<String>,
    /// How sure the recorder is, 0 to 1.
    pub confidence: Option<f64>,
    /// The frames before and after, annotated, relative to the record folder.
    pub evidence: Vec<Evidence>,
    /// Anything else, as a JSON object (keys written sorted).
    pub detail: Map<String, Value>,
    /// The SHA-256 (lowercase hex) of the previous line's exact bytes without its `\n`;
    /// [`GENESIS`] on the first line. Filled by [`EventLog::append`].
    pub prev: String,
}

impl Event {
    /// An event of this kind, stamped with the current wall time; everything else empty.
    pub fn new(kind: Kind) -> Event {
        Event {
            seq: 0,
            kind,
            video_time: None,
            wall_time: wall_time_now(),
            move_number: None,
            color: None,
            notation: None,
            points: Vec::new(),
            rules: Vec::new(),
            penalties: Vec::new(),
            confidence: None,
            evidence: Vec::new(),
            detail: Map::new(),
            prev: String::new(),
        }
    }

    /// Seconds from the start of the footage.
    pub fn at(mut self, video_time: f64) -> Event {
        self.video_time = Some(video_time);
        self
    }

    pub fn with_move(mut self, number: u32, color: Color, notation: impl Into<String>) -> Event {
        self.move_number = Some(number);
        self.color = Some(color);
        self.notation = Some(notation.into());
        self
    }

    pub fn with_points(mut self, points: impl IntoIterator<Item = [usize; 2]>) -> Event {
        self.points.extend(points);
        self
    }

    /// Adds the articles and penalties of a flag, in RULES.md's words.
    pub fn cite(mut self, rules: &[Article], penalties: &[Penalty]) -> Event {
        self.rules.extend(rules.iter().map(Article::to_string));
        self.penalties
            .extend(penalties.iter().map(Penalty::to_string));
        self
    }

    pub fn with_confidence(mut self, confidence: f64) -> Event {
        self.confidence = Some(confidence);
        self
    }

    pub fn with_evidence(mut self, evidence: Evidence) -> Event {
        self.evidence.push(evidence);
        self
    }

    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Event {
        self.detail.insert(key.to_owned(), value.into());
        self
    }
}

/// Why a record could not be written, resumed or read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(
        "{} already holds a record ({EVENTS_FILE}): continue it with --resume, or choose another folder",
        .0.display()
    )]
    Exists(PathBuf),
    #[error("{}: no record to continue ({EVENTS_FILE} is missing)", .0.display())]
    Missing(PathBuf),
    #[error("{} is not a folder", .0.display())]
    NotAFolder(PathBuf),
    #[error("{}: another kradan is writing this record", .0.display())]
    Locked(PathBuf),
    #[error("cannot continue {}: chain broken at {}", path.display(), broken)]
    Broken { path: PathBuf, broken: Break },
    #[error("cannot record this event: {0}")]
    Invalid(String),
    #[error("the event log stopped at a failed write; resume the record to repair it")]
    Poisoned,
}

fn io_error<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> RecordError + 'a {
    move |source| RecordError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// What [`EventLog::resume`] found in the log it continues.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// Every event already in the log, in order (the session-resume event not included):
    /// the recorder replays the moves to know the position it continues from.
    pub events: Vec<Event>,
    /// What had to be repaired, in words (a torn last line removed…); empty when the log
    /// ended cleanly.
    pub notes: Vec<String>,
}

/// The writer of `events.jsonl`. It holds an exclusive lock on the file while it lives, so
/// two recorders never interleave lines in one record.
#[derive(Debug)]
pub struct EventLog {
    dir: PathBuf,
    file: File,
    next_seq: u64,
    head: String,
    last: Option<Event>,
    poisoned: bool,
}

impl EventLog {
    /// Starts a new record in `dir` (created if needed) and writes its session-start event,
    /// whose `detail` is `detail` plus the format and the Kradan version.
    ///
    /// Refuses a folder that already holds a record: that one is continued with
    /// [`EventLog::resume`], never overwritten.
    pub fn create(dir: &Path, detail: Map<String, Value>) -> Result<EventLog, RecordError> {
        fs::create_dir_all(dir).map_err(io_error("create the record folder", dir))?;
        let evidence = dir.join(EVIDENCE_DIR);
        fs::create_dir_all(&evidence).map_err(io_error("create the evidence folder", &evidence))?;
        let path = dir.join(EVENTS_FILE);
        if dir.join(HEAD_FILE).exists() {
            return Err(RecordError::Exists(dir.to_path_buf()));
        }
        let file = match OpenOptions::new().append(true).create_new(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                return Err(RecordError::Exists(dir.to_path_buf()));
            }
            Err(error) => return Err(io_error("create", &path)(error)),
        };
        lock(&file, dir)?;
        sync_dir(dir)?;
        let mut log = EventLog {
            dir: dir.to_path_buf(),
            file,
            next_seq: 0,
            head: GENESIS.to_owned(),
            last: None,
            poisoned: false,
        };
        let mut start = Event::new(Kind::SessionStart);
        start.detail = detail;
        start.detail.insert("format".into(), FORMAT.into());
        start
            .detail
            .insert("kradan".into(), env!("CARGO_PKG_VERSION").into());
        log.write(start)?;
        Ok(log)
    }

    /// Continues the record in `dir` after a stop or a crash.
    ///
    /// The whole record is verified first (chain, head, evidence), and nothing is touched
    /// if it is broken: a tampered record is refused, not repaired. Then a torn last line
    /// (a crash in the middle of a write) is cut off, or completed with its `\n` when all
    /// of it made it to disk; `events.head` is brought up to date; and a session-resume
    /// event continues the chain, its `detail` being `detail` plus what was recovered and
    /// repaired.
    pub fn resume(
        dir: &Path,
        detail: Map<String, Value>,
    ) -> Result<(EventLog, Resumed), RecordError> {
        check_folder(dir)?;
        let path = dir.join(EVENTS_FILE);
        let mut file = match OpenOptions::new().read(true).append(true).open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(RecordError::Missing(dir.to_path_buf()));
            }
            Err(error) => return Err(io_error("open", &path)(error)),
        };
        lock(&file, dir)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io_error("read", &path))?;
        let examined = examine(dir, &bytes, &read_head(dir));
        if let Some(broken) = examined.report.broken {
            return Err(RecordError::Broken {
                path: dir.to_path_buf(),
                broken,
            });
        }
        let mut notes = Vec::new();
        match examined.tail {
            Tail::None => {}
            Tail::Unterminated => {
                file.write_all(b"\n")
                    .and_then(|()| file.sync_data())
                    .map_err(io_error("repair", &path))?;
                notes.push(format!(
                    "line {} had lost its newline in a crash; it was complete and is kept",
                    examined.events.len()
                ));
            }
            Tail::Torn(torn) => {
                file.set_len(examined.complete_len as u64)
                    .and_then(|()| file.sync_data())
                    .map_err(io_error("repair", &path))?;
                notes.push(format!(
                    "removed an incomplete last line ({torn} bytes) left by a crash in the middle of a write"
                ));
            }
        }
        let count = examined.events.len() as u64;
        write_head(dir, count, &examined.report.head)?;
        let mut log = EventLog {
            dir: dir.to_path_buf(),
            file,
            next_seq: count,
            head: examined.report.head.clone(),
            last: examined.events.last().cloned(),
            poisoned: false,
        };
        let mut event = Event::new(Kind::SessionResume);
        event.detail = detail;
        event
            .detail
            .insert("kradan".into(), env!("CARGO_PKG_VERSION").into());
        event.detail.insert("recovered_events".into(), count.into());
        event.detail.insert(
            "repairs".into(),
            Value::Array(notes.iter().cloned().map(Value::from).collect()),
        );
        log.write(event)?;
        Ok((
            log,
            Resumed {
                events: examined.events,
                notes,
            },
        ))
    }

    /// Appends one event: fills its `seq` and `prev` (and its wall time if empty), writes
    /// it as one line, and returns once the line is on disk (`sync_data`) and
    /// `events.head` is updated.
    ///
    /// Session-start and session-resume events are written by [`EventLog::create`] and
    /// [`EventLog::resume`] only. Evidence must have been written first
    /// ([`EventLog::write_evidence`]). After a failed write the log refuses further
    /// events: the record is then continued with [`EventLog::resume`], which repairs it.
    pub fn append(&mut self, event: Event) -> Result<&Event, RecordError> {
        if matches!(event.kind, Kind::SessionStart | Kind::SessionResume) {
            return Err(RecordError::Invalid(format!(
                "{} events are written by create and resume only",
                event.kind
            )));
        }
        self.write(event)
    }

    fn write(&mut self, mut event: Event) -> Result<&Event, RecordError> {
        if self.poisoned {
            return Err(RecordError::Poisoned);
        }
        self.validate(&event)?;
        event.seq = self.next_seq;
        event.prev = self.head.clone();
        if event.wall_time.is_empty() {
            event.wall_time = wall_time_now();
        }
        let mut line =
            serde_json::to_vec(&event).map_err(|e| RecordError::Invalid(e.to_string()))?;
        debug_assert!(!line.contains(&b'\n'), "serde_json escapes newlines");
        let hash = sha256_hex(&line);
        line.push(b'\n');
        let path = self.dir.join(EVENTS_FILE);
        if let Err(error) = self
            .file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
        {
            self.poisoned = true;
            return Err(io_error("write", &path)(error));
        }
        if let Err(error) = write_head(&self.dir, self.next_seq + 1, &hash) {
            // The line is on disk; a head one line behind is what a crash here leaves too,
            // and verify accepts it. Resume brings it up to date.
            self.poisoned = true;
            return Err(error);
        }
        self.next_seq += 1;
        self.head = hash;
        Ok(self.last.insert(event))
    }

    fn validate(&self, event: &Event) -> Result<(), RecordError> {
        let invalid = |message: String| Err(RecordError::Invalid(message));
        if let Some(t) = event.video_time
            && !(t.is_finite() && t >= 0.0)
        {
            return invalid(format!("video_time {t} is not a time in the footage"));
        }
        if let Some(c) = event.confidence
            && !(0.0..=1.0).contains(&c)
        {
            return invalid(format!("confidence {c} is not between 0 and 1"));
        }
        for evidence in &event.evidence {
            let Some(relative) = safe_relative(&evidence.path) else {
                return invalid(format!(
                    "evidence path {:?} is not inside the record folder",
                    evidence.path
                ));
            };
            if !is_sha256_hex(&evidence.sha256) {
                return invalid(format!(
                    "evidence {}: {:?} is not a SHA-256",
                    evidence.path, evidence.sha256
                ));
            }
            if !self.dir.join(relative).is_file() {
                return invalid(format!("evidence {} was not written first", evidence.path));
            }
        }
        Ok(())
    }

    /// Writes an evidence file at `evidence/NAME` (NAME may contain `/`), synced with its
    /// folder before this returns, and gives the [`Evidence`] entry for the event.
    ///
    /// Evidence is never overwritten: writing the same name again with the same bytes
    /// gives the same entry, with other bytes it is an error. Name files after
    /// [`EventLog::next_seq`] (`000042-before.png`) so they sort with their events.
    pub fn write_evidence(&self, name: &str, bytes: &[u8]) -> Result<Evidence, RecordError> {
        let relative = format!("{EVIDENCE_DIR}/{name}");
        let Some(safe) = safe_relative(&relative) else {
            return Err(RecordError::Invalid(format!(
                "evidence name {name:?} is not a file name inside {EVIDENCE_DIR}/"
            )));
        };
        let path = self.dir.join(safe);
        let parent = path.parent().unwrap_or(&self.dir).to_path_buf();
        fs::create_dir_all(&parent).map_err(io_error("create", &parent))?;
        let sha256 = sha256_hex(bytes);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => file
                .write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(io_error("write", &path))?,
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                let existing = fs::read(&path).map_err(io_error("read", &path))?;
                if sha256_hex(&existing) != sha256 {
                    return Err(RecordError::Invalid(format!(
                        "{relative} already exists with other bytes; evidence is never overwritten"
                    )));
                }
            }
            Err(error) => return Err(io_error("create", &path)(error)),
        }
        sync_dir(&parent)?;
        Ok(Evidence {
            path: relative,
            sha256,
        })
    }

    /// The record folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The `seq` the next appended event will get (= the number of lines written).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The SHA-256 of the last line written: the value to write down elsewhere (a score
    /// sheet, a photo of the screen) to anchor the record against a full rewrite.
    pub fn head(&self) -> &str {
        &self.head
    }

    /// The last event written (after create or resume, their session event).
    pub fn last(&self) -> Option<&Event> {
        self.last.as_ref()
    }
}

fn lock(file: &File, dir: &Path) -> Result<(), RecordError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(fs::TryLockError::WouldBlock) => Err(RecordError::Locked(dir.to_path_buf())),
        Err(fs::TryLockError::Error(error)) => Err(io_error("lock", &dir.join(EVENTS_FILE))(error)),
    }
}

/// Makes a new or renamed entry in `dir` durable (a file's own `sync` does not cover the
/// folder entry that names it).
fn sync_dir(dir: &Path) -> Result<(), RecordError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_error("sync", dir))
}

fn check_folder(dir: &Path) -> Result<(), RecordError> {
    let metadata = fs::metadata(dir).map_err(io_error("read the record folder", dir))?;
    if metadata.is_dir() {
        Ok(())
    } else {
        Err(RecordError::NotAFolder(dir.to_path_buf()))
    }
}

/// The contents of `events.head`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Head {
    events: u64,
    sha256: String,
}

#[derive(Clone, Debug)]
enum HeadState {
    Absent,
    Present(Head),
    Unreadable(String),
}

/// Replaces `events.head` atomically (write a temporary file, sync it, rename it over).
fn write_head(dir: &Path, events: u64, sha256: &str) -> Result<(), RecordError> {
    let head = Head {
        events,
        sha256: sha256.to_owned(),
    };
    let mut text = serde_json::to_vec(&head).expect("a head serialises");
    text.push(b'\n');
    let temporary = dir.join(format!("{HEAD_FILE}.tmp"));
    File::create(&temporary)
        .and_then(|mut file| file.write_all(&text).and_then(|()| file.sync_all()))
        .map_err(io_error("write", &temporary))?;
    let path = dir.join(HEAD_FILE);
    fs::rename(&temporary, &path).map_err(io_error("replace", &path))?;
    sync_dir(dir)
}

fn read_head(dir: &Path) -> HeadState {
    match fs::read(dir.join(HEAD_FILE)) {
        Ok(bytes) => match serde_json::from_slice::<Head>(&bytes) {
            Ok(head) => HeadState::Present(head),
            Err(error) => HeadState::Unreadable(error.to_string()),
        },
        Err(error) if error.kind() == io::ErrorKind::NotFound => HeadState::Absent,
        Err(error) => HeadState::Unreadable(error.to_string()),
    }
}

/// What kind of break [`verify`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    /// The line is not a Kradan event (not JSON, or not of the event's shape).
    NotAnEvent,
    /// The line's `seq` is not its position: lines were removed, inserted or reordered.
    OutOfSequence,
    /// The line's `prev` is not the SHA-256 of the line before it, and the line itself is
    /// not confirmed by the next one: its `prev` was edited, or it does not belong here.
    PrevMismatch,
    /// The line parses and sits in its place, but its SHA-256 is no longer what the next
    /// line (or `events.head`) recorded: it was edited after it was written.
    Changed,
    /// `events.head` counts more lines than the log holds: lines were cut from the end.
    Truncated,
    /// More than one line follows what `events.head` records, which Kradan never writes:
    /// lines were added by something else, or the head file was replaced by an older one.
    AfterHead,
    /// `events.head` cannot be read, so the last line cannot be confirmed.
    HeadUnreadable,
    /// An evidence path leads outside the record folder.
    EvidencePath,
    /// An evidence file is missing.
    EvidenceMissing,
    /// An evidence file's SHA-256 is not the one its event recorded.
    EvidenceChanged,
    /// An evidence file exists but cannot be read.
    EvidenceUnreadable,
}

/// The first line that is not as it was written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Break {
    /// 1-based line number in `events.jsonl` (= `seq` + 1); one past the last line when
    /// lines are missing at the end.
    pub line: usize,
    pub problem: Problem,
    /// The reason in words.
    pub reason: String,
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// What [`verify`] found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// No break.
    pub intact: bool,
    /// Complete lines in the log.
    pub events: usize,
    /// Distinct evidence files checked (up to the break, if any).
    pub evidence_files: usize,
    /// Session-start and session-resume events (up to the break, if any).
    pub sessions: usize,
    /// The SHA-256 of the last complete line ([`GENESIS`] for an empty log).
    pub head: String,
    /// The first break, if any.
    #[serde(rename = "break")]
    pub broken: Option<Break>,
    /// Things worth knowing that do not break the chain: a torn last line left by a
    /// crash, a head file one line behind, frames no event names.
    pub notes: Vec<String>,
}

impl Report {
    /// What `kradan verify` prints.
    pub fn to_text(&self) -> String {
        let mut text = match &self.broken {
            None => format!(
                "chain intact: {} events, {} evidence files\nhead: {} (line {}, {} session{})\n",
                self.events,
                self.evidence_files,
                self.head,
                self.events,
                self.sessions,
                if self.sessions == 1 { "" } else { "s" }
            ),
            Some(broken) => format!(
                "chain broken at {broken}\n({} lines in the log; lines before {} verified)\n",
                self.events, broken.line
            ),
        };
        for note in &self.notes {
            text.push_str(&format!("note: {note}\n"));
        }
        text
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a report serialises")
    }
}

/// Verifies the record in `dir`: every line parses as an event, every `seq` is its line
/// number, every `prev` is the SHA-256 of the line before, the last line matches
/// `events.head`, and every evidence file exists with the SHA-256 its event recorded.
///
/// `Err` when the record cannot be read at all (no folder, no `events.jsonl`); otherwise
/// the report, whose `broken` names the first line that is not as written.
pub fn verify(dir: &Path) -> Result<Report, RecordError> {
    check_folder(dir)?;
    let path = dir.join(EVENTS_FILE);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(RecordError::Missing(dir.to_path_buf()));
        }
        Err(error) => return Err(io_error("read", &path)(error)),
    };
    Ok(examine(dir, &bytes, &read_head(dir)).report)
}

/// How the log ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// With a newline.
    None,
    /// With a whole event whose newline is missing (counted as a line).
    Unterminated,
    /// With this many bytes of an incomplete line (not counted).
    Torn(usize),
}

struct Examined {
    report: Report,
    /// The parsed events of every line (all of them when the chain is intact).
    events: Vec<Event>,
    /// Bytes up to and including the last newline.
    complete_len: usize,
    tail: Tail,
}

struct Line {
    hash: String,
    event: Result<Event, String>,
}

fn parse_line(bytes: &[u8]) -> Line {
    Line {
        hash: sha256_hex(bytes),
        event: serde_json::from_slice::<Event>(bytes).map_err(|e| e.to_string()),
    }
}

fn examine(dir: &Path, bytes: &[u8], head: &HeadState) -> Examined {
    let complete_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut lines: Vec<Line> = bytes[..complete_len]
        .split(|&b| b == b'\n')
        .take(
            bytes[..complete_len]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
        )
        .map(parse_line)
        .collect();
    let mut notes = Vec::new();
    let tail_bytes = &bytes[complete_len..];
    let tail = if tail_bytes.is_empty() {
        Tail::None
    } else {
        let line = parse_line(tail_bytes);
        let expected_prev = lines.last().map_or(GENESIS, |l| l.hash.as_str());
        let continues = line
            .event
            .as_ref()
            .is_ok_and(|e| e.seq == lines.len() as u64 && e.prev == expected_prev);
        if continues {
            notes.push(format!(
                "line {} has no newline (a crash just before it was written); resume adds it",
                lines.len() + 1
            ));
            lines.push(line);
            Tail::Unterminated
        } else {
            notes.push(format!(
                "the last {} bytes are an incomplete line (a crash in the middle of a write); resume removes them",
                tail_bytes.len()
            ));
            Tail::Torn(tail_bytes.len())
        }
    };
    let n = lines.len();
    let head_hash = lines.last().map_or(GENESIS.to_owned(), |l| l.hash.clone());
    // A line is confirmed when the one after it (or, for the last line, events.head)
    // recorded its SHA-256: it is exactly as it was written.
    let confirmed = |i: usize| -> bool {
        if i + 1 < n {
            lines[i + 1]
                .event
                .as_ref()
                .is_ok_and(|e| e.prev == lines[i].hash)
        } else {
            matches!(head, HeadState::Present(h) if h.events == n as u64 && h.sha256 == lines[i].hash)
        }
    };

    let mut evidence_checked: HashMap<String, String> = HashMap::new();
    let mut sessions = 0;
    let mut broken = None;
    'lines: for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        let event = match &line.event {
            Ok(event) => event,
            Err(error) => {
                broken = Some(Break {
                    line: number,
                    problem: Problem::NotAnEvent,
                    reason: format!(
                        "not a Kradan event ({error}): it was changed after it was written"
                    ),
                });
                break;
            }
        };
        if event.seq != i as u64 {
            let reason = if event.seq > i as u64 {
                let missing = event.seq - i as u64;
                format!(
                    "its seq is {} but it is line {number} (seq {i}): {missing} line{} before it {} missing, or lines were reordered",
                    event.seq,
                    if missing == 1 { "" } else { "s" },
                    if missing == 1 { "is" } else { "are" },
                )
            } else {
                format!(
                    "its seq is {} but it is line {number} (seq {i}): a line was inserted before it, or lines were reordered",
                    event.seq
                )
            };
            broken = Some(Break {
                line: number,
                problem: Problem::OutOfSequence,
                reason,
            });
            break;
        }
        let expected_prev = if i == 0 {
            GENESIS
        } else {
            lines[i - 1].hash.as_str()
        };
        if event.prev != expected_prev {
            broken = Some(if i > 0 && confirmed(i) {
                Break {
                    line: i,
                    problem: Problem::Changed,
                    reason: format!(
                        "changed after it was written: its SHA-256 is {}, but line {number} recorded {}",
                        lines[i - 1].hash,
                        event.prev
                    ),
                }
            } else if i == 0 {
                Break {
                    line: number,
                    problem: Problem::PrevMismatch,
                    reason: format!(
                        "its prev is {}, but the first line's is 64 zeros",
                        event.prev
                    ),
                }
            } else {
                Break {
                    line: number,
                    problem: Problem::PrevMismatch,
                    reason: format!(
                        "its prev is {}, but the SHA-256 of line {i} is {}: this line was changed, or does not belong after line {i}",
                        event.prev,
                        lines[i - 1].hash
                    ),
                }
            });
            break;
        }
        if matches!(event.kind, Kind::SessionStart | Kind::SessionResume) {
            sessions += 1;
        }
        for evidence in &event.evidence {
            let problem = check_evidence(dir, evidence, &mut evidence_checked);
            if let Some((problem, reason)) = problem {
                broken = Some(Break {
                    line: number,
                    problem,
                    reason,
                });
                break 'lines;
            }
        }
    }

    if broken.is_none() {
        broken = check_head(head, &lines, &mut notes);
    }
    if n > 0
        && broken.is_none()
        && lines[0]
            .event
            .as_ref()
            .is_ok_and(|e| e.kind != Kind::SessionStart)
    {
        notes.push("line 1 is not a session-start event".into());
    }
    let orphans = orphan_evidence(dir, &evidence_checked);
    if broken.is_none() && !orphans.is_empty() {
        notes.push(format!(
            "{} file{} in {EVIDENCE_DIR}/ that no event names (written just before a crash, or added later): {}",
            orphans.len(),
            if orphans.len() == 1 { "" } else { "s" },
            orphans.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                + if orphans.len() > 5 { ", …" } else { "" }
        ));
    }

    let report = Report {
        intact: broken.is_none(),
        events: n,
        evidence_files: evidence_checked.len(),
        sessions,
        head: head_hash,
        broken,
        notes,
    };
    Examined {
        report,
        events: lines.into_iter().filter_map(|l| l.event.ok()).collect(),
        complete_len,
        tail,
    }
}

/// Checks `events.head` against the last lines (every line before is confirmed by the one
/// after it already).
fn check_head(head: &HeadState, lines: &[Line], notes: &mut Vec<String>) -> Option<Break> {
    let n = lines.len();
    let hash_of = |count: usize| -> &str {
        if count == 0 {
            GENESIS
        } else {
            &lines[count - 1].hash
        }
    };
    let head = match head {
        HeadState::Absent => {
            if n > 0 {
                notes.push(format!(
                    "no {HEAD_FILE}: an edit to the last line, or lines cut from the end, could not be seen"
                ));
            }
            return None;
        }
        HeadState::Unreadable(error) => {
            return Some(Break {
                line: n.max(1),
                problem: Problem::HeadUnreadable,
                reason: format!("cannot be confirmed: {HEAD_FILE} is unreadable ({error})"),
            });
        }
        HeadState::Present(head) => head,
    };
    let counted = usize::try_from(head.events).unwrap_or(usize::MAX);
    if counted > n {
        let missing = counted - n;
        return Some(Break {
            line: n + 1,
            problem: Problem::Truncated,
            reason: format!(
                "missing: {HEAD_FILE} records {counted} events but the log holds {n}, so {missing} line{} {} cut from the end",
                if missing == 1 { "" } else { "s" },
                if missing == 1 { "was" } else { "were" },
            ),
        });
    }
    if counted + 1 < n {
        return Some(Break {
            line: counted + 2,
            problem: Problem::AfterHead,
            reason: format!(
                "written after {HEAD_FILE} (which records {counted} events), and Kradan never writes two lines without updating it: lines were added, or {HEAD_FILE} was replaced by an older one"
            ),
        });
    }
    if head.sha256 != hash_of(counted) {
        return Some(Break {
            line: counted.max(1),
            problem: Problem::Changed,
            reason: format!(
                "changed after it was written: its SHA-256 is {}, but {HEAD_FILE} recorded {}",
                hash_of(counted),
                head.sha256
            ),
        });
    }
    if counted + 1 == n {
        notes.push(format!(
            "{HEAD_FILE} is one line behind (a crash between writing line {n} and the head); line {n} is covered by the chain alone"
        ));
    }
    None
}

/// Checks one evidence entry, hashing each file once.
fn check_evidence(
    dir: &Path,
    evidence: &Evidence,
    checked: &mut HashMap<String, String>,
) -> Option<(Problem, String)> {
    let Some(relative) = safe_relative(&evidence.path) else {
        return Some((
            Problem::EvidencePath,
            format!(
                "evidence path {:?} leads outside the record folder",
                evidence.path
            ),
        ));
    };
    let actual = match checked.get(&evidence.path) {
        Some(hash) => hash.clone(),
        None => {
            let path = dir.join(relative);
            let bytes = match fs::read(&path) {
                Ok(bytes) => bytes,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    return Some((
                        Problem::EvidenceMissing,
                        format!("evidence file {} is missing", evidence.path),
                    ));
                }
                Err(error) => {
                    return Some((
                        Problem::EvidenceUnreadable,
                        format!("cannot read evidence file {}: {error}", evidence.path),
                    ));
                }
            };
            let hash = sha256_hex(&bytes);
            checked.insert(evidence.path.clone(), hash.clone());
            hash
        }
    };
    (actual != evidence.sha256).then(|| {
        (
            Problem::EvidenceChanged,
            format!(
                "evidence file {} is not the one recorded (its SHA-256 is {actual}, the event recorded {}): it was changed or replaced",
                evidence.path, evidence.sha256
            ),
        )
    })
}

/// Files under `evidence/` that no event names, as `evidence/...` paths, sorted.
fn orphan_evidence(dir: &Path, named: &HashMap<String, String>) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, found: &mut BTreeSet<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}/{name}");
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => walk(&entry.path(), &relative, found),
                Ok(_) => {
                    found.insert(relative);
                }
                Err(_) => {}
            }
        }
    }
    let mut found = BTreeSet::new();
    walk(&dir.join(EVIDENCE_DIR), EVIDENCE_DIR, &mut found);
    found
        .into_iter()
        .filter(|path| !named.contains_key(path))
        .collect()
}

/// `path` as a relative path of plain names joined by single `/` (no `.`, `..`, root,
/// backslash or empty part), or `None`.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let plain = path
        .split('/')
        .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\\'))
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    plain.then(|| PathBuf::from(path))
}

fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The current time, as [`Event::wall_time`] is written.
pub fn wall_time_now() -> String {
    format_rfc3339(SystemTime::now())
}

/// RFC 3339 in UTC with milliseconds, e.g. `2025-03-01T09:30:12.345Z` (std has no
/// calendar; the civil date comes from the day count by Howard Hinnant's algorithm).
pub fn format_rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let in_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3600,
        in_day % 3600 / 60,
        in_day % 60,
        since.subsec_millis()
    )
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Source;

    fn move_event(n: u32) -> Event {
        let color = if n % 2 == 1 {
            Color::Black
        } else {
            Color::White
        };
        Event::new(Kind::Move)
            .at(f64::from(n) * 2.5)
            .with_move(n, color, format!("p{n}"))
            .with_points([[n as usize % 19, n as usize % 7]])
            .with_confidence(0.93)
    }

    /// A log of a session start, `moves` moves and, after every third move, a flag with
    /// its two frames.
    fn write_log(dir: &Path, moves: u32) -> EventLog {
        let mut log = EventLog::create(dir, Map::new()).unwrap();
        for n in 1..=moves {
            log.append(move_event(n)).unwrap();
            if n % 3 == 0 {
                let seq = log.next_seq();
                let before = log
                    .write_evidence(
                        &format!("{seq:06}-before.png"),
                        format!("before {n}").as_bytes(),
                    )
                    .unwrap();
                let after = log
                    .write_evidence(
                        &format!("{seq:06}-after.png"),
                        format!("after {n}").as_bytes(),
                    )
                    .unwrap();
                let flag = Event::new(Kind::Flag)
                    .at(f64::from(n) * 2.5 + 1.0)
                    .with_move(n, Color::Black, "double")
                    .cite(&[Article::new(Source::Tga, "20")], &[Penalty::Loss])
                    .with_evidence(before)
                    .with_evidence(after)
                    .with_detail("what", "two black stones in a row");
                log.append(flag).unwrap();
            }
        }
        log
    }

    fn lines_of(dir: &Path) -> Vec<Vec<u8>> {
        let bytes = fs::read(dir.join(EVENTS_FILE)).unwrap();
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn put_lines(dir: &Path, lines: &[Vec<u8>]) {
        fs::write(dir.join(EVENTS_FILE), lines.concat()).unwrap();
    }

    fn broken(dir: &Path) -> Break {
        let report = verify(dir).unwrap();
        assert!(!report.intact);
        report.broken.expect("a break")
    }

    #[test]
    fn a_chain_of_1000_events_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = EventLog::create(dir.path(), Map::new()).unwrap();
        for n in 1..1000 {
            let event = log.append(move_event(n)).unwrap();
            assert_eq!(event.seq, u64::from(n));
        }
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!(report.events, 1000);
        assert_eq!(report.sessions, 1);
        assert_eq!(report.head, log.head());
        assert!(report.notes.is_empty(), "{:?}", report.notes);
        assert!(
            report
                .to_text()
                .starts_with("chain intact: 1000 events, 0 evidence files\n")
        );
    }

    #[test]
    fn each_line_carries_the_sha256_of_the_previous_lines_bytes_without_newline() {
        let dir = tempfile::tempdir().unwrap();
        write_log(dir.path(), 2);
        let lines = lines_of(dir.path());
        let first: Event = serde_json::from_slice(&lines[0]).unwrap();
        assert_eq!(first.prev, GENESIS);
        assert_eq!(first.kind, Kind::SessionStart);
        assert_eq!(first.detail["format"], FORMAT);
        for pair in lines.windows(2) {
            let next: Event = serde_json::from_slice(&pair[1]).unwrap();
            assert_eq!(next.prev, sha256_hex(pair[0].strip_suffix(b"\n").unwrap()));
        }
        let head: Head =
            serde_json::from_slice(&fs::read(dir.path().join(HEAD_FILE)).unwrap()).unwrap();
        assert_eq!(head.events, 3);
        assert_eq!(
            head.sha256,
            sha256_hex(lines[2].strip_suffix(b"\n").unwrap())
        );
    }

    #[test]
    fn fields_are_written_in_the_documented_order() {
        let event = move_event(1).with_detail("z", 1).with_detail("a", 2);
        let text = serde_json::to_string(&event).unwrap();
        let order = [
            "seq",
            "kind",
            "video_time",
            "wall_time",
            "move_number",
            "color",
            "notation",
            "points",
            "rules",
            "penalties",
            "confidence",
            "evidence",
            "detail",
            "prev",
        ];
        let positions: Vec<usize> = order
            .iter()
            .map(|key| text.find(&format!("\"{key}\":")).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(text.contains(r#""detail":{"a":2,"z":1}"#), "{text}");
        let docs = include_str!("../../docs/record.md");
        for key in order {
            assert!(
                docs.contains(&format!("| `{key}` |")),
                "docs/record.md lacks {key}"
            );
        }
    }

    #[test]
    fn the_worked_example_in_the_docs_is_a_valid_chain() {
        let docs = include_str!("../../docs/record.md");
        let lines: Vec<&str> = docs
            .lines()
            .filter(|l| l.starts_with("{\"seq\":"))
            .collect();
        assert_eq!(lines.len(), 3);
        let dir = tempfile::tempdir().unwrap();
        let mut prev = GENESIS.to_owned();
        for (i, line) in lines.iter().enumerate() {
            let event: Event = serde_json::from_str(line).unwrap();
            assert_eq!(event.seq, i as u64);
            assert_eq!(event.prev, prev, "line {}", i + 1);
            assert_eq!(serde_json::to_string(&event).unwrap(), *line, "canonical");
            prev = sha256_hex(line.as_bytes());
            for evidence in &event.evidence {
                let path = dir.path().join(&evidence.path);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, &evidence.path).unwrap();
            }
        }
        let head = format!(r#"{{"events":3,"sha256":"{prev}"}}"#);
        assert!(docs.contains(&head), "the docs show events.head as {head}");
        assert!(docs.contains(&format!("line 1's {} bytes", lines[0].len())));
        fs::write(dir.path().join(EVENTS_FILE), lines.join("\n") + "\n").unwrap();
        fs::write(dir.path().join(HEAD_FILE), &head).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact && report.notes.is_empty(), "{report:?}");
        assert_eq!(report.evidence_files, 4);
        let edited = lines.join("\n").replacen("\"pd\"", "\"pc\"", 1) + "\n";
        fs::write(dir.path().join(EVENTS_FILE), edited).unwrap();
        let text = verify(dir.path()).unwrap().to_text();
        assert!(
            text.starts_with(
                "chain broken at line 2: changed after it was written: its SHA-256 is "
            ),
            "{text}"
        );
        assert!(text.contains("but line 3 recorded 3d5aed7d"), "{text}");
    }

    #[test]
    fn editing_any_byte_of_any_line_is_caught_at_that_line() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 6));
        let lines = lines_of(dir.path());
        assert_eq!(lines.len(), 9);
        assert!(verify(dir.path()).unwrap().intact);
        let mut edits = 0;
        for (k, line) in lines.iter().enumerate() {
            for position in 0..line.len() {
                let mut edited = lines.clone();
                edited[k][position] ^= 0x01;
                put_lines(dir.path(), &edited);
                let found = broken(dir.path());
                assert_eq!(
                    found.line,
                    k + 1,
                    "byte {position} of line {} ({:?}): {found}",
                    k + 1,
                    line[position] as char
                );
                edits += 1;
            }
        }
        assert!(edits > 2000, "{edits}");
        put_lines(dir.path(), &lines);
        assert!(verify(dir.path()).unwrap().intact);
    }

    #[test]
    fn deleting_any_line_is_caught_where_it_was() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 6));
        let lines = lines_of(dir.path());
        for k in 0..lines.len() {
            let mut edited = lines.clone();
            edited.remove(k);
            put_lines(dir.path(), &edited);
            let found = broken(dir.path());
            assert_eq!(found.line, k + 1, "deleting line {}: {found}", k + 1);
            let expected = if k + 1 == lines.len() {
                Problem::Truncated
            } else {
                Problem::OutOfSequence
            };
            assert_eq!(found.problem, expected, "{found}");
            assert!(found.reason.contains("1 line"), "{found}");
        }
    }

    #[test]
    fn swapping_two_lines_is_caught_at_the_first() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 6));
        let lines = lines_of(dir.path());
        for k in 0..lines.len() {
            for j in k + 1..lines.len() {
                let mut edited = lines.clone();
                edited.swap(k, j);
                put_lines(dir.path(), &edited);
                let found = broken(dir.path());
                assert_eq!(
                    found.line,
                    k + 1,
                    "swapping {} and {}: {found}",
                    k + 1,
                    j + 1
                );
                assert_eq!(found.problem, Problem::OutOfSequence);
            }
        }
    }

    #[test]
    fn a_changed_missing_or_swapped_evidence_file_is_caught_at_its_event() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 6));
        let report = verify(dir.path()).unwrap();
        assert!(report.intact);
        assert_eq!(report.evidence_files, 4);
        // Line 5 is the first flag (seq 4), line 9 the second (seq 8).
        let before = dir.path().join("evidence/000004-before.png");
        let after = dir.path().join("evidence/000008-after.png");
        let original = fs::read(&before).unwrap();

        let mut edited = original.clone();
        edited[0] ^= 0x20;
        fs::write(&before, &edited).unwrap();
        let found = broken(dir.path());
        assert_eq!(
            (found.line, found.problem),
            (5, Problem::EvidenceChanged),
            "{found}"
        );
        assert!(found.reason.contains("evidence/000004-before.png"));

        fs::remove_file(&before).unwrap();
        let found = broken(dir.path());
        assert_eq!(
            (found.line, found.problem),
            (5, Problem::EvidenceMissing),
            "{found}"
        );

        // Frames swapped between two events.
        fs::write(&before, fs::read(&after).unwrap()).unwrap();
        fs::write(&after, &original).unwrap();
        let found = broken(dir.path());
        assert_eq!(
            (found.line, found.problem),
            (5, Problem::EvidenceChanged),
            "{found}"
        );

        fs::write(&after, fs::read(&before).unwrap()).unwrap();
        fs::write(&before, &original).unwrap();
        assert!(verify(dir.path()).unwrap().intact);
    }

    #[test]
    fn evidence_outside_the_record_is_refused_and_caught() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = EventLog::create(dir.path(), Map::new()).unwrap();
        for name in ["../x.png", "/etc/passwd", "", "a/../../b"] {
            assert!(
                matches!(log.write_evidence(name, b"x"), Err(RecordError::Invalid(_))),
                "{name:?}"
            );
        }
        let outside = Evidence {
            path: "../outside.png".into(),
            sha256: sha256_hex(b"x"),
        };
        let refused = log.append(Event::new(Kind::Flag).with_evidence(outside.clone()));
        assert!(matches!(refused, Err(RecordError::Invalid(_))));
        let unwritten = Evidence {
            path: "evidence/never.png".into(),
            sha256: sha256_hex(b"x"),
        };
        let refused = log.append(Event::new(Kind::Flag).with_evidence(unwritten));
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("was not written first")
        );
        // The log itself is still fine after refused events.
        log.append(move_event(1)).unwrap();
        assert!(verify(dir.path()).unwrap().intact);
    }

    #[test]
    fn evidence_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::create(dir.path(), Map::new()).unwrap();
        let first = log.write_evidence("frames/1.png", b"one").unwrap();
        assert_eq!(first.path, "evidence/frames/1.png");
        assert_eq!(first.sha256, sha256_hex(b"one"));
        assert_eq!(log.write_evidence("frames/1.png", b"one").unwrap(), first);
        let error = log.write_evidence("frames/1.png", b"two").unwrap_err();
        assert!(error.to_string().contains("never overwritten"), "{error}");
        assert_eq!(
            fs::read(dir.path().join("evidence/frames/1.png")).unwrap(),
            b"one"
        );
        // Written but named by no event: a note, not a break.
        let report = verify(dir.path()).unwrap();
        assert!(report.intact);
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("evidence/frames/1.png")),
            "{:?}",
            report.notes
        );
    }

    #[test]
    fn a_torn_last_line_is_removed_on_resume_and_the_chain_continues() {
        let dir = tempfile::tempdir().unwrap();
        let log = write_log(dir.path(), 4);
        let head_before = log.head().to_owned();
        drop(log);
        let complete = fs::read(dir.path().join(EVENTS_FILE)).unwrap();
        // A crash in the middle of writing the next line.
        let torn = br#"{"seq":6,"kind":"move","video_time":12.5,"wall_ti"#;
        fs::write(dir.path().join(EVENTS_FILE), [&complete[..], torn].concat()).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!(report.events, 6);
        assert!(report.notes.iter().any(|n| n.contains("incomplete line")));

        let (mut log, resumed) = EventLog::resume(dir.path(), Map::new()).unwrap();
        assert_eq!(resumed.events.len(), 6);
        assert_eq!(resumed.events[4].kind, Kind::Flag);
        assert_eq!(resumed.notes.len(), 1);
        assert!(
            resumed.notes[0].contains(&format!("({} bytes)", torn.len())),
            "{:?}",
            resumed.notes
        );
        let resume = log.last().unwrap().clone();
        assert_eq!(resume.kind, Kind::SessionResume);
        assert_eq!(resume.seq, 6);
        assert_eq!(resume.prev, head_before);
        assert_eq!(resume.detail["recovered_events"], 6);
        assert_eq!(resume.detail["repairs"][0], resumed.notes[0].as_str());
        log.append(move_event(5)).unwrap();
        let bytes = fs::read(dir.path().join(EVENTS_FILE)).unwrap();
        assert!(bytes.starts_with(&complete));
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!((report.events, report.sessions), (8, 2));
        assert!(report.notes.is_empty(), "{:?}", report.notes);
    }

    #[test]
    fn a_last_line_cut_in_the_middle_loses_only_that_line() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = write_log(dir.path(), 2);
        let head_file = fs::read(dir.path().join(HEAD_FILE)).unwrap();
        log.append(move_event(3)).unwrap();
        drop(log);
        // The disk holds half of the last line, and the head as it was before it (the
        // writer updates the head only after the line is synced).
        let mut lines = lines_of(dir.path());
        let last = lines.pop().unwrap();
        lines.push(last[..last.len() / 2].to_vec());
        put_lines(dir.path(), &lines);
        fs::write(dir.path().join(HEAD_FILE), &head_file).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!(report.events, 3);

        let (log, resumed) = EventLog::resume(dir.path(), Map::new()).unwrap();
        assert_eq!(resumed.events.len(), 3);
        assert_eq!(log.next_seq(), 4);
        drop(log);
        assert!(verify(dir.path()).unwrap().intact);
    }

    #[test]
    fn a_whole_last_line_without_its_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 2));
        let mut bytes = fs::read(dir.path().join(EVENTS_FILE)).unwrap();
        bytes.pop();
        fs::write(dir.path().join(EVENTS_FILE), &bytes).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!(report.events, 3);
        let (log, resumed) = EventLog::resume(dir.path(), Map::new()).unwrap();
        assert_eq!(resumed.events.len(), 3);
        assert!(resumed.notes[0].contains("newline"), "{:?}", resumed.notes);
        assert_eq!(log.last().unwrap().seq, 3);
        drop(log);
        let report = verify(dir.path()).unwrap();
        assert!(report.intact && report.notes.is_empty(), "{report:?}");
    }

    #[test]
    fn resume_twice_continues_one_chain() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = EventLog::create(dir.path(), Map::new()).unwrap();
        log.append(move_event(1)).unwrap();
        drop(log);
        for round in 0..2 {
            let mut detail = Map::new();
            detail.insert("round".into(), round.into());
            let (mut log, resumed) = EventLog::resume(dir.path(), detail).unwrap();
            assert!(resumed.notes.is_empty());
            assert_eq!(log.last().unwrap().detail["round"], round);
            log.append(move_event(2 + round)).unwrap();
        }
        let report = verify(dir.path()).unwrap();
        assert!(report.intact, "{report:?}");
        assert_eq!((report.events, report.sessions), (6, 3));
        let kinds: Vec<Kind> = lines_of(dir.path())
            .iter()
            .map(|l| serde_json::from_slice::<Event>(l).unwrap().kind)
            .collect();
        assert_eq!(
            kinds,
            [
                Kind::SessionStart,
                Kind::Move,
                Kind::SessionResume,
                Kind::Move,
                Kind::SessionResume,
                Kind::Move
            ]
        );
    }

    #[test]
    fn create_refuses_a_folder_that_holds_a_record() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 1));
        let before = fs::read(dir.path().join(EVENTS_FILE)).unwrap();
        let error = EventLog::create(dir.path(), Map::new()).unwrap_err();
        assert!(matches!(error, RecordError::Exists(_)), "{error}");
        assert!(error.to_string().contains("--resume"), "{error}");
        assert_eq!(fs::read(dir.path().join(EVENTS_FILE)).unwrap(), before);
    }

    #[test]
    fn resume_needs_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let error = EventLog::resume(dir.path(), Map::new()).unwrap_err();
        assert!(matches!(error, RecordError::Missing(_)), "{error}");
        let error = EventLog::resume(&dir.path().join("nowhere"), Map::new()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot read the record folder"),
            "{error}"
        );
    }

    #[test]
    fn one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::create(dir.path(), Map::new()).unwrap();
        let error = EventLog::resume(dir.path(), Map::new()).unwrap_err();
        assert!(matches!(error, RecordError::Locked(_)), "{error}");
        drop(log);
        assert!(EventLog::resume(dir.path(), Map::new()).is_ok());
    }

    #[test]
    fn a_tampered_record_is_not_resumed_and_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        drop(write_log(dir.path(), 4));
        let mut lines = lines_of(dir.path());
        let text = String::from_utf8(lines[2].clone()).unwrap();
        lines[2] = text.replace("\"p2\"", "\"p9\"").into_bytes();
        lines.push(b"{\"seq\":7,\"kind\":\"mo".to_vec());
        put_lines(dir.path(), &lines);
        let before = fs::read(dir.path().join(EVENTS_FILE)).unwrap();
        let error = EventLog::resume(dir.path(), Map::new()).unwrap_err();
        let RecordError::Broken { broken, .. } = &error else {
            panic!("{error}")
        };
        assert_eq!((broken.line, broken.problem), (3, Problem::Changed));
        assert!(
            error.to_string().contains("chain broken at line 3"),
            "{error}"
        );
        assert_eq!(fs::read(dir.path().join(EVENTS_FILE)).unwrap(), before);
    }

    #[test]
    fn an_unwritable_place_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        fs::write(&file, b"").unwrap();
        let error = EventLog::create(&file.join("record"), Map::new()).unwrap_err();
        assert!(matches!(error, RecordError::Io { .. }), "{error}");
        let message = error.to_string();
        assert!(
            message.starts_with("cannot create the record folder"),
            "{message}"
        );
        assert!(message.contains("plain-file/record"), "{message}");
    }

    #[test]
    fn the_head_file_catches_what_the_chain_alone_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = write_log(dir.path(), 1);
        let head_after_2 = fs::read(dir.path().join(HEAD_FILE)).unwrap();
        log.append(move_event(2)).unwrap();
        let head_after_3 = fs::read(dir.path().join(HEAD_FILE)).unwrap();
        log.append(move_event(3)).unwrap();
        drop(log);
        let head = dir.path().join(HEAD_FILE);

        // One line behind: what a crash between the line and the head leaves.
        fs::write(&head, &head_after_3).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact);
        assert!(report.notes.iter().any(|n| n.contains("one line behind")));
        // Two behind: something else wrote, or the head was replaced by an older one.
        fs::write(&head, &head_after_2).unwrap();
        let found = broken(dir.path());
        assert_eq!(
            (found.line, found.problem),
            (4, Problem::AfterHead),
            "{found}"
        );
        // Unreadable.
        fs::write(&head, b"garbage").unwrap();
        assert_eq!(broken(dir.path()).problem, Problem::HeadUnreadable);
        // Absent: a note.
        fs::remove_file(&head).unwrap();
        let report = verify(dir.path()).unwrap();
        assert!(report.intact);
        assert!(report.notes.iter().any(|n| n.contains("no events.head")));
    }

    #[test]
    fn append_refuses_what_it_must_not_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = EventLog::create(dir.path(), Map::new()).unwrap();
        for kind in [Kind::SessionStart, Kind::SessionResume] {
            assert!(matches!(
                log.append(Event::new(kind)),
                Err(RecordError::Invalid(_))
            ));
        }
        assert!(log.append(move_event(1).with_confidence(1.5)).is_err());
        assert!(log.append(move_event(1).at(f64::NAN)).is_err());
        assert!(log.append(move_event(1).at(-1.0)).is_err());
        let mut event = move_event(1);
        event.wall_time.clear();
        event.seq = 77;
        event.prev = "forged".into();
        let written = log.append(event).unwrap();
        assert_eq!(written.seq, 1);
        assert_eq!(written.wall_time.len(), "2025-03-01T09:30:12.345Z".len());
        assert_eq!(verify(dir.path()).unwrap().events, 2);
    }

    #[test]
    fn wall_times_are_rfc3339_utc() {
        use std::time::Duration;
        let at = |seconds: u64, millis: u64| {
            format_rfc3339(UNIX_EPOCH + Duration::from_millis(seconds * 1000 + millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_700_000_000, 123), "2023-11-14T22:13:20.123Z");
        assert_eq!(at(1_735_689_599, 999), "2024-12-31T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }
}
