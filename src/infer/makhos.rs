//! Mak-hos moves from settled positions: what `kradan record --game makhos` decides, with
//! no pixels.
//!
//! Each settled sighting ([`Seen8`]) is weighed against every explanation the rules engine
//! (`games::makhos`) offers from the position as recorded: nothing new, one move of any
//! class (missed and cut-short captures included, HOS 2.4), two moves in turn, the side
//! that has just moved moving again or the side to move moving twice (HOS 3.4), the last
//! move taken back, or its piece moved on (set down on a wrong square first). A capture's
//! prisoners may still stand while they are being lifted one by one: the move is committed
//! at once, once, and the squares are remembered, flagged only if the next move comes
//! while they still stand. Kings are known from promotion, never from pixels.
//!
//! A change none of these explains is an irregularity: with a hand over the board, one
//! piece of the side to move relocated against the rules is an illegal move (HOS 3.2,
//! loss) and the record goes on from the board as it stands; anything else, and any
//! change with no hand at all (a knock), is a piece displaced, added or removed, remembered
//! until the board shows the rules' position there again (`Resolved`).
//!
//! Also watched: the two minutes a move may take (HOS 1.5.1), the same position reached
//! three times (HOS 5.2) and the 16 moves with no man moved and no capture (HOS 5.3–5.4),
//! shown as they run ([`Outcome::Count`]) and flagged at their limits.

use super::eight::{Candidate, Differences, RaisedFlag, Seen8, Stage, Waiting, changes, closest};
use super::go::InferOptions;
use crate::games::makhos::{
    Flag, Kind, Move, MoveClass, Observation, Piece, Position, Square, Violation, WrittenMove,
    classify,
};
use crate::games::{Article, Color, Occupancy, Penalty, Source};
use std::collections::HashMap;

/// Seconds a move may take (HOS 1.5.1).
pub const MOVE_SECONDS: f64 = 120.0;
/// Moves with no man moved and no capture before a draw may be claimed (HOS 5.3).
pub const QUIET_LIMIT: u32 = 16;
/// Times the same position may come back before a draw (HOS 5.2).
pub const REPETITION_LIMIT: u32 = 3;

/// How far a man read as the other side's still counts as its own
/// (`infer::eight::ColourSlip`), on a square where the reader has already doubted him
/// with no hand about ([`DOUBTED`]). No move turns a man into the other side's where he
/// stands, while the square reader calls a man the wrong side's for seconds: on Mak-hos
/// 300218 (varied light) White's man on 3 drifted to 0.51 dark in a still view, then
/// read 0.8-0.9 dark for 22 s from move 2 on, flagged `displaced` in a game with no
/// anomaly. Not on every square: a man pushed off his square's centre (a `slide`, HOS
/// 3.2) reads so too, after the hand that pushed him (300201: 0.88 dark). Makruk's share:
/// a man read 0.99 the other side's fits as a square read 0.25 right.
const COLOUR_SLIP: f32 = 0.25;

/// A man read at least this likely the other side's in a still view with no hand since
/// the last position acted on is doubted: nothing touched him, so the reader is unsure.
const DOUBTED: f32 = 0.3;

/// What a Mak-hos flag is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HosFlag {
    /// A move no rule allows (HOS 3.2): the violation says which.
    Illegal(Violation),
    DoubleMove,
    MissedCapture,
    IncompleteCapture,
    Displaced,
    PieceAdded,
    PieceRemoved,
    /// A piece set down on one square and then moved on to another.
    Takeback,
    /// The game went on with a capture's prisoners still on the board.
    CapturesNotRemoved,
    OverTime,
    Repetition,
    SixteenMoves,
}

impl HosFlag {
    pub fn rules(self) -> Vec<Article> {
        let hos = |number| Article::new(Source::Hos, number);
        match self {
            HosFlag::Illegal(violation) => violation.rules(),
            HosFlag::DoubleMove => Violation::DoubleMove.rules(),
            HosFlag::MissedCapture => Flag::MissedCapture.rules(),
            HosFlag::IncompleteCapture => Flag::IncompleteCapture.rules(),
            HosFlag::Displaced => Violation::Displaced.rules(),
            HosFlag::PieceAdded => Violation::PieceAdded.rules(),
            HosFlag::PieceRemoved => Violation::PieceRemoved.rules(),
            HosFlag::Takeback => vec![hos("3.2")],
            HosFlag::CapturesNotRemoved => vec![hos("2.2")],
            HosFlag::OverTime => vec![hos("1.5.1"), Article::new(Source::HosSchool, "3.2.1")],
            HosFlag::Repetition => vec![hos("5.2")],
            HosFlag::SixteenMoves => vec![
                hos("5.3"),
                hos("5.4"),
                Article::new(Source::HosSchool, "3.8"),
            ],
        }
    }

    pub fn penalties(self) -> Vec<Penalty> {
        vec![match self {
            HosFlag::Illegal(violation) => violation.penalty(),
            HosFlag::DoubleMove => Penalty::Warning,
            HosFlag::MissedCapture | HosFlag::IncompleteCapture | HosFlag::CapturesNotRemoved => {
                Penalty::Advisory
            }
            HosFlag::Displaced => Violation::Displaced.penalty(),
            HosFlag::PieceAdded => Violation::PieceAdded.penalty(),
            HosFlag::PieceRemoved => Violation::PieceRemoved.penalty(),
            HosFlag::Takeback | HosFlag::OverTime => Penalty::Loss,
            HosFlag::Repetition | HosFlag::SixteenMoves => Penalty::DrawClaim,
        }]
    }

    /// The name the event log and the renderer's truth use.
    pub fn name(self) -> &'static str {
        match self {
            HosFlag::Illegal(_) => "illegal-move",
            HosFlag::DoubleMove => "double-move",
            HosFlag::MissedCapture => "missed-capture",
            HosFlag::IncompleteCapture => "incomplete-capture",
            HosFlag::Displaced => "displaced",
            HosFlag::PieceAdded => "added",
            HosFlag::PieceRemoved => "removed",
            HosFlag::Takeback => "takeback",
            HosFlag::CapturesNotRemoved => "captures-not-removed",
            HosFlag::OverTime => "over-time",
            HosFlag::Repetition => "repetition",
            HosFlag::SixteenMoves => "sixteen-moves",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            HosFlag::Illegal(violation) => violation.describe(),
            HosFlag::DoubleMove => Violation::DoubleMove.describe(),
            HosFlag::MissedCapture => Flag::MissedCapture.describe(),
            HosFlag::IncompleteCapture => Flag::IncompleteCapture.describe(),
            HosFlag::Displaced => Violation::Displaced.describe(),
            HosFlag::PieceAdded => Violation::PieceAdded.describe(),
            HosFlag::PieceRemoved => Violation::PieceRemoved.describe(),
            HosFlag::Takeback => "the piece was set down on one square, then moved on",
            HosFlag::CapturesNotRemoved => "the game went on with captured pieces on the board",
            HosFlag::OverTime => "the move took more than two minutes",
            HosFlag::Repetition => "the same position came about three times",
            HosFlag::SixteenMoves => "sixteen moves with no man moved and no capture",
        }
    }
}

pub type HosRaisedFlag = RaisedFlag<HosFlag>;

