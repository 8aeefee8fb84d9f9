//! The result tables of the latent-field family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, ColumnGroup, Entry, Kind, Presence, Table, shared};

    pub const MAE: Col<f64> = Col::optional(
        "mae",
        "mean absolute error of the posterior mean against the truth (simulated data)",
    );
    pub const SETUP_SECONDS: Col<f64> =
        Col::optional("setup_seconds", "time to build the prior and the data");
    pub const EXACT_SECONDS: Col<f64> = Col::optional(
        "exact_seconds",
        "time to compute the exact posterior (gaussian)",
    );
    pub const CPU_SECONDS: Col<f64> = Col::optional(
        "cpu_seconds",
        "CPU time of setup and sampling (all threads of the job)",
    );
    pub const LOGLIK_EVALS_PER_ITERATION: Col<f64> = Col::optional(
        "loglik_evals_per_iteration",
        "log-likelihood evaluations per iteration, over all chains",
    );
    pub const GRADIENT_EVALS_PER_ITERATION: Col<f64> = Col::optional(
        "gradient_evals_per_iteration",
        "gradient evaluations per iteration, over all chains",
    );
    pub const JITTER: Col<f64> = Col::optional(
        "jitter",
        "diagonal jitter added to the axis kernel to factor it (0 when none was needed)",
    );
    pub const LATENT_DIM: Col<i64> = Col::optional(
        "latent_dim",
        "whitened coordinates of a state: the grid's cells (Kronecker prior) or the padded torus's points (circulant embedding)",
    );
    pub const TORUS_X: Col<i64> = Col::optional(
        "torus_x",
        "points of the circulant embedding's padded torus along x; null for a Kronecker prior",
    );
    pub const TORUS_Y: Col<i64> = Col::optional(
        "torus_y",
        "points of the circulant embedding's padded torus along y; null for a Kronecker prior",
    );
    pub const CLIPPED_EIGENVALUE: Col<f64> = Col::optional(
        "clipped_eigenvalue",
        "the most negative eigenvalue of the circulant embedding, clipped to 0 (0 when none was negative); null for a Kronecker prior",
    );
    pub const MODEL_MEAN_VALUE: Col<f64> = Col::optional(
        "model_mean_value",
        "the field's constant mean used: `model.mean` resolved against the data",
    );
    pub const OBSERVED_CELLS: Col<i64> =
        Col::optional("observed_cells", "cells whose observation the model sees");
    pub const EXACT_RMSE: Col<f64> = Col::optional(
        "exact_rmse",
        "RMS over cells of posterior mean minus exact posterior mean (gaussian)",
    );
    pub const PREDICTION_ERROR: Col<f64> = Col::optional(
        "prediction_error",
        "share of cells whose predicted label differs from the truth's sign (probit)",
    );
    pub const COUNT_MAE: Col<f64> = Col::optional(
        "count_mae",
        "mean absolute error of the expected counts: against exp(truth + offset) on every cell (simulated), else against the held-out counts (poisson)",
    );
    pub const BASELINE_COUNT_MAE: Col<f64> = Col::optional(
        "baseline_count_mae",
        "the same for a constant rate equal to the mean observed count (poisson)",
    );
    pub const HELDOUT_LPD: Col<f64> = Col::optional(
        "heldout_lpd",
        "mean over held-out cells of the log posterior predictive density log p(y_i | data) (csv data, probit and poisson; chains: over the stored draws; approximations: Gauss-Hermite over each cell's gaussian marginal)",
    );
    pub const ESS_TAIL: Col<f64> = Col::optional(
        "ess_tail",
        "tail effective sample size of the log-likelihood across chains",
    );
    pub const RHAT: Col<f64> = Col::optional(
        "rhat",
        "rank-normalised split R-hat of the log-likelihood (two or more chains)",
    );
    pub const CELL_ESS_MIN: Col<f64> =
        Col::optional("cell_ess_min", "smallest bulk ESS over the probe cells");
    pub const CELL_ESS_MEDIAN: Col<f64> =
        Col::optional("cell_ess_median", "median bulk ESS over the probe cells");
    pub const MCSE_MEAN_MAX: Col<f64> = Col::optional(
        "mcse_mean_max",
        "largest Monte Carlo standard error of a cell's posterior mean",
    );
    pub const CELL_ESS_BULK_MIN: Col<f64> =
        Col::optional("cell_ess_bulk_min", "smallest bulk ESS over every cell");
    pub const CELL_ESS_TAIL_MIN: Col<f64> =
        Col::optional("cell_ess_tail_min", "smallest tail ESS over every cell");
    pub const CELL_RHAT_MAX: Col<f64> = Col::optional(
        "cell_rhat_max",
        "largest R-hat over every cell (two or more chains)",
    );
    pub const CELL_ESS_BULK_MIN_PER_SECOND: Col<f64> = Col::optional(
        "cell_ess_bulk_min_per_second",
        "`cell_ess_bulk_min` per CPU second (`cpu_seconds`)",
    );
    pub const CELL_DRAWS_PER_CHAIN: Col<i64> = Col::optional(
        "cell_draws_per_chain",
        "stored draws per chain the cell diagnostics were computed from",
    );
    pub const CELL_DRAWS_THIN: Col<i64> = Col::optional(
        "cell_draws_thin",
        "every how many kept iterations a stored draw was taken",
    );
    pub const RANK: Col<i64> = Col::optional(
        "rank",
        "eigenpairs of the misfit Hessian a low-rank Laplace approximation kept (gpcn, \
         laplace_hmc; laplace when its sds are low-rank)",
    );
    pub const NEWTON_ITERATIONS: Col<i64> = Col::optional(
        "newton_iterations",
        "Newton iterations of the Laplace fit (laplace, gpcn, laplace_hmc; inla: the fit at the \
         mode of the hyperparameters)",
    );
    pub const LAPLACE_FITS: Col<i64> = Col::optional(
        "laplace_fits",
        "Laplace fits an INLA job made in all: mode search, Hessian and grid (kind inla)",
    );
    pub const LOG_EVIDENCE: Col<f64> = Col::optional(
        "log_evidence",
        "log p(data | model): by Monte Carlo over prior draws (with `model.evidence_draws`), the \
         Laplace approximation's (kind laplace), or INLA's: log sum_k exp(log p~_k) + d log \
         delta_z - log det(H) / 2 over its grid (kind inla)",
    );
    pub const LOG_EVIDENCE_SE: Col<f64> =
        Col::optional("log_evidence_se", "standard error of `log_evidence`");
    pub const EVIDENCE_EFFECTIVE_DRAWS: Col<f64> = Col::optional(
        "evidence_effective_draws",
        "effective number of prior draws behind `log_evidence`",
    );
    pub const SBC_REPLICATIONS: Col<i64> =
        Col::optional("sbc_replications", "SBC replications run (SBC studies)");
    pub const SBC_DRAWS: Col<i64> = Col::optional(
        "sbc_draws",
        "L: posterior draws each truth is ranked among (SBC studies)",
    );
    pub const SBC_P_MIN: Col<f64> =
        Col::optional("sbc_p_min", "smallest `sbc_p_<functional>` (SBC studies)");
    pub const SBC_P: ColumnGroup = ColumnGroup {
        prefixes: &["sbc_p_"],
        pattern: "sbc_p_<functional>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "chi-square p-value that the functional's ranks are uniform (SBC studies)",
    };
    /// The statistics of every inferred hyperparameter, in column order: `hyper_<name>_<stat>`.
    pub const HYPER_STATISTICS: [&str; 6] = ["mean", "sd", "q05", "q95", "ess_bulk", "rhat"];
    pub const HYPER: ColumnGroup = ColumnGroup {
        prefixes: &["hyper_"],
        pattern: "hyper_<name>_<statistic>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "each inferred hyperparameter (`length_scale`, `variance`, `mean`) over the kept traced draws of all chains: posterior `mean`, `sd`, 5 % and 95 % quantiles `q05`, `q95`, bulk ESS `ess_bulk` and R-hat `rhat` (`hyper_length_scale_mean`, ...); for kind inla from the weighted grid (quantiles from its smoothed marginal, see docs/hyperparameters.md), ESS and R-hat null",
    };
    pub const HYPER_ACCEPTANCE_RATE: Col<f64> = Col::optional(
        "hyper_acceptance_rate",
        "share of kept hyperparameter updates that moved them, over all chains (sampler.hyper)",
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
            Entry::Column(MAE.spec),
            Entry::Column(shared::jobs::WALL_SECONDS.spec),
            Entry::Column(SETUP_SECONDS.spec),
            Entry::Column(shared::jobs::SAMPLE_SECONDS.spec),
            Entry::Column(EXACT_SECONDS.spec),
            Entry::Column(shared::jobs::ITERATIONS_PER_SECOND.spec),
            Entry::Column(CPU_SECONDS.spec),
            Entry::Column(shared::STEP_SIZE.spec),
            Entry::Column(LOGLIK_EVALS_PER_ITERATION.spec),
            Entry::Column(GRADIENT_EVALS_PER_ITERATION.spec),
            Entry::Column(JITTER.spec),
            Entry::Column(LATENT_DIM.spec),
            Entry::Column(TORUS_X.spec),
            Entry::Column(TORUS_Y.spec),
            Entry::Column(CLIPPED_EIGENVALUE.spec),
            Entry::Column(MODEL_MEAN_VALUE.spec),
            Entry::Column(OBSERVED_CELLS.spec),
            Entry::Column(EXACT_RMSE.spec),
            Entry::Column(PREDICTION_ERROR.spec),
            Entry::Column(COUNT_MAE.spec),
            Entry::Column(BASELINE_COUNT_MAE.spec),
            Entry::Column(HELDOUT_LPD.spec),
            Entry::Column(shared::jobs::ESS_BULK.spec),
            Entry::Column(ESS_TAIL.spec),
            Entry::Column(RHAT.spec),
            Entry::Column(shared::jobs::ESS_BULK_PER_SECOND.spec),
            Entry::Column(CELL_ESS_MIN.spec),
            Entry::Column(CELL_ESS_MEDIAN.spec),
            Entry::Column(MCSE_MEAN_MAX.spec),
            Entry::Column(CELL_ESS_BULK_MIN.spec),
            Entry::Column(CELL_ESS_TAIL_MIN.spec),
            Entry::Column(CELL_RHAT_MAX.spec),
            Entry::Column(CELL_ESS_BULK_MIN_PER_SECOND.spec),
            Entry::Column(CELL_DRAWS_PER_CHAIN.spec),
            Entry::Column(CELL_DRAWS_THIN.spec),
            Entry::Column(RANK.spec),
            Entry::Column(NEWTON_ITERATIONS.spec),
            Entry::Column(LAPLACE_FITS.spec),
            Entry::Column(LOG_EVIDENCE.spec),
            Entry::Column(LOG_EVIDENCE_SE.spec),
            Entry::Column(EVIDENCE_EFFECTIVE_DRAWS.spec),
            Entry::Column(SBC_REPLICATIONS.spec),
            Entry::Column(SBC_DRAWS.spec),
            Entry::Column(SBC_P_MIN.spec),
            Entry::Group(SBC_P),
            Entry::Column(shared::jobs::ESS_PER_ITERATION.spec),
            Entry::Column(shared::jobs::AUTOCORRELATION_LAG1.spec),
            Entry::Group(HYPER),
            Entry::Column(HYPER_ACCEPTANCE_RATE.spec),
        ],
    };
}

