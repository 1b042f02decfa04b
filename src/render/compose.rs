//! Pixels: the still part of a picture (room, table, board, pieces, lit and shadowed) is
//! drawn once for each board state and camera position; every frame then adds the arm,
//! the shadows that move, the camera's shake and lens, exposure, noise and compression.

use super::camera::{Camera, Lens, Mat3, Pose, Vec3, add, dot, mat_vec, mul, rotation, sub};
use super::hand::{self, Capsule};
use super::scene::{Clutter, Placement, Scene};
use super::script::Board;
use super::solids::{self, Solid};
use super::timeline::{Change, Timeline};
use crate::geometry::invert;
use crate::reading::synth::Rng;
use opencv::core::{self, Mat, Point, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::collections::HashMap;

fn to_mat3(m: &Mat3) -> opencv::Result<Mat> {
    Mat::from_slice_2d(&m.iter().map(|r| r.to_vec()).collect::<Vec<_>>())
}

fn scalar(c: [f32; 3]) -> Scalar {
    Scalar::new(f64::from(c[0]), f64::from(c[1]), f64::from(c[2]), 0.0)
}

/// Where the camera and board are at some instant (they change only with bumps).
#[derive(Clone, Debug)]
pub struct Setting {
    pub pose: Pose,
    pub placement: Placement,
}

/// What the renderer reports about each frame, for the truth file.
pub struct FrameFacts {
    pub pose: Pose,
    pub corners: [[f64; 2]; 4],
    pub hand_over_board: bool,
    pub board: Board,
}

pub struct Renderer<'a> {
    scene: &'a Scene,
    timeline: &'a Timeline,
    seed: u64,
    /// The undistorted picture is drawn larger than the frame so the lens's barrel has
    /// something to pull in at the corners.
    canvas: Lens,
    table: Mat,
    table_scale: f64,
    board_texture: Mat,
    board_scale: f64,
    gain: Mat,
    /// Undistorted canvas coordinates of every output pixel.
    undistorted: (Vec<f32>, Vec<f32>),
    base_maps: (Mat, Mat),
    noise: Vec<Mat>,
    cached: Option<((usize, usize), Mat)>,
    background: Option<(usize, Mat)>,
    sprites: HashMap<SpriteKey, Option<solids::Sprite>>,
}

/// A piece's look at a place, for the current camera position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct SpriteKey {
    shape: super::scene::Shape,
    color: crate::games::Color,
    /// World position in hundredths of a millimetre.
    at: [i64; 2],
}

impl<'a> Renderer<'a> {
    pub fn new(scene: &'a Scene, timeline: &'a Timeline, seed: u64) -> opencv::Result<Self> {
        let lens = &scene.camera.lens;
        let (w, h) = (f64::from(lens.width), f64::from(lens.height));
        // The undistorted extent of the distorted frame.
        let (mut lo, mut hi) = ([0.0f64, 0.0], [w, h]);
        for i in 0..=8 {
            let f = i as f64 / 8.0;
            for p in [[f * w, 0.0], [f * w, h], [0.0, f * h], [w, f * h]] {
                let u = lens.undistort_pixel(p[0], p[1]);
                for k in 0..2 {
                    lo[k] = lo[k].min(u[k]);
                    hi[k] = hi[k].max(u[k]);
                }
            }
        }
        let offset = [(-lo[0]).ceil() + 2.0, (-lo[1]).ceil() + 2.0];
        let canvas = Lens {
            width: (hi[0] + offset[0] + 2.0).ceil() as u32,
            height: (hi[1] + offset[1] + 2.0).ceil() as u32,
            focal: lens.focal,
            centre: [lens.centre[0] + offset[0], lens.centre[1] + offset[1]],
            k1: 0.0,
            k2: 0.0,
        };
        let (wi, hi_) = (lens.width as usize, lens.height as usize);
        let mut ux = Vec::with_capacity(wi * hi_);
        let mut uy = Vec::with_capacity(wi * hi_);
        for y in 0..hi_ {
            for x in 0..wi {
                let u = lens.undistort_pixel(x as f64, y as f64);
                ux.push((u[0] + offset[0]) as f32);
                uy.push((u[1] + offset[1]) as f32);
            }
        }
        // Texture detail to match the picture: a little finer than a board millimetre
        // appears on screen, so lines stay crisp without aliasing.
        let distance = dot(
            sub(
                scene.camera.pose.centre,
                scene.placement.to_world([0.0, 0.0], 0.0),
            ),
            scene.camera.pose.rotation[2],
        )
        .abs()
        .max(100.0);
        let px_per_mm = lens.focal / distance;
        let board_scale = (1.6 * px_per_mm).clamp(0.8, 4.0);
        let table_scale = (0.8 * px_per_mm).clamp(0.3, 1.2);
        let mut renderer = Renderer {
            scene,
            timeline,
            seed,
            canvas,
            table: Mat::default(),
            table_scale,
            board_texture: scene.board.texture(board_scale, seed ^ 0xb0a2d)?,
            board_scale,
            gain: Mat::default(),
            undistorted: (ux, uy),
            base_maps: (Mat::default(), Mat::default()),
            noise: Vec::new(),
            cached: None,
            background: None,
            sprites: HashMap::new(),
        };
        renderer.table = renderer.table_texture()?;
        renderer.gain = renderer.gain_field()?;
        renderer.base_maps = renderer.maps(None)?;
        renderer.noise = renderer.noise_bank()?;
        Ok(renderer)
    }

