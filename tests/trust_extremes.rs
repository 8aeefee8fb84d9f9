//! Numerical extremes through the real binary, each a small study: a near-singular prior
//! (l = 10), a near-white one (l = 0.005), pCN with beta = 1, D = 1 and D = 2, a single observed
//! cell, Poisson counts up to 10^5 with an offset, probit with every label equal, gaussian noise
//! of 1e-6, and harsher settings still. Each case says which outcome it expects — every job `ok`
//! with finite numbers where numbers are due, or every job `failed` with a named error in its row
//! — and never a panic, nor a NaN or infinity in any table.

mod support;

use std::path::PathBuf;

use fieldmc::families::latent_field::schema::fields::{
    EXACT_MEAN, EXPECTED_COUNT, OBSERVATION, OBSERVED, P_POSITIVE, POST_MEAN, POST_SD, X, Y,
};
use fieldmc::families::latent_field::schema::jobs::{
    COUNT_MAE, ERROR, EXACT_RMSE, JITTER, OBSERVED_CELLS, STATUS, WALL_SECONDS,
};
use fieldmc::families::latent_field::schema::traces::LOGLIK;
use fieldmc::table::Col;
use fieldmc::table::shared::{ACCEPTANCE_RATE, JOB_ID};
use polars::prelude::DataFrame;
use support::{
    assert_no_panic, floats, non_finite_values, read_table, rows_of_job, run_output, strings,
    table, table_names, text, write_file,
};

/// What every job of a case must end as.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    Ok,
    /// Failed, with an error that contains this text.
    Failed(&'static str),
}

/// The run of one extreme study.
struct Extreme {
    name: String,
    out: PathBuf,
    jobs: DataFrame,
    _dir: tempfile::TempDir,
}

impl Extreme {
    /// The `status` of each job.
    fn statuses(&self) -> Vec<String> {
        strings(&self.jobs, STATUS.name())
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect()
    }

    /// Asserts that every job ended as `expected`.
    fn expect(&self, expected: Outcome) -> &Self {
        let errors = strings(&self.jobs, ERROR.name());
        for (status, error) in self.statuses().iter().zip(&errors) {
            let error = error.as_deref().unwrap_or_default();
            match expected {
                Outcome::Ok => assert_eq!(status, "ok", "{}: {error}", self.name),
                Outcome::Failed(reason) => assert!(
                    status == "failed" && error.contains(reason),
                    "{}: expected a failure saying {reason:?}, got {status} {error:?}",
                    self.name
                ),
            }
        }
        self
    }

    /// The values of a float column of the jobs table, which must all be present.
    fn job_floats(&self, column: Col<f64>) -> Vec<f64> {
        floats(&self.jobs, column.name())
            .into_iter()
            .map(|v| v.unwrap_or_else(|| panic!("{}: {} is null", self.name, column.name())))
            .collect()
    }
}

/// Runs `study` (with `files` beside it) at 2 threads and checks what every extreme must
/// satisfy: no panic, exit code 0 or 1 matching the failed rows, every job either `ok` with its
/// core numbers present or `failed` with an error, and no non-finite float in any table.
fn run_extreme(name: &str, study: &str, files: &[(&str, String)]) -> Extreme {
    let dir = tempfile::tempdir().unwrap();
    for (file, content) in files {
        write_file(dir.path(), file, content);
    }
    let path = write_file(dir.path(), &format!("{name}.toml"), study);
    let out = dir.path().join("out");
    let output = run_output(&path, &out, 2);
    let stderr = text(&output.stderr);
    assert_no_panic(&output, name);
    let jobs = table(&out, "jobs");
    let extreme = Extreme {
        name: name.to_string(),
        out,
        jobs,
        _dir: dir,
    };
    let failed = extreme.statuses().iter().filter(|s| *s == "failed").count();
    let expected_code = if failed > 0 { 1 } else { 0 };
    assert_eq!(
        output.status.code(),
        Some(expected_code),
        "{name}: {failed} failed jobs:\n{stderr}"
    );
    check_rows(&extreme);
    let non_finite = non_finite_values(&extreme.out);
    assert!(non_finite.is_empty(), "{name}: {non_finite:?}");
    for (status, error) in extreme
        .statuses()
        .iter()
        .zip(strings(&extreme.jobs, ERROR.name()))
    {
        eprintln!("{name}: {status} {}", error.unwrap_or_default());
    }
    extreme
}

