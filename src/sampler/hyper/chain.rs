//! The chain that infers hyperparameters: a field kind's step, then a hyperparameter update, in
//! every iteration. Its state owns the prior at the current hyperparameters; the driver sees an
//! ordinary chain whose field is u = m + L(theta) xi and reads the hyperparameters through
//! [`ChainState::hyperparameters`].

use super::importance::Marginal;
use super::proposal::Proposal;
use super::settings::{FieldKernel, HyperModel, HyperSettings, HyperUpdate, SurrogateNoise};
use crate::model::hyper::{HyperPriors, Hyperparameters, prior_at};
use crate::model::inla::grid::mode_and_covariance;
use crate::model::inla::{HyperProblem, InlaSettings, InlaStrategy};
use crate::model::prior::Prior;
use crate::model::spec::ModelSpec;
use crate::model::target::{Target, Workspace};
use crate::sampler::protocol::Position;
use crate::sampler::protocol::{ChainRng, ChainState, Sampler, StepInfo, acceptance_probability};
use crate::sampler::shared::Retarget;
use crate::sampler::spec::SamplerSpec;

/// Spread of the chains' starting points around the model's values, on the unconstrained
/// coordinates (log length scale, log variance, mean): chains start apart so that R-hat can see
/// whether they met.
pub(crate) const START_SPREAD: f64 = 0.3;

/// A chain's starting hyperparameters: `start` with each inferred one's unconstrained coordinate
/// moved by [`START_SPREAD`] times a standard normal from the chain's stream (`start` itself if
/// that leaves the prior's support).
pub(crate) fn dispersed_start(
    priors: &HyperPriors,
    start: Hyperparameters,
    rng: &mut ChainRng,
) -> Hyperparameters {
    let mut z = priors.to_unconstrained(&start);
    let mut spread = vec![0.0; z.len()];
    rng.normals(&mut spread);
    for (zk, s) in z.iter_mut().zip(&spread) {
        *zk += START_SPREAD * s;
    }
    if priors.log_density_unconstrained(&z).is_finite() {
        priors.from_unconstrained(&z, start)
    } else {
        start
    }
}

/// A field kind `K` alternating with a hyperparameter update.
pub(crate) struct HyperChain<K> {
    pub(super) field: K,
    pub(super) model: ModelSpec,
    pub(super) start: Hyperparameters,
    pub(super) settings: HyperSettings,
    pub(super) burn_in: u64,
    /// The surrogate data's variance alpha (surrogate-slice).
    pub(super) surrogate: SurrogateNoise,
    /// The covariance the proposal starts from (pseudo-marginal: INLA's, [`inla_start`]).
    pub(super) proposal_covariance: Option<Vec<f64>>,
}

/// Where the pseudo-marginal chains start and how far they first step: the mode of INLA's
/// log p~(theta | y) (its simplified Laplace evidence) and (-H)^-1 there, found once per job.
/// Started at the prior's median instead, a chain whose estimates are noisy may stay where it
/// starts (issue 46: 52.8 m on a real grid whose posterior sits at 29.3 m, ESS 2 in 2 x 10,000
/// iterations). `None` where INLA's mode search fails: the chains then start at the model's
/// values, and a collapsed acceptance says so in the job's warnings.
pub(crate) fn inla_start(
    hyper: &HyperModel,
    target: &Target,
) -> Option<(Hyperparameters, Vec<f64>)> {
    if !hyper.model.hyper.any() {
        return None;
    }
    let problem = HyperProblem {
        model: hyper.model,
        likelihood: target.likelihood,
        observed: target.observed,
        base: hyper.start,
    };
    let settings = InlaSettings::for_strategy(InlaStrategy::SimplifiedLaplace);
    let (theta, covariance) = mode_and_covariance(&problem, &settings).ok()?;
    Some((
        hyper.model.hyper.from_unconstrained(&theta, hyper.start),
        covariance,
    ))
}

impl<K: FieldKernel> HyperChain<K> {
    /// A chain's proposal for the hyperparameters: from INLA's covariance where the update has
    /// one ([`inla_start`]), else from the settings alone.
    fn proposal(&self) -> Proposal {
        let proposal = Proposal::new(self.settings.proposal, self.priors().len());
        match &self.proposal_covariance {
            Some(covariance) => proposal.seeded(covariance),
            None => proposal,
        }
    }

    pub(crate) fn new(field: K, hyper: HyperModel, spec: &SamplerSpec, target: &Target) -> Self {
        let settings = spec.hyper();
        let inla = (settings.update == HyperUpdate::PseudoMarginal)
            .then(|| inla_start(&hyper, target))
            .flatten();
        let (start, proposal_covariance) = match inla {
            Some((start, covariance)) => (start, Some(covariance)),
            None => (hyper.start, None),
        };
        Self {
            field,
            model: hyper.model.clone(),
            start,
            settings,
            burn_in: spec.burn_in(),
            surrogate: SurrogateNoise::for_target(target),
            proposal_covariance,
        }
    }

