//! Mak-hos (PDN) and Makruk (PGN) records as scripts: each move a hand carrying the piece
//! (hopping through a Mak-hos capture's landings, lifting the captured pieces one at a
//! time), promotions shown by the piece's new shape, and the anomalies `--anomaly` asks
//! for staged on the board.
//!
//! Every written move is matched against the rules engines. A Mak-hos move that only
//! gives the opponent a claim (a missed or cut-short capture, HOS 2.4), a move by the side
//! that has just moved (HOS 3.4), and a move no rule allows (HOS 3.2) are all staged as
//! the record writes them, the last with the piece carried straight to its written square
//! and the enemy pieces between its written squares lifted, as `kradan replay` reads such
//! a record; each gets its anomaly mark (`missed-capture`, `incomplete-capture`,
//! `double-move`, `illegal-move`). A Makruk move of the side that has just moved is staged
//! and marked `double-move`; any other Makruk move that does not fit the position, and a
//! Mak-hos move the board cannot carry out (from an empty square, onto an occupied one),
//! is an error naming the move.
//!
//! A requested `double-move` keeps a second move only if the rest of the record still
//! plays from the position it leaves (checked by replaying it); when none does, the
//! opponent objects and the second move is taken back. A requested `missed-capture` is a
//! quiet move where the record captures: the opponent claims the capture (HOS 2.4), the
//! piece goes back and the record's capture is made, so the record plays on unchanged.
//! Disturbances (`knock`, `added`, `removed`) are put right after the next move and keep
//! clear of the squares that move touches.
//!
//! Where RULES.md has an article, an anomaly cites it: HOS 3.2 for pieces moved off their
//! squares, added or removed, and for illegal moves (loss); HOS 3.4 for moving twice
//! (warning); HOS 2.4 / HOS-SCHOOL 3.5.2 for a missed capture (advisory). RULES.md gives
//! no Makruk article for any of these: Makruk anomalies cite MAKRUK 4 (the referee
//! decides any problem during play) or, for a piece released on one square and then moved
//! on, MAKRUK 6 (touch-move) — the articles `kradan replay` cites for illegal Makruk
//! moves — with an advisory penalty, and say so in the note.

use super::scene::Shape;
use super::script::{Anomaly, AnomalyRequest, Board, Ids, Mark, Piece, Script, Step, Touch};
use crate::games::makhos::{
    self, Flag, Kind, Move as HosMove, MoveClass, Observation, Position as HosPosition,
    Square as HosSquare, Verdict, Violation, WrittenMove,
};
use crate::games::makruk::{
    self, Move as RukMove, Position as RukPosition, Role, Square as RukSquare,
};
use crate::games::{Article, Color, Penalty, Source};
use crate::reading::synth::Rng;
use std::collections::{HashMap, HashSet};

/// The anomalies a Mak-hos or Makruk clip can stage, with what each does on the board.
pub const KINDS: &[(&str, &str)] = &[
    (
        "double-move",
        "after the move, the same player makes a second legal move",
    ),
    (
        "takeback",
        "the piece is set down on a wrong square first, then moved on to the right one",
    ),
    (
        "slide",
        "after the move, a piece is pushed about 0.4 of a square off centre and stays",
    ),
    (
        "knock",
        "after the move, a piece is knocked onto a neighbouring square, put back later",
    ),
    (
        "board-knock",
        "after the move, several pieces are knocked off their squares, then restored",
    ),
    (
        "added",
        "after the move, a spare piece is dropped on the board by accident, picked up later",
    ),
    (
        "removed",
        "after the move, an opponent piece that was not captured is lifted, put back later",
    ),
    (
        "missed-capture",
        "Mak-hos: a quiet move instead of the compulsory capture; the opponent claims it and the capture is made",
    ),
    (
        "camera-bump",
        "after the move, the camera is knocked to a new position for good",
    ),
    (
        "board-bump",
        "after the move, the whole board is shifted and turned on the table",
    ),
];

/// A cell of the 8×8 board as the script names it: `[col, row]`, row 0 at the far edge
/// from White.
type Cell = [usize; 2];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Game8 {
    Makhos,
    Makruk,
}

impl Game8 {
    fn label(self) -> &'static str {
        match self {
            Game8::Makhos => "Mak-hos",
            Game8::Makruk => "Makruk",
        }
    }

    /// The cell as the game names it: `22` (a Mak-hos dark square), `e4`.
    fn name(self, cell: Cell) -> String {
        let algebraic = || format!("{}{}", char::from(b'a' + cell[0] as u8), 8 - cell[1].min(7));
        match self {
            Game8::Makhos => {
                HosSquare::at(cell[1], cell[0]).map_or_else(algebraic, |square| square.to_string())
            }
            Game8::Makruk => RukSquare::from_row_col(cell[1], cell[0])
                .map_or_else(algebraic, |square| square.to_string()),
        }
    }

    /// Whether a piece may stand on the cell: Mak-hos uses the dark squares only.
    fn playable(self, cell: Cell) -> bool {
        match self {
            Game8::Makhos => (cell[0] + cell[1]) % 2 == 1,
            Game8::Makruk => true,
        }
    }

    /// The playable cells next to `cell`: the diagonal ones for Mak-hos, all eight for
    /// Makruk.
    fn neighbours(self, cell: Cell) -> Vec<Cell> {
        let mut out = Vec::new();
        for dr in -1i64..=1 {
            for dc in -1i64..=1 {
                if (dr, dc) == (0, 0) || (self == Game8::Makhos && (dr == 0 || dc == 0)) {
                    continue;
                }
                let (c, r) = (cell[0] as i64 + dc, cell[1] as i64 + dr);
                if (0..8).contains(&c) && (0..8).contains(&r) {
                    out.push([c as usize, r as usize]);
                }
            }
        }
        out
    }

    /// The shape of a spare piece dropped on the board.
    fn spare(self) -> Shape {
        match self {
            Game8::Makhos => Shape::Man,
            Game8::Makruk => Shape::Bia,
        }
    }
}

/// The rules and penalties an anomaly cites (see the module documentation).
fn cite(game: Game8, kind: &str) -> (Vec<Article>, Vec<Penalty>) {
    match game {
        Game8::Makhos => match kind {
            "double-move" => (
                Violation::DoubleMove.rules(),
                vec![Violation::DoubleMove.penalty()],
            ),
            "missed-capture" => (Flag::MissedCapture.rules(), vec![Penalty::Advisory]),
            "incomplete-capture" => (Flag::IncompleteCapture.rules(), vec![Penalty::Advisory]),
            "takeback" => (vec![Article::new(Source::Hos, "3.2")], vec![Penalty::Loss]),
            // Still on its square: the referee decides whether it was moved off it.
            "slide" => (Violation::Displaced.rules(), vec![Penalty::Advisory]),
            "knock" | "board-knock" => (
                Violation::Displaced.rules(),
                vec![Violation::Displaced.penalty()],
            ),
            "added" => (
                Violation::PieceAdded.rules(),
                vec![Violation::PieceAdded.penalty()],
            ),
            "removed" => (
                Violation::PieceRemoved.rules(),
                vec![Violation::PieceRemoved.penalty()],
            ),
            _ => (Vec::new(), Vec::new()),
        },
        Game8::Makruk => match kind {
            "takeback" => (
                vec![Article::new(Source::Makruk, "6")],
                vec![Penalty::Advisory],
            ),
            "double-move" | "slide" | "knock" | "board-knock" | "added" | "removed" => (
                vec![Article::new(Source::Makruk, "4")],
                vec![Penalty::Advisory],
            ),
            _ => (Vec::new(), Vec::new()),
        },
    }
}

/// What the note of a Makruk anomaly adds about its citation.
const MAKRUK_NO_ARTICLE: &str = "RULES.md gives no Makruk article for this; MAKRUK 4 (the referee decides any problem during play) applies";

/// An irregularity of a record move, found while matching it to the rules.
#[derive(Clone, Debug)]
struct Flagged {
    kind: &'static str,
    rules: Vec<Article>,
    penalties: Vec<Penalty>,
    note: String,
}

/// Something put right a while after an anomaly.
#[derive(Clone, Debug)]
enum Restore {
    /// The piece goes back onto its cell.
    Back { id: u32, cell: Cell },
    /// The lifted piece is set down on its cell again.
    Return { piece: Piece },
    /// The stray piece is picked up.
    Remove { id: u32 },
}

#[derive(Clone, Debug)]
struct Pending {
    /// Put right after this record move has been played.
    due: usize,
    player: Color,
    /// Cells the disturbance occupies or empties: a move touching one puts it right first.
    cells: Vec<Cell>,
    restore: Restore,
}

/// The physical board as the script builds it, shared by both games.
struct Stage {
    game: Game8,
    physical: Board,
    /// The piece belonging to each occupied cell of the engine's position. Kept in step
    /// with the engine: a knocked or lifted piece keeps its cell here until put back.
    ids: HashMap<Cell, u32>,
    id_gen: Ids,
    steps: Vec<Step>,
    /// Moves played on the board so far, extra and illegal ones included.
    number: usize,
    rng: Rng,
    /// How far pieces land from their cell centres, in cells.
    sloppiness: f64,
    pending: Vec<Pending>,
}

fn centre(cell: Cell) -> [f64; 2] {
    [cell[0] as f64, cell[1] as f64]
}

fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i + 1);
        items.swap(i, j);
    }
}

impl Stage {
    fn new(game: Game8, seed: u64, sloppiness: f64) -> Stage {
        let salt = match game {
            Game8::Makhos => 0x4d4b_4853_0000_0008,
            Game8::Makruk => 0x4d4b_524b_0000_0009,
        };
        Stage {
            game,
            physical: Board::default(),
            ids: HashMap::new(),
            id_gen: Ids::default(),
            steps: Vec::new(),
            number: 0,
            rng: Rng::new(seed ^ salt),
            sloppiness: sloppiness.max(0.0),
            pending: Vec::new(),
        }
    }

    /// Where a piece set down on `cell` lands: off centre by up to the sloppiness.
    fn landing(&mut self, cell: Cell) -> [f64; 2] {
        let r = self.sloppiness * f64::from(self.rng.unit()).powf(0.7);
        let a = f64::from(self.rng.range(0.0, std::f32::consts::TAU));
        [cell[0] as f64 + r * a.cos(), cell[1] as f64 + r * a.sin()]
    }

