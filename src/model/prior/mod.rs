//! Gaussian-process priors on the grid, behind one trait.
//!
//! A prior is u ~ N(0, C) on the N cells of a grid, held through a structured square root L with
//! L L^T = C: the samplers work in whitened coordinates xi ~ N(0, I) with u = L xi, so they need
//! only products with L (a proposal, a prior draw) and L^T (a gradient), never C^-1 and never an
//! N x N matrix. [`Prior`] is that interface, and [`build_prior`] chooses its implementation:
//!
//! - [`KroneckerPrior`] (`kronecker.rs`): separable kernels, C = C_y (x) C_x, products in
//!   O(N (nx + ny)): the squared exponential on every grid, and every kernel on a 1-D grid.
//! - [`CirculantPrior`] (`circulant.rs`, with the torus FFTs of `torus.rs`): the exponential and
//!   Matern kernels on 2-D grids, by circulant embedding on a padded torus, products in
//!   O(P log P); its whitened coordinates live on the torus ([`Prior::latent_dim`] = P > N).
//!
//! The kernels themselves (correlation functions, the dense reference matrix) are in `kernel.rs`;
//! [`differentiable`] holds a separable prior's symmetric root as a function of the length scale,
//! with its exact derivative, for the chains that move hyperparameters by their gradient;
//! [`circulant_root`] holds the same for the circulant kernels, on one torus fixed for a chain.

mod circulant;
pub mod circulant_root;
mod covariates;
pub(crate) mod differentiable;
mod kernel;
mod kronecker;
pub(crate) mod leading_block;
pub(crate) mod root_table;
pub(crate) mod sandwich;
pub(crate) mod spectral;
mod torus;

use std::fmt::Debug;

pub use circulant::{CirculantPrior, EMBEDDING_TOLERANCE, MAX_TORUS_CELLS};
pub use covariates::WithCovariates;
pub use kernel::dense_kernel_matrix;
pub use kronecker::{BAND_ROWS, KroneckerPrior, axis_kernel_matrix};

use super::grid::Grid;
use super::spec::{KernelSpec, ModelSpec};

/// The prior could not be built.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum PriorError {
    #[error(
        "the kernel is not a number at length scale {length_scale:?} and variance {variance:?} \
         (2 l^2 or the variance is outside double precision)"
    )]
    NonFiniteKernel { length_scale: f64, variance: f64 },
    #[error(
        "the axis kernels of the {grid} grid (length scale {length_scale:?}) are not positive \
         definite even with jitter {max_jitter:e}"
    )]
    NotPositiveDefinite {
        grid: String,
        length_scale: f64,
        max_jitter: f64,
    },
    #[error(
        "an anisotropic {kernel} kernel (model.length_scale_y) is not separable on a 2-D grid: \
         only the squared exponential takes a length scale per axis"
    )]
    AnisotropicNotSeparable { kernel: &'static str },
    #[error(
        "the {kernel} kernel is not separable on the {grid} grid: it needs a circulant embedding"
    )]
    NotSeparable { kernel: &'static str, grid: String },
    #[error(
        "the {grid} grid needs a circulant embedding of at least {cells} torus cells, above the \
         limit of {max_cells}: use a smaller grid"
    )]
    TorusTooLarge {
        grid: String,
        cells: usize,
        max_cells: usize,
    },
    #[error(
        "the {kernel} kernel with length scale {length_scale:?} has no valid circulant embedding \
         on the {grid} grid: even on the largest torus tried ({torus} points; at most {max_cells} \
         cells), its eigenvalues go down to {most_negative:e}, and clipping them would change \
         covariances by up to {change:e} (allowed: {allowed:e}). The kernel must decay within the \
         padded torus: use a shorter length scale, or the squared-exponential kernel (separable, \
         any length scale)"
    )]
    NoValidEmbedding {
        kernel: &'static str,
        length_scale: f64,
        grid: String,
        torus: String,
        most_negative: f64,
        change: f64,
        allowed: f64,
        max_cells: usize,
    },
    #[error(
        "the {kernel} kernel has no length scale the joint chain's {torus} torus embeds on the \
         {grid} grid: use the squared-exponential kernel (separable, any length scale)"
    )]
    NoChainTorus {
        kernel: &'static str,
        grid: String,
        torus: String,
    },
}

