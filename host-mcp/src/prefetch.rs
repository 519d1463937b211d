//! Embedding on a second core while the engine thread writes.
//!
//! A write's cost is almost all its embedding (≈ 25–40 ms a passage in the
//! component), and the engine thread runs one call at a time, so a burst of
//! memorize calls used one core. Here the contents of queued writes are
//! offered to a helper thread holding a second instance of the component
//! with no store open ([`Embedder`]): it embeds the contents *behind* the
//! front of the queue, one at a time, while the engine thread embeds the
//! front itself; before each write the engine thread takes what the helper
//! finished and hands it to its session (`give-ahead`). The write then
//! embeds nothing the helper made, and nothing is embedded twice: a content
//! the helper is working on is waited for, one the helper has not started
//! is taken back.
//!
//! The helper's instance (the model's memory, ≈ 100 MB) exists only while
//! writes keep arriving: it is made when a second write is queued behind
//! the first and dropped after [`IDLE`] without one. Calls one at a time
//! never start it.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hmg_cli::{Embedder, Embeddings, Session};

/// The helper's instance is dropped after this long without a write.
pub const IDLE: Duration = Duration::from_secs(10);
/// Contents waiting at most (the engine's queue bound); more are not offered.
const PENDING_MAX: usize = 256;
/// How long a write waits for the helper to finish a content it started.
const WAIT_MAX: Duration = Duration::from_secs(30);

#[derive(Default)]
struct State {
    /// Contents of queued writes the helper has not started, in queue order.
    pending: VecDeque<String>,
    /// The content the helper is embedding now.
    working: Option<String>,
    /// What the helper finished and no write has taken yet.
    ready: Vec<Embeddings>,
    /// Contents embedded by the helper and taken by a write (for the note
    /// at exit).
    helped: u64,
    /// The helper cannot embed (no second instance): offers are ignored.
    disabled: bool,
    stopping: bool,
}

pub struct Prefetch {
    state: Mutex<State>,
    changed: Condvar,
}

impl Prefetch {
    /// Starts the helper thread; `spawn` makes its instance when a burst
    /// begins. The thread ends when [`Prefetch::stop`] is called.
    pub fn start(
        spawn: impl Fn() -> anyhow::Result<Embedder> + Send + 'static,
    ) -> (Arc<Prefetch>, JoinHandle<()>) {
        let prefetch = Arc::new(Prefetch {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let shared = Arc::clone(&prefetch);
        let thread = std::thread::Builder::new()
            .name("hmg-embed".into())
            .spawn(move || shared.help(spawn))
            .expect("the embedding thread starts");
        (prefetch, thread)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A write storing `content` was queued.
    pub fn offer(&self, content: &str) {
        let mut state = self.lock();
        if state.disabled || state.stopping || state.pending.len() >= PENDING_MAX {
            return;
        }
        state.pending.push_back(content.to_owned());
        drop(state);
        self.changed.notify_all();
    }

    /// Called by the engine thread before the write of `content`: the
    /// contents queued before it are no longer wanted (their calls ran or
    /// were dropped), `content` itself is taken back unless the helper is
    /// on it — then this waits for it — and everything the helper finished
    /// is handed to `session`.
    pub fn before_write(&self, content: &str, session: &mut Session) {
        let mut state = self.lock();
        if let Some(at) = state.pending.iter().position(|c| c == content) {
            state.pending.drain(..=at);
        }
        let mut waited = Duration::ZERO;
        while state.working.as_deref() == Some(content) && waited < WAIT_MAX {
            let step = Duration::from_millis(100);
            state = self
                .changed
                .wait_timeout(state, step)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            waited += step;
        }
        let ready = std::mem::take(&mut state.ready);
        drop(state);
        let mut kept = 0;
        for embeddings in &ready {
            kept += session.accept(embeddings).unwrap_or(0);
        }
        self.lock().helped += u64::from(kept);
    }

    /// How many writes the helper embedded for.
    pub fn helped(&self) -> u64 {
        self.lock().helped
    }

    /// Ends the helper thread (after the content it is on).
    pub fn stop(&self) {
        self.lock().stopping = true;
        self.changed.notify_all();
    }

    /// The helper thread: waits for a content behind the front of the queue,
    /// embeds it, publishes the result.
    fn help(&self, spawn: impl Fn() -> anyhow::Result<Embedder>) {
        let mut embedder: Option<Embedder> = None;
        let mut last_used = Instant::now();
        let mut state = self.lock();
        loop {
            if state.stopping {
                return;
            }
            // The front is the engine thread's next write: take the one
            // behind it.
            if state.pending.len() < 2 {
                if embedder.is_some() && last_used.elapsed() >= IDLE {
                    // The burst is over: give the memory back (outside the
                    // lock, freeing an instance takes a moment).
                    drop(state);
                    embedder = None;
                    state = self.lock();
                    continue;
                }
                state = self
                    .changed
                    .wait_timeout(state, IDLE)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            let content = state.pending.remove(1).expect("two are pending");
            state.working = Some(content.clone());
            drop(state);
            if embedder.is_none() {
                match spawn() {
                    Ok(e) => embedder = Some(e),
                    Err(e) => {
                        eprintln!(
                            "hmg-mcp: no second instance for embedding ({e:#}); one core embeds"
                        );
                        let mut state = self.lock();
                        state.disabled = true;
                        state.pending.clear();
                        state.working = None;
                        drop(state);
                        self.changed.notify_all();
                        return;
                    }
                }
            }
            let made = embedder
                .as_mut()
                .map(|e| e.embed(std::slice::from_ref(&content)));
            last_used = Instant::now();
            state = self.lock();
            state.working = None;
            if let Some(Ok(embeddings)) = made {
                state.ready.push(embeddings);
            }
            self.changed.notify_all();
        }
    }
}
