//! Mak-hos and Makruk in `kradan eval-footage --game makhos|makruk`: the record a seed
//! plays, the anomalies staged in it, and how a recording is scored — the moves of the
//! recorder's `game.pdn` / `game.pgn`, in the game's own notation, against the truth, each
//! timed by its `move` event.
//!
//! Mak-hos records come from our engine with a seeded policy (take what is offered, avoid
//! hanging pieces, crown men, now and then a careless move), so games have exchanges,
//! multi-captures and kings. Makruk records are Fairy-Stockfish playing itself from a few
//! seeded opening moves, searching a seeded number of nodes per move: with one thread and
//! a node budget its search is the same every run, so a seed gives the same game.

use super::games::GamePlan;
use super::score::{self, GameScore, RuleBook, Sequences, Symmetry};
use super::truth::{Truth, TruthMove};
use super::{events::Recorded, note};
use crate::games::Color;
use crate::games::makhos::{
    self, Men, Move as HosMove, PdnGame, Position as HosPosition, WrittenMove,
};
use crate::games::makruk::{self, Move as RukMove, Position as RukPosition};
use crate::peers::Uci;
use crate::reading::synth::Rng;
use crate::render::{self, script::AnomalyRequest};
use crate::replay::Game;
use std::path::Path;

/// The anomalies the renderer stages on an 8×8 board that owe a flag (`kradan render
/// --anomaly list`); bumps come from the clip's style, as for Go.
pub const MAKHOS_KINDS: &[&str] = &[
    "double-move",
    "takeback",
    "slide",
    "knock",
    "board-knock",
    "added",
    "removed",
    "missed-capture",
];
/// Makruk has no compulsory capture to miss.
pub const MAKRUK_KINDS: &[&str] = &[
    "double-move",
    "takeback",
    "slide",
    "knock",
    "board-knock",
    "added",
    "removed",
];

pub fn game_name(game: Game) -> &'static str {
    match game {
        Game::Go => "go",
        Game::Makhos => "makhos",
        Game::Makruk => "makruk",
    }
}

pub fn parse_game(text: &str) -> anyhow::Result<Game> {
    match text {
        "go" => Ok(Game::Go),
        "makhos" | "mak-hos" => Ok(Game::Makhos),
        "makruk" => Ok(Game::Makruk),
        other => anyhow::bail!("--game {other:?}: expected go, makhos or makruk"),
    }
}

/// The record a game folder is rendered from; the extension tells the renderer the game.
pub fn record_name(game: Game) -> &'static str {
    match game {
        Game::Go => "record.sgf",
        Game::Makhos => "record.pdn",
        Game::Makruk => "record.pgn",
    }
}

/// The record `kradan record` keeps beside its event log.
pub fn recorded_name(game: Game) -> &'static str {
    match game {
        Game::Go => "game.sgf",
        Game::Makhos => "game.pdn",
        Game::Makruk => "game.pgn",
    }
}

/// The record in a game folder, whichever game it is.
pub fn find_record(folder: &Path) -> Option<(Game, std::path::PathBuf)> {
    [Game::Go, Game::Makhos, Game::Makruk]
        .into_iter()
        .map(|game| (game, folder.join(record_name(game))))
        .find(|(_, path)| path.is_file())
}

/// A game of up to `moves` moves for `seed`, as PDN or PGN, and who played it.
pub fn generate_record(
    game: Game,
    moves: usize,
    seed: u64,
    engine: Option<&Path>,
) -> anyhow::Result<(String, String)> {
    match game {
        Game::Makhos => Ok(makhos_record(moves, seed)),
        Game::Makruk => Ok(makruk_record(moves, seed, engine)),
        Game::Go => anyhow::bail!("Go records are played by games::generate_record"),
    }
}

/// Mak-hos from the eight-men start, White first (HOS-SCHOOL, as `samples/makhos`), played
/// by [`makhos_pick`] until `moves` or until the side to move has none.
pub fn makhos_record(moves: usize, seed: u64) -> (String, String) {
    let mut rng = Rng::new(seed ^ 0x4d48_0008);
    let start = HosPosition::start(Men::Eight, Color::White);
    let mut position = start;
    let mut game = PdnGame::new(start);
    while game.moves.len() < moves {
        let legal = position.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[makhos_pick(&position, &legal, &mut rng)];
        game.moves.push(WrittenMove::from(&mv));
        position = position.play(&mv);
    }
    let who = format!("Kradan's Mak-hos engine, seeded policy (seed {seed})");
    for (name, value) in &mut game.tags {
        match name.as_str() {
            "Event" => *value = "Kradan eval-footage".into(),
            "White" | "Black" => value.clone_from(&who),
            _ => {}
        }
    }
    (makhos::write_pdn(&game), who)
}

