//! Synthetic rectified Go boards with exact labels, for training and testing the learned
//! stone classifier ([`super::learned`]).
//!
//! A board is drawn directly in the rectified frame of [`super::rectify`] (grid point
//! (`col`, `row`) at `((col + 1) · cell, (row + 1) · cell)`), so no geometry is involved.
//! What varies with the seed is what the real photos in `../shared/data/go-photos` show to
//! matter: board colour from pale yellow to dark brown and grey plastic or paper, wood
//! grain, line weight, stone looks (matte slate, glossy glass, shell stripes, tinted
//! plastic), stones off their points, the parallax of an oblique camera (the stone's top
//! shifted away from the camera, so a stone covers part of the point behind it), soft
//! shadows, uneven light, colour casts, glare, over-exposure, low resolution, blur, noise
//! and JPEG artefacts.

use crate::games::Color;
use opencv::core::{self, Mat, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};

/// A small deterministic generator (SplitMix64): the same seed must draw the same board on
/// every machine, which rules out anything seeded from the OS.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f32 {
        let u = self.unit().max(1e-7);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    }
}

/// A rendered board: `image` is 8-bit BGR of side `(size + 1) · cell`; `truth` is row-major.
/// `hard` marks empty points a dataset should always keep: those in a dark shadow or
/// partly under a hand, rare among the easy empty points and the ones readers get wrong.
pub struct SynthBoard {
    pub image: Mat,
    pub size: usize,
    pub cell: i32,
    pub truth: Vec<Option<Color>>,
    pub hard: Vec<bool>,
}

/// A board of a size drawn from the seed: 9, 13 or 19 lines (19 twice as often).
pub fn render_any(seed: u64, cell: i32) -> opencv::Result<SynthBoard> {
    render_any_with(seed, cell, 1.0)
}

/// [`render_any`] with the photographic defects scaled by `severity` (see [`render_with`]).
pub fn render_any_with(seed: u64, cell: i32, severity: f32) -> opencv::Result<SynthBoard> {
    let size = [9, 13, 19, 19][Rng::new(seed.wrapping_mul(31).wrapping_add(7)).below(4)];
    render_with(seed, size, cell, severity)
}

type Px = [f32; 3];

struct Canvas {
    side: usize,
    px: Vec<Px>,
}

impl Canvas {
    fn at(&mut self, x: usize, y: usize) -> &mut Px {
        &mut self.px[y * self.side + x]
    }
}

pub(crate) fn hsv(h: f32, s: f32, v: f32) -> [f32; 3] {
    let c = v * s;
    let hp = (h.rem_euclid(360.0)) / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    [(b + m) * 255.0, (g + m) * 255.0, (r + m) * 255.0]
}

fn luma3(p: Px) -> f32 {
    0.114 * p[0] + 0.587 * p[1] + 0.299 * p[2]
}

