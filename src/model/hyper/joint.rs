//! The joint posterior of the hyperparameters, the coefficients and the whitened field, with its
//! gradient: what a gradient-based chain needs to move them all at once (`sampler.hyper =
//! "joint"`).
//!
//! In the non-centred form a statistician writes for Stan or BlackJAX,
//!
//!   u = mean + sqrt(variance) S(l) xi + X (s z_beta),   xi ~ N(0, I), z_beta ~ N(0, I),
//!
//! with S(l) the separable prior's symmetric root ([`crate::model::prior::differentiable`]),
//! tabulated in log l ([`crate::model::prior::root_table`]: exact at a lattice of length scales,
//! cubic Hermite in between, within 1e-10 of the exact root, so no gradient pays an
//! eigendecomposition), the log posterior density of q = (xi, z_beta, z_theta) is
//!
//!   loglik(G u) - |xi|^2 / 2 - |z_beta|^2 / 2 + log p(z_theta),
//!
//! z_theta the inferred hyperparameters' unconstrained coordinates (log for positive ones) and
//! log p(z_theta) their prior with its Jacobian. With g = G^T d loglik / d(G u) and
//! w = sqrt(variance) S xi, the gradient is
//!
//! - xi: sqrt(variance) S g - xi; z_beta: s X^T g - z_beta;
//! - log variance: <g, w> / 2; mean: sum g;
//! - log l (and log l_y): sqrt(variance) d<g, S(l) xi> / d log l, exact;
//! - log s, an inferred gaussian noise sd: |y - G u|^2 / s^2 - M, the likelihood then being
//!   evaluated at the point's s with its -M log s ([`Likelihood::gaussian_at_noise`]);
//!
//! each chained through dx/dz and added to the prior's slope. Every hyperparameter not inferred
//! keeps its value in `base`.
//!
//! **The mean is centred on the field's average.** With a length scale near the window, the
//! field's smooth modes and the mean describe the same thing (the overall level), and in the
//! non-centred coordinates that is a ridge whose direction moves with (l, variance): on the
//! Lansing counts NUTS diverged thousands of times and the mean's R-hat stayed above 1.2. So an
//! inferred mean on the whole line (a normal prior) is held as m' = mean + avg(w), avg over the
//! grid's cells, the level the data see; mean = m' - avg(w). The map (m', xi, theta) -> (mean,
//! xi, theta) is a shift with unit Jacobian, so the posterior is the same. u = m' + w - avg(w),
//! and with s the mean prior's slope the gradients become: w's, h = g - (sum g + s) / N (so xi's is
//! sqrt(variance) S h - xi, and the variance's and length scales' use h for g); m''s,
//! sum g + s. The coefficients' gradient keeps g (their effect is not averaged out).
//!
//! The layout of q puts xi and z_beta first, as every other kind
//! holds them, so the driver reads coefficients from a joint position as from any other.

use std::sync::Arc;

use faer::Mat;

use super::distribution::Support;
use super::{HyperName, HyperPrior, HyperPriors, Hyperparameters};
use crate::model::covariates::Covariates;
use crate::model::grid::Grid;
use crate::model::laplace::cg::dot;
use crate::model::likelihood::Likelihood;
use crate::model::prior::PriorError;
use crate::model::prior::circulant_root::{CirculantRoot, CirculantWork};
use crate::model::prior::differentiable::{LengthScaleSlopes, RootWork, SeparableRoot};
use crate::model::prior::root_table::SeparableTable;
use crate::model::spec::{LikelihoodKind, ModelSpec};
use crate::model::target::Observed;

/// A fixed linear change of the whitened coordinates, xi = A eta with
/// A = I - V diag(d) V^T (V orthonormal columns, 0 <= d < 1), A symmetric with
/// A^-1 = I + V diag(d / (1 - d)) V^T. With d_k = 1 - (1 + lambda_k)^(-1/2), lambda_k the misfit
/// Hessian's eigenvalues at a Laplace fit, eta has unit scale along the stiffest directions of the
/// field's posterior: a dense, low-rank mass matrix NUTS cannot learn from its diagonal. Its
/// Jacobian is constant, so the joint density in eta differs by a constant only.
#[derive(Debug, Clone)]
pub(crate) struct Preconditioner {
    vectors: Mat<f64>,
    shrink: Vec<f64>,
}

impl Preconditioner {
    /// From eigenpairs (the columns of `vectors`, orthonormal) of the misfit Hessian.
    pub(crate) fn from_eigenpairs(vectors: Mat<f64>, values: &[f64]) -> Self {
        let shrink = values
            .iter()
            .map(|&lambda| 1.0 - 1.0 / (1.0 + lambda.max(0.0)).sqrt())
            .collect();
        Self { vectors, shrink }
    }

