//! The camera's lens taken out of every frame before anything looks at it: the one a
//! calibration file gives, or, with no calibration, the one the board's own lines show
//! ([`crate::geometry::lens`]).
//!
//! The lens is settled before the game sees its first frame. Under every lens tried the
//! search runs the same locator the tracker starts with, so the first frame on which the
//! tracker could find the board is a frame on which the search finds it too: the game
//! never starts on one picture of the board and goes on with a straightened other.

use crate::geometry::calibration::{Calibration, Camera};
use crate::geometry::lens::{self, LensEstimate, Marking, Undistorter};
use crate::geometry::{BoardGeometry, eight, locate};
use opencv::core::Mat;
use opencv::prelude::*;

/// Video seconds between searches while no board has been seen: the search locates the
/// board under a dozen lenses, far more than one look costs.
const SEARCH_EVERY: f64 = 0.5;

/// Searches after which the pictures are used as taken: a board that cannot be located
/// under any lens in that many looks is not there, or not one the locator can find
/// (the tracker will say so).
const MAX_SEARCHES: u32 = 12;

/// What a frame is, with the lens taken out or not.
pub(super) enum Straightened {
    /// Look at the frame as it was taken.
    AsTaken,
    /// Look at this picture, the frame straightened.
    Look(Mat),
    /// The lens is still being searched for and this frame was not searched: skip it. At
    /// most [`MAX_SEARCHES`] × [`SEARCH_EVERY`] seconds of footage with no board in them.
    Skip,
}

/// The board whose lines the search straightens, found as the tracker finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BoardKind {
    /// A Go board of this many lines, or any of Go's sizes.
    Go(Option<usize>),
    /// An 8×8 board, checkered or lined.
    Eight,
}

impl BoardKind {
    fn marking(self) -> Marking {
        match self {
            BoardKind::Go(_) => Marking::DrawnLines,
            BoardKind::Eight => Marking::LinesOrSquareEdges,
        }
    }

    fn locate(self, picture: &Mat) -> opencv::Result<Option<BoardGeometry>> {
        Ok(match self {
            BoardKind::Go(size) => locate::locate(picture, size)?.geometry,
            BoardKind::Eight => eight::locate_as_seen(picture)?
                .board
                .map(|board| board.geometry),
        })
    }

    /// The lens under which the board's lines are straightest. An 8×8 board is looked for
    /// on the pictures as they are under every lens first, and only when none shows one
    /// with their contrast raised too: a lattice found on a contrast-raised picture under
    /// a weak lens can beat the strong lens the board's lines need (Mak-hos 300442, 9 moves
    /// lost), while a dim checkered board shows under no lens without it (Makruk 310576: 12
    /// searches of a second each at 1920×1080, and the clip recorded at 1.0× real time).
    fn estimate_lens(self, image: &Mat) -> opencv::Result<Option<LensEstimate>> {
        let as_seen = move |picture: &Mat| self.locate(picture);
        let found = lens::estimate(image, self.marking(), &as_seen)?;
        if found.is_some() || self != BoardKind::Eight {
            return Ok(found);
        }
        let raised = |picture: &Mat| -> opencv::Result<Option<BoardGeometry>> {
            Ok(eight::locate(picture)?.board.map(|board| board.geometry))
        };
        lens::estimate(image, self.marking(), &raised)
    }
}

/// What was decided about the lens, for the record's notes.
pub(super) struct Settled {
    pub message: String,
    /// Whether the user is told at once: the frames are straightened, or the search gave
    /// up. A lens left alone is only noted in the record.
    pub tell: bool,
}

enum State {
    /// Searching the lens on the board's lines.
    Searching {
        board: BoardKind,
        searches: u32,
        next_time: f64,
    },
    /// Straightening with this camera, whose matrix is for pictures `calibrated_size` big.
    Correcting {
        camera: Camera,
        calibrated_size: Option<[u32; 2]>,
        made: Option<Box<Undistorter>>,
    },
    /// Pictures are used as taken.
    AsTaken,
}

