//! `game.pgn` as the recorder keeps a Makruk game ([`MoveText`]): `[Variant "makruk"]`, SAN
//! moves with the video time of each and the flags as comments on the move they concern
//! (as `sgf_view` does for Go).

use super::movetext::{MoveText, Notation};
use crate::games::Color;
use crate::games::makruk::Position;
use std::fmt;
use std::fmt::Write as _;

/// A move in SAN and the side that played it: a double move is two moves of one side.
pub struct SanMove {
    pub color: Color,
    pub san: String,
}

impl fmt::Display for SanMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.san)
    }
}

pub struct Pgn {
    start: Position,
}

pub type PgnView = MoveText<Pgn>;

impl PgnView {
    pub fn new(start: Position) -> PgnView {
        MoveText::with_notation(Pgn { start })
    }
}

impl Notation for Pgn {
    type Move = SanMove;

    fn game_tags(&self, out: &mut String) {
        let _ = writeln!(out, "[Variant \"makruk\"]");
        let start_fen = self.start.to_fen();
        if start_fen != Position::START_FEN {
            let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{start_fen}\"]");
        }
    }

    fn first_number(&self) -> u32 {
        self.start.fullmove_number()
    }

    fn mover(&self, _: usize, mv: &SanMove) -> Color {
        mv.color
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::makruk::{read_pgn, replay, to_san};

    #[test]
    fn the_record_reads_back_and_replays_clean() {
        let mut position = Position::start();
        let mut view = PgnView::new(position.clone());
        let mut sans = Vec::new();
        for (i, pick) in [3usize, 5, 0, 7].into_iter().enumerate() {
            let mv = position.legal_moves()[pick];
            let san = to_san(&position, &mv);
            view.set_move(
                i + 1,
                SanMove {
                    color: position.turn(),
                    san: san.clone(),
                },
                Some(2.0 * i as f64),
            );
            position.play(&mv);
            sans.push(san);
        }
        view.add_comment("flag 2: double-move (MAKRUK 4, advisory)");
        let text = view.text();
        assert!(text.contains("t=6.00s; flag 2"), "{text}");
        let game = read_pgn(&text).unwrap();
        let read: Vec<&str> = game.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(read, sans);
        let report = replay(&text).unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }
}
