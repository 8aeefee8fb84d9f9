//! Stationary, non-separable priors (the exponential and Matern kernels on a 2-D grid) by
//! circulant embedding on a padded torus (Wood & Chan 1994; Dietrich & Newsam 1997).
//!
//! On a regular grid a stationary kernel's covariance matrix is block Toeplitz. Embedded in a
//! `px x py` torus with px >= 2 (nx - 1) and py >= 2 (ny - 1), with the kernel evaluated at the
//! wrapped distance (lag min(t, p - t) along each axis), it becomes a symmetric block-circulant
//! matrix C_torus = F* diag(lambda) F, diagonalised by the 2-D DFT, whose eigenvalues lambda are
//! the DFT of its first column. The grid's covariance is the restriction C = R C_torus R^T (R picks
//! the grid's cells out of the torus). When every lambda >= 0, the symmetric square root
//! S = F* diag(lambda^1/2) F is real and gives the exact square root
//!
//!   L = R S  (N x P, P = px py),   L L^T = R C_torus R^T = C,
//!
//! so the whitened coordinates xi ~ N(0, I_P) live on the padded torus ([`Prior::latent_dim`] is
//! P > N), a draw u = L xi is exact, L^T v = S R^T v is the adjoint (pad with zeros, filter), and
//! C x = R F* diag(lambda) F R^T x. Each product costs two real 2-D FFTs of the torus,
//! O(P log P).
//!
//! Choosing the torus. The minimal embedding is not always non-negative definite: the kernel is
//! cut off at half the torus's side, which for long length scales (and smooth kernels) leaves
//! negative eigenvalues. The torus is grown by padding both axes by the same physical width w
//! on each side, w = 0, l/2, 3l/4, l, 5l/4, ..., 128 l (l the length scale), each side
//! rounded up to an even 5-smooth number (fast FFT sizes), until the negative eigenvalues are
//! negligible, or the torus would exceed [`MAX_TORUS_CELLS`]. "Negligible" is a stated bound:
//! clipping the negative eigenvalues to zero changes every covariance entry by at most
//! sum(max(-lambda, 0)) / P, and the embedding is accepted when that bound is at most
//! [`EMBEDDING_TOLERANCE`] times the variance. The clipped eigenvalues are then used
//! throughout (draws, products, the exact posterior's covariances), so all of them describe
//! one and the same prior, and the torus and the most negative eigenvalue clipped are reported
//! ([`Embedding`]). When no torus within the limit qualifies, the prior is refused with an error
//! that says what failed and what to change.

use std::fmt;

use super::torus::TorusFft;
use super::{Embedding, Prior, PriorError};
use crate::model::grid::Grid;
use crate::model::spec::KernelSpec;

/// The largest torus tried, in cells (2^22: 2048 x 2048; the transform's buffers then take
/// about 200 MB).
pub const MAX_TORUS_CELLS: usize = 1 << 22;

/// An embedding is accepted when clipping its negative eigenvalues changes no covariance entry
/// by more than this times the variance.
pub const EMBEDDING_TOLERANCE: f64 = 1e-10;

/// The padding widths tried, in length scales per side: steps of about a quarter, so the torus
/// chosen is at most about 1.3 times wider than the narrowest valid one on the ladder.
const PADDING_LADDER: [f64; 31] = [
    0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 14.0,
    16.0, 20.0, 24.0, 28.0, 32.0, 40.0, 48.0, 56.0, 64.0, 80.0, 96.0, 112.0, 128.0,
];

/// u ~ N(0, C) on a 2-D (or 1-D) grid, C the restriction of a circulant embedding.
#[derive(Clone)]
pub struct CirculantPrior {
    grid: Grid,
    kernel: KernelSpec,
    torus: TorusFft,
    /// max(lambda, 0)^(1/2) / P in the spectrum's layout: the filter of S.
    sqrt_multiplier: Vec<f64>,
    /// max(lambda, 0) / P: the filter of C_torus.
    covariance_multiplier: Vec<f64>,
    /// The covariance used at each torus lag (x fastest): C_ab = this at (|dj|, |di|).
    lag_covariance: Vec<f64>,
    embedding: Embedding,
}

