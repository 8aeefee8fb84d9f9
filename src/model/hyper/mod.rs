//! Hyperparameters of the latent-field model that a study may infer instead of fixing: the
//! kernel's length scale and variance and the field's constant mean.
//!
//! This module owns what the model says about them: the prior of each inferred one
//! ([`HyperPrior`], parsed from `model.length_scale_prior`, `model.variance_prior`,
//! `model.mean_prior`), the values at a point of the chain ([`Hyperparameters`]), the map to
//! unconstrained coordinates the updates move in ([`HyperPriors::to_unconstrained`]: log for a
//! positive hyperparameter, logit for a bounded one, identity for the mean) and the log prior
//! density there, Jacobian included. How the chain updates them is the sampler's business
//! ([`crate::sampler::hyper`]).

pub mod distribution;

pub use distribution::{HyperPrior, PRIOR_FORMS, PriorFamily, PriorSyntaxError, Support};

use super::prior::{Prior, PriorError, prior_for};
use super::spec::{KernelSpec, ModelSpec};

crate::closed_names! {
    /// The hyperparameters a study can infer, in the order of every table.
    pub enum HyperName {
        /// The kernel's length scale l (along x when the kernel has one per axis).
        LengthScale = "length_scale",
        /// The length scale along y of an anisotropic (ARD) kernel.
        LengthScaleY = "length_scale_y",
        /// The kernel's (marginal) variance.
        Variance = "variance",
        /// The field's constant mean (the intercept).
        Mean = "mean",
    }
}

/// The values of the hyperparameters at one point of a chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hyperparameters {
    pub length_scale: f64,
    /// Along y, when it differs from `length_scale` (`None`: isotropic, y follows x).
    pub length_scale_y: Option<f64>,
    pub variance: f64,
    pub mean: f64,
}

impl Hyperparameters {
    pub fn get(&self, name: HyperName) -> f64 {
        match name {
            HyperName::LengthScale => self.length_scale,
            HyperName::LengthScaleY => self.length_scale_y.unwrap_or(self.length_scale),
            HyperName::Variance => self.variance,
            HyperName::Mean => self.mean,
        }
    }

    pub fn set(&mut self, name: HyperName, value: f64) {
        match name {
            HyperName::LengthScale => self.length_scale = value,
            HyperName::LengthScaleY => self.length_scale_y = Some(value),
            HyperName::Variance => self.variance = value,
            HyperName::Mean => self.mean = value,
        }
    }

    /// The kernel `base` with these length scale and variance.
    pub fn kernel(&self, base: KernelSpec) -> KernelSpec {
        KernelSpec {
            length_scale: self.length_scale,
            length_scale_y: self.length_scale_y,
            variance: self.variance,
            ..base
        }
    }
}

/// The priors of the inferred hyperparameters, in [`HyperName`] order; a hyperparameter without
/// one is fixed at the model's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HyperPriors {
    priors: Vec<(HyperName, HyperPrior)>,
}

impl HyperPriors {
    /// The priors given, one per name at most (kept in [`HyperName`] order).
    pub fn new(mut priors: Vec<(HyperName, HyperPrior)>) -> Self {
        priors.sort_by_key(|(name, _)| *name);
        priors.dedup_by_key(|(name, _)| *name);
        Self { priors }
    }

    /// Whether any hyperparameter is inferred.
    pub fn any(&self) -> bool {
        !self.priors.is_empty()
    }

    /// How many are inferred.
    pub fn len(&self) -> usize {
        self.priors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.priors.is_empty()
    }

    /// The inferred names, in order.
    pub fn names(&self) -> impl Iterator<Item = HyperName> + '_ {
        self.priors.iter().map(|(name, _)| *name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(HyperName, HyperPrior)> {
        self.priors.iter()
    }

    pub fn prior(&self, name: HyperName) -> Option<&HyperPrior> {
        self.priors.iter().find(|(n, _)| *n == name).map(|(_, p)| p)
    }

    /// The unconstrained coordinates of the inferred hyperparameters of `values`.
    pub fn to_unconstrained(&self, values: &Hyperparameters) -> Vec<f64> {
        self.priors
            .iter()
            .map(|(name, prior)| prior.to_unconstrained(values.get(*name)))
            .collect()
    }

    /// `base` with the inferred hyperparameters set from unconstrained coordinates `z`.
    pub fn from_unconstrained(&self, z: &[f64], base: Hyperparameters) -> Hyperparameters {
        let mut values = base;
        for ((name, prior), &zk) in self.priors.iter().zip(z) {
            values.set(*name, prior.from_unconstrained(zk));
        }
        values
    }

    /// The log prior density of unconstrained coordinates `z` (Jacobians included).
    pub fn log_density_unconstrained(&self, z: &[f64]) -> f64 {
        self.priors
            .iter()
            .zip(z)
            .map(|((_, prior), &zk)| prior.log_density_unconstrained(zk))
            .sum()
    }

    /// The inferred values of `values`, in order.
    pub fn values(&self, values: &Hyperparameters) -> Vec<f64> {
        self.names().map(|name| values.get(name)).collect()
    }
}

/// The hyperparameters a model fixes (the values of `model.length_scale`, `model.variance`, and
/// the resolved mean).
pub fn fixed_values(model: &ModelSpec, mean: f64) -> Hyperparameters {
    Hyperparameters {
        length_scale: model.kernel.length_scale,
        length_scale_y: model.kernel.length_scale_y,
        variance: model.kernel.variance,
        mean,
    }
}

/// The prior of `model`'s kernel at `values` on `model`'s grid.
pub fn prior_at(model: &ModelSpec, values: &Hyperparameters) -> Result<Box<dyn Prior>, PriorError> {
    prior_for(model.grid, values.kernel(model.kernel))
}
