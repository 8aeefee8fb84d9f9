//! The central composite design over the hyperparameters (R-INLA's `int.strategy = "ccd"`; Rue,
//! Martino & Chopin 2009, section 6.5): the mode and 2 d + 2^d (2^(d-1) at d = 5: the
//! resolution-V half fraction x_5 = x_1 x_2 x_3 x_4) points on the sphere of radius f = 1.1 sqrt(d)
//! in the standardised coordinates z, the star points f e_i and the factorial points f (+/-1,
//! ..., +/-1) / sqrt(d). Each point's log p~ is weighed by its design weight: w0 at the mode and w
//! elsewhere, with
//!
//!   w = 1 / ((n - 1) (1 + exp(-f^2 / 2) (f^2 / d - 1))),   w0 = 1 - (n - 1) w,
//!
//! so that on a gaussian log p~ the weighted points have the gaussian's second moments (the
//! design is symmetric, so the first and the mixed ones vanish): each coordinate's z_i^2 averages
//! f^2 / d over the sphere's points, and w0 + (n - 1) w e^(-f^2 / 2) (f^2 / d) = w0 + (n - 1) w
//! e^(-f^2 / 2) solves for w. R-INLA scales each coordinate of a point by the posterior's
//! stretch on that side (the drop of log p~ at z = +/-2, [`super::grid`]); so does fieldmc, and
//! weighs each point by the volume it then stands for (the product of its stretches: on a
//! posterior that is split normal along the axes the weighted points keep its mass and its
//! skew). The hyperparameters' marginals are the stretches' asymmetric gaussian
//! ([`super::asymmetric`]).
//! A few points for many hyperparameters: 9 at d = 2, 15 at 3, 25 at 4, 27 at 5.

/// f / sqrt(d): R-INLA's default (`f0`).
pub(crate) const RADIUS_FACTOR: f64 = 1.1;

/// The design's points in z (the mode first, at 0) and their log design weights.
pub(crate) fn central_composite(d: usize) -> Vec<(Vec<f64>, f64)> {
    let f = RADIUS_FACTOR * (d as f64).sqrt();
    let mut directions = Vec::new();
    for i in 0..d {
        for sign in [1.0, -1.0] {
            let mut e = vec![0.0; d];
            e[i] = sign;
            directions.push(e);
        }
    }
    let corner = 1.0 / (d as f64).sqrt();
    let free = if d == 5 { 4 } else { d };
    for bits in 0..1usize << free {
        let mut e: Vec<f64> = (0..free)
            .map(|i| if bits >> i & 1 == 1 { -corner } else { corner })
            .collect();
        if free < d {
            // The half fraction: the last sign is the product of the others.
            let product: f64 = e.iter().map(|x| x.signum()).product();
            e.push(product * corner);
        }
        directions.push(e);
    }
    let n = directions.len() + 1;
    let w = 1.0 / ((n - 1) as f64 * (1.0 + (-0.5 * f * f).exp() * (f * f / d as f64 - 1.0)));
    let w0 = 1.0 - (n - 1) as f64 * w;
    std::iter::once((vec![0.0; d], w0.ln()))
        .chain(
            directions
                .into_iter()
                .map(|e| (e.iter().map(|x| f * x).collect(), w.ln())),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-INLA's point counts, and on a standard gaussian log p~ the weighted points' moments are
    /// the gaussian's: mean 0, covariance I (to rounding), every weight positive.
    #[test]
    fn the_design_integrates_a_gaussians_moments() {
        for (d, count) in [(2, 9), (3, 15), (4, 25), (5, 27)] {
            let design = central_composite(d);
            assert_eq!(design.len(), count, "d = {d}");
            let weights: Vec<f64> = design
                .iter()
                .map(|(z, log_w)| (log_w - 0.5 * z.iter().map(|x| x * x).sum::<f64>()).exp())
                .collect();
            let total: f64 = weights.iter().sum();
            for i in 0..d {
                let mean: f64 = design
                    .iter()
                    .zip(&weights)
                    .map(|((z, _), w)| w * z[i])
                    .sum();
                assert!(mean.abs() < 1e-12 * total, "d = {d}: mean {i}");
                for j in 0..d {
                    let moment: f64 = design
                        .iter()
                        .zip(&weights)
                        .map(|((z, _), w)| w * z[i] * z[j])
                        .sum::<f64>()
                        / total;
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!(
                        (moment - want).abs() < 1e-12,
                        "d = {d}: ({i}, {j}) {moment}"
                    );
                }
            }
            assert!(design.iter().all(|(_, log_w)| log_w.is_finite()));
        }
    }
}
