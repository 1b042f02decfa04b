//! `kradan eval-footage DIR`: the recorder measured on rendered games (`docs/eval-footage.md`).
//!
//! Each game is a clip `kradan render` made from a record, with its exact truth; the
//! recorder (`kradan record`) is run on the clip as a child process, timed, its peak memory
//! taken, and its event log scored against the truth: moves right, games exactly right,
//! staged anomalies flagged with their rule, false flags, and how long after the hand left
//! the board each move was committed.
//!
//! A DIR that holds game folders (with `truth.json`) is read as it is and only the recorder
//! is run again; otherwise games are made into it, one folder per seed: a record (GNU Go
//! playing itself; for Mak-hos and Makruk see [`eight`]), what the seed draws for the clip
//! (`plan.json`), the clip and its truth.

pub mod eight;
pub mod events;
pub mod games;
pub mod report;
pub mod runner;
pub mod score;
pub mod truth;

pub use games::{GamePlan, Overrides};
pub use report::{GameResult, Summary};
pub use score::{GameScore, Symmetry};

use crate::render::Codec;
use crate::replay::Game;
use report::RecorderRun;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What `kradan eval-footage` was asked (the command line's parsing stays in `main`).
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Game folders are read from here, or made here.
    pub dir: PathBuf,
    /// How many games to make (default 50), or the most to read from DIR (default all).
    pub games: Option<usize>,
    /// The first seed; games use `seed_base`, `seed_base + 1`, …
    pub seed_base: u64,
    /// The game the made games are (folders read from DIR say their own).
    pub game: Game,
    /// Go board sizes, taken in turn by consecutive seeds.
    pub sizes: Vec<usize>,
    /// The share of games with staged anomalies (one, or two).
    pub anomaly_rate: f64,
    /// Keep the footage this run rendered (otherwise it is deleted once the game is
    /// scored; `plan.json` and `record.sgf` stay, enough to render it again).
    pub keep: bool,
    /// One JSON object on the output instead of the text report.
    pub json: bool,
    /// The Kradan binary run as `PROGRAM record VIDEO --out DIR --size N`.
    pub recorder: PathBuf,
    /// Games evaluated at once. More than one makes the speed figures meaningless.
    pub jobs: usize,
    pub codec: Codec,
    /// Fixed instead of drawn from the seed (quick runs, tests).
    pub overrides: Overrides,
    /// GNU Go, to play the records; random legal moves without it.
    pub gnugo: Option<PathBuf>,
    /// Fairy-Stockfish, to play the Makruk records; random legal moves without it.
    pub fairy_stockfish: Option<PathBuf>,
    /// The recorder is stopped after this long; by default a minute plus ten times the
    /// footage's length.
    pub timeout: Option<Duration>,
}

impl EvalOptions {
    /// The defaults, with this very program as the recorder (what `kradan eval-footage`
    /// wants) and GNU Go where `kradan doctor` finds it.
    pub fn new(dir: impl Into<PathBuf>) -> EvalOptions {
        EvalOptions {
            dir: dir.into(),
            games: None,
            seed_base: 1,
            game: Game::Go,
            sizes: vec![9, 19],
            anomaly_rate: 0.5,
            keep: false,
            json: false,
            recorder: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("kradan")),
            jobs: 1,
            codec: Codec::Mjpeg,
            overrides: Overrides::default(),
            gnugo: crate::peers::locate("gnugo"),
            fairy_stockfish: crate::peers::locate("fairy-stockfish"),
            timeout: None,
        }
    }

    fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            !self.sizes.is_empty(),
            "--sizes: give at least one board size"
        );
        for &size in self.sizes.iter().filter(|_| self.game == Game::Go) {
            anyhow::ensure!(
                (5..=25).contains(&size),
                "--sizes: {size} is not a Go board size (5 to 25; 9, 13, 19 in practice)"
            );
        }
        anyhow::ensure!(
            (0.0..=1.0).contains(&self.anomaly_rate),
            "--anomalies {}: expected a share from 0 to 1",
            self.anomaly_rate
        );
        anyhow::ensure!(
            (1..=64).contains(&self.jobs),
            "--jobs {}: expected 1 to 64",
            self.jobs
        );
        if let Some(games) = self.games {
            anyhow::ensure!(games >= 1, "--games: at least one game");
        }
        anyhow::ensure!(
            self.seed_base
                .checked_add(self.games.unwrap_or(0) as u64)
                .is_some(),
            "--seed-base {}: too large",
            self.seed_base
        );
        if let Some(moves) = self.overrides.moves {
            anyhow::ensure!(
                (2..=400).contains(&moves),
                "--moves {moves}: expected 2 to 400"
            );
        }
        if let Some((w, h)) = self.overrides.resolution {
            anyhow::ensure!(
                (160..=4096).contains(&w) && (120..=4096).contains(&h),
                "--resolution {w}x{h}: expected 160x120 to 4096x4096"
            );
        }
        if let Some(fps) = self.overrides.fps {
            anyhow::ensure!(
                (1.0..=120.0).contains(&fps),
                "--fps {fps}: expected 1 to 120"
            );
        }
        anyhow::ensure!(
            !self.dir.is_file(),
            "{} is a file; expected a folder of rendered games, or one to make",
            self.dir.display()
        );
        // A bare name is looked up on PATH when it runs; a path must be there now.
        if self.recorder.components().count() > 1 {
            anyhow::ensure!(
                self.recorder.is_file(),
                "--recorder {}: no such program",
                self.recorder.display()
            );
        }
        Ok(())
    }
}

