//! The latent field's sampler settings: the kind `auto` chooses, and each kind's budget
//! (chains, iterations, burn-in; [`SamplerKind::budget`]) where the study leaves it out, whether
//! the kind was named or chosen. [`default_notes`] says the same in words for the key reference.

use super::hyper_keys::hyper_priors;
use super::keys::*;
use super::spec::AUTO;
use crate::model::inla::{InlaIntegration, InlaStrategy};
use crate::sampler::hyper::{HyperProposalKind, HyperSettings, HyperUpdate, JointPreconditioner};
use crate::sampler::{Budget, SamplerKind, SamplerSettings, StepTuning};
use crate::study::keys::{
    SAMPLER_BURN_IN, SAMPLER_CHAINS, SAMPLER_ITERATIONS, SAMPLER_KIND, SAMPLER_THIN,
};
use crate::study::{Key, Settings};

/// The name under which a job's canonical key carries its kind's version
/// ([`crate::sampler::Kind::VERSION`]) once that is above 1. Not a study key: the study cannot
/// set it, and the jobs table does not show it; it only keeps results of a changed kind apart.
pub(crate) const SAMPLER_VERSION: &str = "sampler.version";

/// The same for the hyperparameter update's version ([`crate::sampler::hyper::HyperUpdate::version`]).
pub(crate) const SAMPLER_HYPER_VERSION: &str = "sampler.hyper_version";

/// The kind `sampler.kind = "auto"` (the default) chooses, from what measured best
/// (docs/samplers.md): laplace_hmc, HMC around the Laplace approximation, which converged on
/// every shipped real grid (poisson and probit) and whose proposals on gaussian data come from
/// the exact posterior. A study that infers hyperparameters (a `model.*_prior`, or names
/// `sampler.hyper`) or runs SBC gets pcn, the kind the hyperparameter updates and the calibration studies were written for
/// (laplace_hmc cannot host a hyperparameter update), or nuts for `sampler.hyper = "joint"`.
pub(crate) fn auto_kind(infers_hyper: bool, joint: bool, sbc: bool) -> SamplerKind {
    if joint {
        SamplerKind::Nuts
    } else if infers_hyper || sbc {
        SamplerKind::Pcn
    } else {
        SamplerKind::LaplaceHmc
    }
}

/// Whether a study infers hyperparameters (a `model.*_prior`) or names a hyperparameter update
/// (`sampler.hyper`): `auto` then gives the kind those updates alternate with.
pub(super) fn asks_for_hyper(settings: &Settings) -> bool {
    hyper_priors(settings).any() || settings.given(SAMPLER_HYPER).is_some()
}

/// The sampler settings of a point: each key the study gives, the kind's budget
/// ([`SamplerKind::budget`]) for the chains, iterations and burn-in it leaves out (named or
/// chosen by `auto` alike). A burn-in left out is at most half the iterations, so a study that
/// sets only a short chain keeps half of it; where that leaves no burn-in at all (one iteration),
/// or `auto` is given none, the kind runs at its starting step instead of refusing to adapt.
pub(super) fn sampler_settings(
    settings: &Settings,
    kind: SamplerKind,
    auto: bool,
) -> SamplerSettings {
    let budget = kind.budget();
    let given_or = |key: Key, default: i64| match settings.given(key) {
        Some(_) => settings.int(key),
        None => default,
    };
    let iterations = given_or(SAMPLER_ITERATIONS, budget.iterations as i64);
    let burn_in = given_or(SAMPLER_BURN_IN, (budget.burn_in as i64).min(iterations / 2));
    let burn_in_left_out = settings.given(SAMPLER_BURN_IN).is_none();
    let adapt = match settings.bool(SAMPLER_ADAPT) {
        None if burn_in == 0 && (auto || burn_in_left_out) => Some(false),
        given => given,
    };
    SamplerSettings {
        kind,
        beta: settings.float(SAMPLER_BETA),
        iterations: iterations as u64,
        burn_in: burn_in as u64,
        thin: settings.int(SAMPLER_THIN) as u64,
        chains: given_or(SAMPLER_CHAINS, budget.chains as i64) as usize,
        adapt,
        target_acceptance: settings.given_float(SAMPLER_TARGET_ACCEPTANCE),
        rank: match settings.int(SAMPLER_RANK) {
            0 => None,
            rank => Some(rank as usize),
        },
        hyper: HyperSettings {
            update: settings.choice(SAMPLER_HYPER, HyperUpdate::from_name),
            proposal: settings.choice(SAMPLER_HYPER_PROPOSAL, HyperProposalKind::from_name),
            importance_draws: settings.int(SAMPLER_HYPER_IMPORTANCE_DRAWS) as usize,
            preconditioner: settings
                .choice(SAMPLER_HYPER_PRECONDITIONER, JointPreconditioner::from_name),
        },
        inla_strategy: settings
            .given(SAMPLER_INLA_STRATEGY)
            .map(|_| settings.choice(SAMPLER_INLA_STRATEGY, InlaStrategy::from_name)),
        inla_integration: settings
            .given(SAMPLER_INLA_INTEGRATION)
            .map(|_| settings.choice(SAMPLER_INLA_INTEGRATION, InlaIntegration::from_name)),
    }
}

