//! `fieldmc bench lgcp`: fieldmc's samplers against the BlackJAX NUTS peer
//! (`../shared/peers/lgcp_blackjax.py`) on the log-Gaussian Cox process of a real count grid,
//! run side by side in one invocation.
//!
//! The model is the peer's: a D x D grid of counts, u = mu + f with f ~ GP(0, variance k),
//! squared-exponential k with length scale l, counts ~ Poisson(exp u) on the observed cells,
//! mu = log(mean observed count) - variance / 2, a quarter of the cells held out. fieldmc
//! chooses the held-out cells (a seeded stream) and hands them to the peer
//! (`--heldout-cells`), so both fit the same cells. (The peer adds 1e-8 to the unit axis
//! kernel's diagonal; fieldmc escalates jitter from zero. At l = 0.1, D = 32 both factor the same
//! kernel to within that jitter, far below the Monte Carlo error of any mean.)
//!
//! For every kind: 4 chains one after another on the calling thread, timed in CPU seconds from
//! the prior's factorisation to the last draw (setup, the kind's once-per-target preparation,
//! adaptation during burn-in, sampling); the per-cell bulk ESS, rank-normalised split R-hat and
//! MCSE of the mean from the stored draws of every cell ([`crate::diagnostics`], as ArviZ); the
//! worst cell's bulk ESS per CPU second and its ratio to the peer's; and the posterior mean of
//! every cell against the peer's in units of the combined MCSE
//! sqrt(mcse_fieldmc^2 + mcse_peer^2). A comparison passes when every cell is within
//! [`agreement_threshold`] (Bonferroni over the N cells at a family-wise false-alarm rate of
//! [`AGREEMENT_FAMILY_RATE`] per comparison); the count of cells beyond 4 MCSE is reported beside
//! it (about 0.065 such cells are expected by chance per comparison of 1,024 cells). The Laplace
//! approximation runs as a negative control: fast, but its mode is not the posterior mean, and
//! the check must say so.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::clock::Stopwatch;
use crate::families::latent_field::cells::{CellDiagnostics, cell_series};
use crate::model::data::Dataset;
use crate::model::data::auto_mean;
use crate::model::laplace::{LaplaceFit, NewtonSettings};
use crate::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Target,
};
use crate::sampler::{
    ChainRng, Kind, KindVisitor, RunOutput, RunRequest, Sampler, SamplerKind, SamplerSettings, run,
};
use crate::streams::{Purpose, stream};
use crate::study::csv::{CsvError, CsvText};

