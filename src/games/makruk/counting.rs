//! The counting rules (MAKRUK 7–14) and the material rules (MAKRUK 8, 15, 16).
//!
//! A count is part of the position: which kind runs, who counts, its limit, and the last
//! number the counting side has called. The recorder cannot hear a player announce or stop
//! a count, so it assumes the entitled side counts from the first moment it may, and
//! counts every one of its own moves (see `docs/makruk.md` for this reading).

use super::position::{Board, Role};
use crate::games::Color;
use std::fmt;

/// The board's honour count may not go past 64 moves (MAKRUK 8).
pub const BOARD_HONOUR_LIMIT: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CountKind {
    /// ศักดิ์กระดาน: no unpromoted Bia is left and the counting side is the weaker
    /// (MAKRUK 8).
    BoardHonour,
    /// ศักดิ์หมาก: the counting side has only its Khun (MAKRUK 7, 9, 10).
    PiecesHonour,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Count {
    pub kind: CountKind,
    /// The side that counts: the weaker one.
    pub counter: Color,
    /// The number whose calling ends the game as a draw.
    pub limit: u32,
    /// The last number the counting side has called with a move of its own. A pieces'
    /// honour count starts at the number of pieces on the board, so the first move of the
    /// count calls that number plus one (MAKRUK 9–10 example).
    pub reached: u32,
    /// Half-moves of both sides since the count started, plus twice the starting number
    /// for the pieces' honour: the progress field of Fairy-Stockfish's FEN, kept so a FEN
    /// reads and writes back unchanged.
    pub ply: u32,
}

impl Count {
    /// The limit is reached: the count's draw (MAKRUK 8 for the board's honour,
    /// MAKRUK 9–10 for the pieces' honour).
    pub fn is_at_limit(&self) -> bool {
        self.reached >= self.limit
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            CountKind::BoardHonour => "board's honour",
            CountKind::PiecesHonour => "pieces' honour",
        };
        write!(
            f,
            "{} counts {kind}: {} of {}",
            self.counter, self.reached, self.limit
        )
    }
}

/// Material in half units, so that MAKRUK 8's values stay integers: Ruea 3, Ma 2,
/// Khon 1.5, Met (or turned-over Bia) 1, unpromoted Bia 0.5.
pub fn material_in_half_units(board: &Board, color: Color) -> u32 {
    board
        .pieces()
        .filter(|(_, piece)| piece.color == color)
        .map(|(_, piece)| match piece.role {
            Role::Khun => 0,
            Role::Ruea => 6,
            Role::Ma => 4,
            Role::Khon => 3,
            Role::Met => 2,
            Role::Bia => 1,
        })
        .sum()
}

/// The side whose material is strictly smaller (MAKRUK 8: position does not matter).
pub fn weaker_side(board: &Board) -> Option<Color> {
    let white = material_in_half_units(board, Color::White);
    let black = material_in_half_units(board, Color::Black);
    match white.cmp(&black) {
        std::cmp::Ordering::Less => Some(Color::White),
        std::cmp::Ordering::Greater => Some(Color::Black),
        std::cmp::Ordering::Equal => None,
    }
}

fn has_only_khun(board: &Board, color: Color) -> bool {
    board
        .pieces()
        .all(|(_, piece)| piece.color != color || piece.role == Role::Khun)
}

/// The pieces' honour limit set by the stronger side's pieces (MAKRUK 9–10 as RULES.md
/// lists them): the strongest applicable line wins, Rueas before Khons before Mas.
pub fn pieces_honour_limit(board: &Board, stronger: Color) -> u32 {
    let count = |role| board.count(stronger, role);
    match (count(Role::Ruea), count(Role::Khon), count(Role::Ma)) {
        (2.., _, _) => 8,
        (1, _, _) => 16,
        (0, 2.., _) => 22,
        (0, 1, _) => 44,
        (0, 0, 2..) => 32,
        (0, 0, 1) => 64,
        _ => 64,
    }
}

/// The count after a move by `mover`, given the count before it and the board after it.
/// A count that becomes possible starts after the move, which itself is not counted.
pub fn next_count(board: &Board, previous: Option<Count>, mover: Color) -> Option<Count> {
    // MAKRUK 7 and 8 both start "when neither side has an unturned Bia".
    if board.pieces().any(|(_, piece)| piece.role == Role::Bia) {
        return None;
    }
    let called = |count: Count| Count {
        reached: count
            .reached
            .saturating_add(u32::from(mover == count.counter)),
        ply: count.ply.saturating_add(1),
        ..count
    };
    let lone = [Color::White, Color::Black].map(|color| has_only_khun(board, color));
    match lone {
        [true, true] => None,
        [true, false] | [false, true] => {
            let counter = if lone[0] { Color::White } else { Color::Black };
            match previous {
                // MAKRUK 10: once the pieces' honour count runs, captures by the lone Khun
                // do not change its limit.
                Some(count)
                    if count.kind == CountKind::PiecesHonour && count.counter == counter =>
                {
                    Some(called(count))
                }
                // MAKRUK 9 (switch from the board's honour) and MAKRUK 7 (a fresh start):
                // the count starts from the pieces on the board.
                _ => Some(Count {
                    kind: CountKind::PiecesHonour,
                    counter,
                    limit: pieces_honour_limit(board, counter.opponent()),
                    reached: board.piece_total(),
                    ply: 2 * board.piece_total(),
                }),
            }
        }
        [false, false] => {
            let counter = weaker_side(board)?;
            match previous {
                Some(count) if count.kind == CountKind::BoardHonour && count.counter == counter => {
                    Some(called(count))
                }
                _ => Some(Count {
                    kind: CountKind::BoardHonour,
                    counter,
                    limit: BOARD_HONOUR_LIMIT,
                    reached: 0,
                    ply: 0,
                }),
            }
        }
    }
}

/// Whether `color` has at least one of the sets MAKRUK 15 requires of a side that wins:
/// Ruea; Khon and Met; Ma and Met; three turned-over Bias. A Khon moves as a Met and more,
/// so it stands in for a Met, and an unturned Bia may still become a Met, so it counts as
/// one.
pub fn has_winning_material(board: &Board, color: Color) -> bool {
    let count = |role| board.count(color, role);
    let (ruea, khon, ma) = (count(Role::Ruea), count(Role::Khon), count(Role::Ma));
    let met_like = count(Role::Met) + count(Role::Bia) + khon;
    ruea >= 1 || (khon >= 1 && met_like >= 2) || (ma >= 1 && met_like >= 1) || met_like >= 3
}

/// MAKRUK 16: a draw when the pieces on the board cannot make either side lose (see
/// MAKRUK 15).
pub fn insufficient_material(board: &Board) -> bool {
    !has_winning_material(board, Color::White) && !has_winning_material(board, Color::Black)
}
