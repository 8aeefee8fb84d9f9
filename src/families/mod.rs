//! Model families beyond latent Gaussian fields, one folder each.

pub mod partition;
