//! Progress on a terminal: an overall bar over jobs and one line per running job, redrawn at most
//! a few times a second. Silent when stderr is not a terminal (CI, pipes, files), where a single
//! summary line is printed at the end instead.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress of a study run.
pub(crate) struct StudyProgress {
    multi: MultiProgress,
    overall: ProgressBar,
    visible: bool,
}

impl StudyProgress {
    /// `total` jobs to run, `skipped` already finished (resumed).
    pub(crate) fn new(total: u64, skipped: u64, quiet: bool) -> Self {
        let visible = !quiet && std::io::stderr().is_terminal();
        let target = if visible {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(ProgressBar::new(total));
        overall.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} [{bar:30.cyan/blue}] {pos}/{len} jobs  {elapsed_precise} (eta {eta})",
            )
            .expect("a valid progress template")
            .progress_chars("=> "),
        );
        overall.set_prefix("fieldmc");
        if skipped > 0 {
            overall.println(format!("resuming: {skipped} finished jobs kept"));
        }
        Self {
            multi,
            overall,
            visible,
        }
    }

    /// A line for a job that has started; it disappears when dropped.
    pub(crate) fn job(&self, label: &str, iterations: u64) -> JobProgress {
        let bar = if self.visible {
            let bar = self
                .multi
                .insert_before(&self.overall, ProgressBar::new(iterations));
            bar.set_style(
                ProgressStyle::with_template("  {msg:40!} {bar:20} {percent:>3}%")
                    .expect("a valid progress template"),
            );
            bar.set_message(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        } else {
            ProgressBar::hidden()
        };
        JobProgress {
            bar,
            overall: self.overall.clone(),
        }
    }

    /// A message above the bars (or on stderr when hidden).
    pub(crate) fn note(&self, message: &str) {
        if self.visible {
            self.overall.println(message);
        } else {
            eprintln!("{message}");
        }
    }

    pub(crate) fn finish(&self) {
        self.overall.finish_and_clear();
    }
}

/// Progress of one running job.
pub(crate) struct JobProgress {
    bar: ProgressBar,
    overall: ProgressBar,
}

impl JobProgress {
    pub(crate) fn set(&self, iterations_done: u64) {
        self.bar.set_position(iterations_done);
    }
}

impl Drop for JobProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        self.overall.inc(1);
    }
}
