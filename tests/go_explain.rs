//! `go::explain` against the rules engine and against GNU Go: seeded random games on 9×9,
//! 13×13 and 19×19, where every move is also shown to `explain` the way a camera would see
//! it — the board after the move; after the move and the answer to it (fast play); after a
//! capture with some prisoners still standing; after a pass entered by an operator and the
//! next stone; after a stone played out of turn. The first explanation must be those moves
//! with exactly the flags the case calls for, and its resulting position must be GNU Go's
//! board after the same moves.

mod common;
mod gtp_support;

use gtp_support::{Gtp, fighting_move, gtp_color, gtp_play, parse_points};
use kradan::games::go::{Context, Explanation, FlagKind, Move, Point, Position, explain};
use kradan::games::{Color, Occupancy};
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

/// Games per board size and their length: about 4,000 moves in all, each explained up to
/// four ways, in a few seconds.
const GAMES: [(usize, u64, usize); 3] = [(9, 60, 150), (13, 30, 220), (19, 15, 300)];
const SEED: u64 = 0x65_7870_6c61_696e;

/// What a run exercised, so that it cannot pass without meeting its cases.
#[derive(Default, Debug)]
struct Stats {
    games: u64,
    single: u64,
    captures: u64,
    partial: u64,
    pairs: u64,
    /// Pairs and triples where a later stone captured an earlier one or refilled a point it
    /// emptied: the camera cannot see every move, so they are not asked about.
    hidden: u64,
    passes: u64,
    double_moves: u64,
    repetitions: u64,
    ko_retakes: u64,
    suicides: u64,
    triples: u64,
    /// Triples read in another order first (with `inferred-order`).
    reordered: u64,
    gnugo_boards: u64,
}

impl Stats {
    fn merge(&mut self, other: &Stats) {
        self.games += other.games;
        self.single += other.single;
        self.captures += other.captures;
        self.partial += other.partial;
        self.pairs += other.pairs;
        self.hidden += other.hidden;
        self.passes += other.passes;
        self.double_moves += other.double_moves;
        self.repetitions += other.repetitions;
        self.ko_retakes += other.ko_retakes;
        self.suicides += other.suicides;
        self.triples += other.triples;
        self.reordered += other.reordered;
        self.gnugo_boards += other.gnugo_boards;
    }
}

struct Game<'a> {
    gtp: &'a mut Gtp,
    stats: &'a mut Stats,
    size: usize,
    seed: u64,
    rng: SmallRng,
    position: Position,
    last_stone: Option<Point>,
    history: Vec<String>,
}

