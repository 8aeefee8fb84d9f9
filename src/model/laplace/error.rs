//! Why a Laplace fit failed.

/// The Laplace fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LaplaceError {
    #[error("the log-likelihood is not finite at Newton's start")]
    NonFiniteStart,
    #[error(
        "Newton's method did not converge in {iterations} iterations (|gradient| = {gradient_norm:e}, \
         tolerance {tolerance:e})"
    )]
    NotConverged {
        iterations: usize,
        gradient_norm: f64,
        tolerance: f64,
    },
    #[error(
        "Newton's method stalled after {iterations} iterations: no step decreases the objective \
         (|gradient| = {gradient_norm:e}, above the tolerance)"
    )]
    Stalled {
        iterations: usize,
        gradient_norm: f64,
    },
    #[error(
        "a draw's conjugate-gradient solve with H = I + L^T G^T W G L stopped after \
         {iterations} products at residual {residual:e}"
    )]
    DrawNotSolved { iterations: usize, residual: f64 },
    #[error("I + W^1/2 G C G^T W^1/2 is not positive definite (a curvature is not a number?)")]
    NotPositiveDefinite,
}
