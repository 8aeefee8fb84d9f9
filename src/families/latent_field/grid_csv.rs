//! Reading a real grid from CSV (the format of `data/README.md`): a header line naming the
//! columns, then one row per cell with its indices `i` (x) and `j` (y; may be left out on a 1-D
//! grid), optionally its centre `x_center`, `y_center`, and a value column (`count`, `label`, or
//! any other named column; covariates read several). The dialect (quoting, CR LF, a byte-order
//! mark, R's unnamed row-names column) is [`crate::study::csv`]'s.
//!
//! The reader is strict, because a silently misread data file poisons every result built on it:
//! every cell of the model's `nx x ny` grid must appear exactly once, and the values must suit
//! the likelihood (Poisson: whole counts >= 0; probit: labels in {0, 1} or {-1, +1}, with 0 read
//! as -1; gaussian: finite numbers; binomial: whole successes >= 0 in the value column and whole
//! trials in a second column, at least the successes, [`read_binomial_grid_csv`]). When the file gives the cell centres, they must lie on a
//! regular grid (each within a thousandth of a cell of it), and they give the physical window
//! the cells tile, [first centre - h/2, last centre + h/2] along each axis with h the spacing:
//! that window is what length scales are measured in. Errors name the file and the 1-based line.

use std::path::Path;

use crate::model::LikelihoodKind;
use crate::model::grid::Window;
use crate::study::csv::{Column, CsvRows, CsvText, Row};

pub use crate::study::csv::CsvError;

/// A grid CSV that cannot be used, with the file and (when the problem is in one row) the line.
pub type GridCsvError = CsvError;

/// A grid read from CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct GridData {
    /// The value of every cell, cell (i, j) at `j * nx + i`. Probit labels are -1.0 / +1.0;
    /// binomial values are the successes.
    pub values: Vec<f64>,
    /// Binomial: the trials of every cell, as `values`; None for the other likelihoods.
    pub trials: Option<Vec<f64>>,
    /// The window the cells tile, from the cell centres (None when the file has none, or a
    /// single cell along x). On a 1-D grid its y range is (0, 0).
    pub(crate) window: Option<Window>,
}

/// Several value columns of one grid CSV (covariates), read in one pass.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GridColumns {
    /// Per named column, the value of every cell at `j * nx + i`.
    pub(crate) columns: Vec<Vec<f64>>,
    /// The trials column's, when one was read (binomial).
    pub(crate) trials: Option<Vec<f64>>,
    /// As [`GridData::window`].
    pub(crate) window: Option<Window>,
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

