//! The result tables of the latent-field family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use super::quantiles::{Quantile, Quantiles};
use crate::table::{ColumnGroup, Kind, Presence, shared};

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job" {
        use shared::JOB_ID,
        use shared::jobs::REPLICATE,
        use group shared::jobs::PARAMETERS,
        use shared::jobs::STATUS,
        use shared::jobs::ERROR,
        use shared::jobs::WARNINGS,
        use shared::ACCEPTANCE_RATE,
        MAE: f64 = optional("mae", "mean absolute error of the posterior mean against the truth (simulated data)"),
        use shared::jobs::WALL_SECONDS,
        SETUP_SECONDS: f64 = optional("setup_seconds", "time to build the prior and the data").timing(),
        use shared::jobs::SAMPLE_SECONDS,
        EXACT_SECONDS: f64 = optional("exact_seconds", "time to compute the exact posterior (gaussian)").timing(),
        use shared::jobs::ITERATIONS_PER_SECOND,
        use shared::jobs::CPU_SECONDS,
        use shared::STEP_SIZE,
        LOGLIK_EVALS_PER_ITERATION: f64 = optional("loglik_evals_per_iteration", "log-likelihood evaluations per iteration, over all chains"),
        GRADIENT_EVALS_PER_ITERATION: f64 = optional("gradient_evals_per_iteration", "gradient evaluations per iteration, over all chains"),
        JITTER: f64 = optional("jitter", "diagonal jitter added to the axis kernel to factor it (0 when none was needed)"),
        LATENT_DIM: i64 = optional("latent_dim", "whitened coordinates of a state: the grid's cells (Kronecker prior) or the padded torus's points (circulant embedding; a joint chain's own torus)"),
        TORUS_X: i64 = optional("torus_x", "points of the circulant embedding's padded torus along x; null for a Kronecker prior"),
        TORUS_Y: i64 = optional("torus_y", "points of the circulant embedding's padded torus along y; null for a Kronecker prior"),
        CLIPPED_EIGENVALUE: f64 = optional("clipped_eigenvalue", "the most negative eigenvalue of the circulant embedding, clipped to 0 (0 when none was negative); null for a Kronecker prior"),
        MODEL_MEAN_VALUE: f64 = optional("model_mean_value", "the field's constant mean used: `model.mean` resolved against the data"),
        OBSERVED_CELLS: i64 = optional("observed_cells", "cells whose observation the model sees (0 for measurements at sites)"),
        HELD_OUT_CELLS: i64 = optional("held_out_cells", "cells held out of the fit by `data.holdout` and scored in `heldout_lpd` and `count_mae`, `share_mae` or `prediction_error` (csv and points data; 0 when none, the default)"),
        OBSERVED_SITES: i64 = optional("observed_sites", "measurements at sites the model sees (sites data only)"),
        HELD_OUT_SITES: i64 = optional("held_out_sites", "measurements at sites held out by `data.holdout` and scored in `heldout_lpd` (sites data only; 0 when none, the default)"),
        EXACT_RMSE: f64 = optional("exact_rmse", "RMS over cells of posterior mean minus exact posterior mean (gaussian)"),
        PREDICTION_ERROR: f64 = optional("prediction_error", "share of cells whose predicted label differs from the truth's sign (probit)"),
        COUNT_MAE: f64 = optional("count_mae", "mean absolute error of the expected counts: against exp(truth + offset) on every cell (simulated), else against the held-out counts (poisson)"),
        BASELINE_COUNT_MAE: f64 = optional("baseline_count_mae", "the same for a constant rate equal to the mean observed count (poisson)"),
        SHARE_MAE: f64 = optional("share_mae", "mean absolute error of the posterior mean success probabilities: against logistic(truth + offset) on every cell (simulated), else against the share k / n of each held-out cell with a trial (binomial jobs only)"),
        BASELINE_SHARE_MAE: f64 = optional("baseline_share_mae", "the same for a constant probability equal to the pooled observed share sum k / sum n (binomial jobs only)"),
        HELDOUT_LPD: f64 = optional("heldout_lpd", "mean over held-out cells of the log posterior predictive density log p(y_i | data) (csv data, probit, poisson and binomial (with the binomial coefficient); chains: over the stored draws; approximations: Gauss-Hermite over each cell's gaussian marginal); sites data: the same over the held-out measurements, every likelihood (gaussian with its normal density), chains only"),
        use shared::jobs::ESS_BULK,
        ESS_TAIL: f64 = optional("ess_tail", "tail effective sample size of the log-likelihood across chains"),
        RHAT: f64 = optional("rhat", "rank-normalised split R-hat of the log-likelihood (two or more chains)"),
        use shared::jobs::ESS_BULK_PER_SECOND,
        CELL_ESS_MIN: f64 = optional("cell_ess_min", "smallest bulk ESS over the probe cells"),
        CELL_ESS_MEDIAN: f64 = optional("cell_ess_median", "median bulk ESS over the probe cells"),
        MCSE_MEAN_MAX: f64 = optional("mcse_mean_max", "largest Monte Carlo standard error of a cell's posterior mean"),
        CELL_ESS_BULK_MIN: f64 = optional("cell_ess_bulk_min", "smallest bulk ESS over every cell"),
        CELL_ESS_TAIL_MIN: f64 = optional("cell_ess_tail_min", "smallest tail ESS over every cell"),
        CELL_RHAT_MAX: f64 = optional("cell_rhat_max", "largest R-hat over every cell (two or more chains); infinite where a cell's R-hat is undefined (draws that do not vary), as ArviZ reports it"),
        CELL_ESS_BULK_MIN_PER_SECOND: f64 = optional("cell_ess_bulk_min_per_second", "`cell_ess_bulk_min` per CPU second (`cpu_seconds`)").timing(),
        CELL_DRAWS_PER_CHAIN: i64 = optional("cell_draws_per_chain", "stored draws per chain the cell diagnostics were computed from"),
        CELL_DRAWS_THIN: i64 = optional("cell_draws_thin", "every how many kept iterations a stored draw was taken"),
        RANK: i64 = optional("rank", "eigenpairs of the misfit Hessian a low-rank Laplace approximation kept (gpcn, \
         laplace_hmc; laplace when its sds are low-rank)"),
        NEWTON_ITERATIONS: i64 = optional("newton_iterations", "Newton iterations of the Laplace fit (laplace, gpcn, laplace_hmc; inla: the fit at the \
         mode of the hyperparameters)"),
        LAPLACE_FITS: i64 = optional("laplace_fits", "Laplace fits an INLA job made in all: mode search, Hessian and grid (kind inla)"),
        INLA_TAIL_FALL: f64 = optional("inla_tail_fall", "kind inla on the central composite design: how far log p(theta | data) falls below its mode's, in nats, at the probe of the design's axes 4 standardised units out that fell least; the design's asymmetric gaussian falls 8 there, and below 4 the job warns that the posterior has a tail the design's points do not reach (docs/hyperparameters.md, \"Integration\")"),
        LOG_EVIDENCE: f64 = optional("log_evidence", "log p(data | model): by Monte Carlo over prior draws (with `model.evidence_draws`), the \
         Laplace approximation's (kind laplace), or INLA's: log sum_k exp(log p~_k) + d log \
         delta_z - log det(H) / 2 over its grid (kind inla)"),
        LOG_EVIDENCE_SE: f64 = optional("log_evidence_se", "standard error of `log_evidence`"),
        EVIDENCE_EFFECTIVE_DRAWS: f64 = optional("evidence_effective_draws", "effective number of prior draws behind `log_evidence`"),
        ELPD_LOO: f64 = optional("elpd_loo", "with `output.log_likelihood`: PSIS-LOO's expected log pointwise predictive density, the sum over the fitted cells (or sites) of log p(y_i | y_-i), as ArviZ's `az.loo` from the full log density or mass of each (log y! and the binomial coefficient included) at every stored draw (`output.cell_draws` per chain, or `output.field_draws` when larger), reff = the mean ESS (`az.ess(method=\"mean\")`) over every cell's u, each inferred hyperparameter (its kept state's value) and each coefficient at those draws, over chains x draws (docs/studies.md); null for laplace, inla and SBC jobs, and where a pointwise value is not finite (the warning says where)"),
        ELPD_LOO_SE: f64 = optional("elpd_loo_se", "standard error of `elpd_loo` over the observations, sqrt(n var(loo_i)) (ArviZ's `se`)"),
        P_LOO: f64 = optional("p_loo", "effective number of parameters, lppd - `elpd_loo` (ArviZ's `p_loo`)"),
        PARETO_K_MAX: f64 = optional("pareto_k_max", "largest Pareto k of the importance ratios over the observations; null also where a tail had too few distinct draws to fit (ArviZ's inf, counted in `pareto_k_bad`)"),
        PARETO_K_BAD: i64 = optional("pareto_k_bad", "observations whose Pareto k is above 0.7, where PSIS-LOO is unreliable (the job then warns); ArviZ warns from min(1 - 1 / log10(S), 0.7) with S = chains x draws"),
        ELPD_WAIC: f64 = optional("elpd_waic", "WAIC's expected log pointwise predictive density, as ArviZ's `az.waic`: lppd minus the sum of the posterior variances of each observation's log-likelihood (over all chains x draws, ddof 0); null where `elpd_loo` is"),
        P_WAIC: f64 = optional("p_waic", "WAIC's effective number of parameters, the sum of those variances"),
        SBC_REPLICATIONS: i64 = optional("sbc_replications", "SBC replications run (SBC studies)"),
        SBC_DRAWS: i64 = optional("sbc_draws", "L: posterior draws each truth is ranked among (SBC studies)"),
        SBC_P_MIN: f64 = optional("sbc_p_min", "smallest `sbc_p_<functional>` (SBC studies)"),
        group SBC_P = ColumnGroup {
        prefixes: &["sbc_p_"],
        pattern: "sbc_p_<functional>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "p-value that the functional's ranks are uniform: chi-square and ECDF tests combined (SBC studies)",
        },
        use shared::jobs::ESS_PER_ITERATION,
        use shared::jobs::AUTOCORRELATION_LAG1,
        group HYPER = ColumnGroup {
        prefixes: &["hyper_"],
        pattern: "hyper_<name>_<statistic>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "each inferred hyperparameter (`length_scale`, `length_scale_y`, `variance`, `mean`, `noise_sd`) over every kept state of all chains (hyper.parquet holds every `sampler.thin`-th): posterior `mean`, `sd`, each quantile of `output.quantiles` (`q05`, `q95` by default: the 5 % and 95 % quantiles; `q025` for 0.025), bulk ESS `ess_bulk` and R-hat `rhat` (`hyper_length_scale_mean`, ...); for kind inla from the weighted grid (quantiles from its smoothed marginal, see docs/hyperparameters.md), ESS and R-hat null",
        },
        group COEF = ColumnGroup {
        prefixes: &["coef_"],
        pattern: "coef_<name>_<statistic>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "each covariate's coefficient (`data.covariates`) over the stored draws of all chains (`output.cell_draws` per chain), or an approximation's: the Laplace gaussian marginal (kind laplace), INLA's mixture of them over its grid (kind inla; quantiles from the gaussian of the mixture's mean and sd); ESS and R-hat null for both: on the design's scale (standardised by default: per sd of the covariate) `mean`, `sd`, each quantile of `output.quantiles` (`q05`, `q95` by default), `ess_bulk`, `rhat` (`coef_elev_mean`, ...), and per unit of the raw covariate `raw_mean`, `raw_sd` and the quantiles (`raw_q05`, `raw_q95` by default)",
        },
        HYPER_ACCEPTANCE_RATE: f64 = optional("hyper_acceptance_rate", "share of kept hyperparameter updates that moved them, over all chains (sampler.hyper)"),
    }
    items {
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
        /// The statistics of every inferred hyperparameter and coefficient, in column order
        /// (`hyper_<name>_<statistic>`, `coef_<name>_<statistic>`): `mean`, `sd`, each of
        /// `quantiles` (`q05`, `q95` by default), `ess_bulk`, `rhat`; the order of
        /// [`crate::families::latent_field::hyper::SeriesSummary::statistics`].
        pub(crate) fn hyper_statistics(quantiles: &Quantiles) -> Vec<String> {
            let named = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
            let mut statistics = named(&["mean", "sd"]);
            statistics.extend(quantiles.iter().map(Quantile::statistic));
            statistics.extend(named(&["ess_bulk", "rhat"]));
            statistics
        }

        /// The raw-scale statistics of every coefficient, in column order after its
        /// [`hyper_statistics`]: `raw_` and each of those but ESS and R-hat
        /// (`coef_<name>_raw_mean`, ...).
        pub(crate) fn raw_statistics(quantiles: &Quantiles) -> Vec<String> {
            let mut statistics = hyper_statistics(quantiles);
            statistics.truncate(statistics.len() - 2);
            statistics.iter().map(|s| format!("raw_{s}")).collect()
        }
    }
}

