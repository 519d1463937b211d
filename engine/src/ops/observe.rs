//! observe: capture from one conversation turn (SPEC §3). The turn is
//! analysed (`capture/`); every candidate at or above the mode's threshold
//! is written, unless the call is a dry run:
//!
//! - remember / implicit signals → a memory with `source = capture:<signal>`
//!   (`capture:<signal>/<attribute>` when it has one). Profile, possession,
//!   preference and assistant style are personal (bound to the tenant);
//!   decisions, constraints and facts go to the caller's scope, into its
//!   session when one is set; an explicit "remember" goes to the caller's
//!   scope without the session (the user asked for it to last).
//! - auto-update: a visible memory with the same capture source (same signal
//!   and attribute) in the same scope is replaced by the new statement
//!   (`correct replace`, reason `auto-update from conversation`), so history
//!   keeps the chain; the same statement again is a `no_op`.
//! - forget → the best-matching visible memory is negated, only when the
//!   match is strong (score ≥ [`FORGET_MIN_SCORE`]) and unambiguous (the
//!   runner-up below [`FORGET_MAX_RUNNER_UP`] of it); otherwise nothing is
//!   changed and the reason lists the matches.

use crate::atom::{AtomId, CorrectAction, Kind};
use crate::capture::{self, Candidate, Exclusion, Mode, Role, Signal};
use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::ops::correct::CorrectRequest;
use crate::ops::memorize::NewAtom;
use crate::ops::recall::RecallRequest;
use crate::ops::{Effect, actor};
use crate::scope::Scope;
use crate::text::normalize;

/// A forget needs a match at least this strong (recall score).
pub const FORGET_MIN_SCORE: f64 = 0.45;
/// …and the second-best match below this share of the best one.
pub const FORGET_MAX_RUNNER_UP: f64 = 0.8;
const MAX_TURN_BYTES: usize = 32 * 1024;

