//! `sampler.hyper = "joint-spectral"`: NUTS on the joint posterior in coordinates partially
//! centred per prior eigenmode ([`crate::model::hyper::spectral_joint`]), so that the field's
//! coordinates keep about unit posterior scale as the length scale and the variance move. The
//! data curvature w is the likelihood's mean curvature per cell
//! ([`super::settings::SurrogateNoise`]: 1 / alpha). Chains start as every hyperparameter chain
//! does ([`super::chain::dispersed_start`]), the driver's prior draw of xi mapped to eta.

use super::chain::dispersed_start;
use super::settings::{HyperModel, SurrogateNoise};
use crate::model::hyper::Hyperparameters;
use crate::model::hyper::spectral_joint::SpectralJointDensity;
use crate::model::spec::ModelSpec;
use crate::model::target::Target;
use crate::sampler::nuts::{Nuts, NutsDensity, NutsState};
use crate::sampler::protocol::{ChainRng, Position, Sampler, StepInfo};

impl NutsDensity for SpectralJointDensity<'_> {
    fn dim(&self) -> usize {
        self.layout().dim()
    }

    fn log_density(&mut self, q: &[f64], gradient: &mut [f64]) -> f64 {
        SpectralJointDensity::log_density(self, q, gradient)
    }

    fn position(&mut self, q: &[f64], hyperparameters: &mut Vec<f64>) -> Position {
        let mut field = vec![0.0; self.model().grid.cells()];
        let (values, log_likelihood) = self
            .point(q, &mut field)
            .expect("a point NUTS accepted has a finite density, so its prior exists");
        let xi = self.whitened(q).expect("its prior exists");
        hyperparameters.clear();
        hyperparameters.extend(self.model().hyper.values(&values));
        Position {
            xi,
            observed: self.observed(&field),
            field,
            log_likelihood,
        }
    }
}

/// NUTS on the partially centred joint posterior.
#[derive(Debug, Clone)]
pub(crate) struct SpectralJointNuts {
    model: ModelSpec,
    start: Hyperparameters,
    burn_in: u64,
}

impl SpectralJointNuts {
    pub(crate) fn new(hyper: HyperModel, burn_in: u64) -> Self {
        Self {
            model: hyper.model.clone(),
            start: hyper.start,
            burn_in,
        }
    }

    fn state_at<'t>(
        &'t self,
        xi: Vec<f64>,
        values: &Hyperparameters,
        target: &Target<'t>,
    ) -> NutsState<SpectralJointDensity<'t>> {
        let curvature = 1.0 / SurrogateNoise::for_target(target).alpha;
        let density = SpectralJointDensity::new(
            &self.model,
            self.start,
            target.likelihood,
            target.observed,
            curvature,
        );
        let q = density
            .from_whitened(&xi, values)
            .or_else(|| density.from_whitened(&xi, &self.start))
            .expect("the job's own prior exists at its starting values");
        Nuts::new(self.burn_in).state(density, q)
    }
}

impl Sampler for SpectralJointNuts {
    type State<'t>
        = NutsState<SpectralJointDensity<'t>>
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
