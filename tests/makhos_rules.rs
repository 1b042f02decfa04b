//! Mak-hos rules (HOS, HOS-SCHOOL of `../shared/RULES.md`): moves, captures, promotion,
//! the recorder's explanation of camera changes and its classification of irregularities.

use kradan::games::makhos::{
    Explanation, Flag, Kind, Men, Move, Observation, Piece, Position, Square, Verdict, Violation,
    classify, explain, judge, read_pdn,
};
use kradan::games::{Color, Occupancy};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A position from a PDN FEN such as `W:WK20:B8,15,16`.
fn position(fen: &str) -> Position {
    read_pdn(&format!("[FEN \"{fen}\"] *")).expect("test FEN")[0].start
}

fn square(number: u32) -> Square {
    Square::new(number).expect("square 1-32")
}

fn moves_text(moves: &[Move]) -> Vec<String> {
    let mut texts: Vec<String> = moves.iter().map(ToString::to_string).collect();
    texts.sort();
    texts
}

fn observe(rows: &[&str]) -> Observation {
    Observation::from_occupancy(&Occupancy::from_text_rows(rows).expect("grid")).expect("8x8")
}

fn irregular(before: &Position, after: &Observation) -> Vec<Violation> {
    match judge(before, after) {
        Verdict::Irregular(violations) => violations,
        Verdict::Explained(found) => panic!("expected an irregularity, got {found:?}"),
    }
}

/// The observation after moving one piece from `from` to `to` with nothing else changing.
fn relocated(before: &Position, from: u32, to: u32) -> Observation {
    let mut after = *before;
    let piece = after.piece_at(square(from));
    after.set(square(from), None);
    after.set(square(to), piece);
    Observation::of(&after)
}

#[test]
fn square_numbers_sit_where_the_documentation_draws_them() {
    let mut grid = vec![vec![0u32; 8]; 8];
    for square in Square::all() {
        let (row, col) = square.row_col();
        grid[row][col] = square.number();
    }
    assert_eq!(grid[0], [0, 32, 0, 31, 0, 30, 0, 29]);
    assert_eq!(grid[1], [28, 0, 27, 0, 26, 0, 25, 0]);
    assert_eq!(grid[6], [0, 8, 0, 7, 0, 6, 0, 5]);
    assert_eq!(grid[7], [4, 0, 3, 0, 2, 0, 1, 0]);
    assert_eq!(Square::at(7, 0), Some(square(4)));
    assert_eq!(Square::at(7, 1), None);
}

#[test]
fn hos_1_2_1_men_step_one_square_diagonally_forward() {
    let start = Position::start(Men::Eight, Color::White);
    assert_eq!(
        moves_text(&start.legal_moves()),
        ["5-9", "6-10", "6-9", "7-10", "7-11", "8-11", "8-12"]
    );
    let black_first = Position::start(Men::Eight, Color::Black);
    assert_eq!(
        moves_text(&black_first.legal_moves()),
        [
            "25-21", "25-22", "26-22", "26-23", "27-23", "27-24", "28-24"
        ]
    );
}

#[test]
fn hos_1_2_1_a_man_never_moves_backward() {
    let lone = position("W:W14:B32");
    assert_eq!(moves_text(&lone.legal_moves()), ["14-17", "14-18"]);
}

#[test]
fn hos_1_2_2_a_king_moves_any_distance_along_its_diagonals() {
    let corner = position("W:WK4:B32");
    assert_eq!(
        moves_text(&corner.legal_moves()),
        ["4-11", "4-15", "4-18", "4-22", "4-25", "4-29", "4-8"]
    );
    let blocked = position("W:WK4,15:B32");
    // Blocked by its own man on 15: 4-8 and 4-11, plus the man's two steps.
    assert_eq!(
        moves_text(&blocked.legal_moves()),
        ["15-18", "15-19", "4-11", "4-8"]
    );
}

#[test]
fn hos_2_1_a_man_captures_forward_only_and_must_capture() {
    // Black men ahead on 18 and behind on 10: only the forward one can be taken.
    let both_sides = position("W:W14:B10,18");
    assert_eq!(moves_text(&both_sides.legal_moves()), ["14x23"]);
    assert!(both_sides.has_capture());
}

