//! `kradan eval-footage DIR`: the recorder measured on rendered games (`docs/eval-footage.md`).
//!
//! Each game is a clip `kradan render` made from a record, with its exact truth; the
//! recorder's event log is scored against the truth: moves right, games exactly right,
//! staged anomalies flagged with their rule, false flags, and how long after the hand left
//! the board each move was committed.

pub mod events;
pub mod score;
pub mod truth;

pub use score::{GameScore, Symmetry};
