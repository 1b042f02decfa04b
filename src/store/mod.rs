//! The served games in SQLite, beside the per-board record folders: every board's game,
//! its events (the chain as written), its moves as they stand after corrections, and the
//! referee's actions. A restarted server reads it back, so past games stay served.
//!
//! The chain in each record folder stays the truth: the store is what the server shows and
//! can be filled again from `events.jsonl` ([`Store::insert_event`] ignores an event it
//! already holds).

use crate::record::Event;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const DATABASE_FILE: &str = "kradan.sqlite";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS games (
    board TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    source TEXT NOT NULL,
    players TEXT NOT NULL,
    dir TEXT NOT NULL,
    added TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    board TEXT NOT NULL REFERENCES games(board),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    move_number INTEGER,
    body TEXT NOT NULL,
    PRIMARY KEY (board, seq)
);
CREATE TABLE IF NOT EXISTS moves (
    board TEXT NOT NULL REFERENCES games(board),
    number INTEGER NOT NULL,
    color TEXT NOT NULL,
    point TEXT NOT NULL,
    seq INTEGER NOT NULL,
    video_time REAL,
    PRIMARY KEY (board, number)
);
CREATE TABLE IF NOT EXISTS actions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    board TEXT NOT NULL,
    by TEXT NOT NULL,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    accepted INTEGER NOT NULL,
    at TEXT NOT NULL
);
";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the game store {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the game store holds an unreadable event: {0}")]
    Corrupt(String),
}

/// A board's game as the store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    pub board: String,
    pub game: String,
    pub source: String,
    pub players: Players,
    pub dir: PathBuf,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Players {
    #[serde(default)]
    pub black: String,
    #[serde(default)]
    pub white: String,
}

/// One move as it stands in the game.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveRow {
    pub number: u32,
    pub color: String,
    /// SGF letters, empty for a pass.
    pub point: String,
    pub seq: u64,
    pub video_time: Option<f64>,
}

/// A referee's action as taken.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActionRow {
    pub board: String,
    pub by: String,
    pub action: String,
    pub outcome: String,
    pub accepted: bool,
    pub at: String,
}