/// `fields.parquet`: one row per job and grid cell.
pub mod fields {
    use crate::table::{Col, Entry, Table, shared};

    pub const CELL: Col<i64> = Col::required("cell", "cell index, j * Dx + i");
    pub const I: Col<i64> = Col::required("i", "column of the cell, along x");
    pub const J: Col<i64> = Col::required("j", "row of the cell, along y");
    pub const X: Col<f64> = Col::required(
        "x",
        "x of the cell: i / (Dx - 1) in [0, 1], or its centre in the units of `model.window`",
    );
    pub const Y: Col<f64> = Col::required(
        "y",
        "y of the cell: j / (Dy - 1) in [0, 1], or its centre in the units of `model.window`",
    );
    pub const TRUTH: Col<f64> = Col::nullable(
        "truth",
        "the field u that generated the data (simulated data only)",
    );
    pub const OBSERVED: Col<bool> =
        Col::required("observed", "whether the model sees this cell's observation");
    pub const OBSERVATION: Col<f64> = Col::nullable(
        "observation",
        "the datum of the cell (value, label or count); held-out cells keep theirs",
    );
    pub const POST_MEAN: Col<f64> = Col::required("post_mean", "posterior mean of u");
    pub const POST_SD: Col<f64> = Col::required("post_sd", "posterior standard deviation of u");
    pub const POST_MEAN_MCSE: Col<f64> = Col::nullable(
        "post_mean_mcse",
        "Monte Carlo standard error of `post_mean`",
    );
    pub const EXACT_MEAN: Col<f64> = Col::nullable("exact_mean", "exact posterior mean (gaussian)");
    pub const EXACT_SD: Col<f64> =
        Col::nullable("exact_sd", "exact posterior standard deviation (gaussian)");
    pub const P_POSITIVE: Col<f64> =
        Col::nullable("p_positive", "posterior predictive P(t = +1) (probit)");
    pub const EXPECTED_COUNT: Col<f64> = Col::nullable(
        "expected_count",
        "posterior mean of exp(u + offset) (poisson)",
    );
    pub const ESS_BULK: Col<f64> = Col::nullable("ess_bulk", "bulk ESS of the cell's draws");
    pub const ESS_TAIL: Col<f64> = Col::nullable("ess_tail", "tail ESS of the cell's draws");
    pub const RHAT: Col<f64> = Col::nullable(
        "rhat",
        "rank-normalised split R-hat of the cell (two or more chains)",
    );
    pub const MCSE_MEAN: Col<f64> =
        Col::nullable("mcse_mean", "MCSE of the cell's mean from its ESS");

