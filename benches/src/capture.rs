//! Capture quality and speed (issue 12).
//!
//! 1. The labelled set `benches/data/capture-turns.tsv` (zh-Hant, zh-Hans,
//!    en; every signal, hard negatives): per mode, precision and recall of
//!    what is captured (a capture is right when its signal is the expected
//!    one), recall per signal at standard, false captures per exclusion
//!    class, and how often the right exclusion is named — for the tuning
//!    half (odd data lines), the held-out half (even lines) and both.
//!    Then `benches/data/capture-explicit.tsv`, explicit commands and their
//!    hard negatives, written after the first set's report and held out whole.
//! 2. Speed: `observe` as a dry run inside the component (wasmtime, the
//!    real host), p50 and p95 per turn over the set.
//! 3. LoCoMo dev: which evidence turns standard capture keeps, and recall
//!    any@5 of a store built only from the captured statements.
//!
//! `cargo run --release -p hmg-benches --bin capture [-- ../shared/bench/locomo-dev.json]`

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

use engine::capture::{self, Mode, Role, Signal};
use engine::ops::{MemorizeRequest, RecallRequest};
use engine::{Config, FixedEnv, MemBackend, Memory, Scope, Timestamp};
use hmg_benches::SharedEmbedder;
use hmg_benches::locomo::load;

const TURNS: &str = include_str!("../data/capture-turns.tsv");
const EXPLICIT: &str = include_str!("../data/capture-explicit.tsv");
const MODES: [Mode; 3] = [Mode::Strict, Mode::Standard, Mode::Relaxed];

struct Case {
    line: usize,
    lang: String,
    role: Role,
    signal: String,
    exclusion: String,
    turn: String,
}

fn load_cases(set: &str) -> Vec<Case> {
    set.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .enumerate()
        .map(|(n, l)| {
            let f: Vec<&str> = l.splitn(5, '\t').collect();
            assert_eq!(f.len(), 5, "bad line: {l}");
            Case {
                line: n + 1,
                lang: f[0].into(),
                role: if f[1] == "assistant" {
                    Role::Assistant
                } else {
                    Role::User
                },
                signal: f[2].into(),
                exclusion: f[3].into(),
                turn: f[4].replace("\\n", "\n"),
            }
        })
        .collect()
}

/// The confidence a labelled signal carries by the rules' design (what the
/// label says should happen at each mode; not read from the output).
fn designed(signal: &str, role: Role) -> f64 {
    let base = match signal {
        "remember" | "forget" => 0.99,
        "profile" => 0.93,
        "possession" => 0.90,
        "preference" => 0.88,
        "assistant_style" => 0.86,
        "decision" => 0.80,
        "constraint" => 0.75,
        "fact" => 0.55,
        _ => return 0.0,
    };
    if role == Role::Assistant {
        base * 0.8
    } else {
        base
    }
}

#[derive(Default)]
struct Score {
    /// Turns something was captured from, and how many of those were right.
    captured: usize,
    right: usize,
    /// Turns that should be captured, and how many were (with the right signal).
    expected: usize,
    found: usize,
}

impl Score {
    fn precision(&self) -> String {
        ratio(self.right, self.captured)
    }
    fn recall(&self) -> String {
        ratio(self.found, self.expected)
    }
}

fn ratio(n: usize, d: usize) -> String {
    if d == 0 {
        "—".into()
    } else {
        format!("{:.3}", n as f64 / d as f64)
    }
}

fn main() {
    let cases = load_cases(TURNS);
    println!(
        "capture set: {} turns (benches/data/capture-turns.tsv)\n",
        cases.len()
    );
    for (name, pick) in [
        ("tuning half (odd lines)", 1usize),
        ("held-out half (even lines)", 0),
        ("all", 2),
    ] {
        let part: Vec<&Case> = cases
            .iter()
            .filter(|c| pick == 2 || c.line % 2 == pick)
            .collect();
        report(name, &part);
    }
    let explicit = load_cases(EXPLICIT);
    report(
        "explicit set (benches/data/capture-explicit.tsv, held out whole)",
        &explicit.iter().collect::<Vec<_>>(),
    );
    speed(&cases);
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/bench/locomo-dev.json".into());
    locomo(&path);
}

