//! A latent-field point, from settings to the job's spec: defaults that follow other keys, checks
//! that involve more than one key, the memory check (the estimate is in [`super::memory`]), the
//! data file checks (a grid CSV read, a points file read once per file, columns and window). Run
//! on every sweep point when a study is loaded, so a study that loads can be planned and run
//! without further validation. The sampler keys resolve in [`super::sampler_keys`], the
//! hyperparameters' in [`super::hyper_keys`], the binomial trials' in `binomial_keys`, a points
//! file in [`super::points_keys`], `model.region` in [`super::region_keys`], the marks on the
//! maps (`output.marks`) in [`super::marks_keys`], and the parameters the job's row and
//! canonical key show in [`super::params`].

use std::sync::Arc;

use super::binomial_keys::{check_binomial_keys, trials_column, trials_per_cell};
use super::centres::same_window;
use super::csv_values::Reading;
use super::exposure::{cached_grid, names_exposure, with_exposure};
use super::grid_csv::{Coverage, read_grid_columns};
use super::hyper_keys::{PRIOR_KEYS, hyper_priors, hyper_values_set, value_key};
use super::keys::*;
use super::marks_keys::marks;
use super::memory::{MEMORY_LIMIT_BYTES, estimated_job_bytes, format_bytes};
use super::points_keys::points_data;
use super::quantiles::Quantiles;
use super::region_keys::{check_region_source, on_grid, region_file};
use super::sampler_keys::{asks_for_hyper, auto_kind, sampler_settings};
use super::sites_keys::{default_sites_shape, predict_sites, sites_data};
use super::spec::{AUTO, LatentFieldSpec, NAME, OutputSpec};
use crate::model::covariates::Covariates;
use crate::model::grid::{Grid, Window};
use crate::model::hyper::coefficient_prior_sd;
use crate::model::hyper::joint::JointRoot;
use crate::model::hyper::{HyperName, fixed_values};
use crate::model::{
    DataSource, DataSpec, KernelKind, KernelSpec, LikelihoodKind, MeanSpec, ModelSpec,
};
use crate::sampler::hyper::{HyperUpdate, JointPreconditioner};
use crate::sampler::{Broken, SamplerKind, SamplerSpec, SpecError};
use crate::study::error::ErrorKind;
use crate::study::keys::{
    Applies, FIXED, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND, quoted_words,
};
use crate::study::shape::{self, GridShape, WindowSpec};
use crate::study::{Key, ParamValue, Resolver, Settings, StudyError, StudyKind};

/// How far (relative) a csv grid's `model.window` may change the data window's width / height:
/// a window rescales the data, it does not stretch it.
const WINDOW_ASPECT_TOLERANCE: f64 = 1e-3;

/// A latent-field point: defaults, cross-key checks, memory, data file.
pub(crate) fn resolve(
    settings: &Settings,
    resolver: &mut Resolver<'_>,
) -> Result<LatentFieldSpec, StudyError> {
    Resolution { resolver }.spec(settings)
}

/// The resolution of one latent-field point, with the checks it runs.
struct Resolution<'r, 's> {
    resolver: &'r mut Resolver<'s>,
}

