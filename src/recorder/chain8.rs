//! A Mak-hos or Makruk game as its event chain holds it: the `game-start` it began from
//! and the moves that stand once the moves taken back at the board and the referee's
//! corrections are applied. The recorder rebuilds its game from this when it resumes or
//! a referee corrects a misread move, and `kradan serve` shows the same game, so that the
//! two never read one chain two ways.

use super::is_note;
use crate::games::makhos::{self, Men};
use crate::games::{Color, ParseError, makruk};
use crate::record::{Event, Kind};
use serde_json::Value;

/// The `note` of a referee's correction of the last move: with a `notation`, the move
/// played instead (as the record writes it); without one, no move was played.
pub const CORRECTION: &str = "correction";

/// The game since the chain's last `game-start`.
#[derive(Clone, Debug)]
pub struct Chain8<'a> {
    pub start: &'a Event,
    /// The standing moves in order, each the event that recorded it; a move a referee
    /// replaced carries the referee's notation and squares.
    pub moves: Vec<Event>,
}

impl<'a> Chain8<'a> {
    /// `None` when no game has started in `events`.
    pub fn read(events: &'a [Event]) -> Option<Chain8<'a>> {
        let start_index = events.iter().rposition(|e| is_note(e, "game-start"))?;
        let mut moves: Vec<Event> = Vec::new();
        for event in &events[start_index + 1..] {
            let number = event.move_number.unwrap_or(0) as usize;
            match event.kind {
                // A number given again (a takeback replayed differently) replaces the
                // moves from it on.
                Kind::Move => {
                    moves.truncate(number.saturating_sub(1));
                    moves.push(event.clone());
                }
                Kind::Note if is_note(event, "taken-back") => {
                    moves.truncate(number.saturating_sub(1));
                }
                // A correction names the move it corrects; one that no longer stands
                // (taken back since) corrects nothing.
                Kind::Note if is_note(event, CORRECTION) && number > 0 && number == moves.len() => {
                    match event.detail.get("notation").and_then(Value::as_str) {
                        Some(notation) => {
                            let corrected = moves.last_mut().expect("number == len > 0");
                            corrected.notation = Some(notation.to_string());
                            corrected.points = event.points.clone();
                            // The referee's move is one the rules offer.
                            corrected.detail.remove("illegal");
                            corrected.detail.remove("captured");
                        }
                        None => {
                            moves.pop();
                        }
                    }
                }
                _ => {}
            }
        }
        Some(Chain8 {
            start: &events[start_index],
            moves,
        })
    }

    /// The FEN the game began from (given by `--fen`, or a game joined in progress);
    /// `None` for the game's start position.
    pub fn fen(&self) -> Option<&'a str> {
        self.start.detail.get("fen").and_then(Value::as_str)
    }

    /// The side that moved first, as the game start says.
    pub fn first(&self) -> Option<Color> {
        match self.start.detail.get("first").and_then(Value::as_str)? {
            "white" => Some(Color::White),
            "black" => Some(Color::Black),
            _ => None,
        }
    }

    /// How many men a side began a Mak-hos game with (8, or 12 in the variant).
    pub fn men(&self) -> Option<u64> {
        self.start.detail.get("men").and_then(Value::as_u64)
    }

    /// The Mak-hos position the game began from. `first` moves first when the game
    /// start does not say (a chain written before it did). An unreadable FEN is an
    /// error, never the start position: a game drawn from the wrong start would be a
    /// wrong record shown as a right one.
    pub fn makhos_start(&self, first: Color) -> Result<makhos::Position, ParseError> {
        match self.fen() {
            Some(fen) => makhos::read_fen(fen),
            None => {
                let men = match self.men() {
                    Some(12) => Men::Twelve,
                    _ => Men::Eight,
                };
                Ok(makhos::Position::start(men, self.first().unwrap_or(first)))
            }
        }
    }

