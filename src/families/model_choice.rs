//! Where model choice reads a study's PSIS-LOO results, for `fieldmc compare --loo`
//! ([`crate::compare`]) to rank jobs without knowing a family: the jobs-table columns that sum up
//! a job's LOO, the table of each observation's terms, and the tables holding each observation's
//! datum (so that two jobs can be checked to have seen the same data). The latent field is the one
//! family with a pointwise log-likelihood (`output.log_likelihood`); its schema names every
//! column here.

use super::latent_field::schema::{fields, jobs, loo, sites};
use crate::table::{Col, Table};

/// The columns model choice reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LooColumns {
    /// `jobs.parquet`: the job's elpd_loo, its standard error, p_loo and the observations whose
    /// Pareto k is bad.
    pub(crate) elpd_loo: Col<f64>,
    pub(crate) elpd_loo_se: Col<f64>,
    pub(crate) p_loo: Col<f64>,
    pub(crate) pareto_k_bad: Col<i64>,
    /// The table of the pointwise terms: one row per job and observation.
    pub(crate) pointwise: &'static Table,
    /// The observation's position in the likelihood, 0 upwards.
    pub(crate) observation: Col<i64>,
    /// The observation's loo_i.
    pub(crate) pointwise_elpd: Col<f64>,
    /// Where each observation is: each kind of place, one column each (null for the other).
    pub(crate) places: &'static [Place],
}

/// A kind of place an observation is at (a cell, a site), and where its datum is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    /// What one is called in messages (`cell`, `site`).
    pub(crate) noun: &'static str,
    /// The pointwise table's column naming it (null where the observation is not one).
    pub(crate) column: Col<i64>,
    /// The table holding the observations' data.
    pub(crate) data: &'static Table,
    /// Its column naming the place, as [`Place::column`] does.
    pub(crate) key: Col<i64>,
    /// Its columns that make the datum (the value and, binomial, the trials).
    pub(crate) values: &'static [Col<f64>],
    /// Only its rows whose text column holds this word (the sites in the fit).
    pub(crate) only: Option<(Col<String>, &'static str)>,
}

/// The latent field's model-choice columns.
pub(crate) const LOO: LooColumns = LooColumns {
    elpd_loo: jobs::ELPD_LOO,
    elpd_loo_se: jobs::ELPD_LOO_SE,
    p_loo: jobs::P_LOO,
    pareto_k_bad: jobs::PARETO_K_BAD,
    pointwise: &loo::TABLE,
    observation: loo::OBSERVATION,
    pointwise_elpd: loo::ELPD_LOO,
    places: &[
        Place {
            noun: "cell",
            column: loo::CELL,
            data: &fields::TABLE,
            key: fields::CELL,
            values: &[fields::OBSERVATION, fields::TRIALS],
            only: None,
        },
        Place {
            noun: "site",
            column: loo::SITE_ROW,
            data: &sites::TABLE,
            key: sites::ROW,
            values: &[sites::VALUE, sites::TRIALS],
            only: Some((sites::SET, sites::FITTED)),
        },
    ],
};
