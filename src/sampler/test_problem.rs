//! A small gaussian problem the unit tests of kinds whose moves are exact on gaussian posteriors
//! share.

/// A 5 x 5 gaussian problem with every other cell observed and mean 0.3, for the unit tests of
/// kinds whose moves are exact on gaussian posteriors (gpcn, laplace_hmc).
pub(crate) struct SmallGaussianProblem {
    prior: crate::model::KroneckerPrior,
    likelihood: crate::model::Likelihood,
    cells: Vec<usize>,
}

impl SmallGaussianProblem {
    pub(crate) fn new() -> Self {
        use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
        let prior =
            KroneckerPrior::new(Grid::new(5), KernelSpec::squared_exponential(0.3, 1.2)).unwrap();
        let cells: Vec<usize> = (0..25).step_by(2).collect();
        let values: Vec<f64> = cells
            .iter()
            .map(|&c| (c as f64 * 0.7).sin() + 0.5)
            .collect();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values, 0.5, 0.0);
        Self {
            prior,
            likelihood,
            cells,
        }
    }

    pub(crate) fn target(&self) -> crate::model::target::Target<'_> {
        crate::model::target::Target {
            prior: &self.prior,
            likelihood: &self.likelihood,
            observed_cells: &self.cells,
            mean: 0.3,
        }
    }
}
