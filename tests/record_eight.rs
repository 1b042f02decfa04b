//! End-to-end tests of `kradan record --game makhos|makruk`: the real binary on footage
//! the renderer makes in the test (small, mjpeg, a few moves), whose truth is known, and on
//! bad input.

mod common;

use common::{kradan, record_then_kill};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn sample(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(path)
}

fn run(args: &[&str]) -> Output {
    kradan().args(args).output().expect("kradan runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Renders the first `moves` moves of a sample record, clean, into `dir`: the footage.
fn render(record: &str, dir: &Path, seed: u32, moves: u32, extra: &[&str]) -> PathBuf {
    render_record(&sample(record), dir, seed, moves, extra)
}

fn record(footage: &Path, game: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "record",
        footage.to_str().unwrap(),
        "--game",
        game,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn events(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .expect("events.jsonl written")
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect()
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

fn truth(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap()
}

/// The truth's moves as (colour, notation).
fn truth_moves(truth: &Value) -> Vec<(String, String)> {
    truth["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["color"].as_str().unwrap().to_string(),
                m["notation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The recorded moves that stand (a number given again replaces the earlier one), as
/// (colour, notation).
fn recorded_moves(events: &[Value]) -> Vec<(String, String)> {
    let mut moves: Vec<(String, String)> = Vec::new();
    for event in events {
        let number = event["move_number"].as_u64().unwrap_or(0) as usize;
        if event["kind"] == "move" {
            moves.truncate(number - 1);
            moves.push((
                event["color"].as_str().unwrap().to_string(),
                event["notation"].as_str().unwrap().to_string(),
            ));
        } else if event["detail"]["note"] == "taken-back" {
            moves.truncate(number - 1);
        }
    }
    moves
}

fn verify(dir: &Path) {
    let verified = run(&["verify", dir.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

#[test]
fn a_clean_makruk_game_is_recorded_move_for_move() {
    let work = tempfile::tempdir().unwrap();
    let clip = work.path().join("clip");
    let footage = render("makruk/short_game.pgn", &clip, 3, 8, &[]);
    let out = work.path().join("record");
    let output = record(&footage, "makruk", &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&out);
    assert_eq!(recorded_moves(&events), truth_moves(&truth(&clip)));
    assert!(of_kind(&events, "flag").is_empty(), "{events:#?}");
    let start = &events[0];
    assert_eq!(start["kind"], "session-start");
    assert_eq!(start["detail"]["game"], "makruk");
    let pgn = std::fs::read_to_string(out.join("game.pgn")).unwrap();
    assert!(pgn.contains("[Variant \"makruk\"]"), "{pgn}");
    assert!(pgn.contains("1. c4"), "{pgn}");
    let first = of_kind(&events, "move")[0];
    assert_eq!(first["evidence"].as_array().unwrap().len(), 2, "{first}");
    for evidence in first["evidence"].as_array().unwrap() {
        assert!(out.join(evidence["path"].as_str().unwrap()).is_file());
    }
    verify(&out);
}

#[test]
fn a_clean_makhos_game_is_recorded_move_for_move() {
    let work = tempfile::tempdir().unwrap();
    let clip = work.path().join("clip");
    let footage = render("makhos/annotated.pdn", &clip, 5, 8, &[]);
    let out = work.path().join("record");
    let output = record(&footage, "makhos", &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&out);
    assert_eq!(recorded_moves(&events), truth_moves(&truth(&clip)));
    let pdn = std::fs::read_to_string(out.join("game.pdn")).unwrap();
    assert!(pdn.contains("1. 8-11"), "{pdn}");
    verify(&out);
}

#[test]
fn a_double_move_is_flagged_with_its_rule() {
    let work = tempfile::tempdir().unwrap();
    let clip = work.path().join("clip");
    let footage = render(
        "makruk/short_game.pgn",
        &clip,
        4,
        6,
        &["--anomaly", "double-move@3"],
    );
    let out = work.path().join("record");
    let output = record(&footage, "makruk", &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let staged = &truth(&clip)["anomalies"][0];
    assert_eq!(staged["kind"], "double-move");
    let events = events(&out);
    let flags = of_kind(&events, "flag");
    let flagged = flags
        .iter()
        .find(|f| f["detail"]["flag"] == "double-move")
        .unwrap_or_else(|| panic!("no double-move flag in {flags:#?}"));
    assert_eq!(flagged["rules"], staged["rules"], "{flagged}");
    assert_eq!(flagged["penalties"], staged["penalties"], "{flagged}");
    assert!(flagged["confidence"].as_f64().is_some());
    assert!(!flagged["points"].as_array().unwrap().is_empty());
    assert_eq!(flagged["evidence"].as_array().unwrap().len(), 2);
    verify(&out);
}

#[test]
fn bad_input_is_refused_with_its_exit_status() {
    let work = tempfile::tempdir().unwrap();
    // No board: a plain grey picture.
    let blank = work.path().join("blank");
    std::fs::create_dir(&blank).unwrap();
    let image = opencv::core::Mat::new_rows_cols_with_default(
        240,
        320,
        opencv::core::CV_8UC3,
        opencv::core::Scalar::all(90.0),
    )
    .unwrap();
    opencv::imgcodecs::imwrite_def(blank.join("0.png").to_str().unwrap(), &image).unwrap();
    let no_board = record(&blank, "makhos", &work.path().join("none"), &[]);
    assert_eq!(no_board.status.code(), Some(3), "{}", stderr(&no_board));
    assert!(stderr(&no_board).contains("no board"));

    let clip = sample("makruk/clip/footage.mp4");
    // The output folder is a file.
    let file = work.path().join("taken");
    std::fs::write(&file, "not a folder").unwrap();
    let unwritable = record(&clip, "makruk", &file, &[]);
    assert_eq!(unwritable.status.code(), Some(2), "{}", stderr(&unwritable));

    // Go's options mean nothing on an 8×8 board.
    let go_only = record(&clip, "makruk", &work.path().join("go"), &["--komi", "7"]);
    assert_eq!(go_only.status.code(), Some(2));
    assert!(stderr(&go_only).contains("--komi"), "{}", stderr(&go_only));
    assert!(!work.path().join("go").exists());

    // A video that is not one.
    let broken = work.path().join("broken.avi");
    std::fs::write(&broken, b"RIFF not really a video").unwrap();
    let unreadable = record(&broken, "makhos", &work.path().join("broken"), &[]);
    assert_eq!(unreadable.status.code(), Some(2), "{}", stderr(&unreadable));
}

#[test]
fn a_killed_recording_resumes_the_same_record_and_chain() {
    let work = tempfile::tempdir().unwrap();
    let clip = work.path().join("clip");
    let footage = render("makruk/short_game.pgn", &clip, 6, 8, &[]);
    let dir = work.path().join("record");
    record_then_kill(
        &[
            "record",
            footage.to_str().unwrap(),
            "--game",
            "makruk",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
        &dir,
        3,
        std::time::Duration::from_secs(60),
    );
    let resumed = record(&footage, "makruk", &dir, &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    verify(&dir);
    let events = events(&dir);
    assert!(events.iter().any(|e| e["kind"] == "session-resume"));
    let numbers: Vec<u64> = of_kind(&events, "move")
        .iter()
        .map(|m| m["move_number"].as_u64().unwrap())
        .collect();
    assert_eq!(
        numbers,
        (1..=8).collect::<Vec<u64>>(),
        "each move once, in order"
    );
    assert_eq!(recorded_moves(&events), truth_moves(&truth(&clip)));
    let pgn = std::fs::read_to_string(dir.join("game.pgn")).unwrap();
    assert!(
        pgn.contains("1. c4"),
        "the record holds the moves before the kill: {pgn}"
    );
}

/// A record of `game` (a sample) from the position after its first `skip` moves, with the
/// `keep` moves that follow, written to `path`: footage of a game already in progress.
fn from_the_middle(game: &str, skip: usize, keep: usize, path: &Path) {
    let text = std::fs::read_to_string(sample(game)).unwrap();
    let written = if game.ends_with(".pdn") {
        use kradan::games::makhos::{PdnGame, WrittenMove, read_pdn, write_pdn};
        let original = read_pdn(&text).unwrap().remove(0);
        let mut position = original.start;
        for written in &original.moves[..skip] {
            let mut found = None;
            position.for_each_move(|mv, _| {
                if WrittenMove::from(mv).to_string() == written.to_string() {
                    found = Some(*mv);
                }
            });
            position = position.play(&found.expect("a move of the record"));
        }
        let mut game = PdnGame::new(position);
        game.moves = original.moves[skip..skip + keep].to_vec();
        write_pdn(&game)
    } else {
        use kradan::games::makruk::{parse_san, read_pgn, write_pgn};
        let original = read_pgn(&text).unwrap();
        let mut position = original.start_position(&text).unwrap();
        let mut start = position.clone();
        let mut moves = Vec::new();
        for (index, san) in original.moves.iter().take(skip + keep).enumerate() {
            let mv = parse_san(&position, &san.text).unwrap();
            position.play(&mv);
            if index < skip {
                start = position.clone();
            } else {
                moves.push(mv);
            }
        }
        write_pgn(&[("Event", "in progress")], &start, &moves, "*")
    };
    std::fs::write(path, written).unwrap();
}

/// Renders the first `moves` moves of `record`, clean, 640×480 at 10 fps, into `dir`.
fn render_record(record: &Path, dir: &Path, seed: u32, moves: u32, extra: &[&str]) -> PathBuf {
    let seed = seed.to_string();
    let moves = moves.to_string();
    let mut args = vec![
        "render",
        record.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--style",
        "clean",
        "--codec",
        "mjpeg",
        "--resolution",
        "640x480",
        "--fps",
        "10",
        "--seed",
        &seed,
        "--moves",
        &moves,
    ];
    args.extend_from_slice(extra);
    let output = run(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    dir.join("footage.avi")
}

fn notes<'a>(events: &'a [Value], note: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "note" && e["detail"]["note"] == note)
        .collect()
}

#[test]
fn a_makruk_game_in_progress_is_joined_with_its_figures_or_recorded_from_a_given_position() {
    let work = tempfile::tempdir().unwrap();
    let middle = work.path().join("middle.pgn");
    from_the_middle("makruk/fairy-stockfish-game.pgn", 6, 4, &middle);
    let clip = work.path().join("clip");
    let footage = render_record(&middle, &clip, 3, 4, &[]);

    // Nothing on the board fits the start position: the recorder says so once with the
    // evidence, then joins the game as it stands, its figures those the fewest moves
    // from the start give, and records every move after.
    let out = work.path().join("joined");
    let output = record(&footage, "makruk", &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let joined = events(&out);
    let waiting = notes(&joined, "waiting-for-start");
    assert_eq!(waiting.len(), 1, "{joined:#?}");
    assert!(waiting[0]["detail"]["start_mismatches"].as_u64().unwrap() > 4);
    assert_eq!(waiting[0]["evidence"].as_array().unwrap().len(), 1);
    let start = notes(&joined, "game-start");
    assert_eq!(start.len(), 1, "{joined:#?}");
    assert_eq!(start[0]["detail"]["joined"], true, "{:#?}", start[0]);
    let note = notes(&joined, "joined-in-progress");
    assert_eq!(note.len(), 1);
    assert!(
        note[0]["detail"]["message"]
            .as_str()
            .unwrap()
            .contains("fewest moves"),
        "{:#?}",
        note[0]
    );
    let played = truth_moves(&truth(&clip));
    let recorded = recorded_moves(&joined);
    assert!(recorded.len() >= 3, "{recorded:?} of {played:?}");
    assert_eq!(recorded[..], played[played.len() - recorded.len()..]);
    assert!(of_kind(&joined, "flag").is_empty(), "{joined:#?}");
    let pgn = std::fs::read_to_string(out.join("game.pgn")).unwrap();
    assert!(pgn.contains("[SetUp \"1\"]"), "{pgn}");
    verify(&out);

    // Given the position, the game is recorded from it move for move.
    let fen = kradan::games::makruk::read_pgn(&std::fs::read_to_string(&middle).unwrap())
        .unwrap()
        .tag("FEN")
        .unwrap()
        .to_string();
    let out = work.path().join("given");
    let output = record(&footage, "makruk", &out, &["--fen", &fen]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&out);
    assert_eq!(recorded_moves(&events), truth_moves(&truth(&clip)));
    let start = notes(&events, "game-start");
    assert_eq!(start[0]["detail"]["fen"], fen.as_str());
    let pgn = std::fs::read_to_string(out.join("game.pgn")).unwrap();
    assert!(pgn.contains("[SetUp \"1\"]"), "{pgn}");
    assert!(pgn.contains(&format!("[FEN \"{fen}\"]")), "{pgn}");
    verify(&out);

    // A FEN that is not one is refused.
    let bad = record(
        &footage,
        "makruk",
        &work.path().join("bad"),
        &["--fen", "8/8 w"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

#[test]
fn a_makhos_game_in_progress_is_joined_as_set_up() {
    let work = tempfile::tempdir().unwrap();
    let middle = work.path().join("middle.pdn");
    from_the_middle("makhos/annotated.pdn", 8, 8, &middle);
    let clip = work.path().join("clip");
    let footage = render_record(&middle, &clip, 9, 8, &[]);
    let out = work.path().join("record");
    let output = record(&footage, "makhos", &out, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = events(&out);
    let start = notes(&events, "game-start");
    assert!(!start.is_empty(), "{events:#?}");
    assert_eq!(start[0]["detail"]["joined"], true, "{:#?}", start[0]);
    assert_eq!(notes(&events, "joined-in-progress").len(), 1);
    // The moves made before the position held still long enough to join are in the
    // position joined; every one after is recorded.
    let truth = truth_moves(&truth(&clip));
    let recorded = recorded_moves(&events);
    assert!(recorded.len() >= 4, "{recorded:?} of {truth:?}");
    assert_eq!(recorded[..], truth[truth.len() - recorded.len()..]);
    let pdn = std::fs::read_to_string(out.join("game.pdn")).unwrap();
    assert!(pdn.contains("[SetUp \"1\"]"), "{pdn}");
    assert!(pdn.contains("[FEN \""), "{pdn}");
    verify(&out);
}
