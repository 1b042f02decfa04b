//! `camera:N`: a V4L2 camera (/dev/videoN) through nokhwa, its raw pictures decoded by
//! OpenCV only when the reader asks for them.

use super::live::{Capture, Live, Retry};
use super::{Frame, FrameSource, SourceError, SourceKind};
use nokhwa::utils::{CameraFormat, CameraIndex, FrameFormat, RequestedFormat, RequestedFormatType};
use opencv::core::{Mat, Vector};
use opencv::imgcodecs;
use opencv::imgproc;
use opencv::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// Every raw format Kradan can decode.
const FORMATS: &[FrameFormat] = &[
    FrameFormat::MJPEG,
    FrameFormat::YUYV,
    FrameFormat::NV12,
    FrameFormat::GRAY,
    FrameFormat::RAWRGB,
    FrameFormat::RAWBGR,
];

/// More pixels than a 19×19 board needs only cost decoding time.
const LARGEST_PIXELS: u64 = 1920 * 1080;

/// Below this rate a hand over the board is missed between frames.
const SLOWEST_FPS: u32 = 10;

pub struct Camera {
    index: u32,
    name: String,
    format: CameraFormat,
    live: Live<CameraCapture>,
}

/// One opening of the camera: a thread takes every picture as the camera makes it and keeps
/// only the newest, so a busy reader gets a fresh picture rather than one that waited in
/// the driver's queue, and learns how many it missed. (nokhwa's camera is not `Send`
/// either, so it has to live on one thread.)
struct CameraCapture {
    shared: Arc<Shared>,
    format: CameraFormat,
    raw: Vec<u8>,
    taken_at: Instant,
    skipped: u64,
}

struct Shared {
    slot: Mutex<Slot>,
    ready: Condvar,
}

#[derive(Default)]
struct Slot {
    newest: Option<(Vec<u8>, Instant)>,
    /// Pictures replaced before the reader took them.
    replaced: u64,
    failure: Option<String>,
    stop: bool,
}

impl Camera {
    /// Opens /dev/video`index`; `fps` is the rate to ask for (30 by default).
    pub fn open(index: u32, fps: Option<f64>) -> Result<Camera, SourceError> {
        let device = device_path(index);
        if !device.exists() {
            return Err(SourceError::NoCamera(no_camera_message(
                index,
                &device,
                &video_devices(Path::new("/dev")),
            )));
        }
        let wanted_fps = fps.map_or(30, |f| f.round().max(1.0) as u32);
        let (first, name) = open_camera(index, wanted_fps).map_err(|why| SourceError::Camera {
            device: device.display().to_string(),
            why: with_hint(why),
        })?;
        let format = first.format;
        let mut first = Some(first);
        let connect = Box::new(move || match first.take() {
            Some(capture) => Ok(capture),
            None => open_camera(index, wanted_fps).map(|(capture, _)| capture),
        });
        let live = Live::open(format!("camera {index}"), connect, Retry::DEFAULT)?;
        Ok(Camera {
            index,
            name,
            format,
            live,
        })
    }
}

/// A camera the machine has, with the picture formats it offers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CameraListing {
    /// `camera:N` names it as a source.
    pub index: u32,
    pub device: String,
    pub name: String,
    /// `WIDTHxHEIGHT FORMAT @FPS`.
    pub formats: Vec<String>,
    /// Why the formats could not be read, when they could not.
    pub error: Option<String>,
}

/// The V4L2 cameras present (every /dev/videoN), each asked through nokhwa for its formats.
/// None present is an error saying so.
pub fn list_cameras() -> Result<Vec<CameraListing>, SourceError> {
    list_cameras_in(Path::new("/dev"))
}

