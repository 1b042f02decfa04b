//! `kradan eval-frames`: the 8×8 vision scored on rendered clips against their truth.
//!
//! Each clip is a folder made by `kradan render … --frames` (PNG frames and
//! `truth.json`). Every `every`-th frame with no hand over the board is located and read
//! as [`crate::detect_eight::read_frame`] would in the recorder, and compared with the
//! truth: the board found (every corner within a quarter of a square of the truth's),
//! squares right (image order, with the found board), boards exactly right, and the
//! orientation when the reader claimed one.

use crate::detect_eight::read_frame;
use crate::games::Occupancy;
use crate::geometry::BoardGeometry;
use crate::geometry::eight::{EightGame, LINES, SQUARES};
use crate::geometry::locate::image_order;
use crate::reading::adapt::BoardLooks;
use anyhow::{Context, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Deserialize)]
struct Truth {
    game: String,
    style: String,
    seed: u64,
    board: TruthBoard,
    positions: Vec<TruthPosition>,
    frames: Vec<TruthFrame>,
    video: String,
}

#[derive(Deserialize)]
struct TruthBoard {
    layout: String,
    /// The colour of the player at the bottom edge of the truth's rows.
    bottom: String,
}

#[derive(Deserialize)]
struct TruthPosition {
    rows: Vec<String>,
}

#[derive(Deserialize)]
struct TruthFrame {
    position: usize,
    hand_over_board: bool,
    corners: [[f64; 2]; 4],
}

/// Counts for one group of frames (a game and a style).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub clips: usize,
    pub frames: usize,
    pub boards_found: usize,
    pub squares: usize,
    pub squares_right: usize,
    pub boards_right: usize,
    /// Frames whose orientation was claimed, and how many of those claims were right.
    pub oriented: usize,
    pub oriented_right: usize,
    pub milliseconds: f64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.clips += other.clips;
        self.frames += other.frames;
        self.boards_found += other.boards_found;
        self.squares += other.squares;
        self.squares_right += other.squares_right;
        self.boards_right += other.boards_right;
        self.oriented += other.oriented;
        self.oriented_right += other.oriented_right;
        self.milliseconds += other.milliseconds;
    }
}

/// Scores one clip folder, reading every `every`-th hand-free frame; `log` gets one line
/// per frame that was not read exactly right.
///
/// With `adapt`, each frame is also judged by this board's looks
/// ([`crate::reading::adapt::BoardLooks`]) learned from the frames before it, with the
/// truth of the frame before as the record a recorder would believe by then.
pub fn eval_clip(
    dir: &Path,
    every: usize,
    adapt: bool,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<(String, Tally)> {
    let truth_path = dir.join("truth.json");
    let text = std::fs::read_to_string(&truth_path)
        .with_context(|| format!("cannot read {}", truth_path.display()))?;
    let truth: Truth = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a render truth", truth_path.display()))?;
    let game: EightGame = truth.game.parse().map_err(anyhow::Error::msg)?;
    if truth.video != "frames/" {
        bail!(
            "{}: the clip was rendered as a video; render it with --frames",
            dir.display()
        );
    }
    let group = format!("{} {} ({})", truth.game, truth.style, truth.board.layout);
    let mut tally = Tally {
        clips: 1,
        ..Tally::default()
    };
    let clear: Vec<(usize, &TruthFrame)> = truth
        .frames
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.hand_over_board)
        .collect();
    let mut board_looks = BoardLooks::new(SQUARES);
    let mut believed: Option<Occupancy> = None;
    for &(index, frame) in clear.iter().step_by(every.max(1)) {
        let path = dir.join("frames").join(format!("{index:06}.png"));
        let image = opencv::imgcodecs::imread(
            path.to_str().context("frame path")?,
            opencv::imgcodecs::IMREAD_COLOR,
        )?;
        let position = truth
            .positions
            .get(frame.position)
            .context("a frame names a position the truth does not have")?;
        let own = Occupancy::from_text_rows(&position.rows).map_err(anyhow::Error::msg)?;
        let Some(truth_geometry) = BoardGeometry::from_corners(LINES, frame.corners) else {
            continue;
        };
        let quarters = quarters_to_image(&truth_geometry, &frame.corners);
        let expected = own.turned(quarters);
        let in_game_order = if truth.board.bottom == "white" {
            own.clone()
        } else {
            own.turned(2)
        };
        tally.frames += 1;
        tally.squares += SQUARES * SQUARES;
        let started = Instant::now();
        let read = read_frame(&image, game)?;
        tally.milliseconds += started.elapsed().as_secs_f64() * 1000.0;
        let name = format!("{} seed {} frame {index}", truth.game, truth.seed);
        let Ok(read) = read else {
            log(format!("{name}: no board"));
            continue;
        };
        let side = truth_geometry
            .corners()
            .iter()
            .zip(truth_geometry.corners().iter().cycle().skip(1))
            .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
            .fold(f64::MAX, f64::min);
        let truth_corners = image_order(&truth_geometry).corners();
        let worst = read
            .board
            .geometry
            .corners()
            .iter()
            .zip(&truth_corners)
            .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
            .fold(0.0, f64::max);
        if worst > 0.25 * side / SQUARES as f64 {
            log(format!(
                "{name}: board misplaced (a corner {worst:.0} px off)"
            ));
            continue;
        }
        tally.boards_found += 1;
        let seen = if adapt {
            let unaided = read.image_rows();
            let sharpened = board_looks
                .sharpen(read.observation.clone(), &read.looks)
                .occupancy();
            if let Some(believed) = &believed {
                board_looks.learn(&read.looks, believed, &unaided);
            }
            believed = Some(expected.clone());
            sharpened
        } else {
            read.image_rows()
        };
        let right = seen.agreement(&expected);
        tally.squares_right += right;
        if right == SQUARES * SQUARES {
            tally.boards_right += 1;
        } else {
            log(format!(
                "{name}: {} square(s) wrong {:?}",
                SQUARES * SQUARES - right,
                seen.differences(&expected)
            ));
        }
        if let Some(game_rows) = read.game_rows() {
            tally.oriented += 1;
            // Judged by where the pieces go, not by the reading: the turn is right when
            // the truth, turned by it, stands in the game's order.
            if expected.turned(read.orientation.quarters.unwrap_or(0)) == in_game_order {
                tally.oriented_right += 1;
            } else {
                log(format!(
                    "{name}: wrong orientation {:?}",
                    game_rows.to_text_rows()
                ));
            }
        }
    }
    Ok((group, tally))
}

