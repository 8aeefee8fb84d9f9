//! The region-partition family: the chains against the exact Boltzmann distribution on a small
//! lattice (every connected partition enumerated), every visited partition valid (property
//! test), the bookkeeping of a flip against a recomputation, the Boston data as read, and the
//! out-of-sample score against a search that overfits noise.

use std::path::Path;

use fieldmc::diagnostics::calibration::chi_square_survival;
use fieldmc::families::partition::baselines::admin_pieces;
use fieldmc::families::partition::enumerate::{boltzmann_probabilities, connected_partitions};
use fieldmc::families::partition::method::PartitionKind;
use fieldmc::families::partition::*;
use fieldmc::streams::{Purpose, stream};
use proptest::prelude::*;
use rand::RngExt;

/// Features and targets of a small lattice: fixed numbers with structure (a trend in x plus a
/// bump), so that F varies over partitions.
fn lattice_problem(rows: usize, cols: usize, regions: usize, penalty: SizePenalty) -> Problem {
    let n = rows * cols;
    let features: Vec<f64> = (0..n).map(|a| ((a * 7 % 11) as f64).sin()).collect();
    let target: Vec<f64> = (0..n)
        .map(|a| 2.0 * features[a] + ((a % cols) as f64 - 1.5).powi(2) * 0.8)
        .collect();
    let settings = TaskSettings {
        penalty,
        ..TaskSettings::default()
    };
    Problem::new(
        Adjacency::lattice(rows, cols),
        features,
        1,
        target,
        regions,
        settings,
    )
}

/// A connected start: the areas in snake order (left to right, then right to left) cut into
/// `regions` runs of nearly equal length.
fn snake_start(rows: usize, cols: usize, regions: usize) -> Vec<u32> {
    let n = rows * cols;
    let mut labels = vec![0u32; n];
    for step in 0..n {
        let (r, c) = (step / cols, step % cols);
        let c = if r % 2 == 0 { c } else { cols - 1 - c };
        labels[r * cols + c] = (step * regions / n) as u32;
    }
    labels
}

const ENUM_ROWS: usize = 3;
const ENUM_COLS: usize = 4;
const ENUM_REGIONS: usize = 3;
const ENUM_TEMPERATURE: f64 = 2.0;
/// Steps between recorded states (well above the integrated autocorrelation time of the state
/// indicator, so the recorded states are close to independent).
const ENUM_THIN: usize = 40;
const ENUM_SAMPLES: usize = 150_000;
/// Two chi-square tests per run: each at 5e-5 keeps the family-wise false alarm at 1e-4.
/// Measured at this seed: flip p = 0.24, softmax-flip p = 0.67 (5,221 bins over 8,100 states).
/// With the slides' simplification (Hastings ratio 1, the change of |B| ignored) the same
/// chains give chi2 = 6,776 and 327,899 on 5,220 degrees of freedom: p below 1e-15.
const ENUM_ALPHA: f64 = 5e-5;

/// Chi-square statistic and p-value of the visit counts against the exact probabilities
/// (states with expected count below 5 pooled into one bin).
fn chi_square(counts: &[usize], probabilities: &[f64], samples: usize) -> (f64, f64, usize) {
    let (mut statistic, mut bins) = (0.0, 0usize);
    let (mut pooled_count, mut pooled_expected) = (0.0, 0.0);
    for (&count, &p) in counts.iter().zip(probabilities) {
        let expected = p * samples as f64;
        if expected < 5.0 {
            pooled_count += count as f64;
            pooled_expected += expected;
            continue;
        }
        statistic += (count as f64 - expected).powi(2) / expected;
        bins += 1;
    }
    if pooled_expected > 0.0 {
        statistic += (pooled_count - pooled_expected).powi(2) / pooled_expected;
        bins += 1;
    }
    let dof = (bins - 1) as f64;
    (statistic, chi_square_survival(statistic, dof), bins)
}

