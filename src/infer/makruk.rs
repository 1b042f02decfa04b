//! Makruk moves from settled positions: what `kradan record --game makruk` decides, with
//! no pixels.
//!
//! As for Mak-hos (`infer::makhos`), each settled sighting is weighed against the
//! explanations the rules engine (`games::makruk`) offers: nothing new, one legal move
//! (captures and the Bia turned over on the sixth rank included), two moves in turn, a
//! side moving twice, the last move taken back or its piece moved on. A tall piece may
//! hide the square behind it: such a square reads unsure, so it fits an explanation either
//! way and the legal moves decide.
//!
//! RULES.md gives Makruk no article for illegal moves, double moves or pieces disturbed:
//! like `kradan replay` and the renderer, these cite MAKRUK 4 (the referee decides any
//! problem during play), a piece moved on after being set down cites MAKRUK 6, all
//! advisory. An illegal move is not recorded: the record keeps the rules' position, and
//! the board's difference from it is remembered until put right. Repetition (MAKRUK 16)
//! and the counts (MAKRUK 7–14, `games::makruk::counting`) are shown as they run and
//! flagged at their limits.

use super::eight::{
    Candidate, Differences, RaisedFlag, Seen8, Stage, Waiting, changes, closest, square_bits,
    standing_alike,
};
use super::go::InferOptions;
use crate::games::makruk::{Count, CountKind, Move, Position, Role, Square, Status, to_san};
use crate::games::{Article, Color, Occupancy, Penalty, Source};
use std::collections::HashMap;

/// How far a figure read as the other side's still counts as its own
/// (`infer::eight::ColourSlip`). No move turns a piece into the other side's where it
/// stands, while the square reader calls a figure the wrong side's for seconds: on
/// development renders, White's back rank read dark on an oblique 640×480 view (seed
/// 310201, five `displaced` flags) and Black's figures nearest the camera read light after
/// a hand (310103). With a quarter, a figure read 0.99 the other side's fits as a square
/// read 0.25 right: no contradiction, but never as good as a clean reading.
const COLOUR_SLIP: f32 = 0.25;

/// Times the same position may come about before a draw (MAKRUK 16).
pub const REPETITION_LIMIT: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RukFlag {
    Illegal,
    DoubleMove,
    Takeback,
    Displaced,
    PieceAdded,
    PieceRemoved,
    Repetition,
    /// The running count reached its limit: a draw.
    CountLimit(CountKind),
}

fn makruk(number: &'static str) -> Article {
    Article::new(Source::Makruk, number)
}

impl RukFlag {
    pub fn rules(self) -> Vec<Article> {
        match self {
            RukFlag::Illegal => vec![makruk("4"), makruk("6")],
            RukFlag::Takeback => vec![makruk("6")],
            RukFlag::DoubleMove
            | RukFlag::Displaced
            | RukFlag::PieceAdded
            | RukFlag::PieceRemoved => vec![makruk("4")],
            RukFlag::Repetition => vec![makruk("16")],
            RukFlag::CountLimit(CountKind::BoardHonour) => vec![makruk("8")],
            RukFlag::CountLimit(CountKind::PiecesHonour) => vec![makruk("9"), makruk("10")],
        }
    }

    pub fn penalties(self) -> Vec<Penalty> {
        vec![match self {
            RukFlag::Repetition | RukFlag::CountLimit(_) => Penalty::DrawClaim,
            _ => Penalty::Advisory,
        }]
    }

    pub fn name(self) -> &'static str {
        match self {
            RukFlag::Illegal => "illegal-move",
            RukFlag::DoubleMove => "double-move",
            RukFlag::Takeback => "takeback",
            RukFlag::Displaced => "displaced",
            RukFlag::PieceAdded => "added",
            RukFlag::PieceRemoved => "removed",
            RukFlag::Repetition => "repetition",
            RukFlag::CountLimit(_) => "count-limit",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RukFlag::Illegal => "a move no rule allows",
            RukFlag::DoubleMove => "the same side moved twice in a row",
            RukFlag::Takeback => "the piece was set down on one square, then moved on",
            RukFlag::Displaced => "pieces were moved off their squares",
            RukFlag::PieceAdded => "a piece was added to the board",
            RukFlag::PieceRemoved => "a piece was removed without being captured",
            RukFlag::Repetition => "the same position came about three times",
            RukFlag::CountLimit(_) => "the count reached its limit",
        }
    }
}

pub type RukRaisedFlag = RaisedFlag<RukFlag>;

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A move of the game record; `number` is the 1-based ply. A number given before is
    /// replaced (the last move was taken back and another made).
    Move {
        number: usize,
        color: Color,
        mv: Move,
        /// As the record writes it, from the position it was played in.
        san: String,
        /// Where the game stands after it: check is in the SAN, mate and stalemate here.
        status: Status,
        seconds: f64,
    },
    TakenBack {
        number: usize,
    },
    Flag(RukRaisedFlag),
    Resolved {
        id: u32,
        kind: RukFlag,
        squares: Vec<String>,
    },
    /// The count as it runs (MAKRUK 7–14): after every move while one runs, and `None`
    /// once when it stops.
    Count(Option<Count>),
    LowConfidence {
        number: usize,
    },
}

#[derive(Clone, Debug)]
struct Committed {
    before: Position,
    mv: Move,
    color: Color,
    at: f64,
}

/// An explanation of a sighting (see `infer::makhos::Reading`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    Nothing,
    One(Move),
    Two(Move, Move),
    Again(Move),
    Twice(Move, Move),
    TakeBack,
    MovedOn(Move),
    /// A move a piece of a game joined in progress makes only as the figure joined on
    /// another square: the two figures exchanged, then the move.
    Refigured(Square, Move),
}

impl Reading {
    /// The first move of the side to move it plays, as a reading of its own.
    fn first_move(&self) -> Option<Reading> {
        match *self {
            Reading::One(mv) | Reading::Two(mv, _) | Reading::Twice(mv, _) => {
                Some(Reading::One(mv))
            }
            _ => None,
        }
    }
}

