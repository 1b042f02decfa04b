//! How long the recorder's judgement of one camera frame takes (`makhos::judge`): a quiet
//! move, a capture, a double move, and a change nothing explains (the slowest case: every
//! single move and every pair of moves is tried), each in middle-game positions from
//! seeded random games.

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::games::Color;
use kradan::games::makhos::{Men, Observation, Position, Verdict, judge};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;

/// `(before, after)` pairs: positions 10–40 moves into random twelve-man games, each with
/// a move whose result matches `keep`.
fn frames(keep: impl Fn(&Position, &Position) -> bool) -> Vec<(Position, Observation)> {
    let mut rng = SmallRng::seed_from_u64(1);
    let mut frames = Vec::new();
    while frames.len() < 64 {
        let mut position = Position::start(Men::Twelve, Color::White);
        let depth = rng.random_range(10..40);
        for ply in 0..depth {
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            let next = position.play(&moves[rng.random_range(0..moves.len())]);
            if ply == depth - 1 && keep(&position, &next) {
                frames.push((position, Observation::of(&next)));
            }
            position = next;
        }
    }
    frames
}

fn judge_all(c: &mut Criterion, name: &str, frames: &[(Position, Observation)]) {
    c.bench_function(name, |b| {
        b.iter(|| {
            for (before, after) in frames {
                black_box(judge(black_box(before), black_box(after)));
            }
        })
    });
}

fn bench(c: &mut Criterion) {
    let total = |p: &Position| p.count(Color::White) + p.count(Color::Black);
    let quiet = frames(|before, after| total(before) == total(after));
    let capture = frames(|before, after| total(before) > total(after));
    // The side that just moved moves again: no single move explains it, so judge searches
    // both the opponent's moves and every pair of the mover's.
    let irregular: Vec<(Position, Observation)> = quiet
        .iter()
        .map(|(before, after)| {
            let mut wrong_side = *before;
            wrong_side.set_turn(before.turn().opponent());
            (wrong_side, *after)
        })
        .collect();
    assert!(
        irregular
            .iter()
            .all(|(before, after)| matches!(judge(before, after), Verdict::Irregular(_)))
    );
    // One of the side to move's opponent's pieces is lifted off the board.
    let lifted: Vec<(Position, Observation)> = quiet
        .iter()
        .map(|(before, _)| {
            let mut after = *before;
            let (square, _) = before
                .pieces(before.turn().opponent())
                .next()
                .expect("the opponent has a piece");
            after.set(square, None);
            (*before, Observation::of(&after))
        })
        .collect();
    assert!(
        lifted
            .iter()
            .all(|(before, after)| matches!(judge(before, after), Verdict::Irregular(_)))
    );
    judge_all(c, "judge 64 quiet moves", &quiet);
    judge_all(c, "judge 64 captures", &capture);
    judge_all(c, "judge 64 double moves", &irregular);
    judge_all(c, "judge 64 lifted pieces", &lifted);
}

criterion_group!(benches, bench);
criterion_main!(benches);
