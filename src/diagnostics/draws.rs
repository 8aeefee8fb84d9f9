//! Draws as a validated (chain x draw) matrix, and the transformations the diagnostics apply to
//! them: splitting chains in half, rank-normalisation, folding, quantile indicators.
//!
//! Every step copies ArviZ 0.23 (`arviz/stats/diagnostics.py`) operation for operation, so the
//! results agree with it to rounding: the same split, the same average ranks and Blom offset, the
//! same quantile definition (scipy's `mquantiles(alphap=1, betap=1)`, R's type 7).

use super::normal::standard_normal_quantile;

/// Fewest draws per chain ArviZ accepts.
pub(crate) const MIN_DRAWS: usize = 4;

/// Blom's fractional offset for rank-normalisation, (r - c) / (S - 2c + 1).
const BLOM_OFFSET: f64 = 3.0 / 8.0;

/// A (chain x draw) matrix, stored chain by chain.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Draws {
    n_chains: usize,
    n_draws: usize,
    values: Vec<f64>,
}

impl Draws {
    /// Accepts chains that the diagnostics are defined for: at least one chain, all of the same
    /// length, at least [`MIN_DRAWS`] draws each, every draw finite, and not all draws equal.
    pub(crate) fn from_chains(chains: &[&[f64]]) -> Option<Self> {
        let n_draws = chains.first()?.len();
        if n_draws < MIN_DRAWS || chains.iter().any(|c| c.len() != n_draws) {
            return None;
        }
        let values: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
        if values.iter().any(|v| !v.is_finite()) || all_equal(&values) {
            return None;
        }
        Some(Self {
            n_chains: chains.len(),
            n_draws,
            values,
        })
    }

    fn from_parts(n_chains: usize, n_draws: usize, values: Vec<f64>) -> Self {
        debug_assert_eq!(values.len(), n_chains * n_draws);
        Self {
            n_chains,
            n_draws,
            values,
        }
    }

    pub(crate) fn n_chains(&self) -> usize {
        self.n_chains
    }

    pub(crate) fn n_draws(&self) -> usize {
        self.n_draws
    }

    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }

    pub(crate) fn chains(&self) -> impl Iterator<Item = &[f64]> {
        self.values.chunks_exact(self.n_draws)
    }

    /// Each chain becomes two: its first and its last floor(n/2) draws (for odd n the middle draw
    /// is dropped). The first halves come first, then the second halves, as in ArviZ's `_stack`.
    pub(crate) fn split(&self) -> Self {
        let half = self.n_draws / 2;
        let mut values = Vec::with_capacity(2 * self.n_chains * half);
        for chain in self.chains() {
            values.extend_from_slice(&chain[..half]);
        }
        for chain in self.chains() {
            values.extend_from_slice(&chain[self.n_draws - half..]);
        }
        Self::from_parts(2 * self.n_chains, half, values)
    }

    /// The same shape with `f` applied to every draw.
    pub(crate) fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        Self::from_parts(
            self.n_chains,
            self.n_draws,
            self.values.iter().map(|&v| f(v)).collect(),
        )
    }

    /// Rank-normalisation: average ranks over all chains pooled, Blom's fractional ranks, then the
    /// standard normal quantile of each.
    pub(crate) fn z_scaled(&self) -> Self {
        let ranks = average_ranks(&self.values);
        let z = blom_scores(&ranks);
        Self::from_parts(self.n_chains, self.n_draws, z)
    }

    /// [`Self::z_scaled`] of the draws and of their [`Self::folded`] values, from one sort: below
    /// the median |x - median| falls as x rises and above it it rises with x, so the folded
    /// values in increasing order are the merge of the sorted draws below the median, read
    /// downwards, with those from it up, read upwards. The same numbers as the two calls (the
    /// same ranks, ties included), where those sort twice and select the median once more.
    pub(crate) fn z_scaled_with_folded(&self) -> (Self, Self) {
        let order = sorted_with_indices(&self.values);
        let n = order.len();
        let median = if n % 2 == 1 {
            order[n / 2].0
        } else {
            (order[n / 2 - 1].0 + order[n / 2].0) / 2.0
        };
        let fold = |&(v, i): &(f64, usize)| ((v - median).abs(), i);
        let above = order.partition_point(|&(v, _)| v < median);
        let mut down = order[..above].iter().rev().peekable();
        let mut up = order[above..].iter().peekable();
        let mut folded = Vec::with_capacity(n);
        while folded.len() < n {
            let take_down = match (down.peek(), up.peek()) {
                (Some(&d), Some(&u)) => fold(d).0 <= fold(u).0,
                (Some(_), None) => true,
                _ => false,
            };
            let next = if take_down { down.next() } else { up.next() };
            folded.push(fold(next.expect("n values in all")));
        }
        let scores = |order: &[(f64, usize)]| {
            Self::from_parts(
                self.n_chains,
                self.n_draws,
                blom_scores(&ranks_of_sorted(order)),
            )
        };
        (scores(&order), scores(&folded))
    }

    /// |x - median|, the median taken over all draws pooled.
    pub(crate) fn folded(&self) -> Self {
        let median = median(&self.values);
        self.map(|v| (v - median).abs())
    }

    /// 1 where a draw is at most the pooled `prob` quantile, else 0.
    pub(crate) fn quantile_indicator(&self, prob: f64) -> Self {
        self.indicator(quantile_type7(&self.values, prob))
    }

    /// 1 where a draw is at most `threshold`, else 0.
    pub(crate) fn indicator(&self, threshold: f64) -> Self {
        self.map(|v| if v <= threshold { 1.0 } else { 0.0 })
    }
}

