//! `kradan detect IMAGE --game makhos|makruk`: one photo of an 8×8 board in, the position
//! out, 8 lines of 8 tokens.
//!
//! load → the board (given corners, or [`geometry::eight::locate`]) → every square read
//! ([`reading::eight`]) → the orientation (the start position, the colouring). The stages
//! a recorder calls per frame are [`read_frame`] (locate and read) and [`read_located`]
//! (read a board already located).

use crate::detect::{DetectError, DetectOptions, cells_json, timings_json};
use crate::games::Occupancy;
use crate::geometry::BoardGeometry;
use crate::geometry::eight::{self as board8, EightBoard, EightGame, Orientation, Surface};
use crate::reading::adapt::Look;
use crate::reading::eight::{self as squares, Pieces};
use crate::reading::{Observation, ReaderChoice};
use crate::source::image as still;
use opencv::core::{Mat, Rect};
use opencv::prelude::*;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// One frame of an 8×8 board read.
#[derive(Clone, Debug)]
pub struct EightFrame {
    pub board: EightBoard,
    /// Per square, image order (row 0 the edge nearest the top of the picture).
    pub observation: Observation,
    /// Per square, image order: its look, for the board's looks to learn and judge
    /// ([`crate::reading::adapt::BoardLooks`]).
    pub looks: Vec<Look>,
    pub orientation: Orientation,
}

impl EightFrame {
    /// The calls in image order.
    pub fn image_rows(&self) -> Occupancy {
        self.observation.occupancy()
    }

    /// The calls in the game's own orientation (White at the bottom) when it is known.
    pub fn game_rows(&self) -> Option<Occupancy> {
        self.orientation
            .quarters
            .map(|quarters| self.image_rows().turned(quarters))
    }
}

/// What stands on the squares of `game`.
pub fn pieces_of(game: EightGame) -> Pieces {
    match game {
        EightGame::Makhos => Pieces::Discs,
        EightGame::Makruk => Pieces::Figures,
    }
}

/// Reads a board already located (the recorder's per-frame step once it follows the
/// board).
pub fn read_located(image: &Mat, board: EightBoard, game: EightGame) -> opencv::Result<EightFrame> {
    let measures = squares::measure(image, &board, pieces_of(game))?;
    let observation = measures.observation();
    let orientation = board8::orientation(&board, game, &observation.occupancy());
    Ok(EightFrame {
        board,
        observation,
        looks: measures.looks(),
        orientation,
    })
}

/// Locates the board in `image` and reads it; `Err` holds why no board was found.
pub fn read_frame(image: &Mat, game: EightGame) -> opencv::Result<Result<EightFrame, Vec<String>>> {
    let located = board8::locate(image)?;
    match located.board {
        Some(board) => Ok(Ok(read_located(image, board, game)?)),
        None => Ok(Err(located.notes)),
    }
}

