//! `kradan detect IMAGE --game makhos|makruk`: one photo of an 8×8 board in, the position
//! out, 8 lines of 8 tokens.
//!
//! load → the board (given corners, or [`geometry::eight::locate`]) → every square read
//! ([`reading::eight`]) → the orientation (the start position, the colouring). The stages
//! a recorder calls per frame are [`read_frame`] (locate and read) and [`read_located`]
//! (read a board already located).

use crate::detect::{DetectError, DetectOptions, cells_json, timings_json};
use crate::games::{Color, Occupancy};
use crate::geometry::BoardGeometry;
use crate::geometry::eight::{self as board8, EightBoard, EightGame, Orientation, Surface};
use crate::geometry::outline::{self, OutlineSteps};
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

/// How the lattice of [`on_position`] was placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// As the locator found it.
    Located,
    /// The locator's lattice moved a square along its lines.
    MovedBySquare,
    /// A faint plain grid found through the board's outline ([`crate::geometry::outline::faint_grids`]).
    FaintGrid,
    /// Found with the lattices that did not read the position painted over: another board
    /// or grid beside it.
    BesideAnother,
}

impl Placement {
    /// Why the lattice is not the locator's, for the user; `None` when it is.
    pub fn note(self) -> Option<&'static str> {
        match self {
            Placement::Located => None,
            Placement::MovedBySquare => Some(
                "the lattice was moved a square along its lines: there it reads the expected position",
            ),
            Placement::FaintGrid => Some(
                "the lines were found through the board's outline, too faint for the locator: there they read the expected position",
            ),
            Placement::BesideAnother => Some(
                "the lattice found first (another board or grid beside this one) did not read the expected position; with it painted over, this board does",
            ),
        }
    }
}