fn all_equal(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[0] == w[1])
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// 1-based ranks, ties sharing the average of the ranks they span (scipy's `method="average"`).
/// Inputs must be finite; -0.0 and 0.0 tie, as they do in numpy.
pub(crate) fn average_ranks(values: &[f64]) -> Vec<f64> {
    ranks_of_sorted(&sorted_with_indices(values))
}

/// (value, index) pairs in increasing order of value (sorting the pairs keeps the comparisons
/// on contiguous memory).
fn sorted_with_indices(values: &[f64]) -> Vec<(f64, usize)> {
    let mut order: Vec<(f64, usize)> = values.iter().copied().zip(0..).collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    order
}

/// The average ranks of values given as (value, index) pairs in increasing order of value (ties
/// adjacent), by index.
fn ranks_of_sorted(order: &[(f64, usize)]) -> Vec<f64> {
    let mut ranks = vec![0.0; order.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && order[end].0 == order[start].0 {
            end += 1;
        }
        // Positions start..end hold equal values; their 1-based ranks are start+1 ..= end.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &(_, index) in &order[start..end] {
            ranks[index] = shared;
        }
        start = end;
    }
    ranks
}

/// The normal scores of average ranks among n values: Phi^-1((r - 3/8) / (n - 3/4 + 1)). The
/// scores of whole ranks come from a table made once per n and thread (every cell of a job has
/// the same number of draws); tied (half) ranks are computed.
fn blom_scores(ranks: &[f64]) -> Vec<f64> {
    use std::cell::RefCell;
    thread_local! {
        static TABLE: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
    }
    let n = ranks.len();
    let denominator = (n as f64 - 2.0 * BLOM_OFFSET) + 1.0;
    let score = |r: f64| standard_normal_quantile((r - BLOM_OFFSET) / denominator);
    TABLE.with_borrow_mut(|table| {
        if table.len() != n {
            *table = (1..=n).map(|r| score(r as f64)).collect();
        }
        ranks
            .iter()
            .map(|&r| {
                let whole = r as usize;
                if whole as f64 == r && (1..=n).contains(&whole) {
                    table[whole - 1]
                } else {
                    score(r)
                }
            })
            .collect()
    })
}

/// numpy's median: the middle value, or the mean of the two middle values.
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut work = values.to_vec();
    let n = work.len();
    let (below, upper, _) = work.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// scipy's `mquantiles(values, prob, alphap=1, betap=1)` (R's type 7), evaluated with the same
/// floating-point operations so that ties at the quantile compare the same way as in ArviZ.
pub(crate) fn quantile_type7(values: &[f64], prob: f64) -> f64 {
    quantile_of_sorted(&sorted(values), prob)
}

/// Several type-7 quantiles from one sort.
pub(crate) fn quantiles_type7(values: &[f64], probs: &[f64]) -> Vec<f64> {
    let sorted = sorted(values);
    probs
        .iter()
        .map(|&p| quantile_of_sorted(&sorted, p))
        .collect()
}

fn quantile_of_sorted(sorted: &[f64], prob: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    // scipy's m = alphap + p (1 - alphap - betap) with alphap = betap = 1, i.e. 1 + p * (-1):
    // bit for bit the same as 1 - p.
    let plotting_offset = 1.0 - prob;
    let aleph = n as f64 * prob + plotting_offset;
    let k = aleph.clamp(1.0, (n - 1) as f64).floor();
    let gamma = (aleph - k).clamp(0.0, 1.0);
    let k = k as usize;
    (1.0 - gamma) * sorted[k - 1] + gamma * sorted[k]
}

