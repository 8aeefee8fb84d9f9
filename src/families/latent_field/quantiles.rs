//! `output.quantiles`: which posterior quantiles a job reports, and what their columns are called.
//! Every quantile column of the result tables is named here, from its probability written as a
//! percentage without the point ([`Quantile::digits`]): fields.parquet's `intensity_q<percent>`,
//! sites.parquet's `q<percent>` and jobs.parquet's `hyper_<name>_q<percent>`,
//! `coef_<name>_q<percent>` and `coef_<name>_raw_q<percent>` (0.05 -> `q05`, 0.5 -> `q50`,
//! 0.025 -> `q025`, 0.975 -> `q975`). A quantile of draws is numpy's default (linear
//! interpolation between order statistics, R's type 7), [`quantile`].

use thiserror::Error;

/// The probabilities when `output.quantiles` is not given: the 5 % and 95 % quantiles, the
/// columns fieldmc has always written (`q05`, `q95`).
pub(crate) const DEFAULT: [f64; 2] = [0.05, 0.95];

/// The most digits after the point a probability may have: its column name holds them all.
const MAX_DIGITS: usize = 3;

/// One probability of `output.quantiles` and the digits that name its columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantile {
    pub(crate) probability: f64,
    /// The percentage without the point, at least two digits: `05`, `50`, `025`, `975`.
    pub(crate) digits: String,
}

impl Quantile {
    /// The statistic it names in jobs.parquet's `hyper_<name>_<statistic>` and
    /// `coef_<name>_<statistic>` columns, and sites.parquet's column: `q05`.
    pub(crate) fn statistic(&self) -> String {
        format!("q{}", self.digits)
    }
}

/// The quantiles a job reports, in increasing order of probability.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Quantiles(Vec<Quantile>);

/// Why a list of probabilities is not a valid `output.quantiles`.
#[derive(Debug, Clone, PartialEq, Error)]
pub(crate) enum QuantilesError {
    #[error("output.quantiles is empty")]
    Empty,
    #[error("output.quantiles holds {0:?}: a probability lies strictly between 0 and 1")]
    OutOfRange(f64),
    #[error(
        "output.quantiles holds {0:?}: at most {MAX_DIGITS} digits after the point (its columns \
         are named by them: 0.025 -> q025)"
    )]
    TooManyDigits(f64),
    #[error("output.quantiles is not strictly increasing: {0:?} then {1:?}")]
    NotIncreasing(f64, f64),
}

impl Quantiles {
    /// `probabilities` as `output.quantiles`: each strictly between 0 and 1 with at most three
    /// digits after the point, strictly increasing. Distinct such probabilities have distinct
    /// digits (the digits read after "0." give the probability back), so no two columns collide.
    pub(crate) fn new(probabilities: &[f64]) -> Result<Self, QuantilesError> {
        if probabilities.is_empty() {
            return Err(QuantilesError::Empty);
        }
        let mut quantiles = Vec::with_capacity(probabilities.len());
        for (k, &p) in probabilities.iter().enumerate() {
            if !(p > 0.0 && p < 1.0) {
                return Err(QuantilesError::OutOfRange(p));
            }
            if k > 0 && p <= probabilities[k - 1] {
                return Err(QuantilesError::NotIncreasing(probabilities[k - 1], p));
            }
            let digits = digits(p).ok_or(QuantilesError::TooManyDigits(p))?;
            quantiles.push(Quantile {
                probability: p,
                digits,
            });
        }
        Ok(Self(quantiles))
    }

