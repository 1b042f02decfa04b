//! Debug pictures for `--debug-dir`: what the locator saw, the grid it fitted, and what
//! the reader called on every point.

use crate::games::Color;
use crate::geometry::BoardGeometry;
use crate::reading::Observation;
use opencv::core::{Mat, Point, Scalar, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::path::Path;

/// Points called with less confidence than this are boxed in the board picture.
pub const LOW_CONFIDENCE: f32 = 0.8;

/// Writes `DIR/<stem>-lines.png`, and when a grid was found `DIR/<stem>-grid.png` and
/// `DIR/<stem>-board.png`. `photo` is the working copy the segments and `grid` refer to.
pub fn write(
    dir: &Path,
    photo_path: &Path,
    photo: &Mat,
    segments: &[[f64; 4]],
    grid: Option<&BoardGeometry>,
    rectified: Option<&Mat>,
    observation: Option<&Observation>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let stem = photo_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("photo");
    let save = |name: &str, picture: &Mat| -> anyhow::Result<()> {
        let path = dir.join(format!("{stem}-{name}.png"));
        if !imgcodecs::imwrite(path.as_os_str(), picture, &Vector::new())? {
            anyhow::bail!("cannot write {}", path.display());
        }
        Ok(())
    };

    let mut lines = photo.clone();
    for &[x1, y1, x2, y2] in segments {
        imgproc::line(
            &mut lines,
            pt(x1, y1),
            pt(x2, y2),
            Scalar::new(0.0, 0.0, 255.0, 0.0),
            2,
            imgproc::LINE_AA,
            0,
        )?;
    }
    save("lines", &lines)?;

    if let Some(grid) = grid {
        let mut picture = photo.clone();
        let last = (grid.size - 1) as f64;
        let green = Scalar::new(0.0, 220.0, 0.0, 0.0);
        for i in 0..grid.size {
            let i = i as f64;
            for [a, b] in [
                [grid.to_image(i, 0.0), grid.to_image(i, last)],
                [grid.to_image(0.0, i), grid.to_image(last, i)],
            ] {
                imgproc::line(
                    &mut picture,
                    pt(a[0], a[1]),
                    pt(b[0], b[1]),
                    green,
                    1,
                    imgproc::LINE_AA,
                    0,
                )?;
            }
        }
        for row in 0..grid.size {
            for col in 0..grid.size {
                let [x, y] = grid.to_image(col as f64, row as f64);
                imgproc::circle(
                    &mut picture,
                    pt(x, y),
                    2,
                    Scalar::new(0.0, 0.0, 255.0, 0.0),
                    -1,
                    imgproc::LINE_AA,
                    0,
                )?;
            }
        }
        // Corner 1 marks where row 0 starts.
        let [x, y] = grid.to_image(0.0, 0.0);
        imgproc::circle(
            &mut picture,
            pt(x, y),
            8,
            Scalar::new(255.0, 0.0, 255.0, 0.0),
            2,
            imgproc::LINE_AA,
            0,
        )?;
        save("grid", &picture)?;
    }

    if let (Some(board), Some(observation)) = (rectified, observation) {
        save("board", &board_picture(board, observation)?)?;
    }
    Ok(())
}

/// The rectified board with each call marked: a red `B` disc outline, a blue `W` one, a
/// small green dot for empty; a yellow box and the confidence where it is low.
fn board_picture(board: &Mat, observation: &Observation) -> opencv::Result<Mat> {
    let mut picture = board.clone();
    let cell = board.cols() / (observation.size as i32 + 1);
    for row in 0..observation.size {
        for col in 0..observation.size {
            let reading = observation.get(row, col);
            let centre = Point::new((col as i32 + 1) * cell, (row as i32 + 1) * cell);
            match reading.color {
                None => imgproc::circle(
                    &mut picture,
                    centre,
                    2,
                    Scalar::new(0.0, 200.0, 0.0, 0.0),
                    -1,
                    imgproc::LINE_8,
                    0,
                )?,
                Some(color) => {
                    let (ink, letter) = match color {
                        Color::Black => (Scalar::new(0.0, 0.0, 255.0, 0.0), "B"),
                        Color::White => (Scalar::new(255.0, 80.0, 0.0, 0.0), "W"),
                    };
                    imgproc::circle(
                        &mut picture,
                        centre,
                        cell * 2 / 5,
                        ink,
                        2,
                        imgproc::LINE_AA,
                        0,
                    )?;
                    imgproc::put_text(
                        &mut picture,
                        letter,
                        centre + Point::new(-cell / 6, cell / 6),
                        imgproc::FONT_HERSHEY_SIMPLEX,
                        cell as f64 / 64.0,
                        ink,
                        1,
                        imgproc::LINE_AA,
                        false,
                    )?;
                }
            }
            let confidence = reading.confidence();
            if confidence < LOW_CONFIDENCE {
                let half = cell / 2 - 1;
                let yellow = Scalar::new(0.0, 230.0, 255.0, 0.0);
                imgproc::rectangle_points(
                    &mut picture,
                    centre - Point::new(half, half),
                    centre + Point::new(half, half),
                    yellow,
                    2,
                    imgproc::LINE_8,
                    0,
                )?;
                imgproc::put_text(
                    &mut picture,
                    &format!("{:.0}", confidence * 100.0),
                    centre + Point::new(-half + 1, half - 2),
                    imgproc::FONT_HERSHEY_PLAIN,
                    0.7,
                    yellow,
                    1,
                    imgproc::LINE_AA,
                    false,
                )?;
            }
        }
    }
    Ok(picture)
}

fn pt(x: f64, y: f64) -> Point {
    Point::new(x.round() as i32, y.round() as i32)
}
