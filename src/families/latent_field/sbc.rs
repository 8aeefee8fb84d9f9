//! Simulation-based calibration jobs (`[study] kind = "sbc"`): each job is one replication — a
//! truth drawn from the model's own prior, data simulated from it, the chains run, and the rank
//! of the truth among L posterior draws recorded for a few scalar functionals (the probe cells,
//! the field's mean, and the data's log-likelihood). Over replications the ranks of a correct
//! sampler are uniform.
//!
//! The log-likelihood log p(y | u) is the test quantity that sees a wrong posterior width best
//! (Modrak et al. 2023, "Simulation-based calibration checking for Bayesian computation: the
//! choice of test quantities shapes sensitivity"): a sampler whose posterior is too wide puts
//! the truth's log-likelihood above most draws'. It is computed here, by the model's likelihood,
//! from the chains' stored fields (f32, as stored; the truth is rounded the same way), never
//! taken from what the sampler says of itself.

use polars::prelude::DataFrame;

use super::job::{JobError, chain_rngs, check_finite, likelihood_of, simulate_from_model_prior};
use super::keys::TRUTH;
use super::schema::ranks;
use super::spec::FieldJob;
use crate::diagnostics;
use crate::diagnostics::calibration::{
    histogram_bins, rank_of, rank_uniformity_p_value, spaced_draws, spacing_from_ess,
};
use crate::job::JobHeader;
use crate::model::hyper::joint::length_scale_limit;
use crate::model::hyper::{HyperName, Hyperparameters, fixed_values, prior_at};
use crate::model::likelihood::Likelihood;
use crate::model::prior::build_prior;
use crate::model::{MeanSpec, ModelSpec, Observed, Target};
use crate::sampler::driver::probe_cells;
use crate::sampler::hyper::{HyperModel, HyperUpdate};
use crate::sampler::{
    ChainOutput, DrawSettings, Kind, KindVisitor, PROBES, RunOutput, RunRequest, run,
};
use crate::sampler::{ChainRng, run_kind};
use crate::streams::{Purpose, stream};
use crate::study::SbcSpec;
use crate::table::{SchemaError, rows_of};

/// The functionals ranked, in table order.
pub const FUNCTIONALS: [&str; PROBES + 2] = [
    "probe_0",
    "probe_1",
    "probe_2",
    "probe_3",
    "probe_4",
    "field_mean",
    "loglik",
];

/// The index of the log-likelihood among [`FUNCTIONALS`].
const LOGLIK: usize = PROBES + 1;

/// One replication's ranks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Calibration {
    /// (functional, rank in 0..=draws, draws used).
    pub(crate) ranks: Vec<(String, usize, usize)>,
    pub(crate) acceptance_rate: f64,
    pub(crate) sample_seconds: f64,
}

/// All replications of one SBC job.
#[derive(Debug, Clone, PartialEq)]
pub struct SbcRun {
    pub(crate) replications: Vec<Calibration>,
    pub draws: usize,
}

impl SbcRun {
    /// The ranks of functional `f` (its index in each replication's `ranks`) over the
    /// replications that ranked it among the full L draws: only those share the rank scale
    /// 0..=L (a chain shorter than L cannot supply them all).
    pub fn full_scale_ranks(&self, f: usize) -> Vec<usize> {
        self.replications
            .iter()
            .filter(|c| c.ranks[f].2 == self.draws)
            .map(|c| c.ranks[f].1)
            .collect()
    }

    /// Per functional ([`FUNCTIONALS`], then the inferred hyperparameters): the p-value that
    /// its ranks are uniform ([`rank_uniformity_p_value`]: chi-square and ECDF combined).
    pub fn p_values(&self) -> Vec<(String, Option<f64>)> {
        let names: Vec<String> = match self.replications.first() {
            Some(first) => first.ranks.iter().map(|r| r.0.clone()).collect(),
            None => FUNCTIONALS.iter().map(|f| f.to_string()).collect(),
        };
        names
            .iter()
            .enumerate()
            .map(|(f, name)| {
                let ranks = self.full_scale_ranks(f);
                let max_rank = self.draws;
                let bins = histogram_bins(ranks.len(), max_rank);
                (
                    name.clone(),
                    rank_uniformity_p_value(&ranks, max_rank, bins),
                )
            })
            .collect()
    }
}

