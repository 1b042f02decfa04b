//! Video files through OpenCV's FFmpeg backend, and `play:PATH`, a file paced as a camera.

use super::{Frame, FrameSource, SourceError, SourceKind, file_name, fps_text, index_at};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Headers are often a frame or two off (edit lists, B-frame delays, durations rounded in
/// containers without a frame count): a file is broken only when it ends more than this
/// many frames, or a second of frames, before its header's count.
const HEADER_SLACK_FRAMES: u64 = 3;

/// A video file read frame by frame; time is index / fps.
pub struct VideoFile {
    path: PathBuf,
    capture: VideoCapture,
    width: i32,
    height: i32,
    fps: f64,
    header_frames: Option<u64>,
    /// Index of the next frame to deliver.
    next_index: u64,
    /// The frame at `next_index` is already grabbed (the first one is, to check at open
    /// that the file has frames at all).
    grabbed: bool,
    /// The end was met (the normal end, or a break already reported).
    finished: bool,
}

impl VideoFile {
    /// Opens a video file; `fps` overrides the rate its container declares.
    pub fn open(path: &Path, fps: Option<f64>) -> Result<VideoFile, SourceError> {
        let capture = open_capture(path)?;
        let container_fps = capture.get(videoio::CAP_PROP_FPS)?;
        let fps = match fps {
            Some(rate) => rate,
            None if container_fps.is_finite() && container_fps > 0.0 => container_fps,
            None => {
                return Err(SourceError::CannotOpen {
                    what: path.display().to_string(),
                    why: "its frame rate is unknown; give it with --fps".into(),
                });
            }
        };
        let count = capture.get(videoio::CAP_PROP_FRAME_COUNT)?;
        let header_frames = (count.is_finite() && count >= 1.0).then(|| count.round() as u64);
        let mut video = VideoFile {
            path: path.to_path_buf(),
            width: capture.get(videoio::CAP_PROP_FRAME_WIDTH)? as i32,
            height: capture.get(videoio::CAP_PROP_FRAME_HEIGHT)? as i32,
            capture,
            fps,
            header_frames,
            next_index: 0,
            grabbed: false,
            finished: false,
        };
        if !video.capture.grab()? {
            return Err(SourceError::NotAVideo {
                path: path.to_path_buf(),
                why: "not one frame could be read".into(),
            });
        }
        video.grabbed = true;
        Ok(video)
    }

    /// Width and height of the pictures.
    pub fn size(&self) -> (i32, i32) {
        (self.width, self.height)
    }

    fn ended(&mut self) -> Result<Option<Frame>, SourceError> {
        self.finished = true;
        let read = self.next_index;
        match self.header_frames {
            Some(header) if is_cut_short(read, header, self.fps) => Err(SourceError::Broken {
                frame: read,
                time: read as f64 / self.fps,
                reason: format!(
                    "{} ends after {read} frames but its header announces {header} \
                     (cut short or corrupt); the frames before were read",
                    file_name(&self.path)
                ),
            }),
            _ => Ok(None),
        }
    }

    /// Moves forward to `target` by grabbing.
    fn grab_to(&mut self, target: u64) -> Result<(), SourceError> {
        while self.next_index < target {
            if !self.grabbed && !self.capture.grab()? {
                return self.ended().map(|_| ());
            }
            self.grabbed = false;
            self.next_index += 1;
        }
        Ok(())
    }
}

fn open_capture(path: &Path) -> Result<VideoCapture, SourceError> {
    let cannot = |why: String| SourceError::CannotOpen {
        what: path.display().to_string(),
        why,
    };
    let metadata = std::fs::metadata(path).map_err(|e| cannot(e.to_string()))?;
    if metadata.is_dir() {
        return Err(cannot("it is a folder".into()));
    }
    if metadata.len() == 0 {
        return Err(SourceError::NotAVideo {
            path: path.to_path_buf(),
            why: "the file is empty (0 bytes)".into(),
        });
    }
    // Only FFmpeg: other backends would read a name with "%d" in it as an image sequence.
    let capture = VideoCapture::from_file(path.as_os_str(), videoio::CAP_FFMPEG)
        .map_err(|e| cannot(e.to_string()))?;
    if !capture.is_opened()? {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let why = match extension.as_deref() {
            Some("mp4" | "mov" | "m4v") => {
                "FFmpeg cannot read it; an MP4 or MOV cut short loses the index at its end \
                 and cannot be read at all"
            }
            _ => "FFmpeg cannot read it as a video",
        };
        return Err(SourceError::NotAVideo {
            path: path.to_path_buf(),
            why: why.into(),
        });
    }
    Ok(capture)
}

/// Whether a file that gave `read` frames is short of the `header` count by more than
/// headers are commonly off.
fn is_cut_short(read: u64, header: u64, fps: f64) -> bool {
    let slack = HEADER_SLACK_FRAMES.max(fps.round() as u64);
    read + slack < header
}

impl FrameSource for VideoFile {
    fn kind(&self) -> SourceKind {
        SourceKind::VideoFile
    }

    fn describe(&self) -> String {
        let frames = match self.header_frames {
            Some(n) => format!(", {n} frames"),
            None => String::new(),
        };
        format!(
            "video {} ({}×{}, {}{frames})",
            file_name(&self.path),
            self.width,
            self.height,
            fps_text(self.fps)
        )
    }

    fn fps(&self) -> Option<f64> {
        Some(self.fps)
    }

    fn frame_count(&self) -> Option<u64> {
        self.header_frames
    }

    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        if self.finished {
            return Ok(None);
        }
        if !self.grabbed && !self.capture.grab()? {
            return self.ended();
        }
        self.grabbed = false;
        let index = self.next_index;
        self.next_index += 1;
        let time = index as f64 / self.fps;
        let mut image = Mat::default();
        if decode && (!self.capture.retrieve(&mut image, 0)? || image.empty()) {
            self.finished = true;
            return Err(SourceError::Broken {
                frame: index,
                time,
                reason: format!(
                    "frame {index} of {} could not be decoded",
                    file_name(&self.path)
                ),
            });
        }
        Ok(Some(Frame {
            index,
            time,
            image,
            note: None,
        }))
    }

    fn seek(&mut self, time: f64) -> Result<(), SourceError> {
        let target = index_at(time, self.fps);
        if target == self.next_index {
            return Ok(());
        }
        // OpenCV's FFmpeg seek lands on a key frame and decodes forward to the frame asked
        // for; it reports where it ended up, which differs when the file is shorter than
        // its header or its time stamps are odd, and then grabbing is the sure way. A
        // target past the end is reached by landing on the last frame the header announces
        // and grabbing on, so a file shorter than its header still reports its break.
        let landing = match self.header_frames {
            Some(header) => target.min(header.saturating_sub(1)),
            None => target,
        };
        let landed = self
            .capture
            .set(videoio::CAP_PROP_POS_FRAMES, landing as f64)
            .unwrap_or(false)
            && self.capture.get(videoio::CAP_PROP_POS_FRAMES).ok() == Some(landing as f64);
        if landed {
            self.next_index = landing;
            self.grabbed = false;
            self.finished = false;
        } else {
            // Where the failed seek left the decoder is unknown: start again from the top.
            *self = VideoFile::open(&self.path, Some(self.fps))?;
        }
        self.grab_to(target)
    }
}

