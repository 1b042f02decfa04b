//! Mak-hos (หมากฮอส, Thai checkers): positions, moves, the recorder's explanation of a
//! change on the board, PDN records and their replay against the rules of
//! `../shared/RULES.md` (HOS, HOS-SCHOOL).
//!
//! # Board, squares and sides
//!
//! The 32 dark squares are numbered 1–32 as in English draughts. On an [`Occupancy`]
//! (row 0 at the top, column 0 on the left) White — the light pieces — sits at the bottom
//! and moves up; Black sits at the top and moves down:
//!
//! ```text
//!  row 0:  .  32  .  31  .  30  .  29      Black's back row, White promotes here
//!  row 1: 28  .  27  .  26  .  25  .
//!  row 2:  .  24  .  23  .  22  .  21
//!  row 3: 20  .  19  .  18  .  17  .
//!  row 4:  .  16  .  15  .  14  .  13
//!  row 5: 12  .  11  .  10  .   9  .
//!  row 6:  .   8  .   7  .   6  .   5
//!  row 7:  4  .   3  .   2  .   1  .      White's back row, Black promotes here
//! ```
//!
//! Each player has the single corner (squares 4 and 29) on the left and the double corner
//! (1/5 and 28/32) on the right (HOS-SCHOOL 3.1). White starts on 1–8 (or 1–12), Black on
//! 25–32 (or 21–32). This is what `[GameType "31,W,8,8,N1,0"]` says in PDN 3.0: square 1
//! is at the bottom right as seen by White, and the bottom-left corner is a playing square.
//! It is the same numbering as the FMJD table's `"31,B,8,8,N2,0"` (square 1 top left as
//! seen by Black), so records written either way read alike.
//!
//! # Entry points
//!
//! - [`Position`], [`Position::legal_moves`], [`Position::for_each_move`], [`Position::play`]
//! - [`judge`] / [`explain`] / [`classify`] on an [`Observation`] of a camera frame
//! - [`read_pdn`] / [`write_pdn`] for records, [`replay`] to check one

mod explain;
mod geometry;
mod movegen;
mod pdn;
mod position;
mod replay;

pub use explain::{
    Explanation, Flag, Observation, ShapeError, Verdict, Violation, classify, explain, judge,
};
pub use movegen::{Move, MoveClass};
pub use pdn::{
    GAME_TYPE, GameResult, PdnGame, WrittenMove, fen, read_fen, read_move, read_pdn, write_pdn,
};
pub use position::{Kind, Men, Piece, Position, Square};
pub use replay::{matching_move, replay};

#[cfg(doc)]
use crate::games::Occupancy;
