//! The wasmtime side of running the engine component, shared by opening a
//! store ([`crate::runtime`]) and pre-initialising it ([`crate::preload`]):
//! engine configuration, the WASI context that grants directories, and the
//! cache of compiled code.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine};
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// Where the component sees the store directory.
pub const GUEST_STORE: &str = "/store";
/// Where the component sees the model directory.
pub const GUEST_MODEL: &str = "/model";

/// What a component instance may reach: the directories granted to it.
pub struct Ctx {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl Ctx {
    /// What a caller's own WASI context grants (tools that run other
    /// components with the hosts' configuration: `examples/run_wasi.rs`).
    pub fn with_wasi(wasi: WasiCtx) -> Ctx {
        Ctx {
            wasi,
            table: ResourceTable::new(),
        }
    }

    /// Grants `store` (read-write, as [`GUEST_STORE`]) and `model`
    /// (read-only, as [`GUEST_MODEL`]), nothing else; stderr is inherited.
    pub fn granting(store: Option<&Path>, model: Option<&Path>) -> Result<Ctx> {
        let mut wasi = WasiCtxBuilder::new();
        // Before any preopen: file calls then run on this thread instead of
        // a tokio blocking pool (≈ 7× faster per call).
        wasi.allow_blocking_current_thread(true).inherit_stderr();
        if let Some(dir) = store {
            wasi.preopened_dir(dir, GUEST_STORE, FsPerms::ReadWrite)
                .map_err(|e| anyhow!("cannot grant {} to the engine: {e}", dir.display()))?;
        }
        if let Some(dir) = model {
            wasi.preopened_dir(dir, GUEST_MODEL, FsPerms::ReadOnly)
                .map_err(|e| {
                    anyhow!(
                        "cannot grant the model {} to the engine: {e}",
                        dir.display()
                    )
                })?;
        }
        Ok(Ctx::with_wasi(wasi.build()))
    }
}

/// Where compiled code is cached: `$HMG_CACHE_DIR`, else the user cache dir.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("HMG_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("hmg"))
}

/// The wasmtime engine every host uses, and a linker with WASI preview 2.
pub fn engine_and_linker() -> Result<(Engine, Linker<Ctx>)> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    if std::env::var_os("HMG_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    let engine = Engine::new(&config).map_err(|e| anyhow!("{e}"))?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| anyhow!("{e}"))?;
    Ok((engine, linker))
}

/// A compiled engine from the cache, if there is a usable one at `path`
/// (an unusable file is removed so that it gets rebuilt).
pub fn load_cached(engine: &Engine, path: &Path) -> Option<Component> {
    if !path.exists() {
        return None;
    }
    // SAFETY: the file is our own cache entry, written by
    // `precompile_component` for this exact component, engine configuration
    // (and, for a pre-initialised engine, model) — all in its name; a stale
    // or foreign file fails to deserialize and is removed.
    #[allow(unsafe_code)]
    match unsafe { Component::deserialize_file(engine, path) } {
        Ok(component) => Some(component),
        Err(_) => {
            let _ = fs::remove_file(path);
            None
        }
    }
}

/// The component compiled for `engine`, from the cache in `cache_dir` when
/// it holds this build (keyed by `hash` and the engine), else compiled now
/// and cached.
pub fn load_component(
    engine: &Engine,
    bytes: &[u8],
    hash: &str,
    cache_dir: Option<&Path>,
) -> Result<Component> {
    let Some(dir) = cache_dir else {
        return Component::new(engine, bytes)
            .map_err(|e| anyhow!("cannot compile the engine: {e}"));
    };
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let path = dir.join(format!("engine-{hash}-{:016x}.cwasm", h.finish()));
    if let Some(component) = load_cached(engine, &path) {
        return Ok(component);
    }
    let compiled = engine
        .precompile_component(bytes)
        .map_err(|e| anyhow!("cannot compile the engine: {e}"))?;
    if fs::create_dir_all(dir).is_ok() {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if fs::write(&tmp, &compiled).is_ok() {
            let _ = fs::rename(&tmp, &path);
        }
    }
    // SAFETY: `compiled` was produced just now by this engine.
    #[allow(unsafe_code)]
    unsafe { Component::deserialize(engine, &compiled) }
        .map_err(|e| anyhow!("cannot load the compiled engine: {e}"))
}
