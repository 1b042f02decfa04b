//! Pieces as solids of revolution, drawn by casting a ray through every (sub)pixel they
//! may cover: the silhouette, the parallax of a tall piece on an oblique view, the side
//! of a stone seen from low, the highlight that moves with the light — all follow from the
//! geometry, with nothing faked per view.

use super::camera::{Camera, Vec3, add, dot, mul, sub, unit};
use opencv::core::{self, Mat};
use opencv::prelude::*;

/// Radius as a function of height above the base, sampled evenly from 0 to `height`.
#[derive(Clone, Debug)]
pub struct Profile {
    pub height: f64,
    radii: Vec<f64>,
}

impl Profile {
    pub fn from_fn(height: f64, samples: usize, radius: impl Fn(f64) -> f64) -> Profile {
        let radii = (0..=samples)
            .map(|i| radius(i as f64 / samples as f64).max(0.0))
            .collect();
        Profile { height, radii }
    }

    /// A lens-shaped Go stone: widest at mid-height, `roundness` 2 is an ellipse, lower
    /// values are sharper-edged (Japanese double-convex stones), higher ones flatter-topped
    /// (Chinese single-convex and plastic stones).
    pub fn lens(radius: f64, height: f64, roundness: f64) -> Profile {
        Profile::from_fn(height, 32, |t| {
            let d = (2.0 * t - 1.0).abs();
            radius * (1.0 - d.powf(roundness)).max(0.0).powf(1.0 / roundness)
        })
    }

    pub fn sphere(radius: f64) -> Profile {
        Profile::from_fn(2.0 * radius, 32, |t| {
            let d = 2.0 * t - 1.0;
            radius * (1.0 - d * d).max(0.0).sqrt()
        })
    }

    /// A disc with slightly rounded edges (draughts men, bottle caps).
    pub fn disc(radius: f64, height: f64) -> Profile {
        let bevel = (0.25 * height).min(radius * 0.2);
        Profile::from_fn(height, 24, |t| {
            let h = t * height;
            let edge = h.min(height - h);
            if edge >= bevel {
                radius
            } else {
                radius - bevel + (bevel * bevel - (bevel - edge).powi(2)).max(0.0).sqrt()
            }
        })
    }

    /// The same shape upside down (a promoted Bia is turned over).
    pub fn flipped(&self) -> Profile {
        let mut radii = self.radii.clone();
        radii.reverse();
        Profile {
            height: self.height,
            radii,
        }
    }

    pub fn max_radius(&self) -> f64 {
        self.radii.iter().copied().fold(0.0, f64::max)
    }

    fn at(&self, h: f64) -> f64 {
        if h < 0.0 || h > self.height {
            return -1.0;
        }
        let n = self.radii.len() - 1;
        let x = h / self.height * n as f64;
        let i = (x.floor() as usize).min(n - 1);
        let f = x - i as f64;
        self.radii[i] * (1.0 - f) + self.radii[i + 1] * f
    }

    fn slope(&self, h: f64) -> f64 {
        let dh = self.height / (self.radii.len() - 1) as f64;
        let lo = (h - dh * 0.5).max(0.0);
        let hi = (h + dh * 0.5).min(self.height);
        (self.at(hi) - self.at(lo)) / (hi - lo).max(1e-9)
    }
}

/// How a surface returns light. Colours are BGR on a 0–255 scale for a white light.
#[derive(Clone, Debug)]
pub struct Material {
    pub color: [f64; 3],
    /// Share of light reflected as a highlight (0 matte slate … 1 glass).
    pub specular: f64,
    pub shininess: f64,
    /// Clam-shell stripes: amplitude (0–255 scale) and stripes per millimetre.
    pub stripes: f64,
    pub stripe_freq: f64,
}

impl Material {
    pub fn matte(color: [f64; 3]) -> Material {
        Material {
            color,
            specular: 0.05,
            shininess: 8.0,
            stripes: 0.0,
            stripe_freq: 0.0,
        }
    }
}

