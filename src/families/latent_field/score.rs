//! Scores of a run against what it should have found: the truth (simulated data), the exact
//! posterior (gaussian) or the held-out cells (real data).

use crate::model::data::Dataset;
use crate::model::likelihood::{Datum, observation_log_density};
use crate::model::spec::LikelihoodKind;
use crate::model::special::logistic;
use crate::sampler::driver::{StoredDraws, rms_difference};

/// Likelihood-specific scores of one job; None where a score does not apply.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Scores {
    /// Mean |posterior mean - truth| over cells (simulated data).
    pub(crate) mae: Option<f64>,
    /// RMS over cells of (posterior mean - exact posterior mean) (gaussian).
    pub(crate) exact_rmse: Option<f64>,
    /// Share of cells whose 0.5-thresholded predictive probability disagrees with the sign of the
    /// truth (simulated) or with the held-out label (real data) (probit).
    pub(crate) prediction_error: Option<f64>,
    /// Mean |expected count - target| where the target is the truth's intensity over all cells
    /// (simulated) or the held-out counts (real data) (poisson).
    pub(crate) count_mae: Option<f64>,
    /// The same for a constant rate per unit exposure equal to the observed one (the mean
    /// observed count, where the data give no exposure).
    pub(crate) baseline_count_mae: Option<f64>,
    /// Mean |posterior mean success probability - target| where the target is logistic(truth +
    /// offset) over all cells (simulated) or the share k / n of the held-out cells with a trial
    /// (real data) (binomial).
    pub(crate) share_mae: Option<f64>,
    /// The same for a constant probability equal to the pooled observed share sum k / sum n.
    pub(crate) baseline_share_mae: Option<f64>,
    /// Mean over held-out cells of the log posterior predictive density log p(y_i | data) (real
    /// data, probit, poisson and binomial).
    pub(crate) heldout_lpd: Option<f64>,
}

/// What a run produced that scoring needs.
pub(crate) struct Estimates<'a> {
    pub(crate) post_mean: &'a [f64],
    pub(crate) exact_mean: Option<&'a [f64]>,
    pub(crate) functional_mean: Option<&'a [f64]>,
}

pub(crate) fn score(kind: LikelihoodKind, data: &Dataset, estimates: &Estimates) -> Scores {
    let mut scores = Scores {
        mae: data
            .truth
            .as_deref()
            .map(|truth| mean_abs_difference(estimates.post_mean, truth)),
        exact_rmse: estimates
            .exact_mean
            .map(|exact| rms_difference(estimates.post_mean, exact)),
        ..Scores::default()
    };
    match (kind, estimates.functional_mean) {
        (LikelihoodKind::Probit, Some(p)) => {
            scores.prediction_error = prediction_error(p, data);
        }
        (LikelihoodKind::Poisson, Some(expected)) => {
            let (model, baseline) = count_errors(expected, data);
            scores.count_mae = model;
            scores.baseline_count_mae = baseline;
        }
        (LikelihoodKind::Binomial, Some(success)) => {
            let (model, baseline) = share_errors(success, data);
            scores.share_mae = model;
            scores.baseline_share_mae = baseline;
        }
        _ => {}
    }
    scores
}

/// (model MAE, pooled-share baseline MAE) of the success probabilities `success` (per cell).
fn share_errors(success: &[f64], data: &Dataset) -> (Option<f64>, Option<f64>) {
    let observed = &data.observed;
    let trials = observed.trials.iter().sum::<f64>();
    let pooled = observed.values.iter().sum::<f64>() / trials;
    let (cells, targets): (Vec<usize>, Vec<f64>) = match &data.truth {
        Some(truth) => truth
            .iter()
            .enumerate()
            .map(|(c, u)| (c, logistic(u + data.offsets.at(c))))
            .unzip(),
        None => {
            let held = &data.held_out;
            held.cells
                .iter()
                .zip(&held.values)
                .zip(&held.trials)
                .filter(|(_, n)| **n > 0.0)
                .map(|((&c, k), n)| (c, k / n))
                .unzip()
        }
    };
    if cells.is_empty() {
        return (None, None);
    }
    let predictions: Vec<f64> = cells.iter().map(|&c| success[c]).collect();
    let baseline =
        (trials > 0.0).then(|| mean_abs_difference(&vec![pooled; cells.len()], &targets));
    (Some(mean_abs_difference(&predictions, &targets)), baseline)
}

