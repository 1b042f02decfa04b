//! Video files: frames and times, grabbing without decoding, seeking, files cut short,
//! and the `play:` virtual camera.

mod source_support;

use kradan::source::{self, FrameSource, SourceError, SourceKind};
use opencv::prelude::*;
use source_support::{mjpeg_clip, number_in, write_clip};
use std::path::Path;
use std::time::{Duration, Instant};

fn open(path: &Path) -> Box<dyn FrameSource> {
    source::open(path.to_str().unwrap(), None).expect("the clip opens")
}

/// A frame read: index, time, and the number it shows (None when not decoded).
type Seen = (u64, f64, Option<u64>);

/// Reads to the end, decoding the frames `decode` picks.
fn read_all(
    source: &mut dyn FrameSource,
    decode: impl Fn(u64) -> bool,
) -> (Vec<Seen>, Option<SourceError>) {
    let mut seen = Vec::new();
    for n in 0.. {
        match source.next_frame(decode(n)) {
            Ok(Some(frame)) => {
                let shown = (!frame.image.empty()).then(|| number_in(&frame.image));
                assert!(frame.note.is_none());
                seen.push((frame.index, frame.time, shown));
            }
            Ok(None) => return (seen, None),
            Err(e) => return (seen, Some(e)),
        }
    }
    unreachable!()
}

#[test]
fn every_frame_of_a_clip_with_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "demo.avi", 30, 10.0);
    let mut video = open(&path);
    assert_eq!(video.kind(), SourceKind::VideoFile);
    assert_eq!(video.fps(), Some(10.0));
    assert_eq!(video.frame_count(), Some(30));
    assert_eq!(
        video.describe(),
        "video demo.avi (240×160, 10 fps, 30 frames)"
    );
    let (seen, error) = read_all(video.as_mut(), |_| true);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(seen.len(), 30);
    for (i, &(index, time, shown)) in seen.iter().enumerate() {
        assert_eq!(index, i as u64);
        assert_eq!(time, i as f64 / 10.0);
        assert_eq!(shown, Some(i as u64));
    }
    // The end stays the end.
    assert!(video.next_frame(true).unwrap().is_none());
}

#[test]
fn frames_not_decoded_are_empty_and_still_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "skip.avi", 20, 10.0);
    let mut video = open(&path);
    let (seen, error) = read_all(video.as_mut(), |n| n % 3 == 0);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(seen.len(), 20);
    for (i, &(index, _, shown)) in seen.iter().enumerate() {
        assert_eq!(index, i as u64);
        let expected = (i % 3 == 0).then_some(i as u64);
        assert_eq!(shown, expected, "frame {i}");
    }
}

#[test]
fn rate_given_with_fps_overrides_the_container() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "slow.avi", 5, 10.0);
    let mut video = source::open(path.to_str().unwrap(), Some(2.0)).unwrap();
    assert_eq!(video.fps(), Some(2.0));
    video.next_frame(false).unwrap();
    assert_eq!(video.next_frame(false).unwrap().unwrap().time, 0.5);
}

/// Seeks to `time` and returns (index, number shown) of the next frame.
fn after_seek(video: &mut dyn FrameSource, time: f64) -> Option<(u64, u64)> {
    video.seek(time).expect("seeks");
    let frame = video.next_frame(true).expect("reads")?;
    Some((frame.index, number_in(&frame.image)))
}

fn check_seeking(video: &mut dyn FrameSource, fps: f64, frames: u64) {
    let at = |i: u64| i as f64 / fps;
    assert_eq!(after_seek(video, at(12)), Some((12, 12)));
    // Between two frames: the later one.
    assert_eq!(after_seek(video, at(20) + 0.4 / fps), Some((21, 21)));
    // Backwards, to the start, and to where it already is.
    assert_eq!(after_seek(video, at(3)), Some((3, 3)));
    assert_eq!(after_seek(video, 0.0), Some((0, 0)));
    assert_eq!(after_seek(video, at(1)), Some((1, 1)));
    assert_eq!(
        after_seek(video, at(frames - 1)),
        Some((frames - 1, frames - 1))
    );
    assert_eq!(after_seek(video, at(frames + 100)), None);
    assert_eq!(after_seek(video, at(5)), Some((5, 5)));
    // Reading goes on from where the seek landed.
    let next = video.next_frame(true).unwrap().unwrap();
    assert_eq!((next.index, number_in(&next.image)), (6, 6));
}

#[test]
fn seeking_lands_on_the_first_frame_at_or_after_the_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "seek.avi", 40, 10.0);
    check_seeking(open(&path).as_mut(), 10.0, 40);
}

#[test]
fn h264_mp4_reads_and_seeks_where_opencv_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(path) = write_clip(&dir.path().join("clip.mp4"), "avc1", 60, 30.0, (320, 240)) else {
        eprintln!("skipped: this OpenCV cannot write H.264 (avc1) MP4");
        return;
    };
    let mut video = open(&path);
    assert_eq!(video.fps(), Some(30.0));
    assert_eq!(video.frame_count(), Some(60));
    let (seen, error) = read_all(video.as_mut(), |n| n % 2 == 0);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(seen.len(), 60);
    assert!(
        seen.iter()
            .enumerate()
            .all(|(i, s)| s.0 == i as u64 && s.2.is_none_or(|n| n == i as u64))
    );
    check_seeking(open(&path).as_mut(), 30.0, 60);
}

