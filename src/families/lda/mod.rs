//! The lda family (`model.family = "lda"`): latent Dirichlet allocation with K topics
//! (`model.topics`), document-topic prior alpha and topic-word prior eta, sampled by collapsed
//! Gibbs (Griffiths & Steyvers 2004: theta and beta integrated out, one topic per token from
//! p(z = k | rest) ∝ (n_dk + alpha)(n_kw + eta) / (n_k + V eta)) or uncollapsed Gibbs (the
//! notes' derivation: theta_d ~ Dir(alpha + n_d), beta_k ~ Dir(eta + n_k), then every z from
//! theta_dk beta_kw), `sampler.kind`.
//!
//! Corpora ([`corpus`], `data.corpus`): the synthetic bars corpus (`"bars"`, the default): a
//! 5 x 5 vocabulary, ten true topics uniform over one row or one column, documents of
//! `data.document_length` words drawn from the model with theta ~ Dir(1) and the job's data
//! stream (Griffiths & Steyvers' correctness test); or a real corpus from a CSV of
//! `doc_id,word,count` rows (`data/reuters_tm/counts.csv`). Every tenth token of each document
//! is held out for the perplexity.
//!
//! Per kept sweep the topics' word distributions and the documents' topic mixtures (posterior
//! means given the sweep's state) are summed; their averages are `topics.parquet` and score the
//! held-out tokens. One chain per job (topics of different chains are not matched). For bars,
//! estimated topics are matched to the true ones by the Hungarian assignment on total-variation
//! distance; `topic_tv_max` is the worst matched distance. `lda_trace.parquet` holds per sweep
//! the training log-likelihood sum log sum_k theta_dk beta_kw and the seconds so far, so the
//! two schemes can be compared per second. The report draws bars topics as 5 x 5 images and the
//! topics of a real corpus as lists of their most probable words.

pub(crate) mod corpus;
pub(crate) mod keys;
pub(crate) mod schema;

/// The family's word in `model.family`.
pub const NAME: &str = "lda";

use polars::prelude::{DataFrame, PolarsResult};
use rand::RngExt;
use rand_distr::{Distribution, Exp1, Gamma};

pub use corpus::{
    BARS, BARS_SIDE, Corpus, CorpusError, CorpusSource, bars_corpus, bars_topics, read_corpus,
};

use crate::diagnostics;
use crate::figures::plots::{Curves, Heat, heat_panels, word_lists};
use crate::figures::{Context, Figure, FigureKind, ReportColumns, ReportError};
use crate::job::{Finished, JobHeader, NamedTables, RunContext, StudyFamily};
use crate::streams::{Purpose, StreamRng};
use crate::study::Resolver;
use crate::study::keys::*;
use crate::study::{ErrorKind, ParamValue, Settings, StudyError};
use crate::table::Table;
use crate::table::rows_of;
use crate::table::shared::autocorrelation_rows;
use keys::*;
use schema::{jobs, lda_trace, topics};

/// Every HOLDOUT_EVERY-th token of a document is held out.
const HOLDOUT_EVERY: usize = 10;

crate::closed_names! {
    /// How LDA is sampled (`sampler.kind`).
    pub enum Scheme {
        /// theta and beta integrated out (Griffiths & Steyvers 2004).
        Collapsed = "collapsed",
        /// theta, beta and z drawn in turn.
        Uncollapsed = "uncollapsed",
    }
}

/// The family.
pub struct Lda;

/// An lda job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LdaSpec {
    pub topics: usize,
    pub alpha: f64,
    pub eta: f64,
    pub scheme: Scheme,
    pub corpus: CorpusSource,
    pub iterations: u64,
    pub burn_in: u64,
}

pub(crate) fn dirichlet(weights: impl Iterator<Item = f64>, rng: &mut StreamRng) -> Vec<f64> {
    let draws: Vec<f64> = weights
        .map(|a| {
            if a == 1.0 {
                Exp1.sample(rng)
            } else {
                Gamma::new(a, 1.0).map_or(0.0, |g| g.sample(rng))
            }
        })
        .collect();
    let total: f64 = draws.iter().sum();
    draws.into_iter().map(|d| d / total).collect()
}

