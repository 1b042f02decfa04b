//! `kradan record --game makhos|makruk`: the 8×8 side of the recorder.
//!
//! The frame loop is [`super::record_with`]'s; this is what it calls per frame for an 8×8
//! game: [`EightTracker`] follows the board and hands over settled readings (per-square
//! probabilities), [`MakhosInference`] / [`MakrukInference`] decide moves and flags, and
//! this writes them as they are decided: `events.jsonl` (the same chain as Go's), the
//! record (`game.pdn` / `game.pgn`) rewritten atomically after every decision, and the
//! annotated frames before and after every move and flag in `evidence/`.

use super::chain8::{CORRECTION, Chain8};
use super::evidence::{self, Mark};
use super::pdn_view::PdnView;
use super::pgn_view::{PgnView, SanMove};
use super::{
    Action, ActionRequest, EventHook, Hands, RecorderError, Recording, Summary, color_name,
    format_corners, write_atomically,
};
use crate::games::makhos::{self, Men, Square};
use crate::games::makruk::{self, Status};
use crate::games::{Article, Color, Occupancy, Penalty};
use crate::geometry::eight::{EightGame, OrientationSource};
use crate::infer::eight::{Seen8, changes, square_bits, standing_alike, state_color};
use crate::infer::go::InferOptions;
use crate::infer::makhos::{MakhosInference, Outcome as HosOutcome};
use crate::infer::makruk::{MakrukInference, Outcome as RukOutcome};
use crate::record::{Event, EventLog, Kind};
use crate::source::{Frame, SourceKind};
use crate::track::eight::{EightTracker, Report8, Settled8};
use crate::track::pictures::SquarePictures;
use crate::track::{TrackEvent, TrackerOptions, View};
use opencv::core::Mat;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::mpsc;

/// One decision of either game's stage, in the terms the event log writes.
struct Decision {
    kind: Kind,
    /// The `note` of a note event.
    note: Option<&'static str>,
    /// The line shown live and kept for the progress display.
    line: String,
    move_number: Option<usize>,
    color: Option<Color>,
    notation: Option<String>,
    points: Vec<[usize; 2]>,
    rules: Vec<Article>,
    penalties: Vec<Penalty>,
    detail: Map<String, Value>,
    /// A flag's id, or the id of the flag a `resolved` event closes.
    flag_id: Option<u32>,
}

impl Decision {
    fn new(kind: Kind, line: String) -> Decision {
        Decision {
            kind,
            note: None,
            line,
            move_number: None,
            color: None,
            notation: None,
            points: Vec::new(),
            rules: Vec::new(),
            penalties: Vec::new(),
            detail: Map::new(),
            flag_id: None,
        }
    }

    fn note(note: &'static str, line: String) -> Decision {
        Decision {
            note: Some(note),
            ..Decision::new(Kind::Note, line)
        }
    }

    fn with(mut self, key: &str, value: impl Into<Value>) -> Decision {
        self.detail.insert(key.into(), value.into());
        self
    }

    /// A raised flag of either game, with its record comment.
    #[allow(clippy::too_many_arguments)]
    fn flag(
        id: u32,
        name: &str,
        rules: Vec<Article>,
        penalties: Vec<Penalty>,
        points: Vec<[usize; 2]>,
        move_number: Option<usize>,
        color: Option<Color>,
        message: &str,
    ) -> Decision {
        let cited = rules.iter().map(Article::to_string).collect::<Vec<_>>();
        let line = format!("FLAG {name} ({}): {message}", cited.join(", "));
        Decision {
            move_number,
            color,
            points,
            rules,
            penalties,
            flag_id: Some(id),
            ..Decision::new(Kind::Flag, line)
        }
        .with("flag", name)
        .with("flag_id", id)
        .with("message", message)
    }

    fn resolved(id: u32, name: &str, points: Vec<[usize; 2]>) -> Decision {
        Decision {
            points,
            flag_id: Some(id),
            ..Decision::new(Kind::Resolved, format!("resolved: {name}"))
        }
        .with("flag", name)
        .with("flag_id", id)
        .with("by", "board")
        .with(
            "message",
            "the board shows the recorded position there again",
        )
    }

    /// What the record file says of it, beside the move it concerns.
    fn comment(&self) -> Option<String> {
        let rules: Vec<String> = self.rules.iter().map(Article::to_string).collect();
        let penalties: Vec<String> = self.penalties.iter().map(Penalty::to_string).collect();
        record_comment(self.kind, &self.detail, &rules, &penalties)
    }
}

/// What the record file says of a flag or a resolution, from what its event holds, so a
/// resumed record says it again.
fn record_comment(
    kind: Kind,
    detail: &Map<String, Value>,
    rules: &[String],
    penalties: &[String],
) -> Option<String> {
    let text = |key: &str| detail.get(key).and_then(Value::as_str).unwrap_or("");
    match kind {
        Kind::Flag => Some(format!(
            "FLAG {}: {} ({}; {})",
            text("flag"),
            text("message"),
            rules.join(", "),
            penalties.join(", ")
        )),
        Kind::Resolved if text("by") == "board" => Some(format!("resolved: {}", text("flag"))),
        Kind::Resolved => Some(text("message").to_string()),
        Kind::Note if text("note") == CORRECTION => Some(text("message").to_string()),
        _ => None,
    }
}

/// The game's rules stage and the record it keeps. The inferences are boxed: each is
/// several times the size of its record view, and they differ in size.
enum Stage8 {
    Makhos {
        inference: Box<MakhosInference>,
        view: PdnView,
    },
    Makruk {
        inference: Box<MakrukInference>,
        view: PgnView,
    },
}

impl Stage8 {
    fn makhos(start: makhos::Position, options: InferOptions) -> Stage8 {
        Stage8::Makhos {
            inference: Box::new(MakhosInference::new(start, options)),
            view: PdnView::new(start),
        }
    }

    fn makruk(start: makruk::Position, options: InferOptions) -> Stage8 {
        Stage8::Makruk {
            inference: Box::new(MakrukInference::new(start.clone(), options)),
            view: PgnView::new(start),
        }
    }

    /// The board as it physically stands, as far as the stage knows.
    fn board(&self) -> Occupancy {
        match self {
            Stage8::Makhos { inference, .. } => inference.board(),
            Stage8::Makruk { inference, .. } => inference.board(),
        }
    }

    /// The position of the rules, rows of `.`/`B`/`W`.
    fn rules_rows(&self) -> Vec<String> {
        self.rules().to_text_rows()
    }

    /// The position of the rules (not the board as it stands, with its known differences).
    fn rules(&self) -> Occupancy {
        match self {
            Stage8::Makhos { inference, .. } => inference.position().occupancy(),
            Stage8::Makruk { inference, .. } => inference.position().occupancy(),
        }
    }

    /// The squares (bit `row * 8 + col`) the record has a figure on that stands taller
    /// than a Bia: its middle changes when it comes or goes, where a dark Bia leaving a
    /// dark square may change it by no more than a still look's noise (Makruk 310443,
    /// `hard`: Black's Bia f6-f5 changed f6's middle by 3). Mak-hos keeps no pictures.
    fn tall_figures(&self) -> u64 {
        match self {
            Stage8::Makhos { .. } => 0,
            Stage8::Makruk { inference, .. } => square_bits(
                &inference
                    .position()
                    .board()
                    .pieces()
                    .filter(|(_, piece)| piece.role != makruk::Role::Bia)
                    .map(|(square, _)| square.row_col())
                    .collect::<Vec<_>>(),
            ),
        }
    }

    fn close_flag(&mut self, id: u32) {
        match self {
            Stage8::Makhos { inference, .. } => inference.close_flag(id),
            Stage8::Makruk { inference, .. } => inference.close_flag(id),
        }
    }

    /// Where `shown` (the board as the camera last saw it) differs from the game, the
    /// difference is known: see [`MakhosInference::acknowledge`].
    fn acknowledge(&mut self, shown: &Occupancy) {
        match self {
            Stage8::Makhos { inference, .. } => inference.acknowledge(shown),
            Stage8::Makruk { inference, .. } => inference.acknowledge(shown),
        }
    }

    /// The move a referee wrote, if the side to move can play it here: as the record
    /// writes it, with the squares it went from and to. Else why not.
    fn written_move(&self, written: &str) -> Result<(String, Vec<[usize; 2]>), String> {
        let cell = |(row, col): (usize, usize)| [row, col];
        match self {
            Stage8::Makhos { inference, .. } => {
                let written_move = makhos::read_move(written).map_err(|e| {
                    format!(
                        "{written:?} is no Mak-hos move ({e}): squares 1-32 joined by '-' or 'x', like 9-13 or 9x18"
                    )
                })?;
                let (mv, _) = makhos::matching_move(inference.position(), &written_move)
                    .ok_or_else(|| {
                        format!(
                            "{written:?}: {} has no such move here",
                            color_name(inference.position().turn())
                        )
                    })?;
                Ok((
                    makhos::WrittenMove::from(&mv).to_string(),
                    vec![cell(mv.from().row_col()), cell(mv.to().row_col())],
                ))
            }
            Stage8::Makruk { inference, .. } => {
                let position = inference.position();
                let mv = makruk::san::parse_san(position, written.trim()).map_err(|e| {
                    format!(
                        "{written:?}: not a move {} can play here ({e})",
                        color_name(position.turn())
                    )
                })?;
                Ok((
                    makruk::san::to_san(position, &mv),
                    vec![cell(mv.from.row_col()), cell(mv.to.row_col())],
                ))
            }
        }
    }

    fn file_name(&self) -> &'static str {
        match self {
            Stage8::Makhos { .. } => "game.pdn",
            Stage8::Makruk { .. } => "game.pgn",
        }
    }

    fn text(&self) -> String {
        match self {
            Stage8::Makhos { view, .. } => view.text(),
            Stage8::Makruk { view, .. } => view.text(),
        }
    }

    fn add_comment(&mut self, text: &str) {
        match self {
            Stage8::Makhos { view, .. } => view.add_comment(text),
            Stage8::Makruk { view, .. } => view.add_comment(text),
        }
    }

    fn add_comment_at(&mut self, number: usize, text: &str) {
        match self {
            Stage8::Makhos { view, .. } => view.add_comment_at(number, text),
            Stage8::Makruk { view, .. } => view.add_comment_at(number, text),
        }
    }

    /// Whether the last sighting was acted on: what ends a hand's turn at the board.
    fn acted(&self) -> bool {
        match self {
            Stage8::Makhos { inference, .. } => inference.acted(),
            Stage8::Makruk { inference, .. } => inference.acted(),
        }
    }

    fn caught_up(&self) -> bool {
        match self {
            Stage8::Makhos { inference, .. } => inference.caught_up(),
            Stage8::Makruk { inference, .. } => inference.caught_up(),
        }
    }

    /// Acts on a settled sighting: the decisions, the record view already following them.
    /// See `MakhosInference::knocked_after_hand`; Makruk's stage weighs every reading.
    fn knocked_after_hand(&mut self, knocked: bool) {
        if let Stage8::Makhos { inference, .. } = self {
            inference.knocked_after_hand(knocked);
        }
    }

    fn observe(&mut self, seen: &Seen8, time: Option<f64>) -> Vec<Decision> {
        self.decide(
            time,
            |makhos| makhos.observe(seen),
            |makruk| makruk.observe(seen),
        )
    }

    /// Pieces the camera saw pushed off their squares' centres (game rows).
    fn pushed(&mut self, squares: &[[usize; 2]], time: Option<f64>) -> Vec<Decision> {
        self.decide(
            time,
            |makhos| makhos.pushed(squares),
            |makruk| makruk.pushed(squares),
        )
    }

    /// The decisions of what the game's inference made of something, the record view
    /// following them.
    fn decide(
        &mut self,
        time: Option<f64>,
        makhos: impl FnOnce(&mut MakhosInference) -> Vec<HosOutcome>,
        makruk: impl FnOnce(&mut MakrukInference) -> Vec<RukOutcome>,
    ) -> Vec<Decision> {
        let decisions: Vec<Decision> = match self {
            Stage8::Makhos { inference, view } => makhos(inference)
                .into_iter()
                .map(|outcome| makhos_decision(outcome, view, time))
                .collect(),
            Stage8::Makruk { inference, view } => makruk(inference)
                .into_iter()
                .map(|outcome| makruk_decision(outcome, view, time))
                .collect(),
        };
        for decision in &decisions {
            if let Some(comment) = decision.comment() {
                self.add_comment(&comment);
            }
        }
        decisions
    }
}

