//! What a clip looks like, drawn once from its seed: the board and its surface, the table
//! and what stands on it, the pieces' material, the light and the camera. Nothing here
//! changes during a clip except through the events of [`super::timeline`].

use super::camera::{Camera, Lens, Pose, Vec3, add, unit};
use super::solids::{Light, Material, Part, Profile, Solid};
use crate::games::Color;
use crate::reading::synth::{Rng, hsv};
use opencv::core::{self, Mat, Point, Scalar};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

/// The playing surface: Go's N×N lines, or an 8×8 board of squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// N×N lines; pieces stand on the crossings.
    Lines(usize),
    /// 8×8 squares alternately dark and light (Mak-hos; Makruk on a chess board).
    Checkered,
    /// 8×8 squares drawn as a plain grid of lines (the usual Makruk board).
    Grid,
}

impl Layout {
    /// Cells per side: points for Go, squares for 8×8 boards.
    pub fn cells(self) -> usize {
        match self {
            Layout::Lines(n) => n,
            Layout::Checkered | Layout::Grid => 8,
        }
    }
}

/// A board's shape and surface. Board-local coordinates are millimetres from the board's
/// centre, x to the right and y away from the player at the bottom (row 0 is at +y).
#[derive(Clone, Debug)]
pub struct BoardLook {
    pub layout: Layout,
    /// Distance between neighbouring points (Go) or square side (8×8), along x and y.
    pub spacing: [f64; 2],
    /// Outer size of the board, x and y.
    pub outer: [f64; 2],
    pub thickness: f64,
    surface: [f32; 3],
    side: [f32; 3],
    grain: f32,
    grain_freq: [f32; 3],
    grain_phase: [f32; 3],
    grain_along_x: bool,
    ink: [f32; 3],
    /// How much of the ink shows: printed and worn lines are often faint (1 = solid).
    ink_strength: f32,
    line_width: f64,
    dark_square: [f32; 3],
    /// Which squares are dark: those with (row + col) of this parity.
    dark_parity: usize,
}

impl BoardLook {
    pub fn cells(&self) -> usize {
        self.layout.cells()
    }

    /// Board-local position of cell (col, row); fractional cells allowed (a stone slid
    /// half a point).
    pub fn cell_centre(&self, col: f64, row: f64) -> [f64; 2] {
        let n = self.cells() as f64;
        let middle = match self.layout {
            Layout::Lines(_) => (n - 1.0) / 2.0,
            _ => (n - 1.0) / 2.0,
        };
        [
            (col - middle) * self.spacing[0],
            (middle - row) * self.spacing[1],
        ]
    }

    /// The cell (col, row), fractional, at a board-local position.
    pub fn cell_at(&self, p: [f64; 2]) -> [f64; 2] {
        let middle = (self.cells() as f64 - 1.0) / 2.0;
        [
            p[0] / self.spacing[0] + middle,
            middle - p[1] / self.spacing[1],
        ]
    }

    /// The four corners of the playing area, board-local, in the order top-left,
    /// top-right, bottom-right, bottom-left of the board's own rows and columns: Go's
    /// corner points, or the outer corners of the 8×8 squares.
    pub fn playing_corners(&self) -> [[f64; 2]; 4] {
        let n = self.cells() as f64;
        let (lo, hi) = match self.layout {
            Layout::Lines(_) => (0.0, n - 1.0),
            _ => (-0.5, n - 0.5),
        };
        [
            self.cell_centre(lo, lo),
            self.cell_centre(hi, lo),
            self.cell_centre(hi, hi),
            self.cell_centre(lo, hi),
        ]
    }

    pub fn side_color(&self) -> [f32; 3] {
        self.side
    }

