//! End-to-end tests of `kradan render`: the real binary films real records; the footage
//! is read back with OpenCV and checked against its own truth, against the rules engine,
//! and against the still-photo recogniser.

mod common;

use common::kradan;
use kradan::games::Occupancy;
use kradan::games::go::sgf;
use kradan::games::go::{Move, Position};
use opencv::prelude::*;
use opencv::videoio;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

fn render(record: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let output = kradan()
        .arg("render")
        .arg(record)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("kradan runs");
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    }
    output
}

fn truth(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth.json"))
        .expect("truth.json is JSON")
}

#[test]
fn a_clip_and_its_truth_are_written_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(
        &sample("go/gnugo-9x9.sgf"),
        dir.path(),
        &[
            "--seconds",
            "8",
            "--resolution",
            "640x480",
            "--codec",
            "mjpeg",
            "--seed",
            "5",
        ],
    );
    assert!(out.status.success());
    let t = truth(dir.path());
    assert_eq!(t["format"], "kradan-render-truth/1");
    assert_eq!(t["game"], "go");
    let frames = t["frames"].as_array().unwrap();
    assert_eq!(frames.len(), t["frame_count"].as_u64().unwrap() as usize);
    assert_eq!(t["camera"]["width"], 640);
    let video = dir.path().join(t["video"].as_str().unwrap());
    let mut capture =
        videoio::VideoCapture::from_file(video.to_str().unwrap(), videoio::CAP_ANY).unwrap();
    assert!(capture.is_opened().unwrap());
    let mut frame = opencv::core::Mat::default();
    let mut count = 0;
    while capture.read(&mut frame).unwrap() {
        assert_eq!((frame.cols(), frame.rows()), (640, 480));
        count += 1;
    }
    assert_eq!(count, frames.len(), "one video frame per truth frame");
    for f in frames {
        let position = &t["positions"][f["position"].as_u64().unwrap() as usize];
        assert_eq!(position["rows"].as_array().unwrap().len(), 9);
        for corner in f["corners"].as_array().unwrap() {
            let (x, y) = (corner[0].as_f64().unwrap(), corner[1].as_f64().unwrap());
            assert!((0.0..640.0).contains(&x) && (0.0..480.0).contains(&y));
        }
    }
    assert!(
        !t["moves"].as_array().unwrap().is_empty(),
        "8 s of a 9x9 game show a move"
    );
    assert!(
        !t["hands"].as_array().unwrap().is_empty(),
        "and the hand that made it"
    );
}

#[test]
fn the_same_seed_renders_the_same_clip() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&a, &b] {
        let out = render(
            &sample("go/gnugo-9x9.sgf"),
            dir.path(),
            &[
                "--seconds",
                "3",
                "--resolution",
                "640x480",
                "--frames",
                "--seed",
                "11",
            ],
        );
        assert!(out.status.success());
    }
    let read = |d: &tempfile::TempDir, f: &str| std::fs::read(d.path().join(f)).unwrap();
    assert_eq!(read(&a, "truth.json"), read(&b, "truth.json"));
    for f in [
        "frames/000000.png",
        "frames/000020.png",
        "frames/000044.png",
    ] {
        assert_eq!(read(&a, f), read(&b, f), "{f}");
    }
    let c = tempfile::tempdir().unwrap();
    render(
        &sample("go/gnugo-9x9.sgf"),
        c.path(),
        &[
            "--seconds",
            "3",
            "--resolution",
            "640x480",
            "--frames",
            "--seed",
            "12",
        ],
    );
    assert_ne!(read(&a, "frames/000000.png"), read(&c, "frames/000000.png"));
}

