//! The virtual camera: a pinhole with radial lens distortion, in the convention OpenCV's
//! `projectPoints` uses (world → camera `X_c = R·X_w + t`, camera x right, y down, z
//! forward; distortion `k1`, `k2`), so the truth it writes can be checked with OpenCV.
//!
//! The world is in millimetres with z up; the table top is z = 0.

pub type Vec3 = [f64; 3];

pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn mul(a: Vec3, k: f64) -> Vec3 {
    [a[0] * k, a[1] * k, a[2] * k]
}

pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn unit(a: Vec3) -> Vec3 {
    let n = dot(a, a).sqrt().max(1e-12);
    [a[0] / n, a[1] / n, a[2] / n]
}

/// Row-major 3×3.
pub type Mat3 = [[f64; 3]; 3];

pub fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, value) in row.iter_mut().enumerate() {
            *value = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

pub fn mat_vec(a: &Mat3, v: Vec3) -> Vec3 {
    [dot(a[0], v), dot(a[1], v), dot(a[2], v)]
}

pub fn transpose(a: &Mat3) -> Mat3 {
    [
        [a[0][0], a[1][0], a[2][0]],
        [a[0][1], a[1][1], a[2][1]],
        [a[0][2], a[1][2], a[2][2]],
    ]
}

/// Rotation by `angle` radians about the unit vector `axis` (Rodrigues).
pub fn rotation(axis: Vec3, angle: f64) -> Mat3 {
    let [x, y, z] = unit(axis);
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    [
        [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
        [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
        [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
    ]
}

/// The Rodrigues vector of a rotation matrix (what OpenCV calls `rvec`).
pub fn rodrigues(r: &Mat3) -> Vec3 {
    let cos = ((r[0][0] + r[1][1] + r[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0);
    let angle = cos.acos();
    if angle < 1e-9 {
        return [0.0; 3];
    }
    let axis = [r[2][1] - r[1][2], r[0][2] - r[2][0], r[1][0] - r[0][1]];
    let norm = dot(axis, axis).sqrt();
    if norm < 1e-9 {
        // A half turn: the axis is the column of R + I with the largest norm.
        let col = (0..3)
            .max_by(|&a, &b| r[a][a].total_cmp(&r[b][b]))
            .unwrap_or(0);
        let v = [
            r[0][col] + if col == 0 { 1.0 } else { 0.0 },
            r[1][col] + if col == 1 { 1.0 } else { 0.0 },
            r[2][col] + if col == 2 { 1.0 } else { 0.0 },
        ];
        return mul(unit(v), angle);
    }
    mul(axis, angle / norm)
}

/// Intrinsics and lens of one camera, fixed for a whole clip.
#[derive(Clone, Debug)]
pub struct Lens {
    pub width: u32,
    pub height: u32,
    pub focal: f64,
    pub centre: [f64; 2],
    /// OpenCV's k1, k2 (barrel distortion is negative k1).
    pub k1: f64,
    pub k2: f64,
}

impl Lens {
    /// Normalised undistorted image coordinates → distorted pixel.
    pub fn distort(&self, x: f64, y: f64) -> [f64; 2] {
        let r2 = x * x + y * y;
        let g = 1.0 + self.k1 * r2 + self.k2 * r2 * r2;
        [
            self.centre[0] + self.focal * x * g,
            self.centre[1] + self.focal * y * g,
        ]
    }

    /// Distorted pixel → undistorted pixel, by the fixed-point iteration OpenCV's
    /// `undistortPoints` uses; exact to far below a pixel for the mild lenses rendered.
    pub fn undistort_pixel(&self, u: f64, v: f64) -> [f64; 2] {
        let (xd, yd) = (
            (u - self.centre[0]) / self.focal,
            (v - self.centre[1]) / self.focal,
        );
        let (mut x, mut y) = (xd, yd);
        for _ in 0..8 {
            let r2 = x * x + y * y;
            let g = 1.0 + self.k1 * r2 + self.k2 * r2 * r2;
            x = xd / g;
            y = yd / g;
        }
        [
            self.centre[0] + self.focal * x,
            self.centre[1] + self.focal * y,
        ]
    }
}

/// Where the camera is and which way it looks.
#[derive(Clone, Debug)]
pub struct Pose {
    /// World → camera rotation (rows: camera x, y, z axes in world coordinates).
    pub rotation: Mat3,
    /// Camera centre in the world.
    pub centre: Vec3,
}

impl Pose {
    /// A camera at `centre` looking at `target`, with "up" in the picture toward
    /// `up_hint` (used only when the view is not straight down the hint).
    pub fn looking_at(centre: Vec3, target: Vec3, up_hint: Vec3) -> Pose {
        let forward = unit(sub(target, centre));
        let mut right = cross(forward, up_hint);
        if dot(right, right) < 1e-12 {
            right = cross(forward, [1.0, 0.0, 0.0]);
        }
        let right = unit(right);
        let down = cross(forward, right);
        Pose {
            rotation: [right, down, forward],
            centre,
        }
    }

    /// The same camera turned by `delta` (a rotation in camera coordinates): how a shake
    /// moves it. A pure rotation maps the picture by the homography `K·delta·K⁻¹`.
    pub fn turned(&self, delta: &Mat3) -> Pose {
        Pose {
            rotation: mat_mul(delta, &self.rotation),
            centre: self.centre,
        }
    }

    pub fn to_camera(&self, p: Vec3) -> Vec3 {
        mat_vec(&self.rotation, sub(p, self.centre))
    }

    /// OpenCV's `tvec`.
    pub fn translation(&self) -> Vec3 {
        mul(mat_vec(&self.rotation, self.centre), -1.0)
    }

    /// The world direction of the ray through undistorted pixel (u, v).
    pub fn ray(&self, lens: &Lens, u: f64, v: f64) -> Vec3 {
        let d = [
            (u - lens.centre[0]) / lens.focal,
            (v - lens.centre[1]) / lens.focal,
            1.0,
        ];
        mat_vec(&transpose(&self.rotation), d)
    }
}

/// A camera: lens and pose.
#[derive(Clone, Debug)]
pub struct Camera {
    pub lens: Lens,
    pub pose: Pose,
}

impl Camera {
    /// The undistorted pixel of a world point, and its depth (negative behind the camera).
    pub fn project_undistorted(&self, p: Vec3) -> ([f64; 2], f64) {
        let c = self.pose.to_camera(p);
        let z = c[2];
        (
            [
                self.lens.centre[0] + self.lens.focal * c[0] / z,
                self.lens.centre[1] + self.lens.focal * c[1] / z,
            ],
            z,
        )
    }

    /// The pixel a world point lands on in the delivered (distorted) picture.
    pub fn project(&self, p: Vec3) -> [f64; 2] {
        let c = self.pose.to_camera(p);
        self.lens.distort(c[0] / c[2], c[1] / c[2])
    }

    /// The homography from a plane `origin + u·e1 + v·e2` (u, v in the plane's own units)
    /// to undistorted pixels.
    pub fn plane_homography(&self, origin: Vec3, e1: Vec3, e2: Vec3) -> Mat3 {
        let r = &self.pose.rotation;
        let a = mat_vec(r, e1);
        let b = mat_vec(r, e2);
        let o = self.pose.to_camera(origin);
        let k = [
            [self.lens.focal, 0.0, self.lens.centre[0]],
            [0.0, self.lens.focal, self.lens.centre[1]],
            [0.0, 0.0, 1.0],
        ];
        let m = [[a[0], b[0], o[0]], [a[1], b[1], o[1]], [a[2], b[2], o[2]]];
        mat_mul(&k, &m)
    }

    /// The homography that moves undistorted pixels of this camera to those of the same
    /// camera turned by `delta`.
    pub fn turn_homography(&self, delta: &Mat3) -> Mat3 {
        let l = &self.lens;
        let k = [
            [l.focal, 0.0, l.centre[0]],
            [0.0, l.focal, l.centre[1]],
            [0.0, 0.0, 1.0],
        ];
        let k_inv = [
            [1.0 / l.focal, 0.0, -l.centre[0] / l.focal],
            [0.0, 1.0 / l.focal, -l.centre[1] / l.focal],
            [0.0, 0.0, 1.0],
        ];
        mat_mul(&mat_mul(&k, delta), &k_inv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens() -> Lens {
        Lens {
            width: 1280,
            height: 720,
            focal: 1000.0,
            centre: [640.0, 360.0],
            k1: -0.12,
            k2: 0.03,
        }
    }

    #[test]
    fn undistortion_inverts_distortion() {
        let l = lens();
        for &(x, y) in &[(0.0, 0.0), (0.5, -0.3), (-0.6, 0.35)] {
            let [u, v] = l.distort(x, y);
            let [ux, uy] = l.undistort_pixel(u, v);
            assert!((ux - (640.0 + 1000.0 * x)).abs() < 1e-3);
            assert!((uy - (360.0 + 1000.0 * y)).abs() < 1e-3);
        }
    }

    #[test]
    fn a_camera_above_sees_the_target_in_the_middle_with_x_to_the_right() {
        let pose = Pose::looking_at([0.0, -300.0, 600.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let camera = Camera { lens: lens(), pose };
        let ([u, v], z) = camera.project_undistorted([0.0, 0.0, 0.0]);
        assert!((u - 640.0).abs() < 1e-9 && (v - 360.0).abs() < 1e-9 && z > 0.0);
        let ([right, _], _) = camera.project_undistorted([100.0, 0.0, 0.0]);
        assert!(right > 640.0);
        let ([_, far], _) = camera.project_undistorted([0.0, 100.0, 0.0]);
        assert!(far < 360.0, "the far side of the table is up the picture");
    }

    #[test]
    fn rodrigues_round_trips() {
        let r = rotation([0.3, -0.5, 0.8], 1.1);
        let v = rodrigues(&r);
        let back = rotation(v, dot(v, v).sqrt());
        for i in 0..3 {
            for j in 0..3 {
                assert!((r[i][j] - back[i][j]).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn a_turned_camera_maps_points_by_the_turn_homography() {
        let pose = Pose::looking_at([50.0, -400.0, 500.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        let camera = Camera { lens: lens(), pose };
        let delta = rotation([0.2, 1.0, 0.1], 0.01);
        let turned = Camera {
            lens: lens(),
            pose: camera.pose.turned(&delta),
        };
        let h = camera.turn_homography(&delta);
        let p = [40.0, 70.0, 10.0];
        let (a, _) = camera.project_undistorted(p);
        let (b, _) = turned.project_undistorted(p);
        let m = mat_vec(&h, [a[0], a[1], 1.0]);
        assert!((m[0] / m[2] - b[0]).abs() < 1e-6 && (m[1] / m[2] - b[1]).abs() < 1e-6);
    }
}
