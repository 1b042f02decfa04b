//! `kradan replay`: a game record checked move by move against its rules engine. The
//! report is the same shape for the three games so the CLI, and later the referee desk,
//! print one thing.

use crate::games::{Article, Penalty};
use serde::Serialize;
use std::io::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Game {
    Go,
    Makhos,
    Makruk,
}

/// Whether a problem makes the record illegal (exit code 1) or is something a referee
/// should know that the rules allow (a draw claim, an advisory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Illegal,
    Notice,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// 1-based number of the move in the record (setup stones do not count).
    pub move_number: usize,
    /// The move as the record wrote it, in the game's own notation.
    #[serde(rename = "move")]
    pub mv: String,
    pub severity: Severity,
    pub reason: String,
    pub rules: Vec<Article>,
    pub penalties: Vec<Penalty>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub game: Game,
    /// Moves in the record, passes included.
    pub moves: usize,
    pub problems: Vec<Problem>,
    /// The final position as rows of `.` `B` `W` tokens, row 0 first.
    pub position: Vec<String>,
    /// Pieces each side has captured (prisoners held by Black, by White).
    pub captured_by_black: u32,
    pub captured_by_white: u32,
    /// How the game ended, when the record or the position says so: a score, a result.
    pub outcome: Option<String>,
    /// Further facts worth a line: counts running, the side to move, the record's result tag.
    pub notes: Vec<String>,
}

impl Report {
    pub fn has_illegal_moves(&self) -> bool {
        self.problems
            .iter()
            .any(|p| p.severity == Severity::Illegal)
    }

    pub fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        for problem in &self.problems {
            let rules: Vec<String> = problem.rules.iter().map(ToString::to_string).collect();
            let penalties: Vec<String> =
                problem.penalties.iter().map(ToString::to_string).collect();
            // A record can hold a move no board allows (from an empty square, onto a
            // stone); no article covers it, and an empty citation would read as a typo.
            let citation = match (rules.is_empty(), penalties.is_empty()) {
                (true, true) => String::new(),
                (false, true) => format!(" ({})", rules.join(", ")),
                (true, false) => format!(" ({})", penalties.join(" + ")),
                (false, false) => format!(" ({}; {})", rules.join(", "), penalties.join(" + ")),
            };
            writeln!(
                out,
                "move {} {}: {} [{}]{}",
                problem.move_number,
                problem.mv,
                match problem.severity {
                    Severity::Illegal => "ILLEGAL",
                    Severity::Notice => "notice",
                },
                problem.reason,
                citation
            )?;
        }
        writeln!(out, "moves: {}", self.moves)?;
        writeln!(out, "final position:")?;
        for row in &self.position {
            writeln!(out, "{row}")?;
        }
        writeln!(
            out,
            "captures: black {}, white {}",
            self.captured_by_black, self.captured_by_white
        )?;
        for note in &self.notes {
            writeln!(out, "{note}")?;
        }
        if let Some(outcome) = &self.outcome {
            writeln!(out, "result: {outcome}")?;
        }
        Ok(())
    }

    /// One JSON object per line: each problem, then one `final` line with the rest.
    pub fn write_json_lines(&self, out: &mut impl Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Line<'a, T: Serialize> {
            kind: &'static str,
            #[serde(flatten)]
            body: &'a T,
        }
        #[derive(Serialize)]
        struct Final<'a> {
            game: Game,
            moves: usize,
            illegal: bool,
            problems: usize,
            position: &'a [String],
            captured_by_black: u32,
            captured_by_white: u32,
            outcome: &'a Option<String>,
            notes: &'a [String],
        }
        for problem in &self.problems {
            serde_json::to_writer(
                &mut *out,
                &Line {
                    kind: "problem",
                    body: problem,
                },
            )?;
            writeln!(out)?;
        }
        let summary = Final {
            game: self.game,
            moves: self.moves,
            illegal: self.has_illegal_moves(),
            problems: self.problems.len(),
            position: &self.position,
            captured_by_black: self.captured_by_black,
            captured_by_white: self.captured_by_white,
            outcome: &self.outcome,
            notes: &self.notes,
        };
        serde_json::to_writer(
            &mut *out,
            &Line {
                kind: "final",
                body: &summary,
            },
        )?;
        writeln!(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Source;

    fn report(problems: Vec<Problem>) -> Report {
        Report {
            game: Game::Go,
            moves: 1,
            problems,
            position: vec![". B".into(), "W .".into()],
            captured_by_black: 0,
            captured_by_white: 0,
            outcome: None,
            notes: Vec::new(),
        }
    }

    fn text(report: &Report) -> String {
        let mut out = Vec::new();
        report.write_text(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_problem_prints_its_rules_and_penalties_or_nothing_when_none_applies() {
        let cited = Problem {
            move_number: 3,
            mv: "B dd".into(),
            severity: Severity::Illegal,
            reason: "ko".into(),
            rules: vec![Article::new(Source::Tga, "28")],
            penalties: vec![Penalty::Warning, Penalty::LoseTurn],
        };
        let uncited = Problem {
            rules: Vec::new(),
            penalties: Vec::new(),
            severity: Severity::Notice,
            ..cited.clone()
        };
        let report = report(vec![cited, uncited]);
        let printed = text(&report);
        assert!(printed.contains("move 3 B dd: ILLEGAL [ko] (TGA 28; warning + lose-turn)\n"));
        assert!(printed.contains("move 3 B dd: notice [ko]\n"), "{printed}");
        assert!(report.has_illegal_moves());
    }
}
