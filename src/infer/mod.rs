//! Move inference: settled positions in, moves and flags out, judged by the rules engines.
//! No pixels here: what the camera saw arrives as an [`crate::games::Occupancy`].

pub mod eight;
pub mod go;
pub mod makhos;
pub mod makruk;
