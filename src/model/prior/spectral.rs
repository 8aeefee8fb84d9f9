//! The prior's eigendecomposition as a square root: C = B B^T with B = U Lambda^1/2 (U the
//! eigenvectors of C, Lambda its eigenvalues), for kinds that treat the prior's eigen-directions
//! differently (mgrad: Titsias & Papaspiliopoulos 2018).
//!
//! B's coordinates eta ("spectral coordinates") are whitened like the prior's own coordinates
//! xi (eta ~ N(0, I) a priori) and related to them by an orthogonal map: B = L P with P
//! orthogonal, so xi = P eta. A prior offers a spectral root through
//! [`super::Prior::spectral_root`] when it has a cheap one:
//!
//! - [`KroneckerSpectral`] (C = C_1 (x) C_1): from the D x D eigendecomposition
//!   L_1^T L_1 = P_1 Lambda_1 P_1^T, B_1 = L_1 P_1 = U_1 Lambda_1^1/2, and B = B_1 (x) B_1,
//!   P = P_1 (x) P_1, eigenvalues lambda_1i lambda_1j: every product is two D x D matrix
//!   products, O(N^1.5). Taking the eigenvectors of L_1^T L_1 (rather than of C_1, then
//!   P_1 = L_1^-1 B_1) keeps P_1 orthogonal to rounding however ill-conditioned C_1 is.
//! - [`WhitenedSpectral`]: the generic fallback for a prior without one — the prior's own square
//!   root with every eigenvalue taken as 1 (the whitened prior's spectrum), P = I.

use std::fmt::Debug;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

use super::leading_block::LeadingBlock;
use super::sandwich::sandwich;
use super::{KroneckerPrior, Prior};

/// A square root B = L P of the prior covariance whose columns are the prior's eigenvectors
/// scaled by the square roots of their eigenvalues.
pub trait SpectralRoot: Send + Sync + Debug {
    /// The prior covariance's eigenvalue of each spectral coordinate (latent_dim values, >= 0).
    fn eigenvalues(&self) -> &[f64];
    /// Scratch values the products need.
    fn scratch_len(&self) -> usize;
    /// u = B eta (N values out).
    fn apply(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]);
    /// eta = B^T v (v has N values).
    fn apply_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]);
    /// xi = P eta: the prior's whitened coordinates of a spectral position.
    fn to_whitened(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]);
    /// eta = P^T xi.
    fn to_spectral(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]);
    /// Column `k` of B (N values out; its squared norm is the `k`-th eigenvalue): B e_k unless a
    /// root has it cheaper.
    fn column(&self, k: usize, out: &mut [f64], scratch: &mut [f64]) {
        let mut unit = vec![0.0; self.eigenvalues().len()];
        unit[k] = 1.0;
        self.apply(&unit, out, scratch);
    }
    /// sum_n w_n B_nk^2 for every column k (`weights` has N values): column by column unless a
    /// root has it cheaper.
    fn weighted_column_norms(&self, weights: &[f64]) -> Vec<f64> {
        let mut scratch = vec![0.0; self.scratch_len()];
        let mut column = vec![0.0; weights.len()];
        (0..self.eigenvalues().len())
            .map(|k| {
                self.column(k, &mut column, &mut scratch);
                column.iter().zip(weights).map(|(b, w)| w * b * b).sum()
            })
            .collect()
    }
    /// The smallest block of leading coordinates holding all but `leftover` of `shares` (one per
    /// coordinate), where the root has blocks ([`LeadingBlock`]: a Kronecker root) and the block
    /// is at most half the coordinates.
    fn leading_block(&self, _shares: &[f64], _leftover: f64) -> Option<LeadingBlock> {
        None
    }
}

/// The spectral root of a Kronecker prior.
#[derive(Debug, Clone)]
pub(crate) struct KroneckerSpectral {
    side: usize,
    /// B_1 = L_1 P_1.
    root: Mat<f64>,
    /// P_1, orthogonal.
    rotation: Mat<f64>,
    eigenvalues: Vec<f64>,
}

impl KroneckerSpectral {
    pub(crate) fn new(prior: &KroneckerPrior) -> Self {
        let l = prior.axis_factor();
        let side = l.nrows();
        let gram = l.transpose() * l;
        let eigen = gram
            .self_adjoint_eigen(Side::Lower)
            .expect("the eigendecomposition of a small symmetric matrix converges");
        let rotation = eigen.U().to_owned();
        let axis: Vec<f64> = (0..side).map(|k| eigen.S()[k].max(0.0)).collect();
        let root = l * &rotation;
        let eigenvalues = (0..side * side)
            .map(|cell| axis[cell % side] * axis[cell / side])
            .collect();
        Self {
            side,
            root,
            rotation,
            eigenvalues,
        }
    }
}