fn prediction_error(p_positive: &[f64], data: &Dataset) -> Option<f64> {
    let predicted = |c: usize| p_positive[c] > 0.5;
    let disagreements: Vec<bool> = match &data.truth {
        Some(truth) => (0..truth.len())
            .map(|c| predicted(c) != (truth[c] > 0.0))
            .collect(),
        None => data
            .held_out
            .cells
            .iter()
            .zip(&data.held_out.values)
            .map(|(&c, &label)| predicted(c) != (label > 0.0))
            .collect(),
    };
    share_true(&disagreements)
}

/// (model MAE, constant-rate baseline MAE). The baseline predicts a cell's count as its exposure
/// times the observed counts' total over their cells' total exposure (the mean observed count
/// where the data give no exposure).
fn count_errors(expected: &[f64], data: &Dataset) -> (Option<f64>, Option<f64>) {
    let observed = &data.observed;
    let offsets = &data.offsets;
    let exposure = offsets.total_exposure(&observed.cells);
    let base_rate = observed.values.iter().sum::<f64>() / exposure.max(1.0);
    let (cells, targets): (Vec<usize>, Vec<f64>) = match &data.truth {
        Some(truth) => truth
            .iter()
            .enumerate()
            .map(|(c, u)| (c, (u + offsets.at(c)).exp()))
            .unzip(),
        None => (data.held_out.cells.clone(), data.held_out.values.clone()),
    };
    if cells.is_empty() {
        return (None, None);
    }
    let predictions: Vec<f64> = cells.iter().map(|&c| expected[c]).collect();
    let baseline: Vec<f64> = match &offsets.log_exposure {
        Some(log_exposure) => cells
            .iter()
            .map(|&c| log_exposure[c].exp() * base_rate)
            .collect(),
        None => vec![base_rate; cells.len()],
    };
    (
        Some(mean_abs_difference(&predictions, &targets)),
        Some(mean_abs_difference(&baseline, &targets)),
    )
}

pub(crate) fn mean_abs_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() / a.len() as f64
}

fn share_true(flags: &[bool]) -> Option<f64> {
    (!flags.is_empty()).then(|| flags.iter().filter(|&&f| f).count() as f64 / flags.len() as f64)
}

/// What the predictive density of a held-out cell is averaged over.
pub(crate) enum Predictive<'a> {
    /// The stored posterior draws of every chain (Markov chains).
    Draws(&'a [&'a StoredDraws]),
    /// Each cell's gaussian marginal N(mean, sd^2) (approximations), integrated by
    /// Gauss-Hermite quadrature with [`HERMITE_NODES`] nodes.
    Gaussian { mean: &'a [f64], sd: &'a [f64] },
}

/// Gauss-Hermite nodes for the approximations' predictive densities: exact for polynomials of
/// degree 2 x 40 - 1 in the field, far below the other errors for these smooth likelihoods.
pub(crate) const HERMITE_NODES: usize = 40;

