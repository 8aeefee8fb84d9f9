//! What the study families share beyond the contract in [`crate::job`]: the Gibbs methods of the
//! Gibbs-target families, and small resolution helpers (iterations and burn-in, keys of another
//! form of a setting, the parameters with the family's own sampler kind).

use crate::study::{Key, ParamValue, Resolver, Settings, StudyError};

crate::closed_names! {
    /// How the Gibbs-target families sample (`sampler.kind`); each family admits its own.
    pub enum Method {
        /// Gibbs sampling, coordinates (nodes) updated in a fixed order each sweep.
        SystematicGibbs = "systematic-gibbs",
        /// Gibbs sampling, d coordinates drawn uniformly at random per sweep.
        RandomGibbs = "random-gibbs",
        /// Random-walk Metropolis-Hastings on all coordinates at once.
        Rwmh = "rwmh",
    }
}

/// `sampler.iterations` and `sampler.burn_in` of a sweep-based family, checked to keep at least
/// four sweeps (the fewest its autocorrelation and ESS are computed from).
pub(crate) fn iterations_and_burn_in(
    settings: &Settings,
    resolver: &Resolver<'_>,
) -> Result<(u64, u64), StudyError> {
    use crate::study::keys::{SAMPLER_BURN_IN, SAMPLER_ITERATIONS};
    let iterations = settings.int(SAMPLER_ITERATIONS) as u64;
    let burn_in = settings.int(SAMPLER_BURN_IN) as u64;
    if burn_in + 4 > iterations {
        return Err(resolver
            .error_at(
                settings,
                &[SAMPLER_BURN_IN, SAMPLER_ITERATIONS],
                crate::study::error::ErrorKind::Conflict,
                format!(
                    "sampler.burn_in = {burn_in} leaves fewer than 4 of {iterations} iterations to keep"
                ),
            )
            .allowed("burn_in <= iterations - 4"));
    }
    Ok((iterations, burn_in))
}

/// A located conflict for the first of `keys` the point gives: keys of another form of the same
/// setting than the one chosen (a generated matrix when one is given inline, the bars corpus
/// when a corpus file is read). `why` names the clash for a key.
pub(crate) fn reject_given(
    settings: &Settings,
    resolver: &Resolver<'_>,
    keys: &[Key],
    why: impl Fn(Key) -> String,
) -> Result<(), StudyError> {
    match keys.iter().find(|&&key| settings.given(key).is_some()) {
        Some(&key) => Err(resolver.error_at(
            settings,
            &[key],
            crate::study::error::ErrorKind::Conflict,
            why(key),
        )),
        None => Ok(()),
    }
}

/// The family's parameters (see [`crate::job::StudyFamily::params`]) with `sampler.kind` the word
/// the family resolved
/// (its own default when the study gave none, not the latent field's).
pub(crate) fn params_with_kind(
    settings: &Settings,
    keys: &[Key],
    kind: &str,
) -> Vec<(Key, ParamValue)> {
    let mut params: Vec<(Key, ParamValue)> =
        keys.iter().map(|&key| (key, settings.value(key))).collect();
    set_param(
        &mut params,
        crate::study::keys::SAMPLER_KIND,
        ParamValue::text(kind),
    );
    params
}

/// Sets `key`'s value among `params`.
pub(crate) fn set_param(params: &mut [(Key, ParamValue)], key: Key, value: ParamValue) {
    if let Some(param) = params.iter_mut().find(|(k, _)| *k == key) {
        param.1 = value;
    }
}