impl SpectralRoot for KroneckerSpectral {
    fn eigenvalues(&self) -> &[f64] {
        &self.eigenvalues
    }
    fn scratch_len(&self) -> usize {
        self.side * self.side
    }
    fn apply(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.root.as_ref(), eta, out, scratch);
    }
    fn apply_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.root.transpose(), v, out, scratch);
    }
    fn to_whitened(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.rotation.as_ref(), eta, out, scratch);
    }
    fn to_spectral(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.rotation.transpose(), xi, out, scratch);
    }
    /// With Q = B_1 o B_1 (elementwise) and W the weights in the grid's layout, the norms of
    /// columns (i, j) are the entries of Q^T W Q: two D x D products.
    fn weighted_column_norms(&self, weights: &[f64]) -> Vec<f64> {
        let d = self.side;
        let squares = Mat::from_fn(d, d, |i, k| self.root[(i, k)] * self.root[(i, k)]);
        let grid = MatRef::from_column_major_slice(weights, d, d);
        let mut half = Mat::<f64>::zeros(d, d);
        matmul(
            half.as_mut(),
            Accum::Replace,
            squares.transpose(),
            grid,
            1.0,
            Par::Seq,
        );
        let mut norms = vec![0.0; d * d];
        let out = MatMut::from_column_major_slice_mut(&mut norms, d, d);
        matmul(
            out,
            Accum::Replace,
            half.as_ref(),
            squares.as_ref(),
            1.0,
            Par::Seq,
        );
        norms
    }
    fn leading_block(&self, shares: &[f64], leftover: f64) -> Option<LeadingBlock> {
        LeadingBlock::choose(self.rotation.as_ref(), shares, leftover)
    }
    /// Column (i, j) of B_1 (x) B_1 is the outer product of B_1's columns i and j: N products.
    fn column(&self, k: usize, out: &mut [f64], _scratch: &mut [f64]) {
        let d = self.side;
        let (first, second) = (self.root.col(k % d), self.root.col(k / d));
        for (j, block) in out.chunks_exact_mut(d).enumerate() {
            let scale = second[j];
            for (o, &x) in block.iter_mut().zip(first.iter()) {
                *o = x * scale;
            }
        }
    }
}

/// The fallback: the prior's own square root, every eigenvalue 1.
#[derive(Debug)]
pub(crate) struct WhitenedSpectral<'p> {
    prior: &'p dyn Prior,
    ones: Vec<f64>,
}

impl<'p> WhitenedSpectral<'p> {
    pub(crate) fn new(prior: &'p dyn Prior) -> Self {
        Self {
            prior,
            ones: vec![1.0; prior.latent_dim()],
        }
    }
}