/// Columns an `ok` job must fill: a null there would be a NaN hidden by the writer.
const JOB_NUMBERS: [Col<f64>; 3] = [ACCEPTANCE_RATE, JITTER, WALL_SECONDS];
const CELL_NUMBERS: [Col<f64>; 4] = [X, Y, POST_MEAN, POST_SD];

fn check_rows(extreme: &Extreme) {
    let name = &extreme.name;
    let ids = strings(&extreme.jobs, JOB_ID.name());
    let errors = strings(&extreme.jobs, ERROR.name());
    let fields = read_table(&extreme.out, "fields");
    let traces = read_table(&extreme.out, "traces");
    for (row, status) in extreme.statuses().iter().enumerate() {
        let id = ids[row].clone().unwrap();
        match status.as_str() {
            "failed" => {
                let error = errors[row].clone().unwrap_or_default();
                assert!(!error.trim().is_empty(), "{name}: job {id} failed silently");
                assert!(!error.contains("panic"), "{name}: job {id}: {error}");
            }
            "ok" => {
                for column in JOB_NUMBERS.map(|c| c.name()) {
                    let value = floats(&extreme.jobs, column)[row];
                    assert!(value.is_some(), "{name}: job {id}: {column} is null");
                }
                let rate = floats(&extreme.jobs, ACCEPTANCE_RATE.name())[row].unwrap();
                assert!((0.0..=1.0).contains(&rate), "{name}: {id}: rate {rate}");
                let cells = rows_of_job(fields.as_ref().expect("fields.parquet"), &id);
                assert!(cells.height() > 0, "{name}: job {id} has no cells");
                for column in CELL_NUMBERS.map(|c| c.name()) {
                    let nulls = cells.column(column).unwrap().null_count();
                    assert_eq!(nulls, 0, "{name}: job {id}: {nulls} null {column}");
                }
                let sd = floats(&cells, POST_SD.name());
                assert!(sd.iter().flatten().all(|s| *s >= 0.0), "{name}: {id}");
                let draws = rows_of_job(traces.as_ref().expect("traces.parquet"), &id);
                assert!(draws.height() > 0, "{name}: job {id} has no trace");
                let nulls = draws.column(LOGLIK.name()).unwrap().null_count();
                assert_eq!(nulls, 0, "{name}: job {id}: {nulls} null loglik in traces");
            }
            other => panic!("{name}: job {id} has status {other:?}"),
        }
    }
    for table_name in table_names() {
        if let Some(frame) = read_table(&extreme.out, table_name) {
            for id in strings(&frame, JOB_ID.name()).into_iter().flatten() {
                assert!(ids.contains(&Some(id.clone())), "{table_name}: stray {id}");
            }
        }
    }
}

/// A short two-chain sampler section swept over both samplers, and any extra axes.
fn sampler(extra_axes: &str) -> String {
    format!(
        "[sampler]\niterations = 1500\nburn_in = 300\nthin = 5\nchains = 2\n\n\
         [sweep]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n{extra_axes}"
    )
}

const ALL_LIKELIHOODS: &str = "\"model.likelihood\" = [\"gaussian\", \"probit\", \"poisson\"]\n";

#[test]
fn a_near_singular_prior_runs_and_reports_its_jitter() {
    // l = 10 on [0,1]: the one-axis kernel matrix is numerically rank one.
    let study = format!(
        "[model]\ngrid = 12\nlength_scale = 10.0\n[data]\nsubsample = 2\n{}",
        sampler(ALL_LIKELIHOODS)
    );
    let run = run_extreme("l10", &study, &[]);
    run.expect(Outcome::Ok);
    for jitter in run.job_floats(JITTER) {
        assert!(jitter > 0.0, "l = 10 needs jitter, got {jitter}");
    }
    // The gaussian jobs agree with their exact posterior.
    for rmse in floats(&run.jobs, EXACT_RMSE.name()).into_iter().flatten() {
        assert!(rmse < 0.5, "exact_rmse {rmse}");
    }
}