    /// The default quantiles, 5 % and 95 % ([`DEFAULT`]).
    pub(crate) fn default_pair() -> Self {
        Self::new(&DEFAULT).expect("the default probabilities are valid")
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Quantile> {
        self.0.iter()
    }

    /// The probabilities, in order.
    pub(crate) fn probabilities(&self) -> Vec<f64> {
        self.0.iter().map(|q| q.probability).collect()
    }

    /// The list as a study writes it and jobs.parquet's `output_quantiles` shows it:
    /// `[0.05, 0.95]`.
    pub(crate) fn canonical(&self) -> String {
        let numbers: Vec<String> = self
            .0
            .iter()
            .map(|q| format!("{:?}", q.probability))
            .collect();
        format!("[{}]", numbers.join(", "))
    }

    /// Each quantile of `sorted` (ascending draws, at least one), in order ([`quantile`]).
    pub(crate) fn of_sorted(&self, sorted: &[f64]) -> Vec<f64> {
        self.0
            .iter()
            .map(|q| quantile(sorted, q.probability))
            .collect()
    }
}

/// The digits naming probability `p`: thousandths k of p (p must be the double nearest k / 1000)
/// written with three digits, trailing zeros dropped down to two (0.05 -> "05", 0.5 -> "50",
/// 0.025 -> "025", 0.1 -> "10", 0.001 -> "001"). None when p needs more digits or is not in
/// (0, 1).
fn digits(p: f64) -> Option<String> {
    let thousandths = (p * 1000.0).round();
    if !(1.0..=999.0).contains(&thousandths) || thousandths / 1000.0 != p {
        return None;
    }
    let mut digits = format!("{:0width$}", thousandths as u32, width = MAX_DIGITS);
    while digits.len() > 2 && digits.ends_with('0') {
        digits.pop();
    }
    Some(digits)
}

/// The `p` quantile of sorted values, interpolating linearly between order statistics (numpy's
/// default, R's type 7): position p (n - 1), counted from 0.
pub(crate) fn quantile(sorted: &[f64], p: f64) -> f64 {
    let position = p * (sorted.len() - 1) as f64;
    let (low, high) = (position.floor() as usize, position.ceil() as usize);
    let weight = position - low as f64;
    sorted[low] * (1.0 - weight) + sorted[high] * weight
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&sorted, 0.0), 1.0);
        assert_eq!(quantile(&sorted, 0.5), 3.0);
        assert_eq!(quantile(&sorted, 0.95), 4.8);
        assert_eq!(quantile(&sorted, 1.0), 5.0);
    }

    /// numpy 2.4: `np.quantile([3, 1, 4, 1.5, 9, 2.6], [0.025, 0.5, 0.975])` is
    /// [1.0625, 2.8, 8.375]: by hand, positions 0.125, 2.5 and 4.875 of the sorted
    /// [1, 1.5, 2.6, 3, 4, 9], so 1 + 0.125 x 0.5, (2.6 + 3) / 2 and 4 + 0.875 x 5.
    #[test]
    fn a_quantile_is_numpys_default_of_the_draws() {
        let quantiles = Quantiles::new(&[0.025, 0.5, 0.975]).unwrap();
        let mut draws = vec![3.0, 1.0, 4.0, 1.5, 9.0, 2.6];
        draws.sort_by(f64::total_cmp);
        let got = quantiles.of_sorted(&draws);
        for (got, numpy) in got.iter().zip([1.0625, 2.8, 8.375]) {
            assert!((got - numpy).abs() < 1e-12, "{got} against {numpy}");
        }
    }

    #[test]
    fn a_probability_names_its_columns_by_its_percentage_without_the_point() {
        let named = Quantiles::new(&[0.001, 0.025, 0.05, 0.1, 0.5, 0.95, 0.975, 0.999]).unwrap();
        let statistics: Vec<String> = named.iter().map(Quantile::statistic).collect();
        assert_eq!(
            statistics,
            ["q001", "q025", "q05", "q10", "q50", "q95", "q975", "q999"]
        );
        assert_eq!(Quantiles::default_pair().canonical(), "[0.05, 0.95]");
    }

    /// Every probability of at most three digits has its own name, and the name gives the
    /// probability back: a strictly increasing list can never name two columns alike.
    #[test]
    fn every_three_digit_probability_has_its_own_name() {
        let mut names = std::collections::HashSet::new();
        for k in 1..=999u32 {
            let p = f64::from(k) / 1000.0;
            let digits = digits(p).unwrap();
            let back: f64 = format!("0.{digits}").parse().unwrap();
            assert_eq!(back, p, "{digits}");
            assert!(names.insert(digits));
        }
    }

    #[test]
    fn lists_that_cannot_name_their_columns_are_refused() {
        use QuantilesError::*;
        assert_eq!(Quantiles::new(&[]), Err(Empty));
        assert_eq!(Quantiles::new(&[0.0, 0.5]), Err(OutOfRange(0.0)));
        assert_eq!(Quantiles::new(&[0.5, 1.0]), Err(OutOfRange(1.0)));
        assert!(Quantiles::new(&[f64::NAN]).is_err());
        assert_eq!(Quantiles::new(&[0.0125]), Err(TooManyDigits(0.0125)));
        assert_eq!(Quantiles::new(&[0.5, 0.5]), Err(NotIncreasing(0.5, 0.5)));
        assert_eq!(Quantiles::new(&[0.9, 0.1]), Err(NotIncreasing(0.9, 0.1)));
    }
}
