//! Cross-check of the Go rules engine against GNU Go, a rules implementation nobody here
//! wrote: random games on 9×9, 13×13 and 19×19 played on both boards at once, with the
//! stones, prisoners and legality of moves compared after every move.

mod common;
mod gtp_support;

use gtp_support::{Gtp, fighting_move, gtp_color, gtp_vertex, parse_points};
use kradan::games::Color;
use kradan::games::go::{Illegal, Move, Point, Position, handicap_points};
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

const SIZES: [usize; 3] = [9, 13, 19];
const GAMES_PER_SIZE: u64 = 100;
const MAX_MOVES: usize = 400;
const SEED: u64 = 0x4b52_4144_414e;
/// The full legal-move sets are compared this often, and after every single-stone capture
/// (which may have made a ko); in between, a handful of chosen points are probed, which
/// keeps 300 games to half a minute.
const ALL_LEGAL_EVERY: usize = 8;

/// What a run exercised, so that it cannot pass without meeting the cases it is for.
#[derive(Default)]
struct Stats {
    games: u64,
    handicap_games: u64,
    moves: u64,
    passes: u64,
    point_queries: u64,
    full_board_checks: u64,
    capturing_moves: u64,
    stones_captured: u64,
    ko_captures: u64,
    ko_refusals: u64,
    suicide_refusals: u64,
    illegal_plays_refused: u64,
    out_of_turn: u64,
}

impl Stats {
    fn merge(&mut self, other: &Stats) {
        self.games += other.games;
        self.handicap_games += other.handicap_games;
        self.moves += other.moves;
        self.passes += other.passes;
        self.point_queries += other.point_queries;
        self.full_board_checks += other.full_board_checks;
        self.capturing_moves += other.capturing_moves;
        self.stones_captured += other.stones_captured;
        self.ko_captures += other.ko_captures;
        self.ko_refusals += other.ko_refusals;
        self.suicide_refusals += other.suicide_refusals;
        self.illegal_plays_refused += other.illegal_plays_refused;
        self.out_of_turn += other.out_of_turn;
    }
}

struct Game<'a> {
    gtp: &'a mut Gtp,
    stats: &'a mut Stats,
    size: usize,
    seed: u64,
    rng: SmallRng,
    handicap: usize,
    position: Position,
    history: Vec<String>,
}

