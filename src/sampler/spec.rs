//! The sampler settings of one job, checked.
//!
//! [`SamplerSettings`] is what a study (or a library user) writes; [`SamplerSettings::check`] is
//! the only way to a [`SamplerSpec`], so a spec that exists satisfies every rule: each value in
//! range, and the rules between values (burn-in below iterations, the step size in the kind's
//! range, adaptation only with a burn-in to adapt in). Errors name the offending key, so the
//! study layer can point at it in the file.

use super::hyper::settings::HyperSettings;
use super::kind::KindSettings;
use super::kinds::KindVisitor;
use super::kinds::SamplerKind;
use super::schedule::{Adaptation, Schedule};
use crate::model::inla::{InlaIntegration, InlaStrategy};

/// More chains than this in one job is almost surely a typo (chains run inside one job).
pub(crate) const MAX_CHAINS: usize = 64;

/// Sampler settings as written, before checking.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerSettings {
    pub kind: SamplerKind,
    /// The (starting) step size: beta for grw, pcn and pcnl; h for mala.
    pub beta: f64,
    /// Iterations per chain, burn-in included.
    pub iterations: u64,
    pub burn_in: u64,
    /// Keep every `thin`-th kept state in the traces.
    pub thin: u64,
    pub chains: usize,
    /// Adapt the step size during burn-in; `None` = the kind's default.
    pub adapt: Option<bool>,
    /// The acceptance rate adaptation aims at; `None` = the kind's default.
    pub target_acceptance: Option<f64>,
    /// gpcn and laplace_hmc: eigenpairs of the misfit Hessian kept; `None` = from the spectrum.
    pub rank: Option<usize>,
    /// How the chains update the hyperparameters the model infers.
    pub hyper: HyperSettings,
    /// inla: how each cell's marginal is approximated at a grid point; `None` = the default
    /// ([`InlaStrategy::default`]). Other kinds refuse it.
    pub inla_strategy: Option<InlaStrategy>,
    /// inla: how the hyperparameters are integrated over; `None` = the default
    /// ([`InlaIntegration::default`]). Other kinds refuse it.
    pub inla_integration: Option<InlaIntegration>,
}

impl SamplerSettings {
    /// The defaults of a study file for `kind`: its budget ([`SamplerKind::budget`]), the step
    /// 0.2 and its default adaptation.
    pub fn new(kind: SamplerKind) -> Self {
        let budget = kind.budget();
        Self {
            kind,
            beta: 0.2,
            iterations: budget.iterations,
            burn_in: budget.burn_in,
            thin: 10,
            chains: budget.chains,
            adapt: None,
            target_acceptance: None,
            rank: None,
            hyper: HyperSettings::default(),
            inla_strategy: None,
            inla_integration: None,
        }
    }
}

/// Which kind of rule a setting breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// A value outside its range.
    Range,
    /// Values that contradict each other.
    Conflict,
}

/// A sampler setting that breaks a rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct SpecError {
    pub(crate) broken: Broken,
    /// The dotted key the error is about ("sampler.beta"), the first of `related` written.
    pub(crate) key: &'static str,
    /// Other keys involved, in the order an error should prefer pointing at them.
    pub(crate) related: &'static [&'static str],
    pub(crate) message: String,
    /// What is allowed, in words.
    pub(crate) allowed: Option<String>,
    pub(crate) help: Option<String>,
}

