//! `kradan replay` end to end: the real binary on real and hand-made records.

mod common;

use common::kradan;
use std::path::Path;
use std::process::Output;

fn replay(args: &[&str]) -> Output {
    kradan()
        .arg("replay")
        .args(args)
        .output()
        .expect("kradan runs")
}

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_legal_professional_game_exits_0_with_its_final_position_and_captures() {
    let output = replay(&[&sample("go/shusaku-gennan-1846.sgf")]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("moves: 325"), "{text}");
    // GNU Go's `loadsgf` + `captures` on the same record give 31 and 29.
    assert!(text.contains("captures: black 31, white 29"), "{text}");
    assert!(
        text.contains(". . . W W W B . B B W W . W . W W B ."),
        "row 0 of the grid is SGF row a: {text}"
    );
    assert!(text.contains("result: B+2 (from the record)"), "{text}");
    assert!(!text.contains("ILLEGAL"));
}

#[test]
fn illegal_moves_are_listed_with_their_rules_and_exit_1() {
    let output = replay(&[&sample("go/irregular-9x9.sgf")]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    for expected in [
        "move 10 W bb: ILLEGAL [ko",
        "(TGA 8, TGA 28, TML 31; warning + lose-turn)",
        "move 15 B ii: ILLEGAL [suicide",
        "(TGA 6, TGA 29, TML 32; warning + lose-turn)",
        "move 17 W fe: ILLEGAL [white plays twice",
        "(TGA 20, TML 23; loss)",
        "result: W+4.5 by Thai counting",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn json_lines_hold_each_problem_then_the_summary() {
    let output = replay(&["--json", &sample("go/irregular-9x9.sgf")]);
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["kind"], "problem");
    assert_eq!(lines[0]["move_number"], 10);
    assert_eq!(lines[0]["rules"][1], "TGA 28");
    assert_eq!(lines[2]["penalties"][0], "loss");
    let summary = &lines[3];
    assert_eq!(summary["kind"], "final");
    assert_eq!(summary["illegal"], true);
    assert_eq!(summary["position"].as_array().unwrap().len(), 9);
    assert_eq!(summary["captured_by_black"], 1);
}

#[test]
fn a_finished_game_is_scored_with_the_dead_stones_its_territory_marks_give() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("finished.sgf");
    // White's wall on column e, Black's on f; a white stone dead in Black's area, marked
    // by the server's TB list.
    let mut moves = String::new();
    for row in 'a'..='i' {
        moves.push_str(&format!(";B[f{row}];W[e{row}]"));
    }
    moves.push_str(";B[];W[hh];B[];W[]TB[gh][hh][ih]");
    std::fs::write(&path, format!("(;GM[1]FF[4]SZ[9]KM[6.5]RE[W+0.5]{moves})")).unwrap();
    let output = replay(&[path.to_str().unwrap()]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("dead stones: 1"), "{text}");
    // Black: 27 points of territory + 1 dead stone; White: 36 + 6.5.
    assert!(
        text.contains("black 27 territory + 1 prisoners = 28"),
        "{text}"
    );
    assert!(text.contains("result: W+14.5 by Thai counting"), "{text}");
    assert!(text.contains("the record gives RE[W+0.5]"), "{text}");
}

#[test]
fn unreadable_input_exits_2_with_the_place_of_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.sgf");
    std::fs::write(&path, "(;GM[1]SZ[19]\n;B[dd];W[pp\n").unwrap();
    let output = replay(&[path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("line 2, column 9"), "{error}");

    let output = replay(&["/nonexistent/game.sgf"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read"));

    let output = replay(&[&sample("README.md")]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn the_records_beside_the_shared_photos_replay_cleanly() {
    let Some(data) = common::shared_data() else {
        return;
    };
    let records = [
        "go-photos/gomrade/testing_sequence/game.sgf",
        "go-photos/gomrade/testing_sequence/game1.sgf",
        "go-photos/goban_to_sgf/basic.sgf",
        "go-photos/goban_to_sgf/cornersnumbered.sgf",
    ];
    for record in records {
        let path = data.join(record);
        let output = replay(&[path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{record}: {output:?}");
    }
}

#[test]
fn mak_hos_and_makruk_records_get_the_same_report_and_exit_codes() {
    let output = replay(&[&sample("makhos/irregular.pdn")]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("ILLEGAL [a man moved backward] (HOS 3.2"),
        "{text}"
    );
    assert!(
        text.contains("(HOS 2.4, HOS-SCHOOL 3.5.2; advisory)"),
        "{text}"
    );
    assert!(text.contains("final position:"), "{text}");

    let output = replay(&[&sample("makhos/annotated.pdn")]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    let output = replay(&["--json", &sample("makruk/short_game.pgn")]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let last: serde_json::Value =
        serde_json::from_str(stdout(&output).lines().last().unwrap()).unwrap();
    assert_eq!(last["game"], "makruk");
    assert_eq!(last["position"][0], "B . B B B . B B");

    let dir = tempfile::tempdir().unwrap();
    let illegal = dir.path().join("illegal.pgn");
    std::fs::write(&illegal, "[Variant \"makruk\"]\n\n1. e4 e5 2. Kd3 *\n").unwrap();
    let output = replay(&[illegal.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let broken = dir.path().join("broken.pdn");
    std::fs::write(&broken, "[GameType \"31\"]\n1. 9-13 {never closed\n").unwrap();
    let output = replay(&[broken.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("line"));
}