/// Says what the run is doing without touching the report's output, which may be JSON.
pub(crate) fn note(text: &str) {
    eprintln!("kradan: {text}");
}

/// Parses `WxH`.
pub fn parse_resolution(text: &str) -> anyhow::Result<(u32, u32)> {
    text.split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)))
        .ok_or_else(|| anyhow::anyhow!("--resolution {text:?}: expected WxH, e.g. 1280x720"))
}

/// Parses `9,19`.
pub fn parse_sizes(text: &str) -> anyhow::Result<Vec<usize>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--sizes {text:?}: expected sizes like 9,19"))
        })
        .collect()
}

/// One game to evaluate.
#[derive(Clone, Debug)]
enum Job {
    /// Make the game for this seed in DIR/seed-NNNNNN.
    Make { seed: u64 },
    /// A folder holding a clip rendered earlier.
    Read { folder: PathBuf },
}

/// The folder a seed's game is made in.
pub fn game_folder(dir: &Path, seed: u64) -> PathBuf {
    dir.join(format!("seed-{seed:06}"))
}

/// Runs the evaluation: makes or reads the games, runs the recorder on each, prints a line
/// per game as it finishes and then the summary (or, with `json`, one JSON object) on
/// `out`. An error is bad input (options, DIR) or an output that cannot be written; what
/// goes wrong with one game is reported in its result and the run goes on.
pub fn run(options: &EvalOptions, out: &mut dyn Write) -> anyhow::Result<Summary> {
    options.check()?;
    let jobs = find_jobs(options)?;
    anyhow::ensure!(
        !jobs.is_empty(),
        "{}: no games to evaluate",
        options.dir.display()
    );
    let reading = matches!(jobs[0], Job::Read { .. });
    let header = match (&jobs[0], jobs.last()) {
        (Job::Make { seed: first }, Some(Job::Make { seed: last })) => format!(
            "eval-footage: making {} {} games in {} (seeds {first}-{last}, {}), recorder {}",
            jobs.len(),
            eight::game_name(options.game),
            options.dir.display(),
            report::seed_class(*first),
            options.recorder.display()
        ),
        _ => format!(
            "eval-footage: {} games rendered earlier in {}, recorder {}",
            jobs.len(),
            options.dir.display(),
            options.recorder.display()
        ),
    };
    if options.json {
        note(&header);
    } else {
        writeln!(out, "{header}")?;
        out.flush()?;
    }
    if options.jobs > 1 {
        note("more than one job at a time: the speed figures are not the recorder's own");
    }
    let player = match options.game {
        Game::Go => options.gnugo.as_ref().map(|_| ()).ok_or("GNU Go"),
        Game::Makruk => options
            .fairy_stockfish
            .as_ref()
            .map(|_| ())
            .ok_or("Fairy-Stockfish"),
        Game::Makhos => Ok(()),
    };
    if let (false, Err(missing)) = (reading, player) {
        note(&format!(
            "{missing} not found: the games are random legal moves"
        ));
    }

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .div_ceil(options.jobs)
        .max(1);
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<GameResult>> = vec![None; jobs.len()];
    let mut written: anyhow::Result<()> = Ok(());
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, GameResult)>();
        for _ in 0..options.jobs.min(jobs.len()) {
            let tx = tx.clone();
            let (jobs, next) = (&jobs, &next);
            s.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(index) else { break };
                    let result = evaluate(job, options, workers);
                    if tx.send((index, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (index, result) in rx {
            if written.is_ok() {
                let line = result.line();
                written = if options.json {
                    eprintln!("{line}");
                    Ok(())
                } else {
                    writeln!(out, "{line}")
                        .and_then(|()| out.flush())
                        .map_err(anyhow::Error::from)
                };
            }
            results[index] = Some(result);
        }
    });
    written?;
    let summary = Summary::of(
        options.dir.display().to_string(),
        options.recorder.display().to_string(),
        results.into_iter().flatten().collect(),
    );
    if options.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        write!(out, "{}", summary.to_text())?;
    }
    out.flush()?;
    Ok(summary)
}

