//! The routes: the two pages, the JSON the pages read (described in `openapi.json`), the
//! live updates (server-sent events), the record downloads and the referee's actions.

use super::event_file::{GameKind, check_board_name};
use super::hall::{Board, Hall, Push, Refused, now_ms};
use crate::games::Color;
use crate::games::go::scoring::Counting;
use crate::recorder::{Action, point_from_sgf};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

pub const OPENAPI: &str = include_str!("openapi.json");
const OVERLAY: &str = include_str!("overlay.html");
const REFEREE: &str = include_str!("referee.html");
const BOARD_JS: &str = include_str!("board.js");
const OVERLAY_JS: &str = include_str!("overlay.js");
const REFEREE_JS: &str = include_str!("referee.js");

pub fn router(hall: Arc<Hall>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/overlay/{board}", get(overlay))
        .route("/referee", get(referee))
        .route("/board.js", get(|| script(BOARD_JS)))
        .route("/overlay.js", get(|| script(OVERLAY_JS)))
        .route("/referee.js", get(|| script(REFEREE_JS)))
        .route("/api/openapi.json", get(openapi))
        .route("/api/boards", get(boards))
        .route("/api/boards/{board}", get(board))
        .route("/api/boards/{board}/events", get(events))
        .route("/api/boards/{board}/moves", get(moves))
        .route("/api/boards/{board}/moves/{number}", get(moment))
        .route("/api/boards/{board}/actions", post(act).get(actions))
        .route("/api/boards/{board}/record.sgf", get(sgf))
        .route("/api/boards/{board}/record.pdn", get(pdn))
        .route("/api/boards/{board}/record.pgn", get(pgn))
        .route("/api/boards/{board}/evidence.zip", get(bundle))
        .route("/api/boards/{board}/evidence/{file}", get(evidence))
        .route("/api/stream", get(stream))
        .route("/api/stats", get(stats))
        .fallback(not_found)
        .with_state(hall)
}

/// A 4xx or 5xx answer, always JSON with the reason.
#[derive(Debug)]
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, axum::Json(json!({"error": self.1}))).into_response()
    }
}

type Answer = Result<Response, ApiError>;

fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

fn missing(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, message.into())
}

fn internal(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, message.into())
}

async fn not_found() -> ApiError {
    missing("no such page or API route (the API is described at /api/openapi.json)")
}

fn find<'a>(hall: &'a Hall, name: &str) -> Result<&'a Arc<Board>, ApiError> {
    check_board_name(name).map_err(bad)?;
    hall.board(name)
        .ok_or_else(|| missing(format!("no board named {name:?} in this hall")))
}

fn page(html: &'static str) -> Response {
    let mut response = Html(html).into_response();
    // The pages are fixed: scripts from this server only, nothing framed elsewhere but OBS.
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
        ),
    );
    response
}

async fn index(State(hall): State<Arc<Hall>>) -> Html<String> {
    let links: String = hall
        .boards()
        .map(|b| {
            format!(
                "<li>{0} ({1}): <a href=\"/overlay/{0}\">overlay</a></li>",
                b.name,
                b.game.as_str()
            )
        })
        .collect();
    Html(format!(
        "<!doctype html><meta charset=utf-8><title>Kradan</title><h1>Kradan</h1>\
         <p><a href=\"/referee\">referee desk</a> · <a href=\"/api/openapi.json\">API</a></p><ul>{links}</ul>"
    ))
}

async fn overlay(State(hall): State<Arc<Hall>>, Path(name): Path<String>) -> Answer {
    find(&hall, &name)?;
    Ok(page(OVERLAY))
}

async fn referee() -> Response {
    page(REFEREE)
}

async fn script(text: &'static str) -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        text,
    )
        .into_response()
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn boards(State(hall): State<Arc<Hall>>) -> axum::Json<Value> {
    let views: Vec<Value> = hall
        .boards()
        .map(|b| serde_json::to_value(&*b.view()).unwrap_or_default())
        .collect();
    axum::Json(json!({ "boards": views }))
}

async fn board(State(hall): State<Arc<Hall>>, Path(name): Path<String>) -> Answer {
    let board = find(&hall, &name)?;
    Ok(axum::Json(&*board.view()).into_response())
}

#[derive(Deserialize)]
struct EventsQuery {
    /// Only events after this seq.
    after: Option<u64>,
}

async fn events(
    State(hall): State<Arc<Hall>>,
    Path(name): Path<String>,
    Query(query): Query<EventsQuery>,
) -> Answer {
    let board = find(&hall, &name)?;
    let events: Vec<_> = board
        .events()
        .into_iter()
        .filter(|e| query.after.is_none_or(|after| e.seq > after))
        .collect();
    Ok(axum::Json(json!({ "board": name, "events": events })).into_response())
}

