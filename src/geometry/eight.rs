//! Finding an 8×8 board (Mak-hos, Makruk) with no clicks.
//!
//! Two kinds of board, one lattice: a plain grid has 9 drawn lines each way, found by the
//! Go locator as they are; a checkered board has none, but every square edge is a step
//! from dark to light, and the thinnest morphological gradient turns each step into a
//! bright line of its own, which the same machinery (segments, vanishing points, lattice,
//! the run of 9 lines, refinement) fits. Either way the result is a [`BoardGeometry`] of
//! size 9 whose grid points are the squares' corners: square (`row`, `col`) has its centre
//! at grid (`col + 0.5`, `row + 0.5`).

use super::BoardGeometry;
use super::crossings;
use super::locate::{self, LineKind};
use crate::games::{Color, Occupancy, makhos, makruk};
use opencv::core::{Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

/// Lines per side of an 8×8 board's lattice.
pub const LINES: usize = 9;
/// Squares per side.
pub const SQUARES: usize = 8;

/// How the squares are marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// Alternately dark and light squares.
    Checkered,
    /// Squares of one colour bounded by drawn lines.
    Grid,
}

/// A located 8×8 board.
#[derive(Clone, Debug)]
pub struct EightBoard {
    /// Size 9, row 0 the edge nearest the top of the image (see [`locate::image_order`]).
    pub geometry: BoardGeometry,
    pub surface: Surface,
    /// On a checkered board, whether square (0, 0) of `geometry` is a dark one.
    pub first_square_dark: Option<bool>,
}

impl EightBoard {
    /// The board whose square corners `geometry` (size 9) gives, its surface told from
    /// whether its squares alternate in brightness.
    pub fn with_geometry(image: &Mat, geometry: BoardGeometry) -> opencv::Result<EightBoard> {
        let contrast =
            checker_contrast(image, &geometry)?.filter(|c| c.strength >= CHECKERED_STRENGTH);
        Ok(EightBoard {
            geometry,
            surface: if contrast.is_some() {
                Surface::Checkered
            } else {
                Surface::Grid
            },
            first_square_dark: contrast.map(|c| c.first_square_dark),
        })
    }
}

/// What [`locate`] found, with the segments and notes for the debug pictures and the user.
#[derive(Clone, Debug, Default)]
pub struct Located {
    pub board: Option<EightBoard>,
    pub segments: Vec<[f64; 4]>,
    pub notes: Vec<String>,
}

/// Finds an 8×8 board in a BGR image (any size: it is reduced for the search).
///
/// Drawn lines are tried first: a plain grid shows nothing else, and a checkered board
/// with a drawn border rarely shows 9 drawn lines each way. Then square edges, then drawn
/// lines too faint for the first try on the picture with its brightness evened, and last
/// lines or edges inside the board's outline. When all that shows is a plain grid, the
/// checkered kinds look once more with that grid painted over.
///
/// Last of all, a dim checkered board is looked for on the picture with its contrast raised.
pub fn locate(image: &Mat) -> opencv::Result<Located> {
    locate_with(image, Contrast::RaisedWhenDim)
}

/// As [`locate`], but only on the picture as it is: for the lens search, which weighs the
/// lattices found under each lens against each other, and a lattice found on a picture
/// whose contrast was raised is fitted to other lines than one found as it is (Mak-hos
/// seed 300442: a lattice found that way under a weak lens beat the strong lens the
/// board's lines needed, and 9 moves were lost).
pub fn locate_as_seen(image: &Mat) -> opencv::Result<Located> {
    locate_with(image, Contrast::AsSeen)
}

/// Whether [`locate_with`] may raise a dim picture's contrast.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Contrast {
    AsSeen,
    RaisedWhenDim,
}

fn locate_with(image: &Mat, contrast: Contrast) -> opencv::Result<Located> {
    let mut notes = Vec::new();
    let mut segments = Vec::new();
    let attempts = [
        (LineKind::Drawn, Attempt::Lines),
        (LineKind::SquareEdges, Attempt::Lines),
        (LineKind::Drawn, Attempt::Evened),
        (LineKind::SquareEdges, Attempt::InsideOutline),
    ];
    let mut held = match search(image, &attempts, None, &mut notes, &mut segments)? {
        Search::Taken(located) => return Ok(located),
        Search::Held(held) => held,
    };
    // A lined board's strong lines raise the response's floor over a dim checkered board
    // beside it, whose square edges then show no segments (Mak-hos seed 300320: 9 lines
    // of a Go board taken, the checkered board played on never found). With the grid
    // painted over, the floor is the checkered board's own.
    if let Some(first) = &held
        && !first.checkered
        && let Some(grid) = &first.located.board
    {
        let painted = painted_over(image, &grid.geometry)?;
        let checkered = [
            (LineKind::SquareEdges, Attempt::Lines),
            (LineKind::SquareEdges, Attempt::InsideOutline),
        ];
        match search(&painted, &checkered, held, &mut Vec::new(), &mut Vec::new())? {
            Search::Taken(located) => return Ok(located),
            Search::Held(still) => held = still,
        }
    }
    if let Some(first) = held {
        return Ok(first.located);
    }
    if contrast == Contrast::RaisedWhenDim
        && let Some(located) = found_with_contrast_raised(image)?
    {
        return Ok(located);
    }
    Ok(Located {
        board: None,
        segments,
        notes,
    })
}

