//! The keys of the markov-chain family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use crate::study::keys::{Default, MODEL_FAMILY, Rule, SAMPLER_ITERATIONS, ValueType};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    /// Markov-chain family: the transition matrix, one row per state (each row sums to 1); not given: generated from model.states (and model.lambda2).
    MODEL_TRANSITION = model.transition {
        value: ValueType::Rows,
        default: Default::Derived("none: generated"),
    },
    /// Markov-chain family: states of a generated transition matrix.
    MODEL_STATES = model.states {
        value: ValueType::Integer,
        rule: Rule::IntRange(2, 2_000),
        default: Default::Int(5),
    },
    /// Markov-chain family: a generated matrix with this second-eigenvalue modulus, P = (1 - lambda2) 1 pi^T + lambda2 I with pi drawn at random (not given: a random row-stochastic matrix, rows ~ Dirichlet(1)).
    MODEL_LAMBDA2 = model.lambda2 {
        rule: Rule::UnitInterval,
        default: Default::Derived("none: a random row-stochastic matrix"),
    },
    /// The power method stops when successive iterates differ by less than this in total variation.
    MODEL_TOLERANCE = model.tolerance {
        rule: Rule::Positive,
        default: Default::Float(1e-14),
    },
    use SAMPLER_ITERATIONS,
}
