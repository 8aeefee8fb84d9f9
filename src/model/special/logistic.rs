//! The logistic function and the binomial likelihood's terms under the logit link, stable for
//! every finite argument on both sides.
//!
//! With x the log-odds and e = exp(-|x|) (in (0, 1], never overflowing), the success and failure
//! probabilities are p = logistic(x) and q = 1 - p = logistic(-x): for x >= 0, p = 1 / (1 + e)
//! and q = e / (1 + e); for x < 0 the other way round. Each comes from e without a subtraction,
//! so the small one keeps its relative accuracy far out (q = 1e-304 at x = 700), where 1 - p
//! would be 0. The log terms are ln p = -(max(-x, 0) + ln(1 + e)) and
//! ln q = -(max(x, 0) + ln(1 + e)), with ln(1 + e) by `ln_1p`: so k ln p + (n - k) ln q is a
//! sum of terms of one sign, -(n ln(1 + e) + (n - k) x) for x >= 0 and -(n ln(1 + e) - k x) for
//! x < 0, with nothing cancelling.
//!
//! E logistic(m + s Z), Z ~ N(0, 1), has no closed form; [`logistic_normal_mean`] takes it by the
//! trapezoid rule in z, which for an integrand analytic in a strip |Im z| < d converges like
//! exp(-2 pi d / h) in the step h (Trefethen & Weideman 2014). The poles of logistic(m + s z)
//! nearest the real axis are at Im z = pi / s, so a step h = 1 / (2 max(1, s)) gives an error
//! about exp(-4 pi^2) = 7e-18 (the gaussian factor alone, exp(-2 pi^2 / h^2), is smaller still),
//! over |z| <= 12 (the gaussian mass beyond is 4e-33): 49 nodes up to s = 1, 49 s beyond.

/// e = exp(-|x|), the one exponential every term is built from.
#[inline(always)]
fn tail(x: f64) -> f64 {
    (-x.abs()).exp()
}

/// (p, q) = (logistic(x), 1 - logistic(x)) from e = exp(-|x|).
#[inline(always)]
fn probabilities(x: f64, e: f64) -> (f64, f64) {
    let (big, small) = (1.0 / (1.0 + e), e / (1.0 + e));
    if x >= 0.0 { (big, small) } else { (small, big) }
}

/// k ln p + (n - k) ln(1 - p) at log-odds x, from e = exp(-|x|) (see the module docs).
#[inline(always)]
fn log_density(successes: f64, trials: f64, x: f64, e: f64) -> f64 {
    let failures = trials - successes;
    let linear = if x >= 0.0 {
        failures * x
    } else {
        -successes * x
    };
    -(trials * e.ln_1p() + linear)
}

/// logistic(x) = 1 / (1 + exp(-x)), accurate to rounding relative to itself for every x.
pub(crate) fn logistic(x: f64) -> f64 {
    probabilities(x, tail(x)).0
}

/// The half-width of the trapezoid rule's range in z for [`logistic_normal_mean`].
const NORMAL_RANGE: f64 = 12.0;

/// E logistic(mean + sd Z) for Z ~ N(0, 1), by the trapezoid rule (module docs): to about 1e-16
/// absolute for any sd >= 0.
pub(crate) fn logistic_normal_mean(mean: f64, sd: f64) -> f64 {
    if sd == 0.0 {
        return logistic(mean);
    }
    let step = 0.5 / sd.max(1.0);
    let half = (NORMAL_RANGE / step).ceil() as i64;
    let density = step / (2.0 * std::f64::consts::PI).sqrt();
    (-half..=half)
        .map(|j| {
            let z = j as f64 * step;
            density * (-0.5 * z * z).exp() * logistic(mean + sd * z)
        })
        .sum()
}

/// ln Binomial(k; n, logistic(x)) up to the binomial coefficient: k ln p + (n - k) ln(1 - p),
/// k = `successes`, n = `trials`.
pub(crate) fn binomial_logit_log_density(successes: f64, trials: f64, x: f64) -> f64 {
    log_density(successes, trials, x, tail(x))
}

/// [`binomial_logit_log_density`] (the same bits) and its derivative in x,
/// k (1 - p) - (n - k) p, from one exponential and one `ln_1p`.
#[inline(always)]
pub(crate) fn binomial_logit_with_slope(successes: f64, trials: f64, x: f64) -> (f64, f64) {
    let e = tail(x);
    let (p, q) = probabilities(x, e);
    let slope = successes * q - (trials - successes) * p;
    (log_density(successes, trials, x, e), slope)
}

