//! What a kind computes once per target and shares across the chains of a run: a Laplace fit
//! (gpcn), the prior's eigenbasis (mgrad).
//!
//! The protocol has no per-run hook, and one sampler value may serve many targets (simulation-
//! based calibration runs one sampler over a new data set per replication), so the shared value
//! is cached under a key that pins down the target by content: the likelihood with its data,
//! where they see the field (the cells, or the sites' weights), the intercept, and the prior
//! through a fingerprint (L applied to a fixed pseudo-random vector: two square roots that agree
//! on it are the same operator except on a set of measure zero). A chain whose target differs from the cached one recomputes. The shared
//! value is a pure function of the target, so the cache never changes a number.

use std::sync::{Arc, Mutex};

use crate::model::lanczos::start_vector;
use crate::model::likelihood::Likelihood;
use crate::model::prior::Prior;
use crate::model::sites::SiteOperator;
use crate::model::target::{Observed, Target};

/// The prior, pinned down by content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PriorKey {
    latent_dim: usize,
    cells: usize,
    /// Bits of L q for the fixed vector q.
    fingerprint: Vec<u64>,
}

impl PriorKey {
    pub(crate) fn new(prior: &dyn Prior) -> Self {
        let q = start_vector(prior.latent_dim());
        let mut out = vec![0.0; prior.cells()];
        let mut scratch = vec![0.0; prior.scratch_len()];
        prior.apply_sqrt(&q, &mut out, &mut scratch);
        Self {
            latent_dim: prior.latent_dim(),
            cells: prior.cells(),
            fingerprint: out.iter().map(|x| x.to_bits()).collect(),
        }
    }
}

/// Where the data see the field, pinned down by content.
#[derive(Debug, Clone, PartialEq)]
enum ObservedKey {
    Cells(Vec<usize>),
    Sites(SiteOperator),
}

impl ObservedKey {
    fn new(observed: Observed) -> Self {
        match observed {
            Observed::Cells(cells) => Self::Cells(cells.to_vec()),
            Observed::Sites(sites) => Self::Sites(sites.clone()),
        }
    }
}

/// The whole target, pinned down by content.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TargetKey {
    prior: PriorKey,
    likelihood: Likelihood,
    observed: ObservedKey,
    mean_bits: u64,
}

impl TargetKey {
    pub(crate) fn new(target: &Target) -> Self {
        Self {
            prior: PriorKey::new(target.prior),
            likelihood: target.likelihood.clone(),
            observed: ObservedKey::new(target.observed),
            mean_bits: target.mean.to_bits(),
        }
    }
}

/// One shared value under its key.
#[derive(Debug)]
pub(crate) struct Prepared<K, T> {
    slot: Mutex<Option<(K, Arc<T>)>>,
}

impl<K, T> Default for Prepared<K, T> {
    fn default() -> Self {
        Self {
            slot: Mutex::new(None),
        }
    }
}

impl<K: PartialEq, T> Prepared<K, T> {
    /// The value for `key`: the cached one if its key is equal, else `compute()` (then cached).
    pub(crate) fn get_or_compute(&self, key: K, compute: impl FnOnce() -> T) -> Arc<T> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, value)) = slot.as_ref()
            && *cached == key
        {
            return Arc::clone(value);
        }
        let value = Arc::new(compute());
        *slot = Some((key, Arc::clone(&value)));
        value
    }

    /// The value computed last, if any.
    pub(crate) fn last(&self) -> Option<Arc<T>> {
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|(_, value)| Arc::clone(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Grid, KernelSpec, KroneckerPrior, LikelihoodKind};

    #[test]
    fn a_different_target_recomputes_and_the_same_one_does_not() {
        let prior = |l: f64| {
            KroneckerPrior::new(Grid::new(4), KernelSpec::squared_exponential(l, 1.0)).unwrap()
        };
        let (a, b) = (prior(0.3), prior(0.31));
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![1.0], 1.0, 0.0);
        let other = Likelihood::new(LikelihoodKind::Gaussian, vec![1.5], 1.0, 0.0);
        let target = |prior: &'static KroneckerPrior, likelihood: &'static Likelihood| Target {
            prior,
            likelihood,
            observed: Observed::Cells(&[3]),
            mean: 0.0,
        };
        let (a, b): (&'static _, &'static _) = (Box::leak(Box::new(a)), Box::leak(Box::new(b)));
        let (l1, l2): (&'static _, &'static _) =
            (Box::leak(Box::new(likelihood)), Box::leak(Box::new(other)));
        let cache = Prepared::default();
        let mut computed = 0;
        for t in [
            target(a, l1),
            target(a, l1),
            target(b, l1),
            target(b, l2),
            target(b, l2),
        ] {
            cache.get_or_compute(TargetKey::new(&t), || computed += 1);
        }
        assert_eq!(computed, 3);
    }
}
