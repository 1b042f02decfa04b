//! Squares, pieces and positions: plain data a camera frame or a record can be checked against.

use super::geometry::{BLACK_PROMOTION, WHITE_PROMOTION, index_at, row_col};
use crate::games::{Color, Occupancy};
use std::fmt;

/// A dark square, numbered 1–32 as in PDN (see the `makhos` module documentation for where
/// each number sits on the board and on an [`Occupancy`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square with PDN number `number` (1–32).
    pub fn new(number: u32) -> Option<Square> {
        (1..=32)
            .contains(&number)
            .then(|| Square((number - 1) as u8))
    }

    /// The square on row `row`, column `col` of an [`Occupancy`], if it is a dark square.
    pub fn at(row: usize, col: usize) -> Option<Square> {
        index_at(row, col).map(Square)
    }

    pub fn number(self) -> u32 {
        u32::from(self.0) + 1
    }

    /// `(row, col)` of this square on an [`Occupancy`].
    pub fn row_col(self) -> (usize, usize) {
        let (row, col) = row_col(self.0);
        (usize::from(row), usize::from(col))
    }

    pub fn all() -> impl Iterator<Item = Square> {
        (0..32).map(Square)
    }

    pub(super) fn from_index(index: u8) -> Square {
        debug_assert!(index < 32);
        Square(index)
    }

    pub(super) fn index(self) -> u8 {
        self.0
    }

    pub(super) fn bit(self) -> u32 {
        1 << self.0
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// เบี้ย: moves and captures one square diagonally forward.
    Man,
    /// ฮอส: moves any distance diagonally; looks like a man to the camera (two stacked pieces).
    King,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub kind: Kind,
}

/// How many men each side starts with, chosen per event (HOS-SCHOOL 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Men {
    /// The dark squares of each side's two nearest rows: White 1–8, Black 25–32.
    Eight,
    /// Three rows: White 1–12, Black 21–32.
    Twelve,
}

/// Everything the rules need to know: where the pieces are, which are kings, who moves.
/// Copy-cheap (three bitboards and a colour) so explanations can try moves freely.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(super) white: u32,
    pub(super) black: u32,
    pub(super) kings: u32,
    pub(super) turn: Color,
}

impl Position {
    /// The start position; which colour moves first is decided by lot (HOS 1.1).
    pub fn start(men: Men, first: Color) -> Position {
        let rows = match men {
            Men::Eight => 8,
            Men::Twelve => 12,
        };
        let white = (1u32 << rows) - 1;
        Position {
            white,
            black: white.reverse_bits(),
            kings: 0,
            turn: first,
        }
    }

    /// A board with no pieces, to be filled with [`Position::set`].
    pub fn empty(turn: Color) -> Position {
        Position {
            white: 0,
            black: 0,
            kings: 0,
            turn,
        }
    }

    pub fn turn(&self) -> Color {
        self.turn
    }

    pub fn set_turn(&mut self, turn: Color) {
        self.turn = turn;
    }

    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        let bit = square.bit();
        let color = if self.white & bit != 0 {
            Color::White
        } else if self.black & bit != 0 {
            Color::Black
        } else {
            return None;
        };
        let kind = if self.kings & bit != 0 {
            Kind::King
        } else {
            Kind::Man
        };
        Some(Piece { color, kind })
    }

    pub fn set(&mut self, square: Square, piece: Option<Piece>) {
        let bit = square.bit();
        self.white &= !bit;
        self.black &= !bit;
        self.kings &= !bit;
        if let Some(piece) = piece {
            match piece.color {
                Color::White => self.white |= bit,
                Color::Black => self.black |= bit,
            }
            if piece.kind == Kind::King {
                self.kings |= bit;
            }
        }
    }

    /// Squares holding a piece of `color`, kings included.
    pub fn pieces(&self, color: Color) -> impl Iterator<Item = (Square, Piece)> + '_ {
        Square::all().filter_map(move |square| {
            self.piece_at(square)
                .filter(|piece| piece.color == color)
                .map(|piece| (square, piece))
        })
    }

    pub fn count(&self, color: Color) -> u32 {
        self.side(color).count_ones()
    }

    /// What a camera sees of this position: colours only, kings look like men.
    pub fn occupancy(&self) -> Occupancy {
        let mut grid = Occupancy::empty(8, 8);
        for square in Square::all() {
            if let Some(piece) = self.piece_at(square) {
                let (row, col) = square.row_col();
                grid.set(row, col, Some(piece.color));
            }
        }
        grid
    }

    pub(super) fn side(&self, color: Color) -> u32 {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    pub(super) fn occupied(&self) -> u32 {
        self.white | self.black
    }

    pub(super) fn color_of_index(&self, index: u8) -> Option<Color> {
        self.piece_at(Square::from_index(index))
            .map(|piece| piece.color)
    }
}

/// The row where `color`'s men become kings (HOS 1.2.2).
pub(super) fn promotion_row(color: Color) -> u32 {
    match color {
        Color::White => WHITE_PROMOTION,
        Color::Black => BLACK_PROMOTION,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_fill_the_nearest_rows() {
        let eight = Position::start(Men::Eight, Color::White);
        assert_eq!(eight.count(Color::White), 8);
        assert_eq!(eight.count(Color::Black), 8);
        assert_eq!(
            eight.piece_at(Square::new(8).unwrap()).map(|p| p.color),
            Some(Color::White)
        );
        assert_eq!(
            eight.piece_at(Square::new(25).unwrap()).map(|p| p.color),
            Some(Color::Black)
        );
        let twelve = Position::start(Men::Twelve, Color::Black);
        assert_eq!(twelve.count(Color::White), 12);
        assert_eq!(twelve.count(Color::Black), 12);
        assert_eq!(twelve.turn(), Color::Black);
        assert_eq!(
            eight.occupancy().to_text_rows(),
            [
                ". B . B . B . B",
                "B . B . B . B .",
                ". . . . . . . .",
                ". . . . . . . .",
                ". . . . . . . .",
                ". . . . . . . .",
                ". W . W . W . W",
                "W . W . W . W .",
            ]
        );
    }
}
