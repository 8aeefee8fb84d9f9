//! Real 2-D (and 1-D) discrete Fourier transforms of fields on a `px x py` torus, and the one
//! operation the circulant prior needs from them: multiplying a real field by a real, even
//! Fourier multiplier, `x <- F^-1 diag(m) F x`.
//!
//! The transforms come from `realfft` (real-to-complex along x, half the work of a complex
//! transform) and `rustfft` (complex along y), both planned once per torus size. A torus field is
//! stored x fastest (`t = ty * px + tx`), like the grid. Its spectrum is kept transposed,
//! `[kx][ky]` with ky fastest, `kx` in `0..=px/2`, so that the y transforms run over contiguous
//! columns in one call. The transforms are unnormalised: a multiplier that should act as
//! `F^-1 diag(lambda) F` is passed as `lambda / (px py)`.
//!
//! Only real multipliers that are even in ky (m(kx, ky) = m(kx, -ky)) keep a real field real;
//! the eigenvalues of a symmetric circulant are such, and [`TorusFft::eigenvalues`] makes the
//! symmetry exact.

use std::fmt;
use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftPlanner};

/// The forward and inverse complex transforms along y.
type ColumnTransforms = (Arc<dyn Fft<f64>>, Arc<dyn Fft<f64>>);

/// The planned transforms of one torus size.
#[derive(Clone)]
pub(crate) struct TorusFft {
    px: usize,
    py: usize,
    rows_forward: Arc<dyn RealToComplex<f64>>,
    rows_inverse: Arc<dyn ComplexToReal<f64>>,
    /// The y transforms (None on a 1-D torus, py = 1).
    columns: Option<ColumnTransforms>,
    /// Complex scratch the transforms need.
    fft_scratch: usize,
}

impl fmt::Debug for TorusFft {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TorusFft({} x {})", self.px, self.py)
    }
}

/// The buffers of one transform, carved out of a caller's `f64` scratch.
struct Buffers<'s> {
    real: &'s mut [f64],
    rows: &'s mut [Complex<f64>],
    spectrum: &'s mut [Complex<f64>],
    fft: &'s mut [Complex<f64>],
}

impl TorusFft {
    /// Plan the transforms of a `px x py` torus (`px` even and >= 2, `py` >= 1).
    pub(crate) fn new(px: usize, py: usize) -> Self {
        assert!(
            px >= 2 && px.is_multiple_of(2) && py >= 1,
            "torus {px} x {py}"
        );
        let mut real_planner = RealFftPlanner::<f64>::new();
        let rows_forward = real_planner.plan_fft_forward(px);
        let rows_inverse = real_planner.plan_fft_inverse(px);
        let columns = (py > 1).then(|| {
            let mut planner = FftPlanner::<f64>::new();
            (planner.plan_fft_forward(py), planner.plan_fft_inverse(py))
        });
        let column_scratch = columns.as_ref().map_or(0, |(f, i)| {
            f.get_inplace_scratch_len().max(i.get_inplace_scratch_len())
        });
        let fft_scratch = rows_forward
            .get_scratch_len()
            .max(rows_inverse.get_scratch_len())
            .max(column_scratch);
        Self {
            px,
            py,
            rows_forward,
            rows_inverse,
            columns,
            fft_scratch,
        }
    }

