//! The marginal auxiliary-gradient sampler mGrad of Titsias & Papaspiliopoulos (2018),
//! "Auxiliary gradient-based sampling algorithms", JRSS B 80(4), section 3 (reference MATLAB
//! implementation: `gpsampAuxMarg_fixedhypers.m` in github.com/mtitsias/aGrad).
//!
//! For a target exp(f(u)) N(u; 0, C) they introduce an auxiliary z ~ N(u + (delta/2) grad f(u),
//! (delta/2) I), propose from the Gaussian p(y | z) ~ N(y; 0, C) N(z; y, (delta/2) I) and
//! integrate z out. With C = U Lambda U^T the marginal proposal is, per eigen-direction k,
//!
//!   y_k ~ N( lambda_k1 ((2/delta) u_k + (grad f)_k), lambda_k1 (1 + (2/delta) lambda_k1) ),
//!   lambda_k1 = delta lambda_k / (2 lambda_k + delta),
//!
//! accepted with the full Metropolis-Hastings ratio. The auxiliary noise is isotropic in u, so
//! the proposal treats the prior's eigen-directions differently: where lambda_k >> delta it is a
//! Langevin step of size delta in u (the data-informed, smooth directions), where lambda_k << delta
//! a fresh draw from the prior (the rough directions the data cannot see).
//!
//! Formulation implemented: the u-space sampler, written in the prior's spectral coordinates eta
//! (u = mean + U Lambda^1/2 eta, eta ~ N(0, I) a priori; [`crate::model::prior::spectral`]).
//! Dividing the above by sqrt(lambda_k), it reads
//!
//!   eta'_k = a_k eta_k + (1 - a_k) g_k + sqrt(1 - a_k^2) z_k,  a_k = 2 lambda_k / (2 lambda_k + delta),
//!
//! g = Lambda^1/2 U^T G^T grad loglik the log-likelihood's gradient in eta: pCN-Langevin with a
//! step of its own in every eigen-direction (delta_k = delta / lambda_k). This is why the whitened
//! formulation is not used: in whitened coordinates the prior is N(0, I), every lambda_k is 1, and
//! mGrad is exactly pCN-Langevin (the paper's remark that pCNL is a special case), which fieldmc
//! already has as `pcnl`. The eigenbasis is what makes mGrad different. With a Kronecker prior a
//! step is two products with B_1 = L_1 P_1 (the field and the gradient), O(N^1.5) like pcnl. A
//! prior without a spectral root gets the whitened fallback (all lambda_k = 1, i.e. pcnl with
//! mgrad's step parametrisation delta = 2 (1 - a) / a), and works, only without the benefit.
//!
//! The chain's position in the prior's whitened coordinates, xi = P eta, is computed only when
//! asked for. delta adapts during burn-in towards an acceptance of 0.55 (the reference
//! implementation aims at 0.54 +- 0.05).

use std::cell::OnceCell;
use std::sync::Arc;

use super::kind::{Kind, KindSettings};
use super::prepared::{Prepared, PriorKey};
use super::protocol::Position;
use super::protocol::{ChainRng, ChainState, Sampler, StepInfo, StepTuning};
use crate::model::prior::spectral::{SpectralRoot, WhitenedSpectral};
use crate::model::target::Target;

/// mGrad with its starting step delta > 0 (a variance in the units of u).
#[derive(Debug)]
pub(crate) struct Mgrad {
    pub(crate) delta: f64,
    prepared: Prepared<PriorKey, Option<Arc<dyn SpectralRoot>>>,
}

impl Mgrad {
    pub(crate) fn new(delta: f64) -> Self {
        Self {
            delta,
            prepared: Prepared::default(),
        }
    }
}

impl Kind for Mgrad {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.55,
        max_step: None,
        min_step: None,
        adapts_by_default: true,
    });

    fn configure(settings: &KindSettings) -> Self {
        Self::new(settings.step)
    }
}

/// The spectral root a chain uses: the prior's own (shared) or the whitened fallback.
#[derive(Debug)]
enum Root<'t> {
    Spectral(Arc<dyn SpectralRoot>),
    Whitened(WhitenedSpectral<'t>),
}

impl Root<'_> {
    fn get(&self) -> &dyn SpectralRoot {
        match self {
            Root::Spectral(root) => root.as_ref(),
            Root::Whitened(root) => root,
        }
    }
}

/// Per-direction proposal coefficients for one delta.
#[derive(Debug, Clone, Default)]
struct Coefficients {
    keep: Vec<f64>,
    drift: Vec<f64>,
    sd: Vec<f64>,
    /// 1 / sd (0 where sd = 0: a direction the proposal does not move).
    inverse_sd: Vec<f64>,
}

