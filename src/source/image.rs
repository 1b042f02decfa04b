//! Still images: one photo in, a BGR picture out, with the factor back to the original's
//! pixels.

use opencv::core::Mat;
use opencv::imgcodecs;
use opencv::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Above this many pixels a photo is decoded at reduced resolution: a 12000×9000 JPEG would
/// take 324 MB as BGR at full size, and the reading needs nowhere near that detail.
pub const MAX_DECODED_PIXELS: u64 = 24_000_000;

/// A decoded photo, upright (the EXIF orientation applied).
pub struct LoadedImage {
    /// BGR, 8 bits per channel.
    pub image: Mat,
    /// Original pixels per decoded pixel (1 unless the photo was decoded reduced).
    /// A point `p` of `image` is at `p · scale` in the original, upright photo.
    pub scale: f64,
    /// Width and height of the original photo, upright.
    pub original_size: (i32, i32),
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is empty (0 bytes)", path.display())]
    Empty { path: PathBuf },
    #[error("{} is not an image OpenCV can decode (JPEG, PNG, BMP, TIFF, WebP…)", path.display())]
    NotAnImage { path: PathBuf },
    #[error("{}: OpenCV failed to decode it: {source}", path.display())]
    Decode {
        path: PathBuf,
        source: opencv::Error,
    },
}

/// Loads a photo. The EXIF orientation is applied (OpenCV's `imread` does so unless told
/// `IMREAD_IGNORE_ORIENTATION`), so pixel coordinates are those a photo viewer shows.
pub fn load(path: &Path) -> Result<LoadedImage, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if metadata.is_dir() {
        return Err(io(std::io::Error::other("it is a directory")));
    }
    if metadata.len() == 0 {
        return Err(LoadError::Empty {
            path: path.to_path_buf(),
        });
    }
    let mut head = Vec::with_capacity(64 * 1024);
    std::fs::File::open(path)
        .map_err(io)?
        .take(256 * 1024)
        .read_to_end(&mut head)
        .map_err(io)?;
    let header_size = header_dimensions(&head);
    // Before the decoder sees the file: a text file would otherwise reach OpenCV, which
    // prints its own warnings for some content.
    if header_size.is_none() && !looks_like_other_image(&head) {
        return Err(LoadError::NotAnImage {
            path: path.to_path_buf(),
        });
    }
    let reduction = header_size.map_or(1, |(w, h)| reduction_for(w as u64 * h as u64));
    let flags = match reduction {
        1 => imgcodecs::IMREAD_COLOR,
        2 => imgcodecs::IMREAD_REDUCED_COLOR_2,
        4 => imgcodecs::IMREAD_REDUCED_COLOR_4,
        _ => imgcodecs::IMREAD_REDUCED_COLOR_8,
    };
    let image = imgcodecs::imread(path.as_os_str(), flags).map_err(|source| LoadError::Decode {
        path: path.to_path_buf(),
        source,
    })?;
    if image.empty() {
        return Err(LoadError::NotAnImage {
            path: path.to_path_buf(),
        });
    }
    let (width, height) = (image.cols(), image.rows());
    let (scale, original_size) = match header_size {
        Some((w, h)) => {
            // The header gives the stored size; EXIF may have turned the picture a quarter.
            let (w, h) = if (w > h) != (width > height) && w != h {
                (h, w)
            } else {
                (w, h)
            };
            (w as f64 / width as f64, (w as i32, h as i32))
        }
        None => (1.0, (width, height)),
    };
    Ok(LoadedImage {
        image,
        scale,
        original_size,
    })
}

/// The smallest reduction (1, 2, 4, 8) that brings the decoded picture under
/// [`MAX_DECODED_PIXELS`].
pub fn reduction_for(pixels: u64) -> u32 {
    [1u32, 2, 4, 8]
        .into_iter()
        .find(|&r| pixels / (r as u64 * r as u64) <= MAX_DECODED_PIXELS)
        .unwrap_or(8)
}

/// Width and height from a JPEG or PNG header, without decoding the picture.
pub fn header_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() >= 24 && &bytes[12..16] == b"IHDR" {
        let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
        return Some((w, h));
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        let mut at = 2;
        while at + 4 <= bytes.len() {
            if bytes[at] != 0xFF {
                return None;
            }
            let marker = bytes[at + 1];
            if marker == 0xFF {
                at += 1;
                continue;
            }
            // Markers without a length field.
            if marker == 0x01 || (0xD0..=0xD7).contains(&marker) {
                at += 2;
                continue;
            }
            let length = u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
            let is_frame = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
            if is_frame {
                let frame = bytes.get(at + 4..at + 9)?;
                let h = u16::from_be_bytes([frame[1], frame[2]]) as u32;
                let w = u16::from_be_bytes([frame[3], frame[4]]) as u32;
                return Some((w, h));
            }
            at += 2 + length;
        }
    }
    None
}

/// Other formats OpenCV reads (their size is left to OpenCV's own pixel limit).
fn looks_like_other_image(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BM")
        || bytes.starts_with(b"II*\0")
        || bytes.starts_with(b"MM\0*")
        || (bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP"))
        || (bytes.len() > 2 && bytes[0] == b'P' && (b'1'..=b'6').contains(&bytes[1]))
        || bytes.starts_with(b"\x89PNG")
        || bytes.starts_with(&[0xFF, 0xD8])
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Scalar, Vector};

    #[test]
    fn reduction_keeps_the_decoded_picture_small() {
        assert_eq!(reduction_for(2048 * 1536), 1);
        assert_eq!(reduction_for(12000 * 9000), 4);
        assert_eq!(reduction_for(100_000 * 100_000), 8);
    }

    #[test]
    fn header_sizes_of_encoded_pictures() {
        let picture = Mat::new_rows_cols_with_default(
            30,
            50,
            opencv::core::CV_8UC3,
            Scalar::new(10.0, 20.0, 30.0, 0.0),
        )
        .unwrap();
        for ext in [".png", ".jpg"] {
            let mut bytes = Vector::<u8>::new();
            imgcodecs::imencode(ext, &picture, &mut bytes, &Vector::new()).unwrap();
            assert_eq!(header_dimensions(bytes.as_slice()), Some((50, 30)), "{ext}");
        }
        assert_eq!(header_dimensions(b"hello world"), None);
    }
}
