//! Square reading for 8×8 boards (Mak-hos, Makruk): empty / dark piece / light piece per
//! square, with probabilities, from colour statistics alone.
//!
//! The board is rectified (square (`row`, `col`) spans `(col + 1 .. col + 2) · cell`
//! across, the same for rows) and read in CIE Lab:
//!
//! 1. **The bare board.** Each square's corners are its least covered part: a disc stands
//!    in the middle and a tall piece leans over the far side only. The colour of the corners
//!    of every square of one class (dark or light squares of a checkered board, all squares
//!    of a plain one) is fitted by a smooth (quadratic) surface over the board (light
//!    falls off across it), keeping the squares that agree best, so pieces and shadows do
//!    not pull the fit.
//! 2. **The piece's body.** On an oblique view a piece's body appears pushed away from the
//!    camera (further the taller it is); the camera's position is recovered from the
//!    homography and each square is sampled where a body standing on it would show.
//! 3. **Occupied** is how far the body's colour lies from the bare board's there, in units
//!    of how much bare squares scatter about it, per Lab channel (light moves lightness
//!    more than hue).
//! 4. **Dark or light** splits the occupied squares in two groups (both sides' pieces
//!    are on most boards) by lightness or by saturation, whichever parts them more
//!    cleanly (black against ivory; red against black), a tracker keeping the measure of
//!    its first settled view; with one cluster only, the board's own squares decide
//!    which side of it they are.
//!
//! Nothing here knows the rules: the tracker votes over frames and the inference resolves
//! what the pixels cannot (a tall piece hiding the square behind it) with the legal moves.

use super::adapt::Look;
use super::{CellReading, Observation};
use crate::geometry::BoardGeometry;
use crate::geometry::eight::{EightBoard, SQUARES, Surface};
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;

/// Pixels per square in the rectified board.
pub const CELL: i32 = 32;

/// What stands on the squares, for where to look for a piece's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pieces {
    /// Mak-hos men: low discs (a king is two stacked).
    Discs,
    /// Makruk pieces: turned figures up to a square tall.
    Figures,
}

impl Pieces {
    /// The least scatter assumed for bare squares (Lab units): a perfectly even board
    /// must not make every speck of noise a piece. Figures cast long shadows on the
    /// squares around them and lean over them, which discs do not: bare squares among
    /// figures vary more than their corners show.
    fn min_scatter(self) -> f64 {
        match self {
            Pieces::Discs => 0.7,
            Pieces::Figures => 1.5,
        }
    }

    /// A body darker than the bare board under it by this share of the board's lightness
    /// counts one scatter there ([`shaded_distance`]): a shadow darkens a square and keeps
    /// its colour. None for figures: a figure's shaded side is darker than the square it
    /// stands on, and taken for a shadow, light figures on light squares went unseen
    /// (Makruk seeds 310410, 310419 and 310426 lost 17 moves). A man's top faces the light.
    /// 2 % clears the shadows of Mak-hos seeds 300390 and 300401; at 3 %, 300381 read men
    /// in a hand's shade as gone (12 moves lost, 18 false flags).
    fn shade_per_scatter(self) -> f64 {
        match self {
            Pieces::Discs => 0.02,
            Pieces::Figures => 0.0,
        }
    }

    /// Height of the middle of a piece's body, in square sides.
    pub(crate) fn body_height(self) -> f64 {
        match self {
            Pieces::Discs => 0.08,
            Pieces::Figures => 0.25,
        }
    }
}

/// The radius of the disc sampled for a piece's body, in square sides: inside a Mak-hos
/// man and a Makruk pawn's base.
const BODY_RADIUS: f64 = 0.2;

/// The body's distance from the bare board, in board scatters per channel
/// ([`scaled_distance`]), at which empty and occupied are equally likely, and the width
/// of that transition. A channel's scatter is about the middle of its bare squares'
/// residuals, 0.67 of a standard deviation, so the midpoint is 4 standard deviations;
/// bare squares' three channels together pass it about once in a thousand squares.
const OCCUPIED_MIDPOINT: f64 = 6.0;
const OCCUPIED_WIDTH: f64 = 1.2;

/// The radius of the disc whose edges are a square's shape evidence, in square sides:
/// a Mak-hos man's rim and most of a figure's base, clear of the square's own edges
/// (which [`Gradients::slanted_edge`] does not count anyway, but a lattice a pixel or
/// two off blurs them).
const SHAPE_RADIUS: f64 = 0.4;

/// How many times the slanted edge of its class's bare squares a square shows at which
/// empty and occupied are equally likely by shape, and the transition's width (natural
/// log units). A flat square of any colour has next to no slanted edge; grain printed
/// on it, or glare, about as much as on its neighbours.
const SHAPE_MIDPOINT: f64 = 3.0;
const SHAPE_WIDTH: f64 = 0.15;

/// The least slanted edge (Lab lightness a pixel) a class's bare squares are taken to
/// show: on a perfectly flat board, noise must not be a piece.
const SHAPE_FLOOR: f64 = 0.12;

/// Each square's shape evidence against the bare squares of its class, given (class,
/// slanted edge) per square: its edge over the class's lower quartile (at least
/// [`SHAPE_FLOOR`]). Fewer than three quarters of a class's squares ever hold a piece
/// (half, at Makruk's start), so the lower quartile is a bare square's.
fn relative_shapes(squares: &[(usize, f64)], classes: usize) -> Vec<f64> {
    let bare: Vec<f64> = (0..classes)
        .map(|class| {
            let mut edges: Vec<f64> = squares
                .iter()
                .filter(|(c, _)| *c == class)
                .map(|&(_, e)| e)
                .collect();
            edges.sort_by(f64::total_cmp);
            edges
                .get(edges.len() / 4)
                .copied()
                .unwrap_or(0.0)
                .max(SHAPE_FLOOR)
        })
        .collect();
    squares.iter().map(|&(class, e)| e / bare[class]).collect()
}

/// Squares whose shape evidence is under this are taken as bare for
/// [`bare_body_offset`]: well under [`SHAPE_MIDPOINT`], clear of any piece's rim.
const BARE_SHAPE: f64 = 2.0;

/// The fewest bare squares of a class that fix its body offset.
const MIN_BARE_SQUARES: usize = 6;

/// How large, in scatters ([`scaled_distance`]), the bare squares' body offset must be to
/// be taken off: half of [`OCCUPIED_MIDPOINT`]. A smaller one is the corners' own noise.
const MIN_BODY_OFFSET: f64 = 3.0;

/// How much the bodies of a class's bare squares (`members`, by their shape evidence)
/// differ from their references, as the median per channel, when that is large enough to
/// matter against the class's `scatter`. A body is sampled where a leaning figure shows,
/// up to a third of a square toward the far edge, and its corners near them: on a plain
/// grid drawn with thick lines
/// the body's disc takes in a sixth of the far line and every bare square reads darker
/// than its corners (Makruk seed 310393, 640×480 oblique: 12 of 255 darker, 8 scatters,
/// every bare square read occupied and no move of the game recorded).
fn bare_body_offset(
    members: &[usize],
    bodies: &[[f64; 3]],
    references: &[[f64; 3]],
    scatter: [f64; 3],
    shapes: &[f64],
) -> Option<[f64; 3]> {
    let bare: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| shapes[i] < BARE_SHAPE)
        .collect();
    if bare.len() < MIN_BARE_SQUARES {
        return None;
    }
    let mut differences: Vec<[f64; 3]> = bare
        .iter()
        .map(|&i| std::array::from_fn(|k| bodies[i][k] - references[i][k]))
        .collect();
    let offset = component_median(&mut differences);
    let size = scaled_distance(offset, [0.0; 3], scatter);
    (size >= MIN_BODY_OFFSET).then_some(offset)
}

/// Reads every square of a located board in `image` (BGR, the pixels `board` is in).
pub fn read(image: &Mat, board: &EightBoard, pieces: Pieces) -> opencv::Result<Observation> {
    Ok(measure(image, board, pieces)?.observation())
}

/// Measures every square of a located board in `image` (BGR, the pixels `board` is in).
pub fn measure(image: &Mat, board: &EightBoard, pieces: Pieces) -> opencv::Result<SquareMeasures> {
    let rectified = super::rectify(image, &board.geometry, CELL)?;
    let shifts = body_shifts_in(image, &board.geometry, pieces);
    SquareMeasures::of(&rectified, board, pieces, &shifts)
}

/// Square (`row`, `col`)'s entry of `shifts` (per square, in squares), none where there is
/// no entry.
pub fn shift_of(shifts: &[[f64; 2]], row: usize, col: usize) -> [f64; 2] {
    shifts
        .get(row * SQUARES + col)
        .copied()
        .unwrap_or([0.0, 0.0])
}

/// The point `offset` (in squares) from square (`row`, `col`)'s centre in a board
/// rectified at [`CELL`] pixels a square, in pixels.
pub fn in_square(row: usize, col: usize, offset: [f64; 2]) -> [f64; 2] {
    let cell = f64::from(CELL);
    [
        (col as f64 + 1.5 + offset[0]) * cell,
        (row as f64 + 1.5 + offset[1]) * cell,
    ]
}

/// [`body_shifts`] of `pieces` on a board of `geometry` seen in `image`.
pub fn body_shifts_in(image: &Mat, geometry: &BoardGeometry, pieces: Pieces) -> Vec<[f64; 2]> {
    body_shifts(
        geometry,
        f64::from(image.cols()),
        f64::from(image.rows()),
        pieces.body_height(),
    )
}

/// Where a piece's body appears, for every square (row by row), as an offset in square
/// sides: zero when the camera cannot be recovered from the homography.
pub fn body_shifts(
    geometry: &BoardGeometry,
    image_width: f64,
    image_height: f64,
    body_height: f64,
) -> Vec<[f64; 2]> {
    let camera = geometry
        .camera_position(image_width, image_height)
        .filter(|c| c.height > 2.0);
    (0..SQUARES * SQUARES)
        .map(|i| {
            let (row, col) = ((i / SQUARES) as f64, (i % SQUARES) as f64);
            camera.map_or([0.0, 0.0], |c| {
                let [dx, dy] = c.parallax(col + 0.5, row + 0.5, body_height);
                // More than this and the body would be on the next square: the pose is
                // wrong, not the piece.
                let length = dx.hypot(dy);
                let limit = 0.35f64.min(length);
                if length > 0.0 {
                    [dx / length * limit, dy / length * limit]
                } else {
                    [0.0, 0.0]
                }
            })
        })
        .collect()
}