impl Resolution<'_, '_> {
    fn spec(&mut self, settings: &Settings) -> Result<LatentFieldSpec, StudyError> {
        let words: Vec<&str> = [AUTO]
            .into_iter()
            .chain(SamplerKind::NAMES.iter().copied())
            .collect();
        let requested = self.resolver.sampler_kind(
            settings,
            NAME,
            None,
            |word| match word {
                AUTO => Some(None),
                word => SamplerKind::from_name(word).map(Some),
            },
            &words,
        )?;
        let likelihood = settings.choice(MODEL_LIKELIHOOD, LikelihoodKind::from_name);
        let sbc = self.resolver.kind() == StudyKind::Sbc;
        let joint = settings.given(SAMPLER_HYPER).is_some()
            && matches!(
                settings.choice(SAMPLER_HYPER, HyperUpdate::from_name),
                HyperUpdate::Joint | HyperUpdate::JointSpectral
            );
        let kind = requested.unwrap_or_else(|| auto_kind(asks_for_hyper(settings), joint, sbc));
        let source = settings.choice(DATA_SOURCE, DataSource::from_name);
        let is_real = source != DataSource::Simulated;
        self.reject_keys_of_other_source(settings, source)?;
        check_binomial_keys(self.resolver, settings, likelihood, source)?;
        if self.resolver.kind() == StudyKind::Sbc {
            self.check_sbc(settings, source)?;
        }
        let shape = match source {
            DataSource::Sites if settings.given(MODEL_GRID).is_none() => {
                self.sites_default_shape(settings, likelihood)?
            }
            _ => grid_shape(settings),
        };
        let cells = shape.cells();
        let observed = if is_real {
            cells - super::keys::hold_out(settings).held_of(cells as usize) as f64
        } else {
            (cells / settings.int(DATA_SUBSAMPLE).max(1) as f64).floor()
        };
        let sampler = sampler_settings(settings, kind, requested.is_none())
            .check()
            .map_err(|error| self.spec_error(settings, error))?;
        self.check_memory(settings, shape, likelihood, observed, &sampler)?;
        // Below the memory limit the grid has at most a few hundred million cells.
        let cells = cells as usize;
        if is_real {
            self.check_holdout(settings, cells)?;
        } else {
            self.check_subsample(settings, shape)?;
        }
        let region = region_file(self.resolver, settings, shape)?;
        let (data, data_window) = match source {
            DataSource::Csv => self.csv_data(settings, shape, likelihood)?,
            // The grid's window is model.window, or the region's bounding box.
            DataSource::Points => {
                let data =
                    points_data(self.resolver, settings, shape, likelihood, region.as_ref())?;
                (data, None)
            }
            DataSource::Sites => {
                let (data, window) =
                    sites_data(self.resolver, settings, shape, likelihood, region.as_ref())?;
                (data, Some(window))
            }
            DataSource::Simulated => {
                let data = DataSpec::Simulated {
                    truth_length_scale: truth_length_scale(settings),
                    subsample: settings.int(DATA_SUBSAMPLE) as usize,
                    trials: trials_per_cell(settings, likelihood),
                };
                (data, None)
            }
        };
        let grid = match (&region, settings.given(MODEL_WINDOW), data_window) {
            // No window given and none from the data: the region's bounding box.
            (Some(file), None, None) => {
                let (nx, ny) = shape.dims();
                Grid::over_window(nx, ny, file.region.bounding_box())
            }
            _ => self.grid(settings, shape, data_window)?,
        };
        let region = region
            .map(|file| on_grid(self.resolver, settings, file, &grid))
            .transpose()?;
        check_region_source(self.resolver, settings, source)?;
        let inside_fraction = region.as_ref().map(|r| &r.inside_fraction[..]);
        let data = with_exposure(
            self.resolver,
            settings,
            likelihood,
            data,
            &grid,
            inside_fraction,
        )?;
        let covariates = self.covariates(settings, &grid, &data)?;
        let mean = mean_spec(settings, source, likelihood);
        let model = ModelSpec {
            grid,
            kernel: KernelSpec {
                kind: settings.choice(MODEL_KERNEL, KernelKind::from_name),
                length_scale: model_length_scale(settings, source, &grid),
                variance: settings.float(MODEL_VARIANCE),
                length_scale_y: settings.given_float(MODEL_LENGTH_SCALE_Y),
            },
            likelihood,
            noise_sd: settings.float(DATA_NOISE_SD),
            offset: offset(settings, source, &grid),
            evidence_draws: settings.int(MODEL_EVIDENCE_DRAWS) as usize,
            mean,
            hyper: hyper_priors(settings).starting_where_set(hyper_values_set(settings, mean)),
            covariates,
        };
        self.check_hyper(settings, &model, &sampler)?;
        let output = OutputSpec {
            field_draws: settings.int(OUTPUT_FIELD_DRAWS) as usize,
            cell_draws: settings.int(OUTPUT_CELL_DRAWS) as usize,
            log_likelihood: settings.bool(OUTPUT_LOG_LIKELIHOOD).unwrap_or(false),
            exceedance: self.exceedance_thresholds(settings)?,
            quantiles: self.quantiles(settings)?,
            marks: marks(self.resolver, settings, shape, &model.grid)?,
            predict_sites: predict_sites(self.resolver, settings, shape, &model.grid)?,
        };
        Ok(LatentFieldSpec {
            model,
            data,
            sampler,
            output,
            region,
        })
    }

    /// The grid of a sites study that gives no `model.grid` ([`default_sites_shape`]) over the
    /// sites' window (the sites read once here; [`sites_data`] finds the read cached), for the
    /// smaller of the length scales given (a tenth of the window's longer side when none is).
    fn sites_default_shape(
        &mut self,
        settings: &Settings,
        likelihood: LikelihoodKind,
    ) -> Result<GridShape, StudyError> {
        let provisional = grid_shape(settings);
        let region = region_file(self.resolver, settings, provisional)?;
        let (_, window) = sites_data(
            self.resolver,
            settings,
            provisional,
            likelihood,
            region.as_ref(),
        )?;
        let longer = (window.x.1 - window.x.0).max(window.y.1 - window.y.0);
        let length_scale = match settings.given(MODEL_LENGTH_SCALE) {
            Some(_) => settings.float(MODEL_LENGTH_SCALE),
            None => REAL_LENGTH_SCALE_SHARE * longer,
        };
        let smallest = settings
            .given_float(MODEL_LENGTH_SCALE_Y)
            .map_or(length_scale, |y| y.min(length_scale));
        let priors = hyper_priors(settings);
        Ok(default_sites_shape(
            &window,
            smallest,
            priors.prior(HyperName::LengthScale),
        ))
    }