async fn moves(State(hall): State<Arc<Hall>>, Path(name): Path<String>) -> Answer {
    let board = find(&hall, &name)?;
    Ok(axum::Json(json!({ "board": name, "moves": board.replayed().move_rows() })).into_response())
}

async fn moment(
    State(hall): State<Arc<Hall>>,
    Path((name, number)): Path<(String, String)>,
) -> Answer {
    let board = find(&hall, &name)?;
    let number: usize = number
        .parse()
        .map_err(|_| bad(format!("move number {number:?} is not a whole number ≥ 0")))?;
    let replayed = board.replayed();
    if !replayed.has_game() {
        return Err(missing(format!("board {name} has no game yet")));
    }
    let moment = replayed.moment(number).ok_or_else(|| {
        missing(format!(
            "move {number} is not recorded: board {name} has {} moves",
            replayed.move_count()
        ))
    })?;
    Ok(axum::Json(moment).into_response())
}

async fn actions(State(hall): State<Arc<Hall>>, Path(name): Path<String>) -> Answer {
    find(&hall, &name)?;
    let actions = hall.actions(&name).map_err(|e| internal(e.to_string()))?;
    Ok(axum::Json(json!({ "board": name, "actions": actions })).into_response())
}

/// The body of `POST /api/boards/{board}/actions`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionBody {
    action: String,
    by: String,
    color: Option<String>,
    flag_id: Option<u32>,
    note: Option<String>,
    point: Option<String>,
    /// A Mak-hos or Makruk move as its record writes it (`replace-last-move`).
    #[serde(rename = "move")]
    written_move: Option<String>,
    points: Option<Vec<String>>,
    counting: Option<String>,
}

fn check_auth(hall: &Hall, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError(
            StatusCode::UNAUTHORIZED,
            "referee actions need the token given at start: Authorization: Bearer TOKEN".into(),
        ));
    };
    let given = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !same(given.as_bytes(), hall.token.as_bytes()) {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "the token is not the one given at start".into(),
        ));
    }
    Ok(())
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn parse_action(body: &ActionBody, size: usize) -> Result<Action, ApiError> {
    let point = |text: &str| {
        point_from_sgf(text)
            .filter(|p| (p.row as usize) < size && (p.col as usize) < size)
            .ok_or_else(|| {
                bad(format!(
                    "point {text:?}: expected two SGF letters on a {size}×{size} board, like \"dd\""
                ))
            })
    };
    let flag_id = || {
        body.flag_id
            .ok_or_else(|| bad(format!("action {:?} needs a flag_id", body.action)))
    };
    Ok(match body.action.as_str() {
        "pass" => Action::Pass(match body.color.as_deref() {
            Some("black") => Color::Black,
            Some("white") => Color::White,
            _ => return Err(bad("action \"pass\" needs color \"black\" or \"white\"")),
        }),
        "resolve" | "dismiss" => Action::CloseFlag {
            flag_id: flag_id()?,
            dismiss: body.action == "dismiss",
            note: body.note.clone().unwrap_or_default(),
        },
        "dead" => Action::MarkDead {
            dead: body
                .points
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|p| point(p))
                .collect::<Result<_, _>>()?,
            counting: match body.counting.as_deref() {
                None | Some("thai") => Counting::Thai,
                Some("area") => Counting::Area,
                Some(other) => {
                    return Err(bad(format!(
                        "counting {other:?}: expected \"thai\" or \"area\""
                    )));
                }
            },
        },
        "replace-last-move" => match (&body.point, &body.written_move) {
            (Some(text), None) => Action::ReplaceLastMove(point(text)?),
            (None, Some(written)) if !written.trim().is_empty() && written.len() <= 64 => {
                Action::ReplaceLastMoveWritten(written.trim().to_string())
            }
            _ => {
                return Err(bad(
                    "action \"replace-last-move\" needs a point (Go, SGF letters like \"dd\") or a move (Mak-hos \"9-13\", Makruk \"Ne2\")",
                ));
            }
        },
        "undo-last-move" => Action::UndoLastMove,
        other => {
            return Err(bad(format!(
                "action {other:?}: expected pass, resolve, dismiss, dead, replace-last-move or undo-last-move"
            )));
        }
    })
}