    fn canvas_camera(&self, pose: &Pose) -> Camera {
        Camera {
            lens: self.canvas.clone(),
            pose: pose.clone(),
        }
    }

    fn table_texture(&self) -> opencv::Result<Mat> {
        let t = &self.scene.table;
        let s = self.table_scale;
        let (w, h) = ((t.size[0] * s) as i32, (t.size[1] * s) as i32);
        let mut rng = Rng::new(self.seed ^ 0x7ab1e);
        let mut image = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, scalar(t.color))?;
        if t.texture > 0.0 {
            let freq = [rng.range(0.005, 0.03), rng.range(0.05, 0.2)];
            for y in 0..h {
                let row = image.at_row_mut::<core::Vec3b>(y)?;
                for (x, px) in row.iter_mut().enumerate() {
                    let u = x as f32 / s as f32;
                    let v = y as f32 / s as f32;
                    let g = 1.0
                        + t.texture
                            * ((u * freq[0] + (v * 0.004).sin() * 3.0).sin() * 0.6
                                + (u * freq[1]).sin() * 0.4);
                    for ch in 0..3 {
                        px[ch] = (f32::from(px[ch]) * g).clamp(0.0, 255.0) as u8;
                    }
                }
            }
        }
        let to_px = |p: [f64; 2]| {
            Point::new(
                ((p[0] + t.size[0] / 2.0) * s) as i32,
                ((t.size[1] / 2.0 - p[1]) * s) as i32,
            )
        };
        for clutter in &t.clutter {
            if let Clutter::Board {
                at,
                size,
                color,
                ink,
            } = clutter
            {
                let a = to_px([at[0] - size[0] / 2.0, at[1] + size[1] / 2.0]);
                let b = to_px([at[0] + size[0] / 2.0, at[1] - size[1] / 2.0]);
                imgproc::rectangle_points(
                    &mut image,
                    a,
                    b,
                    scalar(*color),
                    -1,
                    imgproc::LINE_8,
                    0,
                )?;
                for i in 1..10 {
                    let f = i as f64 / 10.0;
                    let x = at[0] - size[0] / 2.0 + size[0] * f;
                    let y = at[1] - size[1] / 2.0 + size[1] * f;
                    imgproc::line(
                        &mut image,
                        to_px([x, at[1] - size[1] * 0.45]),
                        to_px([x, at[1] + size[1] * 0.45]),
                        scalar(*ink),
                        1,
                        imgproc::LINE_AA,
                        0,
                    )?;
                    imgproc::line(
                        &mut image,
                        to_px([at[0] - size[0] * 0.45, y]),
                        to_px([at[0] + size[0] * 0.45, y]),
                        scalar(*ink),
                        1,
                        imgproc::LINE_AA,
                        0,
                    )?;
                }
            }
        }
        Ok(image)
    }

    /// Light falling off across the picture: a gradient and vignetting (multiplier, ×1).
    fn gain_field(&self) -> opencv::Result<Mat> {
        let a = &self.scene.atmosphere;
        let (w, h) = (self.canvas.width as i32, self.canvas.height as i32);
        // Stored ×128 in 8 bits, so applying it is one saturating multiply.
        let mut gain = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::all(128.0))?;
        for y in 0..h {
            let row = gain.at_row_mut::<core::Vec3b>(y)?;
            for (x, g) in row.iter_mut().enumerate() {
                let u = x as f32 / w as f32 - 0.5;
                let v = y as f32 / h as f32 - 0.5;
                let k = (1.0 + a.gradient[0] * u + a.gradient[1] * v
                    - a.vignette * (u * u + v * v) * 2.0)
                    .clamp(0.2, 1.99);
                let q = (k * 128.0).round() as u8;
                *g = core::Vec3b::from([q, q, q]);
            }
        }
        Ok(gain)
    }

    fn noise_bank(&self) -> opencv::Result<Vec<Mat>> {
        let sigma = f64::from(self.scene.atmosphere.noise);
        if sigma < 0.3 {
            return Ok(Vec::new());
        }
        let lens = &self.scene.camera.lens;
        let mut bank = Vec::new();
        // The first is the sensor's fixed pattern (the same every frame); the others are
        // the noise that changes from frame to frame. A camera has both; an encoder pays
        // only for the second, as it does with real footage.
        for i in 0..4 {
            let sigma = if i == 0 { 0.75 * sigma } else { 0.6 * sigma };
            let mut m = Mat::new_rows_cols_with_default(
                lens.height as i32 + 32,
                lens.width as i32 + 32,
                core::CV_16SC3,
                Scalar::all(0.0),
            )?;
            core::set_rng_seed((self.seed as i32).wrapping_add(i))?;
            core::randn(&mut m, &Scalar::all(0.0), &Scalar::all(sigma))?;
            bank.push(m);
        }
        Ok(bank)
    }

    /// Remap tables from the delivered frame to the canvas, for the camera turned by
    /// `turn` from where the canvas was drawn.
    fn maps(&self, turn: Option<&Mat3>) -> opencv::Result<(Mat, Mat)> {
        let lens = &self.scene.camera.lens;
        let (w, h) = (lens.width as i32, lens.height as i32);
        let (ux, uy) = &self.undistorted;
        let Some(delta) = turn else {
            let mut mx = Mat::new_rows_cols_with_default(h, w, core::CV_32F, Scalar::all(0.0))?;
            let mut my = mx.clone();
            mx.data_typed_mut::<f32>()?.copy_from_slice(ux);
            my.data_typed_mut::<f32>()?.copy_from_slice(uy);
            return Ok((mx, my));
        };
        let cam = self.canvas_camera(&self.scene.camera.pose);
        let Some(back) = invert(&cam.turn_homography(delta)) else {
            return Ok((self.base_maps.0.clone(), self.base_maps.1.clone()));
        };
        // A small turn moves every pixel by a smooth field: computed on a coarse grid,
        // interpolated, and added to the lens's tables (exact to far below a pixel).
        const STEP: i32 = 8;
        let (gw, gh) = (w / STEP + 2, h / STEP + 2);
        let mut dx = Mat::new_rows_cols_with_default(gh, gw, core::CV_32F, Scalar::all(0.0))?;
        let mut dy = dx.clone();
        let offset = [
            self.canvas.centre[0] - lens.centre[0],
            self.canvas.centre[1] - lens.centre[1],
        ];
        {
            let xs = dx.data_typed_mut::<f32>()?;
            let ys = dy.data_typed_mut::<f32>()?;
            for gy in 0..gh {
                for gx in 0..gw {
                    // Linear resizing puts grid node k at pixel k·STEP + (STEP − 1)/2.
                    let half = f64::from(STEP - 1) / 2.0;
                    let p = lens
                        .undistort_pixel(f64::from(gx * STEP) + half, f64::from(gy * STEP) + half);
                    let (u, v) = (p[0] + offset[0], p[1] + offset[1]);
                    let z = back[2][0] * u + back[2][1] * v + back[2][2];
                    let g = (gy * gw + gx) as usize;
                    xs[g] = ((back[0][0] * u + back[0][1] * v + back[0][2]) / z - u) as f32;
                    ys[g] = ((back[1][0] * u + back[1][1] * v + back[1][2]) / z - v) as f32;
                }
            }
        }
        let mut out = Vec::new();
        for (coarse, base) in [(&dx, &self.base_maps.0), (&dy, &self.base_maps.1)] {
            let mut fine = Mat::default();
            let full = Size::new(gw * STEP, gh * STEP);
            imgproc::resize(coarse, &mut fine, full, 0.0, 0.0, imgproc::INTER_LINEAR)?;
            let shift = Mat::roi(&fine, core::Rect::new(0, 0, w, h))?;
            let mut sum = Mat::default();
            core::add(base, &shift, &mut sum, &core::no_array(), -1)?;
            out.push(sum);
        }
        let my = out.pop().expect("two maps");
        let mx = out.pop().expect("two maps");
        Ok((mx, my))
    }

    /// The camera and board where they are at time t.
    pub fn setting_at(&self, t: f64) -> (Setting, usize) {
        let mut setting = Setting {
            pose: self.scene.camera.pose.clone(),
            placement: self.scene.placement,
        };
        let mut bumps = 0;
        for (at, change) in &self.timeline.changes {
            if *at > t {
                break;
            }
            match change {
                Change::CameraBump { turn, shift } => {
                    let r = mat3_mul(
                        &rotation([1.0, 0.0, 0.0], turn[0]),
                        &mat3_mul(
                            &rotation([0.0, 1.0, 0.0], turn[1]),
                            &rotation([0.0, 0.0, 1.0], turn[2]),
                        ),
                    );
                    setting.pose = setting.pose.turned(&r);
                    setting.pose.centre = add(setting.pose.centre, *shift);
                    bumps += 1;
                }
                Change::BoardBump { shift, turn } => {
                    setting.placement.shift[0] += shift[0];
                    setting.placement.shift[1] += shift[1];
                    setting.placement.turn += turn;
                    bumps += 1;
                }
                Change::Board(_) => {}
            }
        }
        (setting, bumps)
    }

    fn board_state_index(&self, t: f64) -> usize {
        self.timeline
            .changes
            .iter()
            .take_while(|(at, _)| *at <= t)
            .filter(|(_, c)| matches!(c, Change::Board(_)))
            .count()
    }

    /// What only a bump changes: the room, the table with its clutter and the board's
    /// shadow, the board's sides.
    fn background(&self, setting: &Setting) -> opencv::Result<Mat> {
        let scene = self.scene;
        let cam = self.canvas_camera(&setting.pose);
        let light = &scene.light;
        let (w, h) = (self.canvas.width as i32, self.canvas.height as i32);
        let mut frame =
            Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, scalar(scene.table.room))?;
        let flat_gain = [0, 1, 2].map(|ch| light.gain(ch, light.direction[2]));

        // The table, with the board's soft shadow.
        let t = &scene.table;
        let ts = self.table_scale;
        let mut table = self.table.clone();
        {
            let shadow_shift = [
                -light.direction[0] / light.direction[2].max(0.2) * scene.board.thickness,
                -light.direction[1] / light.direction[2].max(0.2) * scene.board.thickness,
            ];
            let pts: Vector<Point> = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]
                .iter()
                .map(|&[sx, sy]| {
                    let p = setting.placement.to_world(
                        [
                            sx * scene.board.outer[0] / 2.0 + shadow_shift[0],
                            sy * scene.board.outer[1] / 2.0 + shadow_shift[1],
                        ],
                        0.0,
                    );
                    Point::new(
                        ((p[0] + t.size[0] / 2.0) * ts) as i32,
                        ((t.size[1] / 2.0 - p[1]) * ts) as i32,
                    )
                })
                .collect();
            let mut mask = Mat::new_rows_cols_with_default(
                table.rows(),
                table.cols(),
                core::CV_8UC3,
                Scalar::all(255.0),
            )?;
            let dark = 255.0 * (1.0 - 0.55 * light.diffuse / (light.ambient + light.diffuse));
            imgproc::fill_convex_poly(&mut mask, &pts, Scalar::all(dark), imgproc::LINE_AA, 0)?;
            let mut soft = Mat::default();
            let sigma = (4.0 + scene.board.thickness * 0.4) * ts;
            imgproc::gaussian_blur(
                &mask,
                &mut soft,
                Size::new(0, 0),
                sigma,
                0.0,
                core::BORDER_REPLICATE,
            )?;
            let mut shaded = Mat::default();
            core::multiply(&table, &soft, &mut shaded, 1.0 / 255.0, -1)?;
            shaded.convert_to(&mut table, -1, 1.0, 0.0)?;
            let mut out = Mat::default();
            core::multiply(
                &table,
                &Scalar::new(flat_gain[0], flat_gain[1], flat_gain[2], 0.0),
                &mut out,
                1.0,
                -1,
            )?;
            table = out;
        }
        let table_h = cam.plane_homography(
            [-t.size[0] / 2.0, t.size[1] / 2.0, 0.0],
            [1.0 / ts, 0.0, 0.0],
            [0.0, -1.0 / ts, 0.0],
        );
        imgproc::warp_perspective(
            &table,
            &mut frame,
            &to_mat3(&table_h)?,
            Size::new(w, h),
            imgproc::INTER_LINEAR,
            core::BORDER_TRANSPARENT,
            Scalar::default(),
        )?;

        // Solid clutter, far to near.
        let mut solids: Vec<(f64, &Solid, Vec3)> = Vec::new();
        for c in &t.clutter {
            match c {
                Clutter::Solid { at, solid } => {
                    let base = [at[0], at[1], 0.0];
                    solids.push((solids::depth_of(&cam, base), solid, base));
                }
                Clutter::Block {
                    at,
                    size,
                    turn,
                    color,
                } => {
                    draw_block(&mut frame, &cam, *at, *size, *turn, *color, light)?;
                }
                Clutter::Board { .. } => {}
            }
        }
        solids.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, solid, base) in solids {
            solids::draw(&mut frame, &cam, solid, base, light);
        }

        // The board's sides, then its top with the pieces' shadows.
        let b = &scene.board;
        let corner = |sx: f64, sy: f64, z: f64| {
            setting
                .placement
                .to_world([sx * b.outer[0] / 2.0, sy * b.outer[1] / 2.0], z)
        };
        let faces = [
            (
                [-1.0, -1.0],
                [1.0, -1.0],
                mul(setting.placement.axis_y(), -1.0),
            ),
            ([1.0, -1.0], [1.0, 1.0], setting.placement.axis_x()),
            ([1.0, 1.0], [-1.0, 1.0], setting.placement.axis_y()),
            (
                [-1.0, 1.0],
                [-1.0, -1.0],
                mul(setting.placement.axis_x(), -1.0),
            ),
        ];
        for (a, c, normal) in faces {
            let middle = corner((a[0] + c[0]) / 2.0, (a[1] + c[1]) / 2.0, b.thickness / 2.0);
            if dot(normal, sub(setting.pose.centre, middle)) <= 0.0 {
                continue;
            }
            let facing = dot(normal, light.direction);
            let side = b.side_color();
            let color = [0, 1, 2].map(|ch| f64::from(side[ch]) * light.gain(ch, facing));
            let pts: Vector<Point> = [
                corner(a[0], a[1], b.thickness),
                corner(c[0], c[1], b.thickness),
                corner(c[0], c[1], 0.0),
                corner(a[0], a[1], 0.0),
            ]
            .iter()
            .map(|&p| {
                let (px, _) = cam.project_undistorted(p);
                Point::new((px[0] * 16.0) as i32, (px[1] * 16.0) as i32)
            })
            .collect();
            imgproc::fill_convex_poly(
                &mut frame,
                &pts,
                Scalar::new(color[0], color[1], color[2], 0.0),
                imgproc::LINE_AA,
                4,
            )?;
        }
        Ok(frame)
    }

    /// The part of the picture that only changes with the board or a bump: the
    /// background, the board's top with its shadows, the pieces.
    fn still(&mut self, board: &Board, setting: &Setting, bumps: usize) -> opencv::Result<Mat> {
        if self.background.as_ref().is_none_or(|(k, _)| *k != bumps) {
            let background = self.background(setting)?;
            self.background = Some((bumps, background));
            self.sprites.clear();
        }
        let mut frame = self.background.as_ref().expect("just made").1.clone();
        let scene = self.scene;
        let cam = self.canvas_camera(&setting.pose);
        let light = &scene.light;
        let (w, h) = (self.canvas.width as i32, self.canvas.height as i32);
        let b = &scene.board;
        let corner = |sx: f64, sy: f64, z: f64| {
            setting
                .placement
                .to_world([sx * b.outer[0] / 2.0, sy * b.outer[1] / 2.0], z)
        };
        let top = self.board_top(board, setting)?;
        let bs = self.board_scale;
        let origin = corner(-1.0, 1.0, b.thickness);
        let board_h = cam.plane_homography(
            origin,
            mul(setting.placement.axis_x(), 1.0 / bs),
            mul(setting.placement.axis_y(), -1.0 / bs),
        );
        imgproc::warp_perspective(
            &top,
            &mut frame,
            &to_mat3(&board_h)?,
            Size::new(w, h),
            imgproc::INTER_LINEAR,
            core::BORDER_TRANSPARENT,
            Scalar::default(),
        )?;

        // Pieces, far to near, each ray-cast once per camera position.
        let mut pieces: Vec<(f64, &super::script::Piece, Vec3)> = board
            .pieces
            .iter()
            .map(|p| {
                let base = setting
                    .placement
                    .to_world(b.cell_centre(p.cell[0], p.cell[1]), b.thickness);
                (solids::depth_of(&cam, base), p, base)
            })
            .collect();
        pieces.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, piece, base) in pieces {
            let key = SpriteKey {
                shape: piece.shape,
                color: piece.color,
                at: [
                    (base[0] * 100.0).round() as i64,
                    (base[1] * 100.0).round() as i64,
                ],
            };
            let sprite = self.sprites.entry(key).or_insert_with(|| {
                let solid = scene.pieces.solid(piece.shape, piece.color, b.spacing[0]);
                solids::sprite(&cam, &solid, base, light)
            });
            if let Some(sprite) = sprite {
                sprite.blend_onto(&mut frame);
            }
        }

        let mut out = Mat::default();
        core::multiply(&frame, &self.gain, &mut out, 1.0 / 128.0, -1)?;
        Ok(out)
    }

    /// The board's top face, lit, with glare and the shadows its pieces cast.
    fn board_top(&self, board: &Board, _setting: &Setting) -> opencv::Result<Mat> {
        let scene = self.scene;
        let b = &scene.board;
        let light = &scene.light;
        let s = self.board_scale;
        let tex = &self.board_texture;
        let mut mask =
            Mat::new_rows_cols_with_default(tex.rows(), tex.cols(), core::CV_8U, Scalar::all(0.0))?;
        // Shadows fall in board-local directions: turn the light with the board.
        let (sn, cs) = (-scene.placement.turn).sin_cos();
        let local_light = [
            cs * light.direction[0] - sn * light.direction[1],
            sn * light.direction[0] + cs * light.direction[1],
            light.direction[2],
        ];
        for p in &board.pieces {
            let solid = scene.pieces.solid(p.shape, p.color, b.spacing[0]);
            let centre = b.cell_centre(p.cell[0], p.cell[1]);
            for (offset, r) in solid.shadow_discs(local_light) {
                let c = [centre[0] + offset[0], centre[1] + offset[1]];
                let px = Point::new(
                    ((c[0] + b.outer[0] / 2.0) * s * 16.0) as i32,
                    ((b.outer[1] / 2.0 - c[1]) * s * 16.0) as i32,
                );
                imgproc::circle(
                    &mut mask,
                    px,
                    (r * s * 16.0) as i32,
                    Scalar::all(255.0),
                    -1,
                    imgproc::LINE_AA,
                    4,
                )?;
            }
        }
        let mut soft = Mat::default();
        imgproc::gaussian_blur(
            &mask,
            &mut soft,
            Size::new(0, 0),
            (1.2 * s).max(0.8),
            0.0,
            core::BORDER_REPLICATE,
        )?;
        let diffuse_share = light.diffuse * light.direction[2]
            / (light.ambient + light.diffuse * light.direction[2]);
        let mut top = Mat::default();
        tex.convert_to(&mut top, core::CV_32FC3, 1.0, 0.0)?;
        let gains = [0, 1, 2].map(|ch| light.gain(ch, light.direction[2]));
        let soft_data = soft.data_typed::<u8>()?.to_vec();
        let glare = &scene.atmosphere.glare;
        let cols = top.cols() as usize;
        for (i, px) in top.data_typed_mut::<core::Vec3f>()?.iter_mut().enumerate() {
            let shadow = 1.0 - 0.75 * diffuse_share * f64::from(soft_data[i]) / 255.0;
            let mut extra = 0.0;
            if !glare.is_empty() {
                let (x, y) = (
                    (i % cols) as f64 / s - b.outer[0] / 2.0,
                    b.outer[1] / 2.0 - (i / cols) as f64 / s,
                );
                for &(c, r, a) in glare {
                    let d2 = (x - c[0]).powi(2) + (y - c[1]).powi(2);
                    extra += f64::from(a) * (-d2 / (2.0 * r * r)).exp();
                }
            }
            for ch in 0..3 {
                px[ch] = (f64::from(px[ch]) * gains[ch] * shadow
                    + extra * (1.0 - 0.7 * (1.0 - shadow))) as f32;
            }
        }
        let mut out = Mat::default();
        top.convert_to(&mut out, core::CV_8UC3, 1.0, 0.0)?;
        Ok(out)
    }

    /// The camera's small motion at time t: a slight tremor plus a jolt each time a hand
    /// presses on the table.
    fn shake(&self, t: f64) -> Mat3 {
        let mut rng = Rng::new(self.seed ^ 0x5a4e);
        let tremor = f64::from(rng.range(0.0, 0.0006))
            * if self.scene.style == super::scene::Style::Clean {
                0.0
            } else {
                1.0
            };
        let jolt = f64::from(rng.range(0.0, 0.002))
            * if self.scene.style == super::scene::Style::Clean {
                0.0
            } else {
                1.0
            };
        let phase = [
            rng.range(0.0, 6.3),
            rng.range(0.0, 6.3),
            rng.range(0.0, 6.3),
        ]
        .map(f64::from);
        let mut angles = [
            tremor * (t * 2.3 + phase[0]).sin() * (t * 0.7 + phase[1]).cos(),
            tremor * (t * 1.9 + phase[1]).sin() * (t * 0.5 + phase[2]).cos(),
            0.3 * tremor * (t * 1.3 + phase[2]).sin(),
        ];
        for &impact in &self.timeline.impacts {
            let dt = t - impact;
            if (0.0..1.0).contains(&dt) {
                let k = jolt * (-dt / 0.25).exp() * (dt * 55.0).sin();
                angles[0] += k;
                angles[1] += 0.6 * k;
            }
        }
        let r = mat3_mul(
            &rotation([1.0, 0.0, 0.0], angles[0]),
            &rotation([0.0, 1.0, 0.0], angles[1]),
        );
        mat3_mul(&r, &rotation([0.0, 0.0, 1.0], angles[2]))
    }

    /// Renders frame `index` and tells what it shows.
    pub fn frame(&mut self, index: usize) -> opencv::Result<(Mat, FrameFacts)> {
        let scene = self.scene;
        let t = index as f64 / scene.fps;
        let (setting, bumps) = self.setting_at(t);
        let state = self.board_state_index(t);
        let board = self.timeline.board_at(t).clone();
        let key = (state, bumps);
        if self.cached.as_ref().is_none_or(|(k, _)| *k != key) {
            let still = self.still(&board, &setting, bumps)?;
            self.cached = Some((key, still));
        }
        let mut canvas = self.cached.as_ref().expect("just filled").1.clone();
        let cam = self.canvas_camera(&setting.pose);
        let half = [scene.board.outer[0] / 2.0, scene.board.outer[1] / 2.0];
        let to_world = |p: Vec3| setting.placement.to_world([p[0], p[1]], p[2]);

        // The arm (drawn with a little motion blur: three instants within the exposure).
        let mut over = false;
        let pass = self.timeline.pass_at(t).cloned();
        let head = scene.atmosphere.head_shadow;
        if pass.is_some() || head > 0.0 {
            self.shadows(&mut canvas, &cam, &setting, t, pass.as_ref())?;
        }
        if let Some(pass) = &pass {
            let instants = [t - 0.33 / scene.fps, t];
            let mut layers = Vec::new();
            for &ti in &instants {
                let (tip, held) = pass.at(ti);
                let capsules = hand::arm(tip, pass.side, half[1], scene.board.thickness);
                over |= hand::over_board(&capsules, half);
                let mut layer = canvas.clone();
                if let Some((shape, color)) = held {
                    let solid = scene.pieces.solid(shape, color, scene.board.spacing[0]);
                    let base = to_world([tip[0], tip[1], tip[2] - solid.height() - 1.0]);
                    solids::draw(&mut layer, &cam, &solid, base, &scene.light);
                }
                let side = if pass.side < 0.0 { 0 } else { 1 };
                draw_arm(&mut layer, &cam, &capsules, &to_world, scene, side)?;
                layers.push(layer);
            }
            let mut blended = Mat::default();
            core::add_weighted(&layers[0], 0.35, &layers[1], 0.65, 0.0, &mut blended, -1)?;
            canvas = blended;
        }

        // Shake and lens.
        let turn = self.shake(t);
        let moved = (turn[0][1].abs() + turn[0][2].abs() + turn[1][2].abs()) > 2e-5;
        let fresh;
        let (mx, my) = if moved {
            fresh = self.maps(Some(&turn))?;
            (&fresh.0, &fresh.1)
        } else {
            (&self.base_maps.0, &self.base_maps.1)
        };
        let mut frame = Mat::default();
        imgproc::remap(
            &canvas,
            &mut frame,
            mx,
            my,
            imgproc::INTER_LINEAR,
            core::BORDER_REPLICATE,
            Scalar::default(),
        )?;

        // A camera out of focus.
        let defocus = f64::from(scene.atmosphere.defocus) * f64::from(frame.cols()) / 1280.0;
        if defocus > 0.3 {
            let mut soft = Mat::default();
            imgproc::gaussian_blur(
                &frame,
                &mut soft,
                Size::new(0, 0),
                defocus,
                0.0,
                core::BORDER_REPLICATE,
            )?;
            frame = soft;
        }

        // A bump blurs the frame it happens in.
        let bumped_now =
            self.timeline.changes.iter().any(|(at, c)| {
                !matches!(c, Change::Board(_)) && *at <= t && t - *at < 1.0 / scene.fps
            });
        if bumped_now {
            let mut blurred = Mat::default();
            imgproc::blur(
                &frame,
                &mut blurred,
                Size::new(9, 3),
                Point::new(-1, -1),
                core::BORDER_REPLICATE,
            )?;
            frame = blurred;
        }

        // Exposure: slow drift, and the camera's auto-exposure answering a bright or dark
        // sleeve over the board.
        let a = &scene.atmosphere;
        let mut rng = Rng::new(self.seed ^ 0xe4b0);
        let phase = f64::from(rng.range(0.0, 6.3));
        let mut exposure = 1.0
            + f64::from(a.exposure_drift) * ((t * 0.21 + phase).sin() + 0.5 * (t * 0.057).cos());
        if over {
            exposure *= 1.0 - f64::from(a.exposure_drift) * 0.8;
        }
        let mut out = Mat::default();
        frame.convert_to(&mut out, -1, exposure, 0.0)?;
        if !self.noise.is_empty() {
            let mut frng = Rng::new(self.seed ^ (index as u64).wrapping_mul(0x9e37_79b9));
            let temporal = &self.noise[1 + frng.below(self.noise.len() - 1)];
            for (bank, at) in [
                (&self.noise[0], (0, 0)),
                (temporal, (frng.below(32) as i32, frng.below(32) as i32)),
            ] {
                let roi = Mat::roi(bank, core::Rect::new(at.0, at.1, out.cols(), out.rows()))?;
                let mut noisy = Mat::default();
                core::add(&out, &roi, &mut noisy, &core::no_array(), core::CV_16SC3)?;
                noisy.convert_to(&mut out, core::CV_8UC3, 1.0, 0.0)?;
            }
        }
        if let Some(q) = a.jpeg_quality {
            let mut buf = Vector::<u8>::new();
            imgcodecs::imencode(
                ".jpg",
                &out,
                &mut buf,
                &Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, q]),
            )?;
            out = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)?;
        }

        let shaken = Camera {
            lens: scene.camera.lens.clone(),
            pose: setting.pose.turned(&turn),
        };
        let corners = scene
            .board
            .playing_corners()
            .map(|c| shaken.project(setting.placement.to_world(c, scene.board.thickness)));
        Ok((
            out,
            FrameFacts {
                pose: shaken.pose,
                corners,
                hand_over_board: over,
                board,
            },
        ))
    }

    /// Darkens the canvas under the arm and under a player's head.
    fn shadows(
        &self,
        canvas: &mut Mat,
        cam: &Camera,
        setting: &Setting,
        t: f64,
        pass: Option<&super::timeline::Pass>,
    ) -> opencv::Result<()> {
        let scene = self.scene;
        let light = &scene.light;
        let q = 4.0;
        let (w, h) = (canvas.cols() / 4, canvas.rows() / 4);
        let mut mask = Mat::new_rows_cols_with_default(h, w, core::CV_8U, Scalar::all(0.0))?;
        let surface = scene.board.thickness;
        let onto_board = |p: Vec3| -> Option<Point> {
            let world = setting.placement.to_world([p[0], p[1]], p[2]);
            let dz = (world[2] - surface).max(0.0);
            let ground = sub(
                world,
                mul(light.direction, dz / light.direction[2].max(0.15)),
            );
            let (px, depth) = cam.project_undistorted([ground[0], ground[1], surface]);
            (depth > 0.0).then(|| Point::new((px[0] / q * 16.0) as i32, (px[1] / q * 16.0) as i32))
        };
        // The mask holds how much light is lost (255 = all of it).
        let mut any = false;
        if let Some(pass) = pass {
            let (tip, _) = pass.at(t);
            let capsules = hand::arm(tip, pass.side, scene.board.outer[1] / 2.0, surface);
            let loss = 255.0 * 0.55 * light.diffuse / (light.ambient + light.diffuse);
            for c in &capsules {
                if let (Some(a), Some(b)) = (onto_board(c.a), onto_board(c.b)) {
                    let r = (c.radius[0] + c.radius[1]) / 2.0;
                    let (_, depth) = cam
                        .project_undistorted(setting.placement.to_world([c.a[0], c.a[1]], surface));
                    let thickness = (2.0 * r * cam.lens.focal / depth.max(1.0) / q).max(1.0) as i32;
                    imgproc::line(
                        &mut mask,
                        a,
                        b,
                        Scalar::all(loss),
                        thickness,
                        imgproc::LINE_AA,
                        4,
                    )?;
                    any = true;
                }
            }
        }
        let head = f64::from(scene.atmosphere.head_shadow);
        if head > 0.0 {
            let half = scene.board.outer[1] / 2.0;
            let centre = [
                0.35 * scene.board.outer[0] * (t * 0.13).sin(),
                -half * 0.9 + 40.0 * (t * 0.31).cos(),
            ];
            let pts: Vector<Point> = (0..24)
                .filter_map(|i| {
                    let a = i as f64 / 24.0 * std::f64::consts::TAU;
                    onto_board([
                        centre[0] + 140.0 * a.cos(),
                        centre[1] + 110.0 * a.sin(),
                        surface,
                    ])
                })
                .collect();
            if pts.len() == 24 {
                let mut head_mask =
                    Mat::new_rows_cols_with_default(h, w, core::CV_8U, Scalar::all(0.0))?;
                imgproc::fill_convex_poly(
                    &mut head_mask,
                    &pts,
                    Scalar::all(255.0 * head),
                    imgproc::LINE_AA,
                    4,
                )?;
                let mut both = Mat::default();
                core::max(&mask, &head_mask, &mut both)?;
                mask = both;
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
        let mut soft = Mat::default();
        imgproc::gaussian_blur(
            &mask,
            &mut soft,
            Size::new(0, 0),
            5.0,
            0.0,
            core::BORDER_REPLICATE,
        )?;
        let mut full = Mat::default();
        imgproc::resize(
            &soft,
            &mut full,
            canvas.size()?,
            0.0,
            0.0,
            imgproc::INTER_LINEAR,
        )?;
        let mut keep = Mat::default();
        full.convert_to(&mut keep, core::CV_8U, -1.0, 255.0)?;
        let mut keep3 = Mat::default();
        imgproc::cvt_color(&keep, &mut keep3, imgproc::COLOR_GRAY2BGR, 0)?;
        let mut out = Mat::default();
        core::multiply(canvas, &keep3, &mut out, 1.0 / 255.0, -1)?;
        *canvas = out;
        Ok(())
    }
}

fn mat3_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    super::camera::mat_mul(a, b)
}

