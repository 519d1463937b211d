//! Capture from conversation (SPEC §3, seed 001 記憶擷取機制): one turn in,
//! candidate memories out, each a self-contained statement with the speaker
//! made explicit, a signal and a confidence. Rules only, Chinese (both
//! scripts) and English; no model, microseconds per turn.
//!
//! Order of work: code (fenced blocks, inline code) is cut out first; the
//! rest is split into sentences; a sentence that is a question, chit-chat,
//! time-bound or a bug report / error is excluded whatever it says; the
//! others are matched against the explicit commands, then the implicit
//! signals (see [`signals`]). `ops/observe.rs` decides what is written.

pub mod exclude;
pub mod signals;

use serde::{Deserialize, Serialize};

/// How eager capture is: the confidence a candidate needs to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Mode {
    Strict,
    #[default]
    Standard,
    Relaxed,
}

impl Mode {
    pub fn threshold(self) -> f64 {
        match self {
            Mode::Strict => 0.85,
            Mode::Standard => 0.65,
            Mode::Relaxed => 0.50,
        }
    }
}

/// Who spoke the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Role {
    #[default]
    User,
    Assistant,
}

/// Why a candidate was proposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Signal {
    /// "記住… / remember …": memorize the statement.
    Remember,
    /// "忘掉… / forget …": negate the best-matching memory.
    Forget,
    /// Name, role, origin, where the user lives or works.
    Profile,
    /// What the user owns or keeps.
    Possession,
    /// What the user likes, prefers or dislikes.
    Preference,
    /// How the assistant should answer.
    AssistantStyle,
    /// A decision of the team or project.
    Decision,
    /// A hard rule: must / must not.
    Constraint,
    /// A plain project fact ("we use X"), relaxed mode only.
    Fact,
}

impl Signal {
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Remember => "remember",
            Signal::Forget => "forget",
            Signal::Profile => "profile",
            Signal::Possession => "possession",
            Signal::Preference => "preference",
            Signal::AssistantStyle => "assistant_style",
            Signal::Decision => "decision",
            Signal::Constraint => "constraint",
            Signal::Fact => "fact",
        }
    }

    /// Facts about the person: bound to the tenant (personal scope).
    pub fn personal(self) -> bool {
        matches!(
            self,
            Signal::Profile | Signal::Possession | Signal::Preference | Signal::AssistantStyle
        )
    }
}

/// Why a sentence was not captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exclusion {
    Question,
    ChitChat,
    Code,
    TimeBound,
    BugReport,
}

impl Exclusion {
    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::Question => "question",
            Exclusion::ChitChat => "chit_chat",
            Exclusion::Code => "code",
            Exclusion::TimeBound => "time_bound",
            Exclusion::BugReport => "bug_report",
        }
    }
}

/// One candidate memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The statement to store (for `forget`: what to look for).
    pub content: String,
    pub signal: Signal,
    pub confidence: f64,
    /// What the statement is about, for auto-update: a newer candidate
    /// with the same signal and attribute replaces the older memory
    /// (`name`, `role`, `language`…). `None`: never replaces.
    pub attribute: Option<String>,
    /// The kind of fact the statement is: the signal itself, or for an
    /// explicit "remember" of a personal fact ("記住我喜歡…") that fact's
    /// signal. Decides where it is bound and its capture source.
    pub about: Signal,
}

/// What one turn holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    pub candidates: Vec<Candidate>,
    /// Set when the turn offered something to capture but every part of it
    /// was excluded (the first exclusion met).
    pub excluded: Option<Exclusion>,
}

/// Looks at one conversation turn.
pub fn analyse(turn: &str, role: Role) -> Analysis {
    let (prose, had_code) = exclude::without_code(turn);
    let mut analysis = Analysis::default();
    let mut first_exclusion = None;
    let turn_traditional = traditional(&prose);
    let commands = |s: &str| role == Role::User && signals::is_command(s);
    let pieces = sentences(&prose)
        .into_iter()
        .flat_map(|s| if commands(s) { vec![s] } else { clauses(s) });
    for sentence in pieces {
        // A question is never a command ("你還記得…嗎？"); a command keeps
        // what it names even when that reads like a bug report or a date.
        let why = exclude::exclusion(sentence)
            .filter(|why| *why == Exclusion::Question || !commands(sentence));
        if let Some(why) = why {
            first_exclusion.get_or_insert(why);
            continue;
        }
        for candidate in signals::candidates_in(sentence, role, turn_traditional) {
            if !analysis
                .candidates
                .iter()
                .any(|c| c.content == candidate.content)
            {
                analysis.candidates.push(candidate);
            }
        }
    }
    if analysis.candidates.is_empty() {
        analysis.excluded =
            first_exclusion.or((had_code && prose.trim().is_empty()).then_some(Exclusion::Code));
        if analysis.excluded.is_none() && had_code && signals::mentions_command(turn) {
            analysis.excluded = Some(Exclusion::Code);
        }
    }
    analysis
}

