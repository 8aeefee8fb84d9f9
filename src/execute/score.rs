//! Scores of a run against what it should have found: the truth (simulated data), the exact
//! posterior (gaussian) or the held-out cells (real data).

use crate::model::data::Dataset;
use crate::model::spec::LikelihoodKind;
use crate::sampler::driver::rms_difference;

/// Likelihood-specific scores of one job; None where a score does not apply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scores {
    /// Mean |posterior mean - truth| over cells (simulated data).
    pub mae: Option<f64>,
    /// RMS over cells of (posterior mean - exact posterior mean) (gaussian).
    pub exact_rmse: Option<f64>,
    /// Share of cells whose 0.5-thresholded predictive probability disagrees with the sign of the
    /// truth (simulated) or with the held-out label (real data) (probit).
    pub prediction_error: Option<f64>,
    /// Mean |expected count - target| where the target is the truth's intensity over all cells
    /// (simulated) or the held-out counts (real data) (poisson).
    pub count_mae: Option<f64>,
    /// The same for a constant rate equal to the mean observed count.
    pub baseline_count_mae: Option<f64>,
}

/// What a run produced that scoring needs.
pub struct Estimates<'a> {
    pub post_mean: &'a [f64],
    pub exact_mean: Option<&'a [f64]>,
    pub functional_mean: Option<&'a [f64]>,
    pub offset: f64,
}

pub fn score(kind: LikelihoodKind, data: &Dataset, estimates: &Estimates) -> Scores {
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
            let (model, baseline) = count_errors(expected, data, estimates.offset);
            scores.count_mae = model;
            scores.baseline_count_mae = baseline;
        }
        _ => {}
    }
    scores
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

/// (model MAE, constant-rate baseline MAE).
fn count_errors(expected: &[f64], data: &Dataset, offset: f64) -> (Option<f64>, Option<f64>) {
    let observed = &data.observed.values;
    let base_rate = observed.iter().sum::<f64>() / observed.len().max(1) as f64;
    let (cells, targets): (Vec<usize>, Vec<f64>) = match &data.truth {
        Some(truth) => truth
            .iter()
            .enumerate()
            .map(|(c, u)| (c, (u + offset).exp()))
            .unzip(),
        None => (data.held_out.cells.clone(), data.held_out.values.clone()),
    };
    if cells.is_empty() {
        return (None, None);
    }
    let predictions: Vec<f64> = cells.iter().map(|&c| expected[c]).collect();
    let baseline = vec![base_rate; cells.len()];
    (
        Some(mean_abs_difference(&predictions, &targets)),
        Some(mean_abs_difference(&baseline, &targets)),
    )
}

pub fn mean_abs_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>() / a.len() as f64
}

fn share_true(flags: &[bool]) -> Option<f64> {
    (!flags.is_empty()).then(|| flags.iter().filter(|&&f| f).count() as f64 / flags.len() as f64)
}
