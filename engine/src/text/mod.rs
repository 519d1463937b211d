//! Text at the door: admission limits, secret redaction, normalisation for
//! dedup, and the inference of epistemic status and polarity from wording.

pub mod infer;
pub mod redact;
pub mod secrets;

thread_local! {
    /// What the current call redacted, per kind (see [`take_redactions`]).
    static REDACTED: std::cell::RefCell<Vec<(String, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

thread_local! {
    /// The open store's personal-data policy (set at the start of each call).
    static POLICY: std::cell::Cell<secrets::PersonalData> = std::cell::Cell::new(secrets::PersonalData::default());
}

/// Sets the personal-data policy redaction follows on this thread.
pub fn set_policy(policy: secrets::PersonalData) {
    POLICY.with(|p| p.set(policy));
}

/// Redacts `text` and notes what was replaced for the current call's result.
pub fn redact_noted(text: &str) -> redact::Redacted {
    let redacted = redact::redact_with(text, POLICY.with(std::cell::Cell::get));
    note(&redacted.counts);
    redacted
}

fn note(counts: &[(String, u32)]) {
    REDACTED.with(|r| {
        let mut all = r.borrow_mut();
        for (kind, n) in counts {
            match all.iter_mut().find(|(k, _)| k == kind) {
                Some((_, total)) => *total += n,
                None => all.push((kind.clone(), *n)),
            }
        }
    });
}

/// What was redacted since this was last called (each operation starts by
/// calling it, and its result reports what it returns at the end).
pub fn take_redactions() -> Vec<(String, u32)> {
    REDACTED.with(|r| std::mem::take(&mut *r.borrow_mut()))
}

/// Trimmed, with every run of whitespace folded to one space: the form two
/// contents are compared in for exact dedup.
pub fn normalize(content: &str) -> String {
    content.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Admitted content, already redacted, or the reason it was refused.
pub fn admit(content: &str, max_bytes: usize, what: &str) -> Result<String, String> {
    if content.trim().is_empty() {
        return Err(format!("{what} is empty"));
    }
    if content.len() > max_bytes {
        return Err(format!(
            "{what} is {} bytes, over the limit of {max_bytes} bytes",
            content.len()
        ));
    }
    let redacted = redact::redact_with(content.trim(), POLICY.with(std::cell::Cell::get));
    if redacted.only_secrets || redact::nothing_but_markers(&redacted.text) {
        return Err(format!(
            "{what} is nothing but a secret ({}); nothing would be left to remember",
            redacted.kinds().join(", ")
        ));
    }
    note(&redacted.counts);
    Ok(redacted.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_whitespace() {
        assert_eq!(normalize("  用 PG\t 16 \n做主庫 "), "用 PG 16 做主庫");
    }

    #[test]
    fn admission_refuses_empty_huge_and_bare_secrets() {
        assert!(
            admit("   \n", 8192, "content")
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            admit(&"x".repeat(9000), 8192, "content")
                .unwrap_err()
                .contains("8192")
        );
        assert!(
            admit("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", 8192, "content")
                .unwrap_err()
                .contains("secret")
        );
        assert_eq!(admit("  keep me  ", 8192, "content").unwrap(), "keep me");
    }

    #[test]
    fn what_was_redacted_is_noted_for_the_call() {
        let _ = take_redactions();
        admit(
            "a=1 token=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",
            8192,
            "content",
        )
        .unwrap();
        redact_noted("and ghp_Xk9wPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pIQ");
        assert_eq!(take_redactions(), [("github-pat".to_owned(), 2)]);
        assert!(take_redactions().is_empty());
    }
}
