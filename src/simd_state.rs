//! Clearing the upper halves of the vector registers before scalar floating-point loops.
//!
//! faer's matrix products run hand-written AVX-512 kernels (the `private-gemm-x86` crate) that
//! return with the upper halves of the vector registers dirty. Code compiled for the x86-64
//! baseline uses legacy-SSE encodings, and on current Intel cores every such instruction then
//! pays a false dependency on the full register: measured on this project's 2-core machine, the
//! Poisson log-likelihood of 1,024 cells (one `exp` each) took 7 us before the first matrix
//! product and 170 us after it. `vzeroupper` restores the clean state; the hot scalar loops (the
//! likelihoods) call [`clear_upper_state`] on entry, the joint chains' own products
//! (`model::prior::differentiable`, `model::hyper::spectral_joint`) on exit, and the driver after
//! every step, before it records the state (without it, the Poisson functional's `exp` per cell
//! made a 32 x 32 `mala` study spend 61 % of its time there, and run 4-5 times slower than the
//! same chain in `fieldmc bench lgcp`, which records no functional). It changes no number, only time.

/// Zero the upper halves of the AVX registers when the CPU has AVX (a no-op elsewhere).
#[inline]
pub(crate) fn clear_upper_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked just above), all `vzeroupper` needs.
            unsafe { zero_upper() }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn zero_upper() {
    std::arch::x86_64::_mm256_zeroupper();
}