impl Game<'_> {
    fn fail(&self, what: &str, found: &[Explanation]) -> ! {
        panic!(
            "{size}×{size} game with seed {seed:#x}, after move {number}: {what}\n\
             position ({to_move} to move):\n{board}\nexplanations:\n{found}\n\
             moves (GTP): {moves}",
            size = self.size,
            seed = self.seed,
            number = self.history.len(),
            to_move = self.position.to_move(),
            board = self
                .position
                .board()
                .to_occupancy()
                .to_text_rows()
                .join("\n"),
            found = found
                .iter()
                .map(|e| serde_json::to_string(e).expect("serialisable"))
                .collect::<Vec<_>>()
                .join("\n"),
            moves = self.history.join(" "),
        )
    }

    fn explain(&self, seen: &Occupancy, pass_entered: bool) -> Vec<Explanation> {
        let context = Context {
            pass_entered,
            last_stone: self.last_stone,
        };
        explain(&self.position, seen, context).expect("same size")
    }

    /// The first explanation must be `moves`, with exactly `flags` (kinds, in order), and
    /// leave the engine's position `expected`.
    fn check_first(
        &self,
        found: &[Explanation],
        moves: &[(Color, Move)],
        flags: &[FlagKind],
        expected: &Position,
    ) {
        let Some(first) = found.first() else {
            self.fail(&format!("no explanation for {moves:?}"), found);
        };
        if first.moves != moves {
            self.fail(&format!("the first explanation is not {moves:?}"), found);
        }
        let kinds: Vec<FlagKind> = first.flags.iter().map(|f| f.kind).collect();
        if kinds != flags {
            self.fail(&format!("flags {kinds:?}, expected {flags:?}"), found);
        }
        let after = &first.after;
        let same = after.board() == expected.board()
            && after.to_move() == expected.to_move()
            && [Color::Black, Color::White].iter().all(|&c| {
                after.ko_point(c) == expected.ko_point(c)
                    && after.prisoners(c) == expected.prisoners(c)
            });
        if !same {
            self.fail("the explanation's position is not the engine's", found);
        }
    }

    /// Plays `moves` on GNU Go, compares its stones and prisoners with `position`, and
    /// takes the moves back if `undo`.
    fn compare_with_gnugo(&mut self, moves: &[(Color, Move)], position: &Position, undo: bool) {
        let mut commands: Vec<String> = moves
            .iter()
            .map(|&(color, mv)| gtp_play(color, mv, self.size))
            .collect();
        let played = commands.len();
        commands.extend(
            [
                "list_stones black",
                "list_stones white",
                "captures black",
                "captures white",
            ]
            .map(String::from),
        );
        if undo {
            commands.extend((0..played).map(|_| "undo".to_string()));
        }
        let answers = self.gtp.batch(&commands);
        for (command, answer) in commands.iter().zip(&answers) {
            if let Err(e) = answer {
                self.fail(&format!("GNU Go refused `{command}`: {e}"), &[]);
            }
        }
        self.stats.gnugo_boards += 1;
        for (i, color) in [Color::Black, Color::White].into_iter().enumerate() {
            let theirs = parse_points(answers[played + i].as_ref().expect("checked"), self.size);
            let ours: BTreeSet<Point> = position.board().stones(color).collect();
            if ours != theirs {
                self.fail(
                    &format!("{color} stones differ from GNU Go's after {moves:?}"),
                    &[],
                );
            }
            let prisoners: u32 = answers[played + 2 + i]
                .as_ref()
                .expect("checked")
                .parse()
                .expect("a number");
            if prisoners != position.prisoners(color) {
                self.fail(&format!("{color} prisoners differ from GNU Go's"), &[]);
            }
        }
    }

    fn play(&mut self, moves: usize) {
        let mut recent: Vec<Point> = Vec::new();
        while self.history.len() < moves && !self.position.play_has_ended() {
            self.check_illegal_stones();
            let out_of_turn = self.rng.random_bool(0.01);
            let color = if out_of_turn {
                self.position.to_move().opponent()
            } else {
                self.position.to_move()
            };
            let position = self.position.clone();
            let mv = fighting_move(&mut self.rng, &position, color, &recent);
            let mut after = position.clone();
            let played = after.play(color, mv).expect("chosen legal");
            let repeat = |played: &kradan::games::go::Played| {
                played
                    .repeats_position_of_move
                    .map(|_| FlagKind::Repetition)
            };

            match mv {
                // The operator enters the pass; the camera sees the next stone. (A pass out
                // of turn is not what `pass_entered` means: not asked about.)
                Move::Pass if !out_of_turn => {
                    if let Move::Play(point) =
                        fighting_move(&mut self.rng, &after, color.opponent(), &recent)
                    {
                        let mut both = after.clone();
                        let second = both
                            .play(color.opponent(), Move::Play(point))
                            .expect("legal");
                        let found = self.explain(&both.board().to_occupancy(), true);
                        let flags: Vec<FlagKind> = repeat(&second).into_iter().collect();
                        let moves = [(color, mv), (color.opponent(), Move::Play(point))];
                        self.check_first(&found, &moves, &flags, &both);
                        self.compare_with_gnugo(&moves, &both, true);
                        self.stats.passes += 1;
                    }
                }
                Move::Pass => {}
                Move::Play(point) => {
                    let seen = after.board().to_occupancy();
                    let found = self.explain(&seen, false);
                    let mut flags = Vec::new();
                    if out_of_turn {
                        flags.push(FlagKind::DoubleMove);
                        self.stats.double_moves += 1;
                    }
                    flags.extend(repeat(&played));
                    self.stats.repetitions += u64::from(played.repeats_position_of_move.is_some());
                    self.check_first(&found, &[(color, mv)], &flags, &after);
                    if flags.is_empty() && !found[0].is_clean() {
                        self.fail("a legal, complete move is not clean", &found);
                    }
                    self.stats.single += 1;

                    if !played.captured.is_empty() {
                        self.stats.captures += 1;
                        self.check_partial_removal(color, point, &after, &played.captured);
                    }
                    if !out_of_turn {
                        self.check_pair(color, mv, &after, &played, &recent);
                        if self.rng.random_bool(0.1) {
                            self.check_three(color, mv, &after, &recent);
                        }
                    }
                }
            }

            // The game goes on with the single move, on both boards.
            self.compare_with_gnugo(&[(color, mv)], &after, false);
            self.history.push(format!(
                "{} {}",
                color.letter(),
                gtp_play(color, mv, self.size)
            ));
            if let Move::Play(point) = mv {
                recent.insert(0, point);
                recent.truncate(2);
                self.last_stone = Some(point);
            }
            self.position = after;
        }
    }

    /// Some of the prisoners still standing: the move, with `captures-not-removed` naming
    /// exactly those, pending, and the position with all of them off.
    fn check_partial_removal(
        &mut self,
        color: Color,
        point: Point,
        after: &Position,
        captured: &[Point],
    ) {
        let keep = self.rng.random_range(1..=captured.len());
        let mut standing: Vec<Point> = captured
            .choose_multiple(&mut self.rng, keep)
            .copied()
            .collect();
        standing.sort();
        let mut seen = after.board().to_occupancy();
        for p in &standing {
            seen.set(p.row as usize, p.col as usize, Some(color.opponent()));
        }
        let found = self.explain(&seen, false);
        let first_flags: Vec<FlagKind> = found
            .first()
            .map(|e| {
                e.flags
                    .iter()
                    .map(|f| f.kind)
                    .filter(|&k| k != FlagKind::DoubleMove && k != FlagKind::Repetition)
                    .collect()
            })
            .unwrap_or_default();
        if first_flags != [FlagKind::CapturesNotRemoved] {
            self.fail("prisoners standing are not read as such", &found);
        }
        let first = &found[0];
        if first.moves != [(color, Move::Play(point))]
            || first.pending_removals() != standing
            || first.after.board() != after.board()
        {
            self.fail(
                &format!("prisoners {standing:?} standing: wrong reading"),
                &found,
            );
        }
        self.stats.partial += 1;
    }

    /// The move and the answer to it seen in one frame: both, in order, clean, and GNU Go's
    /// board after both.
    fn check_pair(
        &mut self,
        color: Color,
        mv: Move,
        after: &Position,
        first: &kradan::games::go::Played,
        recent: &[Point],
    ) {
        let Move::Play(point) = mv else { return };
        let answer_color = color.opponent();
        let near: Vec<Point> = [point].into_iter().chain(recent.iter().copied()).collect();
        let Move::Play(answer) = fighting_move(&mut self.rng, after, answer_color, &near) else {
            return;
        };
        let mut both = after.clone();
        let second = both.play(answer_color, Move::Play(answer)).expect("legal");
        if second.captured.contains(&point) || first.captured.contains(&answer) {
            self.stats.hidden += 1;
            return;
        }
        let found = self.explain(&both.board().to_occupancy(), false);
        let moves = [(color, mv), (answer_color, Move::Play(answer))];
        // A move repeating a position is flagged, each on its own.
        let mut flags: Vec<FlagKind> = first
            .repeats_position_of_move
            .map(|_| FlagKind::Repetition)
            .into_iter()
            .collect();
        flags.extend(
            second
                .repeats_position_of_move
                .map(|_| FlagKind::Repetition),
        );
        self.check_first(&found, &moves, &flags, &both);
        self.compare_with_gnugo(&moves, &both, true);
        self.stats.pairs += 1;
    }

    /// The side to move retaking a ko at once (its stone down, the ko stone lifted) and
    /// filling a point where its stone would have no liberty: the move with `ko-retaken` or
    /// `suicide`, the turn lost, and GNU Go's `is_legal` refusing the same point.
    fn check_illegal_stones(&mut self) {
        let color = self.position.to_move();
        let board = self.position.board();
        let mut cases: Vec<(Point, FlagKind)> = Vec::new();
        if let Some(ko) = self.position.ko_point(color) {
            cases.push((ko, FlagKind::KoRetaken));
        }
        let suicide = board.points().find(|&p| {
            self.position.judge(color, Move::Play(p)) == Err(kradan::games::go::Illegal::Suicide)
        });
        cases.extend(suicide.map(|p| (p, FlagKind::Suicide)));
        for (point, kind) in cases {
            let mut seen = self.position.board().to_occupancy();
            seen.set(point.row as usize, point.col as usize, Some(color));
            let mut ko_stones = Vec::new();
            if kind == FlagKind::KoRetaken {
                // What the player lifts: the ko capture, made with the ban lifted.
                let mut free = self.position.clone();
                free.setup(&[], &[], color);
                ko_stones = free
                    .play(color, Move::Play(point))
                    .expect("a capture")
                    .captured;
                for p in &ko_stones {
                    seen.set(p.row as usize, p.col as usize, None);
                }
                self.stats.ko_retakes += 1;
            } else {
                self.stats.suicides += 1;
            }
            let found = self.explain(&seen, false);
            let mut expected = self.position.clone();
            expected.play(color, Move::Pass).expect("a pass is legal");
            self.check_first(&found, &[(color, Move::Play(point))], &[kind], &expected);
            let mut points = vec![point];
            points.extend(ko_stones);
            if found[0].flags[0].points != points {
                self.fail(&format!("the {kind:?} flag should name {points:?}"), &found);
            }
            let legal = self.gtp.batch(&[format!(
                "is_legal {} {}",
                gtp_color(color),
                point.to_gtp(self.size)
            )]);
            if legal[0].as_deref() != Ok("0") {
                self.fail(&format!("GNU Go finds the {kind:?} point legal"), &found);
            }
        }
    }

    /// Three stones in one frame (the move, the answer, the next): those moves, or another
    /// order of them that fits as well (then `inferred-order` on both), and GNU Go's
    /// board after the moves as played.
    fn check_three(&mut self, color: Color, mv: Move, after: &Position, recent: &[Point]) {
        let mut moves = vec![(color, mv)];
        let mut position = after.clone();
        let mut near: Vec<Point> = recent.to_vec();
        for mover in [color.opponent(), color] {
            let Move::Play(point) = fighting_move(&mut self.rng, &position, mover, &near) else {
                return;
            };
            position.play(mover, Move::Play(point)).expect("legal");
            moves.push((mover, Move::Play(point)));
            near.insert(0, point);
        }
        // Only frames where every stone played is a stone seen (none captured or
        // refilled on the way) can show the three moves.
        let seen = position.board().to_occupancy();
        let new_stones = position
            .board()
            .points()
            .filter(|&p| {
                position.board().get(p).is_some()
                    && self.position.board().get(p) != position.board().get(p)
            })
            .count();
        if new_stones != 3 {
            self.stats.hidden += 1;
            return;
        }
        let found = self.explain(&seen, false);
        let Some(first) = found.first() else {
            self.fail("no explanation for three moves", &found);
        };
        let ours = found.iter().find(|e| e.moves == moves);
        let Some(ours) = ours else {
            self.fail(
                &format!("the moves played {moves:?} are not among the readings"),
                &found,
            );
        };
        let notes = |e: &Explanation| {
            e.flags
                .iter()
                .all(|f| matches!(f.kind, FlagKind::Repetition | FlagKind::InferredOrder))
        };
        if !notes(first) || !notes(ours) || ours.cost() != first.cost() {
            self.fail("three legal moves are not read cleanly", &found);
        }
        if first.moves != moves {
            if !first
                .flags
                .iter()
                .any(|f| f.kind == FlagKind::InferredOrder)
            {
                self.fail("another order comes first without inferred-order", &found);
            }
            self.stats.reordered += 1;
        }
        if first.after.board() != position.board() {
            self.fail("three moves: the board after is not the engine's", &found);
        }
        self.compare_with_gnugo(&moves, &position, true);
        self.stats.triples += 1;
    }
}

