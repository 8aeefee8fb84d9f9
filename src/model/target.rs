//! The posterior a sampler targets, in whitened coordinates.
//!
//! The field is u = mean + L xi with xi ~ N(0, I) a priori (L the prior's square root, `mean`
//! the constant intercept), and the data enter through the field at the observed cells only
//! (G u, never G itself). The log posterior density of xi is, up to a constant,
//! `log_likelihood(G u) - |xi|^2 / 2`. [`Target`] hides the prior's structure behind
//! [`Prior`]: a sampler asks for the field of a position, the log-likelihood of a field, or the
//! gradient of the log-likelihood with respect to xi (L^T G^T d loglik / d(G u)).

use super::likelihood::Likelihood;
use super::prior::Prior;

/// What a sampler needs of the model: the prior's structured square root, the likelihood bound
/// to its data, the observed cells and the intercept.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub prior: &'a dyn Prior,
    pub likelihood: &'a Likelihood,
    /// The observed cells, in the likelihood's order.
    pub observed_cells: &'a [usize],
    /// The constant mean of the field: u = mean + L xi.
    pub mean: f64,
}

/// Buffers a target's computations reuse: one set per chain.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The prior products' scratch.
    pub(crate) scratch: Vec<f64>,
    /// The field at the observed cells.
    pub(crate) observed: Vec<f64>,
    /// d loglik / d(G u).
    pub(crate) observed_gradient: Vec<f64>,
    /// G^T d loglik / d(G u): the same, scattered onto every cell.
    pub(crate) field_gradient: Vec<f64>,
}

impl<'a> Target<'a> {
    /// N: cells of the field.
    pub(crate) fn cells(&self) -> usize {
        self.prior.cells()
    }

    /// The dimension of the whitened coordinates xi.
    pub(crate) fn dim(&self) -> usize {
        self.prior.latent_dim()
    }

    /// M: observed cells.
    pub fn observations(&self) -> usize {
        self.observed_cells.len()
    }

    /// Buffers for this target's computations.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            scratch: vec![0.0; self.prior.scratch_len()],
            observed: vec![0.0; self.observations()],
            observed_gradient: vec![0.0; self.observations()],
            field_gradient: vec![0.0; self.cells()],
        }
    }

    /// u = mean + L xi into `field`.
    pub(crate) fn field(&self, xi: &[f64], field: &mut [f64], work: &mut Workspace) {
        self.prior.apply_sqrt(xi, field, &mut work.scratch);
        if self.mean != 0.0 {
            for u in field.iter_mut() {
                *u += self.mean;
            }
        }
    }

    /// G u: the field at the observed cells, into `out`.
    pub(crate) fn gather(&self, field: &[f64], out: &mut [f64]) {
        for (o, &c) in out.iter_mut().zip(self.observed_cells) {
            *o = field[c];
        }
    }

    /// The log-likelihood of a field (all N cells given).
    pub fn log_likelihood(&self, field: &[f64], work: &mut Workspace) -> f64 {
        self.gather(field, &mut work.observed);
        self.likelihood.log_likelihood(&work.observed)
    }

    /// The log-likelihood of a field and its gradient with respect to xi, written into
    /// `gradient` (dimension [`Target::dim`]): L^T G^T d loglik / d(G u).
    pub(crate) fn log_likelihood_and_gradient(
        &self,
        field: &[f64],
        gradient: &mut [f64],
        work: &mut Workspace,
    ) -> f64 {
        self.gather(field, &mut work.observed);
        let value = self
            .likelihood
            .log_likelihood_and_gradient(&work.observed, &mut work.observed_gradient);
        work.field_gradient.fill(0.0);
        for (&g, &c) in work.observed_gradient.iter().zip(self.observed_cells) {
            work.field_gradient[c] = g;
        }
        self.prior
            .apply_sqrt_transpose(&work.field_gradient, gradient, &mut work.scratch);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::prior::KroneckerPrior;
    use crate::model::spec::KernelSpec;

    /// The whitened gradient against central differences of the log-likelihood along each
    /// coordinate, for every likelihood, with an intercept.
    #[test]
    fn whitened_gradient_matches_finite_differences() {
        let grid = Grid::new(4);
        let kernel = KernelSpec::squared_exponential(0.4, 1.5);
        let prior = KroneckerPrior::new(grid, kernel).unwrap();
        let cells = [1, 4, 6, 11, 15];
        let likelihoods = crate::model::likelihood::one_of_each(cells.len());
        for likelihood in &likelihoods {
            let target = Target {
                prior: &prior,
                likelihood,
                observed_cells: &cells,
                mean: 0.4,
            };
            let mut work = target.workspace();
            let xi: Vec<f64> = (0..16).map(|k| ((k * 7 % 5) as f64 - 2.0) / 3.0).collect();
            let mut field = vec![0.0; 16];
            target.field(&xi, &mut field, &mut work);
            let mut gradient = vec![0.0; 16];
            let value = target.log_likelihood_and_gradient(&field, &mut gradient, &mut work);
            assert_eq!(value, target.log_likelihood(&field, &mut work));
            let mut at = |k: usize, delta: f64| {
                let mut moved = xi.clone();
                moved[k] += delta;
                let mut f = vec![0.0; 16];
                target.field(&moved, &mut f, &mut work);
                target.log_likelihood(&f, &mut work)
            };
            let h = 1e-6;
            for (k, g) in gradient.iter().enumerate() {
                let numeric = (at(k, h) - at(k, -h)) / (2.0 * h);
                assert!(
                    (numeric - g).abs() < 1e-6 * g.abs().max(1.0),
                    "{:?} coordinate {k}: {g} vs {numeric}",
                    likelihood.kind()
                );
            }
        }
    }
}