async fn act(
    State(hall): State<Arc<Hall>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Answer {
    check_auth(&hall, &headers)?;
    let board = Arc::clone(find(&hall, &name)?);
    if body.len() > 16 * 1024 {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            "an action is at most 16 KiB of JSON".into(),
        ));
    }
    let body: ActionBody = serde_json::from_slice(&body).map_err(|e| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the action is not valid JSON of the documented shape: {e}"),
        )
    })?;
    let by = body.by.trim();
    if by.is_empty() || by.chars().count() > 64 || by.chars().any(char::is_control) {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "by: who takes the action, 1 to 64 printable characters".into(),
        ));
    }
    if body.note.as_ref().is_some_and(|n| n.chars().count() > 500) {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "note: at most 500 characters".into(),
        ));
    }
    let size = board.view().now.as_ref().map_or(19, |m| m.size);
    let action = parse_action(&body, size)
        .map_err(|ApiError(_, message)| ApiError(StatusCode::UNPROCESSABLE_ENTITY, message))?;
    let by = format!("referee:{by}");
    let hall_for_action = Arc::clone(&hall);
    let outcome = tokio::task::spawn_blocking(move || hall_for_action.act(&board, action, &by))
        .await
        .map_err(|e| internal(e.to_string()))?;
    match outcome {
        Ok(message) => Ok(axum::Json(json!({ "ok": true, "message": message })).into_response()),
        Err(Refused::Conflict(message)) => Err(ApiError(StatusCode::CONFLICT, message)),
        Err(Refused::Internal(message)) => Err(internal(message)),
    }
}

fn download(bytes: Vec<u8>, content_type: &'static str, filename: String) -> Response {
    let disposition = format!("attachment; filename=\"{filename}\"");
    let mut response = ([(header::CONTENT_TYPE, content_type)], bytes).into_response();
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

async fn sgf(hall: State<Arc<Hall>>, name: Path<String>) -> Answer {
    record(hall, name, GameKind::Go)
}

async fn pdn(hall: State<Arc<Hall>>, name: Path<String>) -> Answer {
    record(hall, name, GameKind::Makhos)
}

async fn pgn(hall: State<Arc<Hall>>, name: Path<String>) -> Answer {
    record(hall, name, GameKind::Makruk)
}

/// The board's record in its game's notation: SGF for Go, PDN for Mak-hos, PGN for Makruk.
fn record(State(hall): State<Arc<Hall>>, Path(name): Path<String>, asked: GameKind) -> Answer {
    let board = find(&hall, &name)?;
    let file = board.game.record_file();
    let extension = file.rsplit('.').next().unwrap_or(file);
    if board.game != asked {
        return Err(missing(format!(
            "board {name} plays {}: its record is record.{extension}",
            board.game.as_str()
        )));
    }
    let bytes = std::fs::read(board.dir.join(file))
        .map_err(|_| missing(format!("board {name} has no record yet")))?;
    Ok(download(
        bytes,
        board.game.record_media_type(),
        format!("{name}.{extension}"),
    ))
}

async fn evidence(
    State(hall): State<Arc<Hall>>,
    Path((name, file)): Path<(String, String)>,
) -> Answer {
    let board = find(&hall, &name)?;
    let safe = !file.is_empty()
        && file.len() <= 128
        && !file.starts_with('.')
        && file
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !safe {
        return Err(bad(format!("evidence file {file:?}: not a file name")));
    }
    let bytes = std::fs::read(board.dir.join("evidence").join(&file))
        .map_err(|_| missing(format!("board {name} has no evidence file {file:?}")))?;
    let content_type = if file.ends_with(".png") {
        "image/png"
    } else {
        "image/jpeg"
    };
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}

/// The record folder as one zip: the chain, its head, the record and every evidence frame,
/// which `kradan verify` checks once unpacked.
async fn bundle(State(hall): State<Arc<Hall>>, Path(name): Path<String>) -> Answer {
    let board = Arc::clone(find(&hall, &name)?);
    if !board.dir.join(crate::record::events::EVENTS_FILE).exists() {
        return Err(missing(format!("board {name} has no record yet")));
    }
    let bytes = tokio::task::spawn_blocking(move || zip_record(&board.dir))
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| internal(format!("cannot pack the record: {e}")))?;
    Ok(download(
        bytes,
        "application/zip",
        format!("{name}-evidence.zip"),
    ))
}

