//! `kradan replay` for Mak-hos: a PDN record played move by move against the rules.
//!
//! Each written move is matched against the moves the rules let stand for the side to
//! move. A move that only gives the opponent a claim (a missed or cut-short capture,
//! HOS 2.4) is played with a notice. A move of the side that has just moved is a double
//! move (HOS 3.4): it is played, and the turn stays with the side that should have moved.
//! Any other move is illegal (HOS 3.2); it is applied as physically written when the
//! board allows — the piece goes to the last written square and enemy pieces between
//! consecutive written squares are taken — so later moves are checked against the board
//! the players actually had. A move the board cannot carry out (from an empty square,
//! onto an occupied one) leaves the position as it was and passes the turn.

use super::explain::{Flag, Observation, Verdict, Violation, judge};
use super::geometry::{between, direction_between};
use super::movegen::{Move, MoveClass};
use super::pdn::{GameResult, WrittenMove, read_pdn};
use super::position::{Kind, Piece, Position, Square, promotion_row};
use crate::games::{Article, Color, ParseError, Penalty, Source};
use crate::replay::{Game, Problem, Report, Severity};
use std::collections::HashMap;

/// Moves by both sides without a man move or capture after which a referee's count ends
/// in a draw (HOS 5.4); twice that is the 16 own moves of a player who asked to count
/// (HOS 5.3).
const NO_PROGRESS_LIMIT: u32 = 16;

/// Replays the first game of a PDN record and reports every problem, the final position
/// and the outcome.
pub fn replay(text: &str) -> Result<Report, ParseError> {
    let games = read_pdn(text)?;
    let game = &games[0];
    let mut run = Run::new(game.start);
    for (index, written) in game.moves.iter().enumerate() {
        run.play(index + 1, written);
    }
    let position = run.position;
    let mut notes = Vec::new();
    if games.len() > 1 {
        notes.push(format!(
            "the file holds {} games; the first was replayed",
            games.len()
        ));
    }
    notes.push(format!("side to move: {}", position.turn()));
    notes.push(format!(
        "moves without a man move or capture: {} (HOS 5.3, HOS 5.4)",
        run.no_progress
    ));
    notes.push(format!(
        "kings: white {}; black {}",
        kings(&position, Color::White),
        kings(&position, Color::Black)
    ));
    if game.result != GameResult::Unknown {
        notes.push(format!("result tag: {}", game.result.token()));
    }
    let decided = decided_outcome(&position);
    if let Some((winner, _)) = &decided {
        let agrees = match game.result {
            GameResult::WhiteWins => *winner == Color::White,
            GameResult::BlackWins => *winner == Color::Black,
            GameResult::Draw => false,
            GameResult::Unknown => true,
        };
        if !agrees {
            notes.push(format!(
                "the record's result {} disagrees with the final position",
                game.result.token()
            ));
        }
    }
    let outcome = decided.map(|(_, text)| text).or(match game.result {
        GameResult::WhiteWins => Some("white wins (1-0, as recorded)".to_string()),
        GameResult::BlackWins => Some("black wins (0-1, as recorded)".to_string()),
        GameResult::Draw => Some("draw (1/2-1/2, as recorded)".to_string()),
        GameResult::Unknown => None,
    });
    Ok(Report {
        game: Game::Makhos,
        moves: game.moves.len(),
        problems: run.problems,
        position: position.occupancy().to_text_rows(),
        captured_by_black: run.captured_by_black,
        captured_by_white: run.captured_by_white,
        outcome,
        notes,
    })
}

fn kings(position: &Position, color: Color) -> String {
    let squares: Vec<String> = position
        .pieces(color)
        .filter(|(_, piece)| piece.kind == Kind::King)
        .map(|(square, _)| square.to_string())
        .collect();
    if squares.is_empty() {
        "none".to_string()
    } else {
        squares.join(", ")
    }
}

/// A side with no pieces, or no move, has lost (HOS 4.1, HOS 4.2).
fn decided_outcome(position: &Position) -> Option<(Color, String)> {
    let loser = position.turn();
    let winner = loser.opponent();
    if position.count(loser) == 0 {
        Some((
            winner,
            format!("{winner} wins: {loser} has no pieces left (HOS 4.1)"),
        ))
    } else if position.legal_moves().is_empty() {
        Some((
            winner,
            format!("{winner} wins: {loser} has no move left (HOS 4.2)"),
        ))
    } else {
        None
    }
}

struct Run {
    position: Position,
    problems: Vec<Problem>,
    captured_by_white: u32,
    captured_by_black: u32,
    /// Moves since the last man move or capture.
    no_progress: u32,
    /// Positions seen since the last irreversible move, to spot three-fold shuttling.
    seen: HashMap<Position, u32>,
    /// The shuttling since the last irreversible move has been reported once already.
    repetition_reported: bool,
}