/// The negative second derivative in x of [`binomial_logit_log_density`]:
/// n p (1 - p) = n e / (1 + e)^2, e = exp(-|x|) (independent of k; > 0 for n > 0 and finite x
/// within the exponential's range).
pub(crate) fn binomial_logit_curvature(trials: f64, x: f64) -> f64 {
    let e = tail(x);
    trials * e / ((1.0 + e) * (1.0 + e))
}

/// The third derivative in x of [`binomial_logit_log_density`]: -n p (1 - p) (1 - 2 p), from
/// e = exp(-|x|) (p (1 - p) = e / (1 + e)^2, 1 - 2 p = -sign(x) (1 - e) / (1 + e)); the simplified
/// Laplace approximation's skewness term.
pub(crate) fn binomial_logit_third_derivative(trials: f64, x: f64) -> f64 {
    let e = tail(x);
    let spread = e / ((1.0 + e) * (1.0 + e));
    let tilt = (1.0 - e) / (1.0 + e);
    if x >= 0.0 {
        trials * spread * tilt
    } else {
        -trials * spread * tilt
    }
}

/// The fourth derivative in x of [`binomial_logit_log_density`]: -n p (1 - p) (1 - 6 p (1 - p)),
/// from e = exp(-|x|) (p (1 - p) = e / (1 + e)^2).
pub(crate) fn binomial_logit_fourth_derivative(trials: f64, x: f64) -> f64 {
    let e = tail(x);
    let spread = e / ((1.0 + e) * (1.0 + e));
    -trials * spread * (1.0 - 6.0 * spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stable forms against the naive ones where the naive ones are accurate, and against
    /// their limits where they are not.
    #[test]
    fn the_logistic_terms_agree_with_the_naive_forms_and_keep_their_tails() {
        for x in [-30.0, -3.0, -0.4, 0.0, 0.7, 5.0, 30.0] {
            let naive = 1.0 / (1.0 + f64::exp(-x));
            assert!((logistic(x) - naive).abs() <= 1e-15 * naive, "{x}");
            // 1 - p loses digits in the naive form beyond |x| of a few.
            if x.abs() <= 5.0 {
                let (k, n) = (3.0, 7.0);
                let density = k * naive.ln() + (n - k) * (1.0 - naive).ln();
                let stable = binomial_logit_log_density(k, n, x);
                assert!((stable - density).abs() <= 1e-12 * density.abs(), "{x}");
            }
        }
        // Far out the small probability keeps its digits: 1 - logistic(700) = e^-700 / (1 + ..).
        assert_eq!(
            logistic(-700.0),
            (-700.0f64).exp() / (1.0 + (-700.0f64).exp())
        );
        assert_eq!(logistic(700.0), 1.0);
        let (value, slope) = binomial_logit_with_slope(5.0, 5.0, 700.0);
        assert!(value < 0.0 && (value / (-5.0 * (-700.0f64).exp()) - 1.0).abs() < 1e-14);
        assert!((slope / (5.0 * (-700.0f64).exp()) - 1.0).abs() < 1e-14);
        assert_eq!(
            binomial_logit_log_density(2.0, 5.0, 700.0),
            -(3.0 * 700.0 + 5.0 * (-700.0f64).exp())
        );
        assert!(binomial_logit_curvature(4.0, -700.0) > 0.0);
        assert_eq!(binomial_logit_curvature(4.0, 0.0), 1.0);
    }

    /// E logistic(m + s Z) against a fine midpoint rule over +-12 sds (whose own error is far
    /// below the tolerance), for posterior sds from narrow to far wider than the logistic's
    /// scale, where a Gauss-Hermite rule of 40 nodes is off in the third digit.
    #[test]
    fn the_logistic_normal_mean_matches_a_fine_midpoint_rule() {
        for (m, s) in [
            (0.3, 0.0),
            (0.3, 0.2),
            (-2.0, 1.0),
            (3.0, 2.5),
            (0.3, 5.0),
            (-1.0, 30.0),
        ] {
            let n = 400_000;
            let h = 24.0 / n as f64;
            let reference: f64 = (0..n)
                .map(|k| {
                    let z = -12.0 + (k as f64 + 0.5) * h;
                    h * (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
                        * logistic(m + s * z)
                })
                .sum();
            let got = logistic_normal_mean(m, s);
            assert!(
                (got - reference).abs() < 1e-9,
                "m {m} s {s}: {got} vs {reference}"
            );
        }
        // Symmetry: E logistic(-m + s Z) = 1 - E logistic(m + s Z).
        let sum = logistic_normal_mean(0.7, 3.0) + logistic_normal_mean(-0.7, 3.0);
        assert!((sum - 1.0).abs() < 1e-15);
    }
}
