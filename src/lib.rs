//! Kradan watches a physical Go, Mak-hos or Makruk board through a camera and keeps the
//! game record. The crate is organised by the direction data flows (see
//! `docs/ARCHITECTURE.md`): frames come in through `source`, `geometry` finds the board,
//! `reading` says what stands on every cell, and the rules engines in `games` judge it.

pub mod debug;
pub mod detect;
pub mod detect_eight;
pub mod eval;
pub mod eval_eight;
pub mod footage_eval;
pub mod games;
pub mod geometry;
pub mod infer;
pub mod peers;
pub mod reading;
pub mod record;
pub mod recorder;
pub mod render;
pub mod replay;
pub mod serve;
pub mod source;
pub mod store;
pub mod track;