    /// The top face as a picture at `scale` pixels per millimetre (8-bit BGR), row 0 at
    /// the far (+y) edge.
    pub fn texture(&self, scale: f64, seed: u64) -> opencv::Result<Mat> {
        let w = (self.outer[0] * scale).round().max(8.0) as i32;
        let h = (self.outer[1] * scale).round().max(8.0) as i32;
        let mut rng = Rng::new(seed);
        let stains: Vec<([f32; 2], f32, f32)> = (0..rng.below(5))
            .map(|_| {
                (
                    [rng.range(0.0, w as f32), rng.range(0.0, h as f32)],
                    rng.range(20.0, 80.0) * scale as f32,
                    rng.range(-0.07, 0.07),
                )
            })
            .collect();
        let mut image = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::all(0.0))?;
        let s = scale as f32;
        for y in 0..h {
            let row = image.at_row_mut::<core::Vec3b>(y)?;
            for (x, px) in row.iter_mut().enumerate() {
                let (u, v) = if self.grain_along_x {
                    (y as f32 / s, x as f32 / s)
                } else {
                    (x as f32 / s, y as f32 / s)
                };
                let warp = u + 3.0 * (v * 0.01 + self.grain_phase[0]).sin();
                let g = 0.5 * (warp * self.grain_freq[0] + self.grain_phase[1]).sin()
                    + 0.35 * (warp * self.grain_freq[1] + self.grain_phase[2]).sin()
                    + 0.15 * (warp * self.grain_freq[2]).sin();
                let mut gain = 1.0 + self.grain * g;
                for &(c, r, a) in &stains {
                    let d2 = (x as f32 - c[0]).powi(2) + (y as f32 - c[1]).powi(2);
                    gain += a * (-d2 / (2.0 * r * r)).exp();
                }
                for ch in 0..3 {
                    px[ch] = (self.surface[ch] * gain).clamp(0.0, 255.0) as u8;
                }
            }
        }
        let to_px = |p: [f64; 2]| -> Point {
            // Fixed point with 4 fractional bits: lines land at sub-pixel positions.
            Point::new(
                ((p[0] + self.outer[0] / 2.0) * scale * 16.0).round() as i32,
                ((self.outer[1] / 2.0 - p[1]) * scale * 16.0).round() as i32,
            )
        };
        let shown = |ch: usize| {
            f64::from(self.surface[ch] + (self.ink[ch] - self.surface[ch]) * self.ink_strength)
        };
        let ink = Scalar::new(shown(0), shown(1), shown(2), 0.0);
        let thickness = (self.line_width * scale).round().max(1.0) as i32;
        let n = self.cells();
        match self.layout {
            Layout::Lines(_) => {
                let last = (n - 1) as f64;
                for i in 0..n {
                    let k = i as f64;
                    let edge = i == 0 || i == n - 1;
                    let t = if edge {
                        (thickness as f64 * 1.6).round() as i32
                    } else {
                        thickness
                    };
                    for (a, b) in [
                        (self.cell_centre(k, 0.0), self.cell_centre(k, last)),
                        (self.cell_centre(0.0, k), self.cell_centre(last, k)),
                    ] {
                        imgproc::line(&mut image, to_px(a), to_px(b), ink, t, imgproc::LINE_AA, 4)?;
                    }
                }
                let stars: &[usize] = match n {
                    19 => &[3, 9, 15],
                    13 => &[3, 6, 9],
                    9 => &[2, 4, 6],
                    _ => &[],
                };
                for &r in stars {
                    for &c in stars {
                        if n == 9 && (r == 4) != (c == 4) {
                            continue;
                        }
                        let p = to_px(self.cell_centre(c as f64, r as f64));
                        let radius = (self.spacing[0] * 0.09 * scale * 16.0).round() as i32;
                        imgproc::circle(&mut image, p, radius, ink, -1, imgproc::LINE_AA, 4)?;
                    }
                }
            }
            Layout::Checkered | Layout::Grid => {
                if self.layout == Layout::Checkered {
                    let dark = Scalar::new(
                        f64::from(self.dark_square[0]),
                        f64::from(self.dark_square[1]),
                        f64::from(self.dark_square[2]),
                        0.0,
                    );
                    for row in 0..n {
                        for col in 0..n {
                            if (row + col) % 2 != self.dark_parity {
                                continue;
                            }
                            let (c, r) = (col as f64, row as f64);
                            let quad: core::Vector<Point> = [
                                self.cell_centre(c - 0.5, r - 0.5),
                                self.cell_centre(c + 0.5, r - 0.5),
                                self.cell_centre(c + 0.5, r + 0.5),
                                self.cell_centre(c - 0.5, r + 0.5),
                            ]
                            .into_iter()
                            .map(to_px)
                            .collect();
                            imgproc::fill_convex_poly(
                                &mut image,
                                &quad,
                                dark,
                                imgproc::LINE_AA,
                                4,
                            )?;
                        }
                    }
                }
                let lines = if self.layout == Layout::Grid {
                    n + 1
                } else {
                    2
                };
                for i in 0..lines {
                    let k = if self.layout == Layout::Grid {
                        i as f64 - 0.5
                    } else if i == 0 {
                        -0.5
                    } else {
                        n as f64 - 0.5
                    };
                    let (lo, hi) = (-0.5, n as f64 - 0.5);
                    for (a, b) in [
                        (self.cell_centre(k, lo), self.cell_centre(k, hi)),
                        (self.cell_centre(lo, k), self.cell_centre(hi, k)),
                    ] {
                        imgproc::line(
                            &mut image,
                            to_px(a),
                            to_px(b),
                            ink,
                            thickness,
                            imgproc::LINE_AA,
                            4,
                        )?;
                    }
                }
            }
        }
        Ok(image)
    }
}

/// What a piece is, as far as its look goes. The renderer draws these and nothing of the
/// rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Stone,
    Man,
    King,
    Khun,
    Met,
    Khon,
    Ma,
    Ruea,
    Bia,
    /// A Bia promoted to Met, turned over as Thai players mark it.
    BiaTurned,
}

