//! The middle of every square of a settled 8×8 view, kept as block means of its pixels
//! so that a later view can say which squares did not change at all.
//!
//! The square reader judges each view on its own, and in dim or side light it misreads
//! the same figure the same way for the whole game (Makruk 310562: White's Ruea on a1 read
//! bare from its first move). The inference then takes a move from that square as the
//! best explanation of any arrival its piece could make. A square whose picture did not
//! change is evidence no reading gives: whatever stands there stands as before. The
//! comparison is in pixels, so it holds where the reader's classes do not.

use super::turned_cells;
use crate::geometry::eight::SQUARES;
use crate::reading::eight::{self as squares, CELL};
use opencv::core::{Mat, Rect};
use opencv::prelude::*;

/// Half the side of the square's middle kept, in squares: the body of a piece standing
/// there (its lean taken out by the body shift), inside the lines and the neighbours'
/// leaning tops, as [`super::eight`]'s stir test takes it.
const MIDDLE: f64 = 0.25;

/// Blocks along each side of a middle whose mean colours are compared.
const BLOCKS: usize = 4;

/// The middles of the 64 squares of one view, in the order they are given in.
#[derive(Clone, Debug, PartialEq)]
pub struct SquarePictures {
    /// Which lock of the board they were taken on: after the board is found again the
    /// squares are sampled elsewhere and compare with nothing before.
    lock: u64,
    side: usize,
    /// Each square's middle as it is compared; `None` where it left the picture.
    middles: Vec<Option<Middle>>,
}

/// One square's middle, measured once when the view is taken rather than on every
/// comparison with it.
#[derive(Clone, Debug, PartialEq)]
struct Middle {
    /// The mean of its pixels, for the view's brightness change ([`brightness_gain`]).
    mean: f32,
    /// The mean colour of each of its [`BLOCKS`]² blocks ([`blocks`]).
    blocks: Vec<f32>,
}

impl SquarePictures {
    /// Takes the middles of a rectified 8×8 board (image order, as [`squares::in_square`]
    /// places them, each moved by its body shift).
    pub fn of(rectified: &Mat, shifts: &[[f64; 2]], lock: u64) -> opencv::Result<SquarePictures> {
        let half = (MIDDLE * f64::from(CELL)).round() as i32;
        let side = (2 * half + 1) as usize;
        let (width, height) = (rectified.cols(), rectified.rows());
        let mut middles = Vec::with_capacity(SQUARES * SQUARES);
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let [x, y] = squares::in_square(row, col, squares::shift_of(shifts, row, col));
                let (x, y) = (x.round() as i32, y.round() as i32);
                if x - half < 0 || y - half < 0 || x + half >= width || y + half >= height {
                    middles.push(None);
                    continue;
                }
                let middle = Mat::roi(
                    rectified,
                    Rect::new(x - half, y - half, 2 * half + 1, 2 * half + 1),
                )?
                .try_clone()?;
                let pixels = middle.data_bytes()?;
                middles.push(Some(Middle {
                    mean: pixels.iter().map(|&p| f32::from(p)).sum::<f32>()
                        / pixels.len().max(1) as f32,
                    blocks: blocks(pixels, side),
                }));
            }
        }
        Ok(SquarePictures {
            lock,
            side,
            middles,
        })
    }

    /// The same pictures with the squares turned `quarter_turns` clockwise, as
    /// [`turned_cells`] turns readings.
    pub fn turned(self, quarter_turns: usize) -> SquarePictures {
        let indices: Vec<usize> =
            turned_cells((0..self.middles.len()).collect(), SQUARES, quarter_turns);
        let mut middles = self.middles;
        let turned = indices
            .into_iter()
            .map(|index| middles[index].take())
            .collect();
        SquarePictures {
            middles: turned,
            ..self
        }
    }

    /// How much each square's middle changed from `earlier`: the mean absolute
    /// difference of its block means, in its most changed colour channel, in grey levels, once
    /// the whole view's brightness change is taken out. `None` for a square missing from
    /// either view, and for all of them when the two were taken on different locks.
    pub fn changes_from(&self, earlier: &SquarePictures) -> SquareChanges {
        let count = self.middles.len();
        if self.lock != earlier.lock || earlier.middles.len() != count || earlier.side != self.side
        {
            return SquareChanges(vec![None; count]);
        }
        let pairs: Vec<Option<(&Middle, &Middle)>> = self
            .middles
            .iter()
            .zip(&earlier.middles)
            .map(|(now, then)| Some((now.as_ref()?, then.as_ref()?)))
            .collect();
        let gain = brightness_gain(&pairs);
        let changes = pairs
            .iter()
            .map(|pair| {
                let (now, then) = (*pair)?;
                let (now, then) = (&now.blocks, &then.blocks);
                let mut sums = [0.0f32; 3];
                for (value, (n, t)) in now.iter().zip(then).enumerate() {
                    sums[value % 3] += (n - gain * t).abs();
                }
                let blocks = (now.len() / 3).max(1) as f32;
                Some(sums.into_iter().fold(0.0, f32::max) / blocks)
            })
            .collect();
        SquareChanges(changes)
    }
}

/// How much each square's middle changed between two views
/// ([`SquarePictures::changes_from`]), in the order the squares were given; `None` where
/// it is not known.
#[derive(Clone, Debug, PartialEq)]
pub struct SquareChanges(pub Vec<Option<f32>>);