    /// (px, py).
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.px, self.py)
    }

    /// Cells of the torus, px * py.
    pub(crate) fn cells(&self) -> usize {
        self.px * self.py
    }

    /// Spectrum values, (px / 2 + 1) * py.
    pub(crate) fn spectrum_len(&self) -> usize {
        (self.px / 2 + 1) * self.py
    }

    /// The `f64` scratch [`TorusFft::filter`] needs: the real field and three complex buffers.
    pub(crate) fn scratch_len(&self) -> usize {
        self.cells() + 2 * (2 * self.spectrum_len() + self.fft_scratch)
    }

    /// `scratch` as the transform's buffers; the real field comes first.
    fn buffers<'s>(&self, scratch: &'s mut [f64]) -> Buffers<'s> {
        let (real, rest) = scratch[..self.scratch_len()].split_at_mut(self.cells());
        let complex: &mut [Complex<f64>] = bytemuck::cast_slice_mut(rest);
        let (rows, rest) = complex.split_at_mut(self.spectrum_len());
        let (spectrum, fft) = rest.split_at_mut(self.spectrum_len());
        Buffers {
            real,
            rows,
            spectrum,
            fft,
        }
    }

    /// The real field buffer of `scratch`: write the input of [`TorusFft::filter`] here, read
    /// its output from here.
    pub(crate) fn field<'s>(&self, scratch: &'s mut [f64]) -> &'s mut [f64] {
        &mut scratch[..self.cells()]
    }

    /// The field in `scratch` ([`TorusFft::field`]) becomes F^-1 diag(m) F times it, with the
    /// unnormalised transforms (see the module doc). `multiplier` is real, in the spectrum's
    /// `[kx][ky]` layout, and even in ky.
    ///
    /// Pruned for the grid inside the torus: only the first `rows_in` rows of the input may be
    /// non-zero (the others are not read), and only the first `rows_out` rows of the output are
    /// computed (the others are left undefined).
    pub(crate) fn filter(
        &self,
        multiplier: &[f64],
        scratch: &mut [f64],
        rows_in: usize,
        rows_out: usize,
    ) {
        let half = self.px / 2 + 1;
        let b = self.buffers(scratch);
        for (row, out) in b
            .real
            .chunks_exact_mut(self.px)
            .zip(b.rows.chunks_exact_mut(half))
            .take(rows_in)
        {
            self.rows_forward
                .process_with_scratch(row, out, b.fft)
                .expect("buffer sizes are planned");
        }
        b.rows[rows_in * half..].fill(Complex::new(0.0, 0.0));
        match &self.columns {
            None => {
                for (value, m) in b.rows.iter_mut().zip(multiplier) {
                    *value *= *m;
                }
            }
            Some((forward, inverse)) => {
                transpose_columns(b.rows, b.spectrum, self.py, half, half);
                forward.process_with_scratch(b.spectrum, b.fft);
                for (value, m) in b.spectrum.iter_mut().zip(multiplier) {
                    *value *= *m;
                }
                inverse.process_with_scratch(b.spectrum, b.fft);
                transpose_columns(b.spectrum, b.rows, half, self.py, rows_out);
            }
        }
        for (row, out) in b
            .rows
            .chunks_exact_mut(half)
            .zip(b.real.chunks_exact_mut(self.px))
            .take(rows_out)
        {
            // A real field's spectrum is real at kx = 0 and kx = px / 2; the y transforms leave
            // rounding noise there, which the real inverse would refuse.
            row[0].im = 0.0;
            row[half - 1].im = 0.0;
            self.rows_inverse
                .process_with_scratch(row, out, b.fft)
                .expect("buffer sizes are planned");
        }
    }

    /// The eigenvalues of the symmetric circulant whose first column is `field` (a torus field,
    /// even in both axes): its unnormalised DFT, real, in the spectrum's `[kx][ky]` layout,
    /// made exactly even in ky. Allocates; called once per torus tried.
    pub(crate) fn eigenvalues(&self, field: &[f64]) -> Vec<f64> {
        let mut values = vec![0.0; self.spectrum_len()];
        let mut scratch = vec![0.0; self.scratch_len()];
        self.eigenvalues_into(field, &mut values, &mut scratch);
        values
    }

    /// [`TorusFft::eigenvalues`] into `values` (`spectrum_len` long), with the caller's
    /// `scratch` (`scratch_len` long).
    pub(crate) fn eigenvalues_into(&self, field: &[f64], values: &mut [f64], scratch: &mut [f64]) {
        let half = self.px / 2 + 1;
        let b = self.buffers(scratch);
        b.real.copy_from_slice(field);
        for (row, out) in b
            .real
            .chunks_exact_mut(self.px)
            .zip(b.rows.chunks_exact_mut(half))
        {
            self.rows_forward
                .process_with_scratch(row, out, b.fft)
                .expect("buffer sizes are planned");
        }
        let spectrum: &[Complex<f64>] = match &self.columns {
            None => b.rows,
            Some((forward, _)) => {
                transpose_columns(b.rows, b.spectrum, self.py, half, half);
                forward.process_with_scratch(b.spectrum, b.fft);
                b.spectrum
            }
        };
        let py = self.py;
        for (v, c) in values.iter_mut().zip(spectrum.iter()) {
            *v = c.re;
        }
        for column in values.chunks_exact_mut(py) {
            for ky in 1..py.div_ceil(2) {
                let mean = 0.5 * (column[ky] + column[py - ky]);
                column[ky] = mean;
                column[py - ky] = mean;
            }
        }
    }
}

