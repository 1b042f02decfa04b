//! Board geometry: where the board's grid lies in a camera frame.
//!
//! Everything downstream works in grid coordinates: `(col, row)` with `0..size-1` on the
//! board's lines (Go points), mapped to image pixels by one homography. The locator finds
//! it with no clicks; manual corners and calibration files set it by hand.

pub mod calibration;
mod crossings;
pub mod eight;
pub mod follow;
pub mod lens;
pub mod locate;
pub mod markers;
pub mod outline;

use serde::{Deserialize, Serialize};

/// A homography as a row-major 3×3 matrix: `[x, y, w]ᵀ = H · [col, row, 1]ᵀ`.
pub type Homography = [[f64; 3]; 3];

/// The grid of a board in one image: its number of lines and the homography from grid
/// coordinates to pixels. Corners are the four outer line intersections in the order
/// top-left, top-right, bottom-right, bottom-left: row 0 runs from corner 1 to corner 2.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardGeometry {
    /// Lines per side (19, 13, 9 for Go; 9 lines bound the 8×8 squares of the other games).
    pub size: usize,
    pub homography: Homography,
}

impl BoardGeometry {
    /// The geometry whose outer intersections are `corners` (top-left, top-right,
    /// bottom-right, bottom-left, in pixels).
    ///
    /// `None` unless the corners make a convex quadrilateral: a grid seen by a camera
    /// always does, so anything else is a typing or detection error.
    pub fn from_corners(size: usize, corners: [[f64; 2]; 4]) -> Option<Self> {
        if size < 2 || !is_convex(&corners) {
            return None;
        }
        let last = (size - 1) as f64;
        let grid = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
        homography_from_4(&grid, &corners).map(|homography| BoardGeometry { size, homography })
    }

    /// The pixel position of grid point (`col`, `row`); fractional coordinates are allowed.
    pub fn to_image(&self, col: f64, row: f64) -> [f64; 2] {
        apply(&self.homography, [col, row])
    }

    /// The four outer intersections in pixels: top-left, top-right, bottom-right, bottom-left.
    pub fn corners(&self) -> [[f64; 2]; 4] {
        let last = (self.size - 1) as f64;
        [
            self.to_image(0.0, 0.0),
            self.to_image(last, 0.0),
            self.to_image(last, last),
            self.to_image(0.0, last),
        ]
    }

    /// How far, in pixels, the farthest-moved corner lies from its place on `other`: how
    /// much a board moved between two finds.
    pub fn corner_shift(&self, other: &BoardGeometry) -> f64 {
        self.corners()
            .iter()
            .zip(other.corners())
            .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
            .fold(0.0, f64::max)
    }

    /// The same grid seen in an image scaled by `factor` (e.g. a downscaled working copy).
    pub fn scaled(&self, factor: f64) -> Self {
        let mut homography = self.homography;
        for value in homography[..2].iter_mut().flatten() {
            *value *= factor;
        }
        BoardGeometry {
            size: self.size,
            homography,
        }
    }
}

/// Where the camera stood, in board units (one unit = one grid spacing, the board's plane
/// at height 0, `x` along columns and `y` along rows from point (0, 0)).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CameraPosition {
    pub x: f64,
    pub y: f64,
    /// Height above the board, always positive.
    pub height: f64,
}

