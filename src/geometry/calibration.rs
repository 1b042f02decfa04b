//! Calibration files: board corners for a fixed camera, and optional camera intrinsics.
//!
//! ```json
//! {"size": 19, "corners": [[412, 88], [1490, 95], [1602, 1010], [330, 1002]],
//!  "image_size": [1920, 1080],
//!  "camera": {"matrix": [[1400, 0, 960], [0, 1400, 540], [0, 0, 1]],
//!             "distortion": [-0.21, 0.05, 0, 0, 0]}}
//! ```
//!
//! An optional `"markers": {"positions": {"0": [-1.6, -1.6], …}}` gives the centres of
//! ArUco markers in grid coordinates (see `geometry::markers`).
//!
//! Corners are top-left, top-right, bottom-right, bottom-left, in pixels of an image of
//! `image_size` (after undistortion when `camera` is present); a photo of another size from
//! the same camera has them scaled.

use super::BoardGeometry;
use opencv::core::{Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Lines per side; absent in a camera-only file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corners: Option<[[f64; 2]; 4]>,
    /// Width and height of the image the corners (and the camera matrix) were measured in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Camera>,
    /// ArUco markers beside the board, in grid coordinates: when present and visible they
    /// give the grid in every frame, whatever moved (`kradan calibrate-markers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markers: Option<super::markers::MarkerLayout>,
}

