//! Running one planned job: build its prior, data and likelihood, run its chains with streams
//! derived from its keys, and score the result. Pure with respect to the job: the same job and
//! study seed give the same numbers whatever thread runs it and whatever ran before.

use crate::diagnostics;
use crate::model::data::{DataError, DataStreams, Dataset, Simulation};
use crate::model::evidence::{LogEvidence, log_evidence};
use crate::model::exact::{ExactError, ExactPosterior, MAX_EXACT_OBSERVATIONS, gaussian_posterior};
use crate::model::hyper::joint::{JointRoot, truncation_warning};
use crate::model::hyper::{HyperName, fixed_values};
use crate::model::prior::{Embedding, PriorError, build_prior};
use crate::model::sites::Measurements;
use crate::model::spec::SitesData;
use crate::model::{DataSpec, Likelihood, LikelihoodKind, Observed, PointsData, Prior, Target};
use crate::sampler::driver::StoredDraws;
use crate::sampler::hyper::{HyperModel, HyperUpdate};
use crate::sampler::{
    ChainRng, DrawSettings, Functional, PROBES, RunOutput, RunRequest, SamplerSpec, run_kind,
};
use crate::streams::{Purpose, stream};

use super::cells::CellDiagnostics;
use super::coefficients::{self, CoefficientSummary};
use super::exposure::{grid_cells, read_exposure, region_log_shares};
use super::grid_csv::read_data_grid;
use super::hyper::{self, Drawn, HyperSummary};
use super::keys::{COUNTS, HELD_OUT_SITES, NOISE, OBSERVATIONS, TRUTH};
use super::points_csv::{PointsSource, read_points_grid};
use super::score::{Estimates, Predictive, Scores, heldout_log_predictive, score};
use super::sites_csv::{SitesSource, read_sites};
use super::spec::FieldJob;
use super::units::unit_warnings;
use super::warnings::{
    coefficient_warnings, far_start_warnings, hyper_acceptance_warnings, hyper_warnings,
    outside_support_warnings, warnings as run_warnings,
};
use crate::clock::Stopwatch;

/// Why a job failed. Recorded in its row; the other jobs go on.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("prior: {0}")]
    Prior(#[from] PriorError),
    #[error("data: {0}")]
    Data(#[from] DataError),
    #[error("reading {path}: {message}")]
    ReadData { path: String, message: String },
    #[error("exact posterior: {0}")]
    Exact(#[from] ExactError),
    #[error("the posterior {what} is not finite at cell {cell} (the chain diverged)")]
    NonFinite { what: &'static str, cell: usize },
    #[error(
        "the log-likelihood of chain {chain} is {value} at iteration {iteration}: the data cannot be \
         evaluated at this state (an extreme noise_sd, offset or data value?), so the chain cannot move"
    )]
    NonFiniteLikelihood {
        chain: usize,
        iteration: u64,
        value: f64,
    },
    #[error("the Laplace approximation failed: {0}")]
    Laplace(String),
    #[error("chain {chain} stopped at iteration {iteration}: {reason}")]
    ChainFailed {
        chain: usize,
        iteration: u64,
        reason: String,
    },
    #[error(
        "no draw of {attempts} from the length-scale prior {prior} fell below {limit:.4}, the \
         longest length scale the joint chain's torus embeds: the prior puts almost no mass \
         where the chain can go (use a squared-exponential kernel or a prior on shorter scales)"
    )]
    TruncatedPrior {
        attempts: usize,
        limit: f64,
        prior: String,
    },
    #[error("simulation-based calibration needs a Markov chain; {0} is an approximation")]
    NotAMarkovChain(crate::sampler::SamplerKind),
}

/// Diagnostics of a run, from every kept state of every chain ([`crate::sampler::KeptSeries`];
/// `sampler.thin` thins only the stored traces).
#[derive(Debug, Clone, Default)]
pub(crate) struct JobDiagnostics {
    pub(crate) ess_bulk: Option<f64>,
    pub(crate) ess_tail: Option<f64>,
    pub(crate) rhat: Option<f64>,
    /// Min and median bulk ESS over the probe cells.
    pub(crate) cell_ess_min: Option<f64>,
    pub(crate) cell_ess_median: Option<f64>,
    /// The largest batch-means MCSE of a cell's posterior mean.
    pub(crate) mcse_mean_max: Option<f64>,
    /// Autocorrelation of the log-likelihood, averaged over chains, by lag in kept iterations.
    pub(crate) loglik_autocorrelation: Vec<f64>,
}

