//! Trains the learned stone classifier on rendered boards and writes the model.
//!
//! `cargo run --release --bin train_stones -- --out models/stones.yml.gz [--seed S] [--boards N]`

use anyhow::Context;
use clap::Parser;
use kradan::reading::learned::{self, StoneModel, TrainParams};
use kradan::reading::synth;
use opencv::core;
use opencv::ml::{self, RTrees};
use opencv::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// Held-out boards come from their own seed range, far from any training seed.
const TEST_SEEDS: u64 = 0x7e57_0000_0000;
const CELL: i32 = 32;

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
        report(&StoneModel::load(&args.out)?, args.test_boards)?;
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
    let counts = (0..3).map(|c| train.labels.iter().filter(|&&l| l == c).count());
    println!(
        "rendered {} boards: {} samples (empty, black, white = {:?}) in {:.1} s",
        args.boards,
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