    /// A new piece on `cell`, belonging to it.
    fn put(&mut self, color: Color, shape: Shape, cell: Cell) -> Touch {
        let id = self.id_gen.fresh();
        let to = self.landing(cell);
        let touch = Touch::Put(Piece {
            id,
            color,
            shape,
            cell: to,
        });
        self.ids.insert(cell, id);
        self.physical.apply(&touch);
        touch
    }

    /// The piece of `from` carried to `to`, changing shape if asked.
    fn carry(&mut self, from: Cell, to: Cell, shape: Option<Shape>) -> Touch {
        let id = self
            .ids
            .remove(&from)
            .expect("a piece on the square it moves from");
        self.ids.insert(to, id);
        let touch = Touch::Shift {
            id,
            to: self.landing(to),
            shape,
        };
        self.physical.apply(&touch);
        touch
    }

    /// The piece of `cell` lifted off the board.
    fn lift(&mut self, cell: Cell) -> Touch {
        let id = self
            .ids
            .remove(&cell)
            .expect("a piece on the square it is lifted from");
        self.take_id(id)
    }

    fn take_id(&mut self, id: u32) -> Touch {
        let touch = Touch::Take(id);
        self.physical.apply(&touch);
        touch
    }

    fn visit(&mut self, player: Color, touches: Vec<Touch>, marks: Vec<Mark>) {
        self.steps.push(Step::Visit {
            player,
            touches,
            marks,
        });
    }

    fn pause(&mut self, low: f32, high: f32) {
        let seconds = f64::from(self.rng.range(low, high));
        self.steps.push(Step::Pause {
            seconds,
            marks: Vec::new(),
        });
    }

    fn think(&mut self) {
        self.pause(0.3, 1.2);
    }

    /// Empty in the engine's position and on the physical board, and a square pieces
    /// stand on.
    fn free(&self, cell: Cell) -> bool {
        self.game.playable(cell)
            && !self.ids.contains_key(&cell)
            && self.physical.at(cell).is_none()
    }

    fn names(&self, cells: &[Cell]) -> Vec<String> {
        cells.iter().map(|&c| self.game.name(c)).collect()
    }

    fn anomaly(&self, kind: &str, move_number: usize, cells: &[Cell], note: String) -> Mark {
        let (rules, penalties) = cite(self.game, kind);
        Mark::Anomaly(Anomaly {
            kind: kind.to_string(),
            move_number,
            rules,
            penalties,
            points: self.names(cells),
            note,
        })
    }

    fn flagged(&self, flag: &Flagged, move_number: usize, cells: &[Cell]) -> Mark {
        Mark::Anomaly(Anomaly {
            kind: flag.kind.to_string(),
            move_number,
            rules: flag.rules.clone(),
            penalties: flag.penalties.clone(),
            points: self.names(cells),
            note: flag.note.clone(),
        })
    }

    /// Puts right the pending disturbances `due` picks, one visit per player.
    fn flush(&mut self, due: impl Fn(&Pending) -> bool) {
        let (now, later): (Vec<Pending>, Vec<Pending>) =
            std::mem::take(&mut self.pending).into_iter().partition(due);
        self.pending = later;
        let mut players: Vec<Color> = Vec::new();
        for p in &now {
            if !players.contains(&p.player) {
                players.push(p.player);
            }
        }
        for player in players {
            let mut touches = Vec::new();
            for p in now.iter().filter(|p| p.player == player) {
                let touch = match p.restore {
                    Restore::Back { id, cell } => Touch::Shift {
                        id,
                        to: self.landing(cell),
                        shape: None,
                    },
                    Restore::Return { piece } => {
                        let cell = [
                            piece.cell[0].round() as usize,
                            piece.cell[1].round() as usize,
                        ];
                        Touch::Put(Piece {
                            cell: self.landing(cell),
                            ..piece
                        })
                    }
                    Restore::Remove { id } => Touch::Take(id),
                };
                self.physical.apply(&touch);
                touches.push(touch);
            }
            self.think();
            self.visit(player, touches, Vec::new());
        }
    }

    /// Puts right what is due after record move `record_number`.
    fn flush_due(&mut self, record_number: usize) {
        self.flush(|p| p.due <= record_number);
    }

    /// Puts right any disturbance on the cells a move is about to touch.
    fn flush_conflicting(&mut self, touched: &HashSet<Cell>) {
        self.flush(|p| p.cells.iter().any(|c| touched.contains(c)));
    }

    /// The moving piece's shape and the pieces on `victims`, before a move that may be
    /// taken back.
    fn snapshot(&self, from: Cell, victims: &[Cell]) -> (Shape, Vec<(Cell, Color, Shape)>) {
        let piece = |cell: &Cell| {
            self.ids
                .get(cell)
                .and_then(|&id| self.physical.find(id))
                .copied()
        };
        let shape = piece(&from).map_or(Shape::Man, |p| p.shape);
        let victims = victims
            .iter()
            .filter_map(|c| piece(c).map(|p| (*c, p.color, p.shape)))
            .collect();
        (shape, victims)
    }

    /// The opponent objects: the piece that moved from `from` to `to` goes back, as it
    /// was, and the pieces it took are set down again.
    fn retract(
        &mut self,
        player: Color,
        from: Cell,
        to: Cell,
        (shape, victims): (Shape, Vec<(Cell, Color, Shape)>),
    ) {
        self.pause(0.8, 1.6);
        let mut touches = vec![self.carry(to, from, Some(shape))];
        for (cell, color, shape) in victims {
            touches.push(self.put(color, shape, cell));
        }
        self.visit(player, touches, Vec::new());
        self.think();
    }

    /// Pieces of the engine's position standing on the board (not lifted), with their
    /// cells, in a fixed order.
    fn standing(&self, color: Option<Color>) -> Vec<(Cell, u32, Piece)> {
        let mut out: Vec<(Cell, u32, Piece)> = self
            .ids
            .iter()
            .filter_map(|(&cell, &id)| self.physical.find(id).map(|p| (cell, id, *p)))
            .filter(|(cell, _, p)| {
                (p.cell[0] - cell[0] as f64).abs() < 0.5 && (p.cell[1] - cell[1] as f64).abs() < 0.5
            })
            .filter(|(_, _, p)| color.is_none_or(|c| p.color == c))
            .collect();
        out.sort_by_key(|&(cell, id, _)| (cell[1], cell[0], id));
        out
    }