crate::declare_table! {
    /// `fields.parquet`: one row per job and grid cell.
    pub mod fields = "fields", one row per "job and grid cell" {
        use shared::JOB_ID,
        CELL: i64 = required("cell", "cell index, j * Dx + i").index(),
        I: i64 = required("i", "column of the cell, along x").index(),
        J: i64 = required("j", "row of the cell, along y").index(),
        X: f64 = required("x", "x of the cell: i / (Dx - 1) in [0, 1], or its centre in the units of `model.window`"),
        Y: f64 = required("y", "y of the cell: j / (Dy - 1) in [0, 1], or its centre in the units of `model.window`"),
        INSIDE_FRACTION: f64 = required("inside_fraction", "the share of the cell's area inside the study region (`model.region`), from 0 to 1, computed exactly by clipping the region's rings to the cell; 1 on every cell without a region"),
        TRUTH: f64 = nullable("truth", "the field u that generated the data (simulated data only)"),
        OBSERVED: bool = required("observed", "whether the model sees this cell's observation"),
        OBSERVATION: f64 = nullable("observation", "the datum of the cell (value, label, count, or binomial successes); held-out cells keep theirs; null where the cell has none the model could see (its value empty or `NA`, the cell left out of the grid CSV, or its exposure 0)"),
        TRIALS: f64 = optional("trials", "the binomial trials n of the cell's observation, null where it has none (binomial jobs only)"),
        OFFSET: f64 = optional("offset", "poisson, where the data give each cell an exposure (`data.exposure`, `data.offset`), leave cells out of the grid CSV or a `model.region` is given: the cell's total log offset, `model.offset` + its log exposure + log(`inside_fraction`), so that its expected count is exp(u + offset); null where the exposure or the share inside the region is 0 or the cell is left out (an expected count of 0)"),
        POST_MEAN: f64 = required("post_mean", "posterior mean of u").with_mcse(POST_MEAN_MCSE),
        POST_SD: f64 = required("post_sd", "posterior standard deviation of u"),
        POST_MEAN_MCSE: f64 = nullable("post_mean_mcse", "Monte Carlo standard error of `post_mean`"),
        EXACT_MEAN: f64 = nullable("exact_mean", "exact posterior mean (gaussian)"),
        EXACT_SD: f64 = nullable("exact_sd", "exact posterior standard deviation (gaussian)"),
        P_POSITIVE: f64 = nullable("p_positive", "posterior predictive P(t = +1) (probit)"),
        EXPECTED_COUNT: f64 = nullable("expected_count", "posterior mean of exp(u + offset), the cell's log offset (`model.offset`, plus its log exposure where the data give one) (poisson)"),
        SUCCESS_PROBABILITY: f64 = optional("success_probability", "posterior mean of the success probability logistic(u + offset) (binomial jobs only)"),
        ESS_BULK: f64 = nullable("ess_bulk", "bulk ESS of the cell's draws"),
        ESS_TAIL: f64 = nullable("ess_tail", "tail ESS of the cell's draws"),
        RHAT: f64 = nullable("rhat", "rank-normalised split R-hat of the cell (two or more chains)"),
        MCSE_MEAN: f64 = nullable("mcse_mean", "MCSE of the cell's mean from its ESS"),
        INTENSITY_MEAN: f64 = nullable("intensity_mean", "posterior mean of the intensity per unit area exp(u + offset) / cell area, the expected count per unit area (poisson)"),
        group INTENSITY_QUANTILE = ColumnGroup {
        prefixes: &["intensity_q"],
        pattern: "intensity_q<percent>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Always,
        doc: "each posterior quantile of `output.quantiles` of the intensity per unit area, from the stored draws (poisson chains): `intensity_q05` and `intensity_q95` by default, the 5 % and 95 % quantiles (`intensity_q025` for 0.025)",
        },
        group EXCEEDANCE = ColumnGroup {
        prefixes: &["exceedance_"],
        pattern: "exceedance_<t>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "with `output.exceedance`: the posterior P(exp(f - variance / 2) > t | data) of the relative risk, f = u - mean - X beta the spatial field, whose prior mean is 1 (`exceedance_1.5`, ...); chains: the share of kept iterations; laplace without covariates: its gaussian marginal; inla without covariates: the mixture of its grid points' marginals (each point judged at its own mean and variance); null for laplace and inla with covariates",
        },
    }
}

