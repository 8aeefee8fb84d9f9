//! Tests across kinds: a chain's numbers do not depend on the chains beside it, for every kind.

use super::driver::RunRequest;
use super::kinds::SamplerKind;
use super::protocol::ChainRng;
use super::run_kind;
use super::spec::SamplerSettings;
use crate::model::target::{Observed, Target};
use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};

fn rngs(chains: usize) -> Vec<ChainRng> {
    (0..chains)
        .map(|c| ChainRng::keyed(3, &format!("c={c}")))
        .collect()
}

/// Chain 0's numbers alone and beside others: bit for bit, for every kind.
#[test]
fn a_chain_does_not_depend_on_its_neighbours() {
    let prior =
        KroneckerPrior::new(Grid::new(9), KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
    let observed_cells: Vec<usize> = (0..81).step_by(3).collect();
    let values: Vec<f64> = observed_cells
        .iter()
        .map(|&c| (c as f64 * 0.1).sin())
        .collect();
    let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values, 0.5, 0.0);
    let chains = SamplerKind::ALL.iter().filter(|k| k.is_markov_chain());
    for &kind in chains {
        let spec = SamplerSettings {
            beta: 0.3,
            iterations: 500,
            burn_in: 50,
            thin: 3,
            chains: 1,
            ..SamplerSettings::new(kind)
        }
        .check()
        .unwrap();
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&observed_cells),
            mean: 0.3,
        };
        let request = RunRequest::new(target, &spec);
        let alone = run_kind(&spec, &request, rngs(1));
        assert!(alone.chains[0].acceptance_rate > 0.05, "{kind}");
        for chains in [2, 3] {
            let other = run_kind(&spec, &request, rngs(chains));
            assert_eq!(other.chains[0], alone.chains[0], "{kind}: {chains} chains");
        }
    }
}
