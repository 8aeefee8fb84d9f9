//! The result tables of the partition family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        F_START: f64 = optional("f_start", "F(Z) of the start partition: the administrative pieces (partition chains)"),
        F_FINAL: f64 = optional("f_final", "F(Z) of the final partition (partition family; baselines: of the partition)"),
        F_BEST: f64 = optional("f_best", "smallest F(Z) the chain visited (partition family; baselines: as `f_final`)"),
        REGION_MAE_FINAL: f64 = optional("region_mae_final", "mean over regions of |Y_j - f(X_j)|, task model fitted on all regions, final partition (partition family)"),
        REGION_MAE_BEST: f64 = optional("region_mae_best", "the same for the partition of smallest F (partition family)"),
        CV_REGION_MAE_FINAL: f64 = optional("cv_region_mae_final", "region MAE cross-validated over regions (each fold predicted by the model fitted on the others), final partition (partition family)"),
        CV_REGION_MAE_BEST: f64 = optional("cv_region_mae_best", "the same for the partition of smallest F (partition family)"),
        OOS_REGION_MAE_FINAL: f64 = optional("oos_region_mae_final", "out-of-sample MAE over areas: k folds of areas (`output.oos_folds`), the method run again with each fold's targets hidden, each held-out area predicted by the task model from its region; mean over the folds, final partitions; null when not asked for (partition family)"),
        OOS_REGION_MAE_BEST: f64 = optional("oos_region_mae_best", "the same for each fold run's partition of smallest F (partition family)"),
        OOS_CONSTANT_MAE: f64 = optional("oos_constant_mae", "the same folds' MAE of predicting every held-out area by the training areas' mean target: the score to beat (partition family)"),
        REGIONS: i64 = optional("regions", "regions of the partitions (partition family)"),
        DISCONNECTED_REGIONS: i64 = optional("disconnected_regions", "regions of the best partition in more than one connected piece: 0 for chains; k-means and spectral clusters may have some (partition family)"),
        MOVES_PROPOSED: i64 = optional("moves_proposed", "flips proposed (partition chains)"),
        MOVES_INVALID: i64 = optional("moves_invalid", "proposed flips rejected because they would empty or split their region (partition chains)"),
        MOVES_ACCEPTED: i64 = optional("moves_accepted", "flips accepted (partition chains)"),
        REVERSIBLE: bool = optional("reversible", "whether the chain targets exp(-F/T) exactly (flip, softmax-flip); learned-flip is a search heuristic (partition chains)"),
    }
    items {

    }
}

crate::declare_table! {
    /// `partitions.parquet`: one row per partition job, partition and area.
    pub(crate) mod partitions = "partitions", one row per "partition job, partition and area" {
        use shared::JOB_ID,
        WHICH: String = required("which", "`final`, `best` (smallest F visited) or `start` (the administrative pieces a chain started from); baselines: `final` and `best`, the same").index(),
        AREA: String = required("area", "the area's id in the areas CSV").index(),
        AREA_INDEX: i64 = required("area_index", "the area's row in the areas CSV, 0 upwards"),
        REGION: i64 = required("region", "the area's region, 0 upwards"),
        X: f64 = nullable("x", "the area's x coordinate (`data.coordinates`), for maps"),
        Y: f64 = nullable("y", "the area's y coordinate"),
    }
}

crate::declare_table! {
    /// `partition_traces.parquet`: one row per partition chain and recorded iteration.
    pub(crate) mod partition_traces = "partition_traces", one row per "partition chain and recorded iteration (every `sampler.thin`)" {
        use shared::JOB_ID,
        use shared::ITERATION,
        F: f64 = required("f", "F(Z) of the chain's state"),
        TEMPERATURE: f64 = required("temperature", "the temperature T at that iteration"),
    }
}
