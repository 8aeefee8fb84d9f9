//! Autocovariance of one chain at every lag: direct sums for short chains, a zero-padded real FFT
//! (the `realfft` crate) for long ones (O(n log n), so 10^5 draws take milliseconds).
//!
//! The estimator is ArviZ's `autocov`: the chain's mean is removed and every lag is divided by n
//! (the biased estimator, which keeps the sequence positive semi-definite).

use realfft::RealFftPlanner;
use realfft::num_complex::Complex;

/// Chains up to this length use direct sums (n^2 / 2 multiply-adds, exact to rounding).
const DIRECT_MAX_LEN: usize = 128;

/// Biased autocovariance of `x` at lags 0..n (n = `x.len()`), computed after removing the mean.
pub(crate) fn autocovariance(x: &[f64]) -> Vec<f64> {
    autocovariances([x]).pop().unwrap_or_default()
}

/// [`autocovariance`] of each chain, sharing one FFT planner (it caches the plan of each
/// transform length, whose twiddle factors cost as much as the transforms themselves).
pub(crate) fn autocovariances<'a>(chains: impl IntoIterator<Item = &'a [f64]>) -> Vec<Vec<f64>> {
    let mut planner = RealFftPlanner::<f64>::new();
    chains
        .into_iter()
        .map(|x| {
            let n = x.len();
            if n == 0 {
                return Vec::new();
            }
            let mean = x.iter().sum::<f64>() / n as f64;
            let centred: Vec<f64> = x.iter().map(|v| v - mean).collect();
            if n <= DIRECT_MAX_LEN {
                autocovariance_direct(&centred)
            } else {
                autocovariance_fft(&centred, &mut planner)
            }
        })
        .collect()
}

/// The autocovariances of several chains, each lag on demand: a short chain keeps its centred
/// draws and sums a lag when asked (n multiply-adds; Geyer's truncation in the ESS usually stops
/// after a few lags, so most of the n^2 / 2 of a full table is never needed), a long one its
/// FFT table. Every value equals [`autocovariances`]'s bit for bit.
pub(crate) struct LazyAutocovariances {
    chains: Vec<ChainAutocovariance>,
}

enum ChainAutocovariance {
    /// The draws minus their mean.
    Short(Vec<f64>),
    /// Every lag, by FFT.
    Long(Vec<f64>),
}

impl LazyAutocovariances {
    pub(crate) fn new<'a>(chains: impl IntoIterator<Item = &'a [f64]>) -> Self {
        let mut planner = RealFftPlanner::<f64>::new();
        let chains = chains
            .into_iter()
            .map(|x| {
                let n = x.len();
                let mean = x.iter().sum::<f64>() / n as f64;
                let centred: Vec<f64> = x.iter().map(|v| v - mean).collect();
                if n <= DIRECT_MAX_LEN {
                    ChainAutocovariance::Short(centred)
                } else {
                    ChainAutocovariance::Long(autocovariance_fft(&centred, &mut planner))
                }
            })
            .collect();
        Self { chains }
    }

    /// The mean over chains of their autocovariance at `lag` (every chain longer than `lag`).
    pub(crate) fn mean_at(&self, lag: usize) -> f64 {
        let sum: f64 = self
            .chains
            .iter()
            .map(|chain| match chain {
                ChainAutocovariance::Short(centred) => direct_sum_at(centred, lag),
                ChainAutocovariance::Long(table) => table[lag],
            })
            .sum();
        sum / self.chains.len() as f64
    }
}

/// sum_{t} x_t x_{t+lag} / n, the one lag of [`autocovariance_direct`].
fn direct_sum_at(centred: &[f64], lag: usize) -> f64 {
    let n = centred.len();
    let sum: f64 = centred[..n - lag]
        .iter()
        .zip(&centred[lag..])
        .map(|(a, b)| a * b)
        .sum();
    sum / n as f64
}

/// Zero-padded transform length: a power of two >= 2n, so circular equals linear correlation.
fn fft_size(n: usize) -> usize {
    (2 * n).next_power_of_two()
}

/// sum_{t} x_t x_{t+k} / n for every lag k, by direct sums.
fn autocovariance_direct(centred: &[f64]) -> Vec<f64> {
    (0..centred.len())
        .map(|lag| direct_sum_at(centred, lag))
        .collect()
}