    /// The rules between the `model.*_prior` keys, `sampler.hyper` and the model.
    fn check_hyper(
        &self,
        settings: &Settings,
        model: &ModelSpec,
        sampler: &SamplerSpec,
    ) -> Result<(), StudyError> {
        let update = sampler.hyper().update;
        let given: Vec<Key> = PRIOR_KEYS
            .iter()
            .map(|&(key, _)| key)
            .filter(|&key| settings.text(key) != FIXED)
            .collect();
        let conflict = |keys: &[Key], message: String, help: String| {
            Err(self
                .resolver
                .error_at(settings, keys, ErrorKind::Conflict, message)
                .help(help))
        };
        // A value the study set is where the chains start: it must be one the prior allows.
        let model_values = fixed_values(model, 0.0);
        for &(_, name) in &PRIOR_KEYS {
            let key = value_key(name);
            let (Some(prior), Some(_)) = (model.hyper.prior(name), settings.given(key)) else {
                continue;
            };
            if name == HyperName::Mean && !matches!(model.mean, MeanSpec::Value(_)) {
                continue;
            }
            let value = model_values.get(name);
            if !prior.log_density(value).is_finite() {
                return Err(self
                    .resolver
                    .error_at(
                        settings,
                        &[key],
                        ErrorKind::Conflict,
                        format!(
                            "{} = {value} is where the chains start the inferred {name}, but its \
                             prior {} puts no mass there",
                            key.dotted(),
                            prior.canonical()
                        ),
                    )
                    .help(format!(
                        "give a start inside the prior's support, or leave {} out to start at \
                         the prior's median {}",
                        key.dotted(),
                        prior.median()
                    )));
            }
        }
        // The chains' first prior (the mean only shifts it, so any mean will do): a covariance
        // that cannot be factored there (extreme prior parameters) is refused now, not mid-run.
        if model.hyper.any()
            && let Err(error) =
                crate::model::hyper::prior_at(model, &model.hyper.chain_start(model_values))
        {
            return conflict(
                &given,
                format!("the chains cannot start: the prior at their first hyperparameters fails ({error})"),
                "give priors whose median (or the study's value) is a usable length scale and variance".into(),
            );
        }
        let kind = sampler.kind();
        if kind == SamplerKind::Inla && given.is_empty() {
            return conflict(
                &[SAMPLER_KIND],
                "sampler.kind = \"inla\" integrates over the inferred hyperparameters, but no \
                 hyperparameter has a prior"
                    .into(),
                "give model.length_scale_prior, model.variance_prior or model.mean_prior, or use \
                 kind = \"laplace\" with every hyperparameter fixed"
                    .into(),
            );
        }
        if let Some(&key) = given.first()
            && update == HyperUpdate::None
            && kind != SamplerKind::Inla
        {
            if !kind.is_markov_chain() {
                return conflict(
                    &[key, SAMPLER_KIND],
                    format!(
                        "{} gives a prior, but the {kind} approximation fixes every hyperparameter",
                        key.dotted()
                    ),
                    "use sampler.kind = \"inla\" to integrate over it, or remove the prior".into(),
                );
            }
            return conflict(
                &[key, SAMPLER_HYPER],
                format!(
                    "{} gives a prior, so the chains infer it, but sampler.hyper = \"none\"",
                    key.dotted()
                ),
                {
                    let inferred: Vec<HyperName> = model.hyper.names().collect();
                    let updates = HyperUpdate::names_inferring(&inferred);
                    let inla = if inferred.contains(&HyperName::NoiseSd) {
                        ""
                    } else {
                        ", or use sampler.kind = \"inla\""
                    };
                    format!(
                        "say how the chains update it: sampler.hyper = {}{inla}",
                        quoted_words(&updates)
                    )
                },
            );
        }
        if given.is_empty() && update != HyperUpdate::None {
            return conflict(
                &[SAMPLER_HYPER],
                format!("sampler.hyper = \"{update}\" but no hyperparameter has a prior"),
                "give model.length_scale_prior, model.variance_prior or model.mean_prior, or remove sampler.hyper".into(),
            );
        }
        for &(key, name) in &PRIOR_KEYS {
            let Some(prior) = model.hyper.prior(name) else {
                continue;
            };
            if name != HyperName::Mean && !prior.is_positive() {
                return conflict(
                    &[key],
                    format!(
                        "{} = \"{}\" puts mass on values <= 0, but the {name} is positive",
                        key.dotted(),
                        prior.canonical()
                    ),
                    "use log-normal, gamma, inverse-gamma, half-normal, or uniform with low >= 0"
                        .into(),
                );
            }
        }
        if model.hyper.prior(HyperName::NoiseSd).is_some() {
            self.check_noise_prior(settings, model, kind, update)?;
        }
        let separable = model.kernel.kind.is_separable_on(model.grid);
        let anisotropic = [MODEL_LENGTH_SCALE_Y, MODEL_LENGTH_SCALE_Y_PRIOR]
            .into_iter()
            .find(|&key| settings.given(key).is_some());
        if let Some(key) = anisotropic
            && !separable
        {
            return conflict(
                &[key, MODEL_KERNEL],
                format!(
                    "{} gives the kernel a length scale along y, but only the squared-exponential kernel has one per axis on a 2-D grid (the {} kernel is a circulant embedding)",
                    key.dotted(),
                    model.kernel.kind
                ),
                "use model.kernel = \"squared-exponential\", or one length scale".into(),
            );
        }
        if !given.is_empty() && !separable && update != HyperUpdate::Joint {
            return conflict(
                &[given[0], MODEL_KERNEL],
                format!(
                    "inferring hyperparameters with sampler.hyper = \"{update}\" needs a separable prior (a Kronecker product), but the {} kernel on a 2-D grid is a circulant embedding whose torus changes with the length scale",
                    model.kernel.kind
                ),
                "use sampler.hyper = \"joint\" (one torus for the whole chain), model.kernel = \"squared-exponential\" (or a 1-D grid), or fix the hyperparameters".into(),
            );
        }
        if !given.is_empty() && !separable {
            if sampler.hyper().preconditioner == JointPreconditioner::Laplace {
                return conflict(
                    &[SAMPLER_HYPER_PRECONDITIONER, MODEL_KERNEL],
                    format!(
                        "sampler.hyper_preconditioner = \"laplace\" needs a separable prior, but the {} kernel on a 2-D grid is a circulant embedding",
                        model.kernel.kind
                    ),
                    "remove sampler.hyper_preconditioner, or use model.kernel = \"squared-exponential\"".into(),
                );
            }
            if let Err(error) =
                JointRoot::for_model(model, model.hyper.chain_start(fixed_values(model, 0.0)))
            {
                return conflict(
                    &[MODEL_KERNEL],
                    error.to_string(),
                    "use model.kernel = \"squared-exponential\"".into(),
                );
            }
        }
        Ok(())
    }

