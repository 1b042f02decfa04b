//! Lens self-calibration: a camera's barrel distortion measured on the board's own lines.
//!
//! Everything downstream maps the grid to pixels with one homography, which holds only for
//! a lens that keeps straight lines straight. A webcam's wide lens does not: near the
//! frame's edges the board's lines bow, and a board that fills the frame cannot be fitted
//! by any homography (Go seed 100463: 19×19 at 1280×720, k1 = −0.25; the grid's near edge
//! fitted on the board's border, the start never read, not one of 77 moves recorded). A
//! chessboard calibration (`kradan calibrate-camera`) fixes that, but nobody calibrates the
//! webcam a club sets up on the morning of a tournament.
//!
//! A board's grid is a calibration pattern already: straight lines, evenly spaced. Under
//! each of a range of one-parameter radial lenses the picture is straightened and the grid
//! located; the lens under which the located grid lies on the drawn lines along their
//! whole length is the camera's. The model is OpenCV's radial `k1` about the picture's
//! centre, with the focal length fixed at the picture's longest side: for a single radial
//! term any focal length gives the same family of distortions (`k1` scales with its
//! square), so nothing is lost by fixing it, and the result is a [`Camera`] the rest of the
//! code already knows how to apply.

use super::calibration::Camera;
use super::{BoardGeometry, locate};
use opencv::core::{self, Mat, Size};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// The first, coarse, lenses tried: from a strong wide-angle barrel (−0.6 at a focal
/// length of one picture width is a 100° lens's) to a slight pincushion.
const COARSE_K1: [f64; 8] = [-0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0, 0.1];
/// The steps either side of the best coarse lens, then of the best of those.
const FINE_STEPS: [f64; 2] = [0.05, 0.025];

/// How much straighter, as a share, the grid must lie under a lens than as seen before the
/// picture is corrected: a nearly straight lens is left alone (every frame straightened
/// costs a remap, and a correction that is mostly noise helps nothing).
const MIN_GAIN: f64 = 0.10;

/// The least straightness, in grey levels, under which a lens is believed: a grid whose
/// lines hardly stand out from what lies between them (tall Makruk figures, whose edges
/// crowd the squares' middles) scores lenses by noise (Makruk 310544: −2.8 against −4.1
/// as seen, k1 −0.55 for a true −0.22, and nine moves lost to the straightening).
const MIN_CONTRAST: f64 = 5.0;

/// Grid spacings between samples along a line.
const SAMPLE_STEP: f64 = 0.1;

/// What the search found: the lens, and how well the grid lay on the lines under it and
/// as seen.
#[derive(Clone, Debug, PartialEq)]
pub struct LensEstimate {
    /// OpenCV's `k1` for a focal length of the picture's longest side, about its centre.
    pub k1: f64,
    /// The grid's contrast on its lines under that lens: the mean line response on the
    /// located grid's lines less that halfway between them, in grey levels.
    pub straightness: f64,
    /// The same as seen, uncorrected; `None` when no board was located as seen.
    pub straightness_as_seen: Option<f64>,
    /// The board located in the straightened picture, in its pixels.
    pub geometry: BoardGeometry,
}

impl LensEstimate {
    /// Whether straightening the picture is worth its cost: the lens bends, and the grid
    /// lies clearly better on the lines with the bend taken out.
    pub fn worth_correcting(&self) -> bool {
        self.k1 != 0.0
            && self.straightness >= MIN_CONTRAST
            && self.straightness_as_seen.is_none_or(|seen| {
                self.straightness > seen + MIN_GAIN * seen.abs().max(MIN_CONTRAST)
            })
    }

    /// The camera of a `width` × `height` picture with this lens.
    pub fn camera(&self, width: i32, height: i32) -> Camera {
        lens_camera(self.k1, width, height)
    }
}