#[test]
fn a_near_white_prior_runs_without_jitter() {
    let study = format!(
        "[model]\ngrid = 8\nlength_scale = 0.005\n[data]\nsubsample = 2\n{}",
        sampler(ALL_LIKELIHOODS)
    );
    let run = run_extreme("l0005", &study, &[]);
    run.expect(Outcome::Ok);
    // Cells 1/7 apart with l = 0.005 are independent: no jitter is needed.
    assert!(run.job_floats(JITTER).iter().all(|j| *j == 0.0));
}

#[test]
fn pcn_with_beta_one_runs_and_accepts_some_proposals() {
    let study = format!(
        "[model]\ngrid = 6\n[sampler]\nkind = \"pcn\"\nbeta = 1.0\niterations = 1500\nchains = 2\n\
         [sweep]\n{ALL_LIKELIHOODS}"
    );
    let run = run_extreme("beta1", &study, &[]);
    run.expect(Outcome::Ok);
    assert!(run.job_floats(ACCEPTANCE_RATE).iter().all(|r| *r > 0.0));
}

#[test]
fn grids_of_one_and_two_points_per_axis_run_and_give_a_field_row_per_cell() {
    for grid in [1, 2] {
        let study = format!(
            "[model]\ngrid = {grid}\n[data]\nsubsample = 1\n{}",
            sampler(ALL_LIKELIHOODS)
        );
        let run = run_extreme(&format!("d{grid}"), &study, &[]);
        run.expect(Outcome::Ok);
        let fields = table(&run.out, "fields");
        assert_eq!(fields.height(), 6 * grid * grid);
    }
}

#[test]
fn a_single_observed_cell_is_enough_for_every_likelihood() {
    let study = format!(
        "[model]\ngrid = 4\n[data]\nsubsample = 16\n{}",
        sampler(ALL_LIKELIHOODS)
    );
    let run = run_extreme("one_cell", &study, &[]);
    run.expect(Outcome::Ok);
    let observed: Vec<i64> = run
        .jobs
        .column(OBSERVED_CELLS.name())
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(observed, vec![1; 6]);
}

/// A 4 x 4 grid CSV with the given value column.
fn grid_csv(column: &str, values: [i64; 16]) -> String {
    let mut csv = format!("i,j,{column}\n");
    for (cell, value) in values.iter().enumerate() {
        csv.push_str(&format!("{},{},{value}\n", cell % 4, cell / 4));
    }
    csv
}

#[test]
fn poisson_counts_up_to_ten_to_the_five_with_an_offset_give_finite_expected_counts() {
    let counts = [
        0, 100_000, 99_999, 5, 1_000, 100_000, 0, 42, 7, 100_000, 3, 0, 65_536, 1, 100_000, 12_345,
    ];
    let study = format!(
        "[model]\ngrid = 4\nlikelihood = \"poisson\"\noffset = 5.0\n\
         [data]\nsource = \"csv\"\npath = \"huge.csv\"\nholdout = 0.25\n{}",
        sampler("")
    );
    let run = run_extreme(
        "huge_counts",
        &study,
        &[("huge.csv", grid_csv("count", counts))],
    );
    run.expect(Outcome::Ok);
    let fields = table(&run.out, "fields");
    let expected = floats(&fields, EXPECTED_COUNT.name());
    assert!(expected.iter().all(|c| c.is_some_and(|c| c >= 0.0)));
    assert!(run.job_floats(COUNT_MAE).iter().all(|m| m.is_finite()));
}