    /// `model.noise_sd_prior`: the gaussian likelihood's noise sd, inferred by the joint updates
    /// (the others hold the likelihood fixed; INLA's grid does not include it).
    fn check_noise_prior(
        &self,
        settings: &Settings,
        model: &ModelSpec,
        kind: SamplerKind,
        update: HyperUpdate,
    ) -> Result<(), StudyError> {
        let refuse = |keys: &[Key], message: String, help: &str| {
            Err(self
                .resolver
                .error_at(settings, keys, ErrorKind::Conflict, message)
                .help(help.to_string()))
        };
        if model.likelihood != LikelihoodKind::Gaussian {
            return refuse(
                &[MODEL_NOISE_SD_PRIOR, MODEL_LIKELIHOOD],
                format!(
                    "model.noise_sd_prior infers the gaussian likelihood's noise sd, but the likelihood is {}",
                    model.likelihood
                ),
                "remove model.noise_sd_prior (a probit link's noise sd is not identified apart from the field's variance)",
            );
        }
        if kind == SamplerKind::Inla || !update.infers(HyperName::NoiseSd) {
            let updates = HyperUpdate::names_inferring(&[HyperName::NoiseSd]);
            return refuse(
                &[MODEL_NOISE_SD_PRIOR, SAMPLER_HYPER],
                format!(
                    "model.noise_sd_prior is inferred by sampler.hyper = {}, but the study has sampler.kind = \"{kind}\" with sampler.hyper = \"{update}\"",
                    quoted_words(&updates)
                ),
                "use sampler.kind = \"nuts\" with sampler.hyper = \"joint\", or fix the noise sd with data.noise_sd",
            );
        }
        Ok(())
    }

    fn reject_keys_of_other_source(
        &self,
        settings: &Settings,
        source: DataSource,
    ) -> Result<(), StudyError> {
        for &key in KEYS {
            let Applies::Source(only) = key.applies() else {
                continue;
            };
            if settings.given(key).is_none() {
                continue;
            }
            if !only.contains(&source.name()) {
                let words: Vec<String> = only.iter().map(|w| format!("\"{w}\"")).collect();
                let words = words.join(" or ");
                return Err(self
                    .resolver
                    .error_at(
                        settings,
                        &[key],
                        ErrorKind::Conflict,
                        format!(
                            "`{}` applies only to data.source = {words}, but the source is \"{source}\"",
                            key.dotted()
                        ),
                    )
                    .help(format!("remove it, or set source = {words} under [data]")));
            }
        }
        Ok(())
    }

