//! log p~(theta | y) up to a constant: the log prior of the unconstrained hyperparameters
//! (Jacobian included, [`HyperPriors::log_density_unconstrained`]) plus the Laplace log evidence
//! of the field under the prior at theta ([`prior_at`]), the mean theta's when it is inferred
//! and the fixed one otherwise.

use crate::model::hyper::{HyperPriors, Hyperparameters, prior_at};
use crate::model::laplace::covariance::Basis;
use crate::model::laplace::skew::{CorrectedMarginals, Correction, SkewMarginals};
use crate::model::laplace::{LaplaceError, LaplaceFit, LaplaceSettings, default_start};
use crate::model::prior::{Prior, PriorError};
use crate::model::spec::ModelSpec;
use crate::model::{Likelihood, Observed, Target};

/// The data and model whose hyperparameters are integrated over.
#[derive(Debug, Clone, Copy)]
pub struct HyperProblem<'a> {
    /// The model: grid, kernel kind and the priors of the inferred hyperparameters.
    pub(crate) model: &'a ModelSpec,
    pub(crate) likelihood: &'a Likelihood,
    /// Where the data see the field.
    pub(crate) observed: Observed<'a>,
    /// The values of every hyperparameter; the inferred ones are replaced at each theta.
    pub(crate) base: Hyperparameters,
}

/// Why log p~ could not be evaluated at a theta.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvaluationError {
    #[error("theta is outside the priors' support")]
    OutsideSupport,
    #[error("the prior cannot be built there: {0}")]
    Prior(#[from] PriorError),
    #[error("the Laplace fit failed there: {0}")]
    Laplace(#[from] LaplaceError),
}

/// log p~(theta | y) at one theta, with the Laplace fit behind it.
#[derive(Debug)]
pub struct Evaluation {
    /// The unconstrained coordinates.
    pub(crate) theta: Vec<f64>,
    pub(crate) values: Hyperparameters,
    /// log p(theta), unconstrained (Jacobian included).
    pub(crate) log_prior: f64,
    /// The log evidence log p~(y | theta) the point is weighed by: the Laplace evidence, with
    /// its second-order term when the strategy corrects it.
    pub(crate) log_evidence: f64,
    prior: Box<dyn Prior>,
    fit: LaplaceFit,
    /// The simplified Laplace corrections at the fit, kept for the cells' marginals when the
    /// point is kept (their inverse is the evaluation's main cost).
    correction: Correction,
}

impl Evaluation {
    /// log p~(theta | y) + log p(y): the log prior plus the log evidence.
    pub(crate) fn log_density(&self) -> f64 {
        self.log_prior + self.log_evidence
    }

    pub(crate) fn fit(&self) -> &LaplaceFit {
        &self.fit
    }

    /// The second-order term `log_evidence` carries ([`Correction::evidence_term`]), when the
    /// strategy computed it here.
    pub(crate) fn evidence_correction(&self) -> Option<f64> {
        self.correction.evidence_term()
    }

    /// The spatial field's marginals at this theta, for a model with covariates
    /// ([`Correction::spatial_marginals`]).
    pub(crate) fn spatial_marginals(
        &self,
        problem: &HyperProblem,
        settings: &LaplaceSettings,
    ) -> Result<Option<SkewMarginals>, LaplaceError> {
        self.correction
            .spatial_marginals(&self.target(problem), &self.fit, settings)
    }

    /// The Laplace log evidence without its correction.
    pub(crate) fn laplace_log_evidence(&self) -> f64 {
        self.log_evidence - self.evidence_correction().unwrap_or(0.0)
    }

    /// The field's target at this theta.
    pub(crate) fn target<'s>(&'s self, problem: &HyperProblem<'s>) -> Target<'s> {
        Target {
            prior: self.prior.as_ref(),
            likelihood: problem.likelihood,
            observed: problem.observed,
            mean: self.values.mean,
        }
    }

    /// The cells' marginals at this theta: the Laplace gaussian's, and their correction by the
    /// strategy of `settings`, the settings this evaluation was made with.
    pub fn marginals(
        &self,
        problem: &HyperProblem,
        settings: &LaplaceSettings,
    ) -> Result<CorrectedMarginals, LaplaceError> {
        self.correction
            .marginals(&self.target(problem), &self.fit, settings)
    }
}

impl<'a> HyperProblem<'a> {
    pub(crate) fn priors(&self) -> &'a HyperPriors {
        &self.model.hyper
    }

    /// How many hyperparameters are inferred (the dimension of theta).
    pub(crate) fn dim(&self) -> usize {
        self.priors().len()
    }

    /// The unconstrained coordinates of the base values (where the mode search starts).
    pub(crate) fn start(&self) -> Vec<f64> {
        self.priors().to_unconstrained(&self.base)
    }

    /// log p~ at `theta`, Newton started from `warm` (whitened coordinates of a nearby theta's
    /// mode) when given and from the default start when not, or when the warm start fails.
    pub(crate) fn evaluate(
        &self,
        theta: &[f64],
        warm: Option<&[f64]>,
        basis: Option<&Basis>,
        settings: &LaplaceSettings,
    ) -> Result<Evaluation, EvaluationError> {
        let log_prior = self.priors().log_density_unconstrained(theta);
        if !log_prior.is_finite() {
            return Err(EvaluationError::OutsideSupport);
        }
        let values = self.priors().from_unconstrained(theta, self.base);
        let prior = prior_at(self.model, &values)?;
        let target = Target {
            prior: prior.as_ref(),
            likelihood: self.likelihood,
            observed: self.observed,
            mean: values.mean,
        };
        let fit = fit_from(&target, warm, &settings.newton)?;
        let correction = Correction::new(&target, &fit, settings, basis)?;
        let log_evidence = correction.log_evidence(&target, &fit, settings)?;
        Ok(Evaluation {
            theta: theta.to_vec(),
            values,
            log_prior,
            log_evidence,
            prior,
            fit,
            correction,
        })
    }
}

