//! From what a camera sees to the move that was played.
//!
//! Every Makruk move empties its origin and leaves one of the mover's pieces on its
//! destination, whether it captured or not, and touches no other square (no castling, no
//! en passant, no drops). So a change explained by a legal move differs from the position
//! before in exactly two squares, and those two name the move: at most one explanation,
//! found without generating any other piece's moves.

use super::position::{Move, Position, Square};
use crate::games::Occupancy;

/// The legal moves of `before` that turn its occupancy into `after`. Empty when the change
/// is not one legal move (nothing moved, two moves, a piece knocked over, a wrong grid).
pub fn explain(before: &Position, after: &Occupancy) -> Vec<Move> {
    if after.width() != 8 || after.height() != 8 {
        return Vec::new();
    }
    let mover = before.turn();
    let mut origin = None;
    let mut destination = None;
    for row in 0..8 {
        for col in 0..8 {
            let Some(sq) = Square::from_row_col(row, col) else {
                continue;
            };
            let was = before.board().piece_at(sq).map(|p| p.color);
            let now = after.get(row, col);
            if was == now {
                continue;
            }
            let slot = match (was, now) {
                (Some(c), None) if c == mover => &mut origin,
                (_, Some(c)) if c == mover => &mut destination,
                _ => return Vec::new(),
            };
            if slot.replace(sq).is_some() {
                return Vec::new();
            }
        }
    }
    let (Some(from), Some(to)) = (origin, destination) else {
        return Vec::new();
    };
    before
        .legal_moves_from(from)
        .iter()
        .filter(|mv| mv.to == to)
        .copied()
        .collect()
}
