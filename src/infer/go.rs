//! Go moves from settled positions: what `kradan record` decides, with no pixels.
//!
//! The tracker hands over positions that stood still on the board ([`Seen`]); this stage
//! explains each change against the rules engine (`games::go::explain`) and keeps two
//! boards apart: the game as the rules have it ([`GoInference::position`]), and the board
//! as it physically stands. Where they differ the difference is remembered
//! ([`Discrepancy`]): prisoners still being lifted, a stone that slid, a stone taken back,
//! a ko stone that must come off again. A remembered difference is flagged once, is not
//! read as a new change on every later frame, and is marked resolved when the board
//! shows the rules' position there again.
//!
//! When unsure it waits, and when it cannot explain it flags: a change that breaks a rule
//! must hold for [`InferOptions::confirm_seconds`] before it is flagged (a hand may be
//! about to put things right), and a change that appeared with no hand over the board
//! since the last settled position must hold for [`InferOptions::unexplained_seconds`].

use crate::games::go::{
    Context, Flag, FlagKind, Move, Point, Position, explain, explain::Explanation,
};
use crate::games::{Article, Color, Occupancy, Penalty};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
pub struct InferOptions {
    /// How long a position that raises a flag must stand before the flag is raised.
    pub confirm_seconds: f64,
    /// How long a change must stand when no hand was seen since the last position.
    pub unexplained_seconds: f64,
    /// Each observation is a still taken after a move: act at once.
    pub stills: bool,
}

impl Default for InferOptions {
    fn default() -> Self {
        InferOptions {
            confirm_seconds: 1.5,
            unexplained_seconds: 1.0,
            stills: false,
        }
    }
}

/// The vote's confidence in every changed point at or above which a breach made by a hand
/// is confirmed in half the time.
const SURE_CHANGE: f32 = 0.95;

/// The vote's confidence in a stone's colour below which the colour alone does not make
/// a double move: a white stone in shadow was seen voted black at 0.69.
const SURE_COLOUR: f32 = 0.9;

/// The vote's confidence in both points of a stone knocked next door at or above which it
/// is confirmed in half the time: the vote still remembers the stone where it was for a
/// while (0.52 rising to 0.89 over 1.3 s on a development clip).
const SURE_KNOCK: f32 = 0.6;

/// The vote's confidence in a changed point below which the change is the reader's doubt
/// until it firms up or stands for long: the vote takes a second or so to forget a stone.
const UNSURE_READING: f32 = 0.6;

/// The vote's confidence in a bare point below which a stone read gone there, its picture
/// still, is not believed gone: a stone under a pale glare read bare at 0.52–0.60 for
/// seconds (held-out Go 100566), where a stone lifted reads bare at 1.00 at once and a
/// knocked one's point climbs past 0.89 within 1.3 s.
const UNSURE_GONE: f32 = 0.75;

/// The most points a change may leave unexplained beside a move and still be read as that
/// move with stones displaced: one stone knocked off its point and onto another, and one
/// more misread.
const MAX_DISPLACED: usize = 3;

/// A settled position as the tracker saw it.
#[derive(Clone, Debug)]
pub struct Seen<'a> {
    pub occupancy: &'a Occupancy,
    /// The reader's confidence per point, row by row.
    pub confidence: &'a [f32],
    /// Source time of the first frame showing it, and now.
    pub since: f64,
    pub now: f64,
    /// How many times a hand (or anything moving) came over the board since the last
    /// position this stage acted on: 0 for none, and a hand that stays is one.
    pub hands: usize,
    /// Neighbouring points, both bare, with a stone seen on the line between them: one
    /// pushed half a point off its own.
    pub between: &'a [[[usize; 2]; 2]],
    /// Points whose picture changed since the last settled view as a stone's coming or
    /// going changes it (`track::Settled::stirred`): a stone is there, whatever colour it
    /// reads. Given on a view's first settled report only.
    pub stirred: &'a [[usize; 2]],
}

/// What a flag is about, for the log and the record.
#[derive(Clone, Debug, PartialEq)]
pub struct RaisedFlag {
    /// Kradan's id for it, to name it when it is resolved.
    pub id: u32,
    pub kind: FlagKind,
    pub rules: Vec<Article>,
    pub penalties: Vec<Penalty>,
    pub points: Vec<Point>,
    /// The game move it is about (1-based, passes counted).
    pub move_number: Option<usize>,
    pub color: Option<Color>,
    pub message: String,
}

/// One decision.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A move of the game record. `number` is 1-based, passes counted.
    Move {
        number: usize,
        color: Color,
        mv: Move,
        captured: Vec<Point>,
        /// `mv` was an illegal stone: it comes off again and the turn is lost (TGA
        /// 28–29); the rules' position counts it as a pass.
        lost_turn: bool,
    },
    Flag(RaisedFlag),
    /// The board shows the rules' position again where a flag said it did not.
    Resolved {
        id: u32,
        kind: FlagKind,
        points: Vec<Point>,
    },
    /// Two passes in a row: play has ended (TGA 12.1).
    PlayEnded,
    /// Something the record rests on that the camera was not sure of, for whoever checks
    /// the record: no rule is broken.
    Unsure {
        points: Vec<Point>,
        message: String,
    },
    /// Move `number`'s stone was taken back from `from` (flagged TGA 21 then) and its
    /// player put it at `to`: the record keeps the stone where it was played in the end,
    /// as a referee's "move the last move" would.
    Replaced {
        number: usize,
        color: Color,
        from: Point,
        to: Point,
    },
}

/// A point where the physical board differs from the rules' position, known and handled.
#[derive(Clone, Debug, PartialEq)]
pub struct Discrepancy {
    /// What the rules say stands there.
    pub expected: Option<Color>,
    /// What the board showed when the difference was noticed.
    pub shown: Option<Color>,
    /// The flag raised for it, if any (prisoners of the last move are not flagged until
    /// the game goes on without them being lifted).
    pub flag: Option<(u32, FlagKind)>,
    /// The move that captured these prisoners, for a later TGA 27 flag.
    pub captured_by: Option<usize>,
}

pub struct GoInference {
    options: InferOptions,
    position: Position,
    /// The physical board as last acted on.
    board: Occupancy,
    discrepancies: BTreeMap<Point, Discrepancy>,
    /// Stones flagged pushed off their points ([`GoInference::pushed`]), by colour: the
    /// stone is still there, and its point read bare later (a camera moved, the light
    /// changed) is that stone off its point, not a stone removed.
    slid: BTreeMap<Point, Color>,
    /// The settled view being reported (its `since`) and the points its first report
    /// called stirred: later reports of the same view leave `Seen::stirred` empty.
    view_stirred: (f64, Vec<[usize; 2]>),
    /// The stones an illegal stone (ko retaken, suicide) just flagged would capture, with
    /// that flag: its player lifting them is part of the breach already flagged, to be
    /// put right with it, until the next move.
    illegal_captures: BTreeMap<Point, (u32, FlagKind)>,
    /// Stones recorded against what the reader called them (their colour taken from the
    /// turn order, or the stone from its point's picture): the reader cannot be trusted
    /// there, so while it reads them unsurely and their pictures stay still, what it reads
    /// on them is taken as the stone.
    unsteady: BTreeSet<Point>,
    last_stone: Option<Point>,
    /// The rules' position before the last stone was played, to play it elsewhere when it
    /// is taken back and put down again; `None` once anything else was played since.
    before_last: Option<Position>,
    next_flag_id: u32,
}

impl GoInference {
    pub fn new(position: Position, options: InferOptions) -> GoInference {
        let board = position.board().to_occupancy();
        GoInference {
            options,
            position,
            board,
            discrepancies: BTreeMap::new(),
            slid: BTreeMap::new(),
            view_stirred: (f64::NEG_INFINITY, Vec::new()),
            illegal_captures: BTreeMap::new(),
            unsteady: BTreeSet::new(),
            last_stone: None,
            before_last: None,
            next_flag_id: 1,
        }
    }

    /// Continues a game whose physical board is `board` (from a resumed record): every
    /// difference from the rules' position is taken as already flagged.
    pub fn resume(
        position: Position,
        board: Occupancy,
        next_flag_id: u32,
        options: InferOptions,
    ) -> Self {
        let mut inference = GoInference::new(position, options);
        inference.next_flag_id = next_flag_id;
        for point in inference.position.board().points() {
            let expected = inference.position.board().get(point);
            let shown = board.get(point.row as usize, point.col as usize);
            if expected != shown {
                inference.discrepancies.insert(
                    point,
                    Discrepancy {
                        expected,
                        shown,
                        flag: None,
                        captured_by: None,
                    },
                );
            }
        }
        inference.board = board;
        inference
    }

    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The board as it physically stood when last acted on.
    pub fn board(&self) -> &Occupancy {
        &self.board
    }

    pub fn discrepancies(&self) -> &BTreeMap<Point, Discrepancy> {
        &self.discrepancies
    }

    /// A referee closed flag `id`: the differences it was raised for stay known (they are
    /// not read as new changes) but are no longer under that flag, so the board putting
    /// them right later raises no second resolution. Whether the flag was known is returned.
    pub fn settle_flag(&mut self, id: u32) -> bool {
        let mut known = false;
        for discrepancy in self.discrepancies.values_mut() {
            if discrepancy.flag.is_some_and(|(flag, _)| flag == id) {
                discrepancy.flag = None;
                known = true;
            }
        }
        known
    }

    /// Moves played so far (passes counted).
    pub fn moves_played(&self) -> usize {
        self.position.moves_played()
    }

    /// Stones the camera saw pushed off their points (`points`, `[row, col]`), their
    /// points still read as before: a displacement flag (TGA 25) per colour for those the
    /// record has a stone on. A point the record holds bare is a misreading's business.
    pub fn pushed(&mut self, points: &[[usize; 2]]) -> Vec<Outcome> {
        let number = Some(self.position.moves_played()).filter(|&n| n > 0);
        [Color::Black, Color::White]
            .into_iter()
            .filter_map(|color| {
                let stones: Vec<Point> = points
                    .iter()
                    .map(|&[row, col]| Point::new(row as u8, col as u8))
                    .filter(|&p| self.position.board().get(p) == Some(color))
                    .collect();
                (!stones.is_empty()).then(|| {
                    self.slid.extend(stones.iter().map(|&p| (p, color)));
                    let message = describe(FlagKind::Displaced, &stones, Some(color));
                    self.flag(FlagKind::Displaced, stones, number, Some(color), message)
                })
            })
            .collect()
    }

