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

/// Every Markov kind on a gaussian problem observed through 30 scattered sites on an 8 x 8 grid
/// (noise sd 0.5, intercept 0.3): the posterior mean of the field at 4 prediction sites, H_p u
/// averaged over 4 chains' draws, against the exact posterior there ([`kriging::on_grid`]:
/// kriging with the covariance the grid gives the sites, H C H^T). Each of the 9 x 4
/// differences, in Monte Carlo standard errors (from the ESS of the pooled chains), is tested
/// two-sided at 1e-4 / 36: by Bonferroni a correct kind raises a false alarm in at most 1 run in
/// 10,000. Fixed seeds; each kind's chains are long enough that every ESS is above 400, where
/// the MCSE is estimated well.
#[test]
fn every_kind_through_sites_matches_kriging_on_the_grid() {
    use crate::diagnostics::{ess_mean, mcse_mean, standard_normal_quantile};
    use crate::model::sites::kriging::{self, Problem};
    use crate::model::sites::{SiteOperator, scattered};
    use crate::sampler::driver::DrawSettings;

    let grid = Grid::new(8);
    let prior = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
    let fitted = scattered(30, &grid.window(), 0);
    let predict = scattered(4, &grid.window(), 40);
    let values: Vec<f64> = fitted
        .iter()
        .map(|&(x, y)| (4.0 * x).sin() + 0.8 * y - 0.1)
        .collect();
    let (noise_sd, mean) = (0.5, 0.3);
    let problem = Problem {
        fitted: &fitted,
        values: &values,
        noise_sd,
        mean,
        predict: &predict,
    };
    let exact = kriging::on_grid(&grid, &prior, &problem).unwrap().unwrap();
    let sites = SiteOperator::bilinear(&grid, &fitted).unwrap();
    let at = SiteOperator::bilinear(&grid, &predict).unwrap();
    let likelihood = Likelihood::new(LikelihoodKind::Gaussian, values, noise_sd, 0.0);
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Sites(&sites),
        mean,
    };
    let kinds: Vec<SamplerKind> = SamplerKind::ALL
        .iter()
        .copied()
        .filter(|k| k.is_markov_chain())
        .collect();
    let tests = kinds.len() * predict.len();
    let z_bound = -standard_normal_quantile(1e-4 / tests as f64 / 2.0);
    let chains = 4;
    for kind in kinds {
        // Kept iterations for an ESS above 400 at every site (measured: about 1 in 30, 1 in 15
        // and 1 in 8 for grw, pcn and elliptical; 1 in 6 or better for the others).
        let kept = match kind {
            SamplerKind::Grw => 32_000,
            SamplerKind::Pcn => 24_000,
            SamplerKind::Elliptical => 8_000,
            _ => 4_000,
        };
        let (iterations, burn_in) = (kept + 1_000, 1_000);
        let spec = SamplerSettings {
            iterations,
            burn_in,
            chains,
            ..SamplerSettings::new(kind)
        }
        .check()
        .unwrap();
        let request = RunRequest {
            draws: DrawSettings {
                per_chain: (iterations - burn_in) as usize,
                ..DrawSettings::default()
            },
            ..RunRequest::new(target, &spec)
        };
        let output = run_kind(&spec, &request, rngs(chains));
        // Each chain's draws of H_p u, site by site.
        let mut series = vec![vec![Vec::new(); chains]; predict.len()];
        let mut field = vec![0.0; grid.cells()];
        let mut seen = vec![0.0; predict.len()];
        for (c, chain) in output.chains.iter().enumerate() {
            for draw in chain.draws.values.chunks_exact(grid.cells()) {
                for (u, &v) in field.iter_mut().zip(draw) {
                    *u = f64::from(v);
                }
                at.gather(&field, &mut seen);
                for (q, &value) in seen.iter().enumerate() {
                    series[q][c].push(value);
                }
            }
        }
        for (q, per_chain) in series.iter().enumerate() {
            let refs: Vec<&[f64]> = per_chain.iter().map(Vec::as_slice).collect();
            let count: usize = refs.iter().map(|c| c.len()).sum();
            let estimate = refs.iter().flat_map(|c| c.iter()).sum::<f64>() / count as f64;
            let ess = ess_mean(&refs).unwrap();
            let mcse = mcse_mean(&refs).unwrap();
            let z = (estimate - exact.mean[q]) / mcse;
            eprintln!(
                "{kind} site {q}: {estimate:.4} vs {:.4} (sd {:.3}), ESS {ess:.0}, z {z:.2}",
                exact.mean[q], exact.sd[q]
            );
            assert!(ess > 400.0, "{kind} site {q}: ESS {ess:.0}");
            assert!(
                z.abs() < z_bound,
                "{kind} site {q}: z = {z:.2} (bound {z_bound:.2})"
            );
        }
    }
}

