//! Separable priors held in Kronecker form: the squared-exponential kernel on any grid, and any
//! kernel on a 1-D grid.
//!
//! A separable kernel on a regular grid gives C = C_y (x) C_x, where C_x (nx x nx) and C_y
//! (ny x ny) are the kernels of the two axes, each with amplitude sqrt(variance) so the product
//! carries the variance once (on a 1-D grid C_y is the 1 x 1 matrix [sqrt(variance)]). Only the
//! axis kernels are factored, C_a + jitter I = L_a L_a^T, and the square root L = L_y (x) L_x is
//! applied as two matrix products, `U = L_x Xi L_y^T` (U in the grid's column-major layout),
//! costing O(N (nx + ny)) with no N x N matrix ever formed. Because L_x and L_y are lower
//! triangular, both products skip their zero upper triangles in bands of rows, which brings them
//! towards half the multiply-adds. On a square grid the two axes are one matrix, and the numbers
//! are those of the square-only prior this generalises, bit for bit.
//!
//! The axis kernels are badly conditioned for long length scales (at l = 10 they are numerically
//! rank one). The factorisation escalates one diagonal jitter, added to every axis with more
//! than one point, from zero until Cholesky succeeds on all of them, and records it; everything
//! downstream (simulation, sampling, the exact posterior) uses the same jittered C, so they
//! describe one and the same prior.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

use super::{Prior, PriorError};
use crate::model::grid::{Axis, Grid};
use crate::model::spec::KernelSpec;

/// The jitters tried, relative to the amplitude sqrt(variance), in order.
const JITTER_LADDER: [f64; 10] = [0.0, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4];

/// One axis's factor L_a and its jittered kernel C_a + jitter I = L_a L_a^T.
#[derive(Debug, Clone)]
struct AxisFactor {
    factor: Mat<f64>,
    covariance: Mat<f64>,
}

/// u ~ N(0, C) on a grid, C = C_y (x) C_x, with lower-triangular square roots of each axis.
#[derive(Debug, Clone)]
pub struct KroneckerPrior {
    grid: Grid,
    kernel: KernelSpec,
    x: AxisFactor,
    y: AxisFactor,
    /// The absolute jitter added to the diagonal of each axis kernel with more than one point.
    jitter: f64,
}

impl KroneckerPrior {
    /// Factor the axis kernels of `kernel` on `grid`, escalating jitter as needed. The kernel
    /// must be separable on the grid: the squared exponential, or any kernel on a grid with one
    /// point along an axis.
    pub fn new(grid: Grid, kernel: KernelSpec) -> Result<Self, PriorError> {
        if !kernel.kind.is_separable() && grid.nx() > 1 && grid.ny() > 1 {
            return Err(PriorError::NotSeparable {
                kernel: kernel.kind.name(),
                grid: grid.to_string(),
            });
        }
        let kernels = [
            axis_kernel_matrix(grid.x_axis(), kernel),
            axis_kernel_matrix(grid.y_axis(), kernel.along_y()),
        ];
        if kernels.iter().any(|k| !k.is_all_finite()) {
            return Err(PriorError::NonFiniteKernel {
                length_scale: kernel.length_scale,
                variance: kernel.variance,
            });
        }
        let amplitude = kernel.variance.sqrt();
        for relative in JITTER_LADDER {
            let jitter = relative * amplitude;
            let Some(x) = factor_axis(&kernels[0], jitter) else {
                continue;
            };
            let y = if grid.y_axis() == grid.x_axis() && kernel.is_isotropic() {
                x.clone()
            } else {
                match factor_axis(&kernels[1], jitter) {
                    Some(y) => y,
                    None => continue,
                }
            };
            return Ok(Self {
                grid,
                kernel,
                x,
                y,
                jitter,
            });
        }
        Err(PriorError::NotPositiveDefinite {
            grid: grid.to_string(),
            length_scale: kernel.length_scale,
            max_jitter: JITTER_LADDER[JITTER_LADDER.len() - 1] * amplitude,
        })
    }

