//! What happens on the board, in order, before any timing or pixels: the hands' visits
//! (put a piece down, take one away, move one), pauses, knocks and bumps, each marked with
//! the move it belongs to and any anomaly it is. Game records become scripts in
//! [`super::go`] and [`super::eight`]; [`super::timeline`] gives them time.

use super::scene::Shape;
use crate::games::{Article, Color, Penalty};
use serde::Serialize;

/// A piece on the board: `cell` is (col, row), fractional when a piece is off its point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Piece {
    pub id: u32,
    pub color: Color,
    pub shape: Shape,
    pub cell: [f64; 2],
}

/// The physical board: every piece standing on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Board {
    pub pieces: Vec<Piece>,
}

impl Board {
    pub fn find(&self, id: u32) -> Option<&Piece> {
        self.pieces.iter().find(|p| p.id == id)
    }

    /// The piece nearest to cell (col, row), within half a cell.
    pub fn at(&self, cell: [usize; 2]) -> Option<&Piece> {
        self.pieces.iter().find(|p| {
            (p.cell[0] - cell[0] as f64).abs() < 0.5 && (p.cell[1] - cell[1] as f64).abs() < 0.5
        })
    }

    pub fn apply(&mut self, touch: &Touch) {
        match *touch {
            Touch::Put(piece) => self.pieces.push(piece),
            Touch::Take(id) => self.pieces.retain(|p| p.id != id),
            Touch::Shift { id, to, shape } => {
                if let Some(p) = self.pieces.iter_mut().find(|p| p.id == id) {
                    p.cell = to;
                    if let Some(shape) = shape {
                        p.shape = shape;
                    }
                }
            }
        }
    }
}

/// One thing a hand does on the board.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Touch {
    /// Brings a piece from the bowl or the side and sets it down.
    Put(Piece),
    /// Lifts a piece and carries it off the board.
    Take(u32),
    /// Moves a piece to another cell, optionally changing how it looks (a man crowned, a
    /// Bia turned over).
    Shift {
        id: u32,
        to: [f64; 2],
        shape: Option<Shape>,
    },
}

/// The rule an anomaly breaks, as the recorder must cite it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Anomaly {
    /// The `--anomaly` kind that asked for it.
    pub kind: String,
    /// The move of the physical sequence it happens at (1-based; see [`Mark::Move`]).
    pub move_number: usize,
    pub rules: Vec<Article>,
    pub penalties: Vec<Penalty>,
    /// Cells involved, as the game names them (`dd`, `22`, `e4`).
    pub points: Vec<String>,
    pub note: String,
}

/// What a step means to the record.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum Mark {
    /// A move as it was physically played: `number` counts every move played on the
    /// board, including illegal and extra ones; `record_number` is the move's number in
    /// the input record, absent for moves the record does not have.
    Move {
        number: usize,
        record_number: Option<usize>,
        color: Color,
        notation: String,
        /// Cells whose pieces the move captured.
        captures: Vec<String>,
    },
    /// A pass: nothing to see on the board.
    Pass {
        number: usize,
        record_number: Option<usize>,
        color: Color,
    },
    Anomaly(Anomaly),
    /// This visit finishes move `number` (the captured stones lifted after the hand had
    /// left once): the move is complete when this hand leaves.
    Completes {
        number: usize,
    },
}

/// A step of the script.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A player's hand comes over the board, does `touches` in order, and leaves.
    Visit {
        player: Color,
        touches: Vec<Touch>,
        marks: Vec<Mark>,
    },
    /// Nobody touches the board for about this many seconds (a player thinking; a pass).
    Pause { seconds: f64, marks: Vec<Mark> },
    /// Pieces jump at once without a hand: the board was knocked.
    Knock {
        moves: Vec<(u32, [f64; 2])>,
        marks: Vec<Mark>,
    },
    /// The camera (or, with `board`, the board) is moved for good; `accident` when the
    /// seed did it rather than `--anomaly`.
    Bump {
        board: bool,
        accident: bool,
        marks: Vec<Mark>,
    },
}