impl BoardGeometry {
    /// The camera's position recovered from the homography, for a pinhole camera whose
    /// optical centre is the image centre and whose focal length is found from the
    /// homography itself (the images of the board's two axes must be perpendicular and
    /// equally long), or taken as the image width when the view is too straight for that.
    pub fn camera_position(&self, image_width: f64, image_height: f64) -> Option<CameraPosition> {
        let h = &self.homography;
        let (cx, cy) = (image_width / 2.0, image_height / 2.0);
        let column = |i: usize| (h[0][i] - cx * h[2][i], h[1][i] - cy * h[2][i], h[2][i]);
        let (a1, b1, c1) = column(0);
        let (a2, b2, c2) = column(1);
        let plausible =
            |f2: f64| f2.is_finite() && f2 > 0.0 && (0.3..5.0).contains(&(f2.sqrt() / image_width));
        let from_right_angle = -(a1 * a2 + b1 * b2) / (c1 * c2);
        let from_equal_length = (a1 * a1 + b1 * b1 - a2 * a2 - b2 * b2) / (c2 * c2 - c1 * c1);
        let focal = [from_right_angle, from_equal_length]
            .into_iter()
            .filter(|&f2| plausible(f2))
            .map(f64::sqrt)
            .next()
            .unwrap_or(image_width);
        // K⁻¹·H = λ [r1 r2 t].
        let unproject = |i: usize| {
            let (a, b, c) = column(i);
            [a / focal, b / focal, c]
        };
        let (m1, m2, m3) = (unproject(0), unproject(1), unproject(2));
        let length = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let mut scale = 2.0 / (length(m1) + length(m2));
        // The board lies in front of the camera.
        if m3[2] * scale < 0.0 {
            scale = -scale;
        }
        let r1 = m1.map(|v| v * scale);
        let r2 = m2.map(|v| v * scale);
        let t = m3.map(|v| v * scale);
        let r3 = [
            r1[1] * r2[2] - r1[2] * r2[1],
            r1[2] * r2[0] - r1[0] * r2[2],
            r1[0] * r2[1] - r1[1] * r2[0],
        ];
        let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        // C = −Rᵀ t.
        let position = CameraPosition {
            x: -dot(r1, t),
            y: -dot(r2, t),
            height: dot(r3, t).abs(),
        };
        (position.x.is_finite() && position.y.is_finite() && position.height > 1.0)
            .then_some(position)
    }
}

impl BoardGeometry {
    /// Whether some pinhole camera, its optical centre at the image centre and its focal
    /// length anywhere from a third of the image width to five widths, sees a square
    /// board as this grid: the images of the board's two axes, unprojected, must be about
    /// perpendicular and about equally long. A lattice fitted across part of one board and
    /// a neighbouring pattern, or with one family of lines at a fraction of its spacing,
    /// maps to a long thin strip that no view of a square board makes (Mak-hos seed
    /// 300259: 8 columns by a third of their spacing, seen nearly from above).
    pub fn seen_square(&self, image_width: f64, image_height: f64) -> bool {
        const FOCAL_STEPS: usize = 48;
        let h = &self.homography;
        let (cx, cy) = (image_width / 2.0, image_height / 2.0);
        let column = |i: usize| (h[0][i] - cx * h[2][i], h[1][i] - cy * h[2][i], h[2][i]);
        let ((a1, b1, c1), (a2, b2, c2)) = (column(0), column(1));
        (0..=FOCAL_STEPS).any(|step| {
            let focal = image_width
                * MIN_FOCAL
                * (MAX_FOCAL / MIN_FOCAL).powf(step as f64 / FOCAL_STEPS as f64);
            let r1 = [a1 / focal, b1 / focal, c1];
            let r2 = [a2 / focal, b2 / focal, c2];
            let length = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            let (l1, l2) = (length(r1), length(r2));
            let cosine = (r1[0] * r2[0] + r1[1] * r2[1] + r1[2] * r2[2]) / (l1 * l2);
            let aspect = l1.max(l2) / l1.min(l2);
            aspect <= MAX_SEEN_ASPECT && cosine.abs() <= MAX_SEEN_COSINE
        })
    }
}

/// The focal lengths tried by [`BoardGeometry::seen_square`], in image widths.
const MIN_FOCAL: f64 = 0.3;
const MAX_FOCAL: f64 = 5.0;
/// How far from square the unprojected axes may be: lens distortion, a fit a line off at
/// one edge and a board's slightly oblong cells (Go: 22 by 23.7 mm) stay well inside.
const MAX_SEEN_ASPECT: f64 = 1.5;
const MAX_SEEN_COSINE: f64 = 0.3;

impl CameraPosition {
    /// Where a point `height` units above grid point (`col`, `row`) appears when projected
    /// onto the board's plane, as an offset in board units: away from the spot under the
    /// camera, further the lower the camera. A stone's body is such a point, which is why
    /// an oblique photo shows stones beside their points.
    pub fn parallax(&self, col: f64, row: f64, height: f64) -> [f64; 2] {
        let k = height / (self.height - height).max(1e-6);
        [(col - self.x) * k, (row - self.y) * k]
    }
}

