//! The bayes-net family (`model.family = "bayes-net"`): a discrete Bayes net given as
//! conditional probability tables in a TOML file (`model.network`), evidence on some nodes
//! (`model.evidence = "mrk=distinction"`), and the posterior marginals of the latent nodes by
//! Gibbs sampling (systematic or random scan) checked against exact enumeration.
//!
//! The network file lists `[[node]]`s in an order where parents come first: `name`, `states`,
//! `parents` (optional) and `table`, one row per configuration of the parents' states (the
//! first parent slowest, the last fastest), each row a distribution over the node's states.
//! The Gibbs update of a latent node draws from its full conditional
//! p(x_v | rest) ∝ p(x_v | pa(v)) prod_{children c} p(x_c | pa(c)), which needs only the node's
//! Markov blanket. Enumeration sums the joint over every configuration of the latent nodes
//! (refused above [`MAX_CONFIGURATIONS`]).

pub(crate) mod keys;
pub(crate) mod schema;

/// The family's word in `model.family`.
pub const NAME: &str = "bayes-net";

use std::path::{Path, PathBuf};

use polars::prelude::{DataFrame, PolarsResult};
use rand::RngExt;
use serde::Deserialize;

use super::common::Method;
use crate::diagnostics;
use crate::figures::{Context, Figure, FigureKind, ReportColumns, ReportError};
use crate::job::{Finished, JobHeader, NamedTables, RunContext, StudyFamily};
use crate::streams::{Purpose, StreamRng};
use crate::study::Resolver;
use crate::study::keys::*;
use crate::study::{ErrorKind, Key, ParamValue, Settings, StudyError};
use crate::table::Table;
use crate::table::rows_of;
use keys::*;
use schema::{jobs, marginals};

/// Enumeration refuses nets with more latent configurations than this.
pub(crate) const MAX_CONFIGURATIONS: usize = 1 << 22;
/// Rows of a table must sum to 1 within this.
const ROW_SUM_TOLERANCE: f64 = 1e-9;

/// The family.
pub struct BayesNet;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetFile {
    node: Vec<NodeFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeFile {
    name: String,
    states: Vec<String>,
    #[serde(default)]
    parents: Vec<String>,
    table: Vec<Vec<f64>>,
}

/// One node: its states, parents (indices) and table (rows by parent configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub(crate) states: Vec<String>,
    pub(crate) parents: Vec<usize>,
    pub(crate) table: Vec<Vec<f64>>,
    pub(crate) children: Vec<usize>,
}

/// A checked network.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    pub nodes: Vec<Node>,
}

