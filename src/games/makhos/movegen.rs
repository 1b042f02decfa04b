//! Moves and their generation (HOS 1.2, HOS 2; HOS-SCHOOL 3.4, 3.5).
//!
//! Generation walks precomputed neighbour tables and reports each move to a callback, so
//! callers that only compare results (`explain`) never allocate.

use super::geometry::{ALL_DIRECTIONS, BLACK_FORWARD, NEIGHBOR, OFF, WHITE_FORWARD};
use super::position::{Position, Square, promotion_row};
use crate::games::Color;
use std::fmt;

/// Enough landing squares for a king that captures every enemy piece on the board.
const MAX_LANDINGS: usize = 32;

/// One move: a step or slide, or a capture with every square it lands on, in order.
/// Two captures are the same PDN move exactly when their landing squares are the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    from: Square,
    landings: [Square; MAX_LANDINGS],
    len: u8,
    pub(super) captured: u32,
    promotes: bool,
}

impl Move {
    fn starting_at(from: Square) -> Move {
        Move {
            from,
            landings: [Square::default(); MAX_LANDINGS],
            len: 0,
            captured: 0,
            promotes: false,
        }
    }

    pub fn from(&self) -> Square {
        self.from
    }

    pub fn to(&self) -> Square {
        self.landings().last().copied().unwrap_or(self.from)
    }

    /// The squares the piece stops on: one for a quiet move, one per capture otherwise.
    pub fn landings(&self) -> &[Square] {
        &self.landings[..usize::from(self.len)]
    }

    pub fn is_capture(&self) -> bool {
        self.captured != 0
    }

    pub fn captured(&self) -> impl Iterator<Item = Square> + '_ {
        Square::all().filter(|square| self.captured & square.bit() != 0)
    }

    pub fn captured_count(&self) -> u32 {
        self.captured.count_ones()
    }

    /// The man reaches the far row and becomes a king; the move ends there (HOS 1.2.2).
    pub fn promotes(&self) -> bool {
        self.promotes
    }

    fn push(&mut self, landing: u8, victim: u8) {
        self.landings[usize::from(self.len)] = Square::from_index(landing);
        self.len += 1;
        self.captured |= 1 << victim;
    }

    fn pop(&mut self, victim: u8) {
        self.len -= 1;
        self.captured &= !(1 << victim);
    }
}

impl fmt::Display for Move {
    /// PDN: `9-13` for a quiet move, `9x18x27` for a capture with every landing square.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.from)?;
        let separator = if self.is_capture() { 'x' } else { '-' };
        for landing in self.landings() {
            write!(f, "{separator}{landing}")?;
        }
        Ok(())
    }
}

/// How the rules judge a move the board allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveClass {
    /// Fully within the rules.
    Legal,
    /// A quiet move although a capture was available: it stands unless the opponent
    /// objects before moving (HOS 2.4).
    MissedCapture,
    /// A capture that stopped although it could continue (HOS 2.2); it stands on the same
    /// terms as a missed capture (HOS 2.4).
    IncompleteCapture,
}

