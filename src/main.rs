//! The `kradan` command line: argument parsing only; the work is in the library.

use anyhow::Context;
use clap::{Parser, Subcommand};
use kradan::geometry::calibration::Calibration;
use kradan::reading::ReaderChoice;
use kradan::replay::Report;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kradan",
    version,
    about = "Keeps the record of a Go, Mak-hos or Makruk game and flags what a referee must know"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a game record (SGF for Go, PDN for Mak-hos, PGN for Makruk) move by move
    /// against the Thai rules.
    ///
    /// Exit status: 0 when every move is legal, 1 when the record holds illegal moves,
    /// 2 when the file cannot be read.
    Replay {
        /// The record: .sgf (Go), .pdn (Mak-hos) or .pgn (Makruk)
        file: PathBuf,
        /// Print JSON lines (one per problem, then a final summary) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Read the position of a Go board (or, with --game, a Mak-hos or Makruk board) from
    /// a photo.
    ///
    /// Prints N lines of N tokens (`.` `B` `W`); row 0 is the edge from corner 1 to
    /// corner 2. Exit status: 0 read, 2 unreadable input or bad options, 3 no board found.
    Detect {
        /// The photo (JPEG, PNG…)
        image: PathBuf,
        /// Lines per side (9, 13, 19); by default the locator decides, 19 with --corners.
        #[arg(long)]
        size: Option<usize>,
        /// The four outer intersections in the photo's pixels, as a viewer shows it:
        /// "x1,y1;x2,y2;x3,y3;x4,y4" (top-left, top-right, bottom-right, bottom-left).
        #[arg(long, allow_hyphen_values = true)]
        corners: Option<String>,
        /// A calibration file (corners for a fixed camera and/or camera intrinsics).
        #[arg(long)]
        calibration: Option<PathBuf>,
        /// Print one JSON object (rows, corners, homography, per-point probabilities,
        /// notes, timings) instead of the text grid.
        #[arg(long)]
        json: bool,
        /// Write pictures of the found lines, the fitted grid and each point's call here.
        #[arg(long)]
        debug_dir: Option<PathBuf>,
        /// Which cell reader: auto (the learned model, or the baseline when the model
        /// file is missing), learned, or baseline (colour statistics).
        #[arg(long, default_value = "auto")]
        reader: ReaderChoice,
        /// The game on the board: go, or makhos / makruk for an 8×8 board (8 lines of 8
        /// tokens, in the game's orientation when the start position or the colouring
        /// tells it, else in image order; `--json` says which).
        #[arg(long, default_value = "go")]
        game: String,
    },
    /// Score the 8×8 vision on rendered Mak-hos / Makruk clips (folders made by
    /// `kradan render … --frames`): boards found, squares right, boards exactly right,
    /// orientation, per game and style.
    EvalFrames {
        /// Clip folders, each with `truth.json` and `frames/`.
        #[arg(required = true)]
        clips: Vec<PathBuf>,
        /// Read every Nth frame with no hand over the board.
        #[arg(long, default_value_t = 1)]
        every: usize,
        /// Also judge each frame by the board's looks learned from the frames before it
        /// (with the truth as the record), as the recorder does.
        #[arg(long)]
        adapt: bool,
        /// Print every frame not read exactly right.
        #[arg(long)]
        verbose: bool,
    },
    /// Run detect over a manifest of photos with known positions (one JSON record per
    /// line: set, image relative to the manifest, size, truth rows) and report accuracy.
    EvalPhotos {
        manifest: PathBuf,
        #[arg(long)]
        json: bool,
        /// Also read each photo turned 25°, under magenta and green light, and dimmed,
        /// each variant reported as a set of its own.
        #[arg(long)]
        augment: bool,
        /// Which cell reader: auto (the learned model, or the baseline when the model
        /// file is missing), learned, or baseline (colour statistics).
        #[arg(long, default_value = "auto")]
        reader: ReaderChoice,
    },
    /// Calibrate a camera from photos of a printed chessboard and write the "camera" part
    /// of a calibration file (kept with the file's corners when it exists).
    CalibrateCamera {
        #[arg(required = true)]
        images: Vec<PathBuf>,
        /// Inner corners of the chessboard, columns x rows, e.g. 9x6.
        #[arg(long)]
        pattern: String,
        /// Side of one square in millimetres.
        #[arg(long)]
        square: f64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Measure where the ArUco markers beside a fixed board lie in its grid, from one photo
    /// in which the board is found, and save them in a calibration file (kept with any
    /// camera model already there); or, with --print, write the sheet of markers to print.
    ///
    /// Stick markers 0, 1, 2, 3 beside the top-left, top-right, bottom-right and
    /// bottom-left corners. Afterwards `kradan detect --calibration FILE` places the grid
    /// from the markers in every photo, however the camera or board moved.
    CalibrateMarkers {
        /// A photo of the board with the four markers (not needed with --print)
        #[arg(required_unless_present = "print")]
        image: Option<PathBuf>,
        /// Lines per side; by default the locator decides
        #[arg(long)]
        size: Option<usize>,
        /// The board's corners in the photo when the locator cannot find them (as for detect)
        #[arg(long)]
        corners: Option<String>,
        /// The calibration file to write (or the PNG sheet, with --print)
        #[arg(long)]
        out: PathBuf,
        /// Write the printable marker sheet to --out instead
        #[arg(long)]
        print: bool,
    },
    /// Film a game record with a virtual camera: writes DIR/footage.mp4 (or DIR/frames/)
    /// and DIR/truth.json with the camera pose, board corners, position and hands of every
    /// frame, each move's time, and every staged anomaly with its rule.
    ///
    /// The same seed gives the same clip. Exit status: 0 written, 2 bad record, options or
    /// output folder.
    Render {
        /// The record: .sgf (Go), .pdn (Mak-hos) or .pgn (Makruk)
        record: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// How much the seed may vary: varied (anything), clean (near top-down, even
        /// light, no accidents), hard (oblique, dim or coloured light, a bump).
        #[arg(long, value_enum, default_value = "varied")]
        style: kradan::render::scene::Style,
        /// Stage an anomaly at a move of the record, KIND@MOVE (repeatable), e.g.
        /// double-move@12. `--anomaly list` prints the kinds.
        #[arg(long = "anomaly")]
        anomalies: Vec<String>,
        /// Write numbered PNG frames to DIR/frames/ instead of a video.
        #[arg(long)]
        frames: bool,
        /// Picture size WxH (default: drawn from the seed among 640x480, 1280x720, 1920x1080).
        #[arg(long)]
        resolution: Option<String>,
        #[arg(long)]
        fps: Option<f64>,
        /// Camera angle from vertical in degrees (default: drawn from the seed).
        #[arg(long)]
        tilt: Option<f64>,
        /// Stop after this many seconds of footage.
        #[arg(long)]
        seconds: Option<f64>,
        /// Stop a second after this many moves are complete.
        #[arg(long)]
        moves: Option<usize>,
        /// h264 (footage.mp4, small) or mjpeg (footage.avi, large but fast to write).
        #[arg(long, value_enum, default_value = "h264")]
        codec: kradan::render::Codec,
    },
    /// Record a Go, Mak-hos or Makruk game from a video file, a folder of images, a stream
    /// URL or a camera: writes the record (DIR/game.sgf for Go, game.pdn for Mak-hos,
    /// game.pgn for Makruk), DIR/events.jsonl (hash-chained) and DIR/evidence/ as the game
    /// goes, flagging every irregularity with its rule.
    ///
    /// An 8×8 board (--game makhos|makruk) is found by itself, checkered or a plain grid,
    /// from either player's side, and turned to the game's rows by the start position;
    /// --size, --handicap, --komi, --passes and --reader are Go's and refused for it.
    ///
    /// A folder is read as stills, one observation per position (sorted naturally); with
    /// --fps as the frames of a video. Exit status: 0 recorded, 2 bad input (options,
    /// source, output folder; a video that breaks part-way is recorded up to the break
    /// first), 3 no board found.
    Record {
        /// A video file, a folder of images, rtsp://… or http://… , or camera:N
        source: String,
        /// The record folder (created; an existing record is continued only with --resume)
        #[arg(long)]
        out: PathBuf,
        /// The game on the board: go, makhos or makruk.
        #[arg(long, default_value = "go")]
        game: kradan::recorder::RecordedGame,
        /// Go: lines per side (9, 13, 19); by default the board found decides.
        #[arg(long)]
        size: Option<usize>,
        /// Go: handicap stones on the fixed star points; White then plays first [default: 0].
        #[arg(long)]
        handicap: Option<usize>,
        /// Go: komi [default: 6.5].
        #[arg(long)]
        komi: Option<f64>,
        /// Who plays first: black or white (Go: Black, or White after handicap; Mak-hos
        /// and Makruk: White).
        #[arg(long)]
        first: Option<String>,
        /// A calibration file (fixed corners and/or camera model).
        #[arg(long)]
        calibration: Option<PathBuf>,
        /// Read a folder of images as video frames at this rate.
        #[arg(long)]
        fps: Option<f64>,
        /// Go: passes entered by an operator: lines "SECONDS black|white".
        #[arg(long)]
        passes: Option<PathBuf>,
        /// Mak-hos or Makruk: the position the game starts from, for a camera started
        /// mid-game (PDN FEN such as "W:W21,22,K30:B1-3" for Mak-hos, a Makruk FEN as
        /// Fairy-Stockfish writes it); the recording waits until the board shows it.
        #[arg(long)]
        fen: Option<String>,
        /// Continue the record in --out after a stop or crash.
        #[arg(long)]
        resume: bool,
        /// Looks at the board per second of footage.
        #[arg(long, default_value_t = kradan::recorder::DEFAULT_RATE)]
        rate: f64,
        /// Go: which cell reader: both (the learned model checked by the colour baseline:
        /// measured best on rendered footage in dim and coloured light), auto, learned or
        /// baseline [default: both].
        #[arg(long)]
        reader: Option<ReaderChoice>,
        /// No progress line on stderr.
        #[arg(long)]
        quiet: bool,
    },
    /// Count a recorded Go game (TGA 13) with the stones the operator marks dead, and
    /// write the result into the record (an event in the chain, RE in game.sgf).
    Score {
        /// The record folder written by kradan record
        dir: PathBuf,
        /// Dead stones as SGF points in the record's frame, e.g. "dd,pq" (none by default)
        #[arg(long, default_value = "")]
        dead: String,
        /// thai (territory + prisoners, TGA 13) or area (stones + territory)
        #[arg(long, default_value = "thai")]
        counting: String,
    },
    /// Measure `kradan record` on rendered games: render N games (GNU Go self-play; with
    /// --game, Mak-hos from our engine or Makruk by Fairy-Stockfish; varied cameras and
    /// light, staged anomalies and bumps) into DIR, or read the games already there, record
    /// each, and score moves, games, flags and latency against the truth.
    ///
    /// Exit status: 0 it ran (whatever the figures), 2 bad input.
    EvalFootage {
        dir: PathBuf,
        /// Games to make (default 50), or the most to read.
        #[arg(long)]
        games: Option<usize>,
        /// The first seed (see docs/eval-footage.md for which seeds are held out).
        #[arg(long, default_value_t = 1)]
        seed_base: u64,
        /// The game to make: go, makhos or makruk.
        #[arg(long, default_value = "go")]
        game: String,
        /// Go board sizes, taken in turn: "9,19".
        #[arg(long, default_value = "9,19")]
        sizes: String,
        /// The share of games with staged anomalies.
        #[arg(long, default_value_t = 0.5)]
        anomalies: f64,
        /// Keep the rendered footage.
        #[arg(long)]
        keep: bool,
        #[arg(long)]
        json: bool,
        /// The recorder program (default: this kradan).
        #[arg(long)]
        recorder: Option<PathBuf>,
        /// Games evaluated at once (more than one spoils the speed figures).
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Moves per game, instead of drawn from the seed.
        #[arg(long)]
        moves: Option<usize>,
        /// Picture size WxH, instead of drawn from the seed.
        #[arg(long)]
        resolution: Option<String>,
        #[arg(long)]
        fps: Option<f64>,
        /// mjpeg (fast to render) or h264 (what cameras' software writes).
        #[arg(long, value_enum, default_value = "mjpeg")]
        codec: kradan::render::Codec,
    },
    /// Report the versions of the libraries and peer programs Kradan relies on.
    Doctor,
    /// Check a record folder's event log: every line chained by SHA-256 to the one before,
    /// events.head, and every evidence file (docs/record.md).
    ///
    /// Exit status: 0 intact, 1 broken (the first line that is not as written), 2 the
    /// folder or its events.jsonl cannot be read.
    Verify {
        /// The record folder (holding events.jsonl)
        dir: PathBuf,
        /// Print the report as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// List the cameras (V4L2, through nokhwa) with the picture formats each offers; each
    /// is a record source as camera:N.
    ///
    /// Exit status: 0 listed, 2 no camera on this machine.
    Cameras {
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Record the boards of an event file live and serve them: a broadcast overlay per
    /// board (/overlay/BOARD), the referee desk (/referee), JSON at /api (docs/serve.md).
    ///
    /// Exit status: 0 stopped by Ctrl-C or SIGTERM, 2 bad input (event file, token,
    /// address in use), 4 the server failed.
    Serve {
        /// Address to listen on; only this machine unless told otherwise.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
        /// The boards (TOML or JSON): name, game, source, size, players. None: an empty hall
        /// serving the games already stored.
        #[arg(long)]
        event: Option<PathBuf>,
        /// Where the games are stored (SQLite) beside each board's record folder.
        #[arg(long, default_value = "kradan-serve")]
        data: PathBuf,
        /// The referee's token for actions (Authorization: Bearer TOKEN); made up and
        /// printed when not given. Also read from KRADAN_TOKEN.
        #[arg(long, env = "KRADAN_TOKEN")]
        token: Option<String>,
    },
}

const EXIT_ILLEGAL: u8 = 1;
const EXIT_UNREADABLE: u8 = 2;

/// A pipe closed by its reader (`kradan record … | head`) ends the process as it ends `cat`,
/// instead of a panic in `println!`. What is recorded is already on disk: records and logs
/// are flushed as they are written. `serve` keeps Rust's default (SIGPIPE ignored), so a
/// browser that hangs up is an error on one socket, not the end of the server.
fn end_quietly_when_the_reader_goes_away() {
    // SAFETY: called once at start-up, before any thread exists; it only resets the
    // disposition of SIGPIPE to the system default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Serve { .. }) {
        end_quietly_when_the_reader_goes_away();
    }
    match cli.command {
        Command::Replay { file, json } => match replay(&file) {
            Ok(report) => {
                let mut out = std::io::stdout().lock();
                let written = if json {
                    report.write_json_lines(&mut out)
                } else {
                    report.write_text(&mut out)
                };
                if let Err(error) = written.and_then(|()| out.flush()) {
                    eprintln!("kradan: cannot write the report: {error}");
                    return ExitCode::from(EXIT_UNREADABLE);
                }
                if report.has_illegal_moves() {
                    ExitCode::from(EXIT_ILLEGAL)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::Detect {
            image,
            size,
            corners,
            calibration,
            json,
            debug_dir,
            reader,
            game,
        } => match game.as_str() {
            "go" => detect(image, size, corners, calibration, json, debug_dir, reader),
            other => match other.parse::<kradan::geometry::eight::EightGame>() {
                Ok(game) => detect_eight(
                    image,
                    game,
                    kradan::detect::DetectOptions {
                        size,
                        corners: None,
                        calibration,
                        debug_dir,
                        reader,
                    },
                    corners,
                    json,
                ),
                Err(message) => {
                    eprintln!("kradan: --game: {message}");
                    ExitCode::from(EXIT_UNREADABLE)
                }
            },
        },
        Command::EvalFrames {
            clips,
            every,
            adapt,
            verbose,
        } => match kradan::eval_eight::eval_frames(&clips, every, adapt, verbose) {
            Ok(table) => print_or_exit(&table),
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::EvalPhotos {
            manifest,
            json,
            augment,
            reader,
        } => match kradan::reading::Reader::load(reader).and_then(|(reader, note)| {
            if let Some(note) = note {
                eprintln!("kradan: {note}");
            }
            eprintln!("kradan: reading with the {} reader", reader.name());
            kradan::eval::evaluate(&manifest, &reader, augment)
        }) {
            Ok(results) => {
                if json {
                    print_or_exit(&format!("{}\n", kradan::eval::report_json(&results)))
                } else {
                    print_or_exit(&kradan::eval::report_text(&results))
                }
            }
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::CalibrateCamera {
            images,
            pattern,
            square,
            out,
        } => match calibrate_camera(&images, &pattern, square, &out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::CalibrateMarkers {
            image,
            size,
            corners,
            out,
            print,
        } => {
            let done = if print {
                print_markers(&out)
            } else {
                calibrate_markers(image.as_deref(), size, corners.as_deref(), &out)
            };
            match done {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("kradan: {error:#}");
                    ExitCode::from(EXIT_UNREADABLE)
                }
            }
        }
        Command::Render {
            record,
            out,
            seed,
            style,
            anomalies,
            frames,
            resolution,
            fps,
            tilt,
            seconds,
            moves,
            codec,
        } => match render(
            &record,
            &out,
            seed,
            style,
            &anomalies,
            frames,
            resolution,
            fps,
            tilt,
            (seconds, moves),
            codec,
        ) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("kradan: {error:#}");
                ExitCode::from(EXIT_UNREADABLE)
            }
        },
        Command::Doctor => {
            doctor();
            ExitCode::SUCCESS
        }
        Command::Verify { dir, json } => verify(&dir, json),
        Command::Cameras { json } => cameras(json),
        Command::Serve {
            listen,
            event,
            data,
            token,
        } => match kradan::serve::serve(kradan::serve::ServeOptions {
            listen,
            event,
            data,
            token,
        }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("kradan serve: {error}");
                ExitCode::from(error.exit_code())
            }
        },
        Command::Record {
            source,
            out,
            game,
            size,
            handicap,
            komi,
            first,
            calibration,
            fps,
            passes,
            fen,
            resume,
            rate,
            reader,
            quiet,
        } => {
            let first = match first.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None => None,
                Some("black") => Some(kradan::games::Color::Black),
                Some("white") => Some(kradan::games::Color::White),
                Some(other) => {
                    eprintln!("kradan: --first {other:?}: expected black or white");
                    return ExitCode::from(EXIT_UNREADABLE);
                }
            };
            let defaults = kradan::recorder::RecordOptions::new(source.clone(), out.clone());
            let options = kradan::recorder::RecordOptions {
                game,
                size,
                handicap: handicap.unwrap_or(defaults.handicap),
                komi: komi.unwrap_or(defaults.komi),
                first,
                calibration,
                fps,
                passes,
                fen,
                resume,
                rate,
                reader: reader.unwrap_or(defaults.reader),
                progress: !quiet,
                ..defaults
            };
            record(&options)
        }
        Command::Score {
            dir,
            dead,
            counting,
        } => score(&dir, &dead, &counting),
        Command::EvalFootage {
            dir,
            games,
            seed_base,
            game,
            sizes,
            anomalies,
            keep,
            json,
            recorder,
            jobs,
            moves,
            resolution,
            fps,
            codec,
        } => {
            use kradan::footage_eval::{EvalOptions, parse_resolution, parse_sizes};
            let parsed = parse_sizes(&sizes).and_then(|sizes| {
                let resolution = resolution.as_deref().map(parse_resolution).transpose()?;
                let game = kradan::footage_eval::eight::parse_game(&game)?;
                Ok((sizes, resolution, game))
            });
            let (sizes, resolution, game) = match parsed {
                Ok(parsed) => parsed,
                Err(error) => {
                    eprintln!("kradan: {error:#}");
                    return ExitCode::from(EXIT_UNREADABLE);
                }
            };
            let mut options = EvalOptions::new(dir);
            options.games = games;
            options.seed_base = seed_base;
            options.game = game;
            options.sizes = sizes;
            options.anomaly_rate = anomalies;
            options.keep = keep;
            options.json = json;
            options.jobs = jobs;
            options.overrides.moves = moves;
            options.overrides.resolution = resolution;
            options.overrides.fps = fps;
            options.codec = codec;
            if let Some(recorder) = recorder {
                options.recorder = recorder;
            }
            match kradan::footage_eval::run(&options, &mut std::io::stdout().lock()) {
                Ok(_) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("kradan: {error:#}");
                    ExitCode::from(EXIT_UNREADABLE)
                }
            }
        }
    }
}

fn score(dir: &Path, dead: &str, counting: &str) -> ExitCode {
    use kradan::games::go::{Point, scoring::Counting};
    let counting = match counting {
        "thai" => Counting::Thai,
        "area" => Counting::Area,
        other => {
            eprintln!("kradan: --counting {other:?}: expected thai or area");
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    let mut points = Vec::new();
    for text in dead.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let bytes = text.as_bytes();
        if bytes.len() != 2 || !bytes.iter().all(u8::is_ascii_lowercase) {
            eprintln!("kradan: --dead {text:?}: expected SGF points like dd,pq");
            return ExitCode::from(EXIT_UNREADABLE);
        }
        points.push(Point::new(bytes[1] - b'a', bytes[0] - b'a'));
    }
    match kradan::recorder::score(dir, &points, counting) {
        Ok(scored) => {
            println!("{}", scored.result);
            println!(
                "black {} (territory {}, prisoners {}), white {} (territory {}, prisoners {}, komi {})",
                scored.score.black.total,
                scored.score.black.territory,
                scored.score.black.prisoners,
                scored.score.white.total,
                scored.score.white.territory,
                scored.score.white.prisoners,
                scored.score.komi
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("kradan: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

fn record(options: &kradan::recorder::RecordOptions) -> ExitCode {
    // The progress line on a terminal is redrawn in place: clear it before a move's line.
    let clear = options.progress && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut print = |line: &str| {
        if clear {
            eprint!("\r\x1b[K");
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    match kradan::recorder::record(options, &mut print) {
        Ok(summary) => {
            println!(
                "recorded {} moves and {} flags from {:.1} s of footage in {:.1} s ({} frames, {} looked at) into {}",
                summary.moves,
                summary.flags,
                summary.source_seconds,
                summary.wall_seconds,
                summary.frames,
                summary.analysed,
                options.out.display()
            );
            for row in &summary.final_rows {
                println!("{row}");
            }
            if let Some(score) = &summary.score {
                println!("score with no stones marked dead (Thai, TGA 13): {score}");
            }
            match &summary.broken {
                Some(reason) => {
                    eprintln!("kradan: {reason}; everything before it was recorded");
                    ExitCode::from(EXIT_UNREADABLE)
                }
                None => ExitCode::SUCCESS,
            }
        }
        Err(error) => {
            eprintln!("kradan: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

fn detect(
    image: PathBuf,
    size: Option<usize>,
    corners: Option<String>,
    calibration: Option<PathBuf>,
    json: bool,
    debug_dir: Option<PathBuf>,
    reader: ReaderChoice,
) -> ExitCode {
    let corners = match corners
        .as_deref()
        .map(kradan::detect::parse_corners)
        .transpose()
    {
        Ok(corners) => corners,
        Err(message) => {
            eprintln!("kradan: {message}");
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    let options = kradan::detect::DetectOptions {
        size,
        corners,
        calibration,
        debug_dir,
        reader,
    };
    match kradan::detect::detect(&image, &options) {
        Ok(detection) => {
            let text = if json {
                format!("{}\n", detection.to_json())
            } else {
                detection.occupancy.to_text_rows().join("\n") + "\n"
            };
            print_or_exit(&text)
        }
        Err(error) => detect_failed(&error),
    }
}

fn detect_eight(
    image: PathBuf,
    game: kradan::geometry::eight::EightGame,
    mut options: kradan::detect::DetectOptions,
    corners: Option<String>,
    json: bool,
) -> ExitCode {
    match corners
        .as_deref()
        .map(kradan::detect::parse_corners)
        .transpose()
    {
        Ok(corners) => options.corners = corners,
        Err(message) => {
            eprintln!("kradan: {message}");
            return ExitCode::from(EXIT_UNREADABLE);
        }
    }
    match kradan::detect_eight::detect(&image, &options, game) {
        Ok(detection) => {
            let text = if json {
                format!("{}\n", detection.to_json())
            } else {
                detection.rows().to_text_rows().join("\n") + "\n"
            };
            print_or_exit(&text)
        }
        Err(error) => detect_failed(&error),
    }
}

/// Says why a photo was not read (with the locator's reasons when no board was found)
/// and gives the exit status.
fn detect_failed(error: &kradan::detect::DetectError) -> ExitCode {
    eprintln!("kradan: {error}");
    if let kradan::detect::DetectError::NoBoard { notes, .. } = error {
        for note in notes {
            eprintln!("  {note}");
        }
    }
    ExitCode::from(error.exit_code())
}

/// Writes to stdout without panicking when the reader has gone (`kradan detect … | head`).
fn print_or_exit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("kradan: cannot write the output: {error}");
            ExitCode::from(EXIT_UNREADABLE)
        }
    }
}

fn calibrate_camera(
    images: &[PathBuf],
    pattern: &str,
    square: f64,
    out: &Path,
) -> anyhow::Result<()> {
    use kradan::geometry::calibration::calibrate_camera;
    let parsed = pattern
        .split_once(['x', 'X', '×'])
        .and_then(|(c, r)| Some((c.trim().parse::<i32>().ok()?, r.trim().parse::<i32>().ok()?)))
        .filter(|&(c, r)| c >= 2 && r >= 2);
    let Some(pattern) = parsed else {
        anyhow::bail!("--pattern {pattern:?}: expected the inner corners as COLSxROWS, e.g. 9x6");
    };
    if !(square.is_finite() && square > 0.0) {
        anyhow::bail!("--square {square}: expected the side of a square in millimetres");
    }
    let mut photos = Vec::new();
    for path in images {
        let loaded = kradan::source::image::load(path)?;
        if loaded.scale != 1.0 {
            anyhow::bail!(
                "{}: too large to calibrate at full resolution",
                path.display()
            );
        }
        photos.push((path.display().to_string(), loaded.image));
    }
    let (camera, image_size, notes) = calibrate_camera(&photos, pattern, square)?;
    for note in &notes {
        eprintln!("kradan: {note}");
    }
    // Keep the corners of an existing file: the camera is recalibrated, the board has not moved.
    let mut calibration = if out.exists() {
        Calibration::load(out)?
    } else {
        Calibration::default()
    };
    if calibration.image_size.is_some_and(|s| s != image_size) && calibration.corners.is_some() {
        anyhow::bail!(
            "{}: its corners are for another image size than these photos ({}×{})",
            out.display(),
            image_size[0],
            image_size[1]
        );
    }
    let rms = camera.rms_error.unwrap_or(0.0);
    calibration.image_size = Some(image_size);
    calibration.camera = Some(camera);
    calibration.save(out)?;
    println!(
        "{}: camera calibrated from {} photo(s), reprojection error {rms:.3} px",
        out.display(),
        photos.len() - notes.len()
    );
    Ok(())
}

fn replay(file: &Path) -> anyhow::Result<Report> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    // Old records are often in a legacy code page; the moves are ASCII either way, so a
    // lossy decoding only blurs names and comments.
    let text = String::from_utf8_lossy(&bytes);
    let extension = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let report = match extension.as_deref() {
        Some("sgf") => kradan::games::go::replay::replay(&text),
        Some("pdn") => kradan::games::makhos::replay(&text),
        Some("pgn") => kradan::games::makruk::replay(&text),
        _ => anyhow::bail!(
            "{}: unknown record type (expected .sgf for Go, .pdn for Mak-hos, .pgn for Makruk)",
            file.display()
        ),
    };
    report.with_context(|| format!("{} is not a readable record", file.display()))
}

fn doctor() {
    println!("kradan {}", env!("CARGO_PKG_VERSION"));
    match opencv::core::get_version_string() {
        Ok(version) => println!("OpenCV {version}"),
        Err(error) => println!("OpenCV: not usable ({error})"),
    }
    for peer in ["gnugo", "fairy-stockfish"] {
        match kradan::peers::locate(peer) {
            Some(path) => println!("{peer}: {}", path.display()),
            None => println!(
                "{peer}: not installed (apt-get install {peer}); the cross-check tests need it"
            ),
        }
    }
}

fn print_markers(out: &Path) -> anyhow::Result<()> {
    let sheet = kradan::geometry::markers::sheet(400)?;
    let written = opencv::imgcodecs::imwrite_def(out.as_os_str(), &sheet)?;
    anyhow::ensure!(written, "cannot write {}", out.display());
    println!(
        "{}: markers 0-3 (ArUco DICT_4X4_50); print, cut apart and stick beside the corners",
        out.display()
    );
    Ok(())
}

fn calibrate_markers(
    image: Option<&Path>,
    size: Option<usize>,
    corners: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
    use kradan::geometry::markers::{self, MarkerLayout};
    let image = image.context("a photo of the board with its markers is needed")?;
    let corners = corners
        .map(kradan::detect::parse_corners)
        .transpose()
        .map_err(|message| anyhow::anyhow!(message))?;
    let options = kradan::detect::DetectOptions {
        size,
        corners,
        calibration: None,
        debug_dir: None,
        reader: ReaderChoice::Baseline,
    };
    let detection = kradan::detect::detect(image, &options)?;
    let loaded = kradan::source::image::load(image)?;
    let found: std::collections::BTreeMap<i32, [f64; 2]> = markers::detect(&loaded.image)?
        .into_iter()
        .map(|(id, [x, y])| (id, [x * loaded.scale, y * loaded.scale]))
        .collect();
    anyhow::ensure!(
        found.len() >= 4,
        "{} ArUco marker(s) found in {}; 4 are needed (ids 0-3 of DICT_4X4_50: `kradan calibrate-markers --print --out sheet.png`)",
        found.len(),
        image.display()
    );
    let layout = MarkerLayout::measure(&detection.geometry, &found)
        .context("the board's grid cannot be inverted")?;
    let mut calibration = if out.exists() {
        Calibration::load(out)?
    } else {
        Calibration::default()
    };
    calibration.size = Some(detection.geometry.size);
    calibration.markers = Some(layout);
    calibration.save(out)?;
    println!(
        "{}: {} markers placed around the {}x{} grid",
        out.display(),
        found.len(),
        detection.geometry.size,
        detection.geometry.size
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn render(
    record: &Path,
    out: &Path,
    seed: u64,
    style: kradan::render::scene::Style,
    anomalies: &[String],
    frames: bool,
    resolution: Option<String>,
    fps: Option<f64>,
    tilt: Option<f64>,
    (seconds, moves): (Option<f64>, Option<usize>),
    codec: kradan::render::Codec,
) -> anyhow::Result<()> {
    use kradan::render::{self, RenderOptions};
    if anomalies.iter().any(|a| a == "list") {
        println!("Go anomalies (KIND@MOVE):");
        for (kind, what) in render::go::KINDS {
            println!("  {kind:14} {what}");
        }
        println!("Mak-hos and Makruk anomalies (KIND@MOVE):");
        for (kind, what) in render::eight::KINDS {
            println!("  {kind:14} {what}");
        }
        return Ok(());
    }
    let resolution = resolution
        .map(|r| {
            r.split_once(['x', 'X'])
                .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
                .filter(|&(w, h)| (160..=4096).contains(&w) && (120..=4096).contains(&h))
                .ok_or_else(|| anyhow::anyhow!("--resolution {r:?}: expected WxH, e.g. 1280x720"))
        })
        .transpose()?;
    if let Some(f) = fps
        && !(1.0..=120.0).contains(&f)
    {
        anyhow::bail!("--fps {f}: expected 1 to 120");
    }
    if let Some(t) = tilt
        && !(0.0..=60.0).contains(&t)
    {
        anyhow::bail!("--tilt {t}: expected 0 to 60 degrees from vertical");
    }
    let options = RenderOptions {
        seed,
        style,
        anomalies: anomalies
            .iter()
            .map(|a| {
                a.parse()
                    .map_err(|e: String| anyhow::anyhow!("--anomaly {e}"))
            })
            .collect::<anyhow::Result<_>>()?,
        frames,
        scene: kradan::render::scene::SceneRequest {
            resolution,
            fps,
            tilt,
        },
        limit_seconds: seconds,
        limit_moves: moves,
        codec,
        ..RenderOptions::default()
    };
    let started = std::time::Instant::now();
    let mut shown = 0;
    let rendered = render::render(record, out, &options, |done, all| {
        let percent = done * 100 / all.max(1);
        if percent >= shown + 10 || done == all {
            shown = percent;
            eprint!("\rkradan: rendering {done}/{all} frames ({percent} %)");
        }
    })?;
    eprintln!();
    println!(
        "{} frames ({:.1} s of footage, {} moves, {} anomalies) in {:.1} s: {} and {}",
        rendered.frames,
        rendered.duration,
        rendered.moves,
        rendered.anomalies,
        started.elapsed().as_secs_f64(),
        rendered.video.display(),
        rendered.truth.display()
    );
    println!("the last frame shows:");
    for row in &rendered.last_position {
        println!("{row}");
    }
    Ok(())
}

/// `kradan verify DIR`: 0 intact, 1 broken, 2 unreadable.
fn verify(dir: &Path, json: bool) -> ExitCode {
    let report = match kradan::record::verify(dir) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("kradan: {error}");
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    let text = if json {
        format!("{}\n", report.to_json())
    } else {
        report.to_text()
    };
    let printed = print_or_exit(&text);
    if printed != ExitCode::SUCCESS || report.intact {
        printed
    } else {
        ExitCode::from(EXIT_ILLEGAL)
    }
}

fn cameras(json: bool) -> ExitCode {
    let listed = match kradan::source::camera::list_cameras() {
        Ok(listed) => listed,
        Err(error) => {
            eprintln!("kradan cameras: {error}");
            return ExitCode::from(EXIT_UNREADABLE);
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&listed).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    for camera in &listed {
        match &camera.error {
            None => {
                println!(
                    "camera:{} {} ({})",
                    camera.index, camera.device, camera.name
                );
                for format in &camera.formats {
                    println!("    {format}");
                }
            }
            Some(why) => println!(
                "camera:{} {}: cannot be asked for its formats: {why}",
                camera.index, camera.device
            ),
        }
    }
    ExitCode::SUCCESS
}
