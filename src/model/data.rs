//! The data a job fits: which cells are observed, their values, and (simulated) the truth.
//!
//! Simulated data draw from four independent streams, each keyed by what it depends on (see
//! [`crate::plan`]): the truth xi ~ N(0, I) mapped through the truth's prior, the observed cells
//! (M = N / f distinct cells by a partial Fisher-Yates shuffle), the noise (M standard normals,
//! scaled by the noise sd) and the counts (Poisson counts, or binomial successes of a given
//! number of trials per observed cell). So two samplers of one sweep point see the same truth
//! and observations, and sweeping the noise sd rescales the same noise draws.
//!
//! Real data arrive as a grid of cells, each with a value or none (read and checked by
//! `crate::families::latent_field::grid_csv`), and each with a log offset ([`LogOffsets`]): the
//! cells with a value and an exposure above 0 are the usable ones, of which a seeded share is
//! held out and the rest observed. The others (no value, or no exposure) are in neither set:
//! out of the likelihood and of the scores, predicted like every cell.

use rand::RngExt;
use rand_distr::{Binomial, Distribution, Poisson, StandardNormal};

use super::grid::Grid;
use super::prior::Prior;
use super::sites::{Measurements, SiteData};
pub use super::spec::HoldOut;
use super::spec::{LikelihoodKind, MeanSpec, ModelSpec};
use super::special::logistic;
use crate::streams::StreamRng;

/// Values at a set of cells, cells in increasing order; or, for measurements at sites, the
/// fitted sites' values with no cell ([`Dataset::sites`] has where they are).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    /// The observed cells (empty for measurements at sites).
    pub cells: Vec<usize>,
    /// The datum of each cell (binomial: its successes).
    pub values: Vec<f64>,
    /// Binomial: the trials of each cell, in the order of `cells`; empty for the other
    /// likelihoods.
    pub trials: Vec<f64>,
}

impl Observations {
    /// The observations: one per value (at its cell, or at a site).
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Each cell's log offset: a Poisson count's mean is exp(u + offset). `common` is
/// `model.offset` (a number, or the log of the cell area); `log_exposure`, when the data give
/// one, is each cell's log exposure that the data assembly summed from its sources
/// (`data.offset`, or the log of `data.exposure`; log 0 = -inf outside the study region), so the
/// total is `common + log_exposure[c]`. A cell whose log exposure is -inf expects no count: it is
/// out of the likelihood and its expected count is 0.
#[derive(Debug, Clone, PartialEq)]
pub struct LogOffsets {
    pub(crate) common: f64,
    /// None: 0 on every cell (the exposure is 1 everywhere).
    pub(crate) log_exposure: Option<Vec<f64>>,
}

impl LogOffsets {
    /// The same log offset `offset` on every cell.
    pub fn constant(offset: f64) -> Self {
        Self {
            common: offset,
            log_exposure: None,
        }
    }

    /// `common` on every cell, plus `log_exposure` cell by cell.
    pub fn with_log_exposure(common: f64, log_exposure: Vec<f64>) -> Self {
        Self {
            common,
            log_exposure: Some(log_exposure),
        }
    }

    /// The total log offset of `cell`.
    pub fn at(&self, cell: usize) -> f64 {
        match &self.log_exposure {
            Some(log_exposure) => self.common + log_exposure[cell],
            None => self.common,
        }
    }

    /// The total log offsets of `cells`, in their order.
    pub(crate) fn of_cells(&self, cells: &[usize]) -> Vec<f64> {
        cells.iter().map(|&c| self.at(c)).collect()
    }

    /// The total log offset of every one of `n` cells.
    pub(crate) fn every_cell(&self, n: usize) -> Vec<f64> {
        (0..n).map(|c| self.at(c)).collect()
    }

    /// Each of the `n` cells' offset for a quantity that does not scale with the exposure (a
    /// success probability): the cell's own where it can be observed, `common` where it is
    /// masked (outside the region, left out of the file), which is no probability of 0.
    pub(crate) fn every_cell_unmasked(&self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|c| {
                if self.exposed(c) {
                    self.at(c)
                } else {
                    self.common
                }
            })
            .collect()
    }

    /// Whether `cell` can be observed: its exposure is above 0.
    pub(crate) fn exposed(&self, cell: usize) -> bool {
        self.log_exposure
            .as_ref()
            .is_none_or(|l| l[cell] > f64::NEG_INFINITY)
    }

