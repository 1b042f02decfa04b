//! A colour-statistics reader with nothing learned: each point's brightness compared with
//! the bare board right around it.
//!
//! Why local: the centres of the four squares around a point are 0.7 of a cell from it,
//! beyond the reach of a stone on the point (its radius is about half a cell), so they show
//! bare wood under the same light as the point itself. A glare patch, a shadow or a board
//! lit from one side then shifts the point and its reference together, and the comparison
//! holds from a dark board in dim light to a pale board under a lamp.
//!
//! Brightness only, not colour: white balance varies so much between cameras that white
//! stones come out bluer than the board in one photo and yellower in the next.

use super::{CellReading, Observation};
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;

/// Radius of the disc read around a point, in cells: well inside a stone, so a stone a
/// little off its point still fills it.
const POINT_RADIUS: f64 = 0.33;
/// Radius of the disc read at a square's centre, in cells.
const SQUARE_RADIUS: f64 = 0.16;

/// Darkening relative to the bare board (`(board − point) / board`) at which black and
/// empty are equally likely, and the width of the transition. Black stones measure 0.8–0.95
/// on the real photos; bare points with their grid lines at most 0.2.
const BLACK_MIDPOINT: f64 = 0.45;
const BLACK_WIDTH: f64 = 0.06;
/// Brightening relative to the headroom above the board (`(point − board) / (255 −
/// board)`) at which white and empty are equally likely. White stones measure 0.18 and
/// more; bare points at most 0.09 (a pale board under a lamp has little headroom left).
const WHITE_MIDPOINT: f64 = 0.13;
const WHITE_WIDTH: f64 = 0.022;
/// Brightening relative to the board itself (`(point − board) / board`): in dim light the
/// headroom is large and a white stone uses little of it, but it is still much brighter
/// than the wood. Bare points measure at most 0.06 on the real photos.
const WHITE_RATIO_MIDPOINT: f64 = 0.22;
const WHITE_RATIO_WIDTH: f64 = 0.035;

/// Reads every point of a rectified board (see [`super::rectify`]).
pub fn read(rectified: &Mat, size: usize, cell: i32) -> opencv::Result<Observation> {
    read_shifted(rectified, size, cell, &[])
}

/// As [`read`], with each point's disc moved by `shifts[point]` (in cells): where the
/// stone's body appears on an oblique view.
pub fn read_shifted(
    rectified: &Mat,
    size: usize,
    cell: i32,
    shifts: &[[f64; 2]],
) -> opencv::Result<Observation> {
    Ok(from_lightness(
        size,
        &lightness_against_wood(rectified, size, cell, shifts)?,
    ))
}

/// Every point's lightness against the wood around it, row by row.
pub(super) fn lightness_against_wood(
    rectified: &Mat,
    size: usize,
    cell: i32,
    shifts: &[[f64; 2]],
) -> opencv::Result<Vec<AgainstWood>> {
    let [lightness, _] = Plane::lab(rectified)?;
    Ok(against_wood(&lightness, size, cell, shifts))
}

/// The reading of points whose lightness was measured against the wood already (see
/// [`super::adapt::Measured`], which the tracker takes once a frame for both readers).
pub fn from_lightness(size: usize, lightness: &[AgainstWood]) -> Observation {
    let cells = lightness
        .iter()
        .map(|m| CellReading::from_probabilities(probabilities(m.point, m.wood)))
        .collect();
    Observation { size, cells }
}

/// One point of a [`Plane`] measured against the wood around it.
#[derive(Clone, Copy, Debug)]
pub struct AgainstWood {
    /// The median on the point's disc.
    pub point: f64,
    /// The tenth percentile on the point's inner disc: the grid lines crossing a bare
    /// point, which a stone hides.
    pub low: f64,
    /// The median of the bare wood right around the point.
    pub wood: f64,
}

/// The share of a point's inner disc the grid lines crossing it cover, about:
/// [`AgainstWood::low`] is taken below it.
const LINES_SHARE: f64 = 0.1;
/// Radius of the inner disc, in cells: well inside a stone even on a blurred,
/// low-resolution view, where a wider disc's darkest pixels are the stone's own rim.
const LINES_RADIUS: f64 = 0.2;
/// How far the inner disc may follow a stone's body beyond the board's edge, in cells:
/// the lines cross at the point itself, and on an edge point they do not go on outwards,
/// so a disc moved outwards further than its radius leaves them (development 100315:
/// after a camera bump the far edge row's shift grew from 0.17 to 0.22 of a cell, its bare
/// points lost their lines and were read as white stones for the rest of the game). Half
/// the radius keeps the crossing well inside the disc. Inside the board a line runs on
/// through the point, and the disc follows the body as far as it goes.
const LINES_FOLLOW: f64 = 0.5 * LINES_RADIUS;

