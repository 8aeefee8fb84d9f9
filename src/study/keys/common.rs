//! The keys several families share: which family a study is about, its sampler kind, and the
//! length, burn-in, thinning and number of its chains. Each family lists the ones it uses among
//! its own keys (`src/families/<name>/keys.rs`).

use super::{Default, Keyed, Label, Rule, ValueType};
use crate::sampler::spec::MAX_CHAINS;

crate::declare_keys! {
    static DECLS; pub const COMMON_KEYS;
    /// What the study is about: the latent Gaussian field, or one of the lecture notes' systems (see src/families/).
    MODEL_FAMILY = model.family {
        value: ValueType::RegistryWords,
        default: Default::Text("latent-field"),
        keyed: Keyed::UnlessDefault,
    },
    /// The sampler, one key for every family, each admitting its own words (each family's default is in the default column). latent-field: `auto` (the kind measured best for the model), a Markov kernel, or an approximation without chains (iterations, chains and step settings do not apply): `laplace`, the Laplace approximation (mode, sds and log evidence), or `inla`, INLA's nested Laplace approximation over the hyperparameters that have a `model.*_prior` (a grid of Laplace fits; inla_grid.parquet); partition: the chains flip, softmax-flip, learned-flip, or the baselines admin, kmeans, spectral; gaussian and bayes-net: systematic-scan or random-scan Gibbs, or (gaussian) random-walk Metropolis-Hastings; lda: collapsed Gibbs (theta and beta integrated out) or uncollapsed Gibbs (theta, beta and z in turn).
    SAMPLER_KIND = sampler.kind {
        value: ValueType::RegistryWords,
        default: Default::Text("pcn"),
        label: Label::new("", "sampler kind"),
    },
    /// Iterations per chain, burn-in included.
    SAMPLER_ITERATIONS = sampler.iterations {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, i64::MAX),
        default: Default::Int(10_000),
        label: Label::new("T", "iterations T"),
    },
    /// Leading iterations per chain left out of every estimate and table (and used for adaptation).
    SAMPLER_BURN_IN = sampler.burn_in { value: ValueType::Integer, rule: Rule::IntRange(0, i64::MAX), default: Default::Int(0), label: Label::new("burn in", "burn-in iterations") },
    /// The traces table keeps every thin-th kept state; every estimate and diagnostic (means, sds, ESS, R-hat, MCSE, acceptance) uses every kept state.
    SAMPLER_THIN = sampler.thin {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, i64::MAX),
        default: Default::Int(10),
        label: Label::new("thin", "thinning"),
    },
    /// Independent chains per job, each with its own stream.
    SAMPLER_CHAINS = sampler.chains { value: ValueType::Integer, rule: Rule::IntRange(1, MAX_CHAINS as i64), default: Default::Int(1), label: Label::new("chains", "chains") },
}

/// Keys renamed after their first release: (the old "section.key", the key that replaced it).
pub(crate) const RENAMED: &[(&str, super::Key)] = &[
    ("sampler.method", SAMPLER_KIND),
    ("sampler.scheme", SAMPLER_KIND),
];
