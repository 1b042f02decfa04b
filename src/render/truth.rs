//! `truth.json`: everything a clip shows, exactly, so the recorder can be scored frame by
//! frame and move by move.

use super::scene::{Layout, Shape, Style};
use super::script::{Anomaly, Board};
use crate::games::Color;
use crate::replay::Game;
use serde::Serialize;

pub const FORMAT: &str = "kradan-render-truth/1";

#[derive(Serialize)]
pub struct Truth {
    pub format: &'static str,
    pub game: Game,
    pub seed: u64,
    pub style: Style,
    /// The record the clip was made from, as given.
    pub record: String,
    /// `footage.mp4`, `footage.avi` or `frames/` (relative to the truth file).
    pub video: String,
    pub codec: String,
    pub fps: f64,
    pub frame_count: usize,
    pub duration: f64,
    pub camera: CameraTruth,
    pub board: BoardTruth,
    /// Distinct positions; frames refer to them by index.
    pub positions: Vec<PositionTruth>,
    pub frames: Vec<FrameTruth>,
    pub moves: Vec<MoveTruth>,
    /// Stretches of time when some part of an arm is over the board.
    pub hands: Vec<HandTruth>,
    pub anomalies: Vec<AnomalyTruth>,
    pub bumps: Vec<BumpTruth>,
}

#[derive(Serialize)]
pub struct CameraTruth {
    pub width: u32,
    pub height: u32,
    /// OpenCV camera matrix and distortion (k1, k2, p1, p2, k3).
    pub matrix: [[f64; 3]; 3],
    pub distortion: [f64; 5],
    /// Angle of the view from vertical and its direction, degrees, at the start.
    pub tilt_degrees: f64,
    pub azimuth_degrees: f64,
}

#[derive(Serialize)]
pub struct BoardTruth {
    pub layout: Layout,
    pub cells: usize,
    pub spacing_mm: [f64; 2],
    pub outer_mm: [f64; 2],
    pub thickness_mm: f64,
    /// How `frames[].corners` are ordered.
    pub corner_order: &'static str,
    /// The colour of the player at the bottom edge (the far edge is row 0).
    pub bottom: Color,
}

#[derive(Serialize, PartialEq)]
pub struct PositionTruth {
    /// Rows of `.` `B` `W` tokens, row 0 first, each piece on the cell nearest to it.
    pub rows: Vec<String>,
    /// Every piece with its exact cell (fractional when off its point) and look.
    pub pieces: Vec<PieceTruth>,
}

#[derive(Serialize, PartialEq)]
pub struct PieceTruth {
    pub color: Color,
    pub shape: Shape,
    pub cell: [f64; 2],
}

impl PositionTruth {
    pub fn of(board: &Board, cells: usize) -> PositionTruth {
        let mut grid = vec![vec!['.'; cells]; cells];
        let mut pieces: Vec<PieceTruth> = board
            .pieces
            .iter()
            .map(|p| PieceTruth {
                color: p.color,
                shape: p.shape,
                cell: [round3(p.cell[0]), round3(p.cell[1])],
            })
            .collect();
        pieces.sort_by(|a, b| {
            (a.cell[1], a.cell[0])
                .partial_cmp(&(b.cell[1], b.cell[0]))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        for p in &board.pieces {
            let (c, r) = (p.cell[0].round(), p.cell[1].round());
            if c >= 0.0 && r >= 0.0 && (c as usize) < cells && (r as usize) < cells {
                grid[r as usize][c as usize] = p.color.letter();
            }
        }
        PositionTruth {
            rows: grid
                .into_iter()
                .map(|row| {
                    row.iter()
                        .map(char::to_string)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect(),
            pieces,
        }
    }
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[derive(Serialize)]
pub struct FrameTruth {
    pub t: f64,
    pub position: usize,
    pub hand_over_board: bool,
    /// The playing area's corners in the delivered picture (pixels, lens distortion
    /// included), in `board.corner_order`.
    pub corners: [[f64; 2]; 4],
    /// The camera's pose: OpenCV `rvec`, `tvec` (world in millimetres, z up, the table at
    /// z = 0).
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
}

#[derive(Serialize)]
pub struct MoveTruth {
    /// Counts every move put on the board, extra and illegal ones included.
    pub number: usize,
    /// The move's number in the input record; absent for a move the record does not have.
    pub record_number: Option<usize>,
    pub color: Color,
    /// SGF point, PDN move, or SAN; `pass` for a pass.
    pub notation: String,
    pub captures: Vec<String>,
    /// When the piece touched down.
    pub placed_at: f64,
    /// When the hand that made it left the board: the move is complete.
    pub completed_at: f64,
    pub completed_frame: usize,
}

#[derive(Serialize)]
pub struct HandTruth {
    pub player: Color,
    pub from: f64,
    pub to: f64,
    pub from_frame: usize,
    pub to_frame: usize,
}

#[derive(Serialize)]
pub struct AnomalyTruth {
    #[serde(flatten)]
    pub anomaly: Anomaly,
    pub at: f64,
    pub frame: usize,
}

#[derive(Serialize)]
pub struct BumpTruth {
    pub at: f64,
    pub frame: usize,
    /// `camera` or `board`.
    pub moved: &'static str,
    /// Whether `--anomaly` asked for it (otherwise the seed's accident).
    pub requested: bool,
}