/// A club player's choice: the most material taken, a man crowned, no piece left for the
/// opponent to take, with a little noise; one move in ten is careless (any legal move),
/// which is what makes exchanges and multi-captures happen.
fn makhos_pick(position: &HosPosition, legal: &[HosMove], rng: &mut Rng) -> usize {
    if legal.len() == 1 || rng.chance(0.1) {
        return rng.below(legal.len());
    }
    let worth = |mv: &HosMove| {
        let after = position.play(mv);
        let threat = after
            .legal_moves()
            .iter()
            .filter(|reply| reply.is_capture())
            .map(|reply| reply.captured_count() as i64 + 2 * i64::from(reply.promotes()))
            .max()
            .unwrap_or(0);
        10 * mv.captured_count() as i64 + 6 * i64::from(mv.promotes()) - 9 * threat
    };
    (0..legal.len())
        .max_by_key(|&i| worth(&legal[i]) + rng.below(6) as i64)
        .unwrap_or(0)
}

/// Makruk by Fairy-Stockfish when it is there and answers, else random legal moves.
pub fn makruk_record(moves: usize, seed: u64, engine: Option<&Path>) -> (String, String) {
    let start = RukPosition::start();
    let (who, played) = match engine.map(|program| stockfish_game(program, moves, seed)) {
        Some(Ok((who, played))) if played.len() >= moves.min(10) => (who, played),
        failed => {
            match failed {
                Some(Ok((_, played))) => note(&format!(
                    "Fairy-Stockfish ended the seed {seed} game after {} moves; random moves instead",
                    played.len()
                )),
                Some(Err(error)) => note(&format!(
                    "Fairy-Stockfish could not play the seed {seed} game ({error:#}); random moves instead"
                )),
                None => {}
            }
            (
                "random legal moves (Fairy-Stockfish absent)".to_string(),
                random_makruk(moves, seed),
            )
        }
    };
    let tags = [
        ("Event", "Kradan eval-footage"),
        ("White", who.as_str()),
        ("Black", who.as_str()),
    ];
    (makruk::write_pgn(&tags, &start, &played, "*"), who)
}

/// Opening moves drawn from the seed before the engine plays, so no two seeds share a game.
fn opening_moves(rng: &mut Rng) -> usize {
    2 + rng.below(4)
}

fn random_makruk(moves: usize, seed: u64) -> Vec<RukMove> {
    let mut rng = Rng::new(seed ^ 0x4d4b_0008);
    let mut position = RukPosition::start();
    let mut played = Vec::new();
    while played.len() < moves {
        let legal = position.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[rng.below(legal.len())];
        position.play(&mv);
        played.push(mv);
    }
    played
}

/// Fairy-Stockfish playing itself, one thread and a seeded node budget per move (the same
/// game every run), after [`opening_moves`] random ones.
fn stockfish_game(
    program: &Path,
    moves: usize,
    seed: u64,
) -> anyhow::Result<(String, Vec<RukMove>)> {
    let mut uci = Uci::start(program)?;
    uci.send(&[
        "setoption name UCI_Variant value makruk",
        "setoption name Threads value 1",
        "setoption name Hash value 16",
        "ucinewgame",
        "isready",
    ])?;
    uci.until("readyok")?;

    let mut rng = Rng::new(seed ^ 0xf5f5_0008);
    let budget = 200 + rng.below(4000);
    let opening = opening_moves(&mut rng);
    let mut position = RukPosition::start();
    let mut played: Vec<RukMove> = Vec::new();
    while played.len() < moves {
        let legal = position.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = if played.len() < opening {
            legal[rng.below(legal.len())]
        } else {
            let line: Vec<String> = played.iter().map(RukMove::uci).collect();
            uci.send(&[format!("position startpos moves {}", line.join(" "))])?;
            let nodes = budget / 2 + rng.below(budget);
            uci.send(&[format!("go nodes {nodes}")])?;
            let answer = uci.until("bestmove")?;
            let best = answer.split_whitespace().nth(1).unwrap_or("(none)");
            // Our engine judges the record the renderer replays: a move it does not
            // know ends the game there.
            match legal.iter().find(|m| m.uci() == best) {
                Some(mv) => *mv,
                None => break,
            }
        };
        position.play(&mv);
        played.push(mv);
    }
    let name = uci.name.clone().unwrap_or_else(|| "Fairy-Stockfish".into());
    let who =
        format!("{name} self-play, {budget} nodes a move after {opening} seeded opening moves");
    Ok((who, played))
}

