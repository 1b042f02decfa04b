//! Following a board that moved in the picture (a bumped camera or board) from where it
//! stood before, rather than finding it anew.
//!
//! The locator needs enough line segments to find a grid with no prior, and a dim,
//! blurred board at low resolution gives them only on some frames (Go seed 100335, a
//! 19×19 board at 640×480: found at 7 s, and again only 10 s after its bump). The view
//! before the bump says where to look: the board, with its outline and whatever lies
//! round it, is matched between the two views (normalised correlation on pictures
//! blurred by about a spacing, so that the grid's lines, which match themselves a whole
//! spacing off, do not count), first the whole board, then a window round each corner
//! blurred less; the grid those four shifts give is then re-fitted to the lines of the
//! new view.

use super::locate::{self, refitted};
use super::{BoardGeometry, gray, homography_from_4};
use opencv::core::{self, Mat, Point, Rect, Size};
use opencv::imgproc;
use opencv::prelude::*;

/// The grids where the board of `previous` (its grid in `before`) may stand in `after`:
/// the grid moved by the measured shifts, then that grid re-fitted to the lines of
/// `after`. Empty when the views cannot be compared. The caller checks each against the
/// picture.
pub fn follow(
    before: &Mat,
    after: &Mat,
    previous: &BoardGeometry,
) -> opencv::Result<Vec<BoardGeometry>> {
    if before.size()? != after.size()? {
        return Ok(Vec::new());
    }
    let (before, after, factor) = match (locate::reduced(before)?, locate::reduced(after)?) {
        (Some((b, factor)), Some((a, _))) => (b, a, factor),
        _ => (before.clone(), after.clone(), 1.0),
    };
    let (before, after) = (gray(&before)?, gray(&after)?);
    let Some(moved) = moved_grid(&before, &after, &previous.scaled(factor))? else {
        return Ok(Vec::new());
    };
    let mut grids = vec![moved.clone()];
    grids.extend(refitted(&after, &moved)?);
    Ok(grids.into_iter().map(|g| g.scaled(1.0 / factor)).collect())
}

/// The farthest a bump is followed, as a share of the picture's longest side.
const REACH: f64 = 0.15;

/// The grid of `previous` carried by the shifts measured round its corners.
fn moved_grid(
    before: &Mat,
    after: &Mat,
    previous: &BoardGeometry,
) -> opencv::Result<Option<BoardGeometry>> {
    let corners = previous.corners();
    let (xs, ys) = (corners.map(|c| c[0]), corners.map(|c| c[1]));
    let spacing = spacing_near(previous);
    let margin = spacing;
    let left = xs.iter().copied().fold(f64::INFINITY, f64::min) - margin;
    let right = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max) + margin;
    let top = ys.iter().copied().fold(f64::INFINITY, f64::min) - margin;
    let bottom = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max) + margin;
    let reach = REACH * f64::from(before.cols().max(before.rows()));
    let (coarse_before, coarse_after) = (blurred(before, spacing)?, blurred(after, spacing)?);
    let Some(whole) = shift(
        &coarse_before,
        &coarse_after,
        [left, top, right, bottom],
        [0.0, 0.0],
        reach,
    )?
    else {
        return Ok(None);
    };
    // A window of a few spacings round each corner: the board's outline and the lines
    // meeting there.
    let (fine_before, fine_after) = (
        blurred(before, spacing / 3.0)?,
        blurred(after, spacing / 3.0)?,
    );
    let half = 3.0 * spacing;
    let mut moved = [[0.0; 2]; 4];
    for (corner, place) in corners.iter().zip(moved.iter_mut()) {
        let [x, y] = *corner;
        let Some(total) = shift(
            &fine_before,
            &fine_after,
            [x - half, y - half, x + half, y + half],
            whole,
            spacing,
        )?
        else {
            return Ok(None);
        };
        *place = [x + total[0], y + total[1]];
    }
    let last = (previous.size - 1) as f64;
    let grid = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    Ok(
        homography_from_4(&grid, &moved).map(|homography| BoardGeometry {
            size: previous.size,
            homography,
        }),
    )
}

/// The smallest spacing between neighbouring outer points, in pixels.
fn spacing_near(geometry: &BoardGeometry) -> f64 {
    let last = (geometry.size - 1) as f64;
    [
        (0.0, 0.0, 1.0, 0.0),
        (last, 0.0, last, 1.0),
        (last, last, last - 1.0, last),
        (0.0, last, 0.0, last - 1.0),
    ]
    .iter()
    .map(|&(c, r, c2, r2)| {
        let [x, y] = geometry.to_image(c, r);
        let [x2, y2] = geometry.to_image(c2, r2);
        (x - x2).hypot(y - y2)
    })
    .fold(f64::INFINITY, f64::min)
}

