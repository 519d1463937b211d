//! The `hmg` native host: wasmtime running the HMG engine component.
//!
//! - [`runtime`] — [`Runtime`] (compiled component, cached) and
//!   [`open_session`], the one way `hmg` and `hmg-mcp` open a store.
//!   Reused by `hmg-mcp` and the end-to-end tests.
//! - [`api`] — request and result types generated from `wit/hmg.wit`
//!   (serde, snake_case JSON, JSON Schema).
//! - [`locate`] — scope inference (git, login name) and default paths.
//! - [`render`] — human-readable text for every result.
//! - `engine` — wasmtime configuration, granted directories, compiled-code
//!   cache ([`engine_and_linker`] and [`Ctx`] re-exported for tools that run
//!   other components the same way).
//! - `component` — the only file that sees the generated WIT bindings:
//!   [`Session`] and the store's methods on it.
//! - `lock` — the store's lock file, held around every call.
//! - `preload` — the engine pre-initialised with the model loaded.

pub mod api;
mod component;
mod engine;
pub mod locate;
mod lock;
mod preload;
pub mod render;
pub mod runtime;

pub use component::{Embedder, Embeddings, Session};
pub use engine::{Ctx, default_cache_dir, engine_and_linker};
pub use runtime::{Runtime, SessionOptions, open_session, second_core};
