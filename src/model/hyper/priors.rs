//! The priors of the inferred hyperparameters and the unconstrained coordinates the updates
//! move in.

use super::distribution::HyperPrior;
use super::values::{HyperName, Hyperparameters};

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
