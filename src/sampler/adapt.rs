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
    /// For a chain that divides an angle into whole steps
    /// ([`super::protocol::ChainState::whole_steps_of`]): the angle, and for each step count the
    /// update count at which an iterate last took that many.
    whole_steps: Option<(f64, Vec<f64>)>,
}

/// Stan's settings.
const GAMMA: f64 = 0.05;
const T0: f64 = 10.0;
const KAPPA: f64 = 0.75;

impl DualAveraging {
    /// Adapt from step `initial` towards acceptance `target`, never above `max_step` nor below
    /// `min_step`; `whole_steps_of`: the angle the kind divides into whole steps, if it does.
    pub(crate) fn new(
        initial: f64,
        target: f64,
        max_step: Option<f64>,
        min_step: Option<f64>,
        whole_steps_of: Option<f64>,
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
            whole_steps: whole_steps_of.map(|angle| (angle, Vec::new())),
        }
    }

    /// How many whole steps a step of `step` divides the angle into.
    fn step_count(angle: f64, step: f64) -> usize {
        // At most the kinds' cap on steps (laplace_hmc's 1,024) plus one: a larger count only
        // needs to compare as larger.
        (angle / step).ceil().clamp(1.0, 1025.0) as usize
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
        if let Some((angle, last_seen)) = &mut self.whole_steps {
            let count = Self::step_count(*angle, self.log_step.exp());
            if last_seen.len() <= count {
                last_seen.resize(count + 1, 0.0);
            }
            last_seen[count] = m;
        }
        let weight = m.powf(-KAPPA);
        self.log_step_bar = weight * self.log_step + (1.0 - weight) * self.log_step_bar;
        self.log_step.exp()
    }

    /// The step to freeze at the end of burn-in: the averaged iterate.
    pub(crate) fn final_step(&self) -> f64 {
        self.log_step_bar.exp()
    }

    /// Whether adaptation could not go further in the second half of the updates: the iterate
    /// wanted a step above the largest the kind admits, or, for a kind that takes whole steps,
    /// iterates tried fewer steps than the frozen step takes and came back (dual averaging moves
    /// the step up while the acceptance is above the target, so they came back because one step
    /// fewer fell below it). The acceptance then stays above the target because no admissible
    /// step does better, not because adaptation failed.
    pub(crate) fn capped(&self) -> bool {
        let late = |m: f64| m > self.count / 2.0;
        let fewer_steps_tried = self.whole_steps.as_ref().is_some_and(|(angle, last_seen)| {
            let settled = Self::step_count(*angle, self.final_step());
            last_seen.iter().take(settled).any(|&m| late(m))
        });
        late(self.last_capped) || fewer_steps_tried
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
        let mut adapter = DualAveraging::new(0.01, target, None, None, None);
        let mut step: f64 = 0.01;
        for _ in 0..5_000 {
            step = adapter.update((-step).exp());
        }
        let expected = -f64::ln(target);
        assert!((adapter.final_step() - expected).abs() < 0.01 * expected);
    }

    #[test]
    fn never_exceeds_the_largest_step() {
        let mut adapter = DualAveraging::new(0.5, 0.25, Some(1.0), None, None);
        for _ in 0..1_000 {
            assert!(adapter.update(1.0) <= 1.0);
        }
        assert!(adapter.final_step() <= 1.0);
        assert!(
            adapter.capped(),
            "every move accepted: it wanted more than the cap"
        );
        // Settling below the cap is not capped.
        let mut adapter = DualAveraging::new(0.01, 0.574, Some(10.0), None, None);
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
        let mut adapter = DualAveraging::new(0.5, 0.8, Some(1.0), Some(1e-3), None);
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
        let adapter = DualAveraging::new(1e-9, 0.8, Some(1.0), Some(1e-3), None);
        assert!((adapter.final_step() - 1e-3).abs() < 1e-15);
    }

    /// A kind that turns through an angle of 2 in whole steps, accepting 60 % of one-step
    /// trajectories and 98 % of longer ones (the jump laplace_hmc meets on the real grids):
    /// aiming at 0.9, dual averaging settles on two steps, having tried one late in burn-in, and
    /// says it could go no further; where two and three steps bracket the target instead of one
    /// and two, it settles on three. (A kind without whole steps that settles below its largest
    /// step is not capped: `never_exceeds_the_largest_step`.)
    #[test]
    fn a_kind_of_whole_steps_is_capped_when_one_step_fewer_falls_below_the_target() {
        let angle = 2.0;
        let settle = |acceptance: &dyn Fn(usize) -> f64| {
            let mut adapter = DualAveraging::new(0.2, 0.9, Some(angle), None, Some(angle));
            let mut step = 0.2;
            for _ in 0..150 {
                step = adapter.update(acceptance((angle / step).ceil() as usize));
            }
            let steps = (angle / adapter.final_step()).ceil() as usize;
            (steps, adapter.capped())
        };
        assert_eq!(settle(&|l| if l == 1 { 0.6 } else { 0.98 }), (2, true));
        assert_eq!(settle(&|l| if l <= 2 { 0.6 } else { 0.98 }), (3, true));
    }
}