fn draw_arm(
    frame: &mut Mat,
    cam: &Camera,
    capsules: &[Capsule],
    to_world: &dyn Fn(Vec3) -> Vec3,
    scene: &Scene,
    side: usize,
) -> opencv::Result<()> {
    let light = &scene.light;
    let mut order: Vec<(f64, &Capsule)> = capsules
        .iter()
        .map(|c| {
            let mid = to_world(mul(add(c.a, c.b), 0.5));
            (solids::depth_of(cam, mid), c)
        })
        .collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, c) in order {
        let color = if c.sleeve {
            scene.atmosphere.sleeve[side]
        } else {
            scene.atmosphere.skin[side]
        };
        let (a, da) = cam.project_undistorted(to_world(c.a));
        let (b, db) = cam.project_undistorted(to_world(c.b));
        if da <= 1.0 || db <= 1.0 {
            continue;
        }
        let ra = c.radius[0] * cam.lens.focal / da;
        let rb = c.radius[1] * cam.lens.focal / db;
        // Body in shade, then a lit band toward the light: a rounded limb.
        for (k, gain, shrink, shift) in [(0, 0.55, 1.0, 0.0), (1, 0.85, 0.6, 0.25)] {
            let _ = k;
            let col = [0, 1, 2].map(|ch| {
                f64::from(color[ch]) * gain * light.gain(ch, light.direction[2].max(0.3))
            });
            let (lx, ly) = (light.direction[0], -light.direction[1]);
            let off = [lx * shift * ra, ly * shift * ra];
            capsule_2d(
                frame,
                [a[0] + off[0], a[1] + off[1]],
                [b[0] + off[0], b[1] + off[1]],
                ra * shrink,
                rb * shrink,
                Scalar::new(col[0], col[1], col[2], 0.0),
            )?;
        }
    }
    Ok(())
}

