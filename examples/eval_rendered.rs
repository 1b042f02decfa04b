//! How often the board locator finds the right grid on rendered photos: boards of 9, 13
//! and 19 lines with up to 70 % of their points filled (from `reading::synth`), seen by a
//! pinhole camera from 0–50° off vertical, any side, filling 45–85 % of a 1280×720 frame
//! over a plain table.
//!
//! ```sh
//! cargo run --release --example eval_rendered -- [BOARDS] [--size-given] [--save DIR]
//! ```
//!
//! A grid counts as right when it has the right number of lines and each corner is within
//! 0.4 of a spacing of the true one: the renderer draws its grids a little off on purpose
//! (up to 0.1 cell shifted, 0.8 % scaled, turned and bent, as an imperfect rectification
//! leaves real ones), which puts a corner up to about 0.3 spacing from the ideal, while a
//! grid one line off is a whole spacing away. `--save DIR` writes the frames it got wrong.

use kradan::geometry::locate::locate;
use kradan::reading::synth;
use opencv::core::{Mat, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};

type Vec3 = [f64; 3];

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn unit(a: Vec3) -> Vec3 {
    let n = dot(a, a).sqrt();
    [a[0] / n, a[1] / n, a[2] / n]
}

/// A pinhole camera at `position` looking at `target`, image x to the right.
struct Camera {
    position: Vec3,
    forward: Vec3,
    right: Vec3,
    down: Vec3,
    focal: f64,
    centre: [f64; 2],
}

impl Camera {
    fn new(position: Vec3, target: Vec3, focal: f64, centre: [f64; 2]) -> Self {
        let forward = unit(sub(target, position));
        let sideways = cross([0.0, 0.0, 1.0], forward);
        // Straight down, "right" is any horizontal direction: take the board's x.
        let right = if dot(sideways, sideways) < 1e-12 {
            [1.0, 0.0, 0.0]
        } else {
            unit(sideways)
        };
        Camera {
            position,
            forward,
            right,
            down: cross(right, forward),
            focal,
            centre,
        }
    }

    fn project(&self, point: Vec3) -> [f64; 2] {
        let d = sub(point, self.position);
        let z = dot(d, self.forward);
        [
            self.centre[0] + self.focal * dot(d, self.right) / z,
            self.centre[1] + self.focal * dot(d, self.down) / z,
        ]
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let boards: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(60);
    let size_given = args.iter().any(|a| a == "--size-given");
    let save = args
        .iter()
        .position(|a| a == "--save")
        .and_then(|i| args.get(i + 1));
    let (width, height) = (1280.0, 720.0);
    let (mut found, mut right, mut wrong) = (0, 0, 0);
    for seed in 0..boards {
        let mut rng = synth::Rng::new(seed * 7919 + 13);
        let size = [9usize, 13, 19, 19][rng.below(4)];
        let board = synth::render(seed + 1000, size, 32).expect("the renderer works");
        let cells = f64::from(board.image.cols()) / 32.0;
        let tilt = f64::from(rng.range(0.0, 50.0)).to_radians();
        let azimuth = f64::from(rng.range(0.0, 360.0)).to_radians();
        let focal = f64::from(rng.range(0.8, 1.4)) * width;
        let fill = f64::from(rng.range(0.45, 0.85));
        let distance = focal * cells / (fill * height);
        // Grid point (c, r) is at board coordinates (c, r); the picture spans −1 … cells − 1.
        let centre = [cells / 2.0 - 1.0, cells / 2.0 - 1.0, 0.0];
        let camera = Camera::new(
            [
                centre[0] + distance * tilt.sin() * azimuth.cos(),
                centre[1] + distance * tilt.sin() * azimuth.sin(),
                distance * tilt.cos(),
            ],
            centre,
            focal,
            [width / 2.0, height / 2.0],
        );
        let picture: Vector<Point2f> = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
            .iter()
            .map(|&[u, v]| Point2f::new((u * cells * 32.0) as f32, (v * cells * 32.0) as f32))
            .collect();
        let seen: Vector<Point2f> = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
            .iter()
            .map(|&[u, v]| {
                let [x, y] = camera.project([u * cells - 1.0, v * cells - 1.0, 0.0]);
                Point2f::new(x as f32, y as f32)
            })
            .collect();
        let warp = imgproc::get_perspective_transform(&picture, &seen, opencv::core::DECOMP_LU)
            .expect("four points in general position");
        let table = Scalar::new(
            f64::from(rng.range(20.0, 200.0)),
            f64::from(rng.range(20.0, 200.0)),
            f64::from(rng.range(20.0, 200.0)),
            0.0,
        );
        let frame_size = Size::new(width as i32, height as i32);
        let mut frame =
            Mat::new_size_with_default(frame_size, opencv::core::CV_8UC3, table).expect("a frame");
        imgproc::warp_perspective(
            &board.image,
            &mut frame,
            &warp,
            frame_size,
            imgproc::INTER_LINEAR,
            opencv::core::BORDER_TRANSPARENT,
            Scalar::default(),
        )
        .expect("the warp works");

        let last = (size - 1) as f64;
        let truth: Vec<[f64; 2]> = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]]
            .iter()
            .map(|&[c, r]| camera.project([c, r, 0.0]))
            .collect();
        let spacing = (truth[1][0] - truth[0][0]).hypot(truth[1][1] - truth[0][1]) / last;
        let located = locate(&frame, size_given.then_some(size)).expect("locate runs");
        let stones =
            board.truth.iter().filter(|c| c.is_some()).count() as f64 / (size * size) as f64;
        let verdict = match &located.geometry {
            None => format!("not found: {}", located.notes.join("; ")),
            Some(geometry) => {
                found += 1;
                let corners = geometry.corners();
                // Which corner is "top-left" depends on the view: compare under the best
                // cyclic renaming.
                let error = (0..4)
                    .map(|turn| {
                        (0..4)
                            .map(|i| {
                                let t = truth[(i + turn) % 4];
                                (corners[i][0] - t[0]).hypot(corners[i][1] - t[1])
                            })
                            .fold(0.0, f64::max)
                    })
                    .fold(f64::MAX, f64::min);
                if geometry.size == size && error < 0.4 * spacing {
                    right += 1;
                    "right".to_string()
                } else {
                    wrong += 1;
                    format!(
                        "WRONG: {}x{}, corners {:.2} spacings off",
                        geometry.size,
                        geometry.size,
                        error / spacing
                    )
                }
            }
        };
        println!(
            "board {seed:3}: {size:2}x{size:<2} tilt {:4.1}° fill {fill:.2} stones {:3.0} %: {verdict}",
            tilt.to_degrees(),
            stones * 100.0
        );
        if let Some(dir) = save
            && verdict != "right"
        {
            let path = std::path::Path::new(dir).join(format!("board{seed}.png"));
            imgcodecs::imwrite_def(path.as_os_str(), &frame).expect("the frame is written");
        }
    }
    println!(
        "{boards} boards: {right} right, {wrong} wrong, {} not found ({found} found)",
        boards - found
    );
}
