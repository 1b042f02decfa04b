//! Evidence frames: the camera's picture before and after a decision, with the points it
//! is about circled and a caption saying what was decided, small enough to keep hundreds.

use super::RecorderError;
use crate::geometry::BoardGeometry;
use crate::record::{EventLog, Evidence};
use opencv::core::{Mat, Point, Scalar, Vector};
use opencv::imgcodecs;
use opencv::imgproc;
use opencv::prelude::*;

/// The longest side of an evidence picture: enough to see every stone of a 19×19 board
/// from a usual camera distance, at about 100 KB a picture.
pub const EVIDENCE_SIDE: i32 = 1280;

/// How a circled point is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A stone that appeared.
    Placed,
    /// A stone that went away.
    Lifted,
    /// A point a flag is about.
    Flagged,
}

impl Mark {
    fn color(self) -> Scalar {
        match self {
            Mark::Placed => Scalar::new(60.0, 220.0, 60.0, 0.0),
            Mark::Lifted => Scalar::new(255.0, 160.0, 40.0, 0.0),
            Mark::Flagged => Scalar::new(40.0, 40.0, 255.0, 0.0),
        }
    }
}

/// A frame reduced to evidence size, with the factor from the original.
pub fn reduce(image: &Mat) -> opencv::Result<(Mat, f64)> {
    Ok(crate::geometry::locate::reduced_to(image, EVIDENCE_SIDE)?
        .unwrap_or_else(|| (image.clone(), 1.0)))
}

/// JPEG bytes of `frame` (already reduced by `factor`) with the board's outline, the
/// `marks` (`[row, col]` in the game's frame of `geometry`) and a caption.
pub fn annotate(
    frame: &Mat,
    factor: f64,
    geometry: Option<&BoardGeometry>,
    marks: &[([usize; 2], Mark)],
    caption: &str,
) -> opencv::Result<Vec<u8>> {
    annotate_at(frame, factor, geometry, 0.0, marks, caption)
}