impl Position {
    /// The moves the side to move may make under the strict rules: captures when any
    /// exist (compulsory, HOS 2.1), each continued to its end (HOS 2.2), any of them
    /// (HOS 2.3); otherwise the quiet moves.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        self.for_each_move(|mv, class| {
            if class == MoveClass::Legal {
                moves.push(*mv);
            }
        });
        moves
    }

    /// Whether the side to move has a capture (and so must take one, HOS 2.1).
    pub fn has_capture(&self) -> bool {
        let color = self.turn;
        let own = self.side(color);
        let enemies = self.side(color.opponent());
        let occupied = own | enemies;
        let mut pieces = own;
        while pieces != 0 {
            let from = pieces.trailing_zeros() as u8;
            pieces &= pieces - 1;
            let king = self.kings & (1 << from) != 0;
            for &dir in directions(color, king) {
                if capture_in(from, dir, king, occupied & !(1 << from), enemies).is_some() {
                    return true;
                }
            }
        }
        false
    }

    /// Every move the rules let stand, with its class: the legal moves, and also the quiet
    /// moves and cut-short captures that only give the opponent a claim (HOS 2.4).
    pub fn for_each_move(&self, mut visit: impl FnMut(&Move, MoveClass)) {
        let color = self.turn;
        let capture_exists = self.has_capture();
        let own = self.side(color);
        let enemies = self.side(color.opponent());
        let mut pieces = own;
        while pieces != 0 {
            let from = pieces.trailing_zeros() as u8;
            pieces &= pieces - 1;
            let king = self.kings & (1 << from) != 0;
            let mut mv = Move::starting_at(Square::from_index(from));
            let mut ctx = CaptureSearch {
                color,
                king,
                own: own & !(1 << from),
                visit: &mut visit,
            };
            ctx.extend(from, enemies, &mut mv);
            self.quiet_moves_from(from, king, capture_exists, &mut visit);
        }
    }

    fn quiet_moves_from(
        &self,
        from: u8,
        king: bool,
        capture_exists: bool,
        visit: &mut impl FnMut(&Move, MoveClass),
    ) {
        let class = if capture_exists {
            MoveClass::MissedCapture
        } else {
            MoveClass::Legal
        };
        let occupied = self.occupied();
        let promotion = promotion_row(self.turn);
        for &dir in directions(self.turn, king) {
            let mut to = NEIGHBOR[usize::from(from)][dir];
            while to != OFF && occupied & (1 << to) == 0 {
                let mut mv = Move::starting_at(Square::from_index(from));
                mv.landings[0] = Square::from_index(to);
                mv.len = 1;
                mv.promotes = !king && promotion & (1 << to) != 0;
                visit(&mv, class);
                if !king {
                    break;
                }
                to = NEIGHBOR[usize::from(to)][dir];
            }
        }
    }

    /// The position after `mv`, which must come from this position's generator or be
    /// physically possible (a piece on its first square). Promotes a man that ends on the
    /// far row; the turn passes to the other colour.
    pub fn play(&self, mv: &Move) -> Position {
        let mut next = *self;
        let from = mv.from.bit();
        let to = mv.to().bit();
        let color = self.color_of_index(mv.from.index()).unwrap_or(self.turn);
        let was_king = self.kings & from != 0;
        next.white &= !(from | mv.captured);
        next.black &= !(from | mv.captured);
        next.kings &= !(from | mv.captured);
        match color {
            Color::White => next.white |= to,
            Color::Black => next.black |= to,
        }
        if was_king || promotion_row(color) & to != 0 {
            next.kings |= to;
        }
        next.turn = color.opponent();
        next
    }
}

fn directions(color: Color, king: bool) -> &'static [usize] {
    match (king, color) {
        (true, _) => &ALL_DIRECTIONS,
        (false, Color::White) => &WHITE_FORWARD,
        (false, Color::Black) => &BLACK_FORWARD,
    }
}

/// The capture available from `from` in direction `dir`, as (victim, landing): a man jumps
/// an adjacent enemy; a king may first slide over empty squares, and lands on the square
/// just beyond its victim. `occupied` must not include the capturing piece itself.
fn capture_in(from: u8, dir: usize, king: bool, occupied: u32, enemies: u32) -> Option<(u8, u8)> {
    let mut victim = NEIGHBOR[usize::from(from)][dir];
    if king {
        while victim != OFF && occupied & (1 << victim) == 0 {
            victim = NEIGHBOR[usize::from(victim)][dir];
        }
    }
    if victim == OFF || enemies & (1 << victim) == 0 {
        return None;
    }
    let landing = NEIGHBOR[usize::from(victim)][dir];
    (landing != OFF && occupied & (1 << landing) == 0).then_some((victim, landing))
}

struct CaptureSearch<'a, F> {
    color: Color,
    king: bool,
    /// The mover's other pieces: the capturing piece has left its square.
    own: u32,
    visit: &'a mut F,
}

impl<F: FnMut(&Move, MoveClass)> CaptureSearch<'_, F> {
    /// Tries every capture from `at`, with `enemies` the pieces not yet taken (each is
    /// removed as it is jumped, HOS 2.2, so it no longer blocks). Returns whether any
    /// capture was possible.
    fn extend(&mut self, at: u8, enemies: u32, mv: &mut Move) -> bool {
        let mut extended = false;
        for &dir in directions(self.color, self.king) {
            let Some((victim, landing)) =
                capture_in(at, dir, self.king, self.own | enemies, enemies)
            else {
                continue;
            };
            extended = true;
            mv.push(landing, victim);
            if !self.king && promotion_row(self.color) & (1 << landing) != 0 {
                // A new king may not go on capturing in the same move (HOS 1.2.2).
                mv.promotes = true;
                (self.visit)(mv, MoveClass::Legal);
                mv.promotes = false;
            } else if self.extend(landing, enemies & !(1 << victim), mv) {
                (self.visit)(mv, MoveClass::IncompleteCapture);
            } else {
                (self.visit)(mv, MoveClass::Legal);
            }
            mv.pop(victim);
        }
        extended
    }
}
