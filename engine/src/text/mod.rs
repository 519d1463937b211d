//! Text at the door: admission limits, secret redaction, normalisation for
//! dedup, and the inference of epistemic status and polarity from wording.

pub mod infer;
pub mod redact;
pub mod secrets;

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
    let redacted = redact::redact(content.trim());
    if redacted.only_secrets || redact::nothing_but_markers(&redacted.text) {
        return Err(format!(
            "{what} is nothing but a secret ({}); nothing would be left to remember",
            redacted.kinds().join(", ")
        ));
    }
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
}