    pub const TABLE: Table = Table {
        name: "fields",
        row: "job and grid cell",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(CELL.spec),
            Entry::Column(I.spec),
            Entry::Column(J.spec),
            Entry::Column(X.spec),
            Entry::Column(Y.spec),
            Entry::Column(TRUTH.spec),
            Entry::Column(OBSERVED.spec),
            Entry::Column(OBSERVATION.spec),
            Entry::Column(POST_MEAN.spec),
            Entry::Column(POST_SD.spec),
            Entry::Column(POST_MEAN_MCSE.spec),
            Entry::Column(EXACT_MEAN.spec),
            Entry::Column(EXACT_SD.spec),
            Entry::Column(P_POSITIVE.spec),
            Entry::Column(EXPECTED_COUNT.spec),
            Entry::Column(ESS_BULK.spec),
            Entry::Column(ESS_TAIL.spec),
            Entry::Column(RHAT.spec),
            Entry::Column(MCSE_MEAN.spec),
        ],
    };
}

/// `traces.parquet`: one row per job, chain and kept state.
pub mod traces {
    use crate::table::{Col, ColumnGroup, Entry, Kind, Presence, Table, shared};

    pub const LOGLIK: Col<f64> = Col::required("loglik", "log-likelihood of the state");
    pub const FIELD_MEAN: Col<f64> =
        Col::nullable("field_mean", "mean of u over the grid in the state");
    pub const PROBE: ColumnGroup = ColumnGroup {
        prefixes: &["probe_"],
        pattern: "probe_<k>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Always,
        doc: "u at the probe cell i = j = round(k (D - 1) / 4), k = 0..4",
    };

