//! ArUco markers stuck beside the board's corners, for fixed tournament cameras.
//!
//! Once the markers' places are known in grid coordinates (measured once, from a photo in
//! which the board is found, by `kradan calibrate-markers`), every later frame gives the
//! grid from the markers alone: a board covered with stones, a camera that was bumped or a
//! board that was pushed a little are all found again, because the markers moved with
//! them. The markers are the 4×4 dictionary's first ids (`DICT_4X4_50`), large and quick
//! to detect; a printable sheet comes from `kradan calibrate-markers --print`.

use super::BoardGeometry;
use opencv::core::{Mat, Point2f, Ptr, Vector};
use opencv::prelude::*;
use opencv::{aruco, calib3d, imgproc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where each marker's centre lies in grid coordinates (`[col, row]`, one unit per grid
/// spacing; outside the grid, e.g. `[-1.5, -1.5]` beyond the top-left corner), by id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerLayout {
    pub positions: BTreeMap<i32, [f64; 2]>,
}

/// Markers found in an image: centre in pixels, by id.
pub fn detect(image: &Mat) -> opencv::Result<BTreeMap<i32, [f64; 2]>> {
    let dictionary = dictionary()?;
    let mut corners = Vector::<Vector<Point2f>>::new();
    let mut ids = Vector::<i32>::new();
    let parameters = aruco::DetectorParameters::create()?;
    let mut rejected = Vector::<Vector<Point2f>>::new();
    aruco::detect_markers(
        image,
        &dictionary,
        &mut corners,
        &mut ids,
        &parameters,
        &mut rejected,
    )?;
    let mut found = BTreeMap::new();
    for (id, quad) in ids.iter().zip(corners.iter()) {
        let (sx, sy) = quad.iter().fold((0.0, 0.0), |(x, y), p| {
            (x + f64::from(p.x), y + f64::from(p.y))
        });
        let n = quad.len().max(1) as f64;
        // A marker seen twice (a reflection, a second sheet) is ambiguous: drop it.
        if found.insert(id, [sx / n, sy / n]).is_some() {
            found.remove(&id);
        }
    }
    Ok(found)
}

fn dictionary() -> opencv::Result<Ptr<aruco::Dictionary>> {
    aruco::get_predefined_dictionary_i32(aruco::DICT_4X4_50)
}

/// Draws marker `id` as a square image of `side` pixels, for printing.
pub fn draw(id: i32, side: i32) -> opencv::Result<Mat> {
    let mut marker = Mat::default();
    aruco::draw_marker(&dictionary()?, id, side, &mut marker, 1)?;
    Ok(marker)
}

impl MarkerLayout {
    /// Records where the markers found in an image lie in the grid of `geometry`.
    pub fn measure(geometry: &BoardGeometry, found: &BTreeMap<i32, [f64; 2]>) -> Option<Self> {
        let to_grid = super::invert(&geometry.homography)?;
        let positions = found
            .iter()
            .map(|(&id, &pixel)| (id, super::apply(&to_grid, pixel)))
            .collect();
        Some(MarkerLayout { positions })
    }

    /// The grid in an image where these markers were found, or why not: at least four
    /// known markers are needed, and they must agree on one homography.
    pub fn geometry(
        &self,
        size: usize,
        found: &BTreeMap<i32, [f64; 2]>,
    ) -> Result<BoardGeometry, String> {
        let mut grid = Vector::<Point2f>::new();
        let mut image = Vector::<Point2f>::new();
        for (id, at) in &self.positions {
            if let Some(pixel) = found.get(id) {
                grid.push(Point2f::new(at[0] as f32, at[1] as f32));
                image.push(Point2f::new(pixel[0] as f32, pixel[1] as f32));
            }
        }
        if grid.len() < 4 {
            return Err(format!(
                "{} of the {} calibrated markers are visible; 4 are needed",
                grid.len(),
                self.positions.len()
            ));
        }
        let h = calib3d::find_homography(&grid, &image, &mut Mat::default(), 0, 3.0)
            .map_err(|e| e.to_string())?;
        let homography =
            super::homography_from_mat(&h).ok_or("the markers do not fix the board's plane")?;
        let geometry = BoardGeometry { size, homography };
        BoardGeometry::from_corners(size, geometry.corners())
            .ok_or_else(|| "the markers put the board's corners in an impossible place".into())
    }
}

