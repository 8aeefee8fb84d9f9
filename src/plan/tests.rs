//! Planning: job counts and order, canonical keys and ids, their stability when a sweep grows,
//! stream-key sharing, and the two printed forms.

use std::collections::HashSet;
use std::path::Path;

use super::*;
use crate::families::latent_field::keys::{COUNTS, NOISE, OBSERVATIONS, SAMPLER_BETA, TRUTH};

fn plan_of(text: &str) -> (Study, Plan) {
    let study = parse(text, Path::new("studies/p.toml")).unwrap_or_else(|e| panic!("{e}"));
    let plan = plan(&study);
    (study, plan)
}

const SWEEP_12: &str = "[study]\nseed = 7\nreplicates = 2\n[sweep]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n\"sampler.beta\" = [0.1, 0.2, 0.5]\n";

#[test]
fn two_kinds_by_three_betas_by_two_replicates_is_twelve_jobs_replicates_innermost() {
    let (_, plan) = plan_of(SWEEP_12);
    assert_eq!(plan.jobs.len(), 12);
    let replicates: Vec<u32> = plan.jobs.iter().map(|j| j.header.replicate).collect();
    assert_eq!(replicates, [0, 1].repeat(6));
    assert_eq!(
        *plan.jobs[0].header.param(SAMPLER_KIND),
        ParamValue::text("grw")
    );
    assert_eq!(
        (
            plan.jobs[2].header.param(SAMPLER_BETA).clone(),
            plan.jobs[2].header.replicate
        ),
        (ParamValue::Float(0.2), 0)
    );
    assert_eq!(
        *plan.jobs[11].header.param(SAMPLER_KIND),
        ParamValue::text("pcn")
    );
    let ids: HashSet<&str> = plan.jobs.iter().map(|j| j.header.id.as_str()).collect();
    assert_eq!(ids.len(), 12);
}

#[test]
fn params_list_every_resolved_parameter_in_one_fixed_order() {
    let (_, plan) = plan_of(SWEEP_12);
    let expected = [
        "model_family",
        "model_grid",
        "model_kernel",
        "model_length_scale",
        "model_variance",
        "model_likelihood",
        "model_offset",
        "model_evidence_draws",
        "model_mean",
        "model_length_scale_prior",
        "model_length_scale_y",
        "model_length_scale_y_prior",
        "model_variance_prior",
        "model_mean_prior",
        "model_noise_sd_prior",
        "model_window",
        "model_region",
        "data_source",
        "data_length_scale",
        "data_subsample",
        "data_trials_per_cell",
        "data_noise_sd",
        "data_path",
        "data_x",
        "data_y",
        "data_value",
        "data_column",
        "data_trials",
        "data_holdout",
        "data_folds",
        "data_fold",
        "data_covariates",
        "data_covariates_path",
        "data_exposure",
        "data_offset",
        "data_standardize",
        "model_coefficient_prior",
        "sampler_kind",
        "sampler_beta",
        "sampler_iterations",
        "sampler_burn_in",
        "sampler_thin",
        "sampler_chains",
        "sampler_adapt",
        "sampler_target_acceptance",
        "sampler_rank",
        "sampler_hyper",
        "sampler_hyper_proposal",
        "sampler_hyper_importance_draws",
        "sampler_hyper_preconditioner",
        "sampler_inla_strategy",
        "sampler_inla_integration",
        "output_field_draws",
        "output_exceedance",
        "output_marks",
        "output_mark_labels",
        "output_predict_sites",
        "output_cell_draws",
        "output_log_likelihood",
        "output_quantiles",
    ];
    // The latent field's keys, in declaration order (other families' keys are not a latent
    // job's parameters).
    for job in &plan.jobs {
        let names: Vec<&str> = job.header.params.iter().map(|(k, _)| k.column()).collect();
        assert_eq!(names, expected);
    }
    let latent = &plan.jobs[0].header.params;
    let first = &latent;
    assert_eq!(first[0].1, ParamValue::text("latent-field"));
    assert_eq!(first[1].1, ParamValue::Int(16));
    assert_eq!(
        first[8].1,
        ParamValue::Float(0.0),
        "model.mean: 0 for simulated data"
    );
    let value = |key: crate::study::Key| plan.jobs[0].header.param(key);
    assert_eq!(
        *value(crate::families::latent_field::keys::DATA_PATH),
        ParamValue::Null
    );
    assert_eq!(
        *value(crate::study::keys::SAMPLER_KIND),
        ParamValue::text("grw")
    );
    assert_eq!(
        *value(crate::families::latent_field::keys::SAMPLER_BETA),
        ParamValue::Float(0.1)
    );
    assert_eq!(
        *value(crate::families::latent_field::keys::MODEL_WINDOW),
        ParamValue::Null,
        "model.window: none given"
    );
}

