//! `kradan render`: footage of a whole game filmed by a virtual camera, with the exact
//! truth of every frame — the development and test data no one publishes for Go, Mak-hos
//! or Makruk.
//!
//! The stages mirror the recorder's, run backwards: a record becomes a [`script`] of
//! what hands do on the board ([`go`], [`eight`]); the script gets time ([`timeline`]);
//! a [`scene`] drawn from the seed (board, pieces, table, light, camera) is pictured frame
//! by frame ([`compose`], with pieces as ray-cast [`solids`] and arms from [`hand`]); the
//! frames go to a video file and [`truth`] to `truth.json`.

pub mod camera;
pub mod compose;
pub mod eight;
pub mod go;
pub mod hand;
pub mod scene;
pub mod script;
pub mod solids;
pub mod timeline;
pub mod truth;

use crate::reading::synth::Rng;
use crate::replay::Game;
use compose::{FrameFacts, Renderer};
use opencv::core::{Mat, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};
use scene::{Layout, SceneRequest, Style};
use script::{AnomalyRequest, Mark, Script, Step};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use timeline::Timeline;
use truth::{
    AnomalyTruth, BoardTruth, BumpTruth, CameraTruth, FrameTruth, HandTruth, MoveTruth,
    PositionTruth, Truth,
};

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The record or the options cannot make a clip (exit 2).
    #[error("{0}")]
    Input(String),
    /// The output cannot be written (exit 2).
    #[error("{0}")]
    Output(String),
    #[error("rendering failed: {0}")]
    Vision(#[from] opencv::Error),
}

#[derive(Clone, Debug)]
pub struct RenderOptions {
    pub seed: u64,
    pub style: Style,
    pub anomalies: Vec<AnomalyRequest>,
    /// Write a folder of PNG frames instead of a video file.
    pub frames: bool,
    pub scene: SceneRequest,
    /// Stop the clip after this many seconds of footage (the truth covers what was shown).
    pub limit_seconds: Option<f64>,
    /// Stop the clip a second after this many moves are complete.
    pub limit_moves: Option<usize>,
    /// Frames rendered at once (threads).
    pub workers: usize,
    pub codec: Codec,
}

/// How the footage is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Codec {
    /// `footage.mp4`: small files (the samples), slow to encode (x264 at OpenCV's
    /// default settings is most of the time a render takes).
    H264,
    /// `footage.avi`: about ten times larger, several times faster to write: footage
    /// rendered for a test and thrown away.
    Mjpeg,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            seed: 1,
            style: Style::Varied,
            anomalies: Vec::new(),
            frames: false,
            scene: SceneRequest::default(),
            limit_seconds: None,
            limit_moves: None,
            workers: std::thread::available_parallelism().map_or(2, |n| n.get().min(4)),
            codec: Codec::H264,
        }
    }
}

/// What was written.
#[derive(Debug)]
pub struct Rendered {
    pub video: PathBuf,
    pub truth: PathBuf,
    pub frames: usize,
    pub duration: f64,
    pub moves: usize,
    pub anomalies: usize,
    /// The position the last frame shows (rows of `.` `B` `W`).
    pub last_position: Vec<String>,
}

/// The game a record file holds, from its extension.
pub fn game_of(path: &Path) -> Result<Game, RenderError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("sgf") => Ok(Game::Go),
        Some("pdn") => Ok(Game::Makhos),
        Some("pgn") => Ok(Game::Makruk),
        _ => Err(RenderError::Input(format!(
            "{}: expected a .sgf (Go), .pdn (Mak-hos) or .pgn (Makruk) record",
            path.display()
        ))),
    }
}

/// The script and board layout of a record, before any pixels.
pub fn plan(
    game: Game,
    text: &str,
    options: &RenderOptions,
) -> Result<(Script, Layout), RenderError> {
    let sloppiness = match options.style {
        Style::Clean => 0.03,
        Style::Varied => 0.1,
        Style::Hard => 0.16,
    };
    let (mut script, layout) = match game {
        Game::Go => {
            let script = go::script(text, &options.anomalies, options.seed, sloppiness)
                .map_err(RenderError::Input)?;
            let size = crate::games::go::sgf::read(text)
                .map_err(|e| RenderError::Input(e.to_string()))?
                .size;
            (script, Layout::Lines(size))
        }
        Game::Makhos => (
            eight::makhos_script(text, &options.anomalies, options.seed, sloppiness)
                .map_err(RenderError::Input)?,
            Layout::Checkered,
        ),
        Game::Makruk => {
            let layout = if Rng::new(options.seed ^ 0x1a_0077).chance(0.35) {
                Layout::Checkered
            } else {
                Layout::Grid
            };
            (
                eight::makruk_script(text, &options.anomalies, options.seed, sloppiness)
                    .map_err(RenderError::Input)?,
                layout,
            )
        }
    };
    // Now and then something knocks the camera or the board, and nobody asked for it.
    let chance = match options.style {
        Style::Varied => 0.3,
        Style::Clean => 0.0,
        Style::Hard => 1.0,
    };
    let mut rng = Rng::new(options.seed ^ 0xb0_3b);
    if rng.chance(chance) && script.steps.len() > 4 {
        let at = script.steps.len() / 5 + rng.below(script.steps.len() * 3 / 5);
        // Between two steps, never inside a visit.
        script.steps.insert(
            at,
            Step::Bump {
                board: rng.chance(0.4),
                accident: true,
                marks: Vec::new(),
            },
        );
    }
    Ok((script, layout))
}

