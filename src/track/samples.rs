//! Cheap measurements of a rectified board that tell a hand from a stone.
//!
//! A stone only ever covers the disc around its own point. The middle of each square
//! between four points (a "gap") lies 0.71 spacings from every point, beyond the reach of
//! any stone that stands on its point, so a gap that changes colour was changed by
//! something else: a hand, an arm, their shadow, a stone in flight, a moved board. The
//! outer ring of gaps, beyond the edge lines, sees an arm as it reaches in.
//!
//! Each frame is reduced to the mean colour of a small box at every gap and every point
//! ([`Samples`]); comparing those with the previous frame tells motion, and comparing them
//! with the last settled view tells what is still different.

use opencv::core::Mat;
use opencv::prelude::*;

/// Half the side of the box averaged at each sample, as a fraction of the cell: small
/// enough that a stone on a neighbouring point (radius 0.5) stays out of a gap's box.
const BOX_FRACTION: f64 = 0.1;

/// How far a sample's chromaticity must move to have changed in kind: four times the noise
/// of a dark gap; a hand or sleeve moves it twice as far.
const IN_KIND_CHROMA: f32 = 0.04;
/// … or its brightness, beyond the light's local change (a black sleeve on white paper).
const IN_KIND_RATIO: f32 = 1.8;
/// How many samples either way the light's local change is taken over.
const IN_KIND_REACH: usize = 2;

/// The smallest change of a gap, in grey levels of any channel, that can be told from
/// sensor noise and compression in a dim picture.
const MIN_VISIBLE: f32 = 16.0;

/// Mean colours at the gaps and the points of one rectified board.
#[derive(Clone, Debug)]
pub struct Samples {
    pub size: usize,
    /// `(size + 1)²` gaps, row by row: gap (gc, gr) is the middle of the square whose
    /// top-left point is (gc − 1, gr − 1); the outer ring lies beyond the edge lines.
    pub gaps: Vec<[f32; 3]>,
    /// `size²` points, row by row.
    pub points: Vec<[f32; 3]>,
    /// Beyond the edge lines, 0.85 of a spacing out, level with every line: where an arm
    /// reaching for an edge point passes without covering any gap.
    pub rim: Vec<[f32; 3]>,
    /// On the rim's line between its samples ([`rim_between_places`]); empty on a board
    /// measured with [`Samples::measure`]. Only [`Samples::rim_crossed`] reads them: the
    /// tests that count changed samples were tuned on the rim level with the lines, and a
    /// denser rim there took a tall figure's top leaning over the edge for motion (Makruk
    /// 310564 lost seven moves).
    pub rim_between: Vec<[f32; 3]>,
}

impl Samples {
    /// Measures a rectified board (see [`crate::reading::rectify`]): BGR, 8 bits, point
    /// (col, row) at pixel ((col + 1) · cell, (row + 1) · cell).
    pub fn measure(rectified: &Mat, size: usize, cell: i32) -> opencv::Result<Samples> {
        Samples::measure_with_rim(rectified, size, cell, 1)
    }

    /// As [`Samples::measure`], with `rim_per_spacing` rim samples along each side per
    /// spacing ([`Samples::rim`] and [`Samples::rim_between`]): an 8×8 board's nine lines
    /// leave an arm room to pass between its rim samples unseen.
    pub fn measure_with_rim(
        rectified: &Mat,
        size: usize,
        cell: i32,
        rim_per_spacing: usize,
    ) -> opencv::Result<Samples> {
        let half = ((f64::from(cell) * BOX_FRACTION).round() as i32).max(1);
        let cols = rectified.cols();
        let rows = rectified.rows();
        let step = rectified.step1(0)? as i32;
        let data = rectified.data_bytes()?;
        let mean_at = |x: f64, y: f64| -> [f32; 3] {
            let cx = x.round() as i32;
            let cy = y.round() as i32;
            let mut sum = [0u32; 3];
            let mut count = 0u32;
            for yy in (cy - half).max(0)..=(cy + half).min(rows - 1) {
                let row = &data[(yy * step) as usize..];
                for xx in (cx - half).max(0)..=(cx + half).min(cols - 1) {
                    let pixel = &row[(xx * 3) as usize..(xx * 3 + 3) as usize];
                    sum[0] += u32::from(pixel[0]);
                    sum[1] += u32::from(pixel[1]);
                    sum[2] += u32::from(pixel[2]);
                    count += 1;
                }
            }
            let count = count.max(1) as f32;
            sum.map(|s| s as f32 / count)
        };
        let c = f64::from(cell);
        let gaps = (0..=size)
            .flat_map(|gr| (0..=size).map(move |gc| (gc, gr)))
            .map(|(gc, gr)| mean_at((gc as f64 + 0.5) * c, (gr as f64 + 0.5) * c))
            .collect();
        let points = (0..size)
            .flat_map(|row| (0..size).map(move |col| (col, row)))
            .map(|(col, row)| mean_at((col as f64 + 1.0) * c, (row as f64 + 1.0) * c))
            .collect();
        let at_places = |places: Vec<[f64; 2]>| -> Vec<[f32; 3]> {
            places
                .into_iter()
                .map(|[col, row]| mean_at((col + 1.0) * c, (row + 1.0) * c))
                .collect()
        };
        Ok(Samples {
            size,
            gaps,
            points,
            rim: at_places(rim_places(size)),
            rim_between: at_places(rim_between_places(size, rim_per_spacing)),
        })
    }

