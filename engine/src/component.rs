//! The component adapter: the only file that sees wit-bindgen types. It maps
//! WIT records to the domain and back, and engine errors to the WIT error.

#![allow(unsafe_code)] // generated export glue

use std::cell::RefCell;

use crate::atom::{self, AtomId};
use crate::capture;
use crate::graph::EntityType;
use crate::log::backend::FsBackend;
use crate::memory::{Config, Env, Memory, SystemEnv};
use crate::ops::{self, Effect};
use crate::scope::{Filter, Scope};
use crate::time::Timestamp;

wit_bindgen::generate!({
    path: "../wit",
    world: "engine",
});

use exports::hmg::memory::memory::{Guest as MemoryGuest, GuestStore, Store as StoreHandle};
use exports::hmg::memory::types as wit;

struct Component;

impl MemoryGuest for Component {
    type Store = StoreResource;
}

impl Guest for Component {
    fn preload(model_dir: String) -> Result<String, String> {
        let fingerprint = crate::embed::preload(model_dir.as_ref()).map_err(|e| e.to_string())?;
        // The secret rules too: compiled once here, they are in the snapshot
        // and no call pays for compiling them.
        crate::text::secrets::warm();
        // And the dictionary's line tables (cross-lingual recall).
        crate::index::dictionary::warm();
        // The instance is about to be snapshot: wasi-libc must forget the
        // directory handles it cached, or the restored instance would use
        // handles that belong to this one.
        unsafe extern "C" {
            fn __wasilibc_reset_preopens();
        }
        // SAFETY: no file or directory is open at this point (the model
        // files were read whole and closed), so nothing refers to the
        // preopens being forgotten; wasi-libc re-reads them on next use.
        unsafe { __wasilibc_reset_preopens() };
        Ok(fingerprint)
    }
}

struct StoreResource {
    memory: RefCell<Memory<FsBackend>>,
}

type WitResult<T> = Result<T, wit::Error>;

fn error(e: crate::Error) -> wit::Error {
    match e {
        crate::Error::Io(e) => wit::Error::Io(crate::error::describe_io(&e)),
        crate::Error::Corrupt(m) => wit::Error::Corrupt(m),
        crate::Error::Invalid(m) => wit::Error::Invalid(m),
        // Only a store opened on an unusable model directory gets here.
        crate::Error::Model(m) => wit::Error::Invalid(format!("embedding model: {m}")),
        crate::Error::Internal(m) => wit::Error::Internal(m),
    }
}

/// A WIT enum and its domain twin, each variant listed once: both
/// conversions are exhaustive matches, so a variant added on one side only
/// does not compile.
macro_rules! same_enum {
    ($wit:ty, $domain:ty { $($variant:ident),+ $(,)? }) => {
        impl From<$wit> for $domain {
            fn from(v: $wit) -> Self {
                match v { $(<$wit>::$variant => <$domain>::$variant),+ }
            }
        }
        impl From<$domain> for $wit {
            fn from(v: $domain) -> Self {
                match v { $(<$domain>::$variant => <$wit>::$variant),+ }
            }
        }
    };
}

same_enum!(
    wit::Effect,
    Effect {
        Applied,
        NoOp,
        Rejected
    }
);
same_enum!(
    wit::Kind,
    atom::Kind {
        Memory,
        Handoff,
        Lesson,
        Observation
    }
);
same_enum!(
    wit::Epistemic,
    atom::Epistemic {
        Possible,
        Actual,
        Necessary
    }
);
same_enum!(
    wit::Polarity,
    atom::Polarity {
        Affirmative,
        Negative,
        Conditional
    }
);
same_enum!(
    wit::ExposureState,
    atom::Exposure {
        Visible,
        Quarantined,
        Sealed,
        Tombstoned
    }
);
same_enum!(
    wit::CorrectAction,
    atom::CorrectAction {
        Negate,
        ConfirmActual,
        ConfirmNecessary,
        Demote,
        Replace,
    }
);
same_enum!(
    wit::GovernAction,
    atom::GovernAction {
        Quarantine,
        Restore,
        Seal,
        Tombstone,
        DeriveLesson,
    }
);

/// A WIT record and its domain twin with the same fields, each listed once:
/// the destructuring on both sides is exhaustive, so a field added to one
/// side only does not compile.
macro_rules! same_record {
    ($wit:path, $domain:path { $($field:ident),+ $(,)? }) => {
        impl From<$wit> for $domain {
            fn from(v: $wit) -> Self {
                let $wit { $($field),+ } = v;
                $domain { $($field),+ }
            }
        }
        impl From<$domain> for $wit {
            fn from(v: $domain) -> Self {
                let $domain { $($field),+ } = v;
                $wit { $($field),+ }
            }
        }
    };
}

