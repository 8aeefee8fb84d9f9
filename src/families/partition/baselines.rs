//! Partitions the chains are compared with, scored by the same F and MAE: the administrative
//! one (each administrative region split into its connected pieces, so it is also a valid chain
//! start), k-means on features and coordinates, and spectral clustering of the adjacency graph
//! weighted by feature similarity. k-means and spectral clusters need not be connected; they
//! are scored as they are (with the same region count as the chains).

use faer::{Mat, Side};
use rand::RngExt;

use super::graph::{Adjacency, split_into_connected_pieces};
use super::task::Problem;
use crate::streams::StreamRng;

/// Why a baseline cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaselineError {
    #[error(
        "spectral clustering forms a dense {areas} x {areas} Laplacian; at most {MAX_SPECTRAL_AREAS} areas are allowed"
    )]
    TooManyAreasForSpectral { areas: usize },
    #[error("{what}: {regions} regions asked for {areas} areas; 1 to {areas} are allowed")]
    RegionCount {
        what: &'static str,
        regions: usize,
        areas: usize,
    },
    #[error("the eigendecomposition of the graph Laplacian failed")]
    Eigen,
}

/// The largest graph the spectral baseline accepts (its dense eigendecomposition is O(n^3)).
pub(crate) const MAX_SPECTRAL_AREAS: usize = 4000;

/// The administrative partition split into connected pieces: labels 0..pieces.
pub fn admin_pieces(graph: &Adjacency, admin: &[String]) -> Vec<u32> {
    split_into_connected_pieces(graph, admin)
}

/// Merge regions until `regions` remain: the smallest region (lowest label on ties) joins its
/// smallest neighbouring region, so every region stays connected. Labels come back as 0..regions
/// in order of their smallest area. `labels` must have at least `regions` regions.
pub fn merge_down(graph: &Adjacency, labels: &[u32], regions: usize) -> Vec<u32> {
    let mut labels = labels.to_vec();
    loop {
        let count = super::graph::region_count(&labels);
        if count <= regions {
            return split_into_connected_pieces(graph, &labels);
        }
        let mut sizes = vec![0usize; count];
        for &l in &labels {
            sizes[l as usize] += 1;
        }
        let smallest = (0..count)
            .filter(|&r| sizes[r] > 0)
            .min_by_key(|&r| (sizes[r], r))
            .expect("a region");
        let neighbour = (0..labels.len())
            .filter(|&a| labels[a] as usize == smallest)
            .flat_map(|a| {
                graph
                    .neighbours(a)
                    .iter()
                    .map(|&b| labels[b as usize] as usize)
            })
            .filter(|&r| r != smallest)
            .min_by_key(|&r| (sizes[r], r));
        let Some(neighbour) = neighbour else {
            return split_into_connected_pieces(graph, &labels);
        };
        for l in labels.iter_mut() {
            if *l as usize == smallest {
                *l = neighbour as u32;
            }
        }
        labels = split_into_connected_pieces(graph, &labels);
    }
}

/// k-means (k-means++ start, Lloyd iterations, the best of `restarts` by inertia) of the rows
/// of `points` (n x d, row-major) into `k` non-empty clusters.
pub(crate) fn kmeans(
    points: &[f64],
    d: usize,
    k: usize,
    restarts: usize,
    rng: &mut StreamRng,
) -> Vec<u32> {
    let mut best: Option<(f64, Vec<u32>)> = None;
    for _ in 0..restarts.max(1) {
        let (inertia, labels) = kmeans_once(points, d, k, rng);
        if best.as_ref().is_none_or(|(b, _)| inertia < *b) {
            best = Some((inertia, labels));
        }
    }
    best.expect("at least one restart").1
}

fn squared_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum()
}