/// As [`annotate`], with the marks `offset` of a spacing past their lattice points: half
/// a spacing puts them in the middles of the squares the lattice's lines bound.
fn annotate_at(
    frame: &Mat,
    factor: f64,
    geometry: Option<&BoardGeometry>,
    offset: f64,
    marks: &[([usize; 2], Mark)],
    caption: &str,
) -> opencv::Result<Vec<u8>> {
    let mut picture = frame.clone();
    if let Some(geometry) = geometry {
        let geometry = geometry.scaled(factor);
        let corners: Vector<Point> = geometry
            .corners()
            .iter()
            .map(|&[x, y]| Point::new(x.round() as i32, y.round() as i32))
            .collect();
        let mut outline = Vector::<Vector<Point>>::new();
        outline.push(corners);
        imgproc::polylines(
            &mut picture,
            &outline,
            true,
            Scalar::new(255.0, 255.0, 0.0, 0.0),
            1,
            imgproc::LINE_AA,
            0,
        )?;
        let spacing = {
            let a = geometry.to_image(0.0, 0.0);
            let b = geometry.to_image((geometry.size - 1) as f64, 0.0);
            (a[0] - b[0]).hypot(a[1] - b[1]) / (geometry.size - 1).max(1) as f64
        };
        let radius = (spacing * 0.6).max(4.0).round() as i32;
        for &([row, col], mark) in marks {
            let [x, y] = geometry.to_image(col as f64 + offset, row as f64 + offset);
            imgproc::circle(
                &mut picture,
                Point::new(x.round() as i32, y.round() as i32),
                radius,
                mark.color(),
                2,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    caption_bar(&mut picture, caption)?;
    let mut bytes = Vector::<u8>::new();
    let params = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, 85]);
    imgcodecs::imencode(".jpg", &picture, &mut bytes, &params)?;
    Ok(bytes.to_vec())
}

/// Writes one frame into the record's `evidence/`, reduced and annotated as [`annotate`]
/// does, named by the seq of the event that will cite it and `label`
/// (`000012-board.jpg`); returns it as the event cites it.
pub fn write_frame(
    log: &EventLog,
    image: &Mat,
    geometry: Option<&BoardGeometry>,
    marks: &[([usize; 2], Mark)],
    caption: &str,
    label: &str,
) -> Result<Evidence, RecorderError> {
    let (small, factor) = reduce(image)?;
    let bytes = annotate(&small, factor, geometry, marks, caption)?;
    Ok(log.write_evidence(&format!("{:06}-{label}.jpg", log.next_seq()), &bytes)?)
}

/// Writes the annotated pair of one 8×8 decision into the record's `evidence/`: the
/// frame before it (when there is one) and the frame after, named by the seq of the
/// decision's first event; returns them as the events cite them. `corners` is the lattice
/// of the squares' corners (the board outlined at its edge); `marks` name squares, circled
/// at their middles.
pub fn write_pair(
    log: &EventLog,
    before: Option<&(Mat, f64)>,
    after: (&Mat, f64),
    corners: Option<&BoardGeometry>,
    marks: &[([usize; 2], Mark)],
    caption: &str,
) -> Result<Vec<Evidence>, RecorderError> {
    let seq = log.next_seq();
    let mut written = Vec::with_capacity(2);
    let before = before.map(|(picture, factor)| (picture, *factor));
    for (moment, frame) in [("before", before), ("after", Some(after))] {
        let Some((picture, factor)) = frame else {
            continue;
        };
        let bytes = annotate_at(
            picture,
            factor,
            corners,
            0.5,
            marks,
            &format!("{moment}: {caption}"),
        )?;
        written.push(log.write_evidence(&format!("{seq:06}-{moment}.jpg"), &bytes)?);
    }
    Ok(written)
}

fn caption_bar(picture: &mut Mat, caption: &str) -> opencv::Result<()> {
    let width = picture.cols();
    let scale = (f64::from(width) / 1800.0).clamp(0.35, 0.6);
    let line_height = (40.0 * scale).round() as i32;
    // Hershey fonts have no Thai or other non-ASCII glyphs; the caption is ASCII by design.
    let text: String = caption
        .chars()
        .map(|c| if c.is_ascii() { c } else { '?' })
        .collect();
    // Wrapped on words to the picture's width (a Hershey simplex letter is about 20 units
    // of scale wide), at most four lines.
    let per_line = ((f64::from(width) - 16.0) / (20.0 * scale)).max(20.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= per_line => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines.truncate(4);
    let height = line_height * lines.len() as i32 + 8;
    imgproc::rectangle(
        picture,
        opencv::core::Rect::new(0, 0, width, height),
        Scalar::all(0.0),
        -1,
        imgproc::LINE_8,
        0,
    )?;
    for (index, line) in lines.iter().enumerate() {
        imgproc::put_text(
            picture,
            line,
            Point::new(8, line_height * (index as i32 + 1)),
            imgproc::FONT_HERSHEY_SIMPLEX,
            scale,
            Scalar::all(255.0),
            1,
            imgproc::LINE_AA,
            false,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::CV_8UC3;

    #[test]
    fn annotated_evidence_is_a_reduced_jpeg() {
        let frame =
            Mat::new_rows_cols_with_default(1080, 1920, CV_8UC3, Scalar::all(128.0)).unwrap();
        let (small, factor) = reduce(&frame).unwrap();
        assert_eq!(small.cols(), EVIDENCE_SIDE);
        let geometry = BoardGeometry::from_corners(
            9,
            [
                [500.0, 100.0],
                [1400.0, 100.0],
                [1400.0, 1000.0],
                [500.0, 1000.0],
            ],
        )
        .unwrap();
        let bytes = annotate(
            &small,
            factor,
            Some(&geometry),
            &[([4, 4], Mark::Placed), ([0, 0], Mark::Flagged)],
            "move 12: B ee",
        )
        .unwrap();
        assert_eq!(&bytes[..2], &[0xFF, 0xD8], "a JPEG");
        let decoded =
            imgcodecs::imdecode(&Vector::from_slice(&bytes), imgcodecs::IMREAD_COLOR).unwrap();
        assert_eq!(decoded.cols(), EVIDENCE_SIDE);
        // The placed point is circled in green.
        let [x, y] = geometry.scaled(factor).to_image(4.0, 4.0);
        let radius = (900.0 / 8.0 * 0.6 * factor).round();
        let pixel = *decoded
            .at_2d::<opencv::core::Vec3b>(y.round() as i32, (x + radius).round() as i32)
            .unwrap();
        assert!(pixel[1] > 150 && pixel[0] < 140, "{pixel:?}");
    }

    #[test]
    fn an_eight_by_eight_board_is_outlined_at_its_edge_and_marked_in_its_squares() {
        let frame = Mat::new_rows_cols_with_default(800, 800, CV_8UC3, Scalar::all(128.0)).unwrap();
        // The squares' corners: 9 lines, 80 px squares from (80, 80).
        let corners = BoardGeometry::from_corners(
            9,
            [[80.0, 80.0], [720.0, 80.0], [720.0, 720.0], [80.0, 720.0]],
        )
        .unwrap();
        let bytes = annotate_at(
            &frame,
            1.0,
            Some(&corners),
            0.5,
            &[([2, 3], Mark::Placed)],
            "move 1: W 22-18",
        )
        .unwrap();
        let decoded =
            imgcodecs::imdecode(&Vector::from_slice(&bytes), imgcodecs::IMREAD_COLOR).unwrap();
        let at = |x: i32, y: i32| *decoded.at_2d::<opencv::core::Vec3b>(y, x).unwrap();
        // The outline runs along the board's edge, not half a square inside it.
        let cyan = |p: opencv::core::Vec3b| p[0] > 180 && p[1] > 180 && p[2] < 120;
        assert!(
            (77..=83).any(|y| cyan(at(400, y))),
            "no outline at the edge"
        );
        assert!(
            !(110..=130).any(|y| cyan(at(400, y))),
            "an outline inside the edge"
        );
        // Square (2, 3) spans x 320..400, y 240..320: circled about its middle (360, 280).
        let radius = (80.0f64 * 0.6).round() as i32;
        let ring = at(360 + radius, 280);
        assert!(ring[1] > 150 && ring[0] < 140, "{ring:?}");
    }
}