/// The two sides' sets.
#[derive(Clone, Debug)]
pub struct PieceSet {
    pub black: Material,
    pub white: Material,
    /// Size of the set relative to the board's spacing.
    pub scale: f64,
    stone_roundness: f64,
    stone_height: f64,
}

impl PieceSet {
    pub fn solid(&self, shape: Shape, color: Color, spacing: f64) -> Solid {
        let m = match color {
            Color::Black => self.black.clone(),
            Color::White => self.white.clone(),
        };
        let u = spacing * self.scale;
        let part = |offset: Vec3, profile: Profile, material: &Material| Part {
            offset,
            profile,
            material: material.clone(),
        };
        match shape {
            Shape::Stone => Solid::single(
                Profile::lens(0.48 * u, self.stone_height * u, self.stone_roundness),
                m,
            ),
            Shape::Man => Solid::single(Profile::disc(0.38 * u, 0.13 * u), m),
            Shape::King => Solid {
                parts: vec![
                    part([0.0; 3], Profile::disc(0.38 * u, 0.13 * u), &m),
                    part(
                        [0.02 * u, -0.015 * u, 0.13 * u],
                        Profile::disc(0.38 * u, 0.13 * u),
                        &m,
                    ),
                ],
            },
            Shape::Khun => Solid {
                parts: vec![
                    part([0.0; 3], revolution(0.85 * u, &KHUN, 0.34 * u), &m),
                    part([0.0, 0.0, 0.83 * u], Profile::sphere(0.07 * u), &m),
                ],
            },
            Shape::Met => Solid::single(revolution(0.62 * u, &MET, 0.3 * u), m),
            Shape::Khon => Solid::single(revolution(0.72 * u, &KHON, 0.32 * u), m),
            Shape::Ma => Solid {
                parts: vec![
                    part([0.0; 3], revolution(0.55 * u, &MA_BODY, 0.32 * u), &m),
                    // The head sticks out toward the opponent.
                    part(
                        [
                            0.0,
                            if color == Color::White { 0.12 } else { -0.12 } * u,
                            0.42 * u,
                        ],
                        Profile::sphere(0.16 * u),
                        &m,
                    ),
                ],
            },
            Shape::Ruea => Solid::single(revolution(0.5 * u, &RUEA, 0.33 * u), m),
            Shape::Bia => Solid::single(revolution(0.32 * u, &BIA, 0.28 * u), m),
            Shape::BiaTurned => Solid::single(revolution(0.32 * u, &BIA, 0.28 * u).flipped(), m),
        }
    }
}

/// Makruk silhouettes as radius profiles (fraction of the base radius, bottom to top):
/// distinct heights and outlines, as Thai sets have.
const KHUN: [f64; 9] = [1.0, 0.9, 0.55, 0.5, 0.55, 0.7, 0.55, 0.35, 0.15];
const MET: [f64; 7] = [1.0, 0.85, 0.55, 0.6, 0.5, 0.3, 0.05];
const KHON: [f64; 8] = [1.0, 0.85, 0.5, 0.45, 0.7, 0.75, 0.5, 0.1];
const MA_BODY: [f64; 6] = [1.0, 0.85, 0.55, 0.5, 0.55, 0.4];
const RUEA: [f64; 6] = [1.0, 0.9, 0.75, 0.75, 0.85, 0.8];
const BIA: [f64; 5] = [1.0, 0.95, 0.8, 0.55, 0.05];

fn revolution(height: f64, shape: &[f64], radius: f64) -> Profile {
    let last = (shape.len() - 1) as f64;
    Profile::from_fn(height, 48, |t| {
        let x = t * last;
        let i = (x.floor() as usize).min(shape.len() - 2);
        let f = x - i as f64;
        // Smooth between the control radii so the outline has no kinks.
        let f = f * f * (3.0 - 2.0 * f);
        radius * (shape[i] * (1.0 - f) + shape[i + 1] * f)
    })
}

/// Something standing on the table beside the board.
#[derive(Clone, Debug)]
pub enum Clutter {
    /// A bowl, lid or cup: a solid standing on the table at (x, y).
    Solid { at: [f64; 2], solid: Solid },
    /// A box (a game clock): centre, size (x, y, z), turn about z, colour.
    Block {
        at: [f64; 2],
        size: Vec3,
        turn: f64,
        color: [f32; 3],
    },
    /// A neighbouring board, flat on the table: centre and size.
    Board {
        at: [f64; 2],
        size: [f64; 2],
        color: [f32; 3],
        ink: [f32; 3],
    },
}

/// The table and the room beyond it.
#[derive(Clone, Debug)]
pub struct TableLook {
    pub size: [f64; 2],
    pub color: [f32; 3],
    pub texture: f32,
    pub room: [f32; 3],
    pub clutter: Vec<Clutter>,
}

/// Where the board lies on the table: a turn about z and a shift (mm); a bumped board
/// gets a new placement.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Placement {
    pub shift: [f64; 2],
    pub turn: f64,
}

