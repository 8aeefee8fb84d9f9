//! The adjacency graph of the areas (compressed rows: neighbours of area a are
//! `neighbours[offsets[a]..offsets[a + 1]]`, sorted, each undirected pair stored both ways) and
//! the connectivity questions a partition asks of it.

/// An undirected simple graph on areas `0..len()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Adjacency {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Adjacency {
    /// The graph with the given undirected edges (either orientation; duplicates kept once).
    pub(crate) fn from_edges(n: usize, edges: &[(u32, u32)]) -> Self {
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(a, b) in edges {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::with_capacity(2 * edges.len());
        offsets.push(0);
        for mut list in lists {
            list.sort_unstable();
            list.dedup();
            neighbours.extend(list);
            offsets.push(neighbours.len() as u32);
        }
        Self {
            offsets,
            neighbours,
        }
    }

    /// A `rows` x `cols` lattice with rook (4-neighbour) adjacency; area `r * cols + c`.
    pub fn lattice(rows: usize, cols: usize) -> Self {
        let mut edges = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                let a = (r * cols + c) as u32;
                if c + 1 < cols {
                    edges.push((a, a + 1));
                }
                if r + 1 < rows {
                    edges.push((a, a + cols as u32));
                }
            }
        }
        Self::from_edges(rows * cols, &edges)
    }

    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(crate) fn neighbours(&self, a: usize) -> &[u32] {
        &self.neighbours[self.offsets[a] as usize..self.offsets[a + 1] as usize]
    }

    /// Undirected edges.
    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// The connected components of the areas with `keep(a)` true, each sorted.
    pub fn components_where(&self, keep: impl Fn(usize) -> bool) -> Vec<Vec<u32>> {
        self.components(keep, |_, _| true)
    }

    /// Whether every region of `labels` (regions `0..regions`) is non-empty and connected.
    pub fn is_connected_partition(&self, labels: &[u32], regions: usize) -> bool {
        let mut pieces = vec![0usize; regions];
        let components = self.components_by_label(labels);
        for component in &components {
            pieces[labels[component[0] as usize] as usize] += 1;
        }
        pieces.iter().all(|&p| p == 1)
    }

    /// Components of the subgraph that keeps only edges inside one label.
    pub(crate) fn components_by_label(&self, labels: &[u32]) -> Vec<Vec<u32>> {
        self.components(|_| true, |a, b| labels[a] == labels[b])
    }

    /// The components of the subgraph of the areas with `keep(a)` true and the edges a-b with
    /// `joined(a, b)` true (an equivalence), each sorted, in the order of their smallest area.
    fn components(
        &self,
        keep: impl Fn(usize) -> bool,
        joined: impl Fn(usize, usize) -> bool,
    ) -> Vec<Vec<u32>> {
        let mut seen = vec![false; self.len()];
        let mut components = Vec::new();
        for start in 0..self.len() {
            if seen[start] || !keep(start) {
                continue;
            }
            seen[start] = true;
            let mut component = vec![start as u32];
            let mut next = 0;
            while next < component.len() {
                let a = component[next] as usize;
                next += 1;
                for &b in self.neighbours(a) {
                    let b_area = b as usize;
                    if !seen[b_area] && keep(b_area) && joined(a, b_area) {
                        seen[b_area] = true;
                        component.push(b);
                    }
                }
            }
            component.sort_unstable();
            components.push(component);
        }
        components
    }
}

/// Split each labelled group into its connected pieces: the regions of the result are the
/// pieces, numbered in order of their smallest area. Labels are any comparable values.
pub(crate) fn split_into_connected_pieces<L: PartialEq>(
    graph: &Adjacency,
    labels: &[L],
) -> Vec<u32> {
    let mut region = vec![u32::MAX; graph.len()];
    let mut next_region = 0u32;
    for start in 0..graph.len() {
        if region[start] != u32::MAX {
            continue;
        }
        region[start] = next_region;
        let mut stack = vec![start];
        while let Some(a) = stack.pop() {
            for &b in graph.neighbours(a) {
                let b = b as usize;
                if region[b] == u32::MAX && labels[b] == labels[a] {
                    region[b] = next_region;
                    stack.push(b);
                }
            }
        }
        next_region += 1;
    }
    region
}

/// The number of distinct regions in `labels` (labels are 0..k).
pub fn region_count(labels: &[u32]) -> usize {
    labels.iter().map(|&l| l as usize + 1).max().unwrap_or(0)
}
