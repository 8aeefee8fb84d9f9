//! Exploration: every method on one Boston task over a few seeds (the shipped studies are the
//! real comparison). `cargo run --release --example partition_boston -- cmedv 20000 1.0 0.01 3`

use std::path::Path;

use fieldmc::families::partition::baselines::admin_pieces;
use fieldmc::families::partition::chain::{ChainSettings, Schedule};
use fieldmc::families::partition::method::{PartitionKind, run_method};
use fieldmc::families::partition::*;
use fieldmc::streams::{Purpose, stream};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let target = args.get(1).map_or("cmedv", String::as_str);
    let iterations: usize = args.get(2).map_or(20_000, |a| a.parse().unwrap());
    let t0: f64 = args.get(3).map_or(1.0, |a| a.parse().unwrap());
    let t1: f64 = args.get(4).map_or(0.01, |a| a.parse().unwrap());
    let seeds: u64 = args.get(5).map_or(3, |a| a.parse().unwrap());
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let features = [
        "crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio", "b",
        "lstat", "cmedv",
    ];
    let columns = AreaColumns {
        id: "tract_id".into(),
        features: features
            .iter()
            .filter(|f| **f != target && !(target == "cmedv" && **f == "cmedv"))
            .map(|f| f.to_string())
            .collect(),
        target: target.into(),
        coordinates: Some(["lon".into(), "lat".into()]),
        admin: Some("town".into()),
    };
    let areas = read_areas(&data.join("boston_tracts.csv"), &columns).unwrap();
    let graph = read_adjacency(&data.join("boston_adjacency.csv"), &areas).unwrap();
    let admin = admin_pieces(&graph, areas.admin.as_ref().unwrap());
    let problem = Problem::from_areas(&areas, graph, 106, TaskSettings::default());
    let settings = ChainSettings {
        iterations,
        temperature: Schedule { start: t0, end: t1 },
        trace_every: iterations / 10,
        ..ChainSettings::default()
    };
    let methods = PartitionKind::ALL.iter().copied();
    for method in methods {
        let mut rows = Vec::new();
        for seed in 0..seeds {
            let key = format!("explore;{};seed={seed}", method.name());
            let mut p = stream(seed, Purpose::Chain, &key);
            let mut a = stream(seed, Purpose::Acceptance, &key);
            let out =
                run_method(&problem, &areas, &admin, method, &settings, &mut p, &mut a).unwrap();
            rows.push(out);
        }
        let cv: Vec<f64> = rows.iter().map(|o| o.best.cv_mae).collect();
        let cv_last: Vec<f64> = rows.iter().map(|o| o.last.cv_mae).collect();
        let tr: Vec<f64> = rows.iter().map(|o| o.best.evaluation.mae).collect();
        let f: Vec<f64> = rows.iter().map(|o| o.best.evaluation.f).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let acc = rows
            .iter()
            .filter_map(|o| o.counts)
            .map(|c| c.acceptance_rate())
            .sum::<f64>()
            / seeds as f64;
        println!(
            "{:<13} F {:9.2}  train MAE {:7.3}  cv MAE best {:7.3} last {:7.3}  acc {:.3}  {:.2}s  disconnected {}",
            method.name(),
            mean(&f),
            mean(&tr),
            mean(&cv),
            mean(&cv_last),
            acc,
            rows.iter().map(|o| o.seconds).sum::<f64>() / seeds as f64,
            rows[0].disconnected_regions
        );
    }
}