/// The grid `dims` = (nx, ny) of `column` read from the CSV at `path` (binomial: the successes
/// alone; [`read_binomial_grid_csv`] reads their trials too).
pub fn read_grid_csv(
    path: &Path,
    column: &str,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, CsvError> {
    let grid = read_grid_columns(path, &[column], dims, likelihood)?;
    Ok(single(grid))
}

/// The grid `dims` of a likelihood's data: [`read_binomial_grid_csv`] with a trials column,
/// else [`read_grid_csv`].
pub(crate) fn read_data_grid(
    path: &Path,
    column: &str,
    trials: Option<&str>,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, CsvError> {
    match trials {
        Some(trials) => read_binomial_grid_csv(path, column, trials, dims),
        None => read_grid_csv(path, column, dims, likelihood),
    }
}

/// The binomial grid `dims` of the CSV at `path`: the successes in `column` and the trials in
/// `trials`, every row's successes at most its trials.
pub fn read_binomial_grid_csv(
    path: &Path,
    column: &str,
    trials: &str,
    dims: (usize, usize),
) -> Result<GridData, CsvError> {
    let text = open_grid(path, dims)?;
    parse_grid(
        &text,
        &[column],
        Some(trials),
        dims,
        LikelihoodKind::Binomial,
    )
    .map(single)
}

/// The text of the grid CSV at `path`, refused unread when it is too large for a grid `dims`.
fn open_grid(path: &Path, dims: (usize, usize)) -> Result<CsvText, CsvError> {
    let cells = dims.0.saturating_mul(dims.1);
    let why = format!("for a grid of {cells} cells ({CSV_BYTES_PER_CELL} bytes per cell allowed)");
    CsvText::open(path, max_csv_bytes(cells), &why)
}

/// The grid `dims` of each of the columns `names` read from the CSV at `path`, every value as
/// `likelihood` reads it (covariates: gaussian, finite numbers).
pub(crate) fn read_grid_columns(
    path: &Path,
    names: &[&str],
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridColumns, CsvError> {
    parse_grid(&open_grid(path, dims)?, names, None, dims, likelihood)
}

/// [`read_grid_csv`] on text already in memory; `path` is used in messages only.
pub(crate) fn parse_grid_csv(
    text: &str,
    path: &Path,
    column: &str,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, CsvError> {
    let text = CsvText::new(text, path)?;
    parse_grid(&text, &[column], None, dims, likelihood).map(single)
}

/// [`read_binomial_grid_csv`] on text already in memory; `path` is used in messages only.
#[cfg(test)]
pub(crate) fn parse_binomial_grid_csv(
    text: &str,
    path: &Path,
    column: &str,
    trials: &str,
    dims: (usize, usize),
) -> Result<GridData, CsvError> {
    let text = CsvText::new(text, path)?;
    parse_grid(
        &text,
        &[column],
        Some(trials),
        dims,
        LikelihoodKind::Binomial,
    )
    .map(single)
}

fn single(mut grid: GridColumns) -> GridData {
    GridData {
        values: grid.columns.pop().unwrap_or_default(),
        trials: grid.trials,
        window: grid.window,
    }
}

/// The columns `names` (and the trials column `trials`, binomial) of the grid `dims`.
fn parse_grid(
    text: &CsvText,
    names: &[&str],
    trials: Option<&str>,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridColumns, CsvError> {
    let path = text.path();
    let mut rows = text.rows("data file")?;
    let columns = Header::find(&rows, names, trials, dims)?;
    let mut labels: Vec<LabelConvention> = names.iter().map(|_| Default::default()).collect();
    let mut cells = Vec::new();
    let mut values = Vec::new();
    let mut trials_read = Vec::new();
    while let Some(row) = rows.next_row()? {
        let cell = columns.read_row(&row, likelihood, &mut labels, &mut values)?;
        if let Some(column) = columns.trials {
            trials_read.push(columns.read_trials(&row, column, values[values.len() - 1])?);
        }
        cells.push((row.line, cell));
    }
    if cells.is_empty() {
        return Err(CsvError::file(
            path,
            "the data file has a header but no rows",
        ));
    }
    let fail = |(line, message): RowError| match line {
        Some(line) => CsvError::at_line(path, line, message),
        None => CsvError::file(path, message),
    };
    let width = names.len();
    let columns_read = (0..width)
        .map(|k| {
            let column = values.iter().skip(k).step_by(width).copied();
            place_cells(&cells, column, dims).map_err(fail)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let trials = match columns.trials {
        Some(_) => Some(place_cells(&cells, trials_read.into_iter(), dims).map_err(fail)?),
        None => None,
    };
    let window = if columns.has_centres() {
        window_of(&cells, dims).map_err(fail)?
    } else {
        None
    };
    Ok(GridColumns {
        columns: columns_read,
        trials,
        window,
    })
}

/// Where the needed columns are in each row.
struct Header {
    i: Column,
    /// None on a 1-D grid whose file has no `j` (every row is j = 0).
    j: Option<Column>,
    x_center: Option<Column>,
    y_center: Option<Column>,
    values: Vec<Column>,
    /// Binomial: the trials of the (one) value column's successes.
    trials: Option<Column>,
}

impl Header {
    fn find(
        rows: &CsvRows<'_>,
        names: &[&str],
        trials: Option<&str>,
        dims: (usize, usize),
    ) -> Result<Header, CsvError> {
        let line_grid = dims.1 == 1;
        let header = rows.header();
        let header = Header {
            i: rows.column("i")?,
            j: if line_grid {
                header.find("j")
            } else {
                Some(rows.column("j")?)
            },
            x_center: header.find("x_center"),
            y_center: header.find("y_center"),
            values: names
                .iter()
                .map(|name| rows.column(name))
                .collect::<Result<_, _>>()?,
            trials: trials.map(|name| rows.column(name)).transpose()?,
        };
        if !line_grid && header.x_center.is_some() != header.y_center.is_some() {
            return Err(rows.header_error(
                "the header gives one of x_center and y_center but not the other: give both \
                 (the cell centres) or neither",
            ));
        }
        Ok(header)
    }

    /// Whether rows carry the centres the window is found from.
    fn has_centres(&self) -> bool {
        self.x_center.is_some()
    }

    /// The cell of one row; its values (one per value column) pushed onto `values`.
    fn read_row(
        &self,
        row: &Row<'_>,
        likelihood: LikelihoodKind,
        labels: &mut [LabelConvention],
        values: &mut Vec<f64>,
    ) -> Result<Cell, CsvError> {
        for (&column, labels) in self.values.iter().zip(labels) {
            let number = row.number(column)?;
            let value = match likelihood {
                LikelihoodKind::Poisson | LikelihoodKind::Binomial => {
                    check_count(row, column, number, likelihood)?
                }
                LikelihoodKind::Probit => labels.read(row, column, number)?,
                LikelihoodKind::Gaussian if number.is_finite() => number,
                LikelihoodKind::Gaussian => return Err(row.not(column, "a finite number")),
            };
            values.push(value);
        }
        let index =
            |column: Column| row.parse::<usize>(column, "a cell index (a whole number >= 0)");
        let centre = |column: Option<Column>| column.map(|c| row.finite(c)).transpose();
        Ok(Cell {
            i: index(self.i)?,
            j: match self.j {
                Some(column) => index(column)?,
                None => 0,
            },
            x: centre(self.x_center)?,
            y: centre(self.y_center)?,
        })
    }
}

impl Header {
    /// The trials in `column` of a row whose successes are `successes`: a whole number >= 0, at
    /// least the successes.
    fn read_trials(&self, row: &Row<'_>, column: Column, successes: f64) -> Result<f64, CsvError> {
        let trials = row.number(column)?;
        if !trials.is_finite() || trials < 0.0 || trials.fract() != 0.0 || trials > MAX_COUNT {
            return Err(row.not(
                column,
                "a number of trials (binomial trials must be whole numbers >= 0)",
            ));
        }
        if successes > trials {
            let successes_column = self.values[0];
            let message = format!(
                "{} = `{}` successes of {} = `{}` trials: the successes cannot outnumber the \
                 trials",
                row.name(successes_column),
                row.text(successes_column),
                row.name(column),
                row.text(column)
            );
            return Err(row.error(column, message));
        }
        Ok(trials)
    }
}

struct Cell {
    i: usize,
    j: usize,
    x: Option<f64>,
    y: Option<f64>,
}

/// Counts beyond 2^53 are not exact in a double.
const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

fn check_count(
    row: &Row<'_>,
    column: Column,
    number: f64,
    likelihood: LikelihoodKind,
) -> Result<f64, CsvError> {
    if !number.is_finite() || number < 0.0 || number.fract() != 0.0 || number > MAX_COUNT {
        let what = match likelihood {
            LikelihoodKind::Binomial => "a count (binomial successes must be whole numbers >= 0)",
            _ => "a count (Poisson data must be whole numbers >= 0)",
        };
        return Err(row.not(column, what));
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
    fn read(&mut self, row: &Row<'_>, column: Column, number: f64) -> Result<f64, CsvError> {
        if number == 0.0 {
            self.zero_one = true;
        } else if number == -1.0 {
            self.signed = true;
        } else if number != 1.0 {
            return Err(row.not(column, "a label (probit data must be 0/1 or -1/+1)"));
        }
        if self.zero_one && self.signed {
            let message = format!(
                "{} = `{}` mixes label conventions: the file uses both 0 and -1",
                row.name(column),
                row.text(column)
            );
            return Err(row.error(column, message));
        }
        Ok(if number == 1.0 { 1.0 } else { -1.0 })
    }
}

/// A problem with the file, at a line when one row is to blame.
type RowError = (Option<usize>, String);

/// Put each cell's value (`values`, in the order of `cells`) at j * nx + i, checking the file
/// covers the grid exactly once.
fn place_cells(
    cells: &[(usize, Cell)],
    values: impl Iterator<Item = f64>,
    (nx, ny): (usize, usize),
) -> Result<Vec<f64>, RowError> {
    let expected = nx.saturating_mul(ny);
    if cells.len() != expected {
        return Err((None, wrong_size_message(cells.len(), (nx, ny))));
    }
    let mut placed = vec![f64::NAN; expected];
    let mut first_line = vec![0usize; expected];
    for ((line, cell), value) in cells.iter().zip(values) {
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
        placed[index] = value;
    }
    Ok(placed)
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

    /// R's `write.csv`: quoted names, a first column of quoted row names under an empty name,
    /// CR LF (on Windows); pandas' `QUOTE_ALL`: every field quoted.
    #[test]
    fn grids_written_by_r_and_pandas_read_like_the_plain_file() {
        let r = "\"\",\"i\",\"j\",\"x_center\",\"y_center\",\"count\"\r\n\
                 \"1\",0,0,0.25,0.25,3\r\n\"2\",1,0,0.75,0.25,0\r\n\
                 \"3\",0,1,0.25,0.75,7\r\n\"4\",1,1,0.75,0.75,1\r\n";
        let pandas = "\u{feff}\"\",\"i\",\"j\",\"count\"\n\"0\",\"1\",\"1\",\"1\"\n\
                      \"1\",\"0\",\"0\",\"3\"\n\"2\",\"1\",\"0\",\"0\"\n\"3\",\"0\",\"1\",\"7\"\n";
        let plain = parse(COUNTS_2X2, "count", 2, Poisson).unwrap();
        assert_eq!(parse(r, "count", 2, Poisson).unwrap(), plain);
        assert_eq!(parse(pandas, "count", 2, Poisson).unwrap(), plain);
        let duplicate = r.replace("\"4\",1,1", "\"4\",1,0");
        assert_eq!(
            message(&duplicate, "count", 2, Poisson),
            "data/x.csv:5: duplicate cell (i = 1, j = 0), first given on line 3"
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

    fn binomial(text: &str) -> Result<GridData, GridCsvError> {
        parse_binomial_grid_csv(text, Path::new("data/x.csv"), "count", "trials", (2, 2))
    }

    /// Successes and trials j-major; n = 0 (no trial, no success) and k = n are data.
    #[test]
    fn binomial_grids_read_successes_and_their_trials() {
        let text = "i,j,count,trials\n1,1,1,10\n0,0,3,5\n1,0,0,0\n0,1,7,7\n";
        let data = binomial(text).unwrap();
        assert_eq!(data.values, vec![3.0, 0.0, 7.0, 1.0]);
        assert_eq!(data.trials, Some(vec![5.0, 0.0, 7.0, 10.0]));
        // The other likelihoods read no trials.
        let poisson = parse(COUNTS_2X2, "count", 2, Poisson).unwrap();
        assert_eq!(poisson, vec![3.0, 0.0, 7.0, 1.0]);
    }

    /// Each bad binomial row is refused at its line, naming the column and what it must be.
    #[test]
    fn bad_binomial_rows_are_refused_at_their_line() {
        let head = "i,j,count,trials\n0,0,3,5\n";
        let cases = [
            (
                "1,0,6,5",
                "data/x.csv:3: count = `6` successes of trials = `5` trials: the successes cannot \
                 outnumber the trials",
            ),
            (
                "1,0,1,-2",
                "data/x.csv:3: trials = `-2` is not a number of trials",
            ),
            (
                "1,0,1,2.5",
                "data/x.csv:3: trials = `2.5` is not a number of trials",
            ),
            (
                "1,0,1,NaN",
                "data/x.csv:3: trials = `NaN` is not a number of trials",
            ),
            (
                "1,0,1,inf",
                "data/x.csv:3: trials = `inf` is not a number of trials",
            ),
            ("1,0,1,", "data/x.csv:3: trials = `` is not a number"),
            (
                "1,0,-1,4",
                "data/x.csv:3: count = `-1` is not a count (binomial",
            ),
            (
                "1,0,0.5,4",
                "data/x.csv:3: count = `0.5` is not a count (binomial",
            ),
        ];
        for (row, expected) in cases {
            let text = format!("{head}{row}\n0,1,0,1\n1,1,0,1\n");
            let got = binomial(&text).unwrap_err().to_string();
            assert!(
                got.starts_with(expected),
                "{got:?} should start with {expected:?}"
            );
        }
        let missing = binomial("i,j,count,n\n0,0,1,1\n").unwrap_err().to_string();
        assert!(
            missing.starts_with("data/x.csv:1: no column `trials`"),
            "{missing}"
        );
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
