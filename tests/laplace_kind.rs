//! `sampler.kind = "laplace"` as a job, through the real binary: the same tables as a sampler's
//! job, with the mode as `post_mean` (equal to `exact_mean` on gaussian data), the Newton
//! iterations and the low-rank rank (when used) in the job's row, the Laplace log evidence in
//! `log_evidence`, a warning that says it is an approximation, and no NaN in any table.

mod support;

use polars::prelude::*;

const STUDY: &str = r#"
[study]
name = "laplace_kind"
seed = 3

[model]
grid = 12
length_scale = 0.2

[data]
subsample = 2

[sampler]
kind = "laplace"

[sweep]
"model.likelihood" = ["gaussian", "probit", "poisson"]
"#;

fn floats(frame: &DataFrame, name: &str) -> Vec<Option<f64>> {
    frame.column(name).unwrap().f64().unwrap().iter().collect()
}

fn texts(frame: &DataFrame, name: &str) -> Vec<String> {
    let column = frame.column(name).unwrap().str().unwrap();
    column.iter().map(|s| s.unwrap().to_string()).collect()
}

#[test]
fn a_laplace_job_writes_the_mode_its_newton_iterations_and_its_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(dir.path(), "laplace_kind.toml", STUDY);
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 2);
    assert_eq!(support::non_finite_values(&out), Vec::<String>::new());
    let jobs = support::table(&out, "jobs");
    assert_eq!(jobs.height(), 3);
    let likelihoods = texts(&jobs, "model_likelihood");
    let newton = jobs.column("newton_iterations").unwrap().i64().unwrap();
    let evidence = floats(&jobs, "log_evidence");
    let warnings = texts(&jobs, "warnings");
    for row in 0..3 {
        let what = &likelihoods[row];
        assert!(
            newton.get(row).is_some_and(|n| (1..=20).contains(&n)),
            "{what}: Newton iterations {:?}",
            newton.get(row)
        );
        assert!(
            evidence[row].is_some_and(f64::is_finite),
            "{what}: no evidence"
        );
        assert!(
            warnings[row].contains("Laplace approximation"),
            "{what}: {}",
            warnings[row]
        );
        assert!(texts(&jobs, "status")[row] == "ok", "{what} failed");
    }
    // 72 observed cells: the exact sd method, so no rank.
    let rank = jobs.column("rank").unwrap().i64().unwrap();
    assert!(
        rank.iter().all(|r| r.is_none()),
        "the exact method has no rank"
    );

    let fields = support::table(&out, "fields");
    let ids = texts(&fields, "job_id");
    let gaussian_id =
        &texts(&jobs, "job_id")[likelihoods.iter().position(|l| l == "gaussian").unwrap()];
    let (mode, exact) = (floats(&fields, "post_mean"), floats(&fields, "exact_mean"));
    let (sd, exact_sd) = (floats(&fields, "post_sd"), floats(&fields, "exact_sd"));
    let mut compared = 0;
    for k in (0..ids.len()).filter(|&k| &ids[k] == gaussian_id) {
        let (m, e) = (mode[k].unwrap(), exact[k].unwrap());
        assert!(
            (m - e).abs() <= 1e-8 * (1.0 + e.abs()),
            "cell {k}: {m} vs {e}"
        );
        let (s, es) = (sd[k].unwrap(), exact_sd[k].unwrap());
        assert!((s - es).abs() <= 1e-8 * es, "cell {k}: sd {s} vs {es}");
        compared += 1;
    }
    assert_eq!(compared, 144);
}

/// `sampler.rank` sizes the low-rank Laplace Gaussian of gpcn and laplace_hmc (it was once read
/// and then ignored): the job's `rank` is the one given, and without it the one the spectrum
/// chose.
#[test]
fn a_given_rank_is_the_rank_the_low_rank_kinds_keep() {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(
        dir.path(),
        "rank.toml",
        "[model]\ngrid = 8\nlikelihood = \"poisson\"\n[data]\nsubsample = 2\n\
         [sampler]\niterations = 200\nburn_in = 100\nchains = 2\n\
         [sweep]\n\"sampler.kind\" = [\"gpcn\", \"laplace_hmc\"]\n\"sampler.rank\" = [7, 19]\n",
    );
    let out = dir.path().join("out");
    support::run_ok(&study, &out, 2);
    let jobs = support::table(&out, "jobs");
    let given = support::ints(&jobs, "sampler_rank");
    let kept = support::ints(&jobs, "rank");
    assert_eq!(jobs.height(), 4);
    assert_eq!(given, kept, "sampler.rank against the rank kept");
}
