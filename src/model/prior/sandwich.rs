//! The product a Kronecker map with equal axes applies to a grid's values, (A (x) A) vec(X) =
//! vec(A X A^T): shared by the spectral root ([`super::spectral`]) and its leading block
//! ([`super::leading_block`]).

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// out = A X A^T for A (m x n) and X the n x n grid layout (column-major) of `x`, through the
/// m x n values of `scratch` (A X): the product (A (x) A) vec(X) of a Kronecker map with equal
/// axes, as the spectral root and its leading block apply it.
pub(crate) fn sandwich(a: MatRef<'_, f64>, x: &[f64], out: &mut [f64], scratch: &mut [f64]) {
    let (m, n) = (a.nrows(), a.ncols());
    let x = MatRef::from_column_major_slice(x, n, n);
    let mut half = MatMut::from_column_major_slice_mut(&mut scratch[..m * n], m, n);
    matmul(half.as_mut(), Accum::Replace, a, x, 1.0, Par::Seq);
    let out = MatMut::from_column_major_slice_mut(out, m, m);
    matmul(
        out,
        Accum::Replace,
        half.as_ref(),
        a.transpose(),
        1.0,
        Par::Seq,
    );
}
