//! `game.pgn` as the recorder keeps a Makruk game: `[Variant "makruk"]`, SAN moves with the
//! video time of each and the flags as comments on the move they concern (as `sgf_view`
//! does for Go), rewritten whole after every decision.

use crate::games::Color;
use crate::games::makruk::Position;
use std::fmt::Write as _;

struct Entry {
    color: Color,
    san: String,
    comment: String,
}

pub struct PgnView {
    tags: Vec<(String, String)>,
    start: Position,
    moves: Vec<Entry>,
    preamble: String,
    result: String,
}

impl PgnView {
    pub fn new(start: Position) -> PgnView {
        let tags = ["Event", "Site", "Date", "Round", "White", "Black"]
            .into_iter()
            .map(|name| (name.to_string(), "?".to_string()))
            .collect();
        PgnView {
            tags,
            start,
            moves: Vec::new(),
            preamble: "Recorded by Kradan from a camera; move comments give the video time.".into(),
            result: "*".into(),
        }
    }

    pub fn set_tag(&mut self, name: &str, value: &str) {
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some(tag) => tag.1 = value.to_string(),
            None => self.tags.push((name.to_string(), value.to_string())),
        }
    }

    /// Move `number` (1-based ply) in SAN as played by `color`; a number already recorded
    /// is replaced, and the moves after it dropped.
    pub fn set_move(&mut self, number: usize, color: Color, san: &str, time: Option<f64>) {
        self.moves.truncate(number.saturating_sub(1));
        let comment = time.map(|t| format!("t={t:.2}s")).unwrap_or_default();
        self.moves.push(Entry {
            color,
            san: san.to_string(),
            comment,
        });
    }

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

    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn set_result(&mut self, result: &str) {
        self.result = result.to_string();
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let escape = |value: &str| value.replace('\\', "\\\\").replace('"', "\\\"");
        for (name, value) in &self.tags {
            let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
        }
        let _ = writeln!(out, "[Result \"{}\"]", self.result);
        let _ = writeln!(out, "[Variant \"makruk\"]");
        let start_fen = self.start.to_fen();
        if start_fen != Position::START_FEN {
            let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{start_fen}\"]");
        }
        out.push('\n');
        if !self.preamble.is_empty() {
            let _ = writeln!(out, "{{ {} }}", comment_text(&self.preamble));
        }
        // Numbered by who moved, so a double move shows as two moves of one side.
        let mut number = self.start.fullmove_number();
        let mut previous: Option<Color> = None;
        for entry in &self.moves {
            match entry.color {
                Color::White => {
                    if previous.is_some() {
                        number += 1;
                    }
                    let _ = write!(out, "{number}. ");
                }
                Color::Black => {
                    if previous != Some(Color::White) {
                        if previous == Some(Color::Black) {
                            number += 1;
                        }
                        let _ = write!(out, "{number}... ");
                    }
                }
            }
            let _ = write!(out, "{}", entry.san);
            if !entry.comment.is_empty() {
                let _ = write!(out, " {{ {} }}", comment_text(&entry.comment));
            }
            out.push('\n');
            previous = Some(entry.color);
        }
        out.push_str(&self.result);
        out.push('\n');
        out
    }
}

fn comment_text(text: &str) -> String {
    text.replace('}', ")").replace('{', "(")
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
            view.set_move(i + 1, position.turn(), &san, Some(2.0 * i as f64));
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
