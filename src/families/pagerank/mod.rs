//! The pagerank family (`model.family = "pagerank"`): the notes' PageRank, the stationary
//! distribution of the random surfer's chain K' = (1 - p) K + p / n, where K follows a random
//! out-link and p (`model.teleport`) jumps to a page chosen uniformly.
//!
//! **Dangling nodes** (no out-links) get the uniform row in K: from a dead end the surfer jumps
//! to any node, so K is row-stochastic and no rank leaks away. The graph is kept sparse (out-link
//! lists); K' is never formed: x K' = (1 - p) (sum over links x_i / outdeg_i + dangling mass / n)
//! + p / n, O(edges) per iteration.
//!
//! Ranks two ways: the **power method** from the uniform distribution until successive iterates
//! differ by less than `model.tolerance` in total variation, and a **random surfer** walking
//! `sampler.iterations` steps with the job's chain stream (visit frequencies; their TV distance
//! to the power method's ranks by run length goes to distances.parquet). Graphs of at most
//! [`MAX_EIGEN_NODES`] nodes are also solved densely with faer as a check.
//!
//! The graph: inline (`model.edges = "1>2 1>3 ..."`) or a CSV (`data.graph`) of directed edges
//! (`from,to`) or of street segments (`x0,y0,x1,y1`): each segment links its two end points both
//! ways, and segments meet where an end point is written identically; a node is named by its
//! coordinates as written (`x y`).

pub(crate) mod keys;
pub(crate) mod schema;

/// The family's word in `model.family`.
pub const NAME: &str = "pagerank";

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use polars::prelude::{DataFrame, PolarsResult};
use rand::RngExt;

use super::markov_chain::keys::MODEL_TOLERANCE;
use super::markov_chain::schema::{distances, jobs as markov_jobs};
use super::markov_chain::{checkpoints, eigen_solve, total_variation};
use crate::figures::plots::Map;
use crate::figures::{Context, Figure, FigureKind, ReportColumns, ReportError};
use crate::job::{Finished, JobHeader, NamedTables, RunContext, StudyFamily};
use crate::streams::Purpose;
use crate::study::Resolver;
use crate::study::csv::{Column, CsvError, CsvRows, CsvText};
use crate::study::keys::*;
use crate::study::{ErrorKind, Settings, StudyError};
use crate::table::Table;
use crate::table::rows_of;
use crate::table::shared::METHOD;
use keys::*;
use schema::{jobs, node_ranks};

/// Graphs up to this many nodes are also solved densely (an n x n eigen problem).
pub(crate) const MAX_EIGEN_NODES: usize = 600;
/// The power method gives up after this many iterations.
const MAX_ITERATIONS: usize = 100_000;
/// Nodes labelled on the report's map.
const LABELLED: usize = 10;

/// The family.
pub struct PageRank;

/// Where the graph comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GraphSource {
    Inline(String),
    File(PathBuf),
}

/// A pagerank job's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRankSpec {
    pub(crate) graph: GraphSource,
    pub(crate) teleport: f64,
    pub(crate) tolerance: f64,
    pub(crate) steps: u64,
}

/// A directed graph: node names as written, optional coordinates, out-link lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub names: Vec<String>,
    pub(crate) coordinates: Option<Vec<(f64, f64)>>,
    pub links: Vec<Vec<usize>>,
    /// Street segments as coordinates (for the map), when the graph came from segments.
    pub segments: Vec<((f64, f64), (f64, f64))>,
}

impl Graph {
    fn node(
        &mut self,
        index: &mut HashMap<String, usize>,
        name: &str,
        at: Option<(f64, f64)>,
    ) -> usize {
        if let Some(&i) = index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.links.push(Vec::new());
        if let (Some(c), Some(at)) = (self.coordinates.as_mut(), at) {
            c.push(at);
        }
        index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// Edges as directed pairs of names.
    pub(crate) fn from_edges<'a>(edges: impl IntoIterator<Item = (&'a str, &'a str)>) -> Graph {
        let mut graph = Graph {
            names: Vec::new(),
            coordinates: None,
            links: Vec::new(),
            segments: Vec::new(),
        };
        let mut index = HashMap::new();
        for (from, to) in edges {
            let a = graph.node(&mut index, from, None);
            let b = graph.node(&mut index, to, None);
            graph.links[a].push(b);
        }
        graph
    }