    /// out = A x.
    pub(crate) fn apply(&self, x: &[f64], out: &mut [f64]) {
        self.low_rank(x, out, |d| -d);
    }

    /// out = A^-1 x.
    pub(crate) fn apply_inverse(&self, x: &[f64], out: &mut [f64]) {
        self.low_rank(x, out, |d| d / (1.0 - d));
    }

    /// out = x + V diag(f(d)) V^T x.
    fn low_rank(&self, x: &[f64], out: &mut [f64], f: impl Fn(f64) -> f64) {
        out.copy_from_slice(x);
        crate::simd_state::clear_upper_state();
        for (k, &d) in self.shrink.iter().enumerate() {
            let column = self.vectors.col(k);
            let mut projection = 0.0;
            for (i, &xi) in x.iter().enumerate() {
                projection += column[i] * xi;
            }
            let scale = f(d) * projection;
            for (i, o) in out.iter_mut().enumerate() {
                *o += scale * column[i];
            }
        }
    }
}

/// How q is laid out for the joint chains, shared by [`JointDensity`] and
/// [`super::spectral_joint::SpectralJointDensity`]: the field's N coordinates, then the
/// coefficients', then the unconstrained hyperparameters; `base` holds the values of those not
/// inferred.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JointLayout<'a> {
    pub(crate) model: &'a ModelSpec,
    pub(crate) base: Hyperparameters,
    /// The whitened field's coordinates: the grid's cells, or a circulant root's torus cells.
    pub(crate) field_dim: usize,
}

impl<'a> JointLayout<'a> {
    /// The layout of a field with one whitened coordinate a cell.
    pub(crate) fn new(model: &'a ModelSpec, base: Hyperparameters) -> Self {
        Self {
            model,
            base,
            field_dim: model.grid.cells(),
        }
    }

    pub(crate) fn priors(&self) -> &HyperPriors {
        &self.model.hyper
    }

    pub(crate) fn covariates(&self) -> Option<&Covariates> {
        self.model.covariates.as_deref()
    }

    /// The whitened field's coordinates: the first values of q.
    pub(crate) fn field_dim(&self) -> usize {
        self.field_dim
    }

    /// The field's and the coefficients' coordinates: the first values of q.
    pub(crate) fn latent_dim(&self) -> usize {
        self.field_dim + self.covariates().map_or(0, Covariates::count)
    }

    /// The dimension of q.
    pub(crate) fn dim(&self) -> usize {
        self.latent_dim() + self.priors().len()
    }

    /// The hyperparameters at q.
    pub(crate) fn values(&self, q: &[f64]) -> Hyperparameters {
        self.priors()
            .from_unconstrained(&q[self.latent_dim()..], self.base)
    }

    /// Whether the chain infers the gaussian likelihood's noise sd: the likelihood is then
    /// evaluated at each point's own, with the -M log s a fixed s drops
    /// ([`Likelihood::gaussian_at_noise`]).
    fn infers_noise(&self, likelihood: &Likelihood) -> bool {
        likelihood.kind() == LikelihoodKind::Gaussian
            && self.priors().prior(HyperName::NoiseSd).is_some()
    }

    /// `likelihood`'s log-likelihood of G u = `observed` at hyperparameters `values`.
    pub(crate) fn log_likelihood(
        &self,
        likelihood: &Likelihood,
        values: &Hyperparameters,
        observed: &[f64],
    ) -> f64 {
        if self.infers_noise(likelihood) {
            let at = likelihood.gaussian_at_noise(observed, values.noise_sd, None);
            at.expect("a gaussian likelihood").0
        } else {
            likelihood.log_likelihood(observed)
        }
    }

    /// [`JointLayout::log_likelihood`] with its gradient in G u written into `gradient`, and its
    /// slope in the noise sd (0 when that is fixed).
    pub(crate) fn log_likelihood_and_gradient(
        &self,
        likelihood: &Likelihood,
        values: &Hyperparameters,
        observed: &[f64],
        gradient: &mut [f64],
    ) -> (f64, f64) {
        if self.infers_noise(likelihood) {
            let at = likelihood.gaussian_at_noise(observed, values.noise_sd, Some(gradient));
            at.expect("a gaussian likelihood")
        } else {
            (
                likelihood.log_likelihood_and_gradient(observed, gradient),
                0.0,
            )
        }
    }
}

