//! The one reader of comma-separated data files (grids, point patterns, covariates, areas,
//! graphs, corpora): the file read with a size limit and checked to be text, then parsed by the
//! `csv` crate into a header and rows, each row with the physical line it starts on, each field
//! read by column name into a number, an integer or an optional value with an error that names
//! the file, the line and the column.
//!
//! The dialect (RFC 4180, as R's `write.csv` and pandas' `to_csv` write it):
//! - fields are separated by commas; a field may be quoted (`"a, b"`, with `""` for a quote
//!   inside), and a quoted field may span lines; a quote opens a quoted field only as the
//!   field's first character;
//! - lines end in LF or CR LF; a byte-order mark at the start is skipped; blank lines (empty or
//!   only spaces) are skipped;
//! - spaces around a field (and around a header name) are trimmed;
//! - the first line that is not blank is the header; a column whose name is empty (the row
//!   names R's `write.csv` and pandas' `to_csv` write first) is never looked up, so it is
//!   ignored; a header that names a column twice is refused;
//! - every row has as many fields as the header;
//! - `NA` or an empty field is a missing value where a reader allows one
//!   ([`Row::optional_finite`]).
//!
//! A file must be UTF-8 without NUL bytes, and is refused unread beyond the size its reader
//! allows (a wrong path to a device or a huge unrelated file must not exhaust memory).

use std::path::{Path, PathBuf};

use super::suggest::{edit_distance, nearest};

/// A data file that cannot be used: the file, the 1-based line when one line is to blame, the
/// column when one column is, and why. Shown as `file:line: message`; the message names the
/// column (`count = `-1` is not a count`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct CsvError {
    pub(crate) path: PathBuf,
    /// 1-based line in the file.
    pub(crate) line: Option<usize>,
    /// The column's name, when one column is to blame.
    pub(crate) column: Option<String>,
    pub(crate) message: String,
}

impl CsvError {
    /// A problem with the file as a whole (no line to blame).
    pub(crate) fn file(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// A problem on `line`.
    pub(crate) fn at_line(path: &Path, line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            ..Self::file(path, message)
        }
    }
}

/// The text of a data file, checked to be UTF-8 text without NUL bytes and with its quotes
/// closed, and the path messages name it by.
#[derive(Debug, Clone)]
pub(crate) struct CsvText {
    path: PathBuf,
    text: String,
}