pub struct MakrukInference {
    options: InferOptions,
    position: Position,
    differences: Differences<RukFlag>,
    history: Vec<Committed>,
    next_flag_id: u32,
    seen_positions: HashMap<(crate::games::makruk::Board, Color), u32>,
    /// The side that moved first.
    first: Color,
    /// The squares (bit `row * 8 + col`) whose figure the last sighting acted on read as
    /// the other side's: a figure the reader misreads there is misread where it takes.
    slipping: u64,
    waiting: Waiting<Reading>,
    /// A game joined in progress: squares whose figure the colours left open, with the
    /// figures that could stand there (`makruk::Joined::uncertain`), following the pieces
    /// as they move.
    unsure: Vec<(Square, Vec<Role>)>,
}

fn square_name(row: usize, col: usize) -> String {
    Square::from_row_col(row, col).map_or_else(String::new, |s| s.to_string())
}

impl MakrukInference {
    pub fn new(position: Position, options: InferOptions) -> MakrukInference {
        let first = position.turn();
        let mut seen_positions = HashMap::new();
        seen_positions.insert(position.repetition_key(), 1);
        MakrukInference {
            options,
            position,
            differences: Differences {
                colour_slip: Some(COLOUR_SLIP),
                ..Differences::default()
            },
            history: Vec::new(),
            next_flag_id: 1,
            seen_positions,
            first,
            slipping: 0,
            waiting: Waiting::default(),
            unsure: Vec::new(),
        }
    }

    /// A game joined in progress whose figures on these squares are open.
    pub fn set_unsure_figures(&mut self, unsure: Vec<(Square, Vec<Role>)>) {
        self.unsure = unsure;
    }

    /// The positions with two open figures of the side to move exchanged, the square that
    /// then moves first: each figure one the other square's could be.
    fn refigured(&self) -> Vec<(Square, Square, Position)> {
        let board = self.position.board();
        let mover = self.position.turn();
        let role = |square: Square| board.piece_at(square).filter(|p| p.color == mover);
        let mut out = Vec::new();
        for (a, a_roles) in &self.unsure {
            for (b, b_roles) in &self.unsure {
                let (Some(on_a), Some(on_b)) = (role(*a), role(*b)) else {
                    continue;
                };
                if a != b
                    && on_a.role != on_b.role
                    && a_roles.contains(&on_b.role)
                    && b_roles.contains(&on_a.role)
                    && let Some(exchanged) = self.position.with_figures_exchanged(*a, *b)
                {
                    out.push((*a, *b, exchanged));
                }
            }
        }
        out
    }

    pub fn position(&self) -> &Position {
        &self.position
    }

    pub fn moves_played(&self) -> usize {
        self.history.len()
    }

    pub fn board(&self) -> Occupancy {
        self.differences.physical(&self.position.occupancy())
    }

    /// See [`super::makhos::MakhosInference::acknowledge`].
    pub fn acknowledge(&mut self, shown: &Occupancy) {
        self.differences
            .acknowledge(&self.position.occupancy(), shown);
    }

    /// The stage of a resumed record, whose flags so far took the ids below `id`.
    pub fn with_next_flag_id(mut self, id: u32) -> MakrukInference {
        self.next_flag_id = self.next_flag_id.max(id);
        self
    }

    /// Plays a move already in the record (a resumed recording), as if it had been
    /// seen: the history, the count and the repetitions follow it; nothing is reported.
    pub fn replay(&mut self, mv: Move, at: f64) {
        let squares = super::eight::probabilities(&self.position.after(&mv).occupancy(), &[]);
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
        self.commit(mv, &seen, &mut Vec::new());
    }

    pub fn next_flag_id(&self) -> u32 {
        self.next_flag_id
    }

    /// A referee closed flag `id`: the board stops resolving it by itself.
    pub fn close_flag(&mut self, id: u32) {
        self.differences.close_flag(id);
    }

