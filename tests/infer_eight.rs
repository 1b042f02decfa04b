//! The Mak-hos and Makruk inference stages fed the truth of staged games: the renderer's
//! script and timeline (no pictures), sampled at 10 frames a second, settled as the
//! tracker settles them, with per-square noise and tall Makruk pieces hiding the square
//! behind them. Checked against the record the clip plays and the anomalies it stages.
//!
//! `cargo test --release --test infer_eight -- --ignored --nocapture measure` prints the
//! figures of `docs/infer-eight.md` (held-out seeds from 100000).

use kradan::games::makhos::{self, Men, Position as HosPosition, WrittenMove, write_pdn};
use kradan::games::makruk::{Position as RukPosition, write_pgn};
use kradan::games::{Color, Occupancy};
use kradan::infer::eight::Seen8;
use kradan::infer::go::InferOptions;
use kradan::infer::makhos::{self as hos_infer, MakhosInference};
use kradan::infer::makruk::{self as ruk_infer, MakrukInference};
use kradan::reading::synth::Rng;
use kradan::render::scene::{self, Shape};
use kradan::render::script::{AnomalyRequest, Mark};
use kradan::render::{self, RenderOptions, timeline};
use kradan::replay::Game;

/// One sampled frame: the board as its pieces stand (rounded to squares), its tall pieces,
/// and whether a hand is in the picture.
struct Frame {
    t: f64,
    board: Occupancy,
    tall: Vec<(usize, usize)>,
    hand: bool,
}

struct Staged {
    frames: Vec<Frame>,
    /// The moves the final record must hold, as (colour, notation).
    record: Vec<(Color, String)>,
    /// Anomalies staged: (kind, physical move number).
    anomalies: Vec<(String, usize)>,
}

fn stage(game: Game, text: &str, seed: u64, anomalies: &[AnomalyRequest]) -> Option<Staged> {
    let options = RenderOptions {
        seed,
        anomalies: anomalies.to_vec(),
        ..RenderOptions::default()
    };
    let (script, layout) = render::plan(game, text, &options).ok()?;
    let scene = scene::draw_scene(layout, seed, options.style, &options.scene);
    let timeline = timeline::lay_out(&script, &scene, seed);
    let fps = 10.0;
    let frames = (0..(timeline.duration * fps) as usize)
        .map(|i| {
            let t = i as f64 / fps;
            let mut board = Occupancy::empty(8, 8);
            let mut tall = Vec::new();
            for piece in &timeline.board_at(t).pieces {
                let (c, r) = (piece.cell[0].round(), piece.cell[1].round());
                if (0.0..8.0).contains(&c) && (0.0..8.0).contains(&r) {
                    board.set(r as usize, c as usize, Some(piece.color));
                    if matches!(
                        piece.shape,
                        Shape::Khun | Shape::Ruea | Shape::Ma | Shape::Khon
                    ) {
                        tall.push((r as usize, c as usize));
                    }
                }
            }
            Frame {
                t,
                board,
                tall,
                hand: timeline.pass_at(t).is_some(),
            }
        })
        .collect();
    let mut moves: Vec<(usize, Color, String)> = Vec::new();
    let mut staged = Vec::new();
    let mut retracted = Vec::new();
    for m in &timeline.marks {
        match &m.mark {
            Mark::Move {
                number,
                color,
                notation,
                ..
            } => moves.push((*number, *color, notation.clone())),
            Mark::Anomaly(a) => {
                if a.kind == "missed-capture"
                    || (a.kind == "double-move" && a.note.contains("taken back"))
                {
                    retracted.push(a.move_number);
                }
                staged.push((a.kind.clone(), a.move_number));
            }
            _ => {}
        }
    }
    let record = moves
        .into_iter()
        .filter(|(n, _, _)| !retracted.contains(n))
        .map(|(_, c, s)| (c, s))
        .collect();
    Some(Staged {
        frames,
        record,
        anomalies: staged,
    })
}

