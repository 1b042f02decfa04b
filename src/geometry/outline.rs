//! Plain grids too faint for segments, found through the board's outline.
//!
//! A plain grid's thin lines can be a few grey levels darker than its wood (a dark board in
//! dim light, a 640×480 camera): under the line response's floor, no segment shows them,
//! and the locator's other kinds find nothing or something else. The board's outline
//! still shows, the board being another colour than the table. So the strongest straight
//! lines of colour steps and of thin dark structure are gathered; two of them each way make
//! a quadrilateral, weighed by how much of its sides the steps cover; and each
//! quadrilateral's view is straightened so that the grid's lines, however faint, add up
//! along their whole length in a profile, where a run of 9 equally spaced lines is sought.
//!
//! Any two lines of each of the board's two directions straighten the view, so a
//! quadrilateral that is not the outline (a row of figures, the bottom of the board's
//! side) still gives the lattice's lines; what it cannot always give is which run of them
//! is the board's. The caller settles that by what stands on the squares (the start
//! position, or the recorded one), which is why this returns candidates, best first,
//! rather than one board.

use super::locate::{self, angle_between, colour_steps, morphology, percentile, reduced_to};
use super::{BoardGeometry, Homography, apply, homography_from_4, invert};
use opencv::core::{self, Mat, Size, Vec2f, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Lines per side of the lattice sought.
const LINES: usize = 9;
/// The longest side the outline is looked for at: the outline is long and sharp at any
/// size, and the quadrilaterals' count grows with the lines found.
const OUTLINE_SIDE: i32 = 640;
/// Straight lines kept from each of the two responses.
const LINES_PER_RESPONSE: usize = 12;
/// Quadrilaterals whose view is straightened and searched for a lattice.
const QUADRILATERALS: usize = 15;
/// The side, in pixels, of the straightened quadrilateral, with a tenth of it either side.
const STRAIGHT: f64 = 300.0;
/// A drawn line's response counted in the profiles at most: a figure's edge is a line's
/// response many times over and would otherwise outweigh the lines it stands between.
const RESPONSE_CAP: u8 = 8;

/// Lattices of 9 lines each way (size-9 geometries, in `image`'s pixels, image order) that
/// a faint plain grid may have, most clearly lined first; at most `limit`, none two within
/// a third of a square of each other.
pub fn faint_grids(
    image: &Mat,
    limit: usize,
    outline: OutlineSteps,
) -> opencv::Result<Vec<BoardGeometry>> {
    let (small, factor) = reduced_to(image, OUTLINE_SIDE)?.unwrap_or((image.clone(), 1.0));
    let longest = f64::from(small.cols().max(small.rows()));
    let (steps, dark_lines) = outline_responses(&small, outline)?;
    let mut lines = strongest_lines(&steps, longest)?;
    for line in strongest_lines(&dark_lines, longest)? {
        if !lines.iter().any(|kept| same_line(kept, &line, longest)) {
            lines.push(line);
        }
    }
    let mut either = Mat::default();
    core::max(&steps, &dark_lines, &mut either)?;
    let mut covered = Mat::default();
    imgproc::dilate_def(&either, &mut covered, &Mat::ones(3, 3, core::CV_8U)?)?;
    let quads = quadrilaterals(&lines, &covered, longest);

    let response = drawn_line_response(image)?;
    let mut found: Vec<(f64, BoardGeometry)> = quads
        .iter()
        .take(QUADRILATERALS)
        .filter_map(|quad| {
            let in_image = quad.map(|[x, y]| [x / factor, y / factor]);
            lattice_inside(&response, &in_image)
        })
        .collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut kept: Vec<BoardGeometry> = Vec::new();
    for (_, geometry) in found {
        let side = locate::quad_area(&geometry.corners()).sqrt() / (LINES - 1) as f64;
        if kept
            .iter()
            .all(|other| other.corner_shift(&geometry) > side / 3.0)
        {
            kept.push(geometry);
        }
        if kept.len() == limit {
            break;
        }
    }
    Ok(kept)
}

/// Which steps draw the board's outline for [`faint_grids`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutlineSteps {
    /// The picture's own colour steps: a board another colour or brightness than its table.
    Colour,
    /// Brightness steps with the contrast evened, so that a step anywhere is as strong as
    /// a clear one: a board barely lighter than its table in dim light. Makruk 310687
    /// (1280×720, a dim grey grid board on a dark table, 2 grey levels apart): among the
    /// colour steps the figures' outlines ranked first and the board's front edge 166th,
    /// no quadrilateral was the board's and nothing was recorded in the whole game; with
    /// the contrast evened its front and both sides are the three strongest lines. Only
    /// for when the colour steps find nothing: evened, every figure's and shadow's edge is
    /// as strong as the outline, and a board the colour steps outline well could lose
    /// its place among the quadrilaterals.
    Evened,
}