fn side(color: Color) -> char {
    match color {
        Color::White => 'W',
        Color::Black => 'B',
    }
}

fn makhos_points(names: &[String]) -> Vec<[usize; 2]> {
    names
        .iter()
        .filter_map(|name| name.parse().ok().and_then(makhos::Square::new))
        .map(|square| {
            let (row, col) = square.row_col();
            [row, col]
        })
        .collect()
}

fn makruk_points(names: &[String]) -> Vec<[usize; 2]> {
    names
        .iter()
        .filter_map(|name| makruk::Square::parse(name))
        .map(|square| {
            let (row, col) = square.row_col();
            [row, col]
        })
        .collect()
}

fn makhos_decision(outcome: HosOutcome, view: &mut PdnView, time: Option<f64>) -> Decision {
    match outcome {
        HosOutcome::Move {
            number,
            color,
            mv,
            captured,
            promoted,
            illegal,
            seconds,
        } => {
            let notation = mv.to_string();
            let points = mv
                .squares
                .iter()
                .map(|s| {
                    let (row, col) = s.row_col();
                    [row, col]
                })
                .collect();
            view.set_move(number, mv, time);
            let mut decision = Decision {
                move_number: Some(number),
                color: Some(color),
                notation: Some(notation.clone()),
                points,
                ..Decision::new(
                    Kind::Move,
                    format!("move {number}: {} {notation}", side(color)),
                )
            }
            .with(
                "captured",
                captured.iter().map(ToString::to_string).collect::<Vec<_>>(),
            )
            .with("seconds", seconds);
            if promoted {
                decision = decision.with("promoted", true);
            }
            if illegal {
                decision = decision.with("illegal", true);
            }
            decision
        }
        HosOutcome::TakenBack { number } => {
            view.take_back(number);
            taken_back(number)
        }
        HosOutcome::Flag(flag) => Decision::flag(
            flag.id,
            flag.kind.name(),
            flag.rules,
            flag.penalties,
            makhos_points(&flag.squares),
            flag.move_number,
            flag.color,
            &flag.message,
        )
        .with("squares", flag.squares),
        HosOutcome::Resolved { id, kind, squares } => {
            Decision::resolved(id, kind.name(), makhos_points(&squares))
        }
        HosOutcome::Count {
            rule,
            reached,
            limit,
        } => Decision::note("count", format!("count ({rule}): {reached} of {limit}"))
            .with("rule", rule.to_string())
            .with("reached", reached)
            .with("limit", limit),
        HosOutcome::GameOver { winner } => {
            view.set_result(
                match winner {
                    Color::White => makhos::GameResult::WhiteWins,
                    Color::Black => makhos::GameResult::BlackWins,
                }
                .token(),
            );
            Decision::note(
                "game-over",
                format!(
                    "game over: {} has no piece or no move left; {} wins (HOS 4)",
                    color_name(winner.opponent()),
                    color_name(winner)
                ),
            )
            .with("winner", color_name(winner))
        }
        HosOutcome::LowConfidence { number } => low_confidence(number),
    }
}

fn makruk_decision(outcome: RukOutcome, view: &mut PgnView, time: Option<f64>) -> Decision {
    match outcome {
        RukOutcome::Move {
            number,
            color,
            mv,
            san,
            status,
            seconds,
        } => {
            view.set_move(
                number,
                SanMove {
                    color,
                    san: san.clone(),
                },
                time,
            );
            let status_name = match status {
                Status::Ongoing => "ongoing",
                Status::Checkmate => {
                    view.set_result(match color {
                        Color::White => "1-0",
                        Color::Black => "0-1",
                    });
                    "checkmate"
                }
                Status::Stalemate => {
                    view.set_result("1/2-1/2");
                    "stalemate"
                }
            };
            let points = [mv.from, mv.to]
                .iter()
                .map(|s| {
                    let (row, col) = s.row_col();
                    [row, col]
                })
                .collect();
            Decision {
                move_number: Some(number),
                color: Some(color),
                notation: Some(san.clone()),
                points,
                ..Decision::new(Kind::Move, format!("move {number}: {} {san}", side(color)))
            }
            .with("uci", mv.uci())
            .with("status", status_name)
            .with("seconds", seconds)
        }
        RukOutcome::TakenBack { number } => {
            view.take_back(number);
            taken_back(number)
        }
        RukOutcome::Flag(flag) => Decision::flag(
            flag.id,
            flag.kind.name(),
            flag.rules,
            flag.penalties,
            makruk_points(&flag.squares),
            flag.move_number,
            flag.color,
            &flag.message,
        )
        .with("squares", flag.squares),
        RukOutcome::Resolved { id, kind, squares } => {
            Decision::resolved(id, kind.name(), makruk_points(&squares))
        }
        RukOutcome::Count(Some(count)) => {
            Decision::note("count", format!("count (MAKRUK 7–14): {count}"))
                .with("count", count.to_string())
                .with("reached", count.reached)
                .with("limit", count.limit)
        }
        RukOutcome::Count(None) => Decision::note("count", "the count stopped".into()),
        RukOutcome::LowConfidence { number } => low_confidence(number),
    }
}

/// The squares of a Mak-hos `move` event marked `illegal`: where the man stood, where it
/// was set down, and the pieces it took.
fn illegal_move_of(event: &Event) -> Option<(makhos::Square, makhos::Square, Vec<makhos::Square>)> {
    if event.detail.get("illegal").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let square = |text: &str| text.trim().parse().ok().and_then(makhos::Square::new);
    let written = makhos::read_move(event.notation.as_deref()?).ok()?;
    let (from, to) = (*written.squares.first()?, *written.squares.last()?);
    let captured = event
        .detail
        .get("captured")?
        .as_array()?
        .iter()
        .map(|name| name.as_str().and_then(square))
        .collect::<Option<Vec<_>>>()?;
    Some((from, to, captured))
}

fn taken_back(number: usize) -> Decision {
    Decision {
        move_number: Some(number),
        ..Decision::note(
            "taken-back",
            format!("move {number} was taken back: the board shows the position before it"),
        )
    }
}

fn low_confidence(number: usize) -> Decision {
    Decision {
        move_number: Some(number),
        ..Decision::note(
            "low-confidence",
            format!(
                "move {number} was read on the likeliest explanation only: another fitted nearly as well"
            ),
        )
    }
}

/// How much likelier, before looking, a Mak-hos square the game is played on holds a piece
/// than a square of the other colour: men move and are knocked along diagonals, so a
/// piece on a light square takes a clear sighting, while the square reader's commonest
/// slip is a light square beside a bright man read as a piece.
const OFF_PLAY_ODDS: f32 = 0.05;

/// A square whose middle changed by at most this much (grey levels, the view's brightness
/// change taken out, as 4×4 block means) since the sighting the stage caught up on is
/// still: on 12 rendered 8×8 clips with knocks (s17) a square's middle changed by 5.3 at
/// most from one look to the next with no hand, and a piece coming or going by 25 and
/// more; in 310562's dim light a still figure's block means changed by up to 5, and at 8
/// a dark Bia leaving its dark square (7) counted as still.
const STILL_AT_MOST: f32 = 5.0;

/// A square whose middle changed by at least this much since the sighting the stage
/// caught up on saw a piece come or go (25 and more on 12 rendered 8×8 clips with
/// knocks, s17; Makruk 310593: 49 and 54 where the Khon left c1 for b2).
const MOVED_AT_LEAST: f32 = 25.0;

/// A square whose middle changed by at least this much since the sighting the stage
/// caught up on changed by more than a still look's noise (5.3 at most, s17): twice that.
/// Makruk 310627, a dim board: the Ruea h1-h2 changed h2 by 26 and h1 by 22, every other
/// square by 3 at most.
const STIRRED_AT_LEAST: f32 = 10.0;

/// `squares` with no call on the squares in `moved` (bit `row * 8 + col`) that the reader
/// still calls as `recorded` has them: a square whose picture changed as a piece coming
/// or going changes it, read the same as before, is a misread, not evidence that nothing
/// moved (Makruk 310593, 1920×1080 seen low from White's side: the Khon c1-b2 left c1
/// read White and b2 bare, and the move was never recorded; every later move of White's
/// back rank was then read as the Khon's).
fn unread_where_pictures_moved(
    squares: &[[f32; 3]],
    moved: u64,
    recorded: &Occupancy,
) -> Vec<[f32; 3]> {
    squares
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let (row, col) = (index / 8, index % 8);
            let called = crate::reading::CellReading::from_probabilities(*p).color;
            if moved & (1 << index) != 0 && called == recorded.get(row, col) {
                [1.0 / 3.0; 3]
            } else {
                *p
            }
        })
        .collect()
}

/// Whether a look the stage is caught up on becomes the view later looks' pictures are
/// compared with ([`CaughtUp`]). One taken while a hand reaches over the board does not,
/// unless there is none yet or the record just changed: the reading may still stand while
/// the hand lifts a piece and covers its neighbour, and a view renewed look by look
/// follows the piece away (Makruk 310657: the Ma lifted from b8 changed b8 by 5, then 14,
/// then 2 from look to look while c8 lay under the arm; when the hand had gone b8 had "not
/// changed" and c8 had, and Khon c8-d7 was recorded for Ma b8-d7).
fn renews_view(hand_over: bool, has_view: bool, record_changed: bool) -> bool {
    !hand_over || !has_view || record_changed
}

/// The last sighting a stage caught up on, as the pictures saw it.
#[derive(Clone, Debug)]
struct CaughtUp {
    /// The squares' middles then: a square that still looks so is still
    /// (`Seen8::still`).
    pictures: SquarePictures,
    /// What the reader called the squares then.
    reading: Occupancy,
    /// The squares (bit `row * 8 + col`) whose pictures changed as a piece coming or going
    /// changes them when the record changed there, or where the reader saw a tall figure
    /// the record has, and have been still since ([`confirmed_after`]): what stands there
    /// is what the record holds, whatever the reader now calls it.
    confirmed: u64,
}

/// `squares` with the squares in `confirmed` (bit `row * 8 + col`) that the reader calls
/// otherwise than `rules` given back to `rules`: a square whose picture changed when the
/// move that changed it was recorded, and has not changed since, holds what the move left
/// there (Makruk 310584: a red Khon on e3 of a dark board read bare when it arrived and
/// after, its picture changed by 50 then and by 2 since; a move later, a false `removed`).
fn kept_where_confirmed(squares: &[[f32; 3]], confirmed: u64, rules: &Occupancy) -> Vec<[f32; 3]> {
    squares
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let (row, col) = (index / 8, index % 8);
            let held = rules.get(row, col);
            let called = crate::reading::CellReading::from_probabilities(*p).color;
            if confirmed & (1 << index) != 0 && called != held {
                crate::infer::eight::read_as(held, CONFIRMED_TRUST)
            } else {
                *p
            }
        })
        .collect()
}

/// The squares confirmed once the stage has caught up on a sighting, from those
/// `confirmed` before it (and still since), those where a figure taller than a Bia stands
/// and the reader sees one (`agreeing`), those the record changed (`recorded_change`) and
/// those whose pictures changed (`moved`). A figure read where the record has it, whose
/// picture then stays still, is still there whatever the reader calls it later (310626:
/// the red Khun on e1 read bare after White's first move, its picture changed by 3, then
/// flagged removed; the red back rank read dark as the light shifted). A square the record
/// changed is confirmed only if its picture changed with it: a change recorded where the
/// picture stood still is the record's word against the pictures', and the pictures must
/// not make it stick.
fn confirmed_after(confirmed: u64, agreeing: u64, recorded_change: u64, moved: u64) -> u64 {
    ((confirmed | agreeing) & !recorded_change) | (recorded_change & moved)
}

/// How sure a confirmed square ([`CaughtUp::confirmed`]) is taken to hold what the record
/// holds there when the reader calls it otherwise.
const CONFIRMED_TRUST: f32 = 0.9;

/// A square's name in the trace, `a8` for row 0, column 0.
fn algebraic(row: usize, col: usize) -> String {
    format!("{}{}", char::from(b'a' + col as u8), 8 - row)
}

