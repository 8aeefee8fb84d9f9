//! The columns and tables every family shares: the job id, chains and iterations of the long
//! tables, the jobs-table columns every job row starts with (id, replicate, parameters, status,
//! error, warnings, wall time) and the common MCMC metrics, and the autocorrelation table.

use super::{Col, ColumnGroup, JobStatus, Kind, Presence};

/// Columns several tables share.
pub const JOB_ID: Col<String> = Col::required(
    "job_id",
    "the job: 12 hex digits of BLAKE3 over the study seed and the job's parameters",
);
pub(crate) const CHAIN: Col<i64> = Col::required("chain", "chain index, 0 upwards").index();
pub(crate) const ITERATION: Col<i64> = Col::required(
    "iteration",
    "traces: the state's iteration, 1-based, burn-in included; convergence: kept iterations; partition traces: iterations done, 0 = the start",
)
.index();
pub const ACCEPTANCE_RATE: Col<f64> = Col::optional(
    "acceptance_rate",
    "share of the kept iterations (after burn-in) whose proposal was accepted: the chain moved; jobs: over all chains; the same in every family",
);

pub(crate) const STEP_SIZE: Col<f64> = Col::optional(
    "step_size",
    "the step size after adaptation, for kinds with one (jobs: mean over chains)",
);

/// A name shared by the long tables of the study families: which method produced the row.
pub(crate) const METHOD: Col<String> = Col::required(
    "method",
    "how the row was computed: `power`, `eigen`, `simulation`, `surfer` (markov-chain, pagerank)",
)
.index();

crate::declare_table! {
    /// `jobs.parquet`: one row per job. Every family's jobs table starts from these columns (and
    /// its own follow); a job that failed writes these alone.
    pub mod jobs = "jobs", one row per "job" {
        use JOB_ID,
        REPLICATE: i64 = required("replicate", "replicate of the sweep point, 0 upwards"),
        group PARAMETERS = ColumnGroup {
            prefixes: &["model_", "data_", "sampler_", "output_"],
            pattern: "<section>_<key>",
            kind: Kind::Parameter,
            nullable: true,
            presence: Presence::Always,
            doc: "every study key as run (`model_grid`, `sampler_beta`, ...; see the keys above); null where it does not apply",
        },
        STATUS: JobStatus = required("status", "`ok`, or `failed` (see `error`)"),
        ERROR: String = nullable("error", "why the job failed; null when ok"),
        WARNINGS: String = required("warnings", "why a finished job's answer may not be trusted (R-hat, ESS, acceptance, drift, a length scale in the wrong units), `; `-separated; empty when none"),
        use ACCEPTANCE_RATE,
        WALL_SECONDS: f64 = required("wall_seconds", "wall time of the whole job, writing excluded").timing(),
        SAMPLE_SECONDS: f64 = optional("sample_seconds", "wall time spent in the chains").timing(),
        CPU_SECONDS: f64 = optional("cpu_seconds", "CPU time of the job's work (latent field: setup and sampling, every thread its chains ran on; other families: sampling): the clock every `*_per_second` rate divides by, as the benchmarks do").timing(),
        ITERATIONS_PER_SECOND: f64 = optional("iterations_per_second", "chain iterations (all chains, burn-in included) per CPU second (`cpu_seconds`)").timing(),
        use STEP_SIZE,
        ESS_BULK: f64 = optional("ess_bulk", "bulk effective sample size of the log-likelihood across chains, from every kept state (`sampler.thin` thins only the traces)"),
        ESS_BULK_PER_SECOND: f64 = optional("ess_bulk_per_second", "`ess_bulk` per CPU second (`cpu_seconds`)").timing(),
        ESS_PER_ITERATION: f64 = optional("ess_per_iteration", "bulk ESS per kept iteration over all chains: gaussian of x1, bayes-net the smallest over latent nodes' indicators"),
        AUTOCORRELATION_LAG1: f64 = optional("autocorrelation_lag1", "lag-1 autocorrelation of the traced quantity, averaged over chains (gaussian: x1)"),
    }
    items {
        /// Between two warnings of one `warnings` cell.
        pub(crate) const WARNING_SEPARATOR: &str = "; ";
    }
}

crate::declare_table! {
    /// `autocorrelation.parquet`: one row per job and lag.
    pub(crate) mod autocorrelation = "autocorrelation", one row per "job and lag" {
        use JOB_ID,
        LAG: i64 = required("lag", "lag in kept (thinned) states").index(),
        AUTOCORRELATION: f64 = nullable("autocorrelation", "autocorrelation of the log-likelihood (latent field, lda) or of x1 (gaussian family), averaged over chains"),
    }
}

/// The `autocorrelation` table of a job: one row per lag of `acf` (every family with a traced
/// quantity writes it).
pub(crate) fn autocorrelation_rows(
    job: &crate::job::JobHeader,
    acf: &[f64],
) -> Result<polars::prelude::DataFrame, super::SchemaError> {
    super::rows_of(&autocorrelation::TABLE, job, acf.len())
        .set(autocorrelation::LAG, (0..acf.len()).map(|k| k as i64))
        .set(autocorrelation::AUTOCORRELATION, acf.iter().copied())
        .finish()
}