/// Reads a board already rectified with [`super::rectify`] at [`CELL`] pixels a square.
pub fn read_rectified(
    rectified: &Mat,
    board: &EightBoard,
    pieces: Pieces,
    shifts: &[[f64; 2]],
) -> opencv::Result<Observation> {
    Ok(SquareMeasures::of(rectified, board, pieces, shifts)?.observation())
}

/// Every square of one view measured: the colour where a piece's body would show, and
/// the bare board's colour there. The reading and the looks
/// ([`crate::reading::adapt`]) both come from it.
#[derive(Clone, Debug)]
pub struct SquareMeasures {
    pieces: Pieces,
    /// Lab, row by row.
    bodies: Vec<[f64; 3]>,
    /// The bare board under each square's body: the fitted surface of its class, or its
    /// own uncovered corners where they are closer to the body (a lamp's falloff).
    references: Vec<[f64; 3]>,
    /// Each square's own uncovered corners (Lab).
    local: Vec<[f64; 3]>,
    /// Each body and its reference as the light at the board's middle would show them
    /// ([`relit`]): what the sides are told apart by.
    lit_bodies: Vec<[f64; 3]>,
    lit_references: Vec<[f64; 3]>,
    /// Per square and Lab channel, how much bare squares of its class scatter about
    /// their surface.
    scatters: Vec<[f64; 3]>,
    /// The board's lightness at its middle, per class of square.
    board_lightness: Vec<f64>,
    /// Per square, its shape evidence ([`Shapes`]) against the bare squares of its class:
    /// how many times more edge it shows than they do.
    shapes: Vec<f64>,
    /// Per square, whether its uncovered corners are not the bare board's: what stands
    /// there is no piece (an arm, a sleeve), and its edges are no piece's rim.
    corners_covered: Vec<bool>,
}

impl SquareMeasures {
    /// Measures a board rectified with [`super::rectify`] at [`CELL`] pixels a square.
    pub fn of(
        rectified: &Mat,
        board: &EightBoard,
        pieces: Pieces,
        shifts: &[[f64; 2]],
    ) -> opencv::Result<SquareMeasures> {
        let lab = Lab::of(rectified)?;
        let cell = f64::from(CELL);
        let class_of = |row: usize, col: usize| match board.surface {
            Surface::Checkered => (row + col) % 2,
            Surface::Grid => 0,
        };
        let mut corners = Vec::with_capacity(SQUARES * SQUARES);
        let mut near_corners = Vec::with_capacity(SQUARES * SQUARES);
        let mut bodies = Vec::with_capacity(SQUARES * SQUARES);
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let shift = shift_of(shifts, row, col);
                let offsets = [[-0.33, -0.33], [0.33, -0.33], [-0.33, 0.33], [0.33, 0.33]];
                let mut samples: Vec<[f64; 3]> = offsets
                    .iter()
                    .map(|&offset| {
                        let [x, y] = in_square(row, col, offset);
                        lab.disc_mean(x, y, 0.08 * cell)
                    })
                    .collect();
                corners.push(component_median(&mut samples));
                // The two corners nearest the camera: a piece leans away from it, so
                // they stay bare under a tall one.
                let mut by_nearness: Vec<(f64, [f64; 3])> = offsets
                    .iter()
                    .zip(&samples)
                    .map(|(o, &sample)| (o[0] * shift[0] + o[1] * shift[1], sample))
                    .collect();
                by_nearness.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut near: Vec<[f64; 3]> = by_nearness[..2].iter().map(|&(_, s)| s).collect();
                near_corners.push(component_median(&mut near));
                let [x, y] = in_square(row, col, shift);
                bodies.push(lab.disc_mean(x, y, BODY_RADIUS * cell));
            }
        }

        let classes = match board.surface {
            Surface::Checkered => 2,
            Surface::Grid => 1,
        };
        // Each class's squares, row by row.
        let class_members: Vec<Vec<usize>> = (0..classes)
            .map(|class| {
                (0..SQUARES * SQUARES)
                    .filter(|&i| class_of(i / SQUARES, i % SQUARES) == class)
                    .collect()
            })
            .collect();
        let falloffs: Vec<(Falloff, [f64; 3])> = class_members
            .iter()
            .map(|members| {
                let members: Vec<(f64, f64, [f64; 3])> = members
                    .iter()
                    .map(|&i| ((i % SQUARES) as f64, (i / SQUARES) as f64, corners[i]))
                    .collect();
                Falloff::fit_trimmed(&members)
            })
            .collect();
        let local = match pieces {
            Pieces::Discs => corners,
            Pieces::Figures => near_corners,
        };
        let mut references = Vec::with_capacity(SQUARES * SQUARES);
        let mut scatters = Vec::with_capacity(SQUARES * SQUARES);
        let mut corners_covered = Vec::with_capacity(SQUARES * SQUARES);
        let mut surface_lightness = Vec::with_capacity(SQUARES * SQUARES);
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let i = row * SQUARES + col;
                let (falloff, scatter) = &falloffs[class_of(row, col)];
                let bare = falloff.at(col as f64, row as f64);
                surface_lightness.push(bare[0]);
                // A disc never reaches its square's corners: where light falls off across
                // a square (a lamp near one edge), they are the better reference; for
                // figures the two corners nearest the camera are (a figure leans away).
                let reference = if distance(bodies[i], local[i]) < distance(bodies[i], bare) {
                    local[i]
                } else {
                    bare
                };
                references.push(reference);
                let scatter = scatter.map(|s| s.max(pieces.min_scatter()));
                corners_covered.push(scaled_distance(local[i], bare, scatter) > OCCUPIED_MIDPOINT);
                scatters.push(scatter);
            }
        }
        let board_lightness: Vec<f64> = falloffs
            .iter()
            .map(|(falloff, _)| falloff.at(3.5, 3.5)[0])
            .collect();
        let gradients = lab.gradients();
        let shapes = relative_shapes(
            &(0..SQUARES * SQUARES)
                .map(|i| {
                    let (row, col) = (i / SQUARES, i % SQUARES);
                    let [x, y] = in_square(row, col, [0.0, 0.0]);
                    (
                        class_of(row, col),
                        gradients.slanted_edge(x, y, SHAPE_RADIUS * cell),
                    )
                })
                .collect::<Vec<_>>(),
            classes,
        );
        for members in &class_members {
            // Every square of a class has the class's scatter.
            let scatter = scatters[members[0]];
            if let Some(offset) = bare_body_offset(members, &bodies, &references, scatter, &shapes)
            {
                for &i in members {
                    for (value, shift) in references[i].iter_mut().zip(offset) {
                        *value += shift;
                    }
                }
            }
        }
        // Light that falls off across the board darkens a light side's pieces at its dim
        // end as much as the squares there (Makruk 310685: White's figures on files c-f
        // of its two rows, under the edge of an arm's shadow, measured darker than lit
        // black ones and read Black all game). The surface fitted over the bare squares
        // says how each square is lit. A square's own corners would follow a sharp
        // shadow more closely, but relit by them alone 310685 read as before (24 of 32),
        // and by them where they showed a shade a hard clip lost moves (310658, 17 -> 15
        // of 20).
        let (lit_bodies, lit_references) = (0..SQUARES * SQUARES)
            .map(|i| {
                let middle = board_lightness[class_of(i / SQUARES, i % SQUARES)];
                let gain = relighting_gain(surface_lightness[i], middle);
                (relit(bodies[i], gain), relit(references[i], gain))
            })
            .unzip();
        Ok(SquareMeasures {
            pieces,
            bodies,
            references,
            local,
            lit_bodies,
            lit_references,
            scatters,
            board_lightness,
            shapes,
            corners_covered,
        })
    }

    /// Empty, dark or light per square, with probabilities, from colour statistics alone.
    pub fn observation(&self) -> Observation {
        self.observation_by(None)
    }

    /// The measure that tells this view's sides apart best (see [`SideMeasure`]), when
    /// lightness or saturation does.
    pub fn side_measure(&self) -> Option<SideMeasure> {
        match self.split(&self.occupied(), None) {
            Split::Lightness { .. } => Some(SideMeasure::Lightness),
            Split::Saturation { .. } => Some(SideMeasure::Saturation),
            Split::Colour { .. } => None,
        }
    }

    /// As [`SquareMeasures::observation`], the sides told apart by `measure` where it
    /// parts this view's pieces at all: a tracker keeps the measure its first settled
    /// view chose, so that a piece does not change sides between two views because a
    /// hand hid some pieces and the other measure parted the rest a little more cleanly.
    pub fn observation_by(&self, measure: Option<SideMeasure>) -> Observation {
        let occupied = self.occupied();
        let split = self.split(&occupied, measure);
        let cells = (0..SQUARES * SQUARES)
            .map(|i| {
                let light = split.light(self.lit_bodies[i]);
                let p = occupied[i];
                CellReading::from_probabilities(
                    [1.0 - p, p * (1.0 - light), p * light].map(|v| v as f32),
                )
            })
            .collect();
        Observation {
            size: SQUARES,
            cells,
        }
    }

    /// Per square, the probability that something stands on it.
    fn occupied(&self) -> Vec<f64> {
        (0..SQUARES * SQUARES)
            .map(|i| {
                let from_board = shaded_distance(
                    self.bodies[i],
                    self.references[i],
                    self.scatters[i],
                    self.pieces.shade_per_scatter(),
                );
                let colour = logistic((from_board - OCCUPIED_MIDPOINT) / OCCUPIED_WIDTH);
                if self.corners_covered[i] {
                    return colour;
                }
                // A piece of its square's colour still has a rim, a highlight and shading.
                let shape = logistic((self.shapes[i].ln() - SHAPE_MIDPOINT.ln()) / SHAPE_WIDTH);
                colour.max(shape)
            })
            .collect()
    }

    fn split(&self, occupied: &[f64], keep: Option<SideMeasure>) -> Split {
        side_split(
            &self.lit_bodies,
            &self.lit_references,
            occupied,
            &self.board_lightness,
            keep,
        )
    }

    /// Every square's look against the bare board right around its body (its own
    /// uncovered corners), for [`crate::reading::adapt::BoardLooks`] to learn what this
    /// board's pieces and bare squares look like. The third measure is the body's distance
    /// in hue from those corners: a dark piece on a dark square can share its lightness
    /// and still not its colour.
    pub fn looks(&self) -> Vec<Look> {
        let ratio = |value: f64, reference: f64, offset: f64| {
            ((value + offset) / (reference + offset)).ln() as f32
        };
        self.bodies
            .iter()
            .zip(&self.local)
            .map(|(&body, &bare)| Look {
                lightness: ratio(body[0], bare[0], LOOK_LIGHTNESS_OFFSET),
                chroma: ratio(chroma(body), chroma(bare), LOOK_CHROMA_OFFSET),
                lines: (((body[1] - bare[1]).hypot(body[2] - bare[2]) + LOOK_HUE_OFFSET)
                    / LOOK_HUE_OFFSET)
                    .ln() as f32,
            })
            .collect()
    }

    /// What stands on the squares, as measured for.
    pub fn pieces(&self) -> Pieces {
        self.pieces
    }
}

