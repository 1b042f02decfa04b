//! `kradan eval-photos`: run `detect` over a manifest of photos with known positions.

use crate::detect::{DetectOptions, detect_with};
use crate::games::Occupancy;
use crate::reading::Reader;
use opencv::core::{Mat, Point2f, Scalar, Size};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct Record {
    set: String,
    image: String,
    size: usize,
    truth: Vec<String>,
}

/// One photo's outcome.
#[derive(Clone, Debug)]
pub struct PhotoResult {
    pub set: String,
    pub image: String,
    pub found: bool,
    /// Points that differ from the truth under the best rotation (all points when no board).
    pub errors: usize,
    pub points: usize,
    pub ms: f64,
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub photos: usize,
    pub found: usize,
    pub points: usize,
    pub right_points: usize,
    pub exact: usize,
    pub total_ms: f64,
}

impl Summary {
    fn add(&mut self, result: &PhotoResult) {
        self.photos += 1;
        self.found += result.found as usize;
        self.points += result.points;
        self.right_points += result.points - result.errors;
        self.exact += (result.found && result.errors == 0) as usize;
        self.total_ms += result.ms;
    }

    pub fn accuracy(&self) -> f64 {
        100.0 * self.right_points as f64 / self.points.max(1) as f64
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "photos": self.photos,
            "boards_found": self.found,
            "point_accuracy_percent": (self.accuracy() * 100.0).round() / 100.0,
            "boards_exact": self.exact,
            "mean_ms": (self.total_ms / self.photos.max(1) as f64).round(),
        })
    }
}

/// The position turned a quarter clockwise.
pub fn rotate(occupancy: &Occupancy) -> Occupancy {
    occupancy.turned_clockwise()
}

/// Points that differ from `truth` under the best of the four rotations.
pub fn errors_under_best_rotation(found: &Occupancy, truth: &Occupancy) -> usize {
    let mut turned = found.clone();
    let mut best = usize::MAX;
    for _ in 0..4 {
        if turned.width() == truth.width() && turned.height() == truth.height() {
            let errors = (0..truth.height())
                .flat_map(|r| (0..truth.width()).map(move |c| (r, c)))
                .filter(|&(r, c)| turned.get(r, c) != truth.get(r, c))
                .count();
            best = best.min(errors);
        }
        turned = rotate(&turned);
    }
    best.min(truth.width() * truth.height())
}

/// Conditions the development photos lack but users' photos have, made from each photo to
/// see how reading holds up beyond what it was developed on (`--augment`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// A phone held at an angle: the whole picture turned 25°.
    Rotated,
    /// Coloured LED stage light: red and blue up, green down.
    MagentaLight,
    GreenLight,
    /// Under-exposed: every value at 45 %.
    Dim,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::Rotated,
        Variant::MagentaLight,
        Variant::GreenLight,
        Variant::Dim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Rotated => "rotated 25°",
            Variant::MagentaLight => "magenta light",
            Variant::GreenLight => "green light",
            Variant::Dim => "dim (45 %)",
        }
    }

    pub fn apply(self, image: &Mat) -> opencv::Result<Mat> {
        let mut out = Mat::default();
        match self {
            Variant::Rotated => {
                let (w, h) = (f64::from(image.cols()), f64::from(image.rows()));
                let mut turn = imgproc::get_rotation_matrix_2d(
                    Point2f::new((w / 2.0) as f32, (h / 2.0) as f32),
                    25.0,
                    1.0,
                )?;
                let (cos, sin) = (25f64.to_radians().cos(), 25f64.to_radians().sin());
                let (nw, nh) = (h * sin + w * cos, h * cos + w * sin);
                *turn.at_2d_mut::<f64>(0, 2)? += (nw - w) / 2.0;
                *turn.at_2d_mut::<f64>(1, 2)? += (nh - h) / 2.0;
                imgproc::warp_affine(
                    image,
                    &mut out,
                    &turn,
                    Size::new(nw.round() as i32, nh.round() as i32),
                    imgproc::INTER_LINEAR,
                    opencv::core::BORDER_CONSTANT,
                    Scalar::all(60.0),
                )?;
            }
            Variant::MagentaLight | Variant::GreenLight | Variant::Dim => {
                // B, G, R gains.
                let gains = match self {
                    Variant::MagentaLight => [1.25, 0.55, 1.15],
                    Variant::GreenLight => [0.5, 1.2, 0.6],
                    _ => [0.45, 0.45, 0.45],
                };
                opencv::core::multiply(
                    image,
                    &Scalar::new(gains[0], gains[1], gains[2], 0.0),
                    &mut out,
                    1.0,
                    -1,
                )?;
            }
        }
        Ok(out)
    }
}