impl fmt::Debug for CirculantPrior {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CirculantPrior")
            .field("grid", &self.grid)
            .field("kernel", &self.kernel)
            .field("embedding", &self.embedding)
            .finish_non_exhaustive()
    }
}

/// One torus tried: its transforms, the kernel on it and its eigenvalues.
struct Candidate {
    torus: TorusFft,
    lag_kernel: Vec<f64>,
    eigenvalues: Vec<f64>,
    /// sum(max(-lambda, 0)) / P: the largest change of a covariance entry if clipped.
    clipped_change: f64,
    most_negative: f64,
}

impl CirculantPrior {
    /// Embed `kernel` on `grid` (nx >= 2), growing the torus until the embedding is valid.
    pub fn new(grid: Grid, kernel: KernelSpec) -> Result<Self, PriorError> {
        if !kernel.is_isotropic() {
            return Err(PriorError::AnisotropicNotSeparable {
                kernel: kernel.kind.name(),
            });
        }
        assert!(grid.nx() >= 2, "a circulant embedding needs nx >= 2");
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(kernel.length_scale) || !positive(kernel.variance) {
            return Err(PriorError::NonFiniteKernel {
                length_scale: kernel.length_scale,
                variance: kernel.variance,
            });
        }
        let allowed = EMBEDDING_TOLERANCE * kernel.variance;
        let mut last: Option<Candidate> = None;
        for (px, py) in torus_sizes(grid, kernel.length_scale) {
            let candidate = Candidate::new(grid, kernel, px, py)?;
            if candidate.clipped_change <= allowed {
                return Ok(Self::from_candidate(grid, kernel, candidate));
            }
            last = Some(candidate);
        }
        let minimal = minimal_torus(grid);
        Err(match last {
            None => PriorError::TorusTooLarge {
                grid: grid.to_string(),
                cells: minimal.0 * minimal.1,
                max_cells: MAX_TORUS_CELLS,
            },
            Some(last) => {
                let (px, py) = last.torus.size();
                PriorError::NoValidEmbedding {
                    kernel: kernel.kind.name(),
                    length_scale: kernel.length_scale,
                    grid: grid.to_string(),
                    torus: format!("{px} x {py}"),
                    most_negative: last.most_negative,
                    change: last.clipped_change,
                    allowed,
                    max_cells: MAX_TORUS_CELLS,
                }
            }
        })
    }

    fn from_candidate(grid: Grid, kernel: KernelSpec, candidate: Candidate) -> Self {
        let torus = candidate.torus;
        let scale = 1.0 / torus.cells() as f64;
        let covariance_multiplier: Vec<f64> = candidate
            .eigenvalues
            .iter()
            .map(|&l| l.max(0.0) * scale)
            .collect();
        let sqrt_multiplier = candidate
            .eigenvalues
            .iter()
            .map(|&l| l.max(0.0).sqrt() * scale)
            .collect();
        let lag_covariance = if candidate.most_negative < 0.0 {
            // The clipped circulant's first column: C_torus e_0.
            let mut scratch = vec![0.0; torus.scratch_len()];
            let field = torus.field(&mut scratch);
            field.fill(0.0);
            field[0] = 1.0;
            let rows = torus.size().1;
            torus.filter(&covariance_multiplier, &mut scratch, rows, rows);
            torus.field(&mut scratch).to_vec()
        } else {
            candidate.lag_kernel
        };
        let (px, py) = torus.size();
        Self {
            grid,
            kernel,
            sqrt_multiplier,
            covariance_multiplier,
            lag_covariance,
            embedding: Embedding {
                torus_x: px,
                torus_y: py,
                most_negative_eigenvalue: candidate.most_negative,
                largest_eigenvalue: candidate
                    .eigenvalues
                    .iter()
                    .copied()
                    .fold(f64::NEG_INFINITY, f64::max),
                covariance_change: candidate.clipped_change,
            },
            torus,
        }
    }

    /// The torus chosen and what clipping cost.
    pub fn embedding(&self) -> Embedding {
        self.embedding
    }

    pub fn kernel(&self) -> KernelSpec {
        self.kernel
    }

    fn restrict(&self, scratch: &mut [f64], out: &mut [f64]) {
        restrict(self.grid, &self.torus, scratch, out);
    }

