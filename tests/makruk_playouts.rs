//! Random legal games (seeded) through explain, SAN, PGN and FEN, and the FEN of every
//! sampled position compared with what Fairy-Stockfish prints for the same moves.

mod common;
mod makruk_support;

/// Named `makruk` so `cargo test makruk` selects these tests.
mod makruk {
    use super::{common, makruk_support};

    use kradan::games::makruk::{
        Move, Position, Status, explain, parse_san, read_pgn, replay, to_san, write_pgn,
    };
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A random legal game from `start`, stopping at mate, stalemate or `max_plies`.
    fn playout(rng: &mut SmallRng, start: &Position, max_plies: usize) -> Vec<Move> {
        let mut position = start.clone();
        let mut moves = Vec::new();
        while moves.len() < max_plies {
            let legal = position.legal_moves();
            if legal.is_empty() {
                break;
            }
            // Captures first half the time, so games reach the counting endgames.
            let captures: Vec<Move> = legal
                .iter()
                .filter(|mv| mv.capture.is_some())
                .copied()
                .collect();
            let mv = if !captures.is_empty() && rng.random_bool(0.5) {
                captures[rng.random_range(0..captures.len())]
            } else {
                legal[rng.random_range(0..legal.len())]
            };
            position.play(&mv);
            moves.push(mv);
        }
        moves
    }

    #[test]
    fn explain_finds_exactly_the_move_played() {
        let mut rng = SmallRng::seed_from_u64(0x6d61_6b72_756b);
        let mut checked = 0;
        let mut captures = 0;
        let mut promotions = 0;
        for _ in 0..60 {
            let moves = playout(&mut rng, &Position::start(), 200);
            let mut position = Position::start();
            for mv in moves {
                let after = position.after(&mv);
                let explanations = explain(&position, &after.occupancy());
                // A Makruk move touches two squares and has one promotion choice, so the true
                // move is the only explanation, capture or not.
                assert_eq!(
                    explanations,
                    [mv],
                    "{} then {}",
                    position.to_fen(),
                    mv.uci()
                );
                checked += 1;
                captures += usize::from(mv.capture.is_some());
                promotions += usize::from(mv.promotion);
                position = after;
            }
        }
        assert!(
            checked > 5000 && captures > 500 && promotions > 50,
            "{checked} {captures} {promotions}"
        );
    }

    #[test]
    fn explain_rejects_changes_no_legal_move_makes() {
        let start = Position::start();
        assert!(
            explain(&start, &start.occupancy()).is_empty(),
            "nothing moved"
        );
        let mut two_moves = start.occupancy();
        for (row, col, value) in [
            (5, 4, None),
            (4, 4, Some(kradan::games::Color::White)),
            (5, 3, None),
            (4, 3, Some(kradan::games::Color::White)),
        ] {
            two_moves.set(row, col, value);
        }
        assert!(explain(&start, &two_moves).is_empty(), "two pawns pushed");
        let mut wrong_side = start.occupancy();
        wrong_side.set(2, 4, None);
        wrong_side.set(3, 4, Some(kradan::games::Color::Black));
        assert!(
            explain(&start, &wrong_side).is_empty(),
            "Black moved on White's turn"
        );
        let mut pawn_two = start.occupancy();
        pawn_two.set(5, 4, None);
        pawn_two.set(3, 4, Some(kradan::games::Color::White));
        assert!(explain(&start, &pawn_two).is_empty(), "no double step");
        assert!(explain(&start, &kradan::games::Occupancy::empty(9, 9)).is_empty());
    }

    #[test]
    fn san_and_pgn_round_trip_through_replay() {
        let mut rng = SmallRng::seed_from_u64(7);
        for game in 0..40 {
            let start = if game % 4 == 3 {
                // A set-up start, so SetUp/FEN tags are written and read back.
                let mut p = Position::start();
                for mv in playout(&mut rng, &Position::start(), 21) {
                    p.play(&mv);
                }
                p
            } else {
                Position::start()
            };
            let moves = playout(&mut rng, &start, 160);
            let mut position = start.clone();
            for mv in &moves {
                let san = to_san(&position, mv);
                assert_eq!(
                    parse_san(&position, &san),
                    Ok(*mv),
                    "{san} in {}",
                    position.to_fen()
                );
                position.play(mv);
            }
            let pgn = write_pgn(
                &[("Event", "round trip"), ("White", "a"), ("Black", "b")],
                &start,
                &moves,
                "*",
            );
            let record = read_pgn(&pgn).unwrap();
            assert_eq!(record.moves.len(), moves.len());
            assert_eq!(record.tag("Variant"), Some("makruk"));
            assert_eq!(record.start_position(&pgn).unwrap(), start);
            let report = replay(&pgn).unwrap();
            assert!(!report.has_illegal_moves(), "{pgn}\n{:?}", report.problems);
            assert_eq!(report.position, position.occupancy().to_text_rows());
            assert!(
                report
                    .notes
                    .contains(&format!("FEN: {}", position.to_fen())),
                "{:?}",
                report.notes
            );
            if position.status() == Status::Checkmate {
                assert!(
                    report
                        .outcome
                        .as_deref()
                        .unwrap_or("")
                        .contains("checkmate")
                );
            }
        }
    }

