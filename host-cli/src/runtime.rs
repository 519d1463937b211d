//! [`Runtime`]: wasmtime with the embedded engine component, compiled once
//! and cached; [`Session`]: one open store, every call made under the store's
//! directory lock so that several processes can share it; [`open_session`]: the
//! one way both native hosts open a session from flags and environment.
//!
//! `Session` itself and its operations (`Session::memorize`, …) are in
//! `component.rs`, the only file that sees the generated bindings.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use wasmtime::component::Component;
use wasmtime::component::Linker;
use wasmtime::{Engine, Store};

use crate::api;
use crate::component::{Session, Spawner};
use crate::engine::{self, Ctx};
use crate::locate;
use crate::lock::StoreLock;
use crate::preload;

/// The engine component built for this host (see build.rs).
static COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/engine.wasm"));
const COMPONENT_HASH: &str = env!("HMG_COMPONENT_HASH");

/// The compiled engine, shareable between sessions and threads.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    component: Component,
    linker: Linker<Ctx>,
    /// Whether the component was pre-initialised with the model loaded.
    pub preloaded: bool,
}

fn embedded() -> Result<&'static [u8]> {
    if COMPONENT.is_empty() {
        bail!("this hmg was built without the engine component; build with ./setup.sh");
    }
    Ok(COMPONENT)
}

impl Runtime {
    /// The embedded component, with compiled code cached in `cache_dir`.
    pub fn new(cache_dir: Option<&Path>) -> Result<Runtime> {
        Runtime::from_component(embedded()?, COMPONENT_HASH, cache_dir)
    }