/// The joint posterior density of one job's model and data.
#[derive(Debug, Clone)]
pub(crate) struct JointDensity<'a> {
    layout: JointLayout<'a>,
    likelihood: &'a Likelihood,
    /// Where the data see the field.
    observed: Observed<'a>,
    /// The prior's root as a function of the length scale, shared with the job's other chains.
    root: JointRoot,
    /// The mean, when its coordinate is centred on the field's average (see the module docs).
    centred_mean: Option<CentredMean>,
    buffers: Buffers,
    /// When set, a point's first coordinates are eta, xi = A eta.
    preconditioner: Option<Arc<Preconditioner>>,
    /// [xi, z_theta] of a preconditioned point, and the gradient there.
    unpreconditioned: Vec<f64>,
    unpreconditioned_gradient: Vec<f64>,
}

#[derive(Debug, Clone)]
struct Buffers {
    /// w = sqrt(variance) S xi.
    spatial: Vec<f64>,
    field: Vec<f64>,
    field_gradient: Vec<f64>,
    observed: Vec<f64>,
    observed_gradient: Vec<f64>,
    /// The separable root's products, shared by the forward and backward passes.
    root: RootWork,
    /// The circulant root's multipliers and transforms (a circulant root only).
    circulant: Option<CirculantWork>,
    /// The hyperparameters' unconstrained coordinates with a centred mean's replaced by the
    /// mean itself, where its prior is evaluated.
    hyper: Vec<f64>,
}

/// The prior's root as the joint chains hold it: one value shared by a job's chains.
#[derive(Debug, Clone)]
pub(crate) enum JointRoot {
    /// The separable root, tabulated in log l: the squared exponential, or any kernel on a 1-D
    /// grid.
    Separable(SeparableTable),
    /// A circulant kernel's root on the torus fixed for the chains: the exponential and Matern
    /// kernels on a 2-D grid.
    Circulant(Arc<CirculantRoot>),
}

impl JointRoot {
    /// The root of `model`'s prior. A circulant root's torus embeds the kernel at
    /// [`length_scale_reach`] when a torus within
    /// [`crate::model::prior::circulant_root::MAX_CHAIN_TORUS_FACTOR`] times the minimal
    /// one can; beyond its [`CirculantRoot::largest_length_scale`] the density is zero.
    pub(crate) fn for_model(model: &ModelSpec, base: Hyperparameters) -> Result<Self, PriorError> {
        let (grid, kind) = (model.grid, model.kernel.kind);
        if kind.is_separable_on(grid) {
            return Ok(Self::Separable(SeparableTable::new(grid, kind)));
        }
        let reach = length_scale_reach(&model.hyper, base);
        let root = CirculantRoot::for_chain(grid, kind, reach)?;
        Ok(Self::Circulant(Arc::new(root)))
    }

    /// The whitened field's coordinates under this root on `grid`.
    pub(crate) fn field_dim(&self, grid: Grid) -> usize {
        match self {
            Self::Separable(_) => grid.cells(),
            Self::Circulant(root) => root.latent_dim(),
        }
    }

    /// The circulant root, if it is one.
    pub(crate) fn circulant(&self) -> Option<&CirculantRoot> {
        match self {
            Self::Separable(_) => None,
            Self::Circulant(root) => Some(root),
        }
    }
}

/// The upper quantile of the length scale's prior a circulant chain's torus is sized for (z
/// of the 99th percentile of a standard normal).
const REACH_QUANTILE_Z: f64 = 2.326;

/// The length scale a chain should be able to reach: its prior's 99th percentile on the
/// unconstrained scale (the median moved by 2.326 standard deviations: exact for a log-normal
/// prior), or the value it starts from, whichever is larger; the start when it is not inferred.
pub(crate) fn length_scale_reach(priors: &HyperPriors, base: Hyperparameters) -> f64 {
    let Some(prior) = priors.prior(HyperName::LengthScale) else {
        return base.length_scale;
    };
    let reach = prior.sds_from_median(REACH_QUANTILE_Z);
    if reach.is_finite() {
        reach.max(base.length_scale)
    } else {
        base.length_scale
    }
}

/// The largest length scale a joint chain on `model`'s prior reaches from `start`: where its
/// circulant root's torus stops embedding the kernel, infinite for a separable root.
pub(crate) fn length_scale_limit(model: &ModelSpec, start: Hyperparameters) -> f64 {
    JointRoot::for_model(model, start)
        .ok()
        .and_then(|root| root.circulant().map(CirculantRoot::largest_length_scale))
        .unwrap_or(f64::INFINITY)
}

