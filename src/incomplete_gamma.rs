//! The regularized incomplete gamma functions P(a, x) = gamma(a, x) / Gamma(a) and
//! Q(a, x) = 1 - P(a, x): the gamma distribution function (a prior's median,
//! `model::hyper::distribution`) and the chi-square survival function (simulation-based
//! calibration's p-values, `diagnostics::calibration`). Below x = a + 1 the series of P converges
//! fast, above it the continued fraction of Q (Lentz's method; Numerical Recipes, 6.2); each is
//! summed to double precision and the other function is one minus it.

/// P(a, x) for a > 0: 0 at x <= 0, rising to 1.
pub(crate) fn lower_regularized_gamma(a: f64, x: f64) -> f64 {
    match evaluate(a, x) {
        Side::Lower(p) => p,
        Side::Upper(q) => 1.0 - q,
    }
    .clamp(0.0, 1.0)
}

/// Q(a, x) = 1 - P(a, x) for a > 0: 1 at x <= 0, falling to 0.
pub(crate) fn upper_regularized_gamma(a: f64, x: f64) -> f64 {
    match evaluate(a, x) {
        Side::Lower(p) => 1.0 - p,
        Side::Upper(q) => q,
    }
    .clamp(0.0, 1.0)
}

/// Which function was summed directly.
enum Side {
    Lower(f64),
    Upper(f64),
}

/// Terms or continued-fraction steps at most; both converge in far fewer for the arguments the
/// crate uses (the series in about sqrt(a) + x terms, the fraction in a few dozen steps).
const MAX_TERMS: usize = 10_000;

fn evaluate(a: f64, x: f64) -> Side {
    if x <= 0.0 {
        return Side::Lower(0.0);
    }
    let log_prefactor = a * x.ln() - x - libm::lgamma(a);
    if x < a + 1.0 {
        Side::Lower(lower_series(a, x) * log_prefactor.exp())
    } else {
        Side::Upper(upper_continued_fraction(a, x) * log_prefactor.exp())
    }
}

/// sum_n x^n / (a (a + 1) ... (a + n)): P(a, x) = this times x^a e^-x / Gamma(a).
fn lower_series(a: f64, x: f64) -> f64 {
    let (mut term, mut sum, mut denominator) = (1.0 / a, 1.0 / a, a);
    for _ in 0..MAX_TERMS {
        denominator += 1.0;
        term *= x / denominator;
        sum += term;
        if term.abs() < sum.abs() * 1e-16 {
            break;
        }
    }
    sum
}

/// The continued fraction 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)) by Lentz's method:
/// Q(a, x) = this times x^a e^-x / Gamma(a).
fn upper_continued_fraction(a: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..MAX_TERMS {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a = 1 is the exponential distribution, P(1, x) = 1 - e^-x, on both sides of x = a + 1;
    /// a = 1/2 is half a chi-square with one degree of freedom, P(1/2, x) = erf(sqrt(x)).
    #[test]
    fn known_closed_forms_on_both_sides_of_the_switch() {
        for x in [1e-8, 0.1, 1.0, 1.9, 2.1, 5.0, 30.0] {
            let p = lower_regularized_gamma(1.0, x);
            assert!((p - (1.0 - (-x).exp())).abs() < 1e-15, "x = {x}: {p}");
            let q = upper_regularized_gamma(1.0, x);
            assert!((q / (-x).exp() - 1.0).abs() < 1e-13, "x = {x}: {q}");
            let erf = libm::erf(x.sqrt());
            assert!(
                (lower_regularized_gamma(0.5, x) - erf).abs() < 1e-14,
                "x = {x}"
            );
        }
        assert_eq!(lower_regularized_gamma(2.0, 0.0), 0.0);
        assert_eq!(upper_regularized_gamma(2.0, -1.0), 1.0);
    }
}