/// Run `sbc.replications` SBC replications of `job` with the sampler of its kind, each with
/// `sbc.draws` posterior draws.
pub fn run_sbc(job: FieldJob<'_>, seed: u64, sbc: SbcSpec) -> Result<SbcRun, JobError> {
    struct Calibrator<'a> {
        job: FieldJob<'a>,
        seed: u64,
        sbc: SbcSpec,
    }
    impl KindVisitor for Calibrator<'_> {
        type Output = Result<SbcRun, JobError>;
        fn visit<S: Kind>(self, sampler: S) -> Self::Output {
            let spec = &self.job.spec.sampler;
            if self.job.spec.model.hyper.any() {
                // The field kind alternates with the hyperparameter update of the spec.
                let runner = |request: &RunRequest, rngs| run_kind(spec, request, rngs);
                return run_sbc_with_runner(&runner, self.job, self.seed, self.sbc);
            }
            run_sbc_with(&sampler, self.job, self.seed, self.sbc)
        }
        fn approximation(self, kind: crate::sampler::SamplerKind) -> Self::Output {
            Err(JobError::NotAMarkovChain(kind))
        }
    }
    job.spec.sampler.visit(Calibrator { job, seed, sbc })
}

/// [`run_sbc`] with a given sampler (tests pass deliberately wrong ones).
pub fn run_sbc_with<S: crate::sampler::Sampler>(
    sampler: &S,
    job: FieldJob<'_>,
    seed: u64,
    sbc: SbcSpec,
) -> Result<SbcRun, JobError> {
    let runner = |request: &RunRequest, rngs| run(sampler, request, rngs);
    run_sbc_with_runner(&runner, job, seed, sbc)
}

/// How a replication's chains are run: given the request the engine built (the model's target,
/// schedule, adaptation) and the chains' generators.
pub(crate) type Runner<'a> = dyn Fn(&RunRequest, Vec<ChainRng>) -> RunOutput + 'a;

