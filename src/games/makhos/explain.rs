//! From "before" and "what the camera sees now" to the move that was played, or to the
//! rule that was broken.
//!
//! A camera sees colours only, so a change is matched on occupancy; the position before
//! knows the kings and the side to move, and every explaining move yields the full
//! position after. A change no move explains is classified into the irregularities of
//! HOS 3.2 and HOS 3.4, listing every reading that fits: the referee, not the recorder,
//! decides between "a man skipped a square" and "a man moved twice".

use super::geometry::{between, direction_between, distance, index_at};
use super::movegen::{Move, MoveClass};
use super::position::Position;
use crate::games::{Article, Color, Occupancy, Penalty, Source};

/// What a camera reports of a Mak-hos board, packed for fast comparison: pieces on dark
/// squares as bitboards, and any piece found on a light square (off its diagonal) apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Observation {
    white: u32,
    black: u32,
    /// Pieces on light squares, bit `row * 8 + col`.
    stray_white: u64,
    stray_black: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a Mak-hos board is 8×8, this occupancy is {width}×{height}")]
pub struct ShapeError {
    pub width: usize,
    pub height: usize,
}

impl Observation {
    pub fn from_occupancy(occupancy: &Occupancy) -> Result<Observation, ShapeError> {
        if occupancy.width() != 8 || occupancy.height() != 8 {
            return Err(ShapeError {
                width: occupancy.width(),
                height: occupancy.height(),
            });
        }
        let mut seen = Observation {
            white: 0,
            black: 0,
            stray_white: 0,
            stray_black: 0,
        };
        for row in 0..8 {
            for col in 0..8 {
                let Some(color) = occupancy.get(row, col) else {
                    continue;
                };
                match (index_at(row, col), color) {
                    (Some(index), Color::White) => seen.white |= 1 << index,
                    (Some(index), Color::Black) => seen.black |= 1 << index,
                    (None, Color::White) => seen.stray_white |= 1 << (row * 8 + col),
                    (None, Color::Black) => seen.stray_black |= 1 << (row * 8 + col),
                }
            }
        }
        Ok(seen)
    }

    /// What the camera would see of `position`.
    pub fn of(position: &Position) -> Observation {
        Observation {
            white: position.white,
            black: position.black,
            stray_white: 0,
            stray_black: 0,
        }
    }

    fn side(&self, color: Color) -> u32 {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    fn stray(&self, color: Color) -> u64 {
        match color {
            Color::White => self.stray_white,
            Color::Black => self.stray_black,
        }
    }

    fn count(&self, color: Color) -> u32 {
        self.side(color).count_ones() + self.stray(color).count_ones()
    }

    fn matches(&self, position: &Position) -> bool {
        self.white == position.white
            && self.black == position.black
            && self.stray_white == 0
            && self.stray_black == 0
    }
}

/// Something about an explaining move the referee or the record should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flag {
    /// Moved without capturing though a capture existed (HOS 2.4): advisory.
    MissedCapture,
    /// Stopped capturing though the capture could go on (HOS 2.2, HOS 2.4): advisory.
    IncompleteCapture,
    /// A man reached the far row and is now a king; a second piece should be stacked on it
    /// (HOS 1.2.2).
    Promotion,
}

impl Flag {
    pub fn rules(self) -> Vec<Article> {
        match self {
            Flag::MissedCapture => vec![
                Article::new(Source::Hos, "2.4"),
                Article::new(Source::HosSchool, "3.5.2"),
            ],
            Flag::IncompleteCapture => vec![
                Article::new(Source::Hos, "2.2"),
                Article::new(Source::Hos, "2.4"),
            ],
            Flag::Promotion => vec![Article::new(Source::Hos, "1.2.2")],
        }
    }

    /// The penalty the flag carries, if it is an irregularity at all.
    pub fn penalty(self) -> Option<Penalty> {
        match self {
            Flag::MissedCapture | Flag::IncompleteCapture => Some(Penalty::Advisory),
            Flag::Promotion => None,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Flag::MissedCapture => "moved without capturing although a capture was available",
            Flag::IncompleteCapture => "stopped capturing although the capture could go on",
            Flag::Promotion => "the man became a king",
        }
    }
}

