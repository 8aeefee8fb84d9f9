//! The circulant embedding's square root as a differentiable function of the length scale, on
//! one torus fixed for a whole chain: what the joint chain (`sampler.hyper = "joint"`) needs of
//! the exponential and Matern kernels on a 2-D grid.
//!
//! [`super::CirculantPrior`] picks the smallest valid torus for one length scale, so its whitened
//! dimension changes with l; a chain needs one dimension. [`CirculantRoot::for_chain`] fixes the
//! torus valid at a length scale the chain should be able to reach (the joint chain asks for the
//! length-scale prior's 99th percentile), within [`MAX_CHAIN_TORUS_FACTOR`] times the minimal
//! torus. At each l the unit-variance eigenvalues and their slopes are exact DFTs of the kernel
//! at the torus lags (the kernels' closed forms, `kernel.rs`),
//!
//!   lambda(l) = F k_l,   d lambda / d log l = F (d k_l / d log l),
//!
//! and S(l) = F^-1 diag(lambda^1/2) F, so u = R S(l) xi (R picks the grid out of the torus) and
//! d (R S xi) / d log l = R F^-1 diag(d lambda / (2 lambda^1/2)) F xi. Where the embedding is
//! valid at l (clipping its negative eigenvalues changes no covariance entry by more than
//! [`EMBEDDING_TOLERANCE`], the rule of [`super::CirculantPrior`]), R S S R^T is the grid's
//! kernel matrix. Where it is not, [`CirculantRoot::prepare`] says so and the joint density is
//! zero there: the length-scale prior is truncated at [`CirculantRoot::largest_length_scale`],
//! which the job reports when the truncation is not negligible.
//!
//! Eigenvalues at or below [`SLOPE_FLOOR`] times the largest are rounding noise: their slope is
//! taken as zero (their square roots, at most 3e-7 of the largest, stay in the product).

use super::circulant::{
    clipped_change, embed, lag_distances, minimal_torus, restrict, torus_sizes,
};
use super::torus::TorusFft;
use super::{EMBEDDING_TOLERANCE, Embedding, PriorError};
use crate::model::grid::Grid;
use crate::model::spec::KernelKind;

/// A chain's torus has at most this many times the cells of the grid's minimal torus: each
/// gradient costs five transforms of it, so a bigger torus would cost more than the data's
/// likelihood by far.
pub(crate) const MAX_CHAIN_TORUS_FACTOR: usize = 4;

/// Eigenvalues at or below this fraction of the largest have no slope (see the module docs).
pub(crate) const SLOPE_FLOOR: f64 = 1e-13;

/// Doublings and halvings tried when looking for the largest valid length scale.
const SEARCH_STEPS: usize = 60;

/// The root R S(l) of a stationary kernel's circulant embedding on a fixed torus, as a function
/// of the length scale (unit variance).
#[derive(Debug, Clone)]
pub struct CirculantRoot {
    grid: Grid,
    kind: KernelKind,
    torus: TorusFft,
    /// The wrapped physical distance of every torus lag, x fastest.
    distances: Vec<f64>,
    largest_length_scale: f64,
}

/// The buffers of one chain's products: the multipliers at the current length scale, the torus
/// transform's scratch.
#[derive(Debug, Clone)]
pub(crate) struct CirculantWork {
    lags: Vec<f64>,
    lag_slopes: Vec<f64>,
    eigenvalues: Vec<f64>,
    eigenvalue_slopes: Vec<f64>,
    /// lambda^1/2 / P: the filter of S.
    sqrt_multiplier: Vec<f64>,
    /// (d lambda / d log l) / (2 lambda^1/2 P): the filter of dS / d log l.
    slope_multiplier: Vec<f64>,
    scratch: Vec<f64>,
    restricted: Vec<f64>,
}

impl CirculantRoot {
    /// The root on the smallest torus (within [`MAX_CHAIN_TORUS_FACTOR`] of the minimal one) that
    /// embeds the kernel at `length_scale`, or the largest torus allowed when none does.
    pub fn for_chain(grid: Grid, kind: KernelKind, length_scale: f64) -> Result<Self, PriorError> {
        let (mx, my) = minimal_torus(grid);
        let cap = MAX_CHAIN_TORUS_FACTOR * mx * my;
        let sizes: Vec<(usize, usize)> = torus_sizes(grid, length_scale)
            .into_iter()
            .filter(|&(px, py)| px * py <= cap)
            .collect();
        let mut chosen = None;
        for &(px, py) in &sizes {
            let candidate = Self::on_torus(grid, kind, px, py);
            let valid = candidate.is_valid(length_scale, &mut candidate.work());
            chosen = Some(candidate);
            if valid {
                break;
            }
        }
        let mut root = chosen.unwrap_or_else(|| Self::on_torus(grid, kind, mx, my));
        root.largest_length_scale = root.search_largest(length_scale)?;
        Ok(root)
    }

