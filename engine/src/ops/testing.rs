//! A test harness: a memory over the in-memory backend with a clock that
//! moves only when told.

use super::*;
use crate::atom::{AtomId, CorrectAction, GovernAction};
use crate::log::backend::MemBackend;
use crate::memory::{Config, FixedEnv, Memory};
use crate::scope::Scope;
use crate::time::{MS_PER_DAY, Timestamp};

/// 2026-07-25T14:00:00Z.
pub const T0: Timestamp = Timestamp(1_784_988_000_000);

pub struct Harness {
    pub memory: Memory<MemBackend>,
    pub backend: MemBackend,
    pub env: std::sync::Arc<std::sync::Mutex<FixedEnv>>,
    pub scope: Scope,
}

/// An Env whose clock the test can move from outside.
struct SharedEnv(std::sync::Arc<std::sync::Mutex<FixedEnv>>);

impl crate::memory::Env for SharedEnv {
    fn now(&mut self) -> Timestamp {
        self.0.lock().unwrap().now
    }
    fn random(&mut self) -> u128 {
        let mut env = self.0.lock().unwrap();
        env.counter += 1;
        env.counter
    }
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with(MemBackend::new(), Config::default())
    }

    pub fn with(backend: MemBackend, config: Config) -> Harness {
        let env = std::sync::Arc::new(std::sync::Mutex::new(FixedEnv {
            now: T0,
            counter: 0,
        }));
        let memory =
            Memory::open(backend.clone(), config, Box::new(SharedEnv(env.clone()))).unwrap();
        Harness {
            memory,
            backend,
            env,
            scope: Scope::new("qiankun", "mem0ai", "mem0", "main"),
        }
    }

    /// The same store opened again (a new process), with `embedder` if given.
    pub fn reopen(&mut self, embedder: Option<crate::embed::hashed::HashedEmbedder>) {
        let env = Box::new(SharedEnv(self.env.clone()));
        self.memory = Memory::open(self.backend.clone(), self.memory.config.clone(), env).unwrap();
        if let Some(e) = embedder {
            self.memory.set_embedder(Box::new(e));
        }
    }

    pub fn advance_days(&self, days: f64) {
        self.env.lock().unwrap().now.0 += (days * MS_PER_DAY as f64) as i64;
    }

    pub fn memorize(&mut self, content: &str) -> MemorizeResult {
        self.memorize_in(content, &self.scope.clone())
    }

    pub fn memorize_in(&mut self, content: &str, scope: &Scope) -> MemorizeResult {
        let req = MemorizeRequest {
            content: content.into(),
            source: Some("user".into()),
            scope: scope.clone(),
        };
        self.memory.memorize(&req).unwrap()
    }

    pub fn id(&mut self, content: &str) -> AtomId {
        let result = self.memorize(content);
        assert_eq!(result.effect, Effect::Applied, "{result:?}");
        result.atom_id.unwrap()
    }

    pub fn recall(&mut self, query: &str) -> Vec<Recalled> {
        self.recall_with(RecallRequest {
            query: query.into(),
            scope: self.scope.clone(),
            ..Default::default()
        })
    }

    pub fn recall_with(&mut self, req: RecallRequest) -> Vec<Recalled> {
        let result = self.memory.recall(&req).unwrap();
        assert_eq!(result.reason, None);
        result.atoms
    }

    pub fn recall_ids(&mut self, query: &str) -> Vec<AtomId> {
        self.recall(query).iter().map(|r| r.atom_id).collect()
    }

    pub fn correct(
        &mut self,
        id: AtomId,
        action: CorrectAction,
        new_content: Option<&str>,
    ) -> CorrectResult {
        let req = CorrectRequest {
            target_atom: id.to_string(),
            action,
            reason: format!("test {action}"),
            new_content: new_content.map(Into::into),
            scope: self.scope.clone(),
            by: None,
        };
        self.memory.correct(&req).unwrap()
    }

    pub fn govern(
        &mut self,
        id: AtomId,
        action: GovernAction,
        lesson: Option<&str>,
    ) -> GovernResult {
        let req = GovernRequest {
            target_atom: id.to_string(),
            action,
            reason: format!("test {action}"),
            lesson_content: lesson.map(Into::into),
            scope: self.scope.clone(),
            by: None,
        };
        self.memory.govern(&req).unwrap()
    }

    pub fn history(&mut self, id: AtomId) -> HistoryResult {
        let req = HistoryRequest {
            atom_id: id.to_string(),
            scope: self.scope.clone(),
            remote: false,
        };
        self.memory.history(&req).unwrap()
    }

    /// Whether any file of the store holds these bytes.
    pub fn files_contain(&self, needle: &str) -> bool {
        self.backend
            .all_bytes()
            .iter()
            .any(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
    }
}
