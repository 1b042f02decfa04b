//! How well a cell reader reads rendered video frames, with their true corners.
//!
//! ```sh
//! cargo run --release --example reader_on_footage -- [--reader learned|baseline|both]
//!     [--model FILE] [--seed 500] [--clips 6] [--seconds 40] [--fps 5] [--every 1]
//!     [--stills 0] [--styles clean,varied,hard] [--clip DIR ...]
//! ```
//!
//! Renders `--clips` short clips per style with `kradan::render::render` (MJPEG, as the
//! tests write them; the 19×19 and 9×9 GNU Go samples in turn, 640×480, 1280×720 and
//! 1920×1080 in turn, seeds from `--seed`), or reads clips already rendered (`--clip DIR`,
//! any number). Of every clip it takes hand-free frames: `hand_over_board` false and no
//! hand, bump or frame with a hand within 0.3 s, one every `--every` seconds. Each frame
//! is rectified as the recorder does it (`reading::rectify` at cell 32 with the truth's
//! corners named in image order: top-left of the picture first, clockwise, so the camera
//! is at the bottom edge), the truth's rows turned the same way, and read by the reader;
//! per-point accuracy and exact boards are reported by style and resolution.
//!
//! `--stills N` also reads N rendered stills per style (`render::snapshot` of random
//! positions, 0–70 % full, JPEG quality 90), from seeds `--seed` + 10⁶ onwards.
//!
//! Seeds: measure on seeds ≥ 500 (below 10⁹). The recorder is developed on seeds below
//! 100 and `train_stones --renders` trains on seeds from 2⁴⁸, so neither overlaps.

use anyhow::{Context, bail};
use clap::Parser;
use kradan::games::Color;
use kradan::reading::learned::StoneModel;
use kradan::reading::learned::rendered::{self, RESOLUTIONS, StillSpec};
use kradan::reading::{self, Reader};
use kradan::render::scene::{SceneRequest, Style};
use kradan::render::{Codec, RenderOptions, render};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

const CELL: i32 = 32;
/// Frames this close (seconds) to a hand or a bump are not taken.
const CLEAR: f64 = 0.3;

#[derive(Parser)]
#[command(about = "Per-point accuracy of a cell reader on rendered footage")]
struct Args {
    /// learned, baseline or both.
    #[arg(long, default_value = "learned")]
    reader: String,
    /// The model file for learned and both (default: the committed one).
    #[arg(long)]
    model: Option<PathBuf>,
    /// First seed of the rendered clips (and of the stills, plus 10⁶).
    #[arg(long, default_value_t = 500)]
    seed: u64,
    /// Clips rendered per style.
    #[arg(long, default_value_t = 6)]
    clips: u64,
    /// Footage per clip, seconds.
    #[arg(long, default_value_t = 40.0)]
    seconds: f64,
    /// Frames per second of the rendered clips (the scene does not depend on it).
    #[arg(long, default_value_t = 5.0)]
    fps: f64,
    /// Take one frame every this many seconds.
    #[arg(long, default_value_t = 1.0)]
    every: f64,
    /// Rendered stills per style.
    #[arg(long, default_value_t = 0)]
    stills: u64,
    /// Styles to render.
    #[arg(long, default_value = "clean,varied,hard", value_delimiter = ',')]
    styles: Vec<String>,
    /// Read these already rendered clips (folders with truth.json) instead of rendering.
    #[arg(long)]
    clip: Vec<PathBuf>,
    /// Threads rendering.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Keep the rendered clips here (default: a temporary folder).
    #[arg(long)]
    keep: Option<PathBuf>,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    boards: usize,
    exact: usize,
    points: usize,
    wrong: usize,
    /// truth × read (empty, black, white).
    confusion: [[usize; 3]; 3],
}

impl Tally {
    fn add(&mut self, read: &[Option<Color>], truth: &[Option<Color>]) {
        let index = |c: &Option<Color>| match c {
            None => 0,
            Some(Color::Black) => 1,
            Some(Color::White) => 2,
        };
        let mut wrong = 0;
        for (r, t) in read.iter().zip(truth) {
            self.confusion[index(t)][index(r)] += 1;
            wrong += usize::from(r != t);
        }
        self.boards += 1;
        self.exact += usize::from(wrong == 0);
        self.points += truth.len();
        self.wrong += wrong;
    }

    fn merge(&mut self, other: &Tally) {
        self.boards += other.boards;
        self.exact += other.exact;
        self.points += other.points;
        self.wrong += other.wrong;
        for t in 0..3 {
            for r in 0..3 {
                self.confusion[t][r] += other.confusion[t][r];
            }
        }
    }

    fn line(&self) -> String {
        format!(
            "{:>5} boards {:>7} points  {:>8.3} %  exact {:>4} ({:>5.1} %)  truth→read E{:?} B{:?} W{:?}",
            self.boards,
            self.points,
            100.0 * (1.0 - self.wrong as f64 / self.points.max(1) as f64),
            self.exact,
            100.0 * self.exact as f64 / self.boards.max(1) as f64,
            self.confusion[0],
            self.confusion[1],
            self.confusion[2],
        )
    }
}

