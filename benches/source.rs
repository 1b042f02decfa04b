//! How fast a video source delivers frames on this machine: a 10 s 1920×1080 30 fps H.264
//! clip (made here, a board-like grid with a moving disc and sensor noise), read to the end
//! with every frame decoded to BGR and with none (grab only). The recorder analyses only
//! some frames, so the difference is what skipping the conversion buys.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kradan::source;
use opencv::core::{Mat, Point, Scalar, Size};
use opencv::prelude::*;
use opencv::{core, imgproc, videoio};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

const FPS: f64 = 30.0;

/// 10 s when measuring; 1 s when `cargo test --all-targets` runs the bench once to check it
/// works (criterion measures only when given `--bench`), which would otherwise spend half a
/// minute of every test run encoding the clip.
fn frames() -> u64 {
    if std::env::args().any(|a| a == "--bench") {
        300
    } else {
        30
    }
}

/// Writes the clip; None when this OpenCV cannot write H.264.
fn make_clip(dir: &Path, frames: u64) -> Option<PathBuf> {
    let path = dir.join("bench-1080p30.mp4");
    let fourcc = videoio::VideoWriter::fourcc('a', 'v', 'c', '1').ok()?;
    let size = Size::new(1920, 1080);
    let mut writer = videoio::VideoWriter::new(path.as_os_str(), fourcc, FPS, size, true).ok()?;
    if !writer.is_opened().ok()? {
        return None;
    }
    let mut board =
        Mat::new_size_with_default(size, core::CV_8UC3, Scalar::new(90.0, 160.0, 200.0, 0.0))
            .ok()?;
    for i in 0..19 {
        let at = 180 + i * 40;
        let line = |from: Point, to: Point, board: &mut Mat| {
            imgproc::line(board, from, to, Scalar::all(30.0), 2, imgproc::LINE_AA, 0)
        };
        line(Point::new(600, at), Point::new(1320, at), &mut board).ok()?;
        line(
            Point::new(600 + i * 40, 180),
            Point::new(600 + i * 40, 900),
            &mut board,
        )
        .ok()?;
    }
    let mut noise = Mat::new_size_with_default(size, core::CV_8UC3, Scalar::all(0.0)).ok()?;
    let mut frame = Mat::default();
    for i in 0..frames {
        core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(3.0)).ok()?;
        core::add(&board, &noise, &mut frame, &core::no_array(), -1).ok()?;
        let x = 200 + (i as i32 * 5) % 1500;
        imgproc::circle(
            &mut frame,
            Point::new(x, 540),
            60,
            Scalar::new(30.0, 60.0, 120.0, 0.0),
            -1,
            imgproc::LINE_AA,
            0,
        )
        .ok()?;
        writer.write(&frame).ok()?;
    }
    writer.release().ok()?;
    Some(path)
}

fn read_through(path: &Path, decode: bool, expected: u64) -> u64 {
    let mut video = source::open(path.to_str().expect("a UTF-8 path"), None).expect("opens");
    let mut frames = 0;
    while let Some(frame) = video.next_frame(decode).expect("reads") {
        black_box(frame.image.rows());
        frames += 1;
    }
    assert_eq!(frames, expected);
    frames
}

fn decode(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let frames = frames();
    let Some(clip) = make_clip(dir.path(), frames) else {
        eprintln!("skipped: this OpenCV cannot write H.264 (avc1) MP4");
        return;
    };
    let mut group = c.benchmark_group("source");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(40));
    group.throughput(Throughput::Elements(frames));
    group.bench_function("h264_1080p30_10s/decode", |b| {
        b.iter(|| read_through(&clip, true, frames))
    });
    group.bench_function("h264_1080p30_10s/grab_only", |b| {
        b.iter(|| read_through(&clip, false, frames))
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
