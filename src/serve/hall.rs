//! The boards being served: one recorder thread per board, every event it writes stored
//! and pushed to the pages, and the referee's actions carried to the recorder.

use super::event_file::{BoardSpec, GameKind};
use super::game::{Moment, OpenFlag, Replayed};
use crate::record::Event;
use crate::recorder::{self, Action, ActionRequest, Hooks, RecordOptions, RecorderError};
use crate::store::{ActionRow, GameRow, Players, Store, StoreError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::broadcast;

/// Updates kept for a slow page before it misses some: a page is told it missed updates and
/// reloads, but none should at this depth.
const UPDATE_BACKLOG: usize = 8192;

/// How long an action waits for a recorder to take it between frames.
const ACTION_WAIT: Duration = Duration::from_secs(15);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// A recorder is reading the source.
    Recording,
    /// The recorder ended (the footage is over, or the server restarted): the record is served.
    Finished,
    /// The recorder stopped on an error (see the message); what it recorded is served.
    Failed,
    /// Nothing recorded yet: no recorder has run for this board.
    NotStarted,
}

/// What the overlay and the referee desk show of a board.
#[derive(Clone, Debug, Serialize)]
pub struct BoardView {
    pub name: String,
    pub game: String,
    pub source: String,
    pub players: Players,
    pub status: Status,
    pub message: Option<String>,
    /// The events' last seq: a page that saw it is up to date.
    pub seq: Option<u64>,
    pub now: Option<Moment>,
    pub open_flags: Vec<OpenFlag>,
    /// Draw counts running (8×8 games), e.g. `count (HOS 5.3): 5 of 16`.
    pub counts: Vec<String>,
    pub result: Option<String>,
}

/// What goes to every listening page.
#[derive(Clone, Debug)]
pub enum Push {
    /// The board it is about, and the [`Update`] as JSON, made once for every listener.
    Update { board: String, json: Arc<str> },
    /// The server is stopping: streams end so the connections close.
    Closing,
}

/// One push to the pages: an event and the board as it stands after it.
#[derive(Clone, Debug, Serialize)]
pub struct Update {
    pub board: String,
    pub seq: u64,
    /// When the recorder handed it over, synced to disk (milliseconds since 1970).
    pub synced_ms: u64,
    /// When it was stored and sent to the pages.
    pub server_ms: u64,
    pub event: Event,
    pub view: BoardView,
}

pub struct Board {
    pub name: String,
    pub game: GameKind,
    pub source: String,
    pub players: Players,
    pub dir: PathBuf,
    inner: Mutex<BoardInner>,
    /// Serialises actions taken on a finished record.
    acting: Mutex<()>,
}

struct BoardInner {
    status: Status,
    message: Option<String>,
    events: Vec<Event>,
    actions: Option<mpsc::Sender<ActionRequest>>,
    view: Arc<BoardView>,
}

