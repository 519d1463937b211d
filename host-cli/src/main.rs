//! `hmg` — the HMG command line: one sub-command per operation, human output
//! by default, `--json` for machines (exactly one JSON object on stdout).
//!
//! Exit codes: 0 done (including `no_op`), 1 failure (one line on stderr),
//! 2 usage error, 3 refused by the engine (`effect: rejected`).

use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use hmg_cli::api::{self, Effect};
use hmg_cli::{Runtime, Session, default_cache_dir, locate, render};
use serde::Serialize;

const REFUSED: u8 = 3;

#[derive(Parser)]
#[command(
    name = "hmg",
    version,
    about = "HMG — local-first long-term memory for AI agents"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Global {
    /// Store directory [default: $HMG_STORE, else ~/.local/share/hmg/store]
    #[arg(long, global = true, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Print exactly one JSON object (snake_case fields) instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Tenant (default: $HMG_TENANT, the store's config.json, the login name).
    #[arg(long, global = true)]
    tenant: Option<String>,
    /// Workspace (default: the git remote's owner).
    #[arg(long, global = true)]
    workspace: Option<String>,
    /// Repository (default: the git repository's name).
    #[arg(long, global = true)]
    repository: Option<String>,
    /// Branch (default: the current git branch).
    #[arg(long, global = true)]
    branch: Option<String>,
    /// Session: memories written with it are seen only inside it.
    #[arg(long, global = true, env = "HMG_SESSION")]
    session: Option<String>,
    /// Embedding model directory, or `none` for keyword-only recall
    /// [default: $HMG_MODEL, else ~/.cache/hmg/model/e5-small-v2 if present]
    #[arg(long, global = true, value_name = "DIR")]
    model: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Remember one self-contained statement ("-" reads stdin).
    Memorize {
        content: Vec<String>,
        /// user, agent (default) or any label.
        #[arg(long)]
        source: Option<String>,
        #[command(flatten)]
        level: LevelFlags,
    },
    /// Find memories (noun phrases work best; questions work too).
    Recall {
        query: Vec<String>,
        /// Most results to return.
        #[arg(short = 'n', long, default_value_t = 10)]
        max_results: u32,
        /// Also show negated memories.
        #[arg(long)]
        include_negated: bool,
        /// Show each signal's contribution per hit.
        #[arg(long)]
        explain: bool,
        /// Act as a remote caller: personal memories stay hidden.
        #[arg(long)]
        remote: bool,
    },
    /// Correct what a memory claims.
    Correct {
        atom_id: String,
        #[arg(value_enum)]
        action: api::CorrectAction,
        #[arg(long)]
        reason: String,
        /// Required for replace.
        #[arg(long)]
        new_content: Option<String>,
    },
    /// Change whether a memory exists (quarantine/restore/seal/tombstone/derive_lesson).
    Govern {
        atom_id: String,
        #[arg(value_enum)]
        action: api::GovernAction,
        #[arg(long)]
        reason: String,
        /// Required for derive_lesson.
        #[arg(long)]
        lesson_content: Option<String>,
    },
    /// Hand the session over: done / why / verification / risks / next ("-" reads stdin).
    Handoff {
        summary: Vec<String>,
        #[arg(long)]
        source: Option<String>,
    },
    /// An atom's chain, corrections and exposure changes.
    History { atom_id: String },
    /// Counts and index coverage.
    Stats {
        /// The whole store instead of what the current scope sees.
        #[arg(long)]
        all: bool,
    },
    /// The session-start brief.
    Brief {
        /// Size budget in characters.
        #[arg(long)]
        budget: Option<u32>,
    },
    /// Export as JSON Lines (to stdout, or --output).
    Export {
        /// Only what the current scope sees (default: the whole store).
        #[arg(long)]
        scoped: bool,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Import JSON Lines written by export ("-" for stdin); idempotent.
    Import { file: PathBuf },
    /// Agent hooks.
    Hook {
        #[command(subcommand)]
        hook: Hook,
    },
    /// Pre-initialise the engine with the embedding model loaded, so that
    /// every later call starts fast (once per model; ./setup.sh runs it).
    Prepare,
}

#[derive(Args)]
#[group(multiple = false)]
struct LevelFlags {
    /// Bind to the tenant only: a personal memory, seen in every repository.
    #[arg(long)]
    personal: bool,
    /// Bind to tenant + workspace: an organisation memory.
    #[arg(long)]
    org: bool,
}

#[derive(Subcommand)]
enum Hook {
    /// Print the brief as Claude Code SessionStart hook JSON (additionalContext).
    SessionStart,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) if e.use_stderr() => {
            // One line, like every other failure; `hmg help <cmd>` has the rest.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid usage");
            eprintln!(
                "hmg: {} (see hmg --help)",
                first.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("hmg: {}", chain.join(": "));
            ExitCode::FAILURE
        }
    }
}

