//! Folders of images: natural order, other files ignored, stills and --fps frames, an
//! unreadable image named, and a real sequence from ../shared when it is there.

mod source_support;

use kradan::source::folder::Folder;
use kradan::source::{self, FrameSource, SourceError, SourceKind};
use opencv::prelude::*;
use source_support::{number_in, write_still};
use std::path::Path;

/// A folder holding the stills `numbers` (each named and showing its number) and files
/// that are not images.
fn folder_of(dir: &Path, numbers: &[u64]) {
    for &n in numbers {
        let ext = if n % 2 == 0 { "png" } else { "JPG" };
        write_still(&dir.join(format!("{n}.{ext}")), n);
    }
    std::fs::write(dir.join("game.sgf"), "(;GM[1]SZ[19])").unwrap();
    std::fs::write(dir.join("notes.txt"), "corners").unwrap();
    std::fs::write(dir.join("board.yml"), "size: 19").unwrap();
    std::fs::write(dir.join(".hidden.jpg"), "not a picture").unwrap();
    std::fs::create_dir(dir.join("older.jpg")).unwrap();
}

#[test]
fn stills_in_natural_order_one_second_apart() {
    let dir = tempfile::tempdir().unwrap();
    folder_of(dir.path(), &[10, 2, 0, 1, 11, 100]);
    let mut stills = source::open(dir.path().to_str().unwrap(), None).unwrap();
    assert_eq!(stills.kind(), SourceKind::Stills);
    assert_eq!(stills.fps(), None);
    assert_eq!(stills.frame_count(), Some(6));
    assert!(
        stills
            .describe()
            .ends_with("(6 images, one observation per image)"),
        "{}",
        stills.describe()
    );
    let mut shown = Vec::new();
    while let Some(frame) = stills.next_frame(true).unwrap() {
        assert_eq!(frame.time, frame.index as f64);
        assert_eq!(frame.index, shown.len() as u64);
        shown.push(number_in(&frame.image));
    }
    assert_eq!(shown, [0, 1, 2, 10, 11, 100]);
}

#[test]
fn with_fps_a_folder_is_the_frames_of_a_video() {
    let dir = tempfile::tempdir().unwrap();
    folder_of(dir.path(), &[0, 1, 2, 3, 4]);
    let mut frames = source::open(dir.path().to_str().unwrap(), Some(25.0)).unwrap();
    assert_eq!(frames.kind(), SourceKind::FramesFolder);
    assert_eq!(frames.fps(), Some(25.0));
    assert!(
        frames
            .describe()
            .ends_with("(5 images, read as video frames at 25 fps)")
    );
    frames.seek(0.1).unwrap();
    let frame = frames.next_frame(true).unwrap().unwrap();
    assert_eq!(
        (frame.index, frame.time, number_in(&frame.image)),
        (3, 0.12, 3)
    );
    // Not decoding skips reading the file.
    let frame = frames.next_frame(false).unwrap().unwrap();
    assert_eq!(frame.index, 4);
    assert!(frame.image.empty());
    assert!(frames.next_frame(true).unwrap().is_none());
}

#[test]
fn an_unreadable_image_is_named_after_the_ones_before() {
    let dir = tempfile::tempdir().unwrap();
    folder_of(dir.path(), &[0, 1, 3]);
    std::fs::write(dir.path().join("2.jpg"), "a text file named like a photo").unwrap();
    let mut stills = source::open(dir.path().to_str().unwrap(), None).unwrap();
    for n in 0..2 {
        let frame = stills.next_frame(true).unwrap().unwrap();
        assert_eq!(number_in(&frame.image), n);
    }
    match stills.next_frame(true) {
        Err(e @ SourceError::UnreadableImage { index: 2, .. }) => {
            let message = e.to_string();
            assert!(message.contains("2.jpg"), "{message}");
            assert!(message.contains("not an image"), "{message}");
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("the bad image was read"),
    }
    // A caller that goes on gets the images after it.
    let frame = stills.next_frame(true).unwrap().unwrap();
    assert_eq!((frame.index, number_in(&frame.image)), (3, 3));
}

#[test]
fn a_folder_without_images_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "nothing to see").unwrap();
    match source::open(dir.path().to_str().unwrap(), None) {
        Err(e @ SourceError::EmptyFolder { .. }) => {
            assert!(e.to_string().contains("no images"), "{e}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened"),
    }
}

#[test]
fn one_image_is_a_folder_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("photo.png");
    write_still(&path, 7);
    let mut still = source::open(path.to_str().unwrap(), None).unwrap();
    assert_eq!(
        (still.kind(), still.frame_count()),
        (SourceKind::Stills, Some(1))
    );
    assert_eq!(
        number_in(&still.next_frame(true).unwrap().unwrap().image),
        7
    );
    assert!(still.next_frame(true).unwrap().is_none());
}

#[test]
fn the_gomrade_testing_sequence_reads_in_order() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/go-photos/gomrade/testing_sequence");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let folder = Folder::open(&dir, None).unwrap();
    let names: Vec<String> = folder
        .images()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let expected: Vec<String> = (0..12).map(|i| format!("{i}.jpg")).collect();
    assert_eq!(names, expected);
    let mut folder: Box<dyn FrameSource> = Box::new(folder);
    let mut count = 0;
    while let Some(frame) = folder.next_frame(true).unwrap() {
        assert!(frame.image.cols() > 100 && frame.image.typ() == opencv::core::CV_8UC3);
        count += 1;
    }
    assert_eq!(count, 12);
}
