//! `sampler.hyper = "within-gibbs"`: Metropolis-Hastings on the unconstrained hyperparameters z
//! holding the whitened field xi fixed. In the non-centred parametrisation the posterior of
//! (z, xi) is p(z) N(xi; 0, I) p(data | u = m(z) + L(z) xi), so a proposal z' is accepted with
//! probability min(1, exp(log p(z') - log p(z) + loglik(u') - loglik(u) + correction)), the
//! correction being the proposal's asymmetry (kernel-adaptive only). A proposal where the prior
//! cannot be built (a length scale so long the axis kernels are singular even with jitter) has
//! zero density and is rejected.

use super::chain::{Accepted, HyperChain, HyperState, UpdateInfo, retargeted};
use super::settings::FieldKernel;
use crate::model::hyper::prior_at;
use crate::model::target::Target;
use crate::sampler::protocol::ChainRng;
use crate::sampler::protocol::Position;
use crate::sampler::shared::Retarget;

impl<K: FieldKernel> HyperChain<K> {
    pub(super) fn within_gibbs<S: Retarget>(
        &self,
        state: &mut HyperState<S>,
        base: &Target,
        rng: &mut ChainRng,
    ) -> UpdateInfo {
        let (candidate, correction) = state.proposal.propose(&state.z, rng);
        let proposed = self.evaluate(state, base, &candidate);
        let evaluated = proposed.is_some();
        let log_ratio = match &proposed {
            Some(p) => {
                p.position.log_likelihood - state.field.log_likelihood() + p.log_prior
                    - state.log_prior
                    + correction
            }
            None => f64::NEG_INFINITY,
        };
        let moved = rng.accept(log_ratio);
        if moved && let Some(accepted) = proposed {
            state.accept(self.priors(), accepted, base);
        }
        state.adapt_proposal(self.burn_in, log_ratio, rng);
        UpdateInfo {
            moved,
            loglik_evaluations: u32::from(evaluated),
            gradient_evaluations: 0,
        }
    }

    /// The point `z` with the chain's field xi under it, or `None` where its prior density is
    /// zero or its prior cannot be built.
    fn evaluate<S: Retarget>(
        &self,
        state: &mut HyperState<S>,
        base: &Target,
        z: &[f64],
    ) -> Option<Accepted> {
        let log_prior = self.priors().log_density_unconstrained(z);
        if !log_prior.is_finite() {
            return None;
        }
        let values = self.priors().from_unconstrained(z, state.values);
        let prior = prior_at(&self.model, &values).ok()?;
        let target = retargeted(base, prior.as_ref(), values.mean);
        let position = Position::new(state.field.position().to_vec(), &target, &mut state.work);
        Some(Accepted {
            z: z.to_vec(),
            log_prior,
            values,
            prior,
            position,
        })
    }
}