impl Coefficients {
    fn new(eigenvalues: &[f64], delta: f64) -> Self {
        let mut c = Self::default();
        for &lambda in eigenvalues {
            let denominator = 2.0 * lambda + delta;
            c.keep.push(2.0 * lambda / denominator);
            c.drift.push(delta / denominator);
            let sd = (delta * (4.0 * lambda + delta)).sqrt() / denominator;
            c.sd.push(sd);
            c.inverse_sd.push(if sd > 0.0 { 1.0 / sd } else { 0.0 });
        }
        c
    }
}

/// A point with what the step needs there.
#[derive(Debug, Clone)]
struct Point {
    eta: Vec<f64>,
    field: Vec<f64>,
    /// G u: the field at the observations.
    observed: Vec<f64>,
    log_likelihood: f64,
    /// The log-likelihood's gradient in spectral coordinates.
    gradient: Vec<f64>,
    /// |eta|^2.
    squared_norm: f64,
}

/// The sum of squares of `values`, over eight running sums (so the additions vectorise).
fn sum_of_squares(values: &[f64]) -> f64 {
    let mut sums = [0.0; 8];
    let chunks = values.chunks_exact(8);
    let rest: f64 = chunks.remainder().iter().map(|x| x * x).sum();
    for chunk in chunks {
        for (s, x) in sums.iter_mut().zip(chunk) {
            *s += x * x;
        }
    }
    sums.iter().sum::<f64>() + rest
}

/// An mgrad chain.
#[derive(Debug)]
pub(crate) struct MgradState<'t> {
    root: Root<'t>,
    delta: f64,
    coefficients: Coefficients,
    current: Point,
    proposal: Point,
    noise: Vec<f64>,
    /// The backward proposal's standardised residual.
    residual: Vec<f64>,
    observed_gradient: Vec<f64>,
    scattered: Vec<f64>,
    scratch: Vec<f64>,
    /// xi = P eta, computed when asked for.
    whitened: OnceCell<Position>,
}

impl ChainState for MgradState<'_> {
    /// The position with its whitened coordinates xi = P eta, built when first asked for
    /// (the driver reads only the field and the log-likelihood, which are kept).
    fn current(&self) -> &Position {
        self.whitened.get_or_init(|| {
            let root = self.root.get();
            let mut xi = vec![0.0; self.current.eta.len()];
            let mut scratch = vec![0.0; root.scratch_len()];
            root.to_whitened(&self.current.eta, &mut xi, &mut scratch);
            Position {
                xi,
                field: self.current.field.clone(),
                observed: self.current.observed.clone(),
                log_likelihood: self.current.log_likelihood,
            }
        })
    }
    fn field(&self) -> &[f64] {
        &self.current.field
    }
    fn log_likelihood(&self) -> f64 {
        self.current.log_likelihood
    }
    fn step_size(&self) -> Option<f64> {
        Some(self.delta)
    }
    fn set_step_size(&mut self, step: f64) {
        self.delta = step;
        self.coefficients = Coefficients::new(self.root.get().eigenvalues(), step);
    }
}

impl MgradState<'_> {
    /// The field, log-likelihood and spectral gradient of `point.eta`.
    fn evaluate(&mut self, target: &Target, proposal: bool) {
        let root = self.root.get();
        let point = if proposal {
            &mut self.proposal
        } else {
            &mut self.current
        };
        point.squared_norm = sum_of_squares(&point.eta);
        root.apply(&point.eta, &mut point.field, &mut self.scratch);
        if target.mean != 0.0 {
            point.field.iter_mut().for_each(|u| *u += target.mean);
        }
        target.gather(&point.field, &mut point.observed);
        point.log_likelihood = target
            .likelihood
            .log_likelihood_and_gradient(&point.observed, &mut self.observed_gradient);
        target
            .observed
            .scatter(&self.observed_gradient, &mut self.scattered);
        root.apply_transpose(&self.scattered, &mut point.gradient, &mut self.scratch);
    }
}