    /// The Makruk position the game began from, as [`Chain8::makhos_start`]; the side
    /// to move is the game start's `first`, which overrides the FEN's (a board set up
    /// with `--fen --first`).
    pub fn makruk_start(&self, first: Color) -> Result<makruk::Position, ParseError> {
        let start = match self.fen() {
            Some(fen) => makruk::Position::from_fen(fen)?,
            None => makruk::Position::start(),
        };
        let first = self.first().unwrap_or(first);
        Ok(if start.turn() == first {
            start
        } else {
            start.with_turn(first)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Event {
        let mut event = Event::new(Kind::Note)
            .with_detail("note", "game-start")
            .with_detail("game", "makruk")
            .with_detail("first", "white");
        event.seq = 1;
        event
    }

    fn played(seq: u64, number: u32, notation: &str) -> Event {
        let mut event = Event::new(Kind::Move);
        event.seq = seq;
        event.move_number = Some(number);
        event.color = Some(if number % 2 == 1 {
            Color::White
        } else {
            Color::Black
        });
        event.notation = Some(notation.into());
        event
    }

    fn note(seq: u64, note: &str, number: u32) -> Event {
        let mut event = Event::new(Kind::Note).with_detail("note", note);
        event.seq = seq;
        event.move_number = Some(number);
        event
    }

    fn notations(events: &[Event]) -> Vec<String> {
        Chain8::read(events)
            .unwrap()
            .moves
            .iter()
            .map(|m| m.notation.clone().unwrap())
            .collect()
    }

    #[test]
    fn a_correction_replaces_or_removes_the_last_move_only() {
        let mut events = vec![start(), played(2, 1, "e4"), played(3, 2, "d5")];
        let mut replaced = note(4, CORRECTION, 2).with_detail("notation", "d6");
        replaced.points = vec![[2, 3]];
        events.push(replaced);
        assert_eq!(notations(&events), ["e4", "d6"]);
        let moves = Chain8::read(&events).unwrap().moves;
        assert_eq!(
            moves[1].seq, 3,
            "the move keeps its event: its time and evidence"
        );
        assert_eq!(moves[1].points, vec![[2, 3]]);

        events.push(note(5, CORRECTION, 2));
        assert_eq!(notations(&events), ["e4"]);
        // A correction naming a move that is not the last standing one is stale.
        events.push(note(6, CORRECTION, 2));
        assert_eq!(notations(&events), ["e4"]);
        events.push(played(7, 2, "c5"));
        assert_eq!(notations(&events), ["e4", "c5"]);
    }

    #[test]
    fn moves_taken_back_and_given_again_give_way() {
        let events = vec![
            start(),
            played(2, 1, "e4"),
            played(3, 2, "d5"),
            note(4, "taken-back", 2),
            played(5, 2, "d6"),
            played(6, 3, "c4"),
            played(7, 3, "f4"),
        ];
        assert_eq!(notations(&events), ["e4", "d6", "f4"]);
        let chain = Chain8::read(&events).unwrap();
        assert_eq!(chain.first(), Some(Color::White));
        assert_eq!(chain.fen(), None);
        assert!(Chain8::read(&events[1..]).is_none());
    }

    #[test]
    fn the_start_is_the_fen_with_the_first_side_or_refused() {
        let black_first = |fen: Option<&str>| {
            let mut event = start().with_detail("first", "black");
            if let Some(fen) = fen {
                event = event.with_detail("fen", fen);
            }
            event
        };
        let events = [black_first(None)];
        let chain = Chain8::read(&events).unwrap();
        let makruk = chain.makruk_start(Color::White).unwrap();
        assert_eq!(makruk.turn(), Color::Black);
        assert_eq!(
            makruk.with_turn(Color::White).to_fen(),
            makruk::Position::start().to_fen()
        );
        let makhos = chain.makhos_start(Color::White).unwrap();
        assert_eq!(
            makhos,
            makhos::Position::start(Men::Eight, Color::Black),
            "no `men` is the eight-men game"
        );

        let events = [black_first(Some("not a position"))];
        let chain = Chain8::read(&events).unwrap();
        assert!(chain.makruk_start(Color::White).is_err());
        assert!(chain.makhos_start(Color::White).is_err());

        // A chain that does not say who began takes the recorder's side.
        let mut silent = start();
        silent.detail.remove("first");
        let events = [silent.with_detail("men", 12)];
        let chain = Chain8::read(&events).unwrap();
        assert_eq!(
            chain.makhos_start(Color::Black).unwrap(),
            makhos::Position::start(Men::Twelve, Color::Black)
        );
    }
}