fn mix(a: Px, b: Px, t: f32) -> Px {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

fn scale(a: Px, k: f32) -> Px {
    [a[0] * k, a[1] * k, a[2] * k]
}

/// How the stones of one board look; a set shares material, so these are per board with
/// small per-stone jitter.
struct StoneStyle {
    radius: f32,
    aspect: f32,
    parallax: [f32; 2],
    light: [f32; 2],
    black: Px,
    black_gloss: f32,
    white: Px,
    white_gloss: f32,
    white_falloff: f32,
    stripes: f32,
    stripe_freq: f32,
    highlight_sigma: f32,
}

/// Renders one board: positions, materials and photographic defects all follow from `seed`.
pub fn render(seed: u64, size: usize, cell: i32) -> opencv::Result<SynthBoard> {
    render_with(seed, size, cell, 1.0)
}

/// A board whose defects (parallax, stones off their points, uneven light, casts, glare,
/// misregistration, blur, noise, JPEG) are scaled by `severity`, from 0 (a clean board)
/// to 1 (the full range used for training). Materials and positions do not change with it.
pub fn render_with(seed: u64, size: usize, cell: i32, severity: f32) -> opencv::Result<SynthBoard> {
    let k = severity.clamp(0.0, 1.0);
    let mut rng = Rng::new(seed);
    // Scene elements added later (dim lamp light, black level, hands) draw from their own
    // generator, so they leave every other draw of a seed as it was.
    let mut extra = Rng::new(seed ^ 0x4a4e_d51a_4d00_0001);
    let cellf = cell as f32;
    let side = (size + 1) * cell as usize;
    let mut canvas = Canvas {
        side,
        px: vec![[0.0; 3]; side * side],
    };

    // Board surface: wood most of the time, otherwise grey/white plastic or paper.
    let wood = rng.chance(0.72);
    let base = if wood {
        hsv(
            rng.range(22.0, 50.0),
            rng.range(0.25, 0.8),
            rng.range(0.45, 0.97),
        )
    } else {
        hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.1),
            rng.range(0.55, 0.97),
        )
    };
    // White stones reflect more than any board (albedo about 0.9 against 0.5–0.75 for
    // wood); only the camera's clipping makes them equal, and that comes later.
    let style = stone_style(&mut rng, cellf, k);
    let base = {
        let (board_y, white_y) = (luma3(base), luma3(style.white));
        let cap = white_y * rng.range(0.6, 0.88);
        if board_y > cap {
            scale(base, cap / board_y)
        } else {
            base
        }
    };
    let grain_amp = if wood { rng.range(0.01, 0.12) } else { 0.0 };
    let grain_freqs = [
        rng.range(0.01, 0.04),
        rng.range(0.05, 0.15),
        rng.range(0.2, 0.5),
    ];
    let grain_phase = [
        rng.range(0.0, 6.3),
        rng.range(0.0, 6.3),
        rng.range(0.0, 6.3),
    ];
    let grain_warp = rng.range(2.0, 25.0);
    let grain_warp_freq = rng.range(0.002, 0.02);
    let grain_vertical = rng.chance(0.5);
    // Stains and discoloured patches a cell or a few across: the local board colour is
    // taken over several cells, so the model must not call every lighter spot a stone.
    let stains: Vec<([f32; 2], f32, Px)> = (0..rng.below(6))
        .map(|_| {
            let g = 1.0 + rng.range(-0.15, 0.15) * k;
            (
                [rng.range(0.0, side as f32), rng.range(0.0, side as f32)],
                rng.range(0.3, 2.0) * cellf,
                [g * rng.range(0.95, 1.05), g, g * rng.range(0.95, 1.05)],
            )
        })
        .collect();
    for y in 0..side {
        for x in 0..side {
            let (u, v) = if grain_vertical {
                (x as f32, y as f32)
            } else {
                (y as f32, x as f32)
            };
            let w = u + grain_warp * (v * grain_warp_freq + grain_phase[0]).sin();
            let g = 0.5 * (w * grain_freqs[0] + grain_phase[1]).sin()
                + 0.35 * (w * grain_freqs[1] + grain_phase[2]).sin()
                + 0.15 * (w * grain_freqs[2]).sin();
            let mut p = scale(base, 1.0 + grain_amp * g);
            for &(c, r, gain) in &stains {
                let d2 = (x as f32 - c[0]).powi(2) + (y as f32 - c[1]).powi(2);
                let w = (-d2 / (2.0 * r * r)).exp();
                for ch in 0..3 {
                    p[ch] *= 1.0 + (gain[ch] - 1.0) * w;
                }
            }
            *canvas.at(x, y) = p;
        }
    }

    // Table beyond the board's margin, seen on boards with a narrow border.
    if rng.chance(0.25) {
        let margin = rng.range(0.3, 0.5) * cellf;
        let table = hsv(
            rng.range(0.0, 360.0),
            rng.range(0.0, 0.6),
            rng.range(0.05, 0.9),
        );
        let low = cellf - margin;
        let high = size as f32 * cellf + margin;
        for y in 0..side {
            for x in 0..side {
                let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
                if fx < low || fx > high || fy < low || fy > high {
                    *canvas.at(x, y) = table;
                }
            }
        }
    }

    draw_lines(&mut canvas, &mut rng, size, cellf, base);

    // Positions: density from an empty board to a crowded late middle game.
    let density = if rng.chance(0.1) {
        0.0
    } else {
        rng.range(0.05, 0.7)
    };
    let black_share = rng.range(0.35, 0.65);
    let mut truth: Vec<Option<Color>> = (0..size * size)
        .map(|_| {
            if rng.chance(density) {
                Some(if rng.chance(black_share) {
                    Color::Black
                } else {
                    Color::White
                })
            } else {
                None
            }
        })
        .collect();

    let offset_max = rng.range(0.05, 0.05 + 0.15 * k) * cellf;
    let stones: Vec<(usize, [f32; 2], f32)> = truth
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is_some())
        .map(|(i, _)| {
            let (row, col) = (i / size, i % size);
            let r = offset_max * rng.unit().powf(0.7);
            let a = rng.range(0.0, std::f32::consts::TAU);
            let centre = [
                (col + 1) as f32 * cellf + r * a.cos(),
                (row + 1) as f32 * cellf + r * a.sin(),
            ];
            (i, centre, style.radius * rng.range(0.97, 1.03))
        })
        .collect();

    let lamp = shadows(&mut canvas, &mut rng, &mut extra, &stones, &style, cellf, k)?;
    let mut hard: Vec<bool> = (0..size * size)
        .map(|i| {
            let (x, y) = point_px(i, size, cellf);
            lamp.darkening[y * side + x] > 0.25
        })
        .collect();

    // Stones nearer the camera (against the parallax direction) cover those behind them.
    let mut order: Vec<usize> = (0..stones.len()).collect();
    let key = |s: &(usize, [f32; 2], f32)| s.1[0] * style.parallax[0] + s.1[1] * style.parallax[1];
    order.sort_by(|&a, &b| key(&stones[b]).total_cmp(&key(&stones[a])));
    for &k in &order {
        let (i, centre, radius) = stones[k];
        let color = truth[i].expect("stones only where the truth has one");
        draw_stone(&mut canvas, &mut rng, &style, color, centre, radius);
    }

    // A player's hand over the board on some boards. A still photo cannot see under it
    // and a hand is never a stone: points whose middle it covers are labelled empty.
    if extra.chance(0.15 * k) {
        let skin = hand(&mut canvas, &mut extra, &style, cellf)?;
        for (i, t) in truth.iter_mut().enumerate() {
            let cover = coverage(&skin, side, point_px_f(i, size, cellf), 0.3 * cellf);
            if cover > 0.5 {
                *t = None;
            }
            if cover > 0.03 && t.is_none() {
                hard[i] = true;
            }
        }
    }

    lighting(&mut canvas, &mut rng, cellf, k);
    let black_level = if lamp.dim {
        lamp.black_level
    } else if extra.chance(0.25) {
        extra.range(0.0, 12.0) * k
    } else {
        0.0
    };
    let image = camera(canvas, &mut rng, cellf, k, black_level)?;
    for (h, t) in hard.iter_mut().zip(&truth) {
        *h &= t.is_none();
    }
    Ok(SynthBoard {
        image,
        size,
        cell,
        truth,
        hard,
    })
}

