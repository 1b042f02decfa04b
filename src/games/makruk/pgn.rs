//! PGN records with `[Variant "makruk"]`.
//!
//! The reader keeps the movetext as the SAN tokens the record wrote, with their places in
//! the text, and leaves judging them to the caller: a move that does not fit the position
//! is an irregularity for `replay` to report, not a broken file. Comments, NAGs, move
//! numbers and variations are skipped; only the first game of a file is read.

use super::position::{Move, Position};
use super::san::to_san;
use crate::games::ParseError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub name: String,
    pub value: String,
    /// Byte offset of the value's first character in the PGN text.
    pub value_offset: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SanToken {
    pub text: String,
    /// Byte offset in the PGN text.
    pub offset: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgnGame {
    pub tags: Vec<Tag>,
    pub moves: Vec<SanToken>,
    /// The game termination marker of the movetext (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub termination: Option<String>,
}

impl PgnGame {
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|tag| tag.name.eq_ignore_ascii_case(name))
            .map(|tag| tag.value.as_str())
    }

    /// The position the game starts from: the `FEN` tag's, or the standard start. `text`
    /// is the PGN the game was read from, for the error's line and column.
    pub fn start_position(&self, text: &str) -> Result<Position, ParseError> {
        if let Some(variant) = self
            .tags
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case("Variant"))
            && !variant.value.eq_ignore_ascii_case("makruk")
        {
            return Err(ParseError::at(
                text,
                variant.value_offset,
                format!("variant {:?} is not makruk", variant.value),
            ));
        }
        match self
            .tags
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case("FEN"))
        {
            Some(fen) => {
                Position::from_fen_in(&fen.value, fen.value_offset).map_err(|(offset, message)| {
                    ParseError::at(text, offset, format!("FEN tag: {message}"))
                })
            }
            None => Ok(Position::start()),
        }
    }
}

/// Reads the first game of a PGN text.
pub fn read_pgn(text: &str) -> Result<PgnGame, ParseError> {
    let bytes = text.as_bytes();
    let error = |offset: usize, message: &str| ParseError::at(text, offset, message);
    let mut game = PgnGame::default();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let at_line_start = std::mem::replace(&mut line_start, false);
        match c {
            b'%' if at_line_start => i = end_of_line(bytes, i),
            b';' => i = end_of_line(bytes, i),
            b'[' if !game.moves.is_empty() || game.termination.is_some() => break,
            b'[' => {
                let (tag, next) = read_tag(text, i)?;
                game.tags.push(tag);
                i = next;
            }
            b'{' => {
                let close = text[i..]
                    .find('}')
                    .ok_or_else(|| error(i, "comment { is never closed"))?;
                i += close + 1;
            }
            b'(' => i = skip_variation(text, i)?,
            b')' => return Err(error(i, "`)` without a variation to close")),
            b'}' => return Err(error(i, "`}` without a comment to close")),
            b'$' => {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => {
                let end = token_end(bytes, i);
                let token = &text[i..end];
                if game.termination.is_some() {
                    return Err(error(i, &format!("{token:?} after the game's result")));
                }
                if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
                    game.termination = Some(token.to_string());
                } else if token.as_bytes()[0].is_ascii_digit() {
                    if !token
                        .trim_start_matches(|c: char| c.is_ascii_digit())
                        .bytes()
                        .all(|b| b == b'.')
                    {
                        return Err(error(
                            i,
                            &format!("{token:?} is neither a move number nor a result"),
                        ));
                    }
                } else if token.as_bytes()[0].is_ascii_alphabetic() || token.starts_with("--") {
                    game.moves.push(SanToken {
                        text: token.to_string(),
                        offset: i,
                    });
                } else {
                    return Err(error(i, &format!("unexpected {token:?} in the movetext")));
                }
                i = end;
            }
        }
    }
    Ok(game)
}

fn end_of_line(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |n| from + n)
}