/// The picture's steps (strong at the board's outline) and its thin dark structure
/// with the brightness and contrast evened (a faint line anywhere as strong as a clear one),
/// each thresholded to its strongest few percent.
fn outline_responses(small: &Mat, outline: OutlineSteps) -> opencv::Result<(Mat, Mat)> {
    let gray = super::gray(small)?;
    let longest = gray.cols().max(gray.rows());
    let evened = contrast_evened(&gray, (longest / 25) | 1)?;
    let steps = match outline {
        OutlineSteps::Colour if small.channels() == 3 => colour_steps(small)?,
        OutlineSteps::Colour => morphology(small, imgproc::MORPH_GRADIENT, 3)?,
        OutlineSteps::Evened => {
            // Smoothed first: evened, a flat table's noise of a grey level or two is as
            // strong as the board's step, and only the step runs on along a line.
            let mut smooth = Mat::default();
            imgproc::gaussian_blur_def(&gray, &mut smooth, Size::new(7, 7), 0.0)?;
            let evened = contrast_evened(&smooth, (longest / 25) | 1)?;
            morphology(&evened, imgproc::MORPH_GRADIENT, 3)?
        }
    };
    let steps = thresholded(&steps, 0.93, 12)?;
    let side = ((f64::from(longest) / 150.0).round() as i32).max(3) | 1;
    let dark = morphology(&evened, imgproc::MORPH_BLACKHAT, side)?;
    Ok((steps, thresholded(&dark, 0.90, 10)?))
}

/// `response` at 255 where it reaches its `fraction` percentile (and at least `floor`).
fn thresholded(response: &Mat, fraction: f64, floor: u8) -> opencv::Result<Mat> {
    // The percentile reads the bytes in one run, which only a continuous Mat has.
    let copy;
    let continuous = if response.is_continuous() {
        response
    } else {
        copy = response.try_clone()?;
        &copy
    };
    let level = percentile(continuous.data_bytes()?, fraction).max(floor);
    let mut binary = Mat::default();
    imgproc::threshold(
        response,
        &mut binary,
        f64::from(level) - 0.5,
        255.0,
        imgproc::THRESH_BINARY,
    )?;
    Ok(binary)
}

/// `gray` with its local mean at 128 and its local standard deviation at 32, over square
/// windows of `window` pixels; a floor on the deviation keeps flat areas flat.
fn contrast_evened(gray: &Mat, window: i32) -> opencv::Result<Mat> {
    let mut values = Mat::default();
    gray.convert_to(&mut values, core::CV_32F, 1.0, 0.0)?;
    let mut squares = Mat::default();
    core::multiply(&values, &values, &mut squares, 1.0, -1)?;
    let size = Size::new(window, window);
    let (mut mean, mut mean_square) = (Mat::default(), Mat::default());
    imgproc::blur_def(&values, &mut mean, size)?;
    imgproc::blur_def(&squares, &mut mean_square, size)?;
    let (values, mean, mean_square) = (
        values.data_typed::<f32>()?,
        mean.data_typed::<f32>()?,
        mean_square.data_typed::<f32>()?,
    );
    let evened: Vec<u8> = values
        .iter()
        .zip(mean)
        .zip(mean_square)
        .map(|((&v, &m), &s)| {
            let deviation = (s - m * m).max(0.0).sqrt().max(2.0);
            ((v - m) / deviation * 32.0 + 128.0).clamp(0.0, 255.0) as u8
        })
        .collect();
    Mat::new_rows_cols_with_data(gray.rows(), gray.cols(), &evened)?.try_clone()
}

/// A straight line as (ρ, θ): the points with x cos θ + y sin θ = ρ.
type Line = (f64, f64);

/// The straight lines with most of `binary` on them, strongest first, no two the same.
fn strongest_lines(binary: &Mat, longest: f64) -> opencv::Result<Vec<Line>> {
    let mut found = Vector::<Vec2f>::new();
    imgproc::hough_lines(
        binary,
        &mut found,
        1.0,
        std::f64::consts::PI / 180.0,
        (longest / 8.0) as i32,
        0.0,
        0.0,
        0.0,
        std::f64::consts::PI,
    )?;
    let mut lines: Vec<Line> = Vec::new();
    for line in found.iter() {
        let line = (f64::from(line[0]), f64::from(line[1]));
        if !lines.iter().any(|kept| same_line(kept, &line, longest)) {
            lines.push(line);
        }
        if lines.len() == LINES_PER_RESPONSE {
            break;
        }
    }
    Ok(lines)
}

/// Whether two lines lie within a few pixels and degrees of each other.
fn same_line(a: &Line, b: &Line, longest: f64) -> bool {
    let near = longest / 40.0;
    let close = 4f64.to_radians();
    ((a.0 - b.0).abs() < near && (a.1 - b.1).abs() < close)
        || ((a.0 + b.0).abs() < near && ((a.1 - b.1).abs() - std::f64::consts::PI).abs() < close)
}

fn intersection(a: &Line, b: &Line) -> Option<[f64; 2]> {
    let (ca, sa, cb, sb) = (a.1.cos(), a.1.sin(), b.1.cos(), b.1.sin());
    let det = ca * sb - sa * cb;
    (det.abs() > 1e-6).then(|| [(a.0 * sb - b.0 * sa) / det, (ca * b.0 - cb * a.0) / det])
}

