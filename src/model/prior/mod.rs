//! Gaussian-process priors on the grid, behind one trait.
//!
//! A prior is u ~ N(0, C) on the N cells of a grid, held through a structured square root L with
//! L L^T = C: the samplers work in whitened coordinates xi ~ N(0, I) with u = L xi, so they need
//! only products with L (a proposal, a prior draw) and L^T (a gradient), never C^-1 and never an
//! N x N matrix. [`Prior`] is that interface; [`KroneckerPrior`] implements it for separable
//! kernels on a grid (C = C_1 (x) C_1, products in O(N^1.5)). A prior may use more whitened
//! coordinates than cells ([`Prior::latent_dim`] >= N), as a circulant embedding on a padded torus
//! does.

mod kronecker;

use std::fmt::Debug;

pub use kronecker::{BAND_ROWS, KroneckerPrior, axis_kernel_matrix, dense_kernel_matrix};

use super::grid::Grid;

/// The prior could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum PriorError {
    #[error(
        "the kernel is not a number at length scale {length_scale:?} and variance {variance:?} \
         (2 l^2 or the variance is outside double precision)"
    )]
    NonFiniteKernel { length_scale: f64, variance: f64 },
    #[error(
        "the {side} x {side} axis kernel (length scale {length_scale:?}) is not positive definite \
         even with jitter {max_jitter:e}"
    )]
    NotPositiveDefinite {
        side: usize,
        length_scale: f64,
        max_jitter: f64,
    },
}

/// A zero-mean Gaussian prior on a grid, used through its square root L (L L^T = C).
///
/// Every product is deterministic and depends only on its input: a field's numbers never
/// depend on which other fields were computed before or beside it.
pub trait Prior: Send + Sync + Debug {
    /// The grid the field lives on.
    fn grid(&self) -> Grid;

    /// N: cells of the field u.
    fn cells(&self) -> usize {
        self.grid().cells()
    }

    /// The number of whitened coordinates xi (N for a square root of C itself; more for an
    /// embedding).
    fn latent_dim(&self) -> usize;

    /// Scratch values the products below need.
    fn scratch_len(&self) -> usize;

    /// u = L xi: `xi` has [`Prior::latent_dim`] values, `out` has N.
    fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]);

    /// xi = L^T v: `v` has N values, `out` has [`Prior::latent_dim`]. The gradient of a function
    /// of u = L xi with respect to xi is L^T times its gradient with respect to u.
    fn apply_sqrt_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]);

    /// C x for one field (N values in, N out).
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]);

    /// C_ab: the prior covariance of cells `a` and `b` (as used, jitter included).
    fn covariance(&self, a: usize, b: usize) -> f64;

    /// The diagonal jitter added to make the factorisation succeed (0 when none was needed).
    fn jitter(&self) -> f64;

    /// u = L xi for `count` fields stored one after another.
    fn apply_sqrt_batch(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64], count: usize) {
        let (k, n) = (self.latent_dim(), self.cells());
        for (field, target) in xi.chunks_exact(k).zip(out.chunks_exact_mut(n)).take(count) {
            self.apply_sqrt(field, target, scratch);
        }
    }
}