/// A move that explains the observed change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    pub mv: Move,
    pub flags: Vec<Flag>,
    /// The position after the move, kings and side to move included.
    pub after: Position,
}

/// The irregularities of HOS 3.2 and HOS 3.4 a camera can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Violation {
    /// The board did not change although a move was made ("moving in place").
    NoChange,
    /// A piece appeared that no move brings.
    PieceAdded,
    /// A piece disappeared that no capture takes.
    PieceRemoved,
    /// A man moved or captured backward.
    ManBackward,
    /// A piece moved or captured off its diagonal.
    OffDiagonal,
    /// A man moved more than one square.
    SkippedSquare,
    /// A capture landed elsewhere than on the square just beyond the captured piece.
    WrongCaptureLanding,
    /// One side moved twice in a row.
    DoubleMove,
    /// Pieces left their squares in a way no rule allows and none of the above describes.
    Displaced,
}

impl Violation {
    pub fn rules(self) -> Vec<Article> {
        let hos = |number| Article::new(Source::Hos, number);
        let school = |number| Article::new(Source::HosSchool, number);
        match self {
            Violation::NoChange | Violation::OffDiagonal | Violation::WrongCaptureLanding => {
                vec![hos("3.2")]
            }
            Violation::PieceAdded | Violation::PieceRemoved | Violation::Displaced => {
                vec![hos("3.2"), school("3.7.1")]
            }
            Violation::ManBackward | Violation::SkippedSquare => vec![hos("3.2"), school("3.4.3")],
            Violation::DoubleMove => vec![hos("3.4"), school("3.4.2")],
        }
    }

    pub fn penalty(self) -> Penalty {
        match self {
            Violation::DoubleMove => Penalty::Warning,
            _ => Penalty::Loss,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Violation::NoChange => "\"moved\" without changing the position",
            Violation::PieceAdded => "a piece was added to the board",
            Violation::PieceRemoved => "a piece was removed without being captured",
            Violation::ManBackward => "a man moved backward",
            Violation::OffDiagonal => "a piece moved off its diagonal",
            Violation::SkippedSquare => "a man moved more than one square",
            Violation::WrongCaptureLanding => {
                "a capture did not land on the square just beyond the captured piece"
            }
            Violation::DoubleMove => "the same side moved twice in a row",
            Violation::Displaced => "pieces were moved off their squares",
        }
    }
}

/// The recorder's reading of one change on the board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// One or more moves explain it (several only when capture paths differ).
    Explained(Vec<Explanation>),
    /// No move does; every irregularity that fits, the most specific first. Never empty.
    Irregular(Vec<Violation>),
}

/// Every move of the side to move, including every multi-capture path, whose result looks
/// like `after`. Distinct capture paths that end in the same occupancy are all returned:
/// they are different PDN moves, and they lead to the same position.
pub fn explain(before: &Position, after: &Observation) -> Vec<Explanation> {
    let mut found = Vec::new();
    let mover = before.turn();
    // A move never adds pieces, never costs the mover one, never leaves a light square taken.
    if after.stray_white | after.stray_black != 0
        || after.side(mover).count_ones() != before.count(mover)
        || after.side(mover.opponent()).count_ones() > before.count(mover.opponent())
    {
        return found;
    }
    before.for_each_move(|mv, class| {
        let next = before.play(mv);
        if after.matches(&next) {
            let mut flags = Vec::new();
            match class {
                MoveClass::Legal => {}
                MoveClass::MissedCapture => flags.push(Flag::MissedCapture),
                MoveClass::IncompleteCapture => flags.push(Flag::IncompleteCapture),
            }
            if mv.promotes() {
                flags.push(Flag::Promotion);
            }
            found.push(Explanation {
                mv: *mv,
                flags,
                after: next,
            });
        }
    });
    found
}

