//! Joining a game in progress: which figure stands on each square, when all a camera tells
//! is which squares hold a light piece and which a dark one.
//!
//! A recorder started late, or a board first found after some moves, sees colours on
//! squares but not figures: a Khon and a Met look alike to a colour reading. The figures
//! follow from the start position and the rules: every piece on the board is one of the
//! sixteen its side started with, moved there by legal moves, and a Bia that reached its
//! sixth rank stands there as a Met. The likeliest figures are those that get every piece
//! to its square in the fewest moves all told — a minimum-cost assignment of start pieces
//! to seen squares, each cost the fewest moves that piece needs on an empty board.
//!
//! An exhaustive search over move sequences would also respect pieces in the way, but it
//! grows with the game's length (a game joined after nine moves each did not finish in two
//! million positions); the assignment answers at any move in microseconds. Where another
//! assignment is as short, the square's figure is not known, and [`Joined::uncertain`]
//! says which figures could stand there, so the caller can say so and let the moves played
//! next decide. The side to move is a guess as well (a piece can lose a tempo): the first
//! move seen tells.

use pathfinding::prelude::{Matrix, kuhn_munkres_min};

use super::position::{
    Board, KHON_STEPS, KHUN_STEPS, MA_STEPS, MET_STEPS, Piece, Position, RUEA_DIRECTIONS, Role,
    Square, promotion_rank, side,
};
use crate::games::{Color, Occupancy};

/// The fewest moves White and Black need, in that order, to bring the start position's
/// pieces to `seen`'s squares, as [`join`] counts them; `None` when no game gives `seen`.
/// What telling several readings apart needs, without the figures' doubts.
pub fn moves_to_reach(seen: &Occupancy) -> Option<[usize; 2]> {
    let moves = |color| Some(SideJoin::new(color, seen)?.best(None)?.0);
    Some([moves(Color::White)?, moves(Color::Black)?])
}

/// A game joined in progress: its likeliest position and what of it is a guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Joined {
    /// Every seen piece given the figure of the start piece that reaches it in the fewest
    /// moves all told; the side to move is the one whose turn those moves make it.
    pub position: Position,
    /// The fewest moves White and Black need, in that order, to reach the seen squares.
    pub moves: [usize; 2],
    /// Squares on which another figure needs at most [`UNSURE_WITHIN`] more moves, with
    /// every such figure.
    pub uncertain: Vec<(Square, Vec<Role>)>,
}

/// The likeliest position of a game from [`Position::start`] with `seen`'s occupancy (game
/// rows: row 0 is rank 8), or `None` when no game gives it: more than sixteen pieces of a
/// side, a piece no start piece of its side can reach, or a position that is not legal.
pub fn join(seen: &Occupancy) -> Option<Joined> {
    let mut pieces = Vec::new();
    let mut moves = [0; 2];
    let mut uncertain = Vec::new();
    for color in [Color::White, Color::Black] {
        let side_join = SideJoin::new(color, seen)?;
        let squares = &side_join.squares;
        let (cost, assigned) = side_join.best(None)?;
        moves[side(color)] = cost;
        for (row, &square) in squares.iter().enumerate() {
            let role = side_join.role_on(row, assigned[row]);
            pieces.push((square, Piece { color, role }));
            let mut roles: Vec<Role> = Role::ALL
                .into_iter()
                .filter(|&other| {
                    other == role
                        || side_join
                            .best(Some((row, other)))
                            .is_some_and(|(other_cost, _)| other_cost <= cost + UNSURE_WITHIN)
                })
                .collect();
            if roles.len() > 1 {
                roles.sort_by_key(|r| r.letter());
                uncertain.push((square, roles));
            }
        }
    }
    let board = Board::from_pieces(pieces)?;
    // White moves first: as many moves each leaves White to move.
    let [white, black] = moves;
    let turn = if white > black {
        Color::Black
    } else {
        Color::White
    };
    let mut position = Position::from_board(board, turn)
        .or_else(|| Position::from_board(board, turn.opponent()))?;
    position.fullmove = u32::try_from(black + 1).unwrap_or(u32::MAX);
    uncertain.sort_by_key(|(square, _)| square.index());
    Some(Joined {
        position,
        moves,
        uncertain,
    })
}

/// How many moves longer than the shortest a history may be and still name a square's
/// figure as possible: players lose tempi (310274: the Khon went c1–c2 and the Khun d1–c1,
/// two moves where the Khun alone to c2 is one).
const UNSURE_WITHIN: usize = 1;

/// Past any real cost; what an impossible pairing costs, so that one never wins.
const IMPOSSIBLE: i64 = 1_000;
/// Taken off the Khun's pairings: a Khun is never captured, so an assignment without it
/// loses to every assignment with it.
const KHUN_BONUS: i64 = 100_000;