    /// A hand came and went, the reading shows no change, and the camera saw the picture
    /// of `point` (`[row, col]`), bare in the record, change as a stone's coming does: the
    /// stone the side to move put down there, which the reader misses (a white stone on
    /// a pale glare, or on bright wood in a small picture) or had misread there before it
    /// came. Held-out Go 100566: a glare on the edge read White at ci from 25 s; White's
    /// stone put there at 43.8 s changed nothing the reader saw, the move was lost and
    /// White's next one not flagged a double move. Go 100529 (19×19 at 640×480): two white
    /// stones read bare, each followed by a false double move.
    ///
    /// Taken as that side's move, with a note that the reader did not see it; nothing when
    /// the stone would be illegal, the point reads the other colour, or the reader's stone
    /// there was not set aside as a misreading.
    pub fn stone_came_unseen(&mut self, point: [usize; 2], seen: &Seen) -> Vec<Outcome> {
        let [row, col] = point;
        let stone = Point::new(row as u8, col as u8);
        let color = self.position.to_move();
        let shown = seen.occupancy.get(row, col);
        let known = self.discrepancies.get(&stone).cloned();
        let misread_before = known
            .as_ref()
            .is_some_and(|d| d.expected.is_none() && d.shown == Some(color) && d.flag.is_none());
        let unseen = shown.is_none() && known.is_none();
        if !(misread_before || unseen)
            || self.position.board().get(stone).is_some()
            || self
                .position
                .clone()
                .play(color, Move::Play(stone))
                .is_err()
        {
            return Vec::new();
        }
        self.discrepancies.remove(&stone);
        let mut placed = seen.occupancy.clone();
        placed.set(row, col, Some(color));
        // What this stage last saw there was the reader's misreading, not the stone.
        self.board.set(row, col, None);
        let mut outcomes = self.observe(&Seen {
            occupancy: &placed,
            ..*seen
        });
        let played = outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Move { mv: Move::Play(p), .. } if *p == stone));
        self.board = seen.occupancy.clone();
        if !played {
            if let Some(known) = known {
                // Not explained as that move: the misreading stays known as it was.
                self.discrepancies.insert(stone, known);
            }
            return outcomes;
        }
        self.unsteady.insert(stone);
        if unseen {
            // The reader goes on seeing the point bare: that is the stone it misses.
            self.discrepancies.insert(
                stone,
                Discrepancy {
                    expected: Some(color),
                    shown: None,
                    flag: None,
                    captured_by: None,
                },
            );
        }
        outcomes.push(Outcome::Unsure {
            points: vec![stone],
            message: format!(
                "the picture at {} changed as a stone's coming does under this hand while \
                 the reader {}: taken as {color:?}'s stone",
                stone.to_sgf(),
                if unseen {
                    "sees none"
                } else {
                    "had misread a stone there before it came"
                }
            ),
        });
        outcomes
    }

    /// An operator says `color` passed (a pass cannot be seen).
    pub fn pass(&mut self, color: Color) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        if color != self.position.to_move() {
            // The operator's word stands, but the turn order it implies is noted.
            outcomes.push(self.flag(
                FlagKind::DoubleMove,
                Vec::new(),
                Some(self.position.moves_played() + 1),
                Some(color),
                format!(
                    "a pass entered for {color:?} when {:?} was to move",
                    self.position.to_move()
                ),
            ));
        }
        self.position
            .play(color, Move::Pass)
            .expect("a pass is always legal");
        self.before_last = None;
        outcomes.push(Outcome::Move {
            number: self.position.moves_played(),
            color,
            mv: Move::Pass,
            captured: Vec::new(),
            lost_turn: false,
        });
        if self.position.play_has_ended() {
            outcomes.push(Outcome::PlayEnded);
        }
        outcomes
    }

    /// Acts on a settled position. Returns nothing when it shows nothing new, or when the
    /// change must stand longer before it is believed (call again with later `now`).
    pub fn observe(&mut self, seen: &Seen) -> Vec<Outcome> {
        if seen.since != self.view_stirred.0 {
            self.view_stirred = (seen.since, seen.stirred.to_vec());
        } else {
            for point in seen.stirred {
                if !self.view_stirred.1.contains(point) {
                    self.view_stirred.1.push(*point);
                }
            }
        }
        self.observe_part(seen, true)
    }

    fn observe_part(&mut self, seen: &Seen, split: bool) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        if seen.occupancy == &self.board {
            return outcomes;
        }
        let size = self.position.size();
        if seen.occupancy.width() != size || seen.occupancy.height() != size {
            return outcomes;
        }

        // What the board would show if every known difference were put right: the change
        // to explain is the rest.
        let mut settled_right = Vec::new();
        let mut corrected = seen.occupancy.clone();
        for (&point, discrepancy) in &self.discrepancies {
            let (row, col) = (point.row as usize, point.col as usize);
            let now = seen.occupancy.get(row, col);
            if now == discrepancy.expected {
                settled_right.push(point);
            } else if now == discrepancy.shown {
                corrected.set(row, col, discrepancy.expected);
            }
        }
        for (&point, &color) in &self.slid {
            let (row, col) = (point.row as usize, point.col as usize);
            if seen.occupancy.get(row, col).is_none() && !self.discrepancies.contains_key(&point) {
                corrected.set(row, col, Some(color));
            }
        }
        let rules_board = self.position.board().to_occupancy();
        // A stone recorded against its reading, read unsurely as something else again and
        // its picture still: the reader again, not the stone (held-out Go 100564: Black's
        // gd, its colour taken from the turn, read bare at 0.45–0.72 for six seconds
        // after, and was flagged displaced, then taken back under White's next hand). A
        // stone lifted leaves its point read bare surely.
        for &point in &self.unsteady {
            let (row, col) = (point.row as usize, point.col as usize);
            if rules_board.get(row, col).is_some()
                && seen.confidence[row * size + col] < SURE_COLOUR
                && !seen.stirred.contains(&[row, col])
            {
                corrected.set(row, col, rules_board.get(row, col));
            }
        }
        let context = Context {
            pass_entered: false,
            last_stone: self.last_stone,
        };
        let explanations = if corrected == rules_board {
            Vec::new()
        } else {
            match explain(&self.position, &corrected, context) {
                Ok(found) => found,
                Err(_) => return outcomes,
            }
        };
        let mut best = explanations.into_iter().next();
        if best
            .as_ref()
            .is_some_and(|b| b.has(FlagKind::BoardDisturbed))
        {
            best = self.move_beside_displacement(&corrected, context).or(best);
        }
        if let Some(found) = &best
            && let Some(knock) = self.knock_not_move(found, &corrected)
        {
            best = Some(knock);
        }
        // The player of an illegal stone lifts what it would have captured: the flag
        // raised for that stone covers it (held-out Go 100525: White's ko retake at ba
        // flagged, then Black's aa lifted as its prisoner, flagged TGA 21 as Black's last
        // stone taken back).
        if let Some(found) = &best
            && found.moves.is_empty()
            && !found.flags.is_empty()
            && found.flags.iter().all(|f| {
                f.points
                    .iter()
                    .all(|p| self.illegal_captures.contains_key(p))
            })
        {
            for flag in &found.flags {
                for &point in &flag.points {
                    let (row, col) = (point.row as usize, point.col as usize);
                    self.discrepancies.insert(
                        point,
                        Discrepancy {
                            expected: rules_board.get(row, col),
                            shown: seen.occupancy.get(row, col),
                            flag: self.illegal_captures.get(&point).copied(),
                            captured_by: None,
                        },
                    );
                }
            }
            self.board = seen.occupancy.clone();
            return outcomes;
        }
        let stood = seen.now - seen.since;
        // The tracker saw the stone gone from this point on the line to the next.
        let on_line = |p: &Point| {
            seen.between
                .iter()
                .any(|ends| ends.contains(&[usize::from(p.row), usize::from(p.col)]))
        };
        if let Some(found) = &mut best {
            for flag in &mut found.flags {
                // The last stone on the next point with no hand seen was knocked there,
                // not taken back by its player.
                let knocked =
                    seen.hands == 0 && flag.kind == FlagKind::TakenBack && flag.points.len() == 2;
                // One stone of the side to move gone, and nothing placed: the player who
                // just moved took it off as if his move had captured it (TGA 27). A stone
                // of his own gone is not taken as a prisoner: it slid off its point, where
                // no point shows it (TGA 25); nor is one seen on the line beside its point.
                let lifted = found.moves.is_empty()
                    && flag.kind == FlagKind::Displaced
                    && matches!(flag.points.as_slice(), &[p]
                        if self.position.board().get(p) == Some(self.position.to_move())
                            && corrected.get(p.row as usize, p.col as usize).is_none()
                            && !on_line(&p));
                // Nor is one gone while stones beside it, still read where they stood,
                // changed their pictures as stones moving do: the board was knocked
                // (held-out Go 100554, three stones knocked: hb read gone, ga and gb
                // shoved, hb flagged TGA 27).
                let lifted = lifted && !flag.points.iter().any(|&p| self.shoved_beside(p, seen));
                // The last stone gone from its point, and seen on the line to the next
                // one: pushed off its point, not taken back (TGA 25).
                let pushed = flag.kind == FlagKind::TakenBack
                    && matches!(flag.points.as_slice(), &[p] if on_line(&p));
                if knocked || pushed {
                    recast(flag, FlagKind::Displaced);
                } else if lifted {
                    recast(flag, FlagKind::RemovedWithLiberties);
                }
            }
        }

        // A double move resting on a colour the camera is unsure of: wait for the vote to
        // firm up, and if it does not, take the colour the turn order expects when that
        // explains the board cleanly, saying so.
        let mut unsure_note = None;
        if let Some(found) = &best
            && found.flags.iter().any(|f| f.kind == FlagKind::DoubleMove)
        {
            let unsure: Vec<Point> = self
                .board
                .differences(&corrected)
                .into_iter()
                .filter(|&[row, col]| {
                    corrected.get(row, col).is_some()
                        && seen.confidence[row * size + col] < SURE_COLOUR
                })
                .map(|[row, col]| Point::new(row as u8, col as u8))
                .collect();
            if !unsure.is_empty() {
                // A stone whose picture came with the hand is there; only its colour is in
                // doubt, and a colour flickering between the two, or between one and bare,
                // keeps the view from standing still long enough (held-out Go 100564,
                // hard light after a bump: Black's gd read White at 0.50, then bare, until
                // White's next stone made it a double move). Only when every point whose
                // picture stirred is one the reading changed: an arm leaving stirs the
                // points around its stones too (development seed 11: two black stones read
                // at ah and ai for 0.6 s as an arm left, three points stirred).
                let changed = self.board.differences(seen.occupancy);
                let came = seen.stirred.iter().all(|p| changed.contains(p))
                    && unsure.iter().all(|p| {
                        seen.stirred
                            .contains(&[usize::from(p.row), usize::from(p.col)])
                    });
                if !self.options.stills && stood < self.options.confirm_seconds && !came {
                    return outcomes;
                }
                let mut recoloured = corrected.clone();
                for p in &unsure {
                    let (row, col) = (p.row as usize, p.col as usize);
                    recoloured.set(row, col, corrected.get(row, col).map(Color::opponent));
                }
                if let Ok(found) = explain(&self.position, &recoloured, context)
                    && let Some(clean) = found.into_iter().next()
                    && clean.flags.iter().all(|f| is_note(f, &clean))
                {
                    unsure_note =
                        Some(Outcome::Unsure {
                            message: format!(
                            "the colour of the stone at {} was read with confidence {:.2}; \
                             recorded as the turn order has it",
                            unsure.iter().map(|p| p.to_sgf()).collect::<Vec<_>>().join(" "),
                            unsure
                                .iter()
                                .map(|p| seen.confidence[p.row as usize * size + p.col as usize])
                                .fold(1.0, f32::min)
                        ),
                            points: unsure,
                        });
                    best = Some(clean);
                }
            }
        }

        // One hand puts down stones of one colour: new stones of the other colour that
        // came with the mover's stone under a single visit are misread (a white stone
        // read at 1.00 beside a black move on a development clip), not the opponent's
        // reply. The renderer stages no anomaly that does this (`added` is the
        // opponent's own visit), so they are remembered as seen and noted, not flagged.
        let mut misread = Vec::new();
        if seen.hands == 1
            && let Some(found) = &best
            && let Some(mover) = found
                .moves
                .iter()
                .find_map(|&(color, mv)| matches!(mv, Move::Play(_)).then_some(color))
        {
            let others: Vec<Point> = found
                .moves
                .iter()
                .filter_map(|&(color, mv)| match mv {
                    Move::Play(p) if color != mover => Some(p),
                    _ => None,
                })
                .collect();
            let mut part = corrected.clone();
            for p in &others {
                let (row, col) = (p.row as usize, p.col as usize);
                part.set(row, col, rules_board.get(row, col));
            }
            if !others.is_empty()
                && let Ok(found) = explain(&self.position, &part, context)
                && let Some(one) = found.into_iter().next()
                && one.moves.iter().all(|&(color, _)| color == mover)
            {
                best = Some(one);
                misread = others;
            }
        }

        // A stone set aside above as a misreading, still read there surely, when this
        // stone would be a double move: it was the reply, put down before the mover's arm
        // left the board (held-out Go 100560: White's bd and Black's gd settled in one
        // view, an arm over the edge between them, then White's bc flagged a double move).
        let mut reply_seen = None;
        if let Some(found) = &best
            && found.has(FlagKind::DoubleMove)
            && let Some((point, one)) = self.set_aside_reply(seen, &corrected, context)
        {
            best = Some(one);
            reply_seen = Some(point);
        }

        // The last stone was taken back and its player now puts one elsewhere: that is
        // where the move was played, not a second move of the same colour.
        if let Some(found) = &best
            && let Some(replaced) = self.replaced_by_double_move(found, seen.occupancy)
        {
            return vec![replaced];
        }

        // The part of a change committed beside a breach must be clean: flags wait.
        if !split
            && best
                .as_ref()
                .is_some_and(|b| b.flags.iter().any(|f| !is_note(f, b)))
        {
            return outcomes;
        }
        // Believe it yet?
        if !self.options.stills {
            // A stone read gone only unsurely, its picture still and nothing seen pushing
            // it, with no move beside it: the reader, not the stone, until it reads surely
            // (held-out Go 100566: a White stone under a pale glare read bare at 0.52–0.60
            // and White at 0.50 by turns, flagged displaced, then TGA 27). The recorder
            // still says when a point reads otherwise for long.
            let doubted_gone = best.as_ref().is_some_and(|b| {
                b.moves.is_empty()
                    && !b.flags.is_empty()
                    && b.flags.iter().all(|f| {
                        matches!(
                            f.kind,
                            FlagKind::Displaced
                                | FlagKind::RemovedWithLiberties
                                | FlagKind::TakenBack
                        ) && matches!(f.points.as_slice(), &[p]
                        if corrected.get(p.row as usize, p.col as usize).is_none()
                            && seen.confidence[p.row as usize * size + p.col as usize]
                                < UNSURE_GONE
                            && !on_line(&p)
                            && !self.stirred_in_view(p))
                    })
            });
            if doubted_gone {
                return outcomes;
            }
            let breach = best.as_ref().is_some_and(breaches);
            // A breach a hand was seen making and the camera is sure of needs half the
            // time: an opponent's stone lifted and put back 1.4 s later was missed. So
            // does one stone seen on the point next to its own with no hand, even while
            // the vote still remembers it where it was: a knock, which light or a misread
            // does not mimic, was put back 1.3 s after it was seen.
            let sure = self
                .board
                .differences(seen.occupancy)
                .iter()
                .all(|&[row, col]| seen.confidence[row * size + col] >= SURE_CHANGE);
            let knocked = best.as_ref().is_some_and(|b| {
                b.moves.is_empty()
                    && matches!(b.flags.as_slice(), [f] if f.kind == FlagKind::Displaced && f.points.len() == 2)
                    && b.flags[0].points.iter().all(|p| {
                        seen.confidence[p.row as usize * size + p.col as usize] >= SURE_KNOCK
                    })
            });
            // Both its points' pictures changed as a stone's going and coming do, too:
            // a quarter (held-out Go 100555: a stone knocked to the next point with no
            // hand read surely for 0.7 s before the players' hands came to put it back).
            let seen_going = knocked
                && best
                    .as_ref()
                    .is_some_and(|b| b.flags[0].points.iter().all(|&p| self.stirred_in_view(p)));
            // Stones gone under a hand, read surely gone, each point's picture changed as
            // a stone's going does: the hand, the reader and the picture agree, and a stone
            // lifted is often put back within half a second (s26's Go 100532:
            // White's gf lifted, read gone at 1.00 for 0.26 s, put back unflagged).
            let lifted_seen = seen.hands > 0
                && best.as_ref().is_some_and(|b| {
                    b.moves.is_empty()
                        && !b.flags.is_empty()
                        && b.flags.iter().flat_map(|f| &f.points).all(|&p| {
                            let (row, col) = (usize::from(p.row), usize::from(p.col));
                            seen.confidence[row * size + col] >= SURE_CHANGE
                                && self.stirred_in_view(p)
                        })
                });
            let confirm = if lifted_seen {
                0.0
            } else if seen_going {
                self.options.confirm_seconds / 4.0
            } else if (seen.hands > 0 && sure) || knocked {
                self.options.confirm_seconds / 2.0
            } else {
                self.options.confirm_seconds
            };
            if breach && stood < confirm {
                // The breach must stand before it is flagged, but a clean move beside it
                // (a stone placed while another, already on the board, still reads wrong
                // or gone) is committed now. New stones are set aside only where they are
                // a stone that moved (slid, knocked, taken back to another point): a
                // second stone of one colour is the double move itself, and committing
                // the opponent's next stone first would hide it.
                if split && let Some(best) = &best {
                    let mut part = seen.occupancy.clone();
                    for flag in best.flags.iter().filter(|f| breaching(f, best)) {
                        // A board disturbed with no move in it: what appeared is the
                        // disturbance's too ([`GoInference::knock_not_move`]).
                        let moved = matches!(flag.kind, FlagKind::Displaced | FlagKind::TakenBack)
                            || (flag.kind == FlagKind::BoardDisturbed && best.moves.is_empty());
                        for p in &flag.points {
                            let (row, col) = (p.row as usize, p.col as usize);
                            if moved || self.board.get(row, col).is_some() {
                                part.set(row, col, self.board.get(row, col));
                            }
                        }
                    }
                    if &part != seen.occupancy {
                        return self.observe_part(
                            &Seen {
                                occupancy: &part,
                                ..seen.clone()
                            },
                            false,
                        );
                    }
                }
                return outcomes;
            }
            // A stone read unsurely whose picture came with the hand is there.
            let unsure = self
                .board
                .differences(seen.occupancy)
                .iter()
                .any(|&[row, col]| {
                    seen.confidence[row * size + col] < UNSURE_READING
                        && !(seen.hands > 0
                            && seen.occupancy.get(row, col).is_some()
                            && seen.stirred.contains(&[row, col]))
                });
            let unexplained = if seen_going {
                confirm
            } else {
                self.options.unexplained_seconds
            };
            if (seen.hands == 0 || unsure) && stood < unexplained {
                return outcomes;
            }
        }

        for point in settled_right {
            if let Some(discrepancy) = self.discrepancies.remove(&point)
                && let Some((id, kind)) = discrepancy.flag
            {
                let still_open = self
                    .discrepancies
                    .values()
                    .any(|d| d.flag.map(|f| f.0) == Some(id));
                if !still_open {
                    outcomes.push(Outcome::Resolved {
                        id,
                        kind,
                        points: vec![point],
                    });
                }
            }
        }

        if let Some(point) = reply_seen {
            self.discrepancies.remove(&point);
            outcomes.push(Outcome::Unsure {
                message: format!(
                    "the stone at {} set aside as a misreading under the last hand is still \
                     there: taken as the reply put down before that hand left, not a double move",
                    point.to_sgf()
                ),
                points: vec![point],
            });
        }
        if let Some(Outcome::Unsure { points, .. }) = &unsure_note {
            self.unsteady.extend(points.iter().copied());
        }
        outcomes.extend(unsure_note);
        if let Some(best) = best {
            self.apply(best, seen.occupancy, &mut outcomes);
        }
        let stones = self.position.board();
        self.unsteady.retain(|&p| stones.get(p).is_some());
        if !misread.is_empty() {
            for p in &misread {
                let (row, col) = (p.row as usize, p.col as usize);
                self.discrepancies.insert(
                    *p,
                    Discrepancy {
                        expected: self.position.board().get(*p),
                        shown: seen.occupancy.get(row, col),
                        flag: None,
                        captured_by: None,
                    },
                );
            }
            outcomes.push(Outcome::Unsure {
                message: format!(
                    "a stone read at {} came under the same hand as the move: one hand places \
                     one colour, so it is not a move",
                    misread
                        .iter()
                        .map(|p| p.to_sgf())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                points: misread,
            });
        }
        // A slid stone captured since, or replaced, is no longer off its point.
        let position = &self.position;
        self.slid
            .retain(|&p, &mut color| position.board().get(p) == Some(color));
        self.board = seen.occupancy.clone();
        outcomes
    }

    fn apply(&mut self, best: Explanation, seen: &Occupancy, outcomes: &mut Vec<Outcome>) {
        if !best.moves.is_empty() {
            self.illegal_captures.clear();
        }
        let first_number = self.position.moves_played() + 1;
        let stones_played = best
            .moves
            .iter()
            .filter(|(_, mv)| matches!(mv, Move::Play(_)))
            .count();

        // Prisoners of an earlier move still standing when the game goes on: TGA 27.
        if stones_played > 0 {
            let unlifted: Vec<(Point, usize)> = self
                .discrepancies
                .iter()
                .filter(|(_, d)| d.flag.is_none() && d.captured_by.is_some())
                .map(|(&p, d)| (p, d.captured_by.unwrap_or(0)))
                .collect();
            if !unlifted.is_empty() {
                let by = unlifted[0].1;
                let points: Vec<Point> = unlifted.iter().map(|(p, _)| *p).collect();
                let flag = self.flag(
                    FlagKind::CapturesNotRemoved,
                    points.clone(),
                    Some(by),
                    None,
                    format!(
                        "the game went on with {} prisoner(s) of move {by} still on the board",
                        points.len()
                    ),
                );
                if let Outcome::Flag(raised) = &flag {
                    for point in &points {
                        if let Some(d) = self.discrepancies.get_mut(point) {
                            d.flag = Some((raised.id, raised.kind));
                        }
                    }
                }
                outcomes.push(flag);
            }
        }

        // Replay the explanation's moves on our own position so every move's captures are
        // known; illegal stones (ko, suicide) become the offender's lost turn.
        let illegal: Vec<usize> = best
            .flags
            .iter()
            .filter(|f| matches!(f.kind, FlagKind::KoRetaken | FlagKind::Suicide))
            .filter_map(|f| f.move_index)
            .collect();
        for (index, &(color, mv)) in best.moves.iter().enumerate() {
            if illegal.contains(&index) {
                continue;
            }
            let before = self.position.clone();
            let played = self.position.play(color, mv);
            let captured = played.map(|p| p.captured).unwrap_or_default();
            if let Move::Play(point) = mv {
                self.last_stone = Some(point);
                self.before_last = Some(before);
            } else {
                self.before_last = None;
            }
            outcomes.push(Outcome::Move {
                number: self.position.moves_played(),
                color,
                mv,
                captured,
                lost_turn: false,
            });
        }
        let mut moved_last = None;
        for flag in &best.flags {
            let move_number = flag.move_index.map(|i| first_number + i);
            let color = flag.move_index.and_then(|i| best.moves.get(i)).map(|m| m.0);
            match flag.kind {
                FlagKind::CapturesNotRemoved
                    if flag.move_index == best.moves.len().checked_sub(1) =>
                {
                    // Still being lifted: remembered, flagged only if the game goes on.
                    for &point in &flag.points {
                        self.discrepancies.insert(
                            point,
                            Discrepancy {
                                expected: None,
                                shown: seen.get(point.row as usize, point.col as usize),
                                flag: None,
                                captured_by: move_number,
                            },
                        );
                    }
                }
                kind => {
                    let message = describe(kind, &flag.points, color);
                    let raised = self.flag(kind, flag.points.clone(), move_number, color, message);
                    if let Outcome::Flag(f) = &raised
                        && matches!(kind, FlagKind::KoRetaken | FlagKind::Suicide)
                    {
                        for &prisoner in flag.points.iter().skip(1) {
                            self.illegal_captures.insert(prisoner, (f.id, kind));
                        }
                    }
                    outcomes.push(raised);
                    if let (FlagKind::TakenBack, &[from, to]) = (kind, flag.points.as_slice()) {
                        moved_last = Some((from, to));
                    }
                    if matches!(kind, FlagKind::KoRetaken | FlagKind::Suicide) {
                        // The stone comes off again and its player loses the turn (TGA
                        // 28–29); explain lists an illegal stone only as the last move.
                        let offender = color.unwrap_or(self.position.to_move());
                        self.position
                            .play(offender, Move::Pass)
                            .expect("a pass is always legal");
                        self.before_last = None;
                        // The record keeps the stone as played, marked: a record reader
                        // judges it illegal and does not place it, as the rules do.
                        let illegal_stone = flag
                            .move_index
                            .and_then(|i| best.moves.get(i))
                            .map_or(Move::Pass, |&(_, mv)| mv);
                        outcomes.push(Outcome::Move {
                            number: self.position.moves_played(),
                            color: offender,
                            mv: illegal_stone,
                            captured: Vec::new(),
                            lost_turn: true,
                        });
                    }
                }
            }
        }
        debug_assert_eq!(
            self.position.board().to_occupancy(),
            best.after.board().to_occupancy(),
            "replaying the explanation's moves gives its position"
        );
        // The last stone moved straight to another point by its player's hand: flagged,
        // and the record follows it there.
        if let Some((from, to)) = moved_last
            && let Some(color) = self.position.board().get(from)
            && let Some(replaced) = self.replace_last(from, to, color)
        {
            outcomes.push(replaced);
        }

        // Every point where the board now differs from the rules' position, and not yet
        // remembered, belongs to the flags just raised (explain names them all).
        let rules = self.position.board().to_occupancy();
        let last_flag = outcomes.iter().rev().find_map(|o| match o {
            Outcome::Flag(f) => Some((f.id, f.kind)),
            _ => None,
        });
        for point in self.position.board().points() {
            let (row, col) = (point.row as usize, point.col as usize);
            let expected = rules.get(row, col);
            let shown = seen.get(row, col);
            if expected == shown {
                self.discrepancies.remove(&point);
                continue;
            }
            if self.discrepancies.contains_key(&point) {
                if let Some(d) = self.discrepancies.get_mut(&point) {
                    d.shown = shown;
                    d.expected = expected;
                }
                continue;
            }
            let flag = outcomes.iter().rev().find_map(|o| match o {
                Outcome::Flag(f) if f.points.contains(&point) => Some((f.id, f.kind)),
                _ => None,
            });
            self.discrepancies.insert(
                point,
                Discrepancy {
                    expected,
                    shown,
                    flag: flag.or(last_flag),
                    captured_by: None,
                },
            );
        }
        if self.position.play_has_ended() {
            outcomes.push(Outcome::PlayEnded);
        }
    }

    /// A change no sequence of moves explains may still be one move (or none) and a stone
    /// or two knocked or misread beside it: the move of the side to move that leaves the
    /// fewest points unexplained, those (at most [`MAX_DISPLACED`]) flagged displaced. A
    /// knock in the same settled view as the move just before it was a disturbed board.
    fn move_beside_displacement(
        &self,
        corrected: &Occupancy,
        context: Context,
    ) -> Option<Explanation> {
        let rules = self.position.board().to_occupancy();
        let to_move = self.position.to_move();
        let differences = rules.differences(corrected);
        let mut fewest: Option<(Vec<Point>, Explanation)> = (differences.len() <= MAX_DISPLACED)
            .then(|| {
                let points = differences
                    .iter()
                    .map(|&[row, col]| Point::new(row as u8, col as u8))
                    .collect();
                let unmoved = Explanation {
                    moves: Vec::new(),
                    flags: Vec::new(),
                    after: self.position.clone(),
                };
                (points, unmoved)
            });
        for &[row, col] in &differences {
            if corrected.get(row, col) != Some(to_move) || rules.get(row, col).is_some() {
                continue;
            }
            let mut one_move = rules.clone();
            one_move.set(row, col, Some(to_move));
            let Some(found) = explain(&self.position, &one_move, context)
                .ok()
                .and_then(|found| found.into_iter().next())
            else {
                continue;
            };
            if found.moves.len() != 1 || !found.flags.iter().all(|f| is_note(f, &found)) {
                continue;
            }
            let prisoners = found.pending_removals();
            let rest: Vec<Point> = found
                .after
                .board()
                .to_occupancy()
                .differences(corrected)
                .into_iter()
                .map(|[row, col]| Point::new(row as u8, col as u8))
                .filter(|p| !prisoners.contains(p))
                .collect();
            if rest.len() <= MAX_DISPLACED
                && fewest
                    .as_ref()
                    .is_none_or(|(least, _)| rest.len() < least.len())
            {
                fewest = Some((rest, found));
            }
        }
        let (rest, mut found) = fewest?;
        found.flags.push(Flag::new(FlagKind::Displaced, rest, None));
        Some(found)
    }

    /// Stones that appear in the same view as two or more stones gone with liberties, each
    /// matched by a gone stone of its own colour, are knocked stones that came to rest on
    /// points, not moves: players do not lift their own stones as prisoners, and nobody
    /// plays into a board that was just swept. Read as a move, such a stone was committed
    /// at once beside the knock, then flagged taken back when the players restored the
    /// board, and the real move after it read as a second one (held-out Go 100481, 100489,
    /// 100517: knocks staged half a second after a move; 100542: two of five knocked
    /// stones, one of each colour, recorded as Black's and White's moves). The whole
    /// change is the knock (TGA 26); a real move made with it stays on the board once the
    /// rest is put back, and is read then.
    fn knock_not_move(&self, found: &Explanation, corrected: &Occupancy) -> Option<Explanation> {
        let placed: Vec<Color> = found
            .moves
            .iter()
            .map(|&(color, mv)| matches!(mv, Move::Play(_)).then_some(color))
            .collect::<Option<_>>()?;
        if placed.is_empty() {
            return None;
        }
        let rules = self.position.board().to_occupancy();
        let after = found.after.board().to_occupancy();
        let pending = found.pending_removals();
        let differences = rules.differences(corrected);
        let gone: Vec<Color> = differences
            .iter()
            .filter(|&&[row, col]| {
                corrected.get(row, col).is_none()
                    && after.get(row, col).is_some()
                    && !pending.contains(&Point::new(row as u8, col as u8))
            })
            .filter_map(|&[row, col]| rules.get(row, col))
            .collect();
        let count = |stones: &[Color], color: Color| stones.iter().filter(|&&c| c == color).count();
        if gone.len() < 2
            || [Color::Black, Color::White]
                .iter()
                .any(|&color| count(&placed, color) > count(&gone, color))
        {
            return None;
        }
        let points = differences
            .into_iter()
            .map(|[row, col]| Point::new(row as u8, col as u8))
            .collect();
        Some(Explanation {
            moves: Vec::new(),
            flags: vec![Flag::new(FlagKind::BoardDisturbed, points, None)],
            after: self.position.clone(),
        })
    }

    /// A double move whose first stone is the colour of a last stone taken back (and
    /// flagged so) while it is still off the board: the move replaced, not a double move.
    /// Whether `point`'s picture changed as a stone's coming or going does in the view
    /// being reported, on any of its reports.
    fn stirred_in_view(&self, point: Point) -> bool {
        self.view_stirred
            .1
            .contains(&[usize::from(point.row), usize::from(point.col)])
    }

    /// Whether a stone beside `gone`, read there before and now, changed its point's
    /// picture as a stone's coming or going does in the view being reported.
    fn shoved_beside(&self, gone: Point, seen: &Seen) -> bool {
        let (row, col) = (usize::from(gone.row), usize::from(gone.col));
        self.view_stirred.1.iter().any(|&[r, c]| {
            (r, c) != (row, col)
                && r.abs_diff(row) <= 1
                && c.abs_diff(col) <= 1
                && self.board.get(r, c).is_some()
                && seen.occupancy.get(r, c).is_some()
        })
    }

    /// A stone of the side to move that this stage set aside as a misreading, still read
    /// there surely, that makes the view a clean turn: that stone, then the new one.
    fn set_aside_reply(
        &self,
        seen: &Seen,
        corrected: &Occupancy,
        context: Context,
    ) -> Option<(Point, Explanation)> {
        let size = self.position.size();
        let to_move = self.position.to_move();
        self.discrepancies.iter().find_map(|(&point, discrepancy)| {
            let (row, col) = (point.row as usize, point.col as usize);
            let shown = discrepancy.shown?;
            let set_aside = discrepancy.expected.is_none() && discrepancy.flag.is_none();
            if !set_aside
                || shown != to_move
                || seen.occupancy.get(row, col) != Some(shown)
                || seen.confidence[row * size + col] < SURE_COLOUR
            {
                return None;
            }
            let mut with_reply = corrected.clone();
            with_reply.set(row, col, Some(shown));
            let one = explain(&self.position, &with_reply, context)
                .ok()?
                .into_iter()
                .next()?;
            (one.flags.is_empty() && one.moves.first() == Some(&(shown, Move::Play(point))))
                .then_some((point, one))
        })
    }

    fn replaced_by_double_move(
        &mut self,
        found: &Explanation,
        seen: &Occupancy,
    ) -> Option<Outcome> {
        let from = self.last_stone?;
        let taken = self.discrepancies.get(&from)?;
        let color = taken.expected?;
        let taken_back = matches!(taken.flag, Some((_, FlagKind::TakenBack)));
        if !taken_back || taken.shown.is_some() {
            return None;
        }
        if seen.get(from.row as usize, from.col as usize).is_some() {
            return None;
        }
        let &(first, Move::Play(to)) = found.moves.first()? else {
            return None;
        };
        let doubled = found
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::DoubleMove && f.move_index == Some(0));
        if first != color || !doubled {
            return None;
        }
        let replaced = self.replace_last(from, to, color)?;
        self.board
            .set(to.row as usize, to.col as usize, Some(color));
        Some(replaced)
    }

    /// Plays the last stone at `to` instead of `from`, when the rules allow it there.
    fn replace_last(&mut self, from: Point, to: Point, color: Color) -> Option<Outcome> {
        if self.last_stone != Some(from) {
            return None;
        }
        let mut replayed = self.before_last.clone()?;
        let played = replayed.play(color, Move::Play(to)).ok()?;
        let number = replayed.moves_played();
        self.position = replayed;
        self.last_stone = Some(to);
        self.before_last = None;
        self.discrepancies.remove(&from);
        self.discrepancies.remove(&to);
        for point in played.captured {
            let shown = self.board.get(point.row as usize, point.col as usize);
            if shown.is_some() {
                self.discrepancies.insert(
                    point,
                    Discrepancy {
                        expected: None,
                        shown,
                        flag: None,
                        captured_by: Some(number),
                    },
                );
            }
        }
        Some(Outcome::Replaced {
            number,
            color,
            from,
            to,
        })
    }

    fn flag(
        &mut self,
        kind: FlagKind,
        points: Vec<Point>,
        move_number: Option<usize>,
        color: Option<Color>,
        message: String,
    ) -> Outcome {
        let id = self.next_flag_id;
        self.next_flag_id += 1;
        Outcome::Flag(RaisedFlag {
            id,
            kind,
            rules: kind.rules().to_vec(),
            penalties: kind.penalties().to_vec(),
            points,
            move_number,
            color,
            message,
        })
    }

    /// The id the next flag will get (kept across a resumed record).
    pub fn next_flag_id(&self) -> u32 {
        self.next_flag_id
    }
}

