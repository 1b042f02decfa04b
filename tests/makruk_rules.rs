//! Piece moves, game ends and the counting rules, one rule per test, with its article.

/// Named `makruk` so `cargo test makruk` selects these tests.
mod makruk {

    use kradan::games::makruk::counting::{self, CountKind};
    use kradan::games::makruk::{Position, Role, Square, Status, parse_san, replay, to_san};
    use kradan::games::{Color, Penalty};
    use kradan::replay::Severity;

    fn position(fen: &str) -> Position {
        Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    fn targets(fen: &str, from: &str) -> Vec<String> {
        let from = Square::parse(from).expect("a square name");
        let mut names: Vec<String> = position(fen)
            .legal_moves_from(from)
            .iter()
            .map(|mv| mv.to.to_string())
            .collect();
        names.sort();
        names
    }

    fn play(position: &mut Position, san: &str) {
        let mv = parse_san(position, san).unwrap_or_else(|e| panic!("{san}: {e}"));
        position.play(&mv);
    }

    #[test]
    fn khun_steps_one_square_any_way() {
        assert_eq!(
            targets("8/8/8/8/4K3/8/8/k7 w - - 0 1", "e4"),
            ["d3", "d4", "d5", "e3", "e5", "f3", "f4", "f5"]
        );
    }

    #[test]
    fn met_steps_one_square_diagonally() {
        assert_eq!(
            targets("7k/8/8/8/4M3/8/8/K7 w - - 0 1", "e4"),
            ["d3", "d5", "f3", "f5"]
        );
    }

    #[test]
    fn khon_steps_diagonally_or_straight_forward_for_its_side() {
        assert_eq!(
            targets("7k/8/8/8/4S3/8/8/K7 w - - 0 1", "e4"),
            ["d3", "d5", "e5", "f3", "f5"]
        );
        assert_eq!(
            targets("7k/8/8/8/4s3/8/8/K7 b - - 0 1", "e4"),
            ["d3", "d5", "e3", "f3", "f5"]
        );
    }

    #[test]
    fn ma_jumps_like_a_knight_over_pieces() {
        assert_eq!(
            targets("7k/8/8/3ppp2/3pNp2/3ppp2/8/K7 w - - 0 1", "e4"),
            ["c3", "c5", "d2", "d6", "f2", "f6", "g3", "g5"]
        );
    }

    #[test]
    fn ruea_slides_until_blocked_and_may_capture_the_blocker() {
        assert_eq!(
            targets("7k/4p3/8/8/1P2R3/8/8/K7 w - - 0 1", "e4"),
            [
                "c4", "d4", "e1", "e2", "e3", "e5", "e6", "e7", "f4", "g4", "h4"
            ]
        );
    }

    #[test]
    fn bia_pushes_one_square_and_captures_diagonally_forward() {
        // No double step from the Bias' starting rank.
        assert_eq!(targets(Position::START_FEN, "e3"), ["e4"]);
        assert_eq!(
            targets("7k/8/8/3pnp2/4P3/8/8/K7 w - - 0 1", "e4"),
            ["d5", "f5"]
        );
        assert_eq!(
            targets("7k/8/8/8/4p3/3P1P2/8/K7 b - - 0 1", "e4"),
            ["d3", "e3", "f3"]
        );
    }

    #[test]
    fn bia_is_turned_over_into_a_met_on_the_sixth_rank() {
        let mut white = position("7k/8/8/4P3/8/8/8/K7 w - - 0 1");
        let mv = parse_san(&white, "e6").expect("the push is legal");
        assert!(mv.promotion);
        assert_eq!(to_san(&white, &mv), "e6=M");
        assert_eq!(mv.uci(), "e5e6m");
        white.play(&mv);
        let piece = white
            .board()
            .piece_at(Square::parse("e6").unwrap())
            .unwrap();
        assert_eq!(piece.role, Role::Met);
        // Black turns over on its own sixth rank, the third from White's side.
        let black = position("7k/8/8/8/3p4/8/8/K7 b - - 0 1");
        assert_eq!(to_san(&black, &parse_san(&black, "d3").unwrap()), "d3=M");
    }

    #[test]
    fn a_move_that_leaves_the_khun_in_check_is_not_legal() {
        // The Khon on e2 is pinned by the Ruea on e8.
        let pinned = "4r2k/8/8/8/8/8/4S3/4K3 w - - 0 1";
        assert_eq!(targets(pinned, "e2"), ["e3"]);
        let p = position(pinned);
        let sideways = kradan::games::makruk::Move {
            from: Square::parse("e2").unwrap(),
            to: Square::parse("d3").unwrap(),
            role: Role::Khon,
            capture: None,
            promotion: false,
        };
        assert!(!p.is_legal(&sideways));
        assert!(p.is_legal(&kradan::games::makruk::Move {
            to: Square::parse("e3").unwrap(),
            ..sideways
        }));
    }

    #[test]
    fn checkmate_and_stalemate_mandate_article_16() {
        assert_eq!(
            position("k6R/8/1K6/8/8/8/8/8 b - - 0 1").status(),
            Status::Checkmate
        );
        // MAKRUK 16: หมากอับ, no legal move and not in check, is a draw.
        assert_eq!(
            position("k7/2M5/1K6/8/8/8/8/8 b - - 0 1").status(),
            Status::Stalemate
        );
        assert_eq!(Position::start().status(), Status::Ongoing);
    }

    #[test]
    fn san_marks_check_and_mate() {
        let p = position("k7/8/1K6/8/8/8/8/7R w - - 0 1");
        assert_eq!(to_san(&p, &parse_san(&p, "Rh8").unwrap()), "Rh8#");
        assert_eq!(to_san(&p, &parse_san(&p, "Rh7").unwrap()), "Rh7");
        assert_eq!(to_san(&p, &parse_san(&p, "Ra1").unwrap()), "Ra1+");
    }

    #[test]
    fn san_disambiguates_by_file_then_rank() {
        let p = position("4k3/8/8/8/8/8/R6R/K7 w - - 0 1");
        assert_eq!(to_san(&p, &parse_san(&p, "Rad2").unwrap()), "Rad2");
        let p = position("4k3/8/R7/8/8/8/R7/1K6 w - - 0 1");
        assert_eq!(to_san(&p, &parse_san(&p, "R2a5").unwrap()), "R2a5");
        assert!(parse_san(&p, "Ra5").is_err(), "two Rueas reach a5");
    }

    #[test]
    fn threefold_repetition_is_a_draw_claim_under_article_16() {
        let report = replay("1. Nd2 Nd7 2. Nb1 Nb8 3. Nd2 Nd7 4. Nb1 Nb8 *").unwrap();
        let repetition: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.reason.contains("three times"))
            .collect();
        assert_eq!(repetition.len(), 1, "{:?}", report.problems);
        assert_eq!(repetition[0].move_number, 8);
        assert_eq!(repetition[0].rules[0].to_string(), "MAKRUK 16");
        assert_eq!(repetition[0].penalties, [Penalty::DrawClaim]);
    }