crate::declare_table! {
    /// `region.parquet`: the study region's outline (`model.region`), one row per job, ring and
    /// vertex; what the report draws on the field maps.
    pub(crate) mod region = "region", one row per "job with `model.region`, ring and vertex" {
        use shared::JOB_ID,
        RING: i64 = required("ring", "the ring, numbered from 1 in the region file's order (rings combine by the even-odd rule)").index(),
        VERTEX: i64 = required("vertex", "the vertex within its ring, from 1, in the file's order (a closing vertex that repeats the first, and consecutive repeats, dropped; the ring closes from its last vertex to its first)").index(),
        X: f64 = required("x", "x of the vertex, in the units of `model.window`"),
        Y: f64 = required("y", "y of the vertex, in the units of `model.window`"),
    }
}

crate::declare_table! {
    /// `marks.parquet`: the named points the field maps mark (`output.marks`), one row per job
    /// and mark.
    pub(crate) mod marks = "marks", one row per "job with `output.marks`, and mark" {
        use shared::JOB_ID,
        MARK: i64 = required("mark", "the mark, numbered from 1 in the order of `output.marks`").index(),
        LABEL: String = required("label", "its label (`output.mark_labels`; default `mark <k>`)"),
        X: f64 = required("x", "x of the mark, in the units of `model.window`"),
        Y: f64 = required("y", "y of the mark, in the units of `model.window`"),
    }
}

