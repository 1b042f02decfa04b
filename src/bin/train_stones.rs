//! Trains the learned stone classifier on rendered boards and writes the model.
//!
//! `cargo run --release --bin train_stones -- --out models/stones.yml.gz [--seed S] [--boards N]`

use anyhow::Context;
use clap::Parser;
use kradan::reading::learned::rendered::{self, RESOLUTIONS, StillSpec};
use kradan::reading::learned::{self, StoneModel, TrainParams};
use kradan::reading::synth;
use kradan::render::scene::Style;
use opencv::core;
use opencv::ml::{self, RTrees};
use opencv::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// Held-out boards come from their own seed range, far from any training seed.
const TEST_SEEDS: u64 = 0x7e57_0000_0000;
const CELL: i32 = 32;
/// Rendered training stills (`--renders`) are seeds `RENDER_SEEDS + S·10⁶ + i`: far above
/// the seeds clips are measured on (`examples/reader_on_footage.rs` uses 500 up to 10⁹)
/// and the recorder is developed on (below 100), so no measured scene was trained on.
const RENDER_SEEDS: u64 = 1 << 48;
/// Held-out rendered stills for the report.
const RENDER_TEST_SEEDS: u64 = RENDER_SEEDS + 0x7e57_0000_0000;

#[derive(Parser)]
#[command(about = "Train the stone classifier on synthetic boards")]
struct Args {
    /// Where to write the model.
    #[arg(long, default_value = "models/stones.yml.gz")]
    out: PathBuf,
    /// Seed of the training boards (training uses seeds S·10⁶ onwards).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of training boards.
    #[arg(long, default_value_t = 500)]
    boards: u64,
    /// Boards for fitting the probability temperature.
    #[arg(long, default_value_t = 20)]
    calibration_boards: u64,
    /// Held-out boards for the accuracy report.
    #[arg(long, default_value_t = 100)]
    test_boards: u64,
    /// Share of empty points kept for training.
    #[arg(long, default_value_t = 0.4)]
    keep_empty: f32,
    /// Hidden layer width.
    #[arg(long, default_value_t = 64)]
    hidden: i32,
    /// RPROP iterations.
    #[arg(long, default_value_t = 600)]
    iterations: i32,
    /// Also train a random forest on the same data and report it (not saved).
    #[arg(long)]
    compare_rtrees: bool,
    /// Write the first few training boards as PNG here, to look at them.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Do not train: read this already rectified board image (cell 32 px) with the model at
    /// `--out` and print the position, to check the model on real photos. `seed:N` renders
    /// synthetic board N (written to `--dump` if given) and prints its errors too.
    #[arg(long)]
    check: Option<PathBuf>,
    /// Do not train: report the model at `--out` on the held-out boards.
    #[arg(long)]
    evaluate: bool,
    /// Rendered stills (`kradan::render::snapshot`, random positions) mixed into the
    /// training boards; calibration gets a twentieth as many more.
    #[arg(long, default_value_t = 0)]
    renders: u64,
    /// Relative shares of the clean, varied and hard styles among the rendered stills.
    #[arg(long, default_value = "1,2,2", value_delimiter = ',')]
    style_weights: Vec<u32>,
    /// Held-out rendered stills for the report (per style).
    #[arg(long, default_value_t = 0)]
    test_renders: u64,
    /// Threads rendering stills.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Board size of the `--check` image.
    #[arg(long, default_value_t = 19)]
    size: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(image) = &args.check {
        return check(&args.out, image, args.size, args.dump.as_deref());
    }
    if args.evaluate {
        let model = StoneModel::load(&args.out)?;
        report(&model, args.test_boards)?;
        report_renders(&model, args.test_renders, args.threads)?;
        return Ok(());
    }
    let base = args.seed * 1_000_000;
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
        for seed in base..base + 12 {
            let board = synth::render_any(seed, CELL)?;
            let path = dir.join(format!("board-{seed}.png"));
            opencv::imgcodecs::imwrite(
                path.to_str().context("dump path is not UTF-8")?,
                &board.image,
                &core::Vector::new(),
            )?;
        }
        println!("wrote 12 boards to {}", dir.display());
    }

    let started = Instant::now();
    let train = learned::synthetic_dataset(base..base + args.boards, CELL, 1.0, args.keep_empty)?;
    let calibration = learned::synthetic_dataset(
        base + args.boards..base + args.boards + args.calibration_boards,
        CELL,
        1.0,
        args.keep_empty,
    )?;
    let (train, calibration) = if args.renders > 0 {
        let t = Instant::now();
        let weights = &args.style_weights;
        anyhow::ensure!(
            weights.len() == 3 && weights.iter().any(|&w| w > 0),
            "--style-weights takes three shares: clean, varied, hard"
        );
        let render_base = RENDER_SEEDS + base;
        let specs = |seeds: std::ops::Range<u64>| -> Vec<StillSpec> {
            seeds.map(|seed| training_spec(seed, weights)).collect()
        };
        let calibration_renders = args.renders.div_ceil(20);
        let more = rendered::dataset(
            &specs(render_base..render_base + args.renders),
            CELL,
            args.keep_empty,
            args.threads,
        )?;
        let more_calibration = rendered::dataset(
            &specs(render_base + args.renders..render_base + args.renders + calibration_renders),
            CELL,
            args.keep_empty,
            args.threads,
        )?;
        println!(
            "rendered {} + {} stills (style shares clean, varied, hard = {:?}): {} samples in {:.1} s",
            args.renders,
            calibration_renders,
            weights,
            more.len(),
            t.elapsed().as_secs_f32()
        );
        (
            rendered::concat(&train, &more)?,
            rendered::concat(&calibration, &more_calibration)?,
        )
    } else {
        (train, calibration)
    };
    let counts = (0..3).map(|c| train.labels.iter().filter(|&&l| l == c).count());
    println!(
        "{} synthetic boards, {} rendered stills: {} samples (empty, black, white = {:?}) in {:.1} s",
        args.boards,
        args.renders,
        train.len(),
        counts.collect::<Vec<_>>(),
        started.elapsed().as_secs_f32()
    );

    let started = Instant::now();
    let params = TrainParams {
        hidden: args.hidden,
        iterations: args.iterations,
    };
    let model = StoneModel::train(&train, &calibration, params)?;
    println!(
        "trained MLP {}-{}-3 ({} iterations of RPROP) in {:.1} s; softmax temperature {}",
        learned::FEATURES,
        args.hidden,
        args.iterations,
        started.elapsed().as_secs_f32(),
        model.temperature()
    );

    let worst = report(&model, args.test_boards)?;
    report_renders(&model, args.test_renders, args.threads)?;
    if let Some(dir) = &args.dump {
        let board = synth::render_any(worst, CELL)?;
        let path = dir.join(format!("worst-held-out-{worst}.png"));
        let path = path.to_str().context("dump path is not UTF-8")?;
        opencv::imgcodecs::imwrite(path, &board.image, &core::Vector::new())?;
        println!("wrote {path}");
    }
    if args.compare_rtrees {
        compare_rtrees(&train, args.test_boards)?;
    }

    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    model.save(&args.out)?;
    let bytes = std::fs::metadata(&args.out)?.len();
    StoneModel::load(&args.out).context("the model just written does not load")?;
    println!("wrote {} ({} bytes)", args.out.display(), bytes);
    Ok(())
}

