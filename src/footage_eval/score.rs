//! One game scored: the recorder's event log against the clip's truth.
//!
//! Moves are compared as a sequence aligned by edit distance, so a missed or extra move
//! costs that move and not every later one; the stricter figures (same move number, and
//! the run of right moves from the start) are kept beside it. The recorder cannot know
//! which side of the board Black sits on, so its board frame is taken to be whichever of
//! the eight symmetries of the truth's frame explains most moves. Flags are matched to the
//! staged anomalies by the rule they cite and by when they come.

use super::events::{Recorded, RecordedFlag, Spot};
use super::truth::{Truth, TruthAnomaly};
use crate::games::Color;
use serde::Serialize;

/// A flag may come this long before the anomaly's time in the truth (frame rounding).
pub const FLAG_EARLY_SECONDS: f64 = 1.0;
/// … and up to this many moves after the anomaly's move: a breach such as captures left
/// on the board is one only once the opponent has played.
pub const FLAG_WINDOW_MOVES: usize = 3;
/// … plus this much time after that move is complete.
pub const FLAG_LATE_SECONDS: f64 = 5.0;
/// A note within this long after a bump counts as the recorder having noticed it.
pub const BUMP_NOTE_SECONDS: f64 = 15.0;
/// The latency above which a move counts as late in the summary.
pub const LATE_MOVE_SECONDS: f64 = 0.5;

/// The eight ways a square board's frame can be turned or mirrored; the recorder's frame
/// is the truth's frame under one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    Identity,
    /// Turned a quarter clockwise: the truth's top-left corner is the recorder's top-right.
    Turn90,
    Turn180,
    Turn270,
    /// Mirrored top to bottom.
    FlipRows,
    /// Mirrored left to right.
    FlipColumns,
    /// Mirrored about the top-left to bottom-right diagonal.
    Transpose,
    /// Mirrored about the other diagonal.
    AntiTranspose,
}

impl Symmetry {
    /// Turns before mirrors: on a tie (a symmetric opening) the likelier frame wins, since
    /// a camera turns the board but only a mirror or a wrong lens model mirrors it.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Turn90,
        Symmetry::Turn180,
        Symmetry::Turn270,
        Symmetry::FlipRows,
        Symmetry::FlipColumns,
        Symmetry::Transpose,
        Symmetry::AntiTranspose,
    ];

    /// Where the truth's point lands in the recorder's frame on a board of `n` lines.
    pub fn apply(self, spot: Spot, n: usize) -> Spot {
        let Spot::At(r, c) = spot else {
            return spot;
        };
        if r >= n || c >= n {
            return Spot::Unreadable;
        }
        let last = n - 1;
        let (r, c) = match self {
            Symmetry::Identity => (r, c),
            Symmetry::Turn90 => (c, last - r),
            Symmetry::Turn180 => (last - r, last - c),
            Symmetry::Turn270 => (last - c, r),
            Symmetry::FlipRows => (last - r, c),
            Symmetry::FlipColumns => (r, last - c),
            Symmetry::Transpose => (c, r),
            Symmetry::AntiTranspose => (last - c, last - r),
        };
        Spot::At(r, c)
    }

    pub fn inverse(self) -> Symmetry {
        match self {
            Symmetry::Turn90 => Symmetry::Turn270,
            Symmetry::Turn270 => Symmetry::Turn90,
            other => other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Symmetry::Identity => "identity",
            Symmetry::Turn90 => "turn-90",
            Symmetry::Turn180 => "turn-180",
            Symmetry::Turn270 => "turn-270",
            Symmetry::FlipRows => "flip-rows",
            Symmetry::FlipColumns => "flip-columns",
            Symmetry::Transpose => "transpose",
            Symmetry::AntiTranspose => "anti-transpose",
        }
    }
}

/// Serialised by [`Symmetry::name`] (`turn-90`).
impl Serialize for Symmetry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// The moves of one game.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MoveScore {
    /// Moves complete before the footage ends.
    pub expected: usize,
    /// Moves in the recorder's record (after its own corrections).
    pub recorded: usize,
    /// Right colour and point, in order (the edit-distance alignment).
    pub right: usize,
    pub missed: usize,
    pub extra: usize,
    /// Aligned with a true move but of another colour or point.
    pub wrong: usize,
    /// Right colour and point under the same move number: what a move-by-move comparison
    /// gives, where one missed move makes every later one wrong.
    pub right_by_number: usize,
    /// Right by number from move 1 up to the first mistake.
    pub prefix: usize,
    /// Move lines the recorder later replaced with another line of the same number.
    pub corrections: usize,
}

