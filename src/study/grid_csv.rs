//! Reading a real grid from CSV (the format of `data/README.md`): a header line naming the
//! columns, then one row per cell with its indices `i` (x) and `j` (y) and a value column
//! (`count`, `label`, or any other named column). Plain comma-separated text without quoting.
//!
//! The reader is strict, because a silently misread data file poisons every result built on it:
//! every cell of the model's D x D grid must appear exactly once, and the values must suit the
//! likelihood (Poisson: whole counts >= 0; probit: labels in {0, 1} or {-1, +1}, with 0 read as
//! -1; gaussian: finite numbers). Errors name the file and the 1-based line.

use std::path::{Path, PathBuf};

use crate::model::LikelihoodKind;

/// A grid CSV that cannot be used, with the file and (when the problem is in one row) the line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct GridCsvError {
    pub path: PathBuf,
    /// 1-based line in the file.
    pub line: Option<usize>,
    pub message: String,
}

/// Bytes a data file may spend per grid cell (a row), beyond [`CSV_BASE_BYTES`]: generous for
/// extra columns, small enough that a wrong path (a device, a huge unrelated file) is refused
/// before it exhausts memory.
const CSV_BYTES_PER_CELL: u64 = 1024;
const CSV_BASE_BYTES: u64 = 1024 * 1024;

/// The largest data file read for a `grid` x `grid` grid.
fn max_csv_bytes(grid: usize) -> u64 {
    let cells = (grid as u64).saturating_mul(grid as u64);
    cells
        .saturating_mul(CSV_BYTES_PER_CELL)
        .saturating_add(CSV_BASE_BYTES)
}

/// The values of `column` at every cell of a `grid` x `grid` grid, cell (i, j) at `j * grid + i`.
/// Probit labels come back as -1.0 / +1.0.
pub fn read_grid_csv(
    path: &Path,
    column: &str,
    grid: usize,
    likelihood: LikelihoodKind,
) -> Result<Vec<f64>, GridCsvError> {
    let fail = |line: Option<usize>, message: String| GridCsvError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let limit = max_csv_bytes(grid);
    let bytes = super::read_at_most(path, limit)
        .map_err(|e| fail(None, format!("cannot read the data file: {e}")))?
        .ok_or_else(|| {
            fail(
                None,
                format!(
                    "the data file is larger than {limit} bytes, too large for a {grid} x {grid} grid \
                     ({CSV_BYTES_PER_CELL} bytes per cell allowed)"
                ),
            )
        })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        fail(Some(line), "not a text file: invalid UTF-8".to_string())
    })?;
    parse_grid_csv(&text, path, column, grid, likelihood)
}

/// [`read_grid_csv`] on text already in memory; `path` is used in messages only.
pub fn parse_grid_csv(
    text: &str,
    path: &Path,
    column: &str,
    grid: usize,
    likelihood: LikelihoodKind,
) -> Result<Vec<f64>, GridCsvError> {
    let fail = |line: Option<usize>, message: String| GridCsvError {
        path: path.to_path_buf(),
        line,
        message,
    };
    if let Some(offset) = text.find('\0') {
        let line = text[..offset].matches('\n').count() + 1;
        return Err(fail(
            Some(line),
            "not a text file: it holds a NUL byte".to_string(),
        ));
    }
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(fail(None, "the data file is empty".to_string()));
    };
    let columns = Header::parse(header, column).map_err(|m| fail(Some(header_line), m))?;
    let mut labels = LabelConvention::default();
    let mut cells = Vec::new();
    for (line, row) in lines {
        let cell = columns
            .read_row(row, likelihood, &mut labels)
            .map_err(|m| fail(Some(line), m))?;
        cells.push((line, cell));
    }
    if cells.is_empty() {
        return Err(fail(
            None,
            "the data file has a header but no rows".to_string(),
        ));
    }
    place_cells(&cells, grid).map_err(|(line, m)| fail(line, m))
}

/// Where the needed columns are in each row.
struct Header {
    width: usize,
    i: usize,
    j: usize,
    value: usize,
    value_name: String,
}

