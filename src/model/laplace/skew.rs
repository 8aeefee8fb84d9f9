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
//! Both corrections come from the Laplace gaussian's covariances at the fit
//! ([`LaplaceCovariance`]: the exact inverse of the observation-space matrix, or the gaussian in
//! the prior's leading spectral coordinates): the evidence's from the observations' covariances,
//! the cells' from their covariances with the observations, in the same pass that gives the
//! cells' variances ([`Correction`]). Where neither form applies (more than
//! [`super::MAX_EXACT_OBSERVATIONS`] observations and no cheap spectral root) the corrections
//! are not available and the caller keeps the gaussian.

use super::covariance::{Basis, LaplaceCovariance};
use super::error::LaplaceError;
use super::reduced::FieldPart;
use super::{LaplaceFit, LaplaceMarginals, LaplaceSettings, MAX_EXACT_OBSERVATIONS, SdMethod};
use crate::model::spec::LikelihoodKind;
use crate::model::target::Target;

/// What the simplified Laplace strategy does at one Laplace fit.
#[derive(Debug)]
pub(crate) enum Correction {
    /// The strategy is the gaussian one ([`LaplaceSettings::corrections`] off).
    NotAsked,
    /// A gaussian likelihood: the Laplace gaussian is the field's posterior; nothing to correct.
    Needless,
    /// The corrections, from the Laplace gaussian's covariances.
    Ready {
        covariance: Box<LaplaceCovariance>,
        /// The evidence's second-order term ([`evidence_term`]).
        evidence_term: f64,
    },
    /// They cannot be computed here: the gaussian marginals and the Laplace evidence stand.
    Unavailable(NoCorrection),
}

/// Why the simplified Laplace correction was not computed (the gaussian marginals stand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NoCorrection {
    /// More observations than the exact inverse takes.
    #[error(
        "it is computed from the exact inverse of at most {MAX_EXACT_OBSERVATIONS} observations' \
         matrix or in the prior's leading spectral coordinates, and these data have more \
         observations under a prior without a cheap spectral root (or one whose spectrum falls \
         too slowly)"
    )]
    TooManyObservations,
}

/// Each cell's marginal under the simplified Laplace approximation: a skew-normal's mean, sd and
/// skewness.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SkewMarginals {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
    pub(crate) skewness: Vec<f64>,
}

/// A fit's marginals by the strategy: the Laplace gaussian's, and their simplified Laplace
/// correction where it was computed (else why not, when it was asked for).
#[derive(Debug, Clone, PartialEq)]
pub struct CorrectedMarginals {
    pub(crate) laplace: LaplaceMarginals,
    pub(crate) skew: Option<SkewMarginals>,
    pub(crate) uncorrected: Option<NoCorrection>,
}

impl Correction {
    /// The corrections at `fit` of `target` as `settings` asks (the covariances' cost when they
    /// are computed: [`LaplaceCovariance::new`]).
    pub(crate) fn new(
        target: &Target,
        fit: &LaplaceFit,
        settings: &LaplaceSettings,
        preferred: Option<&Basis>,
    ) -> Result<Self, LaplaceError> {
        if !settings.corrections {
            return Ok(Self::NotAsked);
        }
        if target.likelihood.kind() == LikelihoodKind::Gaussian {
            return Ok(Self::Needless);
        }
        let Some(covariance) = LaplaceCovariance::new(target, &fit.weights, settings, preferred)?
        else {
            return Ok(Self::Unavailable(NoCorrection::TooManyObservations));
        };
        let evidence_term = evidence_term(&covariance, target, fit);
        Ok(Self::Ready {
            covariance: Box::new(covariance),
            evidence_term,
        })
    }

    /// The coordinates the corrections were computed in, when they were.
    pub(crate) fn basis(&self) -> Option<Basis> {
        match self {
            Self::Ready { covariance, .. } => Some(covariance.basis()),
            _ => None,
        }
    }

    /// The evidence's second-order term, when computed.
    pub(crate) fn evidence_term(&self) -> Option<f64> {
        match self {
            Self::Ready { evidence_term, .. } => Some(*evidence_term),
            _ => None,
        }
    }

    /// The log evidence: the Laplace evidence with its second-order term when ready.
    pub(crate) fn log_evidence(
        &self,
        target: &Target,
        fit: &LaplaceFit,
        settings: &LaplaceSettings,
    ) -> Result<f64, LaplaceError> {
        match self {
            Self::Ready {
                covariance,
                evidence_term,
            } => Ok(fit.evidence_with(covariance.log_det()) + evidence_term),
            _ => fit.log_evidence(target, settings),
        }
    }

