//! How the values of a data file's column are read, one rule per kind of value ([`Reading`]),
//! for every reader of observations (grid CSVs, sites): Poisson counts and binomial successes are
//! whole numbers >= 0 (at most 2^53, exact in a double), binomial trials whole numbers at least
//! the successes, probit labels 0/1 or -1/+1 (one convention per file, 0 read as -1), gaussian
//! values, covariates and log offsets finite numbers, exposures finite numbers >= 0. Every error
//! names the file, the line and the column, and says what the value must be.

use crate::model::LikelihoodKind;
use crate::study::csv::{Column, CsvError, Row};

/// What the values of a column are, and so how they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// The observations of a likelihood: empty or `NA` is an unobserved cell.
    Observation(LikelihoodKind),
    /// A covariate: a finite number.
    Covariate,
    /// The exposure of a cell's count (`data.exposure`): a finite number >= 0.
    Exposure,
    /// The log of a cell's exposure (`data.offset`): a finite number.
    LogOffset,
    /// The binomial trials of the row's successes (`data.trials`): a whole number >= 0, at least
    /// the successes; empty or `NA` only where the successes are.
    Trials,
}

/// The value of `column` in `row` read as `reading` says; None for an observation left empty or
/// `NA`.
pub(crate) fn read_value(
    row: &Row<'_>,
    column: Column,
    reading: Reading,
    labels: &mut LabelConvention,
) -> Result<Option<f64>, CsvError> {
    let likelihood = match reading {
        Reading::Observation(_) | Reading::Trials if row.is_missing(column) => return Ok(None),
        Reading::Trials => {
            let trials = row.number(column)?;
            if !trials.is_finite() || trials < 0.0 || trials.fract() != 0.0 || trials > MAX_COUNT {
                let what = "a number of trials (binomial trials must be whole numbers >= 0)";
                return Err(row.not(column, what));
            }
            return Ok(Some(trials));
        }
        Reading::Observation(likelihood) => likelihood,
        Reading::Covariate => LikelihoodKind::Gaussian,
        Reading::Exposure | Reading::LogOffset if row.is_missing(column) => {
            let message = format!(
                "{} is empty: give every cell the file has a row for its {} (a cell with no \
                 observation is predicted from it)",
                row.name(column),
                if reading == Reading::Exposure {
                    "exposure (0 takes the cell out of the likelihood)"
                } else {
                    "log exposure"
                }
            );
            return Err(row.error(column, message));
        }
        Reading::Exposure => {
            let number = row.number(column)?;
            if !(number.is_finite() && number >= 0.0) {
                return Err(row.not(column, "an exposure (a finite number >= 0)"));
            }
            return Ok(Some(number));
        }
        Reading::LogOffset => {
            return match row.text(column).parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(row.not(column, "a log exposure (a finite number)")),
            };
        }
    };
    let number = row.number(column)?;
    let value = match likelihood {
        LikelihoodKind::Poisson | LikelihoodKind::Binomial => {
            check_count(row, column, number, likelihood)?
        }
        LikelihoodKind::Probit => labels.read(row, column, number)?,
        LikelihoodKind::Gaussian if number.is_finite() => number,
        LikelihoodKind::Gaussian => return Err(row.not(column, "a finite number")),
    };
    Ok(Some(value))
}

/// Counts beyond 2^53 are not exact in a double.
const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

fn check_count(
    row: &Row<'_>,
    column: Column,
    number: f64,
    likelihood: LikelihoodKind,
) -> Result<f64, CsvError> {
    if !number.is_finite() || number < 0.0 || number.fract() != 0.0 || number > MAX_COUNT {
        let what = match likelihood {
            LikelihoodKind::Binomial => "a count (binomial successes must be whole numbers >= 0)",
            _ => "a count (Poisson data must be whole numbers >= 0)",
        };
        return Err(row.not(column, what));
    }
    Ok(number)
}

/// A row's binomial successes against its trials (`columns`: theirs): the trials given where the
/// successes are, and at least as many.
pub(crate) fn check_trials(
    row: &Row<'_>,
    (successes_column, trials_column): (Column, Column),
    successes: Option<f64>,
    trials: Option<f64>,
) -> Result<(), CsvError> {
    let message = match (successes, trials) {
        (Some(_), None) => format!(
            "{} is empty but {} = `{}` successes are given: give their number of trials",
            row.name(trials_column),
            row.name(successes_column),
            row.text(successes_column)
        ),
        (Some(k), Some(n)) if k > n => format!(
            "{} = `{}` successes of {} = `{}` trials: the successes cannot outnumber the trials",
            row.name(successes_column),
            row.text(successes_column),
            row.name(trials_column),
            row.text(trials_column)
        ),
        _ => return Ok(()),
    };
    Err(row.error(trials_column, message))
}

/// Which label convention a file uses: {0, 1} or {-1, +1}; mixing them is an error.
#[derive(Default)]
pub(crate) struct LabelConvention {
    zero_one: bool,
    signed: bool,
}

impl LabelConvention {
    pub(crate) fn read(
        &mut self,
        row: &Row<'_>,
        column: Column,
        number: f64,
    ) -> Result<f64, CsvError> {
        if number == 0.0 {
            self.zero_one = true;
        } else if number == -1.0 {
            self.signed = true;
        } else if number != 1.0 {
            return Err(row.not(column, "a label (probit data must be 0/1 or -1/+1)"));
        }
        if self.zero_one && self.signed {
            let message = format!(
                "{} = `{}` mixes label conventions: the file uses both 0 and -1",
                row.name(column),
                row.text(column)
            );
            return Err(row.error(column, message));
        }
        Ok(if number == 1.0 { 1.0 } else { -1.0 })
    }
}