    pub(super) fn priors(&self) -> &HyperPriors {
        &self.model.hyper
    }

    /// The state at hyperparameters `values` (falling back to the model's own when its prior
    /// cannot be built there) and whitened field `xi`.
    fn state_at(
        &self,
        values: Hyperparameters,
        xi: Vec<f64>,
        target: &Target,
    ) -> HyperState<K::Owned> {
        let (values, prior) = match prior_at(&self.model, &values) {
            Ok(prior) => (values, prior),
            Err(_) => (
                self.start,
                prior_at(&self.model, &self.start)
                    .expect("the job's own prior was built at the model's values"),
            ),
        };
        let z = self.priors().to_unconstrained(&values);
        let log_prior = self.priors().log_density_unconstrained(&z);
        let here = retargeted(target, prior.as_ref(), values.mean);
        let mut field = self.field.init_owned(xi, &here);
        // Every step from now on may change the prior: no draws ahead.
        let position = field.current().clone();
        field.retarget(position, &here);
        let work = here.workspace();
        HyperState {
            field,
            current: self.priors().values(&values),
            values,
            z,
            log_prior,
            prior,
            work,
            proposal: self.proposal(),
            marginal: None,
            iteration: 0,
            kept_updates: 0,
            kept_moves: 0,
        }
    }
}

/// The target `base` (data, where they see the field) under another prior and mean.
pub(super) fn retargeted<'a>(base: &Target<'a>, prior: &'a dyn Prior, mean: f64) -> Target<'a> {
    Target {
        prior,
        likelihood: base.likelihood,
        observed: base.observed,
        mean,
    }
}

/// A chain's state: the field kind's state under the current prior, and the hyperparameters.
pub(crate) struct HyperState<S> {
    pub(super) field: S,
    pub(super) values: Hyperparameters,
    /// The inferred hyperparameters' unconstrained coordinates, and their log prior density.
    pub(super) z: Vec<f64>,
    pub(super) log_prior: f64,
    /// The prior at `values`.
    pub(super) prior: Box<dyn Prior>,
    pub(super) work: Workspace,
    pub(super) proposal: Proposal,
    /// The pseudo-marginal chain's importance estimate and draws (drawn at its first step).
    pub(super) marginal: Option<Marginal>,
    /// Iterations done, burn-in included.
    pub(super) iteration: u64,
    pub(super) kept_updates: u64,
    pub(super) kept_moves: u64,
    /// The inferred values, in order (what the driver records).
    current: Vec<f64>,
}

impl<S: Retarget> HyperState<S> {
    /// Let the proposal learn from this iteration's Metropolis-Hastings update (burn-in only),
    /// whose log ratio was `log_ratio`.
    pub(super) fn adapt_proposal(&mut self, burn_in: u64, log_ratio: f64, rng: &mut ChainRng) {
        self.proposal.adapt(
            self.iteration,
            burn_in,
            &self.z,
            acceptance_probability(log_ratio),
            rng,
        );
    }

    /// Move to hyperparameters `values` (unconstrained `z`, log prior `log_prior`) with prior
    /// `prior`, the field at `position` under them.
    pub(super) fn accept(&mut self, priors: &HyperPriors, update: Accepted, base: &Target) {
        let Accepted {
            z,
            log_prior,
            values,
            prior,
            position,
        } = update;
        self.prior = prior;
        self.values = values;
        self.z = z;
        self.log_prior = log_prior;
        self.current = priors.values(&values);
        let target = retargeted(base, self.prior.as_ref(), values.mean);
        self.field.retarget(position, &target);
    }
}

/// A hyperparameter update's new point.
pub(super) struct Accepted {
    pub(crate) z: Vec<f64>,
    pub(crate) log_prior: f64,
    pub(crate) values: Hyperparameters,
    pub(crate) prior: Box<dyn Prior>,
    /// The field at the new point (whitened coordinates under the new prior).
    pub(crate) position: Position,
}

/// What a hyperparameter update did.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct UpdateInfo {
    pub(crate) moved: bool,
    pub(crate) loglik_evaluations: u32,
    pub(crate) gradient_evaluations: u32,
}

impl<S: Retarget> ChainState for HyperState<S> {
    fn current(&self) -> &Position {
        self.field.current()
    }
    fn step_size(&self) -> Option<f64> {
        self.field.step_size()
    }
    fn set_step_size(&mut self, step: f64) {
        self.field.set_step_size(step);
    }
    fn hyperparameters(&self) -> &[f64] {
        &self.current
    }
    fn hyper_acceptance_rate(&self) -> Option<f64> {
        (self.kept_updates > 0).then(|| self.kept_moves as f64 / self.kept_updates as f64)
    }
}

