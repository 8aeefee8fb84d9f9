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
            observed: crate::model::target::Observed::Cells(&self.cells),
            mean: 0.3,
        }
    }
}

/// Runs `iterations` steps of `sampler` on the [`SmallGaussianProblem`] from a start drawn from
/// the streams named `name`, asserting that every move is accepted with probability 1 (to 1e-9):
/// what a kind whose moves are exact on gaussian posteriors must do. `inspect` sees the state
/// before the first step.
pub(crate) fn assert_every_move_accepted<S: super::protocol::Sampler>(
    sampler: &S,
    name: &str,
    iterations: usize,
    inspect: impl FnOnce(&S::State<'_>),
) {
    let problem = SmallGaussianProblem::new();
    let target = problem.target();
    let mut rng = super::protocol::ChainRng::keyed(1, name);
    let mut xi = vec![0.0; 25];
    rng.normals(&mut xi);
    let mut state = sampler.init(xi, &target);
    inspect(&state);
    for i in 0..iterations {
        let info = sampler.step(&mut state, &target, &mut rng);
        let probability = info.acceptance_probability.unwrap();
        assert!(
            probability > 1.0 - 1e-9,
            "{name}: step {i} accepted with {probability}"
        );
    }
}
