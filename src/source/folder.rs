//! A folder of images: stills (one observation each, 1 s apart) or, with --fps, the frames
//! of a video exported one file each.

use super::image::load;
use super::{Frame, FrameSource, SourceError, SourceKind, fps_text, index_at};
use opencv::core::Mat;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

const IMAGE_EXTENSIONS: &[&str] = &["jpg", "jpeg", "png", "bmp", "tif", "tiff", "webp"];

/// Whether the file name has an image extension Kradan reads (case does not matter).
pub fn is_image_name(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

pub struct Folder {
    /// The folder, or the single image given instead of one.
    path: PathBuf,
    images: Vec<PathBuf>,
    fps: Option<f64>,
    next_index: u64,
}

impl Folder {
    /// The images of `dir` in natural order (2.jpg before 10.jpg); other files and hidden
    /// files are ignored.
    pub fn open(dir: &Path, fps: Option<f64>) -> Result<Folder, SourceError> {
        let cannot = |e: std::io::Error| SourceError::CannotOpen {
            what: dir.display().to_string(),
            why: e.to_string(),
        };
        let mut images = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(cannot)? {
            let path = entry.map_err(cannot)?.path();
            // Hidden files include the "._name.jpg" companions macOS leaves on USB sticks.
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if is_image_name(&path) && !hidden && !path.is_dir() {
                images.push(path);
            }
        }
        if images.is_empty() {
            return Err(SourceError::EmptyFolder {
                path: dir.to_path_buf(),
            });
        }
        images.sort_by(|a, b| natural_order(&a.to_string_lossy(), &b.to_string_lossy()));
        Ok(Folder {
            path: dir.to_path_buf(),
            images,
            fps,
            next_index: 0,
        })
    }

    /// One image given as the source: a folder of one.
    pub fn single(image: &Path, fps: Option<f64>) -> Folder {
        Folder {
            path: image.to_path_buf(),
            images: vec![image.to_path_buf()],
            fps,
            next_index: 0,
        }
    }

    /// The images, in the order they are delivered.
    pub fn images(&self) -> &[PathBuf] {
        &self.images
    }

    /// Images per second of source time: one for stills.
    fn rate(&self) -> f64 {
        self.fps.unwrap_or(1.0)
    }
}

impl FrameSource for Folder {
    fn kind(&self) -> SourceKind {
        match self.fps {
            Some(_) => SourceKind::FramesFolder,
            None => SourceKind::Stills,
        }
    }

    fn describe(&self) -> String {
        let n = self.images.len();
        let what = match self.fps {
            Some(fps) => format!("read as video frames at {}", fps_text(fps)),
            None => "one observation per image".into(),
        };
        let images = if n == 1 { "image" } else { "images" };
        format!("folder {} ({n} {images}, {what})", self.path.display())
    }

    fn fps(&self) -> Option<f64> {
        self.fps
    }

    fn frame_count(&self) -> Option<u64> {
        Some(self.images.len() as u64)
    }

    fn next_frame(&mut self, decode: bool) -> Result<Option<Frame>, SourceError> {
        let index = self.next_index;
        let Some(path) = self.images.get(index as usize) else {
            return Ok(None);
        };
        // Moving on first: a bad image is reported once and the next call goes past it.
        self.next_index += 1;
        let image = if decode {
            load(path)
                .map_err(|source| SourceError::UnreadableImage { index, source })?
                .image
        } else {
            Mat::default()
        };
        Ok(Some(Frame {
            index,
            time: index as f64 / self.rate(),
            image,
            note: None,
        }))
    }

    fn seek(&mut self, time: f64) -> Result<(), SourceError> {
        let index = index_at(time, self.rate());
        self.next_index = index.min(self.images.len() as u64);
        Ok(())
    }
}

/// Orders names as people count: runs of digits compare by value ("2" < "10"), the rest
/// case-insensitively; ties fall back to the plain bytes so the order is total.
pub fn natural_order(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.is_empty(), y.is_empty()) {
            (true, true) => return a.cmp(b),
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let (cx, rest_x) = chunk(x);
        let (cy, rest_y) = chunk(y);
        let order = match (is_digits(cx), is_digits(cy)) {
            (true, true) => {
                let (vx, vy) = (cx.trim_start_matches('0'), cy.trim_start_matches('0'));
                vx.len().cmp(&vy.len()).then_with(|| vx.cmp(vy))
            }
            _ => cx.to_lowercase().cmp(&cy.to_lowercase()),
        };
        if order != Ordering::Equal {
            return order;
        }
        (x, y) = (rest_x, rest_y);
    }
}

fn is_digits(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// The leading run of digits, or of anything else, and the rest.
fn chunk(s: &str) -> (&str, &str) {
    let digits = is_digits(s);
    let end = s
        .char_indices()
        .find(|&(_, c)| c.is_ascii_digit() != digits)
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| natural_order(a, b));
        v
    }

    #[test]
    fn numbers_sort_by_value() {
        assert_eq!(
            sorted(&["10.jpg", "2.jpg", "1.jpg", "0.jpg", "11.jpg"]),
            ["0.jpg", "1.jpg", "2.jpg", "10.jpg", "11.jpg"]
        );
        assert_eq!(
            sorted(&["img12b.png", "img12a.png", "IMG2.png", "img100.png"]),
            ["IMG2.png", "img12a.png", "img12b.png", "img100.png"]
        );
        assert_eq!(
            sorted(&["frame_010.png", "frame_9.png", "frame_0100.png"]),
            ["frame_9.png", "frame_010.png", "frame_0100.png"]
        );
        // Numbers longer than any integer type still compare.
        assert_eq!(
            sorted(&["123456789012345678901234.jpg", "99.jpg"]),
            ["99.jpg", "123456789012345678901234.jpg"]
        );
    }

    #[test]
    fn the_order_is_total() {
        assert_eq!(natural_order("a01", "a1"), "a01".cmp("a1"));
        assert_ne!(natural_order("A.jpg", "a.jpg"), Ordering::Equal);
        assert_eq!(natural_order("x", "x"), Ordering::Equal);
        assert_eq!(natural_order("é2", "é10"), Ordering::Less);
    }

    #[test]
    fn image_names() {
        for name in [
            "a.jpg", "b.JPEG", "c.png", "d.bmp", "e.tif", "f.TIFF", "g.webp",
        ] {
            assert!(is_image_name(Path::new(name)), "{name}");
        }
        for name in ["a.txt", "b.sgf", "c.yml", "jpg", "d.jpg.txt"] {
            assert!(!is_image_name(Path::new(name)), "{name}");
        }
    }

    #[test]
    fn stills_are_a_second_apart_and_frames_at_the_rate() {
        let images = (0..5).map(|i| PathBuf::from(format!("{i}.jpg"))).collect();
        let mut stills = Folder {
            path: "x".into(),
            images,
            fps: None,
            next_index: 0,
        };
        assert_eq!(stills.kind(), SourceKind::Stills);
        stills.seek(2.5).unwrap();
        let frame = stills.next_frame(false).unwrap().unwrap();
        assert_eq!((frame.index, frame.time), (3, 3.0));
        stills.fps = Some(4.0);
        assert_eq!(stills.kind(), SourceKind::FramesFolder);
        stills.seek(0.5).unwrap();
        let frame = stills.next_frame(false).unwrap().unwrap();
        assert_eq!((frame.index, frame.time), (2, 0.5));
        stills.seek(100.0).unwrap();
        assert!(stills.next_frame(false).unwrap().is_none());
    }
}