/// The same sums through the Wiener-Khinchin theorem: zero-pad to [`fft_size`], take the real
/// FFT, square its magnitudes, transform back (realfft's inverse is unnormalised: divide by the
/// size as well as by n).
fn autocovariance_fft(centred: &[f64], planner: &mut RealFftPlanner<f64>) -> Vec<f64> {
    let n = centred.len();
    let size = fft_size(n);
    let forward = planner.plan_fft_forward(size);
    let inverse = planner.plan_fft_inverse(size);
    let mut signal = forward.make_input_vec();
    signal[..n].copy_from_slice(centred);
    let mut spectrum = forward.make_output_vec();
    forward
        .process(&mut signal, &mut spectrum)
        .expect("buffers made by the plan have its lengths");
    for z in &mut spectrum {
        *z = Complex::new(z.norm_sqr(), 0.0);
    }
    inverse
        .process(&mut spectrum, &mut signal)
        .expect("buffers made by the plan have its lengths and a real spectrum");
    let scale = 1.0 / (size as f64 * n as f64);
    signal[..n].iter().map(|v| v * scale).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// A deterministic, irregular test signal (no random crate needed).
    fn signal(n: usize) -> Vec<f64> {
        (0..n)
            .map(|t| {
                let t = t as f64;
                (0.37 * t).sin() + 0.5 * (1.91 * t + 0.3).cos() + 0.01 * t
            })
            .collect()
    }

    #[test]
    fn the_real_fft_matches_a_naive_dft() {
        let x = signal(16);
        let forward = RealFftPlanner::<f64>::new().plan_fft_forward(16);
        let mut input = x.clone();
        let mut spectrum = forward.make_output_vec();
        forward.process(&mut input, &mut spectrum).unwrap();
        assert_eq!(spectrum.len(), 9);
        for (k, bin) in spectrum.iter().enumerate() {
            let (mut sr, mut si) = (0.0, 0.0);
            for (j, v) in x.iter().enumerate() {
                let a = -2.0 * PI * (j * k) as f64 / 16.0;
                sr += v * a.cos();
                si += v * a.sin();
            }
            assert!(
                (bin.re - sr).abs() < 1e-12 && (bin.im - si).abs() < 1e-12,
                "bin {k}"
            );
        }
    }

    #[test]
    fn fft_and_direct_sums_agree_at_every_lag() {
        let mut planner = RealFftPlanner::new();
        for n in [129, 300, 1000] {
            let x = signal(n);
            let mean = x.iter().sum::<f64>() / n as f64;
            let centred: Vec<f64> = x.iter().map(|v| v - mean).collect();
            let direct = autocovariance_direct(&centred);
            let fast = autocovariance_fft(&centred, &mut planner);
            assert_eq!(direct.len(), fast.len());
            for (lag, (d, f)) in direct.iter().zip(&fast).enumerate() {
                assert!(
                    (d - f).abs() < 1e-12 * direct[0],
                    "n {n} lag {lag}: {d} vs {f}"
                );
            }
        }
    }

    #[test]
    fn lag_zero_is_the_biased_variance_and_short_input_is_handled() {
        let x = [1.0, 2.0, 4.0, 7.0];
        let acov = autocovariance(&x);
        let mean = 3.5;
        let biased_var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 4.0;
        assert!((acov[0] - biased_var).abs() < 1e-15);
        // Last lag: only the pair (x_0, x_3).
        assert!((acov[3] - (1.0 - mean) * (7.0 - mean) / 4.0).abs() < 1e-15);
        assert!(autocovariance(&[]).is_empty());
        assert_eq!(autocovariance(&[5.0]), vec![0.0]);
    }

    /// On demand or as a table, short chains and long, the mean autocovariance at every lag is
    /// the same number.
    #[test]
    fn lazy_autocovariances_equal_the_tables_bit_for_bit() {
        for lengths in [[40, 40, 40], [128, 128, 128], [129, 300, 200]] {
            let chains: Vec<Vec<f64>> = lengths.iter().map(|&n| signal(n)).collect();
            let views: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
            let tables = autocovariances(views.iter().copied());
            let lazy = LazyAutocovariances::new(views.iter().copied());
            for lag in 0..*lengths.iter().min().unwrap() {
                let eager = tables.iter().map(|t| t[lag]).sum::<f64>() / tables.len() as f64;
                assert_eq!(
                    lazy.mean_at(lag).to_bits(),
                    eager.to_bits(),
                    "{lengths:?} {lag}"
                );
            }
        }
    }

    #[test]
    fn chains_of_different_lengths_each_get_their_own_transform() {
        let (a, b, c) = (signal(500), signal(300), signal(500));
        let together = autocovariances([a.as_slice(), b.as_slice(), c.as_slice()]);
        let alone: Vec<Vec<f64>> = [&a, &b, &c].iter().map(|x| autocovariance(x)).collect();
        assert_eq!(together, alone);
    }
}