    /// The number of directed edges.
    pub(crate) fn edge_count(&self) -> usize {
        self.links.iter().map(Vec::len).sum()
    }

    /// Nodes without out-links.
    pub fn dangling(&self) -> usize {
        self.links.iter().filter(|l| l.is_empty()).count()
    }
}

/// `1>2 1>3, 2>3`: directed edges separated by spaces or commas.
pub fn parse_inline(text: &str) -> Result<Graph, String> {
    let mut edges = Vec::new();
    for token in text.split([' ', ',', '\n', '\t']).filter(|t| !t.is_empty()) {
        let (from, to) = token
            .split_once('>')
            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
            .ok_or_else(|| format!("{token:?} is not an edge `from>to`"))?;
        edges.push((from, to));
    }
    if edges.is_empty() {
        return Err("no edges".into());
    }
    Ok(Graph::from_edges(edges))
}

/// The largest graph CSV read: 256 MiB. Past it a wrong path (a device, an unrelated huge file)
/// is refused before it exhausts memory.
const MAX_GRAPH_BYTES: u64 = 1 << 28;

/// A graph CSV: `from,to` or `x0,y0,x1,y1` (see the module docs), in the dialect of
/// [`crate::study::csv`] (a column with an empty name, R's row names, is ignored).
pub fn read_graph(path: &Path) -> Result<Graph, String> {
    let text =
        CsvText::open(path, MAX_GRAPH_BYTES, "for a graph file").map_err(|e| e.to_string())?;
    let mut rows = text.rows("graph file").map_err(|e| e.to_string())?;
    let named: Vec<&str> = rows
        .header()
        .names()
        .iter()
        .map(String::as_str)
        .filter(|n| !n.is_empty())
        .collect();
    let columns = |names: &[&str]| -> Vec<Column> {
        names.iter().filter_map(|n| rows.header().find(n)).collect()
    };
    match named.as_slice() {
        ["from", "to"] => {
            let [from, to] = columns(&["from", "to"])[..] else {
                unreachable!("both columns are named")
            };
            let mut pairs = Vec::new();
            while let Some(row) = rows.next_row().map_err(|e| e.to_string())? {
                let (a, b) = (row.text(from), row.text(to));
                if a.is_empty() || b.is_empty() {
                    return Err(row.line_error("expected `from,to`, two node names").to_string());
                }
                pairs.push((a.to_string(), b.to_string()));
            }
            Ok(Graph::from_edges(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str()))))
        }
        ["x0", "y0", "x1", "y1"] => {
            let ends = columns(&["x0", "y0", "x1", "y1"]);
            segments(&mut rows, &ends).map_err(|e| e.to_string())
        }
        _ => Err(rows
            .header_error(format!(
                "the header must be `from,to` (directed edges) or `x0,y0,x1,y1` (segments), not {:?}",
                named.join(",")
            ))
            .to_string()),
    }
}

/// The street segments of `rows`, `ends` their columns x0, y0, x1, y1.
fn segments(rows: &mut CsvRows<'_>, ends: &[Column]) -> Result<Graph, CsvError> {
    let mut graph = Graph {
        names: Vec::new(),
        coordinates: Some(Vec::new()),
        links: Vec::new(),
        segments: Vec::new(),
    };
    let mut index = HashMap::new();
    while let Some(row) = rows.next_row()? {
        let mut numbers = [0.0; 4];
        for (number, &column) in numbers.iter_mut().zip(ends) {
            *number = row.finite(column)?;
        }
        let [x0, y0, x1, y1] = numbers;
        let text = |k: usize| row.text(ends[k]);
        let a = graph.node(
            &mut index,
            &format!("{} {}", text(0), text(1)),
            Some((x0, y0)),
        );
        let b = graph.node(
            &mut index,
            &format!("{} {}", text(2), text(3)),
            Some((x1, y1)),
        );
        if a != b {
            graph.links[a].push(b);
            graph.links[b].push(a);
        }
        graph.segments.push(((x0, y0), (x1, y1)));
    }
    Ok(graph)
}

/// x K' (see the module docs).
pub(crate) fn surf_step(graph: &Graph, x: &[f64], teleport: f64) -> Vec<f64> {
    let n = x.len() as f64;
    let mut next = vec![0.0; x.len()];
    let mut dangling = 0.0;
    for (xi, links) in x.iter().zip(&graph.links) {
        if links.is_empty() {
            dangling += xi;
            continue;
        }
        let share = xi / links.len() as f64;
        for &j in links {
            next[j] += share;
        }
    }
    let base = (1.0 - teleport) * dangling / n + teleport / n;
    next.iter_mut()
        .for_each(|v| *v = (1.0 - teleport) * *v + base);
    next
}

