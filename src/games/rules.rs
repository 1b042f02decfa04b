//! Citations: every flag Kradan raises names the article it comes from and the penalty
//! that article gives (`../shared/RULES.md`), so a referee can check the recorder's claim
//! against the rule book instead of trusting it.

use serde::{Serialize, Serializer};
use std::fmt;

/// The rule books, by the short names RULES.md uses in citations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// Go rules of the Go Association of Thailand.
    Tga,
    /// Thailand Maklom League 2024 Go rules.
    Tml,
    /// Mak-hos school-games regulations.
    HosSchool,
    /// Mak-hos tournament rules.
    Hos,
    /// Makruk tournament rules.
    Makruk,
    /// Thai Wikibooks Go rules.
    Wiki,
}

impl Source {
    pub fn short_name(self) -> &'static str {
        match self {
            Source::Tga => "TGA",
            Source::Tml => "TML",
            Source::HosSchool => "HOS-SCHOOL",
            Source::Hos => "HOS",
            Source::Makruk => "MAKRUK",
            Source::Wiki => "WIKI",
        }
    }
}

/// One article of one rule book, e.g. `TGA 20` or `HOS 3.4`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Article {
    pub source: Source,
    pub number: &'static str,
}

impl Article {
    pub const fn new(source: Source, number: &'static str) -> Self {
        Article { source, number }
    }
}

impl fmt::Display for Article {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.source.short_name(), self.number)
    }
}

impl Serialize for Article {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// What a rule gives for breaking it, in RULES.md's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Penalty {
    Loss,
    Warning,
    LoseTurn,
    Points(u32),
    DrawClaim,
    /// The referee decides; the recorder only reports.
    Advisory,
}

impl fmt::Display for Penalty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Penalty::Loss => f.write_str("loss"),
            Penalty::Warning => f.write_str("warning"),
            Penalty::LoseTurn => f.write_str("lose-turn"),
            Penalty::Points(n) => write!(f, "points({n})"),
            Penalty::DrawClaim => f.write_str("draw-claim"),
            Penalty::Advisory => f.write_str("advisory"),
        }
    }
}

impl Serialize for Penalty {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_print_as_the_rule_book_names_them() {
        assert_eq!(Article::new(Source::Tga, "20").to_string(), "TGA 20");
        assert_eq!(Article::new(Source::HosSchool, "3.5.2").to_string(), "HOS-SCHOOL 3.5.2");
        assert_eq!(Penalty::Points(2).to_string(), "points(2)");
        assert_eq!(
            serde_json::to_string(&Penalty::DrawClaim).unwrap(),
            "\"draw-claim\""
        );
    }
}