crate::declare_table! {
    /// `sites.parquet`: the field at sites, one row per job and site: the measurements of
    /// `data.source = "sites"` (fitted or held out) and the sites of `output.predict_sites`.
    pub(crate) mod sites = "sites", one row per "job and site (a measurement, or a site to predict at)" {
        use shared::JOB_ID,
        SET: String = required("set", "`fitted` (a measurement in the likelihood), `held_out` (a measurement scored, `data.holdout`) or `predict` (a site of `output.predict_sites`)").index(),
        ROW: i64 = required("row", "the site's row in its file (the sites file, or the predict-sites file), from 1, the header not counted").index(),
        X: f64 = required("x", "x of the site, in the units of `model.window`"),
        Y: f64 = required("y", "y of the site, in the units of `model.window`"),
        VALUE: f64 = nullable("value", "the measurement (probit labels as -1 / +1; binomial: the successes); null at a site to predict at"),
        TRIALS: f64 = optional("trials", "binomial: the measurement's trials (binomial jobs only)"),
        POST_MEAN: f64 = required("post_mean", "posterior mean of u at the site (the field interpolated between the four cell centres around it)"),
        POST_SD: f64 = nullable("post_sd", "posterior sd of u at the site, from the stored draws (null for approximations)"),
        group QUANTILE = ColumnGroup {
        prefixes: &["q"],
        pattern: "q<percent>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Always,
        doc: "each posterior quantile of `output.quantiles` of u at the site (stored draws; null for approximations): `q05` and `q95` by default, the 5 % and 95 % quantiles (`q025` for 0.025)",
        },
        PREDICTIVE_SD: f64 = nullable("predictive_sd", "gaussian: sd of a new measurement at the site, sqrt(post_sd^2 + noise_sd^2); null for the other likelihoods"),
        ESS_BULK: f64 = nullable("ess_bulk", "bulk ESS of u at the site"),
        RHAT: f64 = nullable("rhat", "rank-normalised split R-hat of u at the site (two or more chains)"),
        MCSE_MEAN: f64 = nullable("mcse_mean", "MCSE of `post_mean`"),
        LOG_PREDICTIVE_DENSITY: f64 = nullable("log_predictive_density", "held-out measurements: log p(y | data), the mean over the stored draws of the likelihood's full density or mass at y; null for fitted ones"),
        group CARRIED = ColumnGroup {
        prefixes: &["site_"],
        pattern: "site_<column>",
        kind: Kind::Text,
        nullable: true,
        presence: Presence::Optional,
        doc: "with `output.predict_sites`: each other column of the predict-sites file, as text, on its sites' rows (null on the measurements' rows)",
        },
        group EXCEEDANCE = ColumnGroup {
        prefixes: &["exceedance_"],
        pattern: "exceedance_<t>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Optional,
        doc: "with `output.exceedance`: P(exp(f - variance / 2) > t | data) at the site, f = u - mean - X beta the spatial field there (as `fields.parquet`'s columns), the share of the stored draws (each draw's own mean and coefficients); null for approximations",
        },
    }
    items {
        /// `set` of a measurement in the likelihood.
        pub(crate) const FITTED: &str = "fitted";
        /// `set` of a measurement held out and scored.
        pub(crate) const HELD_OUT: &str = "held_out";
        /// `set` of a site of `output.predict_sites`.
        pub(crate) const PREDICT: &str = "predict";
    }
}

