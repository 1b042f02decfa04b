//! The event file: the boards of a tournament hall, one recorder each.
//!
//! ```toml
//! [[board]]
//! name = "table-1"
//! game = "go"
//! source = "camera:0"
//! size = 19
//! players = { black = "Somchai", white = "Nida" }
//! ```
//!
//! JSON with the same fields (`{"board": [...]}`) is read too, by the file's extension.

use crate::geometry::eight::EightGame;
use crate::recorder::RecordedGame;
use crate::store::Players;
use serde::Deserialize;
use std::path::Path;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EventFile {
    #[serde(default)]
    pub board: Vec<BoardSpec>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BoardSpec {
    pub name: String,
    pub game: GameKind,
    /// As `kradan record` takes it: a file, `play:FILE`, `camera:N`, a stream URL.
    pub source: String,
    pub size: Option<usize>,
    #[serde(default)]
    pub players: Players,
    #[serde(default)]
    pub handicap: usize,
    pub komi: Option<f64>,
    /// Analyses per second (`kradan record --rate`).
    pub rate: Option<f64>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    Go,
    Makhos,
    Makruk,
}

impl GameKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GameKind::Go => "go",
            GameKind::Makhos => "makhos",
            GameKind::Makruk => "makruk",
        }
    }

    /// What `kradan record --game` records.
    pub fn recorded(self) -> RecordedGame {
        match self {
            GameKind::Go => RecordedGame::Go,
            GameKind::Makhos => RecordedGame::Eight(EightGame::Makhos),
            GameKind::Makruk => RecordedGame::Eight(EightGame::Makruk),
        }
    }

    /// The record file the recorder writes in the board's folder.
    pub fn record_file(self) -> &'static str {
        match self {
            GameKind::Go => "game.sgf",
            GameKind::Makhos => "game.pdn",
            GameKind::Makruk => "game.pgn",
        }
    }

    /// The record file's media type.
    pub fn record_media_type(self) -> &'static str {
        match self {
            GameKind::Go => "application/x-go-sgf",
            GameKind::Makhos => "application/x-pdn",
            GameKind::Makruk => "application/x-chess-pgn",
        }
    }
}

/// A board name as it appears in URLs and folder names: 1–32 of `a-z A-Z 0-9 - _`,
/// starting with a letter or digit.
pub fn check_board_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "board name {name:?}: expected 1 to 32 letters, digits, '-' or '_', starting with a letter or digit"
        ))
    }
}

impl EventFile {
    pub fn load(path: &Path) -> Result<EventFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("event file {}: {e}", path.display()))?;
        let file: EventFile = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str(&text)
                .map_err(|e| format!("event file {}: {e}", path.display()))?
        } else {
            toml::from_str(&text).map_err(|e| format!("event file {}: {e}", path.display()))?
        };
        file.check()
            .map_err(|e| format!("event file {}: {e}", path.display()))?;
        Ok(file)
    }

    fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for board in &self.board {
            check_board_name(&board.name)?;
            if !seen.insert(board.name.to_ascii_lowercase()) {
                return Err(format!("board {:?} appears twice", board.name));
            }
            if board.source.trim().is_empty() {
                return Err(format!("board {:?}: no source", board.name));
            }
            if let Some(size) = board.size
                && board.game == GameKind::Go
                && !crate::geometry::locate::GO_SIZES.contains(&size)
            {
                return Err(format!(
                    "board {:?}: size {size}: Go is recorded on 9, 13 or 19 lines",
                    board.name
                ));
            }
            if board.game != GameKind::Go {
                // The recorder refuses these for an 8×8 board; refusing them here stops a
                // hall at its start rather than leaving one board failed in the middle of it.
                let go_only: Vec<&str> = [
                    ("size", board.size.is_some()),
                    ("handicap", board.handicap != 0),
                    ("komi", board.komi.is_some()),
                ]
                .iter()
                .filter(|(_, given)| *given)
                .map(|(field, _)| *field)
                .collect();
                if !go_only.is_empty() {
                    return Err(format!(
                        "board {:?}: {} for Go only: a {} board is 8×8",
                        board.name,
                        go_only.join(", "),
                        board.game.as_str()
                    ));
                }
            }
            for name in [&board.players.black, &board.players.white] {
                if name.chars().count() > 64 || name.chars().any(char::is_control) {
                    return Err(format!(
                        "board {:?}: a player's name is at most 64 printable characters",
                        board.name
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> Result<EventFile, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        EventFile::load(&path)
    }

    #[test]
    fn toml_and_json_give_the_same_boards() {
        let toml = load(
            "hall.toml",
            r#"
            [[board]]
            name = "table-1"
            game = "go"
            source = "camera:0"
            size = 19
            players = { black = "Somchai", white = "Nida" }
            "#,
        )
        .unwrap();
        let json = load(
            "hall.json",
            r#"{"board": [{"name": "table-1", "game": "go", "source": "camera:0", "size": 19,
                "players": {"black": "Somchai", "white": "Nida"}}]}"#,
        )
        .unwrap();
        assert_eq!(toml, json);
        assert_eq!(toml.board[0].players.white, "Nida");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let twice = "[[board]]\nname='a'\ngame='go'\nsource='x'\n[[board]]\nname='A'\ngame='go'\nsource='y'\n";
        assert!(load("e.toml", twice).unwrap_err().contains("appears twice"));
        let bad_name = "[[board]]\nname='../etc'\ngame='go'\nsource='x'\n";
        assert!(load("e.toml", bad_name).unwrap_err().contains("board name"));
        let chess = "[[board]]\nname='a'\ngame='chess'\nsource='x'\n";
        assert!(load("e.toml", chess).unwrap_err().contains("chess"));
        let size = "[[board]]\nname='a'\ngame='go'\nsource='x'\nsize=10\n";
        assert!(load("e.toml", size).unwrap_err().contains("9, 13 or 19"));
        let makruk_size = "[[board]]\nname='a'\ngame='makruk'\nsource='x'\nsize=8\nkomi=6.5\n";
        assert!(
            load("e.toml", makruk_size)
                .unwrap_err()
                .contains("size, komi for Go only")
        );
        let typo = "[[board]]\nname='a'\ngame='go'\nsorce='x'\n";
        assert!(load("e.toml", typo).unwrap_err().contains("sorce"));
    }

    #[test]
    fn board_names_are_safe_in_urls_and_paths() {
        for good in ["table-1", "A_2", "9"] {
            assert!(check_board_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a/b", "a b", "..", &"x".repeat(33), "é"] {
            assert!(check_board_name(bad).is_err(), "{bad}");
        }
    }
}
