//! A separable prior's square root as a differentiable function of the length scale, for the
//! chains that move the hyperparameters and the field together (`sampler.hyper = "joint"`).
//!
//! The joint chain moves (log l, log variance, mean, xi) with u = mean + sqrt(variance) S(l) xi,
//! so it needs d(S(l) xi) / d log l. A Cholesky factor's derivative is awkward and the
//! eigenvectors' derivatives divide by eigenvalue gaps, which vanish in the long tail of a
//! squared-exponential kernel's spectrum. The **symmetric** square root has neither problem:
//! each axis kernel (unit variance, with the constant jitter [`AXIS_JITTER`]) is
//! K + eps I = Q diag(lambda) Q^T, its root is S = Q diag(sqrt lambda) Q^T, and differentiating
//! S S = K gives (Daleckii & Krein)
//!
//!   dS = Q (H o (Q^T dK Q)) Q^T,   H_ij = 1 / (sqrt lambda_i + sqrt lambda_j),
//!
//! a divided difference of the square root with no gap in its denominator: H is bounded by
//! 1 / (2 sqrt eps) however the eigenvalues cluster. dK / d log l is closed form:
//! rho(r / l) depends on l through s = r / l, so d rho / d log l = -s rho'(s)
//! ([`KernelKind::log_length_scale_derivative`]).
//!
//! Each axis's matrices are computed half by half: on evenly spaced points the kernel and its
//! slope are symmetric Toeplitz, hence centrosymmetric, so they split into a block on the
//! mirror-symmetric vectors and one on the antisymmetric ones ([`Mirror`]); two
//! eigendecompositions of half the size cost about a quarter of one of the whole (which a
//! gradient of the joint chain pays once per axis, and which dominated its cost).
//!
//! The grid's root is S_y (x) S_x, applied as U = S_x Xi S_y (Xi the nx x ny layout of xi, as in
//! [`super::KroneckerPrior`]), and since S = P blockdiag(B_even, B_odd) P^T on each axis, as
//! P_x B_x (P_x^T Xi P_y) B_y P_y^T: the P's are O(N) sums and differences of mirrored rows and
//! columns, and each B product is two half-size ones, half the flops of the whole matrix's. The
//! derivatives of <G, U> with respect to log l_x and log l_y reuse the forward and backward
//! passes' products ([`SeparableRoot::backward`]): a gradient costs six half-size products in all,
//! O(N (nx + ny)). Any
//! square root gives the same prior, so the joint chain's u has the distribution every other
//! kind's has; only the whitened coordinates differ.

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par, Side};

use super::PriorError;
use crate::model::grid::{Axis, Grid};
use crate::model::laplace::cg::dot;
use crate::model::spec::KernelKind;

/// The jitter added to every unit-variance axis kernel with more than one point: constant, so
/// that the root stays a smooth function of the length scale (the Cholesky prior's escalating
/// ladder jumps). The covariance is that of the kernel plus a nugget of about 2e-8 of the
/// variance.
pub(crate) const AXIS_JITTER: f64 = 1e-8;

/// One axis's kernel K + eps I = Q diag(lambda) Q^T (unit variance) and the derivative of K in
/// log l in that eigenbasis, R = Q^T (dK / d log l) Q.
#[derive(Debug, Clone)]
pub(crate) struct AxisEigen {
    pub(crate) vectors: Mat<f64>,
    /// lambda, each at least half the jitter (rounding can leave one a little below it).
    pub(crate) values: Vec<f64>,
    pub(crate) rotated_slope: Mat<f64>,
}

impl AxisEigen {
    /// The eigendecomposition of `kind`'s unit-variance kernel with length scale `length_scale`
    /// on `axis`.
    pub(crate) fn new(axis: Axis, kind: KernelKind, length_scale: f64) -> Result<Self, PriorError> {
        let halves = AxisHalves::new(axis, kind, length_scale)?;
        let n = halves.mirror.n;
        let values = [&halves.even, &halves.odd]
            .iter()
            .flat_map(|half| half.values.iter().copied())
            .collect();
        let vectors = halves
            .mirror
            .expand_columns(halves.even.vectors.as_ref(), halves.odd.vectors.as_ref());
        let (even, odd) = (&halves.even.rotated_slope, &halves.odd.rotated_slope);
        let m = even.nrows();
        // R is block diagonal: the slope is centrosymmetric too, so it maps even vectors to even.
        let rotated_slope = Mat::from_fn(n, n, |i, j| match (i < m, j < m) {
            (true, true) => even[(i, j)],
            (false, false) => odd[(i - m, j - m)],
            _ => 0.0,
        });
        crate::simd_state::clear_upper_state();
        Ok(Self {
            vectors,
            values,
            rotated_slope,
        })
    }
}

/// The eigendecomposition of one half of a centrosymmetric axis kernel (see [`Mirror`]): its
/// eigenvectors in the half's own coordinates, its eigenvalues and the slope's block
/// R = Q^T (dK / d log l) Q.
#[derive(Debug, Clone)]
struct HalfEigen {
    vectors: Mat<f64>,
    values: Vec<f64>,
    rotated_slope: Mat<f64>,
}

