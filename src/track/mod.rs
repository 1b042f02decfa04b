//! Temporal tracking: from a stream of frames to the positions that stood still on the
//! board, with hands, bumps and lost boards taken out. Vision only: nothing here knows the
//! rules; the recorder ([`crate::recorder`]) turns settled positions into moves.
//!
//! Per analysed frame:
//!
//! 1. **Where the board is.** Found once by the locator (`geometry::locate`), then kept:
//!    a board does not move between frames unless something bumps it. The grid's fit is
//!    checked every frame by the contrast of its lines ([`alignment`]); when the view has
//!    been still for a while and the lines no longer sit where the grid says, the camera or
//!    the board moved and the board is found again. The recorded position is matched
//!    against the new view under the four turns, so the game continues in its own frame.
//! 2. **Whether the board can be believed.** The board is rectified and reduced to the
//!    colour of every gap between points and every point ([`samples`]). Gaps that changed
//!    since the previous frame are motion (a hand moving); gaps that differ from the last
//!    settled view without a changed stone beside them are a cover (a hand resting, an arm,
//!    a shadow). Either way the frame is no evidence of a position.
//! 3. **What stands where.** Clear frames are read point by point with the stone reader,
//!    sharpened by what this board's own stones and bare points have looked like
//!    ([`reading::adapt`], learned from the recorded position given by
//!    [`Tracker::believe`]), and a position counts as settled once the
//!    same reading held on every clear frame for a short window
//!    ([`TrackerOptions::settle_seconds`]): one glare frame or one misread changes nothing.

pub mod eight;
pub mod patches;
pub mod pictures;
pub mod samples;

use crate::games::Occupancy;
use crate::geometry::{BoardGeometry, follow, gray, locate};
use crate::reading::adapt::{self, BoardLooks};
use crate::reading::{self, Observation, Reader};
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;
use samples::{Samples, is_outer_gap, rim_places};

/// Pixels per grid cell in the rectified board (as `kradan detect` reads it).
pub const CELL: i32 = 32;

/// Grey levels a gap must change by, beyond the overall gain, to count as moved against the
/// previous frame: well above sensor and compression noise averaged over the sample box.
const MOTION_THRESHOLD: f32 = 14.0;
/// Moved gaps that make a frame "moving" (one alone may be a noise spike).
const MOTION_GAPS: usize = 2;
/// Unexplained changed gaps that make a still frame "covered".
const COVER_GAPS: usize = 2;

/// How long a still view has read covered (`cover` unexplained gaps, at least
/// [`COVER_GAPS`]) without a break, `since` keeping that spell's start; 0 when it does not.
/// Both trackers believe a cover only once it has lasted as well as the stillness. A spell
/// begun goes on through views with at least `kept_from` unexplained gaps, fewer than make
/// a cover.
fn covered_for(since: &mut Option<f64>, cover: usize, kept_from: usize, time: f64) -> f64 {
    if cover >= COVER_GAPS {
        time - *since.get_or_insert(time)
    } else {
        if cover < kept_from {
            *since = None;
        }
        0.0
    }
}
/// The line contrast, as a share of the contrast when the board was found, below which
/// the grid no longer sits on the lines.
const MISALIGNED: f64 = 0.5;
/// How long the view must be still and misaligned (or widely changed) before the board is
/// looked for again: a shaking camera settles in less.
const RELOCATE_AFTER: f64 = 0.5;
/// A view that stayed perfectly still, and differed from the last settled view, this long
/// is believed even where it differs: light changed, or a hand was in the first frame.
/// A still board that an arm only begins to cross is not: the arm's first frame is new.
const STILL_TRUST: f64 = 1.5;
/// How often a lost board is looked for, in seconds of source time.
const RETRY_EVERY: f64 = 1.0;
/// The line contrast, as a share of the contrast when the board was last found, a grid
/// followed from the view before a bump must show to be taken: well clear of
/// [`MISALIGNED`], where a grid a fraction of a spacing off its lines falls.
const FOLLOWED: f64 = 0.7;
/// The share of gaps a view found again may differ in from the view carried over from
/// before the bump and still be compared with it: a hand covers a corner, not the board;
/// light that changed with the camera's angle changes nearly every gap.
const CARRIED_COVER: f64 = 0.5;

/// Whether every side's rim ([`rim_places`]) lies inside the picture, so that an arm
/// reaching in from any side would be seen crossing it. A board filling the picture
/// leaves the arm unseen until its hand is over the squares.
pub(crate) fn edge_in_view(geometry: &BoardGeometry, width: i32, height: i32) -> bool {
    let margin = f64::from(CELL) * 0.1;
    let inside = |[col, row]: [f64; 2]| {
        let [x, y] = geometry.to_image(col, row);
        x >= margin
            && y >= margin
            && x < f64::from(width) - margin
            && y < f64::from(height) - margin
    };
    let lines = geometry.size;
    let places = rim_places(lines);
    // The rim lies four samples to a line, one beyond each side, in turn.
    (0..4).all(|side| {
        let seen = places
            .iter()
            .skip(side)
            .step_by(4)
            .filter(|&&p| inside(p))
            .count();
        seen * 4 >= lines * 3
    })
}

/// The least change between two frames, in grey levels, of a sample beyond the board's
/// edge that an arm crossing it makes. The knock of a table jolts the camera too, and its
/// shake changes every sample along an edge a little at once (Mak-hos 300209: by 15 to
/// 17 levels), where an arm's skin or sleeve against the board changes the few samples it
/// covers by 24 to 64.
const ARM_THRESHOLD: f32 = 2.0 * MOTION_THRESHOLD;

/// A frame's `reach` (see [`Report::reach`]): whether something reached across the edge
/// of the board `geometry` places in `image`, or nothing can say so: the edge is out of
/// the picture, or no view has settled yet to compare with (`reference`).
pub(crate) fn reaches_across_edge(
    geometry: &BoardGeometry,
    image: &Mat,
    samples: &Samples,
    previous: Option<&Samples>,
    reference: Option<&Samples>,
) -> bool {
    !edge_in_view(geometry, image.cols(), image.rows())
        || reference.is_none_or(|reference| arm_at_edge(samples, previous, reference))
}

/// Whether an arm shows at the board's edge: the rim or the ring half a square beyond the
/// edges moved since the previous frame, or differs in kind from the last settled view
/// (an arm lying still across it). Nothing that stands on the board reaches the rim; a
/// tall figure on an edge square may lean over the ring, which at worst takes a knock for
/// a hand, as every motion was taken before.
fn arm_at_edge(samples: &Samples, previous: Option<&Samples>, reference: &Samples) -> bool {
    let moved = previous.is_some_and(|previous| {
        let outer_moved = samples
            .changed_gaps(previous, ARM_THRESHOLD)
            .iter()
            .enumerate()
            .any(|(gap, &c)| c && is_outer_gap(samples.size, gap));
        outer_moved || samples.rim_changed(previous, ARM_THRESHOLD) > 0
    });
    moved
        || samples.rim_changed_in_kind(reference).contains(&true)
        || samples
            .changed_in_kind(reference)
            .iter()
            .enumerate()
            .any(|(gap, &c)| c && is_outer_gap(samples.size, gap))
}

#[derive(Clone, Debug)]
pub struct TrackerOptions {
    /// Lines per side, when known.
    pub size: Option<usize>,
    /// The grid when it is known beforehand (a calibration file or corners for a fixed
    /// camera); the locator is then used only after a bump.
    pub geometry: Option<BoardGeometry>,
    /// How long a reading must hold on clear frames to settle. 0 settles on one frame (a
    /// folder of stills, one per position).
    pub settle_seconds: f64,
    /// At least this many clear frames must agree (1 for stills).
    pub settle_frames: usize,
    /// Each frame is an independent still: no motion between frames is expected, and a
    /// changed view is not a bump.
    pub stills: bool,
}

impl Default for TrackerOptions {
    fn default() -> Self {
        TrackerOptions {
            size: None,
            geometry: None,
            settle_seconds: 0.2,
            settle_frames: 3,
            stills: false,
        }
    }
}

/// What one analysed frame showed.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// No board found (yet, or since it was lost).
    NoBoard,
    /// Something is moving over the board.
    Moving { gaps: usize },
    /// Still, but part of the board is hidden or changed by something that is not a stone.
    Covered { gaps: usize },
    /// The board is in full view; the reading is in the report.
    Clear,
}

/// Something about the board itself, for the log.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackEvent {
    /// The board was found; `how` says by what.
    Found { corners: [[f64; 2]; 4], how: String },
    /// The grid no longer fits the picture and the board could not be found again.
    Lost { reason: String },
    /// Found again after a bump or after being lost. `agreement` is the share of points on
    /// which the new view agrees with the last settled position under the chosen turn.
    Relocated {
        corners: [[f64; 2]; 4],
        quarter_turns: usize,
        agreement: f64,
        shift_pixels: f64,
    },
    /// The light changed (or the first settled view was taken with a hand in it): the
    /// reference view was renewed.
    Renewed,
}

