//! How fast the Go rules engine answers what the recorder asks of it: the legality of every
//! point (move inference from a camera frame), a whole game played move by move, the
//! replay of a real record, and the explanation of a camera frame.

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::games::Color;
use kradan::games::go::{Context, Move, Point, Position, explain, replay};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use std::hint::black_box;

const SIZE: usize = 19;
const SHUSAKU: &str = include_str!("../samples/go/shusaku-gennan-1846.sgf");

/// Plays random legal moves that do not fill the mover's own single-point eyes, so that
/// the game ends with both players passing, as a real one does, instead of running on
/// forever. Returns the number of moves played.
fn random_game(position: &mut Position, rng: &mut SmallRng, max_moves: usize) -> usize {
    let mut empty: Vec<Point> = Vec::with_capacity(SIZE * SIZE);
    while position.moves_played() < max_moves && !position.play_has_ended() {
        let color = position.to_move();
        let board = position.board();
        empty.clear();
        empty.extend(board.points().filter(|&p| board.get(p).is_none()));
        empty.shuffle(rng);
        let chosen = empty
            .iter()
            .copied()
            .filter(|&p| !board.neighbors(p).all(|n| board.get(n) == Some(color)))
            .find(|&p| position.judge(color, Move::Play(p)).is_ok());
        let mv = chosen.map_or(Move::Pass, Move::Play);
        position.play(color, mv).expect("judged legal");
    }
    position.moves_played()
}

fn judge_every_point(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(1846);
    let mut position = Position::new(SIZE);
    random_game(&mut position, &mut rng, 150);
    let points: Vec<Point> = position.board().points().collect();
    c.bench_function("judge all 361 points, mid-game 19×19, both colours", |b| {
        b.iter(|| {
            let mut legal = 0;
            for &point in &points {
                for color in [Color::Black, Color::White] {
                    legal += usize::from(position.judge(color, Move::Play(point)).is_ok());
                }
            }
            black_box(legal)
        })
    });
}

/// Seed 4 gives a game that ends with two passes after 467 moves; many random games never
/// end under simple ko, so a fixed one keeps the figure comparable from run to run.
fn play_random_game(c: &mut Criterion) {
    c.bench_function("play the random 19×19 game of seed 4 to two passes", |b| {
        b.iter(|| {
            let mut rng = SmallRng::seed_from_u64(4);
            let mut position = Position::new(SIZE);
            let moves = random_game(&mut position, &mut rng, 1000);
            assert!(position.play_has_ended());
            black_box(moves)
        })
    });
}

fn replay_shusaku(c: &mut Criterion) {
    c.bench_function("replay shusaku-gennan-1846.sgf", |b| {
        b.iter(|| replay::replay(black_box(SHUSAKU)).expect("a valid record"))
    });
}

/// What the recorder asks for every settled camera frame: the position 150 moves into the
/// game of seed 1846, and the board after its next move, then after the next two (fast
/// play: both orders of the two stones are tried), and after four: the search bound, 24
/// orders.
fn explain_frames(c: &mut Criterion) {
    let mut rng = SmallRng::seed_from_u64(1846);
    let mut before = Position::new(SIZE);
    random_game(&mut before, &mut rng, 150);
    let mut after = before.clone();
    for (moves, name) in [(151, "one move"), (152, "two moves"), (154, "four moves")] {
        random_game(&mut after, &mut rng, moves);
        let seen = after.board().to_occupancy();
        let found = explain(&before, &seen, Context::default()).expect("same size");
        assert!(found[0].cost() == 0 && found[0].moves.len() == moves - 150);
        c.bench_function(&format!("explain {name}, mid-game 19×19"), |b| {
            b.iter(|| explain(black_box(&before), black_box(&seen), Context::default()))
        });
    }
}

criterion_group!(
    benches,
    judge_every_point,
    play_random_game,
    replay_shusaku,
    explain_frames
);
criterion_main!(benches);