/// The board of `game` that reads one of `expected` (each in the game's rows, any turn),
/// starting from `located`, the locator's board, if any.
///
/// A checkered board's frame is often the colour of its light squares, with an edge as
/// sharp as theirs, and a row of tall figures on the outer squares hides their
/// alternation: the run of 9 edges can take in the frame and leave out the figures' row,
/// and the squares' colours alone cannot tell (Makruk seed 310457, 1280×720: the lattice a
/// column onto the frame, the start read 40 squares off, nothing recorded). What stands
/// on the squares can, when it is known: the start position on a board just found, the
/// recorded one on a board found again. So a lattice that reads it more than a few squares
/// off is tried a square over each way. And a plain grid whose lines are a few grey levels
/// under its wood shows the locator nothing, or something else (Makruk seeds 310465,
/// 310476, 310485, 310487: a table's stripes, a clock, nothing recorded in a whole game);
/// the lattices its outline gives are tried then too, each also a square over.
///
/// `None` when nothing was located and no faint grid reads the position.
pub fn on_position(
    image: &Mat,
    located: Option<EightBoard>,
    game: EightGame,
    expected: &[Occupancy],
) -> opencv::Result<Option<(EightBoard, Placement)>> {
    let pieces = pieces_of(game);
    let reading = |board: &EightBoard| -> opencv::Result<Occupancy> {
        Ok(squares::measure(image, board, pieces)?
            .observation()
            .occupancy())
    };
    let misfit = |board: &EightBoard| -> opencv::Result<usize> {
        Ok(least_mismatches(&reading(board)?, expected))
    };
    let expected_blind: Vec<Occupancy> = expected.iter().map(colour_blind).collect();
    let blind_misfit = |board: &EightBoard| -> opencv::Result<usize> {
        Ok(least_mismatches(
            &colour_blind(&reading(board)?),
            &expected_blind,
        ))
    };
    // The board, or the best of the lattices a square beside it when that one reads
    // `expected` clearly better, with its mismatches as `judge` counts them.
    type Judge<'a> = &'a dyn Fn(&EightBoard) -> opencv::Result<usize>;
    let settle =
        |board: EightBoard, judge: Judge| -> opencv::Result<(EightBoard, Placement, usize)> {
            let found = judge(&board)?;
            if found <= WINDOW_TOLERANCE {
                return Ok((board, Placement::Located, found));
            }
            let mut best: Option<(usize, EightBoard)> = None;
            for (columns, rows) in board8::SQUARE_STEPS {
                let Some(moved) = board8::moved_by_squares(image, &board, columns, rows)? else {
                    continue;
                };
                if moved.surface != board.surface {
                    continue;
                }
                let mismatches = judge(&moved)?;
                if best.as_ref().is_none_or(|(fewest, _)| mismatches < *fewest) {
                    best = Some((mismatches, moved));
                }
            }
            Ok(match best {
                Some((mismatches, moved))
                    if 2 * mismatches <= found && found - mismatches >= board8::SQUARES =>
                {
                    (moved, Placement::MovedBySquare, mismatches)
                }
                _ => (board, Placement::Located, found),
            })
        };
    let settled = |board: EightBoard| settle(board, &misfit);
    let located = located.map(settled).transpose()?;
    if let Some((board, placement, found)) = &located
        && *found <= WINDOW_TOLERANCE
    {
        return Ok(Some((board.clone(), *placement)));
    }
    let mut faint: Option<(EightBoard, usize, OutlineSteps)> = None;
    // The located lattice's mismatches by occupancy alone, once the evened outline is
    // weighed against it.
    let mut located_blind: Option<usize> = None;
    for outline in [OutlineSteps::Colour, OutlineSteps::Evened] {
        // Light dim enough that only an evened outline shows the board leaves the
        // figures' colours unsure too (310687: most of the red back row read black, 9
        // squares off), while which squares hold a figure still reads: that is what
        // places the lattice.
        let judge: Judge = match outline {
            OutlineSteps::Colour => &misfit,
            OutlineSteps::Evened => &blind_misfit,
        };
        // A located lattice whose squares are held as expected, whatever their colours
        // read, is the board: the evened outline is for when nothing else places one
        // (Makruk 310669, 1280×720 `hard`: an evened grid 2 px from the located lattice
        // took its place, the same by occupancy, and raised two false flags more).
        if outline == OutlineSteps::Evened
            && let Some((board, _, _)) = &located
        {
            let held = blind_misfit(board)?;
            located_blind = Some(held);
            if held <= FAINT_TOLERANCE {
                break;
            }
        }
        for geometry in outline::faint_grids(image, FAINT_CANDIDATES, outline)? {
            let (board, _, found) = settle(EightBoard::with_geometry(image, geometry)?, judge)?;
            if faint.as_ref().is_none_or(|(_, fewest, _)| found < *fewest) {
                faint = Some((board, found, outline));
            }
        }
        if faint
            .as_ref()
            .is_some_and(|(_, found, _)| *found <= FAINT_TOLERANCE)
        {
            break;
        }
    }
    let faint = faint.filter(|(_, found, _)| *found <= FAINT_TOLERANCE);
    // The faint grid chosen, moved onto its drawn lines when they lie within half a square
    // of it and it still reads the position. Not by which reads it better: on 310569 the
    // leaning lattice read the start on 2 squares fewer than the one on the lines, and
    // lost the lines themselves (the view judged covered every other look). And by where
    // the pieces stand alone: on the lines a lattice samples the figures where they
    // stand, a shadow over a row of them can read their colour wrong, and the tracker
    // learns their looks from the position once the game starts (310659, 1920×1080: the
    // lattice on the lines read the white back row dark, 10 squares off, and was
    // refused; the one left a third of a square off read the view off its board on a
    // third of the looks, and 12 of 33 moves were lost).
    //
    // A grid found by its evened outline is left where it was found: in light that dim the
    // board's own edge, a third of a square beyond the outer lines, is darker than the
    // drawn lines and the outer lines were moved onto it (310687: 15 px off, the start
    // never read and nothing was recorded); the outline's lattice lay within 4 px of the
    // lines.
    let on_lines =
        |(board, _, outline): (EightBoard, usize, OutlineSteps)| -> opencv::Result<EightBoard> {
            if outline == OutlineSteps::Evened {
                return Ok(board);
            }
            let Some(geometry) = outline::on_drawn_lines(image, &board.geometry)? else {
                return Ok(board);
            };
            let square = crate::geometry::locate::quad_area(&board.geometry.corners()).sqrt()
                / board8::SQUARES as f64;
            if geometry.corner_shift(&board.geometry) > square / 2.0 {
                return Ok(board);
            }
            let refined = EightBoard::with_geometry(image, geometry)?;
            Ok(if blind_misfit(&refined)? <= FAINT_TOLERANCE {
                refined
            } else {
                board
            })
        };
    if faint.is_none()
        && located
            .as_ref()
            .is_none_or(|(_, _, found)| *found > FAINT_TOLERANCE)
    {
        let misfits: Vec<BoardGeometry> = located
            .iter()
            .map(|(board, _, _)| board.geometry.clone())
            .collect();
        if let Some(beside) = beside_misfits(image, &misfits, &settled)? {
            return Ok(Some((beside, Placement::BesideAnother)));
        }
    }
    // A faint grid replaces the located lattice when it reads the position clearly better,
    // counted alike: an evened outline's grid, judged by occupancy alone, against the
    // located lattice's occupancy too.
    let located_count = |found: usize, outline: OutlineSteps| match outline {
        OutlineSteps::Colour => found,
        OutlineSteps::Evened => located_blind.unwrap_or(found),
    };
    Ok(match (located, faint) {
        (Some((_, _, found)), Some(faint)) if 2 * faint.1 <= located_count(found, faint.2) => {
            Some((on_lines(faint)?, Placement::FaintGrid))
        }
        (None, Some(faint)) => Some((on_lines(faint)?, Placement::FaintGrid)),
        (Some((board, placement, _)), _) => Some((board, placement)),
        (None, None) => None,
    })
}

