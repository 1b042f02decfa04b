//! SGF (FF[4]) for Go: reading the main line of a record, tolerant of what real servers
//! and old editors write, and writing records Kradan makes.
//!
//! Reading is in two layers: a generic SGF tree parser that knows nothing of Go, and the
//! interpretation of its properties as a Go game. Only the main line (the first variation
//! at every branch) is kept: that is the game as played; other variations are commentary.

use super::{Move, Point, handicap_points};
use crate::games::{Color, ParseError};
use std::fmt::Write as _;

/// One property of a node: `AB[dd][pp]` is `("AB", ["dd", "pp"])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub id: String,
    pub values: Vec<String>,
    /// Byte offset of the property in the source, for error messages.
    pub offset: usize,
}

pub type Node = Vec<Property>;

/// The nodes of the first game tree's main line.
pub fn parse_main_line(text: &str) -> Result<Vec<Node>, ParseError> {
    Parser { text, pos: 0 }.main_line()
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> ParseError {
        ParseError::at(self.text, self.pos, message)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn main_line(mut self) -> Result<Vec<Node>, ParseError> {
        // Files from the web often carry a byte-order mark, a mail header or HTML before
        // the record: anything before the first game tree is ignored.
        let Some(start) = self.text.find("(;") else {
            self.pos = self.text.find('(').unwrap_or(0);
            return Err(self.error("no SGF game tree: expected \"(;\""));
        };
        self.pos = start;
        let mut nodes = Vec::new();
        self.game_tree(&mut nodes, true)?;
        Ok(nodes)
    }

    /// Parses a game tree at `(`; its nodes are appended to `main` only while on the main
    /// line, so later variations are checked for syntax but dropped.
    fn game_tree(&mut self, main: &mut Vec<Node>, on_main_line: bool) -> Result<(), ParseError> {
        let open = self.pos;
        self.pos += 1;
        let mut first_variation = true;
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b';') => {
                    self.pos += 1;
                    let node = self.node()?;
                    if on_main_line && first_variation {
                        main.push(node);
                    }
                }
                Some(b'(') => {
                    self.game_tree(main, on_main_line && first_variation)?;
                    first_variation = false;
                }
                Some(b')') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => {
                    return Err(self.error(format!(
                        "unexpected {:?}: expected a node \";\", a variation \"(\" or \")\"",
                        self.text[self.pos..].chars().next().unwrap_or(' ')
                    )));
                }
                None => {
                    self.pos = open;
                    return Err(self.error("game tree opened here is never closed with \")\""));
                }
            }
        }
    }

    fn node(&mut self) -> Result<Node, ParseError> {
        let mut node = Vec::new();
        loop {
            self.skip_whitespace();
            match self.peek() {
                Some(b) if b.is_ascii_alphabetic() => node.push(self.property()?),
                _ => return Ok(node),
            }
        }
    }

    fn property(&mut self) -> Result<Property, ParseError> {
        let offset = self.pos;
        let mut id = String::new();
        while let Some(b) = self.peek().filter(u8::is_ascii_alphabetic) {
            // FF[3] allowed lower-case letters inside identifiers (`AddBlack` for `AB`);
            // they carry no meaning.
            if b.is_ascii_uppercase() {
                id.push(b as char);
            }
            self.pos += 1;
        }
        let mut values = Vec::new();
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'[') {
                break;
            }
            values.push(self.value()?);
        }
        if values.is_empty() {
            self.pos = offset;
            return Err(self.error(format!("property {id} has no value \"[...]\"")));
        }
        if id.is_empty() {
            self.pos = offset;
            return Err(self.error("property name must contain an upper-case letter"));
        }
        Ok(Property { id, values, offset })
    }

    fn value(&mut self) -> Result<String, ParseError> {
        let open = self.pos;
        self.pos += 1;
        let mut value = String::new();
        let mut chars = self.text[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                ']' => {
                    self.pos += i + 1;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    // A backslash before a line break is a soft break, removed (FF[4]).
                    Some((_, '\n')) => {}
                    Some((_, '\r')) => {}
                    Some((_, escaped)) => value.push(escaped),
                    None => break,
                },
                _ => value.push(c),
            }
        }
        self.pos = open;
        Err(self.error("property value opened here is never closed with \"]\""))
    }
}

