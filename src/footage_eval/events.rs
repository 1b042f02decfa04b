//! What the recorder wrote, read from its `events.jsonl` (`docs/record.md`) without trusting
//! it: the log is the thing under test, so a line that is not what the contract says is
//! counted and skipped, never a reason to stop scoring.

use crate::games::Color;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Where a move went: a point as `[row, col]` in the recorder's own board frame (row 0 on
/// top), a pass, or something the scorer could not read (it matches nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    Pass,
    At(usize, usize),
    Unreadable,
}

impl Spot {
    /// An SGF point (`dd`: column letter first), `pass`, or the empty SGF pass.
    pub fn from_sgf(text: &str) -> Spot {
        let bytes = text.as_bytes();
        match bytes {
            b"" | b"pass" | b"tt" => Spot::Pass,
            [c, r] if c.is_ascii_lowercase() && r.is_ascii_lowercase() => {
                Spot::At(usize::from(r - b'a'), usize::from(c - b'a'))
            }
            _ => Spot::Unreadable,
        }
    }

    pub fn to_sgf(self) -> String {
        match self {
            Spot::Pass => "pass".into(),
            Spot::At(r, c) if r < 26 && c < 26 => {
                [(b'a' + c as u8) as char, (b'a' + r as u8) as char]
                    .iter()
                    .collect()
            }
            Spot::At(r, c) => format!("[{r},{c}]"),
            Spot::Unreadable => "?".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordedMove {
    pub seq: Option<u64>,
    pub number: usize,
    pub color: Option<Color>,
    pub spot: Spot,
    /// The move as the game's record writes it (what an 8×8 game is scored by).
    pub notation: Option<String>,
    pub video_time: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordedFlag {
    pub seq: Option<u64>,
    pub rules: Vec<String>,
    pub move_number: Option<usize>,
    pub video_time: Option<f64>,
    /// `detail.flag`: the kebab-case kind (`double-move`, `displaced`…), when given.
    pub kind: Option<String>,
    /// A `resolved` line answers it.
    pub resolved: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RecordedNote {
    pub video_time: Option<f64>,
    pub text: String,
}

/// A recorder's run, as its event log tells it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorded {
    /// The game record: one move per number, in number order. A move line repeating an
    /// earlier number is the recorder correcting itself (after a take-back, a stone dropped
    /// by accident): the later line stands, as it would in the SGF regenerated from the log.
    pub moves: Vec<RecordedMove>,
    /// Move lines that an even later line with the same number replaced.
    pub corrections: usize,
    pub flags: Vec<RecordedFlag>,
    /// Flags that are notes by nature (`inferred-order`, `repetition`): several orders fit,
    /// or a position came back; neither is a breach to flag.
    pub flag_notes: Vec<RecordedFlag>,
    pub notes: Vec<RecordedNote>,
    /// Lines that are not JSON objects of the event shape, or moves without a number.
    pub unreadable_lines: usize,
    pub session_ended: bool,
}

/// `detail.flag` kinds that say something worth knowing but break no rule.
pub const NOTE_FLAG_KINDS: &[&str] = &["inferred-order", "repetition"];

impl Recorded {
    pub fn load(path: &Path) -> anyhow::Result<Recorded> {
        let text = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        Ok(Recorded::parse(&String::from_utf8_lossy(&text)))
    }

    pub fn parse(text: &str) -> Recorded {
        let mut recorded = Recorded::default();
        let mut by_number: BTreeMap<usize, RecordedMove> = BTreeMap::new();
        let mut flags: Vec<RecordedFlag> = Vec::new();
        let mut resolved: Vec<u64> = Vec::new();
        for line in text.lines() {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
                recorded.unreadable_lines += 1;
                continue;
            };
            let seq = event.get("seq").and_then(Value::as_u64);
            let video_time = event.get("video_time").and_then(Value::as_f64);
            let detail = event.get("detail").and_then(Value::as_object);
            let move_number = event
                .get("move_number")
                .and_then(Value::as_u64)
                .map(|n| n as usize);
            match event.get("kind").and_then(Value::as_str) {
                Some("move") => {
                    let Some(number) = move_number else {
                        recorded.unreadable_lines += 1;
                        continue;
                    };
                    let color = match event.get("color").and_then(Value::as_str) {
                        Some("black") => Some(Color::Black),
                        Some("white") => Some(Color::White),
                        _ => None,
                    };
                    let moved = RecordedMove {
                        seq,
                        number,
                        color,
                        spot: spot_of(&event),
                        notation: event
                            .get("notation")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        video_time,
                    };
                    if by_number.insert(number, moved).is_some() {
                        recorded.corrections += 1;
                    }
                }
                Some("flag") => {
                    let rules = event
                        .get("rules")
                        .and_then(Value::as_array)
                        .map(|rules| {
                            rules
                                .iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    flags.push(RecordedFlag {
                        seq,
                        rules,
                        move_number,
                        video_time,
                        kind: detail
                            .and_then(|d| d.get("flag"))
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        resolved: false,
                    });
                }
                Some("resolved") => {
                    if let Some(answered) = detail
                        .and_then(|d| d.get("resolves"))
                        .and_then(Value::as_u64)
                    {
                        resolved.push(answered);
                    }
                }
                Some("note")
                    if detail.and_then(|d| d.get("note")).and_then(Value::as_str)
                        == Some("correction") =>
                {
                    // The last move moved to the note's point, or undone without one: the
                    // recorder's own correction or a referee's (`recorder::actions`).
                    if let Some(mut last) = by_number.last_entry() {
                        recorded.corrections += 1;
                        if detail.is_some_and(|d| d.contains_key("point")) {
                            last.get_mut().spot = spot_of(&event);
                        } else {
                            last.remove();
                        }
                    }
                }
                Some("note") => recorded.notes.push(RecordedNote {
                    video_time,
                    text: detail
                        .and_then(|d| d.get("note"))
                        .map(|n| match n {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .unwrap_or_default(),
                }),
                Some("session-end") => recorded.session_ended = true,
                Some("session-start" | "session-resume") => {}
                _ => recorded.unreadable_lines += 1,
            }
        }
        for flag in &mut flags {
            flag.resolved = flag.seq.is_some_and(|s| resolved.contains(&s));
        }
        let (notes, flags): (Vec<_>, Vec<_>) = flags.into_iter().partition(|f| {
            f.kind
                .as_deref()
                .is_some_and(|k| NOTE_FLAG_KINDS.contains(&k))
        });
        recorded.flags = flags;
        recorded.flag_notes = notes;
        recorded.moves = by_number.into_values().collect();
        recorded
    }
}

/// The point a move line names: its first `points` entry, else its SGF `notation`.
fn spot_of(event: &serde_json::Map<String, Value>) -> Spot {
    let notation = event.get("notation").and_then(Value::as_str);
    if notation == Some("pass") {
        return Spot::Pass;
    }
    let point = event
        .get("points")
        .and_then(Value::as_array)
        .and_then(|points| points.first())
        .and_then(Value::as_array)
        .and_then(|rc| match rc.as_slice() {
            [r, c] => Some((r.as_u64()? as usize, c.as_u64()? as usize)),
            _ => None,
        });
    match (point, notation) {
        (Some((r, c)), _) => Spot::At(r, c),
        (None, Some(text)) => Spot::from_sgf(text),
        (None, None) => Spot::Unreadable,
    }
}