#[test]
fn hos_2_1_a_king_captures_from_afar_and_lands_just_beyond() {
    // King on 4, black man on 18 up the long diagonal: it lands on 22, not 25 or 29.
    let far = position("W:WK4:B18");
    assert_eq!(moves_text(&far.legal_moves()), ["4x22"]);
    // Nothing to land on: no capture.
    let covered = position("W:WK4:B18,22");
    assert!(!covered.has_capture());
}

#[test]
fn hos_2_2_and_2_3_multi_captures_branch_and_any_line_may_be_chosen() {
    // From 10 the man can take 15 then 23, or 14 then 22: both lines end on 26.
    let forked = position("W:W10:B14,15,22,23");
    assert_eq!(moves_text(&forked.legal_moves()), ["10x17x26", "10x19x26"]);
    for mv in forked.legal_moves() {
        assert_eq!(mv.captured_count(), 2);
        assert_eq!(forked.play(&mv).count(Color::Black), 2);
    }
}

#[test]
fn hos_2_2_captured_pieces_leave_at_once_and_no_longer_block() {
    // The king's third capture crosses the square of its second victim (and turns back),
    // which only works because each captured piece is removed as it is jumped.
    let king = position("W:WK20:B8,15,16");
    assert_eq!(
        moves_text(&king.legal_moves()),
        ["20x11x18x4", "20x11x4x18"]
    );
    for mv in king.legal_moves() {
        assert_eq!(king.play(&mv).count(Color::Black), 0);
    }
}

#[test]
fn hos_1_2_2_promotion_ends_the_capture() {
    // The man on 23 takes 26 and lands on 30, the far row. As a king it could take 25,
    // but a new king waits for the opponent's move.
    let before = position("W:W23:B25,26");
    let moves = before.legal_moves();
    assert_eq!(moves_text(&moves), ["23x30"]);
    assert!(moves[0].promotes());
    let after = before.play(&moves[0]);
    assert_eq!(
        after.piece_at(square(30)),
        Some(Piece {
            color: Color::White,
            kind: Kind::King
        })
    );
    assert_eq!(after.turn(), Color::Black);
    assert!(after.piece_at(square(25)).is_some());
}

#[test]
fn hos_school_3_1_twelve_men_fill_three_rows() {
    let start = Position::start(Men::Twelve, Color::Black);
    assert_eq!(start.count(Color::White), 12);
    assert_eq!(start.count(Color::Black), 12);
    assert_eq!(start.turn(), Color::Black);
    assert_eq!(
        moves_text(&start.legal_moves()),
        [
            "21-17", "22-17", "22-18", "23-18", "23-19", "24-19", "24-20"
        ]
    );
}

#[test]
fn hos_2_4_a_missed_capture_is_explained_with_an_advisory() {
    let before = position("W:W14,1:B18");
    let after = relocated(&before, 1, 5);
    let found = explain(&before, &after);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].mv.to_string(), "1-5");
    assert_eq!(found[0].flags, [Flag::MissedCapture]);
    assert_eq!(Flag::MissedCapture.rules()[0].to_string(), "HOS 2.4");
    assert_eq!(
        Flag::MissedCapture.penalty(),
        Some(kradan::games::Penalty::Advisory)
    );
}

#[test]
fn hos_2_2_a_capture_cut_short_is_explained_with_an_advisory() {
    let before = position("W:W10:B15,23");
    // 10x19 stops although 19x26 was open.
    let mut after = before;
    after.set(square(10), None);
    after.set(square(15), None);
    after.set(
        square(19),
        Some(Piece {
            color: Color::White,
            kind: Kind::Man,
        }),
    );
    let found = explain(&before, &Observation::of(&after));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].mv.to_string(), "10x19");
    assert_eq!(found[0].flags, [Flag::IncompleteCapture]);
}

#[test]
fn explanation_carries_promotion_and_the_full_position_after() {
    let before = position("W:W26:B1");
    let after = relocated(&before, 26, 30);
    let found: Vec<Explanation> = explain(&before, &after);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].flags, [Flag::Promotion]);
    assert_eq!(
        found[0].after.piece_at(square(30)).map(|p| p.kind),
        Some(Kind::King)
    );
}

