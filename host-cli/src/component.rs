//! The host adapter: the only file that sees the wasmtime `bindgen!` types
//! and calls. Conversions between them and [`crate::api`] are generated from
//! the same WIT (`build/api_gen.rs`); this file holds [`Session`] (an
//! instance with its open `store` resource) and its methods, one line each,
//! and the WIT error → host error mapping.

use anyhow::{Result, anyhow};
use wasmtime::Store;
use wasmtime::component::{Component, Linker, ResourceAny};

use crate::api;
use crate::engine::{Ctx, GUEST_STORE};
use crate::lock::StoreLock;

wasmtime::component::bindgen!({
    path: "../wit",
    world: "engine",
});

use exports::hmg::memory::types as wit;

include!(concat!(env!("OUT_DIR"), "/convert.rs"));

/// An open store: one instance of the engine component, its `store`
/// resource, and the store's lock file. Each call takes the lock
/// exclusively, so calls from several processes are serialised; the engine
/// catches up with the others' writes at the start of each call.
pub struct Session {
    store: Store<Ctx>,
    bindings: Engine,
    handle: Option<ResourceAny>,
    lock: StoreLock,
    /// How to make an [`Embedder`] for this session (None: no model).
    spawner: Option<Spawner>,
    /// The caller's scope: requests are made from it.
    pub scope: api::Scope,
    /// The actor recorded in audit records when a request names none.
    pub by: String,
    /// What the engine's recovery reported and nobody has taken yet; what is
    /// left when the session ends goes to stderr.
    notices: Vec<String>,
    /// Query embeddings another instance made for this session's recalls.
    queries_ahead: u32,
}

impl Session {
    /// Instantiates the component in `store` and opens the store resource
    /// on the granted directory.
    pub(crate) fn open(
        mut store: Store<Ctx>,
        component: &Component,
        linker: &Linker<Ctx>,
        lock: StoreLock,
        config: &api::StoreConfig,
        scope: api::Scope,
        by: &str,
    ) -> Result<Session> {
        let bindings =
            Engine::instantiate(&mut store, component, linker).map_err(|e| anyhow!("{e}"))?;
        let mut session = Session {
            store,
            bindings,
            handle: None,
            lock,
            spawner: None,
            scope,
            by: by.to_owned(),
            notices: Vec::new(),
            queries_ahead: 0,
        };
        let config = wit::StoreConfig::from(config.clone());
        let handle = session.lock.hold(|| {
            outcome(session.bindings.hmg_memory_memory().store().call_open(
                &mut session.store,
                GUEST_STORE,
                &config,
            ))
        })?;
        session.handle = Some(handle);
        session.gather_notices();
        Ok(session)
    }

    /// Lets [`Session::embedder`] make second instances with `spawner`.
    pub(crate) fn set_spawner(&mut self, spawner: Spawner) {
        self.spawner = Some(spawner);
    }

    /// What makes an [`Embedder`] for this session's model and config, to
    /// run on another thread; None without a model.
    pub fn embedder(&self) -> Option<impl Fn() -> Result<Embedder> + Send + 'static> {
        let spawner = self.spawner.clone()?;
        Some(move || spawner.spawn())
    }

    /// Takes what the engine's recovery reported (a torn tail kept aside,
    /// repairs waiting for a writable disk), in plain words.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn gather_notices(&mut self) {
        let Some(handle) = self.handle else { return };
        let guest = self.bindings.hmg_memory_memory().store();
        if let Ok(notices) = guest.call_notices(&mut self.store, handle) {
            self.notices.extend(notices);
        }
    }

    /// How long a call waits for another process's call before giving up
    /// (default a minute; the MCP server uses its call timeout).
    pub fn set_patience(&mut self, patience: std::time::Duration) {
        self.lock.set_patience(patience);
    }

    /// What `stats` and `export` cover by default: what this session sees.
    pub fn visible(&self) -> api::StoreFilter {
        api::StoreFilter::VisibleFrom(self.scope.clone())
    }

    fn handle(&self) -> Result<ResourceAny> {
        self.handle.ok_or_else(|| anyhow!("the store is not open"))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The store resource is not dropped in the guest: the engine flushes
        // nothing there (every write is already durable), and the instance's
        // memory goes with the wasmtime store whole — freeing a large
        // store's atoms one by one first cost a cold `hmg` call at 100k atoms
        // about a tenth of its time.
        for notice in self.notices.drain(..) {
            eprintln!("hmg: note: {notice}");
        }
    }
}

