//! Generalised pCN with likelihood-informed proposals from the Laplace approximation
//! (Rudolf & Sprungk 2018, "On a generalization of the preconditioned Crank-Nicolson Metropolis
//! algorithm"; Cui, Law & Marzouk 2016, "Dimension-independent likelihood-informed MCMC"; the
//! low-rank posterior covariance as in hIPPYlib, Villa, Petra & Ghattas 2021).
//!
//! In whitened coordinates the Laplace approximation is N(m, Gamma) with m the posterior mode and
//! Gamma = (I + H)^-1, H = L^T G^T W G L the data-misfit Hessian at the mode
//! ([`crate::model::laplace`]). With the r dominant eigenpairs H ~ V D V^T (Lanczos, products
//! only), Gamma_r = (I + V D V^T)^-1 = I - V diag(d / (1 + d)) V^T, and its square root is
//! Gamma_r^1/2 = I + V diag(1 / sqrt(1 + d) - 1) V^T. The proposal
//!
//!   w = m + sqrt(1 - beta^2) (xi - m) + beta Gamma_r^1/2 z,  z ~ N(0, I),
//!
//! is an AR(1) step reversible with respect to N(m, Gamma_r), so the Metropolis-Hastings ratio is
//! pi(w) N(xi; m, Gamma_r) / (pi(xi) N(w; m, Gamma_r)), which with pi(xi) = exp(loglik) N(0, I)
//! simplifies to
//!
//!   loglik(w) - loglik(xi) - (w - xi) . m + (1/2) sum_k d_k (s_k(w)^2 - s_k(xi)^2),
//!
//! s(x) = V^T (x - m) (kept along the chain:
//! s(w) = sqrt(1 - beta^2) s(xi) + beta s(z) / sqrt(1 + d)). Any rank, any orthonormal V and any d >= 0 give a correct sampler (the ratio uses the
//! same Gamma_r as the proposal); the approximation's quality sets only the acceptance rate. For
//! a gaussian likelihood at full rank the proposal at beta = 1 is the exact posterior.
//!
//! Cost per step: one prior product (the field of w), two products with the N x r matrix V, and
//! O(N + M); the Laplace fit and the Lanczos run are made once per target and shared by the
//! chains ([`super::prepared`]).
//!
//! The rank: [`Rank::Auto`] keeps the converged eigenvalues d >= a threshold ([`RANK_THRESHOLD`]
//! for gpcn; Lanczos runs until they have converged) (directions
//! where the data shrink the prior variance by at least that share, d / (1 + d)), at most
//! [`rank_cap`] (which grows as sqrt(N), so a step stays O(N^1.5)); [`Rank::Fixed`] keeps the r
//! largest. The rank used is reported ([`LaplaceGaussian::report`]).

use std::sync::Arc;
use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

use super::kind::{Kind, KindSettings};
use super::prepared::{Prepared, TargetKey};
use super::protocol::Position;
use super::protocol::{ChainRng, Notes, Sampler, StepInfo, StepTuning};
use crate::model::laplace::{LaplaceFit, NewtonSettings, lanczos_steps};
use crate::model::prior::leading_block::LeadingBlock;
use crate::model::target::{Target, Workspace};

/// Eigenvalues of the misfit Hessian kept by [`Rank::Auto`]: at least this large.
pub(crate) const RANK_THRESHOLD: f64 = 0.01;

impl Rank {
    /// `sampler.rank`: that many eigenpairs when given, else from the spectrum above the
    /// kind's `threshold` (gpcn [`RANK_THRESHOLD`], laplace_hmc its own).
    pub(crate) fn of(given: Option<usize>, threshold: f64) -> Self {
        match given {
            Some(rank) => Rank::Fixed(rank),
            None => Rank::Auto { threshold },
        }
    }
}

/// The trace of the misfit Hessian [`LaplaceGaussian::in_prior_block`] may leave outside its
/// block: every direction left out is one the data shrink by at most this share of its prior
/// variance, far below any rank threshold (laplace_hmc keeps d >= 0.5, gpcn d >= 0.01), and the
/// kicks still integrate it exactly.
pub(crate) const BLOCK_LEFTOVER: f64 = 1e-4;

/// The largest rank [`Rank::Auto`] keeps for a `dim`-dimensional field: 8 sqrt(dim), between 64
/// and 1024 (so V holds at most 8 N^1.5 values and a step's two products with it cost O(N^1.5)).
pub(crate) fn rank_cap(dim: usize) -> usize {
    ((8.0 * (dim as f64).sqrt()) as usize)
        .clamp(64, 1024)
        .min(dim)
}

