//! The priors of the inferred hyperparameters and the unconstrained coordinates the updates
//! move in.

use super::distribution::HyperPrior;
use super::values::{HyperName, Hyperparameters};

/// The priors of the inferred hyperparameters, in [`HyperName`] order; a hyperparameter without
/// one is fixed at the model's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct HyperPriors {
    priors: Vec<(HyperName, HyperPrior)>,
    /// The inferred hyperparameters whose value the study set: their chains start there. The
    /// others start at their prior's median, where the prior puts its mass.
    set_by_study: Vec<HyperName>,
}

/// How far from its prior's median a chain may start before the job warns, in standard
/// deviations of the prior on the unconstrained scale.
pub(crate) const FAR_START_SDS: f64 = 4.0;

impl HyperPriors {
    /// The priors given, one per name at most (kept in [`HyperName`] order). Every chain starts
    /// at the priors' medians until [`HyperPriors::starting_where_set`] names the values the
    /// study set.
    pub(crate) fn new(mut priors: Vec<(HyperName, HyperPrior)>) -> Self {
        priors.sort_by_key(|(name, _)| *name);
        priors.dedup_by_key(|(name, _)| *name);
        Self {
            priors,
            set_by_study: Vec::new(),
        }
    }

    /// The same priors, with the chains of `names` starting at the model's value (the study set
    /// it) instead of the prior's median.
    pub(crate) fn starting_where_set(mut self, names: impl IntoIterator<Item = HyperName>) -> Self {
        self.set_by_study = names.into_iter().collect();
        self.set_by_study.sort();
        self.set_by_study.dedup();
        self
    }

    /// Where the chains start: `model` (the model's values) with every inferred hyperparameter
    /// the study did not set moved to its prior's median, and so is one the study set outside
    /// its prior's support (`model.mean = "auto"` read from data the prior excludes; a value
    /// given in the study file is refused before this, when the study is checked).
    pub(crate) fn chain_start(&self, model: Hyperparameters) -> Hyperparameters {
        let mut start = model;
        for (name, prior) in &self.priors {
            let outside = !prior.log_density(model.get(*name)).is_finite();
            if !self.set_by_study.contains(name) || outside {
                start.set(*name, prior.median());
            }
        }
        start
    }

    /// The inferred hyperparameters the study set to a value (in `model`) outside their prior's
    /// support, with that value: their chains start at the prior's median instead
    /// ([`HyperPriors::chain_start`]).
    pub(crate) fn set_outside_support(&self, model: &Hyperparameters) -> Vec<(HyperName, f64)> {
        self.priors
            .iter()
            .filter(|(name, prior)| {
                self.set_by_study.contains(name) && !prior.log_density(model.get(*name)).is_finite()
            })
            .map(|(name, _)| (*name, model.get(*name)))
            .collect()
    }

    /// The inferred hyperparameters of `start` more than [`FAR_START_SDS`] prior standard
    /// deviations from their prior's median on the unconstrained scale, with that distance.
    pub(crate) fn far_starts(&self, start: &Hyperparameters) -> Vec<(HyperName, f64)> {
        self.priors
            .iter()
            .filter_map(|(name, prior)| {
                let z = prior.to_unconstrained(start.get(*name));
                let distance =
                    (z - prior.to_unconstrained(prior.median())).abs() / prior.unconstrained_sd();
                distance
                    .partial_cmp(&FAR_START_SDS)
                    .is_none_or(|o| o == std::cmp::Ordering::Greater)
                    .then_some((*name, distance))
            })
            .collect()
    }

    /// Whether any hyperparameter is inferred.
    pub(crate) fn any(&self) -> bool {
        !self.priors.is_empty()
    }

    /// How many are inferred.
    pub(crate) fn len(&self) -> usize {
        self.priors.len()
    }

    /// The inferred names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = HyperName> + '_ {
        self.priors.iter().map(|(name, _)| *name)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &(HyperName, HyperPrior)> {
        self.priors.iter()
    }

    pub(crate) fn prior(&self, name: HyperName) -> Option<&HyperPrior> {
        self.priors.iter().find(|(n, _)| *n == name).map(|(_, p)| p)
    }

    /// The unconstrained coordinates of the inferred hyperparameters of `values`.
    pub(crate) fn to_unconstrained(&self, values: &Hyperparameters) -> Vec<f64> {
        self.priors
            .iter()
            .map(|(name, prior)| prior.to_unconstrained(values.get(*name)))
            .collect()
    }

    /// `base` with the inferred hyperparameters set from unconstrained coordinates `z`.
    #[allow(clippy::wrong_self_convention)] // the priors map their own coordinates
    pub(crate) fn from_unconstrained(&self, z: &[f64], base: Hyperparameters) -> Hyperparameters {
        let mut values = base;
        for ((name, prior), &zk) in self.priors.iter().zip(z) {
            values.set(*name, prior.from_unconstrained(zk));
        }
        values
    }

    /// The log prior density of unconstrained coordinates `z` (Jacobians included).
    pub(crate) fn log_density_unconstrained(&self, z: &[f64]) -> f64 {
        self.priors
            .iter()
            .zip(z)
            .map(|((_, prior), &zk)| prior.log_density_unconstrained(zk))
            .sum()
    }

    /// The inferred values of `values`, in order.
    pub(crate) fn values(&self, values: &Hyperparameters) -> Vec<f64> {
        self.names().map(|name| values.get(name)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn priors() -> HyperPriors {
        HyperPriors::new(vec![
            (
                HyperName::LengthScale,
                HyperPrior::parse("log-normal(-2.3, 1.0)").unwrap(),
            ),
            (
                HyperName::Variance,
                HyperPrior::parse("gamma(2, 1)").unwrap(),
            ),
        ])
    }

    fn model_values() -> Hyperparameters {
        Hyperparameters {
            length_scale: 30.0,
            length_scale_y: None,
            variance: 1.0,
            mean: 0.5,
            noise_sd: 1.0,
        }
    }

    #[test]
    fn chains_start_at_the_median_unless_the_study_set_the_value() {
        let unset = priors().chain_start(model_values());
        assert!((unset.length_scale - (-2.3f64).exp()).abs() < 1e-12);
        assert!((unset.variance - 1.678_346_990_016_660_8).abs() < 1e-9);
        assert_eq!(
            unset.mean, 0.5,
            "a fixed hyperparameter keeps the model's value"
        );
        let set = priors()
            .starting_where_set([HyperName::LengthScale])
            .chain_start(model_values());
        assert_eq!(set.length_scale, 30.0);
        assert!((set.variance - 1.678_346_990_016_660_8).abs() < 1e-9);
    }

    /// log 30 is (log 30 + 2.3) / 1.0 = 5.7 sds above the log-normal's median: far; the median
    /// itself is 0 sds away.
    #[test]
    fn a_start_beyond_four_prior_sds_is_named() {
        let priors = priors().starting_where_set([HyperName::LengthScale]);
        let far = priors.far_starts(&priors.chain_start(model_values()));
        assert_eq!(far.len(), 1);
        assert_eq!(far[0].0, HyperName::LengthScale);
        assert!((far[0].1 - (30f64.ln() + 2.3)).abs() < 1e-12);
        assert!(
            priors
                .far_starts(&priors.chain_start(Hyperparameters {
                    length_scale: 0.1,
                    ..model_values()
                }))
                .is_empty()
        );
    }
}