/// How a circulant embedding was made valid: the padded torus and what clipping its negative
/// eigenvalues cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Embedding {
    /// Torus points along x and y (P = torus_x * torus_y whitened coordinates).
    pub torus_x: usize,
    pub torus_y: usize,
    /// The most negative eigenvalue of the embedding, clipped to zero (0 when none was
    /// negative). The eigenvalues are those of the torus covariance (the DFT of its first
    /// column), on the scale of [`Embedding::largest_eigenvalue`].
    pub most_negative_eigenvalue: f64,
    pub largest_eigenvalue: f64,
    /// The bound sum(max(-lambda, 0)) / P on how much clipping changed any covariance entry.
    pub covariance_change: f64,
}

/// The prior a job's model assumes.
pub(crate) fn build_prior(model: &ModelSpec) -> Result<Box<dyn Prior>, PriorError> {
    model_prior(model, model.kernel)
}

/// The prior of `model` with its kernel replaced by `kernel` (a hyperparameter's value): the
/// field's prior, with the coefficients' coordinates appended when the model has covariates.
pub(crate) fn model_prior(
    model: &ModelSpec,
    kernel: KernelSpec,
) -> Result<Box<dyn Prior>, PriorError> {
    let field = prior_for(model.grid, kernel)?;
    Ok(match &model.covariates {
        Some(covariates) => Box::new(WithCovariates::new(field, covariates.clone())),
        None => field,
    })
}

/// The prior of `kernel` on `grid`: Kronecker where the kernel is separable on the grid (the
/// squared exponential, or any kernel on a grid with one point along an axis), else the circulant
/// embedding.
pub fn prior_for(grid: Grid, kernel: KernelSpec) -> Result<Box<dyn Prior>, PriorError> {
    let separable = kernel.kind.is_separable_on(grid);
    if !kernel.is_isotropic() && !separable {
        return Err(PriorError::AnisotropicNotSeparable {
            kernel: kernel.kind.name(),
        });
    }
    if separable {
        Ok(Box::new(KroneckerPrior::new(grid, kernel)?))
    } else {
        Ok(Box::new(CirculantPrior::new(grid, kernel)?))
    }
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

    /// The lower triangle (diagonal included) of C restricted to `cells`, rows and columns in
    /// that order, written into `out` (its upper triangle left as it is): what the
    /// observation-space factorisation reads. Entry by entry from [`Self::covariance`] unless a
    /// prior reads it faster.
    fn covariance_lower(&self, cells: &[usize], mut out: faer::MatMut<'_, f64>) {
        for (b, &cell_b) in cells.iter().enumerate() {
            for (a, &cell_a) in cells.iter().enumerate().skip(b) {
                out[(a, b)] = self.covariance(cell_a, cell_b);
            }
        }
    }

    /// The diagonal jitter added to make the factorisation succeed (0 when none was needed).
    fn jitter(&self) -> f64;

    /// The prior's eigendecomposition as a square root, when it has a cheap one (see
    /// [`spectral`]); `None` otherwise, and callers fall back to
    /// [`spectral::WhitenedSpectral`].
    fn spectral_root(&self) -> Option<std::sync::Arc<dyn spectral::SpectralRoot>> {
        None
    }

    /// The covariates whose coefficients' whitened coordinates follow the field's (the last
    /// `count()` of [`Prior::latent_dim`]), when the model has fixed effects.
    fn covariates(&self) -> Option<&crate::model::covariates::Covariates> {
        None
    }

    /// The spatial field's own prior C_f when this one adds fixed effects to it (u = f + X beta,
    /// covariance C_f + s^2 X X^T); `None` when the prior is the spatial field's.
    fn spatial(&self) -> Option<&dyn Prior> {
        None
    }

    /// The circulant embedding behind the prior, if it is one.
    fn embedding(&self) -> Option<Embedding> {
        None
    }

    /// C x for `count` fields stored one after another (N values each, in and out).
    fn apply_covariance_batch(&self, x: &[f64], out: &mut [f64], count: usize) {
        let n = self.cells();
        for (field, target) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)).take(count) {
            self.apply_covariance(field, target);
        }
    }

    /// u = L xi for `count` fields stored one after another.
    fn apply_sqrt_batch(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64], count: usize) {
        let (k, n) = (self.latent_dim(), self.cells());
        for (field, target) in xi.chunks_exact(k).zip(out.chunks_exact_mut(n)).take(count) {
            self.apply_sqrt(field, target, scratch);
        }
    }
}

#[cfg(test)]
mod tests;
