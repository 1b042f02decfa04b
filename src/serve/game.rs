//! What the pages show of a board, computed from its events: the game replayed with the
//! referee's corrections applied, the open flags, the evidence of each moment. Go is
//! replayed here; Mak-hos and Makruk by [`super::eight`].

use super::eight::EightLine;
use crate::games::go::{Move, Position};
use crate::games::{Color, Occupancy};
use crate::record::{Event, Kind};
use crate::recorder::Corrections;
use crate::store::MoveRow;
use serde::Serialize;
use serde_json::Value;

/// The game on one board as the record now stands.
pub struct Replayed {
    line: Line,
    pub events: Vec<Event>,
}

enum Line {
    Go {
        /// The position before the first move.
        start: Option<Position>,
        /// The standing moves with the event each comes from.
        moves: Vec<(Color, Move, u64)>,
    },
    Eight(EightLine),
}

/// A moment of the game: the position after a move.
#[derive(Clone, Debug, Serialize)]
pub struct Moment {
    /// `go`, `makhos` or `makruk`.
    pub game: &'static str,
    pub number: usize,
    pub size: usize,
    pub to_move: Color,
    /// Rows of `.`/`B`/`W`, row 0 first.
    pub rows: Vec<String>,
    /// Mak-hos and Makruk: which piece stands where (see [`super::eight::Board8`]).
    pub pieces: Option<Vec<String>>,
    pub last_move: Option<LastMove>,
    /// Stones each side has captured.
    pub captures: Captures,
    pub video_time: Option<f64>,
    /// The evidence frame closest before or at this moment, relative to the record folder.
    pub evidence: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LastMove {
    pub number: usize,
    pub color: Color,
    /// SGF letters (empty for a pass); the move as PDN or PGN writes it for 8×8 games.
    pub point: String,
    /// `[row, col]` where the stone or piece went, or none for a pass.
    pub cell: Option<[usize; 2]>,
    /// `[row, col]` an 8×8 piece came from.
    pub from: Option<[usize; 2]>,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Captures {
    pub black: u32,
    pub white: u32,
}

/// A flag no one has closed.
#[derive(Clone, Debug, Serialize)]
pub struct OpenFlag {
    pub flag_id: u64,
    pub seq: u64,
    pub flag: String,
    pub rules: Vec<String>,
    pub penalties: Vec<String>,
    pub message: String,
    pub move_number: Option<u32>,
    pub points: Vec<[usize; 2]>,
    pub evidence: Vec<String>,
}

impl Replayed {
    pub fn new(events: Vec<Event>) -> Replayed {
        let line = match EightLine::from_events(&events) {
            Some(eight) => Line::Eight(eight),
            None => Replayed::go_line(&events),
        };
        Replayed { line, events }
    }

    fn go_line(events: &[Event]) -> Line {
        let corrections = Corrections::from_events(events);
        let mut start = None;
        let mut moves = Vec::new();
        for event in events {
            if event.kind == Kind::Note {
                match note(event) {
                    Some("game-start") => {
                        let size = detail_u64(event, "size").unwrap_or(19) as usize;
                        start = board_rows(event)
                            .and_then(|rows| {
                                let first = color(event, "first").unwrap_or(Color::Black);
                                Position::from_occupancy(&rows, first).ok()
                            })
                            .or_else(|| Position::with_handicap(size, 0).ok());
                        moves.clear();
                    }
                    Some("joined-in-progress") => {
                        let first = color(event, "first").unwrap_or(Color::Black);
                        if let Some(joined) =
                            board_rows(event).and_then(|b| Position::from_occupancy(&b, first).ok())
                        {
                            start = Some(joined);
                        }
                    }
                    _ => {}
                }
            }
            if let Some((color, mv)) = corrections.effective_move(event) {
                moves.push((color, mv, event.seq));
            }
        }
        Line::Go { start, moves }
    }

    /// Whether a game has started on the board.
    pub fn has_game(&self) -> bool {
        match &self.line {
            Line::Go { start, .. } => start.is_some(),
            Line::Eight(_) => true,
        }
    }

    /// How many moves stand.
    pub fn move_count(&self) -> usize {
        match &self.line {
            Line::Go { moves, .. } => moves.len(),
            Line::Eight(eight) => eight.moves.len(),
        }
    }

    /// The position after `number` standing moves (0: the start).
    pub fn moment(&self, number: usize) -> Option<Moment> {
        let mut moment = match &self.line {
            Line::Go { start, moves } => go_moment(start.as_ref()?, moves, number)?,
            Line::Eight(eight) => {
                let board = eight.board(number)?;
                Moment {
                    game: eight.game_name(),
                    number,
                    size: 8,
                    to_move: board.to_move,
                    rows: board.rows,
                    pieces: Some(board.pieces),
                    last_move: board.last_move,
                    captures: board.captures,
                    video_time: None,
                    evidence: None,
                }
            }
        };
        let upto = match (number, &self.line) {
            (0, _) => self
                .events
                .iter()
                .rposition(|e| {
                    note(e) == Some("game-start") || note(e) == Some("joined-in-progress")
                })
                .map(|i| self.events[i].seq),
            (n, Line::Go { moves, .. }) => Some(moves[n - 1].2),
            (n, Line::Eight(eight)) => Some(eight.moves[n - 1].seq),
        };
        let at = upto.and_then(|seq| self.events.iter().find(|e| e.seq == seq));
        moment.video_time = at.and_then(|e| e.video_time);
        moment.evidence = upto.and_then(|seq| {
            self.events
                .iter()
                .filter(|e| e.seq <= seq)
                .rev()
                .find_map(|e| e.evidence.last().map(|ev| ev.path.clone()))
        });
        Some(moment)
    }

    pub fn now(&self) -> Option<Moment> {
        self.moment(self.move_count())
    }

    pub fn move_rows(&self) -> Vec<MoveRow> {
        let video_time = |seq: u64| {
            self.events
                .iter()
                .find(|e| e.seq == seq)
                .and_then(|e| e.video_time)
        };
        let row = |index: usize, color: Color, point: String, seq: u64| MoveRow {
            number: index as u32 + 1,
            color: color_name(color).into(),
            point,
            seq,
            video_time: video_time(seq),
        };
        match &self.line {
            Line::Go { moves, .. } => moves
                .iter()
                .enumerate()
                .map(|(index, &(color, mv, seq))| row(index, color, mv.to_sgf(), seq))
                .collect(),
            Line::Eight(eight) => eight
                .moves
                .iter()
                .enumerate()
                .map(|(index, mv)| row(index, mv.color, mv.notation.clone(), mv.seq))
                .collect(),
        }
    }

    pub fn open_flags(&self) -> Vec<OpenFlag> {
        let closed: Vec<u64> = self
            .events
            .iter()
            .filter(|e| e.kind == Kind::Resolved)
            .filter_map(|e| detail_u64(e, "flag_id"))
            .collect();
        let game_start = self
            .events
            .iter()
            .rposition(|e| note(e) == Some("game-start"))
            .unwrap_or(0);
        self.events[game_start..]
            .iter()
            .filter(|e| e.kind == Kind::Flag)
            .filter_map(|e| {
                let flag_id = detail_u64(e, "flag_id")?;
                (!closed.contains(&flag_id)).then(|| OpenFlag {
                    flag_id,
                    seq: e.seq,
                    flag: detail_str(e, "flag").unwrap_or_default().into(),
                    rules: e.rules.clone(),
                    penalties: e.penalties.clone(),
                    message: detail_str(e, "message").unwrap_or_default().into(),
                    move_number: e.move_number,
                    points: e.points.clone(),
                    evidence: e.evidence.iter().map(|ev| ev.path.clone()).collect(),
                })
            })
            .collect()
    }

    /// The draw counts running after the last move (Mak-hos HOS 5.2–5.3, Makruk's
    /// MAKRUK 7–14), as the recorder wrote them: the engines note each running count
    /// with every move, so a count not noted after the last move has stopped.
    pub fn counts(&self) -> Vec<String> {
        let after = self
            .events
            .iter()
            .rposition(|e| e.kind == Kind::Move || note(e) == Some("game-start"))
            .map_or(0, |i| i + 1);
        self.events[after..]
            .iter()
            // "the count stopped" holds neither.
            .filter(|e| {
                note(e) == Some("count")
                    && (e.detail.contains_key("count") || e.detail.contains_key("rule"))
            })
            .filter_map(|e| detail_str(e, "message"))
            .map(str::to_string)
            .collect()
    }

    /// The last counted result, if the game was counted.
    pub fn result(&self) -> Option<String> {
        self.events
            .iter()
            .rev()
            .find(|e| note(e) == Some("score"))
            .and_then(|e| detail_str(e, "result"))
            .map(str::to_string)
    }
}

/// A Go position after `number` of the standing `moves`; its time and evidence are the
/// caller's.
fn go_moment(start: &Position, moves: &[(Color, Move, u64)], number: usize) -> Option<Moment> {
    if number > moves.len() {
        return None;
    }
    let mut position = start.clone();
    let mut last = None;
    for (index, &(color, mv, _)) in moves[..number].iter().enumerate() {
        // The record keeps an illegal move as played; the rules engine refuses it, so
        // the board shown is the last legal one, as the recorder's own replay does.
        let _ = position.play(color, mv);
        last = Some(LastMove {
            number: index + 1,
            color,
            point: mv.to_sgf(),
            cell: match mv {
                Move::Play(p) => Some([p.row as usize, p.col as usize]),
                Move::Pass => None,
            },
            from: None,
        });
    }
    Some(Moment {
        game: "go",
        number,
        size: position.size(),
        to_move: position.to_move(),
        rows: position
            .board()
            .to_occupancy()
            .to_text_rows()
            .iter()
            .map(|row| row.replace(' ', ""))
            .collect(),
        pieces: None,
        last_move: last,
        captures: Captures {
            black: position.prisoners(Color::Black),
            white: position.prisoners(Color::White),
        },
        video_time: None,
        evidence: None,
    })
}

/// The kind of a `note` event.
pub(super) fn note(event: &Event) -> Option<&str> {
    (event.kind == Kind::Note)
        .then(|| detail_str(event, "note"))
        .flatten()
}

fn detail_str<'a>(event: &'a Event, key: &str) -> Option<&'a str> {
    event.detail.get(key).and_then(Value::as_str)
}