fn play_games(program: &Path, size: usize, games: u64, moves: usize) -> Stats {
    let mut gtp = Gtp::start(program);
    let mut stats = Stats::default();
    gtp.must(&format!("boardsize {size}"));
    gtp.must("komi 0");
    for game in 0..games {
        let seed = SEED ^ ((size as u64) << 32) ^ game;
        gtp.must("clear_board");
        stats.games += 1;
        Game {
            gtp: &mut gtp,
            stats: &mut stats,
            size,
            seed,
            rng: SmallRng::seed_from_u64(seed),
            position: Position::new(size),
            last_stone: None,
            history: Vec::new(),
        }
        .play(moves);
    }
    stats
}

#[test]
fn explain_finds_the_moves_of_random_games_as_gnu_go_plays_them() {
    let Some(program) = common::peer_program("gnugo") else {
        return;
    };
    let started = Instant::now();
    let mut stats = Stats::default();
    std::thread::scope(|scope| {
        let threads: Vec<_> = GAMES
            .map(|(size, games, moves)| {
                let program = &program;
                scope.spawn(move || play_games(program, size, games, moves))
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
        "{} games in {:.1?}: {} single moves explained ({} out of turn, {} repeating a \
         position), {} captures of which {} re-read with prisoners standing, {} move pairs, \
         {} three-move frames ({} read in another order first), {} pairs and triples \
         skipped as hidden from a camera, {} entered passes, {} ko retakes and {} suicide \
         stones; {} boards compared with GNU Go",
        stats.games,
        started.elapsed(),
        stats.single,
        stats.double_moves,
        stats.repetitions,
        stats.captures,
        stats.partial,
        stats.pairs,
        stats.triples,
        stats.reordered,
        stats.hidden,
        stats.passes,
        stats.ko_retakes,
        stats.suicides,
        stats.gnugo_boards,
    );
    assert!(stats.single > 1000, "{stats:?}");
    assert!(stats.partial > 50, "{stats:?}");
    assert!(stats.pairs > 500, "{stats:?}");
    assert!(stats.passes > 0, "{stats:?}");
    assert!(stats.double_moves > 0, "{stats:?}");
    assert!(stats.ko_retakes > 0 && stats.suicides > 0, "{stats:?}");
    assert!(stats.triples > 100 && stats.reordered > 0, "{stats:?}");
}

/// Without GNU Go, the same kind of check against the engine alone, so that a machine
/// without the peer still exercises `explain` on real game positions.
#[test]
fn explain_finds_the_moves_of_random_games_played_by_the_engine() {
    let mut rng = SmallRng::seed_from_u64(SEED);
    let mut position = Position::new(9);
    let mut explained = 0;
    for _ in 0..400 {
        if position.play_has_ended() {
            position = Position::new(9);
        }
        let color = position.to_move();
        let board = position.board();
        let empty: Vec<Point> = board.points().filter(|&p| board.get(p).is_none()).collect();
        let Some(&point) = empty
            .iter()
            .filter(|&&p| position.judge(color, Move::Play(p)).is_ok())
            .collect::<Vec<_>>()
            .choose(&mut rng)
        else {
            position.play(color, Move::Pass).expect("legal");
            continue;
        };
        let mut after = position.clone();
        after.play(color, Move::Play(*point)).expect("judged legal");
        let found = explain(&position, &after.board().to_occupancy(), Context::default())
            .expect("same size");
        assert_eq!(found[0].moves, [(color, Move::Play(*point))]);
        assert!(
            found[0]
                .flags
                .iter()
                .all(|f| f.kind == FlagKind::Repetition)
        );
        assert_eq!(found[0].after.board(), after.board());
        explained += 1;
        position = after;
    }
    assert!(explained > 300);
}
