//! Reading a point pattern from CSV (`data.source = "points"`) and counting it on the model's
//! grid. This module owns the binning convention, and nothing downstream knows the data were
//! points: the counts become the same [`GridData`] a grid CSV gives, with the study window as
//! its window, and are held out, observed and scored as a grid CSV's cells are.
//!
//! The file: a header line naming the columns, then one row per event. Two columns (`data.x`,
//! `data.y`, by default `x` and `y`) hold the coordinates, finite numbers in the units of
//! `model.window`; other columns (marks, dates) are ignored. The dialect (quoting, CR LF, a
//! byte-order mark, R's unnamed row-names column) is [`crate::study::csv`]'s.
//!
//! The binning (the convention of the grid files in `data/`): the window [x0, x1] x [y0, y1] is
//! cut into nx x ny cells, cell (i, j) = [x0 + i dx, x0 + (i + 1) dx) x [y0 + j dy,
//! y0 + (j + 1) dy), dx = (x1 - x0) / nx, dy = (y1 - y0) / ny; `i` runs along x, `j` along y,
//! and the cell's index is j * nx + i. So a point on an inner cell edge goes to the upper cell,
//! and a point on the right or top edge of the window (x = x1 or y = y1) to the last cell.
//! Computed as i = floor((x - x0) / (x1 - x0) * nx), capped at nx - 1.
//!
//! Errors name the file and, when one row is to blame, its 1-based line: a point outside the
//! window or outside the study region (`model.region`, when given), a coordinate that is not a finite number, a missing coordinate column, a short row.

use std::path::Path;

use super::grid_csv::GridData;
use crate::model::LikelihoodKind;
use crate::model::grid::Window;
use crate::model::region::Region;
use crate::study::csv::{Column, CsvError, CsvRows, CsvText, Row};

/// A points file that cannot be used, with the file and (when one row is to blame) the line.
pub(crate) type PointsCsvError = CsvError;

/// Where a point pattern is and how to read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PointsSource<'a> {
    /// The columns holding each event's x and y.
    pub(crate) x: &'a str,
    pub(crate) y: &'a str,
    /// The window every event must lie in (closed on every side).
    pub(crate) window: Window,
    /// The study region (`model.region`) every event must lie in (its boundary included), and
    /// its file (for messages); None for the whole window.
    pub(crate) region: Option<(&'a Region, &'a Path)>,
}

/// The largest points file read: 256 MiB, about ten million events. Past it a wrong path (a
/// device, an unrelated huge file) is refused before it exhausts memory.
const MAX_POINTS_BYTES: u64 = 1 << 28;

/// The events of the CSV at `path`, each (x, y), checked to lie in the window.
pub(crate) fn read_points(
    path: &Path,
    source: PointsSource<'_>,
) -> Result<Vec<(f64, f64)>, PointsCsvError> {
    points_of(
        &CsvText::open(path, MAX_POINTS_BYTES, "for a points file")?,
        source,
    )
}

/// The grid `dims` = (nx, ny) of the events of the CSV at `path` counted in the cells of
/// `source.window`: counts for poisson, presence labels (+1 where a cell holds an event, else
/// -1) for probit. The likelihood must be one of [`POINT_LIKELIHOODS`].
pub(crate) fn read_points_grid(
    path: &Path,
    source: PointsSource<'_>,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> Result<GridData, PointsCsvError> {
    let points = read_points(path, source)?;
    Ok(points_grid(&points, source.window, dims, likelihood))
}

/// The likelihoods a point pattern can be observed through: counts per cell (poisson) or
/// presence per cell (probit). A gaussian observation of a count has no meaning here.
pub(crate) const POINT_LIKELIHOODS: [LikelihoodKind; 2] =
    [LikelihoodKind::Poisson, LikelihoodKind::Probit];

