//! The one error type of study loading and validation, and how byte offsets in a study file
//! become `file:line:column` locations.
//!
//! Every [`StudyError`] names a place: the file and, whenever the problem is inside it, the line
//! and column (1-based, columns counted in characters). Its `Display` is the message a person
//! sees, e.g.
//!
//! ```text
//! studies/x.toml:12:1: unknown key `lenght_scale` in [model]
//!   allowed: grid, kernel, length_scale, variance, likelihood, offset
//!   help: did you mean `length_scale`?
//! ```

use std::fmt;
use std::ops::Range;

/// Where a problem is: a file and, when known, a line and column in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file as the user named it.
    pub(crate) file: String,
    /// 1-based line and column (in characters), if the problem is at a place in the file.
    pub(crate) position: Option<(usize, usize)>,
}

impl Location {
    /// The whole file (missing, unreadable, not text...).
    pub(crate) fn file(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            position: None,
        }
    }

    pub fn line(&self) -> Option<usize> {
        self.position.map(|(line, _)| line)
    }

    pub fn column(&self) -> Option<usize> {
        self.position.map(|(_, column)| column)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}", self.file),
            None => f.write_str(&self.file),
        }
    }
}

/// What class of problem a [`StudyError`] is (for callers and tests; the message says more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is missing or cannot be read.
    Unreadable,
    /// The file is not UTF-8 text.
    NotText,
    /// The file holds nothing but whitespace and comments.
    Empty,
    /// TOML syntax, including duplicate keys.
    Syntax,
    UnknownSection,
    UnknownKey,
    /// A value of the wrong type ("expected an integer, found a float").
    WrongType,
    /// A value outside the key's allowed range.
    OutOfRange,
    /// Settings that contradict each other, or a required one that is missing.
    Conflict,
    /// A malformed `[sweep]`: empty list, mixed types, a key swept twice, paired lists of
    /// unequal length, a key that cannot be swept.
    Sweep,
    /// A job too large for memory, or a study with too many jobs.
    TooLarge,
    /// A data file a study names (a grid, points or covariates CSV...) is missing or malformed.
    Data,
}

/// One extra line under the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// What the key accepts.
    Allowed(String),
    /// How to fix it.
    Help(String),
    /// Context (e.g. which sweep point the problem appears in).
    Note(String),
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::Allowed(text) => write!(f, "  allowed: {text}"),
            Detail::Help(text) => write!(f, "  help: {text}"),
            Detail::Note(text) => write!(f, "  note: {text}"),
        }
    }
}

/// A study that cannot be loaded, with where and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {message}{}", render_details(.details))]
pub struct StudyError {
    pub(crate) kind: ErrorKind,
    pub(crate) location: Location,
    pub(crate) message: String,
    pub(crate) details: Vec<Detail>,
}

fn render_details(details: &[Detail]) -> String {
    details.iter().map(|d| format!("\n{d}")).collect()
}

impl StudyError {
    pub(crate) fn new(kind: ErrorKind, location: Location, message: impl Into<String>) -> Self {
        Self {
            kind,
            location,
            message: message.into(),
            details: Vec::new(),
        }
    }

    pub(crate) fn allowed(mut self, text: impl Into<String>) -> Self {
        self.details.push(Detail::Allowed(text.into()));
        self
    }

    pub(crate) fn help(mut self, text: impl Into<String>) -> Self {
        self.details.push(Detail::Help(text.into()));
        self
    }

    pub(crate) fn note(mut self, text: impl Into<String>) -> Self {
        self.details.push(Detail::Note(text.into()));
        self
    }

    /// Add a help line only when there is one.
    pub(crate) fn maybe_help(self, text: Option<String>) -> Self {
        match text {
            Some(text) => self.help(text),
            None => self,
        }
    }
}

/// A study file's name and text: turns byte spans into [`Location`]s.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceMap<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
}

impl<'a> SourceMap<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Self { file, text }
    }

    /// The location of the byte at `offset` (clamped into the text).
    pub(crate) fn locate(&self, offset: usize) -> Location {
        let (line, column) = line_column(self.text, offset);
        Location {
            file: self.file.to_string(),
            position: Some((line, column)),
        }
    }

    /// The location of the start of `span`.
    pub(crate) fn at(&self, span: &Range<usize>) -> Location {
        self.locate(span.start)
    }

    /// The text of `span`, or "" when the span is not valid for the text.
    pub(crate) fn slice(&self, span: &Range<usize>) -> &'a str {
        self.text.get(span.clone()).unwrap_or("")
    }

    /// An error at `span`.
    pub(crate) fn error(
        &self,
        kind: ErrorKind,
        span: &Range<usize>,
        message: impl Into<String>,
    ) -> StudyError {
        StudyError::new(kind, self.at(span), message)
    }

    /// An error about the file as a whole, placed at its first line.
    pub(crate) fn error_at_start(&self, kind: ErrorKind, message: impl Into<String>) -> StudyError {
        StudyError::new(kind, self.locate(0), message)
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`. Offsets past the end
/// point just after the last character; offsets inside a character point at that character.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_counts_lines_and_characters() {
        let text = "a = 1\nb = \"é\"\nc";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (1, 5));
        assert_eq!(line_column(text, 6), (2, 1));
        // The byte after the two-byte é is the closing quote, the 7th character of line 2.
        let quote = text.rfind('"').unwrap();
        assert_eq!(line_column(text, quote), (2, 7));
        // Inside a multi-byte character and past the end: clamped, no panic.
        assert_eq!(line_column(text, quote - 1), (2, 6));
        assert_eq!(line_column(text, 10_000), (3, 2));
    }

    #[test]
    fn display_puts_location_first_and_details_on_their_own_lines() {
        let source = SourceMap::new("studies/x.toml", "[model]\nlenght_scale = 1\n");
        let error = source
            .error(
                ErrorKind::UnknownKey,
                &(8..20),
                "unknown key `lenght_scale` in [model]",
            )
            .allowed("grid, length_scale")
            .help("did you mean `length_scale`?");
        assert_eq!(
            error.to_string(),
            "studies/x.toml:2:1: unknown key `lenght_scale` in [model]\n  allowed: grid, length_scale\n  help: did you mean `length_scale`?"
        );
        assert_eq!(Location::file("a.toml").to_string(), "a.toml");
    }
}