fn style_of(name: &str) -> anyhow::Result<Style> {
    match name {
        "clean" => Ok(Style::Clean),
        "varied" => Ok(Style::Varied),
        "hard" => Ok(Style::Hard),
        other => bail!("unknown style {other:?}: expected clean, varied or hard"),
    }
}

fn load_reader(args: &Args) -> anyhow::Result<Reader> {
    let model = || -> anyhow::Result<StoneModel> {
        match &args.model {
            Some(path) => StoneModel::load(path),
            None => StoneModel::load_default(),
        }
    };
    Ok(match args.reader.as_str() {
        "learned" => Reader::Learned(model()?),
        "baseline" => Reader::Baseline,
        "both" => Reader::Both(model()?),
        other => bail!("unknown reader {other:?}: expected learned, baseline or both"),
    })
}

/// Reads one rectified board; the baseline looks where parallax puts the stones.
fn read_board(
    reader: &Reader,
    rectified: &Mat,
    geometry: &kradan::geometry::BoardGeometry,
    width: f64,
    height: f64,
) -> anyhow::Result<Vec<Option<Color>>> {
    let shifts = reading::parallax_shifts(geometry, width, height);
    let observation = reader.read(rectified, geometry.size, CELL, &shifts)?;
    Ok(observation.cells.iter().map(|c| c.color).collect())
}

fn color_of(token: &str) -> Option<Color> {
    match token {
        "B" => Some(Color::Black),
        "W" => Some(Color::White),
        _ => None,
    }
}