/// A Go record: game information and the moves of the main line.
#[derive(Clone, Debug, PartialEq)]
pub struct GoRecord {
    pub size: usize,
    pub komi: f64,
    pub handicap: usize,
    /// The `RU` property as written (`Japanese`, `Chinese`, `Thai`…).
    pub rules: Option<String>,
    pub result: Option<String>,
    pub setup_black: Vec<Point>,
    pub setup_white: Vec<Point>,
    /// `PL`: who moves first after the setup, when the record says so.
    pub first_player: Option<Color>,
    /// Other game-information properties kept for writing back (`PB`, `PW`, `DT`, `EV`…).
    pub info: Vec<(String, String)>,
    /// The root comment.
    pub comment: Option<String>,
    pub moves: Vec<RecordedMove>,
    /// `TB`/`TW` territory marks on the last node: servers write them when the game was
    /// counted, and they tell which stones were agreed dead.
    pub territory_black: Vec<Point>,
    pub territory_white: Vec<Point>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedMove {
    pub color: Color,
    pub mv: Move,
    pub comment: Option<String>,
    /// Where the move is in the file, for messages.
    pub line: usize,
}

impl GoRecord {
    pub fn new(size: usize) -> Self {
        GoRecord {
            size,
            komi: super::scoring::THAI_KOMI,
            handicap: 0,
            rules: None,
            result: None,
            setup_black: Vec::new(),
            setup_white: Vec::new(),
            first_player: None,
            info: Vec::new(),
            comment: None,
            moves: Vec::new(),
            territory_black: Vec::new(),
            territory_white: Vec::new(),
        }
    }
}

/// Game-information properties carried through unchanged.
const KEPT_INFO: &[&str] = &[
    "PB", "PW", "BR", "WR", "BT", "WT", "DT", "EV", "RO", "PC", "GN", "GC", "SO", "AN", "US", "TM",
    "OT", "ON", "CP",
];

pub fn read(text: &str) -> Result<GoRecord, ParseError> {
    let nodes = parse_main_line(text)?;
    let root = nodes
        .first()
        .ok_or_else(|| ParseError::at(text, 0, "the game tree has no node"))?;
    let err = |prop: &Property, message: String| ParseError::at(text, prop.offset, message);

    let mut record = GoRecord::new(19);
    for prop in root {
        let value = prop.values[0].trim();
        match prop.id.as_str() {
            "GM" if value != "1" && !value.is_empty() => {
                return Err(err(prop, format!("GM[{value}] is not a Go record (GM[1])")));
            }
            "SZ" => {
                // Rectangular boards (`SZ[19:13]`) are not Go as the rules know it.
                let size = value
                    .parse::<usize>()
                    .map_err(|_| err(prop, format!("SZ[{value}] is not a square board size")))?;
                super::Board::check_size(size).map_err(|message| err(prop, message))?;
                record.size = size;
            }
            "KM" => {
                // Some servers write komi doubled or with a comma; a komi that is no number
                // at all is an error worth stopping for, since it changes the result.
                record.komi = value
                    .replace(',', ".")
                    .parse()
                    .map_err(|_| err(prop, format!("KM[{value}] is not a number")))?;
            }
            "HA" => {
                record.handicap = value
                    .parse()
                    .map_err(|_| err(prop, format!("HA[{value}] is not a number")))?;
            }
            "RU" => record.rules = Some(value.to_string()),
            "RE" => record.result = Some(value.to_string()),
            "PL" => record.first_player = parse_color(value),
            "C" => record.comment = Some(prop.values[0].clone()),
            id if KEPT_INFO.contains(&id) => {
                record.info.push((id.to_string(), prop.values[0].clone()));
            }
            _ => {}
        }
    }

    let size = record.size;
    let point = |prop: &Property, value: &str| -> Result<Option<Point>, ParseError> {
        parse_point(value, size).map_err(|message| err(prop, message))
    };
    for (index, node) in nodes.iter().enumerate() {
        let mut comment = None;
        let mut played = None;
        for prop in node {
            match prop.id.as_str() {
                "AB" | "AW" | "AE" if index > 0 && !record.moves.is_empty() => {
                    return Err(err(
                        prop,
                        format!(
                            "{} in the middle of the game: the record edits the board",
                            prop.id
                        ),
                    ));
                }
                "AB" | "AW" => {
                    for value in expand_point_lists(&prop.values) {
                        if let Some(p) = point(prop, &value)? {
                            if prop.id == "AB" {
                                record.setup_black.push(p);
                            } else {
                                record.setup_white.push(p);
                            }
                        }
                    }
                }
                "B" | "W" => {
                    let color = if prop.id == "B" {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let mv = match point(prop, prop.values[0].trim())? {
                        Some(p) => Move::Play(p),
                        None => Move::Pass,
                    };
                    if played.is_some() {
                        return Err(err(prop, "two moves in one node".to_string()));
                    }
                    let line = ParseError::at(text, prop.offset, "").line;
                    played = Some((color, mv, line));
                }
                "C" if index > 0 => comment = Some(prop.values[0].clone()),
                "TB" | "TW" if index == nodes.len() - 1 => {
                    for value in expand_point_lists(&prop.values) {
                        if let Some(p) = point(prop, &value)? {
                            if prop.id == "TB" {
                                record.territory_black.push(p);
                            } else {
                                record.territory_white.push(p);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some((color, mv, line)) = played {
            record.moves.push(RecordedMove {
                color,
                mv,
                comment,
                line,
            });
        }
    }

    // Some servers record the handicap as Black moves instead of AB stones; those are
    // setup, not Black playing several times in a row.
    if record.handicap >= 2 && record.setup_black.is_empty() {
        let leading = record
            .moves
            .iter()
            .take_while(|m| m.color == Color::Black && m.mv != Move::Pass)
            .count();
        if leading >= record.handicap {
            for recorded in record.moves.drain(..record.handicap) {
                if let Move::Play(p) = recorded.mv {
                    record.setup_black.push(p);
                }
            }
        }
    }
    Ok(record)
}

fn parse_color(value: &str) -> Option<Color> {
    match value.chars().next()? {
        'B' | 'b' => Some(Color::Black),
        'W' | 'w' => Some(Color::White),
        _ => None,
    }
}

/// `None` is a pass: the empty value, or `tt` on boards up to 19×19 (FF[3]).
fn parse_point(value: &str, size: usize) -> Result<Option<Point>, String> {
    if value.is_empty() || (value == "tt" && size <= 19) {
        return Ok(None);
    }
    let bytes = value.as_bytes();
    let coordinate = |b: u8| b.is_ascii_lowercase().then(|| b - b'a');
    match bytes {
        [c, r] => match (coordinate(*c), coordinate(*r)) {
            (Some(col), Some(row)) if (col as usize) < size && (row as usize) < size => {
                Ok(Some(Point::new(row, col)))
            }
            _ => Err(format!("[{value}] is not a point on a {size}×{size} board")),
        },
        _ => Err(format!("[{value}] is not a point (two letters a–z)")),
    }
}

/// Expands FF[4] compressed point lists (`[aa:cc]` is the rectangle) into single points.
fn expand_point_lists(values: &[String]) -> Vec<String> {
    let mut points = Vec::new();
    for value in values {
        let value = value.trim();
        match value.split_once(':') {
            Some((from, to)) if from.len() == 2 && to.len() == 2 => {
                let (f, t) = (from.as_bytes(), to.as_bytes());
                for col in f[0].min(t[0])..=f[0].max(t[0]) {
                    for row in f[1].min(t[1])..=f[1].max(t[1]) {
                        points.push(String::from_utf8_lossy(&[col, row]).into_owned());
                    }
                }
            }
            _ => points.push(value.to_string()),
        }
    }
    points
}

/// Writes `record` as FF[4] SGF: one node per move, game information in the root.
pub fn write(record: &GoRecord) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "(;FF[4]GM[1]CA[UTF-8]AP[Kradan:{}]SZ[{}]KM[{}]",
        env!("CARGO_PKG_VERSION"),
        record.size,
        record.komi
    );
    if record.handicap > 0 {
        let _ = write!(out, "HA[{}]", record.handicap);
    }
    if let Some(rules) = &record.rules {
        let _ = write!(out, "RU[{}]", escape(rules));
    }
    for (id, value) in &record.info {
        let _ = write!(out, "{id}[{}]", escape(value));
    }
    if let Some(result) = &record.result {
        let _ = write!(out, "RE[{}]", escape(result));
    }
    if let Some(color) = record.first_player {
        let _ = write!(out, "PL[{}]", color.letter());
    }
    for (id, stones) in [("AB", &record.setup_black), ("AW", &record.setup_white)] {
        if !stones.is_empty() {
            out.push_str(id);
            for stone in stones {
                let _ = write!(out, "[{}]", stone.to_sgf());
            }
        }
    }
    if let Some(comment) = &record.comment {
        let _ = write!(out, "C[{}]", escape(comment));
    }
    for (index, recorded) in record.moves.iter().enumerate() {
        // A line break every ten moves keeps long records readable in a text editor.
        if index % 10 == 0 {
            out.push('\n');
        }
        let _ = write!(
            out,
            ";{}[{}]",
            recorded.color.letter(),
            recorded.mv.to_sgf()
        );
        if let Some(comment) = &recorded.comment {
            let _ = write!(out, "C[{}]", escape(comment));
        }
    }
    let last_has_territory =
        !record.territory_black.is_empty() || !record.territory_white.is_empty();
    if last_has_territory {
        if record.moves.is_empty() {
            out.push_str("\n;");
        }
        for (id, points) in [
            ("TB", &record.territory_black),
            ("TW", &record.territory_white),
        ] {
            if !points.is_empty() {
                out.push_str(id);
                for p in points {
                    let _ = write!(out, "[{}]", p.to_sgf());
                }
            }
        }
    }
    out.push_str(")\n");
    out
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace(']', "\\]")
}

/// The handicap stones a record should start with: its `AB` stones, or, for a record
/// that gives only `HA`, the fixed star points.
pub fn handicap_setup(record: &GoRecord) -> Result<Vec<Point>, String> {
    if !record.setup_black.is_empty() || record.handicap == 0 {
        Ok(record.setup_black.clone())
    } else {
        handicap_points(record.size, record.handicap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    const SAMPLE: &str = include_str!("../../../samples/go/shusaku-gennan-1846.sgf");

    #[test]
    fn reads_the_bundled_classical_game() {
        let record = read(SAMPLE).unwrap();
        assert_eq!(record.size, 19);
        assert_eq!(record.komi, 0.0);
        assert_eq!(record.moves.len(), 325);
        assert_eq!(record.result.as_deref(), Some("B+2"));
        assert_eq!(record.moves[0].mv, Move::Play(Point::new(3, 16)));
        assert!(
            record
                .info
                .contains(&("PB".into(), "Honinbo Shusaku".into()))
        );
    }

    #[test]
    fn writing_then_reading_gives_the_same_record() {
        let mut record = read(SAMPLE).unwrap();
        record.moves[3].comment = Some("a comment with ] and \\ inside".into());
        record.moves.push(RecordedMove {
            color: Color::White,
            mv: Move::Pass,
            comment: None,
            line: 0,
        });
        record.setup_white.push(Point::new(0, 0));
        record.territory_black.push(Point::new(18, 18));
        let written = write(&record);
        let mut again = read(&written).unwrap();
        // Line numbers are where the moves stand in each file, so they differ.
        for (a, b) in again.moves.iter_mut().zip(&record.moves) {
            a.line = b.line;
        }
        assert_eq!(again, record);
    }

    #[test]
    fn takes_what_real_servers_write() {
        // A byte-order mark and a header before the tree, FF[3] `tt` passes, lower-case
        // letters inside identifiers, compressed point lists, a variation, and a handicap
        // recorded as Black moves instead of AB.
        let text = "\u{feff}Downloaded game\n(;GM[1]FF[3]SZ[9]KoMi[5,5]HA[2]RU[Japanese]\n\
                    ;B[cc];B[gg];W[ee](;B[tt];W[];TB[aa:ab])(;B[dd]))";
        let record = read(text).unwrap();
        assert_eq!(record.komi, 5.5);
        assert_eq!(record.setup_black, vec![Point::new(2, 2), Point::new(6, 6)]);
        let moves: Vec<Move> = record.moves.iter().map(|m| m.mv).collect();
        assert_eq!(
            moves,
            [Move::Play(Point::new(4, 4)), Move::Pass, Move::Pass]
        );
        assert_eq!(
            record.territory_black,
            vec![Point::new(0, 0), Point::new(1, 0)]
        );
    }

    #[test]
    fn malformed_input_is_an_error_with_line_and_column() {
        let error = read("(;GM[1]SZ[19]\n;B[dd];W[pp\n").unwrap_err();
        assert_eq!((error.line, error.column), (2, 9), "{error}");
        let error = read("(;GM[1]SZ[19]\n;B[dd];W[zz])").unwrap_err();
        assert_eq!((error.line, error.column), (2, 8), "{error}");
        assert!(error.message.contains("not a point"), "{error}");
        let error = read("(;SZ[19];B[dd]").unwrap_err();
        assert_eq!((error.line, error.column), (1, 1), "{error}");
        assert!(read("no record here").is_err());
        assert!(
            read("(;GM[2]SZ[8])")
                .unwrap_err()
                .message
                .contains("not a Go record")
        );
        assert!(
            read("(;SZ[30])")
                .unwrap_err()
                .message
                .contains("not supported")
        );
    }

    #[test]
    fn mangled_input_never_panics() {
        let mut rng = SmallRng::seed_from_u64(20261122);
        let source = SAMPLE.as_bytes();
        for _ in 0..3000 {
            let mut bytes = source.to_vec();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..bytes.len());
                match rng.random_range(0..4) {
                    0 => {
                        bytes.remove(at);
                    }
                    1 => {
                        let alphabet = b"()[];\\:BWtSZHA19x\xc3";
                        bytes.insert(at, alphabet[rng.random_range(0..alphabet.len())]);
                    }
                    2 => bytes[at] = rng.random(),
                    _ => bytes.truncate(at),
                }
                if bytes.is_empty() {
                    break;
                }
            }
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(record) = read(&text) {
                let _ = super::super::replay::replay_record(&record);
            }
        }
    }
}