    /// The root on a `px x py` torus (px even, px >= 2 (nx - 1), py >= 2 (ny - 1)), its largest
    /// valid length scale not yet known (infinite).
    fn on_torus(grid: Grid, kind: KernelKind, px: usize, py: usize) -> Self {
        Self {
            grid,
            kind,
            torus: TorusFft::new(px, py),
            distances: lag_distances(grid, px, py),
            largest_length_scale: f64::INFINITY,
        }
    }

    /// The whitened dimension P = px py.
    pub(crate) fn latent_dim(&self) -> usize {
        self.torus.cells()
    }

    /// (px, py).
    pub fn torus(&self) -> (usize, usize) {
        self.torus.size()
    }

    /// The largest length scale at which the torus embeds the kernel (found by doubling and
    /// bisection in log l; validity shrinks as l grows).
    pub fn largest_length_scale(&self) -> f64 {
        self.largest_length_scale
    }

    /// The torus and what clipping its eigenvalues costs at `length_scale` and `variance`, in
    /// the terms every circulant prior reports.
    pub(crate) fn embedding_at(&self, length_scale: f64, variance: f64) -> Embedding {
        let mut work = self.work();
        self.is_valid(length_scale, &mut work);
        let (px, py) = self.torus.size();
        let eigenvalues = &work.eigenvalues;
        Embedding {
            torus_x: px,
            torus_y: py,
            most_negative_eigenvalue: variance * eigenvalues.iter().copied().fold(0.0, f64::min),
            largest_eigenvalue: variance
                * eigenvalues
                    .iter()
                    .copied()
                    .fold(f64::NEG_INFINITY, f64::max),
            covariance_change: variance * clipped_change(eigenvalues, px, py),
        }
    }

    /// Buffers for [`Self::prepare`], [`Self::forward`] and [`Self::backward`].
    pub(crate) fn work(&self) -> CirculantWork {
        let (p, s) = (self.torus.cells(), self.torus.spectrum_len());
        CirculantWork {
            lags: vec![0.0; p],
            lag_slopes: vec![0.0; p],
            eigenvalues: vec![0.0; s],
            eigenvalue_slopes: vec![0.0; s],
            sqrt_multiplier: vec![0.0; s],
            slope_multiplier: vec![0.0; s],
            scratch: vec![0.0; self.torus.scratch_len()],
            restricted: vec![0.0; self.grid.cells()],
        }
    }

    /// The filters of S(l) (and of dS / d log l with `slopes`) into `work`; false where the
    /// torus does not embed the kernel at l (the density is zero there).
    pub(crate) fn prepare(
        &self,
        length_scale: f64,
        work: &mut CirculantWork,
        slopes: bool,
    ) -> bool {
        if !(length_scale.is_finite() && length_scale > 0.0)
            || length_scale > self.largest_length_scale
        {
            return false;
        }
        if !self.is_valid(length_scale, work) {
            return false;
        }
        let scale = 1.0 / self.torus.cells() as f64;
        let largest = work.eigenvalues.iter().copied().fold(0.0, f64::max);
        for (m, &lambda) in work.sqrt_multiplier.iter_mut().zip(&work.eigenvalues) {
            *m = lambda.max(0.0).sqrt() * scale;
        }
        if slopes {
            let CirculantWork {
                lag_slopes,
                eigenvalue_slopes,
                scratch,
                ..
            } = work;
            self.torus
                .eigenvalues_into(lag_slopes, eigenvalue_slopes, scratch);
            let floor = SLOPE_FLOOR * largest;
            for ((m, &lambda), &slope) in work
                .slope_multiplier
                .iter_mut()
                .zip(&work.eigenvalues)
                .zip(&work.eigenvalue_slopes)
            {
                *m = if lambda > floor {
                    0.5 * slope / lambda.sqrt() * scale
                } else {
                    0.0
                };
            }
        }
        true
    }

    /// work.eigenvalues at l (and the kernel's slopes at the lags, work.lag_slopes), and
    /// whether clipping them stays within the tolerance.
    fn is_valid(&self, length_scale: f64, work: &mut CirculantWork) -> bool {
        self.fill_lags(length_scale, work);
        let CirculantWork {
            lags,
            eigenvalues,
            scratch,
            ..
        } = work;
        self.torus.eigenvalues_into(lags, eigenvalues, scratch);
        let (px, py) = self.torus.size();
        let change = clipped_change(eigenvalues, px, py);
        change.is_finite() && change <= EMBEDDING_TOLERANCE
    }