/// How many eigenpairs the proposal covariance keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rank {
    /// From the spectrum: the converged eigenvalues >= `threshold`, at most [`rank_cap`].
    Auto { threshold: f64 },
    /// The r largest (at most the dimension).
    Fixed(usize),
}

/// The Laplace Gaussian of each target a Laplace-based kind (gpcn, laplace_hmc) meets, at the
/// rank it keeps: computed once per target and shared by the chains.
#[derive(Debug)]
pub(crate) struct LaplaceGaussians {
    pub(crate) rank: Rank,
    /// Whether V lies in the prior's leading block where it can
    /// ([`LaplaceGaussian::in_prior_block`]).
    in_prior_block: bool,
    prepared: Prepared<TargetKey, LaplaceGaussian>,
}

impl LaplaceGaussians {
    /// Dense V ([`LaplaceGaussian::new`]).
    pub(crate) fn new(rank: Rank) -> Self {
        Self {
            rank,
            in_prior_block: false,
            prepared: Prepared::default(),
        }
    }

    /// V in the prior's leading block where it can ([`LaplaceGaussian::in_prior_block`]).
    pub(crate) fn in_prior_block(rank: Rank) -> Self {
        Self {
            in_prior_block: true,
            ..Self::new(rank)
        }
    }

    /// The Laplace Gaussian of `target`.
    pub(crate) fn of(&self, target: &Target) -> Arc<LaplaceGaussian> {
        self.prepared.get_or_compute(TargetKey::new(target), || {
            if self.in_prior_block {
                LaplaceGaussian::in_prior_block(target, self.rank)
            } else {
                LaplaceGaussian::new(target, self.rank)
            }
        })
    }

    /// The rank and Newton iterations of the last target's Laplace Gaussian.
    pub(crate) fn notes(&self) -> Notes {
        self.prepared.last().map_or_else(Notes::default, |g| Notes {
            rank: Some(g.rank()),
            newton_iterations: g
                .report
                .error
                .is_none()
                .then_some(g.report.newton_iterations),
            laplace_error: g.report.error.clone(),
        })
    }
}

/// Generalised pCN from the Laplace approximation.
#[derive(Debug)]
pub(crate) struct Gpcn {
    /// The starting step size beta in (0, 1].
    pub(crate) beta: f64,
    pub(crate) laplace: LaplaceGaussians,
}

impl Gpcn {
    pub(crate) fn new(beta: f64, rank: Rank) -> Self {
        Self {
            beta,
            laplace: LaplaceGaussians::new(rank),
        }
    }
}

impl Kind for Gpcn {
    const TUNING: Option<StepTuning> = Some(StepTuning {
        target_acceptance: 0.25,
        max_step: Some(1.0),
        min_step: None,
        adapts_by_default: true,
    });
    const HAS_RANK: bool = true;

    fn configure(settings: &KindSettings) -> Self {
        Self::new(settings.step, Rank::of(settings.rank, RANK_THRESHOLD))
    }
}

/// What building the proposal's Gaussian did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GaussianReport {
    /// Eigenpairs kept.
    pub(crate) rank: usize,
    /// The largest eigenvalue left out (a Ritz estimate), if any was computed.
    pub(crate) largest_omitted: Option<f64>,
    pub(crate) newton_iterations: usize,
    pub(crate) cg_iterations: usize,
    pub(crate) lanczos_steps: usize,
    /// Seconds for the Newton fit and the eigenpairs.
    pub(crate) seconds: f64,
    /// Why the Laplace fit failed, if it did (the proposal is then plain pCN: m = 0, rank 0).
    pub(crate) error: Option<String>,
}

/// N(m, Gamma_r) in whitened coordinates.
#[derive(Debug, Clone)]
pub(crate) struct LaplaceGaussian {
    pub(crate) mode: Vec<f64>,
    /// d_k, decreasing.
    pub(crate) values: Vec<f64>,
    /// V: N x r, orthonormal columns; or, with `block`, V's coordinates W in the block (k^2 x r,
    /// orthonormal columns; V = E W).
    pub(crate) vectors: Mat<f64>,
    /// The prior's leading spectral block V lies in ([`LaplaceGaussian::in_prior_block`]).
    block: Option<Arc<LeadingBlock>>,
    /// 1 / sqrt(1 + d_k).
    root: Vec<f64>,
    pub(crate) report: GaussianReport,
}

impl LaplaceGaussian {
    /// The Laplace fit of `target` and the dominant eigenpairs of its misfit Hessian, V dense.
    pub(crate) fn new(target: &Target, rank: Rank) -> Self {
        Self::build(target, rank, false)
    }