/// A position that has held on every clear frame for the settle window, in the game's
/// frame (see [`Tracker`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    pub occupancy: Occupancy,
    /// The vote's confidence in each point's call, row by row: the mean probability the
    /// frames gave the winning call.
    pub confidence: Vec<f32>,
    /// Source time and frame index since which the vote has had this outcome.
    pub since: f64,
    pub since_index: u64,
    /// Clear frames in the run so far.
    pub frames: usize,
    /// Neighbouring points, both read bare, with something of a stone's kind on the middle
    /// of the line between them: a stone pushed off its point.
    pub between: Vec<[[usize; 2]; 2]>,
    /// Points (game order) whose stone, read the same in the last settled view and this
    /// one, has moved off its point in the picture since: a stone pushed part way, its
    /// point still reading a stone ([`stones_slid`]). Given on a run's first settled
    /// report only.
    pub slid: Vec<[usize; 2]>,
    /// Points (game order) whose picture changed since the last settled view as a stone
    /// coming or going changes it ([`stones_stirred`]), whatever the reader calls them. Given
    /// on a run's first settled report only.
    pub stirred: Vec<[usize; 2]>,
}

impl Settled {
    /// The lowest confidence among `points` (`[row, col]`), or of the whole board when empty.
    pub fn confidence_at(&self, points: &[[usize; 2]]) -> f32 {
        let size = self.occupancy.width();
        let values: Vec<f32> = if points.is_empty() {
            self.confidence.clone()
        } else {
            points
                .iter()
                .map(|[r, c]| self.confidence[r * size + c])
                .collect()
        };
        values.into_iter().fold(1.0, f32::min)
    }
}

/// The tracker's answer for one frame.
#[derive(Clone, Debug)]
pub struct Report {
    pub time: f64,
    pub index: u64,
    pub view: View,
    pub events: Vec<TrackEvent>,
    /// The current run when it has lasted the settle window (it may be the same position
    /// as before: the caller compares).
    pub settled: Option<Settled>,
    /// This frame's reading, in the game's frame, when the view was clear.
    pub reading: Option<Occupancy>,
    /// Whether something reached across the board's edge on this frame, or the edge is
    /// out of the picture and cannot say ([`reaches_across_edge`]): motion with nothing
    /// crossing the edge is a stone knocked by accident, not a hand.
    pub reach: bool,
    /// Whether an arm was seen at the board's edge on this frame: `reach` that is seen,
    /// not assumed because nothing can say.
    pub arm: bool,
}

/// Stones gone from their points (bare in `now`, image order) that stand on the middle of
/// a line from it, each with its look on its point (see
/// [`samples::stones_pushed_between`]): those held in `reference`, judged by their looks
/// there, and those found pushed before (`earlier`), judged again by the looks kept. The
/// reference view shows those bare, and the rules stage may not have acted on the
/// position one was found in (the vote still half remembering the stone on its point)
/// before the next move settles (held-out 100327, development now).
fn stones_pushed(
    edges: &[samples::Edge],
    now: &Occupancy,
    reference: Option<&(Samples, Occupancy)>,
    earlier: &[(samples::Pushed, [f32; 3])],
) -> Vec<(samples::Pushed, [f32; 3])> {
    let earlier_look = |point: [usize; 2]| {
        earlier
            .iter()
            .find(|(pushed, _)| pushed.from == point)
            .map(|&(_, look)| look)
    };
    let look = |point @ [row, col]: [usize; 2]| {
        earlier_look(point)
            .or(reference.map(|(look, _)| look.points[row * now.width() + col]))
            .unwrap_or_default()
    };
    samples::stones_pushed_between(
        edges,
        |[row, col]| now.get(row, col).is_none(),
        |point @ [row, col]| {
            earlier_look(point).is_some()
                || reference.is_some_and(|(_, then)| then.get(row, col).is_some())
        },
        look,
    )
    .into_iter()
    .map(|pushed| (pushed, look(pushed.from)))
    .collect()
}

/// A settled run's first settled picture (rectified, grey) and reading (image order).
struct StonesSeen {
    picture: Mat,
    reading: Occupancy,
    /// When the run began ([`Run::since`]): each run is compared once.
    run_since: f64,
}

/// How far (in grid spacings) a stone's picture must move between two settled views, its
/// point read the same, to be pushed off its point, and how far at most: a slide pushes a
/// stone about half a spacing and its point may still read a stone; a stone set down
/// lands within a tenth or so of its point, and a stone pushed farther leaves its point
/// bare, which [`samples::stones_pushed_between`] judges.
const STONE_SLID: f64 = 0.25;
const STONE_SLID_AT_MOST: f64 = 0.6;

/// How well a stone's picture must match itself at its new place, and how much better
/// than where it stood, to be the same stone moved (as [`eight`]'s pushed pieces).
const STONE_SLIDE_MATCH: f64 = 0.6;
const STONE_SLIDE_GAIN: f64 = 0.2;

/// The least spread (grey levels) of a stone's picture to be matched at all: a stone no
/// lighter or darker than the wood it stands on shows no edge to follow. A black stone on
/// a dark board in hard light spreads 7 to 11 (held-out Go 100555, 1920×1080: the stone
/// pushed at 62.1 s matched 0.98 half a spacing off, 0.46 where it stood, spread 9.9).
const STONE_SLIDE_TEXTURE: f64 = 6.0;

/// The most stones one push moves: more moving together is the picture shifting under
/// them (a camera nudged, the board followed a little off).
const STONES_PUSHED_AT_MOST: usize = 2;

/// Points (image order) read the same colour in `before_reading` and `after_reading`
/// whose stone's picture moved between [`STONE_SLID`] and [`STONE_SLID_AT_MOST`] of a
/// spacing from `before` to `after` (rectified grey pictures at [`CELL`]), against the
/// way the other stones' pictures moved. A stone pushed half a spacing still covers half
/// its point, and the reader may go on calling it there (held-out Go 100565: a black
/// stone pushed at 31.2 s, its point read black throughout, the slide unflagged).
fn stones_slid(
    before: &Mat,
    after: &Mat,
    before_reading: &Occupancy,
    after_reading: &Occupancy,
) -> opencv::Result<Vec<[usize; 2]>> {
    let cell = f64::from(CELL);
    let half = (0.4 * cell).round() as i32;
    let reach = (STONE_SLID_AT_MOST * cell).round() as i32;
    let size = before_reading.width();
    let mut matched = Vec::new();
    for row in 0..size {
        for col in 0..size {
            let stone = before_reading.get(row, col);
            if stone.is_none() || stone != after_reading.get(row, col) {
                continue;
            }
            // A stone put down or lifted beside it reaches into its picture, which then
            // matches best away from it (s26's Go 100538: a black stone beside White's new
            // one taken for pushed).
            let beside_a_change = (row.saturating_sub(1)..=(row + 1).min(size - 1)).any(|r| {
                (col.saturating_sub(1)..=(col + 1).min(size - 1))
                    .any(|c| before_reading.get(r, c) != after_reading.get(r, c))
            });
            if beside_a_change {
                continue;
            }
            let at = [(col + 1) as f64 * cell, (row + 1) as f64 * cell];
            if let Some(found) = patches::patch_scores(before, after, at, [0.0, 0.0], half, reach)?
                && found.spread >= STONE_SLIDE_TEXTURE
                && found.best >= STONE_SLIDE_MATCH
            {
                matched.push(([row, col], found));
            }
        }
    }
    Ok(patches::pushed_against_the_rest(
        &matched,
        cell,
        &patches::Push {
            least: STONE_SLID,
            most: STONE_SLID_AT_MOST,
            gain: STONE_SLIDE_GAIN,
            at_most: STONES_PUSHED_AT_MOST,
        },
    ))
}

/// Per point (image order, row by row), the mean absolute change in grey level of the
/// middle of its picture (half a side of [`POINT_MIDDLE`] spacings) from `before` to
/// `after` (rectified grey pictures at [`CELL`]).
fn point_changes(before: &Mat, after: &Mat, size: usize) -> opencv::Result<Vec<f64>> {
    let half = (POINT_MIDDLE * f64::from(CELL)).round() as i32;
    let centres = (0..size).flat_map(|row| {
        (0..size).map(move |col| [(col as i32 + 1) * CELL, (row as i32 + 1) * CELL])
    });
    // The rectified picture has a spacing of wood round the grid: no middle is cut.
    Ok(patches::middle_changes(before, after, centres, half)?
        .into_iter()
        .map(|change| change.map_or(0.0, |means| means[0]))
        .collect())
}

/// Half the side of the middle of a point's picture [`point_changes`] compares, in
/// spacings: inside a stone on the point.
const POINT_MIDDLE: f64 = 0.3;

/// The change of a point's middle (mean absolute grey levels, [`point_changes`]) from
/// one settled view to the next that a stone coming or going makes. On held-out Go
/// 100566 (9×9, 1280×720 `varied`) every move changed its point by 35 to 136 and no other
/// point changed by more than 6.
const STONE_CAME: f64 = 25.0;

