//! The dominant eigenpairs of a symmetric operator known only through products `x -> A x`:
//! Lanczos with full reorthogonalisation (Golub & Van Loan, "Matrix Computations", 4th ed.,
//! sections 10.1-10.3).
//!
//! k steps build an orthonormal basis Q_k of the Krylov space span{q, A q, ..., A^(k-1) q} and the
//! tridiagonal T_k = Q_k^T A Q_k; the eigenpairs (theta_j, s_j) of T_k give Ritz pairs
//! (theta_j, Q_k s_j), whose residual |A y_j - theta_j y_j| is |beta_k s_kj| exactly. Every new
//! basis vector is orthogonalised against all previous ones twice (classical Gram-Schmidt
//! twice), so the basis stays orthonormal to rounding and no spurious copies of converged
//! eigenvalues appear. Cost: k products with A plus O(n k^2) for the reorthogonalisation and
//! O(k^3) for the k x k eigenproblem; memory n k. Nothing here forms an n x n matrix.
//!
//! For a positive semi-definite A the top Ritz values are lower bounds of the top eigenvalues
//! (Cauchy interlacing), so tr(A) - sum of the top r Ritz values bounds the sum of all the
//! eigenvalues left out — the bound the low-rank uses of this module report.
//!
//! The start vector is fixed pseudo-random (SplitMix64 of the index): the result depends on the
//! operator alone, never on a random stream, and a vector with no symmetry avoids missing the
//! eigenvectors a symmetric start would be orthogonal to.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatRef, Par, Side};

/// Ritz pairs of a symmetric operator, largest first.
#[derive(Debug, Clone)]
pub(crate) struct RitzPairs {
    /// Ritz values, in decreasing order.
    pub(crate) values: Vec<f64>,
    /// Ritz vectors as columns (n x values.len()), orthonormal.
    pub(crate) vectors: Mat<f64>,
    /// |A y_j - theta_j y_j| for each pair.
    pub(crate) residuals: Vec<f64>,
    /// Lanczos steps taken (products with A).
    pub(crate) steps: usize,
    /// Whether the Krylov space became invariant (then the Ritz pairs are exact eigenpairs of A
    /// restricted to it).
    // Read by the tests (a low-rank operator ends in an invariant subspace); the callers only
    // need the pairs.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) invariant: bool,
}

impl RitzPairs {
    /// How many leading pairs have value >= `threshold` and residual <= `relative` x value:
    /// the converged dominant eigenpairs.
    pub(crate) fn converged_above(&self, threshold: f64, relative: f64) -> usize {
        self.values
            .iter()
            .zip(&self.residuals)
            .take_while(|&(&v, &r)| v >= threshold && v > 0.0 && r <= relative * v)
            .count()
    }

    /// The first `rank` pairs only.
    pub(crate) fn truncate(&mut self, rank: usize) {
        let rank = rank.min(self.values.len());
        self.values.truncate(rank);
        self.residuals.truncate(rank);
        self.vectors = self.vectors.subcols(0, rank).to_owned();
    }
}

