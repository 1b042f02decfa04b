//! The part of a clip's `truth.json` (`render::truth`) the scoring needs, read back
//! tolerantly: frames and positions are skipped, and a field added to the truth later does
//! not break an older evaluation.

use crate::games::Color;
use serde::Deserialize;
use std::path::Path;

/// What a clip shows, as `kradan render` wrote it.
#[derive(Clone, Debug, Deserialize)]
pub struct Truth {
    #[serde(default)]
    pub format: String,
    /// `go`, `makhos` or `makruk`.
    pub game: String,
    pub seed: u64,
    #[serde(default)]
    pub style: String,
    /// The footage, relative to the truth file.
    pub video: String,
    pub fps: f64,
    pub duration: f64,
    pub camera: TruthCamera,
    pub board: TruthBoard,
    pub moves: Vec<TruthMove>,
    #[serde(default)]
    pub anomalies: Vec<TruthAnomaly>,
    #[serde(default)]
    pub bumps: Vec<TruthBump>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TruthCamera {
    pub width: u32,
    pub height: u32,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TruthBoard {
    /// Lines per side.
    pub cells: usize,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TruthMove {
    /// Every move put on the board counts, extra and illegal ones included.
    pub number: usize,
    #[serde(default)]
    pub record_number: Option<usize>,
    pub color: Color,
    /// SGF point in the board's own rows (`dd`) or `pass` (Go), PDN (`9x18x27`, Mak-hos),
    /// SAN (Makruk).
    pub notation: String,
    pub placed_at: f64,
    /// The hand has left the board: the earliest a recorder can know the move is done.
    pub completed_at: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TruthAnomaly {
    pub kind: String,
    /// The move of the physical sequence it happens at (`TruthMove::number`).
    pub move_number: usize,
    /// Articles as RULES.md names them, the breached rule first (`TGA 20`).
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    pub points: Vec<String>,
    /// When it happens on the board, seconds of footage.
    pub at: f64,
    /// What happened, in words: the one place a double move taken back is told from one
    /// that stands.
    #[serde(default)]
    pub note: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct TruthBump {
    pub at: f64,
    /// `camera` or `board`.
    pub moved: String,
    #[serde(default)]
    pub requested: bool,
}

impl Truth {
    pub fn load(path: &Path) -> anyhow::Result<Truth> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        Truth::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> anyhow::Result<Truth> {
        let truth: Truth = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("not a kradan render truth file: {e}"))?;
        let lines = match truth.game.as_str() {
            "go" => 2..=25,
            "makhos" | "makruk" => 8..=8,
            other => anyhow::bail!("a {other} clip: expected go, makhos or makruk"),
        };
        anyhow::ensure!(
            lines.contains(&truth.board.cells),
            "a board of {} lines is not a {} board",
            truth.board.cells,
            truth.game
        );
        anyhow::ensure!(
            truth.duration.is_finite() && truth.duration >= 0.0,
            "the footage's duration {} is not a time",
            truth.duration
        );
        Ok(truth)
    }

    /// The moves a recorder can be asked for: those complete (the hand gone) before the
    /// footage ends, in the order they were played.
    pub fn expected_moves(&self) -> Vec<&TruthMove> {
        let mut moves: Vec<&TruthMove> = self
            .moves
            .iter()
            .filter(|m| m.completed_at <= self.duration)
            .collect();
        moves.sort_by_key(|m| m.number);
        moves
    }
}