#[test]
fn canonical_keys_are_sorted_pairs_and_ids_hash_seed_and_key() {
    let (study, plan) = plan_of(SWEEP_12);
    let job = &plan.jobs[0];
    assert_eq!(
        job.header.key,
        "data.length_scale=0.3;data.noise_sd=1.0;data.source=simulated;data.subsample=4;\
         model.evidence_draws=0;model.grid=16;model.kernel=squared-exponential;model.length_scale=0.3;\
         model.likelihood=gaussian;model.offset=0.0;model.variance=1.0;replicate=0;\
         sampler.beta=0.1;sampler.burn_in=5000;sampler.chains=4;sampler.iterations=10000;\
         sampler.kind=grw;sampler.thin=10;study.kind=mcmc"
    );
    let mut material = study.file.seed.to_le_bytes().to_vec();
    material.extend_from_slice(job.header.key.as_bytes());
    assert_eq!(job.header.id, blake3::hash(&material).to_hex()[..12]);
    assert_eq!(job.header.id.len(), 12);
    assert!(job.header.id.chars().all(|c| c.is_ascii_hexdigit()));
    // Another seed, other ids; the same seed, the same ids.
    let (_, reseeded) = plan_of(&SWEEP_12.replace("seed = 7", "seed = 8"));
    assert_ne!(reseeded.jobs[0].header.id, job.header.id);
    assert_eq!(reseeded.jobs[0].header.key, job.header.key);
    assert_eq!(plan_of(SWEEP_12).1, plan);
}

#[test]
fn adding_sweep_values_leaves_existing_jobs_unchanged() {
    let (_, before) = plan_of(SWEEP_12);
    let grown = SWEEP_12
        .replace("[0.1, 0.2, 0.5]", "[0.05, 0.1, 0.2, 0.5, 0.9]")
        .replace("[\"grw\", \"pcn\"]", "[\"pcn\", \"grw\"]");
    let (_, after) = plan_of(&(grown + "\"model.grid\" = [16]\n"));
    assert_eq!(after.jobs.len(), 20);
    for job in &before.jobs {
        let same = after.jobs.iter().find(|j| j.header.id == job.header.id);
        let same =
            same.unwrap_or_else(|| panic!("job {} ({}) lost", job.header.id, job.header.key));
        assert_eq!(same.header.key, job.header.key);
        assert_eq!(same.header.streams, job.header.streams);
        assert_eq!(same.header.params, job.header.params);
    }
}

