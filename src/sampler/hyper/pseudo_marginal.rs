//! `sampler.hyper = "pseudo-marginal"`: Metropolis-Hastings on the unconstrained hyperparameters
//! with an unbiased importance-sampling estimate of the marginal likelihood (Filippone &
//! Girolami 2014, "Pseudo-marginal Bayesian inference for Gaussian processes").
//!
//! At a proposal z', the Laplace approximation of p(xi | data, z') ([`LaplaceGaussian`]: the mode
//! and a low-rank posterior covariance (I + V D V^T)^-1 in whitened coordinates, the
//! [`IMPORTANCE_RANK`] leading eigenpairs) is the
//! importance distribution q; K = `sampler.hyper_importance_draws` draws xi_j ~ q give weights
//! w_j = p(data | xi_j) N(xi_j; 0, I) / q(xi_j) and the estimate p^(z') = mean_j w_j, unbiased
//! whatever q is (a truncated rank or a failed Newton fit only makes it noisier). The proposal is
//! accepted with probability min(1, p^(z') p(z') / (p^(z) p(z)) x correction).
//!
//! The field: on acceptance one importance draw is selected with probability w_j / sum w and
//! becomes the chain's field. This is particle marginal Metropolis-Hastings with importance
//! sampling (Andrieu, Doucet & Holenstein 2010): the extended target
//! p(z) p(data, xi_k | z) prod_{j != k} q(xi_j) / K has p(z, xi_k | data) as its marginal, so
//! the field kind's step, which leaves p(xi | data, z) invariant, may move xi_k between the
//! hyperparameter updates, the estimate being recomputed as (w(xi_k) + sum_{j != k} w_j) / K.
//! The joint chain of (z, xi) then targets the posterior exactly.

use super::chain::{Accepted, HyperChain, HyperState, UpdateInfo, retargeted};
use super::importance::importance;
use super::settings::FieldKernel;
use crate::model::hyper::prior_at;
use crate::model::target::Target;
use crate::sampler::protocol::ChainRng;
use crate::sampler::shared::Retarget;

impl<K: FieldKernel> HyperChain<K> {
    pub(super) fn pseudo_marginal<S: Retarget>(
        &self,
        state: &mut HyperState<S>,
        base: &Target,
        rng: &mut ChainRng,
    ) -> UpdateInfo {
        let draws = self.settings.importance_draws;
        let mut info = UpdateInfo::default();
        if state.marginal.is_none() {
            // The chain's first update: draw the estimate at the starting point and take the
            // selected draw as the field.
            let target = retargeted(base, state.prior.as_ref(), state.values.mean);
            let importance = importance(&target, draws, rng, &mut state.work);
            info.loglik_evaluations += draws as u32;
            let position = importance.selected;
            state.marginal = Some(importance.marginal);
            let target = retargeted(base, state.prior.as_ref(), state.values.mean);
            state.field.retarget(position, &target);
        }
        let marginal = state.marginal.as_mut().expect("drawn above");
        marginal.refresh(state.field.current(), draws);
        let current_estimate = marginal.log_estimate;

        let (candidate, correction) = state.proposal.propose(&state.z, rng);
        let log_prior = self.priors().log_density_unconstrained(&candidate);
        let values = self.priors().from_unconstrained(&candidate, state.values);
        let prior = log_prior
            .is_finite()
            .then(|| prior_at(&self.model, &values).ok())
            .flatten();
        let proposed = prior.map(|prior| {
            let target = retargeted(base, prior.as_ref(), values.mean);
            let importance = importance(&target, draws, rng, &mut state.work);
            (prior, importance)
        });
        let log_ratio = match &proposed {
            Some((_, importance)) => {
                info.loglik_evaluations += draws as u32;
                importance.marginal.log_estimate - current_estimate + log_prior - state.log_prior
                    + correction
            }
            None => f64::NEG_INFINITY,
        };
        let moved = rng.accept(log_ratio);
        if moved && let Some((prior, importance)) = proposed {
            state.marginal = Some(importance.marginal);
            let accepted = Accepted {
                z: candidate,
                log_prior,
                values,
                prior,
                position: importance.selected,
            };
            state.accept(self.priors(), accepted, base);
        }
        info.moved = moved;
        state.adapt_proposal(self.burn_in, log_ratio, rng);
        info
    }
}
