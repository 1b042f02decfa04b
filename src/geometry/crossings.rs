//! A checkered 8×8 lattice fitted to its squares' crossings.
//!
//! The locator's lattice comes from lines: drawn lines, square edges, or the board's
//! outline. On a dim or low-contrast checkered board seen through a strong lens the
//! edges it fits can be the board's border or the far figures' tops, and its corners then
//! lie a third to half a square off the truth (Makruk seeds 310335, 310313; Mak-hos
//! 300270): every figure read into the wrong square. The 49 inner crossings of a checkered
//! board are where two dark and two light squares meet corner to corner, a pattern no
//! border, figure or shadow makes, and one that holds whatever the squares' colours. The
//! lattice is moved, corner by corner, to where the crossings show that pattern most.

use super::BoardGeometry;
use opencv::calib3d;
use opencv::core::{self, Mat, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Lines per side of the lattice, squares per side.
const LINES: usize = 9;
const LAST: f64 = 8.0;

/// How far from a crossing, diagonally and in squares, its four squares are sampled: well
/// inside each square, short of the middle where a piece stands.
const REACH: f64 = 0.22;

/// How far each crossing is looked for from its place on the lattice found, in squares
/// either way: the lattices seen off were off by up to half a square, and the pattern
/// repeats a square away.
const SEARCH: f64 = 0.5;
const SEARCH_STEP: f64 = 0.05;

/// The corner steps of the last polish, in squares, coarsest first.
const CORNER_STEPS: [f64; 3] = [0.04, 0.02, 0.01];

/// How far a crossing may lie from the lattice fitted to them all and still count, in
/// squares.
const CROSSING_TOLERANCE: f64 = 0.08;

/// The fewest crossings that must agree on the lattice.
const MIN_CROSSINGS: usize = 12;

/// The least mean crossing contrast (Lab, chroma doubled) a fitted lattice must show: a
/// plain grid's crossings show none, a checkered board's 15 and more on the renders.
const MIN_CONTRAST: f64 = 6.0;

/// How much clearer than on the lattice found the crossings must show for the fit to
/// replace it. A homography cannot follow a lens's bow: on a lattice already on the
/// squares the fit trades the outer corners for the inner crossings (Makruk 310338,
/// Mak-hos 300277: corners 0.03 of a square off before, 0.1–0.3 after, for a few
/// percent more contrast), so only a lattice clearly off is replaced.
const MIN_GAIN: f64 = 1.15;

/// The picture in Lab (chroma doubled, as the square tones), blurred by a small share of
/// a square, row-major, for sampling between pixels.
struct Picture {
    values: Vec<[f32; 3]>,
    width: usize,
    height: usize,
}

impl Picture {
    fn new(image: &Mat, square_pixels: f64) -> opencv::Result<Option<Picture>> {
        if image.channels() != 3 || image.cols() < 2 || image.rows() < 2 {
            return Ok(None);
        }
        let mut lab = Mat::default();
        imgproc::cvt_color_def(image, &mut lab, imgproc::COLOR_BGR2Lab)?;
        let sigma = (square_pixels * 0.06).max(0.8);
        let mut blurred = Mat::default();
        imgproc::gaussian_blur_def(&lab, &mut blurred, core::Size::new(0, 0), sigma)?;
        let blurred = if blurred.is_continuous() {
            blurred
        } else {
            blurred.try_clone()?
        };
        let (width, height) = (blurred.cols() as usize, blurred.rows() as usize);
        let values = blurred
            .data_bytes()?
            .chunks_exact(3)
            .map(|v| {
                [
                    f32::from(v[0]),
                    2.0 * f32::from(v[1]),
                    2.0 * f32::from(v[2]),
                ]
            })
            .collect();
        Ok(Some(Picture {
            values,
            width,
            height,
        }))
    }

    fn at(&self, [x, y]: [f64; 2]) -> Option<[f64; 3]> {
        if !(x >= 0.0 && y >= 0.0 && x < (self.width - 1) as f64 && y < (self.height - 1) as f64) {
            return None;
        }
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let v = |xi: usize, yi: usize| self.values[yi * self.width + xi];
        let mut out = [0.0; 3];
        for (c, slot) in out.iter_mut().enumerate() {
            let top = f64::from(v(x0, y0)[c]) * (1.0 - fx) + f64::from(v(x0 + 1, y0)[c]) * fx;
            let bottom =
                f64::from(v(x0, y0 + 1)[c]) * (1.0 - fx) + f64::from(v(x0 + 1, y0 + 1)[c]) * fx;
            *slot = top * (1.0 - fy) + bottom * fy;
        }
        Some(out)
    }
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn mean(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        (a[0] + b[0]) / 2.0,
        (a[1] + b[1]) / 2.0,
        (a[2] + b[2]) / 2.0,
    ]
}

/// How clearly crossing (`col`, `row`) of `geometry` shows two squares of one colour
/// corner to corner against two of another: the difference between the diagonals less
/// the differences within each. A piece over it, an edge or a bare square scores at most
/// about nothing; negative scores count as nothing, so pieces do not pull the fit.
fn crossing_contrast(picture: &Picture, geometry: &BoardGeometry, col: f64, row: f64) -> f64 {
    let sample = |dc: f64, dr: f64| picture.at(geometry.to_image(col + dc, row + dr));
    let (Some(a), Some(c), Some(b), Some(d)) = (
        sample(-REACH, -REACH),
        sample(REACH, REACH),
        sample(REACH, -REACH),
        sample(-REACH, REACH),
    ) else {
        return 0.0;
    };
    let across = distance(mean(a, c), mean(b, d));
    let within = (distance(a, c) + distance(b, d)) / 2.0;
    (across - within).max(0.0)
}

/// The mean contrast of the 49 inner crossings.
fn lattice_contrast(picture: &Picture, geometry: &BoardGeometry) -> f64 {
    let mut sum = 0.0;
    for row in 1..LINES - 1 {
        for col in 1..LINES - 1 {
            sum += crossing_contrast(picture, geometry, col as f64, row as f64);
        }
    }
    sum / ((LINES - 2) * (LINES - 2)) as f64
}

/// The lattice whose corners lie `offsets` (grid units, per corner) from `base`'s.
fn moved(base: &BoardGeometry, offsets: &[[f64; 2]; 4]) -> Option<BoardGeometry> {
    let grid = [[0.0, 0.0], [LAST, 0.0], [LAST, LAST], [0.0, LAST]];
    let corners = std::array::from_fn(|i| {
        base.to_image(grid[i][0] + offsets[i][0], grid[i][1] + offsets[i][1])
    });
    BoardGeometry::from_corners(LINES, corners)
}

/// Where crossing (`col`, `row`) of `geometry` shows clearest within `reach` of its
/// place, in grid units of `geometry`, and how clearly.
fn clearest_near(
    picture: &Picture,
    geometry: &BoardGeometry,
    col: f64,
    row: f64,
    reach: f64,
) -> ([f64; 2], f64) {
    let steps = (reach / SEARCH_STEP).round() as i32;
    let mut best = ([col, row], 0.0);
    for i in -steps..=steps {
        for j in -steps..=steps {
            let at = [
                col + f64::from(i) * SEARCH_STEP,
                row + f64::from(j) * SEARCH_STEP,
            ];
            let s = crossing_contrast(picture, geometry, at[0], at[1]);
            if s > best.1 {
                best = (at, s);
            }
        }
    }
    best
}

/// The lattice through the inner crossings of `near`, each looked for within `reach` of
/// its place, fitted with RANSAC so that crossings under pieces or taken for a
/// neighbour's do not pull it.
fn through_crossings(
    picture: &Picture,
    near: &BoardGeometry,
    reach: f64,
    square_pixels: f64,
) -> Option<BoardGeometry> {
    let mut grid = Vector::<core::Point2f>::new();
    let mut image = Vector::<core::Point2f>::new();
    for row in 1..LINES - 1 {
        for col in 1..LINES - 1 {
            let (at, contrast) = clearest_near(picture, near, col as f64, row as f64, reach);
            if contrast >= MIN_CONTRAST {
                let [x, y] = near.to_image(at[0], at[1]);
                grid.push(core::Point2f::new(col as f32, row as f32));
                image.push(core::Point2f::new(x as f32, y as f32));
            }
        }
    }
    if grid.len() < MIN_CROSSINGS {
        return None;
    }
    let mut mask = Mat::default();
    let m = calib3d::find_homography(
        &grid,
        &image,
        &mut mask,
        calib3d::RANSAC,
        CROSSING_TOLERANCE * square_pixels,
    )
    .ok()?;
    let agreeing = (0..mask.rows())
        .filter(|&i| mask.at_2d::<u8>(i, 0).is_ok_and(|v| *v != 0))
        .count();
    (agreeing >= MIN_CROSSINGS).then_some(())?;
    let homography = super::homography_from_mat(&m)?;
    Some(BoardGeometry {
        size: near.size,
        homography,
    })
}

/// `found` (size 9) moved onto the crossings of the checkered squares it lies on, when
/// they show clearly there and clearly better than on `found`; `None` otherwise (a plain
/// grid, a lattice already on the squares, a picture too small).
///
/// Each inner crossing is looked for on its own near its place (a lattice off in
/// perspective is off by different amounts at each), the lattice fitted through those
/// that agree, and of it and the lattices a whole square over the one whose crossings
/// show clearest kept: at half a square off, some crossings are taken for a neighbour's,
/// and a lattice a square over has a row of its crossings on the board's border.
pub fn fitted_to_crossings(
    image: &Mat,
    found: &BoardGeometry,
) -> opencv::Result<Option<BoardGeometry>> {
    if found.size != LINES {
        return Ok(None);
    }
    let corners = found.corners();
    let square_pixels = (0..4)
        .map(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % 4]);
            (b[0] - a[0]).hypot(b[1] - a[1]) / LAST
        })
        .fold(f64::MAX, f64::min);
    let Some(picture) = Picture::new(image, square_pixels)? else {
        return Ok(None);
    };
    let before = lattice_contrast(&picture, found);
    let Some(through) = through_crossings(&picture, found, SEARCH, square_pixels) else {
        return Ok(None);
    };
    let Some(onto) = [(0.0, 0.0), (-1.0, 0.0), (1.0, 0.0), (0.0, -1.0), (0.0, 1.0)]
        .into_iter()
        .filter_map(|(dc, dr)| moved(&through, &[[dc, dr]; 4]))
        .map(|g| {
            let s = lattice_contrast(&picture, &g);
            (g, s)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Ok(None);
    };
    let (fitted, contrast) = polished(&picture, onto);
    let (width, height) = (f64::from(image.cols()), f64::from(image.rows()));
    Ok((contrast >= MIN_CONTRAST
        && contrast >= MIN_GAIN * before
        && fitted.seen_square(width, height))
    .then_some(fitted))
}

