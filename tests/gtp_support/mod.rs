//! GNU Go over GTP for the cross-check tests: the library's client (`kradan::peers::Gtp`),
//! with a failure to talk to it ending the test.
// Each test binary uses its own share of these.
#![allow(dead_code)]

use kradan::games::Color;
use kradan::games::go::{Move, Point, Position};
use rand::Rng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use std::collections::BTreeSet;
use std::path::Path;

pub struct Gtp(kradan::peers::Gtp);

impl Gtp {
    /// GNU Go's defaults already forbid suicide and use simple ko, but they are spelled out
    /// so that a changed default cannot silently change what is being compared.
    pub fn start(program: &Path) -> Gtp {
        let args = ["--forbid-suicide", "--simple-ko"].map(String::from);
        Gtp(kradan::peers::Gtp::start(program, &args)
            .unwrap_or_else(|e| panic!("cannot start {}: {e:#}", program.display())))
    }

    /// Every command sent at once, then one answer each: `Ok` for `= …`, `Err` for `? …`.
    pub fn batch(&mut self, commands: &[String]) -> Vec<Result<String, String>> {
        self.0
            .batch(commands)
            .unwrap_or_else(|e| panic!("GNU Go: {e:#}"))
    }

    pub fn ask(&mut self, command: &str) -> Result<String, String> {
        self.0
            .ask(command)
            .unwrap_or_else(|e| panic!("GNU Go: {e:#}"))
    }

    pub fn must(&mut self, command: &str) -> String {
        self.0.must(command).unwrap_or_else(|e| panic!("{e:#}"))
    }
}

pub fn gtp_color(color: Color) -> &'static str {
    match color {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// A move as a GTP vertex, `pass` included.
pub fn gtp_vertex(mv: Move, size: usize) -> String {
    match mv {
        Move::Play(point) => point.to_gtp(size),
        Move::Pass => "pass".to_string(),
    }
}

pub fn gtp_play(color: Color, mv: Move, size: usize) -> String {
    format!("play {} {}", gtp_color(color), gtp_vertex(mv, size))
}

pub fn parse_points(text: &str, size: usize) -> BTreeSet<Point> {
    text.split_whitespace()
        .map(|v| Point::from_gtp(v, size).unwrap_or_else(|| panic!("bad GTP vertex {v:?}")))
        .collect()
}

/// A random legal move for `color`, biased towards fights: mostly next to the `recent`
/// stones or next to any stone, so that chains run out of liberties and captures, kos and
/// suicide points keep appearing instead of the board filling evenly; 2 % passes.
pub fn fighting_move(
    rng: &mut SmallRng,
    position: &Position,
    color: Color,
    recent: &[Point],
) -> Move {
    if rng.random_bool(0.02) {
        return Move::Pass;
    }
    let board = position.board();
    let empty: Vec<Point> = board.points().filter(|&p| board.get(p).is_none()).collect();
    let near_recent: Vec<Point> = recent
        .iter()
        .flat_map(|&p| board.neighbors(p))
        .filter(|&p| board.get(p).is_none())
        .collect();
    let near_stones: Vec<Point> = empty
        .iter()
        .copied()
        .filter(|&p| board.neighbors(p).any(|n| board.get(n).is_some()))
        .collect();
    for _ in 0..30 {
        let roll: f64 = rng.random();
        let pool = if roll < 0.5 && !near_recent.is_empty() {
            &near_recent
        } else if roll < 0.85 && !near_stones.is_empty() {
            &near_stones
        } else {
            &empty
        };
        let Some(&point) = pool.choose(rng) else {
            break;
        };
        if position.judge(color, Move::Play(point)).is_ok() {
            return Move::Play(point);
        }
    }
    Move::Pass
}