/// Whether four points, in order, make a convex quadrilateral with no three in a line.
fn is_convex(quad: &[[f64; 2]; 4]) -> bool {
    let turns: Vec<f64> = (0..4)
        .map(|i| {
            let [x0, y0] = quad[i];
            let [x1, y1] = quad[(i + 1) % 4];
            let [x2, y2] = quad[(i + 2) % 4];
            (x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1)
        })
        .collect();
    let scale = turns.iter().map(|t| t.abs()).fold(0.0, f64::max);
    scale > 0.0
        && (turns.iter().all(|&t| t > 1e-9 * scale) || turns.iter().all(|&t| t < -1e-9 * scale))
}

/// A 3×3 `CV_64F` matrix (what OpenCV's homography functions return) as a [`Homography`].
pub(crate) fn homography_from_mat(m: &opencv::core::Mat) -> Option<Homography> {
    use opencv::prelude::*;
    if m.rows() != 3 || m.cols() != 3 {
        return None;
    }
    let mut out = [[0.0; 3]; 3];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, value) in row.iter_mut().enumerate() {
            *value = *m.at_2d::<f64>(r as i32, c as i32).ok()?;
        }
    }
    Some(out)
}

/// The inverse of a homography, or `None` when it is singular.
pub fn invert(m: &Homography) -> Option<Homography> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if det.abs() < 1e-15 {
        return None;
    }
    let c =
        |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    Some([
        [
            c(1, 1, 2, 2) / det,
            -c(0, 1, 2, 2) / det,
            c(0, 1, 1, 2) / det,
        ],
        [
            -c(1, 0, 2, 2) / det,
            c(0, 0, 2, 2) / det,
            -c(0, 0, 1, 2) / det,
        ],
        [
            c(1, 0, 2, 1) / det,
            -c(0, 0, 2, 1) / det,
            c(0, 0, 1, 1) / det,
        ],
    ])
}

/// Applies a homography to a point.
pub fn apply(h: &Homography, [x, y]: [f64; 2]) -> [f64; 2] {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    [
        (h[0][0] * x + h[0][1] * y + h[0][2]) / w,
        (h[1][0] * x + h[1][1] * y + h[1][2]) / w,
    ]
}

/// The homography taking the four points `from` to `to` (direct linear solve with h33 = 1),
/// or `None` when three of them are collinear.
pub fn homography_from_4(from: &[[f64; 2]; 4], to: &[[f64; 2]; 4]) -> Option<Homography> {
    let mut a = [[0.0f64; 9]; 8];
    for i in 0..4 {
        let [x, y] = from[i];
        let [u, v] = to[i];
        a[2 * i] = [x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, u];
        a[2 * i + 1] = [0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y, v];
    }
    // Gaussian elimination with partial pivoting on the 8×8 system.
    for col in 0..8 {
        let pivot = (col..8).max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        for row in 0..8 {
            if row != col {
                let factor = a[row][col] / a[col][col];
                let pivot_row = a[col];
                for (value, pivot_value) in a[row].iter_mut().zip(pivot_row).skip(col) {
                    *value -= factor * pivot_value;
                }
            }
        }
    }
    let h: Vec<f64> = (0..8).map(|i| a[i][8] / a[i][i]).collect();
    Some([[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], 1.0]])
}