/// `points` counted on the grid `dims` over `window`, as `likelihood` observes them.
pub(crate) fn points_grid(
    points: &[(f64, f64)],
    window: Window,
    dims: (usize, usize),
    likelihood: LikelihoodKind,
) -> GridData {
    let counts = bin_points(points, window, dims);
    let values = match likelihood {
        LikelihoodKind::Probit => counts
            .into_iter()
            .map(|c| if c > 0.0 { 1.0 } else { -1.0 })
            .collect(),
        _ => counts,
    };
    GridData {
        values: values.into_iter().map(Some).collect(),
        trials: None,
        given: None,
        window: Some(window),
    }
}

/// The number of `points` in each cell of the grid `dims` = (nx, ny) over `window`, cell (i, j)
/// at j * nx + i. Every point must lie in the window (as [`read_points`] checks).
pub(crate) fn bin_points(
    points: &[(f64, f64)],
    window: Window,
    (nx, ny): (usize, usize),
) -> Vec<f64> {
    let mut counts = vec![0.0; nx * ny];
    for &(x, y) in points {
        let i = axis_cell(x, window.x, nx);
        let j = axis_cell(y, window.y, ny);
        counts[j * nx + i] += 1.0;
    }
    counts
}

/// The cell along one axis of `cells` cells tiling [lo, hi] that holds `v` (in [lo, hi]):
/// floor((v - lo) / (hi - lo) * cells), the last cell for v = hi.
pub(crate) fn axis_cell(v: f64, (lo, hi): (f64, f64), cells: usize) -> usize {
    let position = (v - lo) / (hi - lo) * cells as f64;
    // `as` saturates: a position rounded below 0 is cell 0.
    (position.floor() as usize).min(cells - 1)
}

#[cfg(test)]
/// [`read_points`] on text already in memory; `path` is used in messages only.
pub(crate) fn parse_points(
    text: &str,
    path: &Path,
    source: PointsSource<'_>,
) -> Result<Vec<(f64, f64)>, PointsCsvError> {
    points_of(&CsvText::new(text, path)?, source)
}

fn points_of(text: &CsvText, source: PointsSource<'_>) -> Result<Vec<(f64, f64)>, CsvError> {
    let mut rows = text.rows("points file")?;
    let columns = Columns::find(&rows, source)?;
    let mut points = Vec::new();
    while let Some(row) = rows.next_row()? {
        points.push(columns.read_row(&row, source)?);
    }
    if points.is_empty() {
        return Err(CsvError::file(
            text.path(),
            "the points file has a header but no points",
        ));
    }
    Ok(points)
}

/// Where the coordinates are in each row.
struct Columns {
    x: Column,
    y: Column,
}

impl Columns {
    fn find(rows: &CsvRows<'_>, source: PointsSource<'_>) -> Result<Self, CsvError> {
        Ok(Columns {
            x: rows.column_for(source.x, "data.x")?,
            y: rows.column_for(source.y, "data.y")?,
        })
    }

