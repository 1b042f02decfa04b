//! The games of an evaluation: a record per seed (GNU Go playing itself, or random legal
//! moves when GNU Go is absent), and what the seed draws for its clip — board size, length,
//! picture size, frame rate, style, and the anomalies staged in it.

use crate::games::Color;
use crate::games::go::sgf::{self, GoRecord, RecordedMove};
use crate::games::go::{Move, Point, Position};
use crate::reading::synth::Rng;
use crate::render::scene::{SceneRequest, Style};
use crate::render::script::AnomalyRequest;
use crate::render::{self, Codec, RenderOptions};
use crate::replay::Game;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// The anomalies a generated game may have staged: every Go kind that owes a flag. Bumps
/// come from the clip's style instead (a third of the clips), since they owe none.
pub const FLAGGED_KINDS: &[&str] = &[
    "double-move",
    "takeback",
    "slide",
    "knock",
    "captures-left",
    "removed-alive",
    "ko-retake",
    "suicide",
    "board-knock",
    "added",
];

/// Staged anomalies stay this many record moves apart, so each flag can be told to answer
/// one of them.
const ANOMALY_SPACING: usize = 8;
/// Nor before this move (the board needs stones to knock or remove) …
const FIRST_ANOMALY_MOVE: usize = 6;
/// … nor in the last moves, so the recorder has the moves it needs to see the breach.
const MOVES_AFTER_ANOMALY: usize = 4;

/// Everything a seed decides, written to `plan.json` beside the clip so the clip can be
/// rendered again from the folder alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GamePlan {
    pub seed: u64,
    pub size: usize,
    /// Moves asked of the game's players (fewer when they passed or resigned earlier).
    pub moves: usize,
    pub resolution: [u32; 2],
    pub fps: f64,
    /// `varied`, `clean` or `hard`.
    pub style: String,
    /// `h264` or `mjpeg`.
    pub codec: String,
    /// `KIND@MOVE`, in the record's move numbers, as `kradan render --anomaly` takes them.
    pub anomalies: Vec<String>,
    /// Who played the record.
    pub generator: String,
}

/// What the caller fixes instead of the seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    pub moves: Option<usize>,
    pub resolution: Option<(u32, u32)>,
    pub fps: Option<f64>,
}

pub fn style_name(style: Style) -> &'static str {
    match style {
        Style::Varied => "varied",
        Style::Clean => "clean",
        Style::Hard => "hard",
    }
}

pub fn codec_name(codec: Codec) -> &'static str {
    match codec {
        Codec::H264 => "h264",
        Codec::Mjpeg => "mjpeg",
    }
}

/// The seed's clip, before its record exists: size from the seed's place in `sizes` (so
/// any run of consecutive seeds is balanced), the rest drawn.
pub fn draw_plan(seed: u64, sizes: &[usize], codec: Codec, overrides: &Overrides) -> GamePlan {
    let mut rng = Rng::new(seed ^ 0xe7a1_f007_a9e0);
    let size = sizes[(seed % sizes.len().max(1) as u64) as usize];
    let (low, high) = match size {
        s if s <= 9 => (30, 60),
        s if s <= 13 => (35, 70),
        _ => (40, 80),
    };
    // Mostly the cameras a club uses; some 1080p30, where the speed target is set. Those
    // frames cost five times a 720p frame to render, so their games are the shortest.
    let (resolution, fps) = match rng.below(20) {
        0..=6 => ([640, 480], 15.0),
        7..=13 => ([1280, 720], 15.0),
        14..=16 => ([1280, 720], 30.0),
        _ => ([1920, 1080], 30.0),
    };
    let moves = if resolution[0] >= 1920 {
        low + rng.below(7)
    } else {
        low + rng.below(high - low + 1)
    };
    // A quarter clean (no accidents), the rest varied (a bump in 30 %) or hard (always a
    // bump): about a third of the clips are bumped.
    let style = match rng.below(20) {
        0..=4 => Style::Clean,
        5..=16 => Style::Varied,
        _ => Style::Hard,
    };
    GamePlan {
        seed,
        size,
        moves: overrides.moves.unwrap_or(moves),
        resolution: overrides.resolution.map_or(resolution, |(w, h)| [w, h]),
        fps: overrides.fps.unwrap_or(fps),
        style: style_name(style).to_string(),
        codec: codec_name(codec).to_string(),
        anomalies: Vec::new(),
        generator: String::new(),
    }
}