    /// Stages an anomaly that only disturbs the board (no move), after record move
    /// `record_number` played by `mover`. `future` holds the cells the next record move
    /// touches: what is disturbed here stays clear of them.
    fn disturb(
        &mut self,
        kind: &str,
        mover: Color,
        record_number: usize,
        future: &HashSet<Cell>,
    ) -> Result<(), String> {
        let at = self.number;
        let game = self.game;
        let makruk_note = |text: &str| match game {
            Game8::Makhos => text.to_string(),
            Game8::Makruk => format!("{text}; {MAKRUK_NO_ARTICLE}"),
        };
        match kind {
            "slide" => {
                let mut options = Vec::new();
                for (cell, id, _) in self.standing(Some(mover)) {
                    if future.contains(&cell) {
                        continue;
                    }
                    for dir in [[1i64, 0i64], [-1, 0], [0, 1], [0, -1]] {
                        let (c, r) = (cell[0] as i64 + dir[0], cell[1] as i64 + dir[1]);
                        if (0..8).contains(&c)
                            && (0..8).contains(&r)
                            && self.physical.at([c as usize, r as usize]).is_none()
                        {
                            options.push((cell, id, dir));
                        }
                    }
                }
                if options.is_empty() {
                    return Err(format!(
                        "slide@{record_number}: no piece of {mover} has room to slide"
                    ));
                }
                let (cell, id, dir) = options[self.rng.below(options.len())];
                let d = f64::from(self.rng.range(0.36, 0.43));
                let to = [
                    cell[0] as f64 + d * dir[0] as f64,
                    cell[1] as f64 + d * dir[1] as f64,
                ];
                let touch = Touch::Shift {
                    id,
                    to,
                    shape: None,
                };
                self.physical.apply(&touch);
                let note = match game {
                    Game8::Makhos => "a piece pushed about 0.4 of a square off centre; it is still on its square and stays there (HOS 3.2 punishes moving a piece off its square: the referee decides)".to_string(),
                    Game8::Makruk => makruk_note(
                        "a piece pushed about 0.4 of a square off centre; it stays there",
                    ),
                };
                let mark = self.anomaly("slide", at, &[cell], note);
                self.pause(0.2, 0.6);
                self.visit(mover, vec![touch], vec![mark]);
            }
            "knock" => {
                let mut options = Vec::new();
                for (cell, id, _) in self.standing(None) {
                    if future.contains(&cell) {
                        continue;
                    }
                    for target in game.neighbours(cell) {
                        if self.free(target) && !future.contains(&target) {
                            options.push((cell, id, target));
                        }
                    }
                }
                if options.is_empty() {
                    return Err(format!(
                        "knock@{record_number}: no piece has an empty neighbouring square to be knocked onto"
                    ));
                }
                let (cell, id, target) = options[self.rng.below(options.len())];
                let to = self.landing(target);
                self.physical.apply(&Touch::Shift {
                    id,
                    to,
                    shape: None,
                });
                let note = match game {
                    Game8::Makhos => "a piece knocked onto a neighbouring square without a hand, put back after the next move (HOS 3.2 punishes moving a piece off its square on purpose: the referee decides)".to_string(),
                    Game8::Makruk => makruk_note(
                        "a piece knocked onto a neighbouring square without a hand, put back after the next move",
                    ),
                };
                let mark = self.anomaly("knock", at, &[cell, target], note);
                self.steps.push(Step::Knock {
                    moves: vec![(id, to)],
                    marks: vec![mark],
                });
                self.pending.push(Pending {
                    due: record_number + 1,
                    player: mover,
                    cells: vec![cell, target],
                    restore: Restore::Back { id, cell },
                });
            }
            "board-knock" => {
                let all = self.standing(None);
                if all.len() < 3 {
                    return Err(format!(
                        "board-knock@{record_number}: fewer than three pieces on the board"
                    ));
                }
                let (middle, _, _) = all[self.rng.below(all.len())];
                let mut near = all.clone();
                near.sort_by_key(|&(c, _, _)| {
                    (c[0] as i64 - middle[0] as i64).pow(2)
                        + (c[1] as i64 - middle[1] as i64).pow(2)
                });
                let count = (3 + self.rng.below(4)).min(near.len());
                let angle = f64::from(self.rng.range(0.0, std::f32::consts::TAU));
                let hit: Vec<(Cell, u32, Piece)> = near[..count].to_vec();
                let mut moves = Vec::new();
                for &(_, id, piece) in &hit {
                    let d = f64::from(self.rng.range(0.3, 0.7));
                    let a = angle + f64::from(self.rng.range(-0.5, 0.5));
                    let to = [
                        (piece.cell[0] + d * a.cos()).clamp(0.0, 7.0),
                        (piece.cell[1] + d * a.sin()).clamp(0.0, 7.0),
                    ];
                    self.physical.apply(&Touch::Shift {
                        id,
                        to,
                        shape: None,
                    });
                    moves.push((id, to));
                }
                let cells: Vec<Cell> = hit.iter().map(|&(c, _, _)| c).collect();
                let note = match game {
                    Game8::Makhos => format!(
                        "{count} pieces knocked off their squares without a hand; the players restore them (HOS 3.2 punishes moving pieces off their squares on purpose: the referee decides)"
                    ),
                    Game8::Makruk => makruk_note(&format!(
                        "{count} pieces knocked off their squares without a hand; the players restore them"
                    )),
                };
                let mark = self.anomaly("board-knock", at, &cells, note);
                self.steps.push(Step::Knock {
                    moves,
                    marks: vec![mark],
                });
                self.think();
                self.think();
                let restore: Vec<Touch> = hit
                    .iter()
                    .map(|&(cell, id, _)| Touch::Shift {
                        id,
                        to: self.landing(cell),
                        shape: None,
                    })
                    .collect();
                for touch in &restore {
                    self.physical.apply(touch);
                }
                self.visit(mover.opponent(), restore, Vec::new());
            }
            "added" => {
                let options: Vec<Cell> = (0..8)
                    .flat_map(|r| (0..8).map(move |c| [c, r]))
                    .filter(|&c| self.free(c) && !future.contains(&c))
                    .collect();
                if options.is_empty() {
                    return Err(format!(
                        "added@{record_number}: no empty square to drop a piece on"
                    ));
                }
                let cell = options[self.rng.below(options.len())];
                let dropper = mover.opponent();
                let id = self.id_gen.fresh();
                let touch = Touch::Put(Piece {
                    id,
                    color: dropper,
                    shape: game.spare(),
                    cell: self.landing(cell),
                });
                self.physical.apply(&touch);
                let note = match game {
                    Game8::Makhos => "a spare piece dropped on the board by accident, picked up after the next move (HOS 3.2 punishes adding a piece on purpose: the referee decides)".to_string(),
                    Game8::Makruk => makruk_note(
                        "a spare piece dropped on the board by accident, picked up after the next move",
                    ),
                };
                let mark = self.anomaly("added", at, &[cell], note);
                self.think();
                self.visit(dropper, vec![touch], vec![mark]);
                self.pending.push(Pending {
                    due: record_number + 1,
                    player: dropper,
                    cells: vec![cell],
                    restore: Restore::Remove { id },
                });
            }
            "removed" => {
                let options: Vec<(Cell, u32, Piece)> = self
                    .standing(Some(mover.opponent()))
                    .into_iter()
                    .filter(|(cell, _, p)| !future.contains(cell) && p.shape != Shape::Khun)
                    .collect();
                if options.is_empty() {
                    return Err(format!(
                        "removed@{record_number}: no piece of {} to lift that the next move leaves alone",
                        mover.opponent()
                    ));
                }
                let (cell, id, piece) = options[self.rng.below(options.len())];
                let touch = self.take_id(id);
                let note = match game {
                    Game8::Makhos => "an opponent piece that was not captured lifted off the board, put back after the next move (HOS 3.2: removing a piece)".to_string(),
                    Game8::Makruk => makruk_note(
                        "an opponent piece that was not captured lifted off the board, put back after the next move",
                    ),
                };
                let mark = self.anomaly("removed", at, &[cell], note);
                self.pause(0.2, 0.6);
                self.visit(mover, vec![touch], vec![mark]);
                self.pending.push(Pending {
                    due: record_number + 1,
                    player: mover,
                    cells: vec![cell],
                    restore: Restore::Return {
                        piece: Piece {
                            cell: centre(cell),
                            ..piece
                        },
                    },
                });
            }
            "camera-bump" | "board-bump" => {
                self.steps.push(Step::Bump {
                    board: kind == "board-bump",
                    accident: false,
                    marks: Vec::new(),
                });
            }
            _ => {}
        }
        Ok(())
    }
}

