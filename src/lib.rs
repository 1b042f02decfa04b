//! Kradan watches a physical Go, Mak-hos or Makruk board through a camera and keeps the
//! game record. The crate is organised by the direction data flows (see
//! `docs/ARCHITECTURE.md`); this first part holds the rules engines and the record checker
//! that everything later builds on.

pub mod games;
pub mod peers;
pub mod replay;
