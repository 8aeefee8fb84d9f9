//! Model choice from a chain job's draws (`output.log_likelihood = true`, issue 44): PSIS-LOO
//! and WAIC of the observations in the likelihood, as ArviZ's `az.loo` and `az.waic` compute
//! them ([`crate::diagnostics::loo`]), for `jobs.parquet`, with what they came from for
//! `loo.parquet` (each observation's terms) and `log_likelihood.parquet` (the pointwise values,
//! which ArviZ's export reads).
//!
//! This module owns which values they are computed from. After the run, from the stored draws
//! of every chain ([`StoredDraws`]: `output.cell_draws` per chain, more with a larger
//! `output.field_draws`, thinned evenly from the kept iterations; no sampler change):
//! - the pointwise log-likelihood: each observation of the likelihood (a fitted cell, or a
//!   fitted site, whose u is its four cells' bilinear weights, [`Observed::one_by`]) at every
//!   stored draw, its FULL log density or mass ([`crate::model::Likelihood::pointwise`]: log y!,
//!   the binomial coefficient and the normal's constant included), rounded to single precision
//!   as the stored draws are, made one observation at a time ([`PointwiseSource`]) so a job
//!   holds O(draws) beyond its stored draws; `log_likelihood.parquet` is made again from the same
//!   source a chunk at a time, so ArviZ given the table's values gets these numbers;
//! - `reff`, ArviZ's default: the mean ESS over the posterior's scalar quantities (ArviZ's
//!   `ess(posterior, method="mean")`) over chains x draws, the quantities being every cell's u,
//!   each inferred hyperparameter (the kept state's value, on its own scale) and each covariate's
//!   coefficient (as `coefficients.parquet` holds it), all at the stored draws.
//!
//! An approximation (laplace, inla) has no draws: nothing is computed. A pointwise value that is
//! not finite, or a `reff` that is undefined, leaves the job without LOO and says why in its
//! warnings; observations whose Pareto k is above [`BAD_PARETO_K`] are warned about.

use super::hyper::Drawn;
use crate::diagnostics::loo::{
    BAD_PARETO_K, LooError, loo_and_waic_by_observation, relative_efficiency_by_quantity,
};
use crate::model::{Likelihood, Observed, Target};
use crate::sampler::RunOutput;
use crate::sampler::driver::ChainOutput;

/// A job's PSIS-LOO and WAIC, as `jobs.parquet` reports them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LooSummary {
    pub(crate) elpd_loo: f64,
    pub(crate) elpd_loo_se: f64,
    pub(crate) p_loo: f64,
    /// Infinite where a tail had too few distinct draws to fit (ArviZ's `inf`).
    pub(crate) pareto_k_max: f64,
    /// Observations with k > [`BAD_PARETO_K`].
    pub(crate) pareto_k_bad: usize,
    pub(crate) elpd_waic: f64,
    pub(crate) p_waic: f64,
}

/// One observation's share of the totals, as `loo.parquet` holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PointwiseLoo {
    /// log p(y_i | y_-i) (ArviZ's `loo_i`).
    pub(crate) elpd_loo: f64,
    /// The Pareto k of its importance ratios; infinite where the tail could not be fitted.
    pub(crate) pareto_k: f64,
    /// Its WAIC term (ArviZ's `waic_i`).
    pub(crate) elpd_waic: f64,
}

/// What the pointwise log-likelihood is made of: the likelihood, where its observations read
/// the field, and the noise sd of each pooled stored draw.
#[derive(Clone, Copy)]
pub(crate) struct PointwiseSource<'a> {
    pub(crate) likelihood: &'a Likelihood,
    pub(crate) observed: Observed<'a>,
    pub(crate) noise: Drawn<'a>,
}

impl PointwiseSource<'_> {
    /// Observation `i`'s full log density or mass at the first `per_chain` stored draws of every
    /// chain, chain by chain, into `out`: rounded to single precision, the precision of the
    /// stored draws and of `log_likelihood.parquet`, so the LOO here and ArviZ's from the table
    /// take the same numbers.
    pub(crate) fn observation(
        &self,
        chains: &[ChainOutput],
        per_chain: usize,
        i: usize,
        out: &mut [f64],
    ) {
        crate::simd_state::clear_upper_state();
        for (c, (chain, slot)) in chains
            .iter()
            .zip(out.chunks_mut(per_chain.max(1)))
            .enumerate()
        {
            let draws = &chain.draws;
            for (d, value) in slot.iter_mut().enumerate() {
                let field = &draws.values[d * draws.cells..(d + 1) * draws.cells];
                let u = self.observed.one_by(i, |cell| f64::from(field[cell]));
                let noise_sd = self.noise.at(c * per_chain + d);
                *value = f64::from(self.likelihood.pointwise(i, u, Some(noise_sd)) as f32);
            }
        }
    }
}

