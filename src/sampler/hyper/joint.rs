//! `sampler.hyper = "joint"`: the hyperparameters, the coefficients and the whitened field moved
//! together by one gradient-based chain on their joint posterior
//! ([`crate::model::hyper::joint::JointDensity`]): the non-centred model a statistician writes for
//! Stan or BlackJAX, with the prior's structure doing the linear algebra (the separable root and
//! its exact derivative in the length scale, O(N (nx + ny)) per gradient).
//!
//! With `sampler.kind = "nuts"` the chain is nuts-rs's NUTS on q = (xi, z_beta, z_theta), its step
//! size and diagonal mass matrix adapted during burn-in. Chains start where the other updates
//! start ([`super::chain::dispersed_start`]): the prior's median or the study's value, each
//! coordinate moved by [`super::chain::START_SPREAD`] standard normals.
//!
//! **The Laplace preconditioner** (`sampler.hyper_preconditioner = "laplace"`; off by default:
//! on five real 32 x 32 grids, three seeds each, it cost as much CPU as it saved, or more; see
//! docs/hyperparameters.md). Strong data make the field's posterior stiff along a few
//! smooth directions of xi (the leading eigenvectors of sqrt(v) S W S sqrt(v), W the likelihood's
//! curvature), which a diagonal mass matrix cannot see: on the Lansing counts NUTS needed steps of
//! 0.05 and about 100 gradients a draw. Halfway through burn-in each chain therefore fits the
//! Laplace approximation of the field at its own current hyperparameters (in the joint chain's own
//! whitened coordinates, [`SymmetricPrior`]), keeps the misfit Hessian's eigenpairs above 1 (at
//! most [`preconditioner_rank`]), and continues in eta with xi = A eta,
//! A = I - V diag(1 - (1 + lambda)^(-1/2)) V^T ([`Preconditioner`]): a fixed linear map (constant
//! Jacobian) under which those directions have unit scale. A fresh nuts-rs chain adapts its step
//! and mass matrix on eta over the rest of burn-in. The kernel after burn-in is fixed, each
//! chain's map comes from its own state and stream, so the chain is exact and reproducible.

use std::sync::Arc;

use super::chain::dispersed_start;
use super::settings::{HyperModel, JointPreconditioner};
use crate::model::hyper::Hyperparameters;
use crate::model::hyper::joint::{JointDensity, JointRoot, Preconditioner};
use crate::model::prior::differentiable::{SeparableRoot, SymmetricPrior};
use crate::model::prior::{Prior, PriorError, WithCovariates};
use crate::model::spec::ModelSpec;
use crate::model::target::Target;
use crate::sampler::gpcn::{LaplaceGaussian, Rank};
use crate::sampler::nuts::{Nuts, NutsDensity, NutsState};
use crate::sampler::protocol::{
    ChainRng, ChainState, Position, Sampler, StepInfo, TrajectorySummary,
};

/// Burn-in shorter than this runs without the preconditioner (too few draws to reach the
/// posterior before fitting it and to adapt after).
pub(crate) const MIN_PRECONDITIONED_BURN_IN: u64 = 200;

/// The misfit eigenvalue above which a direction is rescaled (its posterior sd is then below
/// 1 / sqrt(2) of the prior's).
const PRECONDITIONER_THRESHOLD: f64 = 1.0;

/// At most 2 max(nx, ny) directions: the preconditioner's two products then cost about what the
/// root's own products cost.
pub(crate) fn preconditioner_rank(model: &ModelSpec) -> usize {
    2 * model.grid.nx().max(model.grid.ny())
}

impl NutsDensity for JointDensity<'_> {
    fn dim(&self) -> usize {
        self.layout().dim()
    }

    fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        JointDensity::log_density(self, q, gradient)
    }

    fn position(&mut self, q: &[f64], hyperparameters: &mut Vec<f64>) -> Position {
        let latent = self.layout().latent_dim();
        let whitened = self.whitened(q);
        let mut field = vec![0.0; self.model().grid.cells()];
        let point = self
            .point(&whitened, &mut field)
            .expect("a point NUTS accepted has a finite density, so its prior exists");
        let observed = self.observed(&field);
        hyperparameters.clear();
        hyperparameters.extend(self.model().hyper.values(&point.values));
        Position {
            xi: whitened[..latent].to_vec(),
            field,
            observed,
            log_likelihood: point.log_likelihood,
        }
    }
}