same_enum!(
    wit::EntityType,
    EntityType {
        Person,
        Organisation,
        Project,
        Technology,
        Product,
        Service,
        File,
        Place,
        Code,
        Other,
    }
);
same_enum!(
    wit::CaptureMode,
    capture::Mode {
        Strict,
        Standard,
        Relaxed
    }
);
same_enum!(wit::Speaker, capture::Role { User, Assistant });
same_enum!(
    wit::CaptureSignal,
    capture::Signal {
        Remember,
        Forget,
        Profile,
        Possession,
        Preference,
        AssistantStyle,
        Decision,
        Constraint,
        Fact,
    }
);
same_enum!(
    wit::Exclusion,
    capture::Exclusion {
        Question,
        ChitChat,
        Code,
        TimeBound,
        BugReport,
    }
);

same_record!(
    wit::Scope,
    Scope {
        tenant_id,
        workspace,
        repository,
        branch,
        session
    }
);

impl From<wit::StoreFilter> for Filter {
    fn from(f: wit::StoreFilter) -> Filter {
        match f {
            wit::StoreFilter::WholeStore => Filter::WholeStore,
            wit::StoreFilter::VisibleFrom(s) => Filter::VisibleFrom(s.into()),
        }
    }
}

fn id(id: AtomId) -> String {
    id.to_string()
}

fn ids(list: &[AtomId]) -> Vec<String> {
    list.iter().map(|i| i.to_string()).collect()
}

fn time(t: Timestamp) -> String {
    t.rfc3339()
}

fn atom_view(v: ops::AtomView) -> wit::AtomView {
    wit::AtomView {
        atom_id: id(v.atom_id),
        content: v.content,
        kind: v.kind.into(),
        source: v.source,
        scope: v.scope.into(),
        epistemic: v.epistemic.into(),
        polarity: v.polarity.into(),
        exposure_state: v.exposure_state.into(),
        negated: v.negated,
        superseded_by: v.superseded_by.map(id),
        created_at: time(v.created_at),
        updated_at: time(v.updated_at),
    }
}

impl StoreResource {
    fn with<T>(&self, f: impl FnOnce(&mut Memory<FsBackend>) -> crate::Result<T>) -> WitResult<T> {
        // What an earlier call redacted is not this call's to report.
        let _ = crate::text::take_redactions();
        f(&mut self.memory.borrow_mut()).map_err(error)
    }
}

/// What the call that just ran redacted, for its result.
fn redactions() -> Vec<wit::Redaction> {
    crate::text::take_redactions()
        .into_iter()
        .map(|(kind, count)| wit::Redaction { kind, count })
        .collect()
}

/// The engine's configuration from the one a host passes.
fn store_config(config: wit::StoreConfig) -> Config {
    let defaults = Config::default();
    Config {
        max_content_bytes: config
            .max_content_bytes
            .map_or(defaults.max_content_bytes, |b| b as usize),
        compact_log_bytes: config
            .compact_log_bytes
            .unwrap_or(defaults.compact_log_bytes),
        brief_budget_chars: config
            .brief_budget_chars
            .map_or(defaults.brief_budget_chars, |b| b as usize),
        model_dir: config.model_dir.map(Into::into),
        salvage: config.salvage.unwrap_or(false),
        personal_data: config.personal_data.map_or(defaults.personal_data, |p| {
            crate::text::secrets::PersonalData {
                payment_cards: p.payment_cards,
                national_ids: p.national_ids,
                emails: p.emails,
                phones: p.phones,
            }
        }),
        ..defaults
    }
}

fn ahead_embeddings(model: String, items: Vec<(String, Vec<f32>)>) -> wit::AheadEmbeddings {
    wit::AheadEmbeddings {
        model,
        items: items
            .into_iter()
            .map(|(content, vector)| wit::AheadEmbedding { content, vector })
            .collect(),
    }
}

/// The model and `(content, vector)` pairs of what another instance made.
fn ahead_items(embeddings: wit::AheadEmbeddings) -> (String, Vec<(String, Vec<f32>)>) {
    let items = embeddings
        .items
        .into_iter()
        .map(|e| (e.content, e.vector))
        .collect();
    (embeddings.model, items)
}

