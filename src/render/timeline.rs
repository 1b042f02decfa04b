//! A script given time: where the fingertips are at every instant, when the board changes,
//! when the camera or board is bumped, and when each mark (move, anomaly) happens.

use super::camera::Vec3;
use super::hand;
use super::scene::{Scene, Shape};
use super::script::{Board, Mark, Script, Step, Touch};
use crate::games::Color;
use crate::reading::synth::Rng;

/// A point the fingertips pass through, in board-local millimetres, and what they hold
/// from then on.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub t: f64,
    pub tip: Vec3,
    pub held: Option<(Shape, Color)>,
}

/// One visit of a hand, from entering the picture to leaving it.
#[derive(Clone, Debug)]
pub struct Pass {
    /// −1 for the player at the bottom edge, +1 for the top.
    pub side: f64,
    pub player: Color,
    pub keys: Vec<Key>,
}

impl Pass {
    pub fn start(&self) -> f64 {
        self.keys.first().map_or(0.0, |k| k.t)
    }

    pub fn end(&self) -> f64 {
        self.keys.last().map_or(0.0, |k| k.t)
    }

    /// Fingertips and held piece at time t (smooth between keys).
    pub fn at(&self, t: f64) -> (Vec3, Option<(Shape, Color)>) {
        let i = self.keys.partition_point(|k| k.t <= t);
        if i == 0 {
            return (self.keys[0].tip, self.keys[0].held);
        }
        if i >= self.keys.len() {
            let last = self.keys[self.keys.len() - 1];
            return (last.tip, last.held);
        }
        let (a, b) = (self.keys[i - 1], self.keys[i]);
        let f = ((t - a.t) / (b.t - a.t).max(1e-9)).clamp(0.0, 1.0);
        let f = f * f * (3.0 - 2.0 * f);
        (
            [
                a.tip[0] + (b.tip[0] - a.tip[0]) * f,
                a.tip[1] + (b.tip[1] - a.tip[1]) * f,
                a.tip[2] + (b.tip[2] - a.tip[2]) * f,
            ],
            a.held,
        )
    }
}

/// Something that changes the picture for good at an instant.
#[derive(Clone, Debug)]
pub enum Change {
    /// The board after the change.
    Board(Board),
    /// The camera is knocked: turned by these angles (radians about camera x, y, z) and
    /// moved by this many millimetres.
    CameraBump { turn: [f64; 3], shift: Vec3 },
    /// The board is pushed on the table: shift (mm) and turn (radians).
    BoardBump { shift: [f64; 2], turn: f64 },
}

/// A mark with the times that matter for it.
#[derive(Clone, Debug)]
pub struct TimedMark {
    pub mark: Mark,
    /// When the move's piece touched down or the anomaly happened.
    pub at: f64,
    /// When the hand that did it left the picture (the move is complete); the same as
    /// `at` when no hand was involved.
    pub done: f64,
}

#[derive(Clone, Debug)]
pub struct Timeline {
    pub duration: f64,
    pub start: Board,
    pub passes: Vec<Pass>,
    pub changes: Vec<(f64, Change)>,
    pub marks: Vec<TimedMark>,
    /// Instants a hand pressed on the board (pieces set down or lifted): the table shakes.
    pub impacts: Vec<f64>,
    /// When the camera or board was bumped: (time, the board moved, by accident).
    pub bumps: Vec<(f64, bool, bool)>,
}

/// The board-local millimetres of a (fractional) cell.
fn local(scene: &Scene, cell: [f64; 2]) -> [f64; 2] {
    scene.board.cell_centre(cell[0], cell[1])
}

