//! From "the recorded position" and "what the camera sees now" to the moves that were
//! played, and the rules broken on the way (`../shared/RULES.md`, Go).
//!
//! A camera sees stones, not moves: between two stable frames a player may have put one
//! stone down and taken the prisoners off (the usual case), may still be taking them off,
//! two players may have played fast, a stone may have been taken back, slid, or swept off.
//! [`explain`] searches the sequences of placements that lead from the recorded
//! [`Position`] to the seen [`Occupancy`] through the rules engine, and reads every
//! difference that is left as a flag citing the article it breaks.
//!
//! # The reading of a change
//!
//! Every [`Explanation`] is a list of moves (`moves`), the position the rules say the game
//! is in afterwards (`after`: captures removed, illegal stones taken back with the turn
//! lost, displaced or wrongly removed stones back on their points), and flags. Together the
//! flags name every point where the board seen differs from `after`, so the caller can
//! continue from `after` and tell the players what to put right.
//!
//! | seen | reading | flag |
//! |---|---|---|
//! | nothing changed | no explanation (`[]`) | — |
//! | a stone of the side to move, its captures off | that move | none |
//! | … its captures partly still on the board | that move | `captures-not-removed` |
//! | … other stones removed too | that move | `removed-with-liberties` |
//! | a stone of the side that just moved | that move | `double-move` |
//! | a ko retaken / a suicide stone standing | that move, turn lost | `ko-retaken` / `suicide` |
//! | up to [`MAX_NEW_STONES`] new stones | each order of them the rules allow | `inferred-order` when several fit |
//! | the last stone gone or moved | nothing played | `taken-back` |
//! | another stone gone, or slid next door | nothing played | `displaced` |
//! | anything else | nothing played | `board-disturbed` (`too-many-new-stones` beyond the bound) |
//!
//! # How the recorder uses it
//!
//! A capture takes several frames to clear: the stone goes down, then the prisoners come
//! off one by one. While [`Explanation::pending_removals`] is not empty the player is still
//! at it, so the recorder keeps its `before` and explains the next frames against it; once
//! the best explanation is settled it continues from `after`. If the opponent plays before
//! the prisoners are all off, the next frame holds two moves and the first one's
//! `captures-not-removed` flag is no longer pending: that is the breach of TGA 27.
//!
//! What a camera cannot see is not guessed: a stone placed and captured between two
//! frames, or a stone put back on a point a capture had just emptied, leaves no trace.

use super::{DOUBLE_MOVE, Illegal, Move, Point, Position, REPETITION};
use crate::games::{Article, Color, Occupancy, Penalty, Source};
use serde::Serialize;
use serde::ser::SerializeStruct;

/// The most new stones whose orders are searched. Four covers a fast exchange of two moves
/// each, and needs at most 4! = 24 orders; a frame with more new stones (a camera that was
/// covered for a long while, stones poured on the board) is read as a disturbed board.
pub const MAX_NEW_STONES: usize = 4;

/// What the recorder knows besides the board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Context {
    /// The side to move in `before` has passed (the clock or an operator said so; a pass
    /// is invisible) before the stones now seen were placed. Explanations then start with
    /// that pass, and a stone of the side that moved last is its turn, not a double move.
    pub pass_entered: bool,
    /// The last stone the recorder saw placed. Removing or moving it is taking a move back
    /// (TGA 21); any other stone found off its point was displaced (TGA 25).
    pub last_stone: Option<Point>,
}

/// What a flag says happened. Serialised in kebab-case (`captures-not-removed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagKind {
    /// The same colour played twice with no pass between (TGA 20, TML 23; loss). If the
    /// opponent did pass, explain again with [`Context::pass_entered`].
    DoubleMove,
    /// A single-stone ko retaken at once (TGA 8, TGA 28, TML 31; warning, lose-turn).
    KoRetaken,
    /// A stone with no liberties that captures nothing (TGA 6, TGA 29, TML 32; warning,
    /// lose-turn).
    Suicide,
    /// The last placed stone removed again or moved to another point (TGA 21, TML 24;
    /// warning; the stone goes back).
    TakenBack,
    /// Stones a move captured are still on the board (TGA 27, TML 30; warning; remove the
    /// rest). Transitional while the player is still taking them off: see
    /// [`Explanation::pending_removals`].
    CapturesNotRemoved,
    /// Stones removed that no move captured: they still had liberties (TGA 27, TML 30;
    /// warning; put them back).
    RemovedWithLiberties,
    /// A stone found off its point, gone or slid to one of the eight points around it,
    /// with no move explaining it (TGA 25, TML 28; advisory: put back, accept, draw or
    /// replay).
    Displaced,
    /// The board changed in a way no sequence of moves explains: the recorded position is
    /// the reconstruction (TGA 26, TML 29; advisory).
    BoardDisturbed,
    /// More than [`MAX_NEW_STONES`] new stones: their orders were not searched, and the
    /// recorded position stands as for a disturbed board (TGA 26, TML 29; advisory).
    TooManyNewStones,
    /// A move brought back a whole-board position seen before (TGA 11; draw-claim).
    Repetition,
    /// Several orders of the same stones explain the frame equally well; the others are
    /// the explanations of equal cost next to this one. A note, not a breach.
    InferredOrder,
}

const TGA_21: &[Article] = &[
    Article::new(Source::Tga, "21"),
    Article::new(Source::Tml, "24"),
];
const TGA_25: &[Article] = &[
    Article::new(Source::Tga, "25"),
    Article::new(Source::Tml, "28"),
];
const TGA_26: &[Article] = &[
    Article::new(Source::Tga, "26"),
    Article::new(Source::Tml, "29"),
];
const TGA_27: &[Article] = &[
    Article::new(Source::Tga, "27"),
    Article::new(Source::Tml, "30"),
];