fn report(name: &str, cases: &[&Case]) {
    println!("### {name}: {} turns\n", cases.len());
    println!("| mode | precision | recall | captured | expected |");
    println!("| --- | --- | --- | --- | --- |");
    let mut per_signal: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut per_exclusion: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for mode in MODES {
        let mut s = Score::default();
        for c in cases {
            let analysis = capture::analyse(&c.turn, c.role);
            let taken: Vec<&capture::Candidate> = analysis
                .candidates
                .iter()
                .filter(|k| k.confidence >= mode.threshold())
                .collect();
            let should = designed(&c.signal, c.role) >= mode.threshold();
            let right_signal = taken.iter().any(|k| k.signal.as_str() == c.signal);
            if !taken.is_empty() {
                s.captured += 1;
                s.right += usize::from(should && right_signal);
            }
            if should {
                s.expected += 1;
                s.found += usize::from(right_signal);
            }
            if mode == Mode::Standard {
                if c.signal != "none" && c.role == Role::User && c.signal != "fact" {
                    let e = per_signal.entry(c.signal.clone()).or_default();
                    e.0 += 1;
                    e.1 += usize::from(right_signal);
                }
                if c.exclusion != "none" {
                    let e = per_exclusion.entry(c.exclusion.clone()).or_default();
                    e.0 += 1;
                    e.1 += usize::from(!taken.is_empty());
                    e.2 += usize::from(
                        analysis.excluded.map(|x| x.as_str()) == Some(c.exclusion.as_str()),
                    );
                }
                let correct = should && right_signal;
                let wrong_capture = !taken.is_empty() && !correct;
                if (should && !right_signal) || wrong_capture {
                    let got: Vec<String> = taken
                        .iter()
                        .map(|k| format!("{}:{:.2}", k.signal.as_str(), k.confidence))
                        .collect();
                    misses.push(format!(
                        "- line {} ({}) want {}/{} got [{}] excluded {:?}: {}",
                        c.line,
                        c.lang,
                        c.signal,
                        c.exclusion,
                        got.join(", "),
                        analysis.excluded.map(|x| x.as_str()),
                        c.turn.replace('\n', "⏎")
                    ));
                }
            }
        }
        println!(
            "| {} | {} | {} | {} | {} |",
            format!("{mode:?}").to_lowercase(),
            s.precision(),
            s.recall(),
            s.captured,
            s.expected
        );
    }
    println!("\n| signal (standard) | turns | recall |");
    println!("| --- | --- | --- |");
    for (signal, (n, found)) in &per_signal {
        println!("| {signal} | {n} | {} |", ratio(*found, *n));
    }
    println!("\n| exclusion class | turns | false captures (standard) | named right |");
    println!("| --- | --- | --- | --- |");
    for (class, (n, captured, named)) in &per_exclusion {
        println!("| {class} | {n} | {captured} | {} |", ratio(*named, *n));
    }
    if std::env::var_os("VERBOSE").is_some() {
        println!("\nmisses at standard:\n{}", misses.join("\n"));
    } else {
        println!(
            "\n{} misses at standard (VERBOSE=1 lists them)",
            misses.len()
        );
    }
    println!();
}