    /// As [`Self::new`], but with [`Rank::Auto`] the eigenpairs of the misfit Hessian compressed
    /// to the prior's leading spectral block ([`LeadingBlock`], [`BLOCK_LEFTOVER`]), where the
    /// prior has one: V = E W with W k^2 x r. Lanczos then runs on k^2 coordinates, and V is kept
    /// as E and W where their products cost less than V's ([`LeadingBlock::pays_for`]; on bei
    /// at D = 128, rank 100, a laplace_hmc run took a quarter of the time:
    /// `bench/results/laplace_hmc_block.md`), else expanded. Elsewhere (no block, a fixed rank)
    /// it is [`Self::new`].
    pub(crate) fn in_prior_block(target: &Target, rank: Rank) -> Self {
        Self::build(target, rank, true)
    }

    fn build(target: &Target, rank: Rank, blocked: bool) -> Self {
        let started = Instant::now();
        let dim = target.dim();
        let fit = match LaplaceFit::new(target, &NewtonSettings::default()) {
            Ok(fit) => fit,
            Err(error) => {
                let report = GaussianReport {
                    rank: 0,
                    largest_omitted: None,
                    newton_iterations: 0,
                    cg_iterations: 0,
                    lanczos_steps: 0,
                    seconds: started.elapsed().as_secs_f64(),
                    error: Some(error.to_string()),
                };
                return Self::from_parts(vec![0.0; dim], Vec::new(), Mat::zeros(dim, 0), report);
            }
        };
        let block = match rank {
            Rank::Auto { .. } if blocked => fit.leading_block(target, BLOCK_LEFTOVER),
            _ => None,
        };
        let (mut pairs, kept) = match (rank, &block) {
            (Rank::Auto { threshold }, block) => {
                let space = block.as_ref().map_or(dim, LeadingBlock::dim);
                let cap = rank_cap(dim).min(space);
                let steps = lanczos_steps(space, cap);
                let pairs = match block {
                    Some(block) => fit.eigenpairs_above_in(target, block, steps, threshold, 1e-3),
                    None => fit.eigenpairs_above(target, steps, threshold, 1e-3),
                };
                let kept = pairs.converged_above(threshold, 1e-3).min(cap);
                (pairs, kept)
            }
            (Rank::Fixed(r), _) => {
                let wanted = r.min(dim);
                let pairs = fit.eigenpairs(target, lanczos_steps(dim, wanted));
                let kept = wanted.min(pairs.values.len());
                (pairs, kept)
            }
        };
        let largest_omitted = pairs.values.get(kept).copied();
        let steps = pairs.steps;
        pairs.truncate(kept);
        let report = GaussianReport {
            rank: kept,
            largest_omitted,
            newton_iterations: fit.newton.iterations,
            cg_iterations: fit.newton.cg_iterations,
            lanczos_steps: steps,
            seconds: started.elapsed().as_secs_f64(),
            error: None,
        };
        let values = pairs.values.iter().map(|d| d.max(0.0)).collect();
        let mut gaussian = Self::from_parts(fit.mode, values, pairs.vectors, report);
        gaussian.block = block.map(Arc::new);
        if gaussian.block.as_ref().is_some_and(|b| !b.pays_for(kept)) {
            gaussian.vectors = gaussian.expanded_vectors();
            gaussian.block = None;
        }
        gaussian
    }

    /// N(mode, (I + V diag(values) V^T)^-1) with orthonormal `vectors`.
    pub(crate) fn from_parts(
        mode: Vec<f64>,
        values: Vec<f64>,
        vectors: Mat<f64>,
        report: GaussianReport,
    ) -> Self {
        let root = values
            .iter()
            .map(|d: &f64| 1.0 / (1.0 + d).sqrt())
            .collect();
        Self {
            mode,
            values,
            vectors,
            block: None,
            root,
            report,
        }
    }

    pub(crate) fn rank(&self) -> usize {
        self.values.len()
    }

    /// out = V^T x.
    pub(crate) fn project(&self, x: &[f64], out: &mut [f64]) {
        self.project_with(x, out, &mut self.direction_scratch());
    }

    /// out = V c.
    pub(crate) fn expand(&self, c: &[f64], out: &mut [f64]) {
        self.expand_with(c, out, &mut self.direction_scratch());
    }

    /// The scratch [`Self::project_with`] and [`Self::expand_with`] take (empty for a dense V):
    /// a chain keeps one, so that its steps allocate nothing.
    pub(crate) fn direction_scratch(&self) -> DirectionScratch {
        self.block
            .as_ref()
            .map_or_else(DirectionScratch::default, |block| DirectionScratch {
                inner: vec![0.0; block.dim()],
                half: vec![0.0; block.scratch_len()],
            })
    }

