//! Reading a real grid from CSV (the format of `data/README.md`): a header line naming the
//! columns, then one row per cell with its indices `i` (x) and `j` (y; may be left out on a 1-D
//! grid), optionally its centre `x_center`, `y_center`, and a value column (`count`, `label`, or
//! any other named column; covariates read several). The dialect (quoting, CR LF, a byte-order
//! mark, R's unnamed row-names column) is [`crate::study::csv`]'s.
//!
//! The reader is strict, because a silently misread data file poisons every result built on it:
//! no cell of the model's `nx x ny` grid may appear twice or lie off the grid, and the values
//! must suit what they are read as ([`Reading`]: Poisson counts are whole numbers >= 0, probit
//! labels in {0, 1} or {-1, +1} with 0 read as -1, gaussian values and covariates finite
//! numbers, exposures finite numbers >= 0, log offsets finite numbers; binomial successes whole
//! numbers >= 0 with their trials, whole numbers at least the successes, in a second column,
//! [`read_data_grid`]). A data file may leave a
//! cell's observation empty or `NA` (the cell is unobserved) and may leave cells out (they are
//! outside the study region: the file's rows are the region's mask, [`GridData::given`]); it
//! must observe at least one cell. A covariates file gives every cell a value. When the file
//! gives the cell centres, they must lie on a regular grid (each within a thousandth of a cell
//! of it), and they give the physical window the cells tile, [first centre - h/2, last centre +
//! h/2] along each axis with h the spacing: that window is what length scales are measured in.
//! Errors name the file and the 1-based line.

use std::path::Path;

use super::centres::{Cell, RowError, place_cells, window_of, wrong_size_message};
use super::csv_values::{LabelConvention, Reading, check_trials, read_value};
use crate::model::LikelihoodKind;
use crate::model::grid::Window;
use crate::study::csv::{Column, CsvRows, CsvText, Row};

pub use crate::study::csv::CsvError;

/// A grid CSV that cannot be used, with the file and (when the problem is in one row) the line.
pub type GridCsvError = CsvError;

/// A grid read from CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct GridData {
    /// The value of every cell, cell (i, j) at `j * nx + i`; None where the file leaves the
    /// cell out or its value empty or `NA`. Probit labels are -1.0 / +1.0.
    pub values: Vec<Option<f64>>,
    /// Binomial: the trials of every cell, as `values` (0 where the file gives none); None for
    /// the other likelihoods.
    pub trials: Option<Vec<f64>>,
    /// Which cells the file gives (has a row for, with or without a value), cell (i, j) at
    /// `j * nx + i`: the study region's mask. None when it gives every cell.
    pub(crate) given: Option<Vec<bool>>,
    /// The window the cells tile, from the cell centres (None when the file has none, or a
    /// single cell along x). On a 1-D grid its y range is (0, 0).
    pub(crate) window: Option<Window>,
}

impl GridData {
    /// The values when the file gives a value on every cell of the grid.
    pub fn complete_values(&self) -> Option<Vec<f64>> {
        self.values.iter().copied().collect()
    }
}

/// Several value columns of one grid CSV (covariates, an exposure), read in one pass.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GridColumns {
    /// Per named column, the value of every cell at `j * nx + i` (None where the file leaves
    /// the cell out, or, for observations, its value empty).
    pub(crate) columns: Vec<Vec<Option<f64>>>,
    /// As [`GridData::given`].
    pub(crate) given: Option<Vec<bool>>,
    /// As [`GridData::window`].
    pub(crate) window: Option<Window>,
}

/// Which cells a file must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coverage {
    /// Every cell of the grid (a covariates file).
    Every,
    /// Any cells, at least one of them observed (a data file: the cells it leaves out are
    /// outside the study region).
    Region,
}

/// Bytes a data file may spend per grid cell (a row), beyond [`CSV_BASE_BYTES`]: generous for
/// extra columns, small enough that a wrong path (a device, a huge unrelated file) is refused
/// before it exhausts memory.
const CSV_BYTES_PER_CELL: u64 = 1024;
const CSV_BASE_BYTES: u64 = 1024 * 1024;

/// The largest data file read for a grid of `cells` cells.
fn max_csv_bytes(cells: usize) -> u64 {
    (cells as u64)
        .saturating_mul(CSV_BYTES_PER_CELL)
        .saturating_add(CSV_BASE_BYTES)
}