fn list_cameras_in(dev: &Path) -> Result<Vec<CameraListing>, SourceError> {
    let present = video_devices(dev);
    if present.is_empty() {
        return Err(SourceError::NoCamera(format!(
            "no camera: {}",
            no_camera_message(0, &dev.join("video0"), &present)
                .split_once("; ")
                .map_or("", |(_, rest)| rest)
        )));
    }
    Ok(present
        .into_iter()
        .map(|index| {
            let device = dev.join(format!("video{index}")).display().to_string();
            // nokhwa may panic on a driver's nonsense answers; one bad node must not hide the rest.
            let asked = catch_unwind(|| camera_formats(index))
                .unwrap_or_else(|_| Err("the driver's answers made nokhwa fail".into()));
            match asked {
                Ok((name, formats)) => CameraListing {
                    index,
                    device,
                    name,
                    formats,
                    error: None,
                },
                Err(why) => CameraListing {
                    index,
                    device,
                    name: String::new(),
                    formats: Vec::new(),
                    error: Some(with_hint(why)),
                },
            }
        })
        .collect())
}

fn camera_formats(index: u32) -> Result<(String, Vec<String>), String> {
    let any = RequestedFormat::with_formats(RequestedFormatType::None, FORMATS);
    let mut camera =
        nokhwa::Camera::new(CameraIndex::Index(index), any).map_err(|e| e.to_string())?;
    let mut formats: Vec<CameraFormat> = camera
        .compatible_camera_formats()
        .map_err(|e| e.to_string())?;
    formats.sort_by_key(|f| {
        (
            std::cmp::Reverse(f.width() * f.height()),
            f.format().to_string(),
            std::cmp::Reverse(f.frame_rate()),
        )
    });
    let described = formats
        .iter()
        .map(|f| {
            format!(
                "{}x{} {} @{} fps",
                f.width(),
                f.height(),
                f.format(),
                f.frame_rate()
            )
        })
        .collect();
    Ok((camera.info().human_name(), described))
}

fn device_path(index: u32) -> PathBuf {
    PathBuf::from(format!("/dev/video{index}"))
}

/// The camera numbers with a /dev/videoN node in `dev`, in order.
fn video_devices(dev: &Path) -> Vec<u32> {
    let mut found: Vec<u32> = std::fs::read_dir(dev)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            entry
                .file_name()
                .to_str()?
                .strip_prefix("video")?
                .parse()
                .ok()
        })
        .collect();
    found.sort_unstable();
    found
}

fn no_camera_message(index: u32, device: &Path, present: &[u32]) -> String {
    let list = "`v4l2-ctl --list-devices` (package v4l-utils) lists cameras";
    let others = if present.is_empty() {
        format!(
            "this machine has no /dev/video* device: is a camera plugged in and its driver \
             loaded? {list}"
        )
    } else {
        let names: Vec<String> = present
            .iter()
            .map(|n| format!("camera:{n} (/dev/video{n})"))
            .collect();
        format!("present: {}; {list}", names.join(", "))
    };
    format!(
        "no camera: {} does not exist (camera:{index}); {others}",
        device.display()
    )
}

/// Adds what to do for the failures people meet most.
fn with_hint(why: String) -> String {
    let lower = why.to_lowercase();
    if lower.contains("permission denied") {
        format!("{why} (add the user to the `video` group, then log in again)")
    } else if lower.contains("busy") {
        format!("{why} (another program is using the camera)")
    } else {
        why
    }
}

