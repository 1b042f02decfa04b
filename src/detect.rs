//! `kradan detect`: one photo in, the position on the board out.
//!
//! load → geometry (manual corners, a calibration file, or the locator on a small working
//! copy) → the full-resolution board rectified → every point read.

use crate::games::{Color, Occupancy};
use crate::geometry::calibration::{Calibration, CalibrationError};
use crate::geometry::markers;
use crate::geometry::{BoardGeometry, locate};
use crate::reading::{self, Observation};
use crate::source::image::{self as still, LoadError};
use opencv::core::Mat;
use opencv::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Pixels per grid cell in the rectified board the readers see.
pub const CELL: i32 = 32;

#[derive(Clone, Debug, Default)]
pub struct DetectOptions {
    /// Lines per side; `None` lets the locator decide (19 with manual corners).
    pub size: Option<usize>,
    /// The four outer intersections in the original photo's pixels: top-left, top-right,
    /// bottom-right, bottom-left.
    pub corners: Option<[[f64; 2]; 4]>,
    pub calibration: Option<PathBuf>,
    pub debug_dir: Option<PathBuf>,
    pub reader: reading::ReaderChoice,
}

#[derive(Clone, Debug)]
pub struct Detection {
    pub occupancy: Occupancy,
    pub observation: Observation,
    /// The grid in the original photo's pixels (after undistortion when calibrated).
    pub geometry: BoardGeometry,
    pub notes: Vec<String>,
    /// Milliseconds per stage, in the order run.
    pub timings_ms: Vec<(&'static str, f64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(transparent)]
    Unreadable(#[from] LoadError),
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    #[error("{0}")]
    BadOptions(String),
    #[error("no board found in {}", path.display())]
    NoBoard { path: PathBuf, notes: Vec<String> },
    #[error("image processing failed: {0}")]
    OpenCv(#[from] opencv::Error),
    #[error("cannot write the debug pictures: {0}")]
    Debug(String),
    #[error("{0}")]
    Model(String),
}

impl DetectError {
    /// The process exit status: 2 unreadable input (photo, options, calibration file,
    /// stone model),
    /// 3 no board found, 4 an internal failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            DetectError::Unreadable(_)
            | DetectError::Calibration(_)
            | DetectError::BadOptions(_)
            | DetectError::Model(_) => 2,
            DetectError::NoBoard { .. } => 3,
            DetectError::OpenCv(_) | DetectError::Debug(_) => 4,
        }
    }
}

/// Parses `"x1,y1;x2,y2;x3,y3;x4,y4"`.
pub fn parse_corners(text: &str) -> Result<[[f64; 2]; 4], String> {
    let usage = "expected four points \"x1,y1;x2,y2;x3,y3;x4,y4\" (top-left, top-right, bottom-right, bottom-left, in pixels)";
    let points: Vec<&str> = text.split(';').map(str::trim).collect();
    if points.len() != 4 {
        return Err(format!(
            "--corners {text:?}: {} point(s); {usage}",
            points.len()
        ));
    }
    let mut corners = [[0.0; 2]; 4];
    for (corner, point) in corners.iter_mut().zip(&points) {
        let values: Vec<&str> = point.split(',').map(str::trim).collect();
        let parsed: Option<Vec<f64>> = values
            .iter()
            .map(|v| v.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect();
        match parsed.as_deref() {
            Some([x, y]) => *corner = [*x, *y],
            _ => {
                return Err(format!(
                    "--corners {text:?}: {point:?} is not \"x,y\"; {usage}"
                ));
            }
        }
    }
    Ok(corners)
}

pub fn detect(path: &Path, options: &DetectOptions) -> Result<Detection, DetectError> {
    let (reader, note) =
        reading::Reader::load(options.reader).map_err(|e| DetectError::Model(format!("{e:#}")))?;
    let mut detection = detect_with(path, options, &reader)?;
    detection.notes.extend(note);
    Ok(detection)
}

/// As [`detect`], with a reader already loaded (so a batch loads the model once).
pub fn detect_with(
    path: &Path,
    options: &DetectOptions,
    reader: &reading::Reader,
) -> Result<Detection, DetectError> {
    let mut timings = Vec::new();
    let mut notes = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, timings: &mut Vec<(&'static str, f64)>| {
        timings.push((name, clock.elapsed().as_secs_f64() * 1000.0));
        clock = Instant::now();
    };

    if let Some(size) = options.size
        && !(2..=40).contains(&size)
    {
        return Err(DetectError::BadOptions(format!(
            "--size {size}: a board has 2 to 40 lines"
        )));
    }
    let calibration = options
        .calibration
        .as_deref()
        .map(Calibration::load)
        .transpose()?;
    let loaded = still::load(path)?;
    let scale = loaded.scale;
    if scale != 1.0 {
        notes.push(format!(
            "the photo is {}×{}; it was decoded at 1/{scale:.0} of that to save memory",
            loaded.original_size.0, loaded.original_size.1
        ));
    }
    let mut image = loaded.image;
    if let Some(camera) = calibration.as_ref().and_then(|c| c.camera.as_ref()) {
        image = camera.undistort(&image, calibration.as_ref().and_then(|c| c.image_size))?;
        notes.push("undistorted with the calibration's camera model".into());
    }
    lap("load", &mut timings);

    // The locator's copy, made only when the locator or the debug pictures need it: with
    // corners, a calibration or markers a frame is read without it.
    let mut working: Option<(Mat, f64)> = None;

    // Everything below is in the decoded image's pixels; `scale` takes it to the original.
    let mut segments = Vec::new();
    let geometry = if let Some(corners) = options.corners {
        let size = options.size.unwrap_or(19);
        BoardGeometry::from_corners(size, corners)
            .ok_or_else(|| {
                DetectError::BadOptions(
                    "--corners: three of the four corners lie on one line".into(),
                )
            })?
            .scaled(1.0 / scale)
    } else if let Some(geometry) = calibration
        .as_ref()
        .and_then(|c| c.markers.as_ref().map(|m| (c, m)))
        .and_then(|(c, layout)| {
            let size = options.size.or(c.size).unwrap_or(19);
            let found = match markers::detect(&image) {
                Ok(found) => found,
                Err(error) => {
                    notes.push(format!("marker detection failed: {error}"));
                    return None;
                }
            };
            match layout.geometry(size, &found) {
                Ok(geometry) => {
                    notes.push(format!(
                        "the board was placed by {} ArUco markers",
                        found.len()
                    ));
                    Some(geometry)
                }
                Err(why) => {
                    notes.push(format!("markers not used: {why}"));
                    None
                }
            }
        })
    {
        geometry
    } else if let Some(geometry) = calibration
        .as_ref()
        .and_then(|c| c.geometry(loaded.original_size.0, loaded.original_size.1, options.size))
    {
        geometry.scaled(1.0 / scale)
    } else {
        let (small, factor) = working.insert(working_copy(&image)?);
        let located = locate::locate(small, options.size)?;
        notes.extend(located.notes);
        segments = located.segments;
        match located.geometry {
            Some(geometry) => geometry.scaled(1.0 / *factor),
            None => {
                lap("geometry", &mut timings);
                if let Some(dir) = &options.debug_dir {
                    crate::debug::write(dir, path, small, &segments, None, None, None)
                        .map_err(|e| DetectError::Debug(e.to_string()))?;
                }
                return Err(DetectError::NoBoard {
                    path: path.to_path_buf(),
                    notes,
                });
            }
        }
    };
    lap("geometry", &mut timings);

    let rectified = reading::rectify(&image, &geometry, CELL)?;
    lap("rectify", &mut timings);
    let shifts =
        reading::parallax_shifts(&geometry, f64::from(image.cols()), f64::from(image.rows()));
    let observation = reader.read(&rectified, geometry.size, CELL, &shifts)?;
    lap("reading", &mut timings);

    if let Some(dir) = &options.debug_dir {
        let (small, factor) = match working {
            Some(copy) => copy,
            None => working_copy(&image)?,
        };
        crate::debug::write(
            dir,
            path,
            &small,
            &segments,
            Some(&geometry.scaled(factor)),
            Some(&rectified),
            Some(&observation),
        )
        .map_err(|e| DetectError::Debug(e.to_string()))?;
        lap("debug", &mut timings);
    }

    Ok(Detection {
        occupancy: observation.occupancy(),
        geometry: geometry.scaled(scale),
        observation,
        notes,
        timings_ms: timings,
    })
}

impl Detection {
    /// The object `kradan detect --json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "size": self.observation.size,
            "rows": self.occupancy.to_text_rows(),
            "corners": self.geometry.corners(),
            "homography": self.geometry.homography,
            "points": cells_json(&self.observation, ["empty", "black", "white"]),
            "notes": self.notes,
            "timings_ms": timings_json(&self.timings_ms),
        })
    }
}