/// Loads the model into a fresh instance (for pre-initialisation); returns
/// its fingerprint.
pub(crate) fn preload(
    store: &mut Store<Ctx>,
    instance: &wasmtime::component::Instance,
    model_dir: &str,
) -> Result<String> {
    let bindings = Engine::new(&mut *store, instance).map_err(|e| anyhow!("{e}"))?;
    bindings
        .call_preload(store, model_dir)
        .map_err(|e| anyhow!("the engine failed while loading the model: {e}"))?
        .map_err(|e| anyhow!("cannot load the model: {e}"))
}

/// Contents embedded per call ahead of an import.
const IMPORT_BATCH: usize = 64;

/// The contents of an import's atom lines (what its write will embed).
fn import_contents(jsonl: &str) -> Vec<String> {
    jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "atom")
        .filter_map(|v| v["content"].as_str().map(str::to_owned))
        .collect()
}

/// The engine could not read or write the store's files.
#[derive(Debug, thiserror::Error)]
#[error("store I/O failed: {0}")]
pub struct StoreIo(String);

/// Below this much free space a failed write is put down to a full disk.
const NEARLY_FULL: u64 = 64 << 10;

/// Says "disk full" when an I/O failure comes with no space left (inside
/// the component WASI reports ENOSPC as a bare "I/O error").
fn explain_io(e: anyhow::Error, lock: &StoreLock) -> anyhow::Error {
    match e.downcast_ref::<StoreIo>() {
        Some(StoreIo(m)) if !m.starts_with("disk full") => match lock.free_space() {
            Some(free) if free < NEARLY_FULL => anyhow!(
                "store I/O failed: disk full: the file system holding the store has {free} bytes free, so this write was not made ({m})"
            ),
            _ => e,
        },
        _ => e,
    }
}

/// A call's outcome: a trap or a WIT error becomes the host's error.
fn outcome<T>(result: wasmtime::Result<Result<T, wit::Error>>) -> Result<T> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(match e {
            wit::Error::Io(m) => StoreIo(m).into(),
            wit::Error::Corrupt(m) => anyhow!("store is corrupt: {m}"),
            wit::Error::Invalid(m) => anyhow!("invalid request: {m}"),
            wit::Error::Internal(m) => anyhow!("engine bug: {m}"),
        }),
        Err(trap) => Err(anyhow!("the engine failed: {trap}")),
    }
}

/// One store method: converts the request, calls under the lock, converts
/// the result.
macro_rules! call {
    ($session:expr, $method:ident ( $($arg:expr),* )) => {{
        let handle = $session.handle()?;
        let Session { store, bindings, lock, .. } = &mut *$session;
        let result = lock.hold(|| {
            let guest = bindings.hmg_memory_memory().store();
            outcome(guest.$method(store, handle, $($arg),*)).map(Into::into)
        });
        let result = result.map_err(|e| explain_io(e, &$session.lock));
        $session.gather_notices();
        result
    }};
}

impl Session {
    /// Embeds the content first, outside the store lock.
    pub fn memorize(&mut self, req: &api::MemorizeRequest) -> Result<api::MemorizeResult> {
        self.embed_ahead(std::slice::from_ref(&req.content))?;
        call!(self, call_memorize(&req.clone().into()))
    }

    /// Embeds texts a later call will store, without the store lock (the
    /// engine reads no file for it). Returns how many were embedded.
    pub fn embed_ahead(&mut self, texts: &[String]) -> Result<u32> {
        let handle = self.handle()?;
        let guest = self.bindings.hmg_memory_memory().store();
        guest
            .call_embed_ahead(&mut self.store, handle, texts)
            .map_err(|e| anyhow!("the engine failed: {e}"))
    }

    /// Hands out, and forgets, what [`Session::embed_ahead`] made that no
    /// write used yet (for [`Session::import_with_helper`]).
    fn take_ahead(&mut self) -> Result<wit::AheadEmbeddings> {
        let handle = self.handle()?;
        let guest = self.bindings.hmg_memory_memory().store();
        guest
            .call_take_ahead(&mut self.store, handle)
            .map_err(|e| anyhow!("the engine failed: {e}"))
    }

