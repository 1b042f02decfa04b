//! The games of an evaluation: a record per seed (GNU Go playing itself, or random legal
//! moves when GNU Go is absent), and what the seed draws for its clip — board size, length,
//! picture size, frame rate, style, and the anomalies staged in it.

use crate::games::Color;
use crate::games::go::sgf::{self, GoRecord, RecordedMove};
use crate::games::go::{Move, Point, Position};
use crate::peers::Gtp;
use crate::reading::synth::Rng;
use crate::render::scene::{SceneRequest, Style};
use crate::render::script::AnomalyRequest;
use crate::render::{self, Codec, RenderOptions};
use crate::replay::Game;
use serde::{Deserialize, Serialize};
use std::path::Path;

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
    /// Moves in the record filmed: drawn from the seed, fewer when the players passed or
    /// resigned earlier, more when a rare anomaly needed a later situation.
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
    // Mostly the cameras a club uses; some 1080p30, where the speed target is set. A second
    // of it costs four or five seconds of 720p15 to render, so its games are the shortest.
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

/// A game as its players played it.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    pub size: usize,
    pub moves: Vec<(Color, Point)>,
    /// Who played it.
    pub generator: String,
}

impl Played {
    /// The first `len` moves as SGF.
    pub fn sgf(&self, len: usize) -> String {
        let mut record = GoRecord::new(self.size);
        record.info.push(("PB".into(), self.generator.clone()));
        record.info.push(("PW".into(), self.generator.clone()));
        record.moves = self
            .moves
            .iter()
            .take(len)
            .map(|&(color, point)| RecordedMove {
                color,
                mv: Move::Play(point),
                comment: None,
                line: 0,
            })
            .collect();
        sgf::write(&record)
    }
}