/// Pinhole intrinsics with OpenCV's distortion model (k1, k2, p1, p2[, k3…]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Camera {
    pub matrix: [[f64; 3]; 3],
    pub distortion: Vec<f64>,
    /// Root-mean-square reprojection error of the calibration, in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rms_error: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("cannot read the calibration file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the calibration file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the calibration file {} is not valid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("camera calibration failed: {0}")]
    Calibrate(String),
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl Calibration {
    pub fn load(path: &Path) -> Result<Self, CalibrationError> {
        let text = std::fs::read_to_string(path).map_err(|source| CalibrationError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let invalid = |message: String| CalibrationError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let calibration: Calibration = serde_json::from_str(&text).map_err(|e| {
            invalid(format!(
                "{e} (expected {{\"size\": 19, \"corners\": [[x,y],[x,y],[x,y],[x,y]], \"image_size\": [w,h]}} with an optional \"camera\": {{\"matrix\": [[…],[…],[…]], \"distortion\": […]}})"
            ))
        })?;
        calibration.validate().map_err(invalid)?;
        Ok(calibration)
    }

    pub fn save(&self, path: &Path) -> Result<(), CalibrationError> {
        let mut text = serde_json::to_string_pretty(self).expect("plain data serialises");
        text.push('\n');
        std::fs::write(path, text).map_err(|source| CalibrationError::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    fn validate(&self) -> Result<(), String> {
        if let Some(size) = self.size
            && !(2..=40).contains(&size)
        {
            return Err(format!("\"size\" is {size}; a board has 2 to 40 lines"));
        }
        if self.corners.is_some() && self.image_size.is_none() {
            return Err(
                "\"corners\" needs \"image_size\" (the [width, height] they were measured in)"
                    .into(),
            );
        }
        if let Some([w, h]) = self.image_size
            && (w == 0 || h == 0)
        {
            return Err(format!("\"image_size\" is [{w}, {h}]"));
        }
        if let Some(corners) = self.corners {
            if corners.iter().flatten().any(|v| !v.is_finite()) {
                return Err("\"corners\" holds a value that is not a number".into());
            }
            if BoardGeometry::from_corners(self.size.unwrap_or(19), corners).is_none() {
                return Err("three of the four \"corners\" lie on one line".into());
            }
        }
        if let Some(camera) = &self.camera {
            if ![4, 5, 8, 12, 14].contains(&camera.distortion.len()) {
                return Err(format!(
                    "\"camera.distortion\" has {} values; OpenCV takes 4, 5, 8, 12 or 14",
                    camera.distortion.len()
                ));
            }
            let m = camera.matrix;
            if m[0][0] <= 0.0 || m[1][1] <= 0.0 || m[2] != [0.0, 0.0, 1.0] {
                return Err(
                    "\"camera.matrix\" is not a camera matrix [[fx,0,cx],[0,fy,cy],[0,0,1]]".into(),
                );
            }
        }
        Ok(())
    }

    /// The board's geometry in an image of `width` × `height`, the corners scaled from
    /// `image_size`; `size` overrides the file's number of lines.
    pub fn geometry(&self, width: i32, height: i32, size: Option<usize>) -> Option<BoardGeometry> {
        let corners = self.corners?;
        let [w, h] = self.image_size?;
        let (sx, sy) = (width as f64 / w as f64, height as f64 / h as f64);
        let scaled = corners.map(|[x, y]| [x * sx, y * sy]);
        BoardGeometry::from_corners(size.or(self.size).unwrap_or(19), scaled)
    }
}

impl Camera {
    /// This camera, calibrated on pictures `calibrated_size` big, for pictures `width`
    /// wide: the matrix scaled (a calibration made at one resolution used at another).
    pub fn for_width(&self, calibrated_size: Option<[u32; 2]>, width: i32) -> Camera {
        let mut camera = self.clone();
        if let Some([calibrated, _]) = calibrated_size {
            let factor = f64::from(width) / f64::from(calibrated);
            for value in camera.matrix[..2].iter_mut().flatten() {
                *value *= factor;
            }
        }
        camera
    }

    /// The image as a camera without lens distortion would have taken it (same size and
    /// camera matrix). The matrix is scaled when the image is not the calibrated size.
    pub fn undistort(&self, image: &Mat, calibrated_size: Option<[u32; 2]>) -> opencv::Result<Mat> {
        let camera = self.for_width(calibrated_size, image.cols());
        let matrix = Mat::from_slice_2d(&camera.matrix)?;
        let distortion = Mat::from_slice(&self.distortion)?;
        let mut out = Mat::default();
        calib3d::undistort(image, &mut out, &matrix, &distortion, &matrix)?;
        Ok(out)
    }
}

/// Calibrates a camera from photos of a chessboard with `pattern` inner corners
/// (columns × rows) of `square` millimetres. Photos where the pattern is not found are
/// named in the returned notes; at least three views are needed.
pub fn calibrate_camera(
    images: &[(String, Mat)],
    pattern: (i32, i32),
    square: f64,
) -> Result<(Camera, [u32; 2], Vec<String>), CalibrationError> {
    let pattern_size = Size::new(pattern.0, pattern.1);
    let board: Vector<Point3f> = (0..pattern.1)
        .flat_map(|r| {
            (0..pattern.0)
                .map(move |c| Point3f::new(c as f32 * square as f32, r as f32 * square as f32, 0.0))
        })
        .collect();
    let mut object_points = Vector::<Vector<Point3f>>::new();
    let mut image_points = Vector::<Vector<Point2f>>::new();
    let mut notes = Vec::new();
    let mut image_size: Option<Size> = None;
    for (name, image) in images {
        let size = image.size()?;
        if let Some(first) = image_size
            && first != size
        {
            return Err(CalibrationError::Calibrate(format!(
                "{name} is {}×{}, the first photo {}×{}: calibrate one camera mode at a time",
                size.width, size.height, first.width, first.height
            )));
        }
        image_size = Some(size);
        let mut gray = Mat::default();
        imgproc::cvt_color_def(image, &mut gray, imgproc::COLOR_BGR2GRAY)?;
        let mut corners = Vector::<Point2f>::new();
        let flags = calib3d::CALIB_CB_ADAPTIVE_THRESH | calib3d::CALIB_CB_NORMALIZE_IMAGE;
        if !calib3d::find_chessboard_corners(&gray, pattern_size, &mut corners, flags)? {
            notes.push(format!(
                "{name}: no {}×{} chessboard found",
                pattern.0, pattern.1
            ));
            continue;
        }
        let criteria = TermCriteria::new(
            opencv::core::TermCriteria_COUNT + opencv::core::TermCriteria_EPS,
            30,
            0.01,
        )?;
        imgproc::corner_sub_pix(
            &gray,
            &mut corners,
            Size::new(11, 11),
            Size::new(-1, -1),
            criteria,
        )?;
        object_points.push(board.clone());
        image_points.push(corners);
    }
    if object_points.len() < 3 {
        return Err(CalibrationError::Calibrate(format!(
            "the chessboard was found in {} photo(s); at least 3 views are needed{}",
            object_points.len(),
            if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            }
        )));
    }
    let size = image_size.expect("at least one image");
    let mut matrix = Mat::default();
    let mut distortion = Mat::default();
    let criteria = TermCriteria::new(
        opencv::core::TermCriteria_COUNT + opencv::core::TermCriteria_EPS,
        60,
        1e-9,
    )?;
    let rms = calib3d::calibrate_camera(
        &object_points,
        &image_points,
        size,
        &mut matrix,
        &mut distortion,
        &mut Vector::<Mat>::new(),
        &mut Vector::<Mat>::new(),
        0,
        criteria,
    )?;
    let mut m = [[0.0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, value) in row.iter_mut().enumerate() {
            *value = *matrix.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    let distortion: Vec<f64> = (0..distortion.total() as i32)
        .map(|i| distortion.at::<f64>(i).copied())
        .collect::<opencv::Result<_>>()?;
    Ok((
        Camera {
            matrix: m,
            distortion,
            rms_error: Some(rms),
        },
        [size.width as u32, size.height as u32],
        notes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        let calibration = Calibration {
            size: Some(13),
            corners: Some([[10.0, 20.0], [300.0, 22.0], [310.0, 290.0], [8.0, 280.0]]),
            image_size: Some([320, 300]),
            camera: Some(Camera {
                matrix: [[500.0, 0.0, 160.0], [0.0, 500.0, 150.0], [0.0, 0.0, 1.0]],
                distortion: vec![-0.1, 0.01, 0.0, 0.0, 0.0],
                rms_error: None,
            }),
            markers: Some(crate::geometry::markers::MarkerLayout {
                positions: [(0, [-1.5, -1.5]), (3, [-1.5, 13.5])].into(),
            }),
        };
        calibration.save(&path).unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), calibration);
        let doubled = calibration.geometry(640, 600, None).unwrap();
        assert_eq!(doubled.size, 13);
        let [x, y] = doubled.corners()[2];
        assert!((x - 620.0).abs() < 1e-6 && (y - 580.0).abs() < 1e-6);
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        for (text, expected) in [
            ("{\"size\": 19, \"corners\": [[0,0],[1,0]]}", "corners"),
            (
                "{\"size\": 19, \"corners\": [[0,0],[10,0],[10,10],[0,10]]}",
                "image_size",
            ),
            ("{\"size\": 1}", "size"),
            ("not json", "expected"),
            (
                "{\"camera\": {\"matrix\": [[1,0,0],[0,1,0],[0,0,1]], \"distortion\": [1]}}",
                "distortion",
            ),
            ("{\"sise\": 19}", "sise"),
        ] {
            std::fs::write(&path, text).unwrap();
            let message = Calibration::load(&path).unwrap_err().to_string();
            assert!(
                message.contains("bad.json") && message.contains(expected),
                "{text}: {message}"
            );
        }
        let missing = Calibration::load(&dir.path().join("none.json"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("none.json"), "{missing}");
    }
}