    /// The overall brightness ratio of `self` to `earlier`, measured on the gaps (the bare
    /// board): exposure drifts and lamps dim, and that alone is no hand.
    pub fn gain_against(&self, earlier: &Samples) -> f32 {
        let mut ratios: Vec<f32> = self
            .gaps
            .iter()
            .zip(&earlier.gaps)
            .map(|(now, then)| brightness(now) / brightness(then).max(1.0))
            .collect();
        median(&mut ratios).clamp(0.25, 4.0)
    }

    /// For every gap, whether it differs from `earlier` by more than `threshold` grey
    /// levels in any channel once the overall gain is taken out.
    pub fn changed_gaps(&self, earlier: &Samples, threshold: f32) -> Vec<bool> {
        let gain = self.gain_against(earlier);
        changed(&self.gaps, &earlier.gaps, gain, threshold)
    }

    /// For every gap, whether something other than light changed it since `earlier`.
    ///
    /// Light changes brightness, not colour: a lamp moved, a head's shadow drifting over
    /// the board or the camera's exposure leave each gap's chromaticity as it was and change
    /// its brightness smoothly, while a hand, a sleeve or a stone in flight brings a colour
    /// of its own. A gap changed if its chromaticity moved by more than [`IN_KIND_CHROMA`]
    /// (in fractions of the channel sum), or if its brightness, divided by the median
    /// change of the gaps within [`IN_KIND_REACH`] of it, changed by more than
    /// [`IN_KIND_RATIO`] times (a black sleeve on a white board).
    pub fn changed_in_kind(&self, earlier: &Samples) -> Vec<bool> {
        changed_in_kind(&self.gaps, &earlier.gaps, self.size + 1)
    }

    /// As [`Samples::changed_in_kind`], for the points: on an 8×8 board's lattice they are
    /// the squares' corners, which pieces standing inside their squares leave bare.
    pub fn points_changed_in_kind(&self, earlier: &Samples) -> Vec<bool> {
        changed_in_kind(&self.points, &earlier.points, self.size)
    }

    /// For every rim sample, whether something other than light changed it since
    /// `earlier`, judged as [`Samples::changed_in_kind`] judges gaps, each against the
    /// samples near it along its own side. No stone reaches the rim: a change
    /// there is an arm reaching in, even when it rests over an edge point whose stone
    /// explains every gap it covers.
    pub fn rim_changed_in_kind(&self, earlier: &Samples) -> Vec<bool> {
        let mut changed = vec![false; self.rim.len()];
        for side in 0..4 {
            let along = |rim: &[[f32; 3]]| -> Vec<[f32; 3]> {
                rim.iter().skip(side).step_by(4).copied().collect()
            };
            let line = changed_in_kind(&along(&self.rim), &along(&earlier.rim), self.size);
            for (i, c) in line.into_iter().enumerate() {
                changed[i * 4 + side] = c;
            }
        }
        changed
    }

    /// How many gaps and rim samples differ from `earlier` by more than `threshold` grey
    /// levels, the overall gain taken out: what moved between two frames.
    pub fn moved(&self, earlier: &Samples, threshold: f32) -> usize {
        let gain = self.gain_against(earlier);
        let gaps = changed(&self.gaps, &earlier.gaps, gain, threshold);
        let rim = changed(&self.rim, &earlier.rim, gain, threshold);
        gaps.iter().chain(&rim).filter(|&&c| c).count()
    }

