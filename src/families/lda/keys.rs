//! The keys of the lda family, in the order of its job-table columns (shared keys listed by
//! name), each declared once.

use super::corpus::BARS;
use crate::study::keys::{
    Default, Keyed, MODEL_FAMILY, Rule, SAMPLER_BURN_IN, SAMPLER_ITERATIONS, SAMPLER_KIND,
    ValueType,
};

crate::declare_keys! {
    static DECLS; pub const KEYS;
    use MODEL_FAMILY,
    /// LDA: K, the number of topics.
    MODEL_TOPICS = model.topics {
        value: ValueType::Integer,
        rule: Rule::IntRange(2, 1_000),
        default: Default::Int(10),
    },
    /// LDA: alpha, the symmetric Dirichlet parameter of each document's topic mixture.
    MODEL_ALPHA = model.alpha { rule: Rule::Positive, default: Default::Float(1.0) },
    /// LDA: eta, the symmetric Dirichlet parameter of each topic's word distribution.
    MODEL_ETA = model.eta { rule: Rule::Positive, default: Default::Float(0.1) },
    /// LDA: the corpus: "bars", the synthetic bars corpus (data.documents, data.document_length), or a CSV of `doc_id,word,count` rows relative to the study file's folder (data/reuters_tm/README.md).
    DATA_CORPUS = data.corpus {
        value: ValueType::Text,
        rule: Rule::NonEmpty,
        default: Default::Text(BARS),
        keyed: Keyed::UnlessDefault,
    },
    /// LDA: documents of the synthetic bars corpus (drawn from the model with the job's data stream).
    DATA_DOCUMENTS = data.documents {
        value: ValueType::Integer,
        rule: Rule::IntRange(1, 1_000_000),
        default: Default::Int(500),
    },
    /// LDA: words per document of the bars corpus (every tenth is held out for the perplexity).
    DATA_DOCUMENT_LENGTH = data.document_length {
        value: ValueType::Integer,
        rule: Rule::IntRange(10, 100_000),
        default: Default::Int(100),
    },
    use SAMPLER_KIND,
    use SAMPLER_ITERATIONS,
    use SAMPLER_BURN_IN,
}