/// A printable sheet: the four corner markers (ids 0–3: top-left, top-right, bottom-right,
/// bottom-left), each `side` pixels with a white margin, in a 2×2 layout to cut apart.
pub fn sheet(side: i32) -> opencv::Result<Mat> {
    let margin = side / 4;
    let cell = side + 2 * margin;
    let mut page = Mat::new_rows_cols_with_default(
        2 * cell,
        2 * cell,
        opencv::core::CV_8UC1,
        opencv::core::Scalar::all(255.0),
    )?;
    for id in 0..4 {
        let marker = draw(id, side)?;
        let (x, y) = ((id % 2) * cell + margin, (id / 2) * cell + margin);
        let mut region = page.roi_mut(opencv::core::Rect::new(x, y, side, side))?;
        marker.copy_to(&mut region)?;
        imgproc::put_text(
            &mut page,
            &format!("kradan {id}"),
            opencv::core::Point::new(x, y + side + margin * 2 / 3),
            imgproc::FONT_HERSHEY_SIMPLEX,
            f64::from(side) / 400.0,
            opencv::core::Scalar::all(0.0),
            1,
            imgproc::LINE_AA,
            false,
        )?;
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Scalar, Size};

    /// A plain board-coloured canvas with the four markers at known grid positions, seen
    /// through a perspective: returns the image and the geometry used.
    fn scene() -> (Mat, BoardGeometry, MarkerLayout) {
        let geometry = BoardGeometry::from_corners(
            19,
            [
                [420.0, 160.0],
                [1180.0, 190.0],
                [1260.0, 800.0],
                [360.0, 770.0],
            ],
        )
        .unwrap();
        let layout = MarkerLayout {
            positions: BTreeMap::from([
                (0, [-2.0, -2.0]),
                (1, [20.0, -2.0]),
                (2, [20.0, 20.0]),
                (3, [-2.0, 20.0]),
            ]),
        };
        // Draw each marker flat at 1.6 grid units wide, warped into place.
        let mut image = Mat::new_size_with_default(
            Size::new(1600, 1000),
            CV_8UC3,
            Scalar::new(90.0, 160.0, 200.0, 0.0),
        )
        .unwrap();
        for (id, [c, r]) in &layout.positions {
            let marker = draw(*id, 200).unwrap();
            let mut colour = Mat::default();
            imgproc::cvt_color_def(&marker, &mut colour, imgproc::COLOR_GRAY2BGR).unwrap();
            let half = 0.8;
            let source: Vector<Point2f> = [[0.0, 0.0], [200.0, 0.0], [200.0, 200.0], [0.0, 200.0]]
                .iter()
                .map(|p| Point2f::new(p[0], p[1]))
                .collect();
            let target: Vector<Point2f> = [
                [c - half, r - half],
                [c + half, r - half],
                [c + half, r + half],
                [c - half, r + half],
            ]
            .iter()
            .map(|&[x, y]| {
                let [px, py] = geometry.to_image(x, y);
                Point2f::new(px as f32, py as f32)
            })
            .collect();
            let warp =
                imgproc::get_perspective_transform(&source, &target, opencv::core::DECOMP_LU)
                    .unwrap();
            imgproc::warp_perspective(
                &colour,
                &mut image,
                &warp,
                Size::new(1600, 1000),
                imgproc::INTER_LINEAR,
                opencv::core::BORDER_TRANSPARENT,
                Scalar::default(),
            )
            .unwrap();
        }
        (image, geometry, layout)
    }

    #[test]
    fn the_grid_comes_back_from_four_markers() {
        let (image, truth, layout) = scene();
        let found = detect(&image).unwrap();
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        let geometry = layout.geometry(19, &found).unwrap();
        for (a, b) in geometry.corners().iter().zip(truth.corners()) {
            assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 2.0, "{a:?} vs {b:?}");
        }
        // Measuring the layout back from the true grid gives the positions it was drawn at.
        let measured = MarkerLayout::measure(&truth, &found).unwrap();
        for (id, at) in &layout.positions {
            let m = measured.positions[id];
            assert!(
                (m[0] - at[0]).hypot(m[1] - at[1]) < 0.05,
                "marker {id}: {m:?}"
            );
        }
    }

    #[test]
    fn three_markers_are_not_enough() {
        let (_, _, layout) = scene();
        let found = BTreeMap::from([(0, [1.0, 1.0]), (1, [100.0, 1.0]), (2, [100.0, 100.0])]);
        let error = layout.geometry(19, &found).unwrap_err();
        assert!(error.contains("3 of the 4"), "{error}");
    }
}