impl SpecError {
    fn new(key: &'static str, related: &'static [&'static str], message: String) -> Self {
        Self {
            broken: if related.is_empty() {
                Broken::Range
            } else {
                Broken::Conflict
            },
            key,
            related,
            message,
            allowed: None,
            help: None,
        }
    }

    /// A range rule that depends on another key (the step size on the kind).
    fn range(mut self) -> Self {
        self.broken = Broken::Range;
        self
    }

    fn allowed(mut self, allowed: impl Into<String>) -> Self {
        self.allowed = Some(allowed.into());
        self
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// How to run the chains of one job: checked, immutable.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplerSpec {
    kind: SamplerKind,
    step: f64,
    schedule: Schedule,
    chains: usize,
    adaptation: Option<Adaptation>,
    rank: Option<usize>,
    hyper: HyperSettings,
    inla_strategy: InlaStrategy,
    inla_integration: InlaIntegration,
}

impl SamplerSettings {
    /// Check every rule; the only way to a [`SamplerSpec`].
    pub fn check(&self) -> Result<SamplerSpec, SpecError> {
        let kind = self.kind;
        if self.iterations == 0 {
            return Err(SpecError::new(
                "sampler.iterations",
                &[],
                "sampler.iterations must be at least 1".into(),
            )
            .allowed("an integer >= 1"));
        }
        if self.thin == 0 {
            return Err(SpecError::new(
                "sampler.thin",
                &[],
                "sampler.thin must be at least 1".into(),
            )
            .allowed("an integer >= 1"));
        }
        if !(1..=MAX_CHAINS).contains(&self.chains) {
            return Err(SpecError::new(
                "sampler.chains",
                &[],
                format!("sampler.chains = {} is out of range", self.chains),
            )
            .allowed(format!("an integer from 1 to {MAX_CHAINS}")));
        }
        if self.burn_in >= self.iterations {
            return Err(SpecError::new(
                "sampler.burn_in",
                &["sampler.iterations"],
                format!(
                    "sampler.burn_in = {} must be less than sampler.iterations = {}",
                    self.burn_in, self.iterations
                ),
            )
            .allowed(format!("a burn-in from 0 to {}", self.iterations - 1)));
        }
        let tuning = kind.tuning();
        if let Some(tuning) = tuning {
            let beta = self.beta;
            let in_range = beta.is_finite()
                && beta > 0.0
                && tuning.max_step.is_none_or(|max| beta <= max)
                && tuning.min_step.is_none_or(|min| beta >= min);
            if !in_range {
                let low = match tuning.min_step {
                    Some(min) => format!("{min:.6} <="),
                    None => "0 <".to_string(),
                };
                let allowed = match tuning.max_step {
                    Some(max) => format!("for {kind}: {low} beta <= {max}"),
                    None => format!("for {kind}: {low} beta"),
                };
                let error = SpecError::new(
                    "sampler.beta",
                    &["sampler.kind"],
                    format!("sampler.beta = {beta:?} is out of range for the {kind} sampler"),
                )
                .range()
                .allowed(allowed);
                return Err(match tuning.min_step {
                    Some(min) if beta.is_finite() && beta > 0.0 && beta < min => {
                        error.help(format!(
                            "the {kind} sampler's work per iteration grows as its step shrinks; \
                             below {min:.6} an iteration would exceed its cap (see \
                             docs/samplers.md)"
                        ))
                    }
                    _ => error,
                });
            }
        }
        let adapt = match (self.adapt, tuning) {
            (Some(true), None) => {
                return Err(SpecError::new(
                    "sampler.adapt",
                    &["sampler.kind"],
                    format!("the {kind} sampler has no step size to adapt"),
                )
                .help("remove sampler.adapt"));
            }
            (adapt, Some(tuning)) => adapt.unwrap_or(tuning.adapts_by_default),
            (_, None) => false,
        };
        if let Some(target) = self.target_acceptance {
            if tuning.is_none() {
                return Err(SpecError::new(
                    "sampler.target_acceptance",
                    &["sampler.kind"],
                    format!("the {kind} sampler has no acceptance rate to aim at"),
                )
                .help("remove sampler.target_acceptance"));
            }
            if !(target > 0.0 && target < 1.0) {
                return Err(SpecError::new(
                    "sampler.target_acceptance",
                    &[],
                    format!("sampler.target_acceptance = {target:?} is out of range"),
                )
                .allowed("a number strictly between 0 and 1"));
            }
        }
        if adapt && self.burn_in == 0 {
            return Err(SpecError::new(
                "sampler.adapt",
                &["sampler.burn_in", "sampler.kind"],
                format!(
                    "the {kind} sampler adapts its step size during burn-in, but sampler.burn_in = 0"
                ),
            )
            .help(
                "set a burn-in (e.g. burn_in = 1000) so the step can be adapted and then frozen, \
                 or set adapt = false to run with the given beta",
            ));
        }
        if self.rank.is_some() && !kind.has_rank() {
            return Err(SpecError::new(
                "sampler.rank",
                &["sampler.kind"],
                format!("the {kind} sampler has no low-rank approximation to size"),
            )
            .help("remove sampler.rank (it applies to gpcn and laplace_hmc)"));
        }
        let inla_only = [
            self.inla_strategy.map(|s| {
                let what = "says how inla approximates each cell's marginal";
                ("sampler.inla_strategy", s.name(), what)
            }),
            self.inla_integration.map(|i| {
                let what = "says how inla integrates over the hyperparameters";
                ("sampler.inla_integration", i.name(), what)
            }),
        ];
        if let Some((key, value, what)) = inla_only.into_iter().flatten().next()
            && kind != SamplerKind::Inla
        {
            return Err(SpecError::new(
                key,
                &["sampler.kind"],
                format!("{key} = \"{value}\" {what}, but the {kind} kind does not run inla"),
            )
            .help(format!("remove {key}, or use sampler.kind = \"inla\"")));
        }
        if self.rank == Some(0) {
            return Err(SpecError::new(
                "sampler.rank",
                &[],
                "sampler.rank = 0 keeps no eigenpair".into(),
            )
            .allowed("an integer >= 1, or leave it out for the rank from the spectrum"));
        }
        if self.hyper.infers() && !kind.is_markov_chain() {
            let (why, help) = match kind {
                SamplerKind::Inla => (
                    "it integrates over them on its own grid",
                    "remove sampler.hyper: the model.*_prior keys are all inla needs",
                ),
                _ => (
                    "it fixes them",
                    "remove sampler.hyper, or use sampler.kind = \"inla\" to integrate over the \
                     hyperparameters",
                ),
            };
            return Err(SpecError::new(
                "sampler.hyper",
                &["sampler.kind"],
                format!(
                    "sampler.hyper = \"{}\" says how Markov chains update the hyperparameters, \
                     but the {kind} kind has no chain: {why}",
                    self.hyper.update
                ),
            )
            .help(help));
        }
        if self.hyper.is_joint() && !SamplerKind::JOINT_KINDS.contains(&kind) {
            let kinds: Vec<&str> = SamplerKind::JOINT_KINDS.iter().map(|k| k.name()).collect();
            return Err(SpecError::new(
                "sampler.kind",
                &["sampler.hyper"],
                format!(
                    "sampler.hyper = \"{}\" moves the hyperparameters and the field together \
                     along the joint posterior's gradient; the {kind} sampler does not integrate \
                     trajectories",
                    self.hyper.update
                ),
            )
            .allowed(kinds.join(", "))
            .help(format!(
                "use sampler.kind = \"nuts\", or keep {kind} with sampler.hyper = \
                 \"pseudo-marginal\""
            )));
        }
        if self.hyper.infers()
            && !self.hyper.is_joint()
            && !SamplerKind::FIELD_KINDS.contains(&kind)
        {
            let kinds: Vec<&str> = SamplerKind::FIELD_KINDS.iter().map(|k| k.name()).collect();
            return Err(SpecError::new(
                "sampler.kind",
                &["sampler.hyper"],
                format!(
                    "sampler.hyper = \"{}\" alternates with a field kind whose chain can follow \
                     the prior as it changes; the {kind} sampler prepares itself for one prior",
                    self.hyper.update
                ),
            )
            .allowed(kinds.join(", "))
            .help(if SamplerKind::JOINT_KINDS.contains(&kind) {
                format!(
                    "or keep {kind} with sampler.hyper = \"joint\": one chain on the \
                     hyperparameters and the field together"
                )
            } else {
                "or use sampler.hyper = \"joint\" with sampler.kind = \"nuts\"".to_string()
            }));
        }
        if self.hyper.importance_draws == 0 {
            return Err(SpecError::new(
                "sampler.hyper_importance_draws",
                &[],
                "sampler.hyper_importance_draws = 0 gives no estimate".into(),
            )
            .allowed("an integer >= 1"));
        }
        let adaptation = match tuning {
            Some(tuning) if adapt => Some(Adaptation {
                target_acceptance: self.target_acceptance.unwrap_or(tuning.target_acceptance),
                max_step: tuning.max_step,
                min_step: tuning.min_step,
            }),
            _ => None,
        };
        Ok(SamplerSpec {
            kind,
            step: self.beta,
            schedule: Schedule {
                iterations: self.iterations,
                burn_in: self.burn_in,
                thin: self.thin,
            },
            chains: self.chains,
            adaptation,
            rank: self.rank,
            hyper: self.hyper,
            inla_strategy: self.inla_strategy.unwrap_or_default(),
            inla_integration: self.inla_integration.unwrap_or_default(),
        })
    }
}

impl SamplerSpec {
    pub fn kind(&self) -> SamplerKind {
        self.kind
    }

    /// What the kind's sampler is built from.
    pub(crate) fn kind_settings(&self) -> KindSettings {
        KindSettings {
            step: self.step,
            burn_in: self.schedule.burn_in,
            rank: self.rank,
        }
    }

    /// Build the sampler of this spec's kind and hand it to `visitor` (an approximation goes
    /// to [`KindVisitor::approximation`]).
    pub(crate) fn visit<V: KindVisitor>(&self, visitor: V) -> V::Output {
        self.kind.visit(&self.kind_settings(), visitor)
    }

    /// The starting step size (beta, or h for mala).
    pub fn step(&self) -> f64 {
        self.step
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    pub fn iterations(&self) -> u64 {
        self.schedule.iterations
    }

    pub(crate) fn burn_in(&self) -> u64 {
        self.schedule.burn_in
    }

    pub fn thin(&self) -> u64 {
        self.schedule.thin
    }

    pub fn chains(&self) -> usize {
        self.chains
    }

    /// The step-size adaptation during burn-in, if any.
    pub(crate) fn adaptation(&self) -> Option<Adaptation> {
        self.adaptation
    }

    /// The low-rank approximation's rank, if given (gpcn, laplace_hmc).
    pub fn rank(&self) -> Option<usize> {
        self.rank
    }

    /// How the chains update the hyperparameters the model infers.
    pub(crate) fn hyper(&self) -> HyperSettings {
        self.hyper
    }

    /// The same spec with traces keeping every kept state (SBC ranks every draw).
    pub fn with_every_state_traced(&self) -> Self {
        let mut spec = self.clone();
        spec.schedule.thin = 1;
        spec
    }

    /// The settings this spec was checked from.
    pub fn settings(&self) -> SamplerSettings {
        SamplerSettings {
            kind: self.kind,
            beta: self.step,
            iterations: self.schedule.iterations,
            burn_in: self.schedule.burn_in,
            thin: self.schedule.thin,
            chains: self.chains,
            adapt: Some(self.adaptation.is_some()),
            target_acceptance: self.adaptation.map(|a| a.target_acceptance),
            rank: self.rank,
            hyper: self.hyper,
            inla_strategy: (self.kind == SamplerKind::Inla).then_some(self.inla_strategy),
            inla_integration: (self.kind == SamplerKind::Inla).then_some(self.inla_integration),
        }
    }

    /// inla: how each cell's marginal is approximated at a grid point.
    pub(crate) fn inla_strategy(&self) -> InlaStrategy {
        self.inla_strategy
    }

    /// inla: how the hyperparameters are integrated over.
    pub(crate) fn inla_integration(&self) -> InlaIntegration {
        self.inla_integration
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(kind: SamplerKind) -> SamplerSettings {
        SamplerSettings {
            burn_in: 100,
            ..SamplerSettings::new(kind)
        }
    }

    #[test]
    fn adaptation_defaults_follow_the_kind() {
        assert_eq!(
            settings(SamplerKind::Pcn).check().unwrap().adaptation(),
            None
        );
        let mala = settings(SamplerKind::Mala).check().unwrap();
        assert_eq!(mala.adaptation().unwrap().target_acceptance, 0.574);
        assert_eq!(
            settings(SamplerKind::Elliptical)
                .check()
                .unwrap()
                .adaptation(),
            None
        );
    }

    #[test]
    fn rules_between_keys_name_the_key() {
        let mut pcn = settings(SamplerKind::Pcn);
        pcn.beta = 1.5;
        assert_eq!(pcn.check().unwrap_err().key, "sampler.beta");
        let mut mala = settings(SamplerKind::Mala);
        mala.burn_in = 0;
        assert_eq!(mala.check().unwrap_err().key, "sampler.adapt");
        let mut ess = settings(SamplerKind::Elliptical);
        ess.adapt = Some(true);
        assert_eq!(ess.check().unwrap_err().key, "sampler.adapt");
        let mut grw = settings(SamplerKind::Grw);
        grw.burn_in = grw.iterations;
        assert_eq!(grw.check().unwrap_err().key, "sampler.burn_in");
        let mut target = settings(SamplerKind::Mala);
        target.target_acceptance = Some(1.0);
        assert_eq!(target.check().unwrap_err().key, "sampler.target_acceptance");
        // inla's marginals are no other kind's: given to a chain, the key is refused.
        let mut strategy = settings(SamplerKind::Nuts);
        strategy.inla_strategy = Some(InlaStrategy::Gaussian);
        let error = strategy.check().unwrap_err();
        assert_eq!(error.key, "sampler.inla_strategy");
        let mut inla = settings(SamplerKind::Inla);
        inla.inla_strategy = Some(InlaStrategy::Gaussian);
        assert_eq!(
            inla.check().unwrap().inla_strategy(),
            InlaStrategy::Gaussian
        );
        assert_eq!(
            settings(SamplerKind::Inla).check().unwrap().inla_strategy(),
            InlaStrategy::SimplifiedLaplace
        );
        // So is its integration.
        let mut integration = settings(SamplerKind::Laplace);
        integration.inla_integration = Some(InlaIntegration::Ccd);
        let error = integration.check().unwrap_err();
        assert_eq!(error.key, "sampler.inla_integration");
        assert!(error.to_string().contains("\"ccd\""), "{error}");
        let mut inla = settings(SamplerKind::Inla);
        inla.inla_integration = Some(InlaIntegration::EmpiricalBayes);
        assert_eq!(
            inla.check().unwrap().inla_integration(),
            InlaIntegration::EmpiricalBayes
        );
        assert_eq!(
            settings(SamplerKind::Inla)
                .check()
                .unwrap()
                .inla_integration(),
            InlaIntegration::Auto
        );
    }

    /// laplace_hmc takes ceil(angle / beta) leapfrog steps an iteration: a beta that would
    /// exceed its cap on them (1e-9: 1.6e9 steps, an iteration without end) is refused with the
    /// reason, adapting or not; the smallest admitted beta is accepted.
    #[test]
    fn a_laplace_hmc_step_below_the_cap_on_leapfrog_steps_is_refused() {
        use crate::sampler::laplace_hmc::{MAX_LEAPFROG_STEPS, MIN_STEP, TRAJECTORY_ANGLE};
        for adapt in [Some(false), Some(true)] {
            let mut tiny = settings(SamplerKind::LaplaceHmc);
            tiny.beta = 1e-9;
            tiny.adapt = adapt;
            let error = tiny.check().unwrap_err();
            assert_eq!(error.key, "sampler.beta");
            assert_eq!(error.broken, Broken::Range);
            let help = error.help.as_deref().unwrap_or_default();
            assert!(help.contains("cap"), "{help}");
            assert!(
                error
                    .allowed
                    .as_deref()
                    .unwrap_or_default()
                    .contains("0.001875"),
                "{:?}",
                error.allowed
            );
        }
        let mut smallest = settings(SamplerKind::LaplaceHmc);
        smallest.beta = MIN_STEP;
        let spec = smallest.check().unwrap();
        assert_eq!(spec.adaptation().unwrap().min_step, Some(MIN_STEP));
        assert_eq!(
            (TRAJECTORY_ANGLE / MIN_STEP).ceil() as u32,
            MAX_LEAPFROG_STEPS
        );
    }
}
