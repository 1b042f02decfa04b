//! Checked against reality: are the stills of `kradan::render` like real photos?
//!
//! ```sh
//! cargo run --release --example realism -- [--boards N] [--out DIR] [--seed S]
//! ```
//!
//! 1. Renders N training stills (9×9, 13×13, 19×19; 0–70 % of the points filled;
//!    `Style::Varied`, every resolution the renderer picks) with
//!    `render::random_go_board` and `render::snapshot`, and 40 held-out stills.
//! 2. Runs the still-photo recogniser (`detect::detect_with`: locator, then the committed
//!    stone model) on the held-out stills and reports boards found and points right.
//! 3. Rectifies every training still with its true corners (turned so the camera is at the
//!    bottom edge, as the locator turns real photos), trains the same MLP as
//!    `train_stones` (64 hidden, 600 RPROP iterations, 40 % of empty points kept) on those
//!    stills alone and writes it to `DIR/stones.yml.gz`.
//! 4. Reads the real photos of `../shared/data/go-photos/manifest.jsonl` with that model
//!    and with the committed `models/stones.yml.gz` (exactly as `kradan eval-photos`),
//!    and lists the real points the render-trained model misreads, with crops of them in
//!    `DIR/misreads.png`.
//! 5. Measures the look of real photos and held-out renders the same way (board colour,
//!    stone brightness, line darkness, camera) and writes the reader's view of both to
//!    `DIR/reader-view-*.png`.
//!
//! `--pairs DIR` also writes side-by-side pictures of real photos and renders of the same
//! position seen from a similar angle (`realism-pairs-*.jpg` in the folder given; never commit them: the photos are not ours to copy); `--mix-synth M`
//! is a separate experiment that adds M boards of `reading::synth` to the training set.
//! Results and what is still unlike reality: `docs/render-realism.md`.