/// What declaring the board disturbed costs: an explanation that costs as much is no
/// explanation.
const DISTURBED_COST: u32 = 10;
/// Alternatives costing more than this above the best are dropped: a clean move does not
/// need a double-move reading of the same stones beside it.
const SLACK: u32 = 3;

impl FlagKind {
    /// The rule broken, then the articles that set its penalty, as RULES.md cites them.
    pub fn rules(self) -> &'static [Article] {
        match self {
            FlagKind::DoubleMove => DOUBLE_MOVE.0,
            FlagKind::KoRetaken => Illegal::Ko.articles(),
            FlagKind::Suicide => Illegal::Suicide.articles(),
            FlagKind::TakenBack => TGA_21,
            FlagKind::CapturesNotRemoved | FlagKind::RemovedWithLiberties => TGA_27,
            FlagKind::Displaced => TGA_25,
            FlagKind::BoardDisturbed | FlagKind::TooManyNewStones => TGA_26,
            FlagKind::Repetition => REPETITION.0,
            FlagKind::InferredOrder => &[],
        }
    }

    /// The penalties RULES.md's table gives; empty for a note.
    pub fn penalties(self) -> &'static [Penalty] {
        match self {
            FlagKind::DoubleMove => DOUBLE_MOVE.1,
            FlagKind::KoRetaken => Illegal::Ko.penalties(),
            FlagKind::Suicide => Illegal::Suicide.penalties(),
            FlagKind::TakenBack | FlagKind::CapturesNotRemoved | FlagKind::RemovedWithLiberties => {
                &[Penalty::Warning]
            }
            FlagKind::Displaced | FlagKind::BoardDisturbed | FlagKind::TooManyNewStones => {
                &[Penalty::Advisory]
            }
            FlagKind::Repetition => REPETITION.1,
            FlagKind::InferredOrder => &[],
        }
    }

    /// One line for a referee.
    pub fn describe(self) -> &'static str {
        match self {
            FlagKind::DoubleMove => "the same colour played twice with no pass between",
            FlagKind::KoRetaken => "a ko retaken at once: the stone is taken back",
            FlagKind::Suicide => "a stone without liberties that captures nothing",
            FlagKind::TakenBack => "the last placed stone was removed or moved: it goes back",
            FlagKind::CapturesNotRemoved => "captured stones are still on the board",
            FlagKind::RemovedWithLiberties => "stones were removed that were not captured",
            FlagKind::Displaced => "a stone is off its point",
            FlagKind::BoardDisturbed => "the board changed in a way no moves explain",
            FlagKind::TooManyNewStones => "too many new stones to find the moves",
            FlagKind::Repetition => "the whole-board position repeats",
            FlagKind::InferredOrder => "several orders of these stones fit",
        }
    }

    /// How unlikely the reading is, for ranking: notes are free, a transition almost so,
    /// a slip of the hand is cheaper than a breach, a breach cheaper than a lost game.
    fn cost(self, points: usize) -> u32 {
        match self {
            FlagKind::InferredOrder | FlagKind::Repetition => 0,
            FlagKind::CapturesNotRemoved => 1,
            FlagKind::TakenBack | FlagKind::Displaced => 2,
            // Each stone removed by mistake makes the reading less likely.
            FlagKind::RemovedWithLiberties => 2 + points as u32,
            FlagKind::KoRetaken | FlagKind::Suicide => 3,
            FlagKind::DoubleMove => 4,
            FlagKind::BoardDisturbed | FlagKind::TooManyNewStones => DISTURBED_COST,
        }
    }
}

/// One irregularity (or note) of an explanation, with its citation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Flag {
    pub kind: FlagKind,
    /// `kind.rules()`, copied so the flag serialises on its own.
    pub rules: Vec<Article>,
    /// `kind.penalties()`.
    pub penalties: Vec<Penalty>,
    /// The points concerned, sorted, except: the illegal stone comes first for
    /// `ko-retaken` and `suicide` (then the stones it would capture); `from`, `to` for a
    /// moved stone; the placements in this order for `inferred-order`.
    pub points: Vec<Point>,
    /// The move of [`Explanation::moves`] the flag is about, if it is about one.
    pub move_index: Option<usize>,
}

impl Flag {
    /// A flag of `kind`, with that kind's articles and penalties.
    pub fn new(kind: FlagKind, points: Vec<Point>, move_index: Option<usize>) -> Flag {
        Flag {
            kind,
            rules: kind.rules().to_vec(),
            penalties: kind.penalties().to_vec(),
            points,
            move_index,
        }
    }

    /// This flag's share of [`Explanation::cost`].
    pub fn cost(&self) -> u32 {
        self.kind.cost(self.points.len())
    }
}

/// One way the change can have come about.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The moves, in order: a pass first when [`Context::pass_entered`], then the stones.
    /// An illegal stone (`ko-retaken`, `suicide`) is listed, but is not in `after`.
    pub moves: Vec<(Color, Move)>,
    /// Sorted by move, then kind; flags about no move last.
    pub flags: Vec<Flag>,
    /// The position the rules say the game is in: the moves played, prisoners taken off,
    /// an illegal stone taken back with its player's turn lost (TGA 28–29), stones removed
    /// or moved by mistake back on their points. For a disturbed board, `before`.
    pub after: Position,
}

impl Explanation {
    /// The ranking key: the sum of the flags' costs. 0 is a clean reading.
    pub fn cost(&self) -> u32 {
        self.flags.iter().map(Flag::cost).sum()
    }

