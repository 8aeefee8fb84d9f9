//! `sampler.hyper = "joint"`: the hyperparameters, the coefficients and the whitened field moved
//! together by one gradient-based chain on their joint posterior
//! ([`crate::model::hyper::joint::JointDensity`]): the non-centred model a statistician writes for
//! Stan or BlackJAX, with the prior's structure doing the linear algebra (the separable root and
//! its exact derivative in the length scale, O(N (nx + ny)) per gradient).
//!
//! With `sampler.kind = "nuts"` the chain is nuts-rs's NUTS on q = (xi, z_beta, z_theta), its step
//! size and diagonal mass matrix adapted during burn-in (the hyperparameters' coordinates get
//! their own scales from the adaptation). Chains start where the other updates start
//! ([`super::chain::dispersed_start`]): the prior's median or the study's value, each
//! coordinate moved by [`super::chain::START_SPREAD`] standard normals.

use super::chain::dispersed_start;
use super::settings::HyperModel;
use crate::model::hyper::Hyperparameters;
use crate::model::hyper::joint::JointDensity;
use crate::model::spec::ModelSpec;
use crate::model::target::Target;
use crate::sampler::nuts::{Nuts, NutsDensity, NutsState};
use crate::sampler::protocol::{ChainRng, Position, Sampler, StepInfo};

impl NutsDensity for JointDensity<'_> {
    fn dim(&self) -> usize {
        JointDensity::dim(self)
    }

    fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        JointDensity::log_density(self, q, gradient)
    }

    fn position(&mut self, q: &[f64], hyperparameters: &mut Vec<f64>) -> Position {
        let latent = self.latent_dim();
        let mut field = vec![0.0; self.model().grid.cells()];
        let point = self
            .point(q, &mut field)
            .expect("a point NUTS accepted has a finite density, so its prior exists");
        let observed = self.observed(&field);
        hyperparameters.clear();
        hyperparameters.extend(self.model().hyper.values(&point.values));
        Position {
            xi: q[..latent].to_vec(),
            field,
            observed,
            log_likelihood: point.log_likelihood,
        }
    }
}

/// NUTS on the joint posterior of the hyperparameters and the field.
#[derive(Debug, Clone)]
pub struct JointNuts {
    nuts: Nuts,
    model: ModelSpec,
    start: Hyperparameters,
}

impl JointNuts {
    pub fn new(nuts: Nuts, hyper: HyperModel) -> Self {
        Self {
            nuts,
            model: hyper.model.clone(),
            start: hyper.start,
        }
    }

    fn state_at<'t>(
        &'t self,
        xi: Vec<f64>,
        values: &Hyperparameters,
        target: &Target<'t>,
    ) -> NutsState<JointDensity<'t>> {
        let density = JointDensity::new(
            &self.model,
            self.start,
            target.likelihood,
            target.observed_cells,
        );
        let mut q = xi;
        q.extend(density.unconstrained(values));
        self.nuts.state(density, q)
    }
}

impl Sampler for JointNuts {
    type State<'t>
        = NutsState<JointDensity<'t>>
    where
        Self: 't;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> Self::State<'t> {
        self.state_at(xi, &self.start, target)
    }

    fn start<'t>(
        &'t self,
        xi: Vec<f64>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> Self::State<'t> {
        let values = dispersed_start(&self.model.hyper, self.start, rng);
        self.state_at(xi, &values, target)
    }

    fn step<'t>(
        &self,
        state: &mut Self::State<'t>,
        _target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        state.advance(rng)
    }
}
