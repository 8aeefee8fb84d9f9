//! The result tables of the lda family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

use crate::table::shared;

crate::declare_table! {
    /// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
    pub mod jobs = "jobs", one row per "job", after [shared::jobs::TABLE.own] {
        TOPIC_TV_MAX: f64 = optional("topic_tv_max", "largest total-variation distance between a true topic and its matched estimated topic (Hungarian assignment; lda on bars)"),
        HELDOUT_PERPLEXITY: f64 = optional("heldout_perplexity", "perplexity of the held-out half of each document's words under the posterior-mean topics and document mixtures (lda)"),
    }
    items {
        /// The shared columns every family's jobs row starts from.
        pub use crate::table::shared::jobs::*;
    }
}

crate::declare_table! {
    /// `topics.parquet`: one row per job, topic and word (lda).
    pub(crate) mod topics = "topics", one row per "job, topic and word (lda)" {
        use shared::JOB_ID,
        TOPIC: i64 = required("topic", "estimated topic, 0 upwards").index(),
        WORD: String = required("word", "the word (bars: `r<row>c<column>`)").index(),
        WORD_INDEX: i64 = required("word_index", "the word's index in the vocabulary"),
        PROBABILITY: f64 = required("probability", "posterior mean over the kept sweeps of the topic's probability of the word"),
        TRUE_TOPIC: i64 = nullable("true_topic", "the true topic this one is matched to (Hungarian assignment; bars only)"),
    }
}

crate::declare_table! {
    /// `lda_trace.parquet`: one row per job and sweep (lda).
    pub(crate) mod lda_trace = "lda_trace", one row per "job and sweep (lda)" {
        use shared::JOB_ID,
        SWEEP: i64 = required("sweep", "the sweep, 1-based, burn-in included").index(),
        SECONDS: f64 = required("seconds", "seconds of sampling up to the end of the sweep").timing(),
        LOGLIK: f64 = required("loglik", "training log-likelihood sum over tokens of log sum_k theta_dk beta_kw at the sweep's state"),
        TOPIC_TV_MAX: f64 = nullable("topic_tv_max", "largest TV distance of a true topic to its matched topic at the sweep's state (bars)"),
    }
}