#[test]
fn samplers_of_one_sweep_point_share_data_streams_but_not_chains() {
    let (_, plan) = plan_of(SWEEP_12);
    let find = |kind: &str, beta: f64, replicate: u32| {
        plan.jobs
            .iter()
            .find(|j| {
                *j.header.param(SAMPLER_KIND) == ParamValue::text(kind)
                    && *j.header.param(SAMPLER_BETA) == ParamValue::Float(beta)
                    && j.header.replicate == replicate
            })
            .unwrap()
    };
    let grw = find("grw", 0.2, 1);
    let pcn = find("pcn", 0.5, 1);
    for stream in [&TRUTH, &OBSERVATIONS, &NOISE, &COUNTS] {
        let (of_grw, of_pcn) = (
            grw.header.streams.data(stream),
            pcn.header.streams.data(stream),
        );
        assert_eq!(of_grw, of_pcn, "{}", stream.name);
    }
    assert_ne!(grw.header.streams.chain, pcn.header.streams.chain);
    assert_eq!(grw.header.streams.chain, grw.header.key);
    let other_replicate = find("grw", 0.2, 0);
    for stream in [&TRUTH, &OBSERVATIONS] {
        let replicated = other_replicate.header.streams.data(stream);
        assert_ne!(
            replicated,
            grw.header.streams.data(stream),
            "{}",
            stream.name
        );
    }
    assert_eq!(
        grw.header.streams.data(&TRUTH),
        "data.length_scale=0.3;model.grid=16;model.kernel=squared-exponential;model.variance=1.0;replicate=1"
    );
    assert_eq!(
        grw.header.streams.data(&COUNTS),
        "data.length_scale=0.3;data.source=simulated;data.subsample=4;model.grid=16;\
         model.kernel=squared-exponential;model.offset=0.0;model.variance=1.0;replicate=1"
    );
}

#[test]
fn sweeping_noise_or_subsample_keeps_the_truth() {
    let (_, plan) =
        plan_of("[sweep]\n\"data.noise_sd\" = [0.5, 1.0]\n\"data.subsample\" = [2, 4]\n");
    let truths: HashSet<&str> = plan
        .jobs
        .iter()
        .map(|j| j.header.streams.data(&TRUTH))
        .collect();
    assert_eq!(truths.len(), 1);
    let observations: HashSet<&str> = plan
        .jobs
        .iter()
        .map(|j| j.header.streams.data(&OBSERVATIONS))
        .collect();
    assert_eq!(observations.len(), 2);
    let noise: HashSet<&str> = plan
        .jobs
        .iter()
        .map(|j| j.header.streams.data(&NOISE))
        .collect();
    assert_eq!(
        noise.len(),
        2,
        "noise follows the subsample but not noise_sd"
    );
    // The model's assumed length scale does not touch the data either.
    let (_, misspecified) =
        plan_of("[data]\nlength_scale = 0.3\n[sweep]\n\"model.length_scale\" = [0.1, 0.3]\n");
    assert_eq!(
        misspecified.jobs[0].header.streams.data(&TRUTH),
        misspecified.jobs[1].header.streams.data(&TRUTH)
    );
    assert_ne!(
        misspecified.jobs[0].header.streams.chain,
        misspecified.jobs[1].header.streams.chain
    );
}

#[test]
fn the_text_table_shows_swept_columns_aligned() {
    let (study, plan) = plan_of(SWEEP_12);
    let table = plan.to_text_table(&study);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 13);
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "id",
            "replicate",
            "sampler_kind",
            "sampler_beta",
            "model_likelihood"
        ]
    );
    let column_start = |line: &str, n: usize| {
        let mut starts = Vec::new();
        let mut previous = ' ';
        for (i, c) in line.char_indices() {
            if c != ' ' && previous == ' ' {
                starts.push(i);
            }
            previous = c;
        }
        starts[n]
    };
    for line in &lines[1..] {
        for n in 0..5 {
            assert_eq!(column_start(line, n), column_start(lines[0], n), "{table}");
        }
    }
    assert!(lines[1].starts_with(&plan.jobs[0].header.id));
    assert!(lines[1].contains("grw") && lines[1].contains("0.1") && lines[1].contains("gaussian"));
}

