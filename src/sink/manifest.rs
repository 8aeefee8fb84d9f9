//! The run manifest: which tool, revision, seed and thread count produced a results folder,
//! when, on which hosts (one entry per run or shard), from which data (content hashes), and how
//! long each job took. Timestamps are UTC ISO-8601, computed without a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::log::DataFile;
use crate::table::JobStatus;

/// The git revision fieldmc was built from (`build.rs`), `"unknown"` outside a git checkout.
pub const GIT_REVISION: &str = match option_env!("FIELDMC_GIT_REVISION") {
    Some(revision) => revision,
    None => "unknown",
};

/// Everything `manifest.json` records about one run of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `"fieldmc"`.
    pub tool: String,
    /// The crate version that ran the study.
    pub version: String,
    /// Short git revision, with `-dirty` for uncommitted changes, or `"unknown"`.
    pub git_revision: String,
    /// The study's name.
    pub study: String,
    /// The study's master seed.
    pub seed: u64,
    /// Worker threads used.
    pub threads: usize,
    /// When the run started (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub started: String,
    /// When the run finished; `None` while it runs.
    pub finished: Option<String>,
    /// Every run (a whole study, or one shard of it) whose results the tables hold.
    #[serde(default)]
    pub runs: Vec<RunSummary>,
    /// The data files the jobs read, with the BLAKE3 hash of their content.
    #[serde(default)]
    pub data: Vec<DataFile>,
    /// One entry per job, in plan order.
    pub jobs: Vec<JobTiming>,
}

/// Provenance of one run (a whole study or a shard): where, when, with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run's name (its part log is `parts/<run>.log`).
    pub run: String,
    /// `I/K` for a shard.
    pub shard: Option<String>,
    pub host: String,
    pub pid: u32,
    pub threads: usize,
    pub version: String,
    pub git_revision: String,
    pub started: String,
    /// `None` when the run did not end normally (killed); its finished jobs still count.
    pub finished: Option<String>,
    /// Jobs of the tables that this run computed.
    pub jobs: usize,
    /// The data files as the run found them when it started.
    pub data: Vec<DataFile>,
}

/// How one job ended and how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobTiming {
    pub job_id: String,
    pub status: JobStatus,
    pub wall_seconds: f64,
    /// True when the job's results were taken from an earlier run rather than computed now.
    #[serde(default)]
    pub resumed: bool,
    /// The run that computed it (see [`Manifest::runs`]).
    #[serde(default)]
    pub run: String,
}

impl Manifest {
    /// A manifest for a run starting now, with this build's version and revision.
    pub fn begin(study: &str, seed: u64, threads: usize) -> Self {
        Manifest {
            tool: "fieldmc".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: GIT_REVISION.to_string(),
            study: study.to_string(),
            seed,
            threads,
            started: utc_timestamp(SystemTime::now()),
            finished: None,
            runs: Vec::new(),
            data: Vec::new(),
            jobs: Vec::new(),
        }
    }

    /// Records one job's outcome.
    pub fn record_job(&mut self, timing: JobTiming) {
        self.jobs.push(timing);
    }

    /// Stamps the finish time.
    pub fn finish(&mut self) {
        self.finished = Some(utc_timestamp(SystemTime::now()));
    }
}

/// `time` as UTC ISO-8601 with second precision, e.g. `2024-02-29T13:05:09Z`.
pub fn utc_timestamp(time: SystemTime) -> String {
    let seconds = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs_f64().ceil() as i64),
    };
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01
/// (H. Hinnant's `civil_from_days`: eras of 400 years starting on March 1st).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097); // [0, 146096]
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let shifted_month = (5 * day_of_year + 2) / 153; // [0, 11], March = 0
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: u64) -> String {
        utc_timestamp(UNIX_EPOCH + Duration::from_secs(seconds))
    }

    fn is_leap(year: i64) -> bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    fn days_in_month(year: i64, month: u32) -> u32 {
        match month {
            2 if is_leap(year) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_709_218_799), "2024-02-29T14:59:59Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(
            utc_timestamp(UNIX_EPOCH - Duration::from_secs(1)),
            "1969-12-31T23:59:59Z"
        );
    }

    #[test]
    fn consecutive_days_walk_the_calendar() {
        // Walk day by day from 1900-03-01 to 2400-03-01, checking each step against the
        // calendar rules: this covers both 400-year era boundaries around the epoch.
        let start = -25_508; // 1900-03-01
        let (mut year, mut month, mut day) = civil_from_days(start);
        assert_eq!((year, month, day), (1900, 3, 1));
        for days in start + 1..=157_114 {
            if day < days_in_month(year, month) {
                day += 1;
            } else if month < 12 {
                (month, day) = (month + 1, 1);
            } else {
                (year, month, day) = (year + 1, 1, 1);
            }
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
        }
        assert_eq!((year, month, day), (2400, 3, 1));
    }

    #[test]
    fn manifest_round_trips_through_json() {
        let mut manifest = Manifest::begin("acceptance", 2020, 4);
        manifest.record_job(JobTiming {
            job_id: "j1".into(),
            status: JobStatus::Failed,
            wall_seconds: 1.5,
            resumed: false,
            run: "r1".into(),
        });
        manifest.finish();
        let text = serde_json::to_string_pretty(&manifest).unwrap();
        assert!(text.contains("\"status\": \"failed\""), "{text}");
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back, manifest);
        assert_eq!(back.version, env!("CARGO_PKG_VERSION"));
        assert!(!back.git_revision.is_empty());
        let started = &back.started;
        assert!(
            started.len() == 20 && started.ends_with('Z') && started.as_bytes()[10] == b'T',
            "{started}"
        );
        assert!(back.finished.as_deref().unwrap() >= started.as_str());
    }
}
