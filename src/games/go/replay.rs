//! Checking a Go record move by move against the Thai rules.

use super::scoring::{self, Counting};
use super::sgf::{self, GoRecord};
use super::{DOUBLE_MOVE, Move, Point, Position, REPETITION};
use crate::games::{Color, ParseError};
use crate::replay::{Game, Problem, Report, Severity};

pub fn replay(text: &str) -> Result<Report, ParseError> {
    let record = sgf::read(text)?;
    replay_record(&record).map_err(|message| ParseError::at(text, 0, message))
}

/// Plays the record on a board. A move the rules refuse is reported and, as the rules
/// order (TGA 28–29), the offender loses the turn: the stone is not placed, and the record
/// is checked on from the position the board should have.
pub fn replay_record(record: &GoRecord) -> Result<Report, String> {
    let mut position = Position::new(record.size);
    let black_setup = sgf::handicap_setup(record)?;
    // After a handicap White moves first (TGA 4.1); a record that only sets up a position
    // (a problem, a game started mid-way) says who moves with PL, or Black does.
    let default_first = if record.handicap >= 2 {
        Color::White
    } else {
        Color::Black
    };
    position.setup(
        &black_setup,
        &record.setup_white,
        record.first_player.unwrap_or(default_first),
    );

    let mut problems = Vec::new();
    let mut previous: Option<Color> = None;
    for (index, recorded) in record.moves.iter().enumerate() {
        let number = index + 1;
        let text = format!("{} {}", recorded.color.letter(), recorded.mv);
        if previous == Some(recorded.color) {
            problems.push(Problem {
                move_number: number,
                mv: text.clone(),
                severity: Severity::Illegal,
                reason: format!(
                    "{} plays twice in a row with no pass between (line {})",
                    recorded.color, recorded.line
                ),
                rules: DOUBLE_MOVE.0.to_vec(),
                penalties: DOUBLE_MOVE.1.to_vec(),
            });
        }
        previous = Some(recorded.color);
        match position.play(recorded.color, recorded.mv) {
            Ok(played) => {
                if let Some(first_seen) = played.repeats_position_of_move {
                    problems.push(Problem {
                        move_number: number,
                        mv: text,
                        severity: Severity::Notice,
                        reason: format!(
                            "the whole board repeats the position after move {first_seen}: \
                             the players may agree to a draw"
                        ),
                        rules: REPETITION.0.to_vec(),
                        penalties: REPETITION.1.to_vec(),
                    });
                }
            }
            Err(illegal) => {
                problems.push(Problem {
                    move_number: number,
                    mv: text,
                    severity: Severity::Illegal,
                    reason: format!(
                        "{illegal} (line {}); the stone is not placed",
                        recorded.line
                    ),
                    rules: illegal.articles().to_vec(),
                    penalties: illegal.penalties().to_vec(),
                });
                position
                    .play(recorded.color, Move::Pass)
                    .expect("a pass is always legal");
            }
        }
    }

    let setup = if record.handicap >= 2 {
        format!("handicap {}", record.handicap)
    } else if black_setup.is_empty() && record.setup_white.is_empty() {
        "no handicap".to_string()
    } else {
        format!(
            "set up with {} black and {} white stones",
            black_setup.len(),
            record.setup_white.len()
        )
    };
    let mut notes = vec![format!(
        "board {0}×{0}, komi {1}, {2}{3}",
        record.size,
        record.komi,
        setup,
        record
            .rules
            .as_ref()
            .map(|r| format!(", rules {r}"))
            .unwrap_or_default()
    )];
    let outcome = if position.play_has_ended() {
        let dead = dead_stones(record, &position);
        let thai = scoring::score(&position, &dead, record.komi, Counting::Thai);
        let area = scoring::score(&position, &dead, record.komi, Counting::Area);
        notes.push(format!(
            "dead stones: {} ({})",
            dead.len(),
            if record.territory_black.is_empty() && record.territory_white.is_empty() {
                "the record marks no territory: all stones counted alive"
            } else {
                "stones inside the opponent's TB/TW territory"
            }
        ));
        notes.push(format!(
            "Thai counting (TGA 13): black {} territory + {} prisoners = {}; white {} territory + {} prisoners + {} komi = {}",
            thai.black.territory,
            thai.black.prisoners,
            thai.black.total,
            thai.white.territory,
            thai.white.prisoners,
            thai.komi,
            thai.white.total
        ));
        notes.push(format!(
            "area counting: black {} stones + {} territory = {}; white {} + {} + {} komi = {} ({})",
            area.black.stones,
            area.black.territory,
            area.black.total,
            area.white.stones,
            area.white.territory,
            area.komi,
            area.white.total,
            area.result()
        ));
        if let Some(result) = &record.result {
            notes.push(format!("the record gives RE[{result}]"));
        }
        Some(format!("{} by Thai counting", thai.result()))
    } else {
        notes.push(format!("{} to move", position.to_move()));
        record
            .result
            .as_ref()
            .map(|r| format!("{r} (from the record)"))
    };

    Ok(Report {
        game: Game::Go,
        moves: record.moves.len(),
        problems,
        position: position.board().to_occupancy().to_text_rows(),
        captured_by_black: position.prisoners(Color::Black),
        captured_by_white: position.prisoners(Color::White),
        outcome,
        notes,
    })
}

/// Stones the record's territory marks put inside the other colour's territory: that is
/// how servers record the stones both players agreed were dead.
fn dead_stones(record: &GoRecord, position: &Position) -> Vec<Point> {
    let board = position.board();
    let mut dead = Vec::new();
    for (points, owner) in [
        (&record.territory_black, Color::Black),
        (&record.territory_white, Color::White),
    ] {
        dead.extend(
            points
                .iter()
                .copied()
                .filter(|&p| board.get(p) == Some(owner.opponent())),
        );
    }
    dead
}