pub(super) struct LensCorrection {
    state: State,
}

impl LensCorrection {
    /// A calibration's camera when it has one; a search on the board's lines with no
    /// calibration at all; the pictures as taken with a calibration that has no camera
    /// (an operator's corners or markers were measured in the pictures as taken).
    pub fn new(calibration: Option<&Calibration>, board: BoardKind) -> Self {
        let state = match calibration {
            Some(Calibration {
                camera: Some(camera),
                image_size,
                ..
            }) => State::Correcting {
                camera: camera.clone(),
                calibrated_size: *image_size,
                made: None,
            },
            None => State::Searching {
                board,
                searches: 0,
                next_time: f64::NEG_INFINITY,
            },
            Some(_) => State::AsTaken,
        };
        LensCorrection { state }
    }

    /// `image` straightened, or the word to skip it; and, the first time the search ends,
    /// what it decided. `stills` frames are each searched (one image, one position).
    pub fn apply(
        &mut self,
        image: &Mat,
        time: f64,
        stills: bool,
    ) -> opencv::Result<(Straightened, Option<Settled>)> {
        let mut settled = None;
        if let State::Searching {
            board,
            searches,
            next_time,
        } = &mut self.state
        {
            if !stills && time < *next_time {
                return Ok((Straightened::Skip, None));
            }
            *searches += 1;
            *next_time = time + SEARCH_EVERY;
            let board = *board;
            match board.estimate_lens(image)? {
                Some(found) if found.worth_correcting() => {
                    settled = Some(Settled {
                        message: format!(
                            "the camera's lens bends the board's lines (k1 {:.3} for a focal \
                             length of the picture's longest side); every frame is \
                             straightened: the grid lies on the lines {:.1} against {} as \
                             seen",
                            found.k1,
                            found.straightness,
                            seen(&found)
                        ),
                        tell: true,
                    });
                    self.state = State::Correcting {
                        camera: found.camera(image.cols(), image.rows()),
                        calibrated_size: Some([image.cols() as u32, image.rows() as u32]),
                        made: None,
                    };
                }
                Some(found) => {
                    settled = Some(Settled {
                        message: format!(
                            "the camera's lens keeps the board's lines straight enough (the \
                             best lens, k1 {:.3}, lays the grid on the lines {:.1} against \
                             {} as seen); the pictures are used as taken",
                            found.k1,
                            found.straightness,
                            seen(&found)
                        ),
                        tell: false,
                    });
                    self.state = State::AsTaken;
                }
                None if *searches >= MAX_SEARCHES => {
                    settled = Some(Settled {
                        message: format!(
                            "no board located under any lens in {MAX_SEARCHES} looks; the \
                             pictures are used as taken"
                        ),
                        tell: true,
                    });
                    self.state = State::AsTaken;
                }
                None if stills => return Ok((Straightened::AsTaken, None)),
                None => return Ok((Straightened::Skip, None)),
            }
        }
        let picture = match &mut self.state {
            State::Searching { .. } | State::AsTaken => {
                return Ok((Straightened::AsTaken, settled));
            }
            State::Correcting {
                camera,
                calibrated_size,
                made,
            } => {
                let size = (image.cols(), image.rows());
                let undistorter = match made {
                    Some(undistorter) if undistorter.size() == size => undistorter,
                    _ => {
                        let camera = camera.for_width(*calibrated_size, image.cols());
                        made.insert(Box::new(Undistorter::new(&camera, image)?))
                    }
                };
                undistorter.apply(image)?
            }
        };
        Ok((Straightened::Look(picture), settled))
    }
}