/// The moves of a PDN or PGN record, as written.
pub fn record_moves(game: Game, text: &str) -> anyhow::Result<Vec<String>> {
    match game {
        Game::Makhos => {
            let games = makhos::read_pdn(text).map_err(|e| anyhow::anyhow!("PDN: {e}"))?;
            let first = games
                .first()
                .ok_or_else(|| anyhow::anyhow!("PDN: no game"))?;
            Ok(first.moves.iter().map(WrittenMove::to_string).collect())
        }
        Game::Makruk => Ok(makruk::read_pgn(text)
            .map_err(|e| anyhow::anyhow!("PGN: {e}"))?
            .moves
            .into_iter()
            .map(|token| token.text)
            .collect()),
        Game::Go => anyhow::bail!("a Go record is not an 8×8 one"),
    }
}

/// Staged anomalies stay this many record moves apart, as for Go.
const ANOMALY_SPACING: usize = 8;
/// Nor before this move, nor in the last few, so the recorder sees the game before and
/// after.
const FIRST_ANOMALY_MOVE: usize = 5;
const MOVES_AFTER_ANOMALY: usize = 4;

/// Draws the staged anomalies: with chance `rate` one (one time in three two), the kinds
/// taken from a seeded turn through the game's list so a run of seeds stages every kind,
/// each at the first shuffled move where the renderer's planner can stage it.
pub fn place_anomalies(plan: &mut GamePlan, game: Game, record: &str, rate: f64) {
    let mut rng = Rng::new(plan.seed ^ 0xa00a_0008);
    plan.anomalies.clear();
    if !rng.chance(rate as f32) {
        return;
    }
    let Ok(written) = record_moves(game, record) else {
        return;
    };
    let kinds = if game == Game::Makhos {
        MAKHOS_KINDS
    } else {
        MAKRUK_KINDS
    };
    let wanted = if rng.chance(1.0 / 3.0) { 2 } else { 1 };
    let last = written.len().saturating_sub(MOVES_AFTER_ANOMALY);
    let Ok(options) = plan.render_options(1) else {
        return;
    };
    let mut placed: Vec<AnomalyRequest> = Vec::new();
    let mut turn = (plan.seed as usize).wrapping_mul(wanted) % kinds.len();
    for _ in 0..wanted {
        let mut moves: Vec<usize> = (FIRST_ANOMALY_MOVE..=last).collect();
        for i in (1..moves.len()).rev() {
            moves.swap(i, rng.below(i + 1));
        }
        let staged = (0..kinds.len()).find_map(|k| {
            let kind = kinds[(turn + k) % kinds.len()];
            moves
                .iter()
                .filter(|&&at| placed.iter().all(|p| p.at.abs_diff(at) >= ANOMALY_SPACING))
                .find_map(|&at| {
                    let mut trial = options.clone();
                    trial.anomalies = placed.clone();
                    trial.anomalies.push(AnomalyRequest {
                        kind: kind.to_string(),
                        at,
                    });
                    render::plan(game, record, &trial)
                        .is_ok()
                        .then_some((k, trial.anomalies))
                })
        });
        let Some((k, anomalies)) = staged else { break };
        turn = (turn + k + 1) % kinds.len();
        placed = anomalies;
    }
    placed.sort_by_key(|a| a.at);
    plan.anomalies = placed
        .into_iter()
        .map(|a| format!("{}@{}", a.kind, a.at))
        .collect();
}

/// What a camera can honestly call each 8×8 anomaly: the truth's rules, and for Makruk
/// also MAKRUK 4 (the referee decides any problem during play), which RULES.md names for
/// the irregularities it has no article for.
fn eight_accepted_rules(_kind: &str, truth_rules: &[String]) -> Vec<String> {
    let mut rules = truth_rules.to_vec();
    if truth_rules.iter().any(|r| r.starts_with("MAKRUK")) && !rules.iter().any(|r| r == "MAKRUK 4")
    {
        rules.push("MAKRUK 4".into());
    }
    rules
}

/// A double move the opponent objects to, and a missed capture, end with a piece going
/// back: a recorder that calls that a wrong move (HOS 3.2) or a take-back (MAKRUK 6) saw
/// the consequence, not something else.
fn eight_tolerated_rules(kind: &str) -> &'static [&'static str] {
    match kind {
        "double-move" | "missed-capture" => &["HOS 3.2", "MAKRUK 6"],
        _ => &[],
    }
}

