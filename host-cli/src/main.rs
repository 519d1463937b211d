//! `hmg` — the HMG command line: one sub-command per operation, human output
//! by default, `--json` for machines (exactly one JSON object on stdout).
//!
//! Exit codes: 0 done (including `no_op`, and a reader that closed stdout
//! early), 1 failure (one line on stderr), 2 usage error, 3 refused by the
//! engine (`effect: rejected`).

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use hmg_cli::api::{self, Effect};
use hmg_cli::{
    Runtime, Session, SessionOptions, default_cache_dir, locate, open_session, render, second_core,
};
use serde::Serialize;

mod hook;

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

impl Global {
    fn open(&self) -> Result<Session> {
        open_session(&self.options())
    }

    /// The session these flags ask for.
    fn options(&self) -> SessionOptions {
        SessionOptions {
            store: self.store.clone(),
            model: self.model.clone(),
            tenant: self.tenant.clone(),
            workspace: self.workspace.clone(),
            repository: self.repository.clone(),
            branch: self.branch.clone(),
            session: self.session.clone(),
            by: None,
            cwd: None,
            salvage: false,
            recalls: Vec::new(),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Remember one self-contained statement ("-" reads stdin).
    Memorize(MemorizeArgs),
    /// Find memories (noun phrases work best; questions work too).
    Recall(RecallArgs),
    /// Correct what a memory claims.
    Correct(CorrectArgs),
    /// Change whether a memory exists (quarantine/restore/seal/tombstone/derive_lesson).
    Govern(GovernArgs),
    /// Hand the session over: done / why / verification / risks / next ("-" reads stdin).
    Handoff(HandoffArgs),
    /// An atom's chain, corrections and exposure changes.
    History { atom_id: String },
    /// Counts and index coverage of what the current scope sees.
    Stats {
        /// The whole store (every tenant) instead.
        #[arg(long)]
        all: bool,
    },
    /// The session-start brief.
    Brief {
        /// Size budget in characters.
        #[arg(long)]
        budget: Option<u32>,
    },
    /// Export what the current scope sees as JSON Lines (to stdout, or --output).
    Export {
        /// The whole store (every tenant) instead.
        #[arg(long)]
        all: bool,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Import JSON Lines written by export ("-" for stdin); idempotent.
    Import { file: PathBuf },
    /// The knowledge graph: entities, neighbourhoods, paths, your own triples.
    Graph {
        #[command(subcommand)]
        op: GraphOp,
    },
    /// Capture what a conversation turn says to remember ("-" reads stdin).
    Observe(ObserveArgs),
    /// Agent hooks.
    Hook {
        #[command(subcommand)]
        hook: Hook,
    },
    /// Pre-initialise the engine with the embedding model loaded, so that
    /// every later call starts fast (once per model; ./setup.sh runs it).
    Prepare,
    /// Open a damaged store on purpose: what cannot be read (a damaged or
    /// missing snapshot, a damaged log record) is kept aside in kept-*.hmg
    /// files, the rest is written as a clean generation.
    Repair,
}

#[derive(Args)]
struct MemorizeArgs {
    content: Vec<String>,
    /// user, agent (default) or any label.
    #[arg(long)]
    source: Option<String>,
    #[command(flatten)]
    level: LevelFlags,
}

#[derive(Args)]
struct RecallArgs {
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
    /// Also show the query's entities and the edges around them.
    #[arg(long)]
    graph: bool,
}

#[derive(Subcommand)]
enum GraphOp {
    /// The entities of a text ("-" reads stdin).
    Entities { text: Vec<String> },
    /// Entities within N hops of one, and the edges between them.
    Neighborhood {
        name: String,
        /// Hops, 1-4.
        #[arg(long, default_value_t = 1)]
        depth: u32,
        /// Most edges.
        #[arg(long)]
        limit: Option<u32>,
        /// Also triples of replaced memories.
        #[arg(long)]
        include_invalid: bool,
    },
    /// The shortest chain of edges between two entities.
    Path {
        from: String,
        to: String,
        /// Most hops searched, 1-6.
        #[arg(long)]
        max_depth: Option<u32>,
    },
    /// Store a triple you already know: SOURCE RELATION TARGET.
    Relate {
        source: String,
        relation: String,
        target: String,
        #[arg(long, value_enum)]
        source_type: Option<api::EntityType>,
        #[arg(long, value_enum)]
        target_type: Option<api::EntityType>,
    },
    /// The newest memories with their entities (what the graph page draws).
    View {
        /// Most memories shown.
        #[arg(long)]
        limit: Option<u32>,
        /// Only entities of these types.
        #[arg(long = "type", value_enum)]
        types: Vec<api::EntityType>,
    },
}

#[derive(Args)]
struct ObserveArgs {
    turn: Vec<String>,
    /// strict (0.85), standard (0.65) or relaxed (0.50).
    #[arg(long, value_enum, default_value = "standard")]
    mode: api::CaptureMode,
    /// Who said the turn.
    #[arg(long, value_enum, default_value = "user")]
    role: api::Speaker,
    /// Say what would be captured; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Args)]
struct CorrectArgs {
    atom_id: String,
    #[arg(value_enum)]
    action: api::CorrectAction,
    #[arg(long)]
    reason: String,
    /// Required for replace.
    #[arg(long)]
    new_content: Option<String>,
}

#[derive(Args)]
struct GovernArgs {
    atom_id: String,
    #[arg(value_enum)]
    action: api::GovernAction,
    #[arg(long)]
    reason: String,
    /// Required for derive_lesson.
    #[arg(long)]
    lesson_content: Option<String>,
}

#[derive(Args)]
struct HandoffArgs {
    summary: Vec<String>,
    #[arg(long)]
    source: Option<String>,
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
    /// Claude Code UserPromptSubmit: reads the hook JSON on stdin (`prompt`,
    /// `session_id`, `cwd`), captures what the prompt says to remember (in
    /// that session), and prints the relevant memories as additionalContext.
    /// Gives up quietly after $HMG_HOOK_TIMEOUT_MS (default 5000).
    UserPromptSubmit,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) if closed_stdout(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("hmg: {}", chain.join(": "));
            ExitCode::FAILURE
        }
    }
}

/// Help and version go to stdout (exit 0); a usage error is one line on
/// stderr naming what is wrong (exit 2).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let _ = e.print();
        return ExitCode::from(2);
    }
    if !e.use_stderr() {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    // clap's text: "error: <what>", maybe indented details, a blank line, "Usage: …".
    let text = e.render().to_string();
    let what: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let line = what.join(" ");
    eprintln!(
        "hmg: {} (see hmg --help)",
        line.trim_start_matches("error: ")
    );
    ExitCode::from(2)
}

/// Whether `e` is stdout closed under us (`hmg export | head`).
fn closed_stdout(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    let g = &cli.global;
    match cli.command {
        Command::Memorize(args) => memorize(g, args),
        Command::Recall(args) => recall(g, args),
        Command::Correct(args) => correct(g, args),
        Command::Govern(args) => govern(g, args),
        Command::Handoff(args) => handoff(g, args),
        Command::History { atom_id } => history(g, atom_id),
        Command::Stats { all } => stats(g, all),
        Command::Brief { budget } => brief(g, budget),
        Command::Export { all, output } => export(g, all, output),
        Command::Import { file } => import(g, &file),
        Command::Graph { op } => graph(g, op),
        Command::Observe(args) => observe(g, args),
        Command::Prepare => prepare(g),
        Command::Repair => repair(g),
        Command::Hook {
            hook: Hook::SessionStart,
        } => session_start(g),
        Command::Hook {
            hook: Hook::UserPromptSubmit,
        } => hook::user_prompt_submit(g),
    }
}

fn memorize(g: &Global, args: MemorizeArgs) -> Result<ExitCode> {
    let content = text_arg(&args.content, "content")?;
    let mut session = g.open()?;
    let scope = if args.level.personal || args.level.org {
        session.scope.truncated(args.level.org)
    } else {
        session.scope.clone()
    };
    let r = session.memorize(&api::MemorizeRequest {
        content,
        source: args.source,
        scope,
    })?;
    print(g, &r, render::memorize)?;
    Ok(exit_for(r.effect))
}

fn recall(g: &Global, args: RecallArgs) -> Result<ExitCode> {
    let query = text_arg(&args.query, "query")?;
    let mut session = open_session(&SessionOptions {
        recalls: vec![query.clone()],
        ..g.options()
    })?;
    let r = session.recall(&api::RecallRequest {
        query,
        max_results: Some(args.max_results),
        include_negated: Some(args.include_negated),
        scope: session.scope.clone(),
        remote: Some(args.remote),
        explain: Some(args.explain),
        include_graph: Some(args.graph),
    })?;
    print(g, &r, render::recall)?;
    Ok(refused_if(r.reason.is_some()))
}

fn correct(g: &Global, args: CorrectArgs) -> Result<ExitCode> {
    let mut session = g.open()?;
    let r = session.correct(&api::CorrectRequest {
        target_atom: args.atom_id,
        action: args.action,
        reason: args.reason,
        new_content: args.new_content,
        scope: session.scope.clone(),
        by: None,
    })?;
    print(g, &r, render::correct)?;
    Ok(exit_for(r.effect))
}

fn govern(g: &Global, args: GovernArgs) -> Result<ExitCode> {
    let mut session = g.open()?;
    let r = session.govern(&api::GovernRequest {
        target_atom: args.atom_id,
        action: args.action,
        reason: args.reason,
        lesson_content: args.lesson_content,
        scope: session.scope.clone(),
        by: None,
    })?;
    print(g, &r, render::govern)?;
    Ok(exit_for(r.effect))
}

fn handoff(g: &Global, args: HandoffArgs) -> Result<ExitCode> {
    let summary = text_arg(&args.summary, "summary")?;
    let mut session = g.open()?;
    let r = session.handoff(&api::HandoffRequest {
        summary,
        source: args.source,
        scope: session.scope.clone(),
    })?;
    print(g, &r, render::handoff)?;
    Ok(exit_for(r.effect))
}

fn history(g: &Global, atom_id: String) -> Result<ExitCode> {
    let mut session = g.open()?;
    let r = session.history(&api::HistoryRequest {
        atom_id,
        scope: session.scope.clone(),
        remote: None,
    })?;
    print(g, &r, render::history)?;
    Ok(refused_if(r.reason.is_some()))
}

/// Opens the store with salvage: damage that would be refused is kept aside
/// in `kept-*.hmg` files and the rest is written as a clean generation.
fn repair(g: &Global) -> Result<ExitCode> {
    let mut session = open_session(&SessionOptions {
        store: g.store.clone(),
        model: Some("none".into()),
        tenant: g.tenant.clone(),
        salvage: true,
        ..SessionOptions::default()
    })?;
    let stats = session.stats(&api::StoreFilter::WholeStore)?;
    let notices = session.take_notices();
    let report = serde_json::json!({
        "done": notices,
        "atoms": stats.atoms,
        "kept_aside": stats.kept_aside,
    });
    print(g, &report, |_| {
        let mut text = if notices.is_empty() {
            "nothing to repair".to_owned()
        } else {
            notices.join("\n")
        };
        text.push_str(&format!("\nthe store opens: {} atoms", stats.atoms));
        text.push_str(&render::kept_aside(&stats.kept_aside));
        text
    })?;
    Ok(ExitCode::SUCCESS)
}

fn stats(g: &Global, all: bool) -> Result<ExitCode> {
    let mut session = g.open()?;
    let filter = filter(&session, all);
    let r = session.stats(&filter)?;
    print(g, &r, render::stats)?;
    Ok(ExitCode::SUCCESS)
}

fn brief(g: &Global, budget: Option<u32>) -> Result<ExitCode> {
    let mut session = g.open()?;
    let r = session.brief(&api::BriefRequest {
        scope: session.scope.clone(),
        remote: None,
        budget_chars: budget,
    })?;
    print(g, &r, |b| b.text.trim_end().to_owned())?;
    Ok(ExitCode::SUCCESS)
}

fn export(g: &Global, all: bool, output: Option<PathBuf>) -> Result<ExitCode> {
    let mut session = g.open()?;
    let filter = filter(&session, all);
    let text = session.export(&filter)?;
    let Some(path) = output else {
        io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    };
    let lines = text.lines().count();
    write_atomically(&path, text.as_bytes())?;
    let summary = serde_json::json!({ "lines": lines, "output": path.display().to_string() });
    print(g, &summary, |_| {
        format!("exported {lines} lines to {}", path.display())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// From this many lines `hmg import` embeds in two instances at once.
const HELPER_LINES: usize = 256;

fn import(g: &Global, file: &Path) -> Result<ExitCode> {
    let text = if file.as_os_str() == "-" {
        read_stdin()?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let mut session = g.open()?;
    // A second instance embeds beside the first when there is a second core,
    // a model, and enough lines to share.
    let lines = text.lines().count();
    let r = if second_core()
        && lines >= HELPER_LINES
        && locate::model_dir(g.model.as_deref()).is_some()
    {
        session.import_with_helper(&text, || g.open())?
    } else {
        session.import(&text)?
    };
    print(g, &r, render::import)?;
    Ok(refused_if(r.reason.is_some()))
}

fn prepare(g: &Global) -> Result<ExitCode> {
    let Some(model) = locate::model_dir(g.model.as_deref()) else {
        bail!("no embedding model (run scripts/model/fetch.sh, or pass --model DIR)");
    };
    let cache = default_cache_dir().context("no cache directory (set HMG_CACHE_DIR)")?;
    if Runtime::for_model(Some(&cache), Some(&model))?.preloaded {
        let out = serde_json::json!({ "prepared": false, "reason": "already prepared" });
        print(g, &out, |_| "already prepared for this model".into())?;
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
    print(g, &out, |_| {
        format!(
            "prepared {fingerprint} in {seconds:.1} s → {}",
            path.display()
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

fn graph(g: &Global, op: GraphOp) -> Result<ExitCode> {
    match op {
        GraphOp::Entities { text } => {
            let text = text_arg(&text, "text")?;
            let mut session = g.open()?;
            let r = session.extract_entities(&text)?;
            print(g, &r, render::entities)?;
            Ok(ExitCode::SUCCESS)
        }
        GraphOp::Neighborhood {
            name,
            depth,
            limit,
            include_invalid,
        } => {
            let mut session = g.open()?;
            let r = session.neighborhood(&api::NeighborhoodRequest {
                entity: name,
                depth: Some(depth),
                limit,
                include_invalid: Some(include_invalid),
                scope: session.scope.clone(),
                remote: None,
            })?;
            print(g, &r, render::neighborhood)?;
            Ok(refused_if(r.reason.is_some()))
        }
        GraphOp::Path {
            from,
            to,
            max_depth,
        } => {
            let mut session = g.open()?;
            let r = session.shortest_path(&api::PathRequest {
                from,
                to,
                max_depth,
                scope: session.scope.clone(),
                remote: None,
            })?;
            print(g, &r, render::path)?;
            Ok(refused_if(r.reason.is_some()))
        }
        GraphOp::Relate {
            source,
            relation,
            target,
            source_type,
            target_type,
        } => {
            let mut session = g.open()?;
            let r = session.relate(&api::RelateRequest {
                source,
                relation,
                target,
                source_type,
                target_type,
                scope: session.scope.clone(),
                by: None,
            })?;
            print(g, &r, render::relate)?;
            Ok(exit_for(r.effect))
        }
        GraphOp::View { limit, types } => {
            let mut session = g.open()?;
            let r = session.graph_view(&api::GraphViewRequest {
                scope: session.scope.clone(),
                remote: None,
                limit,
                types: (!types.is_empty()).then_some(types),
            })?;
            print(g, &r, render::graph_view)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn observe(g: &Global, args: ObserveArgs) -> Result<ExitCode> {
    let turn = text_arg(&args.turn, "turn")?;
    let mut session = g.open()?;
    let r = session.observe(&api::ObserveRequest {
        turn,
        mode: Some(args.mode),
        role: Some(args.role),
        dry_run: Some(args.dry_run),
        scope: session.scope.clone(),
        by: None,
    })?;
    print(g, &r, render::observe)?;
    Ok(refused_if(r.reason.is_some()))
}

fn session_start(g: &Global) -> Result<ExitCode> {
    let mut session = g.open()?;
    let brief = session.brief(&api::BriefRequest {
        scope: session.scope.clone(),
        remote: None,
        budget_chars: None,
    })?;
    let out = serde_json::json!({
        "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": brief.text }
    });
    writeln!(io::stdout().lock(), "{out}")?;
    Ok(ExitCode::SUCCESS)
}

/// `--all`: the whole store; otherwise what the session's scope sees.
fn filter(session: &Session, all: bool) -> api::StoreFilter {
    if all {
        api::StoreFilter::WholeStore
    } else {
        session.visible()
    }
}

fn text_arg(words: &[String], what: &str) -> Result<String> {
    if words.len() == 1 && words[0] == "-" || words.is_empty() && !io::stdin().is_terminal() {
        return read_stdin();
    }
    if words.is_empty() {
        bail!("missing {what} (pass it as arguments, or '-' to read stdin)");
    }
    Ok(words.join(" "))
}

fn read_stdin() -> Result<String> {
    let mut text = String::new();
    io::stdin()
        .read_to_string(&mut text)
        .context("cannot read stdin")?;
    Ok(text)
}

/// The result as one JSON line (`--json`) or as text.
fn print<T: Serialize>(g: &Global, value: &T, human: impl FnOnce(&T) -> String) -> Result<()> {
    let mut out = io::stdout().lock();
    if g.json {
        writeln!(out, "{}", serde_json::to_string(value)?)?;
    } else {
        let text = human(value);
        if !text.is_empty() {
            writeln!(out, "{text}")?;
        }
    }
    Ok(())
}

fn exit_for(effect: Effect) -> ExitCode {
    refused_if(effect == Effect::Rejected)
}

fn refused_if(refused: bool) -> ExitCode {
    if refused {
        ExitCode::from(REFUSED)
    } else {
        ExitCode::SUCCESS
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp-hmg");
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