/// The family-wise false-alarm rate of one mean-agreement comparison (one kind on one grid,
/// every cell).
pub(crate) const AGREEMENT_FAMILY_RATE: f64 = 1e-3;

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BenchError {
    #[error("{0}")]
    Data(String),
    #[error("the peer failed: {0}")]
    Peer(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The model of one grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LgcpModel {
    pub(crate) length_scale: f64,
    pub(crate) variance: f64,
    /// Share of the cells held out.
    pub(crate) holdout: f64,
}

/// A count grid with its held-out cells and the model's intercept.
#[derive(Debug, Clone)]
pub(crate) struct LgcpProblem {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) model: LgcpModel,
    pub(crate) data: Dataset,
    pub(crate) likelihood: Likelihood,
    /// mu = log(mean observed count) - variance / 2.
    pub(crate) mean: f64,
}

impl LgcpProblem {
    /// Read a D x D count grid and hold out `model.holdout` of its cells, chosen by the stream
    /// keyed by the grid's name and `seed`.
    pub fn load(path: &Path, name: &str, model: LgcpModel, seed: u64) -> Result<Self, BenchError> {
        let text = std::fs::read_to_string(path).map_err(|source| BenchError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let rows = CsvText::new(text.as_str(), path)
            .and_then(|csv| csv.row_count("data file"))
            .map_err(|e| BenchError::Data(e.to_string()))?;
        let side = (rows as f64).sqrt().round() as usize;
        let values = crate::families::latent_field::grid_csv::parse_grid_csv(
            &text,
            path,
            "count",
            (side, side),
            LikelihoodKind::Poisson,
        )
        .map_err(|e| BenchError::Data(e.to_string()))?
        .complete_values()
        .ok_or_else(|| BenchError::Data(format!("{}: a cell without a count", path.display())))?;
        let mut rng = stream(
            seed,
            Purpose::Observations,
            &format!("bench lgcp;grid={name}"),
        );
        let data = Dataset::from_grid_values(
            Grid::new(side),
            values,
            crate::model::data::HoldOut::Share(model.holdout),
            &mut rng,
        )
        .map_err(|e| BenchError::Data(e.to_string()))?;
        let observed = &data.observed.values;
        if observed.iter().all(|&c| c == 0.0) {
            return Err(BenchError::Data(format!(
                "{}: no counts in the observed cells",
                path.display()
            )));
        }
        let likelihood = Likelihood::new(LikelihoodKind::Poisson, observed.clone(), 1.0, 0.0);
        Ok(Self {
            name: name.to_string(),
            path: path.to_path_buf(),
            model,
            mean: auto_mean(LikelihoodKind::Poisson, model.variance, &data),
            data,
            likelihood,
        })
    }

    pub(crate) fn grid(&self) -> Grid {
        self.data.grid
    }

    /// The prior (factored afresh: benchmarks time it).
    pub(crate) fn prior(&self) -> KroneckerPrior {
        let kernel = KernelSpec::squared_exponential(self.model.length_scale, self.model.variance);
        KroneckerPrior::new(self.grid(), kernel).expect("the squared-exponential kernel factors")
    }

    pub(crate) fn target<'a>(&'a self, prior: &'a KroneckerPrior) -> Target<'a> {
        Target {
            prior,
            likelihood: &self.likelihood,
            observed: Observed::Cells(&self.data.observed.cells),
            mean: self.mean,
        }
    }

    /// The held-out cells, one index j*D + i per line (the peer's `--heldout-cells` format).
    pub(crate) fn heldout_text(&self) -> String {
        self.data
            .held_out
            .cells
            .iter()
            .map(|c| format!("{c}\n"))
            .collect()
    }
}

/// How one kind is run: its settings (chains and schedule included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KindPlan {
    pub(crate) settings: SamplerSettings,
}

impl KindPlan {
    /// 4 chains of `burn_in + kept` iterations, the kind's default adaptation.
    pub(crate) fn new(kind: SamplerKind, beta: f64, burn_in: u64, kept: u64) -> Self {
        Self {
            settings: SamplerSettings {
                beta,
                iterations: burn_in + kept,
                burn_in,
                thin: kept.div_ceil(1000).max(1),
                chains: 4,
                ..SamplerSettings::new(kind)
            },
        }
    }
}

/// The schedule each Markov chain kind runs with in the benchmark: long enough that every cell's
/// bulk ESS exceeds 400 over 4 chains, with a burn-in that covers the adaptation. Every kind has
/// its arm, so a new kind must be given its budget here.
pub(crate) fn default_plan(kind: SamplerKind) -> KindPlan {
    match kind {
        // The peer's budget: 1,000 tuning and 1,000 kept draws per chain.
        SamplerKind::Nuts => KindPlan::new(kind, 0.2, 1_000, 1_000),
        SamplerKind::Gpcn => KindPlan::new(kind, 0.5, 1_000, 10_000),
        // The peer's 1,000 kept draws, unthinned (2,000 thinned by 2 had thrown away a third
        // of the effective samples they cost). Burn-in 150 was chosen on grids the benchmark
        // does not score (japanesepines and redwood at D = 32 and 64, seeds 0-2,
        // `experiment_laplace_hmc`): 5-15 % more min-cell ESS per CPU second than 300, max
        // R-hat <= 1.006 in every run; 100 did no better than 150.
        SamplerKind::LaplaceHmc => KindPlan::new(kind, 0.5, 150, 1_000),
        SamplerKind::Grw => KindPlan::new(kind, 0.02, 20_000, 200_000),
        SamplerKind::Pcn => KindPlan::new(kind, 0.1, 20_000, 200_000),
        SamplerKind::Elliptical => KindPlan::new(kind, 0.2, 5_000, 50_000),
        SamplerKind::Mala | SamplerKind::Pcnl | SamplerKind::Mgrad => {
            KindPlan::new(kind, 0.1, 5_000, 50_000)
        }
        SamplerKind::Laplace | SamplerKind::Inla => {
            panic!("{kind} is an approximation: it has no chain to plan (`parse_kinds` refuses it)")
        }
    }
}

/// Per-cell posterior summaries and diagnostics (NaN where a diagnostic is undefined).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CellStats {
    pub(crate) mean: Vec<f64>,
    pub(crate) sd: Vec<f64>,
    pub(crate) mcse: Vec<f64>,
    pub(crate) ess_bulk: Vec<f64>,
    pub(crate) ess_tail: Vec<f64>,
    /// The bulk ESS of |u - median| ([`crate::diagnostics::ess_folded`]).
    pub(crate) ess_folded: Vec<f64>,
    pub(crate) rhat: Vec<f64>,
}

