//! Stand-in sources until the real ones land.

use super::{Frame, FrameSource, SourceError, SourceKind};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio;
use std::path::{Path, PathBuf};

pub fn open(spec: &str, fps: Option<f64>) -> Result<Box<dyn FrameSource>, SourceError> {
    let path = Path::new(spec);
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| SourceError::Open(format!("{spec}: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                matches!(
                    p.extension()
                        .and_then(|e| e.to_str())
                        .map(str::to_lowercase)
                        .as_deref(),
                    Some("jpg" | "jpeg" | "png")
                )
            })
            .collect();
        files.sort_by_key(|p| {
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_string();
            (stem.parse::<u64>().unwrap_or(u64::MAX), stem)
        });
        return Ok(Box::new(Folder {
            files,
            next: 0,
            fps,
        }));
    }
    let capture = videoio::VideoCapture::from_file(spec, videoio::CAP_FFMPEG)?;
    if !capture.is_opened()? {
        return Err(SourceError::Open(spec.to_string()));
    }
    let fps = capture.get(videoio::CAP_PROP_FPS)?;
    let count = capture.get(videoio::CAP_PROP_FRAME_COUNT)?;
    Ok(Box::new(Video {
        capture,
        fps: if fps > 0.0 { fps } else { 30.0 },
        count: count.max(0.0) as u64,
        next: 0,
    }))
}

struct Folder {
    files: Vec<PathBuf>,
    next: usize,
    fps: Option<f64>,
}

impl FrameSource for Folder {
    fn kind(&self) -> SourceKind {
        if self.fps.is_some() {
            SourceKind::FramesFolder
        } else {
            SourceKind::Stills
        }
    }
    fn describe(&self) -> String {
        format!("{} images", self.files.len())
    }
    fn fps(&self) -> Option<f64> {
        self.fps
    }
    fn frame_count(&self) -> Option<u64> {
        Some(self.files.len() as u64)
    }
    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        let Some(path) = self.files.get(self.next) else {
            return Ok(None);
        };
        let index = self.next as u64;
        self.next += 1;
        let image = if decode {
            crate::source::image::load(path)
                .map_err(|e| SourceError::Open(e.to_string()))?
                .image
        } else {
            Mat::default()
        };
        let time = self.fps.map_or(index as f64, |fps| index as f64 / fps);
        Ok(Some(Frame {
            index,
            time,
            image,
            note: None,
        }))
    }
    fn seek(&mut self, time: f64) -> Result<(), SourceError> {
        self.next = (time * self.fps.unwrap_or(1.0)).ceil().max(0.0) as usize;
        Ok(())
    }
}

struct Video {
    capture: videoio::VideoCapture,
    fps: f64,
    count: u64,
    next: u64,
}

impl FrameSource for Video {
    fn kind(&self) -> SourceKind {
        SourceKind::VideoFile
    }
    fn describe(&self) -> String {
        format!("video ({} fps, {} frames)", self.fps, self.count)
    }
    fn fps(&self) -> Option<f64> {
        Some(self.fps)
    }
    fn frame_count(&self) -> Option<u64> {
        Some(self.count)
    }
    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        if !self.capture.grab()? {
            return Ok(None);
        }
        let index = self.next;
        self.next += 1;
        let mut image = Mat::default();
        if decode {
            self.capture.retrieve(&mut image, 0)?;
        }
        Ok(Some(Frame {
            index,
            time: index as f64 / self.fps,
            image,
            note: None,
        }))
    }
    fn seek(&mut self, time: f64) -> Result<(), SourceError> {
        while (self.next as f64) < time * self.fps {
            if !self.capture.grab()? {
                break;
            }
            self.next += 1;
        }
        Ok(())
    }
}