/// [`run_sbc`] with a given way of running the chains: the truths and data are the engine's, the
/// runner may change what the chains see (the planted-bug tests give the sampler a wrong prior
/// or a tempered likelihood this way).
pub fn run_sbc_with_runner(
    runner: &Runner,
    job: FieldJob<'_>,
    seed: u64,
    sbc: SbcSpec,
) -> Result<SbcRun, JobError> {
    let draws = sbc.draws as usize;
    let replications = (0..sbc.replications)
        .map(|r| {
            let header = replication_job(job, r);
            let replica = FieldJob {
                header: &header,
                spec: job.spec,
            };
            calibrate(runner, replica, seed, draws)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SbcRun {
        replications,
        draws,
    })
}

/// The job whose every stream key names the replication: independent truths, data and chains.
fn replication_job(job: FieldJob<'_>, replication: u32) -> JobHeader {
    let mut copy = job.header.clone();
    let suffix = format!(";sbc.replication={replication}");
    let data = copy.streams.data.iter_mut().map(|(_, key)| key);
    for key in data.chain([&mut copy.streams.chain]) {
        key.push_str(&suffix);
    }
    copy.replicate = replication;
    copy
}

/// Run one SBC replication of `job` with `runner` and `draws` posterior draws per functional.
/// With inferred hyperparameters, the truth's are drawn from their priors first (from the
/// replication's truth stream), the field from the prior they give, around the mean drawn (or
/// the model's fixed mean); the chains start where a job's would
/// ([`crate::model::hyper::HyperPriors::chain_start`]).
fn calibrate(
    runner: &Runner,
    job: FieldJob<'_>,
    seed: u64,
    draws: usize,
) -> Result<Calibration, JobError> {
    let model = &job.spec.model;
    let fixed_mean = match model.mean {
        MeanSpec::Value(mean) => mean,
        MeanSpec::Auto => 0.0,
    };
    let start = fixed_values(model, fixed_mean);
    let true_hyper = true_hyperparameters(job, seed, start)?;
    let prior = prior_at(model, &true_hyper)?;
    let dataset = simulate_from_model_prior(
        job,
        seed,
        prior.as_ref(),
        (true_hyper.mean, true_hyper.noise_sd),
    )?;
    let likelihood = likelihood_of(model, &dataset);
    // The chains start from the model's prior, whatever the truth's hyperparameters.
    let model_prior = build_prior(model)?;
    let mut schedule = job.spec.sampler.schedule();
    schedule.thin = 1;
    let request = RunRequest {
        target: Target {
            prior: model_prior.as_ref(),
            likelihood: &likelihood,
            observed: Observed::Cells(&dataset.observed.cells),
            mean: start.mean,
        },
        schedule,
        adaptation: job.spec.sampler.adaptation(),
        functional: None,
        exact_mean: None,
        draws: DrawSettings::default(),
        progress: None,
        exceedance: &[],
        hyper: model.hyper.any().then(|| HyperModel {
            model,
            start: model.hyper.chain_start(start),
        }),
        chains_in_parallel: false,
    };
    let output = runner(&request, chain_rngs(job, seed));
    check_finite(&output)?;
    let truth = dataset
        .truth
        .as_deref()
        .expect("simulated data have a truth");
    let hyper_truth = model.hyper.values(&true_hyper);
    let coefficients_truth = dataset.truth_coefficients.clone().unwrap_or_default();
    Ok(Calibration {
        ranks: rank_functionals(
            &output,
            &Truth {
                field: truth,
                hyper: &hyper_truth,
                coefficients: &coefficients_truth,
                likelihood: &likelihood,
                observed: Observed::Cells(&dataset.observed.cells),
            },
            model,
            draws,
        ),
        acceptance_rate: output.acceptance_rate,
        sample_seconds: output.sample_seconds,
    })
}

/// The truth's hyperparameters: the model's, with each inferred one drawn from its prior. A
/// joint chain on a circulant kernel samples the length-scale prior truncated where its torus
/// stops embedding the kernel ([`length_scale_limit`]), so the truth's length scale is drawn
/// from that truncated prior (by rejection) and the ranks test the chain against its own model.
fn true_hyperparameters(
    job: FieldJob<'_>,
    seed: u64,
    fixed: Hyperparameters,
) -> Result<Hyperparameters, JobError> {
    let model = &job.spec.model;
    let mut rng = stream(
        seed,
        Purpose::Truth,
        &format!("{};hyperparameters", job.header.streams.data(&TRUTH)),
    );
    let limit = if job.spec.sampler.hyper().update == HyperUpdate::Joint {
        length_scale_limit(model, model.hyper.chain_start(fixed))
    } else {
        f64::INFINITY
    };
    let mut values = fixed;
    for (name, prior) in model.hyper.iter() {
        let mut value = prior.sample(&mut rng);
        let mut attempts = 1;
        while *name == HyperName::LengthScale && value > limit {
            if attempts == MAX_TRUTH_ATTEMPTS {
                return Err(JobError::TruncatedPrior {
                    attempts,
                    limit,
                    prior: prior.canonical(),
                });
            }
            value = prior.sample(&mut rng);
            attempts += 1;
        }
        values.set(*name, value);
    }
    Ok(values)
}

/// Draws of a truth's length scale from its prior before giving up on the prior truncated at the
/// chain torus's limit: past this, less than about 1e-4 of the prior's mass lies below the limit
/// and calibration against that truncated prior would say little.
const MAX_TRUTH_ATTEMPTS: usize = 10_000;

/// What a replication's draws are ranked against.
struct Truth<'a> {
    field: &'a [f64],
    hyper: &'a [f64],
    /// The covariates' coefficients (empty without covariates), ranked after the
    /// hyperparameters.
    coefficients: &'a [f64],
    /// The model's likelihood of the replication's data, and where it observes the field.
    likelihood: &'a Likelihood,
    observed: Observed<'a>,
}