fn check(
    model: &std::path::Path,
    image: &std::path::Path,
    size: usize,
    dump: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let model = StoneModel::load(model)?;
    let path = image.to_str().context("image path is not UTF-8")?;
    let (picture, size, truth) = if let Some(seed) = path.strip_prefix("seed:") {
        let board = synth::render_any(seed.parse()?, CELL)?;
        if let Some(dir) = dump {
            let out = dir.join(format!("board-{seed}.png"));
            let out = out.to_str().context("dump path is not UTF-8")?;
            opencv::imgcodecs::imwrite(out, &board.image, &core::Vector::new())?;
        }
        (board.image, board.size, Some(board.truth))
    } else {
        let picture = opencv::imgcodecs::imread(path, opencv::imgcodecs::IMREAD_COLOR)?;
        anyhow::ensure!(!picture.empty(), "cannot read {}", image.display());
        (picture, size, None)
    };
    let observation = model.read(&picture, size, CELL)?;
    for row in 0..size {
        let line: String = (0..size)
            .map(|col| match observation.get(row, col).color {
                None => '.',
                Some(kradan::games::Color::Black) => 'B',
                Some(kradan::games::Color::White) => 'W',
            })
            .collect();
        println!("{line}");
    }
    for row in 0..size {
        for col in 0..size {
            let cell = observation.get(row, col);
            if cell.confidence() < 0.9 {
                println!("unsure at row {row} col {col}: {:?}", cell.probabilities);
            }
            if let Some(truth) = &truth
                && truth[row * size + col] != cell.color
            {
                println!(
                    "wrong at row {row} col {col}: truth {:?}, read {:?}",
                    truth[row * size + col],
                    cell.probabilities
                );
            }
        }
    }
    Ok(())
}