impl<K: FieldKernel> Sampler for HyperChain<K> {
    type State<'t>
        = HyperState<K::Owned>
    where
        Self: 't;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> Self::State<'t> {
        self.state_at(self.start, xi, target)
    }

    /// The start: [`dispersed_start`] around the model's values (pseudo-marginal: around INLA's
    /// mode, [`inla_start`]).
    fn start<'t>(
        &'t self,
        xi: Vec<f64>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> Self::State<'t> {
        let values = dispersed_start(self.priors(), self.start, rng);
        self.state_at(values, xi, target)
    }

    fn step<'t>(
        &self,
        state: &mut Self::State<'t>,
        base: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        let field_info = {
            let HyperState {
                field,
                prior,
                values,
                ..
            } = state;
            let target = retargeted(base, prior.as_ref(), values.mean);
            self.field.step_owned(field, &target, rng)
        };
        let update = match self.settings.update {
            HyperUpdate::None => UpdateInfo::default(),
            HyperUpdate::WithinGibbs => self.within_gibbs(state, base, rng),
            HyperUpdate::SurrogateSlice => self.surrogate_slice(state, base, rng),
            HyperUpdate::PseudoMarginal => self.pseudo_marginal(state, base, rng),
            HyperUpdate::Joint | HyperUpdate::JointSpectral => {
                unreachable!("the joint updates are chains of their own")
            }
        };
        if state.iteration >= self.burn_in {
            state.kept_updates += 1;
            state.kept_moves += u64::from(update.moved);
        }
        state.iteration += 1;
        StepInfo {
            moved: field_info.moved || update.moved,
            acceptance_probability: field_info.acceptance_probability,
            loglik_evaluations: field_info.loglik_evaluations + update.loglik_evaluations,
            gradient_evaluations: field_info.gradient_evaluations + update.gradient_evaluations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hyper::HyperName;
    use crate::model::hyper::fixtures::{base, base_model};
    use crate::model::inla::{HyperGrid, explore};
    use crate::model::spec::LikelihoodKind;
    use crate::model::{Grid, Likelihood, Observed};
    use crate::sampler::kind::Kind;
    use crate::sampler::kinds::SamplerKind;
    use crate::sampler::mala::Mala;
    use crate::sampler::spec::SamplerSettings;

    /// The pseudo-marginal chains start at the mode of INLA's grid (its point 0) with (-H)^-1
    /// for their proposal; the other updates keep the model's values.
    #[test]
    fn the_pseudo_marginal_chains_start_at_inlas_mode() {
        let grid = Grid::new(6);
        let (spec, prior) = base_model(
            grid,
            &[
                (HyperName::LengthScale, "log-normal(-1.0, 0.4)"),
                (HyperName::Variance, "log-normal(0.0, 0.5)"),
            ],
        );
        let start = base(None);
        let cells: Vec<usize> = (0..grid.cells()).collect();
        let counts: Vec<f64> = (0..cells.len()).map(|a| ((a * 7) % 5) as f64).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Poisson, counts, 1.0, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: start.mean,
        };
        let hyper = HyperModel {
            model: &spec,
            start,
        };
        let chain_of = |update| {
            let settings = SamplerSettings {
                hyper: HyperSettings {
                    update,
                    ..HyperSettings::default()
                },
                ..SamplerSettings::new(SamplerKind::Mala)
            }
            .check()
            .unwrap();
            let field = Mala::configure(&settings.kind_settings());
            HyperChain::new(field, hyper, &settings, &target)
        };
        let problem = HyperProblem {
            model: &spec,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            base: start,
        };
        let settings = InlaSettings::for_strategy(InlaStrategy::SimplifiedLaplace);
        let grid_of_inla: HyperGrid = explore(&problem, &settings, |_, _, _| {}).unwrap();
        let mode = spec
            .hyper
            .from_unconstrained(&grid_of_inla.points[0].theta, start);
        let pseudo = chain_of(HyperUpdate::PseudoMarginal);
        assert_eq!(pseudo.start, mode);
        assert_ne!(
            pseudo.start, start,
            "the mode is not the model's values here"
        );
        let covariance = pseudo.proposal_covariance.expect("INLA's curvature");
        assert!(covariance[0] > 0.0 && covariance[3] > 0.0);
        let gibbs = chain_of(HyperUpdate::WithinGibbs);
        assert_eq!(gibbs.start, start);
        assert_eq!(gibbs.proposal_covariance, None);
    }
}
