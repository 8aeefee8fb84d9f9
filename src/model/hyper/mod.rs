//! Hyperparameters of the latent-field model that a study may infer instead of fixing: the
//! kernel's length scale and variance, the field's constant mean and the gaussian likelihood's
//! noise sd.
//!
//! This module owns what the model says about them: the prior of each inferred one
//! ([`HyperPrior`], parsed from `model.length_scale_prior`, `model.variance_prior`,
//! `model.mean_prior`, `model.noise_sd_prior`), the values at a point of the chain
//! ([`Hyperparameters`]), the map to unconstrained coordinates the updates move in
//! ([`HyperPriors::to_unconstrained`]: log for a positive hyperparameter, logit for a bounded
//! one, identity for the mean) and the log prior density there, Jacobian included. The noise sd
//! is inferred by the joint chains only ([`joint::JointLayout::log_likelihood`]). How the chain updates them is the sampler's business
//! ([`crate::sampler::hyper`]).

pub(crate) mod distribution;
#[cfg(test)]
pub(crate) mod fixtures;
pub(crate) mod joint;
pub(crate) mod priors;
pub(crate) mod spectral_joint;
pub(crate) mod values;

pub(crate) use distribution::{HyperPrior, PRIOR_FORMS, coefficient_prior_sd};
pub(crate) use priors::HyperPriors;
pub use values::{HyperName, Hyperparameters};

use super::prior::{Prior, PriorError, model_prior};
use super::spec::ModelSpec;

/// The hyperparameters a model fixes (the values of `model.length_scale`, `model.variance`, and
/// the resolved mean).
pub fn fixed_values(model: &ModelSpec, mean: f64) -> Hyperparameters {
    Hyperparameters {
        length_scale: model.kernel.length_scale,
        length_scale_y: model.kernel.length_scale_y,
        variance: model.kernel.variance,
        mean,
        noise_sd: model.noise_sd,
    }
}

/// The prior of `model`'s kernel at `values` on `model`'s grid.
pub(crate) fn prior_at(
    model: &ModelSpec,
    values: &Hyperparameters,
) -> Result<Box<dyn Prior>, PriorError> {
    model_prior(model, model.kernel.at(values))
}
