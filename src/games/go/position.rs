//! A Go game in progress: the board plus everything the rules need to judge the next move
//! (whose turn it is, the ko point, prisoners, every earlier position).

use super::board::Board;
use super::{Illegal, Move, Point};
use crate::games::{Color, Occupancy};
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

    /// A position with the stones of `occupancy` (e.g. what a camera saw) and `to_move` to
    /// play. The board must be square and of a supported size.
    pub fn from_occupancy(occupancy: &Occupancy, to_move: Color) -> Result<Self, String> {
        let size = occupancy.width();
        if occupancy.height() != size {
            return Err(format!(
                "a Go board is square, not {}×{}",
                occupancy.width(),
                occupancy.height()
            ));
        }
        Board::check_size(size)?;
        let mut position = Position::new(size);
        let stones = |color| {
            occupancy
                .cells(Some(color))
                .map(|[row, col]| Point::new(row as u8, col as u8))
                .collect::<Vec<_>>()
        };
        position.setup(&stones(Color::Black), &stones(Color::White), to_move);
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
        self.check_placement(color, point)?;
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

    /// The refusals that need no trial placement: off the board, occupied, ko.
    fn check_placement(&self, color: Color, point: Point) -> Result<(), Illegal> {
        if !self.board.contains(point) {
            return Err(Illegal::OffBoard);
        }
        if self.board.get(point).is_some() {
            return Err(Illegal::Occupied);
        }
        if self.ko_point(color) == Some(point) {
            return Err(Illegal::Ko);
        }
        Ok(())
    }

    /// Plays `mv` for `color` if it is legal, and gives the turn to the other colour. The
    /// colour is the caller's to say: two moves of one colour in a row are legal for the
    /// engine, and it is the recorder that flags them as a double move (TGA 20).
    pub fn play(&mut self, color: Color, mv: Move) -> Result<Played, Illegal> {
        let Move::Play(point) = mv else {
            self.moves_played += 1;
            self.to_move = color.opponent();
            self.consecutive_passes += 1;
            self.ko = None;
            return Ok(Played::default());
        };
        self.check_placement(color, point)?;
        // Placing the stone and taking the captures once is cheaper than judging on a copy
        // of the board first; a suicide, which captures nothing, is undone by lifting the
        // one stone again.
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
        if captured.is_empty() && self.board.chain(point).liberties == 0 {
            self.put(point, None);
            return Err(Illegal::Suicide);
        }
        self.moves_played += 1;
        self.to_move = color.opponent();
        self.consecutive_passes = 0;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Penalty;

    fn position(rows: &[&str], to_move: Color) -> Position {
        Position::from_occupancy(&Occupancy::from_text_rows(rows).unwrap(), to_move).unwrap()
    }

    fn at(row: u8, col: u8) -> Move {
        Move::Play(Point::new(row, col))
    }

    fn liberties(position: &Position, row: u8, col: u8) -> usize {
        position.board().chain(Point::new(row, col)).liberties
    }

    #[test]
    fn tga_5_1_a_lone_stone_has_two_liberties_in_the_corner_three_on_the_edge_four_inside() {
        let p = position(&["B....", ".....", "..B..", ".....", "B.B.."], Color::White);
        assert_eq!(liberties(&p, 0, 0), 2);
        assert_eq!(liberties(&p, 2, 2), 4);
        assert_eq!(liberties(&p, 4, 0), 2);
        assert_eq!(liberties(&p, 4, 2), 3);
    }

    #[test]
    fn tga_5_1_a_chain_shares_its_liberties() {
        let p = position(&["BB...", "B....", ".....", ".....", "....."], Color::White);
        assert_eq!(p.board().chain(Point::new(0, 0)).stones.len(), 3);
        assert_eq!(liberties(&p, 0, 0), 3);
    }

    #[test]
    fn tga_5_2_a_single_stone_without_liberties_is_captured() {
        let mut p = position(&[".....", "..B..", ".BWB.", ".....", "....."], Color::Black);
        let played = p.play(Color::Black, at(3, 2)).unwrap();
        assert_eq!(played.captured, vec![Point::new(2, 2)]);
        assert_eq!(p.board().get(Point::new(2, 2)), None);
        assert_eq!(p.prisoners(Color::Black), 1);
    }

    #[test]
    fn tga_5_2_a_whole_chain_is_captured_at_once_on_the_edge() {
        let mut p = position(&["WW...", "BB...", ".....", ".....", "....."], Color::Black);
        let played = p.play(Color::Black, at(0, 2)).unwrap();
        assert_eq!(played.captured.len(), 2);
        assert_eq!(p.prisoners(Color::Black), 2);
    }

    #[test]
    fn tga_5_2_one_stone_captures_two_chains() {
        let mut p = position(&["BW.WB", ".B.B.", ".....", ".....", "....."], Color::Black);
        let played = p.play(Color::Black, at(0, 2)).unwrap();
        assert_eq!(played.captured.len(), 2);
        assert_eq!(p.ko_point(Color::White), None, "two stones taken: no ko");
    }

    #[test]
    fn tga_6_suicide_is_refused_with_its_penalty_articles() {
        let p = position(&[".W...", "W....", ".....", ".....", "....."], Color::Black);
        assert_eq!(p.judge(Color::Black, at(0, 0)), Err(Illegal::Suicide));
        let articles: Vec<String> = Illegal::Suicide
            .articles()
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(articles, ["TGA 6", "TGA 29", "TML 32"]);
        assert_eq!(
            Illegal::Suicide.penalties(),
            &[Penalty::Warning, Penalty::LoseTurn]
        );
    }

    #[test]
    fn tga_6_a_chain_may_not_fill_its_own_last_liberty() {
        let p = position(&["B.BW.", "WWW..", ".....", ".....", "....."], Color::Black);
        assert_eq!(p.judge(Color::Black, at(0, 1)), Err(Illegal::Suicide));
        // White may play there: it captures the two black stones.
        let mut q = p.clone();
        assert_eq!(q.play(Color::White, at(0, 1)).unwrap().captured.len(), 2);
    }

    #[test]
    fn tga_6_a_move_without_liberties_is_legal_when_it_captures() {
        let mut p = position(&[".WB..", "WB...", ".....", ".....", "....."], Color::Black);
        let played = p.play(Color::Black, at(0, 0)).unwrap();
        assert_eq!(played.captured, vec![Point::new(0, 1)]);
        assert_eq!(p.board().get(Point::new(0, 0)), Some(Color::Black));
    }

    fn ko_position() -> Position {
        // White at (1,1) has one liberty; Black takes it by playing (1,2).
        position(&[".BW..", "BW.W.", ".BW..", ".....", "....."], Color::Black)
    }

    #[test]
    fn tga_8_a_ko_may_not_be_retaken_at_once() {
        let mut p = ko_position();
        assert_eq!(p.play(Color::Black, at(1, 2)).unwrap().captured.len(), 1);
        assert_eq!(p.ko_point(Color::White), Some(Point::new(1, 1)));
        assert_eq!(p.judge(Color::White, at(1, 1)), Err(Illegal::Ko));
        let articles: Vec<String> = Illegal::Ko
            .articles()
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(articles, ["TGA 8", "TGA 28", "TML 31"]);
    }

    #[test]
    fn tga_8_the_ko_may_be_retaken_after_a_move_elsewhere() {
        let mut p = ko_position();
        p.play(Color::Black, at(1, 2)).unwrap();
        p.play(Color::White, at(4, 4)).unwrap();
        p.play(Color::Black, at(4, 3)).unwrap();
        assert_eq!(p.ko_point(Color::White), None);
        assert_eq!(p.play(Color::White, at(1, 1)).unwrap().captured.len(), 1);
        // ...and now Black in turn may not take back at once.
        assert_eq!(p.judge(Color::Black, at(1, 2)), Err(Illegal::Ko));
    }

    #[test]
    fn tga_8_capturing_with_a_stone_that_joins_a_chain_is_not_a_ko() {
        let mut p = position(&[".BW..", "BW.W.", ".BB..", ".....", "....."], Color::Black);
        assert_eq!(p.play(Color::Black, at(1, 2)).unwrap().captured.len(), 1);
        assert_eq!(p.ko_point(Color::White), None);
        assert!(
            p.judge(Color::White, at(1, 1)).is_err(),
            "(1,1) is suicide for White now"
        );
    }

    #[test]
    fn tga_4_2_an_occupied_point_is_refused() {
        let p = ko_position();
        assert_eq!(p.judge(Color::Black, at(0, 1)), Err(Illegal::Occupied));
        assert_eq!(p.judge(Color::Black, at(7, 0)), Err(Illegal::OffBoard));
    }

    #[test]
    fn wiki_a_pass_is_always_legal_and_two_passes_end_play_tga_12_1() {
        let mut p = ko_position();
        p.play(Color::Black, Move::Pass).unwrap();
        assert!(!p.play_has_ended());
        p.play(Color::White, Move::Pass).unwrap();
        assert!(p.play_has_ended());
        p.play(Color::Black, at(4, 4)).unwrap();
        assert!(!p.play_has_ended());
    }

    const TRIPLE_KO: [&str; 9] = [
        ".BW...BW.",
        "BW.W.B.BW",
        ".BW...BW.",
        ".........",
        ".BW......",
        "BW.W.....",
        ".BW......",
        ".........",
        ".........",
    ];

    #[test]
    fn tga_11_a_triple_ko_cycle_is_reported_as_a_draw_claim_not_refused() {
        let mut p = position(&TRIPLE_KO, Color::Black);
        let cycle = [
            (Color::Black, at(1, 2)),
            (Color::White, at(1, 6)),
            (Color::Black, at(5, 2)),
            (Color::White, at(1, 1)),
            (Color::Black, at(1, 7)),
            (Color::White, at(5, 1)),
        ];
        for (index, &(color, mv)) in cycle.iter().enumerate() {
            let played = p.play(color, mv).unwrap();
            assert_eq!(
                played.captured.len(),
                1,
                "every move of the cycle takes a ko"
            );
            if index < 5 {
                assert_eq!(played.repeats_position_of_move, None);
            } else {
                assert_eq!(
                    played.repeats_position_of_move,
                    Some(0),
                    "back to the start"
                );
            }
        }
        // The cycle goes on: the next round repeats the position after move 1, and so on.
        let played = p.play(Color::Black, at(1, 2)).unwrap();
        assert_eq!(played.repeats_position_of_move, Some(1));
    }

    #[test]
    fn tga_11_a_double_ko_cycle_with_a_pass_is_reported() {
        let rows: Vec<&str> = TRIPLE_KO[..4]
            .iter()
            .copied()
            .chain(["........."; 5])
            .collect();
        let mut p = position(&rows, Color::Black);
        p.play(Color::Black, at(1, 2)).unwrap();
        p.play(Color::White, at(1, 6)).unwrap();
        p.play(Color::Black, Move::Pass).unwrap();
        p.play(Color::White, at(1, 1)).unwrap();
        let played = p.play(Color::Black, at(1, 7)).unwrap();
        assert_eq!(played.repeats_position_of_move, Some(0));
    }

    #[test]
    fn tga_4_1_handicap_stones_go_on_the_star_points_and_white_moves_first() {
        let p = Position::with_handicap(19, 4).unwrap();
        assert_eq!(p.to_move(), Color::White);
        let stones: Vec<String> = p
            .board()
            .stones(Color::Black)
            .map(|s| s.to_gtp(19))
            .collect();
        assert_eq!(stones, ["D16", "Q16", "D4", "Q4"]);
        assert!(Position::with_handicap(9, 5).is_ok());
        assert!(Position::with_handicap(9, 10).is_err());
        assert!(Position::with_handicap(19, 1).is_err());
    }
}