/// A checkered board in dim light steps from square to square by two or three grey levels,
/// under the floor of the edge response, and its drawn border alone is no lattice (Makruk
/// seed 310576, 1920×1080: no board for the first 24 s of the game). With the lightness's
/// contrast raised tile by tile the squares stand out as they would in good light; the
/// noise it raises too is why this is tried last.
fn found_with_contrast_raised(image: &Mat) -> opencv::Result<Option<Located>> {
    let raised = contrast_raised(image)?;
    let dim = [
        (LineKind::SquareEdges, Attempt::Lines),
        (LineKind::SquareEdges, Attempt::InsideOutline),
    ];
    let found = match search(&raised, &dim, None, &mut Vec::new(), &mut Vec::new())? {
        Search::Taken(located) => Some(located),
        Search::Held(held) => held.map(|candidate| candidate.located),
    };
    Ok(found.map(|mut located| {
        located.notes.push(
            "the square edges were found on the picture with its contrast raised: the board is dim"
                .into(),
        );
        located
    }))
}

/// How a [`search`] ended.
enum Search {
    /// The board played on, found.
    Taken(Located),
    /// The best board found so far, which a later kind may still beat.
    Held(Option<Candidate>),
}

/// Tries `attempts` in turn on `image`, weighing each board found against the one held.
/// Notes on what failed and the first segments seen go to `notes` and `segments`.
fn search(
    image: &Mat,
    attempts: &[(LineKind, Attempt)],
    mut held: Option<Candidate>,
    notes: &mut Vec<String>,
    segments: &mut Vec<[f64; 4]>,
) -> opencv::Result<Search> {
    for &(kind, attempt) in attempts {
        let found = match attempt {
            Attempt::Lines => locate::locate_lines(image, LINES, kind)?,
            Attempt::InsideOutline => locate::locate_inside_outline(image, LINES, kind)?,
            Attempt::Evened => locate::locate_dim_lines(image, LINES)?,
        };
        if segments.is_empty() {
            *segments = found.segments.clone();
        }
        let Some(geometry) = found.geometry else {
            notes.extend(found.notes.into_iter().map(|n| match (kind, attempt) {
                (LineKind::Drawn, Attempt::Evened) => {
                    format!("drawn lines, brightness evened: {n}")
                }
                (LineKind::Drawn, _) => format!("drawn lines: {n}"),
                (LineKind::SquareEdges, Attempt::InsideOutline) => {
                    format!("faint lines or edges: {n}")
                }
                (LineKind::SquareEdges, _) => format!("square edges: {n}"),
            }));
            continue;
        };
        let smallest = smallest_square(&geometry);
        if smallest < MIN_SQUARE_PIXELS {
            notes.push(format!(
                "a lattice was found but its squares are too small to be a board's ({smallest:.0} px)"
            ));
            continue;
        }
        let mut found_notes = found.notes;
        // The crossings' lattice is taken only when its own squares alternate: on a plain
        // grid, corners where the board's edge, the table and a figure meet can show the
        // crossing pattern too (Makruk seed 310392: a plain grid turned in the picture, its
        // lines found right, moved by the crossings a square and a half onto the table,
        // checker strength 0 there, and nothing recorded in the whole game).
        let fitted = match crossings::fitted_to_crossings(image, &geometry)? {
            Some(fitted) => Some(EightBoard::with_geometry(image, fitted)?)
                .filter(|board| board.surface == Surface::Checkered),
            None => None,
        };
        let mut board = match fitted {
            Some(board) => {
                found_notes.push(
                    "the lattice was fitted to the crossings of the checkered squares".into(),
                );
                board
            }
            None => EightBoard::with_geometry(image, geometry)?,
        };
        if board.surface == Surface::Checkered
            && let Some(moved) = onto_the_squares(image, &board.geometry)?
        {
            found_notes.push(
                "the lattice was moved by a square onto the board: one row or column of it lay on the frame"
                    .into(),
            );
            board = EightBoard::with_geometry(image, moved)?;
        }
        // Square edges on a board that is not checkered are the edges of its drawn
        // lines, or something else with a lattice: not a board this kind finds. Inside an
        // outline they may well be a plain grid's faint lines (each line two steps), the
        // lattice already held to the outline and to every inner line standing out.
        if kind == LineKind::SquareEdges
            && attempt != Attempt::InsideOutline
            && board.surface != Surface::Checkered
        {
            notes.push("square edges: a lattice was found but its squares do not alternate".into());
            continue;
        }
        match attempt {
            Attempt::InsideOutline => found_notes.push(
                "the squares were fitted inside the board's outline: their lines or edges are too faint for segments"
                    .into(),
            ),
            Attempt::Evened => found_notes.push(
                "the drawn lines were found on the picture with its brightness evened: they are faint against the board"
                    .into(),
            ),
            Attempt::Lines => {}
        }
        let candidate = Candidate {
            whole: within_picture(&board.geometry, image),
            checkered: board.surface == Surface::Checkered,
            area: locate::quad_area(&board.geometry.corners()),
            located: Located {
                board: Some(board),
                segments: found.segments,
                notes: found_notes,
            },
        };
        match held.take() {
            // A checkered board wholly in view is what an 8×8 game is played on, and a
            // plain grid in view is taken when nothing better shows; a lattice running
            // out of the picture, or a plain one, is first weighed against what the kinds
            // still to try find.
            None if candidate.whole && candidate.checkered => {
                return Ok(Search::Taken(candidate.located));
            }
            None => held = Some(candidate),
            Some(first) if candidate.beats(&first) => {
                let mut located = candidate.located;
                located.notes.push(first.passed_over().into());
                return Ok(Search::Taken(located));
            }
            Some(first) => held = Some(first),
        }
    }
    Ok(Search::Held(held))
}