    pub fn grid(&self) -> Grid {
        self.grid
    }

    pub fn kernel(&self) -> KernelSpec {
        self.kernel
    }

    /// The jitter added to the diagonal of the axis kernels (0 when none was needed).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// L_x, the lower-triangular factor of the x axis.
    pub(crate) fn axis_factor(&self) -> MatRef<'_, f64> {
        self.x.factor.as_ref()
    }

    /// L_y, the lower-triangular factor of the y axis (1 x 1 on a 1-D grid).
    pub(crate) fn y_axis_factor(&self) -> MatRef<'_, f64> {
        self.y.factor.as_ref()
    }

    /// C_x + jitter I = L_x L_x^T, the x axis covariance the prior actually uses.
    pub fn axis_covariance(&self) -> MatRef<'_, f64> {
        self.x.covariance.as_ref()
    }

    /// u = L xi for one field: `out = L_x Xi L_y^T` in the grid's column-major layout.
    /// `scratch` holds N values.
    ///
    /// Both products skip the zero upper triangle of their factor band by band (see
    /// [`BAND_ROWS`]): rows `r0..r1` of `L_x Xi` need only columns `0..r1` of L_x, and likewise
    /// for the columns of `(L_x Xi) L_y^T`. With B bands a product costs (B + 1) / (2B) of the
    /// full one, as plain sequential GEMMs, which at these sizes beats a triangular product.
    pub(crate) fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        let xi = MatRef::from_column_major_slice(xi, nx, ny);
        let mut half = MatMut::from_column_major_slice_mut(&mut scratch[..nx * ny], nx, ny);
        let lx = self.x.factor.as_ref();
        let ly = self.y.factor.as_ref();
        // half = L_x Xi, one band of rows at a time.
        for (r0, rows) in bands(nx) {
            let end = r0 + rows;
            matmul(
                half.as_mut().subrows_mut(r0, rows),
                Accum::Replace,
                lx.submatrix(r0, 0, rows, end),
                xi.subrows(0, end),
                1.0,
                Par::Seq,
            );
        }
        // out = half L_y^T, one band of columns at a time.
        let mut out = MatMut::from_column_major_slice_mut(out, nx, ny);
        for (c0, cols) in bands(ny) {
            let end = c0 + cols;
            matmul(
                out.as_mut().subcols_mut(c0, cols),
                Accum::Replace,
                half.as_ref().subcols(0, end),
                ly.submatrix(c0, 0, cols, end).transpose(),
                1.0,
                Par::Seq,
            );
        }
    }
}

/// The Cholesky factor of `kernel + jitter I` with the jittered matrix it reproduces, if the
/// factorisation succeeds. A 1 x 1 axis (a 1-D grid's y) is never jittered.
fn factor_axis(kernel: &Mat<f64>, jitter: f64) -> Option<AxisFactor> {
    let mut jittered = kernel.clone();
    if kernel.nrows() > 1 {
        for k in 0..kernel.nrows() {
            jittered[(k, k)] += jitter;
        }
    }
    let llt = jittered.llt(Side::Lower).ok()?;
    let factor = llt.L().to_owned();
    let covariance = &factor * factor.transpose();
    Some(AxisFactor { factor, covariance })
}

impl Prior for KroneckerPrior {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn latent_dim(&self) -> usize {
        self.grid.cells()
    }

    fn scratch_len(&self) -> usize {
        self.grid.cells()
    }

    fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        KroneckerPrior::apply_sqrt(self, xi, out, scratch);
    }

    /// L^T v = (L_y^T (x) L_x^T) v, as the matrix product `L_x^T V L_y`.
    fn apply_sqrt_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        let v = MatRef::from_column_major_slice(v, nx, ny);
        let mut half = MatMut::from_column_major_slice_mut(&mut scratch[..nx * ny], nx, ny);
        matmul(
            half.as_mut(),
            Accum::Replace,
            self.x.factor.transpose(),
            v,
            1.0,
            Par::Seq,
        );
        let out = MatMut::from_column_major_slice_mut(out, nx, ny);
        matmul(
            out,
            Accum::Replace,
            half.as_ref(),
            self.y.factor.as_ref(),
            1.0,
            Par::Seq,
        );
    }

    /// C x as `C_x X C_y^T`, with the jittered axis covariances.
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]) {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        let x = MatRef::from_column_major_slice(x, nx, ny);
        let half = self.x.covariance.as_ref() * x;
        let mut out = MatMut::from_column_major_slice_mut(out, nx, ny);
        out.copy_from(&half * self.y.covariance.transpose());
    }

    /// `C_x [X_1 ... X_count]` as one product (the fields side by side are an nx x (ny count)
    /// matrix), then each block times `C_y^T`.
    fn apply_covariance_batch(&self, x: &[f64], out: &mut [f64], count: usize) {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        let n = nx * ny;
        let wide = MatRef::from_column_major_slice(&x[..n * count], nx, ny * count);
        let half = self.x.covariance.as_ref() * wide;
        for (j, target) in out.chunks_exact_mut(n).take(count).enumerate() {
            matmul(
                MatMut::from_column_major_slice_mut(target, nx, ny),
                Accum::Replace,
                half.as_ref().subcols(j * ny, ny),
                self.y.covariance.transpose(),
                1.0,
                Par::Seq,
            );
        }
    }

    fn covariance(&self, a: usize, b: usize) -> f64 {
        let ((ia, ja), (ib, jb)) = (self.grid.cell(a), self.grid.cell(b));
        self.x.covariance[(ia, ib)] * self.y.covariance[(ja, jb)]
    }

    /// Each cell's axis indices found once, then two table reads an entry (the same products as
    /// [`Prior::covariance`]'s, without a division or a dynamic call per entry).
    fn covariance_lower(&self, cells: &[usize], mut out: MatMut<'_, f64>) {
        let at: Vec<(usize, usize)> = cells.iter().map(|&c| self.grid.cell(c)).collect();
        for (b, &(ib, jb)) in at.iter().enumerate() {
            let (x, y) = (self.x.covariance.col(ib), self.y.covariance.col(jb));
            for (a, &(ia, ja)) in at.iter().enumerate().skip(b) {
                out[(a, b)] = x[ia] * y[ja];
            }
        }
    }

    fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The Kronecker spectral root is C_1 (x) C_1: offered only when both axes have the same
    /// kernel matrix (a square grid over a square window, isotropic kernel). A rectangular
    /// window, a rectangular grid or a length scale per axis fall back to the whitened root.
    fn spectral_root(&self) -> Option<std::sync::Arc<dyn super::spectral::SpectralRoot>> {
        (self.x.covariance == self.y.covariance).then(|| {
            std::sync::Arc::new(super::spectral::KroneckerSpectral::new(self))
                as std::sync::Arc<dyn super::spectral::SpectralRoot>
        })
    }
}

/// Rows per band when the products skip L_1's zero upper triangle. Measured (D = 32..256, one
/// core): bands of 32 rows beat one full product by 1.2x (D = 64) to 1.7x (D = 256) and faer's
/// recursive triangular product by 1.1x to 1.4x; thinner bands lose more to GEMM overhead than
/// they save in skipped zeros.
pub const BAND_ROWS: usize = 32;

/// The bands `(first row, rows)` that cover `0..side`, each `BAND_ROWS` rows (the last one
/// shorter). Depends on `side` alone, so every product of a prior is computed the same way.
fn bands(side: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..side)
        .step_by(BAND_ROWS)
        .map(move |r0| (r0, BAND_ROWS.min(side - r0)))
}

