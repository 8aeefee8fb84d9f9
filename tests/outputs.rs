//! What a run writes about convergence, through the real binary: per-cell R-hat, ESS and MCSE
//! in fields.parquet, their extremes in jobs.parquet, the kept field draws in draws.parquet
//! (from which the per-cell diagnostics can be recomputed exactly), and warnings for a run that
//! does not work.

mod support;

use std::path::Path;

use polars::prelude::*;

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/studies/outputs.toml")
}

fn floats(frame: &DataFrame, name: &str) -> Vec<Option<f64>> {
    frame.column(name).unwrap().f64().unwrap().iter().collect()
}

fn ints(frame: &DataFrame, name: &str) -> Vec<i64> {
    frame
        .column(name)
        .unwrap()
        .i64()
        .unwrap()
        .iter()
        .map(Option::unwrap)
        .collect()
}

fn texts(frame: &DataFrame, name: &str) -> Vec<String> {
    let column = frame.column(name).unwrap().str().unwrap();
    column.iter().map(|s| s.unwrap().to_string()).collect()
}

#[test]
fn diagnostics_draws_and_warnings_are_written_and_consistent() {
    let out = tempfile::tempdir().unwrap();
    support::run_ok(&fixture(), out.path(), 2);
    let jobs = support::read_table(out.path(), "jobs").unwrap();
    let fields = support::read_table(out.path(), "fields").unwrap();
    let draws = support::read_table(out.path(), "draws").unwrap();
    assert_eq!(jobs.height(), 2);
    let (field_job, field_cell) = (texts(&fields, "job_id"), ints(&fields, "cell"));
    let (field_rhat, field_ess) = (floats(&fields, "rhat"), floats(&fields, "ess_bulk"));
    let draw_job = texts(&draws, "job_id");
    let (draw_chain, draw_cell, draw_index) = (
        ints(&draws, "chain"),
        ints(&draws, "cell"),
        ints(&draws, "draw"),
    );
    let draw_value = floats(&draws, "value");
    let kinds = texts(&jobs, "sampler_kind");
    let warnings = texts(&jobs, "warnings");
    for (row, id) in texts(&jobs, "job_id").iter().enumerate() {
        let mut rhat = vec![0.0; 36];
        let mut ess = vec![0.0; 36];
        for k in (0..field_job.len()).filter(|&k| &field_job[k] == id) {
            rhat[field_cell[k] as usize] = field_rhat[k].expect("every cell has an R-hat");
            ess[field_cell[k] as usize] = field_ess[k].expect("every cell has a bulk ESS");
        }
        let max_rhat = rhat.iter().copied().fold(f64::MIN, f64::max);
        let min_ess = ess.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(floats(&jobs, "cell_rhat_max")[row], Some(max_rhat));
        assert_eq!(floats(&jobs, "cell_ess_bulk_min")[row], Some(min_ess));

        // Every stored draw was kept (1,000 per chain), so the diagnostics recompute exactly.
        let rows: Vec<usize> = (0..draw_job.len())
            .filter(|&k| &draw_job[k] == id)
            .collect();
        assert_eq!(rows.len(), 3 * 1_000 * 36);
        for cell in [0, 17, 35] {
            let mut series = vec![vec![0.0; 1_000]; 3];
            for &k in rows.iter().filter(|&&k| draw_cell[k] == cell) {
                series[draw_chain[k] as usize][draw_index[k] as usize] = draw_value[k].unwrap();
            }
            let views: Vec<&[f64]> = series.iter().map(Vec::as_slice).collect();
            let summary = fieldmc::diagnostics::summarize(&views);
            assert_eq!(summary.rhat, Some(rhat[cell as usize]), "{id} cell {cell}");
            assert_eq!(
                summary.ess_bulk,
                Some(ess[cell as usize]),
                "{id} cell {cell}"
            );
        }

        match kinds[row].as_str() {
            // Adapted MALA mixes well here: no warning.
            "mala" => assert_eq!(warnings[row], "", "{id}"),
            // pCN with beta = 1 proposes independent prior draws: nearly all are rejected.
            "pcn" => assert!(
                warnings[row].contains("acceptance"),
                "{id}: {}",
                warnings[row]
            ),
            other => panic!("unexpected kind {other}"),
        }
    }
}

/// The jobs' ESS and R-hat of the log-likelihood come from every kept state: thinning the
/// traces tenfold leaves them where they were. laplace_hmc on a gaussian posterior makes nearly
/// independent draws, so 4 chains of 1,000 kept states give a bulk ESS near 4,000 whatever
/// `sampler.thin` is; computed from the thinned traces (as before), thin = 10 could not give
/// more than the 400 traced states. The two jobs run on their own streams, so their estimates
/// agree within Monte Carlo error (a few per cent here), not exactly: within a factor 1.5.
#[test]
fn the_jobs_ess_does_not_depend_on_the_traces_thinning() {
    let dir = tempfile::tempdir().unwrap();
    let study = support::write_file(
        dir.path(),
        "thin.toml",
        "[study]\nname = \"thin\"\nseed = 5\n\
         [model]\ngrid = 8\nlikelihood = \"gaussian\"\n\
         [sampler]\nkind = \"laplace_hmc\"\n\
         [sweep]\n\"sampler.thin\" = [1, 10]\n",
    );
    let out = dir.path().join("thin");
    support::run_ok(&study, &out, 2);
    let jobs = support::read_table(&out, "jobs").unwrap();
    let thin = ints(&jobs, "sampler_thin");
    let ess = floats(&jobs, "ess_bulk");
    let rhat = floats(&jobs, "rhat");
    let by_thin = |t: i64| ess[thin.iter().position(|&x| x == t).unwrap()].unwrap();
    let (every, tenth) = (by_thin(1), by_thin(10));
    assert!(every > 2_000.0, "thin 1: ess_bulk {every}");
    assert!(
        (tenth / every).ln().abs() < 1.5f64.ln(),
        "thin 10 gives ess_bulk {tenth}, thin 1 gives {every}"
    );
    assert!(rhat.iter().all(|r| r.is_some_and(|r| r < 1.01)), "{rhat:?}");
    let traces = support::read_table(&out, "traces").unwrap();
    assert_eq!(
        traces.height(),
        4 * 1_000 + 4 * 100,
        "every kept state at thin 1, a tenth at 10"
    );
}
