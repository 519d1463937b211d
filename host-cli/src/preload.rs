//! Pre-initialisation: the engine component with the embedding model
//! already loaded, so that a process starts recalling in milliseconds
//! instead of spending ~0.5 s loading the model.
//!
//! `prepare` instantiates the component (instrumented by wasmtime-wizer),
//! grants it the model directory, calls its `preload` export, snapshots the
//! instance's memory into a new component and caches that compiled
//! (`engine-<component>-<engine>-<model>.preloaded.cwasm` in the cache dir).
//! Later processes load the cached file; wasmtime maps its memory image
//! copy-on-write, so only the pages a call touches are read. The cache key
//! covers the component, the wasmtime configuration, the model directory and
//! its files' sizes and modification times: any change makes a new key, and
//! without a matching file the plain component is used.

use std::fs;
use std::future::Future;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use anyhow::{Context as _, Result, anyhow};
use wasmtime::component::{Component, Instance, Lift, Linker, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use crate::component;
use crate::engine::{Ctx, GUEST_MODEL};

/// Where the pre-initialised engine for this component, engine and model lives.
pub fn artifact_path(
    engine: &Engine,
    component_hash: &str,
    cache_dir: &Path,
    model_dir: &Path,
) -> PathBuf {
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    component_hash.hash(&mut h);
    fs::canonicalize(model_dir)
        .unwrap_or_else(|_| model_dir.to_owned())
        .hash(&mut h);
    let mut files: Vec<(String, u64, Option<std::time::SystemTime>)> = fs::read_dir(model_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file().then(|| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    meta.len(),
                    meta.modified().ok(),
                )
            })
        })
        .collect();
    files.sort();
    files.hash(&mut h);
    cache_dir.join(format!(
        "engine-{component_hash}-{:016x}.preloaded.cwasm",
        h.finish()
    ))
}

/// Builds the pre-initialised engine and writes it to `path`; returns the
/// model's fingerprint.
pub fn prepare(
    engine: &Engine,
    linker: &Linker<Ctx>,
    component: &[u8],
    model_dir: &Path,
    path: &Path,
) -> Result<String> {
    let wizer = Wizer::new();
    let (cx, instrumented) = wizer
        .instrument_component(component)
        .map_err(|e| anyhow!("cannot instrument the engine: {e}"))?;
    let instrumented = Component::new(engine, &instrumented)
        .map_err(|e| anyhow!("cannot compile the instrumented engine: {e}"))?;
    let mut store = Store::new(engine, Ctx::granting(None, Some(model_dir))?);
    let instance = linker
        .instantiate(&mut store, &instrumented)
        .map_err(|e| anyhow!("cannot instantiate the engine: {e}"))?;
    let fingerprint = component::preload(&mut store, &instance, GUEST_MODEL)?;
    // The snapshot copies whole linear memories out of the instance.
    store.set_hostcall_fuel(usize::MAX);
    let snapshot = block_on(wizer.snapshot_component(
        &cx,
        &mut Snapshot {
            store: &mut store,
            instance,
        },
    ))
    .map_err(|e| anyhow!("cannot snapshot the engine: {e}"))?;
    let compiled = engine
        .precompile_component(&snapshot)
        .map_err(|e| anyhow!("cannot compile the pre-initialised engine: {e}"))?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&tmp, &compiled).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    remove_stale(path);
    Ok(fingerprint)
}

/// Removes compiled engines of other component builds beside `path` (they
/// are hundreds of megabytes each and can never be used again).
fn remove_stale(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    // engine-<component>-<key>.preloaded.cwasm
    let Some(prefix) = name
        .splitn(3, '-')
        .take(2)
        .reduce(|_, b| b)
        .map(|c| format!("engine-{c}-"))
    else {
        return;
    };
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let other = entry.file_name().to_string_lossy().into_owned();
        if other.starts_with("engine-") && other.ends_with(".cwasm") && !other.starts_with(&prefix)
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Drives a future that never waits (every call below completes at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// Wizer reads the instance's state through exports it added; these calls
/// are synchronous here.
struct Snapshot<'a> {
    store: &'a mut Store<Ctx>,
    instance: Instance,
}

impl Snapshot<'_> {
    fn call<R: Lift + Send + Sync + 'static, T>(
        &mut self,
        instance: &str,
        func: &str,
        use_ret: impl FnOnce(&Store<Ctx>, R) -> T,
    ) -> T {
        let (_, exported) = self
            .instance
            .get_export(&mut *self.store, None, instance)
            .expect("wizer's access instance is exported");
        let (_, index) = self
            .instance
            .get_export(&mut *self.store, Some(&exported), func)
            .expect("wizer's access function is exported");
        let func = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, index)
            .expect("wizer's access function has the expected type");
        let (ret,) = func
            .call(&mut *self.store, ())
            .expect("wizer's access function runs");
        use_ret(self.store, ret)
    }
}

impl ComponentInstanceState for Snapshot<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        self.call(instance, func, |store, list: WasmList<u8>| {
            contents(list.as_le_slice(store));
        });
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func, |_, r| r)
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func, |_, r| r)
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call(instance, func, |_, r: f32| r.to_bits())
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call(instance, func, |_, r: f64| r.to_bits())
    }
}
