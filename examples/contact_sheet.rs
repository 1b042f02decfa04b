//! Stills from `kradan render`'s scenes, tiled: a quick look at what the seed varies.
//!
//! ```sh
//! cargo run --release --example contact_sheet -- OUT.png [FIRST_SEED] [COUNT] [SIZE]
//! ```

use kradan::render::scene::{Layout, SceneRequest, Style};
use kradan::render::{random_go_board, snapshot};
use opencv::core::{Mat, Size, Vector};
use opencv::{core, imgcodecs, imgproc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.first().map_or("contact.png", String::as_str);
    let first: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(12);
    let size: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(19);
    let mut tiles = Vec::new();
    for seed in first..first + count {
        let board = random_go_board(size, 0.35, 0.1, seed);
        let (image, _) = snapshot(
            Layout::Lines(size),
            &board,
            seed,
            Style::Varied,
            &SceneRequest::default(),
        )?;
        let mut tile = Mat::default();
        imgproc::resize(
            &image,
            &mut tile,
            Size::new(480, 270),
            0.0,
            0.0,
            imgproc::INTER_AREA,
        )?;
        tiles.push(tile);
    }
    let mut rows = Vec::new();
    for chunk in tiles.chunks(4) {
        let mut row = Mat::default();
        let mut v: Vector<Mat> = chunk.iter().cloned().collect();
        while v.len() < 4 {
            v.push(Mat::new_rows_cols_with_default(
                270,
                480,
                core::CV_8UC3,
                core::Scalar::all(0.0),
            )?);
        }
        core::hconcat(&v, &mut row)?;
        rows.push(row);
    }
    let mut sheet = Mat::default();
    core::vconcat(&rows.into_iter().collect::<Vector<Mat>>(), &mut sheet)?;
    imgcodecs::imwrite_def(out, &sheet)?;
    Ok(())
}
