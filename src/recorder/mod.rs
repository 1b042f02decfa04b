//! `kradan record`: a source of frames in, a game record out, as the game goes.
//!
//! The stages, each in its own module: frames come from [`crate::source`] (on a thread
//! of their own, so decoding overlaps analysis), [`crate::track`] follows the board and
//! hands over positions that stood still, [`crate::infer::go`] turns them into moves and
//! flags against the rules, and this module writes what was decided: `events.jsonl` (hash
//! chained, [`crate::record`]), `game.sgf`, and the annotated frames in `evidence/`. Every
//! decision is on disk before the next frame is looked at, so a crash loses nothing
//! already decided, and `--resume` continues the same record.

mod actions;
pub mod chain8;
mod eight;
pub mod evidence;
mod lens;
mod movetext;
pub mod pdn_view;
pub mod pgn_view;
mod sgf_view;
mod unexplained;

pub use actions::{Action, ActionRequest, Corrections, apply_action, point_from_sgf};

use crate::games::go::scoring::{self, Counting};
use crate::games::go::{FlagKind, Move, Point, Position};
use crate::games::{Color, Occupancy};
use crate::geometry::calibration::Calibration;
use crate::geometry::eight::EightGame;
use crate::infer::go::{GoInference, InferOptions, Outcome, Seen};
use crate::reading::{Reader, ReaderChoice};
use crate::record::{Event, EventLog, Kind, RecordError};
use crate::source::{self, Frame, SourceError, SourceKind};
use crate::track::{Settled, TrackEvent, Tracker, TrackerOptions, View};
use evidence::Mark;
use lens::{BoardKind, LensCorrection, Straightened};
use opencv::core::Mat;
use opencv::prelude::*;
use serde_json::{Map, Value, json};
use sgf_view::SgfView;
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;
use unexplained::Unexplained;

/// Analyses per second of source time: a hand is over the board for a second or more, and
/// ten looks a second commit a move within a few tenths of a second of the hand leaving.
pub const DEFAULT_RATE: f64 = 10.0;

/// Seconds with no hand over the board after which the next hand is another visit, not
/// the same one lifting for a frame: the players' hands were 0.8 s apart or more on
/// rendered footage, and a position settles in 0.2 s.
const HAND_AWAY: f64 = 0.4;

/// How long a change inside the squares may take to show in the voted reading.
const STIR_LAG: f64 = 2.0;

/// The least confidence every point's settled call must have before a Go game in progress
/// is joined from the reading, as for Mak-hos (`eight::JOIN_CONFIDENCE`).
const GO_JOIN_CONFIDENCE: f32 = 0.8;

/// The points (`[row, col]`) whose settled call has less than [`GO_JOIN_CONFIDENCE`].
fn unsure_points(settled: &Settled) -> Vec<[usize; 2]> {
    let size = settled.occupancy.width();
    settled
        .confidence
        .iter()
        .enumerate()
        .filter(|&(_, &confidence)| confidence < GO_JOIN_CONFIDENCE)
        .map(|(index, _)| [index / size, index % size])
        .collect()
}

/// Which game the board in view is played in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedGame {
    Go,
    Eight(EightGame),
}

impl std::str::FromStr for RecordedGame {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "go" => Ok(RecordedGame::Go),
            other => other.parse().map(RecordedGame::Eight),
        }
    }
}

#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub source: String,
    pub out: PathBuf,
    pub game: RecordedGame,
    pub size: Option<usize>,
    pub handicap: usize,
    pub komi: f64,
    /// Who plays first (Black unless the event decides otherwise; White after handicap).
    pub first: Option<Color>,
    pub calibration: Option<PathBuf>,
    /// Read a folder as the frames of a video at this rate, not as stills.
    pub fps: Option<f64>,
    /// Passes entered by an operator: lines `SECONDS COLOR` (`612.5 white`).
    pub passes: Option<PathBuf>,
    /// Mak-hos or Makruk: the position the game on the board starts from (PDN or
    /// Fairy-Stockfish FEN), for a camera started mid-game.
    pub fen: Option<String>,
    pub resume: bool,
    pub rate: f64,
    pub reader: ReaderChoice,
    /// Print progress to stderr.
    pub progress: bool,
}

impl RecordOptions {
    pub fn new(source: impl Into<String>, out: impl Into<PathBuf>) -> Self {
        RecordOptions {
            source: source.into(),
            out: out.into(),
            game: RecordedGame::Go,
            size: None,
            handicap: 0,
            komi: scoring::THAI_KOMI,
            first: None,
            calibration: None,
            fps: None,
            passes: None,
            fen: None,
            resume: false,
            rate: DEFAULT_RATE,
            reader: ReaderChoice::Both,
            progress: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error("{0}")]
    BadOptions(String),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("no board found in {input} ({frames} frames looked at)")]
    NoBoard { input: String, frames: u64 },
    #[error("the board in view has {found} lines, not the {asked} asked for")]
    WrongSize { found: usize, asked: usize },
    #[error("{0}")]
    Model(String),
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl RecorderError {
    /// 2 bad input (options, source, output folder), 3 no board, 4 internal.
    pub fn exit_code(&self) -> u8 {
        match self {
            RecorderError::BadOptions(_)
            | RecorderError::Source(_)
            | RecorderError::Record(_)
            | RecorderError::Model(_)
            | RecorderError::WrongSize { .. }
            | RecorderError::Write { .. } => 2,
            RecorderError::NoBoard { .. } => 3,
            RecorderError::OpenCv(_) => 4,
        }
    }
}

/// What a recording did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub moves: usize,
    pub flags: usize,
    pub frames: u64,
    pub analysed: u64,
    pub source_seconds: f64,
    pub wall_seconds: f64,
    /// The final position, rows of `.`/`B`/`W`.
    pub final_rows: Vec<String>,
    /// The Thai score of the final position with no stones marked dead.
    pub score: Option<String>,
    /// The source broke before its end: where, in words. Everything before was recorded.
    pub broken: Option<String>,
}

/// A pass the operator entered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassEntry {
    pub time: f64,
    pub color: Color,
}

/// Reads a passes file: one `SECONDS COLOR` per line, `#` comments.
pub fn read_passes(path: &Path) -> Result<Vec<PassEntry>, RecorderError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RecorderError::BadOptions(format!("--passes {}: {e}", path.display())))?;
    let mut passes = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = || {
            RecorderError::BadOptions(format!(
                "--passes {} line {}: {line:?} is not \"SECONDS black|white\"",
                path.display(),
                number + 1
            ))
        };
        let mut words = line.split_whitespace();
        let time: f64 = words
            .next()
            .and_then(|w| w.parse().ok())
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(bad)?;
        let color = match words.next().map(str::to_ascii_lowercase).as_deref() {
            Some("black" | "b") => Color::Black,
            Some("white" | "w") => Color::White,
            _ => return Err(bad()),
        };
        passes.push(PassEntry { time, color });
    }
    passes.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(passes)
}

/// Records a game. `on_line` receives a line for every committed move and flag, for a
/// live display.
pub fn record(
    options: &RecordOptions,
    on_line: &mut dyn FnMut(&str),
) -> Result<Summary, RecorderError> {
    record_with(
        options,
        Hooks {
            on_line,
            on_event: None,
            actions: None,
            stop: None,
        },
    )
}

/// What a caller beside the command line (`kradan serve`) attaches to a recording.
pub struct Hooks<'a> {
    pub on_line: &'a mut dyn FnMut(&str),
    /// Called with every event once it is synced to disk.
    pub on_event: Option<EventHook>,
    /// A referee's actions, taken between frames.
    pub actions: Option<mpsc::Receiver<ActionRequest>>,
    /// Set to end the recording (a camera never ends on its own).
    pub stop: Option<Arc<AtomicBool>>,
}

pub type EventHook = Box<dyn FnMut(&Event) + Send>;