crate::declare_table! {
    /// `traces.parquet`: one row per job, chain and kept state.
    pub mod traces = "traces", one row per "job, chain and kept state" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use shared::ITERATION,
        LOGLIK: f64 = required("loglik", "log-likelihood of the state"),
        FIELD_MEAN: f64 = nullable("field_mean", "mean of u over the grid in the state"),
        group PROBE = ColumnGroup {
        prefixes: &["probe_"],
        pattern: "probe_<k>",
        kind: Kind::Float,
        nullable: true,
        presence: Presence::Always,
        doc: "u at the probe cell i = j = round(k (D - 1) / 4), k = 0..4",
        },
    }
}

crate::declare_table! {
    /// `hyper.parquet`: one row per job, chain, traced kept state and inferred hyperparameter
    /// (`sampler.hyper`).
    pub(crate) mod hyper = "hyper", one row per "job, chain, traced kept state and inferred hyperparameter" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use shared::ITERATION,
        NAME: String = required("name", "the hyperparameter: `length_scale`, `variance` or `mean`").index(),
        VALUE: f64 = required("value", "its value in the state"),
    }
}

crate::declare_table! {
    /// `coefficients.parquet`: one row per job, chain, stored draw and covariate
    /// (`data.covariates`; the kept iterations thinned as the cell draws, `output.cell_draws`).
    pub(crate) mod coefficients = "coefficients", one row per "job, chain, stored draw and covariate" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use shared::ITERATION,
        NAME: String = required("name", "the covariate (`data.covariates`)").index(),
        VALUE: f64 = required("value", "its coefficient in the state, on the design's scale (standardised by default)"),
    }
}

