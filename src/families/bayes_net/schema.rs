//! The result tables of the bayes-net family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const MARGINAL_MAX_Z: Col<f64> = Col::optional(
        "marginal_max_z",
        "largest |Gibbs - exact| / MCSE over latent nodes and states (bayes-net)",
    );

    pub const TABLE: Table = Table {
        name: "jobs",
        row: "job",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::jobs::REPLICATE.spec),
            Entry::Group(shared::jobs::PARAMETERS),
            Entry::Column(shared::jobs::STATUS.spec),
            Entry::Column(shared::jobs::ERROR.spec),
            Entry::Column(shared::jobs::WARNINGS.spec),
            Entry::Column(shared::ACCEPTANCE_RATE.spec),
            Entry::Column(shared::jobs::WALL_SECONDS.spec),
            Entry::Column(shared::jobs::SAMPLE_SECONDS.spec),
            Entry::Column(shared::jobs::ITERATIONS_PER_SECOND.spec),
            Entry::Column(shared::STEP_SIZE.spec),
            Entry::Column(shared::jobs::ESS_BULK.spec),
            Entry::Column(shared::jobs::ESS_BULK_PER_SECOND.spec),
            Entry::Column(shared::jobs::ESS_PER_ITERATION.spec),
            Entry::Column(shared::jobs::AUTOCORRELATION_LAG1.spec),
            Entry::Column(MARGINAL_MAX_Z.spec),
        ],
    };
}

/// `marginals.parquet`: one row per job, latent node and state (bayes-net).
pub mod marginals {
    use crate::table::{Col, Entry, Table, shared};

    pub const NODE: Col<String> = Col::required("node", "the latent node");
    pub const STATE: Col<String> = Col::required("state", "the node's state");
    pub const GIBBS: Col<f64> = Col::required(
        "gibbs",
        "posterior probability of the state by Gibbs sampling",
    );
    pub const EXACT: Col<f64> =
        Col::required("exact", "posterior probability of the state by enumeration");
    pub const MCSE: Col<f64> = Col::nullable(
        "mcse",
        "Monte Carlo standard error of `gibbs` (from the indicator's ESS over chains)",
    );

    pub const TABLE: Table = Table {
        name: "marginals",
        row: "job, latent node and state (bayes-net)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(NODE.spec),
            Entry::Column(STATE.spec),
            Entry::Column(GIBBS.spec),
            Entry::Column(EXACT.spec),
            Entry::Column(MCSE.spec),
        ],
    };
}
