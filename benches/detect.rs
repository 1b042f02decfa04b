//! The cost of reading a board from one camera frame, on one core: the full detection of
//! a 1920×1080 frame (board finding, rectification, reading every point) and re-reading
//! every point when the geometry is already known, as the video recorder does per frame.
//!
//! Then the lens: searching a camera's distortion on the board's lines (once, before a
//! recording's game starts) and straightening one frame with it (every frame after, when
//! the lens bends).
//!
//! The frame is a drawn 19×19 board with stones, warped obliquely into a 1080p picture
//! of a table; where `../shared/data` is present, a real photo scaled to 1080p is measured
//! too.

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::geometry::BoardGeometry;
use kradan::geometry::lens::{self, Marking, Undistorter};
use kradan::geometry::locate::locate;
use kradan::reading::learned::StoneModel;
use kradan::reading::{baseline, rectify};
use opencv::core::{Mat, Point, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgcodecs, imgproc};
use std::hint::black_box;
use std::path::Path;

const CELL: i32 = 32;

/// A drawn 19×19 board with a middle-game's worth of stones (about a third of the
/// points), seen at about 35° from above on a plain table, in a 1920×1080 frame.
fn rendered_frame() -> Mat {
    let side_px = 20 * CELL;
    let mut board = Mat::new_size_with_default(
        Size::new(side_px, side_px),
        opencv::core::CV_8UC3,
        Scalar::new(90.0, 170.0, 215.0, 0.0),
    )
    .expect("a board");
    for i in 1..=19 {
        let at = i * CELL;
        let line = Scalar::new(40.0, 50.0, 60.0, 0.0);
        imgproc::line(
            &mut board,
            Point::new(CELL, at),
            Point::new(19 * CELL, at),
            line,
            2,
            imgproc::LINE_AA,
            0,
        )
        .expect("a line");
        imgproc::line(
            &mut board,
            Point::new(at, CELL),
            Point::new(at, 19 * CELL),
            line,
            2,
            imgproc::LINE_AA,
            0,
        )
        .expect("a line");
    }
    for row in 1..=19 {
        for col in 1..=19 {
            let colour = match (row * 7 + col * 13) % 9 {
                0 | 4 => Scalar::new(25.0, 25.0, 25.0, 0.0),
                2 | 7 => Scalar::new(235.0, 240.0, 240.0, 0.0),
                _ => continue,
            };
            imgproc::circle(
                &mut board,
                Point::new(col * CELL, row * CELL),
                CELL * 15 / 32,
                colour,
                -1,
                imgproc::LINE_AA,
                0,
            )
            .expect("a stone");
        }
    }
    let side = board.cols() as f32;
    let source: Vector<Point2f> = [[0.0, 0.0], [side, 0.0], [side, side], [0.0, side]]
        .iter()
        .map(|&[x, y]| Point2f::new(x, y))
        .collect();
    let target: Vector<Point2f> = [
        [620.0, 170.0],
        [1330.0, 190.0],
        [1530.0, 960.0],
        [380.0, 930.0],
    ]
    .iter()
    .map(|&[x, y]| Point2f::new(x, y))
    .collect();
    let warp = calib3d::find_homography(&source, &target, &mut Mat::default(), 0, 3.0)
        .expect("four points give a homography");
    let mut frame = Mat::new_size_with_default(
        Size::new(1920, 1080),
        opencv::core::CV_8UC3,
        Scalar::new(70.0, 90.0, 110.0, 0.0),
    )
    .expect("a frame");
    imgproc::warp_perspective(
        &board,
        &mut frame,
        &warp,
        Size::new(1920, 1080),
        imgproc::INTER_LINEAR,
        opencv::core::BORDER_TRANSPARENT,
        Scalar::default(),
    )
    .expect("the warp works");
    frame
}

fn real_frame() -> Option<Mat> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/go-photos/goban_to_sgf/basic.jpg");
    let image = imgcodecs::imread(path.to_str()?, imgcodecs::IMREAD_COLOR).ok()?;
    if image.empty() {
        return None;
    }
    let mut frame = Mat::default();
    imgproc::resize(
        &image,
        &mut frame,
        Size::new(1920, 1080),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )
    .ok()?;
    Some(frame)
}

fn full_detection(frame: &Mat, model: Option<&StoneModel>) -> usize {
    let located = locate(frame, Some(19)).expect("locate runs");
    let geometry = located.geometry.expect("the board is found");
    read(frame, &geometry, model)
}

fn read(frame: &Mat, geometry: &BoardGeometry, model: Option<&StoneModel>) -> usize {
    let rectified = rectify(frame, geometry, CELL).expect("rectify runs");
    let observation = match model {
        Some(model) => model.read(&rectified, geometry.size, CELL),
        None => baseline::read(&rectified, geometry.size, CELL),
    }
    .expect("reading runs");
    observation
        .cells
        .iter()
        .filter(|c| c.color.is_some())
        .count()
}

fn detection(c: &mut Criterion) {
    // The figures are per core: OpenCV would otherwise spread filters over every core.
    opencv::core::set_num_threads(1).expect("OpenCV takes a thread count");
    let model = StoneModel::load_default().ok();
    let mut frames = vec![("rendered", rendered_frame())];
    if let Some(frame) = real_frame() {
        frames.push(("real photo", frame));
    } else {
        eprintln!("skipped the real photo: ../shared/data is absent");
    }
    for (name, frame) in &frames {
        c.bench_function(
            &format!("locate a 19x19 board in a 1920x1080 {name}"),
            |b| b.iter(|| locate(black_box(frame), Some(19)).expect("locate runs")),
        );
        c.bench_function(&format!("full detection of a 1920x1080 {name}"), |b| {
            b.iter(|| full_detection(black_box(frame), model.as_ref()))
        });
        let geometry = locate(frame, Some(19))
            .expect("locate runs")
            .geometry
            .expect("the board is found");
        c.bench_function(
            &format!("re-read all 361 points, known geometry, {name}, baseline"),
            |b| b.iter(|| read(black_box(frame), &geometry, None)),
        );
        if let Some(model) = &model {
            c.bench_function(
                &format!("re-read all 361 points, known geometry, {name}, learned"),
                |b| b.iter(|| read(black_box(frame), &geometry, Some(model))),
            );
        }
    }
    let (_, frame) = &frames[0];
    let locator = |picture: &Mat| Ok(locate(picture, Some(19))?.geometry);
    c.bench_function("search the lens of a 1920x1080 rendered frame", |b| {
        b.iter(|| lens::estimate(black_box(frame), Marking::DrawnLines, &locator).expect("runs"))
    });
    let found = lens::estimate(frame, Marking::DrawnLines, &locator)
        .expect("runs")
        .expect("the board is found");
    // The drawn frame's lens is straight; a webcam's typical barrel is what is timed.
    let mut camera = found.camera(frame.cols(), frame.rows());
    camera.distortion[0] = -0.3;
    let undistorter = Undistorter::new(&camera, frame).expect("a remap");
    c.bench_function("straighten a 1920x1080 frame, lens known", |b| {
        b.iter(|| undistorter.apply(black_box(frame)).expect("runs"))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = detection
}
criterion_main!(benches);