/// Offsets (Lab units, 0–255 scales) that keep the looks' ratios finite on black pieces
/// and grey boards, as Go's looks do, and make a hue difference of a few units — the
/// noise of a dim picture — count for little.
const LOOK_LIGHTNESS_OFFSET: f64 = 4.0;
const LOOK_CHROMA_OFFSET: f64 = 3.0;
const LOOK_HUE_OFFSET: f64 = 4.0;

/// The measure of a piece's body that tells the two sides apart on a board: which one
/// depends on the sets (black against ivory: lightness; red against black: saturation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideMeasure {
    Lightness,
    Saturation,
}

/// How dark pieces are told from light ones.
enum Split {
    /// By Lab lightness (0–255): below `threshold` dark.
    Lightness { threshold: f64, width: f64 },
    /// By saturation ([`saturation`]): one side coloured, the other grey (red men against
    /// black ones). A shaded red figure is as dark as a lit black one, but still red.
    Saturation {
        threshold: f64,
        width: f64,
        /// Whether the coloured side is the lighter one, on average.
        coloured_light: bool,
    },
    /// By colour, nearer one side's centre than the other's (Lab, hue weighted as in
    /// [`hue_weighted`]): two sides of about the same lightness, red men against grey.
    Colour {
        dark: [f64; 3],
        light: [f64; 3],
        width: f64,
    },
}

impl Split {
    /// The probability that a piece of this body colour is a light one.
    fn light(&self, body: [f64; 3]) -> f64 {
        match *self {
            Split::Lightness { threshold, width } => logistic((body[0] - threshold) / width),
            Split::Saturation {
                threshold,
                width,
                coloured_light,
            } => {
                let coloured = logistic((saturation(body) - threshold) / width);
                if coloured_light {
                    coloured
                } else {
                    1.0 - coloured
                }
            }
            Split::Colour { dark, light, width } => {
                let body = hue_weighted(body);
                logistic((distance(body, dark) - distance(body, light)) / width)
            }
        }
    }
}

/// What OpenCV's 8-bit Lab lightness is offset by to be proportional to the cube root
/// of luminance (L* = 116 f(Y) − 16, on a 0–255 scale): a shade that scales the light by
/// k scales `L + LIGHTNESS_ZERO`, and a and b about 128, by the cube root of k.
const LIGHTNESS_ZERO: f64 = 16.0 * 255.0 / 100.0;

/// The most a square's light is scaled up or down to the board's middle's: a shadow
/// takes a half or so off the light's cube root, and a surface fitted darker than that
/// at a square is extrapolated past what the bare squares showed.
const MAX_RELIGHTING: f64 = 2.0;

/// The gain that brings a square lit to lightness `here` to the board's middle, lit to
/// `middle` (bare-board lightness, 8-bit Lab).
fn relighting_gain(here: f64, middle: f64) -> f64 {
    ((middle + LIGHTNESS_ZERO) / (here + LIGHTNESS_ZERO).max(1.0))
        .clamp(1.0 / MAX_RELIGHTING, MAX_RELIGHTING)
}

/// A colour (8-bit Lab) as it would show under light scaled by `gain` in cube root.
fn relit(lab: [f64; 3], gain: f64) -> [f64; 3] {
    [
        (lab[0] + LIGHTNESS_ZERO) * gain - LIGHTNESS_ZERO,
        128.0 + (lab[1] - 128.0) * gain,
        128.0 + (lab[2] - 128.0) * gain,
    ]
}

/// Chroma over lightness (Lab, 0–255 scales; lightness offset so that noise on a black
/// piece is not colour): shading scales both, so a red figure's lit and shaded sides
/// keep about one saturation, while its lightness halves.
fn saturation(lab: [f64; 3]) -> f64 {
    chroma(lab) / (lab[0] + SATURATION_OFFSET)
}

/// The distance of a colour (8-bit Lab) from the grey of its lightness.
fn chroma(lab: [f64; 3]) -> f64 {
    (lab[1] - 128.0).hypot(lab[2] - 128.0)
}

const SATURATION_OFFSET: f64 = 20.0;

/// The least saturation between the grey and the coloured pieces' groups for them to be
/// taken as the two sides: red figures measured 0.22–0.44 on the renders, black and
/// ivory ones 0.02–0.16 (Makruk 310243, 310251).
const MIN_SATURATION_GAP: f64 = 0.1;

/// A split by saturation leaves each side at least this many pieces, and one in
/// [`MIN_SIDE_SHARE_DIVISOR`] of them: a single coloured thing (a sleeve's cuff, one
/// glinting piece) is no side.
const MIN_SIDE_PIECES: usize = 3;
const MIN_SIDE_SHARE_DIVISOR: usize = 5;

/// The least distance (hue-weighted Lab) of an occupied square's body from the board
/// under it for its colour to tell the sides apart by saturation: a dark man on a dark
/// square is 30 or more, a shadowed bare square 25, one leaned over by a tall neighbour
/// under 20.
const MIN_COLOURED_PIECE: f64 = 20.0;

/// The least median distance (hue-weighted Lab) of a side's pieces from the bare board
/// under them, for a split by saturation: a red pawn on tan wood is 44, a bare square
/// darkened by a shadow 25.
const MIN_SIDE_FROM_BOARD: f64 = 35.0;

/// A side whose pieces are this many times darker than the board under them is pieces
/// however near the board they measure: a dark board in dim light is itself near black
/// (Makruk 310687: black men at lightness 2–11 on squares at 29–35, 31–33 from the
/// board, and red ones at 12–36 on squares at 34–38, saturation 0.22–0.39 against the
/// board's 0.11, 24 from it: the sides were never told apart and every figure read
/// black), while a shadow takes a fifth or so off a square's lightness.
const DARKER_THAN_ANY_SHADOW: f64 = 3.0;

/// The centres of two groups of one measure per piece (two-means), low first; none with
/// fewer than two distinct values.
fn two_groups(values: &[f64]) -> Option<[f64; 2]> {
    let points: Vec<[f64; 3]> = values.iter().map(|&v| [v, 0.0, 0.0]).collect();
    Some(two_means(&points)?.map(|c| c[0]))
}

/// Two groups of the occupied squares (both sides' pieces are on the board in almost
/// every game), by lightness or by saturation, whichever sets them farther apart in
/// colour ([`colour_parting`]): black against ivory differ in lightness only, red
/// against black in saturation above all (their lightness overlaps once the red ones are
/// shaded); `keep`, where it parts them at all, whatever the other's parting. Else two groups of their colour,
/// when those are apart (sides of one lightness in different hues), the darker group the
/// dark side. Else, with one group only, the middle of the board's own
/// lightness: light pieces are lighter than dark squares and dark pieces darker than
/// light ones.
fn side_split(
    bodies: &[[f64; 3]],
    references: &[[f64; 3]],
    occupied: &[f64],
    board_lightness: &[f64],
    keep: Option<SideMeasure>,
) -> Split {
    let occupied_squares = || {
        bodies
            .iter()
            .zip(references)
            .zip(occupied)
            .filter(|(_, p)| **p > 0.5)
            .map(|((&b, &r), _)| (b, r))
    };
    let all: Vec<[f64; 3]> = occupied_squares().map(|(b, _)| b).collect();
    // A square read occupied by its shape alone, the colour of the board under it (a
    // piece of the square's colour, or the edge of a tall neighbour leaning over it),
    // says nothing of the sides' colours, and blurs the gap in saturation between them
    // (Makruk 310243: bare squares read occupied, as coloured as the tan wood, between
    // the black and the red men). Lightness keeps them: without them it parted worse
    // (Makruk 310204 and 310205 lost moves).
    let (mut pieces, mut boards): (Vec<[f64; 3]>, Vec<[f64; 3]>) = occupied_squares()
        .filter(|&(b, r)| distance(hue_weighted(b), hue_weighted(r)) >= MIN_COLOURED_PIECE)
        .unzip();
    if pieces.len() < 2 * MIN_SIDE_PIECES {
        (pieces, boards) = occupied_squares().unzip();
    }
    let lightness: Vec<f64> = all.iter().map(|b| b[0]).collect();
    // Dark and light pieces differ by half the lightness scale or more; one side's pieces
    // alone, shaded and lit, by much less.
    let by_lightness = two_groups(&lightness)
        .filter(|[dark, light]| light - dark >= MIN_PIECE_CONTRAST)
        .map(|[dark, light]| Split::Lightness {
            threshold: (dark + light) / 2.0,
            width: ((light - dark) / 10.0).max(2.0),
        });
    // A view whose sides were told apart by saturation is told apart so again whether
    // or not this look's grey pieces stand out from the board: black men on dark squares
    // are near them in colour, and at 25 to 35 from them a dark board's black side passed
    // the test in one look and failed it in the next; each look it failed was read by
    // lightness, in which a black figure's lit flat top is light and a shaded red one
    // dark (Makruk 310692: the black rook on a8 read White for most of the game).
    let sides_known = keep == Some(SideMeasure::Saturation);
    let by_saturation = saturation_split(&pieces, &boards, sides_known);
    match (by_lightness, by_saturation, keep) {
        (Some(lightness), _, Some(SideMeasure::Lightness)) => return lightness,
        (_, Some(saturation), Some(SideMeasure::Saturation)) => return saturation,
        (Some(lightness), Some(saturation), _) => {
            if truly_coloured(&pieces, &saturation)
                && own_parting(&pieces, &saturation)
                    >= CLEARER_PARTING * own_parting(&all, &lightness)
            {
                return saturation;
            }
            // Each parts its own measure about as cleanly on a board of black and grey
            // figures under a brown light (Makruk 310658: 2.35 and 2.27, and the other
            // way round a few frames on): the near-black figures' little chroma over
            // their little lightness makes them as saturated as the grey ones, and
            // saturation parts the figures at random. The sides are the groups that
            // stand apart in colour as a whole.
            return if colour_parting(&pieces, &saturation) > colour_parting(&pieces, &lightness) {
                saturation
            } else {
                lightness
            };
        }
        (Some(split), None, _) | (None, Some(split), _) => return split,
        (None, None, _) => {}
    }
    let coloured: Vec<[f64; 3]> = all.iter().map(|&b| hue_weighted(b)).collect();
    if let Some([dark, light]) = two_means(&coloured) {
        let apart = distance(dark, light);
        if apart >= MIN_PIECE_CONTRAST {
            return Split::Colour {
                dark,
                light,
                width: (apart / 10.0).max(2.0),
            };
        }
    }
    let lo = board_lightness.iter().copied().fold(f64::MAX, f64::min);
    let hi = board_lightness.iter().copied().fold(f64::MIN, f64::max);
    Split::Lightness {
        threshold: (lo + hi) / 2.0,
        width: 8.0,
    }
}