    /// Acts on a settled sighting; see `MakhosInference::observe` for when it waits.
    pub fn observe(&mut self, seen: &Seen8) -> Vec<Outcome> {
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

    /// The one legal move that changes exactly the squares whose pictures changed as a
    /// piece coming or going changes them, or exactly those that changed by more than
    /// noise, every other square read as standing or bare as the board has it (a colour
    /// slip aside): the reader misread where the piece left or arrived. A dark figure
    /// moving between dark squares in dim light changes its two squares by less than a
    /// piece coming or going usually does (Makruk 310714: 16 and 15), and the squares
    /// that stirred alone, exactly one legal move's, are evidence enough. `None` when no
    /// move, or more than one, does.
    fn shown_by_pictures(&self, seen: &Seen8) -> Option<Reading> {
        if seen.moved | seen.stirred == 0 {
            return None;
        }
        let rules = self.position.occupancy();
        let alike = standing_alike(&seen.read(), &self.board());
        let mut shown = None;
        for &mv in self.position.legal_moves().iter() {
            let after = self.position.after(&mv).occupancy();
            let changed = square_bits(&changes(&rules, &after).0);
            let pictured = changed == seen.moved || changed == seen.stirred;
            if !pictured {
                continue;
            }
            if alike | changed == u64::MAX {
                if shown.is_some() {
                    return None;
                }
                shown = Some(Reading::One(mv));
            }
        }
        shown
    }

    fn candidates(&self) -> Vec<Candidate<Reading>> {
        let current = &self.position;
        let rules = current.occupancy();
        // The colour slip for nothing new, one move, or an explanation with no capture:
        // a capture shows only as a colour changed on its target, and seen through
        // doubtful colours it is believed as the one move expected next, never inside an
        // explanation doubtful already (two moves, a double move, a takeback). On
        // development seed 310100, eleven figures read in the wrong colour at once made
        // c5xd4, read with d4 still light, a double move c4 cxb3.
        let expect_as = |position: &Position, single: bool| {
            let occupancy = position.occupancy();
            let captures = (0..64).any(|i| {
                matches!(
                    (rules.get(i / 8, i % 8), occupancy.get(i / 8, i % 8)),
                    (Some(was), Some(now)) if was != now
                )
            });
            let slips = (single || !captures).then_some(&rules);
            self.differences.expect(&occupancy, slips)
        };
        let expect = |position: &Position| expect_as(position, true);
        let doubtful = |position: &Position| expect_as(position, false);
        let mut out = vec![Candidate {
            what: Reading::Nothing,
            expected: expect(current),
            prior: 0.0,
        }];
        for &mv in current.legal_moves().iter() {
            let after = current.after(&mv);
            for &reply in after.legal_moves().iter() {
                out.push(Candidate {
                    what: Reading::Two(mv, reply),
                    expected: doubtful(&after.after(&reply)),
                    prior: -2.0,
                });
            }
            let again = after.with_turn(current.turn());
            for &second in again.legal_moves().iter() {
                out.push(Candidate {
                    what: Reading::Twice(mv, second),
                    expected: doubtful(&again.after(&second)),
                    prior: -4.0,
                });
            }
            let (from_row, from_col) = mv.from.row_col();
            let (to_row, to_col) = mv.to.row_col();
            let mut expected = expect(&after);
            if mv.capture.is_some() && self.slipping & (1 << (from_row * 8 + from_col)) != 0 {
                // On development seed 310103 Black's Ruea read light on h7 for seconds,
                // then took on h5 and read light there too.
                expected = expected.forgiving(to_row, to_col);
            }
            out.push(Candidate {
                what: Reading::One(mv),
                expected,
                prior: 0.0,
            });
        }
        for (from, other, exchanged) in self.refigured() {
            for &mv in exchanged.legal_moves_from(from).iter() {
                let as_joined = current.legal_moves_from(from).iter().any(|m| m.to == mv.to);
                if !as_joined {
                    out.push(Candidate {
                        what: Reading::Refigured(other, mv),
                        expected: expect(&exchanged.after(&mv)),
                        prior: -0.5,
                    });
                }
            }
        }
        if let Some(last) = self.history.last() {
            let flipped = current.with_turn(current.turn().opponent());
            for &mv in flipped.legal_moves().iter() {
                out.push(Candidate {
                    what: Reading::Again(mv),
                    expected: doubtful(&flipped.after(&mv)),
                    prior: -3.0,
                });
            }
            out.push(Candidate {
                what: Reading::TakeBack,
                expected: doubtful(&last.before),
                prior: -1.0,
            });
            for &mv in last.before.legal_moves_from(last.mv.from).iter() {
                if mv != last.mv {
                    out.push(Candidate {
                        what: Reading::MovedOn(mv),
                        expected: doubtful(&last.before.after(&mv)),
                        prior: -1.5,
                    });
                }
            }
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
            Reading::One(mv) => {
                let set_down = self.set_down_first(&mv);
                self.commit(mv, seen, outcomes);
                if let Some((row, col)) = set_down {
                    let number = self.history.len();
                    let squares = vec![
                        mv.from.to_string(),
                        square_name(row, col),
                        mv.to.to_string(),
                    ];
                    self.raise(
                        RukFlag::Takeback,
                        squares,
                        Some(number),
                        Some(mover),
                        outcomes,
                    );
                }
            }
            Reading::Two(first, second) => {
                self.commit(first, seen, outcomes);
                self.commit(second, seen, outcomes);
            }
            Reading::Again(mv) => {
                let color = mover.opponent();
                self.position = self.position.with_turn(color);
                self.commit(mv, seen, outcomes);
                let number = self.history.len();
                let squares = vec![mv.from.to_string(), mv.to.to_string()];
                self.raise(
                    RukFlag::DoubleMove,
                    squares,
                    Some(number),
                    Some(color),
                    outcomes,
                );
            }
            Reading::Twice(first, second) => {
                self.commit(first, seen, outcomes);
                self.position = self.position.with_turn(mover);
                self.commit(second, seen, outcomes);
                let number = self.history.len();
                let squares = vec![second.from.to_string(), second.to.to_string()];
                self.raise(
                    RukFlag::DoubleMove,
                    squares,
                    Some(number),
                    Some(mover),
                    outcomes,
                );
            }
            Reading::Refigured(other, mv) => {
                if let Some(exchanged) = self.position.with_figures_exchanged(mv.from, other) {
                    self.position = exchanged;
                    self.unsure
                        .retain(|(square, _)| *square != mv.from && *square != other);
                }
                self.commit(mv, seen, outcomes);
            }
            Reading::TakeBack => {
                let number = self.history.len();
                self.take_back();
                outcomes.push(Outcome::TakenBack { number });
            }
            Reading::MovedOn(mv) => {
                let number = self.history.len();
                let last = self.take_back();
                outcomes.push(Outcome::TakenBack { number });
                self.commit(mv, seen, outcomes);
                let squares = vec![
                    mv.from.to_string(),
                    last.mv.to.to_string(),
                    mv.to.to_string(),
                ];
                self.raise(
                    RukFlag::Takeback,
                    squares,
                    Some(number),
                    Some(last.color),
                    outcomes,
                );
            }
        }
    }

    /// Where the last unexplained sighting showed the moving piece set down first, when it
    /// did (see `MakhosInference`).
    fn set_down_first(&self, mv: &Move) -> Option<(usize, usize)> {
        if mv.capture.is_some() {
            return None;
        }
        let transient = self.waiting.transient.as_ref()?;
        let color = self.position.turn();
        let board = self.board();
        let mut transient = transient.clone();
        for [row, col] in board.differences(&transient) {
            if let (Some(own), Some(_)) = (board.get(row, col), transient.get(row, col)) {
                // A figure read as the other side's (the colour slip) moved nothing.
                transient.set(row, col, Some(own));
            }
        }
        super::eight::set_down_square(
            &board,
            &transient,
            color,
            [mv.from.row_col(), mv.to.row_col()],
        )
    }

    fn take_back(&mut self) -> Committed {
        let last = self.history.pop().expect("a move to take back");
        if let Some(count) = self.seen_positions.get_mut(&self.position.repetition_key()) {
            *count = count.saturating_sub(1);
        }
        let turn = self
            .history
            .last()
            .map_or(self.first, |previous| previous.color.opponent());
        // A double move was played from a position with the turn turned round.
        self.position = last.before.with_turn(turn);
        last
    }

    fn commit(&mut self, mv: Move, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        self.differences.forget_moved();
        self.unsure.retain(|(square, _)| *square != mv.to);
        for (square, _) in &mut self.unsure {
            if *square == mv.from {
                *square = mv.to;
            }
        }
        let before = self.position.clone();
        let color = before.turn();
        let san = to_san(&before, &mv);
        let seconds = seen.since - self.waiting.clock.unwrap_or(seen.since);
        self.waiting.clock = Some(seen.since);
        self.position.play(&mv);
        self.history.push(Committed {
            before: before.clone(),
            mv,
            color,
            at: seen.since,
        });
        let number = self.history.len();
        outcomes.push(Outcome::Move {
            number,
            color,
            mv,
            san,
            status: self.position.status(),
            seconds,
        });
        let count = self.position.count();
        if count.is_some() || before.count().is_some() {
            outcomes.push(Outcome::Count(count));
        }
        if let Some(count) = count
            && count.is_at_limit()
            && before.count().is_none_or(|c| !c.is_at_limit())
        {
            self.raise(
                RukFlag::CountLimit(count.kind),
                Vec::new(),
                Some(number),
                None,
                outcomes,
            );
        }
        let times = self
            .seen_positions
            .entry(self.position.repetition_key())
            .or_insert(0);
        *times += 1;
        if *times == REPETITION_LIMIT {
            self.raise(
                RukFlag::Repetition,
                Vec::new(),
                Some(number),
                None,
                outcomes,
            );
        }
    }

    fn irregular(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        let rules = self.position.occupancy();
        // A square read against the record whose picture has not changed since the stage
        // last caught up: the hand over the board took or brought no figure there
        // (Makruk 310706, `hard` light: White's Ruea on h1 read bare from the start, ever
        // more surely; the sighting of Black's a6-a5 read it bare past doubt, its picture
        // unchanged, and it was flagged removed). Not with no hand: after a knock the
        // view caught up on may already show the knocked board (310658, a `board-knock`:
        // c4 doubted so, and Black's last move was taken back for it).
        if seen.hand_seen {
            self.differences.doubt_still(seen, &rules);
        }
        let read = self.differences.reading_against(seen, &rules);
        let (changed, appeared, vanished) = changes(&rules, &read);
        if changed.is_empty() {
            self.resolve(seen, outcomes);
            return;
        }
        // Nothing moved over the board since the last position acted on (no arm, and no
        // square's middle changed from one look to the next: a figure knocked to the next
        // square shows there, Makruk 310287), and none of these squares changed when
        // something did. No hand took, brought or pushed a figure, so the reader changed
        // its mind (a far back rank at 640×480, a figure's shadow, a tall figure read on
        // the square behind it).
        if self.differences.unmoved(seen, &changed) && !self.options.stills {
            self.differences.doubt_unmoved(seen, &rules);
            return;
        }
        if seen.hand_seen
            && let Some((reading, left)) = closest(self.candidates(), seen)
            && !matches!(reading, Reading::Nothing)
            && left < changed.len()
        {
            // A move beside a disturbance: the move is recorded, the rest flagged, but for
            // a piece read where none stands next to the squares the move changed.
            self.apply(reading, seen, outcomes);
            let played = self.position.occupancy();
            let (moved, _, _) = changes(&rules, &played);
            self.differences
                .doubt_appeared_on(seen, &played, super::eight::around(&moved));
            self.irregular(
                &Seen8 {
                    hand_seen: false,
                    ..seen.clone()
                },
                outcomes,
            );
            return;
        }
        let mover = self.position.turn();
        let relocated_own = seen.hand_seen
            && appeared == 1
            && vanished >= 1
            && changed
                .iter()
                .any(|&(r, c)| read.get(r, c) == Some(mover) && rules.get(r, c) != Some(mover));
        let kind = if relocated_own {
            RukFlag::Illegal
        } else if appeared > vanished {
            RukFlag::PieceAdded
        } else if vanished > appeared {
            RukFlag::PieceRemoved
        } else {
            RukFlag::Displaced
        };
        let color = relocated_own.then_some(mover);
        let since = self
            .waiting
            .disturbed_since
            .map_or(seen.since, |first| first.min(seen.since));
        self.differences.suspect(
            seen,
            &rules,
            kind,
            since,
            Some(self.history.len() + 1),
            color,
        );
    }

    fn resolve(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        let rules = self.position.occupancy();
        let read = seen.read();
        self.slipping = 0;
        for index in 0..64 {
            let (row, col) = (index / 8, index % 8);
            if let Some(own) = rules.get(row, col)
                && read.get(row, col) == Some(own.opponent())
            {
                self.slipping |= 1 << index;
            }
        }
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
        kind: RukFlag,
        squares: Vec<String>,
        move_number: Option<usize>,
        color: Option<Color>,
        outcomes: &mut Vec<Outcome>,
    ) -> u32 {
        let id = self.next_flag_id;
        self.next_flag_id += 1;
        let who = color.map(|c| format!("{c} ")).unwrap_or_default();
        let mut message = format!("{who}{}", kind.describe());
        if !squares.is_empty() {
            message.push_str(&format!(": {}", squares.join(" ")));
        }
        if !matches!(kind, RukFlag::Repetition | RukFlag::CountLimit(_)) {
            message.push_str(
                " (RULES.md gives no Makruk article for this; MAKRUK 4: the referee decides)",
            );
        }
        outcomes.push(Outcome::Flag(RaisedFlag {
            id,
            kind,
            rules: kind.rules(),
            penalties: kind.penalties(),
            squares,
            move_number,
            color,
            message,
        }));
        id
    }

    /// Pieces the camera saw pushed off their squares' centres, each still on its square
    /// (`track::eight::Settled8::slid`): flagged for the referee (MAKRUK 4), the position
    /// unchanged.
    pub fn pushed(&mut self, squares: &[[usize; 2]]) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        let number = (!self.history.is_empty()).then_some(self.history.len());
        for (color, squares) in super::eight::pushed_by_side(&self.position.occupancy(), squares) {
            let names = squares.iter().map(|&[r, c]| square_name(r, c)).collect();
            self.raise(
                RukFlag::Displaced,
                names,
                number,
                Some(color),
                &mut outcomes,
            );
        }
        outcomes
    }