impl GamePlan {
    pub fn render_options(&self, workers: usize) -> anyhow::Result<RenderOptions> {
        let style = match self.style.as_str() {
            "varied" => Style::Varied,
            "clean" => Style::Clean,
            "hard" => Style::Hard,
            other => anyhow::bail!("plan.json: unknown style {other:?}"),
        };
        let codec = match self.codec.as_str() {
            "h264" => Codec::H264,
            "mjpeg" => Codec::Mjpeg,
            other => anyhow::bail!("plan.json: unknown codec {other:?}"),
        };
        let anomalies = self
            .anomalies
            .iter()
            .map(|a| {
                a.parse()
                    .map_err(|e: String| anyhow::anyhow!("plan.json: {e}"))
            })
            .collect::<anyhow::Result<Vec<AnomalyRequest>>>()?;
        Ok(RenderOptions {
            seed: self.seed,
            style,
            anomalies,
            frames: false,
            scene: SceneRequest {
                resolution: Some((self.resolution[0], self.resolution[1])),
                fps: Some(self.fps),
                tilt: None,
            },
            limit_seconds: None,
            limit_moves: None,
            workers: workers.max(1),
            codec,
        })
    }

    /// Draws the staged anomalies: with chance `rate` one (or, one time in three, two)
    /// kinds, each at a move where the record can host it — a ko to retake, a capture to
    /// leave on the board — tried through the renderer's own planner, which refuses what
    /// it cannot stage.
    pub fn place_anomalies(&mut self, record: &str, rate: f64) {
        let mut rng = Rng::new(self.seed ^ 0xa00a_11e5);
        self.anomalies.clear();
        if !rng.chance(rate as f32) {
            return;
        }
        let wanted = if rng.chance(1.0 / 3.0) { 2 } else { 1 };
        let Ok(parsed) = sgf::read(record) else {
            return;
        };
        let last = parsed.moves.len().saturating_sub(MOVES_AFTER_ANOMALY);
        let mut placed: Vec<(String, usize)> = Vec::new();
        for _ in 0..wanted {
            let mut kinds: Vec<&str> = FLAGGED_KINDS.to_vec();
            shuffle(&mut kinds, &mut rng);
            let mut moves: Vec<usize> = (FIRST_ANOMALY_MOVE..=last).collect();
            shuffle(&mut moves, &mut rng);
            let found = kinds.iter().find_map(|kind| {
                moves
                    .iter()
                    .copied()
                    .filter(|&at| {
                        placed
                            .iter()
                            .all(|(_, other)| other.abs_diff(at) >= ANOMALY_SPACING)
                    })
                    .find(|&at| {
                        let mut trial = placed.clone();
                        trial.push((kind.to_string(), at));
                        self.hosts(record, &trial)
                    })
                    .map(|at| (kind.to_string(), at))
            });
            match found {
                Some(anomaly) => placed.push(anomaly),
                None => break,
            }
        }
        placed.sort_by_key(|(_, at)| *at);
        self.anomalies = placed
            .into_iter()
            .map(|(kind, at)| format!("{kind}@{at}"))
            .collect();
    }

    fn hosts(&self, record: &str, anomalies: &[(String, usize)]) -> bool {
        let Ok(mut options) = self.render_options(1) else {
            return false;
        };
        options.anomalies = anomalies
            .iter()
            .map(|(kind, at)| AnomalyRequest {
                kind: kind.clone(),
                at: *at,
            })
            .collect();
        render::plan(Game::Go, record, &options).is_ok()
    }
}

fn shuffle<T>(items: &mut [T], rng: &mut Rng) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

