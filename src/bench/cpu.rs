//! CPU time of the calling thread, the clock the benchmarks count (the peer counts its process's
//! CPU time with `time.process_time`; fieldmc's benchmark runs on one thread, so the two agree).
//!
//! Linux gives it in nanoseconds in `/proc/thread-self/schedstat` (first field: time spent on the
//! CPU). Elsewhere the wall clock stands in, and [`CpuClock::is_cpu`] says so.

use std::time::Instant;

/// A stopwatch over the calling thread's CPU time (or the wall clock where that is unavailable).
#[derive(Debug, Clone, Copy)]
pub struct CpuClock {
    start_cpu: Option<f64>,
    start_wall: Instant,
}

impl CpuClock {
    pub fn start() -> Self {
        Self {
            start_cpu: thread_cpu_seconds(),
            start_wall: Instant::now(),
        }
    }

    /// Whether the clock measures CPU time (else wall time).
    pub fn is_cpu(&self) -> bool {
        self.start_cpu.is_some()
    }

    /// CPU seconds (or wall seconds) since [`CpuClock::start`].
    pub fn seconds(&self) -> f64 {
        match (self.start_cpu, thread_cpu_seconds()) {
            (Some(start), Some(now)) => now - start,
            _ => self.wall_seconds(),
        }
    }

    pub fn wall_seconds(&self) -> f64 {
        self.start_wall.elapsed().as_secs_f64()
    }
}

/// CPU seconds of the calling thread so far, where the system reports them.
pub fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanoseconds * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_advances_with_work() {
        let clock = CpuClock::start();
        let mut x = 0.0f64;
        for k in 0..3_000_000 {
            x += (k as f64).sqrt();
        }
        assert!(x > 0.0);
        let seconds = clock.seconds();
        assert!(seconds > 0.0 && seconds < 60.0, "{seconds}");
    }
}