impl Header {
    fn parse(line: &str, column: &str) -> Result<Header, String> {
        let names: Vec<&str> = line
            .trim_start_matches('\u{feff}')
            .split(',')
            .map(str::trim)
            .collect();
        for (index, name) in names.iter().enumerate() {
            if names[..index].contains(name) {
                return Err(format!("the header names the column `{name}` twice"));
            }
        }
        let find = |wanted: &str| {
            names.iter().position(|n| *n == wanted).ok_or_else(|| {
                format!(
                    "no column `{wanted}`; the columns are: {}",
                    names.join(", ")
                )
            })
        };
        Ok(Header {
            width: names.len(),
            i: find("i")?,
            j: find("j")?,
            value: find(column)?,
            value_name: column.to_string(),
        })
    }

    fn read_row(
        &self,
        row: &str,
        likelihood: LikelihoodKind,
        labels: &mut LabelConvention,
    ) -> Result<Cell, String> {
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        if fields.len() != self.width {
            return Err(format!(
                "the row has {} fields, the header has {}",
                fields.len(),
                self.width
            ));
        }
        let index = |name: &str, text: &str| {
            text.parse::<usize>()
                .map_err(|_| format!("{name} = `{text}` is not a cell index (a whole number >= 0)"))
        };
        let raw = fields[self.value];
        let number: f64 = raw
            .parse()
            .map_err(|_| format!("{} = `{raw}` is not a number", self.value_name))?;
        let value = match likelihood {
            LikelihoodKind::Poisson => check_count(&self.value_name, raw, number)?,
            LikelihoodKind::Probit => labels.read(&self.value_name, raw, number)?,
            LikelihoodKind::Gaussian if number.is_finite() => number,
            LikelihoodKind::Gaussian => {
                return Err(format!(
                    "{} = `{raw}` is not a finite number",
                    self.value_name
                ));
            }
        };
        Ok(Cell {
            i: index("i", fields[self.i])?,
            j: index("j", fields[self.j])?,
            value,
        })
    }
}

struct Cell {
    i: usize,
    j: usize,
    value: f64,
}

/// Counts beyond 2^53 are not exact in a double.
const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

fn check_count(name: &str, raw: &str, number: f64) -> Result<f64, String> {
    if !number.is_finite() || number < 0.0 || number.fract() != 0.0 || number > MAX_COUNT {
        return Err(format!(
            "{name} = `{raw}` is not a count (Poisson data must be whole numbers >= 0)"
        ));
    }
    Ok(number)
}

/// Which label convention a file uses: {0, 1} or {-1, +1}; mixing them is an error.
#[derive(Default)]
struct LabelConvention {
    zero_one: bool,
    signed: bool,
}

impl LabelConvention {
    fn read(&mut self, name: &str, raw: &str, number: f64) -> Result<f64, String> {
        if number == 0.0 {
            self.zero_one = true;
        } else if number == -1.0 {
            self.signed = true;
        } else if number != 1.0 {
            return Err(format!(
                "{name} = `{raw}` is not a label (probit data must be 0/1 or -1/+1)"
            ));
        }
        if self.zero_one && self.signed {
            return Err(format!(
                "{name} = `{raw}` mixes label conventions: the file uses both 0 and -1"
            ));
        }
        Ok(if number == 1.0 { 1.0 } else { -1.0 })
    }
}

/// Put each cell's value at j * grid + i, checking the file covers the grid exactly once.
fn place_cells(cells: &[(usize, Cell)], grid: usize) -> Result<Vec<f64>, (Option<usize>, String)> {
    let expected = grid.saturating_mul(grid);
    if cells.len() != expected {
        return Err((None, wrong_size_message(cells.len(), grid)));
    }
    let mut values = vec![f64::NAN; expected];
    let mut first_line = vec![0usize; expected];
    for (line, cell) in cells {
        if cell.i >= grid || cell.j >= grid {
            return Err((
                Some(*line),
                format!(
                    "cell (i = {}, j = {}) is outside the model's {grid} x {grid} grid (indices 0 to {})",
                    cell.i,
                    cell.j,
                    grid - 1
                ),
            ));
        }
        let index = cell.j * grid + cell.i;
        if first_line[index] != 0 {
            return Err((
                Some(*line),
                format!(
                    "duplicate cell (i = {}, j = {}), first given on line {}",
                    cell.i, cell.j, first_line[index]
                ),
            ));
        }
        first_line[index] = *line;
        values[index] = cell.value;
    }
    Ok(values)
}