/// "by kind: V (kind, kind), W (kind)": the kinds grouped by their value, in kind order.
fn by_kind<'a>(values: impl Iterator<Item = (&'a str, String)>) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (kind, value) in values {
        match groups.iter_mut().find(|(known, _)| *known == value) {
            Some((_, kinds)) => kinds.push(kind),
            None => groups.push((value, vec![kind])),
        }
    }
    let groups: Vec<String> = groups
        .iter()
        .map(|(value, kinds)| format!("{value} ({})", kinds.join(", ")))
        .collect();
    format!("by kind: {}", groups.join(", "))
}

/// The defaults of the sampler keys in words, from the kinds' budgets ([`SamplerKind::budget`])
/// and [`auto_kind`]: what `fieldmc keys` and docs/keys.md print for the latent field.
pub(super) fn default_notes() -> Vec<(Key, String)> {
    let chains = || {
        SamplerKind::ALL
            .iter()
            .filter(|kind| kind.is_markov_chain())
    };
    let by_budget = |value: fn(Budget) -> u64| {
        by_kind(chains().map(|kind| (kind.name(), value(kind.budget()).to_string())))
    };
    let tuned = |value: fn(&StepTuning) -> String| {
        by_kind(
            SamplerKind::ALL
                .iter()
                .filter_map(|kind| Some((kind.name(), value(&kind.tuning()?)))),
        )
    };
    let no_chain = "; laplace and inla run no chain";
    vec![
        (
            SAMPLER_KIND,
            format!(
                "`\"{AUTO}\"`: {} (with sampler.hyper = \"joint\": {}; where hyperparameters are \
                 inferred or in SBC studies: {})",
                auto_kind(false, false, false),
                auto_kind(true, true, false),
                auto_kind(true, false, true),
            ),
        ),
        (
            SAMPLER_CHAINS,
            format!("{}{no_chain}", by_budget(|b| b.chains as u64)),
        ),
        (
            SAMPLER_ITERATIONS,
            format!("{}{no_chain}", by_budget(|b| b.iterations)),
        ),
        (
            SAMPLER_ADAPT,
            format!(
                "{}; elliptical has no step, nuts adapts its own",
                tuned(|t| t.adapts_by_default.to_string())
            ),
        ),
        (
            SAMPLER_TARGET_ACCEPTANCE,
            tuned(|t| t.target_acceptance.to_string()),
        ),
        (
            SAMPLER_BURN_IN,
            format!(
                "{}, at most half of sampler.iterations{no_chain}",
                by_budget(|b| b.burn_in)
            ),
        ),
    ]
}

/// Every kind's defaults as a Markdown table, from the kinds' declarations: its budget, whether
/// it adapts its step during burn-in, the acceptance it adapts to and the steps it admits.
/// docs/keys.md shows it (regenerated by `FIELDMC_UPDATE_KEYS=1 cargo test --release --test
/// studies`).
pub fn kind_defaults_table() -> String {
    let mut table = String::from(
        "| kind | chains | iterations | burn-in | adapts its step | target acceptance | step (`sampler.beta`) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for &kind in SamplerKind::ALL {
        if !kind.is_markov_chain() {
            table.push_str(&format!("| {kind} | runs no chain | | | | | |\n"));
            continue;
        }
        let budget = kind.budget();
        let (adapts, target, range) = match kind.tuning() {
            Some(t) => {
                let low = t
                    .min_step
                    .map_or("0 <".to_string(), |m| format!("{} <=", short(m)));
                let high = t
                    .max_step
                    .map_or(String::new(), |m| format!(" <= {}", short(m)));
                (
                    if t.adapts_by_default { "yes" } else { "no" },
                    t.target_acceptance.to_string(),
                    format!("{low} beta{high}"),
                )
            }
            // NUTS tunes its step size and mass matrix itself (nuts-rs), over the whole burn-in.
            None if kind == SamplerKind::Nuts => (
                "itself, with its mass matrix",
                "0.8 (nuts-rs)".to_string(),
                "not used".to_string(),
            ),
            None => ("no step", String::new(), "not used".to_string()),
        };
        table.push_str(&format!(
            "| {kind} | {} | {} | {} | {adapts} | {target} | {range} |\n",
            budget.chains, budget.iterations, budget.burn_in
        ));
    }
    table
}

/// `x` to six decimals without trailing zeros: 1, 1.570796, 0.001534.
fn short(x: f64) -> String {
    let text = format!("{x:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
