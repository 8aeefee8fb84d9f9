//! Benchmarks of fieldmc's samplers, as a library the `fieldmc bench` command calls: against a
//! peer on the same model in the same invocation ([`lgcp`]), the cost of one step against the
//! grid size ([`steps`]), and the grid's error against exact kriging at scattered sites
//! ([`kriging`]). Timing is CPU time of the calling thread ([`crate::clock`]); results are ratios
//! to what ran beside them, never absolute targets.

pub(crate) mod kriging;
pub(crate) mod lgcp;
#[cfg(test)]
mod lgcp_experiments;
pub(crate) mod steps;