    pub const TABLE: Table = Table {
        name: "traces",
        row: "job, chain and kept state",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::CHAIN.spec),
            Entry::Column(shared::ITERATION.spec),
            Entry::Column(LOGLIK.spec),
            Entry::Column(FIELD_MEAN.spec),
            Entry::Group(PROBE),
        ],
    };
}

/// `hyper.parquet`: one row per job, chain, traced kept state and inferred hyperparameter
/// (`sampler.hyper`).
pub mod hyper {
    use crate::table::{Col, Entry, Table, shared};

    pub const NAME: Col<String> = Col::required(
        "name",
        "the hyperparameter: `length_scale`, `variance` or `mean`",
    );
    pub const VALUE: Col<f64> = Col::required("value", "its value in the state");

    pub const TABLE: Table = Table {
        name: "hyper",
        row: "job, chain, traced kept state and inferred hyperparameter",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::CHAIN.spec),
            Entry::Column(shared::ITERATION.spec),
            Entry::Column(NAME.spec),
            Entry::Column(VALUE.spec),
        ],
    };
}

/// `inla_grid.parquet`: one row per INLA job (`sampler.kind = "inla"`) and kept grid point of
/// its hyperparameters, wide: one column per hyperparameter, null where the model fixes it.
pub mod inla_grid {
    use crate::table::{Col, Entry, Table, shared};

