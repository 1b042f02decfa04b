//! A Mak-hos or Makruk game as the pages show it, replayed from its events by the rules
//! engines: the events carry each move's notation, and the engine gives back which pieces
//! stand where (a Makruk figure's kind, a Mak-hos king) — what the camera cannot tell.

use super::game::{Captures, LastMove};
use crate::games::Color;
use crate::games::makhos;
use crate::games::makruk;
use crate::geometry::eight::EightGame;
use crate::record::Event;
use crate::recorder::chain8::Chain8;

/// One position of an 8×8 game, in its engine's terms.
#[derive(Clone, Debug)]
enum Position8 {
    Makhos(makhos::Position),
    Makruk(makruk::Position),
}

/// A standing move: who played it, as the record writes it, and where it went.
#[derive(Clone, Debug)]
pub struct Move8 {
    pub color: Color,
    pub notation: String,
    pub seq: u64,
    from: Option<[usize; 2]>,
    to: Option<[usize; 2]>,
}

/// The game since its last `game-start`, replayed.
#[derive(Clone, Debug)]
pub struct EightLine {
    game: EightGame,
    /// `positions[n]`: after `n` standing moves.
    positions: Vec<Position8>,
    pub moves: Vec<Move8>,
    pub start_seq: u64,
}

/// What a moment of an 8×8 game shows besides its time and evidence.
pub struct Board8 {
    pub to_move: Color,
    /// `.`/`B`/`W`, row 0 first.
    pub rows: Vec<String>,
    /// Piece letters, upper case White's, row 0 first: Makruk's FEN letters (K khun, M met,
    /// S khon, N ma, R ruea, P bia); Mak-hos `M` a man, `K` a king.
    pub pieces: Vec<String>,
    pub captures: Captures,
    pub last_move: Option<LastMove>,
}

impl EightLine {
    /// The game of `events`, if they hold an 8×8 `game-start`. A move that does not replay
    /// (an illegal move kept as played) leaves the board as it was, as the recorder's own
    /// replay does for Go, but still counts as a move of its number.
    pub fn from_events(events: &[Event]) -> Option<EightLine> {
        let chain = Chain8::read(events)?;
        let start = chain.start;
        let game: EightGame = start.detail.get("game")?.as_str()?.parse().ok()?;
        // A chain whose start does not read is not drawn at all rather than drawn
        // from the usual start (the recorder refuses to resume it, for the same reason).
        let start_position = match game {
            EightGame::Makhos => Position8::Makhos(chain.makhos_start(Color::White).ok()?),
            EightGame::Makruk => Position8::Makruk(chain.makruk_start(Color::White).ok()?),
        };
        let standing = &chain.moves;
        let mut positions = vec![start_position];
        let mut moves = Vec::new();
        for event in standing {
            let before = positions.last().expect("the start").clone();
            let notation = event.notation.clone().unwrap_or_default();
            let (after, from, to) = match before.play(&notation) {
                Some((after, from, to)) => (after, Some(from), Some(to)),
                None => (before, None, None),
            };
            moves.push(Move8 {
                color: event.color.unwrap_or(Color::White),
                notation,
                seq: event.seq,
                from,
                to,
            });
            positions.push(after);
        }
        Some(EightLine {
            game,
            positions,
            moves,
            start_seq: start.seq,
        })
    }

    /// As the event file and the pages name it.
    pub fn game_name(&self) -> &'static str {
        match self.game {
            EightGame::Makhos => "makhos",
            EightGame::Makruk => "makruk",
        }
    }

    /// The board after `number` standing moves (0: the start).
    pub fn board(&self, number: usize) -> Option<Board8> {
        let position = self.positions.get(number)?;
        let start = &self.positions[0];
        let last_move = number.checked_sub(1).map(|index| {
            let mv = &self.moves[index];
            LastMove {
                number,
                color: mv.color,
                point: mv.notation.clone(),
                cell: mv.to,
                from: mv.from,
            }
        });
        let pieces = position.letters();
        Some(Board8 {
            to_move: position.turn(),
            rows: pieces
                .iter()
                .map(|row| {
                    row.chars()
                        .map(|c| match c {
                            '.' => '.',
                            c if c.is_ascii_uppercase() => 'W',
                            _ => 'B',
                        })
                        .collect()
                })
                .collect(),
            captures: Captures {
                black: start
                    .count(Color::White)
                    .saturating_sub(position.count(Color::White)),
                white: start
                    .count(Color::Black)
                    .saturating_sub(position.count(Color::Black)),
            },
            pieces,
            last_move,
        })
    }
}