/// A picture in grey: the trackers compare views, and the follower matches them, by
/// lightness alone.
pub fn gray(image: &opencv::core::Mat) -> opencv::Result<opencv::core::Mat> {
    use opencv::prelude::*;
    if image.channels() == 1 {
        return Ok(image.clone());
    }
    let mut gray = opencv::core::Mat::default();
    opencv::imgproc::cvt_color_def(image, &mut gray, opencv::imgproc::COLOR_BGR2GRAY)?;
    Ok(gray)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_round_trip_through_the_homography() {
        let corners = [[100.0, 120.0], [900.0, 90.0], [980.0, 800.0], [60.0, 760.0]];
        let geometry = BoardGeometry::from_corners(19, corners).unwrap();
        for (found, expected) in geometry.corners().iter().zip(corners) {
            assert!((found[0] - expected[0]).abs() < 1e-6 && (found[1] - expected[1]).abs() < 1e-6);
        }
    }

    #[test]
    fn the_camera_is_found_where_it_was_put() {
        // A camera 30 units above point (9, 40) (in front of the board, beyond row 18),
        // looking at the board's centre, with a 1000 px focal length.
        let camera = [9.0f64, 40.0, 30.0];
        let target = [9.0f64, 9.0, 0.0];
        let forward = {
            let d = [
                target[0] - camera[0],
                target[1] - camera[1],
                target[2] - camera[2],
            ];
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            d.map(|v| v / n)
        };
        // Image x along the board's columns, image y completing a right-handed frame.
        let right = [1.0, 0.0, 0.0];
        let down = [
            forward[1] * right[2] - forward[2] * right[1],
            forward[2] * right[0] - forward[0] * right[2],
            forward[0] * right[1] - forward[1] * right[0],
        ];
        let project = |p: [f64; 3]| {
            let d = [p[0] - camera[0], p[1] - camera[1], p[2] - camera[2]];
            let dot = |a: [f64; 3]| a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
            let z = dot(forward);
            [
                960.0 + 1000.0 * dot(right) / z,
                540.0 + 1000.0 * dot(down) / z,
            ]
        };
        let corners =
            [[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]].map(|[c, r]| project([c, r, 0.0]));
        let geometry = BoardGeometry::from_corners(19, corners).unwrap();
        let found = geometry.camera_position(1920.0, 1080.0).unwrap();
        assert!((found.x - 9.0).abs() < 0.01, "{found:?}");
        assert!((found.y - 40.0).abs() < 0.01, "{found:?}");
        assert!((found.height - 30.0).abs() < 0.01, "{found:?}");
        // A stone's middle, 0.2 units up, at the near edge appears pushed away from the
        // camera (towards row 0) by 0.2 · 22 / 29.8 units.
        let [dx, dy] = found.parallax(9.0, 18.0, 0.2);
        assert!(
            dx.abs() < 1e-6 && (dy + 0.2 * 22.0 / 29.8).abs() < 1e-3,
            "{dx} {dy}"
        );
    }

    #[test]
    fn collinear_corners_have_no_homography() {
        let corners = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 5.0]];
        assert!(BoardGeometry::from_corners(19, corners).is_none());
    }

    #[test]
    fn a_thin_strip_is_no_view_of_a_square_board_and_real_views_are() {
        let seen = |size: usize, corners: [[f64; 2]; 4], width: f64, height: f64| {
            BoardGeometry::from_corners(size, corners)
                .unwrap()
                .seen_square(width, height)
        };
        // Rendered truth: Mak-hos seed 300259 (nearly from above), Go seed 100329 (at 45°).
        assert!(seen(
            9,
            [
                [879.1, 491.5],
                [476.2, 577.8],
                [412.8, 195.3],
                [782.1, 121.6]
            ],
            1280.0,
            720.0
        ));
        assert!(seen(
            19,
            [
                [753.0, 564.7],
                [359.3, 424.6],
                [552.8, 183.8],
                [892.6, 276.9]
            ],
            1280.0,
            720.0
        ));
        // A grid photographed straight on, and steeply from the side.
        assert!(seen(
            19,
            [
                [200.0, 100.0],
                [800.0, 100.0],
                [800.0, 700.0],
                [200.0, 700.0]
            ],
            1000.0,
            800.0
        ));
        assert!(seen(
            19,
            [
                [380.0, 300.0],
                [620.0, 300.0],
                [900.0, 700.0],
                [100.0, 700.0]
            ],
            1000.0,
            800.0
        ));
        // The strip seed 300259's first lattice was: 8 columns by a third of their spacing.
        assert!(!seen(
            9,
            [
                [413.0, 195.0],
                [820.0, 110.0],
                [860.0, 242.0],
                [431.0, 311.0]
            ],
            1280.0,
            720.0
        ));
    }
}
