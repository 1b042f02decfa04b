//! Cell reading: for every point of a located grid, empty / black / white with a
//! confidence. Vision only: nothing here knows the rules.
//!
//! Every classifier works on the same picture: the board warped to a square
//! ([`rectify`]) where grid point (`col`, `row`) sits at pixel
//! `((col + 1) · cell, (row + 1) · cell)`, so a point's patch is a fixed crop whatever the
//! camera angle.

pub mod adapt;
pub mod baseline;
pub mod eight;
pub mod learned;
pub mod synth;

use crate::games::{Color, Occupancy};
use crate::geometry::BoardGeometry;
use opencv::core::{Mat, Point2f, Scalar, Size, Vector};
use opencv::{calib3d, imgproc};
use serde::Serialize;

/// The call for one point, with the probabilities it came from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CellReading {
    pub color: Option<Color>,
    /// Probabilities of empty, black, white; they sum to 1.
    pub probabilities: [f32; 3],
}

impl CellReading {
    pub fn from_probabilities(probabilities: [f32; 3]) -> Self {
        let best = (0..3)
            .max_by(|&a, &b| probabilities[a].total_cmp(&probabilities[b]))
            .unwrap_or(0);
        let color = match best {
            1 => Some(Color::Black),
            2 => Some(Color::White),
            _ => None,
        };
        CellReading {
            color,
            probabilities,
        }
    }

    /// The probability of the call that was made.
    pub fn confidence(&self) -> f32 {
        self.probabilities.iter().copied().fold(0.0, f32::max)
    }
}

/// What a frame shows on every point, row by row from row 0.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Observation {
    pub size: usize,
    pub cells: Vec<CellReading>,
}

impl Observation {
    pub fn get(&self, row: usize, col: usize) -> &CellReading {
        &self.cells[row * self.size + col]
    }

    pub fn occupancy(&self) -> Occupancy {
        let mut occupancy = Occupancy::empty(self.size, self.size);
        for row in 0..self.size {
            for col in 0..self.size {
                occupancy.set(row, col, self.get(row, col).color);
            }
        }
        occupancy
    }
}

/// Which reader to use, as a user names it (`--reader`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReaderChoice {
    /// The learned model when its file loads, else the baseline (with a note saying so).
    #[default]
    Auto,
    Learned,
    Baseline,
    /// The learned model and the baseline together (see [`Reader::Both`]).
    Both,
}

impl std::str::FromStr for ReaderChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(ReaderChoice::Auto),
            "learned" => Ok(ReaderChoice::Learned),
            "baseline" => Ok(ReaderChoice::Baseline),
            "both" => Ok(ReaderChoice::Both),
            other => Err(format!(
                "unknown reader {other:?}: expected auto, learned, baseline or both"
            )),
        }
    }
}

/// A cell reader ready to run: the learned model (`models/stones.yml.gz`), which measured
/// better on the real photos and on rendered boards, or the colour-statistics baseline
/// it was compared with (`models/README.md`).
pub enum Reader {
    Learned(learned::StoneModel),
    Baseline,
    /// Both, their probabilities multiplied with the baseline's tempered by
    /// [`BASELINE_WEIGHT`]: the model knows stones' shapes, the baseline knows a white
    /// stone is brighter than the board around it even in dim coloured light, where the
    /// model was seen to call white stones black.
    Both(learned::StoneModel),
}

/// The power the baseline's probabilities are raised to when both readers vote: its
/// probabilities are far too sure of themselves (1e-19 is common), so only a clear
/// disagreement of the model and a near-certain baseline moves a call.
pub const BASELINE_WEIGHT: f32 = 0.3;

impl Reader {
    /// The reader `choice` names, and a note when `Auto` had to fall back.
    pub fn load(choice: ReaderChoice) -> anyhow::Result<(Reader, Option<String>)> {
        match choice {
            ReaderChoice::Baseline => Ok((Reader::Baseline, None)),
            ReaderChoice::Both => Ok((Reader::Both(learned::StoneModel::load_default()?), None)),
            ReaderChoice::Learned => {
                Ok((Reader::Learned(learned::StoneModel::load_default()?), None))
            }
            ReaderChoice::Auto => match learned::StoneModel::load_default() {
                Ok(model) => Ok((Reader::Learned(model), None)),
                Err(error) => Ok((
                    Reader::Baseline,
                    Some(format!(
                        "{error:#}; read with the colour-statistics baseline"
                    )),
                )),
            },
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Reader::Learned(_) => "learned",
            Reader::Baseline => "baseline",
            Reader::Both(_) => "both",
        }
    }

    /// Reads a rectified board; `shifts` (cells, per point) say where stones' bodies
    /// appear, for the reader that samples at fixed places (the model learned parallax
    /// from its training boards).
    pub fn read(
        &self,
        rectified: &Mat,
        size: usize,
        cell: i32,
        shifts: &[[f64; 2]],
    ) -> opencv::Result<Observation> {
        match self {
            Reader::Learned(model) => model.read(rectified, size, cell),
            Reader::Baseline | Reader::Both(_) => {
                let lightness = baseline::lightness_against_wood(rectified, size, cell, shifts)?;
                self.read_measured(rectified, size, cell, &lightness)
            }
        }
    }

