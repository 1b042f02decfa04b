//! `game.pdn` as the recorder keeps a Mak-hos game ([`MoveText`]): the moves with the video
//! time of each, the flags as comments on the move they concern (as `sgf_view` does for
//! Go). `[GameType "31,W,8,8,N1,0"]`, numeric squares.

use super::movetext::{MoveText, Notation};
use crate::games::Color;
use crate::games::makhos::{GAME_TYPE, Men, Position, WrittenMove, fen};
use std::fmt::Write as _;

pub struct Pdn {
    start: Position,
}

pub type PdnView = MoveText<Pdn>;

impl PdnView {
    pub fn new(start: Position) -> PdnView {
        MoveText::with_notation(Pdn { start })
    }
}

impl Notation for Pdn {
    type Move = WrittenMove;

    fn game_tags(&self, out: &mut String) {
        let _ = writeln!(out, "[GameType \"{GAME_TYPE}\"]");
        if self.start != Position::start(Men::Eight, Color::White) {
            let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{}\"]", fen(&self.start));
        }
    }

    fn first_number(&self) -> u32 {
        1
    }

    /// A written Mak-hos move does not say whose it is; the record alternates.
    fn mover(&self, ply: usize, _: &WrittenMove) -> Color {
        if ply.is_multiple_of(2) {
            self.start.turn()
        } else {
            self.start.turn().opponent()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::makhos::{read_pdn, replay};

    #[test]
    fn the_record_reads_back_with_times_flags_and_a_takeback() {
        let start = Position::start(Men::Eight, Color::White);
        let mut view = PdnView::new(start);
        let legal = start.legal_moves();
        let first = legal[0];
        let after = start.play(&first);
        view.set_move(1, WrittenMove::from(&legal[1]), Some(3.5));
        view.take_back(1);
        view.set_move(1, WrittenMove::from(&first), Some(4.25));
        view.add_comment("flag 1: missed-capture (HOS 2.4, advisory)");
        let reply = after.legal_moves()[0];
        view.set_move(2, WrittenMove::from(&reply), Some(9.0));
        let text = view.text();
        assert!(text.contains("t=4.25s; flag 1"), "{text}");
        let games = read_pdn(&text).unwrap();
        assert_eq!(
            games[0].moves,
            [WrittenMove::from(&first), WrittenMove::from(&reply)]
        );
        let report = replay(&text).unwrap();
        assert!(report.problems.is_empty(), "{:?}", report.problems);
    }
}
