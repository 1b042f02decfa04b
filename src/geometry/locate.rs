//! Finding the board and its grid in a frame with no clicks.
//!
//! A Go board is two families of equally spaced straight lines. The locator works from that
//! fact alone, not from the board's outline or colour, so a board that fills the frame, a
//! board on a table of the same wood, or a board with its edge hidden by bowls is found the
//! same way:
//!
//! 1. **Line response.** A black-hat filter keeps thin dark structures (grid lines) and
//!    drops stones, shadows and the board's outline, which are wider than the kernel.
//! 2. **Segments and two directions.** Probabilistic Hough segments on that response,
//!    grouped by direction around the two strongest orientations.
//! 3. **Vanishing points.** Each family's lines meet in one point (at infinity when seen
//!    straight on); it is found by consensus over pairs of long segments and refined by
//!    least squares. The two points fix the horizon, and mapping the horizon to infinity
//!    makes both families parallel again: an affine view in which equally spaced lines
//!    are equally spaced.
//! 4. **Lattice.** In that view every segment is a position along one axis. The spacing is
//!    the strongest period of those positions (a periodogram), the offset its phase.
//! 5. **Which lines are the board.** Each lattice line is measured for how much of its
//!    length shows line response. The board is the run of `size` lines with the most
//!    coverage; without `--size` the longest well-covered run among 19, 13 and 9.
//! 6. **Refinement.** Every grid line is re-fitted to the response found along it, and the
//!    homography is fitted to all intersections by least squares.
//!
//! Each stage can fail on a frame with no board; the locator then says so rather than
//! return a guessed grid.

use super::{BoardGeometry, Homography, apply, invert};
use opencv::core::{self, Mat, Point, Size, Vec4i, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// What the locator found besides the grid: things a person should be told.
#[derive(Clone, Debug, Default)]
pub struct Located {
    pub geometry: Option<BoardGeometry>,
    /// The line segments the grid was fitted to, `[x1, y1, x2, y2]` in the image's pixels,
    /// for the debug pictures.
    pub segments: Vec<[f64; 4]>,
    /// Human-readable remarks (e.g. "two boards in view: the largest was read").
    pub notes: Vec<String>,
}

/// The board sizes tried when the caller does not give one, largest first: a 19×19 grid
/// also contains well-covered runs of 13 and 9 lines.
pub const GO_SIZES: [usize; 3] = [19, 13, 9];

/// The longest side the locator works at. Grid lines are still a few pixels wide there on
/// any board that fills a reasonable part of the frame, and the cost stays bounded.
pub const WORKING_SIDE: i32 = 1000;

/// The image reduced to [`WORKING_SIDE`] on its longest side, with the factor from the
/// image to it; `None` when it is no larger than that already.
pub fn reduced(image: &Mat) -> opencv::Result<Option<(Mat, f64)>> {
    reduced_to(image, WORKING_SIDE)
}

/// The image reduced to `side` pixels on its longest side, with the factor from the image
/// to it; `None` when it is no larger than that already.
pub fn reduced_to(image: &Mat, side: i32) -> opencv::Result<Option<(Mat, f64)>> {
    let longest = image.cols().max(image.rows());
    if longest <= side {
        return Ok(None);
    }
    let factor = f64::from(side) / f64::from(longest);
    let mut small = Mat::default();
    imgproc::resize(
        image,
        &mut small,
        Size::default(),
        factor,
        factor,
        imgproc::INTER_AREA,
    )?;
    Ok(Some((small, factor)))
}

/// What marks the board's lines in the picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// Thin dark lines drawn on the board (Go, a plain Makruk grid).
    Drawn,
    /// Edges between dark and light squares (a checkered board): no line is drawn, but
    /// every square edge is a step in brightness.
    SquareEdges,
}

/// Finds the board grid in a BGR image. `size` fixes the number of lines; `None` decides
/// it from the grid (19, 13 or 9).
pub fn locate(image: &Mat, size: Option<usize>) -> opencv::Result<Located> {
    locate_fitted(
        image,
        size,
        LineKind::Drawn,
        Fit::Lines,
        Pieces::OnPoints,
        Light::AsSeenThenEvened,
    )
}

/// As [`locate`], for a board of `n` lines whose pieces stand inside its squares and whose
/// lines are of the given kind.
pub fn locate_lines(image: &Mat, n: usize, kind: LineKind) -> opencv::Result<Located> {
    locate_fitted(
        image,
        Some(n),
        kind,
        Fit::Lines,
        Pieces::InSquares,
        Light::AsSeen,
    )
}

/// As [`locate_lines`] for drawn lines on a picture with its brightness evened first: a
/// dim board's lines darken its wood by as large a share as a bright board's, but by fewer
/// grey levels, under the floor of the line response (Makruk seed 310291, a small grid
/// board in dim light at 1280×720: its lines 4–5 levels under the wood, never found). An
/// 8×8 board tries it after its square edges, so a board those find is found as before,
/// and before its outline: 9 lines each way fitted are firmer than a lattice spread inside
/// the board's edge (Makruk seed 310270, a dim grid: inside its outline a row and a column
/// off).
pub fn locate_dim_lines(image: &Mat, n: usize) -> opencv::Result<Located> {
    locate_fitted(
        image,
        Some(n),
        LineKind::Drawn,
        Fit::Lines,
        Pieces::InSquares,
        Light::Evened,
    )
}

/// The last resort for a board of `n` lines whose lines are too faint for segments: the
/// grid fitted inside its outline (the board's edge, a drawn border), the longest lines in
/// the picture, from the line response along the whole of each line.
pub fn locate_inside_outline(image: &Mat, n: usize, kind: LineKind) -> opencv::Result<Located> {
    locate_fitted(
        image,
        Some(n),
        kind,
        Fit::InsideOutline,
        Pieces::InSquares,
        Light::AsSeen,
    )
}

/// How a grid is fitted to the segments.
#[derive(Clone, Copy)]
enum Fit {
    /// The lattice of the segments themselves.
    Lines,
    /// A lattice inside the longest segments, from the response along whole lines.
    InsideOutline,
}

/// Which pictures the line response is taken from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Light {
    /// The picture as it is, at both filter scales.
    AsSeen,
    /// As it is, then with its brightness evened when that finds nothing.
    AsSeenThenEvened,
    /// Only with its brightness evened.
    Evened,
}

fn locate_fitted(
    image: &Mat,
    size: Option<usize>,
    kind: LineKind,
    fit: Fit,
    pieces: Pieces,
    light: Light,
) -> opencv::Result<Located> {
    if let Some((small, factor)) = reduced(image)? {
        let mut located = locate_fitted(&small, size, kind, fit, pieces, light)?;
        located.geometry = located.geometry.map(|g| g.scaled(1.0 / factor));
        for segment in &mut located.segments {
            segment.iter_mut().for_each(|v| *v /= factor);
        }
        return Ok(located);
    }
    let mut gray = Mat::default();
    if image.channels() == 1 {
        gray = image.clone();
    } else {
        imgproc::cvt_color_def(image, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    }
    let mut located = Located::default();
    let mut reasons: Vec<String> = Vec::new();
    // A dim board's drawn lines darken its wood by as large a share as a bright board's,
    // but by fewer grey levels, under the floor of the line response (Go seed 100329, a
    // blurred 19×19 board in dim light beside a brighter one: no grid for a minute). The
    // evened pass takes the picture with its brightness evened first.
    let evened_gray = match light {
        Light::AsSeen => None,
        Light::AsSeenThenEvened | Light::Evened => Some(evened(&gray)?),
    };
    let as_seen = [
        (Scale::BOARD_FILLS_FRAME, &gray),
        (Scale::SMALL_BOARD, &gray),
    ];
    let passes = as_seen
        .into_iter()
        .filter(|_| light != Light::Evened)
        .chain(evened_gray.as_ref().map(|e| (Scale::BOARD_FILLS_FRAME, e)));
    for (scale, gray) in passes {
        let response = LineResponse::new(image, gray, scale, kind, pieces)?;
        let segments = response.segments(scale)?;
        let fitted = match (fit, size) {
            (Fit::Lines, _) => fit_grid(&response, &segments, size)
                .or_else(|reason| fit_apart(&response, &segments, size).ok_or(reason)),
            (Fit::InsideOutline, Some(n)) => fit_inside_outline(&response, &segments, n)
                .ok_or_else(|| format!("no {n}×{n} grid shows inside the board's outline")),
            (Fit::InsideOutline, None) => Err(NO_GRID.into()),
        };
        // A lattice no view of a square board makes is a misfit, whatever its score.
        let fitted = fitted.and_then(|geometry| {
            if geometry.seen_square(f64::from(image.cols()), f64::from(image.rows())) {
                Ok(geometry)
            } else {
                Err(NOT_SQUARE.into())
            }
        });
        match fitted {
            Ok(geometry) => {
                located.geometry = Some(largest_board(
                    &response,
                    &segments,
                    geometry,
                    size,
                    &mut located.notes,
                ));
                located.segments = segments;
                return Ok(located);
            }
            Err(reason) => {
                if located.segments.is_empty() {
                    located.segments = segments;
                }
                reasons.push(reason);
            }
        }
    }
    // The most specific reason: "the grid does not match" says more than "no grid".
    located.notes.push(
        reasons
            .iter()
            .find(|r| r.as_str() != NO_GRID)
            .or(reasons.first())
            .cloned()
            .unwrap_or_else(|| NO_GRID.into()),
    );
    Ok(located)
}

/// The scale of the filters, relative to the working image's longest side. A board that
/// fills the frame has grid spacings of 30–60 px at 1000 px; one seen from across the
/// room has 10–20 px, where the first filter is as wide as a stone and the first segment
/// length longer than the line runs between stones. The finer pass runs only when the
/// first finds nothing.
#[derive(Clone, Copy)]
struct Scale {
    /// The black-hat kernel is the longest side over this.
    kernel_divisor: f64,
    /// The shortest segment kept is the longest side over this.
    segment_divisor: f64,
}

impl Scale {
    const BOARD_FILLS_FRAME: Scale = Scale {
        kernel_divisor: 150.0,
        segment_divisor: 40.0,
    };
    const SMALL_BOARD: Scale = Scale {
        kernel_divisor: 300.0,
        segment_divisor: 80.0,
    };
}

/// Looks for a second board among the segments outside the one found, and keeps the
/// larger of the two, saying so: a tournament camera often sees the neighbouring table.
fn largest_board(
    response: &LineResponse,
    segments: &[[f64; 4]],
    found: BoardGeometry,
    size: Option<usize>,
    notes: &mut Vec<String>,
) -> BoardGeometry {
    // Half a cell beyond the outer lines still belongs to the board (its margin).
    let last = (found.size - 1) as f64;
    let outline = [
        [-0.7, -0.7],
        [last + 0.7, -0.7],
        [last + 0.7, last + 0.7],
        [-0.7, last + 0.7],
    ]
    .map(|[c, r]| found.to_image(c, r));
    let outside: Vec<[f64; 4]> = segments
        .iter()
        .filter(|s| !inside(&outline, [s[0], s[1]]) && !inside(&outline, [s[2], s[3]]))
        .copied()
        .collect();
    if outside.len() < segments.len() / 5 {
        return found;
    }
    let Ok(other) = fit_grid(response, &outside, size) else {
        return found;
    };
    notes.push("two boards in view: the largest was read".into());
    if quad_area(&other.corners()) > quad_area(&found.corners()) {
        other
    } else {
        found
    }
}

pub(crate) fn quad_area(corners: &[[f64; 2]; 4]) -> f64 {
    (0..4)
        .map(|i| {
            let [x0, y0] = corners[i];
            let [x1, y1] = corners[(i + 1) % 4];
            x0 * y1 - x1 * y0
        })
        .sum::<f64>()
        .abs()
        / 2.0
}

/// Whether `p` lies inside the convex quadrilateral `quad` (either winding).
fn inside(quad: &[[f64; 2]; 4], p: [f64; 2]) -> bool {
    let sides: Vec<f64> = (0..4)
        .map(|i| {
            let [x0, y0] = quad[i];
            let [x1, y1] = quad[(i + 1) % 4];
            (x1 - x0) * (p[1] - y0) - (y1 - y0) * (p[0] - x0)
        })
        .collect();
    sides.iter().all(|&s| s >= 0.0) || sides.iter().all(|&s| s <= 0.0)
}

/// The Go grid `near` re-fitted to the drawn lines of `gray` (no larger than
/// [`WORKING_SIDE`]), once for every line response the locator tries: each fit that some
/// camera could see a square board as. A grid within a third of a spacing of the lines
/// lands on them.
pub(super) fn refitted(gray: &Mat, near: &BoardGeometry) -> opencv::Result<Vec<BoardGeometry>> {
    let evened_gray = evened(gray)?;
    let (width, height) = (f64::from(gray.cols()), f64::from(gray.rows()));
    let mut grids = Vec::new();
    for (scale, gray) in [
        (Scale::BOARD_FILLS_FRAME, gray),
        (Scale::SMALL_BOARD, gray),
        (Scale::BOARD_FILLS_FRAME, &evened_gray),
    ] {
        let response = LineResponse::new(gray, gray, scale, LineKind::Drawn, Pieces::OnPoints)?;
        // A second pass starts from lines the first already drew nearer.
        let Some(once) = refine(&response, &near.homography, near.size) else {
            continue;
        };
        let homography = refine(&response, &once, near.size).unwrap_or(once);
        let grid = BoardGeometry {
            size: near.size,
            homography,
        };
        if grid.seen_square(width, height) {
            grids.push(grid);
        }
    }
    Ok(grids)
}

/// The black-hat response of a grayscale image, kept as plain bytes for fast sampling.
struct LineResponse {
    mat: Mat,
    /// The grayscale image itself, row-major, for telling stones from bare wood.
    gray: Vec<u8>,
    width: i32,
    height: i32,
    /// The response level above which a pixel counts as "on a line".
    on_line: u8,
    kind: LineKind,
    pieces: Pieces,
}

/// Where the pieces stand, which says what hides the board's lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pieces {
    /// Go's stones, on the lines' crossings.
    OnPoints,
    /// Mak-hos men and Makruk figures, inside the squares.
    InSquares,
}

