//! The keys of the latent-field family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use crate::job::DataStream;
use crate::model::{DataSource, KernelKind, LikelihoodKind};
use crate::study::keys::{
    Applies, Default, FIXED, Keyed, Label, MODEL_FAMILY, Rule, SAMPLER_BURN_IN, SAMPLER_CHAINS,
    SAMPLER_ITERATIONS, SAMPLER_KIND, SAMPLER_THIN, ValueType,
};

/// Prior draws for the evidence estimate: past this the estimate costs more than the chains.
pub(crate) const MAX_EVIDENCE_DRAWS: i64 = 10_000_000;
/// Thinned draws per chain kept in `draws.parquet`: past this the table outgrows the chains.
pub(crate) const MAX_FIELD_DRAWS: i64 = 100_000;
/// The most trials a simulated cell may have: 2^53, beyond which counts are not exact in a
/// double.
pub(crate) const MAX_TRIALS_PER_CELL: i64 = 1 << 53;

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    /// The grid: D (D x D cells), [Dx, Dy] (rectangular) or [D] (1-D); N = Dx Dy cells. Sites data without it: along each axis the side that puts 12 cells in the smallest length scale (model.length_scale, model.length_scale_y, or the 5th percentile of model.length_scale_prior), from 16 to 256 (docs/data.md).
    MODEL_GRID = model.grid { value: ValueType::GridShape, rule: Rule::IntRange(1, i64::MAX), default: Default::Int(16), label: Label::new("D", "grid size D (D × D cells)") },
    /// The prior covariance kernel: squared-exponential (separable: Kronecker), or exponential / matern12, matern32, matern52 (isotropic: circulant embedding on a padded torus on 2-D grids).
    MODEL_KERNEL = model.kernel { value: ValueType::Choice(KernelKind::NAMES), default: Default::Text("squared-exponential"), label: Label::new("", "model kernel") },
    /// The length scale the sampler assumes, in the window's units.
    MODEL_LENGTH_SCALE = model.length_scale { rule: Rule::Positive, default: Default::Derived("0.3 for simulated data; csv and points data: a tenth of the window's longer side, in the data's units, at least a cell's longer side"), label: Label::new("ℓ", "assumed length scale ℓ") },
    /// The prior variance of the field.
    MODEL_VARIANCE = model.variance { rule: Rule::Positive, default: Default::Float(1.0), label: Label::new("variance", "prior variance") },
    /// The likelihood linking the field to the observations: gaussian values, probit labels, poisson counts, or binomial successes of trials (logit link; trials from data.trials for csv data, data.trials_per_cell for simulated data).
    MODEL_LIKELIHOOD = model.likelihood { value: ValueType::Choice(LikelihoodKind::NAMES), default: Default::Text("gaussian"), label: Label::new("", "model likelihood") },
    /// Poisson: the log offset every cell shares, rate = exp(u + offset) (times the cell's exposure when data.exposure or data.offset gives one); "log-area" = log of a cell's area (its length on a 1-D grid) in the window's units, so that exp(u) is an intensity per unit area. Binomial: a known log-odds, success probability logistic(u + offset) (a number; "log-area" is refused).
    MODEL_OFFSET = model.offset { value: ValueType::FloatOrAlias(&["log-area"]), rule: Rule::Finite, default: Default::Derived("`\"log-area\"` for points data; 0 otherwise"), label: Label::new("offset", "log offset") },
    /// > 0: also estimate log p(data | model) from this many prior draws.
    MODEL_EVIDENCE_DRAWS = model.evidence_draws { value: ValueType::Integer, rule: Rule::IntRange(0, MAX_EVIDENCE_DRAWS), default: Default::Int(0) },
    /// The constant mean of the field (the intercept): a number, or "auto" = log(total observed count / total exposure of the observed cells) - model.offset - variance / 2 (poisson: the prior's mean rate per unit exposure is the observed one; a cell's exposure is data.exposure, or exp(data.offset), 1 when neither is given, so then log(mean observed count per cell) - model.offset - variance / 2), logit(sum k / sum n) - model.offset with no variance term (binomial: the prior's median success probability is the pooled share of successes of the observed cells; a share of 0 or 1 is moved half a success inside), the mean observation (gaussian), 0 (probit).
    MODEL_MEAN = model.mean {
        value: ValueType::FloatOrWord(&["auto"]),
        rule: Rule::Finite,
        default: Default::Derived("`\"auto\"` for real data (csv and sites: poisson, binomial, gaussian; points: poisson); 0 otherwise"),
        keyed: Keyed::UnlessDefault,
    },
    /// A prior on the kernel's length scale: the chains then infer it (`sampler.hyper` says how), or kind inla integrates over it, and `model.length_scale` is where they start (inla: its mode search); `"fixed"` keeps it at model.length_scale. Forms: "log-normal(mu, sigma)", "gamma(shape, rate)", "inverse-gamma(shape, scale)", "half-normal(sd)", "uniform(low, high)" with low >= 0.
    MODEL_LENGTH_SCALE_PRIOR = model.length_scale_prior { value: ValueType::Text, rule: Rule::HyperPrior, default: Default::Text(FIXED), keyed: Keyed::UnlessDefault },
    /// The kernel's length scale along y, for an anisotropic (ARD) squared-exponential kernel: model.length_scale is then the one along x. Not given: the kernel is isotropic.
    MODEL_LENGTH_SCALE_Y = model.length_scale_y { rule: Rule::Positive, default: Default::Derived("model.length_scale (isotropic)"), keyed: Keyed::UnlessDefault },
    /// A prior on the length scale along y (an anisotropic squared-exponential kernel, inferred like model.length_scale_prior; the chains start at model.length_scale_y, or at model.length_scale when it is not given); the same forms.
    MODEL_LENGTH_SCALE_Y_PRIOR = model.length_scale_y_prior { value: ValueType::Text, rule: Rule::HyperPrior, default: Default::Text(FIXED), keyed: Keyed::UnlessDefault },
    /// A prior on the kernel's variance (inferred as the length scale is; `model.variance` is where the chains start); the same forms.
    MODEL_VARIANCE_PRIOR = model.variance_prior { value: ValueType::Text, rule: Rule::HyperPrior, default: Default::Text(FIXED), keyed: Keyed::UnlessDefault },
    /// A prior on the field's constant mean, "normal(mean, sd)" or "uniform(low, high)" (the chains start at `model.mean`).
    MODEL_MEAN_PRIOR = model.mean_prior { value: ValueType::Text, rule: Rule::HyperPrior, default: Default::Text(FIXED), keyed: Keyed::UnlessDefault },
    /// A prior on the gaussian likelihood's noise sd (the nugget's square root), inferred with the others by sampler.hyper = "joint" or "joint-spectral" (the chains start at data.noise_sd when it is given, else at the prior's median); the forms of model.length_scale_prior.
    MODEL_NOISE_SD_PRIOR = model.noise_sd_prior { value: ValueType::Text, rule: Rule::HyperPrior, default: Default::Text(FIXED), keyed: Keyed::UnlessDefault },
    /// The physical window the cells tile, [[x0, x1], [y0, y1]] ([[x0, x1]] for a 1-D grid): the units of every length scale. Csv data: a window with the data's aspect ratio rescales the data's own. Points data: the study window in the points' units (required without model.region); every point must lie in it.
    MODEL_WINDOW = model.window {
        value: ValueType::Window,
        default: Default::Derived("csv: the data's window, from its cell centres (or, when the file has none, the region's bounding box with model.region, else the unit grid); points and simulated with model.region: the region's bounding box; points without: none (required); simulated without: points from 0 to 1 on the longer axis, cells square"),
        keyed: Keyed::UnlessDefault,
    },
    /// The study region, a CSV of polygon rings relative to the study file's folder (columns x, y in the window's units and an optional integer ring; rings combine by the even-odd rule, so a ring inside another is a hole; docs/data.md): fields.parquet gets each cell's exact share inside it (`inside_fraction`), the maps draw its outline, and points data must lie in it. 2-D grids only.
    MODEL_REGION = model.region {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("none: the whole window"),
        keyed: Keyed::UnlessDefault,
    },
    /// Where the observations come from.
    DATA_SOURCE = data.source { value: ValueType::Choice(DataSource::NAMES), default: Default::Text("simulated"), label: Label::new("", "data source") },
    /// The truth's length scale (misspecification when it differs from the model's).
    DATA_LENGTH_SCALE = data.length_scale {
        rule: Rule::Positive,
        default: Default::Derived("the model's (also when that is swept)"),
        applies: Applies::Source(&["simulated"]),
        label: Label::new("true ℓ", "true length scale"),
    },
    /// f: observe N / f distinct cells.
    DATA_SUBSAMPLE = data.subsample {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, i64::MAX),
        default: Default::Int(4),
        applies: Applies::Source(&["simulated"]),
        label: Label::new("f", "subsampling factor f"),
    },
    /// Binomial, simulated data: the trials n of every observed cell, whose successes are drawn from Binomial(n, logistic(u + offset)). Other likelihoods: refused.
    DATA_TRIALS_PER_CELL = data.trials_per_cell {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, MAX_TRIALS_PER_CELL),
        default: Default::Int(10),
        applies: Applies::Source(&["simulated"]),
        label: Label::new("n", "trials per cell n"),
    },
    /// s: the observation noise sd (gaussian, probit); with model.noise_sd_prior, where the chains start.
    DATA_NOISE_SD = data.noise_sd { rule: Rule::Positive, default: Default::Float(1.0), label: Label::new("σ", "noise sd σ") },
    /// The data file, relative to the study file's folder: csv, a grid CSV in the format of data/README.md; points, a CSV with one row per event and its coordinates in the columns data.x and data.y (other columns ignored), binned to the grid over model.window; sites, a CSV with one row per measurement, its site in data.x and data.y and its value in data.value, observing the field interpolated between the cell centres around the site (docs/data.md).
    DATA_PATH = data.path {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        applies: Applies::Source(&["csv", "points", "sites"]),
    },
    /// The column of a points or sites file holding each event's or site's x coordinate.
    DATA_X = data.x {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Text("x"),
        applies: Applies::Source(&["points", "sites"]),
    },
    /// The column of a points or sites file holding each event's or site's y coordinate.
    DATA_Y = data.y {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Text("y"),
        applies: Applies::Source(&["points", "sites"]),
    },
    /// The column of a sites file holding each measurement: a finite number (gaussian), 0/1 or -1/+1 (probit), a whole count (poisson), the successes (binomial, with data.trials).
    DATA_VALUE = data.value {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Text("value"),
        applies: Applies::Source(&["sites"]),
    },
    /// The column holding the observations (binomial: the successes).
    DATA_COLUMN = data.column {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("poisson and binomial `\"count\"`, probit `\"label\"`, gaussian `\"value\"`"),
        applies: Applies::Source(&["csv"]),
    },
    /// Binomial, csv or sites data: the column holding each cell's or site's trials (whole numbers >= 0, at least the successes in data.column or data.value; 0 trials carry no information). Other likelihoods: refused.
    DATA_TRIALS = data.trials {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("binomial `\"trials\"`; none otherwise"),
        applies: Applies::Source(&["csv", "sites"]),
    },
    /// Share of the observed cells (sites data: of the measurements) held out of the fit by a seeded draw and scored (heldout_lpd, count_mae, share_mae, prediction_error); jobs.parquet's held_out_cells and held_out_sites count them, and `fieldmc run` and the report say how many. 0, the default, fits every cell: score the model by PSIS-LOO instead (output.log_likelihood). An explicit value keeps the job ids it had when 0.2 was the default.
    DATA_HOLDOUT = data.holdout {
        rule: Rule::UnitInterval,
        default: Default::Float(0.0),
        applies: Applies::Source(&["csv", "points", "sites"]),
        label: Label::new("holdout", "held-out share"),
    },
    /// K-fold cross-validation over the observed cells (sites data: the measurements): 0 = none; K from 2 splits them into K folds in a seeded order shared by every fold's job, and `data.fold` says which one a job holds out (sweep `"data.fold" = [0, 1, ..., K - 1]`). The sum over the K jobs of heldout_lpd x held_out_cells (held_out_sites) is the K-fold elpd, the fallback when PSIS-LOO's Pareto k are bad. Not with data.holdout.
    DATA_FOLDS = data.folds {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, 1000),
        default: Default::Int(0),
        keyed: Keyed::UnlessDefault,
        applies: Applies::Source(&["csv", "points", "sites"]),
    },
    /// With data.folds = K: the fold this job holds out, 0 to K - 1.
    DATA_FOLD = data.fold {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, 999),
        default: Default::Int(0),
        keyed: Keyed::UnlessDefault,
        applies: Applies::Source(&["csv", "points", "sites"]),
    },
    /// Covariates with inferred coefficients (fixed effects): the linear predictor is mean + sum_k beta_k x_k + field. Names of columns of the grid CSV (csv data) or of data.covariates_path; an array `["elev", "grad"]` or one string `"elev,grad"`.
    DATA_COVARIATES = data.covariates {
        value: ValueType::Words,
        rule: Rule::NonEmpty,
        default: Default::Derived("none"),
        keyed: Keyed::UnlessDefault,
    },
    /// A grid CSV holding the covariates (columns i, j and each name of data.covariates, one row per cell of the study's grid), relative to the study file's folder: required for points and simulated data, optional for csv data (default: the data file itself). It also holds the exposure column (data.exposure, data.offset) of points data, and of csv data whose file has no such column.
    DATA_COVARIATES_PATH = data.covariates_path {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("csv data: data.path; otherwise required with data.covariates"),
        keyed: Keyed::UnlessDefault,
    },
    /// Poisson only: a column holding each cell's exposure E >= 0 (population, area, person-years): the cell's count is Poisson(E exp(u + model.offset)), log E added to its offset; E = 0 takes the cell out of the likelihood (it is still predicted, its expected count 0). Read from the grid CSV (csv data: every row the file has needs one, also where the count is empty) or else from data.covariates_path (points data: always; every cell). Not with data.offset.
    DATA_EXPOSURE = data.exposure {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("none (every cell's exposure is 1)"),
        applies: Applies::Source(&["csv", "points"]),
        keyed: Keyed::UnlessDefault,
    },
    /// Poisson only: a column holding each cell's log exposure (a finite number), added to model.offset: data.exposure on the log scale, read from the same file. Not with data.exposure.
    DATA_OFFSET = data.offset {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("none (every cell's log exposure is 0)"),
        applies: Applies::Source(&["csv", "points"]),
        keyed: Keyed::UnlessDefault,
    },
    /// Standardise each covariate (subtract its mean over every cell, divide by its population sd), so a coefficient is the change of the log rate per sd of its covariate.
    DATA_STANDARDIZE = data.standardize { value: ValueType::Bool, default: Default::Bool(true), keyed: Keyed::UnlessDefault },
    /// The prior of each covariate coefficient, "normal(0, s)" (on the standardised scale when data.standardize).
    MODEL_COEFFICIENT_PRIOR = model.coefficient_prior { value: ValueType::Text, rule: Rule::CoefficientPrior, default: Default::Text("normal(0, 1)"), keyed: Keyed::UnlessDefault },
    use SAMPLER_KIND,
    /// The (starting) step size: grw, mala, mgrad (delta) > 0; pcn, pcnl, gpcn in (0, 1]; laplace_hmc (angle per leapfrog step) from 0.001875 (its 110-degree trajectory in at most 1,024 steps, its cap) to 1.92 (the trajectory in one step). Unused by elliptical, laplace and inla, and by nuts (nuts adapts its step size and mass matrix itself during burn-in).
    SAMPLER_BETA = sampler.beta { rule: Rule::Finite, default: Default::Float(0.2), label: Label::new("β", "step size β") },
    use SAMPLER_ITERATIONS,
    use SAMPLER_BURN_IN,
    use SAMPLER_THIN,
    use SAMPLER_CHAINS,
    /// Adapt the step size during burn-in, then freeze it.
    SAMPLER_ADAPT = sampler.adapt {
        value: ValueType::Bool,
        default: Default::Derived("by kind (see docs/keys.md's kind table)"),
        keyed: Keyed::UnlessDefault,
    },
    /// The acceptance rate adaptation aims at.
    SAMPLER_TARGET_ACCEPTANCE = sampler.target_acceptance {
        rule: Rule::OpenUnitInterval,
        default: Default::Derived("by kind (see docs/keys.md's kind table)"),
        keyed: Keyed::UnlessDefault,
    },
    /// gpcn and laplace_hmc: eigenpairs of the misfit Hessian the Laplace proposal keeps (0: from the spectrum, every converged eigenvalue above the kind's threshold, at most 8 sqrt(N)).
    SAMPLER_RANK = sampler.rank {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, i64::MAX),
        default: Default::Int(0),
        keyed: Keyed::UnlessDefault,
    },
    /// How the chains update the hyperparameters given a `model.*_prior`: within-gibbs (Metropolis-Hastings holding the whitened field fixed), surrogate-slice (Murray & Adams' surrogate-data slice sampler), pseudo-marginal (Metropolis-Hastings on an importance estimate of the marginal likelihood from the Laplace approximation); with a field kind grw, pcn, elliptical, mala or pcnl. joint (NUTS on the hyperparameters and the field together; `sampler.hyper_preconditioner` adds a Laplace preconditioner) and joint-spectral (the same, partially centred per prior eigenmode); with kind nuts. "none" when every hyperparameter is fixed.
    SAMPLER_HYPER = sampler.hyper { value: ValueType::Choice(crate::sampler::hyper::HyperUpdate::NAMES), default: Default::Text("none"), keyed: Keyed::UnlessDefault },
    /// The proposal of the within-gibbs and pseudo-marginal updates, on log length scale, log variance and mean: random-walk, adaptive (Haario et al.'s covariance from the burn-in), kernel-adaptive (Sejdinovic et al.); each adapts during burn-in only.
    SAMPLER_HYPER_PROPOSAL = sampler.hyper_proposal { value: ValueType::Choice(crate::sampler::hyper::HyperProposalKind::NAMES), default: Default::Text("adaptive"), keyed: Keyed::UnlessDefault },
    /// Pseudo-marginal: importance draws from the Laplace approximation per estimate of p(data | hyperparameters).
    SAMPLER_HYPER_IMPORTANCE_DRAWS = sampler.hyper_importance_draws { value: ValueType::Integer, rule: Rule::IntRange(1, 100_000), default: Default::Int(16), keyed: Keyed::UnlessDefault },
    /// The joint chain (hyper = "joint"): none (the whitened field with NUTS's diagonal mass matrix only; on five real grids the preconditioner cost as much as it saved, or more) or laplace (the Laplace approximation's stiffest directions of the field rescaled to unit scale, fitted halfway through burn-in when burn-in is at least 200).
    SAMPLER_HYPER_PRECONDITIONER = sampler.hyper_preconditioner { value: ValueType::Choice(crate::sampler::hyper::JointPreconditioner::NAMES), default: Default::Text("none"), keyed: Keyed::UnlessDefault },
    /// inla: each cell's marginal at a grid point: simplified-laplace (the Laplace gaussian corrected in location and skewness by Rue, Martino & Chopin's simplified Laplace approximation, a skew-normal; at cells or sites, from the exact inverse up to 2,500 observations or in the prior's leading spectral coordinates at any number (a squared-exponential kernel on a square grid), else the gaussian with a note) or gaussian (the Laplace approximation's own).
    SAMPLER_INLA_STRATEGY = sampler.inla_strategy { value: ValueType::Choice(crate::model::inla::InlaStrategy::NAMES), default: Default::Text("simplified-laplace"), keyed: Keyed::UnlessDefault },
    /// inla: how the hyperparameters are integrated over (R-INLA's int.strategy): grid (the z-grid to a log-density drop of 7.5, grown by flood fill), ccd (the central composite design: the mode and 2 d + 2^d points around it, 9 for two hyperparameters, 15 for three; their marginals the asymmetric gaussian of the design's stretches), eb (the mode alone: the cells at the most probable hyperparameters, their uncertainty left out), or auto (grid up to two inferred hyperparameters, ccd from three).
    SAMPLER_INLA_INTEGRATION = sampler.inla_integration { value: ValueType::Choice(crate::model::inla::InlaIntegration::NAMES), default: Default::Text("auto"), keyed: Keyed::UnlessDefault },
    /// Thinned draws per chain of every cell kept in draws.parquet (0: none).
    OUTPUT_FIELD_DRAWS = output.field_draws {
        value: ValueType::Integer,
        rule: Rule::IntRange(0, MAX_FIELD_DRAWS),
        default: Default::Int(0),
        keyed: Keyed::Never,
    },
    /// Risk maps: thresholds t > 0 of the relative risk exp(f - variance / 2), f the spatial field (u without the mean and the covariates' effect; the relative risk's prior mean is 1: the intensity against the rate the mean and covariates predict); fields.parquet gets each cell's posterior P(relative risk > t | data) in a column `exceedance_<t>`, and the report draws the maps.
    OUTPUT_EXCEEDANCE = output.exceedance {
        value: ValueType::Numbers,
        default: Default::Derived("none"),
        keyed: Keyed::Never,
    },
    /// Named points the field maps mark, [[x, y], ...] in the units of `model.window` (each inside the grid's window; 2-D grids only), e.g. a suspected source of risk: the report draws each on every field panel with its label, and marks.parquet lists them. `[]`: none.
    OUTPUT_MARKS = output.marks {
        value: ValueType::Rows,
        default: Default::Derived("none"),
        keyed: Keyed::Never,
    },
    /// The labels of output.marks, one per mark in its order, e.g. `["old incinerator"]` (names without commas).
    OUTPUT_MARK_LABELS = output.mark_labels {
        value: ValueType::Words,
        default: Default::Derived("`\"mark 1\"`, `\"mark 2\"`, ..."),
        keyed: Keyed::Never,
    },
    /// Sites to predict the field at: a CSV relative to the study file's folder with columns x and y in the units of model.window (its other columns carried through as text); sites.parquet gets one row per job and site (set = "predict") with the field's posterior there and, for the gaussian likelihood, the predictive sd of a new measurement. 2-D grids only.
    OUTPUT_PREDICT_SITES = output.predict_sites {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("none"),
        keyed: Keyed::Never,
    },
    /// Kept draws per chain stored for every cell's R-hat and ESS (the kept iterations thinned evenly to this many; more costs about 1 ms per cell per 1,000).
    OUTPUT_CELL_DRAWS = output.cell_draws {
        value: ValueType::Integer,
        rule: Rule::IntRange(4, MAX_FIELD_DRAWS),
        default: Default::Int(1_000),
        keyed: Keyed::Never,
    },
    /// Model choice: true = every chain job reports PSIS-LOO and WAIC in jobs.parquet (elpd_loo, elpd_loo_se, p_loo, pareto_k_max, pareto_k_bad, elpd_waic, p_waic), as ArviZ's az.loo and az.waic compute them from the full pointwise log-likelihood of each fitted cell or site at every stored draw (output.cell_draws per chain), keeping those values in log_likelihood.parquet and each observation's terms in loo.parquet (what `fieldmc compare --loo`, the report and `fieldmc export --arviz` read); null for laplace and inla, which have no draws.
    OUTPUT_LOG_LIKELIHOOD = output.log_likelihood {
        value: ValueType::Bool,
        default: Default::Bool(false),
        keyed: Keyed::Never,
    },
    /// The posterior quantiles every job reports: probabilities strictly between 0 and 1, strictly increasing, at most three digits after the point, each naming its columns by its percentage without the point (0.05 -> q05, 0.5 -> q50, 0.025 -> q025, 0.975 -> q975): fields.parquet's intensity_q<percent>, sites.parquet's q<percent>, jobs.parquet's hyper_<name>_q<percent>, coef_<name>_q<percent> and coef_<name>_raw_q<percent>. Chains: numpy's default quantile (linear interpolation, R's type 7) of the draws; laplace and inla: of their gaussian marginals (coefficients) and INLA's smoothed marginals (hyperparameters). [0.025, 0.975] gives the central 95 % interval (docs/studies.md). Not part of a job's key: a rerun into a folder whose jobs finished with other quantiles reuses them (`fieldmc run --force` recomputes).
    OUTPUT_QUANTILES = output.quantiles {
        value: ValueType::Numbers,
        default: Default::Derived("`[0.05, 0.95]`"),
        keyed: Keyed::Never,
    },
}