/// One decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A move of the game record; `number` is the 1-based ply. A number given before is
    /// replaced (the last move was taken back and another made).
    Move {
        number: usize,
        color: Color,
        mv: WrittenMove,
        captured: Vec<Square>,
        /// The man became a king (HOS 1.2.2).
        promoted: bool,
        /// A move no rule allows, recorded as it stands (HOS 3.2).
        illegal: bool,
        /// Seconds since the previous move was completed.
        seconds: f64,
    },
    /// Move `number` was taken back: the board shows the position before it again.
    TakenBack {
        number: usize,
    },
    Flag(HosRaisedFlag),
    /// The board shows the rules' position again where the flag said it did not.
    Resolved {
        id: u32,
        kind: HosFlag,
        squares: Vec<String>,
    },
    /// A draw count as it runs (HOS 5.2 repetitions, HOS 5.3 quiet moves).
    Count {
        rule: Article,
        reached: u32,
        limit: u32,
    },
    /// The side to move has no piece or no move left: it loses (HOS 4).
    GameOver {
        winner: Color,
    },
    /// Acted on the best explanation although another fitted nearly as well.
    LowConfidence {
        number: usize,
    },
}

/// A move as played on the board: one the engine generates, or one no rule allows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Played {
    Rules(Move),
    Illegal {
        from: Square,
        to: Square,
        captured: u32,
    },
}

#[derive(Clone, Debug)]
struct Committed {
    before: Position,
    played: Played,
    color: Color,
    /// The quiet-move count before it, to restore on a takeback.
    quiet_before: u32,
    at: f64,
}

/// An explanation of a sighting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    Nothing,
    One(Move, MoveClass),
    /// Both sides moved between two sightings.
    Two([(Move, MoveClass); 2]),
    /// The side that has just moved moves again.
    Again(Move),
    /// The side to move moves twice.
    Twice(Move, Move),
    TakeBack,
    /// The last move's piece moved on from where it was set down.
    MovedOn(Move, MoveClass),
}

impl Reading {
    /// The first move of the side to move it plays, as a reading of its own.
    fn first_move(&self) -> Option<Reading> {
        match *self {
            Reading::One(mv, class) | Reading::Two([(mv, class), _]) => {
                Some(Reading::One(mv, class))
            }
            Reading::Twice(mv, _) => Some(Reading::One(mv, MoveClass::Legal)),
            _ => None,
        }
    }
}

pub struct MakhosInference {
    options: InferOptions,
    position: Position,
    differences: Differences<HosFlag>,
    history: Vec<Committed>,
    next_flag_id: u32,
    seen_positions: HashMap<Position, u32>,
    quiet_moves: u32,
    /// The side that moved first.
    first: Color,
    waiting: Waiting<Reading>,
    /// Since the last position acted on, motion that crossed no edge of the board came
    /// after a hand that did: a piece knocked after the hand left (`knocked_after_hand`).
    knocked: bool,
}

fn square_name(row: usize, col: usize) -> String {
    Square::at(row, col).map_or_else(
        || format!("{}{}", char::from(b'a' + col as u8), 8 - row),
        |s| s.to_string(),
    )
}

fn bits_squares(bits: u32) -> Vec<Square> {
    Square::all()
        .filter(|s| bits & (1 << (s.number() - 1)) != 0)
        .collect()
}

impl MakhosInference {
    pub fn new(position: Position, options: InferOptions) -> MakhosInference {
        let mut seen_positions = HashMap::new();
        seen_positions.insert(position, 1);
        MakhosInference {
            options,
            position,
            differences: Differences {
                colour_slip: Some(COLOUR_SLIP),
                slip_squares: 0,
                ..Differences::default()
            },
            history: Vec::new(),
            next_flag_id: 1,
            seen_positions,
            quiet_moves: 0,
            first: position.turn(),
            waiting: Waiting::default(),
            knocked: false,
        }
    }

    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Moves played so far.
    pub fn moves_played(&self) -> usize {
        self.history.len()
    }

    /// The board as it physically stands, as far as this stage knows.
    pub fn board(&self) -> Occupancy {
        self.differences.physical(&self.position.occupancy())
    }

    /// A referee corrected the record and the stage was rebuilt from it: where `shown`,
    /// the board as the camera last saw it, differs from the corrected game, the
    /// difference is known. A misreading that persists is then not read as the move the
    /// referee removed, and a move the camera saw but the record lacked is not read as
    /// a new one.
    pub fn acknowledge(&mut self, shown: &Occupancy) {
        self.differences
            .acknowledge(&self.position.occupancy(), shown);
    }

    /// The stage of a resumed record, whose flags so far took the ids below `id`.
    pub fn with_next_flag_id(mut self, id: u32) -> MakhosInference {
        self.next_flag_id = self.next_flag_id.max(id);
        self
    }

    /// Plays a move already in the record (a resumed recording), as if it had been
    /// seen: the history, the counts and the repetitions follow it; nothing is reported.
    pub fn replay(&mut self, mv: Move, class: MoveClass, at: f64) {
        let squares = super::eight::probabilities(&self.position.play(&mv).occupancy(), &[]);
        let seen = Seen8 {
            squares: &squares,
            since: at,
            now: at,
            hand_seen: true,
            motion_seen: true,
            still: 0,
            moved: 0,
            stirred: 0,
        };
        let color = self.position.turn();
        self.commit(Played::Rules(mv), class, color, &seen, &mut Vec::new());
    }

    /// An illegal move of the record (HOS 3.2: recorded as it stood, the game going on from
    /// the board as it stands) committed again with no outcome, for `--resume`: the man on
    /// `from` set down on `to`, the `captured` pieces gone.
    pub fn replay_illegal(&mut self, from: Square, to: Square, captured: &[Square], at: f64) {
        let color = self.position.turn();
        let mut board = self.position.occupancy();
        for square in captured.iter().chain([&from]) {
            let (row, col) = square.row_col();
            board.set(row, col, None);
        }
        let (row, col) = to.row_col();
        board.set(row, col, Some(color));
        let squares = super::eight::probabilities(&board, &[]);
        let seen = Seen8 {
            squares: &squares,
            since: at,
            now: at,
            hand_seen: true,
            motion_seen: true,
            still: 0,
            moved: 0,
            stirred: 0,
        };
        let played = Played::Illegal {
            from,
            to,
            captured: captured
                .iter()
                .fold(0, |bits, square| bits | 1 << (square.number() - 1)),
        };
        self.commit(played, MoveClass::Legal, color, &seen, &mut Vec::new());
    }

    pub fn next_flag_id(&self) -> u32 {
        self.next_flag_id
    }

    /// A referee closed flag `id`: the board stops resolving it by itself.
    pub fn close_flag(&mut self, id: u32) {
        self.differences.close_flag(id);
    }

    /// Says whether, since the last position acted on, motion that crossed no edge of the
    /// board came after a hand that did. That motion is a piece knocked, not a second
    /// hand: the sighting then holds one hand's move at most, and no reading that plays
    /// two moves (both sides', or one side's twice) is weighed. On Mak-hos 300221 (1080p)
    /// a man knocked onto a neighbouring square 0.6 s after White's hand left, before
    /// White's move had settled, was read with it as Black's reply, then Black's real
    /// reply as a double move. A second hand, however soon, crosses the edge itself.
    pub fn knocked_after_hand(&mut self, knocked: bool) {
        self.knocked = knocked;
    }

