//! Pieces, squares and the position, with move generation and legality.
//!
//! The board is a mailbox (one `Option<Piece>` per square, a1 = 0, h8 = 63) plus one
//! occupancy bitboard per side and the two Khun squares. Move targets of the short-range
//! pieces come from tables built at compile time, so generating moves allocates nothing:
//! the recorder calls this for every frame and the perft tests call it millions of times.

use super::counting::{self, Count};
use crate::games::{Color, Occupancy};
use std::fmt;

/// The six kinds of Makruk piece, by their Thai names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// ขุน, the king.
    Khun,
    /// เม็ด, one square diagonally. A promoted Bia is a Met in every respect.
    Met,
    /// โคน, one square diagonally or one straight forward.
    Khon,
    /// ม้า, the knight.
    Ma,
    /// เรือ, the rook.
    Ruea,
    /// เบี้ย, the pawn (unpromoted: เบี้ยคว่ำ).
    Bia,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Khun,
        Role::Met,
        Role::Khon,
        Role::Ma,
        Role::Ruea,
        Role::Bia,
    ];

    /// The letter Fairy-Stockfish uses for the piece in FEN and SAN (upper case).
    pub fn letter(self) -> char {
        match self {
            Role::Khun => 'K',
            Role::Met => 'M',
            Role::Khon => 'S',
            Role::Ma => 'N',
            Role::Ruea => 'R',
            Role::Bia => 'P',
        }
    }

    /// Reads a FEN/SAN piece letter of either case.
    pub fn from_letter(letter: char) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|role| role.letter() == letter.to_ascii_uppercase())
    }

    pub fn thai_name(self) -> &'static str {
        match self {
            Role::Khun => "Khun",
            Role::Met => "Met",
            Role::Khon => "Khon",
            Role::Ma => "Ma",
            Role::Ruea => "Ruea",
            Role::Bia => "Bia",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// The FEN letter: upper case for White, lower case for Black.
    pub fn fen_letter(self) -> char {
        match self.color {
            Color::White => self.role.letter(),
            Color::Black => self.role.letter().to_ascii_lowercase(),
        }
    }
}

/// A square, a1 = 0 … h8 = 63 (file + 8 × rank, both 0-based from White's side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    pub fn new(file: u8, rank: u8) -> Option<Square> {
        (file < 8 && rank < 8).then_some(Square(rank * 8 + file))
    }

    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// 0 = file a.
    pub fn file(self) -> u8 {
        self.0 % 8
    }

    /// 0 = rank 1.
    pub fn rank(self) -> u8 {
        self.0 / 8
    }

    /// Where the square is in an [`Occupancy`]: row 0 is rank 8, column 0 is file a.
    pub fn row_col(self) -> (usize, usize) {
        (usize::from(7 - self.rank()), usize::from(self.file()))
    }

    pub fn from_row_col(row: usize, col: usize) -> Option<Square> {
        if row < 8 && col < 8 {
            Square::new(col as u8, 7 - row as u8)
        } else {
            None
        }
    }

    /// Reads `e4`-style names.
    pub fn parse(name: &str) -> Option<Square> {
        match name.as_bytes() {
            [file @ b'a'..=b'h', rank @ b'1'..=b'8'] => Square::new(file - b'a', rank - b'1'),
            _ => None,
        }
    }

    pub fn file_char(self) -> char {
        char::from(b'a' + self.file())
    }

    pub fn rank_char(self) -> char {
        char::from(b'1' + self.rank())
    }

    fn bit(self) -> u64 {
        1 << self.0
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file_char(), self.rank_char())
    }
}

/// One move, with what it captures and whether a Bia is turned over into a Met. In Makruk
/// the origin and destination decide the move: there is only one promotion choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub role: Role,
    pub capture: Option<Role>,
    pub promotion: bool,
}

impl Move {
    /// The move in UCI as Fairy-Stockfish writes it for makruk: `c5b6m` for a promotion.
    pub fn uci(&self) -> String {
        let suffix = if self.promotion { "m" } else { "" };
        format!("{}{}{suffix}", self.from, self.to)
    }
}