fn capsule_2d(
    frame: &mut Mat,
    a: [f64; 2],
    b: [f64; 2],
    ra: f64,
    rb: f64,
    color: Scalar,
) -> opencv::Result<()> {
    let p = |x: [f64; 2]| Point::new((x[0] * 16.0) as i32, (x[1] * 16.0) as i32);
    imgproc::circle(
        frame,
        p(a),
        (ra * 16.0) as i32,
        color,
        -1,
        imgproc::LINE_AA,
        4,
    )?;
    imgproc::circle(
        frame,
        p(b),
        (rb * 16.0) as i32,
        color,
        -1,
        imgproc::LINE_AA,
        4,
    )?;
    let d = [b[0] - a[0], b[1] - a[1]];
    let len = d[0].hypot(d[1]);
    if len < 1e-6 {
        return Ok(());
    }
    let n = [-d[1] / len, d[0] / len];
    let quad: Vector<Point> = [
        [a[0] + n[0] * ra, a[1] + n[1] * ra],
        [b[0] + n[0] * rb, b[1] + n[1] * rb],
        [b[0] - n[0] * rb, b[1] - n[1] * rb],
        [a[0] - n[0] * ra, a[1] - n[1] * ra],
    ]
    .into_iter()
    .map(p)
    .collect();
    imgproc::fill_convex_poly(frame, &quad, color, imgproc::LINE_AA, 4)
}