    /// The kernel and its derivative in log l at every torus lag. A lag's distance repeats at
    /// its mirror images, so each is computed once.
    fn fill_lags(&self, length_scale: f64, work: &mut CirculantWork) {
        let (px, py) = self.torus.size();
        let (lags, slopes) = (&mut work.lags, &mut work.lag_slopes);
        let inverse = 1.0 / length_scale;
        for ty in 0..py {
            let source_y = ty.min(py - ty);
            for tx in 0..px {
                let source_x = tx.min(px - tx);
                let t = ty * px + tx;
                (lags[t], slopes[t]) = if source_x == tx && source_y == ty {
                    self.kind.correlation_and_slope(self.distances[t] * inverse)
                } else {
                    let source = source_y * px + source_x;
                    (lags[source], slopes[source])
                };
            }
        }
    }

    /// The largest valid length scale, by doubling from `start` (or halving, when the torus
    /// does not embed the kernel there) and then bisection in log l.
    fn search_largest(&self, start: f64) -> Result<f64, PriorError> {
        let mut work = self.work();
        let mut valid = |l: f64| self.is_valid(l, &mut work);
        let (mut low, mut high) = if valid(start) {
            let mut low = start;
            let mut steps = 0;
            while valid(2.0 * low) {
                low *= 2.0;
                steps += 1;
                if steps == SEARCH_STEPS {
                    return Ok(f64::INFINITY);
                }
            }
            (low, 2.0 * low)
        } else {
            let mut high = start;
            let mut steps = 0;
            while !valid(high / 2.0) {
                high /= 2.0;
                steps += 1;
                if steps == SEARCH_STEPS {
                    let (px, py) = self.torus.size();
                    return Err(PriorError::NoChainTorus {
                        kernel: self.kind.name(),
                        grid: self.grid.to_string(),
                        torus: format!("{px} x {py}"),
                    });
                }
            }
            (high / 2.0, high)
        };
        for _ in 0..40 {
            let middle = (low * high).sqrt();
            if valid(middle) {
                low = middle;
            } else {
                high = middle;
            }
        }
        Ok(low)
    }

    /// out = R S(l) xi (xi on the torus, out on the grid), with the filters of the last
    /// [`Self::prepare`].
    pub(crate) fn forward(&self, xi: &[f64], out: &mut [f64], work: &mut CirculantWork) {
        self.filter_restricted(xi, &work.sqrt_multiplier, &mut work.scratch, out);
    }

    /// out = S(l) R^T g (the torus gradient of <g, R S xi>), and with `slopes`
    /// d <g, R S(l) xi> / d log l.
    pub(crate) fn backward(
        &self,
        g: &[f64],
        xi: &[f64],
        out: &mut [f64],
        work: &mut CirculantWork,
        slopes: bool,
    ) -> Option<f64> {
        let (ny, py) = (self.grid.ny(), self.torus.size().1);
        embed(self.grid, &self.torus, g, &mut work.scratch);
        self.torus
            .filter(&work.sqrt_multiplier, &mut work.scratch, ny, py);
        out.copy_from_slice(self.torus.field(&mut work.scratch));
        if !slopes {
            return None;
        }
        let CirculantWork {
            slope_multiplier,
            scratch,
            restricted,
            ..
        } = work;
        self.filter_restricted(xi, slope_multiplier, scratch, restricted);
        Some(restricted.iter().zip(g).map(|(a, b)| a * b).sum())
    }

