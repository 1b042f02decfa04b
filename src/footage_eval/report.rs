//! Per-game results, the summary over all games, and how both are printed.

use super::score::{FlagScore, GameScore, Latency, MoveScore, percentile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Seeds below this are for development: look at their footage, tune on them.
pub const DEVELOPMENT_SEEDS_BELOW: u64 = 1000;
/// Seeds from this one up are held out: run them to measure, never to tune (see
/// `docs/eval-footage.md`).
pub const HELD_OUT_SEEDS_FROM: u64 = 100_000;

/// The targets.
pub const MOVES_RIGHT_TARGET: f64 = 99.9;
pub const GAMES_EXACT_TARGET: f64 = 95.0;
pub const SPEED_TARGET: f64 = 5.0;
pub const MEMORY_TARGET_MB: f64 = 300.0;
pub const GAMES_TARGET: usize = 50;
/// Issue 7: Mak-hos and Makruk are each measured on at least this many games.
pub const EIGHT_GAMES_TARGET: usize = 30;
/// The picture the speed target is set for.
pub const SPEED_FORMAT: &str = "1920x1080@30";

pub fn seed_class(seed: u64) -> &'static str {
    if seed >= HELD_OUT_SEEDS_FROM {
        "held-out"
    } else if seed < DEVELOPMENT_SEEDS_BELOW {
        "development"
    } else {
        "reserved"
    }
}

/// How the recorder ran on one clip.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecorderRun {
    pub wall_seconds: f64,
    /// Seconds of footage per second of wall time.
    pub times_real_time: Option<f64>,
    pub peak_mb: Option<f64>,
    pub exit_status: Option<i32>,
    pub timed_out: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GameResult {
    /// The game's folder under DIR.
    pub name: String,
    pub seed: Option<u64>,
    /// `go`, `makhos` or `makruk`, as the truth says.
    pub game: Option<String>,
    pub size: Option<usize>,
    /// `WxH@fps`.
    pub format: Option<String>,
    pub style: Option<String>,
    /// Seconds of footage.
    pub duration: Option<f64>,
    /// `kind@move` as the truth has them (the physical move number).
    pub anomalies: Vec<String>,
    pub bumps: usize,
    /// Who played the record, when this run made it.
    pub generator: Option<String>,
    /// Wall time of rendering the clip, when this run rendered it.
    pub render_seconds: Option<f64>,
    pub recorder: Option<RecorderRun>,
    pub score: Option<GameScore>,
    /// What went wrong on the way (a clip that could not be rendered, a recorder that
    /// failed); a game with no score is counted as not exactly right.
    pub problems: Vec<String>,
}