/// Reads the hand-free frames of the clip in `dir`: (style, resolution, tally, frames).
fn read_clip(dir: &Path, reader: &Reader, every: f64) -> anyhow::Result<(String, String, Tally)> {
    let text = std::fs::read_to_string(dir.join("truth.json"))
        .with_context(|| format!("cannot read {}/truth.json", dir.display()))?;
    let truth: Value = serde_json::from_str(&text)?;
    let style = truth["style"].as_str().unwrap_or("?").to_string();
    let width = truth["camera"]["width"]
        .as_f64()
        .context("no camera width")?;
    let height = truth["camera"]["height"]
        .as_f64()
        .context("no camera height")?;
    let resolution = format!("{width}x{height}");
    let size = truth["board"]["cells"].as_u64().context("no board cells")? as usize;
    let video = truth["video"].as_str().context("no video")?;
    let positions = truth["positions"].as_array().context("no positions")?;
    let frames = truth["frames"].as_array().context("no frames")?;
    // Times near which no frame is taken: hands, and bumps (a blurred frame).
    let mut busy: Vec<(f64, f64)> = Vec::new();
    for hand in truth["hands"].as_array().into_iter().flatten() {
        busy.push((
            hand["from"].as_f64().unwrap_or(0.0),
            hand["to"].as_f64().unwrap_or(0.0),
        ));
    }
    for bump in truth["bumps"].as_array().into_iter().flatten() {
        let at = bump["at"].as_f64().unwrap_or(0.0);
        busy.push((at, at));
    }
    for frame in frames {
        if frame["hand_over_board"].as_bool() == Some(true) {
            let t = frame["t"].as_f64().unwrap_or(0.0);
            busy.push((t, t));
        }
    }
    let clear = |t: f64| busy.iter().all(|&(a, b)| t < a - CLEAR || t > b + CLEAR);

    let mut next_image: Box<dyn FnMut(usize) -> anyhow::Result<Option<Mat>>> =
        if video.ends_with('/') {
            let folder = dir.join(video);
            Box::new(move |i| {
                let path = folder.join(format!("{i:06}.png"));
                let image = imgcodecs::imread(
                    path.to_str().context("path is not UTF-8")?,
                    imgcodecs::IMREAD_COLOR,
                )?;
                Ok((!image.empty()).then_some(image))
            })
        } else {
            let path = dir.join(video);
            let mut capture = videoio::VideoCapture::from_file(
                path.to_str().context("path is not UTF-8")?,
                videoio::CAP_ANY,
            )?;
            anyhow::ensure!(capture.is_opened()?, "cannot open {}", path.display());
            Box::new(move |_| {
                let mut image = Mat::default();
                Ok((capture.read(&mut image)? && !image.empty()).then_some(image))
            })
        };

    let mut tally = Tally::default();
    let mut last_taken = f64::NEG_INFINITY;
    for (i, frame) in frames.iter().enumerate() {
        let Some(image) = next_image(i)? else {
            break;
        };
        let t = frame["t"].as_f64().unwrap_or(0.0);
        if !clear(t) || t < last_taken + every {
            continue;
        }
        last_taken = t;
        let corners: Vec<[f64; 2]> = frame["corners"]
            .as_array()
            .context("no corners")?
            .iter()
            .map(|c| [c[0].as_f64().unwrap_or(0.0), c[1].as_f64().unwrap_or(0.0)])
            .collect();
        let corners: [[f64; 2]; 4] = corners.try_into().ok().context("not four corners")?;
        let position = &positions[frame["position"].as_u64().context("no position")? as usize];
        let mut pieces = Vec::new();
        for (r, row) in position["rows"]
            .as_array()
            .context("no rows")?
            .iter()
            .enumerate()
        {
            for (c, token) in row.as_str().unwrap_or("").split(' ').enumerate() {
                if let Some(color) = color_of(token) {
                    pieces.push(([c as f64, r as f64], color));
                }
            }
        }
        let (upright, truth) = rendered::upright_truth(size, corners, pieces)?;
        let rectified = reading::rectify(&image, &upright, CELL)?;
        let read = read_board(reader, &rectified, &upright, width, height)?;
        tally.add(&read, &truth);
    }
    Ok((style, resolution, tally))
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let reader = load_reader(&args)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let styles: Vec<Style> = args
        .styles
        .iter()
        .map(|s| style_of(s))
        .collect::<anyhow::Result<_>>()?;
    let started = Instant::now();
    // (style, resolution) → tally, for clips and stills.
    let mut clips: BTreeMap<(String, String), Tally> = BTreeMap::new();
    let mut stills: BTreeMap<(String, String), Tally> = BTreeMap::new();

    let scratch = tempfile::tempdir()?;
    let keep = args
        .keep
        .clone()
        .unwrap_or_else(|| scratch.path().to_path_buf());
    let mut dirs: Vec<PathBuf> = args.clip.clone();
    if args.clip.is_empty() {
        let records = [
            root.join("samples/go/gnugo-19x19-opening.sgf"),
            root.join("samples/go/gnugo-9x9.sgf"),
        ];
        for &style in &styles {
            for i in 0..args.clips {
                let seed = args.seed + i;
                let resolution = RESOLUTIONS[i as usize % RESOLUTIONS.len()];
                let record = &records[(i as usize / RESOLUTIONS.len()) % records.len()];
                let out = keep.join(format!("{style:?}-{seed}").to_lowercase());
                if !out.join("truth.json").is_file() {
                    let options = RenderOptions {
                        seed,
                        style,
                        scene: SceneRequest {
                            resolution: Some(resolution),
                            fps: Some(args.fps),
                            tilt: None,
                        },
                        limit_seconds: Some(args.seconds),
                        workers: args.threads,
                        codec: Codec::Mjpeg,
                        ..RenderOptions::default()
                    };
                    render(record, &out, &options, |_, _| {})?;
                }
                dirs.push(out);
            }
        }
    }
    for dir in &dirs {
        let (style, resolution, tally) = read_clip(dir, &reader, args.every)?;
        println!(
            "clip {} ({style}, {resolution}): {}",
            dir.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
            tally.line()
        );
        clips.entry((style, resolution)).or_default().merge(&tally);
    }

    for &style in &styles {
        if args.stills == 0 {
            break;
        }
        let specs: Vec<StillSpec> = (0..args.stills)
            .map(|i| StillSpec {
                seed: args.seed + 1_000_000 + i,
                style,
                resolution: RESOLUTIONS[i as usize % RESOLUTIONS.len()],
                tilt: None,
                jpeg: Some(90),
            })
            .collect();
        let rendered = rendered::parallel(&specs, args.threads, |spec| {
            rendered::render_still(*spec, CELL)
        })?;
        let mut results = Vec::new();
        for still in rendered {
            let (w, h) = still.spec.resolution;
            let read = read_board(
                &reader,
                &still.rectified,
                &still.geometry,
                f64::from(w),
                f64::from(h),
            )?;
            results.push((still.spec.resolution, read, still.truth));
        }
        for ((w, h), read, truth) in results {
            let key = (format!("{style:?}").to_lowercase(), format!("{w}x{h}"));
            stills.entry(key).or_default().add(&read, &truth);
        }
    }

    println!(
        "\nreader {} ({:.0} s)",
        reader.name(),
        started.elapsed().as_secs_f64()
    );
    for (what, table) in [("clip frames", &clips), ("stills", &stills)] {
        if table.is_empty() {
            continue;
        }
        println!("{what}:");
        let mut per_style: BTreeMap<&str, Tally> = BTreeMap::new();
        let mut all = Tally::default();
        for ((style, resolution), tally) in table.iter() {
            println!("  {style:>6} {resolution:>9}: {}", tally.line());
            per_style.entry(style).or_default().merge(tally);
            all.merge(tally);
        }
        for (style, tally) in per_style {
            println!("  {style:>6}       all: {}", tally.line());
        }
        println!("     all       all: {}", all.line());
    }
    Ok(())
}