impl Game<'_> {
    /// Stops the run with everything needed to replay the case by hand: seed, move number,
    /// both boards and the moves so far in GTP form.
    fn fail(&mut self, what: &str) -> ! {
        let theirs = self.gtp.ask("showboard").unwrap_or_else(|e| e);
        panic!(
            "{size}×{size} game with seed {seed:#x}, after move {number}: {what}\n\
             Kradan's board ({to_move} to move, ko {ko:?}):\n{ours}\
             GNU Go's board:\n{theirs}\n\
             moves (GTP, after fixed_handicap {handicap}): {moves}",
            size = self.size,
            seed = self.seed,
            handicap = self.handicap,
            number = self.history.len(),
            to_move = self.position.to_move(),
            ko = [Color::Black, Color::White]
                .map(|c| self.position.ko_point(c).map(|p| p.to_gtp(self.size))),
            ours = self.render(),
            moves = self.history.join(" "),
        )
    }

    fn render(&self) -> String {
        let letters: String = (0..self.size as u8)
            .map(|col| format!(" {}", &Point::new(0, col).to_gtp(self.size)[..1]))
            .collect();
        let mut text = format!("   {letters}\n");
        for row in 0..self.size as u8 {
            let _ = write!(text, "{:>2} ", self.size - row as usize);
            for col in 0..self.size as u8 {
                text.push(' ');
                text.push(match self.position.board().get(Point::new(row, col)) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                });
            }
            text.push('\n');
        }
        text
    }

    fn empty_points(&self) -> Vec<Point> {
        let board = self.position.board();
        board.points().filter(|&p| board.get(p).is_none()).collect()
    }

    /// Points that are illegal for someone when they are illegal at all: where the last
    /// move took a single stone (the ko point, if it is a ko: found without asking our ko
    /// rule, which is under test), and empty points with no empty neighbour (eyes and the
    /// suicide points among them), plus a few points anywhere, occupied ones included.
    fn probe_points(&mut self, single_capture: Option<Point>) -> Vec<Point> {
        let board = self.position.board();
        let mut points: Vec<Point> = single_capture.into_iter().collect();
        let enclosed: Vec<Point> = board
            .points()
            .filter(|&p| {
                board.get(p).is_none() && board.neighbors(p).all(|n| board.get(n).is_some())
            })
            .collect();
        points.extend(enclosed.choose_multiple(&mut self.rng, 3));
        let all: Vec<Point> = board.points().collect();
        points.extend(all.choose_multiple(&mut self.rng, 3));
        points.sort();
        points.dedup();
        points
    }

    /// Compares our judgement of `points` for both colours with GNU Go's `is_legal`, and
    /// returns the points that both find illegal for the side to move.
    fn compare_legality(&mut self, points: &[Point]) -> Vec<Point> {
        let queries: Vec<(Color, Point)> = points
            .iter()
            .flat_map(|&p| [(Color::Black, p), (Color::White, p)])
            .collect();
        let commands: Vec<String> = queries
            .iter()
            .map(|&(c, p)| format!("is_legal {} {}", gtp_color(c), p.to_gtp(self.size)))
            .collect();
        let answers = self.gtp.batch(&commands);
        let mut refused = Vec::new();
        for (&(color, point), answer) in queries.iter().zip(answers) {
            self.stats.point_queries += 1;
            let theirs = answer.unwrap_or_else(|e| panic!("is_legal failed: {e}")) == "1";
            let ours = self.position.judge(color, Move::Play(point));
            if ours.is_ok() != theirs {
                self.fail(&format!(
                    "{color} at {}: Kradan says {ours:?}, GNU Go's is_legal says {theirs}",
                    point.to_gtp(self.size)
                ));
            }
            match ours {
                Err(Illegal::Ko) => self.stats.ko_refusals += 1,
                Err(Illegal::Suicide) => self.stats.suicide_refusals += 1,
                _ => {}
            }
            if ours.is_err() && color == self.position.to_move() {
                refused.push(point);
            }
        }
        refused
    }

    /// Compares the whole set of legal points for both colours with GNU Go's `all_legal`.
    fn compare_all_legal(&mut self) {
        self.stats.full_board_checks += 1;
        let commands = ["all_legal black".to_string(), "all_legal white".to_string()];
        let answers = self.gtp.batch(&commands);
        for (color, answer) in [Color::Black, Color::White].into_iter().zip(answers) {
            let theirs = parse_points(&answer.expect("all_legal"), self.size);
            let ours: BTreeSet<Point> = self
                .empty_points()
                .into_iter()
                .filter(|&p| self.position.judge(color, Move::Play(p)).is_ok())
                .collect();
            if ours != theirs {
                let show = |set: &BTreeSet<Point>| {
                    set.iter()
                        .map(|p| p.to_gtp(self.size))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                self.fail(&format!(
                    "legal points for {color} differ: only Kradan allows [{}], only GNU Go allows [{}]",
                    show(&ours.difference(&theirs).copied().collect()),
                    show(&theirs.difference(&ours).copied().collect()),
                ));
            }
        }
    }

    /// Compares the stones of both colours and the prisoners each has taken.
    fn compare_positions(&mut self, answers: &[Result<String, String>]) {
        for (i, color) in [Color::Black, Color::White].into_iter().enumerate() {
            let theirs = parse_points(answers[i].as_ref().expect("list_stones"), self.size);
            let ours: BTreeSet<Point> = self.position.board().stones(color).collect();
            if ours != theirs {
                self.fail(&format!("{color} stones differ"));
            }
            let prisoners: u32 = answers[2 + i]
                .as_ref()
                .expect("captures")
                .parse()
                .expect("a number of captures");
            if prisoners != self.position.prisoners(color) {
                self.fail(&format!(
                    "{color} has taken {} prisoners for Kradan, {prisoners} for GNU Go",
                    self.position.prisoners(color)
                ));
            }
        }
    }

    /// Tries to play a move both sides have just found illegal, on both boards: both must
    /// refuse it, and leave the position as it was (checked by the next comparison).
    fn attempt_illegal(&mut self, point: Point) {
        let color = self.position.to_move();
        let before = self.position.board().clone();
        let ours = self.position.play(color, Move::Play(point));
        let theirs = self.gtp.ask(&format!(
            "play {} {}",
            gtp_color(color),
            point.to_gtp(self.size)
        ));
        if ours.is_ok() || theirs.is_ok() || *self.position.board() != before {
            self.fail(&format!(
                "{color} playing the illegal {}: Kradan {ours:?}, GNU Go {theirs:?}",
                point.to_gtp(self.size)
            ));
        }
        self.stats.illegal_plays_refused += 1;
    }

    fn play(&mut self) {
        let mut recent: Vec<Point> = Vec::new();
        let mut single_capture = None;
        while self.history.len() < MAX_MOVES && !self.position.play_has_ended() {
            let probes = self.probe_points(single_capture);
            let refused = self.compare_legality(&probes);
            if self.history.len().is_multiple_of(ALL_LEGAL_EVERY) || single_capture.is_some() {
                self.compare_all_legal();
            }
            if !refused.is_empty() && self.rng.random_bool(0.2) {
                let point = *refused.choose(&mut self.rng).expect("not empty");
                self.attempt_illegal(point);
            }

            // Now and then the side that just moved moves again, as a recorder may see it
            // do: the engine judges whatever colour it is told, and so does GNU Go.
            let color = if self.rng.random_bool(0.01) {
                self.stats.out_of_turn += 1;
                self.position.to_move().opponent()
            } else {
                self.position.to_move()
            };
            let mv = fighting_move(&mut self.rng, &self.position, color, &recent);
            let text = gtp_vertex(mv, self.size);
            self.history.push(format!("{} {text}", color.letter()));
            let played = match self.position.play(color, mv) {
                Ok(played) => played,
                Err(e) => self.fail(&format!("Kradan refuses its own chosen move: {e}")),
            };
            let answers = self.gtp.batch(&[
                format!("play {} {text}", gtp_color(color)),
                "list_stones black".to_string(),
                "list_stones white".to_string(),
                "captures black".to_string(),
                "captures white".to_string(),
            ]);
            if let Err(e) = &answers[0] {
                self.fail(&format!("GNU Go refuses {text}, which Kradan allowed: {e}"));
            }
            self.compare_positions(&answers[1..]);

            match mv {
                Move::Play(point) => {
                    self.stats.moves += 1;
                    recent.insert(0, point);
                    recent.truncate(2);
                }
                Move::Pass => self.stats.passes += 1,
            }
            single_capture = match played.captured[..] {
                [stone] => Some(stone),
                _ => None,
            };
            if !played.captured.is_empty() {
                self.stats.capturing_moves += 1;
                self.stats.stones_captured += played.captured.len() as u64;
            }
            if self.position.ko_point(color.opponent()).is_some() {
                self.stats.ko_captures += 1;
            }
        }
    }
}

