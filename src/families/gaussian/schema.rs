//! The result tables of the gaussian family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const EXACT_ESS_PER_ITERATION: Col<f64> = Col::optional(
        "exact_ess_per_iteration",
        "the exact ESS per draw where a closed form exists: systematic-scan Gibbs on a bivariate normal, (1 - rho^2) / (1 + rho^2)",
    );
    pub const MOMENT_MAX_Z: Col<f64> = Col::optional(
        "moment_max_z",
        "largest |estimate - exact| / MCSE over the target's means and covariances (gaussian targets small enough that every coordinate's trace is kept)",
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
            Entry::Column(EXACT_ESS_PER_ITERATION.spec),
            Entry::Column(shared::jobs::AUTOCORRELATION_LAG1.spec),
            Entry::Column(MOMENT_MAX_Z.spec),
        ],
    };
}