/// The power method: ranks, iterations, and each iterate's TV distance to the final ranks.
pub fn power_ranks(graph: &Graph, teleport: f64, tolerance: f64) -> (Vec<f64>, usize, Vec<f64>) {
    let n = graph.names.len();
    let mut x = vec![1.0 / n as f64; n];
    let mut iterates = vec![x.clone()];
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        let next = surf_step(graph, &x, teleport);
        iterations += 1;
        let change = total_variation(&next, &x);
        x = next;
        iterates.push(x.clone());
        if change < tolerance {
            break;
        }
    }
    let distances = iterates.iter().map(|it| total_variation(it, &x)).collect();
    (x, iterations, distances)
}

/// K' as a dense matrix (for the eigen check of small graphs).
pub fn dense_matrix(graph: &Graph, teleport: f64) -> Vec<Vec<f64>> {
    let n = graph.names.len();
    (0..n)
        .map(|i| {
            let mut e = vec![0.0; n];
            e[i] = 1.0;
            surf_step(graph, &e, teleport)
        })
        .collect()
}

/// What a pagerank job computed.
pub struct PageRankOutput {
    graph: Graph,
    power: Vec<f64>,
    iterations: usize,
    power_distances: Vec<f64>,
    eigen: Option<(Vec<f64>, f64)>,
    surfer: Vec<f64>,
    checkpoints: Vec<u64>,
    surfer_tv: Vec<f64>,
    sample_seconds: f64,
    /// CPU seconds of the job's thread while it sampled.
    cpu_seconds: f64,
}