#[test]
fn probit_with_every_label_one_gives_p_positive_of_at_least_a_half() {
    let study = format!(
        "[model]\ngrid = 4\nlikelihood = \"probit\"\n\
         [data]\nsource = \"csv\"\npath = \"ones.csv\"\n{}",
        sampler("")
    );
    let run = run_extreme(
        "all_ones",
        &study,
        &[("ones.csv", grid_csv("label", [1; 16]))],
    );
    run.expect(Outcome::Ok);
    let fields = table(&run.out, "fields");
    for p in floats(&fields, P_POSITIVE.name()) {
        let p = p.expect("p_positive for every cell");
        assert!(
            (0.5..=1.0).contains(&p),
            "all labels are 1, so p_positive >= 0.5: {p}"
        );
    }
}

#[test]
fn gaussian_noise_of_one_in_a_million_pins_the_exact_mean_to_the_data() {
    let study = format!(
        "[model]\ngrid = 6\n[data]\nsubsample = 2\nnoise_sd = 1e-6\n{}",
        sampler("")
    );
    let run = run_extreme("tiny_noise", &study, &[]);
    run.expect(Outcome::Ok);
    // The exact posterior pins the observed cells to within about 1e-6 of the data.
    let fields = table(&run.out, "fields");
    let observed: Vec<bool> = fields
        .column(OBSERVED.name())
        .unwrap()
        .bool()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect();
    let exact = floats(&fields, EXACT_MEAN.name());
    let data = floats(&fields, OBSERVATION.name());
    for cell in (0..observed.len()).filter(|c| observed[*c]) {
        let (m, v) = (exact[cell].unwrap(), data[cell].unwrap());
        assert!(
            (m - v).abs() < 1e-4,
            "cell {cell}: exact mean {m}, datum {v}"
        );
    }
}

