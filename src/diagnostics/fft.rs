//! Autocovariance of one chain at every lag: direct sums for short chains, a zero-padded radix-2
//! FFT for long ones (O(n log n), so 10^5 draws take milliseconds).
//!
//! The estimator is ArviZ's `autocov`: the chain's mean is removed and every lag is divided by n
//! (the biased estimator, which keeps the sequence positive semi-definite).

use std::f64::consts::PI;

/// Chains up to this length use direct sums (n^2 / 2 multiply-adds, exact to rounding).
const DIRECT_MAX_LEN: usize = 128;

/// Biased autocovariance of `x` at lags 0..n (n = `x.len()`), computed after removing the mean.
pub(crate) fn autocovariance(x: &[f64]) -> Vec<f64> {
    autocovariances([x]).pop().unwrap_or_default()
}

/// [`autocovariance`] of each chain, sharing the FFT's twiddle factors between chains of one
/// length (computing them is as costly as the transforms themselves).
pub(crate) fn autocovariances<'a>(chains: impl IntoIterator<Item = &'a [f64]>) -> Vec<Vec<f64>> {
    let mut twiddles: Option<Twiddles> = None;
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
                return autocovariance_direct(&centred);
            }
            let size = fft_size(n);
            if twiddles.as_ref().is_none_or(|t| t.size() != size) {
                twiddles = Some(Twiddles::new(size));
            }
            autocovariance_fft(
                &centred,
                twiddles.as_ref().expect("twiddles were just built"),
            )
        })
        .collect()
}

/// Zero-padded transform length: a power of two >= 2n, so circular equals linear correlation.
fn fft_size(n: usize) -> usize {
    (2 * n).next_power_of_two()
}

/// sum_{t} x_t x_{t+k} / n for every lag k, by direct sums.
fn autocovariance_direct(centred: &[f64]) -> Vec<f64> {
    let n = centred.len();
    (0..n)
        .map(|lag| {
            let sum: f64 = centred[..n - lag]
                .iter()
                .zip(&centred[lag..])
                .map(|(a, b)| a * b)
                .sum();
            sum / n as f64
        })
        .collect()
}

/// The same sums through the Wiener-Khinchin theorem: zero-pad to [`fft_size`], take |FFT|^2,
/// transform back.
fn autocovariance_fft(centred: &[f64], twiddles: &Twiddles) -> Vec<f64> {
    let n = centred.len();
    let size = fft_size(n);
    debug_assert_eq!(twiddles.size(), size);
    let mut re = vec![0.0; size];
    let mut im = vec![0.0; size];
    re[..n].copy_from_slice(centred);
    fft_in_place(&mut re, &mut im, twiddles);
    for (r, i) in re.iter_mut().zip(im.iter_mut()) {
        *r = *r * *r + *i * *i;
        *i = 0.0;
    }
    // The power spectrum is real and even, so its inverse transform is its forward transform / size.
    fft_in_place(&mut re, &mut im, twiddles);
    let scale = 1.0 / (size as f64 * n as f64);
    re[..n].iter().map(|v| v * scale).collect()
}

/// cos and sin of 2 pi k / size for k < size / 2, each computed directly (no recurrence drift).
struct Twiddles {
    cos: Vec<f64>,
    sin: Vec<f64>,
}

impl Twiddles {
    fn new(size: usize) -> Self {
        let half = size / 2;
        let angle = |k: usize| 2.0 * PI * k as f64 / size as f64;
        Self {
            cos: (0..half).map(|k| angle(k).cos()).collect(),
            sin: (0..half).map(|k| angle(k).sin()).collect(),
        }
    }

    /// The transform length these factors serve.
    fn size(&self) -> usize {
        2 * self.cos.len()
    }
}

/// Forward DFT X_k = sum_j x_j exp(-2 pi i j k / size), in place; `re.len()` must be a power of two.
fn fft_in_place(re: &mut [f64], im: &mut [f64], twiddles: &Twiddles) {
    let size = re.len();
    debug_assert!(size.is_power_of_two() && im.len() == size);
    bit_reverse_permute(re, im);
    let mut span = 2;
    while span <= size {
        let half = span / 2;
        let stride = size / span;
        for start in (0..size).step_by(span) {
            for k in 0..half {
                let (wr, wi) = (twiddles.cos[k * stride], -twiddles.sin[k * stride]);
                let (a, b) = (start + k, start + k + half);
                let tr = re[b] * wr - im[b] * wi;
                let ti = re[b] * wi + im[b] * wr;
                re[b] = re[a] - tr;
                im[b] = im[a] - ti;
                re[a] += tr;
                im[a] += ti;
            }
        }
        span *= 2;
    }
}

fn bit_reverse_permute(re: &mut [f64], im: &mut [f64]) {
    let size = re.len();
    let mut j = 0;
    for i in 1..size {
        let mut bit = size >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn fft_matches_a_naive_dft() {
        let x = signal(16);
        let mut re = x.clone();
        let mut im = vec![0.0; 16];
        fft_in_place(&mut re, &mut im, &Twiddles::new(16));
        for k in 0..16 {
            let (mut sr, mut si) = (0.0, 0.0);
            for (j, v) in x.iter().enumerate() {
                let a = -2.0 * PI * (j * k) as f64 / 16.0;
                sr += v * a.cos();
                si += v * a.sin();
            }
            assert!(
                (re[k] - sr).abs() < 1e-12 && (im[k] - si).abs() < 1e-12,
                "bin {k}"
            );
        }
    }

    #[test]
    fn fft_and_direct_sums_agree_at_every_lag() {
        for n in [129, 300, 1000] {
            let x = signal(n);
            let mean = x.iter().sum::<f64>() / n as f64;
            let centred: Vec<f64> = x.iter().map(|v| v - mean).collect();
            let direct = autocovariance_direct(&centred);
            let fast = autocovariance_fft(&centred, &Twiddles::new(fft_size(n)));
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

    #[test]
    fn chains_of_different_lengths_each_get_their_own_transform() {
        let (a, b, c) = (signal(500), signal(300), signal(500));
        let together = autocovariances([a.as_slice(), b.as_slice(), c.as_slice()]);
        let alone: Vec<Vec<f64>> = [&a, &b, &c].iter().map(|x| autocovariance(x)).collect();
        assert_eq!(together, alone);
    }
}