    /// The event of one row, checked to be finite, in the window and in the region.
    fn read_row(&self, row: &Row<'_>, source: PointsSource<'_>) -> Result<(f64, f64), CsvError> {
        let window = source.window;
        let (x, y) = (row.finite(self.x)?, row.finite(self.y)?);
        let inside = |v: f64, (lo, hi): (f64, f64)| lo <= v && v <= hi;
        if !inside(x, window.x) || !inside(y, window.y) {
            return Err(row.line_error(format!(
                "the point ({x}, {y}) is outside model.window = {}: every point must lie in it \
                 (edges included)",
                crate::study::shape::window_text(&window, false)
            )));
        }
        if let Some((region, file)) = source.region
            && !region.contains(x, y)
        {
            return Err(row.line_error(format!(
                "the point ({x}, {y}) is outside the study region (model.region = {}): every \
                 point must lie in it (its boundary included)",
                file.display()
            )));
        }
        Ok((x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::latent_field::grid_csv::read_grid_csv;

    const UNIT: Window = Window {
        x: (0.0, 1.0),
        y: (0.0, 1.0),
    };

    fn source(window: Window) -> PointsSource<'static> {
        PointsSource {
            x: "x",
            y: "y",
            window,
            region: None,
        }
    }

    fn parse(text: &str, window: Window) -> Result<Vec<(f64, f64)>, String> {
        parse_points(text, Path::new("data/p.csv"), source(window)).map_err(|e| e.to_string())
    }

    /// Points on inner edges, on the right and top edges and in the corners of a 4 x 4 grid over
    /// [0, 1]^2 (edges at 0.25, 0.5, 0.75), each with the cell written by hand.
    #[test]
    fn edges_and_corners_go_where_the_convention_says() {
        let cases: [((f64, f64), (usize, usize)); 12] = [
            ((0.0, 0.0), (0, 0)),       // bottom-left corner
            ((1.0, 0.0), (3, 0)),       // bottom-right corner: right edge -> last column
            ((0.0, 1.0), (0, 3)),       // top-left corner: top edge -> last row
            ((1.0, 1.0), (3, 3)),       // top-right corner
            ((0.25, 0.1), (1, 0)),      // inner x edge -> the upper cell
            ((0.1, 0.5), (0, 2)),       // inner y edge -> the upper cell
            ((0.75, 0.75), (3, 3)),     // an inner corner -> upper in both
            ((0.2499, 0.7499), (0, 2)), // just below the edges
            ((1.0, 0.3), (3, 1)),       // right edge, inside in y
            ((0.6, 1.0), (2, 3)),       // top edge, inside in x
            ((0.5, 0.25), (2, 1)),      // two inner edges
            ((0.999, 0.001), (3, 0)),   // inside the corner cells
        ];
        for ((x, y), (i, j)) in cases {
            let counts = bin_points(&[(x, y)], UNIT, (4, 4));
            let cell = counts.iter().position(|&c| c == 1.0).unwrap();
            assert_eq!((cell % 4, cell / 4), (i, j), "point ({x}, {y})");
        }
    }

    /// A window away from the origin with rectangular cells: 2 x 3 cells over [-5, 5] x [-8, 1]
    /// (dx = 5, dy = 3).
    #[test]
    fn a_general_window_bins_the_same_way() {
        let window = Window {
            x: (-5.0, 5.0),
            y: (-8.0, 1.0),
        };
        let points = [
            (-5.0, -8.0),
            (0.0, -5.0),
            (5.0, 1.0),
            (-0.1, -2.0),
            (4.9, -5.1),
        ];
        // (0, 0); (1, 1); (1, 2); (0, 2); (1, 0)
        assert_eq!(
            bin_points(&points, window, (2, 3)),
            vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
        );
    }

    #[test]
    fn reads_coordinates_by_name_and_ignores_other_columns() {
        let text = "mark,y,x,note\r\nred,0.1,0.9,\"a, quoted \"\"note\"\"\"\n\noak,0.6,0.2,\n";
        assert_eq!(parse(text, UNIT).unwrap(), vec![(0.9, 0.1), (0.2, 0.6)]);
        let named = PointsSource {
            x: "east",
            y: "north",
            window: UNIT,
            region: None,
        };
        let points = parse_points("north,east\n0.5,0.25\n", Path::new("p.csv"), named).unwrap();
        assert_eq!(points, vec![(0.25, 0.5)]);
    }

    #[test]
    fn presence_for_probit_counts_for_poisson() {
        let points = [(0.1, 0.1), (0.2, 0.2), (0.9, 0.9)];
        let grid = |likelihood| {
            points_grid(&points, UNIT, (2, 2), likelihood)
                .complete_values()
                .unwrap()
        };
        assert_eq!(grid(LikelihoodKind::Poisson), vec![2.0, 0.0, 0.0, 1.0]);
        assert_eq!(grid(LikelihoodKind::Probit), vec![1.0, -1.0, -1.0, 1.0]);
    }

    #[test]
    fn every_error_names_the_file_and_its_row() {
        let cases: [(&str, &str); 9] = [
            ("", "data/p.csv: the points file is empty"),
            (
                "x,y\n",
                "data/p.csv: the points file has a header but no points",
            ),
            (
                "x,z\n0.1,0.2\n",
                "data/p.csv:1: no column `y` (data.y); the columns are: x, z",
            ),
            (
                "x,y,x\n0.1,0.2,0.3\n",
                "data/p.csv:1: the header names the column `x` twice",
            ),
            (
                "x,y\n0.1,0.2\n0.5,1.5\n",
                "data/p.csv:3: the point (0.5, 1.5) is outside model.window = [[0.0, 1.0], [0.0, 1.0]]",
            ),
            (
                "x,y\n-0.0001,0.5\n",
                "data/p.csv:2: the point (-0.0001, 0.5) is outside",
            ),
            (
                "x,y\n0.1,NaN\n",
                "data/p.csv:2: y = `NaN` is not a finite number",
            ),
            (
                "x,y\n\n0.1,0.2\ninf,0.2\n",
                "data/p.csv:4: x = `inf` is not a finite number",
            ),
            (
                "x,y\n0.1\n",
                "data/p.csv:2: the row has 1 fields, the header has 2",
            ),
        ];
        for (text, expected) in cases {
            let got = parse(text, UNIT).unwrap_err();
            assert!(
                got.starts_with(expected),
                "{got:?} should start with {expected:?}"
            );
        }
        let open = parse("x,y,m\n0.1,0.2,\"open\n", UNIT).unwrap_err();
        assert!(
            open.starts_with("data/p.csv:2: a quoted field is not closed"),
            "{open}"
        );
    }

    #[test]
    fn missing_binary_and_endless_files_are_errors() {
        let missing = read_points(Path::new("/nonexistent/p.csv"), source(UNIT)).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/p.csv: cannot read the data file")
        );
        let dir = tempfile::tempdir().unwrap();
        let nul = dir.path().join("nul.csv");
        std::fs::write(&nul, b"x,y\n0.1,\x000.2\n").unwrap();
        let error = read_points(&nul, source(UNIT)).unwrap_err();
        assert_eq!(error.line, Some(2), "{error}");
    }

    /// The shipped point patterns binned here equal the shipped grids, binned independently (in
    /// R at D = 32 and 64, by `data/bin_points.py` at D = 128; data/README.md), cell by cell.
    #[test]
    fn binning_the_shipped_points_gives_the_shipped_grids() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let unit = UNIT;
        let redwood = Window {
            x: (0.0, 1.0),
            y: (-1.0, 0.0),
        };
        let finpines = Window {
            x: (-5.0, 5.0),
            y: (-8.0, 2.0),
        };
        let patterns = [
            ("redwood", redwood, 62.0),
            ("japanesepines", unit, 65.0),
            ("lansing", unit, 2251.0),
            ("finpines", finpines, 126.0),
            // Binned independently by data/export_bei.R (8 trees on inner cell edges).
            (
                "bei",
                Window {
                    x: (0.0, 1000.0),
                    y: (0.0, 500.0),
                },
                3604.0,
            ),
        ];
        for (name, window, total) in patterns {
            let points =
                read_points(&data.join(format!("{name}_points.csv")), source(window)).unwrap();
            let sides: &[usize] = match name {
                "lansing" | "bei" => &[32, 64, 128],
                _ => &[32, 64],
            };
            for &d in sides {
                let grid = data.join(format!("{name}_grid{d}.csv"));
                let expected =
                    read_grid_csv(&grid, "count", (d, d), LikelihoodKind::Poisson).unwrap();
                let binned = points_grid(&points, window, (d, d), LikelihoodKind::Poisson);
                assert_eq!(
                    binned.values.iter().flatten().sum::<f64>(),
                    total,
                    "{name} at D = {d}"
                );
                for (cell, (got, want)) in binned.values.iter().zip(&expected.values).enumerate() {
                    assert_eq!(
                        got,
                        want,
                        "{name} at D = {d}: cell (i = {}, j = {})",
                        cell % d,
                        cell / d
                    );
                }
                // The grid file's window (from its centres) is the study window.
                let file_window = expected.window.unwrap();
                for (a, b) in [(file_window.x, window.x), (file_window.y, window.y)] {
                    assert!(
                        (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6,
                        "{name}"
                    );
                }
            }
        }
    }
}