/// Plays this board size's share of the games on one GNU Go process.
fn play_games(program: &Path, size: usize) -> Stats {
    let mut gtp = Gtp::start(program);
    let mut stats = Stats::default();
    gtp.must(&format!("boardsize {size}"));
    gtp.must("komi 0");
    for game in 0..GAMES_PER_SIZE {
        let seed = SEED ^ ((size as u64) << 32) ^ game;
        let mut rng = SmallRng::seed_from_u64(seed);
        gtp.must("clear_board");
        // One game in five starts from a fixed handicap, so White moves first against the
        // star points.
        let handicap = if rng.random_bool(0.2) {
            rng.random_range(2..=9)
        } else {
            0
        };
        // The stones come from GNU Go: `handicap_points` is checked on its own below, and
        // a disagreement there must not hide what these games check.
        let mut position = Position::new(size);
        if handicap > 0 {
            let stones = parse_points(&gtp.must(&format!("fixed_handicap {handicap}")), size);
            position.setup(&stones.into_iter().collect::<Vec<_>>(), &[], Color::White);
            stats.handicap_games += 1;
        }
        stats.games += 1;
        Game {
            gtp: &mut gtp,
            stats: &mut stats,
            size,
            seed,
            rng,
            handicap,
            position,
            history: Vec::new(),
        }
        .play();
    }
    stats
}