/// An axis kernel's eigendecomposition, computed as its two halves'.
#[derive(Debug, Clone)]
struct AxisHalves {
    mirror: Mirror,
    even: HalfEigen,
    odd: HalfEigen,
}

impl AxisHalves {
    fn new(axis: Axis, kind: KernelKind, length_scale: f64) -> Result<Self, PriorError> {
        crate::simd_state::clear_upper_state();
        let n = axis.points();
        // The points are evenly spaced, so both matrices are symmetric Toeplitz: n values each.
        let scaled: Vec<f64> = (0..n)
            .map(|k| (axis.coordinate(k) - axis.coordinate(0)).abs() / length_scale)
            .collect();
        let jitter = if n > 1 { AXIS_JITTER } else { 0.0 };
        let mut correlations: Vec<f64> = scaled.iter().map(|&s| kind.correlation(s)).collect();
        correlations[0] += jitter;
        let slopes: Vec<f64> = scaled
            .iter()
            .map(|&s| kind.log_length_scale_derivative(s))
            .collect();
        if !(correlations.iter().chain(&slopes).all(|v| v.is_finite())) {
            return Err(PriorError::NonFiniteKernel {
                length_scale,
                variance: 1.0,
            });
        }
        let mirror = Mirror::new(n);
        let half = |parity: Parity| -> Result<HalfEigen, PriorError> {
            let kernel = mirror.toeplitz_half(&correlations, parity);
            let slope = mirror.toeplitz_half(&slopes, parity);
            if kernel.nrows() == 0 {
                return Ok(HalfEigen {
                    vectors: kernel.clone(),
                    values: Vec::new(),
                    rotated_slope: kernel,
                });
            }
            crate::simd_state::clear_upper_state();
            let eigen = kernel.self_adjoint_eigen(Side::Lower).map_err(|_| {
                PriorError::NotPositiveDefinite {
                    grid: format!("{n}-point axis"),
                    length_scale,
                    max_jitter: jitter,
                }
            })?;
            let vectors = eigen.U().to_owned();
            let values = (0..vectors.ncols())
                .map(|k| eigen.S()[k].max(0.5 * jitter.max(f64::MIN_POSITIVE)))
                .collect();
            let rotated_slope = vectors.transpose() * &slope * &vectors;
            Ok(HalfEigen {
                vectors,
                values,
                rotated_slope,
            })
        };
        let even = half(Parity::Even)?;
        let odd = half(Parity::Odd)?;
        crate::simd_state::clear_upper_state();
        Ok(Self { mirror, even, odd })
    }
}

/// Which half of a centrosymmetric matrix: its action on vectors with x_a = x_(n-1-a) (even) or
/// x_a = -x_(n-1-a) (odd).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Parity {
    Even,
    Odd,
}

/// The mirror symmetry of an n-point axis. A symmetric Toeplitz matrix T (every axis kernel on
/// evenly spaced points, and its slope) is centrosymmetric, J T J = T with J the reversal, so in
/// the orthonormal basis P of even vectors (e_a + e_(n-1-a)) / sqrt 2 for a < m = floor(n / 2)
/// (and e_m itself when n is odd) followed by odd vectors (e_a - e_(n-1-a)) / sqrt 2, P^T T P is
/// block diagonal: an even block of ceil(n / 2) and an odd block of floor(n / 2). An
/// eigendecomposition then costs two of half the size, about a quarter of the work, and every
/// matrix function of T (its root, the root's derivative) is P blockdiag(f(even), f(odd)) P^T,
/// each entry a combination of one entry of each block.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mirror {
    n: usize,
}

impl Mirror {
    fn new(n: usize) -> Self {
        Self { n }
    }

    /// floor(n / 2): the odd block's size, and the number of mirrored pairs.
    fn pairs(&self) -> usize {
        self.n / 2
    }

    /// ceil(n / 2): the even block's size.
    fn even_size(&self) -> usize {
        self.n - self.pairs()
    }

    /// The block of the symmetric Toeplitz matrix with first row `t` on the vectors of `parity`.
    fn toeplitz_half(&self, t: &[f64], parity: Parity) -> Mat<f64> {
        let (n, m) = (self.n, self.pairs());
        let sign = match parity {
            Parity::Even => 1.0,
            Parity::Odd => -1.0,
        };
        let size = match parity {
            Parity::Even => self.even_size(),
            Parity::Odd => m,
        };
        Mat::from_fn(size, size, |i, j| match (i < m, j < m) {
            // Two mirrored pairs: T_ij + sign T_i,(n-1-j) (the other two terms are the same).
            (true, true) => t[i.abs_diff(j)] + sign * t[n - 1 - i - j],
            // A pair and the middle point (odd n, even block only).
            (true, false) => std::f64::consts::SQRT_2 * t[m - i],
            (false, true) => std::f64::consts::SQRT_2 * t[m - j],
            (false, false) => t[0],
        })
    }