/// The most moves a Makruk position can have is well under this (two Rueas 28, two Mas 16,
/// Khun 8, two Khons 10, nine Mets 36), so a fixed array never overflows.
const MAX_MOVES: usize = 128;

/// Legal moves of a position, held without heap allocation.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    fn new() -> Self {
        let filler = Move {
            from: Square(0),
            to: Square(0),
            role: Role::Bia,
            capture: None,
            promotion: false,
        };
        MoveList {
            moves: [filler; MAX_MOVES],
            len: 0,
        }
    }

    fn push(&mut self, mv: Move) {
        self.moves[self.len] = mv;
        self.len += 1;
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

const fn step_targets(deltas: &[(i8, i8)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (file, rank) = ((sq % 8) as i8, (sq / 8) as i8);
        let mut i = 0;
        while i < deltas.len() {
            let (f, r) = (file + deltas[i].0, rank + deltas[i].1);
            if f >= 0 && f < 8 && r >= 0 && r < 8 {
                table[sq] |= 1 << (r * 8 + f);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

const DIAGONALS: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
/// Each figure's steps as (files, ranks), forward being up the board (White's way).
pub(super) const KHUN_STEPS: [(i8, i8); 8] = [
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
];
pub(super) const MET_STEPS: [(i8, i8); 4] = DIAGONALS;
pub(super) const MA_STEPS: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
/// White's Khon; Black's steps forward down the board.
pub(super) const KHON_STEPS: [(i8, i8); 5] = [(1, 1), (-1, 1), (1, -1), (-1, -1), (0, 1)];
const KHUN_TARGETS: [u64; 64] = step_targets(&KHUN_STEPS);
const MET_TARGETS: [u64; 64] = step_targets(&MET_STEPS);
const MA_TARGETS: [u64; 64] = step_targets(&MA_STEPS);
/// Indexed by [`side`]: White moves up the board, Black down.
const KHON_TARGETS: [[u64; 64]; 2] = [
    step_targets(&KHON_STEPS),
    step_targets(&[(1, 1), (-1, 1), (1, -1), (-1, -1), (0, -1)]),
];
const BIA_CAPTURES: [[u64; 64]; 2] = [
    step_targets(&[(1, 1), (-1, 1)]),
    step_targets(&[(1, -1), (-1, -1)]),
];
const BIA_PUSHES: [[u64; 64]; 2] = [step_targets(&[(0, 1)]), step_targets(&[(0, -1)])];
pub(super) const RUEA_DIRECTIONS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];

/// Index of a side in per-side arrays.
pub(crate) fn side(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

/// The rank (0-based) on which a Bia of this colour is turned over: the sixth rank as the
/// owner sees the board (MAKRUK: "its third rank from the far side").
pub fn promotion_rank(color: Color) -> u8 {
    match color {
        Color::White => 5,
        Color::Black => 2,
    }
}

/// Squares a Ruea on `from` reaches, up to and including the first occupied square of
/// each line.
fn ruea_targets(from: Square, occupied: u64) -> u64 {
    let mut targets = 0;
    for (df, dr) in RUEA_DIRECTIONS {
        let (mut file, mut rank) = (from.file() as i8 + df, from.rank() as i8 + dr);
        while (0..8).contains(&file) && (0..8).contains(&rank) {
            let bit = 1u64 << (rank * 8 + file);
            targets |= bit;
            if occupied & bit != 0 {
                break;
            }
            file += df;
            rank += dr;
        }
    }
    targets
}

fn bits(mut set: u64) -> impl Iterator<Item = Square> {
    std::iter::from_fn(move || {
        (set != 0).then(|| {
            let sq = Square(set.trailing_zeros() as u8);
            set &= set - 1;
            sq
        })
    })
}

/// Piece placement alone: what moves change and what legality looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    squares: [Option<Piece>; 64],
    occupied: [u64; 2],
    khun: [Square; 2],
}

impl Board {
    /// Builds a board from pieces; `None` unless each side has exactly one Khun.
    pub fn from_pieces(pieces: impl IntoIterator<Item = (Square, Piece)>) -> Option<Board> {
        let mut squares = [None; 64];
        let mut occupied = [0; 2];
        let mut khun = [None, None];
        for (sq, piece) in pieces {
            if squares[sq.index()].is_some() {
                return None;
            }
            squares[sq.index()] = Some(piece);
            occupied[side(piece.color)] |= sq.bit();
            if piece.role == Role::Khun {
                if khun[side(piece.color)].is_some() {
                    return None;
                }
                khun[side(piece.color)] = Some(sq);
            }
        }
        Some(Board {
            squares,
            occupied,
            khun: [khun[0]?, khun[1]?],
        })
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.squares[sq.index()]
    }

    pub fn khun(&self, color: Color) -> Square {
        self.khun[side(color)]
    }

    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        bits(self.occupied[0] | self.occupied[1]).filter_map(|sq| Some((sq, self.piece_at(sq)?)))
    }

    pub fn count(&self, color: Color, role: Role) -> usize {
        bits(self.occupied[side(color)])
            .filter(|&sq| self.piece_at(sq).is_some_and(|p| p.role == role))
            .count()
    }

    /// The squares `color`'s pieces stand on, one bit a square as [`Square::index`].
    pub fn occupied_by(&self, color: Color) -> u64 {
        self.occupied[side(color)]
    }

    pub fn piece_total(&self) -> u32 {
        (self.occupied[0] | self.occupied[1]).count_ones()
    }

    pub fn occupancy(&self) -> Occupancy {
        let mut grid = Occupancy::empty(8, 8);
        for (sq, piece) in self.pieces() {
            let (row, col) = sq.row_col();
            grid.set(row, col, Some(piece.color));
        }
        grid
    }

    fn apply(&mut self, mv: &Move) {
        let Some(mut piece) = self.squares[mv.from.index()].take() else {
            return;
        };
        let us = side(piece.color);
        if let Some(captured) = self.squares[mv.to.index()] {
            self.occupied[side(captured.color)] &= !mv.to.bit();
        }
        if mv.promotion {
            piece.role = Role::Met;
        }
        if piece.role == Role::Khun {
            self.khun[us] = mv.to;
        }
        self.squares[mv.to.index()] = Some(piece);
        self.occupied[us] = (self.occupied[us] & !mv.from.bit()) | mv.to.bit();
    }

    fn holds(&self, sq: Square, color: Color, roles: &[Role]) -> bool {
        self.piece_at(sq)
            .is_some_and(|p| p.color == color && roles.contains(&p.role))
    }

    /// Whether a piece of `by` attacks `target`. Works backwards from the target: a Khon
    /// of `by` attacks straight forward, so it sits one step behind the target as `by`
    /// moves, and a Bia sits diagonally behind.
    pub fn attacked(&self, target: Square, by: Color) -> bool {
        let theirs = self.occupied[side(by)];
        let hits =
            |table: u64, roles: &[Role]| bits(table & theirs).any(|sq| self.holds(sq, by, roles));
        let defender = side(by.opponent());
        hits(MA_TARGETS[target.index()], &[Role::Ma])
            || hits(KHUN_TARGETS[target.index()], &[Role::Khun])
            || hits(MET_TARGETS[target.index()], &[Role::Met, Role::Khon])
            || hits(BIA_PUSHES[defender][target.index()], &[Role::Khon])
            || hits(BIA_CAPTURES[defender][target.index()], &[Role::Bia])
            || RUEA_DIRECTIONS.iter().any(|&(df, dr)| {
                self.first_piece_along(target, df, dr)
                    .is_some_and(|p| p.color == by && p.role == Role::Ruea)
            })
    }

    fn first_piece_along(&self, from: Square, df: i8, dr: i8) -> Option<Piece> {
        let (mut file, mut rank) = (from.file() as i8, from.rank() as i8);
        loop {
            file += df;
            rank += dr;
            let sq = Square::new(u8::try_from(file).ok()?, u8::try_from(rank).ok()?)?;
            if let Some(piece) = self.piece_at(sq) {
                return Some(piece);
            }
        }
    }

    fn in_check(&self, color: Color) -> bool {
        self.attacked(self.khun(color), color.opponent())
    }

    /// Calls `emit` with every pseudo-legal move of `turn` whose origin is in `from_mask`.
    fn pseudo_moves(&self, turn: Color, from_mask: u64, mut emit: impl FnMut(Move)) {
        let us = side(turn);
        let own = self.occupied[us];
        let all = self.occupied[0] | self.occupied[1];
        for from in bits(own & from_mask) {
            let Some(piece) = self.piece_at(from) else {
                continue;
            };
            let i = from.index();
            let targets = match piece.role {
                Role::Khun => KHUN_TARGETS[i],
                Role::Met => MET_TARGETS[i],
                Role::Khon => KHON_TARGETS[us][i],
                Role::Ma => MA_TARGETS[i],
                Role::Ruea => ruea_targets(from, all),
                Role::Bia => {
                    (BIA_PUSHES[us][i] & !all) | (BIA_CAPTURES[us][i] & self.occupied[1 - us])
                }
            };
            for to in bits(targets & !own) {
                let promotion = piece.role == Role::Bia && to.rank() == promotion_rank(turn);
                emit(self.make_move(from, to, piece, promotion));
            }
        }
    }

    fn make_move(&self, from: Square, to: Square, piece: Piece, promotion: bool) -> Move {
        Move {
            from,
            to,
            role: piece.role,
            capture: self.piece_at(to).map(|p| p.role),
            promotion,
        }
    }

    fn legal_moves(&self, turn: Color, from_mask: u64) -> MoveList {
        let mut list = MoveList::new();
        self.pseudo_moves(turn, from_mask, |mv| {
            let mut after = *self;
            after.apply(&mv);
            if !after.in_check(turn) {
                list.push(mv);
            }
        });
        list
    }

    fn perft(&self, turn: Color, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let moves = self.legal_moves(turn, !0);
        if depth == 1 {
            return moves.len() as u64;
        }
        moves
            .iter()
            .map(|mv| {
                let mut after = *self;
                after.apply(mv);
                after.perft(turn.opponent(), depth - 1)
            })
            .sum()
    }
}

/// Where the game stands once the side to move has no legal move, or not yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ongoing,
    /// The side to move is mated; the other side wins.
    Checkmate,
    /// The side to move has no legal move and is not in check: a draw (MAKRUK 16).
    Stalemate,
}

/// A full Makruk position: placement, side to move, the running count (MAKRUK 7–14) and
/// the move clocks Fairy-Stockfish keeps in its FEN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub(super) board: Board,
    pub(super) turn: Color,
    pub(super) count: Option<Count>,
    /// Half-moves since the last capture or Bia move; Fairy-Stockfish prints it when no
    /// count runs.
    pub(super) halfmove_clock: u32,
    pub(super) fullmove: u32,
}

impl Default for Position {
    fn default() -> Self {
        Position::start()
    }
}

impl Position {
    pub const START_FEN: &'static str = "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - - 0 1";

    /// The Makruk start position, White to move (MAKRUK 1).
    pub fn start() -> Position {
        let back = [
            Role::Ruea,
            Role::Ma,
            Role::Khon,
            Role::Khun,
            Role::Met,
            Role::Khon,
            Role::Ma,
            Role::Ruea,
        ];
        let mut pieces = Vec::with_capacity(32);
        for (file, role) in (0u8..).zip(back) {
            let black_role = match role {
                Role::Khun => Role::Met,
                Role::Met => Role::Khun,
                other => other,
            };
            let white = |role| Piece {
                color: Color::White,
                role,
            };
            let black = |role| Piece {
                color: Color::Black,
                role,
            };
            pieces.push((Square(file), white(role)));
            pieces.push((Square(16 + file), white(Role::Bia)));
            pieces.push((Square(40 + file), black(Role::Bia)));
            pieces.push((Square(56 + file), black(black_role)));
        }
        Position {
            board: Board::from_pieces(pieces).expect("the start position has one Khun a side"),
            turn: Color::White,
            count: None,
            halfmove_clock: 0,
            fullmove: 1,
        }
    }

    /// A position from parts, with no count running yet: as in Fairy-Stockfish, a count
    /// the material allows starts after the next move. `None` when the side not to move
    /// is in check, which no legal game reaches.
    pub fn from_board(board: Board, turn: Color) -> Option<Position> {
        if board.in_check(turn.opponent()) {
            return None;
        }
        Some(Position {
            board,
            turn,
            count: None,
            halfmove_clock: 0,
            fullmove: 1,
        })
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The count running now (MAKRUK 7–14), if any.
    pub fn count(&self) -> Option<Count> {
        self.count
    }

    pub fn fullmove_number(&self) -> u32 {
        self.fullmove
    }

    pub fn occupancy(&self) -> Occupancy {
        self.board.occupancy()
    }

    pub fn is_check(&self) -> bool {
        self.board.in_check(self.turn)
    }

    pub fn legal_moves(&self) -> MoveList {
        self.board.legal_moves(self.turn, !0)
    }

    /// Legal moves of the piece on `from` only: what `explain` needs, without generating
    /// the rest.
    pub fn legal_moves_from(&self, from: Square) -> MoveList {
        self.board.legal_moves(self.turn, from.bit())
    }

    pub fn is_legal(&self, mv: &Move) -> bool {
        self.legal_moves_from(mv.from).contains(mv)
    }

    pub fn status(&self) -> Status {
        if !self.legal_moves().is_empty() {
            Status::Ongoing
        } else if self.is_check() {
            Status::Checkmate
        } else {
            Status::Stalemate
        }
    }

    /// Plays a move that [`Position::legal_moves`] produced (the caller guarantees
    /// legality), updating the clocks and the count.
    pub fn play(&mut self, mv: &Move) {
        self.board.apply(mv);
        if mv.capture.is_some() || mv.role == Role::Bia {
            self.halfmove_clock = 0;
        } else {
            self.halfmove_clock = self.halfmove_clock.saturating_add(1);
        }
        if self.turn == Color::Black {
            self.fullmove = self.fullmove.saturating_add(1);
        }
        self.count = counting::next_count(&self.board, self.count, self.turn);
        self.turn = self.turn.opponent();
    }

    /// The position after `mv`, leaving `self` untouched.
    pub fn after(&self, mv: &Move) -> Position {
        let mut next = self.clone();
        next.play(mv);
        next
    }

    /// Number of leaf nodes `depth` plies down, as `go perft` counts them.
    pub fn perft(&self, depth: u32) -> u64 {
        self.board.perft(self.turn, depth)
    }

    /// Perft split by first move, to find which move disagrees with a reference engine.
    pub fn perft_divide(&self, depth: u32) -> Vec<(Move, u64)> {
        self.legal_moves()
            .iter()
            .map(|mv| {
                let mut after = self.board;
                after.apply(mv);
                (
                    *mv,
                    after.perft(self.turn.opponent(), depth.saturating_sub(1)),
                )
            })
            .collect()
    }

    /// The same position with `turn` to move, the count kept: what the recorder needs to
    /// follow a side that moves twice in a row.
    pub fn with_turn(&self, turn: Color) -> Position {
        Position {
            turn,
            ..self.clone()
        }
    }

    /// The same position with the figures on `a` and `b` (one side's) exchanged: what a
    /// game joined in progress learns when a piece moves as only the other figure can.
    /// `None` unless both squares hold pieces of one side.
    pub fn with_figures_exchanged(&self, a: Square, b: Square) -> Option<Position> {
        let (first, second) = (self.board.piece_at(a)?, self.board.piece_at(b)?);
        if first.color != second.color {
            return None;
        }
        let board = Board::from_pieces(self.board.pieces().map(|(square, piece)| {
            let role = match square {
                s if s == a => second.role,
                s if s == b => first.role,
                _ => piece.role,
            };
            (square, Piece { role, ..piece })
        }))?;
        Some(Position {
            board,
            ..self.clone()
        })
    }

    /// What a repetition compares (MAKRUK 16): placement and side to move.
    pub fn repetition_key(&self) -> (Board, Color) {
        (self.board, self.turn)
    }
}