impl SpectralRoot for WhitenedSpectral<'_> {
    fn eigenvalues(&self) -> &[f64] {
        &self.ones
    }
    fn scratch_len(&self) -> usize {
        self.prior.scratch_len()
    }
    fn apply(&self, eta: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.prior.apply_sqrt(eta, out, scratch);
    }
    fn apply_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.prior.apply_sqrt_transpose(v, out, scratch);
    }
    fn to_whitened(&self, eta: &[f64], out: &mut [f64], _scratch: &mut [f64]) {
        out.copy_from_slice(eta);
    }
    fn to_spectral(&self, xi: &[f64], out: &mut [f64], _scratch: &mut [f64]) {
        out.copy_from_slice(xi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::spec::KernelSpec;

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// B = L P: B eta equals L (P eta); B B^T = C, so B's columns are C's eigenvectors scaled by
    /// the square roots of the eigenvalues it reports; P is orthogonal; B^T is B's adjoint. With a
    /// long length scale (jittered, ill-conditioned C_1) too.
    /// The fallback's basis is the whitened coordinates themselves: the identity covariance,
    /// one unit eigenvalue per latent coordinate, and B = L.
    #[test]
    fn the_whitened_fallback_has_unit_eigenvalues_and_the_priors_root() {
        let prior =
            KroneckerPrior::new(Grid::new(4), KernelSpec::squared_exponential(0.4, 1.3)).unwrap();
        let whitened = WhitenedSpectral::new(&prior);
        assert_eq!(whitened.eigenvalues(), vec![1.0; 16].as_slice());
        let mut scratch = vec![0.0; whitened.scratch_len().max(prior.scratch_len())];
        let eta: Vec<f64> = (0..16).map(|k| (k as f64 * 0.9).sin()).collect();
        let (mut b_eta, mut l_eta) = (vec![0.0; 16], vec![0.0; 16]);
        whitened.apply(&eta, &mut b_eta, &mut scratch);
        Prior::apply_sqrt(&prior, &eta, &mut l_eta, &mut scratch);
        assert_eq!(b_eta, l_eta);
    }

    #[test]
    fn the_kronecker_spectral_root_is_the_scaled_eigenbasis() {
        for (d, l) in [(5, 0.3), (7, 0.1), (6, 2.0)] {
            let prior =
                KroneckerPrior::new(Grid::new(d), KernelSpec::squared_exponential(l, 1.7)).unwrap();
            let spectral = KroneckerSpectral::new(&prior);
            let n = d * d;
            let mut scratch = vec![0.0; n];
            let eta: Vec<f64> = (0..n).map(|k| ((k * 7 % 11) as f64 - 5.0) / 3.0).collect();
            let (mut u, mut xi, mut lxi) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            spectral.apply(&eta, &mut u, &mut scratch);
            spectral.to_whitened(&eta, &mut xi, &mut scratch);
            Prior::apply_sqrt(&prior, &xi, &mut lxi, &mut scratch);
            let scale = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for k in 0..n {
                assert!(
                    (u[k] - lxi[k]).abs() < 1e-12 * scale,
                    "D={d} l={l}: B != L P"
                );
            }
            let mut back = vec![0.0; n];
            spectral.to_spectral(&xi, &mut back, &mut scratch);
            for k in 0..n {
                assert!(
                    (back[k] - eta[k]).abs() < 1e-12,
                    "D={d} l={l}: P not orthogonal"
                );
            }
            let v: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).cos()).collect();
            let mut btv = vec![0.0; n];
            spectral.apply_transpose(&v, &mut btv, &mut scratch);
            let (left, right) = (dot(&u, &v), dot(&eta, &btv));
            assert!((left - right).abs() < 1e-12 * left.abs().max(1.0));
            // Column k of B: C b_k = lambda_k b_k.
            for k in [0, n / 2, n - 1] {
                let mut e = vec![0.0; n];
                e[k] = 1.0;
                let mut b = vec![0.0; n];
                spectral.apply(&e, &mut b, &mut scratch);
                let mut cb = vec![0.0; n];
                prior.apply_covariance(&b, &mut cb);
                let lambda = spectral.eigenvalues()[k];
                let top = spectral.eigenvalues().iter().fold(0.0f64, |m, &x| m.max(x));
                for c in 0..n {
                    assert!(
                        (cb[c] - lambda * b[c]).abs() < 1e-10 * top,
                        "D={d} l={l} k={k}"
                    );
                }
                assert!((dot(&b, &b) - lambda).abs() < 1e-10 * top);
                let mut column = vec![0.0; n];
                spectral.column(k, &mut column, &mut scratch);
                for c in 0..n {
                    assert!((column[c] - b[c]).abs() < 1e-14 * top, "D={d} l={l} k={k}");
                }
                let weights: Vec<f64> = (0..n).map(|c| 0.1 + (c % 7) as f64).collect();
                let norm: f64 = b.iter().zip(&weights).map(|(x, w)| w * x * x).sum();
                let norms = spectral.weighted_column_norms(&weights);
                assert!(
                    (norms[k] - norm).abs() < 1e-12 * top * 7.0,
                    "D={d} l={l} k={k}"
                );
            }
        }
    }

    /// E's columns are the spectral root's coordinates (i, j) of the block: E y equals P applied
    /// to y placed in the block (zeros elsewhere), E^T is its adjoint, and E^T E = I.
    #[test]
    fn the_block_is_the_spectral_coordinates_it_names() {
        let d = 9;
        let prior =
            KroneckerPrior::new(Grid::new(d), KernelSpec::squared_exponential(0.3, 1.4)).unwrap();
        let spectral = KroneckerSpectral::new(&prior);
        let n = d * d;
        // Shares only on the top 3 x 3 block (indices 6..9 along both axes).
        let mut shares = vec![0.0; n];
        for i in 6..9 {
            for j in 6..9 {
                shares[i + d * j] = 1.0 + (i * j) as f64;
            }
        }
        let block = spectral.leading_block(&shares, 0.0).unwrap();
        assert_eq!((block.size(), block.dim()), (3, 9));
        let mut scratch = vec![0.0; block.scratch_len().max(n)];
        let y: Vec<f64> = (0..9).map(|k| (k as f64 * 0.7).sin()).collect();
        let mut xi = vec![0.0; n];
        block.expand(&y, &mut xi, &mut scratch);
        let mut eta = vec![0.0; n];
        for a in 0..3 {
            for b in 0..3 {
                eta[(6 + a) + d * (6 + b)] = y[a + 3 * b];
            }
        }
        let mut reference = vec![0.0; n];
        spectral.to_whitened(&eta, &mut reference, &mut scratch);
        for c in 0..n {
            assert!((xi[c] - reference[c]).abs() < 1e-14, "cell {c}");
        }
        let v: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).cos()).collect();
        let mut back = vec![0.0; 9];
        block.project(&v, &mut back, &mut scratch);
        assert!((dot(&xi, &v) - dot(&y, &back)).abs() < 1e-13);
        block.project(&xi, &mut back, &mut scratch);
        for k in 0..9 {
            assert!((back[k] - y[k]).abs() < 1e-14);
        }
    }
}
