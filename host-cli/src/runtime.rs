//! [`Runtime`]: wasmtime with the embedded engine component, compiled once
//! and cached; [`Session`]: one open store, every call made under the store's
//! lock file so that several processes can share it.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use wasmtime::component::{Component, Linker, ResourceAny};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{FsPerms, ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::api;
use crate::component::{self as c, Bindings};
use crate::preload;

/// The engine component built for this host (see build.rs).
static COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/engine.wasm"));
const COMPONENT_HASH: &str = env!("HMG_COMPONENT_HASH");
/// Where the component sees the store directory.
const GUEST_STORE: &str = "/store";
const LOCK_FILE: &str = "LOCK";

pub struct Ctx {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
}

impl WasiView for Ctx {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The compiled engine, shareable between sessions and threads.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    component: Component,
    linker: Linker<Ctx>,
    /// Whether the component was pre-initialised with the model loaded.
    pub preloaded: bool,
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

impl Runtime {
    /// The embedded component, with compiled code cached in `cache_dir`.
    pub fn new(cache_dir: Option<&Path>) -> Result<Runtime> {
        if COMPONENT.is_empty() {
            bail!("this hmg was built without the engine component; build with ./setup.sh");
        }
        Runtime::from_component(COMPONENT, COMPONENT_HASH, cache_dir)
    }

    /// The embedded component, pre-initialised with the model in
    /// `model_dir` when [`Runtime::prepare`] made that for this model;
    /// otherwise as [`Runtime::new`].
    pub fn for_model(cache_dir: Option<&Path>, model_dir: Option<&Path>) -> Result<Runtime> {
        if let (Some(cache), Some(model)) = (cache_dir, model_dir) {
            let (engine, linker) = engine_and_linker()?;
            let path = preload::artifact_path(&engine, COMPONENT_HASH, cache, model);
            if let Some(component) = load_cached(&engine, &path) {
                return Ok(Runtime {
                    engine,
                    component,
                    linker,
                    preloaded: true,
                });
            }
        }
        Runtime::new(cache_dir)
    }

    /// Builds and caches the engine pre-initialised with the model in
    /// `model_dir` (tens of seconds, once per component and model); returns
    /// where it went and the model's fingerprint.
    pub fn prepare(cache_dir: &Path, model_dir: &Path) -> Result<(PathBuf, String)> {
        if COMPONENT.is_empty() {
            bail!("this hmg was built without the engine component; build with ./setup.sh");
        }
        let (engine, linker) = engine_and_linker()?;
        let path = preload::artifact_path(&engine, COMPONENT_HASH, cache_dir, model_dir);
        let fingerprint = preload::prepare(&engine, &linker, COMPONENT, model_dir, &path)?;
        Ok((path, fingerprint))
    }

    pub fn from_component(bytes: &[u8], hash: &str, cache_dir: Option<&Path>) -> Result<Runtime> {
        let (engine, linker) = engine_and_linker()?;
        let component = load_component(&engine, bytes, hash, cache_dir)?;
        Ok(Runtime {
            engine,
            component,
            linker,
            preloaded: false,
        })
    }

    /// Opens the store in `dir` (created if missing), granting the component
    /// that directory and nothing else.
    pub fn open(
        &self,
        dir: &Path,
        config: &api::StoreConfig,
        scope: api::Scope,
        by: &str,
    ) -> Result<Session> {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create store directory {}", dir.display()))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK_FILE))
            .with_context(|| format!("cannot open the lock file in {}", dir.display()))?;
        let mut wasi = WasiCtxBuilder::new();
        wasi.allow_blocking_current_thread(true)
            .inherit_stderr()
            .preopened_dir(dir, GUEST_STORE, FsPerms::ReadWrite)
            .map_err(|e| anyhow!("cannot grant {} to the engine: {e}", dir.display()))?;
        if let Some(model) = &config.model_dir {
            wasi.preopened_dir(model, c::GUEST_MODEL, FsPerms::ReadOnly)
                .map_err(|e| {
                    anyhow!(
                        "cannot grant the model {} to the engine: {e}",
                        model.display()
                    )
                })?;
        }
        let wasi = wasi.build();
        let mut store = Store::new(
            &self.engine,
            Ctx {
                wasi,
                table: ResourceTable::new(),
            },
        );
        let bindings = Bindings::instantiate(&mut store, &self.component, &self.linker)
            .map_err(|e| anyhow!("{e}"))?;
        let mut session = Session {
            store,
            bindings,
            handle: None,
            lock,
            scope,
            by: by.to_owned(),
        };
        let wit_config = c::config(config);
        let handle = session.locked(|store, b| {
            b.hmg_memory_memory()
                .store()
                .call_open(store, GUEST_STORE, &wit_config)
        })?;
        session.handle = Some(handle);
        Ok(session)
    }
}

fn engine_and_linker() -> Result<(Engine, Linker<Ctx>)> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).map_err(|e| anyhow!("{e}"))?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| anyhow!("{e}"))?;
    Ok((engine, linker))
}

