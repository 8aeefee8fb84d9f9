//! The pagerank family against hand computations and the eigen solve. Every check here is
//! deterministic (no false alarms); the random surfer is checked by the trust tests' tables.

use std::path::Path;

use fieldmc::families::markov_chain::eigen_solve;
use fieldmc::families::pagerank::{dense_matrix, parse_inline, power_ranks, read_graph};

const FOUR_PAGES: &str = "1>2 1>3 1>4 2>3 2>4 3>1 4>1 4>3";

/// Without teleport, x = x K for the four pages reads x1 = x3 + x4 / 2, x2 = x1 / 3,
/// x3 = x1 / 3 + x2 / 2 + x4 / 2, x4 = x1 / 3 + x2 / 2. With x1 = 1: x2 = 1/3,
/// x4 = 1/3 + 1/6 = 1/2, x3 = x1 - x4 / 2 = 3/4 (and the third equation holds:
/// 1/3 + 1/6 + 1/4 = 3/4), so x = (1, 1/3, 3/4, 1/2) = (12, 4, 9, 6) / 31 (Bryan & Leise 2006).
#[test]
fn the_four_page_example_matches_the_hand_computation() {
    let graph = parse_inline(FOUR_PAGES).unwrap();
    assert_eq!(graph.names, ["1", "2", "3", "4"]);
    let (ranks, _, _) = power_ranks(&graph, 0.0, 1e-15);
    let hand = [12.0 / 31.0, 4.0 / 31.0, 9.0 / 31.0, 6.0 / 31.0];
    for (r, h) in ranks.iter().zip(hand) {
        assert!((r - h).abs() < 1e-12, "{ranks:?}");
    }
    // With teleport p: x = (1 - p) x K + p / 4 solved as a linear system by hand elimination
    // is what the eigen solve gives; the power method agrees to 1e-12.
    for p in [0.15, 0.5] {
        let (power, _, _) = power_ranks(&graph, p, 1e-15);
        let (eigen, lambda2) = eigen_solve(&dense_matrix(&graph, p)).unwrap();
        for (a, b) in power.iter().zip(&eigen) {
            assert!((a - b).abs() < 1e-12);
        }
        // Teleport shrinks every non-unit eigenvalue by 1 - p.
        let (_, lambda2_k) = eigen_solve(&dense_matrix(&graph, 0.0)).unwrap();
        assert!(
            (lambda2 - (1.0 - p) * lambda2_k).abs() < 1e-9,
            "{lambda2} vs {lambda2_k}"
        );
    }
}

/// A dangling page (3 has no out-links) jumps uniformly: with p = 0, x = x K where K's third
/// row is uniform. For 1>2, 2>1, 2>3: x1 = x2/2 + x3/3, x2 = x1 + x3/3, x3 = x2/2 + x3/3, so
/// x3 = 3 x2 / 4, x1 = x2/2 + x2/4 = 3 x2 / 4: x = (3, 4, 3) / 10. No rank leaks: it sums to 1.
#[test]
fn dangling_pages_spread_their_rank_over_every_page() {
    let graph = parse_inline("1>2, 2>1, 2>3").unwrap();
    assert_eq!(graph.dangling(), 1);
    let (ranks, _, _) = power_ranks(&graph, 0.0, 1e-15);
    let hand = [0.3, 0.4, 0.3];
    for (r, h) in ranks.iter().zip(hand) {
        assert!((r - h).abs() < 1e-12, "{ranks:?}");
    }
}

#[test]
fn the_chicago_streets_are_one_graph_whose_power_ranks_match_the_eigen_solve() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/chicago_streets.csv");
    let graph = read_graph(&path).unwrap();
    assert_eq!(graph.segments.len(), 503);
    assert_eq!(graph.dangling(), 0, "every end point has a street");
    // Undirected: every link has its reverse.
    for (a, links) in graph.links.iter().enumerate() {
        for &b in links {
            assert!(graph.links[b].contains(&a));
        }
    }
    let (power, _, _) = power_ranks(&graph, 0.15, 1e-15);
    let (eigen, _) = eigen_solve(&dense_matrix(&graph, 0.15)).unwrap();
    let diff = power
        .iter()
        .zip(&eigen)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-12, "{diff}");
}

#[test]
fn bad_graphs_are_located_errors() {
    let error = fieldmc::plan::parse(
        "[model]\nfamily = \"pagerank\"\nedges = \"1>2 3\"\n",
        Path::new("studies/g.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.starts_with("studies/g.toml:3:9:") && error.contains("\"3\" is not an edge"),
        "{error}"
    );
    let missing = fieldmc::plan::parse("[model]\nfamily = \"pagerank\"\n", Path::new("g.toml"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("needs a graph"), "{missing}");
}