    /// Whether a flag of `kind` is raised.
    pub fn has(&self, kind: FlagKind) -> bool {
        self.flags.iter().any(|f| f.kind == kind)
    }

    /// Prisoners of the last move still on the board: the player may still be taking them
    /// off, so this is a transition, not yet a breach. Empty once they are all off.
    /// (Prisoners of an earlier move still on the board are a breach: the game went on.)
    pub fn pending_removals(&self) -> Vec<Point> {
        let last = self.moves.len().checked_sub(1);
        self.flags
            .iter()
            .filter(|f| f.kind == FlagKind::CapturesNotRemoved && f.move_index == last)
            .flat_map(|f| f.points.iter().copied())
            .collect()
    }

    /// No flag but notes (`repetition`'s draw claim and `inferred-order` are not breaches),
    /// and nothing pending: the board shows exactly `after`.
    pub fn is_clean(&self) -> bool {
        self.cost() == 0
    }
}

/// Moves as `B dd` / `W pass`; `after` as its side to move and text rows.
impl Serialize for Explanation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let moves: Vec<String> = self
            .moves
            .iter()
            .map(|(color, mv)| format!("{} {mv}", color.letter()))
            .collect();
        let mut state = serializer.serialize_struct("Explanation", 5)?;
        state.serialize_field("moves", &moves)?;
        state.serialize_field("flags", &self.flags)?;
        state.serialize_field("cost", &self.cost())?;
        state.serialize_field("to_move", &self.after.to_move())?;
        state.serialize_field("board", &self.after.board().to_occupancy().to_text_rows())?;
        state.end()
    }
}

/// The camera's grid is not the game's board: a wrong grid, not a change to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the camera reports a {width}×{height} grid, the game is on {size}×{size}")]
pub struct ShapeError {
    pub width: usize,
    pub height: usize,
    pub size: usize,
}

/// The ways the change from `before` to `seen` can be explained, best (cheapest) first;
/// empty when nothing changed (the lone pass when [`Context::pass_entered`]). Never empty
/// otherwise: when nothing better fits, the one
/// explanation is `board-disturbed` (or `too-many-new-stones`) with `after` = `before`.
///
/// Alternatives are kept when they cost at most 3 more than the best and less than a
/// disturbed board; among equal costs, fewer moves first.
pub fn explain(
    before: &Position,
    seen: &Occupancy,
    context: Context,
) -> Result<Vec<Explanation>, ShapeError> {
    let size = before.size();
    if seen.width() != size || seen.height() != size {
        return Err(ShapeError {
            width: seen.width(),
            height: seen.height(),
            size,
        });
    }
    let mut start = before.clone();
    let mut prefix = Vec::new();
    if context.pass_entered {
        let passer = before.to_move();
        start
            .play(passer, Move::Pass)
            .expect("a pass is always legal");
        prefix.push((passer, Move::Pass));
    }
    let board = start.board();
    let seen_at = |p: Point| seen.get(p.row as usize, p.col as usize);
    let mut added = Vec::new();
    let mut vanished = Vec::new();
    let mut differing = Vec::new();
    for point in board.points() {
        let (was, now) = (board.get(point), seen_at(point));
        if was == now {
            continue;
        }
        differing.push(point);
        if let Some(color) = now {
            added.push((point, color));
        }
        if let Some(color) = was {
            vanished.push((point, color));
        }
    }
    if differing.is_empty() {
        return Ok(if prefix.is_empty() {
            Vec::new()
        } else {
            vec![Explanation {
                moves: prefix,
                flags: Vec::new(),
                after: start,
            }]
        });
    }
    let fallback = |kind| Explanation {
        moves: prefix.clone(),
        flags: vec![Flag::new(kind, differing.clone(), None)],
        after: start.clone(),
    };
    if added.len() > MAX_NEW_STONES {
        return Ok(vec![fallback(FlagKind::TooManyNewStones)]);
    }

    let mut search = Search {
        moved_last: before.to_move().opponent(),
        prefix: &prefix,
        seen,
        last_stone: context.last_stone,
        found: Vec::new(),
    };
    // First every new stone placed, then each reading in which one of them is a stone that
    // moved there from a point now empty (the last stone from anywhere, another from next
    // door) and the rest are placed.
    search.orders(&start, &added, None);
    for &(from, color) in &vanished {
        for (index, &(to, new_color)) in added.iter().enumerate() {
            let next_door = from.row.abs_diff(to.row) <= 1 && from.col.abs_diff(to.col) <= 1;
            if new_color == color && (next_door || context.last_stone == Some(from)) {
                let mut rest = added.clone();
                rest.remove(index);
                search.orders(&start, &rest, Some(Shift { from, to, color }));
            }
        }
    }

    let mut found = search.found;
    let best = found.iter().map(Explanation::cost).min();
    let Some(best) = best.filter(|&b| b < DISTURBED_COST) else {
        return Ok(vec![fallback(FlagKind::BoardDisturbed)]);
    };
    found.retain(|e| {
        let cost = e.cost();
        cost <= best + SLACK && cost < DISTURBED_COST
    });
    mark_inferred_orders(&mut found);
    // Stable: among equals, the search order (new stones in board order) stays.
    found.sort_by_key(|e| (e.cost(), e.moves.len()));
    Ok(found)
}

/// A stone read as having moved from `from` to `to` rather than been placed.
#[derive(Clone, Copy, Debug)]
struct Shift {
    from: Point,
    to: Point,
    color: Color,
}

/// One placement tried, and what the rules made of it.
struct Step {
    color: Color,
    point: Point,
    outcome: Result<super::Played, Illegal>,
}

