//! Clocks: for measuring a job, wall time and the CPU time of the calling thread (a job runs on
//! one thread, so its thread CPU time is what it cost, whatever else the machine was doing;
//! effective samples per CPU second are compared with peers pinned to one core); and the UTC
//! timestamps the results folder records.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// CPU seconds the calling thread has used so far.
pub(crate) fn thread_cpu_seconds() -> f64 {
    let mut spec = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; CLOCK_THREAD_CPUTIME_ID
    // is supported on every Linux and macOS this builds for.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut spec) };
    if status != 0 {
        return f64::NAN;
    }
    spec.tv_sec as f64 + spec.tv_nsec as f64 * 1e-9
}

/// Wall and thread-CPU time since it started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopwatch {
    wall: Instant,
    cpu: f64,
}

impl Stopwatch {
    pub(crate) fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu_seconds(),
        }
    }

    pub(crate) fn wall_seconds(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// CPU seconds of this thread since the start (call from the thread that started it).
    pub(crate) fn cpu_seconds(&self) -> f64 {
        thread_cpu_seconds() - self.cpu
    }
}

/// `time` as UTC ISO-8601 with second precision, e.g. `2024-02-29T13:05:09Z`.
pub(crate) fn utc_timestamp(time: SystemTime) -> String {
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
    fn utc_timestamps_of_known_instants_are_their_calendar_dates() {
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
    fn thread_cpu_time_advances_with_work_and_not_with_sleep() {
        let watch = Stopwatch::start();
        std::thread::sleep(Duration::from_millis(200));
        let slept = watch.cpu_seconds();
        let mut x = 0u64;
        for k in 0..20_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(k);
        }
        std::hint::black_box(x);
        let worked = watch.cpu_seconds() - slept;
        assert!(watch.wall_seconds() >= 0.2);
        // A sleeping thread uses no CPU: the 200 ms of sleep cost at most the few microseconds
        // of the calls around it (the bound leaves room for a busy machine's scheduler).
        assert!(
            (0.0..0.02).contains(&slept),
            "{slept} CPU seconds while asleep"
        );
        assert!(worked > 0.0, "{worked} CPU seconds of work");
    }
}