/// `image` with the lattice of `grid` and a square round it painted the picture's median
/// colour, so that its lines neither show nor set the line response's floor.
pub fn painted_over(image: &Mat, grid: &BoardGeometry) -> opencv::Result<Mat> {
    let last = (grid.size - 1) as f64;
    let outline: Vector<Point> = [
        [-1.0, -1.0],
        [last + 1.0, -1.0],
        [last + 1.0, last + 1.0],
        [-1.0, last + 1.0],
    ]
    .iter()
    .map(|&[c, r]| {
        let [x, y] = grid.to_image(c, r);
        Point::new(x.round() as i32, y.round() as i32)
    })
    .collect();
    let mut painted = image.try_clone()?;
    let median = median_colour(image)?;
    imgproc::fill_convex_poly_def(&mut painted, &outline, median)?;
    Ok(painted)
}

/// How far [`contrast_raised`] may stretch a tile's histogram: enough for a dim board's
/// squares, little enough that the table's grain stays grain.
const RAISED_CLIP_LIMIT: f64 = 3.0;
/// Tiles each way over which [`contrast_raised`] evens the contrast: a board spans a few.
const RAISED_TILES: i32 = 8;

/// `image` (BGR) with the contrast of its lightness raised tile by tile (CLAHE on Lab's L),
/// its colours kept.
fn contrast_raised(image: &Mat) -> opencv::Result<Mat> {
    let mut clahe = imgproc::create_clahe(
        RAISED_CLIP_LIMIT,
        opencv::core::Size::new(RAISED_TILES, RAISED_TILES),
    )?;
    if image.channels() == 1 {
        let mut raised = Mat::default();
        clahe.apply(image, &mut raised)?;
        return Ok(raised);
    }
    let mut lab = Mat::default();
    imgproc::cvt_color_def(image, &mut lab, imgproc::COLOR_BGR2Lab)?;
    let mut channels = Vector::<Mat>::new();
    opencv::core::split(&lab, &mut channels)?;
    let mut lightness = Mat::default();
    clahe.apply(&channels.get(0)?, &mut lightness)?;
    channels.set(0, lightness)?;
    let mut merged = Mat::default();
    opencv::core::merge(&channels, &mut merged)?;
    let mut raised = Mat::default();
    imgproc::cvt_color_def(&merged, &mut raised, imgproc::COLOR_Lab2BGR)?;
    Ok(raised)
}

/// The median of each channel of a picture.
fn median_colour(image: &Mat) -> opencv::Result<Scalar> {
    let mut channels = Vector::<Mat>::new();
    opencv::core::split(image, &mut channels)?;
    let mut median = Scalar::all(0.0);
    for (index, channel) in channels.iter().take(4).enumerate() {
        // A channel split off is a new, continuous matrix.
        median[index] = f64::from(locate::percentile(channel.data_bytes()?, 0.5));
    }
    Ok(median)
}

/// A board [`locate`] found, with what decides between two found by different kinds.
struct Candidate {
    located: Located,
    /// Every outer corner inside the picture ([`within_picture`]).
    whole: bool,
    checkered: bool,
    /// The lattice's area in the picture, in square pixels.
    area: f64,
}

impl Candidate {
    /// Whether this board, found by a later kind, is the one played on rather than
    /// `first`. A lattice running out of the picture is seldom the board played on (Mak-hos
    /// seed 300273: 9 lines of a Go board at the picture's edge, three squares of it
    /// outside, found by its drawn lines before the checkered board in the middle), unless
    /// all that shows besides is much smaller (a few squares of a larger board). A plain
    /// grid's 9 lines may be a window on a larger lined board (the same Go board after the
    /// bump, wholly in view): a checkered board clearly larger is the one played on.
    fn beats(&self, first: &Candidate) -> bool {
        if !self.whole {
            return false;
        }
        if !first.whole {
            return self.area >= CUT_OFF_AREA * first.area;
        }
        self.checkered && !first.checkered && self.area >= LARGER_AREA * first.area
    }

    /// The note saying why `self` lost.
    fn passed_over(&self) -> &'static str {
        if self.whole {
            "a smaller grid of drawn lines was passed over for this checkered board"
        } else {
            "a lattice running out of the picture was passed over for this whole board"
        }
    }
}

/// How large a whole board must be, against a lattice running out of the picture, to be
/// taken instead: a small lattice inside (a few squares of the board that runs out of
/// view) is no better.
const CUT_OFF_AREA: f64 = 0.5;

/// How much larger a checkered board must be than a plain grid found first to be taken
/// instead: a checkered board with a drawn border shows the same lattice either way.
const LARGER_AREA: f64 = 1.25;

/// How far, in squares, a lattice's outer corners may lie beyond the picture's edge and
/// the lattice still count as whole: a fit's corners wander a little, and a board filling
/// the frame is read the same with its corners on the edge.
const OUT_OF_PICTURE: f64 = 0.5;