/// For every point (row by row), `plane` on the point (moved by `shifts`, in cells; the
/// inner disc less far outwards on the edges, [`lines_shift`]) and on the bare wood right around it.
pub(super) fn against_wood(
    plane: &Plane,
    size: usize,
    cell: i32,
    shifts: &[[f64; 2]],
) -> Vec<AgainstWood> {
    let cell = cell as f64;
    let mut squares = vec![0.0; (size + 1) * (size + 1)];
    for row in 0..=size {
        for col in 0..=size {
            squares[row * (size + 1) + col] = plane.disc_median(
                (col as f64 + 0.5) * cell,
                (row as f64 + 0.5) * cell,
                SQUARE_RADIUS * cell,
            );
        }
    }
    let mut interior: Vec<f64> = (1..size)
        .flat_map(|r| (1..size).map(move |c| (r, c)))
        .map(|(r, c)| squares[r * (size + 1) + c])
        .collect();
    let board = median(&mut interior);
    let mut measured = Vec::with_capacity(size * size);
    for row in 0..size {
        for col in 0..size {
            // Only squares inside the outer lines: beyond them lies the board's margin,
            // its edge or the table, none of which is the wood the point sits on.
            let mut around: Vec<f64> = [
                (row, col),
                (row, col + 1),
                (row + 1, col),
                (row + 1, col + 1),
            ]
            .into_iter()
            .filter(|&(r, c)| (1..size).contains(&r) && (1..size).contains(&c))
            .map(|(r, c)| squares[r * (size + 1) + c])
            .collect();
            // One of the four squares may be darkened or lit by a neighbouring stone that
            // sits off its point; the median of four ignores one on each side. An edge or
            // corner point has only two or one, so the whole board's wood joins them.
            if around.len() < 3 {
                around.push(board);
            }
            let local = median(&mut around);
            let shift = shifts.get(row * size + col).copied().unwrap_or([0.0, 0.0]);
            let (x, y) = (
                (col as f64 + 1.0 + shift[0]) * cell,
                (row as f64 + 1.0 + shift[1]) * cell,
            );
            let point = plane.disc_median(x, y, POINT_RADIUS * cell);
            let [dx, dy] = lines_shift(shift, [row, col], size);
            let [low] = plane.disc_quantiles(
                (col as f64 + 1.0 + dx) * cell,
                (row as f64 + 1.0 + dy) * cell,
                LINES_RADIUS * cell,
                [LINES_SHARE],
            );
            measured.push(AgainstWood {
                point,
                low,
                wood: local,
            });
        }
    }
    measured
}

/// Where the inner disc of point (`row`, `col`) of a `size`-line board is taken when its
/// stone's body is `shift` (cells, x then y) away: towards the body, but no further than
/// [`LINES_FOLLOW`] beyond an edge line the point lies on.
fn lines_shift(shift: [f64; 2], [row, col]: [usize; 2], size: usize) -> [f64; 2] {
    let last = size - 1;
    let outwards = |d: f64, at: usize| (at == 0 && d < 0.0) || (at == last && d > 0.0);
    let clamp = |d: f64, at: usize| {
        if outwards(d, at) {
            d.clamp(-LINES_FOLLOW, LINES_FOLLOW)
        } else {
            d
        }
    };
    [clamp(shift[0], col), clamp(shift[1], row)]
}