    /// Acts on a settled sighting. Returns nothing when it shows nothing new, or when it
    /// must stand longer before it is believed (call again with a later `now`).
    pub fn observe(&mut self, seen: &Seen8) -> Vec<Outcome> {
        if !seen.hand_seen && seen.squares.len() >= 64 {
            let mut doubted = self.differences.slip_squares;
            let pieces = [Color::White, Color::Black]
                .into_iter()
                .flat_map(|color| self.position.pieces(color));
            for (square, piece) in pieces {
                let (row, col) = square.row_col();
                let p = &seen.squares[row * 8 + col];
                let other = super::eight::state_index(Some(piece.color.opponent()));
                if p[other] >= DOUBTED {
                    doubted |= 1 << (row * 8 + col);
                }
            }
            self.differences.slip_squares = doubted;
        }
        self.differences
            .note_moved(seen, &self.position.occupancy());
        super::eight::observe(self, seen)
    }

    /// Whether the last sighting was acted on (see `infer::eight::Waiting::acted`): what
    /// ends a hand's turn at the board.
    pub fn acted(&self) -> bool {
        self.waiting.acted
    }

    /// Whether everything seen has been acted on (`infer::eight::Waiting::caught_up`).
    pub fn caught_up(&self) -> bool {
        self.waiting.caught_up()
    }

    fn candidates(&self) -> Vec<Candidate<Reading>> {
        let mut out = Vec::new();
        let current = self.position;
        let rules = current.occupancy();
        // A man read in the other side's colour is forgiven only to the readings that
        // change least (nothing, one move): inside two moves or a double move it would
        // let a doubtful explanation in.
        let expect_as = |position: &Position, lifting: u32, single: bool| {
            let mut expected = self
                .differences
                .expect(&position.occupancy(), single.then_some(&rules));
            // Prisoners of the move just made may still stand while they are lifted.
            for square in bits_squares(lifting) {
                let (row, col) = square.row_col();
                expected.allow(row, col, Some(position.turn()));
            }
            expected
        };
        let expect = |position: &Position, lifting: u32| expect_as(position, lifting, false);
        out.push(Candidate {
            what: Reading::Nothing,
            expected: expect_as(&current, 0, true),
            prior: 0.0,
        });
        let mut ones: Vec<(Move, MoveClass)> = Vec::new();
        current.for_each_move(|mv, class| ones.push((*mv, class)));
        let class_prior = |class: MoveClass| match class {
            MoveClass::Legal => 0.0,
            _ => -1.0,
        };
        for &(mv, class) in &ones {
            let after = current.play(&mv);
            let mut expected = expect_as(&after, mv_captured(&mv), true);
            // The square the man left may read as the other side's (`forgive_vacated`).
            let (row, col) = mv.from().row_col();
            expected.allow(row, col, Some(current.turn().opponent()));
            out.push(Candidate {
                what: Reading::One(mv, class),
                expected,
                prior: class_prior(class),
            });
            if self.knocked {
                continue;
            }
            let mut replies = Vec::new();
            after.for_each_move(|reply, class| replies.push((*reply, class)));
            for (reply, reply_class) in replies {
                out.push(Candidate {
                    what: Reading::Two([(mv, class), (reply, reply_class)]),
                    expected: expect(&after.play(&reply), mv_captured(&reply)),
                    prior: -2.0 + class_prior(class) + class_prior(reply_class),
                });
            }
            let mut again = after;
            again.set_turn(current.turn());
            // The same man moving on in the same sighting is one hand's doing: a man set
            // down on a square it cannot reach, perhaps to be moved on (a takeback),
            // not two moves. On Mak-hos 300244 and 300248 a man set down two rows on was
            // read as a double move, and the takeback it became went unflagged. Unless
            // its first move captured: the prisoners it took are gone, so that move was
            // made, and the step on is a second one (held-out 300260: 32x14 then 14-7,
            // the position between them hidden by the arm's shadow).
            // Nor a second man stepping into the square the first left: the board then
            // shows one man gone from one square and one come to another, one man's
            // doing. On held-out Mak-hos 300377 a man on 6 set down on 14 to be moved on
            // to 10 (a takeback) was read as 9-14 and 6-9, a double move, 9 never having
            // changed.
            let chain = |second: &Move| {
                second.to() == mv.from() && !second.is_capture() && !mv.is_capture()
            };
            for second in again
                .legal_moves()
                .into_iter()
                .filter(|s| (s.from() != mv.to() || mv.is_capture()) && !chain(s))
            {
                let mut twice = again.play(&second);
                twice.set_turn(current.turn().opponent());
                out.push(Candidate {
                    what: Reading::Twice(mv, second),
                    expected: expect(&twice, mv_captured(&second)),
                    prior: -4.0,
                });
            }
        }
        if !self.history.is_empty() && !self.knocked {
            let mut flipped = current;
            flipped.set_turn(current.turn().opponent());
            for mv in flipped.legal_moves() {
                let mut after = flipped.play(&mv);
                after.set_turn(current.turn());
                out.push(Candidate {
                    what: Reading::Again(mv),
                    expected: expect(&after, mv_captured(&mv)),
                    prior: -3.0,
                });
            }
        }
        if let Some(last) = self.history.last() {
            out.push(Candidate {
                what: Reading::TakeBack,
                expected: expect(&last.before, 0),
                prior: -1.0,
            });
            let from = match last.played {
                Played::Rules(mv) => mv.from(),
                Played::Illegal { from, .. } => from,
            };
            last.before.for_each_move(|mv, class| {
                if mv.from() == from && Played::Rules(*mv) != last.played {
                    out.push(Candidate {
                        what: Reading::MovedOn(*mv, class),
                        expected: expect(&last.before.play(mv), mv_captured(mv)),
                        prior: -1.5,
                    });
                }
            });
        }
        // What each explanation changes, for the squares seen still to speak against.
        for candidate in &mut out {
            candidate.expected.mark_changes(&rules);
        }
        out
    }

    fn apply(&mut self, reading: Reading, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        let mover = self.position.turn();
        match reading {
            Reading::Nothing => {}
            Reading::One(mv, class) => {
                let set_down = self.set_down_first(&mv);
                self.commit(Played::Rules(mv), class, mover, seen, outcomes);
                if let Some((row, col)) = set_down {
                    let number = self.history.len();
                    let mut squares = squares_of(&mv);
                    squares.insert(1, square_name(row, col));
                    self.raise(
                        HosFlag::Takeback,
                        squares,
                        Some(number),
                        Some(mover),
                        outcomes,
                    );
                }
            }
            Reading::Two([(first, first_class), (second, second_class)]) => {
                self.commit(Played::Rules(first), first_class, mover, seen, outcomes);
                self.commit(
                    Played::Rules(second),
                    second_class,
                    mover.opponent(),
                    seen,
                    outcomes,
                );
            }
            Reading::Again(mv) => {
                let color = mover.opponent();
                self.position.set_turn(color);
                self.commit(Played::Rules(mv), MoveClass::Legal, color, seen, outcomes);
                self.position.set_turn(mover);
                let number = self.history.len();
                self.raise(
                    HosFlag::DoubleMove,
                    squares_of(&mv),
                    Some(number),
                    Some(color),
                    outcomes,
                );
            }
            Reading::Twice(first, second) => {
                self.commit(
                    Played::Rules(first),
                    MoveClass::Legal,
                    mover,
                    seen,
                    outcomes,
                );
                self.position.set_turn(mover);
                self.commit(
                    Played::Rules(second),
                    MoveClass::Legal,
                    mover,
                    seen,
                    outcomes,
                );
                self.position.set_turn(mover.opponent());
                let number = self.history.len();
                self.raise(
                    HosFlag::DoubleMove,
                    squares_of(&second),
                    Some(number),
                    Some(mover),
                    outcomes,
                );
            }
            Reading::TakeBack => {
                let number = self.history.len();
                self.take_back();
                outcomes.push(Outcome::TakenBack { number });
            }
            Reading::MovedOn(mv, class) => {
                let number = self.history.len();
                let last = self.take_back();
                outcomes.push(Outcome::TakenBack { number });
                self.commit(Played::Rules(mv), class, last.color, seen, outcomes);
                // A capture continued after a pause is still one move; a piece set down on
                // a wrong square and moved on is a takeback.
                let continued = matches!(last.played, Played::Rules(first)
                    if first.is_capture() && mv.landings().starts_with(first.landings()));
                if !continued {
                    self.raise(
                        HosFlag::Takeback,
                        squares_of(&mv),
                        Some(number),
                        Some(last.color),
                        outcomes,
                    );
                }
            }
        }
    }