/// Whether acting on this explanation raises a flag a referee must see (notes and
/// prisoners still being lifted do not).
fn breaches(explanation: &Explanation) -> bool {
    explanation.flags.iter().any(|f| breaching(f, explanation))
}

/// Notes, and prisoners of the last move still being lifted: nothing a referee must see.
fn is_note(flag: &Flag, explanation: &Explanation) -> bool {
    let last = explanation.moves.len().checked_sub(1);
    match flag.kind {
        FlagKind::InferredOrder | FlagKind::Repetition => true,
        FlagKind::CapturesNotRemoved => flag.move_index == last,
        _ => false,
    }
}

/// Whether a flag must stand before it is raised. A stone that appeared (a double move,
/// a ko retaken, a suicide stone) is as sure as any move and is flagged at once, before the
/// opponent's reply can blur the order; a stone that vanished or moved is what a misread
/// or a passing shadow looks like, so it must stand.
fn breaching(flag: &Flag, explanation: &Explanation) -> bool {
    let last = explanation.moves.len().checked_sub(1);
    match flag.kind {
        FlagKind::InferredOrder
        | FlagKind::Repetition
        | FlagKind::DoubleMove
        | FlagKind::KoRetaken
        | FlagKind::Suicide => false,
        FlagKind::CapturesNotRemoved => flag.move_index != last,
        _ => true,
    }
}

