//! The data a job fits: which cells are observed, their values, and (simulated) the truth.
//!
//! Simulated data draw from four independent streams, each keyed by what it depends on (see
//! [`crate::plan`]): the truth xi ~ N(0, I) mapped through the truth's prior, the observed cells
//! (M = N / f distinct cells by a partial Fisher-Yates shuffle), the noise (M standard normals,
//! scaled by the noise sd) and the counts (Poisson counts, or binomial successes of a given
//! number of trials per observed cell). So two samplers of one sweep point see the same truth
//! and observations, and sweeping the noise sd rescales the same noise draws.
//!
//! Real data arrive as a full grid of values (read and checked by
//! `crate::families::latent_field::grid_csv`); a seeded share of the cells is held out and the rest observed.

use rand::RngExt;
use rand_distr::{Binomial, Distribution, Poisson, StandardNormal};

use super::grid::Grid;
use super::prior::Prior;
use super::spec::LikelihoodKind;
use super::special::logistic;
use crate::streams::StreamRng;

/// Values at a set of cells, cells in increasing order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    pub cells: Vec<usize>,
    /// The datum of each cell (binomial: its successes).
    pub values: Vec<f64>,
    /// Binomial: the trials of each cell, in the order of `cells`; empty for the other
    /// likelihoods.
    pub trials: Vec<f64>,
}

impl Observations {
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }
}

/// The data of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub(crate) grid: Grid,
    /// The field that generated the data (simulated only).
    pub(crate) truth: Option<Vec<f64>>,
    /// The covariates' coefficients that generated the data (simulated with covariates only).
    pub(crate) truth_coefficients: Option<Vec<f64>>,
    /// Cells and values used in fitting.
    pub observed: Observations,
    /// Cells and values kept out of fitting (real data), used to score predictions.
    pub(crate) held_out: Observations,
}

/// The random streams simulated data draw from.
pub struct DataStreams {
    pub truth: StreamRng,
    pub observations: StreamRng,
    pub noise: StreamRng,
    pub counts: StreamRng,
}

impl DataStreams {
    /// Every stream from the study seed `seed` under the one key `key` (tests and benchmarks;
    /// a job keys each stream by the parameters it depends on).
    pub fn keyed(seed: u64, key: &str) -> Self {
        use crate::streams::{Purpose, stream};
        Self {
            truth: stream(seed, Purpose::Truth, key),
            observations: stream(seed, Purpose::Observations, key),
            noise: stream(seed, Purpose::Noise, key),
            counts: stream(seed, Purpose::Counts, key),
        }
    }
}

/// What simulation needs to know about the model.
#[derive(Debug, Clone, Copy)]
pub struct Simulation {
    pub likelihood: LikelihoodKind,
    pub subsample: usize,
    pub noise_sd: f64,
    pub offset: f64,
    /// Binomial: the trials of every observed cell (the other likelihoods ignore it).
    pub trials: u64,
    /// The truth's constant mean, added to the prior draw before it is observed.
    pub mean: f64,
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum DataError {
    #[error("subsampling {cells} cells by {subsample} leaves no observed cell")]
    NoObservedCells { cells: usize, subsample: usize },
    #[error("holding out {holdout:?} of {cells} cells leaves no observed cell")]
    NothingLeftToFit { cells: usize, holdout: f64 },
    #[error("the grid has {found} values, the model's grid needs {expected}")]
    WrongSize { found: usize, expected: usize },
    #[error("a Poisson rate exp({log_rate:?}) is too large to draw counts from")]
    RateTooLarge { log_rate: f64 },
    #[error("binomial data need the trials of every cell: {found} given for {expected} cells")]
    WrongTrials { found: usize, expected: usize },
    #[error("a success probability logistic({logit:?}) cannot be drawn from")]
    BadProbability { logit: f64 },
}

impl Dataset {
    /// Draw a truth from `truth_prior` and observe it through `simulation`'s likelihood.
    pub fn simulate(
        truth_prior: &dyn Prior,
        simulation: Simulation,
        streams: &mut DataStreams,
    ) -> Result<Self, DataError> {
        let grid = truth_prior.grid();
        let n = grid.cells();
        let m = n / simulation.subsample;
        if m == 0 {
            return Err(DataError::NoObservedCells {
                cells: n,
                subsample: simulation.subsample,
            });
        }
        let (whitened, mut truth) = draw_prior(truth_prior, &mut streams.truth);
        let truth_coefficients = truth_prior.covariates().map(|c| c.coefficients(&whitened));
        if simulation.mean != 0.0 {
            for u in truth.iter_mut() {
                *u += simulation.mean;
            }
        }
        let cells = choose_cells(n, m, &mut streams.observations);
        let latent: Vec<f64> = cells.iter().map(|&c| truth[c]).collect();
        let values = observe(&latent, simulation, streams)?;
        let trials = match simulation.likelihood {
            LikelihoodKind::Binomial => vec![simulation.trials as f64; m],
            _ => Vec::new(),
        };
        Ok(Self {
            grid,
            truth: Some(truth),
            truth_coefficients,
            observed: Observations {
                cells,
                values,
                trials,
            },
            held_out: Observations::default(),
        })
    }