impl GuestStore for StoreResource {
    fn open(dir: String, config: wit::StoreConfig) -> WitResult<StoreHandle> {
        let config = store_config(config);
        let backend = FsBackend::new(&dir).map_err(|e| wit::Error::Io(format!("{dir}: {e}")))?;
        let memory = Memory::open(backend, config, Box::new(SystemEnv)).map_err(error)?;
        Ok(StoreHandle::new(StoreResource {
            memory: RefCell::new(memory),
        }))
    }

    fn embed_detached(config: wit::StoreConfig, texts: Vec<String>) -> wit::AheadEmbeddings {
        let (model, items) = crate::memory::embed_detached(&store_config(config), &texts, None);
        ahead_embeddings(model, items)
    }

    fn embed_queries_detached(
        config: wit::StoreConfig,
        queries: Vec<String>,
    ) -> wit::AheadEmbeddings {
        let now = SystemEnv.now();
        let (model, items) =
            crate::memory::embed_queries_detached(&store_config(config), &queries, now, None);
        ahead_embeddings(model, items)
    }

    fn memorize(&self, req: wit::MemorizeRequest) -> WitResult<wit::MemorizeResult> {
        let req = ops::MemorizeRequest {
            content: req.content,
            source: req.source,
            scope: req.scope.into(),
        };
        let r = self.with(|m| m.memorize(&req))?;
        Ok(wit::MemorizeResult {
            atom_id: r.atom_id.map(id),
            effect: r.effect.into(),
            reason: r.reason,
            deduped_with: r.deduped_with.map(id),
            redactions: redactions(),
        })
    }

    fn recall(&self, req: wit::RecallRequest) -> WitResult<wit::RecallResult> {
        let explain = req.explain.unwrap_or(false);
        let req = ops::RecallRequest {
            query: req.query,
            max_results: req.max_results,
            include_negated: req.include_negated.unwrap_or(false),
            scope: req.scope.into(),
            remote: req.remote.unwrap_or(false),
            explain: req.explain.unwrap_or(false),
            include_graph: req.include_graph.unwrap_or(false),
        };
        let r = self.with(|m| m.recall(&req))?;
        let atoms = r
            .atoms
            .into_iter()
            .map(|a| wit::RecalledAtom {
                atom_id: id(a.atom_id),
                content: a.content,
                score: a.score,
                created_at: time(a.created_at),
                source: a.source,
                kind: a.kind.into(),
                epistemic: a.epistemic.into(),
                polarity: a.polarity.into(),
                negated: a.negated,
                explain: explain.then(|| {
                    a.explain
                        .into_iter()
                        .map(|s| wit::Signal {
                            name: s.name.to_owned(),
                            value: s.value,
                            contribution: s.contribution,
                        })
                        .collect()
                }),
            })
            .collect();
        Ok(wit::RecallResult {
            atoms,
            reason: r.reason,
            graph: r.graph.map(|(nodes, edges)| wit::GraphExpansion {
                nodes: nodes.into_iter().map(node).collect(),
                edges: edges.into_iter().map(graph_edge).collect(),
            }),
        })
    }

    fn correct(&self, req: wit::CorrectRequest) -> WitResult<wit::CorrectResult> {
        let req = ops::CorrectRequest {
            target_atom: req.target_atom,
            action: req.action.into(),
            reason: req.reason,
            new_content: req.new_content,
            scope: req.scope.into(),
            by: req.by,
        };
        let r = self.with(|m| m.correct(&req))?;
        Ok(wit::CorrectResult {
            effect: r.effect.into(),
            target_atom: r.target_atom,
            new_atom_id: r.new_atom_id.map(id),
            reason: r.reason,
            redactions: redactions(),
        })
    }

    fn govern(&self, req: wit::GovernRequest) -> WitResult<wit::GovernResult> {
        let req = ops::GovernRequest {
            target_atom: req.target_atom,
            action: req.action.into(),
            reason: req.reason,
            lesson_content: req.lesson_content,
            scope: req.scope.into(),
            by: req.by,
        };
        let r = self.with(|m| m.govern(&req))?;
        Ok(wit::GovernResult {
            effect: r.effect.into(),
            target_atom: r.target_atom,
            lesson_atom_id: r.lesson_atom_id.map(id),
            reason: r.reason,
            redactions: redactions(),
        })
    }