    /// out = V^T x, with `scratch` from [`Self::direction_scratch`] for a block's products.
    pub(crate) fn project_with(&self, x: &[f64], out: &mut [f64], scratch: &mut DirectionScratch) {
        if self.rank() == 0 {
            return;
        }
        match &self.block {
            None => transpose_times(self.vectors.as_ref(), x, out),
            Some(block) => {
                block.project(x, &mut scratch.inner, &mut scratch.half);
                transpose_times(self.vectors.as_ref(), &scratch.inner, out);
            }
        }
    }

    /// out = V c, with `scratch` for a block's products.
    pub(crate) fn expand_with(&self, c: &[f64], out: &mut [f64], scratch: &mut DirectionScratch) {
        if self.rank() == 0 {
            out.fill(0.0);
            return;
        }
        match &self.block {
            None => times(self.vectors.as_ref(), c, out),
            Some(block) => {
                times(self.vectors.as_ref(), c, &mut scratch.inner);
                block.expand(&scratch.inner, out, &mut scratch.half);
            }
        }
    }

    /// V itself (N x r), expanded from the block where V lies in one.
    pub(crate) fn expanded_vectors(&self) -> Mat<f64> {
        let (n, r) = (self.mode.len(), self.rank());
        let mut dense = Mat::zeros(n, r);
        let (mut unit, mut column) = (vec![0.0; r], vec![0.0; n]);
        let mut scratch = self.direction_scratch();
        for k in 0..r {
            unit.fill(0.0);
            unit[k] = 1.0;
            self.expand_with(&unit, &mut column, &mut scratch);
            for (i, &v) in column.iter().enumerate() {
                dense[(i, k)] = v;
            }
        }
        dense
    }

    /// The block's axis indices k, where V lies in one.
    #[cfg(test)]
    pub(crate) fn block_size(&self) -> Option<usize> {
        self.block.as_ref().map(|b| b.size())
    }
}

/// Scratch for the products with V when V lies in a prior block (empty otherwise;
/// [`LaplaceGaussian::direction_scratch`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct DirectionScratch {
    /// The block's k^2 coordinates.
    inner: Vec<f64>,
    /// The block's D x k half product.
    half: Vec<f64>,
}

/// out = A^T x.
fn transpose_times(a: MatRef<'_, f64>, x: &[f64], out: &mut [f64]) {
    let x = MatRef::from_column_major_slice(x, x.len(), 1);
    let out = MatMut::from_column_major_slice_mut(out, a.ncols(), 1);
    matmul(out, Accum::Replace, a.transpose(), x, 1.0, Par::Seq);
}

/// out = A c.
fn times(a: MatRef<'_, f64>, c: &[f64], out: &mut [f64]) {
    let c = MatRef::from_column_major_slice(c, a.ncols(), 1);
    let out = MatMut::from_column_major_slice_mut(out, a.nrows(), 1);
    matmul(out, Accum::Replace, a, c, 1.0, Par::Seq);
}

/// A gpcn chain.
#[derive(Debug, Clone)]
pub(crate) struct GpcnState {
    gaussian: Arc<LaplaceGaussian>,
    position: Position,
    proposal: Position,
    /// s = V^T (xi - m), and the proposal's.
    projection: Vec<f64>,
    proposal_projection: Vec<f64>,
    noise: Vec<f64>,
    /// V^T z, then scaled.
    coefficients: Vec<f64>,
    low_rank: Vec<f64>,
    beta: f64,
    work: Workspace,
}

impl GpcnState {
    #[cfg(test)]
    /// The proposal's Gaussian.
    pub(crate) fn gaussian(&self) -> &LaplaceGaussian {
        &self.gaussian
    }
}

super::protocol::chain_state_with_step!(GpcnState, position, beta);

impl Sampler for Gpcn {
    type State<'t> = GpcnState;

