//! FEN in Fairy-Stockfish's `makruk` convention.
//!
//! Fields: placement, side to move, castling (always `-`), then either `-` (no en passant
//! in Makruk) and the half-move clock, or — while a count runs — the count's limit and the
//! count so far, both in plies, then the full-move number. Fairy-Stockfish prints a turned
//! over Bia as a plain `M`; a `~` after a piece letter (its marker for promoted pieces in
//! other variants) is accepted and dropped, since a turned-over Bia is a Met in every rule.

use super::counting::{self, Count, CountKind};
use super::position::{Board, Piece, Position, Role, Square};
use crate::games::{Color, ParseError};
use std::fmt::Write;

impl Position {
    /// Reads a FEN; errors carry the line and column within `fen`.
    pub fn from_fen(fen: &str) -> Result<Position, ParseError> {
        parse(fen, 0).map_err(|(offset, message)| ParseError::at(fen, offset, message))
    }

    /// Reads a FEN found at byte `base` of a larger text; error offsets are into that text.
    pub(super) fn from_fen_in(fen: &str, base: usize) -> Result<Position, (usize, String)> {
        parse(fen, base)
    }

    pub fn to_fen(&self) -> String {
        let mut fen = String::with_capacity(64);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match Square::new(file, rank).and_then(|sq| self.board.piece_at(sq)) {
                    Some(piece) => {
                        if empty > 0 {
                            fen.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        fen.push(piece.fen_letter());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                fen.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                fen.push('/');
            }
        }
        let turn = match self.turn {
            Color::White => 'w',
            Color::Black => 'b',
        };
        let _ = match self.count {
            Some(count) => write!(
                fen,
                " {turn} - {} {}",
                count.limit.saturating_mul(2),
                count.ply
            ),
            None => write!(fen, " {turn} - - {}", self.halfmove_clock),
        };
        let _ = write!(fen, " {}", self.fullmove);
        fen
    }
}

/// Splits `text` into whitespace-separated fields with their byte offsets.
fn fields(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_ascii_whitespace()
        .map(move |field| (field.as_ptr() as usize - text.as_ptr() as usize, field))
}

fn parse(fen: &str, base: usize) -> Result<Position, (usize, String)> {
    let mut fields = fields(fen).map(|(offset, field)| (base + offset, field));
    let (placement_at, placement) = fields
        .next()
        .ok_or((base, "empty FEN: expected the piece placement".to_string()))?;
    let board = parse_placement(placement, placement_at)?;
    let turn = match fields.next() {
        None | Some((_, "w")) => Color::White,
        Some((_, "b")) => Color::Black,
        Some((at, other)) => {
            return Err((at, format!("side to move must be w or b, not {other:?}")));
        }
    };
    let mut position = Position::from_board(board, turn).ok_or((
        placement_at,
        format!("the side not to move ({}) is in check", turn.opponent()),
    ))?;
    if let Some((at, castling)) = fields.next()
        && castling != "-"
    {
        return Err((
            at,
            format!("Makruk has no castling: expected -, not {castling:?}"),
        ));
    }
    let number =
        |field: Option<(usize, &str)>, what: &str| -> Result<Option<u32>, (usize, String)> {
            field
                .map(|(at, text)| {
                    text.parse()
                        .map_err(|_| (at, format!("{what} must be a number, not {text:?}")))
                })
                .transpose()
        };
    match fields.next() {
        None => {}
        Some((_, field)) if field == "-" || Square::parse(field).is_some() => {
            if let Some(clock) = number(fields.next(), "the half-move clock")? {
                position.halfmove_clock = clock;
            }
        }
        Some((at, field)) => {
            let limit_plies = number(Some((at, field)), "the counting limit")?.unwrap_or_default();
            let ply = number(fields.next(), "the counting ply")?.unwrap_or_default();
            position.count = Some(count_from_fields(&position.board, turn, limit_plies, ply));
        }
    }
    if let Some(fullmove) = number(fields.next(), "the full-move number")? {
        position.fullmove = fullmove.max(1);
    }
    if let Some((at, extra)) = fields.next() {
        return Err((
            at,
            format!("unexpected field {extra:?} after the full-move number"),
        ));
    }
    Ok(position)
}

/// A count from Fairy-Stockfish's two counting fields. They do not say who counts; the
/// board does: a lone Khun counts the pieces' honour, else the weaker side the board's
/// honour (and, where neither is weaker, the side to move, to keep the fields as given).
/// The progress field counts both sides' half-moves; the counting side has made half of
/// them, rounded up when it moved last.
fn count_from_fields(board: &Board, turn: Color, limit_plies: u32, ply: u32) -> Count {
    let lone = [Color::White, Color::Black].into_iter().find(|&color| {
        board
            .pieces()
            .all(|(_, p)| p.color != color || p.role == Role::Khun)
    });
    let (kind, counter) = match lone {
        Some(color) => (CountKind::PiecesHonour, color),
        None => (
            CountKind::BoardHonour,
            counting::weaker_side(board).unwrap_or(turn),
        ),
    };
    Count {
        kind,
        counter,
        limit: limit_plies / 2,
        reached: ply.saturating_add(u32::from(turn != counter)) / 2,
        ply,
    }
}

fn parse_placement(placement: &str, base: usize) -> Result<Board, (usize, String)> {
    let mut pieces = Vec::with_capacity(32);
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return Err((
            base,
            format!("expected 8 ranks separated by /, found {}", ranks.len()),
        ));
    }
    let mut rank_start = base;
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - row as u8;
        let mut file = 0u8;
        let mut last_piece = None;
        for (i, c) in rank_text.char_indices() {
            let at = rank_start + i;
            match c {
                '1'..='8' => {
                    file += c as u8 - b'0';
                    last_piece = None;
                }
                '~' => match last_piece {
                    Some(Role::Met) => last_piece = None,
                    _ => {
                        return Err((at, "~ (turned-over Bia) may only follow M or m".to_string()));
                    }
                },
                _ => {
                    let role =
                        Role::from_letter(c).ok_or((at, format!("unknown piece letter {c:?}")))?;
                    let color = if c.is_ascii_uppercase() {
                        Color::White
                    } else {
                        Color::Black
                    };
                    let sq = Square::new(file, rank)
                        .ok_or((at, format!("rank {} has more than 8 squares", rank + 1)))?;
                    if role == Role::Bia && (rank == 0 || rank == 7) {
                        return Err((at, format!("a Bia cannot stand on {sq}")));
                    }
                    pieces.push((sq, Piece { color, role }));
                    file += 1;
                    last_piece = Some(role);
                }
            }
            if file > 8 {
                return Err((at, format!("rank {} has more than 8 squares", rank + 1)));
            }
        }
        if file != 8 {
            return Err((
                rank_start + rank_text.len(),
                format!("rank {} has {file} squares, not 8", rank + 1),
            ));
        }
        rank_start += rank_text.len() + 1;
    }
    let khun_count = |color| {
        pieces
            .iter()
            .filter(|(_, p)| p.color == color && p.role == Role::Khun)
            .count()
    };
    for color in [Color::White, Color::Black] {
        if khun_count(color) != 1 {
            return Err((
                base,
                format!(
                    "{color} must have exactly one Khun, not {}",
                    khun_count(color)
                ),
            ));
        }
    }
    Board::from_pieces(pieces).ok_or((base, "invalid placement".to_string()))
}
