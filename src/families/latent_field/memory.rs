//! What one latent-field job is estimated to need in memory, and the limit above which a study
//! is refused when it loads (the check itself, with its located message, is in
//! [`super::resolve`]).

use crate::model::LikelihoodKind;

/// A job refuses to start when its estimated memory is above this: 12 GiB.
pub(crate) const MEMORY_LIMIT_BYTES: f64 = 12.0 * 1024.0 * 1024.0 * 1024.0;

/// Above this many observations the exact gaussian posterior is not formed densely.
const EXACT_OBSERVATIONS_CAP: f64 = 2500.0;

/// Bytes one kept state of one chain holds for the job's diagnostics: the log-likelihood, the
/// probe cells and up to four inferred hyperparameters, 8 bytes each (see
/// [`crate::sampler::KeptSeries`]).
const KEPT_STATE_BYTES: f64 = 8.0 * (1.0 + crate::sampler::PROBES as f64 + 4.0);

/// Estimated peak bytes of one job: the chains' state and running sums (16 vectors of N per
/// chain plus 8 shared), the scalars of every kept state, and for the gaussian likelihood the
/// dense exact posterior over at most 2500 observations:
/// 8 N (16 chains + 8) + 80 chains kept + 8 min(M, 2500)^2.
pub(crate) fn estimated_job_bytes(
    cells: f64,
    chains: f64,
    kept: f64,
    likelihood: LikelihoodKind,
    observed: f64,
) -> f64 {
    let sampler = 8.0 * cells * (16.0 * chains + 8.0) + KEPT_STATE_BYTES * chains * kept;
    let exact = match likelihood {
        LikelihoodKind::Gaussian => 8.0 * observed.min(EXACT_OBSERVATIONS_CAP).powi(2),
        LikelihoodKind::Probit | LikelihoodKind::Poisson | LikelihoodKind::Binomial => 0.0,
    };
    sampler + exact
}

/// Human-readable bytes: "37.3 GiB", "512.0 MiB".
pub(crate) fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_estimate_follows_the_formula() {
        let n = 256.0 * 256.0;
        let gaussian = estimated_job_bytes(n, 2.0, 0.0, LikelihoodKind::Gaussian, n / 4.0);
        assert_eq!(gaussian, 8.0 * n * 40.0 + 8.0 * 2500.0 * 2500.0);
        let poisson = estimated_job_bytes(n, 2.0, 1000.0, LikelihoodKind::Poisson, n / 4.0);
        assert_eq!(poisson, 8.0 * n * 40.0 + 80.0 * 2.0 * 1000.0);
        assert_eq!(format_bytes(12.0 * 1024.0 * 1024.0 * 1024.0), "12.0 GiB");
        assert_eq!(format_bytes(512.0), "512.0 B");
    }
}