impl SquareChanges {
    /// The squares (bit `index`) whose middle changed by at most `at_most`.
    pub fn at_most(&self, at_most: f32) -> u64 {
        self.mask_where(|change| change <= at_most)
    }

    /// The squares (bit `index`) whose middle changed by at least `at_least`.
    pub fn at_least(&self, at_least: f32) -> u64 {
        self.mask_where(|change| change >= at_least)
    }

    fn mask_where(&self, keep: impl Fn(f32) -> bool) -> u64 {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, change)| change.is_some_and(&keep))
            .fold(0, |mask, (index, _)| mask | (1 << index))
    }
}

/// The mean colour of each of [`BLOCKS`]² blocks of a middle, row by row, BGR: the
/// camera's and the codec's noise averages out over a block, and a piece's body does
/// not (Makruk 310562, dim: pixel by pixel a still figure's middle changed by up to 7
/// between two views, as much as a dark Bia leaving its dark square).
fn blocks(middle: &[u8], side: usize) -> Vec<f32> {
    let mut sums = vec![0.0f32; BLOCKS * BLOCKS * 3];
    let mut counts = [0u32; BLOCKS * BLOCKS];
    for y in 0..side {
        for x in 0..side {
            let block = (y * BLOCKS / side) * BLOCKS + x * BLOCKS / side;
            counts[block] += 1;
            for channel in 0..3 {
                sums[block * 3 + channel] += f32::from(middle[(y * side + x) * 3 + channel]);
            }
        }
    }
    for (value, sum) in sums.iter_mut().enumerate() {
        *sum /= counts[value / 3].max(1) as f32;
    }
    sums
}

/// The median ratio of the squares' mean brightness now to then: a lamp that dims or an
/// exposure that drifts changes every square alike, a piece only its own.
fn brightness_gain(pairs: &[Option<(&Middle, &Middle)>]) -> f32 {
    let mut ratios: Vec<f32> = pairs
        .iter()
        .flatten()
        .filter(|(_, then)| then.mean >= 8.0)
        .map(|(now, then)| now.mean / then.mean)
        .collect();
    if ratios.is_empty() {
        return 1.0;
    }
    ratios.sort_by(f32::total_cmp);
    ratios[ratios.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Scalar};
    use opencv::imgproc;

    fn board() -> Mat {
        let side = (SQUARES as i32 + 2) * CELL;
        Mat::new_rows_cols_with_default(side, side, CV_8UC3, Scalar::new(70.0, 110.0, 150.0, 0.0))
            .unwrap()
    }

    fn piece(image: &mut Mat, row: usize, col: usize, bgr: [f64; 3]) {
        let [x, y] = squares::in_square(row, col, [0.0, 0.0]);
        let colour = Scalar::new(bgr[0], bgr[1], bgr[2], 0.0);
        let centre = Point::new(x.round() as i32, y.round() as i32);
        imgproc::circle(image, centre, CELL / 3, colour, -1, imgproc::LINE_8, 0).unwrap();
    }

    #[test]
    fn only_the_squares_a_piece_left_or_reached_change_though_the_lamp_dimmed() {
        let shifts = vec![[0.0, 0.0]; 64];
        let mut before = board();
        piece(&mut before, 7, 0, [40.0, 40.0, 160.0]);
        piece(&mut before, 7, 1, [40.0, 40.0, 160.0]);
        let mut after = board();
        piece(&mut after, 7, 0, [40.0, 40.0, 160.0]);
        piece(&mut after, 5, 1, [40.0, 40.0, 160.0]);
        let mut dimmed = Mat::default();
        after.convert_to(&mut dimmed, -1, 0.8, 0.0).unwrap();
        let then = SquarePictures::of(&before, &shifts, 1).unwrap();
        let now = SquarePictures::of(&dimmed, &shifts, 1).unwrap();
        let unchanged = now.changes_from(&then).at_most(6.0);
        let changed: Vec<usize> = (0..64).filter(|i| unchanged & (1 << i) == 0).collect();
        assert_eq!(changed, [5 * 8 + 1, 7 * 8 + 1]);
        // A piece of nearly the square's own colour still changes its middle: its
        // shading is not the bare square's (the dimmed square is 56, 88, 120).
        let mut same_colour = dimmed.clone();
        piece(&mut same_colour, 3, 3, [44.0, 74.0, 104.0]);
        let unchanged = SquarePictures::of(&same_colour, &shifts, 1)
            .unwrap()
            .changes_from(&then)
            .at_most(6.0);
        assert_eq!(unchanged & (1 << (3 * 8 + 3)), 0);
        // Taken on another lock of the board, nothing compares.
        let elsewhere = SquarePictures::of(&dimmed, &shifts, 2).unwrap();
        assert_eq!(elsewhere.changes_from(&then).at_most(6.0), 0);
    }

    #[test]
    fn turning_the_pictures_moves_the_squares_as_readings_turn() {
        let shifts = vec![[0.0, 0.0]; 64];
        let empty = board();
        let mut one = board();
        piece(&mut one, 0, 0, [20.0, 20.0, 20.0]);
        let then = SquarePictures::of(&empty, &shifts, 1).unwrap().turned(1);
        let now = SquarePictures::of(&one, &shifts, 1).unwrap().turned(1);
        let unchanged = now.changes_from(&then).at_most(6.0);
        let mut cells = vec![0u8; 64];
        cells[0] = 1;
        let turned = turned_cells(cells, SQUARES, 1);
        let moved_to = turned.iter().position(|&c| c == 1).unwrap();
        assert_eq!(!unchanged, 1 << moved_to);
    }
}