fn draw_block(
    frame: &mut Mat,
    cam: &Camera,
    at: [f64; 2],
    size: Vec3,
    turn: f64,
    color: [f32; 3],
    light: &super::solids::Light,
) -> opencv::Result<()> {
    let (s, c) = turn.sin_cos();
    let corner = |sx: f64, sy: f64, z: f64| {
        let (x, y) = (sx * size[0] / 2.0, sy * size[1] / 2.0);
        [at[0] + c * x - s * y, at[1] + s * x + c * y, z]
    };
    let faces: [([f64; 2], [f64; 2], Vec3); 4] = [
        ([-1.0, -1.0], [1.0, -1.0], [s, -c, 0.0]),
        ([1.0, -1.0], [1.0, 1.0], [c, s, 0.0]),
        ([1.0, 1.0], [-1.0, 1.0], [-s, c, 0.0]),
        ([-1.0, 1.0], [-1.0, -1.0], [-c, -s, 0.0]),
    ];
    let project = |p: Vec3| {
        let (px, _) = cam.project_undistorted(p);
        Point::new((px[0] * 16.0) as i32, (px[1] * 16.0) as i32)
    };
    let paint = |normal: Vec3| {
        let facing = dot(normal, light.direction);
        Scalar::new(
            f64::from(color[0]) * light.gain(0, facing),
            f64::from(color[1]) * light.gain(1, facing),
            f64::from(color[2]) * light.gain(2, facing),
            0.0,
        )
    };
    for (a, b, normal) in faces {
        let middle = corner((a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, size[2] / 2.0);
        if dot(normal, sub(cam.pose.centre, middle)) <= 0.0 {
            continue;
        }
        let pts: Vector<Point> = [
            corner(a[0], a[1], size[2]),
            corner(b[0], b[1], size[2]),
            corner(b[0], b[1], 0.0),
            corner(a[0], a[1], 0.0),
        ]
        .into_iter()
        .map(project)
        .collect();
        imgproc::fill_convex_poly(frame, &pts, paint(normal), imgproc::LINE_AA, 4)?;
    }
    let top: Vector<Point> = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]]
        .iter()
        .map(|&[sx, sy]| project(corner(sx, sy, size[2])))
        .collect();
    imgproc::fill_convex_poly(frame, &top, paint([0.0, 0.0, 1.0]), imgproc::LINE_AA, 4)?;
    // Two clock faces on the top.
    for side in [-1.0, 1.0] {
        let face: Vector<Point> = [[-0.35, 0.1], [0.35, 0.1], [0.35, 0.8], [-0.35, 0.8]]
            .iter()
            .map(|&[sx, sy]| project(corner(sx, sy * side, size[2] + 0.5)))
            .collect();
        imgproc::fill_convex_poly(frame, &face, Scalar::all(30.0), imgproc::LINE_AA, 4)?;
    }
    let _ = mat_vec;
    Ok(())
}