impl Network {
    /// Reads and checks a network file.
    pub fn read(path: &Path) -> Result<Network, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Network::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks a network's TOML text.
    pub fn parse(text: &str) -> Result<Network, String> {
        let file: NetFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut nodes: Vec<Node> = Vec::new();
        for node in file.node {
            if nodes.iter().any(|n| n.name == node.name) {
                return Err(format!("node {:?} is declared twice", node.name));
            }
            if node.states.len() < 2 {
                return Err(format!("node {:?} needs at least two states", node.name));
            }
            let parents: Vec<usize> = node
                .parents
                .iter()
                .map(|p| {
                    nodes.iter().position(|n| &n.name == p).ok_or_else(|| {
                        format!(
                            "node {:?}: parent {p:?} is not declared before it",
                            node.name
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            let rows: usize = parents.iter().map(|&p| nodes[p].states.len()).product();
            if node.table.len() != rows {
                return Err(format!(
                    "node {:?}: the table has {} rows, its parents have {rows} configurations",
                    node.name,
                    node.table.len()
                ));
            }
            for (r, row) in node.table.iter().enumerate() {
                let sum: f64 = row.iter().sum();
                if row.len() != node.states.len()
                    || row.iter().any(|p| !(0.0..=1.0).contains(p))
                    || (sum - 1.0).abs() > ROW_SUM_TOLERANCE
                {
                    return Err(format!(
                        "node {:?}: table row {r} must hold {} probabilities summing to 1",
                        node.name,
                        node.states.len()
                    ));
                }
            }
            let index = nodes.len();
            for &p in &parents {
                nodes[p].children.push(index);
            }
            nodes.push(Node {
                name: node.name,
                states: node.states,
                parents,
                table: node.table,
                children: Vec::new(),
            });
        }
        if nodes.is_empty() {
            return Err("the network has no [[node]]".into());
        }
        Ok(Network { nodes })
    }

    /// `node=state, node=state` as (node, state) indices.
    pub fn evidence(&self, text: &str) -> Result<Vec<(usize, usize)>, String> {
        let mut evidence = Vec::new();
        for item in text.split([',', ' ']).filter(|s| !s.is_empty()) {
            let (name, state) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?} is not `node=state`"))?;
            let node = self
                .nodes
                .iter()
                .position(|n| n.name == name)
                .ok_or_else(|| format!("no node {name:?}"))?;
            let s = self.nodes[node]
                .states
                .iter()
                .position(|s| s == state)
                .ok_or_else(|| format!("node {name:?} has no state {state:?}"))?;
            if evidence.iter().any(|(n, _)| *n == node) {
                return Err(format!("node {name:?} is observed twice"));
            }
            evidence.push((node, s));
        }
        Ok(evidence)
    }

    /// p(x_v = x[v] | parents) in the joint configuration `x`.
    fn conditional(&self, v: usize, x: &[usize]) -> f64 {
        let node = &self.nodes[v];
        let row = node
            .parents
            .iter()
            .fold(0, |row, &p| row * self.nodes[p].states.len() + x[p]);
        node.table[row][x[v]]
    }

    /// The joint probability of a full configuration.
    pub(crate) fn joint(&self, x: &[usize]) -> f64 {
        (0..self.nodes.len())
            .map(|v| self.conditional(v, x))
            .product()
    }
}

/// A bayes-net job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct BayesNetSpec {
    pub path: PathBuf,
    pub evidence: String,
    pub method: Method,
    pub iterations: u64,
    pub burn_in: u64,
    pub chains: usize,
}

/// Exact posterior marginals of every node by enumeration over the latent nodes.
pub fn enumerate(net: &Network, evidence: &[(usize, usize)]) -> Result<Vec<Vec<f64>>, String> {
    let n = net.nodes.len();
    let latent: Vec<usize> = (0..n)
        .filter(|v| !evidence.iter().any(|(e, _)| e == v))
        .collect();
    let total: usize = latent
        .iter()
        .try_fold(1usize, |acc, &v| acc.checked_mul(net.nodes[v].states.len()))
        .filter(|&t| t <= MAX_CONFIGURATIONS)
        .ok_or("too many latent configurations to enumerate")?;
    let mut x = vec![0; n];
    for &(v, s) in evidence {
        x[v] = s;
    }
    let mut marginals: Vec<Vec<f64>> = net
        .nodes
        .iter()
        .map(|node| vec![0.0; node.states.len()])
        .collect();
    let mut mass = 0.0;
    for mut index in 0..total {
        for &v in latent.iter().rev() {
            let k = net.nodes[v].states.len();
            x[v] = index % k;
            index /= k;
        }
        let p = net.joint(&x);
        mass += p;
        for v in 0..n {
            marginals[v][x[v]] += p;
        }
    }
    if mass <= 0.0 {
        return Err("the evidence has probability zero".into());
    }
    marginals.iter_mut().flatten().for_each(|m| *m /= mass);
    Ok(marginals)
}

/// One Gibbs chain: per kept sweep, every node's state.
pub fn gibbs_chain(
    net: &Network,
    evidence: &[(usize, usize)],
    spec: &BayesNetSpec,
    rng: &mut StreamRng,
) -> Vec<Vec<usize>> {
    let n = net.nodes.len();
    let latent: Vec<usize> = (0..n)
        .filter(|v| !evidence.iter().any(|(e, _)| e == v))
        .collect();
    let mut x: Vec<usize> = net
        .nodes
        .iter()
        .map(|node| rng.random_range(0..node.states.len()))
        .collect();
    for &(v, s) in evidence {
        x[v] = s;
    }
    let mut kept = Vec::with_capacity(spec.iterations.saturating_sub(spec.burn_in) as usize);
    let mut weights = Vec::new();
    for iteration in 0..spec.iterations {
        for k in 0..latent.len() {
            let v = match spec.method {
                Method::RandomGibbs => latent[rng.random_range(0..latent.len())],
                _ => latent[k],
            };
            weights.clear();
            for s in 0..net.nodes[v].states.len() {
                x[v] = s;
                let blanket: f64 = net.nodes[v]
                    .children
                    .iter()
                    .map(|&c| net.conditional(c, &x))
                    .product();
                weights.push(net.conditional(v, &x) * blanket);
            }
            let total: f64 = weights.iter().sum();
            let mut u = rng.random::<f64>() * total;
            x[v] = weights.len() - 1;
            for (s, w) in weights.iter().enumerate() {
                if u < *w {
                    x[v] = s;
                    break;
                }
                u -= w;
            }
        }
        if iteration >= spec.burn_in {
            kept.push(x.clone());
        }
    }
    kept
}

/// One latent node state's estimate: Gibbs mean, MCSE, bulk ESS of the indicator.
pub struct Estimate {
    pub node: usize,
    pub state: usize,
    pub gibbs: f64,
    pub mcse: Option<f64>,
    pub(crate) ess: Option<f64>,
}

/// Posterior marginals of the latent nodes from the chains' kept sweeps.
pub fn estimates(
    net: &Network,
    evidence: &[(usize, usize)],
    chains: &[Vec<Vec<usize>>],
) -> Vec<Estimate> {
    let mut out = Vec::new();
    for (v, node) in net.nodes.iter().enumerate() {
        if evidence.iter().any(|(e, _)| *e == v) {
            continue;
        }
        for s in 0..node.states.len() {
            let indicators: Vec<Vec<f64>> = chains
                .iter()
                .map(|c| c.iter().map(|x| f64::from(u8::from(x[v] == s))).collect())
                .collect();
            let views: Vec<&[f64]> = indicators.iter().map(Vec::as_slice).collect();
            let count: usize = indicators.iter().map(Vec::len).sum();
            let gibbs = indicators.iter().flatten().sum::<f64>() / count.max(1) as f64;
            out.push(Estimate {
                node: v,
                state: s,
                gibbs,
                mcse: diagnostics::mcse_mean(&views),
                ess: diagnostics::ess_bulk(&views),
            });
        }
    }
    out
}

/// What a bayes-net job computed.
pub struct BayesNetOutput {
    net: Network,
    exact: Vec<Vec<f64>>,
    estimates: Vec<Estimate>,
    kept: usize,
    sample_seconds: f64,
    /// CPU seconds of the job's thread while it sampled.
    cpu_seconds: f64,
}

/// The sampler kind a study of this family runs when it names none.
const DEFAULT_METHOD: Method = Method::SystematicGibbs;

impl StudyFamily for BayesNet {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const HEADLINE: &'static [Key] = &[SAMPLER_KIND];
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[&schema::marginals::TABLE];
    const REPORT: ReportColumns = ReportColumns::listing(&[
        schema::jobs::ESS_PER_ITERATION.name(),
        schema::jobs::MARGINAL_MAX_Z.name(),
    ])
    .named_by(&[SAMPLER_KIND]);
    type Spec = BayesNetSpec;
    type Output = BayesNetOutput;

    fn default_notes() -> Vec<(Key, String)> {
        vec![(SAMPLER_KIND, format!("`\"{}\"`", DEFAULT_METHOD.name()))]
    }

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let Some(_) = settings.given(MODEL_NETWORK) else {
            return Err(resolver
                .error_at(settings, &[MODEL_FAMILY], ErrorKind::Conflict, "a bayes-net study needs model.network")
                .help("add network = \"mark.toml\" under [model] (a TOML file of [[node]] tables, relative to the study file)"));
        };
        let path = resolver.study_dir().join(settings.text(MODEL_NETWORK));
        let net = Network::read(&path).map_err(|problem| {
            resolver.error_at(
                settings,
                &[MODEL_NETWORK],
                ErrorKind::Data,
                format!("bad network: {problem}"),
            )
        })?;
        let evidence_text = settings.text(MODEL_EVIDENCE);
        let evidence = net.evidence(&evidence_text).map_err(|problem| {
            resolver
                .error_at(settings, &[MODEL_EVIDENCE], ErrorKind::OutOfRange, format!("model.evidence: {problem}"))
                .allowed("`node=state` pairs separated by commas, naming nodes and states of the network")
        })?;
        enumerate(&net, &evidence).map_err(|problem| {
            resolver.error_at(
                settings,
                &[MODEL_EVIDENCE, MODEL_NETWORK],
                ErrorKind::Conflict,
                problem,
            )
        })?;
        let method = resolver.sampler_kind(
            settings,
            NAME,
            DEFAULT_METHOD,
            Method::from_name,
            Method::NAMES,
        )?;
        if method == Method::Rwmh {
            return Err(resolver
                .error_at(
                    settings,
                    &[SAMPLER_KIND],
                    ErrorKind::OutOfRange,
                    "the bayes-net family samples by Gibbs",
                )
                .allowed("\"systematic-gibbs\" | \"random-gibbs\""));
        }
        let (iterations, burn_in) = super::common::iterations_and_burn_in(settings, resolver)?;
        Ok(BayesNetSpec {
            path,
            evidence: evidence_text,
            method,
            iterations,
            burn_in,
            chains: settings.int(SAMPLER_CHAINS) as usize,
        })
    }

    /// The method resolved.
    fn params(spec: &Self::Spec, settings: &Settings) -> Vec<(Key, ParamValue)> {
        super::common::params_with_kind(settings, Self::KEYS, spec.method.name())
    }

    fn data_files(spec: &Self::Spec) -> Vec<&Path> {
        vec![spec.path.as_path()]
    }

    fn label(spec: &Self::Spec) -> String {
        format!("bayes-net {} | {}", spec.method, spec.evidence)
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.iterations * spec.chains as u64
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let net = Network::read(&spec.path)?;
        let evidence = net.evidence(&spec.evidence)?;
        let exact = enumerate(&net, &evidence)?;
        let started = std::time::Instant::now();
        let cpu = crate::clock::Stopwatch::start();
        let chains: Vec<Vec<Vec<usize>>> = (0..spec.chains)
            .map(|c| {
                let mut rng = context.chain_stream(Purpose::Chain, &format!("chain={c}"));
                let chain = gibbs_chain(&net, &evidence, spec, &mut rng);
                context.report((c as u64 + 1) * spec.iterations);
                chain
            })
            .collect();
        let sample_seconds = started.elapsed().as_secs_f64();
        let kept = chains.iter().map(Vec::len).sum();
        let estimates = estimates(&net, &evidence, &chains);
        Ok(BayesNetOutput {
            net,
            exact,
            estimates,
            kept,
            sample_seconds,
            cpu_seconds: cpu.cpu_seconds(),
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, output) = (done.job, done.output);
        let max_z = output
            .estimates
            .iter()
            .filter_map(|e| {
                let mcse = e.mcse.filter(|m| *m > 0.0)?;
                Some((e.gibbs - output.exact[e.node][e.state]).abs() / mcse)
            })
            .fold(None, |m: Option<f64>, z| Some(m.map_or(z, |m| m.max(z))));
        let min_ess = output
            .estimates
            .iter()
            .filter_map(|e| e.ess)
            .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.min(e))));
        let jobs_row = done
            .jobs_row(&jobs::TABLE, &[])
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(jobs::CPU_SECONDS, output.cpu_seconds)
            .fill(jobs::MARGINAL_MAX_Z, max_z)
            .fill(
                jobs::ESS_PER_ITERATION,
                min_ess.map(|e| e / output.kept as f64),
            )
            .finish()?;
        Ok(vec![
            ("jobs", jobs_row),
            ("marginals", marginal_rows(job, output)?),
        ])
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        marginal_figure(context, notes)
    }
}