impl Truth<'_> {
    /// log p(y | u) of the model at `field`, each value first rounded to f32 as stored draws are.
    /// `observed` is scratch of one value per observed cell, reused from draw to draw.
    fn loglik_of(&self, field: impl Fn(usize) -> f32, observed: &mut [f64]) -> f64 {
        self.observed.gather_by(|c| f64::from(field(c)), observed);
        self.likelihood.log_likelihood(observed)
    }

    fn observed_scratch(&self) -> Vec<f64> {
        vec![0.0; self.observed.len()]
    }

    /// The truth's value of functional `index`.
    fn value(&self, index: usize, probes: &[usize]) -> f64 {
        match index {
            i if i < PROBES => self.field[probes[i]],
            PROBES => self.field.iter().sum::<f64>() / self.field.len() as f64,
            LOGLIK => self.loglik_of(|c| self.field[c] as f32, &mut self.observed_scratch()),
            i if i - LOGLIK - 1 < self.hyper.len() => self.hyper[i - LOGLIK - 1],
            i => self.coefficients[i - LOGLIK - 1 - self.hyper.len()],
        }
    }

    /// The series of functional `index` along one chain: a probe cell or the field's mean from
    /// the trace, the log-likelihood from the stored draws, then the inferred hyperparameters.
    fn series(&self, chain: &ChainOutput, index: usize) -> Vec<f64> {
        let trace = &chain.trace;
        match index {
            i if i < PROBES => trace.probes.iter().map(|row| row[i]).collect(),
            PROBES => trace.field_mean.clone(),
            LOGLIK => {
                let draws = &chain.draws;
                let mut observed = self.observed_scratch();
                (0..draws.len())
                    .map(|d| self.loglik_of(|c| draws.values[d * draws.cells + c], &mut observed))
                    .collect()
            }
            i if i - LOGLIK - 1 < self.hyper.len() => {
                trace.hyper_series(i - LOGLIK - 1, self.hyper.len())
            }
            i => chain
                .coefficients
                .series(i - LOGLIK - 1 - self.hyper.len(), self.coefficients.len()),
        }
    }
}

fn rank_functionals(
    output: &RunOutput,
    truth: &Truth<'_>,
    model: &ModelSpec,
    draws: usize,
) -> Vec<(String, usize, usize)> {
    let probes = probe_cells(model.grid);
    let chains = output.chains.len();
    let coefficients = model.covariates.iter().flat_map(|c| &c.names);
    let names: Vec<String> = FUNCTIONALS
        .iter()
        .map(|f| f.to_string())
        .chain(model.hyper.names().map(|n| n.name().to_string()))
        .chain(coefficients.map(|name| format!("coef_{name}")))
        .collect();
    names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            let series: Vec<Vec<f64>> = output
                .chains
                .iter()
                .map(|chain| truth.series(chain, index))
                .collect();
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            let total: usize = series.iter().map(Vec::len).sum();
            let per_chain = draws.div_ceil(chains);
            // Thin by the autocorrelation, but never so far that a chain cannot supply its
            // share: every replication then ranks among exactly `draws` draws (the ranks of
            // replications with different L cannot be pooled).
            let shortest = series.iter().map(Vec::len).min().unwrap_or(0);
            let affordable = (shortest / per_chain.max(1)).max(1);
            let spacing = spacing_from_ess(total, diagnostics::ess_bulk(&views)).min(affordable);
            let mut sample: Vec<f64> = series
                .iter()
                .flat_map(|s| spaced_draws(s, per_chain, spacing))
                .collect();
            sample.truncate(draws);
            (
                name.clone(),
                rank_of(truth.value(index, &probes), &sample),
                sample.len(),
            )
        })
        .collect()
}

/// The ranks table of a job: one row per replication and functional.
pub(crate) fn ranks_table(job: &JobHeader, run: &SbcRun) -> Result<DataFrame, SchemaError> {
    let rows: Vec<(i64, &str, i64, i64)> = run
        .replications
        .iter()
        .enumerate()
        .flat_map(|(r, c)| {
            c.ranks
                .iter()
                .map(move |(f, rank, draws)| (r as i64, f.as_str(), *rank as i64, *draws as i64))
        })
        .collect();
    rows_of(&ranks::TABLE, job, rows.len())
        .set(ranks::REPLICATION, rows.iter().map(|r| r.0))
        .set(ranks::FUNCTIONAL, rows.iter().map(|r| r.1.to_string()))
        .set(ranks::RANK, rows.iter().map(|r| r.2))
        .set(ranks::DRAWS, rows.iter().map(|r| r.3))
        .finish()
}