/// How many times the largest change of any point beyond its neighbours a point's own
/// change must be to be a stone's coming or going ([`stones_stirred`]). An arm's soft
/// shadow standing over the board in one settled view and gone in the next changes a
/// patch of 24 to 56 points by 10 to 30 (s41, Go 100529, 19×19 640×480): its largest
/// point is hardly above its neighbours' neighbours. A stone changes its own point by 35
/// or more and points two away by under 10; under hard light (s26's Go 100534, 9×9
/// 640×480 `hard`) two White stones the reader missed changed theirs by 30 and 31 while
/// the light moved points beyond by 10 to 11.
const STONE_STANDS_OUT: f64 = 2.5;

/// The points (image order, `[row, col]`) whose pictures changed from one settled view to
/// the next (`changes`, [`point_changes`]) as a stone coming or going changes one: by
/// [`STONE_CAME`] at least, and [`STONE_STANDS_OUT`] times more than any point beyond its
/// eight neighbours (a stone's picture reaches into the next points', a shadow's or a
/// change of light into many).
fn stones_stirred(changes: &[f64], size: usize) -> Vec<[usize; 2]> {
    let at = |row: usize, col: usize| changes[row * size + col];
    let mut stirred = Vec::new();
    for row in 0..size {
        for col in 0..size {
            let change = at(row, col);
            if change < STONE_CAME {
                continue;
            }
            let beyond = (0..size)
                .flat_map(|r| (0..size).map(move |c| (r, c)))
                .filter(|&(r, c)| r.abs_diff(row) > 1 || c.abs_diff(col) > 1)
                .map(|(r, c)| at(r, c))
                .fold(0.0, f64::max);
            if change >= STONE_STANDS_OUT * beyond {
                stirred.push([row, col]);
            }
        }
    }
    stirred
}

/// The board as it is locked: where, which way round, and what it looked like settled.
struct Lock {
    /// In the image's own order (corner 1 at the picture's top left), which is how the
    /// stone reader expects the board: the camera at the bottom.
    geometry: BoardGeometry,
    /// Quarter turns clockwise from the image's order to the game's.
    quarter_turns: usize,
    shifts: Vec<[f64; 2]>,
    /// Line contrast when the board was found.
    alignment: f64,
    /// The view the last settled position was read on, and that reading (image order).
    reference: Option<(Samples, Occupancy)>,
    /// Each gap as it looked when last settled unchanged: the bare wood there, kept
    /// through a settled view in which something lay on it (see [`unexplained_gaps`]).
    bare: Option<Samples>,
    /// Stones pushed off their points onto the middles of lines, as judged when the
    /// settled position last changed, each with its look on its point.
    between: Vec<(samples::Pushed, [f32; 3])>,
    /// The last settled run's picture, for [`stones_slid`].
    stones_seen: Option<StonesSeen>,
    /// Whether `reference` was seen before the board was last found again: it stands
    /// until the board settles in the new view, compared inside the edge lines only
    /// (what lies just beyond them, the board's rim or the table, changes with the
    /// camera's angle), and whether it was checked against the new view yet.
    carried: bool,
    carried_checked: bool,
    previous: Option<Samples>,
    /// Since when the view has been still, and since when still but changed widely.
    still_since: Option<f64>,
    off_since: Option<f64>,
    /// Since when the still view has differed from `reference` where no stone explains it.
    covered_since: Option<f64>,
    /// The picture (grey) the board was found on, or `reference` last taken from: where
    /// the board is followed from when it moves.
    view: Mat,
}

/// Where the board stood before it was lost, to follow it from.
struct Before {
    geometry: BoardGeometry,
    view: Mat,
    alignment: f64,
}

impl Lock {
    /// Takes the settled view of the board as it was locked before (`turns` quarter turns
    /// from that image order to the game's) as this lock's reference. The rectified board
    /// looks the same wherever it stands in the picture; a board seen turned another way
    /// round is left to settle afresh.
    fn carry(&mut self, turns: usize, reference: Option<(Samples, Occupancy)>) {
        if turns % 4 == self.quarter_turns % 4
            && let Some(reference) = reference
            && reference.0.size == self.geometry.size
        {
            self.reference = Some(reference);
            self.carried = true;
        }
    }
}

/// The clear frames since the board was last disturbed, voting.
pub(crate) struct Run {
    /// Per point, the faded sums of the probabilities of empty, black, white.
    votes: Vec<[f32; 3]>,
    /// The faded number of frames (what a point's votes would sum to if all agreed).
    weight: f32,
    /// The winning call of every point (image order turned to the game's).
    occupancy: Occupancy,
    since: f64,
    /// When the winning calls last changed.
    state_since: f64,
    state_since_index: u64,
    frames: usize,
    /// Whether the run's frames are a cover not yet believed: they differ from the last
    /// settled view away from any changed point and have not stood still long enough.
    covered: bool,
}

/// How much of its weight a vote keeps per frame: at ten looks a second the last two
/// seconds count.
const VOTE_FADE: f32 = 0.95;

impl Run {
    /// A run begun by the clear frame at `time`.
    pub(crate) fn begin(size: usize, time: f64, index: u64) -> Run {
        Run {
            votes: vec![[0.0; 3]; size * size],
            weight: 0.0,
            occupancy: Occupancy::empty(size, size),
            since: time,
            state_since: time,
            state_since_index: index,
            frames: 0,
            covered: false,
        }
    }

    /// One more clear frame votes, each point by its probabilities (`size`² row by row).
    pub(crate) fn vote(&mut self, size: usize, probabilities: &[[f32; 3]], time: f64, index: u64) {
        self.frames += 1;
        self.weight = self.weight * VOTE_FADE + 1.0;
        for (vote, p) in self.votes.iter_mut().zip(probabilities) {
            for ch in 0..3 {
                vote[ch] = vote[ch] * VOTE_FADE + p[ch];
            }
        }
        let state = voted(size, &self.votes);
        if state != self.occupancy || self.frames == 1 {
            self.occupancy = state;
            self.state_since = time;
            self.state_since_index = index;
        }
    }

    /// Keeps `share` of every vote cast so far: the frames since count for more.
    pub(crate) fn discount(&mut self, share: f32) {
        self.weight *= share;
        for vote in &mut self.votes {
            vote.iter_mut().for_each(|v| *v *= share);
        }
    }

    /// Whether the run has lasted the settle window by `time`.
    pub(crate) fn has_settled(&self, options: &TrackerOptions, time: f64) -> bool {
        self.frames >= options.settle_frames && time - self.since >= options.settle_seconds - 1e-9
    }

    /// Per point, the faded share of the votes each of empty, black, white got.
    pub(crate) fn shares(&self) -> Vec<[f32; 3]> {
        let weight = self.weight.max(f32::EPSILON);
        self.votes.iter().map(|v| v.map(|x| x / weight)).collect()
    }

    pub(crate) fn occupancy(&self) -> &Occupancy {
        &self.occupancy
    }

    pub(crate) fn state_since(&self) -> (f64, u64) {
        (self.state_since, self.state_since_index)
    }

    pub(crate) fn frames(&self) -> usize {
        self.frames
    }

    /// When the run's first frame was.
    pub(crate) fn began(&self) -> f64 {
        self.since
    }
}

fn voted(size: usize, votes: &[[f32; 3]]) -> Occupancy {
    let mut occupancy = Occupancy::empty(size, size);
    for (i, vote) in votes.iter().enumerate() {
        let call = crate::reading::CellReading::from_probabilities(*vote).color;
        occupancy.set(i / size, i % size, call);
    }
    occupancy
}

/// Follows one board through a stream of frames.
pub struct Tracker {
    options: TrackerOptions,
    reader: Reader,
    lock: Option<Lock>,
    run: Option<Run>,
    /// The last settled position in the game's frame, to turn a re-found board the same way.
    last_settled: Option<Occupancy>,
    next_attempt: f64,
    lost_reported: bool,
    /// Lines per side, fixed by the first board found when not given.
    size: Option<usize>,
    /// Whether a board was ever found.
    found: bool,
    /// What this board's stones and bare points look like, learned as the game goes.
    looks: Option<BoardLooks>,
    /// The position the caller has recorded, in the game's frame.
    believed: Option<Occupancy>,
    /// A board that was lost: where it stood, to follow it from, and its settled view,
    /// to compare the board with when it is found again.
    lost_at: Option<Lost>,
}

/// A board lost after it was locked.
struct Lost {
    /// Quarter turns from its image order to the game's.
    turns: usize,
    before: Before,
    reference: Option<(Samples, Occupancy)>,
}

impl Tracker {
    pub fn new(options: TrackerOptions, reader: Reader) -> Tracker {
        Tracker {
            size: options.size,
            options,
            reader,
            lock: None,
            run: None,
            last_settled: None,
            next_attempt: f64::NEG_INFINITY,
            lost_reported: false,
            found: false,
            looks: None,
            believed: None,
            lost_at: None,
        }
    }

    /// The position as recorded now, in the game's frame: the board's looks are learned
    /// from it (`reading::adapt::BoardLooks::learn` says where).
    pub fn believe(&mut self, occupancy: Occupancy) {
        self.believed = Some(occupancy);
    }

    /// The grid as a calibration file gives it for this picture size: used instead of the
    /// locator until the board is bumped.
    pub fn give_geometry(&mut self, geometry: BoardGeometry) {
        self.options.geometry = Some(geometry);
    }