struct Search<'a> {
    /// The opponent of the side to move in `before`: who moved last, as far as turns go.
    moved_last: Color,
    prefix: &'a [(Color, Move)],
    seen: &'a Occupancy,
    last_stone: Option<Point>,
    found: Vec<Explanation>,
}

impl Search<'_> {
    /// Every order of `placements` the rules let be played from `start`, each read
    /// against the board seen.
    fn orders(&mut self, start: &Position, placements: &[(Point, Color)], shift: Option<Shift>) {
        if placements.is_empty() {
            self.read(start.clone(), &[], shift);
        } else {
            let mut used = vec![false; placements.len()];
            self.extend(start, placements, &mut used, &mut Vec::new(), shift);
        }
    }

    fn extend(
        &mut self,
        state: &Position,
        placements: &[(Point, Color)],
        used: &mut [bool],
        steps: &mut Vec<Step>,
        shift: Option<Shift>,
    ) {
        let last = steps.len() + 1 == placements.len();
        for index in 0..placements.len() {
            if used[index] {
                continue;
            }
            let (point, color) = placements[index];
            let mut next = state.clone();
            let outcome = next.play(color, Move::Play(point));
            match outcome {
                Ok(_) => {
                    steps.push(Step {
                        color,
                        point,
                        outcome,
                    });
                    if last {
                        self.read(next, steps, shift);
                    } else {
                        used[index] = true;
                        self.extend(&next, placements, used, steps, shift);
                        used[index] = false;
                    }
                    steps.pop();
                }
                // An illegal stone is only read as the last one: once it stands, the board
                // and the rules part ways, and judging further stones on either is a guess.
                Err(Illegal::Ko | Illegal::Suicide) if last => {
                    steps.push(Step {
                        color,
                        point,
                        outcome,
                    });
                    // The offender loses the turn (TGA 28–29), as `replay` records it.
                    next.play(color, Move::Pass)
                        .expect("a pass is always legal");
                    self.read(next, steps, shift);
                    steps.pop();
                }
                Err(_) => {}
            }
        }
    }

    /// Compares the board the sequence should leave with the one seen, and keeps the
    /// reading if every difference is one a flag names.
    fn read(&mut self, after: Position, steps: &[Step], shift: Option<Shift>) {
        let first = self.prefix.len();
        let size = after.size();
        let mut expected = after.board().clone();
        // For each point, the last move that captured a stone of that colour there.
        let mut captured_by: Vec<Option<(Color, usize)>> = vec![None; size * size];
        let index_of = |p: Point| p.row as usize * size + p.col as usize;
        // Stones an illegal ko retake would have taken: off the board or still on it, the
        // flag names them either way.
        let mut either: Vec<Point> = Vec::new();
        let mut flags = Vec::new();
        for (offset, step) in steps.iter().enumerate() {
            let move_index = first + offset;
            match &step.outcome {
                Ok(played) => {
                    for &stone in &played.captured {
                        captured_by[index_of(stone)] = Some((step.color.opponent(), move_index));
                    }
                    if played.repeats_position_of_move.is_some() {
                        flags.push(Flag::new(
                            FlagKind::Repetition,
                            vec![step.point],
                            Some(move_index),
                        ));
                    }
                }
                Err(illegal) => {
                    expected.set(step.point, Some(step.color));
                    let kind = match illegal {
                        Illegal::Ko => {
                            either = ko_captures(&after, step.color, step.point);
                            FlagKind::KoRetaken
                        }
                        _ => FlagKind::Suicide,
                    };
                    let mut points = vec![step.point];
                    points.extend(&either);
                    flags.push(Flag::new(kind, points, Some(move_index)));
                }
            }
        }
        if let Some(Shift { from, to, color }) = shift {
            if expected.get(from) != Some(color) || expected.get(to).is_some() {
                return;
            }
            expected.set(from, None);
            expected.set(to, Some(color));
        }

        let mut not_removed: Vec<(usize, Point)> = Vec::new();
        let mut removed = Vec::new();
        for point in expected.points() {
            let want = expected.get(point);
            let now = self.seen.get(point.row as usize, point.col as usize);
            if want == now || either.contains(&point) {
                continue;
            }
            match (want, now) {
                (None, Some(color)) => match captured_by[index_of(point)] {
                    Some((taken, move_index)) if taken == color => {
                        not_removed.push((move_index, point));
                    }
                    _ => return,
                },
                (Some(_), None) => removed.push(point),
                _ => return,
            }
        }

        not_removed.sort();
        for chunk in not_removed.chunk_by(|a, b| a.0 == b.0) {
            flags.push(Flag::new(
                FlagKind::CapturesNotRemoved,
                chunk.iter().map(|&(_, p)| p).collect(),
                Some(chunk[0].0),
            ));
        }
        let slip = |point: Point| {
            if self.last_stone == Some(point) {
                FlagKind::TakenBack
            } else {
                FlagKind::Displaced
            }
        };
        if let Some(Shift { from, to, .. }) = shift {
            flags.push(Flag::new(slip(from), vec![from, to], None));
        }
        if steps.is_empty() {
            // No stone placed: one stone gone is a slip of the hand; more than that, or a
            // slip and a stone gone, is a disturbed board. A stone gone may have been
            // lifted (TGA 27) or slid off between points, where no point shows it (TGA
            // 25): the occupancy cannot tell them apart, and the advisory reading is the
            // one that accuses no one wrongly.
            match (&removed[..], shift) {
                ([], Some(_)) => {}
                (&[point], None) => flags.push(Flag::new(slip(point), vec![point], None)),
                _ => return,
            }
        } else {
            if let Some(at) = removed.iter().position(|&p| self.last_stone == Some(p)) {
                let point = removed.remove(at);
                flags.push(Flag::new(FlagKind::TakenBack, vec![point], None));
            }
            if !removed.is_empty() {
                flags.push(Flag::new(FlagKind::RemovedWithLiberties, removed, None));
            }
        }

        let mut moves = self.prefix.to_vec();
        moves.extend(steps.iter().map(|s| (s.color, Move::Play(s.point))));
        let mut previous = self.moved_last;
        for (index, &(color, mv)) in moves.iter().enumerate() {
            if color == previous {
                let points = match mv {
                    Move::Play(point) => vec![point],
                    Move::Pass => Vec::new(),
                };
                flags.push(Flag::new(FlagKind::DoubleMove, points, Some(index)));
            }
            previous = color;
        }
        flags.sort_by_key(|f| (f.move_index.is_none(), f.move_index, f.kind));
        self.found.push(Explanation {
            moves,
            flags,
            after,
        });
    }
}