impl CsvText {
    /// The file at `path`, refused unread when it is larger than `limit` bytes (`why` says why
    /// that is the limit, e.g. "for a points file"). Never reads more than `limit + 1` bytes.
    pub(crate) fn open(path: &Path, limit: u64, why: &str) -> Result<Self, CsvError> {
        let bytes = super::read_at_most(path, limit)
            .map_err(|e| CsvError::file(path, format!("cannot read the data file: {e}")))?
            .ok_or_else(|| {
                CsvError::file(
                    path,
                    format!("the data file is larger than {limit} bytes, too large {why}"),
                )
            })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
            CsvError::at_line(path, line, "not a text file: invalid UTF-8")
        })?;
        Self::new(text, path)
    }

    /// Text already in memory; `path` names it in messages.
    pub(crate) fn new(text: impl Into<String>, path: &Path) -> Result<Self, CsvError> {
        let text = text.into();
        if let Some(offset) = text.find('\0') {
            return Err(CsvError::at_line(
                path,
                line_of(&text, offset),
                "not a text file: it holds a NUL byte",
            ));
        }
        // A byte-order mark holds no line end: lines counted after it are the file's.
        let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
        if let Some(offset) = unclosed_quote(body) {
            return Err(CsvError::at_line(
                path,
                line_of(body, offset),
                "a quoted field is not closed: its opening quote has no closing quote before the \
                 end of the file",
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            text,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The rows, after the header; `what` names the file in the error when it has no header
    /// ("the {what} is empty").
    pub(crate) fn rows(&self, what: &str) -> Result<CsvRows<'_>, CsvError> {
        let body = self.text.strip_prefix('\u{feff}').unwrap_or(&self.text);
        let mut rows = CsvRows {
            path: &self.path,
            text: body,
            reader: csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .trim(csv::Trim::All)
                .from_reader(body.as_bytes()),
            record: csv::StringRecord::new(),
            counted: (0, 1),
            header: Header::default(),
        };
        let Some(line) = rows.next_record()? else {
            return Err(CsvError::file(&self.path, format!("the {what} is empty")));
        };
        let names: Vec<String> = rows.record.iter().map(str::to_string).collect();
        for (index, name) in names.iter().enumerate() {
            if !name.is_empty() && names[..index].contains(name) {
                return Err(CsvError::at_line(
                    &self.path,
                    line,
                    format!("the header names the column `{name}` twice"),
                ));
            }
        }
        rows.header = Header { names, line };
        Ok(rows)
    }

    /// The number of rows after the header.
    pub(crate) fn row_count(&self, what: &str) -> Result<usize, CsvError> {
        let mut rows = self.rows(what)?;
        let mut count = 0;
        while rows.next_row()?.is_some() {
            count += 1;
        }
        Ok(count)
    }
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The byte offset of a quote that opens a field and is never closed, if any: the `csv` crate
/// would read the rest of the file into that field without complaint. Follows its reading: a
/// quote opens a quoted field only as a field's first byte, `""` inside is a quote.
fn unclosed_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut open = None;
    let mut field_start = true;
    let mut k = 0;
    while k < bytes.len() {
        let b = bytes[k];
        match open {
            Some(_) if b == b'"' && bytes.get(k + 1) == Some(&b'"') => k += 1,
            Some(_) if b == b'"' => {
                open = None;
                field_start = false;
            }
            Some(_) => {}
            None => match b {
                b'"' if field_start => open = Some(k),
                b',' | b'\n' | b'\r' => field_start = true,
                _ => field_start = false,
            },
        }
        k += 1;
    }
    open
}

/// The header of a data file: its column names as written (unquoted, trimmed).
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    names: Vec<String>,
    line: usize,
}

/// A column of the header, found by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Column(usize);

impl Column {
    /// The column's 0-based place in a row.
    pub(crate) fn index(self) -> usize {
        self.0
    }
}

impl Header {
    /// The names, in file order (an empty name is a column that is ignored).
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// The 1-based line the header is on.
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The column named `name` (never the empty name), if there is one.
    pub(crate) fn find(&self, name: &str) -> Option<Column> {
        if name.is_empty() {
            return None;
        }
        self.names.iter().position(|n| n == name).map(Column)
    }

    /// The name of `column`.
    pub(crate) fn name(&self, column: Column) -> &str {
        &self.names[column.0]
    }

    /// The error for a column `name` the header lacks, at its line in the file at `path`: it
    /// lists the columns and suggests the closest name; `key` (" (data.x)", or "") says which
    /// setting named the column.
    pub(crate) fn missing(&self, path: &Path, name: &str, key: &str) -> CsvError {
        let named = self.names.iter().map(String::as_str);
        let suggestion = nearest(name, named.filter(|n| !n.is_empty()))
            // One-letter names are all one edit apart: `x` is no typo of `y`.
            .filter(|near| {
                let longest = name.chars().count().max(near.chars().count());
                edit_distance(&name.to_lowercase(), &near.to_lowercase()) < longest
            })
            .map(|near| format!("; did you mean `{near}`?"))
            .unwrap_or_default();
        CsvError {
            column: Some(name.to_string()),
            ..CsvError::at_line(
                path,
                self.line,
                format!(
                    "no column `{name}`{key}; the columns are: {}{suggestion}",
                    self.listed()
                ),
            )
        }
    }

    /// "i, j, count": the names as an error lists them, an empty one as `""`.
    pub(crate) fn listed(&self) -> String {
        let shown: Vec<&str> = self
            .names
            .iter()
            .map(|n| if n.is_empty() { "\"\"" } else { n.as_str() })
            .collect();
        shown.join(", ")
    }
}

/// The rows of a data file after its header, read one at a time (a points file may hold
/// millions).
pub(crate) struct CsvRows<'a> {
    path: &'a Path,
    /// The text after any byte-order mark (the reader's byte offsets are into it).
    text: &'a str,
    reader: csv::Reader<&'a [u8]>,
    record: csv::StringRecord,
    /// (byte, line): a place in `text` whose line is known, so lines are counted once.
    counted: (usize, usize),
    header: Header,
}

impl<'a> CsvRows<'a> {
    pub(crate) fn header(&self) -> &Header {
        &self.header
    }

    /// The column named `name`: an error at the header's line listing the columns and
    /// suggesting the closest name when there is none.
    pub(crate) fn column(&self, name: &str) -> Result<Column, CsvError> {
        self.lookup(name, "")
    }

    /// [`Self::column`] for the column a key names (`data.x`): the error says which key.
    pub(crate) fn column_for(&self, name: &str, key: &str) -> Result<Column, CsvError> {
        self.lookup(name, &format!(" ({key})"))
    }

