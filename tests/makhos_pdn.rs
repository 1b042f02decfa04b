//! Mak-hos PDN records: writing and reading, tolerance of what real files hold, clear
//! errors, no panic on any input, and replay against the rules (HOS, HOS-SCHOOL).

use kradan::games::makhos::{
    GAME_TYPE, GameResult, Men, PdnGame, Position, Square, WrittenMove, read_pdn, replay, write_pdn,
};
use kradan::games::{Color, Penalty};
use kradan::replay::{Report, Severity};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

fn square(number: u32) -> Square {
    Square::new(number).expect("square 1-32")
}

fn random_game(rng: &mut SmallRng, men: Men, first: Color, plies: usize) -> PdnGame {
    let start = Position::start(men, first);
    let mut game = PdnGame::new(start);
    let mut position = start;
    for _ in 0..plies {
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.random_range(0..moves.len())];
        game.moves.push(WrittenMove::from(&mv));
        position = position.play(&mv);
    }
    game
}

/// `(move number, rules, penalties)` of each problem, for compact assertions.
fn problems(report: &Report) -> Vec<(usize, String, Severity, String)> {
    report
        .problems
        .iter()
        .map(|p| {
            let rules: Vec<String> = p.rules.iter().map(ToString::to_string).collect();
            let penalties: Vec<String> = p.penalties.iter().map(ToString::to_string).collect();
            (
                p.move_number,
                rules.join(", "),
                p.severity,
                penalties.join(" + "),
            )
        })
        .collect()
}

fn sample(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/makhos")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn written_games_read_back_the_same() {
    let mut rng = SmallRng::seed_from_u64(99);
    for round in 0..200 {
        let men = if round % 2 == 0 {
            Men::Eight
        } else {
            Men::Twelve
        };
        let first = if round % 3 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let plies = rng.random_range(0..150);
        let mut game = random_game(&mut rng, men, first, plies);
        game.result = [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::Unknown,
        ][round % 4];
        game.tags[4].1 = "Somchai \"the wall\" \\ Jaidee".to_string();
        let text = write_pdn(&game);
        assert!(text.contains(&format!("[GameType \"{GAME_TYPE}\"]")));
        assert_eq!(
            text.contains("[FEN "),
            men == Men::Twelve || first == Color::Black,
            "{text}"
        );
        assert!(text.lines().all(|line| line.chars().count() < 80), "{text}");
        let read = read_pdn(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(read, [game]);
    }
}

#[test]
fn a_fen_setup_with_kings_round_trips() {
    let text = "[FEN \"W:W21,22,K30:B1,2,K3\"]\n1. 30-26 *";
    let game = read_pdn(text).expect("valid").remove(0);
    assert_eq!(game.start.turn(), Color::White);
    assert_eq!(game.start.count(Color::White), 3);
    assert_eq!(
        write_pdn(&game).lines().nth(1),
        Some("[GameType \"31,W,8,8,N1,0\"]")
    );
    // Squares are written in ascending order, kings marked with K.
    assert!(write_pdn(&game).contains("[FEN \"W:W21,22,K30:B1,2,K3\"]"));
    assert_eq!(read_pdn(&write_pdn(&game)).expect("own output"), [game]);
}

#[test]
fn the_reader_skips_comments_numbers_nags_variations_and_marks() {
    let text = "; a line comment\n\
        [Event \"Club night\"]\n\
        [GameType \"31\"]\n\
        {opening} 1. 8-11! 27-23 $1 2.11-15 (2. 5-9 {sideline (with parens)} 26-22 (2... 23-19)) \
        26-22?! 3... 3-8 {a comment with a ] bracket} 1/2-1/2";
    let games = read_pdn(text).expect("tolerant reader");
    assert_eq!(games.len(), 1);
    let moves: Vec<String> = games[0].moves.iter().map(ToString::to_string).collect();
    assert_eq!(moves, ["8-11", "27-23", "11-15", "26-22", "3-8"]);
    assert_eq!(games[0].result, GameResult::Draw);
    assert_eq!(games[0].tag("Event"), Some("Club night"));
}

#[test]
fn several_games_and_a_missing_result_are_read() {
    let text = "[Event \"one\"]\n1. 8-11 27-23\n[Event \"two\"]\n1. 5-9 0-1\n";
    let games = read_pdn(text).expect("two games");
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].result, GameResult::Unknown);
    assert_eq!(games[1].result, GameResult::BlackWins);
    assert_eq!(games[1].moves.len(), 1);
}