fn find_jobs(options: &EvalOptions) -> anyhow::Result<Vec<Job>> {
    let mut folders = Vec::new();
    if options.dir.is_dir() {
        let entries = std::fs::read_dir(&options.dir)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", options.dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.join("truth.json").is_file() {
                folders.push(path);
            }
        }
    }
    if !folders.is_empty() {
        folders.sort();
        folders.truncate(options.games.unwrap_or(usize::MAX));
        return Ok(folders
            .into_iter()
            .map(|folder| Job::Read { folder })
            .collect());
    }
    std::fs::create_dir_all(&options.dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", options.dir.display()))?;
    let games = options.games.unwrap_or(report::GAMES_TARGET) as u64;
    Ok((options.seed_base..options.seed_base + games)
        .map(|seed| Job::Make { seed })
        .collect())
}

/// Makes (or finds) one game's clip, runs the recorder on it and scores it.
fn evaluate(job: &Job, options: &EvalOptions, workers: usize) -> GameResult {
    let (folder, mut result) = match job {
        Job::Make { seed } => (
            game_folder(&options.dir, *seed),
            GameResult {
                seed: Some(*seed),
                ..GameResult::default()
            },
        ),
        Job::Read { folder } => (folder.clone(), GameResult::default()),
    };
    result.name = folder.file_name().map_or_else(
        || folder.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut rendered_now = false;
    if let Job::Make { seed } = job {
        match make_game(*seed, &folder, options, workers) {
            Ok((plan, seconds)) => {
                result.generator = Some(plan.generator);
                result.render_seconds = Some(seconds);
                rendered_now = true;
            }
            Err(error) => {
                result.problems.push(format!("not rendered: {error:#}"));
                return result;
            }
        }
    }
    let truth = match truth::Truth::load(&folder.join("truth.json")) {
        Ok(truth) => truth,
        Err(error) => {
            result.problems.push(format!("{error:#}"));
            return result;
        }
    };
    result.seed = Some(truth.seed);
    result.game = Some(truth.game.clone());
    result.size = Some(truth.board.cells);
    result.format = Some(format!(
        "{}x{}@{}",
        truth.camera.width, truth.camera.height, truth.fps
    ));
    result.style = Some(truth.style.clone());
    result.duration = Some(truth.duration);
    result.anomalies = truth
        .anomalies
        .iter()
        .map(|a| format!("{}@{}", a.kind, a.move_number))
        .collect();
    result.bumps = truth.bumps.len();

    let video = folder.join(&truth.video);
    if !video.is_file() {
        // Rendered by an earlier run that did not keep it: the plan makes it again.
        match rerender(&folder, workers) {
            Ok(seconds) => {
                result.render_seconds = Some(seconds);
                rendered_now = true;
            }
            Err(error) => {
                result
                    .problems
                    .push(format!("{} is missing: {error:#}", video.display()));
                return result;
            }
        }
    }

    let recorded_dir = folder.join("recorded");
    if recorded_dir.exists()
        && let Err(error) = std::fs::remove_dir_all(&recorded_dir)
    {
        result.problems.push(format!(
            "cannot clear the last run's {}: {error}",
            recorded_dir.display()
        ));
        return result;
    }
    let timeout = options
        .timeout
        .unwrap_or_else(|| Duration::from_secs_f64(60.0 + 10.0 * truth.duration));
    let game = match eight::parse_game(&truth.game) {
        Ok(game) => game,
        Err(error) => {
            result.problems.push(format!("{error:#}"));
            return result;
        }
    };
    // A Go board's size is told, as a club's recorder would be; an 8×8 game is named.
    let (option, value) = match game {
        Game::Go => ("--size", truth.board.cells.to_string()),
        other => ("--game", eight::game_name(other).to_string()),
    };
    let args = [
        "record".as_ref(),
        video.as_os_str(),
        "--out".as_ref(),
        recorded_dir.as_os_str(),
        option.as_ref(),
        value.as_ref(),
    ];
    match runner::run_measured(
        &options.recorder,
        &args,
        &folder.join("recorder.log"),
        timeout,
    ) {
        Ok(stats) => {
            if stats.timed_out {
                result.problems.push(format!(
                    "the recorder was stopped after {:.0} s",
                    stats.wall_seconds
                ));
            } else if stats.status != Some(0) {
                result.problems.push(format!(
                    "the recorder {} (see {})",
                    stats
                        .status
                        .map_or("was killed by a signal".into(), |s| format!(
                            "exited with status {s}"
                        )),
                    folder.join("recorder.log").display()
                ));
            }
            result.recorder = Some(RecorderRun {
                wall_seconds: stats.wall_seconds,
                times_real_time: (stats.wall_seconds > 0.0)
                    .then(|| truth.duration / stats.wall_seconds),
                peak_mb: stats.peak_kb.map(|kb| kb as f64 / 1024.0),
                exit_status: stats.status,
                timed_out: stats.timed_out,
            });
        }
        Err(error) => result.problems.push(format!(
            "cannot run {}: {error}",
            options.recorder.display()
        )),
    }
    let events_path = recorded_dir.join("events.jsonl");
    let recorded = if events_path.is_file() {
        match events::Recorded::load(&events_path) {
            Ok(recorded) => recorded,
            Err(error) => {
                result.problems.push(format!("{error:#}"));
                events::Recorded::default()
            }
        }
    } else {
        result.problems.push(format!(
            "no {}: scored as an empty record",
            events_path.display()
        ));
        events::Recorded::default()
    };
    if recorded.unreadable_lines > 0 {
        result.problems.push(format!(
            "{} line(s) of events.jsonl are not events of the documented shape",
            recorded.unreadable_lines
        ));
    }
    result.score = if game == Game::Go {
        Some(score::score(&truth, &recorded))
    } else {
        let file = recorded_dir.join(eight::recorded_name(game));
        let moves = match std::fs::read_to_string(&file) {
            Ok(text) => eight::record_moves(game, &text)
                .map_err(|e| {
                    result.problems.push(format!(
                        "{}: {e:#}; moves read from events.jsonl",
                        file.display()
                    ))
                })
                .ok(),
            Err(_) => {
                result.problems.push(format!(
                    "no {}: moves read from events.jsonl",
                    file.display()
                ));
                None
            }
        };
        match eight::score(&truth, &recorded, moves.as_deref()) {
            Ok((score, problems)) => {
                result.problems.extend(problems);
                Some(score)
            }
            Err(error) => {
                result.problems.push(format!("{error:#}"));
                None
            }
        }
    };
    if rendered_now && !options.keep {
        let _ = std::fs::remove_file(&video);
    }
    result
}

/// Plays the seed's record, draws its clip and anomalies, and renders it into `folder`.
/// Returns the plan and the wall time of the render.
fn make_game(
    seed: u64,
    folder: &Path,
    options: &EvalOptions,
    workers: usize,
) -> anyhow::Result<(GamePlan, f64)> {
    std::fs::create_dir_all(folder)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", folder.display()))?;
    let (plan, record) = if options.game == Game::Go {
        games::prepare(
            seed,
            &options.sizes,
            options.codec,
            &options.overrides,
            options.anomaly_rate,
            options.gnugo.as_deref(),
        )
    } else {
        let mut plan = games::draw_plan(seed, &[8], options.codec, &options.overrides);
        let (record, generator) = eight::generate_record(
            options.game,
            plan.moves,
            seed,
            options.fairy_stockfish.as_deref(),
        )?;
        plan.generator = generator;
        eight::place_anomalies(&mut plan, options.game, &record, options.anomaly_rate);
        (plan, record)
    };
    let write = |name: &str, text: &str| {
        let path = folder.join(name);
        std::fs::write(&path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    };
    write(eight::record_name(options.game), &record)?;
    write(
        "plan.json",
        &format!("{}\n", serde_json::to_string_pretty(&plan)?),
    )?;
    let seconds = render_plan(&plan, folder, workers)?;
    Ok((plan, seconds))
}

/// Renders a game folder's clip again from its `plan.json` and record.
fn rerender(folder: &Path, workers: usize) -> anyhow::Result<f64> {
    let path = folder.join("plan.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("cannot read {} to render it again: {e}", path.display()))?;
    let plan: GamePlan =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    render_plan(&plan, folder, workers)
}

fn render_plan(plan: &GamePlan, folder: &Path, workers: usize) -> anyhow::Result<f64> {
    let started = Instant::now();
    let options = plan.render_options(workers)?;
    let (_, record) = eight::find_record(folder)
        .ok_or_else(|| anyhow::anyhow!("{}: no record.sgf, .pdn or .pgn", folder.display()))?;
    crate::render::render(&record, folder, &options, |_, _| {})?;
    Ok(started.elapsed().as_secs_f64())
}