crate::declare_table! {
    /// `hyper_draws.parquet`: the inferred hyperparameters at the stored draws, the draws
    /// `coefficients.parquet` and the per-cell diagnostics use (ArviZ's export reads them).
    pub(crate) mod hyper_draws = "hyper_draws", one row per "job, chain, stored draw and inferred hyperparameter" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use shared::ITERATION,
        use crate::families::latent_field::schema::hyper::NAME,
        use crate::families::latent_field::schema::hyper::VALUE,
    }
}

crate::declare_table! {
    /// `loo.parquet`: each observation's share of PSIS-LOO and WAIC (`output.log_likelihood`).
    pub(crate) mod loo = "loo", one row per "job with `output.log_likelihood` and observation in the likelihood" {
        use shared::JOB_ID,
        OBSERVATION: i64 = required("observation", "the observation, 0 upwards, in the likelihood's order: fitted cells by cell index, fitted sites by their row").index(),
        CELL: i64 = nullable("cell", "cells data: the fitted cell, `fields.parquet`'s `cell`; null for sites"),
        SITE_ROW: i64 = nullable("site_row", "sites data: the site's `row` in `sites.parquet` (its row in the sites file, from 1); null for cells"),
        ELPD_LOO: f64 = required("elpd_loo", "log p(y_i | y_-i) by PSIS, ArviZ's `loo_i`; `jobs.parquet`'s `elpd_loo` is their sum"),
        PARETO_K: f64 = nullable("pareto_k", "the Pareto k of the observation's importance ratios (above 0.7: its `elpd_loo` is unreliable); null where the tail had too few distinct draws to fit (ArviZ's inf)"),
        ELPD_WAIC: f64 = required("elpd_waic", "the observation's WAIC term, ArviZ's `waic_i`: its log predictive density minus the variance of its log-likelihood over the draws"),
    }
}