/// Everything a finished job produced.
pub struct JobResult {
    /// The field's constant mean used (`model.mean`, resolved against the data).
    pub(crate) mean: f64,
    /// Seconds to factor the prior and build the data and likelihood.
    pub(crate) setup_seconds: f64,
    /// CPU seconds of setup and sampling, all chains (the job's thread): what effective samples
    /// per second are counted against.
    pub(crate) cpu_seconds: f64,
    /// Per-cell R-hat, ESS and MCSE from the stored draws.
    pub(crate) cells: CellDiagnostics,
    /// Why the answer may not be trusted (empty when nothing was found).
    pub(crate) warnings: Vec<String>,
    /// Seconds for the exact posterior (a check, not part of the sampler's cost).
    pub(crate) exact_seconds: f64,
    pub(crate) dataset: Dataset,
    pub(crate) jitter: f64,
    /// The circulant embedding of the prior, if it has one.
    pub(crate) embedding: Option<Embedding>,
    /// Whitened coordinates of the prior (N, or the torus's P for an embedding).
    pub(crate) latent_dim: usize,
    pub(crate) exact: Option<ExactPosterior>,
    pub(crate) run: RunOutput,
    pub(crate) scores: Scores,
    pub(crate) diagnostics: JobDiagnostics,
    /// log p(data | model) by Monte Carlo over the prior, when `evidence_draws` > 0.
    pub(crate) evidence: Option<LogEvidence>,
    /// The inferred hyperparameters' posteriors (empty when every one is fixed).
    pub(crate) hyper: Vec<HyperSummary>,
    /// The covariates' coefficients' posteriors (empty without covariates).
    pub(crate) coefficients: Vec<CoefficientSummary>,
    /// The field at the measurement sites (sites data only).
    pub(crate) sites: Option<super::sites::SiteResults>,
    /// PSIS-LOO and WAIC (`output.log_likelihood`, chains only).
    pub(crate) loo: Option<super::loo::LooOutcome>,
}

/// Lags of the saved log-likelihood autocorrelation.
const AUTOCORRELATION_LAGS: usize = 100;

/// How to run a job.
pub(crate) struct JobOptions<'a> {
    /// Compute the exact posterior where it exists (gaussian, M <= MAX_EXACT_OBSERVATIONS).
    pub(crate) exact: bool,
    /// Called with the iterations done, about a hundred times per run.
    pub(crate) progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Run the chains at once on the rayon pool (see [`RunRequest::chains_in_parallel`]).
    pub(crate) chains_in_parallel: bool,
}

