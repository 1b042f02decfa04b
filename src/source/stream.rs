//! Network streams (RTSP, HTTP, UDP…) through OpenCV's FFmpeg backend, reconnected when
//! they drop.

use super::live::{Capture, Live, Retry};
use super::{Frame, FrameSource, SourceError, SourceKind, fps_text};
use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};

/// How long FFmpeg may take to connect, and to deliver the next frame before the stream
/// counts as dropped (its own default is 30 s each, too long to notice a dead camera).
const OPEN_TIMEOUT_MS: i32 = 10_000;
const READ_TIMEOUT_MS: i32 = 10_000;

/// A finite file served over the network ends normally when it stops within this many
/// frames of its announced count.
const END_SLACK_FRAMES: u64 = 3;

pub struct Stream {
    /// The URL with any password hidden, for messages.
    shown: String,
    live: Live<StreamCapture>,
}

struct StreamCapture {
    capture: VideoCapture,
    /// Frames grabbed on this connection.
    grabbed: u64,
    /// Frames announced: only a file served over HTTP has a count; a live stream has none.
    announced: Option<u64>,
    width: i32,
    height: i32,
    fps: Option<f64>,
}

impl Stream {
    pub fn open(url: &str) -> Result<Stream, SourceError> {
        Stream::open_with(url, Retry::DEFAULT)
    }

    /// As [`Stream::open`], with its own retry schedule (tests use a short one).
    pub fn open_with(url: &str, retry: Retry) -> Result<Stream, SourceError> {
        let shown = hide_password(url);
        let target = url.to_string();
        let live = Live::open(
            format!("stream {shown}"),
            Box::new(move || connect(&target)),
            retry,
        )?;
        Ok(Stream { shown, live })
    }
}

fn connect(url: &str) -> Result<StreamCapture, String> {
    let params = Vector::from_slice(&[
        videoio::CAP_PROP_OPEN_TIMEOUT_MSEC,
        OPEN_TIMEOUT_MS,
        videoio::CAP_PROP_READ_TIMEOUT_MSEC,
        READ_TIMEOUT_MS,
    ]);
    let capture = VideoCapture::from_file_with_params(url, videoio::CAP_FFMPEG, &params)
        .map_err(|e| e.to_string())?;
    let opened = capture.is_opened().map_err(|e| e.to_string())?;
    if !opened {
        return Err(
            "FFmpeg could not open it (refused, unreachable, timed out, \
                    or not a video stream)"
                .into(),
        );
    }
    let get = |prop| capture.get(prop).unwrap_or(0.0);
    let count = get(videoio::CAP_PROP_FRAME_COUNT);
    let fps = get(videoio::CAP_PROP_FPS);
    Ok(StreamCapture {
        announced: (count.is_finite() && count >= 1.0).then(|| count.round() as u64),
        width: get(videoio::CAP_PROP_FRAME_WIDTH) as i32,
        height: get(videoio::CAP_PROP_FRAME_HEIGHT) as i32,
        // FFmpeg guesses a rate for streams that declare none; past 240 it is a clock
        // rate (90000), not frames.
        fps: (fps.is_finite() && fps > 0.0 && fps <= 240.0).then_some(fps),
        capture,
        grabbed: 0,
    })
}

impl Capture for StreamCapture {
    fn grab(&mut self) -> Result<bool, String> {
        match self.capture.grab() {
            Ok(true) => {
                self.grabbed += 1;
                Ok(true)
            }
            Ok(false) => match self.announced {
                Some(n) if self.grabbed + END_SLACK_FRAMES >= n => Ok(false),
                _ => Err("no frame came: connection closed or timed out".into()),
            },
            Err(e) => Err(e.to_string()),
        }
    }

    fn retrieve(&mut self) -> Result<Mat, String> {
        let mut image = Mat::default();
        match self.capture.retrieve(&mut image, 0) {
            Ok(true) if !image.empty() => Ok(image),
            Ok(_) => Err("the picture could not be decoded".into()),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl FrameSource for Stream {
    fn kind(&self) -> SourceKind {
        SourceKind::Stream
    }

    fn describe(&self) -> String {
        match self.live.capture() {
            Some(c) => {
                let fps = c
                    .fps
                    .map(|f| format!(", {}", fps_text(f)))
                    .unwrap_or_default();
                format!("stream {} ({}×{}{fps})", self.shown, c.width, c.height)
            }
            None => format!("stream {} (reconnecting)", self.shown),
        }
    }

    fn fps(&self) -> Option<f64> {
        self.live.capture().and_then(|c| c.fps)
    }

    fn frame_count(&self) -> Option<u64> {
        None
    }

    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        self.live.next_frame(decode)
    }

    fn seek(&mut self, _time: f64) -> Result<(), SourceError> {
        Ok(())
    }
}

/// "rtsp://admin:secret@cam/live" → "rtsp://admin:***@cam/live": URLs end up in logs and
/// in the event log, passwords must not.
pub fn hide_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((user_info, host)) = authority.rsplit_once('@') else {
        return url.to_string();
    };
    match user_info.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}{path}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            hide_password("rtsp://admin:secret@10.0.0.5:554/live?x=1"),
            "rtsp://admin:***@10.0.0.5:554/live?x=1"
        );
        assert_eq!(hide_password("rtsp://a:p@ss@cam/x"), "rtsp://a:***@cam/x");
        for url in ["http://cam/video.mjpg", "rtsp://user@cam/", "udp://@:1234"] {
            assert_eq!(hide_password(url), url);
        }
    }

    #[test]
    fn nobody_listening_fails_at_once_with_the_address() {
        // Port 1 on the loopback: connection refused, no network needed.
        let error = Stream::open("http://127.0.0.1:1/video.avi")
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with("cannot open stream http://127.0.0.1:1/video.avi: FFmpeg could not"),
            "{error}"
        );
    }
}