crate::declare_table! {
    /// `log_likelihood.parquet`: the pointwise log-likelihood (`output.log_likelihood`), one row
    /// per job, chain, stored draw and observation, the values `loo.parquet` was computed from.
    pub(crate) mod log_likelihood = "log_likelihood", one row per "job with `output.log_likelihood`, chain, stored draw and observation" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use crate::families::latent_field::schema::draws::DRAW,
        use crate::families::latent_field::schema::loo::OBSERVATION,
        VALUE: f64 = required("value", "log p(y_i | u, theta) at the draw: the full log density or mass (log y! and the binomial coefficient included), in single precision as the draws are"),
    }
}

crate::declare_table! {
    /// `inla_grid.parquet`: one row per INLA job (`sampler.kind = "inla"`) and kept grid point of
    /// its hyperparameters, wide: one column per hyperparameter, null where the model fixes it.
    pub(crate) mod inla_grid = "inla_grid", one row per "INLA job and kept grid point of its hyperparameters" {
        use shared::JOB_ID,
        POINT: i64 = required("point", "the grid point, 0 upwards: 0 is the mode of log p~(theta | data) (z = 0), then the \
         points along the z axes, then the rest of the product grid, then the points the flood fill added").index(),
        LENGTH_SCALE: f64 = nullable("length_scale", "the length scale at the point; null when the model fixes it"),
        LENGTH_SCALE_Y: f64 = nullable("length_scale_y", "the length scale along y at the point (an anisotropic kernel with model.length_scale_y_prior); null when not inferred"),
        VARIANCE: f64 = nullable("variance", "the kernel variance at the point; null when the model fixes it"),
        MEAN: f64 = nullable("mean", "the field's constant mean at the point; null when the model fixes it"),
        LOG_DENSITY: f64 = required("log_density", "log p~(theta | data) unnormalised: the log prior of theta in unconstrained coordinates \
         (log length scale, log variance, mean; Jacobian included) plus `log_evidence`"),
        WEIGHT: f64 = required("weight", "exp(`log_density`) normalised over the job's points (equal z-cell volumes): the \
         weights sum to 1"),
        LOG_EVIDENCE: f64 = required("log_evidence", "the log marginal likelihood log p~(data | theta) the point is weighed by: \
         the Laplace approximation's (the likelihood's dropped constants dropped), plus `evidence_correction` under the \
         simplified-laplace strategy"),
        EVIDENCE_CORRECTION: f64 = nullable("evidence_correction", "the Laplace evidence's second-order term at the point \
         (docs/hyperparameters.md, \"Each cell's marginal\"): carried in `log_evidence` by sampler.inla_strategy = \
         \"simplified-laplace\"; under \"gaussian\" left out, and given at the checked points only (`laplace_error`); \
         null where it cannot be computed (more than 2,500 observations under a prior without a cheap eigendecomposition)"),
        LAPLACE_ERROR: f64 = nullable("laplace_error", "at the heaviest points (docs/hyperparameters.md, \"Does INLA apply?\"): log p(data | theta) \
         estimated by importance sampling from the Laplace gaussian minus the Laplace log evidence (`log_evidence` less \
         `evidence_correction`); its spread over the points, less the correction's where INLA carries it, is how far INLA's \
         weights are off (the job warns when it is large, if the draws are enough to tell); null at the other points"),
        IMPORTANCE_EFFECTIVE_DRAWS: f64 = nullable("importance_effective_draws", "where `laplace_error` is given: Kish's effective \
         number of the importance draws: with fewer than 20 at a point the estimates cannot size the error, and the \
         job judges by `evidence_correction` instead"),
    }
}

