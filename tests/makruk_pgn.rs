//! Reading records: what the PGN reader tolerates, what it rejects with a place, what
//! replay reports, and that no input makes either reader panic.

/// Named `makruk` so `cargo test makruk` selects these tests.
mod makruk {

    use kradan::games::makruk::{Position, read_pgn, replay};
    use kradan::games::{Color, Penalty};
    use kradan::replay::Severity;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    const SAMPLE: &str = include_str!("../samples/makruk/short_game.pgn");

    #[test]
    fn reader_skips_comments_nags_variations_and_numbers() {
        let pgn = "[Event \"club\"]\n[Variant \"makruk\"]\n\n% escaped line\n\
                   1. e4 {opening} f5 $1 2. exf5 (2. Nd2 g5 (2... h5)) 2... h5 ; a rest-of-line comment\n\
                   3. fxg6=M?! 1-0\n";
        let game = read_pgn(pgn).unwrap();
        let moves: Vec<&str> = game.moves.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(moves, ["e4", "f5", "exf5", "h5", "fxg6=M?!"]);
        assert_eq!(game.termination.as_deref(), Some("1-0"));
        let report = replay(pgn).unwrap();
        assert!(!report.has_illegal_moves(), "{:?}", report.problems);
        assert_eq!(report.captured_by_white, 2);
        assert_eq!(report.captured_by_black, 0);
    }

    #[test]
    fn only_the_first_game_of_a_file_is_read() {
        let game = read_pgn("1. e4 f5 *\n\n[Event \"next\"]\n1. a4 *").unwrap();
        assert_eq!(game.moves.len(), 2);
    }

    #[test]
    fn malformed_text_is_an_error_with_its_line_and_column() {
        let error = read_pgn("[Event \"x\"]\n1. e4 {never closed\n").unwrap_err();
        assert_eq!((error.line, error.column), (2, 7));
        let error = read_pgn("[Event \"x]\n").unwrap_err();
        assert_eq!(error.line, 1);
        let error = read_pgn("1. e4 ) f5").unwrap_err();
        assert_eq!((error.line, error.column), (1, 7));
        let error = replay("[Variant \"makruk\"]\n[FEN \"rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNX w - - 0 1\"]\n1. e4")
            .unwrap_err();
        assert_eq!((error.line, error.column), (2, 49), "{error}");
        let error = replay("[Variant \"chess\"]\n1. e4").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(
            Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1").is_err(),
            "no Khun"
        );
    }

    #[test]
    fn an_illegal_move_stops_the_check_with_a_cited_problem() {
        let report = replay("1. e4 f5 2. e6 g5 3. e7 *").unwrap();
        assert!(report.has_illegal_moves());
        assert_eq!(report.problems.len(), 1);
        let problem = &report.problems[0];
        assert_eq!((problem.move_number, problem.mv.as_str()), (3, "e6"));
        assert_eq!(problem.severity, Severity::Illegal);
        assert_eq!(problem.rules[0].to_string(), "MAKRUK 4");
        assert_eq!(problem.penalties, [Penalty::Advisory]);
        assert!(
            problem.reason.contains("2 later move"),
            "{}",
            problem.reason
        );
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("checking stopped at move 3"))
        );
        assert_eq!(report.moves, 5);
    }

    #[test]
    fn replay_reports_checkmate_stalemate_and_the_final_position() {
        let mate =
            replay("[SetUp \"1\"]\n[FEN \"k7/8/1K6/8/8/8/8/7R w - - 0 1\"]\n1. Rh8# 1-0").unwrap();
        assert_eq!(
            mate.outcome.as_deref(),
            Some("white wins by checkmate (1-0)")
        );
        assert_eq!(mate.position[0], "B . . . . . . W");
        assert_eq!(mate.position[2], ". W . . . . . .");
        let stalemate = replay("[FEN \"k7/8/1K1M4/8/8/8/8/8 w - - 0 1\"]\n1. Mc7 1/2-1/2").unwrap();
        assert!(
            stalemate
                .outcome
                .as_deref()
                .unwrap_or("")
                .contains("stalemate")
        );
        let notice = &stalemate.problems[0];
        assert_eq!(
            (notice.severity, notice.rules[0].to_string()),
            (Severity::Notice, "MAKRUK 16".to_string())
        );
        assert_eq!(notice.penalties, [Penalty::DrawClaim]);
        let wrong_tag =
            replay("[Result \"0-1\"]\n[FEN \"k7/8/1K6/8/8/8/8/7R w - - 0 1\"]\n1. Rh8# 0-1")
                .unwrap();
        assert!(
            wrong_tag.notes.iter().any(|n| n.contains("disagrees")),
            "{:?}",
            wrong_tag.notes
        );
        assert!(
            mate.notes
                .iter()
                .any(|n| n == &format!("{} to move", Color::Black))
        );
    }

    #[test]
    fn the_sample_record_replays_cleanly() {
        let report = replay(SAMPLE).unwrap();
        assert!(!report.has_illegal_moves(), "{:?}", report.problems);
        assert!(report.outcome.is_some());
    }

    #[test]
    fn extreme_fen_numbers_do_not_overflow() {
        let report = replay(
            "[FEN \"8/8/3k4/8/8/8/3K4/R6R b - 4294967295 4294967295 4294967295\"]\n1... Ke6 2. Ra2 *",
        )
        .unwrap();
        assert!(!report.has_illegal_moves(), "{:?}", report.problems);
        let report = replay("[FEN \"rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR b - - 4294967295 4294967295\"]\n1... a5 2. a4 *")
            .unwrap();
        assert!(!report.has_illegal_moves(), "{:?}", report.problems);
    }

    /// Mangled records and FENs: truncations, byte flips, insertions of PGN's special
    /// characters, random bytes. Errors are fine; panics are not.
    #[test]
    fn no_input_makes_the_readers_panic() {
        let mut rng = SmallRng::seed_from_u64(0xfa22);
        let specials = b"[]{}()\";$%*.-/=+#x~0123456789KMSNRPkmsnrpabcdefgh \n\t\xc3\xa0";
        let fen_seed = "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - 128 9 12";
        for round in 0..3000 {
            let seed = if round % 2 == 0 { SAMPLE } else { fen_seed };
            let mut bytes = seed.as_bytes().to_vec();
            match round % 4 {
                0 => bytes.truncate(rng.random_range(0..=bytes.len())),
                1 => {
                    for _ in 0..rng.random_range(1..8) {
                        let at = rng.random_range(0..bytes.len());
                        bytes[at] = specials[rng.random_range(0..specials.len())];
                    }
                }
                2 => {
                    for _ in 0..rng.random_range(1..8) {
                        let at = rng.random_range(0..=bytes.len());
                        bytes.insert(at, specials[rng.random_range(0..specials.len())]);
                    }
                }
                _ => {
                    bytes = (0..rng.random_range(0..200))
                        .map(|_| rng.random())
                        .collect()
                }
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = replay(&text);
            let _ = Position::from_fen(&text);
            let _ = replay(&format!("[FEN \"{}\"]\n1. e4 *", text.replace('"', "")));
        }
    }
}