    fn check_sbc(&self, settings: &Settings, source: DataSource) -> Result<(), StudyError> {
        if source != DataSource::Simulated {
            return Err(self
                .resolver
                .error_at(
                    settings,
                    &[DATA_SOURCE],
                    ErrorKind::Conflict,
                    format!(
                        "simulation-based calibration needs simulated data, not data.source = \"{source}\""
                    ),
                )
                .help("SBC draws each truth from the model's prior; use source = \"simulated\""));
        }
        if let Some(given) = settings.given(DATA_LENGTH_SCALE)
            && given.value != ParamValue::Float(simulated_length_scale(settings))
        {
            return Err(self
                .resolver
                .error_at(
                    settings,
                    &[DATA_LENGTH_SCALE],
                    ErrorKind::Conflict,
                    "simulation-based calibration draws the truth from the model's own prior, so \
                     data.length_scale must equal model.length_scale",
                )
                .help("remove data.length_scale; it follows model.length_scale"));
        }
        Ok(())
    }

    fn check_memory(
        &self,
        settings: &Settings,
        shape: GridShape,
        likelihood: LikelihoodKind,
        observed: f64,
        sampler: &SamplerSpec,
    ) -> Result<(), StudyError> {
        let (chains, kept) = match sampler.kind().is_markov_chain() {
            true => (sampler.chains() as f64, sampler.schedule().kept() as f64),
            false => (1.0, 0.0),
        };
        let bytes = estimated_job_bytes(shape.cells(), chains, kept, likelihood, observed);
        if bytes <= MEMORY_LIMIT_BYTES {
            return Ok(());
        }
        let message = format!(
            "a job on a {} grid with {chains} chain(s) needs an estimated {} of memory, above the limit of {}",
            shape.describe(),
            format_bytes(bytes),
            format_bytes(MEMORY_LIMIT_BYTES)
        );
        let keys = [MODEL_GRID, SAMPLER_CHAINS, SAMPLER_ITERATIONS];
        Err(self.resolver.error_at(settings, &keys, ErrorKind::TooLarge, message)
            .note("estimate: 8 N (16 chains + 8) bytes, 80 bytes per kept iteration of each chain, plus 8 min(M, 2500)^2 for the exact gaussian posterior")
            .help("use a smaller grid, fewer chains or fewer iterations"))
    }

    fn check_subsample(&self, settings: &Settings, shape: GridShape) -> Result<(), StudyError> {
        let subsample = settings.int(DATA_SUBSAMPLE);
        let cells = shape.cells() as u64;
        if subsample as u64 <= cells {
            return Ok(());
        }
        let message = format!(
            "data.subsample = {subsample} leaves no observed cell on a {} grid ({cells} cells)",
            shape.describe()
        );
        let keys = [DATA_SUBSAMPLE, MODEL_GRID];
        Err(self
            .resolver
            .error_at(settings, &keys, ErrorKind::Conflict, message)
            .allowed(format!("a subsample from 1 to {cells} on this grid")))
    }

    fn check_holdout(&self, settings: &Settings, cells: usize) -> Result<(), StudyError> {
        self.check_folds(settings)?;
        let hold = super::keys::hold_out(settings);
        if hold.held_of(cells) < cells {
            return Ok(());
        }
        let holdout = settings.float(DATA_HOLDOUT);
        Err(self
            .resolver
            .error_at(
                settings,
                &[DATA_HOLDOUT, MODEL_GRID],
                ErrorKind::Conflict,
                format!(
                    "data.holdout = {holdout:?} holds out all {cells} cells, leaving none to fit"
                ),
            )
            .help("use a smaller holdout"))
    }

    /// `data.folds` is 0 or at least 2, not given with `data.holdout`, and `data.fold` names one
    /// of its folds.
    fn check_folds(&self, settings: &Settings) -> Result<(), StudyError> {
        let (folds, fold) = (settings.int(DATA_FOLDS), settings.int(DATA_FOLD));
        let refuse = |keys: &[Key], message: String, help: &str| {
            Err(self
                .resolver
                .error_at(settings, keys, ErrorKind::Conflict, message)
                .help(help.to_string()))
        };
        if folds == 1 {
            return refuse(
                &[DATA_FOLDS],
                "data.folds = 1 would hold out every observation".into(),
                "use 0 (no folds) or K >= 2",
            );
        }
        if folds > 0 && settings.float(DATA_HOLDOUT) > 0.0 {
            return refuse(
                &[DATA_FOLDS, DATA_HOLDOUT],
                "data.folds and data.holdout both choose what is held out".into(),
                "K-fold: data.folds = K and a sweep over data.fold; or one share: data.holdout",
            );
        }
        if fold >= folds.max(1) {
            return refuse(
                &[DATA_FOLD, DATA_FOLDS],
                format!("data.fold = {fold} is not a fold of data.folds = {folds}"),
                "folds are numbered 0 to data.folds - 1",
            );
        }
        Ok(())
    }