#[test]
fn different_capture_paths_to_the_same_board_are_all_explained() {
    // The king on 11 takes the four men around it clockwise or counter-clockwise and comes
    // back to 11 either way: two PDN moves, one board, one position after.
    let looped = position("W:WK11:B6,7,14,15");
    let moves = looped.legal_moves();
    assert_eq!(moves_text(&moves), ["11x18x9x2x11", "11x2x9x18x11"]);
    let board = Observation::of(&looped.play(&moves[0]));
    let found = explain(&looped, &board);
    let explained: Vec<Move> = found.iter().map(|e| e.mv).collect();
    assert_eq!(moves_text(&explained), moves_text(&moves));
    assert!(found.iter().all(|e| e.after == found[0].after));
    assert_eq!(found[0].after.count(Color::Black), 0);
}

#[test]
fn hos_3_2_moving_in_place_is_a_loss() {
    let before = Position::start(Men::Eight, Color::White);
    let kinds = irregular(&before, &Observation::of(&before));
    assert_eq!(kinds, [Violation::NoChange]);
    assert_eq!(Violation::NoChange.rules()[0].to_string(), "HOS 3.2");
    assert_eq!(Violation::NoChange.penalty(), kradan::games::Penalty::Loss);
}

#[test]
fn hos_3_2_a_man_moving_backward_is_a_loss() {
    let before = position("W:W14:B32");
    assert_eq!(
        irregular(&before, &relocated(&before, 14, 10)),
        [Violation::ManBackward]
    );
    // Capturing backward is backward too.
    let behind = position("W:W14:B10");
    let mut after = behind;
    after.set(square(10), None);
    after.set(square(14), None);
    after.set(
        square(7),
        Some(Piece {
            color: Color::White,
            kind: Kind::Man,
        }),
    );
    assert_eq!(
        irregular(&behind, &Observation::of(&after)),
        [Violation::ManBackward]
    );
}

#[test]
fn hos_3_2_moving_off_the_diagonal_is_a_loss() {
    let before = position("W:W6:B32");
    // 6 (row 6, col 5) to 22 (row 2, col 5): straight up the file, too far for two moves.
    assert_eq!(
        irregular(&before, &relocated(&before, 6, 22)),
        [Violation::OffDiagonal]
    );
    // Onto a light square.
    let onto_light = observe(&[
        ". B . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . . . .",
        ". . . . . W . .",
        ". . . . . . . .",
        ". . . . . . . .",
    ]);
    assert_eq!(irregular(&before, &onto_light), [Violation::OffDiagonal]);
}

#[test]
fn hos_3_2_a_man_skipping_squares_is_a_loss_or_a_double_move() {
    let before = position("W:W6:B32");
    // 6 to 15 in one go: two squares up one diagonal. The camera cannot tell this from two
    // moves in a row, so both readings are offered, the single-move one first.
    assert_eq!(
        irregular(&before, &relocated(&before, 6, 15)),
        [Violation::SkippedSquare, Violation::DoubleMove]
    );
    // Three squares cannot be two moves.
    assert_eq!(
        irregular(&before, &relocated(&before, 6, 19)),
        [Violation::SkippedSquare]
    );
}

#[test]
fn hos_3_2_a_capture_landing_beyond_the_right_square_is_a_loss() {
    // The king on 4 takes 18 but lands on 25 instead of 22. Taking and then moving on
    // one square is also two moves in a row: both readings are offered.
    let before = position("W:WK4:B18,32");
    let mut after = before;
    after.set(square(18), None);
    after.set(square(4), None);
    after.set(
        square(25),
        Some(Piece {
            color: Color::White,
            kind: Kind::King,
        }),
    );
    assert_eq!(
        irregular(&before, &Observation::of(&after)),
        [Violation::WrongCaptureLanding, Violation::DoubleMove]
    );
    // A man taking 15 but landing two squares beyond it, on 24.
    let man = position("W:W10:B15,32");
    let mut after = man;
    after.set(square(10), None);
    after.set(square(15), None);
    after.set(
        square(24),
        Some(Piece {
            color: Color::White,
            kind: Kind::Man,
        }),
    );
    assert_eq!(
        irregular(&man, &Observation::of(&after))[0],
        Violation::WrongCaptureLanding
    );
}