fn visit_frequencies_match(kind: FlipKind) {
    let penalty = SizePenalty {
        variance_weight: 0.3,
        ..SizePenalty::NONE
    };
    let problem = lattice_problem(ENUM_ROWS, ENUM_COLS, ENUM_REGIONS, penalty);
    let states = connected_partitions(&problem.graph, ENUM_REGIONS);
    let probabilities = boltzmann_probabilities(&problem, &states, ENUM_TEMPERATURE);
    let index: std::collections::HashMap<Vec<u32>, usize> = states
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    let settings = ChainSettings {
        kind,
        iterations: ENUM_THIN * ENUM_SAMPLES,
        temperature: Schedule::fixed(ENUM_TEMPERATURE),
        ..ChainSettings::default()
    };
    let start = snake_start(ENUM_ROWS, ENUM_COLS, ENUM_REGIONS);
    let mut chain = Chain::new(&problem, &start, settings);
    let key = format!("enumeration;kind={kind}");
    let mut proposals = stream(2026, Purpose::Chain, &key);
    let mut acceptance = stream(2026, Purpose::Acceptance, &key);
    for k in 0..20 * ENUM_THIN {
        chain.step(k, &mut proposals, &mut acceptance);
    }
    let mut counts = vec![0usize; states.len()];
    for sample in 0..ENUM_SAMPLES {
        for k in 0..ENUM_THIN {
            chain.step(sample * ENUM_THIN + k, &mut proposals, &mut acceptance);
        }
        counts[index[chain.labels()]] += 1;
    }
    let (statistic, p, bins) = chi_square(&counts, &probabilities, ENUM_SAMPLES);
    let visited = counts.iter().filter(|&&c| c > 0).count();
    eprintln!(
        "{kind}: {} connected partitions, {visited} visited, {bins} bins, chi2 = {statistic:.1}, \
         p = {p:.4}, acceptance {:.3}, invalid {:.3}",
        states.len(),
        chain.counts.acceptance_rate(),
        chain.counts.invalid as f64 / chain.counts.proposed as f64
    );
    assert!(
        p > ENUM_ALPHA,
        "{kind}: visit frequencies differ from exp(-F/T): chi2 = {statistic}, p = {p}"
    );
}

#[test]
fn flip_visits_partitions_with_the_boltzmann_probabilities() {
    visit_frequencies_match(FlipKind::Flip);
}

#[test]
fn softmax_flip_visits_partitions_with_the_boltzmann_probabilities() {
    visit_frequencies_match(FlipKind::SoftmaxFlip);
}

/// The enumeration itself, on graphs small enough to count by hand.
#[test]
fn enumeration_counts_the_connected_partitions_of_a_lattice() {
    // 2 x 2 lattice into 2 regions: the six labelled splits into two connected pieces
    // (4 singletons against the other three, 2 dominoes of each orientation), times 2 labels.
    let graph = Adjacency::lattice(2, 2);
    assert_eq!(connected_partitions(&graph, 2).len(), 2 * (4 + 2));
    // 1 x 4 path into 2 regions: 3 cut points, 2 labellings each.
    assert_eq!(connected_partitions(&Adjacency::lattice(1, 4), 2).len(), 6);
}