    fn lookup(&self, name: &str, key: &str) -> Result<Column, CsvError> {
        let header = &self.header;
        header
            .find(name)
            .ok_or_else(|| header.missing(self.path, name, key))
    }

    /// An error at the header's line.
    pub(crate) fn header_error(&self, message: impl Into<String>) -> CsvError {
        CsvError::at_line(self.path, self.header.line, message)
    }

    /// The next row, checked to have as many fields as the header; None after the last.
    pub(crate) fn next_row(&mut self) -> Result<Option<Row<'_>>, CsvError> {
        let Some(line) = self.next_record()? else {
            return Ok(None);
        };
        let (found, wanted) = (self.record.len(), self.header.names.len());
        if found != wanted {
            return Err(CsvError::at_line(
                self.path,
                line,
                format!("the row has {found} fields, the header has {wanted}"),
            ));
        }
        Ok(Some(Row {
            path: self.path,
            header: &self.header,
            record: &self.record,
            line,
        }))
    }

    /// Read the next record that is not a blank line into `self.record`: its 1-based line.
    fn next_record(&mut self) -> Result<Option<usize>, CsvError> {
        loop {
            let more = self.reader.read_record(&mut self.record).map_err(|e| {
                let line = e.position().map_or(self.counted.1, |p| p.line() as usize);
                CsvError::at_line(self.path, line, format!("unreadable CSV: {e}"))
            })?;
            if !more {
                return Ok(None);
            }
            let blank = self.record.len() == 1 && self.record[0].is_empty();
            if blank {
                continue;
            }
            let read_from = self.record.position().map_or(0, |p| p.byte() as usize);
            return Ok(Some(self.line_at(read_from)));
        }
    }

    /// The line of the first byte at or after `from` that does not end a line: where a record
    /// the reader began reading at `from` starts (the reader skips empty lines before it).
    fn line_at(&mut self, from: usize) -> usize {
        let bytes = self.text.as_bytes();
        let start = from
            + bytes[from.min(bytes.len())..]
                .iter()
                .take_while(|b| matches!(b, b'\n' | b'\r'))
                .count();
        let (at, line) = self.counted;
        let line = line
            + bytes[at.min(start)..start]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
        self.counted = (start.max(at), line);
        line
    }
}

/// One row of a data file: its fields by column, its line, and errors located at both.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row<'a> {
    path: &'a Path,
    header: &'a Header,
    record: &'a csv::StringRecord,
    /// The 1-based physical line the row starts on.
    pub(crate) line: usize,
}

/// The words that mean "no value" in a field that may be missing: R's `NA` (pandas writes an
/// empty field).
#[allow(
    dead_code,
    reason = "for the region and sites readers to come (issue 47)"
)]
const MISSING: &str = "NA";