    pub const POINT: Col<i64> = Col::required(
        "point",
        "the grid point, 0 upwards: 0 is the mode of log p~(theta | data) (z = 0), then the \
         points along the z axes, then the rest of the product grid",
    );
    pub const LENGTH_SCALE: Col<f64> = Col::nullable(
        "length_scale",
        "the length scale at the point; null when the model fixes it",
    );
    pub const LENGTH_SCALE_Y: Col<f64> = Col::nullable(
        "length_scale_y",
        "the length scale along y at the point (an anisotropic kernel with model.length_scale_y_prior); null when not inferred",
    );
    pub const VARIANCE: Col<f64> = Col::nullable(
        "variance",
        "the kernel variance at the point; null when the model fixes it",
    );
    pub const MEAN: Col<f64> = Col::nullable(
        "mean",
        "the field's constant mean at the point; null when the model fixes it",
    );
    pub const LOG_DENSITY: Col<f64> = Col::required(
        "log_density",
        "log p~(theta | data) unnormalised: the log prior of theta in unconstrained coordinates \
         (log length scale, log variance, mean; Jacobian included) plus `log_evidence`",
    );
    pub const WEIGHT: Col<f64> = Col::required(
        "weight",
        "exp(`log_density`) normalised over the job's points (equal z-cell volumes): the \
         weights sum to 1",
    );
    pub const LOG_EVIDENCE: Col<f64> = Col::required(
        "log_evidence",
        "the Laplace log marginal likelihood log p~(data | theta) at the point (the \
         likelihood's dropped constants dropped)",
    );

    pub const TABLE: Table = Table {
        name: "inla_grid",
        row: "INLA job and kept grid point of its hyperparameters",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(POINT.spec),
            Entry::Column(LENGTH_SCALE.spec),
            Entry::Column(LENGTH_SCALE_Y.spec),
            Entry::Column(VARIANCE.spec),
            Entry::Column(MEAN.spec),
            Entry::Column(LOG_DENSITY.spec),
            Entry::Column(WEIGHT.spec),
            Entry::Column(LOG_EVIDENCE.spec),
        ],
    };
}

/// `chains.parquet`: one row per job and chain.
pub mod chains {
    use crate::table::{Col, Entry, Table, shared};

