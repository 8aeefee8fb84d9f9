//! How close two runs' numbers must be: bit for bit, or within a number of Monte Carlo standard
//! errors chosen so that two correct runs differ by chance at most at a stated family-wise rate.

use std::fmt;
use std::str::FromStr;

use crate::diagnostics::standard_normal_quantile;

/// The family-wise false-alarm rate of `mcse` comparisons unless `--false-alarm` says otherwise:
/// the rate the test suite's statistical checks use.
pub(crate) const DEFAULT_FALSE_ALARM: f64 = 1e-4;

/// What counts as "the same".
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tolerance {
    /// Every value bit-identical (nulls equal to nulls), timing columns aside.
    Exact,
    /// A value with a stored Monte Carlo standard error may differ by
    /// `max(floor, z*)` combined MCSEs, where z* is the two-sided Bonferroni bound over every
    /// value judged at the family-wise rate `false_alarm`.
    Mcse { floor: f64, false_alarm: f64 },
}

impl Tolerance {
    /// The bound on |a - b| / sqrt(mcse_a^2 + mcse_b^2) when `judged` values are compared:
    /// `None` for exact comparison.
    pub(crate) fn bound(&self, judged: usize) -> Option<f64> {
        match *self {
            Tolerance::Exact => None,
            Tolerance::Mcse { floor, false_alarm } => {
                Some(floor.max(bonferroni_bound(judged, false_alarm)))
            }
        }
    }

    /// The same tolerance at another family-wise rate (exact stays exact).
    pub(crate) fn with_false_alarm(self, rate: f64) -> Self {
        match self {
            Tolerance::Exact => Tolerance::Exact,
            Tolerance::Mcse { floor, .. } => Tolerance::Mcse {
                floor,
                false_alarm: rate,
            },
        }
    }
}

/// The two-sided z bound that `n` independent standard normals all stay within with
/// probability at least 1 - `rate` (Bonferroni: each at rate / n).
pub(crate) fn bonferroni_bound(n: usize, rate: f64) -> f64 {
    let per_value = rate / n.max(1) as f64;
    -standard_normal_quantile(per_value / 2.0)
}

impl FromStr for Tolerance {
    type Err = String;

    /// `exact`, `mcse` (the Bonferroni bound alone) or `mcse:K` (at least K MCSEs).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let allowed = "allowed: `exact`, `mcse` or `mcse:K` with K > 0 (e.g. `mcse:4`)";
        match text.trim().split_once(':') {
            None if text.trim() == "exact" => Ok(Tolerance::Exact),
            None if text.trim() == "mcse" => Ok(Tolerance::Mcse {
                floor: 0.0,
                false_alarm: DEFAULT_FALSE_ALARM,
            }),
            Some(("mcse", k)) => match k.trim().parse::<f64>() {
                Ok(floor) if floor.is_finite() && floor > 0.0 => Ok(Tolerance::Mcse {
                    floor,
                    false_alarm: DEFAULT_FALSE_ALARM,
                }),
                _ => Err(format!(
                    "tolerance {text:?}: K must be a positive number; {allowed}"
                )),
            },
            _ => Err(format!("tolerance {text:?} is not known; {allowed}")),
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Exact => write!(f, "exact"),
            Tolerance::Mcse { floor, .. } if *floor == 0.0 => write!(f, "mcse"),
            Tolerance::Mcse { floor, .. } => write!(f, "mcse:{floor}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_allows_and_names_what_it_allows_otherwise() {
        assert_eq!("exact".parse::<Tolerance>(), Ok(Tolerance::Exact));
        assert_eq!(
            "mcse:4".parse::<Tolerance>(),
            Ok(Tolerance::Mcse {
                floor: 4.0,
                false_alarm: 1e-4
            })
        );
        assert_eq!("mcse:4".parse::<Tolerance>().unwrap().to_string(), "mcse:4");
        for bad in ["mcse:-1", "mcse:x", "close", "exact:2"] {
            let error = bad.parse::<Tolerance>().unwrap_err();
            assert!(error.contains("allowed: `exact`"), "{error}");
        }
    }

    #[test]
    fn the_bound_grows_with_the_values_judged_and_never_falls_below_the_floor() {
        // One value at 1e-4 two-sided: 3.89; 4,096 values: each at 2.4e-8, so 5.5774 (Python: -NormalDist().inv_cdf(1e-4 / 4096 / 2)).
        assert!((bonferroni_bound(1, 1e-4) - 3.8906).abs() < 1e-3);
        assert!((bonferroni_bound(4096, 1e-4) - 5.5774).abs() < 1e-3);
        let tolerance: Tolerance = "mcse:4".parse().unwrap();
        assert_eq!(tolerance.bound(1), Some(4.0));
        assert!((tolerance.bound(4096).unwrap() - 5.5774).abs() < 1e-3);
        assert_eq!(Tolerance::Exact.bound(10), None);
    }
}
