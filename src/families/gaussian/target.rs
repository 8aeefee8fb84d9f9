//! The gaussian family's target N(m, S): its covariance structure, checked once, and the
//! operations the samplers need of it (an exact draw, the log density, the full conditionals).
//!
//! Two structures: the notes' equicorrelated S = (1 - rho) I + rho 1 1^T, whose conditionals
//! cost O(1) with a running sum and which never forms a d x d matrix (so d may be large), and a
//! covariance given in full ([`DenseCovariance`]), checked square, symmetric and positive
//! definite, with its Cholesky factor L (exact draws m + L z) and its precision Q = S^-1 (the
//! conditionals x_i | x_-i ~ N(m_i - sum_{j != i} Q_ij (x_j - m_j) / Q_ii, 1 / Q_ii) and the
//! log density -(x - m)^T Q (x - m) / 2). Samplers work on the centred state y = x - m; the
//! mean is added where states are kept.

use rand_distr::{Distribution, StandardNormal};

use crate::streams::StreamRng;

/// Entries S_ij and S_ji may differ by this share of the largest |S_ij|.
pub(crate) const SYMMETRY_TOLERANCE: f64 = 1e-9;
/// A Cholesky pivot at or below this share of the largest diagonal entry fails the
/// factorisation: the matrix is not (numerically) positive definite.
pub(crate) const PIVOT_TOLERANCE: f64 = 1e-12;

/// Why a covariance given in full cannot be a target's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CovarianceError {
    #[error("the covariance has no rows")]
    Empty,
    #[error("row {row} of the covariance has {len} entries, not {n} (the matrix must be square)")]
    NotSquare { row: usize, len: usize, n: usize },
    #[error("covariance entry ({row}, {col}) is not a finite number")]
    NotFinite { row: usize, col: usize },
    #[error(
        "the covariance is not symmetric: entry ({row}, {col}) = {upper:?} but ({col}, {row}) = {lower:?}"
    )]
    Asymmetric {
        row: usize,
        col: usize,
        upper: f64,
        lower: f64,
    },
    #[error(
        "the covariance is not positive definite: its Cholesky factorisation fails; the smallest \
         pivot is {pivot:.3e} at coordinate {coordinate} (pivots must be > 0)"
    )]
    NotPositiveDefinite { coordinate: usize, pivot: f64 },
}

/// A covariance given in full, with what the samplers need of it (row-major n x n).
#[derive(Debug, Clone, PartialEq)]
pub struct DenseCovariance {
    n: usize,
    covariance: Vec<f64>,
    /// The lower Cholesky factor L, S = L L^T.
    lower: Vec<f64>,
    /// Q = S^-1.
    precision: Vec<f64>,
}

impl DenseCovariance {
    /// Checks `rows` (square, finite, symmetric to [`SYMMETRY_TOLERANCE`], positive definite)
    /// and factorises them. Rows and columns in errors count from 1.
    pub fn new(rows: &[Vec<f64>]) -> Result<Self, CovarianceError> {
        let n = rows.len();
        if n == 0 {
            return Err(CovarianceError::Empty);
        }
        let mut covariance = Vec::with_capacity(n * n);
        for (row, entries) in rows.iter().enumerate() {
            if entries.len() != n {
                return Err(CovarianceError::NotSquare {
                    row: row + 1,
                    len: entries.len(),
                    n,
                });
            }
            if let Some(col) = entries.iter().position(|v| !v.is_finite()) {
                return Err(CovarianceError::NotFinite {
                    row: row + 1,
                    col: col + 1,
                });
            }
            covariance.extend_from_slice(entries);
        }
        check_symmetric(&covariance, n)?;
        let lower = cholesky(&covariance, n)?;
        let precision = precision_from_cholesky(&lower, n);
        Ok(DenseCovariance {
            n,
            covariance,
            lower,
            precision,
        })
    }

    /// The dimension n.
    pub(crate) fn dimension(&self) -> usize {
        self.n
    }

    /// S_ij.
    pub(crate) fn covariance(&self, i: usize, j: usize) -> f64 {
        self.covariance[i * self.n + j]
    }

    /// Q_ij.
    pub(crate) fn precision(&self, i: usize, j: usize) -> f64 {
        self.precision[i * self.n + j]
    }

    fn precision_row(&self, i: usize) -> &[f64] {
        &self.precision[i * self.n..(i + 1) * self.n]
    }
}

/// The largest |S_ij - S_ji| against the tolerance.
fn check_symmetric(s: &[f64], n: usize) -> Result<(), CovarianceError> {
    let largest = s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst: Option<(usize, usize, f64)> = None;
    for i in 0..n {
        for j in i + 1..n {
            let gap = (s[i * n + j] - s[j * n + i]).abs();
            if gap > SYMMETRY_TOLERANCE * largest && worst.is_none_or(|w| gap > w.2) {
                worst = Some((i, j, gap));
            }
        }
    }
    match worst {
        Some((i, j, _)) => Err(CovarianceError::Asymmetric {
            row: i + 1,
            col: j + 1,
            upper: s[i * n + j],
            lower: s[j * n + i],
        }),
        None => Ok(()),
    }
}