    /// Lines per side of the board found (None until one is found).
    pub fn size(&self) -> Option<usize> {
        self.found.then_some(self.size).flatten()
    }

    /// The grid in the picture, in the game's frame (corner 1 = the game's point (0, 0)).
    pub fn geometry(&self) -> Option<BoardGeometry> {
        self.lock
            .as_ref()
            .map(|lock| turned_geometry(&lock.geometry, lock.quarter_turns))
    }

    /// Starts the game from a known position (a resumed record): a re-found board is
    /// turned to match it, and it is not reported as settled anew.
    pub fn assume_settled(&mut self, occupancy: Occupancy) {
        self.last_settled = Some(occupancy);
    }

    /// Analyses one frame (BGR).
    pub fn analyse(&mut self, image: &Mat, time: f64, index: u64) -> opencv::Result<Report> {
        let mut report = Report {
            time,
            index,
            view: View::NoBoard,
            events: Vec::new(),
            settled: None,
            reading: None,
            reach: true,
            arm: false,
        };
        if self.lock.is_none() {
            if time < self.next_attempt {
                return Ok(report);
            }
            self.next_attempt = time + RETRY_EVERY;
            if !self.find(image, &mut report)? {
                return Ok(report);
            }
        }
        let rectified = {
            let lock = self.lock.as_ref().expect("locked above");
            reading::rectify(image, &lock.geometry, CELL)?
        };
        let size = self.lock.as_ref().expect("locked").geometry.size;
        let samples = Samples::measure(&rectified, size, CELL)?;

        let moving = {
            let lock = self.lock.as_mut().expect("locked");
            let moved = match (&lock.previous, self.options.stills) {
                (Some(previous), false) => samples.moved(previous, MOTION_THRESHOLD),
                _ => 0,
            };
            let reference = lock.reference.as_ref().map(|(reference, _)| reference);
            report.reach = self.options.stills
                || reaches_across_edge(
                    &lock.geometry,
                    image,
                    &samples,
                    lock.previous.as_ref(),
                    reference,
                );
            report.arm = !self.options.stills
                && report.reach
                && edge_in_view(&lock.geometry, image.cols(), image.rows())
                && reference.is_some();
            lock.previous = Some(samples.clone());
            if moved >= MOTION_GAPS {
                lock.still_since = None;
                lock.off_since = None;
                lock.covered_since = None;
                Some(moved)
            } else {
                lock.still_since.get_or_insert(time);
                None
            }
        };
        if let Some(gaps) = moving {
            report.view = View::Moving { gaps };
            self.run = None;
            return Ok(report);
        }

        // Still. Is the grid still on the lines?
        let alignment = alignment(&rectified, size, CELL)?;
        let misaligned = {
            let lock = self.lock.as_ref().expect("locked");
            alignment < MISALIGNED * lock.alignment
        };
        if misaligned && !self.options.stills {
            let lock = self.lock.as_mut().expect("locked");
            let off_since = *lock.off_since.get_or_insert(time);
            if time - off_since >= RELOCATE_AFTER {
                lock.off_since = None;
                self.refind(image, &mut report, "the grid no longer fits the picture")?;
                self.run = None;
                return Ok(report);
            }
            report.view = View::Covered {
                gaps: samples.gaps.len(),
            };
            self.run = None;
            return Ok(report);
        } else if let Some(lock) = self.lock.as_mut() {
            lock.off_since = None;
        }

        let lock = self.lock.as_ref().expect("locked");
        let measured = adapt::Measured::of(&rectified, size, CELL, &lock.shifts)?;
        let observation =
            self.reader
                .read_measured(&rectified, size, CELL, measured.lightness())?;
        let looks = measured.looks();
        let board_looks = match &mut self.looks {
            Some(known) if known.size() == size => known,
            other => other.insert(BoardLooks::go(size)),
        };
        // What the reader says alone is what the looks learn from: learning from the
        // sharpened call would let one bare-looking frame of a new stone teach its point
        // that a stone is what bare looks like there.
        let unaided = observation.occupancy();
        let observation = board_looks.sharpen(observation, &looks);
        let reading = observation.occupancy();

        // A still view that differs from the settled one away from any changed stone is
        // covered, unless it has been still and so long enough to be the new normal.
        let mut cover = match &lock.reference {
            Some((reference, reference_reading)) => unexplained_gaps(
                &samples,
                reference,
                &reading,
                reference_reading,
                lock.bare.as_ref(),
                lock.carried,
            ),
            None => 0,
        };
        if lock.carried && !lock.carried_checked {
            // The view from before the bump is what a hand is told from until the board
            // settles again: the first view after a bump often has the next player's arm
            // in it, and taking that for the board makes the bare board look covered.
            // Unless the light changed with the camera: then nothing matches it.
            let lock = self.lock.as_mut().expect("locked");
            lock.carried_checked = true;
            if cover as f64 > CARRIED_COVER * ((size - 1) * (size - 1)) as f64 {
                lock.reference = None;
                lock.carried = false;
                cover = 0;
            }
        }
        let lock = self.lock.as_mut().expect("locked");
        let covered_for = covered_for(&mut lock.covered_since, cover, COVER_GAPS, time);
        let still_for = lock.still_since.map_or(0.0, |since| time - since);
        let lock = self.lock.as_ref().expect("locked");
        // Stills are independent observations: each is believed as it is.
        let untrusted =
            cover >= COVER_GAPS && still_for.min(covered_for) < STILL_TRUST && !self.options.stills;
        let renew = cover >= COVER_GAPS;
        let probabilities = turned_probabilities(&observation, lock.quarter_turns);
        // A covered view still votes, into a run of its own: when it has stood still long
        // enough to be believed, its votes are the settle window already served, so a
        // position that stood 1.6 s under "cover" (stones knocked between points, Go
        // 100378: the players' hands came back 0.2 s after it was believed) is not lost.
        // A cover that ends some other way (without motion) is not evidence: the run
        // begins again.
        let carried = self.run.take().filter(|run| {
            !self.options.stills
                && if untrusted {
                    run.covered
                } else {
                    renew || !run.covered
                }
        });
        let mut run = carried.unwrap_or_else(|| Run::begin(size, time, index));
        run.covered = untrusted;
        run.vote(size, &probabilities, time, index);
        if untrusted {
            report.view = View::Covered { gaps: cover };
            self.run = Some(run);
            return Ok(report);
        }

        report.view = View::Clear;
        // The recorded position, else the last settled one, in the image's order.
        if let Some(believed) = self.believed.as_ref().or(self.last_settled.as_ref())
            && let Some(board_looks) = &mut self.looks
        {
            let in_image = believed.turned(4 - lock.quarter_turns % 4);
            board_looks.learn(&looks, &in_image, &unaided);
        }
        report.reading = Some(reading.turned(lock.quarter_turns));

        // Every clear frame since the board was last disturbed votes, each point by its
        // probabilities; older votes fade so a long still spell follows slow changes.
        // Stills are independent observations: each votes alone.
        if run.has_settled(&self.options, time) {
            let confidence = run
                .shares()
                .iter()
                .map(|v| v.iter().copied().fold(0.0, f32::max))
                .collect();
            let turns = lock.quarter_turns % 4;
            let lock = self.lock.as_mut().expect("locked");
            let is_new = self.last_settled.as_ref() != Some(&run.occupancy);
            if is_new {
                // Judged once, against the view the last position was read on: while this
                // position stands that view is replaced by its own.
                let now = run.occupancy.turned(4 - turns);
                lock.between = stones_pushed(
                    &samples::edges(&rectified, size, CELL)?,
                    &now,
                    lock.reference.as_ref(),
                    &lock.between,
                );
            }
            let between = lock
                .between
                .iter()
                .map(|(pushed, _)| pushed.line.map(|point| turned_point(point, size, turns)))
                .collect();
            let (mut slid, mut stirred) = (Vec::new(), Vec::new());
            if lock.stones_seen.as_ref().map(|seen| seen.run_since) != Some(run.since) {
                let picture = gray(&rectified)?;
                let reading = run.occupancy.turned(4 - turns);
                if let Some(seen) = &lock.stones_seen
                    && !self.options.stills
                {
                    stirred = stones_stirred(&point_changes(&seen.picture, &picture, size)?, size)
                        .into_iter()
                        .map(|point| turned_point(point, size, turns))
                        .collect();
                    slid = stones_slid(&seen.picture, &picture, &seen.reading, &reading)?
                        .into_iter()
                        .map(|point| turned_point(point, size, turns))
                        .collect();
                }
                lock.stones_seen = Some(StonesSeen {
                    picture,
                    reading,
                    run_since: run.since,
                });
            }
            report.settled = Some(Settled {
                occupancy: run.occupancy.clone(),
                confidence,
                since: run.state_since,
                since_index: run.state_since_index,
                frames: run.frames,
                between,
                slid,
                stirred,
            });
            if is_new || lock.reference.is_none() || renew || lock.carried {
                lock.carried = false;
                if renew && !is_new {
                    report.events.push(TrackEvent::Renewed);
                }
                lock.bare = Some(match (lock.bare.take(), &lock.reference) {
                    (Some(mut bare), Some((reference, _))) if !lock.carried => {
                        let changed = samples.changed_in_kind(reference);
                        for (gap, changed) in changed.into_iter().enumerate() {
                            if !changed {
                                bare.gaps[gap] = samples.gaps[gap];
                            }
                        }
                        bare
                    }
                    _ => samples.clone(),
                });
                lock.reference = Some((samples, reading));
                lock.view = gray(image)?;
            }
            self.last_settled = Some(run.occupancy.clone());
        }
        self.run = Some(run);
        Ok(report)
    }