/// The result of `kradan detect --game makhos|makruk`.
#[derive(Clone, Debug)]
pub struct EightDetection {
    pub game: EightGame,
    /// The board in the original photo's pixels.
    pub frame: EightFrame,
    pub notes: Vec<String>,
    pub timings_ms: Vec<(&'static str, f64)>,
}

/// Reads the 8×8 board of `game` in the photo at `path`. `options.corners` (the outer
/// corners of the squares) replaces the locator; `--size` (other than 8), `--calibration`
/// and `--reader` are Go's and refused.
pub fn detect(
    path: &Path,
    options: &DetectOptions,
    game: EightGame,
) -> Result<EightDetection, DetectError> {
    if options.size.is_some_and(|s| s != 8)
        || options.calibration.is_some()
        || options.reader != ReaderChoice::Auto
    {
        return Err(DetectError::BadOptions(
            "--size, --calibration and --reader are for Go boards; an 8×8 board is found by itself or placed with --corners".into(),
        ));
    }
    let mut timings = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, timings: &mut Vec<(&'static str, f64)>| {
        timings.push((name, clock.elapsed().as_secs_f64() * 1000.0));
        clock = Instant::now();
    };
    let loaded = still::load(path)?;
    let scale = loaded.scale;
    let image = loaded.image;
    let mut notes = Vec::new();
    if scale != 1.0 {
        notes.push(format!(
            "the photo is {}×{}; it was decoded at 1/{scale:.0} of that to save memory",
            loaded.original_size.0, loaded.original_size.1
        ));
    }
    lap("load", &mut timings);
    let mut segments = Vec::new();
    let board = match options.corners {
        Some(corners) => {
            let geometry = BoardGeometry::from_corners(board8::LINES, corners)
                .ok_or_else(|| {
                    DetectError::BadOptions(
                        "--corners: the four corners do not make a convex quadrilateral".into(),
                    )
                })?
                .scaled(1.0 / scale);
            EightBoard::with_geometry(&image, geometry)?
        }
        None => {
            let located = board8::locate(&image)?;
            notes.extend(located.notes);
            segments = located.segments;
            match located.board {
                Some(board) => board,
                None => {
                    if let Some(dir) = &options.debug_dir {
                        crate::debug::write(dir, path, &image, &segments, None, None, None)
                            .map_err(|e| DetectError::Debug(e.to_string()))?;
                    }
                    return Err(DetectError::NoBoard {
                        path: path.to_path_buf(),
                        notes,
                    });
                }
            }
        }
    };
    lap("geometry", &mut timings);
    let frame = read_located(&image, board, game)?;
    lap("reading", &mut timings);
    if frame.board.surface == Surface::Grid && game == EightGame::Makhos {
        notes.push("the squares do not alternate: a Mak-hos board is checkered".into());
    }
    if let Some(dir) = &options.debug_dir {
        write_debug(dir, path, &image, &segments, &frame)
            .map_err(|e| DetectError::Debug(e.to_string()))?;
        lap("debug", &mut timings);
    }
    let frame = EightFrame {
        board: EightBoard {
            geometry: frame.board.geometry.scaled(scale),
            ..frame.board
        },
        ..frame
    };
    Ok(EightDetection {
        game,
        frame,
        notes,
        timings_ms: timings,
    })
}

/// The lines and grid pictures of the Go detector, and the board with each square's call.
fn write_debug(
    dir: &Path,
    path: &Path,
    image: &Mat,
    segments: &[[f64; 4]],
    frame: &EightFrame,
) -> anyhow::Result<()> {
    let rectified = crate::reading::rectify(image, &frame.board.geometry, squares::CELL)?;
    // Half a square off each side puts square (row, col)'s centre at grid point
    // (col + 1, row + 1) of the debug picture's layout.
    let half = squares::CELL / 2;
    let side = rectified.cols() - 2 * half;
    let squares_only = Mat::roi(&rectified, Rect::new(half, half, side, side))?.try_clone()?;
    crate::debug::write(
        dir,
        path,
        image,
        segments,
        Some(&frame.board.geometry),
        Some(&squares_only),
        Some(&frame.observation),
    )
}

impl EightDetection {
    /// The rows printed: the game's orientation when known, else image order.
    pub fn rows(&self) -> Occupancy {
        self.frame
            .game_rows()
            .unwrap_or_else(|| self.frame.image_rows())
    }

    /// The object `kradan detect --game … --json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        let in_game_order = self.frame.orientation.quarters.is_some();
        json!({
            "game": self.game,
            "size": board8::SQUARES,
            "rows": self.rows().to_text_rows(),
            "rows_order": if in_game_order { "game" } else { "image" },
            "image_rows": self.frame.image_rows().to_text_rows(),
            "orientation": self.frame.orientation,
            "surface": self.frame.board.surface,
            "corners": self.frame.board.geometry.corners(),
            "homography": self.frame.board.geometry.homography,
            "squares": cells_json(&self.frame.observation, ["empty", "dark", "light"]),
            "notes": self.notes,
            "timings_ms": timings_json(&self.timings_ms),
        })
    }
}