/// Accuracy on held-out boards, the confusion matrix, and the time to read a 19×19 board.
fn report(model: &StoneModel, boards: u64) -> anyhow::Result<u64> {
    let mut confusion = [[0usize; 3]; 3];
    let mut worst = (1.0f32, 0u64);
    let mut perfect = 0;
    let mut nll = 0.0f64;
    let mut points = 0usize;
    for seed in TEST_SEEDS..TEST_SEEDS + boards {
        let board = synth::render_any(seed, CELL)?;
        let observation = model.read(&board.image, board.size, CELL)?;
        let mut wrong = 0;
        for (cell, truth) in observation.cells.iter().zip(&board.truth) {
            let (t, p) = (learned::label(*truth), learned::label(cell.color));
            confusion[t as usize][p as usize] += 1;
            nll -= (cell.probabilities[t as usize].max(1e-6) as f64).ln();
            wrong += usize::from(t != p);
        }
        points += board.truth.len();
        let accuracy = 1.0 - wrong as f32 / board.truth.len() as f32;
        perfect += usize::from(wrong == 0);
        if accuracy < worst.0 {
            worst = (accuracy, seed);
        }
    }
    let right: usize = (0..3).map(|i| confusion[i][i]).sum();
    println!(
        "held-out: {boards} boards, {points} points: accuracy {:.4}%, {perfect} boards perfect, worst board {:.2}% (seed {:#x}), mean log-loss {:.4}",
        100.0 * right as f64 / points as f64,
        100.0 * worst.0,
        worst.1,
        nll / points as f64
    );
    let names = ["empty", "black", "white"];
    for (t, row) in confusion.iter().enumerate() {
        println!(
            "  truth {:>5}: read as empty {:>6}  black {:>6}  white {:>6}",
            names[t], row[0], row[1], row[2]
        );
    }

    core::set_num_threads(1)?;
    let board = synth::render(TEST_SEEDS + 1_000_000, 19, CELL)?;
    let runs = 200;
    let started = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(model.read(&board.image, 19, CELL)?);
    }
    println!(
        "reading a 19×19 board (361 points) on one thread: {:.2} ms",
        started.elapsed().as_secs_f64() * 1000.0 / runs as f64
    );
    core::set_num_threads(-1)?;
    Ok(worst.1)
}

/// How training still `seed` is made: its style from `weights` (clean, varied, hard),
/// any of the renderer's resolutions, the style's own tilt and light, and a JPEG round
/// trip as a video encoder makes.
fn training_spec(seed: u64, weights: &[u32]) -> StillSpec {
    let mut rng = synth::Rng::new(seed ^ 0x57_11_5e_ed);
    let total: u32 = weights.iter().sum();
    let mut pick = rng.below(total as usize) as u32;
    let mut style = Style::Hard;
    for (w, s) in weights
        .iter()
        .zip([Style::Clean, Style::Varied, Style::Hard])
    {
        if pick < *w {
            style = s;
            break;
        }
        pick -= w;
    }
    StillSpec {
        seed,
        style,
        resolution: RESOLUTIONS[rng.below(RESOLUTIONS.len())],
        tilt: None,
        jpeg: Some(70 + rng.below(26) as i32),
    }
}