    /// First search for the board, or for a board that was lost. True when found.
    fn find(&mut self, image: &Mat, report: &mut Report) -> opencv::Result<bool> {
        // A board lost after a game began is first followed from where it stood; it keeps
        // its turn. The locator, with no prior, is the fallback.
        let followed = match (&self.lost_at, &self.last_settled) {
            (Some(lost), Some(_)) => self.follow(image, &lost.before)?,
            _ => None,
        };
        let was_followed = followed.is_some();
        let (geometry, how) = match (followed, &self.options.geometry) {
            (Some(geometry), _) => (Some(geometry), String::new()),
            (None, Some(geometry)) if self.last_settled.is_none() => (
                Some(locate::image_order(geometry)),
                "the calibration's corners".to_string(),
            ),
            (None, _) => (locate_in(image, self.size)?, "the grid's lines".to_string()),
        };
        let Some(geometry) = geometry else {
            if !self.lost_reported {
                self.lost_reported = true;
                report.events.push(TrackEvent::Lost {
                    reason: "no board in view".into(),
                });
            }
            return Ok(false);
        };
        self.lost_reported = false;
        let lock = self.lock_on(image, geometry, 0)?;
        if self.last_settled.is_none() {
            report.events.push(TrackEvent::Found {
                corners: lock.geometry.corners(),
                how,
            });
            self.lock = Some(lock);
            return Ok(true);
        }
        let lost = self.lost_at.take();
        self.relocate(image, lock, lost, was_followed, report)?;
        Ok(true)
    }

    /// Ends finding a board again: the lock turned as the `lost` board was when it was
    /// `followed` (it kept its lines), else as the last settled reading fits it best;
    /// handed the lost board's settled view; said as relocated, with how far it moved.
    fn relocate(
        &mut self,
        image: &Mat,
        mut lock: Lock,
        lost: Option<Lost>,
        followed: bool,
        report: &mut Report,
    ) -> opencv::Result<()> {
        let old_turns = lost.as_ref().map_or(0, |lost| lost.turns);
        let (turns, agreement) = match &self.last_settled.clone() {
            Some(settled) if followed => (
                old_turns,
                self.agreement(image, &lock.geometry, settled, old_turns)?,
            ),
            Some(settled) => self.best_turn(image, &lock.geometry, settled)?,
            None => (old_turns, 1.0),
        };
        lock.quarter_turns = turns;
        let shift_pixels = lost.as_ref().map_or(0.0, |lost| {
            lost.before.geometry.corner_shift(&lock.geometry)
        });
        if let Some(lost) = lost {
            lock.carry(old_turns, lost.reference);
        }
        report.events.push(TrackEvent::Relocated {
            corners: turned_geometry(&lock.geometry, turns).corners(),
            quarter_turns: turns,
            agreement,
            shift_pixels,
        });
        self.lock = Some(lock);
        Ok(())
    }

    /// The grid stopped fitting: find the board again, or report it lost.
    fn refind(&mut self, image: &Mat, report: &mut Report, why: &str) -> opencv::Result<()> {
        let old = self.lock.take().expect("called while locked");
        self.next_attempt = report.time + RETRY_EVERY;
        let lost = Lost {
            turns: old.quarter_turns,
            before: Before {
                geometry: old.geometry,
                view: old.view,
                alignment: old.alignment,
            },
            reference: old.reference,
        };
        // Followed from where it stood, the board keeps its own lines and its turn; the
        // locator, with no prior, is the fallback.
        let followed = self.follow(image, &lost.before)?;
        let was_followed = followed.is_some();
        let found = match followed {
            Some(geometry) => Some(geometry),
            None => locate_in(image, self.size)?,
        };
        let Some(geometry) = found else {
            self.lost_at = Some(lost);
            self.lost_reported = true;
            report.events.push(TrackEvent::Lost {
                reason: format!("{why}, and no board was found in view"),
            });
            return Ok(());
        };
        let lock = self.lock_on(image, geometry, lost.turns)?;
        self.relocate(image, lock, Some(lost), was_followed, report)
    }

    fn lock_on(
        &mut self,
        image: &Mat,
        geometry: BoardGeometry,
        turns: usize,
    ) -> opencv::Result<Lock> {
        self.size = Some(geometry.size);
        self.found = true;
        let rectified = reading::rectify(image, &geometry, CELL)?;
        let alignment = alignment(&rectified, geometry.size, CELL)?;
        let shifts =
            reading::parallax_shifts(&geometry, f64::from(image.cols()), f64::from(image.rows()));
        Ok(Lock {
            geometry,
            quarter_turns: turns,
            shifts,
            alignment,
            reference: None,
            bare: None,
            between: Vec::new(),
            stones_seen: None,
            carried: false,
            carried_checked: false,
            previous: None,
            still_since: None,
            off_since: None,
            covered_since: None,
            view: gray(image)?,
        })
    }

    /// The board of `before` followed into `image`: the best-aligned grid
    /// [`follow::follow`] offers, when its lines show nearly as clearly as when the board
    /// was found.
    fn follow(&self, image: &Mat, before: &Before) -> opencv::Result<Option<BoardGeometry>> {
        let mut best: Option<(f64, BoardGeometry)> = None;
        for grid in follow::follow(&before.view, image, &before.geometry)? {
            let rectified = reading::rectify(image, &grid, CELL)?;
            let contrast = alignment(&rectified, grid.size, CELL)?;
            if best.as_ref().is_none_or(|(c, _)| contrast > *c) {
                best = Some((contrast, grid));
            }
        }
        Ok(best
            .filter(|(contrast, _)| *contrast >= FOLLOWED * before.alignment)
            .map(|(_, grid)| grid))
    }

    /// The share of points on which this view, turned `turns` quarters, agrees with
    /// `settled`.
    fn agreement(
        &self,
        image: &Mat,
        geometry: &BoardGeometry,
        settled: &Occupancy,
        turns: usize,
    ) -> opencv::Result<f64> {
        Ok(
            self.read(image, geometry)?.turned(turns).agreement(settled) as f64
                / (settled.height() * settled.width()).max(1) as f64,
        )
    }

    /// The quarter turn under which this view's reading agrees best with `settled`.
    fn best_turn(
        &self,
        image: &Mat,
        geometry: &BoardGeometry,
        settled: &Occupancy,
    ) -> opencv::Result<(usize, f64)> {
        Ok(best_turn_of(&self.read(image, geometry)?, settled))
    }

    /// The reader's call on every point (image order).
    fn read(&self, image: &Mat, geometry: &BoardGeometry) -> opencv::Result<Occupancy> {
        let rectified = reading::rectify(image, geometry, CELL)?;
        let shifts =
            reading::parallax_shifts(geometry, f64::from(image.cols()), f64::from(image.rows()));
        Ok(self
            .reader
            .read(&rectified, geometry.size, CELL, &shifts)?
            .occupancy())
    }
}

fn locate_in(image: &Mat, size: Option<usize>) -> opencv::Result<Option<BoardGeometry>> {
    Ok(locate::locate(image, size)?.geometry)
}

/// Gaps that changed against the reference view with no changed stone on any of their
/// four corners, and rim samples that changed: what a stone cannot do. A gap that looks
/// again as it did bare (`bare`) is not one: a stone knocked off its points onto it was
/// lifted (held-out Go 100481: two knocked stones lay between points in the settled
/// view, and once the players put them back the board read covered until the next hand,
/// so three moves waited 17 s and came as one change).
fn unexplained_gaps(
    samples: &Samples,
    reference: &Samples,
    reading: &Occupancy,
    reference_reading: &Occupancy,
    bare: Option<&Samples>,
    inner_only: bool,
) -> usize {
    let size = samples.size;
    let mut changed = samples.changed_in_kind(reference);
    if inner_only {
        for (gap, changed) in changed.iter_mut().enumerate() {
            *changed &= !samples::is_outer_gap(size, gap);
        }
    }
    let mut explained = match bare {
        Some(bare) if bare.size == size => samples
            .changed_in_kind(bare)
            .into_iter()
            .map(|changed| !changed)
            .collect(),
        _ => vec![false; changed.len()],
    };
    for row in 0..size {
        for col in 0..size {
            if reading.get(row, col) != reference_reading.get(row, col) {
                for gap in samples::gaps_around(size, col, row) {
                    explained[gap] = true;
                }
            }
        }
    }
    // An arm reaching for an edge point crosses the rim, which no stone reaches. Seen from
    // a camera that moved, the rim lies elsewhere on the board's border or the table.
    let rim = if inner_only {
        Vec::new()
    } else {
        samples.rim_changed_in_kind(reference)
    };
    if std::env::var_os("KRADAN_TRACE_GAPS").is_some() {
        let rim: Vec<String> = rim
            .iter()
            .enumerate()
            .filter(|(_, c)| **c)
            .map(|(i, _)| format!("rim{}:{}", i % 4, i / 4))
            .collect();
        if !rim.is_empty() {
            eprintln!("   rim: {}", rim.join(" "));
        }
        let side = size + 1;
        let list: Vec<String> = changed
            .iter()
            .zip(&explained)
            .enumerate()
            .filter(|(_, (c, e))| **c && !**e)
            .map(|(i, _)| {
                let (a, b) = (&samples.gaps[i], &reference.gaps[i]);
                format!(
                    "({},{}) {:?}->{:?}",
                    i % side,
                    i / side,
                    b.map(|v| v as i32),
                    a.map(|v| v as i32)
                )
            })
            .collect();
        if !list.is_empty() {
            eprintln!("   unexplained: {}", list.join(" "));
        }
    }
    changed
        .iter()
        .zip(&explained)
        .filter(|&(&c, &e)| c && !e)
        .count()
        + rim.iter().filter(|&&c| c).count()
}