impl Placement {
    pub fn to_world(&self, p: [f64; 2], z: f64) -> Vec3 {
        let (s, c) = self.turn.sin_cos();
        [
            self.shift[0] + c * p[0] - s * p[1],
            self.shift[1] + s * p[0] + c * p[1],
            z,
        ]
    }

    pub fn axis_x(&self) -> Vec3 {
        let (s, c) = self.turn.sin_cos();
        [c, s, 0.0]
    }

    pub fn axis_y(&self) -> Vec3 {
        let (s, c) = self.turn.sin_cos();
        [-s, c, 0.0]
    }
}

/// Lighting beyond the main light: slow unevenness across the picture, glare on the
/// board, exposure drift and sensor noise.
#[derive(Clone, Debug)]
pub struct Atmosphere {
    /// Brightness gradient across the picture (x, y) and vignetting.
    pub gradient: [f32; 2],
    pub vignette: f32,
    /// Reflections of the lamp on a glossy board: centre (board-local mm), radius, strength.
    pub glare: Vec<([f64; 2], f64, f32)>,
    pub exposure_drift: f32,
    pub noise: f32,
    /// The shadow of a player's head drifting over the board: strength (0 = none).
    pub head_shadow: f32,
    /// Webcam MJPEG quality, when the camera compresses each frame before the encoder.
    pub jpeg_quality: Option<i32>,
    /// Defocus (Gaussian sigma in pixels of a 1280-wide picture), 0 for a sharp camera.
    pub defocus: f32,
    /// Skin and sleeve colours of the two players (bottom player first).
    pub skin: [[f32; 3]; 2],
    pub sleeve: [[f32; 3]; 2],
}

/// How much the seed may vary the scene (`--style`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// Everything drawn from the seed: any angle up to 50°, any light, bumps now and then.
    Varied,
    /// Near top-down, even white light, no clutter, noise or bumps: footage to debug with.
    Clean,
    /// Oblique (35–50°), dim or coloured light, strong noise, a bump always.
    Hard,
}

/// The whole scene of a clip.
#[derive(Clone, Debug)]
pub struct Scene {
    pub board: BoardLook,
    pub placement: Placement,
    pub pieces: PieceSet,
    pub table: TableLook,
    pub light: Light,
    pub atmosphere: Atmosphere,
    pub camera: Camera,
    pub fps: f64,
    /// How often something moves the camera or board for good (per clip).
    pub bump_chance: f64,
    pub style: Style,
}

/// Choices the caller fixes instead of the seed.
#[derive(Clone, Debug, Default)]
pub struct SceneRequest {
    pub resolution: Option<(u32, u32)>,
    pub fps: Option<f64>,
    /// Camera angle from vertical, degrees.
    pub tilt: Option<f64>,
}

pub fn draw_scene(layout: Layout, seed: u64, style: Style, request: &SceneRequest) -> Scene {
    let mut rng = Rng::new(seed ^ 0x0005_ce4e_0000_0001);
    let varied = style != Style::Clean;
    let mut board = board_look(layout, &mut rng, varied);
    let pieces = piece_set(layout, &mut rng, &board, varied);
    // Light pieces reflect more than any board (white stones about 0.9 of the light,
    // wood and plastic boards 0.5–0.75): only a camera's clipping makes them look alike.
    let luma = |c: [f64; 3]| 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2];
    let light_piece = luma(pieces.white.color);
    let cap = light_piece * f64::from(rng.range(0.65, 0.88));
    // (The light squares of a checkered board are its surface.)
    let y = luma(board.surface.map(f64::from));
    if y > cap {
        board.surface = board.surface.map(|v| (f64::from(v) * cap / y) as f32);
    }
    let table = table_look(&mut rng, &board, &pieces, style);
    let light = light(&mut rng, style);
    let atmosphere = atmosphere(&mut rng, style, &light);
    let placement = Placement {
        shift: [rng.range(-40.0, 40.0) as f64, rng.range(-30.0, 30.0) as f64],
        turn: f64::from(rng.range(-0.08, 0.08)),
    };
    let camera = camera(&mut rng, style, request, &board, &placement);
    // Drawn last, from their own generator, so that adding them left every other choice
    // of a seed (and so every truth file) as it was.
    let mut late = Rng::new(seed ^ 0x1a7e_0000_0002);
    if style != Style::Clean {
        // The real photos have faint, worn or thin lines as often as crisp black ones.
        board.ink_strength = if late.chance(0.5) {
            late.range(0.35, 0.8)
        } else {
            1.0
        };
    }
    let mut atmosphere = atmosphere;
    atmosphere.defocus = if style != Style::Clean && late.chance(0.4) {
        late.range(0.5, 1.6)
    } else {
        0.0
    };
    let fps = request.fps.unwrap_or(15.0);
    Scene {
        board,
        placement,
        pieces,
        table,
        light,
        atmosphere,
        camera,
        fps,
        bump_chance: match style {
            Style::Varied => 0.3,
            Style::Clean => 0.0,
            Style::Hard => 1.0,
        },
        style,
    }
}