/// The board that reads the expected position once `misfits`, lattices found that do not,
/// are painted over: another board or grid beside the one played on can be the first
/// thing both the locator and the outline see, and then hide it (Makruk seed 310665,
/// 640×480: a lined Go board beside the checkered board, a window of its lines taken, its
/// lines the strongest in the picture so that the outline's quadrilaterals were all its
/// own; the start never fitted and nothing was recorded in the whole game). The board is
/// read on `image` itself: the painting only hides what misled the search. Rounds stop
/// at [`PAINT_ROUNDS`], as each round costs a full search.
fn beside_misfits(
    image: &Mat,
    misfits: &[BoardGeometry],
    settled: &dyn Fn(EightBoard) -> opencv::Result<(EightBoard, Placement, usize)>,
) -> opencv::Result<Option<EightBoard>> {
    let mut painted_out: Vec<BoardGeometry> = misfits.to_vec();
    for _ in 0..PAINT_ROUNDS {
        if painted_out.is_empty() {
            return Ok(None);
        }
        let mut painted = image.clone();
        for geometry in &painted_out {
            painted = board8::painted_over(&painted, geometry)?;
        }
        let located = board8::locate_as_seen(&painted)?
            .board
            .map(|board| board.geometry);
        let faint = outline::faint_grids(&painted, FAINT_CANDIDATES, OutlineSteps::Colour)?;
        let mut best: Option<(EightBoard, usize, BoardGeometry)> = None;
        for geometry in located.into_iter().chain(faint) {
            let (board, _, found) = settled(EightBoard::with_geometry(image, geometry.clone())?)?;
            if best.as_ref().is_none_or(|(_, fewest, _)| found < *fewest) {
                best = Some((board, found, geometry));
            }
        }
        match best {
            Some((board, found, _)) if found <= FAINT_TOLERANCE => return Ok(Some(board)),
            Some((_, _, misfit)) => painted_out.push(misfit),
            None => return Ok(None),
        }
    }
    Ok(None)
}

/// Searches on a picture with the misleading lattices painted over, at most.
const PAINT_ROUNDS: usize = 2;

/// Lattices of a faint grid read against the expected position, each also a square over.
const FAINT_CANDIDATES: usize = 6;
/// Squares of 64 a faint grid's reading may differ from the expected position and be
/// taken: no lattice the locator did not find is taken on less, and a lattice a square off
/// a board's lines reads half its squares wrong.
const FAINT_TOLERANCE: usize = 8;

/// Squares of 64 a lattice's reading may differ from the position expected and be taken
/// as on it without looking a square beside it: a piece or two misread, a move made.
const WINDOW_TOLERANCE: usize = 4;

/// `position` with every figure taken as Black: only which squares are held.
fn colour_blind(position: &Occupancy) -> Occupancy {
    let mut blind = Occupancy::empty(position.width(), position.height());
    for row in 0..position.height() {
        for col in 0..position.width() {
            if position.get(row, col).is_some() {
                blind.set(row, col, Some(Color::Black));
            }
        }
    }
    blind
}