    /// How many points, rim samples and outer-ring gaps differ from `earlier` by more than
    /// `threshold` grey levels, the overall gain taken out: what moved between two frames
    /// of an 8×8 board, whose pieces stand in the middles of its squares (the inner gaps
    /// of its lattice) and leave the squares' corners (the points) and the rim bare.
    pub fn moved_off_squares(&self, earlier: &Samples, threshold: f32) -> usize {
        let gain = self.gain_against(earlier);
        let points = changed(&self.points, &earlier.points, gain, threshold);
        let rim = changed(&self.rim, &earlier.rim, gain, threshold);
        let gaps = changed(&self.gaps, &earlier.gaps, gain, threshold);
        let outer = gaps
            .iter()
            .enumerate()
            .filter(|&(gap, &c)| c && is_outer_gap(self.size, gap))
            .count();
        points.iter().chain(&rim).filter(|&&c| c).count() + outer
    }

    /// As [`Samples::changed_gaps`], for the points.
    pub fn changed_points(&self, earlier: &Samples, threshold: f32) -> Vec<bool> {
        let gain = self.gain_against(earlier);
        changed(&self.points, &earlier.points, gain, threshold)
    }

    /// Whether a rim sample, level with a line or between them, changed from `earlier` by
    /// more than `threshold` grey levels (the overall gain taken out) on a side whose
    /// samples changed by no more than `calm` in the middle: an arm covers a few samples
    /// of a side, where a jolt of the camera changes every sample along it a little.
    pub fn rim_crossed(&self, earlier: &Samples, threshold: f32, calm: f32) -> bool {
        let gain = self.gain_against(earlier);
        (0..4).any(|side| {
            let mut changes: Vec<f32> = side_changes(&self.rim, &earlier.rim, side, gain)
                .chain(side_changes(
                    &self.rim_between,
                    &earlier.rim_between,
                    side,
                    gain,
                ))
                .collect();
            let most = changes.iter().copied().fold(0.0, f32::max);
            most > threshold && median(&mut changes) <= calm
        })
    }

    /// How many rim samples differ from `earlier` by more than `threshold` grey levels,
    /// the overall gain taken out: an arm reaching in, or lying across the board's edge.
    pub fn rim_changed(&self, earlier: &Samples, threshold: f32) -> usize {
        let gain = self.gain_against(earlier);
        changed(&self.rim, &earlier.rim, gain, threshold)
            .iter()
            .filter(|&&c| c)
            .count()
    }
}

/// How far beyond the edge lines the rim lies, in spacings.
const RIM_OUT: f64 = 0.85;

/// Where the rim samples of a lattice of `size` lines lie, in grid units (point (col, row)
/// at (col, row)), in the order of [`Samples::rim`]: level with every line, beyond each
/// of the four edges.
pub fn rim_places(size: usize) -> Vec<[f64; 2]> {
    rim_around(size, (0..size).map(|i| i as f64))
}

/// Where [`Samples::rim_between`] lies: `per_spacing − 1` places between each two of
/// [`rim_places`]' along every side, in the same order of sides.
pub fn rim_between_places(size: usize, per_spacing: usize) -> Vec<[f64; 2]> {
    let per_spacing = per_spacing.max(1);
    rim_around(
        size,
        (0..size.saturating_sub(1)).flat_map(move |i| {
            (1..per_spacing).map(move |k| i as f64 + k as f64 / per_spacing as f64)
        }),
    )
}

/// The rim places level with each of `along`, beyond the near row, the far row, the near
/// column and the far column in turn.
fn rim_around(size: usize, along: impl Iterator<Item = f64>) -> Vec<[f64; 2]> {
    let (near, far) = (-RIM_OUT, (size - 1) as f64 + RIM_OUT);
    along
        .flat_map(|along| [[along, near], [along, far], [near, along], [far, along]])
        .collect()
}

/// The middle of the line between two neighbouring points, where a stone pushed half a
/// point off its own stands.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The two points (row, col), in the rectified board's (image) order.
    pub ends: [[usize; 2]; 2],
    pub middle: [f32; 3],
}

/// A stone pushed off its point onto the middle of a line from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pushed {
    /// The point it stood on.
    pub from: [usize; 2],
    /// The line it stands on: `from` and the bare point next to it.
    pub line: [[usize; 2]; 2],
}

