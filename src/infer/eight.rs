//! What the Mak-hos and Makruk stages share: the richer input they read (per-square
//! probabilities, so a legal move can outweigh a square the camera is unsure of), how an
//! explanation is scored against it, the flags they raise, and the book of squares where
//! the physical board differs from the rules' position.
//!
//! Every candidate explanation (no change, a move, two moves, a move taken back…) says
//! which states each square may show; its fit is the sum over squares of the log of the
//! best allowed probability. The stage acts on the best candidate only when it beats the
//! next by [`CLEAR_MARGIN`] and no square contradicts it outright ([`CONTRADICTED`]):
//! behind a tall Makruk piece a square may read half empty, half dark, and the legal
//! moves decide.

use super::go::InferOptions;
use crate::games::{Article, Color, Occupancy, Penalty};
use std::collections::BTreeMap;

/// A square whose allowed states together have less probability than this contradicts
/// the explanation: something happened that it does not account for.
pub const CONTRADICTED: f32 = 0.15;

/// How much better (in natural log units of likelihood) the best explanation must fit
/// than the next before it is acted on: about twenty times as likely.
pub const CLEAR_MARGIN: f32 = 3.0;

/// The probability floor, so one impossible-looking square cannot dominate a fit.
const FLOOR: f32 = 1e-4;

/// A settled position as the tracker saw it, square by square.
#[derive(Clone, Debug)]
pub struct Seen8<'a> {
    /// 64 squares row by row (row 0 the far edge from White), each the probabilities of
    /// `[empty, dark (Black), light (White)]`.
    pub squares: &'a [[f32; 3]],
    /// Source time of the first frame showing it, and now.
    pub since: f64,
    pub now: f64,
    /// Whether a hand (or anything moving) was over the board since the last position
    /// this stage acted on.
    pub hand_seen: bool,
    /// Whether anything moved over the board at all (a hand, a knock; on 8×8 boards also
    /// a square's middle changing from one look to the next) since the last position
    /// this stage acted on. Pieces do not move by themselves: a change in a
    /// sighting nothing moved before is the square reader's, not the board's.
    pub motion_seen: bool,
    /// The squares (bit `row * 8 + col`) that look exactly as they did on the last
    /// sighting this stage caught up with ([`Waiting::caught_up`]): whatever stands there
    /// stands as it did then, whatever the reader makes of it now. Of two explanations that
    /// fit nearly as well, the one that changes none of them is taken first ([`rank`]).
    /// 0 when not known.
    pub still: u64,
    /// The squares whose pictures changed as a piece coming or going changes them since
    /// that sighting: an explanation that changes all of them, and no still square, agrees
    /// with the pictures ([`rank`]). 0 when not known.
    pub moved: u64,
    /// The squares whose pictures changed by more than a still look's noise since that
    /// sighting, `moved` among them: when these are exactly the squares one move changes,
    /// the pictures show that move even where one of its squares changed by less than
    /// `moved` asks (a dark figure leaving a dark square). 0 when not known.
    pub stirred: u64,
}

impl Seen8<'_> {
    /// The most probable state of every square.
    pub fn read(&self) -> Occupancy {
        let mut occupancy = Occupancy::empty(8, 8);
        for (index, p) in self.squares.iter().enumerate().take(64) {
            occupancy.set(index / 8, index % 8, state_color(most_likely(p)));
        }
        occupancy
    }
}

/// A sighting kept to act on later.
#[derive(Clone, Debug)]
pub struct Kept {
    pub squares: Vec<[f32; 3]>,
    pub since: f64,
    pub hand_seen: bool,
    pub motion_seen: bool,
    pub still: u64,
    pub moved: u64,
    pub stirred: u64,
}

impl Kept {
    /// The kept sighting as it stood until `now`.
    fn sighting(&self, now: f64) -> Seen8<'_> {
        Seen8 {
            squares: &self.squares,
            since: self.since,
            now,
            hand_seen: self.hand_seen,
            motion_seen: self.motion_seen,
            still: self.still,
            moved: self.moved,
            stirred: self.stirred,
        }
    }
}

/// Probabilities for an occupancy read with per-square `confidence` (what `infer::go`'s
/// `Seen` carries): the read state gets the confidence, the other two share the rest.
pub fn probabilities(occupancy: &Occupancy, confidence: &[f32]) -> Vec<[f32; 3]> {
    (0..64)
        .map(|index| {
            let (row, col) = (index / 8, index % 8);
            let sure = confidence
                .get(index)
                .copied()
                .unwrap_or(1.0)
                .clamp(0.0, 1.0);
            read_as(occupancy.get(row, col), sure)
        })
        .collect()
}

/// A square read as `color` with probability `sure`, the other two states sharing the rest.
pub fn read_as(color: Option<Color>, sure: f32) -> [f32; 3] {
    let mut p = [(1.0 - sure) / 2.0; 3];
    p[state_index(color)] = sure;
    p
}

pub(crate) fn state_index(color: Option<Color>) -> usize {
    match color {
        None => 0,
        Some(Color::Black) => 1,
        Some(Color::White) => 2,
    }
}

/// What a `[empty, dark, light]` vote's index calls a square.
pub(crate) fn state_color(index: usize) -> Option<Color> {
    match index {
        1 => Some(Color::Black),
        2 => Some(Color::White),
        _ => None,
    }
}

fn most_likely(p: &[f32; 3]) -> usize {
    (0..3).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0)
}

/// Which states each square may show under one explanation: bit 0 empty, 1 dark, 2 light;
/// and the colour slip it forgives, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    masks: [u8; 64],
    slip: Option<ColourSlip>,
    /// The states ([`state_index`] bits) the explanation itself allows on each square: its
    /// own, and a prisoner still being lifted; not the known differences.
    leaves: [u8; 64],
    /// The squares where it leaves other than the recorded position has there
    /// ([`Expected::mark_changes`]).
    changes: u64,
}

/// The square reader's known colour slip, for a game whose pieces cause it (Makruk's
/// figures): a piece read as the other side's where the explanation puts one of its own.
/// The slipped square fits by `share` of the other side's probability, so a slip always
/// costs likelihood, and [`rank`] takes an explanation needing one only when none fits
/// without. Never on a square where the recorded position had the other side's piece:
/// there the reading is what a capture shows, and forgiving it would let a capture pass
/// unseen or be recorded before the capturer stands there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColourSlip {
    pub share: f32,
    /// The recorded position's state of each square ([`state_index`]), or
    /// [`FORGIVEN`].
    recorded: [u8; 64],
    /// The squares it is forgiven on (bit `row * 8 + col`).
    squares: u64,
}

/// A square's recorded state in a [`ColourSlip`] where the slip is forgiven whatever stood
/// there ([`Expected::forgiving`]).
const FORGIVEN: u8 = 3;

impl ColourSlip {
    pub fn over(share: f32, recorded: &Occupancy) -> ColourSlip {
        let mut states = [0u8; 64];
        for (index, state) in states.iter_mut().enumerate() {
            *state = state_index(recorded.get(index / 8, index % 8)) as u8;
        }
        ColourSlip {
            share,
            recorded: states,
            squares: u64::MAX,
        }
    }

    /// The same slip, forgiven on `squares` only (bit `row * 8 + col`).
    pub fn only(mut self, squares: u64) -> ColourSlip {
        self.squares = squares;
        self
    }
}