/// One side's seen squares against its sixteen start pieces.
struct SideJoin {
    color: Color,
    start: Vec<(Square, Role)>,
    /// Fewest moves for start piece `column` to reach seen square `row`.
    costs: Vec<Vec<Option<u32>>>,
    squares: Vec<Square>,
}

impl SideJoin {
    fn new(color: Color, seen: &Occupancy) -> Option<SideJoin> {
        if seen.width() != 8 || seen.height() != 8 {
            return None;
        }
        let opponent = seen.count(Some(color.opponent()));
        // A Bia changes file only by capturing, and each capture took one of these.
        let captures = u32::try_from(16usize.saturating_sub(opponent)).unwrap_or(16);
        let squares: Vec<Square> = seen
            .cells(Some(color))
            .filter_map(|[row, col]| Square::from_row_col(row, col))
            .collect();
        let start: Vec<(Square, Role)> = Position::start()
            .board()
            .pieces()
            .filter(|(_, piece)| piece.color == color)
            .map(|(square, piece)| (square, piece.role))
            .collect();
        if squares.len() > start.len() {
            return None;
        }
        let occupied = (0..64)
            .filter(|&index| seen.get(index / 8, index % 8).is_some())
            .fold(0u64, |bits, index| {
                bits | Square::from_row_col(index / 8, index % 8).map_or(0, |sq| 1 << sq.index())
            });
        let costs = squares
            .iter()
            .map(|&to| {
                start
                    .iter()
                    .map(|&(from, role)| {
                        if role == Role::Bia
                            && !turned_over(color, to)
                            && files_apart(from, to) > captures
                        {
                            None
                        } else {
                            likely_moves(color, role, from, to, occupied)
                        }
                    })
                    .collect()
            })
            .collect();
        Some(SideJoin {
            color,
            start,
            costs,
            squares,
        })
    }

    /// The figure start piece `column` stands as on seen square `row`: a Bia on or past
    /// its promotion rank was turned over into a Met on the way.
    fn role_on(&self, row: usize, column: usize) -> Role {
        let (_, role) = self.start[column];
        if role == Role::Bia && turned_over(self.color, self.squares[row]) {
            Role::Met
        } else {
            role
        }
    }

    /// The fewest moves all told and the start piece on each seen square, optionally with
    /// one seen square held to a figure; `None` when no assignment is possible.
    fn best(&self, held: Option<(usize, Role)>) -> Option<(usize, Vec<usize>)> {
        if self.squares.is_empty() {
            // No piece seen: the Khun cannot have been captured.
            return None;
        }
        let weights: Vec<i64> = (0..self.squares.len())
            .flat_map(|row| (0..self.start.len()).map(move |column| (row, column)))
            .map(|(row, column)| {
                let allowed = held.is_none_or(|(held_row, role)| {
                    held_row != row || self.role_on(row, column) == role
                });
                let cost = match self.costs[row][column] {
                    Some(cost) if allowed => i64::from(cost),
                    _ => IMPOSSIBLE,
                };
                if self.start[column].1 == Role::Khun {
                    cost - KHUN_BONUS
                } else {
                    cost
                }
            })
            .collect();
        let matrix = Matrix::from_vec(self.squares.len(), self.start.len(), weights).ok()?;
        let (total, assigned) = kuhn_munkres_min(&matrix);
        let khun_placed = assigned
            .iter()
            .any(|&column| self.start[column].1 == Role::Khun);
        let total = total + if khun_placed { KHUN_BONUS } else { 0 };
        (khun_placed && total < IMPOSSIBLE).then_some((total as usize, assigned))
    }
}

/// Moves a piece more than the fewest on an open board when the pieces now standing block
/// every shorter way: they may have moved in after it passed, but most stood there all
/// along (on 310276 a Ruea was sent a1–e1 through its own Ma and Khon).
const DETOUR: u32 = 2;

/// The moves a start piece likely took to `to`: the fewest with the pieces on `occupied`
/// (bit [`Square::index`]) in its way, else the fewest on an open board and a detour.
fn likely_moves(color: Color, role: Role, from: Square, to: Square, occupied: u64) -> Option<u32> {
    let in_the_way = occupied & !(1 << from.index()) & !(1 << to.index());
    match role {
        Role::Bia => fewest_moves(color, role, from, to, 0),
        _ => fewest_moves(color, role, from, to, in_the_way)
            .or_else(|| Some(fewest_moves(color, role, from, to, 0)? + DETOUR)),
    }
}

