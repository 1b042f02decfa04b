//! A referee's actions on a game being recorded or already recorded (`kradan serve`), and
//! the corrections of misread moves every reader of a chain applies.

use super::sgf_view::SgfView;
use super::{EventHook, RecorderError, Session, cell, color_name, is_note};
use crate::games::Color;
use crate::games::go::scoring::Counting;
use crate::games::go::{Move, Point};
use crate::record::{Event, Kind};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc;

/// What a referee can do to a game being recorded, or already recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A pass (a camera cannot see one).
    Pass(Color),
    /// A flag's irregularity was dealt with (`dismiss: false`) or was no irregularity
    /// (`dismiss: true`, a misread).
    CloseFlag {
        flag_id: u32,
        dismiss: bool,
        note: String,
    },
    /// Dead stones marked at the end and the game counted (TGA 13).
    MarkDead {
        dead: Vec<Point>,
        counting: Counting,
    },
    /// The last move was misread: it was played at this point.
    ReplaceLastMove(Point),
    /// The last move was misread: there was none.
    UndoLastMove,
    /// The last Mak-hos or Makruk move was misread: it was this one, written as the
    /// game's record writes moves (PDN `9-13`, `9x18`; Makruk SAN `Ne2` or squares `g1e2`).
    ReplaceLastMoveWritten(String),
}

/// An action, who takes it, and where the outcome goes (a sentence, or why it was refused).
pub struct ActionRequest {
    pub action: Action,
    pub by: String,
    pub reply: mpsc::Sender<Result<String, RecorderError>>,
}

/// The `resolved` event of a referee closing flag `flag_id` (raised at `seq`) as dealt
/// with or, `dismiss`, as no irregularity; and the sentence it says.
pub(super) fn flag_closed(flag_id: u32, seq: u64, dismiss: bool, note: &str) -> (Event, String) {
    let decision = if dismiss { "dismissed" } else { "resolved" };
    let message = if note.is_empty() {
        format!("flag {flag_id} {decision} by the referee")
    } else {
        format!("flag {flag_id} {decision} by the referee: {note}")
    };
    let event = Event::new(Kind::Resolved)
        .with_detail("flag_id", flag_id)
        .with_detail("resolves", seq)
        .with_detail("decision", decision)
        .with_detail("message", message.as_str());
    (event, message)
}

/// Answers the referee's actions waiting, each taken by `act`. A refusal (`BadOptions`) is
/// only the referee's answer; a failure to write is also the recording's end.
pub(super) fn answer_actions(
    actions: &mpsc::Receiver<ActionRequest>,
    mut act: impl FnMut(&Action, &str) -> Result<String, RecorderError>,
) -> Result<(), RecorderError> {
    while let Ok(request) = actions.try_recv() {
        match act(&request.action, &request.by) {
            Ok(message) => {
                let _ = request.reply.send(Ok(message));
            }
            Err(error @ RecorderError::BadOptions(_)) => {
                let _ = request.reply.send(Err(error));
            }
            Err(error) => {
                let _ = request
                    .reply
                    .send(Err(RecorderError::BadOptions(error.to_string())));
                return Err(error);
            }
        }
    }
    Ok(())
}

/// Takes a referee's action on a record no recorder is writing (the footage has ended or
/// the server restarted): the record is continued like `--resume`.
pub fn apply_action(
    dir: &Path,
    action: &Action,
    by: &str,
    on_event: Option<EventHook>,
) -> Result<String, RecorderError> {
    if let Some(game) = eight_game_of(dir) {
        return super::eight::apply_action(dir, game, action, by, on_event);
    }
    let mut session = Session::reopen(dir, "a referee's action on the recorded game")?;
    session.on_event = on_event;
    session.publish_last();
    let done = session.act(action, by, &mut |_| {});
    session.finish_quietly()?;
    done
}

/// The 8×8 game a record folder holds, from its first session's start; `None` for Go or
/// a folder that cannot be read (Go's reopening then says why).
fn eight_game_of(dir: &Path) -> Option<crate::geometry::eight::EightGame> {
    use std::io::BufRead;
    // Only the session start is wanted, not the whole chain.
    let file = std::fs::File::open(dir.join(crate::record::events::EVENTS_FILE)).ok()?;
    let line = std::io::BufReader::new(file).lines().next()?.ok()?;
    let first: Event = serde_json::from_str(&line).ok()?;
    first.detail.get("game")?.as_str()?.parse().ok()
}

