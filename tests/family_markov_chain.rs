//! The markov-chain family against exact answers: the power method agrees with faer's eigen
//! solve to 1e-12, a prescribed |lambda_2| is what the eigen solve finds, and the simulated visit
//! frequencies' total-variation distance shrinks like 1 / sqrt(steps). Family-wise false-alarm
//! rate: below 1e-5 (the only random check is the slope, at 4.5 standard errors).

use fieldmc::families::markov_chain::{
    Transition, eigen_solve, matrix, power_method, simulate, total_variation,
};
use fieldmc::streams::{Purpose, stream};

fn generated(transition: Transition, key: &str) -> Vec<Vec<f64>> {
    matrix(&transition, &mut stream(7, Purpose::Truth, key))
}

#[test]
fn the_power_method_agrees_with_the_eigen_solve_to_1e_12() {
    let matrices = [
        generated(Transition::Random { states: 50 }, "random50"),
        generated(Transition::Random { states: 3 }, "random3"),
        generated(
            Transition::Lambda2 {
                states: 30,
                lambda2: 0.95,
            },
            "lambda",
        ),
        vec![
            vec![0.7, 0.2, 0.1],
            vec![0.3, 0.4, 0.3],
            vec![0.2, 0.3, 0.5],
        ],
    ];
    for p in &matrices {
        let (eigen, _) = eigen_solve(p).unwrap();
        assert!((eigen.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let power = power_method(p, 1e-15, &eigen);
        let diff = power
            .stationary
            .iter()
            .zip(&eigen)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(diff < 1e-12, "n = {}: max difference {diff}", p.len());
        // pi P = pi for the eigen solve itself.
        let moved = fieldmc::families::markov_chain::step_distribution(&eigen, p);
        assert!(total_variation(&moved, &eigen) < 1e-13);
    }
}

/// The three-state chain by hand: pi P = pi gives 0.3 pi1 = 0.3 pi2 + 0.2 pi3 (state 1) and
/// 0.5 pi3 = 0.1 pi1 + 0.3 pi2 (state 3), so pi3 = 0.2 pi1 + 0.6 pi2, then 0.26 pi1 = 0.42 pi2:
/// pi2 = 13/21 pi1, pi3 = 12/21 pi1, and with sum 1, pi = (21, 13, 12) / 46.
#[test]
fn the_inline_example_matches_its_hand_solution() {
    let p = vec![
        vec![0.7, 0.2, 0.1],
        vec![0.3, 0.4, 0.3],
        vec![0.2, 0.3, 0.5],
    ];
    let (eigen, _) = eigen_solve(&p).unwrap();
    let hand = [21.0 / 46.0, 13.0 / 46.0, 12.0 / 46.0];
    for (a, b) in eigen.iter().zip(hand) {
        assert!((a - b).abs() < 1e-12, "{eigen:?}");
    }
}

#[test]
fn a_prescribed_second_eigenvalue_is_what_the_eigen_solve_finds() {
    for lambda2 in [0.0, 0.3, 0.9, 0.999] {
        let p = generated(
            Transition::Lambda2 {
                states: 12,
                lambda2,
            },
            "prescribed",
        );
        let (_, found) = eigen_solve(&p).unwrap();
        assert!((found - lambda2).abs() < 1e-9, "{lambda2}: {found}");
        // And the power method's error falls exactly like lambda2^t.
        let (eigen, _) = eigen_solve(&p).unwrap();
        let power = power_method(&p, 1e-15, &eigen);
        if lambda2 > 0.0 && power.distances.len() > 6 {
            let ratio = power.distances[5] / power.distances[4];
            assert!((ratio - lambda2).abs() < 1e-6, "{lambda2}: ratio {ratio}");
        }
    }
}

/// Over R = 40 independent runs of each length, the mean TV distance at 10^4, 10^5 and 10^6
/// steps falls with slope -1/2 in log-log: the slope between the ends is within 4.5 standard
/// errors (from the runs' spread, delta method) plus 0.02 for what the start at state 0 and
/// the O(1/sqrt(n)) bias of E|.| leave at 10^4 steps.
#[test]
fn simulation_distance_shrinks_like_one_over_root_steps() {
    let p = generated(Transition::Random { states: 10 }, "simulation");
    let (eigen, _) = eigen_solve(&p).unwrap();
    let lengths = [10_000u64, 100_000, 1_000_000];
    let runs = 40;
    let mut tv = vec![Vec::new(); lengths.len()];
    for r in 0..runs {
        let mut rng = stream(8, Purpose::Chain, &format!("run={r}"));
        let (distances, _) = simulate(&p, lengths[2], &lengths, &eigen, &mut rng);
        for (k, d) in distances.iter().enumerate() {
            tv[k].push(*d);
        }
    }
    let stats: Vec<(f64, f64)> = tv
        .iter()
        .map(|d| {
            let mean = d.iter().sum::<f64>() / runs as f64;
            let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (runs as f64 - 1.0);
            (mean, (var / runs as f64).sqrt() / mean)
        })
        .collect();
    let span = (lengths[2] as f64 / lengths[0] as f64).ln();
    let slope = (stats[2].0.ln() - stats[0].0.ln()) / span;
    let se = (stats[0].1.powi(2) + stats[2].1.powi(2)).sqrt() / span;
    assert!(
        (slope + 0.5).abs() < 4.5 * se + 0.02,
        "slope {slope}, se {se}, means {stats:?}"
    );
}

fn parse_err(text: &str) -> String {
    fieldmc::plan::parse(text, std::path::Path::new("studies/m.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_matrices_and_keys_of_other_families_are_located_errors() {
    let not_stochastic =
        parse_err("[model]\nfamily = \"markov-chain\"\ntransition = [[0.5, 0.6], [0.5, 0.5]]\n");
    assert!(
        not_stochastic.starts_with("studies/m.toml:3:14:")
            && not_stochastic.contains("row 0 of model.transition sums to 1.1"),
        "{not_stochastic}"
    );
    let ragged =
        parse_err("[model]\nfamily = \"markov-chain\"\ntransition = [[1.0], [0.5, 0.5]]\n");
    assert!(
        ragged.contains("row 0 of model.transition has 1 entries, not 2"),
        "{ragged}"
    );
    let foreign = parse_err("[model]\nfamily = \"markov-chain\"\ngrid = 8\n");
    assert!(
        foreign.starts_with("studies/m.toml:3:8:")
            && foreign.contains("`model.grid` applies only to model.family = \"latent-field\""),
        "{foreign}"
    );
    let latent = parse_err("[model]\nstates = 4\n");
    assert!(
        latent.contains("`model.states` applies only to model.family = \"markov-chain\""),
        "{latent}"
    );
}
