//! Reading a real grid from CSV (the format of `data/README.md`): a header line naming the
//! columns, then one row per cell with its indices `i` (x) and `j` (y; may be left out on a 1-D
//! grid), optionally its centre `x_center`, `y_center`, and a value column (`count`, `label`, or
//! any other named column). Plain comma-separated text without quoting.
//!
//! The reader is strict, because a silently misread data file poisons every result built on it:
//! every cell of the model's `nx x ny` grid must appear exactly once, and the values must suit
//! the likelihood (Poisson: whole counts >= 0; probit: labels in {0, 1} or {-1, +1}, with 0 read
//! as -1; gaussian: finite numbers). When the file gives the cell centres, they must lie on a
//! regular grid (each within a thousandth of a cell of it), and they give the physical window
//! the cells tile, [first centre - h/2, last centre + h/2] along each axis with h the spacing:
//! that window is what length scales are measured in. Errors name the file and the 1-based line.

use std::path::{Path, PathBuf};

use crate::model::LikelihoodKind;
use crate::model::grid::Window;

/// A grid CSV that cannot be used, with the file and (when the problem is in one row) the line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct GridCsvError {
    pub path: PathBuf,
    /// 1-based line in the file.
    pub line: Option<usize>,
    pub message: String,
}

/// A grid read from CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct GridData {
    /// The value of every cell, cell (i, j) at `j * nx + i`. Probit labels are -1.0 / +1.0.
    pub values: Vec<f64>,
    /// The window the cells tile, from the cell centres (None when the file has none, or a
    /// single cell along x). On a 1-D grid its y range is (0, 0).
    pub window: Option<Window>,
}

/// Bytes a data file may spend per grid cell (a row), beyond [`CSV_BASE_BYTES`]: generous for
/// extra columns, small enough that a wrong path (a device, a huge unrelated file) is refused
/// before it exhausts memory.
const CSV_BYTES_PER_CELL: u64 = 1024;
const CSV_BASE_BYTES: u64 = 1024 * 1024;

/// How far a centre may lie from the regular grid, in cells (the shipped files give centres to
/// six or seven significant digits).
const CENTRE_TOLERANCE: f64 = 1e-3;

/// The largest data file read for a grid of `cells` cells.
fn max_csv_bytes(cells: usize) -> u64 {
    (cells as u64)
        .saturating_mul(CSV_BYTES_PER_CELL)
        .saturating_add(CSV_BASE_BYTES)
}

/// The grid `dims` = (nx, ny) of `column` read from the CSV at `path`.
pub fn read_grid_csv(
    path: &Path,
    column: &str,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, GridCsvError> {
    parse_grid_csv(&read_text(path, dims)?, path, column, dims, likelihood)
}

/// The text of the CSV at `path`, refused unread when the file is too large for a grid of `dims`.
fn read_text(path: &Path, dims: (usize, usize)) -> Result<String, GridCsvError> {
    let cells = dims.0.saturating_mul(dims.1);
    let limit = max_csv_bytes(cells);
    let why = format!("for a grid of {cells} cells ({CSV_BYTES_PER_CELL} bytes per cell allowed)");
    read_text_at_most(path, limit, &why).map_err(|(line, message)| GridCsvError {
        path: path.to_path_buf(),
        line,
        message,
    })
}

/// The text of the data file at `path`, refused unread when it is larger than `limit` bytes
/// (`why` says why that is the limit), or when it is not text (invalid UTF-8, a NUL byte). A
/// problem is its 1-based line, when one line is to blame, and a sentence. Shared by the
/// readers of this family's data files.
pub(super) fn read_text_at_most(
    path: &Path,
    limit: u64,
    why: &str,
) -> Result<String, (Option<usize>, String)> {
    let bytes = crate::study::read_at_most(path, limit)
        .map_err(|e| (None, format!("cannot read the data file: {e}")))?
        .ok_or_else(|| {
            (
                None,
                format!("the data file is larger than {limit} bytes, too large {why}"),
            )
        })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        (Some(line), "not a text file: invalid UTF-8".to_string())
    })?;
    check_no_nul(&text)?;
    Ok(text)
}

