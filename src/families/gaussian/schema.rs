//! The result tables of the gaussian family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        EXACT_ESS_PER_ITERATION: f64 = optional("exact_ess_per_iteration", "the exact ESS per draw where a closed form exists: systematic-scan Gibbs on a bivariate normal, (1 - rho^2) / (1 + rho^2)"),
        MOMENT_MAX_Z: f64 = optional("moment_max_z", "largest |estimate - exact| / MCSE over the target's means and covariances (gaussian targets small enough that every coordinate's trace is kept)"),
    }
    items {
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
    }
}