/// NUTS on the joint posterior of the hyperparameters and the field.
#[derive(Debug, Clone)]
pub(crate) struct JointNuts {
    model: ModelSpec,
    start: Hyperparameters,
    burn_in: u64,
    preconditioner: JointPreconditioner,
    /// The prior's root, shared by the job's chains.
    root: JointRoot,
}

/// A joint chain: its NUTS state, and when it fits its preconditioner.
pub(crate) struct JointState<'t> {
    sampler: &'t JointNuts,
    nuts: NutsState<JointDensity<'t>>,
    iteration: u64,
    precondition_at: Option<u64>,
}

impl JointNuts {
    /// The chains of `hyper`'s model, or why its prior has no root for them (a circulant
    /// kernel no torus within the limit embeds).
    pub(crate) fn new(
        hyper: HyperModel,
        burn_in: u64,
        preconditioner: JointPreconditioner,
    ) -> Result<Self, PriorError> {
        Ok(Self {
            model: hyper.model.clone(),
            start: hyper.start,
            burn_in,
            preconditioner,
            root: JointRoot::for_model(hyper.model, hyper.start)?,
        })
    }

    /// The iteration at which a chain fits its preconditioner, if it fits one.
    fn precondition_at(&self) -> Option<u64> {
        (self.preconditioner == JointPreconditioner::Laplace
            && self.burn_in >= MIN_PRECONDITIONED_BURN_IN)
            .then_some(self.burn_in / 2)
    }

    fn density<'t>(&'t self, target: &Target<'t>) -> JointDensity<'t> {
        JointDensity::new(
            &self.model,
            self.start,
            target.likelihood,
            target.observed,
            self.root.clone(),
        )
    }

    fn state_at<'t>(
        &'t self,
        xi: Vec<f64>,
        values: &Hyperparameters,
        target: &Target<'t>,
    ) -> JointState<'t> {
        let mut density = self.density(target);
        assert_eq!(xi.len(), density.layout().latent_dim(), "a whitened point");
        let q = density
            .point_at(&xi, &self.inside_torus(*values))
            .expect("a chain starts where its prior exists");
        JointState {
            sampler: self,
            nuts: Nuts::new(self.burn_in).state(density, q),
            iteration: 0,
            precondition_at: self.precondition_at(),
        }
    }

    /// Continue `state` from its current point in the coordinates of the Laplace preconditioner
    /// at its current hyperparameters, with a new NUTS adaptation over the rest of burn-in.
    fn precondition<'t>(&'t self, state: &mut JointState<'t>, target: &Target<'t>) {
        let whitened = state.nuts.density().whitened(state.nuts.point());
        let mut field = vec![0.0; self.model.grid.cells()];
        let Some(point) = self.density(target).point(&whitened, &mut field) else {
            return;
        };
        let values = point.values;
        let Some(preconditioner) = self.preconditioner(&values, target) else {
            return;
        };
        let density = self
            .density(target)
            .preconditioned(Arc::new(preconditioner));
        let q = density.from_whitened(&whitened);
        state.nuts = Nuts::new(self.burn_in - state.iteration).state(density, q);
    }

    /// The Laplace preconditioner of the field at hyperparameters `values`, or `None` where the
    /// prior cannot be built there.
    fn preconditioner(&self, values: &Hyperparameters, target: &Target) -> Option<Preconditioner> {
        if !matches!(self.root, JointRoot::Separable(_)) {
            return None;
        }
        let root = SeparableRoot::new(
            self.model.grid,
            self.model.kernel.kind,
            values.length_scale,
            values.length_scale_y,
        )
        .ok()?;
        let field: Box<dyn Prior> = Box::new(SymmetricPrior::new(root, values.variance));
        let prior: Box<dyn Prior> = match &self.model.covariates {
            Some(covariates) => Box::new(WithCovariates::new(field, covariates.clone())),
            None => field,
        };
        // An inferred noise sd: the likelihood's curvature at the chain's own.
        let likelihood = target.likelihood.with_noise_sd(values.noise_sd);
        let at = Target {
            prior: prior.as_ref(),
            likelihood: &likelihood,
            observed: target.observed,
            mean: values.mean,
        };
        let gaussian = LaplaceGaussian::new(
            &at,
            Rank::Auto {
                threshold: PRECONDITIONER_THRESHOLD,
            },
        );
        let rank = gaussian.values.len().min(preconditioner_rank(&self.model));
        Some(Preconditioner::from_eigenpairs(
            gaussian.vectors.subcols(0, rank).to_owned(),
            &gaussian.values[..rank],
        ))
    }
}

