//! The window a grid CSV's cell centres give: [first centre - h/2, last centre + h/2] along each
//! axis, h the spacing, the centres checked to lie on a regular grid (each within a thousandth of
//! a cell of it); from the lowest and highest index the file gives when it leaves cells out. Also
//! when two windows agree (a covariates or exposure file on the study's grid).

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
