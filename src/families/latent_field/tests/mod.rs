//! The latent field's study keys as a user meets them: studies loaded through the planner.

mod binomial;
mod exposure;
mod loading;
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
