//! Counting a finished game, once the dead stones are known.
//!
//! Thai counting (TGA 13) is territory counting: dead stones are taken off and, with every
//! stone captured during play, filled into their owner's opponent's territory; each side
//! scores its remaining territory, and White adds the komi (6.5 by TGA 13.4). Filling
//! prisoners into territory and adding prisoners to territory give the same margin, so the
//! score here is territory + prisoners. Area counting (WIKI, the Chinese way) scores living
//! stones plus territory instead.
//!
//! Seki points are not territory (TGA 10): liberties shared by the two sides are neutral,
//! and an eye of a chain that lives in seki is not counted either.

use super::{Board, Point, Position};
use crate::games::Color;
use serde::Serialize;
use std::collections::HashSet;

/// Black's compensation for moving first under TGA 13.4.
pub const THAI_KOMI: f64 = 6.5;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Counting {
    /// Territory + prisoners (TGA 13).
    Thai,
    /// Stones on the board + territory (the Chinese way, WIKI).
    Area,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideScore {
    pub territory: u32,
    /// Living stones on the board after the dead are removed.
    pub stones: u32,
    /// Opponent stones captured during play plus the opponent's dead stones.
    pub prisoners: u32,
    pub total: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Score {
    pub counting: Counting,
    pub komi: f64,
    pub black: SideScore,
    pub white: SideScore,
    /// Empty points that belong to neither side (dame, shared liberties of a seki, eyes of
    /// a seki under Thai counting).
    pub neutral: Vec<Point>,
    /// Stones judged to live in seki.
    pub seki_stones: Vec<Point>,
}

impl Score {
    /// `B+3.5`, `W+0.5`, or `0` for a tie (possible only with an integer komi).
    pub fn result(&self) -> String {
        let margin = self.black.total - self.white.total;
        if margin > 0.0 {
            format!("B+{margin}")
        } else if margin < 0.0 {
            format!("W+{}", -margin)
        } else {
            "0".to_string()
        }
    }
}

/// Scores `position` with `dead` stones removed (dead stones can be of either colour).
pub fn score(position: &Position, dead: &[Point], komi: f64, counting: Counting) -> Score {
    let mut board = position.board().clone();
    let mut dead_black = 0;
    let mut dead_white = 0;
    for &point in dead {
        match board.get(point) {
            Some(Color::Black) => dead_black += 1,
            Some(Color::White) => dead_white += 1,
            None => continue,
        }
        board.set(point, None);
    }

    let seki = seki_stones(&board);
    let mut territory = [0u32; 2];
    let mut neutral = Vec::new();
    let mut visited = vec![false; board.size() * board.size()];
    for start in board.points() {
        let index = start.row as usize * board.size() + start.col as usize;
        if board.get(start).is_some() || visited[index] {
            continue;
        }
        let region = empty_region(&board, start, &mut visited);
        let owner = region_owner(&board, &region.border, &seki, counting);
        match owner {
            Some(Color::Black) => territory[0] += region.points.len() as u32,
            Some(Color::White) => territory[1] += region.points.len() as u32,
            None => neutral.extend(region.points),
        }
    }

    let stones = |color| board.stones(color).count() as u32;
    let side = |territory: u32, stones: u32, prisoners: u32, komi: f64| {
        let total = match counting {
            Counting::Thai => territory as f64 + prisoners as f64,
            Counting::Area => territory as f64 + stones as f64,
        } + komi;
        SideScore {
            territory,
            stones,
            prisoners,
            total,
        }
    };
    let mut seki_stones: Vec<Point> = seki.into_iter().collect();
    seki_stones.sort();
    Score {
        counting,
        komi,
        black: side(
            territory[0],
            stones(Color::Black),
            position.prisoners(Color::Black) + dead_white,
            0.0,
        ),
        white: side(
            territory[1],
            stones(Color::White),
            position.prisoners(Color::White) + dead_black,
            komi,
        ),
        neutral,
        seki_stones,
    }
}

struct Region {
    points: Vec<Point>,
    /// Stones adjacent to the region.
    border: Vec<Point>,
}

fn empty_region(board: &Board, start: Point, visited: &mut [bool]) -> Region {
    let size = board.size();
    let mut points = vec![start];
    let mut border = Vec::new();
    visited[start.row as usize * size + start.col as usize] = true;
    let mut next = 0;
    while next < points.len() {
        let point = points[next];
        next += 1;
        for neighbor in board.neighbors(point) {
            let index = neighbor.row as usize * size + neighbor.col as usize;
            if board.get(neighbor).is_some() {
                border.push(neighbor);
            } else if !visited[index] {
                visited[index] = true;
                points.push(neighbor);
            }
        }
    }
    Region { points, border }
}

/// The colour a region is territory of: it must touch stones of that colour only, and
/// under Thai counting none of them may live in seki.
fn region_owner(
    board: &Board,
    border: &[Point],
    seki: &HashSet<Point>,
    counting: Counting,
) -> Option<Color> {
    let mut colors = border.iter().filter_map(|&p| board.get(p));
    let first = colors.next()?;
    if colors.any(|c| c != first) {
        return None;
    }
    if counting == Counting::Thai && border.iter().all(|p| seki.contains(p)) {
        return None;
    }
    Some(first)
}

/// Chains that live in seki: two opposing chains that share a liberty while neither has
/// more than two liberties. At the end of a game neither side can fill that shared
/// liberty without putting itself in atari, which is exactly mutual life. Requiring both
/// chains to be short of liberties keeps an ordinary living wall next to an unfilled dame
/// point from being mistaken for seki.
fn seki_stones(board: &Board) -> HashSet<Point> {
    let mut seki = HashSet::new();
    for point in board.points() {
        if board.get(point).is_some() {
            continue;
        }
        let neighbors: Vec<Point> = board.neighbors(point).collect();
        for &a in &neighbors {
            for &b in &neighbors {
                let (Some(color_a), Some(color_b)) = (board.get(a), board.get(b)) else {
                    continue;
                };
                if color_a != Color::Black || color_b != Color::White {
                    continue;
                }
                let chain_a = board.chain(a);
                let chain_b = board.chain(b);
                if chain_a.liberties <= 2 && chain_b.liberties <= 2 {
                    seki.extend(chain_a.stones);
                    seki.extend(chain_b.stones);
                }
            }
        }
    }
    seki
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Occupancy;

    /// A finished 9×9 game: White's wall on column 4 and Black's on column 5; in White's
    /// corner a Black chain and a White stone live in seki on two shared liberties; a dead
    /// White stone sits in Black's territory.
    const FINISHED_WITH_SEKI: [&str; 9] = [
        ".W.WWB...",
        "BBBWWB...",
        "WWWWWB...",
        "....WB...",
        "....WB...",
        "....WB...",
        "....WB...",
        "....WB.W.",
        "....WB...",
    ];

    fn finished() -> Position {
        let occupancy = Occupancy::from_text_rows(&FINISHED_WITH_SEKI).unwrap();
        Position::from_occupancy(&occupancy, Color::Black).unwrap()
    }

    #[test]
    fn tga_10_the_seki_is_found_and_its_shared_liberties_are_nobodys() {
        let score = score(&finished(), &[Point::new(7, 7)], THAI_KOMI, Counting::Thai);
        let mut seki: Vec<String> = score.seki_stones.iter().map(|p| p.to_sgf()).collect();
        seki.sort();
        assert_eq!(seki, ["ab", "ba", "bb", "cb"]);
        let mut neutral: Vec<String> = score.neutral.iter().map(|p| p.to_sgf()).collect();
        neutral.sort();
        assert_eq!(neutral, ["aa", "ca"]);
    }

    #[test]
    fn tga_13_thai_counting_is_territory_plus_prisoners_plus_komi() {
        let score = score(&finished(), &[Point::new(7, 7)], THAI_KOMI, Counting::Thai);
        assert_eq!(
            score.black.territory, 27,
            "the dead stone's point is territory"
        );
        assert_eq!(score.black.prisoners, 1, "the dead stone is a prisoner");
        assert_eq!(score.black.total, 28.0);
        assert_eq!(score.white.territory, 24);
        assert_eq!(score.white.total, 30.5);
        assert_eq!(score.result(), "W+2.5");
    }

    #[test]
    fn wiki_area_counting_is_stones_plus_territory() {
        let score = score(&finished(), &[Point::new(7, 7)], THAI_KOMI, Counting::Area);
        assert_eq!((score.black.stones, score.black.territory), (12, 27));
        assert_eq!((score.white.stones, score.white.territory), (16, 24));
        assert_eq!(
            score.black.total + score.white.total - THAI_KOMI,
            79.0,
            "81 less 2 dame"
        );
        assert_eq!(score.result(), "W+7.5");
    }
}
