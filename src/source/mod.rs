//! Frames in: still photos, video files, folders of images, network streams and cameras,
//! all behind one [`FrameSource`] so the recorder reads them alike (`docs/sources.md`).

pub mod camera;
pub mod folder;
pub mod image;
pub mod live;
pub mod stream;
pub mod video;

use std::path::{Path, PathBuf};

/// One picture from a source.
#[derive(Debug)]
pub struct Frame {
    /// 0-based index of the frame in the source (counting every frame delivered or skipped).
    pub index: u64,
    /// Seconds of source time: index / fps for a video file; for a folder of stills the
    /// index (one observation per still, 1 s apart) unless --fps was given; for streams and
    /// cameras the seconds since the source was opened (monotonic clock).
    pub time: f64,
    /// BGR 8-bit picture; EMPTY (Mat::default()) when the caller asked not to decode it.
    pub image: opencv::core::Mat,
    /// Set on the first frame after an interruption of a stream/camera: what happened
    /// ("stream dropped at 12.3 s (reason); back after 4.1 s").
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    VideoFile,
    Stills,
    FramesFolder,
    Stream,
    Camera,
}

pub trait FrameSource: Send {
    fn kind(&self) -> SourceKind;
    /// Human description for logs: "video demo.mp4 (1920×1080, 30 fps, 9000 frames)".
    fn describe(&self) -> String;
    /// Frames per second when known (videos, folders with --fps, cameras).
    fn fps(&self) -> Option<f64>;
    /// Total frames when known (video files, folders) — for a progress bar.
    fn frame_count(&self) -> Option<u64>;
    /// The next frame, or Ok(None) at the normal end. `decode == false` lets a video
    /// advance without converting the picture (OpenCV grab() without retrieve(); the
    /// returned image is empty) — the recorder analyses only some frames and skipping the
    /// colour conversion matters for speed.
    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError>;
    /// Skip to the first frame at or after `time` seconds (used by `--resume`); for live
    /// sources a no-op. Implement by seeking where possible, else by grabbing.
    fn seek(&mut self, time: f64) -> Result<(), SourceError>;
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The SOURCE argument (or --fps) makes no sense before anything is opened.
    #[error("bad source {spec:?}: {why}")]
    BadSpec { spec: String, why: String },
    #[error("cannot open {what}: {why}")]
    CannotOpen { what: String, why: String },
    #[error("{}: not a video, or it holds no frames ({why})", path.display())]
    NotAVideo { path: PathBuf, why: String },
    /// A video that ends before its header says: every readable frame was delivered first.
    #[error("broken video at frame {frame} ({time:.2} s): {reason}")]
    Broken {
        frame: u64,
        time: f64,
        reason: String,
    },
    #[error("{}: no images in it (JPEG, PNG, BMP, TIFF or WebP)", path.display())]
    EmptyFolder { path: PathBuf },
    /// An image of a folder that cannot be read; the images before it were delivered.
    #[error("image {index} of the folder: {source}")]
    UnreadableImage {
        index: u64,
        source: image::LoadError,
    },
    #[error("{0}")]
    NoCamera(String),
    /// A camera that was opened but failed in a way reopening did not cure.
    #[error("camera {device}: {why}")]
    Camera { device: String, why: String },
    /// A stream or camera that dropped and did not come back within the retry budget.
    #[error(
        "{what} dropped at {time:.1} s ({reason}) and did not come back after {attempts} attempts over {waited:.1} s"
    )]
    StreamGone {
        what: String,
        time: f64,
        reason: String,
        attempts: u32,
        waited: f64,
    },
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// Schemes handed to FFmpeg as network streams.
const STREAM_SCHEMES: &[&str] = &[
    "rtsp", "rtsps", "rtmp", "rtmps", "http", "https", "udp", "rtp", "tcp", "srt",
];