impl CellStats {
    /// The smallest bulk ESS and its cell (a NaN ESS counts as zero: undefined is not good).
    pub(crate) fn min_ess(&self) -> (f64, usize) {
        self.ess_bulk
            .iter()
            .enumerate()
            .map(|(c, &e)| (if e.is_nan() { 0.0 } else { e }, c))
            .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a })
    }

    /// The smallest tail ESS (the 5 % and 95 % quantiles' worse one; NaN counts as zero).
    pub(crate) fn min_ess_tail(&self) -> f64 {
        worst_ess(&self.ess_tail)
    }

    /// The smallest folded ESS (NaN counts as zero).
    pub(crate) fn min_ess_folded(&self) -> f64 {
        worst_ess(&self.ess_folded)
    }

    /// The largest R-hat (NaN counts as infinite).
    pub(crate) fn max_rhat(&self) -> f64 {
        self.rhat
            .iter()
            .map(|&r| if r.is_nan() { f64::INFINITY } else { r })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Diagnostics of every cell from the stored draws of a run.
    pub(crate) fn from_run(output: &RunOutput) -> Self {
        let cells = CellDiagnostics::of(output);
        let nan =
            |v: &[Option<f64>]| -> Vec<f64> { v.iter().map(|x| x.unwrap_or(f64::NAN)).collect() };
        Self {
            mean: output.post_mean.clone(),
            sd: output.post_sd.clone(),
            mcse: nan(&cells.mcse_mean),
            ess_bulk: nan(&cells.ess_bulk),
            ess_tail: nan(&cells.ess_tail),
            ess_folded: folded_ess(output),
            rhat: nan(&cells.rhat),
        }
    }
}

/// The smallest of the cells' ESS, a NaN (undefined) counting as zero: undefined is not good.
fn worst_ess(ess: &[f64]) -> f64 {
    ess.iter()
        .map(|&e| if e.is_nan() { 0.0 } else { e })
        .fold(f64::INFINITY, f64::min)
}

/// Every cell's folded ESS ([`crate::diagnostics::ess_folded`]) from the stored draws.
fn folded_ess(output: &RunOutput) -> Vec<f64> {
    use rayon::prelude::*;
    let Some(first) = output.chains.first() else {
        return vec![f64::NAN; output.post_mean.len()];
    };
    let per_chain = output
        .chains
        .iter()
        .map(|c| c.draws.len())
        .min()
        .unwrap_or(0);
    (0..first.draws.cells)
        .into_par_iter()
        .map(|cell| {
            let series = cell_series(output, cell, per_chain);
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            crate::diagnostics::ess_folded(&views).unwrap_or(f64::NAN)
        })
        .collect()
}

/// One kind's run on one grid.
#[derive(Debug, Clone)]
pub(crate) struct KindResult {
    pub(crate) kind: String,
    /// CPU seconds of the calling thread: prior, preparation, adaptation and sampling of all
    /// chains.
    pub(crate) seconds: f64,
    pub(crate) acceptance_rate: f64,
    // Read by the tests (a kind's adapted step is reported); the tables show acceptance.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) step_size: Option<f64>,
    pub(crate) cells: CellStats,
    /// Leapfrog steps per kept iteration, over the chains (kinds that integrate trajectories).
    pub(crate) leapfrog_steps: Option<f64>,
    /// What the kind says about itself (rank, Newton iterations, ...).
    pub(crate) notes: String,
}

impl KindResult {
    /// The worst cell's bulk ESS per second (0 for a kind without draws).
    pub(crate) fn ess_per_second(&self) -> f64 {
        let (ess, _) = self.cells.min_ess();
        if ess.is_finite() {
            ess / self.seconds
        } else {
            0.0
        }
    }
}

/// Run `plan` on `problem`: chain c draws from the streams keyed by the grid, kind and c.
pub(crate) fn run_plan(problem: &LgcpProblem, plan: &KindPlan, seed: u64) -> KindResult {
    struct Runner<'p> {
        problem: &'p LgcpProblem,
        plan: &'p KindPlan,
        seed: u64,
    }
    impl KindVisitor for Runner<'_> {
        type Output = KindResult;
        fn visit<S: Kind>(self, sampler: S) -> KindResult {
            run_sampler(self.problem, &sampler, self.plan, self.seed)
        }
    }
    let spec = plan.settings.check().expect("benchmark settings are valid");
    spec.visit(Runner {
        problem,
        plan,
        seed,
    })
}