/// Run `job` of a study with seed `seed`.
pub(crate) fn run_job(
    job: FieldJob<'_>,
    seed: u64,
    options: &JobOptions,
) -> Result<JobResult, JobError> {
    let started = Stopwatch::start();
    let prior = build_prior(&job.spec.model)?;
    let prior = prior.as_ref();
    let dataset = load_data(job, seed, prior)?;
    let model = &job.spec.model;
    let likelihood = likelihood_of(model, &dataset);
    let mean = model.mean_value(&dataset);
    let setup_seconds = started.wall_seconds();
    let setup_cpu = started.cpu_seconds();
    let exact_started = std::time::Instant::now();
    let exact = if options.exact {
        exact_posterior(job, prior, mean, &dataset)?
    } else {
        None
    };
    let exact_seconds = exact_started.elapsed().as_secs_f64();
    let functional = match model.likelihood {
        LikelihoodKind::Gaussian => None,
        LikelihoodKind::Probit => Some(Functional::PositiveProbability {
            noise_sd: model.noise_sd,
        }),
        LikelihoodKind::Poisson => Some(Functional::ExpectedCount {
            offsets: dataset.offsets.every_cell(dataset.grid.cells()).into(),
        }),
        LikelihoodKind::Binomial => Some(Functional::SuccessProbability {
            offsets: dataset
                .offsets
                .every_cell_unmasked(dataset.grid.cells())
                .into(),
        }),
    };
    let target = Target {
        prior,
        likelihood: &likelihood,
        observed: observed_where(&dataset),
        mean,
    };
    let levels = super::risk::exceedance_levels(&job.spec.output.exceedance, model);
    let request = RunRequest {
        target,
        schedule: job.spec.sampler.schedule(),
        adaptation: job.spec.sampler.adaptation(),
        functional,
        exact_mean: exact.as_ref().map(|e| e.mean.as_slice()),
        draws: DrawSettings {
            per_chain: job.spec.output.cell_draws.max(job.spec.output.field_draws),
            ..DrawSettings::default()
        },
        progress: options.progress,
        exceedance: &levels,
        hyper: model.hyper.any().then(|| HyperModel {
            model,
            start: model.hyper.chain_start(fixed_values(model, mean)),
        }),
        chains_in_parallel: options.chains_in_parallel,
    };
    let request_hyper_start = request.hyper.map(|h| h.start);
    let sampling = Stopwatch::start();
    let output = run_kind(&job.spec.sampler, &request, chain_rngs(job, seed));
    // The driver's own count when it ran chains (they may have run on other threads than this).
    let cpu_seconds = setup_cpu + output.cpu_seconds.unwrap_or_else(|| sampling.cpu_seconds());
    if let Some(error) = output.approximation.as_ref().and_then(|a| a.error.clone()) {
        return Err(JobError::Laplace(error));
    }
    check_finite(&output)?;
    let cells = CellDiagnostics::of(&output);
    let hyper_names: Vec<HyperName> = model.hyper.names().collect();
    let quantiles = &job.spec.output.quantiles;
    let hyper = hyper::summarize(&hyper_names, &output, quantiles);
    let coefficients = coefficients::summarize(prior.covariates(), &output, quantiles);
    let mut warnings = unit_warnings(model, &job.spec.data);
    if let Some(start) = &request_hyper_start {
        warnings.extend(outside_support_warnings(
            &model.hyper,
            &fixed_values(model, mean),
        ));
        warnings.extend(far_start_warnings(&model.hyper, start));
    }
    warnings.extend(run_warnings(&job.spec.sampler, &output, &cells));
    warnings.extend(hyper_warnings(&hyper));
    warnings.extend(hyper_acceptance_warnings(
        job.spec.sampler.hyper().update,
        output.chains.iter().map(|c| c.hyper_acceptance_rate),
    ));
    let predict = job.spec.output.predict_sites.as_ref().map(|p| &p.sites);
    warnings.extend(super::sites::coarse_grid_warning(
        model, &dataset, predict, &hyper,
    ));
    // A joint chain on a circulant kernel ran on its own torus, not the target prior's.
    let chain_torus = request_hyper_start
        .filter(|_| job.spec.sampler.hyper().update == HyperUpdate::Joint)
        .and_then(|start| JointRoot::for_model(model, start).ok())
        .and_then(|root| root.circulant().cloned());
    if let Some(circulant) = &chain_torus {
        let q95 = hyper_names
            .iter()
            .position(|&name| name == HyperName::LengthScale)
            .and_then(|index| hyper::pooled_quantile(&output, index, hyper_names.len(), 0.95));
        warnings.extend(truncation_warning(model, circulant, q95));
    }
    warnings.extend(coefficient_warnings(&coefficients));
    let asked = job.spec.output.log_likelihood;
    let noise_draws = hyper::at_stored_draws(model, &output, HyperName::NoiseSd);
    let noise = Drawn::of(noise_draws.as_deref(), model.noise_sd);
    let loo = super::loo::summarize(asked, (&target, noise), &output, &mut warnings);
    let mut scores = score(
        model.likelihood,
        &dataset,
        &Estimates {
            post_mean: &output.post_mean,
            exact_mean: exact.as_ref().map(|e| e.mean.as_slice()),
            functional_mean: output.functional_mean.as_deref(),
        },
    );
    let stored: Vec<&StoredDraws> = output.chains.iter().map(|c| &c.draws).collect();
    let predictive = match output.approximation {
        Some(_) => Predictive::Gaussian {
            mean: &output.post_mean,
            sd: &output.post_sd,
        },
        None => Predictive::Draws(&stored),
    };
    scores.heldout_lpd =
        heldout_log_predictive(model.likelihood, &dataset, &predictive, model.noise_sd);
    let mean_draws = hyper::at_stored_draws(model, &output, HyperName::Mean);
    let variance_draws = hyper::at_stored_draws(model, &output, HyperName::Variance);
    let coefficient_draws = super::sites::pooled_coefficients(&output);
    let spatial = (!levels.is_empty()).then(|| super::sites::Spatial {
        levels: &levels,
        mean: Drawn::of(mean_draws.as_deref(), mean),
        covariates: prior
            .covariates()
            .map(|c| (c, coefficient_draws.as_slice())),
        variance: (
            Drawn::of(variance_draws.as_deref(), model.kernel.variance),
            model.kernel.variance,
        ),
    });
    let probabilities = quantiles.probabilities();
    let sites = super::sites::results(
        model,
        &dataset,
        predict,
        (&output, noise, spatial),
        &probabilities,
    )
    .map_err(|e| JobError::ReadData {
        path: job
            .spec
            .output
            .predict_sites
            .as_ref()
            .map_or_else(String::new, |p| p.path.display().to_string()),
        message: e.to_string(),
    })?;
    if let Some(sites) = &sites {
        scores.heldout_lpd = sites.heldout_lpd();
    }
    let diagnostics = diagnose(&output);
    let evidence = match &output.approximation {
        // An approximation brings its own evidence (the Laplace log marginal likelihood): no
        // Monte Carlo, so no standard error and no effective draws.
        Some(approximation) => Some(LogEvidence {
            estimate: approximation.log_evidence,
            standard_error: f64::NAN,
            effective_draws: f64::NAN,
        }),
        None => (model.evidence_draws > 0).then(|| {
            // Keyed by the data only: every length scale sees the same prior normals (common
            // random numbers), so differences of log evidence between models are less noisy.
            let mut rng = stream(seed, Purpose::Evidence, job.header.streams.data(&COUNTS));
            log_evidence(&target, model.evidence_draws, &mut rng)
        }),
    };
    Ok(JobResult {
        cpu_seconds,
        cells,
        warnings,
        mean,
        evidence,
        setup_seconds,
        exact_seconds,
        dataset,
        jitter: prior.jitter(),
        embedding: match (&chain_torus, request_hyper_start) {
            (Some(circulant), Some(start)) => {
                Some(circulant.embedding_at(start.length_scale, start.variance))
            }
            _ => prior.embedding(),
        },
        latent_dim: chain_torus.map_or(prior.latent_dim(), |c| c.latent_dim()),
        exact,
        run: output,
        scores,
        diagnostics,
        hyper,
        coefficients,
        sites,
        loo,
    })
}