/// After every move, once its hand has left, the frame shows the engine's position.
#[test]
fn positions_follow_the_record_and_its_captures() {
    let record = sample("go/gnugo-9x9.sgf");
    let dir = tempfile::tempdir().unwrap();
    let out = render(
        &record,
        dir.path(),
        &[
            "--resolution",
            "640x480",
            "--codec",
            "mjpeg",
            "--fps",
            "5",
            "--seed",
            "3",
        ],
    );
    assert!(out.status.success());
    let t = truth(dir.path());
    let game = sgf::read(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let mut position = Position::new(game.size);
    let moves = t["moves"].as_array().unwrap();
    assert_eq!(moves.len(), game.moves.len());
    let mut captured = 0;
    for (recorded, shown) in game.moves.iter().zip(moves) {
        let played = position.play(recorded.color, recorded.mv).unwrap();
        captured += played.captured.len();
        let Move::Play(point) = recorded.mv else {
            continue;
        };
        assert_eq!(shown["notation"], point.to_sgf());
        assert_eq!(
            shown["captures"].as_array().unwrap().len(),
            played.captured.len()
        );
        let frame = &t["frames"][shown["completed_frame"].as_u64().unwrap() as usize];
        assert_eq!(frame["hand_over_board"], false, "the hand has left");
        let rows: Vec<String> =
            t["positions"][frame["position"].as_u64().unwrap() as usize]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect();
        let expected = position.board().to_occupancy();
        assert_eq!(
            Occupancy::from_text_rows(&rows).unwrap(),
            expected,
            "after move {}",
            shown["number"]
        );
    }
    assert_eq!(captured, 6, "the record captures six stones at move 38");
}

#[test]
fn staged_anomalies_are_in_the_truth_with_their_rules() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(
        &sample("go/gnugo-19x19-opening.sgf"),
        dir.path(),
        &[
            "--resolution",
            "640x480",
            "--codec",
            "mjpeg",
            "--fps",
            "4",
            "--seed",
            "2",
            "--anomaly",
            "double-move@4",
            "--anomaly",
            "captures-left@19",
            "--anomaly",
            "camera-bump@8",
        ],
    );
    assert!(out.status.success());
    let t = truth(dir.path());
    let anomalies = t["anomalies"].as_array().unwrap();
    let kinds: Vec<&str> = anomalies
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["double-move", "captures-left"]);
    assert_eq!(anomalies[0]["rules"][0], "TGA 20");
    assert_eq!(anomalies[0]["penalties"][0], "loss");
    assert_eq!(anomalies[1]["rules"][0], "TGA 27");
    let bumps = t["bumps"].as_array().unwrap();
    assert!(
        bumps
            .iter()
            .any(|b| b["requested"] == true && b["moved"] == "camera")
    );
    // The extra move is a move of its own, by the same colour as the one before.
    let moves = t["moves"].as_array().unwrap();
    let extra = anomalies[0]["move_number"].as_u64().unwrap() as usize;
    assert_eq!(moves[extra - 1]["record_number"], Value::Null);
    assert_eq!(moves[extra - 1]["color"], moves[extra - 2]["color"]);
    // The captured stone stays on the board after the capturing move.
    let capture = &moves[anomalies[1]["move_number"].as_u64().unwrap() as usize - 1];
    let frame = &t["frames"][capture["completed_frame"].as_u64().unwrap() as usize];
    let rows = &t["positions"][frame["position"].as_u64().unwrap() as usize]["rows"];
    let point = capture["captures"][0].as_str().unwrap().as_bytes();
    let (col, row) = ((point[0] - b'a') as usize, (point[1] - b'a') as usize);
    let token = rows[row]
        .as_str()
        .unwrap()
        .split(' ')
        .nth(col)
        .unwrap()
        .to_string();
    assert_ne!(
        token, ".",
        "captured stone left at {}",
        capture["captures"][0]
    );
}