/// Lays the script out in time. Hand speeds and pauses vary with the seed.
pub fn lay_out(script: &Script, scene: &Scene, seed: u64) -> Timeline {
    let mut rng = Rng::new(seed ^ 0x7113_0000_0003);
    let surface = scene.board.thickness;
    let reach = scene.board.outer[1] / 2.0;
    let speed = f64::from(rng.range(650.0, 1000.0));
    let mut t = f64::from(rng.range(1.0, 1.6));
    let mut board = script.start.clone();
    let mut timeline = Timeline {
        duration: 0.0,
        start: script.start.clone(),
        passes: Vec::new(),
        changes: Vec::new(),
        marks: Vec::new(),
        impacts: Vec::new(),
        bumps: Vec::new(),
    };
    let piece_height = |shape: Shape, color: Color| {
        scene
            .pieces
            .solid(shape, color, scene.board.spacing[0])
            .height()
    };
    for step in &script.steps {
        match step {
            Step::Pause { seconds, marks } => {
                for mark in marks {
                    timeline.marks.push(TimedMark {
                        mark: mark.clone(),
                        at: t + seconds / 2.0,
                        done: t + seconds / 2.0,
                    });
                }
                t += seconds;
            }
            Step::Knock { moves, marks } => {
                t += 0.2;
                for &(id, to) in moves {
                    board.apply(&Touch::Shift {
                        id,
                        to,
                        shape: None,
                    });
                }
                timeline.changes.push((t, Change::Board(board.clone())));
                timeline.impacts.push(t);
                for mark in marks {
                    timeline.marks.push(TimedMark {
                        mark: mark.clone(),
                        at: t,
                        done: t,
                    });
                }
                t += 0.3;
            }
            Step::Bump {
                board: moves_board,
                accident,
                marks,
            } => {
                t += 0.3;
                let sign = |rng: &mut Rng| if rng.chance(0.5) { 1.0 } else { -1.0 };
                let change = if *moves_board {
                    Change::BoardBump {
                        shift: [
                            sign(&mut rng) * f64::from(rng.range(6.0, 25.0)),
                            sign(&mut rng) * f64::from(rng.range(4.0, 20.0)),
                        ],
                        turn: sign(&mut rng) * f64::from(rng.range(0.015, 0.06)),
                    }
                } else {
                    Change::CameraBump {
                        turn: [
                            sign(&mut rng) * f64::from(rng.range(0.008, 0.04)),
                            sign(&mut rng) * f64::from(rng.range(0.008, 0.04)),
                            sign(&mut rng) * f64::from(rng.range(0.0, 0.03)),
                        ],
                        shift: [
                            f64::from(rng.range(-20.0, 20.0)),
                            f64::from(rng.range(-20.0, 20.0)),
                            f64::from(rng.range(-10.0, 10.0)),
                        ],
                    }
                };
                timeline.changes.push((t, change));
                timeline.bumps.push((t, *moves_board, *accident));
                timeline.impacts.push(t);
                for mark in marks {
                    timeline.marks.push(TimedMark {
                        mark: mark.clone(),
                        at: t,
                        done: t,
                    });
                }
                t += 0.4;
            }
            Step::Visit {
                player,
                touches,
                marks,
            } => {
                let side = if *player == script.bottom { -1.0 } else { 1.0 };
                let rest = [
                    f64::from(rng.range(-150.0, 150.0)) + 80.0 * -side,
                    side * (reach + f64::from(rng.range(180.0, 240.0))),
                    surface + 160.0,
                ];
                let hover = surface + f64::from(rng.range(45.0, 80.0));
                let mut keys = vec![Key {
                    t,
                    tip: rest,
                    held: None,
                }];
                let mut here = rest;
                let mut held: Option<(Shape, Color)> = None;
                let mut first_touch = None;
                let travel = |from: Vec3, to: Vec3, rng: &mut Rng| {
                    let d = ((from[0] - to[0]).powi(2)
                        + (from[1] - to[1]).powi(2)
                        + (from[2] - to[2]).powi(2))
                    .sqrt();
                    0.18 + d / speed * f64::from(rng.range(0.85, 1.2))
                };
                // What the hand brings for a Put: the piece rides under the fingers.
                if let Some(Touch::Put(p)) = touches.first() {
                    held = Some((p.shape, p.color));
                    keys[0].held = held;
                }
                for touch in touches {
                    let (target, lift_height) = match *touch {
                        Touch::Put(p) => (local(scene, p.cell), piece_height(p.shape, p.color)),
                        Touch::Take(id) | Touch::Shift { id, .. } => {
                            let p = board.find(id).copied();
                            match p {
                                Some(p) => (local(scene, p.cell), piece_height(p.shape, p.color)),
                                None => continue,
                            }
                        }
                    };
                    if let Touch::Put(p) = *touch
                        && held.is_none()
                    {
                        held = Some((p.shape, p.color));
                    }
                    let above = [target[0], target[1], hover];
                    t += travel(here, above, &mut rng);
                    keys.push(Key {
                        t,
                        tip: above,
                        held,
                    });
                    let contact = [target[0], target[1], surface + lift_height + 3.0];
                    t += f64::from(rng.range(0.12, 0.22));
                    keys.push(Key {
                        t,
                        tip: contact,
                        held,
                    });
                    t += f64::from(rng.range(0.05, 0.12));
                    let touch_time = t;
                    first_touch.get_or_insert(touch_time);
                    timeline.impacts.push(touch_time);
                    match *touch {
                        Touch::Put(_) => {
                            board.apply(touch);
                            held = None;
                        }
                        Touch::Take(id) => {
                            held = board.find(id).map(|p| (p.shape, p.color));
                            board.apply(touch);
                        }
                        Touch::Shift { id, to, shape } => {
                            // Slid or carried: the piece travels with the hand and is
                            // set down at the destination.
                            let p = board.find(id).copied();
                            board.apply(&Touch::Take(id));
                            timeline.changes.push((t, Change::Board(board.clone())));
                            keys.push(Key {
                                t,
                                tip: contact,
                                held: p.map(|p| (p.shape, p.color)),
                            });
                            let dest = local(scene, to);
                            let carried = [dest[0], dest[1], contact[2] + 8.0];
                            t += travel(contact, carried, &mut rng) * 0.8;
                            keys.push(Key {
                                t,
                                tip: [dest[0], dest[1], surface + lift_height + 3.0],
                                held: p.map(|p| (shape.unwrap_or(p.shape), p.color)),
                            });
                            if let Some(mut p) = p {
                                p.cell = to;
                                if let Some(s) = shape {
                                    p.shape = s;
                                }
                                board.apply(&Touch::Put(p));
                            }
                            held = None;
                        }
                    }
                    timeline.changes.push((t, Change::Board(board.clone())));
                    keys.push(Key {
                        t,
                        tip: keys.last().map_or(contact, |k| k.tip),
                        held,
                    });
                    t += f64::from(rng.range(0.05, 0.12));
                    here = keys.last().map_or(contact, |k| k.tip);
                    let up = [here[0], here[1], hover];
                    t += 0.15;
                    keys.push(Key { t, tip: up, held });
                    here = up;
                }
                t += travel(here, rest, &mut rng);
                keys.push(Key { t, tip: rest, held });
                let pass = Pass {
                    side,
                    player: *player,
                    keys,
                };
                let left = hand_leaves(&pass, scene).unwrap_or(t);
                for mark in marks {
                    if let Mark::Completes { number } = mark {
                        for earlier in timeline.marks.iter_mut().rev() {
                            if matches!(earlier.mark, Mark::Move { number: n, .. } if n == *number)
                            {
                                earlier.done = left;
                                break;
                            }
                        }
                        continue;
                    }
                    timeline.marks.push(TimedMark {
                        mark: mark.clone(),
                        at: first_touch.unwrap_or(t),
                        done: left,
                    });
                }
                timeline.passes.push(pass);
                t += 0.05;
            }
        }
    }
    timeline.duration = t + f64::from(rng.range(1.2, 2.0));
    timeline
}