    pub fn move_times(&self) -> Vec<f64> {
        self.history.iter().map(|c| c.at).collect()
    }
}

impl Stage for MakrukInference {
    type Reading = Reading;
    type Outcome = Outcome;

    fn options(&self) -> &InferOptions {
        &self.options
    }

    fn waiting(&mut self) -> &mut Waiting<Reading> {
        &mut self.waiting
    }

    fn candidates(&self) -> Vec<Candidate<Reading>> {
        MakrukInference::candidates(self)
    }

    fn is_nothing(reading: &Reading) -> bool {
        matches!(reading, Reading::Nothing)
    }

    fn first_move(reading: &Reading) -> Option<Reading> {
        reading.first_move()
    }

    fn apply(&mut self, reading: Reading, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakrukInference::apply(self, reading, seen, outcomes);
    }

    fn resolve(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakrukInference::resolve(self, seen, outcomes);
    }

    fn irregular(&mut self, seen: &Seen8, outcomes: &mut Vec<Outcome>) {
        MakrukInference::irregular(self, seen, outcomes);
    }

    fn low_confidence(&self) -> Outcome {
        Outcome::LowConfidence {
            number: self.history.len() + 1,
        }
    }

    fn shown_by_pictures(&self, seen: &Seen8) -> Option<Reading> {
        MakrukInference::shown_by_pictures(self, seen)
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
    use crate::infer::eight::probabilities;

    fn look(squares: &[[f32; 3]], since: f64) -> Seen8<'_> {
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

    #[test]
    fn a_square_hidden_behind_a_tall_piece_is_decided_by_the_legal_moves() {
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mv = *start
            .legal_moves()
            .iter()
            .find(|m| m.uci() == "e3e4")
            .unwrap();
        let mut squares = probabilities(&start.after(&mv).occupancy(), &[0.97; 64]);
        // e4 (row 4, col 4) reads half empty, half light: the Bia's square is unsure.
        squares[4 * 8 + 4] = [0.45, 0.1, 0.45];
        let out = game.observe(&look(&squares, 1.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "e4"),
            "{out:?}"
        );
    }

    #[test]
    fn a_joined_figure_that_moves_as_the_other_open_one_is_recorded_as_that_figure() {
        // Joined after d1c2 and c1d2 (Khun to c2, Khon to d2) but with the figures the other
        // way round, both open; Black to move plays a5, then c2 steps sideways to b2,
        // which only a Khun does.
        let truth = ["d1c2", "a6a5", "c1d2"]
            .iter()
            .fold(Position::start(), |p, uci| played(&p, uci));
        let (c2, d2) = (Square::parse("c2").unwrap(), Square::parse("d2").unwrap());
        let joined = truth.with_figures_exchanged(c2, d2).unwrap();
        assert_eq!(joined.board().piece_at(c2).unwrap().role, Role::Khon);
        let mut game = MakrukInference::new(joined.clone(), InferOptions::default());
        let open = vec![Role::Khun, Role::Khon];
        game.set_unsure_figures(vec![(c2, open.clone()), (d2, open)]);
        let after_a5 = played(&joined, "a5a4");
        let out = game.observe(&look(
            &probabilities(&after_a5.occupancy(), &[0.97; 64]),
            1.0,
        ));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "a4"),
            "{out:?}"
        );
        let mut seen = after_a5.occupancy();
        seen.set(6, 2, None);
        seen.set(6, 1, Some(Color::White));
        let out = game.observe(&look(&probabilities(&seen, &[0.97; 64]), 2.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "Kb2"),
            "{out:?}"
        );
        assert_eq!(
            game.position().board().piece_at(d2).unwrap().role,
            Role::Khon
        );
    }

    /// A look after a hand, whose squares' pictures changed at `moved`.
    fn moved_look(squares: &[[f32; 3]], moved: u64) -> Seen8<'_> {
        Seen8 {
            moved,
            ..look(squares, 1.0)
        }
    }

    #[test]
    fn a_capture_whose_arrival_reads_bare_is_taken_from_the_pictures() {
        // Makruk 310584: a red Khon took on f5 of a dark board and f5 read bare. Here
        // e4xd5 with d5 (row 3, col 3) read bare; e4 is row 4, col 4.
        let before = ["e3e4", "d6d5"]
            .iter()
            .fold(Position::start(), |p, uci| played(&p, uci));
        let mut seen = played(&before, "e4d5").occupancy();
        seen.set(3, 3, None);
        let squares = probabilities(&seen, &[0.97; 64]);
        let pictures_moved = 1 << (3 * 8 + 3) | 1 << (4 * 8 + 4);
        let game = MakrukInference::new(before.clone(), InferOptions::default());
        let look_moved = |moved: u64| moved_look(&squares, moved);
        // The pictures show the capture; not when they moved on one more square, or on
        // none.
        assert!(
            game.shown_by_pictures(&look_moved(pictures_moved))
                .is_some()
        );
        assert!(
            game.shown_by_pictures(&look_moved(pictures_moved | 1 << (7 * 8)))
                .is_none()
        );
        assert!(game.shown_by_pictures(&look_moved(0)).is_none());
        // A figure elsewhere read in the other side's colour (a1, row 7, col 0) is a slip,
        // not a change; one read bare is a change the move does not explain.
        let mut slipped = squares.clone();
        slipped[7 * 8] = [0.03, 0.94, 0.03];
        assert!(
            game.shown_by_pictures(&moved_look(&slipped, pictures_moved))
                .is_some()
        );
        let mut bare = squares.clone();
        bare[7 * 8] = [0.94, 0.03, 0.03];
        assert!(
            game.shown_by_pictures(&moved_look(&bare, pictures_moved))
                .is_none()
        );
        let mut game = game;
        let out = game.observe(&look_moved(pictures_moved));
        assert_eq!(sans(&out), vec!["exd5"], "{out:?}");
        assert!(
            out.iter()
                .any(|o| matches!(o, Outcome::LowConfidence { .. })),
            "{out:?}"
        );
        assert!(flags(&out).is_empty(), "{out:?}");
        // Without the pictures the same sighting records nothing at once.
        let mut blind = MakrukInference::new(before, InferOptions::default());
        assert!(sans(&blind.observe(&look_moved(0))).is_empty());
    }

    #[test]
    fn a_move_whose_squares_alone_stirred_is_taken_from_the_pictures() {
        // Makruk 310627, a dim board: the Ruea h1-h2 changed h2's picture by 26 and h1's
        // by 22 (short of `moved`), every other square by 3 at most; the reader put a
        // figure on h2 and left one on h1. h1 is row 7, col 7; h2 row 6, col 7.
        let before = played(&Position::start(), "d3d4");
        let before = played(&before, "b8d7");
        let mut seen = played(&before, "h1h2").occupancy();
        seen.set(7, 7, Some(Color::White));
        let squares = probabilities(&seen, &[0.9; 64]);
        let (h1, h2) = (1u64 << 63, 1u64 << 55);
        let game = MakrukInference::new(before, InferOptions::default());
        let pictured = |moved: u64, stirred: u64| Seen8 {
            moved,
            stirred,
            ..look(&squares, 1.0)
        };
        let shown = game.shown_by_pictures(&pictured(h2, h1 | h2));
        assert!(matches!(shown, Some(Reading::One(_))), "{shown:?}");
        // Not when another square stirred too.
        assert!(game.shown_by_pictures(&pictured(h2, h1 | h2 | 1)).is_none());
        // Makruk 310714, 640×480: Black's Khon f8-g7, dark on dark squares, changed f8
        // by 16 and g7 by 15, no other square by 10; the reader saw g7 bare.
        let shown = game.shown_by_pictures(&pictured(0, h1 | h2));
        assert!(matches!(shown, Some(Reading::One(_))), "{shown:?}");
    }

    fn sans(out: &[Outcome]) -> Vec<&str> {
        out.iter()
            .filter_map(|o| match o {
                Outcome::Move { san, .. } => Some(san.as_str()),
                _ => None,
            })
            .collect()
    }

    fn flags(out: &[Outcome]) -> Vec<RukFlag> {
        out.iter()
            .filter_map(|o| match o {
                Outcome::Flag(f) => Some(f.kind),
                _ => None,
            })
            .collect()
    }

    fn played(position: &Position, uci: &str) -> Position {
        let mv = *position
            .legal_moves()
            .iter()
            .find(|m| m.uci() == uci)
            .unwrap();
        position.after(&mv)
    }

    #[test]
    fn a_move_seen_only_through_an_arm_read_as_the_other_side_waits_for_a_better_look() {
        // As on Makruk 310513: White's Khon leaves f1 while the arm over g2 reads as a
        // dark piece there. The Khon f1-g2 explains it only if g2's dark reading is a
        // White piece's slip: it is not taken at once, and the Khon seen on f2 is the move.
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut arm = probabilities(&start.occupancy(), &[0.97; 64]);
        let (f1, g2) = (7 * 8 + 5, 6 * 8 + 6);
        arm[f1] = [0.5, 0.06, 0.44];
        arm[g2] = [0.05, 0.92, 0.03];
        assert!(game.observe(&look(&arm, 10.0)).is_empty());
        let placed = played(&start, "f1f2");
        let squares = probabilities(&placed.occupancy(), &[0.97; 64]);
        let out = game.observe(&look(&squares, 11.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "Sf2"),
            "{out:?}"
        );
        // Still the only explanation once it has stood a second: taken.
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut out = game.observe(&look(&arm, 10.0));
        out.extend(game.observe(&Seen8 {
            now: 11.1,
            ..look(&arm, 10.0)
        }));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "Sg2"),
            "{out:?}"
        );
    }

    #[test]
    fn a_piece_read_beside_the_square_a_figure_came_to_is_no_piece_added() {
        // 1. e4 with e5, just beyond the Bia, read as a light piece: the move, no flag. The
        // same reading on a5, away from the move, is a piece added.
        let start = Position::start();
        let after = played(&start, "e3e4");
        let sans_and_flags = |extra: usize| {
            let mut game = MakrukInference::new(start.clone(), InferOptions::default());
            let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
            squares[extra] = [0.02, 0.01, 0.97];
            // The recorder counts the hand until a sighting is acted on.
            let out: Vec<Outcome> = [1.3, 2.0, 3.0, 4.0, 5.0]
                .into_iter()
                .flat_map(|now| {
                    game.observe(&Seen8 {
                        now,
                        ..look(&squares, 1.0)
                    })
                })
                .collect();
            let sans: Vec<String> = out
                .iter()
                .filter_map(|o| match o {
                    Outcome::Move { san, .. } => Some(san.clone()),
                    _ => None,
                })
                .collect();
            (sans, flags(&out))
        };
        let (e5, a5) = (3 * 8 + 4, 3 * 8);
        assert_eq!(sans_and_flags(e5), (vec!["e4".to_string()], vec![]));
        assert_eq!(
            sans_and_flags(a5),
            (vec!["e4".to_string()], vec![RukFlag::PieceAdded])
        );
    }

    #[test]
    fn a_piece_dropped_while_an_earlier_misreading_is_doubted_is_still_flagged() {
        // As on Makruk 310518: c3 reads bare with nothing moving (the reader's), then a
        // hand drops a dark piece on e5. Doubting c3 as the board moves on is no action on
        // the drop's sighting: the recorder keeps counting its hand, and the drop is a
        // piece added.
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut squares = probabilities(&start.occupancy(), &[0.97; 64]);
        squares[5 * 8 + 2] = [0.9, 0.05, 0.05];
        for now in [1.3, 1.6] {
            let out = game.observe(&Seen8 {
                squares: &squares,
                since: 1.0,
                now,
                hand_seen: false,
                motion_seen: false,
                still: 0,
                moved: 0,
                stirred: 0,
            });
            assert!(out.is_empty(), "{out:?}");
        }
        let mut dropped = squares.clone();
        dropped[3 * 8 + 4] = [0.02, 0.96, 0.02];
        let mut out = Vec::new();
        let mut hand = true;
        for now in [3.3, 4.0, 5.0, 6.0, 7.0] {
            out.extend(game.observe(&Seen8 {
                hand_seen: hand,
                motion_seen: hand,
                still: 0,
                moved: 0,
                stirred: 0,
                now,
                ..look(&dropped, 3.0)
            }));
            // The recorder counts hands afresh once a sighting was acted on.
            hand &= !game.acted();
        }
        assert_eq!(flags(&out), vec![RukFlag::PieceAdded], "{out:?}");
    }

    /// The same sighting again and again with no hand: what stands for seconds.
    fn stands(game: &mut MakrukInference, squares: &[[f32; 3]], from: f64) -> Vec<Outcome> {
        let mut out = game.observe(&look(squares, from));
        for now in [1.0, 2.0, 3.0, 4.0] {
            out.extend(game.observe(&Seen8 {
                hand_seen: false,
                motion_seen: true,
                still: 0,
                moved: 0,
                stirred: 0,
                now: from + now,
                ..look(squares, from)
            }));
        }
        out
    }

    #[test]
    fn a_move_left_unsure_by_a_slipped_colour_is_taken_when_the_next_hand_leaves_it_standing() {
        // As on Makruk 310699: White's e3-e4 reads dark on e4 and is waited on; Black's
        // hand comes and goes before it has stood long enough, e4 still dark. The Bia that
        // stood through a hand is e3-e4, and Black's reply follows it.
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let e4 = 4 * 8 + 4;
        let pushed = played(&start, "e3e4");
        let mut squares = probabilities(&pushed.occupancy(), &[0.97; 64]);
        squares[e4] = [0.0, 0.89, 0.11];
        assert!(game.observe(&look(&squares, 10.0)).is_empty());
        let replied = played(&pushed, "d6d5");
        let mut squares = probabilities(&replied.occupancy(), &[0.97; 64]);
        squares[e4] = [0.0, 0.89, 0.11];
        let out = game.observe(&look(&squares, 12.5));
        assert_eq!(sans(&out), ["e4", "d5"], "{out:?}");
        assert!(
            matches!(out.first(), Some(Outcome::LowConfidence { number: 1 })),
            "said so: {out:?}"
        );
    }

    #[test]
    fn a_figure_read_bare_where_its_picture_stood_still_is_no_disturbance_beside_a_move() {
        // As on Makruk 310706: White's Ruea on h1 reads bare past doubt in the sighting
        // of White's e3-e4, its picture as it was; the move is recorded and nothing
        // flagged. With its picture changed, the same reading is a figure removed.
        let start = Position::start();
        let after = played(&start, "e3e4");
        let h1 = 7 * 8 + 7;
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[h1] = [0.91, 0.0, 0.09];
        let sighting = |still: u64, now: f64| Seen8 {
            still,
            now,
            ..look(&squares, 1.0)
        };
        // Every square but e3 and e4 looks as it did.
        let unchanged = !(1 << (5 * 8 + 4)) & !(1 << (4 * 8 + 4));
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut out = Vec::new();
        for now in [1.3, 2.0, 3.0, 4.0] {
            out.extend(game.observe(&sighting(unchanged, now)));
        }
        assert_eq!(sans(&out), ["e4"], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");

        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut out = Vec::new();
        for now in [1.3, 2.0, 3.0, 4.0] {
            out.extend(game.observe(&sighting(unchanged & !(1 << h1), now)));
        }
        assert_eq!(sans(&out), ["e4"], "{out:?}");
        assert!(!flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn a_figure_read_as_the_other_sides_on_its_own_square_is_no_disturbance() {
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let after = played(&start, "e3e4");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        // Black's Ruea on h8 (row 0, col 7) and White's on a1 read the other side's.
        squares[7] = [0.0, 0.01, 0.99];
        squares[7 * 8] = [0.01, 0.98, 0.01];
        let out = stands(&mut game, &squares, 1.0);
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "e4"),
            "{out:?}"
        );
        assert_eq!(game.board(), after.occupancy());
    }

    #[test]
    fn a_figure_set_down_and_read_as_the_other_sides_is_still_the_move() {
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let after = played(&start, "g1e2");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[6 * 8 + 4] = [0.02, 0.96, 0.02];
        let out = stands(&mut game, &squares, 1.0);
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "Ne2"),
            "{out:?}"
        );
    }

    /// 1. e4 d5 2. Ne2 recorded: Black's Bia on d5 (row 3, col 3) may take on e4.
    fn before_dxe4() -> (Position, MakrukInference) {
        let mut position = Position::start();
        let mut game = MakrukInference::new(position.clone(), InferOptions::default());
        for (ply, uci) in ["e3e4", "d6d5", "g1e2"].iter().enumerate() {
            position = played(&position, uci);
            let squares = probabilities(&position.occupancy(), &[0.97; 64]);
            game.observe(&look(&squares, 3.0 * ply as f64 + 1.0));
        }
        assert_eq!(game.moves_played(), 3);
        (position, game)
    }

    #[test]
    fn a_capture_must_show_the_capturers_colour() {
        // d5xe4 read with e4 still light: the Bia gone from d5 is no capture until e4
        // shows Black's, and no slip makes it one.
        let (position, mut game) = before_dxe4();
        let after = played(&position, "d5e4");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[4 * 8 + 4] = [0.01, 0.02, 0.97];
        let out = game.observe(&look(&squares, 10.0));
        assert!(
            !out.iter().any(|o| matches!(o, Outcome::Move { .. })),
            "{out:?}"
        );
        assert_eq!(game.moves_played(), 3);
    }

    #[test]
    fn a_capture_is_recorded_when_the_capturers_square_reads_bare() {
        // e4 already dark while d5 still reads dark: nothing yet, no flag either (the
        // captured figure read as the other side's); then d5 bare: the capture.
        let (position, mut game) = before_dxe4();
        let after = played(&position, "d5e4");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[3 * 8 + 3] = [0.02, 0.96, 0.02];
        assert_eq!(game.observe(&look(&squares, 10.0)), Vec::new());
        let squares = probabilities(&after.occupancy(), &[0.97; 64]);
        let out = game.observe(&look(&squares, 11.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "dxe4"),
            "{out:?}"
        );
    }

    #[test]
    fn a_figure_read_as_the_other_sides_may_take_in_that_colour() {
        // Black's d5 Bia reads light on d5 for a while, then takes on e4 and reads light
        // there too: the capture, since the figure was misread before it moved. The same
        // reading with d5 read right before is no capture (above).
        let (position, mut game) = before_dxe4();
        let mut squares = probabilities(&position.occupancy(), &[0.97; 64]);
        squares[3 * 8 + 3] = [0.01, 0.02, 0.97];
        assert_eq!(stands(&mut game, &squares, 10.0), Vec::new());
        let after = played(&position, "d5e4");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[4 * 8 + 4] = [0.01, 0.02, 0.97];
        let out = game.observe(&look(&squares, 20.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "dxe4"),
            "{out:?}"
        );
    }

    #[test]
    fn a_capture_inside_two_moves_waits_while_a_colour_slips() {
        // d5xe4 and White's reply Nd2 settle together while Black's h8 Ruea reads light:
        // the capture, seen only as e4's colour, is not believed as part of two moves
        // through doubtful colours; read right, both are recorded.
        let (position, mut game) = before_dxe4();
        let after = played(&played(&position, "d5e4"), "b1d2");
        let mut squares = probabilities(&after.occupancy(), &[0.97; 64]);
        squares[7] = [0.0, 0.01, 0.99];
        let out = game.observe(&look(&squares, 10.0));
        assert!(
            !out.iter().any(|o| matches!(o, Outcome::Move { .. })),
            "{out:?}"
        );
        let squares = probabilities(&after.occupancy(), &[0.97; 64]);
        let out = game.observe(&look(&squares, 11.0));
        assert_eq!(sans(&out), ["dxe4", "Nd2"], "{out:?}");
    }

    #[test]
    fn a_figure_read_empty_is_still_flagged_beside_a_colour_slip() {
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut squares = probabilities(&start.occupancy(), &[0.97; 64]);
        squares[7] = [0.0, 0.01, 0.99];
        squares[7 * 8 + 1] = [0.97, 0.02, 0.01];
        let out = stands(&mut game, &squares, 1.0);
        assert_eq!(flags(&out), vec![RukFlag::PieceRemoved], "{out:?}");
    }

    #[test]
    fn a_figure_read_gone_with_nothing_moving_over_the_board_is_a_misreading() {
        // 310279 (640×480): three White figures of the far back rank read empty a second
        // after the start, with no motion at all, and were flagged removed.
        let start = Position::start();
        let mut squares = probabilities(&start.occupancy(), &[0.97; 64]);
        squares[7 * 8 + 1] = [0.97, 0.02, 0.01];
        let unmoved = |since: f64, now: f64| Seen8 {
            squares: &squares,
            since,
            now,
            hand_seen: false,
            motion_seen: false,
            still: 0,
            moved: 0,
            stirred: 0,
        };
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let out: Vec<Outcome> = [1.0, 2.0, 3.0, 4.0, 5.0]
            .into_iter()
            .flat_map(|now| game.observe(&unmoved(1.0, now)))
            .collect();
        assert!(flags(&out).is_empty(), "{out:?}");
        // The board stands as the rules say: the Ma's move is still told.
        let mv = *start
            .legal_moves()
            .iter()
            .find(|m| m.uci() == "b1d2")
            .unwrap();
        let after = probabilities(&start.after(&mv).occupancy(), &[0.97; 64]);
        let out = game.observe(&look(&after, 6.0));
        assert!(
            matches!(&out[..], [Outcome::Move { san, .. }] if san == "Nd2"),
            "{out:?}"
        );
        // The same change after something moved with no arm (a knock) is the board's.
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let out: Vec<Outcome> = [1.0, 2.0, 3.0, 4.0, 5.0]
            .into_iter()
            .flat_map(|now| {
                game.observe(&Seen8 {
                    motion_seen: true,
                    still: 0,
                    moved: 0,
                    stirred: 0,
                    ..unmoved(1.0, now)
                })
            })
            .collect();
        assert_eq!(flags(&out), vec![RukFlag::PieceRemoved], "{out:?}");
        // A figure read on the next square with nothing seen moving, not even inside the
        // squares, is the reader's too (a tall figure read on the square behind it)...
        let mut knocked = squares.clone();
        knocked[6 * 8 + 1] = [0.01, 0.01, 0.98];
        let displaced = |motion_seen: bool, hand_seen: bool| {
            let mut game = MakrukInference::new(start.clone(), InferOptions::default());
            [1.0, 2.0, 3.0, 4.0, 5.0]
                .into_iter()
                .flat_map(|now| {
                    game.observe(&Seen8 {
                        squares: &knocked,
                        // The recorder counts motion afresh once a sighting was acted on.
                        motion_seen: motion_seen && now == 1.0,
                        still: 0,
                        moved: 0,
                        stirred: 0,
                        hand_seen: hand_seen && now == 1.0,
                        ..unmoved(1.0, now)
                    })
                })
                .collect::<Vec<Outcome>>()
        };
        let out = displaced(false, false);
        assert!(flags(&out).is_empty(), "{out:?}");
        // ...but once a square's middle was seen to change, the figure was knocked there,
        // however many sightings later the knock stands long enough to flag.
        let out = displaced(true, false);
        assert_eq!(flags(&out), vec![RukFlag::Displaced], "{out:?}");
        // A change first read under an arm is not remembered as moved: the arm's shadow
        // and the figures it hides are misread on those sightings (310279), and a figure
        // the hand really pushed is flagged beside the move it made.
        let out = displaced(true, true);
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn a_double_move_cites_makruk_4() {
        let start = Position::start();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let first = start.legal_moves()[0];
        let after = start.after(&first);
        game.observe(&look(&probabilities(&after.occupancy(), &[0.97; 64]), 1.0));
        let again = after.with_turn(Color::White);
        let second = again.legal_moves()[3];
        let twice = again.after(&second);
        let out = game.observe(&look(&probabilities(&twice.occupancy(), &[0.97; 64]), 4.0));
        let flag = out
            .iter()
            .find_map(|o| match o {
                Outcome::Flag(f) => Some(f),
                _ => None,
            })
            .expect("a flag");
        assert_eq!(flag.kind, RukFlag::DoubleMove);
        assert_eq!(flag.rules[0].to_string(), "MAKRUK 4");
    }

    #[test]
    fn makruk_9_the_pieces_honour_count_is_shown_as_it_runs() {
        let start = Position::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
        let mut game = MakrukInference::new(start.clone(), InferOptions::default());
        let mut position = start;
        let mut counts = Vec::new();
        for ply in 0..4 {
            let mv = position.legal_moves()[0];
            position.play(&mv);
            let squares = probabilities(&position.occupancy(), &[0.97; 64]);
            for outcome in game.observe(&look(&squares, 5.0 * ply as f64)) {
                if let Outcome::Count(Some(count)) = outcome {
                    counts.push((count.kind, count.limit, count.reached));
                }
            }
        }
        assert_eq!(counts.len(), 4, "{counts:?}");
        assert!(
            counts
                .iter()
                .all(|c| c.0 == CountKind::PiecesHonour && c.1 == 16)
        );
        assert!(counts.windows(2).all(|w| w[1].2 >= w[0].2), "{counts:?}");
    }
}