/// Run `sampler` with the schedule, chains and adaptation of `plan` on `problem`.
pub(crate) fn run_sampler<S: Sampler>(
    problem: &LgcpProblem,
    sampler: &S,
    plan: &KindPlan,
    seed: u64,
) -> KindResult {
    let spec = plan.settings.check().expect("benchmark settings are valid");
    let kind = spec.kind();
    let rngs: Vec<ChainRng> = (0..spec.chains())
        .map(|c| {
            let key = format!("bench lgcp;grid={};kind={kind};chain={c}", problem.name);
            ChainRng::keyed(seed, &key)
        })
        .collect();
    let clock = Stopwatch::start();
    let prior = problem.prior();
    let request = RunRequest::new(problem.target(&prior), &spec);
    let output = run(sampler, &request, rngs);
    let seconds = clock.cpu_seconds();
    KindResult {
        kind: kind.to_string(),
        seconds,
        acceptance_rate: output.acceptance_rate,
        step_size: output.mean_step_size(),
        cells: CellStats::from_run(&output),
        leapfrog_steps: output.mean_leapfrog_steps(),
        notes: output
            .notes
            .rank
            .map_or_else(String::new, |rank| format!("rank {rank}")),
    }
}

/// The Laplace approximation as a (deliberately wrong) "sampler": its mode as the mean, no
/// Monte Carlo error. The negative control of the mean check.
pub(crate) fn run_laplace(problem: &LgcpProblem) -> KindResult {
    let clock = Stopwatch::start();
    let prior = problem.prior();
    let target = problem.target(&prior);
    let fit = LaplaceFit::new(&target, &NewtonSettings::default());
    let seconds = clock.cpu_seconds();
    let cells = prior.grid().cells();
    let (mean, notes) = match fit {
        Ok(fit) => {
            let notes = format!(
                "{} Newton iterations, {} CG products",
                fit.newton.iterations, fit.newton.cg_iterations
            );
            (fit.field, notes)
        }
        Err(e) => (vec![f64::NAN; cells], e.to_string()),
    };
    KindResult {
        kind: "laplace".into(),
        seconds,
        acceptance_rate: f64::NAN,
        step_size: None,
        cells: CellStats {
            mean,
            sd: vec![f64::NAN; cells],
            mcse: vec![0.0; cells],
            ess_bulk: vec![f64::NAN; cells],
            ess_tail: vec![f64::NAN; cells],
            ess_folded: vec![f64::NAN; cells],
            rhat: vec![f64::NAN; cells],
        },
        leapfrog_steps: None,
        notes,
    }
}

/// How to run the peer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PeerSettings {
    /// The Python interpreter of the peer's virtual environment.
    pub(crate) python: PathBuf,
    /// `lgcp_blackjax.py`.
    pub(crate) script: PathBuf,
    /// Pin the peer to this core (`taskset -c`), if any.
    pub(crate) core: Option<usize>,
    pub(crate) seed: u64,
    /// Where the held-out file, the per-cell CSV and the JSON go.
    pub(crate) workdir: PathBuf,
}

/// The peer's answer on one grid.
#[derive(Debug, Clone)]
pub(crate) struct PeerResult {
    pub(crate) mean: Vec<f64>,
    pub(crate) mcse: Vec<f64>,
    pub(crate) min_ess: f64,
    pub(crate) max_rhat: f64,
    /// CPU seconds of warmup and sampling (the peer's own count; compile excluded).
    pub(crate) seconds: f64,
    pub(crate) ess_per_second: f64,
    pub(crate) json: serde_json::Value,
}