    #[test]
    fn insufficient_material_follows_the_sets_of_article_15() {
        let insufficient = |fen: &str| counting::insufficient_material(position(fen).board());
        assert!(insufficient("8/8/3k4/8/8/8/3K4/8 w - - 0 1"));
        assert!(insufficient("8/8/3k4/8/8/8/3K4/M7 w - - 0 1"));
        assert!(insufficient("8/8/3k4/8/8/8/3K4/N7 w - - 0 1"));
        assert!(insufficient("8/8/3k4/8/8/8/3K4/MM6 w - - 0 1"));
        // MAKRUK 15: Ruea; Khon and Met; Ma and Met; three turned-over Bias.
        assert!(!insufficient("8/8/3k4/8/8/8/3K4/R7 w - - 0 1"));
        assert!(!insufficient("8/8/3k4/8/8/8/3K4/SM6 w - - 0 1"));
        assert!(!insufficient("8/8/3k4/8/8/8/3K4/NM6 w - - 0 1"));
        assert!(!insufficient("8/8/3k4/8/8/8/3K4/MMM5 w - - 0 1"));
        // An unturned Bia may still become the Met that completes a set.
        assert!(!insufficient("8/8/3k4/8/8/P7/3K4/N7 w - - 0 1"));
    }

    /// The count after one move from `fen`: a FEN without counting fields has no count
    /// running, and one the material allows starts with the next move.
    fn count_after(fen: &str, san: &str) -> Option<kradan::games::makruk::Count> {
        let mut p = position(fen);
        play(&mut p, san);
        p.count()
    }

    #[test]
    fn article_8_no_count_while_an_unturned_bia_stands() {
        assert_eq!(count_after("8/8/3k4/8/8/P7/3K4/R7 w - - 0 1", "Ra2"), None);
    }

    #[test]
    fn article_8_the_weaker_side_counts_the_boards_honour_to_64() {
        // Ruea 3 against Khon 1.5 + Met 1: Black is weaker whatever the placement.
        let count = count_after("8/3k4/2m1s3/8/8/8/3K4/R7 w - - 0 1", "Ra2").unwrap();
        assert_eq!(count.kind, CountKind::BoardHonour);
        assert_eq!(count.counter, Color::Black);
        assert_eq!(count.limit, 64);
    }