/// Quadrilaterals of two near-parallel lines each way, every side mostly on `covered`,
/// the most covered length first.
fn quadrilaterals(lines: &[Line], covered: &Mat, longest: f64) -> Vec<[[f64; 2]; 4]> {
    let (width, height) = (f64::from(covered.cols()), f64::from(covered.rows()));
    let pairs: Vec<(usize, usize)> = (0..lines.len())
        .flat_map(|i| (i + 1..lines.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| angle_between(lines[i].1, lines[j].1) < 35f64.to_radians())
        .collect();
    let mut quads: Vec<(f64, [[f64; 2]; 4])> = Vec::new();
    for (a, &(i, j)) in pairs.iter().enumerate() {
        for &(k, l) in &pairs[a + 1..] {
            if [k, l].iter().any(|m| [i, j].contains(m))
                || angle_between(lines[i].1, lines[k].1) < 40f64.to_radians()
            {
                continue;
            }
            let corners = [
                intersection(&lines[i], &lines[k]),
                intersection(&lines[k], &lines[j]),
                intersection(&lines[j], &lines[l]),
                intersection(&lines[l], &lines[i]),
            ];
            let [Some(c0), Some(c1), Some(c2), Some(c3)] = corners else {
                continue;
            };
            let quad = [c0, c1, c2, c3];
            let in_view = quad.iter().all(|&[x, y]| {
                (-0.1 * width..=1.1 * width).contains(&x)
                    && (-0.1 * height..=1.1 * height).contains(&y)
            });
            if !in_view
                || !super::is_convex(&quad)
                || locate::quad_area(&quad) < (longest / 6.0).powi(2)
            {
                continue;
            }
            let sides: Vec<f64> = (0..4)
                .map(|m| distance(quad[m], quad[(m + 1) % 4]))
                .collect();
            let shortest = sides.iter().copied().fold(f64::MAX, f64::min);
            let longest_side = sides.iter().copied().fold(0.0, f64::max);
            if shortest < longest_side / 4.0 {
                continue;
            }
            let cover: Vec<f64> = (0..4)
                .map(|m| covered_share(covered, quad[m], quad[(m + 1) % 4]))
                .collect();
            if cover.iter().any(|&c| c < 0.5) {
                continue;
            }
            let weight = (0..4).map(|m| cover[m] * sides[m]).sum();
            quads.push((weight, quad));
        }
    }
    quads.sort_by(|a, b| b.0.total_cmp(&a.0));
    quads.into_iter().map(|(_, quad)| quad).collect()
}

fn distance(a: [f64; 2], b: [f64; 2]) -> f64 {
    (b[0] - a[0]).hypot(b[1] - a[1])
}

/// The share of the segment from `a` to `b` (its ends left out) that lies on `covered`.
fn covered_share(covered: &Mat, a: [f64; 2], b: [f64; 2]) -> f64 {
    let samples = distance(a, b).ceil().max(2.0) as usize;
    let on = (0..samples)
        .filter(|&s| {
            let t = 0.02 + 0.96 * s as f64 / (samples - 1) as f64;
            let (x, y) = (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t);
            let (xi, yi) = (x.round() as i32, y.round() as i32);
            xi >= 0
                && yi >= 0
                && xi < covered.cols()
                && yi < covered.rows()
                && covered.at_2d::<u8>(yi, xi).is_ok_and(|&v| v > 0)
        })
        .count();
    on as f64 / samples as f64
}

/// Thin dark structure of the whole picture, capped at [`RESPONSE_CAP`]: drawn lines.
///
/// The closing's window is kept narrow, a 150th of the picture: a line within half a
/// window of a figure's shadow takes the shadow's darkness in the closing and vanishes,
/// and in a start position the shadows of a full row fall along a line's whole length
/// (Makruk 310541, 1280×720: at a 100th, two of the nine rows' lines did not show, and a
/// lattice an eighth too tall was taken).
fn drawn_line_response(image: &Mat) -> opencv::Result<Mat> {
    let gray = super::gray(image)?;
    let longest = f64::from(gray.cols().max(gray.rows()));
    let side = ((longest / 150.0).round() as i32).max(3) | 1;
    let dark = morphology(&gray, imgproc::MORPH_BLACKHAT, side)?;
    let mut capped = Mat::default();
    core::min(
        &dark,
        &core::Scalar::all(f64::from(RESPONSE_CAP)),
        &mut capped,
    )?;
    Ok(capped)
}

/// The lattice of 9 lines each way that the view straightened by `quad` (in `response`'s
/// pixels) shows best, with how clearly: the two directions' clarities added.
fn lattice_inside(response: &Mat, quad: &[[f64; 2]; 4]) -> Option<(f64, BoardGeometry)> {
    let margin = 0.1 * STRAIGHT;
    let view = Straightened::new(response, quad, margin, STRAIGHT)?;
    let (to_image, side) = (view.to_image, view.side);
    let warped = view.picture.data_bytes().ok()?;
    // The middle of the quadrilateral across each line: its margins hold no lines.
    let (from, to) = ((2.0 * margin) as usize, (margin + STRAIGHT) as usize);
    let profile = |along_rows: bool| -> Vec<f64> {
        let mut values: Vec<u8> = Vec::with_capacity(to - from);
        (0..side)
            .map(|i| {
                values.clear();
                values.extend((from..to).map(|j| {
                    let (x, y) = if along_rows { (j, i) } else { (i, j) };
                    warped[y * side + x]
                }));
                line_mean(&mut values)
            })
            .collect()
    };
    let (rows, row_clarity) = lattice_in_profile(&profile(true), margin)?;
    let (columns, column_clarity) = lattice_in_profile(&profile(false), margin)?;
    let last = (LINES - 1) as f64;
    let corner = |c: f64, r: f64| {
        apply(
            &to_image,
            [columns.0 + c * columns.1 * last, rows.0 + r * rows.1 * last],
        )
    };
    let corners = [
        corner(0.0, 0.0),
        corner(1.0, 0.0),
        corner(1.0, 1.0),
        corner(0.0, 1.0),
    ];
    let geometry = BoardGeometry::from_corners(LINES, corners)?;
    Some((row_clarity + column_clarity, locate::image_order(&geometry)))
}

/// A square's side, in pixels, in the view [`refined`] straightens a lattice into.
const REFINE_CELL: f64 = 40.0;
/// How far each line is looked for either side of where the lattice puts it, in squares:
/// a lattice fitted to a quadrilateral that is not quite the board's has its far lines a
/// third of a square off (310569), while the board's own edge lies half a square or more
/// beyond its outer lines.
const REFINE_REACH: f64 = 0.4;
/// Pieces of each line whose place is looked for on their own, two squares long: a line
/// tilted against the lattice shows as a step from piece to piece.
const REFINE_PIECES: usize = 4;
/// How much higher than the middle of its window a piece of line's response must peak to
/// be taken (the response is capped at [`RESPONSE_CAP`]).
const REFINE_PEAK: f64 = 0.75;

/// `geometry` with each of its lines moved onto the drawn line nearest it, and the lattice
/// fitted again to all their crossings; `None` when too few lines show.
///
/// A lattice found inside a quadrilateral is spaced evenly in that quadrilateral's
/// straightened view, which is the board's own only when the quadrilateral is the board's
/// outline. When one side of it is something else (a board's side seen below its front
/// edge, a line of figures), the lattice leans: Makruk 310569 had a corner a third of a
/// square off, the lines of one side missed, the view judged covered every other look and
/// four moves were lost. Each line is looked for piece by piece in the lattice's own
/// straightened view, so a line that leans against the lattice is followed; twice, since
/// each pass brings the straightened view nearer the board's.
///
/// Only a lattice already chosen is refined: moved onto whatever lines lie near, a wrong
/// candidate can come to read the expected position better than the right one (Makruk
/// 310572: a lattice of the wrong rows, refined, beat the locator's and 48 of 50 moves
/// were lost).
pub fn on_drawn_lines(
    image: &Mat,
    geometry: &BoardGeometry,
) -> opencv::Result<Option<BoardGeometry>> {
    let response = drawn_line_response(image)?;
    Ok(refined(&response, geometry))
}

fn refined(response: &Mat, geometry: &BoardGeometry) -> Option<BoardGeometry> {
    let mut current = geometry.clone();
    for _ in 0..2 {
        current = refined_once(response, &current)?;
    }
    Some(current)
}

fn refined_once(response: &Mat, geometry: &BoardGeometry) -> Option<BoardGeometry> {
    let last = (LINES - 1) as f64;
    let margin = REFINE_CELL;
    let board_side = last * REFINE_CELL;
    let view = Straightened::new(response, &geometry.corners(), margin, board_side)?;
    let (to_image, side) = (view.to_image, view.side);
    let warped = view.picture.data_bytes().ok()?;
    let at = |x: usize, y: usize| warped[y.min(side - 1) * side + x.min(side - 1)];
    let reach = (REFINE_REACH * REFINE_CELL).round() as i64;
    let piece = board_side / REFINE_PIECES as f64;
    // Each line as (a, b) with across = a + b * along, in the straightened view.
    let fitted_line = |index: usize, rows: bool| -> Option<(f64, f64)> {
        let expected = margin + index as f64 * REFINE_CELL;
        let mut points: Vec<(f64, f64)> = Vec::new();
        let mut values: Vec<u8> = Vec::new();
        for p in 0..REFINE_PIECES {
            let from = (margin + p as f64 * piece).round() as usize;
            let to = (margin + (p + 1) as f64 * piece).round() as usize;
            let profile: Vec<(f64, f64)> = (-reach..=reach)
                .filter_map(|offset| {
                    let across = expected.round() as i64 + offset;
                    (across >= 0 && (across as usize) < side).then(|| {
                        values.clear();
                        values.extend((from..to).map(|along| {
                            if rows {
                                at(along, across as usize)
                            } else {
                                at(across as usize, along)
                            }
                        }));
                        (across as f64, line_mean(&mut values))
                    })
                })
                .collect();
            let Some(&(best_at, best)) = profile.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let mut sorted: Vec<f64> = profile.iter().map(|&(_, v)| v).collect();
            sorted.sort_by(f64::total_cmp);
            if best - sorted[sorted.len() / 2] >= REFINE_PEAK {
                points.push(((from + to) as f64 / 2.0, best_at));
            }
        }
        match points.len() {
            0 => None,
            1 => Some((points[0].1, 0.0)),
            n => {
                let n = n as f64;
                let mean_along = points.iter().map(|p| p.0).sum::<f64>() / n;
                let mean_across = points.iter().map(|p| p.1).sum::<f64>() / n;
                let spread = points
                    .iter()
                    .map(|p| (p.0 - mean_along).powi(2))
                    .sum::<f64>();
                let slope = points
                    .iter()
                    .map(|p| (p.0 - mean_along) * (p.1 - mean_across))
                    .sum::<f64>()
                    / spread;
                Some((mean_across - slope * mean_along, slope))
            }
        }
    };
    let rows: Vec<Option<(f64, f64)>> = (0..LINES).map(|i| fitted_line(i, true)).collect();
    let columns: Vec<Option<(f64, f64)>> = (0..LINES).map(|i| fitted_line(i, false)).collect();
    let mut grid_points = Vector::<core::Point2f>::new();
    let mut image_points = Vector::<core::Point2f>::new();
    for (r, row) in rows.iter().enumerate() {
        for (c, column) in columns.iter().enumerate() {
            let (Some((ra, rb)), Some((ca, cb))) = (row, column) else {
                continue;
            };
            // y = ra + rb x and x = ca + cb y.
            let denominator = 1.0 - rb * cb;
            if denominator.abs() < 1e-6 {
                continue;
            }
            let x = (ca + cb * ra) / denominator;
            let y = ra + rb * x;
            let [ix, iy] = apply(&to_image, [x, y]);
            grid_points.push(core::Point2f::new(c as f32, r as f32));
            image_points.push(core::Point2f::new(ix as f32, iy as f32));
        }
    }
    // Half the crossings at least, so the fit stands on lines all over the board.
    if grid_points.len() < LINES * LINES / 2 {
        return None;
    }
    let fitted =
        opencv::calib3d::find_homography(&grid_points, &image_points, &mut Mat::default(), 0, 3.0)
            .ok()?;
    let homography = super::homography_from_mat(&fitted)?;
    let refined = BoardGeometry {
        size: LINES,
        homography,
    };
    Some(locate::image_order(&refined))
}

/// `response` straightened so that a quadrilateral becomes the square from `margin` to
/// `margin + inner` each way, in a picture `side` = `inner` + 2 `margin` pixels wide.
struct Straightened {
    /// From the straightened picture's pixels to `response`'s.
    to_image: Homography,
    picture: Mat,
    side: usize,
}

impl Straightened {
    fn new(response: &Mat, quad: &[[f64; 2]; 4], margin: f64, inner: f64) -> Option<Self> {
        let straight = [
            [margin, margin],
            [margin + inner, margin],
            [margin + inner, margin + inner],
            [margin, margin + inner],
        ];
        let to_image = homography_from_4(&straight, quad)?;
        let to_straight = invert(&to_image)?;
        let side = (inner + 2.0 * margin).round() as i32;
        let picture = warped(response, &to_straight, side).ok()?;
        Some(Straightened {
            to_image,
            picture,
            side: side as usize,
        })
    }
}

/// A line's response from its `values` (sorted here): the mean of their middle. A drawn
/// line runs along its whole length, while the figures standing beside it are spots on
/// it, left out with the highest values, and the lowest are where a figure hides it.
fn line_mean(values: &mut [u8]) -> f64 {
    values.sort_unstable();
    let kept = &values[values.len() / 10..values.len() * 7 / 10];
    kept.iter().map(|&v| f64::from(v)).sum::<f64>() / kept.len() as f64
}

fn warped(response: &Mat, to_straight: &Homography, side: i32) -> opencv::Result<Mat> {
    let matrix = Mat::from_slice_2d(to_straight)?;
    let mut warped = Mat::default();
    imgproc::warp_perspective(
        response,
        &mut warped,
        &matrix,
        Size::new(side, side),
        imgproc::INTER_LINEAR,
        core::BORDER_CONSTANT,
        core::Scalar::all(0.0),
    )?;
    if warped.is_continuous() {
        Ok(warped)
    } else {
        warped.try_clone()
    }
}

/// The smallest share of the quadrilateral's width the squares may fill: a board's margin
/// is rarely more than a square each side of eight.
const MIN_FILL: f64 = 0.72;
/// Spacings tried from that share up to the whole width.
const FILL_STEPS: usize = 56;
/// How far the run may sit off the quadrilateral's middle, in squares: the outline may
/// take in the bottom of the board's side on the camera's side.
const OFF_MIDDLE: f64 = 0.35;
/// Inner lines of a run that may not stand out: in a start position two full rows of
/// figures stand either side of the middle on each side, and their shadows can hide the
/// line between a figures' row and an empty one on both (310541). A wrong run that this
/// lets in still has to read the expected position, which the caller checks.
const WEAK_INNER_LINES: usize = 2;

/// In a profile of the straightened view (the quadrilateral from `margin` to `margin` +
/// [`STRAIGHT`]), the run of 9 equally spaced lines that stands out most, as (its first
/// line, its spacing), with its clarity: the inner lines' mean response above the middles
/// of the squares beside them, over the profile's own spread. All but
/// [`WEAK_INNER_LINES`] of the inner lines must stand out.
fn lattice_in_profile(profile: &[f64], margin: f64) -> Option<((f64, f64), f64)> {
    let value = |at: f64| -> f64 {
        let i = at.floor().clamp(0.0, (profile.len() - 2) as f64) as usize;
        let f = (at - i as f64).clamp(0.0, 1.0);
        profile[i] * (1.0 - f) + profile[i + 1] * f
    };
    let spread = {
        let mut sorted = profile.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let mut deviations: Vec<f64> = sorted.iter().map(|v| (v - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        deviations[deviations.len() / 2] + 0.05
    };
    let squares = (LINES - 1) as f64;
    let mut best: Option<((f64, f64), f64)> = None;
    for step in 0..=FILL_STEPS {
        let fill = MIN_FILL + (1.0 - MIN_FILL) * step as f64 / FILL_STEPS as f64;
        let spacing = STRAIGHT * fill / squares;
        let centred = margin + (STRAIGHT - squares * spacing) / 2.0;
        let mut first = centred - OFF_MIDDLE * spacing;
        while first <= centred + OFF_MIDDLE * spacing {
            let contrasts: Vec<f64> = (0..LINES)
                .map(|k| {
                    let line = value(first + k as f64 * spacing);
                    let beside: Vec<f64> = [k as f64 - 0.5, k as f64 + 0.5]
                        .into_iter()
                        .filter(|&m| (0.0..=squares).contains(&m))
                        .map(|m| value(first + m * spacing))
                        .collect();
                    line - beside.iter().sum::<f64>() / beside.len() as f64
                })
                .collect();
            let weak = contrasts[1..LINES - 1]
                .iter()
                .filter(|&&c| c <= 0.0)
                .count();
            if weak <= WEAK_INNER_LINES {
                // The outer lines are left out of the clarity: a quadrilateral on the
                // board's outline has its own sides there, darker than any drawn line, and
                // the run on them would win whatever lies between (310541, 1280×720: the
                // rows' run on the outline, an eighth too tall).
                let inner = &contrasts[1..LINES - 1];
                let clarity = inner.iter().sum::<f64>() / inner.len() as f64 / spread;
                if best.is_none_or(|(_, b)| clarity > b) {
                    best = Some(((first, spacing), clarity));
                }
            }
            first += 1.0;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Color;
    use crate::games::Occupancy;
    use opencv::core::{CV_8UC3, Point, Scalar};

    /// The straightened board's side in pixels, its squares and its rim.
    const BOARD: i32 = 600;
    const SQUARE: i32 = 66;
    const RIM: i32 = (BOARD - 8 * SQUARE) / 2;
    /// Where the straightened board's corners land in the 1280×720 picture: seen from a
    /// player's side at a slant, the far edge shorter.
    const QUAD: [[f64; 2]; 4] = [
        [430.0, 130.0],
        [860.0, 140.0],
        [1010.0, 640.0],
        [280.0, 620.0],
    ];

    fn straight_to_image() -> Homography {
        let side = f64::from(BOARD);
        homography_from_4(&[[0.0, 0.0], [side, 0.0], [side, side], [0.0, side]], &QUAD).unwrap()
    }

    /// The lattice of the drawn lines in the picture, image order.
    fn true_lattice() -> BoardGeometry {
        let h = straight_to_image();
        let (near, far) = (f64::from(RIM), f64::from(RIM + 8 * SQUARE));
        let corners = [[near, near], [far, near], [far, far], [near, far]].map(|p| apply(&h, p));
        locate::image_order(&BoardGeometry::from_corners(LINES, corners).unwrap())
    }

    /// A wooden board with lines `faintness` grey levels under the wood, grained, on a
    /// darker table, the pieces of `position` (straightened rows) standing as dark and
    /// light blocks; seen through [`QUAD`].
    fn faint_board(faintness: f64, position: Option<&Occupancy>) -> Mat {
        board_in_light(&DAYLIGHT, faintness, position)
    }

    /// The colours of a board's scene, BGR.
    struct Light {
        wood: [f64; 3],
        table: [f64; 3],
        white: [f64; 3],
        black: [f64; 3],
    }

    /// Tan wood on a darker table, ivory and black pieces.
    const DAYLIGHT: Light = Light {
        wood: [95.0, 140.0, 175.0],
        table: [45.0, 60.0, 75.0],
        white: [215.0, 225.0, 230.0],
        black: [30.0, 30.0, 35.0],
    };

    /// A dim grey board 3 grey levels over a dark table, its pieces shaded (310687).
    const DIM: Light = Light {
        wood: [40.0, 41.0, 42.0],
        table: [37.0, 38.0, 39.0],
        white: [40.0, 48.0, 80.0],
        black: [14.0, 14.0, 16.0],
    };

    /// [`faint_board`] in `light`.
    fn board_in_light(light: &Light, faintness: f64, position: Option<&Occupancy>) -> Mat {
        let wood = light.wood;
        let mut board = Mat::new_rows_cols_with_default(
            BOARD,
            BOARD,
            CV_8UC3,
            Scalar::new(wood[0], wood[1], wood[2], 0.0),
        )
        .unwrap();
        // Grain: soft stripes of uneven spacing across the whole board, each a third as
        // dark as a line is.
        for y in (0..BOARD).filter(|y| (y * 37 % 23) < 4) {
            let shade = -faintness / 3.0;
            imgproc::line(
                &mut board,
                Point::new(0, y),
                Point::new(BOARD, y + 9),
                Scalar::new(wood[0] + shade, wood[1] + shade, wood[2] + shade, 0.0),
                3,
                imgproc::LINE_AA,
                0,
            )
            .unwrap();
        }
        let ink = Scalar::new(
            wood[0] - faintness,
            wood[1] - faintness,
            wood[2] - faintness,
            0.0,
        );
        for i in 0..=8 {
            let k = RIM + i * SQUARE;
            for (from, to) in [
                ((k, RIM), (k, RIM + 8 * SQUARE)),
                ((RIM, k), (RIM + 8 * SQUARE, k)),
            ] {
                imgproc::line(
                    &mut board,
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
        if let Some(position) = position {
            for row in 0..8 {
                for col in 0..8 {
                    let Some(colour) = position.get(row, col) else {
                        continue;
                    };
                    let body = match colour {
                        Color::White => {
                            Scalar::new(light.white[0], light.white[1], light.white[2], 0.0)
                        }
                        Color::Black => {
                            Scalar::new(light.black[0], light.black[1], light.black[2], 0.0)
                        }
                    };
                    let (x, y) = (RIM + col as i32 * SQUARE, RIM + row as i32 * SQUARE);
                    imgproc::circle(
                        &mut board,
                        Point::new(x + SQUARE / 2, y + SQUARE / 2),
                        SQUARE * 3 / 10,
                        body,
                        -1,
                        imgproc::LINE_AA,
                        0,
                    )
                    .unwrap();
                }
            }
        }
        let table = Scalar::new(light.table[0], light.table[1], light.table[2], 0.0);
        let mut image = Mat::new_rows_cols_with_default(720, 1280, CV_8UC3, table).unwrap();
        let matrix = Mat::from_slice_2d(&straight_to_image()).unwrap();
        imgproc::warp_perspective(
            &board,
            &mut image,
            &matrix,
            Size::new(1280, 720),
            imgproc::INTER_LINEAR,
            core::BORDER_TRANSPARENT,
            core::Scalar::all(0.0),
        )
        .unwrap();
        with_noise(&image)
    }

    /// `image` with a camera's noise, 3 grey levels.
    fn with_noise(image: &Mat) -> Mat {
        let mut noise =
            Mat::new_rows_cols_with_default(image.rows(), image.cols(), CV_8UC3, Scalar::all(0.0))
                .unwrap();
        core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(3.0)).unwrap();
        let mut noisy = Mat::default();
        core::add(image, &noise, &mut noisy, &core::no_array(), -1).unwrap();
        noisy
    }

    /// The side of one square of the true lattice in the picture, about.
    fn square_side() -> f64 {
        locate::quad_area(&true_lattice().corners()).sqrt() / 8.0
    }

    #[test]
    fn a_grid_a_few_grey_levels_under_its_wood_is_found_through_the_outline() {
        let image = faint_board(6.0, None);
        let truth = true_lattice();
        let found = faint_grids(&image, 6, OutlineSteps::Colour).unwrap();
        let nearest = found
            .iter()
            .map(|geometry| geometry.corner_shift(&truth))
            .fold(f64::MAX, f64::min);
        assert!(
            nearest < square_side() / 5.0,
            "nearest candidate {nearest:.1} px off (a square is {:.0}): {:?}",
            square_side(),
            found.iter().map(BoardGeometry::corners).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_leaning_lattice_is_moved_onto_the_drawn_lines() {
        let starts = crate::geometry::eight::EightGame::Makruk.starts();
        let image = faint_board(6.0, Some(&starts[0]));
        let truth = true_lattice();
        // One corner a third of a square off, as a quadrilateral with one wrong side
        // leaves it (310569).
        let mut corners = truth.corners();
        corners[3][1] += square_side() / 3.0;
        corners[2][1] -= square_side() / 6.0;
        let leaning = BoardGeometry::from_corners(LINES, corners).unwrap();
        assert!(leaning.corner_shift(&truth) > square_side() / 4.0);
        let response = drawn_line_response(&image).unwrap();
        let refined = refined(&response, &leaning).expect("the lines show");
        let shift = refined.corner_shift(&truth);
        assert!(
            shift < 2.0,
            "refined lattice {:?} is {shift:.1} px from the lines {:?}",
            refined.corners(),
            truth.corners()
        );
    }

    #[test]
    fn a_lattice_on_a_bare_table_is_not_refined() {
        let table = with_noise(
            &Mat::new_rows_cols_with_default(
                720,
                1280,
                CV_8UC3,
                Scalar::new(45.0, 60.0, 75.0, 0.0),
            )
            .unwrap(),
        );
        let response = drawn_line_response(&table).unwrap();
        assert!(refined(&response, &true_lattice()).is_none());
    }

    #[test]
    fn a_grid_with_its_pieces_standing_is_still_found() {
        let start = crate::geometry::eight::EightGame::Makruk.starts()[0].clone();
        let image = faint_board(6.0, Some(&start));
        let truth = true_lattice();
        let found = faint_grids(&image, 6, OutlineSteps::Colour).unwrap();
        assert!(
            found
                .iter()
                .any(|geometry| geometry.corner_shift(&truth) < square_side() / 5.0),
            "{:?}",
            found.iter().map(BoardGeometry::corners).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_faint_grid_nothing_else_finds_is_placed_where_it_reads_the_start() {
        use crate::detect_eight::{Placement, on_position};
        use crate::geometry::eight::EightGame;
        let starts = EightGame::Makruk.starts();
        let image = faint_board(6.0, Some(&starts[0]));
        let located = crate::geometry::eight::locate(&image).unwrap().board;
        assert!(located.is_none(), "the locator found it after all");
        let (board, placement) = on_position(&image, None, EightGame::Makruk, &starts)
            .unwrap()
            .expect("the faint grid");
        assert_eq!(placement, Placement::FaintGrid);
        assert!(board.geometry.corner_shift(&true_lattice()) < square_side() / 5.0);
        // With nothing on it that reads as the start, the same grid is not taken.
        let bare = faint_board(6.0, None);
        assert!(
            on_position(&bare, None, EightGame::Makruk, &starts)
                .unwrap()
                .is_none()
        );
    }

    /// A scatter of figures on no one row or diagonal (straightened rows), and the same
    /// squares with the colours the other way round.
    fn scattered() -> (Occupancy, Occupancy) {
        let squares = [
            (0, 1),
            (1, 5),
            (2, 2),
            (3, 6),
            (4, 0),
            (5, 3),
            (6, 7),
            (7, 2),
            (2, 7),
            (6, 1),
        ];
        let (mut drawn, mut swapped) = (Occupancy::empty(8, 8), Occupancy::empty(8, 8));
        for (n, (row, col)) in squares.into_iter().enumerate() {
            let colour = if n % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            drawn.set(row, col, Some(colour));
            swapped.set(row, col, Some(colour.opponent()));
        }
        (drawn, swapped)
    }

    #[test]
    fn a_dim_board_barely_lighter_than_its_table_is_outlined_with_the_contrast_evened() {
        let (drawn, _) = scattered();
        let image = board_in_light(&DIM, 1.5, Some(&drawn));
        let truth = true_lattice();
        let nearest = |found: &[BoardGeometry]| {
            found
                .iter()
                .map(|geometry| geometry.corner_shift(&truth))
                .fold(f64::MAX, f64::min)
        };
        let colour = faint_grids(&image, 6, OutlineSteps::Colour).unwrap();
        assert!(
            nearest(&colour) > square_side() / 5.0,
            "the colour steps outline it: the test shows nothing"
        );
        let evened = faint_grids(&image, 6, OutlineSteps::Evened).unwrap();
        assert!(
            nearest(&evened) < square_side() / 5.0,
            "nearest {:.1} px off: {:?}",
            nearest(&evened),
            evened
                .iter()
                .map(BoardGeometry::corners)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_dim_board_is_placed_where_its_squares_are_held_whatever_their_colours_read() {
        use crate::detect_eight::{Placement, on_position};
        use crate::geometry::eight::EightGame;
        let (drawn, swapped) = scattered();
        let image = board_in_light(&DIM, 1.5, Some(&drawn));
        let (board, placement) = on_position(
            &image,
            None,
            EightGame::Makruk,
            std::slice::from_ref(&swapped),
        )
        .unwrap()
        .expect("the dim grid");
        assert_eq!(placement, Placement::FaintGrid);
        let shift = board.geometry.corner_shift(&true_lattice());
        assert!(shift < square_side() / 5.0, "{shift:.1} px off");
        let bare = board_in_light(&DIM, 1.5, None);
        assert!(
            on_position(&bare, None, EightGame::Makruk, &[swapped])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_bare_table_places_no_board() {
        use crate::detect_eight::on_position;
        use crate::geometry::eight::EightGame;
        let table =
            Mat::new_rows_cols_with_default(720, 1280, CV_8UC3, Scalar::new(45.0, 60.0, 75.0, 0.0))
                .unwrap();
        let image = with_noise(&table);
        let starts = EightGame::Makruk.starts();
        assert!(
            on_position(&image, None, EightGame::Makruk, &starts)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn nine_evenly_spaced_lines_are_found_in_a_profile() {
        // A straightened view's profile: flat with small ripples, nine bumps 33 apart from 50.
        let side = (1.2 * STRAIGHT) as usize;
        let margin = 0.1 * STRAIGHT;
        let profile: Vec<f64> = (0..side)
            .map(|i| {
                let ripple = ((i as f64) * 0.7).sin() * 0.3;
                let on_line = (0..LINES).any(|k| (i as f64 - (50.0 + 33.0 * k as f64)).abs() < 1.5);
                ripple + if on_line { 3.0 } else { 0.0 }
            })
            .collect();
        let ((first, spacing), clarity) = lattice_in_profile(&profile, margin).expect("a run");
        assert!((first - 50.0).abs() < 2.0, "first line at {first}");
        assert!((spacing - 33.0).abs() < 0.5, "spacing {spacing}");
        assert!(clarity > 1.0);
        // A figure's edge, stronger than any line, beside the run does not move it.
        let mut with_edge = profile.clone();
        for value in &mut with_edge[40..44] {
            *value += 12.0;
        }
        let ((first, spacing), _) = lattice_in_profile(&with_edge, margin).expect("a run");
        assert!((first - 50.0).abs() < 2.0 && (spacing - 33.0).abs() < 0.5);
        // A flat profile has no line standing out.
        assert!(lattice_in_profile(&vec![1.0; side], margin).is_none());
    }

    #[test]
    fn the_outlines_own_sides_do_not_take_the_place_of_the_outer_lines() {
        // The quadrilateral is the board's outline: its sides, far darker than any drawn
        // line, at the profile's margins. The grid fills 0.85 of it, the shadows of two
        // rows of figures hide two of its inner lines, and the figures' dark bases make
        // broad bumps, some where a run on the outline's sides has its inner lines.
        let side = (1.2 * STRAIGHT) as usize;
        let margin = 0.1 * STRAIGHT;
        let spacing = STRAIGHT * 0.85 / 8.0;
        let first = margin + (STRAIGHT - 8.0 * spacing) / 2.0;
        let profile: Vec<f64> = (0..side)
            .map(|i| {
                let at = i as f64;
                let ripple = (at * 0.7).sin() * 0.2;
                let on_outline = [margin, margin + STRAIGHT]
                    .iter()
                    .any(|&edge| (at - edge).abs() < 2.0);
                let on_line = [0, 1, 2, 4, 5, 6, 8]
                    .iter()
                    .any(|&k| (at - (first + spacing * f64::from(k))).abs() < 1.5);
                let on_bases = [1, 2, 3, 5, 6, 7]
                    .iter()
                    .any(|&k| (at - (margin + STRAIGHT / 8.0 * f64::from(k))).abs() < 6.0);
                ripple
                    + if on_bases { 1.0 } else { 0.0 }
                    + if on_outline {
                        8.0
                    } else if on_line {
                        2.0
                    } else {
                        0.0
                    }
            })
            .collect();
        let ((found_first, found_spacing), _) =
            lattice_in_profile(&profile, margin).expect("a run");
        assert!(
            (found_first - first).abs() < 2.0 && (found_spacing - spacing).abs() < 0.5,
            "found {found_first} + {found_spacing}, drawn {first} + {spacing}"
        );
    }
}