/// Per-square probabilities of `[empty, dark, light]` for a frame.
fn sighting(frame: &Frame, noisy: bool, rng: &mut Rng) -> Vec<[f32; 3]> {
    let mut squares = Vec::with_capacity(64);
    for row in 0..8 {
        for col in 0..8 {
            let truth = match frame.board.get(row, col) {
                None => 0,
                Some(Color::Black) => 1,
                Some(Color::White) => 2,
            };
            let sure = if noisy { rng.range(0.7, 0.99) } else { 0.98 };
            let mut p = [(1.0 - sure) / 2.0; 3];
            p[truth] = sure;
            // The square behind a tall piece (farther from the camera, one row up) is
            // often hidden; now and then any square reads unsure.
            let hidden = frame.tall.contains(&(row + 1, col)) && rng.chance(0.5);
            if noisy && (hidden || rng.chance(0.02)) {
                let wrong = (truth + 1 + rng.below(2)) % 3;
                p = [0.3; 3];
                p[truth] = 0.4;
                p[wrong] = 0.35;
            }
            squares.push(p);
        }
    }
    squares
}

/// What a stage returns, reduced to what the checks compare.
#[derive(Default)]
struct Decided {
    record: Vec<(Color, String)>,
    flags: Vec<(String, Option<usize>)>,
}

trait Stage8 {
    fn observe(&mut self, seen: &Seen8, decided: &mut Decided) -> bool;
    fn board(&self) -> Occupancy;
}

impl Stage8 for MakhosInference {
    fn observe(&mut self, seen: &Seen8, decided: &mut Decided) -> bool {
        let outcomes = MakhosInference::observe(self, seen);
        for outcome in &outcomes {
            match outcome {
                hos_infer::Outcome::Move {
                    number, color, mv, ..
                } => {
                    decided.record.truncate(number - 1);
                    decided.record.push((*color, mv.to_string()));
                }
                hos_infer::Outcome::TakenBack { number } => decided.record.truncate(number - 1),
                hos_infer::Outcome::Flag(f) => decided
                    .flags
                    .push((f.kind.name().to_string(), f.move_number)),
                _ => {}
            }
        }
        !outcomes.is_empty()
    }
    fn board(&self) -> Occupancy {
        MakhosInference::board(self)
    }
}

impl Stage8 for MakrukInference {
    fn observe(&mut self, seen: &Seen8, decided: &mut Decided) -> bool {
        let outcomes = MakrukInference::observe(self, seen);
        for outcome in &outcomes {
            match outcome {
                ruk_infer::Outcome::Move {
                    number, color, san, ..
                } => {
                    decided.record.truncate(number - 1);
                    decided.record.push((*color, san.clone()));
                }
                ruk_infer::Outcome::TakenBack { number } => decided.record.truncate(number - 1),
                ruk_infer::Outcome::Flag(f) => decided
                    .flags
                    .push((f.kind.name().to_string(), f.move_number)),
                _ => {}
            }
        }
        !outcomes.is_empty()
    }
    fn board(&self) -> Occupancy {
        MakrukInference::board(self)
    }
}

/// Feeds the frames as the tracker would: a position is settled once it has stood three
/// frames with no hand, and is offered again every frame while it stands.
fn run(stage: &mut dyn Stage8, frames: &[Frame], noisy: bool, seed: u64) -> Decided {
    let mut rng = Rng::new(seed ^ 0x5eed);
    let mut decided = Decided::default();
    let mut hand_seen = false;
    let mut since: Option<(usize, f64)> = None;
    let mut squares = Vec::new();
    for (i, frame) in frames.iter().enumerate() {
        if frame.hand {
            hand_seen = true;
            since = None;
            continue;
        }
        match since {
            Some((start, _)) if frames[start].board == frame.board => {}
            _ => {
                since = Some((i, frame.t));
                squares = sighting(frame, noisy, &mut rng);
            }
        }
        let (start, t0) = since.expect("set above");
        if i < start + 2 {
            continue;
        }
        let seen = Seen8 {
            squares: &squares,
            since: t0,
            now: frame.t,
            hand_seen,
            motion_seen: true,
            still: 0,
            moved: 0,
            stirred: 0,
        };
        if stage.observe(&seen, &mut decided) || stage.board() == frame.board {
            hand_seen = false;
        }
    }
    decided
}