/// Where the fitted data see the field: at the observed cells, or through the operator of the
/// fitted sites.
pub(crate) fn observed_where(dataset: &Dataset) -> Observed<'_> {
    match &dataset.sites {
        Some(sites) => Observed::Sites(&sites.fitted.operator),
        None => Observed::Cells(&dataset.observed.cells),
    }
}

/// The model's likelihood bound to the data's observed values (counts and successes with their
/// cells' offsets; binomial successes with their trials).
pub(crate) fn likelihood_of(model: &crate::model::ModelSpec, dataset: &Dataset) -> Likelihood {
    let offsets = match model.likelihood {
        LikelihoodKind::Poisson | LikelihoodKind::Binomial => dataset.observed_offsets(),
        LikelihoodKind::Gaussian | LikelihoodKind::Probit => Vec::new(),
    };
    Likelihood::of_observations_with_offsets(
        model.likelihood,
        &dataset.observed,
        model.noise_sd,
        offsets,
    )
}

/// The streams of each chain: the job's chain key plus the chain index.
pub(crate) fn chain_rngs(job: FieldJob<'_>, seed: u64) -> Vec<ChainRng> {
    chain_rngs_for(&job.spec.sampler, &job.header.streams.chain, seed)
}

/// The streams of each chain of `spec` under the chain key `key`.
pub(crate) fn chain_rngs_for(spec: &SamplerSpec, key: &str, seed: u64) -> Vec<ChainRng> {
    (0..spec.chains())
        .map(|c| {
            let key = format!("{key};chain={c}");
            ChainRng::keyed(seed, &key)
        })
        .collect()
}

/// Simulated data whose truth is drawn from the model's own prior (simulation-based
/// calibration), with the job's data streams.
pub(crate) fn simulate_from_model_prior(
    job: FieldJob<'_>,
    seed: u64,
    prior: &dyn Prior,
    (mean, noise_sd): (f64, f64),
) -> Result<Dataset, JobError> {
    let (subsample, trials) = match job.spec.data {
        DataSpec::Simulated {
            subsample, trials, ..
        } => (subsample, trials),
        DataSpec::Csv { .. } | DataSpec::Points(_) | DataSpec::Sites(_) => (1, 1),
    };
    simulate(job, seed, prior, (subsample, trials), (mean, noise_sd))
}