impl Run {
    fn new(start: Position) -> Run {
        Run {
            position: start,
            problems: Vec::new(),
            captured_by_white: 0,
            captured_by_black: 0,
            no_progress: 0,
            seen: HashMap::from([(start, 1)]),
            repetition_reported: false,
        }
    }

    fn report(&mut self, number: usize, written: &WrittenMove, finding: Finding) {
        self.problems.push(Problem {
            move_number: number,
            mv: written.to_string(),
            severity: finding.severity,
            reason: finding.reason,
            rules: finding.rules,
            penalties: finding.penalties,
        });
    }

    fn play(&mut self, number: usize, written: &WrittenMove) {
        let before = self.position;
        let (after, findings) = self.resolve(written);
        for finding in findings {
            self.report(number, written, finding);
        }
        self.record_progress(number, written, &before, &after);
        self.position = after;
    }

    /// The position after `written`, and what the rules say about it.
    fn resolve(&self, written: &WrittenMove) -> (Position, Vec<Finding>) {
        let before = self.position;
        if let Some((mv, class)) = matching_move(&before, written) {
            let mut findings = Vec::new();
            let flag = match class {
                MoveClass::Legal => None,
                MoveClass::MissedCapture => Some(Flag::MissedCapture),
                MoveClass::IncompleteCapture => Some(Flag::IncompleteCapture),
            };
            if let Some(flag) = flag {
                findings.push(Finding::advisory(flag));
            }
            return (before.play(&mv), findings);
        }
        let mut other_side = before;
        other_side.set_turn(before.turn().opponent());
        if let Some((mv, _)) = matching_move(&other_side, written) {
            let reason = format!(
                "{}: {} moved again before {} moved",
                Violation::DoubleMove.describe(),
                before.turn().opponent(),
                before.turn()
            );
            return (
                other_side.play(&mv),
                vec![Finding::violation(Violation::DoubleMove, reason)],
            );
        }
        self.physical(written)
    }

    /// Carries out an illegal move as written, if the board allows, and says what is wrong.
    fn physical(&self, written: &WrittenMove) -> (Position, Vec<Finding>) {
        let before = self.position;
        let from = written.squares[0];
        let to = *written.squares.last().unwrap_or(&from);
        let Some(piece) = before.piece_at(from) else {
            let mut passed = before;
            passed.set_turn(before.turn().opponent());
            return (
                passed,
                vec![Finding::unplayable(format!(
                    "square {from} is empty: the record moves a piece that is not there"
                ))],
            );
        };
        if to != from && before.piece_at(to).is_some() {
            let mut passed = before;
            passed.set_turn(before.turn().opponent());
            return (
                passed,
                vec![Finding::unplayable(format!(
                    "square {to} is occupied: the move cannot be made on the board"
                ))],
            );
        }
        let mut as_mover = before;
        as_mover.set_turn(piece.color);
        let mut after = as_mover;
        after.set(from, None);
        for pair in written.squares.windows(2) {
            let (a, b) = (pair[0].index(), pair[1].index());
            if let Some(dir) = direction_between(a, b) {
                let taken = between(a, b, dir) & as_mover.side(piece.color.opponent());
                for square in Square::all().filter(|s| taken & s.bit() != 0) {
                    after.set(square, None);
                }
            }
        }
        let kind = if piece.kind == Kind::King || promotion_row(piece.color) & to.bit() != 0 {
            Kind::King
        } else {
            Kind::Man
        };
        after.set(
            to,
            Some(Piece {
                color: piece.color,
                kind,
            }),
        );
        after.set_turn(piece.color.opponent());
        let mut findings = Vec::new();
        if piece.color != before.turn() {
            findings.push(Finding::violation(
                Violation::DoubleMove,
                format!(
                    "{}: {} moved again before {} moved",
                    Violation::DoubleMove.describe(),
                    piece.color,
                    before.turn()
                ),
            ));
        }
        match judge(&as_mover, &Observation::of(&after)) {
            Verdict::Explained(explanations) => {
                // The board ended up as a rule-abiding move leaves it; only the notation
                // is off, so that move is what was played.
                let played = &explanations[0];
                findings.push(Finding::notation(format!(
                    "written as {written}, but the board matches {}",
                    played.mv
                )));
                findings.extend(
                    played
                        .flags
                        .iter()
                        .filter(|flag| flag.penalty().is_some())
                        .map(|&flag| Finding::advisory(flag)),
                );
                (played.after, findings)
            }
            Verdict::Irregular(violations) => {
                // A written move names one piece's path, so the first, most specific
                // reading is the one the record states.
                let violation = violations[0];
                findings.push(Finding::violation(
                    violation,
                    violation.describe().to_string(),
                ));
                (after, findings)
            }
        }
    }

