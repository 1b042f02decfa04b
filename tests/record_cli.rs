//! End-to-end tests of `kradan record`: the real binary on rendered footage whose truth is
//! known frame by frame, on the real webcam sequence of ../shared/data, and on bad input.

mod common;

use common::{kradan, record_then_kill, shared_data};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/go")
}

fn run(args: &[&str]) -> Output {
    kradan().args(args).output().expect("kradan runs")
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

/// An SGF point as (row, col).
fn sgf_point(text: &str) -> (usize, usize) {
    let bytes = text.as_bytes();
    ((bytes[1] - b'a') as usize, (bytes[0] - b'a') as usize)
}

/// Symmetry `k` (0..8) of a board of `n` lines: the recorder cannot know which side
/// Black sat on, so its frame is the truth's up to one of them.
fn turn(k: usize, n: usize, (mut r, mut c): (usize, usize)) -> (usize, usize) {
    for _ in 0..k % 4 {
        (r, c) = (c, n - 1 - r);
    }
    if k >= 4 {
        c = n - 1 - c;
    }
    (r, c)
}

/// Recorded moves as (colour, point), and how many agree with `truth` (colour, SGF point)
/// in order under the best symmetry.
fn moves_right(recorded: &[&Value], truth: &[(String, String)], n: usize) -> usize {
    (0..8)
        .map(|k| {
            let turn = |point| turn(k, n, point);
            recorded
                .iter()
                .zip(truth)
                .filter(|(event, (color, point))| {
                    event["color"] == color.as_str()
                        && (point == "pass" && event["notation"] == "pass"
                            || point != "pass"
                                && event["points"][0]
                                    == serde_json::json!([
                                        turn(sgf_point(point)).0,
                                        turn(sgf_point(point)).1
                                    ]))
                })
                .count()
        })
        .max()
        .unwrap_or(0)
}

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

fn read_truth(clip: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(clip.join("truth.json")).unwrap()).unwrap()
}

/// Records `clip`'s footage into a fresh folder; the folder (kept alive by the guard) and
/// its events.
fn record_clip(clip: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<Value>) {
    record_video(&clip.join("footage.mp4"), extra)
}

