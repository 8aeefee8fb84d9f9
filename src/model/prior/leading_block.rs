//! The prior's leading spectral block on a square Kronecker grid: the spectral coordinates
//! eta_ij (see [`super::spectral`]) whose axis indices i and j are both among the k with the
//! largest axis eigenvalues, as an orthonormal map E from k^2 block coordinates to the whitened
//! coordinates xi.
//!
//! With P_1 the axis rotation of [`super::spectral::KroneckerSpectral`] and Q its k columns of
//! largest eigenvalue (D x k), E = Q (x) Q: a block position Y (k x k) is the whitened position
//! Q Y Q^T, and E^T xi is Q^T Xi Q. Each costs two products of a D x k matrix with a D x D or
//! k x D one (2 D^2 k + 2 D k^2 multiply-adds), where a dense N x r matrix of directions costs
//! N r = D^2 r and streams through memory.
//!
//! Where the likelihood curvature lives. A smooth prior leaves its high-frequency coordinates
//! nearly unvaried, so the data can shrink them by almost nothing: the misfit Hessian
//! H = B^T G^T W G B in spectral coordinates has diagonal b_k^T G^T W G b_k (the curvature
//! shares of [`crate::model::laplace::reduced::CurvatureShares`]), and since H is positive
//! semi-definite, the trace of its compression to the coordinates outside the block bounds every
//! eigenvalue of that compression. [`LeadingBlock::choose`] takes the smallest k whose block
//! leaves at most `leftover` of the trace outside. The block follows the prior's smoothness (the
//! length scale in units of the window) and the data's strength, not the grid's size, so the
//! finer the grid the smaller its share of the coordinates.

use faer::{Mat, MatRef};

use super::sandwich::sandwich;

/// E = Q (x) Q, Q the axis rotation's k columns of largest eigenvalue (module docs).
#[derive(Debug, Clone)]
pub struct LeadingBlock {
    /// Q: D x k, orthonormal columns.
    columns: Mat<f64>,
}

impl LeadingBlock {
    /// The smallest block of the axis `rotation` (D x D, orthogonal, its columns in increasing
    /// order of eigenvalue: the leading ones last) whose coordinates hold all but `leftover` of
    /// the `shares` (D^2 values, coordinate i + D j for axis indices i and j); `None` unless it
    /// is at most half the coordinates, where its products would not pay.
    pub(crate) fn choose(rotation: MatRef<'_, f64>, shares: &[f64], leftover: f64) -> Option<Self> {
        let d = rotation.nrows();
        debug_assert_eq!(shares.len(), d * d);
        let total: f64 = shares.iter().map(|s| s.max(0.0)).sum();
        let share = |i: usize, j: usize| shares[i + d * j].max(0.0);
        let mut inside = 0.0;
        for k in 1..=d {
            // The block grows by index n = D - k along both axes: row n, column n, and (n, n).
            let n = d - k;
            inside += share(n, n);
            for m in n + 1..d {
                inside += share(n, m) + share(m, n);
            }
            if total - inside <= leftover {
                return (2 * k * k <= d * d).then(|| Self {
                    columns: rotation.subcols(n, k).to_owned(),
                });
            }
        }
        None
    }

    /// k: the block's axis indices.
    pub(crate) fn size(&self) -> usize {
        self.columns.ncols()
    }

    /// k^2: the block's coordinates.
    pub(crate) fn dim(&self) -> usize {
        self.size() * self.size()
    }

    /// Whether a product with N x `rank` directions V = E W costs fewer multiply-adds through the
    /// block (E's products, k D^2 + k^2 D, and W's, k^2 rank) than with V dense (D^2 rank). At
    /// D = 32 and rank 24 on the tuning grids the dense product was 1.2x faster, as the count
    /// says; where the counts are close the block's smaller memory traffic goes unclaimed.
    pub(crate) fn pays_for(&self, rank: usize) -> bool {
        let (d, k) = (self.columns.nrows(), self.size());
        k * d * d + k * k * d + k * k * rank < d * d * rank
    }

    /// Scratch values [`Self::project`] and [`Self::expand`] need.
    pub(crate) fn scratch_len(&self) -> usize {
        self.columns.nrows() * self.size()
    }

    /// out = E^T xi = Q^T Xi Q (k^2 values, column-major).
    pub(crate) fn project(&self, xi: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.columns.transpose(), xi, out, scratch);
    }

    /// out = E y = Q Y Q^T (D^2 values).
    pub(crate) fn expand(&self, y: &[f64], out: &mut [f64], scratch: &mut [f64]) {
        sandwich(self.columns.as_ref(), y, out, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest block leaving at most `leftover` of the shares outside, and none where that
    /// needs more than half the coordinates.
    #[test]
    fn the_block_is_the_smallest_that_leaves_the_leftover() {
        let d = 8;
        let rotation = Mat::<f64>::identity(d, d);
        // Share 4^-(distance from the top corner) along each axis.
        let shares: Vec<f64> = (0..d * d)
            .map(|c| 0.25f64.powi((2 * d - 2 - c % d - c / d) as i32))
            .collect();
        let total: f64 = shares.iter().sum();
        for k in 1..=5 {
            let inside: f64 = (d - k..d)
                .flat_map(|i| (d - k..d).map(move |j| (i, j)))
                .map(|(i, j)| shares[i + d * j])
                .sum();
            let leftover = (total - inside) * (1.0 + 1e-9);
            let chosen = LeadingBlock::choose(rotation.as_ref(), &shares, leftover);
            assert_eq!(chosen.map(|b| b.size()), Some(k), "k = {k}");
            let tighter = LeadingBlock::choose(rotation.as_ref(), &shares, 0.999 * leftover);
            assert_eq!(
                tighter.map(|b| b.size()),
                Some(k + 1).filter(|&k| 2 * k * k <= d * d)
            );
        }
        assert!(LeadingBlock::choose(rotation.as_ref(), &shares, 0.0).is_none());
    }
}