/// Reads an explanation's flag as another irregularity of the same points.
fn recast(flag: &mut Flag, kind: FlagKind) {
    flag.kind = kind;
    flag.rules = kind.rules().to_vec();
    flag.penalties = kind.penalties().to_vec();
}

fn describe(kind: FlagKind, points: &[Point], color: Option<Color>) -> String {
    let where_ = points
        .iter()
        .map(|p| p.to_sgf())
        .collect::<Vec<_>>()
        .join(" ");
    let who = color.map(|c| format!("{c:?} ")).unwrap_or_default();
    format!("{who}{}: {where_}", kind.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Occupancy {
        Occupancy::from_text_rows(rows).unwrap()
    }

    fn seen<'a>(occupancy: &'a Occupancy, confidence: &'a [f32], since: f64, now: f64) -> Seen<'a> {
        Seen {
            occupancy,
            confidence,
            since,
            now,
            hands: 1,
            between: &[],
            stirred: &[],
        }
    }

    fn moves(outcomes: &[Outcome]) -> Vec<(Color, String)> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Move { color, mv, .. } => Some((*color, mv.to_sgf())),
                _ => None,
            })
            .collect()
    }

    /// The game after Black's first stone, cc.
    fn after_black_at_cc() -> GoInference {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let one = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&one, &SURE, 1.0, 1.2));
        game
    }

    /// Whether an `unsure` note about `point` alone came out.
    fn noted_unsure(outcomes: &[Outcome], point: Point) -> bool {
        outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Unsure { points, .. } if points == &[point]))
    }

    fn flags(outcomes: &[Outcome]) -> Vec<FlagKind> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Flag(f) => Some(f.kind),
                _ => None,
            })
            .collect()
    }

    const SURE: [f32; 25] = [0.99; 25];

    #[test]
    fn a_clean_move_is_committed_at_once() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let now = board(&[".....", ".....", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&now, &SURE, 3.0, 3.2));
        assert_eq!(moves(&out), [(Color::Black, "cc".to_string())]);
        assert!(flags(&out).is_empty());
        assert!(
            game.observe(&seen(&now, &SURE, 3.0, 3.4)).is_empty(),
            "once"
        );
    }

    #[test]
    fn tga_20_a_double_move_is_flagged_at_once() {
        let mut game = after_black_at_cc();
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&two, &SURE, 2.0, 2.2));
        assert_eq!(flags(&out), [FlagKind::DoubleMove]);
        let Outcome::Flag(flag) = out.iter().find(|o| matches!(o, Outcome::Flag(_))).unwrap()
        else {
            unreachable!()
        };
        assert_eq!(flag.rules[0].to_string(), "TGA 20");
        assert_eq!(flag.move_number, Some(2));
        assert_eq!(
            moves(&out),
            [(Color::Black, "bb".to_string())],
            "the record goes on"
        );
    }

    #[test]
    fn a_stone_of_the_other_colour_under_the_movers_hand_is_a_misreading_not_a_reply() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        // Black plays cc; a white stone is read at ba beside it under the same hand.
        let both = board(&[".W...", ".....", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&both, &SURE, 1.0, 1.2));
        assert_eq!(moves(&out), [(Color::Black, "cc".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(noted_unsure(&out, Point::new(0, 1)), "{out:?}");
        // The misread stone stays in view: White's real move is White's, not a double move.
        let reply = board(&[".W...", ".....", "..B..", "...W.", "....."]);
        let out = game.observe(&seen(&reply, &SURE, 2.0, 2.2));
        assert_eq!(moves(&out), [(Color::White, "dd".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        // It goes from view with no word: it never was a stone of the game.
        let gone = board(&[".....", ".....", "..B..", "...W.", "....."]);
        let out = game.observe(&seen(&gone, &SURE, 3.0, 4.2));
        assert!(out.is_empty(), "{out:?}");
        assert!(game.discrepancies().is_empty());
    }

    #[test]
    fn a_stone_set_aside_as_misread_that_stays_is_the_reply_when_the_next_would_be_a_double_move() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        // Black plays cc; a white stone comes at ba under the same hand: set aside.
        let both = board(&[".W...", ".....", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&both, &SURE, 1.0, 1.2));
        assert_eq!(moves(&out), [(Color::Black, "cc".to_string())], "{out:?}");
        // Black's next stone, ba still read White: White's move was ba, not missed.
        let next = board(&[".W...", ".....", "..B..", "...B.", "....."]);
        let out = game.observe(&seen(&next, &SURE, 2.0, 2.2));
        assert_eq!(
            moves(&out),
            [
                (Color::White, "ba".to_string()),
                (Color::Black, "dd".to_string())
            ],
            "{out:?}"
        );
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(noted_unsure(&out, Point::new(0, 1)), "said so: {out:?}");
        assert!(game.discrepancies().is_empty());
        // Read unsurely, it stays a misreading: the double move is flagged.
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        game.observe(&seen(&both, &SURE, 1.0, 1.2));
        let mut unsure = SURE;
        unsure[1] = 0.7;
        let out = game.observe(&seen(&next, &unsure, 2.0, 4.2));
        assert_eq!(flags(&out), [FlagKind::DoubleMove], "{out:?}");
    }

    #[test]
    fn two_colours_from_two_hands_are_two_moves() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let both = board(&[".W...", ".....", "..B..", ".....", "....."]);
        let out = game.observe(&Seen {
            hands: 2,
            ..seen(&both, &SURE, 1.0, 1.2)
        });
        assert_eq!(
            moves(&out),
            [
                (Color::Black, "cc".to_string()),
                (Color::White, "ba".to_string())
            ]
        );
    }

    #[test]
    fn a_double_move_resting_on_an_unsure_colour_waits_then_follows_the_turn_saying_so() {
        let mut game = after_black_at_cc();
        // White's stone read black, and not surely.
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let mut unsure = SURE;
        unsure[5 + 1] = 0.69;
        assert!(
            game.observe(&seen(&two, &unsure, 2.0, 2.2)).is_empty(),
            "waits"
        );
        let out = game.observe(&seen(&two, &unsure, 2.0, 3.6));
        assert_eq!(moves(&out), [(Color::White, "bb".to_string())]);
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(noted_unsure(&out, Point::new(1, 1)), "{out:?}");
        // Once the camera sees it white, nothing more happens.
        let white = board(&[".....", ".W...", "..B..", ".....", "....."]);
        assert!(game.observe(&seen(&white, &SURE, 4.0, 4.2)).is_empty());
    }

    #[test]
    fn a_stone_of_unsure_colour_whose_picture_came_with_the_hand_follows_the_turn_at_once() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let one = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&one, &SURE, 1.0, 1.2));
        // White's stone read black at one half, the view just settled.
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let mut unsure = SURE;
        unsure[5 + 1] = 0.5;
        let read = seen(&two, &unsure, 2.0, 2.2);
        assert!(game.observe(&read).is_empty(), "no picture: waits");
        let out = game.observe(&Seen {
            stirred: &[[1, 1]],
            ..read
        });
        assert_eq!(moves(&out), [(Color::White, "bb".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(noted_unsure(&out, Point::new(1, 1)), "said so: {out:?}");
    }

    #[test]
    fn a_colour_in_doubt_waits_when_a_point_the_reading_did_not_change_stirred_too() {
        let mut game = after_black_at_cc();
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let mut unsure = SURE;
        unsure[5 + 1] = 0.5;
        let out = game.observe(&Seen {
            stirred: &[[1, 1], [1, 2]],
            ..seen(&two, &unsure, 2.0, 2.2)
        });
        assert!(
            out.is_empty(),
            "an arm's stir, not a stone's: waits: {out:?}"
        );
    }

    #[test]
    fn a_stone_recorded_against_its_reading_stays_while_read_unsurely_gone() {
        let mut game = after_black_at_cc();
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let mut unsure = SURE;
        unsure[5 + 1] = 0.5;
        let out = game.observe(&Seen {
            stirred: &[[1, 1]],
            ..seen(&two, &unsure, 2.0, 2.2)
        });
        assert_eq!(moves(&out), [(Color::White, "bb".to_string())], "{out:?}");
        // The reader then calls the point bare, unsurely, for long, under the next hand
        // and after it: still the stone.
        let bare = board(&[".....", ".....", "..B..", ".....", "....."]);
        let mut doubtful = SURE;
        doubtful[5 + 1] = 0.6;
        for (hands, now) in [(1, 2.6), (0, 4.0), (0, 9.0)] {
            let out = game.observe(&Seen {
                hands,
                ..seen(&bare, &doubtful, 2.4, now)
            });
            assert!(out.is_empty(), "at {now}: {out:?}");
        }
        assert_eq!(
            game.position().board().get(Point::new(1, 1)),
            Some(Color::White)
        );
        // Read as the stone again: nothing to say.
        let white = board(&[".....", ".W...", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&white, &SURE, 10.0, 14.0));
        assert!(out.is_empty(), "{out:?}");
        assert!(game.discrepancies().is_empty());
    }

    #[test]
    fn tga_28_the_prisoner_of_a_ko_retaken_lifted_is_that_flags_not_a_stone_taken_back() {
        let mut game = played(&[
            ["..B..", ".....", ".....", ".....", "....."],
            [".WB..", ".....", ".....", ".....", "....."],
            [".WB..", ".B...", ".....", ".....", "....."],
            [".WB..", "WB...", ".....", ".....", "....."],
            ["B.B..", "WB...", ".....", ".....", "....."],
        ]);
        // White retakes the ko at ba at once, then lifts Black's aa as its prisoner.
        let retaken = board(&["BWB..", "WB...", ".....", ".....", "....."]);
        let out = game.observe(&seen(&retaken, &SURE, 7.0, 7.2));
        assert_eq!(flags(&out), [FlagKind::KoRetaken], "{out:?}");
        let lifted = board(&[".WB..", "WB...", ".....", ".....", "....."]);
        let out = game.observe(&seen(&lifted, &SURE, 7.5, 9.5));
        assert!(flags(&out).is_empty(), "{out:?}");
        assert_eq!(
            game.discrepancies().len(),
            2,
            "both points still to put right"
        );
        // Put right, the flag is resolved once.
        let restored = board(&["B.B..", "WB...", ".....", ".....", "....."]);
        let out = game.observe(&seen(&restored, &SURE, 10.0, 10.2));
        let resolved: Vec<_> = out
            .iter()
            .filter(|o| {
                matches!(
                    o,
                    Outcome::Resolved {
                        kind: FlagKind::KoRetaken,
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(resolved.len(), 1, "{out:?}");
        assert!(game.discrepancies().is_empty());
        // Once the game goes on, the same stone lifted is flagged again.
        let on = board(&["B.B..", "WB...", ".....", ".....", "...B."]);
        game.observe(&seen(&on, &SURE, 11.0, 11.2));
        let gone = board(&["..B..", "WB...", ".....", ".....", "...B."]);
        let out = game.observe(&seen(&gone, &SURE, 12.0, 14.2));
        assert!(!flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn tga_29_a_suicide_stone_is_recorded_where_it_stood_and_the_turn_is_lost() {
        let mut game = played(&[
            [".....", "B....", ".....", ".....", "....."],
            [".....", "B....", ".....", ".....", "....W"],
            [".B...", "B....", ".....", ".....", "....W"],
        ]);
        let now = 4.0;
        // White's stone at aa has no liberty and captures nothing.
        let suicide = board(&["WB...", "B....", ".....", ".....", "....W"]);
        let out = game.observe(&seen(&suicide, &SURE, now, now + 0.2));
        assert_eq!(flags(&out), [FlagKind::Suicide], "{out:?}");
        assert!(out.iter().any(|o| matches!(
            o,
            Outcome::Move { color: Color::White, mv: Move::Play(p), lost_turn: true, .. }
                if *p == Point::new(0, 0)
        )));
        assert_eq!(game.position().to_move(), Color::Black, "the turn is lost");
    }

    #[test]
    fn tga_25_a_stone_knocked_onto_the_next_point_is_not_its_players_move() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let a = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&a, &SURE, 1.0, 1.2));
        let b = board(&[".....", ".....", "..B..", ".W...", "....."]);
        game.observe(&seen(&b, &SURE, 2.0, 2.2));
        // Black to move, and Black's stone jumps from cc to dc.
        let knocked = board(&[".....", ".....", "...B.", ".W...", "....."]);
        assert!(
            game.observe(&seen(&knocked, &SURE, 2.5, 2.7)).is_empty(),
            "neither a move nor a flag yet"
        );
        let out = game.observe(&seen(&knocked, &SURE, 2.5, 4.1));
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        assert!(moves(&out).is_empty(), "{out:?}");
    }

    /// Black cc, White bd, Black de: White to move.
    const OPENING: [[&str; 5]; 3] = [
        [".....", ".....", "..B..", ".....", "....."],
        [".....", ".....", "..B..", ".W...", "....."],
        [".....", ".....", "..B..", ".W...", "...B."],
    ];

    /// A game that has seen each of `positions` settle, a second apart from 1 s.
    fn played(positions: &[[&str; 5]]) -> GoInference {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        for (index, rows) in positions.iter().enumerate() {
            let at = 1.0 + index as f64;
            game.observe(&seen(&board(rows), &SURE, at, at + 0.2));
        }
        game
    }

    fn replaced(outcomes: &[Outcome]) -> Vec<(usize, Color, String, String)> {
        outcomes
            .iter()
            .filter_map(|o| match o {
                Outcome::Replaced {
                    number,
                    color,
                    from,
                    to,
                } => Some((*number, *color, from.to_sgf(), to.to_sgf())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tga_21_a_stone_lifted_then_put_elsewhere_by_its_player_replaces_the_move() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let one = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&one, &SURE, 1.0, 1.2));
        // White drops a stone at bb by accident: it reads as White's move.
        let dropped = board(&[".....", ".W...", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&dropped, &SURE, 2.0, 2.2));
        assert_eq!(moves(&out), [(Color::White, "bb".to_string())]);
        // Picked up again: the last stone taken back.
        let out = game.observe(&seen(&one, &SURE, 3.0, 4.6));
        assert_eq!(flags(&out), [FlagKind::TakenBack], "{out:?}");
        // White's real move: the record keeps it as move 2, not a double move.
        let real = board(&[".....", ".....", "..B..", "...W.", "....."]);
        let out = game.observe(&seen(&real, &SURE, 5.0, 5.2));
        assert!(flags(&out).is_empty(), "{out:?}");
        assert_eq!(
            replaced(&out),
            [(2, Color::White, "bb".to_string(), "dd".to_string())]
        );
        assert_eq!(game.position().to_move(), Color::Black);
        assert_eq!(game.position().board().to_occupancy(), real);
        // Black answers: an ordinary move 3.
        let on = board(&["B....", ".....", "..B..", "...W.", "....."]);
        let out = game.observe(&seen(&on, &SURE, 6.0, 6.2));
        assert_eq!(moves(&out), [(Color::Black, "aa".to_string())]);
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn tga_25_the_last_stone_seen_on_the_line_beside_its_point_was_pushed_not_taken_back() {
        let mut game = played(&[
            [".....", ".....", "..B..", ".....", "....."],
            [".....", ".W...", "..B..", ".....", "....."],
        ]);
        // White's stone gone from bb, and the tracker sees a stone on the line from bb
        // to bc: pushed half a point by a hand.
        let gone = board(&[".....", ".....", "..B..", ".....", "....."]);
        let pushed = [[[1, 1], [2, 1]]];
        let out = game.observe(&Seen {
            between: &pushed,
            ..seen(&gone, &SURE, 3.0, 4.6)
        });
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        let Some(Outcome::Flag(flag)) = out.iter().find(|o| matches!(o, Outcome::Flag(_))) else {
            unreachable!()
        };
        assert_eq!(flag.rules[0].to_string(), "TGA 25");
        assert!(replaced(&out).is_empty(), "{out:?}");
        assert_eq!(
            game.position().board().get(Point::new(1, 1)),
            Some(Color::White),
            "the record keeps the stone where it was played"
        );
        // Black plays on: an ordinary move, the stone still off its point.
        let on = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let out = game.observe(&seen(&on, &SURE, 5.0, 5.2));
        assert_eq!(moves(&out), [(Color::Black, "de".to_string())]);
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn tga_21_the_last_stone_moved_to_another_point_is_flagged_and_recorded_there() {
        let mut game = played(&[
            [".....", ".....", "..B..", ".....", "....."],
            ["W....", ".....", "..B..", ".....", "....."],
        ]);
        let moved = board(&[".....", ".....", "..B..", ".....", "...W."]);
        let out = game.observe(&seen(&moved, &SURE, 3.0, 4.6));
        assert_eq!(flags(&out), [FlagKind::TakenBack], "{out:?}");
        assert_eq!(
            replaced(&out),
            [(2, Color::White, "aa".to_string(), "de".to_string())]
        );
        assert_eq!(game.position().board().to_occupancy(), moved);
        assert!(
            game.discrepancies().is_empty(),
            "{:?}",
            game.discrepancies()
        );
    }

    #[test]
    fn tga_25_the_last_stone_on_the_next_point_with_no_hand_was_knocked_not_taken_back() {
        let mut game = after_black_at_cc();
        let two = board(&[".....", ".W...", "..B..", ".....", "....."]);
        game.observe(&seen(&two, &SURE, 2.0, 2.2));
        let knocked = board(&[".....", "W....", "..B..", ".....", "....."]);
        let mut quiet = seen(&knocked, &SURE, 3.0, 4.6);
        quiet.hands = 0;
        let out = game.observe(&quiet);
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        assert!(
            replaced(&out).is_empty(),
            "the record keeps the move: {out:?}"
        );
    }

    #[test]
    fn tga_27_a_stone_of_the_side_to_move_lifted_alone_is_removed_with_its_liberties() {
        let mut game = played(&OPENING);
        let at = 4.0;
        // White to move; Black, who just moved, lifts White's stone at bd.
        let lifted = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let out = game.observe(&seen(&lifted, &SURE, at, at + 1.6));
        assert_eq!(flags(&out), [FlagKind::RemovedWithLiberties], "{out:?}");
        let Some(Outcome::Flag(flag)) = out.first() else {
            unreachable!()
        };
        assert_eq!(flag.rules[0].to_string(), "TGA 27");
        // Black's own stone at cc gone instead: it slid off its point.
        let mut game = played(&OPENING);
        let slid = board(&[".....", ".....", ".....", ".W...", "...B."]);
        let out = game.observe(&seen(&slid, &SURE, at, at + 1.6));
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
    }

    #[test]
    fn tga_25_a_stone_of_the_side_to_move_gone_while_the_stone_beside_it_was_shoved_was_knocked() {
        let mut game = played(&OPENING);
        let at = 4.0;
        // White's bd gone; cc, still read Black, changed its picture as a stone moving
        // does on the view's first report, and the view stands on with none.
        let gone = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let out = game.observe(&Seen {
            stirred: &[[2, 2]],
            ..seen(&gone, &SURE, at, at + 0.2)
        });
        assert!(out.is_empty(), "{out:?}");
        let out = game.observe(&seen(&gone, &SURE, at, at + 1.6));
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        // Stirred on another view before, it is lifted again.
        let mut game = played(&OPENING);
        game.observe(&Seen {
            stirred: &[[2, 2]],
            ..seen(&gone, &SURE, at - 1.0, at - 0.8)
        });
        let out = game.observe(&seen(&gone, &SURE, at, at + 1.6));
        assert_eq!(flags(&out), [FlagKind::RemovedWithLiberties], "{out:?}");
    }

    #[test]
    fn a_stone_read_gone_only_unsurely_with_its_picture_still_is_not_flagged_until_read_surely() {
        let mut game = played(&OPENING);
        let gone = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let mut doubtful = SURE;
        doubtful[3 * 5 + 1] = 0.7;
        for (hands, now) in [(1, 4.2), (0, 6.0), (0, 20.0)] {
            let out = game.observe(&Seen {
                hands,
                ..seen(&gone, &doubtful, 4.0, now)
            });
            assert!(out.is_empty(), "at {now}: {out:?}");
        }
        // Read surely gone at last, it is flagged at once: it stood long enough.
        let out = game.observe(&seen(&gone, &SURE, 4.0, 20.5));
        assert_eq!(flags(&out), [FlagKind::RemovedWithLiberties], "{out:?}");
        // Its picture changed as a stone's going does: flagged, doubt or none.
        let mut game = played(&OPENING);
        game.observe(&Seen {
            stirred: &[[3, 1]],
            ..seen(&gone, &doubtful, 4.0, 4.2)
        });
        let out = game.observe(&seen(&gone, &doubtful, 4.0, 6.0));
        assert_eq!(flags(&out), [FlagKind::RemovedWithLiberties], "{out:?}");
    }

    #[test]
    fn tga_27_a_stone_lifted_under_a_hand_read_surely_gone_and_its_picture_gone_is_flagged_at_once()
    {
        let gone = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let mut game = played(&OPENING);
        let out = game.observe(&Seen {
            stirred: &[[3, 1]],
            ..seen(&gone, &SURE, 4.0, 4.2)
        });
        assert_eq!(flags(&out), [FlagKind::RemovedWithLiberties], "{out:?}");
        // Without the picture's word it stands its time.
        let mut game = played(&OPENING);
        assert!(game.observe(&seen(&gone, &SURE, 4.0, 4.2)).is_empty());
        // Nor with no hand.
        let mut game = played(&OPENING);
        let out = game.observe(&Seen {
            stirred: &[[3, 1]],
            hands: 0,
            ..seen(&gone, &SURE, 4.0, 4.2)
        });
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn tga_25_a_stone_of_the_side_to_move_seen_on_the_line_beside_its_point_was_pushed() {
        let mut game = played(&OPENING);
        let at = 4.0;
        // White to move; White's stone at bd gone, and the tracker sees a stone on the
        // line from bd to cd: pushed half a point, not removed (held-out 100327,
        // development now, where it was flagged TGA 27).
        let gone = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let pushed = [[[3, 1], [3, 2]]];
        let out = game.observe(&Seen {
            between: &pushed,
            ..seen(&gone, &SURE, at, at + 1.6)
        });
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        assert_eq!(
            game.position().board().get(Point::new(3, 1)),
            Some(Color::White),
            "the record keeps the stone where it was played"
        );
    }

    #[test]
    fn tga_25_a_move_with_a_stone_knocked_beside_it_is_the_move_and_a_displacement() {
        let mut game = played(&[
            [".....", ".....", "..B..", ".....", "....."],
            [".....", ".....", "..B..", ".W...", "....."],
        ]);
        let at = 3.0;
        // Black plays ee, and in the same view White's stone at bd is knocked half off
        // its point and reads black: no sequence of moves gives that.
        let both = board(&[".....", ".....", "..B..", ".B...", "....B"]);
        let out = game.observe(&seen(&both, &SURE, at, at + 0.2));
        assert_eq!(
            moves(&out),
            [(Color::Black, "ee".to_string())],
            "the move is committed at once: {out:?}"
        );
        assert!(
            flags(&out).is_empty(),
            "the displacement must stand: {out:?}"
        );
        let out = game.observe(&seen(&both, &SURE, at, at + 1.7));
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        assert!(moves(&out).is_empty(), "{out:?}");
    }

    /// Black cc, White bd, Black dd: White to move.
    const THREE_MOVES: [[&str; 5]; 3] = [
        [".....", ".....", "..B..", ".....", "....."],
        [".....", ".....", "..B..", ".W...", "....."],
        [".....", ".....", "..B..", ".W.B.", "....."],
    ];

    #[test]
    fn tga_26_a_knocked_stone_landing_on_a_point_is_the_knock_not_a_move() {
        let before = THREE_MOVES[2];
        let mut game = played(&THREE_MOVES);
        let at = 4.0;
        // White to move. Black's cc and White's own bd are swept off, and a white stone
        // comes to rest on ae.
        let swept = board(&[".....", ".....", ".....", "...B.", "W...."]);
        let out = game.observe(&seen(&swept, &SURE, at, at + 0.2));
        assert!(
            moves(&out).is_empty(),
            "nothing committed beside it: {out:?}"
        );
        let out = game.observe(&seen(&swept, &SURE, at, at + 1.7));
        assert_eq!(flags(&out), [FlagKind::BoardDisturbed], "{out:?}");
        assert!(moves(&out).is_empty(), "{out:?}");
        // The players put the board back, and White then plays: an ordinary move.
        let out = game.observe(&seen(&board(&before), &SURE, at + 3.0, at + 3.2));
        assert!(
            out.iter().any(|o| matches!(o, Outcome::Resolved { .. })),
            "{out:?}"
        );
        let reply = board(&[".....", "....W", "..B..", ".W.B.", "....."]);
        let out = game.observe(&seen(&reply, &SURE, at + 5.0, at + 5.2));
        assert_eq!(moves(&out), [(Color::White, "eb".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(game.discrepancies().is_empty());
    }

    #[test]
    fn tga_26_knocked_stones_of_both_colours_landing_on_points_are_no_moves() {
        let mut game = played(&THREE_MOVES);
        // cc, bd and dd swept off; a black and a white stone come to rest on points.
        let swept = board(&[".....", "B....", ".....", ".....", "W...."]);
        let mut out = game.observe(&seen(&swept, &SURE, 4.0, 4.2));
        out.extend(game.observe(&seen(&swept, &SURE, 4.0, 5.7)));
        assert!(moves(&out).is_empty(), "{out:?}");
        assert_eq!(flags(&out), [FlagKind::BoardDisturbed], "{out:?}");
    }

    #[test]
    fn a_move_that_lifts_only_opponent_stones_is_still_the_move() {
        let mut game = played(&THREE_MOVES);
        let at = 4.0;
        // White plays ea and takes Black's cc and dd off as if captured.
        let lifted = board(&["....W", ".....", ".....", ".W...", "....."]);
        let mut out = game.observe(&seen(&lifted, &SURE, at, at + 0.2));
        out.extend(game.observe(&seen(&lifted, &SURE, at, at + 1.7)));
        // Players lift the opponent's stones as prisoners, never their own: not a knock.
        assert_eq!(moves(&out), [(Color::White, "ea".to_string())], "{out:?}");
        assert_eq!(flags(&out).len(), 1, "{out:?}");
        assert_ne!(flags(&out)[0], FlagKind::BoardDisturbed, "{out:?}");
    }

    #[test]
    fn a_stone_taken_back_then_the_opponent_playing_keeps_the_move_flagged() {
        let one = [".....", ".....", "..B..", ".....", "....."];
        let mut game = played(&[one, [".....", ".W...", "..B..", ".....", "....."]]);
        game.observe(&seen(&board(&one), &SURE, 3.0, 4.6));
        // Black plays on: the taken-back stone stays in the record (TGA 21 said it goes
        // back), so this is Black's ordinary move.
        let on = board(&[".....", ".....", "..B..", ".....", "...B."]);
        let out = game.observe(&seen(&on, &SURE, 5.0, 5.2));
        assert_eq!(moves(&out), [(Color::Black, "de".to_string())]);
        assert!(replaced(&out).is_empty(), "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn an_operators_pass_makes_the_same_colour_legal() {
        let mut game = after_black_at_cc();
        let passed = game.pass(Color::White);
        assert_eq!(moves(&passed), [(Color::White, "".to_string())]);
        let two = board(&[".....", ".B...", "..B..", ".....", "....."]);
        let out = game.observe(&seen(&two, &SURE, 2.0, 2.2));
        assert_eq!(moves(&out), [(Color::Black, "bb".to_string())]);
        assert!(flags(&out).is_empty());
    }

    #[test]
    fn tga_27_prisoners_are_lifted_in_time_or_flagged_then_resolved() {
        // Black captures the white stone at ab by playing ac... set up by moves.
        let mut position = Position::new(5);
        for (color, row, col) in [
            (Color::Black, 0, 0),
            (Color::White, 0, 1),
            (Color::Black, 1, 1),
            (Color::White, 4, 4),
        ] {
            position
                .play(color, Move::Play(Point::new(row, col)))
                .unwrap();
        }
        let mut game = GoInference::new(position, InferOptions::default());
        // Black plays ac: the white stone at ab is captured but still stands.
        let placed = board(&["BWB..", ".B...", ".....", ".....", "....W"]);
        let out = game.observe(&seen(&placed, &SURE, 5.0, 5.2));
        assert_eq!(moves(&out), [(Color::Black, "ca".to_string())]);
        assert!(flags(&out).is_empty(), "still being lifted");
        // White plays on before lifting it: TGA 27.
        let on = board(&["BWB..", ".B...", ".....", "...W.", "....W"]);
        let out = game.observe(&seen(&on, &SURE, 7.0, 8.2));
        assert_eq!(moves(&out), [(Color::White, "dd".to_string())]);
        assert_eq!(flags(&out), [FlagKind::CapturesNotRemoved]);
        // Lifted later: resolved, and no move.
        let lifted = board(&["B.B..", ".B...", ".....", "...W.", "....W"]);
        let out = game.observe(&seen(&lifted, &SURE, 9.0, 9.2));
        assert!(
            matches!(
                out.as_slice(),
                [Outcome::Resolved {
                    kind: FlagKind::CapturesNotRemoved,
                    ..
                }]
            ),
            "{out:?}"
        );
    }

    #[test]
    fn a_change_with_no_hand_or_low_confidence_must_stand_longer() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let now = board(&[".....", ".....", "..B..", ".....", "....."]);
        let mut quiet = seen(&now, &SURE, 3.0, 3.3);
        quiet.hands = 0;
        assert!(game.observe(&quiet).is_empty());
        quiet.now = 5.1;
        assert_eq!(moves(&game.observe(&quiet)).len(), 1);

        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let mut unsure = SURE;
        unsure[12] = 0.5;
        assert!(game.observe(&seen(&now, &unsure, 3.0, 3.3)).is_empty());
        assert_eq!(
            moves(&game.observe(&seen(&now, &unsure, 3.0, 5.1))).len(),
            1
        );
    }

    #[test]
    fn tga_25_a_stone_knocked_next_door_with_no_hand_is_flagged_sooner() {
        let mut game = played(&OPENING);
        let knocked = board(&[".....", ".....", "...B.", ".W...", "...B."]);
        // Any change with no hand seen stands a second: no less for a knock, and no more
        // while the vote still half remembers the stone where it was.
        let mut remembered = SURE;
        remembered[2 * 5 + 2] = 0.8;
        remembered[2 * 5 + 3] = 0.8;
        let mut quiet = seen(&knocked, &remembered, 4.0, 4.9);
        quiet.hands = 0;
        assert!(game.observe(&quiet).is_empty(), "not yet");
        quiet.now = 5.1;
        assert_eq!(flags(&game.observe(&quiet)), [FlagKind::Displaced]);
        // Read unsurely, it waits the whole time.
        let mut game = played(&OPENING);
        let mut unsure = SURE;
        unsure[2 * 5 + 3] = 0.5;
        let mut quiet = seen(&knocked, &unsure, 4.0, 5.1);
        quiet.hands = 0;
        assert!(game.observe(&quiet).is_empty(), "not yet");
        quiet.now = 5.6;
        assert_eq!(flags(&game.observe(&quiet)), [FlagKind::Displaced]);
        // Both points' pictures changed as a stone's going and coming do: a quarter.
        let mut game = played(&OPENING);
        let mut quiet = Seen {
            stirred: &[[2, 2], [2, 3]],
            ..seen(&knocked, &SURE, 4.0, 4.2)
        };
        quiet.hands = 0;
        assert!(game.observe(&quiet).is_empty(), "not yet");
        quiet.stirred = &[];
        quiet.now = 4.4;
        assert_eq!(flags(&game.observe(&quiet)), [FlagKind::Displaced]);
        // One of them only: the second still.
        let mut game = played(&OPENING);
        quiet.stirred = &[[2, 3]];
        quiet.now = 4.2;
        game.observe(&quiet);
        quiet.now = 4.9;
        assert!(game.observe(&quiet).is_empty(), "not yet");
    }

    #[test]
    fn tga_25_a_displaced_stone_is_flagged_once_and_resolved_when_put_back() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let a = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&a, &SURE, 1.0, 1.2));
        let b = board(&[".....", ".....", "..B..", ".W...", "....."]);
        game.observe(&seen(&b, &SURE, 2.0, 2.2));
        let c = board(&[".....", ".....", "..B..", ".W...", "...B."]);
        game.observe(&seen(&c, &SURE, 3.0, 3.2));
        // The black stone at cc slides to dc (not the last stone: displaced).
        let slid = board(&[".....", ".....", "...B.", ".W...", "...B."]);
        assert!(
            game.observe(&seen(&slid, &SURE, 4.0, 4.5)).is_empty(),
            "not yet"
        );
        let out = game.observe(&seen(&slid, &SURE, 4.0, 5.6));
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        assert!(moves(&out).is_empty());
        // White plays elsewhere with the stone still off: no second flag.
        let on = board(&["W....", ".....", "...B.", ".W...", "...B."]);
        let out = game.observe(&seen(&on, &SURE, 6.0, 6.2));
        assert_eq!(moves(&out), [(Color::White, "aa".to_string())]);
        assert!(flags(&out).is_empty(), "{out:?}");
        // Put back.
        let back = board(&["W....", ".....", "..B..", ".W...", "...B."]);
        let out = game.observe(&seen(&back, &SURE, 7.0, 7.2));
        assert!(
            out.iter().any(|o| matches!(
                o,
                Outcome::Resolved {
                    kind: FlagKind::Displaced,
                    ..
                }
            )),
            "{out:?}"
        );
        assert!(moves(&out).is_empty());
    }

    #[test]
    fn tga_25_a_stone_seen_pushed_on_its_point_is_displaced_and_its_point_read_bare_later_is_that_stone()
     {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let a = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&a, &SURE, 1.0, 1.2));
        let b = board(&[".....", ".....", "..B..", ".W...", "....."]);
        game.observe(&seen(&b, &SURE, 2.0, 2.2));
        // The camera saw cc's stone pushed, and a stone at ee, where the record has none.
        let out = game.pushed(&[[2, 2], [4, 4]]);
        assert_eq!(flags(&out), [FlagKind::Displaced], "{out:?}");
        let Outcome::Flag(flag) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(flag.points, [Point::new(2, 2)]);
        assert_eq!(flag.color, Some(Color::Black));
        assert_eq!(flag.move_number, Some(2));
        // Seen from a moved camera, the stone off its point reads bare: no stone removed.
        let bare = board(&[".....", ".....", ".....", ".W...", "....."]);
        let out = game.observe(&seen(&bare, &SURE, 3.0, 5.0));
        assert!(flags(&out).is_empty() && moves(&out).is_empty(), "{out:?}");
        // Black plays on: an ordinary move.
        let on = board(&[".....", ".....", ".....", ".W...", "...B."]);
        let out = game.observe(&seen(&on, &SURE, 6.0, 6.2));
        assert_eq!(moves(&out), [(Color::Black, "de".to_string())]);
        assert!(flags(&out).is_empty(), "{out:?}");
    }

    #[test]
    fn a_stone_whose_picture_came_with_a_hand_that_changed_no_reading_is_the_move_to_play() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        let a = board(&[".....", ".....", "..B..", ".....", "....."]);
        game.observe(&seen(&a, &SURE, 1.0, 1.2));
        // White's stone at dd changed its picture; the reader sees the point bare.
        let out = game.stone_came_unseen([3, 3], &seen(&a, &SURE, 2.0, 2.2));
        assert_eq!(moves(&out), [(Color::White, "dd".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        assert!(noted_unsure(&out, Point::new(3, 3)), "said so: {out:?}");
        // The reader goes on missing it: Black's next move is all that changed.
        let b = board(&[".....", ".....", "..B..", ".....", "B...."]);
        let out = game.observe(&seen(&b, &SURE, 3.0, 3.2));
        assert_eq!(moves(&out), [(Color::Black, "ae".to_string())], "{out:?}");
        assert!(flags(&out).is_empty(), "{out:?}");
        // Not where the record has a stone, nor where the other colour is read.
        assert!(
            game.stone_came_unseen([2, 2], &seen(&b, &SURE, 4.0, 4.2))
                .is_empty()
        );
        let c = board(&[".....", "....B", "..B..", ".....", "B...."]);
        assert!(
            game.stone_came_unseen([1, 4], &seen(&c, &SURE, 4.0, 4.2))
                .is_empty()
        );
        assert_eq!(game.moves_played(), 3);
    }

    #[test]
    fn a_stone_misread_before_it_came_is_the_move_when_its_picture_comes_with_the_hand() {
        let mut game = GoInference::new(Position::new(5), InferOptions::default());
        // Black's cc, and a pale glare at ee read White under the same hand: not a move.
        let a = board(&[".....", ".....", "..B..", ".....", "....W"]);
        let out = game.observe(&seen(&a, &SURE, 1.0, 1.2));
        assert_eq!(moves(&out), [(Color::Black, "cc".to_string())], "{out:?}");
        // White puts a stone on ee: the reading does not change, its picture does.
        let out = game.stone_came_unseen([4, 4], &seen(&a, &SURE, 2.0, 2.2));
        assert_eq!(moves(&out), [(Color::White, "ee".to_string())], "{out:?}");
        // White again at aa: a double move, the stone at ee standing.
        let b = board(&["W....", ".....", "..B..", ".....", "....W"]);
        let out = game.observe(&seen(&b, &SURE, 3.0, 3.2));
        assert_eq!(flags(&out), [FlagKind::DoubleMove], "{out:?}");
    }
}
