//! A Go game in progress: the board plus everything the rules need to judge the next move
//! (whose turn it is, the ko point, prisoners, every earlier position).

use super::board::Board;
use super::{Illegal, Move, Point};
use crate::games::Color;
use std::collections::HashMap;

/// What playing a legal move did.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Played {
    /// Opponent stones removed by the move.
    pub captured: Vec<Point>,
    /// The whole-board position after the move already stood on the board after move
    /// `first_seen` (0 = the start). Long cycles (triple ko, eternal life) are allowed, but
    /// both players may then agree to a draw (TGA 11): the recorder reports a draw claim.
    pub repeats_position_of_move: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Position {
    board: Board,
    to_move: Color,
    /// The point the given colour may not play on at once because it would retake a
    /// single-stone ko (TGA 8).
    ko: Option<(Point, Color)>,
    captured_by_black: u32,
    captured_by_white: u32,
    moves_played: usize,
    consecutive_passes: usize,
    hash: u64,
    seen_positions: HashMap<u64, usize>,
}

impl Position {
    /// An empty board with Black to move (TGA 4).
    pub fn new(size: usize) -> Self {
        let board = Board::new(size);
        let mut seen_positions = HashMap::new();
        seen_positions.insert(0, 0);
        Position {
            board,
            to_move: Color::Black,
            ko: None,
            captured_by_black: 0,
            captured_by_white: 0,
            moves_played: 0,
            consecutive_passes: 0,
            hash: 0,
            seen_positions,
        }
    }

    /// Black's handicap stones on the fixed star points, then White to move (TGA 5).
    pub fn with_handicap(size: usize, stones: usize) -> Result<Self, String> {
        let points = super::handicap_points(size, stones)?;
        let mut position = Position::new(size);
        position.setup(
            &points,
            &[],
            if points.is_empty() {
                Color::Black
            } else {
                Color::White
            },
        );
        Ok(position)
    }

    /// Places setup stones (SGF `AB`/`AW`, handicap) without judging them, and sets the
    /// side to move. Stones already present are replaced.
    pub fn setup(&mut self, black: &[Point], white: &[Point], to_move: Color) {
        for &point in black {
            self.put(point, Some(Color::Black));
        }
        for &point in white {
            self.put(point, Some(Color::White));
        }
        self.to_move = to_move;
        self.ko = None;
        self.seen_positions.insert(self.hash, self.moves_played);
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn size(&self) -> usize {
        self.board.size()
    }

    pub fn to_move(&self) -> Color {
        self.to_move
    }

    pub fn moves_played(&self) -> usize {
        self.moves_played
    }

    /// Prisoners: opponent stones captured during play by `color`.
    pub fn prisoners(&self, color: Color) -> u32 {
        match color {
            Color::Black => self.captured_by_black,
            Color::White => self.captured_by_white,
        }
    }

    pub fn consecutive_passes(&self) -> usize {
        self.consecutive_passes
    }

    /// Two passes in a row end play (TGA 12.1).
    pub fn play_has_ended(&self) -> bool {
        self.consecutive_passes >= 2
    }

    /// The point `color` may not play at once because it would retake a ko.
    pub fn ko_point(&self, color: Color) -> Option<Point> {
        self.ko.filter(|&(_, c)| c == color).map(|(p, _)| p)
    }

    /// Judges `mv` by `color` without playing it. Any colour may be asked about: the
    /// recorder also needs to know whether a move would have been legal for the player
    /// whose turn it was not.
    pub fn judge(&self, color: Color, mv: Move) -> Result<(), Illegal> {
        let Move::Play(point) = mv else {
            return Ok(());
        };
        if !self.board.contains(point) {
            return Err(Illegal::OffBoard);
        }
        if self.board.get(point).is_some() {
            return Err(Illegal::Occupied);
        }
        if self.ko_point(color) == Some(point) {
            return Err(Illegal::Ko);
        }
        let mut board = self.board.clone();
        board.set(point, Some(color));
        let captures = self
            .board
            .neighbors(point)
            .any(|n| board.get(n) == Some(color.opponent()) && board.chain(n).liberties == 0);
        if !captures && board.chain(point).liberties == 0 {
            return Err(Illegal::Suicide);
        }
        Ok(())
    }

    /// Plays `mv` for `color` if it is legal, and gives the turn to the other colour. The
    /// colour is the caller's to say: two moves of one colour in a row are legal for the
    /// engine, and it is the recorder that flags them as a double move (TGA 20).
    pub fn play(&mut self, color: Color, mv: Move) -> Result<Played, Illegal> {
        self.judge(color, mv)?;
        self.moves_played += 1;
        self.to_move = color.opponent();
        let Move::Play(point) = mv else {
            self.consecutive_passes += 1;
            self.ko = None;
            return Ok(Played::default());
        };
        self.consecutive_passes = 0;
        self.put(point, Some(color));
        let mut captured = Vec::new();
        for neighbor in self.board.neighbors(point) {
            if self.board.get(neighbor) == Some(color.opponent()) {
                let chain = self.board.chain(neighbor);
                if chain.liberties == 0 {
                    for &stone in &chain.stones {
                        self.put(stone, None);
                    }
                    captured.extend(chain.stones);
                }
            }
        }
        let prisoners = captured.len() as u32;
        match color {
            Color::Black => self.captured_by_black += prisoners,
            Color::White => self.captured_by_white += prisoners,
        }
        self.ko = None;
        if let [single] = captured[..] {
            let own = self.board.chain(point);
            if own.stones.len() == 1 && own.liberties == 1 {
                self.ko = Some((single, color.opponent()));
            }
        }
        let repeats_position_of_move = match self.seen_positions.get(&self.hash) {
            Some(&first_seen) => Some(first_seen),
            None => {
                self.seen_positions.insert(self.hash, self.moves_played);
                None
            }
        };
        Ok(Played {
            captured,
            repeats_position_of_move,
        })
    }

    fn put(&mut self, point: Point, stone: Option<Color>) {
        if let Some(old) = self.board.get(point) {
            self.hash ^= zobrist(self.board.size(), point, old);
        }
        if let Some(new) = stone {
            self.hash ^= zobrist(self.board.size(), point, new);
        }
        self.board.set(point, stone);
    }
}

/// A fixed pseudo-random key per (point, colour) for position hashing; splitmix64 of the
/// index keeps it deterministic without a table or a random-number crate.
fn zobrist(size: usize, point: Point, color: Color) -> u64 {
    let index = (point.row as u64 * size as u64 + point.col as u64) * 2
        + matches!(color, Color::White) as u64;
    let mut z = index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
