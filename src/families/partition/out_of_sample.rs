//! The out-of-sample score of a partition method: k-fold cross-validation over areas.
//!
//! The areas are dealt into k folds by a random stream ([`AreaFolds::deal`]). For each fold the
//! method runs again, from the same start with the same settings, on a problem that hides the
//! fold's targets ([`Problem::hiding_targets`]: the held-out areas keep their place in the graph,
//! their features and their share of a region's size, but their target enters neither F nor the
//! task regression). Each held-out area is then predicted by the task model fitted on the
//! training targets, from the region it falls in ([`Evaluator::area_predictions`]), and the score
//! is the mean absolute error over the held-out areas, averaged over the folds: once for the
//! fold run's final partition, once for its partition of smallest F (F on the training targets).
//! Beside it, on the same folds, the error of the constant predictor (the training areas' mean
//! target), the score a partition must beat to say anything about the held-out areas.
//!
//! This scores the method (its search re-run k times on k training sets), not the one partition
//! the job reports: that partition was searched with every target and cannot be scored out of
//! sample. The per-region scores of [`super::task`] hold nothing out (`region_mae_*`) or regions
//! out of the regression only (`cv_region_mae_*`), after a search that saw every target: they
//! measure the fit; this measures whether the partition generalises to areas whose target it
//! has not seen.

use rand::RngExt;

use super::areas::Areas;
use super::baselines::BaselineError;
use super::chain::ChainSettings;
use super::method::{PartitionKind, run_method};
use super::task::{Evaluator, Problem, RegionStats};
use crate::streams::StreamRng;

/// Why the out-of-sample score cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OutOfSampleError {
    #[error("{folds} out-of-sample folds asked for {areas} areas; 2 to {areas} are allowed")]
    FoldCount { folds: usize, areas: usize },
    #[error("out-of-sample fold {fold}: {source}")]
    Method {
        fold: usize,
        #[source]
        source: BaselineError,
    },
    #[error("out-of-sample fold {fold}: the {what} is {value}, not a finite number")]
    NotFinite {
        fold: usize,
        what: &'static str,
        value: f64,
    },
}

/// The fold each area is held out in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AreaFolds {
    fold_of: Vec<u32>,
    count: usize,
}

impl AreaFolds {
    /// `areas` areas dealt into `folds` folds whose sizes differ by at most one: a uniformly
    /// random order of the areas (Fisher-Yates with `rng`), the k-th area of it in fold k mod
    /// `folds`.
    pub fn deal(areas: usize, folds: usize, rng: &mut StreamRng) -> Result<Self, OutOfSampleError> {
        if folds < 2 || folds > areas {
            return Err(OutOfSampleError::FoldCount { folds, areas });
        }
        let mut order: Vec<usize> = (0..areas).collect();
        for i in (1..areas).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        let mut fold_of = vec![0u32; areas];
        for (rank, &a) in order.iter().enumerate() {
            fold_of[a] = (rank % folds) as u32;
        }
        Ok(Self {
            fold_of,
            count: folds,
        })
    }

    /// The number of folds.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The fold area a is held out in.
    pub fn fold_of(&self, a: usize) -> usize {
        self.fold_of[a] as usize
    }

    /// Per area: whether it is held out in `fold`.
    pub(crate) fn held_out(&self, fold: usize) -> Vec<bool> {
        self.fold_of.iter().map(|&f| f as usize == fold).collect()
    }
}

/// The method a job runs, as each fold runs it again.
#[derive(Debug, Clone, Copy)]
pub struct FoldMethod<'a> {
    /// The job's problem, every target observed: the truth the held-out areas are scored on.
    pub problem: &'a Problem,
    pub areas: &'a Areas,
    /// The chains' start (the administrative pieces), also the `admin` baseline.
    pub start: &'a [u32],
    pub kind: PartitionKind,
    pub chain: &'a ChainSettings,
}

/// The random streams of one fold's run.
pub struct FoldStreams {
    pub proposals: StreamRng,
    pub acceptance: StreamRng,
}

/// The out-of-sample mean absolute errors over the held-out areas, averaged over the folds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutOfSampleScore {
    /// Of each fold run's final partition.
    pub final_mae: f64,
    /// Of each fold run's partition of smallest F.
    pub best_mae: f64,
    /// Of the training areas' mean target (no partition).
    pub constant_mae: f64,
}