/// The camera with radial distortion `k1` for a focal length of the longest side, about
/// the centre of a `width` × `height` picture.
fn lens_camera(k1: f64, width: i32, height: i32) -> Camera {
    let focal = f64::from(width.max(height));
    let (cx, cy) = (f64::from(width - 1) / 2.0, f64::from(height - 1) / 2.0);
    Camera {
        matrix: [[focal, 0.0, cx], [0.0, focal, cy], [0.0, 0.0, 1.0]],
        distortion: vec![k1, 0.0, 0.0, 0.0, 0.0],
        rms_error: None,
    }
}

/// What marks the grid's lines on the board the search looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marking {
    /// Dark drawn lines (a Go board, a plain Makruk grid).
    DrawnLines,
    /// Drawn lines or the edges between squares of two colours (an 8×8 board, checkered
    /// or not).
    LinesOrSquareEdges,
}

/// A lens tried: its `k1`, and the grid's straightness and the grid when one was located.
type Tried = (f64, Option<(f64, BoardGeometry)>);

/// Searches the lens under which `locate` finds the straightest grid in `image`; `None`
/// when no board is located under any lens tried.
pub fn estimate(
    image: &Mat,
    marking: Marking,
    locate: &dyn Fn(&Mat) -> opencv::Result<Option<BoardGeometry>>,
) -> opencv::Result<Option<LensEstimate>> {
    let (small, _) = match locate::reduced(image)? {
        Some(reduced) => reduced,
        None => (image.clone(), 1.0),
    };
    let response = line_response(&small, marking)?;
    let mut tried: Vec<Tried> = Vec::new();
    let try_lens = |tried: &mut Vec<Tried>, k1: f64| -> opencv::Result<()> {
        if tried.iter().any(|(k, _)| (k - k1).abs() < 1e-9) {
            return Ok(());
        }
        let straightened = Undistorter::new(&lens_camera(k1, small.cols(), small.rows()), &small)?;
        let picture = straightened.apply(&small)?;
        let found = match locate(&picture)? {
            Some(geometry) => {
                let lines = straightened.apply(&response)?;
                Some((straightness(&lines, &geometry)?, geometry))
            }
            None => None,
        };
        tried.push((k1, found));
        Ok(())
    };
    for k1 in COARSE_K1 {
        try_lens(&mut tried, k1)?;
    }
    let best = |tried: &[Tried]| {
        tried
            .iter()
            .filter_map(|(k1, found)| found.as_ref().map(|(score, _)| (*k1, *score)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k1, _)| k1)
    };
    for step in FINE_STEPS {
        let Some(centre) = best(&tried) else {
            return Ok(None);
        };
        try_lens(&mut tried, centre - step)?;
        try_lens(&mut tried, centre + step)?;
    }
    let Some(k1) = best(&tried) else {
        return Ok(None);
    };
    let scored = |k: f64| {
        tried
            .iter()
            .find(|(tried_k1, _)| *tried_k1 == k)
            .and_then(|(_, found)| found.clone())
    };
    let Some((straightness, geometry)) = scored(k1) else {
        return Ok(None);
    };
    let factor =
        f64::from(image.cols().max(image.rows())) / f64::from(small.cols().max(small.rows()));
    Ok(Some(LensEstimate {
        k1,
        straightness,
        straightness_as_seen: scored(0.0).map(|(score, _)| score),
        geometry: geometry.scaled(factor),
    }))
}

/// Dark thin lines, as the locator sees drawn grid lines (a black-hat a little wider than
/// a line), and for squares of two colours the steps between them (a 3×3 morphological
/// gradient); widened by a pixel each way so a grid a pixel off its line still counts as
/// on it. Drawn lines alone on a Go board: a stone's rim is a step too, half a spacing
/// from the lines around it, where the score looks for nothing.
fn line_response(picture: &Mat, marking: Marking) -> opencv::Result<Mat> {
    let gray = super::gray(picture)?;
    let longest = gray.cols().max(gray.rows());
    let side = ((f64::from(longest) / 150.0).round() as i32).max(3) | 1;
    let mut lines = locate::morphology(&gray, imgproc::MORPH_BLACKHAT, side)?;
    if marking == Marking::LinesOrSquareEdges {
        let steps = locate::morphology(&gray, imgproc::MORPH_GRADIENT, 3)?;
        let mut either = Mat::default();
        core::max(&lines, &steps, &mut either)?;
        lines = either;
    }
    locate::morphology(&lines, imgproc::MORPH_DILATE, 3)
}

