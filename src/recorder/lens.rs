//! The camera's lens taken out of every frame before anything looks at it: the one a
//! calibration file gives, or, for a Go board and no calibration, the one the board's own
//! lines show ([`crate::geometry::lens`]).
//!
//! The lens is settled before the game sees its first frame. Under every lens tried the
//! search runs the same locator the tracker starts with, so the first frame on which the
//! tracker could find the board is a frame on which the search finds it too: the game
//! never starts on one picture of the board and goes on with a straightened other.

use crate::geometry::calibration::{Calibration, Camera};
use crate::geometry::lens::{self, Undistorter};
use crate::geometry::locate;
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
    /// Look at this picture.
    Look(Mat),
    /// The lens is still being searched for and this frame was not searched: skip it. At
    /// most [`MAX_SEARCHES`] × [`SEARCH_EVERY`] seconds of footage with no board in them.
    Skip,
}

/// What was decided about the lens, for the record's notes.
pub(super) struct Settled {
    pub message: String,
}

enum State {
    /// Searching the lens on the board's lines.
    Searching {
        size: Option<usize>,
        searches: u32,
        next_time: f64,
    },
    /// Straightening with this camera, whose matrix is for pictures `width` wide.
    Correcting {
        camera: Camera,
        width: Option<u32>,
        made: Option<Undistorter>,
    },
    /// Pictures are used as taken.
    AsTaken,
}

pub(super) struct LensCorrection {
    state: State,
}

impl LensCorrection {
    /// A calibration's camera when it has one; a search on the board's lines for a Go
    /// board with no calibration at all (an operator's corners or markers were measured
    /// in the pictures as taken); the pictures as taken otherwise: the score is how well
    /// the grid lies on drawn lines, which an 8×8 board's squares have not.
    pub fn new(calibration: Option<&Calibration>, go: bool, size: Option<usize>) -> Self {
        let state = match calibration {
            Some(Calibration {
                camera: Some(camera),
                image_size,
                ..
            }) => State::Correcting {
                camera: camera.clone(),
                width: image_size.map(|[width, _]| width),
                made: None,
            },
            None if go => State::Searching {
                size,
                searches: 0,
                next_time: f64::NEG_INFINITY,
            },
            _ => State::AsTaken,
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
            size,
            searches,
            next_time,
        } = &mut self.state
        {
            if !stills && time < *next_time {
                return Ok((Straightened::Skip, None));
            }
            *searches += 1;
            *next_time = time + SEARCH_EVERY;
            let size = *size;
            let locator = move |picture: &Mat| Ok(locate::locate(picture, size)?.geometry);
            match lens::estimate(image, &locator)? {
                Some(found) if found.worth_correcting() => {
                    settled = Some(Settled {
                        message: format!(
                            "the camera's lens bends the board's lines (k1 {:.3} for a focal \
                             length of the picture's longest side); every frame is \
                             straightened: the grid lies on the lines {:.1} against {} as \
                             seen",
                            found.k1,
                            found.straightness,
                            found
                                .straightness_as_seen
                                .map_or_else(|| "no board found".into(), |s| format!("{s:.1}"))
                        ),
                    });
                    self.state = State::Correcting {
                        camera: found.camera(image.cols(), image.rows()),
                        width: Some(image.cols() as u32),
                        made: None,
                    };
                }
                Some(found) => {
                    settled = Some(Settled {
                        message: format!(
                            "the camera's lens keeps the board's lines straight enough (best \
                             k1 {:.3}); the pictures are used as taken",
                            found.k1
                        ),
                    });
                    self.state = State::AsTaken;
                }
                None if *searches >= MAX_SEARCHES => {
                    settled = Some(Settled {
                        message: format!(
                            "no board located under any lens in {MAX_SEARCHES} looks; the \
                             pictures are used as taken"
                        ),
                    });
                    self.state = State::AsTaken;
                }
                None if stills => return Ok((Straightened::Look(image.clone()), None)),
                None => return Ok((Straightened::Skip, None)),
            }
        }
        let picture = match &mut self.state {
            State::Searching { .. } | State::AsTaken => image.clone(),
            State::Correcting {
                camera,
                width,
                made,
            } => {
                let fits = made
                    .as_ref()
                    .is_some_and(|m| m.size() == (image.cols(), image.rows()));
                if !fits {
                    *made = Some(Undistorter::new(&scaled(camera, *width, image.cols()), image)?);
                }
                made.as_ref().expect("made above").apply(image)?
            }
        };
        Ok((Straightened::Look(picture), settled))
    }
}

/// `camera`, whose matrix is for pictures `calibrated_width` wide, for pictures `width`
/// wide (a calibration made at one resolution used at another).
fn scaled(camera: &Camera, calibrated_width: Option<u32>, width: i32) -> Camera {
    let mut camera = camera.clone();
    if let Some(calibrated) = calibrated_width.filter(|&w| w > 0) {
        let factor = f64::from(width) / f64::from(calibrated);
        for value in camera.matrix[..2].iter_mut().flatten() {
            *value *= factor;
        }
    }
    camera
}