/// Run `method` once per fold of `folds` on the fold's training targets (with the fold's
/// `streams`) and score the held-out areas.
pub fn score_out_of_sample(
    method: &FoldMethod<'_>,
    folds: &AreaFolds,
    mut streams: impl FnMut(usize) -> FoldStreams,
) -> Result<OutOfSampleScore, OutOfSampleError> {
    let mut total = OutOfSampleScore {
        final_mae: 0.0,
        best_mae: 0.0,
        constant_mae: 0.0,
    };
    for fold in 0..folds.count() {
        let score = score_fold(method, &folds.held_out(fold), streams(fold))
            .map_err(|source| OutOfSampleError::Method { fold, source })?;
        for (what, value) in [
            ("final partition's MAE", score.final_mae),
            ("best partition's MAE", score.best_mae),
            ("constant predictor's MAE", score.constant_mae),
        ] {
            if !value.is_finite() {
                return Err(OutOfSampleError::NotFinite { fold, what, value });
            }
        }
        total.final_mae += score.final_mae;
        total.best_mae += score.best_mae;
        total.constant_mae += score.constant_mae;
    }
    let k = folds.count() as f64;
    Ok(OutOfSampleScore {
        final_mae: total.final_mae / k,
        best_mae: total.best_mae / k,
        constant_mae: total.constant_mae / k,
    })
}

/// One fold: the method run with the held-out targets hidden, its partitions scored on them.
fn score_fold(
    method: &FoldMethod<'_>,
    held_out: &[bool],
    mut streams: FoldStreams,
) -> Result<OutOfSampleScore, BaselineError> {
    let training = method.problem.hiding_targets(held_out);
    let outcome = run_method(
        &training,
        method.areas,
        method.start,
        method.kind,
        method.chain,
        &mut streams.proposals,
        &mut streams.acceptance,
    )?;
    Ok(OutOfSampleScore {
        final_mae: held_out_mae(&training, method.problem, &outcome.last.labels, held_out),
        best_mae: held_out_mae(&training, method.problem, &outcome.best.labels, held_out),
        constant_mae: constant_mae(method.problem, held_out),
    })
}

/// The mean absolute error over the held-out areas of the partition `labels`: each area
/// predicted by the task model fitted on `training`'s observed targets, from its region; the
/// truth read from `full`.
pub(crate) fn held_out_mae(
    training: &Problem,
    full: &Problem,
    labels: &[u32],
    held_out: &[bool],
) -> f64 {
    let stats = RegionStats::new(training, labels);
    let predictions = Evaluator::new(training).area_predictions(training, &stats);
    mean_absolute_error(full, held_out, |a| predictions[labels[a] as usize])
}

/// The mean absolute error over the held-out areas of the training areas' mean target.
pub(crate) fn constant_mae(full: &Problem, held_out: &[bool]) -> f64 {
    let training: Vec<f64> = (0..full.area_count())
        .filter(|&a| !held_out[a])
        .map(|a| full.target_of(a))
        .collect();
    let mean = training.iter().sum::<f64>() / training.len() as f64;
    mean_absolute_error(full, held_out, |_| mean)
}