fn marginal_rows(job: &JobHeader, output: &BayesNetOutput) -> PolarsResult<DataFrame> {
    let e = &output.estimates;
    let nodes = &output.net.nodes;
    Ok(rows_of(&marginals::TABLE, job, e.len())
        .set(
            marginals::NODE,
            e.iter()
                .map(|x| nodes[x.node].name.clone())
                .collect::<Vec<_>>(),
        )
        .set(
            marginals::STATE,
            e.iter()
                .map(|x| nodes[x.node].states[x.state].clone())
                .collect::<Vec<_>>(),
        )
        .set(
            marginals::GIBBS,
            e.iter().map(|x| x.gibbs).collect::<Vec<_>>(),
        )
        .set(
            marginals::EXACT,
            e.iter()
                .map(|x| output.exact[x.node][x.state])
                .collect::<Vec<_>>(),
        )
        .set(
            marginals::MCSE,
            e.iter().map(|x| x.mcse).collect::<Vec<_>>(),
        )
        .finish()?)
}

/// Gibbs against exact marginals, every latent node state of every job: points on the
/// diagonal, with +- 4 MCSE whiskers drawn as short vertical curves.
fn marginal_figure(
    context: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = context.read(&marginals::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let mut curves: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for row in 0..table.height {
        let (Some(node), Some(exact), Some(gibbs)) = (
            table.str_at(marginals::NODE, row),
            table.finite(marginals::EXACT, row),
            table.finite(marginals::GIBBS, row),
        ) else {
            continue;
        };
        let mcse = table.finite(marginals::MCSE, row).unwrap_or(0.0);
        let state = table.str_at(marginals::STATE, row).unwrap_or("?");
        let whisker = vec![
            (exact, gibbs - 4.0 * mcse),
            (exact, gibbs),
            (exact, gibbs + 4.0 * mcse),
        ];
        curves.push((format!("{node} = {state}"), whisker));
    }
    if curves.is_empty() {
        return Ok(Vec::new());
    }
    let file = "bayes-net-marginals.png";
    crate::figures::plots::Curves {
        title: "Bayes net: Gibbs against exact posterior marginals".into(),
        x_title: "exact (enumeration)".into(),
        y_title: "Gibbs (with +- 4 MCSE)".into(),
        log_x: false,
        log_y: false,
        curves,
        references: vec![("equal".into(), vec![(0.0, 0.0), (1.0, 1.0)])],
    }
    .draw(&context.path(file))?;
    Ok(vec![Figure {
        file: file.into(),
        title: "Bayes net: Gibbs against enumeration".into(),
        caption: "Each latent node's posterior probability of each state given the evidence: \
                  Gibbs sampling (vertical position, with a bar of +- 4 Monte Carlo standard \
                  errors) against exact enumeration over the latent configurations (horizontal). \
                  Points on the dashed diagonal agree; every bar should cross it."
            .into(),
        kind: FigureKind::Family,
    }])
}