/// The referee's corrections of misread moves in a record: which move events no longer
/// stand and which stand at another point. The chain keeps what was first written; the
/// game is what remains once these are applied.
#[derive(Clone, Debug, Default)]
pub struct Corrections {
    undone: HashSet<u64>,
    replaced: HashMap<u64, Point>,
}

impl Corrections {
    pub fn from_events(events: &[Event]) -> Corrections {
        let mut corrections = Corrections::default();
        let mut standing: Vec<u64> = Vec::new();
        for event in events {
            match event.kind {
                Kind::Move => standing.push(event.seq),
                Kind::Note if is_note(event, "game-start") => standing.clear(),
                Kind::Note if is_note(event, "correction") => {
                    let point = event
                        .detail
                        .get("point")
                        .and_then(Value::as_str)
                        .and_then(point_from_sgf);
                    match point {
                        Some(point) => {
                            if let Some(&seq) = standing.last() {
                                corrections.replaced.insert(seq, point);
                            }
                        }
                        None => {
                            if let Some(seq) = standing.pop() {
                                corrections.undone.insert(seq);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        corrections
    }

    /// The move a move event stands for now, or `None` when it was undone (or is no move).
    pub fn effective_move(&self, event: &Event) -> Option<(Color, Move)> {
        if event.kind != Kind::Move || self.undone.contains(&event.seq) {
            return None;
        }
        let color = event.color?;
        if let Some(&point) = self.replaced.get(&event.seq) {
            return Some((color, Move::Play(point)));
        }
        let mv = match (event.notation.as_deref(), event.points.first()) {
            (Some(notation), Some(&[row, col])) if notation != "pass" => {
                Move::Play(Point::new(row as u8, col as u8))
            }
            _ => Move::Pass,
        };
        Some((color, mv))
    }
}

/// The note that moves the last move standing to `point`, or undoes it (`None`): what
/// [`Corrections`] reads back.
pub(super) fn correction(point: Option<Point>, number: usize, message: &str) -> Event {
    let event = Event::new(Kind::Note)
        .with_detail("note", "correction")
        .with_detail("move_number", number)
        .with_detail("message", message);
    match point {
        Some(point) => event
            .with_detail("point", point.to_sgf())
            .with_points([cell(point)]),
        None => event,
    }
}

/// A point in SGF letters (`dd`), as the referee's actions and corrections name them.
pub fn point_from_sgf(text: &str) -> Option<Point> {
    let bytes = text.as_bytes();
    match bytes {
        [col @ b'a'..=b'z', row @ b'a'..=b'z'] => Some(Point::new(row - b'a', col - b'a')),
        _ => None,
    }
}

impl Session {
    /// Takes the referee's actions waiting, answering each. A refused action is answered
    /// and changes nothing; a failure to write ends the recording.
    pub(super) fn take_actions(
        &mut self,
        actions: &mpsc::Receiver<ActionRequest>,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<(), RecorderError> {
        answer_actions(actions, |action, by| self.act(action, by, on_line))
    }

    /// A referee's action, written to the chain naming `by`. Refusals are `BadOptions`.
    fn act(
        &mut self,
        action: &Action,
        by: &str,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<String, RecorderError> {
        if self.inference.is_none() {
            return Err(RecorderError::BadOptions(
                "no game has started on this board yet".into(),
            ));
        }
        self.acting = Some(by.to_string());
        let done = self.act_as(action, on_line);
        self.acting = None;
        done
    }

    fn act_as(
        &mut self,
        action: &Action,
        on_line: &mut dyn FnMut(&str),
    ) -> Result<String, RecorderError> {
        let refuse = |message: String| Err(RecorderError::BadOptions(message));
        match action {
            Action::Pass(color) => {
                let outcomes = self
                    .inference
                    .as_mut()
                    .expect("checked by act")
                    .pass(*color);
                let now = self.now;
                self.write_outcomes(&outcomes, now, 1.0, None, None, on_line)?;
                Ok(format!("pass entered for {}", color_name(*color)))
            }
            Action::CloseFlag {
                flag_id,
                dismiss,
                note,
            } => {
                let Some(&(_, seq)) = self.flag_seqs.iter().find(|(id, _)| id == flag_id) else {
                    return refuse(format!("no flag {flag_id} in this game"));
                };
                if self.closed_flags.contains(flag_id) {
                    return refuse(format!("flag {flag_id} is already closed"));
                }
                self.inference
                    .as_mut()
                    .expect("checked by act")
                    .settle_flag(*flag_id);
                self.closed_flags.insert(*flag_id);
                let (mut event, message) = flag_closed(*flag_id, seq, *dismiss, note);
                event.video_time = self.video_time(self.now);
                self.append(event)?;
                self.sgf.add_comment(&message);
                self.write_sgf()?;
                Ok(message)
            }
            Action::MarkDead { dead, counting } => {
                let by = self.acting.clone().unwrap_or_default();
                self.count(dead, *counting, &by).map(|scored| scored.result)
            }
            Action::ReplaceLastMove(point) => {
                let Some((number, color, Move::Play(was))) = self.last_move() else {
                    return refuse("the last move is no stone to move elsewhere".into());
                };
                let board = self
                    .inference
                    .as_ref()
                    .expect("checked by act")
                    .position()
                    .board();
                if !board.contains(*point) {
                    return refuse(format!("{} is off the board", point.to_sgf()));
                }
                if *point == was || board.get(*point).is_some() {
                    return refuse(format!("{} is not an empty point", point.to_sgf()));
                }
                self.correct(
                    Some(*point),
                    number,
                    format!(
                        "move {number} corrected by the referee: {} played {}, not {} (misread)",
                        color_name(color),
                        point.to_sgf(),
                        was.to_sgf()
                    ),
                )
            }
            Action::ReplaceLastMoveWritten(written) => refuse(format!(
                "a Go move is corrected by its point in SGF letters (like \"dd\"), not by {written:?}"
            )),
            Action::UndoLastMove => {
                let Some((number, color, mv)) = self.last_move() else {
                    return refuse("no move to undo".into());
                };
                self.correct(
                    None,
                    number,
                    format!(
                        "move {number} ({} {}) removed by the referee: it was not played (misread)",
                        color_name(color),
                        match mv {
                            Move::Play(p) => p.to_sgf(),
                            Move::Pass => "pass".into(),
                        }
                    ),
                )
            }
        }
    }

    /// The last move standing in the record: its number, colour and move.
    fn last_move(&self) -> Option<(usize, Color, Move)> {
        let events = self.read_events().ok()?;
        let corrections = Corrections::from_events(&events);
        let start = events
            .iter()
            .rposition(|e| is_note(e, "game-start"))
            .unwrap_or(0);
        let standing = events[start..]
            .iter()
            .filter(|e| corrections.effective_move(e).is_some())
            .count();
        let last = events[start..]
            .iter()
            .rev()
            .find_map(|e| corrections.effective_move(e))?;
        let number = self.inference.as_ref()?.moves_played();
        (standing > 0).then_some((number, last.0, last.1))
    }

    /// Writes a correction of the last move and rebuilds the game from the corrected chain.
    fn correct(
        &mut self,
        point: Option<Point>,
        number: usize,
        message: String,
    ) -> Result<String, RecorderError> {
        let mut event = correction(point, number, &message);
        event.video_time = self.video_time(self.now);
        self.append(event)?;
        self.rebuild()?;
        Ok(message)
    }

    /// Builds the game again from the chain, once a correction has been written to it.
    pub(super) fn rebuild(&mut self) -> Result<(), RecorderError> {
        self.moves = 0;
        self.flags = 0;
        self.flag_seqs.clear();
        self.closed_flags.clear();
        self.sgf = SgfView::new(self.komi);
        let size = self.size;
        // The board as last seen stays what the camera is compared with: where it differs
        // from the corrected game the difference is known, so a misread that persists is
        // not read as a new move again.
        self.restore(size)
    }
}
