//! A patch of one picture looked for in another: where a piece or stone went when it
//! was pushed, found by normalised correlation rather than by any reader's classes, so
//! that it holds where the readers' colours do not.

use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;

/// How a patch of one picture matched another.
pub struct PatchMatch {
    /// From the patch's place to where it matched best, in pixels.
    pub offset: [f64; 2],
    /// The normalised correlation there, and at the place looked from.
    pub best: f64,
    pub unmoved: f64,
    /// The patch's standard deviation, in grey levels.
    pub spread: f64,
}

/// Matches the patch of `before` round `at` (`half` pixels each way) in `after` within
/// `reach` pixels of `at` moved by `shift`; none when it is cut by the picture's edge.
pub fn patch_scores(
    before: &Mat,
    after: &Mat,
    at: [f64; 2],
    shift: [f64; 2],
    half: i32,
    reach: i32,
) -> opencv::Result<Option<PatchMatch>> {
    use opencv::core::{Point, Rect, Scalar};
    let (width, height) = (before.cols(), before.rows());
    let fits = |x: i32, y: i32, r: i32| x - r >= 0 && y - r >= 0 && x + r < width && y + r < height;
    let (x, y) = (at[0].round() as i32, at[1].round() as i32);
    let (tx, ty) = (
        (at[0] + shift[0]).round() as i32,
        (at[1] + shift[1]).round() as i32,
    );
    if !fits(x, y, half) || !fits(tx, ty, half + reach) {
        return Ok(None);
    }
    let patch = Mat::roi(
        before,
        Rect::new(x - half, y - half, 2 * half + 1, 2 * half + 1),
    )?;
    let side = 2 * (half + reach) + 1;
    let area = Mat::roi(
        after,
        Rect::new(tx - half - reach, ty - half - reach, side, side),
    )?;
    let mut scores = Mat::default();
    imgproc::match_template_def(&area, &patch, &mut scores, imgproc::TM_CCOEFF_NORMED)?;
    let (mut best, mut best_at) = (0.0, Point::default());
    opencv::core::min_max_loc(
        &scores,
        None,
        Some(&mut best),
        None,
        Some(&mut best_at),
        &opencv::core::no_array(),
    )?;
    let (mut mean, mut deviation) = (Scalar::default(), Scalar::default());
    opencv::core::mean_std_dev(&patch, &mut mean, &mut deviation, &opencv::core::no_array())?;
    let unmoved = f64::from(*scores.at_2d::<f32>(reach, reach)?);
    Ok(Some(PatchMatch {
        offset: [
            f64::from(tx - x) + f64::from(best_at.x - reach),
            f64::from(ty - y) + f64::from(best_at.y - reach),
        ],
        best,
        unmoved,
        spread: deviation[0],
    }))
}

/// How a push shows against the rest: moved between `least` and `most` of a cell, matching
/// better there than where it stood by `gain`, and no more than `at_most` moved so (more
/// moving together is the picture moving under them).
pub struct Push {
    pub least: f64,
    pub most: f64,
    pub gain: f64,
    pub at_most: usize,
}

/// The places of `matched` (each with its patch as found in the later picture) pushed as
/// `push` says, against the way the median patch moved, at `cell` pixels a cell.
pub fn pushed_against_the_rest(
    matched: &[([usize; 2], PatchMatch)],
    cell: f64,
    push: &Push,
) -> Vec<[usize; 2]> {
    let median = |axis: usize| {
        let mut values: Vec<f64> = matched.iter().map(|(_, f)| f.offset[axis]).collect();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let picture_moved = [median(0), median(1)];
    let pushed: Vec<[usize; 2]> = matched
        .iter()
        .filter(|(_, found)| {
            let moved = (found.offset[0] - picture_moved[0])
                .hypot(found.offset[1] - picture_moved[1])
                / cell;
            (push.least..=push.most).contains(&moved) && found.best - found.unmoved >= push.gain
        })
        .map(|&(place, _)| place)
        .collect();
    if pushed.len() > push.at_most {
        return Vec::new();
    }
    pushed
}

/// The mean absolute change from `before` to `after`, per channel, over the square of
/// `half` pixels each way round each of `centres` (`[x, y]`); `None` for a square cut by
/// the picture's edge. Both trackers ask which cell middles a hand or a stone changed.
pub fn middle_changes(
    before: &Mat,
    after: &Mat,
    centres: impl IntoIterator<Item = [i32; 2]>,
    half: i32,
) -> opencv::Result<Vec<Option<opencv::core::Scalar>>> {
    use opencv::core::Rect;
    let mut change = Mat::default();
    opencv::core::absdiff(before, after, &mut change)?;
    let (width, height) = (change.cols(), change.rows());
    centres
        .into_iter()
        .map(|[x, y]| {
            if x - half < 0 || y - half < 0 || x + half >= width || y + half >= height {
                return Ok(None);
            }
            let middle = Mat::roi(
                &change,
                Rect::new(x - half, y - half, 2 * half + 1, 2 * half + 1),
            )?;
            opencv::core::mean_def(&middle).map(Some)
        })
        .collect()
}