/// Run the peer on `problem` with fieldmc's held-out cells.
pub(crate) fn run_peer(
    problem: &LgcpProblem,
    settings: &PeerSettings,
) -> Result<PeerResult, BenchError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BenchError::Io { path, source }
    };
    std::fs::create_dir_all(&settings.workdir).map_err(io(&settings.workdir))?;
    let held = settings
        .workdir
        .join(format!("{}_heldout.txt", problem.name));
    std::fs::write(&held, problem.heldout_text()).map_err(io(&held))?;
    let cells_csv = settings
        .workdir
        .join(format!("{}_peer_cells.csv", problem.name));
    let json_path = settings.workdir.join(format!("{}_peer.json", problem.name));
    let mut command = match settings.core {
        Some(core) => {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(core.to_string()).arg(&settings.python);
            c
        }
        None => Command::new(&settings.python),
    };
    command
        .arg(&settings.script)
        .arg("--grid")
        .arg(&problem.path)
        .args(["--length-scale", &problem.model.length_scale.to_string()])
        .args(["--variance", &problem.model.variance.to_string()])
        .args(["--mean", "auto", "--chains", "4"])
        .args(["--seed", &settings.seed.to_string()])
        .arg("--heldout-cells")
        .arg(&held)
        .arg("--out")
        .arg(&cells_csv)
        .arg("--json")
        .arg(&json_path);
    let output = command.output().map_err(|e| {
        BenchError::Peer(format!("cannot start {}: {e}", settings.python.display()))
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        return Err(BenchError::Peer(format!(
            "exit {}: {}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )));
    }
    let json_text = std::fs::read_to_string(&json_path).map_err(io(&json_path))?;
    let json: serde_json::Value = serde_json::from_str(&json_text)
        .map_err(|e| BenchError::Peer(format!("{}: {e}", json_path.display())))?;
    let number = |a: &str, b: &str| {
        json[a][b]
            .as_f64()
            .ok_or_else(|| BenchError::Peer(format!("the peer's JSON lacks {a}.{b}")))
    };
    let (mean, mcse) = read_peer_cells(&cells_csv, problem.grid().cells())?;
    let cpu = number("seconds", "cpu")?;
    let min_ess = number("cells", "min_ess_bulk")?;
    Ok(PeerResult {
        mean,
        mcse,
        min_ess,
        max_rhat: number("cells", "max_rhat")?,
        seconds: cpu,
        ess_per_second: min_ess / cpu,
        json,
    })
}

/// The `mean` and `mcse_mean` columns of the peer's per-cell CSV, by cell.
fn read_peer_cells(path: &Path, cells: usize) -> Result<(Vec<f64>, Vec<f64>), BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let peer = |e: CsvError| BenchError::Peer(e.to_string());
    let csv = CsvText::new(text, path).map_err(peer)?;
    let mut rows = csv.rows("peer's cell table").map_err(peer)?;
    let [cell_col, mean_col, mcse_col] =
        ["cell", "mean", "mcse_mean"].map(|name| rows.column(name));
    let (cell_col, mean_col, mcse_col) = (
        cell_col.map_err(peer)?,
        mean_col.map_err(peer)?,
        mcse_col.map_err(peer)?,
    );
    let mut mean = vec![f64::NAN; cells];
    let mut mcse = vec![f64::NAN; cells];
    while let Some(row) = rows.next_row().map_err(peer)? {
        let cell: usize = row
            .parse(cell_col, "a cell index (a whole number >= 0)")
            .map_err(peer)?;
        if cell >= cells {
            return Err(peer(row.not(cell_col, &format!("a cell of the {cells}"))));
        }
        mean[cell] = row.number(mean_col).map_err(peer)?;
        mcse[cell] = row.number(mcse_col).map_err(peer)?;
    }
    Ok((mean, mcse))
}

/// Posterior means of every cell against the peer's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Agreement {
    /// The largest |mean - peer| / sqrt(mcse^2 + mcse_peer^2) over cells.
    pub(crate) max_z: f64,
    pub(crate) worst_cell: usize,
    /// Cells beyond 4 combined MCSE.
    pub(crate) beyond_four: usize,
    /// The pass threshold on `max_z`.
    pub(crate) threshold: f64,
}

impl Agreement {
    pub(crate) fn passes(&self) -> bool {
        self.max_z <= self.threshold
    }
}

/// The two-sided z threshold for `cells` z-scores at family-wise rate
/// [`AGREEMENT_FAMILY_RATE`] (Bonferroni): erfc(z / sqrt 2) = rate / cells.
pub(crate) fn agreement_threshold(cells: usize) -> f64 {
    let target = AGREEMENT_FAMILY_RATE / cells.max(1) as f64;
    let (mut low, mut high) = (0.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if libm::erfc(mid * std::f64::consts::FRAC_1_SQRT_2) > target {
            low = mid;
        } else {
            high = mid;
        }
    }
    0.5 * (low + high)
}

/// Compare `ours` with the peer cell by cell.
pub(crate) fn agreement(ours: &CellStats, peer: &PeerResult) -> Agreement {
    let mut max_z = 0.0f64;
    let mut worst_cell = 0;
    let mut beyond_four = 0;
    for (cell, ((&m, &s), (&pm, &ps))) in ours
        .mean
        .iter()
        .zip(&ours.mcse)
        .zip(peer.mean.iter().zip(&peer.mcse))
        .enumerate()
    {
        let combined = (s * s + ps * ps).sqrt();
        let z = (m - pm).abs() / combined;
        let z = if z.is_nan() { f64::INFINITY } else { z };
        if z > 4.0 {
            beyond_four += 1;
        }
        if z > max_z {
            max_z = z;
            worst_cell = cell;
        }
    }
    Agreement {
        max_z,
        worst_cell,
        beyond_four,
        threshold: agreement_threshold(ours.mean.len()),
    }
}

/// One run's line of the benchmark's CSV (`fieldmc bench lgcp --csv`): the peer's or a kind's,
/// on one grid at one seed. [`RunRow::header`] names the columns; `bench/lgcp_table.py` reads
/// them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunRow {
    pub(crate) grid: String,
    pub(crate) side: usize,
    pub(crate) observed: usize,
    pub(crate) held_out: usize,
    pub(crate) length_scale: f64,
    pub(crate) variance: f64,
    pub(crate) seed: u64,
    /// A fieldmc kind, `laplace` (the control) or [`PEER_KIND`].
    pub(crate) kind: String,
    pub(crate) burn_in: u64,
    pub(crate) kept: u64,
    pub(crate) chains: usize,
    pub(crate) cpu_seconds: f64,
    pub(crate) min_ess_bulk: f64,
    /// The worst cell's tail ESS (the 5 % and 95 % quantiles).
    pub(crate) min_ess_tail: f64,
    /// The worst cell's folded ESS (bulk ESS of |u - median|: the spread; fieldmc's kinds only,
    /// the peer does not report it).
    pub(crate) min_ess_folded: f64,
    /// `min_ess_bulk` over the kept draws of all chains: effective draws per draw.
    pub(crate) ess_per_draw: f64,
    /// Leapfrog steps (gradients) per iteration: fieldmc's over the kept iterations, the peer's
    /// over warmup and draws (NaN for a kind without trajectories).
    pub(crate) leapfrog_steps: f64,
    pub(crate) ess_per_cpu_second: f64,
    /// ESS per CPU second over the peer's at the same seed (NaN without the peer).
    pub(crate) ratio_to_peer: f64,
    pub(crate) max_rhat: f64,
    pub(crate) acceptance: f64,
    /// Largest |mean - peer mean| in combined MCSE (NaN without the peer or for the peer).
    pub(crate) max_z: f64,
    pub(crate) cells_beyond_4: usize,
    pub(crate) z_threshold: f64,
    /// `agree`, `differ` or empty (no peer, or the peer's own row).
    pub(crate) means: &'static str,
}

