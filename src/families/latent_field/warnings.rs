//! Warnings a user cannot miss: the reasons a finished job's answer may not be trusted, each a
//! short sentence with its number, joined into the job's `warnings` text (empty when none).
//!
//! A job warns when (with the thresholds of Vehtari et al. 2021 for R-hat and ESS):
//! - the largest cell R-hat is above 1.01 (with two or more chains; with one chain R-hat cannot
//!   be computed, and the job says so);
//! - the smallest cell bulk ESS is below 100;
//! - a Metropolis-Hastings kind's acceptance rate is below 0.05 or above 0.95, where it does
//!   not work (moves rejected, or too small to go anywhere);
//! - adaptation ended more than 0.1 from its target acceptance (above it with the step at the
//!   kind's largest, [`STEP_LIMIT_SHARE`], is not a problem: the proposal is nearly exact; nor
//!   when adaptation could not go further: see [`crate::sampler::adapt`]'s `capped`);
//! - a NUTS trajectory diverged after burn-in (the step cannot integrate some region of the
//!   posterior, whose draws are then missing or biased; Betancourt 2017);
//! - the log-likelihood's mean over the first fifth of a chain's kept draws differs from that
//!   over the last fifth by more than 4 Monte Carlo standard errors (the chain is still
//!   moving towards the typical set);
//! - with `output.log_likelihood`, observations have a Pareto k above 0.7, or LOO could not be
//!   computed (`super::loo` words these);
//! - a chain's Metropolis-Hastings hyperparameter updates (within-gibbs, pseudo-marginal) moved
//!   in fewer than [`HYPER_ACCEPTANCE_FLOOR`] of its kept iterations: it stays where it is.
//!
//! An approximation says what it is (laplace: its `post_mean` is the mode) and where it is
//! loose (low-rank sds; INLA grid points left out or an axis cut at its step limit).

use super::coefficients::CoefficientSummary;
use super::hyper::HyperSummary;
use crate::diagnostics;
use crate::model::hyper::{HyperPriors, Hyperparameters};
use crate::model::inla::{TAIL_FALL, TAIL_WARNING_FALL, TAIL_Z};
use crate::sampler::hyper::HyperUpdate;
use crate::sampler::{RunOutput, SamplerSpec};

use super::cells::CellDiagnostics;

/// R-hat above this says the chains have not mixed.
pub(crate) const RHAT_LIMIT: f64 = 1.01;
/// Bulk ESS below this makes every estimate's MCSE unreliable.
pub(crate) const ESS_LIMIT: f64 = 100.0;
/// Where a Metropolis-Hastings kind works.
pub(crate) const ACCEPTANCE_RANGE: (f64, f64) = (0.05, 0.95);
/// How far the kept acceptance may end from the adaptation's target.
pub(crate) const ADAPTATION_TOLERANCE: f64 = 0.1;
/// A step adapted to within this share of the largest step its kind admits (laplace_hmc: the
/// whole trajectory in one step, pCN: beta = 1) is at the kind's limit: a high acceptance there means the
/// proposal is nearly exact, not that the steps are too small, so neither acceptance check
/// flags it.
pub(crate) const STEP_LIMIT_SHARE: f64 = 0.9;
/// The log-likelihood drift, in combined MCSE, that says a chain has not settled.
pub(crate) const DRIFT_LIMIT: f64 = 4.0;
/// The share of kept hyperparameter updates that moved below which a chain's have collapsed.
pub(crate) const HYPER_ACCEPTANCE_FLOOR: f64 = 0.05;