/// A text with a NUL byte is not a CSV: the line it is on.
fn check_no_nul(text: &str) -> Result<(), (Option<usize>, String)> {
    match text.find('\0') {
        Some(offset) => Err((
            Some(text[..offset].matches('\n').count() + 1),
            "not a text file: it holds a NUL byte".to_string(),
        )),
        None => Ok(()),
    }
}

/// The non-blank lines of `text`, each with its 1-based line number, line endings trimmed.
pub(super) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.trim_end_matches('\r')))
        .filter(|(_, line)| !line.trim().is_empty())
}

/// [`read_grid_csv`] on text already in memory; `path` is used in messages only.
pub fn parse_grid_csv(
    text: &str,
    path: &Path,
    column: &str,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, GridCsvError> {
    let fail = |line: Option<usize>, message: String| GridCsvError {
        path: path.to_path_buf(),
        line,
        message,
    };
    check_no_nul(text).map_err(|(line, m)| fail(line, m))?;
    let mut lines = numbered_lines(text);
    let Some((header_line, header)) = lines.next() else {
        return Err(fail(None, "the data file is empty".to_string()));
    };
    let columns = Header::parse(header, column, dims).map_err(|m| fail(Some(header_line), m))?;
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
    let values = place_cells(&cells, dims).map_err(|(line, m)| fail(line, m))?;
    let window = if columns.has_centres() {
        window_of(&cells, dims).map_err(|(line, m)| fail(line, m))?
    } else {
        None
    };
    Ok(GridData { values, window })
}

/// Where the needed columns are in each row.
struct Header {
    width: usize,
    i: usize,
    /// None on a 1-D grid whose file has no `j` (every row is j = 0).
    j: Option<usize>,
    x_center: Option<usize>,
    y_center: Option<usize>,
    value: usize,
    value_name: String,
}

impl Header {
    fn parse(line: &str, column: &str, dims: (usize, usize)) -> Result<Header, String> {
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
        let position = |wanted: &str| names.iter().position(|n| *n == wanted);
        let find = |wanted: &str| {
            position(wanted).ok_or_else(|| {
                format!(
                    "no column `{wanted}`; the columns are: {}",
                    names.join(", ")
                )
            })
        };
        let line_grid = dims.1 == 1;
        let header = Header {
            width: names.len(),
            i: find("i")?,
            j: if line_grid {
                position("j")
            } else {
                Some(find("j")?)
            },
            x_center: position("x_center"),
            y_center: position("y_center"),
            value: find(column)?,
            value_name: column.to_string(),
        };
        if !line_grid && header.x_center.is_some() != header.y_center.is_some() {
            return Err(
                "the header gives one of x_center and y_center but not the other: give both \
                 (the cell centres) or neither"
                    .to_string(),
            );
        }
        Ok(header)
    }

    /// Whether rows carry the centres the window is found from.
    fn has_centres(&self) -> bool {
        self.x_center.is_some()
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
        let centre = |name: &str, at: Option<usize>| -> Result<Option<f64>, String> {
            let Some(at) = at else { return Ok(None) };
            let text = fields[at];
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(format!("{name} = `{text}` is not a finite number")),
            }
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
            j: match self.j {
                Some(at) => index("j", fields[at])?,
                None => 0,
            },
            x: centre("x_center", self.x_center)?,
            y: centre("y_center", self.y_center)?,
            value,
        })
    }
}