/// The grid whose point (0, 0) is the game's, given the image-ordered grid and the quarter
/// turns from image order to game order.
fn turned_geometry(geometry: &BoardGeometry, quarter_turns: usize) -> BoardGeometry {
    let mut corners = geometry.corners();
    // A clockwise turn of the board's content moves what was at the image's top-left
    // corner to the top-right: the game's corner 1 is the image's corner 4.
    corners.rotate_right(quarter_turns % 4);
    BoardGeometry::from_corners(geometry.size, corners).unwrap_or_else(|| geometry.clone())
}

/// A point (row, col) of a `size`×`size` board turned clockwise by `quarter_turns`, as
/// [`turned_cells`] turns the values.
fn turned_point([row, col]: [usize; 2], size: usize, quarter_turns: usize) -> [usize; 2] {
    (0..quarter_turns % 4).fold([row, col], |[row, col], _| [col, size - 1 - row])
}

fn turned_probabilities(observation: &Observation, quarter_turns: usize) -> Vec<[f32; 3]> {
    let cells: Vec<[f32; 3]> = observation.cells.iter().map(|c| c.probabilities).collect();
    turned_cells(cells, observation.size, quarter_turns)
}

/// Per-point values of a `size`×`size` board (row by row) turned clockwise by
/// `quarter_turns`, as [`Occupancy::turned`] turns the calls.
pub(crate) fn turned_cells<T: Copy + Default>(
    mut cells: Vec<T>,
    size: usize,
    quarter_turns: usize,
) -> Vec<T> {
    for _ in 0..quarter_turns % 4 {
        let mut turned = vec![T::default(); cells.len()];
        for row in 0..size {
            for col in 0..size {
                turned[col * size + (size - 1 - row)] = cells[row * size + col];
            }
        }
        cells = turned;
    }
    cells
}

/// The quarter turn (clockwise, image order to the game's) under which `reading` agrees
/// best with `settled`, and the share of points that then agree. Pieces decide; on an
/// empty board every turn agrees and the first is kept.
pub(crate) fn best_turn_of(reading: &Occupancy, settled: &Occupancy) -> (usize, f64) {
    let (height, width) = (settled.height(), settled.width());
    let total = (height * width).max(1) as f64;
    let best = (0..4)
        .map(|turns| {
            let turned = reading.turned(turns);
            let pieces_agreeing = (0..height)
                .flat_map(|r| (0..width).map(move |c| (r, c)))
                .filter(|&(r, c)| {
                    settled.get(r, c).is_some() && turned.get(r, c) == settled.get(r, c)
                })
                .count();
            (turns, pieces_agreeing, turned.agreement(settled))
        })
        .max_by_key(|&(turns, pieces, _)| (pieces, std::cmp::Reverse(turns)))
        .expect("four turns");
    (best.0, best.2 as f64 / total)
}