#[test]
fn hos_3_2_adding_or_removing_pieces_is_a_loss() {
    let before = position("W:W6,7:B30,31");
    let mut added = before;
    added.set(
        square(20),
        Some(Piece {
            color: Color::Black,
            kind: Kind::Man,
        }),
    );
    assert_eq!(
        irregular(&before, &Observation::of(&added)),
        [Violation::PieceAdded]
    );
    let mut removed = before;
    removed.set(square(31), None);
    assert_eq!(
        irregular(&before, &Observation::of(&removed)),
        [Violation::PieceRemoved]
    );
    let mut own_removed = before;
    own_removed.set(square(7), None);
    assert_eq!(
        irregular(&before, &Observation::of(&own_removed)),
        [Violation::PieceRemoved]
    );
    assert_eq!(Violation::PieceAdded.rules()[0].to_string(), "HOS 3.2");
}

#[test]
fn hos_3_4_a_double_move_is_a_warning() {
    let before = Position::start(Men::Eight, Color::White);
    // Black, who is not to move, moves (Black moved twice in a row).
    let black_again = relocated(&before, 25, 21);
    assert_eq!(irregular(&before, &black_again), [Violation::DoubleMove]);
    // White makes two moves with two men.
    let mut twice = before;
    twice.set(square(5), None);
    twice.set(square(9), before.piece_at(square(5)));
    twice.set(square(8), None);
    twice.set(square(12), before.piece_at(square(8)));
    let twice = Observation::of(&twice);
    assert_eq!(irregular(&before, &twice), [Violation::DoubleMove]);
    assert_eq!(Violation::DoubleMove.rules()[0].to_string(), "HOS 3.4");
    assert_eq!(
        Violation::DoubleMove.penalty(),
        kradan::games::Penalty::Warning
    );
}

#[test]
fn every_unexplained_change_gets_at_least_one_reading() {
    let mut rng = SmallRng::seed_from_u64(7);
    let before = Position::start(Men::Twelve, Color::White);
    for _ in 0..2000 {
        let mut grid = before.occupancy();
        for _ in 0..rng.random_range(1..4) {
            let (row, col) = (rng.random_range(0..8), rng.random_range(0..8));
            let value = match rng.random_range(0..3) {
                0 => None,
                1 => Some(Color::White),
                _ => Some(Color::Black),
            };
            grid.set(row, col, value);
        }
        let seen = Observation::from_occupancy(&grid).expect("8x8");
        match judge(&before, &seen) {
            Verdict::Explained(found) => assert!(!found.is_empty()),
            Verdict::Irregular(kinds) => assert!(!kinds.is_empty()),
        }
        assert!(!classify(&before, &seen).is_empty() || !explain(&before, &seen).is_empty());
    }
    assert!(Observation::from_occupancy(&Occupancy::empty(9, 9)).is_err());
}

/// Plays seeded random games; at every move the camera's view of the result must be
/// explained by the move actually played, and a quiet move by nothing else.
#[test]
fn random_playouts_are_explained_by_the_move_played() {
    let mut rng = SmallRng::seed_from_u64(2024);
    let mut checked = 0;
    let mut captures = 0;
    for game in 0..300 {
        let men = if game % 2 == 0 {
            Men::Eight
        } else {
            Men::Twelve
        };
        let first = if game % 3 == 0 {
            Color::Black
        } else {
            Color::White
        };
        let mut position = Position::start(men, first);
        for _ in 0..120 {
            let moves = position.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[rng.random_range(0..moves.len())];
            let after = position.play(&mv);
            let found = explain(&position, &Observation::of(&after));
            assert!(
                found.iter().any(|e| e.mv == mv && e.after == after),
                "{mv} not among {found:?}"
            );
            assert!(found.iter().all(|e| e.after == after));
            if mv.is_capture() {
                captures += 1;
            } else {
                assert_eq!(found.len(), 1, "quiet move {mv} has other explanations");
                assert!(found[0].flags.iter().all(|&f| f == Flag::Promotion));
            }
            checked += 1;
            position = after;
        }
    }
    assert!(checked > 5000, "only {checked} moves checked");
    assert!(captures > 500, "only {captures} captures checked");
}
