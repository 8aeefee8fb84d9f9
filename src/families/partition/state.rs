//! A partition of the areas into labelled regions, with what a flip needs kept up to date.
//!
//! A *boundary pair* (a, t) is an area a and a region t != region(a) that holds a neighbour of
//! a: flipping a into t is a candidate move. The partition keeps, per source region, the list of
//! its boundary pairs (so both "a uniform pair" and "a uniform pair of region r" are O(1) after
//! choosing the list), and per area the count of its neighbours in each region. A flip updates
//! these in O(degree^2) and never looks at areas that are not neighbours of the flipped one.
//! Whether a flip keeps the source region connected is a breadth-first search inside that
//! region only (the target region gains an area adjacent to it and stays connected).

use std::collections::HashMap;

use super::graph::Adjacency;

/// A labelled partition with its boundary bookkeeping.
#[derive(Debug, Clone)]
pub struct Partition {
    region_of: Vec<u32>,
    members: Vec<Vec<u32>>,
    /// Position of area a in `members[region_of[a]]`.
    member_slot: Vec<u32>,
    /// Per area: (region, neighbours of the area in that region), only counts > 0.
    neighbour_counts: Vec<Vec<(u32, u32)>>,
    /// Per source region: its boundary pairs (area, target region).
    pairs: Vec<Vec<(u32, u32)>>,
    /// Position of each boundary pair in its source region's list.
    pair_slot: HashMap<(u32, u32), u32>,
    /// Scratch for the connectivity search: `visit_mark[a] == visit_epoch` means visited.
    visit_mark: Vec<u32>,
    visit_epoch: u32,
    stack: Vec<u32>,
}

/// Why a flip would not give a valid partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidFlip {
    /// The area is the last one of its region.
    EmptiesRegion,
    /// Removing the area splits its region.
    DisconnectsRegion,
}

impl Partition {
    /// The partition with `labels` (regions `0..regions`, each non-empty).
    ///
    /// Panics when a region is empty or a label is out of range: callers build labels from a
    /// validated start (see [`super::baselines`]).
    pub fn new(graph: &Adjacency, labels: &[u32], regions: usize) -> Self {
        assert_eq!(labels.len(), graph.len(), "one label per area");
        let mut members = vec![Vec::new(); regions];
        let mut member_slot = vec![0u32; labels.len()];
        for (a, &r) in labels.iter().enumerate() {
            member_slot[a] = members[r as usize].len() as u32;
            members[r as usize].push(a as u32);
        }
        assert!(members.iter().all(|m| !m.is_empty()), "a region is empty");
        let mut partition = Self {
            region_of: labels.to_vec(),
            members,
            member_slot,
            neighbour_counts: vec![Vec::new(); labels.len()],
            pairs: vec![Vec::new(); regions],
            pair_slot: HashMap::new(),
            visit_mark: vec![0; labels.len()],
            visit_epoch: 0,
            stack: Vec::new(),
        };
        for a in 0..labels.len() {
            let counts = &mut partition.neighbour_counts[a];
            for &b in graph.neighbours(a) {
                let r = labels[b as usize];
                match counts.iter_mut().find(|(q, _)| *q == r) {
                    Some(entry) => entry.1 += 1,
                    None => counts.push((r, 1)),
                }
            }
            for (r, _) in partition.neighbour_counts[a].clone() {
                if r != labels[a] {
                    partition.insert_pair(a as u32, r);
                }
            }
        }
        partition
    }

    pub(crate) fn labels(&self) -> &[u32] {
        &self.region_of
    }

    pub(crate) fn region_of(&self, a: usize) -> u32 {
        self.region_of[a]
    }

    pub(crate) fn region_count(&self) -> usize {
        self.members.len()
    }

    pub fn members(&self, r: usize) -> &[u32] {
        &self.members[r]
    }

    pub fn size(&self, r: usize) -> usize {
        self.members[r].len()
    }

    /// Boundary pairs whose area lies in region r.
    pub fn pairs_of(&self, r: usize) -> &[(u32, u32)] {
        &self.pairs[r]
    }

    /// All boundary pairs |B(Z)|.
    pub(crate) fn pair_count(&self) -> usize {
        self.pairs.iter().map(Vec::len).sum()
    }

    /// The k-th boundary pair over all regions (regions in order, then list order).
    pub(crate) fn pair_at(&self, mut k: usize) -> (u32, u32) {
        for list in &self.pairs {
            if k < list.len() {
                return list[k];
            }
            k -= list.len();
        }
        panic!("pair index out of range")
    }