/// Data simulated from `truth_prior` (the field's mean `mean` added, gaussian noise of sd
/// `noise_sd`), observing every `subsample`-th cell (binomial: `trials` trials each).
fn simulate(
    job: FieldJob<'_>,
    seed: u64,
    truth_prior: &dyn Prior,
    (subsample, trials): (usize, u64),
    (mean, noise_sd): (f64, f64),
) -> Result<Dataset, JobError> {
    let model = &job.spec.model;
    let keys = &job.header.streams;
    let mut streams = DataStreams {
        truth: stream(seed, Purpose::Truth, keys.data(&TRUTH)),
        observations: stream(seed, Purpose::Observations, keys.data(&OBSERVATIONS)),
        noise: stream(seed, Purpose::Noise, keys.data(&NOISE)),
        counts: stream(seed, Purpose::Counts, keys.data(&COUNTS)),
    };
    let simulation = Simulation {
        likelihood: model.likelihood,
        subsample,
        noise_sd,
        offset: model.offset,
        trials,
        mean,
    };
    Ok(Dataset::simulate(truth_prior, simulation, &mut streams)?)
}

fn load_data(job: FieldJob<'_>, seed: u64, prior: &dyn Prior) -> Result<Dataset, JobError> {
    let model = &job.spec.model;
    let dims = (model.grid.nx(), model.grid.ny());
    let failed = |path: &std::path::Path, message: String| JobError::ReadData {
        path: path.display().to_string(),
        message,
    };
    // Real data, a grid CSV read or a point pattern binned, become the same grid: from there on
    // they are one path.
    let (grid, holdout) = match &job.spec.data {
        DataSpec::Simulated {
            truth_length_scale,
            subsample,
            trials,
        } => {
            let observing = (*subsample, *trials);
            if *truth_length_scale == model.kernel.length_scale {
                return simulate(job, seed, prior, observing, (0.0, model.noise_sd));
            }
            let truth_prior = build_prior(&model.with_length_scale(*truth_length_scale))?;
            return simulate(
                job,
                seed,
                truth_prior.as_ref(),
                observing,
                (0.0, model.noise_sd),
            );
        }
        DataSpec::Csv {
            path,
            column,
            trials,
            holdout,
            ..
        } => {
            let grid = read_data_grid(path, column, trials.as_deref(), dims, model.likelihood)
                .map_err(|e| failed(path, e.to_string()))?;
            (grid, *holdout)
        }
        DataSpec::Points(points) => {
            let PointsData {
                path,
                x,
                y,
                window,
                holdout,
                ..
            } = points.as_ref();
            // Every event was checked to lie in the study region when the study was loaded
            // (`points_keys.rs`); binning needs the window only.
            let source = PointsSource {
                x,
                y,
                window: *window,
                region: None,
            };
            let grid = read_points_grid(path, source, dims, model.likelihood)
                .map_err(|e| failed(path, e.to_string()))?;
            (grid, *holdout)
        }
        DataSpec::Sites(sites) => return load_sites(job, seed, sites),
    };
    let exposure = match job.spec.data.exposure() {
        Some(exposure) => {
            let (values, _) =
                read_exposure(exposure, dims).map_err(|e| failed(&exposure.path, e.to_string()))?;
            Some((exposure.scale, values))
        }
        None => None,
    };
    let trials = grid.trials.clone();
    let region = job
        .spec
        .region
        .as_ref()
        .map(|region| region_log_shares(&region.inside_fraction, model.likelihood));
    let cells = grid_cells(grid, exposure, region, model.offset);
    let mut rng = stream(
        seed,
        Purpose::Observations,
        job.header.streams.data(&OBSERVATIONS),
    );
    let dataset = Dataset::from_grid_cells(prior.grid(), cells, holdout, &mut rng)?;
    Ok(match trials {
        Some(trials) => dataset.with_trials(&trials)?,
        None => dataset,
    })
}

/// Measurements at sites, read and split into fitted and held-out ones (every row was checked
/// when the study was loaded, `sites_keys.rs`).
fn load_sites(job: FieldJob<'_>, seed: u64, sites: &SitesData) -> Result<Dataset, JobError> {
    let model = &job.spec.model;
    let source = SitesSource {
        x: &sites.x,
        y: &sites.y,
        value: &sites.value,
        trials: sites.trials.as_deref(),
        likelihood: model.likelihood,
        window: sites.window,
        region: None,
    };
    let read = read_sites(&sites.path, source).map_err(|e| JobError::ReadData {
        path: sites.path.display().to_string(),
        message: e.to_string(),
    })?;
    let measurements = Measurements {
        positions: read.positions,
        values: read.values,
        trials: read.trials,
    };
    let mut rng = stream(
        seed,
        Purpose::Observations,
        job.header.streams.data(&HELD_OUT_SITES),
    );
    Ok(Dataset::from_sites(
        model.grid,
        &measurements,
        model.offset,
        sites.holdout,
        &mut rng,
    )?)
}