    /// Split a full grid of real values into observed and held-out cells.
    pub fn from_grid_values(
        grid: Grid,
        values: Vec<f64>,
        holdout: f64,
        rng: &mut StreamRng,
    ) -> Result<Self, DataError> {
        let n = grid.cells();
        if values.len() != n {
            return Err(DataError::WrongSize {
                found: values.len(),
                expected: n,
            });
        }
        let held = ((holdout * n as f64).round() as usize).min(n);
        if held >= n {
            return Err(DataError::NothingLeftToFit { cells: n, holdout });
        }
        let held_cells = choose_cells(n, held, rng);
        let mut is_held = vec![false; n];
        for &c in &held_cells {
            is_held[c] = true;
        }
        let pick = |keep: bool| {
            let cells: Vec<usize> = (0..n).filter(|&c| is_held[c] == keep).collect();
            let vals = cells.iter().map(|&c| values[c]).collect();
            Observations {
                cells,
                values: vals,
                trials: Vec::new(),
            }
        };
        Ok(Self {
            grid,
            truth: None,
            truth_coefficients: None,
            observed: pick(false),
            held_out: pick(true),
        })
    }

    /// The same data with the binomial trials of every cell, `trials[c]` for cell c, given to
    /// the observed and the held-out cells.
    pub fn with_trials(mut self, trials: &[f64]) -> Result<Self, DataError> {
        let expected = self.grid.cells();
        if trials.len() != expected {
            return Err(DataError::WrongTrials {
                found: trials.len(),
                expected,
            });
        }
        for part in [&mut self.observed, &mut self.held_out] {
            part.trials = part.cells.iter().map(|&c| trials[c]).collect();
        }
        Ok(self)
    }

    /// The data value at every cell (observed or held out), None where there is none.
    pub(crate) fn value_by_cell(&self) -> Vec<Option<f64>> {
        self.by_cell(|part| &part.values)
    }

    /// The binomial trials of every cell (observed or held out), None where there are none
    /// (every cell for the other likelihoods).
    pub(crate) fn trials_by_cell(&self) -> Vec<Option<f64>> {
        self.by_cell(|part| &part.trials)
    }

    fn by_cell(&self, of: impl Fn(&Observations) -> &Vec<f64>) -> Vec<Option<f64>> {
        let mut out = vec![None; self.grid.cells()];
        for part in [&self.observed, &self.held_out] {
            for (&c, &v) in part.cells.iter().zip(of(part)) {
                out[c] = Some(v);
            }
        }
        out
    }
}

/// u = L xi with xi ~ N(0, I) drawn from `rng`.
pub fn draw_prior_field(prior: &dyn Prior, rng: &mut StreamRng) -> Vec<f64> {
    draw_prior(prior, rng).1
}

/// A prior draw: its whitened coordinates xi ~ N(0, I) drawn from `rng`, and u = L xi.
pub(crate) fn draw_prior(prior: &dyn Prior, rng: &mut StreamRng) -> (Vec<f64>, Vec<f64>) {
    let xi: Vec<f64> = (0..prior.latent_dim())
        .map(|_| StandardNormal.sample(rng))
        .collect();
    let mut u = vec![0.0; prior.cells()];
    let mut scratch = vec![0.0; prior.scratch_len()];
    prior.apply_sqrt(&xi, &mut u, &mut scratch);
    (xi, u)
}

/// `count` distinct cells of `0..n`, in increasing order (partial Fisher-Yates).
pub(crate) fn choose_cells(n: usize, count: usize, rng: &mut StreamRng) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for k in 0..count {
        let pick = rng.random_range(k..n);
        all.swap(k, pick);
    }
    let mut chosen = all[..count].to_vec();
    chosen.sort_unstable();
    chosen
}