    fn embed(&self, v: &[f64], scratch: &mut [f64]) {
        embed(self.grid, &self.torus, v, scratch);
    }
}

/// Copy the grid's cells out of the torus field in `scratch` into `out`.
pub(super) fn restrict(grid: Grid, torus: &TorusFft, scratch: &mut [f64], out: &mut [f64]) {
    let (nx, px) = (grid.nx(), torus.size().0);
    let field = torus.field(scratch);
    for (row, torus_row) in out.chunks_exact_mut(nx).zip(field.chunks_exact(px)) {
        row.copy_from_slice(&torus_row[..nx]);
    }
}

/// Write `v` (the grid's N values) into the torus field of `scratch`, zero elsewhere.
pub(super) fn embed(grid: Grid, torus: &TorusFft, v: &[f64], scratch: &mut [f64]) {
    let (nx, px) = (grid.nx(), torus.size().0);
    let field = torus.field(scratch);
    field.fill(0.0);
    for (row, torus_row) in v.chunks_exact(nx).zip(field.chunks_exact_mut(px)) {
        torus_row[..nx].copy_from_slice(row);
    }
}

impl Candidate {
    fn new(grid: Grid, kernel: KernelSpec, px: usize, py: usize) -> Result<Self, PriorError> {
        let torus = TorusFft::new(px, py);
        let lag_kernel = lag_kernel(grid, kernel, px, py);
        if lag_kernel.iter().any(|c| !c.is_finite()) {
            return Err(PriorError::NonFiniteKernel {
                length_scale: kernel.length_scale,
                variance: kernel.variance,
            });
        }
        let eigenvalues = torus.eigenvalues(&lag_kernel);
        let most_negative = eigenvalues.iter().copied().fold(0.0, f64::min);
        Ok(Self {
            clipped_change: clipped_change(&eigenvalues, px, py),
            most_negative,
            torus,
            lag_kernel,
            eigenvalues,
        })
    }
}

/// sum(max(-lambda, 0)) / P over the whole spectrum of a `px x py` torus, from its half
/// `[kx][ky]` layout: the largest change of a covariance entry when the negative eigenvalues
/// are clipped to zero.
pub(super) fn clipped_change(eigenvalues: &[f64], px: usize, py: usize) -> f64 {
    // The spectrum holds kx = 0..=px/2 only; kx and px - kx carry the same eigenvalue, so
    // every column but kx = 0 (and kx = px/2) counts twice in the full sum.
    let half = px / 2 + 1;
    let weight = |kx: usize| if kx == 0 || kx == half - 1 { 1.0 } else { 2.0 };
    let weighted_negative: f64 = eigenvalues
        .chunks_exact(py)
        .enumerate()
        .map(|(kx, column)| weight(kx) * column.iter().map(|&l| (-l).max(0.0)).sum::<f64>())
        .sum();
    weighted_negative / (px * py) as f64
}

/// The kernel at every lag of a `px x py` torus, x fastest, at the wrapped physical distance.
fn lag_kernel(grid: Grid, kernel: KernelSpec, px: usize, py: usize) -> Vec<f64> {
    lag_distances(grid, px, py)
        .into_iter()
        .map(|r| kernel.at_distance(r))
        .collect()
}

/// The wrapped physical distance of every lag of a `px x py` torus, x fastest.
pub(super) fn lag_distances(grid: Grid, px: usize, py: usize) -> Vec<f64> {
    let (hx, hy) = grid.spacing();
    let mut out = Vec::with_capacity(px * py);
    for ty in 0..py {
        let dy = ty.min(py - ty) as f64 * hy;
        for tx in 0..px {
            let dx = tx.min(px - tx) as f64 * hx;
            out.push((dx * dx + dy * dy).sqrt());
        }
    }
    out
}

/// The smallest torus that embeds the grid: 2 (n - 1) points per axis (at least 2 along x, 1
/// along y on a 1-D grid), rounded up to a fast size.
pub(super) fn minimal_torus(grid: Grid) -> (usize, usize) {
    torus_for_padding(grid, 0.0)
}

