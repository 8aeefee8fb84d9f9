//! The lda family's unit tests: the recovery figure's caption, and both Gibbs schemes against
//! the exact posterior of a corpus small enough to enumerate every topic assignment.

use super::*;
use crate::diagnostics::{mcse_mean, standard_normal_quantile};
use crate::streams::stream;

#[test]
fn the_recovery_caption_says_what_the_run_shows() {
    let curves = vec![
        (
            "uncollapsed".to_string(),
            vec![(0.5, 0.4), (1.0, 0.2), (2.0, 0.15)],
        ),
        (
            "collapsed".to_string(),
            vec![(0.5, 0.3), (0.9, 0.1), (1.5, 0.05)],
        ),
        ("other".to_string(), vec![(0.2, 0.5), (0.4, 0.09)]),
    ];
    assert_eq!(
        time_to_recover(&curves),
        "other reached 0.1 after 0.400 s; collapsed reached 0.1 after 0.900 s; \
         uncollapsed did not reach 0.1 in 2.000 s"
    );
    assert_eq!(time_to_recover(&[]), "no job recorded a trace");
}

/// Topics of the enumerated model.
const K: usize = 2;

/// Three documents of three, two and one tokens over three words, no two alike (so no symmetry
/// of the corpus makes two functionals equal): 6 tokens, 2^6 = 64 topic assignments. No document
/// reaches [`HOLDOUT_EVERY`] tokens, so every token is trained on.
fn tiny_corpus() -> Corpus {
    Corpus {
        words: ["a", "b", "c"].map(String::from).to_vec(),
        documents: vec![vec![0, 0, 1], vec![1, 2], vec![2]],
        truth: None,
    }
}

/// A float key's declared default (the family's hyperparameters, as a study gets them).
fn declared(key: Key) -> f64 {
    match key.default_value() {
        Some(ParamValue::Float(x)) => x,
        other => panic!("{} has no float default: {other:?}", key.dotted()),
    }
}

/// a (a + 1) ... (a + n - 1) = Gamma(a + n) / Gamma(a).
fn rising(a: f64, n: usize) -> f64 {
    (0..n).map(|i| a + i as f64).product()
}

/// The token pairs (a < b, tokens numbered through the documents in order).
fn pairs(tokens: usize) -> Vec<(usize, usize)> {
    (0..tokens)
        .flat_map(|a| (a + 1..tokens).map(move |b| (a, b)))
        .collect()
}

/// The functionals of one state, label-invariant (topic labels are exchangeable under the
/// symmetric priors, so a topic's own number means nothing): 1[z_a = z_b] for every token pair,
/// then for every document d and word v the predictive probability sum_k theta_dk phi_kv.
fn functionals(z: &[usize], theta: &[Vec<f64>], phi: &[Vec<f64>]) -> Vec<f64> {
    let mut values: Vec<f64> = pairs(z.len())
        .into_iter()
        .map(|(a, b)| f64::from(u8::from(z[a] == z[b])))
        .collect();
    for th in theta {
        for v in 0..phi[0].len() {
            values.push(th.iter().zip(phi).map(|(t, p)| t * p[v]).sum());
        }
    }
    values
}

/// What each functional is, for the failure message.
fn functional_names(tokens: usize, documents: usize, words: usize) -> Vec<String> {
    let mut names: Vec<String> = pairs(tokens)
        .into_iter()
        .map(|(a, b)| format!("P(z_{a} = z_{b})"))
        .collect();
    for d in 0..documents {
        for v in 0..words {
            names.push(format!("E[sum_k theta_{d}k phi_k{v}]"));
        }
    }
    names
}

/// The exact posterior means of [`functionals`] by enumerating all K^T assignments z:
/// p(z | w) ∝ prod_d prod_k Gamma(n_dk + alpha) / Gamma(alpha)
///          x prod_k [prod_v Gamma(n_kv + eta) / Gamma(eta)] Gamma(V eta) / Gamma(n_k + V eta)
/// (theta and phi integrated out; the documents' Gamma(K alpha) / Gamma(n_d + K alpha) do not
/// depend on z). Given z, theta_d ~ Dir(alpha + n_d.) and phi_k ~ Dir(eta + n_k.) independently,
/// so E[sum_k theta_dk phi_kv | z] = sum_k (n_dk + alpha) / (n_d + K alpha) x
/// (n_kv + eta) / (n_k + V eta).
fn exact_means(documents: &[Vec<usize>], words: usize, alpha: f64, eta: f64) -> Vec<f64> {
    let doc_of: Vec<usize> = documents
        .iter()
        .enumerate()
        .flat_map(|(d, doc)| std::iter::repeat_n(d, doc.len()))
        .collect();
    let word_of: Vec<usize> = documents.iter().flatten().copied().collect();
    let tokens = word_of.len();
    let (mut total, mut weighted) = (0.0, Vec::new());
    for code in 0..K.pow(tokens as u32) {
        let z: Vec<usize> = (0..tokens).map(|t| code / K.pow(t as u32) % K).collect();
        let mut ndk = vec![vec![0usize; K]; documents.len()];
        let mut nkw = vec![vec![0usize; words]; K];
        for t in 0..tokens {
            ndk[doc_of[t]][z[t]] += 1;
            nkw[z[t]][word_of[t]] += 1;
        }
        let nk: Vec<usize> = nkw.iter().map(|row| row.iter().sum()).collect();
        let mut weight: f64 = ndk.iter().flatten().map(|&n| rising(alpha, n)).product();
        for k in 0..K {
            weight *= nkw[k].iter().map(|&n| rising(eta, n)).product::<f64>();
            weight /= rising(words as f64 * eta, nk[k]);
        }
        let theta: Vec<Vec<f64>> = ndk
            .iter()
            .map(|row| {
                let n: usize = row.iter().sum();
                row.iter()
                    .map(|&c| (c as f64 + alpha) / (n as f64 + K as f64 * alpha))
                    .collect()
            })
            .collect();
        let phi: Vec<Vec<f64>> = (0..K)
            .map(|k| {
                nkw[k]
                    .iter()
                    .map(|&c| (c as f64 + eta) / (nk[k] as f64 + words as f64 * eta))
                    .collect()
            })
            .collect();
        let values = functionals(&z, &theta, &phi);
        weighted.resize(values.len(), 0.0);
        for (s, f) in weighted.iter_mut().zip(values) {
            *s += weight * f;
        }
        total += weight;
    }
    weighted.into_iter().map(|s| s / total).collect()
}