/// Renders `record` into `out` (created if needed): the video (or frames) and
/// `truth.json`. `progress` hears (frames done, frames in all).
pub fn render(
    record: &Path,
    out: &Path,
    options: &RenderOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<Rendered, RenderError> {
    let game = game_of(record)?;
    let text = std::fs::read_to_string(record)
        .map_err(|e| RenderError::Input(format!("cannot read {}: {e}", record.display())))?;
    let (script, layout) = plan(game, &text, options)?;
    let scene = scene::draw_scene(layout, options.seed, options.style, &options.scene);
    let timeline = timeline::lay_out(&script, &scene, options.seed);
    std::fs::create_dir_all(out)
        .map_err(|e| RenderError::Output(format!("cannot create {}: {e}", out.display())))?;
    let after_moves = options.limit_moves.and_then(|n| {
        timeline.marks.iter().find_map(|m| match m.mark {
            Mark::Move { number, .. } | Mark::Pass { number, .. } if number == n => {
                Some(m.done + 1.0)
            }
            _ => None,
        })
    });
    let duration = [options.limit_seconds, after_moves]
        .into_iter()
        .flatten()
        .fold(timeline.duration, f64::min);
    let frame_count = (duration * scene.fps).ceil().max(1.0) as usize;

    let mut sink = Sink::open(out, options.frames, options.codec, &scene)?;
    let mut facts: Vec<FrameFacts> = Vec::with_capacity(frame_count);
    let workers = options.workers.max(1);
    const CHUNK: usize = 16;
    let result: Result<(), RenderError> = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<(Mat, FrameFacts), String>)>(
            workers * 4,
        );
        for worker in 0..workers {
            let tx = tx.clone();
            let (scene, timeline) = (&scene, &timeline);
            let seed = options.seed;
            s.spawn(move || {
                let mut renderer = match Renderer::new(scene, timeline, seed) {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send((worker * CHUNK, Err(e.to_string())));
                        return;
                    }
                };
                let mut start = worker * CHUNK;
                while start < frame_count {
                    for index in start..(start + CHUNK).min(frame_count) {
                        let frame = renderer.frame(index).map_err(|e| e.to_string());
                        let failed = frame.is_err();
                        if tx.send((index, frame)).is_err() || failed {
                            return;
                        }
                    }
                    start += workers * CHUNK;
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, (Mat, FrameFacts)> = BTreeMap::new();
        let mut next = 0;
        for (index, frame) in rx {
            let frame = frame.map_err(|e| RenderError::Input(format!("frame {index}: {e}")))?;
            waiting.insert(index, frame);
            while let Some((image, fact)) = waiting.remove(&next) {
                sink.write(next, &image)?;
                facts.push(fact);
                next += 1;
                progress(next, frame_count);
            }
        }
        Ok(())
    });
    result?;
    let video = sink.finish()?;
    let truth = build_truth(
        game, options, &text, &script, &scene, &timeline, &facts, &video, duration,
    );
    let truth_path = out.join("truth.json");
    let json = serde_json::to_string(&truth).expect("the truth serialises");
    std::fs::write(&truth_path, json)
        .map_err(|e| RenderError::Output(format!("cannot write {}: {e}", truth_path.display())))?;
    Ok(Rendered {
        video: out.join(&video.0),
        truth: truth_path,
        frames: facts.len(),
        duration,
        moves: truth.moves.len(),
        anomalies: truth.anomalies.len(),
        last_position: truth
            .frames
            .last()
            .map(|f| truth.positions[f.position].rows.clone())
            .unwrap_or_default(),
    })
}

/// Where frames go: a video file through OpenCV, or numbered PNGs.
enum Sink {
    Video(videoio::VideoWriter, String, String),
    Frames(PathBuf),
}

impl Sink {
    fn open(
        out: &Path,
        frames: bool,
        codec: Codec,
        scene: &scene::Scene,
    ) -> Result<Sink, RenderError> {
        if frames {
            let dir = out.join("frames");
            std::fs::create_dir_all(&dir).map_err(|e| {
                RenderError::Output(format!("cannot create {}: {e}", dir.display()))
            })?;
            return Ok(Sink::Frames(dir));
        }
        let size = Size::new(
            scene.camera.lens.width as i32,
            scene.camera.lens.height as i32,
        );
        let choices: &[(&str, &str)] = match codec {
            Codec::H264 => &[("footage.mp4", "avc1"), ("footage.avi", "MJPG")],
            Codec::Mjpeg => &[("footage.avi", "MJPG")],
        };
        for &(name, codec) in choices {
            let path = out.join(name);
            let c: Vec<char> = codec.chars().collect();
            let fourcc = videoio::VideoWriter::fourcc(c[0], c[1], c[2], c[3])?;
            let writer =
                videoio::VideoWriter::new(path.as_os_str(), fourcc, scene.fps, size, true)?;
            if writer.is_opened()? {
                let codec = if codec == "avc1" { "H.264" } else { "MJPEG" };
                return Ok(Sink::Video(writer, name.to_string(), codec.to_string()));
            }
        }
        Err(RenderError::Output(format!(
            "cannot open a video file in {} (neither H.264 nor MJPEG); is the directory writable?",
            out.display()
        )))
    }

    fn write(&mut self, index: usize, image: &Mat) -> Result<(), RenderError> {
        match self {
            Sink::Video(writer, _, _) => writer.write(image)?,
            Sink::Frames(dir) => {
                let path = dir.join(format!("{index:06}.png"));
                if !imgcodecs::imwrite(path.as_os_str(), image, &Vector::new())? {
                    return Err(RenderError::Output(format!(
                        "cannot write {}",
                        path.display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// The file (or folder) name and codec.
    fn finish(self) -> Result<(String, String), RenderError> {
        match self {
            Sink::Video(mut writer, name, codec) => {
                writer.release()?;
                Ok((name, codec))
            }
            Sink::Frames(_) => Ok(("frames/".to_string(), "PNG".to_string())),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build_truth(
    game: Game,
    options: &RenderOptions,
    text: &str,
    script: &Script,
    scene: &scene::Scene,
    timeline: &Timeline,
    facts: &[FrameFacts],
    video: &(String, String),
    duration: f64,
) -> Truth {
    let fps = scene.fps;
    let frame_of = |t: f64| ((t * fps).ceil() as usize).min(facts.len().saturating_sub(1));
    // A frame also shows the arm a third of a frame earlier (motion blur): the first frame
    // free of the hand comes that much later.
    let clear_of = |t: f64| ((t * fps + 0.34).ceil() as usize).min(facts.len().saturating_sub(1));
    let cells = scene.board.cells();
    let mut positions: Vec<PositionTruth> = Vec::new();
    let mut index_of: HashMap<String, usize> = HashMap::new();
    let mut frames = Vec::with_capacity(facts.len());
    let mut hands: Vec<HandTruth> = Vec::new();
    for (i, fact) in facts.iter().enumerate() {
        let position = PositionTruth::of(&fact.board, cells);
        let key = serde_json::to_string(&position).expect("serialisable");
        let next = positions.len();
        let p = *index_of.entry(key).or_insert(next);
        if p == next {
            positions.push(position);
        }
        let t = i as f64 / fps;
        let r = camera::rodrigues(&fact.pose.rotation);
        let tv = fact.pose.translation();
        frames.push(FrameTruth {
            t: truth::round3(t),
            position: p,
            hand_over_board: fact.hand_over_board,
            corners: fact
                .corners
                .map(|c| [truth::round3(c[0]), truth::round3(c[1])]),
            rvec: r.map(|v| (v * 1e6).round() / 1e6),
            tvec: tv.map(truth::round3),
        });
        if fact.hand_over_board {
            let player = timeline.pass_at(t).map_or(script.bottom, |p| p.player);
            match hands.last_mut() {
                Some(h) if h.to_frame + 1 == i && h.player == player => {
                    h.to_frame = i;
                    h.to = truth::round3(t);
                }
                _ => hands.push(HandTruth {
                    player,
                    from: truth::round3(t),
                    to: truth::round3(t),
                    from_frame: i,
                    to_frame: i,
                }),
            }
        }
    }
    let mut moves = Vec::new();
    let mut anomalies = Vec::new();
    for m in &timeline.marks {
        if m.at > duration {
            continue;
        }
        match &m.mark {
            Mark::Move {
                number,
                record_number,
                color,
                notation,
                captures,
            } => moves.push(MoveTruth {
                number: *number,
                record_number: *record_number,
                color: *color,
                notation: notation.clone(),
                captures: captures.clone(),
                placed_at: truth::round3(m.at),
                completed_at: truth::round3(m.done),
                completed_frame: clear_of(m.done),
            }),
            Mark::Pass {
                number,
                record_number,
                color,
            } => moves.push(MoveTruth {
                number: *number,
                record_number: *record_number,
                color: *color,
                notation: "pass".into(),
                captures: Vec::new(),
                placed_at: truth::round3(m.at),
                completed_at: truth::round3(m.done),
                completed_frame: clear_of(m.done),
            }),
            Mark::Completes { .. } => {}
            Mark::Anomaly(a) => anomalies.push(AnomalyTruth {
                anomaly: a.clone(),
                at: truth::round3(m.at),
                frame: frame_of(m.at),
            }),
        }
    }
    let bumps = timeline
        .bumps
        .iter()
        .filter(|(t, _, _)| *t <= duration)
        .map(|&(t, board, accident)| BumpTruth {
            at: truth::round3(t),
            frame: frame_of(t),
            moved: if board { "board" } else { "camera" },
            requested: !accident,
        })
        .collect();
    let lens = &scene.camera.lens;
    let pose = &scene.camera.pose;
    let view = pose.rotation[2];
    let tilt = (-view[2]).clamp(-1.0, 1.0).acos().to_degrees();
    let azimuth = (-view[1]).atan2(-view[0]).to_degrees().rem_euclid(360.0);
    Truth {
        format: truth::FORMAT,
        game,
        seed: options.seed,
        style: options.style,
        record: text.to_string(),
        video: video.0.clone(),
        codec: video.1.clone(),
        fps,
        frame_count: facts.len(),
        duration: truth::round3(duration),
        camera: CameraTruth {
            width: lens.width,
            height: lens.height,
            matrix: [
                [lens.focal, 0.0, lens.centre[0]],
                [0.0, lens.focal, lens.centre[1]],
                [0.0, 0.0, 1.0],
            ],
            distortion: [lens.k1, lens.k2, 0.0, 0.0, 0.0],
            tilt_degrees: truth::round3(tilt),
            azimuth_degrees: truth::round3(azimuth),
        },
        board: BoardTruth {
            layout: scene.board.layout,
            cells,
            spacing_mm: scene.board.spacing,
            outer_mm: scene.board.outer,
            thickness_mm: scene.board.thickness,
            corner_order: "top-left, top-right, bottom-right, bottom-left of the board's own rows and columns (row 0 is the far edge from the bottom player)",
            bottom: script.bottom,
        },
        positions,
        frames,
        moves,
        hands,
        anomalies,
        bumps,
    }
}

/// One still picture of `board` (no hands, no game): what a training set or a realism
/// check needs. Returns the frame as the camera delivers it and the playing area's
/// corners in it (see [`truth::BoardTruth::corner_order`]).
pub fn snapshot(
    layout: Layout,
    board: &script::Board,
    seed: u64,
    style: Style,
    request: &SceneRequest,
) -> Result<(Mat, [[f64; 2]; 4]), RenderError> {
    let scene = scene::draw_scene(layout, seed, style, request);
    let timeline = Timeline {
        duration: 1.0 / scene.fps,
        start: board.clone(),
        passes: Vec::new(),
        changes: Vec::new(),
        marks: Vec::new(),
        impacts: Vec::new(),
        bumps: Vec::new(),
    };
    let mut renderer = Renderer::new(&scene, &timeline, seed)?;
    let (image, facts) = renderer.frame(0)?;
    Ok((image, facts.corners))
}

/// A random Go position for [`snapshot`]: `density` of the points filled, stones a little
/// off their points as `sloppiness` (in spacings) says.
pub fn random_go_board(size: usize, density: f64, sloppiness: f64, seed: u64) -> script::Board {
    let mut rng = Rng::new(seed ^ 0xd0_5e_7a);
    let black_share = f64::from(rng.range(0.4, 0.6));
    let mut pieces = Vec::new();
    for row in 0..size {
        for col in 0..size {
            if f64::from(rng.unit()) >= density {
                continue;
            }
            let color = if f64::from(rng.unit()) < black_share {
                crate::games::Color::Black
            } else {
                crate::games::Color::White
            };
            let r = sloppiness * f64::from(rng.unit()).powf(0.7);
            let a = f64::from(rng.range(0.0, std::f32::consts::TAU));
            pieces.push(script::Piece {
                id: pieces.len() as u32 + 1,
                color,
                shape: scene::Shape::Stone,
                cell: [col as f64 + r * a.cos(), row as f64 + r * a.sin()],
            });
        }
    }
    script::Board { pieces }
}