/// Starts the capture thread and waits until the camera streams (or fails to); with the
/// camera's name.
fn open_camera(index: u32, wanted_fps: u32) -> Result<(CameraCapture, String), String> {
    let device = device_path(index);
    if !device.exists() {
        return Err(format!("{} is gone (unplugged?)", device.display()));
    }
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot::default()),
        ready: Condvar::new(),
    });
    let (opened, outcome) = mpsc::channel();
    let thread_shared = shared.clone();
    std::thread::Builder::new()
        .name(format!("camera {index}"))
        .spawn(move || {
            // nokhwa walks whatever sizes the driver reports; a driver reporting nonsense
            // (a zero step) makes it panic, and a panic must not take the recorder down.
            let run = catch_unwind(AssertUnwindSafe(|| match start_camera(index, wanted_fps) {
                Ok(mut camera) => {
                    let name = camera.info().human_name();
                    let _ = opened.send(Ok((camera.camera_format(), name)));
                    take_pictures(
                        || {
                            let raw = camera.frame_raw().map_err(|e| e.to_string())?;
                            Ok(raw.into_owned())
                        },
                        &thread_shared,
                    );
                }
                Err(why) => {
                    let _ = opened.send(Err(why));
                }
            }));
            if run.is_err() {
                let mut slot = thread_shared.slot.lock().unwrap_or_else(|e| e.into_inner());
                slot.failure = Some("the camera driver's answers made nokhwa fail".into());
                thread_shared.ready.notify_all();
            }
        })
        .map_err(|e| format!("cannot start the camera's thread: {e}"))?;
    match outcome.recv() {
        Ok(Ok((format, name))) => Ok((
            CameraCapture {
                shared,
                format,
                raw: Vec::new(),
                taken_at: Instant::now(),
                skipped: 0,
            },
            name,
        )),
        Ok(Err(why)) => Err(why),
        Err(_) => Err("the camera driver's answers made nokhwa fail".into()),
    }
}

fn start_camera(index: u32, wanted_fps: u32) -> Result<nokhwa::Camera, String> {
    let any = RequestedFormat::with_formats(RequestedFormatType::None, FORMATS);
    let mut camera =
        nokhwa::Camera::new(CameraIndex::Index(index), any).map_err(|e| e.to_string())?;
    let formats = camera
        .compatible_camera_formats()
        .map_err(|e| e.to_string())?;
    let chosen = choose_format(&formats, wanted_fps)
        .ok_or_else(|| format!("it offers no picture format Kradan decodes ({formats:?})"))?;
    camera
        .set_camera_requset(RequestedFormat::with_formats(
            RequestedFormatType::Exact(chosen),
            FORMATS,
        ))
        .map_err(|e| e.to_string())?;
    camera.open_stream().map_err(|e| e.to_string())?;
    Ok(camera)
}

/// The capture thread's loop: until the reader lets go of the camera or it fails.
fn take_pictures(mut take: impl FnMut() -> Result<Vec<u8>, String>, shared: &Shared) {
    loop {
        let picture = take();
        let taken = Instant::now();
        let mut slot = shared.slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.stop {
            return;
        }
        match picture {
            Ok(raw) => {
                if slot.newest.replace((raw, taken)).is_some() {
                    slot.replaced += 1;
                }
                shared.ready.notify_all();
            }
            Err(e) => {
                slot.failure = Some(e);
                shared.ready.notify_all();
                return;
            }
        }
    }
}

/// The format to ask for: at least [`SLOWEST_FPS`] where the camera can, the most pixels
/// up to [`LARGEST_PIXELS`] (else the fewest above), the rate nearest `wanted_fps`, then
/// compressed MJPEG before raw formats (less USB bandwidth for the same picture).
fn choose_format(formats: &[CameraFormat], wanted_fps: u32) -> Option<CameraFormat> {
    let decodable = formats.iter().filter(|f| FORMATS.contains(&f.format()));
    let fast_enough: Vec<&CameraFormat> = decodable
        .clone()
        .filter(|f| f.frame_rate() >= SLOWEST_FPS.min(wanted_fps))
        .collect();
    let candidates = if fast_enough.is_empty() {
        decodable.collect()
    } else {
        fast_enough
    };
    candidates
        .into_iter()
        .max_by_key(|f| {
            let pixels = f.width() as u64 * f.height() as u64;
            let fits = pixels <= LARGEST_PIXELS;
            let size = if fits {
                pixels as i64
            } else {
                -(pixels as i64)
            };
            let rate_gap = f.frame_rate().abs_diff(wanted_fps);
            let rank = FORMATS.len() - FORMATS.iter().position(|&x| x == f.format()).unwrap_or(0);
            (fits, size, std::cmp::Reverse(rate_gap), rank)
        })
        .copied()
}