pub struct Store {
    connection: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating) `DIR/kradan.sqlite`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join(DATABASE_FILE);
        let fail = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let connection = Connection::open(&path).map_err(fail)?;
        // WAL with NORMAL sync: a committed event survives a crash of the server; the chain
        // on disk, synced by the recorder, is the record itself.
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(fail)?;
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(fail)?;
        connection.execute_batch(SCHEMA).map_err(fail)?;
        Ok(Store { connection, path })
    }

    fn fail(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |source| StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Adds a board's game, or updates what the event file now says of it.
    pub fn put_game(&self, game: &GameRow) -> Result<(), StoreError> {
        let players = serde_json::to_string(&game.players).unwrap_or_default();
        self.connection
            .execute(
                "INSERT INTO games (board, game, source, players, dir, added)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(board) DO UPDATE SET game = ?2, source = ?3, players = ?4, dir = ?5",
                params![
                    game.board,
                    game.game,
                    game.source,
                    players,
                    game.dir.display().to_string(),
                    crate::record::events::wall_time_now()
                ],
            )
            .map_err(self.fail())?;
        Ok(())
    }

    pub fn games(&self) -> Result<Vec<GameRow>, StoreError> {
        let mut statement = self
            .connection
            .prepare("SELECT board, game, source, players, dir FROM games ORDER BY board")
            .map_err(self.fail())?;
        let rows = statement
            .query_map([], |row| {
                let players: String = row.get(3)?;
                let dir: String = row.get(4)?;
                Ok(GameRow {
                    board: row.get(0)?,
                    game: row.get(1)?,
                    source: row.get(2)?,
                    players: serde_json::from_str(&players).unwrap_or_default(),
                    dir: PathBuf::from(dir),
                })
            })
            .map_err(self.fail())?;
        rows.collect::<Result<_, _>>().map_err(self.fail())
    }

    /// Stores an event; one already held (same board and seq) is left as it is. Returns
    /// whether it was new.
    pub fn insert_event(&self, board: &str, event: &Event) -> Result<bool, StoreError> {
        let body = serde_json::to_string(event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let inserted = self
            .connection
            .execute(
                "INSERT OR IGNORE INTO events (board, seq, kind, move_number, body)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    board,
                    event.seq as i64,
                    event.kind.as_str(),
                    event.move_number,
                    body
                ],
            )
            .map_err(self.fail())?;
        Ok(inserted == 1)
    }

    pub fn events(&self, board: &str) -> Result<Vec<Event>, StoreError> {
        let mut statement = self
            .connection
            .prepare("SELECT body FROM events WHERE board = ?1 ORDER BY seq")
            .map_err(self.fail())?;
        let bodies = statement
            .query_map([board], |row| row.get::<_, String>(0))
            .map_err(self.fail())?;
        let mut events = Vec::new();
        for body in bodies {
            let body = body.map_err(self.fail())?;
            events
                .push(serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(e.to_string()))?);
        }
        Ok(events)
    }

    /// Replaces a board's moves with the game as it now stands.
    pub fn set_moves(&mut self, board: &str, moves: &[MoveRow]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let fail = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let transaction = self.connection.transaction().map_err(fail)?;
        transaction
            .execute("DELETE FROM moves WHERE board = ?1", [board])
            .map_err(fail)?;
        for row in moves {
            transaction
                .execute(
                    "INSERT INTO moves (board, number, color, point, seq, video_time)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        board,
                        row.number,
                        row.color,
                        row.point,
                        row.seq as i64,
                        row.video_time
                    ],
                )
                .map_err(fail)?;
        }
        transaction.commit().map_err(fail)
    }

    pub fn moves(&self, board: &str) -> Result<Vec<MoveRow>, StoreError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT number, color, point, seq, video_time FROM moves
                 WHERE board = ?1 ORDER BY number",
            )
            .map_err(self.fail())?;
        let rows = statement
            .query_map([board], |row| {
                Ok(MoveRow {
                    number: row.get(0)?,
                    color: row.get(1)?,
                    point: row.get(2)?,
                    seq: row.get::<_, i64>(3)? as u64,
                    video_time: row.get(4)?,
                })
            })
            .map_err(self.fail())?;
        rows.collect::<Result<_, _>>().map_err(self.fail())
    }

    pub fn add_action(&self, action: &ActionRow) -> Result<(), StoreError> {
        self.connection
            .execute(
                "INSERT INTO actions (board, by, action, outcome, accepted, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    action.board,
                    action.by,
                    action.action,
                    action.outcome,
                    action.accepted,
                    action.at
                ],
            )
            .map_err(self.fail())?;
        Ok(())
    }

    pub fn actions(&self, board: &str) -> Result<Vec<ActionRow>, StoreError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT board, by, action, outcome, accepted, at FROM actions
                 WHERE board = ?1 ORDER BY id",
            )
            .map_err(self.fail())?;
        let rows = statement
            .query_map([board], |row| {
                Ok(ActionRow {
                    board: row.get(0)?,
                    by: row.get(1)?,
                    action: row.get(2)?,
                    outcome: row.get(3)?,
                    accepted: row.get(4)?,
                    at: row.get(5)?,
                })
            })
            .map_err(self.fail())?;
        rows.collect::<Result<_, _>>().map_err(self.fail())
    }

    /// Whether a board's game is held.
    pub fn has_game(&self, board: &str) -> Result<bool, StoreError> {
        self.connection
            .query_row("SELECT 1 FROM games WHERE board = ?1", [board], |_| Ok(()))
            .optional()
            .map(|found| found.is_some())
            .map_err(self.fail())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    fn game(dir: &Path) -> GameRow {
        GameRow {
            board: "table-1".into(),
            game: "go".into(),
            source: "play:x.mp4".into(),
            players: Players {
                black: "Somchai".into(),
                white: "Nida".into(),
            },
            dir: dir.join("boards/table-1"),
        }
    }

    #[test]
    fn games_events_moves_and_actions_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut store = Store::open(dir.path()).unwrap();
            store.put_game(&game(dir.path())).unwrap();
            let mut event = Event::new(Kind::Move).with_move(1, crate::games::Color::Black, "dd");
            event.seq = 3;
            assert!(store.insert_event("table-1", &event).unwrap());
            assert!(!store.insert_event("table-1", &event).unwrap(), "held once");
            store
                .set_moves(
                    "table-1",
                    &[MoveRow {
                        number: 1,
                        color: "black".into(),
                        point: "dd".into(),
                        seq: 3,
                        video_time: Some(1.5),
                    }],
                )
                .unwrap();
            store
                .add_action(&ActionRow {
                    board: "table-1".into(),
                    by: "referee".into(),
                    action: "pass".into(),
                    outcome: "pass entered".into(),
                    accepted: true,
                    at: "now".into(),
                })
                .unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.games().unwrap(), vec![game(dir.path())]);
        let events = store.events("table-1").unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].seq, 3);
        assert_eq!(events[0].notation.as_deref(), Some("dd"));
        assert_eq!(store.moves("table-1").unwrap()[0].point, "dd");
        assert_eq!(store.actions("table-1").unwrap()[0].by, "referee");
        assert!(store.has_game("table-1").unwrap());
        assert!(!store.has_game("table-2").unwrap());
    }
}