    fn record_progress(
        &mut self,
        number: usize,
        written: &WrittenMove,
        before: &Position,
        after: &Position,
    ) {
        let white_lost = before
            .count(Color::White)
            .saturating_sub(after.count(Color::White));
        let black_lost = before
            .count(Color::Black)
            .saturating_sub(after.count(Color::Black));
        self.captured_by_white += black_lost;
        self.captured_by_black += white_lost;
        let man_moved = before
            .piece_at(written.squares[0])
            .is_some_and(|piece| piece.kind == Kind::Man)
            && before != after;
        if man_moved || white_lost + black_lost > 0 {
            self.no_progress = 0;
            self.seen.clear();
            self.repetition_reported = false;
        } else if before != after {
            self.no_progress += 1;
            if self.no_progress == NO_PROGRESS_LIMIT {
                self.report(
                    number,
                    written,
                    Finding::draw(
                        format!(
                            "{NO_PROGRESS_LIMIT} moves by both sides without a man move or \
                             capture: a referee's count ends in a draw"
                        ),
                        vec![Article::new(Source::Hos, "5.4")],
                    ),
                );
            } else if self.no_progress == 2 * NO_PROGRESS_LIMIT {
                self.report(
                    number,
                    written,
                    Finding::draw(
                        format!(
                            "each side has made {NO_PROGRESS_LIMIT} moves without a man move \
                             or capture: a requested count ends in a draw"
                        ),
                        vec![
                            Article::new(Source::Hos, "5.3"),
                            Article::new(Source::HosSchool, "3.8.3"),
                        ],
                    ),
                );
            }
        }
        let seen = self.seen.entry(*after).or_insert(0);
        *seen += 1;
        if *seen == 3 && !self.repetition_reported {
            self.repetition_reported = true;
            self.report(
                number,
                written,
                Finding::draw(
                    "the same position, with the same side to move, has occurred three times"
                        .to_string(),
                    vec![Article::new(Source::Hos, "5.2")],
                ),
            );
        }
    }
}

/// The move of the side to move that `written` names: its first and last squares, and any
/// squares in between among its landings in order (PDN may abbreviate a capture to its
/// ends). A fully legal move is preferred, then one whose squares are all written.
pub fn matching_move(position: &Position, written: &WrittenMove) -> Option<(Move, MoveClass)> {
    let squares = &written.squares;
    let (&from, rest) = squares.split_first()?;
    let (&to, middle) = rest.split_last()?;
    let mut best: Option<(Move, MoveClass, (bool, bool))> = None;
    position.for_each_move(|mv, class| {
        if mv.from() != from || mv.to() != to {
            return;
        }
        let landings = mv.landings();
        let mut remaining = landings[..landings.len() - 1].iter();
        if !middle
            .iter()
            .all(|square| remaining.any(|landing| landing == square))
        {
            return;
        }
        let rank = (class == MoveClass::Legal, landings.len() == rest.len());
        if best
            .as_ref()
            .is_none_or(|(_, _, best_rank)| rank > *best_rank)
        {
            best = Some((*mv, class, rank));
        }
    });
    best.map(|(mv, class, _)| (mv, class))
}

/// A problem before it is tied to a move number.
struct Finding {
    severity: Severity,
    reason: String,
    rules: Vec<Article>,
    penalties: Vec<Penalty>,
}

impl Finding {
    fn violation(violation: Violation, reason: String) -> Finding {
        Finding {
            severity: Severity::Illegal,
            reason,
            rules: violation.rules(),
            penalties: vec![violation.penalty()],
        }
    }

    fn advisory(flag: Flag) -> Finding {
        Finding {
            severity: Severity::Notice,
            reason: flag.describe().to_string(),
            rules: flag.rules(),
            penalties: flag.penalty().into_iter().collect(),
        }
    }

    fn draw(reason: String, rules: Vec<Article>) -> Finding {
        Finding {
            severity: Severity::Notice,
            reason,
            rules,
            penalties: vec![Penalty::DrawClaim],
        }
    }

    /// The record asks for something no board allows; no rule is broken on the board, the
    /// record itself is wrong.
    fn unplayable(reason: String) -> Finding {
        Finding {
            severity: Severity::Illegal,
            reason,
            rules: Vec::new(),
            penalties: Vec::new(),
        }
    }

    fn notation(reason: String) -> Finding {
        Finding {
            severity: Severity::Notice,
            reason,
            rules: Vec::new(),
            penalties: Vec::new(),
        }
    }
}
