//! HMG engine — a local-first long-term memory for AI agents.
pub mod atom;
pub mod error;
pub mod scope;
pub mod state;
pub mod store;
pub mod text;
pub mod time;