/// Every cell of an observation as `--json` lists them, row by row: where, the call, its
/// probabilities under `names` (empty and the two colours, as the game calls them) and
/// the confidence.
pub(crate) fn cells_json(observation: &Observation, names: [&str; 3]) -> Vec<serde_json::Value> {
    let size = observation.size;
    (0..size)
        .flat_map(|row| (0..size).map(move |col| (row, col)))
        .map(|(row, col)| {
            let cell = observation.get(row, col);
            let mut probabilities = serde_json::Map::new();
            for (name, p) in names.iter().zip(cell.probabilities) {
                probabilities.insert(name.to_string(), json!(p));
            }
            json!({
                "row": row,
                "col": col,
                "call": match cell.color { None => ".", Some(Color::Black) => "B", Some(Color::White) => "W" },
                "probabilities": probabilities,
                "confidence": cell.confidence(),
            })
        })
        .collect()
}

/// Milliseconds per stage as `--json`'s `timings_ms` object.
pub(crate) fn timings_json(timings: &[(&'static str, f64)]) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = timings
        .iter()
        .map(|(name, ms)| (name.to_string(), json!(round2(*ms))))
        .collect();
    serde_json::Value::Object(map)
}

/// The locator's working copy of the image and the factor to it (the image itself when
/// it is small enough).
fn working_copy(image: &Mat) -> opencv::Result<(Mat, f64)> {
    Ok(locate::reduced(image)?.unwrap_or_else(|| (image.clone(), 1.0)))
}

fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_parse_and_refuse_clearly() {
        assert_eq!(
            parse_corners("1,2; 3.5,4;5,6;7,8").unwrap(),
            [[1.0, 2.0], [3.5, 4.0], [5.0, 6.0], [7.0, 8.0]]
        );
        for bad in [
            "",
            "1,2;3,4;5,6",
            "1,2;3,4;5,6;7",
            "a,b;1,2;3,4;5,6",
            "1,2;3,4;5,6;7,8;9,9",
            "1,2;3,4;5,6;7,NaN",
        ] {
            let message = parse_corners(bad).unwrap_err();
            assert!(message.contains("--corners"), "{message}");
        }
    }
}
