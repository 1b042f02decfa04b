//! Move generation speed (perft from the start) and the cost of one `explain` call, the
//! function the video recorder calls for every settled frame.

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::games::makruk::{Position, explain};
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

criterion_group!(benches, perft, explain_one_move);
criterion_main!(benches);
