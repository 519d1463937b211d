//! Redaction of structured secrets before anything is stored or indexed:
//! connection strings with credentials, `password=` pairs, bearer tokens,
//! private-key blocks and well-known key formats become `[REDACTED:<kind>]`.
//! Natural-language descriptions of secrets are not detected (SPEC §2; govern
//! exists for those).

use std::sync::LazyLock;

use regex::Regex;

pub struct Redacted {
    pub text: String,
    /// The kinds replaced, in rule order, without repeats.
    pub kinds: Vec<&'static str>,
}

struct Rule {
    kind: &'static str,
    pattern: Regex,
}

/// Rules run in order; earlier, more specific rules win.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str| Rule {
        kind,
        pattern: Regex::new(pattern).expect("redaction rule compiles"),
    };
    vec![
        rule(
            "private_key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
        ),
        rule(
            "connection_string",
            r"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver|oracle|jdbc:[a-z0-9]+|clickhouse|cockroachdb|nats|kafka|ldaps?|s?ftp|smtps?|https?)://[^\s:/@]*:[^\s@/]+@[^\s'\x22,，;；。）)]+",
        ),
        rule(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        rule("bearer_token", r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*"),
        rule("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        rule(
            "github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        rule("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        rule("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        rule(
            "stripe_key",
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
        ),
        rule("api_key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
        rule(
            "password",
            r#"(?i)(?:\b(?:password|passwd|passphrase|pwd|pass)|密碼|密码|口令)\s*[:=：]\s*(?:"[^"]*"|'[^']*'|[^\s,;，；。]+)"#,
        ),
        rule(
            "secret",
            r#"(?i)\b(?:secret|client[_-]?secret|api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?access[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|token|private[_-]?key)\s*[:=：]\s*(?:"[^"]*"|'[^']*'|[^\s,;，；。]+)"#,
        ),
    ]
});

pub fn redact(text: &str) -> Redacted {
    let mut out = text.to_owned();
    let mut kinds = Vec::new();
    for rule in RULES.iter() {
        if rule.pattern.is_match(&out) {
            let marker = format!("[REDACTED:{}]", rule.kind);
            out = rule.pattern.replace_all(&out, marker.as_str()).into_owned();
            kinds.push(rule.kind);
        }
    }
    Redacted { text: out, kinds }
}

/// True when, markers removed, no letter or digit is left.
pub fn nothing_but_secrets(redacted: &str) -> bool {
    static MARKER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z_]+\]").expect("marker regex"));
    redacted.contains("[REDACTED:")
        && !MARKER
            .replace_all(redacted, "")
            .chars()
            .any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(text: &str) -> String {
        redact(text).text
    }

    #[test]
    fn connection_strings_lose_their_credentials() {
        let out = redacted("主庫連線 postgres://admin:s3cr3t@db.internal:5432/app 已設定");
        assert_eq!(out, "主庫連線 [REDACTED:connection_string] 已設定");
        for url in [
            "mysql://u:p@h/db",
            "mongodb+srv://u:p@cluster0.x.net",
            "redis://:pw@cache:6379",
            "amqp://guest:guest@mq",
        ] {
            assert!(
                redacted(url).starts_with("[REDACTED:connection_string]"),
                "{url}"
            );
        }
        // No credentials, nothing to hide.
        assert_eq!(
            redacted("see https://example.com/docs"),
            "see https://example.com/docs"
        );
    }

    #[test]
    fn pairs_tokens_and_keys() {
        assert_eq!(
            redacted("login with password=hunter2 today"),
            "login with [REDACTED:password] today"
        );
        assert_eq!(redacted("pwd: abc123"), "[REDACTED:password]");
        assert_eq!(
            redacted("密碼：abc123，記得改"),
            "[REDACTED:password]，記得改"
        );
        assert_eq!(redacted("secret=\"x y\" end"), "[REDACTED:secret] end");
        assert_eq!(
            redacted("Authorization: Bearer abcdef123456.xyz"),
            "Authorization: [REDACTED:bearer_token]"
        );
        assert_eq!(
            redacted("key AKIAIOSFODNN7EXAMPLE here"),
            "key [REDACTED:aws_access_key] here"
        );
        assert_eq!(
            redacted("use sk-proj-abcdefghijklmnopqrstuv1234"),
            "use [REDACTED:api_key]"
        );
        assert_eq!(
            redacted("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "[REDACTED:github_token]"
        );
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(
            redacted(&format!("token is {jwt}")),
            "token is [REDACTED:jwt]"
        );
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----";
        assert_eq!(
            redacted(&format!("key:\n{pem}\nend")),
            "key:\n[REDACTED:private_key]\nend"
        );
    }

    #[test]
    fn natural_language_is_left_alone() {
        let text = "資料庫密碼是 pg_admin_123，要記得換";
        assert_eq!(redacted(text), text);
        assert_eq!(
            redacted("the password policy needs 12 characters"),
            "the password policy needs 12 characters"
        );
    }

    #[test]
    fn bare_secrets_are_detected() {
        assert!(nothing_but_secrets(&redacted("password=hunter2")));
        assert!(nothing_but_secrets(&redacted("  AKIAIOSFODNN7EXAMPLE ; ")));
        assert!(!nothing_but_secrets(&redacted("prod db password=hunter2")));
        assert!(!nothing_but_secrets("plain text"));
    }
}