/// The kernel matrix of one axis, amplitude sqrt(variance): sqrt(variance) rho(|delta| / l).
/// The squared exponential keeps the form sqrt(variance) exp(-delta^2 / (2 l^2)).
pub fn axis_kernel_matrix(axis: Axis, kernel: KernelSpec) -> Mat<f64> {
    let amplitude = kernel.variance.sqrt();
    let unit = KernelSpec {
        variance: 1.0,
        ..kernel
    };
    Mat::from_fn(axis.points(), axis.points(), |a, b| {
        let delta = axis.coordinate(a) - axis.coordinate(b);
        amplitude * unit.at_squared_distance(delta * delta)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::prior::dense_kernel_matrix;

    fn kernel(l: f64) -> KernelSpec {
        KernelSpec::squared_exponential(l, 1.0)
    }

    /// L (x) L applied column by column must reconstruct the dense C: L L^T = C.
    #[test]
    fn kronecker_square_root_reconstructs_the_dense_kernel() {
        for (d, l) in [(4, 0.3), (6, 0.1), (7, 0.5)] {
            let grid = Grid::new(d);
            let prior = KroneckerPrior::new(grid, kernel(l)).unwrap();
            assert_eq!(prior.jitter(), 0.0, "D={d} l={l} should need no jitter");
            let n = grid.cells();
            // Columns of L: L e_k.
            let mut lmat = Mat::<f64>::zeros(n, n);
            let mut e = vec![0.0; n];
            let mut col = vec![0.0; n];
            let mut scratch = vec![0.0; n];
            for k in 0..n {
                e.fill(0.0);
                e[k] = 1.0;
                prior.apply_sqrt(&e, &mut col, &mut scratch);
                for r in 0..n {
                    lmat[(r, k)] = col[r];
                }
            }
            let reconstructed = &lmat * lmat.transpose();
            let dense = dense_kernel_matrix(grid, kernel(l));
            let err = (&reconstructed - &dense).norm_max() / dense.norm_max();
            assert!(err < 1e-10, "D={d} l={l}: relative error {err:e}");
        }
    }

    #[test]
    fn batched_square_root_matches_one_at_a_time() {
        let grid = Grid::new(5);
        let prior = KroneckerPrior::new(grid, kernel(0.3)).unwrap();
        let n = grid.cells();
        let xi: Vec<f64> = (0..3 * n)
            .map(|k| ((k * 37 % 11) as f64 - 5.0) / 3.0)
            .collect();
        let mut batched = vec![0.0; 3 * n];
        let mut scratch = vec![0.0; 3 * n];
        prior.apply_sqrt_batch(&xi, &mut batched, &mut scratch, 3);
        for c in 0..3 {
            let mut single = vec![0.0; n];
            let mut s = vec![0.0; n];
            prior.apply_sqrt(&xi[c * n..(c + 1) * n], &mut single, &mut s);
            // Bit for bit: a field's numbers must not depend on the batch it came in.
            for k in 0..n {
                assert_eq!(single[k].to_bits(), batched[c * n + k].to_bits());
            }
        }
    }

    /// Grids of several bands, the last one partial, against the plain product L_1 Xi L_1^T.
    #[test]
    fn banded_square_root_matches_the_plain_product() {
        for d in [31, 32, 33, 70, 100] {
            let grid = Grid::new(d);
            let prior = KroneckerPrior::new(grid, kernel(0.2)).unwrap();
            let n = grid.cells();
            let xi: Vec<f64> = (0..n)
                .map(|k| ((k * 7919 % 23) as f64 - 11.0) / 5.0)
                .collect();
            let mut out = vec![0.0; n];
            let mut scratch = vec![0.0; n];
            prior.apply_sqrt(&xi, &mut out, &mut scratch);
            let l = prior.axis_factor();
            let expected = l * MatRef::from_column_major_slice(&xi, d, d) * l.transpose();
            let scale = expected.norm_max();
            for j in 0..d {
                for i in 0..d {
                    let err = (out[j * d + i] - expected[(i, j)]).abs() / scale;
                    assert!(err < 1e-13, "D={d} ({i}, {j}): relative error {err:e}");
                }
            }
        }
    }

    #[test]
    fn bands_cover_the_side_once() {
        for side in [1, 31, 32, 33, 64, 100, 256] {
            let mut next = 0;
            for (r0, rows) in bands(side) {
                assert_eq!(r0, next);
                assert!((1..=BAND_ROWS).contains(&rows));
                next = r0 + rows;
            }
            assert_eq!(next, side);
        }
    }

    #[test]
    fn long_length_scales_are_factored_with_recorded_jitter() {
        let prior = KroneckerPrior::new(Grid::new(32), kernel(10.0)).unwrap();
        assert!(prior.jitter() > 0.0);
        // What the job reports reads it through the trait.
        assert_eq!(Prior::jitter(&prior), prior.jitter());
        let c1 = prior.axis_covariance();
        let k1 = axis_kernel_matrix(Grid::new(32).x_axis(), kernel(10.0));
        // The factor reproduces the jittered kernel.
        for a in 0..32 {
            for b in 0..32 {
                let expected = k1[(a, b)] + if a == b { prior.jitter() } else { 0.0 };
                assert!((c1[(a, b)] - expected).abs() < 1e-12);
            }
        }
    }

    /// The fast lower triangle is [`Prior::covariance`]'s, bit for bit, on any cells in any
    /// order, and leaves the upper triangle alone.
    #[test]
    fn the_lower_triangle_is_the_covariances() {
        let grid = Grid::new(6);
        let prior = KroneckerPrior::new(grid, kernel(0.25)).unwrap();
        let cells = [7, 0, 35, 12, 13, 29, 7];
        let mut out = Mat::<f64>::from_fn(cells.len(), cells.len(), |_, _| -1.0);
        prior.covariance_lower(&cells, out.as_mut());
        for (b, &cell_b) in cells.iter().enumerate() {
            for (a, &cell_a) in cells.iter().enumerate() {
                let want = if a >= b {
                    prior.covariance(cell_a, cell_b)
                } else {
                    -1.0
                };
                assert_eq!(out[(a, b)].to_bits(), want.to_bits(), "({a}, {b})");
            }
        }
    }

    #[test]
    fn covariance_product_matches_square_root_twice() {
        let grid = Grid::new(6);
        let prior = KroneckerPrior::new(grid, kernel(0.25)).unwrap();
        let n = grid.cells();
        let x: Vec<f64> = (0..n).map(|k| (k as f64).sin()).collect();
        let mut cx = vec![0.0; n];
        prior.apply_covariance(&x, &mut cx);
        let dense = dense_kernel_matrix(grid, kernel(0.25));
        for r in 0..n {
            let expected: f64 = (0..n).map(|k| dense[(r, k)] * x[k]).sum();
            assert!((cx[r] - expected).abs() < 1e-10);
        }
    }

    /// <L x, v> = <x, L^T v> for every x and v: the transpose is the adjoint of the square root.
    #[test]
    fn transpose_is_the_adjoint_of_the_square_root() {
        for d in [1, 5, 33, 40] {
            let prior = KroneckerPrior::new(Grid::new(d), kernel(0.15)).unwrap();
            let n = d * d;
            let x: Vec<f64> = (0..n).map(|k| ((k * 31 % 17) as f64 - 8.0) / 7.0).collect();
            let v: Vec<f64> = (0..n).map(|k| ((k * 13 % 19) as f64 - 9.0) / 5.0).collect();
            let (mut lx, mut ltv, mut scratch) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            Prior::apply_sqrt(&prior, &x, &mut lx, &mut scratch);
            prior.apply_sqrt_transpose(&v, &mut ltv, &mut scratch);
            let left: f64 = lx.iter().zip(&v).map(|(a, b)| a * b).sum();
            let right: f64 = x.iter().zip(&ltv).map(|(a, b)| a * b).sum();
            assert!((left - right).abs() < 1e-12 * left.abs().max(1.0), "D={d}");
        }
    }

    #[test]
    fn covariance_entries_match_the_dense_kernel() {
        let grid = Grid::new(4);
        let prior = KroneckerPrior::new(grid, kernel(0.35)).unwrap();
        let dense = dense_kernel_matrix(grid, kernel(0.35));
        for a in 0..16 {
            for b in 0..16 {
                assert!((prior.covariance(a, b) - dense[(a, b)]).abs() < 1e-12);
            }
        }
    }
}