/// `observe` dry runs through the real host and component (keyword-only:
/// a dry run writes nothing and embeds nothing).
fn speed(cases: &[Case]) {
    let store = tempfile::tempdir().unwrap();
    let runtime = hmg_cli::Runtime::new(hmg_cli::default_cache_dir().as_deref()).unwrap();
    let scope = hmg_cli::api::Scope {
        tenant_id: "bench".into(),
        workspace: Some("acme".into()),
        repository: Some("shop".into()),
        branch: Some("main".into()),
        session: None,
    };
    let mut session = runtime
        .open(
            store.path(),
            None,
            &hmg_cli::api::StoreConfig::default(),
            scope.clone(),
            "bench",
        )
        .unwrap();
    let mut times = Vec::new();
    for round in 0..3 {
        for c in cases.iter().filter(|c| c.signal != "forget") {
            let started = Instant::now();
            session
                .observe(&hmg_cli::api::ObserveRequest {
                    turn: c.turn.clone(),
                    mode: None,
                    role: None,
                    dry_run: Some(true),
                    scope: scope.clone(),
                    by: None,
                })
                .unwrap();
            if round > 0 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!("### speed\n");
    println!(
        "observe (dry run) in the component through the host: p50 {:.2} ms, p95 {:.2} ms per turn ({} calls)\n",
        at(0.5),
        at(0.95),
        times.len()
    );
}

/// What standard capture keeps of LoCoMo's evidence, and how well a store
/// of captured statements alone answers the questions.
fn locomo(path: &str) {
    if !std::path::Path::new(path).exists() {
        println!("(no LoCoMo file at {path}; skipped)");
        return;
    }
    let data = load(path);
    let embedder = SharedEmbedder::load("capture-locomo");
    let (mut evidence, mut kept, mut questions, mut any5) = (0usize, 0usize, 0usize, 0usize);
    let mut captured_turns = 0;
    let mut total_turns = 0;
    let mut signals: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (_, turns, qs) in &data {
        let mut memory = Memory::open(
            MemBackend::new(),
            Config::default(),
            Box::new(FixedEnv {
                now: Timestamp(1_683_000_000_000),
                counter: 0,
            }),
        )
        .unwrap();
        memory.set_embedder(Box::new(embedder.clone()));
        let scope = Scope::new("bench", "locomo", "conversation", "main");
        let mut turns_of: HashMap<String, Vec<String>> = HashMap::new();
        let mut kept_ids: HashSet<String> = HashSet::new();
        for t in turns {
            total_turns += 1;
            let text = t
                .content
                .split_once(": ")
                .map_or(t.content.as_str(), |(_, text)| text);
            let analysis = capture::analyse(text, Role::User);
            let taken: Vec<_> = analysis
                .candidates
                .iter()
                .filter(|c| {
                    c.confidence >= Mode::Standard.threshold() && c.signal != Signal::Forget
                })
                .collect();
            if !taken.is_empty() {
                captured_turns += 1;
                kept_ids.insert(t.id.clone());
            }
            for c in taken {
                *signals.entry(c.signal.as_str()).or_default() += 1;
                let r = memory
                    .memorize(&MemorizeRequest {
                        content: c.content.clone(),
                        source: None,
                        scope: scope.clone(),
                    })
                    .unwrap();
                if let Some(id) = r.atom_id {
                    turns_of
                        .entry(id.to_string())
                        .or_default()
                        .push(t.id.clone());
                }
            }
        }
        for q in qs {
            let ev: Vec<&String> = q
                .evidence
                .iter()
                .filter(|e| turns.iter().any(|t| &t.id == *e))
                .collect();
            if ev.is_empty() {
                continue;
            }
            questions += 1;
            evidence += ev.len();
            kept += ev.iter().filter(|e| kept_ids.contains(**e)).count();
            let hits = memory
                .recall(&RecallRequest {
                    query: q.text.clone(),
                    max_results: Some(5),
                    scope: scope.clone(),
                    ..Default::default()
                })
                .unwrap()
                .atoms;
            let got: HashSet<&String> = hits
                .iter()
                .flat_map(|h| turns_of.get(&h.atom_id.to_string()).into_iter().flatten())
                .collect();
            any5 += usize::from(ev.iter().any(|e| got.contains(e)));
        }
    }
    println!("### LoCoMo dev, standard capture\n");
    println!(
        "turns captured: {captured_turns} of {total_turns} ({:.1} %); by signal: {signals:?}",
        100.0 * captured_turns as f64 / total_turns.max(1) as f64
    );
    println!(
        "evidence turns kept: {kept} of {evidence} ({:.1} %); any@5 of a store of captured statements only: {:.1} ({questions} questions)",
        100.0 * kept as f64 / evidence.max(1) as f64,
        100.0 * any5 as f64 / questions.max(1) as f64
    );
}