impl Step {
    pub fn marks(&self) -> &[Mark] {
        match self {
            Step::Visit { marks, .. }
            | Step::Pause { marks, .. }
            | Step::Knock { marks, .. }
            | Step::Bump { marks, .. } => marks,
        }
    }
}

/// A whole script: the board before the first step (setup, handicap, the 8×8 start
/// position) and the steps. `bottom` is the colour of the player at the bottom edge
/// (row 0 is at the far edge).
#[derive(Clone, Debug)]
pub struct Script {
    pub start: Board,
    pub steps: Vec<Step>,
    pub bottom: Color,
    /// The record as played, in the game's format (SGF, PDN, PGN), for the truth file.
    pub record: String,
}

impl Script {
    /// The board once every step has been carried out.
    pub fn final_board(&self) -> Board {
        let mut board = self.start.clone();
        for step in &self.steps {
            match step {
                Step::Visit { touches, .. } => touches.iter().for_each(|t| board.apply(t)),
                Step::Knock { moves, .. } => {
                    for &(id, to) in moves {
                        board.apply(&Touch::Shift {
                            id,
                            to,
                            shape: None,
                        });
                    }
                }
                Step::Pause { .. } | Step::Bump { .. } => {}
            }
        }
        board
    }
}

/// `kind@move`: an anomaly to stage at a move of the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnomalyRequest {
    pub kind: String,
    pub at: usize,
}

impl std::str::FromStr for AnomalyRequest {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (kind, at) = text
            .split_once('@')
            .ok_or_else(|| format!("{text:?}: expected KIND@MOVE, e.g. double-move@12"))?;
        let at: usize = at
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("{text:?}: the move must be a number from 1"))?;
        Ok(AnomalyRequest {
            kind: kind.to_string(),
            at,
        })
    }
}

/// Gives out piece identities.
#[derive(Default)]
pub struct Ids(u32);

impl Ids {
    pub fn fresh(&mut self) -> u32 {
        self.0 += 1;
        self.0
    }
}

/// A cell's neighbours in the four directions, inside an n×n board.
pub fn neighbours(cell: [usize; 2], n: usize) -> impl Iterator<Item = [usize; 2]> {
    let [c, r] = cell;
    [(0i64, -1i64), (1, 0), (0, 1), (-1, 0)]
        .into_iter()
        .filter_map(move |(dc, dr)| {
            let (nc, nr) = (c as i64 + dc, r as i64 + dr);
            (nc >= 0 && nr >= 0 && (nc as usize) < n && (nr as usize) < n)
                .then_some([nc as usize, nr as usize])
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anomaly_requests_parse_and_refuse_nonsense() {
        let a: AnomalyRequest = "double-move@12".parse().unwrap();
        assert_eq!(
            a,
            AnomalyRequest {
                kind: "double-move".into(),
                at: 12
            }
        );
        assert!("double-move".parse::<AnomalyRequest>().is_err());
        assert!("double-move@0".parse::<AnomalyRequest>().is_err());
        assert!("x@y".parse::<AnomalyRequest>().is_err());
    }

    #[test]
    fn a_board_follows_its_touches() {
        let mut board = Board::default();
        let piece = Piece {
            id: 1,
            color: Color::Black,
            shape: Shape::Stone,
            cell: [3.0, 3.0],
        };
        board.apply(&Touch::Put(piece));
        assert!(board.at([3, 3]).is_some());
        board.apply(&Touch::Shift {
            id: 1,
            to: [3.4, 3.0],
            shape: None,
        });
        assert!(board.at([3, 3]).is_some(), "slid less than half a point");
        board.apply(&Touch::Take(1));
        assert!(board.pieces.is_empty());
        assert_eq!(neighbours([0, 0], 9).count(), 2);
    }
}
