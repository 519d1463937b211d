//! observe against real stores: thresholds per mode, placement (personal,
//! scope, session), auto-update chains, duplicates, forget with a strong,
//! a weak and an ambiguous match, dry runs, exclusions.

use super::testing::Harness;
use super::*;
use crate::capture::{Exclusion, Mode, Role, Signal};
use crate::scope::Scope;

fn observe(h: &mut Harness, turn: &str, mode: Mode) -> ObserveResult {
    observe_in(h, turn, mode, &h.scope.clone(), false)
}

fn observe_in(
    h: &mut Harness,
    turn: &str,
    mode: Mode,
    scope: &Scope,
    dry_run: bool,
) -> ObserveResult {
    h.memory
        .observe(&ObserveRequest {
            turn: turn.into(),
            mode,
            role: Role::User,
            dry_run,
            scope: scope.clone(),
            by: None,
        })
        .unwrap()
}

fn only(r: &ObserveResult) -> &Captured {
    assert_eq!(r.candidates.len(), 1, "{r:?}");
    &r.candidates[0]
}

#[test]
fn thresholds_follow_the_mode() {
    let mut h = Harness::new();
    for (mode, written) in [
        (Mode::Strict, false),
        (Mode::Standard, true),
        (Mode::Relaxed, true),
    ] {
        let r = observe(&mut h, "We decided to use pnpm for every package", mode);
        assert_eq!(r.threshold, mode.threshold());
        let c = only(&r);
        assert_eq!((c.signal, c.confidence), (Signal::Decision, 0.8));
        assert_eq!(c.effect.is_some(), written, "{mode:?}: {c:?}");
    }
    // A plain project fact only in relaxed mode.
    let fact = "我們的後端用 Go 寫";
    assert!(!only(&observe(&mut h, fact, Mode::Standard)).captured);
    assert!(only(&observe(&mut h, fact, Mode::Relaxed)).captured);
}

#[test]
fn personal_facts_go_to_the_tenant_and_session_facts_to_the_session() {
    let mut h = Harness::new();
    let session = Scope {
        session: Some("s-42".into()),
        ..h.scope.clone()
    };
    let r = observe_in(
        &mut h,
        "我喜歡用 TypeScript",
        Mode::Standard,
        &session,
        false,
    );
    let c = only(&r);
    let atom = h.memory.state().atom(c.atom_id.unwrap()).unwrap().clone();
    assert_eq!(atom.scope, Scope::personal("qiankun"));
    assert_eq!(atom.source, "capture:preference/like/language");
    assert_eq!(atom.content, "使用者喜歡用 TypeScript");
    let r = observe_in(
        &mut h,
        "我們決定用 pnpm 管理依賴",
        Mode::Standard,
        &session,
        false,
    );
    let decision = h.memory.state().atom(only(&r).atom_id.unwrap()).unwrap();
    assert_eq!(decision.scope, session);
    // "Remember" outlives the session.
    let r = observe_in(
        &mut h,
        "記住：staging 資料庫在 5433 埠",
        Mode::Standard,
        &session,
        false,
    );
    let kept = h.memory.state().atom(only(&r).atom_id.unwrap()).unwrap();
    assert_eq!(kept.scope, h.scope);
    assert_eq!(only(&r).signal, Signal::Remember);
}