    /// As [`Reader::read`], with the points' lightness against the wood measured already
    /// (the shifts are in it).
    pub fn read_measured(
        &self,
        rectified: &Mat,
        size: usize,
        cell: i32,
        lightness: &[baseline::AgainstWood],
    ) -> opencv::Result<Observation> {
        match self {
            Reader::Learned(model) => model.read(rectified, size, cell),
            Reader::Baseline => Ok(baseline::from_lightness(size, lightness)),
            Reader::Both(model) => {
                let learned = model.read(rectified, size, cell)?;
                let colours = baseline::from_lightness(size, lightness);
                let cells = learned
                    .cells
                    .iter()
                    .zip(&colours.cells)
                    .map(|(l, b)| {
                        let p: [f32; 3] = std::array::from_fn(|k| {
                            l.probabilities[k] * b.probabilities[k].max(1e-30).powf(BASELINE_WEIGHT)
                        });
                        let sum: f32 = p.iter().sum();
                        CellReading::from_probabilities(if sum > 0.0 {
                            p.map(|v| v / sum)
                        } else {
                            l.probabilities
                        })
                    })
                    .collect();
                Ok(Observation { size, cells })
            }
        }
    }
}

/// Height above the board, in grid spacings, of the middle of a stone's body: Go stones
/// are about 9 mm thick on a 22 mm grid, so their middle is 0.2 of a spacing up.
pub const STONE_MIDDLE_HEIGHT: f64 = 0.2;

/// The lowest camera, in grid spacings above the board, taken as a real camera (5
/// spacings are 11 cm).
const MIN_CAMERA_HEIGHT: f64 = 5.0;

/// The most oblique view, in degrees from vertical at the board's centre, whose recovered
/// pose is trusted; boards are read up to about 50°.
const MAX_TILT: f64 = 60.0;

/// The largest shift of a stone's body from its point, in cells, taken as real.
const MAX_PARALLAX: f64 = 0.35;

/// For every point (row by row), where the body of a stone standing on it appears in the
/// rectified board, as an offset in cells. On an oblique photo a stone's body is pushed
/// away from the camera, by a tenth of a cell or more at the far edge; the readers look
/// there rather than at the bare point. Zero when the camera cannot be recovered.
pub fn parallax_shifts(
    geometry: &BoardGeometry,
    image_width: f64,
    image_height: f64,
) -> Vec<[f64; 2]> {
    // A camera closer than a few spacings to the board, or looking flatter than any
    // usable view, is not a camera but a homography no pinhole explains well (a drawn or
    // stitched picture, a wrong focal length): trust no parallax from it.
    let size = geometry.size;
    let centre = (size - 1) as f64 / 2.0;
    let camera = geometry
        .camera_position(image_width, image_height)
        .filter(|c| c.height >= MIN_CAMERA_HEIGHT)
        .filter(|c| (c.x - centre).hypot(c.y - centre) <= c.height * MAX_TILT.to_radians().tan());
    (0..size * size)
        .map(|i| {
            camera.map_or([0.0, 0.0], |c| {
                let [dx, dy] =
                    c.parallax((i % size) as f64, (i / size) as f64, STONE_MIDDLE_HEIGHT);
                // Beyond this a stone's body would sit on its neighbour's point, which
                // no usable view does; the pose is then wrong, not the stone.
                let length = dx.hypot(dy);
                let limit = MAX_PARALLAX.min(length);
                if length > 0.0 {
                    [dx / length * limit, dy / length * limit]
                } else {
                    [0.0, 0.0]
                }
            })
        })
        .collect()
}

/// Warps the board to a square of `(size + 1) · cell` pixels: grid point (`col`, `row`) at
/// `((col + 1) · cell, (row + 1) · cell)`, with half a cell of margin beyond the outer lines
/// so edge stones are whole.
pub fn rectify(image: &Mat, geometry: &BoardGeometry, cell: i32) -> opencv::Result<Mat> {
    let side = (geometry.size as i32 + 1) * cell;
    let last = (geometry.size - 1) as f64;
    let grid = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    let source: Vector<Point2f> = grid
        .iter()
        .map(|&[c, r]| {
            let [x, y] = geometry.to_image(c, r);
            Point2f::new(x as f32, y as f32)
        })
        .collect();
    let target: Vector<Point2f> = grid
        .iter()
        .map(|&[c, r]| {
            Point2f::new(
                ((c + 1.0) * cell as f64) as f32,
                ((r + 1.0) * cell as f64) as f32,
            )
        })
        .collect();
    let warp = calib3d::find_homography(&source, &target, &mut Mat::default(), 0, 3.0)?;
    let mut rectified = Mat::default();
    imgproc::warp_perspective(
        image,
        &mut rectified,
        &warp,
        Size::new(side, side),
        imgproc::INTER_AREA,
        opencv::core::BORDER_REPLICATE,
        Scalar::default(),
    )?;
    Ok(rectified)
}
