//! `kradan replay` for Makruk: a PGN played move by move against the rules, with every
//! irregularity and draw claim cited by its article.

use super::counting::{self, CountKind};
use super::pgn::read_pgn;
use super::position::{Status, side};
use super::san::{parse_san, to_san};
use crate::games::{Article, Color, ParseError, Penalty, Source};
use crate::replay::{Game, Problem, Report, Severity};
use std::collections::HashMap;

/// The rules have no article on illegal moves. MAKRUK 4 is the one that governs any
/// problem during play (the clocks are stopped and the referee decides), and MAKRUK 6 the
/// one on a touched piece that cannot be moved legally; the referee rules, so the penalty
/// is advisory.
const ILLEGAL_MOVE_RULES: [Article; 2] = [
    Article::new(Source::Makruk, "4"),
    Article::new(Source::Makruk, "6"),
];

fn makruk(number: &'static str) -> Article {
    Article::new(Source::Makruk, number)
}

/// Plays a PGN record and reports what a referee must know. Errors are for text that is
/// not a PGN game; moves that do not fit the position are problems in the report.
pub fn replay(text: &str) -> Result<Report, ParseError> {
    let game = read_pgn(text)?;
    let mut position = game.start_position(text)?;
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut captured = [0u32; 2];
    let mut seen: HashMap<_, u32> = HashMap::new();
    seen.insert(position.repetition_key(), 1);
    let mut insufficient_reported = counting::insufficient_material(position.board());
    let mut stopped = false;
    for (index, token) in game.moves.iter().enumerate() {
        let move_number = index + 1;
        let notice = |reason: String, rules: Vec<Article>| Problem {
            move_number,
            mv: token.text.clone(),
            severity: Severity::Notice,
            reason,
            rules,
            penalties: vec![Penalty::DrawClaim],
        };
        let mv = match parse_san(&position, &token.text) {
            Ok(mv) => mv,
            Err(why) => {
                problems.push(Problem {
                    move_number,
                    mv: token.text.clone(),
                    severity: Severity::Illegal,
                    reason: format!(
                        "{} to move: {why}; the {} later move(s) of the record are not checked",
                        position.turn(),
                        game.moves.len() - move_number
                    ),
                    rules: ILLEGAL_MOVE_RULES.to_vec(),
                    penalties: vec![Penalty::Advisory],
                });
                notes.push(format!(
                    "checking stopped at move {move_number} ({}): the position after it is unknown",
                    token.text
                ));
                stopped = true;
                break;
            }
        };
        let count_before = position.count();
        if mv.capture.is_some() {
            captured[side(position.turn())] += 1;
        }
        let san = to_san(&position, &mv);
        position.play(&mv);

        if let Some(count) = position.count()
            && count_before
                .is_none_or(|before| before.kind != count.kind || before.counter != count.counter)
        {
            notes.push(format!(
                "move {move_number} ({san}): {} may count the {} up to {} (MAKRUK {}), starting from {}",
                count.counter,
                match count.kind {
                    CountKind::BoardHonour => "board's honour",
                    CountKind::PiecesHonour => "pieces' honour",
                },
                count.limit,
                match count.kind {
                    CountKind::BoardHonour => "8",
                    CountKind::PiecesHonour => "7, 9, 10",
                },
                count.reached + 1
            ));
        }
        if let Some(count) = position.count()
            && count.is_at_limit()
            && count_before.is_some_and(|before| !before.is_at_limit())
            && position.status() != Status::Checkmate
        {
            let (reason, rules) = match count.kind {
                CountKind::BoardHonour => (
                    format!(
                        "{} has counted the board's honour to {}: draw",
                        count.counter, count.limit
                    ),
                    vec![makruk("8"), makruk("11")],
                ),
                CountKind::PiecesHonour => (
                    format!(
                        "{} has counted the pieces' honour to {}: draw",
                        count.counter, count.limit
                    ),
                    vec![makruk("7"), makruk("9"), makruk("10")],
                ),
            };
            problems.push(notice(reason, rules));
        }

        let repeated = seen.entry(position.repetition_key()).or_default();
        *repeated += 1;
        if *repeated == 3 {
            problems.push(notice(
                "the same position has occurred three times: draw".to_string(),
                vec![makruk("16")],
            ));
        }
        if !insufficient_reported && counting::insufficient_material(position.board()) {
            insufficient_reported = true;
            problems.push(notice(
                "neither side has the pieces MAKRUK 15 requires to win: draw".to_string(),
                vec![makruk("16"), makruk("15")],
            ));
        }
        if position.status() == Status::Stalemate {
            problems.push(notice(
                format!(
                    "{} has no legal move and is not in check: stalemate, draw",
                    position.turn()
                ),
                vec![makruk("16")],
            ));
        }
    }

    let result_tag = game
        .tag("Result")
        .map(str::to_string)
        .or(game.termination.clone());
    let outcome = if stopped {
        result_tag
            .as_ref()
            .map(|result| format!("{result} (result of the record, not checked)"))
    } else {
        match position.status() {
            Status::Checkmate => Some(format!(
                "{} wins by checkmate ({})",
                position.turn().opponent(),
                match position.turn() {
                    Color::White => "0-1",
                    Color::Black => "1-0",
                }
            )),
            Status::Stalemate => Some("draw by stalemate (1/2-1/2)".to_string()),
            Status::Ongoing => result_tag
                .as_ref()
                .map(|result| format!("{result} (result of the record)")),
        }
    };
    if !stopped {
        notes.push(format!("{} to move", position.turn()));
        if let Some(count) = position.count() {
            notes.push(format!("count: {count}"));
        }
    }
    if let Some(result) = &result_tag {
        notes.push(format!("result tag: {result}"));
        let decided = match position.status() {
            _ if stopped => None,
            Status::Checkmate if position.turn() == Color::White => Some("0-1"),
            Status::Checkmate => Some("1-0"),
            Status::Stalemate => Some("1/2-1/2"),
            Status::Ongoing => None,
        };
        if let Some(decided) = decided
            && result != decided
        {
            notes.push(format!(
                "the result tag {result} disagrees with the final position, which gives {decided}"
            ));
        }
    }
    notes.push(format!("FEN: {}", position.to_fen()));
    Ok(Report {
        game: Game::Makruk,
        moves: game.moves.len(),
        problems,
        position: position.occupancy().to_text_rows(),
        captured_by_black: captured[1],
        captured_by_white: captured[0],
        outcome,
        notes,
    })
}
