//! The Hessian of the negative log posterior in whitened coordinates, as a product:
//! H x = x + L^T G^T W G L x, with W the likelihood's curvature at the observations
//! ([`Likelihood::curvature`](crate::model::Likelihood::curvature)) and G where they see the
//! field ([`crate::model::target::Observed`]). A product costs two prior products (L and L^T)
//! and O(M); the N x N matrix is never formed.

use crate::model::target::Target;

/// The data-misfit Hessian L^T G^T W G L at one point, applied by products.
pub(crate) struct MisfitHessian<'t, 'a> {
    target: &'t Target<'a>,
    /// W at the observations.
    weights: Vec<f64>,
    field: Vec<f64>,
    /// W G L x, one value per observation.
    observed: Vec<f64>,
    scattered: Vec<f64>,
    scratch: Vec<f64>,
}

impl<'t, 'a> MisfitHessian<'t, 'a> {
    /// The misfit Hessian with curvature `weights` (one per observation, >= 0).
    pub(crate) fn new(target: &'t Target<'a>, weights: Vec<f64>) -> Self {
        debug_assert_eq!(weights.len(), target.observations());
        Self {
            target,
            weights,
            field: vec![0.0; target.cells()],
            observed: vec![0.0; target.observations()],
            scattered: vec![0.0; target.cells()],
            scratch: vec![0.0; target.prior.scratch_len()],
        }
    }

    /// The curvature of the likelihood at the field `field` (N values, intercept included).
    pub(crate) fn at_field(target: &'t Target<'a>, field: &[f64]) -> Self {
        let mut observed = vec![0.0; target.observations()];
        target.gather(field, &mut observed);
        let mut weights = vec![0.0; target.observations()];
        target.likelihood.curvature(&observed, &mut weights);
        Self::new(target, weights)
    }

    pub(crate) fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// out = L^T G^T W G L x.
    pub(crate) fn apply_misfit(&mut self, x: &[f64], out: &mut [f64]) {
        let prior = self.target.prior;
        prior.apply_sqrt(x, &mut self.field, &mut self.scratch);
        self.target.gather(&self.field, &mut self.observed);
        for (o, &w) in self.observed.iter_mut().zip(&self.weights) {
            *o *= w;
        }
        self.target
            .observed
            .scatter(&self.observed, &mut self.scattered);
        prior.apply_sqrt_transpose(&self.scattered, out, &mut self.scratch);
    }

    /// out = (I + L^T G^T W G L) x.
    pub(crate) fn apply(&mut self, x: &[f64], out: &mut [f64]) {
        self.apply_misfit(x, out);
        for (o, &v) in out.iter_mut().zip(x) {
            *o += v;
        }
    }

    /// tr(L^T G^T W G L) = sum over observations of W_a (G C G^T)_aa: the sum of all the misfit
    /// Hessian's eigenvalues.
    pub(crate) fn trace(&self) -> f64 {
        let (prior, observed) = (self.target.prior, self.target.observed);
        self.weights
            .iter()
            .enumerate()
            .map(|(a, &w)| w * observed.covariance(prior, a, a))
            .sum()
    }
}