/// The stored draws per chain the LOO and the log-likelihood table use: the fewest any chain
/// stored.
pub(crate) fn draws_per_chain(chains: &[ChainOutput]) -> usize {
    chains.iter().map(|c| c.draws.len()).min().unwrap_or(0)
}

/// What `output.log_likelihood` keeps of a job's LOO: the totals and each observation's terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LooOutcome {
    pub(crate) summary: LooSummary,
    pub(crate) pointwise: Vec<PointwiseLoo>,
}

/// The LOO and WAIC of `run`'s stored draws under `target`'s likelihood, when `asked` and the
/// run has chains, each stored draw scored at its `noise` sd (the model's, or an inferred one's
/// draw). A reason it could not be computed, or observations with bad Pareto k, go to
/// `warnings`.
pub(crate) fn summarize(
    asked: bool,
    (target, noise): (&Target<'_>, Drawn<'_>),
    run: &RunOutput,
    warnings: &mut Vec<String>,
) -> Option<LooOutcome> {
    if !asked || run.chains.is_empty() {
        return None;
    }
    match of_chains(target, noise, &run.chains) {
        Ok(outcome) => {
            warnings.extend(bad_k_warning(&outcome.summary, target.observations()));
            Some(outcome)
        }
        Err(error) => {
            warnings.push(not_computed(&error, target.observed));
            None
        }
    }
}

/// PSIS-LOO and WAIC of the first `per_chain` stored draws of every chain, `per_chain` the
/// fewest any chain stored.
fn of_chains(
    target: &Target<'_>,
    noise: Drawn<'_>,
    chains: &[ChainOutput],
) -> Result<LooOutcome, LooError> {
    let per_chain = draws_per_chain(chains);
    let shape = (chains.len(), per_chain);
    if chains.len() * per_chain < 2 {
        return Err(LooError::TooSmall {
            samples: chains.len() * per_chain,
            observations: target.observations(),
        });
    }
    let reff = relative_efficiency_by_quantity(quantities(chains), shape, |q| {
        chains
            .iter()
            .map(|c| (0..per_chain).map(|d| quantity(c, q, d)).collect())
            .collect()
    })?;
    let source = PointwiseSource {
        likelihood: target.likelihood,
        observed: target.observed,
        noise,
    };
    let (loo, waic) = loo_and_waic_by_observation(shape, target.observations(), reff, |i, out| {
        source.observation(chains, per_chain, i, out);
    })?;
    let pointwise = (0..loo.loo_i.len())
        .map(|i| PointwiseLoo {
            elpd_loo: loo.loo_i[i],
            pareto_k: loo.pareto_k[i],
            elpd_waic: waic.waic_i[i],
        })
        .collect();
    Ok(LooOutcome {
        summary: LooSummary {
            elpd_loo: loo.elpd_loo,
            elpd_loo_se: loo.elpd_loo_se,
            p_loo: loo.p_loo,
            pareto_k_max: loo.pareto_k_max,
            pareto_k_bad: loo.pareto_k_bad,
            elpd_waic: waic.elpd_waic,
            p_waic: waic.p_waic,
        },
        pointwise,
    })
}

/// The posterior's scalar quantities: every cell, then each inferred hyperparameter, then each
/// coefficient.
fn quantities(chains: &[ChainOutput]) -> usize {
    let first = &chains[0];
    first.draws.cells + hyper_count(first) + coefficient_count(first)
}

fn hyper_count(chain: &ChainOutput) -> usize {
    chain.kept.hyper_count()
}

fn coefficient_count(chain: &ChainOutput) -> usize {
    chain.coefficients.values.len() / chain.coefficients.iteration.len().max(1)
}

/// Quantity `q` ([`quantities`]' order) at stored draw `d` of `chain`.
fn quantity(chain: &ChainOutput, q: usize, d: usize) -> f64 {
    let draws = &chain.draws;
    let hypers = hyper_count(chain);
    if q < draws.cells {
        return f64::from(draws.values[d * draws.cells + q]);
    }
    let q = q - draws.cells;
    if q < hypers {
        return chain.hyper_at_stored_draw(d, q);
    }
    let q = q - hypers;
    chain.coefficients.values[d * coefficient_count(chain) + q]
}