    /// The embedded component, pre-initialised with the model in
    /// `model_dir` when [`Runtime::prepare`] made that for this model;
    /// otherwise as [`Runtime::new`].
    pub fn for_model(cache_dir: Option<&Path>, model_dir: Option<&Path>) -> Result<Runtime> {
        if let (Some(cache), Some(model)) = (cache_dir, model_dir) {
            let (engine, linker) = engine::engine_and_linker()?;
            let path = preload::artifact_path(&engine, COMPONENT_HASH, cache, model);
            if let Some(component) = engine::load_cached(&engine, &path) {
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
        let component = embedded()?;
        let (engine, linker) = engine::engine_and_linker()?;
        let path = preload::artifact_path(&engine, COMPONENT_HASH, cache_dir, model_dir);
        let fingerprint = preload::prepare(&engine, &linker, component, model_dir, &path)?;
        Ok((path, fingerprint))
    }

    pub fn from_component(bytes: &[u8], hash: &str, cache_dir: Option<&Path>) -> Result<Runtime> {
        let (engine, linker) = engine::engine_and_linker()?;
        let component = engine::load_component(&engine, bytes, hash, cache_dir)?;
        Ok(Runtime {
            engine,
            component,
            linker,
            preloaded: false,
        })
    }

    /// Opens the store in `dir` (created if missing), granting the component
    /// that directory and, read-only, the embedding model's directory
    /// `model` (none: keyword-only recall), and nothing else.
    pub fn open(
        &self,
        dir: &Path,
        model: Option<&Path>,
        config: &api::StoreConfig,
        scope: api::Scope,
        by: &str,
    ) -> Result<Session> {
        self.open_recalling(dir, model, config, scope, by, &[])
    }

    /// [`Runtime::open`] for a caller about to recall `queries`: with the
    /// pre-initialised engine and a second core, a second instance embeds
    /// them while this one opens the store, and the session's recalls of
    /// them find their query embeddings made (the same vectors, bit for
    /// bit). A helper that fails leaves each recall to embed its own.
    pub fn open_recalling(
        &self,
        dir: &Path,
        model: Option<&Path>,
        config: &api::StoreConfig,
        scope: api::Scope,
        by: &str,
        queries: &[String],
    ) -> Result<Session> {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create store directory {}", dir.display()))?;
        let lock = StoreLock::open(dir)?;
        let config = api::StoreConfig {
            model_dir: model.map(|_| engine::GUEST_MODEL.to_owned()),
            ..config.clone()
        };
        let spawner = model.map(|model| Spawner {
            engine: self.engine.clone(),
            component: self.component.clone(),
            linker: self.linker.clone(),
            model: model.to_owned(),
            config: config.clone(),
        });
        let helper = spawner
            .as_ref()
            .filter(|_| !queries.is_empty() && self.preloaded && second_core());
        let mut session = std::thread::scope(|threads| -> Result<Session> {
            let made = helper
                .map(|spawner| threads.spawn(move || spawner.spawn()?.embed_queries(queries)));
            let store = Store::new(&self.engine, Ctx::granting(Some(dir), model)?);
            let mut session = Session::open(
                store,
                &self.component,
                &self.linker,
                lock,
                &config,
                scope,
                by,
            )?;
            if let Some(Ok(Ok(made))) = made.map(|thread| thread.join()) {
                // Refused (another model): each recall embeds its own query.
                let _ = session.accept_queries(&made);
            }
            Ok(session)
        })?;
        if let Some(spawner) = spawner {
            session.set_spawner(spawner);
        }
        Ok(session)
    }
}

/// Whether this process may run on more than one core: the hosts then
/// let a second instance of the component embed beside the first.
pub fn second_core() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// How a native host asks for a session: flags, each falling back to the
/// environment and inference (see [`locate`]).
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// `--store`, else `$HMG_STORE`, else the user data dir.
    pub store: Option<PathBuf>,
    /// `--model`, else `$HMG_MODEL`, else the cached default; `none`: keyword-only.
    pub model: Option<PathBuf>,
    /// `--tenant`, else `$HMG_TENANT`, the store's config.json, the login name.
    pub tenant: Option<String>,
    /// Override the workspace / repository / branch inferred from git.
    pub workspace: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub session: Option<String>,
    /// The actor recorded in audit records (default: the tenant).
    pub by: Option<String>,
    /// Infer the scope from this directory instead of the working one.
    pub cwd: Option<PathBuf>,
    /// Open a damaged store on purpose (`hmg repair`): what cannot be read
    /// is kept aside and the rest loads.
    pub salvage: bool,
    /// Queries the caller will recall first: embedded in a second instance
    /// while the store opens (see [`Runtime::open_recalling`]).
    pub recalls: Vec<String>,
}

/// Opens the session both native hosts use: the store directory and scope
/// from flags, environment and the working directory, the embedding model
/// (the pre-initialised engine when `hmg prepare` made one for it).
/// `HMG_REQUIRE_PRELOADED` makes a missing pre-initialised engine an error.
pub fn open_session(options: &SessionOptions) -> Result<Session> {
    let store = locate::store_dir(options.store.as_deref());
    let tenant = match &options.tenant {
        Some(t) => t.clone(),
        None => locate::tenant(&store)?,
    };
    let cwd = match &options.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the working directory")?,
    };
    let mut scope = locate::infer_scope(&cwd, tenant.clone());
    for (slot, flag) in [
        (&mut scope.workspace, &options.workspace),
        (&mut scope.repository, &options.repository),
        (&mut scope.branch, &options.branch),
    ] {
        if flag.is_some() {
            slot.clone_from(flag);
        }
    }
    scope.session.clone_from(&options.session);
    let model = locate::model_dir(options.model.as_deref());
    let runtime = Runtime::for_model(engine::default_cache_dir().as_deref(), model.as_deref())?;
    if model.is_some() && !runtime.preloaded && std::env::var_os("HMG_REQUIRE_PRELOADED").is_some()
    {
        bail!(
            "HMG_REQUIRE_PRELOADED is set but no pre-initialised engine matches this model (run `hmg prepare`)"
        );
    }
    let by = options.by.clone().unwrap_or(tenant);
    runtime
        .open_recalling(
            &store,
            model.as_deref(),
            &api::StoreConfig {
                salvage: options.salvage.then_some(true),
                personal_data: locate::personal_data(&store)?,
                ..api::StoreConfig::default()
            },
            scope,
            &by,
            &options.recalls,
        )
        .with_context(|| format!("store {}", store.display()))
}
