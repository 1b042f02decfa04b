//! PDN 3.0 records of Mak-hos games: `[GameType "31,W,8,8,N1,0"]`, an optional `[FEN]`
//! setup, numeric moves (`9-13`, captures `9x18x27`), a result.
//!
//! The reader is tolerant of what real files hold — comments `{}` and `;`, move numbers,
//! NAGs `$n`, move strength marks `!?*`, variations `( )` (skipped), a missing result —
//! and reports anything else as a [`ParseError`] at its line and column. It does not judge
//! moves: a record may hold illegal ones, which [`super::replay`] reports.

use super::geometry::index_at;
use super::movegen::Move;
use super::position::{Kind, Men, Piece, Position, Square};
use crate::games::{Color, ParseError};
use std::fmt::{self, Write as _};

/// The GameType Kradan writes: Thai draughts (31), White first, 8×8, numeric notation with
/// square 1 at White's bottom right (N1), the bottom-left corner a playing square (0).
pub const GAME_TYPE: &str = "31,W,8,8,N1,0";

/// Tags the reader turns into structure rather than keeping as text.
const STRUCTURAL_TAGS: [&str; 4] = ["Result", "GameType", "FEN", "SetUp"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    WhiteWins,
    BlackWins,
    Draw,
    /// `*`: unfinished or unknown.
    Unknown,
}

impl GameResult {
    pub fn token(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unknown => "*",
        }
    }

    pub fn parse(token: &str) -> Option<GameResult> {
        match token {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" => Some(GameResult::Draw),
            "*" => Some(GameResult::Unknown),
            _ => None,
        }
    }
}

/// A move as a record writes it: its squares, not yet checked against any position.
/// A capture may list every landing square or only the first and last (PDN allows both).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WrittenMove {
    pub squares: Vec<Square>,
    /// Written with `x` (or `:`) rather than `-`. Thai records also write captures with
    /// `-`, so replay goes by the squares, not by this.
    pub capture: bool,
}

impl From<&Move> for WrittenMove {
    fn from(mv: &Move) -> WrittenMove {
        WrittenMove {
            squares: std::iter::once(mv.from())
                .chain(mv.landings().iter().copied())
                .collect(),
            capture: mv.is_capture(),
        }
    }
}

impl fmt::Display for WrittenMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let separator = if self.capture { "x" } else { "-" };
        for (i, square) in self.squares.iter().enumerate() {
            if i > 0 {
                f.write_str(separator)?;
            }
            write!(f, "{square}")?;
        }
        Ok(())
    }
}

/// One game of a PDN file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdnGame {
    /// Tags in file order, without `Result`, `GameType`, `FEN` and `SetUp`, which are
    /// `result` and `start`.
    pub tags: Vec<(String, String)>,
    pub start: Position,
    pub moves: Vec<WrittenMove>,
    pub result: GameResult,
}