impl<'a> Row<'a> {
    /// The text of `column` (unquoted, trimmed).
    pub(crate) fn text(&self, column: Column) -> &'a str {
        &self.record[column.0]
    }

    /// The name of `column`.
    pub(crate) fn name(&self, column: Column) -> &'a str {
        self.header.name(column)
    }

    /// The fields in file order.
    pub fn fields(&self) -> impl Iterator<Item = &'a str> {
        self.record.iter()
    }

    /// An error on this row about `column`.
    pub(crate) fn error(&self, column: Column, message: impl Into<String>) -> CsvError {
        CsvError {
            column: Some(self.header.name(column).to_string()),
            ..self.line_error(message)
        }
    }

    /// An error on this row, no column to blame.
    pub(crate) fn line_error(&self, message: impl Into<String>) -> CsvError {
        CsvError::at_line(self.path, self.line, message)
    }

    /// `name = `text` is not {what}` for `column`.
    pub(crate) fn not(&self, column: Column, what: &str) -> CsvError {
        let message = format!(
            "{} = `{}` is not {what}",
            self.name(column),
            self.text(column)
        );
        self.error(column, message)
    }

    /// `column` parsed as a `T` (`what` says what it must be, e.g. "a cell index (a whole
    /// number >= 0)").
    pub fn parse<T: std::str::FromStr>(&self, column: Column, what: &str) -> Result<T, CsvError> {
        self.text(column)
            .parse()
            .map_err(|_| self.not(column, what))
    }

    /// `column` as a number (NaN and infinities included: the caller says which it accepts).
    pub(crate) fn number(&self, column: Column) -> Result<f64, CsvError> {
        self.parse(column, "a number")
    }

    /// `column` as a finite number.
    pub(crate) fn finite(&self, column: Column) -> Result<f64, CsvError> {
        match self.text(column).parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.not(column, "a finite number")),
        }
    }

    /// `column` as a finite number, or None where it is empty or `NA`.
    #[allow(
        dead_code,
        reason = "for the region and sites readers to come (issue 47)"
    )]
    pub(crate) fn optional_finite(&self, column: Column) -> Result<Option<f64>, CsvError> {
        if self.is_missing(column) {
            return Ok(None);
        }
        self.finite(column).map(Some)
    }

    /// `column` as a `T`, or None where it is empty or `NA`.
    #[allow(
        dead_code,
        reason = "for the region and sites readers to come (issue 47)"
    )]
    pub(crate) fn optional<T: std::str::FromStr>(
        &self,
        column: Column,
        what: &str,
    ) -> Result<Option<T>, CsvError> {
        if self.is_missing(column) {
            return Ok(None);
        }
        self.parse(column, what).map(Some)
    }

    /// Whether `column` holds no value: empty or `NA`.
    #[allow(
        dead_code,
        reason = "for the region and sites readers to come (issue 47)"
    )]
    pub(crate) fn is_missing(&self, column: Column) -> bool {
        let text = self.text(column);
        text.is_empty() || text == MISSING
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's line and fields of `text` (header first, with line 0 standing for its own).
    /// A file's header names and its rows, each with its line.
    type Read = (Vec<String>, Vec<(usize, Vec<String>)>);

    fn read(text: &str) -> Result<Read, CsvError> {
        let csv = CsvText::new(text, Path::new("d.csv"))?;
        let mut rows = csv.rows("data file")?;
        let header = rows.header().names().to_vec();
        let mut read = Vec::new();
        while let Some(row) = rows.next_row()? {
            read.push((row.line, row.fields().map(str::to_string).collect()));
        }
        Ok((header, read))
    }

    fn owned(fields: &[&str]) -> Vec<String> {
        fields.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn quoted_header_and_fields_read_as_their_text() {
        let (header, rows) = read("\"i\",\"j\",\"note\"\n0,\"1\",\"say \"\"hi\"\"\"\n").unwrap();
        assert_eq!(header, owned(&["i", "j", "note"]));
        assert_eq!(rows, vec![(2, owned(&["0", "1", "say \"hi\""]))]);
    }

    #[test]
    fn a_quoted_field_may_hold_a_comma() {
        let (_, rows) = read("x,mark\n1,\"a, b\"\n").unwrap();
        assert_eq!(rows, vec![(2, owned(&["1", "a, b"]))]);
    }

    #[test]
    fn crlf_line_ends_and_blank_lines_keep_physical_line_numbers() {
        let (header, rows) = read("\r\ni,count\r\n0,1\r\n\r\n  \r\n1,2\r\n").unwrap();
        assert_eq!(header, owned(&["i", "count"]));
        assert_eq!(rows, vec![(3, owned(&["0", "1"])), (6, owned(&["1", "2"]))]);
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_name() {
        let (header, rows) = read("\u{feff}\"x\",y\n1,2\n").unwrap();
        assert_eq!(header, owned(&["x", "y"]));
        assert_eq!(rows, vec![(2, owned(&["1", "2"]))]);
    }

    #[test]
    fn a_quoted_field_spanning_lines_keeps_later_rows_on_their_lines() {
        let text = "id,note,v\n1,\"two\nlines\",5\n2,\"three\r\nmore\r\nlines\",6\n3,x,oops\n";
        let (_, rows) = read(text).unwrap();
        let lines: Vec<usize> = rows.iter().map(|(line, _)| *line).collect();
        assert_eq!(lines, vec![2, 4, 7]);
        assert_eq!(rows[0].1[1], "two\nlines");
        // An error in the row after them names its physical line.
        let csv = CsvText::new(text, Path::new("d.csv")).unwrap();
        let mut read = csv.rows("data file").unwrap();
        let v = read.column("v").unwrap();
        let mut last = None;
        while let Some(row) = read.next_row().unwrap() {
            last = Some(row.finite(v).map_err(|e| e.to_string()));
        }
        assert_eq!(
            last,
            Some(Err("d.csv:7: v = `oops` is not a finite number".to_string()))
        );
    }

    #[test]
    fn a_row_with_the_wrong_number_of_fields_is_refused_at_its_line() {
        let error = read("a,b,c\n1,2,3\n\n1,2\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "d.csv:4: the row has 2 fields, the header has 3"
        );
        assert_eq!(error.line, Some(4));
    }

    #[test]
    fn empty_and_na_cells_are_missing_where_allowed() {
        let text = "x,v,n\n1,,NA\n2,NA,\n3,0.5,7\n4,nan,x\n";
        let csv = CsvText::new(text, Path::new("d.csv")).unwrap();
        let mut rows = csv.rows("data file").unwrap();
        let (v, n) = (rows.column("v").unwrap(), rows.column("n").unwrap());
        let mut got = Vec::new();
        while let Some(row) = rows.next_row().unwrap() {
            got.push((
                row.optional_finite(v).map_err(|e| e.to_string()),
                row.optional::<u32>(n, "a whole number")
                    .map_err(|e| e.to_string()),
            ));
        }
        assert_eq!(got[0], (Ok(None), Ok(None)));
        assert_eq!(got[1], (Ok(None), Ok(None)));
        assert_eq!(got[2], (Ok(Some(0.5)), Ok(Some(7))));
        assert_eq!(
            got[3],
            (
                Err("d.csv:5: v = `nan` is not a finite number".to_string()),
                Err("d.csv:5: n = `x` is not a whole number".to_string())
            )
        );
    }

    #[test]
    fn an_empty_named_column_is_ignored_and_may_repeat() {
        let csv = CsvText::new("\"\",\"\",\"x\"\n\"1\",a,2\n", Path::new("d.csv")).unwrap();
        let rows = csv.rows("data file").unwrap();
        assert_eq!(rows.header().find(""), None);
        assert_eq!(rows.header().find("x"), Some(Column(2)));
        let error = rows.column("").unwrap_err().to_string();
        assert!(error.contains("the columns are: \"\", \"\", x"), "{error}");
    }

    #[test]
    fn a_missing_column_lists_the_columns_and_suggests_the_closest() {
        let csv = CsvText::new("\"i\",\"j\",\"count\"\n0,0,1\n", Path::new("d.csv")).unwrap();
        let rows = csv.rows("data file").unwrap();
        let error = rows.column("cont").unwrap_err();
        assert_eq!(
            error.to_string(),
            "d.csv:1: no column `cont`; the columns are: i, j, count; did you mean `count`?"
        );
        assert_eq!(error.column.as_deref(), Some("cont"));
        let keyed = rows.column_for("east", "data.x").unwrap_err().to_string();
        assert_eq!(
            keyed,
            "d.csv:1: no column `east` (data.x); the columns are: i, j, count"
        );
        // A one-letter name is no typo of another.
        let letter = rows.column("k").unwrap_err().to_string();
        assert!(!letter.contains("did you mean"), "{letter}");
        let case = rows.column("I").unwrap_err().to_string();
        assert!(case.ends_with("did you mean `i`?"), "{case}");
    }

    #[test]
    fn broken_files_are_refused_with_their_line() {
        let message = |text: &str| read(text).unwrap_err().to_string();
        assert_eq!(message(""), "d.csv: the data file is empty");
        assert_eq!(message("\u{feff}\r\n \n"), "d.csv: the data file is empty");
        assert_eq!(
            message("x,y,x\n1,2,3\n"),
            "d.csv:1: the header names the column `x` twice"
        );
        assert!(
            message("x,y\n1,2\n3,\"open\n4,5\n")
                .starts_with("d.csv:3: a quoted field is not closed")
        );
        assert!(message("x,y\n1,\x002\n").starts_with("d.csv:2: not a text file: it holds a NUL"));
        // Quotes inside an unquoted field are text, and close nothing.
        let (_, rows) = read("x,y\n1,a\"b\n").unwrap();
        assert_eq!(rows, vec![(2, owned(&["1", "a\"b"]))]);
    }

    #[test]
    fn open_refuses_large_binary_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.csv");
        std::fs::write(&big, "x\n1\n2\n").unwrap();
        let error = CsvText::open(&big, 4, "for a test").unwrap_err();
        assert!(
            error
                .message
                .starts_with("the data file is larger than 4 bytes, too large for a test"),
            "{error}"
        );
        assert!(CsvText::open(&big, 6, "").is_ok());
        let binary = dir.path().join("b.csv");
        std::fs::write(&binary, b"x\n\xff\n").unwrap();
        let error = CsvText::open(&binary, 100, "").unwrap_err();
        assert_eq!(
            (error.line, error.message.as_str()),
            (Some(2), "not a text file: invalid UTF-8")
        );
        let missing = CsvText::open(&dir.path().join("none.csv"), 100, "").unwrap_err();
        assert!(missing.message.starts_with("cannot read the data file"));
    }
}