impl JointNuts {
    /// `values` with a length scale beyond what a circulant root's torus embeds reflected (on
    /// the log scale) about 0.95 of that limit, so that a chain starts where its density is
    /// positive and dispersed starts stay dispersed.
    fn inside_torus(&self, mut values: Hyperparameters) -> Hyperparameters {
        if let Some(root) = self.root.circulant() {
            let edge = 0.95 * root.largest_length_scale();
            if values.length_scale > edge {
                values.length_scale = edge * edge / values.length_scale;
            }
        }
        values
    }

    /// `xi` (the target prior's field coordinates, then the coefficients') with the field's
    /// part cut or extended (by `extend(count)`) to the chain root's field dimension.
    fn fitted(&self, xi: Vec<f64>, extend: impl FnOnce(usize) -> Vec<f64>) -> Vec<f64> {
        let wanted = self.root.field_dim(self.model.grid);
        let coefficients = self.model.covariates.as_ref().map_or(0, |c| c.count());
        let field = xi.len() - coefficients;
        if field == wanted {
            return xi;
        }
        let mut out: Vec<f64> = xi[..field.min(wanted)].to_vec();
        if wanted > field {
            out.extend(extend(wanted - field));
        }
        out.extend_from_slice(&xi[field..]);
        out
    }
}

impl ChainState for JointState<'_> {
    fn current(&self) -> &Position {
        self.nuts.current()
    }
    fn step_size(&self) -> Option<f64> {
        self.nuts.step_size()
    }
    fn hyperparameters(&self) -> &[f64] {
        self.nuts.hyperparameters()
    }
    fn trajectory(&self) -> Option<TrajectorySummary> {
        self.nuts.trajectory()
    }
    fn failure(&self) -> Option<&str> {
        self.nuts.failure()
    }
}

impl Sampler for JointNuts {
    type State<'t>
        = JointState<'t>
    where
        Self: 't;

    /// `xi` as the target's prior holds it; a circulant root's torus may differ from the
    /// target's, and then the field's coordinates are cut or padded with zeros to the chain's.
    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> Self::State<'t> {
        let xi = self.fitted(xi, |extra| vec![0.0; extra]);
        self.state_at(xi, &self.start, target)
    }

    /// As for every kind, but a circulant root's torus may differ from the target prior's: the
    /// field's coordinates are then cut, or extended by draws from the chain's stream.
    fn start<'t>(
        &'t self,
        xi: Vec<f64>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> Self::State<'t> {
        let xi = self.fitted(xi, |extra| {
            let mut more = vec![0.0; extra];
            rng.normals(&mut more);
            more
        });
        let values = dispersed_start(&self.model.hyper, self.start, rng);
        self.state_at(xi, &values, target)
    }

    fn step<'t>(
        &self,
        state: &mut Self::State<'t>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        if state.precondition_at == Some(state.iteration) {
            state.sampler.precondition(state, target);
        }
        state.iteration += 1;
        state.nuts.advance(rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::grid::Grid;
    use crate::model::hyper::HyperName;
    use crate::model::hyper::fixtures::{base, model};
    use crate::model::spec::KernelSpec;

    /// The Laplace preconditioner is fitted halfway through a burn-in long enough for it, and
    /// never with `sampler.hyper_preconditioner = "none"`.
    #[test]
    fn the_preconditioner_is_fitted_halfway_through_burn_in_unless_turned_off() {
        let spec = model(
            Grid::new(4),
            KernelSpec::squared_exponential(0.4, 1.3),
            &[(HyperName::LengthScale, "log-normal(-1.0, 0.5)")],
        );
        let hyper = HyperModel {
            model: &spec,
            start: base(None),
        };
        let at = |burn_in, preconditioner| {
            JointNuts::new(hyper, burn_in, preconditioner)
                .unwrap()
                .precondition_at()
        };
        assert_eq!(at(1000, JointPreconditioner::Laplace), Some(500));
        assert_eq!(
            at(MIN_PRECONDITIONED_BURN_IN, JointPreconditioner::Laplace),
            Some(100)
        );
        assert_eq!(
            at(MIN_PRECONDITIONED_BURN_IN - 1, JointPreconditioner::Laplace),
            None
        );
        assert_eq!(at(1000, JointPreconditioner::None), None);
    }
}