/// A move the recorder got wrong, both sides in the truth's frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveMistake {
    /// `missed`, `extra` or `wrong`.
    pub what: &'static str,
    /// The truth's move number (the recorder's for an extra move).
    pub number: usize,
    /// `B dd` as played.
    pub expected: Option<String>,
    /// `W de` as recorded, with the recorder's own number.
    pub recorded: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlagScore {
    /// Staged anomalies a flag is owed for.
    pub anomalies: usize,
    /// Of those, flagged with an accepted rule in time.
    pub right: usize,
    pub missed: usize,
    /// Flags no anomaly explains (in a bump's wake too: a bump is no breach).
    pub false_flags: usize,
    /// Further flags for an anomaly already flagged, or its consequences
    /// ([`tolerated_rules`]).
    pub duplicates: usize,
    /// `inferred-order` and `repetition` lines: notes, not flags.
    pub notes: usize,
    /// Flags that a `resolved` line answered.
    pub resolved: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnomalyOutcome {
    pub kind: String,
    pub move_number: usize,
    pub at: f64,
    /// Any of these rules in a flag answers it.
    pub accepted_rules: Vec<String>,
    /// When the answering flag came, and what it cited.
    pub flagged_at: Option<f64>,
    pub flagged_rules: Vec<String>,
    pub flagged_kind: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FalseFlag {
    pub video_time: Option<f64>,
    pub move_number: Option<usize>,
    pub rules: Vec<String>,
    pub kind: Option<String>,
    /// What was going on: an anomaly whose rule it did not cite, or a bump.
    pub near: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BumpScore {
    pub bumps: usize,
    /// Followed by a note (the recorder says it found the board again).
    pub noted: usize,
}

/// Seconds from the hand leaving the board to the recorder committing the move.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    pub count: usize,
    pub median: Option<f64>,
    pub p95: Option<f64>,
    pub max: Option<f64>,
    /// Moves committed more than [`LATE_MOVE_SECONDS`] after the hand left.
    pub over_half_second: usize,
}

impl Latency {
    pub fn of(values: &[f64]) -> Latency {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Latency {
            count: sorted.len(),
            median: percentile(&sorted, 0.5),
            p95: percentile(&sorted, 0.95),
            max: sorted.last().copied(),
            over_half_second: sorted.iter().filter(|&&v| v > LATE_MOVE_SECONDS).count(),
        }
    }
}

/// Nearest rank: the smallest value with at least `p` of the values at or below it.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameScore {
    /// The recorder's frame relative to the truth's.
    pub symmetry: Symmetry,
    pub moves: MoveScore,
    /// The first mistakes (at most [`MISTAKES_KEPT`]).
    pub mistakes: Vec<MoveMistake>,
    pub flags: FlagScore,
    pub anomalies: Vec<AnomalyOutcome>,
    pub false_flags: Vec<FalseFlag>,
    pub bumps: BumpScore,
    pub latency: Latency,
    /// Every move right by number, no extra move, every anomaly flagged, no false flag.
    pub exact: bool,
    /// Event lines the scorer could not read.
    pub unreadable_lines: usize,
    /// The recorder's latencies, one per right move, for the summary's pooled figures.
    #[serde(skip)]
    pub latencies: Vec<f64>,
}

pub const MISTAKES_KEPT: usize = 20;

/// One step of the alignment of true moves (`i`) and recorded ones (`j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Right(usize, usize),
    Wrong(usize, usize),
    Missed(usize),
    Extra(usize),
}

/// The cheapest edit script turning the true sequence into the recorded one (a mismatch,
/// a missed and an extra move cost 1 each); on equal cost a match is preferred, then a
/// mismatch, so a misread point stays one wrong move rather than a missed and an extra.
fn align(n: usize, m: usize, same: impl Fn(usize, usize) -> bool) -> Vec<Step> {
    let width = m + 1;
    let mut cost = vec![0u32; (n + 1) * width];
    for i in 0..=n {
        for j in 0..=m {
            cost[i * width + j] = match (i, j) {
                (0, j) => j as u32,
                (i, 0) => i as u32,
                (i, j) => {
                    let diagonal = cost[(i - 1) * width + j - 1] + u32::from(!same(i - 1, j - 1));
                    let missed = cost[(i - 1) * width + j] + 1;
                    let extra = cost[i * width + j - 1] + 1;
                    diagonal.min(missed).min(extra)
                }
            };
        }
    }
    let mut steps = Vec::with_capacity(n.max(m));
    let (mut i, mut j) = (n, m);
    while i > 0 || j > 0 {
        let here = cost[i * width + j];
        if i > 0 && j > 0 {
            let matched = same(i - 1, j - 1);
            if here == cost[(i - 1) * width + j - 1] + u32::from(!matched) {
                steps.push(if matched {
                    Step::Right(i - 1, j - 1)
                } else {
                    Step::Wrong(i - 1, j - 1)
                });
                i -= 1;
                j -= 1;
                continue;
            }
        }
        if i > 0 && here == cost[(i - 1) * width + j] + 1 {
            steps.push(Step::Missed(i - 1));
            i -= 1;
        } else {
            steps.push(Step::Extra(j - 1));
            j -= 1;
        }
    }
    steps.reverse();
    steps
}

/// The rules a flag may cite to answer an anomaly of `kind`: the truth's own first rule,
/// and the readings a camera can honestly make of the same event (a stone knocked off is a
/// displaced stone or a disturbed board; a stone dropped by accident and picked up looks
/// like a move taken back).
pub fn accepted_rules(kind: &str, truth_rules: &[String]) -> Vec<String> {
    let also: &[&str] = match kind {
        "double-move" => &["TGA 20"],
        "takeback" => &["TGA 21"],
        "slide" | "knock" | "board-knock" => &["TGA 25", "TGA 26"],
        "captures-left" | "removed-alive" => &["TGA 27"],
        "ko-retake" => &["TGA 8", "TGA 28"],
        "suicide" => &["TGA 6", "TGA 29"],
        "added" => &["TGA 22", "TGA 21", "TGA 25", "TGA 26"],
        _ => &[],
    };
    let mut rules: Vec<String> = truth_rules.iter().take(1).cloned().collect();
    for rule in also {
        if !rules.iter().any(|r| r == rule) {
            rules.push((*rule).to_string());
        }
    }
    rules
}