/// The truth: the prior draw that generates simulated data.
pub(crate) const TRUTH: DataStream = DataStream {
    name: "truth",
    keys: &[
        DATA_LENGTH_SCALE,
        MODEL_GRID,
        MODEL_KERNEL,
        MODEL_VARIANCE,
        MODEL_WINDOW,
    ],
};

/// Which cells are observed (simulated data) or held out (csv and points data); never
/// `data.fold`, so the folds of `data.folds` share one order.
pub(crate) const OBSERVATIONS: DataStream = DataStream {
    name: "observations",
    keys: &[
        DATA_FOLDS,
        DATA_HOLDOUT,
        DATA_PATH,
        DATA_SOURCE,
        DATA_SUBSAMPLE,
        MODEL_GRID,
    ],
};

/// Which measurements at sites are held out (sites data): the file, its columns and the share
/// held out, never the grid, so that a study fitted on two grids scores the same sites (nor
/// `data.fold`, as for cells).
pub(crate) const HELD_OUT_SITES: DataStream = DataStream {
    name: "held_out_sites",
    keys: &[
        DATA_FOLDS,
        DATA_HOLDOUT,
        DATA_PATH,
        DATA_SOURCE,
        DATA_VALUE,
        DATA_X,
        DATA_Y,
    ],
};