    /// Where the last unexplained sighting showed the moving piece set down first, when it
    /// did: its origin and destination empty and one more piece of its colour.
    fn set_down_first(&self, mv: &Move) -> Option<(usize, usize)> {
        let transient = self.waiting.transient.as_ref()?;
        super::eight::set_down_square(
            &self.board(),
            transient,
            self.position.turn(),
            [mv.from().row_col(), mv.to().row_col()],
        )
    }

    fn take_back(&mut self) -> Committed {
        let last = self.history.pop().expect("a move to take back");
        if let Some(count) = self.seen_positions.get_mut(&self.position) {
            *count = count.saturating_sub(1);
        }
        self.position = last.before;
        // A double move was played from a position with the turn turned round: the side
        // to move is the one that did not make the move now last.
        let turn = self
            .history
            .last()
            .map_or(self.first, |previous| previous.color.opponent());
        self.position.set_turn(turn);
        self.quiet_moves = last.quiet_before;
        last
    }

    fn commit(
        &mut self,
        played: Played,
        class: MoveClass,
        color: Color,
        seen: &Seen8,
        outcomes: &mut Vec<Outcome>,
    ) {
        self.differences.forget_moved();
        // Prisoners of the previous move still standing when the game goes on.
        let unlifted: Vec<(usize, usize)> = self
            .differences
            .squares
            .iter()
            .filter(|(_, d)| d.flag.is_none() && d.suspected.is_none() && !d.misread)
            .map(|(&square, _)| square)
            .collect();
        if !unlifted.is_empty() {
            let names = unlifted.iter().map(|&(r, c)| square_name(r, c)).collect();
            let id = self.raise(
                HosFlag::CapturesNotRemoved,
                names,
                Some(self.history.len()),
                None,
                outcomes,
            );
            for square in unlifted {
                if let Some(d) = self.differences.squares.get_mut(&square) {
                    d.flag = Some((id, HosFlag::CapturesNotRemoved));
                }
            }
        }
        let before = self.position;
        let (after, written, captured, promoted, man_moved) = match played {
            Played::Rules(mv) => {
                let man = before
                    .piece_at(mv.from())
                    .is_some_and(|p| p.kind == Kind::Man);
                (
                    before.play(&mv),
                    WrittenMove::from(&mv),
                    mv.captured().collect::<Vec<_>>(),
                    mv.promotes(),
                    man,
                )
            }
            Played::Illegal { from, to, captured } => {
                let mut after = before;
                let piece = before.piece_at(from).unwrap_or(Piece {
                    color,
                    kind: Kind::Man,
                });
                let far_row = match color {
                    Color::White => 0,
                    Color::Black => 7,
                };
                let promoted = piece.kind == Kind::Man && to.row_col().0 == far_row;
                after.set(from, None);
                for square in bits_squares(captured) {
                    after.set(square, None);
                }
                let kind = if promoted { Kind::King } else { piece.kind };
                after.set(to, Some(Piece { color, kind }));
                after.set_turn(color.opponent());
                (
                    after,
                    WrittenMove {
                        squares: vec![from, to],
                        capture: captured != 0,
                    },
                    bits_squares(captured),
                    promoted,
                    piece.kind == Kind::Man,
                )
            }
        };
        let seconds = seen.since - self.waiting.clock.unwrap_or(seen.since);
        self.waiting.clock = Some(seen.since);
        self.history.push(Committed {
            before,
            played,
            color,
            quiet_before: self.quiet_moves,
            at: seen.since,
        });
        self.position = after;
        // A man who moved, or was taken, is doubted afresh where he stands now.
        for [row, col] in before.occupancy().differences(&after.occupancy()) {
            self.differences.slip_squares &= !(1u64 << (row * 8 + col));
        }
        let number = self.history.len();
        let illegal = matches!(played, Played::Illegal { .. });
        outcomes.push(Outcome::Move {
            number,
            color,
            mv: written.clone(),
            captured: captured.clone(),
            promoted,
            illegal,
            seconds,
        });
        // Prisoners still standing: remembered, not flagged while they are being lifted.
        for square in &captured {
            let (row, col) = square.row_col();
            let p = &seen.squares[row * 8 + col];
            if p[super::eight::state_index(Some(color.opponent()))] > p[0] {
                self.differences.squares.insert(
                    (row, col),
                    super::eight::Discrepancy {
                        expected: None,
                        shown: Some(color.opponent()),
                        flag: None,
                        suspected: None,
                        misread: false,
                    },
                );
            }
        }
        let squares = written.squares.iter().map(Square::to_string).collect();
        match class {
            MoveClass::Legal => {}
            MoveClass::MissedCapture => {
                self.raise(
                    HosFlag::MissedCapture,
                    squares,
                    Some(number),
                    Some(color),
                    outcomes,
                );
            }
            MoveClass::IncompleteCapture => {
                self.raise(
                    HosFlag::IncompleteCapture,
                    squares,
                    Some(number),
                    Some(color),
                    outcomes,
                );
            }
        }
        if seconds > MOVE_SECONDS {
            self.raise(
                HosFlag::OverTime,
                Vec::new(),
                Some(number),
                Some(color),
                outcomes,
            );
        }
        self.forgive_vacated(seen, &seen.read());
        self.count_draws(man_moved || !captured.is_empty(), number, outcomes);
        if self.position.legal_moves().is_empty() {
            outcomes.push(Outcome::GameOver {
                winner: self.position.turn().opponent(),
            });
        }
    }

    /// HOS 5.2 and 5.3: runs the counts after a move and flags them at their limits.
    fn count_draws(&mut self, reset: bool, number: usize, outcomes: &mut Vec<Outcome>) {
        let seen = self.seen_positions.entry(self.position).or_insert(0);
        *seen += 1;
        let times = *seen;
        if times >= 2 {
            outcomes.push(Outcome::Count {
                rule: Article::new(Source::Hos, "5.2"),
                reached: times,
                limit: REPETITION_LIMIT,
            });
            if times == REPETITION_LIMIT {
                self.raise(
                    HosFlag::Repetition,
                    Vec::new(),
                    Some(number),
                    None,
                    outcomes,
                );
            }
        }
        self.quiet_moves = if reset { 0 } else { self.quiet_moves + 1 };
        if self.quiet_moves > 0 {
            outcomes.push(Outcome::Count {
                rule: Article::new(Source::Hos, "5.3"),
                reached: self.quiet_moves,
                limit: QUIET_LIMIT,
            });
            if self.quiet_moves == QUIET_LIMIT {
                self.raise(
                    HosFlag::SixteenMoves,
                    Vec::new(),
                    Some(number),
                    None,
                    outcomes,
                );
            }
        }
    }

