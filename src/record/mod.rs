//! The record stage: what the recorder keeps of a game, append-only and tamper-evident.
//!
//! A record is a folder (`docs/record.md`):
//!
//! - `events.jsonl` — one line per committed move, flag, resolution or note, written, flushed
//!   and synced before the recorder goes on, each line carrying the SHA-256 of the line
//!   before it ([`events`]);
//! - `events.head` — the number of lines and the SHA-256 of the last one, rewritten after
//!   every line, so an edit to the last line or lines cut from the end are seen too;
//! - `evidence/` — the frames each move and flag points at, with their SHA-256 in the event.
//!
//! [`verify`] re-reads a record and names the first line that is not as it was written;
//! [`EventLog::resume`] continues a record after a crash, repairing a torn last line.
//! The SGF, PDN and PGN records are views of the event log and can be regenerated from it.

pub mod events;

pub use events::{
    Break, Event, EventLog, Evidence, Kind, Problem, RecordError, Report, Resumed, verify,
};