struct Cell {
    i: usize,
    j: usize,
    x: Option<f64>,
    y: Option<f64>,
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

/// A problem with the file, at a line when one row is to blame.
type RowError = (Option<usize>, String);

/// Put each cell's value at j * nx + i, checking the file covers the grid exactly once.
fn place_cells(cells: &[(usize, Cell)], (nx, ny): (usize, usize)) -> Result<Vec<f64>, RowError> {
    let expected = nx.saturating_mul(ny);
    if cells.len() != expected {
        return Err((None, wrong_size_message(cells.len(), (nx, ny))));
    }
    let mut values = vec![f64::NAN; expected];
    let mut first_line = vec![0usize; expected];
    for (line, cell) in cells {
        if cell.i >= nx || cell.j >= ny {
            return Err((
                Some(*line),
                format!(
                    "cell (i = {}, j = {}) is outside the model's {} grid (i from 0 to {}, j from 0 to {})",
                    cell.i,
                    cell.j,
                    describe(nx, ny),
                    nx - 1,
                    ny - 1
                ),
            ));
        }
        let index = cell.j * nx + cell.i;
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

/// The window the cell centres imply, checking they lie on a regular grid.
fn window_of(
    cells: &[(usize, Cell)],
    (nx, ny): (usize, usize),
) -> Result<Option<Window>, RowError> {
    let x = axis_range(cells, nx, "x_center", "i", |c| (c.i, c.x))?;
    let y = if ny == 1 {
        Some((0.0, 0.0))
    } else {
        axis_range(cells, ny, "y_center", "j", |c| (c.j, c.y))?
    };
    Ok(x.zip(y).map(|(x, y)| Window { x, y }))
}

/// [first centre - h/2, last centre + h/2] along one axis of `points` points, h the spacing of
/// the first and last centres; None for a single point (no spacing to find).
fn axis_range(
    cells: &[(usize, Cell)],
    points: usize,
    name: &str,
    index_name: &str,
    of: impl Fn(&Cell) -> (usize, Option<f64>),
) -> Result<Option<(f64, f64)>, RowError> {
    let mut centres = vec![f64::NAN; points];
    for (_, cell) in cells {
        if let (k, Some(c)) = of(cell) {
            centres[k] = c;
        }
    }
    if points < 2 {
        return Ok(None);
    }
    let (first, last) = (centres[0], centres[points - 1]);
    let spacing = (last - first) / (points - 1) as f64;
    if spacing.is_nan() || spacing <= 0.0 {
        return Err((
            None,
            format!("{name} does not increase with {index_name}: the cell centres are not a grid"),
        ));
    }
    for (line, cell) in cells {
        let (k, centre) = of(cell);
        let expected = first + k as f64 * spacing;
        if let Some(c) = centre
            && (c - expected).abs() > CENTRE_TOLERANCE * spacing
        {
            return Err((
                Some(*line),
                format!(
                    "{name} = {c} is off the regular grid: {index_name} = {k} should be at \
                     {expected} (centres from {first} to {last}, spacing {spacing})"
                ),
            ));
        }
    }
    Ok(Some((first - spacing / 2.0, last + spacing / 2.0)))
}

/// "32 x 32", or "811-cell 1-D".
fn describe(nx: usize, ny: usize) -> String {
    if ny == 1 {
        format!("{nx}-cell 1-D")
    } else {
        format!("{nx} x {ny}")
    }
}

fn wrong_size_message(found: usize, (nx, ny): (usize, usize)) -> String {
    let side = (found as f64).sqrt().round() as usize;
    let shape = if side * side == found {
        format!(" (a {side} x {side} grid)")
    } else {
        " (not a square grid)".to_string()
    };
    format!(
        "the file has {found} cells{shape}, the model's grid is {} = {} cells",
        describe(nx, ny),
        nx.saturating_mul(ny)
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
        parse_grid_csv(
            text,
            Path::new("data/x.csv"),
            column,
            (grid, grid),
            likelihood,
        )
        .map(|data| data.values)
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
            read_grid_csv(Path::new("/nonexistent/x.csv"), "count", (1, 1), Poisson).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/x.csv: cannot read the data file")
        );
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("b.csv");
        std::fs::write(&binary, b"i,j,count\n\xff\xfe\n").unwrap();
        let error = read_grid_csv(&binary, "count", (1, 1), Poisson).unwrap_err();
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
        let error = read_grid_csv(&big, "count", (1, 1), Poisson).unwrap_err();
        assert!(
            error.message.starts_with("the data file is larger than"),
            "{error}"
        );
        // The same file is within the limit of a larger grid, and then fails on its content.
        let error = read_grid_csv(&big, "count", (64, 64), Poisson).unwrap_err();
        let counted = format!("the file has {rows} cells");
        assert!(error.message.starts_with(&counted), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_is_refused_instead_of_read_forever() {
        let error = read_grid_csv(Path::new("/dev/zero"), "count", (2, 2), Poisson).unwrap_err();
        assert!(error.message.contains("larger than"), "{error}");
    }

    /// The values and window read from `text` with a `count` column on a `dims` grid.
    fn values_and_window(text: &str, dims: (usize, usize)) -> (Vec<f64>, Option<Window>) {
        let data = parse_grid_csv(text, Path::new("data/x.csv"), "count", dims, Poisson).unwrap();
        (data.values, data.window)
    }

    #[test]
    fn cell_centres_give_the_window_the_cells_tile() {
        let text = "i,j,x_center,y_center,count\n0,0,0.25,0.5,1\n1,0,0.75,0.5,2\n0,1,0.25,1.5,3\n1,1,0.75,1.5,4\n";
        let tiled = Window {
            x: (0.0, 1.0),
            y: (0.0, 2.0),
        };
        assert_eq!(
            values_and_window(text, (2, 2)),
            (vec![1.0, 2.0, 3.0, 4.0], Some(tiled))
        );
        let no_centres = values_and_window("i,j,count\n0,0,1\n", (1, 1));
        assert_eq!(no_centres, (vec![1.0], None));
    }

    #[test]
    fn centres_off_a_regular_grid_are_refused() {
        let shifted = "i,j,x_center,y_center,count\n0,0,0.25,0.5,1\n1,0,0.8,0.5,2\n0,1,0.25,1.5,3\n1,1,0.75,1.5,4\n";
        let error = message(shifted, "count", 2, Poisson);
        assert!(
            error.starts_with("data/x.csv:3: x_center = 0.8 is off the regular grid"),
            "{error}"
        );
        let reversed = "i,j,x_center,y_center,count\n0,0,0.75,0.5,1\n1,0,0.25,0.5,2\n0,1,0.75,1.5,3\n1,1,0.25,1.5,4\n";
        let error = message(reversed, "count", 2, Poisson);
        assert!(
            error.contains("x_center does not increase with i"),
            "{error}"
        );
        let half = "i,j,x_center,count\n0,0,0.25,1\n";
        let error = message(half, "count", 2, Poisson);
        assert!(
            error.starts_with("data/x.csv:1: the header gives one of x_center"),
            "{error}"
        );
    }

    /// A 1-D grid needs no `j` column; its centres give the x range.
    #[test]
    fn one_dimensional_grids_read_without_j() {
        let text = "i,x_center,count\n0,25,1\n1,75,0\n2,125,3\n";
        let line = Window {
            x: (0.0, 150.0),
            y: (0.0, 0.0),
        };
        assert_eq!(
            values_and_window(text, (3, 1)),
            (vec![1.0, 0.0, 3.0], Some(line))
        );
        let error = parse_grid_csv(
            "i,count\n0,1\n5,2\n",
            Path::new("x"),
            "count",
            (2, 1),
            Poisson,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("outside the model's 2-cell 1-D grid"),
            "{error}"
        );
    }

    /// The shipped 64 x 64 Finnish pines: 126 saplings in the 10 m x 10 m window
    /// [-5, 5] x [-8, 2].
    #[test]
    fn the_finnish_pines_grid_has_its_window() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/finpines_grid64.csv"
        ));
        let data = read_grid_csv(path, "count", (64, 64), Poisson).unwrap();
        assert_eq!(data.values.iter().sum::<f64>(), 126.0);
        let window = data.window.unwrap();
        for (got, want) in [
            (window.x.0, -5.0),
            (window.x.1, 5.0),
            (window.y.0, -8.0),
            (window.y.1, 2.0),
        ] {
            assert!((got - want).abs() < 1e-9, "{window:?}");
        }
    }

    #[test]
    fn reads_the_real_hickory_presence_grid() {
        // Shipped in data/ (see data/README.md for its provenance).
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("data/lansing_hickory_presence_grid32.csv");
        let path = path.as_path();
        let labels = read_grid_csv(path, "label", (32, 32), Probit)
            .unwrap()
            .values;
        assert_eq!(labels.len(), 1024);
        assert_eq!(labels.iter().filter(|v| **v == 1.0).count(), 440);
        let wrong = read_grid_csv(path, "label", (16, 16), Probit).unwrap_err();
        assert!(wrong.message.contains("1024 cells (a 32 x 32 grid)"));
    }
}
