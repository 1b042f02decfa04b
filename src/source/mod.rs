//! Frames in: still images now; video files, folders, streams and cameras later.

pub mod image;