/// A game of up to `moves` moves on `size` lines for `seed`: GNU Go playing itself when
/// `gnugo` is given and answers, otherwise random legal moves. Both are repeatable, and a
/// longer game for the same seed begins with the shorter one. Play stops before the first
/// pass (a camera cannot see a pass, so a clip with one tests the operator, not the
/// recorder) and at a resignation.
pub fn play_game(size: usize, moves: usize, seed: u64, gnugo: Option<&Path>) -> Played {
    if let Some(program) = gnugo {
        match gnugo_game(program, size, moves, seed) {
            Ok((version, played)) if played.len() >= moves.min(10) => {
                return Played {
                    size,
                    moves: played,
                    generator: format!(
                        "GNU Go {version} level {GNUGO_LEVEL} self-play, --seed {}",
                        gnugo_seed(seed)
                    ),
                };
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
    Played {
        size,
        moves: random_game(size, moves, seed),
        generator: "random legal moves (GNU Go absent)".into(),
    }
}

/// The kinds that need a situation an opening seldom has (a ko, an eye, a capture): for
/// them the game is played on, up to [`longest_game`] moves, until it has one.
const RARE_KINDS: &[&str] = &["ko-retake", "suicide", "captures-left"];

fn longest_game(size: usize) -> usize {
    if size <= 9 { 100 } else { 120 }
}

/// Other games tried for a rare kind: cheap on 9×9 (a second each), 20 s each on 19×19.
fn alternative_games(size: usize) -> u64 {
    if size <= 13 { 8 } else { 2 }
}

/// One seed's game: the clip's plan with its anomalies placed, and the record to film.
///
/// With chance `rate` the seed asks for one kind of anomaly (two, one time in three),
/// drawn evenly from [`FLAGGED_KINDS`]; each goes at a move where the record can host it —
/// tried through the renderer's own planner, which refuses what it cannot stage. A rare
/// kind the drawn game cannot host makes the game longer, or, when it is the first kind
/// placed, may take another game of the seed's (except at 1080p, whose clips stay short);
/// a kind none of these hosts gives way to another.
pub fn prepare(
    seed: u64,
    sizes: &[usize],
    codec: Codec,
    overrides: &Overrides,
    rate: f64,
    gnugo: Option<&Path>,
) -> (GamePlan, String) {
    let mut plan = draw_plan(seed, sizes, codec, overrides);
    let drawn = plan.moves;
    let mut game = play_game(plan.size, plan.moves, seed, gnugo);
    plan.moves = plan.moves.min(game.moves.len());
    plan.generator = game.generator.clone();
    let mut rng = Rng::new(seed ^ 0xa00a_11e5);
    if !rng.chance(rate as f32) {
        let record = game.sgf(plan.moves);
        return (plan, record);
    }
    let wanted = if rng.chance(1.0 / 3.0) { 2 } else { 1 };
    let mut kinds: Vec<&str> = FLAGGED_KINDS.to_vec();
    shuffle(&mut kinds, &mut rng);
    let may_grow = overrides.moves.is_none() && plan.resolution[0] < 1920;
    let mut placed: Vec<(String, usize)> = Vec::new();
    for kind in kinds {
        if placed.len() == wanted {
            break;
        }
        let apart = |at: usize| {
            placed
                .iter()
                .all(|(_, other)| other.abs_diff(at) >= ANOMALY_SPACING)
        };
        let trial = |at: usize| {
            let mut trial = placed.clone();
            trial.push((kind.to_string(), at));
            trial
        };
        let record = game.sgf(plan.moves);
        let last = plan.moves.saturating_sub(MOVES_AFTER_ANOMALY);
        let mut moves: Vec<usize> = (FIRST_ANOMALY_MOVE..=last).collect();
        shuffle(&mut moves, &mut rng);
        if let Some(at) = moves
            .into_iter()
            .find(|&at| apart(at) && plan.hosts(&record, &trial(at)))
        {
            placed.push((kind.to_string(), at));
            continue;
        }
        if !may_grow || !RARE_KINDS.contains(&kind) {
            continue;
        }
        let longest = longest_game(plan.size);
        if game.moves.len() < longest {
            game = play_game(plan.size, longest, seed, gnugo);
        }
        // The earliest move that hosts it, so the clip grows as little as it must.
        let grown = (last + 1..=game.moves.len().saturating_sub(MOVES_AFTER_ANOMALY))
            .find(|&at| apart(at) && plan.hosts(&game.sgf(at + MOVES_AFTER_ANOMALY), &trial(at)));
        if let Some(at) = grown {
            plan.moves = at + MOVES_AFTER_ANOMALY;
            placed.push((kind.to_string(), at));
            continue;
        }
        if !placed.is_empty() {
            continue;
        }
        // Nothing staged yet, so the seed may play another game that has the situation:
        // one 9×9 game in eight has a ko, and GNU Go passes before a longer one would.
        for k in 1..=alternative_games(plan.size) {
            let other = play_game(plan.size, longest, seed.wrapping_add(k << 32), gnugo);
            let last = other.moves.len().saturating_sub(MOVES_AFTER_ANOMALY);
            let found = (FIRST_ANOMALY_MOVE..=last)
                .find(|&at| plan.hosts(&other.sgf(at + MOVES_AFTER_ANOMALY), &trial(at)));
            if let Some(at) = found {
                plan.moves = (at + MOVES_AFTER_ANOMALY).max(drawn.min(other.moves.len()));
                game = other;
                placed.push((kind.to_string(), at));
                break;
            }
        }
    }
    // A longer record changes what the earlier anomalies stand among: check them together.
    let record = game.sgf(plan.moves);
    while !placed.is_empty() && !plan.hosts(&record, &placed) {
        placed.pop();
    }
    placed.sort_by_key(|(_, at)| *at);
    plan.anomalies = placed
        .into_iter()
        .map(|(kind, at)| format!("{kind}@{at}"))
        .collect();
    plan.generator = game.generator.clone();
    (plan, record)
}

/// Level 1 passes after 25-35 moves on 9×9, before the endgame; level 5 plays 40-65 and
/// costs about the same on 19×19 (10 s for 80 moves on the 2-core machine).
const GNUGO_LEVEL: &str = "5";

/// GNU Go takes a seed that fits a C int; mixed, so that the seed's other games (high
/// bits) are other games.
fn gnugo_seed(seed: u64) -> u64 {
    Rng::new(seed).next_u64() % 2_000_000_000 + 1
}

fn gnugo_game(
    program: &Path,
    size: usize,
    moves: usize,
    seed: u64,
) -> anyhow::Result<(String, Vec<(Color, Point)>)> {
    let args = [
        "--level",
        GNUGO_LEVEL,
        "--forbid-suicide",
        "--simple-ko",
        // Plays on to take dead stones off instead of passing: the endgame captures
        // and eyes that ko retakes and suicides need.
        "--capture-all-dead",
        "--seed",
    ]
    .map(String::from);
    let mut args = args.to_vec();
    args.push(gnugo_seed(seed).to_string());
    let mut gtp = Gtp::start(program, &args)?;
    // The version goes into the record: another GNU Go may play another game.
    let version = gtp.must("version")?;
    gtp.must(&format!("boardsize {size}"))?;
    gtp.must("clear_board")?;
    gtp.must("komi 6.5")?;
    let mut position = Position::new(size);
    let mut played = Vec::new();
    let mut color = Color::Black;
    while played.len() < moves {
        let name = if color == Color::Black {
            "black"
        } else {
            "white"
        };
        let answer = gtp.must(&format!("genmove {name}"))?;
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
    Ok((version, played))
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
    fn random_games_are_legal_repeatable_and_grow_from_their_start() {
        let first = play_game(9, 40, 7, None);
        assert_eq!(first, play_game(9, 40, 7, None));
        assert!(first.generator.contains("random"));
        let longer = play_game(9, 60, 7, None);
        assert_eq!(longer.moves[..40], first.moves[..]);
        let record = sgf::read(&longer.sgf(40)).unwrap();
        assert_eq!(record.moves.len(), 40);
        let report = crate::games::go::replay::replay(&longer.sgf(60)).unwrap();
        assert!(!report.has_illegal_moves());
    }

    #[test]
    fn gnugo_games_are_repeatable_by_seed() {
        let Some(gnugo) = crate::peers::locate("gnugo") else {
            eprintln!("skipped: gnugo is not installed");
            return;
        };
        let first = play_game(9, 12, 3, Some(&gnugo));
        assert!(first.generator.contains("GNU Go"), "{}", first.generator);
        assert_eq!(first.moves.len(), 12);
        assert_eq!(first, play_game(9, 12, 3, Some(&gnugo)));
        let report = crate::games::go::replay::replay(&first.sgf(12)).unwrap();
        assert!(!report.has_illegal_moves());
    }

    #[test]
    fn anomalies_land_where_the_record_can_host_them_and_every_kind_is_drawn() {
        let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
        let mut two = 0;
        for seed in 0..60 {
            let (plan, record) =
                prepare(seed, &[9], Codec::Mjpeg, &Overrides::default(), 1.0, None);
            assert!(!plan.anomalies.is_empty(), "seed {seed}: {plan:?}");
            assert_eq!(sgf::read(&record).unwrap().moves.len(), plan.moves);
            let options = plan.render_options(1).unwrap();
            render::plan(Game::Go, &record, &options).unwrap();
            let numbers: Vec<usize> = plan
                .anomalies
                .iter()
                .map(|a| a.split_once('@').unwrap().1.parse().unwrap())
                .collect();
            assert!(numbers.windows(2).all(|w| w[1] - w[0] >= ANOMALY_SPACING));
            assert!(
                numbers
                    .iter()
                    .all(|&n| n + MOVES_AFTER_ANOMALY <= plan.moves)
            );
            two += usize::from(numbers.len() == 2);
            for a in &plan.anomalies {
                *kinds
                    .entry(a.split_once('@').unwrap().0.to_string())
                    .or_default() += 1;
            }
        }
        assert!(two > 5, "some games get two anomalies");
        for kind in FLAGGED_KINDS {
            assert!(kinds.contains_key(*kind), "{kind} never staged: {kinds:?}");
        }
        let (plan, _) = prepare(3, &[9], Codec::Mjpeg, &Overrides::default(), 0.0, None);
        assert!(plan.anomalies.is_empty());
    }
}
