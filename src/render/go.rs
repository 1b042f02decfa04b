//! A Go record (SGF) as a script: each move a hand placing a stone, captured stones lifted
//! one by one, and the anomalies `--anomaly` asks for staged on the board.

use super::scene::Shape;
use super::script::{
    Anomaly, AnomalyRequest, Board, Ids, Mark, Piece, Script, Step, Touch, neighbours,
};
use crate::games::go::Position;
use crate::games::go::sgf::{self, GoRecord};
use crate::games::go::{DOUBLE_MOVE, Illegal, Move, Point};
use crate::games::{Article, Color, Penalty, Source};
use crate::reading::synth::Rng;
use std::collections::{HashMap, HashSet};

/// The anomalies a Go clip can stage, with what each does on the board.
pub const KINDS: &[(&str, &str)] = &[
    (
        "double-move",
        "after the move, the same player puts down a second stone",
    ),
    (
        "takeback",
        "the stone goes down on a wrong point first, then is lifted and moved",
    ),
    (
        "slide",
        "after the move, a stone is pushed about half a point off its point",
    ),
    (
        "knock",
        "after the move, a stone is knocked onto a neighbouring point, put back later",
    ),
    (
        "captures-left",
        "the move's captured stones stay on the board for two more moves",
    ),
    (
        "removed-alive",
        "after the move, an opponent stone with liberties is lifted, then put back",
    ),
    (
        "ko-retake",
        "before the move, the player retakes the ko at once; the stone is taken back",
    ),
    (
        "suicide",
        "before the move, the player puts a stone on a point with no liberties; taken back",
    ),
    (
        "board-knock",
        "after the move, several stones are knocked off their points, then restored",
    ),
    (
        "added",
        "after the move, a stone is dropped on the board by accident and picked up again",
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

fn article(source: Source, number: &'static str) -> Article {
    Article::new(source, number)
}

fn cite(kind: &str) -> (Vec<Article>, Vec<Penalty>) {
    use Source::{Tga, Tml};
    match kind {
        "double-move" => (DOUBLE_MOVE.0.to_vec(), DOUBLE_MOVE.1.to_vec()),
        "takeback" => (
            vec![article(Tga, "21"), article(Tml, "24")],
            vec![Penalty::Warning],
        ),
        "slide" | "knock" => (
            vec![article(Tga, "25"), article(Tml, "28")],
            vec![Penalty::Advisory],
        ),
        "captures-left" | "removed-alive" => (
            vec![article(Tga, "27"), article(Tml, "30")],
            vec![Penalty::Warning],
        ),
        "ko-retake" => (
            Illegal::Ko.articles().to_vec(),
            Illegal::Ko.penalties().to_vec(),
        ),
        "suicide" => (
            Illegal::Suicide.articles().to_vec(),
            Illegal::Suicide.penalties().to_vec(),
        ),
        "board-knock" => (
            vec![article(Tga, "26"), article(Tml, "29")],
            vec![Penalty::Advisory],
        ),
        "added" => (
            vec![article(Tga, "22"), article(Tml, "25")],
            vec![Penalty::Advisory],
        ),
        _ => (Vec::new(), Vec::new()),
    }
}

struct Builder {
    size: usize,
    position: Position,
    physical: Board,
    /// Physical stones by the point they belong to.
    ids: HashMap<Point, u32>,
    id_gen: Ids,
    steps: Vec<Step>,
    /// Moves played on the board so far (every stone put down as a move).
    number: usize,
    rng: Rng,
    /// How far stones land from their points, in spacings.
    sloppiness: f64,
    /// Points the rest of the record plays on: staged stones keep away from them.
    future: Vec<Point>,
    /// Stones captured but left on the board, to be lifted after this record move.
    leftovers: Vec<(usize, Color, Vec<Point>)>,
    last_color: Option<Color>,
}

fn cell(point: Point) -> [usize; 2] {
    [usize::from(point.col), usize::from(point.row)]
}

fn point_of(cell: [usize; 2]) -> Point {
    Point::new(cell[1] as u8, cell[0] as u8)
}

impl Builder {
    fn stone(&mut self, color: Color, point: Point) -> Touch {
        let id = self.id_gen.fresh();
        let r = self.sloppiness * f64::from(self.rng.unit()).powf(0.7);
        let a = f64::from(self.rng.range(0.0, std::f32::consts::TAU));
        self.ids.insert(point, id);
        let touch = Touch::Put(Piece {
            id,
            color,
            shape: Shape::Stone,
            cell: [
                f64::from(point.col) + r * a.cos(),
                f64::from(point.row) + r * a.sin(),
            ],
        });
        self.physical.apply(&touch);
        touch
    }

    fn lift(&mut self, point: Point) -> Option<Touch> {
        let id = self.ids.remove(&point)?;
        let touch = Touch::Take(id);
        self.physical.apply(&touch);
        Some(touch)
    }

    fn shift(&mut self, point: Point, to: [f64; 2]) -> Option<Touch> {
        let id = *self.ids.get(&point)?;
        let touch = Touch::Shift {
            id,
            to,
            shape: None,
        };
        self.physical.apply(&touch);
        Some(touch)
    }

    fn visit(&mut self, player: Color, touches: Vec<Touch>, marks: Vec<Mark>) {
        self.steps.push(Step::Visit {
            player,
            touches,
            marks,
        });
    }

    fn think(&mut self) {
        let seconds = f64::from(self.rng.range(0.3, 1.2));
        self.steps.push(Step::Pause {
            seconds,
            marks: Vec::new(),
        });
    }

    fn anomaly(&self, kind: &str, move_number: usize, points: &[Point], note: String) -> Mark {
        let (rules, penalties) = cite(kind);
        Mark::Anomaly(Anomaly {
            kind: kind.to_string(),
            move_number,
            rules,
            penalties,
            points: points.iter().map(|p| p.to_sgf()).collect(),
            note,
        })
    }

    fn free(&self, point: Point) -> bool {
        self.position.board().get(point).is_none() && self.physical.at(cell(point)).is_none()
    }

    /// An empty point with empty neighbours, away from every point the rest of the record
    /// plays: a stone there changes nothing the record does.
    fn quiet_point(&mut self, near: Option<Point>) -> Option<Point> {
        let n = self.size;
        let future: HashSet<[usize; 2]> = self
            .future
            .iter()
            .flat_map(|&p| std::iter::once(cell(p)).chain(neighbours(cell(p), n)))
            .collect();
        let mut candidates: Vec<Point> = (0..n)
            .flat_map(|r| (0..n).map(move |c| [c, r]))
            .filter(|&c| !future.contains(&c) && near.is_none_or(|p| c != cell(p)))
            .filter(|&c| self.free(point_of(c)) && neighbours(c, n).all(|m| self.free(point_of(m))))
            .map(point_of)
            .collect();
        if let Some(near) = near {
            candidates.sort_by_key(|p| {
                (i32::from(p.row) - i32::from(near.row)).abs()
                    + (i32::from(p.col) - i32::from(near.col)).abs()
            });
            candidates.truncate(6);
        }
        if candidates.is_empty() {
            return None;
        }
        let i = self.rng.below(candidates.len());
        Some(candidates[i])
    }

    fn stones(&self, color: Color) -> Vec<Point> {
        let mut points: Vec<Point> = self
            .ids
            .keys()
            .copied()
            .filter(|&p| self.position.board().get(p) == Some(color))
            .collect();
        points.sort();
        points
    }

    /// Plays a record move: the hand puts the stone down and, most of the time, lifts the
    /// captured stones in the same visit; otherwise it leaves and comes back for them.
    fn play(
        &mut self,
        color: Color,
        point: Point,
        record_number: Option<usize>,
        leave: bool,
        moved_from: Option<Point>,
    ) -> Result<(), String> {
        let played = self.position.play(color, Move::Play(point)).map_err(|e| {
            format!(
                "move {} ({color} {}) is illegal: {e}",
                self.number + 1,
                point.to_sgf()
            )
        })?;
        self.number += 1;
        let mut marks = Vec::new();
        if self.last_color == Some(color) && record_number.is_some() {
            marks.push(self.anomaly(
                "double-move",
                self.number,
                &[point],
                format!("the record itself has {color} play twice in a row"),
            ));
        }
        self.last_color = Some(color);
        marks.insert(
            0,
            Mark::Move {
                number: self.number,
                record_number,
                color,
                notation: point.to_sgf(),
                captures: played.captured.iter().map(|p| p.to_sgf()).collect(),
            },
        );
        let first = match moved_from {
            // The stone put down on the wrong point is picked up again and moved here.
            Some(wrong) => {
                marks.push(self.anomaly(
                    "takeback",
                    self.number,
                    &[wrong, point],
                    format!(
                        "the stone was put on {} and left there, then moved to {}",
                        wrong.to_sgf(),
                        point.to_sgf()
                    ),
                ));
                let id = self.ids.remove(&wrong).expect("the wrong stone is down");
                self.ids.insert(point, id);
                let touch = Touch::Shift {
                    id,
                    to: [f64::from(point.col), f64::from(point.row)],
                    shape: None,
                };
                self.physical.apply(&touch);
                touch
            }
            None => self.stone(color, point),
        };
        let mut touches = vec![first];
        if leave && !played.captured.is_empty() {
            self.leftovers.push((
                record_number.unwrap_or(0) + 2,
                color,
                played.captured.clone(),
            ));
            marks.push(self.anomaly(
                "captures-left",
                self.number,
                &played.captured,
                "the captured stones are left on the board for two moves".into(),
            ));
            self.visit(color, touches, marks);
            return Ok(());
        }
        let separate = self.rng.chance(0.25);
        let mut removals: Vec<Touch> = played
            .captured
            .iter()
            .filter_map(|&p| self.lift(p))
            .collect();
        if separate && !removals.is_empty() {
            self.visit(color, touches, marks);
            self.steps.push(Step::Pause {
                seconds: f64::from(self.rng.range(0.2, 0.6)),
                marks: Vec::new(),
            });
            let number = self.number;
            self.visit(color, removals, vec![Mark::Completes { number }]);
        } else {
            touches.append(&mut removals);
            self.visit(color, touches, marks);
        }
        Ok(())
    }

    /// Lifts captured stones that were left on the board, once their time has come or
    /// when a move is about to be played on one of them.
    fn clear_leftovers(&mut self, record_number: usize, next: Option<Point>) {
        let due: Vec<(usize, Color, Vec<Point>)> = self
            .leftovers
            .iter()
            .filter(|(at, _, points)| {
                *at <= record_number || next.is_some_and(|n| points.contains(&n))
            })
            .cloned()
            .collect();
        self.leftovers.retain(|(at, _, points)| {
            !(*at <= record_number || next.is_some_and(|n| points.contains(&n)))
        });
        for (_, color, points) in due {
            let touches: Vec<Touch> = points.iter().filter_map(|&p| self.lift(p)).collect();
            if !touches.is_empty() {
                self.visit(color, touches, Vec::new());
                self.think();
            }
        }
    }

    fn before(&mut self, kind: &str, color: Color, record_number: usize) -> Result<(), String> {
        match kind {
            "ko-retake" => {
                let ko = self.position.ko_point(color).ok_or_else(|| {
                    format!(
                        "ko-retake@{record_number}: {color} has no ko to retake before that move"
                    )
                })?;
                // Played as the player did it: the ko stone is captured on the board.
                let mut board = self.position.clone();
                let captured: Vec<Point> = {
                    let mut b = board.board().clone();
                    b.set(ko, Some(color));
                    b.neighbors(ko)
                        .filter(|&n| {
                            b.get(n) == Some(color.opponent()) && b.chain(n).liberties == 0
                        })
                        .collect()
                };
                let _ = &mut board;
                self.number += 1;
                let mut touches = vec![self.stone(color, ko)];
                touches.extend(captured.iter().filter_map(|&p| self.lift(p)));
                let marks = vec![
                    Mark::Move {
                        number: self.number,
                        record_number: None,
                        color,
                        notation: ko.to_sgf(),
                        captures: captured.iter().map(|p| p.to_sgf()).collect(),
                    },
                    self.anomaly("ko-retake", self.number, &[ko], "retakes the ko at once; the stone is then taken back and the captured stone returned".into()),
                ];
                self.visit(color, touches, marks);
                self.think();
                // The referee's correction: the stone back out, the ko stone back in.
                let mut undo = vec![self.lift(ko).expect("just placed")];
                for &p in &captured {
                    undo.push(self.stone(color.opponent(), p));
                }
                self.visit(color, undo, Vec::new());
                self.think();
                Ok(())
            }
            "suicide" => {
                let n = self.size;
                let point = (0..n)
                    .flat_map(|r| (0..n).map(move |c| Point::new(r as u8, c as u8)))
                    .find(|&p| {
                        self.position.judge(color, Move::Play(p)) == Err(Illegal::Suicide)
                            && self.physical.at(cell(p)).is_none()
                    })
                    .ok_or_else(|| {
                        format!(
                            "suicide@{record_number}: {color} has no suicide point before that move"
                        )
                    })?;
                self.number += 1;
                let touches = vec![self.stone(color, point)];
                let marks = vec![
                    Mark::Move {
                        number: self.number,
                        record_number: None,
                        color,
                        notation: point.to_sgf(),
                        captures: Vec::new(),
                    },
                    self.anomaly(
                        "suicide",
                        self.number,
                        &[point],
                        "plays where the stone has no liberties; it is then taken back".into(),
                    ),
                ];
                self.visit(color, touches, marks);
                self.think();
                let undo = vec![self.lift(point).expect("just placed")];
                self.visit(color, undo, Vec::new());
                self.think();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn after(
        &mut self,
        kind: &str,
        color: Color,
        point: Point,
        record_number: usize,
    ) -> Result<(), String> {
        let at = self.number;
        match kind {
            "double-move" => {
                let extra = self.quiet_point(None).ok_or_else(|| {
                    format!("double-move@{record_number}: no quiet point left for a second stone")
                })?;
                self.position
                    .play(color, Move::Play(extra))
                    .map_err(|e| format!("double-move@{record_number}: {e}"))?;
                self.number += 1;
                let touches = vec![self.stone(color, extra)];
                let marks = vec![
                    Mark::Move {
                        number: self.number,
                        record_number: None,
                        color,
                        notation: extra.to_sgf(),
                        captures: Vec::new(),
                    },
                    self.anomaly(
                        "double-move",
                        self.number,
                        &[extra],
                        format!("{color} plays again without a pass between"),
                    ),
                ];
                self.think();
                self.visit(color, touches, marks);
            }
            "slide" => {
                let stone = self.stones(color).into_iter().last().unwrap_or(point);
                let id = self.ids[&stone];
                let here = self.physical.find(id).map(|p| p.cell).unwrap_or([0.0; 2]);
                let dir = self.open_direction(stone);
                let to = [
                    f64::from(stone.col) + 0.45 * dir[0],
                    f64::from(stone.row) + 0.45 * dir[1],
                ];
                let _ = here;
                let touches = vec![self.shift(stone, to).expect("a stone on the board")];
                let mark = self.anomaly(
                    "slide",
                    at,
                    &[stone],
                    "a stone pushed about half a point off its point; it stays there".into(),
                );
                self.think();
                self.visit(color.opponent(), touches, vec![mark]);
            }
            "knock" => {
                let n = self.size;
                let stones = self.stones(color.opponent());
                let choice = stones.iter().copied().find_map(|s| {
                    neighbours(cell(s), n)
                        .find(|&c| {
                            self.free(point_of(c))
                                && !self.future.iter().take(2).any(|&f| cell(f) == c)
                        })
                        .map(|c| (s, c))
                });
                let (stone, target) = choice.ok_or_else(|| {
                    format!("knock@{record_number}: no stone with an empty neighbouring point")
                })?;
                let id = self.ids[&stone];
                let mark = self.anomaly(
                    "knock",
                    at,
                    &[stone, point_of(target)],
                    "a stone knocked onto a neighbouring point without a hand, put back later"
                        .into(),
                );
                self.steps.push(Step::Knock {
                    moves: vec![(id, [target[0] as f64, target[1] as f64])],
                    marks: vec![mark],
                });
                self.physical.apply(&Touch::Shift {
                    id,
                    to: [target[0] as f64, target[1] as f64],
                    shape: None,
                });
                self.think();
                self.think();
                let back = self
                    .shift(stone, [f64::from(stone.col), f64::from(stone.row)])
                    .expect("on the board");
                self.visit(color.opponent(), vec![back], Vec::new());
            }
            "removed-alive" => {
                let victim = self
                    .stones(color.opponent())
                    .into_iter()
                    .find(|p| !self.future.iter().take(3).any(|f| f == p))
                    .ok_or_else(|| {
                        format!("removed-alive@{record_number}: no opponent stone to remove")
                    })?;
                let touches = vec![self.lift(victim).expect("on the board")];
                let mark = self.anomaly(
                    "removed-alive",
                    at,
                    &[victim],
                    "an opponent stone with liberties lifted; put back later".into(),
                );
                self.visit(color, touches, vec![mark]);
                self.think();
                let back = self.stone(color.opponent(), victim);
                self.visit(color.opponent(), vec![back], Vec::new());
            }
            "board-knock" => {
                let mut all: Vec<Point> = self.ids.keys().copied().collect();
                all.sort();
                if all.len() < 3 {
                    return Err(format!(
                        "board-knock@{record_number}: fewer than three stones on the board"
                    ));
                }
                let centre = all[self.rng.below(all.len())];
                all.sort_by_key(|p| {
                    (i32::from(p.row) - i32::from(centre.row)).pow(2)
                        + (i32::from(p.col) - i32::from(centre.col)).pow(2)
                });
                let count = (3 + self.rng.below(4)).min(all.len());
                let angle = f64::from(self.rng.range(0.0, std::f32::consts::TAU));
                let hit: Vec<Point> = all[..count].to_vec();
                let mut moves = Vec::new();
                for &p in &hit {
                    let d = f64::from(self.rng.range(0.3, 0.8));
                    let a = angle + f64::from(self.rng.range(-0.5, 0.5));
                    let to = [
                        f64::from(p.col) + d * a.cos(),
                        f64::from(p.row) + d * a.sin(),
                    ];
                    let to = [
                        to[0].clamp(0.0, (self.size - 1) as f64),
                        to[1].clamp(0.0, (self.size - 1) as f64),
                    ];
                    let id = self.ids[&p];
                    moves.push((id, to));
                    self.physical.apply(&Touch::Shift {
                        id,
                        to,
                        shape: None,
                    });
                }
                let mark = self.anomaly(
                    "board-knock",
                    at,
                    &hit,
                    format!("{count} stones knocked off their points; the players restore them"),
                );
                self.steps.push(Step::Knock {
                    moves,
                    marks: vec![mark],
                });
                self.think();
                self.think();
                let restore: Vec<Touch> = hit
                    .iter()
                    .filter_map(|&p| self.shift(p, [f64::from(p.col), f64::from(p.row)]))
                    .collect();
                self.visit(color.opponent(), restore, Vec::new());
            }
            "added" => {
                let spot = self.quiet_point(Some(point)).ok_or_else(|| {
                    format!("added@{record_number}: no empty point to drop a stone on")
                })?;
                let dropper = color.opponent();
                let touches = vec![self.stone(dropper, spot)];
                let mark = self.anomaly(
                    "added",
                    at,
                    &[spot],
                    "a stone dropped on the board by accident, picked up again".into(),
                );
                self.think();
                self.visit(dropper, touches, vec![mark]);
                self.think();
                let back = self.lift(spot).expect("just dropped");
                self.visit(dropper, vec![back], Vec::new());
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

    /// A unit direction from `point` toward its emptiest side.
    fn open_direction(&self, point: Point) -> [f64; 2] {
        let n = self.size;
        let mut best = ([1.0, 0.0], -1);
        for (d, delta) in [
            ([1.0, 0.0], (1i32, 0i32)),
            ([-1.0, 0.0], (-1, 0)),
            ([0.0, 1.0], (0, 1)),
            ([0.0, -1.0], (0, -1)),
        ] {
            let (c, r) = (
                i32::from(point.col) + delta.0,
                i32::from(point.row) + delta.1,
            );
            if c < 0 || r < 0 || c >= n as i32 || r >= n as i32 {
                continue;
            }
            let free = self.free(Point::new(r as u8, c as u8)) as i32;
            if free > best.1 {
                best = (d, free);
            }
        }
        best.0
    }
}

/// Turns an SGF record into a script, staging `anomalies` at their moves.
pub fn script(
    text: &str,
    anomalies: &[AnomalyRequest],
    seed: u64,
    sloppiness: f64,
) -> Result<Script, String> {
    let record: GoRecord = sgf::read(text).map_err(|e| e.to_string())?;
    for a in anomalies {
        if !KINDS.iter().any(|(k, _)| *k == a.kind) {
            return Err(format!(
                "unknown Go anomaly {:?}; known: {}",
                a.kind,
                KINDS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ));
        }
        if a.at > record.moves.len() {
            return Err(format!(
                "{}@{}: the record has only {} moves",
                a.kind,
                a.at,
                record.moves.len()
            ));
        }
    }
    let size = record.size;
    let black = sgf::handicap_setup(&record)?;
    let mut position = Position::new(size);
    let first = record.first_player.unwrap_or(if black.is_empty() {
        Color::Black
    } else {
        Color::White
    });
    position.setup(&black, &record.setup_white, first);
    let mut builder = Builder {
        size,
        position,
        physical: Board::default(),
        ids: HashMap::new(),
        id_gen: Ids::default(),
        steps: Vec::new(),
        number: 0,
        rng: Rng::new(seed ^ 0x60_5c21_0000_0002),
        sloppiness,
        future: Vec::new(),
        leftovers: Vec::new(),
        last_color: None,
    };
    for &p in &black {
        builder.stone(Color::Black, p);
    }
    for &p in &record.setup_white {
        builder.stone(Color::White, p);
    }
    let start = builder.physical.clone();
    for (index, recorded) in record.moves.iter().enumerate() {
        let record_number = index + 1;
        builder.future = record.moves[index + 1..]
            .iter()
            .filter_map(|m| match m.mv {
                Move::Play(p) => Some(p),
                Move::Pass => None,
            })
            .collect();
        let here: Vec<&AnomalyRequest> =
            anomalies.iter().filter(|a| a.at == record_number).collect();
        let next = match recorded.mv {
            Move::Play(p) => Some(p),
            Move::Pass => None,
        };
        builder.clear_leftovers(record_number - 1, next);
        for a in &here {
            builder.before(&a.kind, recorded.color, record_number)?;
        }
        builder.think();
        match recorded.mv {
            Move::Pass => {
                builder
                    .position
                    .play(recorded.color, Move::Pass)
                    .map_err(|e| e.to_string())?;
                builder.number += 1;
                builder.last_color = Some(recorded.color);
                let number = builder.number;
                builder.steps.push(Step::Pause {
                    seconds: 1.0,
                    marks: vec![Mark::Pass {
                        number,
                        record_number: Some(record_number),
                        color: recorded.color,
                    }],
                });
            }
            Move::Play(point) => {
                let leave = here.iter().any(|a| a.kind == "captures-left");
                let moved_from = if here.iter().any(|a| a.kind == "takeback") {
                    let wrong = builder.quiet_point(Some(point)).ok_or_else(|| {
                        format!("takeback@{record_number}: no empty point near the move to put the stone on first")
                    })?;
                    let touch = builder.stone(recorded.color, wrong);
                    builder.visit(recorded.color, vec![touch], Vec::new());
                    builder.think();
                    Some(wrong)
                } else {
                    None
                };
                let before = builder.steps.len();
                builder.play(
                    recorded.color,
                    point,
                    Some(record_number),
                    leave,
                    moved_from,
                )?;
                if leave
                    && !builder.steps[before..].iter().any(|s| {
                        s.marks()
                            .iter()
                            .any(|m| matches!(m, Mark::Anomaly(a) if a.kind == "captures-left"))
                    })
                {
                    return Err(format!(
                        "captures-left@{record_number}: the move captures nothing"
                    ));
                }
                for a in &here {
                    builder.after(&a.kind, recorded.color, point, record_number)?;
                }
            }
        }
    }
    builder.future.clear();
    builder.clear_leftovers(usize::MAX, None);
    builder.think();
    Ok(Script {
        start,
        steps: builder.steps,
        bottom: Color::Black,
        record: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAME: &str = "(;GM[1]SZ[9];B[ee];W[ec];B[cc];W[gc];B[gg];W[cg];B[dd];W[fd];B[ed])";

    fn moves(script: &Script) -> Vec<(usize, Color, String)> {
        script
            .steps
            .iter()
            .flat_map(|s| s.marks())
            .filter_map(|m| match m {
                Mark::Move {
                    number,
                    color,
                    notation,
                    ..
                } => Some((*number, *color, notation.clone())),
                _ => None,
            })
            .collect()
    }

    fn replay_board(script: &Script) -> Board {
        script.final_board()
    }

    #[test]
    fn a_clean_record_becomes_one_visit_per_move() {
        let script = script(GAME, &[], 1, 0.05).unwrap();
        let m = moves(&script);
        assert_eq!(m.len(), 9);
        assert_eq!(m[0], (1, Color::Black, "ee".to_string()));
        assert_eq!(replay_board(&script).pieces.len(), 9);
    }

    #[test]
    fn a_capture_lifts_the_stone() {
        let game = "(;GM[1]SZ[9];B[ba];W[aa];B[ab])";
        let script = script(game, &[], 3, 0.0).unwrap();
        let board = replay_board(&script);
        assert_eq!(board.pieces.len(), 2);
        assert!(board.at([0, 0]).is_none());
    }

    #[test]
    fn a_double_move_adds_a_flagged_move_and_keeps_the_record_playable() {
        let script = script(GAME, &["double-move@3".parse().unwrap()], 1, 0.05).unwrap();
        let m = moves(&script);
        assert_eq!(m.len(), 10);
        assert_eq!(m[2].1, Color::Black);
        assert_eq!(m[3].1, Color::Black);
        let flagged: Vec<&Anomaly> = script
            .steps
            .iter()
            .flat_map(|s| s.marks())
            .filter_map(|m| match m {
                Mark::Anomaly(a) => Some(a),
                _ => None,
            })
            .collect();
        assert_eq!(flagged.len(), 1);
        assert_eq!(flagged[0].move_number, 4);
        assert_eq!(flagged[0].rules[0].to_string(), "TGA 20");
    }

    #[test]
    fn every_kind_that_fits_the_game_is_staged_and_the_board_ends_as_the_record() {
        let clean = replay_board(&script(GAME, &[], 5, 0.0).unwrap());
        for kind in [
            "takeback",
            "slide",
            "knock",
            "removed-alive",
            "board-knock",
            "added",
        ] {
            let script = script(GAME, &[format!("{kind}@5").parse().unwrap()], 5, 0.0)
                .unwrap_or_else(|e| panic!("{kind}: {e}"));
            let board = replay_board(&script);
            let occupied = |b: &Board| {
                let mut cells: Vec<[i64; 2]> = b
                    .pieces
                    .iter()
                    .map(|p| [p.cell[0].round() as i64, p.cell[1].round() as i64])
                    .collect();
                cells.sort();
                cells
            };
            assert_eq!(occupied(&board), occupied(&clean), "{kind}");
        }
    }

    #[test]
    fn a_takeback_puts_the_stone_down_elsewhere_then_moves_it() {
        let script = script(GAME, &["takeback@5".parse().unwrap()], 5, 0.0).unwrap();
        let staged: Vec<&Anomaly> = script
            .steps
            .iter()
            .flat_map(|s| s.marks())
            .filter_map(|m| match m {
                Mark::Anomaly(a) => Some(a),
                _ => None,
            })
            .collect();
        assert_eq!(staged.len(), 1);
        assert_eq!(staged[0].kind, "takeback");
        assert_eq!(staged[0].points[1], "gg");
        assert_ne!(staged[0].points[0], "gg");
        assert!(script.steps.iter().any(|s| matches!(
            s,
            Step::Visit { touches, .. } if touches.iter().any(|t| matches!(t, Touch::Shift { .. }))
        )));
        assert_eq!(moves(&script).len(), 9, "still one move");
    }

    #[test]
    fn anomalies_that_need_a_situation_say_when_it_is_missing() {
        let err = script(GAME, &["ko-retake@4".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("no ko"), "{err}");
        let err = script(GAME, &["captures-left@2".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("captures nothing"), "{err}");
        let err = script(GAME, &["wobble@2".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("unknown"), "{err}");
        let err = script(GAME, &["slide@40".parse().unwrap()], 1, 0.0).unwrap_err();
        assert!(err.contains("only 9 moves"), "{err}");
    }

    #[test]
    fn a_ko_retake_is_staged_and_undone() {
        // Black takes a ko at cb (capturing bb) on move 9; White may not retake at once.
        let game = "(;GM[1]SZ[9];B[ba];W[ca];B[ab];W[bb];B[bc];W[db];B[ee];W[cc];B[cb];W[gg])";
        let script = script(game, &["ko-retake@10".parse().unwrap()], 2, 0.0).unwrap();
        let m = moves(&script);
        assert_eq!(m[9], (10, Color::White, "bb".to_string()));
        assert_eq!(m[10], (11, Color::White, "gg".to_string()));
        let board = replay_board(&script);
        assert!(board.at([2, 1]).is_some(), "the ko stone is back");
        assert_eq!(board.at([1, 1]), None, "the retaking stone was taken back");
    }
}