    /// A spec's rule broken, located at the first of its keys written in the file.
    fn spec_error(&self, settings: &Settings, error: SpecError) -> StudyError {
        let keys: Vec<Key> = std::iter::once(error.key)
            .chain(error.related.iter().copied())
            .filter_map(|dotted| self.resolver.keys().from_dotted(dotted))
            .collect();
        let kind = match error.broken {
            Broken::Range => ErrorKind::OutOfRange,
            Broken::Conflict => ErrorKind::Conflict,
        };
        let located = self.resolver.error_at(settings, &keys, kind, error.message);
        let located = match error.allowed {
            Some(allowed) => located.allowed(allowed),
            None => located,
        };
        located.maybe_help(error.help)
    }

    /// The csv data of a point and the window its cell centres give (None when it has none).
    fn csv_data(
        &mut self,
        settings: &Settings,
        shape: GridShape,
        likelihood: LikelihoodKind,
    ) -> Result<(DataSpec, Option<Window>), StudyError> {
        let Some(written) = settings.given(DATA_PATH).map(|s| s.value.to_string()) else {
            return Err(self.resolver.error_at(
                settings,
                &[DATA_SOURCE],
                ErrorKind::Conflict,
                "data.source = \"csv\" needs data.path")
                .help("add path = \"data/your_grid.csv\" under [data] (relative to the study file's folder)"));
        };
        let path = self.resolver.study_dir().join(&written);
        let column = data_column(settings, likelihood);
        let trials = trials_column(settings, likelihood);
        let columns = (column.as_str(), trials.as_deref());
        let outcome = cached_grid(self.resolver, &path, columns, shape.dims(), likelihood);
        let window = match outcome.map(|data| data.window) {
            Ok(window) => window,
            Err(problem) => {
                return Err(self.resolver.error_at(
                    settings,
                    &[DATA_PATH],
                    ErrorKind::Data,
                    format!("bad data file: {problem}"),
                ));
            }
        };
        let data = DataSpec::Csv {
            path,
            column,
            trials,
            holdout: super::keys::hold_out(settings),
            exposure: None,
        };
        Ok((data, window))
    }

    /// `output.exceedance`: thresholds of the relative risk, each > 0.
    fn exceedance_thresholds(&self, settings: &Settings) -> Result<Vec<f64>, StudyError> {
        let Some(given) = settings.given(OUTPUT_EXCEEDANCE) else {
            return Ok(Vec::new());
        };
        let thresholds = crate::study::parse_numbers(&given.value.to_string());
        match thresholds.iter().find(|t| t.is_nan() || **t <= 0.0) {
            Some(bad) => Err(self
                .resolver
                .error_at(
                    settings,
                    &[OUTPUT_EXCEEDANCE],
                    ErrorKind::OutOfRange,
                    format!("output.exceedance holds {bad}: a relative risk's threshold is > 0"),
                )
                .allowed("numbers > 0, e.g. [1.5, 2]")),
            None => Ok(thresholds),
        }
    }

    /// `output.quantiles`: the default pair, or the probabilities given (see [`Quantiles::new`]).
    fn quantiles(&self, settings: &Settings) -> Result<Quantiles, StudyError> {
        let Some(given) = settings.given(OUTPUT_QUANTILES) else {
            return Ok(Quantiles::default_pair());
        };
        Quantiles::new(&crate::study::parse_numbers(&given.value.to_string())).map_err(|error| {
            self.resolver
                .error_at(
                    settings,
                    &[OUTPUT_QUANTILES],
                    ErrorKind::OutOfRange,
                    error.to_string(),
                )
                .allowed(
                    "increasing probabilities strictly between 0 and 1, at most three digits \
                     after the point, e.g. [0.025, 0.5, 0.975]",
                )
        })
    }