    /// Where point a sits in the halves: its pair (or the middle, index m) and its coefficients
    /// in P's even and odd columns of that pair.
    fn coefficients(&self, a: usize) -> (usize, f64, f64) {
        let m = self.pairs();
        let half = std::f64::consts::FRAC_1_SQRT_2;
        if a < m {
            (a, half, half)
        } else if self.n - 1 - a < m {
            (self.n - 1 - a, half, -half)
        } else {
            (m, 1.0, 0.0)
        }
    }

    /// P blockdiag(even, odd): the halves' eigenvectors as the axis's.
    fn expand_columns(&self, even: MatRef<'_, f64>, odd: MatRef<'_, f64>) -> Mat<f64> {
        let e = self.even_size();
        Mat::from_fn(self.n, self.n, |a, k| {
            let (pair, c_even, c_odd) = self.coefficients(a);
            if k < e {
                c_even * even[(pair, k)]
            } else if c_odd == 0.0 {
                0.0
            } else {
                c_odd * odd[(pair, k - e)]
            }
        })
    }

    /// dst = P^T src along the first axis of the column-major rows x columns array `src` (each
    /// column's even coordinates, then its odd ones).
    fn halve_rows(&self, src: &[f64], dst: &mut [f64]) {
        let (n, m, e) = (self.n, self.pairs(), self.even_size());
        let half = std::f64::consts::FRAC_1_SQRT_2;
        for (s, d) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
            let (even, odd) = d.split_at_mut(e);
            for k in 0..m {
                let (a, b) = (s[k], s[n - 1 - k]);
                even[k] = half * (a + b);
                odd[k] = half * (a - b);
            }
            if e > m {
                even[m] = s[m];
            }
        }
    }

    /// dst = P src along the first axis (the inverse of [`Mirror::halve_rows`]).
    fn join_rows(&self, src: &[f64], dst: &mut [f64]) {
        let (n, m, e) = (self.n, self.pairs(), self.even_size());
        let half = std::f64::consts::FRAC_1_SQRT_2;
        for (s, d) in src.chunks_exact(n).zip(dst.chunks_exact_mut(n)) {
            let (even, odd) = s.split_at(e);
            for k in 0..m {
                let (a, b) = (even[k], odd[k]);
                d[k] = half * (a + b);
                d[n - 1 - k] = half * (a - b);
            }
            if e > m {
                d[m] = even[m];
            }
        }
    }

    /// dst = P^T src along the second axis of a column-major array of `rows` rows: whole
    /// columns combined (each a contiguous line of `rows` values).
    fn halve_columns(&self, src: &[f64], dst: &mut [f64], rows: usize) {
        let (n, m, e) = (self.n, self.pairs(), self.even_size());
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let column = |k: usize| &src[k * rows..(k + 1) * rows];
        for k in 0..m {
            let (a, b) = (column(k), column(n - 1 - k));
            let (even, odd) = dst.split_at_mut((e + k) * rows);
            let even = &mut even[k * rows..(k + 1) * rows];
            for (((d_even, d_odd), &a), &b) in even.iter_mut().zip(odd.iter_mut()).zip(a).zip(b) {
                *d_even = half * (a + b);
                *d_odd = half * (a - b);
            }
        }
        if e > m {
            dst[m * rows..e * rows].copy_from_slice(column(m));
        }
    }

    /// dst = P src along the second axis (the inverse of [`Mirror::halve_columns`]).
    fn join_columns(&self, src: &[f64], dst: &mut [f64], rows: usize) {
        let (n, m, e) = (self.n, self.pairs(), self.even_size());
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let column = |k: usize| &src[k * rows..(k + 1) * rows];
        for k in 0..m {
            let (even, odd) = (column(k), column(e + k));
            let (low, high) = dst.split_at_mut((n - 1 - k) * rows);
            let low = &mut low[k * rows..(k + 1) * rows];
            for (((d_low, d_high), &a), &b) in
                low.iter_mut().zip(high.iter_mut()).zip(even).zip(odd)
            {
                *d_low = half * (a + b);
                *d_high = half * (a - b);
            }
        }
        if e > m {
            dst[m * rows..e * rows].copy_from_slice(column(m));
        }
    }

    /// P blockdiag(even, odd) P^T: the matrix whose halves are `even` and `odd`.
    fn expand(&self, even: MatRef<'_, f64>, odd: MatRef<'_, f64>) -> Mat<f64> {
        Mat::from_fn(self.n, self.n, |a, b| {
            let (pa, ea, oa) = self.coefficients(a);
            let (pb, eb, ob) = self.coefficients(b);
            let odd_part = if oa == 0.0 || ob == 0.0 {
                0.0
            } else {
                oa * ob * odd[(pa, pb)]
            };
            ea * eb * even[(pa, pb)] + odd_part
        })
    }
}

/// One axis's symmetric root S = (K + eps I)^(1/2) and its derivative in log l, kept as their
/// blocks on the mirror halves ([`Mirror`]): P^T S P = blockdiag(root[0], root[1]) (even, odd
/// vectors), and likewise the derivative. The products of the joint chain's gradient run in
/// that basis, block by block: half the flops of the whole matrices' products.
#[derive(Debug, Clone)]
pub(crate) struct AxisRoot {
    mirror: Mirror,
    root: [Mat<f64>; 2],
    derivative: [Mat<f64>; 2],
}