/// The prior mass (on the unconstrained scale, in standard deviations past the median) above
/// the largest length scale a circulant chain's torus embeds beyond which the truncation is
/// reported: 3.09, the 99.9th percentile.
const TRUNCATION_NOTICE_Z: f64 = 3.09;

/// A circulant joint chain's length-scale truncation (`circulant`, its root), when it matters:
/// the torus embeds the
/// kernel only up to a length scale below the prior's 99.9th percentile, or the posterior's 95th
/// percentile (`posterior_q95`) reaches half of it.
pub(crate) fn truncation_warning(
    model: &ModelSpec,
    circulant: &CirculantRoot,
    posterior_q95: Option<f64>,
) -> Option<String> {
    let largest = circulant.largest_length_scale();
    let prior = model.hyper.prior(HyperName::LengthScale)?;
    let z = (prior.to_unconstrained(largest) - prior.to_unconstrained(prior.median()))
        / prior.unconstrained_sd();
    let pressed = posterior_q95.is_some_and(|q| q > 0.5 * largest);
    if z >= TRUNCATION_NOTICE_Z && !pressed {
        return None;
    }
    let (px, py) = circulant.torus();
    Some(format!(
        "the joint chain's {px} x {py} torus embeds the {} kernel only up to length scale {largest:.3}, \
         {z:.1} prior sds above the prior's median: the length-scale prior is truncated there{}",
        model.kernel.kind,
        if pressed {
            " and the posterior reaches towards it (95th percentile above half of it); use the \
             squared-exponential kernel, or a prior with less mass at long length scales"
        } else {
            ""
        }
    ))
}

/// The root at one length scale, ready for its products (a circulant root's multipliers are in
/// the density's [`CirculantWork`]).
enum RootAt {
    Separable(Box<SeparableRoot>),
    Circulant(Arc<CirculantRoot>),
}

/// An inferred mean held as m' = mean + avg(w): its place among the hyperparameters and its prior.
#[derive(Debug, Clone, Copy)]
struct CentredMean {
    index: usize,
    prior: HyperPrior,
}

/// A point of the joint chain: its field, log-likelihood and hyperparameters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JointPoint {
    pub(crate) values: Hyperparameters,
    pub(crate) log_likelihood: f64,
}

impl<'a> JointDensity<'a> {
    /// The joint density of `model` (grid, kernel, priors, covariates) on data `likelihood`
    /// seen through `observed`, the hyperparameters not inferred fixed at `base`, with
    /// the prior's `root` ([`JointRoot::for_model`], shared with the job's other chains).
    pub(crate) fn new(
        model: &'a ModelSpec,
        base: Hyperparameters,
        likelihood: &'a Likelihood,
        observed: Observed<'a>,
        root: JointRoot,
    ) -> Self {
        let n = model.grid.cells();
        let m = observed.len();
        Self {
            layout: JointLayout {
                model,
                base,
                field_dim: root.field_dim(model.grid),
            },
            likelihood,
            observed,
            buffers: Buffers {
                spatial: vec![0.0; n],
                field: vec![0.0; n],
                field_gradient: vec![0.0; n],
                observed: vec![0.0; m],
                observed_gradient: vec![0.0; m],
                root: RootWork::new(n),
                circulant: root.circulant().map(CirculantRoot::work),
                hyper: vec![0.0; model.hyper.len()],
            },
            root,
            centred_mean: model
                .hyper
                .iter()
                .enumerate()
                .find_map(|(index, (name, prior))| {
                    (*name == HyperName::Mean && prior.support() == Support::Real).then_some(
                        CentredMean {
                            index,
                            prior: *prior,
                        },
                    )
                }),
            preconditioner: None,
            unpreconditioned: Vec::new(),
            unpreconditioned_gradient: Vec::new(),
        }
    }

    /// The same density in the coordinates eta of `preconditioner` (xi = A eta).
    pub(crate) fn preconditioned(mut self, preconditioner: Arc<Preconditioner>) -> Self {
        self.unpreconditioned = vec![0.0; self.layout.dim()];
        self.unpreconditioned_gradient = vec![0.0; self.layout.dim()];
        self.preconditioner = Some(preconditioner);
        self
    }

    /// The point's whitened coordinates and hyperparameters [xi, z_theta], from its own
    /// coordinates (eta when preconditioned).
    pub(crate) fn whitened(&self, q: &[f64]) -> Vec<f64> {
        let mut out = q.to_vec();
        if let Some(p) = &self.preconditioner {
            let latent = self.layout.latent_dim();
            p.apply(&q[..latent], &mut out[..latent]);
        }
        out
    }