/// The mean over held-out cells of log p(y_i | data), p(y_i | data) = E[p(y_i | u_i)] under the
/// posterior: probit p(t | u) = Phi(t u / s), poisson Poisson(y; exp(u + offset_i)) with the
/// cell's log offset, binomial Binomial(k; n, logistic(u + offset_i)) with its binomial
/// coefficient. `None` for gaussian data, simulated data (no held-out cells) or no draws.
pub(crate) fn heldout_log_predictive(
    kind: LikelihoodKind,
    data: &Dataset,
    predictive: &Predictive,
    noise_sd: f64,
) -> Option<f64> {
    let held = &data.held_out;
    if held.is_empty() || kind == LikelihoodKind::Gaussian {
        return None;
    }
    // Each held-out cell's trials (binomial; 0, unused, for the other likelihoods).
    let trials = |k: usize| held.trials.get(k).copied().unwrap_or(0.0);
    let log_density = |c: usize, (y, n): (f64, f64), u: f64| {
        let datum = Datum {
            value: y,
            trials: n,
            offset: data.offsets.at(c),
        };
        observation_log_density(kind, datum, u, noise_sd)
    };
    let total: f64 = match predictive {
        Predictive::Draws(chains) => {
            let count: usize = chains.iter().map(|d| d.len()).sum();
            if count == 0 {
                return None;
            }
            held.cells
                .iter()
                .zip(&held.values)
                .enumerate()
                .map(|(k, (&c, &y))| {
                    let logs = chains
                        .iter()
                        .flat_map(|d| {
                            (0..d.len()).map(move |k| f64::from(d.values[k * d.cells + c]))
                        })
                        .map(|u| log_density(c, (y, trials(k)), u));
                    log_mean_exp(logs, count as f64)
                })
                .sum()
        }
        Predictive::Gaussian { mean, sd } => {
            let (nodes, weights) = hermite_rule(HERMITE_NODES);
            held.cells
                .iter()
                .zip(&held.values)
                .enumerate()
                .map(|(k, (&c, &y))| {
                    let terms = nodes
                        .iter()
                        .zip(&weights)
                        .map(|(x, w)| w.ln() + log_density(c, (y, trials(k)), mean[c] + sd[c] * x));
                    log_mean_exp(terms, 1.0)
                })
                .sum()
        }
    };
    Some(total / held.len() as f64)
}

/// log(sum exp(terms) / count), stably.
fn log_mean_exp(terms: impl Iterator<Item = f64> + Clone, count: f64) -> f64 {
    let top = terms.clone().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + (terms.map(|t| (t - top).exp()).sum::<f64>() / count).ln()
}

/// Nodes and weights of the `n`-point Gauss-Hermite rule for the standard normal (weights sum to
/// 1), by Golub & Welsch: the eigenvalues of the Jacobi matrix of the probabilists' Hermite
/// polynomials (off-diagonal sqrt(k)), the weights the squared first components of the
/// eigenvectors.
pub(crate) fn hermite_rule(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut jacobi = faer::Mat::<f64>::zeros(n, n);
    for k in 1..n {
        let off = (k as f64).sqrt();
        jacobi[(k, k - 1)] = off;
        jacobi[(k - 1, k)] = off;
    }
    let eigen = jacobi
        .self_adjoint_eigen(faer::Side::Lower)
        .expect("the eigendecomposition of a small tridiagonal matrix converges");
    let nodes = (0..n).map(|k| eigen.S()[k]).collect();
    let weights = (0..n).map(|k| eigen.U()[(0, k)].powi(2)).collect();
    (nodes, weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule integrates the standard normal's moments exactly: E x^2 = 1, E x^4 = 3,
    /// E x^6 = 15, and E exp(x) = exp(1/2) to 1e-12.
    #[test]
    fn the_hermite_rule_integrates_normal_moments() {
        let (nodes, weights) = hermite_rule(HERMITE_NODES);
        let moment = |f: &dyn Fn(f64) -> f64| -> f64 {
            nodes.iter().zip(&weights).map(|(x, w)| w * f(*x)).sum()
        };
        assert!((moment(&|_| 1.0) - 1.0).abs() < 1e-12);
        assert!((moment(&|x| x * x) - 1.0).abs() < 1e-12);
        assert!((moment(&|x| x.powi(4)) - 3.0).abs() < 1e-10);
        assert!((moment(&|x| x.powi(6)) - 15.0).abs() < 1e-9);
        assert!((moment(&|x: f64| x.exp()) - 0.5f64.exp()).abs() < 1e-12);
    }
}