/// The boundary pairs kept by the partition equal those recomputed from its labels.
fn assert_bookkeeping_fresh(problem: &Problem, chain: &Chain) {
    let labels = chain.labels().to_vec();
    let fresh = Partition::new(&problem.graph, &labels, problem.regions);
    for r in 0..problem.regions {
        let mut kept = chain.partition().pairs_of(r).to_vec();
        let mut recomputed = fresh.pairs_of(r).to_vec();
        kept.sort_unstable();
        recomputed.sort_unstable();
        assert_eq!(kept, recomputed, "boundary pairs of region {r}");
        let mut members = chain.partition().members(r).to_vec();
        members.sort_unstable();
        let expected: Vec<u32> = (0..labels.len() as u32)
            .filter(|&a| labels[a as usize] == r as u32)
            .collect();
        assert_eq!(members, expected, "members of region {r}");
    }
    let rescored = score_partition(problem, &labels);
    let tolerance = 1e-9 * (1.0 + rescored.evaluation.f.abs());
    assert!(
        (rescored.evaluation.f - chain.f()).abs() < tolerance,
        "F kept {} vs recomputed {}",
        chain.f(),
        rescored.evaluation.f
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every partition a chain visits (every kind, lattices of 2 x 2 to 6 x 6, 2 to 5 regions,
    /// hot and cold) has each region non-empty and connected, and its bookkeeping is exact.
    #[test]
    fn every_visited_partition_is_connected_with_no_empty_region(
        rows in 2usize..7,
        cols in 2usize..7,
        regions in 2usize..6,
        kind in prop::sample::select(FlipKind::ALL.to_vec()),
        temperature in prop::sample::select(vec![0.05, 1.0, 100.0]),
        seed in 0u64..1_000_000,
    ) {
        prop_assume!(regions <= rows * cols);
        let problem = lattice_problem(rows, cols, regions, SizePenalty::NONE);
        let settings = ChainSettings {
            kind,
            iterations: 300,
            temperature: Schedule::fixed(temperature),
            candidates: 5,
            ..ChainSettings::default()
        };
        let start = snake_start(rows, cols, regions);
        let mut chain = Chain::new(&problem, &start, settings);
        let mut proposals = stream(seed, Purpose::Chain, "property");
        let mut acceptance = stream(seed, Purpose::Acceptance, "property");
        for k in 0..300 {
            chain.step(k, &mut proposals, &mut acceptance);
            prop_assert!(
                problem.graph.is_connected_partition(chain.labels(), regions),
                "step {k}: labels {:?}", chain.labels()
            );
        }
        assert_bookkeeping_fresh(&problem, &chain);
    }
}

fn boston_columns(target: &str) -> AreaColumns {
    let features = [
        "crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax", "ptratio", "b",
        "lstat",
    ];
    AreaColumns {
        id: "tract_id".into(),
        features: features
            .iter()
            .filter(|f| **f != target)
            .map(|f| f.to_string())
            .collect(),
        target: target.into(),
        coordinates: Some(["lon".into(), "lat".into()]),
        admin: Some("town".into()),
    }
}

fn data_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data"))
}

#[test]
fn boston_towns_split_into_106_connected_pieces() {
    let areas = read_areas(
        &data_dir().join("boston_tracts.csv"),
        &boston_columns("cmedv"),
    )
    .unwrap();
    assert_eq!(areas.len(), 506);
    assert_eq!(areas.feature_count(), 13);
    let graph = read_adjacency(&data_dir().join("boston_adjacency.csv"), &areas).unwrap();
    assert_eq!(graph.edge_count(), 1076);
    assert_eq!(graph.components_where(|_| true).len(), 1);
    let towns = areas.admin.as_ref().unwrap();
    let distinct: std::collections::BTreeSet<&String> = towns.iter().collect();
    assert_eq!(distinct.len(), 92);
    let disconnected = distinct
        .iter()
        .filter(|town| graph.components_where(|a| &towns[a] == **town).len() > 1)
        .count();
    assert_eq!(disconnected, 11, "towns in more than one piece");
    let pieces = admin_pieces(&graph, towns);
    assert_eq!(
        fieldmc::families::partition::graph::region_count(&pieces),
        106
    );
    assert!(graph.is_connected_partition(&pieces, 106));
}

#[test]
fn fewer_regions_merge_the_smallest_pieces_and_stay_connected() {
    let areas = read_areas(
        &data_dir().join("boston_tracts.csv"),
        &boston_columns("crim"),
    )
    .unwrap();
    let graph = read_adjacency(&data_dir().join("boston_adjacency.csv"), &areas).unwrap();
    let pieces = admin_pieces(&graph, areas.admin.as_ref().unwrap());
    for regions in [106, 60, 2] {
        let merged = fieldmc::families::partition::baselines::merge_down(&graph, &pieces, regions);
        assert_eq!(
            fieldmc::families::partition::graph::region_count(&merged),
            regions
        );
        assert!(
            graph.is_connected_partition(&merged, regions),
            "{regions} regions"
        );
    }
}

#[test]
fn the_size_penalty_counts_areas_outside_the_bounds_and_the_spread_of_sizes() {
    let penalty = SizePenalty {
        min_size: 3,
        max_size: 5,
        bound_weight: 2.0,
        variance_weight: 0.5,
    };
    // 1 area: 2 below the bound, 3 below the mean size 4.
    assert_eq!(penalty.of_region(1, 4.0), 2.0 * 2.0 + 0.5 * 9.0);
    assert_eq!(penalty.of_region(4, 4.0), 0.0);
    // 7 areas: 2 above the bound, 3 above the mean.
    assert_eq!(penalty.of_region(7, 4.0), 2.0 * 2.0 + 0.5 * 9.0);
    assert_eq!(SizePenalty::NONE.of_region(100, 4.0), 0.0);
}

#[test]
fn area_files_with_problems_are_refused_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("areas.csv");
    std::fs::write(&path, "id,x,y\n0,1.0,2\n1,oops,3\n").unwrap();
    let columns = AreaColumns {
        id: "id".into(),
        features: vec!["x".into()],
        target: "y".into(),
        coordinates: None,
        admin: None,
    };
    let error = read_areas(&path, &columns).unwrap_err().to_string();
    assert!(
        error.contains("areas.csv:3") && error.contains("`x`"),
        "{error}"
    );
    std::fs::write(&path, "id,x,y\n0,1.0,2\n1,2.0,3\n").unwrap();
    let missing = AreaColumns {
        target: "z".into(),
        ..columns.clone()
    };
    let error = read_areas(&path, &missing).unwrap_err().to_string();
    assert!(
        error.contains("no column `z`") && error.contains("id, x, y"),
        "{error}"
    );
    let areas = read_areas(&path, &columns).unwrap();
    let edges = dir.path().join("edges.csv");
    std::fs::write(&edges, "a,b\n0,7\n").unwrap();
    let error = read_adjacency(&edges, &areas).unwrap_err().to_string();
    assert!(
        error.contains("edges.csv:2") && error.contains("`7`"),
        "{error}"
    );
}

