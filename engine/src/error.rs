//! Engine errors: broken storage or corrupt bytes. Domain refusals are never
//! errors; they are results with `Effect::Rejected` and a reason.

use std::io;

/// What can go wrong below the domain: the files, not the request.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("storage I/O failed: {0}")]
    Io(#[from] io::Error),
    #[error("store is corrupt: {0}")]
    Corrupt(String),
    #[error("invalid request: {0}")]
    Invalid(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