/// Kept sweeps of each chain on the tiny corpus.
const SWEEPS: u64 = 200_000;

/// The chain's estimate of each of [`functionals`] on `corpus`: its mean over `sweeps` kept
/// sweeps (after 1,000 burn-in) and its MCSE (`diagnostics::mcse_mean`, split-chain ESS).
fn chain_estimates(
    corpus: &Corpus,
    scheme: Scheme,
    (alpha, eta): (f64, f64),
    seed: u64,
    sweeps: u64,
) -> Vec<(f64, f64)> {
    let tokens: usize = corpus.documents.iter().map(Vec::len).sum();
    let spec = LdaSpec {
        topics: K,
        alpha,
        eta,
        scheme,
        // Not read by run_lda, which is handed the corpus.
        corpus: CorpusSource::Csv("tiny".into()),
        iterations: 1_000 + sweeps,
        burn_in: 1_000,
    };
    let mut series: Vec<Vec<f64>> = Vec::new();
    let mut rng = stream(seed, Purpose::Chain, &format!("tiny {scheme}"));
    run_lda_observed(&spec, corpus, &mut rng, |z, phi, theta| {
        let z: Vec<usize> = z.iter().flatten().copied().collect();
        assert_eq!(z.len(), tokens, "every token is trained on");
        let values = functionals(&z, theta, phi);
        series.resize_with(values.len(), || Vec::with_capacity(sweeps as usize));
        for (s, f) in series.iter_mut().zip(values) {
            s.push(f);
        }
    });
    series
        .iter()
        .map(|s| {
            assert_eq!(s.len() as u64, sweeps);
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            let mcse = mcse_mean(&[s]).expect("a functional that varies along the chain");
            (mean, mcse)
        })
        .collect()
}

/// Both schemes against the exact posterior of [`tiny_corpus`] with K = 2 and the family's
/// default alpha and eta: per scheme the posterior mean of 15 pair indicators P(z_a = z_b) and
/// 9 predictive probabilities E[sum_k theta_dk phi_kv | w] (from the sweep's theta and phi:
/// draws for uncollapsed, their means given z for collapsed), each within z* MCSE of the exact
/// value, the MCSE from the chain (`diagnostics::mcse_mean`, split-chain ESS). 2 x 24 = 48
/// comparisons, each two-sided at 1e-4 / 48, so z* = 4.75 and by Bonferroni a correct sampler
/// fails this test in at most 1 run in 10^4. It has power: alpha + 0.2 in the collapsed
/// conditional, the token left in n_k while it is resampled, or alpha + 0.2 or eta + 0.2 in the
/// uncollapsed Dirichlet draws each put 16 or more of the comparisons beyond z*.
#[test]
fn both_gibbs_schemes_agree_with_the_enumerated_posterior_of_a_tiny_corpus_within_mcse() {
    let corpus = tiny_corpus();
    let priors = (declared(keys::MODEL_ALPHA), declared(keys::MODEL_ETA));
    let words = corpus.words.len();
    let tokens: usize = corpus.documents.iter().map(Vec::len).sum();
    let exact = exact_means(&corpus.documents, words, priors.0, priors.1);
    let names = functional_names(tokens, corpus.documents.len(), words);
    assert_eq!(exact.len(), names.len());
    let schemes = [Scheme::Collapsed, Scheme::Uncollapsed];
    let comparisons = schemes.len() * exact.len();
    assert_eq!(comparisons, 48, "the count the doc comment's z* is set for");
    let critical = standard_normal_quantile(1.0 - 1e-4 / comparisons as f64 / 2.0);
    let mut failures = Vec::new();
    for scheme in schemes {
        let estimates = chain_estimates(&corpus, scheme, priors, 47, SWEEPS);
        for ((name, (mean, mcse)), truth) in names.iter().zip(estimates).zip(&exact) {
            let z = (mean - truth) / mcse;
            eprintln!(
                "{scheme} {name}: exact {truth:.5}, chain {mean:.5}, MCSE {mcse:.2e}, z {z:+.2}"
            );
            if z.abs() > critical {
                failures.push(format!(
                    "{scheme} {name}: exact {truth:.5}, chain {mean:.5} +- {mcse:.2e} (z = {z:.2})"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "beyond {critical:.2} MCSE of the enumerated posterior:\n{}",
        failures.join("\n")
    );
}