impl LineResponse {
    /// `image` is the picture `gray` was made from (BGR, or `gray` itself).
    fn new(
        image: &Mat,
        gray: &Mat,
        scale: Scale,
        kind: LineKind,
        pieces: Pieces,
    ) -> opencv::Result<Self> {
        let longest = gray.cols().max(gray.rows());
        let mat = match kind {
            // Wider than a grid line at any usable distance, narrower than a stone.
            LineKind::Drawn => {
                let k = ((f64::from(longest) / scale.kernel_divisor).round() as i32).max(3) | 1;
                morphology(gray, imgproc::MORPH_BLACKHAT, k)?
            }
            LineKind::SquareEdges if image.channels() == 3 => colour_steps(image)?,
            // A square edge is a step, which the thinnest gradient marks as a line of its
            // own.
            LineKind::SquareEdges => morphology(gray, imgproc::MORPH_GRADIENT, 3)?,
        };
        let mat = if mat.is_continuous() {
            mat
        } else {
            mat.try_clone()?
        };
        // Grid lines cover a few percent of a frame; the 90th percentile sits just under
        // them on every photo seen, with a floor for frames that show no lines at all.
        let on_line = percentile(mat.data_bytes()?, 0.90).max(10);
        let gray = if gray.is_continuous() {
            gray.data_bytes()?.to_vec()
        } else {
            gray.try_clone()?.data_bytes()?.to_vec()
        };
        Ok(LineResponse {
            gray,
            width: mat.cols(),
            height: mat.rows(),
            mat,
            on_line,
            kind,
            pieces,
        })
    }

    fn at(&self, x: f64, y: f64) -> u8 {
        let (xi, yi) = (x.round() as i32, y.round() as i32);
        if xi < 0 || yi < 0 || xi >= self.width || yi >= self.height {
            return 0;
        }
        // Continuous single-channel bytes, checked in `new`.
        self.mat
            .data_bytes()
            .map_or(0, |bytes| bytes[(yi * self.width + xi) as usize])
    }

    fn gray_at(&self, [x, y]: [f64; 2]) -> Option<f64> {
        let (xi, yi) = (x.round() as i32, y.round() as i32);
        (xi >= 0 && yi >= 0 && xi < self.width && yi < self.height)
            .then(|| f64::from(self.gray[(yi * self.width + xi) as usize]))
    }

    /// Whether a stone seems to stand on lattice point (`column`, `row`): the point is
    /// clearly darker, or clearly lighter, than all four square centres around it. Those
    /// lie 0.7 of a spacing away, beyond any stone on the point and in the gaps between
    /// stones on neighbouring points, so they show the board even on a crowded one; off
    /// the board, point and squares alike show the table.
    fn stone_at(&self, grid: &RoughGrid, column: f64, row: f64) -> bool {
        let median_of = |samples: &mut Vec<f64>| -> Option<f64> {
            if samples.len() < 3 {
                return None;
            }
            samples.sort_by(f64::total_cmp);
            Some(samples[samples.len() / 2])
        };
        let around = |dc: f64, dr: f64, reach: f64| -> Option<f64> {
            let mut samples: Vec<f64> =
                [(0.0, 0.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)]
                    .iter()
                    .filter_map(|&(a, b)| {
                        self.gray_at(grid.point(column + dc + a * reach, row + dr + b * reach))
                    })
                    .collect();
            median_of(&mut samples)
        };
        let Some(point) = around(0.0, 0.0, 0.15) else {
            return false;
        };
        let squares: Vec<f64> = [(0.5, 0.5), (0.5, -0.5), (-0.5, 0.5), (-0.5, -0.5)]
            .iter()
            .filter_map(|&(dc, dr)| around(dc, dr, 0.08))
            .collect();
        if squares.len() < 4 {
            return false;
        }
        let margin = |square: f64| (0.2 * square).max(20.0);
        squares.iter().all(|&q| point < q - margin(q))
            || squares.iter().all(|&q| point > q + margin(q))
    }

    fn segments(&self, scale: Scale) -> opencv::Result<Vec<[f64; 4]>> {
        let mut binary = Mat::default();
        imgproc::threshold(
            &self.mat,
            &mut binary,
            f64::from(self.on_line),
            255.0,
            imgproc::THRESH_BINARY,
        )?;
        let longest = f64::from(self.width.max(self.height));
        let min_length = longest / scale.segment_divisor;
        let mut lines = Vector::<Vec4i>::new();
        imgproc::hough_lines_p(
            &binary,
            &mut lines,
            1.0,
            std::f64::consts::PI / 360.0,
            (min_length * 0.6) as i32,
            min_length,
            min_length / 6.0,
        )?;
        Ok(lines
            .iter()
            .map(|l| [l[0] as f64, l[1] as f64, l[2] as f64, l[3] as f64])
            .collect())
    }
}

/// `gray` scaled so that its local mean is mid-grey everywhere, over windows of a few
/// grid spacings: lines keep their share of the brightness around them.
fn evened(gray: &Mat) -> opencv::Result<Mat> {
    let longest = gray.cols().max(gray.rows());
    let mut mean = Mat::default();
    let k = (longest / 25) | 1;
    imgproc::blur_def(gray, &mut mean, Size::new(k, k))?;
    // Near-black surroundings are noise, not a board to raise.
    let mut floor = Mat::default();
    core::max(&mean, &core::Scalar::all(16.0), &mut floor)?;
    let mut out = Mat::default();
    core::divide2(gray, &floor, &mut out, 128.0, core::CV_8U)?;
    Ok(out)
}

pub(super) fn morphology(image: &Mat, operation: i32, side: i32) -> opencv::Result<Mat> {
    let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(side, side))?;
    let mut out = Mat::default();
    imgproc::morphology_ex(
        image,
        &mut out,
        operation,
        &kernel,
        Point::new(-1, -1),
        1,
        core::BORDER_REPLICATE,
        imgproc::morphology_default_border_value()?,
    )?;
    Ok(out)
}

/// How much more a step in hue counts than the same step in lightness: CIE Lab's colour
/// axes span about half the range of its lightness over real surfaces.
const CHROMA_STEP_WEIGHT: f64 = 2.0;

/// The steps between squares, in lightness or in colour, whichever is larger: two square
/// colours can share their lightness (green and tan, teal and brown in dim light), and a
/// grey picture then shows no edge between them at all. The picture is smoothed first so
/// the chroma noise of a dim camera is not doubled into edges.
pub(super) fn colour_steps(image: &Mat) -> opencv::Result<Mat> {
    let mut smooth = Mat::default();
    imgproc::gaussian_blur_def(image, &mut smooth, Size::new(3, 3), 0.0)?;
    let mut lab = Mat::default();
    imgproc::cvt_color_def(&smooth, &mut lab, imgproc::COLOR_BGR2Lab)?;
    let mut channels = Vector::<Mat>::new();
    core::split(&lab, &mut channels)?;
    let mut strongest = morphology(&channels.get(0)?, imgproc::MORPH_GRADIENT, 3)?;
    for channel in 1..3 {
        let step = morphology(&channels.get(channel)?, imgproc::MORPH_GRADIENT, 3)?;
        let mut weighted = Mat::default();
        step.convert_to(&mut weighted, core::CV_8U, CHROMA_STEP_WEIGHT, 0.0)?;
        let mut larger = Mat::default();
        core::max(&strongest, &weighted, &mut larger)?;
        strongest = larger;
    }
    Ok(strongest)
}

pub(super) fn percentile(bytes: &[u8], fraction: f64) -> u8 {
    let mut histogram = [0usize; 256];
    for &b in bytes {
        histogram[b as usize] += 1;
    }
    let target = (bytes.len() as f64 * fraction) as usize;
    let mut seen = 0;
    for (value, count) in histogram.iter().enumerate() {
        seen += count;
        if seen > target {
            return value as u8;
        }
    }
    255
}