fn detail_u64(event: &Event, key: &str) -> Option<u64> {
    event.detail.get(key).and_then(Value::as_u64)
}

fn color(event: &Event, key: &str) -> Option<Color> {
    match detail_str(event, key)? {
        "black" => Some(Color::Black),
        "white" => Some(Color::White),
        _ => None,
    }
}

fn board_rows(event: &Event) -> Option<Occupancy> {
    let rows: Vec<&str> = event
        .detail
        .get("board")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Occupancy::from_text_rows(&rows).ok()
}

pub fn color_name(color: Color) -> &'static str {
    match color {
        Color::Black => "black",
        Color::White => "white",
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// An event of `kind` at `seq` in the chain.
    pub(in crate::serve) fn event(seq: u64, kind: Kind) -> Event {
        let mut event = Event::new(kind);
        event.seq = seq;
        event
    }

    fn game_start(seq: u64) -> Event {
        let mut start = event(seq, Kind::Note)
            .with_detail("note", "game-start")
            .with_detail("size", 9)
            .with_detail("first", "black");
        start
            .detail
            .insert("board".into(), json!(vec![".".repeat(9); 9]));
        start
    }

    fn stone(seq: u64, number: u32, color: Color, point: &str, cell: [usize; 2]) -> Event {
        event(seq, Kind::Move)
            .with_move(number, color, point)
            .with_points([cell])
    }

    #[test]
    fn corrections_change_the_game_shown() {
        let events = vec![
            game_start(1),
            stone(2, 1, Color::Black, "cc", [2, 2]),
            stone(3, 2, Color::White, "gg", [6, 6]),
            event(4, Kind::Note)
                .with_detail("note", "correction")
                .with_detail("point", "gc"),
            stone(5, 3, Color::Black, "ee", [4, 4]),
            event(6, Kind::Note).with_detail("note", "correction"),
        ];
        let game = Replayed::new(events);
        assert_eq!(game.move_count(), 2, "the undone move is gone");
        let now = game.now().unwrap();
        assert_eq!(now.rows[2], "..B...W..", "white's move stands at gc");
        assert_eq!(now.last_move.unwrap().point, "gc");
        let start = game.moment(0).unwrap();
        assert!(start.rows.iter().all(|r| r == "........."));
        assert!(game.moment(3).is_none());
    }

    #[test]
    fn a_closed_flag_is_no_longer_open() {
        let flag = |seq, id| {
            event(seq, Kind::Flag)
                .with_detail("flag", "double-move")
                .with_detail("flag_id", id)
        };
        let events = vec![
            game_start(1),
            flag(2, 1),
            flag(3, 2),
            event(4, Kind::Resolved).with_detail("flag_id", 1),
        ];
        let open = Replayed::new(events).open_flags();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].flag_id, 2);
    }

    #[test]
    fn counts_run_until_a_move_comes_without_them() {
        let count = |seq, message: &str| {
            event(seq, Kind::Note)
                .with_detail("note", "count")
                .with_detail("rule", "HOS 5.3")
                .with_detail("message", message)
        };
        let mut events = vec![
            game_start(1),
            stone(2, 1, Color::Black, "cc", [2, 2]),
            count(3, "count (HOS 5.3): 1 of 16"),
            stone(4, 2, Color::White, "gg", [6, 6]),
            count(5, "count (HOS 5.3): 2 of 16"),
        ];
        assert_eq!(
            Replayed::new(events.clone()).counts(),
            ["count (HOS 5.3): 2 of 16"]
        );
        events.push(stone(6, 3, Color::Black, "ee", [4, 4]));
        assert!(Replayed::new(events.clone()).counts().is_empty());
        events.push(
            event(7, Kind::Note)
                .with_detail("note", "count")
                .with_detail("message", "the count stopped"),
        );
        assert!(Replayed::new(events).counts().is_empty());
    }
}