fn point_px_f(i: usize, size: usize, cellf: f32) -> [f32; 2] {
    [
        ((i % size) + 1) as f32 * cellf,
        ((i / size) + 1) as f32 * cellf,
    ]
}

fn point_px(i: usize, size: usize, cellf: f32) -> (usize, usize) {
    let [x, y] = point_px_f(i, size, cellf);
    (x as usize, y as usize)
}

/// Mean of `mask` (row-major, `side` wide) over the disc of `radius` around `centre`.
fn coverage(mask: &[f32], side: usize, centre: [f32; 2], radius: f32) -> f32 {
    let (mut sum, mut n) = (0.0, 0.0);
    let r = radius.ceil() as i32;
    for dy in -r..=r {
        for dx in -r..=r {
            if (dx * dx + dy * dy) as f32 > radius * radius {
                continue;
            }
            let (x, y) = (centre[0] as i32 + dx, centre[1] as i32 + dy);
            if x >= 0 && y >= 0 && (x as usize) < side && (y as usize) < side {
                sum += mask[y as usize * side + x as usize];
                n += 1.0;
            }
        }
    }
    if n > 0.0 { sum / n } else { 0.0 }
}

/// Distance from `p` to the segment `a`–`b`, and where along it (0 at `a`, 1 at `b`).
fn segment_distance(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let (vx, vy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = (vx * vx + vy * vy).max(1e-6);
    let t = (((p[0] - a[0]) * vx + (p[1] - a[1]) * vy) / len2).clamp(0.0, 1.0);
    ((p[0] - a[0] - vx * t).powi(2) + (p[1] - a[1] - vy * t).powi(2)).sqrt()
}

/// Draws a hand (arm, palm, one to four fingers) reaching in from one edge, with its soft
/// shadow, and returns its coverage (0–1 per pixel, row-major).
fn hand(
    canvas: &mut Canvas,
    rng: &mut Rng,
    style: &StoneStyle,
    cellf: f32,
) -> opencv::Result<Vec<f32>> {
    let side = canvas.side;
    let sidef = side as f32;
    // Inward direction from the chosen edge, tilted; entry point along that edge.
    let edge = rng.below(4);
    let (inward, start) = {
        let s = rng.range(0.1, 0.9) * sidef;
        match edge {
            0 => ([1.0f32, 0.0f32], [0.0, s]),
            1 => ([-1.0, 0.0], [sidef, s]),
            2 => ([0.0, 1.0], [s, 0.0]),
            _ => ([0.0, -1.0], [s, sidef]),
        }
    };
    let tilt = rng.range(-0.6, 0.6);
    let dir = [
        inward[0] * tilt.cos() - inward[1] * tilt.sin(),
        inward[0] * tilt.sin() + inward[1] * tilt.cos(),
    ];
    let across = [-dir[1], dir[0]];
    let depth = rng.range(-1.0, 3.0) * cellf;
    let palm_r = rng.range(0.9, 1.6) * cellf;
    let palm = [start[0] + dir[0] * depth, start[1] + dir[1] * depth];
    // Capsules: (from, to, radius).
    let mut parts: Vec<([f32; 2], [f32; 2], f32)> = Vec::new();
    let far = 3.0 * sidef;
    parts.push((
        [palm[0] - dir[0] * far, palm[1] - dir[1] * far],
        palm,
        palm_r * rng.range(0.7, 0.95),
    ));
    let palm_len = rng.range(0.3, 1.0) * cellf;
    parts.push((
        [palm[0] - dir[0] * palm_len, palm[1] - dir[1] * palm_len],
        [palm[0] + dir[0] * palm_len, palm[1] + dir[1] * palm_len],
        palm_r,
    ));
    let fingers = 1 + rng.below(4);
    let curled = rng.chance(0.3);
    for f in 0..fingers {
        let spread = if fingers == 1 {
            rng.range(-0.5, 0.5)
        } else {
            (f as f32 / (fingers - 1) as f32 - 0.5) * 1.4
        };
        let base = [
            palm[0] + dir[0] * (palm_len + 0.5 * palm_r) + across[0] * spread * palm_r,
            palm[1] + dir[1] * (palm_len + 0.5 * palm_r) + across[1] * spread * palm_r,
        ];
        let a = rng.range(-0.35, 0.35) + spread * 0.3;
        let fd = [
            dir[0] * a.cos() - dir[1] * a.sin(),
            dir[0] * a.sin() + dir[1] * a.cos(),
        ];
        let len = if curled {
            rng.range(0.3, 0.9)
        } else {
            rng.range(0.9, 2.6)
        } * cellf;
        parts.push((
            base,
            [base[0] + fd[0] * len, base[1] + fd[1] * len],
            rng.range(0.22, 0.38) * cellf,
        ));
    }

    // Per pixel: coverage and how near the middle of a limb (for cylinder shading).
    let mut cover = vec![0.0f32; side * side];
    let mut round = vec![0.0f32; side * side];
    for y in 0..side {
        for x in 0..side {
            let p = [x as f32 + 0.5, y as f32 + 0.5];
            let (mut c, mut r) = (0.0f32, 0.0f32);
            for &(a, b, radius) in &parts {
                let d = segment_distance(p, a, b);
                c = c.max((radius + 0.5 - d).clamp(0.0, 1.0));
                if d < radius {
                    r = r.max((1.0 - (d / radius).powi(2)).sqrt());
                }
            }
            cover[y * side + x] = c;
            round[y * side + x] = r;
        }
    }

    // The hand is well above the board: its shadow falls far and soft.
    let reach = rng.range(0.4, 2.0) * cellf;
    let (sx, sy) = (
        (-style.light[0] * reach).round() as i32,
        (-style.light[1] * reach).round() as i32,
    );
    let mut shadow =
        Mat::new_rows_cols_with_default(side as i32, side as i32, core::CV_32F, Scalar::all(0.0))?;
    {
        let data = shadow.data_typed_mut::<f32>()?;
        for y in 0..side as i32 {
            for x in 0..side as i32 {
                let (ox, oy) = (x - sx, y - sy);
                if ox >= 0 && oy >= 0 && (ox as usize) < side && (oy as usize) < side {
                    data[y as usize * side + x as usize] = cover[oy as usize * side + ox as usize];
                }
            }
        }
    }
    let mut soft = Mat::default();
    imgproc::gaussian_blur(
        &shadow,
        &mut soft,
        Size::new(0, 0),
        (rng.range(0.3, 0.9) * cellf) as f64,
        0.0,
        core::BORDER_REPLICATE,
    )?;
    let strength = rng.range(0.1, 0.5);
    for (p, &m) in canvas.px.iter_mut().zip(soft.data_typed::<f32>()?) {
        *p = scale(*p, 1.0 - strength * m.min(1.0));
    }

    // Skin: pinkish to orange or brown, more saturated than white stones, darker towards
    // the edges of each limb.
    let tone = hsv(
        rng.range(5.0, 30.0),
        rng.range(0.2, 0.55),
        rng.range(0.45, 0.95),
    );
    // Skin reflects less than white stones (the camera's clipping can still equal them).
    let cap = 0.92 * luma3(style.white);
    let skin = if luma3(tone) > cap {
        scale(tone, cap / luma3(tone))
    } else {
        tone
    };
    let falloff = rng.range(0.2, 0.5);
    let mut noise = Rng::new(rng.next_u64());
    for (i, p) in canvas.px.iter_mut().enumerate() {
        let c = cover[i];
        if c <= 0.0 {
            continue;
        }
        let shade = 1.0 - falloff * (1.0 - round[i]) + noise.range(-0.02, 0.02);
        *p = mix(*p, scale(skin, shade), c);
    }
    Ok(cover)
}

fn draw_lines(canvas: &mut Canvas, rng: &mut Rng, size: usize, cellf: f32, base: Px) {
    let ink = hsv(
        rng.range(0.0, 40.0),
        rng.range(0.0, 0.6),
        rng.range(0.0, 0.3),
    );
    let opacity = rng.range(0.45, 1.0);
    let width = rng.range(0.8, 2.8);
    let outer_width = width * rng.range(1.0, 2.0);
    let star_radius = rng.range(0.07, 0.14) * cellf;
    let stars: Vec<usize> = match size {
        19 => vec![3, 9, 15],
        13 => vec![3, 6, 9],
        9 => vec![2, 4, 6],
        _ => vec![],
    };
    let first = cellf;
    let last = size as f32 * cellf;
    let _ = base;
    let side = canvas.side;
    for y in 0..side {
        for x in 0..side {
            let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
            let mut cover = 0.0f32;
            let line_cover = |d: f32, w: f32| (w / 2.0 + 0.5 - d).clamp(0.0, 1.0);
            if fy > first - outer_width && fy < last + outer_width {
                let k = (fx / cellf).round();
                if k >= 1.0 && k <= size as f32 {
                    let w = if k == 1.0 || k == size as f32 {
                        outer_width
                    } else {
                        width
                    };
                    cover = cover.max(line_cover((fx - k * cellf).abs(), w));
                }
            }
            if fx > first - outer_width && fx < last + outer_width {
                let k = (fy / cellf).round();
                if k >= 1.0 && k <= size as f32 {
                    let w = if k == 1.0 || k == size as f32 {
                        outer_width
                    } else {
                        width
                    };
                    cover = cover.max(line_cover((fy - k * cellf).abs(), w));
                }
            }
            for &sr in &stars {
                for &sc in &stars {
                    let dx = fx - (sc + 1) as f32 * cellf;
                    let dy = fy - (sr + 1) as f32 * cellf;
                    let d = (dx * dx + dy * dy).sqrt();
                    cover = cover.max((star_radius + 0.5 - d).clamp(0.0, 1.0));
                }
            }
            if cover > 0.0 {
                let p = canvas.at(x, y);
                *p = mix(*p, ink, cover * opacity);
            }
        }
    }
}

fn stone_style(rng: &mut Rng, cellf: f32, k: f32) -> StoneStyle {
    // A low webcam shifts stone tops by half a cell (imago t3); a phone above the board
    // hardly at all.
    let parallax_len = if rng.chance(0.2) {
        0.0
    } else {
        rng.range(0.0, 0.5).powf(1.3) / 0.5f32.powf(0.3) * cellf * k
    };
    // The rectified board keeps the photo's top at the top, and the camera looks from the
    // bottom edge, so tops shift up the picture. Which way a top moved cannot be told from
    // one patch, so a large shift only goes the way real photos have it; small shifts go
    // any way (a camera beside the board).
    let angle = if parallax_len > 0.15 * cellf || rng.chance(0.6) {
        -std::f32::consts::FRAC_PI_2 + rng.range(-0.5, 0.5)
    } else {
        rng.range(0.0, std::f32::consts::TAU)
    };
    let light_angle = rng.range(0.0, std::f32::consts::TAU);
    let black_level = rng.range(8.0, 60.0);
    let black_tint = [rng.range(0.9, 1.2), 1.0, rng.range(0.9, 1.1)];
    let white_level = rng.range(200.0, 250.0);
    let tint = rng.range(-0.06, 0.06);
    StoneStyle {
        radius: rng.range(0.43, 0.5) * cellf,
        // Go grids are 22 × 23.7 mm, so a rectified square cell squeezes stones vertically.
        aspect: rng.range(0.9, 1.05),
        parallax: [parallax_len * angle.cos(), parallax_len * angle.sin()],
        light: [light_angle.cos(), light_angle.sin()],
        black: [
            black_level * black_tint[0],
            black_level,
            black_level * black_tint[2],
        ],
        black_gloss: if rng.chance(0.6) {
            rng.range(20.0, 200.0)
        } else {
            rng.range(0.0, 20.0)
        },
        white: [
            white_level * (1.0 + tint),
            white_level,
            white_level * (1.0 - tint).min(1.04),
        ],
        white_gloss: rng.range(0.0, 50.0),
        white_falloff: rng.range(0.03, 0.3),
        stripes: if rng.chance(0.4) {
            rng.range(1.0, 7.0)
        } else {
            0.0
        },
        stripe_freq: rng.range(0.25, 0.6),
        highlight_sigma: rng.range(0.1, 0.25),
    }
}

/// What [`shadows`] did: how much it darkened each pixel (row-major), whether the scene is
/// the dim one of a low lamp, and the camera black level that goes with it.
struct Lamp {
    darkening: Vec<f32>,
    dim: bool,
    black_level: f32,
}

fn shadows(
    canvas: &mut Canvas,
    rng: &mut Rng,
    extra: &mut Rng,
    stones: &[(usize, [f32; 2], f32)],
    style: &StoneStyle,
    cellf: f32,
    k: f32,
) -> opencv::Result<Lamp> {
    // A lamp low beside the board casts shadows a whole cell long and nearly black
    // (gomrade 1), which a reader must not take for black stones. Half the time the scene
    // is the dim one of such a lamp: the board, lit at a grazing angle, is dark, the
    // stones' tops catch the light, and the camera's black level crushes the shadows.
    let long = rng.chance(0.3 * k);
    let dim = long && extra.chance(0.5);
    let side = canvas.side;
    let mut black_level = 0.0;
    if dim {
        // Dim, but a board a person can still read: its brightness ends at 55–120 of 255.
        let mean = canvas.px.iter().map(|&p| luma3(p)).sum::<f32>() / canvas.px.len() as f32;
        let target = extra.range(55.0, 120.0);
        let board_light = (target / mean.max(1.0)).min(1.0);
        for p in canvas.px.iter_mut() {
            *p = scale(*p, board_light);
        }
        black_level = extra.range(0.08, 0.3) * target;
    }
    let normal = rng.range(0.3, 0.6);
    let strength = if dim {
        // Nearly black next to the stone (gomrade 1: 0.8–0.9 of the board's light gone).
        extra.range(0.7, 0.97)
    } else if long {
        normal + extra.range(0.0, 0.15)
    } else {
        rng.range(0.0, 0.5)
    };
    let none = Lamp {
        darkening: vec![0.0; side * side],
        dim,
        black_level,
    };
    if stones.is_empty() || strength < 0.03 {
        return Ok(none);
    }
    let offset = if long {
        // Long enough to cover the next point entirely.
        rng.range(0.3, 0.9) + extra.range(0.0, 0.25)
    } else {
        rng.range(0.03, 0.2)
    } * cellf;
    let sigma = rng.range(0.06, 0.25) * cellf;
    let sidei = side as i32;
    let mut mask = Mat::new_rows_cols_with_default(sidei, sidei, core::CV_32F, Scalar::all(0.0))?;
    let steps = (offset / (0.15 * cellf)).ceil().max(1.0) as i32;
    for &(_, centre, radius) in stones {
        // The shadow is the stone's silhouette swept away from the light; a long one
        // narrows and softens as it leaves the stone (the stone is a lens, not a disc).
        for step in 0..=steps {
            let f = step as f32 / steps as f32;
            let t = offset * f;
            let c = core::Point::new(
                (centre[0] - style.light[0] * t + style.parallax[0] * 0.5).round() as i32,
                (centre[1] - style.light[1] * t + style.parallax[1] * 0.5).round() as i32,
            );
            let r = if long {
                radius * (1.02 - 0.15 * f)
            } else {
                radius * 1.02
            };
            imgproc::circle(
                &mut mask,
                c,
                r.round() as i32,
                Scalar::all(1.0),
                -1,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    let mut soft = Mat::default();
    imgproc::gaussian_blur(
        &mask,
        &mut soft,
        Size::new(0, 0),
        sigma as f64,
        0.0,
        core::BORDER_REPLICATE,
    )?;
    let data = soft.data_typed::<f32>()?;
    let mut darkening = vec![0.0; side * side];
    for ((p, &m), d) in canvas.px.iter_mut().zip(data).zip(darkening.iter_mut()) {
        *d = strength * m.min(1.0);
        *p = scale(*p, 1.0 - *d);
    }
    Ok(Lamp {
        darkening,
        dim,
        black_level,
    })
}

fn draw_stone(
    canvas: &mut Canvas,
    rng: &mut Rng,
    style: &StoneStyle,
    color: Color,
    base: [f32; 2],
    radius: f32,
) {
    let top = [base[0] + style.parallax[0], base[1] + style.parallax[1]];
    let jitter = rng.range(0.93, 1.07);
    let stripe_angle = rng.range(-0.4, 0.4) + if rng.chance(0.5) { 0.0 } else { 1.57 };
    let stripe_phase = rng.range(0.0, 6.3);
    let (body, gloss) = match color {
        Color::Black => (scale(style.black, jitter), style.black_gloss * jitter),
        Color::White => (
            scale(style.white, jitter.clamp(0.97, 1.03)),
            style.white_gloss,
        ),
    };
    let seg = style.parallax;
    let seg_len2 = (seg[0] * seg[0] + seg[1] * seg[1]).max(1e-6);
    let highlight = [
        top[0] + style.light[0] * radius * 0.45,
        top[1] + style.light[1] * radius * 0.45,
    ];
    let hs2 = 2.0 * (style.highlight_sigma * radius).powi(2);
    let reach = radius * 1.06 + 2.0;
    let x0 = (base[0].min(top[0]) - reach).floor().max(0.0) as usize;
    let y0 = (base[1].min(top[1]) - reach).floor().max(0.0) as usize;
    let x1 = ((base[0].max(top[0]) + reach).ceil() as usize).min(canvas.side);
    let y1 = ((base[1].max(top[1]) + reach).ceil() as usize).min(canvas.side);
    for y in y0..y1 {
        for x in x0..x1 {
            let (fx, fy) = (x as f32 + 0.5, y as f32 + 0.5);
            // Silhouette of a lens-shaped stone seen obliquely: every disc between the
            // base and the top, i.e. a capsule.
            let t =
                (((fx - base[0]) * seg[0] + (fy - base[1]) * seg[1]) / seg_len2).clamp(0.0, 1.0);
            let (cx, cy) = (base[0] + seg[0] * t, base[1] + seg[1] * t);
            let d = ((fx - cx).powi(2) + ((fy - cy) / style.aspect).powi(2)).sqrt();
            let alpha = (radius + 0.5 - d).clamp(0.0, 1.0);
            if alpha <= 0.0 {
                continue;
            }
            let (tx, ty) = (
                (fx - top[0]) / radius,
                (fy - top[1]) / (radius * style.aspect),
            );
            let r2 = (tx * tx + ty * ty).min(1.5);
            let side_part = r2 > 1.0;
            let facing = tx * style.light[0] + ty * style.light[1];
            let mut shade = match color {
                Color::Black => 1.0 + 0.25 * facing,
                Color::White => 1.0 - style.white_falloff * r2 + 0.05 * facing,
            };
            if side_part {
                shade *= 0.85;
            }
            let mut c = scale(body, shade);
            if color == Color::White && style.stripes > 0.0 {
                let u = tx * stripe_angle.cos() + ty * stripe_angle.sin();
                let s = style.stripes * (u * radius * style.stripe_freq + stripe_phase).sin();
                c = [c[0] + s, c[1] + s, c[2] + s * 0.9];
            }
            let h2 = (fx - highlight[0]).powi(2) + (fy - highlight[1]).powi(2);
            let g = gloss * (-h2 / hs2).exp();
            c = [c[0] + g, c[1] + g, c[2] + g];
            let p = canvas.at(x, y);
            *p = mix(*p, c, alpha);
        }
    }
}

/// Uneven light, colour casts and glare, applied to the scene before the camera sees it.
fn lighting(canvas: &mut Canvas, rng: &mut Rng, cellf: f32, k: f32) {
    let side = canvas.side as f32;
    let gx = rng.range(-0.4, 0.4) * k;
    let gy = rng.range(-0.4, 0.4) * k;
    let vignette = rng.range(0.0, 0.35) * k;
    let exposure = 1.0 + rng.range(-0.3, 0.45) * k;
    let cast: Px = match rng.below(5) {
        0 => [1.0, 1.0, 1.0],
        1 => [rng.range(0.75, 0.95), 1.0, rng.range(1.0, 1.15)], // warm (tungsten)
        2 => [rng.range(1.0, 1.2), 1.0, rng.range(0.85, 1.0)],   // cool (daylight/shade)
        3 => [
            rng.range(0.8, 1.2),
            rng.range(0.85, 1.15),
            rng.range(0.8, 1.2),
        ], // LED
        _ => [rng.range(0.93, 1.07), 1.0, rng.range(0.93, 1.07)],
    };
    let gains = cast.map(|g| 1.0 + (g - 1.0) * k);
    let mut glares: Vec<([f32; 2], f32, f32)> = Vec::new();
    for _ in 0..rng.below(4) {
        if rng.chance(0.6) {
            glares.push((
                [rng.range(0.0, side), rng.range(0.0, side)],
                rng.range(0.3, 2.0) * cellf,
                rng.range(20.0, 130.0) * k,
            ));
        }
    }
    let n = canvas.side;
    for y in 0..n {
        for x in 0..n {
            let (u, v) = (x as f32 / side - 0.5, y as f32 / side - 0.5);
            let light = exposure * (1.0 + gx * u + gy * v - vignette * (u * u + v * v) * 2.0);
            let mut glare = 0.0;
            for &(c, r, a) in &glares {
                let d2 = (x as f32 - c[0]).powi(2) + (y as f32 - c[1]).powi(2);
                glare += a * (-d2 / (2.0 * r * r)).exp();
            }
            let p = canvas.at(x, y);
            for ch in 0..3 {
                p[ch] = p[ch] * light * gains[ch] + glare;
            }
        }
    }
}

/// The camera: limited resolution, defocus, sensor noise, 8-bit clipping and JPEG.
/// `black_level` is subtracted (and the rest stretched back to 255), as cameras do in dim
/// light: black stones and deep shadows go to 0.
fn camera(
    canvas: Canvas,
    rng: &mut Rng,
    cellf: f32,
    k: f32,
    black_level: f32,
) -> opencv::Result<Mat> {
    let side = canvas.side as i32;
    let flat: Vec<f32> = canvas.px.iter().flatten().copied().collect();
    let mut image = Mat::new_rows_cols_with_default(side, side, core::CV_32FC3, Scalar::all(0.0))?;
    image.data_typed_mut::<core::Vec3f>()?.copy_from_slice(
        &flat
            .chunks_exact(3)
            .map(|c| core::Vec3f::from([c[0], c[1], c[2]]))
            .collect::<Vec<_>>(),
    );

    image = misregister(&image, rng, cellf, k)?;
    let downscale = if rng.chance(0.5) {
        1.0 + rng.range(0.0, 2.2) * k
    } else {
        1.0
    };
    if downscale > 1.05 {
        let small_side = ((side as f32) / downscale).round() as i32;
        let mut small = Mat::default();
        imgproc::resize(
            &image,
            &mut small,
            Size::new(small_side, small_side),
            0.0,
            0.0,
            imgproc::INTER_AREA,
        )?;
        imgproc::resize(
            &small,
            &mut image,
            Size::new(side, side),
            0.0,
            0.0,
            imgproc::INTER_LINEAR,
        )?;
    }
    let sigma = rng.range(0.0, 1.3) * k;
    if sigma > 0.3 {
        let mut blurred = Mat::default();
        imgproc::gaussian_blur(
            &image,
            &mut blurred,
            Size::new(0, 0),
            sigma as f64,
            0.0,
            core::BORDER_REPLICATE,
        )?;
        image = blurred;
    }
    // Webcams and phones sharpen, which rings dark around white stones and light around
    // black ones.
    if rng.chance(0.35) {
        let amount = (rng.range(0.3, 1.5) * k) as f64;
        let mut soft = Mat::default();
        imgproc::gaussian_blur(
            &image,
            &mut soft,
            Size::new(0, 0),
            rng.range(1.0, 2.5) as f64,
            0.0,
            core::BORDER_REPLICATE,
        )?;
        let mut sharp = Mat::default();
        core::add_weighted(&image, 1.0 + amount, &soft, -amount, 0.0, &mut sharp, -1)?;
        image = sharp;
    }
    let noise = rng.range(0.0, 7.0) * k;
    if noise > 0.2 {
        let mut noise_rng = Rng::new(rng.next_u64());
        for p in image.data_typed_mut::<core::Vec3f>()? {
            let shared = noise_rng.normal() * noise * 0.6;
            for ch in 0..3 {
                p[ch] += shared + noise_rng.normal() * noise * 0.4;
            }
        }
    }
    let mut bytes = Mat::default();
    let gain = 255.0 / (255.0 - black_level.clamp(0.0, 100.0)) as f64;
    image.convert_to(&mut bytes, core::CV_8UC3, gain, -gain * black_level as f64)?;
    if rng.chance(0.7) {
        let quality = (95.0 - rng.range(0.0, 65.0) * k) as i32;
        let mut buf = Vector::<u8>::new();
        let params = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]);
        imgcodecs::imencode(".jpg", &bytes, &mut buf, &params)?;
        bytes = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)?;
    }
    Ok(bytes)
}

/// The grid as a real rectification leaves it: the corners a little off (shift, scale,
/// rotation) and lens distortion bending lines, so points are up to ~0.15 cell from where
/// the convention puts them. Stones move with their points, so labels stay right.
fn misregister(image: &Mat, rng: &mut Rng, cellf: f32, k: f32) -> opencv::Result<Mat> {
    if rng.chance(0.15) {
        return Ok(image.clone());
    }
    let side = image.rows();
    let half = side as f32 / 2.0;
    let shift = [
        rng.range(-0.1, 0.1) * cellf * k,
        rng.range(-0.1, 0.1) * cellf * k,
    ];
    let scale_err = rng.range(-0.008, 0.008) * k;
    let rotation = rng.range(-0.006, 0.006) * k;
    let bend = rng.range(0.0, 0.06) * cellf * k;
    let bend_freq = [rng.range(0.5, 2.0), rng.range(0.5, 2.0)];
    let phase = [rng.range(0.0, 6.3), rng.range(0.0, 6.3)];
    let mut map_x = Mat::new_rows_cols_with_default(side, side, core::CV_32F, Scalar::all(0.0))?;
    let mut map_y = map_x.clone();
    for y in 0..side {
        let (mx, my) = (map_x.at_row_mut::<f32>(y)?, map_y.at_row_mut::<f32>(y)?);
        for x in 0..side as usize {
            let (u, v) = (x as f32 - half, y as f32 - half);
            let (nu, nv) = (u / half, v / half);
            mx[x] = x as f32 + shift[0] + scale_err * u - rotation * v
                + bend * (bend_freq[0] * nv * std::f32::consts::PI + phase[0]).sin();
            my[x] = y as f32
                + shift[1]
                + scale_err * v
                + rotation * u
                + bend * (bend_freq[1] * nu * std::f32::consts::PI + phase[1]).sin();
        }
    }
    let mut out = Mat::default();
    imgproc::remap(
        image,
        &mut out,
        &map_x,
        &map_y,
        imgproc::INTER_LINEAR,
        core::BORDER_REPLICATE,
        Scalar::default(),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(m: &Mat) -> u64 {
        m.data_bytes()
            .unwrap()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
            })
    }

    #[test]
    fn the_same_seed_draws_the_same_board() {
        let a = render(42, 9, 32).unwrap();
        let b = render(42, 9, 32).unwrap();
        assert_eq!(a.truth, b.truth);
        assert_eq!(digest(&a.image), digest(&b.image));
        let c = render(43, 9, 32).unwrap();
        assert_ne!(digest(&a.image), digest(&c.image));
    }

    #[test]
    fn the_picture_follows_the_rectified_convention() {
        let board = render_any(7, 32).unwrap();
        let side = (board.size as i32 + 1) * 32;
        assert_eq!((board.image.rows(), board.image.cols()), (side, side));
        assert_eq!(board.image.typ(), core::CV_8UC3);
        assert_eq!(board.truth.len(), board.size * board.size);
    }
}