    /// The covariates of a point (`data.covariates`), read from `data.covariates_path` or the
    /// grid CSV itself at the grid's size, standardised unless `data.standardize = false`: every
    /// problem an error located at the key it comes from.
    fn covariates(
        &mut self,
        settings: &Settings,
        grid: &Grid,
        data: &DataSpec,
    ) -> Result<Option<Arc<Covariates>>, StudyError> {
        let Some(given) = settings.given(DATA_COVARIATES) else {
            if settings.given(DATA_COVARIATES_PATH).is_some() && !names_exposure(settings) {
                return Err(self
                    .resolver
                    .error_at(
                        settings,
                        &[DATA_COVARIATES_PATH],
                        ErrorKind::Conflict,
                        "data.covariates_path is given but data.covariates names no covariate \
                         (and data.exposure, data.offset no column)",
                    )
                    .help(
                        "add covariates = [\"name\", ...] under [data], or remove covariates_path",
                    ));
            }
            return Ok(None);
        };
        let names = crate::study::parse_words(&given.value.to_string());
        let path = match (settings.given(DATA_COVARIATES_PATH), data) {
            (Some(written), _) => self.resolver.study_dir().join(written.value.to_string()),
            (None, DataSpec::Csv { path, .. }) => path.clone(),
            (None, _) => {
                return Err(self
                    .resolver
                    .error_at(
                        settings,
                        &[DATA_COVARIATES],
                        ErrorKind::Conflict,
                        format!(
                            "data.covariates needs data.covariates_path for {} data (a grid CSV \
                             with columns i, j, {})",
                            data.source(),
                            names.join(", ")
                        ),
                    )
                    .help("add covariates_path = \"data/your_covariates.csv\" under [data]"));
            }
        };
        let dims = (grid.nx(), grid.ny());
        let cache_key = format!("covariates {path:?} {names:?} {dims:?}");
        let read = self.resolver.cached(cache_key, || {
            let wanted: Vec<(&str, Reading)> = names
                .iter()
                .map(|name| (name.as_str(), Reading::Covariate))
                .collect();
            read_grid_columns(&path, &wanted, dims, Coverage::Every)
                .map(|grid| {
                    // Every cell of every covariate: what `Coverage::Every` reads.
                    let columns: Vec<Vec<f64>> = grid
                        .columns
                        .into_iter()
                        .map(|column| column.into_iter().flatten().collect())
                        .collect();
                    (columns, grid.window)
                })
                .map_err(|e| e.to_string())
        });
        let key = if settings.given(DATA_COVARIATES_PATH).is_some() {
            DATA_COVARIATES_PATH
        } else {
            DATA_PATH
        };
        let file_error = |resolver: &Resolver<'_>, problem: String| {
            resolver.error_at(
                settings,
                &[key],
                ErrorKind::Data,
                format!("bad covariates file: {problem}"),
            )
        };
        let (columns, window) = read.map_err(|problem| file_error(self.resolver, problem))?;
        if let Some(window) = window
            && !same_window(&window, &grid.window())
        {
            return Err(file_error(
                self.resolver,
                format!(
                    "{}: its cell centres tile {}, but the study's grid tiles {}: the covariates \
                     must be given on the study's grid",
                    path.display(),
                    shape::window_text(&window, false),
                    shape::window_text(&grid.window(), false)
                ),
            ));
        }
        let prior_sd = coefficient_prior_sd(&settings.text(MODEL_COEFFICIENT_PRIOR))
            .expect("validated coefficient prior");
        let standardize = settings.bool(DATA_STANDARDIZE).unwrap_or(true);
        let raw = names.into_iter().zip(columns).collect();
        let shown = path.display().to_string();
        Covariates::new(raw, grid.cells(), standardize, prior_sd, path)
            .map(|c| Some(Arc::new(c)))
            .map_err(|e| {
                let message = format!("bad covariates in {shown}: {e}");
                self.resolver
                    .error_at(settings, &[DATA_COVARIATES], ErrorKind::Data, message)
            })
    }

    /// The grid with its window: `model.window` if given (for csv data it must keep the data's
    /// aspect ratio: it rescales the data's window), else the data's window, else the default.
    fn grid(
        &self,
        settings: &Settings,
        shape: GridShape,
        data_window: Option<Window>,
    ) -> Result<Grid, StudyError> {
        let (nx, ny) = shape.dims();
        let Some(given) = settings.given(MODEL_WINDOW) else {
            return Ok(match data_window {
                Some(window) => Grid::over_window(nx, ny, window),
                None => shape.default_grid(),
            });
        };
        let window_conflict = |message: String| {
            let keys = [MODEL_WINDOW];
            self.resolver
                .error_at(settings, &keys, ErrorKind::Conflict, message)
        };
        let spec = WindowSpec::from_param(&given.value).expect("validated window");
        if spec.y.is_some() == shape.is_line() {
            let wanted = if shape.is_line() {
                "[[x0, x1]] for a 1-D grid"
            } else {
                "[[x0, x1], [y0, y1]] for a 2-D grid"
            };
            let message = format!(
                "model.window = {} does not fit the {} grid",
                given.value,
                shape.describe()
            );
            return Err(window_conflict(message).allowed(wanted));
        }
        let window = spec.window();
        if let Some(data) = data_window
            && !shape.is_line()
        {
            let aspect = |w: &Window| (w.x.1 - w.x.0) / (w.y.1 - w.y.0);
            let (wanted, found) = (aspect(&data), aspect(&window));
            if ((found - wanted) / wanted).abs() > WINDOW_ASPECT_TOLERANCE {
                let message = format!(
                    "model.window = {} has width / height {found:.6}, but the data's window {} \
                     (from its cell centres) has {wanted:.6}: a window for csv data rescales the \
                     data's window and must keep its shape (to 0.1%)",
                    given.value,
                    shape::window_text(&data, false)
                );
                return Err(window_conflict(message).help(format!(
                    "remove model.window to use the data's own units, or give a window of \
                     width / height {wanted:.6}"
                )));
            }
        }
        Ok(Grid::over_window(nx, ny, window))
    }
}