const EIGHT_RULES: RuleBook = RuleBook {
    accepted: eight_accepted_rules,
    tolerated: eight_tolerated_rules,
};

/// Whether two writings are the same move. Mak-hos: the same first and last square, and
/// the same landings when both list them all (PDN may give only the ends of a capture);
/// Makruk: the same SAN once check marks and annotations are dropped.
pub fn same_move(game: Game, a: &str, b: &str) -> bool {
    match game {
        Game::Makhos => {
            let squares = |text: &str| -> Option<Vec<u32>> {
                text.trim()
                    .split(['-', 'x', ':'])
                    .map(|s| s.parse().ok())
                    .collect()
            };
            match (squares(a), squares(b)) {
                (Some(a), Some(b)) if a.len() >= 2 && b.len() >= 2 => {
                    a.first() == b.first()
                        && a.last() == b.last()
                        && (a.len() == 2 || b.len() == 2 || a == b)
                }
                _ => false,
            }
        }
        _ => {
            let core = |text: &str| {
                let text = text.trim().trim_end_matches(['+', '#', '!', '?']);
                text.strip_suffix("=M")
                    .or_else(|| text.strip_suffix("=m"))
                    .unwrap_or(text)
                    .to_string()
            };
            !a.trim().is_empty() && core(a) == core(b)
        }
    }
}

/// A move of the recorder's record, with the colour and time its `move` event gives.
#[derive(Clone, Debug, PartialEq)]
struct EightMove {
    number: usize,
    color: Option<Color>,
    notation: String,
    video_time: Option<f64>,
}

/// Scores an 8×8 game: the moves of `file` (the recorder's record, read by
/// [`record_moves`]) when there is one, else those of the log, against the truth's; flags
/// from the log. Returns the score and what the scorer noticed about the recording.
pub fn score(
    truth: &Truth,
    recorded: &Recorded,
    file: Option<&[String]>,
) -> anyhow::Result<(GameScore, Vec<String>)> {
    let game = parse_game(&truth.game)?;
    anyhow::ensure!(game != Game::Go, "a Go truth is scored by score::score");
    let mut problems = Vec::new();
    let moves: Vec<EightMove> = match file {
        Some(file) => {
            let mut disagree = Vec::new();
            let mut previous: Option<Color> = None;
            let moves: Vec<EightMove> = file
                .iter()
                .enumerate()
                .map(|(i, text)| {
                    let event = recorded.moves.iter().find(|m| m.number == i + 1);
                    if let Some(logged) = event.and_then(|e| e.notation.as_deref())
                        && !same_move(game, logged, text)
                    {
                        disagree.push(format!("move {} {text} logged as {logged}", i + 1));
                    }
                    // White moves first in both games; a move without its event takes
                    // the turn after the one before.
                    let color = event.and_then(|e| e.color).unwrap_or(match previous {
                        Some(c) => c.opponent(),
                        None => Color::White,
                    });
                    previous = Some(color);
                    EightMove {
                        number: i + 1,
                        color: Some(color),
                        notation: text.clone(),
                        video_time: event.and_then(|e| e.video_time),
                    }
                })
                .collect();
            if !disagree.is_empty() {
                problems.push(format!(
                    "the record file and events.jsonl disagree on {} move(s): {}",
                    disagree.len(),
                    disagree.join(", ")
                ));
            }
            if recorded.moves.len() != moves.len() {
                problems.push(format!(
                    "the record file has {} moves, events.jsonl {}",
                    moves.len(),
                    recorded.moves.len()
                ));
            }
            moves
        }
        None => recorded
            .moves
            .iter()
            .map(|m| EightMove {
                number: m.number,
                color: m.color,
                notation: m.notation.clone().unwrap_or_default(),
                video_time: m.video_time,
            })
            .collect(),
    };
    // The record numbers the moves it keeps: each one sent back takes its number away.
    let mut expected: Vec<&TruthMove> = Vec::new();
    let mut numbers = Vec::new();
    let mut sent_back_before = 0;
    for m in truth.expected_moves() {
        if sent_back(truth, m) {
            sent_back_before += 1;
            continue;
        }
        numbers.push((m.number - sent_back_before, m.completed_at));
        expected.push(m);
    }
    let sequences = Sequences {
        expected: numbers,
        recorded: moves.iter().map(|m| (m.number, m.video_time)).collect(),
        corrections: recorded.corrections,
    };
    let label = |color: Option<Color>, notation: &str| {
        format!("{} {notation}", color.map_or('?', Color::letter))
    };
    let scored = sequences.score(
        |i, j| {
            moves[j].color == Some(expected[i].color)
                && same_move(game, &expected[i].notation, &moves[j].notation)
        },
        |i| label(Some(expected[i].color), &expected[i].notation),
        |j| label(moves[j].color, &moves[j].notation),
    );
    Ok((
        score::finish(truth, recorded, Symmetry::Identity, scored, &EIGHT_RULES),
        problems,
    ))
}