    pub const LOGLIK_EVALUATIONS: Col<i64> = Col::required(
        "loglik_evaluations",
        "log-likelihood evaluations of the chain, burn-in included",
    );
    pub const GRADIENT_EVALUATIONS: Col<i64> = Col::required(
        "gradient_evaluations",
        "gradient evaluations of the chain, burn-in included",
    );
    pub const MEAN_TREE_DEPTH: Col<f64> = Col::nullable(
        "mean_tree_depth",
        "NUTS: mean tree depth over kept iterations; null for other kinds",
    );
    pub const MEAN_LEAPFROG_STEPS: Col<f64> = Col::nullable(
        "mean_leapfrog_steps",
        "NUTS: mean leapfrog steps per iteration over kept iterations; null for other kinds",
    );
    pub const DIVERGENCES: Col<i64> = Col::nullable(
        "divergences",
        "NUTS: divergent trajectories after burn-in; null for other kinds",
    );
    pub const MEAN_TREE_ACCEPT: Col<f64> = Col::nullable(
        "mean_tree_accept",
        "NUTS: mean acceptance statistic of the trees over kept iterations; null for other kinds",
    );

    pub const TABLE: Table = Table {
        name: "chains",
        row: "job and chain",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::CHAIN.spec),
            Entry::Column(shared::ACCEPTANCE_RATE.spec),
            Entry::Column(shared::STEP_SIZE.spec),
            Entry::Column(MEAN_TREE_DEPTH.spec),
            Entry::Column(MEAN_LEAPFROG_STEPS.spec),
            Entry::Column(DIVERGENCES.spec),
            Entry::Column(MEAN_TREE_ACCEPT.spec),
            Entry::Column(LOGLIK_EVALUATIONS.spec),
            Entry::Column(GRADIENT_EVALUATIONS.spec),
        ],
    };
}

/// `convergence.parquet`: one row per job and checkpoint (gaussian studies).
pub mod convergence {
    use crate::table::{Col, Entry, Table, shared};

    pub const RMS_TO_EXACT: Col<f64> = Col::nullable(
        "rms_to_exact",
        "RMS over cells of the running posterior mean minus the exact posterior mean",
    );

    pub const TABLE: Table = Table {
        name: "convergence",
        row: "job and checkpoint (gaussian)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::ITERATION.spec),
            Entry::Column(RMS_TO_EXACT.spec),
        ],
    };
}

/// `draws.parquet`: one row per job, chain, kept draw and cell (with `output.field_draws`), the
/// long layout ArviZ and R's posterior read (pivot `cell` to columns).
pub mod draws {
    use crate::table::{Col, Entry, Table, shared};

    pub const DRAW: Col<i64> = Col::required("draw", "thinned draw of the chain, 0 upwards");
    pub const VALUE: Col<f64> = Col::nullable("value", "u at the cell in the draw");

    pub const TABLE: Table = Table {
        name: "draws",
        row: "job, chain, kept draw and cell (with `output.field_draws`)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::CHAIN.spec),
            Entry::Column(DRAW.spec),
            Entry::Column(super::fields::CELL.spec),
            Entry::Column(VALUE.spec),
        ],
    };
}

/// `ranks.parquet`: one row per SBC job, replication and functional.
pub mod ranks {
    use crate::table::{Col, Entry, Table, shared};

    pub const REPLICATION: Col<i64> = Col::required("replication", "SBC replication, 0 upwards");
    pub const FUNCTIONAL: Col<String> = Col::required(
        "functional",
        "what was ranked: `probe_0` .. `probe_4` (cells as in traces) or `field_mean`",
    );
    pub const RANK: Col<i64> = Col::required(
        "rank",
        "how many of the posterior draws lie below the truth, 0..=draws",
    );
    pub const DRAWS: Col<i64> =
        Col::required("draws", "posterior draws the truth was ranked among");

    pub const TABLE: Table = Table {
        name: "ranks",
        row: "SBC job, replication and functional",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(REPLICATION.spec),
            Entry::Column(FUNCTIONAL.spec),
            Entry::Column(RANK.spec),
            Entry::Column(DRAWS.spec),
        ],
    };
}
