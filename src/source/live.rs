//! What streams and cameras share: time from a monotonic clock since the source opened, and
//! reconnection with backoff when the source drops, told on the first frame after it returns.

use super::{Frame, SourceError};
use opencv::core::Mat;
use std::time::{Duration, Instant};

/// How a dropped live source is retried: waits double from `first_wait` up to
/// `longest_wait`, and the source is given up `budget` after it dropped.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub first_wait: Duration,
    pub longest_wait: Duration,
    pub budget: Duration,
}

impl Retry {
    /// Attempts 0.5, 1.5, 3.5, 7.5, 15.5, 23.5 and 30 s after the drop: a camera re-plugged
    /// or a Wi-Fi link that comes back within half a minute loses only those seconds.
    pub const DEFAULT: Retry = Retry {
        first_wait: Duration::from_millis(500),
        longest_wait: Duration::from_secs(8),
        budget: Duration::from_secs(30),
    };
}

/// A connected live source, as [`Live`] drives it.
pub trait Capture: Send {
    /// Waits for the next frame: Ok(true) when one came, Ok(false) at a normal end (a
    /// finite file served over the network), Err(reason) when the source failed.
    fn grab(&mut self) -> Result<bool, String>;
    /// The frame last grabbed, as BGR; Err(reason) when that picture cannot be decoded.
    fn retrieve(&mut self) -> Result<Mat, String>;
    /// Frames lost just before the one last grabbed (a capture thread replaced them
    /// before the reader came): they count in the index.
    fn skipped(&self) -> u64 {
        0
    }
    /// When the frame last grabbed was taken, if known better than "now".
    fn taken_at(&self) -> Option<Instant> {
        None
    }
}

/// Opens (and reopens) the connection.
pub type Connect<C> = Box<dyn FnMut() -> Result<C, String> + Send>;

/// Consecutive pictures that fail to decode before the source counts as dropped: one bad
/// JPEG from a USB camera is skipped, a camera sending only garbage is not.
const MAX_BAD_PICTURES: u32 = 30;

struct Outage {
    /// Source time of the drop.
    at: f64,
    since: Instant,
    reason: String,
    last_failure: Option<String>,
    attempts: u32,
    wait: Duration,
}

/// A live source: frames as they come, reconnected when it drops.
pub struct Live<C: Capture> {
    what: String,
    connect: Connect<C>,
    capture: Option<C>,
    retry: Retry,
    opened: Instant,
    next_index: u64,
    outage: Option<Outage>,
}

impl<C: Capture> Live<C> {
    /// Connects once; a source that cannot be reached at the start is not retried (a
    /// mistyped address should fail at once). `what` names it in messages ("stream …").
    pub fn open(what: String, mut connect: Connect<C>, retry: Retry) -> Result<Self, SourceError> {
        let capture = connect().map_err(|why| SourceError::CannotOpen {
            what: what.clone(),
            why,
        })?;
        Ok(Live {
            what,
            connect,
            capture: Some(capture),
            retry,
            opened: Instant::now(),
            next_index: 0,
            outage: None,
        })
    }

    /// The current connection, if any.
    pub fn capture(&self) -> Option<&C> {
        self.capture.as_ref()
    }

