//! The result tables of the pagerank family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        use borrowed::LAMBDA2,
        use borrowed::POWER_ITERATIONS,
        use borrowed::POWER_EIGEN_MAX_DIFF,
        use borrowed::SIMULATION_TV,
        NODES: i64 = optional("nodes", "nodes (pages, intersections) of the graph (pagerank)"),
        EDGES: i64 = optional("edges", "directed edges of the graph (pagerank)"),
        DANGLING_NODES: i64 = optional("dangling_nodes", "nodes without out-links; their rank is spread over every node (pagerank)"),
    }
    items {
        use crate::families::markov_chain::schema::jobs as borrowed;
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
    }
}

crate::declare_table! {
    /// `node_ranks.parquet`: one row per job, method and node (pagerank). Named apart from the
    /// SBC `ranks.parquet`, whose rows are ranks of a truth among draws.
    pub(crate) mod node_ranks = "node_ranks", one row per "job, method and node (pagerank)" {
        use shared::JOB_ID,
        use shared::METHOD,
        NODE: String = required("node", "the node as written in the input").index(),
        RANK: f64 = required("rank", "PageRank: the node's stationary probability by the method"),
        POSITION: i64 = required("position", "place in the ranking by the method, 1 = highest"),
        X: f64 = nullable("x", "the node's x coordinate (street networks)"),
        Y: f64 = nullable("y", "the node's y coordinate (street networks)"),
    }
}