/// The mean line response on the grid's lines less that halfway between them: a grid
/// whose lines bow away from the fitted ones loses along the stretches where they part.
fn straightness(response: &Mat, geometry: &BoardGeometry) -> opencv::Result<f64> {
    let last = (geometry.size - 1) as f64;
    let samples = (last / SAMPLE_STEP).round() as usize;
    let mean_along = |offsets: &mut dyn Iterator<Item = f64>| -> opencv::Result<f64> {
        let (mut sum, mut count) = (0.0, 0usize);
        for line in offsets {
            for step in 0..=samples {
                let t = step as f64 * SAMPLE_STEP;
                for [x, y] in [geometry.to_image(line, t), geometry.to_image(t, line)] {
                    let (xi, yi) = (x.round() as i32, y.round() as i32);
                    if xi >= 0 && yi >= 0 && xi < response.cols() && yi < response.rows() {
                        sum += f64::from(*response.at_2d::<u8>(yi, xi)?);
                    }
                    count += 1;
                }
            }
        }
        Ok(if count == 0 { 0.0 } else { sum / count as f64 })
    };
    let on = mean_along(&mut (0..geometry.size).map(|i| i as f64))?;
    let between = mean_along(&mut (0..geometry.size - 1).map(|i| i as f64 + 0.5))?;
    Ok(on - between)
}

/// A lens correction made ready for pictures of one size: the remapping is computed once,
/// and each frame costs one lookup per pixel.
pub struct Undistorter {
    size: Size,
    map_xy: Mat,
    map_fraction: Mat,
}

impl Undistorter {
    /// The correction of `camera` (whose matrix is for pictures the size of `like`).
    pub fn new(camera: &Camera, like: &Mat) -> opencv::Result<Self> {
        let size = like.size()?;
        let matrix = Mat::from_slice_2d(&camera.matrix)?;
        let distortion = Mat::from_slice(&camera.distortion)?;
        let (mut map_xy, mut map_fraction) = (Mat::default(), Mat::default());
        calib3d::init_undistort_rectify_map(
            &matrix,
            &distortion,
            &core::no_array(),
            &matrix,
            size,
            core::CV_16SC2,
            &mut map_xy,
            &mut map_fraction,
        )?;
        Ok(Undistorter {
            size,
            map_xy,
            map_fraction,
        })
    }

    /// Width and height of the pictures this was made for.
    pub fn size(&self) -> (i32, i32) {
        (self.size.width, self.size.height)
    }

    /// `picture` as a lens without distortion would have taken it, at the same size. The
    /// picture must be the size this was made for.
    pub fn apply(&self, picture: &Mat) -> opencv::Result<Mat> {
        if picture.size()? != self.size {
            return Err(opencv::Error::new(
                core::StsBadSize,
                format!(
                    "lens correction made for {}×{} pictures, given {}×{}",
                    self.size.width,
                    self.size.height,
                    picture.cols(),
                    picture.rows()
                ),
            ));
        }
        let mut out = Mat::default();
        // The picture's edge is repeated into the corners a barrel correction pulls in
        // from outside the frame: a black wedge would be a border the locator could take
        // for the board's.
        imgproc::remap(
            picture,
            &mut out,
            &self.map_xy,
            &self.map_fraction,
            imgproc::INTER_LINEAR,
            core::BORDER_REPLICATE,
            core::Scalar::default(),
        )?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Scalar};

