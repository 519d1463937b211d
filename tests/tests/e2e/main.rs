//! End-to-end tests of the built artefacts, in one test binary (one link of
//! wasmtime and cranelift instead of five):
//!
//! - [`walkthrough`] — the seed walk-through through the component on wasmtime;
//! - [`cli`] — the same through the `hmg` binary with `--json`;
//! - [`durability`] — SIGKILLed writers, concurrent processes, large transactions;
//! - [`corruption`] — damaged stores through `hmg`: refused or reported, never silent;
//! - [`mcp_sdk`] — the real `hmg-mcp` driven by the official MCP TypeScript SDK;
//! - [`mcp_burst`] — the real `hmg-mcp` under a burst and malformed raw JSON-RPC;
//! - [`browser`] — the browser host in headless Chromium.

mod browser;
mod cli;
mod corruption;
mod durability;
mod mcp_burst;
mod mcp_sdk;
mod walkthrough;