    fn handoff(&self, req: wit::HandoffRequest) -> WitResult<wit::HandoffResult> {
        let req = ops::HandoffRequest {
            summary: req.summary,
            source: req.source,
            scope: req.scope.into(),
        };
        let r = self.with(|m| m.handoff(&req))?;
        Ok(wit::HandoffResult {
            atom_id: r.atom_id.map(id),
            effect: r.effect.into(),
            reason: r.reason,
            redactions: redactions(),
        })
    }

    fn history(&self, req: wit::HistoryRequest) -> WitResult<wit::HistoryResult> {
        let req = ops::HistoryRequest {
            atom_id: req.atom_id,
            scope: req.scope.into(),
            remote: req.remote.unwrap_or(false),
        };
        let r = self.with(|m| m.history(&req))?;
        Ok(wit::HistoryResult {
            current: r.current.map(atom_view),
            relations: wit::Relations {
                supersedes: ids(&r.relations.supersedes),
                superseded_by: ids(&r.relations.superseded_by),
                related_lessons: ids(&r.relations.related_lessons),
            },
            corrections: r
                .corrections
                .into_iter()
                .map(|c| wit::CorrectionRecord {
                    action: c.action.into(),
                    reason: c.reason,
                    at: time(c.at),
                    by: c.by,
                    new_atom_id: c.new_atom_id.map(id),
                    change: c.change,
                })
                .collect(),
            exposure_history: r
                .exposure_history
                .into_iter()
                .map(|e| wit::ExposureRecord {
                    from: e.from.into(),
                    to: e.to.into(),
                    reason: e.reason,
                    at: time(e.at),
                    by: e.by,
                })
                .collect(),
            triples: r.triples.into_iter().map(graph_edge).collect(),
            reason: r.reason,
        })
    }

    fn stats(&self, filter: wit::StoreFilter) -> WitResult<wit::StoreStats> {
        let filter = Filter::from(filter);
        let s = self.with(|m| m.stats(&filter))?;
        Ok(wit::StoreStats {
            atoms: s.atoms,
            edges: s.edges,
            indexes: wit::IndexCoverage {
                semantic: s.indexes.semantic,
                keyword: s.indexes.keyword,
                temporal: s.indexes.temporal,
                categorical: s.indexes.categorical,
            },
            snapshot_version: s.snapshot_version,
            model: s.model,
            kept_aside: s
                .kept_aside
                .into_iter()
                .map(|(name, bytes)| wit::KeptFile { name, bytes })
                .collect(),
        })
    }

    fn notices(&self) -> Vec<String> {
        self.memory.borrow_mut().take_notices()
    }

    fn brief(&self, req: wit::BriefRequest) -> WitResult<wit::BriefResult> {
        let req = ops::BriefRequest {
            scope: req.scope.into(),
            remote: req.remote.unwrap_or(false),
            budget_chars: req.budget_chars,
        };
        let r = self.with(|m| m.brief(&req))?;
        Ok(wit::BriefResult {
            text: r.text,
            atom_ids: ids(&r.atom_ids),
        })
    }

    fn export(&self, filter: wit::StoreFilter) -> WitResult<String> {
        let filter = Filter::from(filter);
        self.with(|m| m.export(&filter))
    }

    fn embed_ahead(&self, texts: Vec<String>) -> u32 {
        self.memory.borrow_mut().embed_ahead(&texts) as u32
    }

    fn take_ahead(&self) -> wit::AheadEmbeddings {
        let (model, items) = self.memory.borrow_mut().take_ahead();
        ahead_embeddings(model, items)
    }

    fn give_ahead(&self, embeddings: wit::AheadEmbeddings) -> u32 {
        let (model, items) = ahead_items(embeddings);
        self.memory.borrow_mut().accept_ahead(&model, items) as u32
    }

    fn give_queries(&self, embeddings: wit::AheadEmbeddings) -> u32 {
        let (model, items) = ahead_items(embeddings);
        self.memory.borrow_mut().accept_queries(&model, items) as u32
    }

    fn import(&self, jsonl: String) -> WitResult<wit::ImportResult> {
        let r = self.with(|m| m.import(&jsonl))?;
        Ok(wit::ImportResult {
            atoms_added: r.atoms_added,
            atoms_skipped: r.atoms_skipped,
            edges_added: r.edges_added,
            events_added: r.events_added,
            triples_added: r.triples_added,
            rejected_lines: r.rejected_lines,
            reason: r.reason,
            redactions: redactions(),
        })
    }

    fn extract_entities(&self, text: String) -> WitResult<wit::ExtractResult> {
        Ok(wit::ExtractResult {
            entities: ops::extract_entities(&text)
                .into_iter()
                .map(|(name, kind)| wit::NamedEntity {
                    name,
                    type_: kind.into(),
                })
                .collect(),
        })
    }