crate::declare_table! {
    /// `chains.parquet`: one row per job and chain.
    pub(crate) mod chains = "chains", one row per "job and chain" {
        use shared::JOB_ID,
        use shared::CHAIN,
        use shared::ACCEPTANCE_RATE,
        use shared::STEP_SIZE,
        MEAN_TREE_DEPTH: f64 = nullable("mean_tree_depth", "NUTS: mean tree depth over kept iterations; null for other kinds"),
        MEAN_LEAPFROG_STEPS: f64 = nullable("mean_leapfrog_steps", "NUTS and laplace_hmc: mean leapfrog steps per iteration over kept iterations; null for other kinds"),
        DIVERGENCES: i64 = nullable("divergences", "NUTS and laplace_hmc: divergent trajectories after burn-in (an energy error above 1,000, a density that is not finite on the way, or a laplace_hmc trajectory cut at its cap of 1,024 leapfrog steps); null for other kinds"),
        MEAN_TREE_ACCEPT: f64 = nullable("mean_tree_accept", "NUTS: mean acceptance statistic of the trees over kept iterations; null for other kinds"),
        LOGLIK_EVALUATIONS: i64 = required("loglik_evaluations", "log-likelihood evaluations of the chain, burn-in included"),
        GRADIENT_EVALUATIONS: i64 = required("gradient_evaluations", "gradient evaluations of the chain, burn-in included"),
    }
}

crate::declare_table! {
    /// `convergence.parquet`: one row per job and checkpoint (gaussian studies).
    pub(crate) mod convergence = "convergence", one row per "job and checkpoint (gaussian)" {
        use shared::JOB_ID,
        use shared::ITERATION,
        RMS_TO_EXACT: f64 = nullable("rms_to_exact", "RMS over cells of the running posterior mean minus the exact posterior mean"),
    }
}

crate::declare_table! {
    /// `draws.parquet`: one row per job, chain, kept draw and cell (with `output.field_draws`), the
    /// long layout ArviZ and R's posterior read (pivot `cell` to columns).
    pub(crate) mod draws = "draws", one row per "job, chain, kept draw and cell (with `output.field_draws`)" {
        use shared::JOB_ID,
        use shared::CHAIN,
        DRAW: i64 = required("draw", "thinned draw of the chain, 0 upwards").index(),
        use crate::families::latent_field::schema::fields::CELL,
        VALUE: f64 = nullable("value", "u at the cell in the draw"),
    }
}

crate::declare_table! {
    /// `ranks.parquet`: one row per SBC job, replication and functional.
    pub(crate) mod ranks = "ranks", one row per "SBC job, replication and functional" {
        use shared::JOB_ID,
        REPLICATION: i64 = required("replication", "SBC replication, 0 upwards").index(),
        FUNCTIONAL: String = required("functional", "what was ranked: `probe_0` .. `probe_4` (cells as in traces), `field_mean`, `loglik` (the model's log p(y | u)), an inferred hyperparameter or a covariate's coefficient `coef_<name>`").index(),
        RANK: i64 = required("rank", "how many of the posterior draws lie below the truth, 0..=draws"),
        DRAWS: i64 = required("draws", "posterior draws the truth was ranked among"),
    }
}