/// `model.grid` as a shape (validation admits only sizes >= 1).
fn grid_shape(settings: &Settings) -> GridShape {
    GridShape::from_param(&settings.value(MODEL_GRID)).expect("validated grid")
}

/// `model.offset`: a number, or "log-area", the log of the grid's cell area; not given, the
/// log area for points data (so the field is a log intensity per unit area) and 0 otherwise.
fn offset(settings: &Settings, source: DataSource, grid: &Grid) -> f64 {
    match settings.given(MODEL_OFFSET).map(|s| &s.value) {
        Some(ParamValue::Text(_)) => grid.cell_area().ln(),
        Some(_) => settings.float(MODEL_OFFSET),
        None if source == DataSource::Points => grid.cell_area().ln(),
        None => 0.0,
    }
}

/// The truth's length scale: data.length_scale if given, else the model's.
pub(super) fn truth_length_scale(settings: &Settings) -> f64 {
    match settings.given(DATA_LENGTH_SCALE) {
        Some(_) => settings.float(DATA_LENGTH_SCALE),
        None => simulated_length_scale(settings),
    }
}

/// `model.length_scale` where the study leaves it out on simulated data (the unit window).
pub(crate) const SIMULATED_LENGTH_SCALE: f64 = 0.3;

/// The share of the window's longer side that `model.length_scale` is for real data where the
/// study leaves it out: a field correlated over a few cells at D = 32, whatever the data's
/// units (the shipped unit-window studies use 0.1).
pub(crate) const REAL_LENGTH_SCALE_SHARE: f64 = 0.1;

/// `model.length_scale` of simulated data: given, or [`SIMULATED_LENGTH_SCALE`].
fn simulated_length_scale(settings: &Settings) -> f64 {
    match settings.given(MODEL_LENGTH_SCALE) {
        Some(_) => settings.float(MODEL_LENGTH_SCALE),
        None => SIMULATED_LENGTH_SCALE,
    }
}

/// `model.length_scale`: given, or for real data a [`REAL_LENGTH_SCALE_SHARE`] of the window's
/// longer side (in the data's units) but at least a cell's longer side (on a coarse grid a
/// tenth of the window would leave neighbouring cells nearly uncorrelated), for simulated data
/// [`SIMULATED_LENGTH_SCALE`].
fn model_length_scale(settings: &Settings, source: DataSource, grid: &Grid) -> f64 {
    if settings.given(MODEL_LENGTH_SCALE).is_some() || source == DataSource::Simulated {
        return simulated_length_scale(settings);
    }
    let window = grid.window();
    let longer = (window.x.1 - window.x.0).max(window.y.1 - window.y.0);
    let (hx, hy) = grid.spacing();
    (REAL_LENGTH_SCALE_SHARE * longer).max(hx.max(hy))
}

/// The CSV column: data.column if given, else by likelihood.
pub(super) fn data_column(settings: &Settings, likelihood: LikelihoodKind) -> String {
    match settings.given(DATA_COLUMN) {
        Some(_) => settings.text(DATA_COLUMN),
        None => default_column(likelihood).to_string(),
    }
}

/// The CSV column a likelihood reads by default.
pub(crate) fn default_column(likelihood: LikelihoodKind) -> &'static str {
    match likelihood {
        LikelihoodKind::Poisson | LikelihoodKind::Binomial => "count",
        LikelihoodKind::Probit => "label",
        LikelihoodKind::Gaussian => "value",
    }
}

/// `model.mean`: a number, "auto", or by default "auto" for real counts, binomial successes and
/// gaussian values and 0 otherwise (a simulated truth has mean 0, probit labels carry no
/// level).
fn mean_spec(settings: &Settings, source: DataSource, likelihood: LikelihoodKind) -> MeanSpec {
    match settings.value(MODEL_MEAN) {
        ParamValue::Float(mean) => MeanSpec::Value(mean),
        ParamValue::Text(_) => MeanSpec::Auto,
        _ => default_mean(source, likelihood),
    }
}

pub(super) fn default_mean(source: DataSource, likelihood: LikelihoodKind) -> MeanSpec {
    match (source, likelihood) {
        (
            DataSource::Csv | DataSource::Sites,
            LikelihoodKind::Poisson | LikelihoodKind::Binomial | LikelihoodKind::Gaussian,
        )
        | (DataSource::Points, LikelihoodKind::Poisson) => MeanSpec::Auto,
        _ => MeanSpec::Value(0.0),
    }
}

pub(super) fn mean_param(mean: MeanSpec) -> ParamValue {
    match mean {
        MeanSpec::Auto => ParamValue::text("auto"),
        MeanSpec::Value(mean) => ParamValue::Float(mean),
    }
}