/// A 12 x 12 lattice whose targets are pure noise (independent of the two features and of the
/// place), cut into 16 blocks of 3 x 3: no partition can predict a held-out area better than the
/// training mean.
fn noise_problem() -> (Problem, Areas, Vec<u32>) {
    let (side, block) = (12, 3);
    let n = side * side;
    let mut rng = stream(11, Purpose::Truth, "noise lattice");
    let features: Vec<f64> = (0..2 * n).map(|_| rng.random::<f64>()).collect();
    let target: Vec<f64> = (0..n)
        .map(|_| (0..4).map(|_| rng.random::<f64>()).sum::<f64>())
        .collect();
    let per_row = side / block;
    let start: Vec<u32> = (0..n)
        .map(|a| ((a / side) / block * per_row + (a % side) / block) as u32)
        .collect();
    let areas = Areas {
        ids: (0..n).map(|a| a.to_string()).collect(),
        feature_names: vec!["u".into(), "v".into()],
        features: features.clone(),
        target: target.clone(),
        coordinates: None,
        admin: None,
    };
    let problem = Problem::new(
        Adjacency::lattice(side, side),
        features,
        2,
        target,
        per_row * per_row,
        TaskSettings::default(),
    );
    (problem, areas, start)
}

/// The in-sample score (regions held out of the regression, not of the search) of a flip chain
/// on noise falls the longer the chain searches, to a fraction of the start's; the out-of-sample
/// score of the same search (each fold's targets hidden from it) does not beat the constant
/// predictor by more than three standard errors, at any budget.
#[test]
fn a_search_on_noise_overfits_in_sample_but_not_out_of_sample() {
    let (problem, areas, start) = noise_problem();
    let n = problem.area_count();
    let targets: Vec<f64> = (0..n).map(|a| problem.target_of(a)).collect();
    let mean = targets.iter().sum::<f64>() / n as f64;
    let deviations: Vec<f64> = targets.iter().map(|y| (y - mean).abs()).collect();
    let spread = deviations.iter().sum::<f64>() / n as f64;
    let sd = (deviations.iter().map(|d| (d - spread).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let standard_error = sd / (n as f64).sqrt();
    let start_cv = score_partition(&problem, &start).cv_mae;
    let mut in_sample = Vec::new();
    for iterations in [2_000, 40_000] {
        let chain = ChainSettings {
            kind: FlipKind::Flip,
            iterations,
            temperature: Schedule {
                start: 1.0,
                end: 0.002,
            },
            ..ChainSettings::default()
        };
        let key = format!("noise;iterations={iterations}");
        let record = run_chain(
            &problem,
            &start,
            &chain,
            &mut stream(11, Purpose::Chain, &key),
            &mut stream(11, Purpose::Acceptance, &key),
        );
        let method = FoldMethod {
            problem: &problem,
            areas: &areas,
            start: &start,
            kind: PartitionKind::Flip,
            chain: &chain,
        };
        let folds = AreaFolds::deal(n, 5, &mut stream(11, Purpose::Observations, &key)).unwrap();
        let oos = score_out_of_sample(&method, &folds, |fold| FoldStreams {
            proposals: stream(11, Purpose::Chain, &format!("{key};fold={fold}")),
            acceptance: stream(11, Purpose::Acceptance, &format!("{key};fold={fold}")),
        })
        .unwrap();
        eprintln!(
            "{iterations} flips: in-sample cv region MAE {:.4} (start {start_cv:.4}); \
             out of sample: best {:.4}, final {:.4}, constant {:.4} (standard error {standard_error:.4})",
            record.best.cv_mae, oos.best_mae, oos.final_mae, oos.constant_mae
        );
        for (which, value) in [("best", oos.best_mae), ("final", oos.final_mae)] {
            assert!(
                value > oos.constant_mae - 3.0 * standard_error,
                "{iterations} flips: out-of-sample MAE of the {which} partitions {value} beats \
                 the constant {} by more than noise on noise targets",
                oos.constant_mae
            );
        }
        in_sample.push(record.best.cv_mae);
    }
    assert!(
        in_sample[1] < in_sample[0] && in_sample[0] < start_cv,
        "the in-sample score falls as the search goes on: start {start_cv}, then {in_sample:?}"
    );
    assert!(
        in_sample[1] < 0.5 * start_cv,
        "a long search on noise halves the in-sample score: start {start_cv}, then {in_sample:?}"
    );
}