/// Empty, black, white probabilities of a point whose median lightness is `point` on a
/// board whose bare wood around it is `board` (both 0–255).
pub fn probabilities(point: f64, board: f64) -> [f32; 3] {
    let board = board.max(1.0);
    let darkening = (board - point) / board;
    let brightening = (point - board) / (255.0 - board).max(8.0);
    let black = logistic((darkening - BLACK_MIDPOINT) / BLACK_WIDTH);
    let white = logistic((brightening - WHITE_MIDPOINT) / WHITE_WIDTH).max(logistic(
        (-darkening - WHITE_RATIO_MIDPOINT) / WHITE_RATIO_WIDTH,
    ));
    let raw = [
        (1.0 - black) * (1.0 - white),
        black * (1.0 - white),
        white * (1.0 - black),
    ];
    let total: f64 = raw.iter().sum();
    raw.map(|p| (p / total) as f32)
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

pub(super) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// One 8-bit channel of a picture, row-major: CIE Lab's lightness, or its chroma.
pub(super) struct Plane {
    values: Vec<u8>,
    width: i32,
    height: i32,
}

impl Plane {
    /// The lightness (L, 0–255) and the chroma (distance from grey in the a–b plane,
    /// 0–255) of a BGR picture.
    pub(super) fn lab(bgr: &Mat) -> opencv::Result<[Plane; 2]> {
        let mut lab = Mat::default();
        imgproc::cvt_color_def(bgr, &mut lab, imgproc::COLOR_BGR2Lab)?;
        let lab = if lab.is_continuous() {
            lab
        } else {
            lab.try_clone()?
        };
        let (width, height) = (lab.cols(), lab.rows());
        let bytes = lab.data_bytes()?;
        let mut lightness = Vec::with_capacity(bytes.len() / 3);
        let mut chroma = Vec::with_capacity(bytes.len() / 3);
        for pixel in bytes.chunks_exact(3) {
            lightness.push(pixel[0]);
            let a = f32::from(pixel[1]) - 128.0;
            let b = f32::from(pixel[2]) - 128.0;
            chroma.push(a.hypot(b).min(255.0) as u8);
        }
        Ok([
            Plane {
                values: lightness,
                width,
                height,
            },
            Plane {
                values: chroma,
                width,
                height,
            },
        ])
    }

    fn disc_median(&self, cx: f64, cy: f64, radius: f64) -> f64 {
        self.disc_quantiles(cx, cy, radius, [0.5])[0]
    }

    /// The values below which the shares `quantiles` of the disc's pixels lie.
    fn disc_quantiles<const N: usize>(
        &self,
        cx: f64,
        cy: f64,
        radius: f64,
        quantiles: [f64; N],
    ) -> [f64; N] {
        let mut histogram = [0u32; 256];
        let mut count = 0u32;
        let r = radius.ceil() as i32;
        let (x0, y0) = (cx.round() as i32, cy.round() as i32);
        for y in (y0 - r).max(0)..=(y0 + r).min(self.height - 1) {
            for x in (x0 - r).max(0)..=(x0 + r).min(self.width - 1) {
                let (dx, dy) = ((x - x0) as f64, (y - y0) as f64);
                if dx * dx + dy * dy <= radius * radius {
                    histogram[self.values[(y * self.width + x) as usize] as usize] += 1;
                    count += 1;
                }
            }
        }
        quantiles.map(|q| {
            let mut seen = 0;
            for (value, &n) in histogram.iter().enumerate() {
                seen += n;
                if count > 0 && f64::from(seen) >= q * f64::from(count) {
                    return value as f64;
                }
            }
            0.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Color;
    use opencv::core::{CV_8UC3, Point, Scalar};

    /// A rectified 9×9 board drawn directly: wood, lines, a few stones, with a brightness
    /// ramp across it (`light` at the left, `light · falloff` at the right) and a broad glare
    /// patch (a lamp's reflection on a matte board; a sharp specular spot the size of a stone
    /// is beyond a reader that has only brightness to go on).
    fn draw_board(
        wood: [f64; 3],
        light: f64,
        falloff: f64,
        stones: &[(usize, usize, Color)],
    ) -> Mat {
        let (size, cell) = (9usize, 32i32);
        let side = (size as i32 + 1) * cell;
        let mut board = Mat::new_rows_cols_with_default(
            side,
            side,
            CV_8UC3,
            Scalar::new(wood[0], wood[1], wood[2], 0.0),
        )
        .unwrap();
        for i in 1..=size as i32 {
            let line = Scalar::new(30.0, 30.0, 30.0, 0.0);
            imgproc::line(
                &mut board,
                Point::new(cell, i * cell),
                Point::new(size as i32 * cell, i * cell),
                line,
                2,
                imgproc::LINE_AA,
                0,
            )
            .unwrap();
            imgproc::line(
                &mut board,
                Point::new(i * cell, cell),
                Point::new(i * cell, size as i32 * cell),
                line,
                2,
                imgproc::LINE_AA,
                0,
            )
            .unwrap();
        }
        for &(row, col, color) in stones {
            let (fill, rim) = match color {
                Color::Black => (
                    Scalar::new(25.0, 25.0, 28.0, 0.0),
                    Scalar::new(70.0, 70.0, 70.0, 0.0),
                ),
                Color::White => (
                    Scalar::new(235.0, 238.0, 236.0, 0.0),
                    Scalar::new(190.0, 190.0, 190.0, 0.0),
                ),
            };
            let centre = Point::new((col as i32 + 1) * cell, (row as i32 + 1) * cell);
            imgproc::circle(&mut board, centre, 15, fill, -1, imgproc::LINE_AA, 0).unwrap();
            imgproc::circle(&mut board, centre, 15, rim, 1, imgproc::LINE_AA, 0).unwrap();
            // A highlight, as stones under a lamp show.
            imgproc::circle(
                &mut board,
                centre + Point::new(-5, -5),
                2,
                Scalar::all(250.0),
                -1,
                imgproc::LINE_AA,
                0,
            )
            .unwrap();
        }
        // Lighting: multiply by a left-to-right ramp, then add a soft glare spot.
        let mut lit = board.clone();
        for y in 0..side {
            for x in 0..side {
                let gain = light * (1.0 + (falloff - 1.0) * x as f64 / side as f64);
                let (gx, gy) = ((x - 2 * cell) as f64, (y - 7 * cell) as f64);
                let glare = 45.0 * (-(gx * gx + gy * gy) / (2.0 * 70.0 * 70.0)).exp();
                let pixel = board.at_2d::<opencv::core::Vec3b>(y, x).unwrap();
                let out = lit.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap();
                for c in 0..3 {
                    out[c] = (pixel[c] as f64 * gain + glare).clamp(0.0, 255.0) as u8;
                }
            }
        }
        lit
    }

    fn stones() -> Vec<(usize, usize, Color)> {
        vec![
            (0, 0, Color::Black),
            (0, 8, Color::White),
            (2, 2, Color::Black),
            (2, 3, Color::White),
            (3, 3, Color::White),
            (3, 2, Color::Black),
            (4, 4, Color::Black),
            (6, 1, Color::White),
            (6, 2, Color::White),
            (5, 1, Color::White),
            (7, 7, Color::Black),
            (8, 8, Color::Black),
            (8, 0, Color::White),
        ]
    }

    fn assert_reads(board: &Mat, what: &str) {
        let observation = read(board, 9, 32).unwrap();
        let expected = stones();
        for row in 0..9 {
            for col in 0..9 {
                let want = expected
                    .iter()
                    .find(|s| s.0 == row && s.1 == col)
                    .map(|s| s.2);
                let got = observation.get(row, col);
                assert_eq!(
                    got.color, want,
                    "{what}: point row {row} col {col}: {got:?}"
                );
                assert!(
                    got.confidence() > 0.8,
                    "{what}: row {row} col {col} unsure: {got:?}"
                );
            }
        }
    }

    #[test]
    fn reads_a_bright_wood_board() {
        assert_reads(
            &draw_board([110.0, 180.0, 220.0], 1.0, 1.0, &stones()),
            "bright board",
        );
    }

    #[test]
    fn reads_a_dark_board_in_dim_uneven_light() {
        // Dark wood at 40 % light falling to 20 % across the board, with a glare spot.
        assert_reads(
            &draw_board([50.0, 90.0, 130.0], 0.4, 0.5, &stones()),
            "dim board",
        );
    }

    #[test]
    fn reads_a_pale_board_whose_white_stones_are_barely_brighter() {
        assert_reads(
            &draw_board([170.0, 190.0, 200.0], 1.0, 0.9, &stones()),
            "pale board",
        );
    }

    #[test]
    fn the_far_edge_keeps_its_lines_when_the_stone_body_shifts_beyond_the_inner_disc() {
        // A bare board seen obliquely: every stone's body would stand 0.25 of a cell
        // towards the far (top) edge, more than the inner disc's radius.
        let board = draw_board([110.0, 180.0, 220.0], 1.0, 1.0, &[]);
        let shifts = vec![[0.0, -0.25]; 81];
        let measured = lightness_against_wood(&board, 9, 32, &shifts).unwrap();
        for col in 1..8 {
            let (edge, inner) = (&measured[col], &measured[4 * 9 + col]);
            // The top edge's lines run only below and beside its points, yet they must
            // show as darkly as an inner point's: a bare point without lines looks like
            // a stone to the board's looks.
            assert!(
                edge.low < 0.6 * edge.wood && edge.low < inner.low + 0.2 * inner.wood,
                "col {col}: edge {edge:?}, inner {inner:?}"
            );
        }
        // Inside the board, or inwards from an edge, the disc follows the body in full;
        // outwards beyond an edge only part of the way.
        assert_eq!(lines_shift([0.1, -0.3], [4, 4], 9), [0.1, -0.3]);
        assert_eq!(lines_shift([0.3, 0.3], [0, 0], 9), [0.3, 0.3]);
        assert_eq!(lines_shift([0.05, -0.3], [0, 4], 9), [0.05, -LINES_FOLLOW]);
        assert_eq!(lines_shift([0.3, -0.05], [2, 8], 9), [LINES_FOLLOW, -0.05]);
    }

    #[test]
    fn probabilities_sum_to_one_and_follow_brightness() {
        let empty = probabilities(150.0, 150.0);
        let black = probabilities(20.0, 150.0);
        let white = probabilities(230.0, 150.0);
        for p in [empty, black, white] {
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        assert!(empty[0] > 0.9 && black[1] > 0.9 && white[2] > 0.9);
    }
}
