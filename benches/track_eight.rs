//! The 8×8 tracker's cost per analysed frame at 1920×1080, on one core, once the board is
//! locked: rectify, the motion and cover samples, the lattice's fit, the 64 squares read
//! and the vote (`track::eight::EightTracker::analyse`, what `kradan record --game
//! makhos|makruk` does ten times a second of footage).
//!
//! The frames are the bundled rendered stills of each game (1280×720) scaled to 1080p,
//! shown to the tracker again and again as a still board.

#[path = "common/eight_stills.rs"]
mod eight_stills;

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::geometry::eight::EightGame;
use kradan::track::TrackerOptions;
use kradan::track::eight::EightTracker;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    opencv::core::set_num_threads(1).expect("one thread");
    for (name, game) in [("makhos", EightGame::Makhos), ("makruk", EightGame::Makruk)] {
        let image = eight_stills::full_hd(name);
        let mut tracker = EightTracker::new(game, TrackerOptions::default());
        let mut index = 0u64;
        // Locked and settled before the measurement.
        for _ in 0..5 {
            tracker
                .analyse(&image, index as f64 * 0.1, index)
                .expect("analyses");
            index += 1;
        }
        assert!(
            tracker.geometry().is_some(),
            "the bundled still has a board"
        );
        c.bench_function(
            &format!("{name} 1080p: track one frame, board locked"),
            |b| {
                b.iter(|| {
                    index += 1;
                    black_box(
                        tracker
                            .analyse(black_box(&image), index as f64 * 0.1, index)
                            .expect("analyses"),
                    )
                })
            },
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
