//! `kradan serve` end to end: the real binary records a rendered clip played as a camera
//! (`play:`), and the tests talk to it over loopback as the pages and a referee would.

mod serve_support;

use serde_json::Value;
use serve_support::{Server, event_file, moves, sample};
use std::io::Read;
use std::process::Command;
use std::time::Duration;

fn clip_9x9() -> String {
    format!("play:{}", sample("go/clip-9x9/footage.mp4"))
}

#[test]
fn a_hall_is_recorded_served_checked_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let event = event_file(
        dir.path(),
        &[
            ("table-1", "go", &clip_9x9(), Some(9)),
            ("table-2", "makruk", "camera:0", None),
        ],
    );
    let data = dir.path().join("data");
    let server = Server::start(&data, Some(&event));
    let updates = server.listen("?board=table-1");

    // Every event of the board is pushed, in order, none missing, each with the board after it.
    let mut seqs = Vec::new();
    let mut latencies = Vec::new();
    let mut moves_seen = 0;
    while moves_seen < 4 {
        let (update, received) = updates
            .recv_timeout(Duration::from_secs(60))
            .expect("an update within a minute of footage");
        assert_eq!(update["board"], "table-1");
        seqs.push(update["seq"].as_u64().unwrap());
        latencies.push(received.saturating_sub(update["synced_ms"].as_u64().unwrap()));
        if update["event"]["kind"] == "move" {
            moves_seen += 1;
            assert_eq!(
                moves(&update["view"]),
                update["event"]["move_number"].as_u64().unwrap()
            );
            assert_eq!(
                update["view"]["now"]["last_move"]["point"],
                update["event"]["notation"]
            );
        }
    }
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "no event skipped: {seqs:?}"
    );
    latencies.sort_unstable();
    eprintln!(
        "push latency (event synced to disk -> this client), ms: median {} max {} over {}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1],
        latencies.len()
    );

    let boards = server.json("/api/boards");
    let boards = boards["boards"].as_array().unwrap();
    assert_eq!(boards.len(), 2);
    let makruk = server.wait_for("table-2", 30, |view| view["status"] == "failed");
    assert_eq!(makruk["game"], "makruk");
    assert!(
        makruk["message"].as_str().unwrap().contains("no camera"),
        "{makruk}"
    );
    assert_eq!(boards[0]["players"]["black"], "Somchai");

    // Read-only routes are open, actions need the token.
    let pass = r#"{"action":"pass","by":"Anan","color":"black"}"#;
    let (status, body) = server.act("table-1", None, pass);
    assert_eq!(status, 401, "{body}");
    assert!(body["error"].as_str().unwrap().contains("Bearer"));
    let (status, _) = server.act("table-1", Some("Bearer wrong-token"), pass);
    assert_eq!(status, 403);
    let (status, _) = server.act("table-1", Some("Basic abc"), pass);
    assert_eq!(status, 403);

    // Every input is checked, with a JSON reason.
    for (path, expected) in [
        ("/api/boards/no-such-board", 404),
        ("/api/boards/bad%20name", 400),
        ("/api/boards/table-1/moves/x", 400),
        ("/api/boards/table-1/moves/-1", 400),
        ("/api/boards/table-1/moves/999", 404),
        ("/api/boards/table-1/evidence/..%2Fevents.jsonl", 400),
        ("/api/boards/table-1/evidence/nothing.jpg", 404),
        ("/api/nothing", 404),
        ("/overlay/no-such-board", 404),
    ] {
        let (status, body) = server.get(path);
        assert_eq!(status, expected, "{path}: {body}");
        let reason: Value = serde_json::from_str(&body).unwrap();
        assert!(reason["error"].is_string(), "{path}: {body}");
    }
    for (body, expected) in [
        ("not json", 422),
        (r#"{"action":"pass","by":"Anan","colour":"black"}"#, 422),
        (r#"{"action":"pass","by":"","color":"black"}"#, 422),
        (r#"{"action":"fly","by":"Anan"}"#, 422),
        (
            r#"{"action":"replace-last-move","by":"Anan","point":"zz"}"#,
            422,
        ),
        (r#"{"action":"resolve","by":"Anan","flag_id":77}"#, 409),
    ] {
        let (status, reply) = server.act_as_referee("table-1", body);
        assert_eq!(status, expected, "{body}: {reply}");
        assert!(reply["error"].is_string(), "{body}: {reply}");
    }
    let (status, reply) =
        server.act_as_referee("table-2", r#"{"action":"undo-last-move","by":"Anan"}"#);
    assert_eq!(status, 409, "{reply}");

    // Every route the OpenAPI document describes answers.
    let document = server.json("/api/openapi.json");
    let events = server.json("/api/boards/table-1/events");
    let evidence_file = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| e["evidence"][0]["path"].as_str())
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    for (path, item) in document["paths"].as_object().unwrap() {
        if item.get("get").is_none() || path == "/api/stream" {
            continue;
        }
        if path.ends_with("record.pdn") || path.ends_with("record.pgn") {
            // A Go board's record is SGF; the 8×8 records are fetched in the Mak-hos test.
            let (status, body) = server.get(&path.replace("{board}", "table-1"));
            assert_eq!(status, 404, "{path}");
            assert!(body.contains("record.sgf"), "{body}");
            continue;
        }
        let concrete = path
            .replace("{board}", "table-1")
            .replace("{number}", "1")
            .replace("{file}", &evidence_file);
        let (status, _) = server.get_bytes(&concrete);
        assert_eq!(status, 200, "{concrete}");
    }

    // The referee corrects a misread: the last move goes, the chain says who did it.
    let before = moves(&server.json("/api/boards/table-1"));
    let (status, reply) =
        server.act_as_referee("table-1", r#"{"action":"undo-last-move","by":"Anan"}"#);
    assert_eq!(status, 200, "{reply}");
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .contains("removed by the referee")
    );
    let events = server.json("/api/boards/table-1/events");
    let correction = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["detail"]["note"] == "correction")
        .expect("the correction is in the chain");
    assert_eq!(correction["detail"]["by"], "referee:Anan");
    let after = moves(&server.json("/api/boards/table-1"));
    assert!(
        after == before - 1 || after == before,
        "undone ({before} -> {after}; the clip may have moved on meanwhile)"
    );
    let actions = server.json("/api/boards/table-1/actions");
    assert!(
        actions["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["by"] == "referee:Anan" && a["accepted"] == true)
    );

    // Downloads: the SGF and the evidence bundle.
    let (status, sgf) = server.get("/api/boards/table-1/record.sgf");
    assert_eq!(status, 200);
    assert!(sgf.contains("SZ[9]") && sgf.contains(";B[ee]"), "{sgf}");
    let (status, zip_bytes) = server.get_bytes("/api/boards/table-1/evidence.zip");
    assert_eq!(status, 200);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).unwrap();
    let names: Vec<String> = archive.file_names().map(str::to_string).collect();
    assert!(names.contains(&"events.jsonl".to_string()), "{names:?}");
    assert!(names.contains(&"game.sgf".to_string()));
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("evidence/") && n.ends_with(".jpg"))
    );
    let mut chain = String::new();
    archive
        .by_name("events.jsonl")
        .unwrap()
        .read_to_string(&mut chain)
        .unwrap();
    assert!(chain.contains("referee:Anan"));

    // A stop ends every recorder's session cleanly.
    let view_before = server.json("/api/boards/table-1");
    let status = server.stop();
    assert!(status.success(), "{status:?}");
    let record = data.join("boards/table-1");
    let chain = std::fs::read_to_string(record.join("events.jsonl")).unwrap();
    assert!(chain.lines().last().unwrap().contains("session-end"));

    // Restarted with no event file, the past games are served from the store.
    let server = Server::start(&data, None);
    let view = server.json("/api/boards/table-1");
    assert_eq!(view["status"], "finished");
    assert_eq!(moves(&view), moves(&view_before));
    assert!(view["seq"].as_u64().unwrap() > view_before["seq"].as_u64().unwrap());
    assert_eq!(
        server.json("/api/boards")["boards"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Actions on a finished record continue its chain: a misread move put where it was
    // played, passes (one out of turn raises a flag), the flag dismissed, the count.
    let rows: Vec<String> = view["now"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    let empty = (0..9)
        .flat_map(|r| (0..9).map(move |c| (r, c)))
        .find(|&(r, c)| rows[r].as_bytes()[c] == b'.')
        .unwrap();
    let point = format!(
        "{}{}",
        (b'a' + empty.1 as u8) as char,
        (b'a' + empty.0 as u8) as char
    );
    let (status, reply) = server.act_as_referee(
        "table-1",
        &format!(r#"{{"action":"replace-last-move","by":"Anan","point":"{point}"}}"#),
    );
    assert_eq!(status, 200, "{reply}");
    let view = server.json("/api/boards/table-1");
    assert_eq!(view["now"]["last_move"]["point"], point.as_str());
    assert_eq!(moves(&view), moves(&view_before));
    let (_, sgf) = server.get("/api/boards/table-1/record.sgf");
    assert!(sgf.contains(&format!("[{point}]")), "{sgf}");
    let to_move = view["now"]["to_move"].as_str().unwrap().to_string();
    let other = if to_move == "black" { "white" } else { "black" };
    for _ in 0..2 {
        let (status, reply) = server.act_as_referee(
            "table-1",
            &format!(r#"{{"action":"pass","by":"Anan","color":"{to_move}"}}"#),
        );
        assert_eq!(status, 200, "{reply}");
    }
    let view = server.json("/api/boards/table-1");
    assert_eq!(moves(&view), moves(&view_before) + 2);
    assert_eq!(view["now"]["to_move"], other);
    let flag = &view["open_flags"][0];
    assert_eq!(flag["flag"], "double-move", "{view}");
    let dismiss = format!(
        r#"{{"action":"dismiss","by":"Anan","flag_id":{},"note":"entered twice by mistake"}}"#,
        flag["flag_id"]
    );
    let (status, reply) = server.act_as_referee("table-1", &dismiss);
    assert_eq!(status, 200, "{reply}");
    let view = server.json("/api/boards/table-1");
    assert!(view["open_flags"].as_array().unwrap().is_empty(), "{view}");
    let (status, reply) = server.act_as_referee("table-1", &dismiss);
    assert_eq!(status, 409, "closed once: {reply}");
    let (status, reply) =
        server.act_as_referee("table-1", r#"{"action":"dead","by":"Anan","points":[]}"#);
    assert_eq!(status, 200, "{reply}");
    let view = server.json("/api/boards/table-1");
    assert!(view["result"].as_str().is_some(), "{view}");
    drop(server);
    let verify = Command::new(env!("CARGO_BIN_EXE_kradan"))
        .arg("verify")
        .arg(&record)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

#[test]
fn bad_event_files_and_tokens_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[board]]\nname = \"a/b\"\ngame = \"go\"\nsource = \"x\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kradan"))
            .arg("serve")
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--event", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("board name"));
    let out = run(&["--token", "short"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
    let missing = dir.path().join("missing.toml");
    let out = run(&["--event", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn cameras_says_when_there_is_none() {
    let present = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("video"));
    let out = Command::new(env!("CARGO_BIN_EXE_kradan"))
        .arg("cameras")
        .output()
        .unwrap();
    if present {
        eprintln!("this machine has a camera: the listing is checked, not the message");
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("camera:"));
        return;
    }
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("no camera"), "{message}");
    assert!(message.contains("v4l2-ctl --list-devices"), "{message}");
}

/// A small version of `examples/serve_load.rs`: two boards, twenty listeners, none of
/// them missing an update; and a board whose camera is absent fails alone.
#[test]
fn many_listeners_miss_no_update_and_an_absent_camera_fails_its_board_only() {
    let dir = tempfile::tempdir().unwrap();
    let clip = clip_9x9();
    let event = event_file(
        dir.path(),
        &[
            ("a", "go", &clip, Some(9)),
            ("b", "go", &clip, Some(9)),
            ("c", "go", "camera:99", None),
        ],
    );
    let server = Server::start(&dir.path().join("data"), Some(&event));
    let listeners: Vec<_> = (0..20)
        .map(|i| {
            let query = if i % 4 == 0 {
                String::new()
            } else {
                format!("?board={}", ["a", "b"][i % 2])
            };
            (query.clone(), server.listen(&query))
        })
        .collect();
    for board in ["a", "b"] {
        server.wait_for(board, 60, |view| moves(view) >= 3);
    }
    let failed = server.wait_for("c", 30, |view| view["status"] == "failed");
    assert!(
        failed["message"].as_str().unwrap().contains("no camera"),
        "{failed}"
    );
    let listed: Vec<Vec<u64>> = ["a", "b"]
        .iter()
        .map(|b| {
            server.json(&format!("/api/boards/{b}/events"))["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["seq"].as_u64().unwrap())
                .collect()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    for (query, updates) in listeners {
        let got: Vec<(String, u64)> = updates
            .try_iter()
            .map(|(u, _)| {
                (
                    u["board"].as_str().unwrap().to_string(),
                    u["seq"].as_u64().unwrap(),
                )
            })
            .collect();
        for (index, board) in ["a", "b"].iter().enumerate() {
            if !query.is_empty() && !query.ends_with(board) {
                continue;
            }
            let seqs: Vec<u64> = got
                .iter()
                .filter(|(b, _)| b == board)
                .map(|(_, s)| *s)
                .collect();
            let first = *seqs.first().expect("updates of the board");
            let expected: Vec<u64> = listed[index]
                .iter()
                .copied()
                .filter(|&s| s >= first)
                .collect();
            assert!(
                seqs.starts_with(&expected),
                "listener {query:?}, board {board}: had {seqs:?}, the chain {expected:?}"
            );
        }
    }
    assert_eq!(server.json("/api/stats")["missed"], 0);
}

/// A Mak-hos board read from a video file: the pages get its pieces, the record downloads
/// as PDN, and a referee closes its flag on the finished record, which still verifies.
#[test]
fn a_makhos_board_is_served_and_its_flag_closed_by_the_referee() {
    let dir = tempfile::tempdir().unwrap();
    let clip = sample("makhos/clip/footage.mp4");
    let event = event_file(dir.path(), &[("mh", "makhos", &clip, None)]);
    let data = dir.path().join("data");
    let server = Server::start(&data, Some(&event));
    let view = server.wait_for("mh", 300, |view| view["status"] == "finished");
    assert_eq!(view["game"], "makhos");
    let now = &view["now"];
    assert_eq!(now["game"], "makhos");
    assert_eq!(now["size"], 8);
    assert!(moves(&view) >= 10, "the clip holds 32 moves: {view}");
    let pieces: Vec<&str> = now["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let rows: Vec<&str> = now["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(pieces.len(), 8);
    for (piece_row, row) in pieces.iter().zip(&rows) {
        for (piece, colour) in piece_row.chars().zip(row.chars()) {
            let expected = match piece {
                '.' => '.',
                'M' | 'K' => 'W',
                'm' | 'k' => 'B',
                other => panic!("no Mak-hos piece {other:?} in {pieces:?}"),
            };
            assert_eq!(colour, expected, "{pieces:?} v {rows:?}");
        }
    }
    let last = &now["last_move"];
    assert!(last["from"].is_array() && last["cell"].is_array(), "{last}");
    let first = server.json("/api/boards/mh/moves/1");
    assert_eq!(first["number"], 1);
    assert!(first["evidence"].is_string(), "{first}");

    let (status, pdn) = server.get("/api/boards/mh/record.pdn");
    assert_eq!(status, 200);
    assert!(pdn.contains("[GameType"), "{pdn}");
    let (status, body) = server.get("/api/boards/mh/record.sgf");
    assert_eq!(status, 404);
    assert!(body.contains("record.pdn"), "{body}");
    let (status, zip_bytes) = server.get_bytes("/api/boards/mh/evidence.zip");
    assert_eq!(status, 200);
    let archive = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes)).unwrap();
    assert!(archive.file_names().any(|n| n == "game.pdn"));

    // Go's actions are refused with the reason.
    let (status, reply) =
        server.act_as_referee("mh", r#"{"action":"pass","by":"Anan","color":"white"}"#);
    assert_eq!(status, 409, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("is for Go"),
        "{reply}"
    );
    // A misread last move: the referee removes it, then names the move played before it
    // in its place; the page and the record follow, and a move the rules refuse is refused.
    let standing = moves(&view);
    let last = |server: &Server| server.json("/api/boards/mh")["now"]["last_move"]["point"].clone();
    let was = last(&server);
    let (status, reply) = server.act_as_referee("mh", r#"{"action":"undo-last-move","by":"Anan"}"#);
    assert_eq!(status, 200, "{reply}");
    assert!(
        reply["message"]
            .as_str()
            .unwrap()
            .contains("removed by the referee"),
        "{reply}"
    );
    assert_eq!(moves(&server.json("/api/boards/mh")), standing - 1);
    let (status, reply) = server.act_as_referee(
        "mh",
        r#"{"action":"replace-last-move","by":"Anan","move":"1-32"}"#,
    );
    assert_eq!(status, 409, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("no such move"),
        "{reply}"
    );
    let (status, reply) = server.act_as_referee(
        "mh",
        r#"{"action":"replace-last-move","by":"Anan","point":"dd"}"#,
    );
    assert_eq!(status, 409, "{reply}");
    let (_, pdn) = server.get("/api/boards/mh/record.pdn");
    assert!(pdn.contains("removed by the referee"), "{pdn}");
    assert_ne!(last(&server), was, "{pdn}");
    let flag = view["open_flags"]
        .as_array()
        .unwrap()
        .first()
        .cloned()
        .expect("the clip's missed capture (HOS 2.4) is flagged");
    let resolve = format!(
        r#"{{"action":"resolve","by":"Anan","flag_id":{},"note":"claimed and put right"}}"#,
        flag["flag_id"]
    );
    let (status, reply) = server.act_as_referee("mh", &resolve);
    assert_eq!(status, 200, "{reply}");
    let after = server.json("/api/boards/mh");
    assert!(
        after["open_flags"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["flag_id"] != flag["flag_id"]),
        "{after}"
    );
    let (status, _) = server.act_as_referee("mh", &resolve);
    assert_eq!(status, 409, "closed once");
    let (_, pdn) = server.get("/api/boards/mh/record.pdn");
    assert!(pdn.contains("claimed and put right"), "{pdn}");
    drop(server);
    let verify = Command::new(env!("CARGO_BIN_EXE_kradan"))
        .arg("verify")
        .arg(data.join("boards/mh"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}
