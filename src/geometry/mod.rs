//! Board geometry: where the board's grid lies in a camera frame.
//!
//! Everything downstream works in grid coordinates: `(col, row)` with `0..size-1` on the
//! board's lines (Go points), mapped to image pixels by one homography. The locator finds
//! it with no clicks; manual corners and calibration files set it by hand.

pub mod calibration;
pub mod locate;

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
                for k in col..9 {
                    a[row][k] -= factor * a[col][k];
                }
            }
        }
    }
    let h: Vec<f64> = (0..8).map(|i| a[i][8] / a[i][i]).collect();
    Some([[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], 1.0]])
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
    fn collinear_corners_have_no_homography() {
        let corners = [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.0, 5.0]];
        assert!(BoardGeometry::from_corners(19, corners).is_none());
    }
}
