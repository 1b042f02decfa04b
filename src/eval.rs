//! `kradan eval-photos`: run `detect` over a manifest of photos with known positions.

use crate::detect::{DetectOptions, detect_with};
use crate::games::Occupancy;
use crate::reading::Reader;
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
    let n = occupancy.height();
    let mut turned = Occupancy::empty(n, occupancy.width());
    for row in 0..occupancy.height() {
        for col in 0..occupancy.width() {
            turned.set(col, n - 1 - row, occupancy.get(row, col));
        }
    }
    turned
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

/// Reads every photo of a manifest with automatic board finding and the given reader
/// (loaded once for the whole run).
pub fn evaluate(manifest: &Path, reader: &Reader) -> anyhow::Result<Vec<PhotoResult>> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", manifest.display()))?;
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let mut results = Vec::new();
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
        let started = std::time::Instant::now();
        let outcome = detect_with(&folder.join(&record.image), &options, reader);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let points = truth.width() * truth.height();
        let (found, errors, message) = match outcome {
            Ok(detection) => (
                true,
                errors_under_best_rotation(&detection.occupancy, &truth),
                None,
            ),
            Err(error) => (false, points, Some(error.to_string())),
        };
        results.push(PhotoResult {
            set: record.set,
            image: record.image,
            found,
            errors,
            points,
            ms,
            message,
        });
    }
    Ok(results)
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
    out.push_str(&format!(
        "{:<20} {:>6} {:>6} {:>9} {:>6} {:>9}\n",
        "set", "photos", "found", "points %", "exact", "mean ms"
    ));
    for (name, s) in sets
        .iter()
        .chain(std::iter::once((&"overall".to_string(), &overall)))
    {
        out.push_str(&format!(
            "{:<20} {:>6} {:>6} {:>9.2} {:>6} {:>9.0}\n",
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
            match &r.message {
                Some(message) => out.push_str(&format!("  {}: {message}\n", r.image)),
                None => out.push_str(&format!(
                    "  {}: {} of {} points wrong\n",
                    r.image, r.errors, r.points
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
