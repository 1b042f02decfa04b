//! What PGN (Makruk) and PDN (Mak-hos) records have in common, as the recorder keeps them:
//! tag pairs, the moves with a comment each (the video time, then the flags that concern
//! the move), a remark before the first move, and the result; rewritten whole after every
//! decision. Each game says only what differs: its own tags and how it writes a move.

use crate::games::Color;
use std::fmt::{Display, Write as _};

/// What one game's record format adds to the shared move text.
pub trait Notation {
    type Move: Display;
    /// The tags after `Result` that say which game and from which position.
    fn game_tags(&self, out: &mut String);
    /// The number of the first move.
    fn first_number(&self) -> u32;
    /// Who played the move at `ply` (0-based).
    fn mover(&self, ply: usize, mv: &Self::Move) -> Color;
}

struct Entry<M> {
    mv: M,
    comment: String,
}

pub struct MoveText<N: Notation> {
    notation: N,
    tags: Vec<(String, String)>,
    moves: Vec<Entry<N::Move>>,
    /// A remark before the first move.
    preamble: String,
    result: String,
}

impl<N: Notation> MoveText<N> {
    pub fn with_notation(notation: N) -> Self {
        let tags = ["Event", "Site", "Date", "Round", "White", "Black"]
            .into_iter()
            .map(|name| (name.to_string(), "?".to_string()))
            .collect();
        MoveText {
            notation,
            tags,
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

    /// Move `number` (1-based ply); a number already recorded is replaced, and the moves
    /// after it dropped.
    pub fn set_move(&mut self, number: usize, mv: N::Move, time: Option<f64>) {
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

    /// `1-0`, `0-1`, `1/2-1/2`, or `*` while the game goes on.
    pub fn set_result(&mut self, token: &str) {
        self.result = token.to_string();
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let escape = |value: &str| value.replace('\\', "\\\\").replace('"', "\\\"");
        for (name, value) in &self.tags {
            let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
        }
        let _ = writeln!(out, "[Result \"{}\"]", self.result);
        self.notation.game_tags(&mut out);
        out.push('\n');
        if !self.preamble.is_empty() {
            let _ = writeln!(out, "{{ {} }}", comment_text(&self.preamble));
        }
        // Numbered by who moved, so a double move shows as two moves of one side.
        let mut number = self.notation.first_number();
        let mut previous: Option<Color> = None;
        for (ply, entry) in self.moves.iter().enumerate() {
            match self.notation.mover(ply, &entry.mv) {
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
            let _ = write!(out, "{}", entry.mv);
            if !entry.comment.is_empty() {
                let _ = write!(out, " {{ {} }}", comment_text(&entry.comment));
            }
            out.push('\n');
            previous = Some(self.notation.mover(ply, &entry.mv));
        }
        out.push_str(&self.result);
        out.push('\n');
        out
    }
}

/// A comment cannot hold its own closing brace.
fn comment_text(text: &str) -> String {
    text.replace('}', ")").replace('{', "(")
}