/// The lattice's corners moved a little at a time while its crossings show clearer.
fn polished(picture: &Picture, (start, contrast): (BoardGeometry, f64)) -> (BoardGeometry, f64) {
    let mut best = ([[0.0; 2]; 4], contrast);
    for step in CORNER_STEPS {
        loop {
            let mut improved = false;
            for corner in 0..4 {
                for axis in 0..2 {
                    for sign in [-1.0, 1.0] {
                        let mut offsets = best.0;
                        offsets[corner][axis] += sign * step;
                        let Some(g) = moved(&start, &offsets) else {
                            continue;
                        };
                        let s = lattice_contrast(picture, &g);
                        if s > best.1 {
                            best = (offsets, s);
                            improved = true;
                        }
                    }
                }
            }
            if !improved {
                break;
            }
        }
    }
    (moved(&start, &best.0).unwrap_or(start), best.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Scalar};

    /// A top-down checkered (or plain) board: squares of 64 px from (170, 90), on a frame
    /// of the light squares' colour.
    fn board(checkered: bool) -> Mat {
        let mut image =
            Mat::new_rows_cols_with_default(700, 900, CV_8UC3, Scalar::new(60.0, 50.0, 40.0, 0.0))
                .unwrap();
        let light = Scalar::new(150.0, 190.0, 220.0, 0.0);
        let dark = Scalar::new(40.0, 70.0, 110.0, 0.0);
        imgproc::rectangle_points(
            &mut image,
            Point::new(140, 60),
            Point::new(742, 662),
            light,
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        for row in 0..8 {
            for col in 0..8 {
                let colour = if checkered && (row + col) % 2 == 1 {
                    dark
                } else {
                    light
                };
                imgproc::rectangle_points(
                    &mut image,
                    Point::new(170 + col * 64, 90 + row * 64),
                    Point::new(170 + (col + 1) * 64 - 1, 90 + (row + 1) * 64 - 1),
                    colour,
                    -1,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        image
    }

    const TRUE_CORNERS: [[f64; 2]; 4] =
        [[170.0, 90.0], [682.0, 90.0], [682.0, 602.0], [170.0, 602.0]];

    /// Each corner off differently, up to 0.45 of a square: a lattice off in perspective.
    const OFF_CORNERS: [[f64; 2]; 4] = [
        [195.0, 110.0],
        [700.0, 80.0],
        [690.0, 625.0],
        [160.0, 590.0],
    ];

    #[test]
    fn a_lattice_off_by_a_fraction_of_a_square_is_moved_onto_the_crossings() {
        // The contrast is flat while the four samples stay inside their squares, so on
        // sharp synthetic squares the fit lands within about a tenth of a square.
        let found = BoardGeometry::from_corners(LINES, OFF_CORNERS).unwrap();
        let fitted = fitted_to_crossings(&board(true), &found)
            .unwrap()
            .expect("a checkered board's crossings fit");
        for (a, b) in fitted.corners().iter().zip(TRUE_CORNERS) {
            let error = (a[0] - b[0]).hypot(a[1] - b[1]) / 64.0;
            assert!(
                error < 0.15,
                "corner {a:?} is {error:.2} of a square off {b:?}"
            );
        }
    }

    #[test]
    fn a_lattice_on_the_squares_or_on_a_plain_board_is_kept() {
        let on = BoardGeometry::from_corners(LINES, TRUE_CORNERS).unwrap();
        assert!(fitted_to_crossings(&board(true), &on).unwrap().is_none());
        let found = BoardGeometry::from_corners(LINES, OFF_CORNERS).unwrap();
        assert!(
            fitted_to_crossings(&board(false), &found)
                .unwrap()
                .is_none()
        );
    }
}
