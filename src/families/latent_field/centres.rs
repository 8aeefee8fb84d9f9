//! The cells a grid CSV's rows give: each row's value put at its cell, every cell on the grid and
//! given once ([`place_cells`]), and the window the cell centres give: [first centre - h/2, last
//! centre + h/2] along each axis, h the spacing, the centres checked to lie on a regular grid
//! (each within a thousandth of a cell of it); from the lowest and highest index the file gives
//! when it leaves cells out. Also when two windows agree (a covariates or exposure file on the
//! study's grid).

use crate::model::grid::Window;

/// How far a centre may lie from the regular grid, in cells (the shipped files give centres to
/// six or seven significant digits).
const CENTRE_TOLERANCE: f64 = 1e-3;

/// The cell a row of a grid CSV gives: its indices and, when the file has them, its centre.
pub(crate) struct Cell {
    pub(crate) i: usize,
    pub(crate) j: usize,
    pub(crate) x: Option<f64>,
    pub(crate) y: Option<f64>,
}

/// A problem with the file, at a line when one row is to blame.
pub(crate) type RowError = (Option<usize>, String);

/// The window the cell centres imply, checking they lie on a regular grid.
pub(crate) fn window_of(
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
/// the lowest and highest index the file gives (the first and last when it gives every cell);
/// None for a single point (no spacing to find).
fn axis_range(
    cells: &[(usize, Cell)],
    points: usize,
    name: &str,
    index_name: &str,
    of: impl Fn(&Cell) -> (usize, Option<f64>),
) -> Result<Option<(f64, f64)>, RowError> {
    let mut centres = vec![None; points];
    for (_, cell) in cells {
        if let (k, Some(c)) = of(cell) {
            centres[k] = Some(c);
        }
    }
    if points < 2 {
        return Ok(None);
    }
    let given = || {
        centres
            .iter()
            .enumerate()
            .filter_map(|(k, c)| Some((k, (*c)?)))
    };
    let (Some((low, at_low)), Some((high, at_high))) = (given().next(), given().next_back()) else {
        return Ok(None);
    };
    if low == high {
        return Err((
            None,
            format!(
                "the file gives cells at {index_name} = {low} only, so the spacing of {name}, \
                 and the window the cells tile, cannot be found"
            ),
        ));
    }
    let spacing = (at_high - at_low) / (high - low) as f64;
    if spacing.is_nan() || spacing <= 0.0 {
        return Err((
            None,
            format!("{name} does not increase with {index_name}: the cell centres are not a grid"),
        ));
    }
    // The given ends are the grid's ends when the file gives every cell: no arithmetic on them.
    let first = if low == 0 {
        at_low
    } else {
        at_low - low as f64 * spacing
    };
    let last = if high == points - 1 {
        at_high
    } else {
        at_high + (points - 1 - high) as f64 * spacing
    };
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

/// Whether two windows agree to a millionth of their extent (centres written to six or seven
/// digits).
pub(crate) fn same_window(a: &Window, b: &Window) -> bool {
    let close = |p: (f64, f64), q: (f64, f64)| {
        let extent = (q.1 - q.0).abs().max(f64::MIN_POSITIVE);
        (p.0 - q.0).abs() <= 1e-6 * extent && (p.1 - q.1).abs() <= 1e-6 * extent
    };
    close(a.x, b.x) && (a.y == (0.0, 0.0) || close(a.y, b.y))
}

/// Put each cell's value (`values`, in the order of `cells`) at j * nx + i, checking every cell
/// lies on the grid and is given once; None on the cells the file leaves out.
pub(crate) fn place_cells(
    cells: &[(usize, Cell)],
    values: impl Iterator<Item = Option<f64>>,
    (nx, ny): (usize, usize),
) -> Result<Vec<Option<f64>>, RowError> {
    let expected = nx.saturating_mul(ny);
    let mut placed = vec![None; expected];
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

/// "32 x 32", or "811-cell 1-D".
fn describe(nx: usize, ny: usize) -> String {
    if ny == 1 {
        format!("{nx}-cell 1-D")
    } else {
        format!("{nx} x {ny}")
    }
}

pub(crate) fn wrong_size_message(found: usize, (nx, ny): (usize, usize)) -> String {
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