fn bgr(p: [f32; 3]) -> [f64; 3] {
    [f64::from(p[0]), f64::from(p[1]), f64::from(p[2])]
}

fn board_look(layout: Layout, rng: &mut Rng, varied: bool) -> BoardLook {
    let kind = if varied { rng.below(10) } else { 0 };
    // Pale kaya to dark wood most often, then plastic, then a paper or cloth board.
    let (surface, grain, thickness) = match kind {
        0..=6 => (
            hsv(
                rng.range(25.0, 45.0),
                rng.range(0.3, 0.75),
                rng.range(0.5, 0.92),
            ),
            rng.range(0.02, 0.12),
            f64::from(rng.range(12.0, 60.0)),
        ),
        7 | 8 => (
            hsv(
                rng.range(0.0, 360.0),
                rng.range(0.0, 0.12),
                rng.range(0.6, 0.95),
            ),
            0.0,
            f64::from(rng.range(2.0, 15.0)),
        ),
        _ => (
            hsv(
                rng.range(30.0, 60.0),
                rng.range(0.05, 0.35),
                rng.range(0.7, 0.97),
            ),
            rng.range(0.0, 0.03),
            1.0,
        ),
    };
    let side = hsv(
        rng.range(20.0, 40.0),
        rng.range(0.3, 0.7),
        rng.range(0.25, 0.6),
    );
    let ink = hsv(
        rng.range(0.0, 40.0),
        rng.range(0.0, 0.5),
        rng.range(0.02, 0.25),
    );
    let (spacing, margin) = match layout {
        Layout::Lines(n) => {
            let sx = if n == 19 {
                f64::from(rng.range(21.5, 22.5))
            } else {
                f64::from(rng.range(21.5, 26.0))
            };
            (
                [sx, sx * f64::from(rng.range(1.0, 1.08))],
                f64::from(rng.range(0.6, 1.3)) * sx,
            )
        }
        _ => {
            let s = f64::from(rng.range(36.0, 55.0));
            ([s, s], f64::from(rng.range(0.25, 0.8)) * s)
        }
    };
    let span = |k: f64, s: f64| match layout {
        Layout::Lines(n) => (n as f64 - 1.0) * s + 2.0 * k,
        _ => 8.0 * s + 2.0 * k,
    };
    let dark_square = if rng.chance(0.5) {
        hsv(
            rng.range(15.0, 35.0),
            rng.range(0.4, 0.8),
            rng.range(0.15, 0.45),
        )
    } else {
        hsv(
            rng.range(0.0, 360.0),
            rng.range(0.2, 0.7),
            rng.range(0.1, 0.4),
        )
    };
    BoardLook {
        layout,
        spacing,
        outer: [span(margin, spacing[0]), span(margin, spacing[1])],
        thickness,
        surface,
        side,
        grain,
        grain_freq: [
            rng.range(0.02, 0.08),
            rng.range(0.1, 0.3),
            rng.range(0.4, 1.0),
        ],
        grain_phase: [
            rng.range(0.0, 6.3),
            rng.range(0.0, 6.3),
            rng.range(0.0, 6.3),
        ],
        grain_along_x: rng.chance(0.5),
        ink,
        ink_strength: 1.0,
        line_width: f64::from(rng.range(0.7, 1.6)),
        dark_square,
        // The square at each player's bottom left is dark, as on a chess board.
        dark_parity: 1,
    }
}