/// Rules a flag may cite about an anomaly of `kind` without answering it and without being
/// false: the consequences a strict reading of the penalty gives. After a ko retake or a
/// suicide the stone is taken back and the offender loses the turn (TGA 28–29), yet in the
/// footage the same player then plays on, which that reading calls a double move.
pub fn tolerated_rules(kind: &str) -> &'static [&'static str] {
    match kind {
        "ko-retake" | "suicide" => &["TGA 20"],
        _ => &[],
    }
}

fn label(color: Option<Color>, spot: Spot) -> String {
    let letter = color.map_or('?', Color::letter);
    format!("{letter} {}", spot.to_sgf())
}

/// Scores one game. Never fails: whatever the log holds is counted.
pub fn score(truth: &Truth, recorded: &Recorded) -> GameScore {
    let n = truth.board.cells;
    let expected: Vec<(usize, Color, Spot, f64)> = truth
        .expected_moves()
        .into_iter()
        .map(|m| {
            (
                m.number,
                m.color,
                Spot::from_sgf(&m.notation),
                m.completed_at,
            )
        })
        .collect();
    let moves = &recorded.moves;
    let same = |symmetry: Symmetry, i: usize, j: usize| {
        let (_, color, spot, _) = expected[i];
        moves[j].color == Some(color)
            && moves[j].spot != Spot::Unreadable
            && symmetry.apply(spot, n) == moves[j].spot
    };
    let mut best: Option<(Symmetry, usize)> = None;
    for symmetry in Symmetry::ALL {
        let steps = align(expected.len(), moves.len(), |i, j| same(symmetry, i, j));
        let right = steps
            .iter()
            .filter(|s| matches!(s, Step::Right(..)))
            .count();
        if best.is_none_or(|(_, r)| right > r) {
            best = Some((symmetry, right));
        }
    }
    let (symmetry, _) = best.expect("eight symmetries were tried");
    let back = symmetry.inverse();
    let sequences = Sequences {
        expected: expected.iter().map(|&(n, _, _, t)| (n, t)).collect(),
        recorded: moves.iter().map(|m| (m.number, m.video_time)).collect(),
        corrections: recorded.corrections,
    };
    let (score, mistakes, latencies) = sequences.score(
        |i, j| same(symmetry, i, j),
        |i| label(Some(expected[i].1), expected[i].2),
        |j| label(moves[j].color, back.apply(moves[j].spot, n)),
    );
    finish(
        truth,
        recorded,
        symmetry,
        (score, mistakes, latencies),
        &RuleBook::GO,
    )
}

/// The true moves and the recorded ones, by number and time, whatever the game.
pub(super) struct Sequences {
    /// Each true move's number and when the hand left.
    pub expected: Vec<(usize, f64)>,
    /// Each recorded move's number and when it was committed.
    pub recorded: Vec<(usize, Option<f64>)>,
    pub corrections: usize,
}

impl Sequences {
    /// The move figures, the first mistakes and the latencies of the right moves, with
    /// `same(i, j)` saying whether true move `i` is recorded move `j`.
    pub fn score(
        &self,
        same: impl Fn(usize, usize) -> bool,
        expected_label: impl Fn(usize) -> String,
        recorded_label: impl Fn(usize) -> String,
    ) -> (MoveScore, Vec<MoveMistake>, Vec<f64>) {
        let (expected, recorded) = (&self.expected, &self.recorded);
        let steps = align(expected.len(), recorded.len(), &same);
        let mut score = MoveScore {
            expected: expected.len(),
            recorded: recorded.len(),
            corrections: self.corrections,
            ..MoveScore::default()
        };
        let mut mistakes = Vec::new();
        let mut latencies = Vec::new();
        let shown = |j: usize| format!("{} (#{})", recorded_label(j), recorded[j].0);
        for step in &steps {
            let mistake = match *step {
                Step::Right(i, j) => {
                    score.right += 1;
                    if let Some(t) = recorded[j].1 {
                        latencies.push(t - expected[i].1);
                    }
                    None
                }
                Step::Wrong(i, j) => {
                    score.wrong += 1;
                    Some(("wrong", expected[i].0, Some(i), Some(j)))
                }
                Step::Missed(i) => {
                    score.missed += 1;
                    Some(("missed", expected[i].0, Some(i), None))
                }
                Step::Extra(j) => {
                    score.extra += 1;
                    Some(("extra", recorded[j].0, None, Some(j)))
                }
            };
            if let Some((what, number, i, j)) = mistake
                && mistakes.len() < MISTAKES_KEPT
            {
                mistakes.push(MoveMistake {
                    what,
                    number,
                    expected: i.map(&expected_label),
                    recorded: j.map(shown),
                });
            }
        }
        let mut in_prefix = true;
        for (i, &(number, _)) in expected.iter().enumerate() {
            let right = recorded
                .iter()
                .position(|&(n, _)| n == number)
                .is_some_and(|j| same(i, j));
            if right {
                score.right_by_number += 1;
            }
            in_prefix &= right;
            if in_prefix {
                score.prefix += 1;
            }
        }
        (score, mistakes, latencies)
    }
}

/// Which rules answer an anomaly, and which it excuses, in one game.
pub(super) struct RuleBook {
    pub accepted: fn(&str, &[String]) -> Vec<String>,
    pub tolerated: fn(&str) -> &'static [&'static str],
}

impl RuleBook {
    pub const GO: RuleBook = RuleBook {
        accepted: accepted_rules,
        tolerated: tolerated_rules,
    };
}

