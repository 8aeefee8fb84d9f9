//! The simplified Laplace approximation of each cell's marginal (Rue, Martino & Chopin 2009,
//! section 3.2.3): the Laplace gaussian's marginal N(mu_i, sigma_i^2) corrected in location and
//! skewness by a third-order expansion, at about twice the cost of the gaussian's sds; and the
//! Laplace evidence with its second-order correction ([`corrected_log_evidence`]), which INLA's
//! grid weighs its hyperparameters by.
//!
//! In standard units s = (u_i - mu_i) / sigma_i, the Laplace approximation of u_i's marginal,
//! pi(u) / pi_G(u_-i | u_i) at u_-i = E_G(u_-i | u_i), expands as
//!
//!   log pi(s) = const - s^2 / 2 + gamma1_i s + gamma3_i s^3 / 6 + ...,
//!   gamma3_i = sum_a d_a b_ia^3,
//!   gamma1_i = 1/2 sum_a d_a (v_a - b_ia^2) b_ia,
//!
//! over the observations a with d_a the third derivative of log p(y_a | (G u)_a) at the mode,
//! b_ia = Cov((G u)_a, u_i) / sigma_i (how far (G u)_a's conditional mean moves per unit s) and
//! v_a - b_ia^2 = Var((G u)_a | u_i) (its conditional variance, which the curvature's change
//! along s weighs in the log-determinant of pi_G(u_-i | u_i): the gamma1 term). The cubic term
//! is the likelihood's own skewness carried along the conditional mean (the observation at cell
//! i included, whose b is sigma_i).
//!
//! The expansion is not a density (its cubic term is unbounded); as R-INLA does, a skew-normal
//! is fitted to it ([`crate::model::skew_normal::SkewNormal`]): here with the expansion's first three
//! cumulants to first order in gamma, mean mu_i + sigma_i (gamma1_i + gamma3_i / 2), sd sigma_i,
//! skewness gamma3_i. (The gamma3 / 2 is the mean of the cubic term: exp(-s^2 / 2) (1 + gamma3
//! s^3 / 6) has mean gamma3 / 2; Rue, Martino & Chopin's text attributes the mean's shift to
//! gamma1 alone, which in a trial on the quadrature problems of tests/quadrature.rs left most of
//! the gaussian's error in place.)
//!
//! Computed from the exact observation-space factor ([`variance::observation_cell_covariances`]):
//! 2 M^2 N operations, for observations at cells (v_a = sigma of the observed cell, squared) up
//! to [`super::MAX_EXACT_OBSERVATIONS`]; elsewhere (sites, larger M) the correction is not
//! available and the caller keeps the gaussian.

use super::error::LaplaceError;
use super::variance::{self, ObservationFactor};
use super::{LaplaceFit, LaplaceSettings, MAX_EXACT_OBSERVATIONS};
use crate::model::spec::LikelihoodKind;
use crate::model::target::{Observed, Target};

/// The Laplace log evidence with its second-order correction (Shun & McCullagh 1995): with the
/// log-likelihood's third and fourth derivatives d3_a, d4_a at the mode and the Laplace gaussian's
/// covariance S of the observations' values, log E exp(R) ~ E R + Var R / 2 for the remainder R =
/// sum_a (d3_a x_a^3 / 6 + d4_a x_a^4 / 24) of the expansion about the mode, x ~ N(0, S):
///
///   sum_a d4_a S_aa^2 / 8 + sum_ab d3_a d3_b (9 S_aa S_bb S_ab + 6 S_ab^3) / 72,
///
/// from the exact observation-space factor that also gives the log-determinant (S from I - K^-1,
/// M^3 operations). Where it cannot be computed ([`correctable`]) or is 0 (a gaussian
/// likelihood), the Laplace log evidence.
pub(crate) fn corrected_log_evidence(
    target: &Target,
    fit: &LaplaceFit,
    settings: &LaplaceSettings,
) -> Result<f64, LaplaceError> {
    if is_gaussian(target) || correctable(target, settings.max_exact_observations).is_err() {
        return fit.log_evidence(target, settings);
    }
    let factor = ObservationFactor::new(target.prior, target.observed, &fit.weights)?;
    Ok(fit.evidence_with(factor.log_det()) + correction_from(&factor, target, fit))
}

/// Whether the likelihood is gaussian (every correction is 0).
fn is_gaussian(target: &Target) -> bool {
    target.likelihood.kind() == LikelihoodKind::Gaussian
}