    pub fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        let mut bad_pictures = 0;
        loop {
            let Some(capture) = self.capture.as_mut() else {
                self.reconnect()?;
                continue;
            };
            match capture.grab() {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(reason) => {
                    self.dropped(reason);
                    continue;
                }
            }
            let taken = capture.taken_at().unwrap_or_else(Instant::now);
            let time = taken.saturating_duration_since(self.opened).as_secs_f64();
            let index = self.next_index + capture.skipped();
            self.next_index = index + 1;
            let image = if decode {
                match capture.retrieve() {
                    Ok(image) => image,
                    Err(reason) => {
                        bad_pictures += 1;
                        if bad_pictures >= MAX_BAD_PICTURES {
                            self.dropped(format!(
                                "{bad_pictures} pictures in a row could not be decoded: {reason}"
                            ));
                        }
                        continue;
                    }
                }
            } else {
                Mat::default()
            };
            let note = self.outage.take().map(|o| {
                format!(
                    "{} dropped at {:.1} s ({}); back after {:.1} s",
                    self.what,
                    o.at,
                    o.reason,
                    time - o.at
                )
            });
            return Ok(Some(Frame {
                index,
                time,
                image,
                note,
            }));
        }
    }

    /// Closes the connection; the outage lasts until a frame comes again, so a source that
    /// reconnects but fails before its first frame stays within the same budget.
    fn dropped(&mut self, reason: String) {
        self.capture = None;
        if self.outage.is_none() {
            self.outage = Some(Outage {
                at: self.opened.elapsed().as_secs_f64(),
                since: Instant::now(),
                reason,
                last_failure: None,
                attempts: 0,
                wait: self.retry.first_wait,
            });
        }
    }

    fn reconnect(&mut self) -> Result<(), SourceError> {
        let outage = self.outage.get_or_insert_with(|| Outage {
            at: self.opened.elapsed().as_secs_f64(),
            since: Instant::now(),
            reason: "the connection was lost".into(),
            last_failure: None,
            attempts: 0,
            wait: self.retry.first_wait,
        });
        loop {
            let waited = outage.since.elapsed();
            if waited >= self.retry.budget {
                let reason = match &outage.last_failure {
                    Some(last) => format!("{}; last attempt: {last}", outage.reason),
                    None => outage.reason.clone(),
                };
                return Err(SourceError::StreamGone {
                    what: self.what.clone(),
                    time: outage.at,
                    reason,
                    attempts: outage.attempts,
                    waited: waited.as_secs_f64(),
                });
            }
            std::thread::sleep(outage.wait.min(self.retry.budget - waited));
            outage.attempts += 1;
            outage.wait = (outage.wait * 2).min(self.retry.longest_wait);
            match (self.connect)() {
                Ok(capture) => {
                    self.capture = Some(capture);
                    return Ok(());
                }
                Err(why) => outage.last_failure = Some(why),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::prelude::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// What a fake connection does at each grab: a frame (decodable or not), the end, or
    /// a failure.
    #[derive(Clone, Copy, Debug)]
    enum Step {
        Frame,
        BadPicture,
        End,
        Fail,
    }

    struct Fake {
        steps: VecDeque<Step>,
        current: Option<Step>,
    }

    impl Capture for Fake {
        fn grab(&mut self) -> Result<bool, String> {
            self.current = self.steps.pop_front();
            match self.current {
                Some(Step::Frame | Step::BadPicture) => Ok(true),
                Some(Step::End) => Ok(false),
                Some(Step::Fail) | None => Err("connection reset".into()),
            }
        }

        fn retrieve(&mut self) -> Result<Mat, String> {
            match self.current {
                Some(Step::BadPicture) => Err("corrupt JPEG".into()),
                _ => Ok(
                    Mat::new_rows_cols_with_default(2, 2, opencv::core::CV_8UC3, 0.0.into())
                        .unwrap(),
                ),
            }
        }
    }

    /// Each connection attempt takes the next entry: Some(steps) connects, None fails.
    fn connector(attempts: Vec<Option<Vec<Step>>>) -> (Connect<Fake>, Arc<Mutex<u32>>) {
        let count = Arc::new(Mutex::new(0));
        let seen = count.clone();
        let mut attempts: VecDeque<_> = attempts.into();
        let connect = Box::new(move || {
            *seen.lock().unwrap() += 1;
            match attempts.pop_front().flatten() {
                Some(steps) => Ok(Fake {
                    steps: steps.into(),
                    current: None,
                }),
                None => Err("connection refused".to_string()),
            }
        });
        (connect, count)
    }

    const FAST: Retry = Retry {
        first_wait: Duration::from_millis(5),
        longest_wait: Duration::from_millis(20),
        budget: Duration::from_millis(300),
    };

    fn drain(live: &mut Live<Fake>) -> (Vec<Frame>, Option<SourceError>) {
        let mut frames = Vec::new();
        loop {
            match live.next_frame(true) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => return (frames, None),
                Err(e) => return (frames, Some(e)),
            }
        }
    }

    #[test]
    fn a_drop_is_retried_and_noted_on_the_first_frame_back() {
        use Step::*;
        let (connect, count) = connector(vec![
            Some(vec![Frame, Frame, Fail]),
            None,
            None,
            Some(vec![Frame, Frame, End]),
        ]);
        let mut live = Live::open("stream test".into(), connect, FAST).unwrap();
        let (frames, error) = drain(&mut live);
        assert!(error.is_none(), "{error:?}");
        assert_eq!(*count.lock().unwrap(), 4);
        let indices: Vec<u64> = frames.iter().map(|f| f.index).collect();
        assert_eq!(indices, [0, 1, 2, 3]);
        assert!(frames.windows(2).all(|w| w[0].time <= w[1].time));
        let notes: Vec<_> = frames.iter().map(|f| f.note.clone()).collect();
        assert!(notes[0].is_none() && notes[1].is_none() && notes[3].is_none());
        let note = notes[2].as_deref().unwrap();
        assert!(note.starts_with("stream test dropped at"), "{note}");
        assert!(note.contains("(connection reset); back after"), "{note}");
        // Two failed attempts waited 5 and 10 ms, the third 20 ms.
        assert!(frames[2].time - frames[1].time >= 0.035, "{note}");
    }

    #[test]
    fn a_source_that_never_returns_is_given_up_with_the_reason() {
        let (connect, count) = connector(vec![Some(vec![Step::Frame, Step::Fail])]);
        let mut live = Live::open("camera 0".into(), connect, FAST).unwrap();
        let started = Instant::now();
        let (frames, error) = drain(&mut live);
        assert_eq!(frames.len(), 1);
        let error = error.expect("gives up");
        let attempts = *count.lock().unwrap() - 1;
        match &error {
            SourceError::StreamGone {
                attempts: n,
                waited,
                ..
            } => {
                assert_eq!(*n, attempts);
                assert!(*waited >= 0.3 && *waited < 1.0, "{waited}");
            }
            other => panic!("{other:?}"),
        }
        // 5, 10, 20, 20… ms up to 300 ms.
        assert!((8..=18).contains(&attempts), "{attempts}");
        assert!(started.elapsed() < Duration::from_secs(2));
        let message = error.to_string();
        assert!(
            message.contains("camera 0 dropped at")
                && message.contains("connection reset; last attempt: connection refused"),
            "{message}"
        );
    }

    #[test]
    fn an_unreachable_source_fails_at_once() {
        let (connect, count) = connector(vec![None]);
        let error = Live::open("stream rtsp://x".into(), connect, FAST)
            .err()
            .unwrap();
        assert_eq!(*count.lock().unwrap(), 1);
        assert_eq!(
            error.to_string(),
            "cannot open stream rtsp://x: connection refused"
        );
    }

    #[test]
    fn bad_pictures_are_skipped_and_counted() {
        use Step::*;
        let (connect, _) = connector(vec![Some(vec![Frame, BadPicture, Frame, End])]);
        let mut live = Live::open("camera 1".into(), connect, FAST).unwrap();
        let (frames, error) = drain(&mut live);
        assert!(error.is_none());
        let indices: Vec<u64> = frames.iter().map(|f| f.index).collect();
        assert_eq!(indices, [0, 2]);
    }

    #[test]
    fn endless_bad_pictures_count_as_a_drop() {
        let steps = vec![Step::BadPicture; MAX_BAD_PICTURES as usize];
        let (connect, _) = connector(vec![Some(steps), Some(vec![Step::Frame])]);
        let mut live = Live::open("camera 1".into(), connect, FAST).unwrap();
        let frame = live.next_frame(true).unwrap().unwrap();
        assert_eq!(frame.index, MAX_BAD_PICTURES as u64);
        assert!(
            frame
                .note
                .unwrap()
                .contains("could not be decoded: corrupt JPEG")
        );
    }

    #[test]
    fn frames_not_decoded_are_empty() {
        let (connect, _) = connector(vec![Some(vec![Step::Frame, Step::BadPicture])]);
        let mut live = Live::open("camera 1".into(), connect, FAST).unwrap();
        for index in 0..2 {
            let frame = live.next_frame(false).unwrap().unwrap();
            assert_eq!(frame.index, index);
            assert!(frame.image.empty());
        }
    }
}