/// The warnings of a finished run, in a fixed order.
pub(crate) fn warnings(
    spec: &SamplerSpec,
    run: &RunOutput,
    cells: &CellDiagnostics,
) -> Vec<String> {
    if let Some(approximation) = &run.approximation {
        return approximation_warnings(approximation);
    }
    let mut found = Vec::new();
    let undefined = cells.undefined_rhat_cells();
    match cells.max_rhat() {
        Some(_) if !undefined.is_empty() => found.push(format!(
            "R-hat undefined for {} cells (first: cell {}; their draws do not vary, or are too \
             few): counted as not converged",
            undefined.len(),
            undefined[0]
        )),
        Some(rhat) if rhat > RHAT_LIMIT => found.push(format!(
            "max cell R-hat {rhat:.3} > {RHAT_LIMIT}: the chains disagree"
        )),
        None if run.chains.len() < 2 => {
            found.push("one chain: R-hat not computed (run 2 or more chains)".to_string())
        }
        _ => {}
    }
    if let Some(ess) = cells.min_ess_bulk()
        && ess < ESS_LIMIT
    {
        found.push(format!(
            "min cell bulk ESS {ess:.0} < {ESS_LIMIT:.0}: estimates are too noisy"
        ));
    }
    let mh = run
        .chains
        .iter()
        .any(|c| c.mean_acceptance_probability.is_some());
    let capped = !run.chains.is_empty() && run.chains.iter().all(|c| c.step_capped == Some(true));
    found.extend(acceptance_warnings(
        mh.then_some(run.acceptance_rate),
        spec.adaptation(),
        run.mean_step_size(),
        capped,
    ));
    if let Some(error) = &run.notes.laplace_error {
        found.push(format!(
            "the Laplace fit the {} sampler builds on failed ({error}): it ran with the prior's \
             geometry instead and mixes far more slowly; try nuts",
            spec.kind()
        ));
    }
    let floored = run.chains.iter().any(|c| c.step_floored == Some(true));
    if let (true, Some(min)) = (floored, spec.adaptation().and_then(|a| a.min_step)) {
        found.push(format!(
            "step adaptation wanted a step below the {} sampler's smallest ({min:.6}, where an \
             iteration takes the most work the kind allows): its acceptance stays low; the \
             posterior is far from what the kind assumes, try nuts",
            spec.kind()
        ));
    }
    let divergences: u64 = run
        .chains
        .iter()
        .filter_map(|c| c.trajectory.map(|t| t.divergences))
        .sum();
    if divergences > 0 {
        found.push(format!(
            "{divergences} divergent trajectories after burn-in: lengthen burn-in or reparametrise"
        ));
    }
    if let Some((chain, z)) = worst_drift(run)
        && z > DRIFT_LIMIT
    {
        // A segment that never moved has no MCSE to measure the drift in.
        let size = if z.is_finite() {
            format!("by {z:.1} MCSE")
        } else {
            "from a segment that never moved".to_string()
        };
        found.push(format!(
            "log-likelihood drifts {size} in chain {chain} (first vs last fifth): not \
             converged, lengthen burn-in"
        ));
    }
    found
}