fn record_video(footage: &Path, extra: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<Value>) {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("record");
    let mut args = vec![
        "record",
        footage.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let output = run(&args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&dir);
    (out, dir, events)
}

#[test]
fn a_rendered_9x9_game_is_recorded_move_for_move_within_half_a_second() {
    let clip = samples().join("clip-9x9");
    let (_guard, dir, events) = record_clip(&clip, &[]);
    let truth = read_truth(&clip);
    let expected = truth_moves(&truth);
    let moves = of_kind(&events, "move");
    assert_eq!(moves.len(), expected.len(), "every move, no more");
    assert_eq!(moves_right(&moves, &expected, 9), expected.len());
    assert!(
        of_kind(&events, "flag").is_empty(),
        "a clean game raises no flag"
    );
    // Latency: each move is committed within 0.5 s of video time after the hand left.
    for (event, truth_move) in moves.iter().zip(truth["moves"].as_array().unwrap()) {
        let late =
            event["video_time"].as_f64().unwrap() - truth_move["completed_at"].as_f64().unwrap();
        assert!(
            (-0.05..=0.5).contains(&late),
            "move {} committed {late:.2} s after the hand left",
            truth_move["number"]
        );
        assert_eq!(
            event["evidence"].as_array().unwrap().len(),
            2,
            "a frame before and after"
        );
    }
    // The record is intact and its SGF replays legally with the same moves.
    let verified = run(&["verify", dir.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let replayed = run(&["replay", dir.join("game.sgf").to_str().unwrap()]);
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stdout)
    );
    let sgf = std::fs::read_to_string(dir.join("game.sgf")).unwrap();
    assert_eq!(
        sgf.matches(";B[").count() + sgf.matches(";W[").count(),
        expected.len()
    );
    assert!(sgf.contains("t="), "moves carry their video time");
}

#[test]
fn staged_irregularities_are_flagged_with_their_rules() {
    // The 19×19 clip joins a game with 40 stones on the board, then White plays twice
    // after move 4 and the prisoners of move 19 are left on the board.
    let clip = samples().join("clip-19x19-opening");
    let (_guard, _dir, events) = record_clip(&clip, &[]);
    let truth = read_truth(&clip);
    let moves = of_kind(&events, "move");
    let expected = truth_moves(&truth);
    assert_eq!(moves_right(&moves, &expected, 19), expected.len());
    let flags: Vec<(String, Value)> = of_kind(&events, "flag")
        .iter()
        .map(|f| {
            (
                f["detail"]["flag"].as_str().unwrap().to_string(),
                f["rules"].clone(),
            )
        })
        .collect();
    assert_eq!(
        flags,
        [
            (
                "double-move".to_string(),
                serde_json::json!(["TGA 20", "TML 23"])
            ),
            (
                "captures-not-removed".to_string(),
                serde_json::json!(["TGA 27", "TML 30"])
            ),
        ]
    );
    for flag in of_kind(&events, "flag") {
        assert!(!flag["evidence"].as_array().unwrap().is_empty(), "{flag}");
        assert!(!flag["penalties"].as_array().unwrap().is_empty());
    }
    let joined = events
        .iter()
        .any(|e| e["detail"]["note"] == "joined-in-progress");
    assert!(joined, "the stones already on the board start the record");
}

#[test]
fn the_real_webcam_sequence_gives_its_nine_moves_then_a_double_move() {
    let Some(data) = shared_data() else { return };
    let folder = data.join("go-photos/gomrade/testing_sequence");
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("record");
    let output = run(&[
        "record",
        folder.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sgf = std::fs::read_to_string(folder.join("game1.sgf")).unwrap();
    let expected: Vec<(String, String)> = sgf
        .split(';')
        .filter_map(|node| {
            let node = node.trim();
            let color = match node.chars().next()? {
                'B' => "black",
                'W' => "white",
                _ => return None,
            };
            Some((color.to_string(), node[2..4].to_string()))
        })
        .collect();
    assert_eq!(expected.len(), 9);
    let events = events(&dir);
    let moves = of_kind(&events, "move");
    assert_eq!(
        moves_right(&moves[..9], &expected, 19),
        9,
        "the nine moves of game1.sgf"
    );
    assert_eq!(
        moves[7]["detail"]["captured"].as_array().unwrap().len(),
        1,
        "the capture at move 8"
    );
    // Then three white stones appear at once: White moved three times.
    let double: Vec<&Value> = of_kind(&events, "flag")
        .into_iter()
        .filter(|f| f["detail"]["flag"] == "double-move")
        .collect();
    assert!(!double.is_empty(), "a double-move flag");
    for flag in double {
        assert_eq!(flag["rules"][0], "TGA 20");
        assert_eq!(flag["color"], "white");
    }
}

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let out = tempfile::tempdir().unwrap();
    let record = |source: &str, extra: &[&str]| {
        let dir = out.path().join(format!("r{}", extra.len() + source.len()));
        let mut args = vec!["record", source, "--out", dir.to_str().unwrap(), "--quiet"];
        args.extend_from_slice(extra);
        run(&args)
    };
    let missing = record("/nonexistent/game.mp4", &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("game.mp4"));

    // A folder whose one image shows no board.
    let blank = out.path().join("blank");
    std::fs::create_dir(&blank).unwrap();
    let image = opencv::core::Mat::new_rows_cols_with_default(
        240,
        320,
        opencv::core::CV_8UC3,
        opencv::core::Scalar::all(90.0),
    )
    .unwrap();
    opencv::imgcodecs::imwrite_def(blank.join("0.png").to_str().unwrap(), &image).unwrap();
    let no_board = record(blank.to_str().unwrap(), &[]);
    assert_eq!(
        no_board.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&no_board.stderr)
    );
    assert!(String::from_utf8_lossy(&no_board.stderr).contains("no board"));

    let clip = samples().join("clip-9x9/footage.mp4");
    let wrong_size = record(clip.to_str().unwrap(), &["--size", "19"]);
    assert_eq!(
        wrong_size.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&wrong_size.stderr)
    );

    let bad_size = record(clip.to_str().unwrap(), &["--size", "7", "--komi", "7.5"]);
    assert_eq!(bad_size.status.code(), Some(2));

    // The output folder is a file.
    let file = out.path().join("taken");
    std::fs::write(&file, "not a folder").unwrap();
    let unwritable = run(&[
        "record",
        clip.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(unwritable.status.code(), Some(2));

    // An existing record is never overwritten.
    let dir = out.path().join("kept");
    assert!(
        run(&[
            "record",
            clip.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--quiet"
        ])
        .status
        .success()
    );
    let again = run(&[
        "record",
        clip.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
}

#[test]
fn a_truncated_video_is_recorded_up_to_the_break() {
    let clip = samples().join("clip-9x9/footage.mp4");
    let out = tempfile::tempdir().unwrap();
    // An MP4 whose index is at the end is unreadable when cut; write a whole-frame AVI
    // instead, then cut it: the frames before the cut are still readable.
    let avi = out.path().join("clip.avi");
    {
        use opencv::prelude::*;
        use opencv::videoio;
        let mut capture =
            videoio::VideoCapture::from_file(clip.to_str().unwrap(), videoio::CAP_FFMPEG).unwrap();
        let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
        let mut writer = videoio::VideoWriter::new(
            avi.to_str().unwrap(),
            fourcc,
            8.0,
            opencv::core::Size::new(640, 480),
            true,
        )
        .unwrap();
        let mut frame = opencv::core::Mat::default();
        while capture.read(&mut frame).unwrap() && !frame.empty() {
            writer.write(&frame).unwrap();
        }
    }
    let whole = std::fs::read(&avi).unwrap();
    let cut = out.path().join("cut.avi");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let dir = out.path().join("record");
    let output = run(&[
        "record",
        cut.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("frame"), "says where it broke: {stderr}");
    let events = events(&dir);
    let moves = of_kind(&events, "move").len();
    assert!(
        moves >= 10,
        "the first half of the game was recorded ({moves} moves)"
    );
    assert!(run(&["verify", dir.to_str().unwrap()]).status.success());
}

#[test]
fn a_killed_recording_resumes_the_same_record_and_chain() {
    let clip = samples().join("clip-9x9");
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("record");
    record_then_kill(
        &[
            "record",
            clip.join("footage.mp4").to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
            "--rate",
            "4",
        ],
        &dir,
        8,
        std::time::Duration::from_secs(120),
    );
    let resumed = run(&[
        "record",
        clip.join("footage.mp4").to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
        "--resume",
        "--rate",
        "4",
    ]);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let verified = run(&["verify", dir.to_str().unwrap()]);
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let events = events(&dir);
    assert!(events.iter().any(|e| e["kind"] == "session-resume"));
    let moves = of_kind(&events, "move");
    let numbers: Vec<u64> = moves
        .iter()
        .map(|m| m["move_number"].as_u64().unwrap())
        .collect();
    assert_eq!(
        numbers,
        (1..=40).collect::<Vec<u64>>(),
        "each move once, in order"
    );
    let expected = truth_moves(&read_truth(&clip));
    assert_eq!(moves_right(&moves, &expected, 9), 40);
}

#[test]
fn no_camera_is_a_clear_error() {
    if Path::new("/dev/video0").exists() {
        eprintln!("skipped: this machine has a camera");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("record");
    let output = run(&[
        "record",
        "camera:0",
        "--out",
        dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("camera"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_calibration_files_corners_place_the_board_without_the_locator() {
    let clip = samples().join("clip-9x9");
    let truth = read_truth(&clip);
    let out = tempfile::tempdir().unwrap();
    let calibration = out.path().join("calibration.json");
    let corners = &truth["frames"][0]["corners"];
    let (w, h) = (&truth["camera"]["width"], &truth["camera"]["height"]);
    std::fs::write(
        &calibration,
        format!(r#"{{"size": 9, "corners": {corners}, "image_size": [{w}, {h}]}}"#),
    )
    .unwrap();
    let (_guard, _dir, events) =
        record_clip(&clip, &["--calibration", calibration.to_str().unwrap()]);
    let found = events
        .iter()
        .find(|e| e["detail"]["note"] == "board-found")
        .expect("a board-found note");
    assert!(
        found["detail"]["message"]
            .as_str()
            .unwrap()
            .contains("calibration"),
        "{found}"
    );
    let expected = truth_moves(&truth);
    let moves = of_kind(&events, "move");
    assert_eq!(moves_right(&moves, &expected, 9), expected.len());
}

#[test]
fn a_lens_that_bows_the_grid_is_measured_on_the_board_and_taken_out() {
    // Seed 100463's camera at 1280×720 has the renderer's strongest barrel (k1 −0.25 at
    // a focal length of 0.71 picture widths) and the board fills the frame: no one
    // homography fits the picture as taken, and without the lens nothing was recorded.
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("opening.sgf");
    std::fs::write(
        &record,
        "(;GM[1]SZ[19];B[pd];W[cd];B[pp];W[dp];B[pj];W[nc])",
    )
    .unwrap();
    let clip = out.path().join("clip");
    let rendered = run(&[
        "render",
        record.to_str().unwrap(),
        "--out",
        clip.to_str().unwrap(),
        "--seed",
        "100463",
        "--resolution",
        "1280x720",
        "--fps",
        "15",
        "--moves",
        "4",
        "--codec",
        "mjpeg",
    ]);
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let truth = read_truth(&clip);
    let k1 = truth["camera"]["distortion"][0].as_f64().unwrap();
    assert!(
        k1 < -0.2,
        "the scene this test was written for has changed: k1 {k1}"
    );

    let (_guard, _dir, events) = record_video(&clip.join("footage.avi"), &[]);
    let lens: Vec<&Value> = of_kind(&events, "note")
        .into_iter()
        .filter(|n| n["detail"]["note"] == "lens")
        .collect();
    assert_eq!(lens.len(), 1, "one note says what was decided of the lens");
    let message = lens[0]["detail"]["message"].as_str().unwrap();
    assert!(message.contains("every frame is straightened"), "{message}");
    let expected = truth_moves(&truth);
    let moves = of_kind(&events, "move");
    assert_eq!(moves.len(), expected.len(), "every move, no more");
    assert_eq!(moves_right(&moves, &expected, 19), expected.len());
    assert!(
        of_kind(&events, "flag").is_empty(),
        "a clean game raises no flag"
    );
}
