//! `game.pdn` as the recorder keeps a Mak-hos game: the moves with the video time of each,
//! the flags as comments on the move they concern (as `sgf_view` does for Go), rewritten
//! whole after every decision. `[GameType "31,W,8,8,N1,0"]`, numeric squares.

use crate::games::Color;
use crate::games::makhos::{GAME_TYPE, GameResult, Men, Position, WrittenMove, fen};
use std::fmt::Write as _;

struct Entry {
    mv: WrittenMove,
    comment: String,
}

pub struct PdnView {
    tags: Vec<(String, String)>,
    start: Position,
    moves: Vec<Entry>,
    /// A remark before the first move.
    preamble: String,
    result: GameResult,
}

impl PdnView {
    pub fn new(start: Position) -> PdnView {
        let tags = ["Event", "Site", "Date", "Round", "White", "Black"]
            .into_iter()
            .map(|name| (name.to_string(), "?".to_string()))
            .collect();
        PdnView {
            tags,
            start,
            moves: Vec::new(),
            preamble: "Recorded by Kradan from a camera; move comments give the video time.".into(),
            result: GameResult::Unknown,
        }
    }

    pub fn set_tag(&mut self, name: &str, value: &str) {
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some(tag) => tag.1 = value.to_string(),
            None => self.tags.push((name.to_string(), value.to_string())),
        }
    }

    /// Move `number` (1-based ply); a number already recorded is replaced, and the moves
    /// after it dropped.
    pub fn set_move(&mut self, number: usize, mv: WrittenMove, time: Option<f64>) {
        self.moves.truncate(number.saturating_sub(1));
        let comment = time.map(|t| format!("t={t:.2}s")).unwrap_or_default();
        self.moves.push(Entry { mv, comment });
    }

    /// Move `number` was taken back.
    pub fn take_back(&mut self, number: usize) {
        self.moves.truncate(number.saturating_sub(1));
    }

    /// A remark on the last move (before the first move when there is none).
    pub fn add_comment(&mut self, text: &str) {
        self.add_comment_at(self.moves.len(), text);
    }

    /// A remark on move `number` (1-based ply; 0 or a move not recorded: before the first).
    pub fn add_comment_at(&mut self, number: usize, text: &str) {
        let slot = match number.checked_sub(1).and_then(|i| self.moves.get_mut(i)) {
            Some(entry) => &mut entry.comment,
            None => &mut self.preamble,
        };
        if !slot.is_empty() {
            slot.push_str("; ");
        }
        slot.push_str(text);
    }

    pub fn set_result(&mut self, result: GameResult) {
        self.result = result;
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let escape = |value: &str| value.replace('\\', "\\\\").replace('"', "\\\"");
        for (name, value) in &self.tags {
            let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
        }
        let _ = writeln!(out, "[Result \"{}\"]", self.result.token());
        let _ = writeln!(out, "[GameType \"{GAME_TYPE}\"]");
        if self.start != Position::start(Men::Eight, Color::White) {
            let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{}\"]", fen(&self.start));
        }
        out.push('\n');
        if !self.preamble.is_empty() {
            let _ = writeln!(out, "{{ {} }}", comment_text(&self.preamble));
        }
        let first_black = self.start.turn() == Color::Black;
        for (ply, entry) in self.moves.iter().enumerate() {
            let index = ply + usize::from(first_black);
            if index % 2 == 0 {
                let _ = write!(out, "{}. ", index / 2 + 1);
            } else if ply == 0 {
                let _ = write!(out, "{}... ", index / 2 + 1);
            }
            let _ = write!(out, "{}", entry.mv);
            if !entry.comment.is_empty() {
                let _ = write!(out, " {{ {} }}", comment_text(&entry.comment));
            }
            out.push('\n');
        }
        out.push_str(self.result.token());
        out.push('\n');
        out
    }
}

/// A comment cannot hold its own closing brace.
fn comment_text(text: &str) -> String {
    text.replace('}', ")").replace('{', "(")
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