/// Whether the corrections can be computed for `target`'s observations from the exact factor,
/// taken up to `max_observations` (at most [`MAX_EXACT_OBSERVATIONS`]): observations at cells,
/// not too many of them.
fn correctable<'a>(
    target: &Target<'a>,
    max_observations: usize,
) -> Result<&'a [usize], NoCorrection> {
    match target.observed {
        Observed::Sites(_) => Err(NoCorrection::Sites),
        Observed::Cells(cells) if cells.len() > max_observations.min(MAX_EXACT_OBSERVATIONS) => {
            Err(NoCorrection::TooManyObservations)
        }
        Observed::Cells(cells) => Ok(cells),
    }
}

/// The correction's sum from `factor`.
fn correction_from(factor: &ObservationFactor, target: &Target, fit: &LaplaceFit) -> f64 {
    let m = target.observations();
    let mut at = vec![0.0; m];
    target.observed.gather(&fit.field, &mut at);
    let (mut d3, mut d4) = (vec![0.0; m], vec![0.0; m]);
    target.likelihood.third_derivative(&at, &mut d3);
    target.likelihood.fourth_derivative(&at, &mut d4);
    if d3.iter().chain(&d4).all(|&d| d == 0.0) {
        return 0.0;
    }
    let s = factor.observation_covariance();
    let mut total = 0.0;
    for a in 0..m {
        let saa = s[(a, a)];
        total += d4[a] * saa * saa / 8.0;
        let mut cross = 0.0;
        for b in 0..m {
            let sab = s[(a, b)];
            cross += d3[b] * (9.0 * saa * s[(b, b)] * sab + 6.0 * sab * sab * sab);
        }
        total += d3[a] * cross / 72.0;
    }
    total
}

/// Each cell's marginal under the simplified Laplace approximation: a skew-normal's mean, sd and
/// skewness.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkewMarginals {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
    pub(crate) skewness: Vec<f64>,
}

/// Why the simplified Laplace correction was not computed (the gaussian marginals stand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoCorrection {
    /// The data are at scattered sites, not cells.
    #[error("it is computed for observations at cells, and these data are at sites")]
    Sites,
    /// More observations than the exact factor takes.
    #[error(
        "it is computed from the exact factor of at most {MAX_EXACT_OBSERVATIONS} observations, \
         and these data have more"
    )]
    TooManyObservations,
}

/// The simplified Laplace marginals of every cell at `fit` of `target`, whose gaussian sds are
/// `sd` ([`LaplaceFit::marginals`] with `settings`: exact up to its `max_exact_observations`, which
/// the correction needs unless the likelihood is gaussian).
pub(crate) fn simplified_laplace(
    target: &Target,
    fit: &LaplaceFit,
    sd: &[f64],
    settings: &LaplaceSettings,
) -> Result<Result<SkewMarginals, NoCorrection>, LaplaceError> {
    if is_gaussian(target) {
        // No third derivative: the Laplace gaussian is the posterior, wherever the data are.
        return Ok(Ok(SkewMarginals {
            mean: fit.field.clone(),
            sd: sd.to_vec(),
            skewness: vec![0.0; sd.len()],
        }));
    }
    let cells = match correctable(target, settings.max_exact_observations) {
        Ok(cells) => cells,
        Err(why) => return Ok(Err(why)),
    };
    let mut at_observations = vec![0.0; cells.len()];
    target.observed.gather(&fit.field, &mut at_observations);
    let mut third = vec![0.0; cells.len()];
    target
        .likelihood
        .third_derivative(&at_observations, &mut third);
    let n = target.cells();
    let (mut gamma1, mut gamma3) = (vec![0.0; n], vec![0.0; n]);
    if third.iter().any(|&d| d != 0.0) {
        let variance: Vec<f64> = cells.iter().map(|&c| sd[c] * sd[c]).collect();
        variance::observation_cell_covariances(
            target.prior,
            target.observed,
            &fit.weights,
            |start, block| {
                for j in 0..block.ncols() {
                    let cell = start + j;
                    let sigma = sd[cell];
                    if sigma <= 0.0 {
                        continue;
                    }
                    let (mut g1, mut g3) = (0.0, 0.0);
                    for (a, (&d, &v)) in third.iter().zip(&variance).enumerate() {
                        let b = block[(a, j)] / sigma;
                        g3 += d * b * b * b;
                        g1 += 0.5 * d * (v - b * b).max(0.0) * b;
                    }
                    gamma1[cell] = g1;
                    gamma3[cell] = g3;
                }
            },
        )?;
    }
    let mean = (0..n)
        .map(|c| fit.field[c] + sd[c] * (gamma1[c] + 0.5 * gamma3[c]))
        .collect();
    Ok(Ok(SkewMarginals {
        mean,
        sd: sd.to_vec(),
        skewness: gamma3,
    }))
}