/// The sentences of a text: split after 。！？!?；; and line breaks, and
/// after '.' followed by whitespace (so "Node.js" and "v1.2" stay whole).
/// Each keeps its closing punctuation (questions are told by it).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|(_, c)| *c);
        let ends = match c {
            '。' | '！' | '？' | '!' | '?' | '；' | ';' | '\n' => true,
            '.' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            // Keep runs of closing marks together ("?!", "。」").
            let mut end = at + c.len_utf8();
            while let Some(&(b, d)) = chars.peek() {
                if "?!？！。.」』”\"')）".contains(d) {
                    end = b + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            push_sentence(&mut out, &text[start..end]);
            start = end;
        }
    }
    push_sentence(&mut out, &text[start..]);
    out
}

/// A sentence cut at commas where the speaker starts a new statement
/// ("我叫張三，我是前端開發" → two), and nowhere else ("我們決定用 A，不用 B"
/// stays whole).
pub fn clauses(sentence: &str) -> Vec<&str> {
    const STARTS: &[&str] = &[
        "我", "I ", "I'm", "I've", "My ", "my ", "We ", "we ", "Our ", "our ",
    ];
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in sentence.char_indices() {
        if c == '，' || c == ',' {
            let rest = sentence[at + c.len_utf8()..].trim_start();
            if STARTS.iter().any(|s| rest.starts_with(s)) {
                push_sentence(&mut out, &sentence[start..at]);
                start = at + c.len_utf8();
            }
        }
    }
    push_sentence(&mut out, &sentence[start..]);
    out
}

fn push_sentence<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
}

/// Whether a text is written in Traditional Chinese characters (then a
/// statement about it is written in Traditional too).
pub fn traditional(text: &str) -> bool {
    let cjk: String = text
        .chars()
        .filter(|c| crate::index::tokenize::is_cjk(*c))
        .collect();
    !cjk.is_empty() && fast2s::convert(&cjk) != cjk
}

/// Whether a text is mostly Chinese: more Han characters than Latin words
/// ("我喜欢用 TypeScript" is Chinese, "I like 火鍋" English).
pub fn chinese(text: &str) -> bool {
    let cjk = text
        .chars()
        .filter(|c| crate::index::tokenize::is_cjk(*c))
        .count();
    let latin_words = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.chars().any(|c| c.is_ascii_alphabetic()))
        .count();
    cjk > latin_words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_keep_their_marks() {
        assert_eq!(
            sentences("我叫張三。你叫什麼？ I use Node.js daily. OK!"),
            ["我叫張三。", "你叫什麼？", "I use Node.js daily.", "OK!"]
        );
    }

    #[test]
    fn clauses_split_only_where_the_speaker_starts_again() {
        assert_eq!(
            clauses("我叫張三，我是前端開發"),
            ["我叫張三", "我是前端開發"]
        );
        assert_eq!(clauses("我們決定用 A，不用 B"), ["我們決定用 A，不用 B"]);
        assert_eq!(
            clauses("My name is Li, I own a cat"),
            ["My name is Li", "I own a cat"]
        );
    }

    #[test]
    fn a_command_is_one_statement_and_outranks_exclusions_but_not_questions() {
        let signals = |turn: &str| -> Vec<(Signal, String)> {
            analyse(turn, Role::User)
                .candidates
                .into_iter()
                .map(|c| (c.signal, c.content))
                .collect()
        };
        // Split at "，我們" it would lose what to remember.
        let got = signals("记一下，我们的 CI 跑在 GitHub Actions");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, Signal::Remember);
        assert!(got[0].1.contains("GitHub Actions"), "{got:?}");
        // "錯誤" would make it a bug report; the user asked.
        assert_eq!(signals("記住錯誤追蹤統一用 Sentry")[0].0, Signal::Remember);
        assert_eq!(
            signals("Remember that errors are tracked in Sentry")[0].0,
            Signal::Remember
        );
        // A question about remembering stays a question.
        let a = analyse("你還記得我們上次用哪個資料庫嗎？", Role::User);
        assert!(a.candidates.is_empty());
        assert_eq!(a.excluded, Some(Exclusion::Question));
        // Without the command, the bug report is still excluded.
        assert_eq!(
            analyse("登入後一直報錯 500", Role::User).excluded,
            Some(Exclusion::BugReport)
        );
    }

    #[test]
    fn scripts() {
        assert!(traditional("我喜歡用 TypeScript"));
        assert!(!traditional("我喜欢用 TypeScript"));
        assert!(!traditional("I like TypeScript"));
        assert!(chinese("我喜欢用 TypeScript"));
        assert!(!chinese("I prefer TypeScript over JavaScript"));
    }
}