/// A case of a batch: its name, its study and the outcome every job of it must have.
type Case = (&'static str, String, Outcome);

/// The error of a job whose log-likelihood is -inf at its starting state.
/// grw and pcn run 400 iterations here, the first half burn-in (their budget leaves at most half):
/// the first kept state, iteration 201, is the first the job checks.
const NEVER_FINITE: Outcome = Outcome::Failed("is -inf at iteration 201");

/// Runs each case and reports every case that broke, not only the first.
fn run_all(cases: Vec<Case>, files: &[(&str, String)]) {
    let mut broken = Vec::new();
    for (name, study, expected) in cases {
        let outcome = std::panic::catch_unwind(|| {
            run_extreme(name, &study, files).expect(expected);
        });
        if let Err(panic) = outcome {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            broken.push(format!("{name}: {message}"));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n\n"));
}

fn harsh_model(model: &str) -> String {
    format!(
        "{model}[sampler]\niterations = 400\nthin = 2\nchains = 2\n\n\
         [sweep]\n\"sampler.kind\" = [\"grw\", \"pcn\"]\n"
    )
}

fn harsh_sampler(settings: &str) -> String {
    format!("[model]\ngrid = 3\n[data]\nsubsample = 1\n[sampler]\n{settings}")
}

/// Settings far beyond any sensible study give an answer, or an error row that says why.
#[test]
fn harsher_extremes_give_an_answer_or_an_error_row() {
    let models = [
        (
            "l1000",
            "[model]\ngrid = 16\nlength_scale = 1000.0\n",
            Outcome::Ok,
        ),
        (
            "l10_d48",
            "[model]\ngrid = 48\nlength_scale = 10.0\n",
            Outcome::Ok,
        ),
        (
            "variance_huge",
            "[model]\ngrid = 4\nvariance = 1e300\n",
            Outcome::Ok,
        ),
        (
            "variance_tiny",
            "[model]\ngrid = 4\nvariance = 1e-300\n",
            Outcome::Ok,
        ),
        (
            "noise_1e300",
            "[model]\ngrid = 4\n[data]\nnoise_sd = 1e300\n",
            // The exact posterior's G C G^T + s^2 I overflows.
            Outcome::Failed("not positive definite"),
        ),
        (
            "offset_50",
            "[model]\ngrid = 4\nlikelihood = \"poisson\"\noffset = 50.0\n",
            // Simulated counts at rates near exp(50) cannot be drawn.
            Outcome::Failed("too large to draw counts from"),
        ),
        (
            "offset_-700",
            "[model]\ngrid = 4\nlikelihood = \"poisson\"\noffset = -700.0\n",
            Outcome::Ok,
        ),
    ];
    let samplers = [
        (
            "grw_beta_1e10",
            "kind = \"grw\"\nbeta = 1e10\niterations = 300\n",
        ),
        ("one_iteration", "iterations = 1\nthin = 1\n"),
        ("thin_beyond_the_chain", "iterations = 10\nthin = 100\n"),
        ("sixty_four_chains", "iterations = 50\nchains = 64\n"),
    ];
    let mut cases: Vec<Case> = models
        .into_iter()
        .map(|(name, model, outcome)| (name, harsh_model(model), outcome))
        .collect();
    cases.extend(
        samplers
            .into_iter()
            .map(|(name, settings)| (name, harsh_sampler(settings), Outcome::Ok)),
    );
    run_all(cases, &[]);
}

/// A study on a CSV file with the given likelihood and offset, and the field's mean fixed at 0
/// (`mean = "auto"`, the default for real counts, would absorb the offset into the intercept).
fn csv_study(likelihood: &str, offset: f64, path: &str) -> String {
    harsh_model(&format!(
        "[model]\ngrid = 4\nlikelihood = \"{likelihood}\"\noffset = {offset:?}\nmean = 0.0\n\
         [data]\nsource = \"csv\"\npath = \"{path}\"\n"
    ))
}

/// Poisson counts of 10^5 under offsets of +-1000 with the mean fixed at 0: the rate overflows
/// to +inf (the log-likelihood is -inf and the job fails) or vanishes (the job runs).
#[test]
fn a_poisson_offset_that_overflows_fails_the_job_and_one_that_vanishes_runs() {
    let files = [("counts.csv", grid_csv("count", [100_000; 16]))];
    run_all(
        vec![
            (
                "offset_1000",
                csv_study("poisson", 1000.0, "counts.csv"),
                NEVER_FINITE,
            ),
            (
                "offset_-1000",
                csv_study("poisson", -1000.0, "counts.csv"),
                Outcome::Ok,
            ),
        ],
        &files,
    );
}

/// When the log-likelihood is -inf at the starting state — a noise sd whose square
/// underflows, gaussian data of 1e200 whose square overflows — no proposal can be judged and
/// the job fails with an error saying so.
#[test]
fn a_log_likelihood_that_is_never_finite_fails_the_job() {
    let values: Vec<String> = (0..16)
        .map(|c| {
            format!(
                "{},{},{}",
                c % 4,
                c / 4,
                if c % 2 == 0 { "1e200" } else { "-1e200" }
            )
        })
        .collect();
    let files = [("values.csv", format!("i,j,value\n{}\n", values.join("\n")))];
    let noise = |likelihood: &str| {
        harsh_model(&format!(
            "[model]\ngrid = 4\nlikelihood = \"{likelihood}\"\n[data]\nnoise_sd = 1e-300\n"
        ))
    };
    run_all(
        vec![
            ("gaussian_noise_1e-300", noise("gaussian"), NEVER_FINITE),
            ("probit_noise_1e-300", noise("probit"), NEVER_FINITE),
            (
                "values_1e200",
                csv_study("gaussian", 0.0, "values.csv"),
                NEVER_FINITE,
            ),
            // nuts-rs refuses such a start itself: a typed error naming the chain and the
            // iteration, not a panic.
            (
                "values_1e200_nuts",
                "[model]\ngrid = 4\nlikelihood = \"gaussian\"\nmean = 0.0\n\
                 [data]\nsource = \"csv\"\npath = \"values.csv\"\n\
                 [sampler]\nkind = \"nuts\"\niterations = 40\nchains = 2\n"
                    .to_string(),
                Outcome::Failed("chain 0 stopped at iteration 1: NUTS cannot start"),
            ),
        ],
        &files,
    );
}
