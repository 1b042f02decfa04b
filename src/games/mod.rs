//! Rules engines for the three games. Nothing in here knows about pixels: a position is
//! plain data, moves are judged by pure functions, and every irregularity names the
//! article of `../shared/RULES.md` it comes from, so the recorder can cite it in a flag.

pub mod go;
pub mod makhos;
pub mod makruk;
pub mod rules;

pub use rules::{Article, Penalty, Source};

use serde::{Deserialize, Serialize};
use std::fmt;

/// The two sides. Go and Makruk call them Black and White; Mak-hos sets use two colours
/// too, and a camera only ever sees "dark" and "light", so every game maps onto this pair:
/// dark pieces are `Black`, light pieces are `White`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Black,
    White,
}

impl Color {
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// The one-letter token used in text grids and SGF (`B` / `W`).
    pub fn letter(self) -> char {
        match self {
            Color::Black => 'B',
            Color::White => 'W',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "black",
            Color::White => "white",
        })
    }
}

/// What a camera can tell about a board: for every cell (Go point or 8×8 square), empty or
/// a piece of one colour. Row 0 is the top row as the board is printed in text (SGF row `a`
/// for Go, rank 8 for Makruk, the far row from the side that moves up for Mak-hos); column 0
/// is on the left. This is the type vision hands to the rules engines' `explain` functions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Occupancy {
    width: usize,
    height: usize,
    cells: Vec<Option<Color>>,
}

impl Occupancy {
    pub fn empty(width: usize, height: usize) -> Self {
        Occupancy {
            width,
            height,
            cells: vec![None; width * height],
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn get(&self, row: usize, col: usize) -> Option<Color> {
        self.cells[row * self.width + col]
    }

    pub fn set(&mut self, row: usize, col: usize, value: Option<Color>) {
        self.cells[row * self.width + col] = value;
    }

    /// The board turned a quarter clockwise: what a camera on the next side sees.
    pub fn turned_clockwise(&self) -> Occupancy {
        let mut turned = Occupancy::empty(self.height, self.width);
        for row in 0..self.height {
            for col in 0..self.width {
                turned.set(col, self.height - 1 - row, self.get(row, col));
            }
        }
        turned
    }

    /// Turned `quarters` quarter turns clockwise.
    pub fn turned(&self, quarters: usize) -> Occupancy {
        (0..quarters % 4).fold(self.clone(), |o, _| o.turned_clockwise())
    }

    /// The cells (`[row, col]`, row by row) that hold something else in `other`; every
    /// cell when the shapes differ.
    pub fn differences(&self, other: &Occupancy) -> Vec<[usize; 2]> {
        let same_shape = self.width == other.width && self.height == other.height;
        (0..self.height)
            .flat_map(|row| (0..self.width).map(move |col| [row, col]))
            .filter(|&[row, col]| !same_shape || self.get(row, col) != other.get(row, col))
            .collect()
    }

    /// The cells (`[row, col]`, row by row) that hold `holding` (`None`: the empty ones).
    pub fn cells(&self, holding: Option<Color>) -> impl Iterator<Item = [usize; 2]> + '_ {
        (0..self.height)
            .flat_map(|row| (0..self.width).map(move |col| [row, col]))
            .filter(move |&[row, col]| self.get(row, col) == holding)
    }

    /// How many cells hold `holding` (`None`: how many are empty).
    pub fn count(&self, holding: Option<Color>) -> usize {
        self.cells.iter().filter(|&&cell| cell == holding).count()
    }

    /// How many cells hold the same thing in both (0 when the shapes differ).
    pub fn agreement(&self, other: &Occupancy) -> usize {
        if self.width != other.width || self.height != other.height {
            return 0;
        }
        self.cells
            .iter()
            .zip(&other.cells)
            .filter(|(a, b)| a == b)
            .count()
    }

    /// Rows of `.` `B` `W` tokens separated by spaces: the text grid `kradan replay` and
    /// `kradan detect` print.
    pub fn to_text_rows(&self) -> Vec<String> {
        (0..self.height)
            .map(|row| {
                (0..self.width)
                    .map(|col| match self.get(row, col) {
                        None => ".".to_string(),
                        Some(color) => color.letter().to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// Parses rows of `.`/`B`/`W` characters (spaces ignored), as written by
    /// [`Occupancy::to_text_rows`] or by the ground-truth files of the photo sets.
    pub fn from_text_rows<S: AsRef<str>>(rows: &[S]) -> Result<Self, String> {
        let parsed: Vec<Vec<Option<Color>>> = rows
            .iter()
            .enumerate()
            .map(|(row, line)| {
                line.as_ref()
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .map(|c| match c {
                        '.' => Ok(None),
                        'B' | 'b' | 'X' | 'x' => Ok(Some(Color::Black)),
                        'W' | 'w' | 'O' | 'o' => Ok(Some(Color::White)),
                        other => Err(format!("row {row}: unexpected character {other:?}")),
                    })
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        let height = parsed.len();
        let width = parsed.first().map_or(0, Vec::len);
        if let Some(row) = parsed.iter().position(|r| r.len() != width) {
            return Err(format!("row {row} has a different length from row 0"));
        }
        Ok(Occupancy {
            width,
            height,
            cells: parsed.into_iter().flatten().collect(),
        })
    }
}

/// A record file (SGF, PDN, PGN) that could not be read, with the place the reader gave up,
/// so a user can open the file at that line and see what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based.
    pub line: usize,
    /// 1-based, counted in characters.
    pub column: usize,
    pub message: String,
}

impl ParseError {
    /// Builds the error for byte offset `offset` of `text`.
    pub fn at(text: &str, offset: usize, message: impl Into<String>) -> Self {
        let offset = offset.min(text.len());
        let before = &text[..text.floor_char_boundary(offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        ParseError {
            line,
            column: before[line_start..].chars().count() + 1,
            message: message.into(),
        }
    }
}
