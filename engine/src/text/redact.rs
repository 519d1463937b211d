//! Redaction before anything is stored or indexed: every secret
//! [`secrets::find`](super::secrets::find) reports — the gitleaks catalogue,
//! our own `.env`/YAML/JSON/CLI/URL/"the password is" shapes, personal data
//! by policy — becomes `[REDACTED:<kind>]`. Only the secret is replaced; the
//! label before it stays readable. Placeholders and code are left alone.

use std::sync::LazyLock;

use regex::Regex;

use super::secrets::{self, PersonalData};

#[derive(Debug, Clone, PartialEq)]
pub struct Redacted {
    pub text: String,
    /// How many secrets of each kind were replaced, in order of first
    /// appearance.
    pub counts: Vec<(String, u32)>,
    /// The findings (labels included) cover every letter and digit of the
    /// text: nothing would be left to remember.
    pub only_secrets: bool,
}

impl Redacted {
    /// The kinds replaced, without repeats.
    pub fn kinds(&self) -> Vec<&str> {
        self.counts.iter().map(|(k, _)| k.as_str()).collect()
    }
}

/// What redaction writes in place of a secret.
static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z0-9_-]+\]").expect("marker regex"));

/// Redacts with the default personal-data policy (cards and national IDs).
pub fn redact(text: &str) -> Redacted {
    redact_with(text, PersonalData::default())
}

pub fn redact_with(text: &str, policy: PersonalData) -> Redacted {
    let mut findings = secrets::find(text, policy);
    // A marker already in the text is never (part of) a secret: a rule that
    // reads `[REDACTED:kind]` as, say, `user:password` misreads it (fuzzing
    // found `https://[REDACTED:…]@host` redacted again on a second pass).
    if text.contains("[REDACTED:") {
        let markers: Vec<(usize, usize)> = MARKER
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
            .collect();
        findings.retain(|f| !markers.iter().any(|&(a, b)| f.start < b && a < f.end));
    }
    let mut out = String::with_capacity(text.len());
    let mut counts: Vec<(String, u32)> = Vec::new();
    let mut at = 0;
    let mut covered = vec![false; text.len()];
    for f in &findings {
        out.push_str(&text[at..f.start]);
        out.push_str(&format!("[REDACTED:{}]", f.kind));
        at = f.end;
        match counts.iter_mut().find(|(k, _)| *k == f.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((f.kind.clone(), 1)),
        }
        for c in &mut covered[f.matched.0.min(f.start)..f.matched.1.max(f.end)] {
            *c = true;
        }
    }
    out.push_str(&text[at..]);
    let only_secrets = !findings.is_empty()
        && text
            .char_indices()
            .all(|(i, c)| covered[i] || !c.is_alphanumeric());
    Redacted {
        text: out,
        counts,
        only_secrets,
    }
}

/// True when, markers removed, no letter or digit is left.
pub fn nothing_but_markers(redacted: &str) -> bool {
    redacted.contains("[REDACTED:")
        && !MARKER
            .replace_all(redacted, "")
            .chars()
            .any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests;