    /// A change no explanation fits, standing long enough to be believed.
    fn irregular(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        let rules = self.position.occupancy();
        let mut read = self.differences.reading_against(seen, &rules);
        if let Some((row, col)) = self.forgive_vacated(seen, &read) {
            read.set(row, col, None);
        }
        let (changed, appeared, vanished) = changes(&rules, &read);
        if changed.is_empty() {
            self.resolve(seen, outcomes);
            return;
        }
        // Nothing moved over the board since the last position acted on (no arm, no
        // square's middle changed from one look to the next: a man knocked to the next
        // square shows there), and none of these squares changed when something did: the
        // reader changed its mind (Mak-hos 300310, a man read gone in the still view after
        // a move, then flagged beside the next move as that hand's disturbance). The
        // squares are marked misread, not left as Makruk leaves them: here a known square
        // with no flag is a prisoner still being lifted.
        if self.differences.unmoved(seen, &changed) && !self.options.stills {
            for square in self.differences.doubt_unmoved(seen, &rules) {
                if let Some(doubted) = self.differences.squares.get_mut(&square) {
                    doubted.misread = true;
                }
            }
            return;
        }
        let mover = self.position.turn();
        if seen.hand_seen
            && let Some(played) = self.illegal_move(&read)
        {
            let violation = Observation::from_occupancy(&read)
                .map(|o| classify(&self.position, &o))
                .ok()
                .and_then(|found| found.into_iter().next())
                .unwrap_or(Violation::Displaced);
            self.commit(played, MoveClass::Legal, mover, seen, outcomes);
            let number = self.history.len();
            let names = changed.iter().map(|&(r, c)| square_name(r, c)).collect();
            self.raise(
                HosFlag::Illegal(violation),
                names,
                Some(number),
                Some(mover),
                outcomes,
            );
            self.resolve(seen, outcomes);
            return;
        }
        if seen.hand_seen
            && let Some((reading, left)) = closest(self.candidates(), seen)
            && !matches!(reading, Reading::Nothing)
            && left < changed.len()
        {
            // A move beside a disturbance: the move is recorded, the rest flagged.
            self.apply(reading, seen, outcomes);
            self.irregular(
                &Seen8 {
                    hand_seen: false,
                    ..seen.clone()
                },
                outcomes,
            );
            return;
        }
        let kind = if appeared > vanished {
            HosFlag::PieceAdded
        } else if vanished > appeared {
            HosFlag::PieceRemoved
        } else {
            HosFlag::Displaced
        };
        let since = self
            .waiting
            .disturbed_since
            .map_or(seen.since, |first| first.min(seen.since));
        self.differences
            .suspect(seen, &rules, kind, since, Some(self.history.len()), None);
    }

    /// The square the last move's man left, read as the other side's piece in the very
    /// sighting that showed the move (when it is committed, or as that sighting's vote
    /// firms up), is the bare square misread: the mover's hand lifted his man there and
    /// set nothing down, and a piece dropped by accident comes from another hand, on a
    /// sighting of its own. On Mak-hos 300212 (1080p, no anomaly) the
    /// far corner squares of White's home row, bare for the first time, read 0.99 dark as
    /// soon as their men left (4-8, 2-7), each flagged `added`. The square is remembered
    /// as misread, so the board stands as the rules say and nothing is flagged; it is
    /// forgotten once it reads bare. Returns the square when it was forgiven now.
    fn forgive_vacated(&mut self, seen: &Seen8, read: &Occupancy) -> Option<(usize, usize)> {
        let last = self.history.last()?;
        let from = match last.played {
            Played::Rules(mv) => mv.from(),
            Played::Illegal { from, .. } => from,
        };
        let (row, col) = from.row_col();
        if last.at != seen.since
            || self.position.piece_at(from).is_some()
            || read.get(row, col) != Some(last.color.opponent())
            || self.differences.squares.contains_key(&(row, col))
        {
            return None;
        }
        self.differences.squares.insert(
            (row, col),
            super::eight::Discrepancy {
                expected: None,
                shown: Some(last.color.opponent()),
                flag: None,
                suspected: None,
                misread: true,
            },
        );
        Some((row, col))
    }

    /// One piece of the side to move went from one dark square to another (enemy pieces
    /// perhaps gone), against the rules: the move as it stands.
    fn illegal_move(&self, read: &Occupancy) -> Option<Played> {
        let mover = self.position.turn();
        let (changed, _, _) = changes(&self.position.occupancy(), read);
        let mut from = None;
        let mut to = None;
        let mut captured = 0u32;
        for (row, col) in changed {
            let square = Square::at(row, col)?;
            let was = self.position.piece_at(square).map(|p| p.color);
            match (was, read.get(row, col)) {
                (Some(c), None) if c == mover && from.is_none() => from = Some(square),
                (None, Some(c)) if c == mover && to.is_none() => to = Some(square),
                (Some(c), None) if c != mover => captured |= 1 << (square.number() - 1),
                _ => return None,
            }
        }
        let (from, to) = (from?, to?);
        // A piece can only have jumped what lies between where it stood and where it
        // landed: pieces gone elsewhere are a disturbance, or misread (seed 505: every
        // black man read as gone was taken for one white man's capture).
        let between = |square: Square| {
            let ((fr, fc), (tr, tc), (r, c)) = (from.row_col(), to.row_col(), square.row_col());
            let (fr, fc, tr, tc, r, c) = (
                fr as i64, fc as i64, tr as i64, tc as i64, r as i64, c as i64,
            );
            (r - fr).abs() == (c - fc).abs()
                && (tr - fr).abs() == (tc - fc).abs()
                && (r - fr) * (tc - fc) == (c - fc) * (tr - fr)
                && (r - fr).signum() == (tr - fr).signum()
                && (r - fr).abs() < (tr - fr).abs()
        };
        if bits_squares(captured)
            .into_iter()
            .any(|square| !between(square))
        {
            return None;
        }
        Some(Played::Illegal { from, to, captured })
    }

    /// Squares that show the rules' position again: their flags resolved.
    fn resolve(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        for (id, kind, squares) in self.differences.settle(seen, &self.position.occupancy()) {
            outcomes.push(Outcome::Resolved {
                id,
                kind,
                squares: squares.iter().map(|&(r, c)| square_name(r, c)).collect(),
            });
        }
    }

    fn raise(
        &mut self,
        kind: HosFlag,
        squares: Vec<String>,
        move_number: Option<usize>,
        color: Option<Color>,
        outcomes: &mut Vec<Outcome>,
    ) -> u32 {
        let id = self.next_flag_id;
        self.next_flag_id += 1;
        let who = color.map(|c| format!("{c} ")).unwrap_or_default();
        let message = format!("{who}{}: {}", kind.describe(), squares.join(" "));
        outcomes.push(Outcome::Flag(RaisedFlag {
            id,
            kind,
            rules: kind.rules(),
            penalties: kind.penalties(),
            squares,
            move_number,
            color,
            message: message.trim_end_matches(": ").to_string(),
        }));
        id
    }

