//! Frames in: still images now; video files, folders, streams and cameras later.

pub mod image;
pub mod quick;

use opencv::core::Mat;

/// One picture from a source.
pub struct Frame {
    pub index: u64,
    pub time: f64,
    pub image: Mat,
    pub note: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    VideoFile,
    Stills,
    FramesFolder,
    Stream,
    Camera,
}

pub trait FrameSource: Send {
    fn kind(&self) -> SourceKind;
    fn describe(&self) -> String;
    fn fps(&self) -> Option<f64>;
    fn frame_count(&self) -> Option<u64>;
    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError>;
    fn seek(&mut self, time: f64) -> Result<(), SourceError>;
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot open {0}")]
    Open(String),
    #[error("the video breaks at frame {frame} ({time:.2} s): {reason}")]
    Broken {
        frame: u64,
        time: f64,
        reason: String,
    },
    #[error(transparent)]
    OpenCv(#[from] opencv::Error),
}

pub fn open(spec: &str, fps: Option<f64>) -> Result<Box<dyn FrameSource>, SourceError> {
    quick::open(spec, fps)
}