/// The pivots of S = L D L^T (unit lower L; Gaussian elimination without pivoting, using the
/// lower triangle). Every pivot is positive exactly when S is positive definite; unlike a plain
/// Cholesky factorisation this goes on past a negative pivot, so the smallest can be reported.
/// Stops after a zero pivot (elimination cannot go on).
fn ldl_pivots(s: &[f64], n: usize) -> Vec<f64> {
    let mut l = vec![0.0f64; n * n];
    let mut d = Vec::with_capacity(n);
    for j in 0..n {
        let pivot = s[j * n + j] - (0..j).map(|k| l[j * n + k].powi(2) * d[k]).sum::<f64>();
        d.push(pivot);
        if pivot == 0.0 {
            break;
        }
        for i in j + 1..n {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k] * d[k]).sum();
            l[i * n + j] = (s[i * n + j] - dot) / pivot;
        }
    }
    d
}

/// The lower Cholesky factor of S (symmetric), or the smallest pivot where it fails.
fn cholesky(s: &[f64], n: usize) -> Result<Vec<f64>, CovarianceError> {
    let scale = (0..n).fold(0.0f64, |m, i| m.max(s[i * n + i].abs()));
    let pivots = ldl_pivots(s, n);
    let (smallest, pivot) = pivots
        .iter()
        .copied()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0));
    if pivots.len() < n || pivot <= PIVOT_TOLERANCE * scale {
        return Err(CovarianceError::NotPositiveDefinite {
            coordinate: smallest + 1,
            pivot,
        });
    }
    let mut l = vec![0.0f64; n * n];
    for j in 0..n {
        let diagonal = (s[j * n + j] - (0..j).map(|k| l[j * n + k].powi(2)).sum::<f64>()).sqrt();
        l[j * n + j] = diagonal;
        for i in j + 1..n {
            let dot: f64 = (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum();
            l[i * n + j] = (s[i * n + j] - dot) / diagonal;
        }
    }
    Ok(l)
}

/// Q = S^-1 = L^-T L^-1 from the lower Cholesky factor.
fn precision_from_cholesky(l: &[f64], n: usize) -> Vec<f64> {
    // M = L^-1, lower triangular, by forward substitution column by column.
    let mut m = vec![0.0; n * n];
    for col in 0..n {
        m[col * n + col] = 1.0 / l[col * n + col];
        for i in col + 1..n {
            let dot: f64 = (col..i).map(|k| l[i * n + k] * m[k * n + col]).sum();
            m[i * n + col] = -dot / l[i * n + i];
        }
    }
    let mut q = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let value: f64 = (i..n).map(|k| m[k * n + i] * m[k * n + j]).sum();
            q[i * n + j] = value;
            q[j * n + i] = value;
        }
    }
    q
}

/// The covariance structure of a gaussian target.
#[derive(Debug, Clone, PartialEq)]
pub enum Structure {
    /// S = (1 - rho) I + rho 1 1^T (unit variances, every pair correlated rho).
    Equicorrelated { dimension: usize, correlation: f64 },
    /// S given in full.
    Dense(DenseCovariance),
}

impl Structure {
    /// The dimension d.
    pub(crate) fn dimension(&self) -> usize {
        match self {
            Structure::Equicorrelated { dimension, .. } => *dimension,
            Structure::Dense(dense) => dense.dimension(),
        }
    }

    /// S_ij.
    pub fn covariance(&self, i: usize, j: usize) -> f64 {
        match self {
            Structure::Equicorrelated { correlation, .. } => {
                if i == j {
                    1.0
                } else {
                    *correlation
                }
            }
            Structure::Dense(dense) => dense.covariance(i, j),
        }
    }

    /// The correlation of x1 and x2 of a bivariate target.
    pub(crate) fn bivariate_correlation(&self) -> Option<f64> {
        (self.dimension() == 2)
            .then(|| self.covariance(0, 1) / (self.covariance(0, 0) * self.covariance(1, 1)).sqrt())
    }

    /// An exact draw of N(0, S).
    pub(crate) fn exact_draw(&self, rng: &mut StreamRng) -> Vec<f64> {
        let z: Vec<f64> = (0..self.dimension())
            .map(|_| StandardNormal.sample(rng))
            .collect();
        match self {
            // sqrt(1 - rho) (z - mean(z) 1) + sqrt(1 + (d - 1) rho) mean(z) 1.
            Structure::Equicorrelated {
                dimension,
                correlation,
            } => {
                let d = *dimension as f64;
                let mean = z.iter().sum::<f64>() / d;
                let along = (1.0 + (d - 1.0) * correlation).sqrt();
                let across = (1.0 - correlation).sqrt();
                z.iter()
                    .map(|zi| across * (zi - mean) + along * mean)
                    .collect()
            }
            Structure::Dense(dense) => (0..dense.n)
                .map(|i| {
                    let row = &dense.lower[i * dense.n..i * dense.n + i + 1];
                    row.iter().zip(&z).map(|(l, z)| l * z).sum()
                })
                .collect(),
        }
    }