fn text_arg(words: &[String], what: &str) -> Result<String> {
    if words.len() == 1 && words[0] == "-" || words.is_empty() && !io::stdin().is_terminal() {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        return Ok(text);
    }
    if words.is_empty() {
        bail!("missing {what} (pass it as arguments, or '-' to read stdin)");
    }
    Ok(words.join(" "))
}

fn open(global: &Global) -> Result<Session> {
    let store = locate::store_dir(global.store.as_deref());
    let tenant = global
        .tenant
        .clone()
        .unwrap_or_else(|| locate::tenant(&store));
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let mut scope = locate::infer_scope(&cwd, tenant.clone());
    for (slot, flag) in [
        (&mut scope.workspace, &global.workspace),
        (&mut scope.repository, &global.repository),
        (&mut scope.branch, &global.branch),
    ] {
        if flag.is_some() {
            slot.clone_from(flag);
        }
    }
    scope.session.clone_from(&global.session);
    let model_dir = locate::model_dir(global.model.as_deref());
    let runtime = Runtime::for_model(default_cache_dir().as_deref(), model_dir.as_deref())?;
    if model_dir.is_some()
        && !runtime.preloaded
        && std::env::var_os("HMG_REQUIRE_PRELOADED").is_some()
    {
        bail!(
            "HMG_REQUIRE_PRELOADED is set but no pre-initialised engine matches this model (run `hmg prepare`)"
        );
    }
    let config = api::StoreConfig {
        model_dir,
        ..api::StoreConfig::default()
    };
    runtime
        .open(&store, &config, scope, &tenant)
        .with_context(|| format!("store {}", store.display()))
}

fn print<T: Serialize>(json: bool, value: &T, human: impl FnOnce(&T) -> String) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(value)?);
    } else {
        let text = human(value);
        if !text.is_empty() {
            println!("{text}");
        }
    }
    Ok(())
}

