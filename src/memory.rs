//! How the process keeps the memory it frees.
//!
//! INLA allocates and frees an M x M matrix or three at every evaluation of the hyperparameters'
//! posterior (8 MB each at M = 1,024 observed cells: the observation-space matrix, its factor,
//! its inverse). glibc's defaults give blocks that large back to the system when they are freed
//! (its mmap threshold, then the heap's trim), so every new one is faulted in and zeroed page by
//! page by the kernel: under perf, a fifth of an INLA job on the Japanese pines was page faults.
//! [`keep_freed_memory`] raises both thresholds so freed blocks stay in the process for the next
//! allocation; the process then holds on to its peak memory until it exits, which a study run
//! does anyway. Measured with `GLIBC_TUNABLES` before this was written (the same settings; one
//! job, one thread, the Japanese pines, `kind = "inla"`): 26.7 -> 20.2 CPU s and 29.4 -> 21.6
//! CPU s in two pairs of runs. The results do not change: only where memory comes from.

/// Blocks up to this size come from the heap, not from their own mapping.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 256 << 20;
/// Free memory at the top of a heap is returned to the system only beyond this.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 1 << 30;

/// Keep freed memory for reuse (glibc on Linux; elsewhere the allocator's defaults stand).
/// Called once, first thing, by the binary ([`crate::cli::main`]).
pub(crate) fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread
    // exists, and a refused setting (a return of 0) leaves glibc's default, which is safe.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}
