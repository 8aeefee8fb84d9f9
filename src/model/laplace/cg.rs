//! Conjugate gradients (Hestenes & Stiefel 1952) for a symmetric positive definite operator
//! given only as a product `x -> A x`: the solver behind Newton's steps and the weighted
//! least-squares start, so that no N x N matrix is ever formed.

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CgOutcome {
    /// Products with A used.
    pub(crate) iterations: usize,
    /// |b - A x| at the end.
    pub(crate) residual_norm: f64,
    /// Whether the residual reached the tolerance (else the iteration cap was hit).
    pub(crate) converged: bool,
}

/// Solve A x = b from x = 0 until |b - A x| <= `tolerance` or `max_iterations` products.
/// `apply(x, out)` writes A x into `out`. The iterates decrease the A-norm of the error
/// monotonically, and every iterate is a descent direction for the quadratic whose Newton system
/// this is (which a line search relies on).
pub(crate) fn solve(
    mut apply: impl FnMut(&[f64], &mut [f64]),
    b: &[f64],
    x: &mut [f64],
    tolerance: f64,
    max_iterations: usize,
) -> CgOutcome {
    let n = b.len();
    x.fill(0.0);
    let mut r = b.to_vec();
    let mut p = b.to_vec();
    let mut ap = vec![0.0; n];
    let mut rr = dot(&r, &r);
    let mut iterations = 0;
    while rr.sqrt() > tolerance && iterations < max_iterations {
        apply(&p, &mut ap);
        iterations += 1;
        let curvature = dot(&p, &ap);
        if curvature <= 0.0 || !curvature.is_finite() {
            // Not positive definite along p (rounding at the end of a solve): stop with the
            // iterate so far, which is still a descent direction.
            break;
        }
        let alpha = rr / curvature;
        for ((xk, rk), (&pk, &apk)) in x.iter_mut().zip(r.iter_mut()).zip(p.iter().zip(&ap)) {
            *xk += alpha * pk;
            *rk -= alpha * apk;
        }
        let next = dot(&r, &r);
        let beta = next / rr;
        rr = next;
        for (pk, &rk) in p.iter_mut().zip(&r) {
            *pk = rk + beta * *pk;
        }
    }
    let residual_norm = rr.sqrt();
    CgOutcome {
        iterations,
        residual_norm,
        converged: residual_norm <= tolerance,
    }
}

pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(crate) fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1-D discrete Laplacian plus identity: SPD, condition number about 5.
    #[test]
    fn solves_a_tridiagonal_system_to_tolerance() {
        let n = 50;
        let apply = |x: &[f64], out: &mut [f64]| {
            for k in 0..n {
                let left = if k > 0 { x[k - 1] } else { 0.0 };
                let right = if k + 1 < n { x[k + 1] } else { 0.0 };
                out[k] = 3.0 * x[k] - left - right;
            }
        };
        let truth: Vec<f64> = (0..n).map(|k| (k as f64 * 0.3).sin()).collect();
        let mut b = vec![0.0; n];
        apply(&truth, &mut b);
        let mut x = vec![0.0; n];
        let outcome = solve(apply, &b, &mut x, 1e-12, 200);
        assert!(outcome.converged, "{outcome:?}");
        let err = x
            .iter()
            .zip(&truth)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-11, "max error {err:e}");
    }
}
