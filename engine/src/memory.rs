//! [`Memory`]: one open store — durable state, its indexes, the clock and id
//! source — and the helpers every operation shares. The operations
//! themselves live in `ops/`, one file each.

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
}

impl<B: Backend> Memory<B> {
    pub fn open(backend: B, config: Config, env: Box<dyn Env + Send>) -> Result<Memory<B>> {
        let (log, state, recovery) =
            Log::open_with(backend, config.compact_log_bytes, config.salvage)?;
        let indexes = Indexes::build(&state);
        let model = config
            .model_dir
            .clone()
            .map_or(Model::None, Model::Unloaded);
        Ok(Memory {
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
        })
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
            self.indexes = Indexes::build(&self.state);
            self.stale = false;
            return Ok(());
        }
        let caught = self.log.catch_up(&mut self.state)?;
        self.notices.extend(caught.recovery.notices);
        if caught.reloaded {
            self.indexes = Indexes::build(&self.state);
        } else {
            self.reindex(caught.touched);
        }
        Ok(())
    }

    fn reindex(&mut self, ids: impl IntoIterator<Item = AtomId>) {
        if self.indexes.vector_model_changed(&self.state.vectors) {
            self.indexes = Indexes::build(&self.state);
            return;
        }
        for id in ids {
            if let Some(atom) = self.state.atoms.get(&id) {
                self.indexes.upsert(atom, &self.state);
            }
        }
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

    /// One embedding per atom these mutations create or rewrite, appended as
    /// `Embed` mutations. Without a model, or if embedding fails, the write
    /// goes ahead without them (those atoms are keyword-only).
    fn embed_mutations(&mut self, mutations: &[Mutation]) -> Vec<Mutation> {
        let vectors = &self.state.vectors;
        let atoms = &self.state.atoms;
        let wanted: Vec<(AtomId, String)> = mutations
            .iter()
            .filter_map(|m| match m {
                Mutation::PutAtom(a) if !a.exposure.destroyed() && !a.content.is_empty() => {
                    let same = atoms.get(&a.id).is_some_and(|old| old.content == a.content);
                    (!same || !vectors.rows.contains_key(&a.id)).then(|| (a.id, a.content.clone()))
                }
                _ => None,
            })
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let Some(embedder) = self.embedder() else {
            return Vec::new();
        };
        let texts: Vec<&str> = wanted.iter().map(|(_, c)| c.as_str()).collect();
        match embedder.embed(&texts, Role::Passage) {
            Ok(vs) => {
                let model = embedder.fingerprint().to_owned();
                wanted
                    .iter()
                    .zip(vs)
                    .map(|((id, _), v)| Mutation::Embed {
                        model: model.clone(),
                        atom: *id,
                        vector: Vectors::encode(&v),
                    })
                    .collect()
            }
            Err(e) => {
                eprintln!("hmg: embedding failed ({e}); stored without a vector");
                Vec::new()
            }
        }
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
        let embeddings = self.embed_mutations(&mutations);
        mutations.extend(embeddings);
        let txn: Txn = self.state.txn(mutations);
        let touched: Vec<AtomId> = txn.touched().collect();
        let result = if erasing {
            self.log.commit_erasing(&mut self.state, txn)
        } else {
            self.log.commit(&mut self.state, txn)
        };
        if result.is_err() {
            self.stale = true;
            return result;
        }
        self.reindex(touched);
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