#[derive(Clone, Debug, Default)]
pub struct ObserveRequest {
    pub turn: String,
    pub mode: Mode,
    pub role: Role,
    pub dry_run: bool,
    pub scope: Scope,
    pub by: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Captured {
    pub content: String,
    pub signal: Signal,
    pub confidence: f64,
    /// Written (or, in a dry run, would be).
    pub captured: bool,
    pub atom_id: Option<AtomId>,
    pub effect: Option<Effect>,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ObserveResult {
    pub mode: Mode,
    pub threshold: f64,
    pub excluded: Option<Exclusion>,
    pub candidates: Vec<Captured>,
    /// Why the whole turn was refused (empty, too long, bad scope).
    pub reason: Option<String>,
}

impl<B: Backend> Memory<B> {
    pub fn observe(&mut self, req: &ObserveRequest) -> Result<ObserveResult> {
        self.refresh()?;
        let threshold = req.mode.threshold();
        let mut result = ObserveResult {
            mode: req.mode,
            threshold,
            excluded: None,
            candidates: Vec::new(),
            reason: None,
        };
        if let Some(problem) = req.scope.problem() {
            result.reason = Some(problem);
            return Ok(result);
        }
        if req.turn.len() > MAX_TURN_BYTES {
            result.reason = Some(format!("turn is longer than {MAX_TURN_BYTES} bytes"));
            return Ok(result);
        }
        let analysis = capture::analyse(&req.turn, req.role);
        result.excluded = analysis.excluded;
        for candidate in analysis.candidates {
            let mut out = Captured {
                content: crate::text::redact_noted(&candidate.content).text,
                signal: candidate.signal,
                confidence: candidate.confidence,
                captured: false,
                atom_id: None,
                effect: None,
                reason: None,
            };
            if candidate.confidence < threshold {
                out.reason = Some(format!(
                    "confidence {:.2} is below the {} threshold {threshold:.2}",
                    candidate.confidence,
                    mode_name(req.mode)
                ));
            } else if candidate.signal == Signal::Forget {
                self.forget(&candidate, req, &mut out)?;
            } else {
                self.capture(&candidate, req, &mut out)?;
            }
            result.candidates.push(out);
        }
        Ok(result)
    }

    fn capture(&mut self, c: &Candidate, req: &ObserveRequest, out: &mut Captured) -> Result<()> {
        let scope = placement(c, &req.scope);
        let source = match &c.attribute {
            Some(a) => format!("capture:{}/{a}", c.about.as_str()),
            None => format!("capture:{}", c.about.as_str()),
        };
        let previous = c
            .attribute
            .as_ref()
            .and_then(|_| self.captured_before(&source, &scope));
        if req.dry_run {
            out.captured = true;
            out.reason = Some(match previous {
                Some(old) => format!("dry run: would replace {old}"),
                None => "dry run: would be written".into(),
            });
            return Ok(());
        }
        if let Some(old) = previous {
            let same = self
                .state
                .atom(old)
                .is_some_and(|a| comparable(&a.content) == comparable(&c.content));
            if same {
                out.atom_id = Some(old);
                out.effect = Some(Effect::NoOp);
                out.reason = Some(format!("already remembered as {old}"));
                return Ok(());
            }
            let r = self.correct(&CorrectRequest {
                target_atom: old.to_string(),
                action: CorrectAction::Replace,
                reason: format!("auto-update from conversation ({source})"),
                new_content: Some(c.content.clone()),
                scope: scope.clone(),
                by: Some(actor(req.by.as_deref(), Some("capture"))),
            })?;
            out.captured = r.effect == Effect::Applied;
            out.atom_id = r.new_atom_id;
            out.effect = Some(r.effect);
            out.reason = r.reason.or_else(|| Some(format!("replaces {old}")));
            return Ok(());
        }
        let r = self.write_new_atom(&NewAtom {
            content: &c.content,
            kind: Kind::Memory,
            source: Some(&source),
            scope: &scope,
            what: "statement",
        })?;
        out.captured = r.effect == Effect::Applied;
        out.atom_id = r.atom_id;
        out.effect = Some(r.effect);
        out.reason = r.reason;
        Ok(())
    }

    /// The newest active memory this capture source wrote in this scope.
    fn captured_before(&self, source: &str, scope: &Scope) -> Option<AtomId> {
        self.state
            .atoms
            .values()
            .rev()
            .find(|a| a.active() && a.source == source && a.scope == *scope)
            .map(|a| a.id)
    }

    fn forget(&mut self, c: &Candidate, req: &ObserveRequest, out: &mut Captured) -> Result<()> {
        let hits = self
            .recall(&RecallRequest {
                query: c.content.clone(),
                max_results: Some(3),
                scope: req.scope.clone(),
                ..RecallRequest::default()
            })?
            .atoms;
        let Some(best) = hits.first() else {
            out.reason = Some("no memory matches; nothing was forgotten".into());
            return Ok(());
        };
        let runner_up = hits.get(1).map_or(0.0, |h| h.score);
        let listing = || {
            hits.iter()
                .map(|h| format!("{} ({:.2}) “{}”", h.atom_id, h.score, short(&h.content)))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if best.score < FORGET_MIN_SCORE {
            out.reason = Some(format!(
                "no strong match, nothing was forgotten: {}",
                listing()
            ));
            return Ok(());
        }
        if runner_up >= best.score * FORGET_MAX_RUNNER_UP {
            out.reason = Some(format!(
                "several memories match, say which one: {}",
                listing()
            ));
            return Ok(());
        }
        out.atom_id = Some(best.atom_id);
        if req.dry_run {
            out.captured = true;
            out.reason = Some(format!("dry run: would negate {}", best.atom_id));
            return Ok(());
        }
        let r = self.correct(&CorrectRequest {
            target_atom: best.atom_id.to_string(),
            action: CorrectAction::Negate,
            reason: format!("forgotten on request: {}", short(&req.turn)),
            new_content: None,
            scope: req.scope.clone(),
            by: Some(actor(req.by.as_deref(), Some("capture"))),
        })?;
        out.captured = r.effect == Effect::Applied;
        out.effect = Some(r.effect);
        out.reason = r.reason;
        Ok(())
    }
}

/// Where a captured statement is bound.
fn placement(c: &Candidate, scope: &Scope) -> Scope {
    if c.about.personal() {
        return Scope::personal(&scope.tenant_id);
    }
    match c.signal {
        Signal::Remember => Scope {
            session: None,
            ..scope.clone()
        },
        _ => scope.clone(),
    }
}

/// Content as compared for "the same statement again": case, width,
/// whitespace and punctuation do not count.
fn comparable(text: &str) -> String {
    normalize(&crate::graph::fold::key(text))
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

fn short(text: &str) -> String {
    let t: String = text.chars().take(60).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Strict => "strict",
        Mode::Standard => "standard",
        Mode::Relaxed => "relaxed",
    }
}