fn exit_for(effect: Effect) -> ExitCode {
    if effect == Effect::Rejected {
        ExitCode::from(REFUSED)
    } else {
        ExitCode::SUCCESS
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let json = cli.global.json;
    match cli.command {
        Command::Memorize {
            content,
            source,
            level,
        } => {
            let content = text_arg(&content, "content")?;
            let mut session = open(&cli.global)?;
            let scope = (level.personal || level.org).then(|| session.scope.truncated(level.org));
            let r = session.memorize(&api::MemorizeRequest {
                content,
                source,
                scope,
            })?;
            print(json, &r, render::memorize)?;
            Ok(exit_for(r.effect))
        }
        Command::Recall {
            query,
            max_results,
            include_negated,
            explain,
            remote,
        } => {
            let query = text_arg(&query, "query")?;
            let mut session = open(&cli.global)?;
            let req = api::RecallRequest {
                query,
                max_results: Some(max_results),
                include_negated: Some(include_negated),
                scope: None,
                remote: Some(remote),
                explain: Some(explain),
            };
            let r = session.recall(&req)?;
            print(json, &r, render::recall)?;
            Ok(if r.reason.is_some() {
                ExitCode::from(REFUSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Correct {
            atom_id,
            action,
            reason,
            new_content,
        } => {
            let mut session = open(&cli.global)?;
            let r = session.correct(&api::CorrectRequest {
                target_atom: atom_id,
                action,
                reason,
                new_content,
                scope: None,
            })?;
            print(json, &r, render::correct)?;
            Ok(exit_for(r.effect))
        }
        Command::Govern {
            atom_id,
            action,
            reason,
            lesson_content,
        } => {
            let mut session = open(&cli.global)?;
            let r = session.govern(&api::GovernRequest {
                target_atom: atom_id,
                action,
                reason,
                lesson_content,
                scope: None,
            })?;
            print(json, &r, render::govern)?;
            Ok(exit_for(r.effect))
        }
        Command::Handoff { summary, source } => {
            let summary = text_arg(&summary, "summary")?;
            let mut session = open(&cli.global)?;
            let r = session.handoff(&api::HandoffRequest {
                summary,
                source,
                scope: None,
            })?;
            print(json, &r, render::handoff)?;
            Ok(exit_for(r.effect))
        }
        Command::History { atom_id } => {
            let mut session = open(&cli.global)?;
            let r = session.history(&atom_id)?;
            print(json, &r, render::history)?;
            Ok(if r.reason.is_some() {
                ExitCode::from(REFUSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Stats { all } => {
            let mut session = open(&cli.global)?;
            let scope = (!all).then(|| session.scope.clone());
            let r = session.stats(scope.as_ref())?;
            print(json, &r, render::stats)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Brief { budget } => {
            let mut session = open(&cli.global)?;
            let r = session.brief(budget, false)?;
            print(json, &r, |b| b.text.trim_end().to_owned())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { scoped, output } => {
            let mut session = open(&cli.global)?;
            let scope = scoped.then(|| session.scope.clone());
            let text = session.export(scope.as_ref())?;
            let lines = text.lines().count();
            match output {
                Some(path) => {
                    write_atomically(&path, text.as_bytes())?;
                    let summary =
                        serde_json::json!({ "lines": lines, "output": path.display().to_string() });
                    print(json, &summary, |_| {
                        format!("exported {lines} lines to {}", path.display())
                    })?;
                }
                None => print!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { file } => {
            let text = if file.as_os_str() == "-" {
                let mut text = String::new();
                io::stdin()
                    .read_to_string(&mut text)
                    .context("cannot read stdin")?;
                text
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("cannot read {}", file.display()))?
            };
            let mut session = open(&cli.global)?;
            let r = session.import(&text)?;
            print(json, &r, render::import)?;
            Ok(if r.reason.is_some() {
                ExitCode::from(REFUSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Prepare => {
            let Some(model) = locate::model_dir(cli.global.model.as_deref()) else {
                bail!("no embedding model (run scripts/model/fetch.sh, or pass --model DIR)");
            };
            let cache = default_cache_dir().context("no cache directory (set HMG_CACHE_DIR)")?;
            if Runtime::for_model(Some(&cache), Some(&model))?.preloaded {
                let out = serde_json::json!({ "prepared": false, "reason": "already prepared" });
                print(json, &out, |_| "already prepared for this model".into())?;
                return Ok(ExitCode::SUCCESS);
            }
            let started = std::time::Instant::now();
            let (path, fingerprint) = Runtime::prepare(&cache, &model)?;
            let seconds = started.elapsed().as_secs_f64();
            let out = serde_json::json!({
                "prepared": true,
                "model": fingerprint,
                "artifact": path,
                "seconds": seconds,
            });
            print(json, &out, |_| {
                format!(
                    "prepared {fingerprint} in {seconds:.1} s → {}",
                    path.display()
                )
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Hook {
            hook: Hook::SessionStart,
        } => {
            let mut session = open(&cli.global)?;
            let brief = session.brief(None, false)?;
            let out = serde_json::json!({
                "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": brief.text }
            });
            println!("{out}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-hmg");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
