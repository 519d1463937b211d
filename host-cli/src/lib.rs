pub use wasmtime;
pub use wasmtime_wasi;