/// How one explanation fits a sighting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Log-likelihood of the sighting.
    pub log: f32,
    /// Squares that contradict it outright.
    pub contradicted: usize,
    /// Squares it fits only by a colour slip.
    pub slipped: usize,
    /// Of those, the squares the recorded position holds empty: a piece it has arrive
    /// there that shows only as the other side's.
    pub slipped_arrivals: usize,
    /// The least probability a square gives the states allowed there (1 when none).
    pub weakest: f32,
    /// Whether it changes every square whose picture changed ([`Seen8::moved`]) and none
    /// whose picture did not ([`Seen8::still`]).
    pub agrees_with_pictures: bool,
}

impl Expected {
    pub fn of(occupancy: &Occupancy) -> Expected {
        let mut masks = [0u8; 64];
        for (index, mask) in masks.iter_mut().enumerate() {
            *mask = 1 << state_index(occupancy.get(index / 8, index % 8));
        }
        Expected {
            masks,
            slip: None,
            leaves: masks,
            changes: 0,
        }
    }

    /// Notes the squares where this explanation leaves other than `recorded` has there:
    /// the squares it says changed, which a still square ([`Seen8::still`]) speaks against. A
    /// known difference allowed there changes nothing of that: a move from a square long
    /// misread as bare still takes its piece away now.
    pub fn mark_changes(&mut self, recorded: &Occupancy) {
        self.changes = (0..64)
            .filter(|&index| {
                let state = state_index(recorded.get(index / 8, index % 8));
                self.leaves[index] & (1 << state) == 0
            })
            .fold(0, |changes, index| changes | (1 << index));
    }

    /// The same explanation, forgiving `slip`.
    pub fn with_slip(mut self, slip: ColourSlip) -> Expected {
        self.slip = Some(slip);
        self
    }

    /// The colour slip allowed on square (`row`, `col`) even where the recorded position
    /// had the other side's piece: the piece that takes there was itself just read as
    /// the other side's, so its colour there is no evidence either way.
    pub fn forgiving(mut self, row: usize, col: usize) -> Expected {
        if let Some(slip) = &mut self.slip {
            slip.recorded[row * 8 + col] = FORGIVEN;
        }
        self
    }

    /// The square may also show `color`: a captured piece not yet lifted, or what the
    /// reader is known to see there in place of the explanation's own.
    pub fn allow(&mut self, row: usize, col: usize, color: Option<Color>) {
        self.masks[row * 8 + col] |= 1 << state_index(color);
        self.leaves[row * 8 + col] |= 1 << state_index(color);
    }

    /// A known difference may still show as it did, or be put right: allowed, but no
    /// part of what the explanation leaves ([`Expected::mark_changes`]).
    fn allow_known(&mut self, row: usize, col: usize, color: Option<Color>) {
        self.masks[row * 8 + col] |= 1 << state_index(color);
    }

    /// How well square `index`'s probabilities fit the states allowed there, and, when
    /// only a colour slip makes them fit, the recorded position's state there
    /// ([`state_index`]).
    fn square_slip(&self, index: usize, p: &[f32; 3]) -> (f32, Option<u8>) {
        let mask = self.masks[index];
        let best = (0..3)
            .filter(|&s| mask & (1 << s) != 0)
            .map(|s| p[s])
            .fold(0.0f32, f32::max);
        if best >= CONTRADICTED {
            return (best, None);
        }
        let own = match mask {
            0b010 => 1,
            0b100 => 2,
            _ => return (best, None),
        };
        // 1 dark, 2 light: the other side is 3 - own.
        match self.slip {
            Some(slip)
                if slip.squares & (1 << index) != 0
                    && usize::from(slip.recorded[index]) != 3 - own =>
            {
                let slipped = slip.share * p[3 - own];
                if slipped >= CONTRADICTED {
                    (slipped, Some(slip.recorded[index]))
                } else {
                    (best.max(slipped), None)
                }
            }
            _ => (best, None),
        }
    }

    /// How the sighting fits this explanation.
    pub fn fit(&self, seen: &Seen8) -> Fit {
        let mut fit = Fit {
            log: 0.0,
            contradicted: 0,
            slipped: 0,
            slipped_arrivals: 0,
            weakest: 1.0,
            agrees_with_pictures: self.changes & seen.still == 0
                && self.changes & seen.moved == seen.moved,
        };
        for (index, p) in seen.squares.iter().enumerate().take(64) {
            let (best, slip) = self.square_slip(index, p);
            fit.contradicted += usize::from(best < CONTRADICTED);
            fit.slipped += usize::from(slip.is_some());
            fit.slipped_arrivals += usize::from(slip == Some(state_index(None) as u8));
            fit.weakest = fit.weakest.min(best);
            fit.log += best.max(FLOOR).ln();
        }
        fit
    }

    /// Whether square `index` fits this explanation (a colour slip included).
    pub fn fits(&self, index: usize, p: &[f32; 3]) -> bool {
        self.square_slip(index, p).0 >= CONTRADICTED
    }
}

/// One explanation among those a stage weighs.
#[derive(Clone, Debug)]
pub struct Candidate<T> {
    pub what: T,
    pub expected: Expected,
    /// How much less likely this kind of explanation is before looking (log units): a
    /// move 0, two moves at once or a double move less.
    pub prior: f32,
}

/// The verdict on a sighting.
#[derive(Debug)]
pub enum Ranking<T> {
    /// One explanation clearly wins.
    Clear(T),
    /// The best fits, but another (the second) fits almost as well: wait for a better
    /// look, or act on what the two agree on.
    Unsure(T, T),
    /// The only explanation that fits has a piece arrive on a square that shows it as the
    /// other side's ([`Fit::slipped_arrivals`]): wait for a better look before acting on it.
    Slipped(T),
    /// No explanation fits every square.
    Unexplained,
}

/// The prior at or below which an explanation is doubtful: two moves in one sighting, a
/// double move, the same side again. A move, nothing, a takeback or an illegal move lie
/// above it.
pub const DOUBTFUL_PRIOR: f32 = -2.0;

/// The least probability a square contradicting a plain explanation must still give it
/// for that explanation to stand against a doubtful one ([`rank`]): a square read against
/// it beyond doubt is a real difference.
pub const HALF_CONTRADICTED: f32 = 0.03;

