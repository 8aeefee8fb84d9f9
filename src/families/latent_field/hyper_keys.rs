//! The inferred hyperparameters' keys: each `model.*_prior` with the hyperparameter it infers
//! and the key that sets its value, and the priors a point gives.

use super::keys::*;
use crate::model::MeanSpec;
use crate::model::hyper::{HyperName, HyperPrior, HyperPriors};
use crate::study::keys::FIXED;
use crate::study::{Key, Settings};

/// The `model.*_prior` keys, with the hyperparameter each infers.
pub(crate) const PRIOR_KEYS: [(Key, HyperName); 5] = [
    (MODEL_LENGTH_SCALE_PRIOR, HyperName::LengthScale),
    (MODEL_LENGTH_SCALE_Y_PRIOR, HyperName::LengthScaleY),
    (MODEL_VARIANCE_PRIOR, HyperName::Variance),
    (MODEL_MEAN_PRIOR, HyperName::Mean),
    (MODEL_NOISE_SD_PRIOR, HyperName::NoiseSd),
];

/// The key that sets a hyperparameter's value (fixed, or the start of its chains).
pub(super) fn value_key(name: HyperName) -> Key {
    match name {
        HyperName::LengthScale => MODEL_LENGTH_SCALE,
        HyperName::LengthScaleY => MODEL_LENGTH_SCALE_Y,
        HyperName::Variance => MODEL_VARIANCE,
        HyperName::Mean => MODEL_MEAN,
        HyperName::NoiseSd => DATA_NOISE_SD,
    }
}

/// The hyperparameters whose value the study set: its key given, or `model.mean = "auto"` (the
/// intercept read from the data). An inferred one starts its chains there, the others at their
/// prior's median.
pub(super) fn hyper_values_set(settings: &Settings, mean: MeanSpec) -> Vec<HyperName> {
    HyperName::ALL
        .iter()
        .copied()
        .filter(|&name| {
            settings.given(value_key(name)).is_some()
                || (name == HyperName::Mean && mean == MeanSpec::Auto)
        })
        .collect()
}

/// The priors given (each key's text already admitted by its rule).
pub(super) fn hyper_priors(settings: &Settings) -> HyperPriors {
    HyperPriors::new(
        PRIOR_KEYS
            .iter()
            .filter_map(|&(key, name)| {
                let text = settings.text(key);
                (text != FIXED).then(|| HyperPrior::parse(&text).ok().map(|p| (name, p)))?
            })
            .collect(),
    )
}