/// One solid of revolution about a vertical axis, `offset` from the piece's base centre.
#[derive(Clone, Debug)]
pub struct Part {
    pub offset: Vec3,
    pub profile: Profile,
    pub material: Material,
}

/// A piece: one or more parts (a king in Mak-hos is two discs; a Makruk horse a body and
/// a head).
#[derive(Clone, Debug)]
pub struct Solid {
    pub parts: Vec<Part>,
}

impl Solid {
    pub fn single(profile: Profile, material: Material) -> Solid {
        Solid {
            parts: vec![Part {
                offset: [0.0; 3],
                profile,
                material,
            }],
        }
    }

    pub fn height(&self) -> f64 {
        self.parts
            .iter()
            .map(|p| p.offset[2] + p.profile.height)
            .fold(0.0, f64::max)
    }

    pub fn reach(&self) -> f64 {
        self.parts
            .iter()
            .map(|p| p.offset[0].hypot(p.offset[1]) + p.profile.max_radius())
            .fold(0.0, f64::max)
    }

    /// Discs (in the base plane, relative to the base centre) that cover the piece's
    /// silhouette as a light from direction `light` (unit, toward the light) throws it on
    /// the ground: what the shadow renderer draws.
    pub fn shadow_discs(&self, light: Vec3) -> Vec<([f64; 2], f64)> {
        let lean = [
            -light[0] / light[2].max(0.15),
            -light[1] / light[2].max(0.15),
        ];
        let mut discs = Vec::new();
        for part in &self.parts {
            let steps = 8;
            for i in 0..=steps {
                let h = part.profile.height * i as f64 / steps as f64;
                let z = part.offset[2] + h;
                let r = part.profile.at(h);
                if r > 0.0 {
                    discs.push((
                        [part.offset[0] + lean[0] * z, part.offset[1] + lean[1] * z],
                        r,
                    ));
                }
            }
        }
        discs
    }
}

/// The light of a scene: one main source (a lamp or a window) plus what the room
/// scatters.
#[derive(Clone, Debug)]
pub struct Light {
    /// Unit vector toward the main source.
    pub direction: Vec3,
    /// Per-channel gain of the main source (BGR), 1 = white.
    pub color: [f64; 3],
    pub ambient: f64,
    /// Per-channel colour of the scattered light: a warm lamp in a room lit by a cool
    /// window is the "mixed" light of many halls.
    pub ambient_color: [f64; 3],
    pub diffuse: f64,
}

impl Light {
    /// What a surface whose normal makes cosine `facing` with the main light gets, per
    /// channel (times its own colour).
    pub fn gain(&self, ch: usize, facing: f64) -> f64 {
        self.ambient * self.ambient_color[ch] + self.diffuse * facing.max(0.0) * self.color[ch]
    }
}

struct Hit {
    t: f64,
    normal: Vec3,
    point: Vec3,
    part: usize,
}

