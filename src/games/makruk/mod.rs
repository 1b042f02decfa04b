//! Makruk (Thai chess): move generation and legality, FEN and PGN in Fairy-Stockfish's
//! `makruk` conventions, the counting rules of MAKRUK 7–14, the material draws of
//! MAKRUK 15–16, move explanation from camera occupancy, the positions a game joined in progress can be in, and the record checker.
//!
//! White is the light side and moves up the board from rank 1; in an [`Occupancy`]
//! row 0 is rank 8 and column 0 is file a.
//!
//! [`Occupancy`]: crate::games::Occupancy

pub mod counting;
pub mod explain;
pub mod fen;
pub mod join;
pub mod pgn;
pub mod position;
pub mod replay;
pub mod san;

pub use counting::{Count, CountKind};
pub use explain::explain;
pub use join::{Joined, join, moves_to_reach};
pub use pgn::{PgnGame, SanToken, Tag, read_pgn, write_pgn};
pub use position::{Board, Move, MoveList, Piece, Position, Role, Square, Status};
pub use replay::replay;
pub use san::{SanError, parse_san, to_san};
