//! Go (หมากล้อม) under the rules of the Go Association of Thailand (TGA) and the Thailand
//! Maklom League (TML): captures, no suicide, simple ko, passes, handicap, repetition
//! reported as a draw claim, Thai and area scoring, SGF records.

mod board;
pub mod explain;
mod position;
pub mod replay;
pub mod scoring;
pub mod sgf;

pub use board::{Board, Chain, MAX_SIZE, MIN_SIZE};
pub use explain::{Context, Explanation, Flag, FlagKind, MAX_NEW_STONES, ShapeError, explain};
pub use position::{Played, Position};

use crate::games::{Article, Penalty, Source};
use serde::Serialize;
use std::fmt;

/// An intersection. Row 0 is SGF row `a` (the top edge as printed), column 0 is SGF
/// column `a` (the left edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point {
    pub row: u8,
    pub col: u8,
}

impl Point {
    pub const fn new(row: u8, col: u8) -> Self {
        Point { row, col }
    }

    /// The SGF coordinate, column letter first (`dd` is row 3, column 3).
    pub fn to_sgf(self) -> String {
        [(b'a' + self.col) as char, (b'a' + self.row) as char]
            .iter()
            .collect()
    }

    /// The GTP coordinate on a board of `size`: columns `A`–`T` without `I`, rows counted
    /// from the bottom edge.
    pub fn to_gtp(self, size: usize) -> String {
        let letter = b'A' + self.col + u8::from(self.col >= 8);
        format!("{}{}", letter as char, size - self.row as usize)
    }

    /// Parses a GTP coordinate (`D4`, `q16`) on a board of `size`.
    pub fn from_gtp(text: &str, size: usize) -> Option<Point> {
        let mut chars = text.chars();
        let letter = chars.next()?.to_ascii_uppercase();
        if !letter.is_ascii_uppercase() || letter == 'I' {
            return None;
        }
        let col = letter as u8 - b'A' - u8::from(letter > 'I');
        let number: usize = chars.as_str().parse().ok()?;
        if number == 0 || number > size || col as usize >= size {
            return None;
        }
        Some(Point::new((size - number) as u8, col))
    }
}

impl Serialize for Point {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.to_sgf())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Play(Point),
    Pass,
}

impl Move {
    /// The move as SGF writes it: the point, or the empty value for a pass.
    pub fn to_sgf(self) -> String {
        match self {
            Move::Play(point) => point.to_sgf(),
            Move::Pass => String::new(),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Play(point) => f.write_str(&point.to_sgf()),
            Move::Pass => f.write_str("pass"),
        }
    }
}

/// Why the engine refuses a move, with the article that forbids it and the penalty the
/// tournament rules give when a player does it anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Illegal {
    #[error("the point is already occupied")]
    Occupied,
    #[error("the point is not on the board")]
    OffBoard,
    #[error("suicide: the stone would have no liberties and captures nothing")]
    Suicide,
    #[error("ko: retakes a single-stone ko at once")]
    Ko,
}

const TGA_4_2: Article = Article::new(Source::Tga, "4.2");
const TGA_6: Article = Article::new(Source::Tga, "6");
const TGA_8: Article = Article::new(Source::Tga, "8");
const TGA_28: Article = Article::new(Source::Tga, "28");
const TGA_29: Article = Article::new(Source::Tga, "29");
const TML_31: Article = Article::new(Source::Tml, "31");
const TML_32: Article = Article::new(Source::Tml, "32");

impl Illegal {
    /// The rule that forbids the move, then the articles that set its penalty.
    pub fn articles(self) -> &'static [Article] {
        match self {
            // Stones go on empty intersections, one per turn: there is no penalty article
            // for the impossible, so the referee decides.
            Illegal::Occupied | Illegal::OffBoard => &[TGA_4_2],
            Illegal::Suicide => &[TGA_6, TGA_29, TML_32],
            Illegal::Ko => &[TGA_8, TGA_28, TML_31],
        }
    }

    pub fn penalties(self) -> &'static [Penalty] {
        match self {
            Illegal::Occupied | Illegal::OffBoard => &[Penalty::Advisory],
            Illegal::Suicide | Illegal::Ko => &[Penalty::Warning, Penalty::LoseTurn],
        }
    }
}

/// Playing twice in a row without the opponent passing loses the game.
pub const DOUBLE_MOVE: (&[Article], &[Penalty]) = (
    &[
        Article::new(Source::Tga, "20"),
        Article::new(Source::Tml, "23"),
    ],
    &[Penalty::Loss],
);

/// A whole-board position came back (triple ko, eternal life…): not forbidden, but the
/// players may agree to a draw.
pub const REPETITION: (&[Article], &[Penalty]) =
    (&[Article::new(Source::Tga, "11")], &[Penalty::DrawClaim]);

/// The fixed handicap points (TGA 4.1): the star points in the order GTP's
/// `fixed_handicap` and every Go server use. Two stones go on opposite corners (lower left,
/// upper right), the third on the upper left, the fourth on the lower right, five takes the centre,
/// six and eight the side points, seven and nine the centre as well.
pub fn handicap_points(size: usize, stones: usize) -> Result<Vec<Point>, String> {
    if stones == 0 {
        return Ok(Vec::new());
    }
    let limit = match size {
        s if s < 7 => 0,
        s if s % 2 == 0 || s == 7 => 4,
        _ => 9,
    };
    if stones == 1 || stones > limit {
        return Err(format!(
            "a fixed handicap of {stones} stones is not defined on {size}×{size} (2 to {limit})"
        ));
    }
    let edge = if size >= 13 { 3 } else { 2 } as u8;
    let (low, high, mid) = (edge, size as u8 - 1 - edge, (size / 2) as u8);
    let corners = [
        Point::new(high, low),
        Point::new(low, high),
        Point::new(low, low),
        Point::new(high, high),
    ];
    let sides = [Point::new(mid, low), Point::new(mid, high)];
    let top_bottom = [Point::new(low, mid), Point::new(high, mid)];
    let centre = Point::new(mid, mid);
    let mut points: Vec<Point> = corners.iter().copied().take(stones.min(4)).collect();
    if stones >= 6 {
        points.extend(sides);
    }
    if stones >= 8 {
        points.extend(top_bottom);
    }
    if stones % 2 == 1 && stones >= 5 {
        points.push(centre);
    }
    Ok(points)
}