#[test]
fn a_newer_fact_about_the_same_thing_replaces_the_old_one() {
    let mut h = Harness::new();
    let first = only(&observe(&mut h, "我喜歡 Python", Mode::Standard))
        .atom_id
        .unwrap();
    let r = observe(&mut h, "我喜歡 TypeScript", Mode::Standard);
    let c = only(&r);
    assert_eq!(c.effect, Some(Effect::Applied));
    let second = c.atom_id.unwrap();
    let hist = h.history(second);
    assert_eq!(hist.relations.supersedes, [first]);
    assert!(
        hist.corrections[0].reason.contains("auto-update"),
        "{hist:?}"
    );
    // The same statement again changes nothing; another kind of thing is kept apart.
    let again = observe(&mut h, "我喜歡 TypeScript。", Mode::Standard);
    assert_eq!(only(&again).effect, Some(Effect::NoOp));
    let coffee = observe(&mut h, "我喜歡喝咖啡", Mode::Standard);
    assert_eq!(only(&coffee).effect, Some(Effect::Applied));
    let names = observe(&mut h, "my name is Li", Mode::Standard);
    let li = only(&names).atom_id.unwrap();
    let lee = only(&observe(&mut h, "My name is Lee", Mode::Standard))
        .atom_id
        .unwrap();
    assert_eq!(h.history(lee).relations.supersedes, [li]);
    let personal = crate::ops::RecallRequest {
        query: "user name".into(),
        scope: h.scope.clone(),
        ..Default::default()
    };
    let hits = h.memory.recall(&personal).unwrap().atoms;
    assert!(hits.iter().any(|a| a.atom_id == lee) && !hits.iter().any(|a| a.atom_id == li));
}

#[test]
fn forget_needs_a_strong_and_unambiguous_match() {
    let mut h = Harness::new();
    let python = only(&observe(&mut h, "我喜歡用 Python 寫腳本", Mode::Standard))
        .atom_id
        .unwrap();
    h.id("前端用 React 18");
    // Strong, unambiguous: negated.
    let r = observe(&mut h, "忘掉關於 Python 腳本的偏好", Mode::Standard);
    let c = only(&r);
    assert_eq!(
        (c.signal, c.effect, c.atom_id),
        (Signal::Forget, Some(Effect::Applied), Some(python))
    );
    assert!(h.memory.state().atom(python).unwrap().negated);
    // Weak: nothing matches well.
    let r = observe(
        &mut h,
        "forget about the Kubernetes cluster",
        Mode::Standard,
    );
    let c = only(&r);
    assert!(!c.captured && c.effect.is_none(), "{c:?}");
    // Ambiguous: two memories match as well; nothing is changed.
    let a = h.id("staging 用 Redis 7 做快取");
    let b = h.id("production 用 Redis 7 做快取");
    let r = observe(&mut h, "忘記 Redis 7 快取", Mode::Standard);
    let c = only(&r);
    assert!(!c.captured, "{c:?}");
    assert!(c.reason.as_deref().unwrap().contains("several"), "{c:?}");
    for id in [a, b] {
        assert!(!h.memory.state().atom(id).unwrap().negated);
    }
}

#[test]
fn dry_runs_write_nothing_and_exclusions_say_why() {
    let mut h = Harness::new();
    let before = h.memory.state().version;
    let scope = h.scope.clone();
    let r = observe_in(&mut h, "I prefer Vim", Mode::Standard, &scope, true);
    assert!(only(&r).captured && only(&r).atom_id.is_none());
    assert_eq!(h.memory.state().version, before);
    for (turn, why) in [
        ("我是不是應該改用 Rust？", Exclusion::Question),
        ("謝謝你！", Exclusion::ChitChat),
        ("```\n# remember: I prefer tabs\n```", Exclusion::Code),
        ("今天很累", Exclusion::TimeBound),
        (
            "I prefer the new build but it crashes with TypeError: x is undefined",
            Exclusion::BugReport,
        ),
    ] {
        let r = observe(&mut h, turn, Mode::Relaxed);
        assert_eq!((r.excluded, r.candidates.len()), (Some(why), 0), "{turn}");
    }
    assert_eq!(h.memory.state().version, before);
    let r = observe(&mut h, &"x".repeat(40_000), Mode::Standard);
    assert!(r.reason.is_some());
}

#[test]
fn secrets_are_redacted_in_what_is_captured() {
    let mut h = Harness::new();
    let r = observe(
        &mut h,
        "記住 staging 的連線字串是 postgres://app:s3cretpass@db.internal/app",
        Mode::Standard,
    );
    let c = only(&r);
    assert!(c.content.contains("[REDACTED:"), "{c:?}");
    assert!(!h.files_contain("s3cretpass"));
}
