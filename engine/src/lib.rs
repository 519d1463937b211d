//! HMG engine — a local-first long-term memory for AI agents.
//!
//! The pure core compiles and tests natively; `component` (wasm32 only) is
//! the one file that sees the WIT bindings.
//!
//! ```
//! use engine::{Memory, MemBackend, Config, FixedEnv, Scope, Timestamp};
//! use engine::ops::{MemorizeRequest, RecallRequest};
//!
//! let env = FixedEnv { now: Timestamp(1_785_000_000_000), counter: 0 };
//! let mut memory = Memory::open(MemBackend::new(), Config::default(), Box::new(env)).unwrap();
//! let scope = Scope::new("me", "acme", "shop", "main");
//! let content = "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB".to_owned();
//! memory.memorize(&MemorizeRequest { content, source: None, scope: scope.clone() }).unwrap();
//! let hits = memory.recall(&RecallRequest { query: "資料庫選型".into(), scope, ..Default::default() }).unwrap();
//! assert!(hits.atoms[0].content.contains("PostgreSQL"));
//! ```
//!
//! Map:
//! - [`atom`], [`scope`], [`time`] — plain data and invariants;
//! - [`text`] — admission, redaction, dedup normalisation, epistemic/polarity inference;
//! - [`state`] — the logical store and the transactions that change it;
//! - [`store`] — the durable log and snapshots over a [`Backend`];
//! - [`embed`] — text embeddings (an ONNX model run by tract; a test double);
//! - [`index`] — keyword (BM25, CJK), vectors (exact int8 scan), temporal, dedup;
//! - [`memory`] — an open store; [`ops`] — one file per operation;
//! - `fuzzing` (tests and the `simulation` feature) — the cargo-fuzz harnesses.

pub mod atom;
pub mod capture;
#[cfg(target_arch = "wasm32")]
mod component;
pub mod embed;
pub mod error;
#[cfg(any(test, feature = "simulation"))]
pub mod fuzzing;
pub mod graph;
pub mod index;
pub mod log;
pub mod memory;
pub mod ops;
pub mod scope;
pub mod state;
pub mod text;
pub mod time;

pub use error::{Error, Result};
pub use log::backend::{Backend, FsBackend, MemBackend};
pub use memory::{Config, Env, FixedEnv, Memory, Signals, SystemEnv};
pub use scope::Scope;
pub use time::Timestamp;
