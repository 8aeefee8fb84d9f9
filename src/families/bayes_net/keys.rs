//! The keys of the bayes-net family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use crate::study::keys::{
    Default, MODEL_FAMILY, Rule, SAMPLER_BURN_IN, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND,
    ValueType,
};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    /// Bayes net: a TOML file of [[node]] tables (name, states, parents, table), relative to the study file's folder.
    MODEL_NETWORK = model.network {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
    },
    /// Bayes net: the observed nodes, `node=state` pairs: an array `["mrk=pass", "att=high"]` or one string separated by commas ("" for none).
    MODEL_EVIDENCE = model.evidence {
        value: ValueType::Words,
        default: Default::Text(""),
    },
    use SAMPLER_KIND,
    use SAMPLER_ITERATIONS,
    use SAMPLER_BURN_IN,
    use SAMPLER_CHAINS,
}
