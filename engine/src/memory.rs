//! [`Memory`]: one open store — durable state, its indexes, the clock and id
//! source — and the helpers every operation shares. The operations
//! themselves live in `ops/`, one file each.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::atom::{Atom, AtomId};
use crate::embed::onnx::OnnxEmbedder;
use crate::embed::{Embedder, Role};
use crate::error::Result;
use crate::index::Indexes;
use crate::log::backend::Backend;
use crate::log::{Log, Recovery};
use crate::scope::Scope;
use crate::state::{Mutation, State, Txn, Vectors};
use crate::time::Timestamp;

/// Where time and randomness come from: the system in production, a fixed
/// script in tests.
pub trait Env {
    fn now(&mut self) -> Timestamp;
    /// 80 random bits for a ULID (higher bits are ignored).
    fn random(&mut self) -> u128;
}

/// The real clock and the platform's randomness (wasi:clocks, wasi:random
/// inside the component).
#[derive(Debug, Default)]
pub struct SystemEnv;

impl Env for SystemEnv {
    fn now(&mut self) -> Timestamp {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(since.as_millis() as i64)
    }

    fn random(&mut self) -> u128 {
        let mut bytes = [0u8; 16];
        // A failing entropy source still yields unique ids: they are made
        // monotonic below, so randomness only spreads them.
        let _ = getrandom::fill(&mut bytes);
        u128::from_le_bytes(bytes)
    }
}

/// A clock that only moves when told to, and a counter for randomness.
#[derive(Debug, Clone)]
pub struct FixedEnv {
    pub now: Timestamp,
    pub counter: u128,
}

impl Env for FixedEnv {
    fn now(&mut self) -> Timestamp {
        self.now
    }