/// When the arm of `pass` has left the board for good: the first instant (to within
/// 10 ms, never early) after which no part of it is over the board.
pub fn hand_leaves(pass: &Pass, scene: &Scene) -> Option<f64> {
    let half = [scene.board.outer[0] / 2.0, scene.board.outer[1] / 2.0];
    let reach = half[1];
    let (start, end) = (pass.start(), pass.end());
    let steps = ((end - start) / 0.01).ceil().max(1.0) as usize;
    let at = |i: usize| start + (end - start) * i as f64 / steps as f64;
    let last_over = (0..=steps).rev().find(|&i| {
        let (tip, _) = pass.at(at(i));
        hand::over_board(
            &hand::arm(tip, pass.side, reach, scene.board.thickness),
            half,
        )
    })?;
    Some(at((last_over + 1).min(steps)))
}

impl Timeline {
    /// The board standing at time t.
    pub fn board_at(&self, t: f64) -> &Board {
        self.changes
            .iter()
            .rev()
            .filter(|(at, _)| *at <= t)
            .find_map(|(_, c)| match c {
                Change::Board(b) => Some(b),
                _ => None,
            })
            .unwrap_or(&self.start)
    }

    /// The hand pass under way at time t.
    pub fn pass_at(&self, t: f64) -> Option<&Pass> {
        let i = self.passes.partition_point(|p| p.start() <= t);
        let pass = self.passes.get(i.checked_sub(1)?)?;
        (t <= pass.end()).then_some(pass)
    }
}