/// The sighting with what the rules know of the board before looking: in Mak-hos, pieces
/// stand on the dark squares only (HOS 1.1).
fn with_rules_prior(game: EightGame, settled: &Settled8) -> Settled8 {
    if game != EightGame::Makhos {
        return settled.clone();
    }
    let mut prior = settled.clone();
    for (index, p) in prior.squares.iter_mut().enumerate() {
        let (row, col) = (index / 8, index % 8);
        if makhos::Square::at(row, col).is_some() {
            continue;
        }
        let total = p[0] + OFF_PLAY_ODDS * (p[1] + p[2]);
        *p = [p[0], OFF_PLAY_ODDS * p[1], OFF_PLAY_ODDS * p[2]].map(|v| v / total.max(1e-6));
        let call = (0..3).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
        prior.occupancy.set(row, col, state_color(call));
    }
    prior
}

/// Takes a referee's action on the record of an 8×8 game no recorder is writing: the
/// record is continued like `--resume`, the action written, the session closed.
pub(super) fn apply_action(
    dir: &std::path::Path,
    game: EightGame,
    action: &Action,
    by: &str,
    on_event: Option<EventHook>,
) -> Result<String, RecorderError> {
    let options = super::RecordOptions {
        resume: true,
        game: super::RecordedGame::Eight(game),
        ..super::RecordOptions::new(dir.display().to_string(), dir)
    };
    let mut recording = EightRecording::open(
        &options,
        game,
        SourceKind::VideoFile,
        "a referee's action on the recorded game".into(),
        TrackerOptions::default(),
    )?;
    recording.set_on_event(on_event);
    let done = recording.act(action, by);
    let mut end = Event::new(Kind::SessionEnd).with_detail("moves", recording.moves);
    end.video_time = recording.resume_time;
    recording.append(end)?;
    done
}

/// The runs of motion over the board since the last position acted on, to tell a piece
/// knocked after a hand from a second hand: a hand comes from a player's side and crosses
/// the board's edge (`Report8::reach`) on its way, a knock moves with nothing crossing it.
/// Two hands are not told apart by time: on real blitz footage the next hand may come
/// within the moment that joins two runs into one visit.
#[derive(Clone, Copy, Debug, Default)]
struct Bursts {
    /// The last frame something reached across the board's edge.
    reached: Option<f64>,
    /// The first and the last frame of the latest run of motion.
    last: Option<(f64, f64)>,
    /// A run with no reach of its own (during it or just before it) came after a hand.
    knocked: bool,
}

impl Bursts {
    fn reach(&mut self, time: f64) {
        self.reached = Some(time);
    }

    fn over(&mut self, time: f64) {
        let start = match self.last {
            Some((start, last)) if time - last <= super::HAND_AWAY => start,
            _ => time,
        };
        self.last = Some((start, time));
    }

    /// Whether a run crossing no edge has come after a hand (`hand`: the hands counted
    /// since the last position acted on crossed it) since then; it stays so until the
    /// next position is acted on.
    fn knocked(&mut self, hand: bool) -> bool {
        if hand
            && let Some((start, _)) = self.last
            && self
                .reached
                .is_none_or(|reached| reached < start - super::HAND_AWAY)
        {
            self.knocked = true;
        }
        self.knocked
    }

    fn restart(&mut self) {
        self.knocked = false;
    }
}

/// An 8×8 recording: the tracker, the stage, and everything written.
pub(super) struct EightRecording {
    game: EightGame,
    log: EventLog,
    out: PathBuf,
    tracker: EightTracker,
    stage: Option<Stage8>,
    first: Color,
    /// Whether `--first` named the side that moves first; else, in Mak-hos, where it is
    /// decided by lot (HOS 1.1), the first move tells.
    first_given: bool,
    /// `--fen`: the position the game on the board starts from.
    given: Option<Opening>,
    /// A game joined in progress: the position it was joined at (Mak-hos: men unless on
    /// their far row; Makruk: the figures of [`makruk::join`]). The side to move is
    /// `first`, until the first move tells.
    joined: Option<Opening>,
    /// A Makruk game joined in progress: the squares whose figure is open.
    joined_unsure: Vec<(makruk::Square, Vec<makruk::Role>)>,
    /// A reading no start fits that could be a game in progress, and since when settled
    /// readings have shown it.
    joinable: Option<(Occupancy, f64)>,
    /// The wait for a reading the start fits was noted.
    waiting_noted: bool,
    /// A reading that could be a game in progress was too unsure to join, and said so.
    join_unsure_noted: bool,
    /// The tracker turned the board to the game's rows by the pieces standing as at the
    /// start: a game joined in progress keeps that turn.
    oriented_by_start: bool,
    /// A frame-by-frame account on stderr (`KRADAN_TRACE`), for whoever tunes the tracker.
    trace: bool,
    infer: InferOptions,
    live: bool,
    /// The hands over the board since the last position acted on: motion with nothing
    /// across the board's edge is a piece knocked by accident, no hand.
    hands: Hands,
    /// The runs of motion among those hands: one that crossed no edge after a hand that
    /// did is a piece knocked, not a second hand.
    bursts: Bursts,
    /// The frame of the last position acted on (reduced for evidence) and its factor.
    before: Option<(Mat, f64)>,
    resume_time: Option<f64>,
    moves: usize,
    flags: usize,
    /// Flag ids and the seq of their events, to name them when resolved.
    flag_seqs: Vec<(u32, u64)>,
    /// Flags resolved by the board or closed by a referee.
    closed_flags: Vec<u32>,
    /// The last sighting the stage caught up on (`Waiting::caught_up`).
    caught_up_on: Option<CaughtUp>,
    /// The source time of the last frame looked at, for a referee's action between frames.
    now: f64,
    last_line: String,
    on_event: Option<EventHook>,
}

impl EightRecording {
    pub(super) fn open(
        options: &super::RecordOptions,
        game: EightGame,
        kind: SourceKind,
        description: String,
        tracker_options: TrackerOptions,
    ) -> Result<EightRecording, RecorderError> {
        let given = options
            .fen
            .as_deref()
            .map(|fen| Opening::parse(game, fen))
            .transpose()?;
        let first = match &given {
            Some(given) => given.turn(),
            None => options.first.unwrap_or(Color::White),
        };
        let mut detail = Map::new();
        detail.insert("game".into(), json!(game));
        if let Some(fen) = &options.fen {
            detail.insert("fen".into(), fen.as_str().into());
        }
        detail.insert("source".into(), options.source.clone().into());
        detail.insert("source_description".into(), description.into());
        detail.insert("first".into(), color_name(first).into());
        let (log, earlier) = if options.resume {
            let (log, resumed) = EventLog::resume(&options.out, detail)?;
            (log, Some(resumed.events))
        } else {
            (EventLog::create(&options.out, detail)?, None)
        };
        let stills = kind == SourceKind::Stills;
        let mut recording = EightRecording {
            game,
            log,
            out: options.out.clone(),
            tracker: EightTracker::new(game, tracker_options),
            stage: None,
            first,
            first_given: options.first.is_some() || options.resume || given.is_some(),
            given,
            joined: None,
            joined_unsure: Vec::new(),
            joinable: None,
            waiting_noted: false,
            join_unsure_noted: false,
            oriented_by_start: false,
            trace: std::env::var_os("KRADAN_TRACE").is_some(),
            infer: InferOptions {
                stills,
                ..InferOptions::default()
            },
            live: matches!(kind, SourceKind::Stream | SourceKind::Camera),
            hands: Hands::default(),
            bursts: Bursts::default(),
            before: None,
            resume_time: None,
            moves: 0,
            flags: 0,
            flag_seqs: Vec::new(),
            caught_up_on: None,
            closed_flags: Vec::new(),
            now: 0.0,
            last_line: String::new(),
            on_event: None,
        };
        if let Some(events) = earlier {
            recording.restore(&events)?;
            if let Some(stage) = &recording.stage {
                recording.tracker.assume_settled(stage.board());
            }
        }
        Ok(recording)
    }

    /// Rebuilds the game from the events of the record being continued, or of the
    /// record a referee just corrected: the moves that stand ([`Chain8`]) replayed from
    /// the position the game began from.
    fn restore(&mut self, events: &[Event]) -> Result<(), RecorderError> {
        let Some(chain) = Chain8::read(events) else {
            return Ok(());
        };
        let start = chain.start;
        self.first = chain.first().unwrap_or(self.first);
        for event in events {
            if let Some(time) = event.video_time {
                self.resume_time = Some(self.resume_time.map_or(time, |t: f64| t.max(time)));
            }
            match event.kind {
                Kind::Flag => {
                    self.flags += 1;
                    if let Some(id) = event.detail.get("flag_id").and_then(Value::as_u64) {
                        self.flag_seqs.push((id as u32, event.seq));
                    }
                }
                Kind::Resolved => {
                    if let Some(id) = event.detail.get("flag_id").and_then(Value::as_u64) {
                        self.closed_flags.push(id as u32);
                    }
                }
                _ => {}
            }
        }
        let standing = &chain.moves;
        let next_flag_id = self
            .flag_seqs
            .iter()
            .map(|&(id, _)| id + 1)
            .max()
            .unwrap_or(1);
        let mut stage = self.build_stage(&chain, standing, next_flag_id)?;
        // The record file is written anew: the flags, resolutions and corrections go back
        // beside the move they followed.
        for event in events.iter().filter(|e| e.seq > start.seq) {
            if let Some(comment) =
                record_comment(event.kind, &event.detail, &event.rules, &event.penalties)
            {
                let after = standing.iter().filter(|m| m.seq < event.seq).count();
                stage.add_comment_at(after, &comment);
            }
        }
        self.moves = standing.len();
        self.stage = Some(stage);
        self.caught_up_on = None;
        self.write_record()
    }

    /// The game's stage after `moves` (standing moves of `chain`) replayed from the
    /// position it began from; its flags take ids from `next_flag_id` on.
    fn build_stage(
        &self,
        chain: &Chain8,
        moves: &[Event],
        next_flag_id: u32,
    ) -> Result<Stage8, RecorderError> {
        let unreadable = |event: &Event| {
            RecorderError::BadOptions(format!(
                "move {} ({}) of the record does not replay from the position before it",
                event.move_number.unwrap_or(0),
                event.notation.as_deref().unwrap_or("?")
            ))
        };
        Ok(match self.game {
            EightGame::Makhos => {
                let start = chain
                    .makhos_start(self.first)
                    .map_err(|e| unreadable_start(&e))?;
                let mut inference = MakhosInference::new(start, self.infer.clone());
                let mut view = PdnView::new(start);
                for (index, event) in moves.iter().enumerate() {
                    let written = event.notation.as_deref().unwrap_or("");
                    let mut found = None;
                    inference.position().for_each_move(|mv, class| {
                        if found.is_none() && makhos::WrittenMove::from(mv).to_string() == written {
                            found = Some((*mv, class));
                        }
                    });
                    let at = event.video_time.unwrap_or(0.0);
                    if let Some((mv, class)) = found {
                        view.set_move(index + 1, makhos::WrittenMove::from(&mv), event.video_time);
                        inference.replay(mv, class, at);
                        continue;
                    }
                    // An illegal move recorded as it stood (HOS 3.2) is no move of the rules.
                    let (from, to, captured) =
                        illegal_move_of(event).ok_or_else(|| unreadable(event))?;
                    let written = makhos::WrittenMove {
                        squares: vec![from, to],
                        capture: !captured.is_empty(),
                    };
                    view.set_move(index + 1, written, event.video_time);
                    inference.replay_illegal(from, to, &captured, at);
                }
                Stage8::Makhos {
                    inference: Box::new(inference.with_next_flag_id(next_flag_id)),
                    view,
                }
            }
            EightGame::Makruk => {
                let start = chain
                    .makruk_start(self.first)
                    .map_err(|e| unreadable_start(&e))?;
                let mut inference = MakrukInference::new(start.clone(), self.infer.clone());
                let mut view = PgnView::new(start);
                for (index, event) in moves.iter().enumerate() {
                    let san = event.notation.as_deref().unwrap_or("");
                    let position = inference.position().clone();
                    let mv =
                        makruk::san::parse_san(&position, san).map_err(|_| unreadable(event))?;
                    view.set_move(
                        index + 1,
                        SanMove {
                            color: position.turn(),
                            san: san.to_string(),
                        },
                        event.video_time,
                    );
                    inference.replay(mv, event.video_time.unwrap_or(0.0));
                }
                Stage8::Makruk {
                    inference: Box::new(inference.with_next_flag_id(next_flag_id)),
                    view,
                }
            }
        })
    }