fn kmeans_once(points: &[f64], d: usize, k: usize, rng: &mut StreamRng) -> (f64, Vec<u32>) {
    let n = points.len() / d;
    let row = |i: usize| &points[i * d..(i + 1) * d];
    let mut centres: Vec<f64> = row(rng.random_range(0..n)).to_vec();
    let mut nearest: Vec<f64> = (0..n)
        .map(|i| squared_distance(row(i), &centres[..d]))
        .collect();
    while centres.len() < k * d {
        let total: f64 = nearest.iter().sum();
        let pick = if total > 0.0 {
            let mut u = rng.random::<f64>() * total;
            (0..n)
                .find(|&i| {
                    u -= nearest[i];
                    u < 0.0
                })
                .unwrap_or(n - 1)
        } else {
            rng.random_range(0..n)
        };
        let start = centres.len();
        centres.extend_from_slice(row(pick));
        for (i, best) in nearest.iter_mut().enumerate() {
            *best = best.min(squared_distance(row(i), &centres[start..start + d]));
        }
    }
    let mut labels = vec![0u32; n];
    for _ in 0..100 {
        let changed = assign(points, d, &centres, &mut labels);
        fill_empty_clusters(points, d, k, &centres, &mut labels);
        update_centres(points, d, k, &labels, &mut centres);
        if !changed {
            break;
        }
    }
    let inertia = (0..n)
        .map(|i| {
            let c = labels[i] as usize;
            squared_distance(row(i), &centres[c * d..(c + 1) * d])
        })
        .sum();
    (inertia, labels)
}

fn assign(points: &[f64], d: usize, centres: &[f64], labels: &mut [u32]) -> bool {
    let k = centres.len() / d;
    let mut changed = false;
    for (i, label) in labels.iter_mut().enumerate() {
        let p = &points[i * d..(i + 1) * d];
        let best = (0..k)
            .min_by(|&a, &b| {
                squared_distance(p, &centres[a * d..(a + 1) * d])
                    .total_cmp(&squared_distance(p, &centres[b * d..(b + 1) * d]))
            })
            .expect("k >= 1") as u32;
        changed |= best != *label;
        *label = best;
    }
    changed
}

/// Give every empty cluster the point farthest from its centre (taken from a cluster with two
/// or more points), so that exactly k clusters come back.
fn fill_empty_clusters(points: &[f64], d: usize, k: usize, centres: &[f64], labels: &mut [u32]) {
    let mut sizes = vec![0usize; k];
    for &l in labels.iter() {
        sizes[l as usize] += 1;
    }
    for c in 0..k {
        if sizes[c] > 0 {
            continue;
        }
        let far = (0..labels.len())
            .filter(|&i| sizes[labels[i] as usize] > 1)
            .max_by(|&i, &j| {
                let di = squared_distance(
                    &points[i * d..(i + 1) * d],
                    &centres[labels[i] as usize * d..][..d],
                );
                let dj = squared_distance(
                    &points[j * d..(j + 1) * d],
                    &centres[labels[j] as usize * d..][..d],
                );
                di.total_cmp(&dj)
            })
            .expect("k <= n leaves a cluster with two points");
        sizes[labels[far] as usize] -= 1;
        labels[far] = c as u32;
        sizes[c] = 1;
    }
}

fn update_centres(points: &[f64], d: usize, k: usize, labels: &[u32], centres: &mut [f64]) {
    let mut sums = vec![0.0; k * d];
    let mut counts = vec![0usize; k];
    for (i, &l) in labels.iter().enumerate() {
        counts[l as usize] += 1;
        for j in 0..d {
            sums[l as usize * d + j] += points[i * d + j];
        }
    }
    for c in 0..k {
        if counts[c] > 0 {
            for j in 0..d {
                centres[c * d + j] = sums[c * d + j] / counts[c] as f64;
            }
        }
    }
}