/// Whether every outer corner of `geometry` lies inside `image`, within
/// [`OUT_OF_PICTURE`] of a square.
fn within_picture(geometry: &BoardGeometry, image: &Mat) -> bool {
    let slack = OUT_OF_PICTURE * smallest_square(geometry);
    let (width, height) = (f64::from(image.cols()), f64::from(image.rows()));
    geometry
        .corners()
        .iter()
        .all(|&[x, y]| x >= -slack && y >= -slack && x <= width + slack && y <= height + slack)
}

/// How [`locate`] looks for the lattice.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attempt {
    /// The segments of the lines or edges as they are.
    Lines,
    /// Inside the board's outline, for lines too faint for segments.
    InsideOutline,
    /// The segments of drawn lines with the picture's brightness evened, for a dim board.
    Evened,
}

/// The fewest pixels a square's side may have: smaller ones cannot be read, and a lattice
/// that small is a degenerate fit (lines meeting near one point), not a board.
const MIN_SQUARE_PIXELS: f64 = 6.0;

/// The shortest side of the board's outer squares, in pixels.
fn smallest_square(geometry: &BoardGeometry) -> f64 {
    let corners = geometry.corners();
    (0..4)
        .map(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % 4]);
            (b[0] - a[0]).hypot(b[1] - a[1]) / SQUARES as f64
        })
        .fold(f64::MAX, f64::min)
}

/// The difference between the two colour classes of squares, in units of the spread
/// within a class, above which a board is taken as checkered. Plain boards measure below
/// 1 (grain, light falling off); checkered ones 4 and more.
const CHECKERED_STRENGTH: f64 = 2.5;

/// The lattice moved by whole squares so that all 64 of its squares alternate, when it
/// is not so already. The frame round a checkered board is often the colour of its light
/// squares and its edge against the outer squares is as sharp as theirs, so the run of 9
/// edges found can take in the frame and leave out the last row or column of squares
/// (Makruk seed 310100: the first frame's lattice lay a column to the left, every piece
/// read a square off and the start position not recognised). On the frame only half the
/// squares of that row or column can match their class.
fn onto_the_squares(
    image: &Mat,
    geometry: &BoardGeometry,
) -> opencv::Result<Option<BoardGeometry>> {
    let lab = lab_of(image)?;
    let mut best = (alternating_squares(&lab, geometry), geometry.clone());
    let found = best.0;
    // A square each way at a time: a lattice off by two would have been two squares short
    // of the edges found.
    for _ in 0..2 {
        let centre = best.1.clone();
        let mut improved = false;
        for (dc, dr) in SQUARE_STEPS {
            let Some(moved) = shifted_by_squares(&centre, dc, dr) else {
                continue;
            };
            let fitting = alternating_squares(&lab, &moved);
            if fitting >= best.0 + MOVE_MARGIN {
                best = (fitting, moved);
                improved = true;
            }
        }
        if !improved {
            break;
        }
    }
    Ok((best.0 > found).then_some(best.1))
}

/// A square's step along each of the lattice's four directions, (columns, rows).
pub const SQUARE_STEPS: [(f64, f64); 4] = [(-1.0, 0.0), (1.0, 0.0), (0.0, -1.0), (0.0, 1.0)];

/// The lattice of `geometry` moved by `columns` and `rows` squares along its own lines
/// (a lattice of 9 lines: the squares' corners).
fn shifted_by_squares(geometry: &BoardGeometry, columns: f64, rows: f64) -> Option<BoardGeometry> {
    let last = SQUARES as f64;
    let corners = [
        geometry.to_image(columns, rows),
        geometry.to_image(last + columns, rows),
        geometry.to_image(last + columns, last + rows),
        geometry.to_image(columns, last + rows),
    ];
    BoardGeometry::from_corners(LINES, corners)
}

/// `board` moved by `columns` and `rows` squares along its lines, when the moved lattice
/// lies in the picture; a checkered one fitted to its crossings again, since a lattice
/// that took in the frame spaced its lines by it and is a part of a square off at the
/// edge it moves to (Makruk seed 310457: a third of a square).
pub fn moved_by_squares(
    image: &Mat,
    board: &EightBoard,
    columns: f64,
    rows: f64,
) -> opencv::Result<Option<EightBoard>> {
    let Some(mut geometry) = shifted_by_squares(&board.geometry, columns, rows) else {
        return Ok(None);
    };
    if !within_picture(&geometry, image) {
        return Ok(None);
    }
    if board.surface == Surface::Checkered
        && let Some(fitted) = crossings::fitted_to_crossings(image, &geometry)?
    {
        geometry = fitted;
    }
    EightBoard::with_geometry(image, geometry).map(Some)
}

/// How many more squares must alternate in a moved lattice before it replaces the one
/// found: a row or column on the frame costs about half its 8, a piece over a corner one.
const MOVE_MARGIN: usize = 3;

/// The image in 8-bit Lab.
fn lab_of(image: &Mat) -> opencv::Result<Mat> {
    let mut lab = Mat::default();
    if image.channels() == 1 {
        let mut bgr = Mat::default();
        imgproc::cvt_color_def(image, &mut bgr, imgproc::COLOR_GRAY2BGR)?;
        imgproc::cvt_color_def(&bgr, &mut lab, imgproc::COLOR_BGR2Lab)?;
    } else {
        imgproc::cvt_color_def(image, &mut lab, imgproc::COLOR_BGR2Lab)?;
    }
    Ok(lab)
}