/// A game of up to `moves` moves on `size` lines for `seed`: GNU Go playing itself when
/// `gnugo` is given and answers, otherwise random legal moves. Returns the SGF and who
/// played it. Play stops before the first pass (a camera cannot see a pass, so a clip
/// with one tests the operator, not the recorder) and at a resignation.
pub fn generate_record(
    size: usize,
    moves: usize,
    seed: u64,
    gnugo: Option<&Path>,
) -> (String, String) {
    if let Some(program) = gnugo {
        match gnugo_game(program, size, moves, seed) {
            Ok((version, played)) if played.len() >= moves.min(10) => {
                let who = format!(
                    "GNU Go {version} level 1 self-play, --seed {}",
                    gnugo_seed(seed)
                );
                return (write_record(size, &played, &who), who);
            }
            Ok((_, played)) => super::note(&format!(
                "GNU Go ended the seed {seed} game after {} moves; random moves instead",
                played.len()
            )),
            Err(error) => super::note(&format!(
                "GNU Go could not play the seed {seed} game ({error}); random moves instead"
            )),
        }
    }
    let who = "random legal moves (GNU Go absent)".to_string();
    let played = random_game(size, moves, seed);
    (write_record(size, &played, &who), who)
}

/// GNU Go takes a seed that fits a C int.
fn gnugo_seed(seed: u64) -> u64 {
    seed % 2_000_000_000 + 1
}

fn write_record(size: usize, played: &[(Color, Point)], who: &str) -> String {
    let mut record = GoRecord::new(size);
    record.info.push(("PB".into(), who.into()));
    record.info.push(("PW".into(), who.into()));
    record.moves = played
        .iter()
        .map(|&(color, point)| RecordedMove {
            color,
            mv: Move::Play(point),
            comment: None,
            line: 0,
        })
        .collect();
    sgf::write(&record)
}