/// Newton from `warm` when it fits the target, else (or when it fails) from the default start.
fn fit_from(
    target: &Target,
    warm: Option<&[f64]>,
    settings: &crate::model::laplace::NewtonSettings,
) -> Result<LaplaceFit, LaplaceError> {
    if let Some(warm) = warm.filter(|w| w.len() == target.dim())
        && let Ok(fit) = LaplaceFit::from_start(target, warm.to_vec(), settings)
    {
        return Ok(fit);
    }
    LaplaceFit::from_start(target, default_start(target), settings)
}

/// Evaluations of log p~ that count themselves, warm-start Newton from one remembered field
/// mode (the caller's centre: the current iterate, or the mode of theta) and compute the
/// simplified Laplace corrections in the centre's coordinates wherever those still hold
/// ([`LaplaceCovariance::new`](crate::model::laplace::covariance::LaplaceCovariance::new)):
/// finite differences about the centre, a line search from it and the grid about the mode then
/// compare values of one smooth function of theta, which a change of the coordinates kept
/// (each choice exact to its own bound) would step.
pub struct Evaluator<'p, 'a> {
    pub(crate) problem: &'p HyperProblem<'a>,
    pub(crate) settings: &'p LaplaceSettings,
    /// Laplace fits made so far.
    pub(crate) fits: usize,
    warm: Option<Vec<f64>>,
    basis: Option<Basis>,
}

impl<'p, 'a> Evaluator<'p, 'a> {
    pub(crate) fn new(problem: &'p HyperProblem<'a>, settings: &'p LaplaceSettings) -> Self {
        Self {
            problem,
            settings,
            fits: 0,
            warm: None,
            basis: None,
        }
    }

    /// Warm-start the next fits from `evaluation`'s field mode, in its coordinates.
    pub(crate) fn centre_on(&mut self, evaluation: &Evaluation) {
        self.warm = Some(evaluation.fit().mode.clone());
        self.basis = evaluation.correction.basis();
    }

    pub(crate) fn evaluate(&mut self, theta: &[f64]) -> Result<Evaluation, EvaluationError> {
        self.fits += 1;
        self.problem.evaluate(
            theta,
            self.warm.as_deref(),
            self.basis.as_ref(),
            self.settings,
        )
    }

    /// log p~ at `theta`, or the reason it cannot be evaluated, in words.
    pub(crate) fn log_density(&mut self, theta: &[f64]) -> Result<f64, String> {
        self.evaluate(theta)
            .map(|e| e.log_density())
            .map_err(|e| e.to_string())
    }
}
