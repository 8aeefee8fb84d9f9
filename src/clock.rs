//! Clocks for measuring a job: wall time, and the CPU time of the calling thread. A job runs on
//! one thread, so its thread CPU time is what it cost, whatever else the machine was doing
//! (effective samples per CPU second are compared with peers pinned to one core).

use std::time::Instant;

/// CPU seconds the calling thread has used so far.
pub fn thread_cpu_seconds() -> f64 {
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
pub struct Stopwatch {
    wall: Instant,
    cpu: f64,
}

impl Stopwatch {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu_seconds(),
        }
    }

    pub fn wall_seconds(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// CPU seconds of this thread since the start (call from the thread that started it).
    pub fn cpu_seconds(&self) -> f64 {
        thread_cpu_seconds() - self.cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_advances_with_work_and_not_with_sleep() {
        let watch = Stopwatch::start();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = watch.cpu_seconds();
        let mut x = 0u64;
        for k in 0..20_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(k);
        }
        std::hint::black_box(x);
        let worked = watch.cpu_seconds() - slept;
        assert!(slept >= 0.0 && worked > 0.0);
        assert!(watch.wall_seconds() >= 0.03);
    }
}