impl PdnGame {
    /// A game from `start` with the PDN seven-tag roster left unknown (`?`).
    pub fn new(start: Position) -> PdnGame {
        let tags = ["Event", "Site", "Date", "Round", "White", "Black"]
            .into_iter()
            .map(|name| (name.to_string(), "?".to_string()))
            .collect();
        PdnGame {
            tags,
            start,
            moves: Vec::new(),
            result: GameResult::Unknown,
        }
    }

    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(tag, _)| tag == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The position a record without a FEN tag starts from.
fn standard_start(first: Color) -> Position {
    Position::start(Men::Eight, first)
}

/// Writes `game` as PDN 3.0, with every capture's landing squares in full.
pub fn write_pdn(game: &PdnGame) -> String {
    let mut out = String::new();
    let escape = |value: &str| value.replace('\\', "\\\\").replace('"', "\\\"");
    for (name, value) in &game.tags {
        let _ = writeln!(out, "[{name} \"{}\"]", escape(value));
    }
    let _ = writeln!(out, "[Result \"{}\"]", game.result.token());
    let _ = writeln!(out, "[GameType \"{GAME_TYPE}\"]");
    if game.start != standard_start(Color::White) {
        let _ = writeln!(out, "[FEN \"{}\"]", fen(&game.start));
    }
    out.push('\n');
    let mut line = String::new();
    for (ply, mv) in game.moves.iter().enumerate() {
        let token = if ply % 2 == 0 {
            format!("{}. {mv}", ply / 2 + 1)
        } else {
            mv.to_string()
        };
        append_wrapped(&mut out, &mut line, &token);
    }
    append_wrapped(&mut out, &mut line, game.result.token());
    out.push_str(&line);
    out.push('\n');
    out
}

/// Adds `token` to the movetext line, starting a new line before 80 columns.
fn append_wrapped(out: &mut String, line: &mut String, token: &str) {
    if !line.is_empty() && line.len() + 1 + token.len() > 79 {
        out.push_str(line);
        out.push('\n');
        line.clear();
    }
    if !line.is_empty() {
        line.push(' ');
    }
    line.push_str(token);
}

/// The PDN FEN of `position`, e.g. `W:W1,2,K30:B25,26`.
pub fn fen(position: &Position) -> String {
    let section = |color: Color| {
        let squares: Vec<String> = position
            .pieces(color)
            .map(|(square, piece)| match piece.kind {
                Kind::Man => square.to_string(),
                Kind::King => format!("K{square}"),
            })
            .collect();
        format!("{}{}", color.letter(), squares.join(","))
    };
    format!(
        "{}:{}:{}",
        position.turn().letter(),
        section(Color::White),
        section(Color::Black)
    )
}

/// Reads a PDN FEN such as `W:W21,22,K30:B1-3` on this crate's numbering (the `GameType`
/// it writes).
pub fn read_fen(value: &str) -> Result<Position, ParseError> {
    let reader = Reader {
        text: value,
        pos: 0,
    };
    let tag = RawTag {
        name: "FEN",
        value: value.to_string(),
        value_offset: 0,
    };
    reader.fen(&tag, &Numbering::new(Color::White, 1))
}

/// Reads one move as a record's movetext writes it (`9-13`, `9x18`, `9x18x27`; a move
/// number before it and spaces within it allowed), numbered as Kradan writes records
/// (White at the bottom, GameType 1).
pub fn read_move(text: &str) -> Result<WrittenMove, ParseError> {
    let word: String = text.split_whitespace().collect();
    let reader = Reader {
        text: &word,
        pos: 0,
    };
    reader
        .movetext_word(&word, 0, &Numbering::new(Color::White, 1))?
        .ok_or_else(|| reader.error(0, "expected a move, found nothing"))
}

/// Reads every game of a PDN file.
pub fn read_pdn(text: &str) -> Result<Vec<PdnGame>, ParseError> {
    let mut reader = Reader { text, pos: 0 };
    let mut games = Vec::new();
    loop {
        reader.skip_trivia()?;
        if reader.pos >= text.len() {
            break;
        }
        games.push(reader.game()?);
    }
    if games.is_empty() {
        return Err(ParseError::at(text, 0, "no game found"));
    }
    Ok(games)
}

/// Maps the square numbers a record writes to board squares, following its GameType.
#[derive(Clone, Copy)]
struct Numbering([Square; 32]);

impl Numbering {
    /// Numbers run horizontally from the corner `corner` (0 bottom left, 1 bottom right,
    /// 2 top left, 3 top right) as seen by the player of `start`, over the dark squares.
    fn new(start: Color, corner: u8) -> Numbering {
        let mut squares = [Square::default(); 32];
        let mut next = 0;
        for step_row in 0..8 {
            let view_row = if corner < 2 { 7 - step_row } else { step_row };
            for step_col in 0..8 {
                let view_col = if corner.is_multiple_of(2) {
                    step_col
                } else {
                    7 - step_col
                };
                // Kradan's grid is White's view; Black sees it turned half a circle.
                let (row, col) = match start {
                    Color::White => (view_row, view_col),
                    Color::Black => (7 - view_row, 7 - view_col),
                };
                if let Some(index) = index_at(row, col) {
                    squares[next] = Square::from_index(index);
                    next += 1;
                }
            }
        }
        Numbering(squares)
    }