    fn init<'t>(&'t self, xi: Vec<f64>, target: &Target<'t>) -> GpcnState {
        let gaussian = self.laplace.of(target);
        let mut work = target.workspace();
        let position = Position::new(xi, target, &mut work);
        let r = gaussian.rank();
        let centred: Vec<f64> = position
            .xi
            .iter()
            .zip(&gaussian.mode)
            .map(|(x, m)| x - m)
            .collect();
        let mut projection = vec![0.0; r];
        gaussian.project(&centred, &mut projection);
        GpcnState {
            proposal: position.clone(),
            proposal_projection: projection.clone(),
            noise: vec![0.0; target.dim()],
            coefficients: vec![0.0; r],
            low_rank: vec![0.0; target.dim()],
            position,
            projection,
            gaussian,
            beta: self.beta,
            work,
        }
    }

    /// The rank and Newton iterations of the last target's Laplace Gaussian.
    fn notes(&self) -> Notes {
        self.laplace.notes()
    }

    fn step<'t>(&self, state: &mut GpcnState, target: &Target<'t>, rng: &mut ChainRng) -> StepInfo {
        let GpcnState {
            gaussian,
            position,
            proposal,
            projection,
            proposal_projection,
            noise,
            coefficients,
            low_rank,
            beta,
            work,
        } = state;
        let beta = *beta;
        let keep = (1.0 - beta * beta).max(0.0).sqrt();
        rng.normals(noise);
        // Gamma_r^1/2 z = z + V ((1 / sqrt(1 + d) - 1) V^T z).
        gaussian.project(noise, coefficients);
        for ((s_new, &s), (&t, &root)) in proposal_projection
            .iter_mut()
            .zip(projection.iter())
            .zip(coefficients.iter().zip(&gaussian.root))
        {
            *s_new = keep * s + beta * root * t;
        }
        for (t, &root) in coefficients.iter_mut().zip(&gaussian.root) {
            *t *= root - 1.0;
        }
        gaussian.expand(coefficients, low_rank);
        let mut shift = 0.0;
        for (((w, &x), &m), (&z, &l)) in proposal
            .xi
            .iter_mut()
            .zip(&position.xi)
            .zip(&gaussian.mode)
            .zip(noise.iter().zip(low_rank.iter()))
        {
            *w = m + keep * (x - m) + beta * (z + l);
            shift += (*w - x) * m;
        }
        target.field(&proposal.xi, &mut proposal.field, work);
        target.gather(&proposal.field, &mut proposal.observed);
        proposal.log_likelihood = target.likelihood.log_likelihood(&proposal.observed);
        let quadratic: f64 = gaussian
            .values
            .iter()
            .zip(proposal_projection.iter().zip(projection.iter()))
            .map(|(d, (a, b))| d * (a * a - b * b))
            .sum();
        let log_ratio = proposal.log_likelihood - position.log_likelihood - shift + 0.5 * quadratic;
        let moved = rng.accept(log_ratio);
        if moved {
            std::mem::swap(position, proposal);
            std::mem::swap(projection, proposal_projection);
        }
        StepInfo::metropolis(moved, log_ratio, 1, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Observed;

    /// With a gaussian likelihood at full rank, N(m, Gamma) is the posterior itself, so every
    /// proposal is accepted with probability one: a sign or factor wrong anywhere in the ratio
    /// shows here.
    #[test]
    fn full_rank_on_a_gaussian_posterior_accepts_every_proposal() {
        let sampler = Gpcn::new(0.7, Rank::Fixed(25));
        crate::sampler::test_problem::assert_every_move_accepted(&sampler, "gpcn", 200, |state| {
            // The misfit Hessian has rank M = 13: Lanczos finds those and (near) zeros.
            let values = &state.gaussian().values;
            assert!(values.len() >= 13 && values[12] > 1e-3);
            assert!(values[13..].iter().all(|&d| d < 1e-8));
        });
    }

    /// A Laplace fit that fails (here: gaussian data of 1e200, whose misfit overflows at the
    /// fit's start) is not silent: the notes the job reads carry its cause, and no Newton
    /// iterations are claimed for it.
    #[test]
    fn a_failed_laplace_fit_is_in_the_notes() {
        use crate::model::{Grid, KernelSpec, KroneckerPrior, Likelihood, LikelihoodKind};
        let prior =
            KroneckerPrior::new(Grid::new(3), KernelSpec::squared_exponential(0.3, 1.0)).unwrap();
        let cells: Vec<usize> = (0..9).collect();
        let likelihood = Likelihood::new(LikelihoodKind::Gaussian, vec![1e200; 9], 0.5, 0.0);
        let target = Target {
            prior: &prior,
            likelihood: &likelihood,
            observed: Observed::Cells(&cells),
            mean: 0.0,
        };
        let laplace = LaplaceGaussians::new(Rank::Fixed(3));
        let gaussian = laplace.of(&target);
        assert_eq!(gaussian.rank(), 0, "the fallback is the prior's geometry");
        let notes = laplace.notes();
        let error = notes.laplace_error.expect("the failure is noted");
        assert!(!error.is_empty());
        assert_eq!(notes.newton_iterations, None);
        assert_eq!(notes.rank, Some(0));
    }
}