/// Reads every photo of a manifest with automatic board finding and the given reader
/// (loaded once for the whole run); with `augment`, each photo's [`Variant`]s too, each
/// counted as a set of its own.
pub fn evaluate(
    manifest: &Path,
    reader: &Reader,
    augment: bool,
) -> anyhow::Result<Vec<PhotoResult>> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", manifest.display()))?;
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let mut results = Vec::new();
    let mut scratch: Option<ScratchDir> = None;
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let record: Record = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{} line {}: {e}", manifest.display(), number + 1))?;
        let truth = Occupancy::from_text_rows(&record.truth).map_err(|e| {
            anyhow::anyhow!("{} line {}: truth: {e}", manifest.display(), number + 1)
        })?;
        let options = DetectOptions {
            size: Some(record.size),
            ..DetectOptions::default()
        };
        let path = folder.join(&record.image);
        results.push(score(
            &record.set,
            &record.image,
            &path,
            &truth,
            &options,
            reader,
        ));
        if augment {
            let original = crate::source::image::load(&path)?;
            for variant in Variant::ALL {
                let changed = variant.apply(&original.image)?;
                let scratch = scratch.get_or_insert_with(ScratchDir::new).path()?;
                let stem = Path::new(&record.image)
                    .file_stem()
                    .map_or("photo".into(), |s| s.to_string_lossy().into_owned());
                let file = scratch.join(format!("{stem}-{variant:?}.png"));
                anyhow::ensure!(
                    imgcodecs::imwrite_def(file.as_os_str(), &changed)?,
                    "cannot write {}",
                    file.display()
                );
                let set = format!("augmented: {}", variant.name());
                results.push(score(&set, &record.image, &file, &truth, &options, reader));
            }
        }
    }
    Ok(results)
}

fn score(
    set: &str,
    image: &str,
    path: &Path,
    truth: &Occupancy,
    options: &DetectOptions,
    reader: &Reader,
) -> PhotoResult {
    let started = std::time::Instant::now();
    let outcome = detect_with(path, options, reader);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let points = truth.width() * truth.height();
    let (found, errors, message) = match outcome {
        Ok(detection) => (
            true,
            errors_under_best_rotation(&detection.occupancy, truth),
            None,
        ),
        Err(error) => (false, points, Some(error.to_string())),
    };
    PhotoResult {
        set: set.to_string(),
        image: image.to_string(),
        found,
        errors,
        points,
        ms,
        message,
    }
}

/// A folder of this process's own under the system's temporary directory, removed when
/// dropped: the variants are written there for `detect`, which reads files.
struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    fn new() -> Self {
        ScratchDir(std::env::temp_dir().join(format!("kradan-eval-{}", std::process::id())))
    }

    fn path(&self) -> anyhow::Result<&Path> {
        std::fs::create_dir_all(&self.0)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", self.0.display()))?;
        Ok(&self.0)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn summaries(results: &[PhotoResult]) -> (BTreeMap<String, Summary>, Summary) {
    let mut sets: BTreeMap<String, Summary> = BTreeMap::new();
    let mut overall = Summary::default();
    for result in results {
        sets.entry(result.set.clone()).or_default().add(result);
        overall.add(result);
    }
    (sets, overall)
}

pub fn report_text(results: &[PhotoResult]) -> String {
    let (sets, overall) = summaries(results);
    let mut out = String::new();
    let width = sets
        .keys()
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(0)
        .max(20);
    out.push_str(&format!(
        "{:<width$} {:>6} {:>6} {:>9} {:>6} {:>9}\n",
        "set", "photos", "found", "points %", "exact", "mean ms"
    ));
    for (name, s) in sets
        .iter()
        .chain(std::iter::once((&"overall".to_string(), &overall)))
    {
        out.push_str(&format!(
            "{:<width$} {:>6} {:>6} {:>9.2} {:>6} {:>9.0}\n",
            name,
            s.photos,
            s.found,
            s.accuracy(),
            s.exact,
            s.total_ms / s.photos.max(1) as f64
        ));
    }
    let wrong: Vec<&PhotoResult> = results
        .iter()
        .filter(|r| !r.found || r.errors > 0)
        .collect();
    if !wrong.is_empty() {
        out.push_str("\nnot exactly right:\n");
        for r in wrong {
            let name = match r.set.strip_prefix("augmented: ") {
                Some(variant) => format!("{} ({variant})", r.image),
                None => r.image.clone(),
            };
            match &r.message {
                Some(message) => out.push_str(&format!("  {name}: {message}\n")),
                None => out.push_str(&format!(
                    "  {name}: {} of {} points wrong\n",
                    r.errors, r.points
                )),
            }
        }
    }
    out
}

pub fn report_json(results: &[PhotoResult]) -> serde_json::Value {
    let (sets, overall) = summaries(results);
    json!({
        "sets": sets.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        "overall": overall.to_json(),
        "not_exact": results.iter().filter(|r| !r.found || r.errors > 0).map(|r| json!({
            "image": r.image, "set": r.set, "found": r.found, "errors": r.errors, "message": r.message,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_is_found() {
        let truth = Occupancy::from_text_rows(&["B..", "..W", "..."]).unwrap();
        let turned = rotate(&truth);
        assert_eq!(turned.to_text_rows(), vec![". . B", ". . .", ". W ."]);
        assert_eq!(errors_under_best_rotation(&turned, &truth), 0);
        assert_eq!(
            errors_under_best_rotation(&rotate(&rotate(&turned)), &truth),
            0
        );
        let one_off = Occupancy::from_text_rows(&["B..", "...", "..."]).unwrap();
        assert_eq!(errors_under_best_rotation(&one_off, &truth), 1);
    }
}