/// The warning for observations whose Pareto k is above [`BAD_PARETO_K`], if any.
fn bad_k_warning(summary: &LooSummary, observations: usize) -> Option<String> {
    let bad = summary.pareto_k_bad;
    (bad > 0).then(|| {
        format!(
            "Pareto k > {BAD_PARETO_K} for {bad} of {observations} observations ({:.1} %): \
             elpd_loo is unreliable for them (leaving one out moves the posterior too far for \
             importance sampling); score held-out cells instead (K-fold: data.folds = K, sweeping data.fold), or look \
             at the model where they lie",
            100.0 * bad as f64 / observations.max(1) as f64
        )
    })
}

/// Why LOO and WAIC were not computed, naming the observation where a value was not finite.
fn not_computed(error: &LooError, observed: Observed<'_>) -> String {
    let reason = match error {
        LooError::NonFinite {
            chain,
            draw,
            observation,
            value,
        } => {
            let place = match observed {
                Observed::Cells(cells) => format!("cell {}", cells[*observation]),
                Observed::Sites(_) => format!("fitted site {observation}"),
            };
            format!(
                "the log-likelihood of observation {observation} ({place}) is {value} at chain \
                 {chain}, stored draw {draw} (the field there gives the datum no density)"
            )
        }
        other => other.to_string(),
    };
    format!("LOO and WAIC not computed (elpd_loo, elpd_waic null): {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::loo::{PointwiseLogLik, psis_loo, relative_efficiency, waic};
    use crate::model::grid::Grid;
    use crate::model::prior::KroneckerPrior;
    use crate::model::sites::{SiteOperator, scattered};
    use crate::model::spec::KernelSpec;
    use crate::model::{Likelihood, LikelihoodKind};
    use crate::sampler::driver::{KeptSeries, StoredDraws};

    /// A chain of `draws` stored draws of `cells` cells (values a smooth function of draw, cell
    /// and chain), every kept iteration stored.
    fn chain(index: usize, cells: usize, draws: usize) -> ChainOutput {
        let values = (0..draws * cells)
            .map(|k| {
                let (d, c) = (k / cells, k % cells);
                (0.3 * c as f64 - 0.5 + (1.7 * d as f64 + 0.9 * index as f64).sin() * 0.6) as f32
            })
            .collect();
        ChainOutput {
            draws: StoredDraws {
                thin: 1,
                cells,
                values,
                loglik: vec![0.0; draws],
            },
            kept: KeptSeries {
                loglik: vec![0.0; draws],
                ..KeptSeries::default()
            },
            ..ChainOutput::default()
        }
    }

    /// The LOO of sites data is that of the matrix of every fitted site's full log density at
    /// H u of every stored draw, with reff from every cell: built here by hand and given to the
    /// whole-matrix functions.
    #[test]
    fn sites_loo_is_the_whole_matrix_of_their_interpolated_densities() {
        let grid = Grid::new(4);
        let prior = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        let sites = scattered(3, &grid.window(), 0);
        let operator = SiteOperator::bilinear(&grid, &sites).unwrap();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![0.2, -0.4, 1.1], 0.5, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Sites(&operator),
            mean: 0.0,
        };
        let (cells, draws) = (grid.cells(), 40);
        let chains: Vec<ChainOutput> = (0..3).map(|c| chain(c, cells, draws)).collect();
        let outcome = of_chains(&target, Drawn::Fixed(0.5), &chains).unwrap();
        let summary = &outcome.summary;

        let mut values = Vec::new();
        for c in &chains {
            for d in 0..draws {
                let field: Vec<f64> = c.draws.values[d * cells..(d + 1) * cells]
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect();
                let mut at_sites = vec![0.0; sites.len()];
                operator.gather(&field, &mut at_sites);
                values.extend(at_sites.iter().enumerate().map(|(i, &u)| {
                    let y = [0.2, -0.4, 1.1][i];
                    let z: f64 = (y - u) / 0.5;
                    let density =
                        -0.5 * z * z - 0.5f64.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
                    // Kept in single precision, as the stored field draws are.
                    f64::from(density as f32)
                }));
            }
        }
        let matrix = PointwiseLogLik::new(3, draws, sites.len(), values.clone()).unwrap();
        let series: Vec<Vec<Vec<f64>>> = (0..cells)
            .map(|cell| chains.iter().map(|c| c.draws.cell(cell)).collect())
            .collect();
        let views: Vec<Vec<&[f64]>> = series
            .iter()
            .map(|q| q.iter().map(Vec::as_slice).collect())
            .collect();
        let quantities: Vec<&[&[f64]]> = views.iter().map(Vec::as_slice).collect();
        let reff = relative_efficiency(&quantities).unwrap();
        let loo = psis_loo(&matrix, reff).unwrap();
        let waic = waic(&matrix);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        assert!(close(summary.elpd_loo, loo.elpd_loo), "{summary:?} {loo:?}");
        assert!(close(summary.elpd_loo_se, loo.elpd_loo_se));
        assert!(close(summary.p_loo, loo.p_loo));
        assert_eq!(summary.pareto_k_max, loo.pareto_k_max);
        assert_eq!(summary.pareto_k_bad, loo.pareto_k_bad);
        assert!(close(summary.elpd_waic, waic.elpd_waic));
        assert!(close(summary.p_waic, waic.p_waic));
        // Each observation's terms, and the kept values are the matrix (observation-major).
        for (i, term) in outcome.pointwise.iter().enumerate() {
            assert!(close(term.elpd_loo, loo.loo_i[i]));
            assert_eq!(term.pareto_k, loo.pareto_k[i]);
            assert!(close(term.elpd_waic, waic.waic_i[i]));
        }
        // The source gives each observation's values over the draws: the matrix's column.
        let source = PointwiseSource {
            likelihood: &likelihood,
            observed: target.observed,
            noise: Drawn::Fixed(0.5),
        };
        let mut column = vec![0.0; 3 * draws];
        for i in 0..sites.len() {
            source.observation(&chains, draws, i, &mut column);
            let expected: Vec<f64> = matrix_rows(&values, sites.len()).map(|r| r[i]).collect();
            assert_eq!(column, expected, "observation {i}");
        }
    }

    /// The rows of a draw-major matrix, one per draw.
    fn matrix_rows(values: &[f64], observations: usize) -> impl Iterator<Item = &[f64]> {
        values.chunks(observations)
    }

    /// reff reads the inferred hyperparameters at the stored draws (kept iteration d x thin) and
    /// the coefficients after the cells.
    #[test]
    fn reff_quantities_are_cells_then_hyperparameters_then_coefficients() {
        let mut c = chain(0, 2, 3);
        c.draws.thin = 2;
        c.kept.loglik = vec![0.0; 6];
        // Two hyperparameters at 6 kept iterations: (10 k, 100 k).
        c.kept.hyper = (0..6)
            .flat_map(|k| [10.0 * k as f64, 100.0 * k as f64])
            .collect();
        c.coefficients.iteration = vec![1, 3, 5];
        c.coefficients.values = vec![1.0, -1.0, 2.0, -2.0, 3.0, -3.0];
        assert_eq!(quantities(std::slice::from_ref(&c)), 2 + 2 + 2);
        let at = |q: usize| (0..3).map(|d| quantity(&c, q, d)).collect::<Vec<f64>>();
        assert_eq!(at(1), c.draws.cell(1));
        assert_eq!(at(2), vec![0.0, 20.0, 40.0]);
        assert_eq!(at(3), vec![0.0, 200.0, 400.0]);
        assert_eq!(at(4), vec![1.0, 2.0, 3.0]);
        assert_eq!(at(5), vec![-1.0, -2.0, -3.0]);
    }

    /// A pointwise value that is not finite leaves the job without LOO, naming the cell; bad
    /// Pareto k are counted in the warning with their share.
    #[test]
    fn warnings_name_the_cause() {
        let grid = Grid::new(2);
        let prior = KroneckerPrior::new(grid, KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        // A count of 3 at a rate exp(u + offset) of 0: log-likelihood -inf.
        let likelihood = Likelihood::with_offsets(
            LikelihoodKind::Poisson,
            vec![1.0, 3.0],
            1.0,
            vec![0.0, f64::NEG_INFINITY],
        );
        let cells = [0, 3];
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.0,
        };
        let chains: Vec<ChainOutput> = (0..2).map(|c| chain(c, 4, 10)).collect();
        let error = of_chains(&target, Drawn::Fixed(1.0), &chains).unwrap_err();
        let text = not_computed(&error, target.observed);
        assert!(
            text.contains("observation 1 (cell 3) is -inf at chain 0, stored draw 0"),
            "{text}"
        );
        let summary = LooSummary {
            elpd_loo: -10.0,
            elpd_loo_se: 1.0,
            p_loo: 2.0,
            pareto_k_max: 0.9,
            pareto_k_bad: 3,
            elpd_waic: -10.0,
            p_waic: 2.0,
        };
        let warning = bad_k_warning(&summary, 40).unwrap();
        assert!(warning.starts_with("Pareto k > 0.7 for 3 of 40 observations (7.5 %)"));
        assert!(warning.contains("data.folds"));
        let fine = LooSummary {
            pareto_k_bad: 0,
            ..summary
        };
        assert_eq!(bad_k_warning(&fine, 40), None);
    }
}