#[test]
fn the_fmjd_game_type_reads_with_black_first_and_the_same_squares() {
    let text = "[GameType \"31,B,8,8,N2,0\"]\n1. 27-23 8-11 *";
    let game = read_pdn(text).expect("FMJD GameType").remove(0);
    assert_eq!(game.start, Position::start(Men::Eight, Color::Black));
    assert_eq!(game.moves[0].squares, [square(27), square(23)]);
    assert!(replay(text).expect("replays").problems.is_empty());
}

#[test]
fn malformed_records_give_the_line_and_column() {
    let cases: [(&str, usize, usize, &str); 9] = [
        ("1. 6-10 33-29", 1, 9, "square 33"),
        ("1. 6-10 {never closed", 1, 9, "never closed"),
        ("1. 6-10 (27-23", 1, 9, "never closed"),
        ("1. 6-10 27-23)", 1, 14, "closes no variation"),
        ("[Event \"x]\n1. 6-10", 1, 1, "never closed"),
        ("[GameType \"20\"]", 1, 12, "not Thai draughts"),
        (
            "[GameType \"31,W,10,10,N2,0\"]",
            1,
            12,
            "not a Mak-hos board",
        ),
        ("\n[FEN \"W:W1,1:B9\"]", 2, 9, "two pieces"),
        ("1. 6-10\n2. hello", 2, 4, "expected a move"),
    ];
    for (text, line, column, message) in cases {
        let error = read_pdn(text).expect_err(text);
        assert_eq!(
            (error.line, error.column),
            (line, column),
            "{text}: {error}"
        );
        assert!(error.message.contains(message), "{text}: {error}");
    }
    assert!(read_pdn("  { only a comment }  ").is_err());
}

#[test]
fn no_input_makes_the_reader_or_replay_panic() {
    // Bytes that mean something to the reader, so mutations reach deep into it.
    const ALPHABET: &[u8] = b"{}()[]\";:-x0123456789 KWB.$*!?\n";
    let seeds = [sample("annotated.pdn"), sample("irregular.pdn")];
    let mut rng = SmallRng::seed_from_u64(5);
    for text in &seeds {
        for cut in 0..text.len() {
            if text.is_char_boundary(cut) {
                let _ = replay(&text[..cut]);
            }
        }
        for _ in 0..3000 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..bytes.len());
                match rng.random_range(0..3) {
                    0 => bytes[at] = ALPHABET[rng.random_range(0..ALPHABET.len())],
                    1 => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, rng.random()),
                }
            }
            let mangled = String::from_utf8_lossy(&bytes);
            let _ = read_pdn(&mangled);
            let _ = replay(&mangled);
        }
    }
    for _ in 0..2000 {
        let len = rng.random_range(0..200);
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let _ = replay(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn a_clean_game_replays_without_problems() {
    let report = replay(&sample("annotated.pdn")).expect("sample reads");
    assert_eq!(report.moves, 82);
    // The only remark is the draw count the kings' chase reached (HOS 5.4).
    assert_eq!(
        problems(&report),
        [(
            79,
            "HOS 5.4".to_string(),
            Severity::Notice,
            "draw-claim".to_string()
        )]
    );
    assert_eq!(report.captured_by_black, 8);
    assert_eq!(report.captured_by_white, 7);
    assert_eq!(
        report.outcome.as_deref(),
        Some("black wins: white has no pieces left (HOS 4.1)")
    );
    assert!(report.notes.iter().any(|n| n == "result tag: 0-1"));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n == "kings: white none; black 9")
    );
}

#[test]
fn the_irregular_sample_is_flagged_move_by_move() {
    let report = replay(&sample("irregular.pdn")).expect("sample reads");
    let advisory = "HOS 2.4, HOS-SCHOOL 3.5.2".to_string();
    assert_eq!(
        problems(&report),
        [
            (
                4,
                advisory.clone(),
                Severity::Notice,
                "advisory".to_string()
            ),
            (
                6,
                "HOS 3.2, HOS-SCHOOL 3.4.3".to_string(),
                Severity::Illegal,
                "loss".to_string()
            ),
            (7, advisory, Severity::Notice, "advisory".to_string()),
            (
                8,
                "HOS 3.4, HOS-SCHOOL 3.4.2".to_string(),
                Severity::Illegal,
                "warning".to_string()
            ),
        ]
    );
    assert!(report.has_illegal_moves());
    // After Black's double move it is still White's turn; White's capture is legal.
    assert_eq!(report.captured_by_white, 1);
    assert!(report.notes.iter().any(|n| n == "side to move: black"));
}

#[test]
fn hos_3_2_an_illegal_move_is_played_as_written_and_the_game_goes_on() {
    // White's man goes from 10 to 19 in one move (skipping a square); Black then takes it.
    let report = replay("1. 6-10 27-23 2. 10-19 23x16 *").expect("reads");
    assert_eq!(
        problems(&report),
        [(
            3,
            "HOS 3.2, HOS-SCHOOL 3.4.3".to_string(),
            Severity::Illegal,
            "loss".to_string()
        )]
    );
    assert!(report.problems[0].reason.contains("more than one square"));
    assert_eq!(report.position[4], ". B . . . . . .");
    assert_eq!(report.captured_by_black, 1);
}