fn mean_absolute_error(full: &Problem, held_out: &[bool], predict: impl Fn(usize) -> f64) -> f64 {
    let errors: Vec<f64> = (0..full.area_count())
        .filter(|&a| held_out[a])
        .map(|a| (full.target_of(a) - predict(a)).abs())
        .collect();
    errors.iter().sum::<f64>() / errors.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::partition::chain::{Chain, Schedule, score_partition};
    use crate::families::partition::graph::Adjacency;
    use crate::families::partition::task::TaskSettings;
    use crate::streams::{Purpose, stream};

    /// A rows x cols lattice with two features, a noisy target and points for k-means.
    fn lattice(rows: usize, cols: usize, regions: usize) -> (Problem, Areas) {
        let n = rows * cols;
        let mut rng = stream(5, Purpose::Truth, "out-of-sample lattice");
        let features: Vec<f64> = (0..2 * n).map(|_| rng.random::<f64>()).collect();
        let target: Vec<f64> = (0..n)
            .map(|a| features[2 * a] - features[2 * a + 1] + rng.random::<f64>())
            .collect();
        let areas = Areas {
            ids: (0..n).map(|a| a.to_string()).collect(),
            feature_names: vec!["u".into(), "v".into()],
            features: features.clone(),
            target: target.clone(),
            coordinates: Some(
                (0..n)
                    .map(|a| [(a % cols) as f64, (a / cols) as f64])
                    .collect(),
            ),
            admin: None,
        };
        let problem = Problem::new(
            Adjacency::lattice(rows, cols),
            features,
            2,
            target,
            regions,
            TaskSettings::default(),
        );
        (problem, areas)
    }

    /// Rows of the lattice cut into `regions` bands (connected).
    fn bands(rows: usize, cols: usize, regions: usize) -> Vec<u32> {
        (0..rows * cols)
            .map(|a| ((a / cols) * regions / rows) as u32)
            .collect()
    }

    #[test]
    fn dealt_folds_are_balanced_and_the_same_for_the_same_stream() {
        let deal = |key: &str| {
            AreaFolds::deal(103, 5, &mut stream(7, Purpose::Observations, key)).unwrap()
        };
        let folds = deal("job");
        assert_eq!(folds, deal("job"), "the same stream deals the same folds");
        assert_ne!(folds, deal("another job"));
        let mut sizes = vec![0; folds.count()];
        for a in 0..103 {
            sizes[folds.fold_of(a)] += 1;
        }
        assert_eq!(sizes, [21, 21, 21, 20, 20]);
        for (fold, &size) in sizes.iter().enumerate() {
            let held_out = folds.held_out(fold);
            assert_eq!(held_out.iter().filter(|&&h| h).count(), size);
        }
        let mut rng = stream(7, Purpose::Observations, "job");
        for (folds, areas) in [(1, 10), (11, 10)] {
            assert_eq!(
                AreaFolds::deal(areas, folds, &mut rng),
                Err(OutOfSampleError::FoldCount { folds, areas })
            );
        }
    }

    #[test]
    fn hiding_no_target_changes_no_score() {
        let (problem, _) = lattice(6, 6, 4);
        let labels = bands(6, 6, 4);
        let hidden = problem.hiding_targets(&[false; 36]);
        assert_eq!(
            score_partition(&problem, &labels),
            score_partition(&hidden, &labels)
        );
    }

    /// A target exactly linear in one feature, every area its own region: the regions of the
    /// held-out areas have no observed target, the model fitted on the others is the line, so
    /// the held-out areas are predicted exactly; the constant predictor is not.
    #[test]
    fn a_linear_target_is_predicted_exactly_out_of_sample() {
        let n = 12;
        let x: Vec<f64> = (0..n).map(|a| (a * a) as f64 / 7.0).collect();
        let target: Vec<f64> = x.iter().map(|x| 2.0 + 3.0 * x).collect();
        let problem = Problem::new(
            Adjacency::lattice(1, n),
            x,
            1,
            target,
            n,
            TaskSettings::default(),
        );
        let labels: Vec<u32> = (0..n as u32).collect();
        let held_out: Vec<bool> = (0..n).map(|a| a % 3 == 1).collect();
        let training = problem.hiding_targets(&held_out);
        let mae = held_out_mae(&training, &problem, &labels, &held_out);
        assert!(mae < 1e-9, "{mae}");
        assert!(constant_mae(&problem, &held_out) > 1.0);
    }

    /// Every kind, run on a problem with hidden targets (stored as NaN), gives finite scores: a
    /// fold's run never reads a held-out target.
    #[test]
    fn no_method_reads_a_hidden_target() {
        let (problem, areas) = lattice(6, 6, 4);
        let start = bands(6, 6, 4);
        let held_out: Vec<bool> = (0..36).map(|a| a % 3 == 0).collect();
        let training = problem.hiding_targets(&held_out);
        let chain = ChainSettings {
            iterations: 600,
            temperature: Schedule {
                start: 1.0,
                end: 0.05,
            },
            candidates: 5,
            ..ChainSettings::default()
        };
        for &kind in PartitionKind::ALL {
            let key = format!("hidden;{kind}");
            let outcome = run_method(
                &training,
                &areas,
                &start,
                kind,
                &chain,
                &mut stream(3, Purpose::Chain, &key),
                &mut stream(3, Purpose::Acceptance, &key),
            )
            .unwrap();
            for scored in [&outcome.last, &outcome.best] {
                let evaluation = &scored.evaluation;
                assert!(evaluation.f.is_finite(), "{kind}: F {}", evaluation.f);
                assert!(
                    evaluation.mae.is_finite() && scored.cv_mae.is_finite(),
                    "{kind}"
                );
                let mae = held_out_mae(&training, &problem, &scored.labels, &held_out);
                assert!(mae.is_finite(), "{kind}: held-out MAE {mae}");
            }
            assert!(
                outcome.trace.iter().all(|p| p.f.is_finite()),
                "{kind}: trace"
            );
        }
        let learned = ChainSettings {
            kind: crate::families::partition::chain::FlipKind::LearnedFlip,
            ..chain
        };
        let mut run = Chain::new(&training, &start, learned);
        let (mut proposals, mut acceptance) = (
            stream(3, Purpose::Chain, "hidden;learner"),
            stream(3, Purpose::Acceptance, "hidden;learner"),
        );
        for k in 0..600 {
            run.step(k, &mut proposals, &mut acceptance);
        }
        let weights = run.learner().weights();
        assert!(
            weights.iter().all(|w| w.is_finite()) && weights.iter().any(|&w| w != 0.0),
            "the learned flip's features read a hidden target: weights {weights:?}"
        );
    }
}