/// Every hyperparameter update runs through sites (the joint chain with and without its Laplace
/// preconditioner): poisson counts at 20 scattered sites on a 6 x 6 grid, the length scale,
/// variance and mean inferred; each update's chains finish without a failure, with finite
/// estimates, and move the hyperparameters.
#[test]
fn every_hyperparameter_update_runs_through_sites() {
    use crate::model::hyper::HyperName;
    use crate::model::hyper::fixtures::{base, base_model};
    use crate::model::sites::{SiteOperator, scattered};
    use crate::sampler::hyper::{HyperModel, HyperSettings, HyperUpdate, JointPreconditioner};

    let grid = Grid::new(6);
    let (spec, prior) = base_model(
        grid,
        &[
            (HyperName::LengthScale, "log-normal(-1.0, 0.4)"),
            (HyperName::Variance, "log-normal(0.0, 0.5)"),
            (HyperName::Mean, "normal(0.0, 1.0)"),
        ],
    );
    let start = base(None);
    let sites = SiteOperator::bilinear(&grid, &scattered(20, &grid.window(), 0)).unwrap();
    let counts: Vec<f64> = (0..sites.len()).map(|a| (a % 4) as f64).collect();
    let likelihood = Likelihood::new(LikelihoodKind::Poisson, counts, 1.0, 0.0);
    let target = Target {
        prior: &prior,
        likelihood: &likelihood,
        observed: Observed::Sites(&sites),
        mean: start.mean,
    };
    let (none, laplace) = (JointPreconditioner::None, JointPreconditioner::Laplace);
    let runs = [
        (SamplerKind::Pcn, HyperUpdate::WithinGibbs, none),
        (SamplerKind::Elliptical, HyperUpdate::SurrogateSlice, none),
        (SamplerKind::Mala, HyperUpdate::PseudoMarginal, none),
        (SamplerKind::Nuts, HyperUpdate::Joint, none),
        (SamplerKind::Nuts, HyperUpdate::Joint, laplace),
        (SamplerKind::Nuts, HyperUpdate::JointSpectral, none),
    ];
    for (kind, update, preconditioner) in runs {
        let settings = SamplerSettings {
            iterations: 400,
            burn_in: 200,
            chains: 2,
            hyper: HyperSettings {
                update,
                preconditioner,
                ..HyperSettings::default()
            },
            ..SamplerSettings::new(kind)
        }
        .check()
        .unwrap();
        let request = RunRequest {
            hyper: Some(HyperModel {
                model: &spec,
                start: spec.hyper.chain_start(start),
            }),
            ..RunRequest::new(target, &settings)
        };
        let output = run_kind(&settings, &request, rngs(2));
        let what = format!("{kind} with {update} ({preconditioner})");
        for chain in &output.chains {
            assert_eq!(chain.failure, None, "{what}");
            let hyper = &chain.trace.hyper;
            assert!(hyper.iter().all(|v| v.is_finite()), "{what}");
            assert!(hyper.iter().any(|&v| v != hyper[0]), "{what}: stuck");
        }
        assert!(output.post_mean.iter().all(|v| v.is_finite()), "{what}");
        assert!(output.post_sd.iter().all(|v| v.is_finite()), "{what}");
    }
}