pub struct Hall {
    pub data: PathBuf,
    pub token: String,
    store: Mutex<Store>,
    boards: BTreeMap<String, Arc<Board>>,
    updates: broadcast::Sender<Push>,
    stop: Arc<AtomicBool>,
    /// Updates a page missed because it fell too far behind.
    pub missed: AtomicU64,
    recorders: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

#[derive(Debug, thiserror::Error)]
pub enum HallError {
    #[error("{0}")]
    Bad(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot create {}: {source}", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why an action was not taken.
#[derive(Debug)]
pub enum Refused {
    /// The action does not fit the game (no such flag, no move to undo…).
    Conflict(String),
    Internal(String),
}

impl Hall {
    /// Opens the data folder, the store and every board it held, and the boards of the event
    /// file (their recorders not started yet: [`Hall::start`]).
    pub fn open(data: &Path, boards: &[BoardSpec], token: String) -> Result<Hall, HallError> {
        std::fs::create_dir_all(data.join("boards")).map_err(|source| HallError::Folder {
            path: data.join("boards"),
            source,
        })?;
        let mut store = Store::open(data)?;
        for spec in boards {
            store.put_game(&GameRow {
                board: spec.name.clone(),
                game: spec.game.as_str().into(),
                source: spec.source.clone(),
                players: spec.players.clone(),
                dir: data.join("boards").join(&spec.name),
            })?;
        }
        let mut hall_boards = BTreeMap::new();
        for row in store.games()? {
            let game = match row.game.as_str() {
                "makhos" => GameKind::Makhos,
                "makruk" => GameKind::Makruk,
                _ => GameKind::Go,
            };
            let mut events = store.events(&row.board)?;
            // The chain on disk is the record: anything written while the store missed it
            // (a crash between the two) is taken from there.
            let last = events.last().map(|e| e.seq);
            for event in read_chain(&row.dir) {
                if last.is_none_or(|seq| event.seq > seq) {
                    store.insert_event(&row.board, &event)?;
                    events.push(event);
                }
            }
            let replayed = Replayed::new(events.clone());
            store.set_moves(&row.board, &replayed.move_rows())?;
            let board = Board {
                name: row.board.clone(),
                game,
                source: row.source,
                players: row.players,
                dir: row.dir,
                inner: Mutex::new(BoardInner {
                    status: if events.is_empty() {
                        Status::NotStarted
                    } else {
                        Status::Finished
                    },
                    message: None,
                    events,
                    actions: None,
                    view: Arc::new(empty_view()),
                }),
                acting: Mutex::new(()),
            };
            board.refresh_view(&replayed);
            hall_boards.insert(row.board, Arc::new(board));
        }
        Ok(Hall {
            data: data.to_path_buf(),
            token,
            store: Mutex::new(store),
            boards: hall_boards,
            updates: broadcast::channel(UPDATE_BACKLOG).0,
            stop: Arc::new(AtomicBool::new(false)),
            missed: AtomicU64::new(0),
            recorders: Mutex::new(Vec::new()),
        })
    }

    /// Starts one recorder thread per board of the event file.
    pub fn start(self: &Arc<Hall>, boards: &[BoardSpec]) {
        for spec in boards {
            let Some(board) = self.boards.get(&spec.name).cloned() else {
                continue;
            };
            let recorded = board.dir.join(crate::record::events::EVENTS_FILE).exists();
            if recorded && !is_live(&spec.source) {
                // Footage plays from its start again: recording it once more over the
                // record would read a board emptied back to the opening as stones lifted.
                board.lock().message = Some(format!(
                    "already recorded from {}; remove {} to record it again",
                    spec.source,
                    board.dir.display()
                ));
                let replayed = board.replayed();
                board.refresh_view(&replayed);
                continue;
            }
            let (sender, receiver) = mpsc::channel();
            {
                let mut inner = board.lock();
                inner.status = Status::Recording;
                inner.message = None;
                inner.actions = Some(sender);
            }
            let mut options = RecordOptions::new(spec.source.clone(), board.dir.clone());
            options.game = spec.game.recorded();
            options.size = spec.size;
            options.handicap = spec.handicap;
            if let Some(komi) = spec.komi {
                options.komi = komi;
            }
            if let Some(rate) = spec.rate {
                options.rate = rate;
            }
            options.resume = recorded;
            let hall = Arc::clone(self);
            let stop = Arc::clone(&self.stop);
            let handle = std::thread::Builder::new()
                .name(format!("record {}", spec.name))
                .spawn(move || {
                    let hook_hall = Arc::clone(&hall);
                    let hook_board = Arc::clone(&board);
                    let on_event = Box::new(move |event: &Event| {
                        hook_hall.ingest(&hook_board, event.clone());
                    });
                    let outcome = recorder::record_with(
                        &options,
                        Hooks {
                            on_line: &mut |_| {},
                            on_event: Some(on_event),
                            actions: Some(receiver),
                            stop: Some(stop),
                        },
                    );
                    let mut inner = board.lock();
                    inner.actions = None;
                    match outcome {
                        Ok(summary) => {
                            inner.status = Status::Finished;
                            inner.message =
                                summary.broken.map(|why| format!("the source broke: {why}"));
                        }
                        Err(error) => {
                            inner.status = Status::Failed;
                            inner.message = Some(error.to_string());
                        }
                    }
                    let replayed = Replayed::new(inner.events.clone());
                    drop(inner);
                    board.refresh_view(&replayed);
                })
                .expect("a thread for a recorder");
            self.recorders.lock().expect("recorders").push(handle);
        }
    }

    /// Ends every recorder (each writes its session end) and waits for them.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let handles: Vec<_> = self
            .recorders
            .lock()
            .expect("recorders")
            .drain(..)
            .collect();
        for handle in handles {
            let _ = handle.join();
        }
    }

    pub fn board(&self, name: &str) -> Option<&Arc<Board>> {
        self.boards.get(name)
    }

    pub fn boards(&self) -> impl Iterator<Item = &Arc<Board>> {
        self.boards.values()
    }

    pub fn actions(&self, board: &str) -> Result<Vec<ActionRow>, StoreError> {
        self.store.lock().expect("store").actions(board)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Push> {
        self.updates.subscribe()
    }

    /// Ends every page's stream, so that a stopping server is not held open by them.
    pub fn close_streams(&self) {
        let _ = self.updates.send(Push::Closing);
    }

    pub fn listeners(&self) -> usize {
        self.updates.receiver_count()
    }

    /// A new event of `board`: stored, the view recomputed, pushed to the pages.
    fn ingest(&self, board: &Board, event: Event) {
        let synced_ms = now_ms();
        let mut inner = board.lock();
        if inner
            .events
            .last()
            .is_some_and(|last| last.seq >= event.seq)
        {
            return;
        }
        inner.events.push(event.clone());
        let replayed = Replayed::new(inner.events.clone());
        drop(inner);
        {
            let mut store = self.store.lock().expect("store");
            let stored = store.insert_event(&board.name, &event).and_then(|_| {
                if event.kind == crate::record::Kind::Move
                    || event.detail.get("note").and_then(|n| n.as_str()) == Some("correction")
                {
                    store.set_moves(&board.name, &replayed.move_rows())
                } else {
                    Ok(())
                }
            });
            if let Err(error) = stored {
                // The chain on disk holds the event; the store is filled from it at the next start.
                eprintln!("kradan serve: board {}: {error}", board.name);
            }
        }
        let view = board.refresh_view(&replayed);
        let update = Update {
            board: board.name.clone(),
            seq: event.seq,
            synced_ms,
            server_ms: now_ms(),
            event,
            view: (*view).clone(),
        };
        let json = serde_json::to_string(&update).unwrap_or_default();
        let _ = self.updates.send(Push::Update {
            board: update.board,
            json: json.into(),
        });
    }

    /// Takes a referee's action on a board: through its recorder while it runs, on the
    /// record itself once it has ended.
    pub fn act(&self, board: &Arc<Board>, action: Action, by: &str) -> Result<String, Refused> {
        let description = format!("{action:?}");
        let outcome = self.act_through_recorder(board, &action, by);
        let outcome = match outcome {
            Some(outcome) => outcome,
            None => self.act_on_record(board, &action, by),
        };
        let (accepted, text) = match &outcome {
            Ok(message) => (true, message.clone()),
            Err(Refused::Conflict(m) | Refused::Internal(m)) => (false, m.clone()),
        };
        let row = ActionRow {
            board: board.name.clone(),
            by: by.to_string(),
            action: description,
            outcome: text,
            accepted,
            at: crate::record::events::wall_time_now(),
        };
        if let Err(error) = self.store.lock().expect("store").add_action(&row) {
            eprintln!("kradan serve: board {}: {error}", board.name);
        }
        outcome
    }

    /// `None` when no recorder took it (there is none, or it ended first).
    fn act_through_recorder(
        &self,
        board: &Board,
        action: &Action,
        by: &str,
    ) -> Option<Result<String, Refused>> {
        let sender = board.lock().actions.clone()?;
        let (reply, answer) = mpsc::channel();
        let request = ActionRequest {
            action: action.clone(),
            by: by.to_string(),
            reply,
        };
        sender.send(request).ok()?;
        match answer.recv_timeout(ACTION_WAIT) {
            Ok(outcome) => Some(outcome.map_err(refusal)),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => Some(Err(Refused::Internal(format!(
                "the recorder of board {} took no action for {} s",
                board.name,
                ACTION_WAIT.as_secs()
            )))),
        }
    }

    fn act_on_record(
        &self,
        board: &Arc<Board>,
        action: &Action,
        by: &str,
    ) -> Result<String, Refused> {
        let _one_at_a_time = board.acting.lock().expect("acting");
        // A recorder that just refused the channel may still be writing its last events.
        let deadline = std::time::Instant::now() + ACTION_WAIT;
        while board.lock().status == Status::Recording {
            if std::time::Instant::now() > deadline {
                return Err(Refused::Internal(format!(
                    "the recorder of board {} is still ending",
                    board.name
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if !board.dir.join(crate::record::events::EVENTS_FILE).exists() {
            return Err(Refused::Conflict(format!(
                "board {} has no record yet",
                board.name
            )));
        }
        let hall_board = Arc::clone(board);
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let outcome = recorder::apply_action(
            &board.dir,
            action,
            by,
            Some(Box::new(move |event: &Event| {
                sink.lock().expect("events").push(event.clone());
            })),
        );
        for event in events.lock().expect("events").drain(..) {
            self.ingest(&hall_board, event);
        }
        outcome.map_err(refusal)
    }
}

impl Board {
    fn lock(&self) -> std::sync::MutexGuard<'_, BoardInner> {
        self.inner.lock().expect("board state")
    }

    pub fn view(&self) -> Arc<BoardView> {
        Arc::clone(&self.lock().view)
    }

    pub fn events(&self) -> Vec<Event> {
        self.lock().events.clone()
    }

    pub fn replayed(&self) -> Replayed {
        Replayed::new(self.events())
    }

    fn refresh_view(&self, replayed: &Replayed) -> Arc<BoardView> {
        let mut inner = self.lock();
        let view = Arc::new(BoardView {
            name: self.name.clone(),
            game: self.game.as_str().into(),
            source: self.source.clone(),
            players: self.players.clone(),
            status: inner.status,
            message: inner.message.clone(),
            seq: inner.events.last().map(|e| e.seq),
            now: replayed.now(),
            open_flags: replayed.open_flags(),
            counts: replayed.counts(),
            result: replayed.result(),
        });
        inner.view = Arc::clone(&view);
        view
    }
}

fn refusal(error: RecorderError) -> Refused {
    match error {
        RecorderError::BadOptions(message) => Refused::Conflict(message),
        other => Refused::Internal(other.to_string()),
    }
}

fn empty_view() -> BoardView {
    BoardView {
        name: String::new(),
        game: String::new(),
        source: String::new(),
        players: Players::default(),
        status: Status::NotStarted,
        message: None,
        seq: None,
        now: None,
        open_flags: Vec::new(),
        counts: Vec::new(),
        result: None,
    }
}

/// A camera or a stream, which a restarted server continues; footage (`play:`, files,
/// folders) is recorded once.
fn is_live(source: &str) -> bool {
    source.starts_with("camera:") || source.contains("://")
}

/// The events of a record folder, as far as they can be read.
fn read_chain(dir: &Path) -> Vec<Event> {
    std::fs::read_to_string(dir.join(crate::record::events::EVENTS_FILE))
        .map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