/// How many squares of `reading` (image order) differ from the nearest of `expected`
/// (game order) under the turn that fits it best.
fn least_mismatches(reading: &Occupancy, expected: &[Occupancy]) -> usize {
    (0..4)
        .map(|quarters| board8::mismatches(expected, reading, quarters))
        .min()
        .unwrap_or(board8::SQUARES * board8::SQUARES)
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
            match on_position(&image, located.board, game, &game.starts())? {
                Some((board, placement)) => {
                    notes.extend(placement.note().map(String::from));
                    board
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Color;
    use opencv::core::{CV_8UC3, Point, Scalar};
    use opencv::imgproc;

    const ORIGIN: (i32, i32) = (170, 90);
    const SQUARE: i32 = 64;

    fn filled(image: &mut Mat, from: (i32, i32), to: (i32, i32), colour: Scalar) {
        imgproc::rectangle_points(
            image,
            Point::new(from.0, from.1),
            Point::new(to.0, to.1),
            colour,
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
    }

    /// A top-down checkered board in a frame a square wide of its light squares' colour,
    /// the men of `position` (image order) on it.
    fn framed_board(position: &Occupancy) -> Mat {
        let light = Scalar::new(150.0, 190.0, 220.0, 0.0);
        let dark = Scalar::new(40.0, 70.0, 110.0, 0.0);
        let mut image =
            Mat::new_rows_cols_with_default(700, 900, CV_8UC3, Scalar::new(60.0, 50.0, 40.0, 0.0))
                .unwrap();
        let (x0, y0) = ORIGIN;
        filled(
            &mut image,
            (x0 - SQUARE, y0 - SQUARE),
            (x0 + 9 * SQUARE, y0 + 9 * SQUARE),
            light,
        );
        for row in 0..8 {
            for col in 0..8 {
                let (x, y) = (x0 + col * SQUARE, y0 + row * SQUARE);
                if (row + col) % 2 == 1 {
                    filled(&mut image, (x, y), (x + SQUARE, y + SQUARE), dark);
                }
                let Some(colour) = position.get(row as usize, col as usize) else {
                    continue;
                };
                let man = match colour {
                    Color::White => Scalar::new(235.0, 240.0, 245.0, 0.0),
                    Color::Black => Scalar::new(20.0, 20.0, 25.0, 0.0),
                };
                imgproc::circle(
                    &mut image,
                    Point::new(x + SQUARE / 2, y + SQUARE / 2),
                    SQUARE * 3 / 10,
                    man,
                    -1,
                    imgproc::LINE_AA,
                    0,
                )
                .unwrap();
            }
        }
        image
    }

    /// The board's lattice moved `columns` squares to the right.
    fn lattice_at(columns: i32) -> BoardGeometry {
        let (x0, y0) = (f64::from(ORIGIN.0 + columns * SQUARE), f64::from(ORIGIN.1));
        let side = f64::from(8 * SQUARE);
        BoardGeometry::from_corners(
            board8::LINES,
            [
                [x0, y0],
                [x0 + side, y0],
                [x0 + side, y0 + side],
                [x0, y0 + side],
            ],
        )
        .unwrap()
    }

    fn lattice(image: &Mat, columns: i32) -> EightBoard {
        EightBoard::with_geometry(image, lattice_at(columns)).unwrap()
    }

    fn assert_on_the_squares(board: &EightBoard) {
        for (found, want) in board.geometry.corners().iter().zip(lattice_at(0).corners()) {
            assert!(
                (found[0] - want[0]).hypot(found[1] - want[1]) < 3.0,
                "{:?}",
                board.geometry.corners()
            );
        }
    }

    #[test]
    fn a_lattice_a_column_onto_the_frame_is_moved_to_where_it_reads_the_start() {
        let starts = EightGame::Makhos.starts();
        let image = framed_board(&starts[0]);
        let off = lattice(&image, 1);
        let (board, placement) = on_position(&image, Some(off), EightGame::Makhos, &starts)
            .unwrap()
            .expect("a board");
        assert_eq!(placement, Placement::MovedBySquare);
        assert_on_the_squares(&board);
        // On the squares already, it stays.
        let right = lattice(&image, 0);
        let (board, placement) = on_position(&image, Some(right), EightGame::Makhos, &starts)
            .unwrap()
            .expect("a board");
        assert_eq!(placement, Placement::Located);
        assert_on_the_squares(&board);
    }

    #[test]
    fn a_lattice_is_not_moved_for_a_position_no_window_reads() {
        let starts = EightGame::Makhos.starts();
        let image = framed_board(&starts[0]);
        let off = lattice(&image, 1);
        // The men two rows further in: no lattice a square off reads that either.
        let mut further_in = Occupancy::empty(board8::SQUARES, board8::SQUARES);
        for row in 0..board8::SQUARES {
            for col in 0..board8::SQUARES {
                if let Some(colour) = starts[0].get(row, col) {
                    let row = if row < 4 { row + 2 } else { row - 2 };
                    further_in.set(row, col, Some(colour));
                }
            }
        }
        let expected = [further_in];
        let (board, placement) =
            on_position(&image, Some(off.clone()), EightGame::Makhos, &expected)
                .unwrap()
                .expect("the located board");
        assert_eq!(placement, Placement::Located);
        assert_eq!(board.geometry.corners(), off.geometry.corners());
    }
}
