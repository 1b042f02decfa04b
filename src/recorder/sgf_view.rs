//! `game.sgf` as the recorder keeps it: the moves with the video time of each, the flags
//! as comments on the move they concern, rewritten whole after every decision.

use crate::games::Color;
use crate::games::go::sgf::{self, GoRecord, RecordedMove};
use crate::games::go::{Move, Position};

pub struct SgfView {
    record: GoRecord,
}

impl SgfView {
    pub fn new(komi: f64) -> SgfView {
        let mut record = GoRecord::new(19);
        record.komi = komi;
        record.rules = Some("Thai".into());
        SgfView { record }
    }

    /// The game starts on a board of `size` lines from `position` (its handicap stones).
    pub fn start(&mut self, size: usize, handicap: usize, position: &Position) {
        self.record.size = size;
        self.record.handicap = handicap;
        self.record.setup_black = position.board().stones(Color::Black).collect();
        self.record.setup_white = position.board().stones(Color::White).collect();
        self.record.first_player = Some(position.to_move());
        self.record.moves.clear();
        self.record.comment =
            Some("Recorded by Kradan from a camera; move comments give the video time.".into());
    }

    pub fn add_move(&mut self, color: Color, mv: Move, time: Option<f64>, note: Option<&str>) {
        let mut comment = time.map(|t| format!("t={t:.2}s")).unwrap_or_default();
        if let Some(note) = note {
            if !comment.is_empty() {
                comment.push('\n');
            }
            comment.push_str(note);
        }
        self.record.moves.push(RecordedMove {
            color,
            mv,
            comment: (!comment.is_empty()).then_some(comment),
            line: 0,
        });
    }

    /// A remark on the last move (the root before any move).
    pub fn add_comment(&mut self, text: &str) {
        let slot = match self.record.moves.last_mut() {
            Some(last) => &mut last.comment,
            None => &mut self.record.comment,
        };
        match slot {
            Some(existing) => {
                existing.push('\n');
                existing.push_str(text);
            }
            None => *slot = Some(text.to_string()),
        }
    }

    pub fn set_result(&mut self, result: &str) {
        self.record.result = Some(result.to_string());
    }

    pub fn text(&self) -> String {
        sgf::write(&self.record)
    }
}