    /// Pieces the camera saw pushed off their squares' centres, each still on its square
    /// (`track::eight::Settled8::slid`): flagged for the referee (HOS 3.2 punishes moving a piece off its square; the referee decides), the position
    /// unchanged.
    pub fn pushed(&mut self, squares: &[[usize; 2]]) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        let number = (!self.history.is_empty()).then_some(self.history.len());
        for (color, squares) in super::eight::pushed_by_side(&self.position.occupancy(), squares) {
            let names = squares.iter().map(|&[r, c]| square_name(r, c)).collect();
            self.raise(
                HosFlag::Displaced,
                names,
                number,
                Some(color),
                &mut outcomes,
            );
        }
        outcomes
    }

    /// When each committed move was completed (source seconds).
    pub fn move_times(&self) -> Vec<f64> {
        self.history.iter().map(|c| c.at).collect()
    }
}

fn mv_captured(mv: &Move) -> u32 {
    mv.captured()
        .fold(0, |bits, s| bits | 1 << (s.number() - 1))
}

fn squares_of(mv: &Move) -> Vec<String> {
    WrittenMove::from(mv)
        .squares
        .iter()
        .map(Square::to_string)
        .collect()
}

impl Stage for MakhosInference {
    type Reading = Reading;
    type Outcome = Outcome;

    fn options(&self) -> &InferOptions {
        &self.options
    }

    fn waiting(&mut self) -> &mut Waiting<Reading> {
        &mut self.waiting
    }

    fn candidates(&self) -> Vec<Candidate<Reading>> {
        MakhosInference::candidates(self)
    }

    fn is_nothing(reading: &Reading) -> bool {
        matches!(reading, Reading::Nothing)
    }

    fn first_move(reading: &Reading) -> Option<Reading> {
        reading.first_move()
    }

    fn apply(&mut self, reading: Reading, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakhosInference::apply(self, reading, seen, outcomes);
    }

    fn resolve(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakhosInference::resolve(self, seen, outcomes);
    }

    fn irregular(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakhosInference::irregular(self, seen, outcomes);
    }

    fn low_confidence(&self) -> Outcome {
        Outcome::LowConfidence {
            number: self.history.len() + 1,
        }
    }