    /// Keeps what an [`Embedder`] made for this session's next writes.
    /// Returns how many were kept.
    pub fn accept(&mut self, embeddings: &Embeddings) -> Result<u32> {
        self.give_ahead(&embeddings.0)
    }

    /// Keeps what [`Embedder::embed_queries`] made for this session's next
    /// recalls. Returns how many were kept.
    pub fn accept_queries(&mut self, embeddings: &Embeddings) -> Result<u32> {
        let handle = self.handle()?;
        let guest = self.bindings.hmg_memory_memory().store();
        let kept = guest
            .call_give_queries(&mut self.store, handle, &embeddings.0)
            .map_err(|e| anyhow!("the engine failed: {e}"))?;
        self.queries_ahead += kept;
        Ok(kept)
    }

    /// How many query embeddings another instance made and this session
    /// kept for its recalls ([`crate::SessionOptions::recalls`]).
    pub fn queries_ahead(&self) -> u32 {
        self.queries_ahead
    }

    /// Keeps embeddings another instance made ahead for this session's
    /// next writes. Returns how many were kept.
    fn give_ahead(&mut self, embeddings: &wit::AheadEmbeddings) -> Result<u32> {
        let handle = self.handle()?;
        let guest = self.bindings.hmg_memory_memory().store();
        guest
            .call_give_ahead(&mut self.store, handle, embeddings)
            .map_err(|e| anyhow!("the engine failed: {e}"))
    }

    pub fn recall(&mut self, req: &api::RecallRequest) -> Result<api::RecallResult> {
        call!(self, call_recall(&req.clone().into()))
    }

    /// `req.by` defaults to the session's actor; a replacement is embedded
    /// first, outside the store lock.
    pub fn correct(&mut self, req: &api::CorrectRequest) -> Result<api::CorrectResult> {
        if let Some(content) = &req.new_content {
            self.embed_ahead(std::slice::from_ref(content))?;
        }
        let mut req = req.clone();
        req.by.get_or_insert_with(|| self.by.clone());
        call!(self, call_correct(&req.into()))
    }

    /// `req.by` defaults to the session's actor.
    pub fn govern(&mut self, req: &api::GovernRequest) -> Result<api::GovernResult> {
        let mut req = req.clone();
        req.by.get_or_insert_with(|| self.by.clone());
        call!(self, call_govern(&req.into()))
    }

    pub fn handoff(&mut self, req: &api::HandoffRequest) -> Result<api::HandoffResult> {
        call!(self, call_handoff(&req.clone().into()))
    }

    pub fn history(&mut self, req: &api::HistoryRequest) -> Result<api::HistoryResult> {
        call!(self, call_history(&req.clone().into()))
    }

    pub fn stats(&mut self, filter: &api::StoreFilter) -> Result<api::StoreStats> {
        call!(self, call_stats(&filter.clone().into()))
    }

    pub fn brief(&mut self, req: &api::BriefRequest) -> Result<api::BriefResult> {
        call!(self, call_brief(&req.clone().into()))
    }

    /// JSON Lines of what `filter` covers.
    pub fn export(&mut self, filter: &api::StoreFilter) -> Result<String> {
        call!(self, call_export(&filter.clone().into()))
    }

    /// The contents of the atom lines are embedded first, in batches,
    /// outside the store lock; the import itself then only writes.
    pub fn import(&mut self, jsonl: &str) -> Result<api::ImportResult> {
        for batch in import_contents(jsonl).chunks(IMPORT_BATCH) {
            self.embed_ahead(batch)?;
        }
        call!(self, call_import(jsonl))
    }