pub(crate) fn categorical(p: &[f64], total: f64, rng: &mut StreamRng) -> usize {
    let mut u = rng.random::<f64>() * total;
    for (k, w) in p.iter().enumerate() {
        if u < *w {
            return k;
        }
        u -= w;
    }
    p.len() - 1
}

/// The Hungarian assignment minimising the total cost: `assignment[row] = column`
/// (square cost matrix; O(n^3)).
pub fn hungarian(cost: &[Vec<f64>]) -> Vec<usize> {
    let n = cost.len();
    let (mut u, mut v) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = f64::INFINITY;
            let mut j1 = 0;
            for j in 1..=n {
                if !used[j] {
                    let current = cost[i0 - 1][j - 1] - u[i0] - v[j];
                    if current < minv[j] {
                        minv[j] = current;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut assignment = vec![0; n];
    for j in 1..=n {
        if p[j] > 0 {
            assignment[p[j] - 1] = j - 1;
        }
    }
    assignment
}

fn tv(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// For each true topic, the estimated topic matched to it and their TV distance.
pub fn match_topics(truth: &[Vec<f64>], estimated: &[Vec<f64>]) -> Vec<(usize, f64)> {
    let n = truth.len().max(estimated.len());
    let cost: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match (truth.get(i), estimated.get(j)) {
                    (Some(t), Some(e)) => tv(t, e),
                    _ => 1.0,
                })
                .collect()
        })
        .collect();
    let assignment = hungarian(&cost);
    (0..truth.len())
        .map(|i| (assignment[i], cost[i][assignment[i]]))
        .collect()
}

/// One run's results.
pub struct LdaRun {
    /// Posterior mean of each topic's word distribution over the kept sweeps.
    pub topics: Vec<Vec<f64>>,
    /// Posterior mean of each document's topic mixture.
    pub(crate) mixtures: Vec<Vec<f64>>,
    /// Per sweep: (seconds so far, training log-likelihood).
    pub trace: Vec<(f64, f64)>,
    /// Per sweep (bars): the worst matched topic TV of that sweep's point estimate.
    pub sweep_tv: Vec<Option<f64>>,
}

/// Runs one chain of `spec` on the training tokens of `corpus`.
pub fn run_lda(spec: &LdaSpec, corpus: &Corpus, rng: &mut StreamRng) -> LdaRun {
    run_lda_observed(spec, corpus, rng, |_, _, _| {})
}

/// [`run_lda`], showing `observe` the state after each kept sweep (the tests compare it with
/// the exact posterior of a tiny corpus): `observe(z, phi, theta)` with z the topic of every
/// training token per document, phi and theta the sweep's topics and mixtures (drawn, for
/// uncollapsed; their posterior means given z, for collapsed).
pub(crate) fn run_lda_observed(
    spec: &LdaSpec,
    corpus: &Corpus,
    rng: &mut StreamRng,
    mut observe: impl FnMut(&[Vec<usize>], &[Vec<f64>], &[Vec<f64>]),
) -> LdaRun {
    let (k_topics, v) = (spec.topics, corpus.words.len());
    let train: Vec<Vec<usize>> = corpus
        .documents
        .iter()
        .map(|d| {
            d.iter()
                .enumerate()
                .filter(|(i, _)| i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1)
                .map(|(_, w)| *w)
                .collect()
        })
        .collect();
    let mut z: Vec<Vec<usize>> = train
        .iter()
        .map(|d| d.iter().map(|_| rng.random_range(0..k_topics)).collect())
        .collect();
    let mut ndk = vec![vec![0usize; k_topics]; train.len()];
    let mut nkw = vec![vec![0usize; v]; k_topics];
    let mut nk = vec![0usize; k_topics];
    for (d, doc) in train.iter().enumerate() {
        for (i, &w) in doc.iter().enumerate() {
            ndk[d][z[d][i]] += 1;
            nkw[z[d][i]][w] += 1;
            nk[z[d][i]] += 1;
        }
    }
    let mut phi_sum = vec![vec![0.0; v]; k_topics];
    let mut theta_sum = vec![vec![0.0; k_topics]; train.len()];
    let mut trace = Vec::new();
    let mut sweep_tv = Vec::new();
    let mut weights = vec![0.0; k_topics];
    let started = std::time::Instant::now();
    let (alpha, eta, veta) = (spec.alpha, spec.eta, v as f64 * spec.eta);
    for sweep in 0..spec.iterations {
        let (phi, theta) = match spec.scheme {
            Scheme::Collapsed => {
                for (d, doc) in train.iter().enumerate() {
                    for (i, &w) in doc.iter().enumerate() {
                        let old = z[d][i];
                        ndk[d][old] -= 1;
                        nkw[old][w] -= 1;
                        nk[old] -= 1;
                        let mut total = 0.0;
                        for k in 0..k_topics {
                            let p = (ndk[d][k] as f64 + alpha) * (nkw[k][w] as f64 + eta)
                                / (nk[k] as f64 + veta);
                            weights[k] = p;
                            total += p;
                        }
                        let new = categorical(&weights, total, rng);
                        z[d][i] = new;
                        ndk[d][new] += 1;
                        nkw[new][w] += 1;
                        nk[new] += 1;
                    }
                }
                point_estimates(&ndk, &nkw, &nk, alpha, eta)
            }
            Scheme::Uncollapsed => {
                let theta: Vec<Vec<f64>> = ndk
                    .iter()
                    .map(|n| dirichlet(n.iter().map(|&c| c as f64 + alpha), rng))
                    .collect();
                let phi: Vec<Vec<f64>> = nkw
                    .iter()
                    .map(|n| dirichlet(n.iter().map(|&c| c as f64 + eta), rng))
                    .collect();
                for (d, doc) in train.iter().enumerate() {
                    for (i, &w) in doc.iter().enumerate() {
                        let old = z[d][i];
                        let mut total = 0.0;
                        for k in 0..k_topics {
                            weights[k] = theta[d][k] * phi[k][w];
                            total += weights[k];
                        }
                        let new = categorical(&weights, total, rng);
                        if new != old {
                            ndk[d][old] -= 1;
                            nkw[old][w] -= 1;
                            ndk[d][new] += 1;
                            nkw[new][w] += 1;
                            nk[old] -= 1;
                            nk[new] += 1;
                        }
                        z[d][i] = new;
                    }
                }
                (phi, theta)
            }
        };
        let loglik = log_likelihood(&train, &theta, &phi);
        trace.push((started.elapsed().as_secs_f64(), loglik));
        sweep_tv.push(corpus.truth.as_ref().map(|truth| {
            match_topics(truth, &phi)
                .iter()
                .map(|m| m.1)
                .fold(0.0, f64::max)
        }));
        if sweep >= spec.burn_in {
            add(&mut phi_sum, &phi);
            add(&mut theta_sum, &theta);
            observe(&z, &phi, &theta);
        }
    }
    let kept = spec.iterations.saturating_sub(spec.burn_in).max(1) as f64;
    let mean = |sums: Vec<Vec<f64>>| {
        sums.into_iter()
            .map(|row| row.into_iter().map(|x| x / kept).collect())
            .collect()
    };
    LdaRun {
        topics: mean(phi_sum),
        mixtures: mean(theta_sum),
        trace,
        sweep_tv,
    }
}

fn add(sums: &mut [Vec<f64>], values: &[Vec<f64>]) {
    for (s, v) in sums.iter_mut().zip(values) {
        for (a, b) in s.iter_mut().zip(v) {
            *a += b;
        }
    }
}

/// The collapsed state's posterior means of phi and theta.
fn point_estimates(
    ndk: &[Vec<usize>],
    nkw: &[Vec<usize>],
    nk: &[usize],
    alpha: f64,
    eta: f64,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let v = nkw.first().map_or(0, Vec::len) as f64;
    let k = nk.len() as f64;
    let phi = nkw
        .iter()
        .zip(nk)
        .map(|(row, &n)| {
            row.iter()
                .map(|&c| (c as f64 + eta) / (n as f64 + v * eta))
                .collect()
        })
        .collect();
    let theta = ndk
        .iter()
        .map(|row| {
            let n: usize = row.iter().sum();
            row.iter()
                .map(|&c| (c as f64 + alpha) / (n as f64 + k * alpha))
                .collect()
        })
        .collect();
    (phi, theta)
}

/// sum over tokens of log sum_k theta_dk phi_kw.
fn log_likelihood(docs: &[Vec<usize>], theta: &[Vec<f64>], phi: &[Vec<f64>]) -> f64 {
    docs.iter()
        .zip(theta)
        .map(|(doc, th)| {
            doc.iter()
                .map(|&w| th.iter().zip(phi).map(|(t, p)| t * p[w]).sum::<f64>().ln())
                .sum::<f64>()
        })
        .sum()
}

/// Perplexity of the held-out tokens under the posterior-mean topics and mixtures.
pub fn heldout_perplexity(corpus: &Corpus, run: &LdaRun) -> f64 {
    let mut total = 0.0;
    let mut count = 0usize;
    for (doc, theta) in corpus.documents.iter().zip(&run.mixtures) {
        for (i, &w) in doc.iter().enumerate() {
            if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1 {
                let p: f64 = theta
                    .iter()
                    .zip(&run.topics)
                    .map(|(t, phi)| t * phi[w])
                    .sum();
                total += p.ln();
                count += 1;
            }
        }
    }
    (-total / count.max(1) as f64).exp()
}

/// What an lda job computed.
pub struct LdaOutput {
    corpus_words: Vec<String>,
    truth: Option<Vec<Vec<f64>>>,
    run: LdaRun,
    burn_in: usize,
    perplexity: f64,
    sample_seconds: f64,
    /// CPU seconds of the job's thread while it sampled.
    cpu_seconds: f64,
}

/// The sampler kind a study of this family runs when it names none.
const DEFAULT_SCHEME: Scheme = Scheme::Collapsed;

impl StudyFamily for Lda {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const HEADLINE: &'static [Key] = &[SAMPLER_KIND];
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[
        &schema::topics::TABLE,
        &crate::table::shared::autocorrelation::TABLE,
        &schema::lda_trace::TABLE,
    ];
    const REPORT: ReportColumns = ReportColumns::listing(&[
        schema::jobs::AUTOCORRELATION_LAG1.name(),
        schema::jobs::TOPIC_TV_MAX.name(),
        schema::jobs::HELDOUT_PERPLEXITY.name(),
        schema::jobs::ESS_BULK_PER_SECOND.name(),
    ])
    .named_by(&[SAMPLER_KIND]);
    type Spec = LdaSpec;
    type Output = LdaOutput;

    fn default_notes() -> Vec<(Key, String)> {
        vec![(SAMPLER_KIND, format!("`\"{}\"`", DEFAULT_SCHEME.name()))]
    }

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let (iterations, burn_in) = super::common::iterations_and_burn_in(settings, resolver)?;
        Ok(LdaSpec {
            topics: settings.int(MODEL_TOPICS) as usize,
            alpha: settings.float(MODEL_ALPHA),
            eta: settings.float(MODEL_ETA),
            scheme: resolver.sampler_kind(
                settings,
                NAME,
                DEFAULT_SCHEME,
                Scheme::from_name,
                Scheme::NAMES,
            )?,
            corpus: corpus_source(settings, resolver)?,
            iterations,
            burn_in,
        })
    }

    /// The scheme resolved; a corpus read from a file has no bars settings (`Null`).
    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        let mut params = super::common::params_with_kind(settings, Self::KEYS, spec.scheme.name());
        if let CorpusSource::Csv(_) = spec.corpus {
            super::common::set_param(&mut params, DATA_DOCUMENTS, ParamValue::Null);
            super::common::set_param(&mut params, DATA_DOCUMENT_LENGTH, ParamValue::Null);
        }
        params
    }

    fn data_files(spec: &Self::Spec) -> Vec<&std::path::Path> {
        match &spec.corpus {
            CorpusSource::Csv(path) => vec![path.as_path()],
            CorpusSource::Bars { .. } => Vec::new(),
        }
    }

    fn label(spec: &Self::Spec) -> String {
        format!("lda {} K={}", spec.scheme, spec.topics)
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.iterations
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let corpus = match &spec.corpus {
            CorpusSource::Bars { documents, length } => {
                bars_corpus(*documents, *length, &mut context.data_stream("corpus"))
            }
            CorpusSource::Csv(path) => read_corpus(path).map_err(|e| e.to_string())?,
        };
        let started = std::time::Instant::now();
        let cpu = crate::clock::Stopwatch::start();
        let mut rng = context.chain_stream(Purpose::Chain, "chain=0");
        let run = run_lda(spec, &corpus, &mut rng);
        context.report(spec.iterations);
        let sample_seconds = started.elapsed().as_secs_f64();
        let perplexity = heldout_perplexity(&corpus, &run);
        Ok(LdaOutput {
            corpus_words: corpus.words,
            truth: corpus.truth,
            run,
            burn_in: spec.burn_in as usize,
            perplexity,
            sample_seconds,
            cpu_seconds: cpu.cpu_seconds(),
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, output) = (done.job, done.output);
        let kept: Vec<f64> = output.run.trace[output.burn_in..]
            .iter()
            .map(|t| t.1)
            .collect();
        let ess = diagnostics::ess_bulk(&[&kept]);
        let matches = output
            .truth
            .as_ref()
            .map(|t| match_topics(t, &output.run.topics));
        let tv_max = matches
            .as_ref()
            .map(|m| m.iter().map(|x| x.1).fold(0.0, f64::max));
        let acf = diagnostics::autocorrelation(&kept, 50);
        let jobs_row = done
            .jobs_row(&jobs::TABLE, &[])
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(jobs::CPU_SECONDS, output.cpu_seconds)
            .fill(jobs::ESS_BULK, ess)
            .fill(
                jobs::ESS_BULK_PER_SECOND,
                ess.map(|e| e / output.cpu_seconds),
            )
            .fill(jobs::AUTOCORRELATION_LAG1, acf.get(1).copied())
            .fill(jobs::TOPIC_TV_MAX, tv_max)
            .fill(jobs::HELDOUT_PERPLEXITY, output.perplexity)
            .finish()?;
        let acf_rows = autocorrelation_rows(job, &acf)?;
        Ok(vec![
            ("jobs", jobs_row),
            ("topics", topic_rows(job, output, matches.as_deref())?),
            ("lda_trace", trace_rows(job, output)?),
            ("autocorrelation", acf_rows),
        ])
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        let mut figures = topic_figures(context, notes)?;
        figures.extend(trace_figure(context, notes)?);
        Ok(figures)
    }
}