    /// The sum of the exposures exp(log_exposure) of `cells` (their count when there is no
    /// per-cell exposure, exactly).
    pub(crate) fn total_exposure(&self, cells: &[usize]) -> f64 {
        match &self.log_exposure {
            Some(log_exposure) => cells.iter().map(|&c| log_exposure[c].exp()).sum(),
            None => cells.len() as f64,
        }
    }
}

/// A real grid's cells before they are split into observed and held-out ones.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCells {
    /// Each cell's value, cell (i, j) at j * nx + i; None where the data give none.
    pub values: Vec<Option<f64>>,
    /// Each cell's log offset.
    pub offsets: LogOffsets,
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
    /// Each cell's log offset (the Poisson likelihood's; the other likelihoods read only which
    /// cells it takes out).
    pub(crate) offsets: LogOffsets,
    /// Measurements at scattered sites (`data.source = "sites"`; then no cell is observed or
    /// held out itself); None for grid data.
    pub(crate) sites: Option<SiteData>,
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
    #[error("holding out {hold:?} of {cells} cells leaves no observed cell")]
    NothingLeftToFit { cells: usize, hold: HoldOut },
    #[error("fold {fold} of {folds} is empty: {count} observations make fewer folds")]
    EmptyFold {
        count: usize,
        folds: usize,
        fold: usize,
    },
    #[error("no cell of the grid has both a value and an exposure above 0")]
    NothingObserved,
    #[error("the grid has {found} values, the model's grid needs {expected}")]
    WrongSize { found: usize, expected: usize },
    #[error("a Poisson rate exp({log_rate:?}) is too large to draw counts from")]
    RateTooLarge { log_rate: f64 },
    #[error("binomial data need the trials of every cell: {found} given for {expected} cells")]
    WrongTrials { found: usize, expected: usize },
    #[error("a success probability logistic({logit:?}) cannot be drawn from")]
    BadProbability { logit: f64 },
    #[error(transparent)]
    Sites(#[from] crate::model::sites::SiteError),
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
            offsets: LogOffsets::constant(simulation.offset),
            sites: None,
        })
    }

    /// Measurements at scattered sites on `grid`, every one with the log offset `offset`: a
    /// share `holdout` of them, rounded, chosen by `rng` as held-out cells are, held out. No
    /// cell is observed itself.
    pub fn from_sites(
        grid: Grid,
        all: &Measurements,
        offset: f64,
        holdout: HoldOut,
        rng: &mut StreamRng,
    ) -> Result<Self, DataError> {
        if all.values.is_empty() {
            return Err(DataError::NothingObserved);
        }
        let held = held_out_draw(all.values.len(), holdout, rng)?;
        Ok(Self {
            grid,
            truth: None,
            truth_coefficients: None,
            observed: Observations::default(),
            held_out: Observations::default(),
            offsets: LogOffsets::constant(offset),
            sites: None,
        }
        .with_sites(SiteData::split(&grid, all, &held)?))
    }

    /// The data observed at `sites`: the fitted sites' values and trials become the observations
    /// (no cell of them: [`Observations::cells`] stays empty); the held-out sites are scored
    /// apart, so no observation is held out here.
    fn with_sites(mut self, sites: SiteData) -> Self {
        self.observed = Observations {
            cells: Vec::new(),
            values: sites.fitted.values.clone(),
            trials: sites.fitted.trials.clone(),
        };
        self.sites = Some(sites);
        self
    }

    /// Split a full grid of real values, every cell with a value and the log offset 0, into
    /// observed and held-out cells.
    pub fn from_grid_values(
        grid: Grid,
        values: Vec<f64>,
        holdout: HoldOut,
        rng: &mut StreamRng,
    ) -> Result<Self, DataError> {
        let cells = GridCells {
            values: values.into_iter().map(Some).collect(),
            offsets: LogOffsets::constant(0.0),
        };
        Self::from_grid_cells(grid, cells, holdout, rng)
    }

    /// Split the usable cells of a real grid (a value and an exposure above 0) into observed and
    /// held-out ones: a share `holdout` of them, rounded, chosen by `rng`, held out.
    pub fn from_grid_cells(
        grid: Grid,
        cells: GridCells,
        holdout: HoldOut,
        rng: &mut StreamRng,
    ) -> Result<Self, DataError> {
        let n = grid.cells();
        let GridCells { values, offsets } = cells;
        if values.len() != n {
            return Err(DataError::WrongSize {
                found: values.len(),
                expected: n,
            });
        }
        let usable: Vec<usize> = (0..n)
            .filter(|&c| values[c].is_some() && offsets.exposed(c))
            .collect();
        if usable.is_empty() {
            return Err(DataError::NothingObserved);
        }
        let held = held_out_draw(usable.len(), holdout, rng)?;
        let mut is_held = vec![false; n];
        for (k, &cell) in usable.iter().enumerate() {
            is_held[cell] = held[k];
        }
        let pick = |keep: bool| {
            let cells: Vec<usize> = usable
                .iter()
                .copied()
                .filter(|&c| is_held[c] == keep)
                .collect();
            let vals = cells.iter().filter_map(|&c| values[c]).collect();
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
            offsets,
            sites: None,
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

    /// The log offsets of the observed cells, in their order (the likelihood's).
    pub(crate) fn observed_offsets(&self) -> Vec<f64> {
        match &self.sites {
            Some(_) => vec![self.offsets.common; self.observed.len()],
            None => self.offsets.of_cells(&self.observed.cells),
        }
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

impl ModelSpec {
    /// The mean of the field for `data`.
    pub(crate) fn mean_value(&self, data: &Dataset) -> f64 {
        match self.mean {
            MeanSpec::Value(mean) => mean,
            MeanSpec::Auto => auto_mean(self.likelihood, self.kernel.variance, data),
        }
    }
}

/// The intercept `mean = "auto"` gives for `data`: for poisson
/// log(total observed count / total exposure of the observed cells) - offset - variance / 2,
/// `offset` being `model.offset` and a cell's exposure exp(its log exposure) (`data.exposure`,
/// or exp(`data.offset`); 1 when the data give none, so that the total exposure is the number of
/// observed cells and the intercept log(mean count per cell) - offset - variance / 2), so the
/// prior's mean rate exp(mean + offset + variance / 2) per unit exposure is the observed one
/// (when every observed count is 0, whose log is -inf, half a count is put in their total); for
/// for binomial logit(sum k / sum n) - offset, the logit of the pooled share of successes (no
/// variance term: the prior's median success probability logistic(mean + offset) is the pooled
/// share; a pooled share of 0 or 1, whose logit is infinite, is moved half a success inside, and
/// 0 when no cell has a trial); for gaussian the mean observation; for probit 0 (the labels
/// carry no level).
pub fn auto_mean(likelihood: LikelihoodKind, variance: f64, data: &Dataset) -> f64 {
    let observed = &data.observed;
    let cells = observed.len().max(1) as f64;
    let total = observed.values.iter().sum::<f64>();
    match likelihood {
        LikelihoodKind::Poisson => {
            let total = if total > 0.0 { total } else { 0.5 };
            // A site's exposure is exp(common): its share of the total is one.
            let exposure = match &data.sites {
                Some(_) => observed.len() as f64,
                None => data.offsets.total_exposure(&observed.cells),
            };
            let exposure = if exposure > 0.0 { exposure } else { 1.0 };
            (total / exposure).ln() - data.offsets.common - variance / 2.0
        }
        LikelihoodKind::Binomial => {
            let trials = observed.trials.iter().sum::<f64>();
            if trials < 1.0 {
                return 0.0;
            }
            let successes = total.clamp(0.5, trials - 0.5);
            (successes / (trials - successes)).ln() - data.offsets.common
        }
        LikelihoodKind::Probit => 0.0,
        LikelihoodKind::Gaussian => total / cells,
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

/// Which of `count` observations `hold` holds out, drawn by `rng`: an error when none would be
/// left to fit, or a fold would be empty.
pub(crate) fn held_out_draw(
    count: usize,
    hold: HoldOut,
    rng: &mut StreamRng,
) -> Result<Vec<bool>, DataError> {
    let held = hold.held_of(count);
    if held >= count {
        return Err(DataError::NothingLeftToFit { cells: count, hold });
    }
    let mut is_held = vec![false; count];
    match hold {
        HoldOut::Share(_) => {
            for k in choose_cells(count, held, rng) {
                is_held[k] = true;
            }
        }
        HoldOut::Fold { folds, fold } => {
            if held == 0 {
                return Err(DataError::EmptyFold { count, folds, fold });
            }
            let order = seeded_order(count, rng);
            for (position, &k) in order.iter().enumerate() {
                is_held[k] = position % folds == fold;
            }
        }
    }
    Ok(is_held)
}

/// `0..n` in a seeded order (Fisher-Yates).
fn seeded_order(n: usize, rng: &mut StreamRng) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    for k in 0..n.saturating_sub(1) {
        let pick = rng.random_range(k..n);
        all.swap(k, pick);
    }
    all
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

    /// K folds drawn from one stream split the observations: disjoint held-out sets whose union
    /// is every observation, of sizes differing by at most one; a fold with nothing in it, or a
    /// share that leaves nothing to fit, is an error.
    #[test]
    fn folds_split_every_observation_once() {
        let (count, folds) = (16, 3);
        let mut times_held = vec![0; count];
        for fold in 0..folds {
            let mut rng = stream(3, Purpose::Observations, "h");
            let hold = HoldOut::Fold { folds, fold };
            let held = held_out_draw(count, hold, &mut rng).unwrap();
            let n = held.iter().filter(|&&h| h).count();
            assert_eq!(n, hold.held_of(count));
            assert_eq!(n, [6, 5, 5][fold]);
            for (k, &h) in held.iter().enumerate() {
                times_held[k] += usize::from(h);
            }
        }
        assert_eq!(times_held, vec![1; count]);
        let mut rng = stream(3, Purpose::Observations, "h");
        let empty = held_out_draw(2, HoldOut::Fold { folds: 3, fold: 2 }, &mut rng);
        assert!(matches!(
            empty,
            Err(DataError::EmptyFold {
                count: 2,
                folds: 3,
                fold: 2
            })
        ));
        let all = held_out_draw(4, HoldOut::Share(0.9), &mut rng);
        assert!(matches!(
            all,
            Err(DataError::NothingLeftToFit { cells: 4, .. })
        ));
    }

    #[test]
    fn holdout_splits_every_cell_exactly_once() {
        let grid = Grid::new(4);
        let values: Vec<f64> = (0..16).map(f64::from).collect();
        let mut rng = stream(3, Purpose::Observations, "h");
        let data = Dataset::from_grid_values(grid, values, HoldOut::Share(0.25), &mut rng).unwrap();
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

    /// Cells without a value or without exposure are neither observed nor held out; the
    /// holdout draws its share from the others only, and a grid whose every cell is usable
    /// splits exactly as `from_grid_values` does.
    #[test]
    fn holdout_draws_only_from_cells_with_a_value_and_an_exposure() {
        let grid = Grid::new(4);
        let mut values: Vec<Option<f64>> = (0..16).map(|c| Some(f64::from(c))).collect();
        for c in [1, 6, 7] {
            values[c] = None;
        }
        let mut log_exposure = vec![0.5; 16];
        log_exposure[9] = f64::NEG_INFINITY;
        let cells = GridCells {
            values,
            offsets: LogOffsets::with_log_exposure(-1.0, log_exposure),
        };
        let mut rng = stream(3, Purpose::Observations, "h");
        let data = Dataset::from_grid_cells(grid, cells, HoldOut::Share(0.25), &mut rng).unwrap();
        // 12 usable cells, a quarter of them held out.
        assert_eq!((data.observed.len(), data.held_out.len()), (9, 3));
        for c in [1, 6, 7, 9] {
            assert!(!data.observed.cells.contains(&c) && !data.held_out.cells.contains(&c));
        }
        assert_eq!(data.offsets.at(0), -0.5);
        assert_eq!(data.offsets.at(9), f64::NEG_INFINITY);
        let full: Vec<f64> = (0..16).map(f64::from).collect();
        let cells = GridCells {
            values: full.iter().copied().map(Some).collect(),
            offsets: LogOffsets::constant(0.0),
        };
        let split = |cells| {
            let mut rng = stream(3, Purpose::Observations, "h");
            Dataset::from_grid_cells(grid, cells, HoldOut::Share(0.25), &mut rng).unwrap()
        };
        let mut rng = stream(3, Purpose::Observations, "h");
        assert_eq!(
            split(cells),
            Dataset::from_grid_values(grid, full, HoldOut::Share(0.25), &mut rng).unwrap()
        );
    }
}
