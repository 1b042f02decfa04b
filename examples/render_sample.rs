//! Writes the demo's sample photo: a rendered 19×19 middle game (`reading::synth`, seed
//! 2008) seen at about 30° on a table, 1280×720, as `samples/go/rendered-19x19.jpg`, and
//! its true position as `samples/go/rendered-19x19.txt` (row 0 = the edge nearest the top
//! of the picture, as `kradan detect` prints it).
//!
//! ```sh
//! cargo run --release --example render_sample
//! ```

use kradan::games::Occupancy;
use kradan::reading::synth;
use opencv::core::{Mat, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::path::Path;

const SEED: u64 = 2008;

fn main() -> anyhow::Result<()> {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let board = synth::render_with(seed, 19, 32, 0.6)?;
    let side = board.image.cols() as f32;
    let picture: Vector<Point2f> = [[0.0, 0.0], [side, 0.0], [side, side], [0.0, side]]
        .iter()
        .map(|&[x, y]| Point2f::new(x, y))
        .collect();
    // A camera in front of the board and a little to the right, looking down at ~30°.
    let seen: Vector<Point2f> = [
        [402.0, 92.0],
        [905.0, 104.0],
        [1010.0, 650.0],
        [300.0, 628.0],
    ]
    .iter()
    .map(|&[x, y]| Point2f::new(x, y))
    .collect();
    let warp = imgproc::get_perspective_transform(&picture, &seen, opencv::core::DECOMP_LU)?;
    let size = Size::new(1280, 720);
    let mut frame = Mat::new_size_with_default(
        size,
        opencv::core::CV_8UC3,
        Scalar::new(62.0, 78.0, 96.0, 0.0),
    )?;
    imgproc::warp_perspective(
        &board.image,
        &mut frame,
        &warp,
        size,
        imgproc::INTER_AREA,
        opencv::core::BORDER_TRANSPARENT,
        Scalar::default(),
    )?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/go");
    let photo = dir.join("rendered-19x19.jpg");
    let quality = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, 88]);
    anyhow::ensure!(
        imgcodecs::imwrite(photo.as_os_str(), &frame, &quality)?,
        "cannot write {}",
        photo.display()
    );
    let mut truth = Occupancy::empty(19, 19);
    for (i, cell) in board.truth.iter().enumerate() {
        truth.set(i / 19, i % 19, *cell);
    }
    let text = dir.join("rendered-19x19.txt");
    std::fs::write(&text, truth.to_text_rows().join("\n") + "\n")?;
    println!("wrote {} and {}", photo.display(), text.display());
    Ok(())
}
