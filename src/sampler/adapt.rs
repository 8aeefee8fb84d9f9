//! Step-size adaptation during burn-in: Nesterov dual averaging on the log step size
//! (Hoffman & Gelman 2014, section 3.2.1, as in Stan), driven by each step's acceptance
//! probability. The kept chain uses the frozen averaged step, so it is a valid Markov chain.
//! The step stays within the kind's bounds ([`super::protocol::StepTuning`]): never above its
//! largest step, never below its smallest (where an iteration's work grows as the step
//! shrinks), so early rejections cannot drive an iteration's work without bound.

/// Dual averaging towards a target acceptance rate.
#[derive(Debug, Clone)]
pub(crate) struct DualAveraging {
    target: f64,
    /// log(10 h0): where the iterates are shrunk towards.
    mu: f64,
    /// log of the largest admissible step (e.g. pCN's beta <= 1).
    max_log_step: f64,
    /// log of the smallest admissible step (laplace_hmc's cap on leapfrog steps).
    min_log_step: f64,
    h_bar: f64,
    log_step: f64,
    log_step_bar: f64,
    count: f64,
    /// The update count at which the iterate last wanted more than the largest step.
    last_capped: f64,
    /// The update count at which the iterate last wanted less than the smallest step.
    last_floored: f64,
}

/// Stan's settings.
const GAMMA: f64 = 0.05;
const T0: f64 = 10.0;
const KAPPA: f64 = 0.75;

impl DualAveraging {
    /// Adapt from step `initial` towards acceptance `target`, never above `max_step` nor below
    /// `min_step`.
    pub(crate) fn new(
        initial: f64,
        target: f64,
        max_step: Option<f64>,
        min_step: Option<f64>,
    ) -> Self {
        let max_log_step = max_step.map_or(f64::INFINITY, f64::ln);
        let min_log_step = min_step.map_or(f64::NEG_INFINITY, f64::ln);
        let log_step = initial.ln().clamp(min_log_step, max_log_step);
        Self {
            target,
            mu: (10.0 * initial).ln(),
            max_log_step,
            min_log_step,
            h_bar: 0.0,
            log_step,
            log_step_bar: log_step,
            count: 0.0,
            last_capped: 0.0,
            last_floored: 0.0,
        }
    }

    /// Take one step's acceptance probability; returns the step size to use next.
    pub(crate) fn update(&mut self, acceptance: f64) -> f64 {
        self.count += 1.0;
        let m = self.count;
        let share = 1.0 / (m + T0);
        self.h_bar = (1.0 - share) * self.h_bar + share * (self.target - acceptance);
        let wanted = self.mu - m.sqrt() / GAMMA * self.h_bar;
        if wanted > self.max_log_step {
            self.last_capped = m;
        }
        if wanted < self.min_log_step {
            self.last_floored = m;
        }
        self.log_step = wanted.clamp(self.min_log_step, self.max_log_step);
        let weight = m.powf(-KAPPA);
        self.log_step_bar = weight * self.log_step + (1.0 - weight) * self.log_step_bar;
        self.log_step.exp()
    }

    /// The step to freeze at the end of burn-in: the averaged iterate.
    pub(crate) fn final_step(&self) -> f64 {
        self.log_step_bar.exp()
    }

    /// Whether the iterate wanted a step above the largest the kind admits in the second half
    /// of the updates: the acceptance then stays above the target because the kind cannot step
    /// further (laplace_hmc: its whole trajectory in one step), not because adaptation failed.
    pub(crate) fn capped(&self) -> bool {
        self.last_capped > self.count / 2.0
    }

    /// Whether the iterate wanted a step below the smallest the kind admits in the second half
    /// of the updates: the kept chain then runs at that smallest step with an acceptance below
    /// the target, and the job says so.
    pub(crate) fn floored(&self) -> bool {
        self.last_floored > self.count / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic acceptance curve a(h) = exp(-h): dual averaging settles where
    /// a(h) = target, i.e. h = -ln(target).
    #[test]
    fn settles_where_the_acceptance_curve_meets_the_target() {
        let target = 0.574;
        let mut adapter = DualAveraging::new(0.01, target, None, None);
        let mut step: f64 = 0.01;
        for _ in 0..5_000 {
            step = adapter.update((-step).exp());
        }
        let expected = -f64::ln(target);
        assert!((adapter.final_step() - expected).abs() < 0.01 * expected);
    }

    #[test]
    fn never_exceeds_the_largest_step() {
        let mut adapter = DualAveraging::new(0.5, 0.25, Some(1.0), None);
        for _ in 0..1_000 {
            assert!(adapter.update(1.0) <= 1.0);
        }
        assert!(adapter.final_step() <= 1.0);
        assert!(
            adapter.capped(),
            "every move accepted: it wanted more than the cap"
        );
        // Settling below the cap is not capped.
        let mut adapter = DualAveraging::new(0.01, 0.574, Some(10.0), None);
        let mut step: f64 = 0.01;
        for _ in 0..2_000 {
            step = adapter.update((-step).exp());
        }
        assert!(!adapter.capped());
    }

    /// Every move rejected (a step far too large, or a density that rejects everything): the
    /// step shrinks to the kind's smallest and no further, and the adapter says so.
    #[test]
    fn never_goes_below_the_smallest_step() {
        let mut adapter = DualAveraging::new(0.5, 0.8, Some(1.0), Some(1e-3));
        for _ in 0..1_000 {
            let step = adapter.update(0.0);
            assert!(step >= 1e-3, "{step}");
        }
        assert!(adapter.final_step() >= 1e-3);
        assert!(
            adapter.floored(),
            "every move rejected: it wanted less than the floor"
        );
        assert!(!adapter.capped());
        // A start below the floor is lifted to it.
        let adapter = DualAveraging::new(1e-9, 0.8, Some(1.0), Some(1e-3));
        assert!((adapter.final_step() - 1e-3).abs() < 1e-15);
    }
}