fn wrong_size_message(found: usize, grid: usize) -> String {
    let side = (found as f64).sqrt().round() as usize;
    let shape = if side * side == found {
        format!(" (a {side} x {side} grid)")
    } else {
        " (not a square grid)".to_string()
    };
    format!(
        "the file has {found} cells{shape}, the model's grid is {grid} x {grid} = {} cells",
        grid.saturating_mul(grid)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use LikelihoodKind::*;

    fn parse(
        text: &str,
        column: &str,
        grid: usize,
        likelihood: LikelihoodKind,
    ) -> Result<Vec<f64>, GridCsvError> {
        parse_grid_csv(text, Path::new("data/x.csv"), column, grid, likelihood)
    }

    fn message(text: &str, column: &str, grid: usize, likelihood: LikelihoodKind) -> String {
        parse(text, column, grid, likelihood)
            .unwrap_err()
            .to_string()
    }

    const COUNTS_2X2: &str = "i,j,x_center,y_center,count\n0,0,0.25,0.25,3\n1,0,0.75,0.25,0\n0,1,0.25,0.75,7\n1,1,0.75,0.75,1\n";

    #[test]
    fn reads_counts_j_major_whatever_the_row_order() {
        assert_eq!(
            parse(COUNTS_2X2, "count", 2, Poisson).unwrap(),
            vec![3.0, 0.0, 7.0, 1.0]
        );
        let shuffled = "j,i,count\r\n1,1,1\r\n0,0,3\r\n1,0,7\r\n0,1,0\r\n\r\n";
        assert_eq!(
            parse(shuffled, "count", 2, Poisson).unwrap(),
            vec![3.0, 0.0, 7.0, 1.0]
        );
    }

    #[test]
    fn probit_labels_map_zero_to_minus_one() {
        let text = "i,j,label\n0,0,1\n1,0,0\n0,1,0\n1,1,1\n";
        assert_eq!(
            parse(text, "label", 2, Probit).unwrap(),
            vec![1.0, -1.0, -1.0, 1.0]
        );
        let signed = "i,j,label\n0,0,1\n1,0,-1\n0,1,-1\n1,1,+1\n";
        assert_eq!(
            parse(signed, "label", 2, Probit).unwrap(),
            vec![1.0, -1.0, -1.0, 1.0]
        );
    }

    #[test]
    fn every_error_names_file_and_line() {
        let cases: [(&str, &str, LikelihoodKind, &str); 12] = [
            ("", "count", Poisson, "data/x.csv: the data file is empty"),
            (
                "i,j,count\n",
                "count",
                Poisson,
                "data/x.csv: the data file has a header but no rows",
            ),
            (
                "i,j,x\n0,0,1\n",
                "count",
                Poisson,
                "data/x.csv:1: no column `count`; the columns are: i, j, x",
            ),
            (
                "i,j,count\n0,0,1\n1,0\n",
                "count",
                Poisson,
                "data/x.csv:3: the row has 2 fields, the header has 3",
            ),
            (
                "i,j,count\n0,0,-1\n",
                "count",
                Poisson,
                "data/x.csv:2: count = `-1` is not a count",
            ),
            (
                "i,j,count\n0,0,1.5\n",
                "count",
                Poisson,
                "data/x.csv:2: count = `1.5` is not a count",
            ),
            (
                "i,j,count\n0,0,NaN\n",
                "count",
                Poisson,
                "data/x.csv:2: count = `NaN` is not a count",
            ),
            (
                "i,j,count\n0,0,abc\n",
                "count",
                Poisson,
                "data/x.csv:2: count = `abc` is not a number",
            ),
            (
                "i,j,label\n0,0,2\n",
                "label",
                Probit,
                "data/x.csv:2: label = `2` is not a label",
            ),
            (
                "i,j,label\n0,0,0\n1,0,-1\n",
                "label",
                Probit,
                "data/x.csv:3: label = `-1` mixes label conventions",
            ),
            (
                "i,j,value\n0,0,inf\n",
                "value",
                Gaussian,
                "data/x.csv:2: value = `inf` is not a finite number",
            ),
            (
                "i,j,count\n-1,0,1\n",
                "count",
                Poisson,
                "data/x.csv:2: i = `-1` is not a cell index",
            ),
        ];
        for (text, column, likelihood, expected) in cases {
            let got = message(text, column, 1, likelihood);
            assert!(
                got.starts_with(expected),
                "{got:?} should start with {expected:?}"
            );
        }
    }

    #[test]
    fn grid_coverage_errors_say_what_was_found() {
        let size = message(COUNTS_2X2, "count", 3, Poisson);
        assert_eq!(
            size,
            "data/x.csv: the file has 4 cells (a 2 x 2 grid), the model's grid is 3 x 3 = 9 cells"
        );
        let duplicate = COUNTS_2X2.replace("1,1,0.75,0.75,1", "1,0,0.75,0.75,1");
        assert_eq!(
            message(&duplicate, "count", 2, Poisson),
            "data/x.csv:5: duplicate cell (i = 1, j = 0), first given on line 3"
        );
        let outside = COUNTS_2X2.replace("1,1,0.75", "2,1,0.75");
        assert!(
            message(&outside, "count", 2, Poisson)
                .starts_with("data/x.csv:5: cell (i = 2, j = 1) is outside")
        );
    }

    #[test]
    fn binary_and_missing_files_are_errors() {
        assert!(
            message("i,j,count\n0,\0,1\n", "count", 1, Poisson).contains(":2: not a text file")
        );
        let missing =
            read_grid_csv(Path::new("/nonexistent/x.csv"), "count", 1, Poisson).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/x.csv: cannot read the data file")
        );
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("b.csv");
        std::fs::write(&binary, b"i,j,count\n\xff\xfe\n").unwrap();
        let error = read_grid_csv(&binary, "count", 1, Poisson).unwrap_err();
        assert_eq!(error.line, Some(2));
        assert!(error.message.contains("invalid UTF-8"));
    }

    #[test]
    fn a_file_too_large_for_its_grid_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.csv");
        let row = "0,0,1\n";
        let rows = (max_csv_bytes(1) as usize) / row.len() + 1;
        std::fs::write(&big, format!("i,j,count\n{}", row.repeat(rows))).unwrap();
        let error = read_grid_csv(&big, "count", 1, Poisson).unwrap_err();
        assert!(
            error.message.starts_with("the data file is larger than"),
            "{error}"
        );
        // The same file is within the limit of a larger grid, and then fails on its content.
        let error = read_grid_csv(&big, "count", 64, Poisson).unwrap_err();
        let counted = format!("the file has {rows} cells");
        assert!(error.message.starts_with(&counted), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_refused_instead_of_read_forever() {
        let error = read_grid_csv(Path::new("/dev/zero"), "count", 2, Poisson).unwrap_err();
        assert!(error.message.contains("larger than"), "{error}");
    }

    #[test]
    fn reads_the_real_hickory_presence_grid() {
        // Shipped in data/ (see data/README.md for its provenance).
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lansing_hickory_presence_grid32.csv");
        let path = path.as_path();
        let labels = read_grid_csv(path, "label", 32, Probit).unwrap();
        assert_eq!(labels.len(), 1024);
        assert_eq!(labels.iter().filter(|v| **v == 1.0).count(), 440);
        let wrong = read_grid_csv(path, "label", 16, Probit).unwrap_err();
        assert!(wrong.message.contains("1024 cells (a 32 x 32 grid)"));
    }
}