fn zip_record(dir: &std::path::Path) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // JPEG evidence does not shrink; only the text is deflated.
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for name in [
        crate::record::events::EVENTS_FILE,
        "events.head",
        "game.sgf",
        "game.pdn",
        "game.pgn",
    ] {
        if let Ok(bytes) = std::fs::read(dir.join(name)) {
            zip.start_file(name, deflated)?;
            zip.write_all(&bytes)?;
        }
    }
    let mut files: Vec<_> = std::fs::read_dir(dir.join("evidence"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for path in files {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        zip.start_file(format!("evidence/{file}"), stored)?;
        zip.write_all(&std::fs::read(&path)?)?;
    }
    Ok(zip.finish()?.into_inner())
}

#[derive(Deserialize)]
struct StreamQuery {
    board: Option<String>,
}

/// Server-sent events: `update` with each event and the board after it; `missed` when a
/// page fell so far behind that updates were dropped for it (it should reload).
async fn stream(State(hall): State<Arc<Hall>>, Query(query): Query<StreamQuery>) -> Answer {
    if let Some(name) = &query.board {
        find(&hall, name)?;
    }
    let only = query.board;
    let counter = Arc::clone(&hall);
    let updates = BroadcastStream::new(hall.subscribe())
        .take_while(|push| !matches!(push, Ok(Push::Closing)))
        .filter_map(move |push| match push {
            Ok(Push::Closing) => None,
            Ok(Push::Update { board, json }) => {
                if only.as_ref().is_some_and(|b| *b != board) {
                    return None;
                }
                let data: &str = &json;
                Some(Ok::<_, Infallible>(
                    SseEvent::default().event("update").data(data),
                ))
            }
            Err(BroadcastStreamRecvError::Lagged(count)) => {
                counter
                    .missed
                    .fetch_add(count, std::sync::atomic::Ordering::Relaxed);
                Some(Ok(SseEvent::default().event("missed").data(
                    json!({ "missed": count, "server_ms": now_ms() }).to_string(),
                )))
            }
        });
    let hello = tokio_stream::once(Ok(SseEvent::default()
        .event("hello")
        .data(json!({ "server_ms": now_ms() }).to_string())));
    Ok(Sse::new(hello.chain(updates))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(10)))
        .into_response())
}

async fn stats(State(hall): State<Arc<Hall>>) -> axum::Json<Value> {
    axum::Json(json!({
        "boards": hall.boards().count(),
        "listeners": hall.listeners(),
        "missed": hall.missed.load(std::sync::atomic::Ordering::Relaxed),
        "peak_rss_kib": peak_rss_kib(),
    }))
}

/// The server's peak resident memory (VmHWM), for the load test.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route registered in `router` is described in the OpenAPI document, and the
    /// document describes no route the server lacks.
    #[test]
    fn every_api_route_is_in_the_openapi_document() {
        let source = include_str!("api.rs");
        let registered: std::collections::BTreeSet<&str> = source
            .lines()
            .filter_map(|l| l.trim().strip_prefix(".route(\""))
            .filter_map(|l| l.split('"').next())
            .filter(|path| path.starts_with("/api/"))
            .collect();
        let document: Value = serde_json::from_str(OPENAPI).unwrap();
        let described: std::collections::BTreeSet<&str> = document["paths"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(registered.len() >= 10, "{registered:?}");
        assert_eq!(registered, described);
    }

    #[test]
    fn actions_are_read_and_checked() {
        let body = |text: &str| serde_json::from_str::<ActionBody>(text).unwrap();
        assert_eq!(
            parse_action(&body(r#"{"action":"pass","by":"r","color":"white"}"#), 9).unwrap(),
            Action::Pass(Color::White)
        );
        assert_eq!(
            parse_action(
                &body(r#"{"action":"replace-last-move","by":"r","point":"cd"}"#),
                9
            )
            .unwrap(),
            Action::ReplaceLastMove(crate::games::go::Point::new(3, 2))
        );
        assert!(
            parse_action(
                &body(r#"{"action":"replace-last-move","by":"r","point":"jj"}"#),
                9
            )
            .is_err()
        );
        assert_eq!(
            parse_action(
                &body(r#"{"action":"replace-last-move","by":"r","move":" 9x18 "}"#),
                8
            )
            .unwrap(),
            Action::ReplaceLastMoveWritten("9x18".into())
        );
        for neither_or_both in [
            r#"{"action":"replace-last-move","by":"r"}"#,
            r#"{"action":"replace-last-move","by":"r","move":""}"#,
            r#"{"action":"replace-last-move","by":"r","point":"cd","move":"e4"}"#,
        ] {
            assert!(
                parse_action(&body(neither_or_both), 9).is_err(),
                "{neither_or_both}"
            );
        }
        assert!(parse_action(&body(r#"{"action":"resolve","by":"r"}"#), 9).is_err());
        assert!(parse_action(&body(r#"{"action":"pass","by":"r","color":"red"}"#), 9).is_err());
        assert!(parse_action(&body(r#"{"action":"fly","by":"r"}"#), 9).is_err());
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }
}