/// The stones a ko retake at `point` takes: what the player lifts off, though the rules
/// refuse the move. Found by replaying it with the ko ban lifted.
fn ko_captures(position: &Position, color: Color, point: Point) -> Vec<Point> {
    let mut free = position.clone();
    free.setup(&[], &[], color);
    let mut captured = free
        .play(color, Move::Play(point))
        .map(|played| played.captured)
        .unwrap_or_default();
    captured.sort();
    captured
}

/// Flags every explanation that has an equal-cost twin made of the same moves in another
/// order with the same kinds of flags: the camera saw the stones, not their order.
fn mark_inferred_orders(found: &mut [Explanation]) {
    let key = |e: &Explanation| {
        let mut moves: Vec<(Color, String)> = e
            .moves
            .iter()
            .map(|&(color, mv)| (color, mv.to_sgf()))
            .collect();
        moves.sort();
        let mut kinds: Vec<FlagKind> = e.flags.iter().map(|f| f.kind).collect();
        kinds.sort();
        (e.cost(), moves, kinds)
    };
    let keys: Vec<_> = found.iter().map(key).collect();
    for (index, explanation) in found.iter_mut().enumerate() {
        if keys.iter().filter(|k| **k == keys[index]).count() > 1 {
            let points = explanation
                .moves
                .iter()
                .filter_map(|&(_, mv)| match mv {
                    Move::Play(point) => Some(point),
                    Move::Pass => None,
                })
                .collect();
            explanation
                .flags
                .push(Flag::new(FlagKind::InferredOrder, points, None));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(rows: &[&str], to_move: Color) -> Position {
        Position::from_occupancy(&Occupancy::from_text_rows(rows).unwrap(), to_move).unwrap()
    }

    fn seen(rows: &[&str]) -> Occupancy {
        Occupancy::from_text_rows(rows).unwrap()
    }

    fn at(row: u8, col: u8) -> Point {
        Point::new(row, col)
    }

    fn play(color: Color, row: u8, col: u8) -> (Color, Move) {
        (color, Move::Play(at(row, col)))
    }

    fn kinds(explanation: &Explanation) -> Vec<FlagKind> {
        explanation.flags.iter().map(|f| f.kind).collect()
    }

    fn rows(position: &Position) -> Vec<String> {
        position.board().to_occupancy().to_text_rows()
    }

    fn explain_plain(before: &Position, rows: &[&str]) -> Vec<Explanation> {
        explain(before, &seen(rows), Context::default()).unwrap()
    }

    const EMPTY: [&str; 5] = [".....", ".....", ".....", ".....", "....."];

    #[test]
    fn no_change_is_no_explanation() {
        let before = position(&["B....", ".W...", ".....", ".....", "....."], Color::Black);
        assert!(explain_plain(&before, &["B....", ".W...", ".....", ".....", "....."]).is_empty());
    }

    #[test]
    fn tga_4_2_one_stone_of_the_side_to_move_is_its_move() {
        let before = position(&EMPTY, Color::Black);
        let found = explain_plain(&before, &[".....", ".....", "..B..", ".....", "....."]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].moves, [play(Color::Black, 2, 2)]);
        assert!(found[0].flags.is_empty() && found[0].is_clean());
        assert_eq!(found[0].after.to_move(), Color::White);
        assert_eq!(found[0].after.board().get(at(2, 2)), Some(Color::Black));
    }

    #[test]
    fn tga_5_2_a_capture_with_its_prisoner_taken_off_is_clean() {
        let before = position(&[".....", "..B..", ".BWB.", ".....", "....."], Color::Black);
        let found = explain_plain(&before, &[".....", "..B..", ".B.B.", "..B..", "....."]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].moves, [play(Color::Black, 3, 2)]);
        assert!(found[0].flags.is_empty());
        assert_eq!(found[0].after.prisoners(Color::Black), 1);
    }

    #[test]
    fn tga_27_prisoners_still_on_the_board_are_pending_until_the_opponent_moves() {
        let before = position(&["WW...", "BB...", ".....", ".....", "....."], Color::Black);
        let captured = rows(&{
            let mut p = before.clone();
            p.play(Color::Black, Move::Play(at(0, 2))).unwrap();
            p
        });

        // The stone is down, both prisoners still stand: a transition.
        let found = explain_plain(&before, &["WWB..", "BB...", ".....", ".....", "....."]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].moves, [play(Color::Black, 0, 2)]);
        assert_eq!(kinds(&found[0]), [FlagKind::CapturesNotRemoved]);
        let flag = &found[0].flags[0];
        assert_eq!(
            (flag.points.clone(), flag.move_index),
            (vec![at(0, 0), at(0, 1)], Some(0))
        );
        assert_eq!(flag.rules, TGA_27);
        assert_eq!(flag.penalties, [Penalty::Warning]);
        assert_eq!(found[0].pending_removals(), [at(0, 0), at(0, 1)]);
        assert_eq!(
            rows(&found[0].after),
            captured,
            "after: the prisoners are off"
        );

        // One taken off, one to go.
        let found = explain_plain(&before, &["W.B..", "BB...", ".....", ".....", "....."]);
        assert_eq!(found[0].pending_removals(), [at(0, 0)]);

        // All off: settled, clean.
        let found = explain_plain(&before, &["..B..", "BB...", ".....", ".....", "....."]);
        assert!(found[0].is_clean() && found[0].pending_removals().is_empty());
        assert_eq!(rows(&found[0].after), captured);

        // White moved on with the prisoners still there: no longer pending, a breach.
        let found = explain_plain(&before, &["WWB..", "BB...", ".....", ".....", "....W"]);
        assert_eq!(
            found[0].moves,
            [play(Color::Black, 0, 2), play(Color::White, 4, 4)]
        );
        assert_eq!(kinds(&found[0]), [FlagKind::CapturesNotRemoved]);
        assert_eq!(found[0].flags[0].move_index, Some(0));
        assert!(found[0].pending_removals().is_empty());
    }

    #[test]
    fn tga_27_stones_removed_with_liberties_go_back() {
        let before = position(&["....W", ".....", ".....", ".....", "B...."], Color::Black);
        let found = explain_plain(&before, &[".....", ".....", "..B..", ".....", "B...."]);
        assert_eq!(found[0].moves, [play(Color::Black, 2, 2)]);
        assert_eq!(kinds(&found[0]), [FlagKind::RemovedWithLiberties]);
        assert_eq!(found[0].flags[0].points, [at(0, 4)]);
        assert_eq!(found[0].flags[0].penalties, [Penalty::Warning]);
        assert_eq!(
            found[0].after.board().get(at(0, 4)),
            Some(Color::White),
            "put back"
        );
    }

    #[test]
    fn tga_20_a_stone_of_the_side_that_just_moved_is_a_double_move() {
        let before = position(&["B....", ".....", ".....", ".....", "....."], Color::White);
        let context = Context {
            last_stone: Some(at(0, 0)),
            ..Context::default()
        };
        let now = seen(&["B....", ".....", "..B..", ".....", "....."]);
        let found = explain(&before, &now, context).unwrap();
        assert_eq!(found[0].moves, [play(Color::Black, 2, 2)]);
        assert_eq!(kinds(&found[0]), [FlagKind::DoubleMove]);
        let flag = &found[0].flags[0];
        assert_eq!(
            (flag.points.clone(), flag.move_index),
            (vec![at(2, 2)], Some(0))
        );
        let cited: Vec<String> = flag.rules.iter().map(|a| a.to_string()).collect();
        assert_eq!(cited, ["TGA 20", "TML 23"]);
        assert_eq!(flag.penalties, [Penalty::Loss]);
        assert_eq!(found[0].after.board().get(at(2, 2)), Some(Color::Black));
    }

    #[test]
    fn tga_20_a_pass_entered_makes_it_the_other_sides_turn() {
        let before = position(&["B....", ".....", ".....", ".....", "....."], Color::White);
        let context = Context {
            pass_entered: true,
            last_stone: Some(at(0, 0)),
        };
        let now = seen(&["B....", ".....", "..B..", ".....", "....."]);
        let found = explain(&before, &now, context).unwrap();
        assert_eq!(
            found[0].moves,
            [(Color::White, Move::Pass), play(Color::Black, 2, 2)]
        );
        assert!(found[0].is_clean());
        assert_eq!(found[0].after.to_move(), Color::White);
        // A pass and nothing else: the pass is the explanation.
        let unchanged = before.board().to_occupancy();
        let found = explain(&before, &unchanged, context).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].moves, [(Color::White, Move::Pass)]);
        assert_eq!(found[0].after.to_move(), Color::Black);
    }

    fn after_ko_capture() -> Position {
        let mut p = position(&[".BW..", "BW.W.", ".BW..", ".....", "....."], Color::Black);
        p.play(Color::Black, Move::Play(at(1, 2))).unwrap();
        p
    }

    #[test]
    fn tga_28_a_ko_retaken_at_once_is_that_move_taken_back_with_the_turn_lost() {
        let before = after_ko_capture();
        assert_eq!(before.ko_point(Color::White), Some(at(1, 1)));
        // White retakes and lifts the black stone; then the same with the stone still there.
        for now in [
            [".BW..", "BW.W.", ".BW..", ".....", "....."],
            [".BW..", "BWBW.", ".BW..", ".....", "....."],
        ] {
            let found = explain_plain(&before, &now);
            assert_eq!(found.len(), 1, "{now:?}");
            assert_eq!(found[0].moves, [play(Color::White, 1, 1)]);
            assert_eq!(kinds(&found[0]), [FlagKind::KoRetaken]);
            let flag = &found[0].flags[0];
            assert_eq!(
                flag.points,
                [at(1, 1), at(1, 2)],
                "the stone, then the one to put back"
            );
            let cited: Vec<String> = flag.rules.iter().map(|a| a.to_string()).collect();
            assert_eq!(cited, ["TGA 8", "TGA 28", "TML 31"]);
            assert_eq!(flag.penalties, [Penalty::Warning, Penalty::LoseTurn]);
            assert_eq!(rows(&found[0].after), rows(&before), "the stone goes back");
            assert_eq!(
                found[0].after.to_move(),
                Color::Black,
                "White lost the turn"
            );
        }
    }

    #[test]
    fn tga_29_a_suicide_stone_standing_is_that_move_taken_back_with_the_turn_lost() {
        let before = position(&[".W...", "W....", ".....", ".....", "....."], Color::Black);
        let found = explain_plain(&before, &["BW...", "W....", ".....", ".....", "....."]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].moves, [play(Color::Black, 0, 0)]);
        assert_eq!(kinds(&found[0]), [FlagKind::Suicide]);
        let cited: Vec<String> = found[0].flags[0]
            .rules
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(cited, ["TGA 6", "TGA 29", "TML 32"]);
        assert_eq!(found[0].after.board().get(at(0, 0)), None);
        assert_eq!(found[0].after.to_move(), Color::White);
    }

    #[test]
    fn tga_4_2_two_stones_played_fast_are_read_in_turn() {
        let before = position(&EMPTY, Color::Black);
        let found = explain_plain(&before, &[".....", ".B...", ".....", "...W.", "....."]);
        assert_eq!(found.len(), 1, "White first would be a double move");
        assert_eq!(
            found[0].moves,
            [play(Color::Black, 1, 1), play(Color::White, 3, 3)]
        );
        assert!(found[0].is_clean());
        assert_eq!(found[0].after.to_move(), Color::Black);
    }

    #[test]
    fn tga_4_2_three_stones_in_two_orders_are_flagged_as_inferred() {
        let before = position(&EMPTY, Color::Black);
        let found = explain_plain(&before, &["B....", ".....", "..W..", ".....", "....B"]);
        assert_eq!(found.len(), 2);
        for explanation in &found {
            assert_eq!(kinds(explanation), [FlagKind::InferredOrder]);
            assert!(explanation.is_clean());
            assert!(explanation.flags[0].rules.is_empty());
        }
        assert_eq!(found[0].moves[0], play(Color::Black, 0, 0));
        assert_eq!(found[1].moves[0], play(Color::Black, 4, 4));
    }

    #[test]
    fn tga_5_2_a_capture_decides_the_order_of_fast_moves() {
        // Black captures at (2,3), White answers at (4,4), Black fills the emptied point.
        let before = position(&[".....", "..B..", ".BW..", "..B..", "....."], Color::Black);
        let found = explain_plain(&before, &[".....", "..B..", ".BBB.", "..B..", "....W"]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].moves,
            [
                play(Color::Black, 2, 3),
                play(Color::White, 4, 4),
                play(Color::Black, 2, 2)
            ]
        );
        assert!(found[0].is_clean());
        assert_eq!(found[0].after.prisoners(Color::Black), 1);
    }

    #[test]
    fn tga_20_two_stones_of_one_colour_are_a_double_move_in_either_order() {
        let before = position(&EMPTY, Color::Black);
        let found = explain_plain(&before, &["B....", ".....", ".....", ".....", "....B"]);
        assert_eq!(found.len(), 2);
        for explanation in &found {
            assert_eq!(
                kinds(explanation),
                [FlagKind::DoubleMove, FlagKind::InferredOrder]
            );
            assert_eq!(explanation.flags[0].move_index, Some(1));
        }
    }

    #[test]
    fn tga_26_more_new_stones_than_the_bound_are_not_searched() {
        let before = position(&EMPTY, Color::Black);
        let found = explain_plain(&before, &["B.W.B", ".....", "W...B", ".....", "....."]);
        assert_eq!(found.len(), 1);
        assert!(found[0].moves.is_empty());
        assert_eq!(kinds(&found[0]), [FlagKind::TooManyNewStones]);
        assert_eq!(found[0].flags[0].points.len(), 5);
        assert_eq!(rows(&found[0].after), rows(&before));
    }

    fn after_black_at_centre() -> (Position, Context) {
        let mut before = position(&EMPTY, Color::Black);
        before.play(Color::Black, Move::Play(at(2, 2))).unwrap();
        let context = Context {
            last_stone: Some(at(2, 2)),
            ..Context::default()
        };
        (before, context)
    }

    #[test]
    fn tga_21_the_last_stone_lifted_again_goes_back() {
        let (before, context) = after_black_at_centre();
        let found = explain(&before, &seen(&EMPTY), context).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].moves.is_empty());
        assert_eq!(kinds(&found[0]), [FlagKind::TakenBack]);
        let cited: Vec<String> = found[0].flags[0]
            .rules
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(cited, ["TGA 21", "TML 24"]);
        assert_eq!(found[0].flags[0].penalties, [Penalty::Warning]);
        assert_eq!(rows(&found[0].after), rows(&before), "the stone goes back");
    }

    #[test]
    fn tga_21_the_last_stone_moved_to_another_point_goes_back() {
        let (before, context) = after_black_at_centre();
        let now = seen(&[".....", ".....", ".....", ".....", "....B"]);
        let found = explain(&before, &now, context).unwrap();
        assert_eq!(
            found.len(),
            1,
            "a double move and a take-back cost far more"
        );
        assert!(found[0].moves.is_empty());
        assert_eq!(kinds(&found[0]), [FlagKind::TakenBack]);
        assert_eq!(found[0].flags[0].points, [at(2, 2), at(4, 4)], "from, to");
        assert_eq!(rows(&found[0].after), rows(&before));
    }

    #[test]
    fn tga_25_a_stone_slid_next_door_is_displaced_before_it_is_a_move() {
        let before = position(&["W....", ".....", "..B..", ".....", "....."], Color::Black);
        let context = Context {
            last_stone: Some(at(0, 0)),
            ..Context::default()
        };
        let now = seen(&["W....", ".....", "...B.", ".....", "....."]);
        let found = explain(&before, &now, context).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(kinds(&found[0]), [FlagKind::Displaced]);
        assert_eq!(found[0].flags[0].points, [at(2, 2), at(2, 3)]);
        assert_eq!(found[0].flags[0].penalties, [Penalty::Advisory]);
        let cited: Vec<String> = found[0].flags[0]
            .rules
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(cited, ["TGA 25", "TML 28"]);
        assert_eq!(rows(&found[0].after), rows(&before));
        // The other reading: Black played next door and lifted its own stone.
        assert_eq!(found[1].moves, [play(Color::Black, 2, 3)]);
        assert_eq!(kinds(&found[1]), [FlagKind::RemovedWithLiberties]);
    }

    #[test]
    fn tga_25_a_stone_gone_that_was_not_the_last_is_displaced() {
        let before = position(&["W....", ".....", "..B..", ".....", "....."], Color::Black);
        let found = explain_plain(&before, &["W....", ".....", ".....", ".....", "....."]);
        assert_eq!(found.len(), 1);
        assert_eq!(kinds(&found[0]), [FlagKind::Displaced]);
        assert_eq!(found[0].flags[0].points, [at(2, 2)]);
    }

    #[test]
    fn tga_26_stones_swept_off_or_changed_colour_are_a_disturbed_board() {
        let before = position(&["W....", ".....", "..B..", ".....", "...BW"], Color::Black);
        for now in [
            ["W....", ".....", ".....", ".....", "....."],
            ["W....", ".....", "..W..", ".....", "...BW"],
        ] {
            let found = explain_plain(&before, &now);
            assert_eq!(found.len(), 1, "{now:?}");
            assert!(found[0].moves.is_empty());
            assert_eq!(kinds(&found[0]), [FlagKind::BoardDisturbed]);
            let cited: Vec<String> = found[0].flags[0]
                .rules
                .iter()
                .map(|a| a.to_string())
                .collect();
            assert_eq!(cited, ["TGA 26", "TML 29"]);
            assert_eq!(rows(&found[0].after), rows(&before));
        }
    }

    #[test]
    fn tga_11_a_repeated_position_is_a_draw_claim_note() {
        // The triple-ko cycle of the position tests: its sixth move brings back the start.
        let mut before = position(
            &[
                ".BW...BW.",
                "BW.W.B.BW",
                ".BW...BW.",
                ".........",
                ".BW......",
                "BW.W.....",
                ".BW......",
                ".........",
                ".........",
            ],
            Color::Black,
        );
        for (color, row, col) in [
            (Color::Black, 1, 2),
            (Color::White, 1, 6),
            (Color::Black, 5, 2),
            (Color::White, 1, 1),
            (Color::Black, 1, 7),
        ] {
            before.play(color, Move::Play(at(row, col))).unwrap();
        }
        let mut repeated = before.clone();
        repeated.play(Color::White, Move::Play(at(5, 1))).unwrap();
        let now = repeated.board().to_occupancy();
        let found = explain(&before, &now, Context::default()).unwrap();
        assert_eq!(found[0].moves, [play(Color::White, 5, 1)]);
        assert_eq!(kinds(&found[0]), [FlagKind::Repetition]);
        assert_eq!(found[0].flags[0].penalties, [Penalty::DrawClaim]);
        assert!(found[0].is_clean(), "a draw claim is not a breach");
    }

    #[test]
    fn a_grid_of_another_size_is_refused() {
        let before = position(&EMPTY, Color::Black);
        let error = explain(&before, &Occupancy::empty(9, 9), Context::default()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the camera reports a 9×9 grid, the game is on 5×5"
        );
    }

    #[test]
    fn every_flag_cites_the_rules_md_table() {
        let table = [
            (FlagKind::DoubleMove, "TGA 20, TML 23", "loss"),
            (
                FlagKind::KoRetaken,
                "TGA 8, TGA 28, TML 31",
                "warning, lose-turn",
            ),
            (
                FlagKind::Suicide,
                "TGA 6, TGA 29, TML 32",
                "warning, lose-turn",
            ),
            (FlagKind::TakenBack, "TGA 21, TML 24", "warning"),
            (FlagKind::CapturesNotRemoved, "TGA 27, TML 30", "warning"),
            (FlagKind::RemovedWithLiberties, "TGA 27, TML 30", "warning"),
            (FlagKind::Displaced, "TGA 25, TML 28", "advisory"),
            (FlagKind::BoardDisturbed, "TGA 26, TML 29", "advisory"),
            (FlagKind::TooManyNewStones, "TGA 26, TML 29", "advisory"),
            (FlagKind::Repetition, "TGA 11", "draw-claim"),
            (FlagKind::InferredOrder, "", ""),
        ];
        for (kind, rules, penalties) in table {
            let join = |items: Vec<String>| items.join(", ");
            assert_eq!(
                join(kind.rules().iter().map(|a| a.to_string()).collect()),
                rules
            );
            assert_eq!(
                join(kind.penalties().iter().map(|p| p.to_string()).collect()),
                penalties
            );
            assert!(!kind.describe().is_empty());
        }
    }

    #[test]
    fn explanations_serialise_for_the_record() {
        let before = position(&["WW...", "BB...", ".....", ".....", "....."], Color::Black);
        let found = explain_plain(&before, &["W.B..", "BB...", ".....", ".....", "....."]);
        let json = serde_json::to_value(&found[0]).unwrap();
        assert_eq!(json["moves"], serde_json::json!(["B ca"]));
        assert_eq!(json["flags"][0]["kind"], "captures-not-removed");
        assert_eq!(
            json["flags"][0]["rules"],
            serde_json::json!(["TGA 27", "TML 30"])
        );
        assert_eq!(json["flags"][0]["points"], serde_json::json!(["aa"]));
        assert_eq!(json["to_move"], "white");
        assert_eq!(json["cost"], 1);
    }
}