/// `play:PATH`: a video file delivered at its own pace in real time, as a camera would, to
/// test the live code paths without a camera. Frames the reader is a whole frame late for
/// are skipped, as a camera's driver drops them.
pub struct Played {
    video: VideoFile,
    opened: Instant,
}

impl Played {
    pub fn open(path: &Path, fps: Option<f64>) -> Result<Played, SourceError> {
        let video = VideoFile::open(path, fps)?;
        Ok(Played {
            video,
            opened: Instant::now(),
        })
    }

    fn due(&self, index: u64) -> Duration {
        Duration::from_secs_f64(index as f64 / self.video.fps)
    }
}

impl FrameSource for Played {
    fn kind(&self) -> SourceKind {
        SourceKind::Camera
    }

    fn describe(&self) -> String {
        let (w, h) = self.video.size();
        format!(
            "virtual camera play:{} ({w}×{h}, paced at {})",
            file_name(&self.video.path),
            fps_text(self.video.fps)
        )
    }

    fn fps(&self) -> Option<f64> {
        Some(self.video.fps)
    }

    fn frame_count(&self) -> Option<u64> {
        None
    }

    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        loop {
            let index = self.video.next_index;
            let elapsed = self.opened.elapsed();
            if elapsed < self.due(index) {
                std::thread::sleep(self.due(index) - elapsed);
            } else if elapsed >= self.due(index + 1) {
                if self.video.next_frame(false)?.is_none() {
                    return Ok(None);
                }
                continue;
            }
            return Ok(self.video.next_frame(decode)?.map(|frame| Frame {
                time: self.opened.elapsed().as_secs_f64(),
                ..frame
            }));
        }
    }

    fn seek(&mut self, _time: f64) -> Result<(), SourceError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_frames_short_of_the_header_is_not_breakage() {
        assert!(!is_cut_short(300, 300, 30.0));
        assert!(!is_cut_short(298, 300, 30.0));
        assert!(!is_cut_short(270, 300, 30.0));
        assert!(is_cut_short(269, 300, 30.0));
        assert!(!is_cut_short(7, 10, 1.0));
        assert!(is_cut_short(6, 10, 1.0));
    }

    #[test]
    fn missing_and_empty_files_are_explained() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.mp4");
        std::fs::write(&empty, b"").unwrap();
        let text = dir.path().join("notes.mp4");
        std::fs::write(&text, b"not a video at all").unwrap();
        for (path, expected) in [
            (dir.path().join("absent.avi"), "cannot open"),
            (empty, "empty"),
            (text, "cut short"),
        ] {
            match VideoFile::open(&path, None) {
                Ok(_) => panic!("{} opened", path.display()),
                Err(e) => assert!(e.to_string().contains(expected), "{e}"),
            }
        }
    }
}