/// A move the rules send back: when the opponent claims a compulsory capture that was
/// skipped (HOS 2.4), the man returns to its square and the capture is played in its place,
/// so a right record has the capture where the move stood (with the flag), not the move.
/// A double move the opponent objects to because no second move leaves the rest of the
/// game playable is taken back the same way; one that stands (its truth move has no record
/// number either) is asked of the record. The truth tells the two apart in its note only.
fn sent_back(truth: &Truth, m: &TruthMove) -> bool {
    m.record_number.is_none()
        && truth.anomalies.iter().any(|a| {
            a.move_number == m.number
                && (a.kind == "missed-capture"
                    || (a.kind == "double-move" && a.note.contains("taken back")))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footage_eval::games::{Overrides, draw_plan};
    use crate::render::Codec;

    #[test]
    fn makhos_games_are_legal_repeatable_and_look_played() {
        let (first, who) = makhos_record(60, 3);
        assert_eq!(first, makhos_record(60, 3).0);
        assert_ne!(first, makhos_record(60, 4).0);
        assert!(who.contains("seed 3"));
        let (mut captures, mut multi, mut crowned) = (0, 0, 0);
        for seed in 0..10 {
            let (record, _) = makhos_record(60, seed);
            let report = makhos::replay(&record).unwrap();
            assert!(!report.has_illegal_moves(), "seed {seed}: {report:?}");
            let moves = record_moves(Game::Makhos, &record).unwrap();
            assert!(moves.len() >= 20, "seed {seed}: {} moves", moves.len());
            captures += moves.iter().filter(|m| m.contains('x')).count();
            multi += moves.iter().filter(|m| m.matches('x').count() >= 2).count();
            let mut position = HosPosition::start(Men::Eight, Color::White);
            for legal in record_moves(Game::Makhos, &record).unwrap() {
                let mv = position
                    .legal_moves()
                    .into_iter()
                    .find(|m| WrittenMove::from(m).to_string() == legal)
                    .unwrap();
                crowned += usize::from(mv.promotes());
                position = position.play(&mv);
            }
        }
        assert!(captures >= 50, "{captures} captures in ten games");
        assert!(multi >= 1, "no multi-capture in ten games");
        assert!(crowned >= 3, "{crowned} kings crowned in ten games");
    }

    #[test]
    fn makruk_games_are_fairy_stockfish_self_play_repeatable_by_seed() {
        let Some(engine) = crate::peers::locate("fairy-stockfish") else {
            eprintln!("skipped: fairy-stockfish is not installed");
            return;
        };
        let (first, who) = makruk_record(30, 5, Some(&engine));
        assert!(who.contains("self-play"), "{who}");
        assert_eq!(first, makruk_record(30, 5, Some(&engine)).0);
        assert_ne!(first, makruk_record(30, 6, Some(&engine)).0);
        let report = makruk::replay(&first).unwrap();
        assert!(!report.has_illegal_moves(), "{report:?}");
        assert_eq!(record_moves(Game::Makruk, &first).unwrap().len(), 30);
    }

    #[test]
    fn random_makruk_stands_in_for_an_absent_engine() {
        let (record, who) = makruk_record(24, 9, None);
        assert!(who.contains("random"));
        assert!(!makruk::replay(&record).unwrap().has_illegal_moves());
        assert_eq!(record_moves(Game::Makruk, &record).unwrap().len(), 24);
    }

    #[test]
    fn anomalies_land_where_the_renderer_can_stage_them_and_every_kind_comes_up() {
        for (game, kinds) in [(Game::Makhos, MAKHOS_KINDS), (Game::Makruk, MAKRUK_KINDS)] {
            let mut seen = std::collections::BTreeSet::new();
            for seed in 0..16 {
                let mut plan = draw_plan(seed, &[8], Codec::Mjpeg, &Overrides::default());
                let (record, _) = generate_record(game, 50, seed, None).unwrap();
                place_anomalies(&mut plan, game, &record, 1.0);
                assert!(!plan.anomalies.is_empty(), "{game:?} seed {seed}");
                render::plan(game, &record, &plan.render_options(1).unwrap()).unwrap();
                let at: Vec<usize> = plan
                    .anomalies
                    .iter()
                    .map(|a| a.split_once('@').unwrap().1.parse().unwrap())
                    .collect();
                assert!(at.windows(2).all(|w| w[1] - w[0] >= ANOMALY_SPACING));
                seen.extend(
                    plan.anomalies
                        .iter()
                        .map(|a| a.split('@').next().unwrap().to_string()),
                );
            }
            assert_eq!(seen.len(), kinds.len(), "{game:?}: {seen:?}");
            let mut none = draw_plan(1, &[8], Codec::Mjpeg, &Overrides::default());
            let (record, _) = generate_record(game, 40, 1, None).unwrap();
            place_anomalies(&mut none, game, &record, 0.0);
            assert!(none.anomalies.is_empty());
        }
    }

    #[test]
    fn the_same_move_is_recognised_however_it_is_written() {
        assert!(same_move(Game::Makhos, "9x18x27", "9x27"));
        assert!(same_move(Game::Makhos, "9x27", "9-27"));
        assert!(!same_move(Game::Makhos, "9x18x27", "9x20x27"));
        assert!(!same_move(Game::Makhos, "8-11", "8-12"));
        assert!(!same_move(Game::Makhos, "8-11", ""));
        assert!(same_move(Game::Makruk, "Nxe5+", "Nxe5"));
        assert!(same_move(Game::Makruk, "c6=M", "c6"));
        assert!(!same_move(Game::Makruk, "Nxe5", "Nxe4"));
        assert!(!same_move(Game::Makruk, "", ""));
    }

    /// A Makruk clip of six moves, each complete two seconds after the last.
    const MOVES: [(&str, &str); 6] = [
        ("white", "e4"),
        ("black", "e5"),
        ("white", "Nf3"),
        ("black", "Nc6"),
        ("white", "Bc1"),
        ("black", "Bf8"),
    ];

    fn truth_with(game: &str, moves: &[(&str, &str)], anomalies: &str) -> Truth {
        let moves: Vec<String> = moves
            .iter()
            .enumerate()
            .map(|(i, (color, notation))| {
                let done = 2.0 * (i + 1) as f64;
                format!(
                    r#"{{"number":{},"record_number":{},"color":"{color}","notation":"{notation}","captures":[],"placed_at":{},"completed_at":{done},"completed_frame":0}}"#,
                    i + 1,
                    i + 1,
                    done - 0.5
                )
            })
            .collect();
        Truth::parse(&format!(
            r#"{{"game":"{game}","seed":7,"video":"footage.avi","fps":10.0,"duration":15.0,"camera":{{"width":640,"height":480}},"board":{{"cells":8}},"moves":[{}],"anomalies":[{anomalies}],"bumps":[]}}"#,
            moves.join(",")
        ))
        .unwrap()
    }

    fn event(seq: usize, kind: &str, time: f64, number: Option<usize>, rest: &str) -> String {
        format!(
            r#"{{"seq":{seq},"kind":"{kind}","video_time":{time},"move_number":{},{rest}}}"#,
            number.map_or("null".into(), |n| n.to_string())
        )
    }

    /// A `move` event numbered as the record numbers it.
    fn move_line(number: usize, time: f64, color: &str, notation: &str) -> String {
        event(
            0,
            "move",
            time,
            Some(number),
            &format!(r#""color":"{color}","notation":"{notation}""#),
        )
    }

    /// A flag event about move `number`, citing `rule`.
    fn flag_line(number: usize, time: f64, rule: &str, kind: &str) -> String {
        event(
            0,
            "flag",
            time,
            Some(number),
            &format!(r#""rules":["{rule}"],"detail":{{"flag":"{kind}"}}"#),
        )
    }

    /// The truth's moves as a recorder would log them, 0.3 s after the hand left, and its
    /// record file's moves.
    fn perfect(truth: &Truth) -> (Vec<String>, Vec<String>) {
        let mut lines = Vec::new();
        let mut file = Vec::new();
        for m in truth.expected_moves() {
            let color = if m.color == Color::Black {
                "black"
            } else {
                "white"
            };
            lines.push(event(
                lines.len(),
                "move",
                m.completed_at + 0.3,
                Some(m.number),
                &format!(r#""color":"{color}","notation":"{}""#, m.notation),
            ));
            file.push(m.notation.clone());
        }
        (lines, file)
    }

    fn scored(
        truth: &Truth,
        lines: &[String],
        file: Option<&[String]>,
    ) -> (GameScore, Vec<String>) {
        score(truth, &Recorded::parse(&lines.join("\n")), file).unwrap()
    }

    #[test]
    fn a_record_written_from_the_truth_scores_every_move_and_the_game() {
        let truth = truth_with("makruk", &MOVES, "");
        let (lines, file) = perfect(&truth);
        let (s, problems) = scored(&truth, &lines, Some(&file));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((s.moves.expected, s.moves.right, s.moves.prefix), (6, 6, 6));
        assert!(s.exact);
        assert_eq!(s.latency.count, 6);
        assert!((s.latency.median.unwrap() - 0.3).abs() < 1e-9);
        // Without a record file the log's moves are scored.
        let (s, _) = scored(&truth, &lines, None);
        assert!(s.exact);
    }

    #[test]
    fn a_wrong_move_in_the_record_file_counts_and_the_log_disagreeing_is_said() {
        let truth = truth_with("makruk", &MOVES, "");
        let (lines, mut file) = perfect(&truth);
        file[2] = "Nh3".into();
        let (s, problems) = scored(&truth, &lines, Some(&file));
        assert_eq!((s.moves.right, s.moves.wrong), (5, 1));
        assert_eq!(s.mistakes[0].expected.as_deref(), Some("W Nf3"));
        assert_eq!(s.mistakes[0].recorded.as_deref(), Some("W Nh3 (#3)"));
        assert!(!s.exact);
        assert!(
            problems[0].contains("move 3 Nh3 logged as Nf3"),
            "{problems:?}"
        );
        // A missed last move: one missed, and the file is a move short of the log.
        let (s, problems) = scored(&truth, &lines, Some(&perfect(&truth).1[..5]));
        assert_eq!((s.moves.right, s.moves.missed), (5, 1));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("5 moves, events.jsonl 6"))
        );
    }

    const DOUBLE_MOVE_AT_3: &str = r#"{"kind":"double-move","move_number":3,"rules":["HOS 3.4","HOS-SCHOOL 3.4.2"],"penalties":["warning"],"points":[],"note":"","at":5.5,"frame":55}"#;

    #[test]
    fn a_staged_anomaly_is_owed_a_flag_and_a_flag_nothing_explains_is_false() {
        let moves = [
            ("white", "8-11"),
            ("black", "27-23"),
            ("white", "11-15"),
            ("black", "26-22"),
            ("white", "5-9"),
            ("black", "31-27"),
        ];
        let truth = truth_with("makhos", &moves, DOUBLE_MOVE_AT_3);
        let (mut lines, file) = perfect(&truth);
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!(
            (s.flags.anomalies, s.flags.right, s.flags.missed),
            (1, 0, 1)
        );
        assert!(!s.exact, "a missed flag spoils the game");
        let flag = |seq: usize, time: f64, rules: &str, kind: &str| {
            event(
                seq,
                "flag",
                time,
                Some(3),
                &format!(r#""rules":[{rules}],"detail":{{"flag":"{kind}"}}"#),
            )
        };
        lines.push(flag(6, 6.0, r#""HOS 3.4""#, "double-move"));
        // The piece going back after the opponent objects: a consequence, not false.
        lines.push(flag(7, 6.5, r#""HOS 3.2""#, "wrong-move"));
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (1, 0, 0)
        );
        assert_eq!(s.flags.duplicates, 1);
        assert!(s.exact);
        // Before the double move, nothing explains a displaced piece.
        lines.push(flag(8, 2.0, r#""HOS 3.2","HOS-SCHOOL 3.7.1""#, "displaced"));
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!(s.flags.false_flags, 1);
        assert!(!s.exact);
    }

    #[test]
    fn a_move_sent_back_for_a_missed_capture_is_not_asked_of_the_record() {
        // White's 11-15 skips the capture 14x23 (HOS 2.4); Black claims it, the man goes
        // back and the capture is played: the record has 14x23 as move 3.
        let moves = [
            ("white", "9-14"),
            ("black", "22-18"),
            ("white", "11-15"),
            ("white", "14x23"),
            ("black", "27x18"),
        ];
        let missed = r#"{"kind":"missed-capture","move_number":3,"rules":["HOS 2.4"],"penalties":["advisory"],"points":["11","15"],"note":"","at":5.5,"frame":55}"#;
        let mut truth = truth_with("makhos", &moves, missed);
        truth.moves[2].record_number = None;
        let lines = [
            move_line(1, 2.3, "white", "9-14"),
            move_line(2, 4.3, "black", "22-18"),
            move_line(3, 6.3, "white", "11-15"),
            flag_line(3, 6.3, "HOS 2.4", "missed-capture"),
            move_line(3, 8.3, "white", "14x23"),
            move_line(4, 10.3, "black", "27x18"),
        ];
        let file = ["9-14", "22-18", "14x23", "27x18"].map(String::from);
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!((s.moves.expected, s.moves.right), (4, 4));
        assert_eq!((s.flags.right, s.flags.missed), (1, 0));
        assert!(s.exact, "{s:?}");
        // A record that kept the move as well has a move too many.
        let kept = [
            move_line(1, 2.3, "white", "9-14"),
            move_line(2, 4.3, "black", "22-18"),
            move_line(3, 6.3, "white", "11-15"),
            move_line(4, 8.3, "white", "14x23"),
            move_line(5, 10.3, "black", "27x18"),
        ];
        let (s, _) = scored(&truth, &kept, None);
        assert_eq!((s.moves.right, s.moves.extra), (4, 1));
        assert!(!s.exact);
    }

    #[test]
    fn a_double_move_taken_back_is_not_asked_of_the_record() {
        // Black moves again (HOS 3.4); White objects, the move is taken back and White
        // plays: the record has White's move as move 3.
        let moves = [
            ("white", "9-14"),
            ("black", "22-18"),
            ("black", "18-15"),
            ("white", "11-16"),
        ];
        let double = r#"{"kind":"double-move","move_number":3,"rules":["HOS 3.4"],"penalties":["warning"],"points":["18","15"],"note":"black moves again; white objects and the move is taken back","at":5.5,"frame":55}"#;
        let mut truth = truth_with("makhos", &moves, double);
        truth.moves[2].record_number = None;
        let lines = [
            move_line(1, 2.3, "white", "9-14"),
            move_line(2, 4.3, "black", "22-18"),
            move_line(3, 6.3, "black", "18-15"),
            flag_line(3, 6.3, "HOS 3.4", "double-move"),
            move_line(3, 8.3, "white", "11-16"),
        ];
        let file = ["9-14", "22-18", "11-16"].map(String::from);
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!((s.moves.expected, s.moves.right), (3, 3));
        assert_eq!((s.flags.right, s.flags.missed), (1, 0));
        assert!(s.exact, "{s:?}");
        // A double move that stands is asked of the record.
        truth.anomalies[0].note = "black moves again before white has moved".into();
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!((s.moves.expected, s.moves.missed), (4, 1));
    }

    #[test]
    fn a_makruk_irregularity_may_be_called_by_makruk_4() {
        let knock = r#"{"kind":"knock","move_number":2,"rules":["MAKRUK 4"],"penalties":["advisory"],"points":[],"note":"","at":3.5,"frame":35}"#;
        let takeback = r#"{"kind":"takeback","move_number":5,"rules":["MAKRUK 6"],"penalties":["advisory"],"points":[],"note":"","at":9.5,"frame":95}"#;
        let truth = truth_with("makruk", &MOVES, &format!("{knock},{takeback}"));
        let (mut lines, file) = perfect(&truth);
        for (seq, time, number) in [(6, 4.0, 2), (7, 10.0, 5)] {
            lines.push(event(
                seq,
                "flag",
                time,
                Some(number),
                r#""rules":["MAKRUK 4"],"detail":{"flag":"irregular"}"#,
            ));
        }
        let (s, _) = scored(&truth, &lines, Some(&file));
        assert_eq!(
            (s.flags.right, s.flags.missed, s.flags.false_flags),
            (2, 0, 0)
        );
        assert!(s.exact);
    }

    #[test]
    fn a_go_truth_is_not_scored_here() {
        let go = Truth::parse(r#"{"game":"go","seed":1,"video":"v","fps":10,"duration":1,"camera":{"width":1,"height":1},"board":{"cells":9},"moves":[]}"#).unwrap();
        assert!(score(&go, &Recorded::default(), None).is_err());
        assert!(Truth::parse(r#"{"game":"makruk","seed":1,"video":"v","fps":10,"duration":1,"camera":{"width":1,"height":1},"board":{"cells":9},"moves":[]}"#).is_err());
    }
}