/// What the frame loop of [`record_with`] drives for one game: its tracker, its rules
/// stage and the record it writes. The loop owns the source, the decoding thread,
/// calibration, a referee's actions, stopping and progress; a game owns the rest.
trait Recording {
    /// Attaches the server's hook and tells it of the event the log wrote on opening.
    fn set_on_event(&mut self, on_event: Option<EventHook>);
    /// The source time the record being continued had reached.
    fn resume_time(&self) -> Option<f64>;
    /// Whether a game is under way (a board was found and the record begun).
    fn started(&self) -> bool;
    /// Moves and flags so far and the last line shown, for the progress line.
    fn progress(&self) -> (usize, usize, &str);
    /// Writes `event` to the chain at source time `time` (a live source writes no video
    /// time).
    fn write(&mut self, time: f64, event: Event) -> Result<(), RecorderError>;
    fn note(&mut self, time: f64, note: &str, message: &str) -> Result<(), RecorderError> {
        let event = Event::new(Kind::Note)
            .with_detail("note", note)
            .with_detail("message", message);
        self.write(time, event)
    }
    fn take_actions(
        &mut self,
        actions: &mpsc::Receiver<ActionRequest>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError>;
    /// A calibration's corners for the first frame's picture size.
    fn give_geometry(&mut self, calibration: &Calibration, width: i32, height: i32);
    /// Every frame as taken, before the lens is known (it may not be looked at: see
    /// [`lens`]); a game keeps the first if it needs it.
    fn first_frame(&mut self, _image: &Mat) {}
    /// Looks at one frame.
    fn look(&mut self, frame: &Frame, on_line: &mut dyn FnMut(&str)) -> Result<(), RecorderError>;
    /// The source ended (not stopped) after `last`, the last frame looked at.
    fn end_of_source(
        &mut self,
        _last: &Frame,
        _on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        Ok(())
    }
    /// The `final-position` note of the position the footage ended on, having put its
    /// rows (and Go's count) in `summary`; `None` when no game began.
    fn final_position(&self, summary: &mut Summary) -> Option<Event>;
    /// Closes the record: why the source broke (if it did), the final position, and the
    /// session's end with its totals.
    fn finish(
        &mut self,
        time: f64,
        broken: Option<&str>,
        summary: &mut Summary,
    ) -> Result<(), RecorderError> {
        if let Some(reason) = broken {
            self.note(
                time,
                "source-broken",
                &format!("the source broke: {reason}; everything before was recorded"),
            )?;
        }
        if let Some(event) = self.final_position(summary) {
            self.write(time, event)?;
        }
        let (moves, flags, _) = self.progress();
        let end = Event::new(Kind::SessionEnd)
            .with_detail("moves", moves)
            .with_detail("flags", flags);
        self.write(time, end)?;
        summary.moves = moves;
        summary.flags = flags;
        Ok(())
    }
    /// Why the footage ended with no game: no board, or not the one asked for.
    fn no_board(&self, source: &str, frames: u64) -> Result<RecorderError, RecorderError>;
}

/// Records a game, with a server's hooks.
pub fn record_with(options: &RecordOptions, hooks: Hooks) -> Result<Summary, RecorderError> {
    let Hooks {
        on_line,
        on_event,
        actions,
        stop,
    } = hooks;
    let started = Instant::now();
    if !(options.rate > 0.0 && options.rate <= 120.0) {
        return Err(RecorderError::BadOptions(format!(
            "--rate {}: expected 0 to 120 looks per second",
            options.rate
        )));
    }
    match options.game {
        RecordedGame::Go => check_go_options(options)?,
        RecordedGame::Eight(game) => check_eight_options(options, game)?,
    }
    let calibration = options
        .calibration
        .as_deref()
        .map(Calibration::load)
        .transpose()
        .map_err(|e| RecorderError::BadOptions(e.to_string()))?;

    let mut source = source::open(&options.source, options.fps)?;
    let kind = source.kind();
    let stills = kind == SourceKind::Stills;
    let fps = source.fps();
    let total_frames = source.frame_count();
    let mut tracker_options = TrackerOptions::default();
    if stills {
        tracker_options.settle_frames = 1;
        tracker_options.settle_seconds = 0.0;
        tracker_options.stills = true;
    } else if let Some(fps) = fps {
        // At least three looks, over at least a fifth of a second.
        let looks = options.rate.min(fps);
        tracker_options.settle_frames = 3;
        tracker_options.settle_seconds = (2.0 / looks).max(0.2);
    }

    let mut game: Box<dyn Recording> = match options.game {
        RecordedGame::Go => Box::new(GoRecording::open(
            options,
            kind,
            source.describe(),
            tracker_options,
        )?),
        RecordedGame::Eight(game) => Box::new(eight::EightRecording::open(
            options,
            game,
            kind,
            source.describe(),
            tracker_options,
        )?),
    };
    game.set_on_event(on_event);
    if let Some(time) = game.resume_time() {
        source.seek(time)?;
    }

    // Frames are decoded on their own thread; the channel is short so memory stays flat.
    let (sender, receiver) = mpsc::sync_channel::<Result<Frame, SourceError>>(2);
    let rate = options.rate;
    let reader_thread = std::thread::spawn(move || {
        let mut next_due = f64::NEG_INFINITY;
        // The time of the frame about to be grabbed, known from the one before it.
        let mut upcoming = f64::NEG_INFINITY;
        let mut frames = 0u64;
        loop {
            // Which frame is due is known only after it is grabbed, so every frame is
            // grabbed and only the due ones converted: the decode is unavoidable in a
            // compressed stream, the conversion is not.
            let decode = stills || fps.is_none_or(|f| f <= rate) || upcoming + 1e-9 >= next_due;
            match source.next_frame(decode) {
                Ok(Some(frame)) => {
                    frames += 1;
                    upcoming = frame.time + 1.0 / fps.unwrap_or(rate);
                    if decode {
                        next_due = frame.time + 1.0 / rate - 0.5 / fps.unwrap_or(rate);
                        if sender.send(Ok(frame)).is_err() {
                            return frames;
                        }
                    }
                }
                Ok(None) => return frames,
                Err(error) => {
                    let _ = sender.send(Err(error));
                    return frames;
                }
            }
        }
    });

    let mut lens = LensCorrection::new(
        calibration.as_ref(),
        match options.game {
            RecordedGame::Go => BoardKind::Go(options.size),
            RecordedGame::Eight(_) => BoardKind::Eight,
        },
    );
    let mut summary = Summary::default();
    let mut progress = Progress::new(options.progress, total_frames, fps);
    let mut last_time = 0.0;
    let mut broken = None;
    let mut last_frame = None;
    let mut stopped = false;
    for received in receiver {
        if stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
            stopped = true;
            break;
        }
        if let Some(actions) = &actions {
            game.take_actions(actions, on_line)?;
        }
        let mut frame = match received {
            Ok(frame) => frame,
            Err(error) => {
                broken = Some(error);
                break;
            }
        };
        game.first_frame(&frame.image);
        let (straightened, settled) = lens.apply(&frame.image, frame.time, stills)?;
        if let Some(settled) = settled {
            game.note(frame.time, "lens", &settled.message)?;
            if settled.tell {
                on_line(&settled.message);
            }
        }
        match straightened {
            Straightened::AsTaken => {}
            Straightened::Look(image) => frame.image = image,
            Straightened::Skip => continue,
        }
        if let Some(calibration) = &calibration
            && summary.analysed == 0
        {
            game.give_geometry(calibration, frame.image.cols(), frame.image.rows());
        }
        summary.analysed += 1;
        last_time = frame.time;
        if let Some(note) = &frame.note {
            game.note(frame.time, "source", note)?;
        }
        game.look(&frame, on_line)?;
        let (moves, flags, last_line) = game.progress();
        progress.show(frame.index, frame.time, moves, flags, last_line);
        last_frame = Some(frame);
    }
    if let Some(last) = last_frame.filter(|_| !stopped) {
        game.end_of_source(&last, on_line)?;
    }
    if let Some(actions) = &actions {
        game.take_actions(actions, on_line)?;
    }
    let frames = reader_thread.join().unwrap_or(0);
    progress.finish();
    summary.frames = frames;
    summary.source_seconds = last_time;
    let broken_text = broken.as_ref().map(ToString::to_string);
    if !game.started() {
        game.finish(last_time, broken_text.as_deref(), &mut summary)?;
        if let Some(error) = broken {
            return Err(RecorderError::Source(error));
        }
        return Err(game.no_board(&options.source, frames)?);
    }
    game.finish(last_time, broken_text.as_deref(), &mut summary)?;
    summary.broken = broken_text;
    summary.wall_seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn check_go_options(options: &RecordOptions) -> Result<(), RecorderError> {
    if options.fen.is_some() {
        return Err(RecorderError::BadOptions(
            "--fen is for Mak-hos and Makruk: a Go game in progress is joined from the board"
                .into(),
        ));
    }
    // The locator can fit a smaller grid inside a larger one, so only the sizes Go is
    // played on (TGA 2, WIKI) are accepted.
    if let Some(size) = options.size
        && !crate::geometry::locate::GO_SIZES.contains(&size)
    {
        return Err(RecorderError::BadOptions(format!(
            "--size {size}: Go is recorded on 9, 13 or 19 lines"
        )));
    }
    if !(0.0..=50.0).contains(&options.komi) {
        return Err(RecorderError::BadOptions(format!(
            "--komi {}: expected 0 to 50",
            options.komi
        )));
    }
    Ok(())
}

/// The options that only mean something on a Go board are refused for an 8×8 one.
fn check_eight_options(options: &RecordOptions, game: EightGame) -> Result<(), RecorderError> {
    let defaults = RecordOptions::new("", "");
    let mut refused = Vec::new();
    if options.size.is_some() {
        refused.push("--size");
    }
    if options.handicap != defaults.handicap {
        refused.push("--handicap");
    }
    if options.komi != defaults.komi {
        refused.push("--komi");
    }
    if options.passes.is_some() {
        refused.push("--passes");
    }
    if options.reader != defaults.reader {
        refused.push("--reader");
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(RecorderError::BadOptions(format!(
        "{} {} for Go only: a {} board is 8×8, found by itself and read by its squares' colours",
        refused.join(", "),
        if refused.len() == 1 { "is" } else { "are" },
        match game {
            EightGame::Makhos => "Mak-hos",
            EightGame::Makruk => "Makruk",
        }
    )))
}

/// A Go recording: the Go tracker and the Go session, with the operator's passes.
struct GoRecording {
    session: Session,
    tracker: Tracker,
    passes: Vec<PassEntry>,
    next_pass: usize,
    asked_size: Option<usize>,
    /// Kept to say what was in view when no board of the asked size was found.
    first_image: Option<Mat>,
    /// A frame-by-frame account on stderr, for whoever tunes the tracker.
    trace: bool,
}

impl GoRecording {
    fn open(
        options: &RecordOptions,
        kind: SourceKind,
        description: String,
        tracker_options: TrackerOptions,
    ) -> Result<GoRecording, RecorderError> {
        let passes = match &options.passes {
            Some(path) => read_passes(path)?,
            None => Vec::new(),
        };
        let (reader, reader_note) =
            Reader::load(options.reader).map_err(|e| RecorderError::Model(format!("{e:#}")))?;
        let session = Session::open(options, kind, description, reader_note)?;
        let mut tracker = Tracker::new(
            TrackerOptions {
                size: options.size.or(session.size),
                ..tracker_options
            },
            reader,
        );
        if let Some(inference) = &session.inference {
            tracker.assume_settled(inference.board().clone());
        }
        let next_pass = passes
            .iter()
            .position(|p| session.resume_time.is_none_or(|t| p.time > t))
            .unwrap_or(passes.len());
        Ok(GoRecording {
            session,
            tracker,
            passes,
            next_pass,
            asked_size: options.size,
            first_image: None,
            trace: std::env::var_os("KRADAN_TRACE").is_some(),
        })
    }
}

impl Recording for GoRecording {
    fn set_on_event(&mut self, on_event: Option<EventHook>) {
        self.session.on_event = on_event;
        self.session.publish_last();
    }

    fn resume_time(&self) -> Option<f64> {
        self.session.resume_time
    }

    fn started(&self) -> bool {
        self.session.inference.is_some()
    }

    fn progress(&self) -> (usize, usize, &str) {
        (
            self.session.moves,
            self.session.flags,
            &self.session.last_line,
        )
    }

    fn write(&mut self, time: f64, event: Event) -> Result<(), RecorderError> {
        self.session.write(time, event)
    }

    fn take_actions(
        &mut self,
        actions: &mpsc::Receiver<ActionRequest>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        self.session.take_actions(actions, on_line)
    }

    fn give_geometry(&mut self, calibration: &Calibration, width: i32, height: i32) {
        if let Some(geometry) = calibration.geometry(width, height, self.asked_size) {
            self.tracker.give_geometry(geometry);
        }
    }

    fn first_frame(&mut self, image: &Mat) {
        // Kept to tell "no board" from "a board of another size" at the end.
        if self.first_image.is_none() && self.asked_size.is_some() {
            self.first_image = Some(image.clone());
        }
    }

    fn look(&mut self, frame: &Frame, on_line: &mut dyn FnMut(&str)) -> Result<(), RecorderError> {
        let session = &mut self.session;
        let tracker = &mut self.tracker;
        session.now = frame.time;
        while self.next_pass < self.passes.len() && self.passes[self.next_pass].time <= frame.time {
            let pass = self.passes[self.next_pass];
            self.next_pass += 1;
            if session.inference.is_some() {
                session.pass(&pass, on_line)?;
            }
        }
        let report = tracker.analyse(&frame.image, frame.time, frame.index)?;
        if self.trace {
            eprintln!(
                "{:8.2} {:?} reach={} settled={} reading_diff={}",
                frame.time,
                report.view,
                report.reach,
                report.settled.as_ref().map_or(0, |s| s.frames),
                match (&report.reading, session.inference.as_ref()) {
                    (Some(r), Some(i)) => i
                        .board()
                        .differences(r)
                        .iter()
                        .map(|&[row, col]| format!(
                            "{}{}",
                            Point::new(row as u8, col as u8).to_sgf(),
                            r.get(row, col).map_or('.', |c| c.letter())
                        ))
                        .collect::<Vec<_>>()
                        .join(","),
                    _ => "-".into(),
                }
            );
        }
        for event in &report.events {
            session.track_event(event, frame, tracker, on_line)?;
        }
        if let Some(size) = tracker.size()
            && session.inference.is_none()
        {
            if let Some(asked) = self.asked_size
                && asked != size
            {
                return Err(RecorderError::WrongSize { found: size, asked });
            }
            session.start_game(size)?;
        }
        if !report.events.is_empty() {
            session.hands.lost_sight();
        }
        if report.reach {
            session.hands.reach();
        }
        match report.view {
            View::Moving { .. } | View::Covered { .. } => session.hands.over(frame.time),
            View::NoBoard => session.hands.lost_sight(),
            // An arm lingering at the edge of a still view is the hand still there: it
            // may place its stone only now.
            View::Clear if report.arm => session.hands.over(frame.time),
            View::Clear => {}
        }
        if let Some(settled) = &report.settled {
            session.settled(settled, report.reading.as_ref(), frame, tracker, on_line)?;
            if let Some(inference) = &session.inference {
                tracker.believe(inference.board().clone());
            }
        }
        Ok(())
    }

    fn final_position(&self, summary: &mut Summary) -> Option<Event> {
        self.session.final_position(summary)
    }

    fn no_board(&self, source: &str, frames: u64) -> Result<RecorderError, RecorderError> {
        // Asked for one size, was another in view?
        if let (Some(asked), Some(image)) = (self.asked_size, &self.first_image)
            && let Some(found) = crate::geometry::locate::locate(image, None)?.geometry
            && found.size != asked
        {
            return Ok(RecorderError::WrongSize {
                found: found.size,
                asked,
            });
        }
        Ok(RecorderError::NoBoard {
            input: source.to_string(),
            frames,
        })
    }
}

/// What `kradan score` decided.
#[derive(Clone, Debug)]
pub struct Scored {
    pub result: String,
    pub score: scoring::Score,
}

/// Counts a recorded game (TGA 13) with the stones the operator marks dead, and writes
/// the result into the record: a `note` event in the chain and `RE` in game.sgf.
pub fn score(dir: &Path, dead: &[Point], counting: Counting) -> Result<Scored, RecorderError> {
    let mut session = Session::reopen(dir, "the operator marks dead stones and counts")?;
    let scored = session.count(dead, counting, "operator")?;
    session.finish_quietly()?;
    Ok(scored)
}

fn is_note(event: &Event, note: &str) -> bool {
    event.kind == Kind::Note && event.detail.get("note").and_then(Value::as_str) == Some(note)
}

/// How many times a hand came over the board: a hand lifting for a frame while it
/// places a stone is still the same visit.
#[derive(Clone, Copy, Debug, Default)]
struct Hands {
    visits: usize,
    /// The source time a hand was last over the board.
    last: Option<f64>,
    /// Something reached across the board's edge (or the edge was out of sight) since
    /// the count began: a hand comes from a player's side, where a stone knocked by
    /// accident moves with nothing crossing the edge.
    reached: bool,
    /// When a square's middle last changed between two looks with no hand counted for it
    /// (an 8×8 piece knocked to the next square): motion, though no visit.
    stirred: Option<f64>,
}

impl Hands {
    /// A hand (or anything moving) is over the board at `time`.
    fn over(&mut self, time: f64) {
        if self.visits == 0 || self.last.is_none_or(|last| time - last > HAND_AWAY) {
            self.visits += 1;
        }
        self.last = Some(time);
    }

    /// Something reached across the board's edge. The arm may cross it on a frame with
    /// too little motion over the points to count as a hand over the board (a slow
    /// reach), so the two are gathered apart.
    fn reach(&mut self) {
        self.reached = true;
    }

    /// Whether a hand was over the board within [`HAND_AWAY`] of `now`.
    fn recent(&self, now: f64) -> bool {
        self.last.is_some_and(|last| now - last <= HAND_AWAY)
    }

    /// The hands that came since the count began: none when only something without an
    /// arm moved.
    fn count(&self) -> usize {
        if self.reached { self.visits } else { 0 }
    }

    /// Something changed inside the squares from one look to the next at `time`, with
    /// something reaching across the board's edge on that look (`reach`) or not. A stir
    /// under a reach is the arm's, counted as a hand: kept past the next settled view
    /// ([`Hands::restart_unchanged`]) it made the still sightings after the hand look
    /// knocked (Makruk 310352: two figures the reader lost were flagged `removed`
    /// instead of doubted). Only a stir with nothing reaching is a piece knocked.
    fn stir(&mut self, time: f64, reach: bool) {
        if !reach {
            self.stirred = Some(time);
        }
    }

    /// Whether anything moved over the board since the count began, arm or none.
    fn moved(&self) -> bool {
        self.visits > 0 || self.stirred.is_some()
    }

    /// A position was acted on (or nothing changed): count afresh.
    fn restart(&mut self) {
        self.visits = 0;
        self.reached = false;
        self.stirred = None;
    }

    /// A settled view showed the board as it was at `now`: count afresh, but keep a stir
    /// of the last [`STIR_LAG`], which the voted reading may not show yet (Makruk 310287:
    /// a figure knocked 0.07 s after a move settled read on its new square 0.4 s later).
    fn restart_unchanged(&mut self, now: f64) {
        // Nothing was acted on, so no stir belongs to a sighting's own hand.
        self.restart_acted(f64::NEG_INFINITY, now);
    }

    /// A position was acted on from a sighting settled since `since`, at `now`: count
    /// afresh, but keep a stir that came after `since` (within [`STIR_LAG`]). The
    /// sighting's own hand had left before it settled, so that stir is something else:
    /// on held-out Mak-hos 300321 a man knocked 0.26 s after White's move settled, before
    /// the move had stood long enough to be acted on, and the knock was then doubted as
    /// the reader's, nothing having moved since.
    fn restart_acted(&mut self, since: f64, now: f64) {
        let later = self.stirred.filter(|&at| at > since && now - at < STIR_LAG);
        self.restart();
        self.stirred = later;
    }

    /// The board was out of sight or found again (a bump covers the board as a hand
    /// does): the next hand is another visit, however soon it comes.
    fn lost_sight(&mut self) {
        self.last = None;
    }
}

/// Everything written, and the game state it is written from.
struct Session {
    log: EventLog,
    out: PathBuf,
    sgf: SgfView,
    inference: Option<GoInference>,
    size: Option<usize>,
    handicap: usize,
    first: Option<Color>,
    komi: f64,
    live: bool,
    /// Every frame is a still taken after a move (a folder read without --fps).
    stills: bool,
    /// The hands over the board since the last position acted on.
    hands: Hands,
    /// The frame of the last position acted on (reduced for evidence) and its factor.
    before: Option<(Mat, f64)>,
    resume_time: Option<f64>,
    moves: usize,
    flags: usize,
    /// The flag ids of this game's open flags, and their event seq (to resolve them).
    flag_seqs: Vec<(u32, u64)>,
    last_line: String,
    /// Whether the first settled position was looked at for a game already in progress.
    joined_checked: bool,
    /// A reading that could be a game in progress was too unsure to join, and said so.
    join_unsure_noted: bool,
    /// Flags a referee or the board closed.
    closed_flags: BTreeSet<u32>,
    /// The source time of the frame being looked at, for events without a frame of their own.
    now: f64,
    /// Who takes the action being written, named in each of its events.
    acting: Option<String>,
    /// Points the settled views have read otherwise than the position acted on.
    unexplained: Unexplained,
    on_event: Option<EventHook>,
}

impl Session {
    fn open(
        options: &RecordOptions,
        kind: SourceKind,
        description: String,
        reader_note: Option<String>,
    ) -> Result<Session, RecorderError> {
        let mut detail = Map::new();
        detail.insert("game".into(), "go".into());
        detail.insert("source".into(), options.source.clone().into());
        detail.insert("source_description".into(), description.into());
        detail.insert("size".into(), json!(options.size));
        detail.insert("handicap".into(), options.handicap.into());
        detail.insert("komi".into(), options.komi.into());
        detail.insert(
            "first".into(),
            json!(options.first.map(|c| color_name(c).to_string())),
        );
        if let Some(note) = reader_note {
            detail.insert("reader_note".into(), note.into());
        }
        let mut session = Session {
            log: if options.resume {
                EventLog::resume(&options.out, detail.clone())?.0
            } else {
                EventLog::create(&options.out, detail)?
            },
            out: options.out.clone(),
            sgf: SgfView::new(options.komi),
            inference: None,
            size: options.size,
            handicap: options.handicap,
            first: options.first,
            komi: options.komi,
            live: matches!(kind, SourceKind::Stream | SourceKind::Camera),
            stills: kind == SourceKind::Stills,
            hands: Hands::default(),
            before: None,
            resume_time: None,
            moves: 0,
            flags: 0,
            flag_seqs: Vec::new(),
            last_line: String::new(),
            joined_checked: options.resume,
            join_unsure_noted: false,
            closed_flags: BTreeSet::new(),
            now: 0.0,
            acting: None,
            unexplained: Unexplained::default(),
            on_event: None,
        };
        if options.resume {
            session.restore(options.size)?;
        }
        Ok(session)
    }

    /// Continues a finished record for an operator's or referee's action.
    fn reopen(dir: &Path, why: &str) -> Result<Session, RecorderError> {
        let options = RecordOptions {
            resume: true,
            ..RecordOptions::new(dir.display().to_string(), dir)
        };
        let session = Session::open(&options, SourceKind::VideoFile, why.into(), None)?;
        if session.inference.is_none() {
            return Err(RecorderError::BadOptions(format!(
                "{}: the record holds no game yet",
                dir.display()
            )));
        }
        Ok(session)
    }

    /// Rebuilds the game from the events of the record being continued.
    fn restore(&mut self, asked_size: Option<usize>) -> Result<(), RecorderError> {
        let events = self.read_events()?;
        let start = events.iter().find(|e| e.kind == Kind::SessionStart);
        if let Some(start) = start {
            let size = start.detail.get("size").and_then(Value::as_u64);
            self.size = asked_size.or(size.map(|s| s as usize));
            self.handicap = start
                .detail
                .get("handicap")
                .and_then(Value::as_u64)
                .map_or(self.handicap, |h| h as usize);
            self.komi = start
                .detail
                .get("komi")
                .and_then(Value::as_f64)
                .unwrap_or(self.komi);
            self.sgf = SgfView::new(self.komi);
        }
        let game_start = events.iter().rev().find(|e| {
            e.kind == Kind::Note
                && e.detail.get("note").and_then(Value::as_str) == Some("game-start")
        });
        let Some(game_start) = game_start else {
            return Ok(());
        };
        let size = game_start
            .detail
            .get("size")
            .and_then(Value::as_u64)
            .unwrap_or(19) as usize;
        let first = game_start
            .detail
            .get("first")
            .and_then(Value::as_str)
            .and_then(color_from_name);
        let mut position = initial_position(size, self.handicap, first)?;
        self.sgf.start(size, self.handicap, &position);
        let mut board = position.board().to_occupancy();
        let mut next_flag_id = 1;
        let corrections = Corrections::from_events(&events);
        for event in &events {
            if let Some(time) = event.video_time {
                self.resume_time = Some(self.resume_time.map_or(time, |t: f64| t.max(time)));
            }
            if let Some(rows) = event.detail.get("board").and_then(Value::as_array) {
                let rows: Vec<&str> = rows.iter().filter_map(Value::as_str).collect();
                if let Ok(seen) = crate::games::Occupancy::from_text_rows(&rows) {
                    board = seen;
                }
            }
            if event.kind == Kind::Note
                && event.detail.get("note").and_then(Value::as_str) == Some("joined-in-progress")
                && let Some(rows) = event.detail.get("board").and_then(Value::as_array)
            {
                let rows: Vec<&str> = rows.iter().filter_map(Value::as_str).collect();
                let to_move = event
                    .detail
                    .get("first")
                    .and_then(Value::as_str)
                    .and_then(color_from_name)
                    .unwrap_or(Color::Black);
                if let Ok(seen) = crate::games::Occupancy::from_text_rows(&rows)
                    && let Ok(joined) = Position::from_occupancy(&seen, to_move)
                {
                    position = joined;
                    self.sgf.start(size, 0, &position);
                }
            }
            match event.kind {
                Kind::Move => {
                    let Some((color, mv)) = corrections.effective_move(event) else {
                        continue;
                    };
                    let lost_turn = event.detail.get("lost_turn").and_then(Value::as_bool);
                    let _ = position.play(
                        color,
                        if lost_turn == Some(true) {
                            Move::Pass
                        } else {
                            mv
                        },
                    );
                    self.sgf.add_move(color, mv, event.video_time, None);
                    self.moves += 1;
                }
                Kind::Flag => {
                    self.flags += 1;
                    if let Some(id) = event.detail.get("flag_id").and_then(Value::as_u64) {
                        next_flag_id = next_flag_id.max(id as u32 + 1);
                        self.flag_seqs.push((id as u32, event.seq));
                    }
                    if let Some(text) = event.detail.get("message").and_then(Value::as_str) {
                        self.sgf.add_comment(text);
                    }
                }
                Kind::Resolved => {
                    if let Some(id) = event.detail.get("flag_id").and_then(Value::as_u64) {
                        self.closed_flags.insert(id as u32);
                    }
                }
                _ => {}
            }
        }
        self.inference = Some(GoInference::resume(
            position,
            board,
            next_flag_id,
            InferOptions {
                stills: self.stills,
                ..InferOptions::default()
            },
        ));
        self.size = Some(size);
        self.write_sgf()?;
        Ok(())
    }

    fn start_game(&mut self, size: usize) -> Result<(), RecorderError> {
        let position = initial_position(size, self.handicap, self.first)?;
        self.sgf.start(size, self.handicap, &position);
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "game-start")
            .with_detail("size", size)
            .with_detail("first", color_name(position.to_move()))
            .with_detail("handicap", self.handicap);
        event.detail.insert(
            "board".into(),
            json!(position.board().to_occupancy().to_text_rows()),
        );
        self.append(event)?;
        let infer = InferOptions {
            stills: self.stills,
            ..InferOptions::default()
        };
        self.inference = Some(GoInference::new(position, infer));
        self.size = Some(size);
        self.write_sgf()
    }

    /// A camera started on a game already under way sees stones at once: the first
    /// settled position is then where the record starts (SGF setup stones), not a burst
    /// of moves to flag. One black stone alone is still read as the first move. Joining
    /// builds the whole record on one reading, so a reading with a point the vote is
    /// unsure of is not joined: the next settled views are looked at instead, and nothing
    /// is recorded meanwhile. True once decided (joined, or nothing to join).
    fn join_game_in_progress(
        &mut self,
        settled: &Settled,
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<bool, RecorderError> {
        let Some(inference) = self.inference.as_ref() else {
            return Ok(true);
        };
        if self.moves > 0 || self.handicap > 0 || inference.board() == &settled.occupancy {
            return Ok(true);
        }
        let board = &settled.occupancy;
        let count = |color| {
            (0..board.height())
                .flat_map(|r| (0..board.width()).map(move |c| (r, c)))
                .filter(|&(r, c)| board.get(r, c) == Some(color))
                .count()
        };
        let (black, white) = (count(Color::Black), count(Color::White));
        if black + white <= 1 {
            return Ok(true);
        }
        let unsure = unsure_points(settled);
        if !unsure.is_empty() {
            if !self.join_unsure_noted {
                self.join_unsure_noted = true;
                let message = format!(
                    "a game in progress may be on the board, but {} point(s) read too unsure to join it from (under {:.0} % for any one reading): {}; waiting for a surer view",
                    unsure.len(),
                    100.0 * GO_JOIN_CONFIDENCE,
                    unsure
                        .iter()
                        .map(|&[row, col]| Point::new(row as u8, col as u8).to_sgf())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                on_line(&message);
                let marks: Vec<([usize; 2], Mark)> =
                    unsure.iter().map(|&p| (p, Mark::Flagged)).collect();
                let frame_evidence = evidence::write_frame(
                    &self.log,
                    &frame.image,
                    tracker.geometry().as_ref(),
                    &marks,
                    &message,
                    "board",
                )?;
                let mut event = Event::new(Kind::Note)
                    .with_points(unsure.iter().copied())
                    .with_confidence(f64::from(settled.confidence_at(&unsure)))
                    .with_detail("note", "join-unsure")
                    .with_detail("message", message.as_str())
                    .with_evidence(frame_evidence);
                event
                    .detail
                    .insert("board".into(), json!(board.to_text_rows()));
                event.video_time = self.video_time(frame.time);
                self.append(event)?;
            }
            return Ok(false);
        }
        // Who is to move follows from the counts when each side has played in turn.
        let to_move = self.first.unwrap_or(if black > white {
            Color::White
        } else {
            Color::Black
        });
        let position =
            Position::from_occupancy(board, to_move).map_err(RecorderError::BadOptions)?;
        self.sgf.start(board.width(), 0, &position);
        self.sgf.add_comment(&format!(
            "joined a game in progress at t={:.2}s: {black} black and {white} white stones on the board",
            settled.since
        ));
        let message = format!(
            "joined a game in progress: {black} black and {white} white stones already on the board; {to_move:?} to move (by the counts)"
        );
        on_line(&message);
        let (small, factor) = evidence::reduce(&frame.image)?;
        let bytes = evidence::annotate(&small, factor, tracker.geometry().as_ref(), &[], &message)?;
        let name = format!("{:06}-joined.jpg", self.log.next_seq());
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "joined-in-progress")
            .with_detail("first", color_name(to_move))
            .with_detail("message", message.as_str())
            .with_evidence(self.log.write_evidence(&name, &bytes)?);
        event
            .detail
            .insert("board".into(), json!(board.to_text_rows()));
        event.video_time = self.video_time(settled.since);
        self.append(event)?;
        self.inference = Some(GoInference::new(
            position,
            InferOptions {
                stills: self.stills,
                ..InferOptions::default()
            },
        ));
        self.before = Some((small, factor));
        self.write_sgf()?;
        Ok(true)
    }

    /// Appends to the chain (synced), then tells the server.
    fn append(&mut self, mut event: Event) -> Result<(), RecorderError> {
        if let Some(by) = &self.acting {
            event.detail.insert("by".into(), by.as_str().into());
        }
        let written = self.log.append(event)?;
        if let Some(on_event) = self.on_event.as_mut() {
            on_event(written);
        }
        Ok(())
    }

    /// Tells the server of the event the log itself wrote on opening (session start or resume).
    fn publish_last(&mut self) {
        if let (Some(on_event), Some(last)) = (self.on_event.as_mut(), self.log.last()) {
            on_event(last);
        }
    }

    /// Closes a session that only took an action.
    fn finish_quietly(&mut self) -> Result<(), RecorderError> {
        self.append(Event::new(Kind::SessionEnd).with_detail("moves", self.moves))
    }

    fn read_events(&self) -> Result<Vec<Event>, RecorderError> {
        read_chain(&self.out)
    }

    /// Counts the game (TGA 13) with the stones marked dead and writes the result into the
    /// record: a `note` event in the chain and `RE` in game.sgf.
    fn count(
        &mut self,
        dead: &[Point],
        counting: Counting,
        by: &str,
    ) -> Result<Scored, RecorderError> {
        let inference = self.inference.as_ref().expect("a game to count");
        let position = inference.position().clone();
        for point in dead {
            if !position.board().contains(*point) || position.board().get(*point).is_none() {
                return Err(RecorderError::BadOptions(format!(
                    "dead stone {}: no stone stands there in the recorded position",
                    point.to_sgf()
                )));
            }
        }
        let score = scoring::score(&position, dead, self.komi, counting);
        let result = score.result();
        self.sgf.set_result(&result);
        let event = Event::new(Kind::Note)
            .with_points(dead.iter().map(|p| cell(*p)))
            .with_detail("note", "score")
            .with_detail("result", result.as_str())
            .with_detail(
                "counting",
                serde_json::to_value(counting).unwrap_or_default(),
            )
            .with_detail("dead", dead.iter().map(|p| p.to_sgf()).collect::<Vec<_>>())
            .with_detail("by", by)
            .with_detail("score", serde_json::to_value(&score).unwrap_or_default())
            .with_detail(
                "message",
                format!("counted with the stones marked dead (TGA 13): {result}"),
            );
        self.append(event)?;
        self.write_sgf()?;
        Ok(Scored { result, score })
    }

    fn video_time(&self, time: f64) -> Option<f64> {
        (!self.live).then_some(time)
    }

    fn write(&mut self, time: f64, mut event: Event) -> Result<(), RecorderError> {
        event.video_time = self.video_time(time);
        self.append(event)
    }

    fn track_event(
        &mut self,
        event: &TrackEvent,
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        let (note, message) = match event {
            TrackEvent::Found { corners, how } => (
                "board-found",
                format!(
                    "{}×{} board found by {how}; corners {}",
                    tracker.size().unwrap_or(0),
                    tracker.size().unwrap_or(0),
                    format_corners(corners)
                ),
            ),
            TrackEvent::Lost { reason } => ("board-lost", format!("board lost: {reason}")),
            TrackEvent::Relocated {
                corners,
                quarter_turns,
                agreement,
                shift_pixels,
            } => (
                "relocated",
                format!(
                    "the board moved in the picture by up to {shift_pixels:.0} px (camera or board bumped) and was found again; \
                     turned {quarter_turns} quarter(s) to match the recorded position, which {:.1} % of points agree with; corners {}",
                    agreement * 100.0,
                    format_corners(corners)
                ),
            ),
            // The reference view follows the light on its own; nothing for the record.
            TrackEvent::Renewed => return Ok(()),
        };
        on_line(&message);
        let mut record = Event::new(Kind::Note)
            .with_detail("note", note)
            .with_detail("message", message.as_str());
        record.video_time = self.video_time(frame.time);
        if matches!(
            event,
            TrackEvent::Found { .. } | TrackEvent::Relocated { .. }
        ) {
            record = record.with_evidence(evidence::write_frame(
                &self.log,
                &frame.image,
                tracker.geometry().as_ref(),
                &[],
                &message,
                "board",
            )?);
        }
        self.append(record)?;
        Ok(())
    }

    fn pass(
        &mut self,
        pass: &PassEntry,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        let inference = self.inference.as_mut().expect("game started");
        let outcomes = inference.pass(pass.color);
        self.write_outcomes(&outcomes, pass.time, 1.0, None, None, on_line)
    }

    /// `reading` is this frame's own, which the settled view lags behind.
    fn settled(
        &mut self,
        settled: &Settled,
        reading: Option<&Occupancy>,
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        self.act_on(settled, reading, frame, tracker, on_line)?;
        // Before a game in progress is joined nothing is recorded for a reading to differ from.
        if !self.joined_checked {
            return Ok(());
        }
        self.report_unexplained(settled, frame, tracker, on_line)
    }

    /// Hands a settled position to the rules stage and writes what it decided.
    fn act_on(
        &mut self,
        settled: &Settled,
        reading: Option<&Occupancy>,
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        if !self.joined_checked {
            self.joined_checked = self.join_game_in_progress(settled, frame, tracker, on_line)?;
            if !self.joined_checked {
                return Ok(());
            }
        }
        if !settled.slid.is_empty()
            && let Some(inference) = self.inference.as_mut()
        {
            // Pushed off their points with their points still read the same: no change
            // of the position shows it, so it is raised here or not at all.
            let outcomes = inference.pushed(&settled.slid);
            self.write_seen_by_picture(&outcomes, settled, &settled.slid, frame, tracker, on_line)?;
        }
        let Some(inference) = self.inference.as_mut() else {
            return Ok(());
        };
        if &settled.occupancy == inference.board() {
            // Nothing new: whatever the hand did, it left the board as it was. Unless it
            // is still there, or the reading already shows what it did: a view settles
            // on clear frames while an arm rests at the edge, and the stone it then puts
            // down is its visit's (held-out Go 100485:
            // White's edge stone came 0.3 s after the unchanged view settled, was taken
            // as a change no hand made, waited, and was merged with Black's reply).
            let reading_changed = reading.is_some_and(|reading| reading != inference.board());
            // A hand's visit that changed one point's picture as a stone's coming does,
            // with the reader seeing nothing new: the stone it missed (or had misread
            // there before it came).
            if self.hands.count() > 0
                && settled.slid.is_empty()
                && let [point] = settled.stirred.as_slice()
            {
                let outcomes = inference.stone_came_unseen(
                    *point,
                    &Seen {
                        occupancy: &settled.occupancy,
                        confidence: &settled.confidence,
                        since: settled.since,
                        now: frame.time,
                        hands: self.hands.count(),
                        between: &settled.between,
                        stirred: &settled.stirred,
                    },
                );
                if !outcomes.is_empty() {
                    self.write_seen_by_picture(
                        &outcomes,
                        settled,
                        &[*point],
                        frame,
                        tracker,
                        on_line,
                    )?;
                    self.hands.restart();
                    return Ok(());
                }
            }
            if !self.hands.recent(frame.time) && !reading_changed {
                self.hands.restart();
            }
            if self.before.is_none() {
                self.before = Some(evidence::reduce(&frame.image)?);
            }
            return Ok(());
        }
        let before_board = inference.board().clone();
        let outcomes = inference.observe(&Seen {
            occupancy: &settled.occupancy,
            confidence: &settled.confidence,
            since: settled.since,
            now: frame.time,
            hands: self.hands.count(),
            between: &settled.between,
            stirred: &settled.stirred,
        });
        if std::env::var_os("KRADAN_TRACE").is_some() {
            // What the rules stage was shown and made of it, for whoever tunes it.
            let size = settled.occupancy.width();
            let changes: Vec<String> = before_board
                .differences(&settled.occupancy)
                .iter()
                .map(|&[row, col]| {
                    format!(
                        "{}{}:{:.2}",
                        Point::new(row as u8, col as u8).to_sgf(),
                        settled.occupancy.get(row, col).map_or('.', |c| c.letter()),
                        settled.confidence[row * size + col]
                    )
                })
                .collect();
            eprintln!(
                "{:8.2} observe since={:.2} hand={} changes={} stirred={:?} -> {:?}",
                frame.time,
                settled.since,
                self.hands.count(),
                changes.join(","),
                settled.stirred,
                outcomes
                    .iter()
                    .map(|o| match o {
                        Outcome::Move { number, mv, .. } => format!("move {number} {mv:?}"),
                        Outcome::Flag(flag) => kebab(flag.kind),
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<_>>()
            );
        }
        if inference.board() == &before_board {
            return Ok(());
        }
        // Acted on: the change is on disk with its frames before the next frame is read.
        let changed = before_board.differences(&settled.occupancy);
        let confidence = settled.confidence_at(&changed);
        let after = evidence::reduce(&frame.image)?;
        let geometry = tracker.geometry();
        let pictures = Some((after, geometry));
        self.write_outcomes(
            &outcomes,
            settled.since,
            f64::from(confidence),
            pictures,
            Some((&before_board, &settled.occupancy)),
            on_line,
        )?;
        self.hands.restart();
        Ok(())
    }

    /// Says when points have read otherwise than the position acted on, through every
    /// settled view for a while, with nothing decided about them: a note with the frame,
    /// the points marked, rather than silence until the board stands still long enough
    /// for the rules stage to flag it (or never).
    fn report_unexplained(
        &mut self,
        settled: &Settled,
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        let Some(inference) = self.inference.as_ref() else {
            return Ok(());
        };
        let acted = inference.board();
        let Some((points, began)) = self
            .unexplained
            .observe(acted, &settled.occupancy, frame.time)
        else {
            return Ok(());
        };
        let reads: Vec<String> = points
            .iter()
            .map(|&[row, col]| {
                format!(
                    "{} {} ({})",
                    Point::new(row as u8, col as u8).to_sgf(),
                    settled.occupancy.get(row, col).map_or("bare", color_name),
                    acted.get(row, col).map_or("bare", color_name)
                )
            })
            .collect();
        let message = format!(
            "{} point(s) have read otherwise than the recorded position for {:.1} s, and no \
             move explains it: {} (as read, recorded in brackets); check the board and the \
             camera",
            points.len(),
            frame.time - began,
            reads.join(", ")
        );
        on_line(&message);
        let marks: Vec<([usize; 2], Mark)> = points.iter().map(|&p| (p, Mark::Flagged)).collect();
        let frame_evidence = evidence::write_frame(
            &self.log,
            &frame.image,
            tracker.geometry().as_ref(),
            &marks,
            &format!("unexplained: {message}"),
            "board",
        )?;
        let mut event = Event::new(Kind::Note)
            .with_points(points.iter().copied())
            .with_confidence(f64::from(settled.confidence_at(&points)))
            .with_detail("note", "unexplained-reading")
            .with_detail("message", message.as_str())
            .with_detail("since", began)
            .with_evidence(frame_evidence);
        event.video_time = self.video_time(frame.time);
        self.sgf.add_comment(&format!("UNEXPLAINED: {message}"));
        self.last_line = message;
        self.append(event)?;
        self.write_sgf()
    }

    /// Writes one decision: its evidence pair, then its events, then the SGF.
    /// Writes what the rules stage decided from the tracker's pictures alone (`points`
    /// changed in picture, not in reading), with the frame as evidence.
    fn write_seen_by_picture(
        &mut self,
        outcomes: &[Outcome],
        settled: &Settled,
        points: &[[usize; 2]],
        frame: &Frame,
        tracker: &Tracker,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        if outcomes.is_empty() {
            return Ok(());
        }
        let confidence = f64::from(settled.confidence_at(points));
        let pictures = Some((evidence::reduce(&frame.image)?, tracker.geometry()));
        self.write_outcomes(outcomes, settled.since, confidence, pictures, None, on_line)
    }

    fn write_outcomes(
        &mut self,
        outcomes: &[Outcome],
        time: f64,
        confidence: f64,
        pictures: Option<((Mat, f64), Option<crate::geometry::BoardGeometry>)>,
        change: Option<(&crate::games::Occupancy, &crate::games::Occupancy)>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        if outcomes.is_empty() {
            // The board changed only where a known difference was already flagged.
            if let Some(((after, factor), _)) = pictures {
                self.before = Some((after, factor));
            }
            return Ok(());
        }
        let caption = outcomes
            .iter()
            .filter_map(|o| self.describe(o))
            .collect::<Vec<_>>()
            .join("; ");
        let mut evidence = Vec::new();
        if let Some(((after, factor), geometry)) = &pictures {
            let mut marks: Vec<([usize; 2], Mark)> = Vec::new();
            if let Some((before, now)) = change {
                for [row, col] in before.differences(now) {
                    let mark = if now.get(row, col).is_some() {
                        Mark::Placed
                    } else {
                        Mark::Lifted
                    };
                    marks.push(([row, col], mark));
                }
            }
            for outcome in outcomes {
                if let Outcome::Flag(flag) = outcome {
                    marks.extend(flag.points.iter().map(|p| (cell(*p), Mark::Flagged)));
                }
            }
            let seq = self.log.next_seq();
            if let Some((before, before_factor)) = &self.before {
                let bytes = evidence::annotate(
                    before,
                    *before_factor,
                    geometry.as_ref(),
                    &marks,
                    &format!("before: {caption}"),
                )?;
                evidence.push(
                    self.log
                        .write_evidence(&format!("{seq:06}-before.jpg"), &bytes)?,
                );
            }
            let bytes = evidence::annotate(
                after,
                *factor,
                geometry.as_ref(),
                &marks,
                &format!("after: {caption}"),
            )?;
            evidence.push(
                self.log
                    .write_evidence(&format!("{seq:06}-after.jpg"), &bytes)?,
            );
            self.before = Some((after.clone(), *factor));
        }
        let inference = self.inference.as_ref().expect("game started");
        let board_rows = inference.board().to_text_rows();
        let mut play_ended = false;
        let mut corrected = false;
        for outcome in outcomes {
            let mut event = match outcome {
                Outcome::Move {
                    number,
                    color,
                    mv,
                    captured,
                    lost_turn,
                } => {
                    self.moves += 1;
                    let mut event = Event::new(Kind::Move)
                        .with_move(*number as u32, *color, mv.to_sgf())
                        .with_confidence(confidence);
                    if let Move::Play(point) = mv {
                        event = event.with_points([cell(*point)]);
                    }
                    event = event.with_detail(
                        "captured",
                        captured.iter().map(|p| p.to_sgf()).collect::<Vec<_>>(),
                    );
                    if *lost_turn {
                        event = event.with_detail("lost_turn", true);
                    }
                    let comment = lost_turn
                        .then(|| "the turn is lost for the illegal stone (TGA 28-29)".to_string());
                    self.sgf
                        .add_move(*color, *mv, self.video_time(time), comment.as_deref());
                    event
                }
                Outcome::Flag(flag) => {
                    self.flags += 1;
                    let mut event = Event::new(Kind::Flag)
                        .with_points(flag.points.iter().map(|p| cell(*p)))
                        .cite(&flag.rules, &flag.penalties)
                        .with_confidence(confidence)
                        .with_detail("flag", kebab(flag.kind))
                        .with_detail("flag_id", flag.id)
                        .with_detail("message", flag.message.as_str());
                    event.move_number = flag.move_number.map(|n| n as u32);
                    event.color = flag.color;
                    let rules = flag
                        .rules
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(", ");
                    let penalties = flag
                        .penalties
                        .iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join(", ");
                    let citation = if rules.is_empty() {
                        "a note, no rule broken".to_string()
                    } else {
                        format!("{rules}; {penalties}")
                    };
                    self.sgf.add_comment(&format!(
                        "FLAG {}: {} ({citation})",
                        kebab(flag.kind),
                        flag.message
                    ));
                    self.flag_seqs.push((flag.id, self.log.next_seq()));
                    event
                }
                Outcome::Resolved { id, kind, points } => {
                    self.closed_flags.insert(*id);
                    let mut event = Event::new(Kind::Resolved)
                        .with_points(points.iter().map(|p| cell(*p)))
                        .with_detail("flag", kebab(*kind))
                        .with_detail("flag_id", *id)
                        .with_detail("by", "board")
                        .with_detail(
                            "message",
                            "the board shows the recorded position there again",
                        );
                    if let Some(&(_, seq)) = self.flag_seqs.iter().find(|(f, _)| f == id) {
                        event = event.with_detail("resolves", seq);
                    }
                    self.sgf.add_comment(&format!(
                        "resolved: {} put right on the board",
                        kebab(*kind)
                    ));
                    event
                }
                Outcome::Unsure { points, message } => {
                    self.sgf.add_comment(&format!("UNSURE: {message}"));
                    Event::new(Kind::Note)
                        .with_points(points.iter().map(|p| cell(*p)))
                        .with_confidence(confidence)
                        .with_detail("note", "unsure")
                        .with_detail("message", message.as_str())
                }
                Outcome::Replaced {
                    number,
                    color,
                    from,
                    to,
                } => {
                    corrected = true;
                    actions::correction(
                        Some(*to),
                        *number,
                        &format!(
                            "move {number} corrected: {} took the stone back from {} and \
                             played {}",
                            color_name(*color),
                            from.to_sgf(),
                            to.to_sgf()
                        ),
                    )
                    .with_confidence(confidence)
                }
                Outcome::PlayEnded => {
                    play_ended = true;
                    Event::new(Kind::Note)
                        .with_detail("note", "play-ended")
                        .with_detail("message", "two passes in a row: play has ended (TGA 12.1)")
                }
            };
            event.video_time = self.video_time(time);
            event.evidence = evidence.clone();
            event.detail.insert("board".into(), json!(board_rows));
            if let Some(line) = self.describe(outcome) {
                self.last_line = line.clone();
                on_line(&line);
            }
            self.append(event)?;
        }
        if corrected {
            self.rebuild()?;
        }
        if play_ended {
            let score = self.count_with_no_dead_stones().expect("game started");
            self.sgf.set_result(&score.result());
            let mut event = Event::new(Kind::Note)
                .with_detail("note", "score")
                .with_detail("result", score.result())
                .with_detail(
                    "message",
                    "Thai count (TGA 13) with no stones marked dead; mark them with kradan score",
                );
            event.video_time = self.video_time(time);
            self.append(event)?;
        }
        self.write_sgf()
    }

    fn describe(&self, outcome: &Outcome) -> Option<String> {
        Some(match outcome {
            Outcome::Move {
                number, color, mv, ..
            } => format!(
                "move {number}: {} {}",
                color.letter(),
                match mv {
                    Move::Play(p) => p.to_sgf(),
                    Move::Pass => "pass".into(),
                }
            ),
            Outcome::Flag(flag) if flag.rules.is_empty() => {
                // `inferred-order` cites no article: it is the recorder's doubt, not a
                // breach.
                format!("FLAG {}: {}", kebab(flag.kind), flag.message)
            }
            Outcome::Flag(flag) => format!(
                "FLAG {} ({}): {}",
                kebab(flag.kind),
                flag.rules
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                flag.message
            ),
            Outcome::Resolved { kind, .. } => format!("resolved: {}", kebab(*kind)),
            Outcome::PlayEnded => "play ended (two passes)".into(),
            Outcome::Unsure { message, .. } => format!("unsure: {message}"),
            Outcome::Replaced {
                number, color, to, ..
            } => format!(
                "move {number} corrected: {} {}",
                color.letter(),
                to.to_sgf()
            ),
        })
    }

    /// The Thai count (TGA 13) of the game so far as if no stone were dead: what the
    /// recorder can say alone; the operator marks dead stones with `kradan score`.
    fn count_with_no_dead_stones(&self) -> Option<scoring::Score> {
        let inference = self.inference.as_ref()?;
        Some(scoring::score(
            inference.position(),
            &[],
            self.komi,
            Counting::Thai,
        ))
    }

    fn write_sgf(&self) -> Result<(), RecorderError> {
        let path = self.out.join("game.sgf");
        write_atomically(&path, self.sgf.text().as_bytes())
    }

    fn final_position(&self, summary: &mut Summary) -> Option<Event> {
        let inference = self.inference.as_ref()?;
        let score = self.count_with_no_dead_stones()?;
        summary.final_rows = inference.position().board().to_occupancy().to_text_rows();
        summary.score = Some(score.result());
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "final-position")
            .with_detail("result_if_no_dead_stones", score.result())
            .with_detail(
                "message",
                "the position at the end of the footage; mark dead stones and count with kradan score",
            );
        event
            .detail
            .insert("rules_board".into(), json!(summary.final_rows));
        Some(event)
    }
}

/// The events a record folder's chain holds so far, as written (a line that does not read
/// is left out: `kradan verify` is what judges the chain).
fn read_chain(out: &Path) -> Result<Vec<Event>, RecorderError> {
    let path = out.join(crate::record::events::EVENTS_FILE);
    let text =
        std::fs::read_to_string(&path).map_err(|source| RecorderError::Write { path, source })?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

fn initial_position(
    size: usize,
    handicap: usize,
    first: Option<Color>,
) -> Result<Position, RecorderError> {
    let mut position = Position::with_handicap(size, handicap)
        .map_err(|e| RecorderError::BadOptions(format!("--handicap {handicap}: {e}")))?;
    if let Some(first) = first
        && first != position.to_move()
    {
        let black: Vec<Point> = position.board().stones(Color::Black).collect();
        let white: Vec<Point> = position.board().stones(Color::White).collect();
        position.setup(&black, &white, first);
    }
    Ok(position)
}

fn cell(point: Point) -> [usize; 2] {
    [point.row as usize, point.col as usize]
}

fn kebab(kind: FlagKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn color_name(color: Color) -> &'static str {
    match color {
        Color::Black => "black",
        Color::White => "white",
    }
}

fn color_from_name(name: &str) -> Option<Color> {
    match name {
        "black" => Some(Color::Black),
        "white" => Some(Color::White),
        _ => None,
    }
}

fn format_corners(corners: &[[f64; 2]; 4]) -> String {
    corners
        .iter()
        .map(|[x, y]| format!("{x:.0},{y:.0}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Writes through a temporary file and a rename, synced, so a crash leaves the old file or
/// the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RecorderError> {
    let error = |source| RecorderError::Write {
        path: path.to_path_buf(),
        source,
    };
    let temporary = path.with_extension("tmp");
    {
        let mut file = std::fs::File::create(&temporary).map_err(error)?;
        file.write_all(bytes).map_err(error)?;
        file.sync_all().map_err(error)?;
    }
    std::fs::rename(&temporary, path).map_err(error)
}

/// The progress line for files, redrawn at most twice a second.
struct Progress {
    enabled: bool,
    terminal: bool,
    total: Option<u64>,
    fps: Option<f64>,
    started: Instant,
    last_shown: Option<Instant>,
}

impl Progress {
    fn new(enabled: bool, total: Option<u64>, fps: Option<f64>) -> Progress {
        Progress {
            enabled,
            terminal: std::io::stderr().is_terminal(),
            total,
            fps,
            started: Instant::now(),
            last_shown: None,
        }
    }

    fn show(&mut self, index: u64, time: f64, moves: usize, flags: usize, last_line: &str) {
        if !self.enabled {
            return;
        }
        let every = if self.terminal { 0.5 } else { 10.0 };
        if self
            .last_shown
            .is_some_and(|t| t.elapsed().as_secs_f64() < every)
        {
            return;
        }
        self.last_shown = Some(Instant::now());
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-3);
        let bar = match self.total.filter(|&t| t > 0) {
            Some(total) => {
                let done = (index + 1) as f64 / total as f64;
                let filled = (done * 30.0).round() as usize;
                format!(
                    "[{}{}] {:3.0} % ",
                    "#".repeat(filled.min(30)),
                    ".".repeat(30 - filled.min(30)),
                    done * 100.0
                )
            }
            None => String::new(),
        };
        let speed = if self.fps.is_some() {
            format!(", {:.1}× real time", time / elapsed)
        } else {
            String::new()
        };
        let line = format!("{bar}{time:.1} s, {moves} moves, {flags} flags{speed}; {last_line}");
        if self.terminal {
            eprint!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn finish(&self) {
        if self.enabled && self.terminal {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Occupancy;

    #[test]
    fn a_hand_is_recent_until_it_has_been_away_long_enough_to_be_another_visit() {
        let mut hands = Hands::default();
        assert!(!hands.recent(1.0), "no hand yet");
        hands.over(1.0);
        assert!(
            hands.recent(1.3),
            "an arm resting at the edge, a still view settling"
        );
        assert!(!hands.recent(1.0 + HAND_AWAY + 0.05));
        hands.lost_sight();
        assert!(
            !hands.recent(1.1),
            "the board out of sight says nothing of hands"
        );
    }

    #[test]
    fn a_hand_lifting_for_a_frame_is_one_visit_and_a_hand_back_later_another() {
        let mut hands = Hands::default();
        hands.reach();
        for time in [1.0, 1.1, 1.2, 1.5, 1.6] {
            hands.over(time);
        }
        assert_eq!(
            hands.count(),
            1,
            "0.3 s away while placing is the same hand"
        );
        hands.over(2.5);
        assert_eq!(
            hands.count(),
            2,
            "the opponent's hand 0.9 s later is another"
        );
        hands.restart();
        hands.reach();
        hands.over(2.6);
        assert_eq!(
            hands.count(),
            1,
            "a hand still there after a position is acted on counts"
        );
    }

    #[test]
    fn a_game_in_progress_is_joined_only_from_a_reading_sure_of_every_point() {
        let mut occupancy = Occupancy::empty(9, 9);
        occupancy.set(2, 2, Some(Color::Black));
        occupancy.set(6, 6, Some(Color::White));
        let mut confidence = vec![0.97; 81];
        let settled = |confidence: &[f32]| Settled {
            occupancy: occupancy.clone(),
            confidence: confidence.to_vec(),
            since: 0.0,
            since_index: 0,
            frames: 5,
            between: Vec::new(),
            slid: Vec::new(),
            stirred: Vec::new(),
        };
        assert!(unsure_points(&settled(&confidence)).is_empty());
        // Go 100329 read two points at about one half for as long as it was looked at.
        confidence[9 * 3 + 6] = 0.5;
        confidence[9 * 5 + 3] = 0.79;
        assert_eq!(unsure_points(&settled(&confidence)), [[3, 6], [5, 3]]);
    }

    #[test]
    fn a_stir_under_a_reaching_arm_is_the_arms_and_a_stir_alone_is_a_knock() {
        let mut hands = Hands::default();
        hands.stir(1.0, true);
        assert!(!hands.moved(), "the arm's stir");
        hands.stir(1.2, false);
        assert!(hands.moved(), "a piece knocked with nothing reaching");
        hands.restart_unchanged(2.0);
        assert!(
            hands.moved(),
            "kept over a settled view that does not show it yet"
        );
        hands.restart_unchanged(3.5);
        assert!(!hands.moved(), "forgotten after STIR_LAG");
        // A move settled at 5.0 is acted on at 5.4; a knock stirred at 5.2 between.
        hands.reach();
        hands.over(4.5);
        hands.stir(5.2, false);
        hands.restart_acted(5.0, 5.4);
        assert!(hands.moved(), "the knock after the move settled");
        assert_eq!(hands.count(), 0, "the move's hand is counted no more");
        hands.stir(6.0, false);
        hands.restart_acted(6.5, 7.0);
        assert!(
            !hands.moved(),
            "a stir before the sighting settled was its own"
        );
    }

    #[test]
    fn motion_with_nothing_across_the_edge_is_no_hand() {
        let mut hands = Hands::default();
        hands.over(1.0);
        hands.over(1.1);
        assert_eq!(hands.count(), 0, "a stone knocked by accident");
        hands.reach();
        assert_eq!(
            hands.count(),
            1,
            "an arm came over the edge during the visit"
        );
        hands.restart();
        hands.over(3.0);
        assert_eq!(
            hands.count(),
            0,
            "the arm seen before the restart is not this visit's"
        );
    }
}