    fn square(&self, number: u32) -> Option<Square> {
        let index = usize::try_from(number).ok()?.checked_sub(1)?;
        self.0.get(index).copied()
    }
}

/// A tag as written, with where its value starts for error positions.
struct RawTag<'a> {
    name: &'a str,
    value: String,
    value_offset: usize,
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, offset: usize, message: impl Into<String>) -> ParseError {
        ParseError::at(self.text, offset, message)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        while let Some(byte) = self.peek() {
            match byte {
                b if b.is_ascii_whitespace() => self.pos += 1,
                b'{' => {
                    let start = self.pos;
                    match self.text[self.pos..].find('}') {
                        Some(len) => self.pos += len + 1,
                        None => return Err(self.error(start, "comment '{' is never closed")),
                    }
                }
                b';' => {
                    self.pos = self.text[self.pos..]
                        .find('\n')
                        .map_or(self.text.len(), |len| self.pos + len);
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn game(&mut self) -> Result<PdnGame, ParseError> {
        let mut raw_tags = Vec::new();
        while self.peek() == Some(b'[') {
            raw_tags.push(self.tag()?);
            self.skip_trivia()?;
        }
        let mut game = PdnGame {
            tags: Vec::new(),
            start: standard_start(Color::White),
            moves: Vec::new(),
            result: GameResult::Unknown,
        };
        let mut numbering = Numbering::new(Color::White, 1);
        let mut tagged_result = None;
        if let Some(tag) = raw_tags.iter().find(|tag| tag.name == "GameType") {
            let (start, corner) = self.game_type(tag)?;
            numbering = Numbering::new(start, corner);
            game.start = standard_start(start);
        }
        for tag in &raw_tags {
            match tag.name {
                "FEN" => game.start = self.fen(tag, &numbering)?,
                "Result" => tagged_result = GameResult::parse(tag.value.trim()),
                name if STRUCTURAL_TAGS.contains(&name) => {}
                name => game.tags.push((name.to_string(), tag.value.clone())),
            }
        }
        let terminator = self.movetext(&numbering, &mut game.moves)?;
        game.result = tagged_result.or(terminator).unwrap_or(GameResult::Unknown);
        Ok(game)
    }

    fn tag(&mut self) -> Result<RawTag<'a>, ParseError> {
        let open = self.pos;
        self.pos += 1;
        self.skip_spaces();
        let name_start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        let name = &self.text[name_start..self.pos];
        if name.is_empty() {
            return Err(self.error(self.pos, "expected a tag name after '['"));
        }
        self.skip_spaces();
        if self.peek() != Some(b'"') {
            return Err(self.error(self.pos, format!("expected '\"' to open the {name} value")));
        }
        self.pos += 1;
        let value_offset = self.pos;
        let mut value = String::new();
        let mut chars = self.text[self.pos..].char_indices();
        loop {
            match chars.next() {
                None => {
                    return Err(self.error(open, format!("the {name} tag value is never closed")));
                }
                Some((i, '"')) => {
                    self.pos += i + 1;
                    break;
                }
                Some((_, '\\')) => match chars.next() {
                    Some((_, escaped)) => value.push(escaped),
                    None => {
                        return Err(
                            self.error(open, format!("the {name} tag value is never closed"))
                        );
                    }
                },
                Some((_, c)) => value.push(c),
            }
        }
        self.skip_spaces();
        if self.peek() != Some(b']') {
            return Err(self.error(self.pos, format!("expected ']' to close the {name} tag")));
        }
        self.pos += 1;
        Ok(RawTag {
            name,
            value,
            value_offset,
        })
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|b| b == b' ' || b == b'\t') {
            self.pos += 1;
        }
    }

    /// Reads `31[,W|B,8,8,N<corner>[,0]]`; other games and boards are refused.
    fn game_type(&self, tag: &RawTag) -> Result<(Color, u8), ParseError> {
        let at = tag.value_offset;
        let fields: Vec<&str> = tag.value.split(',').map(str::trim).collect();
        if fields[0] != "31" {
            return Err(self.error(
                at,
                format!("GameType {} is not Thai draughts (31)", fields[0]),
            ));
        }
        if fields.len() == 1 {
            return Ok((Color::White, 1));
        }
        let unsupported = || {
            self.error(
                at,
                format!(
                    "GameType \"{}\" is not a Mak-hos board: expected 31,W|B,8,8,N0-3[,0]",
                    tag.value
                ),
            )
        };
        if !(5..=6).contains(&fields.len()) || fields[2] != "8" || fields[3] != "8" {
            return Err(unsupported());
        }
        let start = match fields[1] {
            "W" => Color::White,
            "B" => Color::Black,
            _ => return Err(unsupported()),
        };
        let corner = match fields[4].as_bytes() {
            [b'N', digit @ b'0'..=b'3'] => digit - b'0',
            _ => return Err(unsupported()),
        };
        if fields.get(5).is_some_and(|flag| *flag != "0") {
            return Err(unsupported());
        }
        Ok((start, corner))
    }

    /// Reads a PDN FEN such as `W:W21,22,K30:B1-3`: side to move, then each colour's
    /// pieces, `K` marking kings, ranges allowed.
    fn fen(&self, tag: &RawTag, numbering: &Numbering) -> Result<Position, ParseError> {
        let at = tag.value_offset;
        let value = tag.value.trim_end_matches(['.', ' ']);
        let mut sections = value.split(':');
        let turn = match sections.next().map(str::trim) {
            Some("W") => Color::White,
            Some("B") => Color::Black,
            _ => return Err(self.error(at, "FEN must start with the side to move, W or B")),
        };
        let mut position = Position::empty(turn);
        let mut offset = at + value.find(':').unwrap_or(value.len()) + 1;
        for section in sections {
            let section_at = offset;
            offset += section.len() + 1;
            let section = section.trim();
            let color = match section.as_bytes().first() {
                Some(b'W') => Color::White,
                Some(b'B') => Color::Black,
                _ => return Err(self.error(section_at, "FEN section must start with W or B")),
            };
            for item in section[1..].split(',').map(str::trim) {
                if item.is_empty() {
                    continue;
                }
                let (kind, numbers) = match item.strip_prefix('K') {
                    Some(rest) => (Kind::King, rest),
                    None => (Kind::Man, item),
                };
                let bad = || self.error(section_at, format!("bad FEN square {item:?}"));
                let (first, last) = match numbers.split_once('-') {
                    Some((first, last)) => (first, last),
                    None => (numbers, numbers),
                };
                let first: u32 = first.trim().parse().map_err(|_| bad())?;
                let last: u32 = last.trim().parse().map_err(|_| bad())?;
                if first > last {
                    return Err(bad());
                }
                for number in first..=last {
                    let square = numbering.square(number).ok_or_else(bad)?;
                    if position.piece_at(square).is_some() {
                        return Err(self.error(
                            section_at,
                            format!("FEN puts two pieces on square {number}"),
                        ));
                    }
                    position.set(square, Some(Piece { color, kind }));
                }
            }
        }
        Ok(position)
    }

    /// Reads moves up to and including the result token, or up to the next game's tags.
    fn movetext(
        &mut self,
        numbering: &Numbering,
        moves: &mut Vec<WrittenMove>,
    ) -> Result<Option<GameResult>, ParseError> {
        let mut variation_starts = Vec::new();
        loop {
            self.skip_trivia()?;
            let Some(byte) = self.peek() else {
                break;
            };
            let at = self.pos;
            match byte {
                b'[' if variation_starts.is_empty() => break,
                b'(' => {
                    variation_starts.push(at);
                    self.pos += 1;
                }
                b')' => {
                    if variation_starts.pop().is_none() {
                        return Err(self.error(at, "')' closes no variation"));
                    }
                    self.pos += 1;
                }
                b'$' => {
                    self.pos += 1;
                    while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                        self.pos += 1;
                    }
                }
                _ => {
                    let word = self.word();
                    if word.is_empty() {
                        // A stray delimiter such as ']' or '}' outside its pair.
                        if variation_starts.is_empty() {
                            return Err(self.error(at, format!("unexpected '{}'", byte as char)));
                        }
                        self.pos += 1;
                        continue;
                    }
                    if !variation_starts.is_empty() {
                        continue;
                    }
                    if let Some(result) = GameResult::parse(word) {
                        return Ok(Some(result));
                    }
                    if let Some(mv) = self.movetext_word(word, at, numbering)? {
                        moves.push(mv);
                    }
                }
            }
        }
        if let Some(&open) = variation_starts.last() {
            return Err(self.error(open, "variation '(' is never closed"));
        }
        Ok(None)
    }

    fn word(&mut self) -> &'a str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| !b.is_ascii_whitespace() && !b"{}()[];$".contains(&b))
        {
            self.pos += 1;
        }
        &self.text[start..self.pos]
    }

    /// A move number (`12.`, `12...`), a move (`9-13`, `9x18x27`, `9:18`), or both run
    /// together (`12.9-13`); strength and annotation marks after a move are dropped.
    fn movetext_word(
        &self,
        word: &str,
        at: usize,
        numbering: &Numbering,
    ) -> Result<Option<WrittenMove>, ParseError> {
        let digits = word.bytes().take_while(u8::is_ascii_digit).count();
        let dots = word[digits..].bytes().take_while(|&b| b == b'.').count();
        let (mv, at) = if digits > 0 && dots > 0 {
            (&word[digits + dots..], at + digits + dots)
        } else {
            (word, at)
        };
        let mv = mv.trim_end_matches(['!', '?', '*', '+', '#']);
        if mv.is_empty() {
            return Ok(None);
        }
        let mut squares = Vec::new();
        let mut capture = false;
        let mut offset = at;
        for (i, part) in mv.split(['-', 'x', 'X', ':']).enumerate() {
            if i > 0 {
                capture |= mv.as_bytes()[offset - at - 1] != b'-';
            }
            let number: u32 = part
                .parse()
                .map_err(|_| self.error(offset, format!("expected a move, found {word:?}")))?;
            let square = numbering.square(number).ok_or_else(|| {
                self.error(
                    offset,
                    format!("square {number} is not on the board (1–32)"),
                )
            })?;
            squares.push(square);
            offset += part.len() + 1;
        }
        if squares.len() < 2 {
            return Err(self.error(at, format!("expected a move, found {word:?}")));
        }
        Ok(Some(WrittenMove { squares, capture }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_move_is_read_as_movetext_writes_it() {
        let square = |n| Square::new(n).unwrap();
        assert_eq!(
            read_move("9-13").unwrap(),
            WrittenMove {
                squares: vec![square(9), square(13)],
                capture: false
            }
        );
        let jump = read_move(" 12. 9x18 x27 ").unwrap();
        assert_eq!(jump.squares, [square(9), square(18), square(27)]);
        assert!(jump.capture);
        for bad in ["", "9", "x-y", "9-33"] {
            assert!(read_move(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn both_published_gametypes_number_the_board_alike() {
        let ours = Numbering::new(Color::White, 1);
        let fmjd = Numbering::new(Color::Black, 2);
        for number in 1..=32 {
            assert_eq!(ours.square(number), fmjd.square(number));
            assert_eq!(ours.square(number).map(Square::number), Some(number));
        }
    }
}
