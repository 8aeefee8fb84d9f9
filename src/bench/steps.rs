//! `fieldmc bench steps`: the CPU cost of one step of each kind against the grid size, on a
//! simulated log-Gaussian Cox process (l = 0.1, variance 1, about 2 counts per cell, every cell
//! observed), one chain on the calling thread.
//!
//! A kind's once-per-target preparation (the Laplace fit and eigenpairs of gpcn, the spectral
//! root of mgrad) and its first chain's initialisation are timed apart as setup; then a few
//! steps warm the caches and the timed steps follow, with the step size the kind starts with
//! (the cost of a step does not depend on it, except for elliptical slice sampling, whose
//! shrinking brackets cost likelihood evaluations).

use crate::clock::Stopwatch;
use crate::model::data::{DataStreams, Dataset, Simulation};
use crate::model::{
    Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind, Observed, Target,
};
use crate::sampler::{ChainRng, Kind, KindVisitor, Sampler, SamplerKind, SamplerSettings};

/// The cost of one kind at one grid size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepCost {
    pub(crate) kind: SamplerKind,
    pub(crate) side: usize,
    /// CPU seconds of the sampler's preparation and first init.
    pub(crate) setup_seconds: f64,
    /// CPU microseconds per step.
    pub(crate) micros_per_step: f64,
    pub(crate) steps: usize,
}

/// The simulated problem at grid side `side`.
pub(crate) struct StepProblem {
    pub(crate) prior: KroneckerPrior,
    pub(crate) data: Dataset,
    pub(crate) likelihood: Likelihood,
    pub(crate) mean: f64,
}

impl StepProblem {
    pub(crate) fn new(side: usize, seed: u64) -> Self {
        let prior = KroneckerPrior::new(Grid::new(side), KernelSpec::squared_exponential(0.1, 1.0))
            .expect("the kernel factors");
        let key = format!("bench steps;D={side}");
        let mut streams = DataStreams::keyed(seed, &key);
        let mean = 2f64.ln() - 0.5;
        let simulation = Simulation {
            likelihood: LikelihoodKind::Poisson,
            subsample: 1,
            noise_sd: 1.0,
            offset: mean,
            trials: 1,
            mean: 0.0,
        };
        let data = Dataset::simulate(&prior, simulation, &mut streams).expect("simulated counts");
        let likelihood = Likelihood::new(
            LikelihoodKind::Poisson,
            data.observed.values.clone(),
            1.0,
            0.0,
        );
        Self {
            prior,
            data,
            likelihood,
            mean,
        }
    }

    pub(crate) fn target(&self) -> Target<'_> {
        Target {
            prior: &self.prior,
            likelihood: &self.likelihood,
            observed: Observed::Cells(&self.data.observed.cells),
            mean: self.mean,
        }
    }
}

/// Time `steps` steps of `kind` (its default step size) on `problem`.
pub(crate) fn step_cost(
    problem: &StepProblem,
    kind: SamplerKind,
    steps: usize,
    seed: u64,
) -> StepCost {
    struct Timer<'p> {
        problem: &'p StepProblem,
        steps: usize,
        seed: u64,
    }
    impl KindVisitor for Timer<'_> {
        type Output = (f64, f64);
        fn visit<S: Kind>(self, sampler: S) -> (f64, f64) {
            time_steps(&sampler, self.problem, self.steps, self.seed)
        }
    }
    let settings = SamplerSettings {
        burn_in: 1,
        ..SamplerSettings::new(kind)
    };
    let spec = settings.check().expect("default settings are valid");
    let (setup_seconds, seconds) = spec.visit(Timer {
        problem,
        steps,
        seed,
    });
    StepCost {
        kind,
        side: problem.prior.grid().nx(),
        setup_seconds,
        micros_per_step: seconds * 1e6 / steps.max(1) as f64,
        steps,
    }
}

fn time_steps<S: Sampler>(
    sampler: &S,
    problem: &StepProblem,
    steps: usize,
    seed: u64,
) -> (f64, f64) {
    let target = problem.target();
    let key = format!("bench steps;D={}", problem.prior.grid().nx());
    let mut rng = ChainRng::keyed(seed, &key);
    let mut xi = vec![0.0; target.dim()];
    rng.normals(&mut xi);
    let clock = Stopwatch::start();
    let mut state = sampler.init(xi, &target);
    let setup = clock.cpu_seconds();
    for _ in 0..(steps / 10).clamp(1, 100) {
        sampler.step(&mut state, &target, &mut rng);
    }
    let clock = Stopwatch::start();
    for _ in 0..steps {
        sampler.step(&mut state, &target, &mut rng);
    }
    (setup, clock.cpu_seconds())
}