impl Position8 {
    /// The position after the move written `notation`, with its from- and to-cells.
    fn play(&self, notation: &str) -> Option<(Position8, [usize; 2], [usize; 2])> {
        let cell = |(row, col): (usize, usize)| [row, col];
        match self {
            Position8::Makhos(position) => {
                let mut found = None;
                position.for_each_move(|mv, _| {
                    if found.is_none() && makhos::WrittenMove::from(mv).to_string() == notation {
                        found = Some(*mv);
                    }
                });
                let mv = found?;
                Some((
                    Position8::Makhos(position.play(&mv)),
                    cell(mv.from().row_col()),
                    cell(mv.to().row_col()),
                ))
            }
            Position8::Makruk(position) => {
                let mv = makruk::san::parse_san(position, notation).ok()?;
                Some((
                    Position8::Makruk(position.after(&mv)),
                    cell(mv.from.row_col()),
                    cell(mv.to.row_col()),
                ))
            }
        }
    }

    fn turn(&self) -> Color {
        match self {
            Position8::Makhos(position) => position.turn(),
            Position8::Makruk(position) => position.turn(),
        }
    }

    fn count(&self, color: Color) -> u32 {
        match self {
            Position8::Makhos(position) => position.count(color),
            Position8::Makruk(position) => position
                .board()
                .pieces()
                .filter(|(_, piece)| piece.color == color)
                .count() as u32,
        }
    }