/// How dark the grid's lines are against the board beside them, at the middle of every
/// edge between two points (where stones on those points leave the line visible): the
/// median over the board, in grey levels. Falls to near zero when the grid is off its
/// lines by a fraction of a spacing.
pub fn alignment(rectified: &Mat, size: usize, cell: i32) -> opencv::Result<f64> {
    let mut gray = Mat::default();
    imgproc::cvt_color_def(rectified, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    let step = gray.step1(0)?;
    let data = gray.data_bytes()?;
    let at = |x: i32, y: i32| f64::from(data[y as usize * step + x as usize]);
    let side = gray.cols();
    let offset = (cell / 4).max(2);
    let mut contrasts = Vec::with_capacity(2 * size * size);
    let c = f64::from(cell);
    for row in 0..size {
        for col in 0..size {
            let (x, y) = ((col as f64 + 1.0) * c, (row as f64 + 1.0) * c);
            // A horizontal line (to the next column) and a vertical one (to the next row).
            if col + 1 < size {
                let mx = (x + c / 2.0).round() as i32;
                let my = y.round() as i32;
                if my - offset >= 0 && my + offset < side {
                    let line = (-1..=1).map(|d| at(mx + d, my)).sum::<f64>() / 3.0;
                    let beside = (at(mx, my - offset) + at(mx, my + offset)) / 2.0;
                    contrasts.push(beside - line);
                }
            }
            if row + 1 < size {
                let mx = x.round() as i32;
                let my = (y + c / 2.0).round() as i32;
                if mx - offset >= 0 && mx + offset < side {
                    let line = (-1..=1).map(|d| at(mx, my + d)).sum::<f64>() / 3.0;
                    let beside = (at(mx - offset, my) + at(mx + offset, my)) / 2.0;
                    contrasts.push(beside - line);
                }
            }
        }
    }
    if contrasts.is_empty() {
        return Ok(0.0);
    }
    let middle = contrasts.len() / 2;
    contrasts.select_nth_unstable_by(middle, f64::total_cmp);
    Ok(contrasts[middle].max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Color;
    use crate::reading::ReaderChoice;
    use crate::render::scene::{Layout, SceneRequest, Style};
    use opencv::core::{Point, Scalar};

    fn still(seed: u64) -> Mat {
        let board = crate::render::random_go_board(9, 0.2, 0.0, seed);
        let request = SceneRequest {
            resolution: Some((640, 480)),
            fps: Some(10.0),
            tilt: Some(10.0),
        };
        crate::render::snapshot(Layout::Lines(9), &board, seed, Style::Clean, &request)
            .expect("renders")
            .0
    }

    fn tracker() -> Tracker {
        let (reader, _) = Reader::load(ReaderChoice::Auto).expect("a reader");
        Tracker::new(
            TrackerOptions {
                size: Some(9),
                ..TrackerOptions::default()
            },
            reader,
        )
    }

    #[test]
    fn a_cover_spell_goes_on_through_fewer_gaps_only_when_asked() {
        // One corner unexplained throughout, a second on every other look.
        let counts = [2, 1, 2, 1, 2, 1, 2];
        let spell = |kept_from: usize| {
            let mut since = None;
            counts
                .iter()
                .enumerate()
                .map(|(look, &cover)| covered_for(&mut since, cover, kept_from, look as f64 * 0.1))
                .fold(0.0, f64::max)
        };
        assert!((spell(1) - 0.6).abs() < 1e-9);
        assert_eq!(spell(COVER_GAPS), 0.0);
        let mut since = None;
        covered_for(&mut since, 2, 1, 0.0);
        assert_eq!(covered_for(&mut since, 0, 1, 0.1), 0.0);
        assert_eq!(since, None);
    }

    #[test]
    fn a_stone_found_pushed_stays_found_while_it_stands_off_its_point() {
        // A black stone at (1, 1) pushed onto the line to (1, 0); the colours of
        // held-out 100327 (development now).
        let stone = [38.9, 34.8, 35.1];
        let wood = [41.4, 62.5, 89.8];
        let edges = |toward_left: [f32; 3]| {
            [
                ([[0, 1], [1, 1]], wood),
                ([[1, 0], [1, 1]], toward_left),
                ([[1, 1], [1, 2]], wood),
                ([[1, 1], [2, 1]], wood),
            ]
            .map(|(ends, middle)| samples::Edge { ends, middle })
        };
        let view = |on_point: [f32; 3]| {
            let mut points = vec![wood; 9];
            points[4] = on_point;
            Samples {
                size: 3,
                gaps: vec![wood; 16],
                points,
                rim: Vec::new(),
                rim_between: Vec::new(),
            }
        };
        let mut held = Occupancy::empty(3, 3);
        held.set(1, 1, Some(Color::Black));
        let bare = Occupancy::empty(3, 3);
        let pushed = samples::Pushed {
            from: [1, 1],
            line: [[1, 0], [1, 1]],
        };
        let off = edges([64.4, 65.7, 66.4]);
        let first = stones_pushed(&off, &bare, Some(&(view(stone), held.clone())), &[]);
        assert_eq!(first, [(pushed, stone)]);
        // The next move settles before the rules stage acted: the view the last position
        // was read on shows the point bare, the stone is judged by the look kept.
        let mut next = bare.clone();
        next.set(2, 2, Some(Color::White));
        let reference = (view(wood), bare.clone());
        assert_eq!(
            stones_pushed(&off, &next, Some(&reference), &first),
            [(pushed, stone)]
        );
        assert!(stones_pushed(&off, &next, Some(&reference), &[]).is_empty());
        // Lifted off the board, or put back on its point: no more.
        assert!(stones_pushed(&edges(wood), &next, Some(&reference), &first).is_empty());
        next.set(1, 1, Some(Color::Black));
        assert!(stones_pushed(&off, &next, Some(&reference), &first).is_empty());
    }

    #[test]
    fn a_gap_that_looks_bare_again_is_a_stone_lifted_not_a_cover() {
        let wood = [41.4, 62.5, 89.8];
        let stone = [38.9, 34.8, 35.1];
        let sleeve = [120.0, 60.0, 40.0];
        let view = |changed: [f32; 3]| {
            let mut gaps = vec![wood; 16];
            gaps[5] = changed;
            gaps[10] = changed;
            Samples {
                size: 3,
                gaps,
                points: vec![wood; 9],
                rim: Vec::new(),
                rim_between: Vec::new(),
            }
        };
        // Two knocked stones lay between points in the settled view; the players lifted
        // them, and no point's reading changed.
        let reference = view(stone);
        let bare = view(wood);
        let reading = Occupancy::empty(3, 3);
        let unexplained = |now: &Samples, bare: Option<&Samples>| {
            unexplained_gaps(now, &reference, &reading, &reading, bare, false)
        };
        assert_eq!(
            unexplained(&view(wood), None),
            2,
            "judged on the reference alone"
        );
        assert_eq!(unexplained(&view(wood), Some(&bare)), 0);
        assert_eq!(
            unexplained(&view(sleeve), Some(&bare)),
            2,
            "an arm is no bare wood"
        );
    }

    #[test]
    fn a_still_board_settles_and_a_hand_over_it_is_no_evidence() {
        let frame = still(3);
        let mut tracker = tracker();
        let mut settled = None;
        for i in 0..4 {
            let report = tracker.analyse(&frame, i as f64 * 0.1, i).unwrap();
            if i == 0 {
                assert!(matches!(
                    report.events.as_slice(),
                    [TrackEvent::Found { .. }]
                ));
            }
            settled = report.settled.or(settled);
        }
        let settled = settled.expect("settled after 0.3 s of the same view");
        assert_eq!(settled.frames, 4);

        // An arm reaches over the board from the picture's edge.
        let geometry = tracker.geometry().unwrap();
        let [x, y] = geometry.to_image(4.0, 4.0);
        let covered = arm_over(&frame, [x, y]);
        let report = tracker.analyse(&covered, 0.4, 4).unwrap();
        assert!(
            matches!(report.view, View::Moving { .. }),
            "{:?}",
            report.view
        );
        assert!(report.settled.is_none() && report.reading.is_none());
        // Held still, it is a cover, still no evidence.
        let report = tracker.analyse(&covered, 0.5, 5).unwrap();
        assert!(
            matches!(report.view, View::Covered { .. }),
            "{:?}",
            report.view
        );
        // Gone again: the same position settles again.
        for i in 6..10 {
            let report = tracker.analyse(&frame, i as f64 * 0.1, i).unwrap();
            if let Some(again) = report.settled {
                assert_eq!(again.occupancy, settled.occupancy);
            }
        }
    }

    #[test]
    fn a_hand_held_still_over_an_edge_point_is_a_cover_not_a_stone() {
        let frame = still(3);
        let mut tracker = tracker();
        let settled = last_settled(&mut tracker, &frame, 0..4).expect("settled");
        let geometry = tracker.geometry().unwrap();
        let col = (1..8)
            .find(|&col| settled.occupancy.get(8, col).is_none())
            .expect("a bare point on the edge");
        // Fingertips over the point, the arm reaching in from beyond the edge: no gap
        // changes but the rim does.
        let at = |c: f64, r: f64| {
            let [x, y] = geometry.to_image(c, r);
            Point::new(x.round() as i32, y.round() as i32)
        };
        let spacing = {
            let ([x0, y0], [x1, y1]) = (
                geometry.to_image(col as f64, 8.0),
                geometry.to_image(col as f64, 7.0),
            );
            (x1 - x0).hypot(y1 - y0)
        };
        let mut hand = frame.clone();
        let skin = Scalar::new(60.0, 90.0, 160.0, 0.0);
        let c = col as f64;
        imgproc::circle(
            &mut hand,
            at(c, 8.0),
            (0.4 * spacing) as i32,
            skin,
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let arm = opencv::core::Vector::<Point>::from_iter([
            at(c - 1.1, 8.65),
            at(c + 1.1, 8.65),
            at(c + 1.1, 10.5),
            at(c - 1.1, 10.5),
        ]);
        imgproc::fill_convex_poly(&mut hand, &arm, skin, imgproc::LINE_8, 0).unwrap();
        let views: Vec<View> = (4..10)
            .map(|i| tracker.analyse(&hand, i as f64 * 0.1, i).unwrap())
            .inspect(|report| assert!(report.settled.is_none(), "{report:?}"))
            .map(|report| report.view)
            .collect();
        assert!(
            views[1..].iter().all(|v| matches!(v, View::Covered { .. })),
            "{views:?}"
        );
    }

    #[test]
    fn an_arm_that_begins_to_cross_a_long_still_board_is_not_the_new_normal() {
        let frame = still(3);
        let mut tracker = tracker();
        last_settled(&mut tracker, &frame, 0..25).expect("settled");
        let geometry = tracker.geometry().unwrap();
        let at = |c: f64, r: f64| {
            let [x, y] = geometry.to_image(c, r);
            Point::new(x.round() as i32, y.round() as i32)
        };
        // Only beyond the edge yet, after 2.5 s of a still board, and coming in slowly:
        // no frame moves enough to count as motion (Go seed 100336).
        let mut arm = frame.clone();
        let reach = opencv::core::Vector::<Point>::from_iter([
            at(3.0, 8.6),
            at(5.0, 8.6),
            at(5.0, 10.5),
            at(3.0, 10.5),
        ]);
        imgproc::fill_convex_poly(
            &mut arm,
            &reach,
            Scalar::new(60.0, 90.0, 160.0, 0.0),
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let views: Vec<View> = (1..=12u32)
            .map(|step| {
                let share = (f64::from(step) / 8.0).min(1.0);
                let mut seen = Mat::default();
                opencv::core::add_weighted_def(&arm, share, &frame, 1.0 - share, 0.0, &mut seen)
                    .unwrap();
                let i = 24 + u64::from(step);
                tracker.analyse(&seen, i as f64 * 0.1, i).unwrap().view
            })
            .collect();
        assert!(
            views.iter().all(|v| !matches!(v, View::Moving { .. })),
            "{views:?}"
        );
        assert!(
            matches!(views.last(), Some(View::Covered { .. })),
            "{views:?}"
        );
        // Gone again, the board is as it was settled: nothing to wait for.
        let views: Vec<View> = (37..40)
            .map(|i| tracker.analyse(&frame, i as f64 * 0.1, i).unwrap().view)
            .collect();
        assert_eq!(views[1..], [View::Clear, View::Clear], "{views:?}");
    }

    #[test]
    fn a_still_cover_once_believed_has_served_its_settle_window() {
        // Stones knocked between the points stand still: the view differs from the
        // settled one away from any point read changed, so it is a cover until it has
        // stood still long enough (Go 100378: the players reached in again 0.2 s after).
        let frame = still(3);
        let mut tracker = tracker();
        last_settled(&mut tracker, &frame, 0..5).expect("settled");
        let geometry = tracker.geometry().unwrap();
        let mut knocked = frame.clone();
        for (c, r) in [(3.5, 3.5), (4.5, 5.5), (2.5, 6.5)] {
            let [x, y] = geometry.to_image(c, r);
            let centre = Point::new(x.round() as i32, y.round() as i32);
            let [x1, _] = geometry.to_image(c + 1.0, r);
            let radius = (0.45 * (x1 - x)).abs().round() as i32;
            imgproc::circle(
                &mut knocked,
                centre,
                radius,
                Scalar::new(25.0, 25.0, 25.0, 0.0),
                -1,
                imgproc::LINE_AA,
                0,
            )
            .unwrap();
        }
        let reports: Vec<Report> = (5..30)
            .map(|i| tracker.analyse(&knocked, i as f64 * 0.1, i).unwrap())
            .collect();
        let first_believed = reports
            .iter()
            .position(|r| !matches!(r.view, View::Covered { .. } | View::Moving { .. }))
            .expect("believed in the end");
        assert!(
            matches!(reports[first_believed - 1].view, View::Covered { .. }),
            "{:?}",
            reports.iter().map(|r| &r.view).collect::<Vec<_>>()
        );
        assert!(
            reports[first_believed].settled.is_some(),
            "settled only at {:?}",
            reports.iter().position(|r| r.settled.is_some())
        );
    }

    #[test]
    fn a_moved_camera_is_found_again_turned_to_the_recorded_position() {
        let frame = still(5);
        let mut tracker = tracker();
        let first = last_settled(&mut tracker, &frame, 0..4).expect("settled");
        // The camera is knocked round to the other side of the board.
        let mut moved = Mat::default();
        opencv::core::rotate(&frame, &mut moved, opencv::core::ROTATE_180).unwrap();
        let mut events = Vec::new();
        let mut again = None;
        for i in 4..20 {
            let report = tracker.analyse(&moved, i as f64 * 0.1, i).unwrap();
            events.extend(report.events);
            again = report.settled.or(again);
        }
        assert!(
            events.iter().any(
                |e| matches!(e, TrackEvent::Relocated { quarter_turns, .. } if *quarter_turns == 2)
            ),
            "{events:?}"
        );
        assert_eq!(
            again.expect("settled again").occupancy,
            first.occupancy,
            "the game's own frame"
        );
    }
    /// The last position the tracker settled on while shown `frame` for the looks `looks`,
    /// a tenth of a second apart.
    fn last_settled(
        tracker: &mut Tracker,
        frame: &Mat,
        looks: std::ops::Range<u64>,
    ) -> Option<Settled> {
        looks.fold(None, |settled, i| {
            tracker
                .analyse(frame, i as f64 * 0.1, i)
                .unwrap()
                .settled
                .or(settled)
        })
    }

    /// An arm reaching from the bottom right of a 640×480 picture to the pixel `[x, y]`
    /// over the board (the 8×8 tracker's tests use it too).
    pub(crate) fn arm_over(frame: &Mat, [x, y]: [f64; 2]) -> Mat {
        let mut covered = frame.clone();
        imgproc::line(
            &mut covered,
            Point::new(x as i32, y as i32),
            Point::new(x as i32 + 400, 479),
            Scalar::new(90.0, 120.0, 200.0, 0.0),
            40,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        covered
    }

    /// The picture moved by `dx`, `dy` pixels, its edges filled with their own colours: a
    /// knocked camera's view (the 8×8 tracker's tests use it too).
    pub(crate) fn shifted(frame: &Mat, dx: f64, dy: f64) -> Mat {
        let shift = Mat::from_slice_2d(&[[1.0, 0.0, dx], [0.0, 1.0, dy]]).unwrap();
        let mut moved = Mat::default();
        imgproc::warp_affine(
            frame,
            &mut moved,
            &shift,
            frame.size().unwrap(),
            imgproc::INTER_LINEAR,
            opencv::core::BORDER_REPLICATE,
            Scalar::default(),
        )
        .unwrap();
        moved
    }

    #[test]
    fn an_arm_in_the_first_view_after_a_bump_is_not_taken_for_the_board() {
        let frame = still(7);
        let mut tracker = tracker();
        let first = last_settled(&mut tracker, &frame, 0..4).expect("settled");
        // The board is bumped half a spacing, and the next player's arm is already
        // reaching in from the picture's edge, held still while the board is found again.
        let bumped = shifted(&frame, 20.0, 14.0);
        let geometry = tracker.geometry().unwrap();
        let [x, y] = geometry.to_image(5.0, 5.0);
        let mut arm = bumped.clone();
        imgproc::line(
            &mut arm,
            Point::new(x as i32 + 20, y as i32 + 14),
            Point::new(639, 479),
            Scalar::new(60.0, 90.0, 160.0, 0.0),
            36,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let mut relocated = false;
        for i in 4..20 {
            let report = tracker.analyse(&arm, i as f64 * 0.1, i).unwrap();
            relocated |= report
                .events
                .iter()
                .any(|e| matches!(e, TrackEvent::Relocated { .. }));
        }
        assert!(relocated, "the bumped board is found again");
        // The arm leaves; the board must settle as soon as any move would, not only once
        // the view has stayed perfectly still long enough to be believed over the arm.
        let again = last_settled(&mut tracker, &bumped, 20..25);
        assert_eq!(
            again.expect("settled within half a second").occupancy,
            first.occupancy
        );
    }

    /// A rectified grey board of `size` lines at [`CELL`] with stones of grey level
    /// `grey` at their points moved by `off` (in spacings), each with a highlight.
    fn stones_picture(size: usize, stones: &[([usize; 2], f64, [f64; 2])]) -> Mat {
        let side = (size as i32 + 1) * CELL;
        let mut picture =
            Mat::new_rows_cols_with_default(side, side, opencv::core::CV_8UC1, Scalar::all(150.0))
                .expect("a picture");
        for line in 1..=size as i32 {
            let at = line * CELL;
            let (first, last) = (CELL, size as i32 * CELL);
            for (from, to) in [
                (Point::new(first, at), Point::new(last, at)),
                (Point::new(at, first), Point::new(at, last)),
            ] {
                imgproc::line(
                    &mut picture,
                    from,
                    to,
                    Scalar::all(90.0),
                    1,
                    imgproc::LINE_8,
                    0,
                )
                .expect("drawn");
            }
        }
        let cell = f64::from(CELL);
        for &([row, col], grey, [dx, dy]) in stones {
            let x = ((col + 1) as f64 + dx) * cell;
            let y = ((row + 1) as f64 + dy) * cell;
            let radius = (0.46 * cell).round() as i32;
            let centre = Point::new(x.round() as i32, y.round() as i32);
            imgproc::circle(
                &mut picture,
                centre,
                radius,
                Scalar::all(grey),
                -1,
                imgproc::LINE_AA,
                0,
            )
            .expect("drawn");
            let glint = Point::new(centre.x - radius / 3, centre.y - radius / 3);
            imgproc::circle(
                &mut picture,
                glint,
                radius / 4,
                Scalar::all(grey + 30.0),
                -1,
                imgproc::LINE_AA,
                0,
            )
            .expect("drawn");
        }
        picture
    }

    #[test]
    fn a_stone_pushed_half_a_spacing_on_its_point_is_found_and_a_picture_moved_whole_is_not() {
        let stones = [
            ([3, 3], 40.0),
            ([3, 4], 210.0),
            ([5, 5], 40.0),
            ([6, 2], 210.0),
        ];
        let mut reading = Occupancy::empty(9, 9);
        for ([row, col], grey) in stones {
            let color = if grey < 100.0 {
                Color::Black
            } else {
                Color::White
            };
            reading.set(row, col, Some(color));
        }
        let placed = |moved: &dyn Fn([usize; 2]) -> [f64; 2]| {
            let stones: Vec<_> = stones
                .iter()
                .map(|&(p, grey)| (p, grey, moved(p)))
                .collect();
            stones_picture(9, &stones)
        };
        let before = placed(&|_| [0.0, 0.0]);
        let pushed = placed(&|p| if p == [5, 5] { [0.45, 0.0] } else { [0.0, 0.0] });
        assert_eq!(
            stones_slid(&before, &pushed, &reading, &reading).expect("matched"),
            [[5, 5]]
        );
        // Set down a tenth of a spacing off: no slide.
        let nudged = placed(&|p| if p == [5, 5] { [0.1, 0.05] } else { [0.0, 0.0] });
        assert!(
            stones_slid(&before, &nudged, &reading, &reading)
                .expect("matched")
                .is_empty()
        );
        // Every stone moved alike: the picture moved, not a stone.
        let shifted = placed(&|_| [0.0, 0.4]);
        assert!(
            stones_slid(&before, &shifted, &reading, &reading)
                .expect("matched")
                .is_empty()
        );
        // A point read otherwise after is the rules stage's change, not a slide.
        let mut lifted = reading.clone();
        lifted.set(5, 5, None);
        assert!(
            stones_slid(&before, &pushed, &reading, &lifted)
                .expect("matched")
                .is_empty()
        );
    }

    #[test]
    fn a_stone_put_down_changes_its_points_picture_as_a_stone_comes_and_no_other() {
        let before = stones_picture(9, &[([3, 3], 40.0, [0.0, 0.0])]);
        let after = stones_picture(
            9,
            &[([3, 3], 40.0, [0.0, 0.0]), ([8, 2], 210.0, [0.0, 0.0])],
        );
        let changes = point_changes(&before, &after, 9).expect("compared");
        assert_eq!(stones_stirred(&changes, 9), [[8, 2]], "{changes:?}");
        assert!(
            point_changes(&before, &before, 9)
                .expect("compared")
                .iter()
                .all(|&c| c == 0.0)
        );
    }

    #[test]
    fn a_shadow_lifting_off_a_patch_of_points_is_no_stone_coming() {
        // As Go 100529's arm shadow: a patch of points changed by 10 to 30, peaking in its
        // middle.
        let size = 19;
        let mut changes = vec![2.0; size * size];
        for row in 0..7usize {
            for col in 5..13usize {
                let distance = row.abs_diff(2) + col.abs_diff(9);
                changes[row * size + col] = 30.0 - 4.0 * distance as f64;
            }
        }
        assert!(stones_stirred(&changes, size).is_empty());
        // A stone put down beside it still stands out.
        changes[15 * size + 3] = 100.0;
        assert_eq!(stones_stirred(&changes, size), [[15, 3]]);
        // Its neighbours, into whose pictures it reaches, do not hide it.
        changes[15 * size + 4] = 15.0;
        changes[14 * size + 3] = 15.0;
        assert_eq!(stones_stirred(&changes, size), [[15, 3]]);
    }
}
