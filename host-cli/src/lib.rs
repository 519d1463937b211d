//! The `hmg` native host: wasmtime running the HMG engine component.
//!
//! - [`runtime`] — [`Runtime`] (compiled component, cached) and [`Session`]
//!   (one open store; every call under the store's lock file). Reused by
//!   `hmg-mcp` and the end-to-end tests.
//! - [`api`] — serde/JSON-Schema request and result types, snake_case JSON.
//! - [`locate`] — scope inference (git, login name) and default paths.
//! - [`render`] — human-readable text for every result.
//! - `component` — the only file that sees the generated WIT bindings.

pub mod api;
mod component;
pub mod locate;
mod preload;
pub mod render;
pub mod runtime;

pub use runtime::{Runtime, Session, default_cache_dir};