#[test]
fn random_games_agree_with_gnu_go() {
    let Some(program) = common::peer_program("gnugo") else {
        return;
    };
    let started = Instant::now();
    let mut stats = Stats::default();
    std::thread::scope(|scope| {
        let threads: Vec<_> = SIZES
            .map(|size| {
                scope.spawn({
                    let program = &program;
                    move || play_games(program, size)
                })
            })
            .into_iter()
            .collect();
        for thread in threads {
            match thread.join() {
                Ok(part) => stats.merge(&part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    println!(
        "{} games ({} with handicap) on 9×9, 13×13, 19×19 in {:.1?}: {} moves and {} passes ({} out of turn), \
         {} point legality queries and {} full-board legal-set comparisons; {} capturing moves \
         took {} stones, {} ko captures; refusals compared: {} ko, {} suicide; {} illegal \
         plays refused by both",
        stats.games,
        stats.handicap_games,
        started.elapsed(),
        stats.moves,
        stats.passes,
        stats.out_of_turn,
        stats.point_queries,
        stats.full_board_checks,
        stats.capturing_moves,
        stats.stones_captured,
        stats.ko_captures,
        stats.ko_refusals,
        stats.suicide_refusals,
        stats.illegal_plays_refused,
    );
    assert!(stats.games >= 300);
    assert!(stats.capturing_moves > 0, "no capture was exercised");
    assert!(stats.ko_refusals > 0, "no ko refusal was exercised");
    assert!(
        stats.suicide_refusals > 0,
        "no suicide refusal was exercised"
    );
    assert!(
        stats.illegal_plays_refused > 0,
        "no illegal play was attempted"
    );
}

/// `handicap_points` against GNU Go's `fixed_handicap` on every board size both accept:
/// the same stones where both place them, a refusal from GNU Go wherever we refuse.
/// GNU Go lists the stones in board order, so they are compared as sets.
#[test]
fn fixed_handicap_agrees_with_gnu_go() {
    let Some(program) = common::peer_program("gnugo") else {
        return;
    };
    let mut gtp = Gtp::start(&program);
    let mut placed = 0;
    let mut mismatches = Vec::new();
    // GNU Go plays on boards up to 19×19 only.
    for size in 5..=19 {
        gtp.must(&format!("boardsize {size}"));
        for stones in 1..=12 {
            gtp.must("clear_board");
            let theirs = gtp
                .ask(&format!("fixed_handicap {stones}"))
                .map(|text| parse_points(&text, size));
            let ours =
                handicap_points(size, stones).map(|p| p.into_iter().collect::<BTreeSet<_>>());
            match (&ours, &theirs) {
                // GNU Go already uses the 4-4 points on 12×12, where the GTP specification
                // (section 4.1.1) and Kradan keep to the 3-3 points below 13×13.
                (Ok(ours), Ok(theirs)) if size == 12 && ours.len() == theirs.len() => {
                    placed += 1;
                }
                (Ok(ours), Ok(theirs)) if ours == theirs => {
                    let position = Position::with_handicap(size, stones).expect("placed above");
                    let black: BTreeSet<Point> = position.board().stones(Color::Black).collect();
                    assert_eq!(&black, ours, "{size}×{size}, {stones} stones on the board");
                    assert_eq!(position.to_move(), Color::White);
                    placed += 1;
                }
                (Err(_), Err(_)) => {}
                _ => {
                    let show = |r: &Result<BTreeSet<Point>, String>| match r {
                        Ok(points) => points
                            .iter()
                            .map(|p| p.to_gtp(size))
                            .collect::<Vec<_>>()
                            .join(" "),
                        Err(e) => format!("refused ({e})"),
                    };
                    mismatches.push(format!(
                        "{size}×{size}, {stones} stones: Kradan {}, GNU Go {}",
                        show(&ours),
                        show(&theirs)
                    ));
                }
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "fixed handicaps differ:\n{}",
        mismatches.join("\n")
    );
    assert!(placed > 0);
    println!("fixed handicaps agree with GNU Go: {placed} placements on 5×5 to 19×19");
}

/// GTP's fixed handicap (section 4.1.1) puts the third stone on the upper left star point
/// (D16), leaving the lower right corner free; GNU Go, gomill and the servers agree.
#[test]
fn three_stone_handicap_takes_the_upper_left_star_point() {
    let ours: BTreeSet<String> = handicap_points(19, 3)
        .expect("3 stones fit on 19×19")
        .into_iter()
        .map(|p| p.to_gtp(19))
        .collect();
    assert_eq!(ours, ["D4", "Q16", "D16"].map(String::from).into());
}