/// The torus that pads each side of the grid by the physical width `width`.
fn torus_for_padding(grid: Grid, width: f64) -> (usize, usize) {
    let (hx, hy) = grid.spacing();
    let side = |points: usize, spacing: f64| {
        let pad = if width > 0.0 {
            (width / spacing).ceil()
        } else {
            0.0
        };
        // Saturates for absurd widths; the cell limit then stops the search.
        let wanted = 2.0 * (points - 1) as f64 + 2.0 * pad;
        fast_even_size(wanted.min(1e15) as usize)
    };
    let px = side(grid.nx(), hx);
    let py = if grid.ny() == 1 {
        1
    } else {
        side(grid.ny(), hy)
    };
    (px, py)
}

/// The tori to try, smallest first, each distinct and within [`MAX_TORUS_CELLS`].
pub(super) fn torus_sizes(grid: Grid, length_scale: f64) -> Vec<(usize, usize)> {
    let mut sizes: Vec<(usize, usize)> = Vec::new();
    for factor in PADDING_LADDER {
        let size = torus_for_padding(grid, factor * length_scale);
        if size.0.saturating_mul(size.1) > MAX_TORUS_CELLS {
            break;
        }
        if sizes.last() != Some(&size) {
            sizes.push(size);
        }
    }
    sizes
}

/// The smallest even number >= max(n, 2) whose prime factors are 2, 3 and 5.
fn fast_even_size(n: usize) -> usize {
    let mut m = n.max(2);
    loop {
        if m.is_multiple_of(2) {
            let mut r = m;
            for p in [2, 3, 5] {
                while r.is_multiple_of(p) {
                    r /= p;
                }
            }
            if r == 1 {
                return m;
            }
        }
        m += 1;
    }
}

impl Prior for CirculantPrior {
    fn grid(&self) -> Grid {
        self.grid
    }

    /// P = px * py: the whitened coordinates live on the torus.
    fn latent_dim(&self) -> usize {
        self.torus.cells()
    }

    fn scratch_len(&self) -> usize {
        self.torus.scratch_len()
    }

    /// u = R S xi.
    fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.torus.field(scratch).copy_from_slice(xi);
        let (py, ny) = (self.torus.size().1, self.grid.ny());
        self.torus.filter(&self.sqrt_multiplier, scratch, py, ny);
        self.restrict(scratch, out);
    }

    /// L^T v = S R^T v (S is symmetric).
    fn apply_sqrt_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.embed(v, scratch);
        let (py, ny) = (self.torus.size().1, self.grid.ny());
        self.torus.filter(&self.sqrt_multiplier, scratch, ny, py);
        out.copy_from_slice(self.torus.field(scratch));
    }

    /// C x = R C_torus R^T x.
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]) {
        let mut scratch = vec![0.0; self.torus.scratch_len()];
        self.embed(x, &mut scratch);
        let ny = self.grid.ny();
        self.torus
            .filter(&self.covariance_multiplier, &mut scratch, ny, ny);
        self.restrict(&mut scratch, out);
    }

    fn covariance(&self, a: usize, b: usize) -> f64 {
        let ((ia, ja), (ib, jb)) = (self.grid.cell(a), self.grid.cell(b));
        let px = self.torus.size().0;
        self.lag_covariance[ja.abs_diff(jb) * px + ia.abs_diff(ib)]
    }

    fn jitter(&self) -> f64 {
        0.0
    }

    fn embedding(&self) -> Option<Embedding> {
        Some(self.embedding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_sizes_are_even_and_five_smooth() {
        assert_eq!(fast_even_size(0), 2);
        assert_eq!(fast_even_size(7), 8);
        assert_eq!(fast_even_size(126), 128);
        assert_eq!(fast_even_size(130), 144);
        assert_eq!(fast_even_size(510), 512);
        assert_eq!(fast_even_size(14), 16);
        assert_eq!(fast_even_size(22), 24);
    }

    #[test]
    fn the_minimal_torus_embeds_the_grid() {
        assert_eq!(minimal_torus(Grid::new(64)), (128, 128));
        assert_eq!(minimal_torus(Grid::rectangular(9, 5)), (16, 8));
        assert_eq!(minimal_torus(Grid::line(811)), (1620, 1));
        let sizes = torus_sizes(Grid::new(64), 0.1);
        assert_eq!(sizes[0], (128, 128));
        assert!(sizes.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