    fn neighborhood(&self, req: wit::NeighborhoodRequest) -> WitResult<wit::NeighborhoodResult> {
        let req = ops::NeighborhoodRequest {
            entity: req.entity,
            depth: req.depth,
            limit: req.limit,
            within: within(req.scope, req.remote, req.include_invalid),
        };
        let r = self.with(|m| m.neighborhood(&req))?;
        Ok(wit::NeighborhoodResult {
            nodes: r.nodes.into_iter().map(node).collect(),
            edges: r.edges.into_iter().map(graph_edge).collect(),
            truncated: r.truncated,
            reason: r.reason,
        })
    }

    fn shortest_path(&self, req: wit::PathRequest) -> WitResult<wit::PathResult> {
        let req = ops::PathRequest {
            from: req.from,
            to: req.to,
            max_depth: req.max_depth,
            within: within(req.scope, req.remote, None),
        };
        let r = self.with(|m| m.shortest_path(&req))?;
        Ok(wit::PathResult {
            found: r.found,
            nodes: r.nodes.into_iter().map(node).collect(),
            edges: r.edges.into_iter().map(graph_edge).collect(),
            reason: r.reason,
        })
    }

    fn relate(&self, req: wit::RelateRequest) -> WitResult<wit::RelateResult> {
        let req = ops::RelateRequest {
            source: req.source,
            relation: req.relation,
            target: req.target,
            source_type: req.source_type.map(Into::into),
            target_type: req.target_type.map(Into::into),
            scope: req.scope.into(),
            by: req.by,
        };
        let r = self.with(|m| m.relate(&req))?;
        Ok(wit::RelateResult {
            effect: r.effect.into(),
            atom_id: r.atom_id.map(id),
            reason: r.reason,
        })
    }

    fn graph_view(&self, req: wit::GraphViewRequest) -> WitResult<wit::GraphViewResult> {
        let req = ops::ViewRequest {
            within: within(req.scope, req.remote, None),
            limit: req.limit,
            kinds: req
                .types
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
        };
        let r = self.with(|m| m.graph_view(&req))?;
        Ok(wit::GraphViewResult {
            nodes: r.nodes.into_iter().map(node).collect(),
            mentions: r
                .mentions
                .into_iter()
                .map(|m| wit::Mention {
                    atom_id: id(m.atom_id),
                    entity: m.entity,
                })
                .collect(),
            edges: r.edges.into_iter().map(graph_edge).collect(),
            truncated: r.truncated,
        })
    }

    fn observe(&self, req: wit::ObserveRequest) -> WitResult<wit::ObserveResult> {
        let req = ops::ObserveRequest {
            turn: req.turn,
            mode: req.mode.map(Into::into).unwrap_or_default(),
            role: req.role.map(Into::into).unwrap_or_default(),
            dry_run: req.dry_run.unwrap_or(false),
            scope: req.scope.into(),
            by: req.by,
        };
        let r = self.with(|m| m.observe(&req))?;
        Ok(wit::ObserveResult {
            mode: r.mode.into(),
            threshold: r.threshold,
            excluded: r.excluded.map(Into::into),
            candidates: r
                .candidates
                .into_iter()
                .map(|c| wit::CaptureCandidate {
                    content: c.content,
                    signal: c.signal.into(),
                    confidence: c.confidence,
                    captured: c.captured,
                    atom_id: c.atom_id.map(id),
                    effect: c.effect.map(Into::into),
                    reason: c.reason,
                })
                .collect(),
            reason: r.reason,
            redactions: redactions(),
        })
    }
}

fn within(
    scope: wit::Scope,
    remote: Option<bool>,
    include_invalid: Option<bool>,
) -> ops::GraphScope {
    ops::GraphScope {
        scope: scope.into(),
        remote: remote.unwrap_or(false),
        include_invalid: include_invalid.unwrap_or(false),
    }
}

fn node(n: ops::Node) -> wit::GraphNode {
    wit::GraphNode {
        name: n.name,
        type_: n.kind.into(),
        atom_count: n.atom_count,
    }
}

fn graph_edge(e: ops::GraphEdge) -> wit::GraphEdge {
    wit::GraphEdge {
        source: e.source,
        relation: e.relation,
        target: e.target,
        atom_id: id(e.atom_id),
        valid_at: time(e.valid_at),
        invalid_at: e.invalid_at.map(time),
    }
}

export!(Component);