/// The chain whose log-likelihood mean moves most between the first and last fifth of its
/// stored kept draws, in combined MCSE.
fn worst_drift(run: &RunOutput) -> Option<(usize, f64)> {
    run.chains
        .iter()
        .enumerate()
        .filter_map(|(c, chain)| drift(&chain.draws.loglik).map(|z| (c, z)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// |mean(first fifth) - mean(last fifth)| / sqrt(mcse_first^2 + mcse_last^2).
fn drift(loglik: &[f64]) -> Option<f64> {
    let fifth = loglik.len() / 5;
    if fifth < 20 {
        return None;
    }
    let (first, last) = (&loglik[..fifth], &loglik[loglik.len() - fifth..]);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let se_first = diagnostics::mcse_mean(&[first]);
    let se_last = diagnostics::mcse_mean(&[last]);
    let difference = (mean(first) - mean(last)).abs();
    match (se_first, se_last) {
        (Some(a), Some(b)) if a * a + b * b > 0.0 => Some(difference / (a * a + b * b).sqrt()),
        // A constant segment: any difference at all is drift.
        _ if difference > 0.0 => Some(f64::INFINITY),
        _ => None,
    }
}

/// An approximation has no chains to judge; it says what it is, and how loose its sds are.
fn approximation_warnings(
    approximation: &crate::sampler::approximation::Approximation,
) -> Vec<String> {
    use crate::model::laplace::SdMethod;
    let mut found = match &approximation.inla {
        Some(inla) => {
            let mut found = inla_warnings(&inla.grid);
            found.extend(inla.laplace_check.iter().flat_map(|check| check.warnings()));
            found
        }
        None if approximation.marginal_check.is_some() => vec![
            "simplified Laplace approximation: post_mean and post_sd are those of each cell's \
             corrected marginal, not Monte Carlo estimates"
                .to_string(),
        ],
        None => vec![
            "Laplace approximation: post_mean is the posterior mode, not a Monte Carlo mean"
                .to_string(),
        ],
    };
    found.extend(
        approximation
            .marginal_check
            .iter()
            .flat_map(|check| check.warnings()),
    );
    if let Some(why) = approximation.uncorrected {
        found.push(format!(
            "INLA: the cells' marginals are the Laplace gaussians, not the simplified Laplace \
             correction sampler.inla_strategy asks for: {why}"
        ));
    }
    if let SdMethod::LowRank {
        rank,
        variance_share,
        ..
    } = approximation.sd_method
    {
        found.push(format!(
            "post_sd from {rank} eigenpairs: each variance over-estimated by at most \
             {variance_share:.2e} of its prior variance"
        ));
    }
    found
}

/// An INLA grid that left points out or was cut before its threshold.
fn inla_warnings(grid: &crate::model::inla::HyperGrid) -> Vec<String> {
    let mut found = Vec::new();
    if grid.failed_points > 0 {
        found.push(format!(
            "INLA: log p(theta | data) could not be evaluated at {} grid points, left out",
            grid.failed_points
        ));
    }
    for &(axis, sign) in &grid.truncated_axes {
        let direction = if sign > 0 { "+" } else { "-" };
        found.push(format!(
            "INLA: the grid was cut along z axis {axis} ({direction}) before log p(theta | data) \
             dropped by the threshold: the hyperparameters' posterior is flatter than its Hessian \
             says there"
        ));
    }
    if let Some((axis, sign, fall)) = grid.heaviest_tail()
        && fall < TAIL_WARNING_FALL
    {
        let direction = if sign > 0 { "+" } else { "-" };
        found.push(format!(
            "INLA: along z axis {axis} ({direction}) log p(theta | data) falls {fall:.1} nats at \
             {TAIL_Z} standardised units from the mode, where the central composite design's \
             asymmetric gaussian falls {TAIL_FALL}: the hyperparameters' posterior has a tail \
             the design's points do not reach, and their marginals and the cells' mixture may \
             be off; use sampler.inla_integration = \"grid\" or a chain (sampler.hyper = \
             \"joint\")"
        ));
    }
    found
}

/// The warnings about inferred hyperparameters: R-hat above [`RHAT_LIMIT`] or bulk ESS below
/// [`ESS_LIMIT`], each with its name.
pub(crate) fn hyper_warnings(summaries: &[HyperSummary]) -> Vec<String> {
    summaries
        .iter()
        .flat_map(|s| {
            let posterior = &s.posterior;
            scalar_warnings(&s.name.to_string(), posterior.rhat, posterior.ess_bulk)
        })
        .collect()
}

/// A warning per chain whose Metropolis-Hastings hyperparameter updates (`update`: within-gibbs
/// or pseudo-marginal; the slice and joint updates have no rate to judge) moved in fewer than
/// [`HYPER_ACCEPTANCE_FLOOR`] of its kept iterations, the chains' `rates` in order.
pub(crate) fn hyper_acceptance_warnings(
    update: HyperUpdate,
    rates: impl Iterator<Item = Option<f64>>,
) -> Vec<String> {
    if !matches!(
        update,
        HyperUpdate::WithinGibbs | HyperUpdate::PseudoMarginal
    ) {
        return Vec::new();
    }
    rates
        .enumerate()
        .filter_map(|(chain, rate)| Some((chain, rate?)))
        .filter(|&(_, rate)| rate < HYPER_ACCEPTANCE_FLOOR)
        .map(|(chain, rate)| {
            let advice = if update == HyperUpdate::PseudoMarginal {
                "raise sampler.hyper_importance_draws (a noisy estimate sticks) or use"
            } else {
                "use"
            };
            format!(
                "the {update} hyperparameter updates of chain {chain} moved in {:.1} % of its \
                 kept iterations (below {:.0} %): the chain stays where it is, and its \
                 hyperparameters' ESS and R-hat cannot be trusted; {advice} sampler.hyper = \
                 \"joint\"",
                100.0 * rate,
                100.0 * HYPER_ACCEPTANCE_FLOOR
            )
        })
        .collect()
}

/// A warning per covariate coefficient whose chains did not converge or mix, as for the
/// hyperparameters.
pub(crate) fn coefficient_warnings(summaries: &[CoefficientSummary]) -> Vec<String> {
    summaries
        .iter()
        .flat_map(|s| {
            let name = format!("coefficient {}", s.name);
            scalar_warnings(&name, s.posterior.rhat, s.posterior.ess_bulk)
        })
        .collect()
}

/// What an inferred scalar's R-hat and bulk ESS say against the limits.
fn scalar_warnings(name: &str, rhat: Option<f64>, ess: Option<f64>) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(rhat) = rhat
        && rhat > RHAT_LIMIT
    {
        found.push(format!(
            "{name} R-hat {rhat:.3} > {RHAT_LIMIT}: the chains disagree about it"
        ));
    }
    if let Some(ess) = ess
        && ess < ESS_LIMIT
    {
        found.push(format!(
            "{name} bulk ESS {ess:.0} < {ESS_LIMIT:.0}: its estimates are too noisy"
        ));
    }
    found
}

/// What a Metropolis-Hastings kind's kept acceptance `rate` (None for kinds without one) says,
/// with the `adaptation` it ran and its adapted mean `step`: outside [`ACCEPTANCE_RANGE`], or
/// more than [`ADAPTATION_TOLERANCE`] from the adaptation's target, except above them with the
/// step at its kind's limit: within [`STEP_LIMIT_SHARE`] of it, or `capped` (every chain's
/// adaptation wanted more than the limit late in burn-in).
fn acceptance_warnings(
    rate: Option<f64>,
    adaptation: Option<crate::sampler::Adaptation>,
    step: Option<f64>,
    capped: bool,
) -> Vec<String> {
    let mut found = Vec::new();
    let Some(rate) = rate else {
        return found;
    };
    let at_limit = adaptation
        .and_then(|a| a.max_step)
        .zip(step)
        .is_some_and(|(max, step)| step >= STEP_LIMIT_SHARE * max)
        || capped;
    let too_high_at_limit = at_limit && rate > ACCEPTANCE_RANGE.1;
    if !(ACCEPTANCE_RANGE.0..=ACCEPTANCE_RANGE.1).contains(&rate) && !too_high_at_limit {
        found.push(format!(
            "acceptance {rate:.3} outside {:.2}-{:.2}: tune beta",
            ACCEPTANCE_RANGE.0, ACCEPTANCE_RANGE.1
        ));
    }
    if let Some(adaptation) = adaptation {
        let target = adaptation.target_acceptance;
        let above_at_limit = at_limit && rate > target;
        if (rate - target).abs() > ADAPTATION_TOLERANCE && !above_at_limit {
            found.push(format!(
                "adaptation ended at acceptance {rate:.3}, target {target}: lengthen burn-in"
            ));
        }
    }
    found
}

/// A warning per inferred hyperparameter whose value the study set (`model.mean = "auto"`, read
/// from the data) lies outside its prior's support: its chains start at the prior's median
/// instead ([`HyperPriors::chain_start`]).
pub(crate) fn outside_support_warnings(
    priors: &HyperPriors,
    model: &Hyperparameters,
) -> Vec<String> {
    priors
        .set_outside_support(model)
        .into_iter()
        .filter_map(|(name, value)| {
            let prior = priors.prior(name)?;
            Some(format!(
                "the study's {name} {value:.4} lies outside the support of its prior {}: the \
                 chains start at the prior's median {:.4} instead (check the prior's units)",
                prior.canonical(),
                prior.median(),
            ))
        })
        .collect()
}

/// A warning per inferred hyperparameter whose chains start more than
/// [`crate::model::hyper::FAR_START_SDS`] prior standard deviations from its prior's median (a value the study set
/// far out in the prior's tail, or in other units than the prior's).
pub(crate) fn far_start_warnings(priors: &HyperPriors, start: &Hyperparameters) -> Vec<String> {
    priors
        .far_starts(start)
        .into_iter()
        .map(|(name, sds)| {
            let prior = priors
                .prior(name)
                .expect("far_starts names inferred hyperparameters");
            format!(
                "the {name} chains start at the study's {:.4}, {sds:.1} prior sds from the \
                 median {:.4} of {}: a start in the prior's far tail mixes slowly (leave \
                 model.{name} unset to start at the median)",
                start.get(name),
                prior.median(),
                prior.canonical(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collapsed Metropolis-Hastings hyperparameter update is named by chain; the joint
    /// update has no rate to judge.
    #[test]
    fn a_collapsed_hyperparameter_acceptance_names_its_chain() {
        let rates = [Some(0.31), Some(0.02), None];
        let found = hyper_acceptance_warnings(HyperUpdate::PseudoMarginal, rates.into_iter());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("chain 1 moved in 2.0 %"), "{found:?}");
        assert!(found[0].contains("hyper_importance_draws"), "{found:?}");
        assert!(hyper_acceptance_warnings(HyperUpdate::Joint, rates.into_iter()).is_empty());
    }

    #[test]
    fn a_trending_log_likelihood_drifts_and_a_stationary_one_does_not() {
        let trending: Vec<f64> = (0..1000)
            .map(|t| t as f64 * 0.01 + ((t * 7) % 5) as f64)
            .collect();
        assert!(drift(&trending).unwrap() > DRIFT_LIMIT);
        let stationary: Vec<f64> = (0..1000).map(|t| ((t * 7919) % 101) as f64).collect();
        assert!(drift(&stationary).unwrap() < DRIFT_LIMIT);
        assert_eq!(drift(&[1.0; 50]), None, "too short to judge");
    }

    use crate::sampler::Adaptation;

    const LAPLACE_HMC: Adaptation = Adaptation {
        target_acceptance: 0.8,
        max_step: Some(std::f64::consts::FRAC_PI_2),
        min_step: None,
    };

    /// A step at its kind's limit with a high acceptance is a nearly exact proposal, not a
    /// problem; the same acceptance with room to grow the step, or a low one at the limit, is.
    #[test]
    fn a_high_acceptance_is_spared_only_at_the_step_limit() {
        assert!(acceptance_warnings(Some(0.96), Some(LAPLACE_HMC), Some(1.53), false).is_empty());
        let small_step = acceptance_warnings(Some(0.96), Some(LAPLACE_HMC), Some(0.5), false);
        assert_eq!(small_step.len(), 2, "{small_step:?}");
        let low_at_limit = acceptance_warnings(Some(0.5), Some(LAPLACE_HMC), Some(1.55), false);
        assert_eq!(low_at_limit.len(), 1, "{low_at_limit:?}");
        assert!(low_at_limit[0].starts_with("adaptation ended at acceptance 0.500"));
        // Without adaptation (pcn as the coursework runs it) the range alone judges.
        let unadapted = acceptance_warnings(Some(0.97), None, Some(0.2), false);
        assert_eq!(unadapted, ["acceptance 0.970 outside 0.05-0.95: tune beta"]);
        assert!(acceptance_warnings(None, Some(LAPLACE_HMC), Some(0.1), false).is_empty());
        // Below the share of the limit, but every chain's adaptation wanted more than it.
        assert!(acceptance_warnings(Some(0.91), Some(LAPLACE_HMC), Some(1.38), true).is_empty());
        assert_eq!(
            acceptance_warnings(Some(0.91), Some(LAPLACE_HMC), Some(1.38), false).len(),
            1
        );
    }
}