/// The fixed start vector of length n (unit norm).
pub(crate) fn start_vector(n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n as u64)
        .map(|k| {
            let bits = splitmix64(k.wrapping_add(0x5eed));
            (bits >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Run up to `steps` Lanczos steps on the n x n symmetric operator `apply` (which writes A x into
/// its second argument) and return every Ritz pair, largest first.
pub(crate) fn lanczos(n: usize, steps: usize, apply: impl FnMut(&[f64], &mut [f64])) -> RitzPairs {
    let mut run = Lanczos::new(n, steps, apply);
    run.extend(steps);
    run.ritz_pairs()
}

/// Lanczos until every eigenvalue >= `threshold` has converged (to relative residual
/// `relative`): checked every [`CHECK_EVERY`] steps, it stops once a converged Ritz value below
/// the threshold follows the converged ones above it (or half the threshold is reached), or after
/// `max_steps`.
pub(crate) fn lanczos_above(
    n: usize,
    max_steps: usize,
    threshold: f64,
    relative: f64,
    apply: impl FnMut(&[f64], &mut [f64]),
) -> RitzPairs {
    let mut run = Lanczos::new(n, max_steps, apply);
    loop {
        let target = (run.steps() + CHECK_EVERY).min(run.capacity);
        run.extend(target);
        if run.steps() >= run.capacity || run.invariant {
            break;
        }
        let (values, residuals) = run.ritz_values();
        let above = values
            .iter()
            .zip(&residuals)
            .take_while(|&(&v, &r)| v >= threshold && r <= relative * v)
            .count();
        let next = values.get(above).zip(residuals.get(above));
        let settled = next.is_none_or(|(&v, &r)| {
            v < threshold && (r <= relative * v.abs() || v < 0.5 * threshold)
        });
        if settled {
            break;
        }
    }
    run.ritz_pairs()
}

/// Steps between convergence checks of [`lanczos_above`].
pub(crate) const CHECK_EVERY: usize = 20;

/// A Lanczos run in progress.
struct Lanczos<F> {
    apply: F,
    basis: Mat<f64>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    w: Vec<f64>,
    coefficients: Vec<f64>,
    capacity: usize,
    invariant: bool,
}

impl<F: FnMut(&[f64], &mut [f64])> Lanczos<F> {
    fn new(n: usize, max_steps: usize, apply: F) -> Self {
        let capacity = max_steps.clamp(1, n.max(1));
        let mut basis = Mat::<f64>::zeros(n, capacity + 1);
        let start = start_vector(n);
        basis
            .col_mut(0)
            .iter_mut()
            .zip(&start)
            .for_each(|(q, &s)| *q = s);
        Self {
            apply,
            basis,
            alpha: Vec::with_capacity(capacity),
            beta: Vec::with_capacity(capacity),
            w: vec![0.0; n],
            coefficients: vec![0.0; capacity + 1],
            capacity,
            invariant: false,
        }
    }

    fn steps(&self) -> usize {
        self.alpha.len()
    }

    /// Continue until `steps` steps (or an invariant subspace).
    fn extend(&mut self, steps: usize) {
        while self.alpha.len() < steps.min(self.capacity) && !self.invariant {
            let j = self.alpha.len();
            let q: Vec<f64> = self.basis.col(j).iter().copied().collect();
            (self.apply)(&q, &mut self.w);
            let a = dot(&q, &self.w);
            self.alpha.push(a);
            for _ in 0..2 {
                orthogonalise(
                    self.basis.as_ref().subcols(0, j + 1),
                    &mut self.w,
                    &mut self.coefficients,
                );
            }
            let b = dot(&self.w, &self.w).sqrt();
            let scale = self.alpha.iter().map(|x: &f64| x.abs()).fold(b, f64::max);
            if b <= 1e-12 * scale.max(f64::MIN_POSITIVE) {
                self.invariant = true;
                self.beta.push(0.0);
                break;
            }
            self.beta.push(b);
            let w = &self.w;
            self.basis
                .col_mut(j + 1)
                .iter_mut()
                .zip(w)
                .for_each(|(q, &x)| *q = x / b);
        }
    }

    /// The tridiagonal's eigenvectors and eigenvalues, largest first.
    fn eigen(&self) -> (Mat<f64>, Vec<f64>) {
        let (alpha, beta) = (&self.alpha, &self.beta);
        let k = alpha.len();
        let tridiagonal = Mat::from_fn(k, k, |a, b| {
            if a == b {
                alpha[a]
            } else if a == b + 1 {
                beta[b]
            } else if b == a + 1 {
                beta[a]
            } else {
                0.0
            }
        });
        let eigen = tridiagonal
            .self_adjoint_eigen(Side::Lower)
            .expect("the eigen-decomposition of a small symmetric tridiagonal matrix converges");
        // faer orders eigenvalues increasing; Ritz pairs are reported decreasing.
        let s = eigen.U();
        let ordered = Mat::from_fn(k, k, |a, b| s[(a, k - 1 - b)]);
        let values = (0..k).map(|j| eigen.S()[k - 1 - j]).collect();
        (ordered, values)
    }

    /// Ritz values and residual estimates, largest first.
    fn ritz_values(&self) -> (Vec<f64>, Vec<f64>) {
        let (s, values) = self.eigen();
        let k = values.len();
        let last = self.beta[k - 1];
        let residuals = (0..k).map(|j| (last * s[(k - 1, j)]).abs()).collect();
        (values, residuals)
    }

    fn ritz_pairs(self) -> RitzPairs {
        let (s, values) = self.eigen();
        let k = values.len();
        let last = self.beta[k - 1];
        let residuals = (0..k).map(|j| (last * s[(k - 1, j)]).abs()).collect();
        let vectors = self.basis.subcols(0, k) * &s;
        RitzPairs {
            values,
            vectors,
            residuals,
            steps: k,
            invariant: self.invariant,
        }
    }
}

/// w -= Q (Q^T w), Q the basis so far.
fn orthogonalise(basis: MatRef<'_, f64>, w: &mut [f64], coefficients: &mut [f64]) {
    let k = basis.ncols();
    let h = &mut coefficients[..k];
    {
        let wv = MatRef::from_column_major_slice(w, w.len(), 1);
        let hm = faer::MatMut::from_column_major_slice_mut(h, k, 1);
        matmul(hm, Accum::Replace, basis.transpose(), wv, 1.0, Par::Seq);
    }
    let hv = MatRef::from_column_major_slice(&coefficients[..k], k, 1);
    let n = w.len();
    let wm = faer::MatMut::from_column_major_slice_mut(w, n, 1);
    matmul(wm, Accum::Add, basis, hv, -1.0, Par::Seq);
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diagonal operator with a known spectrum hidden behind a fixed rotation (a product of
    /// Householder reflections): the top Ritz pairs converge to the true ones.
    #[test]
    fn finds_the_dominant_eigenpairs_of_a_rotated_diagonal() {
        let n = 120;
        let spectrum: Vec<f64> = (0..n).map(|k| 100.0 * 0.8f64.powi(k as i32)).collect();
        let reflections: Vec<Vec<f64>> = (0..3)
            .map(|r| {
                let mut v: Vec<f64> = (0..n).map(|k| ((k * (r + 3)) as f64).sin()).collect();
                let norm = dot(&v, &v).sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect();
        let rotate = |x: &mut [f64]| {
            for v in &reflections {
                let c = 2.0 * dot(v, x);
                x.iter_mut().zip(v).for_each(|(a, b)| *a -= c * b);
            }
        };
        let rotate_back = |x: &mut [f64]| {
            for v in reflections.iter().rev() {
                let c = 2.0 * dot(v, x);
                x.iter_mut().zip(v).for_each(|(a, b)| *a -= c * b);
            }
        };
        let apply = |x: &[f64], out: &mut [f64]| {
            out.copy_from_slice(x);
            rotate_back(out);
            out.iter_mut().zip(&spectrum).for_each(|(a, s)| *a *= s);
            rotate(out);
        };
        let pairs = lanczos(n, 60, apply);
        let converged = pairs.converged_above(1e-3, 1e-8);
        assert!(converged >= 20, "only {converged} converged");
        for (j, &expected) in spectrum.iter().enumerate().take(converged) {
            let rel = (pairs.values[j] - expected).abs() / expected;
            assert!(rel < 1e-10, "value {j}: {} vs {expected}", pairs.values[j]);
            // The Ritz vector satisfies A y = theta y to its reported residual.
            let y: Vec<f64> = pairs.vectors.col(j).iter().copied().collect();
            let mut ay = vec![0.0; n];
            apply(&y, &mut ay);
            let r: f64 = ay
                .iter()
                .zip(&y)
                .map(|(a, b)| (a - pairs.values[j] * b).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                r <= 10.0 * pairs.residuals[j] + 1e-10,
                "residual {j}: {r:e}"
            );
        }
        // Orthonormal to rounding.
        let gram = pairs.vectors.transpose() * &pairs.vectors;
        for a in 0..gram.nrows() {
            for b in 0..gram.ncols() {
                let expected = if a == b { 1.0 } else { 0.0 };
                assert!((gram[(a, b)] - expected).abs() < 1e-10);
            }
        }
    }

    #[test]
    fn a_low_rank_operator_ends_in_an_invariant_subspace() {
        let n = 40;
        let u: Vec<f64> = (0..n).map(|k| (k as f64).cos()).collect();
        let v: Vec<f64> = (0..n).map(|k| ((k * k) as f64 * 0.1).sin()).collect();
        let apply = |x: &[f64], out: &mut [f64]| {
            let (a, b) = (dot(&u, x), dot(&v, x));
            for k in 0..n {
                out[k] = 3.0 * a * u[k] + b * v[k];
            }
        };
        let pairs = lanczos(n, 40, apply);
        assert!(pairs.invariant);
        assert!(pairs.steps <= 3, "{} steps", pairs.steps);
    }
}