    fn random(&mut self) -> u128 {
        self.counter += 1;
        self.counter
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub max_content_bytes: usize,
    pub compact_log_bytes: u64,
    pub brief_budget_chars: usize,
    /// The embedding model's directory; `None` means keyword-only recall.
    pub model_dir: Option<PathBuf>,
    /// Which relevance signals recall uses (both by default; benchmarks
    /// switch one off to measure the other).
    pub signals: Signals,
    /// Open a damaged store on purpose: what cannot be read is kept aside
    /// in `kept-*.hmg` files and the rest loads (docs/format.md).
    pub salvage: bool,
    /// Which personal data redaction hides.
    pub personal_data: crate::text::secrets::PersonalData,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    pub keyword: bool,
    pub semantic: bool,
    pub graph: bool,
}

impl Default for Signals {
    fn default() -> Signals {
        Signals {
            keyword: true,
            semantic: true,
            graph: true,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_content_bytes: 8192,
            compact_log_bytes: 4 << 20,
            brief_budget_chars: 4000,
            model_dir: None,
            signals: Signals::default(),
            salvage: false,
            personal_data: crate::text::secrets::PersonalData::default(),
        }
    }
}

/// The embedder of one store handle: loaded on first use, once.
enum Model {
    None,
    Unloaded(PathBuf),
    Ready(Box<dyn Embedder>),
    Failed(String),
}

pub struct Memory<B: Backend> {
    pub(crate) log: Log<B>,
    pub(crate) state: State,
    pub(crate) indexes: Indexes,
    pub(crate) config: Config,
    env: Box<dyn Env + Send>,
    last_id: u128,
    /// Set when a write failed half-way: memory may be ahead of disk, so the
    /// next call reloads from disk first.
    stale: bool,
    recovery: Recovery,
    /// What recovery did or could not do yet, until the host takes it.
    notices: Vec<String>,
    model: Model,
    /// Passage embeddings made ahead of the write that stores them
    /// ([`Memory::embed_ahead`]), by the content as it will be stored.
    ahead: HashMap<String, Vec<f32>>,
    /// Query embeddings another instance made for this handle's next
    /// recalls ([`Memory::accept_queries`]), by the text embedded; newest last.
    ahead_queries: Vec<(String, Vec<f32>)>,
}

/// At most this many embeddings wait for their write; more start afresh.
const AHEAD_MAX: usize = 20_000;
/// At most this many query embeddings wait for their recall (oldest go).
const QUERIES_AHEAD_MAX: usize = 16;

/// `texts` as a write under `config` would store them (admitted and
/// redacted; those it would refuse left out), sorted, without duplicates.
fn admitted(config: &Config, texts: &[String]) -> Vec<String> {
    crate::text::set_policy(config.personal_data);
    let max = config.max_content_bytes;
    let mut contents: Vec<String> = texts
        .iter()
        .filter_map(|t| crate::text::admit(t, max, "content").ok())
        .collect();
    contents.sort_unstable();
    contents.dedup();
    // What admission noted belongs to no call's result.
    let _ = crate::text::take_redactions();
    contents
}

/// What [`Memory::embed_ahead`] followed by [`Memory::take_ahead`] hands
/// out, made with no store open: a host's second instance embeds the
/// contents of writes queued behind the one its first instance is running,
/// and hands them over (`give-ahead`). Uses `embedder`, or else the model
/// in `config.model_dir` (loaded once per instance). Without a model, or if
/// it fails, nothing (the write embeds what is missing, or says why).
pub fn embed_detached(
    config: &Config,
    texts: &[String],
    embedder: Option<&mut dyn Embedder>,
) -> (String, Vec<(String, Vec<f32>)>) {
    let contents = admitted(config, texts);
    let run = |e: &mut dyn Embedder| {
        let texts: Vec<&str> = contents.iter().map(String::as_str).collect();
        let vectors = e.embed(&texts, Role::Passage).unwrap_or_default();
        (e.fingerprint().to_owned(), vectors)
    };
    let made = match (embedder, &config.model_dir) {
        _ if contents.is_empty() => None,
        (Some(e), _) => Some(run(e)),
        (None, Some(dir)) => crate::embed::with_detached(dir, run).ok(),
        (None, None) => None,
    };
    match made {
        Some((model, vectors)) if vectors.len() == contents.len() => {
            (model, contents.into_iter().zip(vectors).collect())
        }
        _ => (String::new(), Vec::new()),
    }
}

/// The query embeddings recalls of `queries` at `now` under `config` would
/// make, with no store open: a host embeds the queries of its coming
/// recalls in a second instance while the first opens the store, and hands
/// them over (`give-queries`). Uses `embedder`, or else the model in
/// `config.model_dir` (loaded once per instance). Without a model, with the
/// semantic signal off, or if it fails: nothing (each recall embeds its
/// query itself).
pub fn embed_queries_detached(
    config: &Config,
    queries: &[String],
    now: Timestamp,
    embedder: Option<&mut dyn Embedder>,
) -> (String, Vec<(String, Vec<f32>)>) {
    let mut texts: Vec<String> = queries
        .iter()
        .map(|q| crate::ops::recall::semantic_text(q, now))
        .filter(|t| !crate::index::tokenize::tokens(t).is_empty())
        .collect();
    texts.sort_unstable();
    texts.dedup();
    // One query a pass, as each recall embeds its own: the same vectors,
    // bit for bit (a batch pads its texts to one length).
    let run = |e: &mut dyn Embedder| {
        let vectors: Option<Vec<Vec<f32>>> = texts
            .iter()
            .map(|t| e.embed(&[t.as_str()], Role::Query).ok()?.pop())
            .collect();
        Some((e.fingerprint().to_owned(), vectors?))
    };
    let made = match (embedder, &config.model_dir) {
        _ if texts.is_empty() || !config.signals.semantic => None,
        (Some(e), _) => run(e),
        (None, Some(dir)) => crate::embed::with_detached(dir, run).ok().flatten(),
        (None, None) => None,
    };
    match made {
        Some((model, vectors)) => (model, texts.into_iter().zip(vectors).collect()),
        None => (String::new(), Vec::new()),
    }
}

impl<B: Backend> Memory<B> {
    pub fn open(backend: B, config: Config, env: Box<dyn Env + Send>) -> Result<Memory<B>> {
        let (mut log, state, recovery) =
            Log::open_with(backend, config.compact_log_bytes, config.salvage)?;
        let (indexes, rebuilt) = Self::restore_indexes(&mut log, &state);
        let model = config
            .model_dir
            .clone()
            .map_or(Model::None, Model::Unloaded);
        let mut memory = Memory {
            model,
            log,
            state,
            indexes,
            config,
            env,
            last_id: 0,
            stale: false,
            notices: recovery.notices.clone(),
            recovery,
            ahead: HashMap::new(),
            ahead_queries: Vec::new(),
        };
        if rebuilt {
            // Stored now, not at the next write: until then every open
            // (every `hmg recall` of a store only read from) would rebuild
            // them again — seconds at 100k atoms. A store that cannot be
            // written (read-only, disk full) is still read; the next
            // commit tries again.
            let _ = memory.compact();
        }
        Ok(memory)
    }