/// Arithmetic mean.
pub(crate) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample variance with n - 1 in the denominator (two-pass, as numpy's `var(ddof=1)`).
pub(crate) fn sample_variance(values: &[f64]) -> f64 {
    let m = mean(values);
    values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() as f64 - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_rejects_what_the_diagnostics_cannot_use() {
        let ok = [1.0, 2.0, 3.0, 4.0];
        assert!(Draws::from_chains(&[&ok]).is_some());
        assert!(Draws::from_chains(&[]).is_none(), "no chains");
        assert!(Draws::from_chains(&[&ok[..3]]).is_none(), "3 draws");
        assert!(
            Draws::from_chains(&[&ok, &ok[..3]]).is_none(),
            "unequal lengths"
        );
        assert!(
            Draws::from_chains(&[&[1.0, f64::NAN, 3.0, 4.0]]).is_none(),
            "NaN"
        );
        assert!(
            Draws::from_chains(&[&[1.0, f64::INFINITY, 3.0, 4.0]]).is_none(),
            "inf"
        );
        assert!(
            Draws::from_chains(&[&[2.0; 6], &[2.0; 6]]).is_none(),
            "constant"
        );
    }

    #[test]
    fn split_keeps_halves_and_drops_the_middle_of_odd_chains() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let split = Draws::from_chains(&[&a, &b]).unwrap().split();
        assert_eq!((split.n_chains(), split.n_draws()), (4, 2));
        let chains: Vec<&[f64]> = split.chains().collect();
        assert_eq!(
            chains,
            vec![&[1.0, 2.0][..], &[6.0, 7.0], &[4.0, 5.0], &[9.0, 10.0]]
        );
    }

    #[test]
    fn ties_share_their_average_rank() {
        let ranks = average_ranks(&[3.0, 1.0, 3.0, 2.0, 3.0, -0.0, 0.0]);
        // Sorted: -0.0, 0.0 (ranks 1,2 -> 1.5), 1 (3), 2 (4), 3,3,3 (5,6,7 -> 6).
        assert_eq!(ranks, vec![6.0, 3.0, 6.0, 4.0, 6.0, 1.5, 1.5]);
    }

    #[test]
    fn z_scaling_is_symmetric_and_monotone() {
        let draws = Draws::from_chains(&[&[10.0, 30.0, 20.0, 40.0]])
            .unwrap()
            .z_scaled();
        let z = draws.values();
        // Ranks 1, 3, 2, 4 of S = 4: p = (r - 3/8) / 4.25.
        let expected_top = standard_normal_quantile((4.0 - 0.375) / 4.25);
        assert!((z[3] - expected_top).abs() < 1e-15);
        assert!((z[0] + z[3]).abs() < 1e-15 && (z[1] + z[2]).abs() < 1e-15);
        assert!(z[0] < z[2] && z[2] < z[1] && z[1] < z[3]);
    }

    #[test]
    fn median_and_type7_quantile_match_their_definitions() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        let x: Vec<f64> = (1..=11).map(f64::from).collect();
        // Type 7: h = (n - 1) p + 1 (1-based), interpolating between neighbours.
        assert!((quantile_type7(&x, 0.5) - 6.0).abs() < 1e-12);
        assert!((quantile_type7(&x, 0.05) - 1.5).abs() < 1e-12);
        assert!((quantile_type7(&x, 0.95) - 10.5).abs() < 1e-12);
        assert_eq!(quantile_type7(&x, 0.0), 1.0);
        assert_eq!(quantile_type7(&x, 1.0), 11.0);
    }

    #[test]
    fn folding_measures_distance_from_the_pooled_median() {
        let folded = Draws::from_chains(&[&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]])
            .unwrap()
            .folded();
        assert_eq!(folded.values(), &[3.5, 2.5, 1.5, 0.5, 0.5, 1.5, 2.5, 3.5]);
    }

    /// One sort gives the scores of the draws and of their folded values bit for bit as the two
    /// sorts did: continuous draws, draws on a few values (ties on both sides of the median,
    /// at the median, and between its two sides: 1 and 5 about a median of 3), odd and even
    /// counts, signed zeros.
    #[test]
    fn the_folded_scores_from_one_sort_are_the_two_sorts_scores() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for (chains, draws, levels) in [(4, 250, 0), (3, 7, 5), (2, 10, 3), (4, 9, 0), (1, 8, 2)] {
            let chain: Vec<Vec<f64>> = (0..chains)
                .map(|_| {
                    (0..draws)
                        .map(|_| {
                            let u = next();
                            if levels == 0 {
                                (u - 0.4).powi(3)
                            } else {
                                (u * levels as f64).floor() * 2.0 - 1.0
                            }
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[f64]> = chain.iter().map(|c| c.as_slice()).collect();
            let d = Draws::from_chains(&refs).unwrap();
            let (scores, folded) = d.z_scaled_with_folded();
            assert_eq!(scores, d.z_scaled(), "{chains} x {draws}, {levels} levels");
            assert_eq!(
                folded,
                d.folded().z_scaled(),
                "{chains} x {draws}, {levels} levels"
            );
        }
        let zeros =
            Draws::from_chains(&[&[-0.0, 0.0, 1.0, -1.0], &[0.0, 2.0, -0.0, -2.0]]).unwrap();
        let (scores, folded) = zeros.z_scaled_with_folded();
        assert_eq!(scores, zeros.z_scaled());
        assert_eq!(folded, zeros.folded().z_scaled());
    }
}