fn gnugo_game(
    program: &Path,
    size: usize,
    moves: usize,
    seed: u64,
) -> anyhow::Result<(String, Vec<(Color, Point)>)> {
    let mut child = Command::new(program)
        .args([
            "--mode",
            "gtp",
            "--level",
            "1",
            "--forbid-suicide",
            "--simple-ko",
        ])
        .arg("--seed")
        .arg(gnugo_seed(seed).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let result = (|| {
        let mut input = BufWriter::new(
            child
                .stdin
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdin"))?,
        );
        let mut output = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| anyhow::anyhow!("no stdout"))?,
        );
        let mut ask = |command: &str| -> anyhow::Result<String> {
            writeln!(input, "{command}")?;
            input.flush()?;
            let mut answer = String::new();
            loop {
                let mut line = String::new();
                anyhow::ensure!(output.read_line(&mut line)? > 0, "GNU Go stopped answering");
                if line.trim().is_empty() && !answer.is_empty() {
                    break;
                }
                answer.push_str(&line);
            }
            let answer = answer.trim();
            match answer.strip_prefix('=') {
                Some(body) => Ok(body.trim().to_string()),
                None => anyhow::bail!("GNU Go refused {command:?}: {answer}"),
            }
        };
        // The version goes into the record: another GNU Go may play another game.
        let version = ask("version")?;
        ask(&format!("boardsize {size}"))?;
        ask("clear_board")?;
        ask("komi 6.5")?;
        let mut position = Position::new(size);
        let mut played = Vec::new();
        let mut color = Color::Black;
        while played.len() < moves {
            let name = if color == Color::Black {
                "black"
            } else {
                "white"
            };
            let answer = ask(&format!("genmove {name}"))?;
            let Some(point) = Point::from_gtp(&answer, size) else {
                break; // a pass or a resignation
            };
            // Our engine judges the record the renderer replays; a move it refuses would
            // stop the render, so the game stops there instead.
            if position.play(color, Move::Play(point)).is_err() {
                break;
            }
            played.push((color, point));
            color = color.opponent();
        }
        let _ = ask("quit");
        Ok((version, played))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Random legal moves that do not fill the player's own one-point eyes, so groups live and
/// captures happen as in a real game rather than the board filling up.
fn random_game(size: usize, moves: usize, seed: u64) -> Vec<(Color, Point)> {
    let mut rng = Rng::new(seed ^ 0x4a_4d0d);
    let mut position = Position::new(size);
    let mut played = Vec::new();
    let mut color = Color::Black;
    while played.len() < moves {
        let board = position.board();
        let candidates: Vec<Point> = board
            .points()
            .filter(|&p| board.get(p).is_none())
            .filter(|&p| !board.neighbors(p).all(|n| board.get(n) == Some(color)))
            .filter(|&p| position.judge(color, Move::Play(p)).is_ok())
            .collect();
        if candidates.is_empty() {
            break;
        }
        let point = candidates[rng.below(candidates.len())];
        if position.play(color, Move::Play(point)).is_err() {
            break;
        }
        played.push((color, point));
        color = color.opponent();
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_plan_and_sizes_alternate() {
        let a = draw_plan(10, &[9, 19], Codec::Mjpeg, &Overrides::default());
        let b = draw_plan(10, &[9, 19], Codec::Mjpeg, &Overrides::default());
        assert_eq!(a, b);
        assert_eq!(a.size, 9);
        assert!((30..=60).contains(&a.moves));
        let c = draw_plan(11, &[9, 19], Codec::Mjpeg, &Overrides::default());
        assert_eq!(c.size, 19);
        assert!((40..=80).contains(&c.moves));
    }

    #[test]
    fn the_shares_of_pictures_and_styles_are_as_documented() {
        let plans: Vec<GamePlan> = (0..1000)
            .map(|seed| draw_plan(seed, &[9, 19], Codec::Mjpeg, &Overrides::default()))
            .collect();
        let share = |f: &dyn Fn(&GamePlan) -> bool| {
            plans.iter().filter(|p| f(p)).count() as f64 / plans.len() as f64
        };
        let near = |got: f64, want: f64| (got - want).abs() < 0.05;
        assert!(near(share(&|p| p.resolution == [640, 480]), 0.35));
        assert!(near(share(&|p| p.resolution == [1920, 1080]), 0.15));
        assert!(near(share(&|p| p.fps == 30.0), 0.30));
        assert!(near(share(&|p| p.style == "clean"), 0.25));
        assert!(near(share(&|p| p.style == "hard"), 0.15));
        // Varied clips are bumped 30 % of the time, hard ones always: about a third.
        let bumped = 0.3 * share(&|p| p.style == "varied") + share(&|p| p.style == "hard");
        assert!(near(bumped, 1.0 / 3.0), "{bumped}");
        assert!(
            plans
                .iter()
                .filter(|p| p.resolution == [1920, 1080])
                .all(|p| p.moves <= if p.size == 9 { 36 } else { 46 })
        );
    }

    #[test]
    fn random_games_are_legal_and_repeatable() {
        let (first, who) = generate_record(9, 40, 7, None);
        let (again, _) = generate_record(9, 40, 7, None);
        assert_eq!(first, again);
        assert!(who.contains("random"));
        let record = sgf::read(&first).unwrap();
        assert_eq!(record.moves.len(), 40);
        let report = crate::games::go::replay::replay(&first).unwrap();
        assert!(!report.has_illegal_moves());
    }

    #[test]
    fn anomalies_land_where_the_record_can_host_them() {
        let (record, _) = generate_record(9, 50, 11, None);
        let mut staged = 0;
        for seed in 0..12 {
            let mut plan = draw_plan(seed, &[9], Codec::Mjpeg, &Overrides::default());
            plan.place_anomalies(&record, 1.0);
            assert!(!plan.anomalies.is_empty(), "seed {seed}: {plan:?}");
            let options = plan.render_options(1).unwrap();
            render::plan(Game::Go, &record, &options).unwrap();
            staged += plan.anomalies.len();
            let numbers: Vec<usize> = plan
                .anomalies
                .iter()
                .map(|a| a.split_once('@').unwrap().1.parse().unwrap())
                .collect();
            assert!(numbers.windows(2).all(|w| w[1] - w[0] >= ANOMALY_SPACING));
        }
        assert!(staged > 12, "some games get two anomalies");
        let mut none = draw_plan(3, &[9], Codec::Mjpeg, &Overrides::default());
        none.place_anomalies(&record, 0.0);
        assert!(none.anomalies.is_empty());
    }
}