fn piece_set(layout: Layout, rng: &mut Rng, board: &BoardLook, varied: bool) -> PieceSet {
    let spacing = board.spacing[0];
    let _ = spacing;
    let black_level = rng.range(12.0, 45.0) as f64;
    let white_level = rng.range(200.0, 245.0) as f64;
    let tint = rng.range(-0.05, 0.05) as f64;
    let (black, white) = match layout {
        Layout::Lines(_) => {
            let material = if varied { rng.below(4) } else { 0 };
            // slate / shell, glass, plastic, Yunzi
            let (bs, ws, shine, stripes) = match material {
                0 => (0.06, 0.18, 12.0, f64::from(rng.range(2.0, 7.0))),
                1 => (0.6, 0.6, 60.0, 0.0),
                2 => (0.3, 0.35, 30.0, 0.0),
                _ => (0.15, 0.1, 10.0, 0.0),
            };
            (
                Material {
                    color: [black_level * (1.0 + tint), black_level, black_level],
                    specular: bs,
                    shininess: shine,
                    stripes: 0.0,
                    stripe_freq: 0.0,
                },
                Material {
                    color: [
                        white_level * (1.0 + tint),
                        white_level,
                        white_level * (1.0 - tint),
                    ],
                    specular: ws,
                    shininess: shine,
                    stripes,
                    stripe_freq: f64::from(rng.range(0.6, 1.4)),
                },
            )
        }
        _ => {
            // Discs and Makruk sets: black and white, black and red, or dark and pale wood.
            let scheme = if varied { rng.below(3) } else { 0 };
            let (dark, light) = match scheme {
                0 => ([black_level; 3], [white_level; 3]),
                1 => (
                    [black_level; 3],
                    bgr(hsv(
                        rng.range(350.0, 370.0),
                        rng.range(0.6, 0.9),
                        rng.range(0.6, 0.85),
                    )),
                ),
                _ => (
                    bgr(hsv(
                        rng.range(15.0, 30.0),
                        rng.range(0.5, 0.8),
                        rng.range(0.15, 0.3),
                    )),
                    bgr(hsv(
                        rng.range(35.0, 50.0),
                        rng.range(0.2, 0.45),
                        rng.range(0.8, 0.95),
                    )),
                ),
            };
            let spec = f64::from(rng.range(0.05, 0.4));
            (
                Material {
                    color: dark,
                    specular: spec,
                    shininess: 20.0,
                    stripes: 0.0,
                    stripe_freq: 0.0,
                },
                Material {
                    color: light,
                    specular: spec,
                    shininess: 20.0,
                    stripes: 0.0,
                    stripe_freq: 0.0,
                },
            )
        }
    };
    PieceSet {
        black,
        white,
        scale: f64::from(rng.range(0.93, 1.0)),
        stone_roundness: f64::from(rng.range(1.6, 2.6)),
        stone_height: f64::from(rng.range(0.32, 0.45)),
    }
}

fn table_look(rng: &mut Rng, board: &BoardLook, pieces: &PieceSet, style: Style) -> TableLook {
    let color = match rng.below(4) {
        0 => hsv(
            rng.range(20.0, 40.0),
            rng.range(0.3, 0.7),
            rng.range(0.2, 0.6),
        ),
        1 => hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.1),
            rng.range(0.3, 0.95),
        ),
        2 => hsv(
            rng.range(90.0, 150.0),
            rng.range(0.3, 0.7),
            rng.range(0.2, 0.5),
        ),
        _ => hsv(
            rng.range(0.0, 360.0),
            rng.range(0.2, 0.6),
            rng.range(0.15, 0.7),
        ),
    };
    let mut clutter = Vec::new();
    if style != Style::Clean {
        let half = [board.outer[0] / 2.0, board.outer[1] / 2.0];
        let spacing = board.spacing[0];
        if matches!(board.layout, Layout::Lines(_)) {
            // Bowls at each player's right, often with the lid beside them.
            for (side, color) in [(-1.0, Color::Black), (1.0, Color::White)] {
                let bowl_radius = spacing * f64::from(rng.range(2.8, 3.8));
                let at = [
                    side * -(half[0] + bowl_radius + f64::from(rng.range(10.0, 80.0))),
                    side * (half[1] * f64::from(rng.range(0.0, 0.8))),
                ];
                let wood = Material {
                    color: bgr(hsv(
                        rng.range(20.0, 35.0),
                        rng.range(0.4, 0.8),
                        rng.range(0.3, 0.75),
                    )),
                    specular: 0.2,
                    shininess: 25.0,
                    stripes: 0.0,
                    stripe_freq: 0.0,
                };
                let _ = color;
                let bowl = Profile::from_fn(bowl_radius * 1.2, 32, |t| {
                    bowl_radius * (0.65 + 0.35 * (std::f64::consts::PI * (0.15 + 0.8 * t)).sin())
                });
                clutter.push(Clutter::Solid {
                    at,
                    solid: Solid::single(bowl, wood.clone()),
                });
                if rng.chance(0.6) {
                    let lid = Profile::disc(bowl_radius * 0.85, 0.25 * bowl_radius);
                    clutter.push(Clutter::Solid {
                        at: [at[0], at[1] - side * bowl_radius * 2.3],
                        solid: Solid::single(lid, wood),
                    });
                }
            }
        }
        if rng.chance(0.6) {
            let side = if rng.chance(0.5) { -1.0 } else { 1.0 };
            clutter.push(Clutter::Block {
                at: [
                    side * (half[0] + f64::from(rng.range(100.0, 160.0))),
                    f64::from(rng.range(-60.0, 60.0)),
                ],
                size: [90.0, 170.0, 60.0],
                turn: f64::from(rng.range(-0.3, 0.3)),
                color: hsv(
                    rng.range(0.0, 360.0),
                    rng.range(0.0, 0.6),
                    rng.range(0.1, 0.8),
                ),
            });
        }
        if rng.chance(0.5) {
            let side = if rng.chance(0.5) { -1.0 } else { 1.0 };
            clutter.push(Clutter::Board {
                at: [
                    side * (board.outer[0] + f64::from(rng.range(250.0, 400.0))),
                    0.0,
                ],
                size: board.outer,
                color: board.surface,
                ink: board.ink,
            });
        }
        let _ = pieces;
    }
    TableLook {
        size: [2600.0, 1800.0],
        color,
        texture: rng.range(0.0, 0.08),
        room: hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.3),
            rng.range(0.1, 0.5),
        ),
        clutter,
    }
}