    /// out = R F^-1 diag(multiplier) F xi.
    fn filter_restricted(
        &self,
        xi: &[f64],
        multiplier: &[f64],
        scratch: &mut [f64],
        out: &mut [f64],
    ) {
        let (ny, py) = (self.grid.ny(), self.torus.size().1);
        self.torus.field(scratch).copy_from_slice(xi);
        self.torus.filter(multiplier, scratch, py, ny);
        restrict(self.grid, &self.torus, scratch, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::prior::dense_kernel_matrix;
    use crate::model::spec::KernelSpec;

    const KINDS: [KernelKind; 3] = [
        KernelKind::Exponential,
        KernelKind::Matern32,
        KernelKind::Matern52,
    ];

    fn unit(i: usize, n: usize) -> Vec<f64> {
        let mut e = vec![0.0; n];
        e[i] = 1.0;
        e
    }

    /// R S S^T R^T, column by column, is the dense kernel matrix at every valid length scale.
    #[test]
    fn the_root_reproduces_the_kernel_matrix() {
        let grid = Grid::rectangular(7, 5);
        for kind in KINDS {
            let root = CirculantRoot::for_chain(grid, kind, 0.3).unwrap();
            let mut work = root.work();
            for l in [0.05, 0.2, 0.3] {
                assert!(root.prepare(l, &mut work, false), "{kind} at {l}");
                let dense = dense_kernel_matrix(
                    grid,
                    KernelSpec {
                        kind,
                        length_scale: l,
                        variance: 1.0,
                        length_scale_y: None,
                    },
                );
                let (n, p) = (grid.cells(), root.latent_dim());
                // Columns of L = R S, as L^T e_a = S R^T e_a.
                let columns: Vec<Vec<f64>> = (0..n)
                    .map(|a| {
                        let mut column = vec![0.0; p];
                        root.backward(&unit(a, n), &vec![0.0; p], &mut column, &mut work, false);
                        column
                    })
                    .collect();
                for a in 0..n {
                    for b in 0..n {
                        let c: f64 = columns[a].iter().zip(&columns[b]).map(|(x, y)| x * y).sum();
                        assert!(
                            (c - dense[(a, b)]).abs() < 1e-9,
                            "{kind} l={l} ({a},{b}): {c} vs {}",
                            dense[(a, b)]
                        );
                    }
                }
            }
        }
    }

    /// forward is the adjoint of backward: <R S xi, g> = <xi, S R^T g>.
    #[test]
    fn forward_and_backward_are_adjoint() {
        let grid = Grid::rectangular(6, 4);
        let root = CirculantRoot::for_chain(grid, KernelKind::Matern32, 0.4).unwrap();
        let mut work = root.work();
        assert!(root.prepare(0.25, &mut work, false));
        let (n, p) = (grid.cells(), root.latent_dim());
        let xi: Vec<f64> = (0..p).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect();
        let g: Vec<f64> = (0..n).map(|i| ((i * 5 % 7) as f64 - 3.0) / 2.0).collect();
        let (mut u, mut back) = (vec![0.0; n], vec![0.0; p]);
        root.forward(&xi, &mut u, &mut work);
        root.backward(&g, &xi, &mut back, &mut work, false);
        let left: f64 = u.iter().zip(&g).map(|(a, b)| a * b).sum();
        let right: f64 = xi.iter().zip(&back).map(|(a, b)| a * b).sum();
        assert!((left - right).abs() < 1e-11, "{left} vs {right}");
    }

    /// The slope d <g, R S(l) xi> / d log l against central differences, for every kernel and
    /// length scales from a tenth of a cell to the largest valid one.
    #[test]
    fn the_length_scale_slope_matches_finite_differences() {
        let grid = Grid::rectangular(8, 6);
        for kind in KINDS {
            let root = CirculantRoot::for_chain(grid, kind, 0.5).unwrap();
            let mut work = root.work();
            let (n, p) = (grid.cells(), root.latent_dim());
            let xi: Vec<f64> = (0..p).map(|i| ((i * 13 % 17) as f64 - 8.0) / 5.0).collect();
            let g: Vec<f64> = (0..n).map(|i| ((i * 3 % 5) as f64 - 2.0) / 2.0).collect();
            let largest = root.largest_length_scale();
            for l in [0.012, 0.1, 0.3, 0.9 * largest] {
                let mut at = |log_l: f64| {
                    assert!(root.prepare(log_l.exp(), &mut work, false), "{kind} at {l}");
                    let mut u = vec![0.0; n];
                    root.forward(&xi, &mut u, &mut work);
                    u.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>()
                };
                let h = 1e-5;
                let numeric = (at(l.ln() + h) - at(l.ln() - h)) / (2.0 * h);
                assert!(root.prepare(l, &mut work, true));
                let mut back = vec![0.0; p];
                let exact = root.backward(&g, &xi, &mut back, &mut work, true).unwrap();
                assert!(
                    (exact - numeric).abs() < 1e-6 * (1.0 + numeric.abs()),
                    "{kind} at l={l}: {exact} vs {numeric}"
                );
            }
        }
    }

    /// The torus embeds the kernel up to the largest length scale it reports and not beyond;
    /// it embeds the kernel at the length scale asked for, or is the largest torus allowed.
    #[test]
    fn the_largest_length_scale_bounds_the_valid_ones() {
        let grid = Grid::new(12);
        let (mx, my) = minimal_torus(grid);
        let cap = MAX_CHAIN_TORUS_FACTOR * mx * my;
        for kind in KINDS {
            for asked in [0.1, 0.4, 1.0] {
                let root = CirculantRoot::for_chain(grid, kind, asked).unwrap();
                let largest = root.largest_length_scale();
                let (px, py) = root.torus();
                assert!(px * py <= cap, "{kind}");
                if largest < asked {
                    let allowed = torus_sizes(grid, asked)
                        .into_iter()
                        .rfind(|&(x, y)| x * y <= cap);
                    assert_eq!(Some((px, py)), allowed, "{kind} at {asked}");
                }
                let mut work = root.work();
                assert!(root.prepare(0.999 * largest, &mut work, false), "{kind}");
                assert!(!root.prepare(1.001 * largest, &mut work, false), "{kind}");
            }
        }
    }
}