impl AxisRoot {
    /// The root of `kind`'s unit-variance kernel with length scale `length_scale` on `axis`,
    /// computed half by half ([`Mirror`]).
    pub(crate) fn new(axis: Axis, kind: KernelKind, length_scale: f64) -> Result<Self, PriorError> {
        let AxisHalves { mirror, even, odd } = AxisHalves::new(axis, kind, length_scale)?;
        let (even_root, even_derivative) = root_and_derivative(&even);
        let (odd_root, odd_derivative) = root_and_derivative(&odd);
        crate::simd_state::clear_upper_state();
        Ok(Self {
            mirror,
            root: [even_root, odd_root],
            derivative: [even_derivative, odd_derivative],
        })
    }

    /// The cubic Hermite combination of the roots `a` and `b` at two nodes `h` apart in log l
    /// ([`super::root_table`]): the root with the basis weights `value` of (a's root, a's
    /// derivative times h, b's root, b's derivative times h), and its derivative in log l with
    /// the weights `slope` (the basis's slopes in s) divided by h.
    pub(super) fn hermite(a: &Self, b: &Self, h: f64, value: [f64; 4], slope: [f64; 4]) -> Self {
        let blend = |half: usize, w: [f64; 4]| {
            let (ra, da) = (&a.root[half], &a.derivative[half]);
            let (rb, db) = (&b.root[half], &b.derivative[half]);
            let size = ra.nrows();
            let mut out = Mat::<f64>::zeros(size, size);
            for j in 0..size {
                let (ra, da, rb, db) = (
                    ra.col_as_slice(j),
                    da.col_as_slice(j),
                    rb.col_as_slice(j),
                    db.col_as_slice(j),
                );
                let column = out.col_as_slice_mut(j);
                for i in 0..size {
                    column[i] = w[0] * ra[i] + w[1] * da[i] + w[2] * rb[i] + w[3] * db[i];
                }
            }
            out
        };
        let value = [value[0], value[1] * h, value[2], value[3] * h];
        let slope = [slope[0] / h, slope[1], slope[2] / h, slope[3]];
        Self {
            mirror: a.mirror,
            root: [blend(0, value), blend(1, value)],
            derivative: [blend(0, slope), blend(1, slope)],
        }
    }

    /// The whole root S, n x n.
    pub(crate) fn root(&self) -> Mat<f64> {
        self.mirror
            .expand(self.root[0].as_ref(), self.root[1].as_ref())
    }

    #[cfg(test)]
    /// The whole derivative dS / d log l, n x n.
    pub(crate) fn derivative(&self) -> Mat<f64> {
        self.mirror
            .expand(self.derivative[0].as_ref(), self.derivative[1].as_ref())
    }

    /// dst = blockdiag(blocks) src: a product from the left in the mirror basis (src's rows are
    /// this axis's mirror coordinates).
    fn left(blocks: &[Mat<f64>; 2], src: MatRef<'_, f64>, dst: MatMut<'_, f64>) {
        let even = blocks[0].nrows();
        let (dst_even, dst_odd) = dst.split_at_row_mut(even);
        let (src_even, src_odd) = src.split_at_row(even);
        matmul(
            dst_even,
            Accum::Replace,
            blocks[0].as_ref(),
            src_even,
            1.0,
            Par::Seq,
        );
        if blocks[1].nrows() > 0 {
            matmul(
                dst_odd,
                Accum::Replace,
                blocks[1].as_ref(),
                src_odd,
                1.0,
                Par::Seq,
            );
        }
    }

    /// dst = src blockdiag(blocks): a product from the right in the mirror basis (src's columns
    /// are this axis's mirror coordinates). The blocks are symmetric, so this is
    /// dst^T = blockdiag(blocks) src^T.
    fn right(blocks: &[Mat<f64>; 2], src: MatRef<'_, f64>, dst: MatMut<'_, f64>) {
        Self::left(blocks, src.transpose(), dst.transpose_mut());
    }
}

/// Q diag(sqrt lambda) Q^T and Q (H o R) Q^T, H_ij = 1 / (sqrt lambda_i + sqrt lambda_j), of one
/// half: its part of the root and of the root's derivative (the slope has no part between the
/// halves, so neither has the derivative).
fn root_and_derivative(half: &HalfEigen) -> (Mat<f64>, Mat<f64>) {
    let HalfEigen {
        vectors: q,
        values,
        rotated_slope: rotated,
    } = half;
    let n = values.len();
    let roots: Vec<f64> = values.iter().map(|v| v.sqrt()).collect();
    let root = scale_columns(q.as_ref(), &roots) * q.transpose();
    let divided = Mat::from_fn(n, n, |i, j| rotated[(i, j)] / (roots[i] + roots[j]));
    let derivative = q * divided * q.transpose();
    (root, derivative)
}

/// Q diag(d).
fn scale_columns(q: MatRef<'_, f64>, d: &[f64]) -> Mat<f64> {
    Mat::from_fn(q.nrows(), q.ncols(), |i, j| q[(i, j)] * d[j])
}