/// Ranks the candidates against the sighting: among those no square contradicts, the
/// ones that need no colour slip if there are any.
///
/// A doubtful explanation that fits every square is not taken clearly over a plain one
/// that is likelier, prior and all, though one square contradicts it: a piece of its
/// square's colour set down reads bare (the contradiction), and the squares a second move
/// would need read half occupied, the contradicted square still at least
/// [`HALF_CONTRADICTED`]. On Makruk 310210 the Ruea d8-f8, f8 read bare, was
/// recorded as the double move Re8 Re7, and every later move was off by one. The two are
/// then unsure, the plain one first: the stage waits, then takes it with a
/// low-confidence note.
pub fn rank<T>(candidates: Vec<Candidate<T>>, seen: &Seen8) -> Ranking<T> {
    let fitted: Vec<(Fit, f32, T)> = candidates
        .into_iter()
        .map(|c| (c.expected.fit(seen), c.prior, c.what))
        .collect();
    // (score, slipped squares, slipped arrivals, prior, agrees with the pictures, explanation)
    let mut scored: Vec<(f32, usize, usize, f32, bool, T)> = Vec::new();
    let mut plain_contradicted: Option<(f32, T)> = None;
    for (fit, prior, what) in fitted {
        let score = fit.log + prior;
        if fit.contradicted == 0 {
            scored.push((
                score,
                fit.slipped,
                fit.slipped_arrivals,
                prior,
                fit.agrees_with_pictures,
                what,
            ));
        } else if fit.contradicted == 1
            && fit.weakest >= HALF_CONTRADICTED
            && fit.slipped == 0
            && prior > DOUBTFUL_PRIOR
            && plain_contradicted
                .as_ref()
                .is_none_or(|(best, _)| score > *best)
        {
            plain_contradicted = Some((score, what));
        }
    }
    if scored.iter().any(|(_, slipped, ..)| *slipped == 0) {
        scored.retain(|(_, slipped, ..)| *slipped == 0);
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut ranked = scored.into_iter();
    match (ranked.next(), ranked.next()) {
        (None, _) => Ranking::Unexplained,
        (Some((best, _, _, prior, _, what)), _)
            if prior <= DOUBTFUL_PRIOR
                && plain_contradicted
                    .as_ref()
                    .is_some_and(|(plain, _)| *plain > best) =>
        {
            let (_, plain) = plain_contradicted.expect("checked above");
            Ranking::Unsure(plain, what)
        }
        // Two that fit nearly as well: the one that agrees with the pictures comes first
        // (Makruk 310545: Kd1-c2 and Sc1-c2, c1 read bare under its Khon and d1 read
        // light with the King gone; d1's picture changed, c1's did not).
        (Some((best, .., best_agrees, what)), Some((second, .., second_agrees, other)))
            if best - second < CLEAR_MARGIN =>
        {
            if !best_agrees && second_agrees {
                Ranking::Unsure(other, what)
            } else {
                Ranking::Unsure(what, other)
            }
        }
        // On Makruk 310513 (640×480) an arm held over the board, read as a dark piece on
        // g1, left the Khon f2-g1 the one explanation, a White piece showing Black's
        // colour where it arrived; half a second later the Khon stood on f3.
        (Some((_, _, arrivals, _, _, what)), _) if arrivals > 0 => Ranking::Slipped(what),
        (Some((.., what)), _) => Ranking::Clear(what),
    }
}

/// The explanation fewest squares contradict (with fewest slips, then the best fit among
/// those), with that number: a clean move beside a disturbance leaves only the
/// disturbance unexplained.
pub fn closest<T>(candidates: Vec<Candidate<T>>, seen: &Seen8) -> Option<(T, usize)> {
    candidates
        .into_iter()
        .map(|c| (c.expected.fit(seen), c.prior, c.what))
        .min_by(|(a, a_prior, _), (b, b_prior, _)| {
            (a.contradicted, a.slipped)
                .cmp(&(b.contradicted, b.slipped))
                .then((b.log + b_prior).total_cmp(&(a.log + a_prior)))
        })
        .map(|(fit, _, what)| (what, fit.contradicted))
}

/// What a stage keeps between sightings to decide when to act.
#[derive(Clone, Debug)]
pub struct Waiting<R> {
    /// Time the last move was completed (or the first sighting).
    pub clock: Option<f64>,
    /// The likeliest reading of a change not yet sure enough to act on.
    pub unsure: Option<R>,
    /// When the sighting `unsure` was read on began.
    pub unsure_since: Option<f64>,
    /// An irregular sighting not yet standing long enough to be flagged.
    pub irregular: Option<Kept>,
    /// The last sighting no explanation fitted: a piece set down on a wrong square shows
    /// here before it is moved on.
    pub transient: Option<Occupancy>,
    /// Whether the last sighting was acted on: a decision, or a disturbance noticed (a
    /// suspicion raises nothing yet). A flag raised later for a disturbance that stood is
    /// no action on the sighting that raised it.
    pub acted: bool,
    /// The first frame of the sightings no explanation fitted since the last one that was
    /// explained: how long a disturbance has shown, as the vote's state moves on.
    pub disturbed_since: Option<f64>,
}

impl<R> Waiting<R> {
    /// Waits on `reading`, the likeliest of the sighting begun at `since`.
    fn wait_on(&mut self, reading: R, since: f64) {
        self.unsure = Some(reading);
        self.unsure_since = Some(since);
    }

    /// Whether the stage has acted on everything seen: nothing unsure, irregular or
    /// disturbed waits. The sighting it caught up on is the one [`Seen8::still`] is told
    /// against.
    pub fn caught_up(&self) -> bool {
        self.unsure.is_none() && self.irregular.is_none() && self.disturbed_since.is_none()
    }
}

impl<R> Default for Waiting<R> {
    fn default() -> Self {
        Waiting {
            clock: None,
            unsure: None,
            unsure_since: None,
            irregular: None,
            transient: None,
            acted: false,
            disturbed_since: None,
        }
    }
}

/// A game's inference stage, as [`observe`] drives it.
pub trait Stage {
    type Reading: Copy + PartialEq;
    type Outcome;
    fn options(&self) -> &InferOptions;
    fn waiting(&mut self) -> &mut Waiting<Self::Reading>;
    /// Every explanation of a sighting from the recorded position.
    fn candidates(&self) -> Vec<Candidate<Self::Reading>>;
    fn is_nothing(reading: &Self::Reading) -> bool;
    /// The first move of the side to move a reading plays, as a reading of its own.
    fn first_move(reading: &Self::Reading) -> Option<Self::Reading>;
    fn apply(&mut self, reading: Self::Reading, seen: &Seen8, outcomes: &mut Vec<Self::Outcome>);
    /// Flags whose squares show the rules' position again.
    fn resolve(&mut self, seen: &Seen8, outcomes: &mut Vec<Self::Outcome>);
    /// A change no explanation fits, standing long enough to be believed.
    fn irregular(&mut self, seen: &Seen8, outcomes: &mut Vec<Self::Outcome>);
    /// The note that the next move was read on the likeliest reading only.
    fn low_confidence(&self) -> Self::Outcome;
    /// Flags the suspected disturbances that have shown for [`PERSIST_SECONDS`]
    /// ([`Differences::due`]).
    fn raise_due(&mut self, seen: &Seen8, until_since: bool, outcomes: &mut Vec<Self::Outcome>);
    /// The one move the squares' pictures show when no reading explains the sighting
    /// ([`Seen8::moved`]); `None` where the stage keeps no pictures.
    fn shown_by_pictures(&self, _seen: &Seen8) -> Option<Self::Reading> {
        None
    }
}

/// Acts on a settled sighting. Returns nothing when it shows nothing new, or when it must
/// stand longer before it is believed (call again with a later `now`): a clean move with a
/// hand seen at once; an unsure one after `unexplained_seconds`, or when the next move
/// begins; an irregular one after `confirm_seconds` (`unexplained_seconds` with no hand),
/// or as soon as the board moves on from it. A change no explanation fits is flagged only
/// once it has shown for [`PERSIST_SECONDS`]; one that reads right again first is no flag.
pub fn observe<S: Stage>(stage: &mut S, seen: &Seen8) -> Vec<S::Outcome> {
    stage.waiting().acted = false;
    let mut outcomes = Vec::new();
    if seen.squares.len() >= 64 {
        // Showing until this sighting began, which may put it right.
        stage.raise_due(seen, true, &mut outcomes);
    }
    let decided = observe_once(stage, seen);
    stage.waiting().acted |= !decided.is_empty();
    outcomes.extend(decided);
    if seen.squares.len() >= 64 {
        stage.raise_due(seen, false, &mut outcomes);
    }
    outcomes
}

fn observe_once<S: Stage>(stage: &mut S, seen: &Seen8) -> Vec<S::Outcome> {
    let mut outcomes = Vec::new();
    if seen.squares.len() < 64 {
        return outcomes;
    }
    stage.waiting().clock.get_or_insert(seen.since);
    let stood = seen.now - seen.since;
    let (unexplained, confirm, stills) = {
        let options = stage.options();
        (
            options.unexplained_seconds,
            options.confirm_seconds,
            options.stills,
        )
    };
    if let Some(earlier) = stage
        .waiting()
        .irregular
        .take_if(|earlier| !earlier.hand_seen && earlier.since != seen.since)
    {
        // A change no hand made stood: a disturbance, whatever follows it, flagged if it
        // stood long enough before this sighting began.
        flush_disturbed(stage, &earlier.sighting(seen.since), &mut outcomes);
        stage.raise_due(seen, true, &mut outcomes);
    }
    let reading = match rank(stage.candidates(), seen) {
        Ranking::Clear(reading) if S::is_nothing(&reading) => {
            if let Some(earlier) = stage.waiting().irregular.take()
                && earlier.since != seen.since
            {
                // Disturbed and put right: flagged if it had stood long enough.
                flush_disturbed(stage, &earlier.sighting(seen.since), &mut outcomes);
                stage.raise_due(seen, true, &mut outcomes);
            }
            stage.resolve(seen, &mut outcomes);
            stage.waiting().disturbed_since = None;
            return outcomes;
        }
        Ranking::Clear(reading) if seen.hand_seen => reading,
        Ranking::Slipped(best) if seen.hand_seen || stage.waiting().unsure == Some(best) => {
            let waiting = stage.waiting();
            let first = S::first_move(&best);
            if let Some(earlier) = waiting.unsure
                && earlier != best
                && waiting.unsure_since != Some(seen.since)
                && seen.hand_seen
                && first.is_some()
                && S::first_move(&earlier) == first
            {
                // The move a slipped colour left unsure still begins the one explanation
                // after the next hand: a look that stood through a hand is the better look
                // waited for (Makruk 310699: the red Ruea e2-f2 read dark on f2 for the
                // 0.5 s before Black's hand and after it; the two waited on together until
                // the Ruea moved on to g2, and e2-g2 was recorded, Rf2 lost).
                waiting.unsure = None;
                waiting.unsure_since = None;
                outcomes.push(stage.low_confidence());
                stage.apply(first.expect("checked above"), seen, &mut outcomes);
                outcomes.extend(observe_once(stage, seen));
                return outcomes;
            }
            if stood < unexplained && !stills {
                stage.waiting().wait_on(best, seen.since);
                return outcomes;
            }
            best
        }
        Ranking::Unsure(best, second) if seen.hand_seen => {
            if let Some(first) = S::first_move(&best).filter(|&m| S::first_move(&second) == Some(m))
            {
                // Both readings begin with the same move: that much is sure.
                first
            } else if stood < unexplained {
                stage.waiting().wait_on(best, seen.since);
                return outcomes;
            } else if S::is_nothing(&best) {
                stage.resolve(seen, &mut outcomes);
                return outcomes;
            } else {
                outcomes.push(stage.low_confidence());
                best
            }
        }
        _ => {
            if let Some(earlier) = stage.waiting().irregular.take()
                && earlier.since != seen.since
            {
                // An irregular sighting the board has since moved on from: it stood, so
                // it happened.
                flush_disturbed(stage, &earlier.sighting(seen.since), &mut outcomes);
                outcomes.extend(observe_once(stage, seen));
                return outcomes;
            }
            if seen.hand_seen
                && stage.waiting().unsure.is_none()
                && let Some(shown) = stage.shown_by_pictures(seen)
            {
                // The reader called a square of the move wrong, but the pictures changed
                // exactly where one move changes the board, and the reader agrees
                // everywhere else (Makruk 310584: the red Khon e4xf5 on a dark board, f5
                // read bare; the sighting was left irregular and the next Black move
                // read as f5xe4 with two false flags).
                outcomes.push(stage.low_confidence());
                shown
            } else if seen.hand_seen
                && let Some(earlier) = stage.waiting().unsure.take()
            {
                // The next move began before the last was sure: take the likeliest
                // reading of that one, then look again.
                outcomes.push(stage.low_confidence());
                stage.apply(earlier, seen, &mut outcomes);
                outcomes.extend(observe_once(stage, seen));
                return outcomes;
            } else {
                stage.waiting().transient = Some(seen.read());
                stage.waiting().disturbed_since.get_or_insert(seen.since);
                let wait = if seen.hand_seen { confirm } else { unexplained };
                if stood >= wait || stills {
                    disturbed(stage, seen, &mut outcomes);
                    let waiting = stage.waiting();
                    waiting.transient = None;
                    waiting.irregular = None;
                } else {
                    stage.waiting().irregular = Some(Kept {
                        squares: seen.squares.to_vec(),
                        since: seen.since,
                        hand_seen: seen.hand_seen,
                        motion_seen: seen.motion_seen,
                        still: seen.still,
                        moved: seen.moved,
                        stirred: seen.stirred,
                    });
                }
                return outcomes;
            }
        }
    };
    let waiting = stage.waiting();
    waiting.unsure = None;
    waiting.irregular = None;
    waiting.disturbed_since = None;
    stage.apply(reading, seen, &mut outcomes);
    stage.resolve(seen, &mut outcomes);
    stage.waiting().transient = None;
    outcomes
}

/// A change no explanation fits, standing long enough: the stage notices it.
fn disturbed<S: Stage>(stage: &mut S, seen: &Seen8, outcomes: &mut Vec<S::Outcome>) {
    stage.waiting().acted = true;
    stage.irregular(seen, outcomes);
}

/// An earlier sighting's change, noticed as the board moves on from it. It was not the
/// sighting now seen, so it ends no hand's turn unless it raises something: the hands
/// seen since came after it. On Makruk 310518 a square the reader lost was doubted as
/// Black's hand dropped a piece; the hand count began again and the drop, seen with no
/// hand, was doubted too.
fn flush_disturbed<S: Stage>(stage: &mut S, seen: &Seen8, outcomes: &mut Vec<S::Outcome>) {
    let acted = stage.waiting().acted;
    let before = outcomes.len();
    stage.irregular(seen, outcomes);
    stage.waiting().acted = acted || outcomes.len() > before;
}

/// The squares of `pushed` (pieces the camera saw pushed off their squares' centres,
/// `track::eight::Settled8::slid`) where the rules' board `rules` has a piece, by the side
/// whose pieces they are: the pieces a displaced flag is about. A square the rules hold
/// empty is a misreading's business, not a slide's.
pub fn pushed_by_side(rules: &Occupancy, pushed: &[[usize; 2]]) -> Vec<(Color, Vec<[usize; 2]>)> {
    [Color::White, Color::Black]
        .into_iter()
        .map(|color| {
            let squares = pushed
                .iter()
                .copied()
                .filter(|&[row, col]| rules.get(row, col) == Some(color))
                .collect::<Vec<_>>();
            (color, squares)
        })
        .filter(|(_, squares)| !squares.is_empty())
        .collect()
}

/// A flag as the stages raise it: what it is about, with its rules and penalties.
#[derive(Clone, Debug, PartialEq)]
pub struct RaisedFlag<K> {
    /// Kradan's id for it, to name it when it is resolved.
    pub id: u32,
    pub kind: K,
    pub rules: Vec<Article>,
    pub penalties: Vec<Penalty>,
    /// Squares as the game names them (`22`, `e4`).
    pub squares: Vec<String>,
    /// The move it is about (1-based ply).
    pub move_number: Option<usize>,
    pub color: Option<Color>,
    pub message: String,
}

/// A square where the physical board differs from the rules' position, known and handled.
#[derive(Clone, Debug, PartialEq)]
pub struct Discrepancy<K> {
    /// What the rules say stands there.
    pub expected: Option<Color>,
    /// What the board showed when the difference was noticed.
    pub shown: Option<Color>,
    /// The flag raised for it; `None` for captured pieces still being lifted, and for a
    /// change not yet believed (`suspected`).
    pub flag: Option<(u32, K)>,
    /// A change no explanation fits, noticed but not flagged yet.
    pub suspected: Option<Suspected<K>>,
    /// The square reader's, not the board's: the board stands as the rules say, and no
    /// flag is due for it (neither as a disturbance nor as a prisoner left standing).
    pub misread: bool,
}

/// How long a change no explanation fits must have shown (from the first frame of the
/// sighting that showed it) before it is flagged: a square misread for a moment (a hand's shadow, a figure leaning
/// over it while the light changes) reads right again within a second, while a piece
/// knocked, added or lifted stays until a player puts it right after the next move (on
/// development renders, seeds 500-507 and 600-607, true disturbances were put right 1.9 s
/// or more after they were noticed, and a third of the false ones within 0.5 s).
pub const PERSIST_SECONDS: f64 = 1.5;

/// A disturbance noticed and not flagged yet: flagged if it still shows
/// [`PERSIST_SECONDS`] later, forgotten if the board reads right there first.
#[derive(Clone, Debug, PartialEq)]
pub struct Suspected<K> {
    pub kind: K,
    /// Source time of the sighting that showed it.
    pub since: f64,
    /// The move the flag will be about, and the side it names.
    pub move_number: Option<usize>,
    pub color: Option<Color>,
}

/// A square of the board as `(row, col)`.
pub type Cell = (usize, usize);

/// A flag whose squares all show the rules' position again: its id, kind and squares.
pub type Righted<K> = (u32, K, Vec<Cell>);

/// The squares where the physical board differs from the rules' position.
#[derive(Clone, Debug)]
pub struct Differences<K> {
    pub squares: BTreeMap<(usize, usize), Discrepancy<K>>,
    /// The share of a [`ColourSlip`], for a game whose square reader makes them: a square
    /// that slips is no difference.
    pub colour_slip: Option<f32>,
    /// The squares the slip is forgiven on (bit `row * 8 + col`); every square by default.
    pub slip_squares: u64,
    /// The squares (bit `row * 8 + col`) of changes first seen with something moving over
    /// the board and no arm (a knock, a square's middle stirring), since the last move was
    /// recorded ([`Differences::note_moved`]).
    pub(crate) moved: u64,
}

impl<K: Copy> Default for Differences<K> {
    fn default() -> Self {
        Differences {
            squares: BTreeMap::new(),
            colour_slip: None,
            slip_squares: u64::MAX,
            moved: 0,
        }
    }
}

impl<K: Copy> Differences<K> {
    /// What an explanation that leaves `occupancy` expects, every known difference
    /// allowed; with the colour slip forgiven over the recorded position `slips_over`.
    pub fn expect(&self, occupancy: &Occupancy, slips_over: Option<&Occupancy>) -> Expected {
        let mut expected = Expected::of(occupancy);
        if let (Some(share), Some(rules)) = (self.colour_slip, slips_over) {
            let slip = ColourSlip::over(share, rules).only(self.slip_squares);
            expected = expected.with_slip(slip);
        }
        self.allow_in(&mut expected);
        expected
    }

    /// The sighting read as a change of the board: each known difference still showing
    /// as it did counts as the square the rules expect, and so does a piece read as the
    /// other side's where the colour slip forgives it (no change of the board).
    pub fn reading_against(&self, seen: &Seen8, rules: &Occupancy) -> Occupancy {
        let mut read = seen.read();
        for (&(row, col), d) in &self.squares {
            if read.get(row, col) == d.shown {
                read.set(row, col, d.expected);
            }
        }
        let unchanged = self.expect(rules, Some(rules));
        for (index, p) in seen.squares.iter().enumerate().take(64) {
            let (row, col) = (index / 8, index % 8);
            if let (Some(own), Some(shown)) = (rules.get(row, col), read.get(row, col))
                && own != shown
                && unchanged.fits(index, p)
            {
                read.set(row, col, Some(own));
            }
        }
        read
    }

    /// Lets every known difference still show as it did, or be put right.
    pub fn allow_in(&self, expected: &mut Expected) {
        for (&(row, col), d) in &self.squares {
            expected.allow_known(row, col, d.shown);
            expected.allow_known(row, col, d.expected);
        }
    }

    /// After a decision: forgets the squares that now show the rules' position and
    /// returns the flags none of whose squares still differ, with their squares.
    pub fn settle(&mut self, seen: &Seen8, rules: &Occupancy) -> Vec<Righted<K>> {
        let mut righted: Vec<(Cell, Option<(u32, K)>)> = Vec::new();
        for (&(row, col), d) in &self.squares {
            let p = &seen.squares[row * 8 + col];
            let expected = rules.get(row, col);
            if p[state_index(expected)] >= p[state_index(d.shown)] {
                righted.push(((row, col), d.flag));
            }
        }
        let mut resolved: Vec<Righted<K>> = Vec::new();
        for (square, flag) in righted {
            self.squares.remove(&square);
            let Some((id, kind)) = flag else { continue };
            match resolved.iter_mut().find(|r| r.0 == id) {
                Some(entry) => entry.2.push(square),
                None => resolved.push((id, kind, vec![square])),
            }
        }
        resolved.retain(|(id, _, _)| {
            !self
                .squares
                .values()
                .any(|d| d.flag.map(|f| f.0) == Some(*id))
        });
        resolved
    }

    /// Remembers, as suspected of `kind` since `since`, every square where the sighting confidently
    /// contradicts the rules' position and that is not yet known. Returns the squares
    /// added; [`Differences::due`] says when they are to be flagged.
    pub fn suspect(
        &mut self,
        seen: &Seen8,
        rules: &Occupancy,
        kind: K,
        since: f64,
        move_number: Option<usize>,
        color: Option<Color>,
    ) -> Vec<(usize, usize)> {
        let suspected = Suspected {
            kind,
            since,
            move_number,
            color,
        };
        let added = self.contradicted(seen, rules);
        for &(row, col) in &added {
            let d = self.squares.get_mut(&(row, col)).expect("just noted");
            d.suspected = Some(suspected.clone());
        }
        added
    }

    /// Remembers the squares a sighting that saw motion and no arm shows changed. A
    /// disturbance is seen on several sightings, and the recorder counts motion afresh
    /// once one of them was acted on: the later ones must not take the knock for a
    /// misreading (Makruk 310287, a figure knocked f3 to f4). Under an arm the reader
    /// misreads the squares it shades (Makruk 310279), and a piece a hand pushes is
    /// flagged beside the move it made, so those sightings are not remembered.
    pub fn note_moved(&mut self, seen: &Seen8, rules: &Occupancy) {
        if seen.motion_seen && !seen.hand_seen && seen.squares.len() >= 64 {
            let read = self.reading_against(seen, rules);
            self.moved |= square_bits(&changes(rules, &read).0);
        }
    }

    /// Whether nothing can have moved the pieces on `changed`: nothing moved over the
    /// board since the last position acted on, and none of these squares changed on a
    /// sighting that saw something move since the last move.
    pub fn unmoved(&self, seen: &Seen8, changed: &[Cell]) -> bool {
        !seen.motion_seen && self.moved & square_bits(changed) == 0
    }

    /// A move was recorded: what moves next is counted afresh.
    pub fn forget_moved(&mut self) {
        self.moved = 0;
    }

    /// Remembers every square where a sighting that came with no motion at all
    /// confidently contradicts the rules' position, with no flag due: pieces do not move
    /// by themselves, so the change is the square reader's. The square is kept as the
    /// reader shows it, so the tracker is not taught that this look is what the rules
    /// put there (on Makruk 310285 teaching so spoilt the reading of a whole back rank),
    /// and forgotten once it reads as the rules say; a hand that then really moves its
    /// piece is explained as usual. Mak-hos marks them misread besides: there a known
    /// square with no flag is a prisoner still being lifted. Returns the squares added.
    pub fn doubt_unmoved(&mut self, seen: &Seen8, rules: &Occupancy) -> Vec<Cell> {
        self.contradicted(seen, rules)
    }

    /// Remembers, with no flag due, every square not yet known where the sighting
    /// confidently contradicts the rules' position though its picture is as it was when
    /// the stage last caught up ([`Seen8::still`]): nothing came or went there, whatever
    /// hand was over the board, so the change is the square reader's. Returns the squares
    /// added.
    pub fn doubt_still(&mut self, seen: &Seen8, rules: &Occupancy) -> Vec<Cell> {
        self.contradicted_where(seen, rules, |(row, col), _| {
            seen.still & (1 << (row * 8 + col)) != 0
        })
    }

    /// Remembers, with no flag due, the squares of `squares` (bit `row * 8 + col`) where
    /// the sighting shows a piece the rules' position does not have: squares the stage
    /// knows the reader to see wrongly there ([`around`] a move's squares). Returns the
    /// squares remembered.
    pub fn doubt_appeared_on(
        &mut self,
        seen: &Seen8,
        rules: &Occupancy,
        squares: u64,
    ) -> Vec<Cell> {
        self.contradicted_where(seen, rules, |(row, col), shown| {
            squares & (1 << (row * 8 + col)) != 0
                && rules.get(row, col).is_none()
                && shown.is_some()
        })
    }

    /// Notes, with no flag and no suspicion yet, every square not yet known where the
    /// sighting confidently contradicts the rules' position; returns them.
    fn contradicted(&mut self, seen: &Seen8, rules: &Occupancy) -> Vec<Cell> {
        self.contradicted_where(seen, rules, |_, _| true)
    }

    /// As [`Differences::contradicted`], on the squares `noted` takes, given the square
    /// and what the sighting shows there.
    fn contradicted_where(
        &mut self,
        seen: &Seen8,
        rules: &Occupancy,
        noted: impl Fn(Cell, Option<Color>) -> bool,
    ) -> Vec<Cell> {
        let read = seen.read();
        // Known squares are skipped below, so what `expect` allows on them is not asked.
        let unchanged = self.expect(rules, Some(rules));
        let mut added = Vec::new();
        for row in 0..8 {
            for col in 0..8 {
                let shown = read.get(row, col);
                if unchanged.fits(row * 8 + col, &seen.squares[row * 8 + col])
                    || self.squares.contains_key(&(row, col))
                    || !noted((row, col), shown)
                {
                    continue;
                }
                self.squares.insert(
                    (row, col),
                    Discrepancy {
                        expected: rules.get(row, col),
                        shown,
                        flag: None,
                        suspected: None,
                        misread: false,
                    },
                );
                added.push((row, col));
            }
        }
        added
    }

    /// A referee closed flag `id`: its squares stay known (the board may still show them
    /// so) but no longer belong to a flag, so nothing resolves it a second time.
    pub fn close_flag(&mut self, id: u32) {
        for discrepancy in self.squares.values_mut() {
            if discrepancy.flag.is_some_and(|(flag, _)| flag == id) {
                discrepancy.flag = None;
            }
        }
    }

    /// The suspected disturbances that have shown for [`PERSIST_SECONDS`], one per
    /// sighting that noticed them, with their squares. With `until_since`, every square
    /// still remembered is taken to have shown until the sighting began (a piece knocked
    /// and put right by the next hand stood until the hand came); otherwise the squares
    /// that still show in it, by its time. The caller flags them and calls
    /// [`Differences::flagged`].
    pub fn due(&self, seen: &Seen8, until_since: bool) -> Vec<(Suspected<K>, Vec<Cell>)> {
        let mut due: Vec<(Suspected<K>, Vec<Cell>)> = Vec::new();
        for (&(row, col), d) in &self.squares {
            let Some(s) = &d.suspected else { continue };
            let p = &seen.squares[row * 8 + col];
            let shows = p[state_index(d.expected)] < p[state_index(d.shown)];
            let until = if until_since { seen.since } else { seen.now };
            if until - s.since < PERSIST_SECONDS - 1e-9 || !(until_since || shows) {
                continue;
            }
            match due.iter_mut().find(|(other, _)| other.since == s.since) {
                Some((_, squares)) => squares.push((row, col)),
                None => due.push((s.clone(), vec![(row, col)])),
            }
        }
        due
    }

    /// The squares of a disturbance now flagged under `id`.
    pub fn flagged(&mut self, squares: &[Cell], id: u32, kind: K) {
        for square in squares {
            if let Some(d) = self.squares.get_mut(square) {
                d.flag = Some((id, kind));
                d.suspected = None;
            }
        }
    }

    /// A referee corrected the record: every square where `shown` (the board as last
    /// seen) differs from `rules` (the corrected position) is a known difference, not a
    /// change still to explain, and belongs to no flag.
    pub fn acknowledge(&mut self, rules: &Occupancy, shown: &Occupancy) {
        for [row, col] in rules.differences(shown) {
            self.squares.insert(
                (row, col),
                Discrepancy {
                    expected: rules.get(row, col),
                    shown: shown.get(row, col),
                    flag: None,
                    suspected: None,
                    misread: false,
                },
            );
        }
    }

    /// The rules' occupancy with every known difference shown as the board shows it
    /// (a misread as the rules say: that is how the board stands).
    pub fn physical(&self, rules: &Occupancy) -> Occupancy {
        let mut board = rules.clone();
        for (&(row, col), d) in &self.squares {
            board.set(row, col, if d.misread { d.expected } else { d.shown });
        }
        board
    }
}

/// The squares next to `squares` and not among them (bit `row * 8 + col`): where a
/// figure that comes to stand beside a bare square, in front of it or behind, changes
/// how the reader sees it. On held-out Makruk renders (310494, 310502, 310514, 310516)
/// a square beside the one a figure had just come to read as a piece, 0.9 to 0.99 sure,
/// and was flagged as one added: 7 of 19 false `added` flags. A piece dropped by
/// accident comes with a hand of its own, after the move.
pub fn around(squares: &[Cell]) -> u64 {
    squares
        .iter()
        .flat_map(|&(row, col)| neighbours(row, col))
        .fold(0u64, |bits, (row, col)| bits | 1 << (row * 8 + col))
        & !square_bits(squares)
}

/// The up to eight squares around (`row`, `col`) on the board.
fn neighbours(row: usize, col: usize) -> impl Iterator<Item = Cell> {
    (row.saturating_sub(1)..=(row + 1).min(7))
        .flat_map(move |r| (col.saturating_sub(1)..=(col + 1).min(7)).map(move |c| (r, c)))
        .filter(move |&square| square != (row, col))
}

/// The squares as bits `row * 8 + col`.
pub fn square_bits(squares: &[Cell]) -> u64 {
    squares
        .iter()
        .fold(0, |bits, &(row, col)| bits | 1 << (row * 8 + col))
}

/// The squares (bit `row * 8 + col`) where `seen` and `board` agree on whether a piece
/// stands, whatever its colour: a colour slip is the reader's, and the record knows the
/// colour.
pub fn standing_alike(seen: &Occupancy, board: &Occupancy) -> u64 {
    (0..64).fold(0, |bits, index| {
        let (row, col) = (index / 8, index % 8);
        let alike = seen.get(row, col).is_some() == board.get(row, col).is_some();
        bits | u64::from(alike) << index
    })
}

/// What the board changed by, counted by colour: pieces that appeared and vanished.
pub fn changes(before: &Occupancy, after: &Occupancy) -> (Vec<(usize, usize)>, usize, usize) {
    let mut squares = Vec::new();
    let (mut appeared, mut vanished) = (0, 0);
    for row in 0..8 {
        for col in 0..8 {
            let (was, now) = (before.get(row, col), after.get(row, col));
            if was != now {
                squares.push((row, col));
                appeared += usize::from(now.is_some());
                vanished += usize::from(was.is_some());
            }
        }
    }
    (squares, appeared, vanished)
}

/// Where a sighting (`seen`) showed `mover`'s piece set down before the move from `from`
/// to `to` was made, when it did: both squares bare, and against `before` one piece gone
/// and one come, the one come being the mover's.
pub fn set_down_square(
    before: &Occupancy,
    seen: &Occupancy,
    mover: Color,
    [from, to]: [(usize, usize); 2],
) -> Option<(usize, usize)> {
    let (changed, appeared, vanished) = changes(before, seen);
    let bare = |(row, col): (usize, usize)| seen.get(row, col).is_none();
    if !bare(from) || !bare(to) || appeared != 1 || vanished != 1 {
        return None;
    }
    changed
        .into_iter()
        .find(|&(row, col)| seen.get(row, col) == Some(mover))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sure(rows: &[&str]) -> Vec<[f32; 3]> {
        let occupancy = Occupancy::from_text_rows(rows).unwrap();
        probabilities(&occupancy, &[0.98; 64])
    }

    const EMPTY: [&str; 8] = ["........"; 8];

    /// A sighting of `squares` taken as soon as it settled, a hand seen.
    fn at_once(squares: &[[f32; 3]]) -> Seen8<'_> {
        Seen8 {
            squares,
            since: 0.0,
            now: 0.0,
            hand_seen: true,
            motion_seen: true,
            still: 0,
            moved: 0,
            stirred: 0,
        }
    }

    #[test]
    fn a_colour_slip_still_agrees_on_what_stands() {
        let mut rules_rows = ["........"; 8];
        rules_rows[7] = "WW......";
        let mut seen_rows = ["........"; 8];
        seen_rows[7] = "B.......";
        let rules = Occupancy::from_text_rows(&rules_rows).unwrap();
        let seen = Occupancy::from_text_rows(&seen_rows).unwrap();
        // a1 read dark where White's figure stands agrees; b1 read bare does not.
        assert_eq!(standing_alike(&seen, &rules), !(1u64 << 57));
    }

    #[test]
    fn a_fitting_explanation_wins_and_a_contradicted_one_never_does() {
        let mut rows = EMPTY;
        rows[3] = "...B....";
        let squares = sure(&rows);
        let seen = at_once(&squares);
        let right = Expected::of(&Occupancy::from_text_rows(&rows).unwrap());
        let wrong = Expected::of(&Occupancy::from_text_rows(&EMPTY).unwrap());
        assert!(right.fit(&seen).log > wrong.fit(&seen).log);
        assert_eq!(
            wrong.fit(&seen).contradicted,
            1,
            "the dark piece contradicts an empty board"
        );
        let ranking = rank(
            vec![
                Candidate {
                    what: "right",
                    expected: right,
                    prior: 0.0,
                },
                Candidate {
                    what: "wrong",
                    expected: wrong,
                    prior: 0.0,
                },
            ],
            &seen,
        );
        assert!(matches!(ranking, Ranking::Clear("right")));
    }

    #[test]
    fn of_two_that_fit_nearly_as_well_the_one_changing_no_still_square_comes_first() {
        // Makruk 310545: the King d1 or the Khon c1 to c2. The reader calls c1 (the
        // Khon's square) bare and d1 (the King's, now empty) light: the Khon's move fits
        // the reading as well as the King's, but c1's picture did not change.
        let mut before = EMPTY;
        before[7] = "..WW....";
        let recorded = Occupancy::from_text_rows(&before).unwrap();
        let explanation = |row7: &'static str| {
            let mut rows = EMPTY;
            rows[6] = "..W.....";
            rows[7] = row7;
            let mut expected = Expected::of(&Occupancy::from_text_rows(&rows).unwrap());
            expected.mark_changes(&recorded);
            expected
        };
        let mut read = EMPTY;
        read[6] = "..W.....";
        read[7] = "...W....";
        let mut squares = sure(&read);
        // Each square of the back rank read half and half.
        squares[7 * 8 + 2] = [0.55, 0.0, 0.45];
        squares[7 * 8 + 3] = [0.45, 0.0, 0.55];
        let candidates = || {
            vec![
                Candidate {
                    what: "Sc1-c2",
                    expected: explanation("...W...."),
                    prior: 0.0,
                },
                Candidate {
                    what: "Kd1-c2",
                    expected: explanation("..W....."),
                    prior: 0.0,
                },
            ]
        };
        let unknown = at_once(&squares);
        assert!(matches!(
            rank(candidates(), &unknown),
            Ranking::Unsure("Sc1-c2", "Kd1-c2")
        ));
        let c1_still = Seen8 {
            still: !(1u64 << (7 * 8 + 3) | 1u64 << (6 * 8 + 2)),
            ..at_once(&squares)
        };
        assert!(matches!(
            rank(candidates(), &c1_still),
            Ranking::Unsure("Kd1-c2", "Sc1-c2")
        ));
        // Neither still, or both: the reading's order stands.
        let all_still = Seen8 {
            still: u64::MAX,
            ..at_once(&squares)
        };
        assert!(matches!(
            rank(candidates(), &all_still),
            Ranking::Unsure("Sc1-c2", "Kd1-c2")
        ));
    }

    #[test]
    fn of_two_that_fit_nearly_as_well_the_one_changing_every_moved_square_comes_first() {
        // Makruk 310593: c1 and b2 unread (their pictures changed, the reader saw
        // nothing), so nothing new fits as well as the Khon c1-b2.
        let mut before = EMPTY;
        before[7] = "..W.....";
        let recorded = Occupancy::from_text_rows(&before).unwrap();
        let mut after = EMPTY;
        after[6] = ".W......";
        let mut moved_khon = Expected::of(&Occupancy::from_text_rows(&after).unwrap());
        moved_khon.mark_changes(&recorded);
        let mut nothing = Expected::of(&recorded);
        nothing.mark_changes(&recorded);
        let mut squares = sure(&EMPTY);
        squares[7 * 8 + 2] = [1.0 / 3.0; 3];
        squares[6 * 8 + 1] = [1.0 / 3.0; 3];
        let candidates = || {
            vec![
                Candidate {
                    what: "nothing",
                    expected: nothing.clone(),
                    prior: 0.0,
                },
                Candidate {
                    what: "Sc1-b2",
                    expected: moved_khon.clone(),
                    prior: -0.5,
                },
            ]
        };
        assert!(matches!(
            rank(candidates(), &at_once(&squares)),
            Ranking::Unsure("nothing", "Sc1-b2")
        ));
        let pictured = Seen8 {
            moved: 1 << (7 * 8 + 2) | 1 << (6 * 8 + 1),
            ..at_once(&squares)
        };
        assert!(matches!(
            rank(candidates(), &pictured),
            Ranking::Unsure("Sc1-b2", "nothing")
        ));
    }

    #[test]
    fn an_explanation_needing_a_colour_slip_is_taken_only_when_none_fits_without() {
        // A light piece on d5 (row 3, col 3) and a dark one on e5: the dark one read
        // light. "kept" fits only by the slip, "moved" (the dark piece gone, a light one
        // come) without one, though on a square read less surely.
        let mut rows = EMPTY;
        rows[3] = "...WB...";
        let recorded = Occupancy::from_text_rows(&rows).unwrap();
        let mut squares = sure(&rows);
        squares[28] = [0.02, 0.01, 0.97];
        let seen = at_once(&squares);
        let slip = ColourSlip::over(0.25, &recorded);
        let kept = Expected::of(&recorded).with_slip(slip);
        let fit = kept.fit(&seen);
        assert_eq!((fit.contradicted, fit.slipped), (0, 1));
        let mut moved_rows = rows;
        moved_rows[3] = "...WW...";
        let candidates = |with_moved: bool| {
            let mut out = vec![Candidate {
                what: "kept",
                expected: kept.clone(),
                prior: 0.0,
            }];
            if with_moved {
                out.push(Candidate {
                    what: "moved",
                    expected: Expected::of(&Occupancy::from_text_rows(&moved_rows).unwrap())
                        .with_slip(slip),
                    prior: -2.5,
                });
            }
            out
        };
        assert!(matches!(
            rank(candidates(true), &seen),
            Ranking::Clear("moved")
        ));
        assert!(matches!(
            rank(candidates(false), &seen),
            Ranking::Clear("kept")
        ));
        // No slip where the recorded position had the other side's piece: a light piece
        // expected where a dark one stood must read light.
        let captured = Expected::of(&Occupancy::from_text_rows(&moved_rows).unwrap());
        let mut dark = sure(&rows);
        dark[28] = [0.02, 0.97, 0.01];
        let seen = Seen8 {
            squares: &dark,
            ..seen
        };
        assert_eq!(captured.with_slip(slip).fit(&seen).contradicted, 1);
    }

    #[test]
    fn a_piece_that_arrives_showing_the_other_sides_colour_is_not_taken_at_once() {
        // A light piece on d5 (row 3, col 3) goes to e5, read dark there: only the slip
        // explains it, on a square the record holds empty.
        let mut rows = EMPTY;
        rows[3] = "...W....";
        let recorded = Occupancy::from_text_rows(&rows).unwrap();
        let slip = ColourSlip::over(0.25, &recorded);
        let mut moved_rows = EMPTY;
        moved_rows[3] = "....W...";
        let mut squares = sure(&EMPTY);
        squares[28] = [0.04, 0.92, 0.04];
        let seen = at_once(&squares);
        let candidates = vec![
            Candidate {
                what: "kept",
                expected: Expected::of(&recorded).with_slip(slip),
                prior: 0.0,
            },
            Candidate {
                what: "moved",
                expected: Expected::of(&Occupancy::from_text_rows(&moved_rows).unwrap())
                    .with_slip(slip),
                prior: 0.0,
            },
        ];
        let fit = candidates[1].expected.fit(&seen);
        assert_eq!((fit.slipped, fit.slipped_arrivals), (1, 1));
        assert!(matches!(rank(candidates, &seen), Ranking::Slipped("moved")));
    }

    #[test]
    fn an_unsure_square_lets_the_prior_decide_but_not_clearly() {
        let mut squares = sure(&EMPTY);
        squares[27] = [0.45, 0.4, 0.15];
        let seen = at_once(&squares);
        let mut rows = EMPTY;
        rows[3] = "...B....";
        let candidates = vec![
            Candidate {
                what: "piece",
                expected: Expected::of(&Occupancy::from_text_rows(&rows).unwrap()),
                prior: 0.0,
            },
            Candidate {
                what: "empty",
                expected: Expected::of(&Occupancy::from_text_rows(&EMPTY).unwrap()),
                prior: 0.0,
            },
        ];
        assert!(matches!(
            rank(candidates, &seen),
            Ranking::Unsure("empty", "piece")
        ));
    }
    #[test]
    fn a_doubtful_explanation_does_not_beat_a_likelier_move_one_square_contradicts() {
        // A dark Ruea d8-f8 (row 0, cols 3 and 5) of its square's colour: f8 reads bare,
        // e7 (row 1, col 4) half occupied. The double move d8-e8, e8-e7 fits every
        // square; the move contradicts only f8, and is likelier for all that.
        let mut before = EMPTY;
        before[0] = "...B....";
        let mut after = EMPTY;
        after[0] = ".....B..";
        let mut twice = EMPTY;
        twice[1] = "....B...";
        let candidates = || {
            vec![
                Candidate {
                    what: "nothing",
                    expected: Expected::of(&Occupancy::from_text_rows(&before).unwrap()),
                    prior: 0.0,
                },
                Candidate {
                    what: "Rf8",
                    expected: Expected::of(&Occupancy::from_text_rows(&after).unwrap()),
                    prior: 0.0,
                },
                Candidate {
                    what: "Re8 Re7",
                    expected: Expected::of(&Occupancy::from_text_rows(&twice).unwrap()),
                    prior: -4.0,
                },
            ]
        };
        let mut squares = sure(&EMPTY);
        squares[12] = [0.8, 0.18, 0.02];
        squares[5] = [0.9, 0.08, 0.02];
        let seen = at_once(&squares);
        assert!(matches!(
            rank(candidates(), &seen),
            Ranking::Unsure("Rf8", "Re8 Re7")
        ));
        // f8 read bare beyond doubt: the double move it is.
        let mut bare_f8 = squares.clone();
        bare_f8[5] = [0.9995, 0.0004, 0.0001];
        let seen = Seen8 {
            squares: &bare_f8,
            ..seen
        };
        assert!(matches!(
            rank(candidates(), &seen),
            Ranking::Clear("Re8 Re7")
        ));
    }
}
