//! The background flusher of a part log: a thread, owned by the log's writer, that flushes the
//! log to disk (fdatasync) through its own file handle, outside the writer's lock, soon after
//! each append, so that a record reaches the disk within [`SYNC_INTERVAL`] of being appended
//! even when no other append follows it.
//!
//! The writer tells it, after each complete record, how far the log's complete records reach
//! ([`Flusher::appended`]). The flusher waits [`GATHER`] after the oldest record not yet on disk,
//! so that the records that follow it closely share its flush, then flushes and notes how far
//! the disk now holds the log. A record appended at time t is therefore on disk by t + `GATHER`
//! plus at most two flushes (one already under way when it came, and its own): within
//! [`SYNC_INTERVAL`] whenever the disk completes a flush within a third of a second. A failed
//! flush is kept for the writer, which reports it at its next append or at its close and stops
//! appending; the flusher then flushes no more. Stopping (the writer's close, or its drop when a
//! run ends by an error) flushes what is appended and joins the thread.

use std::fs::File;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a finished job's record stays only in the page cache (see the module docs for
/// the condition on the disk's flush time).
pub const SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// How long the flusher waits after the oldest record not yet on disk before it flushes: at most
/// four flushes a second however many small jobs finish.
pub(crate) const GATHER: Duration = Duration::from_millis(250);

/// Owns the flusher thread of one log; stops and joins it when dropped.
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    /// The end of the log's last complete record.
    appended: u64,
    /// How far the log is known to be on disk.
    synced: u64,
    /// When the oldest record not yet being flushed was appended.
    oldest_unsynced: Option<Instant>,
    stop: bool,
    /// A failed flush, until the writer takes it.
    error: Option<io::Error>,
    /// Whether a flush failed (the flusher flushes no more).
    failed: bool,
}

impl Flusher {
    /// Starts the thread that flushes `file`, whose first `synced` bytes are on disk already.
    pub(crate) fn start(file: File, synced: u64) -> io::Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                appended: synced,
                synced,
                oldest_unsynced: None,
                stop: false,
                error: None,
                failed: false,
            }),
            wake: Condvar::new(),
        });
        let thread = std::thread::Builder::new()
            .name("fieldmc-log-flush".to_string())
            .spawn({
                let shared = Arc::clone(&shared);
                move || shared.run(&file)
            })?;
        Ok(Flusher {
            shared,
            thread: Some(thread),
        })
    }

    /// The log's complete records now reach `len` bytes: flush them soon.
    pub(crate) fn appended(&self, len: u64) {
        let mut state = self.shared.lock();
        state.appended = state.appended.max(len);
        if state.oldest_unsynced.is_none() {
            state.oldest_unsynced = Some(Instant::now());
            self.shared.wake.notify_one();
        }
    }

    /// The log's first `len` bytes were flushed by the writer itself (at its close).
    pub(crate) fn flushed(&self, len: u64) {
        let mut state = self.shared.lock();
        state.synced = state.synced.max(len);
    }

    /// The error of a failed flush, once.
    pub(crate) fn take_error(&self) -> Option<io::Error> {
        self.shared.lock().error.take()
    }

    /// How far the log is known to be on disk.
    #[cfg(test)]
    pub(crate) fn synced(&self) -> u64 {
        self.shared.lock().synced
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The thread: flush `GATHER` after the oldest unflushed record (at once when stopping),
    /// until stopped.
    fn run(&self, file: &File) {
        let mut state = self.lock();
        loop {
            if !state.failed && state.appended > state.synced {
                let due = state.oldest_unsynced.unwrap_or_else(Instant::now) + GATHER;
                let now = Instant::now();
                if !state.stop && now < due {
                    state = self
                        .wake
                        .wait_timeout(state, due - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    continue;
                }
                let target = state.appended;
                state.oldest_unsynced = None;
                drop(state);
                let result = file.sync_data();
                state = self.lock();
                match result {
                    Ok(()) => state.synced = state.synced.max(target),
                    Err(error) => {
                        state.error = Some(error);
                        state.failed = true;
                    }
                }
                continue;
            }
            if state.stop {
                return;
            }
            state = self
                .wake
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}