/// The square root S_y (x) S_x of a separable unit-variance prior on a grid, with its
/// derivatives in the log length scales.
#[derive(Debug, Clone)]
pub(crate) struct SeparableRoot {
    grid: Grid,
    x: AxisRoot,
    /// `None` when y has x's matrix (a square grid over a square window, isotropic kernel).
    y: Option<AxisRoot>,
}

/// The derivatives of <g, S xi> with respect to log l_x and log l_y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LengthScaleSlopes {
    pub(crate) x: f64,
    pub(crate) y: f64,
}

/// The intermediate products of [`SeparableRoot::forward`] that [`SeparableRoot::backward`]
/// reuses, all nx x ny in the mirror basis of both axes (primes below): Xi' = P_x^T Xi P_y and
/// T = B_x Xi', then G' and C = G' B_y (B the root's blocks).
#[derive(Debug, Clone)]
pub(crate) struct RootWork {
    xi: Vec<f64>,
    left: Vec<f64>,
    gradient: Vec<f64>,
    right: Vec<f64>,
    product: Vec<f64>,
    swap: Vec<f64>,
}

impl RootWork {
    pub(crate) fn new(cells: usize) -> Self {
        Self {
            xi: vec![0.0; cells],
            left: vec![0.0; cells],
            gradient: vec![0.0; cells],
            right: vec![0.0; cells],
            product: vec![0.0; cells],
            swap: vec![0.0; cells],
        }
    }
}

impl SeparableRoot {
    /// The root of `kind` on `grid` with length scale `length_scale` along x and
    /// `length_scale_y` along y (`None`: the same).
    pub(crate) fn new(
        grid: Grid,
        kind: KernelKind,
        length_scale: f64,
        length_scale_y: Option<f64>,
    ) -> Result<Self, PriorError> {
        let x = AxisRoot::new(grid.x_axis(), kind, length_scale)?;
        let ly = length_scale_y.unwrap_or(length_scale);
        let y = if grid.y_axis() == grid.x_axis() && ly == length_scale {
            None
        } else {
            Some(AxisRoot::new(grid.y_axis(), kind, ly)?)
        };
        Ok(Self { grid, x, y })
    }

    /// The root from its axes' (`y`: `None` when it is x's).
    pub(super) fn from_axes(grid: Grid, x: AxisRoot, y: Option<AxisRoot>) -> Self {
        Self { grid, x, y }
    }

    fn y(&self) -> &AxisRoot {
        self.y.as_ref().unwrap_or(&self.x)
    }

    /// The grid's cells, the length of every vector the root acts on.
    pub(crate) fn cells(&self) -> usize {
        self.grid.cells()
    }

    /// out = S xi = S_x Xi S_y, computed as P_x B_x (P_x^T Xi P_y) B_y P_y^T, keeping Xi' and
    /// B_x Xi' in `work` for [`SeparableRoot::backward`].
    pub(crate) fn forward(&self, xi: &[f64], out: &mut [f64], work: &mut RootWork) {
        let RootWork {
            xi: mirrored,
            left,
            product,
            swap,
            ..
        } = work;
        self.product(xi, out, [mirrored, left, product, swap]);
    }

    /// out = S xi through the buffers [Xi', B_x Xi', the product in the mirror basis, a swap
    /// buffer], each of the grid's cells.
    fn product(&self, xi: &[f64], out: &mut [f64], buffers: [&mut [f64]; 4]) {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        let [mirrored, left, product, swap] = buffers;
        self.enter_mirror_basis(xi, mirrored, swap);
        AxisRoot::left(
            &self.x.root,
            MatRef::from_column_major_slice(mirrored, nx, ny),
            MatMut::from_column_major_slice_mut(left, nx, ny),
        );
        AxisRoot::right(
            &self.y().root,
            MatRef::from_column_major_slice(left, nx, ny),
            MatMut::from_column_major_slice_mut(product, nx, ny),
        );
        self.leave_mirror_basis(product, out, swap);
    }

