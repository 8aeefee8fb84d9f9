//! The result tables of the lda family: its columns of `jobs.parquet` and its own tables,
//! declared once (see [`crate::table`]).

/// This family's rows of `jobs.parquet`: the shared columns and its own, in column order.
pub mod jobs {
    /// The shared columns every family's jobs row starts from.
    pub use crate::table::shared::jobs::*;
    use crate::table::{Col, Entry, Table, shared};

    pub const TOPIC_TV_MAX: Col<f64> = Col::optional(
        "topic_tv_max",
        "largest total-variation distance between a true topic and its matched estimated topic (Hungarian assignment; lda on bars)",
    );
    pub const HELDOUT_PERPLEXITY: Col<f64> = Col::optional(
        "heldout_perplexity",
        "perplexity of the held-out half of each document's words under the posterior-mean topics and document mixtures (lda)",
    );

    pub const TABLE: Table = Table {
        name: "jobs",
        row: "job",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(shared::jobs::REPLICATE.spec),
            Entry::Group(shared::jobs::PARAMETERS),
            Entry::Column(shared::jobs::STATUS.spec),
            Entry::Column(shared::jobs::ERROR.spec),
            Entry::Column(shared::jobs::WARNINGS.spec),
            Entry::Column(shared::ACCEPTANCE_RATE.spec),
            Entry::Column(shared::jobs::WALL_SECONDS.spec),
            Entry::Column(shared::jobs::SAMPLE_SECONDS.spec),
            Entry::Column(shared::jobs::ITERATIONS_PER_SECOND.spec),
            Entry::Column(shared::STEP_SIZE.spec),
            Entry::Column(shared::jobs::ESS_BULK.spec),
            Entry::Column(shared::jobs::ESS_BULK_PER_SECOND.spec),
            Entry::Column(shared::jobs::ESS_PER_ITERATION.spec),
            Entry::Column(shared::jobs::AUTOCORRELATION_LAG1.spec),
            Entry::Column(TOPIC_TV_MAX.spec),
            Entry::Column(HELDOUT_PERPLEXITY.spec),
        ],
    };
}

/// `topics.parquet`: one row per job, topic and word (lda).
pub mod topics {
    use crate::table::{Col, Entry, Table, shared};

    pub const TOPIC: Col<i64> = Col::required("topic", "estimated topic, 0 upwards");
    pub const WORD: Col<String> = Col::required("word", "the word (bars: `r<row>c<column>`)");
    pub const WORD_INDEX: Col<i64> =
        Col::required("word_index", "the word's index in the vocabulary");
    pub const PROBABILITY: Col<f64> = Col::required(
        "probability",
        "posterior mean over the kept sweeps of the topic's probability of the word",
    );
    pub const TRUE_TOPIC: Col<i64> = Col::nullable(
        "true_topic",
        "the true topic this one is matched to (Hungarian assignment; bars only)",
    );

    pub const TABLE: Table = Table {
        name: "topics",
        row: "job, topic and word (lda)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(TOPIC.spec),
            Entry::Column(WORD.spec),
            Entry::Column(WORD_INDEX.spec),
            Entry::Column(PROBABILITY.spec),
            Entry::Column(TRUE_TOPIC.spec),
        ],
    };
}

/// `lda_trace.parquet`: one row per job and sweep (lda).
pub mod lda_trace {
    use crate::table::{Col, Entry, Table, shared};

    pub const SWEEP: Col<i64> = Col::required("sweep", "the sweep, 1-based, burn-in included");
    pub const SECONDS: Col<f64> =
        Col::required("seconds", "seconds of sampling up to the end of the sweep");
    pub const LOGLIK: Col<f64> = Col::required(
        "loglik",
        "training log-likelihood sum over tokens of log sum_k theta_dk beta_kw at the sweep's state",
    );
    pub const TOPIC_TV_MAX: Col<f64> = Col::nullable(
        "topic_tv_max",
        "largest TV distance of a true topic to its matched topic at the sweep's state (bars)",
    );

    pub const TABLE: Table = Table {
        name: "lda_trace",
        row: "job and sweep (lda)",
        entries: &[
            Entry::Column(shared::JOB_ID.spec),
            Entry::Column(SWEEP.spec),
            Entry::Column(SECONDS.spec),
            Entry::Column(LOGLIK.spec),
            Entry::Column(TOPIC_TV_MAX.spec),
        ],
    };
}