/// A Mak-hos game of random legal moves (captures when compulsory), as PDN.
fn random_makhos(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut position = HosPosition::start(Men::Eight, Color::White);
    let mut game = makhos::PdnGame::new(position);
    for _ in 0..(30 + rng.below(30)) {
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.below(moves.len())];
        game.moves.push(WrittenMove::from(&mv));
        position = position.play(&mv);
    }
    write_pdn(&game)
}

/// A Makruk game of random legal moves, as PGN.
fn random_makruk(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let start = RukPosition::start();
    let mut position = start.clone();
    let mut moves = Vec::new();
    for _ in 0..(30 + rng.below(30)) {
        let legal = position.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[rng.below(legal.len())];
        moves.push(mv);
        position.play(&mv);
    }
    write_pgn(&[], &start, &moves, "*")
}

const HOS_ANOMALIES: [&str; 6] = [
    "double-move",
    "knock",
    "added",
    "removed",
    "takeback",
    "missed-capture",
];
const RUK_ANOMALIES: [&str; 5] = ["double-move", "knock", "added", "removed", "takeback"];

/// The flag names that count as catching a staged anomaly.
fn catches(kind: &str) -> &'static [&'static str] {
    match kind {
        "knock" | "board-knock" => &["displaced", "added", "removed", "illegal-move"],
        "added" => &["added", "displaced"],
        "removed" => &["removed", "displaced"],
        "double-move" => &["double-move"],
        "takeback" => &["takeback"],
        "missed-capture" => &["missed-capture"],
        "incomplete-capture" => &["incomplete-capture"],
        "illegal-move" => &["illegal-move"],
        _ => &[],
    }
}

/// Flags that are not about an anomaly: draw counts the game itself reaches.
fn is_draw_count(name: &str) -> bool {
    matches!(name, "repetition" | "sixteen-moves" | "count-limit")
}

#[derive(Default, Debug)]
struct Tally {
    games: usize,
    exact: usize,
    moves: usize,
    moves_right: usize,
    anomalies: usize,
    flagged: usize,
    false_flags: usize,
}

impl Tally {
    fn add(&mut self, staged: &Staged, decided: &Decided) {
        self.games += 1;
        self.exact += usize::from(staged.record == decided.record);
        self.moves += staged.record.len();
        self.moves_right += staged
            .record
            .iter()
            .zip(&decided.record)
            .filter(|(a, b)| a == b)
            .count();
        let mut used = vec![false; decided.flags.len()];
        for (kind, _) in &staged.anomalies {
            if catches(kind).is_empty() {
                continue;
            }
            self.anomalies += 1;
            if let Some(i) = decided
                .flags
                .iter()
                .enumerate()
                .position(|(i, (name, _))| !used[i] && catches(kind).contains(&name.as_str()))
            {
                used[i] = true;
                self.flagged += 1;
            }
        }
        self.false_flags += decided
            .flags
            .iter()
            .zip(&used)
            .filter(|((name, _), used)| !**used && !is_draw_count(name))
            .count();
    }

    fn line(&self, label: &str) -> String {
        format!(
            "{label}: {} games, {} exact ({:.1} %), moves {}/{} ({:.2} %), anomalies flagged {}/{}, false flags {}",
            self.games,
            self.exact,
            100.0 * self.exact as f64 / self.games.max(1) as f64,
            self.moves_right,
            self.moves,
            100.0 * self.moves_right as f64 / self.moves.max(1) as f64,
            self.flagged,
            self.anomalies,
            self.false_flags
        )
    }
}

fn anomalies_for(seed: u64, kinds: &[&str]) -> Vec<AnomalyRequest> {
    let mut rng = Rng::new(seed ^ 0xa70);
    let count = rng.below(3);
    (0..count)
        .map(|i| AnomalyRequest {
            kind: kinds[rng.below(kinds.len())].to_string(),
            at: 4 + 8 * i + rng.below(6),
        })
        .collect()
}