    /// out = S^T g = S g (the root is symmetric), after [`SeparableRoot::forward`] at xi; with
    /// `slopes`, also d <g, S xi> / d log l_x and d log l_y, from forward's products:
    /// <G', dB_x Xi' B_y> = <dB_x C, Xi'> with C = G' B_y (the backward pass's own first
    /// product), and <G', B_x Xi' dB_y> = <T dB_y, G'> with T = B_x Xi'.
    pub(crate) fn backward(
        &self,
        g: &[f64],
        out: &mut [f64],
        work: &mut RootWork,
        slopes: bool,
    ) -> Option<LengthScaleSlopes> {
        let (nx, ny) = (self.grid.nx(), self.grid.ny());
        fn view(v: &[f64], nx: usize, ny: usize) -> MatRef<'_, f64> {
            MatRef::from_column_major_slice(v, nx, ny)
        }
        self.enter_mirror_basis(g, &mut work.gradient, &mut work.swap);
        AxisRoot::right(
            &self.y().root,
            view(&work.gradient, nx, ny),
            MatMut::from_column_major_slice_mut(&mut work.right, nx, ny),
        );
        AxisRoot::left(
            &self.x.root,
            view(&work.right, nx, ny),
            MatMut::from_column_major_slice_mut(&mut work.product, nx, ny),
        );
        self.leave_mirror_basis(&work.product, out, &mut work.swap);
        if !slopes {
            return None;
        }
        AxisRoot::left(
            &self.x.derivative,
            view(&work.right, nx, ny),
            MatMut::from_column_major_slice_mut(&mut work.product, nx, ny),
        );
        crate::simd_state::clear_upper_state();
        let x = dot(&work.product, &work.xi);
        AxisRoot::right(
            &self.y().derivative,
            view(&work.left, nx, ny),
            MatMut::from_column_major_slice_mut(&mut work.product, nx, ny),
        );
        crate::simd_state::clear_upper_state();
        let y = dot(&work.product, &work.gradient);
        Some(LengthScaleSlopes { x, y })
    }

    /// Scratch values [`SeparableRoot::apply`] needs.
    pub(crate) fn scratch_len(&self) -> usize {
        4 * self.cells()
    }

    /// out = S xi, on `scratch` ([`SeparableRoot::scratch_len`] values) rather than a
    /// [`RootWork`]: for the callers that need no backward pass.
    pub(crate) fn apply(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        let n = self.cells();
        let (a, rest) = scratch[..4 * n].split_at_mut(n);
        let (b, rest) = rest.split_at_mut(n);
        let (c, d) = rest.split_at_mut(n);
        self.product(xi, out, [a, b, c, d]);
    }

    /// dst = P_x^T V P_y: the nx x ny field `v` in both axes' mirror bases.
    fn enter_mirror_basis(&self, v: &[f64], dst: &mut [f64], swap: &mut [f64]) {
        self.x.mirror.halve_rows(v, swap);
        self.y().mirror.halve_columns(swap, dst, self.grid.nx());
    }

    /// dst = P_x V' P_y^T: back from both axes' mirror bases.
    fn leave_mirror_basis(&self, v: &[f64], dst: &mut [f64], swap: &mut [f64]) {
        self.x.mirror.join_rows(v, swap);
        self.y().mirror.join_columns(swap, dst, self.grid.nx());
    }
}

/// The separable prior sqrt(variance) S(l) as a [`Prior`]: what the Laplace machinery needs to
/// fit the joint chain's own whitened coordinates (its preconditioner).
#[derive(Debug, Clone)]
pub(crate) struct SymmetricPrior {
    root: SeparableRoot,
    amplitude: f64,
    /// S_x S_x and S_y S_y: the axis covariances, for [`Prior::covariance`].
    covariances: [Mat<f64>; 2],
}

impl SymmetricPrior {
    pub(crate) fn new(root: SeparableRoot, variance: f64) -> Self {
        let (x, y) = (root.x.root(), root.y().root());
        Self {
            amplitude: variance.sqrt(),
            covariances: [&x * &x, &y * &y],
            root,
        }
    }
}