fn light(rng: &mut Rng, style: Style) -> Light {
    let elevation = f64::from(match style {
        Style::Clean => rng.range(1.2, 1.5),
        Style::Varied => rng.range(0.5, 1.5),
        Style::Hard => rng.range(0.35, 0.8),
    });
    let azimuth = f64::from(rng.range(0.0, std::f32::consts::TAU));
    let direction = unit([
        elevation.cos() * azimuth.cos(),
        elevation.cos() * azimuth.sin(),
        elevation.sin(),
    ]);
    // White, warm (tungsten), cool (daylight), a coloured LED, or mixed: a warm lamp
    // over the board in a room lit by cool daylight.
    // Tungsten is short of blue and a little of green: white stones turn cream to
    // orange under it, never pink.
    let warm = |rng: &mut Rng| {
        let k = f64::from(rng.unit());
        [0.88 - 0.25 * k, 0.98 - 0.08 * k, 1.0 + 0.08 * k]
    };
    let cool = |rng: &mut Rng| {
        [
            f64::from(rng.range(1.05, 1.2)),
            1.0,
            f64::from(rng.range(0.85, 0.97)),
        ]
    };
    let (color, ambient_color) = if style == Style::Clean {
        ([1.0; 3], [1.0; 3])
    } else {
        match rng.below(6) {
            0 | 1 => ([1.0; 3], [1.0; 3]),
            2 => {
                let c = warm(rng);
                (c, c)
            }
            3 => {
                let c = cool(rng);
                (c, c)
            }
            4 => {
                let c = [
                    f64::from(rng.range(0.75, 1.25)),
                    f64::from(rng.range(0.8, 1.15)),
                    f64::from(rng.range(0.75, 1.25)),
                ];
                (c, c)
            }
            _ => (warm(rng), cool(rng)),
        }
    };
    let brightness = f64::from(match style {
        Style::Hard => rng.range(0.45, 0.85),
        Style::Varied => rng.range(0.7, 1.1),
        Style::Clean => 1.0,
    });
    let ambient = f64::from(rng.range(0.3, 0.55)) * brightness;
    Light {
        direction,
        color,
        ambient,
        ambient_color,
        diffuse: (1.0 - ambient / brightness) * brightness,
    }
}

fn atmosphere(rng: &mut Rng, style: Style, light: &Light) -> Atmosphere {
    let k = match style {
        Style::Clean => 0.0,
        Style::Varied => 1.0,
        Style::Hard => 1.6,
    };
    let skin = [
        hsv(
            rng.range(15.0, 30.0),
            rng.range(0.25, 0.6),
            rng.range(0.45, 0.95),
        ),
        hsv(
            rng.range(15.0, 30.0),
            rng.range(0.25, 0.6),
            rng.range(0.45, 0.95),
        ),
    ];
    let sleeve = [
        hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.8),
            rng.range(0.1, 0.9),
        ),
        hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.8),
            rng.range(0.1, 0.9),
        ),
    ];
    let glare = if style != Style::Clean && light.direction[2] > 0.6 && rng.chance(0.4) {
        vec![(
            [
                f64::from(rng.range(-120.0, 120.0)),
                f64::from(rng.range(-120.0, 120.0)),
            ],
            f64::from(rng.range(15.0, 60.0)),
            rng.range(20.0, 90.0),
        )]
    } else {
        Vec::new()
    };
    Atmosphere {
        gradient: [rng.range(-0.25, 0.25) * k, rng.range(-0.25, 0.25) * k],
        vignette: rng.range(0.0, 0.3) * k,
        glare,
        exposure_drift: rng.range(0.0, 0.08) * k,
        // Webcams denoise before they compress: what reaches the file is mild.
        noise: rng.range(0.3, 2.2) * k,
        head_shadow: if rng.chance(0.5 * k.min(1.0)) {
            rng.range(0.1, 0.35)
        } else {
            0.0
        },
        defocus: 0.0,
        jpeg_quality: (style != Style::Clean && rng.chance(0.25))
            .then(|| 60 + rng.below(35) as i32),
        skin,
        sleeve,
    }
}