/// Where what `before` shows in `window` (`[left, top, right, bottom]`, cut to the
/// picture) best matches `after`, looked for within `reach` of `guess`: the shift from
/// `before` to `after`, to a fraction of a pixel. `None` when the window is too small
/// once cut, or matches nothing clearly.
fn shift(
    before: &Mat,
    after: &Mat,
    [left, top, right, bottom]: [f64; 4],
    guess: [f64; 2],
    reach: f64,
) -> opencv::Result<Option<[f64; 2]>> {
    let (width, height) = (before.cols(), before.rows());
    let reach = reach.ceil() as i32;
    let [gx, gy] = guess.map(|v| v.round() as i32);
    // The template must lie inside the picture, and so must wherever it is looked for.
    let x0 = (left.round() as i32).max(0).max(-gx + reach);
    let y0 = (top.round() as i32).max(0).max(-gy + reach);
    let x1 = (right.round() as i32).min(width).min(width - gx - reach);
    let y1 = (bottom.round() as i32).min(height).min(height - gy - reach);
    if x1 - x0 < 16 || y1 - y0 < 16 {
        return Ok(None);
    }
    let template = Mat::roi(before, Rect::new(x0, y0, x1 - x0, y1 - y0))?;
    let area = Rect::new(
        x0 + gx - reach,
        y0 + gy - reach,
        x1 - x0 + 2 * reach,
        y1 - y0 + 2 * reach,
    );
    let searched = Mat::roi(after, area)?;
    let mut scores = Mat::default();
    imgproc::match_template_def(&searched, &template, &mut scores, imgproc::TM_CCOEFF_NORMED)?;
    let mut best = 0.0;
    let mut at = Point::default();
    core::min_max_loc(
        &scores,
        None,
        Some(&mut best),
        None,
        Some(&mut at),
        &core::no_array(),
    )?;
    if best < MATCHED {
        return Ok(None);
    }
    // A parabola through the peak and its neighbours places it between pixels.
    let score =
        |x: i32, y: i32| -> opencv::Result<f64> { Ok(f64::from(*scores.at_2d::<f32>(y, x)?)) };
    let mut offset = [0.0; 2];
    if at.x > 0 && at.x + 1 < scores.cols() {
        offset[0] = vertex(score(at.x - 1, at.y)?, best, score(at.x + 1, at.y)?);
    }
    if at.y > 0 && at.y + 1 < scores.rows() {
        offset[1] = vertex(score(at.x, at.y - 1)?, best, score(at.x, at.y + 1)?);
    }
    Ok(Some([
        f64::from(gx - reach + at.x) + offset[0],
        f64::from(gy - reach + at.y) + offset[1],
    ]))
}

/// The normalised correlation below which two views are not the same board: a hand or
/// changed light lowers it, another scene brings it near zero.
const MATCHED: f64 = 0.5;

/// The vertex of the parabola through (−1, `a`), (0, `b`), (1, `c`), within half a step.
fn vertex(a: f64, b: f64, c: f64) -> f64 {
    let curvature = a - 2.0 * b + c;
    if curvature.abs() < 1e-12 {
        return 0.0;
    }
    (0.5 * (a - c) / curvature).clamp(-0.5, 0.5)
}

/// `gray` blurred by a Gaussian of standard deviation `sigma` pixels, as 32-bit floats.
fn blurred(gray: &Mat, sigma: f64) -> opencv::Result<Mat> {
    let mut floats = Mat::default();
    gray.convert_to_def(&mut floats, core::CV_32F)?;
    let mut out = Mat::default();
    imgproc::gaussian_blur_def(&floats, &mut out, Size::default(), sigma.max(0.5))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point, Scalar};

    /// A 19×19 board seen slightly in perspective on a table with a bowl beside it.
    fn scene(corners: [[f64; 2]; 4]) -> (Mat, BoardGeometry) {
        let mut image =
            Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(30.0)).unwrap();
        let geometry = BoardGeometry::from_corners(19, corners).unwrap();
        let at = |c: f64, r: f64| {
            let [x, y] = geometry.to_image(c, r);
            Point::new(x.round() as i32, y.round() as i32)
        };
        let outline: Vec<Point> = [(-0.8, -0.8), (18.8, -0.8), (18.8, 18.8), (-0.8, 18.8)]
            .iter()
            .map(|&(c, r)| at(c, r))
            .collect();
        imgproc::fill_convex_poly_def(
            &mut image,
            &core::Vector::from_slice(&outline),
            Scalar::new(60.0, 110.0, 150.0, 0.0),
        )
        .unwrap();
        for i in 0..19 {
            let i = f64::from(i);
            for (from, to) in [(at(i, 0.0), at(i, 18.0)), (at(0.0, i), at(18.0, i))] {
                imgproc::line_def(&mut image, from, to, Scalar::all(20.0)).unwrap();
            }
        }
        imgproc::circle_def(&mut image, at(3.0, 3.0), 6, Scalar::all(10.0)).unwrap();
        imgproc::circle(
            &mut image,
            Point::new(560, 80),
            40,
            Scalar::new(40.0, 90.0, 130.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        (image, geometry)
    }

    const BEFORE: [[f64; 2]; 4] = [
        [160.0, 120.0],
        [470.0, 110.0],
        [540.0, 420.0],
        [100.0, 430.0],
    ];

    #[test]
    fn a_bumped_board_is_followed_onto_its_own_lines() {
        // Moved by more than a spacing (about 17 px) and turned a little.
        let after = BEFORE.map(|[x, y]| [x + 24.0 + 0.02 * y, y - 19.0 - 0.01 * x]);
        let (before_image, before) = scene(BEFORE);
        let (after_image, truth) = scene(after);
        let grids = follow(&before_image, &after_image, &before).unwrap();
        assert!(
            grids.len() >= 2,
            "moved, then re-fitted to the lines: {grids:?}"
        );
        // Moved near enough for the lines to draw it on (a third of a spacing), then on
        // them.
        assert!(
            grids[0].corner_shift(&truth) < 6.0,
            "{:?} for {after:?}",
            grids[0].corners()
        );
        for grid in &grids[1..] {
            assert!(
                grid.corner_shift(&truth) < 1.0,
                "{:?} for {after:?}",
                grid.corners()
            );
        }
    }

    #[test]
    fn another_picture_gives_nothing_to_follow() {
        let (before_image, before) = scene(BEFORE);
        let mut noise =
            Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(0.0)).unwrap();
        core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0)).unwrap();
        assert!(follow(&before_image, &noise, &before).unwrap().is_empty());
    }
}