/// A homogeneous 3-vector: a point or a line of the projective plane.
type Vec3 = [f64; 3];

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(v: Vec3) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn mul(a: &Homography, b: &Homography) -> Homography {
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

fn mul_vec(a: &Homography, v: Vec3) -> Vec3 {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

/// The line through a segment, scaled so that `l · (x, y, 1)` is a distance in pixels.
fn segment_line(s: &[f64; 4]) -> Vec3 {
    let l = cross([s[0], s[1], 1.0], [s[2], s[3], 1.0]);
    let n = (l[0] * l[0] + l[1] * l[1]).sqrt();
    [l[0] / n, l[1] / n, l[2] / n]
}

fn segment_length(s: &[f64; 4]) -> f64 {
    (s[2] - s[0]).hypot(s[3] - s[1])
}

/// Direction in [0, π).
fn segment_angle(s: &[f64; 4]) -> f64 {
    (s[3] - s[1])
        .atan2(s[2] - s[0])
        .rem_euclid(std::f64::consts::PI)
}

pub(super) fn angle_between(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::PI);
    d.min(std::f64::consts::PI - d)
}

/// Up to three dominant segment directions, strongest first, at least 25° apart, from a
/// length-weighted, smoothed histogram of directions. Grid rows and columns are usually
/// the first two, but on a crowded board the gaps between stones make diagonal runs too,
/// so the caller tries the pairs and keeps the grid the response supports best.
fn dominant_directions(segments: &[[f64; 4]]) -> Vec<f64> {
    const BINS: usize = 180;
    let mut histogram = [0.0f64; BINS];
    for s in segments {
        let bin = (segment_angle(s) / std::f64::consts::PI * BINS as f64) as usize % BINS;
        histogram[bin] += segment_length(s);
    }
    let smoothed: Vec<f64> = (0..BINS)
        .map(|i| {
            (-6i32..=6)
                .map(|j| {
                    let weight = (-0.5 * (f64::from(j) / 2.0).powi(2)).exp();
                    histogram[(i as i32 + j).rem_euclid(BINS as i32) as usize] * weight
                })
                .sum()
        })
        .collect();
    let circular = |a: usize, b: usize| {
        let d = a.abs_diff(b);
        d.min(BINS - d)
    };
    let mut peaks: Vec<usize> = Vec::new();
    while peaks.len() < 3 {
        let Some(next) = (0..BINS)
            .filter(|&i| peaks.iter().all(|&p| circular(i, p) >= 25))
            .max_by(|&a, &b| smoothed[a].total_cmp(&smoothed[b]))
        else {
            break;
        };
        if smoothed[next] <= 0.1 * peaks.first().map_or(0.0, |&p| smoothed[p]) {
            break;
        }
        peaks.push(next);
    }
    peaks
        .into_iter()
        .map(|bin| bin as f64 * std::f64::consts::PI / BINS as f64)
        .collect()
}

/// Whether a segment points at the vanishing point `v` (within `tolerance` radians).
fn points_at(segment: &[f64; 4], v: Vec3, tolerance_cos: f64) -> bool {
    let (mx, my) = (
        (segment[0] + segment[2]) / 2.0,
        (segment[1] + segment[3]) / 2.0,
    );
    let (dx, dy) = (segment[2] - segment[0], segment[3] - segment[1]);
    let length = dx.hypot(dy);
    let (tx, ty) = if v[2].abs() < 1e-12 {
        (v[0], v[1])
    } else {
        (v[0] / v[2] - mx, v[1] / v[2] - my)
    };
    let t = tx.hypot(ty);
    if t < 1e-12 || length < 1e-12 {
        return false;
    }
    ((dx * tx + dy * ty) / (length * t)).abs() > tolerance_cos
}

/// The vanishing point of one family of segments and the segments that agree with it.
///
/// Hypotheses come from pairs of the longest segments (deterministic, unlike random
/// sampling, so a frame always gives the same answer); the one most length agrees with is
/// refined as the least-squares point of its inliers' lines.
fn vanishing_point(segments: &[[f64; 4]]) -> Option<(Vec3, Vec<[f64; 4]>)> {
    let tolerance = 1.0f64.to_radians().cos();
    let mut by_length: Vec<&[f64; 4]> = segments.iter().collect();
    by_length.sort_by(|a, b| segment_length(b).total_cmp(&segment_length(a)));
    by_length.truncate(40);
    let support = |v: Vec3| -> f64 {
        segments
            .iter()
            .filter(|s| points_at(s, v, tolerance))
            .map(segment_length)
            .sum()
    };
    let mut best: Option<(f64, Vec3)> = None;
    for i in 0..by_length.len() {
        for j in i + 1..by_length.len() {
            let v = cross(segment_line(by_length[i]), segment_line(by_length[j]));
            let n = norm(v);
            if n < 1e-12 {
                continue;
            }
            let v = [v[0] / n, v[1] / n, v[2] / n];
            let score = support(v);
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, v));
            }
        }
    }
    let (_, mut v) = best?;
    for _ in 0..3 {
        let inliers: Vec<&[f64; 4]> = segments
            .iter()
            .filter(|s| points_at(s, v, tolerance))
            .collect();
        if inliers.len() < 2 {
            return None;
        }
        // The point minimising Σ w (l·v)² is the eigenvector of Σ w l lᵀ with the
        // smallest eigenvalue; it may lie at infinity, which is why it is homogeneous.
        let mut scatter = [[0.0f64; 3]; 3];
        for s in &inliers {
            let l = segment_line(s);
            let w = segment_length(s);
            for (r, row) in scatter.iter_mut().enumerate() {
                for (c, value) in row.iter_mut().enumerate() {
                    *value += w * l[r] * l[c];
                }
            }
        }
        let scatter = Mat::from_slice_2d(&scatter).ok()?;
        let mut values = Mat::default();
        let mut vectors = Mat::default();
        core::eigen(&scatter, &mut values, &mut vectors).ok()?;
        v = [
            *vectors.at_2d::<f64>(2, 0).ok()?,
            *vectors.at_2d::<f64>(2, 1).ok()?,
            *vectors.at_2d::<f64>(2, 2).ok()?,
        ];
    }
    let inliers = segments
        .iter()
        .filter(|s| points_at(s, v, tolerance))
        .copied()
        .collect();
    Some((v, inliers))
}

/// Equally spaced positions `offset + k · spacing`.
#[derive(Clone, Copy, Debug)]
struct Lattice {
    offset: f64,
    spacing: f64,
}

impl Lattice {
    fn position(&self, index: f64) -> f64 {
        self.offset + index * self.spacing
    }

    fn index_of(&self, position: f64) -> f64 {
        (position - self.offset) / self.spacing
    }
}

/// The strongest period of weighted positions, and its phase, refined by least squares.
///
/// A lattice of spacing d is also one of d/2, d/3…, so among the periods almost as strong
/// as the best the longest is taken.
fn fit_lattice(positions: &[(f64, f64)]) -> Option<Lattice> {
    let (min, max) = positions
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &(p, _)| {
            (lo.min(p), hi.max(p))
        });
    let extent = max - min;
    if positions.len() < 4 || extent <= 0.0 {
        return None;
    }
    let total: f64 = positions.iter().map(|&(_, w)| w).sum();
    let steps = 600;
    let (low, high) = ((extent / 40.0).ln(), (extent / 3.0).ln());
    let strength = |spacing: f64| -> (f64, f64) {
        let (mut re, mut im) = (0.0, 0.0);
        for &(p, w) in positions {
            let phase = std::f64::consts::TAU * p / spacing;
            re += w * phase.cos();
            im += w * phase.sin();
        }
        (re.hypot(im) / total, im.atan2(re))
    };
    let spacings: Vec<f64> = (0..steps)
        .map(|i| (low + (high - low) * i as f64 / (steps - 1) as f64).exp())
        .collect();
    let strengths: Vec<f64> = spacings.iter().map(|&d| strength(d).0).collect();
    let best = strengths.iter().copied().fold(0.0, f64::max);
    if best < 0.2 {
        return None;
    }
    let mut i = (0..steps).rev().find(|&i| strengths[i] >= 0.8 * best)?;
    while i + 1 < steps && strengths[i + 1] > strengths[i] {
        i += 1;
    }
    let spacing = spacings[i];
    let phase = strength(spacing).1;
    let mut lattice = Lattice {
        offset: phase / std::f64::consts::TAU * spacing,
        spacing,
    };
    for _ in 0..3 {
        // Weighted least squares of position = offset + k · spacing over the inliers.
        let (mut sw, mut sk, mut sp, mut skk, mut skp) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(p, w) in positions {
            let k = lattice.index_of(p).round();
            if (p - lattice.position(k)).abs() < 0.2 * lattice.spacing.abs() {
                sw += w;
                sk += w * k;
                sp += w * p;
                skk += w * k * k;
                skp += w * k * p;
            }
        }
        let det = sw * skk - sk * sk;
        if det.abs() < 1e-12 {
            break;
        }
        lattice = Lattice {
            offset: (skk * sp - sk * skp) / det,
            spacing: (sw * skp - sk * sp) / det,
        };
    }
    (lattice.spacing.abs() > 1e-9).then_some(lattice)
}

/// The grid as found before refinement: a map from the rectified view to the image and a
/// lattice along each rectified axis (`u` across columns, `v` down rows).
#[derive(Clone)]
struct RoughGrid {
    to_image: Homography,
    columns: Lattice,
    rows: Lattice,
}

impl RoughGrid {
    /// The image position of lattice point (`column index`, `row index`).
    fn point(&self, column: f64, row: f64) -> [f64; 2] {
        apply(
            &self.to_image,
            [self.columns.position(column), self.rows.position(row)],
        )
    }
}

/// Fraction of a lattice line's length, between the two outer crossing lines, that shows
/// line response: the evidence that a line really is there.
fn coverage(
    response: &LineResponse,
    grid: &RoughGrid,
    along_columns: bool,
    index: i64,
    across: (i64, i64),
) -> f64 {
    const SAMPLES: usize = 120;
    let mut hits = 0;
    let mut inside = 0;
    for s in 0..SAMPLES {
        let t = across.0 as f64 + (across.1 - across.0) as f64 * (s as f64 + 0.5) / SAMPLES as f64;
        let (column, row) = if along_columns {
            (index as f64, t)
        } else {
            (t, index as f64)
        };
        let [x, y] = grid.point(column, row);
        if x < 0.0 || y < 0.0 || x >= response.width as f64 || y >= response.height as f64 {
            continue;
        }
        inside += 1;
        // A line may sit a pixel or two off the rough lattice: look across it.
        let [nx, ny] = if along_columns {
            let [ax, ay] = grid.point(column + 0.08, row);
            [ax - x, ay - y]
        } else {
            let [ax, ay] = grid.point(column, row + 0.08);
            [ax - x, ay - y]
        };
        let strongest = (-2..=2)
            .map(|k| response.at(x + nx * f64::from(k) / 2.0, y + ny * f64::from(k) / 2.0))
            .max()
            .unwrap_or(0);
        if strongest >= response.on_line {
            hits += 1;
        }
    }
    if inside < SAMPLES / 2 {
        return 0.0;
    }
    let lines = hits as f64 / SAMPLES as f64;
    // Pieces on a checkered board stand inside the squares, not on their edges.
    if response.kind == LineKind::SquareEdges {
        return lines;
    }
    // Stones stand on the lines and hide them: on a crowded board an edge line may show
    // little of itself, but its points hold stones, which the table beyond never does.
    let points: Vec<i64> = (across.0 + 1..across.1).collect();
    let stones = points
        .iter()
        .filter(|&&t| {
            let (column, row) = if along_columns {
                (index as f64, t as f64)
            } else {
                (t as f64, index as f64)
            };
            response.stone_at(grid, column, row)
        })
        .count() as f64
        / points.len().max(1) as f64;
    lines + stones * (1.0 - lines)
}