/// A camera that sends nothing for this long counts as dropped.
const PICTURE_TIMEOUT: Duration = Duration::from_secs(5);

impl Capture for CameraCapture {
    fn grab(&mut self) -> Result<bool, String> {
        let mut slot = self.shared.slot.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = Instant::now() + PICTURE_TIMEOUT;
        loop {
            if let Some((raw, taken)) = slot.newest.take() {
                self.raw = raw;
                self.taken_at = taken;
                self.skipped = std::mem::take(&mut slot.replaced);
                return Ok(true);
            }
            if let Some(failure) = slot.failure.take() {
                return Err(failure);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no picture for {} s", PICTURE_TIMEOUT.as_secs()));
            }
            slot = self
                .shared
                .ready
                .wait_timeout(slot, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn retrieve(&mut self) -> Result<Mat, String> {
        decode(
            &self.raw,
            self.format.format(),
            self.format.width() as i32,
            self.format.height() as i32,
        )
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn taken_at(&self) -> Option<Instant> {
        Some(self.taken_at)
    }
}

impl Drop for CameraCapture {
    /// The thread stops at its next picture. It is not joined: a camera that hangs would
    /// hang the reader too.
    fn drop(&mut self) {
        let mut slot = self.shared.slot.lock().unwrap_or_else(|e| e.into_inner());
        slot.stop = true;
    }
}

/// A raw camera picture as BGR.
fn decode(raw: &[u8], format: FrameFormat, width: i32, height: i32) -> Result<Mat, String> {
    let (rows, channels, conversion) = match format {
        FrameFormat::MJPEG => return decode_jpeg(raw),
        FrameFormat::YUYV => (height, 2, imgproc::COLOR_YUV2BGR_YUYV),
        FrameFormat::NV12 => (height * 3 / 2, 1, imgproc::COLOR_YUV2BGR_NV12),
        FrameFormat::GRAY => (height, 1, imgproc::COLOR_GRAY2BGR),
        FrameFormat::RAWRGB => (height, 3, imgproc::COLOR_RGB2BGR),
        FrameFormat::RAWBGR => (height, 3, -1),
    };
    let expected = rows as usize * width as usize * channels;
    if width <= 0 || height <= 0 || raw.len() < expected {
        return Err(format!(
            "a {format} picture of {width}×{height} needs {expected} bytes, got {}",
            raw.len()
        ));
    }
    let flat = Mat::from_slice(&raw[..expected]).map_err(|e| e.to_string())?;
    let shaped = flat
        .reshape(channels as i32, rows)
        .map_err(|e| e.to_string())?;
    let mut image = Mat::default();
    if conversion < 0 {
        shaped.copy_to(&mut image).map_err(|e| e.to_string())?;
    } else {
        imgproc::cvt_color_def(&shaped, &mut image, conversion).map_err(|e| e.to_string())?;
    }
    Ok(image)
}

fn decode_jpeg(raw: &[u8]) -> Result<Mat, String> {
    let bytes = Vector::from_slice(raw);
    let image = imgcodecs::imdecode(&bytes, imgcodecs::IMREAD_COLOR).map_err(|e| e.to_string())?;
    if image.empty() {
        return Err(format!("a broken JPEG picture ({} bytes)", raw.len()));
    }
    Ok(image)
}

impl FrameSource for Camera {
    fn kind(&self) -> SourceKind {
        SourceKind::Camera
    }

    fn describe(&self) -> String {
        format!(
            "camera {} ({}, /dev/video{}, {}×{} {} at {} fps)",
            self.index,
            self.name,
            self.index,
            self.format.width(),
            self.format.height(),
            self.format.format(),
            self.format.frame_rate()
        )
    }

    fn fps(&self) -> Option<f64> {
        Some(self.format.frame_rate() as f64)
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

#[cfg(test)]
mod tests {
    use super::*;
    use nokhwa::utils::Resolution;

    fn format(w: u32, h: u32, f: FrameFormat, fps: u32) -> CameraFormat {
        CameraFormat::new(Resolution::new(w, h), f, fps)
    }

    #[test]
    fn the_chosen_format_is_full_hd_compressed_at_the_rate_asked() {
        use FrameFormat::*;
        let offered = [
            format(640, 480, YUYV, 30),
            format(1920, 1080, YUYV, 5),
            format(1920, 1080, MJPEG, 30),
            format(1920, 1080, MJPEG, 15),
            format(3840, 2160, MJPEG, 30),
            format(1280, 720, MJPEG, 60),
        ];
        assert_eq!(choose_format(&offered, 30), Some(offered[2]));
        assert_eq!(choose_format(&offered, 15), Some(offered[3]));
        // Raw 1080p only at 5 fps: 720p MJPEG is kept instead.
        let raw_only = [format(1920, 1080, YUYV, 5), format(1280, 720, YUYV, 10)];
        assert_eq!(choose_format(&raw_only, 30), Some(raw_only[1]));
        // Only 4K: the smallest above the limit.
        let big = [format(4096, 2160, MJPEG, 30), format(3840, 2160, MJPEG, 30)];
        assert_eq!(choose_format(&big, 30), Some(big[1]));
        assert_eq!(choose_format(&[], 30), None);
    }

    #[test]
    fn the_no_camera_message_says_what_exists() {
        let none = no_camera_message(0, Path::new("/dev/video0"), &[]);
        assert!(none.starts_with("no camera: /dev/video0 does not exist (camera:0); this machine has no /dev/video* device"), "{none}");
        assert!(none.contains("v4l2-ctl --list-devices"));
        let some = no_camera_message(1, Path::new("/dev/video1"), &[0, 2]);
        assert!(
            some.contains("present: camera:0 (/dev/video0), camera:2 (/dev/video2)"),
            "{some}"
        );
    }

    #[test]
    fn devices_are_found_by_number() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["video10", "video2", "video-meta", "null"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        assert_eq!(video_devices(dir.path()), [2, 10]);
        assert!(video_devices(Path::new("/no/such/dir")).is_empty());
    }

    #[test]
    fn raw_pictures_decode_to_bgr() {
        // Y 128, U and V 128: mid grey in every format.
        let grey = |m: &Mat| {
            let p = m.at_2d::<opencv::core::Vec3b>(1, 1).unwrap();
            assert!(p.iter().all(|&c| (c as i32 - 128).abs() <= 2), "{p:?}");
            assert_eq!((m.cols(), m.rows(), m.typ()), (4, 2, opencv::core::CV_8UC3));
        };
        grey(&decode(&[128; 4 * 2 * 2], FrameFormat::YUYV, 4, 2).unwrap());
        grey(&decode(&[128; 4 * 3], FrameFormat::NV12, 4, 2).unwrap());
        grey(&decode(&[128; 4 * 2], FrameFormat::GRAY, 4, 2).unwrap());
        grey(&decode(&[128; 4 * 2 * 3], FrameFormat::RAWRGB, 4, 2).unwrap());
        grey(&decode(&[128; 4 * 2 * 3], FrameFormat::RAWBGR, 4, 2).unwrap());
        let picture = Mat::new_rows_cols_with_default(
            2,
            4,
            opencv::core::CV_8UC3,
            opencv::core::Scalar::all(128.0),
        )
        .unwrap();
        let mut jpeg = Vector::<u8>::new();
        imgcodecs::imencode(".jpg", &picture, &mut jpeg, &Vector::new()).unwrap();
        grey(&decode(jpeg.as_slice(), FrameFormat::MJPEG, 4, 2).unwrap());
    }

    #[test]
    fn short_or_broken_pictures_are_errors() {
        let short = decode(&[0; 10], FrameFormat::YUYV, 4, 2).unwrap_err();
        assert!(short.contains("needs 16 bytes, got 10"), "{short}");
        let broken = decode(&[0xFF, 0xD8, 0, 1, 2], FrameFormat::MJPEG, 4, 2).unwrap_err();
        assert!(broken.contains("broken JPEG"), "{broken}");
        assert!(decode(&[], FrameFormat::GRAY, 0, 0).is_err());
    }

    /// A capture thread fed by `take` instead of a camera, and its reader's end.
    fn fake_camera(
        take: impl FnMut() -> Result<Vec<u8>, String> + Send + 'static,
    ) -> CameraCapture {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot::default()),
            ready: Condvar::new(),
        });
        let thread_shared = shared.clone();
        std::thread::spawn(move || take_pictures(take, &thread_shared));
        CameraCapture {
            shared,
            format: format(1, 1, FrameFormat::GRAY, 100),
            raw: Vec::new(),
            taken_at: Instant::now(),
            skipped: 0,
        }
    }

    #[test]
    fn a_busy_reader_gets_the_newest_picture_and_the_count_it_missed() {
        let mut n = 0u8;
        let mut camera = fake_camera(move || {
            std::thread::sleep(Duration::from_millis(10));
            n = n.wrapping_add(1);
            Ok(vec![n])
        });
        assert_eq!(camera.grab(), Ok(true));
        let first = camera.raw[0];
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(camera.grab(), Ok(true));
        // About ten pictures came meanwhile: the reader gets the last, the rest are counted.
        let missed = camera.skipped();
        assert!((4..=12).contains(&missed), "{missed}");
        assert_eq!(camera.raw[0], first.wrapping_add(missed as u8 + 1));
        assert!(camera.taken_at().unwrap().elapsed() < Duration::from_millis(100));
        let grey = camera.retrieve().unwrap();
        assert_eq!((grey.cols(), grey.rows()), (1, 1));
    }

    #[test]
    fn a_failing_camera_reports_why_once_its_pictures_are_taken() {
        let mut left = 2;
        let mut camera = fake_camera(move || {
            left -= 1;
            if left >= 0 {
                Ok(vec![0])
            } else {
                Err("device unplugged".into())
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(camera.grab(), Ok(true));
        assert_eq!(camera.skipped(), 1);
        assert_eq!(camera.grab(), Err("device unplugged".to_string()));
    }

    #[test]
    fn letting_go_of_the_camera_stops_its_thread() {
        let taken = Arc::new(Mutex::new(0));
        let count = taken.clone();
        let mut camera = fake_camera(move || {
            std::thread::sleep(Duration::from_millis(5));
            *count.lock().unwrap() += 1;
            Ok(vec![0])
        });
        assert_eq!(camera.grab(), Ok(true));
        drop(camera);
        std::thread::sleep(Duration::from_millis(30));
        let after_drop = *taken.lock().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(*taken.lock().unwrap(), after_drop);
    }

    #[test]
    fn listing_with_no_camera_says_so() {
        let empty = tempfile::tempdir().unwrap();
        match list_cameras_in(empty.path()) {
            Err(SourceError::NoCamera(message)) => {
                assert!(message.starts_with("no camera: this machine has no /dev/video*"));
                assert!(message.contains("v4l2-ctl --list-devices"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_node_nokhwa_cannot_query_is_listed_with_why() {
        // A plain file named like a video node: nokhwa cannot query it, and the listing says
        // so for that node instead of failing.
        let dev = tempfile::tempdir().unwrap();
        std::fs::write(dev.path().join("video7"), b"").unwrap();
        let listed = list_cameras_in(dev.path()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].index, 7);
        assert!(listed[0].error.is_some(), "{:?}", listed[0]);
    }

    #[test]
    fn an_absent_camera_is_named() {
        // Camera numbers this high are not made by drivers; /dev/video0 is checked too
        // where the machine has no camera.
        let mut numbers = vec![99];
        if !Path::new("/dev/video0").exists() {
            numbers.push(0);
        }
        for n in numbers {
            match Camera::open(n, None) {
                Err(SourceError::NoCamera(message)) => {
                    assert!(message.contains(&format!("/dev/video{n} does not exist")))
                }
                Err(other) => panic!("{other}"),
                Ok(_) => panic!("camera {n} opened"),
            }
        }
    }
}