fn intersect_part(origin: Vec3, dir: Vec3, base: Vec3, part: &Part) -> Option<Hit> {
    let axis = add(base, part.offset);
    let rmax = part.profile.max_radius();
    let height = part.profile.height;
    // Bounding cylinder: the ray's span inside both the slab and the infinite cylinder.
    let (mut t0, mut t1) = (0.0f64, f64::INFINITY);
    if dir[2].abs() > 1e-12 {
        let a = (axis[2] - origin[2]) / dir[2];
        let b = (axis[2] + height - origin[2]) / dir[2];
        t0 = t0.max(a.min(b));
        t1 = t1.min(a.max(b));
    } else if origin[2] < axis[2] || origin[2] > axis[2] + height {
        return None;
    }
    let (ox, oy) = (origin[0] - axis[0], origin[1] - axis[1]);
    let qa = dir[0] * dir[0] + dir[1] * dir[1];
    if qa > 1e-12 {
        let qb = 2.0 * (ox * dir[0] + oy * dir[1]);
        let qc = ox * ox + oy * oy - rmax * rmax;
        let disc = qb * qb - 4.0 * qa * qc;
        if disc < 0.0 {
            return None;
        }
        let s = disc.sqrt();
        t0 = t0.max((-qb - s) / (2.0 * qa));
        t1 = t1.min((-qb + s) / (2.0 * qa));
    }
    if t0 >= t1 {
        return None;
    }
    let inside = |t: f64| {
        let p = add(origin, mul(dir, t));
        let h = p[2] - axis[2];
        let r = part.profile.at(h);
        r >= 0.0 && (p[0] - axis[0]).hypot(p[1] - axis[1]) <= r
    };
    let step = (rmax.min(height) / 6.0).max(0.05);
    let steps = ((t1 - t0) / step).ceil().clamp(2.0, 200.0) as usize;
    let dt = (t1 - t0) / steps as f64;
    let mut prev = t0;
    for i in 0..=steps {
        let t = t0 + dt * i as f64;
        if inside(t) {
            let (mut lo, mut hi) = (prev, t);
            if i == 0 {
                lo = t;
            }
            for _ in 0..8 {
                let mid = 0.5 * (lo + hi);
                if inside(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let point = add(origin, mul(dir, hi));
            let h = point[2] - axis[2];
            let radial = [point[0] - axis[0], point[1] - axis[1]];
            let rho = radial[0].hypot(radial[1]).max(1e-9);
            // A flat top or bottom face (a disc, a bowl's rim) faces straight up or down.
            let cap = 0.02 * height;
            let normal = if h > height - cap && rho < part.profile.at(height) - 0.2 {
                [0.0, 0.0, 1.0]
            } else if h < cap && rho < part.profile.at(0.0) - 0.2 {
                [0.0, 0.0, -1.0]
            } else {
                let slope = part.profile.slope(h);
                unit([radial[0] / rho, radial[1] / rho, -slope])
            };
            return Some(Hit {
                t: hi,
                normal,
                point,
                part: 0,
            });
        }
        prev = t;
    }
    None
}

/// Shades one surface point seen along `dir`.
fn shade(hit: &Hit, dir: Vec3, base: Vec3, material: &Material, light: &Light) -> [f64; 3] {
    let n = hit.normal;
    let l = light.direction;
    let diffuse = dot(n, l).max(0.0);
    let view = mul(dir, -1.0);
    let half = unit(add(l, view));
    let spec = material.specular * dot(n, half).max(0.0).powf(material.shininess);
    // The sky of a room: surfaces facing up catch more of it than the sides near the
    // board, which the board and neighbours hide (a cheap ambient occlusion).
    let up = 0.55 + 0.45 * n[2];
    let low = ((hit.point[2] - base[2]) / 3.0).clamp(0.0, 1.0);
    let ambient = light.ambient * up * (0.6 + 0.4 * low);
    let mut stripes = 0.0;
    if material.stripes > 0.0 {
        let u = hit.point[0] - base[0] + 0.3 * (hit.point[1] - base[1]);
        stripes = material.stripes * (u * material.stripe_freq * std::f64::consts::TAU).sin();
    }
    [0, 1, 2].map(|ch| {
        let body = material.color[ch] + stripes;
        body * (ambient * light.ambient_color[ch] + light.diffuse * diffuse * light.color[ch])
            + 255.0 * spec * light.color[ch]
    })
}

/// A piece as drawn once for one camera position: colour and coverage in a rectangle of
/// the picture. Drawing the same sprites in the same order gives the same picture as
/// ray-casting again, so a board state that differs by one stone costs one stone.
#[derive(Clone, Debug)]
pub struct Sprite {
    pub x: usize,
    pub y: usize,
    pub width: usize,
    pub height: usize,
    /// BGR and coverage (0–255) per pixel, row-major.
    pixels: Vec<[u8; 4]>,
}

impl Sprite {
    /// Blends the sprite onto an 8-bit BGR picture.
    pub fn blend_onto(&self, picture: &mut Mat) {
        let cols = picture.cols() as usize;
        let rows = picture.rows() as usize;
        let Ok(data) = picture.data_typed_mut::<core::Vec3b>() else {
            return;
        };
        for sy in 0..self.height {
            let y = self.y + sy;
            if y >= rows {
                break;
            }
            for sx in 0..self.width {
                let x = self.x + sx;
                if x >= cols {
                    break;
                }
                let s = self.pixels[sy * self.width + sx];
                if s[3] == 0 {
                    continue;
                }
                let alpha = f32::from(s[3]) / 255.0;
                let p = &mut data[y * cols + x];
                for ch in 0..3 {
                    p[ch] =
                        (f32::from(p[ch]) * (1.0 - alpha) + f32::from(s[ch]) * alpha).round() as u8;
                }
            }
        }
    }
}

/// Ray-casts `solid` standing at world point `base` as seen by `camera` (undistorted,
/// anti-aliased by 2×2 samples per pixel). `None` when it is behind the camera or
/// outside the picture.
pub fn sprite(camera: &Camera, solid: &Solid, base: Vec3, light: &Light) -> Option<Sprite> {
    let (width, height) = (camera.lens.width as usize, camera.lens.height as usize);
    let reach = solid.reach();
    let top = solid.height();
    let mut min = [f64::MAX; 2];
    let mut max = [f64::MIN; 2];
    for &z in &[0.0, top] {
        for &(dx, dy) in &[(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            let p = add(base, [dx * reach, dy * reach, z]);
            let (px, depth) = camera.project_undistorted(p);
            if depth <= 0.0 {
                return None;
            }
            for k in 0..2 {
                min[k] = min[k].min(px[k]);
                max[k] = max[k].max(px[k]);
            }
        }
    }
    let x0 = (min[0].floor().max(0.0)) as usize;
    let y0 = (min[1].floor().max(0.0)) as usize;
    let x1 = (max[0].ceil() + 1.0).min(width as f64).max(0.0) as usize;
    let y1 = (max[1].ceil() + 1.0).min(height as f64).max(0.0) as usize;
    if x1 <= x0 || y1 <= y0 {
        return None;
    }
    let origin = camera.pose.centre;
    const SUB: [(f64, f64); 4] = [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)];
    let (w, h) = (x1 - x0, y1 - y0);
    let mut pixels = vec![[0u8; 4]; w * h];
    for y in y0..y1 {
        for x in x0..x1 {
            let mut sum = [0.0; 3];
            let mut covered = 0;
            for &(sx, sy) in &SUB {
                let dir = unit(camera.pose.ray(&camera.lens, x as f64 + sx, y as f64 + sy));
                let mut best: Option<Hit> = None;
                for (index, part) in solid.parts.iter().enumerate() {
                    if let Some(mut hit) = intersect_part(origin, dir, base, part)
                        && best.as_ref().is_none_or(|b| hit.t < b.t)
                    {
                        hit.part = index;
                        best = Some(hit);
                    }
                }
                if let Some(hit) = best {
                    let c = shade(&hit, dir, base, &solid.parts[hit.part].material, light);
                    for ch in 0..3 {
                        sum[ch] += c[ch];
                    }
                    covered += 1;
                }
            }
            if covered == 0 {
                continue;
            }
            let p = &mut pixels[(y - y0) * w + (x - x0)];
            for ch in 0..3 {
                p[ch] = (sum[ch] / covered as f64).clamp(0.0, 255.0) as u8;
            }
            p[3] = (255 * covered / SUB.len()) as u8;
        }
    }
    Some(Sprite {
        x: x0,
        y: y0,
        width: w,
        height: h,
        pixels,
    })
}

/// Draws `solid` standing at world point `base` into an undistorted 8-bit BGR picture,
/// blending its anti-aliased edge with what is there.
pub fn draw(picture: &mut Mat, camera: &Camera, solid: &Solid, base: Vec3, light: &Light) {
    let camera = Camera {
        lens: super::camera::Lens {
            width: picture.cols() as u32,
            height: picture.rows() as u32,
            ..camera.lens.clone()
        },
        pose: camera.pose.clone(),
    };
    if let Some(sprite) = sprite(&camera, solid, base, light) {
        sprite.blend_onto(picture);
    }
}

/// The distance from the camera centre to a point: pieces are drawn far to near.
pub fn depth_of(camera: &Camera, point: Vec3) -> f64 {
    let d = sub(point, camera.pose.centre);
    dot(d, d)
}

#[cfg(test)]
mod tests {
    use super::super::camera::{Lens, Pose};
    use super::*;

    fn camera(centre: Vec3) -> Camera {
        Camera {
            lens: Lens {
                width: 200,
                height: 200,
                focal: 400.0,
                centre: [100.0, 100.0],
                k1: 0.0,
                k2: 0.0,
            },
            pose: Pose::looking_at(centre, [0.0, 0.0, 5.0], [0.0, 1.0, 0.0]),
        }
    }

    fn blank() -> Mat {
        Mat::new_rows_cols_with_default(200, 200, core::CV_8UC3, core::Scalar::all(0.0)).unwrap()
    }

    fn light() -> Light {
        Light {
            direction: unit([0.3, 0.2, 1.0]),
            color: [1.0; 3],
            ambient: 0.4,
            ambient_color: [1.0; 3],
            diffuse: 0.6,
        }
    }

    #[test]
    fn a_stone_seen_from_above_is_a_disc_of_its_radius() {
        let cam = camera([0.0, -0.001, 400.0]);
        let mut picture = blank();
        let stone = Solid::single(
            Profile::lens(11.0, 9.0, 2.0),
            Material::matte([200.0, 200.0, 200.0]),
        );
        draw(&mut picture, &cam, &stone, [0.0; 3], &light());
        let px = picture.data_typed::<core::Vec3b>().unwrap();
        let covered = px.iter().filter(|p| p[1] > 20).count() as f64;
        // Radius 11 mm at ~395 mm with f = 400: about 11.1 px, area ~ 390 px².
        let expected = std::f64::consts::PI * (11.0 * 400.0 / 395.5f64).powi(2);
        assert!(
            (covered - expected).abs() / expected < 0.08,
            "{covered} vs {expected}"
        );
    }

    #[test]
    fn a_tall_piece_leans_away_from_an_oblique_camera() {
        let cam = camera([0.0, -300.0, 300.0]);
        let mut picture = blank();
        let tall = Solid::single(
            Profile::from_fn(40.0, 8, |_| 6.0),
            Material::matte([200.0; 3]),
        );
        draw(&mut picture, &cam, &tall, [0.0; 3], &light());
        let px = picture.data_typed::<core::Vec3b>().unwrap();
        let (base, _) = cam.project_undistorted([0.0, 0.0, 0.0]);
        let rows: Vec<usize> = (0..200)
            .filter(|&y| (0..200).any(|x| px[y * 200 + x][1] > 20))
            .collect();
        let top_row = *rows.first().unwrap() as f64;
        assert!(
            top_row < base[1] - 15.0,
            "the top is drawn well above the base"
        );
    }

    #[test]
    fn profiles_flip_and_bound() {
        let p = Profile::from_fn(10.0, 10, |t| 5.0 * (1.0 - t));
        assert!((p.at(0.0) - 5.0).abs() < 1e-9);
        assert!((p.flipped().at(0.0)).abs() < 1e-9);
        assert!(p.at(11.0) < 0.0);
        assert!((Profile::disc(10.0, 3.0).max_radius() - 10.0).abs() < 1e-9);
    }
}
