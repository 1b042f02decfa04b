//! Small videos and pictures made on the spot for the source tests: each frame shows its
//! own number as a row of black and white blocks, which survives MJPEG and H.264.
#![allow(dead_code)]

use opencv::core::{Mat, Rect, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use std::path::{Path, PathBuf};

/// Bits shown per picture: numbers up to 4095.
const BITS: i32 = 12;

/// A picture showing `number`.
pub fn numbered(number: u64, width: i32, height: i32) -> Mat {
    let mut picture = Mat::new_rows_cols_with_default(
        height,
        width,
        opencv::core::CV_8UC3,
        Scalar::new(40.0, 90.0, 160.0, 0.0),
    )
    .unwrap();
    let block = width / BITS;
    for bit in 0..BITS {
        let on = (number >> bit) & 1 == 1;
        let shade = if on { 255.0 } else { 0.0 };
        imgproc::rectangle(
            &mut picture,
            Rect::new(bit * block, height / 4, block, height / 2),
            Scalar::all(shade),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
    }
    picture
}

/// The number a picture made by [`numbered`] shows.
pub fn number_in(picture: &Mat) -> u64 {
    let block = picture.cols() / BITS;
    let mut number = 0;
    for bit in 0..BITS {
        let p = picture
            .at_2d::<opencv::core::Vec3b>(picture.rows() / 2, bit * block + block / 2)
            .unwrap();
        if p[1] > 128 {
            number |= 1 << bit;
        }
    }
    number
}

/// Writes `frames` numbered frames; `None` when this OpenCV cannot write the codec.
pub fn write_clip(
    path: &Path,
    codec: &str,
    frames: u64,
    fps: f64,
    size: (i32, i32),
) -> Option<PathBuf> {
    let c: Vec<char> = codec.chars().collect();
    let fourcc = videoio::VideoWriter::fourcc(c[0], c[1], c[2], c[3]).unwrap();
    let mut writer = videoio::VideoWriter::new(
        path.as_os_str(),
        fourcc,
        fps,
        Size::new(size.0, size.1),
        true,
    )
    .ok()?;
    if !writer.is_opened().unwrap() {
        return None;
    }
    for i in 0..frames {
        writer.write(&numbered(i, size.0, size.1)).unwrap();
    }
    writer.release().unwrap();
    Some(path.to_path_buf())
}

/// An MJPEG AVI, which every OpenCV build writes.
pub fn mjpeg_clip(dir: &Path, name: &str, frames: u64, fps: f64) -> PathBuf {
    write_clip(&dir.join(name), "MJPG", frames, fps, (240, 160)).expect("OpenCV writes MJPEG")
}

/// Writes a still showing `number`.
pub fn write_still(path: &Path, number: u64) {
    assert!(
        imgcodecs::imwrite(
            path.as_os_str(),
            &numbered(number, 240, 160),
            &Vector::new()
        )
        .unwrap()
    );
}