/// Each square's tone (the median of its four corners, where pieces rarely reach) with its
/// parity, `(row + col) % 2`; squares with a corner or more out of the picture left out.
fn square_tones(lab: &Mat, geometry: &BoardGeometry) -> Vec<(usize, [f64; 3])> {
    let (width, height) = (lab.cols(), lab.rows());
    let at = |[x, y]: [f64; 2]| -> Option<[f64; 3]> {
        let (xi, yi) = (x.round() as i32, y.round() as i32);
        (xi >= 0 && yi >= 0 && xi < width && yi < height)
            .then(|| {
                lab.at_2d::<opencv::core::Vec3b>(yi, xi).ok().map(|v| {
                    [
                        f64::from(v[0]),
                        CHROMA_WEIGHT * f64::from(v[1]),
                        CHROMA_WEIGHT * f64::from(v[2]),
                    ]
                })
            })
            .flatten()
    };
    let mut tones = Vec::with_capacity(SQUARES * SQUARES);
    for row in 0..SQUARES {
        for col in 0..SQUARES {
            let mut corners: Vec<[f64; 3]> = [(0.2, 0.2), (0.8, 0.2), (0.2, 0.8), (0.8, 0.8)]
                .iter()
                .filter_map(|&(dc, dr)| at(geometry.to_image(col as f64 + dc, row as f64 + dr)))
                .collect();
            if corners.len() < 3 {
                continue;
            }
            tones.push(((row + col) % 2, component_median(&mut corners)));
        }
    }
    tones
}

/// How many squares of the lattice are nearer their own parity's median tone than the
/// other's.
fn alternating_squares(lab: &Mat, geometry: &BoardGeometry) -> usize {
    let tones = square_tones(lab, geometry);
    let centre = |parity: usize| {
        let mut class: Vec<[f64; 3]> = tones
            .iter()
            .filter(|(p, _)| *p == parity)
            .map(|(_, tone)| *tone)
            .collect();
        (!class.is_empty()).then(|| component_median(&mut class))
    };
    let (Some(even), Some(odd)) = (centre(0), centre(1)) else {
        return 0;
    };
    tones
        .iter()
        .filter(|(parity, tone)| {
            let (own, other) = if *parity == 0 {
                (even, odd)
            } else {
                (odd, even)
            };
            distance(*tone, own) < distance(*tone, other)
        })
        .count()
}

/// How clearly the squares alternate.
#[derive(Clone, Copy, Debug)]
struct CheckerContrast {
    strength: f64,
    first_square_dark: bool,
}

/// The brightness of each square's four corners (pieces stand in the middle and rarely
/// reach them), and how far the two parities of squares differ in it.
fn checker_contrast(
    image: &Mat,
    geometry: &BoardGeometry,
) -> opencv::Result<Option<CheckerContrast>> {
    let lab = lab_of(image)?;
    let mut classes: [Vec<[f64; 3]>; 2] = [Vec::new(), Vec::new()];
    for (parity, tone) in square_tones(&lab, geometry) {
        classes[parity].push(tone);
    }
    if classes.iter().any(|c| c.len() < 16) {
        return Ok(None);
    }
    let centres = [
        component_median(&mut classes[0].clone()),
        component_median(&mut classes[1].clone()),
    ];
    let spread = |values: &[[f64; 3]], centre: [f64; 3]| {
        let mut deviations: Vec<f64> = values.iter().map(|&v| distance(v, centre)).collect();
        deviations.sort_by(f64::total_cmp);
        deviations[deviations.len() / 2]
    };
    let within = spread(&classes[0], centres[0])
        .max(spread(&classes[1], centres[1]))
        .max(2.0);
    Ok(Some(CheckerContrast {
        strength: distance(centres[0], centres[1]) / within,
        first_square_dark: centres[0][0] < centres[1][0],
    }))
}

/// How much a difference of hue counts against the same difference of lightness, in
/// OpenCV's 8-bit Lab (lightness spans 0–255, the colour axes about half that on real
/// surfaces): two square colours may share their lightness and differ only in hue.
const CHROMA_WEIGHT: f64 = 2.0;

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// The median of each component on its own.
fn component_median(values: &mut [[f64; 3]]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (channel, slot) in out.iter_mut().enumerate() {
        values.sort_by(|a, b| a[channel].total_cmp(&b[channel]));
        *slot = values[values.len() / 2][channel];
    }
    out
}

/// Which of the two 8×8 games is on the board: it decides the start position and where a
/// piece's body stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EightGame {
    Makhos,
    Makruk,
}

impl std::str::FromStr for EightGame {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "makhos" => Ok(EightGame::Makhos),
            "makruk" => Ok(EightGame::Makruk),
            other => Err(format!(
                "unknown game {other:?}: expected go, makhos or makruk"
            )),
        }
    }
}

impl EightGame {
    /// The start positions in the game's own orientation (row 0 the far edge from White,
    /// who sits at the bottom): Mak-hos with 8 or 12 men a side, Makruk's one.
    pub fn starts(self) -> Vec<Occupancy> {
        match self {
            EightGame::Makhos => [makhos::Men::Eight, makhos::Men::Twelve]
                .into_iter()
                .map(|men| makhos::Position::start(men, Color::White).occupancy())
                .collect(),
            EightGame::Makruk => vec![makruk::Position::start().occupancy()],
        }
    }
}

/// What told the board's orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrientationSource {
    /// The pieces stand as at the start of the game: each side's colour at its edge.
    StartPosition,
    /// The board's colouring leaves two turns (the single corner on each player's left,
    /// HOS-SCHOOL 3.1) and the pieces do not say which.
    ColouringOnly,
    /// Nothing: a plain grid has no colouring, and the pieces are not at the start.
    Unknown,
}