/// Parses and opens a SOURCE argument. `fps` is --fps (reads a folder as video frames).
///
/// `fps` also overrides a video file's own rate (and so `play:`'s pace), and is the rate
/// asked of a camera; a stream's rate is the sender's, so it is refused there.
pub fn open(spec: &str, fps: Option<f64>) -> Result<Box<dyn FrameSource>, SourceError> {
    let bad = |why: String| SourceError::BadSpec {
        spec: stream::hide_password(spec),
        why,
    };
    if let Some(rate) = fps
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(bad(format!(
            "--fps must be a positive number of frames per second, not {rate}"
        )));
    }
    if spec.trim().is_empty() {
        return Err(bad(
            "give a video file, a folder of images, a stream URL or camera:N".into(),
        ));
    }
    if let Some(number) = spec.strip_prefix("camera:") {
        let index = number.trim().parse::<u32>().map_err(|_| {
            bad("camera:N takes the camera's number: camera:0 is /dev/video0".into())
        })?;
        return Ok(Box::new(camera::Camera::open(index, fps)?));
    }
    if let Some(path) = spec.strip_prefix("play:") {
        return Ok(Box::new(video::Played::open(Path::new(path), fps)?));
    }
    if let Some((scheme, _)) = spec.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "file" {
            return open_path(Path::new(&spec["file://".len()..]), fps);
        }
        if !STREAM_SCHEMES.contains(&scheme.as_str()) {
            return Err(bad(format!(
                "unknown scheme {scheme}:// (streams: {})",
                STREAM_SCHEMES.join(", ")
            )));
        }
        if fps.is_some() {
            return Err(bad(
                "--fps cannot be set for a stream: its rate is the sender's".into(),
            ));
        }
        return Ok(Box::new(stream::Stream::open(spec)?));
    }
    open_path(Path::new(spec), fps)
}

fn open_path(path: &Path, fps: Option<f64>) -> Result<Box<dyn FrameSource>, SourceError> {
    let metadata = std::fs::metadata(path).map_err(|e| SourceError::CannotOpen {
        what: path.display().to_string(),
        why: match e.kind() {
            std::io::ErrorKind::NotFound => {
                "no such file or folder (a camera is camera:N, a stream a URL)".into()
            }
            _ => e.to_string(),
        },
    })?;
    if metadata.is_dir() {
        return Ok(Box::new(folder::Folder::open(path, fps)?));
    }
    if folder::is_image_name(path) {
        return Ok(Box::new(folder::Folder::single(path, fps)));
    }
    Ok(Box::new(video::VideoFile::open(path, fps)?))
}

/// The first frame at or after `time` at `fps`, as an index (a time a hair past a frame's
/// own, from float arithmetic, still lands on that frame).
pub(crate) fn index_at(time: f64, fps: f64) -> u64 {
    if !time.is_finite() || time <= 0.0 {
        return 0;
    }
    (time * fps - 1e-6).ceil().max(0.0) as u64
}

/// A rate for people: "30 fps", "29.97 fps".
pub(crate) fn fps_text(fps: f64) -> String {
    if (fps - fps.round()).abs() < 1e-3 {
        format!("{} fps", fps.round())
    } else {
        format!("{fps:.2} fps")
    }
}

/// A file's name for messages, falling back to the whole path.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_at_lands_on_frames() {
        assert_eq!(index_at(0.0, 30.0), 0);
        assert_eq!(index_at(-3.0, 30.0), 0);
        assert_eq!(index_at(f64::NAN, 30.0), 0);
        assert_eq!(index_at(1.0, 30.0), 30);
        assert_eq!(index_at(10.0 / 30.0, 30.0), 10);
        assert_eq!(index_at(1.01, 30.0), 31);
        assert_eq!(index_at(2.5, 1.0), 3);
    }

    #[test]
    fn rates_read_as_people_write_them() {
        assert_eq!(fps_text(30.0), "30 fps");
        assert_eq!(fps_text(29.97), "29.97 fps");
    }

    fn error_of(spec: &str, fps: Option<f64>) -> String {
        match open(spec, fps) {
            Ok(_) => panic!("{spec} opened"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_arguments_are_explained() {
        assert!(error_of("", None).contains("camera:N"));
        assert!(error_of("camera:front", None).contains("/dev/video0"));
        assert!(error_of("gopher://x", None).contains("unknown scheme"));
        let with_fps = error_of("rtsp://admin:secret@127.0.0.1:1/x", Some(25.0));
        assert!(with_fps.contains("--fps"), "{with_fps}");
        assert!(!with_fps.contains("secret"), "{with_fps}");
        assert!(error_of("/no/such/file.mp4", None).contains("no such file"));
        assert!(error_of(".", Some(0.0)).contains("--fps"));
        assert!(error_of(".", Some(f64::INFINITY)).contains("--fps"));
    }
}