/// The grid's straightness as seen, for a note.
fn seen(found: &LensEstimate) -> String {
    found
        .straightness_as_seen
        .map_or_else(|| "no board found".into(), |s| format!("{s:.1}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Scalar};

    fn blank() -> Mat {
        Mat::new_rows_cols_with_default(240, 320, CV_8UC3, Scalar::all(128.0)).unwrap()
    }

    fn looked(result: (Straightened, Option<Settled>)) -> bool {
        !matches!(result.0, Straightened::Skip)
    }

    #[test]
    fn video_with_no_board_is_searched_twice_a_second_and_then_taken_as_it_is() {
        let mut lens = LensCorrection::new(None, BoardKind::Go(None));
        let mut settled = Vec::new();
        let mut looks = 0;
        for frame in 0..200 {
            let (straightened, note) = lens.apply(&blank(), f64::from(frame) * 0.1, false).unwrap();
            looks += usize::from(!matches!(straightened, Straightened::Skip));
            settled.extend(note.map(|n| (frame, n.message)));
        }
        // Searched at 0, 0.5, … 5.5 s: the twelfth search gives up, and every frame from
        // then on is looked at as taken.
        assert_eq!(
            settled.len(),
            1,
            "{:?}",
            settled.iter().map(|s| &s.1).collect::<Vec<_>>()
        );
        assert_eq!(settled[0].0, 55);
        assert!(settled[0].1.contains("used as taken"));
        assert_eq!(looks, 200 - 55);
    }

    #[test]
    fn a_dim_checkered_board_shows_its_lens_once_its_contrast_is_raised() {
        // The start of Makruk 310576: no lens shows its squares on the picture as it is.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/makruk/dim-checkered-makruk.jpg"
        );
        let image = opencv::imgcodecs::imread(path, opencv::imgcodecs::IMREAD_COLOR).unwrap();
        let as_seen = |picture: &Mat| BoardKind::Eight.locate(picture);
        assert!(
            lens::estimate(&image, Marking::LinesOrSquareEdges, &as_seen)
                .unwrap()
                .is_none()
        );
        let found = BoardKind::Eight
            .estimate_lens(&image)
            .unwrap()
            .expect("found with the contrast raised");
        assert!(!found.worth_correcting(), "k1 {}", found.k1);
    }

    #[test]
    fn stills_are_each_looked_at_while_the_lens_is_unknown() {
        let mut lens = LensCorrection::new(None, BoardKind::Eight);
        assert!(looked(lens.apply(&blank(), 0.0, true).unwrap()));
        assert!(looked(lens.apply(&blank(), 0.0, true).unwrap()));
    }

    #[test]
    fn a_calibration_without_a_camera_leaves_the_pictures_as_taken() {
        let calibration = Calibration {
            size: Some(19),
            corners: Some([[10.0, 10.0], [300.0, 10.0], [300.0, 230.0], [10.0, 230.0]]),
            image_size: Some([320, 240]),
            camera: None,
            markers: None,
        };
        let mut lens = LensCorrection::new(Some(&calibration), BoardKind::Go(None));
        let (straightened, note) = lens.apply(&blank(), 0.0, false).unwrap();
        assert!(note.is_none());
        assert!(matches!(straightened, Straightened::AsTaken));
    }

    #[test]
    fn a_calibrated_camera_is_scaled_to_the_frames_it_straightens() {
        let camera = Camera {
            matrix: [[640.0, 0.0, 320.0], [0.0, 640.0, 240.0], [0.0, 0.0, 1.0]],
            distortion: vec![-0.2, 0.0, 0.0, 0.0, 0.0],
            rms_error: None,
        };
        let calibration = Calibration {
            size: None,
            corners: None,
            image_size: Some([640, 480]),
            camera: Some(camera),
            markers: None,
        };
        let mut lens = LensCorrection::new(Some(&calibration), BoardKind::Go(None));
        let (straightened, _) = lens.apply(&blank(), 0.0, false).unwrap();
        let Straightened::Look(picture) = straightened else {
            panic!("a calibrated camera straightens every frame")
        };
        assert_eq!((picture.cols(), picture.rows()), (320, 240));
        assert_eq!(
            calibration
                .camera
                .unwrap()
                .for_width(Some([640, 480]), 320)
                .matrix[0][0],
            320.0
        );
    }
}