/// Observation noise: standard normals the engine scales by `data.noise_sd`.
pub(crate) const NOISE: DataStream = DataStream {
    name: "noise",
    keys: &[DATA_SOURCE, DATA_SUBSAMPLE, MODEL_GRID],
};

/// Poisson counts or binomial successes given the truth: everything of the truth and the
/// observations, the offset, and the binomial trials (null, so absent from the key, for the
/// other likelihoods).
pub(crate) const COUNTS: DataStream = DataStream {
    name: "counts",
    keys: &[
        DATA_LENGTH_SCALE,
        MODEL_GRID,
        MODEL_KERNEL,
        MODEL_VARIANCE,
        MODEL_WINDOW,
        DATA_HOLDOUT,
        DATA_PATH,
        DATA_SOURCE,
        DATA_SUBSAMPLE,
        MODEL_OFFSET,
        DATA_TRIALS_PER_CELL,
    ],
};

/// The latent field's data streams, in the order a job's stream keys list them.
pub(crate) const DATA_STREAMS: &[DataStream] =
    &[TRUTH, OBSERVATIONS, HELD_OUT_SITES, NOISE, COUNTS];

/// What a job of real data holds out: fold `data.fold` of `data.folds` when folds are asked
/// for, else the share `data.holdout` (the resolver refuses both at once).
pub(crate) fn hold_out(settings: &crate::study::Settings) -> crate::model::data::HoldOut {
    use crate::model::data::HoldOut;
    match settings.int(DATA_FOLDS) {
        0 => HoldOut::Share(settings.float(DATA_HOLDOUT)),
        folds => HoldOut::Fold {
            folds: folds as usize,
            fold: settings.int(DATA_FOLD) as usize,
        },
    }
}