/// `to[c * rows + r] = from[r * cols + c]` for the first `wanted` columns `c` of a `rows x cols`
/// row-major block: (part of) its transpose.
fn transpose_columns(
    from: &[Complex<f64>],
    to: &mut [Complex<f64>],
    rows: usize,
    cols: usize,
    wanted: usize,
) {
    const BLOCK: usize = 16;
    for r0 in (0..rows).step_by(BLOCK) {
        for c0 in (0..wanted).step_by(BLOCK) {
            for r in r0..(r0 + BLOCK).min(rows) {
                for c in c0..(c0 + BLOCK).min(wanted) {
                    to[c * rows + r] = from[r * cols + c];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct DFT of a real torus field, the reference.
    fn direct_dft(field: &[f64], px: usize, py: usize) -> Vec<Complex<f64>> {
        let tau = std::f64::consts::TAU;
        let mut out = vec![Complex::new(0.0, 0.0); px * py];
        for ky in 0..py {
            for kx in 0..px {
                let mut sum = Complex::new(0.0, 0.0);
                for ty in 0..py {
                    for tx in 0..px {
                        let phase =
                            -tau * ((kx * tx) as f64 / px as f64 + (ky * ty) as f64 / py as f64);
                        sum += field[ty * px + tx] * Complex::new(phase.cos(), phase.sin());
                    }
                }
                out[ky * px + kx] = sum;
            }
        }
        out
    }

    /// filter with an even multiplier equals the direct transform, multiplier, inverse.
    #[test]
    fn filter_matches_the_direct_transform() {
        for (px, py) in [(8, 6), (10, 1), (6, 5), (12, 9)] {
            let torus = TorusFft::new(px, py);
            let field: Vec<f64> = (0..px * py)
                .map(|k| ((k * 37 % 13) as f64 - 6.0) / 4.0)
                .collect();
            let half = px / 2 + 1;
            // An even multiplier: a function of min(ky, py - ky) and kx.
            let m = |kx: usize, ky: usize| 1.0 + kx as f64 * 0.5 + ky.min(py - ky) as f64 * 0.25;
            let multiplier: Vec<f64> = (0..half)
                .flat_map(|kx| (0..py).map(move |ky| m(kx, ky)))
                .collect();
            let mut scratch = vec![0.0; torus.scratch_len()];
            torus.field(&mut scratch).copy_from_slice(&field);
            torus.filter(&multiplier, &mut scratch, py, py);
            // Reference: DFT, multiply (m extended to kx > px/2 by m(px - kx, -ky)), inverse.
            let spectrum = direct_dft(&field, px, py);
            let tau = std::f64::consts::TAU;
            for ty in 0..py {
                for tx in 0..px {
                    let mut sum = Complex::new(0.0, 0.0);
                    for ky in 0..py {
                        for kx in 0..px {
                            let factor = if kx < half {
                                m(kx, ky)
                            } else {
                                m(px - kx, (py - ky) % py)
                            };
                            let phase =
                                tau * ((kx * tx) as f64 / px as f64 + (ky * ty) as f64 / py as f64);
                            sum += spectrum[ky * px + kx]
                                * factor
                                * Complex::new(phase.cos(), phase.sin());
                        }
                    }
                    let got = torus.field(&mut scratch)[ty * px + tx];
                    assert!(
                        (got - sum.re).abs() < 1e-9,
                        "{px} x {py} at ({tx}, {ty}): {got} vs {}",
                        sum.re
                    );
                }
            }
        }
    }

    /// Pruning skips rows that are zero on input and rows not wanted on output, and changes
    /// nothing else.
    #[test]
    fn pruned_filter_matches_the_full_one_on_the_rows_it_computes() {
        let (px, py) = (10, 8);
        let torus = TorusFft::new(px, py);
        let multiplier: Vec<f64> = (0..torus.spectrum_len())
            .map(|k| {
                let (kx, ky) = (k / py, k % py);
                1.0 / (1.0 + (kx * kx + ky.min(py - ky).pow(2)) as f64)
            })
            .collect();
        let field: Vec<f64> = (0..px * py)
            .map(|t| if t / px < 3 { (t as f64).sin() } else { 0.0 })
            .collect();
        let mut full = vec![0.0; torus.scratch_len()];
        torus.field(&mut full).copy_from_slice(&field);
        torus.filter(&multiplier, &mut full, py, py);
        let mut pruned = vec![f64::NAN; torus.scratch_len()];
        torus.field(&mut pruned)[..3 * px].copy_from_slice(&field[..3 * px]);
        torus.filter(&multiplier, &mut pruned, 3, 2);
        for t in 0..2 * px {
            let (a, b) = (torus.field(&mut full)[t], torus.field(&mut pruned)[t]);
            assert!((a - b).abs() < 1e-13, "{t}: {a} vs {b}");
        }
    }

    #[test]
    fn eigenvalues_of_an_even_field_are_its_real_dft() {
        let (px, py) = (8, 6);
        let torus = TorusFft::new(px, py);
        let field: Vec<f64> = (0..px * py)
            .map(|t| {
                let (tx, ty) = (t % px, t / px);
                let dx = tx.min(px - tx) as f64;
                let dy = ty.min(py - ty) as f64;
                (-(dx * dx + dy * dy).sqrt() / 2.0).exp()
            })
            .collect();
        let values = torus.eigenvalues(&field);
        let direct = direct_dft(&field, px, py);
        for kx in 0..=px / 2 {
            for ky in 0..py {
                let expected = direct[ky * px + kx];
                assert!(expected.im.abs() < 1e-12);
                assert!((values[kx * py + ky] - expected.re).abs() < 1e-12);
            }
        }
    }
}