/// The game's score once its moves are scored: flags, bumps, and whether it is exact.
pub(super) fn finish(
    truth: &Truth,
    recorded: &Recorded,
    symmetry: Symmetry,
    (score, mistakes, latencies): (MoveScore, Vec<MoveMistake>, Vec<f64>),
    rules: &RuleBook,
) -> GameScore {
    let (flags, anomalies, false_flags) = score_flags(truth, recorded, rules);
    let bumps = BumpScore {
        bumps: truth.bumps.len(),
        noted: truth
            .bumps
            .iter()
            .filter(|b| {
                recorded.notes.iter().any(|note| {
                    note.video_time.is_some_and(|t| {
                        t >= b.at - FLAG_EARLY_SECONDS && t <= b.at + BUMP_NOTE_SECONDS
                    })
                })
            })
            .count(),
    };
    let exact = score.right_by_number == score.expected
        && score.recorded == score.expected
        && flags.missed == 0
        && flags.false_flags == 0;
    GameScore {
        symmetry,
        moves: score,
        mistakes,
        flags,
        anomalies,
        false_flags,
        bumps,
        latency: Latency::of(&latencies),
        exact,
        unreadable_lines: recorded.unreadable_lines,
        latencies,
    }
}

/// The stretch of footage in which a flag answers `anomaly`.
fn window(truth: &Truth, anomaly: &TruthAnomaly) -> (f64, f64) {
    let last = anomaly.move_number + FLAG_WINDOW_MOVES;
    // When the footage ends within the window, whatever the recorder says at the end counts.
    let end = truth
        .moves
        .iter()
        .find(|m| m.number == last)
        .map_or(truth.duration, |m| m.completed_at);
    (
        anomaly.at - FLAG_EARLY_SECONDS,
        end.max(anomaly.at) + FLAG_LATE_SECONDS,
    )
}

fn in_window(flag: &RecordedFlag, anomaly: &TruthAnomaly, (from, to): (f64, f64)) -> bool {
    match (flag.video_time, flag.move_number) {
        (Some(t), _) => t >= from && t <= to,
        // A live recorder has no footage time; its move number must do.
        (None, Some(number)) => number.abs_diff(anomaly.move_number) <= FLAG_WINDOW_MOVES,
        (None, None) => false,
    }
}