/// `data.corpus`: the bars corpus, or a corpus CSV relative to the study file's folder, read
/// here to report a bad file as a located error (bars settings may not be given with it).
fn corpus_source(settings: &Settings, resolver: &Resolver<'_>) -> Result<CorpusSource, StudyError> {
    let name = settings.text(DATA_CORPUS);
    if name == BARS {
        return Ok(CorpusSource::Bars {
            documents: settings.int(DATA_DOCUMENTS) as usize,
            length: settings.int(DATA_DOCUMENT_LENGTH) as usize,
        });
    }
    super::common::reject_given(
        settings,
        resolver,
        &[DATA_DOCUMENTS, DATA_DOCUMENT_LENGTH],
        |key| {
            format!(
                "`{}` sets the bars corpus, but data.corpus reads {name:?}",
                key.dotted()
            )
        },
    )?;
    let path = resolver.study_dir().join(&*name);
    read_corpus(&path).map_err(|problem| {
        resolver
            .error_at(
                settings,
                &[DATA_CORPUS],
                ErrorKind::Data,
                format!("bad corpus: {problem}"),
            )
            .allowed(format!(
                "\"{BARS}\", or a CSV with the header `{}`",
                corpus::CSV_HEADER
            ))
    })?;
    Ok(CorpusSource::Csv(path))
}