/// A column of the benchmark's CSV: its name and how a row writes it.
type CsvColumn = (&'static str, fn(&RunRow) -> String);

/// The `kind` of the peer's rows.
pub(crate) const PEER_KIND: &str = "blackjax_nuts";

impl RunRow {
    /// The CSV's columns: each name beside how the row writes it, so the two cannot drift.
    const CSV: [CsvColumn; 25] = [
        ("grid", |r| r.grid.clone()),
        ("side", |r| r.side.to_string()),
        ("observed", |r| r.observed.to_string()),
        ("held_out", |r| r.held_out.to_string()),
        ("length_scale", |r| csv_number(r.length_scale)),
        ("variance", |r| csv_number(r.variance)),
        ("seed", |r| r.seed.to_string()),
        ("kind", |r| r.kind.clone()),
        ("burn_in", |r| r.burn_in.to_string()),
        ("kept", |r| r.kept.to_string()),
        ("chains", |r| r.chains.to_string()),
        ("cpu_seconds", |r| csv_number(r.cpu_seconds)),
        ("min_ess_bulk", |r| csv_number(r.min_ess_bulk)),
        ("min_ess_tail", |r| csv_number(r.min_ess_tail)),
        ("min_ess_folded", |r| csv_number(r.min_ess_folded)),
        ("ess_per_draw", |r| csv_number(r.ess_per_draw)),
        ("leapfrog_steps", |r| csv_number(r.leapfrog_steps)),
        ("ess_per_cpu_second", |r| csv_number(r.ess_per_cpu_second)),
        ("ratio_to_peer", |r| csv_number(r.ratio_to_peer)),
        ("max_rhat", |r| csv_number(r.max_rhat)),
        ("acceptance", |r| csv_number(r.acceptance)),
        ("max_z", |r| csv_number(r.max_z)),
        ("cells_beyond_4", |r| r.cells_beyond_4.to_string()),
        ("z_threshold", |r| csv_number(r.z_threshold)),
        ("means", |r| r.means.to_string()),
    ];

    /// The CSV header: the column names, comma-separated.
    pub(crate) fn header() -> String {
        Self::CSV.map(|(name, _)| name).join(",")
    }

    fn problem(problem: &LgcpProblem, seed: u64, kind: &str) -> Self {
        Self {
            grid: problem.name.clone(),
            side: problem.grid().nx(),
            observed: problem.data.observed.len(),
            held_out: problem.data.held_out.len(),
            length_scale: problem.model.length_scale,
            variance: problem.model.variance,
            seed,
            kind: kind.to_string(),
            burn_in: 0,
            kept: 0,
            chains: 0,
            cpu_seconds: f64::NAN,
            min_ess_bulk: f64::NAN,
            min_ess_tail: f64::NAN,
            min_ess_folded: f64::NAN,
            ess_per_draw: f64::NAN,
            leapfrog_steps: f64::NAN,
            ess_per_cpu_second: f64::NAN,
            ratio_to_peer: f64::NAN,
            max_rhat: f64::NAN,
            acceptance: f64::NAN,
            max_z: f64::NAN,
            cells_beyond_4: 0,
            z_threshold: f64::NAN,
            means: "",
        }
    }

    /// The peer's row: its own budget (1,000 + 1,000 draws, 4 chains) and diagnostics.
    pub(crate) fn of_peer(problem: &LgcpProblem, seed: u64, peer: &PeerResult) -> Self {
        let sampler = &peer.json["sampler"];
        let count = |key: &str| sampler[key].as_u64().unwrap_or(0);
        let (warmup, draws, chains) = (count("warmup"), count("draws"), count("chains"));
        let gradients = sampler["grad_evals_per_chain"].as_f64().unwrap_or(f64::NAN);
        Self {
            burn_in: warmup,
            kept: draws,
            chains: chains as usize,
            cpu_seconds: peer.seconds,
            min_ess_bulk: peer.min_ess,
            min_ess_tail: peer.json["cells"]["min_ess_tail"]
                .as_f64()
                .unwrap_or(f64::NAN),
            ess_per_draw: peer.min_ess / (draws * chains) as f64,
            leapfrog_steps: gradients / (warmup + draws) as f64,
            ess_per_cpu_second: peer.ess_per_second,
            ratio_to_peer: 1.0,
            max_rhat: peer.max_rhat,
            acceptance: sampler["mean_accept"].as_f64().unwrap_or(f64::NAN),
            ..Self::problem(problem, seed, PEER_KIND)
        }
    }

    /// A fieldmc kind's row, or the Laplace control's (no plan), compared with the peer if it
    /// ran.
    pub(crate) fn of_kind(
        problem: &LgcpProblem,
        seed: u64,
        plan: Option<&KindPlan>,
        result: &KindResult,
        peer: Option<&PeerResult>,
    ) -> Self {
        let (burn_in, kept, chains) = plan.map_or((0, 0, 0), |plan| {
            let s = &plan.settings;
            (s.burn_in, s.iterations - s.burn_in, s.chains)
        });
        let check = peer.map(|p| agreement(&result.cells, p));
        // The control has no draws: no ESS, no rate, no ratio.
        let sampled = |x: f64| if plan.is_some() { x } else { f64::NAN };
        let rate = sampled(result.ess_per_second());
        Self {
            burn_in,
            kept,
            chains,
            cpu_seconds: result.seconds,
            min_ess_bulk: sampled(result.cells.min_ess().0),
            min_ess_tail: sampled(result.cells.min_ess_tail()),
            min_ess_folded: sampled(result.cells.min_ess_folded()),
            ess_per_draw: sampled(result.cells.min_ess().0 / (kept * chains as u64) as f64),
            leapfrog_steps: result.leapfrog_steps.unwrap_or(f64::NAN),
            ess_per_cpu_second: rate,
            ratio_to_peer: peer.map_or(f64::NAN, |p| rate / p.ess_per_second),
            max_rhat: result.cells.max_rhat(),
            acceptance: result.acceptance_rate,
            max_z: check.map_or(f64::NAN, |c| c.max_z),
            cells_beyond_4: check.map_or(0, |c| c.beyond_four),
            z_threshold: check.map_or(f64::NAN, |c| c.threshold),
            means: match check {
                Some(c) if c.passes() => "agree",
                Some(_) => "differ",
                None => "",
            },
            ..Self::problem(problem, seed, &result.kind)
        }
    }

    /// The row as one CSV line, in [`Self::header`]'s order.
    fn csv_line(&self) -> String {
        Self::CSV.map(|(_, field)| field(self)).join(",")
    }
}

/// A number for the CSV: NaN and infinities as an empty field.
fn csv_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// An append-only CSV of [`RunRow`]s: the header is written when the file is new or empty, and
/// each row is flushed as its run ends, so an interrupted benchmark keeps what it measured.
#[derive(Debug)]
pub(crate) struct CsvLog {
    path: PathBuf,
    file: std::fs::File,
}

impl CsvLog {
    pub(crate) fn open(path: &Path) -> Result<Self, BenchError> {
        let io = |source| BenchError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let existing = std::fs::metadata(path).map_err(io)?.len();
        if existing == 0 {
            use std::io::Write;
            writeln!(file, "{}", RunRow::header()).map_err(io)?;
        } else {
            let header = std::fs::read_to_string(path)
                .map_err(io)?
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            if header != RunRow::header() {
                return Err(BenchError::Data(format!(
                    "{}: its header is not this version's columns ({}); write to a new file",
                    path.display(),
                    RunRow::header()
                )));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    pub(crate) fn append(&mut self, row: &RunRow) -> Result<(), BenchError> {
        use std::io::Write;
        let line = row.csv_line();
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|source| BenchError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finpines() -> LgcpProblem {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/finpines_grid32.csv");
        let model = LgcpModel {
            length_scale: 0.1,
            variance: 1.91,
            holdout: 0.25,
        };
        LgcpProblem::load(&path, "finpines", model, 0).unwrap()
    }

    /// The CSV log writes its header once, one row per append in the schema's order (a NaN as
    /// an empty field), and refuses a file written with other columns.
    #[test]
    fn the_csv_log_appends_rows_under_one_header() {
        let problem = finpines();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.csv");
        let control = run_laplace(&problem);
        for _ in 0..2 {
            let mut log = CsvLog::open(&path).unwrap();
            log.append(&RunRow::of_kind(&problem, 7, None, &control, None))
                .unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], RunRow::header());
        let columns: Vec<&str> = lines[0].split(',').collect();
        let fields: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(fields.len(), columns.len());
        let field = |name: &str| fields[columns.iter().position(|c| *c == name).unwrap()];
        assert_eq!(field("grid"), "finpines");
        assert_eq!(field("side"), "32");
        assert_eq!(field("seed"), "7");
        assert_eq!(field("kind"), "laplace");
        assert_eq!(field("observed"), "768");
        // The control has no draws, and no peer ran: empty, not NaN or 0.
        for empty in [
            "min_ess_bulk",
            "min_ess_tail",
            "min_ess_folded",
            "ess_per_draw",
            "leapfrog_steps",
            "ess_per_cpu_second",
            "ratio_to_peer",
            "max_z",
            "means",
        ] {
            assert_eq!(field(empty), "", "{empty}");
        }
        assert!(field("cpu_seconds").parse::<f64>().unwrap() >= 0.0);

        let other = dir.path().join("other.csv");
        std::fs::write(&other, "grid,kind\nx,y\n").unwrap();
        let error = CsvLog::open(&other).unwrap_err().to_string();
        assert!(error.contains("header"), "{error}");
    }

    #[test]
    fn the_bonferroni_threshold_matches_the_normal_tail() {
        // 2 (1 - Phi(4.8916)) = 1e-6: 1e-3 over 1,000 cells.
        assert!((agreement_threshold(1000) - 4.8916).abs() < 1e-3);
    }

    #[test]
    fn the_problem_holds_out_a_quarter_and_sets_the_intercept() {
        let problem = finpines();
        assert_eq!(problem.data.held_out.len(), 256);
        assert_eq!(problem.data.observed.len(), 768);
        let observed = &problem.data.observed.values;
        let rate = observed.iter().sum::<f64>() / 768.0;
        assert!((problem.mean - (rate.ln() - 0.955)).abs() < 1e-12);
        assert_eq!(problem.heldout_text().lines().count(), 256);
    }
}