    #[test]
    fn fen_matches_fairy_stockfish_along_random_games() {
        let Some(program) = common::peer_program("fairy-stockfish") else {
            return;
        };
        let mut rng = SmallRng::seed_from_u64(11);
        let mut compared = 0;
        for _ in 0..12 {
            let moves = playout(&mut rng, &Position::start(), 120);
            let mut position = Position::start();
            let mut commands = Vec::new();
            let mut ours = Vec::new();
            let mut uci = Vec::new();
            for mv in &moves {
                position.play(mv);
                uci.push(mv.uci());
                // Fairy-Stockfish runs its own counting, which differs from MAKRUK 7–14 (see
                // docs/makruk.md), so the comparison covers positions where no count can run.
                if position
                    .board()
                    .pieces()
                    .any(|(_, p)| p.role == kradan::games::makruk::Role::Bia)
                {
                    commands.push(format!(
                        "position fen {} moves {}",
                        Position::START_FEN,
                        uci.join(" ")
                    ));
                    commands.push("d".to_string());
                    ours.push(position.to_fen());
                }
            }
            let output = makruk_support::uci_session(&program, &commands);
            let theirs: Vec<&str> = output
                .lines()
                .filter_map(|l| l.strip_prefix("Fen: "))
                .map(str::trim)
                .collect();
            assert_eq!(theirs.len(), ours.len());
            for (ours, theirs) in ours.iter().zip(&theirs) {
                assert_eq!(ours, theirs);
                assert_eq!(
                    &Position::from_fen(theirs).unwrap().to_fen(),
                    theirs,
                    "round trip"
                );
            }
            compared += ours.len();
        }
        assert!(compared > 500, "{compared}");
    }

    #[test]
    fn fen_with_counting_fields_round_trips_as_fairy_stockfish_prints_it() {
        let Some(program) = common::peer_program("fairy-stockfish") else {
            return;
        };
        // A Bia takes the last black piece but the Khun, turning over: the pieces' honour
        // count starts (one Ruea: limit 16; four pieces on the board: it calls 5 first).
        let start = "4k3/8/1p6/2P5/8/8/8/3K3R w - - 0 1";
        let mut ours = Position::from_fen(start).unwrap();
        let mut played = Vec::new();
        for san in ["cxb6", "Ke7", "Rh7+", "Kd6"] {
            let mv = parse_san(&ours, san).unwrap();
            ours.play(&mv);
            played.push(mv.uci());
            let theirs = makruk_support::fen_after(&program, start, &played);
            assert_eq!(ours.to_fen(), theirs, "after {san}");
            assert_eq!(
                Position::from_fen(&theirs).unwrap().count(),
                ours.count(),
                "after {san}"
            );
        }
        // The board's honour count, as Fairy-Stockfish starts it after the weaker side moves.
        // MAKRUK 10: the Rueas are exchanged and the lone Khun takes back; the limit stays.
        let start = "8/8/3k4/3r4/8/8/8/R2RK3 w - - 0 1";
        let mut ours = Position::from_fen(start).unwrap();
        let mut played = Vec::new();
        for san in ["Rxd5+", "Kxd5", "Ra5+"] {
            let mv = parse_san(&ours, san).unwrap();
            ours.play(&mv);
            played.push(mv.uci());
            assert_eq!(
                ours.to_fen(),
                makruk_support::fen_after(&program, start, &played),
                "after {san}"
            );
        }
        // and then both sides' moves, the counting side's and the other's.
        let start = "4k3/7r/8/8/8/8/2M~5/3K3R b - - 0 1";
        let mut ours = Position::from_fen(start).unwrap();
        let mut played = Vec::new();
        for san in ["Rh6", "Kd2", "Rh7", "Ke2", "Kf8"] {
            let mv = parse_san(&ours, san).unwrap();
            ours.play(&mv);
            played.push(mv.uci());
            let theirs = makruk_support::fen_after(&program, start, &played);
            assert_eq!(ours.to_fen(), theirs, "after {san}");
            assert_eq!(Position::from_fen(&theirs).unwrap().to_fen(), theirs);
            assert_eq!(
                Position::from_fen(&theirs).unwrap().count(),
                ours.count(),
                "after {san}"
            );
        }
    }
}
