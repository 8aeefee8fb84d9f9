//! The latent field's study keys as a user meets them: studies loaded through the planner.

mod binomial;
mod exposure;
mod loading;
mod marks;
mod points;
mod sweeps;

pub(super) use std::path::Path;

pub(super) use crate::families::latent_field::keys;
pub(super) use crate::model::{Grid, LikelihoodKind};
pub(super) use crate::plan::{Point, Study, load, parse};
pub(super) use crate::sampler::SamplerKind;
pub(super) use crate::study::keys::SAMPLER_KIND;
pub(super) use crate::study::{
    ErrorKind, Key, MAX_STUDY_BYTES, ParamValue, QUICKSTART, QUICKSTART_ORIGIN, SbcSpec,
    StudyError, StudyKind,
};
pub(super) use std::path::PathBuf;

use crate::families::FamilySpec;
use crate::families::latent_field::job::{JobOptions, JobResult, run_job};
use crate::families::latent_field::rows;
use crate::families::latent_field::spec::{FieldJob, LatentFieldSpec};
use crate::job::JobHeader;

pub(super) const ORIGIN: &str = "studies/t.toml";

/// The latent-field settings of a point known to be one.
pub(super) fn latent(point: &Point) -> &crate::families::latent_field::LatentFieldSpec {
    match &point.spec {
        crate::families::FamilySpec::LatentField(spec) => spec,
        other => panic!("a {} point", other.family()),
    }
}

pub(super) fn parse_ok(text: &str) -> Study {
    parse(text, Path::new(ORIGIN)).unwrap_or_else(|e| panic!("study should load:\n{e}"))
}

pub(super) fn parse_err(text: &str) -> StudyError {
    match parse(text, Path::new(ORIGIN)) {
        Ok(_) => panic!("study should not load:\n{text}"),
        Err(e) => e,
    }
}

/// The error's first line (location and message).
pub(super) fn headline(text: &str) -> String {
    parse_err(text)
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// The one job of `study`: its header and spec.
pub(super) fn job_of(study: &Study) -> (JobHeader, LatentFieldSpec) {
    let job = crate::plan::plan(study).jobs.remove(0);
    match job.spec {
        FamilySpec::LatentField(spec) => (job.header, spec),
        other => panic!("a {} job", other.family()),
    }
}

/// `spec` run under `header` (its streams), and its fields table.
pub(super) fn run(
    header: &JobHeader,
    spec: &LatentFieldSpec,
) -> (JobResult, polars::prelude::DataFrame) {
    let options = JobOptions {
        exact: true,
        progress: None,
        chains_in_parallel: false,
    };
    let job = FieldJob { header, spec };
    let result = run_job(job, 3, &options).unwrap_or_else(|e| panic!("the job fails: {e}"));
    let fields = rows::fields(job, &result).unwrap();
    (result, fields)
}