/// The truth's corners are where the board is in the picture: the still-photo locator,
/// which knows nothing of the renderer, finds the same grid.
#[test]
fn the_recogniser_finds_the_board_where_the_truth_says() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(
        &sample("go/gnugo-9x9.sgf"),
        dir.path(),
        &[
            "--seconds",
            "1",
            "--resolution",
            "1280x720",
            "--frames",
            "--seed",
            "4",
            "--style",
            "clean",
        ],
    );
    assert!(out.status.success());
    let t = truth(dir.path());
    let frame = dir.path().join("frames/000000.png");
    let detected = kradan()
        .arg("detect")
        .arg(&frame)
        .args(["--size", "9", "--json"])
        .output()
        .unwrap();
    assert!(
        detected.status.success(),
        "{}",
        String::from_utf8_lossy(&detected.stderr)
    );
    let found: Value = serde_json::from_slice(&detected.stdout).unwrap();
    let corners: Vec<[f64; 2]> = found["corners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()])
        .collect();
    let expected: Vec<[f64; 2]> = t["frames"][0]["corners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()])
        .collect();
    // Which corner the locator calls first depends on the view: compare as sets.
    for e in &expected {
        let nearest = corners
            .iter()
            .map(|c| (c[0] - e[0]).hypot(c[1] - e[1]))
            .fold(f64::MAX, f64::min);
        assert!(
            nearest < 3.0,
            "corner {e:?} found {nearest:.1} px away ({corners:?})"
        );
    }
    let empty: Vec<String> = found["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    assert!(
        empty.iter().all(|r| !r.contains('B') && !r.contains('W')),
        "an empty board reads empty"
    );
}

#[test]
fn bad_input_gets_a_clear_error_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["/no/such/game.sgf".into()], "cannot read"),
        (
            vec![
                sample("go/gnugo-9x9.sgf")
                    .display()
                    .to_string()
                    .replace(".sgf", ".txt"),
            ],
            "expected a .sgf",
        ),
        (
            vec![
                sample("go/gnugo-9x9.sgf").display().to_string(),
                "--anomaly".into(),
                "wobble@3".into(),
            ],
            "unknown Go anomaly",
        ),
        (
            vec![
                sample("go/gnugo-9x9.sgf").display().to_string(),
                "--anomaly".into(),
                "ko-retake@3".into(),
            ],
            "no ko",
        ),
        (
            vec![
                sample("go/gnugo-9x9.sgf").display().to_string(),
                "--resolution".into(),
                "big".into(),
            ],
            "expected WxH",
        ),
    ];
    for (args, message) in cases {
        let out = kradan()
            .arg("render")
            .args(&args)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // An output folder that cannot be made.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = kradan()
        .arg("render")
        .arg(sample("go/gnugo-9x9.sgf"))
        .arg("--out")
        .arg(file.join("clip"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot create"));
}

/// The bundled clips are what their documented commands make: rendering the 19×19 one
/// again gives its truth byte for byte (a renderer change that alters footage must
/// re-render the samples), and every clip's video has one frame per truth frame.
#[test]
fn the_bundled_clips_match_their_commands_and_their_truth() {
    let dir = tempfile::tempdir().unwrap();
    let out = render(
        &sample("go/gnugo-19x19-opening.sgf"),
        dir.path(),
        &[
            "--seed",
            "19",
            "--resolution",
            "640x480",
            "--fps",
            "10",
            "--anomaly",
            "double-move@4",
            "--anomaly",
            "captures-left@19",
        ],
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(dir.path().join("truth.json")).unwrap(),
        std::fs::read(sample("go/clip-19x19-opening/truth.json")).unwrap(),
        "re-render the samples with the commands in samples/README.md"
    );
    for clip in [
        "go/clip-9x9",
        "go/clip-19x19-opening",
        "makhos/clip",
        "makruk/clip",
    ] {
        let t = truth(&sample(clip));
        let video = sample(clip).join(t["video"].as_str().unwrap());
        let size = std::fs::metadata(&video).unwrap().len();
        assert!(size <= 3_000_000, "{clip}: {size} bytes");
        let mut capture =
            videoio::VideoCapture::from_file(video.to_str().unwrap(), videoio::CAP_ANY).unwrap();
        let mut frame = opencv::core::Mat::default();
        let mut count = 0;
        while capture.read(&mut frame).unwrap() {
            count += 1;
        }
        assert_eq!(count, t["frame_count"].as_u64().unwrap() as usize, "{clip}");
    }
}