use anyhow::{Context, bail};
use clap::Parser;
use kradan::detect::{self, DetectOptions};
use kradan::eval;
use kradan::games::{Color, Occupancy};
use kradan::geometry::locate::image_order;
use kradan::geometry::{self, BoardGeometry};
use kradan::reading::learned::{self, Dataset, StoneModel, TrainParams};
use kradan::reading::synth::Rng;
use kradan::reading::{self, Reader};
use kradan::render::scene::{self, Layout, SceneRequest, Style};
use kradan::render::script::{Board, Piece};
use kradan::render::{random_go_board, snapshot};
use opencv::core::{self, Mat, Point, Rect, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Pixels per cell of the rectified boards, as `detect` reads them.
const CELL: i32 = detect::CELL;
/// Held-out stills come from their own seed range.
const TEST_SEEDS: u64 = 0x7ea1_0000_0000;
/// Seeds searched for a render that looks at its board as a real photo does.
const PAIR_SEEDS: u64 = 0x9a12_0000_0000;

#[derive(Parser)]
#[command(about = "Realism check of kradan's rendered stills against real Go photos")]
struct Args {
    /// Rendered stills to train on.
    #[arg(long, default_value_t = 400)]
    boards: u64,
    /// Where the model, the misread crops and the detection sample go.
    #[arg(long, default_value = "target/realism")]
    out: PathBuf,
    /// Training stills are seeds S·10⁶ onwards, calibration stills the next ones.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stills for fitting the probability temperature.
    #[arg(long, default_value_t = 20)]
    calibration_boards: u64,
    /// Held-out stills: given to the whole recogniser (locator and reader), read with
    /// their true corners by both models, and measured for the look statistics.
    #[arg(long, default_value_t = 40)]
    test_boards: u64,
    /// Share of empty points kept for training (as train_stones).
    #[arg(long, default_value_t = 0.4)]
    keep_empty: f32,
    /// The real photos.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Worker threads for rendering.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Experiment, reported apart: also train on renders plus M synthetic boards of
    /// `reading::synth` (the committed model's data).
    #[arg(long, default_value_t = 0)]
    mix_synth: u64,
    /// Write side-by-side pictures of real photos and renders into this folder.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// Only write the pictures (needs --pairs).
    #[arg(long)]
    pairs_only: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = args
        .manifest
        .clone()
        .unwrap_or_else(|| root.join("../shared/data/go-photos/manifest.jsonl"));
    let committed_path = root.join("models/stones.yml.gz");
    let committed = StoneModel::load(&committed_path)?;
    let committed_reader = Reader::Learned(StoneModel::load(&committed_path)?);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;

    if let Some(dir) = &args.pairs {
        if manifest.is_file() {
            let t = Instant::now();
            pairs(&manifest, dir, &committed_reader)?;
            println!(
                "side-by-side pictures written to {} in {:.1} s",
                dir.display(),
                t.elapsed().as_secs_f64()
            );
        } else {
            println!(
                "side-by-side pictures skipped: no real photos at {}",
                manifest.display()
            );
        }
        if args.pairs_only {
            return Ok(());
        }
    }

    // (a) Render and collect the training points.
    let base = args.seed * 1_000_000;
    let t = Instant::now();
    let train_seeds: Vec<u64> = (base..base + args.boards).collect();
    let calibration_seeds: Vec<u64> =
        (base + args.boards..base + args.boards + args.calibration_boards).collect();
    let (train, train_stats) = render_dataset(&train_seeds, args.keep_empty, args.threads)?;
    let (calibration, _) = render_dataset(&calibration_seeds, args.keep_empty, args.threads)?;
    let render_s = t.elapsed().as_secs_f64();
    let counts: Vec<usize> = (0..3)
        .map(|c| train.labels.iter().filter(|&&l| l == c).count())
        .collect();
    println!(
        "rendered {} training + {} calibration stills in {render_s:.1} s ({:.2} s per still on {} threads): {} samples (empty, black, white = {counts:?})",
        args.boards,
        args.calibration_boards,
        render_s / (args.boards + args.calibration_boards).max(1) as f64,
        args.threads,
        train.len(),
    );
    println!(
        "  sizes 9/13/19: {:?}; resolutions {:?}; stones per still {:.1} on average",
        train_stats.sizes, train_stats.resolutions, train_stats.mean_stones
    );

    // (b) The whole recogniser on held-out stills.
    let t = Instant::now();
    let scratch = tempfile::tempdir()?;
    let test_seeds: Vec<u64> = (TEST_SEEDS..TEST_SEEDS + args.test_boards).collect();
    let held_out = parallel(&test_seeds, args.threads, |seed| {
        held_out_still(seed, scratch.path())
    })?;
    let render_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let found = recogniser_on_renders(&held_out, &committed_reader, &args.out)?;
    report_found(
        "locator + committed model",
        &found,
        t.elapsed().as_secs_f64() + render_s,
    );

    // (c) Train on the renders alone.
    let t = Instant::now();
    let params = TrainParams {
        hidden: 64,
        iterations: 600,
    };
    let model = StoneModel::train(&train, &calibration, params)?;
    let train_s = t.elapsed().as_secs_f64();
    let model_path = args.out.join("stones.yml.gz");
    model.save(&model_path)?;
    println!(
        "trained MLP {}-64-3 (600 iterations of RPROP) on render stills alone in {train_s:.1} s; softmax temperature {}; wrote {}",
        learned::FEATURES,
        model.temperature(),
        model_path.display()
    );

    // Held-out stills read with their true corners: in-domain accuracy of both models.
    let test = dataset(
        held_out
            .iter()
            .flat_map(|h| h.rows.iter().copied())
            .collect(),
        held_out
            .iter()
            .flat_map(|h| h.labels.iter().copied())
            .collect(),
    )?;
    for (name, m) in [("render-trained", &model), ("committed", &committed)] {
        let (right, confusion) = score(m, &test)?;
        println!(
            "held-out stills read with their true corners ({} stills, {} points), {name} model: {:.2} % right; truth→read (empty, black, white) empty {:?} black {:?} white {:?}",
            held_out.len(),
            test.len(),
            100.0 * right as f64 / test.len().max(1) as f64,
            confusion[0],
            confusion[1],
            confusion[2]
        );
    }
    let reader = Reader::Learned(model);
    let t = Instant::now();
    let found = recogniser_on_renders(&held_out, &reader, &args.out.join("render-trained"))?;
    report_found(
        "locator + render-trained model",
        &found,
        t.elapsed().as_secs_f64(),
    );

    // (d) The real photos.
    if !manifest.is_file() {
        println!(
            "real photos skipped: {} not found (the photos live beside the repository, in ../shared/data)",
            manifest.display()
        );
    } else {
        let t = Instant::now();
        let ours = eval::evaluate(&manifest, &reader, false)?;
        let theirs = eval::evaluate(&manifest, &committed_reader, false)?;
        print_comparison(&ours, &theirs);
        misreads(&manifest, &reader, &args.out)?;
        println!("  ({:.1} s)", t.elapsed().as_secs_f64());
        let (real, views) = real_looks(&manifest, &committed_reader)?;
        let rendered: Vec<Look> = held_out.iter().map(|h| h.look.clone()).collect();
        print_looks(&real, &rendered);
        let path = args.out.join("reader-view-real.png");
        imgcodecs::imwrite_def(path.as_os_str(), &tile_sheet(&views, 8)?)?;
        println!(
            "  the reader's view of every real photo: {}",
            path.display()
        );

        if args.mix_synth > 0 {
            let t = Instant::now();
            let synth = learned::synthetic_dataset(
                1_000_000..1_000_000 + args.mix_synth,
                CELL,
                1.0,
                args.keep_empty,
            )?;
            let mixed = concat(&train, &synth)?;
            let model = StoneModel::train(&mixed, &calibration, params)?;
            let path = args.out.join("mixed/stones.yml.gz");
            std::fs::create_dir_all(args.out.join("mixed"))?;
            model.save(&path)?;
            let mixed_results = eval::evaluate(&manifest, &Reader::Learned(model), false)?;
            let (_, overall) = eval::summaries(&mixed_results);
            println!(
                "EXPERIMENT (not the headline): renders + {} reading::synth boards ({} samples): real photos {:.2} % of points, {} of {} exactly right ({:.1} s; {})",
                args.mix_synth,
                mixed.len(),
                overall.accuracy(),
                overall.exact,
                overall.photos,
                t.elapsed().as_secs_f64(),
                path.display()
            );
        }
    }
    if !manifest.is_file() {
        let rendered: Vec<Look> = held_out.iter().map(|h| h.look.clone()).collect();
        print_looks(&[], &rendered);
    }
    if !held_out.is_empty() {
        let views: Vec<Mat> = held_out.iter().map(|h| h.view.clone()).collect();
        let path = args.out.join("reader-view-rendered.png");
        imgcodecs::imwrite_def(path.as_os_str(), &tile_sheet(&views, 8)?)?;
        println!(
            "  the reader's view of every held-out render: {}",
            path.display()
        );
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// What a still is made of, drawn from its seed: size, and how full.
fn still_spec(seed: u64) -> (usize, f64) {
    let mut rng = Rng::new(seed ^ 0x4ea1_15e0);
    let size = [9, 13, 19, 19][rng.below(4)];
    let density = if rng.chance(0.1) {
        0.0
    } else {
        f64::from(rng.range(0.0, 0.7))
    };
    (size, density)
}

/// One rendered still, rectified the way `detect` rectifies a photo.
struct Still {
    size: usize,
    image: Mat,
    /// The truth corners in the board's own order.
    corners: [[f64; 2]; 4],
    /// The truth, row by row in the board's own rows and columns.
    board_truth: Occupancy,
    /// The truth, row by row, in the rectified picture (camera at the bottom edge).
    truth: Vec<Option<Color>>,
    rectified: Mat,
}

/// Renders still `seed`: `random_go_board` with the renderer's Varied sloppiness
/// (0.1 spacing), seen by the scene's camera.
fn render_still(seed: u64) -> anyhow::Result<Still> {
    let (size, density) = still_spec(seed);
    let board = random_go_board(size, density, 0.1, seed);
    let (image, corners) = snapshot(
        Layout::Lines(size),
        &board,
        seed,
        Style::Varied,
        &SceneRequest::default(),
    )?;
    let truth_geometry =
        BoardGeometry::from_corners(size, corners).context("the truth corners are not convex")?;
    let upright = image_order(&truth_geometry);
    let to_upright = to_grid(&truth_geometry, &upright)?;
    let mut board_truth = Occupancy::empty(size, size);
    let mut truth = vec![None; size * size];
    for piece in &board.pieces {
        // A stone belongs to the point it is nearest, however far it slid.
        let [c, r] = nearest(piece.cell, size);
        if board_truth.get(r, c).is_none() {
            board_truth.set(r, c, Some(piece.color));
        }
        let [uc, ur] = nearest(to_upright(piece.cell), size);
        let slot = &mut truth[ur * size + uc];
        if slot.is_none() {
            *slot = Some(piece.color);
        }
    }
    let rectified = reading::rectify(&image, &upright, CELL)?;
    Ok(Still {
        size,
        image,
        corners,
        board_truth,
        truth,
        rectified,
    })
}

fn nearest(cell: [f64; 2], size: usize) -> [usize; 2] {
    cell.map(|v| (v.round().max(0.0) as usize).min(size - 1))
}

/// Grid coordinates of `from` taken to those of `to` (two namings of one grid).
fn to_grid(
    from: &BoardGeometry,
    to: &BoardGeometry,
) -> anyhow::Result<impl Fn([f64; 2]) -> [f64; 2]> {
    let back = geometry::invert(&to.homography).context("singular grid")?;
    let from = from.clone();
    Ok(move |[c, r]: [f64; 2]| geometry::apply(&back, from.to_image(c, r)))
}

#[derive(Default)]
struct RenderStats {
    sizes: [usize; 3],
    resolutions: std::collections::BTreeMap<String, usize>,
    mean_stones: f64,
}

/// Runs `job` over `seeds` on `threads` threads, results in the seeds' order.
fn parallel<R: Send>(
    seeds: &[u64],
    threads: usize,
    job: impl Fn(u64) -> anyhow::Result<R> + Sync,
) -> anyhow::Result<Vec<R>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<anyhow::Result<R>>>> =
        Mutex::new((0..seeds.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= seeds.len() {
                        break;
                    }
                    let result = job(seeds[i]);
                    results.lock().expect("no worker panicked")[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every seed was done"))
        .collect()
}

/// The points of the stills `seeds` as a dataset: every stone, `keep_empty` of the empty
/// points (as `learned::synthetic_dataset` keeps them).
fn render_dataset(
    seeds: &[u64],
    keep_empty: f32,
    threads: usize,
) -> anyhow::Result<(Dataset, RenderStats)> {
    let parts = parallel(seeds, threads, |seed| {
        let still = render_still(seed)?;
        let f = learned::features(&still.rectified, still.size, CELL)?;
        let mut pick = Rng::new(seed ^ 0x5eed);
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for (i, truth) in still.truth.iter().enumerate() {
            if truth.is_none() && !pick.chance(keep_empty) {
                continue;
            }
            rows.extend_from_slice(f.at_row::<f32>(i as i32)?);
            labels.push(learned::label(*truth));
        }
        let resolution = format!("{}x{}", still.image.cols(), still.image.rows());
        let stones = still.truth.iter().filter(|t| t.is_some()).count();
        Ok((rows, labels, still.size, resolution, stones))
    })?;
    let mut stats = RenderStats::default();
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    let mut stones = 0;
    for (r, l, size, resolution, s) in parts {
        rows.extend(r);
        labels.extend(l);
        stats.sizes[match size {
            9 => 0,
            13 => 1,
            _ => 2,
        }] += 1;
        *stats.resolutions.entry(resolution).or_default() += 1;
        stones += s;
    }
    stats.mean_stones = stones as f64 / seeds.len().max(1) as f64;
    Ok((dataset(rows, labels)?, stats))
}

fn dataset(rows: Vec<f32>, labels: Vec<u8>) -> anyhow::Result<Dataset> {
    let samples = if labels.is_empty() {
        Mat::default()
    } else {
        Mat::from_slice(&rows)?
            .reshape(1, labels.len() as i32)?
            .try_clone()?
    };
    Ok(Dataset { samples, labels })
}

fn concat(a: &Dataset, b: &Dataset) -> anyhow::Result<Dataset> {
    let mut samples = Mat::default();
    let both: Vector<Mat> = [a.samples.clone(), b.samples.clone()].into_iter().collect();
    core::vconcat(&both, &mut samples)?;
    let mut labels = a.labels.clone();
    labels.extend_from_slice(&b.labels);
    Ok(Dataset { samples, labels })
}

/// Points right and the confusion matrix (truth × read) of `model` on `data`.
fn score(model: &StoneModel, data: &Dataset) -> anyhow::Result<(usize, [[usize; 3]; 3])> {
    let mut confusion = [[0usize; 3]; 3];
    for (p, &t) in model.probabilities(&data.samples)?.iter().zip(&data.labels) {
        let read = (0..3).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
        confusion[t as usize][read] += 1;
    }
    Ok(((0..3).map(|i| confusion[i][i]).sum(), confusion))
}

struct Found {
    stills: usize,
    found: usize,
    grid_right: usize,
    points: usize,
    /// Points of the stills whose board was found.
    found_points: usize,
    right: usize,
    exact: usize,
    /// Stills whose board is turned less than 10° in the picture (as in every real photo),
    /// and how many of them were read exactly.
    level: usize,
    level_exact: usize,
    failures: Vec<String>,
}

/// A held-out still: written as PNG for the recogniser, its points' features and labels
/// (true corners), and its look.
struct HeldOut {
    seed: u64,
    path: PathBuf,
    size: usize,
    resolution: (i32, i32),
    corners: [[f64; 2]; 4],
    board_truth: Occupancy,
    rows: Vec<f32>,
    labels: Vec<u8>,
    look: Look,
    /// The reader's view of its busiest corner.
    view: Mat,
}

fn held_out_still(seed: u64, dir: &Path) -> anyhow::Result<HeldOut> {
    let still = render_still(seed)?;
    let path = dir.join(format!("still-{seed:x}.png"));
    anyhow::ensure!(
        imgcodecs::imwrite_def(path.as_os_str(), &still.image)?,
        "cannot write {}",
        path.display()
    );
    let f = learned::features(&still.rectified, still.size, CELL)?;
    let rows = f.data_typed::<f32>()?.to_vec();
    let labels = still.truth.iter().map(|t| learned::label(*t)).collect();
    let upright =
        image_order(&BoardGeometry::from_corners(still.size, still.corners).context("not convex")?);
    let look = look(&still.rectified, &still.truth, &upright, &still.image)?;
    let view = reader_view(
        &still.rectified,
        &still.truth,
        still.size,
        &format!("{seed:x} {}x{}", still.image.cols(), still.image.rows()),
    )?;
    Ok(HeldOut {
        seed,
        path,
        size: still.size,
        resolution: (still.image.cols(), still.image.rows()),
        corners: still.corners,
        board_truth: still.board_truth,
        rows,
        labels,
        look,
        view,
    })
}

fn report_found(what: &str, found: &Found, seconds: f64) {
    println!(
        "recogniser ({what}, size given) on {} held-out stills: {} boards found ({} with the grid within 0.4 spacing of the truth), {:.2} % of points right ({:.2} % on the boards found), {} stills exactly right ({seconds:.1} s)",
        found.stills,
        found.found,
        found.grid_right,
        100.0 * found.right as f64 / found.points.max(1) as f64,
        100.0 * found.right as f64 / found.found_points.max(1) as f64,
        found.exact,
    );
    println!(
        "  of the {} stills whose board is turned less than 10° in the picture (as in the real photos), {} exactly right",
        found.level, found.level_exact
    );
    for line in &found.failures {
        println!("  {line}");
    }
}

/// `detect_with` (locator and `reader`, the size given as `eval-photos` gives it) on the
/// held-out stills; the stills it gets wrong are copied into `out/recogniser-misses`.
fn recogniser_on_renders(stills: &[HeldOut], reader: &Reader, out: &Path) -> anyhow::Result<Found> {
    let mut found = Found {
        stills: stills.len(),
        found: 0,
        grid_right: 0,
        points: 0,
        found_points: 0,
        right: 0,
        exact: 0,
        level: 0,
        level_exact: 0,
        failures: Vec::new(),
    };
    let failed_dir = out.join("recogniser-misses");
    for still in stills {
        let options = DetectOptions {
            size: Some(still.size),
            ..DetectOptions::default()
        };
        let points = still.size * still.size;
        let (ok, off, errors) = match detect::detect_with(&still.path, &options, reader) {
            Ok(detection) => (
                true,
                corner_error(&detection.geometry.corners(), &still.corners, still.size),
                eval::errors_under_best_rotation(&detection.occupancy, &still.board_truth),
            ),
            Err(_) => (false, f64::INFINITY, points),
        };
        found.found += usize::from(ok);
        found.grid_right += usize::from(off < 0.4);
        found.points += points;
        if ok {
            found.found_points += points;
        }
        found.right += points - errors;
        found.exact += usize::from(ok && errors == 0);
        if still.look.turn < 10.0 {
            found.level += 1;
            found.level_exact += usize::from(ok && errors == 0);
        }
        if !ok || errors > 0 {
            std::fs::create_dir_all(&failed_dir)?;
            let path = failed_dir.join(format!("still-{:x}.png", still.seed));
            std::fs::copy(&still.path, &path)?;
            let what = if ok {
                format!("{errors} of {points} points wrong, corners off by {off:.2} spacing")
            } else {
                "no board found".to_string()
            };
            found.failures.push(format!(
                "{}: {}×{} {}×{}, board turned {:.0}° in the picture, {what}",
                path.display(),
                still.size,
                still.size,
                still.resolution.0,
                still.resolution.1,
                still.look.turn,
            ));
        }
    }
    Ok(found)
}

/// The largest distance between found and true corners, in spacings of the grid near
/// them, under the best of the four namings of the corners.
fn corner_error(found: &[[f64; 2]; 4], truth: &[[f64; 2]; 4], size: usize) -> f64 {
    let spacing = |i: usize| {
        let d = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
        d(truth[i], truth[(i + 1) % 4]).min(d(truth[i], truth[(i + 3) % 4])) / (size - 1) as f64
    };
    (0..4)
        .map(|k| {
            (0..4)
                .map(|i| {
                    let f = found[(i + k) % 4];
                    (f[0] - truth[i][0]).hypot(f[1] - truth[i][1]) / spacing(i)
                })
                .fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min)
}

fn print_comparison(ours: &[eval::PhotoResult], theirs: &[eval::PhotoResult]) {
    let (sets, overall) = eval::summaries(ours);
    let (their_sets, their_overall) = eval::summaries(theirs);
    println!("real photos (locator, size from the manifest, best of four rotations):");
    println!(
        "  {:<18} {:>6} {:>6} | {:>22} | {:>22}",
        "set", "photos", "found", "trained on renders", "committed model"
    );
    println!(
        "  {:<18} {:>6} {:>6} | {:>12} {:>9} | {:>12} {:>9}",
        "", "", "", "points %", "exact", "points %", "exact"
    );
    let rows = sets
        .iter()
        .map(|(k, v)| (k.as_str(), v, &their_sets[k]))
        .chain(std::iter::once(("overall", &overall, &their_overall)));
    for (name, s, t) in rows {
        println!(
            "  {:<18} {:>6} {:>6} | {:>12.2} {:>9} | {:>12.2} {:>9}",
            name,
            s.photos,
            s.found,
            s.accuracy(),
            format!("{}/{}", s.exact, s.photos),
            t.accuracy(),
            format!("{}/{}", t.exact, t.photos),
        );
    }
    println!(
        "  render-trained: {} of {} points wrong",
        overall.points - overall.right_points,
        overall.points
    );
}

#[derive(serde::Deserialize)]
struct Record {
    image: String,
    size: usize,
    truth: Vec<String>,
}

fn records(manifest: &Path) -> anyhow::Result<Vec<Record>> {
    let text = std::fs::read_to_string(manifest)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(Into::into))
        .collect()
}

/// The truth turned to the rotation that fits `found` best, with its error count.
fn best_truth(found: &Occupancy, truth: &Occupancy) -> (Occupancy, usize) {
    let mut turned = truth.clone();
    let mut best = (truth.clone(), usize::MAX);
    for _ in 0..4 {
        let n = truth.height();
        let errors = (0..n)
            .flat_map(|r| (0..n).map(move |c| (r, c)))
            .filter(|&(r, c)| found.get(r, c) != turned.get(r, c))
            .count();
        if errors < best.1 {
            best = (turned.clone(), errors);
        }
        turned = eval::rotate(&turned);
    }
    best
}

fn letter(c: Option<Color>) -> char {
    match c {
        None => '.',
        Some(Color::Black) => 'B',
        Some(Color::White) => 'W',
    }
}

/// Lists the real points `reader` misreads, its confusion matrix on the real photos, and
/// writes crops of the misread points (3×3 cells of the rectified photo, twice enlarged)
/// to `out/misreads.png`.
fn misreads(manifest: &Path, reader: &Reader, out: &Path) -> anyhow::Result<()> {
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let mut confusion = [[0usize; 3]; 3];
    let mut tiles = Vec::new();
    let mut lines = Vec::new();
    for record in records(manifest)? {
        let path = folder.join(&record.image);
        let truth = Occupancy::from_text_rows(&record.truth).map_err(anyhow::Error::msg)?;
        let options = DetectOptions {
            size: Some(record.size),
            ..DetectOptions::default()
        };
        let Ok(detection) = detect::detect_with(&path, &options, reader) else {
            lines.push(format!("  {}: no board found", record.image));
            continue;
        };
        let (truth, _) = best_truth(&detection.occupancy, &truth);
        let n = record.size;
        let mut wrong = Vec::new();
        for r in 0..n {
            for c in 0..n {
                let (t, f) = (truth.get(r, c), detection.occupancy.get(r, c));
                confusion[learned::label(t) as usize][learned::label(f) as usize] += 1;
                if t != f {
                    wrong.push((r, c, t, f));
                }
            }
        }
        if wrong.is_empty() {
            continue;
        }
        let loaded = kradan::source::image::load(&path)?;
        let geometry = detection.geometry.scaled(1.0 / loaded.scale);
        let rectified = reading::rectify(&loaded.image, &geometry, CELL)?;
        let mut padded = Mat::default();
        core::copy_make_border(
            &rectified,
            &mut padded,
            CELL,
            CELL,
            CELL,
            CELL,
            core::BORDER_CONSTANT,
            Scalar::all(0.0),
        )?;
        for &(r, c, t, f) in &wrong {
            let p = detection.observation.get(r, c).probabilities;
            lines.push(format!(
                "  {} row {r} col {c}: truth {} read {} (p empty {:.2} black {:.2} white {:.2})",
                record.image,
                letter(t),
                letter(f),
                p[0],
                p[1],
                p[2]
            ));
            let x = (c as i32 + 1) * CELL - CELL * 3 / 2 + CELL;
            let y = (r as i32 + 1) * CELL - CELL * 3 / 2 + CELL;
            let crop = Mat::roi(&padded, Rect::new(x, y, 3 * CELL, 3 * CELL))?;
            let mut tile = Mat::default();
            imgproc::resize(
                &crop,
                &mut tile,
                Size::new(6 * CELL, 6 * CELL),
                0.0,
                0.0,
                imgproc::INTER_NEAREST,
            )?;
            let name = Path::new(&record.image)
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned());
            label(&mut tile, &format!("{name} r{r}c{c}"), 14)?;
            label(
                &mut tile,
                &format!("truth {} read {}", letter(t), letter(f)),
                6 * CELL - 6,
            )?;
            tiles.push(tile);
        }
    }
    println!("render-trained model on the real photos, truth → read (empty, black, white):");
    for (name, row) in ["empty", "black", "white"].iter().zip(&confusion) {
        println!("  {name:>5}: {row:?}");
    }
    if lines.is_empty() {
        println!("  no misread points");
        return Ok(());
    }
    println!("misread real points:");
    for line in &lines {
        println!("{line}");
    }
    if !tiles.is_empty() {
        let sheet = tile_sheet(&tiles, 8)?;
        let path = out.join("misreads.png");
        imgcodecs::imwrite_def(path.as_os_str(), &sheet)?;
        println!("  crops: {}", path.display());
    }
    Ok(())
}

/// White text on a dark band at baseline `y`.
fn label(image: &mut Mat, text: &str, y: i32) -> anyhow::Result<()> {
    let scale = 0.42;
    let mut base = 0;
    let size = imgproc::get_text_size(text, imgproc::FONT_HERSHEY_SIMPLEX, scale, 1, &mut base)?;
    imgproc::rectangle(
        image,
        Rect::new(0, y - size.height - 4, size.width + 8, size.height + 8),
        Scalar::new(0.0, 0.0, 0.0, 0.0),
        -1,
        imgproc::LINE_8,
        0,
    )?;
    imgproc::put_text(
        image,
        text,
        Point::new(4, y),
        imgproc::FONT_HERSHEY_SIMPLEX,
        scale,
        Scalar::new(255.0, 255.0, 255.0, 0.0),
        1,
        imgproc::LINE_AA,
        false,
    )?;
    Ok(())
}

/// Equal tiles in rows of `per_row`.
fn tile_sheet(tiles: &[Mat], per_row: usize) -> anyhow::Result<Mat> {
    let (h, w) = (tiles[0].rows(), tiles[0].cols());
    let mut rows = Vector::<Mat>::new();
    for chunk in tiles.chunks(per_row) {
        let mut v: Vector<Mat> = chunk.iter().cloned().collect();
        while v.len() < per_row.min(tiles.len()) {
            v.push(Mat::new_rows_cols_with_default(
                h,
                w,
                core::CV_8UC3,
                Scalar::all(40.0),
            )?);
        }
        let mut row = Mat::default();
        core::hconcat(&v, &mut row)?;
        rows.push(row);
    }
    let mut sheet = Mat::default();
    core::vconcat(&rows, &mut sheet)?;
    Ok(sheet)
}

/// Real photos with free licences, grouped one file per source, with what to print under
/// them.
const PAIRS: [(&str, &[&str], &str); 2] = [
    (
        "realism-pairs-1.jpg",
        &["goban_to_sgf/basic.jpg", "goban_to_sgf/cornersnumbered.jpg"],
        "real: irglbriz/goban_to_sgf, MIT, (c) 2018 Tristan Kraus",
    ),
    (
        "realism-pairs-2.jpg",
        &["gomrade/testing_sequence/8.jpg", "gomrade/2/67.jpg"],
        "real: smolendawid/Gomrade, GPL-3.0",
    ),
];

/// Side-by-side pictures: each real photo next to a render of the position the committed
/// recogniser reads in it, from the seed (of a few thousand) whose camera puts the board's
/// corners nearest where the photo has them, at the photo's resolution; below, the same
/// corner of both boards rectified at the cell size the reader sees.
fn pairs(manifest: &Path, dir: &Path, reader: &Reader) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let sizes: std::collections::HashMap<String, usize> = records(manifest)?
        .into_iter()
        .map(|r| (r.image, r.size))
        .collect();
    for (file, photos, credit) in PAIRS {
        let mut blocks = Vec::new();
        for &photo in photos {
            let size = *sizes
                .get(photo)
                .with_context(|| format!("{photo} is not in the manifest"))?;
            let path = folder.join(photo);
            let loaded = kradan::source::image::load(&path)?;
            let options = DetectOptions {
                size: Some(size),
                ..DetectOptions::default()
            };
            let detection = detect::detect_with(&path, &options, reader)
                .map_err(|e| anyhow::anyhow!("{photo}: {e}"))?;
            let real_geometry = detection.geometry.scaled(1.0 / loaded.scale);
            let (w, h) = (loaded.image.cols(), loaded.image.rows());
            let (seed, render, render_geometry) =
                lookalike(size, &real_geometry, w, h, &detection.occupancy)?;
            blocks.push(pair_block(
                &loaded.image,
                &real_geometry,
                &render,
                &render_geometry,
                &detection.occupancy,
                &format!("REAL  {photo}"),
                &format!("RENDERED  kradan render, seed {seed:#x}"),
            )?);
        }
        let mut sheet = Mat::default();
        let v: Vector<Mat> = blocks.into_iter().collect();
        core::vconcat(&v, &mut sheet)?;
        let mut footer =
            Mat::new_rows_cols_with_default(24, sheet.cols(), core::CV_8UC3, Scalar::all(0.0))?;
        label(&mut footer, credit, 17)?;
        let mut all = Mat::default();
        core::vconcat(
            &[sheet, footer].into_iter().collect::<Vector<Mat>>(),
            &mut all,
        )?;
        let path = dir.join(file);
        write_jpeg_under(&path, &all, 300_000)?;
    }
    Ok(())
}

/// The seed whose camera sees the board most as the photo does, and its render with the
/// photo's position placed on the board.
fn lookalike(
    size: usize,
    real: &BoardGeometry,
    width: i32,
    height: i32,
    position: &Occupancy,
) -> anyhow::Result<(u64, Mat, BoardGeometry)> {
    let request = SceneRequest {
        resolution: Some((width as u32, height as u32)),
        ..SceneRequest::default()
    };
    let normal = |c: [[f64; 2]; 4]| c.map(|[x, y]| [x / f64::from(width), y / f64::from(height)]);
    let want = normal(real.corners());
    let mut best = (f64::INFINITY, PAIR_SEEDS);
    for seed in PAIR_SEEDS..PAIR_SEEDS + 4000 {
        let scene = scene::draw_scene(Layout::Lines(size), seed, Style::Varied, &request);
        let corners = scene.board.playing_corners().map(|c| {
            scene
                .camera
                .project(scene.placement.to_world(c, scene.board.thickness))
        });
        let Some(g) = BoardGeometry::from_corners(size, corners) else {
            continue;
        };
        let got = normal(image_order(&g).corners());
        let d: f64 = (0..4)
            .map(|i| (got[i][0] - want[i][0]).hypot(got[i][1] - want[i][1]))
            .sum();
        if d < best.0 {
            best = (d, seed);
        }
    }
    let seed = best.1;
    let scene = scene::draw_scene(Layout::Lines(size), seed, Style::Varied, &request);
    let corners = scene.board.playing_corners().map(|c| {
        scene
            .camera
            .project(scene.placement.to_world(c, scene.board.thickness))
    });
    let board_geometry = BoardGeometry::from_corners(size, corners).context("not convex")?;
    let upright = image_order(&board_geometry);
    // The photo's stones are named in the upright grid; the renderer wants the board's own.
    let to_board = to_grid(&upright, &board_geometry)?;
    let mut rng = Rng::new(seed);
    let mut pieces = Vec::new();
    for r in 0..size {
        for c in 0..size {
            if let Some(color) = position.get(r, c) {
                let [bc, br] = to_board([c as f64, r as f64]);
                let a = f64::from(rng.range(0.0, std::f32::consts::TAU));
                let off = 0.06 * f64::from(rng.unit());
                pieces.push(Piece {
                    id: pieces.len() as u32 + 1,
                    color,
                    shape: scene::Shape::Stone,
                    cell: [bc.round() + off * a.cos(), br.round() + off * a.sin()],
                });
            }
        }
    }
    let (image, corners) = snapshot(
        Layout::Lines(size),
        &Board { pieces },
        seed,
        Style::Varied,
        &request,
    )?;
    let geometry = image_order(&BoardGeometry::from_corners(size, corners).context("not convex")?);
    Ok((seed, image, geometry))
}

/// One pair: both frames at the same height side by side, and under each a close-up of
/// the same 7×7 points of its rectified board (the corner with the most stones).
fn pair_block(
    real: &Mat,
    real_geometry: &BoardGeometry,
    render: &Mat,
    render_geometry: &BoardGeometry,
    position: &Occupancy,
    real_label: &str,
    render_label: &str,
) -> anyhow::Result<Mat> {
    const H: i32 = 420;
    const W: i32 = 600;
    let fit = |image: &Mat| -> anyhow::Result<Mat> {
        let k =
            (f64::from(H) / f64::from(image.rows())).min(f64::from(W) / f64::from(image.cols()));
        let mut small = Mat::default();
        imgproc::resize(
            image,
            &mut small,
            Size::new(0, 0),
            k,
            k,
            imgproc::INTER_AREA,
        )?;
        let mut framed = Mat::new_rows_cols_with_default(H, W, core::CV_8UC3, Scalar::all(24.0))?;
        let (x, y) = ((W - small.cols()) / 2, (H - small.rows()) / 2);
        small.copy_to(&mut Mat::roi_mut(
            &mut framed,
            Rect::new(x, y, small.cols(), small.rows()),
        )?)?;
        Ok(framed)
    };
    let size = real_geometry.size;
    let span = 7.min(size);
    let (r0, c0) = busiest_corner(size, span, |r, c| position.get(r, c).is_some());
    let close = |image: &Mat, geometry: &BoardGeometry| -> anyhow::Result<Mat> {
        let rectified = reading::rectify(image, geometry, CELL)?;
        let x = (c0 as i32 + 1) * CELL - CELL / 2;
        let y = (r0 as i32 + 1) * CELL - CELL / 2;
        let crop = Mat::roi(
            &rectified,
            Rect::new(x, y, span as i32 * CELL, span as i32 * CELL),
        )?;
        let mut big = Mat::default();
        let side = H * 3 / 4;
        imgproc::resize(
            &crop,
            &mut big,
            Size::new(side, side),
            0.0,
            0.0,
            imgproc::INTER_NEAREST,
        )?;
        let mut framed =
            Mat::new_rows_cols_with_default(side, W, core::CV_8UC3, Scalar::all(24.0))?;
        big.copy_to(&mut Mat::roi_mut(
            &mut framed,
            Rect::new((W - side) / 2, 0, side, side),
        )?)?;
        Ok(framed)
    };
    let mut left = fit(real)?;
    let mut right = fit(render)?;
    label(&mut left, real_label, 18)?;
    label(&mut right, render_label, 18)?;
    let mut left_close = close(real, real_geometry)?;
    let mut right_close = close(render, render_geometry)?;
    let what = format!("as the reader sees it ({CELL} px per cell)");
    label(&mut left_close, &format!("REAL  {what}"), 18)?;
    label(&mut right_close, &format!("RENDERED  {what}"), 18)?;
    let row = |a: Mat, b: Mat| -> anyhow::Result<Mat> {
        let gap = Mat::new_rows_cols_with_default(a.rows(), 6, core::CV_8UC3, Scalar::all(255.0))?;
        let mut out = Mat::default();
        core::hconcat(&[a, gap, b].into_iter().collect::<Vector<Mat>>(), &mut out)?;
        Ok(out)
    };
    let top = row(left, right)?;
    let bottom = row(left_close, right_close)?;
    let rule = Mat::new_rows_cols_with_default(6, top.cols(), core::CV_8UC3, Scalar::all(255.0))?;
    let mut out = Mat::default();
    core::vconcat(
        &[top, bottom, rule].into_iter().collect::<Vector<Mat>>(),
        &mut out,
    )?;
    Ok(out)
}

/// The corner window of `span` × `span` points with the most stones (row, col of its
/// first point).
fn busiest_corner(
    size: usize,
    span: usize,
    stone: impl Fn(usize, usize) -> bool,
) -> (usize, usize) {
    let starts = [0, size - span];
    let mut best = (0, 0, 0);
    for &r0 in &starts {
        for &c0 in &starts {
            let n = (r0..r0 + span)
                .flat_map(|r| (c0..c0 + span).map(move |c| (r, c)))
                .filter(|&(r, c)| stone(r, c))
                .count();
            if n >= best.0 {
                best = (n, r0, c0);
            }
        }
    }
    (best.1, best.2)
}

/// The reader's view of a board's busiest corner: 7×7 points of the rectified picture at
/// [`CELL`] pixels a cell, labelled.
fn reader_view(
    rectified: &Mat,
    truth: &[Option<Color>],
    size: usize,
    name: &str,
) -> anyhow::Result<Mat> {
    let span = 7.min(size);
    let (r0, c0) = busiest_corner(size, span, |r, c| truth[r * size + c].is_some());
    let x = (c0 as i32 + 1) * CELL - CELL / 2;
    let y = (r0 as i32 + 1) * CELL - CELL / 2;
    let side = 7 * CELL;
    let mut tile = Mat::new_rows_cols_with_default(side, side, core::CV_8UC3, Scalar::all(24.0))?;
    let crop = Mat::roi(
        rectified,
        Rect::new(x, y, span as i32 * CELL, span as i32 * CELL),
    )?;
    crop.copy_to(&mut Mat::roi_mut(
        &mut tile,
        Rect::new(0, 0, crop.cols(), crop.rows()),
    )?)?;
    label(&mut tile, name, 14)?;
    Ok(tile)
}

/// JPEG at the best quality (from 88 down) that keeps the file under `limit` bytes.
fn write_jpeg_under(path: &Path, image: &Mat, limit: usize) -> anyhow::Result<()> {
    for quality in (40..=88).rev().step_by(4) {
        let mut buf = Vector::<u8>::new();
        imgcodecs::imencode(
            ".jpg",
            image,
            &mut buf,
            &Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]),
        )?;
        if buf.len() <= limit {
            std::fs::write(path, buf.as_slice())?;
            println!(
                "  {} ({} kB, JPEG quality {quality})",
                path.display(),
                buf.len() / 1024
            );
            return Ok(());
        }
    }
    bail!("{} does not fit in {limit} bytes", path.display())
}

/// How a board looks to the reader, measured the same way on real photos and renders.
#[derive(Clone, Debug, Default)]
struct Look {
    /// Board between the points (squares with no stone at their corners): hue (degrees),
    /// saturation and value (0–1).
    board: [f64; 3],
    /// Mean luminance of the middle of white stones, 0–255, and relative to the board.
    white: Option<f64>,
    white_ratio: Option<f64>,
    black_ratio: Option<f64>,
    /// How much darker than the board a grid line is at its darkest (0 = invisible,
    /// 1 = black), between two empty points.
    line: Option<f64>,
    /// Width of a line in cells: the share of a cell darker than halfway from board to line.
    line_width: Option<f64>,
    /// Texture and noise: spread of luminance in the middle of empty squares, relative.
    texture: f64,
    /// How far the outer lines bow (lens distortion): the spread, in cells, of where each
    /// one runs across the grid fitted to the board, the median of the four.
    bow: Option<f64>,
    /// Pixels per grid spacing in the photo as taken.
    cell_px: f64,
    /// The board's turn in the picture (0–45°: how far its top edge is from level).
    turn: f64,
    /// The camera's angle from vertical, recovered from the grid as `reading` does.
    tilt: Option<f64>,
}

fn median_of(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// Measures `rectified` (cell [`CELL`], grid point (c, r) at ((c+1)·CELL, (r+1)·CELL)),
/// whose points hold `truth` row by row; `geometry` places the grid in `image`.
fn look(
    rectified: &Mat,
    truth: &[Option<Color>],
    geometry: &BoardGeometry,
    image: &Mat,
) -> anyhow::Result<Look> {
    let size = geometry.size;
    let mut gray = Mat::default();
    imgproc::cvt_color_def(rectified, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    let mut hsv = Mat::default();
    imgproc::cvt_color_def(rectified, &mut hsv, imgproc::COLOR_BGR2HSV)?;
    let y = |x: i32, yy: i32| -> f64 { gray.at_2d::<u8>(yy, x).map_or(0.0, |v| f64::from(*v)) };
    let empty = |c: usize, r: usize| truth[r * size + c].is_none();
    let (mut lum, mut spread, mut h, mut s, mut v) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for hr in 0..size - 1 {
        for hc in 0..size - 1 {
            if !(empty(hc, hr) && empty(hc + 1, hr) && empty(hc, hr + 1) && empty(hc + 1, hr + 1)) {
                continue;
            }
            let (x0, y0) = (
                (hc as i32 + 1) * CELL + CELL / 4,
                (hr as i32 + 1) * CELL + CELL / 4,
            );
            let (mut sum, mut sum2, mut n) = (0.0, 0.0, 0.0);
            let (mut hs, mut ss, mut vs) = (Vec::new(), 0.0, 0.0);
            for yy in y0..y0 + CELL / 2 {
                for x in x0..x0 + CELL / 2 {
                    let l = y(x, yy);
                    sum += l;
                    sum2 += l * l;
                    n += 1.0;
                    let p = hsv.at_2d::<core::Vec3b>(yy, x)?;
                    hs.push(f64::from(p[0]) * 2.0);
                    ss += f64::from(p[1]) / 255.0;
                    vs += f64::from(p[2]) / 255.0;
                }
            }
            let mean = sum / n;
            lum.push(mean);
            spread.push((sum2 / n - mean * mean).max(0.0).sqrt() / mean.max(1.0));
            h.push(median_of(hs).unwrap_or(0.0));
            s.push(ss / n);
            v.push(vs / n);
        }
    }
    let board_y = median_of(lum).unwrap_or(f64::NAN);
    // Stones: the middle (radius a fifth of a cell) of each.
    let (mut white, mut black) = (Vec::new(), Vec::new());
    let radius = CELL / 5;
    for r in 0..size {
        for c in 0..size {
            let Some(color) = truth[r * size + c] else {
                continue;
            };
            let (cx, cy) = ((c as i32 + 1) * CELL, (r as i32 + 1) * CELL);
            let (mut sum, mut n) = (0.0, 0.0);
            for yy in cy - radius..=cy + radius {
                for x in cx - radius..=cx + radius {
                    if (x - cx).pow(2) + (yy - cy).pow(2) <= radius * radius {
                        sum += y(x, yy);
                        n += 1.0;
                    }
                }
            }
            match color {
                Color::White => white.push(sum / n),
                Color::Black => black.push(sum / n),
            }
        }
    }
    // Lines: the vertical profile across a horizontal line midway between two empty points.
    let (mut depth, mut width) = (Vec::new(), Vec::new());
    for r in 0..size {
        for c in 0..size - 1 {
            if !(empty(c, r) && empty(c + 1, r)) {
                continue;
            }
            let (x, ly) = ((c as i32 + 1) * CELL + CELL / 2, (r as i32 + 1) * CELL);
            let profile: Vec<f64> = (ly - CELL / 2 + 1..ly + CELL / 2)
                .map(|yy| (y(x - 1, yy) + y(x, yy) + y(x + 1, yy)) / 3.0)
                .collect();
            // The line is the darkest place within a sixth of a cell of where it should be.
            let near = &profile[(CELL / 2 - CELL / 6) as usize..(CELL / 2 + CELL / 6) as usize];
            let darkest = near.iter().copied().fold(f64::MAX, f64::min);
            let local = median_of(profile.clone()).unwrap_or(board_y);
            if local <= 1.0 {
                continue;
            }
            depth.push(1.0 - darkest / local);
            let half = (local + darkest) / 2.0;
            width.push(near.iter().filter(|&&p| p < half).count() as f64 / f64::from(CELL));
        }
    }
    // Bow of the outer lines (lens distortion): along each, where the line runs between two
    // empty points, the darkest place across it within 0.3 cell of where the grid puts it;
    // the spread of those places along the line, in cells.
    let mut bows = Vec::new();
    let reach = CELL * 3 / 10;
    let last = size - 1;
    for (horizontal, k) in [(true, 0), (true, last), (false, 0), (false, last)] {
        let mut offsets = Vec::new();
        for j in 0..last {
            let (a, b) = if horizontal {
                ((j, k), (j + 1, k))
            } else {
                ((k, j), (k, j + 1))
            };
            if !(empty(a.0, a.1) && empty(b.0, b.1)) {
                continue;
            }
            let along = (j as i32 + 1) * CELL + CELL / 2;
            let at = (k as i32 + 1) * CELL;
            let sample = |o: i32| {
                if horizontal {
                    (y(along - 1, at + o) + y(along, at + o) + y(along + 1, at + o)) / 3.0
                } else {
                    (y(at + o, along - 1) + y(at + o, along) + y(at + o, along + 1)) / 3.0
                }
            };
            let darkest = (-reach..=reach)
                .min_by(|&p, &q| sample(p).total_cmp(&sample(q)))
                .unwrap_or(0);
            offsets.push(f64::from(darkest) / f64::from(CELL));
        }
        if offsets.len() >= size / 2 {
            let lo = offsets.iter().copied().fold(f64::MAX, f64::min);
            let hi = offsets.iter().copied().fold(f64::MIN, f64::max);
            bows.push(hi - lo);
        }
    }
    let corners = geometry.corners();
    let d = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
    let cell_px = (0..4)
        .map(|i| d(corners[i], corners[(i + 1) % 4]))
        .sum::<f64>()
        / 4.0
        / (size - 1) as f64;
    let top = [corners[1][0] - corners[0][0], corners[1][1] - corners[0][1]];
    let turn = top[1].atan2(top[0]).to_degrees().abs();
    let centre = (size - 1) as f64 / 2.0;
    let tilt = geometry
        .camera_position(f64::from(image.cols()), f64::from(image.rows()))
        .map(|p| {
            (p.x - centre)
                .hypot(p.y - centre)
                .atan2(p.height)
                .to_degrees()
        });
    let white_y = median_of(white);
    Ok(Look {
        board: [
            median_of(h).unwrap_or(f64::NAN),
            median_of(s).unwrap_or(f64::NAN),
            median_of(v).unwrap_or(f64::NAN),
        ],
        white: white_y,
        white_ratio: white_y.map(|w| w / board_y),
        black_ratio: median_of(black).map(|b| b / board_y),
        line: median_of(depth),
        line_width: median_of(width),
        texture: median_of(spread).unwrap_or(f64::NAN),
        bow: median_of(bows),
        cell_px,
        turn: if turn > 90.0 { 180.0 - turn } else { turn }.min(90.0),
        tilt,
    })
}

/// The look of every real photo, on the grid the locator finds and the true position
/// turned to it.
fn real_looks(manifest: &Path, reader: &Reader) -> anyhow::Result<(Vec<Look>, Vec<Mat>)> {
    let folder = manifest.parent().unwrap_or(Path::new("."));
    let mut looks = Vec::new();
    let mut views = Vec::new();
    for record in records(manifest)? {
        let path = folder.join(&record.image);
        let truth = Occupancy::from_text_rows(&record.truth).map_err(anyhow::Error::msg)?;
        let options = DetectOptions {
            size: Some(record.size),
            ..DetectOptions::default()
        };
        let Ok(detection) = detect::detect_with(&path, &options, reader) else {
            continue;
        };
        let (truth, _) = best_truth(&detection.occupancy, &truth);
        let n = record.size;
        let truth: Vec<Option<Color>> = (0..n * n).map(|i| truth.get(i / n, i % n)).collect();
        let loaded = kradan::source::image::load(&path)?;
        let geometry = detection.geometry.scaled(1.0 / loaded.scale);
        let rectified = reading::rectify(&loaded.image, &geometry, CELL)?;
        let mut l = look(&rectified, &truth, &geometry, &loaded.image)?;
        l.cell_px *= loaded.scale;
        looks.push(l);
        let name = Path::new(&record.image)
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        views.push(reader_view(&rectified, &truth, n, &name)?);
    }
    Ok((looks, views))
}

/// 10th percentile, median and 90th percentile of each measure, real against rendered.
fn print_looks(real: &[Look], rendered: &[Look]) {
    type Get = fn(&Look) -> Option<f64>;
    let measures: [(&str, Get); 13] = [
        ("board hue (deg)", |l| Some(l.board[0])),
        ("board saturation", |l| Some(l.board[1])),
        ("board value", |l| Some(l.board[2])),
        ("white stone luma", |l| l.white),
        ("white / board luma", |l| l.white_ratio),
        ("black / board luma", |l| l.black_ratio),
        ("line darkness", |l| l.line),
        ("line width (cell)", |l| l.line_width),
        ("board texture+noise", |l| Some(l.texture)),
        ("outer line bow (cell)", |l| l.bow),
        ("px per spacing", |l| Some(l.cell_px)),
        ("board turn (deg)", |l| Some(l.turn)),
        ("camera tilt (deg)", |l| l.tilt),
    ];
    let spread = |looks: &[Look], get: Get| -> String {
        let mut v: Vec<f64> = looks
            .iter()
            .filter_map(get)
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            return "-".into();
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
        let fmt = |x: f64| {
            if x.abs() >= 10.0 {
                format!("{x:.0}")
            } else {
                format!("{x:.2}")
            }
        };
        format!("{} / {} / {}", fmt(q(0.1)), fmt(q(0.5)), fmt(q(0.9)))
    };
    println!(
        "look, 10th percentile / median / 90th percentile ({} real photos, {} held-out renders):",
        real.len(),
        rendered.len()
    );
    println!("  {:<22} {:>22} {:>22}", "", "real", "rendered");
    for (name, get) in measures {
        println!(
            "  {:<22} {:>22} {:>22}",
            name,
            spread(real, get),
            spread(rendered, get)
        );
    }
}
