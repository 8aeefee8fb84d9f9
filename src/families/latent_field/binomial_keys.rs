//! What a study says about the binomial likelihood beyond its word: where each cell's trials come
//! from, and the rules between them, the likelihood, the data source and the offset.
//!
//! Trials are data, given two ways because the two sources have them in two shapes:
//! `data.trials` names a column of the grid CSV (csv data, text, default `"trials"`), and
//! `data.trials_per_cell` is the one number of trials of every observed cell of simulated data
//! (an integer, default 10, a numeric axis when swept). One key for both would hold a column
//! name for one source and a number for the other, in one job-table column. Each is null for
//! the other likelihoods, so it stays out of their canonical keys and streams, and giving it
//! there is refused. A point pattern has no trials: points data with the binomial likelihood
//! are refused, as is `model.offset = "log-area"` (a success probability has no area).

use super::keys::{DATA_SOURCE, DATA_TRIALS, DATA_TRIALS_PER_CELL, MODEL_LIKELIHOOD, MODEL_OFFSET};
use crate::model::{DataSource, LikelihoodKind};
use crate::study::error::ErrorKind;
use crate::study::{ParamValue, Resolver, Settings, StudyError};

/// The trials column a binomial grid CSV is read with when `data.trials` is not given.
pub(crate) const DEFAULT_TRIALS_COLUMN: &str = "trials";

/// The rules of a point's binomial keys: `data.trials` and `data.trials_per_cell` only with the
/// binomial likelihood, no binomial point pattern, no binomial "log-area" offset.
pub(super) fn check_binomial_keys(
    resolver: &Resolver<'_>,
    settings: &Settings,
    likelihood: LikelihoodKind,
    source: DataSource,
) -> Result<(), StudyError> {
    let binomial = likelihood == LikelihoodKind::Binomial;
    if !binomial {
        for key in [DATA_TRIALS, DATA_TRIALS_PER_CELL] {
            if settings.given(key).is_some() {
                return Err(resolver
                    .error_at(
                        settings,
                        &[key, MODEL_LIKELIHOOD],
                        ErrorKind::Conflict,
                        format!(
                            "`{}` gives the trials of binomial data, but the likelihood is \
                             \"{likelihood}\"",
                            key.dotted()
                        ),
                    )
                    .help("remove it, or set likelihood = \"binomial\" under [model]"));
            }
        }
        return Ok(());
    }
    if source == DataSource::Points {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_LIKELIHOOD, DATA_SOURCE],
                ErrorKind::Conflict,
                "points are not binomial: data.source = \"points\" counts events per cell, and \
                 a count of events is not a number of successes out of a number of trials",
            )
            .help(
                "give each cell's successes and trials in a grid CSV (source = \"csv\" with \
                 data.column and data.trials), or model the events with likelihood = \"poisson\"",
            ));
    }
    if let Some(ParamValue::Text(_)) = settings.given(MODEL_OFFSET).map(|s| &s.value) {
        return Err(resolver
            .error_at(
                settings,
                &[MODEL_OFFSET, MODEL_LIKELIHOOD],
                ErrorKind::Conflict,
                "model.offset = \"log-area\" scales a poisson rate by the cell's area, but a \
                 binomial success probability has no area",
            )
            .help("give the offset on the log-odds scale as a number, or remove it (0)"));
    }
    Ok(())
}

/// The grid CSV's trials column of a binomial point (`data.trials`, by default
/// [`DEFAULT_TRIALS_COLUMN`]); None for the other likelihoods.
pub(super) fn trials_column(settings: &Settings, likelihood: LikelihoodKind) -> Option<String> {
    (likelihood == LikelihoodKind::Binomial).then(|| match settings.given(DATA_TRIALS) {
        Some(_) => settings.text(DATA_TRIALS),
        None => DEFAULT_TRIALS_COLUMN.to_string(),
    })
}

/// The trials of every observed cell of a simulated binomial point (`data.trials_per_cell`); 1
/// (unused) for the other likelihoods.
pub(super) fn trials_per_cell(settings: &Settings, likelihood: LikelihoodKind) -> u64 {
    match likelihood {
        LikelihoodKind::Binomial => settings.int(DATA_TRIALS_PER_CELL) as u64,
        _ => 1,
    }
}

/// The job row's value of a binomial key: null for the other likelihoods (it does not apply),
/// else `value`.
pub(super) fn binomial_param(likelihood: LikelihoodKind, value: ParamValue) -> ParamValue {
    match likelihood {
        LikelihoodKind::Binomial => value,
        _ => ParamValue::Null,
    }
}
