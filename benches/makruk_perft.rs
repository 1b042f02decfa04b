//! Move generation speed (perft from the start), the cost of one `explain` call, the
//! function the video recorder calls for every settled frame, and of joining a game in
//! progress (`join`, the figures from colours alone; `moves_to_reach`, which the recorder
//! calls for each way of reading a few unsure squares).

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::games::makruk::{Position, explain, join, moves_to_reach};
use std::hint::black_box;

fn perft(c: &mut Criterion) {
    let start = Position::start();
    c.bench_function("makruk perft(4) from the start", |b| {
        b.iter(|| black_box(&start).perft(4))
    });
}

fn explain_one_move(c: &mut Criterion) {
    let before =
        Position::from_fen("r1s1k2r/3nm1s1/p1pp1npp/1p2pp2/4P3/PPPP1PPP/2N1MS2/R1SK2NR w - - 0 9")
            .expect("a valid FEN");
    let capture = before
        .legal_moves()
        .iter()
        .copied()
        .find(|mv| mv.capture.is_some())
        .expect("the position has a capture");
    let after = before.after(&capture).occupancy();
    c.bench_function("makruk explain a capture in a middlegame", |b| {
        b.iter(|| explain(black_box(&before), black_box(&after)))
    });
}

fn join_a_game_in_progress(c: &mut Criterion) {
    // The same middlegame, nine moves each: only its colours are given.
    let seen =
        Position::from_fen("r1s1k2r/3nm1s1/p1pp1npp/1p2pp2/4P3/PPPP1PPP/2N1MS2/R1SK2NR w - - 0 9")
            .expect("a valid FEN")
            .occupancy();
    c.bench_function("makruk join a middlegame from its colours", |b| {
        b.iter(|| join(black_box(&seen)))
    });
    c.bench_function("makruk moves to reach a middlegame's colours", |b| {
        b.iter(|| moves_to_reach(black_box(&seen)))
    });
}

criterion_group!(benches, perft, explain_one_move, join_a_game_in_progress);
criterion_main!(benches);