/// How the image-order board turns into the game's own orientation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Orientation {
    /// Clockwise quarter turns taking the image-order rows to the game's rows (White at
    /// the bottom), when known.
    pub quarters: Option<usize>,
    /// The turns the board's colouring allows (all four on a plain grid).
    pub candidates: Vec<usize>,
    pub source: OrientationSource,
    /// How many squares of the best start position disagreed with the reading.
    pub start_mismatches: Option<usize>,
}

/// Squares of 64 that may disagree with the start position and still be taken for it: a
/// piece misread, or the first move already made.
const START_TOLERANCE: usize = 4;

/// The orientation of `board` from what was read on it (`seen`, image order) and, on a
/// checkered Mak-hos board, from its colouring: the single corner, a dark square, is on
/// each player's left (HOS-SCHOOL 3.1). A Makruk board has no such rule (on a chess board
/// it is the light square on the right, which players do not always keep), nor has a plain
/// grid.
pub fn orientation(board: &EightBoard, game: EightGame, seen: &Occupancy) -> Orientation {
    let candidates: Vec<usize> = match (game, board.first_square_dark) {
        (EightGame::Makhos, Some(first_dark)) => (0..4)
            .filter(|&quarters| {
                let mut colouring = Occupancy::empty(SQUARES, SQUARES);
                for row in 0..SQUARES {
                    for col in 0..SQUARES {
                        let dark = ((row + col) % 2 == 0) == first_dark;
                        colouring.set(row, col, dark.then_some(Color::Black));
                    }
                }
                colouring.turned(quarters).get(SQUARES - 1, 0).is_some()
            })
            .collect(),
        _ => (0..4).collect(),
    };
    let mut fits: Vec<(usize, usize)> = (0..4)
        .map(|quarters| (start_mismatches(game, seen, quarters), quarters))
        .collect();
    fits.sort();
    let (best, quarters) = fits[0];
    let clear = best <= START_TOLERANCE && fits[1].0 > best + START_TOLERANCE;
    if clear {
        return Orientation {
            quarters: Some(quarters),
            candidates,
            source: OrientationSource::StartPosition,
            start_mismatches: Some(best),
        };
    }
    let source = if candidates.len() < 4 {
        OrientationSource::ColouringOnly
    } else {
        OrientationSource::Unknown
    };
    Orientation {
        quarters: None,
        candidates,
        source,
        start_mismatches: None,
    }
}

/// How many squares of `seen` (image order), turned by `quarters`, differ from the nearest
/// start position of `game`.
pub fn start_mismatches(game: EightGame, seen: &Occupancy, quarters: usize) -> usize {
    mismatches(&game.starts(), seen, quarters)
}