fn topic_rows(
    job: &JobHeader,
    output: &LdaOutput,
    matches: Option<&[(usize, f64)]>,
) -> PolarsResult<DataFrame> {
    let v = output.corpus_words.len();
    let k = output.run.topics.len();
    let true_of = |topic: usize| {
        matches.and_then(|m| {
            m.iter()
                .position(|(est, _)| *est == topic)
                .map(|t| t as i64)
        })
    };
    Ok(rows_of(&topics::TABLE, job, k * v)
        .set(
            topics::TOPIC,
            (0..k as i64)
                .flat_map(|t| std::iter::repeat_n(t, v))
                .collect::<Vec<_>>(),
        )
        .set(
            topics::WORD,
            (0..k)
                .flat_map(|_| output.corpus_words.iter().cloned())
                .collect::<Vec<_>>(),
        )
        .set(
            topics::WORD_INDEX,
            (0..k).flat_map(|_| 0..v as i64).collect::<Vec<_>>(),
        )
        .set(
            topics::PROBABILITY,
            output
                .run
                .topics
                .iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>(),
        )
        .set(
            topics::TRUE_TOPIC,
            (0..k)
                .flat_map(|t| std::iter::repeat_n(true_of(t), v))
                .collect::<Vec<_>>(),
        )
        .finish()?)
}