/// Where grid `h`'s lines run on beyond its outer lines: `None` when they stop at all four,
/// else the move of the window (columns, rows) that the overruns call for, (0, 0) when
/// they run on at both ends of one direction. Each strip is looked at around its middle,
/// where stones on the lines either side do not reach.
fn overrun(response: &LineResponse, h: &Homography, n: usize) -> Option<(i64, i64)> {
    let last = (n - 1) as f64;
    let middle = (last / 2.0).floor();
    let inside = strip_coverage(response, h, false, (middle + 0.35, middle + 0.65), n)
        .max(MIN_LINE_COVERAGE);
    let runs_on = |along_columns: bool, strip: (f64, f64)| {
        let margin = strip_coverage(response, h, along_columns, strip, n);
        margin >= MIN_LINE_COVERAGE && margin > AMBIGUOUS_EDGE * inside
    };
    let before = (-0.65, -0.35);
    let after = (last + 0.35, last + 0.65);
    let direction = |before: bool, after: bool| -> Option<i64> {
        match (before, after) {
            (false, false) => Some(0),
            (true, false) => Some(-1),
            (false, true) => Some(1),
            (true, true) => None,
        }
    };
    let rows = direction(runs_on(false, before), runs_on(false, after));
    let columns = direction(runs_on(true, before), runs_on(true, after));
    match (columns, rows) {
        (Some(0), Some(0)) => None,
        (Some(c), Some(r)) => Some((c, r)),
        _ => Some((0, 0)),
    }
}

/// Where grid `h`'s outer squares at one end of a direction show none of the crossing
/// lines that the squares inside show: that end's row (or column) of squares is the
/// board's margin, its outer line the board's edge, and the window one line beyond the
/// board there; `None` when neither end is bare, else the move of the window (columns,
/// rows) back onto the board. The line response cannot tell a board's edge from a drawn
/// line, and a row of tall figures seen at a slant hides the line behind it: then the
/// board's near edge, strong along its whole length, outscores the hidden far line
/// (Makruk seeds 310307 and 310312, plain grids seen from the white side: the lattice a
/// row towards the camera, its near row of squares the bare margin). The figures that
/// stand in a board's outer squares hide the crossing lines in part, seldom all of them.
fn bare_outer_squares(response: &LineResponse, h: &Homography, n: usize) -> Option<(i64, i64)> {
    let last = (n - 1) as f64;
    let strip = |along_columns: bool, square: f64| {
        crossing_line_share(response, h, along_columns, (square + 0.2, square + 0.8), n)
    };
    let end_move = |along_columns: bool| -> i64 {
        let mut inner: Vec<f64> = (1..n - 2)
            .map(|square| strip(along_columns, square as f64))
            .collect();
        inner.sort_by(f64::total_cmp);
        let typical = inner[inner.len() / 2];
        if typical < MIN_LINE_COVERAGE {
            return 0;
        }
        let bare = |share: f64| share < BARE_MARGIN * typical;
        match (
            bare(strip(along_columns, 0.0)),
            bare(strip(along_columns, last - 1.0)),
        ) {
            (true, false) => 1,
            (false, true) => -1,
            _ => 0,
        }
    };
    let (columns, rows) = (end_move(true), end_move(false));
    ((columns, rows) != (0, 0)).then_some((columns, rows))
}

/// An outer row of squares whose crossing lines show on less than this share of what the
/// inner rows' show is the bare margin beyond the board's outer line. The board's edge
/// and the bottom of its side, both running across the margin's strip, show on about a
/// quarter (Makruk seed 310412: 28 %, the inner rows 100 %); figures in an outer row
/// hide less than half of its lines.
const BARE_MARGIN: f64 = 0.35;

/// The pixel of grid `h` at `t` along crossing line `line` (a row coordinate, or a column
/// coordinate when `along_columns`).
fn strip_point(h: &Homography, along_columns: bool, line: f64, t: f64) -> [f64; 2] {
    if along_columns {
        apply(h, [t, line])
    } else {
        apply(h, [line, t])
    }
}

/// Whether the line response shows at `t` on crossing line `line`, within a few pixels
/// across it (a line drawn a little off the fitted grid still counts).
fn shows_line_at(
    response: &LineResponse,
    h: &Homography,
    along_columns: bool,
    line: f64,
    t: f64,
) -> bool {
    let [x, y] = strip_point(h, along_columns, line, t);
    let [ax, ay] = strip_point(h, along_columns, line + 0.06, t);
    (-2..=2).any(|j| {
        response.at(
            x + (ax - x) * f64::from(j) / 2.0,
            y + (ay - y) * f64::from(j) / 2.0,
        ) >= response.on_line
    })
}

/// The share of points on the `n` crossing lines of grid `h` through the strip between
/// `from` and `to` (row coordinates, or column coordinates when `along_columns`) that show
/// line response.
fn crossing_line_share(
    response: &LineResponse,
    h: &Homography,
    along_columns: bool,
    (from, to): (f64, f64),
    n: usize,
) -> f64 {
    const STEPS: usize = 8;
    let shown = (0..n)
        .flat_map(|line| (0..STEPS).map(move |step| (line as f64, step)))
        .filter(|&(line, step)| {
            let t = from + (to - from) * (step as f64 + 0.5) / STEPS as f64;
            shows_line_at(response, h, along_columns, line, t)
        })
        .count();
    shown as f64 / (n * STEPS).max(1) as f64
}

/// The fraction of the `n` crossing lines of grid `h` (grid coordinates to pixels) that
/// run on through the strip between `from` and `to` (row coordinates, or column
/// coordinates when `along_columns`): near 1 between two lines of the grid, near 0 in the
/// margin beyond its outer line. A line runs on when most of the strip shows it and the
/// space beside it does not; the board's edge or a border along the strip shows
/// everywhere, between the crossing lines as well.
fn strip_coverage(
    response: &LineResponse,
    h: &Homography,
    along_columns: bool,
    (from, to): (f64, f64),
    n: usize,
) -> f64 {
    const STEPS: usize = 8;
    let runs_on = |line: f64| {
        let shown = (0..STEPS)
            .filter(|&step| {
                let t = from + (to - from) * (step as f64 + 0.5) / STEPS as f64;
                let on_line = shows_line_at(response, h, along_columns, line, t);
                // Dark between the crossing lines too: an edge or a border running along
                // the strip, not a crossing line going on.
                let [bx, by] = strip_point(h, along_columns, line + 0.5, t);
                on_line && response.at(bx, by) < response.on_line
            })
            .count();
        shown * 4 >= STEPS * 3
    };
    (0..n).filter(|&line| runs_on(line as f64)).count() as f64 / n.max(1) as f64
}