    /// [`Session::import`] with a second instance embedding at the same time
    /// (a second core's worth): `open_helper` opens it on another thread,
    /// the batches alternate between the two, the helper's vectors are
    /// handed to this session, which then writes alone. A helper that
    /// cannot open or fails leaves its batches to this session's write.
    pub fn import_with_helper(
        &mut self,
        jsonl: &str,
        open_helper: impl FnOnce() -> Result<Session> + Send,
    ) -> Result<api::ImportResult> {
        let contents = import_contents(jsonl);
        let batches: Vec<&[String]> = contents.chunks(IMPORT_BATCH).collect();
        let handed = std::thread::scope(|scope| -> Result<Vec<wit::AheadEmbeddings>> {
            let helper = scope.spawn(|| -> Result<Vec<wit::AheadEmbeddings>> {
                let mut helper = open_helper()?;
                let mut handed = Vec::new();
                for batch in batches.iter().skip(1).step_by(2) {
                    helper.embed_ahead(batch)?;
                    handed.push(helper.take_ahead()?);
                }
                Ok(handed)
            });
            for batch in batches.iter().step_by(2) {
                self.embed_ahead(batch)?;
            }
            Ok(helper.join().ok().and_then(Result::ok).unwrap_or_default())
        })?;
        for embeddings in &handed {
            self.give_ahead(embeddings)?;
        }
        call!(self, call_import(jsonl))
    }

    pub fn extract_entities(&mut self, text: &str) -> Result<api::ExtractResult> {
        call!(self, call_extract_entities(text))
    }

    pub fn neighborhood(
        &mut self,
        req: &api::NeighborhoodRequest,
    ) -> Result<api::NeighborhoodResult> {
        call!(self, call_neighborhood(&req.clone().into()))
    }

    pub fn shortest_path(&mut self, req: &api::PathRequest) -> Result<api::PathResult> {
        call!(self, call_shortest_path(&req.clone().into()))
    }

    /// `req.by` defaults to the session's actor.
    pub fn relate(&mut self, req: &api::RelateRequest) -> Result<api::RelateResult> {
        let mut req = req.clone();
        req.by.get_or_insert_with(|| self.by.clone());
        call!(self, call_relate(&req.into()))
    }

    pub fn graph_view(&mut self, req: &api::GraphViewRequest) -> Result<api::GraphViewResult> {
        call!(self, call_graph_view(&req.clone().into()))
    }

    pub fn observe(&mut self, req: &api::ObserveRequest) -> Result<api::ObserveResult> {
        call!(self, call_observe(&req.clone().into()))
    }
}

/// Everything needed to make a second instance of the component with the
/// session's model and config (for [`Embedder`]).
#[derive(Clone)]
pub(crate) struct Spawner {
    pub engine: wasmtime::Engine,
    pub component: Component,
    pub linker: Linker<Ctx>,
    pub model: std::path::PathBuf,
    pub config: api::StoreConfig,
}

impl Spawner {
    pub(crate) fn spawn(&self) -> Result<Embedder> {
        let mut store = Store::new(&self.engine, Ctx::granting(None, Some(&self.model))?);
        let bindings = Engine::instantiate(&mut store, &self.component, &self.linker)
            .map_err(|e| anyhow!("{e}"))?;
        Ok(Embedder {
            store,
            bindings,
            config: self.config.clone().into(),
        })
    }
}

/// A second instance of the component with no store open, that only
/// embeds: what it makes goes to the session's writes through
/// [`Session::accept`]. It is granted the model's directory and nothing else.
pub struct Embedder {
    store: Store<Ctx>,
    bindings: Engine,
    config: wit::StoreConfig,
}

/// Passage embeddings an [`Embedder`] made, keyed by the content as a
/// write will store it.
pub struct Embeddings(wit::AheadEmbeddings);

impl Embeddings {
    pub fn len(&self) -> usize {
        self.0.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.items.is_empty()
    }
}

impl Embedder {
    /// Embeds `texts` as the session's writes would store them.
    pub fn embed(&mut self, texts: &[String]) -> Result<Embeddings> {
        self.bindings
            .hmg_memory_memory()
            .store()
            .call_embed_detached(&mut self.store, &self.config, texts)
            .map(Embeddings)
            .map_err(|e| anyhow!("the engine failed: {e}"))
    }

    /// Embeds `queries` as the session's recalls of them would.
    pub fn embed_queries(&mut self, queries: &[String]) -> Result<Embeddings> {
        self.bindings
            .hmg_memory_memory()
            .store()
            .call_embed_queries_detached(&mut self.store, &self.config, queries)
            .map(Embeddings)
            .map_err(|e| anyhow!("the engine failed: {e}"))
    }
}