impl super::Prior for SymmetricPrior {
    fn grid(&self) -> Grid {
        self.root.grid
    }
    fn latent_dim(&self) -> usize {
        self.root.grid.cells()
    }
    fn scratch_len(&self) -> usize {
        self.root.scratch_len()
    }
    fn apply_sqrt(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.root.apply(xi, out, scratch);
        for u in out.iter_mut() {
            *u *= self.amplitude;
        }
    }
    fn apply_sqrt_transpose(&self, v: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        self.apply_sqrt(v, out, scratch);
    }
    fn apply_covariance(&self, x: &[f64], out: &mut [f64]) {
        let mut half = vec![0.0; x.len()];
        let mut scratch = vec![0.0; self.scratch_len()];
        self.apply_sqrt(x, &mut half, &mut scratch);
        self.apply_sqrt(&half, out, &mut scratch);
    }
    fn covariance(&self, a: usize, b: usize) -> f64 {
        let grid = self.root.grid;
        let ((ia, ja), (ib, jb)) = (grid.cell(a), grid.cell(b));
        self.amplitude.powi(2) * self.covariances[0][(ia, ib)] * self.covariances[1][(ja, jb)]
    }
    fn jitter(&self) -> f64 {
        AXIS_JITTER
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Window;
    use crate::model::prior::dense_kernel_matrix;
    use crate::model::spec::KernelSpec;

    fn field(n: usize, salt: usize) -> Vec<f64> {
        (0..n)
            .map(|k| (((k * 37 + salt * 11) % 23) as f64 - 11.0) / 7.0)
            .collect()
    }

    /// An axis's kernel K + eps I and its slope dK / d log l, written out entry by entry.
    fn dense_axis(axis: Axis, kind: KernelKind, length_scale: f64) -> (Mat<f64>, Mat<f64>) {
        let scaled =
            |a: usize, b: usize| (axis.coordinate(a) - axis.coordinate(b)).abs() / length_scale;
        let n = axis.points();
        let jitter = if n > 1 { AXIS_JITTER } else { 0.0 };
        let kernel = Mat::from_fn(n, n, |a, b| {
            kind.correlation(scaled(a, b)) + if a == b { jitter } else { 0.0 }
        });
        let slope = Mat::from_fn(n, n, |a, b| kind.log_length_scale_derivative(scaled(a, b)));
        (kernel, slope)
    }

    fn max_abs_difference(a: &Mat<f64>, b: &Mat<f64>) -> f64 {
        let mut worst: f64 = 0.0;
        for j in 0..a.ncols() {
            for i in 0..a.nrows() {
                worst = worst.max((a[(i, j)] - b[(i, j)]).abs());
            }
        }
        worst
    }

    /// The eigendecomposition computed as two halves of the mirror symmetry is the axis
    /// kernel's: Q orthonormal, Q diag(lambda) Q^T = K + eps I and R = Q^T dK Q, for even and
    /// odd numbers of points (one point included), short and long length scales, two kernels.
    #[test]
    fn the_halves_give_the_whole_axis_eigendecomposition() {
        for n in [1, 2, 3, 8, 9, 32] {
            for kind in [KernelKind::SquaredExponential, KernelKind::Matern32] {
                for length_scale in [0.05, 0.3, 2.0] {
                    let axis = Grid::line(n).x_axis();
                    let (kernel, slope) = dense_axis(axis, kind, length_scale);
                    let eigen = AxisEigen::new(axis, kind, length_scale).unwrap();
                    let q = &eigen.vectors;
                    let identity = Mat::<f64>::identity(n, n);
                    let case = format!("n {n}, {kind:?}, l {length_scale}");
                    assert!(
                        max_abs_difference(&(q.transpose() * q), &identity) < 1e-12,
                        "{case}"
                    );
                    let rebuilt = scale_columns(q.as_ref(), &eigen.values) * q.transpose();
                    assert!(max_abs_difference(&rebuilt, &kernel) < 1e-12, "{case}");
                    let rotated = q.transpose() * &slope * q;
                    assert!(
                        max_abs_difference(&rotated, &eigen.rotated_slope) < 1e-12,
                        "{case}"
                    );
                }
            }
        }
    }

    /// The mirror basis changes are P^T and P (P the basis [`Mirror::expand_columns`] builds),
    /// along the first axis and along the second, and each undoes the other.
    #[test]
    fn the_mirror_basis_changes_are_p_transposed_and_p() {
        for n in [1, 2, 3, 8, 9] {
            let mirror = Mirror::new(n);
            let (e, m) = (mirror.even_size(), mirror.pairs());
            let p = mirror.expand_columns(
                Mat::<f64>::identity(e, e).as_ref(),
                Mat::<f64>::identity(m, m).as_ref(),
            );
            let other = 3;
            // n x 3, transformed along its first axis.
            let x = Mat::from_fn(n, other, |i, j| ((i * 7 + j * 3) % 5) as f64 - 1.7);
            let flat = |a: &Mat<f64>| -> Vec<f64> {
                (0..a.ncols())
                    .flat_map(|j| a.col_as_slice(j).to_vec())
                    .collect()
            };
            let (mut halved, mut joined) = (vec![0.0; n * other], vec![0.0; n * other]);
            mirror.halve_rows(&flat(&x), &mut halved);
            let expected = flat(&(p.transpose() * &x));
            assert!(
                halved
                    .iter()
                    .zip(&expected)
                    .all(|(a, b)| (a - b).abs() < 1e-14),
                "n {n}"
            );
            mirror.join_rows(&halved, &mut joined);
            assert!(
                joined
                    .iter()
                    .zip(flat(&x))
                    .all(|(a, b)| (a - b).abs() < 1e-14)
            );
            // 3 x n, transformed along its second axis.
            let y = x.transpose().to_owned();
            mirror.halve_columns(&flat(&y), &mut halved, other);
            let expected = flat(&(&y * &p));
            assert!(
                halved
                    .iter()
                    .zip(&expected)
                    .all(|(a, b)| (a - b).abs() < 1e-14),
                "n {n}"
            );
            mirror.join_columns(&halved, &mut joined, other);
            assert!(
                joined
                    .iter()
                    .zip(flat(&y))
                    .all(|(a, b)| (a - b).abs() < 1e-14)
            );
        }
    }

    /// The root and its derivative from the halves solve S S = K + eps I and
    /// dS S + S dS = dK / d log l (the equation that defines the root's derivative).
    #[test]
    fn the_root_and_its_derivative_solve_their_defining_equations() {
        for n in [1, 2, 5, 16, 31] {
            for kind in [KernelKind::SquaredExponential, KernelKind::Matern32] {
                for length_scale in [0.1, 0.7] {
                    let axis = Grid::line(n).x_axis();
                    let (kernel, slope) = dense_axis(axis, kind, length_scale);
                    let axis_root = AxisRoot::new(axis, kind, length_scale).unwrap();
                    let (root, derivative) = (axis_root.root(), axis_root.derivative());
                    let case = format!("n {n}, {kind:?}, l {length_scale}");
                    assert!(
                        max_abs_difference(&(&root * &root), &kernel) < 1e-12,
                        "{case}"
                    );
                    assert!(max_abs_difference(&root, &root.transpose().to_owned()) < 1e-14);
                    let sylvester = &derivative * &root + &root * &derivative;
                    assert!(max_abs_difference(&sylvester, &slope) < 1e-9, "{case}");
                }
            }
        }
    }

    /// S S^T reproduces the dense kernel (plus the stated nugget): the squared exponential on a
    /// rectangular window with a length scale per axis, a Matern kernel on a line.
    #[test]
    fn the_root_reproduces_the_dense_kernel() {
        let window = Window {
            x: (0.0, 10.0),
            y: (0.0, 6.0),
        };
        let anisotropic = KernelSpec {
            length_scale_y: Some(1.5),
            ..KernelSpec::squared_exponential(2.5, 1.0)
        };
        let matern = KernelSpec {
            kind: KernelKind::Matern32,
            ..KernelSpec::squared_exponential(0.3, 1.0)
        };
        let cases = [
            (Grid::over_window(5, 4, window), anisotropic),
            (Grid::line(7), matern),
        ];
        for (grid, kernel) in cases {
            let root = SeparableRoot::new(
                grid,
                kernel.kind,
                kernel.length_scale,
                kernel.length_scale_y,
            )
            .unwrap();
            let n = grid.cells();
            let mut columns = Mat::zeros(n, n);
            let (mut e, mut col) = (vec![0.0; n], vec![0.0; n]);
            let mut scratch = vec![0.0; root.scratch_len()];
            for k in 0..n {
                e.fill(0.0);
                e[k] = 1.0;
                root.apply(&e, &mut col, &mut scratch);
                for r in 0..n {
                    columns[(r, k)] = col[r];
                }
            }
            let covariance = &columns * columns.transpose();
            let err = (&covariance - &dense_kernel_matrix(grid, kernel)).norm_max();
            assert!(err < 1e-7, "{grid}: {err:e}");
        }
    }

    /// The symmetric prior as a [`crate::model::prior::Prior`]: its covariance entries are the
    /// dense kernel's times the variance, and C x is L L^T x.
    #[test]
    fn the_symmetric_prior_has_the_dense_covariance() {
        use crate::model::prior::Prior;
        let grid = Grid::new(5);
        let prior = SymmetricPrior::new(
            SeparableRoot::new(grid, KernelKind::SquaredExponential, 0.3, None).unwrap(),
            1.7,
        );
        let dense = dense_kernel_matrix(grid, KernelSpec::squared_exponential(0.3, 1.7));
        let x: Vec<f64> = (0..25).map(|k| (k as f64 * 0.3).sin()).collect();
        let mut cx = vec![0.0; 25];
        prior.apply_covariance(&x, &mut cx);
        for a in 0..25 {
            let expected: f64 = (0..25).map(|b| dense[(a, b)] * x[b]).sum();
            assert!((cx[a] - expected).abs() < 1e-7, "row {a}");
            for b in 0..25 {
                assert!((prior.covariance(a, b) - dense[(a, b)]).abs() < 1e-7);
            }
        }
    }

    /// d <g, S(l) xi> / d log l along each axis against central differences, on a square grid
    /// (one matrix for both axes), a rectangular one, a line, and long and short length scales.
    #[test]
    fn length_scale_slopes_match_finite_differences() {
        let window = Window {
            x: (0.0, 3.0),
            y: (0.0, 2.0),
        };
        let cases = [
            (Grid::new(6), KernelKind::SquaredExponential, 0.3, None),
            (Grid::new(6), KernelKind::SquaredExponential, 2.0, None),
            (
                Grid::over_window(7, 4, window),
                KernelKind::SquaredExponential,
                0.8,
                Some(0.5),
            ),
            (Grid::line(9), KernelKind::Matern52, 0.2, None),
            (Grid::line(9), KernelKind::Exponential, 0.6, None),
        ];
        for (grid, kind, lx, ly) in cases {
            let n = grid.cells();
            let (xi, g) = (field(n, 1), field(n, 2));
            let value = |log_x: f64, log_y: f64| {
                let ly = ly.unwrap_or(lx);
                let root = SeparableRoot::new(grid, kind, lx * log_x.exp(), Some(ly * log_y.exp()))
                    .unwrap();
                let mut out = vec![0.0; n];
                root.apply(&xi, &mut out, &mut vec![0.0; root.scratch_len()]);
                out.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>()
            };
            let root = SeparableRoot::new(grid, kind, lx, ly).unwrap();
            // The backward pass after the forward one at xi, as the joint density runs them.
            let mut work = RootWork::new(n);
            let mut out = vec![0.0; n];
            root.forward(&xi, &mut out, &mut work);
            let slopes = root.backward(&g, &mut out, &mut work, true).unwrap();
            let h = 1e-5;
            let dx = (value(h, 0.0) - value(-h, 0.0)) / (2.0 * h);
            let dy = (value(0.0, h) - value(0.0, -h)) / (2.0 * h);
            let scale = value(0.0, 0.0).abs().max(1.0);
            assert!(
                (slopes.x - dx).abs() < 1e-6 * scale,
                "{grid} x: {} vs {dx}",
                slopes.x
            );
            assert!(
                (slopes.y - dy).abs() < 1e-6 * scale,
                "{grid} y: {} vs {dy}",
                slopes.y
            );
        }
    }
}