fn exact_posterior(
    job: FieldJob<'_>,
    prior: &dyn Prior,
    mean: f64,
    dataset: &Dataset,
) -> Result<Option<ExactPosterior>, JobError> {
    let applies = job.spec.model.likelihood == LikelihoodKind::Gaussian
        && dataset.sites.is_none()
        && dataset.observed.len() <= MAX_EXACT_OBSERVATIONS;
    if !applies {
        return Ok(None);
    }
    Ok(Some(gaussian_posterior(
        prior,
        mean,
        &dataset.observed,
        job.spec.model.noise_sd,
    )?))
}

/// A run is usable only if every kept state has a finite log-likelihood (else its acceptance
/// ratios are NaN and the chain never moves) and every estimate is a number.
pub(crate) fn check_finite(output: &RunOutput) -> Result<(), JobError> {
    for (chain, c) in output.chains.iter().enumerate() {
        if let Some(failure) = &c.failure {
            return Err(JobError::ChainFailed {
                chain,
                iteration: failure.iteration,
                reason: failure.reason.clone(),
            });
        }
    }
    for (chain, c) in output.chains.iter().enumerate() {
        if let Some(k) = c.kept.loglik.iter().position(|x| !x.is_finite()) {
            return Err(JobError::NonFiniteLikelihood {
                chain,
                iteration: c.kept.first_iteration + k as u64,
                value: c.kept.loglik[k],
            });
        }
    }
    let first_bad = |v: &[f64]| v.iter().position(|x| !x.is_finite());
    if let Some(cell) = first_bad(&output.post_mean) {
        return Err(JobError::NonFinite { what: "mean", cell });
    }
    if let Some(cell) = first_bad(&output.post_sd) {
        return Err(JobError::NonFinite { what: "sd", cell });
    }
    if let Some(cell) = output.functional_mean.as_deref().and_then(first_bad) {
        return Err(JobError::NonFinite {
            what: "predictive mean",
            cell,
        });
    }
    Ok(())
}

fn diagnose(output: &RunOutput) -> JobDiagnostics {
    let loglik: Vec<&[f64]> = output
        .chains
        .iter()
        .map(|c| c.kept.loglik.as_slice())
        .collect();
    let summary = diagnostics::summarize(&loglik);
    let mut cell_ess: Vec<f64> = (0..PROBES)
        .filter_map(|p| {
            let draws: Vec<Vec<f64>> = output
                .chains
                .iter()
                .map(|c| c.kept.probe_series(p))
                .collect();
            let views: Vec<&[f64]> = draws.iter().map(Vec::as_slice).collect();
            diagnostics::ess_bulk(&views)
        })
        .collect();
    cell_ess.sort_by(f64::total_cmp);
    let mcse_mean_max = output
        .post_mean_mcse
        .as_ref()
        .map(|m| m.iter().copied().fold(0.0, f64::max));
    JobDiagnostics {
        ess_bulk: summary.ess_bulk,
        ess_tail: summary.ess_tail,
        rhat: summary.rhat,
        cell_ess_min: cell_ess.first().copied(),
        cell_ess_median: (!cell_ess.is_empty()).then(|| cell_ess[cell_ess.len() / 2]),
        mcse_mean_max,
        loglik_autocorrelation: mean_autocorrelation(&loglik),
    }
}

fn mean_autocorrelation(chains: &[&[f64]]) -> Vec<f64> {
    let usable: Vec<Vec<f64>> = chains
        .iter()
        .filter(|c| c.len() > 2)
        .map(|c| diagnostics::autocorrelation(c, AUTOCORRELATION_LAGS.min(c.len() - 1)))
        .collect();
    let lags = usable.iter().map(Vec::len).min().unwrap_or(0);
    (0..lags)
        .map(|k| usable.iter().map(|a| a[k]).sum::<f64>() / usable.len() as f64)
        .filter(|x: &f64| x.is_finite())
        .collect()
}