/// Refuses requests the record cannot have.
fn check_requests(game: Game8, anomalies: &[AnomalyRequest], moves: usize) -> Result<(), String> {
    for a in anomalies {
        if !KINDS.iter().any(|(k, _)| *k == a.kind) {
            return Err(format!(
                "unknown {} anomaly {:?}; known: {}",
                game.label(),
                a.kind,
                KINDS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ));
        }
        if a.kind == "missed-capture" && game == Game8::Makruk {
            return Err(format!(
                "missed-capture@{}: a Mak-hos anomaly; capturing is not compulsory in Makruk",
                a.at
            ));
        }
        if a.at > moves {
            return Err(format!(
                "{}@{}: the record has only {moves} moves",
                a.kind, a.at
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Mak-hos

fn hos_cell(square: HosSquare) -> Cell {
    let (row, col) = square.row_col();
    [col, row]
}

/// Squares strictly between `a` and `b` on their diagonal (none if they share none).
fn hos_between(a: HosSquare, b: HosSquare) -> Vec<HosSquare> {
    let (ra, ca) = a.row_col();
    let (rb, cb) = b.row_col();
    let (dr, dc) = (rb as i64 - ra as i64, cb as i64 - ca as i64);
    if dr == 0 || dr.abs() != dc.abs() {
        return Vec::new();
    }
    (1..dr.abs())
        .filter_map(|k| {
            HosSquare::at(
                (ra as i64 + k * dr.signum()) as usize,
                (ca as i64 + k * dc.signum()) as usize,
            )
        })
        .collect()
}

/// A Mak-hos move as it is played on the board.
#[derive(Clone, Debug)]
struct HosPlay {
    mover: Color,
    from: HosSquare,
    /// The squares the piece stops on, in order; the last is where it ends.
    hops: Vec<HosSquare>,
    /// The captured pieces in the order they are taken.
    captured: Vec<HosSquare>,
    /// A man becomes a king.
    promotes: bool,
    after: HosPosition,
    /// Carried out as written although no rule allows it: the piece goes straight to its
    /// last square.
    physical: bool,
    flags: Vec<Flagged>,
    notation: String,
}

impl HosPlay {
    fn to(&self) -> HosSquare {
        self.hops.last().copied().unwrap_or(self.from)
    }

    /// Every cell the move touches: its squares, the squares it passes over, its captures.
    fn touched(&self) -> HashSet<Cell> {
        let mut cells = HashSet::from([hos_cell(self.from)]);
        let mut previous = self.from;
        for &hop in &self.hops {
            cells.insert(hos_cell(hop));
            cells.extend(hos_between(previous, hop).into_iter().map(hos_cell));
            previous = hop;
        }
        cells.extend(self.captured.iter().map(|&s| hos_cell(s)));
        cells
    }

    /// What must stay the same when the record is replayed from a changed position.
    fn signature(&self) -> (Color, bool, Vec<&'static str>) {
        (
            self.mover,
            self.physical,
            self.flags.iter().map(|f| f.kind).collect(),
        )
    }
}

/// The move of the side to move that `written` names: its first and last squares, and
/// any squares between among its landings in order (PDN may abbreviate a capture). A
/// fully legal move is preferred, then one whose squares are all written. As
/// `makhos::replay` matches moves.
fn hos_matching(position: &HosPosition, written: &WrittenMove) -> Option<(HosMove, MoveClass)> {
    let (&from, rest) = written.squares.split_first()?;
    let (&to, middle) = rest.split_last()?;
    let mut best: Option<(HosMove, MoveClass, (bool, bool))> = None;
    position.for_each_move(|mv, class| {
        if mv.from() != from || mv.to() != to {
            return;
        }
        let landings = mv.landings();
        let mut remaining = landings[..landings.len() - 1].iter();
        if !middle.iter().all(|s| remaining.any(|l| l == s)) {
            return;
        }
        let rank = (class == MoveClass::Legal, landings.len() == rest.len());
        if best.as_ref().is_none_or(|(_, _, r)| rank > *r) {
            best = Some((*mv, class, rank));
        }
    });
    best.map(|(mv, class, _)| (mv, class))
}

fn class_flags(class: MoveClass) -> Vec<Flagged> {
    match class {
        MoveClass::Legal => Vec::new(),
        MoveClass::MissedCapture => vec![Flagged {
            kind: "missed-capture",
            rules: Flag::MissedCapture.rules(),
            penalties: vec![Penalty::Advisory],
            note: format!(
                "the record's move: {}; the opponent may claim the capture before moving (HOS 2.4)",
                Flag::MissedCapture.describe()
            ),
        }],
        MoveClass::IncompleteCapture => vec![Flagged {
            kind: "incomplete-capture",
            rules: Flag::IncompleteCapture.rules(),
            penalties: vec![Penalty::Advisory],
            note: format!(
                "the record's move {}; the opponent may claim it before moving (HOS 2.4)",
                Flag::IncompleteCapture.describe()
            ),
        }],
    }
}

fn double_flag(game: Game8, note: String) -> Flagged {
    let (rules, penalties) = cite(game, "double-move");
    let note = match game {
        Game8::Makhos => note,
        Game8::Makruk => format!("{note}; {MAKRUK_NO_ARTICLE}"),
    };
    Flagged {
        kind: "double-move",
        rules,
        penalties,
        note,
    }
}

/// A legal engine move as played: its hops, and its captures in the order they are made.
fn hos_engine_play(
    before: &HosPosition,
    mv: &HosMove,
    mover: Color,
    flags: Vec<Flagged>,
    notation: String,
) -> HosPlay {
    let after = before.play(mv);
    let taken: Vec<HosSquare> = mv.captured().collect();
    let mut captured = Vec::new();
    let mut previous = mv.from();
    for &landing in mv.landings() {
        for square in hos_between(previous, landing) {
            if taken.contains(&square) && !captured.contains(&square) {
                captured.push(square);
            }
        }
        previous = landing;
    }
    for square in taken {
        if !captured.contains(&square) {
            captured.push(square);
        }
    }
    let promotes = before
        .piece_at(mv.from())
        .is_some_and(|p| p.kind == Kind::Man)
        && after
            .piece_at(mv.to())
            .is_some_and(|p| p.kind == Kind::King);
    HosPlay {
        mover,
        from: mv.from(),
        hops: mv.landings().to_vec(),
        captured,
        promotes,
        after,
        physical: false,
        flags,
        notation,
    }
}

/// How `written` is played from `position`: a move the rules let stand (with its
/// advisory), a move of the side that has just moved (HOS 3.4), or a move no rule allows
/// carried out as written (HOS 3.2). Err when the board cannot carry it out.
fn hos_resolve(position: &HosPosition, written: &WrittenMove) -> Result<HosPlay, String> {
    let notation = written.to_string();
    let turn = position.turn();
    if let Some((mv, class)) = hos_matching(position, written) {
        return Ok(hos_engine_play(
            position,
            &mv,
            turn,
            class_flags(class),
            notation,
        ));
    }
    let mut other = *position;
    other.set_turn(turn.opponent());
    if let Some((mv, class)) = hos_matching(&other, written) {
        let mut flags = vec![double_flag(
            Game8::Makhos,
            format!(
                "the record itself has {} move again before {turn} has moved",
                turn.opponent()
            ),
        )];
        flags.extend(class_flags(class));
        return Ok(hos_engine_play(
            &other,
            &mv,
            turn.opponent(),
            flags,
            notation,
        ));
    }
    // No rule allows it: carried out as written, as `kradan replay` reads it.
    let squares = &written.squares;
    if squares.len() < 2 {
        return Err("a move needs two squares".into());
    }
    let from = squares[0];
    let to = *squares.last().expect("two squares");
    let piece = position.piece_at(from).ok_or_else(|| {
        format!("square {from} is empty: the record moves a piece that is not there")
    })?;
    if to != from && position.piece_at(to).is_some() {
        return Err(format!(
            "square {to} is occupied: the move cannot be made on the board"
        ));
    }
    let mut as_mover = *position;
    as_mover.set_turn(piece.color);
    let mut after = as_mover;
    after.set(from, None);
    let mut captured = Vec::new();
    for pair in squares.windows(2) {
        for square in hos_between(pair[0], pair[1]) {
            if as_mover
                .piece_at(square)
                .is_some_and(|p| p.color == piece.color.opponent())
                && !captured.contains(&square)
            {
                captured.push(square);
                after.set(square, None);
            }
        }
    }
    let far_row = match piece.color {
        Color::White => 0,
        Color::Black => 7,
    };
    let kind = if piece.kind == Kind::King || to.row_col().0 == far_row {
        Kind::King
    } else {
        Kind::Man
    };
    after.set(
        to,
        Some(makhos::Piece {
            color: piece.color,
            kind,
        }),
    );
    after.set_turn(piece.color.opponent());
    let mut flags = Vec::new();
    if piece.color != turn {
        flags.push(double_flag(
            Game8::Makhos,
            format!(
                "the record itself has {} move again before {turn} has moved",
                piece.color
            ),
        ));
    }
    match makhos::judge(&as_mover, &Observation::of(&after)) {
        Verdict::Explained(explanations) => {
            // The board ends as a rule-abiding move leaves it: only the notation is off.
            let played = &explanations[0];
            let mut play = hos_engine_play(&as_mover, &played.mv, piece.color, flags, notation);
            play.flags.extend(
                played
                    .flags
                    .iter()
                    .filter(|f| f.penalty().is_some())
                    .flat_map(|f| match f {
                        Flag::MissedCapture => class_flags(MoveClass::MissedCapture),
                        Flag::IncompleteCapture => class_flags(MoveClass::IncompleteCapture),
                        Flag::Promotion => Vec::new(),
                    }),
            );
            Ok(play)
        }
        Verdict::Irregular(violations) => {
            let violation = violations[0];
            flags.push(Flagged {
                kind: "illegal-move",
                rules: violation.rules(),
                penalties: vec![violation.penalty()],
                note: format!(
                    "the record's move is illegal: {}; played as written",
                    violation.describe()
                ),
            });
            Ok(HosPlay {
                mover: piece.color,
                from,
                hops: vec![to],
                captured,
                promotes: piece.kind == Kind::Man && kind == Kind::King,
                after,
                physical: true,
                flags,
                notation,
            })
        }
    }
}

/// Whether the rest of the record plays from `position` as it did in the record.
fn hos_rest_plays(
    mut position: HosPosition,
    rest: &[WrittenMove],
    expected: &[(Color, bool, Vec<&'static str>)],
) -> bool {
    for (written, want) in rest.iter().zip(expected) {
        match hos_resolve(&position, written) {
            Ok(play) if play.signature() == *want => position = play.after,
            _ => return false,
        }
    }
    true
}

/// Stages a Mak-hos move: the hand carries the piece (through its landings or straight to
/// its last square) and lifts the captured pieces one at a time, between the hops or after
/// them. With `takeback`, the piece first goes down on a wrong square.
fn stage_hos_move(
    stage: &mut Stage,
    play: &HosPlay,
    record_number: Option<usize>,
    takeback: Option<usize>,
) -> Result<(), String> {
    let touched = play.touched();
    stage.flush_conflicting(&touched);
    let mut from = hos_cell(play.from);
    let to = hos_cell(play.to());
    let number = stage.number + 1;
    if let Some(asked) = takeback {
        from = stage_takeback(
            stage,
            play.mover,
            (from, to),
            &touched,
            &[],
            asked,
            |wrong, to| {
                format!(
                    "the piece is set down on {wrong} first, then moved on to {to} (HOS 3.2: a move off the rules)"
                )
            },
        )?;
    }
    stage.number = number;
    let mut marks = vec![Mark::Move {
        number,
        record_number,
        color: play.mover,
        notation: play.notation.clone(),
        captures: play.captured.iter().map(|s| s.to_string()).collect(),
    }];
    for flag in &play.flags {
        marks.push(stage.flagged(flag, number, &[hos_cell(play.from), to]));
    }
    let crown = play.promotes.then_some(Shape::King);
    let hops: Vec<Cell> = play.hops.iter().map(|&s| hos_cell(s)).collect();
    let victims: Vec<Cell> = play.captured.iter().map(|&s| hos_cell(s)).collect();
    let mut touches = Vec::new();
    let style = stage.rng.unit();
    if !play.physical && !victims.is_empty() && hops.len() == victims.len() && style < 0.5 {
        // Each captured piece lifted as soon as it is jumped, as Thai players do.
        for (i, (&hop, &victim)) in hops.iter().zip(&victims).enumerate() {
            let shape = if i + 1 == hops.len() { crown } else { None };
            touches.push(stage.carry(from, hop, shape));
            touches.push(stage.lift(victim));
            from = hop;
        }
    } else {
        if !play.physical && style < 0.8 {
            // Hopping through every landing, then the captured pieces.
            for (i, &hop) in hops.iter().enumerate() {
                let shape = if i + 1 == hops.len() { crown } else { None };
                touches.push(stage.carry(from, hop, shape));
                from = hop;
            }
        } else {
            touches.push(stage.carry(from, to, crown));
        }
        for &victim in &victims {
            touches.push(stage.lift(victim));
        }
    }
    stage.visit(play.mover, touches, marks);
    Ok(())
}

/// A takeback staged before move `stage.number + 1`: the piece goes down on a wrong square
/// near the move (`preferred` first) and is picked up again. Returns that square, where the
/// move then starts; `describe` words the anomaly from the two squares' names.
fn stage_takeback(
    stage: &mut Stage,
    mover: Color,
    (from, to): (Cell, Cell),
    touched: &HashSet<Cell>,
    preferred: &[Cell],
    asked: usize,
    describe: impl Fn(&str, &str) -> String,
) -> Result<Cell, String> {
    let wrong = wrong_square(stage, from, to, touched, preferred).ok_or_else(|| {
        format!("takeback@{asked}: no empty square near the move to set the piece down on first")
    })?;
    let touch = stage.carry(from, wrong, None);
    let mark = stage.anomaly(
        "takeback",
        stage.number + 1,
        &[from, wrong, to],
        describe(&stage.game.name(wrong), &stage.game.name(to)),
    );
    stage.visit(mover, vec![touch], vec![mark]);
    stage.pause(0.3, 0.9);
    Ok(wrong)
}

/// An empty square near a move to set its piece down on by mistake: a neighbour of its
/// destination (or else of its origin) that the move does not touch.
fn wrong_square(
    stage: &mut Stage,
    from: Cell,
    to: Cell,
    touched: &HashSet<Cell>,
    preferred: &[Cell],
) -> Option<Cell> {
    let fits = |stage: &Stage, c: &Cell| stage.free(*c) && !touched.contains(c) && *c != from;
    let mut groups: Vec<Vec<Cell>> = vec![
        preferred
            .iter()
            .copied()
            .filter(|c| fits(stage, c))
            .collect(),
        stage
            .game
            .neighbours(to)
            .into_iter()
            .filter(|c| fits(stage, c))
            .collect(),
        stage
            .game
            .neighbours(from)
            .into_iter()
            .filter(|c| fits(stage, c))
            .collect(),
    ];
    let group = groups.iter_mut().find(|g| !g.is_empty())?;
    Some(group[stage.rng.below(group.len())])
}

/// A quiet move although a capture was compulsory; the opponent claims the capture
/// (HOS 2.4, HOS-SCHOOL 3.5.2), the piece goes back, and the record's capture follows.
fn stage_missed_capture(
    stage: &mut Stage,
    position: &HosPosition,
    play: &HosPlay,
    record_number: usize,
) -> Result<(), String> {
    let color = position.turn();
    if play.mover != color || play.captured.is_empty() || !position.has_capture() {
        return Err(format!(
            "missed-capture@{record_number}: no capture is compulsory at that move (the record plays {}, which captures nothing)",
            play.notation
        ));
    }
    let mut quiet: Vec<HosMove> = Vec::new();
    position.for_each_move(|mv, class| {
        if class == MoveClass::MissedCapture {
            quiet.push(*mv);
        }
    });
    quiet
        .retain(|mv| stage.free(hos_cell(mv.to())) && stage.ids.contains_key(&hos_cell(mv.from())));
    let man = |mv: &HosMove| {
        position
            .piece_at(mv.from())
            .is_some_and(|p| p.kind == Kind::Man)
            && !mv.promotes()
    };
    if quiet.iter().any(man) {
        quiet.retain(man);
    }
    if quiet.is_empty() {
        return Err(format!(
            "missed-capture@{record_number}: {color} has no non-capturing move to make instead of the capture"
        ));
    }
    let mv = quiet[stage.rng.below(quiet.len())];
    let (from, to) = (hos_cell(mv.from()), hos_cell(mv.to()));
    stage.flush_conflicting(&HashSet::from([from, to]));
    stage.number += 1;
    let number = stage.number;
    let touch = stage.carry(from, to, mv.promotes().then_some(Shape::King));
    let marks = vec![
        Mark::Move {
            number,
            record_number: None,
            color,
            notation: WrittenMove::from(&mv).to_string(),
            captures: Vec::new(),
        },
        stage.anomaly(
            "missed-capture",
            number,
            &[from, to],
            format!(
                "{color} moves without capturing although {} was compulsory; the opponent claims the capture before moving (HOS 2.4, HOS-SCHOOL 3.5.2): the piece goes back and the capture is made",
                play.notation
            ),
        ),
    ];
    stage.visit(color, vec![touch], marks);
    stage.pause(0.8, 1.6);
    let back = stage.carry(to, from, mv.promotes().then_some(Shape::Man));
    stage.visit(color, vec![back], Vec::new());
    stage.think();
    Ok(())
}

/// After `color` has played record move `record_number`, the same side plays a legal move
/// again, chosen so that the rest of the record still plays from the new position. When
/// no move does, the opponent objects and the second move is taken back (HOS 3.4 gives a
/// warning). Returns the position the record goes on from.
fn stage_hos_double(
    stage: &mut Stage,
    position: HosPosition,
    color: Color,
    rest: &[WrittenMove],
    expected: &[(Color, bool, Vec<&'static str>)],
    record_number: usize,
) -> Result<HosPosition, String> {
    let mut again = position;
    again.set_turn(color);
    let mut candidates = again.legal_moves();
    if candidates.is_empty() {
        return Err(format!(
            "double-move@{record_number}: {color} has no legal move to play again"
        ));
    }
    shuffle(&mut stage.rng, &mut candidates);
    candidates.sort_by_key(|mv| mv.is_capture());
    let kept = candidates
        .iter()
        .find(|mv| hos_rest_plays(again.play(mv), rest, expected))
        .copied();
    let opponent = color.opponent();
    let (mv, note) = match kept {
        Some(mv) => (
            mv,
            format!("{color} moves again before {opponent} has moved"),
        ),
        None => (
            candidates[0],
            format!(
                "{color} moves again before {opponent} has moved; no second move leaves the rest of the record playable, so {opponent} objects and the move is taken back"
            ),
        ),
    };
    let flag = double_flag(Game8::Makhos, note);
    let play = hos_engine_play(
        &again,
        &mv,
        color,
        vec![flag],
        WrittenMove::from(&mv).to_string(),
    );
    stage.think();
    let snapshot = stage.snapshot(
        hos_cell(play.from),
        &play
            .captured
            .iter()
            .map(|&s| hos_cell(s))
            .collect::<Vec<_>>(),
    );
    stage_hos_move(stage, &play, None, None)?;
    if kept.is_some() {
        return Ok(play.after);
    }
    stage.retract(color, hos_cell(play.from), hos_cell(play.to()), snapshot);
    Ok(position)
}

/// Turns the first game of a PDN record into a script, staging `anomalies` at their
/// moves. White sits at the bottom.
pub fn makhos_script(
    text: &str,
    anomalies: &[AnomalyRequest],
    seed: u64,
    sloppiness: f64,
) -> Result<Script, String> {
    let games = makhos::read_pdn(text).map_err(|e| format!("PDN record: {e}"))?;
    let game = &games[0];
    let moves = &game.moves;
    check_requests(Game8::Makhos, anomalies, moves.len())?;
    // The whole record first: an unplayable move is reported before anything is staged.
    let mut expected = Vec::with_capacity(moves.len());
    let mut position = game.start;
    for (index, written) in moves.iter().enumerate() {
        let play = hos_resolve(&position, written)
            .map_err(|e| format!("move {} ({written}): {e}", index + 1))?;
        expected.push(play.signature());
        position = play.after;
    }

    let mut stage = Stage::new(Game8::Makhos, seed, sloppiness);
    for color in [Color::White, Color::Black] {
        for (square, piece) in game.start.pieces(color) {
            let shape = match piece.kind {
                Kind::Man => Shape::Man,
                Kind::King => Shape::King,
            };
            stage.put(color, shape, hos_cell(square));
        }
    }
    let start = stage.physical.clone();
    let mut position = game.start;
    for (index, written) in moves.iter().enumerate() {
        let record_number = index + 1;
        let here: Vec<&AnomalyRequest> =
            anomalies.iter().filter(|a| a.at == record_number).collect();
        let asked = |kind: &str| here.iter().any(|a| a.kind == kind);
        let play = hos_resolve(&position, written)
            .map_err(|e| format!("move {record_number} ({written}): {e}"))?;
        stage.flush_conflicting(&play.touched());
        stage.think();
        if asked("missed-capture") {
            stage_missed_capture(&mut stage, &position, &play, record_number)?;
        }
        let takeback = asked("takeback").then_some(record_number);
        stage_hos_move(&mut stage, &play, Some(record_number), takeback)?;
        position = play.after;
        stage.flush_due(record_number);
        if asked("double-move") {
            position = stage_hos_double(
                &mut stage,
                position,
                play.mover,
                &moves[record_number..],
                &expected[record_number..],
                record_number,
            )?;
        }
        let future = moves
            .get(record_number)
            .and_then(|next| hos_resolve(&position, next).ok())
            .map(|next| next.touched())
            .unwrap_or_default();
        for a in &here {
            stage.disturb(&a.kind, play.mover, record_number, &future)?;
        }
    }
    stage.flush(|_| true);
    stage.think();
    Ok(Script {
        start,
        steps: stage.steps,
        bottom: Color::White,
        record: text.to_string(),
    })
}

// ---------------------------------------------------------------------------------------
// Makruk

fn ruk_cell(square: RukSquare) -> Cell {
    let (row, col) = square.row_col();
    [col, row]
}

fn ruk_shape(role: Role) -> Shape {
    match role {
        Role::Khun => Shape::Khun,
        Role::Met => Shape::Met,
        Role::Khon => Shape::Khon,
        Role::Ma => Shape::Ma,
        Role::Ruea => Shape::Ruea,
        Role::Bia => Shape::Bia,
    }
}

/// A Makruk move as it is played on the board.
#[derive(Clone, Debug)]
struct RukPlay {
    mover: Color,
    /// The position the move is played from, with the mover to move.
    before: RukPosition,
    mv: RukMove,
    after: RukPosition,
    /// The side that has just moved moves again.
    double: bool,
    notation: String,
}

impl RukPlay {
    /// The cells the move touches: its squares and, for a Ruea, those it passes over.
    fn touched(&self) -> HashSet<Cell> {
        let (from, to) = (self.mv.from, self.mv.to);
        let mut cells = HashSet::from([ruk_cell(from), ruk_cell(to)]);
        if from.file() == to.file() || from.rank() == to.rank() {
            let (df, dr) = (
                (to.file() as i8 - from.file() as i8).signum(),
                (to.rank() as i8 - from.rank() as i8).signum(),
            );
            let (mut f, mut r) = (from.file() as i8 + df, from.rank() as i8 + dr);
            while (f, r) != (to.file() as i8, to.rank() as i8) {
                if let Some(square) = RukSquare::new(f as u8, r as u8) {
                    cells.insert(ruk_cell(square));
                }
                f += df;
                r += dr;
            }
        }
        cells
    }
}

/// How `san` is played from `position`: a legal move of the side to move, or one of the
/// side that has just moved (a double move). Err for anything else.
fn ruk_resolve(position: &RukPosition, san: &str) -> Result<RukPlay, String> {
    match makruk::parse_san(position, san) {
        Ok(mv) => Ok(RukPlay {
            mover: position.turn(),
            before: position.clone(),
            mv,
            after: position.after(&mv),
            double: false,
            notation: san.to_string(),
        }),
        Err(why) => {
            let other = RukPosition::from_board(*position.board(), position.turn().opponent());
            if let Some(other) = other
                && let Ok(mv) = makruk::parse_san(&other, san)
            {
                return Ok(RukPlay {
                    mover: other.turn(),
                    after: other.after(&mv),
                    before: other,
                    mv,
                    double: true,
                    notation: san.to_string(),
                });
            }
            Err(format!("{} to move: {why}", position.turn()))
        }
    }
}

fn ruk_rest_plays(mut position: RukPosition, rest: &[String], expected: &[bool]) -> bool {
    for (san, &double) in rest.iter().zip(expected) {
        match ruk_resolve(&position, san) {
            Ok(play) if play.double == double => position = play.after,
            _ => return false,
        }
    }
    true
}

/// Stages a Makruk move: the hand lifts the captured piece and carries its own there, in
/// either order; a Bia reaching its sixth rank is turned over. With `takeback`, the piece
/// first goes down on a wrong square.
fn stage_ruk_move(
    stage: &mut Stage,
    play: &RukPlay,
    record_number: Option<usize>,
    takeback: Option<usize>,
    double_note: Option<String>,
) -> Result<(), String> {
    let touched = play.touched();
    stage.flush_conflicting(&touched);
    let mut from = ruk_cell(play.mv.from);
    let to = ruk_cell(play.mv.to);
    let number = stage.number + 1;
    if let Some(asked) = takeback {
        // Most often a square the piece could have gone to.
        let others: Vec<Cell> = play
            .before
            .legal_moves_from(play.mv.from)
            .iter()
            .filter(|m| m.to != play.mv.to && m.capture.is_none())
            .map(|m| ruk_cell(m.to))
            .collect();
        from = stage_takeback(
            stage,
            play.mover,
            (from, to),
            &touched,
            &others,
            asked,
            |wrong, to| {
                format!(
                    "the piece is released on {wrong} first, then moved on to {to}; RULES.md gives no Makruk article for this: MAKRUK 6 (a piece released on a square may not be moved elsewhere) applies, with no stated penalty"
                )
            },
        )?;
    }
    stage.number = number;
    let mut marks = vec![Mark::Move {
        number,
        record_number,
        color: play.mover,
        notation: play.notation.clone(),
        captures: play
            .mv
            .capture
            .map(|_| vec![play.mv.to.to_string()])
            .unwrap_or_default(),
    }];
    if play.double {
        let note = double_note.unwrap_or_else(|| {
            format!(
                "the record itself has {} move again before {} has moved",
                play.mover,
                play.mover.opponent()
            )
        });
        let flag = double_flag(Game8::Makruk, note);
        marks.push(stage.flagged(&flag, number, &[ruk_cell(play.mv.from), to]));
    }
    let turned = play.mv.promotion.then_some(Shape::BiaTurned);
    let touches = if play.mv.capture.is_some() {
        let victim = stage
            .ids
            .remove(&to)
            .expect("a captured piece on the destination");
        if stage.rng.chance(0.5) {
            let take = stage.take_id(victim);
            vec![take, stage.carry(from, to, turned)]
        } else {
            let carry = stage.carry(from, to, turned);
            vec![carry, stage.take_id(victim)]
        }
    } else {
        vec![stage.carry(from, to, turned)]
    };
    stage.visit(play.mover, touches, marks);
    Ok(())
}

/// After `color` has played record move `record_number`, the same side plays a legal move
/// again, chosen so that the rest of the record still plays from the new position. When
/// no move does, the opponent objects and the second move is taken back. Returns the
/// position the record goes on from.
fn stage_ruk_double(
    stage: &mut Stage,
    position: &RukPosition,
    color: Color,
    rest: &[String],
    expected: &[bool],
    record_number: usize,
) -> Result<RukPosition, String> {
    let again = RukPosition::from_board(*position.board(), color).ok_or_else(|| {
        format!(
            "double-move@{record_number}: the move gives check, so {color} cannot move again with the opponent's Khun in check"
        )
    })?;
    let mut candidates: Vec<RukMove> = again.legal_moves().to_vec();
    if candidates.is_empty() {
        return Err(format!(
            "double-move@{record_number}: {color} has no legal move to play again"
        ));
    }
    shuffle(&mut stage.rng, &mut candidates);
    candidates.sort_by_key(|mv| mv.capture.is_some());
    let kept = candidates
        .iter()
        .find(|mv| ruk_rest_plays(again.after(mv), rest, expected))
        .copied();
    let opponent = color.opponent();
    let (mv, note) = match kept {
        Some(mv) => (
            mv,
            format!("{color} moves again before {opponent} has moved"),
        ),
        None => (
            candidates[0],
            format!(
                "{color} moves again before {opponent} has moved; no second move leaves the rest of the record playable, so {opponent} objects and the move is taken back"
            ),
        ),
    };
    let play = RukPlay {
        mover: color,
        before: again.clone(),
        mv,
        after: again.after(&mv),
        double: true,
        notation: makruk::to_san(&again, &mv),
    };
    stage.think();
    let (from, to) = (ruk_cell(mv.from), ruk_cell(mv.to));
    let victims: Vec<Cell> = mv.capture.map(|_| vec![to]).unwrap_or_default();
    let snapshot = stage.snapshot(from, &victims);
    stage_ruk_move(stage, &play, None, None, Some(note))?;
    if kept.is_some() {
        return Ok(play.after);
    }
    stage.retract(color, from, to, snapshot);
    Ok(position.clone())
}

/// The shapes of a start position's pieces. A side with more than one Met has turned
/// over Bias among them: the Met nearest its home square stays a Met.
fn ruk_start(position: &RukPosition) -> Vec<(Cell, Color, Shape)> {
    let mut out = Vec::new();
    for color in [Color::White, Color::Black] {
        let home = match color {
            Color::White => RukSquare::parse("e1"),
            Color::Black => RukSquare::parse("d8"),
        }
        .expect("a square");
        let mut mets = Vec::new();
        for (square, piece) in position.board().pieces() {
            if piece.color != color {
                continue;
            }
            if piece.role == Role::Met {
                mets.push(square);
            } else {
                out.push((ruk_cell(square), color, ruk_shape(piece.role)));
            }
        }
        mets.sort_by_key(|s| {
            (s.file() as i32 - home.file() as i32).pow(2)
                + (s.rank() as i32 - home.rank() as i32).pow(2)
        });
        for (i, square) in mets.into_iter().enumerate() {
            let shape = if i == 0 { Shape::Met } else { Shape::BiaTurned };
            out.push((ruk_cell(square), color, shape));
        }
    }
    out
}

/// Turns a PGN record of Makruk into a script, staging `anomalies` at their moves. White
/// sits at the bottom.
pub fn makruk_script(
    text: &str,
    anomalies: &[AnomalyRequest],
    seed: u64,
    sloppiness: f64,
) -> Result<Script, String> {
    let game = makruk::read_pgn(text).map_err(|e| format!("PGN record: {e}"))?;
    let first = game
        .start_position(text)
        .map_err(|e| format!("PGN record: {e}"))?;
    let moves: Vec<String> = game.moves.iter().map(|t| t.text.clone()).collect();
    check_requests(Game8::Makruk, anomalies, moves.len())?;
    let mut expected = Vec::with_capacity(moves.len());
    let mut position = first.clone();
    for (index, san) in moves.iter().enumerate() {
        let play =
            ruk_resolve(&position, san).map_err(|e| format!("move {} ({san}): {e}", index + 1))?;
        expected.push(play.double);
        position = play.after;
    }

    let mut stage = Stage::new(Game8::Makruk, seed, sloppiness);
    for (cell, color, shape) in ruk_start(&first) {
        stage.put(color, shape, cell);
    }
    let start = stage.physical.clone();
    let mut position = first;
    for (index, san) in moves.iter().enumerate() {
        let record_number = index + 1;
        let here: Vec<&AnomalyRequest> =
            anomalies.iter().filter(|a| a.at == record_number).collect();
        let asked = |kind: &str| here.iter().any(|a| a.kind == kind);
        let play = ruk_resolve(&position, san)
            .map_err(|e| format!("move {record_number} ({san}): {e}"))?;
        stage.flush_conflicting(&play.touched());
        stage.think();
        let takeback = asked("takeback").then_some(record_number);
        stage_ruk_move(&mut stage, &play, Some(record_number), takeback, None)?;
        position = play.after.clone();
        stage.flush_due(record_number);
        if asked("double-move") {
            position = stage_ruk_double(
                &mut stage,
                &position,
                play.mover,
                &moves[record_number..],
                &expected[record_number..],
                record_number,
            )?;
        }
        let future = moves
            .get(record_number)
            .and_then(|next| ruk_resolve(&position, next).ok())
            .map(|next| next.touched())
            .unwrap_or_default();
        for a in &here {
            stage.disturb(&a.kind, play.mover, record_number, &future)?;
        }
    }
    stage.flush(|_| true);
    stage.think();
    Ok(Script {
        start,
        steps: stage.steps,
        bottom: Color::White,
        record: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOS_SAMPLE: &str = include_str!("../../samples/makhos/annotated.pdn");
    const HOS_IRREGULAR: &str = include_str!("../../samples/makhos/irregular.pdn");
    const RUK_SAMPLE: &str = include_str!("../../samples/makruk/short_game.pgn");
    /// Both sides turn a Bia over by capturing onto their sixth rank.
    const RUK_PROMOTION: &str = "[Variant \"makruk\"]\n1. b4 g5 2. b5 g4 3. bxa6=M gxh3=M *";

    fn replay_board(script: &Script) -> Board {
        script.final_board()
    }

    /// Rounded cells with colour and shape, sorted.
    fn contents(board: &Board) -> Vec<(i64, i64, Color, Shape)> {
        let mut cells: Vec<(i64, i64, Color, Shape)> = board
            .pieces
            .iter()
            .map(|p| {
                (
                    p.cell[0].round() as i64,
                    p.cell[1].round() as i64,
                    p.color,
                    p.shape,
                )
            })
            .collect();
        cells.sort_by_key(|&(c, r, color, _)| (r, c, color));
        cells
    }

    fn occupied(board: &Board) -> Vec<(i64, i64, Color)> {
        contents(board)
            .into_iter()
            .map(|(c, r, color, _)| (c, r, color))
            .collect()
    }

    /// A move mark: number, record number, colour, notation, captures.
    type Played = (usize, Option<usize>, Color, String, Vec<String>);

    fn moves(script: &Script) -> Vec<Played> {
        script
            .steps
            .iter()
            .flat_map(|s| s.marks())
            .filter_map(|m| match m {
                Mark::Move {
                    number,
                    record_number,
                    color,
                    notation,
                    captures,
                } => Some((
                    *number,
                    *record_number,
                    *color,
                    notation.clone(),
                    captures.clone(),
                )),
                _ => None,
            })
            .collect()
    }

    fn anomalies(script: &Script) -> Vec<Anomaly> {
        script
            .steps
            .iter()
            .flat_map(|s| s.marks())
            .filter_map(|m| match m {
                Mark::Anomaly(a) => Some(a.clone()),
                _ => None,
            })
            .collect()
    }

    /// The engine's final Mak-hos position, each written move matched to a legal move by
    /// its first and last squares.
    fn hos_engine_final(text: &str) -> Vec<(i64, i64, Color, Shape)> {
        let game = &makhos::read_pdn(text).unwrap()[0];
        let mut position = game.start;
        for written in &game.moves {
            let mv = position
                .legal_moves()
                .into_iter()
                .find(|mv| {
                    let w = WrittenMove::from(mv);
                    w.squares.first() == written.squares.first()
                        && w.squares.last() == written.squares.last()
                })
                .unwrap_or_else(|| panic!("{written} is legal"));
            position = position.play(&mv);
        }
        let mut cells: Vec<(i64, i64, Color, Shape)> = [Color::White, Color::Black]
            .into_iter()
            .flat_map(|color| position.pieces(color).collect::<Vec<_>>())
            .map(|(square, piece)| {
                let [c, r] = hos_cell(square);
                let shape = match piece.kind {
                    Kind::Man => Shape::Man,
                    Kind::King => Shape::King,
                };
                (c as i64, r as i64, piece.color, shape)
            })
            .collect();
        cells.sort_by_key(|&(c, r, color, _)| (r, c, color));
        cells
    }

    /// The engine's final Makruk position (a turned-over Bia is a Met to the engine).
    fn ruk_engine_final(text: &str) -> Vec<(i64, i64, Color, Shape)> {
        let game = makruk::read_pgn(text).unwrap();
        let mut position = game.start_position(text).unwrap();
        for token in &game.moves {
            let mv = makruk::parse_san(&position, &token.text).unwrap();
            position.play(&mv);
        }
        let mut cells: Vec<(i64, i64, Color, Shape)> = position
            .board()
            .pieces()
            .map(|(square, piece)| {
                let [c, r] = ruk_cell(square);
                (c as i64, r as i64, piece.color, ruk_shape(piece.role))
            })
            .collect();
        cells.sort_by_key(|&(c, r, color, _)| (r, c, color));
        cells
    }

    fn rows(board: &Board) -> Vec<String> {
        let mut grid = crate::games::Occupancy::empty(8, 8);
        for (c, r, color) in occupied(board) {
            grid.set(r as usize, c as usize, Some(color));
        }
        grid.to_text_rows()
    }

    #[test]
    fn a_makhos_record_replays_to_the_engines_final_position() {
        let script = makhos_script(HOS_SAMPLE, &[], 1, 0.0).unwrap();
        let board = replay_board(&script);
        assert_eq!(contents(&board), hos_engine_final(HOS_SAMPLE));
        let report = makhos::replay(HOS_SAMPLE).unwrap();
        assert_eq!(rows(&board), report.position);
        assert!(
            contents(&board).iter().any(|c| c.3 == Shape::King),
            "the sample crowns kings"
        );
        let m = moves(&script);
        assert_eq!(m.len(), 82);
        assert_eq!(
            m[0],
            (1, Some(1), Color::White, "8-11".to_string(), Vec::new())
        );
        assert_eq!(m[8].3, "15x22");
        assert_eq!(m[8].4, ["18"]);
        assert!(
            m.iter()
                .enumerate()
                .all(|(i, x)| x.0 == i + 1 && x.1 == Some(i + 1))
        );
        assert!(anomalies(&script).is_empty(), "{:?}", anomalies(&script));
        assert_eq!(script.bottom, Color::White);
        // Sloppy placement keeps every piece on its square.
        let sloppy = makhos_script(HOS_SAMPLE, &[], 1, 0.16).unwrap();
        assert_eq!(
            contents(&replay_board(&sloppy)),
            hos_engine_final(HOS_SAMPLE)
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_script() {
        let a = makhos_script(HOS_SAMPLE, &["knock@7".parse().unwrap()], 9, 0.1).unwrap();
        let b = makhos_script(HOS_SAMPLE, &["knock@7".parse().unwrap()], 9, 0.1).unwrap();
        assert_eq!(a.steps, b.steps);
        assert_eq!(a.start, b.start);
        let c = makhos_script(HOS_SAMPLE, &["knock@7".parse().unwrap()], 10, 0.1).unwrap();
        assert_ne!(a.steps, c.steps);
    }

    #[test]
    fn a_multi_capture_lifts_each_captured_piece_in_order() {
        let game = "[FEN \"W:W9:B14,23,30\"]\n1. 9x18x27 *";
        let (mut interleaved, mut after) = (false, false);
        for seed in 0..30 {
            let script = makhos_script(game, &[], seed, 0.0).unwrap();
            let m = moves(&script);
            assert_eq!(m.len(), 1);
            assert_eq!(m[0].4, ["14", "23"]);
            let board = replay_board(&script);
            assert_eq!(board.pieces.len(), 2, "two captured pieces lifted");
            let mover = board.at(hos_cell(HosSquare::new(27).unwrap())).unwrap();
            assert_eq!((mover.color, mover.shape), (Color::White, Shape::Man));
            assert!(board.at(hos_cell(HosSquare::new(30).unwrap())).is_some());
            let touches: Vec<Touch> = script
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::Visit { touches, .. } => Some(touches.clone()),
                    _ => None,
                })
                .flatten()
                .collect();
            let id_at = |n: u32| {
                script
                    .start
                    .at(hos_cell(HosSquare::new(n).unwrap()))
                    .unwrap()
                    .id
            };
            let takes: Vec<u32> = touches
                .iter()
                .filter_map(|t| match t {
                    Touch::Take(id) => Some(*id),
                    _ => None,
                })
                .collect();
            assert_eq!(
                takes,
                [id_at(14), id_at(23)],
                "captured one at a time, in order"
            );
            match touches.get(1) {
                Some(Touch::Take(_)) => interleaved = true,
                _ => after = true,
            }
        }
        assert!(
            interleaved && after,
            "the lifting order varies with the seed"
        );
    }

    #[test]
    fn a_man_reaching_the_far_row_becomes_a_king() {
        let script = makhos_script("[FEN \"W:W25:B5\"]\n1. 25-29 *", &[], 1, 0.0).unwrap();
        let board = replay_board(&script);
        let king = board.at(hos_cell(HosSquare::new(29).unwrap())).unwrap();
        assert_eq!((king.color, king.shape), (Color::White, Shape::King));
        assert_eq!(script.start.pieces.len(), board.pieces.len());
    }

    #[test]
    fn a_makruk_record_replays_to_the_engines_final_position() {
        let script = makruk_script(RUK_SAMPLE, &[], 2, 0.0).unwrap();
        let board = replay_board(&script);
        assert_eq!(contents(&board), ruk_engine_final(RUK_SAMPLE));
        assert_eq!(script.start.pieces.len(), 32);
        let m = moves(&script);
        assert_eq!(m.len(), 12);
        assert_eq!(
            m[0],
            (1, Some(1), Color::White, "c4".to_string(), Vec::new())
        );
        assert_eq!(m[7].3, "fxe4");
        assert_eq!(m[7].4, ["e4"]);
        assert!(anomalies(&script).is_empty());
        let sloppy = makruk_script(RUK_SAMPLE, &[], 2, 0.16).unwrap();
        assert_eq!(
            contents(&replay_board(&sloppy)),
            ruk_engine_final(RUK_SAMPLE)
        );
    }

    #[test]
    fn a_bia_reaching_its_sixth_rank_is_turned_over() {
        let script = makruk_script(RUK_PROMOTION, &[], 3, 0.0).unwrap();
        let board = replay_board(&script);
        let a6 = board.at(ruk_cell(RukSquare::parse("a6").unwrap())).unwrap();
        assert_eq!((a6.color, a6.shape), (Color::White, Shape::BiaTurned));
        let h3 = board.at(ruk_cell(RukSquare::parse("h3").unwrap())).unwrap();
        assert_eq!((h3.color, h3.shape), (Color::Black, Shape::BiaTurned));
        let engine: Vec<_> = ruk_engine_final(RUK_PROMOTION);
        let seen: Vec<_> = contents(&board)
            .into_iter()
            .map(|(c, r, color, shape)| {
                let shape = if shape == Shape::BiaTurned {
                    Shape::Met
                } else {
                    shape
                };
                (c, r, color, shape)
            })
            .collect();
        assert_eq!(seen, engine);
        // A start position with a second Met shows it turned over.
        let fen = "[FEN \"k7/8/1K1M4/8/8/8/8/4M3 w - - 0 1\"]\n1. Mc7 *";
        let script = makruk_script(fen, &[], 1, 0.0).unwrap();
        let shapes: Vec<Shape> = script.start.pieces.iter().map(|p| p.shape).collect();
        assert!(shapes.contains(&Shape::BiaTurned) && shapes.contains(&Shape::Met));
    }

    fn staged(
        make: fn(&str, &[AnomalyRequest], u64, f64) -> Result<Script, String>,
        text: &str,
        request: &str,
        seed: u64,
    ) -> Script {
        make(text, &[request.parse().unwrap()], seed, 0.0)
            .unwrap_or_else(|e| panic!("{request}: {e}"))
    }

    #[test]
    fn every_makhos_kind_is_staged_and_the_board_ends_as_the_record() {
        let clean = occupied(&replay_board(
            &makhos_script(HOS_SAMPLE, &[], 4, 0.0).unwrap(),
        ));
        for (kind, _) in KINDS {
            let at = if *kind == "missed-capture" { 9 } else { 12 };
            for seed in [4, 5, 6] {
                let request = format!("{kind}@{at}");
                let script = staged(makhos_script, HOS_SAMPLE, &request, seed);
                let flagged = anomalies(&script);
                let m = moves(&script);
                match *kind {
                    "camera-bump" | "board-bump" => {
                        assert!(flagged.is_empty());
                        assert!(script.steps.iter().any(|s| matches!(
                            s,
                            Step::Bump { board, accident: false, .. } if *board == (*kind == "board-bump")
                        )));
                    }
                    "double-move" => {
                        assert_eq!(m.len(), 83);
                        assert_eq!(m[11].2, m[12].2, "the same side moves twice");
                        assert_eq!(m[12].1, None);
                        assert_eq!(flagged.len(), 1);
                        assert_eq!(flagged[0].move_number, 13);
                        assert_eq!(flagged[0].rules[0].to_string(), "HOS 3.4");
                        assert_eq!(flagged[0].penalties, [Penalty::Warning]);
                        assert!(m[13..].iter().all(|x| x.1 == Some(x.0 - 1)));
                        // No second move keeps this long record playable: it is taken back.
                        assert!(
                            flagged[0].note.contains("taken back"),
                            "{}",
                            flagged[0].note
                        );
                    }
                    "missed-capture" => {
                        assert_eq!(m.len(), 83);
                        assert_eq!((m[8].1, m[8].4.is_empty()), (None, true));
                        assert_eq!((m[9].1, m[9].3.as_str()), (Some(9), "15x22"));
                        assert_eq!(flagged.len(), 1);
                        assert_eq!(flagged[0].kind, "missed-capture");
                        let cited: Vec<String> =
                            flagged[0].rules.iter().map(|r| r.to_string()).collect();
                        assert_eq!(cited, ["HOS 2.4", "HOS-SCHOOL 3.5.2"]);
                        assert_eq!(flagged[0].penalties, [Penalty::Advisory]);
                    }
                    _ => {
                        assert_eq!(m.len(), 82, "{kind}");
                        assert_eq!(flagged.len(), 1, "{kind}");
                        assert_eq!(flagged[0].kind, *kind);
                        assert_eq!(flagged[0].rules[0].to_string(), "HOS 3.2", "{kind}");
                        let penalty = if *kind == "slide" {
                            Penalty::Advisory
                        } else {
                            Penalty::Loss
                        };
                        assert_eq!(flagged[0].penalties, [penalty], "{kind}");
                        assert!(!flagged[0].points.is_empty());
                    }
                }
                assert_eq!(
                    occupied(&replay_board(&script)),
                    clean,
                    "{request} seed {seed}"
                );
            }
        }
    }

    #[test]
    fn every_makruk_kind_is_staged_and_the_board_ends_as_the_record() {
        let clean = occupied(&replay_board(
            &makruk_script(RUK_SAMPLE, &[], 4, 0.0).unwrap(),
        ));
        for (kind, _) in KINDS.iter().filter(|(k, _)| *k != "missed-capture") {
            for (at, seed) in [(4, 4), (7, 5), (9, 6), (12, 7)] {
                let request = format!("{kind}@{at}");
                let script = staged(makruk_script, RUK_SAMPLE, &request, seed);
                let flagged = anomalies(&script);
                let m = moves(&script);
                match *kind {
                    "camera-bump" | "board-bump" => assert!(flagged.is_empty()),
                    "double-move" => {
                        assert_eq!(m.len(), 13);
                        assert_eq!(m[at - 1].2, m[at].2);
                        assert_eq!(flagged[0].move_number, at + 1);
                        assert_eq!(flagged[0].rules[0].to_string(), "MAKRUK 4");
                        // A second move that keeps the record playable exists: it stays.
                        assert!(!flagged[0].note.contains("taken back"));
                        continue;
                    }
                    _ => {
                        assert_eq!(m.len(), 12);
                        assert_eq!(flagged.len(), 1, "{kind}");
                        assert_eq!(flagged[0].penalties, [Penalty::Advisory]);
                        let article = if *kind == "takeback" {
                            "MAKRUK 6"
                        } else {
                            "MAKRUK 4"
                        };
                        assert_eq!(flagged[0].rules[0].to_string(), article);
                        assert!(flagged[0].note.contains("RULES.md gives no Makruk article"));
                    }
                }
                assert_eq!(occupied(&replay_board(&script)), clean, "{request}");
            }
        }
    }

    #[test]
    fn a_makhos_double_move_stays_when_the_record_allows_it() {
        let script = staged(makhos_script, HOS_SAMPLE, "double-move@82", 2);
        let m = moves(&script);
        assert_eq!(m.len(), 83);
        assert_eq!(
            (m[81].2, m[82].2, m[82].1),
            (Color::Black, Color::Black, None)
        );
        let flagged = anomalies(&script);
        assert!(
            !flagged[0].note.contains("taken back"),
            "{}",
            flagged[0].note
        );
        let board = replay_board(&script);
        assert_ne!(
            occupied(&board),
            occupied(&replay_board(
                &makhos_script(HOS_SAMPLE, &[], 2, 0.0).unwrap()
            ))
        );
    }

    #[test]
    fn a_takeback_sets_the_piece_down_elsewhere_first() {
        let script = staged(makruk_script, RUK_SAMPLE, "takeback@1", 1);
        let visits: Vec<&Step> = script
            .steps
            .iter()
            .filter(|s| matches!(s, Step::Visit { .. }))
            .collect();
        let Step::Visit { touches, marks, .. } = visits[0] else {
            unreachable!()
        };
        let Touch::Shift { to, .. } = touches[0] else {
            panic!("{touches:?}")
        };
        let c4 = ruk_cell(RukSquare::parse("c4").unwrap());
        assert_ne!([to[0].round() as usize, to[1].round() as usize], c4);
        assert!(matches!(&marks[0], Mark::Anomaly(a) if a.kind == "takeback"));
        let Step::Visit { marks, .. } = visits[1] else {
            unreachable!()
        };
        assert!(matches!(&marks[0], Mark::Move { number: 1, .. }));
    }

    #[test]
    fn a_record_with_irregular_moves_is_staged_with_its_marks() {
        let script = makhos_script(HOS_IRREGULAR, &[], 1, 0.0).unwrap();
        let flagged = anomalies(&script);
        let kinds: Vec<&str> = flagged.iter().map(|a| a.kind.as_str()).collect();
        assert!(kinds.contains(&"missed-capture"), "{kinds:?}");
        assert!(kinds.contains(&"illegal-move"), "{kinds:?}");
        assert!(kinds.contains(&"double-move"), "{kinds:?}");
        let double = flagged.iter().find(|a| a.kind == "double-move").unwrap();
        assert_eq!(double.rules[0].to_string(), "HOS 3.4");
        let illegal = flagged.iter().find(|a| a.kind == "illegal-move").unwrap();
        assert_eq!(illegal.rules[0].to_string(), "HOS 3.2");
        assert_eq!(illegal.penalties, [Penalty::Loss]);
        let report = makhos::replay(HOS_IRREGULAR).unwrap();
        assert_eq!(rows(&replay_board(&script)), report.position);
        // A Makruk record where one side moves twice.
        let script = makruk_script("1. e4 c4 2. f5 *", &[], 1, 0.0).unwrap();
        let flagged = anomalies(&script);
        assert_eq!(flagged.len(), 1);
        assert_eq!(
            (flagged[0].kind.as_str(), flagged[0].move_number),
            ("double-move", 2)
        );
    }

    #[test]
    fn impossible_requests_say_why() {
        let err =
            makhos_script(HOS_SAMPLE, &["missed-capture@1".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("no capture is compulsory"), "{err}");
        let err =
            makruk_script(RUK_SAMPLE, &["missed-capture@3".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("not compulsory in Makruk"), "{err}");
        let err = makhos_script(HOS_SAMPLE, &["wobble@2".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("unknown Mak-hos anomaly"), "{err}");
        let err = makruk_script(RUK_SAMPLE, &["slide@13".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("only 12 moves"), "{err}");
        let err = makhos_script(
            "[FEN \"W:W21:B29,30\"]\n1. 21-25 *",
            &["double-move@1".parse().unwrap()],
            1,
            0.0,
        )
        .unwrap_err();
        assert!(err.contains("no legal move to play again"), "{err}");
        let err = makruk_script(
            "[FEN \"k7/8/1K6/8/8/8/8/7R w - - 0 1\"]\n1. Rh8# *",
            &["double-move@1".parse().unwrap()],
            1,
            0.0,
        )
        .unwrap_err();
        assert!(err.contains("gives check"), "{err}");
        let err = makruk_script("1. e4 e3 *", &[], 1, 0.0).unwrap_err();
        assert!(err.starts_with("move 2 (e3)"), "{err}");
        let err = makhos_script("1. 8-11 8-12 *", &[], 1, 0.0).unwrap_err();
        assert!(err.starts_with("move 2 (8-12)"), "{err}");
    }

    /// Every touch acts on a piece that is on the board (or puts one down that is not),
    /// and after every visit no two pieces share a cell.
    fn check_physics(script: &Script, what: &str) {
        let mut board = script.start.clone();
        for (i, step) in script.steps.iter().enumerate() {
            match step {
                Step::Visit { touches, .. } => {
                    for t in touches {
                        match *t {
                            Touch::Put(p) => assert!(
                                board.find(p.id).is_none(),
                                "{what}: step {i} puts {} twice",
                                p.id
                            ),
                            Touch::Take(id) | Touch::Shift { id, .. } => {
                                assert!(
                                    board.find(id).is_some(),
                                    "{what}: step {i} touches missing {id}"
                                )
                            }
                        }
                        board.apply(t);
                    }
                    for (a, p) in board.pieces.iter().enumerate() {
                        for q in &board.pieces[a + 1..] {
                            let d = (p.cell[0] - q.cell[0]).hypot(p.cell[1] - q.cell[1]);
                            assert!(
                                d > 0.5,
                                "{what}: after step {i} pieces {} and {} overlap",
                                p.id,
                                q.id
                            );
                        }
                    }
                }
                Step::Knock { moves, .. } => {
                    for &(id, to) in moves {
                        assert!(board.find(id).is_some(), "{what}: knock of missing {id}");
                        board.apply(&Touch::Shift {
                            id,
                            to,
                            shape: None,
                        });
                    }
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_kind_at_every_move_stages_soundly_or_says_why() {
        let hos_clean = occupied(&replay_board(
            &makhos_script(HOS_SAMPLE, &[], 1, 0.0).unwrap(),
        ));
        let ruk_clean = occupied(&replay_board(
            &makruk_script(RUK_SAMPLE, &[], 1, 0.0).unwrap(),
        ));
        let mut staged = 0;
        for (kind, _) in KINDS {
            for seed in [1, 2] {
                for at in 1..=82 {
                    let request = format!("{kind}@{at}");
                    match makhos_script(HOS_SAMPLE, &[request.parse().unwrap()], seed, 0.05) {
                        Ok(script) => {
                            staged += 1;
                            check_physics(&script, &request);
                            let kept_double = *kind == "double-move"
                                && !anomalies(&script)[0].note.contains("taken back");
                            if !kept_double {
                                assert_eq!(
                                    occupied(&replay_board(&script)),
                                    hos_clean,
                                    "{request}"
                                );
                            }
                        }
                        Err(e) => assert!(e.starts_with(&request), "{request}: {e}"),
                    }
                }
                for at in 1..=12 {
                    let request = format!("{kind}@{at}");
                    match makruk_script(RUK_SAMPLE, &[request.parse().unwrap()], seed, 0.05) {
                        Ok(script) => {
                            staged += 1;
                            check_physics(&script, &request);
                            if *kind != "double-move" {
                                assert_eq!(
                                    occupied(&replay_board(&script)),
                                    ruk_clean,
                                    "{request}"
                                );
                            }
                        }
                        Err(e) => assert!(e.starts_with(&request), "{request}: {e}"),
                    }
                }
            }
        }
        assert!(staged > 1500, "{staged}");
        let irregular = makhos_script(HOS_IRREGULAR, &[], 1, 0.1).unwrap();
        check_physics(&irregular, "irregular");
    }
}