#[test]
fn a_move_the_board_cannot_make_is_reported_and_skipped() {
    let report = replay("1. 13-17 27-23 *").expect("reads");
    assert_eq!(report.problems.len(), 1);
    assert_eq!(report.problems[0].severity, Severity::Illegal);
    assert!(report.problems[0].reason.contains("square 13 is empty"));
    // Black's reply is still checked as Black's.
    assert_eq!(report.position[2], ". . . B . . . .");
}

#[test]
fn hos_2_4_replay_notes_a_missed_capture_and_plays_on() {
    let report = replay("[FEN \"W:W1,14:B18,32\"]\n1. 1-5 18x9 *").expect("reads");
    assert_eq!(
        problems(&report),
        [(
            1,
            "HOS 2.4, HOS-SCHOOL 3.5.2".to_string(),
            Severity::Notice,
            "advisory".to_string()
        )]
    );
    assert_eq!(report.captured_by_black, 1);
}

#[test]
fn hos_2_2_an_abbreviated_capture_is_found_by_its_ends() {
    let report = replay("[FEN \"W:W10:B15,23,32\"]\n1. 10x26 *").expect("reads");
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.captured_by_white, 2);
}

#[test]
fn hos_3_4_a_record_where_one_side_moves_twice_is_a_warning() {
    let report = replay("1. 6-10 10-14 2. 27-23 *").expect("reads");
    assert_eq!(
        problems(&report),
        [(
            2,
            "HOS 3.4, HOS-SCHOOL 3.4.2".to_string(),
            Severity::Illegal,
            "warning".to_string()
        )]
    );
    assert_eq!(report.problems[0].penalties, [Penalty::Warning]);
    // Black's 27-23 is then Black's legal move, and White is to move.
    assert!(report.notes.iter().any(|n| n == "side to move: white"));
}

/// Kings on 1 and 32 shuttle without ever being able to capture each other.
fn shuttle(plies: usize) -> String {
    let cycle = ["1-5", "32-28", "5-1", "28-32"];
    let moves: Vec<&str> = (0..plies).map(|i| cycle[i % 4]).collect();
    format!("[FEN \"W:WK1:BK32\"]\n{} *", moves.join(" "))
}

#[test]
fn hos_5_2_the_same_position_three_times_is_a_draw_claim() {
    let report = replay(&shuttle(8)).expect("reads");
    assert_eq!(
        problems(&report),
        [(
            8,
            "HOS 5.2".to_string(),
            Severity::Notice,
            "draw-claim".to_string()
        )]
    );
}

#[test]
fn hos_5_3_and_5_4_sixteen_moves_without_a_man_move_or_capture() {
    let report = replay(&shuttle(32)).expect("reads");
    let counts: Vec<_> = problems(&report)
        .into_iter()
        .filter(|(_, rules, _, _)| rules != "HOS 5.2")
        .collect();
    assert_eq!(
        counts,
        [
            (
                16,
                "HOS 5.4".to_string(),
                Severity::Notice,
                "draw-claim".to_string()
            ),
            (
                32,
                "HOS 5.3, HOS-SCHOOL 3.8.3".to_string(),
                Severity::Notice,
                "draw-claim".to_string()
            ),
        ]
    );
    // A man's move starts the count again.
    let reset = replay("[FEN \"W:WK1,12:BK32\"]\n1. 1-5 32-28 2. 12-16 28-32 *").expect("reads");
    assert!(
        reset
            .notes
            .iter()
            .any(|n| n.starts_with("moves without a man move or capture: 1 "))
    );
}

#[test]
fn hos_4_a_side_without_pieces_or_moves_loses() {
    let taken = replay("[FEN \"W:W14:B18\"]\n1. 14x23 *").expect("reads");
    assert_eq!(
        taken.outcome.as_deref(),
        Some("white wins: black has no pieces left (HOS 4.1)")
    );
    // Black's man on 5 is blocked by White's man on 1 and the board's edge.
    let blocked = replay("[FEN \"W:W1,14:B5\"]\n1. 14-18 *").expect("reads");
    assert_eq!(
        blocked.outcome.as_deref(),
        Some("white wins: black has no move left (HOS 4.2)")
    );
    let recorded = replay("1. 8-11 27-23 1/2-1/2").expect("reads");
    assert_eq!(
        recorded.outcome.as_deref(),
        Some("draw (1/2-1/2, as recorded)")
    );
}
