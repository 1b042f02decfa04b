//! Makruk games Fairy-Stockfish plays against itself, fed position by position to
//! `MakrukInference` as a camera would see them (colours only, a hand between moves):
//! the stage must give back the engine's moves exactly.

mod makruk_support;

use kradan::games::makruk::Position;
use kradan::infer::eight::{Seen8, probabilities};
use kradan::infer::go::InferOptions;
use kradan::infer::makruk::{MakrukInference, Outcome};
use kradan::reading::synth::Rng;
use makruk_support::uci_session;
use std::path::Path;

const ENGINE: &str = "/usr/games/fairy-stockfish";

fn best_move(engine: &Path, moves: &[String]) -> Option<String> {
    let position = if moves.is_empty() {
        "position startpos".to_string()
    } else {
        format!("position startpos moves {}", moves.join(" "))
    };
    let output = uci_session(engine, &[position, "go depth 3".to_string()]);
    let best = output
        .lines()
        .find_map(|line| line.strip_prefix("bestmove "))?
        .split_whitespace()
        .next()?
        .to_string();
    (best != "(none)").then_some(best)
}

#[test]
fn the_stage_gives_back_fairy_stockfishs_moves() {
    let engine = Path::new(ENGINE);
    if !engine.exists() {
        eprintln!("skipped: {ENGINE} is not installed");
        return;
    }
    for game in 0..3u64 {
        let mut rng = Rng::new(game + 1);
        let mut position = Position::start();
        let mut stage = MakrukInference::new(position.clone(), InferOptions::default());
        let mut played: Vec<String> = Vec::new();
        let mut recorded: Vec<String> = Vec::new();
        for ply in 0..50 {
            // Two random opening moves so the three games differ.
            let uci = if ply < 2 {
                let legal = position.legal_moves();
                legal[rng.below(legal.len())].uci()
            } else {
                match best_move(engine, &played) {
                    Some(uci) => uci,
                    None => break,
                }
            };
            let mv = *position
                .legal_moves()
                .iter()
                .find(|m| m.uci() == uci)
                .unwrap_or_else(|| panic!("Fairy-Stockfish's {uci} is legal here"));
            position.play(&mv);
            played.push(uci);
            let squares = probabilities(&position.occupancy(), &[0.97; 64]);
            let t = 5.0 * ply as f64;
            let seen = Seen8 {
                squares: &squares,
                since: t,
                now: t + 0.3,
                hand_seen: true,
                motion_seen: true,
                still: 0,
                moved: 0,
                stirred: 0,
            };
            for outcome in stage.observe(&seen) {
                match outcome {
                    Outcome::Move { mv, number, .. } => {
                        recorded.truncate(number - 1);
                        recorded.push(mv.uci());
                    }
                    Outcome::Flag(flag) => {
                        assert!(
                            matches!(flag.kind.name(), "repetition" | "count-limit"),
                            "game {game}: unexpected flag {flag:?}"
                        );
                    }
                    _ => {}
                }
            }
        }
        assert!(played.len() >= 10, "game {game}: {played:?}");
        assert_eq!(recorded, played, "game {game}");
        assert_eq!(stage.position().to_fen(), position.to_fen(), "game {game}");
    }
}