    /// A point's own coordinates from [xi, z_theta] (the inverse of [`JointDensity::whitened`]).
    #[allow(clippy::wrong_self_convention)] // the density maps its own coordinates
    pub(crate) fn from_whitened(&self, whitened: &[f64]) -> Vec<f64> {
        let mut out = whitened.to_vec();
        if let Some(p) = &self.preconditioner {
            let latent = self.layout.latent_dim();
            p.apply_inverse(&whitened[..latent], &mut out[..latent]);
        }
        out
    }

    /// The model whose posterior this is.
    pub(crate) fn model(&self) -> &'a ModelSpec {
        self.layout.model
    }

    pub(crate) fn layout(&self) -> &JointLayout<'a> {
        &self.layout
    }

    /// G u: the field `field` at each observation.
    pub(crate) fn observed(&self, field: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.observed.len()];
        self.observed.gather(field, &mut out);
        out
    }

    /// The point q of whitened coordinates `xi` (the field's, then the coefficients') and
    /// hyperparameters `values`: their unconstrained coordinates, a centred mean's moved by the
    /// field's average. `None` where the prior cannot be built at `values`.
    pub(crate) fn point_at(&mut self, xi: &[f64], values: &Hyperparameters) -> Option<Vec<f64>> {
        let mut q = xi.to_vec();
        q.extend(self.layout.priors().to_unconstrained(values));
        if let Some(centred) = self.centred_mean {
            let root = self.root(values, false)?;
            let mut moved = *values;
            self.fill_field(&q, &mut moved, &root);
            q[self.layout.latent_dim() + centred.index] += values.mean - moved.mean;
        }
        Some(q)
    }

    /// The field u at q into `field`, with the point's hyperparameters and log-likelihood, or
    /// `None` where the prior cannot be built (a length scale outside double precision).
    pub(crate) fn point(&mut self, q: &[f64], field: &mut [f64]) -> Option<JointPoint> {
        let mut values = self.layout.values(q);
        let root = self.root(&values, false)?;
        self.fill_field(q, &mut values, &root);
        field.copy_from_slice(&self.buffers.field);
        let b = &mut self.buffers;
        self.observed.gather(&b.field, &mut b.observed);
        let log_likelihood = self
            .layout
            .log_likelihood(self.likelihood, &values, &b.observed);
        Some(JointPoint {
            values,
            log_likelihood,
        })
    }

    /// The prior's root at `values`' length scales (its slopes' filters too with `slopes`), or
    /// `None` where it does not exist (a length scale outside double precision, or beyond what
    /// a circulant root's torus embeds).
    fn root(&mut self, values: &Hyperparameters, slopes: bool) -> Option<RootAt> {
        match &self.root {
            JointRoot::Separable(table) => table
                .root(values.length_scale, values.length_scale_y)
                .ok()
                .map(|root| RootAt::Separable(Box::new(root))),
            JointRoot::Circulant(root) => {
                let work = self.buffers.circulant.as_mut().expect("made with the root");
                root.prepare(values.length_scale, work, slopes)
                    .then(|| RootAt::Circulant(root.clone()))
            }
        }
    }

    /// buffers.spatial = sqrt(variance) R S xi; buffers.field = mean + spatial + X s z_beta. A
    /// centred mean's coordinate is the mean plus the average of spatial: `values.mean` becomes
    /// the mean itself.
    fn fill_field(&mut self, q: &[f64], values: &mut Hyperparameters, root: &RootAt) {
        let (n, latent) = (self.layout.field_dim(), self.layout.latent_dim());
        let amplitude = values.variance.sqrt();
        let b = &mut self.buffers;
        match root {
            RootAt::Separable(root) => root.forward(&q[..n], &mut b.spatial, &mut b.root),
            RootAt::Circulant(root) => {
                let work = b.circulant.as_mut().expect("made with the root");
                root.forward(&q[..n], &mut b.spatial, work);
            }
        }
        for w in b.spatial.iter_mut() {
            *w *= amplitude;
        }
        if self.centred_mean.is_some() {
            values.mean -= b.spatial.iter().sum::<f64>() / b.spatial.len() as f64;
        }
        for (u, w) in b.field.iter_mut().zip(&b.spatial) {
            *u = values.mean + *w;
        }
        if let Some(covariates) = self.layout.model.covariates.as_deref() {
            covariates.add_whitened_effect(&q[n..latent], &mut b.field);
        }
    }

    /// log pi(q) (up to a constant) with its gradient written into `gradient`; -inf (gradient
    /// untouched) where the prior cannot be built or the hyperparameters' density is zero. With a
    /// preconditioner, q = [eta, z_theta] and the gradient is A times xi's.
    pub(crate) fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        let Some(p) = self.preconditioner.clone() else {
            return self.whitened_log_density(q, gradient);
        };
        let latent = self.layout.latent_dim();
        let mut x = std::mem::take(&mut self.unpreconditioned);
        let mut g = std::mem::take(&mut self.unpreconditioned_gradient);
        p.apply(&q[..latent], &mut x[..latent]);
        x[latent..].copy_from_slice(&q[latent..]);
        let value = self.whitened_log_density(&x, &mut g);
        if value.is_finite() {
            p.apply(&g[..latent], &mut gradient[..latent]);
            gradient[latent..].copy_from_slice(&g[latent..]);
        }
        self.unpreconditioned = x;
        self.unpreconditioned_gradient = g;
        value
    }

    /// log pi at [xi, z_theta].
    fn whitened_log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        let (n, latent) = (self.layout.field_dim(), self.layout.latent_dim());
        let z = &q[latent..];
        let log_prior = self.layout.priors().log_density_unconstrained(z);
        let mut values = self.layout.values(q);
        let infers_length_scale = self
            .layout
            .priors()
            .names()
            .any(|name| matches!(name, HyperName::LengthScale | HyperName::LengthScaleY));
        let Some(root) = log_prior
            .is_finite()
            .then(|| self.root(&values, infers_length_scale))
            .flatten()
        else {
            return f64::NEG_INFINITY;
        };
        self.fill_field(q, &mut values, &root);
        let b = &mut self.buffers;
        // A centred mean's prior is at the mean itself.
        let log_prior = match self.centred_mean {
            None => log_prior,
            Some(centred) => {
                b.hyper.copy_from_slice(z);
                b.hyper[centred.index] = values.mean;
                self.layout.priors().log_density_unconstrained(&b.hyper)
            }
        };
        self.observed.gather(&b.field, &mut b.observed);
        let (log_likelihood, noise_slope) = self.layout.log_likelihood_and_gradient(
            self.likelihood,
            &values,
            &b.observed,
            &mut b.observed_gradient,
        );
        self.observed
            .scatter(&b.observed_gradient, &mut b.field_gradient);
        if let Some(covariates) = self.layout.model.covariates.as_deref() {
            covariates.whitened_gradient(&b.field_gradient, &mut gradient[n..latent]);
        }
        let field_sum: f64 = b.field_gradient.iter().sum();
        let mut mean_slope = field_sum;
        if let Some(centred) = self.centred_mean {
            // u = m' - avg(w) + w with the mean m' - avg(w): d log pi / d w is
            // g - (sum g + d log p(mean) / d mean) / N, and d / d m' is sum g + that slope.
            mean_slope += centred.prior.log_density_unconstrained_slope(values.mean);
            let shift = mean_slope / b.field_gradient.len() as f64;
            for g in &mut b.field_gradient {
                *g -= shift;
            }
        }
        let amplitude = values.variance.sqrt();
        // xi: sqrt(variance) S g - xi, with the length scales' slopes from the same products.
        let slopes = match &root {
            RootAt::Separable(root) => root.backward(
                &b.field_gradient,
                &mut gradient[..n],
                &mut b.root,
                infers_length_scale,
            ),
            RootAt::Circulant(root) => {
                let work = b.circulant.as_mut().expect("made with the root");
                let g = &b.field_gradient;
                let slope =
                    root.backward(g, &q[..n], &mut gradient[..n], work, infers_length_scale);
                // One length scale: all of its slope on x (isotropic, see below).
                slope.map(|x| LengthScaleSlopes { x, y: 0.0 })
            }
        };
        for g in &mut gradient[..n] {
            *g *= amplitude;
        }
        let mut squared = 0.0;
        for (g, &x) in gradient[..latent].iter_mut().zip(q) {
            *g -= x;
            squared += x * x;
        }
        let isotropic = values.length_scale_y.is_none();
        for (k, (name, prior)) in self.layout.model.hyper.iter().enumerate() {
            let b = &self.buffers;
            // d log pi / d log x for positive hyperparameters, d / dx for the mean.
            let value = values.get(*name);
            let per_value = match name {
                HyperName::LengthScale => {
                    let s = slopes.expect("computed when a length scale is inferred");
                    amplitude * (s.x + if isotropic { s.y } else { 0.0 }) / value
                }
                HyperName::LengthScaleY => {
                    let s = slopes.expect("computed when a length scale is inferred");
                    amplitude * s.y / value
                }
                HyperName::Variance => 0.5 * dot(&b.field_gradient, &b.spatial) / value,
                HyperName::Mean if self.centred_mean.is_some() => {
                    gradient[latent + k] = mean_slope;
                    continue;
                }
                HyperName::Mean => field_sum,
                HyperName::NoiseSd => noise_slope,
            };
            gradient[latent + k] =
                per_value * prior.value_slope(z[k]) + prior.log_density_unconstrained_slope(z[k]);
        }
        log_likelihood - 0.5 * squared + log_prior
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::hyper::fixtures::{self, check_gradient, gradient_models, model};
    use crate::model::spec::{KernelKind, KernelSpec, LikelihoodKind};

    fn base() -> Hyperparameters {
        fixtures::base(None)
    }

    /// The joint gradient against central differences of the log density along every
    /// coordinate, for each likelihood, the data at cells and at scattered sites: isotropic with
    /// every hyperparameter inferred, and anisotropic with covariates on a rectangular grid.
    #[test]
    fn joint_gradient_matches_finite_differences() {
        for spec in &gradient_models() {
            let cells: Vec<usize> = (0..spec.grid.cells()).step_by(2).collect();
            let sites = fixtures::sites(spec.grid, cells.len());
            for observed in [Observed::Cells(&cells), Observed::Sites(&sites)] {
                for likelihood in crate::model::likelihood::one_of_each(observed.len()) {
                    let base = fixtures::base(spec.kernel.length_scale_y);
                    let root = JointRoot::for_model(spec, base).unwrap();
                    let mut density = JointDensity::new(spec, base, &likelihood, observed, root);
                    let what = format!("{:?} {} {observed:?}", likelihood.kind(), spec.grid);
                    check_gradient(
                        density.layout().dim(),
                        |q, g| density.log_density(q, g),
                        &what,
                    );
                }
            }
        }
    }

    /// The joint gradient of the circulant kernels (the field on the chain's torus) against
    /// central differences, for each likelihood, with the length scale, the variance and the
    /// mean inferred; the point's log length scale is moved to -2.2 (l = 0.11), inside what the
    /// torus embeds.
    #[test]
    fn circulant_joint_gradient_matches_finite_differences() {
        let priors = [
            (HyperName::LengthScale, "log-normal(-2, 0.5)"),
            (HyperName::Variance, "gamma(2, 2)"),
            (HyperName::Mean, "normal(0, 2)"),
        ];
        for kind in [
            KernelKind::Exponential,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ] {
            let kernel = KernelSpec {
                kind,
                ..KernelSpec::squared_exponential(0.2, 1.3)
            };
            let spec = model(Grid::rectangular(5, 4), kernel, &priors);
            let observed: Vec<usize> = (0..spec.grid.cells()).step_by(2).collect();
            let root = JointRoot::for_model(&spec, base()).unwrap();
            let torus = root.circulant().expect("a circulant root").latent_dim();
            assert!(torus > spec.grid.cells());
            for likelihood in crate::model::likelihood::one_of_each(observed.len()) {
                let mut density = JointDensity::new(
                    &spec,
                    base(),
                    &likelihood,
                    Observed::Cells(&observed),
                    root.clone(),
                );
                let dim = density.layout().dim();
                assert_eq!(dim, torus + 3);
                let log_l = torus;
                let what = format!("{kind} {:?}", likelihood.kind());
                check_gradient(
                    dim,
                    |q, g| {
                        let mut moved = q.to_vec();
                        moved[log_l] -= 2.2;
                        density.log_density(&moved, g)
                    },
                    &what,
                );
            }
        }
    }

    /// A A^-1 = I, A symmetric, and the preconditioned density equals the whitened one at
    /// xi = A eta with gradient A times xi's.
    #[test]
    fn the_preconditioner_is_a_linear_change_of_coordinates() {
        let all = [
            (HyperName::LengthScale, "log-normal(-1, 0.8)"),
            (HyperName::Variance, "gamma(2, 2)"),
        ];
        let spec = model(
            Grid::new(4),
            KernelSpec::squared_exponential(0.4, 1.3),
            &all,
        );
        let n = 16;
        // Two orthonormal directions: normalised e_0 + e_1 and e_2 - e_3.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let vectors = Mat::from_fn(n, 2, |i, k| match (i, k) {
            (0 | 1, 0) => h,
            (2, 1) => h,
            (3, 1) => -h,
            _ => 0.0,
        });
        let p = Arc::new(Preconditioner::from_eigenpairs(vectors, &[8.0, 3.0]));
        let x: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
        let (mut ax, mut back) = (vec![0.0; n], vec![0.0; n]);
        p.apply(&x, &mut ax);
        p.apply_inverse(&ax, &mut back);
        for (a, b) in x.iter().zip(&back) {
            assert!((a - b).abs() < 1e-12);
        }
        let y: Vec<f64> = (0..n).map(|k| (k as f64 * 0.91).cos()).collect();
        let mut ay = vec![0.0; n];
        p.apply(&y, &mut ay);
        let (xay, yax): (f64, f64) = (dot(&x, &ay), dot(&y, &ax));
        assert!((xay - yax).abs() < 1e-12, "A is symmetric");
        let likelihood = &crate::model::likelihood::one_of_each(16)[2];
        let cells: Vec<usize> = (0..16).collect();
        let root = JointRoot::for_model(&spec, base()).unwrap();
        let mut plain = JointDensity::new(
            &spec,
            base(),
            likelihood,
            Observed::Cells(&cells),
            root.clone(),
        );
        let mut pre = JointDensity::new(&spec, base(), likelihood, Observed::Cells(&cells), root)
            .preconditioned(p.clone());
        let eta: Vec<f64> = (0..pre.layout().dim())
            .map(|k| ((k * 5 % 7) as f64 - 3.0) / 5.0)
            .collect();
        let whitened = pre.whitened(&eta);
        let (mut g_pre, mut g_plain) = (vec![0.0; eta.len()], vec![0.0; eta.len()]);
        let value = pre.log_density(&eta, &mut g_pre);
        assert_eq!(value, plain.log_density(&whitened, &mut g_plain));
        let mut expected = vec![0.0; n];
        p.apply(&g_plain[..n], &mut expected);
        for k in 0..n {
            assert!((g_pre[k] - expected[k]).abs() < 1e-12);
        }
        assert_eq!(g_pre[n..], g_plain[n..]);
        let round_trip = pre.from_whitened(&whitened);
        for (a, b) in eta.iter().zip(&round_trip) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    /// The cost of one joint log density with its gradient on a 32 x 32 and a 64 x 64 grid of
    /// counts, against the likelihood's share: a measurement, not a check (`cargo test --release
    /// --lib -- --ignored joint_density_cost --nocapture`).
    #[test]
    #[ignore]
    fn joint_density_cost() {
        for d in [32, 64] {
            let all = [
                (HyperName::LengthScale, "log-normal(-2.3, 1)"),
                (HyperName::Variance, "log-normal(0, 1)"),
                (HyperName::Mean, "normal(0, 2)"),
            ];
            let spec = model(
                Grid::new(d),
                KernelSpec::squared_exponential(0.1, 1.0),
                &all,
            );
            let n = d * d;
            let counts: Vec<f64> = (0..n).map(|k| (k * 7 % 5) as f64).collect();
            let likelihood = Likelihood::new(LikelihoodKind::Poisson, counts, 1.0, 0.0);
            let cells: Vec<usize> = (0..n).collect();
            let root = JointRoot::for_model(&spec, base()).unwrap();
            let mut density =
                JointDensity::new(&spec, base(), &likelihood, Observed::Cells(&cells), root);
            let mut q: Vec<f64> = (0..density.layout().dim())
                .map(|k| ((k * 13 % 7) as f64 - 3.0) / 10.0)
                .collect();
            let mut gradient = vec![0.0; q.len()];
            let reps = 1000;
            let mut total = 0.0;
            let start = std::time::Instant::now();
            for r in 0..reps {
                q[0] = r as f64 * 1e-9;
                total += likelihood.log_likelihood_and_gradient(&q[..n], &mut gradient[..n]);
            }
            eprintln!(
                "before any matrix product: likelihood {:.1} us",
                start.elapsed().as_secs_f64() / reps as f64 * 1e6
            );
            let start = std::time::Instant::now();
            for r in 0..reps {
                q[n] = -2.3 + r as f64 * 1e-6;
                total += density.log_density(&q, &mut gradient);
            }
            let joint = start.elapsed().as_secs_f64() / reps as f64;
            let start = std::time::Instant::now();
            for r in 0..reps {
                q[0] = r as f64 * 1e-9;
                total += likelihood.log_likelihood_and_gradient(&q[..n], &mut gradient[..n]);
            }
            let alone = start.elapsed().as_secs_f64() / reps as f64;
            eprintln!(
                "D = {d}: joint {:.1} us, likelihood {:.1} us ({total:.2})",
                joint * 1e6,
                alone * 1e6
            );
        }
    }
}