/// The fewest moves a `role` of `color` needs from `from` to `to` with nothing able to
/// stand on or slide through `blocked` (bit [`Square::index`]), or `None` when it can
/// never get there. A Bia goes forward a rank a move, straight or
/// diagonally when it captures, and from its sixth rank on moves as the Met it became.
fn fewest_moves(color: Color, role: Role, from: Square, to: Square, blocked: u64) -> Option<u32> {
    let forward = |from: Square, to: Square| match color {
        Color::White => i32::from(to.rank()) - i32::from(from.rank()),
        Color::Black => i32::from(from.rank()) - i32::from(to.rank()),
    };
    let files = files_apart;
    match role {
        Role::Bia => {
            let promotion = promotion_rank(color);
            let ahead = forward(from, to);
            if !turned_over(color, to) {
                return (ahead >= 0 && files(from, to) <= ahead.unsigned_abs())
                    .then_some(ahead.unsigned_abs());
            }
            (0..8)
                .filter_map(|file| Square::new(file, promotion))
                .filter_map(|turned| {
                    let climb = forward(from, turned);
                    (climb >= 0 && files(from, turned) <= climb.unsigned_abs())
                        .then_some(climb.unsigned_abs())
                        .zip(fewest_moves(color, Role::Met, turned, to, blocked))
                        .map(|(climb, then)| climb + then)
                })
                .min()
        }
        _ => steps(color, role, from, to, blocked),
    }
}

/// Whether a Bia of `color` standing on `square` has been turned over into a Met: it is on
/// or past its promotion rank.
fn turned_over(color: Color, square: Square) -> bool {
    match color {
        Color::White => square.rank() >= promotion_rank(Color::White),
        Color::Black => square.rank() <= promotion_rank(Color::Black),
    }
}

fn files_apart(a: Square, b: Square) -> u32 {
    (i32::from(a.file()) - i32::from(b.file())).unsigned_abs()
}