/// The clockwise quarter turns taking the truth's own rows to image order: the truth's
/// corner that the image's top-left is decides it.
fn quarters_to_image(truth: &BoardGeometry, own_corners: &[[f64; 2]; 4]) -> usize {
    let top_left = image_order(truth).corners()[0];
    let nearest = (0..4)
        .min_by(|&a, &b| {
            let d =
                |i: usize| (own_corners[i][0] - top_left[0]).hypot(own_corners[i][1] - top_left[1]);
            d(a).total_cmp(&d(b))
        })
        .unwrap_or(0);
    (4 - nearest) % 4
}

/// Scores every clip folder and prints a table per game and style, then the totals.
pub fn eval_frames(
    dirs: &[PathBuf],
    every: usize,
    adapt: bool,
    verbose: bool,
) -> anyhow::Result<String> {
    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    for dir in dirs {
        let mut log = |line: String| {
            if verbose {
                eprintln!("{line}");
            }
        };
        let (group, tally) = eval_clip(dir, every, adapt, &mut log)?;
        groups.entry(group).or_default().add(&tally);
    }
    let mut out = String::from(
        "group                         clips frames found  squares right      exact     oriented  ms/frame\n",
    );
    let mut total = Tally::default();
    let percent = |a: usize, b: usize| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let mut line = |name: &str, t: &Tally| {
        out.push_str(&format!(
            "{name:<29} {:>5} {:>6} {:>5}  {:>6.2}% {:>6}  {:>6.2}%  {:>4}/{:<4}  {:>8.0}\n",
            t.clips,
            t.frames,
            t.boards_found,
            percent(t.squares_right, t.squares),
            t.squares_right,
            percent(t.boards_right, t.frames),
            t.oriented_right,
            t.oriented,
            t.milliseconds / t.frames.max(1) as f64,
        ));
    };
    for (name, tally) in &groups {
        line(name, tally);
        total.add(tally);
    }
    line("all", &total);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_truths_corner_at_the_images_top_left_gives_the_turn() {
        let corners = [
            [100.0, 100.0],
            [900.0, 100.0],
            [900.0, 900.0],
            [100.0, 900.0],
        ];
        let upright = BoardGeometry::from_corners(9, corners).unwrap();
        assert_eq!(quarters_to_image(&upright, &corners), 0);
        // The board's own top-left at the image's bottom-left: its row 0 runs up the
        // image's left edge, so the image shows it turned a quarter anticlockwise.
        let turned = [corners[3], corners[0], corners[1], corners[2]];
        let geometry = BoardGeometry::from_corners(9, turned).unwrap();
        assert_eq!(quarters_to_image(&geometry, &turned), 3);
    }
}