/// How many squares of `seen` (image order), turned by `quarters`, differ from the nearest
/// of `positions` (each in the game's rows).
pub fn mismatches(positions: &[Occupancy], seen: &Occupancy, quarters: usize) -> usize {
    let turned = seen.turned(quarters);
    positions
        .iter()
        .map(|position| SQUARES * SQUARES - position.agreement(&turned))
        .min()
        .unwrap_or(SQUARES * SQUARES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Scalar};

    /// A top-down picture of an 8×8 board: squares of `square` pixels from (`x0`, `y0`).
    fn drawn_board(checkered: bool) -> Mat {
        let mut image =
            Mat::new_rows_cols_with_default(700, 900, CV_8UC3, Scalar::new(60.0, 50.0, 40.0, 0.0))
                .unwrap();
        let (x0, y0, square) = (170, 90, 64);
        let light = Scalar::new(150.0, 190.0, 220.0, 0.0);
        let dark = Scalar::new(40.0, 70.0, 110.0, 0.0);
        for row in 0..8 {
            for col in 0..8 {
                let colour = if checkered && (row + col) % 2 == 1 {
                    dark
                } else {
                    light
                };
                imgproc::rectangle_points(
                    &mut image,
                    Point::new(x0 + col * square, y0 + row * square),
                    Point::new(x0 + (col + 1) * square, y0 + (row + 1) * square),
                    colour,
                    -1,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        if !checkered {
            for i in 0..=8 {
                let k = i * square;
                let ink = Scalar::new(20.0, 20.0, 20.0, 0.0);
                imgproc::line(
                    &mut image,
                    Point::new(x0 + k, y0),
                    Point::new(x0 + k, y0 + 8 * square),
                    ink,
                    2,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
                imgproc::line(
                    &mut image,
                    Point::new(x0, y0 + k),
                    Point::new(x0 + 8 * square, y0 + k),
                    ink,
                    2,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        image
    }

    /// Draws the 9 lines each way of an 8×8 grid of `square` pixels from `origin`.
    fn draw_lines(image: &mut Mat, (x0, y0): (i32, i32), square: i32, ink: Scalar) {
        for i in 0..=8 {
            let k = i * square;
            for (from, to) in [
                ((x0 + k, y0), (x0 + k, y0 + 8 * square)),
                ((x0, y0 + k), (x0 + 8 * square, y0 + k)),
            ] {
                imgproc::line(
                    image,
                    Point::new(from.0, from.1),
                    Point::new(to.0, to.1),
                    ink,
                    2,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
    }

    fn assert_corners(board: &EightBoard) {
        let expected = [[170.0, 90.0], [682.0, 90.0], [682.0, 602.0], [170.0, 602.0]];
        for (found, want) in board.geometry.corners().iter().zip(expected) {
            assert!(
                (found[0] - want[0]).abs() < 4.0 && (found[1] - want[1]).abs() < 4.0,
                "{:?}",
                board.geometry.corners()
            );
        }
    }

    #[test]
    fn a_checkered_board_is_found_from_its_square_edges() {
        let located = locate(&drawn_board(true)).unwrap();
        let board = located.board.expect("board");
        assert_eq!(board.surface, Surface::Checkered);
        assert_eq!(board.first_square_dark, Some(false));
        assert_corners(&board);
    }

    #[test]
    fn a_lattice_a_column_onto_the_frame_is_moved_back_onto_the_squares() {
        // A frame the colour of the light squares, a square wide, round the board.
        let mut image = drawn_board(true);
        let light = Scalar::new(150.0, 190.0, 220.0, 0.0);
        for (from, to) in [
            ((106, 26), (746, 90)),
            ((106, 602), (746, 666)),
            ((106, 26), (170, 666)),
            ((682, 26), (746, 666)),
        ] {
            imgproc::rectangle_points(
                &mut image,
                Point::new(from.0, from.1),
                Point::new(to.0, to.1),
                light,
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        let off = BoardGeometry::from_corners(
            9,
            [[106.0, 90.0], [618.0, 90.0], [618.0, 602.0], [106.0, 602.0]],
        )
        .unwrap();
        let moved = onto_the_squares(&image, &off).unwrap().expect("moved");
        assert_corners(&EightBoard::with_geometry(&image, moved).unwrap());
        let right = BoardGeometry::from_corners(
            9,
            [[170.0, 90.0], [682.0, 90.0], [682.0, 602.0], [170.0, 602.0]],
        )
        .unwrap();
        assert!(onto_the_squares(&image, &right).unwrap().is_none());
    }

    #[test]
    fn a_checkered_board_beats_a_smaller_lined_grid_beside_it() {
        // A lined board beside the checkered one (a Go board on the next table): its 9
        // drawn lines are found first, but the board played on is the larger checkered one.
        let mut image = drawn_board(true);
        let (x0, y0, square) = (720, 40, 20);
        let ink = Scalar::new(20.0, 20.0, 20.0, 0.0);
        imgproc::rectangle_points(
            &mut image,
            Point::new(x0 - 10, y0 - 10),
            Point::new(x0 + 8 * square + 10, y0 + 8 * square + 10),
            Scalar::new(120.0, 170.0, 200.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        draw_lines(&mut image, (x0, y0), square, ink);
        let board = locate(&image).unwrap().board.expect("board");
        assert_eq!(board.surface, Surface::Checkered);
        assert_corners(&board);
    }

    #[test]
    fn a_lattice_running_out_of_the_picture_loses_to_a_whole_board() {
        let candidate = |corners: [[f64; 2]; 4], checkered: bool| {
            let geometry = BoardGeometry::from_corners(LINES, corners).unwrap();
            let image =
                Mat::new_rows_cols_with_default(720, 1280, CV_8UC3, Scalar::all(0.0)).unwrap();
            Candidate {
                whole: within_picture(&geometry, &image),
                checkered,
                area: locate::quad_area(&geometry.corners()),
                located: Located::default(),
            }
        };
        // Mak-hos 300273's first find: three squares beyond the right edge.
        let cut = candidate(
            [
                [940.0, 105.0],
                [1130.0, 27.0],
                [1360.0, 152.0],
                [1168.0, 253.0],
            ],
            false,
        );
        let board = candidate(
            [
                [375.0, 315.0],
                [710.0, 185.0],
                [970.0, 405.0],
                [595.0, 595.0],
            ],
            true,
        );
        let few_squares = candidate(
            [
                [1000.0, 100.0],
                [1060.0, 80.0],
                [1080.0, 120.0],
                [1020.0, 140.0],
            ],
            true,
        );
        assert!(!cut.whole && board.whole);
        assert!(board.beats(&cut));
        assert!(!cut.beats(&board));
        assert!(!few_squares.beats(&cut));
        // A plain grid in view is kept against a checkered board no larger.
        let grid = candidate(
            [
                [375.0, 315.0],
                [710.0, 185.0],
                [970.0, 405.0],
                [595.0, 595.0],
            ],
            false,
        );
        assert!(!board.beats(&grid));
    }

    #[test]
    fn a_plain_grid_is_found_from_its_lines() {
        let located = locate(&drawn_board(false)).unwrap();
        let board = located.board.expect("board");
        assert_eq!(board.surface, Surface::Grid);
        assert_corners(&board);
    }

    #[test]
    fn a_plain_grid_with_lines_hidden_behind_rows_of_figures_is_found() {
        // Seen at a slant, a full row of tall figures hides the line behind it: here the
        // far edge and the line behind the sixth row, each showing only between figures.
        let mut image = drawn_board(false);
        let (x0, y0, square) = (170, 90, 64);
        for row in [0, 5] {
            for col in 0..8 {
                imgproc::rectangle_points(
                    &mut image,
                    Point::new(x0 + col * square + 3, y0 + row * square - 24),
                    Point::new(x0 + col * square + 61, y0 + row * square + 48),
                    Scalar::new(35.0, 45.0, 60.0, 0.0),
                    -1,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        let located = locate(&image).unwrap();
        let board = located.board.expect("board");
        assert_eq!(board.surface, Surface::Grid);
        assert_corners(&board);
    }

    #[test]
    fn the_start_position_turns_the_board_to_the_games_rows() {
        let board = EightBoard {
            geometry: BoardGeometry::from_corners(
                9,
                [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]],
            )
            .unwrap(),
            surface: Surface::Checkered,
            first_square_dark: Some(true),
        };
        let start = makhos::Position::start(makhos::Men::Eight, Color::Black).occupancy();
        for quarters in 0..4 {
            // The camera on another side sees the start turned back.
            let seen = start.turned((4 - quarters) % 4);
            let found = orientation(&board, EightGame::Makhos, &seen);
            assert_eq!(found.quarters, Some(quarters));
            assert_eq!(found.source, OrientationSource::StartPosition);
        }
        // A mid-game position: only the colouring's two turns are left.
        let mut middle = Occupancy::empty(8, 8);
        middle.set(3, 2, Some(Color::White));
        let found = orientation(&board, EightGame::Makhos, &middle);
        assert_eq!(found.quarters, None);
        assert_eq!(found.source, OrientationSource::ColouringOnly);
        // (0, 0) dark: the image's bottom-left (7, 0) is light, so the players sit left
        // and right: a quarter turn either way.
        assert_eq!(found.candidates, vec![1, 3]);
        let grid = EightBoard {
            surface: Surface::Grid,
            first_square_dark: None,
            ..board
        };
        let found = orientation(&grid, EightGame::Makruk, &middle);
        assert_eq!(
            (found.source, found.candidates.len()),
            (OrientationSource::Unknown, 4)
        );
    }

    #[test]
    fn a_dim_checkered_board_is_fitted_inside_its_edge() {
        // Squares 8 levels apart, too little for the square edges' segments; the board's
        // edge against the table, half a square beyond the squares, is clear.
        let mut image =
            Mat::new_rows_cols_with_default(700, 900, CV_8UC3, Scalar::new(25.0, 30.0, 35.0, 0.0))
                .unwrap();
        let (x0, y0, square) = (170, 90, 64);
        let fill = |image: &mut Mat, from: (i32, i32), to: (i32, i32), level: f64| {
            imgproc::rectangle_points(
                image,
                Point::new(from.0, from.1),
                Point::new(to.0, to.1),
                Scalar::all(level),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        };
        fill(
            &mut image,
            (x0 - square / 2, y0 - square / 2),
            (x0 + 8 * square + square / 2, y0 + 8 * square + square / 2),
            96.0,
        );
        for row in 0..8 {
            for col in 0..8 {
                let level = if (row + col) % 2 == 1 { 88.0 } else { 96.0 };
                let from = (x0 + col * square, y0 + row * square);
                fill(&mut image, from, (from.0 + square, from.1 + square), level);
            }
        }
        let located = locate(&image).unwrap();
        let board = located
            .board
            .clone()
            .unwrap_or_else(|| panic!("{:?}", located.notes));
        assert_eq!(board.surface, Surface::Checkered);
        assert_corners(&board);
        assert!(
            located.notes.iter().any(|n| n.contains("outline")),
            "{:?}",
            located.notes
        );
    }

    #[test]
    fn a_dim_plain_grid_is_found_from_its_lines_with_the_brightness_evened() {
        // A grid board in dim light (Makruk seed 310291): lines 5 grey levels under the
        // wood, under the line response's floor, and the board's rim against the table
        // hardly clearer.
        let mut image =
            Mat::new_rows_cols_with_default(700, 900, CV_8UC3, Scalar::all(14.0)).unwrap();
        let (x0, y0, square) = (170, 90, 64);
        imgproc::rectangle_points(
            &mut image,
            Point::new(x0 - 20, y0 - 20),
            Point::new(x0 + 8 * square + 20, y0 + 8 * square + 20),
            Scalar::all(30.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        draw_lines(&mut image, (x0, y0), square, Scalar::all(25.0));
        let plain = locate::locate_lines(&image, LINES, LineKind::Drawn).unwrap();
        assert!(plain.geometry.is_none());
        let located = locate(&image).unwrap();
        let board = located
            .board
            .clone()
            .unwrap_or_else(|| panic!("{:?}", located.notes));
        assert_eq!(board.surface, Surface::Grid);
        assert_corners(&board);
        assert!(
            located.notes.iter().any(|n| n.contains("evened")),
            "{:?}",
            located.notes
        );
    }

    #[test]
    fn a_lattice_shrunk_to_a_point_is_too_small_for_a_board() {
        let tiny = BoardGeometry::from_corners(
            9,
            [
                [980.0, 336.0],
                [980.2, 336.3],
                [985.2, 344.2],
                [985.9, 347.3],
            ],
        )
        .unwrap();
        assert!(smallest_square(&tiny) < MIN_SQUARE_PIXELS);
        let board = BoardGeometry::from_corners(
            9,
            [[170.0, 90.0], [682.0, 90.0], [682.0, 602.0], [170.0, 602.0]],
        )
        .unwrap();
        assert!((smallest_square(&board) - 64.0).abs() < 1e-9);
    }

    #[test]
    fn a_blank_picture_has_no_board() {
        let image = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(128.0)).unwrap();
        let located = locate(&image).unwrap();
        assert!(located.board.is_none());
        assert!(!located.notes.is_empty());
    }
}