    fn video_time(&self, time: f64) -> Option<f64> {
        (!self.live).then_some(time)
    }

    fn append(&mut self, event: Event) -> Result<u64, RecorderError> {
        let written = self.log.append(event)?;
        let seq = written.seq;
        if let Some(on_event) = self.on_event.as_mut() {
            on_event(written);
        }
        Ok(seq)
    }

    fn write_record(&self) -> Result<(), RecorderError> {
        match &self.stage {
            Some(stage) => {
                write_atomically(&self.out.join(stage.file_name()), stage.text().as_bytes())
            }
            None => Ok(()),
        }
    }

    /// A referee's action, written to the chain naming `by`. Refusals are `BadOptions`.
    /// An 8×8 game takes the closing of a flag and the correction of the last move;
    /// passes and dead stones are Go's.
    pub(super) fn act(&mut self, action: &Action, by: &str) -> Result<String, RecorderError> {
        if self.stage.is_none() {
            return Err(RecorderError::BadOptions(
                "no game has started on this board".into(),
            ));
        }
        let message = match action {
            Action::CloseFlag {
                flag_id,
                dismiss,
                note,
            } => self.close_flag(*flag_id, *dismiss, note, by)?,
            Action::UndoLastMove => self.correct_last_move(None, by)?,
            Action::ReplaceLastMoveWritten(written) => self.correct_last_move(Some(written), by)?,
            Action::ReplaceLastMove(_) => {
                return Err(RecorderError::BadOptions(format!(
                    "a {} move is corrected by the move as its record writes it, not by a point",
                    self.game_name()
                )));
            }
            Action::Pass(_) | Action::MarkDead { .. } => {
                return Err(RecorderError::BadOptions(format!(
                    "{} takes a referee's closing of a flag or correction of the last move; {action:?} is for Go",
                    self.game_name()
                )));
            }
        };
        self.last_line = message.clone();
        Ok(message)
    }

    fn close_flag(
        &mut self,
        flag_id: u32,
        dismiss: bool,
        note: &str,
        by: &str,
    ) -> Result<String, RecorderError> {
        let refuse = |message: String| Err(RecorderError::BadOptions(message));
        let Some(&(_, seq)) = self.flag_seqs.iter().find(|(id, _)| *id == flag_id) else {
            return refuse(format!("no flag {flag_id} in this game"));
        };
        if self.closed_flags.contains(&flag_id) {
            return refuse(format!("flag {flag_id} is already closed"));
        }
        if let Some(stage) = self.stage.as_mut() {
            stage.close_flag(flag_id);
        }
        self.closed_flags.push(flag_id);
        let (event, message) = super::actions::flag_closed(flag_id, seq, dismiss, note);
        let mut event = event.with_detail("by", by);
        event.video_time = self.video_time(self.now);
        self.append(event)?;
        if let Some(stage) = self.stage.as_mut() {
            stage.add_comment(&message);
        }
        self.write_record()?;
        Ok(message)
    }

    /// The referee's correction of the last standing move: `written` is the move played
    /// instead (checked against the position before it), `None` that no move was played.
    /// The chain keeps the move as first recorded; the correction note after it is what
    /// every reader of the chain ([`Chain8`]) applies, and the game is rebuilt from it.
    fn correct_last_move(
        &mut self,
        written: Option<&str>,
        by: &str,
    ) -> Result<String, RecorderError> {
        let events = super::read_chain(&self.out)?;
        let chain = Chain8::read(&events)
            .ok_or_else(|| RecorderError::BadOptions("no game has started on this board".into()))?;
        let Some(last) = chain.moves.last() else {
            return Err(RecorderError::BadOptions(
                "no move stands in this game to correct".into(),
            ));
        };
        let number = chain.moves.len();
        let was = last.notation.clone().unwrap_or_default();
        let color = last.color.unwrap_or(self.first);
        let mut event = Event::new(Kind::Note)
            .with_detail("note", CORRECTION)
            .with_detail("by", by)
            .with_detail("was", was.as_str());
        let message = match written {
            None => format!(
                "move {number} ({} {was}) removed by the referee: it was not played (misread)",
                color_name(color)
            ),
            Some(written) => {
                let before = self.build_stage(&chain, &chain.moves[..number - 1], 1)?;
                let (notation, points) = before
                    .written_move(written)
                    .map_err(RecorderError::BadOptions)?;
                if notation == was {
                    return Err(RecorderError::BadOptions(format!(
                        "move {number} is already recorded as {was}"
                    )));
                }
                event = event
                    .with_detail("notation", notation.as_str())
                    .with_points(points);
                format!(
                    "move {number} corrected by the referee: {} played {notation}, not {was} (misread)",
                    color_name(color)
                )
            }
        };
        event.move_number = Some(number as u32);
        event.color = Some(color);
        event = event.with_detail("message", message.as_str());
        event.video_time = self.video_time(self.now);
        self.append(event)?;
        self.rebuild()?;
        Ok(message)
    }

    /// Builds the game again from the chain, once a referee's correction is in it. The
    /// board as the camera last saw it stays what the next readings are compared with:
    /// where it differs from the corrected game, the difference is known (a misreading
    /// that persists is not read as the same move again, a move the camera missed is not
    /// read as a new one).
    fn rebuild(&mut self) -> Result<(), RecorderError> {
        let events = super::read_chain(&self.out)?;
        let resume_time = self.resume_time;
        self.moves = 0;
        self.flags = 0;
        self.flag_seqs.clear();
        self.closed_flags.clear();
        self.stage = None;
        self.caught_up_on = None;
        self.restore(&events)?;
        self.resume_time = resume_time;
        if let (Some(stage), Some(seen)) = (self.stage.as_mut(), self.tracker.settled_view()) {
            stage.acknowledge(seen);
        }
        Ok(())
    }

