//! Engine errors: broken storage, corrupt bytes, a request that cannot be
//! interpreted, unusable model files, or a bug. Domain refusals are never
//! errors; they are results with `Effect::Rejected` and a reason.

use std::io;

/// What can go wrong below the domain.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("storage I/O failed: {}", describe_io(.0))]
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

/// An I/O failure in words a user acts on: a full disk and a read-only
/// store say so first.
pub fn describe_io(e: &io::Error) -> String {
    use io::ErrorKind::*;
    match e.kind() {
        StorageFull | QuotaExceeded | FileTooLarge => format!(
            "disk full: there is no space left for the store's files, so this write was not made ({e})"
        ),
        ReadOnlyFilesystem => format!(
            "the store is on a read-only file system: reading works, writing does not ({e})"
        ),
        _ => e.to_string(),
    }
}
