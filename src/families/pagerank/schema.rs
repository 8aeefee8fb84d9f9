//! The result tables of the pagerank family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    use crate::families::markov_chain::schema::jobs as borrowed;
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const NODES: Col<i64> = Col::optional(
        "nodes",
        "nodes (pages, intersections) of the graph (pagerank)",
    );
    pub const EDGES: Col<i64> = Col::optional("edges", "directed edges of the graph (pagerank)");
    pub const DANGLING_NODES: Col<i64> = Col::optional(
        "dangling_nodes",
        "nodes without out-links; their rank is spread over every node (pagerank)",
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
            Entry::Column(borrowed::LAMBDA2.spec),
            Entry::Column(borrowed::POWER_ITERATIONS.spec),
            Entry::Column(borrowed::POWER_EIGEN_MAX_DIFF.spec),
            Entry::Column(borrowed::SIMULATION_TV.spec),
            Entry::Column(NODES.spec),
            Entry::Column(EDGES.spec),
            Entry::Column(DANGLING_NODES.spec),
        ],
    };
}

/// `node_ranks.parquet`: one row per job, method and node (pagerank). Named apart from the
/// SBC `ranks.parquet`, whose rows are ranks of a truth among draws.
pub mod node_ranks {
    use crate::table::{Col, Entry, Table, shared};

    pub const NODE: Col<String> = Col::required("node", "the node as written in the input");
    pub const RANK: Col<f64> = Col::required(
        "rank",
        "PageRank: the node's stationary probability by the method",
    );
    pub const POSITION: Col<i64> = Col::required(
        "position",
        "place in the ranking by the method, 1 = highest",
    );
    pub const X: Col<f64> = Col::nullable("x", "the node's x coordinate (street networks)");
    pub const Y: Col<f64> = Col::nullable("y", "the node's y coordinate (street networks)");

    pub const TABLE: Table = Table {
        name: "node_ranks",
        row: "job, method and node (pagerank)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::METHOD.spec),
            Entry::Column(NODE.spec),
            Entry::Column(RANK.spec),
            Entry::Column(POSITION.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
        ],
    };
}
