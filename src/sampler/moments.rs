//! Streaming per-cell estimates in O(N) memory: weighted Welford moments and batch means.
//!
//! A Metropolis chain repeats its state on every rejection, so states are pushed with a weight
//! (how many consecutive iterations they were held): the O(N) update happens once per accepted
//! move, not once per iteration. Batch means give the Monte Carlo standard error of each cell's
//! posterior mean and sd without storing the chain: the kept iterations are cut into equal
//! batches, and only the running mean and (co)variance of the batch estimates are kept.

/// Weighted mean and sum of squared deviations per cell (West 1979).
#[derive(Debug, Clone)]
pub(crate) struct WeightedMoments {
    pub(crate) weight: f64,
    pub(crate) mean: Vec<f64>,
    pub(crate) m2: Vec<f64>,
}

impl WeightedMoments {
    pub(crate) fn new(cells: usize) -> Self {
        Self {
            weight: 0.0,
            mean: vec![0.0; cells],
            m2: vec![0.0; cells],
        }
    }

    /// Add `x` with weight `w` > 0.
    pub(crate) fn push(&mut self, x: &[f64], w: f64) {
        self.weight += w;
        let share = w / self.weight;
        for ((mean, m2), &xk) in self.mean.iter_mut().zip(&mut self.m2).zip(x) {
            let delta = xk - *mean;
            *mean += share * delta;
            *m2 += w * delta * (xk - *mean);
        }
    }

    /// The mean as it would be after pushing `x` with weight `w`, without pushing it.
    pub(crate) fn mean_with(&self, x: &[f64], w: f64, out: &mut [f64]) {
        let share = if self.weight + w > 0.0 {
            w / (self.weight + w)
        } else {
            0.0
        };
        for ((o, &mean), &xk) in out.iter_mut().zip(&self.mean).zip(x) {
            *o = mean + share * (xk - mean);
        }
    }

    /// Merge several independent accumulators (Chan et al.): the pooled mean and m2.
    pub(crate) fn pool(parts: &[WeightedMoments]) -> WeightedMoments {
        let cells = parts.first().map_or(0, |p| p.mean.len());
        let mut pooled = WeightedMoments::new(cells);
        for part in parts.iter().filter(|p| p.weight > 0.0) {
            let total = pooled.weight + part.weight;
            let share = part.weight / total;
            for k in 0..cells {
                let delta = part.mean[k] - pooled.mean[k];
                pooled.mean[k] += share * delta;
                pooled.m2[k] += part.m2[k] + delta * delta * pooled.weight * share;
            }
            pooled.weight = total;
        }
        pooled
    }

    /// Per-cell standard deviation (weights are iteration counts: divisor weight - 1).
    pub(crate) fn sd(&self) -> Vec<f64> {
        let divisor = (self.weight - 1.0).max(1.0);
        self.m2
            .iter()
            .map(|m2| (m2 / divisor).max(0.0).sqrt())
            .collect()
    }
}

/// One chain's current batch: weighted sums of u and u^2.
#[derive(Debug, Clone)]
pub(crate) struct BatchSums {
    pub(crate) weight: f64,
    pub(crate) sum: Vec<f64>,
    pub(crate) sum_sq: Vec<f64>,
}

impl BatchSums {
    pub(crate) fn new(cells: usize) -> Self {
        Self {
            weight: 0.0,
            sum: vec![0.0; cells],
            sum_sq: vec![0.0; cells],
        }
    }

    pub(crate) fn push(&mut self, x: &[f64], w: f64) {
        self.weight += w;
        for ((s, q), &xk) in self.sum.iter_mut().zip(&mut self.sum_sq).zip(x) {
            *s += w * xk;
            *q += w * xk * xk;
        }
    }

    fn clear(&mut self) {
        self.weight = 0.0;
        self.sum.fill(0.0);
        self.sum_sq.fill(0.0);
    }
}

/// Running mean and covariance over completed batches of the batch means of u and u^2.
#[derive(Debug, Clone)]
pub(crate) struct BatchStatistics {
    pub(crate) batches: f64,
    mean1: Vec<f64>,
    mean2: Vec<f64>,
    c11: Vec<f64>,
    c22: Vec<f64>,
    c12: Vec<f64>,
}

impl BatchStatistics {
    pub(crate) fn new(cells: usize) -> Self {
        Self {
            batches: 0.0,
            mean1: vec![0.0; cells],
            mean2: vec![0.0; cells],
            c11: vec![0.0; cells],
            c22: vec![0.0; cells],
            c12: vec![0.0; cells],
        }
    }