/// Stones gone from their points that stand on the middle of a line from it: pushed half
/// a point off. Of the lines from a point whose stone is gone (`held_then` and now
/// `bare_now`, the rectified board's order) to bare points, the one such a stone stands on
/// looks like the stone did on its point (`look_then`), the others like bare lines. A
/// stone lifted leaves them all bare.
pub fn stones_pushed_between(
    now: &[Edge],
    bare_now: impl Fn([usize; 2]) -> bool,
    held_then: impl Fn([usize; 2]) -> bool,
    look_then: impl Fn([usize; 2]) -> [f32; 3],
) -> Vec<Pushed> {
    let mut gone: Vec<[usize; 2]> = now
        .iter()
        .flat_map(|edge| edge.ends)
        .filter(|&p| bare_now(p) && held_then(p))
        .collect();
    gone.sort_unstable();
    gone.dedup();
    let size = now
        .iter()
        .map(|edge| edge.ends[1][0].max(edge.ends[1][1]) + 1)
        .max()
        .unwrap_or(0);
    let mut pushed = Vec::new();
    for point in gone {
        let lines: Vec<&Edge> = now
            .iter()
            .filter(|edge| {
                edge.ends.contains(&point)
                    && edge
                        .ends
                        .iter()
                        .all(|&p| p == point || (bare_now(p) && !held_then(p)))
            })
            .collect();
        let stone = look_then(point);
        let covered: Vec<&Edge> = lines
            .iter()
            .copied()
            .filter(|edge| {
                // The barest of the other lines of its kind: the one least like the stone.
                // The edge lines are drawn thicker than the others, and darker.
                let Some(bare) = lines
                    .iter()
                    .filter(|other| {
                        other.ends != edge.ends && on_edge(other, size) == on_edge(edge, size)
                    })
                    .map(|other| other.middle)
                    .max_by(|a, b| distance(a, &stone).total_cmp(&distance(b, &stone)))
                else {
                    return false;
                };
                let visible = distance(&bare, &stone) >= MIN_VISIBLE;
                visible && share_toward(&edge.middle, &bare, &stone) > STONE_SHARE
            })
            .collect();
        if let [edge] = covered.as_slice() {
            pushed.push(Pushed {
                from: point,
                line: edge.ends,
            });
        }
    }
    pushed
}

/// Whether a line runs along the board's edge.
fn on_edge(edge: &Edge, size: usize) -> bool {
    let [[r0, c0], [r1, c1]] = edge.ends;
    let last = size.saturating_sub(1);
    (r0 == r1 && (r0 == 0 || r0 == last)) || (c0 == c1 && (c0 == 0 || c0 == last))
}

/// How far from the barest line toward the stone's look a line's middle must lie to hold
/// the stone: half-covered by a stone pushed onto it, 0.48 on a development clip; bare
/// lines of one kind lie within 0.15 of each other.
const STONE_SHARE: f32 = 0.4;

/// How far apart in chromaticity a stone and the bare line must be for the share to be
/// judged by hue alone: twice [`IN_KIND_CHROMA`]. A black stone on wood is 0.23 apart.
const STONE_HUE: f32 = 2.0 * IN_KIND_CHROMA;

/// How far `middle` lies from `bare` toward `stone`, as a share of the way. By hue when the
/// stone's differs enough from the line's: a black stone's highlight is bright, and the
/// shadow the stone casts on the line beyond it dark, but only the stone is grey on
/// wood (a black stone pushed half a point on held-out 100327, development now: 0.43
/// then 0.30 in colour on its line, 0.34 then 0.38 on the shadowed one; 0.84 and under
/// 0.2 by hue).
fn share_toward(middle: &[f32; 3], bare: &[f32; 3], stone: &[f32; 3]) -> f32 {
    let by_hue = distance(&chromaticity(bare), &chromaticity(stone)) >= STONE_HUE;
    let [middle, bare, stone] = if by_hue {
        [middle, bare, stone].map(chromaticity)
    } else {
        [*middle, *bare, *stone]
    };
    let towards = [0, 1, 2].map(|ch| stone[ch] - bare[ch]);
    let span = towards.iter().map(|v| v * v).sum::<f32>();
    (0..3)
        .map(|ch| (middle[ch] - bare[ch]) * towards[ch])
        .sum::<f32>()
        / span.max(f32::EPSILON)
}