/// The observations of the latent values `latent` at the observed cells.
fn observe(
    latent: &[f64],
    simulation: Simulation,
    streams: &mut DataStreams,
) -> Result<Vec<f64>, DataError> {
    let noisy = |streams: &mut DataStreams| -> Vec<f64> {
        latent
            .iter()
            .map(|u| {
                let e: f64 = StandardNormal.sample(&mut streams.noise);
                u + simulation.noise_sd * e
            })
            .collect()
    };
    match simulation.likelihood {
        LikelihoodKind::Gaussian => Ok(noisy(streams)),
        LikelihoodKind::Probit => Ok(noisy(streams)
            .into_iter()
            .map(|v| if v >= 0.0 { 1.0 } else { -1.0 })
            .collect()),
        LikelihoodKind::Poisson => latent
            .iter()
            .map(|u| {
                let log_rate = u + simulation.offset;
                let poisson = Poisson::new(log_rate.exp())
                    .map_err(|_| DataError::RateTooLarge { log_rate })?;
                Ok(poisson.sample(&mut streams.counts))
            })
            .collect(),
        LikelihoodKind::Binomial => latent
            .iter()
            .map(|u| {
                let logit = u + simulation.offset;
                let binomial = Binomial::new(simulation.trials, logistic(logit))
                    .map_err(|_| DataError::BadProbability { logit })?;
                Ok(binomial.sample(&mut streams.counts) as f64)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::prior::KroneckerPrior;
    use crate::model::spec::KernelSpec;
    use crate::streams::{Purpose, stream};

    fn streams(key: &str) -> DataStreams {
        DataStreams::keyed(1, key)
    }

    fn prior(d: usize) -> KroneckerPrior {
        let kernel = KernelSpec::squared_exponential(0.3, 1.0);
        KroneckerPrior::new(Grid::new(d), kernel).unwrap()
    }

    #[test]
    fn simulation_observes_n_over_f_distinct_cells() {
        let sim = Simulation {
            likelihood: LikelihoodKind::Probit,
            subsample: 4,
            noise_sd: 1.0,
            offset: 0.0,
            trials: 1,
            mean: 0.0,
        };
        let data = Dataset::simulate(&prior(8), sim, &mut streams("a")).unwrap();
        assert_eq!(data.observed.len(), 16);
        assert!(data.observed.cells.windows(2).all(|w| w[0] < w[1]));
        assert!(data.observed.values.iter().all(|&t| t == 1.0 || t == -1.0));
    }

    #[test]
    fn noise_sd_rescales_the_same_noise_draws() {
        let sim = |s| Simulation {
            likelihood: LikelihoodKind::Gaussian,
            subsample: 2,
            noise_sd: s,
            offset: 0.0,
            trials: 1,
            mean: 0.0,
        };
        let a = Dataset::simulate(&prior(6), sim(1.0), &mut streams("k")).unwrap();
        let b = Dataset::simulate(&prior(6), sim(0.5), &mut streams("k")).unwrap();
        assert_eq!(a.truth, b.truth);
        assert_eq!(a.observed.cells, b.observed.cells);
        let truth = a.truth.unwrap();
        for (k, &c) in a.observed.cells.iter().enumerate() {
            let ea = a.observed.values[k] - truth[c];
            let eb = b.observed.values[k] - truth[c];
            assert!((ea * 0.5 - eb).abs() < 1e-12);
        }
    }

    #[test]
    fn holdout_splits_every_cell_exactly_once() {
        let grid = Grid::new(4);
        let values: Vec<f64> = (0..16).map(f64::from).collect();
        let mut rng = stream(3, Purpose::Observations, "h");
        let data = Dataset::from_grid_values(grid, values, 0.25, &mut rng).unwrap();
        assert_eq!(data.held_out.len(), 4);
        assert_eq!(data.observed.len(), 12);
        let by_cell = data.value_by_cell();
        assert!(
            by_cell
                .iter()
                .enumerate()
                .all(|(c, v)| *v == Some(c as f64))
        );
    }
}