    /// Close a batch: add its means to the running statistics and clear it.
    pub(crate) fn close(&mut self, batch: &mut BatchSums) {
        if batch.weight <= 0.0 {
            return;
        }
        self.batches += 1.0;
        let share = 1.0 / self.batches;
        for k in 0..self.mean1.len() {
            let b1 = batch.sum[k] / batch.weight;
            let b2 = batch.sum_sq[k] / batch.weight;
            let d1 = b1 - self.mean1[k];
            let d2 = b2 - self.mean2[k];
            self.mean1[k] += share * d1;
            self.mean2[k] += share * d2;
            self.c11[k] += d1 * (b1 - self.mean1[k]);
            self.c22[k] += d2 * (b2 - self.mean2[k]);
            self.c12[k] += d1 * (b2 - self.mean2[k]);
        }
        batch.clear();
    }

    /// Merge the batch statistics of several chains (all batches equally long).
    pub(crate) fn pool(parts: &[BatchStatistics]) -> BatchStatistics {
        let cells = parts.first().map_or(0, |p| p.mean1.len());
        let mut pooled = BatchStatistics::new(cells);
        for part in parts.iter().filter(|p| p.batches > 0.0) {
            let total = pooled.batches + part.batches;
            let share = part.batches / total;
            let cross = pooled.batches * share;
            for k in 0..cells {
                let d1 = part.mean1[k] - pooled.mean1[k];
                let d2 = part.mean2[k] - pooled.mean2[k];
                pooled.mean1[k] += share * d1;
                pooled.mean2[k] += share * d2;
                pooled.c11[k] += part.c11[k] + d1 * d1 * cross;
                pooled.c22[k] += part.c22[k] + d2 * d2 * cross;
                pooled.c12[k] += part.c12[k] + d1 * d2 * cross;
            }
            pooled.batches = total;
        }
        pooled
    }

    /// Monte Carlo standard errors of the posterior mean and sd per cell, from the spread of the
    /// batch estimates (the sd by the delta method: sd = sqrt(E u^2 - (E u)^2)). None with fewer
    /// than two batches.
    pub(crate) fn standard_errors(&self, mean: &[f64], sd: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
        if self.batches < 2.0 {
            return None;
        }
        let b = self.batches;
        let var = |c: f64| c / (b - 1.0);
        let mut mcse_mean = Vec::with_capacity(mean.len());
        let mut mcse_sd = Vec::with_capacity(mean.len());
        for k in 0..mean.len() {
            mcse_mean.push((var(self.c11[k]) / b).max(0.0).sqrt());
            // g = (m2 - 2 m m1) / (2 sd): the linearised sd of one batch.
            let m = mean[k];
            let var_g =
                var(self.c22[k]) + 4.0 * m * m * var(self.c11[k]) - 4.0 * m * var(self.c12[k]);
            let s = sd[k].max(f64::MIN_POSITIVE);
            mcse_sd.push((var_g.max(0.0) / (4.0 * s * s) / b).sqrt());
        }
        Some((mcse_mean, mcse_sd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_push_equals_repeated_push() {
        let mut a = WeightedMoments::new(1);
        let mut b = WeightedMoments::new(1);
        for (x, w) in [(1.0, 3.0), (-2.0, 1.0), (0.5, 2.0)] {
            a.push(&[x], w);
            for _ in 0..w as usize {
                b.push(&[x], 1.0);
            }
        }
        assert!((a.mean[0] - b.mean[0]).abs() < 1e-14);
        assert!((a.m2[0] - b.m2[0]).abs() < 1e-12);
        // 1,1,1,-2,0.5,0.5: mean 1/3
        assert!((a.mean[0] - 1.0 / 3.0).abs() < 1e-14);
    }

    #[test]
    fn pooling_equals_one_accumulator_over_everything() {
        let xs = [0.3, 1.7, -0.4, 2.2, 0.9, -1.1, 0.0];
        let mut all = WeightedMoments::new(1);
        let mut left = WeightedMoments::new(1);
        let mut right = WeightedMoments::new(1);
        for (k, &x) in xs.iter().enumerate() {
            all.push(&[x], 1.0);
            if k < 3 { &mut left } else { &mut right }.push(&[x], 1.0);
        }
        let pooled = WeightedMoments::pool(&[left, right]);
        assert!((pooled.mean[0] - all.mean[0]).abs() < 1e-14);
        assert!((pooled.m2[0] - all.m2[0]).abs() < 1e-12);
    }

    #[test]
    fn batch_standard_error_of_iid_batches_is_their_sd_over_root_b() {
        let mut stats = BatchStatistics::new(1);
        let values = [1.0, 3.0, 2.0, 6.0];
        for v in values {
            let mut batch = BatchSums::new(1);
            batch.push(&[v], 2.0);
            stats.close(&mut batch);
        }
        let (mcse, _) = stats.standard_errors(&[3.0], &[1.0]).unwrap();
        // sample variance of {1,3,2,6} = 14/3
        assert!((mcse[0] - (14.0 / 3.0 / 4.0_f64).sqrt()).abs() < 1e-12);
    }
}