impl Sampler for Mgrad {
    type State<'t> = MgradState<'t>;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> MgradState<'t> {
        let shared = self
            .prepared
            .get_or_compute(PriorKey::new(target.prior), || target.prior.spectral_root());
        let root = match shared.as_ref() {
            Some(root) => Root::Spectral(Arc::clone(root)),
            None => Root::Whitened(WhitenedSpectral::new(target.prior)),
        };
        let (dim, cells, m) = (target.dim(), target.cells(), target.observations());
        let scratch_len = root.get().scratch_len();
        let mut eta = vec![0.0; dim];
        let mut scratch = vec![0.0; scratch_len];
        root.get().to_spectral(&xi, &mut eta, &mut scratch);
        let point = Point {
            eta,
            field: vec![0.0; cells],
            observed: vec![0.0; m],
            log_likelihood: 0.0,
            gradient: vec![0.0; dim],
            squared_norm: 0.0,
        };
        let mut state = MgradState {
            coefficients: Coefficients::new(root.get().eigenvalues(), self.delta),
            root,
            delta: self.delta,
            proposal: point.clone(),
            current: point,
            noise: vec![0.0; dim],
            residual: vec![0.0; dim],
            observed_gradient: vec![0.0; m],
            scattered: vec![0.0; cells],
            scratch,
            whitened: OnceCell::new(),
        };
        state.evaluate(target, false);
        state
    }

    #[allow(clippy::needless_range_loop)]
    fn step<'t>(
        &self,
        state: &mut MgradState<'t>,
        target: &Target<'t>,
        rng: &mut ChainRng,
    ) -> StepInfo {
        rng.normals(&mut state.noise);
        {
            let c = &state.coefficients;
            let (current, proposal) = (&state.current, &mut state.proposal);
            for k in 0..proposal.eta.len() {
                proposal.eta[k] = c.keep[k] * current.eta[k]
                    + c.drift[k] * current.gradient[k]
                    + c.sd[k] * state.noise[k];
            }
        }
        state.evaluate(target, true);
        let (current, proposal, c) = (&state.current, &state.proposal, &state.coefficients);
        // log q(eta | eta') up to the shared constant; log q(eta' | eta) = -|z|^2 / 2.
        let residual = &mut state.residual;
        for k in 0..current.eta.len() {
            residual[k] =
                (current.eta[k] - c.keep[k] * proposal.eta[k] - c.drift[k] * proposal.gradient[k])
                    * c.inverse_sd[k];
        }
        let backward = sum_of_squares(residual);
        let log_ratio =
            proposal.log_likelihood - 0.5 * proposal.squared_norm - current.log_likelihood
                + 0.5 * current.squared_norm
                - 0.5 * backward
                + 0.5 * sum_of_squares(&state.noise);
        let moved = rng.accept(log_ratio);
        if moved {
            std::mem::swap(&mut state.current, &mut state.proposal);
            state.whitened.take();
        }
        StepInfo::metropolis(moved, log_ratio, 0, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Observed;
    use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};

    /// The proposal's log-density ratio against a direct evaluation of the mGrad proposal in
    /// the field (u-space, the paper's form) on a small grid: the spectral rewriting is exact.
    #[test]
    #[allow(clippy::needless_range_loop)]
    fn the_spectral_proposal_is_the_papers_u_space_proposal() {
        let prior =
            KroneckerPrior::new(Grid::new(4), KernelSpec::squared_exponential(0.4, 1.3)).unwrap();
        let root = crate::model::Prior::spectral_root(&prior).unwrap();
        let lambda = root.eigenvalues();
        let delta = 0.3;
        let c = Coefficients::new(lambda, delta);
        for k in 0..16 {
            let l1 = delta * lambda[k] / (2.0 * lambda[k] + delta);
            // Mean coefficient on u_k: (2/delta) l1; on (grad f)_k: l1 (u-space).
            // In eta = u / sqrt(lambda): keep = (2/delta) l1, drift = l1 / lambda.
            assert!((c.keep[k] - 2.0 * l1 / delta).abs() < 1e-14);
            if lambda[k] > 1e-12 {
                assert!((c.drift[k] - l1 / lambda[k]).abs() < 1e-12);
                let variance_u = l1 * (1.0 + 2.0 * l1 / delta);
                assert!((c.sd[k].powi(2) - variance_u / lambda[k]).abs() < 1e-12);
            }
            // With no gradient the proposal leaves the prior invariant: keep^2 + sd^2 = 1.
            assert!((c.keep[k].powi(2) + c.sd[k].powi(2) - 1.0).abs() < 1e-12);
        }
    }

    /// A chain's position is the prior's whitened coordinates of its field: L xi = u - mean.
    #[test]
    #[allow(clippy::needless_range_loop)]
    fn the_reported_position_is_in_the_priors_whitened_coordinates() {
        let prior =
            KroneckerPrior::new(Grid::new(5), KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        let cells = [1, 7, 12, 20];
        let likelihood =
            Likelihood::new(LikelihoodKind::Poisson, vec![0.0, 2.0, 1.0, 4.0], 1.0, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.2,
        };
        let sampler = Mgrad::new(0.5);
        let mut rng = ChainRng::keyed(2, "mgrad");
        let mut xi = vec![0.0; 25];
        rng.normals(&mut xi);
        let mut state = sampler.init(xi.clone(), &target);
        let check = |state: &MgradState, xi: &[f64]| {
            let mut work = target.workspace();
            let mut u = vec![0.0; 25];
            target.field(xi, &mut u, &mut work);
            for k in 0..25 {
                assert!((u[k] - state.field()[k]).abs() < 1e-12);
            }
        };
        check(&state, &xi);
        assert!(
            state
                .position()
                .iter()
                .zip(&xi)
                .all(|(a, b)| (a - b).abs() < 1e-12)
        );
        let mut moves = 0;
        for _ in 0..50 {
            moves += sampler.step(&mut state, &target, &mut rng).moved as usize;
        }
        assert!(moves > 0);
        let position = state.position().to_vec();
        check(&state, &position);
    }
}