/// Stages and runs one game; `None` when the renderer cannot stage the requested
/// anomalies on this record (then it is retried without them).
fn one_game(game: Game, seed: u64, noisy: bool) -> (Staged, Decided) {
    let (text, kinds): (String, &[&str]) = match game {
        Game::Makhos => (random_makhos(seed), &HOS_ANOMALIES),
        _ => (random_makruk(seed), &RUK_ANOMALIES),
    };
    let staged = stage(game, &text, seed, &anomalies_for(seed, kinds))
        .or_else(|| stage(game, &text, seed, &[]))
        .expect("a record of legal moves stages");
    let decided = match game {
        Game::Makhos => {
            let mut stage = MakhosInference::new(
                HosPosition::start(Men::Eight, Color::White),
                InferOptions::default(),
            );
            run(&mut stage, &staged.frames, noisy, seed)
        }
        _ => {
            let mut stage = MakrukInference::new(RukPosition::start(), InferOptions::default());
            run(&mut stage, &staged.frames, noisy, seed)
        }
    };
    (staged, decided)
}

fn tally(game: Game, seeds: std::ops::Range<u64>, noisy: bool, show: bool) -> Tally {
    let mut tally = Tally::default();
    for seed in seeds {
        let (staged, decided) = one_game(game, seed, noisy);
        let caught = |kind: &String| {
            catches(kind).is_empty()
                || decided
                    .flags
                    .iter()
                    .any(|(name, _)| catches(kind).contains(&name.as_str()))
        };
        let wrong = staged.record != decided.record
            || !staged.anomalies.iter().all(|(kind, _)| caught(kind))
            || decided.flags.len() > staged.anomalies.len();
        if show && wrong {
            eprintln!(
                "seed {seed}: anomalies {:?}\n expected {:?}\n decided  {:?}\n flags {:?}",
                staged.anomalies, staged.record, decided.record, decided.flags
            );
        }
        tally.add(&staged, &decided);
    }
    tally
}

#[test]
fn makhos_games_are_recorded_from_their_truth() {
    let t = tally(Game::Makhos, 1..9, false, true);
    eprintln!("{}", t.line("Mak-hos perfect"));
    assert_eq!(t.exact, t.games, "{t:?}");
    assert_eq!(t.flagged, t.anomalies, "{t:?}");
    // A double move taken back is flagged twice (the piece going back reads as a second
    // move of the same side): known, see docs/infer-eight.md.
    assert!(t.false_flags <= 1, "{t:?}");
}

#[test]
fn makruk_games_are_recorded_from_their_truth_with_occlusion() {
    let t = tally(Game::Makruk, 1..7, true, true);
    eprintln!("{}", t.line("Makruk noisy"));
    // Seed 4 loses the thread after a knocked piece (docs/infer-eight.md): the rest exact.
    assert!(t.exact + 1 >= t.games, "{t:?}");
    assert!(t.flagged + 1 >= t.anomalies, "{t:?}");
}

#[test]
#[ignore = "the measurement of docs/infer-eight.md; run with --release"]
fn measure() {
    for (game, label) in [(Game::Makhos, "Mak-hos"), (Game::Makruk, "Makruk")] {
        for noisy in [false, true] {
            let t = tally(game, 100_000..100_030, noisy, false);
            let input = if noisy { "noisy" } else { "perfect" };
            println!("{}", t.line(&format!("{label} {input}")));
        }
    }
}

#[test]
#[ignore = "development seeds (1–199) with every game that goes wrong shown"]
fn development() {
    if let Ok(seed) = std::env::var("SEED") {
        let seed: u64 = seed.parse().expect("a seed");
        let game = if std::env::var("RUK").is_ok() {
            Game::Makruk
        } else {
            Game::Makhos
        };
        let t = tally(game, seed..seed + 1, std::env::var("NOISY").is_ok(), true);
        println!("{}", t.line("seed"));
        return;
    }
    for (game, label) in [(Game::Makhos, "Mak-hos"), (Game::Makruk, "Makruk")] {
        for noisy in [false, true] {
            let t = tally(game, 1..200, noisy, true);
            let input = if noisy { "noisy" } else { "perfect" };
            println!("{}", t.line(&format!("{label} {input}")));
        }
    }
}