    #[test]
    fn article_8_no_side_counts_when_material_is_equal() {
        assert_eq!(count_after("8/3k4/7r/8/8/8/3K4/R7 w - - 0 1", "Ra2"), None);
    }

    #[test]
    fn article_8_only_the_counting_sides_moves_are_counted() {
        let mut p = position("8/3k4/2m1s3/8/8/8/3K4/R7 w - - 0 1");
        play(&mut p, "Ra2");
        assert_eq!(p.count().unwrap().reached, 0);
        play(&mut p, "Ke7");
        assert_eq!(p.count().unwrap().reached, 1);
        play(&mut p, "Ra1");
        play(&mut p, "Kd7");
        assert_eq!(p.count().unwrap().reached, 2);
    }

    #[test]
    fn article_9_pieces_honour_starts_from_pieces_on_the_board_plus_one() {
        // Two Rueas against a lone Khun: four pieces, so the first counted move calls 5, and
        // the limit for two Rueas is 8.
        let mut p = position("8/8/3k4/8/8/8/3K4/R6R w - - 0 1");
        play(&mut p, "Rhg1");
        let count = p.count().unwrap();
        assert_eq!(
            (count.kind, count.counter, count.limit, count.reached),
            (CountKind::PiecesHonour, Color::Black, 8, 4)
        );
        play(&mut p, "Ke6");
        assert_eq!(p.count().unwrap().reached, 5);
    }

    #[test]
    fn article_9_pieces_honour_limits_follow_the_stronger_sides_pieces() {
        let limit = |fen: &str| counting::pieces_honour_limit(position(fen).board(), Color::White);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/RR6 b - - 0 1"), 8);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/RN6 b - - 0 1"), 16);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/SS6 b - - 0 1"), 22);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/SN6 b - - 0 1"), 44);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/NN6 b - - 0 1"), 32);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/NM6 b - - 0 1"), 64);
        assert_eq!(limit("8/8/3k4/8/8/8/3K4/MM6 b - - 0 1"), 64);
    }

    #[test]
    fn article_10_the_pieces_honour_limit_stays_when_the_lone_khun_captures() {
        // MAKRUK 10's example: White Khun and two Rueas against Khun and Ruea, the board's
        // honour running; the Rueas are exchanged on d5 and the Khun takes back.
        let mut p = position("8/8/3k4/3r4/8/8/8/R2RK3 w - 128 10 1");
        assert_eq!(p.count().unwrap().kind, CountKind::BoardHonour);
        play(&mut p, "Rxd5+");
        let count = p.count().unwrap();
        assert_eq!(
            (count.kind, count.limit, count.reached),
            (CountKind::PiecesHonour, 8, 4)
        );
        play(&mut p, "Kxd5");
        let count = p.count().unwrap();
        assert_eq!(
            (count.kind, count.limit, count.reached),
            (CountKind::PiecesHonour, 8, 5),
            "not 16"
        );
    }

    #[test]
    fn articles_7_to_10_reaching_the_limit_is_a_draw_claim() {
        let pgn = "[Variant \"makruk\"]\n[SetUp \"1\"]\n[FEN \"8/8/3k4/8/8/8/3K4/R6R b - 16 8 1\"]\n\n\
                   1... Ke6 2. Ra2 Kd6 3. Rb1 Ke6 4. Rb3 Kd6 *";
        let report = replay(pgn).unwrap();
        let draws: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.reason.contains("counted"))
            .collect();
        assert_eq!(draws.len(), 1, "{:?}", report.problems);
        assert_eq!(
            draws[0].move_number, 7,
            "the record's seventh move, Black's fourth"
        );
        assert_eq!(draws[0].severity, Severity::Notice);
        assert_eq!(draws[0].penalties, [Penalty::DrawClaim]);
        assert!(draws[0].rules.iter().any(|r| r.to_string() == "MAKRUK 10"));
        assert!(!report.has_illegal_moves());
    }

    #[test]
    fn a_count_stops_when_the_counting_side_is_no_longer_weaker() {
        // Black (Met) counts against Ruea; taking the Ruea leaves Black stronger: no count.
        let mut p = position("8/8/3k4/8/8/3m4/2RK4/8 b - 128 3 1");
        assert_eq!(p.count().unwrap().counter, Color::Black);
        play(&mut p, "Mxc2");
        assert_eq!(
            p.count().unwrap().counter,
            Color::White,
            "White now has the lone Khun"
        );
        assert_eq!(p.count().unwrap().kind, CountKind::PiecesHonour);
    }
}
