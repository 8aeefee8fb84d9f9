//! The parameters of a latent-field point as its job row and canonical key show them: every key
//! in column order with its resolved value (defaults that follow other keys computed from the
//! spec), and which of them equal their default.

use super::binomial_keys::{binomial_param, trials_column};
use super::hyper_keys::PRIOR_KEYS;
use super::keys::*;
use super::resolve::{data_column, default_mean, mean_param, truth_length_scale};
use super::spec::LatentFieldSpec;
use crate::model::DataSource;
use crate::study::keys::{
    Applies, FIXED, SAMPLER_BURN_IN, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND,
};
use crate::study::shape::GridShape;
use crate::study::{Key, ParamValue, Settings};

/// Every parameter of a latent-field point in column order, defaults applied, `Null` where a
/// key does not apply to its data source.
pub(crate) fn params(settings: &Settings, spec: &LatentFieldSpec) -> Vec<(Key, ParamValue)> {
    let (sampler, model) = (&spec.sampler, &spec.model);
    let source = spec.data.source();
    let derived = |key: Key| -> Option<ParamValue> {
        let value = if key == DATA_LENGTH_SCALE {
            ParamValue::Float(truth_length_scale(settings))
        } else if key == DATA_COLUMN {
            ParamValue::text(&data_column(settings, model.likelihood))
        } else if key == DATA_TRIALS {
            trials_column(settings, model.likelihood)
                .map_or(ParamValue::Null, |t| ParamValue::text(&t))
        } else if key == DATA_TRIALS_PER_CELL {
            binomial_param(model.likelihood, settings.value(key))
        } else if key == MODEL_MEAN {
            mean_param(model.mean)
        } else if key == MODEL_GRID
            && source == DataSource::Sites
            && settings.given(MODEL_GRID).is_none()
        {
            // Derived from the sites' window and the length scale (sites_keys.rs).
            let (nx, ny) = (model.grid.nx(), model.grid.ny());
            let shape = if nx == ny {
                GridShape::Square(nx)
            } else {
                GridShape::Rectangle(nx, ny)
            };
            shape.to_param()
        } else if key == MODEL_LENGTH_SCALE {
            ParamValue::Float(model.kernel.length_scale)
        } else if key == MODEL_LENGTH_SCALE_Y {
            ParamValue::Float(model.kernel.along_y().length_scale)
        } else if key == MODEL_OFFSET {
            ParamValue::Float(model.offset)
        } else if key == OUTPUT_QUANTILES {
            ParamValue::text(&spec.output.quantiles.canonical())
        } else if key == SAMPLER_KIND {
            ParamValue::word(sampler.kind().name())
        } else if key == SAMPLER_CHAINS {
            ParamValue::Int(sampler.chains() as i64)
        } else if key == SAMPLER_ITERATIONS {
            ParamValue::Int(sampler.iterations() as i64)
        } else if key == SAMPLER_BURN_IN {
            ParamValue::Int(sampler.schedule().burn_in as i64)
        } else if key == SAMPLER_ADAPT {
            ParamValue::Bool(sampler.adaptation().is_some())
        } else if key == SAMPLER_TARGET_ACCEPTANCE {
            sampler
                .adaptation()
                .map_or(ParamValue::Null, |a| ParamValue::Float(a.target_acceptance))
        } else if let Some(&(_, name)) = PRIOR_KEYS.iter().find(|(k, _)| *k == key) {
            model
                .hyper
                .prior(name)
                .map_or(ParamValue::word(FIXED), |p| {
                    ParamValue::text(&p.canonical())
                })
        } else {
            return None;
        };
        Some(value)
    };
    KEYS.iter()
        .map(|&key| {
            let applies = match key.applies() {
                Applies::Always => true,
                Applies::Source(only) => only.contains(&source.name()),
            };
            let value = if applies {
                derived(key).unwrap_or_else(|| settings.value(key))
            } else {
                ParamValue::Null
            };
            (key, value)
        })
        .collect()
}

/// Whether `key`'s resolved `value` is the one it takes when not given: derived defaults
/// computed from the point's spec. Keys declared `Keyed::UnlessDefault` leave the canonical
/// job key when it is.
pub(crate) fn is_default(spec: &LatentFieldSpec, key: Key, value: &ParamValue) -> bool {
    if let Some(default) = key.default_value() {
        return *value == default;
    }
    if key == MODEL_LENGTH_SCALE_Y {
        return *value == ParamValue::Float(spec.model.kernel.length_scale);
    }
    if key == MODEL_MEAN {
        let default = default_mean(spec.data.source(), spec.model.likelihood);
        return *value == mean_param(default);
    }
    if key == SAMPLER_ADAPT || key == SAMPLER_TARGET_ACCEPTANCE {
        let Some(tuning) = spec.sampler.kind().tuning() else {
            return value.is_null() || *value == ParamValue::Bool(false);
        };
        return if key == SAMPLER_ADAPT {
            *value == ParamValue::Bool(tuning.adapts_by_default)
        } else {
            value.is_null() || *value == ParamValue::Float(tuning.target_acceptance)
        };
    }
    false
}