#[test]
fn the_csv_has_every_parameter_and_empty_nulls() {
    let (_, plan) = plan_of(SWEEP_12);
    let csv = plan.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 13);
    // job_id, replicate, then one column per key of the study's family, in declaration order.
    let latent: Vec<Key> = crate::families::Family::LatentField.keys().to_vec();
    let columns: Vec<&str> = latent.iter().map(|k| k.column()).collect();
    assert_eq!(lines[0], format!("job_id,replicate,{}", columns.join(",")));
    for line in &lines {
        assert_eq!(csv_fields(line).len(), 2 + latent.len(), "{line}");
    }
    let fields = csv_fields(lines[1]);
    let field = |key: Key| fields[2 + latent.iter().position(|k| *k == key).unwrap()].as_str();
    assert_eq!(fields[0], plan.jobs[0].header.id);
    assert_eq!(field(crate::families::latent_field::keys::MODEL_GRID), "16");
    assert_eq!(
        field(crate::families::latent_field::keys::DATA_PATH),
        "",
        "data_path is empty for simulated data"
    );
    assert_eq!(
        field(crate::families::latent_field::keys::SAMPLER_BETA),
        "0.1"
    );
}

/// The fields of a CSV line, a quoted field (`"normal(0, 1)"`) kept whole, its quotes removed.
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn sbc_settings_enter_the_key() {
    let (_, mcmc) = plan_of("[study]\nkind = \"mcmc\"\n");
    let (_, sbc) = plan_of("[study]\nkind = \"sbc\"\n[sbc]\ndraws = 50\n");
    assert!(
        sbc.jobs[0]
            .header
            .key
            .ends_with(";sbc.draws=50;sbc.replications=100;study.kind=sbc"),
        "{}",
        sbc.jobs[0].header.key
    );
    assert_ne!(sbc.jobs[0].header.id, mcmc.jobs[0].header.id);
    assert_eq!(
        sbc.jobs[0].header.streams.data(&TRUTH),
        mcmc.jobs[0].header.streams.data(&TRUTH)
    );
}

#[test]
fn naming_the_default_family_leaves_ids_keys_and_streams_unchanged() {
    let (_, implicit) = plan_of(SWEEP_12);
    let explicit_text = SWEEP_12.replace("[sweep]", "[model]\nfamily = \"latent-field\"\n[sweep]");
    let (_, explicit) = plan_of(&explicit_text);
    assert_eq!(implicit.jobs.len(), explicit.jobs.len());
    for (a, b) in implicit.jobs.iter().zip(&explicit.jobs) {
        assert_eq!(
            (&a.header.id, &a.header.key, &a.header.streams),
            (&b.header.id, &b.header.key, &b.header.streams)
        );
        assert!(!a.header.key.contains("model.family"), "{}", a.header.key);
    }
}

/// A kind whose draws changed carries its version in the job key (`sampler.version`, laplace_hmc
/// at 3, nuts at 2, laplace at 3), so a results folder of the older version is recomputed rather
/// than mixed; a kind at version 1 carries none, so the ids of its jobs stay what they were.
#[test]
fn a_changed_kind_carries_its_version_in_the_key_and_the_others_keep_their_ids() {
    let study = |kind: &str| {
        format!(
            "[study]\nseed = 7\n[model]\nlikelihood = \"poisson\"\ngrid = 8\n\
             [data]\nsource = \"simulated\"\n[sampler]\nkind = \"{kind}\"\n"
        )
    };
    for (kind, version) in [("laplace_hmc", 3), ("nuts", 2), ("laplace", 3)] {
        let (_, plan) = plan_of(&study(kind));
        let key = &plan.jobs[0].header.key;
        let carried = format!("sampler.version={version};");
        assert!(key.contains(&carried), "{kind}: {key}");
    }
    for kind in ["pcn", "grw"] {
        let (_, plan) = plan_of(&study(kind));
        let key = &plan.jobs[0].header.key;
        assert!(!key.contains("sampler.version"), "{kind}: {key}");
    }
}