impl GameResult {
    /// The line printed as the game finishes.
    pub fn line(&self) -> String {
        let mut line = format!(
            "{:<12} {:>5} {:<13} {:<6}",
            self.seed
                .map_or_else(|| self.name.clone(), |s| format!("seed {s}")),
            self.size.map_or("?".into(), |n| format!("{n}x{n}")),
            self.format.as_deref().unwrap_or("?"),
            self.style.as_deref().unwrap_or("?"),
        );
        if let Some(score) = &self.score {
            let m = &score.moves;
            let _ = write!(line, "  moves {}/{}", m.right, m.expected);
            let mut errors = Vec::new();
            for (count, what) in [(m.missed, "missed"), (m.extra, "extra"), (m.wrong, "wrong")] {
                if count > 0 {
                    errors.push(format!("{count} {what}"));
                }
            }
            if !errors.is_empty() {
                let _ = write!(line, " ({})", errors.join(", "));
            }
            let f = &score.flags;
            let _ = write!(
                line,
                "  flags {}/{} right, {} missed, {} false",
                f.right, f.anomalies, f.missed, f.false_flags
            );
            match score.latency.p95 {
                Some(p95) => {
                    let _ = write!(line, "  latency p95 {p95:.2} s");
                }
                None => line.push_str("  latency -"),
            }
        }
        if let Some(run) = &self.recorder {
            match run.times_real_time {
                Some(x) => {
                    let _ = write!(line, "  {x:.1}x real time");
                }
                None => line.push_str("  ?x real time"),
            }
            match run.peak_mb {
                Some(mb) => {
                    let _ = write!(line, "  {mb:.0} MB");
                }
                None => line.push_str("  ? MB"),
            }
        }
        if !self.anomalies.is_empty() {
            let _ = write!(line, "  [{}]", self.anomalies.join(" "));
        }
        if self.bumps > 0 {
            line.push_str("  bumped");
        }
        if self.score.as_ref().is_some_and(|s| s.exact) {
            line.push_str("  EXACT");
        }
        for problem in &self.problems {
            let _ = write!(line, "\n    {problem}");
        }
        if let Some(score) = &self.score {
            // An empty record's mistakes are all its moves: the problem above says why.
            let shown = if score.moves.recorded == 0 { 0 } else { 5 };
            for mistake in score.mistakes.iter().take(shown) {
                let _ = write!(
                    line,
                    "\n    move {} {}: expected {}, recorded {}",
                    mistake.number,
                    mistake.what,
                    mistake.expected.as_deref().unwrap_or("-"),
                    mistake.recorded.as_deref().unwrap_or("-")
                );
            }
            for a in score.anomalies.iter().filter(|a| a.flagged_at.is_none()) {
                let _ = write!(
                    line,
                    "\n    {} at move {} ({:.1} s) not flagged (wanted {})",
                    a.kind,
                    a.move_number,
                    a.at,
                    a.accepted_rules.join(" or ")
                );
            }
            for f in &score.false_flags {
                let _ = write!(
                    line,
                    "\n    false flag {} [{}] at {}{}",
                    f.kind.as_deref().unwrap_or("?"),
                    f.rules.join(", "),
                    f.video_time.map_or("?".into(), |t| format!("{t:.1} s")),
                    f.near
                        .as_ref()
                        .map_or(String::new(), |n| format!(", near {n}"))
                );
            }
        }
        line
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpeedGroup {
    /// `WxH@fps`.
    pub format: String,
    pub games: usize,
    pub footage_seconds: f64,
    pub wall_seconds: f64,
    /// All the group's footage over all its wall time.
    pub times_real_time: f64,
    /// The slowest clip of the group.
    pub slowest: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Target {
    pub what: String,
    pub measured: String,
    /// `None` when the run measured nothing it applies to.
    pub met: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KindCount {
    pub staged: usize,
    pub flagged: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub dir: String,
    pub recorder: String,
    /// `go`, `makhos`, `makruk`, or `mixed`.
    pub game: String,
    pub games: usize,
    /// Games with a score (the others failed to render or to be read).
    pub scored: usize,
    /// `development`, `reserved`, `held-out`, or `mixed`.
    pub seeds: String,
    pub first_seed: Option<u64>,
    pub last_seed: Option<u64>,
    /// Games per board size (`9x9`: 25).
    pub sizes: BTreeMap<String, usize>,
    pub with_anomalies: usize,
    pub bumped: usize,
    pub moves: MoveScore,
    /// Aligned moves right, of the moves expected, in percent.
    pub moves_right_percent: Option<f64>,
    pub moves_right_by_number_percent: Option<f64>,
    pub moves_prefix_percent: Option<f64>,
    pub games_exact: usize,
    pub games_exact_percent: Option<f64>,
    pub flags: FlagScore,
    /// False flags in games with no staged anomaly.
    pub false_flags_in_clean_games: usize,
    pub anomalies_by_kind: BTreeMap<String, KindCount>,
    pub bumps: usize,
    pub bumps_noted: usize,
    pub latency: Latency,
    pub speed: Vec<SpeedGroup>,
    pub times_real_time: Option<f64>,
    pub peak_mb_max: Option<f64>,
    pub peak_mb_median: Option<f64>,
    pub targets: Vec<Target>,
    pub results: Vec<GameResult>,
}

fn percent(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| 100.0 * part as f64 / whole as f64)
}

fn add(total: &mut MoveScore, m: &MoveScore) {
    total.expected += m.expected;
    total.recorded += m.recorded;
    total.right += m.right;
    total.missed += m.missed;
    total.extra += m.extra;
    total.wrong += m.wrong;
    total.right_by_number += m.right_by_number;
    total.prefix += m.prefix;
    total.corrections += m.corrections;
}

impl Summary {
    pub fn of(dir: String, recorder: String, results: Vec<GameResult>) -> Summary {
        let seeds: Vec<u64> = results.iter().filter_map(|r| r.seed).collect();
        let classes: std::collections::BTreeSet<&str> =
            seeds.iter().map(|&s| seed_class(s)).collect();
        let seed_kind = match classes.len() {
            0 => "none".to_string(),
            1 => classes.first().map_or("none", |c| c).to_string(),
            _ => "mixed".to_string(),
        };
        let kinds: std::collections::BTreeSet<&str> =
            results.iter().filter_map(|r| r.game.as_deref()).collect();
        let game = match kinds.len() {
            0 => "none".to_string(),
            1 => kinds.first().map_or("none", |g| g).to_string(),
            _ => "mixed".to_string(),
        };
        let mut sizes = BTreeMap::new();
        let mut moves = MoveScore::default();
        let mut flags = FlagScore::default();
        let mut by_kind: BTreeMap<String, KindCount> = BTreeMap::new();
        let mut latencies = Vec::new();
        let (mut exact, mut scored, mut clean_false) = (0, 0, 0);
        let (mut bumps, mut bumps_noted) = (0, 0);
        let mut groups: BTreeMap<String, SpeedGroup> = BTreeMap::new();
        let mut peaks = Vec::new();
        for r in &results {
            if let Some(n) = r.size {
                *sizes.entry(format!("{n}x{n}")).or_insert(0) += 1;
            }
            if let Some(run) = &r.recorder {
                if let Some(mb) = run.peak_mb {
                    peaks.push(mb);
                }
                if let (Some(duration), Some(format), false) =
                    (r.duration, &r.format, run.timed_out)
                {
                    let group = groups.entry(format.clone()).or_insert(SpeedGroup {
                        format: format.clone(),
                        games: 0,
                        footage_seconds: 0.0,
                        wall_seconds: 0.0,
                        times_real_time: 0.0,
                        slowest: f64::INFINITY,
                    });
                    group.games += 1;
                    group.footage_seconds += duration;
                    group.wall_seconds += run.wall_seconds;
                    if let Some(x) = run.times_real_time {
                        group.slowest = group.slowest.min(x);
                    }
                }
            }
            let Some(score) = &r.score else { continue };
            scored += 1;
            add(&mut moves, &score.moves);
            flags.anomalies += score.flags.anomalies;
            flags.right += score.flags.right;
            flags.missed += score.flags.missed;
            flags.false_flags += score.flags.false_flags;
            flags.duplicates += score.flags.duplicates;
            flags.notes += score.flags.notes;
            flags.resolved += score.flags.resolved;
            if score.flags.anomalies == 0 {
                clean_false += score.flags.false_flags;
            }
            for a in &score.anomalies {
                let count = by_kind.entry(a.kind.clone()).or_default();
                count.staged += 1;
                count.flagged += usize::from(a.flagged_at.is_some());
            }
            bumps += score.bumps.bumps;
            bumps_noted += score.bumps.noted;
            latencies.extend_from_slice(&score.latencies);
            exact += usize::from(score.exact);
        }
        let mut speed: Vec<SpeedGroup> = groups.into_values().collect();
        for g in &mut speed {
            g.times_real_time = if g.wall_seconds > 0.0 {
                g.footage_seconds / g.wall_seconds
            } else {
                0.0
            };
            if !g.slowest.is_finite() {
                g.slowest = 0.0;
            }
        }
        let footage: f64 = speed.iter().map(|g| g.footage_seconds).sum();
        let wall: f64 = speed.iter().map(|g| g.wall_seconds).sum();
        peaks.sort_by(f64::total_cmp);
        let mut summary = Summary {
            dir,
            recorder,
            game,
            games: results.len(),
            scored,
            seeds: seed_kind,
            first_seed: seeds.iter().copied().min(),
            last_seed: seeds.iter().copied().max(),
            sizes,
            with_anomalies: results.iter().filter(|r| !r.anomalies.is_empty()).count(),
            bumped: results.iter().filter(|r| r.bumps > 0).count(),
            moves_right_percent: percent(moves.right, moves.expected),
            moves_right_by_number_percent: percent(moves.right_by_number, moves.expected),
            moves_prefix_percent: percent(moves.prefix, moves.expected),
            moves,
            games_exact: exact,
            games_exact_percent: percent(exact, results.len()),
            flags,
            false_flags_in_clean_games: clean_false,
            anomalies_by_kind: by_kind,
            bumps,
            bumps_noted,
            latency: Latency::of(&latencies),
            speed,
            times_real_time: (wall > 0.0).then(|| footage / wall),
            peak_mb_max: peaks.last().copied(),
            peak_mb_median: percentile(&peaks, 0.5),
            targets: Vec::new(),
            results,
        };
        summary.targets = summary.targets();
        summary
    }

    fn targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        let (wanted, what) = match self.game.as_str() {
            "makhos" | "makruk" => (
                EIGHT_GAMES_TARGET,
                format!(
                    "at least {EIGHT_GAMES_TARGET} held-out {} games (seeds >= {HELD_OUT_SEEDS_FROM})",
                    self.game
                ),
            ),
            _ => (
                GAMES_TARGET,
                format!(
                    "at least {GAMES_TARGET} held-out games on 9x9 and 19x19 (seeds >= {HELD_OUT_SEEDS_FROM})"
                ),
            ),
        };
        let boards = match self.game.as_str() {
            "makhos" | "makruk" => true,
            _ => self.sizes.contains_key("9x9") && self.sizes.contains_key("19x19"),
        };
        targets.push(Target {
            what,
            measured: format!(
                "{} games, seeds {} ({})",
                self.games,
                match (self.first_seed, self.last_seed) {
                    (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
                    (Some(a), _) => a.to_string(),
                    _ => "-".into(),
                },
                self.seeds
            ),
            met: Some(self.games >= wanted && self.seeds == "held-out" && boards),
        });
        targets.push(Target {
            what: format!("moves right >= {MOVES_RIGHT_TARGET} %"),
            measured: show_percent(self.moves_right_percent),
            met: self.moves_right_percent.map(|p| p >= MOVES_RIGHT_TARGET),
        });
        targets.push(Target {
            what: format!("games exactly right >= {GAMES_EXACT_TARGET} %"),
            measured: show_percent(self.games_exact_percent),
            met: self.games_exact_percent.map(|p| p >= GAMES_EXACT_TARGET),
        });
        targets.push(Target {
            what: "every staged anomaly flagged with its rule".into(),
            measured: format!("{} of {}", self.flags.right, self.flags.anomalies),
            met: (self.flags.anomalies > 0).then_some(self.flags.missed == 0),
        });
        targets.push(Target {
            what: "no false flags in games without anomalies".into(),
            measured: self.false_flags_in_clean_games.to_string(),
            met: (self.scored > self.with_anomalies)
                .then_some(self.false_flags_in_clean_games == 0),
        });
        let speed = self.speed.iter().find(|g| g.format == SPEED_FORMAT);
        targets.push(Target {
            what: format!("every {SPEED_FORMAT} clip recorded >= {SPEED_TARGET}x real time"),
            measured: speed.map_or("no such clip".into(), |g| {
                format!("slowest {:.1}x, all {:.1}x", g.slowest, g.times_real_time)
            }),
            met: speed.map(|g| g.slowest >= SPEED_TARGET),
        });
        targets.push(Target {
            what: format!("peak memory <= {MEMORY_TARGET_MB} MB"),
            measured: self
                .peak_mb_max
                .map_or("not measured".into(), |mb| format!("{mb:.0} MB")),
            met: self.peak_mb_max.map(|mb| mb <= MEMORY_TARGET_MB),
        });
        targets
    }

    pub fn to_text(&self) -> String {
        let mut t = String::new();
        let m = &self.moves;
        let f = &self.flags;
        let sizes: Vec<String> = self.sizes.iter().map(|(k, v)| format!("{v} {k}")).collect();
        let _ = writeln!(
            t,
            "\nsummary of {} ({} {} games)",
            self.dir, self.games, self.game
        );
        let _ = writeln!(
            t,
            "  games              {} scored ({}), {} with anomalies, {} bumped; seeds {} ({})",
            self.scored,
            sizes.join(", "),
            self.with_anomalies,
            self.bumped,
            match (self.first_seed, self.last_seed) {
                (Some(a), Some(b)) => format!("{a}-{b}"),
                _ => "-".into(),
            },
            self.seeds
        );
        let _ = writeln!(
            t,
            "  moves right        {} of {} ({}) aligned; {} missed, {} extra, {} wrong, {} corrected",
            m.right,
            m.expected,
            show_percent(self.moves_right_percent),
            m.missed,
            m.extra,
            m.wrong,
            m.corrections
        );
        let _ = writeln!(
            t,
            "                     {} ({}) by move number; {} ({}) before each game's first mistake",
            m.right_by_number,
            show_percent(self.moves_right_by_number_percent),
            m.prefix,
            show_percent(self.moves_prefix_percent)
        );
        let _ = writeln!(
            t,
            "  games exactly right {} of {} ({})",
            self.games_exact,
            self.games,
            show_percent(self.games_exact_percent)
        );
        let _ = writeln!(
            t,
            "  flags              {} of {} anomalies flagged, {} missed; {} false ({} in games without anomalies); {} duplicates, {} notes (inferred-order, repetition), {} resolved",
            f.right,
            f.anomalies,
            f.missed,
            f.false_flags,
            self.false_flags_in_clean_games,
            f.duplicates,
            f.notes,
            f.resolved
        );
        for (kind, count) in &self.anomalies_by_kind {
            let _ = writeln!(t, "    {kind:<16} {} of {}", count.flagged, count.staged);
        }
        let _ = writeln!(
            t,
            "  bumps              {}, {} followed by a note",
            self.bumps, self.bumps_noted
        );
        let l = &self.latency;
        let secs = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2} s"));
        let _ = writeln!(
            t,
            "  latency            median {}, p95 {}, max {}; {} of {} moves over 0.5 s",
            secs(l.median),
            secs(l.p95),
            secs(l.max),
            l.over_half_second,
            l.count
        );
        let _ = writeln!(
            t,
            "  speed              {} real time overall",
            self.times_real_time
                .map_or("-".into(), |x| format!("{x:.1}x"))
        );
        for g in &self.speed {
            let _ = writeln!(
                t,
                "    {:<14} {:>2} clips, {:>7.1} s of footage in {:>7.1} s: {:.1}x (slowest {:.1}x)",
                g.format, g.games, g.footage_seconds, g.wall_seconds, g.times_real_time, g.slowest
            );
        }
        let _ = writeln!(
            t,
            "  peak memory        max {}, median {}",
            self.peak_mb_max
                .map_or("-".into(), |mb| format!("{mb:.0} MB")),
            self.peak_mb_median
                .map_or("-".into(), |mb| format!("{mb:.0} MB"))
        );
        let _ = writeln!(t, "targets");
        for target in &self.targets {
            let mark = match target.met {
                Some(true) => "met    ",
                Some(false) => "NOT MET",
                None => "n/a    ",
            };
            let _ = writeln!(t, "  {mark} {}: {}", target.what, target.measured);
        }
        t
    }
}

fn show_percent(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:.2} %"))
}