fn distance(a: &[f32; 3], b: &[f32; 3]) -> f32 {
    (0..3).map(|ch| (a[ch] - b[ch]).powi(2)).sum::<f32>().sqrt()
}

/// The middles of the lines between every two neighbouring points of a rectified board
/// (see [`Samples::measure`]), row by row, each point's line to the right and then down.
pub fn edges(rectified: &Mat, size: usize, cell: i32) -> opencv::Result<Vec<Edge>> {
    let half = ((f64::from(cell) * BOX_FRACTION).round() as i32).max(1);
    let c = f64::from(cell);
    let mut edges = Vec::with_capacity(2 * size * size);
    for row in 0..size {
        for col in 0..size {
            let (x, y) = ((col as f64 + 1.0) * c, (row as f64 + 1.0) * c);
            if col + 1 < size {
                edges.push(Edge {
                    ends: [[row, col], [row, col + 1]],
                    middle: box_mean(rectified, x + c / 2.0, y, half)?,
                });
            }
            if row + 1 < size {
                edges.push(Edge {
                    ends: [[row, col], [row + 1, col]],
                    middle: box_mean(rectified, x, y + c / 2.0, half)?,
                });
            }
        }
    }
    Ok(edges)
}

/// The mean colour of the box of half side `half` around (`x`, `y`).
fn box_mean(rectified: &Mat, x: f64, y: f64, half: i32) -> opencv::Result<[f32; 3]> {
    let (cols, rows) = (rectified.cols(), rectified.rows());
    let step = rectified.step1(0)?;
    let data = rectified.data_bytes()?;
    let (cx, cy) = (x.round() as i32, y.round() as i32);
    let mut sum = [0u32; 3];
    let mut count = 0u32;
    for yy in (cy - half).max(0)..=(cy + half).min(rows - 1) {
        for xx in (cx - half).max(0)..=(cx + half).min(cols - 1) {
            let at = yy as usize * step + xx as usize * 3;
            for ch in 0..3 {
                sum[ch] += u32::from(data[at + ch]);
            }
            count += 1;
        }
    }
    let count = count.max(1) as f32;
    Ok(sum.map(|v| v as f32 / count))
}

/// Per sample of a grid `side` wide, row by row, whether something other than light changed it
/// (see [`Samples::changed_in_kind`]).
fn changed_in_kind(now: &[[f32; 3]], then: &[[f32; 3]], side: usize) -> Vec<bool> {
    let (chroma, ratio, reach) = (IN_KIND_CHROMA, IN_KIND_RATIO, IN_KIND_REACH);
    let ratios: Vec<f32> = now
        .iter()
        .zip(then)
        .map(|(now, then)| brightness(now).max(1.0) / brightness(then).max(1.0))
        .collect();
    let rows = now.len().div_ceil(side.max(1));
    let mut window = Vec::with_capacity((2 * reach + 1).pow(2));
    (0..now.len())
        .map(|at| {
            let (x, y) = (at % side, at / side);
            window.clear();
            for wy in y.saturating_sub(reach)..=(y + reach).min(rows - 1) {
                for wx in x.saturating_sub(reach)..=(x + reach).min(side - 1) {
                    window.push(ratios[wy * side + wx]);
                }
            }
            let local = ratios[at] / median(&mut window).max(1e-3);
            let (a, b) = (chromaticity(&now[at]), chromaticity(&then[at]));
            let shifted = (0..3).any(|ch| (a[ch] - b[ch]).abs() > chroma);
            // In a dim room a few grey levels of noise are a large change of colour:
            // a change too small to see is no change, whatever its kind.
            let visible = (0..3).any(|ch| (now[at][ch] - then[at][ch]).abs() > MIN_VISIBLE);
            visible && (shifted || local > ratio || local < 1.0 / ratio)
        })
        .collect()
}

fn changed(now: &[[f32; 3]], then: &[[f32; 3]], gain: f32, threshold: f32) -> Vec<bool> {
    now.iter()
        .zip(then)
        .map(|(now, then)| change(now, then, gain) > threshold)
        .collect()
}

/// How much a sample changed from `then` to `now`, in its most changed colour channel,
/// the overall gain taken out.
fn change(now: &[f32; 3], then: &[f32; 3], gain: f32) -> f32 {
    (0..3)
        .map(|ch| (now[ch] / gain - then[ch]).abs())
        .fold(0.0, f32::max)
}

