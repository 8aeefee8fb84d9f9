//! The keys of the pagerank family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use super::super::markov_chain::keys::MODEL_TOLERANCE;
use crate::study::keys::{Default, MODEL_FAMILY, Rule, SAMPLER_ITERATIONS, ValueType};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    use MODEL_TOLERANCE,
    /// PageRank: the teleport probability p of the notes' K' = (1 - p) K + p / n (p = 0: no teleport).
    MODEL_TELEPORT = model.teleport {
        rule: Rule::UnitInterval,
        default: Default::Float(0.15),
    },
    /// PageRank: the graph inline, directed edges `from>to`: an array `["a>b", "b>c"]` or one string separated by spaces or commas (or give data.graph).
    MODEL_EDGES = model.edges {
        value: ValueType::Words,
        rule: Rule::NonEmpty,
        default: Default::Derived("none: data.graph"),
    },
    /// PageRank: a graph CSV relative to the study file's folder: `from,to` (directed edges) or `x0,y0,x1,y1` (undirected street segments joined at equal end points).
    DATA_GRAPH = data.graph {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Derived("none: model.edges"),
    },
    use SAMPLER_ITERATIONS,
}
