//! The result tables of the partition family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const F_START: Col<f64> = Col::optional(
        "f_start",
        "F(Z) of the start partition: the administrative pieces (partition chains)",
    );
    pub const F_FINAL: Col<f64> = Col::optional(
        "f_final",
        "F(Z) of the final partition (partition family; baselines: of the partition)",
    );
    pub const F_BEST: Col<f64> = Col::optional(
        "f_best",
        "smallest F(Z) the chain visited (partition family; baselines: as `f_final`)",
    );
    pub const REGION_MAE_FINAL: Col<f64> = Col::optional(
        "region_mae_final",
        "mean over regions of |Y_j - f(X_j)|, task model fitted on all regions, final partition (partition family)",
    );
    pub const REGION_MAE_BEST: Col<f64> = Col::optional(
        "region_mae_best",
        "the same for the partition of smallest F (partition family)",
    );
    pub const CV_REGION_MAE_FINAL: Col<f64> = Col::optional(
        "cv_region_mae_final",
        "region MAE cross-validated over regions (each fold predicted by the model fitted on the others), final partition (partition family)",
    );
    pub const CV_REGION_MAE_BEST: Col<f64> = Col::optional(
        "cv_region_mae_best",
        "the same for the partition of smallest F (partition family)",
    );
    pub const REGIONS: Col<i64> =
        Col::optional("regions", "regions of the partitions (partition family)");
    pub const DISCONNECTED_REGIONS: Col<i64> = Col::optional(
        "disconnected_regions",
        "regions of the best partition in more than one connected piece: 0 for chains; k-means and spectral clusters may have some (partition family)",
    );
    pub const MOVES_PROPOSED: Col<i64> =
        Col::optional("moves_proposed", "flips proposed (partition chains)");
    pub const MOVES_INVALID: Col<i64> = Col::optional(
        "moves_invalid",
        "proposed flips rejected because they would empty or split their region (partition chains)",
    );
    pub const MOVES_ACCEPTED: Col<i64> =
        Col::optional("moves_accepted", "flips accepted (partition chains)");
    pub const REVERSIBLE: Col<bool> = Col::optional(
        "reversible",
        "whether the chain targets exp(-F/T) exactly (flip, softmax-flip); learned-flip is a search heuristic (partition chains)",
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
            Entry::Column(F_START.spec),
            Entry::Column(F_FINAL.spec),
            Entry::Column(F_BEST.spec),
            Entry::Column(REGION_MAE_FINAL.spec),
            Entry::Column(REGION_MAE_BEST.spec),
            Entry::Column(CV_REGION_MAE_FINAL.spec),
            Entry::Column(CV_REGION_MAE_BEST.spec),
            Entry::Column(REGIONS.spec),
            Entry::Column(DISCONNECTED_REGIONS.spec),
            Entry::Column(MOVES_PROPOSED.spec),
            Entry::Column(MOVES_INVALID.spec),
            Entry::Column(MOVES_ACCEPTED.spec),
            Entry::Column(REVERSIBLE.spec),
        ],
    };
}

/// `partitions.parquet`: one row per partition job, partition and area.
pub mod partitions {
    use crate::table::{Col, Entry, Table, shared};

    pub const WHICH: Col<String> = Col::required(
        "which",
        "`final`, `best` (smallest F visited) or `start` (the administrative pieces a chain started from); baselines: `final` and `best`, the same",
    );
    pub const AREA: Col<String> = Col::required("area", "the area's id in the areas CSV");
    pub const AREA_INDEX: Col<i64> =
        Col::required("area_index", "the area's row in the areas CSV, 0 upwards");
    pub const REGION: Col<i64> = Col::required("region", "the area's region, 0 upwards");
    pub const X: Col<f64> = Col::nullable(
        "x",
        "the area's x coordinate (`data.coordinates`), for maps",
    );
    pub const Y: Col<f64> = Col::nullable("y", "the area's y coordinate");

    pub const TABLE: Table = Table {
        name: "partitions",
        row: "partition job, partition and area",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(WHICH.spec),
            Entry::Column(AREA.spec),
            Entry::Column(AREA_INDEX.spec),
            Entry::Column(REGION.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
        ],
    };
}

/// `partition_traces.parquet`: one row per partition chain and recorded iteration.
pub mod partition_traces {
    use crate::table::{Col, Entry, Table, shared};

    pub const F: Col<f64> = Col::required("f", "F(Z) of the chain's state");
    pub const TEMPERATURE: Col<f64> =
        Col::required("temperature", "the temperature T at that iteration");

    pub const TABLE: Table = Table {
        name: "partition_traces",
        row: "partition chain and recorded iteration (every `sampler.thin`)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::ITERATION.spec),
            Entry::Column(F.spec),
            Entry::Column(TEMPERATURE.spec),
        ],
    };
}
