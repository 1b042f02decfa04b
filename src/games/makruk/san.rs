//! Standard algebraic notation as Fairy-Stockfish writes it for makruk: piece letters
//! K, M (Met), S (Khon), N (Ma), R (Ruea), none for a Bia; `x` for captures; `=M` when a
//! Bia is turned over; `+` / `#`; disambiguation by file, then rank, then both, as in chess.

use super::position::{Move, Position, Role, Square, Status};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SanError {
    /// The text is not SAN at all.
    Syntax(String),
    /// Well-formed, but no legal move of the position fits it.
    Illegal(String),
    /// More than one legal move fits it.
    Ambiguous(String),
}

impl fmt::Display for SanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SanError::Syntax(why) => write!(f, "not a move: {why}"),
            SanError::Illegal(why) => write!(f, "illegal: {why}"),
            SanError::Ambiguous(why) => write!(f, "ambiguous: {why}"),
        }
    }
}

impl std::error::Error for SanError {}

/// The SAN of a legal move of `position`.
pub fn to_san(position: &Position, mv: &Move) -> String {
    let mut san = String::with_capacity(8);
    if mv.role == Role::Bia {
        if mv.capture.is_some() {
            san.push(mv.from.file_char());
        }
    } else {
        san.push(mv.role.letter());
        let rivals: Vec<Square> = position
            .legal_moves()
            .iter()
            .filter(|other| other.role == mv.role && other.to == mv.to && other.from != mv.from)
            .map(|other| other.from)
            .collect();
        if !rivals.is_empty() {
            if rivals.iter().all(|sq| sq.file() != mv.from.file()) {
                san.push(mv.from.file_char());
            } else if rivals.iter().all(|sq| sq.rank() != mv.from.rank()) {
                san.push(mv.from.rank_char());
            } else {
                san.push(mv.from.file_char());
                san.push(mv.from.rank_char());
            }
        }
    }
    if mv.capture.is_some() {
        san.push('x');
    }
    san.push_str(&mv.to.to_string());
    if mv.promotion {
        san.push_str("=M");
    }
    let after = position.after(mv);
    if after.is_check() {
        san.push(if after.status() == Status::Checkmate {
            '#'
        } else {
            '+'
        });
    }
    san
}

/// Finds the legal move `san` names. Tolerant of what records add or leave out: `!`/`?`
/// annotations, a missing or superfluous `+`/`#`/`x`, and a missing `=M` (turning a Bia
/// over is compulsory and has only one choice). UCI-style `e3e4` / `c5b6m` is read too.
pub fn parse_san(position: &Position, san: &str) -> Result<Move, SanError> {
    let core = san.trim_end_matches(['+', '#', '!', '?']);
    let core = core
        .strip_suffix("=M")
        .or_else(|| core.strip_suffix("=m"))
        .unwrap_or(core);
    if !core.is_ascii() || core.is_empty() {
        return Err(SanError::Syntax(format!("{san:?}")));
    }
    if let Some(mv) = parse_coordinates(position, core) {
        return mv;
    }
    let (role, rest) = match core.as_bytes()[0] {
        letter @ (b'K' | b'M' | b'S' | b'N' | b'R') => (
            Role::from_letter(char::from(letter)).unwrap_or(Role::Bia),
            &core[1..],
        ),
        _ => (Role::Bia, core),
    };
    let rest = rest.replace(['x', '-'], "");
    if rest.len() < 2 {
        return Err(SanError::Syntax(format!(
            "{san:?} has no destination square"
        )));
    }
    let (hint, destination) = rest.split_at(rest.len() - 2);
    let to = Square::parse(destination)
        .ok_or_else(|| SanError::Syntax(format!("{san:?}: {destination:?} is not a square")))?;
    let (mut file_hint, mut rank_hint) = (None, None);
    for c in hint.bytes() {
        match c {
            b'a'..=b'h' if file_hint.is_none() => file_hint = Some(c - b'a'),
            b'1'..=b'8' if rank_hint.is_none() => rank_hint = Some(c - b'1'),
            _ => {
                return Err(SanError::Syntax(format!(
                    "{san:?}: cannot read {hint:?} before the square"
                )));
            }
        }
    }
    let legal = position.legal_moves();
    let mut fits = legal.iter().copied().filter(|mv| {
        mv.role == role
            && mv.to == to
            && file_hint.is_none_or(|f| mv.from.file() == f)
            && rank_hint.is_none_or(|r| mv.from.rank() == r)
    });
    match (fits.next(), fits.next()) {
        (Some(mv), None) => Ok(mv),
        (None, _) => Err(SanError::Illegal(format!(
            "no {} of {} can move to {to}{}",
            role.thai_name(),
            position.turn(),
            match position.status() {
                Status::Checkmate => " (the position is checkmate)",
                Status::Stalemate => " (the position is stalemate)",
                Status::Ongoing if position.is_check() => " (the Khun is in check)",
                Status::Ongoing => "",
            }
        ))),
        (Some(_), Some(_)) => Err(SanError::Ambiguous(format!(
            "more than one {} can move to {to}",
            role.thai_name()
        ))),
    }
}

fn parse_coordinates(position: &Position, text: &str) -> Option<Result<Move, SanError>> {
    let squares = text.strip_suffix('m').unwrap_or(text);
    if squares.len() != 4 {
        return None;
    }
    let from = Square::parse(&squares[..2])?;
    let to = Square::parse(&squares[2..])?;
    let found = position
        .legal_moves_from(from)
        .iter()
        .copied()
        .find(|mv| mv.to == to);
    Some(found.ok_or_else(|| SanError::Illegal(format!("{from}{to} is not a legal move"))))
}
