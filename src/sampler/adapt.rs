//! Step-size adaptation during burn-in: Nesterov dual averaging on the log step size
//! (Hoffman & Gelman 2014, section 3.2.1, as in Stan), driven by each step's acceptance
//! probability. The kept chain uses the frozen averaged step, so it is a valid Markov chain.

/// Dual averaging towards a target acceptance rate.
#[derive(Debug, Clone)]
pub struct DualAveraging {
    target: f64,
    /// log(10 h0): where the iterates are shrunk towards.
    mu: f64,
    /// log of the largest admissible step (e.g. pCN's beta <= 1).
    max_log_step: f64,
    h_bar: f64,
    log_step: f64,
    log_step_bar: f64,
    count: f64,
    /// The update count at which the iterate last wanted more than the largest step.
    last_capped: f64,
}

/// Stan's settings.
const GAMMA: f64 = 0.05;
const T0: f64 = 10.0;
const KAPPA: f64 = 0.75;

impl DualAveraging {
    /// Adapt from step `initial` towards acceptance `target`, never above `max_step`.
    pub fn new(initial: f64, target: f64, max_step: Option<f64>) -> Self {
        let max_log_step = max_step.map_or(f64::INFINITY, f64::ln);
        let log_step = initial.ln().min(max_log_step);
        Self {
            target,
            mu: (10.0 * initial).ln(),
            max_log_step,
            h_bar: 0.0,
            log_step,
            log_step_bar: log_step,
            count: 0.0,
            last_capped: 0.0,
        }
    }

    /// Take one step's acceptance probability; returns the step size to use next.
    pub fn update(&mut self, acceptance: f64) -> f64 {
        self.count += 1.0;
        let m = self.count;
        let share = 1.0 / (m + T0);
        self.h_bar = (1.0 - share) * self.h_bar + share * (self.target - acceptance);
        let wanted = self.mu - m.sqrt() / GAMMA * self.h_bar;
        if wanted > self.max_log_step {
            self.last_capped = m;
        }
        self.log_step = wanted.min(self.max_log_step);
        let weight = m.powf(-KAPPA);
        self.log_step_bar = weight * self.log_step + (1.0 - weight) * self.log_step_bar;
        self.log_step.exp()
    }

    /// The step to freeze at the end of burn-in: the averaged iterate.
    pub fn final_step(&self) -> f64 {
        self.log_step_bar.exp()
    }

    /// Whether the iterate wanted a step above the largest the kind admits in the second half
    /// of the updates: the acceptance then stays above the target because the kind cannot step
    /// further (laplace_hmc at a quarter turn), not because adaptation failed.
    pub fn capped(&self) -> bool {
        self.last_capped > self.count / 2.0
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
        let mut adapter = DualAveraging::new(0.01, target, None);
        let mut step: f64 = 0.01;
        for _ in 0..5_000 {
            step = adapter.update((-step).exp());
        }
        let expected = -f64::ln(target);
        assert!((adapter.final_step() - expected).abs() < 0.01 * expected);
    }

    #[test]
    fn never_exceeds_the_largest_step() {
        let mut adapter = DualAveraging::new(0.5, 0.25, Some(1.0));
        for _ in 0..1_000 {
            assert!(adapter.update(1.0) <= 1.0);
        }
        assert!(adapter.final_step() <= 1.0);
        assert!(
            adapter.capped(),
            "every move accepted: it wanted more than the cap"
        );
        // Settling below the cap is not capped.
        let mut adapter = DualAveraging::new(0.01, 0.574, Some(10.0));
        let mut step: f64 = 0.01;
        for _ in 0..2_000 {
            step = adapter.update((-step).exp());
        }
        assert!(!adapter.capped());
    }
}