fn camera(
    rng: &mut Rng,
    style: Style,
    request: &SceneRequest,
    board: &BoardLook,
    placement: &Placement,
) -> Camera {
    let (width, height) = request
        .resolution
        .unwrap_or_else(|| [(640, 480), (1280, 720), (1280, 720), (1920, 1080)][rng.below(4)]);
    let hfov = f64::from(rng.range(50.0, 72.0)).to_radians();
    let focal = f64::from(width) / 2.0 / (hfov / 2.0).tan();
    let (k1, k2) = match style {
        Style::Clean => (0.0, 0.0),
        _ => (
            f64::from(rng.range(-0.25, 0.04)),
            f64::from(rng.range(0.0, 0.08)),
        ),
    };
    let lens = Lens {
        width,
        height,
        focal,
        centre: [
            f64::from(width) / 2.0 + f64::from(rng.range(-8.0, 8.0)),
            f64::from(height) / 2.0 + f64::from(rng.range(-6.0, 6.0)),
        ],
        k1,
        k2,
    };
    let tilt = request.tilt.map(f64::to_radians).unwrap_or_else(|| {
        f64::from(match style {
            Style::Clean => rng.range(0.0, 15.0),
            Style::Varied => rng.range(0.0, 50.0),
            Style::Hard => rng.range(35.0, 50.0),
        })
        .to_radians()
    });
    // Any side of the board; most often from behind one player or beside the board.
    // Cameras are set up square to the board most of the time (behind a player or at a
    // side), at any angle now and then.
    let azimuth = if rng.chance(0.7) {
        f64::from(rng.below(4) as f32 * std::f32::consts::FRAC_PI_2 + rng.range(-0.25, 0.25))
    } else {
        f64::from(rng.range(0.0, std::f32::consts::TAU))
    };
    let fill = f64::from(match style {
        Style::Clean => rng.range(0.8, 0.95),
        _ => rng.range(0.65, 0.95),
    });
    let roll = f64::from(rng.range(-0.08, 0.08));
    let target = placement.to_world(
        [
            f64::from(rng.range(-0.05, 0.05)) * board.outer[0],
            f64::from(rng.range(-0.05, 0.05)) * board.outer[1],
        ],
        board.thickness,
    );
    let corners: Vec<Vec3> = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]
        .iter()
        .map(|&[sx, sy]| {
            placement.to_world(
                [sx * board.outer[0] / 2.0, sy * board.outer[1] / 2.0],
                board.thickness,
            )
        })
        .collect();
    let place = |distance: f64| {
        let offset = [
            distance * tilt.sin() * azimuth.cos(),
            distance * tilt.sin() * azimuth.sin(),
            distance * tilt.cos(),
        ];
        let centre = add(target, offset);
        // Up in the picture is away from the camera; straight down, toward the azimuth.
        let up = [-azimuth.cos(), -azimuth.sin(), 0.0];
        let up = super::camera::mat_vec(&super::camera::rotation([0.0, 0.0, 1.0], roll), up);
        Camera {
            lens: lens.clone(),
            pose: Pose::looking_at(centre, target, up),
        }
    };
    // Choose the distance at which the board fills `fill` of the picture: its farthest
    // corner (through the lens) reaches that share of the way from the middle to the edge.
    let mut distance = 1000.0;
    for _ in 0..8 {
        let cam = place(distance);
        let used = corners
            .iter()
            .map(|&c| {
                let p = cam.project(c);
                ((p[0] - f64::from(width) / 2.0).abs() / (f64::from(width) / 2.0))
                    .max((p[1] - f64::from(height) / 2.0).abs() / (f64::from(height) / 2.0))
            })
            .fold(0.0, f64::max);
        distance *= used / fill;
    }
    place(distance)
}

/// A solid's base point in the world for board cell (col, row).
pub fn on_board(scene: &Scene, placement: &Placement, cell: [f64; 2]) -> Vec3 {
    let local = scene.board.cell_centre(cell[0], cell[1]);
    placement.to_world(local, scene.board.thickness)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_corners_are_the_corner_points_and_squares_have_outer_corners() {
        let mut rng = Rng::new(1);
        let go = board_look(Layout::Lines(19), &mut rng, true);
        let c = go.playing_corners();
        assert!((c[1][0] - c[0][0] - 18.0 * go.spacing[0]).abs() < 1e-9);
        assert!(c[0][1] > c[3][1], "row 0 is the far edge");
        let checkered = board_look(Layout::Checkered, &mut rng, true);
        let c = checkered.playing_corners();
        assert!((c[1][0] - c[0][0] - 8.0 * checkered.spacing[0]).abs() < 1e-9);
        let back = checkered.cell_at(checkered.cell_centre(2.0, 5.0));
        assert!((back[0] - 2.0).abs() < 1e-9 && (back[1] - 5.0).abs() < 1e-9);
    }

    #[test]
    fn the_camera_frames_the_whole_board() {
        for seed in 0..20 {
            let scene = draw_scene(
                Layout::Lines(19),
                seed,
                Style::Varied,
                &SceneRequest::default(),
            );
            let lens = &scene.camera.lens;
            for corner in scene.board.playing_corners() {
                let p = scene
                    .camera
                    .project(scene.placement.to_world(corner, scene.board.thickness));
                assert!(
                    p[0] > 0.0
                        && p[1] > 0.0
                        && p[0] < f64::from(lens.width)
                        && p[1] < f64::from(lens.height),
                    "seed {seed}: corner {p:?} outside the picture"
                );
            }
        }
    }
}
