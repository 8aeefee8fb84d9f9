//! The result tables of the bayes-net family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        MARGINAL_MAX_Z: f64 = optional("marginal_max_z", "largest |Gibbs - exact| / MCSE over latent nodes and states (bayes-net)"),
    }
    items {
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
    }
}

crate::declare_table! {
    /// `marginals.parquet`: one row per job, latent node and state (bayes-net).
    pub mod marginals = "marginals", one row per "job, latent node and state (bayes-net)" {
        use shared::JOB_ID,
        NODE: String = required("node", "the latent node").index(),
        STATE: String = required("state", "the node's state").index(),
        GIBBS: f64 = required("gibbs", "posterior probability of the state by Gibbs sampling").with_mcse(MCSE),
        EXACT: f64 = required("exact", "posterior probability of the state by enumeration"),
        MCSE: f64 = nullable("mcse", "Monte Carlo standard error of `gibbs` (from the indicator's ESS over chains)"),
    }
}