    /// The indexes of a state the log just loaded: from its snapshot when
    /// they are usable there; otherwise rebuilt (an engine of another
    /// derivation wrote them, or an older format none), and the snapshot
    /// should be rewritten with them (the flag; the next commit does it if
    /// opening cannot).
    fn restore_indexes(log: &mut Log<B>, state: &State) -> (Indexes, bool) {
        let had_snapshot = log.generation() > 0;
        let (indexes, restored) = Indexes::restore(state, log.take_derived());
        let rebuilt = had_snapshot && !restored;
        if rebuilt {
            log.compact_at_next_commit();
        }
        (indexes, rebuilt)
    }

    /// Writes a new snapshot (with the indexes) and starts a new log.
    pub fn compact(&mut self) -> Result<()> {
        self.refresh()?;
        let derived = self.indexes.encode(&self.state);
        self.log.compact_deriving(&mut self.state, derived)
    }

    /// What opening repaired (a torn tail cut, stale files removed).
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// What recovery did (bytes kept aside, files it could not tidy yet)
    /// since this was last called, in plain words for the user.
    pub fn take_notices(&mut self) -> Vec<String> {
        let mut notices = std::mem::take(&mut self.notices);
        notices.extend(self.log.take_notices());
        notices
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn backend(&self) -> &B {
        self.log.backend()
    }

    /// Catches up with other processes; every operation starts here.
    pub(crate) fn refresh(&mut self) -> Result<()> {
        crate::text::set_policy(self.config.personal_data);
        if self.stale {
            self.state = self.log.reload()?;
            self.notices.extend(self.log.take_notices());
            self.indexes = Self::restore_indexes(&mut self.log, &self.state).0;
            self.stale = false;
            return Ok(());
        }
        let caught = self.log.catch_up(&mut self.state)?;
        self.notices.extend(caught.recovery.notices);
        if caught.reloaded {
            self.indexes = Self::restore_indexes(&mut self.log, &self.state).0;
        } else {
            self.indexes.reindex(caught.touched, &self.state);
        }
        Ok(())
    }

    /// Uses this embedder instead of the configured model directory (tests,
    /// benchmarks, hosts that load the model themselves).
    pub fn set_embedder(&mut self, embedder: Box<dyn Embedder>) {
        self.model = Model::Ready(embedder);
    }

    /// The embedder, loading it on first use; `None` when there is no model
    /// or it failed to load (recall is then keyword-only).
    pub(crate) fn embedder(&mut self) -> Option<&mut dyn Embedder> {
        if let Model::Unloaded(dir) = &self.model {
            let loaded = match crate::embed::take_preloaded(dir) {
                Some(preloaded) => Ok(preloaded),
                None => OnnxEmbedder::load(dir),
            };
            self.model = match loaded {
                Ok(e) => Model::Ready(Box::new(e)),
                Err(e) => {
                    let reason =
                        format!("embedding model unavailable ({e}); recall is keyword-only");
                    eprintln!("hmg: {reason}");
                    Model::Failed(reason)
                }
            };
        }
        match &mut self.model {
            Model::Ready(e) => Some(e.as_mut()),
            _ => None,
        }
    }

    /// Whether a model is configured and has not failed to load.
    pub(crate) fn has_model(&self) -> bool {
        matches!(self.model, Model::Unloaded(_) | Model::Ready(_))
    }

    /// What the semantic signal runs on, for `stats`.
    pub fn model_status(&self) -> String {
        match &self.model {
            Model::None => "none: no model configured; recall is keyword-only".into(),
            // Not loaded yet: the model the stored vectors were made with.
            Model::Unloaded(_) if !self.state.vectors.model.is_empty() => {
                self.state.vectors.model.clone()
            }
            Model::Unloaded(dir) => format!("{} (loads on first use)", dir.display()),
            Model::Ready(e) => e.fingerprint().to_owned(),
            Model::Failed(reason) => reason.clone(),
        }
    }

    /// Embeds texts that a later call will store (memorize, import,
    /// replace), as that call will store them (admitted and redacted),
    /// without reading or writing the store: hosts call it before they take
    /// the store lock, so that the minutes a large import spends in the
    /// model hold no other caller up. The write then finds each vector
    /// here. Returns how many were embedded; 0 without a model.
    pub fn embed_ahead(&mut self, texts: &[String]) -> usize {
        let mut contents = admitted(&self.config, texts);
        contents.retain(|c| !self.ahead.contains_key(c));
        if contents.is_empty() {
            return 0;
        }
        if self.ahead.len() + contents.len() > AHEAD_MAX {
            self.ahead.clear();
        }
        let Some(embedder) = self.embedder() else {
            return 0;
        };
        // One call: the embedder batches texts of similar length together.
        let texts: Vec<&str> = contents.iter().map(String::as_str).collect();
        match embedder.embed(&texts, Role::Passage) {
            Ok(vectors) => {
                let n = vectors.len();
                self.ahead.extend(contents.into_iter().zip(vectors));
                n
            }
            Err(_) => 0, // the write embeds what is missing, or says why
        }
    }

    /// Hands out, and forgets, what [`Memory::embed_ahead`] made that no
    /// write has used yet, with the model's fingerprint: a host that embeds
    /// in a second instance passes them to [`Memory::accept_ahead`] of the
    /// instance that writes.
    pub fn take_ahead(&mut self) -> (String, Vec<(String, Vec<f32>)>) {
        let model = match &self.model {
            Model::Ready(e) => e.fingerprint().to_owned(),
            _ => String::new(),
        };
        (model, self.ahead.drain().collect())
    }

    /// Keeps embeddings another instance made ahead ([`Memory::take_ahead`])
    /// for this handle's next writes. Those of another model, of another
    /// dimension or not finite are ignored. Returns how many were kept.
    pub fn accept_ahead(&mut self, model: &str, items: Vec<(String, Vec<f32>)>) -> usize {
        let items = self.usable(model, items);
        if self.ahead.len() + items.len() > AHEAD_MAX {
            self.ahead.clear();
        }
        let n = items.len();
        self.ahead.extend(items);
        n
    }

    /// Keeps query embeddings another instance made
    /// ([`embed_queries_detached`]) for this handle's next recalls of the same
    /// text. Those of another model, of another dimension or not finite are
    /// ignored. Returns how many were kept.
    pub fn accept_queries(&mut self, model: &str, items: Vec<(String, Vec<f32>)>) -> usize {
        let items = self.usable(model, items);
        let kept = items.len();
        for (text, vector) in items {
            self.ahead_queries.retain(|(t, _)| *t != text);
            self.ahead_queries.push((text, vector));
        }
        let over = self.ahead_queries.len().saturating_sub(QUERIES_AHEAD_MAX);
        self.ahead_queries.drain(..over);
        kept
    }

    /// What another instance handed over that this handle can use: made by
    /// its own model (`model` is the maker's fingerprint), of its dimension,
    /// finite. Nothing without a model.
    fn usable(&mut self, model: &str, items: Vec<(String, Vec<f32>)>) -> Vec<(String, Vec<f32>)> {
        let Some(embedder) = self.embedder().filter(|e| e.fingerprint() == model) else {
            return Vec::new();
        };
        let dim = embedder.dim();
        items
            .into_iter()
            .filter(|(_, v)| v.len() == dim && v.iter().all(|x| x.is_finite()))
            .collect()
    }

    /// The query embedding of `text` another instance made, if one waits.
    pub(crate) fn take_query(&mut self, text: &str) -> Option<Vec<f32>> {
        let at = self.ahead_queries.iter().position(|(t, _)| t == text)?;
        Some(self.ahead_queries.remove(at).1)
    }

    /// One embedding per atom these mutations create or rewrite, appended as
    /// `Embed` mutations. Without a model, or if embedding fails, the write
    /// goes ahead without them (those atoms are keyword-only).
    fn embed_mutations(&mut self, mutations: &[Mutation]) -> Result<Vec<Mutation>> {
        if !self.has_model() {
            return Ok(Vec::new());
        }
        let atoms = &self.state.atoms;
        // (atom, content, whether the atom already holds this content)
        let puts: Vec<(AtomId, String, bool)> = mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::PutAtom(a) if !a.exposure.destroyed() && !a.content.is_empty() => {
                    let same = atoms.get(&a.id).is_some_and(|old| old.content == a.content);
                    Some((a.id, a.content.clone(), same))
                }
                _ => None,
            })
            .collect();
        // Unchanged content needs a vector only if it has none yet.
        if puts.iter().any(|p| p.2) {
            self.read_vectors()?;
        }
        let rows = self.state.vectors.rows();
        let wanted: Vec<(AtomId, String)> = puts
            .into_iter()
            .filter(|(id, _, same)| !same || rows.is_some_and(|r| !r.contains_key(id)))
            .map(|(id, content, _)| (id, content))
            .collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut ready: Vec<(AtomId, Vec<f32>)> = Vec::with_capacity(wanted.len());
        let mut missing: Vec<(AtomId, String)> = Vec::new();
        for (id, content) in wanted {
            match self.ahead.remove(&content) {
                Some(v) => ready.push((id, v)),
                None => missing.push((id, content)),
            }
        }
        let Some(embedder) = self.embedder() else {
            return Ok(Vec::new());
        };
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|(_, c)| c.as_str()).collect();
            match embedder.embed(&texts, Role::Passage) {
                Ok(vs) => ready.extend(missing.iter().map(|(id, _)| *id).zip(vs)),
                Err(e) => eprintln!("hmg: embedding failed ({e}); stored without a vector"),
            }
        }
        let model = embedder.fingerprint().to_owned();
        Ok(ready
            .into_iter()
            .map(|(id, v)| Mutation::EmbedRow {
                model: model.clone(),
                atom: id,
                row: Vectors::encode(&v),
            })
            .collect())
    }

    /// Reads the snapshot's vector rows if they are still unread (a large
    /// store leaves them on disk until a call needs them).
    pub(crate) fn read_vectors(&mut self) -> Result<()> {
        self.log.read_vectors(&mut self.state.vectors)
    }

    pub(crate) fn now(&mut self) -> Timestamp {
        self.env.now()
    }

    /// A new ULID, strictly greater than every id this handle made before.
    pub(crate) fn new_id(&mut self, now: Timestamp) -> AtomId {
        let random = self.env.random() & ((1u128 << 80) - 1);
        let candidate = ((now.0.max(0) as u128) << 80) | random;
        let mut id = candidate.max(self.last_id + 1);
        // A clock set back or a repeated random draw must never reuse an
        // atom's id: a new memory would overwrite it (fuzzing found a sealed
        // atom regaining content this way with a fixed clock).
        while self.state.atoms.contains_key(&AtomId(id)) {
            id += 1;
        }
        self.last_id = id;
        AtomId(id)
    }

    /// Commits one transaction (or, when it destroys content, commits it by
    /// compaction) and re-indexes what it touched.
    pub(crate) fn write(&mut self, mut mutations: Vec<Mutation>, erasing: bool) -> Result<()> {
        let embeddings = self.embed_mutations(&mutations)?;
        mutations.extend(embeddings);
        let txn: Txn = self.state.txn(mutations);
        let touched: Vec<AtomId> = txn.touched().collect();
        // A compaction stores the indexes, so they catch up first.
        let indexes = &mut self.indexes;
        let mut reindexed = false;
        let mut derive = |state: &State| {
            indexes.reindex(touched.iter().copied(), state);
            reindexed = true;
            indexes.encode(state)
        };
        let result = if erasing {
            self.log
                .commit_erasing_deriving(&mut self.state, txn, &mut derive)
        } else {
            self.log.commit_deriving(&mut self.state, txn, &mut derive)
        };
        if result.is_err() {
            self.stale = true;
            return result;
        }
        if !reindexed {
            self.indexes.reindex(touched, &self.state);
        }
        Ok(())
    }

    /// The target of a correction or governance action, or why it cannot be.
    /// Also the atom `history` shows; `remote` callers never reach personal ones.
    pub(crate) fn target(
        &self,
        id: &str,
        scope: &Scope,
        remote: bool,
    ) -> std::result::Result<&Atom, String> {
        let id: AtomId = id.parse()?;
        match self.state.atom(id) {
            Some(atom) if atom.scope.visible_from(scope, remote) => Ok(atom),
            _ => Err(format!("atom {id} not found in this scope")),
        }
    }
}