/// Explains the change, or classifies it when no move does. This is what the recorder
/// calls for each settled frame.
pub fn judge(before: &Position, after: &Observation) -> Verdict {
    let explanations = explain(before, after);
    if explanations.is_empty() {
        Verdict::Irregular(classify(before, after))
    } else {
        Verdict::Explained(explanations)
    }
}

/// Every irregularity that fits a change no single move explains, the most specific
/// first; `Displaced` only when nothing else fits.
pub fn classify(before: &Position, after: &Observation) -> Vec<Violation> {
    let mover = before.turn();
    let opponent = mover.opponent();
    if after.matches(before) {
        return vec![Violation::NoChange];
    }
    let mut found = Vec::new();
    let own_before = before.side(mover);
    let opp_before = before.side(opponent);
    let own_after = after.side(mover);
    let opp_after = after.side(opponent);
    if after.count(mover) > before.count(mover) || after.count(opponent) > before.count(opponent) {
        found.push(Violation::PieceAdded);
    }
    let left = own_before & !own_after;
    let arrived = own_after & !own_before;
    let own_stray = after.stray(mover);
    let taken = opp_before & !opp_after;
    let opp_moved = opp_after & !opp_before != 0 || after.stray(opponent) != 0;
    if !opp_moved && left.count_ones() == 1 {
        let from = left.trailing_zeros() as u8;
        if arrived == 0 && own_stray.count_ones() == 1 {
            found.push(Violation::OffDiagonal);
        } else if arrived.count_ones() == 1 && own_stray == 0 {
            let to = arrived.trailing_zeros() as u8;
            found.extend(classify_relocation(before, from, to, taken));
        }
    }
    if after.count(mover) < before.count(mover)
        || (left == 0 && arrived == 0 && after.count(opponent) < before.count(opponent))
    {
        found.push(Violation::PieceRemoved);
    }
    if is_double_move(before, after) {
        found.push(Violation::DoubleMove);
    }
    if found.is_empty() {
        found.push(Violation::Displaced);
    }
    found.dedup();
    found
}

/// One piece of the mover went from `from` to `to` (both dark squares) and the opponent
/// lost the pieces `taken`, yet no move explains it: say why.
fn classify_relocation(before: &Position, from: u8, to: u8, taken: u32) -> Option<Violation> {
    let Some(dir) = direction_between(from, to) else {
        return Some(Violation::OffDiagonal);
    };
    let king = before.kings & (1 << from) != 0;
    let backward = match before.turn() {
        Color::White => dir >= 2,
        Color::Black => dir < 2,
    };
    if !king && backward {
        return Some(Violation::ManBackward);
    }
    let path = between(from, to, dir);
    if taken == 0 {
        if !king && distance(from, to, dir) > 1 {
            return Some(Violation::SkippedSquare);
        }
        // A king slid through pieces without taking them.
        return (path & before.occupied() != 0).then_some(Violation::Displaced);
    }
    if taken & !path == 0 || captures_exactly(before, from, taken) {
        return Some(Violation::WrongCaptureLanding);
    }
    None
}

/// Whether some capture by the piece on `from` takes exactly `taken`, wherever it ends.
fn captures_exactly(before: &Position, from: u8, taken: u32) -> bool {
    let mut found = false;
    before.for_each_move(|mv, _| {
        found |= mv.from().index() == from && mv.captured == taken;
    });
    found
}

/// Whether the side that just moved moved again, or the side to move moved twice.
fn is_double_move(before: &Position, after: &Observation) -> bool {
    if after.stray_white | after.stray_black != 0 {
        return false;
    }
    let mut opponent_first = *before;
    opponent_first.set_turn(before.turn().opponent());
    if !explain(&opponent_first, after).is_empty() {
        return true;
    }
    let mut twice = false;
    before.for_each_move(|first, _| {
        if twice {
            return;
        }
        let mut again = before.play(first);
        again.set_turn(before.turn());
        twice = !explain(&again, after).is_empty();
    });
    twice
}