/// How far apart `split` sets the two groups of `bodies` in colour ([`hue_weighted`]
/// Lab).
fn colour_parting(bodies: &[[f64; 3]], split: &Split) -> f64 {
    parting(bodies, split, hue_weighted)
}

/// How far apart `split` sets the two groups of `bodies` in the one measure it parts
/// them by (Lab lightness, or [`saturation`]).
fn own_parting(bodies: &[[f64; 3]], split: &Split) -> f64 {
    match split {
        Split::Saturation { .. } => parting(bodies, split, |body| [saturation(body), 0.0, 0.0]),
        _ => parting(bodies, split, |body| [body[0], 0.0, 0.0]),
    }
}

/// How far apart `split` sets the two groups of `bodies`, each body seen as `seen`: the
/// squared distance between the groups' centres over the sum of their spreads (mean
/// squared distances from their centres), as Fisher's criterion weighs a parting. Zero
/// when a group is empty.
fn parting(bodies: &[[f64; 3]], split: &Split, seen: impl Fn([f64; 3]) -> [f64; 3]) -> f64 {
    let (light, dark): (Vec<[f64; 3]>, Vec<[f64; 3]>) =
        bodies.iter().partition(|&&body| split.light(body) >= 0.5);
    let centre_and_spread = |group: &[[f64; 3]]| {
        let seen: Vec<[f64; 3]> = group.iter().map(|&body| seen(body)).collect();
        let n = seen.len() as f64;
        let centre: [f64; 3] = std::array::from_fn(|k| seen.iter().map(|v| v[k]).sum::<f64>() / n);
        let spread = seen
            .iter()
            .map(|&v| distance(v, centre).powi(2))
            .sum::<f64>()
            / n;
        (centre, spread)
    };
    if light.is_empty() || dark.is_empty() {
        return 0.0;
    }
    let (light_centre, light_spread) = centre_and_spread(&light);
    let (dark_centre, dark_spread) = centre_and_spread(&dark);
    let apart = distance(light_centre, dark_centre).powi(2);
    // Two tight groups part as well as they stand apart, not as well as one is tight.
    apart / (light_spread + dark_spread).max(apart / 100.0)
}

/// How many times more cleanly saturation must part the pieces, on its own scale, than
/// lightness does on its, to be taken for the sides without weighing the two in colour.
const CLEARER_PARTING: f64 = 3.0;

/// The least median chroma (8-bit Lab) of the coloured group of a saturation split for
/// it to be a coloured side rather than near-black figures whose few units of tint are
/// many times their lightness (Makruk 310658).
const MIN_SIDE_CHROMA: f64 = 20.0;

/// Whether the coloured group of `split` (a saturation split) is coloured in itself, not
/// only over its lightness.
fn truly_coloured(bodies: &[[f64; 3]], split: &Split) -> bool {
    let Split::Saturation { threshold, .. } = *split else {
        return false;
    };
    let mut chromas: Vec<f64> = bodies
        .iter()
        .filter(|&&body| saturation(body) >= threshold)
        .map(|&body| chroma(body))
        .collect();
    chromas.sort_by(f64::total_cmp);
    chromas
        .get(chromas.len() / 2)
        .is_some_and(|&median| median >= MIN_SIDE_CHROMA)
}

/// Two groups of `pieces` (bodies, with the bare board under each in `boards`) by
/// saturation, when each is a side: far enough apart, enough
/// pieces, and pieces rather than a shade of the board (bare squares read occupied in a
/// shadow are as coloured as the wood, and an orange board is as coloured as a red man;
/// a single coloured thing, a cuff or a glint, is no side). With `sides_known` (an
/// earlier view was parted so) pieces need not show that they are no shade of the board.
fn saturation_split(pieces: &[[f64; 3]], boards: &[[f64; 3]], sides_known: bool) -> Option<Split> {
    let saturations: Vec<f64> = pieces.iter().map(|&b| saturation(b)).collect();
    let [grey, coloured] = two_groups(&saturations)?;
    if coloured - grey < MIN_SATURATION_GAP {
        return None;
    }
    let threshold = (grey + coloured) / 2.0;
    // Per side (grey, coloured): the pieces' distances from the board under them, their
    // lightness and saturation, and those of the board under them.
    let mut from_board = [Vec::new(), Vec::new()];
    let mut lightness = [Vec::new(), Vec::new()];
    let mut board_lightness = [Vec::new(), Vec::new()];
    let mut reflectance = [Vec::new(), Vec::new()];
    let mut piece_saturation = [Vec::new(), Vec::new()];
    let mut board_saturation = [Vec::new(), Vec::new()];
    for ((body, board), &s) in pieces.iter().zip(boards).zip(&saturations) {
        let side = usize::from(s >= threshold);
        from_board[side].push(distance(hue_weighted(*body), hue_weighted(*board)));
        lightness[side].push(body[0]);
        board_lightness[side].push(board[0]);
        reflectance[side].push(brightest_primary(*body));
        piece_saturation[side].push(s);
        board_saturation[side].push(saturation(*board));
    }
    // The upper median, as the distance from the board was always taken.
    let median = |values: &[f64]| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
    };
    // Pieces rather than a shade of the board: far from it in colour, or, on a dark board
    // in dim light where nothing is far from anything, much darker than it or much more
    // saturated (a shadow scales lightness and chroma alike, and keeps the saturation).
    let is_side = |side: usize| {
        let count = from_board[side].len();
        count >= MIN_SIDE_PIECES
            && count * MIN_SIDE_SHARE_DIVISOR >= pieces.len()
            && (sides_known
                || median(&from_board[side]) >= MIN_SIDE_FROM_BOARD
                || median(&lightness[side]) * DARKER_THAN_ANY_SHADOW
                    <= median(&board_lightness[side])
                || median(&piece_saturation[side]) - median(&board_saturation[side])
                    >= MIN_SATURATION_GAP)
    };
    if !(0..2).all(is_side) {
        return None;
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    // The light side is the one that reflects more, and a red man reflects most of the
    // red light while a black one reflects little of any: lightness weighs red at a
    // fifth of green, and black men lit brightly on a dark board measured lighter than
    // the red ones (Mak-hos 300494: 88–92 against 71–100), and the whole game was
    // recorded with the sides swapped. In their brightest primary the red men were
    // four times the black ones.
    Some(Split::Saturation {
        threshold,
        width: ((coloured - grey) / 10.0).max(0.01),
        coloured_light: mean(&reflectance[1]) > mean(&reflectance[0]),
    })
}

/// The linear reflectance (0–1) in the strongest of the three sRGB primaries of a colour
/// in OpenCV's 8-bit Lab (D65): what a body reflects of the light where it reflects most,
/// whatever its hue.
fn brightest_primary(lab: [f64; 3]) -> f64 {
    let lightness = lab[0] * 100.0 / 255.0;
    let fy = (lightness + 16.0) / 116.0;
    let fx = fy + (lab[1] - 128.0) / 500.0;
    let fz = fy - (lab[2] - 128.0) / 200.0;
    let inverse = |t: f64| {
        const DELTA: f64 = 6.0 / 29.0;
        if t > DELTA {
            t.powi(3)
        } else {
            3.0 * DELTA * DELTA * (t - 4.0 / 29.0)
        }
    };
    let [x, y, z] = [
        0.950_456 * inverse(fx),
        inverse(fy),
        1.088_754 * inverse(fz),
    ];
    let primaries = [
        3.240_454 * x - 1.537_139 * y - 0.498_531 * z,
        -0.969_266 * x + 1.876_011 * y + 0.041_556 * z,
        0.055_643 * x - 0.204_026 * y + 1.057_225 * z,
    ];
    primaries.into_iter().fold(0.0, f64::max)
}

/// Lab with its colour axes doubled: in OpenCV's 8-bit Lab they span about half the
/// range lightness does over real pieces, and a red man differs from a grey one there.
fn hue_weighted(lab: [f64; 3]) -> [f64; 3] {
    [lab[0], 2.0 * lab[1], 2.0 * lab[2]]
}

