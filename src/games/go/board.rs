//! The Go board as stones on points, with the chain and liberty arithmetic every rule
//! is built from.

use super::Point;
use crate::games::{Color, Occupancy};

/// The smallest and largest boards the engine accepts. 5×5 is the smallest on which Go is
/// played at all; 25×25 is the largest SGF coordinates (`a`–`y`) cover without extensions.
pub const MIN_SIZE: usize = 5;
pub const MAX_SIZE: usize = 25;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    size: usize,
    cells: Vec<Option<Color>>,
}

impl Board {
    /// An empty board. Panics outside `MIN_SIZE..=MAX_SIZE`: callers validate user input
    /// with [`Board::check_size`] first.
    pub fn new(size: usize) -> Self {
        assert!(
            Self::check_size(size).is_ok(),
            "board size {size} outside {MIN_SIZE}..={MAX_SIZE}"
        );
        Board {
            size,
            cells: vec![None; size * size],
        }
    }

    pub fn check_size(size: usize) -> Result<(), String> {
        if (MIN_SIZE..=MAX_SIZE).contains(&size) {
            Ok(())
        } else {
            Err(format!(
                "board size {size} is not supported (from {MIN_SIZE} to {MAX_SIZE})"
            ))
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn contains(&self, point: Point) -> bool {
        (point.row as usize) < self.size && (point.col as usize) < self.size
    }

    fn index(&self, point: Point) -> usize {
        point.row as usize * self.size + point.col as usize
    }

    pub fn get(&self, point: Point) -> Option<Color> {
        self.cells[self.index(point)]
    }

    pub fn set(&mut self, point: Point, stone: Option<Color>) {
        let index = self.index(point);
        self.cells[index] = stone;
    }

    pub fn points(&self) -> impl Iterator<Item = Point> + use<> {
        let size = self.size as u8;
        (0..size).flat_map(move |row| (0..size).map(move |col| Point::new(row, col)))
    }

    pub fn stones(&self, color: Color) -> impl Iterator<Item = Point> + '_ {
        self.points().filter(move |&p| self.get(p) == Some(color))
    }

    pub fn neighbors(&self, point: Point) -> impl Iterator<Item = Point> + use<> {
        let size = self.size as u8;
        let Point { row, col } = point;
        [
            (row > 0).then(|| Point::new(row - 1, col)),
            (row + 1 < size).then(|| Point::new(row + 1, col)),
            (col > 0).then(|| Point::new(row, col - 1)),
            (col + 1 < size).then(|| Point::new(row, col + 1)),
        ]
        .into_iter()
        .flatten()
    }

    /// The chain through `start` (all stones of its colour connected to it) and the number
    /// of distinct liberties it has.
    pub fn chain(&self, start: Point) -> Chain {
        let color = self.get(start);
        let mut seen = vec![false; self.cells.len()];
        let mut liberty_seen = vec![false; self.cells.len()];
        let mut stones = vec![start];
        let mut liberties = 0;
        seen[self.index(start)] = true;
        let mut next = 0;
        while next < stones.len() {
            let point = stones[next];
            next += 1;
            for neighbor in self.neighbors(point) {
                let index = self.index(neighbor);
                match self.cells[index] {
                    None if !liberty_seen[index] => {
                        liberty_seen[index] = true;
                        liberties += 1;
                    }
                    Some(c) if Some(c) == color && !seen[index] => {
                        seen[index] = true;
                        stones.push(neighbor);
                    }
                    _ => {}
                }
            }
        }
        Chain { stones, liberties }
    }

    pub fn to_occupancy(&self) -> Occupancy {
        let mut occupancy = Occupancy::empty(self.size, self.size);
        for point in self.points() {
            occupancy.set(point.row as usize, point.col as usize, self.get(point));
        }
        occupancy
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub stones: Vec<Point>,
    pub liberties: usize,
}