impl StudyFamily for PageRank {
    const NAME: &'static str = NAME;
    const KEYS: &'static [Key] = keys::KEYS;
    const JOBS: &'static Table = &schema::jobs::TABLE;
    const TABLES: &'static [&'static Table] = &[
        &super::markov_chain::schema::distances::TABLE,
        &schema::node_ranks::TABLE,
    ];
    const REPORT: ReportColumns = ReportColumns::listing(&[
        markov_jobs::LAMBDA2.name(),
        markov_jobs::POWER_ITERATIONS.name(),
        markov_jobs::POWER_EIGEN_MAX_DIFF.name(),
        markov_jobs::SIMULATION_TV.name(),
        jobs::NODES.name(),
        jobs::EDGES.name(),
        jobs::DANGLING_NODES.name(),
    ]);
    type Spec = PageRankSpec;
    type Output = PageRankOutput;

    fn resolve(settings: &Settings, resolver: &mut Resolver<'_>) -> Result<Self::Spec, StudyError> {
        let graph = match (settings.given(MODEL_EDGES), settings.given(DATA_GRAPH)) {
            (Some(_), Some(_)) => {
                return Err(resolver.error_at(
                    settings,
                    &[DATA_GRAPH],
                    ErrorKind::Conflict,
                    "give the graph once: model.edges or data.graph, not both",
                ));
            }
            (Some(_), None) => {
                let text = settings.text(MODEL_EDGES);
                parse_inline(&text).map_err(|problem| {
                    resolver
                        .error_at(settings, &[MODEL_EDGES], ErrorKind::OutOfRange, format!("model.edges: {problem}"))
                        .allowed("directed edges `from>to` separated by spaces or commas, e.g. \"1>2 1>3 2>3\"")
                })?;
                GraphSource::Inline(text)
            }
            (None, Some(_)) => {
                let path = resolver.study_dir().join(settings.text(DATA_GRAPH));
                read_graph(&path).map_err(|problem| {
                    resolver.error_at(
                        settings,
                        &[DATA_GRAPH],
                        ErrorKind::Data,
                        format!("bad graph file: {problem}"),
                    )
                })?;
                GraphSource::File(path)
            }
            (None, None) => {
                return Err(resolver
                    .error_at(settings, &[MODEL_FAMILY], ErrorKind::Conflict, "a pagerank study needs a graph")
                    .help("add edges = \"1>2 2>1\" under [model], or graph = \"data/edges.csv\" under [data]"));
            }
        };
        Ok(PageRankSpec {
            graph,
            teleport: settings.float(MODEL_TELEPORT),
            tolerance: settings.float(MODEL_TOLERANCE),
            steps: settings.int(SAMPLER_ITERATIONS) as u64,
        })
    }

    fn data_files(spec: &Self::Spec) -> Vec<&Path> {
        match &spec.graph {
            GraphSource::File(path) => vec![path.as_path()],
            GraphSource::Inline(_) => Vec::new(),
        }
    }

    fn label(spec: &Self::Spec) -> String {
        format!("pagerank p={}", spec.teleport)
    }

    fn work(spec: &Self::Spec) -> u64 {
        spec.steps
    }

    fn run(spec: &Self::Spec, context: &RunContext<'_>) -> Result<Self::Output, String> {
        let graph = match &spec.graph {
            GraphSource::Inline(text) => parse_inline(text)?,
            GraphSource::File(path) => read_graph(path)?,
        };
        let (power, iterations, power_distances) =
            power_ranks(&graph, spec.teleport, spec.tolerance);
        let eigen = if graph.names.len() <= MAX_EIGEN_NODES {
            Some(eigen_solve(&dense_matrix(&graph, spec.teleport))?)
        } else {
            None
        };
        let started = std::time::Instant::now();
        let cpu = crate::clock::Stopwatch::start();
        let checkpoints = checkpoints(spec.steps);
        let mut rng = context.chain_stream(Purpose::Chain, "surfer");
        let n = graph.names.len();
        let mut visits = vec![0u64; n];
        let mut surfer_tv = Vec::with_capacity(checkpoints.len());
        let mut node = rng.random_range(0..n);
        let mut next_checkpoint = 0;
        for step in 1..=spec.steps {
            let links = &graph.links[node];
            node = if links.is_empty() || rng.random::<f64>() < spec.teleport {
                rng.random_range(0..n)
            } else {
                links[rng.random_range(0..links.len())]
            };
            visits[node] += 1;
            if next_checkpoint < checkpoints.len() && checkpoints[next_checkpoint] == step {
                let f: Vec<f64> = visits.iter().map(|&v| v as f64 / step as f64).collect();
                surfer_tv.push(total_variation(&f, &power));
                next_checkpoint += 1;
            }
        }
        context.report(spec.steps);
        let surfer = visits
            .iter()
            .map(|&v| v as f64 / spec.steps as f64)
            .collect();
        Ok(PageRankOutput {
            graph,
            power,
            iterations,
            power_distances,
            eigen,
            surfer,
            checkpoints,
            surfer_tv,
            sample_seconds: started.elapsed().as_secs_f64(),
            cpu_seconds: cpu.cpu_seconds(),
        })
    }

    fn tables(done: Finished<'_, Self>) -> PolarsResult<NamedTables> {
        let (job, output) = (done.job, done.output);
        let max_diff = output.eigen.as_ref().map(|(e, _)| {
            e.iter()
                .zip(&output.power)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        });
        let jobs_row = done
            .jobs_row(&jobs::TABLE, &[])
            .fill(jobs::SAMPLE_SECONDS, output.sample_seconds)
            .fill(jobs::CPU_SECONDS, output.cpu_seconds)
            .fill(jobs::NODES, output.graph.names.len() as i64)
            .fill(jobs::EDGES, output.graph.edge_count() as i64)
            .fill(jobs::DANGLING_NODES, output.graph.dangling() as i64)
            .fill(markov_jobs::POWER_ITERATIONS, output.iterations as i64)
            .fill(markov_jobs::POWER_EIGEN_MAX_DIFF, max_diff)
            .fill(markov_jobs::LAMBDA2, output.eigen.as_ref().map(|e| e.1))
            .fill(markov_jobs::SIMULATION_TV, output.surfer_tv.last().copied())
            .finish()?;
        Ok(vec![
            ("jobs", jobs_row),
            ("node_ranks", rank_rows(job, output)?),
            ("distances", distance_rows(job, output)?),
        ])
    }

    fn figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
        map_figures(context, notes)
    }
}

/// Positions 1.. of `ranks` from the highest (ties by node order).
fn positions(ranks: &[f64]) -> Vec<i64> {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by(|&a, &b| ranks[b].total_cmp(&ranks[a]).then(a.cmp(&b)));
    let mut position = vec![0; ranks.len()];
    for (place, &node) in order.iter().enumerate() {
        position[node] = place as i64 + 1;
    }
    position
}