#[test]
fn a_file_cut_short_delivers_what_it_has_then_says_where_it_broke() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "cut.avi", 60, 10.0);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let mut video = open(&path);
    assert_eq!(video.frame_count(), Some(60));
    let (seen, error) = read_all(video.as_mut(), |_| true);
    assert!(
        (20..45).contains(&seen.len()),
        "{} frames read of 60 in half the file",
        seen.len()
    );
    // The last frame read may be the one the cut went through, decoded in part.
    let whole = &seen[..seen.len() - 1];
    assert!(
        whole
            .iter()
            .enumerate()
            .all(|(i, s)| s.0 == i as u64 && s.2 == Some(i as u64))
    );
    match error {
        Some(SourceError::Broken {
            frame,
            time,
            reason,
        }) => {
            assert_eq!(frame, seen.len() as u64);
            assert_eq!(time, frame as f64 / 10.0);
            assert!(
                reason.contains("cut.avi") && reason.contains("60"),
                "{reason}"
            );
        }
        other => panic!("expected Broken, got {other:?}"),
    }
    // Once: afterwards the source is at its end.
    assert!(video.next_frame(true).unwrap().is_none());
}

#[test]
fn seeking_past_the_break_of_a_cut_file_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "cut.avi", 60, 10.0);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let mut video = open(&path);
    assert!(matches!(video.seek(5.5), Err(SourceError::Broken { .. })));
    assert!(after_seek(video.as_mut(), 0.5) == Some((5, 5)));
}

#[test]
fn a_frame_or_two_short_of_the_header_is_a_normal_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "short.avi", 30, 10.0);
    let bytes = std::fs::read(&path).unwrap();
    // Cut just before the last frame's chunk, losing it and the index after it.
    let index_at = find_last(&bytes, b"idx1", bytes.len()).expect("an AVI index");
    let last_frame = find_last(&bytes, b"00dc", index_at).expect("frame chunks");
    std::fs::write(&path, &bytes[..last_frame]).unwrap();
    let mut video = open(&path);
    let (seen, error) = read_all(video.as_mut(), |_| false);
    assert!(error.is_none(), "{error:?}");
    assert!((27..30).contains(&seen.len()), "{}", seen.len());
}

fn find_last(bytes: &[u8], what: &[u8], before: usize) -> Option<usize> {
    bytes[..before].windows(what.len()).rposition(|w| w == what)
}

#[test]
fn a_cut_mp4_and_other_non_videos_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "B D4, W Q16\n").unwrap();
    let mut cases = vec![(notes, "not a video")];
    if let Some(mp4) = write_clip(&dir.path().join("cut.mp4"), "avc1", 30, 30.0, (320, 240)) {
        let bytes = std::fs::read(&mp4).unwrap();
        std::fs::write(&mp4, &bytes[..bytes.len() / 2]).unwrap();
        cases.push((mp4, "cut short loses the index"));
    }
    for (path, expected) in cases {
        match source::open(path.to_str().unwrap(), None) {
            Err(e @ SourceError::NotAVideo { .. }) => {
                let message = e.to_string();
                assert!(message.contains(expected), "{message}");
                assert!(message.contains(path.file_name().unwrap().to_str().unwrap()));
            }
            Err(other) => panic!("{}: {other}", path.display()),
            Ok(_) => panic!("{} opened", path.display()),
        }
    }
}

#[test]
fn play_paces_a_file_as_a_camera() {
    let dir = tempfile::tempdir().unwrap();
    let path = mjpeg_clip(dir.path(), "live.avi", 12, 20.0);
    let started = Instant::now();
    let mut camera = source::open(&format!("play:{}", path.display()), None).unwrap();
    assert_eq!(camera.kind(), SourceKind::Camera);
    assert_eq!(camera.fps(), Some(20.0));
    assert_eq!(camera.frame_count(), None);
    assert!(
        camera
            .describe()
            .starts_with("virtual camera play:live.avi")
    );
    camera.seek(100.0).unwrap();
    let mut frames = Vec::new();
    while let Some(frame) = camera.next_frame(true).unwrap() {
        assert_eq!(number_in(&frame.image), frame.index);
        frames.push((frame.index, frame.time));
        if frame.index == 4 {
            // A reader busy for four frames' time misses the frames in between.
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let indices: Vec<u64> = frames.iter().map(|f| f.0).collect();
    assert!(
        indices.len() < 12 && indices[..5] == [0, 1, 2, 3, 4],
        "{indices:?}"
    );
    assert!(
        indices[5] >= 7 && *indices.last().unwrap() == 11,
        "{indices:?}"
    );
    // Time is the clock's, frames a twentieth of a second apart.
    for &(index, time) in &frames {
        assert!(time >= index as f64 / 20.0 - 0.005, "{index} at {time}");
    }
    let elapsed = started.elapsed().as_secs_f64();
    assert!((0.54..1.5).contains(&elapsed), "{elapsed}");
}