/// Accuracy on held-out rendered stills, `per_style` of each style, resolutions in turn.
fn report_renders(model: &StoneModel, per_style: u64, threads: usize) -> anyhow::Result<()> {
    if per_style == 0 {
        return Ok(());
    }
    for (k, style) in [Style::Clean, Style::Varied, Style::Hard]
        .into_iter()
        .enumerate()
    {
        let base = RENDER_TEST_SEEDS + k as u64 * 1_000_000;
        let specs: Vec<StillSpec> = (0..per_style)
            .map(|i| StillSpec {
                seed: base + i,
                style,
                resolution: RESOLUTIONS[i as usize % RESOLUTIONS.len()],
                tilt: None,
                jpeg: Some(90),
            })
            .collect();
        let stills =
            rendered::parallel(&specs, threads, |spec| rendered::render_still(*spec, CELL))?;
        let mut results = Vec::new();
        for still in &stills {
            let read = model.read(&still.rectified, still.size, CELL)?;
            let wrong = read
                .cells
                .iter()
                .zip(&still.truth)
                .filter(|(c, t)| c.color != **t)
                .count();
            results.push((wrong, still.truth.len()));
        }
        let wrong: usize = results.iter().map(|r| r.0).sum();
        let points: usize = results.iter().map(|r| r.1).sum();
        let exact = results.iter().filter(|r| r.0 == 0).count();
        println!(
            "held-out rendered stills, {style:?}: {per_style} stills, {points} points: accuracy {:.4}%, {exact} exact",
            100.0 * (1.0 - wrong as f64 / points.max(1) as f64)
        );
    }
    Ok(())
}

/// Random forest on the same features, for the record: accuracy, training time, size.
fn compare_rtrees(train: &learned::Dataset, boards: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut forest = RTrees::create()?;
    forest.set_max_depth(16)?;
    forest.set_min_sample_count(4)?;
    forest.set_active_var_count(16)?;
    forest.set_term_criteria(core::TermCriteria::new(
        core::TermCriteria_MAX_ITER,
        100,
        0.0,
    )?)?;
    let labels: Vec<i32> = train.labels.iter().map(|&l| l as i32).collect();
    let responses = core::Mat::from_slice(&labels)?
        .reshape(1, labels.len() as i32)?
        .try_clone()?;
    let data = ml::TrainData::create(
        &train.samples,
        ml::ROW_SAMPLE,
        &responses,
        &core::no_array(),
        &core::no_array(),
        &core::no_array(),
        &core::no_array(),
    )?;
    forest.train_with_data(&data, 0)?;
    let trained = started.elapsed().as_secs_f32();
    let (mut right, mut points) = (0usize, 0usize);
    let mut read_time = 0.0;
    for seed in TEST_SEEDS..TEST_SEEDS + boards {
        let board = synth::render_any(seed, CELL)?;
        let samples = learned::features(&board.image, board.size, CELL)?;
        let t = Instant::now();
        let mut out = core::Mat::default();
        forest.predict(&samples, &mut out, 0)?;
        read_time += t.elapsed().as_secs_f64() / (board.size * board.size) as f64 * 361.0;
        for (i, truth) in board.truth.iter().enumerate() {
            right += usize::from(*out.at::<f32>(i as i32)? as u8 == learned::label(*truth));
        }
        points += board.truth.len();
    }
    let path = std::env::temp_dir().join("kradan-rtrees-compare.yml.gz");
    forest.save(path.to_str().context("temp path is not UTF-8")?)?;
    println!(
        "RTrees (100 trees, depth 16): trained in {trained:.1} s, held-out accuracy {:.4}%, {:.2} ms per 361 points, {} bytes saved",
        100.0 * right as f64 / points as f64,
        read_time * 1000.0 / boards as f64,
        std::fs::metadata(&path)?.len()
    );
    Ok(())
}