    fn letters(&self) -> Vec<String> {
        let mut rows = vec![vec!['.'; 8]; 8];
        match self {
            Position8::Makhos(position) => {
                for square in makhos::Square::all() {
                    if let Some(piece) = position.piece_at(square) {
                        let letter = match piece.kind {
                            makhos::Kind::Man => 'M',
                            makhos::Kind::King => 'K',
                        };
                        let (row, col) = square.row_col();
                        rows[row][col] = match piece.color {
                            Color::White => letter,
                            Color::Black => letter.to_ascii_lowercase(),
                        };
                    }
                }
            }
            Position8::Makruk(position) => {
                for (square, piece) in position.board().pieces() {
                    let (row, col) = square.row_col();
                    rows[row][col] = piece.fen_letter();
                }
            }
        }
        rows.into_iter()
            .map(|row| row.into_iter().collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::game::tests::event;
    use super::*;
    use crate::games::makhos::Men;
    use crate::record::Kind;
    use serde_json::json;

    fn start(seq: u64, game: &str, first: &str) -> Event {
        event(seq, Kind::Note)
            .with_detail("note", "game-start")
            .with_detail("game", json!(game))
            .with_detail("first", first)
    }

    fn played(seq: u64, number: u32, color: Color, notation: &str) -> Event {
        let mut mv = event(seq, Kind::Move);
        mv.move_number = Some(number);
        mv.color = Some(color);
        mv.notation = Some(notation.into());
        mv
    }

    #[test]
    fn makruk_figures_are_known_from_the_moves() {
        let events = vec![
            start(1, "makruk", "white"),
            played(2, 1, Color::White, "e4"),
            played(3, 2, Color::Black, "d5"),
            played(4, 3, Color::White, "exd5"),
        ];
        let line = EightLine::from_events(&events).unwrap();
        assert_eq!(line.moves.len(), 3);
        let start = line.board(0).unwrap();
        assert_eq!(start.pieces[0], "rnsmksnr", "Black's back row, row 0");
        assert_eq!(start.pieces[7], "RNSKMSNR");
        assert_eq!(start.rows[2], "BBBBBBBB");
        let now = line.board(3).unwrap();
        assert_eq!(now.to_move, Color::Black);
        assert_eq!(now.pieces[3], "...P....", "White's bia took on d5");
        assert_eq!(now.captures.white, 1);
        assert_eq!(now.captures.black, 0);
        let last = now.last_move.unwrap();
        assert_eq!(last.point, "exd5");
        assert_eq!(last.from, Some([4, 4]));
        assert_eq!(last.cell, Some([3, 3]));
        assert!(line.board(4).is_none());
    }

    #[test]
    fn a_move_taken_back_and_played_again_stands_once() {
        let start_position = makhos::Position::start(Men::Eight, Color::White);
        let written: Vec<String> = start_position
            .legal_moves()
            .iter()
            .map(|mv| makhos::WrittenMove::from(mv).to_string())
            .collect();
        let mut taken_back = event(3, Kind::Note).with_detail("note", "taken-back");
        taken_back.move_number = Some(1);
        let events = vec![
            start(1, "makhos", "white"),
            played(2, 1, Color::White, &written[0]),
            taken_back,
            played(4, 1, Color::White, &written[1]),
        ];
        let line = EightLine::from_events(&events).unwrap();
        assert_eq!(line.moves.len(), 1);
        assert_eq!(line.moves[0].notation, written[1]);
        let now = line.board(1).unwrap();
        assert_eq!(now.to_move, Color::Black);
        let men =
            |color: char| -> usize { now.pieces.iter().map(|r| r.matches(color).count()).sum() };
        assert_eq!((men('M'), men('m')), (8, 8));
        let last = now.last_move.unwrap();
        assert!(last.from.is_some() && last.cell.is_some());
        assert_eq!(now.rows.concat().matches('W').count(), 8);
    }

    #[test]
    fn a_game_begun_from_a_fen_and_corrected_by_the_referee_is_shown_as_corrected() {
        let start_position = makruk::Position::start();
        let e4 = makruk::san::parse_san(&start_position, "e4").unwrap();
        let given = start_position.after(&e4);
        let mut correction = event(4, Kind::Note)
            .with_detail("note", "correction")
            .with_detail("notation", "e5");
        correction.move_number = Some(1);
        let events = vec![
            start(1, "makruk", "black").with_detail("fen", given.to_fen()),
            played(2, 1, Color::Black, "d5"),
            correction,
        ];
        let line = EightLine::from_events(&events).unwrap();
        let begun = line.board(0).unwrap();
        assert_eq!(begun.to_move, Color::Black);
        let given_rows: Vec<String> = given
            .occupancy()
            .to_text_rows()
            .iter()
            .map(|row| row.replace(' ', ""))
            .collect();
        assert_eq!(begun.rows, given_rows);
        assert_eq!(line.moves.len(), 1);
        assert_eq!(line.moves[0].notation, "e5");
        let after = line.board(1).unwrap();
        assert_eq!(after.last_move.unwrap().cell, Some([3, 4]));
    }

    #[test]
    fn a_move_that_does_not_replay_keeps_the_board_and_its_number() {
        let events = vec![
            start(1, "makruk", "white"),
            played(2, 1, Color::White, "e4"),
            played(3, 2, Color::Black, "Qh4"),
        ];
        let line = EightLine::from_events(&events).unwrap();
        assert_eq!(line.moves.len(), 2);
        let after = line.board(2).unwrap();
        assert_eq!(after.pieces, line.board(1).unwrap().pieces);
        assert_eq!(after.last_move.unwrap().cell, None);
    }

    #[test]
    fn go_events_are_no_eight_by_eight_game() {
        let events = vec![
            event(1, Kind::Note)
                .with_detail("note", "game-start")
                .with_detail("size", 9),
        ];
        assert!(EightLine::from_events(&events).is_none());
    }
}
