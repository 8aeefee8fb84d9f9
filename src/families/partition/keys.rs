//! The keys of the partition family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use super::task::{ErrorKind, TargetAggregate, TaskModelKind};
use crate::study::keys::{
    Default, Keyed, MODEL_FAMILY, Rule, SAMPLER_ITERATIONS, SAMPLER_KIND, SAMPLER_THIN, ValueType,
};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    use SAMPLER_KIND,
    use SAMPLER_ITERATIONS,
    use SAMPLER_THIN,
    /// Regions m of every partition (the administrative start is its connected pieces, merged smallest-first into a neighbour down to m).
    MODEL_REGIONS = model.regions {
        value: ValueType::Integer,
        rule: Rule::IntRange(2, i64::MAX),
        default: Default::Derived("the administrative pieces' count"),
    },
    /// The regression fitted on region aggregates: [1, mean features] -> target.
    MODEL_TASK_MODEL = model.task_model {
        value: ValueType::Choice(TaskModelKind::NAMES),
        default: Default::Text("least-squares"),
    },
    /// Ridge penalty on the standardised feature coefficients (the intercept is not penalised). (task_model = "ridge" only)
    MODEL_RIDGE = model.ridge { rule: Rule::Positive, default: Default::Float(1.0) },
    /// A region's target: the mean or the sum of its areas' targets.
    MODEL_AGGREGATE = model.aggregate {
        value: ValueType::Choice(TargetAggregate::NAMES),
        default: Default::Text("mean"),
    },
    /// The per-region error in F: |Y_j - f(X_j)| or its square.
    MODEL_ERROR = model.error {
        value: ValueType::Choice(ErrorKind::NAMES),
        default: Default::Text("absolute"),
    },
    /// Size bound of the penalty G: areas a region should hold at least.
    MODEL_MIN_REGION_SIZE = model.min_region_size {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, i64::MAX),
        default: Default::Int(1),
    },
    /// Size bound of the penalty G: areas a region should hold at most (0: no bound).
    MODEL_MAX_REGION_SIZE = model.max_region_size {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, i64::MAX),
        default: Default::Int(0),
    },
    /// G: added to F per area a region lies outside [min_region_size, max_region_size] (>= 0).
    MODEL_SIZE_BOUND_WEIGHT = model.size_bound_weight { rule: Rule::Finite, default: Default::Float(1.0) },
    /// G: weight w of w * (n_j - n / m)^2 per region, m times the variance of the region sizes (>= 0).
    MODEL_SIZE_VARIANCE_WEIGHT = model.size_variance_weight { rule: Rule::Finite, default: Default::Float(0.0) },
    /// T of the Boltzmann target exp(-F / T) at the first iteration.
    MODEL_TEMPERATURE = model.temperature { rule: Rule::Positive, default: Default::Float(1.0) },
    /// T at the last iteration; between the two the schedule is geometric (annealing when lower).
    MODEL_FINAL_TEMPERATURE = model.final_temperature {
        rule: Rule::Positive,
        default: Default::Derived("model.temperature (a fixed temperature)"),
    },
    /// Folds of the region MAE cross-validated over regions.
    MODEL_CV_FOLDS = model.cv_folds {
        value: ValueType::Integer,
        rule: Rule::IntRange(2, 1000),
        default: Default::Int(5),
    },
    /// The areas CSV (one row per area), relative to the study file's folder.
    DATA_AREAS = data.areas { value: ValueType::Text, rule: Rule::NonEmpty },
    /// The edge-list CSV: its first two columns are ids of neighbouring areas.
    DATA_ADJACENCY = data.adjacency { value: ValueType::Text, rule: Rule::NonEmpty },
    /// The areas' id column (the ids the edge list uses).
    DATA_ID = data.id { value: ValueType::Text, rule: Rule::NonEmpty, default: Default::Text("id") },
    /// The feature columns: an array `["crim", "zn", "rm"]` or one string separated by commas ("crim,zn,rm").
    DATA_FEATURES = data.features { value: ValueType::Words, rule: Rule::NonEmpty },
    /// The target column.
    DATA_TARGET = data.target { value: ValueType::Text, rule: Rule::NonEmpty },
    /// The x and y columns of each area's point: `["lon", "lat"]` or "lon,lat" ("" for none): for k-means and the maps.
    DATA_COORDINATES = data.coordinates { value: ValueType::Words, default: Default::Text("") },
    /// The administrative region column: the start of the chains and a baseline.
    DATA_ADMIN = data.admin { value: ValueType::Text, rule: Rule::NonEmpty },
    /// softmax-flip: tau; a region is picked with probability proportional to exp(error / (tau * mean error)).
    SAMPLER_SOFTMAX_TEMPERATURE = sampler.softmax_temperature { rule: Rule::Positive, default: Default::Float(1.0) },
    /// learned-flip: candidate flips scored by the Q-function per step.
    SAMPLER_CANDIDATES = sampler.candidates {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, 10_000),
        default: Default::Int(30),
    },
    /// learned-flip: step size of the Q-function's normalised least-mean-squares update.
    SAMPLER_LEARNING_RATE = sampler.learning_rate { rule: Rule::Positive, default: Default::Float(0.05) },
    /// learned-flip: share of steps that take a random valid candidate instead of the best.
    SAMPLER_EXPLORATION = sampler.exploration { rule: Rule::UnitInterval, default: Default::Float(0.1) },
    /// Folds k of the out-of-sample score over areas (0: none): each fold's targets are hidden, the method is run again on the others and the fold's areas are predicted from their regions (k + 1 runs per job; columns oos_*). Not part of the job's key: the other columns do not change.
    OUTPUT_OOS_FOLDS = output.oos_folds {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, 1000),
        default: Default::Int(0),
        keyed: Keyed::Never,
    },
}
