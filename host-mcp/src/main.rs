//! `hmg-mcp` — the HMG MCP server over stdio. stdout carries only protocol
//! messages; diagnostics go to stderr. When stdin closes it answers what was
//! asked, lets the engine finish the call it is running, and exits.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use hmg_cli::{SessionOptions, open_session};
use hmg_mcp::HmgServer;

#[derive(Parser)]
#[command(name = "hmg-mcp", version, about = "HMG MCP server (stdio)")]
struct Args {
    /// Store directory [default: $HMG_STORE, else ~/.local/share/hmg/store]
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Embedding model directory, or `none` for keyword-only recall
    /// [default: $HMG_MODEL, else ~/.cache/hmg/model/e5-small-v2 if present]
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// Per-call timeout in milliseconds.
    #[arg(long, env = "HMG_MCP_TIMEOUT_MS", default_value_t = 25_000)]
    timeout_ms: u64,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hmg-mcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let session = open_session(&SessionOptions {
        store: args.store,
        model: args.model,
        by: Some("agent".into()),
        ..SessionOptions::default()
    })?;
    eprintln!("hmg-mcp: scope {}", session.scope.display());
    let mut session = session;
    for notice in session.take_notices() {
        eprintln!("hmg-mcp: note: {notice}");
    }
    let timeout = Duration::from_millis(args.timeout_ms);
    let (server, threads) = HmgServer::new(session, timeout);
    // One thread for the protocol: rmcp spawns a task per request, and on a
    // current-thread runtime tasks first run in the order they were spawned,
    // so calls reach the engine's queue in the order they arrived (a
    // pipelined memorize is seen by the recall after it). The engine has its
    // own thread; nothing here blocks.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = rt.block_on(hmg_mcp::stdio::serve(
        server,
        tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin()),
        tokio::io::stdout(),
        // Every queued call is answered within its timeout (run, or dropped
        // unrun); one running may take a little longer.
        timeout * 2,
    ));
    // The server is gone with the service: the engine thread finishes the
    // call it is running (a write is never cut short) and ends.
    threads.join();
    rt.shutdown_timeout(Duration::from_secs(1));
    served
}