    /// A flat 19×19 board seen from above, filling most of a 1280×720 frame: wood, dark
    /// lines 2 px wide, on a darker table.
    fn flat_board() -> (Mat, [[f64; 2]; 4]) {
        let mut picture =
            Mat::new_rows_cols_with_default(720, 1280, CV_8UC3, Scalar::new(60.0, 70.0, 90.0, 0.0))
                .unwrap();
        let (left, top, spacing) = (290.0, 30.0, 36.0);
        imgproc::rectangle_points(
            &mut picture,
            Point::new(left as i32 - 30, top as i32 - 25),
            Point::new(
                (left + 18.0 * spacing) as i32 + 30,
                (top + 18.0 * spacing) as i32 + 25,
            ),
            Scalar::new(120.0, 180.0, 215.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        for i in 0..19 {
            let at = |v: f64| v.round() as i32;
            let offset = i as f64 * spacing;
            for (from, to) in [
                ((left + offset, top), (left + offset, top + 18.0 * spacing)),
                ((left, top + offset), (left + 18.0 * spacing, top + offset)),
            ] {
                imgproc::line(
                    &mut picture,
                    Point::new(at(from.0), at(from.1)),
                    Point::new(at(to.0), at(to.1)),
                    Scalar::new(30.0, 30.0, 30.0, 0.0),
                    2,
                    imgproc::LINE_AA,
                    0,
                )
                .unwrap();
            }
        }
        let far = 18.0 * spacing;
        let corners = [
            [left, top],
            [left + far, top],
            [left + far, top + far],
            [left, top + far],
        ];
        (picture, corners)
    }

    /// `picture` as a lens with distortion `k1` (focal length the longest side) would
    /// show it: each output pixel looks up where the straight picture had it.
    fn bent(picture: &Mat, k1: f64) -> Mat {
        let camera = lens_camera(k1, picture.cols(), picture.rows());
        let [[focal, _, cx], [_, _, cy], _] = camera.matrix;
        let (width, height) = (picture.cols(), picture.rows());
        let mut map_x =
            Mat::new_rows_cols_with_default(height, width, core::CV_32FC1, Scalar::all(0.0))
                .unwrap();
        let mut map_y = map_x.clone();
        for y in 0..height {
            for x in 0..width {
                // Distorted (x, y) back to its straight place, by fixed-point iteration.
                let (xd, yd) = ((f64::from(x) - cx) / focal, (f64::from(y) - cy) / focal);
                let (mut xu, mut yu) = (xd, yd);
                for _ in 0..20 {
                    let factor = 1.0 + k1 * (xu * xu + yu * yu);
                    xu = xd / factor;
                    yu = yd / factor;
                }
                *map_x.at_2d_mut::<f32>(y, x).unwrap() = (cx + focal * xu) as f32;
                *map_y.at_2d_mut::<f32>(y, x).unwrap() = (cy + focal * yu) as f32;
            }
        }
        let mut out = Mat::default();
        imgproc::remap(
            picture,
            &mut out,
            &map_x,
            &map_y,
            imgproc::INTER_LINEAR,
            core::BORDER_REPLICATE,
            Scalar::default(),
        )
        .unwrap();
        out
    }

    /// A checkered 8×8 board with no drawn lines, filling most of a 1280×720 frame.
    fn checkered_board() -> Mat {
        let mut picture =
            Mat::new_rows_cols_with_default(720, 1280, CV_8UC3, Scalar::new(60.0, 70.0, 90.0, 0.0))
                .unwrap();
        let (left, top, side) = (310, 40, 80);
        imgproc::rectangle_points(
            &mut picture,
            Point::new(left - 25, top - 25),
            Point::new(left + 8 * side + 25, top + 8 * side + 25),
            Scalar::new(40.0, 60.0, 110.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        for row in 0..8 {
            for col in 0..8 {
                let shade = if (row + col) % 2 == 0 {
                    Scalar::new(170.0, 210.0, 230.0, 0.0)
                } else {
                    Scalar::new(50.0, 90.0, 140.0, 0.0)
                };
                imgproc::rectangle_points(
                    &mut picture,
                    Point::new(left + col * side, top + row * side),
                    Point::new(left + (col + 1) * side - 1, top + (row + 1) * side - 1),
                    shade,
                    -1,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        picture
    }

    fn eight_locator(picture: &Mat) -> opencv::Result<Option<BoardGeometry>> {
        Ok(super::super::eight::locate(picture)?
            .board
            .map(|board| board.geometry))
    }

    #[test]
    fn a_bent_checkered_board_is_straightened_by_its_square_edges() {
        let picture = bent(&checkered_board(), -0.35);
        let found = estimate(&picture, Marking::LinesOrSquareEdges, &eight_locator)
            .unwrap()
            .expect("a board");
        assert!((found.k1 + 0.35).abs() <= 0.05, "{found:?}");
        assert!(found.worth_correcting(), "{found:?}");
        let straight = estimate(
            &checkered_board(),
            Marking::LinesOrSquareEdges,
            &eight_locator,
        )
        .unwrap()
        .expect("a board");
        assert!(!straight.worth_correcting(), "{straight:?}");
    }

    fn go_locator(picture: &Mat) -> opencv::Result<Option<BoardGeometry>> {
        Ok(locate::locate(picture, Some(19))?.geometry)
    }

    #[test]
    fn a_bent_grid_is_straightened_by_the_lens_that_bent_it() {
        let (straight, corners) = flat_board();
        let picture = bent(&straight, -0.35);
        let found = estimate(&picture, Marking::DrawnLines, &go_locator)
            .unwrap()
            .expect("a board");
        assert!((found.k1 + 0.35).abs() <= 0.05, "{found:?}");
        assert!(found.worth_correcting(), "{found:?}");
        // Straightened, the board is where it was drawn, to a few pixels.
        let located = found.geometry.corners();
        for (got, truth) in located.iter().zip(corners) {
            let miss = (got[0] - truth[0]).hypot(got[1] - truth[1]);
            assert!(miss < 6.0, "{located:?} vs {corners:?}");
        }
    }

    #[test]
    fn a_lens_is_believed_only_where_the_lines_stand_out() {
        let (picture, _) = flat_board();
        let geometry = go_locator(&picture).unwrap().expect("a board");
        let estimate = |k1, straightness, seen| LensEstimate {
            k1,
            straightness,
            straightness_as_seen: seen,
            geometry: geometry.clone(),
        };
        assert!(estimate(-0.45, 92.1, Some(73.4)).worth_correcting());
        assert!(estimate(-0.2, 13.7, Some(9.1)).worth_correcting());
        assert!(estimate(-0.2, 13.7, None).worth_correcting());
        assert!(
            !estimate(-0.2, 20.0, Some(19.0)).worth_correcting(),
            "too little gained"
        );
        assert!(
            !estimate(0.0, 20.0, Some(5.0)).worth_correcting(),
            "nothing to take out"
        );
        assert!(
            !estimate(-0.55, -2.8, Some(-4.1)).worth_correcting(),
            "noise"
        );
        assert!(
            !estimate(-0.35, 0.2, Some(-1.0)).worth_correcting(),
            "noise"
        );
    }

    #[test]
    fn a_straight_lens_is_left_alone() {
        let (straight, _) = flat_board();
        let found = estimate(&straight, Marking::DrawnLines, &go_locator)
            .unwrap()
            .expect("a board");
        assert!(!found.worth_correcting(), "{found:?}");
    }

    #[test]
    fn no_board_no_lens() {
        let blank = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(128.0)).unwrap();
        assert_eq!(
            estimate(&blank, Marking::DrawnLines, &go_locator).unwrap(),
            None
        );
    }

    #[test]
    fn a_correction_refuses_pictures_of_another_size() {
        let (straight, _) = flat_board();
        let undistorter = Undistorter::new(
            &lens_camera(-0.2, straight.cols(), straight.rows()),
            &straight,
        )
        .unwrap();
        let small = Mat::new_rows_cols_with_default(480, 640, CV_8UC3, Scalar::all(0.0)).unwrap();
        assert!(undistorter.apply(&small).is_err());
        assert_eq!(
            undistorter.apply(&straight).unwrap().size().unwrap(),
            straight.size().unwrap()
        );
    }
}
