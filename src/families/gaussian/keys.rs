//! The keys of the gaussian family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use crate::study::keys::{
    Default, MODEL_FAMILY, Rule, SAMPLER_BURN_IN, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND,
    ValueType,
};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    /// Gaussian family: the dimension d of the normal target N(m, S), S = (1 - rho) I + rho 1 1^T (not with model.covariance, whose size is the dimension).
    MODEL_DIMENSION = model.dimension {
        value: ValueType::Integer,
        rule: Rule::IntRange(2, 100_000),
        default: Default::Int(2),
    },
    /// Gaussian family: rho, the correlation of every pair of coordinates (-1 / (d - 1) < rho < 1; not with model.covariance).
    MODEL_CORRELATION = model.correlation {
        rule: Rule::Finite,
        default: Default::Float(0.9),
    },
    /// Gaussian family: the covariance S of the target N(m, S) in full, one row per coordinate: square, symmetric (to 1e-9 of its largest entry) and positive definite (its Cholesky factorisation must succeed).
    MODEL_COVARIANCE = model.covariance {
        value: ValueType::Rows,
        default: Default::Derived("none: (1 - rho) I + rho 1 1^T from model.dimension and model.correlation"),
    },
    /// Gaussian family: the mean m of the target N(m, S), one number per coordinate.
    MODEL_MEAN_VECTOR = model.mean_vector {
        value: ValueType::Numbers,
        default: Default::Derived("zeros"),
    },
    use SAMPLER_KIND,
    use SAMPLER_ITERATIONS,
    use SAMPLER_BURN_IN,
    use SAMPLER_CHAINS,
    /// Random-walk MH: the proposal's standard deviation per coordinate (gaussian family).
    SAMPLER_PROPOSAL_SD = sampler.proposal_sd {
        rule: Rule::Positive,
        default: Default::Float(1.0),
    },
}