/// `data.holdout` is 0 for real data unless given, and part of the key either way: a study that
/// writes `holdout = 0.2` keeps the key it had when 0.2 was the default (the id pinned from the
/// planner when laplace_hmc, the kind `auto` gives it, became version 3; 5a46ae630987 at
/// version 2, 0679338e214d before);
/// one that writes nothing fits every cell under another key and id.
#[test]
fn an_explicit_holdout_keeps_its_id_and_the_default_holds_nothing_out() {
    let csv = "[study]\nseed = 7\n[model]\nlikelihood = \"poisson\"\ngrid = 32\n\
               [data]\nsource = \"csv\"\npath = \"../data/lansing_grid32.csv\"\n";
    let (_, default) = plan_of(csv);
    let (_, explicit) = plan_of(&format!("{csv}holdout = 0.2\n"));
    let (default, explicit) = (&default.jobs[0].header, &explicit.jobs[0].header);
    assert!(default.key.contains("data.holdout=0.0;"), "{}", default.key);
    assert!(
        explicit.key.contains("data.holdout=0.2;"),
        "{}",
        explicit.key
    );
    assert_eq!(explicit.id, "d4c028e022e7");
    assert_ne!(default.id, explicit.id);
    assert_ne!(default.streams, explicit.streams);
}

/// A multi-axis sweep (a paired group among them) with replicates.
const SWEEP_3_AXES: &str = "[study]\nseed = 11\nreplicates = 3\n[sampler]\nburn_in = 100\n[sweep]\n\"model.grid\" = [4, 6]\n\
    \"sampler.kind\" = [\"grw\", \"mala\"]\n[sweep.paired.lengths]\n\"model.length_scale\" = [0.2, 0.4]\n\
    \"data.length_scale\" = [0.2, 0.5]\n";

/// The canonical key as the planner first built it, for each job on its own: every pair
/// (the replicate's included) sorted and joined.
fn eager_key(study: &Study, point: &Point, replicate: u32) -> String {
    let (spec, params) = (&point.spec, &point.params);
    let mut pairs: Vec<(String, String)> = params
        .iter()
        .filter(|(key, value)| in_canonical_key(spec, *key, value))
        .map(|(key, value)| (key.dotted().to_string(), value.canonical()))
        .collect();
    pairs.push(("replicate".to_string(), replicate.to_string()));
    pairs.push(("study.kind".to_string(), study.file.kind.name().to_string()));
    pairs.sort();
    let joined: Vec<String> = pairs.iter().map(|(n, v)| format!("{n}={v}")).collect();
    joined.join(";")
}

#[test]
fn keys_spliced_per_point_equal_keys_built_per_job() {
    let (study, plan) = plan_of(SWEEP_3_AXES);
    assert_eq!(plan.jobs.len(), 2 * 2 * 2 * 3);
    let mut expected = Vec::new();
    for point in study.points.resolved() {
        for replicate in 0..3 {
            expected.push(eager_key(&study, &point, replicate));
        }
    }
    let keys: Vec<&str> = plan.jobs.iter().map(|j| j.header.key.as_str()).collect();
    assert_eq!(keys, expected);
    for job in &plan.jobs {
        assert_eq!(job.header.id, job_id(study.file.seed, &job.header.key));
        assert!(
            job.header
                .streams
                .data(&TRUTH)
                .contains(&format!("replicate={}", job.header.replicate))
        );
    }
}

#[test]
fn a_study_lists_the_jobs_of_its_plan_without_building_them() {
    let (study, plan) = plan_of(SWEEP_3_AXES);
    let listing = StudyListing(&study);
    let values = |params: &Params| {
        let values: Vec<String> = params.iter().map(|(_, v)| v.canonical()).collect();
        values.join(",")
    };
    let mut listed = Vec::new();
    listing
        .jobs(&values, &mut |job| {
            listed.push((job.id.to_string(), job.replicate, job.tail.to_string()));
            Ok(())
        })
        .unwrap();
    let planned: Vec<(String, u32, String)> = plan
        .jobs
        .iter()
        .map(|j| {
            (
                j.header.id.clone(),
                j.header.replicate,
                values(&j.header.params),
            )
        })
        .collect();
    assert_eq!(listed, planned);
    let mut text = Vec::new();
    write_text(&listing, &study.file.swept_keys(), &mut text).unwrap();
    assert_eq!(String::from_utf8(text).unwrap(), plan.to_text_table(&study));
    let mut csv = Vec::new();
    write_csv(&listing, &mut csv).unwrap();
    assert_eq!(String::from_utf8(csv).unwrap(), plan.to_csv());
}