    fn game_name(&self) -> &'static str {
        match self.game {
            EightGame::Makhos => "Mak-hos",
            EightGame::Makruk => "Makruk",
        }
    }

    /// A note with the frame as evidence, the board outlined.
    fn board_note(
        &mut self,
        frame: &Frame,
        note: &str,
        message: &str,
        picture: bool,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        on_line(message);
        let event = self.note_event(frame, note, message, picture.then_some(&[]))?;
        self.append(event)?;
        Ok(())
    }

    /// A note on squares of a settled reading before the game starts: said on the live
    /// line, the frame as evidence with the squares circled, the squares, the board as
    /// read, at the time the reading settled.
    fn reading_note(
        &mut self,
        frame: &Frame,
        settled: &Settled8,
        note: &str,
        message: &str,
        squares: &[[usize; 2]],
        on_line: &mut dyn FnMut(&str),
    ) -> Result<Event, RecorderError> {
        on_line(message);
        let marks: Vec<([usize; 2], Mark)> = squares.iter().map(|&p| (p, Mark::Flagged)).collect();
        let mut event = self
            .note_event(frame, note, message, Some(&marks))?
            .with_points(squares.iter().copied());
        event
            .detail
            .insert("board".into(), json!(settled.occupancy.to_text_rows()));
        event.video_time = self.video_time(settled.since);
        Ok(event)
    }

    /// A note on what the board shows, at the frame's time; with `marks`, the frame as
    /// evidence with those squares circled and the message as its caption.
    fn note_event(
        &mut self,
        frame: &Frame,
        note: &str,
        message: &str,
        marks: Option<&[([usize; 2], Mark)]>,
    ) -> Result<Event, RecorderError> {
        let mut event = Event::new(Kind::Note)
            .with_detail("note", note)
            .with_detail("message", message);
        event.video_time = self.video_time(frame.time);
        if let Some(marks) = marks {
            event = event.with_evidence(evidence::write_frame(
                &self.log,
                &frame.image,
                self.tracker.geometry().as_ref(),
                marks,
                message,
                note,
            )?);
        }
        Ok(event)
    }

    fn track_events(
        &mut self,
        report: &Report8,
        frame: &Frame,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        for event in &report.events {
            match event {
                TrackEvent::Found { corners, how } => self.board_note(
                    frame,
                    "board-found",
                    &format!(
                        "8×8 board found by {how}; corners {}",
                        format_corners(corners)
                    ),
                    true,
                    on_line,
                )?,
                TrackEvent::Lost { reason } => self.board_note(
                    frame,
                    "board-lost",
                    &format!("board lost: {reason}"),
                    false,
                    on_line,
                )?,
                TrackEvent::Relocated {
                    corners,
                    quarter_turns,
                    agreement,
                    shift_pixels,
                } => self.board_note(
                    frame,
                    "relocated",
                    &format!(
                        "the board moved in the picture by up to {shift_pixels:.0} px and was found again; \
                         turned {quarter_turns} quarter(s) to match the recorded position, which {:.1} % of squares agree with; corners {}",
                        agreement * 100.0,
                        format_corners(corners)
                    ),
                    true,
                    on_line,
                )?,
                TrackEvent::Renewed => {}
            }
        }
        if let Some(orientation) = &report.oriented {
            self.oriented_by_start = orientation.source == OrientationSource::StartPosition;
            let how = match orientation.source {
                OrientationSource::StartPosition => "by the start position".to_string(),
                OrientationSource::ColouringOnly => format!(
                    "by the board's colouring only (turns {:?} possible; the pieces are not at the start): the first of them is assumed",
                    orientation.candidates
                ),
                OrientationSource::Unknown => {
                    "by nothing (a plain grid and the pieces not at the start): the picture's own rows are assumed".to_string()
                }
            };
            let message = format!(
                "the board is turned {} quarter(s) to the game's rows (White at the bottom) {how}",
                orientation.quarters.unwrap_or(0)
            );
            on_line(&message);
            let mut event = Event::new(Kind::Note)
                .with_detail("note", "oriented")
                .with_detail("message", message.as_str())
                .with_detail("orientation", json!(orientation));
            event.video_time = self.video_time(frame.time);
            self.append(event)?;
        }
        Ok(())
    }

    /// The position the record begins from and what the game-start note says of it: the
    /// position `--fen` gave, a Mak-hos game joined in progress, or the start position
    /// (for Mak-hos, with as many men as the closer of its two to `seen`).
    fn opening(&self, seen: &Occupancy) -> (Opening, Map<String, Value>) {
        let mut detail = Map::new();
        let opening = match (self.game, &self.given) {
            (_, Some(given @ Opening::Makhos(position))) => {
                detail.insert("fen".into(), makhos::fen(position).into());
                given.clone()
            }
            (_, Some(given @ Opening::Makruk(position))) => {
                detail.insert("fen".into(), position.to_fen().into());
                given.clone()
            }
            (EightGame::Makhos, None) => match self.joined {
                Some(Opening::Makhos(mut position)) => {
                    position.set_turn(self.first);
                    detail.insert("joined".into(), true.into());
                    detail.insert("fen".into(), makhos::fen(&position).into());
                    Opening::Makhos(position)
                }
                _ => {
                    let (men, start) = [Men::Eight, Men::Twelve]
                        .into_iter()
                        .map(|men| (men, makhos::Position::start(men, self.first)))
                        .max_by_key(|(_, start)| start.occupancy().agreement(seen))
                        .expect("two starts");
                    let men = match men {
                        Men::Eight => 8,
                        Men::Twelve => 12,
                    };
                    detail.insert("men".into(), men.into());
                    Opening::Makhos(start)
                }
            },
            (EightGame::Makruk, None) => {
                let start = match &self.joined {
                    Some(Opening::Makruk(joined)) => {
                        detail.insert("joined".into(), true.into());
                        joined.clone()
                    }
                    _ => makruk::Position::start(),
                };
                let start = if start.turn() == self.first {
                    start
                } else {
                    start.with_turn(self.first)
                };
                if self.joined.is_some() {
                    detail.insert("fen".into(), start.to_fen().into());
                }
                Opening::Makruk(start)
            }
        };
        (opening, detail)
    }

    /// The game starts from [`Self::opening`], which `seen` fits.
    fn start_game(&mut self, seen: &Occupancy, time: f64) -> Result<(), RecorderError> {
        let (opening, detail) = self.opening(seen);
        let mut stage = match opening {
            Opening::Makhos(position) => Stage8::makhos(position, self.infer.clone()),
            Opening::Makruk(position) => Stage8::makruk(position, self.infer.clone()),
        };
        if let Stage8::Makruk { inference, .. } = &mut stage {
            inference.set_unsure_figures(self.joined_unsure.clone());
        }
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "game-start")
            .with_detail("game", json!(self.game))
            .with_detail("first", color_name(self.first));
        event.detail.extend(detail);
        let board = stage.board();
        let mismatches = 64 - board.agreement(seen);
        event = event.with_detail("start_mismatches", mismatches);
        event
            .detail
            .insert("board".into(), json!(board.to_text_rows()));
        event.video_time = self.video_time(time);
        self.append(event)?;
        self.stage = Some(stage);
        self.caught_up_on = None;
        self.write_record()
    }

    /// Before the game starts: starts it when the settled reading fits the opening
    /// ([`fits_opening`]); turns the board when it fits under another quarter turn (the
    /// tracker had to assume one); joins a Mak-hos game in progress; else waits, saying so
    /// once. True when the game has started.
    fn try_start(
        &mut self,
        settled: &Settled8,
        frame: &Frame,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<bool, RecorderError> {
        let seen = &settled.occupancy;
        let fits = |this: &Self, seen: &Occupancy| {
            fits_opening(this.game, &this.opening(seen).0.occupancy(), seen)
        };
        if fits(self, seen) {
            self.start_game(seen, settled.since)?;
            return Ok(true);
        }
        if let Some(quarters) = (1..4).find(|&q| fits(self, &seen.turned(q))) {
            self.tracker.turn_further(quarters);
            let message = format!(
                "the board is turned {quarters} quarter(s) further to the game's rows: the start position fits the reading that way"
            );
            self.board_note(frame, "oriented", &message, false, on_line)?;
            return Ok(false);
        }
        if self.given.is_none() && self.try_join(settled, frame, on_line)? {
            return Ok(true);
        }
        if !self.waiting_noted {
            self.waiting_noted = true;
            let mismatches = self.opening(seen).0.occupancy().differences(seen);
            let message = format!(
                "waiting for the start position: the board read differs from it on {} squares, too many to be misread; no move is recorded until a reading fits{}",
                mismatches.len(),
                match (self.game, &self.given) {
                    (_, Some(_)) => " the position --fen gave",
                    (_, None) => ", or a game in progress holds still",
                }
            );
            let event = self
                .reading_note(
                    frame,
                    settled,
                    "waiting-for-start",
                    &message,
                    &mismatches,
                    on_line,
                )?
                .with_detail("start_mismatches", mismatches.len());
            self.append(event)?;
        }
        Ok(false)
    }

    /// A reading no start fits, held for [`JOIN_AFTER`] and a position a game can reach
    /// (Mak-hos: men on the dark squares only, at most 8 a side; Makruk: pieces the start
    /// position's can have become, [`makruk::join`]), is a game in progress: it is where
    /// the record starts, White's pieces turned to the bottom. True when joined.
    fn try_join(
        &mut self,
        settled: &Settled8,
        frame: &Frame,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<bool, RecorderError> {
        let resolved = match self.game {
            EightGame::Makhos => Ok(settled.occupancy.clone()),
            EightGame::Makruk => makruk_join_reading(settled),
        };
        let seen = resolved.as_ref().unwrap_or(&settled.occupancy);
        let Some((quarters, joining)) =
            join_turn(self.game, seen, self.first, self.oriented_by_start)
        else {
            self.joinable = None;
            return Ok(false);
        };
        if quarters != 0 {
            self.tracker.turn_further(quarters);
            self.joinable = None;
            return Ok(false);
        }
        let unsure = match &resolved {
            Ok(_) if self.game == EightGame::Makhos => unsure_squares(settled),
            Ok(_) => Vec::new(),
            Err(unsure) => unsure.clone(),
        };
        if !unsure.is_empty() {
            // The hold starts again once every square reads sure.
            self.joinable = None;
            if !self.join_unsure_noted {
                self.join_unsure_noted = true;
                let message = format!(
                    "a game in progress may be on the board, but {} of its squares read too unsure to join it from (under {:.0} % for any one reading); waiting for a surer view",
                    unsure.len(),
                    100.0 * JOIN_CONFIDENCE
                );
                let event =
                    self.reading_note(frame, settled, "join-unsure", &message, &unsure, on_line)?;
                self.append(event)?;
            }
            return Ok(false);
        }
        let since = match &self.joinable {
            Some((held, since)) if held == seen => *since,
            _ => settled.since,
        };
        self.joinable = Some((seen.clone(), since));
        if frame.time - since < JOIN_AFTER {
            return Ok(false);
        }
        let (white, black) = (
            seen.count(Some(Color::White)),
            seen.count(Some(Color::Black)),
        );
        let figures = match &joining {
            Joining::Makhos(position) => {
                self.joined = Some(Opening::Makhos(*position));
                "men unless on their far row".to_string()
            }
            Joining::Makruk(joined) => {
                self.first = joined.position.turn();
                self.joined = Some(Opening::Makruk(joined.position.clone()));
                self.joined_unsure.clone_from(&joined.uncertain);
                makruk_figures_note(joined)
            }
        };
        self.start_game(seen, since)?;
        let message = format!(
            "joined a game in progress: {white} white and {black} black pieces on the board, {figures}; {} to move is assumed until the first move shows",
            color_name(self.first)
        );
        on_line(&message);
        let unsure: Vec<[usize; 2]> = match &joining {
            Joining::Makhos(_) => Vec::new(),
            Joining::Makruk(joined) => joined
                .uncertain
                .iter()
                .map(|(square, _)| {
                    let (row, col) = square.row_col();
                    [row, col]
                })
                .collect(),
        };
        let marks: Vec<([usize; 2], Mark)> = unsure.iter().map(|&p| (p, Mark::Flagged)).collect();
        let event = self
            .note_event(frame, "joined-in-progress", &message, Some(&marks))?
            .with_points(unsure);
        self.append(event)?;
        if let Some(stage) = self.stage.as_mut() {
            stage.add_comment(&format!("joined a game in progress at t={since:.2}s"));
        }
        self.write_record()?;
        Ok(true)
    }

    /// Before the first move, when nothing said who makes it (a Mak-hos game whose
    /// `--first` did not say, a game joined in progress): the other side, when the board
    /// shows one of its moves and none of the side assumed. A move shows when every square
    /// it changes reads as after it and the reading is closer to the position after it
    /// than to the one before (a misread square elsewhere stays as misread).
    fn opening_mover(&self, seen: &Occupancy) -> Option<Color> {
        let (played, start_turn_known, before) = match &self.stage {
            Some(Stage8::Makhos { inference, .. }) => (
                inference.moves_played(),
                self.first_given,
                inference.position().occupancy(),
            ),
            // Makruk's start is White's to move (MAKRUK 1); only a joined game's is a guess.
            Some(Stage8::Makruk { inference, .. }) => (
                inference.moves_played(),
                true,
                inference.position().occupancy(),
            ),
            None => return None,
        };
        if (start_turn_known && self.joined.is_none()) || played > 0 {
            return None;
        }
        let afters = |color: Color| -> Vec<Occupancy> {
            match &self.stage {
                Some(Stage8::Makhos { inference, .. }) => {
                    let mut from = *inference.position();
                    from.set_turn(color);
                    from.legal_moves()
                        .iter()
                        .map(|mv| from.play(mv).occupancy())
                        .collect()
                }
                Some(Stage8::Makruk { inference, .. }) => {
                    let from = inference.position().with_turn(color);
                    from.legal_moves()
                        .iter()
                        .map(|mv| from.after(mv).occupancy())
                        .collect()
                }
                None => Vec::new(),
            }
        };
        let misread = seen.differences(&before).len();
        let opens = |color: Color| {
            afters(color).iter().any(|after| {
                before
                    .differences(after)
                    .iter()
                    .all(|&[row, col]| seen.get(row, col) == after.get(row, col))
                    && seen.differences(after).len() < misread
            })
        };
        let other = self.first.opponent();
        (opens(other) && !opens(self.first)).then_some(other)
    }

    fn settled(
        &mut self,
        settled: &Settled8,
        frame: &Frame,
        hand_over: bool,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        let settled = &with_rules_prior(self.game, settled);
        if self.stage.is_none() && !self.try_start(settled, frame, on_line)? {
            return Ok(());
        }
        if let Some(mover) = self.opening_mover(&settled.occupancy) {
            self.first = mover;
            self.start_game(&settled.occupancy, settled.since)?;
        }
        let video_time = self.video_time(settled.since);
        let stage = self.stage.as_mut().expect("started above");
        let before_board = stage.board();
        stage.knocked_after_hand(self.bursts.knocked(self.hands.count() > 0));
        let (still, moved, stirred) = match (&settled.pictures, &self.caught_up_on) {
            (Some(now), Some(then)) => {
                let changes = now.changes_from(&then.pictures);
                (
                    changes.at_most(STILL_AT_MOST),
                    changes.at_least(MOVED_AT_LEAST),
                    changes.at_least(STIRRED_AT_LEAST),
                )
            }
            _ => (0, 0, 0),
        };
        // Only where the reader saw nothing change at all: a change it did see is
        // explained by the readings, and a picture changed beside it (a shadow, an arm's
        // sleeve) must not unread the squares that explanation needs (Makruk 310557: a
        // piece added on e5 changed e7's and e8's pictures by 40, and with them unread the
        // Knight e7-e5 fitted the addition).
        let reader_saw_nothing = self
            .caught_up_on
            .as_ref()
            .is_some_and(|then| then.reading == settled.occupancy);
        let squares = if reader_saw_nothing {
            unread_where_pictures_moved(&settled.squares, moved, &before_board)
        } else {
            settled.squares.clone()
        };
        let rules_before = stage.rules();
        let confirmed = self
            .caught_up_on
            .as_ref()
            .map_or(0, |then| then.confirmed & still);
        let squares = kept_where_confirmed(&squares, confirmed, &rules_before);
        let mut decisions = stage.observe(
            &Seen8 {
                squares: &squares,
                since: settled.since,
                now: frame.time,
                hand_seen: self.hands.count() > 0,
                motion_seen: self.hands.moved(),
                still,
                moved,
                stirred,
            },
            video_time,
        );
        let acted = stage.acted();
        let renews = renews_view(
            hand_over,
            self.caught_up_on.is_some(),
            stage.board() != before_board,
        );
        if stage.caught_up() && renews {
            let rules_after = stage.rules();
            let recorded_change = square_bits(&changes(&rules_before, &rules_after).0);
            let agreeing = standing_alike(&settled.occupancy, &rules_after) & stage.tall_figures();
            self.caught_up_on = settled.pictures.clone().map(|pictures| CaughtUp {
                pictures,
                reading: settled.occupancy.clone(),
                confirmed: confirmed_after(confirmed, agreeing, recorded_change, moved),
            });
        }
        if !settled.slid.is_empty() {
            decisions.extend(stage.pushed(&settled.slid, video_time));
        }
        // Whatever the hand did, it left the squares as they were.
        let unchanged = settled.occupancy == before_board;
        if decisions.is_empty() && !acted {
            if unchanged {
                self.hands.restart_unchanged(frame.time);
                self.bursts.restart();
            }
            if self.before.is_none() {
                self.before = Some(evidence::reduce(&frame.image)?);
            }
            return Ok(());
        }
        let after_board = self.stage.as_ref().expect("started").board();
        self.write_decisions(
            &decisions,
            settled,
            frame,
            &before_board,
            &after_board,
            on_line,
        )?;
        if acted {
            self.hands.restart_acted(settled.since, frame.time);
            self.bursts.restart();
        } else if unchanged {
            self.hands.restart_unchanged(frame.time);
            self.bursts.restart();
        }
        Ok(())
    }

    /// Writes one decision: its evidence pair, its events, then the record.
    fn write_decisions(
        &mut self,
        decisions: &[Decision],
        settled: &Settled8,
        frame: &Frame,
        before_board: &Occupancy,
        after_board: &Occupancy,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        let changed = before_board.differences(&settled.occupancy);
        // How sure the vote was of the squares that changed: the least of their winning shares.
        let confidence = changed
            .iter()
            .map(|&[row, col]| {
                settled.squares[row * 8 + col]
                    .iter()
                    .copied()
                    .fold(0.0, f32::max)
            })
            .fold(1.0f32, f32::min);
        let worth_pictures = decisions
            .iter()
            .any(|d| matches!(d.kind, Kind::Move | Kind::Flag));
        let mut pictures = Vec::new();
        let (after, factor) = evidence::reduce(&frame.image)?;
        if worth_pictures {
            let caption = decisions
                .iter()
                .filter(|d| matches!(d.kind, Kind::Move | Kind::Flag))
                .map(|d| d.line.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            let mut marks: Vec<([usize; 2], Mark)> = before_board
                .differences(after_board)
                .into_iter()
                .map(|[row, col]| {
                    let mark = if after_board.get(row, col).is_some() {
                        Mark::Placed
                    } else {
                        Mark::Lifted
                    };
                    ([row, col], mark)
                })
                .collect();
            for decision in decisions.iter().filter(|d| d.kind == Kind::Flag) {
                marks.extend(decision.points.iter().map(|&p| (p, Mark::Flagged)));
            }
            pictures = evidence::write_pair(
                &self.log,
                self.before.as_ref(),
                (&after, factor),
                self.tracker.geometry().as_ref(),
                &marks,
                &caption,
            )?;
        }
        self.before = Some((after, factor));
        let rules_rows = self
            .stage
            .as_ref()
            .map(Stage8::rules_rows)
            .unwrap_or_default();
        for decision in decisions {
            let mut event = Event::new(decision.kind).with_points(decision.points.iter().copied());
            event.move_number = decision.move_number.map(|n| n as u32);
            event.color = decision.color;
            event.notation = decision.notation.clone();
            event.rules = decision.rules.iter().map(Article::to_string).collect();
            event.penalties = decision.penalties.iter().map(Penalty::to_string).collect();
            event.detail = decision.detail.clone();
            if let Some(note) = decision.note {
                event.detail.insert("note".into(), note.into());
                event
                    .detail
                    .entry("message")
                    .or_insert_with(|| decision.line.clone().into());
            }
            if matches!(decision.kind, Kind::Move | Kind::Flag) {
                event.confidence = Some(f64::from(confidence));
                event.evidence = pictures.clone();
            }
            if decision.kind == Kind::Resolved
                && let Some(&(_, seq)) = self
                    .flag_seqs
                    .iter()
                    .find(|(id, _)| Some(*id) == decision.flag_id)
            {
                event.detail.insert("resolves".into(), seq.into());
            }
            event
                .detail
                .insert("board".into(), json!(after_board.to_text_rows()));
            event.detail.insert("rules_board".into(), json!(rules_rows));
            event.video_time = self.video_time(settled.since);
            let seq = self.append(event)?;
            match decision.kind {
                Kind::Move => self.moves = decision.move_number.unwrap_or(self.moves + 1),
                Kind::Flag => {
                    self.flags += 1;
                    if let Some(id) = decision.flag_id {
                        self.flag_seqs.push((id, seq));
                    }
                }
                Kind::Resolved => self.closed_flags.extend(decision.flag_id),
                _ if decision.note == Some("taken-back") => {
                    self.moves = decision.move_number.map_or(self.moves, |n| n - 1);
                }
                _ => {}
            }
            self.last_line = decision.line.clone();
            on_line(&decision.line);
        }
        self.write_record()
    }
}

/// Whether a settled reading (game rows) is the opening position `opening` of `game`
/// seen with the slips the stage's `added`, `removed` and `displaced` flags are for: at
/// most [`MISSING_AT_START`] of the opening's pieces not seen where they stand, and at
/// most [`MISREAD_AT_START`] other squares read otherwise (Mak-hos: as many in all). The
/// opening's pieces are what tell it; a lattice off by a square leaves many of them
/// unseen (Makruk seed 310100, its lattice a column off: 37 squares, 18 of the pieces),
/// while the reader's commoner slips on Makruk's tall figures add: a row of them read
/// again on the empty row behind (seed 601: 8 squares), figures of one colour read as
/// the other in coloured light (seed 602: 12). Mak-hos discs cover their own square only,
/// and a Mak-hos game 8 moves on has as few as 4 men off their home squares: there, 4
/// squares in all, or the game in progress would be taken for the start.
fn fits_opening(game: EightGame, opening: &Occupancy, seen: &Occupancy) -> bool {
    let differences = opening.differences(seen);
    let missing = differences
        .iter()
        .filter(|&&[row, col]| opening.get(row, col).is_some() && seen.get(row, col).is_none())
        .count();
    match game {
        EightGame::Makhos => differences.len() <= MISSING_AT_START,
        EightGame::Makruk => {
            missing <= MISSING_AT_START && differences.len() - missing <= MISREAD_AT_START
        }
    }
}

/// Pieces of the opening a reading may miss: a first move already made and a piece
/// hidden or misread.
const MISSING_AT_START: usize = 4;

/// Squares besides the missing pieces a reading of a Makruk opening may get wrong: a
/// quarter of the board.
const MISREAD_AT_START: usize = 16;

/// How long (source seconds) a Mak-hos reading no start fits must hold, the same on every
/// settled view, before it is joined as a game in progress: on top of the settle window,
/// twice a hand's longest pause over the board, and shorter than the 1.5 s the rendered
/// players leave between moves, so that a game is joined before its next move.
const JOIN_AFTER: f64 = 1.0;

/// The least share of the settled vote every square must give its reading before a game
/// in progress is joined from it. Joining builds the whole record on one reading, so it
/// must be sure of every square: on the rendered join test the least sure square had
/// 0.98, while Mak-hos 300217, whose dark men were not seen, joined a position with a
/// square at 0.45.
const JOIN_CONFIDENCE: f32 = 0.8;

/// The Mak-hos squares of play (game rows) where a settled reading's vote is under
/// [`JOIN_CONFIDENCE`].
fn unsure_squares(settled: &Settled8) -> Vec<[usize; 2]> {
    unsure_where(settled, |row, col| makhos::Square::at(row, col).is_some())
}

fn unsure_where(settled: &Settled8, counts: impl Fn(usize, usize) -> bool) -> Vec<[usize; 2]> {
    settled
        .squares
        .iter()
        .enumerate()
        .map(|(index, p)| ([index / 8, index % 8], p))
        .filter(|([row, col], p)| {
            counts(*row, *col) && p.iter().copied().fold(0.0, f32::max) < JOIN_CONFIDENCE
        })
        .map(|(square, _)| square)
        .collect()
}

/// The most unsure squares a Makruk reading may have and still be joined from.
const MAKRUK_JOIN_UNSURE_AT_MOST: usize = 4;

/// The Makruk reading a game in progress is joined from, the rules deciding what the
/// pixels cannot: a tall figure hides the square behind it, so a square or two reads
/// unsure for as long as the figure stands. Of the readings the unsure squares' two
/// likelier calls allow, the one a game from the start reaches in the fewest moves
/// ([`makruk::moves_to_reach`]) and captures, the likelier reading on a tie. A piece gone
/// costs two moves: the capture, and the capturer's going on, for the square it was taken
/// on is not the capturer's now (on 310276 a home-row Khon hidden behind a Khun read as
/// taken, as short a game by the moves alone as with it home). Err with the unsure
/// squares when there are too many, or no reading a game reaches.
fn makruk_join_reading(settled: &Settled8) -> Result<Occupancy, Vec<[usize; 2]>> {
    let unsure = unsure_where(settled, |_, _| true);
    if unsure.len() > MAKRUK_JOIN_UNSURE_AT_MOST {
        return Err(unsure);
    }
    let calls = |p: &[f32; 3]| {
        let mut order = [0, 1, 2];
        order.sort_by(|&a, &b| p[b].total_cmp(&p[a]));
        [order[0], order[1]]
    };
    let mut best: Option<(usize, f32, Occupancy)> = None;
    for choice in 0..1usize << unsure.len() {
        let mut reading = settled.occupancy.clone();
        let mut likelihood = 1.0;
        for (k, &[row, col]) in unsure.iter().enumerate() {
            let p = &settled.squares[row * 8 + col];
            let call = calls(p)[(choice >> k) & 1];
            likelihood *= p[call];
            reading.set(row, col, state_color(call));
        }
        let Some(moves) = makruk::moves_to_reach(&reading)
            .filter(|&moves| makruk_plausible(moves))
            .map(|[white, black]| white + black)
        else {
            continue;
        };
        let pieces = 64 - reading.count(None);
        let moves = moves + 2 * 32usize.saturating_sub(pieces);
        let better = best.as_ref().is_none_or(|(fewest, likeliest, _)| {
            moves < *fewest || (moves == *fewest && likelihood > *likeliest)
        });
        if better {
            best = Some((moves, likelihood, reading));
        }
    }
    best.map(|(_, _, reading)| reading).ok_or(unsure)
}

/// A position the record begins from: the one `--fen` gave, a game joined in progress or
/// the start.
#[derive(Clone, Debug)]
enum Opening {
    Makhos(makhos::Position),
    Makruk(makruk::Position),
}

impl Opening {
    /// Reads `fen` as `game`'s FEN and checks it is a position a game can reach; refused
    /// with exit 2 otherwise.
    fn parse(game: EightGame, fen: &str) -> Result<Opening, RecorderError> {
        let bad = |why: String| RecorderError::BadOptions(format!("--fen {fen:?}: {why}"));
        match game {
            EightGame::Makhos => {
                let position = makhos::read_fen(fen).map_err(|e| bad(e.to_string()))?;
                let (white, black) = (position.count(Color::White), position.count(Color::Black));
                if !(1..=12).contains(&white) || !(1..=12).contains(&black) {
                    return Err(bad(format!(
                        "{white} white and {black} black pieces: each side has 1 to 12"
                    )));
                }
                let promoted = Square::all().find(|&square| {
                    position.piece_at(square).is_some_and(|piece| {
                        piece.kind == makhos::Kind::Man
                            && square.row_col().0 == far_row(piece.color)
                    })
                });
                if let Some(square) = promoted {
                    return Err(bad(format!(
                        "a man on square {square}, its far row: it would have been crowned (HOS 1.2.2)"
                    )));
                }
                Ok(Opening::Makhos(position))
            }
            EightGame::Makruk => makruk::Position::from_fen(fen)
                .map(Opening::Makruk)
                .map_err(|e| bad(e.to_string())),
        }
    }

    fn turn(&self) -> Color {
        match self {
            Opening::Makhos(position) => position.turn(),
            Opening::Makruk(position) => position.turn(),
        }
    }

    fn occupancy(&self) -> Occupancy {
        match self {
            Opening::Makhos(position) => position.occupancy(),
            Opening::Makruk(position) => position.occupancy(),
        }
    }
}

/// The row (game rows, White at the bottom) where a man of `color` is crowned.
fn far_row(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 7,
    }
}

/// The Mak-hos position `seen` (game rows) shows, when a game can reach it: pieces on the
/// dark squares only, 1 to 8 a side. Pixels cannot tell a king from a man, so every piece
/// is a man but those on their far row, which can only be kings (HOS 1.2.2); a king
/// elsewhere is recorded as a man and its moves as a man's (flagged if a man could not
/// make them).
fn joinable(seen: &Occupancy, to_move: Color) -> Option<makhos::Position> {
    let mut position = makhos::Position::empty(to_move);
    for row in 0..8 {
        for col in 0..8 {
            let Some(color) = seen.get(row, col) else {
                continue;
            };
            let square = Square::at(row, col)?;
            let kind = if row == far_row(color) {
                makhos::Kind::King
            } else {
                makhos::Kind::Man
            };
            position.set(square, Some(makhos::Piece { color, kind }));
        }
    }
    let counts = [position.count(Color::White), position.count(Color::Black)];
    counts
        .iter()
        .all(|count| (1..=8).contains(count))
        .then_some(position)
}

/// The further quarter turn a game in progress is joined under, and its position: of the
/// turns under which `seen` is a position a game can reach, the one that puts White's
/// pieces nearest the bottom; none but the tracker's own when the pieces once stood as at
/// the start that way round (a reading that fits a game in progress only turned is a
/// misread start, not a reason to turn the board).
fn join_turn(
    game: EightGame,
    seen: &Occupancy,
    to_move: Color,
    oriented_by_start: bool,
) -> Option<(usize, Joining)> {
    let turns = if oriented_by_start { 0..1 } else { 0..4 };
    match game {
        EightGame::Makhos => turns
            .filter_map(|q| joinable(&seen.turned(q), to_move).map(|p| (q, p)))
            .max_by_key(|(_, position)| white_lead(position))
            .map(|(q, position)| (q, Joining::Makhos(position))),
        // A Makruk reading is not a reason to turn the board: 310106's misread view fitted
        // an early game only turned, and the board turned that way never showed its start.
        EightGame::Makruk => {
            makruk::moves_to_reach(seen).filter(|&moves| makruk_plausible(moves))?;
            let joined = makruk::join(seen)?;
            Some((0, Joining::Makruk(Box::new(joined))))
        }
    }
}

/// Whether the fewest moves White and Black need to reach a reading are a game's to join:
/// Black never has made more moves than White, so Black needing more than White's fewest
/// and a couple of lost tempi is a misread board; and a reading that needs more than
/// [`MAKRUK_JOIN_MOVES_AT_MOST`] moves a side is likelier a lattice off the board than a
/// game (on development clips every reading that needed more was one: 310307 read the
/// figures in columns, 30 and 32 moves; 310312 a row off the start, 12 and 13; joining
/// them recorded 25 to 34 false flags), and its figures are seldom all known anyway.
/// `--fen` gives a game further on.
fn makruk_plausible([white, black]: [usize; 2]) -> bool {
    white <= MAKRUK_JOIN_MOVES_AT_MOST && black <= white + 2
}

/// The most moves a side may need to reach a Makruk reading that is joined: past eight
/// each, the fewest-moves figures stop being right or named as open in about one game of
/// ten (the opening probe in docs/record-eight.md).
const MAKRUK_JOIN_MOVES_AT_MOST: usize = 8;

/// A game in progress about to be joined, as each game's reading of it.
enum Joining {
    Makhos(makhos::Position),
    Makruk(Box<makruk::Joined>),
}

/// What the joining note says of the figures of a Makruk game joined in progress.
fn makruk_figures_note(joined: &makruk::Joined) -> String {
    let [white, black] = joined.moves;
    let mut note = format!(
        "each figure the start piece that reaches its square in the fewest moves ({white} White, {black} Black)"
    );
    if !joined.uncertain.is_empty() {
        let unsure: Vec<String> = joined
            .uncertain
            .iter()
            .map(|(square, roles)| {
                let names: Vec<&str> = roles.iter().map(|role| role.thai_name()).collect();
                format!("{square} {}", names.join(" or "))
            })
            .collect();
        note.push_str(&format!("; unsure until they move: {}", unsure.join(", ")));
    }
    note
}

/// How much further down the board (game rows) White's pieces stand than Black's, in
/// hundredths of a row: White's men start at the bottom and only move up.
fn white_lead(position: &makhos::Position) -> i64 {
    let mean_row = |color: Color| {
        let rows: Vec<usize> = position
            .pieces(color)
            .map(|(square, _)| square.row_col().0)
            .collect();
        100 * rows.iter().sum::<usize>() as i64 / rows.len().max(1) as i64
    };
    mean_row(Color::White) - mean_row(Color::Black)
}

fn unreadable_start(error: &crate::games::ParseError) -> RecorderError {
    RecorderError::BadOptions(format!(
        "the record's start position does not read: {error}"
    ))
}

impl Recording for EightRecording {
    fn set_on_event(&mut self, on_event: Option<EventHook>) {
        self.on_event = on_event;
        if let (Some(on_event), Some(last)) = (self.on_event.as_mut(), self.log.last()) {
            on_event(last);
        }
    }

    fn resume_time(&self) -> Option<f64> {
        self.resume_time
    }

    fn started(&self) -> bool {
        // A board whose position never fitted the start was found and said so: the record
        // holds why no move is in it.
        self.stage.is_some() || self.waiting_noted
    }

    fn progress(&self) -> (usize, usize, &str) {
        (self.moves, self.flags, &self.last_line)
    }

    fn write(&mut self, time: f64, mut event: Event) -> Result<(), RecorderError> {
        event.video_time = self.video_time(time);
        self.append(event).map(|_| ())
    }

    fn take_actions(
        &mut self,
        actions: &mpsc::Receiver<ActionRequest>,
        _on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        super::actions::answer_actions(actions, |action, by| self.act(action, by))
    }

    fn give_geometry(
        &mut self,
        _calibration: &crate::geometry::calibration::Calibration,
        _width: i32,
        _height: i32,
    ) {
        // The 8×8 board is always found by the locator: a calibration's corners are Go's.
    }

    fn look(&mut self, frame: &Frame, on_line: &mut dyn FnMut(&str)) -> Result<(), RecorderError> {
        self.now = frame.time;
        let report = self
            .tracker
            .analyse(&frame.image, frame.time, frame.index)?;
        if self.trace {
            let differences = match (&report.settled, &self.stage) {
                (Some(settled), Some(stage)) => stage
                    .board()
                    .differences(&settled.occupancy)
                    .iter()
                    .map(|&[row, col]| {
                        let p = settled.squares[row * 8 + col];
                        format!(
                            "{}{}({:.2}/{:.2}/{:.2})",
                            algebraic(row, col),
                            settled.occupancy.get(row, col).map_or('.', |c| c.letter()),
                            p[0],
                            p[1],
                            p[2]
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                _ => "-".into(),
            };
            let slid = report
                .settled
                .as_ref()
                .map(|s| s.slid.as_slice())
                .unwrap_or_default();
            // The squares that changed since the stage caught up, with how much.
            let changed = match (
                report.settled.as_ref().and_then(|s| s.pictures.as_ref()),
                &self.caught_up_on,
            ) {
                (Some(now), Some(then)) => now
                    .changes_from(&then.pictures)
                    .0
                    .iter()
                    .enumerate()
                    .filter(|(_, change)| change.is_none_or(|change| change > 2.0))
                    .map(|(index, change)| {
                        format!(
                            "{}:{:.0}",
                            algebraic(index / 8, index % 8),
                            change.unwrap_or(f32::NAN)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                _ => "-".into(),
            };
            eprintln!(
                "{:8.2} {:?} reach={} stirred={} settled={} differences={differences} slid={slid:?} changed={changed}",
                frame.time,
                report.view,
                report.reach,
                report.stirred,
                report.settled.as_ref().map_or(0, |s| s.frames),
            );
        }
        self.track_events(&report, frame, on_line)?;
        // Motion that nothing brought across the board's edge is a piece knocked by
        // accident, no player's hand: its change is a disturbance, not a move.
        if report.reach {
            self.hands.reach();
            self.bursts.reach(frame.time);
        }
        if report.stirred {
            self.hands.stir(frame.time, report.reach);
        }
        if matches!(report.view, View::Moving { .. } | View::Covered { .. }) {
            self.hands.over(frame.time);
            self.bursts.over(frame.time);
        }
        if let Some(settled) = &report.settled {
            self.settled(settled, frame, report.reach || report.stirred, on_line)?;
            if let Some(stage) = &self.stage {
                self.tracker.believe(stage.board());
            }
        }
        Ok(())
    }

    fn end_of_source(
        &mut self,
        last: &Frame,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        if let Some(settled) = self.tracker.finish() {
            self.settled(&settled, last, false, on_line)?;
        }
        Ok(())
    }

    fn final_position(&self, summary: &mut Summary) -> Option<Event> {
        let stage = self.stage.as_ref()?;
        summary.final_rows = stage.board().to_text_rows();
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "final-position")
            .with_detail("message", "the position at the end of the footage");
        event
            .detail
            .insert("rules_board".into(), json!(stage.rules_rows()));
        event
            .detail
            .insert("board".into(), json!(summary.final_rows));
        Some(event)
    }

    fn no_board(&self, source: &str, frames: u64) -> Result<RecorderError, RecorderError> {
        Ok(RecorderError::NoBoard {
            input: source.to_string(),
            frames,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_in_progress_keeps_the_turn_the_start_position_decided() {
        // White's pieces on the top two rows, Black's on the bottom two: the picture's
        // rows upside down to a game in progress, or a start read with its colours swapped.
        let mut seen = Occupancy::empty(8, 8);
        for (rows, color) in [(0..2, Color::White), (6..8, Color::Black)] {
            for row in rows {
                for col in 0..8 {
                    if Square::at(row, col).is_some() {
                        seen.set(row, col, Some(color));
                    }
                }
            }
        }
        let turn =
            |by_start| join_turn(EightGame::Makhos, &seen, Color::White, by_start).map(|(q, _)| q);
        assert_eq!(turn(false), Some(2), "White's pieces turned to the bottom");
        assert_eq!(turn(true), Some(0), "the start position's turn is kept");
    }

    #[test]
    fn motion_crossing_no_edge_after_a_hand_is_a_knock_and_a_second_hand_is_not() {
        // 300221: White's hand (reaching) until 76.6 s, a knock at 77.2 s, still after.
        let mut bursts = Bursts::default();
        for time in [75.5, 75.6, 76.6] {
            bursts.reach(time);
            bursts.over(time);
        }
        assert!(!bursts.knocked(true), "the hand alone");
        bursts.over(77.2);
        assert!(bursts.knocked(true));
        // Black's hand comes: still so until the position is acted on.
        bursts.reach(78.7);
        bursts.over(78.7);
        assert!(bursts.knocked(true));
        bursts.restart();
        assert!(!bursts.knocked(true));
        // A second hand soon after the first crosses the edge itself.
        let mut blitz = Bursts::default();
        blitz.reach(10.0);
        blitz.over(10.0);
        blitz.over(10.7);
        blitz.reach(10.8);
        blitz.over(10.8);
        assert!(!blitz.knocked(true));
        // Motion with no hand at all is the stage's own disturbance, no knock after one.
        let mut alone = Bursts::default();
        alone.over(3.0);
        assert!(!alone.knocked(false));
    }

    /// A record folder holding a game of `game` with `moves` (as the record writes them),
    /// as a recording leaves it.
    fn recorded(game: &str, moves: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut detail = Map::new();
        detail.insert("game".into(), game.into());
        let mut log = EventLog::create(dir.path(), detail).unwrap();
        log.append(
            Event::new(Kind::Note)
                .with_detail("note", "game-start")
                .with_detail("game", game)
                .with_detail("first", "white"),
        )
        .unwrap();
        for (index, notation) in moves.iter().enumerate() {
            let color = [Color::White, Color::Black][index % 2];
            log.append(Event::new(Kind::Move).with_move(index as u32 + 1, color, *notation))
                .unwrap();
        }
        dir
    }

    fn standing(dir: &std::path::Path) -> Vec<String> {
        let events = super::super::read_chain(dir).unwrap();
        Chain8::read(&events)
            .unwrap()
            .moves
            .iter()
            .map(|m| m.notation.clone().unwrap())
            .collect()
    }

    fn act(dir: &std::path::Path, action: Action) -> Result<String, RecorderError> {
        super::super::apply_action(dir, &action, "referee:Anan", None)
    }

    #[test]
    fn a_referee_replaces_or_undoes_the_last_makruk_move_and_the_chain_still_verifies() {
        let dir = recorded("makruk", &["e4", "d5"]);
        let replaced = act(dir.path(), Action::ReplaceLastMoveWritten("e6e5".into())).unwrap();
        assert!(replaced.contains("black played e5, not d5"), "{replaced}");
        assert_eq!(standing(dir.path()), ["e4", "e5"]);
        let pgn = std::fs::read_to_string(dir.path().join("game.pgn")).unwrap();
        assert!(pgn.contains("1. e4") && pgn.contains("e5 {"), "{pgn}");
        assert!(pgn.contains("corrected by the referee"), "{pgn}");

        for refused in ["d4", "e5", "Zz9", "ab"] {
            let answer = act(dir.path(), Action::ReplaceLastMoveWritten(refused.into()));
            assert!(
                matches!(answer, Err(RecorderError::BadOptions(_))),
                "{refused}: {answer:?}"
            );
        }
        assert!(matches!(
            act(
                dir.path(),
                Action::ReplaceLastMove(crate::games::go::Point::new(3, 3))
            ),
            Err(RecorderError::BadOptions(_))
        ));

        let undone = act(dir.path(), Action::UndoLastMove).unwrap();
        assert!(undone.contains("move 2 (black e5) removed"), "{undone}");
        assert_eq!(standing(dir.path()), ["e4"]);
        let pgn = std::fs::read_to_string(dir.path().join("game.pgn")).unwrap();
        assert!(
            !pgn.contains("e5 {") && pgn.contains("removed by the referee"),
            "{pgn}"
        );
        act(dir.path(), Action::UndoLastMove).unwrap();
        assert!(standing(dir.path()).is_empty());
        assert!(matches!(
            act(dir.path(), Action::UndoLastMove),
            Err(RecorderError::BadOptions(_))
        ));
        let report = crate::record::verify(dir.path()).unwrap();
        assert!(report.intact, "{}", report.to_text());
    }

    #[test]
    fn after_a_correction_the_camera_view_it_contradicts_is_no_move_but_the_next_move_is() {
        let start = makruk::Position::start();
        let e4 = makruk::san::parse_san(&start, "e4").unwrap();
        let after_e4 = start.after(&e4);
        // The referee removed e4 (misread): the camera still shows it, and the rebuilt
        // stage stands at the start.
        let mut stage = Stage8::makruk(start.clone(), InferOptions::default());
        stage.acknowledge(&after_e4.occupancy());
        fn seen(squares: &[[f32; 3]], since: f64) -> Seen8<'_> {
            Seen8 {
                squares,
                since,
                now: since + 0.3,
                hand_seen: true,
                motion_seen: true,
                still: 0,
                moved: 0,
                stirred: 0,
            }
        }
        let read =
            |occupancy: &Occupancy| crate::infer::eight::probabilities(occupancy, &[0.97; 64]);
        let shown = read(&after_e4.occupancy());
        for since in [1.0, 2.0, 4.0] {
            let decisions = stage.observe(&seen(&shown, since), Some(since));
            assert!(
                decisions.is_empty(),
                "{:?}",
                decisions.iter().map(|d| &d.line).collect::<Vec<_>>()
            );
        }
        // White's real first move, d4, shows beside the misread e4: that is the move.
        let d4 = makruk::san::parse_san(&start, "d4").unwrap();
        let mut both = after_e4.occupancy();
        let moved = start.after(&d4).occupancy();
        for [row, col] in start.occupancy().differences(&moved) {
            both.set(row, col, moved.get(row, col));
        }
        let squares = read(&both);
        let decisions = stage.observe(&seen(&squares, 6.0), Some(6.0));
        let moves: Vec<&str> = decisions
            .iter()
            .filter(|d| d.kind == Kind::Move)
            .filter_map(|d| d.notation.as_deref())
            .collect();
        assert_eq!(
            moves,
            ["d4"],
            "{:?}",
            decisions.iter().map(|d| &d.line).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_referee_names_a_makhos_move_by_its_squares_and_a_capture_by_its_ends() {
        let start = makhos::Position::start(Men::Eight, Color::White);
        let first = start.legal_moves()[0];
        let after = start.play(&first);
        let replies = after.legal_moves();
        assert!(replies.len() >= 2, "two replies to choose from");
        let written = |mv: &makhos::Move| makhos::WrittenMove::from(mv).to_string();
        let dir = recorded("makhos", &[&written(&first), &written(&replies[0])]);
        let instead = written(&replies[1]);
        let replaced = act(dir.path(), Action::ReplaceLastMoveWritten(instead.clone())).unwrap();
        assert!(
            replaced.contains(&format!("played {instead}")),
            "{replaced}"
        );
        assert_eq!(standing(dir.path()), [written(&first), instead]);
        let pdn = std::fs::read_to_string(dir.path().join("game.pdn")).unwrap();
        assert!(pdn.contains(&written(&replies[1])), "{pdn}");
        for refused in ["1-32", "9", "x-y", ""] {
            assert!(
                act(dir.path(), Action::ReplaceLastMoveWritten(refused.into())).is_err(),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_makhos_record_holding_an_illegal_move_replays_it_as_it_stood() {
        let start = makhos::Position::start(Men::Eight, Color::White);
        let board = start.occupancy();
        // A white man set down two rows on along its diagonal, over an empty square.
        let (from, to) = (0..8)
            .flat_map(|row| (0..8).map(move |col| (row, col)))
            .filter(|&(row, col)| board.get(row, col) == Some(Color::White))
            .find_map(|(row, col)| {
                let to = makhos::Square::at(row.checked_sub(2)?, col + 2)?;
                let clear = board.get(row - 1, col + 1).is_none() && start.piece_at(to).is_none();
                clear.then_some((makhos::Square::at(row, col)?, to))
            })
            .expect("a white man with room to jump");
        let mut event = Event::new(Kind::Move).with_detail("illegal", true);
        event.notation = Some(format!("{from}-{to}"));
        event = event.with_detail("captured", Vec::<String>::new());
        let (read_from, read_to, captured) = illegal_move_of(&event).expect("an illegal move");
        assert_eq!((read_from, read_to), (from, to));
        assert!(captured.is_empty());
        // A legal move's event is not read as one.
        let legal = Event::new(Kind::Move);
        assert!(illegal_move_of(&legal).is_none());

        let mut inference = MakhosInference::new(start, InferOptions::default());
        inference.replay_illegal(read_from, read_to, &captured, 3.0);
        assert_eq!(inference.moves_played(), 1);
        let after = inference.position();
        assert_eq!(after.piece_at(from), None);
        assert_eq!(after.piece_at(to).map(|p| p.color), Some(Color::White));
        assert_eq!(after.turn(), Color::Black);
    }

    #[test]
    fn a_reading_fits_the_opening_with_its_pieces_seen_and_a_few_squares_added() {
        let start = makruk::Position::start().occupancy();
        assert!(fits_opening(EightGame::Makruk, &start, &start));
        // A row of figures read again on the empty row behind them.
        let mut leaning = start.clone();
        for col in 0..8 {
            leaning.set(4, col, Some(Color::White));
        }
        assert!(fits_opening(EightGame::Makruk, &start, &leaning));
        // Five of its pieces not seen.
        let mut hidden = start.clone();
        for col in 0..5 {
            hidden.set(7, col, None);
        }
        assert!(!fits_opening(EightGame::Makruk, &start, &hidden));
        // The lattice a square off: the pieces' rows read one row further.
        let mut off = Occupancy::empty(8, 8);
        for row in 1..8 {
            for col in 0..8 {
                off.set(row, col, start.get(row - 1, col));
            }
        }
        assert!(!fits_opening(EightGame::Makruk, &start, &off));
    }

    #[test]
    fn a_confirmed_square_read_otherwise_holds_what_the_record_holds() {
        // Makruk 310584: the Khon arrived on e3 (row 5, col 4), its picture changed then
        // and not since, and the reader calls it bare; d6 (row 2, col 3) is read bare too
        // but is not confirmed, and a8 is confirmed and read as the record has it.
        let mut rows = ["........"; 8];
        rows[5] = "....W...";
        rows[2] = "...B....";
        let rules = Occupancy::from_text_rows(&rows).unwrap();
        let squares = vec![[0.98, 0.01, 0.01]; 64];
        let confirmed = 1 << (5 * 8 + 4) | 1;
        let kept = kept_where_confirmed(&squares, confirmed, &rules);
        let doubt = (1.0 - CONFIRMED_TRUST) / 2.0;
        assert_eq!(kept[5 * 8 + 4], [doubt, doubt, CONFIRMED_TRUST]);
        assert_eq!(kept[2 * 8 + 3], squares[2 * 8 + 3]);
        assert_eq!(kept[0], squares[0]);
        assert_eq!(kept_where_confirmed(&squares, 0, &rules), squares);
    }

    #[test]
    fn the_figures_taller_than_a_bia_are_the_back_ranks_at_the_start() {
        let stage = Stage8::makruk(makruk::Position::start(), InferOptions::default());
        let back_ranks = 0xff | 0xff << 56;
        assert_eq!(stage.tall_figures(), back_ranks);
    }

    #[test]
    fn squares_read_as_recorded_are_confirmed_unless_the_record_changed_them_unseen() {
        let (e1, e2, e4, d1) = (1 << 60, 1 << 52, 1 << 36, 1 << 59);
        // e1 read as recorded: confirmed from now on. d1 was confirmed and stays so.
        assert_eq!(confirmed_after(d1, e1, 0, 0), d1 | e1);
        // The record moved a figure e2-e4 and both pictures changed: both confirmed,
        // whatever the reader now calls them.
        assert_eq!(confirmed_after(0, 0, e2 | e4, e2 | e4), e2 | e4);
        // The record moved it while e4's picture stood still: e4 is no longer confirmed,
        // even where it was and the reader now agrees with the record.
        assert_eq!(confirmed_after(e4, e4, e2 | e4, e2), e2);
    }

    #[test]
    fn a_look_under_a_hand_keeps_the_view_unless_there_is_none_or_the_record_changed() {
        assert!(renews_view(false, true, false));
        assert!(!renews_view(true, true, false));
        assert!(renews_view(true, false, false));
        assert!(renews_view(true, true, true));
    }

    #[test]
    fn a_square_whose_picture_moved_but_reads_as_recorded_is_not_read() {
        // Makruk 310593: the Khon left c1 (row 7, col 2) for b2 (row 6, col 1); the reader
        // still called c1 White and b2 bare. d2 (row 6, col 3) changed and reads the change.
        let mut rows = ["........"; 8];
        rows[7] = "..W.....";
        let recorded = Occupancy::from_text_rows(&rows).unwrap();
        let mut squares = vec![[0.98, 0.01, 0.01]; 64];
        squares[7 * 8 + 2] = [0.01, 0.01, 0.98];
        squares[6 * 8 + 3] = [0.01, 0.01, 0.98];
        let moved = 1 << (7 * 8 + 2) | 1 << (6 * 8 + 1) | 1 << (6 * 8 + 3);
        let unread = unread_where_pictures_moved(&squares, moved, &recorded);
        assert_eq!(unread[7 * 8 + 2], [1.0 / 3.0; 3]);
        assert_eq!(unread[6 * 8 + 1], [1.0 / 3.0; 3]);
        assert_eq!(unread[6 * 8 + 3], squares[6 * 8 + 3]);
        // Squares whose pictures did not move keep their calls.
        assert_eq!(unread[0], squares[0]);
        assert_eq!(unread_where_pictures_moved(&squares, 0, &recorded), squares);
    }

    #[test]
    fn a_game_in_progress_is_joined_only_from_a_reading_sure_of_every_square_of_play() {
        let position = makhos::Position::start(Men::Eight, Color::White);
        let occupancy = position.occupancy();
        let mut settled = Settled8 {
            squares: crate::infer::eight::probabilities(&occupancy, &[0.97; 64]),
            occupancy,
            since: 0.0,
            since_index: 0,
            frames: 10,
            slid: Vec::new(),
            pictures: None,
        };
        assert!(unsure_squares(&settled).is_empty());
        // A light square (no play there) may read unsure; a square of play may not.
        settled.squares[0] = [0.5, 0.3, 0.2];
        assert!(unsure_squares(&settled).is_empty());
        let of_play = (0..64)
            .find(|&i| makhos::Square::at(i / 8, i % 8).is_some())
            .unwrap();
        settled.squares[of_play] = [0.45, 0.40, 0.15];
        assert_eq!(unsure_squares(&settled), [[of_play / 8, of_play % 8]]);
    }

    #[test]
    fn a_makhos_position_in_progress_is_joined_with_kings_on_their_far_row_only() {
        // White's men start at the bottom and are crowned on row 0.
        let start = makhos::Position::start(Men::Eight, Color::White).occupancy();
        assert_eq!(start.get(7, 0).or(start.get(7, 1)), Some(Color::White));
        let mut seen = Occupancy::empty(8, 8);
        let dark = |row: usize| (0..8).find(|&col| Square::at(row, col).is_some()).unwrap();
        seen.set(0, dark(0), Some(Color::White));
        seen.set(5, dark(5), Some(Color::White));
        seen.set(2, dark(2), Some(Color::Black));
        let position = joinable(&seen, Color::Black).expect("a position a game reaches");
        let kind = |row: usize| {
            position
                .piece_at(Square::at(row, dark(row)).unwrap())
                .unwrap()
                .kind
        };
        assert_eq!(kind(0), makhos::Kind::King);
        assert_eq!(kind(5), makhos::Kind::Man);
        assert_eq!(kind(2), makhos::Kind::Man);
        assert_eq!(position.turn(), Color::Black);
        // A piece on a light square, or a side with none, is no Mak-hos position.
        let mut light = seen.clone();
        light.set(3, (dark(3) + 1) % 8, Some(Color::Black));
        assert!(joinable(&light, Color::White).is_none());
        let mut lone = Occupancy::empty(8, 8);
        lone.set(5, dark(5), Some(Color::White));
        assert!(joinable(&lone, Color::White).is_none());
    }
}
