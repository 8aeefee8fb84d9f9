//! Shards: a stable split of a study's jobs over K processes (`fieldmc run --shard I/K`).
//!
//! A job belongs to shard `BLAKE3(job id) mod K` (the first 8 bytes, little-endian). The id
//! derives from the job's canonical key, so a job's shard depends only on what the job is and on
//! K — not on its place in the plan, on the other jobs, or on which shards have run. Shards
//! are numbered from 0, as Slurm numbers array tasks.

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl Shard {
    /// Whether the job with id `job_id` belongs to this shard.
    pub(crate) fn contains(&self, job_id: &str) -> bool {
        shard_of(job_id, self.count) == self.index
    }
}

/// The shard (0 ..= count - 1) of the job with id `job_id` when a study is split in `count`.
pub fn shard_of(job_id: &str, count: u32) -> u32 {
    let hash = blake3::hash(job_id.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    (u64::from_le_bytes(bytes) % u64::from(count.max(1))) as u32
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why `I/K` is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard {text:?}: write I/K with K >= 1 shards and 0 <= I < K, e.g. 0/4")]
pub struct ShardError {
    pub(crate) text: String,
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ShardError {
            text: text.to_string(),
        };
        let (index, count) = text.split_once('/').ok_or_else(error)?;
        let index: u32 = index.trim().parse().map_err(|_| error())?;
        let count: u32 = count.trim().parse().map_err(|_| error())?;
        if count == 0 || index >= count {
            return Err(error());
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_accepts_i_of_k_and_refuses_the_rest() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!("0/1".parse(), Ok(Shard { index: 0, count: 1 }));
        for bad in ["3/3", "1/0", "-1/3", "1", "a/b", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 1, count: 4 }.to_string(), "1/4");
    }

    #[test]
    fn every_job_is_in_exactly_one_shard_and_shards_are_balanced() {
        let ids: Vec<String> = (0..3000).map(|i| format!("{i:012x}")).collect();
        let count = 3;
        let mut sizes = [0usize; 3];
        for id in &ids {
            let owners: Vec<u32> = (0..count)
                .filter(|&index| Shard { index, count }.contains(id))
                .collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0] as usize] += 1;
        }
        assert!(sizes.iter().all(|&n| (900..1100).contains(&n)), "{sizes:?}");
    }

    #[test]
    fn the_assignment_is_pinned() {
        // A change here moves jobs between the shards of studies already running on a cluster.
        let shards: Vec<u32> = ["a1b2c3d4e5f6", "000000000000", "ffffffffffff"]
            .iter()
            .map(|id| shard_of(id, 7))
            .collect();
        assert_eq!(shards, [4, 5, 1]);
    }
}