fn score_flags(
    truth: &Truth,
    recorded: &Recorded,
    book: &RuleBook,
) -> (FlagScore, Vec<AnomalyOutcome>, Vec<FalseFlag>) {
    // An anomaly that cites no rule (a bump asked for by name) is owed no flag.
    let owed: Vec<(&TruthAnomaly, Vec<String>, (f64, f64))> = truth
        .anomalies
        .iter()
        .filter(|a| !a.rules.is_empty())
        .map(|a| (a, (book.accepted)(&a.kind, &a.rules), window(truth, a)))
        .collect();
    let mut outcomes: Vec<AnomalyOutcome> = owed
        .iter()
        .map(|(a, rules, _)| AnomalyOutcome {
            kind: a.kind.clone(),
            move_number: a.move_number,
            at: a.at,
            accepted_rules: rules.clone(),
            flagged_at: None,
            flagged_rules: Vec::new(),
            flagged_kind: None,
        })
        .collect();
    let mut score = FlagScore {
        anomalies: owed.len(),
        notes: recorded.flag_notes.len(),
        resolved: recorded.flags.iter().filter(|f| f.resolved).count(),
        ..FlagScore::default()
    };
    let mut answered = vec![false; owed.len()];
    let mut false_flags = Vec::new();
    let mut flags: Vec<&RecordedFlag> = recorded.flags.iter().collect();
    flags.sort_by(|a, b| {
        a.video_time
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.video_time.unwrap_or(f64::INFINITY))
    });
    for flag in flags {
        let fits: Vec<usize> = owed
            .iter()
            .enumerate()
            .filter(|(_, (a, rules, w))| {
                in_window(flag, a, *w) && flag.rules.iter().any(|r| rules.contains(r))
            })
            .map(|(k, _)| k)
            .collect();
        if let Some(&k) = fits.iter().find(|&&k| !answered[k]) {
            answered[k] = true;
            score.right += 1;
            let outcome = &mut outcomes[k];
            outcome.flagged_at = flag.video_time;
            outcome.flagged_rules = flag.rules.clone();
            outcome.flagged_kind = flag.kind.clone();
            continue;
        }
        let tolerated = || {
            owed.iter().any(|(a, _, w)| {
                in_window(flag, a, *w)
                    && flag
                        .rules
                        .iter()
                        .any(|r| (book.tolerated)(&a.kind).contains(&r.as_str()))
            })
        };
        if !fits.is_empty() || tolerated() {
            score.duplicates += 1;
            continue;
        }
        score.false_flags += 1;
        let near_anomaly = owed
            .iter()
            .find(|(a, _, w)| in_window(flag, a, *w))
            .map(|(a, _, _)| {
                format!(
                    "{} at move {} (not one of its rules)",
                    a.kind, a.move_number
                )
            });
        let near_bump = || {
            let t = flag.video_time?;
            truth
                .bumps
                .iter()
                .find(|b| t >= b.at - FLAG_EARLY_SECONDS && t <= b.at + BUMP_NOTE_SECONDS)
                .map(|b| format!("{} bump at {:.1} s", b.moved, b.at))
        };
        false_flags.push(FalseFlag {
            video_time: flag.video_time,
            move_number: flag.move_number,
            rules: flag.rules.clone(),
            kind: flag.kind.clone(),
            near: near_anomaly.or_else(near_bump),
        });
    }
    score.missed = answered.iter().filter(|a| !**a).count();
    (score, outcomes, false_flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footage_eval::events::Recorded;
    use crate::footage_eval::truth::Truth;

    /// A 9×9 clip of six moves, each complete two seconds after the last, with whatever
    /// anomalies and bumps a test adds.
    fn truth_with(anomalies: &str, bumps: &str) -> Truth {
        let moves = [
            ("black", "cc"),
            ("white", "gg"),
            ("black", "cg"),
            ("white", "gc"),
            ("black", "ee"),
            ("white", "ef"),
        ];
        let moves: Vec<String> = moves
            .iter()
            .enumerate()
            .map(|(i, (color, point))| {
                let done = 2.0 * (i + 1) as f64;
                format!(
                    r#"{{"number":{},"record_number":{},"color":"{color}","notation":"{point}","captures":[],"placed_at":{},"completed_at":{done},"completed_frame":{}}}"#,
                    i + 1,
                    i + 1,
                    done - 0.5,
                    (done * 10.0) as usize
                )
            })
            .collect();
        let text = format!(
            r#"{{"format":"kradan-render-truth/1","game":"go","seed":7,"style":"varied","record":"(;SZ[9])","video":"footage.avi","codec":"MJPEG","fps":10.0,"frame_count":150,"duration":15.0,"camera":{{"width":640,"height":480}},"board":{{"layout":{{"lines":9}},"cells":9,"bottom":"black"}},"positions":[],"frames":[],"moves":[{}],"hands":[],"anomalies":[{anomalies}],"bumps":[{bumps}]}}"#,
            moves.join(",")
        );
        Truth::parse(&text).unwrap()
    }

    fn clean_truth() -> Truth {
        truth_with("", "")
    }

    /// One event line as `docs/record.md` writes it (the hash chain does not matter here).
    fn line(
        kind: &str,
        time: f64,
        number: Option<usize>,
        color: Option<&str>,
        point: Option<[usize; 2]>,
        rules: &[&str],
        detail: &str,
    ) -> String {
        let points = point.map_or("[]".into(), |[r, c]| format!("[[{r},{c}]]"));
        let notation = point.map_or("null".into(), |[r, c]| {
            format!(
                "\"{}{}\"",
                (b'a' + c as u8) as char,
                (b'a' + r as u8) as char
            )
        });
        format!(
            r#"{{"seq":0,"kind":"{kind}","video_time":{time},"wall_time":"2026-01-01T00:00:00.000Z","move_number":{},"color":{},"notation":{notation},"points":{points},"rules":[{}],"penalties":[],"confidence":null,"evidence":[],"detail":{{{detail}}},"prev":"0000000000000000000000000000000000000000000000000000000000000000"}}"#,
            number.map_or("null".into(), |n| n.to_string()),
            color.map_or("null".into(), |c| format!("\"{c}\"")),
            rules
                .iter()
                .map(|r| format!("\"{r}\""))
                .collect::<Vec<_>>()
                .join(",")
        )
    }

    fn move_line(number: usize, color: &str, [r, c]: [usize; 2], time: f64) -> String {
        line(
            "move",
            time,
            Some(number),
            Some(color),
            Some([r, c]),
            &[],
            "",
        )
    }

    fn flag_line(time: f64, number: Option<usize>, rules: &[&str], kind: &str) -> String {
        line(
            "flag",
            time,
            number,
            None,
            None,
            rules,
            &format!(r#""flag":"{kind}""#),
        )
    }

    /// The truth's moves as a recorder in `symmetry`'s frame would log them, each `lag`
    /// seconds after the hand left.
    fn perfect(truth: &Truth, symmetry: Symmetry, lag: f64) -> Vec<String> {
        let mut lines = vec![line(
            "session-start",
            0.0,
            None,
            None,
            None,
            &[],
            r#""format":"kradan-events/1""#,
        )];
        for m in truth.expected_moves() {
            let Spot::At(r, c) = symmetry.apply(Spot::from_sgf(&m.notation), 9) else {
                panic!("a point")
            };
            let color = if m.color == Color::Black {
                "black"
            } else {
                "white"
            };
            lines.push(move_line(m.number, color, [r, c], m.completed_at + lag));
        }
        lines
    }

    fn scored(truth: &Truth, lines: &[String]) -> GameScore {
        score(truth, &Recorded::parse(&lines.join("\n")))
    }

    #[test]
    fn a_perfect_record_scores_every_move_and_the_game() {
        let truth = clean_truth();
        let s = scored(&truth, &perfect(&truth, Symmetry::Identity, 0.25));
        assert_eq!(s.symmetry, Symmetry::Identity);
        assert_eq!(
            (
                s.moves.expected,
                s.moves.right,
                s.moves.right_by_number,
                s.moves.prefix
            ),
            (6, 6, 6, 6)
        );
        assert_eq!((s.moves.missed, s.moves.extra, s.moves.wrong), (0, 0, 0));
        assert!(s.exact);
        assert!(s.mistakes.is_empty());
        assert_eq!(s.latency.count, 6);
        assert!((s.latency.median.unwrap() - 0.25).abs() < 1e-9);
    }

    #[test]
    fn a_hand_written_log_in_the_documented_shape_is_read() {
        // Black's first move at cc (row 2, column 2) and White's at gg, as `kradan record`
        // writes them; a session-end last.
        let log = r#"{"seq":0,"kind":"session-start","video_time":0.0,"wall_time":"2026-01-01T00:00:00.000Z","move_number":null,"color":null,"notation":null,"points":[],"rules":[],"penalties":[],"confidence":null,"evidence":[],"detail":{"format":"kradan-events/1","game":"go","size":9},"prev":"0000000000000000000000000000000000000000000000000000000000000000"}
{"seq":1,"kind":"move","video_time":2.4,"wall_time":"2026-01-01T00:00:01.000Z","move_number":1,"color":"black","notation":"cc","points":[[2,2]],"rules":[],"penalties":[],"confidence":0.97,"evidence":[],"detail":{},"prev":"61e031a9bca77ee1a4f535233772dc4bc4e56ef2530db652c25d004b357a32cc"}
{"seq":2,"kind":"move","video_time":4.3,"wall_time":"2026-01-01T00:00:02.000Z","move_number":2,"color":"white","notation":"gg","points":[[6,6]],"rules":[],"penalties":[],"confidence":0.97,"evidence":[],"detail":{},"prev":"3d5aed7db845689b9d4ec00f3a486a98e6bc9cf133c61768f34a52e02f16505b"}
{"seq":3,"kind":"session-end","video_time":15.0,"wall_time":"2026-01-01T00:00:03.000Z","move_number":null,"color":null,"notation":null,"points":[],"rules":[],"penalties":[],"confidence":null,"evidence":[],"detail":{},"prev":"3d5aed7db845689b9d4ec00f3a486a98e6bc9cf133c61768f34a52e02f16505b"}
"#;
        let recorded = Recorded::parse(log);
        assert!(recorded.session_ended);
        assert_eq!(recorded.unreadable_lines, 0);
        let s = score(&clean_truth(), &recorded);
        assert_eq!((s.moves.right, s.moves.missed, s.moves.prefix), (2, 4, 2));
        assert!(!s.exact);
        let latencies: Vec<f64> = s
            .latencies
            .iter()
            .map(|l| (l * 1000.0).round() / 1000.0)
            .collect();
        assert_eq!(latencies, vec![0.4, 0.3]);
    }

    #[test]
    fn a_record_in_a_turned_or_mirrored_frame_still_scores_every_move() {
        let truth = clean_truth();
        for symmetry in Symmetry::ALL {
            let s = scored(&truth, &perfect(&truth, symmetry, 0.1));
            assert_eq!(s.symmetry, symmetry);
            assert_eq!(s.moves.right, 6, "{symmetry:?}");
            assert!(s.exact, "{symmetry:?}");
        }
    }

    #[test]
    fn symmetries_turn_the_corners_as_named() {
        let top_left = Spot::At(0, 0);
        assert_eq!(Symmetry::Turn90.apply(top_left, 9), Spot::At(0, 8));
        assert_eq!(Symmetry::Turn180.apply(top_left, 9), Spot::At(8, 8));
        assert_eq!(Symmetry::Turn270.apply(top_left, 9), Spot::At(8, 0));
        assert_eq!(Symmetry::FlipRows.apply(Spot::At(1, 2), 9), Spot::At(7, 2));
        assert_eq!(Symmetry::Transpose.apply(Spot::At(1, 2), 9), Spot::At(2, 1));
        for s in Symmetry::ALL {
            for spot in [Spot::At(1, 4), Spot::At(8, 3), Spot::Pass] {
                assert_eq!(s.inverse().apply(s.apply(spot, 9), 9), spot, "{s:?}");
            }
        }
        assert_eq!(
            Symmetry::Identity.apply(Spot::At(9, 0), 9),
            Spot::Unreadable
        );
    }

    #[test]
    fn one_missed_move_costs_one_move_not_the_rest() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Turn180, 0.2);
        // Move 3 never logged; the recorder numbers on from there, as it would.
        lines.remove(3);
        let renumbered: Vec<String> = lines
            .iter()
            .map(|l| {
                l.replace(r#""move_number":4"#, r#""move_number":3"#)
                    .replace(r#""move_number":5"#, r#""move_number":4"#)
                    .replace(r#""move_number":6"#, r#""move_number":5"#)
            })
            .collect();
        let s = scored(&truth, &renumbered);
        assert_eq!(s.symmetry, Symmetry::Turn180);
        assert_eq!(
            (s.moves.right, s.moves.missed, s.moves.extra, s.moves.wrong),
            (5, 1, 0, 0)
        );
        // Compared by number, everything after the gap is off by one.
        assert_eq!(s.moves.right_by_number, 2);
        assert_eq!(s.moves.prefix, 2);
        assert!(!s.exact);
        assert_eq!(s.mistakes.len(), 1);
        assert_eq!(s.mistakes[0].what, "missed");
        assert_eq!(s.mistakes[0].number, 3);
        assert_eq!(s.mistakes[0].expected.as_deref(), Some("B cg"));
    }

    #[test]
    fn extra_and_misread_moves_are_counted_as_such() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines[2] = move_line(2, "white", [6, 5], 4.2); // gg read as fg
        lines.push(move_line(7, "black", [4, 4], 14.0)); // a stone that was never played
        let s = scored(&truth, &lines);
        assert_eq!(
            (s.moves.right, s.moves.missed, s.moves.extra, s.moves.wrong),
            (5, 0, 1, 1)
        );
        assert_eq!((s.moves.right_by_number, s.moves.prefix), (5, 1));
        assert_eq!(s.mistakes[0].what, "wrong");
        assert_eq!(s.mistakes[0].recorded.as_deref(), Some("W fg (#2)"));
        assert_eq!(s.mistakes[1].what, "extra");
        assert_eq!(s.latency.count, 5, "only right moves have a latency");
    }

    #[test]
    fn a_move_logged_again_under_its_number_corrects_the_first() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        // Move 4 first logged on the point the stone was put on by mistake, then again.
        lines.insert(4, move_line(4, "white", [1, 1], 7.5));
        let recorded = Recorded::parse(&lines.join("\n"));
        assert_eq!(recorded.corrections, 1);
        let s = score(&truth, &recorded);
        assert_eq!(s.moves.right, 6);
        assert_eq!(s.moves.corrections, 1);
        assert!(s.exact);
    }

    #[test]
    fn a_correction_note_moves_or_undoes_the_last_move() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        // Move 4 logged where a stone was dropped by accident, then moved by a correction
        // note to where it was played (`recorder::actions::correction`).
        let right = lines[4].clone();
        let point = |text: &str| {
            let at = text.find("\"points\":[[").expect("a point") + 11;
            let end = at + text[at..].find(']').expect("closed");
            let (r, c) = text[at..end].split_once(',').expect("two numbers");
            [r.parse::<usize>().unwrap(), c.parse::<usize>().unwrap()]
        };
        let [r, c] = point(&right);
        let note =
            |detail: &str, at: Option<[usize; 2]>| line("note", 8.0, None, None, at, &[], detail);
        lines[4] = right.replace(&format!("[[{r},{c}]]"), &format!("[[{},{c}]]", (r + 1) % 9));
        lines.insert(
            5,
            note(
                &format!(
                    r#""note":"correction","point":"{}{}""#,
                    (b'a' + c as u8) as char,
                    (b'a' + r as u8) as char
                ),
                Some([r, c]),
            ),
        );
        let recorded = Recorded::parse(&lines.join("\n"));
        assert_eq!(recorded.corrections, 1);
        assert!(score(&truth, &recorded).exact);
        // An extra move undone by a note with no point.
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.insert(5, move_line(5, "black", [8, 8], 9.0));
        lines.insert(6, note(r#""note":"correction""#, None));
        let recorded = Recorded::parse(&lines.join("\n"));
        assert_eq!(recorded.corrections, 1);
        assert!(score(&truth, &recorded).exact);
    }

    #[test]
    fn a_flag_nothing_explains_is_false_and_spoils_a_clean_game() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(flag_line(
            9.0,
            Some(4),
            &["TGA 20", "TML 23"],
            "double-move",
        ));
        let s = scored(&truth, &lines);
        assert_eq!(s.flags.false_flags, 1);
        assert_eq!(s.flags.anomalies, 0);
        assert!(!s.exact);
        assert_eq!(s.false_flags[0].rules, vec!["TGA 20", "TML 23"]);
        assert_eq!(s.false_flags[0].near, None);
    }

    #[test]
    fn notes_and_note_like_flags_are_not_false_flags() {
        let truth = truth_with(
            "",
            r#"{"at":5.0,"frame":50,"moved":"camera","requested":false}"#,
        );
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(line(
            "note",
            6.0,
            None,
            None,
            None,
            &[],
            r#""note":"board relocated after a bump""#,
        ));
        lines.push(flag_line(8.0, Some(4), &[], "inferred-order"));
        lines.push(flag_line(9.0, Some(4), &["TGA 11"], "repetition"));
        let s = scored(&truth, &lines);
        assert_eq!(s.flags.false_flags, 0);
        assert_eq!(s.flags.notes, 2);
        assert_eq!((s.bumps.bumps, s.bumps.noted), (1, 1));
        assert!(s.exact);
    }

    #[test]
    fn a_flag_raised_at_a_bump_is_false_and_says_so() {
        let truth = truth_with(
            "",
            r#"{"at":5.0,"frame":50,"moved":"board","requested":true}"#,
        );
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(flag_line(
            5.5,
            None,
            &["TGA 26", "TML 29"],
            "board-disturbed",
        ));
        let s = scored(&truth, &lines);
        assert_eq!(s.flags.false_flags, 1);
        assert_eq!((s.bumps.bumps, s.bumps.noted), (1, 0));
        assert!(
            s.false_flags[0]
                .near
                .as_deref()
                .unwrap()
                .contains("board bump")
        );
        assert!(!s.exact);
    }

    const DOUBLE_MOVE_AT_4: &str = r#"{"kind":"double-move","move_number":4,"rules":["TGA 20","TML 23"],"penalties":["loss"],"points":["gc"],"note":"","at":7.5,"frame":75}"#;

    #[test]
    fn an_anomaly_is_flagged_right_by_its_rule_in_time_and_a_second_flag_is_a_duplicate() {
        let truth = truth_with(DOUBLE_MOVE_AT_4, "");
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(flag_line(
            8.2,
            Some(4),
            &["TGA 20", "TML 23"],
            "double-move",
        ));
        lines.push(flag_line(
            8.4,
            Some(4),
            &["TGA 20", "TML 23"],
            "double-move",
        ));
        let s = scored(&truth, &lines);
        assert_eq!(
            (s.flags.anomalies, s.flags.right, s.flags.missed),
            (1, 1, 0)
        );
        assert_eq!((s.flags.false_flags, s.flags.duplicates), (0, 1));
        assert_eq!(s.anomalies[0].flagged_at, Some(8.2));
        assert_eq!(s.anomalies[0].flagged_kind.as_deref(), Some("double-move"));
        assert!(s.exact);
    }

    #[test]
    fn a_flag_with_the_wrong_rule_or_too_early_does_not_answer_the_anomaly() {
        let truth = truth_with(DOUBLE_MOVE_AT_4, "");
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(flag_line(3.0, Some(2), &["TGA 20"], "double-move")); // before it happened
        lines.push(flag_line(8.0, Some(4), &["TGA 25", "TML 28"], "displaced"));
        let s = scored(&truth, &lines);
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (0, 1, 2)
        );
        assert_eq!(s.false_flags[0].near, None);
        assert!(
            s.false_flags[1]
                .near
                .as_deref()
                .unwrap()
                .contains("double-move at move 4")
        );
        assert!(!s.exact);
    }

    #[test]
    fn a_late_flag_counts_until_three_moves_after_the_anomaly() {
        let truth = truth_with(DOUBLE_MOVE_AT_4, "");
        // Move 4 + 3 is past the last move: the window runs to the end of the footage.
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push(flag_line(15.0, None, &["TGA 20"], "double-move"));
        assert_eq!(scored(&truth, &lines).flags.right, 1);
        let early = truth_with(
            &DOUBLE_MOVE_AT_4
                .replace(r#""move_number":4"#, r#""move_number":1"#)
                .replace(r#""at":7.5"#, r#""at":1.5"#),
            "",
        );
        // Move 1 + 3 was complete at 8 s: a flag 6 s later is too late.
        let mut lines = perfect(&early, Symmetry::Identity, 0.2);
        lines.push(flag_line(14.0, None, &["TGA 20"], "double-move"));
        let s = scored(&early, &lines);
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (0, 1, 1)
        );
    }

    #[test]
    fn a_double_move_called_after_a_ko_retake_is_its_consequence_not_a_false_flag() {
        let ko = r#"{"kind":"ko-retake","move_number":3,"rules":["TGA 8","TGA 28","TML 31"],"penalties":["warning","lose-turn"],"points":["cg"],"note":"","at":5.5,"frame":55}"#;
        let truth = truth_with(ko, "");
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        // The double move alone does not answer the ko retake.
        lines.push(flag_line(
            7.5,
            Some(4),
            &["TGA 20", "TML 23"],
            "double-move",
        ));
        let s = scored(&truth, &lines);
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (0, 1, 0)
        );
        assert_eq!(s.flags.duplicates, 1);
        lines.push(flag_line(
            6.0,
            Some(3),
            &["TGA 8", "TGA 28", "TML 31"],
            "ko-retaken",
        ));
        let s = scored(&truth, &lines);
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (1, 0, 0)
        );
        assert!(s.exact);
    }

    #[test]
    fn accepted_rules_include_what_a_camera_can_honestly_see() {
        let rules = |kind: &str, truth: &[&str]| {
            accepted_rules(
                kind,
                &truth.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            rules("ko-retake", &["TGA 8", "TGA 28", "TML 31"]),
            vec!["TGA 8", "TGA 28"]
        );
        assert_eq!(
            rules("knock", &["TGA 25", "TML 28"]),
            vec!["TGA 25", "TGA 26"]
        );
        assert!(rules("added", &["TGA 22", "TML 25"]).contains(&"TGA 21".to_string()));
        assert_eq!(rules("something-new", &["TGA 99"]), vec!["TGA 99"]);
    }

    #[test]
    fn latency_figures_are_nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=20).map(|i| f64::from(i) * 0.05).collect();
        let l = Latency::of(&values);
        assert_eq!(l.count, 20);
        assert!((l.median.unwrap() - 0.5).abs() < 1e-9);
        assert!((l.p95.unwrap() - 0.95).abs() < 1e-9);
        assert!((l.max.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(l.over_half_second, 10);
        assert_eq!(Latency::of(&[]), Latency::default());
        assert_eq!(Latency::of(&[f64::NAN, 0.3]).count, 1);
    }

    #[test]
    fn latency_is_commit_time_minus_the_hand_leaving() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.0);
        for (i, lag) in [0.1, 0.2, 0.3, 0.4, 0.9, 2.0].iter().enumerate() {
            let done = 2.0 * (i + 1) as f64;
            lines[i + 1] = lines[i + 1].replace(
                &format!(r#""video_time":{done}"#),
                &format!(r#""video_time":{}"#, done + lag),
            );
        }
        let s = scored(&truth, &lines);
        assert_eq!(s.latency.count, 6);
        assert!((s.latency.median.unwrap() - 0.3).abs() < 1e-9);
        assert!((s.latency.max.unwrap() - 2.0).abs() < 1e-9);
        assert!((s.latency.p95.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(s.latency.over_half_second, 2);
    }

    #[test]
    fn garbage_in_the_log_is_counted_not_fatal() {
        let truth = clean_truth();
        let mut lines = perfect(&truth, Symmetry::Identity, 0.2);
        lines.push("not json".into());
        lines.push(r#"{"kind":"move","color":"black"}"#.into());
        lines.push(r#"{"kind":"move","move_number":9,"color":"purple","notation":"zz9"}"#.into());
        lines.push("[1,2,3]".into());
        lines.push(r#"{"kind":"weather"}"#.into());
        let recorded = Recorded::parse(&lines.join("\n"));
        assert_eq!(recorded.unreadable_lines, 4);
        let s = score(&truth, &recorded);
        assert_eq!((s.moves.right, s.moves.extra), (6, 1));
        let empty = score(&truth, &Recorded::parse(""));
        assert_eq!((empty.moves.right, empty.moves.missed), (0, 6));
    }

    #[test]
    fn moves_are_read_from_the_notation_when_points_are_absent() {
        let recorded = Recorded::parse(
            r#"{"kind":"move","move_number":1,"color":"black","notation":"cg","points":[]}
{"kind":"move","move_number":2,"color":"white","notation":"pass","points":[]}"#,
        );
        assert_eq!(recorded.moves[0].spot, Spot::At(6, 2));
        assert_eq!(recorded.moves[1].spot, Spot::Pass);
    }
}