/// Two-means of `values`, started from the value farthest from their mean and the value
/// farthest from that; the group of lower first component first. None with fewer than
/// two distinct values.
fn two_means(values: &[[f64; 3]]) -> Option<[[f64; 3]; 2]> {
    let n = values.len() as f64;
    let mean: [f64; 3] = std::array::from_fn(|k| values.iter().map(|v| v[k]).sum::<f64>() / n);
    let farthest_from = |from: [f64; 3]| {
        values
            .iter()
            .copied()
            .max_by(|a, b| distance(*a, from).total_cmp(&distance(*b, from)))
    };
    let first = farthest_from(mean)?;
    let second = farthest_from(first)?;
    if distance(first, second) == 0.0 {
        return None;
    }
    let mut centres = [first, second];
    for _ in 0..20 {
        let mut sums = [[0.0; 3]; 2];
        let mut counts = [0.0; 2];
        for v in values {
            let group = usize::from(distance(*v, centres[1]) < distance(*v, centres[0]));
            for k in 0..3 {
                sums[group][k] += v[k];
            }
            counts[group] += 1.0;
        }
        if counts.contains(&0.0) {
            break;
        }
        centres = std::array::from_fn(|g| sums[g].map(|s| s / counts[g]));
    }
    if centres[1][0] < centres[0][0] {
        centres.swap(0, 1);
    }
    Some(centres)
}

/// The least lightness (0–255) between the dark and the light pieces' groups for the
/// groups to be taken as the two sides.
const MIN_PIECE_CONTRAST: f64 = 50.0;

/// A colour that varies smoothly over the board: per channel a quadratic in column and
/// row. Light falls off across a board from a lamp or a window; a lamp above it leaves a
/// pool brightest in its middle, which no plane follows, and the squares' scatter about a
/// plane there grew so wide that a dark man on a dark square was within it.
#[derive(Clone, Copy, Debug)]
struct Falloff {
    coefficients: [[f64; TERMS]; 3],
}

/// The quadratic's terms: 1, col, row, col², row², col · row (centred on the board).
const TERMS: usize = 6;

fn terms(col: f64, row: f64) -> [f64; TERMS] {
    let (x, y) = (col - 3.5, row - 3.5);
    [1.0, x, y, x * x, y * y, x * y]
}

impl Falloff {
    fn at(&self, col: f64, row: f64) -> [f64; 3] {
        let t = terms(col, row);
        self.coefficients
            .map(|c| c.iter().zip(&t).map(|(c, t)| c * t).sum())
    }

    /// The surface through the half of `members` (col, row, colour) that agree with it
    /// best, and how far they lie from it per channel.
    fn fit_trimmed(members: &[(f64, f64, [f64; 3])]) -> (Falloff, [f64; 3]) {
        let mut chosen: Vec<usize> = (0..members.len()).collect();
        let mut falloff = Falloff::fit(members, &chosen);
        for _ in 0..4 {
            let mut by_distance: Vec<(f64, usize)> = members
                .iter()
                .enumerate()
                .map(|(i, &(col, row, colour))| (distance(colour, falloff.at(col, row)), i))
                .collect();
            by_distance.sort_by(|a, b| a.0.total_cmp(&b.0));
            chosen = by_distance[..(members.len() / 2).max(3).min(members.len())]
                .iter()
                .map(|&(_, i)| i)
                .collect();
            falloff = Falloff::fit(members, &chosen);
        }
        let scatter = std::array::from_fn(|k| {
            chosen
                .iter()
                .map(|&i| {
                    let (col, row, colour) = members[i];
                    (colour[k] - falloff.at(col, row)[k]).abs()
                })
                .fold(0.0, f64::max)
        });
        (falloff, scatter)
    }

