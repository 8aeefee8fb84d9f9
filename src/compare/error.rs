//! Why two folders could not be compared: `fieldmc compare` exits 2 on these.

use thiserror::Error;

use crate::sink::SinkError;

/// Why two folders could not be compared (exit code 2).
#[derive(Debug, Error)]
pub(crate) enum CompareError {
    #[error("{0}")]
    BadInput(String),
    #[error(transparent)]
    Sink(#[from] SinkError),
}