/// Fewest moves of a figure but the Bia: a breadth-first walk, as the Khon's forward step
/// makes the distance one-way and blocked squares bend the way.
fn steps(color: Color, role: Role, from: Square, to: Square, blocked: u64) -> Option<u32> {
    let forward: i8 = match color {
        Color::White => 1,
        Color::Black => -1,
    };
    let deltas: &[(i8, i8)] = match role {
        Role::Khun => &KHUN_STEPS,
        Role::Met => &MET_STEPS,
        Role::Khon => &KHON_STEPS,
        Role::Ma => &MA_STEPS,
        Role::Ruea => &RUEA_DIRECTIONS,
        Role::Bia => return None,
    };
    let slides = role == Role::Ruea;
    let mut distance = [None; 64];
    distance[from.index()] = Some(0);
    let mut frontier = vec![from];
    let mut moves = 0;
    while !frontier.is_empty() {
        if distance[to.index()].is_some() {
            break;
        }
        moves += 1;
        let mut next = Vec::new();
        for square in frontier {
            for &(df, dr) in deltas {
                let dr = if role == Role::Khon { dr * forward } else { dr };
                let (mut file, mut rank) = (square.file() as i8, square.rank() as i8);
                loop {
                    (file, rank) = (file + df, rank + dr);
                    let Some(reached) = u8::try_from(file)
                        .ok()
                        .zip(u8::try_from(rank).ok())
                        .and_then(|(file, rank)| Square::new(file, rank))
                    else {
                        break;
                    };
                    if blocked & (1 << reached.index()) != 0 {
                        break;
                    }
                    if distance[reached.index()].is_none() {
                        distance[reached.index()] = Some(moves);
                        next.push(reached);
                    }
                    if !slides {
                        break;
                    }
                }
            }
        }
        frontier = next;
    }
    distance[to.index()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::makruk::Move;

    fn played(moves: &[&str]) -> Position {
        let mut position = Position::start();
        for uci in moves {
            let mv: Move = *position
                .legal_moves()
                .iter()
                .find(|m| m.uci() == *uci)
                .unwrap_or_else(|| panic!("{uci} is not legal"));
            position.play(&mv);
        }
        position
    }

    fn square(name: &str) -> Square {
        Square::parse(name).unwrap()
    }

    #[test]
    fn the_start_is_joined_as_the_start() {
        let joined = join(&Position::start().occupancy()).unwrap();
        assert_eq!(joined.position, Position::start());
        assert_eq!(joined.moves, [0, 0]);
        assert!(joined.uncertain.is_empty());
    }

    #[test]
    fn an_opening_is_joined_with_its_figures_side_to_move_and_move_number() {
        let position = played(&["b1d2", "g8e7", "c3c4", "f6f5", "d2e4"]);
        let joined = join(&position.occupancy()).unwrap();
        assert_eq!(joined.position.board(), position.board());
        assert_eq!(joined.position.turn(), Color::Black);
        assert_eq!(joined.position.fullmove_number(), 3);
        assert_eq!(joined.moves, [3, 2]);
        assert_eq!(moves_to_reach(&position.occupancy()), Some([3, 2]));
        assert!(joined.uncertain.is_empty(), "{:?}", joined.uncertain);
    }

    #[test]
    fn figures_that_could_have_come_either_way_are_said_to_be_unsure() {
        // White's Khun (d1) and Khon (c1) both reach c2 and d2 in one step each.
        let position = played(&["d1c2", "a6a5", "c1d2", "a5a4"]);
        let joined = join(&position.occupancy()).unwrap();
        for name in ["c2", "d2"] {
            let (_, roles) = joined
                .uncertain
                .iter()
                .find(|(unsure, _)| *unsure == square(name))
                .unwrap_or_else(|| panic!("{name} is sure: {:?}", joined.uncertain));
            assert!(roles.contains(&Role::Khun) && roles.contains(&Role::Khon));
        }
    }

    #[test]
    fn a_bia_past_its_sixth_rank_is_joined_as_a_met() {
        let mut seen = Position::start().occupancy();
        // White's e-Bia gone from e3 and standing on e6 in Black's emptied e-file square.
        let (e3, e6) = (square("e3").row_col(), square("e6").row_col());
        seen.set(e3.0, e3.1, None);
        seen.set(e6.0, e6.1, Some(Color::White));
        let joined = join(&seen).unwrap();
        let piece = joined.position.board().piece_at(square("e6")).unwrap();
        assert_eq!((piece.color, piece.role), (Color::White, Role::Met));
    }

    #[test]
    fn occupancies_no_game_gives_are_not_joined() {
        let mut extra = Position::start().occupancy();
        extra.set(3, 3, Some(Color::Black));
        assert_eq!(join(&extra), None, "a seventeenth black piece");
        let mut behind = Occupancy::empty(8, 8);
        let (e1, e8) = (square("e1").row_col(), square("d8").row_col());
        behind.set(e1.0, e1.1, Some(Color::White));
        behind.set(e8.0, e8.1, Some(Color::Black));
        assert!(join(&behind).is_some(), "two bare Khuns");
        let mut no_white = behind.clone();
        no_white.set(e1.0, e1.1, None);
        assert_eq!(join(&no_white), None, "White's Khun is never captured");
    }

    #[test]
    fn in_short_random_games_a_wrong_figure_is_almost_always_said_to_be_unsure() {
        // Random legal play wastes more moves than players do, so this is a hard case for
        // the fewest-moves reading: a figure given wrong must be among the open ones.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let (mut games, mut silent) = (0, 0);
        for _ in 0..200 {
            let mut position = Position::start();
            for _ in 0..6 {
                let legal = position.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[next(legal.len())];
                position.play(&mv);
            }
            let joined = join(&position.occupancy()).expect("a played game is joined");
            games += 1;
            let silently_wrong = position.board().pieces().any(|(square, piece)| {
                joined.position.board().piece_at(square) != Some(piece)
                    && !joined.uncertain.iter().any(|(open, _)| *open == square)
            });
            silent += usize::from(silently_wrong);
        }
        assert!(silent * 20 <= games, "{silent} of {games} silently wrong");
    }

    #[test]
    fn distances_follow_each_figure() {
        let d = |role, from: &str, to: &str| {
            fewest_moves(Color::White, role, square(from), square(to), 0)
        };
        assert_eq!(d(Role::Ma, "b1", "c3"), Some(1));
        assert_eq!(d(Role::Ma, "b1", "b2"), Some(3));
        assert_eq!(d(Role::Met, "e1", "e2"), None);
        assert_eq!(d(Role::Khon, "c1", "c4"), Some(3));
        assert_eq!(
            d(Role::Khon, "c4", "c1"),
            Some(5),
            "a Khon goes back only diagonally"
        );
        assert_eq!(d(Role::Bia, "c3", "d4"), Some(1));
        assert_eq!(d(Role::Bia, "c3", "c2"), None);
        assert_eq!(d(Role::Bia, "c3", "f6"), Some(3));
        assert_eq!(
            d(Role::Bia, "c3", "c7"),
            Some(4),
            "turned over on b6 or d6, then a Met step"
        );
        assert_eq!(d(Role::Ruea, "a1", "h8"), Some(2));
        assert_eq!(
            fewest_moves(Color::Black, Role::Khon, square("c8"), square("c6"), 0),
            Some(2)
        );
        let home_row = ["b1", "c1", "d1"]
            .into_iter()
            .fold(0u64, |bits, name| bits | 1 << square(name).index());
        assert_eq!(
            fewest_moves(
                Color::White,
                Role::Ruea,
                square("a1"),
                square("e1"),
                home_row
            ),
            Some(3),
            "round its own pieces: a2, e2, e1"
        );
        assert_eq!(
            likely_moves(Color::White, Role::Ruea, square("a1"), square("e1"), 0),
            Some(1)
        );
    }
}