/// A compiled engine from the cache, if there is a usable one at `path`
/// (an unusable file is removed so that it gets rebuilt).
fn load_cached(engine: &Engine, path: &Path) -> Option<Component> {
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

fn load_component(
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

/// An open store. Each call takes the store's lock file exclusively, so
/// calls from several processes are serialised; the engine catches up with
/// the others' writes at the start of each call.
pub struct Session {
    store: Store<Ctx>,
    bindings: Bindings,
    handle: Option<ResourceAny>,
    lock: File,
    /// The scope used when a request names none.
    pub scope: api::Scope,
    /// The actor recorded in audit records.
    pub by: String,
}

type Guest<'a> = &'a Bindings;

impl Session {
    fn locked<T>(
        &mut self,
        call: impl FnOnce(&mut Store<Ctx>, Guest<'_>) -> wasmtime::Result<Result<T, c::wit::Error>>,
    ) -> Result<T> {
        lock_exclusive(&self.lock)?;
        let outcome = call(&mut self.store, &self.bindings);
        let _ = self.lock.unlock();
        match outcome {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(c::error(e)),
            Err(trap) => Err(anyhow!("the engine failed: {trap}")),
        }
    }

    fn handle(&self) -> ResourceAny {
        self.handle.expect("a session always has an open store")
    }

    fn scope_or_default(&self, scope: Option<&api::Scope>) -> c::wit::Scope {
        c::scope(scope.unwrap_or(&self.scope))
    }

    pub fn memorize(&mut self, req: &api::MemorizeRequest) -> Result<api::MemorizeResult> {
        let wit = c::wit::MemorizeRequest {
            content: req.content.clone(),
            source: req.source.clone(),
            scope: self.scope_or_default(req.scope.as_ref()),
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_memorize(s, h, &wit))
            .map(c::memorize_result)
    }

    pub fn recall(&mut self, req: &api::RecallRequest) -> Result<api::RecallResult> {
        let wit = c::wit::RecallRequest {
            query: req.query.clone(),
            max_results: req.max_results,
            include_negated: req.include_negated,
            scope: self.scope_or_default(req.scope.as_ref()),
            remote: req.remote,
            explain: req.explain,
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_recall(s, h, &wit))
            .map(c::recall_result)
    }

    pub fn correct(&mut self, req: &api::CorrectRequest) -> Result<api::CorrectResult> {
        let wit = c::wit::CorrectRequest {
            target_atom: req.target_atom.clone(),
            action: c::correct_action(req.action),
            reason: req.reason.clone(),
            new_content: req.new_content.clone(),
            scope: self.scope_or_default(req.scope.as_ref()),
            by: Some(self.by.clone()),
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_correct(s, h, &wit))
            .map(c::correct_result)
    }

    pub fn govern(&mut self, req: &api::GovernRequest) -> Result<api::GovernResult> {
        let wit = c::wit::GovernRequest {
            target_atom: req.target_atom.clone(),
            action: c::govern_action(req.action),
            reason: req.reason.clone(),
            lesson_content: req.lesson_content.clone(),
            scope: self.scope_or_default(req.scope.as_ref()),
            by: Some(self.by.clone()),
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_govern(s, h, &wit))
            .map(c::govern_result)
    }

    pub fn handoff(&mut self, req: &api::HandoffRequest) -> Result<api::HandoffResult> {
        let wit = c::wit::HandoffRequest {
            summary: req.summary.clone(),
            source: req.source.clone(),
            scope: self.scope_or_default(req.scope.as_ref()),
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_handoff(s, h, &wit))
            .map(c::handoff_result)
    }

    pub fn history(&mut self, atom_id: &str) -> Result<api::HistoryResult> {
        let wit = c::wit::HistoryRequest {
            atom_id: atom_id.to_owned(),
            scope: c::scope(&self.scope),
            remote: None,
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_history(s, h, &wit))
            .map(c::history_result)
    }

    /// Statistics of the whole store, or of what `scope` sees.
    pub fn stats(&mut self, scope: Option<&api::Scope>) -> Result<api::StoreStats> {
        let wit = scope.map(c::scope);
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_stats(s, h, wit.as_ref()))
            .map(c::stats)
    }

    pub fn brief(&mut self, budget_chars: Option<u32>, remote: bool) -> Result<api::BriefResult> {
        let wit = c::wit::BriefRequest {
            scope: c::scope(&self.scope),
            remote: Some(remote),
            budget_chars,
        };
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_brief(s, h, &wit))
            .map(c::brief_result)
    }

    pub fn export(&mut self, scope: Option<&api::Scope>) -> Result<String> {
        let wit = scope.map(c::scope);
        let h = self.handle();
        self.locked(|s, b| {
            b.hmg_memory_memory()
                .store()
                .call_export(s, h, wit.as_ref())
        })
    }

    pub fn import(&mut self, jsonl: &str) -> Result<api::ImportResult> {
        let h = self.handle();
        self.locked(|s, b| b.hmg_memory_memory().store().call_import(s, h, jsonl))
            .map(c::import_result)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            let _ = handle.resource_drop(&mut self.store);
        }
    }
}

/// Waits for the store's lock, giving up after a minute with a clear error.
fn lock_exclusive(lock: &File) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                bail!("the store is locked by another process for over 60 s")
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e).context("cannot lock the store"),
        }
    }
}
