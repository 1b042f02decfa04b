//! `camera:N` on a machine without that camera: a clear error, never a panic. (The live
//! code path with pictures is tested through `play:`, in source_video.rs, and the retry
//! logic in source::live.)

use kradan::source::{self, SourceError};
use std::path::Path;

fn no_camera_message(spec: &str) -> String {
    match source::open(spec, None) {
        Err(SourceError::NoCamera(message)) => message,
        Err(other) => panic!("{spec}: expected NoCamera, got {other}"),
        Ok(source) => panic!("{spec} opened: {}", source.describe()),
    }
}

#[test]
fn a_missing_camera_is_named_with_what_to_do() {
    let message = no_camera_message("camera:57");
    assert!(
        message.starts_with("no camera: /dev/video57 does not exist (camera:57); "),
        "{message}"
    );
    assert!(message.contains("v4l2-ctl --list-devices"), "{message}");
}

#[test]
fn camera_zero_without_a_camera() {
    if Path::new("/dev/video0").exists() {
        eprintln!("skipped: this machine has /dev/video0");
        return;
    }
    let message = no_camera_message("camera:0");
    assert!(
        message.starts_with("no camera: /dev/video0 does not exist (camera:0)"),
        "{message}"
    );
}

#[test]
fn a_camera_number_must_be_a_number() {
    for spec in ["camera:", "camera:-1", "camera:usb"] {
        match source::open(spec, None) {
            Err(e @ SourceError::BadSpec { .. }) => {
                assert!(e.to_string().contains("camera:0 is /dev/video0"), "{e}")
            }
            Err(other) => panic!("{spec}: {other}"),
            Ok(_) => panic!("{spec} opened"),
        }
    }
}