fn trace_rows(job: &JobHeader, output: &LdaOutput) -> PolarsResult<DataFrame> {
    let trace = &output.run.trace;
    Ok(rows_of(&lda_trace::TABLE, job, trace.len())
        .set(
            lda_trace::SWEEP,
            (1..=trace.len() as i64).collect::<Vec<_>>(),
        )
        .set(
            lda_trace::SECONDS,
            trace.iter().map(|t| t.0).collect::<Vec<_>>(),
        )
        .set(
            lda_trace::LOGLIK,
            trace.iter().map(|t| t.1).collect::<Vec<_>>(),
        )
        .set(lda_trace::TOPIC_TV_MAX, output.run.sweep_tv.clone())
        .finish()?)
}

/// Words listed per topic of a real corpus in the report.
const TOP_WORDS: usize = 12;

/// Per job (at most six): the topics as 5 x 5 images (bars, whose topics have a true topic), or
/// as lists of their most probable words (a real corpus).
fn topic_figures(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = context.read(&topics::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let mut figures = Vec::new();
    for id in table.job_ids().into_iter().take(6) {
        let rows = table.rows_of_job(&id);
        let bars = rows
            .iter()
            .any(|&r| table.finite(topics::TRUE_TOPIC, r).is_some());
        let figure = if bars {
            bars_figure(context, &table, &id, &rows)?
        } else {
            top_words_figure(context, &table, &id, &rows)?
        };
        figures.extend(figure);
    }
    Ok(figures)
}

/// One job's bars topics as 5 x 5 images, ordered by their matched true topic.
fn bars_figure(
    context: &Context<'_>,
    table: &crate::figures::tables::Table,
    id: &str,
    rows: &[usize],
) -> Result<Option<Figure>, ReportError> {
    let mut heats: Vec<(i64, Heat)> = Vec::new();
    for &r in rows {
        let (Some(topic), Some(word), Some(p)) = (
            table.finite(topics::TOPIC, r),
            table.finite(topics::WORD_INDEX, r),
            table.finite(topics::PROBABILITY, r),
        ) else {
            continue;
        };
        let topic = topic as i64;
        let order = table
            .finite(topics::TRUE_TOPIC, r)
            .map_or(topic, |t| t as i64);
        let index = match heats
            .iter()
            .position(|(t, h)| *t == order && h.title.starts_with(&format!("topic {topic} ")))
        {
            Some(i) => i,
            None => {
                heats.push((
                    order,
                    Heat {
                        title: format!("topic {topic} "),
                        rows: BARS_SIDE,
                        cols: BARS_SIDE,
                        values: vec![0.0; BARS_SIDE * BARS_SIDE],
                    },
                ));
                heats.len() - 1
            }
        };
        if let Some(cell) = heats[index].1.values.get_mut(word as usize) {
            *cell = p;
        }
    }
    if heats.is_empty() {
        return Ok(None);
    }
    heats.sort_by_key(|(order, _)| *order);
    let heats: Vec<Heat> = heats.into_iter().map(|(_, h)| h).collect();
    let file = format!("lda-topics-{}.png", crate::figures::file_safe(id));
    heat_panels(
        &context.path(&file),
        &format!("LDA topics ({})", context.describe(id)),
        &heats,
        5,
    )?;
    Ok(Some(Figure {
        file,
        title: "LDA topics on the bars corpus".into(),
        caption: "Each estimated topic's word distribution (posterior mean over the kept \
                  sweeps) as a 5 x 5 image of the vocabulary, ordered by the true bar it is \
                  matched to (Hungarian assignment). Recovered topics are single rows and \
                  columns, as in Griffiths & Steyvers (2004)."
            .into(),
        kind: FigureKind::Family,
    }))
}

/// One job's topics of a real corpus as lists of their most probable words.
fn top_words_figure(
    context: &Context<'_>,
    table: &crate::figures::tables::Table,
    id: &str,
    rows: &[usize],
) -> Result<Option<Figure>, ReportError> {
    let mut by_topic: Vec<Vec<(f64, String)>> = Vec::new();
    for &r in rows {
        let (Some(topic), Some(p), Some(word)) = (
            table.finite(topics::TOPIC, r),
            table.finite(topics::PROBABILITY, r),
            table.str_at(topics::WORD, r),
        ) else {
            continue;
        };
        let topic = topic as usize;
        if by_topic.len() <= topic {
            by_topic.resize(topic + 1, Vec::new());
        }
        by_topic[topic].push((p, word.to_string()));
    }
    if by_topic.is_empty() {
        return Ok(None);
    }
    let lists: Vec<(String, Vec<String>)> = by_topic
        .into_iter()
        .enumerate()
        .map(|(topic, mut words)| {
            words.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let top = words
                .into_iter()
                .take(TOP_WORDS)
                .map(|(p, w)| format!("{w}  {p:.3}"))
                .collect();
            (format!("topic {topic}"), top)
        })
        .collect();
    let file = format!("lda-top-words-{}.png", crate::figures::file_safe(id));
    word_lists(
        &context.path(&file),
        &format!("LDA topics ({})", context.describe(id)),
        &lists,
        5,
    )?;
    Ok(Some(Figure {
        file,
        title: "LDA topics: most probable words".into(),
        caption: format!(
            "Each topic's {TOP_WORDS} most probable words with their probabilities (the \
             posterior mean of the topic's word distribution over the kept sweeps, as in \
             topics.parquet)."
        ),
        kind: FigureKind::Family,
    }))
}

/// The distance at which a topic counts as recovered in the trace figure.
const RECOVERED_TV: f64 = 0.1;

/// What the trace figure shows, in words: per job, the seconds at which its worst topic first
/// came within [`RECOVERED_TV`], or that it never did in the seconds it ran; fastest first.
fn time_to_recover(curves: &[(String, Vec<(f64, f64)>)]) -> String {
    let mut reached: Vec<(Option<f64>, String)> = curves
        .iter()
        .map(|(job, points)| {
            let first = points
                .iter()
                .find(|(_, tv)| *tv <= RECOVERED_TV)
                .map(|p| p.0);
            let last = points.iter().map(|p| p.0).fold(0.0f64, f64::max);
            let said = match first {
                Some(seconds) => format!("{job} reached {RECOVERED_TV} after {seconds:.3} s"),
                None => format!("{job} did not reach {RECOVERED_TV} in {last:.3} s"),
            };
            (first, said)
        })
        .collect();
    reached.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    if reached.is_empty() {
        return "no job recorded a trace".into();
    }
    reached
        .into_iter()
        .map(|r| r.1)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The worst matched topic distance against seconds, one curve per job: which scheme recovers
/// the bars sooner per second.
fn trace_figure(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = context.read(&lda_trace::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let curves: Vec<(String, Vec<(f64, f64)>)> = table
        .job_ids()
        .into_iter()
        .map(|id| {
            let points = table
                .rows_of_job(&id)
                .into_iter()
                .filter_map(|r| {
                    Some((
                        table.finite(lda_trace::SECONDS, r)?,
                        table.finite(lda_trace::TOPIC_TV_MAX, r)?,
                    ))
                })
                .filter(|p| p.0 > 0.0)
                .collect();
            (context.describe(&id), points)
        })
        .collect();
    let (lo, hi) = curves
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    let file = "lda-recovery.png";
    let reached = time_to_recover(&curves);
    let drawn = Curves {
        title: "LDA: worst topic distance against time".into(),
        x_title: "seconds of sampling".into(),
        y_title: "max TV to the matched true topic".into(),
        log_x: true,
        log_y: true,
        curves,
        references: vec![(
            RECOVERED_TV.to_string(),
            vec![(lo, RECOVERED_TV), (hi, RECOVERED_TV)],
        )],
    }
    .draw(&context.path(file))?;
    Ok(drawn
        .then(|| Figure {
            file: file.into(),
            title: "LDA: recovery of the bars per second".into(),
            caption: format!(
                "For each job, after every sweep: the largest total-variation distance between \
                 a true bar and the estimated topic matched to it (the sweep's point estimate), \
                 against seconds of sampling. In this run: {reached}."
            ),
            kind: FigureKind::Family,
        })
        .into_iter()
        .collect())
}

#[cfg(test)]
mod tests;