    /// The spatial field's marginals at `fit` for a model with covariates (f = u - mean - X beta,
    /// what exceedance is judged on; `None` without covariates, or where the Laplace gaussian's
    /// covariances cannot be made, [`LaplaceCovariance::new`]): its Laplace gaussian's mean and
    /// sd, with the simplified Laplace correction when the strategy asks for it (skewness 0
    /// otherwise), from a pass over the covariances with the spatial field's (made here when the
    /// strategy did not make them).
    pub(crate) fn spatial_marginals(
        &self,
        target: &Target,
        fit: &LaplaceFit,
        settings: &LaplaceSettings,
    ) -> Result<Option<SkewMarginals>, LaplaceError> {
        let (Some(mode), Some(_)) = (spatial_mode(target, fit), target.prior.spatial()) else {
            return Ok(None);
        };
        let made;
        let (covariance, d3) = match self {
            Self::Ready { covariance, .. } => (&**covariance, third_derivatives(target, fit).1),
            _ => match LaplaceCovariance::new(target, &fit.weights, settings, None)? {
                None => return Ok(None),
                Some(covariance) => {
                    made = covariance;
                    (&made, vec![0.0; target.observations()])
                }
            },
        };
        let part = FieldPart::Spatial;
        Ok(Some(skewed_marginals(covariance, target, part, &mode, &d3)))
    }

    /// Every cell's marginals at `fit`: the gaussian ones ([`LaplaceFit::marginals`]), and when
    /// ready the corrected ones, both from one pass over the inverse.
    pub(crate) fn marginals(
        &self,
        target: &Target,
        fit: &LaplaceFit,
        settings: &LaplaceSettings,
    ) -> Result<CorrectedMarginals, LaplaceError> {
        let uncorrected = match self {
            Self::Ready { covariance, .. } => {
                let (laplace, skew) = simplified_laplace(covariance, target, fit);
                return Ok(CorrectedMarginals {
                    laplace,
                    skew: Some(skew),
                    uncorrected: None,
                });
            }
            Self::Unavailable(why) => Some(*why),
            Self::NotAsked | Self::Needless => None,
        };
        Ok(CorrectedMarginals {
            laplace: fit.marginals(target, settings)?,
            skew: None,
            uncorrected,
        })
    }
}

/// The observations' values at the mode and the likelihood's third derivative there.
fn third_derivatives(target: &Target, fit: &LaplaceFit) -> (Vec<f64>, Vec<f64>) {
    let m = target.observations();
    let mut at = vec![0.0; m];
    target.observed.gather(&fit.field, &mut at);
    let mut d3 = vec![0.0; m];
    target.likelihood.third_derivative(&at, &mut d3);
    (at, d3)
}

/// The Laplace log evidence's second-order term (Shun & McCullagh 1995): with the
/// log-likelihood's third and fourth derivatives d3_a, d4_a at the mode and the Laplace gaussian's
/// covariance S of the observations' values, log E exp(R) ~ E R + Var R / 2 for the remainder R =
/// sum_a (d3_a x_a^3 / 6 + d4_a x_a^4 / 24) of the expansion about the mode, x ~ N(0, S):
///
///   sum_a d4_a S_aa^2 / 8 + sum_ab d3_a d3_b (9 S_aa S_bb S_ab + 6 S_ab^3) / 72.
fn evidence_term(covariance: &LaplaceCovariance, target: &Target, fit: &LaplaceFit) -> f64 {
    let (at, d3) = third_derivatives(target, fit);
    let m = at.len();
    let mut d4 = vec![0.0; m];
    target.likelihood.fourth_derivative(&at, &mut d4);
    if d3.iter().chain(&d4).all(|&d| d == 0.0) {
        return 0.0;
    }
    let diagonal = covariance.observation_variances();
    let scaled: Vec<f64> = d3.iter().zip(&diagonal).map(|(d, s)| d * s).collect();
    let mut total = 0.0;
    for start in (0..m).step_by(EVIDENCE_BLOCK) {
        let columns = start..(start + EVIDENCE_BLOCK).min(m);
        let block = covariance.observation_covariances(columns.clone());
        for (j, a) in columns.enumerate() {
            let saa = diagonal[a];
            total += d4[a] * saa * saa / 8.0;
            if d3[a] == 0.0 {
                continue;
            }
            // The pairs (a, b) and (b, a) are one term twice: b = a once, b > a twice.
            let below = &block
                .col(j)
                .try_as_col_major()
                .expect("a column")
                .as_slice()[a - start..];
            let own = below[0];
            let (linear, cubic) = pair_sums(&below[1..], &scaled[a + 1..], &d3[a + 1..]);
            let cross = d3[a] * (9.0 * saa * diagonal[a] * own + 6.0 * own * own * own)
                + 2.0 * (9.0 * saa * linear + 6.0 * cubic);
            total += d3[a] * cross / 72.0;
        }
    }
    total
}