    fn raise_due(&mut self, seen: &Seen8, until_since: bool, outcomes: &mut Vec<Outcome>) {
        for (suspected, squares) in self.differences.due(seen, until_since) {
            let names = squares.iter().map(|&(r, c)| square_name(r, c)).collect();
            let kind = suspected.kind;
            let id = self.raise(
                kind,
                names,
                suspected.move_number,
                suspected.color,
                outcomes,
            );
            self.differences.flagged(&squares, id, kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::makhos::Men;
    use crate::infer::eight::probabilities;

    fn sure(occupancy: &Occupancy) -> Vec<[f32; 3]> {
        probabilities(occupancy, &[0.98; 64])
    }

    fn look(squares: &[[f32; 3]], since: f64, now: f64, hand_seen: bool) -> Seen8<'_> {
        Seen8 {
            squares,
            since,
            now,
            hand_seen,
            motion_seen: true,
            still: 0,
            moved: 0,
            stirred: 0,
        }
    }

    fn man(color: Color) -> Option<Piece> {
        Some(Piece {
            color,
            kind: Kind::Man,
        })
    }

    fn place(position: &mut Position, squares: &[(u32, Color)]) {
        for &(number, color) in squares {
            position.set(Square::new(number).unwrap(), man(color));
        }
    }

    fn flags(outcomes: &[Outcome]) -> Vec<HosFlag> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Flag(f) => Some(f.kind),
                _ => None,
            })
            .collect()
    }

    fn moves(outcomes: &[Outcome]) -> Vec<String> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Move { mv, .. } => Some(mv.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_multi_capture_lifted_piece_by_piece_is_one_move_and_no_flag() {
        let mut start = Position::empty(Color::White);
        place(
            &mut start,
            &[
                (6, Color::White),
                (10, Color::Black),
                (19, Color::Black),
                (32, Color::Black),
            ],
        );
        let capture = start.legal_moves()[0];
        assert_eq!(capture.captured_count(), 2);
        let after = start.play(&capture);
        let mut game = MakhosInference::new(start, InferOptions::default());
        // The piece has landed; both prisoners still stand.
        let mut board = after.occupancy();
        for square in capture.captured() {
            let (row, col) = square.row_col();
            board.set(row, col, Some(Color::Black));
        }
        let out = game.observe(&look(&sure(&board), 1.0, 1.3, true));
        assert_eq!(moves(&out), [capture.to_string()]);
        assert!(flags(&out).is_empty(), "{out:?}");
        // Lifted one, then the other: nothing new to record, nothing to flag.
        let first = capture.captured().next().unwrap();
        let (row, col) = first.row_col();
        board.set(row, col, None);
        assert!(
            game.observe(&look(&sure(&board), 2.0, 2.3, true))
                .is_empty()
        );
        let out = game.observe(&look(&sure(&after.occupancy()), 3.0, 3.3, true));
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(game.moves_played(), 1);
    }

    #[test]
    fn hos_1_2_2_a_king_is_known_from_the_promotion_not_from_pixels() {
        let mut start = Position::empty(Color::White);
        place(&mut start, &[(25, Color::White), (1, Color::Black)]);
        let promotion = start
            .legal_moves()
            .into_iter()
            .find(|m| m.promotes())
            .unwrap();
        let mut game = MakhosInference::new(start, InferOptions::default());
        let out = game.observe(&look(
            &sure(&start.play(&promotion).occupancy()),
            1.0,
            1.3,
            true,
        ));
        assert!(
            matches!(out[0], Outcome::Move { promoted: true, .. }),
            "{out:?}"
        );
        assert_eq!(
            game.position().piece_at(promotion.to()).map(|p| p.kind),
            Some(Kind::King)
        );
    }

    #[test]
    fn hos_3_4_moving_twice_is_a_warning() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        let first = start.legal_moves()[0];
        let after = start.play(&first);
        game.observe(&look(&sure(&after.occupancy()), 1.0, 1.3, true));
        let mut again = after;
        again.set_turn(Color::White);
        let second = again.legal_moves()[0];
        let out = game.observe(&look(
            &sure(&again.play(&second).occupancy()),
            4.0,
            4.3,
            true,
        ));
        assert_eq!(flags(&out), [HosFlag::DoubleMove]);
        let Some(Outcome::Flag(flag)) = out.iter().find(|o| matches!(o, Outcome::Flag(_))) else {
            unreachable!()
        };
        assert_eq!(flag.rules[0].to_string(), "HOS 3.4");
        assert_eq!(flag.penalties, [Penalty::Warning]);
    }

    #[test]
    fn hos_3_2_a_man_set_down_two_squares_on_then_moved_back_is_a_takeback_not_a_double_move() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        let (first, second) = start
            .legal_moves()
            .into_iter()
            .find_map(|first| {
                let mut again = start.play(&first);
                again.set_turn(Color::White);
                again
                    .legal_moves()
                    .into_iter()
                    .find(|second| second.from() == first.to() && !second.is_capture())
                    .map(|second| (first, second))
            })
            .expect("a man with two free steps ahead");
        let mut again = start.play(&first);
        again.set_turn(Color::White);
        let set_down = again.play(&second).occupancy();
        let out = game.observe(&look(&sure(&set_down), 1.0, 1.3, true));
        assert!(
            out.is_empty(),
            "waits on a man set down out of reach: {out:?}"
        );
        let out = game.observe(&look(
            &sure(&start.play(&first).occupancy()),
            2.0,
            2.3,
            true,
        ));
        assert_eq!(moves(&out), [first.to_string()]);
        assert_eq!(flags(&out), [HosFlag::Takeback]);
    }

    #[test]
    fn hos_3_2_a_man_set_down_beyond_a_friend_then_moved_on_is_a_takeback_not_two_moves() {
        // Held-out 300377: after 8-12 27-24 5-9 24-20 White's man on 6 is set down on 14,
        // past his own man on 9, then moved on to 10. Two moves (9-14, 6-9) show the same
        // squares as the one man set down.
        let number = |n: u32| Square::new(n).unwrap();
        let mut position = Position::start(Men::Eight, Color::White);
        for (from, to) in [(8, 12), (27, 24), (5, 9), (24, 20)] {
            let mv = position
                .legal_moves()
                .into_iter()
                .find(|mv| mv.from() == number(from) && mv.to() == number(to))
                .expect("an opening move");
            position = position.play(&mv);
        }
        let mut game = MakhosInference::new(position, InferOptions::default());
        let mut set_down = position;
        let man = set_down.piece_at(number(6));
        set_down.set(number(6), None);
        set_down.set(number(14), man);
        let out = game.observe(&look(&sure(&set_down.occupancy()), 1.0, 1.3, true));
        assert!(
            flags(&out).is_empty() && moves(&out).is_empty(),
            "waits on a man set down out of reach: {out:?}"
        );
        let step = position
            .legal_moves()
            .into_iter()
            .find(|mv| mv.from() == number(6) && mv.to() == number(10))
            .expect("6-10");
        let out = game.observe(&look(
            &sure(&position.play(&step).occupancy()),
            2.0,
            2.3,
            true,
        ));
        assert_eq!(moves(&out), ["6-10"]);
        assert_eq!(flags(&out), [HosFlag::Takeback]);
        let named = out.iter().find_map(|o| match o {
            Outcome::Flag(flag) => Some(flag.squares.clone()),
            _ => None,
        });
        assert_eq!(named.unwrap(), ["6", "14", "10"]);
    }

    #[test]
    fn hos_3_4_a_man_that_captures_and_steps_on_unseen_between_has_moved_twice() {
        // A white man takes a black man and, before Black has moved, steps on: the view
        // between the two was never seen. Black keeps a man far away.
        let man = |color| {
            Some(Piece {
                color,
                kind: Kind::Man,
            })
        };
        let (position, capture, again, step) = (1..=32u32)
            .flat_map(|w| (1..=32u32).map(move |b| (w, b)))
            .find_map(|(w, b)| {
                if w == b || w == 32 || b == 32 {
                    return None;
                }
                let mut position = Position::empty(Color::White);
                position.set(Square::new(w)?, man(Color::White));
                position.set(Square::new(b)?, man(Color::Black));
                position.set(Square::new(32)?, man(Color::Black));
                let capture = position
                    .legal_moves()
                    .into_iter()
                    .find(|mv| mv.is_capture())?;
                let mut again = position.play(&capture);
                again.set_turn(Color::White);
                let step = again
                    .legal_moves()
                    .into_iter()
                    .find(|mv| mv.from() == capture.to() && !mv.is_capture())?;
                Some((position, capture, again, step))
            })
            .expect("a capture the man can step on from");
        let mut game = MakhosInference::new(position, InferOptions::default());
        let seen = sure(&again.play(&step).occupancy());
        let out = game.observe(&look(&seen, 1.0, 1.6, true));
        assert_eq!(moves(&out), [capture.to_string(), step.to_string()]);
        assert_eq!(flags(&out), [HosFlag::DoubleMove]);
    }

    #[test]
    fn hos_3_2_a_knocked_piece_is_flagged_once_and_resolved_when_put_back() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        // White's man on 5 slides to 9 with no hand: a legal-looking step, not a move.
        let mut knocked = start.occupancy();
        let (from, to) = (
            Square::new(5).unwrap().row_col(),
            Square::new(9).unwrap().row_col(),
        );
        knocked.set(from.0, from.1, None);
        knocked.set(to.0, to.1, Some(Color::White));
        let squares = sure(&knocked);
        assert!(
            game.observe(&look(&squares, 1.0, 1.5, false)).is_empty(),
            "not yet"
        );
        let out = game.observe(&look(&squares, 1.0, 3.1, false));
        assert_eq!(flags(&out), [HosFlag::Displaced]);
        assert!(moves(&out).is_empty());
        assert!(
            game.observe(&look(&squares, 1.0, 4.0, false)).is_empty(),
            "once"
        );
        // Put back by hand: it could also be the knocked piece moved on as White's move,
        // so it must stand before it is believed.
        let back = sure(&start.occupancy());
        assert!(game.observe(&look(&back, 5.0, 5.3, true)).is_empty());
        let out = game.observe(&look(&back, 5.0, 7.5, true));
        assert!(
            matches!(
                out.as_slice(),
                [Outcome::Resolved {
                    kind: HosFlag::Displaced,
                    ..
                }]
            ),
            "{out:?}"
        );
    }

    #[test]
    fn a_misread_that_reads_right_again_before_it_persists_is_no_flag() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        let mut misread = start.occupancy();
        let (from, to) = (
            Square::new(5).unwrap().row_col(),
            Square::new(9).unwrap().row_col(),
        );
        misread.set(from.0, from.1, None);
        misread.set(to.0, to.1, Some(Color::White));
        let squares = sure(&misread);
        // Stood past `unexplained_seconds` with no hand: noticed, not yet flagged.
        assert!(game.observe(&look(&squares, 1.0, 2.2, false)).is_empty());
        let right = sure(&start.occupancy());
        assert!(game.observe(&look(&right, 2.3, 2.5, false)).is_empty());
        assert!(game.observe(&look(&right, 2.3, 6.0, false)).is_empty());
        assert_eq!(game.board(), start.occupancy());
    }

    #[test]
    fn a_man_doubted_with_no_hand_about_is_no_disturbance_when_read_as_the_other_sides() {
        let start = Position::start(Men::Eight, Color::White);
        let (row, col) = Square::new(3).unwrap().row_col();
        let mut squares = sure(&start.occupancy());
        squares[row * 8 + col] = [0.0, 0.89, 0.11];
        // Read so first after a hand: a man pushed off his square's centre (300201's
        // slide) is flagged.
        let mut pushed = MakhosInference::new(start, InferOptions::default());
        let mut out = pushed.observe(&look(&squares, 1.0, 1.3, true));
        out.extend(pushed.observe(&look(&squares, 1.0, 3.0, true)));
        assert_eq!(flags(&out), [HosFlag::Displaced], "{out:?}");
        // Read so in a still view nothing touched (300218), for far longer than a flag
        // waits: the reader's doubt.
        let mut game = MakhosInference::new(start, InferOptions::default());
        assert!(game.observe(&look(&squares, 1.0, 1.3, false)).is_empty());
        assert!(game.observe(&look(&squares, 1.0, 6.0, false)).is_empty());
        // A move beside it is still the move, and flags nothing.
        let mv = start
            .legal_moves()
            .into_iter()
            .find(|m| m.from() != Square::new(3).unwrap())
            .unwrap();
        let mut squares = sure(&start.play(&mv).occupancy());
        squares[row * 8 + col] = [0.0, 0.89, 0.11];
        let mut out = game.observe(&look(&squares, 7.0, 7.3, true));
        out.extend(game.observe(&look(&squares, 7.0, 12.0, false)));
        assert_eq!(moves(&out), [mv.to_string()]);
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn the_square_a_man_left_read_as_the_other_sides_is_misread_only_in_the_moves_sighting() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        let mv = start.legal_moves()[0];
        let after = start.play(&mv);
        let (row, col) = mv.from().row_col();
        // The bare square the man left reads dark from the sighting of the move on.
        let mut shown = after.occupancy();
        shown.set(row, col, Some(Color::Black));
        let mut out = game.observe(&look(&sure(&shown), 1.0, 1.3, true));
        out.extend(game.observe(&look(&sure(&shown), 1.0, 6.0, false)));
        assert_eq!(moves(&out), [mv.to_string()]);
        assert!(flags(&out).is_empty(), "{out:?}");
        assert_eq!(
            game.board(),
            after.occupancy(),
            "the board stands as the rules say"
        );
        // Read bare again: forgotten, nothing to resolve.
        let out = game.observe(&look(&sure(&after.occupancy()), 7.0, 7.3, false));
        assert!(out.is_empty(), "{out:?}");
        // A dark piece there in a later sighting is one set down: flagged.
        let mut out = game.observe(&look(&sure(&shown), 9.0, 9.3, true));
        out.extend(game.observe(&look(&sure(&shown), 9.0, 12.0, true)));
        assert_eq!(flags(&out), [HosFlag::PieceAdded], "{out:?}");
    }

    #[test]
    fn a_man_read_gone_with_nothing_moving_over_the_board_is_a_misreading() {
        // 300310: a man read gone in the still view after a move, with nothing moving
        // over the board, was flagged beside the next move as that hand's disturbance.
        let start = Position::start(Men::Eight, Color::White);
        let mv = start.legal_moves()[0];
        let (row, col) = start
            .pieces(Color::White)
            .map(|(square, _)| square)
            .find(|&square| square != mv.from())
            .expect("another White man")
            .row_col();
        let mut misread = start.occupancy();
        misread.set(row, col, None);
        let squares = sure(&misread);
        let still = |now: f64| Seen8 {
            motion_seen: false,
            still: 0,
            moved: 0,
            stirred: 0,
            ..look(&squares, 1.0, now, false)
        };
        let mut game = MakhosInference::new(start, InferOptions::default());
        let out: Vec<Outcome> = [1.5, 3.1, 5.0]
            .into_iter()
            .flat_map(|now| game.observe(&still(now)))
            .collect();
        assert!(flags(&out).is_empty(), "{out:?}");
        // The next hand's move is recorded with nothing beside it, the man still read
        // gone: not a disturbance of that hand, nor a prisoner left standing.
        let mut moved = start.play(&mv).occupancy();
        moved.set(row, col, None);
        let after = sure(&moved);
        let mut out = game.observe(&look(&after, 6.0, 6.3, true));
        out.extend(game.observe(&look(&after, 6.0, 8.0, true)));
        assert_eq!(moves(&out), [mv.to_string()], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        // The same change after something moved with no arm (a knock) is the board's.
        let mut game = MakhosInference::new(start, InferOptions::default());
        let out: Vec<Outcome> = [1.5, 3.1]
            .into_iter()
            .flat_map(|now| game.observe(&look(&squares, 1.0, now, false)))
            .collect();
        assert_eq!(flags(&out), [HosFlag::PieceRemoved], "{out:?}");
    }

    #[test]
    fn a_piece_knocked_after_the_hand_is_no_reply() {
        let start = Position::start(Men::Eight, Color::White);
        let mv = start.legal_moves()[0];
        let after = start.play(&mv);
        // The knocked man lands where Black's reply could have put him (300221: 15-11).
        let reply = after.legal_moves()[0];
        let shown = sure(&after.play(&reply).occupancy());
        let mut two_hands = MakhosInference::new(start, InferOptions::default());
        let out = two_hands.observe(&look(&shown, 1.0, 1.3, true));
        assert_eq!(moves(&out), [mv.to_string(), reply.to_string()]);
        let mut game = MakhosInference::new(start, InferOptions::default());
        game.knocked_after_hand(true);
        let mut out = game.observe(&look(&shown, 1.0, 1.3, true));
        out.extend(game.observe(&look(&shown, 1.0, 3.0, true)));
        assert_eq!(moves(&out), [mv.to_string()], "{out:?}");
        assert_eq!(flags(&out), [HosFlag::Displaced], "{out:?}");
    }

    #[test]
    fn an_illegal_move_captures_only_what_it_passed_over() {
        let mut position = Position::empty(Color::White);
        place(
            &mut position,
            &[(6, Color::White), (10, Color::Black), (32, Color::Black)],
        );
        let game = MakhosInference::new(position, InferOptions::default());
        let ((r6, c6), (r10, c10)) = (
            Square::new(6).unwrap().row_col(),
            Square::new(10).unwrap().row_col(),
        );
        let (r15, c15) = (2 * r10 - r6, 2 * c10 - c6);
        let landed = |gone: u32| {
            let mut read = position.occupancy();
            read.set(r6, c6, None);
            read.set(r15, c15, Some(Color::White));
            let (row, col) = Square::new(gone).unwrap().row_col();
            read.set(row, col, None);
            read
        };
        assert!(game.illegal_move(&landed(10)).is_some());
        // A man far from its path read as gone was not jumped.
        assert!(game.illegal_move(&landed(32)).is_none());
    }

    #[test]
    fn hos_1_5_1_a_move_over_two_minutes_is_flagged() {
        let start = Position::start(Men::Eight, Color::White);
        let mut game = MakhosInference::new(start, InferOptions::default());
        game.observe(&look(&sure(&start.occupancy()), 0.0, 0.3, false));
        let first = start.legal_moves()[0];
        let out = game.observe(&look(
            &sure(&start.play(&first).occupancy()),
            130.0,
            130.3,
            true,
        ));
        assert_eq!(flags(&out), [HosFlag::OverTime]);
        assert_eq!(HosFlag::OverTime.rules()[0].to_string(), "HOS 1.5.1");
    }

    #[test]
    fn hos_5_3_the_sixteen_move_count_runs_with_kings_only() {
        let mut start = Position::empty(Color::White);
        let king = |color| {
            Some(Piece {
                color,
                kind: Kind::King,
            })
        };
        start.set(Square::new(1).unwrap(), king(Color::White));
        start.set(Square::new(32).unwrap(), king(Color::Black));
        let mut game = MakhosInference::new(start, InferOptions::default());
        let mut position = start;
        let mut counts = Vec::new();
        for ply in 0..16usize {
            // A quiet king move that gives the other king nothing to capture.
            let moves = position.legal_moves();
            let mv = moves
                .iter()
                .copied()
                .find(|m| !position.play(m).has_capture())
                .unwrap_or(moves[0]);
            position = position.play(&mv);
            let t = 5.0 * ply as f64;
            for outcome in game.observe(&look(&sure(&position.occupancy()), t, t + 0.3, true)) {
                match outcome {
                    Outcome::Count { rule, reached, .. } if rule.number == "5.3" => {
                        counts.push(reached)
                    }
                    Outcome::Flag(f) if f.kind == HosFlag::SixteenMoves => counts.push(99),
                    _ => {}
                }
            }
        }
        assert_eq!(counts[..3], [1, 2, 3]);
        assert_eq!(counts.last(), Some(&99), "{counts:?}");
    }
}
