//! Shared helpers for the end-to-end tests in `tests/`: a runtime over the
//! embedded component, stores in temporary directories, the built `hmg`
//! binary, and a byte scan of a store directory.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hmg_cli::api::{
    BriefRequest, BriefResult, HistoryRequest, HistoryResult, Scope, StoreConfig, StoreFilter,
    StoreStats,
};
use hmg_cli::{Runtime, Session};

/// One runtime per test process (compiled code comes from the cache).
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Runtime::new(hmg_cli::default_cache_dir().as_deref()).expect("engine component loads")
    })
}

pub fn scope() -> Scope {
    Scope {
        tenant_id: "qiankun".into(),
        workspace: Some("mem0ai".into()),
        repository: Some("mem0".into()),
        branch: Some("main".into()),
        session: None,
    }
}

pub fn open(dir: &Path) -> Session {
    open_with(dir, None, &StoreConfig::default())
}

/// The embedding model `./setup.sh` prepared (`$HMG_MODEL` or the cache);
/// tests of semantic recall fail without it rather than pass vacuously.
pub fn model_dir() -> PathBuf {
    hmg_cli::locate::model_dir(None)
        .expect("no embedding model: run ./setup.sh (or scripts/model/fetch.sh)")
}

/// A store with the embedding model: hybrid recall, as users get it.
pub fn open_with_model(dir: &Path) -> Session {
    open_with(dir, Some(&model_dir()), &StoreConfig::default())
}

pub fn open_with(dir: &Path, model: Option<&Path>, config: &StoreConfig) -> Session {
    runtime()
        .open(dir, model, config, scope(), "tester")
        .expect("store opens")
}

/// The calls tests make most, from the session's own scope.
pub trait Shortcuts {
    fn history_of(&mut self, atom_id: &str) -> anyhow::Result<HistoryResult>;
    fn brief_here(&mut self) -> anyhow::Result<BriefResult>;
    fn stats_all(&mut self) -> anyhow::Result<StoreStats>;
    fn export_all(&mut self) -> anyhow::Result<String>;
}

impl Shortcuts for Session {
    fn history_of(&mut self, atom_id: &str) -> anyhow::Result<HistoryResult> {
        let req = HistoryRequest {
            atom_id: atom_id.into(),
            scope: self.scope.clone(),
            remote: None,
        };
        self.history(&req)
    }

    fn brief_here(&mut self) -> anyhow::Result<BriefResult> {
        let req = BriefRequest {
            scope: self.scope.clone(),
            remote: None,
            budget_chars: None,
        };
        self.brief(&req)
    }

    fn stats_all(&mut self) -> anyhow::Result<StoreStats> {
        self.stats(&StoreFilter::WholeStore)
    }

    fn export_all(&mut self) -> anyhow::Result<String> {
        self.export(&StoreFilter::WholeStore)
    }
}

/// This crate's directory, found at run time (cargo sets it for tests): a
/// test binary built from another checkout that shares the target directory
/// must not read that checkout's files.
pub fn crate_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
        .into()
}

/// The `hmg` binary next to this test executable (built by the test command).
pub fn hmg_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile dir");
    let bin = dir.join(format!("hmg{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build the workspace first (./test.sh does)",
        bin.display()
    );
    bin
}

/// Files under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read store dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .expect("read file")
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                hits.push(path);
            }
        }
    }
    hits
}