/// The grid `dims` = (nx, ny) of the observations `column` read from the data file at `path`.
pub fn read_grid_csv(
    path: &Path,
    column: &str,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, CsvError> {
    let reading = [(column, Reading::Observation(likelihood))];
    let grid = read_grid_columns(path, &reading, dims, Coverage::Region)?;
    Ok(single(grid))
}

/// The grid `dims` of a likelihood's data: [`read_grid_csv`], and for binomial data the trials
/// in the column `trials` too.
pub(crate) fn read_data_grid(
    path: &Path,
    column: &str,
    trials: Option<&str>,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, CsvError> {
    let Some(trials) = trials else {
        return read_grid_csv(path, column, dims, likelihood);
    };
    let reading = binomial_reading(column, trials, likelihood);
    read_grid_columns(path, &reading, dims, Coverage::Region).map(binomial_data)
}

/// The columns of binomial data: the successes in `column`, their trials in `trials`.
fn binomial_reading<'a>(
    column: &'a str,
    trials: &'a str,
    likelihood: LikelihoodKind,
) -> [(&'a str, Reading); 2] {
    [
        (column, Reading::Observation(likelihood)),
        (trials, Reading::Trials),
    ]
}

/// The grid of binomial data read as [`binomial_reading`] says.
fn binomial_data(mut grid: GridColumns) -> GridData {
    let trials = grid.columns.pop().unwrap_or_default();
    GridData {
        trials: Some(trials.into_iter().map(|t| t.unwrap_or(0.0)).collect()),
        ..single(grid)
    }
}

/// The grid `dims` of each of the columns `columns` (each with how it is read) read from the
/// CSV at `path`, which gives the cells `coverage` asks for.
pub(crate) fn read_grid_columns(
    path: &Path,
    columns: &[(&str, Reading)],
    dims: (usize, usize),
    coverage: Coverage,
) -> Result<GridColumns, CsvError> {
    let cells = dims.0.saturating_mul(dims.1);
    let why = format!("for a grid of {cells} cells ({CSV_BYTES_PER_CELL} bytes per cell allowed)");
    let text = CsvText::open(path, max_csv_bytes(cells), &why)?;
    parse_grid(&text, columns, dims, coverage)
}

/// Whether the header of the grid CSV at `path` (a file for the grid `dims`) names `column`.
pub(crate) fn has_column(
    path: &Path,
    column: &str,
    dims: (usize, usize),
) -> Result<bool, CsvError> {
    let cells = dims.0.saturating_mul(dims.1);
    let why = format!("for a grid of {cells} cells ({CSV_BYTES_PER_CELL} bytes per cell allowed)");
    let text = CsvText::open(path, max_csv_bytes(cells), &why)?;
    let rows = text.rows("data file")?;
    Ok(rows.header().find(column).is_some())
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
    let reading = [(column, Reading::Observation(likelihood))];
    parse_grid(&text, &reading, dims, Coverage::Region).map(single)
}

/// [`read_data_grid`] of binomial data on text already in memory; `path` is used in messages.
#[cfg(test)]
pub(crate) fn parse_binomial_grid_csv(
    text: &str,
    path: &Path,
    column: &str,
    trials: &str,
    dims: (usize, usize),
) -> Result<GridData, CsvError> {
    let text = CsvText::new(text, path)?;
    let reading = binomial_reading(column, trials, LikelihoodKind::Binomial);
    parse_grid(&text, &reading, dims, Coverage::Region).map(binomial_data)
}

fn single(mut grid: GridColumns) -> GridData {
    GridData {
        values: grid.columns.pop().unwrap_or_default(),
        trials: None,
        given: grid.given,
        window: grid.window,
    }
}

fn parse_grid(
    text: &CsvText,
    columns: &[(&str, Reading)],
    dims: (usize, usize),
    coverage: Coverage,
) -> Result<GridColumns, CsvError> {
    let path = text.path();
    let mut rows = text.rows("data file")?;
    let names: Vec<&str> = columns.iter().map(|&(name, _)| name).collect();
    let readings: Vec<Reading> = columns.iter().map(|&(_, reading)| reading).collect();
    let header = Header::find(&rows, &names, dims)?;
    let mut labels: Vec<LabelConvention> = names.iter().map(|_| Default::default()).collect();
    let mut cells = Vec::new();
    let mut values = Vec::new();
    while let Some(row) = rows.next_row()? {
        let cell = header.read_row(&row, &readings, &mut labels, &mut values)?;
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
    let expected = dims.0.saturating_mul(dims.1);
    let too_few = coverage == Coverage::Every && cells.len() < expected;
    if cells.len() > expected || too_few {
        return Err(CsvError::file(path, wrong_size_message(cells.len(), dims)));
    }
    let width = names.len();
    let columns_read = (0..width)
        .map(|k| {
            let column = values.iter().skip(k).step_by(width).copied();
            place_cells(&cells, column, dims).map_err(fail)
        })
        .collect::<Result<Vec<_>, _>>()?;
    for ((name, reading), column) in columns.iter().zip(&columns_read) {
        if matches!(reading, Reading::Observation(_)) && column.iter().all(Option::is_none) {
            return Err(CsvError::file(
                path,
                format!("the data file observes no cell: every value of `{name}` is empty or NA"),
            ));
        }
    }
    let window = if header.has_centres() {
        window_of(&cells, dims).map_err(fail)?
    } else {
        None
    };
    let given = (cells.len() < expected).then(|| {
        let mut given = vec![false; expected];
        for (_, cell) in &cells {
            given[cell.j * dims.0 + cell.i] = true;
        }
        given
    });
    Ok(GridColumns {
        columns: columns_read,
        given,
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
}

impl Header {
    fn find(rows: &CsvRows<'_>, names: &[&str], dims: (usize, usize)) -> Result<Header, CsvError> {
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

    /// The cell of one row; its values (one per value column, None for an observation left
    /// empty) pushed onto `values`.
    fn read_row(
        &self,
        row: &Row<'_>,
        readings: &[Reading],
        labels: &mut [LabelConvention],
        values: &mut Vec<Option<f64>>,
    ) -> Result<Cell, CsvError> {
        let first = values.len();
        for ((&column, &reading), labels) in self.values.iter().zip(readings).zip(labels) {
            values.push(read_value(row, column, reading, labels)?);
        }
        if let [Reading::Observation(_), Reading::Trials] = readings {
            let columns = (self.values[0], self.values[1]);
            check_trials(row, columns, values[first], values[first + 1])?;
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
        .map(|data| data.complete_values().expect("every cell observed"))
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

    #[test]
    fn grid_coverage_errors_say_what_was_found() {
        let three = (0..9).fold("i,j,count\n".to_string(), |text, c| {
            text + &format!("{},{},1\n", c % 3, c / 3)
        });
        assert_eq!(
            message(&three, "count", 2, Poisson),
            "data/x.csv: the file has 9 cells (a 3 x 3 grid), the model's grid is 2 x 2 = 4 cells"
        );
        // Fewer cells than the grid's are a mask, not an error.
        let corner = parse_grid_csv(COUNTS_2X2, Path::new("x"), "count", (3, 3), Poisson).unwrap();
        let given = [true, true, false, true, true, false, false, false, false];
        assert_eq!(corner.given.as_deref(), Some(&given[..]));
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
        (data.complete_values().unwrap(), data.window)
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
        assert_eq!(data.values.iter().flatten().sum::<f64>(), 126.0);
        assert_eq!(data.given, None);
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
            .complete_values()
            .unwrap();
        assert_eq!(labels.len(), 1024);
        assert_eq!(labels.iter().filter(|v| **v == 1.0).count(), 440);
        let wrong = read_grid_csv(path, "label", (16, 16), Probit).unwrap_err();
        assert!(wrong.message.contains("1024 cells (a 32 x 32 grid)"));
    }

    /// A cell whose value is empty or `NA` is unobserved but in the region; a cell left out of
    /// the file is outside it (the mask); the window still comes from the centres given.
    #[test]
    fn empty_values_are_unobserved_and_left_out_cells_outside_the_mask() {
        let text = "i,j,x_center,y_center,count\n0,0,0.5,0.5,3\n2,0,2.5,0.5,NA\n\
                    1,1,1.5,1.5,\n2,1,2.5,1.5,4\n";
        let data = parse_grid_csv(text, Path::new("data/x.csv"), "count", (3, 2), Poisson).unwrap();
        assert_eq!(data.values, [Some(3.0), None, None, None, None, Some(4.0)]);
        let given = [true, false, true, false, true, true];
        assert_eq!(data.given.as_deref(), Some(&given[..]));
        let window = data.window.unwrap();
        assert_eq!((window.x, window.y), ((0.0, 3.0), (0.0, 2.0)));
        assert_eq!(data.complete_values(), None);
        // Every cell given, some empty: no mask.
        let full = "i,j,value\n0,0,1.5\n1,0,NA\n";
        let data = parse_grid_csv(full, Path::new("x"), "value", (2, 1), Gaussian).unwrap();
        assert_eq!((data.values, data.given), (vec![Some(1.5), None], None));
    }

    /// The strictness that stays: a cell twice, a cell off the grid, more rows than cells, and
    /// a file that observes no cell are errors naming the file (and the line of the row).
    #[test]
    fn a_partial_file_is_still_checked_cell_by_cell() {
        let parse = |text: &str| {
            parse_grid_csv(text, Path::new("data/x.csv"), "count", (2, 2), Poisson)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            parse("i,j,count\n0,0,1\n1,1,NA\n0,0,\n"),
            "data/x.csv:4: duplicate cell (i = 0, j = 0), first given on line 2"
        );
        assert!(
            parse("i,j,count\n0,0,1\n0,2,1\n")
                .starts_with("data/x.csv:3: cell (i = 0, j = 2) is outside")
        );
        assert_eq!(
            parse("i,j,count\n0,0,NA\n1,0,\n"),
            "data/x.csv: the data file observes no cell: every value of `count` is empty or NA"
        );
        assert!(
            parse("i,j,count\n0,0,1\n1,0,-2\n")
                .starts_with("data/x.csv:3: count = `-2` is not a count")
        );
        let one_column = "i,j,x_center,y_center,count\n1,0,0.75,0.25,1\n1,1,0.75,0.75,2\n";
        assert!(
            parse(one_column).starts_with("data/x.csv: the file gives cells at i = 1 only"),
            "{}",
            parse(one_column)
        );
    }

    /// Exposures and log offsets: a number on every row the file has (empty is an error, not a
    /// missing cell), exposures >= 0 and finite, log offsets finite; a covariates file must
    /// give every cell.
    #[test]
    fn exposure_columns_are_checked_row_by_row() {
        let read = |text: &str, reading: Reading, coverage: Coverage| {
            let text = CsvText::new(text, Path::new("data/e.csv")).unwrap();
            parse_grid(&text, &[("e", reading)], (2, 1), coverage).map(|g| g.columns[0].clone())
        };
        let good = "i,e\n0,2.5\n1,0\n";
        assert_eq!(
            read(good, Reading::Exposure, Coverage::Every).unwrap(),
            [Some(2.5), Some(0.0)]
        );
        let cases = [
            (
                "i,e\n0,-1\n1,1\n",
                Reading::Exposure,
                "data/e.csv:2: e = `-1` is not an exposure",
            ),
            (
                "i,e\n0,inf\n1,1\n",
                Reading::Exposure,
                "data/e.csv:2: e = `inf` is not an exposure",
            ),
            (
                "i,e\n0,1\n1,NaN\n",
                Reading::Exposure,
                "data/e.csv:3: e = `NaN` is not an exposure",
            ),
            (
                "i,e\n0,1\n1,NA\n",
                Reading::Exposure,
                "data/e.csv:3: e is empty",
            ),
            (
                "i,e\n0,1\n1,-inf\n",
                Reading::LogOffset,
                "data/e.csv:3: e = `-inf` is not a log exposure",
            ),
            (
                "i,e\n0,\n1,1\n",
                Reading::LogOffset,
                "data/e.csv:2: e is empty",
            ),
        ];
        for (text, reading, expected) in cases {
            let got = read(text, reading, Coverage::Region)
                .unwrap_err()
                .to_string();
            assert!(
                got.starts_with(expected),
                "{got:?} should start with {expected:?}"
            );
        }
        assert_eq!(
            read("i,e\n0,-0.5\n", Reading::LogOffset, Coverage::Region).unwrap(),
            [Some(-0.5), None]
        );
        let short = read("i,e\n0,1\n", Reading::Exposure, Coverage::Every).unwrap_err();
        assert!(
            short.to_string().contains("the file has 1 cells"),
            "{short}"
        );
    }
}