fn fit_grid(
    response: &LineResponse,
    segments: &[[f64; 4]],
    size: Option<usize>,
) -> Result<BoardGeometry, String> {
    if segments.len() < 8 {
        return Err(NO_GRID.into());
    }
    let directions = dominant_directions(segments);
    let mut best: Option<(f64, BoardGeometry)> = None;
    let mut first_error = None;
    for i in 0..directions.len() {
        for j in i + 1..directions.len() {
            match fit_grid_along(response, segments, size, (directions[i], directions[j])) {
                Ok((_, geometry))
                    if !geometry
                        .seen_square(f64::from(response.width), f64::from(response.height)) =>
                {
                    first_error.get_or_insert(NOT_SQUARE.into());
                }
                Ok((score, geometry)) => {
                    if best.as_ref().is_none_or(|(s, _)| score > *s) {
                        best = Some((score, geometry));
                    }
                }
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
    }
    best.map(|(_, geometry)| geometry)
        .ok_or_else(|| first_error.unwrap_or_else(|| NO_GRID.into()))
}

const NO_GRID: &str = "no grid of straight lines found";
const NOT_SQUARE: &str =
    "the lattice found is no view of a square board (far from square, or a thin strip of one)";

/// A grid fitted to one group of touching segments alone, the group with the most length
/// first. Another board or a printed sheet beside the board adds line directions and
/// periods of its own that can spoil the fit of the whole picture; the lines of one board
/// cross one another, and the neighbour's lie apart from them.
fn fit_apart(
    response: &LineResponse,
    segments: &[[f64; 4]],
    size: Option<usize>,
) -> Option<BoardGeometry> {
    let reach = f64::from(response.width.max(response.height)) / 60.0;
    let mut groups = touching_groups(segments, reach);
    if groups.len() < 2 {
        return None;
    }
    let length = |group: &[usize]| {
        group
            .iter()
            .map(|&i| segment_length(&segments[i]))
            .sum::<f64>()
    };
    groups.sort_by(|a, b| length(b).total_cmp(&length(a)));
    groups
        .iter()
        .filter(|group| group.len() >= 8)
        .take(3)
        .find_map(|group| {
            let members: Vec<[f64; 4]> = group.iter().map(|&i| segments[i]).collect();
            fit_grid(response, &members, size).ok()
        })
}

/// The lines whose segments carry the most length in one family, strongest first, as
/// (position across the family, summed length): the board's edge and drawn border are
/// long, straight and unbroken even where the lines between the squares are faint.
fn strongest_lines(positions: &[(f64, f64)], count: usize) -> Vec<(f64, f64)> {
    let mut sorted = positions.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some((first, last)) = sorted.first().zip(sorted.last()) else {
        return Vec::new();
    };
    // Segments of one line sit within a fraction of a percent of the family's extent.
    let merge = (last.0 - first.0) / 200.0;
    let mut lines: Vec<(f64, f64)> = Vec::new();
    let mut group: Vec<(f64, f64)> = Vec::new();
    let mut close = |group: &mut Vec<(f64, f64)>| {
        let length: f64 = group.iter().map(|g| g.1).sum();
        if length > 0.0 {
            let at = group.iter().map(|g| g.0 * g.1).sum::<f64>() / length;
            lines.push((at, length));
        }
        group.clear();
    };
    for &p in &sorted {
        if group.last().is_some_and(|g| p.0 - g.0 > merge) {
            close(&mut group);
        }
        group.push(p);
    }
    close(&mut group);
    lines.sort_by(|a, b| b.1.total_cmp(&a.1));
    lines.truncate(count);
    lines
}

/// The line response that most of each of `bins` lines of one axis between `from` and
/// `to` (rectified coordinates) shows, sampled over `across` on the other axis (its lower
/// quartile): faint lines, too weak for a segment anywhere, still raise it along their
/// whole length, and the outlines of pieces standing on part of a line do not.
fn line_profile(
    response: &LineResponse,
    to_image: &Homography,
    rows: bool,
    (from, to): (f64, f64),
    across: (f64, f64),
    bins: usize,
) -> Vec<f64> {
    const SAMPLES: usize = 48;
    (0..bins)
        .map(|bin| {
            let at = from + (to - from) * bin as f64 / (bins - 1) as f64;
            let mut values: Vec<u8> = (0..SAMPLES)
                .filter_map(|k| {
                    let t = across.0 + (across.1 - across.0) * (k as f64 + 0.5) / SAMPLES as f64;
                    let [x, y] = apply(to_image, if rows { [t, at] } else { [at, t] });
                    let inside = x >= 0.0
                        && y >= 0.0
                        && x < f64::from(response.width)
                        && y < f64::from(response.height);
                    inside.then(|| response.at(x, y))
                })
                .collect();
            if values.len() < SAMPLES / 2 {
                return 0.0;
            }
            values.sort_unstable();
            f64::from(values[values.len() / 4])
        })
        .collect()
}

/// The run of `n` equally spaced lines inside `bounds` that the profile shows best, with
/// how clearly: the median over its lines of each line's response above the squares'
/// middles either side, in units of the profile's own spread. `None` unless every inner
/// line stands out; the run is centred in `bounds`.
fn lattice_in_profile(
    profile: &[f64],
    (from, to): (f64, f64),
    bounds: (f64, f64),
    n: usize,
) -> Option<(Lattice, f64)> {
    let bins = profile.len();
    let value = |position: f64| -> Option<f64> {
        let x = (position - from) / (to - from) * (bins - 1) as f64;
        if x < 0.0 || x > (bins - 1) as f64 {
            return None;
        }
        let (i, f) = (x.floor() as usize, x.fract());
        let next = profile[(i + 1).min(bins - 1)];
        Some(profile[i] * (1.0 - f) + next * f)
    };
    let spread = {
        let mut inside: Vec<f64> = (0..bins)
            .filter(|&i| {
                let at = from + (to - from) * i as f64 / (bins - 1) as f64;
                at >= bounds.0 && at <= bounds.1
            })
            .map(|i| profile[i])
            .collect();
        inside.sort_by(f64::total_cmp);
        let median = *inside.get(inside.len() / 2)?;
        let mut deviations: Vec<f64> = inside.iter().map(|v| (v - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        deviations[deviations.len() / 2].max(1.0)
    };
    // Each line's response above the middles of the squares either side of it; the
    // outer lines have a square on one side only, and the margin, where a border or the
    // board's edge may run, on the other.
    let contrasts = |lattice: &Lattice| -> Option<Vec<f64>> {
        (0..n)
            .map(|k| {
                let line = value(lattice.position(k as f64))?;
                let mut sides = Vec::with_capacity(2);
                if k > 0 {
                    sides.push(value(lattice.position(k as f64 - 0.5))?);
                }
                if k + 1 < n {
                    sides.push(value(lattice.position(k as f64 + 0.5))?);
                }
                Some(line - sides.iter().sum::<f64>() / sides.len().max(1) as f64)
            })
            .collect()
    };
    let clarity = |contrasts: &[f64]| {
        let mut sorted = contrasts.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2] / spread
    };
    let length = bounds.1 - bounds.0;
    let last = (n - 1) as f64;
    let centre = (bounds.0 + bounds.1) / 2.0;
    let mut best: Option<(Lattice, f64)> = None;
    for step in 0..=SPACING_STEPS {
        let fill = MIN_FILL + (1.0 - MIN_FILL) * step as f64 / SPACING_STEPS as f64;
        let spacing = length * fill / last;
        // A board's squares sit in the middle of its outline, give or take what a
        // slightly wrong vanishing point shifts them.
        for shift in -OFFSET_STEPS..=OFFSET_STEPS {
            let offset = centre - last / 2.0 * spacing
                + MAX_OFF_CENTRE * spacing * f64::from(shift) / f64::from(OFFSET_STEPS);
            let lattice = Lattice { offset, spacing };
            let Some(found) = contrasts(&lattice) else {
                continue;
            };
            // The outer lines may show along part of their length only (a checkered
            // board's light squares the colour of its border): the inner ones decide.
            if found[1..n - 1].iter().any(|&c| c <= 0.0) {
                continue;
            }
            let score = clarity(&found);
            if best.as_ref().is_none_or(|(_, s)| score > *s) {
                best = Some((lattice, score));
            }
        }
    }
    best.filter(|&(_, score)| score >= MIN_CLARITY)
}

/// The smallest share of the outline's width the squares may fill: a board's margin is
/// rarely more than a square each side of eight (8 / 10).
const MIN_FILL: f64 = 0.75;
/// Spacings tried between the outline lines, and offsets each side of the middle.
const SPACING_STEPS: usize = 60;
const OFFSET_STEPS: i32 = 6;
/// How far off the outline's middle the squares may sit, in squares.
const MAX_OFF_CENTRE: f64 = 0.15;
/// How far a lattice's lines must stand out, in the profile's own spread, for the
/// squares to be taken as fitted. (On development renders, seeds 101-110, 1 found 10 more
/// boards than 2 and misplaced 4 more.)
const MIN_CLARITY: f64 = 2.0;

/// The grid of `n` lines fitted inside the board's outline when its lines are too faint
/// for segments of their own (a dim board, worn lines, squares close in colour): the
/// longest lines of each family are taken two by two as the outline, and inside each pair
/// the run of `n` equally spaced lines the picture shows best along the other pair's
/// width. Every direction pair is tried; the clearest fit wins.
fn fit_inside_outline(
    response: &LineResponse,
    segments: &[[f64; 4]],
    n: usize,
) -> Option<BoardGeometry> {
    const OUTLINE_LINES: usize = 5;
    const BINS: usize = 600;
    if segments.len() < 4 {
        return None;
    }
    let directions = dominant_directions(segments);
    let mut best: Option<(f64, BoardGeometry)> = None;
    for i in 0..directions.len() {
        for j in i + 1..directions.len() {
            // An outline is two lines each way.
            let Ok(rectified) = rectify(response, segments, (directions[i], directions[j]), 2)
            else {
                continue;
            };
            let row_lines =
                strongest_lines(&rectified.positions(&rectified.family1, 1), OUTLINE_LINES);
            let column_lines =
                strongest_lines(&rectified.positions(&rectified.family2, 0), OUTLINE_LINES);
            let pairs = |lines: &[(f64, f64)]| -> Vec<(f64, f64)> {
                let mut pairs = Vec::new();
                for a in lines {
                    for b in lines {
                        if a.0 < b.0 {
                            pairs.push((a.0, b.0));
                        }
                    }
                }
                pairs
            };
            let extent = |lines: &[(f64, f64)]| -> Option<(f64, f64)> {
                let lo = lines.iter().map(|l| l.0).fold(f64::MAX, f64::min);
                let hi = lines.iter().map(|l| l.0).fold(f64::MIN, f64::max);
                (hi > lo).then_some((lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)))
            };
            let (Some(row_range), Some(column_range)) = (extent(&row_lines), extent(&column_lines))
            else {
                continue;
            };
            // The middle of the outline's width: its margins hold no lines.
            let middle = |(a, b): (f64, f64)| (a + 0.1 * (b - a), b - 0.1 * (b - a));
            let row_pairs = pairs(&row_lines);
            let column_pairs = pairs(&column_lines);
            let row_fits: Vec<Vec<Option<(Lattice, f64)>>> = column_pairs
                .iter()
                .map(|&columns| {
                    let profile = line_profile(
                        response,
                        &rectified.to_image,
                        true,
                        row_range,
                        middle(columns),
                        BINS,
                    );
                    row_pairs
                        .iter()
                        .map(|&rows| lattice_in_profile(&profile, row_range, rows, n))
                        .collect()
                })
                .collect();
            for (r, &rows_pair) in row_pairs.iter().enumerate() {
                let profile = line_profile(
                    response,
                    &rectified.to_image,
                    false,
                    column_range,
                    middle(rows_pair),
                    BINS,
                );
                for (c, &columns_pair) in column_pairs.iter().enumerate() {
                    let Some((rows, row_clarity)) = row_fits[c][r] else {
                        continue;
                    };
                    let Some((columns, column_clarity)) =
                        lattice_in_profile(&profile, column_range, columns_pair, n)
                    else {
                        continue;
                    };
                    let score = row_clarity + column_clarity;
                    if best.as_ref().is_some_and(|(s, _)| *s >= score) {
                        continue;
                    }
                    let rough = RoughGrid {
                        to_image: rectified.to_image,
                        columns,
                        rows,
                    };
                    let Some(h) = grid_homography(&rough, n, 0, 0) else {
                        continue;
                    };
                    best = Some((
                        score,
                        BoardGeometry {
                            size: n,
                            homography: h,
                        },
                    ));
                }
            }
        }
    }
    let (_, geometry) = best?;
    // Squares of a few pixels are texture, not a board.
    let [a, b, _, d] = geometry.corners();
    let side = (b[0] - a[0])
        .hypot(b[1] - a[1])
        .min((d[0] - a[0]).hypot(d[1] - a[1]));
    (side / (n - 1) as f64 >= MIN_FAINT_SQUARE).then(|| image_order(&geometry))
}

/// The smallest square side, in working pixels, fitted inside an outline.
const MIN_FAINT_SQUARE: f64 = 8.0;

/// The segments in groups that touch, each within `reach` pixels of another of its group.
fn touching_groups(segments: &[[f64; 4]], reach: f64) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..segments.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..segments.len() {
        for j in i + 1..segments.len() {
            if segment_distance(&segments[i], &segments[j]) <= reach {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..segments.len() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().collect()
}

/// The shortest distance between two segments: zero where they cross.
fn segment_distance(a: &[f64; 4], b: &[f64; 4]) -> f64 {
    let side = |p: [f64; 2], q: [f64; 2], r: [f64; 2]| {
        (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    };
    let (a0, a1, b0, b1) = ([a[0], a[1]], [a[2], a[3]], [b[0], b[1]], [b[2], b[3]]);
    let crosses =
        side(a0, a1, b0) * side(a0, a1, b1) < 0.0 && side(b0, b1, a0) * side(b0, b1, a1) < 0.0;
    if crosses {
        return 0.0;
    }
    let to_segment = |p: [f64; 2], s0: [f64; 2], s1: [f64; 2]| {
        let (dx, dy) = (s1[0] - s0[0], s1[1] - s0[1]);
        let squared = dx * dx + dy * dy;
        let t = if squared > 0.0 {
            (((p[0] - s0[0]) * dx + (p[1] - s0[1]) * dy) / squared).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (p[0] - s0[0] - t * dx).hypot(p[1] - s0[1] - t * dy)
    };
    to_segment(a0, b0, b1)
        .min(to_segment(a1, b0, b1))
        .min(to_segment(b0, a0, a1))
        .min(to_segment(b1, a0, a1))
}

/// A view of the board's plane in which both families of lines are parallel to the axes
/// and equally spaced lines are equally spaced: family 1 runs along `u` (rows, at some
/// `v`), family 2 along `v` (columns, at some `u`).
struct Rectified {
    to_rectified: Homography,
    to_image: Homography,
    family1: Vec<[f64; 4]>,
    family2: Vec<[f64; 4]>,
}

impl Rectified {
    /// Each segment's position across its family's direction (`axis` 1 for family 1's
    /// rows, 0 for family 2's columns), weighted by its length.
    fn positions(&self, family: &[[f64; 4]], axis: usize) -> Vec<(f64, f64)> {
        family
            .iter()
            .map(|s| {
                let a = apply(&self.to_rectified, [s[0], s[1]]);
                let b = apply(&self.to_rectified, [s[2], s[3]]);
                ((a[axis] + b[axis]) / 2.0, segment_length(s))
            })
            .collect()
    }
}

/// The segments running along the two given directions, their vanishing points, and the
/// view that makes both families parallel.
fn rectify(
    response: &LineResponse,
    segments: &[[f64; 4]],
    (first, second): (f64, f64),
    min_family: usize,
) -> Result<Rectified, String> {
    let family = |direction: f64, other: f64| -> Vec<[f64; 4]> {
        segments
            .iter()
            .filter(|s| {
                let angle = segment_angle(s);
                let d = angle_between(angle, direction);
                d < 25f64.to_radians() && d < angle_between(angle, other)
            })
            .copied()
            .collect()
    };
    let (v1, family1) = vanishing_point(&family(first, second)).ok_or(NO_GRID)?;
    let (v2, family2) = vanishing_point(&family(second, first)).ok_or(NO_GRID)?;
    if family1.len() < min_family || family2.len() < min_family {
        return Err(NO_GRID.into());
    }

    // Normalised image coordinates (centre at the origin, unit width) keep the horizon's
    // third coordinate away from zero for any sensible view.
    let (w, h) = (f64::from(response.width), f64::from(response.height));
    let normalise: Homography = [
        [1.0 / w, 0.0, -0.5],
        [0.0, 1.0 / w, -0.5 * h / w],
        [0.0, 0.0, 1.0],
    ];
    let p1 = mul_vec(&normalise, v1);
    let p2 = mul_vec(&normalise, v2);
    let horizon = cross(p1, p2);
    if horizon[2].abs() < 1e-9 {
        return Err("the view is too oblique to find the board's plane".into());
    }
    let horizon = [horizon[0] / horizon[2], horizon[1] / horizon[2], 1.0];
    let projective: Homography = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], horizon];
    let d1 = mul_vec(&projective, p1);
    let d2 = mul_vec(&projective, p2);
    let (a1, a2) = (d1[0].hypot(d1[1]), d2[0].hypot(d2[1]));
    if a1 < 1e-12 || a2 < 1e-12 {
        return Err(NO_GRID.into());
    }
    // Columns of the inverse: family 1 runs along u, family 2 along v.
    let basis: Homography = [
        [d1[0] / a1, d2[0] / a2, 0.0],
        [d1[1] / a1, d2[1] / a2, 0.0],
        [0.0, 0.0, 1.0],
    ];
    let affine = invert(&basis).ok_or("the two line directions coincide")?;
    let to_rectified = mul(&affine, &mul(&projective, &normalise));
    let to_image = invert(&to_rectified).ok_or(NO_GRID)?;
    Ok(Rectified {
        to_rectified,
        to_image,
        family1,
        family2,
    })
}

/// The grid whose rows and columns run along the two given directions, with its score:
/// the summed coverage of its lines.
fn fit_grid_along(
    response: &LineResponse,
    segments: &[[f64; 4]],
    size: Option<usize>,
    directions: (f64, f64),
) -> Result<(f64, BoardGeometry), String> {
    let rectified = rectify(response, segments, directions, 4)?;
    let (to_image, family1, family2) = (rectified.to_image, &rectified.family1, &rectified.family2);
    let positions = |family: &[[f64; 4]], axis: usize| rectified.positions(family, axis);
    let rows = fit_lattice(&positions(family1, 1)).ok_or(NO_GRID)?;
    let columns = fit_lattice(&positions(family2, 0)).ok_or(NO_GRID)?;

    // Lattice indices that segments support, widened a little: the board lies among them.
    let span = |family: &[[f64; 4]], axis: usize, lattice: &Lattice| -> (i64, i64) {
        let indices: Vec<i64> = positions(family, axis)
            .iter()
            .map(|&(p, _)| lattice.index_of(p).round() as i64)
            .collect();
        let lo = indices.iter().copied().min().unwrap_or(0);
        let hi = indices.iter().copied().max().unwrap_or(0);
        (lo - 2, hi + 2)
    };
    let measure = |rows: Lattice, columns: Lattice| {
        let rough = RoughGrid {
            to_image,
            columns,
            rows,
        };
        let mut row_span = span(family1, 1, &rows);
        let mut column_span = span(family2, 0, &columns);
        // Hough may find segments on only part of a board (a steep view shortens the far
        // square edges below the shortest segment kept): the lattice is followed on while
        // its outermost lines still show in the picture, up to a board's worth beyond.
        let mut growth = 0;
        loop {
            if row_span.1 - row_span.0 > 80 || column_span.1 - column_span.0 > 80 {
                return Err(String::from(NO_GRID));
            }
            let row_coverage: Vec<f64> = (row_span.0..=row_span.1)
                .map(|i| coverage(response, &rough, false, i, column_span))
                .collect();
            let column_coverage: Vec<f64> = (column_span.0..=column_span.1)
                .map(|i| coverage(response, &rough, true, i, row_span))
                .collect();
            let shown = |coverage: &[f64], at: usize| coverage[at] >= MIN_LINE_COVERAGE;
            let grow = [
                shown(&row_coverage, 0),
                shown(&row_coverage, row_coverage.len() - 1),
                shown(&column_coverage, 0),
                shown(&column_coverage, column_coverage.len() - 1),
            ];
            if !grow.contains(&true) || growth == MAX_SPAN_GROWTH {
                return Ok((rough, row_span, column_span, row_coverage, column_coverage));
            }
            row_span.0 -= i64::from(grow[0]);
            row_span.1 += i64::from(grow[1]);
            column_span.0 -= i64::from(grow[2]);
            column_span.1 += i64::from(grow[3]);
            growth += 1;
        }
    };
    let measured = measure(rows, columns)?;
    // Every second line of each axis of a measured lattice, where one parity of its lines
    // is covered and the other bare ([`every_second_line`]).
    let every_second = |measured: &Measured, force: bool| {
        let (_, row_span, column_span, row_coverage, column_coverage) = measured;
        (
            every_second_line(row_coverage, row_span.0, &rows, force),
            every_second_line(column_coverage, column_span.0, &columns, force),
        )
    };
    if response.kind != LineKind::SquareEdges {
        // Figures in the squares of a plain grid put edges half way between its drawn
        // lines, and on a dim board those can be as strong as the faint lines themselves:
        // then half a square is the lattice's period (Makruk seed 310657, 640×480: the
        // lines between the black figures' rows and between the red ones covered 42–72 %,
        // the 9 drawn lines 55–72 %, the half lines between them 8–21 %; the board was
        // taken as its middle four rows, and nothing recorded for 110 s). Every second
        // line is then the board's where its 9-line window parts covered lines from bare
        // ones better.
        let measured = match size {
            Some(n) if response.pieces == Pieces::InSquares => {
                let (halved_rows, halved_columns) = every_second(&measured, true);
                let alternatives = [
                    halved_rows.map(|r| (r, columns)),
                    halved_columns.map(|c| (rows, c)),
                    halved_rows.zip(halved_columns),
                ];
                let mut best = (window_separation(&measured, n), measured);
                for (rows, columns) in alternatives.into_iter().flatten() {
                    let Ok(doubled) = measure(rows, columns) else {
                        continue;
                    };
                    let separation = window_separation(&doubled, n);
                    if separation > best.0 {
                        best = (separation, doubled);
                    }
                }
                best.1
            }
            _ => measured,
        };
        return board_in_window(response, size, measured);
    }
    // A checkered board's own outline and border lie about half a square beyond its outer
    // edges, long and strong, and can make half a square the strongest period: then every
    // other lattice line is bare, and the squares' lattice is every second line.
    let halved = |measured: &Measured, force: bool| {
        let (halved_rows, halved_columns) = every_second(measured, force);
        (halved_rows.is_some() || halved_columns.is_some()).then(|| {
            (
                halved_rows.unwrap_or(rows),
                halved_columns.unwrap_or(columns),
            )
        })
    };
    let measured = match halved(&measured, false) {
        Some((rows, columns)) => measure(rows, columns)?,
        None => measured,
    };
    // Pieces standing in line along the start rows put edges half way between the square
    // edges too (Makruk seed 310228: a figure's sides on every second half-square line of
    // its column, at 0.5 to 0.6 of the square edges' coverage), so the bare parity is not
    // bare enough to be told at once; a lattice of half squares has no 9-line window
    // that leaves the covered lines out, and then every second line is the board's.
    match board_in_window(response, size, measured.clone()) {
        Ok(found) => Ok(found),
        Err(error) => match halved(&measured, true) {
            Some((rows, columns)) => {
                board_in_window(response, size, measure(rows, columns)?).map_err(|_| error)
            }
            None => Err(error),
        },
    }
}

/// A rough lattice, the spans of line indices measured, and each line's coverage (rows,
/// then columns).
type Measured = (RoughGrid, (i64, i64), (i64, i64), Vec<f64>, Vec<f64>);

/// The window of the measured lattice that is the board, with its score: the summed
/// coverage of its lines.
fn board_in_window(
    response: &LineResponse,
    size: Option<usize>,
    (rough, row_span, column_span, row_coverage, column_coverage): Measured,
) -> Result<(f64, BoardGeometry), String> {
    let candidates: Vec<usize> = match size {
        Some(n) => vec![n],
        None => GO_SIZES.to_vec(),
    };
    // The board is the window that holds the covered lines and leaves none outside: a 9×9
    // window inside a 19×19 grid leaves strong lines out, a 19×19 window round a 9×9 board
    // takes in empty ones.
    let mut chosen: Option<(f64, usize, i64, i64, bool)> = None;
    for &n in &candidates {
        let Some((row_start, row_fit, row_min)) = best_window(&row_coverage, n) else {
            continue;
        };
        let Some((column_start, column_fit, column_min)) = best_window(&column_coverage, n) else {
            continue;
        };
        let fit = row_fit + column_fit;
        let shown = match response.pieces {
            Pieces::OnPoints => row_min.min(column_min) >= MIN_LINE_COVERAGE,
            Pieces::InSquares => {
                lines_shown_round_figures(&row_coverage[row_start..row_start + n])
                    && lines_shown_round_figures(&column_coverage[column_start..column_start + n])
            }
        };
        if chosen.as_ref().is_none_or(|c| fit > c.0) {
            chosen = Some((
                fit,
                n,
                row_span.0 + row_start as i64,
                column_span.0 + column_start as i64,
                shown,
            ));
        }
    }
    let chosen = chosen.map(|(_, n, row0, column0, shown)| (n, row0, column0, shown));
    let visible = longest_covered_run(&row_coverage).min(longest_covered_run(&column_coverage));
    let mismatch = |n: usize| {
        format!(
            "the grid does not match a {n}×{n} board: {visible} lines are visible in one direction"
        )
    };
    let Some((n, row0, column0, shown)) = chosen else {
        return Err(match size {
            Some(n) if visible >= 5 => mismatch(n),
            _ => NO_GRID.into(),
        });
    };
    // A grid that goes on well beyond the window is a bigger board than was asked for.
    if !shown || visible >= n + 2 {
        return Err(mismatch(n));
    }
    // The grid's lines stop at its outer lines: beyond them lies the margin, where the
    // crossing lines do not go on. Where they do, the window is one line short of the
    // board on that side (a faint edge line lost to the one beyond the other edge, often
    // the board's own edge): with the size given, move it that way, twice at most; else
    // give no grid rather than a shifted one.
    let (mut row0, mut column0) = (row0, column0);
    let mut moves = 0;
    let grid_to_image = loop {
        let mut grid_to_image = grid_homography(&rough, n, row0, column0).ok_or(NO_GRID)?;
        for _ in 0..2 {
            if let Some(refined) = refine(response, &grid_to_image, n) {
                grid_to_image = refined;
            }
        }
        match overrun(response, &grid_to_image, n) {
            // Figures stand inside the squares, so the squares beside an outer line show
            // whether it is the board's or its edge beyond the margin.
            None if response.pieces == Pieces::InSquares && size.is_some() && moves < 2 => {
                match bare_outer_squares(response, &grid_to_image, n) {
                    Some((columns, rows)) => {
                        column0 += columns;
                        row0 += rows;
                        moves += 1;
                    }
                    None => break grid_to_image,
                }
            }
            None => break grid_to_image,
            // Only for a size that was given: a window of a size the locator chose that
            // overruns is more likely a part of a bigger board.
            Some((columns, rows)) if size.is_some() && moves < 2 && (columns, rows) != (0, 0) => {
                column0 += columns;
                row0 += rows;
                moves += 1;
            }
            Some(_) => {
                return Err(format!(
                    "the board's edge is unclear: its lines seem to go on beyond the {n}×{n} grid"
                ));
            }
        }
    };

    let in_window = |coverage: &[f64], start: i64| -> f64 {
        (start..start + n as i64)
            .filter_map(|i| usize::try_from(i).ok().and_then(|i| coverage.get(i)))
            .sum()
    };
    let score = in_window(&row_coverage, row0 - row_span.0)
        + in_window(&column_coverage, column0 - column_span.0);
    Ok((
        score,
        image_order(&BoardGeometry {
            size: n,
            homography: grid_to_image,
        }),
    ))
}

/// The lattice of every second line of `lattice` when the lines of one parity are
/// covered and the others bare; `coverage[k]` is line `first + k`'s.
fn every_second_line(
    coverage: &[f64],
    first: i64,
    lattice: &Lattice,
    force: bool,
) -> Option<Lattice> {
    let evidence = |parity: usize| -> (f64, usize) {
        coverage
            .iter()
            .enumerate()
            .filter(|(k, _)| (first + *k as i64).rem_euclid(2) as usize == parity)
            .fold((0.0, 0), |(sum, strong), (_, &c)| {
                (
                    sum + (c - ABSENT_LINE).max(0.0),
                    strong + usize::from(c >= 0.5),
                )
            })
    };
    let (even, odd) = (evidence(0), evidence(1));
    let (covered, bare, parity) = if even.0 >= odd.0 {
        (even, odd, 0)
    } else {
        (odd, even, 1)
    };
    // The board's outline and border are among the bare parity's lines, and covered.
    (covered.1 >= 5 && (force || covered.0 >= 2.0 * bare.0)).then(|| Lattice {
        offset: lattice.position(parity as f64),
        spacing: 2.0 * lattice.spacing,
    })
}

/// A line beyond the window this close to the window's typical coverage (as a fraction)
/// makes the window's place ambiguous.
const AMBIGUOUS_EDGE: f64 = 0.6;

/// How many times the measured lattice may be widened at its ends: a 19×19 board's worth
/// of lines beyond the segments found.
const MAX_SPAN_GROWTH: usize = 20;

/// Below this fraction of its length showing line response, a line is taken as absent.
/// Stones on an edge line hide at most about half of it in a real game.
const MIN_LINE_COVERAGE: f64 = 0.2;

/// The start of the run of `n` lines that best separates covered lines from bare ones,
/// how well it does (every line inside counts by how far its coverage exceeds
/// [`ABSENT_LINE`], every line outside by how far it does), and the weakest line in it.
fn best_window(coverage: &[f64], n: usize) -> Option<(usize, f64, f64)> {
    if coverage.len() < n {
        return None;
    }
    let outside_total: f64 = coverage.iter().map(|c| (c - ABSENT_LINE).max(0.0)).sum();
    (0..=coverage.len() - n)
        .map(|start| {
            let window = &coverage[start..start + n];
            let inside: f64 = window.iter().map(|c| c - ABSENT_LINE).sum();
            let left_out = outside_total
                - window
                    .iter()
                    .map(|c| (c - ABSENT_LINE).max(0.0))
                    .sum::<f64>();
            let weakest = window.iter().copied().fold(f64::MAX, f64::min);
            (start, inside - left_out, weakest)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// How well the best `n`-line windows of `measured`'s rows and columns part covered lines
/// from bare ones ([`best_window`]'s measure, summed over both axes).
fn window_separation(measured: &Measured, n: usize) -> f64 {
    let (_, _, _, row_coverage, column_coverage) = measured;
    match (
        best_window(row_coverage, n),
        best_window(column_coverage, n),
    ) {
        (Some(rows), Some(columns)) => rows.1 + columns.1,
        _ => f64::NEG_INFINITY,
    }
}

/// Whether the lines of a window of an 8×8 board's lattice show well enough for it to be
/// the board. Its figures stand inside the squares, and seen at a slant a full row of tall
/// ones hides the line behind it, the board's far edge too (Makruk seed 310222, a plain
/// grid from Black's side: at the start, the far edge showed on 6 % of its length and the
/// line behind Black's back rank on 12 %, the others on 52–67 %). A hidden line lies
/// between shown ones, so no two hidden lines are neighbours, and the lattice holds on
/// the shown ones: at most one of the two outer lines, and a third of the lines, hidden.
fn lines_shown_round_figures(window: &[f64]) -> bool {
    let hidden: Vec<bool> = window.iter().map(|&c| c < MIN_LINE_COVERAGE).collect();
    let count = hidden.iter().filter(|&&h| h).count();
    let (first, last) = (hidden[0], hidden[hidden.len() - 1]);
    !(first && last)
        && count * 3 <= window.len()
        && !hidden.windows(2).any(|pair| pair[0] && pair[1])
}

/// The coverage of a line that is not there: a little comes from stones' edges, board
/// grain and clutter.
const ABSENT_LINE: f64 = 0.1;

fn longest_covered_run(coverage: &[f64]) -> usize {
    let mut best = 0;
    let mut run = 0;
    for &c in coverage {
        run = if c >= MIN_LINE_COVERAGE { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Grid coordinates (0..n-1) to image pixels for the chosen window of the rough lattice.
fn grid_homography(rough: &RoughGrid, n: usize, row0: i64, column0: i64) -> Option<Homography> {
    let last = (n - 1) as f64;
    let grid = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    let image = grid.map(|[c, r]| rough.point(column0 as f64 + c, row0 as f64 + r));
    super::homography_from_4(&grid, &image)
}

/// Re-fits every grid line to the line response found along it, then the homography to
/// all intersections of the fitted lines.
fn refine(response: &LineResponse, h: &Homography, n: usize) -> Option<Homography> {
    let last = (n - 1) as f64;
    let mut fitted_rows = Vec::with_capacity(n);
    let mut fitted_columns = Vec::with_capacity(n);
    for index in 0..n {
        fitted_rows.push(fit_line(response, h, false, index as f64, last));
        fitted_columns.push(fit_line(response, h, true, index as f64, last));
    }
    let mut grid_points = Vector::<core::Point2f>::new();
    let mut image_points = Vector::<core::Point2f>::new();
    for (r, row) in fitted_rows.iter().enumerate() {
        for (c, column) in fitted_columns.iter().enumerate() {
            let (Some(row), Some(column)) = (row, column) else {
                continue;
            };
            let p = cross(*row, *column);
            if p[2].abs() < 1e-12 {
                continue;
            }
            grid_points.push(core::Point2f::new(c as f32, r as f32));
            image_points.push(core::Point2f::new(
                (p[0] / p[2]) as f32,
                (p[1] / p[2]) as f32,
            ));
        }
    }
    if grid_points.len() < n * n / 2 {
        return None;
    }
    let m = calib3d::find_homography(
        &grid_points,
        &image_points,
        &mut Mat::default(),
        calib3d::RANSAC,
        2.0,
    )
    .ok()?;
    super::homography_from_mat(&m)
}

/// The line (homogeneous, in pixels) best matching the response along grid line `index`
/// (a column when `along_columns`), searched within a third of a cell either side.
fn fit_line(
    response: &LineResponse,
    h: &Homography,
    along_columns: bool,
    index: f64,
    last: f64,
) -> Option<Vec3> {
    const SAMPLES: usize = 60;
    const STEPS: i32 = 8;
    let mut points = Vec::with_capacity(SAMPLES);
    for s in 0..SAMPLES {
        let t = last * (s as f64 + 0.5) / SAMPLES as f64;
        let mut best: Option<(u8, [f64; 2])> = None;
        for k in -STEPS..=STEPS {
            let offset = f64::from(k) / f64::from(STEPS) * 0.33;
            let (c, r) = if along_columns {
                (index + offset, t)
            } else {
                (t, index + offset)
            };
            let [x, y] = apply(h, [c, r]);
            let value = response.at(x, y);
            if best.is_none_or(|(v, _)| value > v) {
                best = Some((value, [x, y]));
            }
        }
        if let Some((value, point)) = best
            && value >= response.on_line
        {
            points.push(point);
        }
    }
    if points.len() < SAMPLES / 4 {
        return None;
    }
    let mut input = Vector::<core::Point2f>::new();
    for [x, y] in &points {
        input.push(core::Point2f::new(*x as f32, *y as f32));
    }
    let mut fitted = core::Vec4f::default();
    imgproc::fit_line(&input, &mut fitted, imgproc::DIST_HUBER, 0.0, 0.01, 0.01).ok()?;
    let (vx, vy, x0, y0) = (
        f64::from(fitted[0]),
        f64::from(fitted[1]),
        f64::from(fitted[2]),
        f64::from(fitted[3]),
    );
    Some(cross([x0, y0, 1.0], [x0 + vx, y0 + vy, 1.0]))
}

/// Renames the grid's corners so that row 0 is the edge nearest the top of the image and
/// the corners go clockwise on screen (top-left, top-right, bottom-right, bottom-left):
/// how the locator names every grid it finds, and how the stone reader expects a board
/// (the camera at the bottom). Renderers' truths name corners in the board's own order and
/// are renamed with this before being compared or read.
pub fn image_order(geometry: &BoardGeometry) -> BoardGeometry {
    let corners = geometry.corners();
    // Clockwise on screen (y down) means a positive signed area.
    let area: f64 = (0..4)
        .map(|i| {
            let [x0, y0] = corners[i];
            let [x1, y1] = corners[(i + 1) % 4];
            x0 * y1 - x1 * y0
        })
        .sum();
    let mut order = if area >= 0.0 {
        [corners[0], corners[1], corners[2], corners[3]]
    } else {
        [corners[0], corners[3], corners[2], corners[1]]
    };
    let top_edge = (0..4)
        .min_by(|&a, &b| {
            let mid = |i: usize| (order[i][1] + order[(i + 1) % 4][1]) / 2.0;
            mid(a).total_cmp(&mid(b))
        })
        .unwrap_or(0);
    order.rotate_left(top_edge);
    BoardGeometry::from_corners(geometry.size, order).unwrap_or_else(|| geometry.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_whose_outer_squares_are_the_bare_margin_moves_back_onto_the_board() {
        the_bare_margin_moves_the_window_back(&[]);
    }

    /// Makruk seed 310412 (640×480, oblique): the margin's strip crossed by the board's
    /// edge and the bottom of its side, a quarter of the inner squares' crossing-line share
    /// showed there, and the window stayed a column onto the margin.
    #[test]
    fn a_margin_crossed_by_the_boards_edges_is_still_bare() {
        the_bare_margin_moves_the_window_back(&[8.3, 8.65]);
    }

    /// A plain grid of 64 px squares from (170, 90), a margin of wood a square wide, and
    /// the board's near edge beyond it a dark band as strong as a drawn line; `bands` more
    /// such bands across the margin, at these rows of the grid.
    fn the_bare_margin_moves_the_window_back(bands: &[f64]) {
        let (x0, y0, square) = (170, 90, 64);
        let mut gray =
            Mat::new_rows_cols_with_default(780, 900, core::CV_8U, core::Scalar::all(70.0))
                .unwrap();
        let mut fill = |from: Point, to: Point, level: f64| {
            imgproc::rectangle_points(
                &mut gray,
                from,
                to,
                core::Scalar::all(level),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        };
        let (far, near) = (
            Point::new(x0 - square, y0 - square),
            Point::new(x0 + 9 * square, y0 + 9 * square),
        );
        fill(far, near, 190.0);
        fill(
            Point::new(far.x, near.y),
            Point::new(near.x, near.y + 3),
            20.0,
        );
        for &band in bands {
            let y = y0 + (band * f64::from(square)).round() as i32;
            fill(Point::new(far.x, y - 1), Point::new(near.x, y + 2), 20.0);
        }
        for i in 0..=8 {
            let k = i * square;
            fill(
                Point::new(x0 + k - 1, y0),
                Point::new(x0 + k, y0 + 8 * square),
                20.0,
            );
            fill(
                Point::new(x0, y0 + k - 1),
                Point::new(x0 + 8 * square, y0 + k),
                20.0,
            );
        }
        let response = LineResponse::new(
            &gray,
            &gray,
            Scale::BOARD_FILLS_FRAME,
            LineKind::Drawn,
            Pieces::InSquares,
        )
        .unwrap();
        let window = |first_row: i32| {
            let (top, bottom) = (
                f64::from(y0 + first_row * square),
                f64::from(y0 + (first_row + 8) * square),
            );
            let (left, right) = (f64::from(x0), f64::from(x0 + 8 * square));
            BoardGeometry::from_corners(
                9,
                [[left, top], [right, top], [right, bottom], [left, bottom]],
            )
            .unwrap()
            .homography
        };
        assert_eq!(bare_outer_squares(&response, &window(0), 9), None);
        assert_eq!(bare_outer_squares(&response, &window(1), 9), Some((0, -1)));
    }

    #[test]
    fn segments_that_cross_touch_and_distant_ones_do_not() {
        let across = [0.0, 5.0, 10.0, 5.0];
        let down = [5.0, 0.0, 5.0, 10.0];
        assert_eq!(segment_distance(&across, &down), 0.0);
        let beside = [0.0, 8.0, 10.0, 8.0];
        assert!((segment_distance(&across, &beside) - 3.0).abs() < 1e-9);
        let beyond = [14.0, 5.0, 20.0, 5.0];
        assert!((segment_distance(&across, &beyond) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn two_grids_apart_make_two_groups() {
        let grid = |x0: f64, y0: f64| -> Vec<[f64; 4]> {
            (0..5)
                .flat_map(|k| {
                    let at = f64::from(k) * 10.0;
                    [
                        [x0, y0 + at, x0 + 40.0, y0 + at],
                        [x0 + at, y0, x0 + at, y0 + 40.0],
                    ]
                })
                .collect()
        };
        let mut segments = grid(0.0, 0.0);
        segments.extend(grid(200.0, 100.0));
        let mut groups = touching_groups(&segments, 5.0);
        groups.sort();
        assert_eq!(
            groups,
            vec![(0..10).collect::<Vec<_>>(), (10..20).collect()]
        );
    }

    /// A profile over 0..100 with strong outline peaks at 10 and 90 and, when `lines`,
    /// faint peaks every 9 from 14 to 86 (the squares centred with a margin of 4).
    fn outline_profile(lines: bool) -> Vec<f64> {
        (0..=1000)
            .map(|i| {
                let at = f64::from(i) / 10.0;
                let peak = |centre: f64, height: f64| height * (-(at - centre).powi(2) / 0.5).exp();
                // Pieces' outlines between the lines, in two squares.
                let clutter = peak(27.5, 3.0) + peak(63.5, 3.0);
                let faint: f64 = if lines {
                    (0..9).map(|k| peak(14.0 + 9.0 * f64::from(k), 4.0)).sum()
                } else {
                    0.0
                };
                10.0 + peak(10.0, 60.0) + peak(90.0, 60.0) + clutter + faint
            })
            .collect()
    }

    #[test]
    fn faint_lines_are_fitted_centred_inside_the_outline() {
        let (lattice, clarity) =
            lattice_in_profile(&outline_profile(true), (0.0, 100.0), (10.0, 90.0), 9)
                .expect("lattice");
        assert!((lattice.spacing - 9.0).abs() < 0.1, "{lattice:?}");
        assert!((lattice.offset - 14.0).abs() < 0.2, "{lattice:?}");
        assert!(clarity >= MIN_CLARITY);
        // The outline alone, with pieces between: no lattice.
        assert!(
            lattice_in_profile(&outline_profile(false), (0.0, 100.0), (10.0, 90.0), 9).is_none()
        );
    }

    #[test]
    fn the_longest_lines_merge_their_segments() {
        let positions = [
            (10.0, 50.0),
            (10.2, 40.0),
            (50.0, 20.0),
            (90.0, 80.0),
            (30.0, 5.0),
        ];
        let lines = strongest_lines(&positions, 2);
        assert_eq!(lines.len(), 2);
        assert!(
            (lines[0].0 - 10.09).abs() < 0.01 && lines[0].1 == 90.0,
            "{lines:?}"
        );
        assert_eq!(lines[1], (90.0, 80.0));
    }

    #[test]
    fn a_lattice_is_found_from_noisy_positions_with_outliers() {
        let mut positions: Vec<(f64, f64)> = (0..19)
            .map(|k| {
                (
                    12.5 + 7.25 * k as f64 + if k % 2 == 0 { 0.2 } else { -0.2 },
                    10.0,
                )
            })
            .collect();
        positions.push((3.1, 4.0));
        positions.push((160.0, 6.0));
        let lattice = fit_lattice(&positions).unwrap();
        assert!((lattice.spacing.abs() - 7.25).abs() < 0.05, "{lattice:?}");
        let index = lattice.index_of(12.5 + 7.25 * 5.0);
        assert!((index - index.round()).abs() < 0.05);
    }

    #[test]
    fn a_line_hidden_by_a_row_of_figures_still_leaves_the_board() {
        // Makruk seed 310222 at the start: the far edge and the line behind Black's back
        // rank hidden, the others shown.
        let start = [0.58, 0.12, 0.66, 0.60, 0.52, 0.67, 0.62, 0.57, 0.06];
        assert!(lines_shown_round_figures(&start));
        // Both outer lines gone, or two neighbours: not a board's window.
        let mut both_edges = start;
        both_edges[0] = 0.05;
        assert!(!lines_shown_round_figures(&both_edges));
        let mut neighbours = start;
        neighbours[4] = 0.1;
        neighbours[5] = 0.1;
        assert!(!lines_shown_round_figures(&neighbours));
        // A third of the lines at most.
        let sparse = [0.6, 0.1, 0.6, 0.1, 0.6, 0.1, 0.6, 0.1, 0.6];
        assert!(!lines_shown_round_figures(&sparse));
    }

    #[test]
    fn half_square_lines_crossed_by_pieces_give_way_to_every_second_line_when_asked() {
        // Makruk seed 310228: square edges at 0.72, the lines half way between them at
        // 0.5 to 0.6 where figures stand in line, the board's outline beyond at 0.8.
        let coverage = [
            0.0, 0.0, 0.80, 0.72, 0.53, 0.72, 0.12, 0.73, 0.53, 0.72, 0.12, 0.73, 0.11, 0.73, 0.55,
            0.73, 0.10, 0.74, 0.62, 0.73, 0.81, 0.0, 0.0,
        ];
        let lattice = Lattice {
            offset: 0.0,
            spacing: 10.0,
        };
        assert!(every_second_line(&coverage, 0, &lattice, false).is_none());
        let halved = every_second_line(&coverage, 0, &lattice, true).expect("halved");
        assert_eq!((halved.offset, halved.spacing), (10.0, 20.0));
    }

    #[test]
    fn the_best_window_is_the_covered_run() {
        let coverage = [0.0, 0.05, 0.9, 0.8, 0.95, 0.7, 0.85, 0.1, 0.0];
        let (start, _, weakest) = best_window(&coverage, 5).unwrap();
        assert_eq!((start, weakest), (2, 0.7));
        // A wider window takes in bare lines; a narrower one leaves covered lines out.
        let fit = |n| best_window(&coverage, n).unwrap().1;
        assert!(fit(5) > fit(7) && fit(5) > fit(3));
        assert_eq!(longest_covered_run(&coverage), 5);
    }

    #[test]
    fn orientation_puts_row_0_at_the_top_and_goes_clockwise() {
        // Corners given bottom-left first and anticlockwise.
        let geometry = BoardGeometry::from_corners(
            9,
            [
                [100.0, 900.0],
                [900.0, 900.0],
                [900.0, 100.0],
                [100.0, 100.0],
            ],
        )
        .unwrap();
        let corners = image_order(&geometry).corners();
        let expected = [
            [100.0, 100.0],
            [900.0, 100.0],
            [900.0, 900.0],
            [100.0, 900.0],
        ];
        for (c, e) in corners.iter().zip(expected) {
            assert!(
                (c[0] - e[0]).abs() < 1e-6 && (c[1] - e[1]).abs() < 1e-6,
                "{corners:?}"
            );
        }
    }
}
