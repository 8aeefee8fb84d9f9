//! The columns and tables every family shares: the job id, chains and iterations of the long
//! tables, the jobs-table columns every job row starts with (id, replicate, parameters, status,
//! error, warnings, wall time) and the common MCMC metrics, and the autocorrelation table.

use super::{Col, ColumnGroup, Entry, JobStatus, Kind, Presence, Table};

/// Columns several tables share.
pub const JOB_ID: Col<String> = Col::required(
    "job_id",
    "the job: 12 hex digits of BLAKE3 over the study seed and the job's parameters",
);
pub const CHAIN: Col<i64> = Col::required("chain", "chain index, 0 upwards");
pub const ITERATION: Col<i64> = Col::required(
    "iteration",
    "traces: the state's iteration, 1-based, burn-in included; convergence: kept iterations; partition traces: iterations done, 0 = the start",
);
pub const ACCEPTANCE_RATE: Col<f64> = Col::optional(
    "acceptance_rate",
    "share of accepted proposals over all iterations, burn-in included (jobs: over all chains)",
);

pub const STEP_SIZE: Col<f64> = Col::optional(
    "step_size",
    "the step size after adaptation, for kinds with one (jobs: mean over chains)",
);

/// A name shared by the long tables of the study families: which method produced the row.
pub const METHOD: Col<String> = Col::required(
    "method",
    "how the row was computed: `power`, `eigen`, `simulation`, `surfer` (markov-chain, pagerank)",
);

/// `jobs.parquet`: one row per job. Every family's jobs table starts from these columns; the
/// table here is what a job that failed writes.
pub mod jobs {
    use super::{Col, ColumnGroup, Entry, JobStatus, Kind, Presence, Table};

    pub const REPLICATE: Col<i64> =
        Col::required("replicate", "replicate of the sweep point, 0 upwards");
    pub const PARAMETERS: ColumnGroup = ColumnGroup {
        prefixes: &["model_", "data_", "sampler_", "output_"],
        pattern: "<section>_<key>",
        kind: Kind::Parameter,
        nullable: true,
        presence: Presence::Always,
        doc: "every study key as run (`model_grid`, `sampler_beta`, ...; see the keys above); null where it does not apply",
    };
    pub const STATUS: Col<JobStatus> = Col::required("status", "`ok`, or `failed` (see `error`)");
    pub const ERROR: Col<String> = Col::nullable("error", "why the job failed; null when ok");
    /// Between two warnings of one `warnings` cell.
    pub const WARNING_SEPARATOR: &str = "; ";
    pub const WARNINGS: Col<String> = Col::required(
        "warnings",
        "why a finished job's answer may not be trusted (R-hat, ESS, acceptance, drift), `; `-separated; empty when none",
    );
    pub const WALL_SECONDS: Col<f64> = Col::required(
        "wall_seconds",
        "wall time of the whole job, writing excluded",
    );
    pub const SAMPLE_SECONDS: Col<f64> =
        Col::optional("sample_seconds", "time spent in the chains");
    pub const ITERATIONS_PER_SECOND: Col<f64> = Col::optional(
        "iterations_per_second",
        "chain iterations (all chains) per second of sampling",
    );
    pub const ESS_BULK: Col<f64> = Col::optional(
        "ess_bulk",
        "bulk effective sample size of the log-likelihood across chains",
    );
    pub const ESS_BULK_PER_SECOND: Col<f64> =
        Col::optional("ess_bulk_per_second", "`ess_bulk` per second of sampling");
    pub const ESS_PER_ITERATION: Col<f64> = Col::optional(
        "ess_per_iteration",
        "bulk ESS per kept iteration over all chains: gaussian of x1, bayes-net the smallest over latent nodes' indicators",
    );
    pub const AUTOCORRELATION_LAG1: Col<f64> = Col::optional(
        "autocorrelation_lag1",
        "lag-1 autocorrelation of the traced quantity, averaged over chains (gaussian: x1)",
    );

    pub const TABLE: Table = Table {
        name: "jobs",
        row: "job",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(REPLICATE.spec),
            Entry::Group(PARAMETERS),
            Entry::Column(STATUS.spec),
            Entry::Column(ERROR.spec),
            Entry::Column(WARNINGS.spec),
            Entry::Column(WALL_SECONDS.spec),
        ],
    };
}

/// `autocorrelation.parquet`: one row per job and lag.
pub mod autocorrelation {
    use super::{Col, Entry, Table};

    pub const LAG: Col<i64> = Col::required("lag", "lag in kept (thinned) states");
    pub const AUTOCORRELATION: Col<f64> = Col::nullable(
        "autocorrelation",
        "autocorrelation of the log-likelihood (latent field, lda) or of x1 (gaussian family), averaged over chains",
    );

    pub const TABLE: Table = Table {
        name: "autocorrelation",
        row: "job and lag",
        entries: &[
            Entry::Column(super::JOB_ID.spec),
            Entry::Column(LAG.spec),
            Entry::Column(AUTOCORRELATION.spec),
        ],
    };
}

/// The `autocorrelation` table of a job: one row per lag of `acf` (every family with a traced
/// quantity writes it).
pub fn autocorrelation_rows(
    job: &crate::job::JobHeader,
    acf: &[f64],
) -> Result<polars::prelude::DataFrame, super::SchemaError> {
    super::rows_of(&autocorrelation::TABLE, job, acf.len())
        .set(autocorrelation::LAG, (0..acf.len()).map(|k| k as i64))
        .set(autocorrelation::AUTOCORRELATION, acf.iter().copied())
        .finish()
}