fn rank_rows(job: &JobHeader, output: &PageRankOutput) -> PolarsResult<DataFrame> {
    let mut methods: Vec<(&str, &[f64])> =
        vec![("power", &output.power), ("surfer", &output.surfer)];
    if let Some((eigen, _)) = &output.eigen {
        methods.push(("eigen", eigen));
    }
    let n = output.graph.names.len();
    let coordinate = |k: usize| output.graph.coordinates.as_ref().map(|c| c[k]);
    let mut rows = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for (method, ranks) in &methods {
        let places = positions(ranks);
        for k in 0..n {
            rows.0.push(method.to_string());
            rows.1.push(output.graph.names[k].clone());
            rows.2.push(ranks[k]);
            rows.3.push(places[k]);
            rows.4.push(coordinate(k).map(|c| c.0));
            rows.5.push(coordinate(k).map(|c| c.1));
        }
    }
    Ok(rows_of(&node_ranks::TABLE, job, rows.0.len())
        .set(METHOD, rows.0)
        .set(node_ranks::NODE, rows.1)
        .set(node_ranks::RANK, rows.2)
        .set(node_ranks::POSITION, rows.3)
        .set(node_ranks::X, rows.4)
        .set(node_ranks::Y, rows.5)
        .finish()?)
}

fn distance_rows(job: &JobHeader, output: &PageRankOutput) -> PolarsResult<DataFrame> {
    let mut rows: (Vec<String>, Vec<i64>, Vec<f64>, Vec<Option<f64>>) =
        std::default::Default::default();
    for (t, d) in output.power_distances.iter().enumerate() {
        rows.0.push("power".into());
        rows.1.push(t as i64);
        rows.2.push(*d);
        rows.3.push(None);
    }
    let first = (
        output.checkpoints.first().copied().unwrap_or(1) as f64,
        output.surfer_tv.first().copied().unwrap_or(0.0),
    );
    for (s, d) in output.checkpoints.iter().zip(&output.surfer_tv) {
        rows.0.push("surfer".into());
        rows.1.push(*s as i64);
        rows.2.push(*d);
        rows.3.push(Some(first.1 * (first.0 / *s as f64).sqrt()));
    }
    Ok(rows_of(&distances::TABLE, job, rows.0.len())
        .set(METHOD, rows.0)
        .set(distances::STEP, rows.1)
        .set(distances::DISTANCE, rows.2)
        .set(distances::REFERENCE, rows.3)
        .finish()?)
}

/// Per pagerank job with coordinates: the street map with every intersection coloured by its
/// power-method rank and the top ones labelled by their place.
fn map_figures(context: &Context<'_>, notes: &mut Vec<String>) -> Result<Vec<Figure>, ReportError> {
    let Some(table) = context.read(&node_ranks::TABLE, None, notes)? else {
        return Ok(Vec::new());
    };
    let mut figures = Vec::new();
    for id in table.job_ids() {
        let rows: Vec<usize> = table
            .rows_of_job(&id)
            .into_iter()
            .filter(|&r| table.str_at(METHOD, r) == Some("power"))
            .collect();
        let points: Vec<(f64, f64, f64, String)> = rows
            .iter()
            .filter_map(|&r| {
                let place = table.finite(node_ranks::POSITION, r)? as usize;
                Some((
                    table.finite(node_ranks::X, r)?,
                    table.finite(node_ranks::Y, r)?,
                    table.finite(node_ranks::RANK, r)?,
                    if place <= LABELLED {
                        place.to_string()
                    } else {
                        String::new()
                    },
                ))
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let file = format!("pagerank-map-{}.png", crate::figures::file_safe(&id));
        Map {
            title: format!(
                "PageRank of the street intersections ({})",
                context.describe(&id)
            ),
            segments: Vec::new(),
            points,
        }
        .draw(&context.path(&file))?;
        figures.push(Figure {
            file,
            title: "PageRank on the street network".into(),
            caption: format!(
                "Every intersection (segment end point) at its position, coloured by its \
                 PageRank from the power method, light (low) to dark red (high); the top \
                 {LABELLED} are numbered by their place. A random walker that follows streets and \
                 sometimes teleports spends most time at the well-connected junctions."
            ),
            kind: FigureKind::Family,
        });
    }
    Ok(figures)
}