    /// Least squares over the `chosen` members; a flat surface at their mean when they
    /// do not span enough of the board to fix a quadratic.
    fn fit(members: &[(f64, f64, [f64; 3])], chosen: &[usize]) -> Falloff {
        let mut normal = [[0.0; TERMS]; TERMS];
        let mut rhs = [[0.0; TERMS]; 3];
        for &i in chosen {
            let (col, row, colour) = members[i];
            let t = terms(col, row);
            for a in 0..TERMS {
                for b in 0..TERMS {
                    normal[a][b] += t[a] * t[b];
                }
                for k in 0..3 {
                    rhs[k][a] += t[a] * colour[k];
                }
            }
        }
        let n = chosen.len().max(1) as f64;
        let flat = |k: usize| {
            let mut c = [0.0; TERMS];
            c[0] = chosen.iter().map(|&i| members[i].2[k]).sum::<f64>() / n;
            c
        };
        let coefficients =
            std::array::from_fn(|k| solve(normal, rhs[k]).unwrap_or_else(|| flat(k)));
        Falloff { coefficients }
    }
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting; None when `a` is
/// (nearly) singular.
fn solve(mut a: [[f64; TERMS]; TERMS], mut b: [f64; TERMS]) -> Option<[f64; TERMS]> {
    let scale = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for col in 0..TERMS {
        let pivot = (col..TERMS).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-9 * scale.max(1.0) {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..TERMS {
            let factor = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (value, pivot) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *value -= factor * pivot;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; TERMS];
    for row in (0..TERMS).rev() {
        let rest: f64 = (row + 1..TERMS).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    Some(x)
}

/// The distance from `a` to `b` with each channel in units of its own `scatter`: light
/// falling off across a board (a lamp's pool, a window) moves the bare squares'
/// lightness far more than their hue, and a dark piece on a dark square may differ from
/// it in hue only.
fn scaled_distance(a: [f64; 3], b: [f64; 3], scatter: [f64; 3]) -> f64 {
    (0..3)
        .map(|k| ((a[k] - b[k]) / scatter[k]).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// [`scaled_distance`] of a body from the bare board under it, a darker body's lightness
/// measured against `shade_per_scatter` of the board's ([`Pieces::shade_per_scatter`])
/// where that is more than the class's scatter. On a clean board seen from above, its
/// bare squares scattering under one Lab unit, the men's shadows on the light squares
/// beside them (8 to 12 units darker, hue unchanged) read as pieces and no start position
/// fitted (Mak-hos seeds 300390 and 300401, no move of either game recorded).
fn shaded_distance(
    body: [f64; 3],
    reference: [f64; 3],
    scatter: [f64; 3],
    shade_per_scatter: f64,
) -> f64 {
    let mut scatter = scatter;
    if body[0] < reference[0] {
        scatter[0] = scatter[0].max(shade_per_scatter * reference[0]);
    }
    scaled_distance(body, reference, scatter)
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Per channel, the middle value (the upper middle of an even count).
fn component_median(samples: &mut [[f64; 3]]) -> [f64; 3] {
    std::array::from_fn(|k| {
        samples.sort_by(|a, b| a[k].total_cmp(&b[k]));
        samples.get(samples.len() / 2).map_or(0.0, |s| s[k])
    })
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// A BGR picture in CIE Lab (8-bit OpenCV scaling: all three 0–255), row-major.
struct Lab {
    pixels: Vec<[u8; 3]>,
    width: i32,
    height: i32,
}

/// A picture's lightness gradient per pixel, row-major.
struct Gradients {
    across: Vec<f64>,
    down: Vec<f64>,
    width: i32,
    height: i32,
}

impl Gradients {
    /// The slanted edge in a disc, all round: once the disc's mean gradient is taken
    /// off (light falling off across the board slopes one way over the whole disc), each
    /// pixel's gradient strength is weighted by |sin 2θ| of its direction θ (the squares'
    /// own edges and grain printed along them run with the rectified board's axes), and
    /// the result is the least of its means over the disc's four quarters. A piece's
    /// round rim stands in every quarter; a straight edge (an arm's, a shadow's) crosses
    /// three at most, and the end of an arm reaching in from a corner one or two.
    fn slanted_edge(&self, x: f64, y: f64, radius: f64) -> f64 {
        let r = radius.max(1.0);
        let (x0, x1) = ((x - r).floor() as i32, (x + r).ceil() as i32);
        let (y0, y1) = ((y - r).floor() as i32, (y + r).ceil() as i32);
        let inside: Vec<(usize, usize)> = (y0.max(0)..=y1.min(self.height - 1))
            .flat_map(|yi| (x0.max(0)..=x1.min(self.width - 1)).map(move |xi| (xi, yi)))
            .filter(|&(xi, yi)| (f64::from(xi) - x).hypot(f64::from(yi) - y) <= r)
            .map(|(xi, yi)| {
                let quarter = usize::from(f64::from(xi) >= x) + 2 * usize::from(f64::from(yi) >= y);
                ((yi * self.width + xi) as usize, quarter)
            })
            .collect();
        if inside.is_empty() {
            return 0.0;
        }
        let n = inside.len() as f64;
        let mean_across = inside.iter().map(|&(i, _)| self.across[i]).sum::<f64>() / n;
        let mean_down = inside.iter().map(|&(i, _)| self.down[i]).sum::<f64>() / n;
        let mut sums = [0.0; 4];
        let mut counts = [0.0; 4];
        for &(i, quarter) in &inside {
            let (gx, gy) = (self.across[i] - mean_across, self.down[i] - mean_down);
            let strength = gx.hypot(gy);
            if strength > 0.0 {
                sums[quarter] += 2.0 * (gx * gy).abs() / strength;
            }
            counts[quarter] += 1.0;
        }
        (0..4)
            .map(|q| {
                if counts[q] > 0.0 {
                    sums[q] / counts[q]
                } else {
                    0.0
                }
            })
            .fold(f64::INFINITY, f64::min)
    }
}

impl Lab {
    /// The lightness gradient (3×3 Sobel, per pixel) across and down.
    fn gradients(&self) -> Gradients {
        let (w, h) = (self.width, self.height);
        let at = |x: i32, y: i32| {
            f64::from(self.pixels[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize][0])
        };
        let mut across = Vec::with_capacity((w * h).max(0) as usize);
        let mut down = Vec::with_capacity((w * h).max(0) as usize);
        for y in 0..h {
            for x in 0..w {
                across.push(
                    (at(x + 1, y - 1) + 2.0 * at(x + 1, y) + at(x + 1, y + 1)
                        - at(x - 1, y - 1)
                        - 2.0 * at(x - 1, y)
                        - at(x - 1, y + 1))
                        / 8.0,
                );
                down.push(
                    (at(x - 1, y + 1) + 2.0 * at(x, y + 1) + at(x + 1, y + 1)
                        - at(x - 1, y - 1)
                        - 2.0 * at(x, y - 1)
                        - at(x + 1, y - 1))
                        / 8.0,
                );
            }
        }
        Gradients {
            across,
            down,
            width: w,
            height: h,
        }
    }

    fn of(bgr: &Mat) -> opencv::Result<Lab> {
        let mut lab = Mat::default();
        imgproc::cvt_color_def(bgr, &mut lab, imgproc::COLOR_BGR2Lab)?;
        let lab = if lab.is_continuous() {
            lab
        } else {
            lab.try_clone()?
        };
        let pixels = lab
            .data_bytes()?
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        Ok(Lab {
            pixels,
            width: lab.cols(),
            height: lab.rows(),
        })
    }

    fn disc_mean(&self, x: f64, y: f64, radius: f64) -> [f64; 3] {
        let r = radius.max(1.0);
        let (x0, x1) = ((x - r).floor() as i32, (x + r).ceil() as i32);
        let (y0, y1) = ((y - r).floor() as i32, (y + r).ceil() as i32);
        let mut sum = [0.0; 3];
        let mut count = 0.0;
        for yi in y0.max(0)..=y1.min(self.height - 1) {
            for xi in x0.max(0)..=x1.min(self.width - 1) {
                let (dx, dy) = (f64::from(xi) - x, f64::from(yi) - y);
                if dx * dx + dy * dy > r * r {
                    continue;
                }
                let p = self.pixels[(yi * self.width + xi) as usize];
                for k in 0..3 {
                    sum[k] += f64::from(p[k]);
                }
                count += 1.0;
            }
        }
        if count == 0.0 {
            [0.0, 128.0, 128.0]
        } else {
            sum.map(|s| s / count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Color, Occupancy};
    use crate::geometry::eight::LINES;
    use opencv::core::{CV_8UC3, Point, Rect, Scalar};

    /// A rectified checkered board, brown and tan, with a disc on the squares given as
    /// (row, col, BGR).
    fn rectified(discs: &[(usize, usize, [f64; 3])]) -> Mat {
        rectified_with([[40.0, 70.0, 110.0], [140.0, 180.0, 210.0]], discs)
    }

    /// [`rectified`] with the squares of the two colours given (BGR), the first at the
    /// corner.
    fn rectified_with(squares: [[f64; 3]; 2], discs: &[(usize, usize, [f64; 3])]) -> Mat {
        let side = (LINES as i32 + 1) * CELL;
        let mut image =
            Mat::new_rows_cols_with_default(side, side, CV_8UC3, Scalar::all(40.0)).unwrap();
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let [b, g, r] = squares[(row + col) % 2];
                let colour = Scalar::new(b, g, r, 0.0);
                let square =
                    Rect::new((col as i32 + 1) * CELL, (row as i32 + 1) * CELL, CELL, CELL);
                imgproc::rectangle(&mut image, square, colour, -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        for &(row, col, [b, g, r]) in discs {
            let centre = Point::new(
                (col as i32 + 1) * CELL + CELL / 2,
                (row as i32 + 1) * CELL + CELL / 2,
            );
            imgproc::circle(
                &mut image,
                centre,
                CELL * 2 / 5,
                Scalar::new(b, g, r, 0.0),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        image
    }

    fn board() -> EightBoard {
        EightBoard {
            geometry: BoardGeometry::from_corners(
                LINES,
                [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]],
            )
            .unwrap(),
            surface: Surface::Checkered,
            first_square_dark: Some(true),
        }
    }

    #[test]
    fn pieces_and_bare_squares_are_read_and_look_as_they_should() {
        let dark = [25.0, 25.0, 30.0];
        let light = [225.0, 230.0, 235.0];
        // A green piece as light as the brown square it stands on: its hue tells it.
        let green = [60.0, 90.0, 50.0];
        let image = rectified(&[(0, 0, dark), (2, 2, light), (4, 4, green)]);
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let measures = SquareMeasures::of(&image, &board(), Pieces::Discs, &shifts).unwrap();
        let read = measures.observation().occupancy();
        assert_eq!(read.get(0, 0), Some(Color::Black));
        assert_eq!(read.get(2, 2), Some(Color::White));
        assert_eq!(read.get(1, 1), None);
        let looks = measures.looks();
        let look = |row: usize, col: usize| looks[row * SQUARES + col];
        for bare in [look(1, 1), look(1, 2), look(7, 7)] {
            assert!(bare.lightness.abs() < 0.05 && bare.chroma.abs() < 0.05 && bare.lines < 0.05);
        }
        assert!(look(0, 0).lightness < -0.5, "{:?}", look(0, 0));
        assert!(look(2, 2).lightness > 0.5, "{:?}", look(2, 2));
        assert!(look(4, 4).lines > 1.0, "{:?}", look(4, 4));
    }

    #[test]
    fn sides_of_one_lightness_are_told_apart_by_their_colour() {
        let red = [50.0, 50.0, 190.0];
        let grey = [105.0, 105.0, 105.0];
        let image = rectified(&[
            (0, 1, red),
            (0, 3, red),
            (0, 5, red),
            (7, 0, grey),
            (7, 2, grey),
            (7, 4, grey),
        ]);
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let read = SquareMeasures::of(&image, &board(), Pieces::Discs, &shifts)
            .unwrap()
            .observation()
            .occupancy();
        let reds: Vec<_> = [1, 3, 5].iter().map(|&c| read.get(0, c)).collect();
        let greys: Vec<_> = [0, 2, 4].iter().map(|&c| read.get(7, c)).collect();
        assert!(
            reds.iter().all(|&c| c.is_some() && c == reds[0]),
            "{reds:?}"
        );
        assert!(
            greys.iter().all(|&c| c.is_some() && c == greys[0]),
            "{greys:?}"
        );
        assert_ne!(reds[0], greys[0]);
    }

    /// Every piece of `lights` read White, every one of `darks` Black.
    fn assert_light_and_dark(
        read: &Occupancy,
        lights: &[(usize, usize, [f64; 3])],
        darks: &[(usize, usize, [f64; 3])],
    ) {
        for &(row, col, _) in lights {
            assert_eq!(
                read.get(row, col),
                Some(Color::White),
                "light piece on {row},{col}"
            );
        }
        for &(row, col, _) in darks {
            assert_eq!(
                read.get(row, col),
                Some(Color::Black),
                "dark piece on {row},{col}"
            );
        }
    }

    #[test]
    fn red_men_in_shade_are_still_the_red_side() {
        // A shaded red man is darker than a lit black one: lightness alone would put the
        // two shaded reds with the blacks.
        let (red, shaded_red) = ([60.0, 60.0, 220.0], [25.0, 25.0, 100.0]);
        let (black, lit_black) = ([20.0, 20.0, 22.0], [70.0, 70.0, 75.0]);
        let reds = [
            (0, 1, red),
            (0, 3, red),
            (0, 5, red),
            (1, 0, shaded_red),
            (1, 2, shaded_red),
        ];
        let blacks = [
            (7, 0, black),
            (7, 2, black),
            (7, 4, black),
            (6, 1, lit_black),
            (6, 3, lit_black),
        ];
        let image = rectified(&[reds, blacks].concat());
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let measures = SquareMeasures::of(&image, &board(), Pieces::Discs, &shifts).unwrap();
        assert_eq!(measures.side_measure(), Some(SideMeasure::Saturation));
        let read = measures.observation().occupancy();
        assert_light_and_dark(&read, &reds, &blacks);
        // A tracker that kept lightness from an earlier view is given lightness.
        let by_lightness = measures
            .observation_by(Some(SideMeasure::Lightness))
            .occupancy();
        assert_eq!(by_lightness.get(1, 0), Some(Color::Black));
        assert_eq!(by_lightness.get(0, 1), Some(Color::White));
    }

    #[test]
    fn red_men_are_the_light_side_beside_brightly_lit_black_ones() {
        // Mak-hos 300494's first frame (BGR): black men under a bright light, lighter in
        // Lab than the red men, on a dark purple and brown board.
        let (red, shaded_red) = ([43.0, 54.0, 165.0], [34.0, 41.0, 116.0]);
        let (black, lit_black) = ([63.0, 79.0, 89.0], [64.0, 84.0, 93.0]);
        let reds: Vec<_> = (0..8)
            .map(|col| {
                (
                    7 - col % 2,
                    col,
                    if col % 3 == 0 { red } else { shaded_red },
                )
            })
            .collect();
        let blacks: Vec<_> = (0..8)
            .map(|col| (col % 2, col, if col % 2 == 0 { black } else { lit_black }))
            .collect();
        let image = rectified_with(
            [[26.0, 39.0, 58.0], [56.0, 45.0, 77.0]],
            &[reds.as_slice(), blacks.as_slice()].concat(),
        );
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let measures = SquareMeasures::of(&image, &board(), Pieces::Discs, &shifts).unwrap();
        assert_eq!(measures.side_measure(), Some(SideMeasure::Saturation));
        assert_light_and_dark(&measures.observation().occupancy(), &reds, &blacks);
    }

    #[test]
    fn brightest_primary_is_the_linear_reflectance_of_the_strongest_channel() {
        let lab_of = |bgr: [u8; 3]| {
            let pixel = Mat::new_rows_cols_with_default(
                1,
                1,
                CV_8UC3,
                Scalar::new(bgr[0].into(), bgr[1].into(), bgr[2].into(), 0.0),
            )
            .unwrap();
            Lab::of(&pixel).unwrap().pixels[0].map(f64::from)
        };
        // sRGB 255 is reflectance 1, 188 about a half, 0 none.
        assert!((brightest_primary(lab_of([255, 255, 255])) - 1.0).abs() < 0.02);
        assert!((brightest_primary(lab_of([0, 0, 188])) - 0.5).abs() < 0.03);
        assert!((brightest_primary(lab_of([188, 0, 0])) - 0.5).abs() < 0.03);
        assert!(brightest_primary(lab_of([0, 0, 0])) < 0.01);
    }

    #[test]
    fn red_and_black_men_on_a_dim_grey_board_are_told_apart() {
        // Makruk 310687's light: the board near black itself, black men 32 from it and
        // shaded red ones 25, both under the distance that tells pieces from a shade of
        // the board; but the blacks are many times darker and the reds far more
        // saturated than the squares under them.
        let board_grey = [33.0, 34.0, 36.0];
        let (red, black) = ([20.0, 20.0, 44.0], [3.0, 3.0, 4.0]);
        let reds: Vec<_> = (0..8).map(|col| (6, col, red)).collect();
        let blacks: Vec<_> = (0..8).map(|col| (1, col, black)).collect();
        let measures =
            figures_on_a_plain_grid(board_grey, &[reds.as_slice(), blacks.as_slice()].concat());
        let read = measures.observation().occupancy();
        assert_light_and_dark(&read, &reds, &blacks);
    }

    /// A piece drawn as [`rectified_with`] draws it: row, column and colour (BGR).
    type Disc = (usize, usize, [f64; 3]);

    /// Makruk 310692's sides (BGR): red figures lit to four levels, the darkest shaded,
    /// and black ones, four of whose flat tops catch the light as a pale grey-brown,
    /// lighter than the shaded reds.
    fn red_and_black_figures_with_lit_tops() -> (Vec<Disc>, Vec<Disc>) {
        let reds_lit_to = [
            [60.0, 75.0, 230.0],
            [40.0, 50.0, 170.0],
            [30.0, 38.0, 130.0],
            [25.0, 30.0, 100.0],
        ];
        let (black, lit_top) = ([23.0, 27.0, 29.0], [82.0, 102.0, 115.0]);
        let reds = (48..64)
            .map(|i| (i / 8, i % 8, reds_lit_to[i % 4]))
            .collect();
        let blacks = (0..16)
            .map(|i| {
                (
                    i / 8,
                    i % 8,
                    if [0, 7, 9, 14].contains(&i) {
                        lit_top
                    } else {
                        black
                    },
                )
            })
            .collect();
        (reds, blacks)
    }

    #[test]
    fn black_figures_with_lit_tops_and_shaded_red_ones_are_parted_by_saturation() {
        // In lightness the lit tops go with the reds and the shaded reds nearly with the
        // blacks. (On 310692's frames the two partings also weighed alike in colour as a
        // whole, and lightness was kept; these drawn discs part more cleanly by saturation
        // in colour too.)
        let (reds, blacks) = red_and_black_figures_with_lit_tops();
        let measures = figures_on_a_plain_grid(
            [70.0, 80.0, 90.0],
            &[reds.as_slice(), blacks.as_slice()].concat(),
        );
        assert_eq!(measures.side_measure(), Some(SideMeasure::Saturation));
        assert_light_and_dark(&measures.observation().occupancy(), &reds, &blacks);
    }

    #[test]
    fn sides_once_parted_by_saturation_stay_so_where_the_grey_side_is_near_the_board() {
        // Black figures on a dark board stand as little apart from it as a shadow would:
        // alone, this look cannot tell its grey side from a shade of the board.
        let board = [45.0, 48.0, 55.0];
        let (reds, blacks) = red_and_black_figures_with_lit_tops();
        let measures =
            figures_on_a_plain_grid(board, &[reds.as_slice(), blacks.as_slice()].concat());
        assert_ne!(measures.side_measure(), Some(SideMeasure::Saturation));
        let kept = measures
            .observation_by(Some(SideMeasure::Saturation))
            .occupancy();
        assert_light_and_dark(&kept, &reds, &blacks);
    }

    #[test]
    fn black_and_grey_figures_under_a_brown_light_are_parted_by_lightness() {
        // Makruk 310658's light: a dim brown glow on near-black figures gives some of
        // them a little chroma, which over their little lightness is as much
        // saturation as a red man's; the grey figures, lit unevenly, spread widely in
        // lightness. Saturation parts tinted from untinted figures more tightly than
        // lightness parts the sides, and read that way the sides came out at random.
        let brown = [40.0, 80.0, 120.0];
        let (tinted_black, black) = ([4.0, 9.0, 16.0], [10.0, 10.0, 10.0]);
        let greys = [
            [110.0, 110.0, 112.0],
            [150.0, 150.0, 152.0],
            [200.0, 200.0, 202.0],
        ];
        let blacks: Vec<_> = [0, 2]
            .into_iter()
            .flat_map(|row| {
                (0..8).map(move |col| (row, col, if col % 2 == 0 { tinted_black } else { black }))
            })
            .collect();
        let lights: Vec<_> = [5, 7]
            .into_iter()
            .flat_map(|row| (0..8).map(move |col| (row, col, greys[(row + col) % 3])))
            .collect();
        let measures =
            figures_on_a_plain_grid(brown, &[lights.as_slice(), blacks.as_slice()].concat());
        assert_eq!(measures.side_measure(), Some(SideMeasure::Lightness));
        assert_light_and_dark(&measures.observation().occupancy(), &lights, &blacks);
    }

    #[test]
    fn light_figures_where_the_light_falls_off_are_still_the_light_side() {
        // Makruk 310685: the light falls off across the board, and White's figures where
        // it is dim measured darker than Black's where it is bright; each figure is lit
        // as the squares about it.
        let (grey_white, grey_black) = ([165.0; 3], [70.0; 3]);
        let blacks: Vec<_> = (0..16).map(|i| (i / 8, i % 8, grey_black)).collect();
        let whites: Vec<_> = (48..64).map(|i| (i / 8, i % 8, grey_white)).collect();
        let mut image = rectified_with(
            [[110.0, 150.0, 190.0]; 2],
            &[blacks.as_slice(), whites.as_slice()].concat(),
        );
        let width = image.cols() as f64;
        for y in 0..image.rows() {
            for x in 0..image.cols() {
                let light = 1.0 - 0.65 * x as f64 / width;
                let pixel = image.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap();
                for channel in 0..3 {
                    pixel[channel] = (f64::from(pixel[channel]) * light).round() as u8;
                }
            }
        }
        let measures = measured_on_a_plain_grid(&image);
        assert_light_and_dark(&measures.observation().occupancy(), &whites, &blacks);
    }

    /// Figures (`discs`, as [`rectified_with`] draws them) on a plain grid whose squares
    /// are all `square`, measured upright.
    fn figures_on_a_plain_grid(
        square: [f64; 3],
        discs: &[(usize, usize, [f64; 3])],
    ) -> SquareMeasures {
        measured_on_a_plain_grid(&rectified_with([square, square], discs))
    }

    /// The figures on a [`rectified_with`] picture of a plain grid, measured upright.
    fn measured_on_a_plain_grid(image: &Mat) -> SquareMeasures {
        let plain = EightBoard {
            surface: Surface::Grid,
            first_square_dark: None,
            ..board()
        };
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        SquareMeasures::of(image, &plain, Pieces::Figures, &shifts).unwrap()
    }

    /// Draws a man of its square's own colour on (`row`, `col`) of a [`rectified`] board:
    /// only its rim, a little lighter, and its shading, a little darker, show it.
    fn rimmed_man(image: &mut Mat, row: usize, col: usize, square: [f64; 3]) {
        let centre = Point::new(
            (col as i32 + 1) * CELL + CELL / 2,
            (row as i32 + 1) * CELL + CELL / 2,
        );
        let shade = |by: f64| Scalar::new(square[0] + by, square[1] + by, square[2] + by, 0.0);
        imgproc::circle(
            image,
            centre,
            CELL / 3,
            shade(-12.0),
            2,
            imgproc::LINE_AA,
            0,
        )
        .unwrap();
        imgproc::circle(
            image,
            centre,
            CELL / 3 - 2,
            shade(14.0),
            1,
            imgproc::LINE_AA,
            0,
        )
        .unwrap();
    }

    #[test]
    fn a_man_of_his_squares_colour_is_seen_by_his_rim() {
        let dark_square = [40.0, 70.0, 110.0];
        let black = [20.0, 20.0, 25.0];
        let white = [225.0, 230.0, 235.0];
        let mut image = rectified(&[
            (0, 0, white),
            (0, 2, white),
            (0, 4, white),
            (7, 1, black),
            (7, 3, black),
        ]);
        for col in [5, 7] {
            rimmed_man(&mut image, 7, col, dark_square);
        }
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let measures = SquareMeasures::of(&image, &board(), Pieces::Discs, &shifts).unwrap();
        // The colour where the man's body is sampled is the square's.
        let body = 7 * SQUARES + 5;
        assert!(distance(measures.bodies[body], measures.local[body]) < 1.0);
        let read = measures.observation().occupancy();
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let want = match (row, col) {
                    (0, 0 | 2 | 4) => Some(Color::White),
                    (7, 1 | 3 | 5 | 7) => Some(Color::Black),
                    _ => None,
                };
                assert_eq!(read.get(row, col), want, "square ({row}, {col})");
            }
        }
    }

    #[test]
    fn grain_and_noise_on_bare_squares_are_no_piece() {
        use rand::{Rng, SeedableRng};
        let mut image = rectified(&[(0, 0, [225.0, 230.0, 235.0]), (7, 1, [20.0, 20.0, 25.0])]);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let (rows, cols) = (image.rows(), image.cols());
        for y in 0..rows {
            // Grain along the rows, its strength varying square to square (a knot's
            // twice the rest), over a camera's noise.
            let grain = if y % 3 == 0 { 1.0 } else { 0.0 };
            for x in 0..cols {
                let knot = if (4 * CELL..5 * CELL).contains(&x) {
                    2.0
                } else {
                    1.0
                };
                let pixel = image.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap();
                for channel in 0..3 {
                    let value = f64::from(pixel[channel]) - 10.0 * knot * grain
                        + rng.random_range(-3.0..=3.0);
                    pixel[channel] = value.clamp(0.0, 255.0) as u8;
                }
            }
        }
        assert_reads_only(&image, &[(0, 0, Color::White), (7, 1, Color::Black)]);
    }

    #[test]
    fn a_straight_edge_across_bare_squares_is_no_piece() {
        // A crack (or a shadow's edge) along the diagonal, off the squares' middles where
        // the colour is sampled and clear of their corners, yet through the discs whose
        // edges are the shape evidence: it crosses three of their quarters, not four.
        let mut image = rectified(&[(0, 1, [225.0, 230.0, 235.0]), (7, 0, [20.0, 20.0, 25.0])]);
        let side = image.cols();
        imgproc::line(
            &mut image,
            Point::new(0, 11),
            Point::new(side - 11, side),
            Scalar::new(25.0, 55.0, 95.0, 0.0),
            2,
            imgproc::LINE_AA,
            0,
        )
        .unwrap();
        assert_reads_only(&image, &[(0, 1, Color::White), (7, 0, Color::Black)]);
    }

    /// Reads a [`rectified`] board of discs and checks it holds exactly `pieces` (row,
    /// col, side).
    fn assert_reads_only(image: &Mat, pieces: &[(usize, usize, Color)]) {
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let read = SquareMeasures::of(image, &board(), Pieces::Discs, &shifts)
            .unwrap()
            .observation()
            .occupancy();
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let want = pieces
                    .iter()
                    .find(|&&(r, c, _)| (r, c) == (row, col))
                    .map(|&(_, _, side)| side);
                assert_eq!(read.get(row, col), want, "square ({row}, {col})");
            }
        }
    }

    /// A rectified checkered board painted in Lab, under a lamp whose pool more than
    /// doubles the lightness in the board's middle, with a man on the squares given as
    /// (row, col, Lab).
    fn under_a_lamp(men: &[(usize, usize, [f64; 3])]) -> Mat {
        let side = ((LINES + 1) * CELL as usize) as i32;
        let mut lab = Vec::with_capacity((side * side * 3) as usize);
        let cell = f64::from(CELL);
        for y in 0..side {
            for x in 0..side {
                let (col, row) = (f64::from(x) / cell - 1.0, f64::from(y) / cell - 1.0);
                let pool = 1.0
                    + 0.6
                        * (-((col - 4.0).powi(2) + (row - 4.0).powi(2)) / (2.0 * 1.5f64.powi(2)))
                            .exp();
                let on = |r: usize, c: usize| {
                    let (dx, dy) = (col - c as f64 - 0.5, row - r as f64 - 0.5);
                    dx.hypot(dy) < 0.4
                };
                let square = (row.floor() as i64, col.floor() as i64);
                let colour = if !(0..8).contains(&square.0) || !(0..8).contains(&square.1) {
                    [60.0, 128.0, 128.0]
                } else if let Some(&(_, _, man)) = men.iter().find(|&&(r, c, _)| on(r, c)) {
                    man
                } else if (square.0 + square.1) % 2 == 1 {
                    [46.0, 141.0, 145.0]
                } else {
                    [140.0, 133.0, 164.0]
                };
                lab.extend([(colour[0] * pool).min(255.0), colour[1], colour[2]].map(|v| v as u8));
            }
        }
        let lab = Mat::new_rows_cols_with_data(side, side * 3, &lab)
            .unwrap()
            .reshape(3, side)
            .unwrap()
            .try_clone()
            .unwrap();
        let mut bgr = Mat::default();
        imgproc::cvt_color_def(&lab, &mut bgr, imgproc::COLOR_Lab2BGR).unwrap();
        bgr
    }

    #[test]
    fn a_mans_shadow_on_a_clean_light_square_is_no_piece() {
        // Mak-hos seed 300390, seen from above: a light square beside two men, its body
        // 7 units darker than its corners, hue unchanged; its class scatters under a unit.
        let scatter = [0.88, 1.01, 0.7];
        let corners = [167.0, 133.0, 159.0];
        let shadowed = [160.0, 132.0, 159.0];
        let shade = Pieces::Discs.shade_per_scatter();
        assert!(scaled_distance(shadowed, corners, scatter) > OCCUPIED_MIDPOINT);
        assert!(shaded_distance(shadowed, corners, scatter, shade) < OCCUPIED_MIDPOINT / 2.0);
        // As much lighter is no shadow; a dark man on his dark square is still far off.
        let lit = [174.0, 133.0, 159.0];
        assert!(shaded_distance(lit, corners, scatter, shade) > OCCUPIED_MIDPOINT);
        let dark_square = [42.0, 139.0, 141.0];
        let dark_man = [47.0, 129.0, 128.0];
        assert!(shaded_distance(dark_man, dark_square, [0.7; 3], shade) > 2.0 * OCCUPIED_MIDPOINT);
    }

    #[test]
    fn dark_men_on_dark_squares_are_seen_under_a_lamps_pool() {
        // The dark men differ from the dark squares mostly in hue (Mak-hos seed 300218:
        // brown men on brown squares, a lamp above the board's middle).
        let dark_man = [54.0, 134.0, 145.0];
        let light_man = [190.0, 134.0, 167.0];
        let men: Vec<(usize, usize, [f64; 3])> = (0..8)
            .flat_map(|col| {
                [
                    ((col + 1) % 2, col, light_man),
                    (6 + (col + 1) % 2, col, dark_man),
                ]
            })
            .collect();
        let image = under_a_lamp(&men);
        let shifts = vec![[0.0, 0.0]; SQUARES * SQUARES];
        let board = EightBoard {
            first_square_dark: Some(false),
            ..board()
        };
        let read = SquareMeasures::of(&image, &board, Pieces::Discs, &shifts)
            .unwrap()
            .observation()
            .occupancy();
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let want =
                    men.iter()
                        .find(|&&(r, c, _)| (r, c) == (row, col))
                        .map(|&(_, _, man)| {
                            if man == dark_man {
                                Color::Black
                            } else {
                                Color::White
                            }
                        });
                assert_eq!(read.get(row, col), want, "square ({row}, {col})");
            }
        }
    }

    #[test]
    fn the_lighting_surface_follows_a_lamps_pool() {
        // A pool brightest off the board's middle, as a quadratic: fitted exactly, so
        // bare squares scatter about it by nothing.
        let lightness = |col: f64, row: f64| {
            120.0 - 3.0 * (col - 2.0).powi(2) - 2.0 * (row - 5.0).powi(2) + col * row
        };
        let members: Vec<(f64, f64, [f64; 3])> = (0..SQUARES * SQUARES)
            .map(|i| {
                let (col, row) = ((i % SQUARES) as f64, (i / SQUARES) as f64);
                (col, row, [lightness(col, row), 130.0, 140.0])
            })
            .collect();
        let (surface, scatter) = Falloff::fit_trimmed(&members);
        assert!(scatter.iter().all(|&s| s < 1e-6), "{scatter:?}");
        assert!((surface.at(3.5, 3.5)[0] - lightness(3.5, 3.5)).abs() < 1e-6);
        // Too few squares to fix a quadratic: flat at their mean.
        let flat = Falloff::fit(&members, &[0, 1]);
        assert!(
            (flat.at(7.0, 7.0)[0] - (lightness(0.0, 0.0) + lightness(1.0, 0.0)) / 2.0).abs() < 1e-6
        );
    }

    /// A plain grid with lines an eighth of a square thick, rectified, with a dark
    /// figure's base on (7, 0) and a light one's on (0, 7).
    fn thick_lined_grid() -> Mat {
        let side = (LINES as i32 + 1) * CELL;
        let mut image =
            Mat::new_rows_cols_with_default(side, side, CV_8UC3, Scalar::all(90.0)).unwrap();
        let board = Rect::new(CELL, CELL, SQUARES as i32 * CELL, SQUARES as i32 * CELL);
        let paper = Scalar::new(150.0, 165.0, 160.0, 0.0);
        imgproc::rectangle(&mut image, board, paper, -1, imgproc::LINE_8, 0).unwrap();
        for line in 0..LINES as i32 {
            let at = (line + 1) * CELL;
            let (start, end) = (CELL, (LINES as i32) * CELL);
            for (a, b) in [
                (Point::new(at, start), Point::new(at, end)),
                (Point::new(start, at), Point::new(end, at)),
            ] {
                imgproc::line(
                    &mut image,
                    a,
                    b,
                    Scalar::all(20.0),
                    CELL / 8,
                    imgproc::LINE_8,
                    0,
                )
                .unwrap();
            }
        }
        for (row, col, shade) in [(7, 0, 30.0), (0, 7, 235.0)] {
            let centre = Point::new(
                (col + 1) * CELL + CELL / 2,
                (row + 1) * CELL + CELL / 2 - CELL / 5,
            );
            imgproc::circle(
                &mut image,
                centre,
                CELL / 3,
                Scalar::all(shade),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        image
    }

    #[test]
    fn a_thick_far_line_in_every_body_seen_obliquely_is_no_piece() {
        // Seed 310393's board: a camera low over the near edge.
        let geometry = BoardGeometry::from_corners(
            LINES,
            [
                [186.7, 156.8],
                [432.5, 155.3],
                [498.9, 372.8],
                [119.2, 375.7],
            ],
        )
        .unwrap();
        let shifts = body_shifts(&geometry, 640.0, 480.0, Pieces::Figures.body_height());
        // Bodies looked for far enough up their squares that the disc reaches the far
        // line.
        assert!(
            shifts
                .iter()
                .all(|s| s[1] < 0.0 && s[0].hypot(s[1]) + BODY_RADIUS > 0.5),
            "{:?}",
            shifts[0]
        );
        let board = EightBoard {
            geometry: BoardGeometry::from_corners(
                LINES,
                [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [0.0, 8.0]],
            )
            .unwrap(),
            surface: Surface::Grid,
            first_square_dark: None,
        };
        let read = SquareMeasures::of(&thick_lined_grid(), &board, Pieces::Figures, &shifts)
            .unwrap()
            .observation()
            .occupancy();
        for row in 0..SQUARES {
            for col in 0..SQUARES {
                let expected = match (row, col) {
                    (7, 0) => Some(Color::Black),
                    (0, 7) => Some(Color::White),
                    _ => None,
                };
                assert_eq!(read.get(row, col), expected, "square ({row}, {col})");
            }
        }
    }
}