    /// Whether flipping area `a` out of its region leaves that region non-empty and connected.
    pub(crate) fn check_flip(&mut self, graph: &Adjacency, a: usize) -> Result<(), InvalidFlip> {
        let s = self.region_of[a];
        if self.members[s as usize].len() == 1 {
            return Err(InvalidFlip::EmptiesRegion);
        }
        if self.source_stays_connected(graph, a, s) {
            Ok(())
        } else {
            Err(InvalidFlip::DisconnectsRegion)
        }
    }

    /// Region s without a is connected iff all of a's neighbours in s are in one component of
    /// s \ {a} (every path in s from a vertex to a first meets a neighbour of a). Searches from
    /// one such neighbour and stops as soon as all are found: at most O(|s| * degree).
    fn source_stays_connected(&mut self, graph: &Adjacency, a: usize, s: u32) -> bool {
        let inside: Vec<u32> = graph
            .neighbours(a)
            .iter()
            .copied()
            .filter(|&b| self.region_of[b as usize] == s)
            .collect();
        if inside.len() <= 1 {
            return true;
        }
        self.visit_epoch = self.visit_epoch.wrapping_add(1);
        if self.visit_epoch == 0 {
            self.visit_mark.fill(0);
            self.visit_epoch = 1;
        }
        let epoch = self.visit_epoch;
        self.visit_mark[a] = epoch;
        self.visit_mark[inside[0] as usize] = epoch;
        let mut missing = inside.len() - 1;
        self.stack.clear();
        self.stack.push(inside[0]);
        while let Some(v) = self.stack.pop() {
            for &w in graph.neighbours(v as usize) {
                let wi = w as usize;
                if self.visit_mark[wi] == epoch || self.region_of[wi] != s {
                    continue;
                }
                self.visit_mark[wi] = epoch;
                if inside.contains(&w) {
                    missing -= 1;
                    if missing == 0 {
                        return true;
                    }
                }
                self.stack.push(w);
            }
        }
        false
    }

    /// Move area `a` into region `t`, updating members and boundary pairs. The caller has
    /// checked the move with [`Self::check_flip`]; `t` must differ from a's region.
    pub(crate) fn flip(&mut self, graph: &Adjacency, a: usize, t: u32) {
        let s = self.region_of[a];
        debug_assert_ne!(s, t);
        self.move_member(a, s, t);
        let own: Vec<(u32, u32)> = self.neighbour_counts[a].clone();
        for &(r, _) in &own {
            if r != s {
                self.remove_pair(a as u32, r);
            }
        }
        self.region_of[a] = t;
        for &(r, _) in &own {
            if r != t {
                self.insert_pair(a as u32, r);
            }
        }
        for &b in graph.neighbours(a) {
            self.bump_count(b, s, -1);
            self.bump_count(b, t, 1);
        }
    }

    fn move_member(&mut self, a: usize, s: u32, t: u32) {
        let slot = self.member_slot[a] as usize;
        let list = &mut self.members[s as usize];
        list.swap_remove(slot);
        if let Some(&moved) = list.get(slot) {
            self.member_slot[moved as usize] = slot as u32;
        }
        self.member_slot[a] = self.members[t as usize].len() as u32;
        self.members[t as usize].push(a as u32);
    }

    /// Change by `delta` the count of b's neighbours in region r, and keep the pair (b, r) in
    /// the boundary lists exactly when the count is positive and r is not b's region.
    fn bump_count(&mut self, b: u32, r: u32, delta: i32) {
        let counts = &mut self.neighbour_counts[b as usize];
        let own = self.region_of[b as usize];
        match counts.iter().position(|&(q, _)| q == r) {
            Some(i) => {
                let c = (counts[i].1 as i32 + delta) as u32;
                if c == 0 {
                    counts.swap_remove(i);
                    if r != own {
                        self.remove_pair(b, r);
                    }
                } else {
                    counts[i].1 = c;
                }
            }
            None => {
                debug_assert_eq!(delta, 1);
                counts.push((r, 1));
                if r != own {
                    self.insert_pair(b, r);
                }
            }
        }
    }

    fn insert_pair(&mut self, a: u32, t: u32) {
        let s = self.region_of[a as usize] as usize;
        self.pair_slot.insert((a, t), self.pairs[s].len() as u32);
        self.pairs[s].push((a, t));
    }

    fn remove_pair(&mut self, a: u32, t: u32) {
        let s = self.region_of[a as usize] as usize;
        let slot = self
            .pair_slot
            .remove(&(a, t))
            .expect("a boundary pair being removed is listed") as usize;
        let list = &mut self.pairs[s];
        list.swap_remove(slot);
        if let Some(&moved) = list.get(slot) {
            self.pair_slot.insert(moved, slot as u32);
        }
    }
}
