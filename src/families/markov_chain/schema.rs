//! The result tables of the markov-chain family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const LAMBDA2: Col<f64> = Col::optional(
        "second_eigenvalue_modulus",
        "|lambda_2|: the second-largest eigenvalue modulus of the transition matrix (markov-chain, pagerank)",
    );
    pub const POWER_ITERATIONS: Col<i64> = Col::optional(
        "power_iterations",
        "power-method iterations until successive iterates differ by less than the tolerance in total variation (markov-chain, pagerank)",
    );
    pub const POWER_EIGEN_MAX_DIFF: Col<f64> = Col::optional(
        "power_eigen_max_diff",
        "largest difference between the power method's and the eigen solve's stationary probabilities (markov-chain, pagerank)",
    );
    pub const SIMULATION_TV: Col<f64> = Col::optional(
        "simulation_tv",
        "total-variation distance of the simulated visit frequencies (all steps) from the eigen solve (markov-chain; pagerank: the random surfer)",
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
            Entry::Column(LAMBDA2.spec),
            Entry::Column(POWER_ITERATIONS.spec),
            Entry::Column(POWER_EIGEN_MAX_DIFF.spec),
            Entry::Column(SIMULATION_TV.spec),
        ],
    };
}

/// `stationary.parquet`: one row per job, method and state (markov-chain).
pub mod stationary {
    use crate::table::{Col, Entry, Table, shared};

    pub const STATE: Col<i64> = Col::required("state", "state of the chain, 0 upwards");
    pub const PROBABILITY: Col<f64> = Col::required(
        "probability",
        "stationary probability of the state by the method",
    );

    pub const TABLE: Table = Table {
        name: "stationary",
        row: "job, method and state (markov-chain)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::METHOD.spec),
            Entry::Column(STATE.spec),
            Entry::Column(PROBABILITY.spec),
        ],
    };
}

/// `distances.parquet`: one row per job, method and step (markov-chain, pagerank).
pub mod distances {
    use crate::table::{Col, Entry, Table, shared};

    pub const STEP: Col<i64> = Col::required(
        "step",
        "power: the iteration t; simulation, surfer: the run length in steps",
    );
    pub const DISTANCE: Col<f64> = Col::required(
        "distance",
        "total-variation distance to the eigen solve's stationary distribution",
    );
    pub const REFERENCE: Col<f64> = Col::nullable(
        "reference",
        "what theory predicts: power, |lambda_2|^t times the first error; simulation, the first distance times sqrt(first step / step)",
    );

    pub const TABLE: Table = Table {
        name: "distances",
        row: "job, method and step (markov-chain, pagerank)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::METHOD.spec),
            Entry::Column(STEP.spec),
            Entry::Column(DISTANCE.spec),
            Entry::Column(REFERENCE.spec),
        ],
    };
}