/// The [`change`]s of one side's rim samples (`side` of the four, in [`rim_around`]'s
/// order).
fn side_changes<'a>(
    now: &'a [[f32; 3]],
    then: &'a [[f32; 3]],
    side: usize,
    gain: f32,
) -> impl Iterator<Item = f32> + 'a {
    now.iter()
        .zip(then)
        .skip(side)
        .step_by(4)
        .map(move |(now, then)| change(now, then, gain))
}

fn chromaticity(bgr: &[f32; 3]) -> [f32; 3] {
    // Dark samples are mostly noise: their colour is read against a floor.
    let sum = (bgr[0] + bgr[1] + bgr[2]).max(60.0);
    bgr.map(|v| v / sum)
}

fn brightness(bgr: &[f32; 3]) -> f32 {
    (bgr[0] + bgr[1] + bgr[2]) / 3.0
}

fn median(values: &mut [f32]) -> f32 {
    if values.is_empty() {
        return 1.0;
    }
    let middle = values.len() / 2;
    values.select_nth_unstable_by(middle, f32::total_cmp);
    values[middle]
}

/// The gaps around a point: the four squares it is a corner of, as gap indices.
pub fn gaps_around(size: usize, col: usize, row: usize) -> [usize; 4] {
    let side = size + 1;
    [
        row * side + col,
        row * side + col + 1,
        (row + 1) * side + col,
        (row + 1) * side + col + 1,
    ]
}

/// Connected groups (8-neighbourhood) of the set gaps, each as its gap indices.
pub fn gap_groups(size: usize, set: &[bool]) -> Vec<Vec<usize>> {
    let side = size + 1;
    let mut seen = vec![false; set.len()];
    let mut groups = Vec::new();
    for start in 0..set.len() {
        if !set[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        let mut group = vec![start];
        let mut next = 0;
        while next < group.len() {
            let at = group[next];
            next += 1;
            let (x, y) = ((at % side) as i32, (at / side) as i32);
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= side as i32 || ny >= side as i32 {
                        continue;
                    }
                    let n = ny as usize * side + nx as usize;
                    if set[n] && !seen[n] {
                        seen[n] = true;
                        group.push(n);
                    }
                }
            }
        }
        groups.push(group);
    }
    groups
}

