//! The cost of the 8×8 vision on one 1920×1080 frame, on one core: finding the board
//! (`geometry::eight::locate`) and reading its 64 squares once the board is known
//! (`reading::eight::read`, what the recorder does per frame while it follows the board).
//!
//! The frames are the bundled rendered stills of each game (1280×720) scaled to 1080p.

#[path = "common/eight_stills.rs"]
mod eight_stills;

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::geometry::eight::{EightGame, locate};
use kradan::reading::eight::read;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    opencv::core::set_num_threads(1).expect("one thread");
    for (name, game) in [("makhos", EightGame::Makhos), ("makruk", EightGame::Makruk)] {
        let image = eight_stills::full_hd(name);
        let board = locate(&image)
            .expect("locate")
            .board
            .expect("the bundled still has a board");
        let pieces = kradan::detect_eight::pieces_of(game);
        c.bench_function(&format!("{name} 1080p: locate the board"), |b| {
            b.iter(|| black_box(locate(black_box(&image)).expect("locate")))
        });
        c.bench_function(
            &format!("{name} 1080p: read 64 squares, board known"),
            |b| b.iter(|| black_box(read(black_box(&image), &board, pieces).expect("read"))),
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