/// Movetext tokens end at whitespace or at the start of a comment, variation, NAG or tag.
/// A move number runs into its move in `1.e4`, so digits-and-dots stop at the last dot.
fn token_end(bytes: &[u8], from: usize) -> usize {
    let is_break = |b: u8| b.is_ascii_whitespace() || b"{}()[];$".contains(&b);
    let mut end = from;
    if bytes[from].is_ascii_digit() {
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end < bytes.len() && bytes[end] == b'.' {
            while end < bytes.len() && bytes[end] == b'.' {
                end += 1;
            }
            return end;
        }
    }
    while end < bytes.len() && !is_break(bytes[end]) {
        end += 1;
    }
    // Breaks are ASCII, so `end` is a character boundary; a lone stray `]` is a token.
    end.max(from + 1)
}

fn read_tag(text: &str, open: usize) -> Result<(Tag, usize), ParseError> {
    let bytes = text.as_bytes();
    let error = |offset: usize, message: &str| ParseError::at(text, offset, message);
    let mut i = open + 1;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let name_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    if i == name_start {
        return Err(error(i, "tag without a name"));
    }
    let name = text[name_start..i].to_string();
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'"') {
        return Err(error(i, &format!("tag {name} needs a quoted value")));
    }
    i += 1;
    let value_offset = i;
    let mut value = String::new();
    loop {
        match bytes.get(i) {
            None | Some(b'\n') => {
                return Err(error(i, &format!("value of tag {name} is never closed")));
            }
            Some(b'"') => break,
            Some(b'\\') if matches!(bytes.get(i + 1), Some(b'"' | b'\\')) => {
                value.push(char::from(bytes[i + 1]));
                i += 2;
            }
            Some(_) => {
                let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
                value.push(c);
                i += c.len_utf8();
            }
        }
    }
    i += 1;
    while i < bytes.len() && bytes[i].is_ascii_whitespace() && bytes[i] != b'\n' {
        i += 1;
    }
    if bytes.get(i) != Some(&b']') {
        return Err(error(i, &format!("tag {name} is not closed with ]")));
    }
    Ok((
        Tag {
            name,
            value,
            value_offset,
        },
        i + 1,
    ))
}

fn skip_variation(text: &str, open: usize) -> Result<usize, ParseError> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b'{' => match text[i..].find('}') {
                Some(close) => i += close,
                None => return Err(ParseError::at(text, i, "comment { is never closed")),
            },
            b';' => i = end_of_line(bytes, i),
            _ => {}
        }
        i += 1;
    }
    Err(ParseError::at(text, open, "variation ( is never closed"))
}

/// Writes a game as PGN. `tags` come first in the given order (the Seven Tag Roster is
/// the caller's to give); `Variant`, `Result` and, when the start differs from the
/// standard one, `SetUp` and `FEN` are added unless given. `moves` must be legal in turn
/// from `start`.
pub fn write_pgn(tags: &[(&str, &str)], start: &Position, moves: &[Move], result: &str) -> String {
    let mut out = String::new();
    let mut push_tag = |name: &str, value: &str| {
        let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("[{name} \"{escaped}\"]\n"));
    };
    let given = |name: &str| tags.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    for (name, value) in tags {
        push_tag(name, value);
    }
    if !given("Result") {
        push_tag("Result", result);
    }
    if !given("Variant") {
        push_tag("Variant", "makruk");
    }
    if start.to_fen() != Position::START_FEN {
        if !given("SetUp") {
            push_tag("SetUp", "1");
        }
        if !given("FEN") {
            push_tag("FEN", &start.to_fen());
        }
    }
    out.push('\n');
    let mut words = Vec::with_capacity(moves.len() * 3 / 2 + 1);
    let mut position = start.clone();
    for (i, mv) in moves.iter().enumerate() {
        let number = position.fullmove_number();
        match position.turn() {
            crate::games::Color::White => words.push(format!("{number}.")),
            crate::games::Color::Black if i == 0 => words.push(format!("{number}...")),
            crate::games::Color::Black => {}
        }
        words.push(to_san(&position, mv));
        position.play(mv);
    }
    words.push(result.to_string());
    let mut line_len = 0;
    for word in words {
        if line_len > 0 && line_len + 1 + word.len() > 79 {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(&word);
        line_len += word.len();
    }
    out.push('\n');
    out
}
