//! The D x D grid over [0,1]^2 and the one cell-ordering convention used everywhere.
//!
//! Cell (i, j) sits at x = i / (D - 1), y = j / (D - 1); `i` indexes x and `j` indexes y, both
//! from 0. A field over the grid is a vector of length N = D^2 with cell (i, j) at
//! `n = j * D + i` (x fastest). This is the row order of the grid CSV files in `data/`, and it is
//! the column-major order of a D x D matrix `U[(i, j)]`, which is what makes the Kronecker prior
//! `u = (L_1 (x) L_1) xi` the matrix product `U = L_1 Xi L_1^T`.

/// A square grid with `side` points per axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    side: usize,
}

impl Grid {
    /// A grid with `side` >= 1 points per axis.
    pub fn new(side: usize) -> Self {
        assert!(side >= 1, "a grid needs at least one point per axis");
        Self { side }
    }

    /// D: points per axis.
    pub fn side(&self) -> usize {
        self.side
    }

    /// N = D^2: cells in the grid.
    pub fn cells(&self) -> usize {
        self.side * self.side
    }

    /// The coordinate of point `k` along one axis: k / (D - 1), or 0 when D = 1.
    pub fn axis_coordinate(&self, k: usize) -> f64 {
        if self.side == 1 {
            0.0
        } else {
            k as f64 / (self.side - 1) as f64
        }
    }

    /// The field index of cell (i, j).
    pub fn index(&self, i: usize, j: usize) -> usize {
        j * self.side + i
    }

    /// The cell (i, j) of field index `n`.
    pub fn cell(&self, n: usize) -> (usize, usize) {
        (n % self.side, n / self.side)
    }

    /// The (x, y) position of field index `n`.
    pub fn position(&self, n: usize) -> (f64, f64) {
        let (i, j) = self.cell(n);
        (self.axis_coordinate(i), self.axis_coordinate(j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_cell_are_inverse_and_x_runs_fastest() {
        let g = Grid::new(5);
        assert_eq!(g.index(1, 0), 1);
        assert_eq!(g.index(0, 1), 5);
        for n in 0..g.cells() {
            let (i, j) = g.cell(n);
            assert_eq!(g.index(i, j), n);
        }
        assert_eq!(g.position(24), (1.0, 1.0));
        assert_eq!(Grid::new(1).position(0), (0.0, 0.0));
    }
}