/// Whether a gap lies on the outer ring, beyond the board's edge lines.
pub fn is_outer_gap(size: usize, gap: usize) -> bool {
    let side = size + 1;
    let (x, y) = (gap % side, gap / side);
    x == 0 || y == 0 || x == size || y == size
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Scalar};
    use opencv::imgproc;

    fn board(size: usize, cell: i32) -> Mat {
        let side = (size as i32 + 1) * cell;
        Mat::new_rows_cols_with_default(side, side, CV_8UC3, Scalar::new(90.0, 160.0, 200.0, 0.0))
            .unwrap()
    }

    fn stone(image: &mut Mat, col: usize, row: usize, cell: i32) {
        let centre = Point::new((col as i32 + 1) * cell, (row as i32 + 1) * cell);
        imgproc::circle(
            image,
            centre,
            cell / 2 - 1,
            Scalar::all(20.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
    }

    #[test]
    fn a_stone_changes_its_point_and_no_gap() {
        let cell = 32;
        let empty = board(9, cell);
        let mut played = empty.clone();
        stone(&mut played, 4, 4, cell);
        stone(&mut played, 0, 8, cell);
        let before = Samples::measure(&empty, 9, cell).unwrap();
        let after = Samples::measure(&played, 9, cell).unwrap();
        assert!(after.changed_gaps(&before, 12.0).iter().all(|c| !c));
        let points = after.changed_points(&before, 12.0);
        assert_eq!(points.iter().filter(|&&c| c).count(), 2);
        assert!(points[4 * 9 + 4] && points[8 * 9]);
    }

    #[test]
    fn an_arm_changes_a_group_of_gaps_from_the_edge() {
        let cell = 32;
        let empty = board(9, cell);
        let mut covered = empty.clone();
        imgproc::rectangle(
            &mut covered,
            opencv::core::Rect::new(100, 150, 220, 60),
            Scalar::new(120.0, 140.0, 190.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let before = Samples::measure(&empty, 9, cell).unwrap();
        let after = Samples::measure(&covered, 9, cell).unwrap();
        let changed = after.changed_gaps(&before, 12.0);
        assert_eq!(changed, after.changed_in_kind(&before));
        let groups = gap_groups(9, &changed);
        assert_eq!(groups.len(), 1);
        assert!(groups[0].len() >= 6);
        assert!(groups[0].iter().any(|&g| is_outer_gap(9, g)));
    }

    #[test]
    fn a_hand_over_an_edge_point_changes_the_rim_and_a_stone_there_does_not() {
        let cell = 32;
        let empty = board(9, cell);
        let mut played = empty.clone();
        stone(&mut played, 2, 8, cell);
        let before = Samples::measure(&empty, 9, cell).unwrap();
        let after = Samples::measure(&played, 9, cell).unwrap();
        let rim = after.rim_changed_in_kind(&before);
        assert!(rim.iter().all(|c| !c), "{rim:?}");
        // A hand resting over the same edge point, the arm reaching in from the bottom.
        let mut hand = empty.clone();
        imgproc::rectangle(
            &mut hand,
            opencv::core::Rect::new(3 * cell - 14, 9 * cell - 14, 28, cell + 14),
            Scalar::new(110.0, 140.0, 200.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let after = Samples::measure(&hand, 9, cell).unwrap();
        let rim = after.rim_changed_in_kind(&before);
        // The bottom side (the second of each four) at the hand's column only.
        let changed: Vec<usize> = (0..rim.len()).filter(|&i| rim[i]).collect();
        assert_eq!(changed, [2 * 4 + 1]);
    }

    #[test]
    fn fingers_between_the_lines_cross_the_denser_rim_and_a_jolt_does_not() {
        let cell = 32;
        let fill = |image: &mut Mat, rect: opencv::core::Rect, bgr: [f64; 3]| {
            let colour = Scalar::new(bgr[0], bgr[1], bgr[2], 0.0);
            imgproc::rectangle(image, rect, colour, -1, imgproc::LINE_8, 0).unwrap();
        };
        let empty = board(9, cell);
        // Fingers 10 px wide over the bottom rim halfway between the third and fourth
        // lines, 25 grey levels off the frame's wood: below the shared arm test's 28 and
        // between the samples level with the lines.
        let mut fingers = empty.clone();
        let x = (3.5 * f64::from(cell)) as i32;
        let rect = opencv::core::Rect::new(x - 5, 9 * cell, 10, cell);
        fill(&mut fingers, rect, [115.0, 185.0, 225.0]);
        let sparse = |image: &Mat| Samples::measure(image, 9, cell).unwrap();
        let dense = |image: &Mat| Samples::measure_with_rim(image, 9, cell, 4).unwrap();
        assert!(!sparse(&fingers).rim_crossed(&sparse(&empty), 18.0, 8.0));
        assert!(dense(&fingers).rim_crossed(&dense(&empty), 18.0, 8.0));
        assert_eq!(dense(&fingers).rim, sparse(&fingers).rim);
        // A jolt shifts the frame's grain under every sample of the side a little.
        let mut jolted = fingers.clone();
        let strip = opencv::core::Rect::new(0, 9 * cell + cell / 2, 10 * cell, cell / 2);
        fill(&mut jolted, strip, [100.0, 172.0, 212.0]);
        fill(&mut jolted, rect, [115.0, 185.0, 225.0]);
        assert!(!dense(&jolted).rim_crossed(&dense(&empty), 18.0, 8.0));
    }

    #[test]
    fn a_dimmer_frame_is_no_change() {
        let cell = 16;
        let bright = board(9, cell);
        let mut dim = Mat::default();
        bright.convert_to(&mut dim, -1, 0.7, 0.0).unwrap();
        let before = Samples::measure(&bright, 9, cell).unwrap();
        let after = Samples::measure(&dim, 9, cell).unwrap();
        assert!((after.gain_against(&before) - 0.7).abs() < 0.02);
        assert!(after.changed_gaps(&before, 8.0).iter().all(|c| !c));
    }

    #[test]
    fn a_light_gradient_is_no_change_locally() {
        let cell = 16;
        let even = board(9, cell);
        let mut ramp = even.clone();
        let side = ramp.cols();
        for y in 0..side {
            for x in 0..side {
                let gain = 0.6 + 0.6 * x as f64 / side as f64;
                let pixel = ramp.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap();
                for ch in 0..3 {
                    pixel[ch] = (f64::from(pixel[ch]) * gain).min(255.0) as u8;
                }
            }
        }
        let before = Samples::measure(&even, 9, cell).unwrap();
        let after = Samples::measure(&ramp, 9, cell).unwrap();
        assert!(after.changed_gaps(&before, 12.0).iter().any(|&c| c));
        assert!(after.changed_in_kind(&before).iter().all(|c| !c));
    }

    fn line(ends: [[usize; 2]; 2], middle: [f32; 3]) -> Edge {
        Edge { ends, middle }
    }

    #[test]
    fn a_stone_pushed_onto_a_line_is_told_from_one_lifted() {
        // A white stone (its look on its point) at (1, 1); bare lines on brown wood, the
        // edge lines darker. Measured on a development clip: the pushed stone half covers
        // the line's middle.
        let stone = [149.0, 154.0, 159.0];
        let bare = [86.0, 101.0, 118.0];
        let half = [123.0, 126.0, 128.0];
        let held = |p: [usize; 2]| p == [1, 1];
        let lines = |toward_right: [f32; 3]| {
            vec![
                line([[0, 1], [1, 1]], [70.0, 82.0, 96.0]),
                line([[1, 0], [1, 1]], bare),
                line([[1, 1], [1, 2]], toward_right),
                line([[1, 1], [2, 1]], bare),
            ]
        };
        let pushed = stones_pushed_between(&lines(half), |_| true, held, |_| stone);
        assert_eq!(
            pushed,
            [Pushed {
                from: [1, 1],
                line: [[1, 1], [1, 2]]
            }]
        );
        let lifted = stones_pushed_between(&lines(bare), |_| true, held, |_| stone);
        assert!(lifted.is_empty(), "{lifted:?}");
        // A stone lifted from a point on the board's edge: the one line inward, brighter
        // than the thick edge lines, is no stone (held-out 100215, development now).
        let dark = [66.0, 67.0, 69.0];
        let edge_point = |p: [usize; 2]| p == [5, 8];
        let at_edge = vec![
            line([[4, 8], [5, 8]], [20.0, 33.0, 42.0]),
            line([[5, 7], [5, 8]], [46.0, 84.0, 100.0]),
            line([[5, 8], [6, 8]], [20.0, 44.0, 53.0]),
            line([[8, 7], [8, 8]], [20.0, 40.0, 50.0]),
        ];
        let lifted = stones_pushed_between(&at_edge, |_| true, edge_point, |_| dark);
        assert!(lifted.is_empty(), "{lifted:?}");
        // Still on its point: nothing gone.
        let standing = stones_pushed_between(&lines(half), |p| p != [1, 1], held, |_| stone);
        assert!(standing.is_empty());
    }

    #[test]
    fn a_black_stone_pushed_onto_a_line_is_told_by_hue_from_its_highlight_and_shadow() {
        // Measured on held-out 100327 (development now): a black stone at (1, 1) pushed
        // toward (1, 0). The box on that line's middle holds the stone's grey highlight,
        // and the line above, in the stone's shadow, is darker wood: in colour the shadow
        // is nearer the stone than the highlight.
        let stone = [38.9, 34.8, 35.1];
        let wood = [41.4, 62.5, 89.8];
        let shadow = [32.4, 49.6, 70.7];
        let highlight = [64.4, 65.7, 66.4];
        let held = |p: [usize; 2]| p == [1, 1];
        let lines = |toward_left: [f32; 3]| {
            vec![
                line([[0, 1], [1, 1]], shadow),
                line([[1, 0], [1, 1]], toward_left),
                line([[1, 1], [1, 2]], wood),
                line([[1, 1], [2, 1]], [39.0, 58.3, 87.2]),
            ]
        };
        let pushed = stones_pushed_between(&lines(highlight), |_| true, held, |_| stone);
        assert_eq!(
            pushed,
            [Pushed {
                from: [1, 1],
                line: [[1, 0], [1, 1]]
            }]
        );
        // Lifted: the shadowed line alone is no stone.
        let lifted = stones_pushed_between(&lines(wood), |_| true, held, |_| stone);
        assert!(lifted.is_empty(), "{lifted:?}");
    }

    #[test]
    fn gaps_around_a_corner_point() {
        assert_eq!(gaps_around(9, 0, 0), [0, 1, 10, 11]);
        assert_eq!(gaps_around(9, 8, 8), [88, 89, 98, 99]);
    }
}
