//! The engine worker: one thread owns the [`Session`] and runs calls one at
//! a time, in the order they were queued; tool handlers queue calls into a
//! bounded channel and await their answers.
//!
//! Why a thread of its own: the component's WASI file calls block on a
//! runtime of wasmtime-wasi's own. Run on tokio's blocking pool with a lock
//! around the session, a burst of calls filled the pool with threads waiting
//! for the lock while the holder waited for a pool thread — a deadlock. Here
//! no call takes a tokio thread, however many arrive.
//!
//! Timeouts: a call that has not *started* within the timeout is dropped
//! unrun and answered "timed out in the queue; nothing was done". A call
//! that started runs to its end and is answered with its real outcome, so
//! a write is never reported failed after it was applied. The store lock
//! waits at most the timeout for other processes.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::JoinHandle;
use std::time::Duration;

use hmg_cli::Session;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Calls waiting at most; beyond this, handlers wait to queue (their own
/// timeout still applies).
pub const QUEUE: usize = 256;

type Run = Box<dyn FnOnce(&mut Session) + Send>;

struct Job {
    /// Not started by then: dropped unrun.
    deadline: Instant,
    run: Run,
}

/// Why a call got no result from the engine.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{0:#}")]
    Engine(anyhow::Error),
    #[error(
        "timed out: the call waited over {0} ms for the calls before it and was not run (nothing was done)"
    )]
    Queued(u128),
    #[error("the engine stopped")]
    Stopped,
    #[error("the engine call failed unexpectedly (the server carries on)")]
    Failed,
}

#[derive(Clone)]
pub struct Worker {
    jobs: mpsc::Sender<Job>,
    timeout: Duration,
}

impl Worker {
    /// Starts the thread that owns `session`; it ends when every `Worker`
    /// clone is dropped and the queue is empty.
    pub fn start(mut session: Session, timeout: Duration) -> (Worker, JoinHandle<()>) {
        session.set_patience(timeout);
        let (jobs, mut queue) = mpsc::channel::<Job>(QUEUE);
        let thread = std::thread::Builder::new()
            .name("hmg-engine".into())
            .spawn(move || {
                while let Some(job) = queue.blocking_recv() {
                    if Instant::now() > job.deadline {
                        continue; // dropping it answers its caller
                    }
                    let run = job.run;
                    // A panic in one call must not stop the server; the
                    // caller sees its reply dropped and says so.
                    let _ = catch_unwind(AssertUnwindSafe(|| run(&mut session)));
                    // What recovery reported goes where a server's
                    // diagnostics go: stderr (stdout is the protocol's).
                    for notice in session.take_notices() {
                        eprintln!("hmg-mcp: note: {notice}");
                    }
                }
            })
            .expect("the engine thread starts");
        (Worker { jobs, timeout }, thread)
    }

    /// Queues `f` and waits for its outcome.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Session) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, CallError> {
        let deadline = Instant::now() + self.timeout;
        let (reply, answer) = oneshot::channel();
        let run: Run = Box::new(move |session| {
            // The caller went away (cancelled, or the server is stopping).
            if reply.is_closed() {
                return;
            }
            let _ = reply.send(f(session));
        });
        let ms = self.timeout.as_millis();
        match tokio::time::timeout_at(deadline, self.jobs.send(Job { deadline, run })).await {
            Err(_) => return Err(CallError::Queued(ms)),
            Ok(Err(_)) => return Err(CallError::Stopped),
            Ok(Ok(())) => {}
        }
        match answer.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(CallError::Engine(e)),
            // Dropped unrun past its deadline (or the call panicked, which
            // the worker survives).
            Err(_) if Instant::now() >= deadline => Err(CallError::Queued(ms)),
            Err(_) => Err(CallError::Failed),
        }
    }
}
