//! Perft against Fairy-Stockfish: the same leaf counts, computed by both programs here.

mod common;
mod makruk_support;

/// Named `makruk` so `cargo test makruk` selects these tests.
mod makruk {
    use super::{common, makruk_support};

    use kradan::games::makruk::Position;
    use std::collections::BTreeMap;

    /// Start, middlegames, Bias about to be turned over (both colours, with captures), a
    /// near-mate, and endgames where the counting rules run.
    const POSITIONS: &[(&str, &str, u32)] = &[
        ("start", Position::START_FEN, 5),
        (
            "middlegame, open files",
            "r1s1k2r/3nm1s1/p1pp1npp/1p2pp2/4P3/PPPP1PPP/2N1MS2/R1SK2NR w - - 0 9",
            4,
        ),
        (
            "middlegame, Black to move with contact",
            "r2k1s1r/2m1n3/2np1p2/pp2ppPp/1PP1P3/P2P1S1P/3NM3/R1SK2NR b - - 0 14",
            4,
        ),
        (
            "Bias about to be turned over, with captures",
            "r3k3/8/1p1s4/2P1P2s/1p3p2/6S1/4P3/3K3R w - - 0 30",
            4,
        ),
        (
            "turned-over Bias and Mets crowding the Khuns",
            "4k3/2M1M3/8/1m1P4/p7/5mm1/8/3K3R b - - 0 40",
            4,
        ),
        (
            "near-mate with Khon and Met",
            "k7/2S5/1KM5/8/8/8/8/7r w - - 0 50",
            4,
        ),
        (
            "pieces' honour: two Rueas against a lone Khun",
            "8/8/3k4/8/8/8/3K4/R6R b - 16 8 60",
            4,
        ),
        (
            "board's honour: Ruea, Khon and Ma against Khon and Met",
            "8/3k4/2m1s3/8/R3S3/8/3K4/4N3 w - 128 6 61",
            4,
        ),
    ];

    fn ours_divide(position: &Position, depth: u32) -> BTreeMap<String, u64> {
        position
            .perft_divide(depth)
            .into_iter()
            .map(|(mv, count)| (mv.uci(), count))
            .collect()
    }

    #[test]
    fn perft_matches_fairy_stockfish() {
        let Some(program) = common::peer_program("fairy-stockfish") else {
            return;
        };
        for &(name, fen, depth) in POSITIONS {
            let position = Position::from_fen(fen).unwrap_or_else(|e| panic!("{name}: {e}"));
            let started = std::time::Instant::now();
            let ours = position.perft(depth);
            let elapsed = started.elapsed();
            let (theirs_divide, theirs) = makruk_support::perft_divide(&program, fen, depth);
            eprintln!("{name}: perft({depth}) = {ours} in {elapsed:?}");
            if ours != theirs {
                let ours_divide = ours_divide(&position, depth);
                let mut differences = Vec::new();
                for mv in ours_divide.keys().chain(theirs_divide.keys()) {
                    let (a, b) = (ours_divide.get(mv), theirs_divide.get(mv));
                    if a != b {
                        differences.push(format!("{mv}: ours {a:?}, fairy-stockfish {b:?}"));
                    }
                }
                differences.dedup();
                panic!(
                    "{name} ({fen}): perft({depth}) ours {ours}, fairy-stockfish {theirs}\n{}",
                    differences.join("\n")
                );
            }
        }
    }

    /// Deeper search on one position without a peer, so the count itself is pinned where
    /// Fairy-Stockfish is not installed (the number is the one Fairy-Stockfish 11.1 gives).
    #[test]
    fn start_perft_is_pinned() {
        assert_eq!(Position::start().perft(4), 273_026);
    }
}
