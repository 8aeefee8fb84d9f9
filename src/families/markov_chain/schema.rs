//! The result tables of the markov-chain family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        LAMBDA2: f64 = optional("second_eigenvalue_modulus", "|lambda_2|: the second-largest eigenvalue modulus of the transition matrix (markov-chain, pagerank)"),
        POWER_ITERATIONS: i64 = optional("power_iterations", "power-method iterations until successive iterates differ by less than the tolerance in total variation (markov-chain, pagerank)"),
        POWER_EIGEN_MAX_DIFF: f64 = optional("power_eigen_max_diff", "largest difference between the power method's and the eigen solve's stationary probabilities (markov-chain, pagerank)"),
        SIMULATION_TV: f64 = optional("simulation_tv", "total-variation distance of the simulated visit frequencies (all steps) from the eigen solve (markov-chain; pagerank: the random surfer)"),
    }
    items {
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
    }
}

crate::declare_table! {
    /// `stationary.parquet`: one row per job, method and state (markov-chain).
    pub(crate) mod stationary = "stationary", one row per "job, method and state (markov-chain)" {
        use shared::JOB_ID,
        use shared::METHOD,
        STATE: i64 = required("state", "state of the chain, 0 upwards").index(),
        PROBABILITY: f64 = required("probability", "stationary probability of the state by the method"),
    }
}

crate::declare_table! {
    /// `distances.parquet`: one row per job, method and step (markov-chain, pagerank).
    pub(crate) mod distances = "distances", one row per "job, method and step (markov-chain, pagerank)" {
        use shared::JOB_ID,
        use shared::METHOD,
        STEP: i64 = required("step", "power: the iteration t; simulation, surfer: the run length in steps").index(),
        DISTANCE: f64 = required("distance", "total-variation distance to the eigen solve's stationary distribution"),
        REFERENCE: f64 = nullable("reference", "what theory predicts: power, |lambda_2|^t times the first error; simulation, the first distance times sqrt(first step / step)"),
    }
}