/// k-means baseline: standardised features and, when given, standardised coordinates (each
/// coordinate weighted like `coordinate_weight` features).
pub(crate) fn kmeans_partition(
    problem: &Problem,
    coordinates: Option<&[[f64; 2]]>,
    coordinate_weight: f64,
    rng: &mut StreamRng,
) -> Result<Vec<u32>, BaselineError> {
    check_region_count("k-means", problem)?;
    let p = problem.feature_count();
    let extra = if coordinates.is_some() { 2 } else { 0 };
    let d = p + extra;
    let n = problem.area_count();
    let mut points = vec![0.0; n * d];
    for a in 0..n {
        points[a * d..a * d + p].copy_from_slice(problem.features_of(a));
    }
    if let Some(xy) = coordinates {
        for axis in 0..2 {
            let values: Vec<f64> = xy.iter().map(|c| c[axis]).collect();
            for (a, z) in standard_scores(&values).into_iter().enumerate() {
                points[a * d + p + axis] = z * coordinate_weight.sqrt();
            }
        }
    }
    Ok(kmeans(&points, d, problem.regions, 3, rng))
}

fn standard_scores(values: &[f64]) -> Vec<f64> {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    values
        .iter()
        .map(|v| if sd > 0.0 { (v - mean) / sd } else { 0.0 })
        .collect()
}

fn check_region_count(what: &'static str, problem: &Problem) -> Result<(), BaselineError> {
    let (regions, areas) = (problem.regions, problem.area_count());
    if regions == 0 || regions > areas {
        return Err(BaselineError::RegionCount {
            what,
            regions,
            areas,
        });
    }
    Ok(())
}

/// Spectral clustering (Ng, Jordan & Weiss 2001): edge weights exp(-|x_a - x_b|^2 / (2 s^2))
/// with s^2 the median squared feature distance over edges, the k eigenvectors of the smallest
/// eigenvalues of the normalised Laplacian I - D^-1/2 W D^-1/2, rows normalised, then k-means.
/// The Laplacian is formed densely (n <= [`MAX_SPECTRAL_AREAS`]): a fifth of the spectrum is
/// wanted (106 of 506 vectors), where a sparse Lanczos method would need full
/// reorthogonalisation and gain little at this size.
pub(crate) fn spectral_partition(
    problem: &Problem,
    rng: &mut StreamRng,
) -> Result<Vec<u32>, BaselineError> {
    check_region_count("spectral clustering", problem)?;
    let n = problem.area_count();
    if n > MAX_SPECTRAL_AREAS {
        return Err(BaselineError::TooManyAreasForSpectral { areas: n });
    }
    let graph = &problem.graph;
    let distance =
        |a: usize, b: usize| squared_distance(problem.features_of(a), problem.features_of(b));
    let mut edge_distances: Vec<f64> = (0..n)
        .flat_map(|a| {
            graph
                .neighbours(a)
                .iter()
                .filter(move |&&b| b as usize > a)
                .map(move |&b| (a, b as usize))
        })
        .map(|(a, b)| distance(a, b))
        .collect();
    edge_distances.sort_by(f64::total_cmp);
    let median = edge_distances
        .get(edge_distances.len() / 2)
        .copied()
        .unwrap_or(1.0);
    let bandwidth = if median > 0.0 { median } else { 1.0 };
    let weight = |a: usize, b: usize| (-distance(a, b) / (2.0 * bandwidth)).exp();
    let degree: Vec<f64> = (0..n)
        .map(|a| {
            graph
                .neighbours(a)
                .iter()
                .map(|&b| weight(a, b as usize))
                .sum::<f64>()
                .max(f64::MIN_POSITIVE)
        })
        .collect();
    let mut laplacian = Mat::<f64>::identity(n, n);
    for a in 0..n {
        for &b in graph.neighbours(a) {
            let b = b as usize;
            laplacian[(a, b)] = -weight(a, b) / (degree[a] * degree[b]).sqrt();
        }
    }
    let eigen = laplacian
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| BaselineError::Eigen)?;
    let k = problem.regions;
    let vectors = eigen.U();
    let mut embedding = vec![0.0; n * k];
    for a in 0..n {
        let row = &mut embedding[a * k..(a + 1) * k];
        for (j, value) in row.iter_mut().enumerate() {
            *value = vectors[(a, j)];
        }
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 0.0 {
            row.iter_mut().for_each(|v| *v /= norm);
        }
    }
    Ok(kmeans(&embedding, k, k, 3, rng))
}