    /// log N(y; 0, S) up to a constant, at a centred state y.
    pub(crate) fn log_density(&self, y: &[f64]) -> f64 {
        match self {
            Structure::Equicorrelated { correlation, .. } => {
                let norm2: f64 = y.iter().map(|v| v * v).sum();
                let sum: f64 = y.iter().sum();
                -(norm2 - equicorrelated_c(y.len(), *correlation) * sum * sum)
                    / (2.0 * (1.0 - correlation))
            }
            Structure::Dense(dense) => {
                let quadratic: f64 = (0..dense.n)
                    .map(|i| y[i] * dot(dense.precision_row(i), y))
                    .sum();
                -0.5 * quadratic
            }
        }
    }
}

/// c = rho / (1 + (d - 1) rho): the off-diagonal weight of the equicorrelated precision
/// Q = (I - c 1 1^T) / (1 - rho).
fn equicorrelated_c(dimension: usize, correlation: f64) -> f64 {
    correlation / (1.0 + (dimension as f64 - 1.0) * correlation)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A Gibbs chain's running summary of its centred state, so each coordinate's full conditional
/// is drawn without a pass over the whole precision: the sum of the coordinates (equicorrelated:
/// O(1) per update) or the residual r = Q y (dense: O(d) per update).
pub(crate) enum Conditionals<'a> {
    Equicorrelated {
        slope: f64,
        sd: f64,
        sum: f64,
    },
    Dense {
        dense: &'a DenseCovariance,
        residual: Vec<f64>,
    },
}

impl<'a> Conditionals<'a> {
    /// The summary of the centred state `y`.
    pub(crate) fn new(structure: &'a Structure, y: &[f64]) -> Self {
        match structure {
            Structure::Equicorrelated {
                dimension,
                correlation,
            } => {
                // x_i | rest ~ N(c / (1 - c) * sum_{j != i} x_j, (1 - rho) / (1 - c)).
                let c = equicorrelated_c(*dimension, *correlation);
                Conditionals::Equicorrelated {
                    slope: c / (1.0 - c),
                    sd: ((1.0 - correlation) / (1.0 - c)).sqrt(),
                    sum: y.iter().sum(),
                }
            }
            Structure::Dense(dense) => Conditionals::Dense {
                dense,
                residual: (0..dense.n)
                    .map(|i| dot(dense.precision_row(i), y))
                    .collect(),
            },
        }
    }

    /// Draws y_i from its full conditional given the other coordinates, with the standard
    /// normal `z`.
    pub(crate) fn update(&mut self, y: &mut [f64], i: usize, z: f64) {
        match self {
            Conditionals::Equicorrelated { slope, sd, sum } => {
                let others = *sum - y[i];
                let new = *slope * others + *sd * z;
                *sum = others + new;
                y[i] = new;
            }
            Conditionals::Dense { dense, residual } => {
                // The conditional mean is y_i - r_i / Q_ii, its variance 1 / Q_ii.
                let q_ii = dense.precision(i, i);
                let new = y[i] - residual[i] / q_ii + z / q_ii.sqrt();
                let delta = new - y[i];
                for (r, q) in residual.iter_mut().zip(dense.precision_row(i)) {
                    *r += delta * q;
                }
                y[i] = new;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_precision_inverts_the_covariance() {
        let rows = vec![
            vec![2.0, 0.6, -0.3],
            vec![0.6, 1.0, 0.2],
            vec![-0.3, 0.2, 0.5],
        ];
        let dense = DenseCovariance::new(&rows).unwrap();
        for (i, row) in rows.iter().enumerate() {
            for j in 0..3 {
                let product: f64 = (0..3).map(|k| row[k] * dense.precision(k, j)).sum();
                let identity = if i == j { 1.0 } else { 0.0 };
                assert!((product - identity).abs() < 1e-12, "({i}, {j}): {product}");
            }
        }
    }

    #[test]
    fn bad_covariances_say_what_is_wrong() {
        let ragged = DenseCovariance::new(&[vec![1.0, 0.0], vec![0.0]]);
        assert_eq!(
            ragged,
            Err(CovarianceError::NotSquare {
                row: 2,
                len: 1,
                n: 2
            })
        );
        let asymmetric = DenseCovariance::new(&[vec![1.0, 0.5], vec![0.4, 1.0]]);
        assert!(matches!(
            asymmetric,
            Err(CovarianceError::Asymmetric { row: 1, col: 2, .. })
        ));
        // Eigenvalues 3 and -1: the second pivot is 1 - 4 = -3.
        let indefinite = DenseCovariance::new(&[vec![1.0, 2.0], vec![2.0, 1.0]]);
        assert_eq!(
            indefinite,
            Err(CovarianceError::NotPositiveDefinite {
                coordinate: 2,
                pivot: -3.0
            })
        );
        let singular = DenseCovariance::new(&[vec![1.0, 1.0], vec![1.0, 1.0]]);
        assert!(matches!(
            singular,
            Err(CovarianceError::NotPositiveDefinite { coordinate: 2, .. })
        ));
    }
}
