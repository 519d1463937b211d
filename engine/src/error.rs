//! Engine errors: broken storage, corrupt bytes, a request that cannot be
//! interpreted, unusable model files, or a bug. Domain refusals are never
//! errors; they are results with `Effect::Rejected` and a reason.

use std::io;

/// What can go wrong below the domain.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("storage I/O failed: {0}")]
    Io(#[from] io::Error),
    #[error("store is corrupt: {0}")]
    Corrupt(String),
    /// A request the engine cannot even interpret.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The embedding model's files are missing, unreadable or malformed.
    #[error("embedding model: {0}")]
    Model(String),
    /// A bug: something the engine made itself does not hold together.
    #[error("engine bug: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