/// sum_b scaled_b s_b and sum_b d3_b s_b^3 over the pairs' covariances `s`, in four lanes
/// (independent sums the compiler can keep in one vector register; the order is fixed, so is
/// the result).
fn pair_sums(s: &[f64], scaled: &[f64], d3: &[f64]) -> (f64, f64) {
    const LANES: usize = 4;
    let whole = s.len() / LANES * LANES;
    let (mut linear, mut cubic) = ([0.0; LANES], [0.0; LANES]);
    let lanes = s[..whole]
        .chunks_exact(LANES)
        .zip(scaled[..whole].chunks_exact(LANES))
        .zip(d3[..whole].chunks_exact(LANES));
    for ((s, e), d) in lanes {
        for k in 0..LANES {
            linear[k] += e[k] * s[k];
            cubic[k] += d[k] * s[k] * s[k] * s[k];
        }
    }
    let (mut linear, mut cubic) = (
        (linear[0] + linear[1]) + (linear[2] + linear[3]),
        (cubic[0] + cubic[1]) + (cubic[2] + cubic[3]),
    );
    for ((s, e), d) in s[whole..].iter().zip(&scaled[whole..]).zip(&d3[whole..]) {
        linear += e * s;
        cubic += d * s * s * s;
    }
    (linear, cubic)
}

/// Observations whose covariances with every other [`evidence_term`] takes at once.
const EVIDENCE_BLOCK: usize = 64;

/// The Laplace marginals of every cell and their simplified Laplace correction, from one pass
/// over the covariances of the observations with the cells ([`skewed_marginals`] of the cells'
/// field u).
fn simplified_laplace(
    covariance: &LaplaceCovariance,
    target: &Target,
    fit: &LaplaceFit,
) -> (LaplaceMarginals, SkewMarginals) {
    let (_, d3) = third_derivatives(target, fit);
    let skew = skewed_marginals(covariance, target, FieldPart::Whole, &fit.field, &d3);
    let log_det = covariance.log_det();
    let laplace = LaplaceMarginals {
        sd: skew.sd.clone(),
        method: SdMethod::Exact,
        log_det,
        log_evidence: fit.evidence_with(log_det),
    };
    (laplace, skew)
}

/// The marginals of the field x = `part` (u itself, or the spatial field f of a model with
/// covariates) whose Laplace
/// mode is `mode`, corrected by the likelihood's third derivatives `d3` (all zero: the gaussian
/// marginals): with c_an = Cov((G u)_a, x_n), sigma_n^2 x_n's variance and v_a the
/// observation's,
///
///   gamma3_n = sum_a d_a c_an^3 / sigma_n^3,
///   gamma1_n = 1/2 sum_a d_a (v_a - c_an^2 / sigma_n^2) c_an / sigma_n,
///
/// accumulated as the two sums over a of d_a v_a c_an and d_a c_an^3 while the variances are.
fn skewed_marginals(
    covariance: &LaplaceCovariance,
    target: &Target,
    part: FieldPart,
    mode: &[f64],
    d3: &[f64],
) -> SkewMarginals {
    let v = covariance.observation_variances();
    let n = target.cells();
    let (mut linear, mut cubic) = (vec![0.0; n], vec![0.0; n]);
    let variance = covariance.cell_variances(target, part, |a, covariance| {
        let d = d3[a];
        if d == 0.0 {
            return;
        }
        for ((l, k), &c) in linear.iter_mut().zip(cubic.iter_mut()).zip(covariance) {
            *l += d * v[a] * c;
            *k += d * c * c * c;
        }
    });
    let sd: Vec<f64> = variance.iter().map(|v| v.sqrt()).collect();
    let mut mean = mode.to_vec();
    let mut skewness = vec![0.0; n];
    for cell in 0..n {
        let sigma = sd[cell];
        if sigma <= 0.0 {
            continue;
        }
        let gamma3 = cubic[cell] / sigma.powi(3);
        let gamma1 = 0.5 * (linear[cell] / sigma - gamma3);
        mean[cell] += sigma * (gamma1 + 0.5 * gamma3);
        skewness[cell] = gamma3;
    }
    SkewMarginals { mean, sd, skewness }
}

/// The spatial field f = u - mean - X beta of a model with covariates, at the Laplace mode:
/// the mode's field less the mean and the mode's fixed effect (`None` without covariates).
fn spatial_mode(target: &Target, fit: &LaplaceFit) -> Option<Vec<f64>> {
    let covariates = target.prior.covariates()?;
    let mut f: Vec<f64> = fit.field.iter().map(|u| u - target.mean).collect();
    covariates.remove_whitened_effect(covariates.whitened_coefficients(&fit.mode), &mut f);
    Some(f)
}
