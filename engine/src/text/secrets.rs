//! Secret and personal-data detection. Three sources of rules:
//!
//! - the gitleaks default rule catalogue (`gitleaks.toml`, MIT, brought in
//!   by build.rs): ~220 providers, each with keywords (an Aho-Corasick
//!   pre-filter decides which rules run at all), a regex compiled on first
//!   use (bytes, ASCII classes — Go RE2 semantics), a secret group, an
//!   entropy floor and allowlists, applied as gitleaks applies them;
//! - our own rules for the shapes people write in conversation and config
//!   (`.env`, YAML, JSON, CLI flags, HTTP Basic, URLs with a password, and
//!   "the password is …" in English and Chinese) — only when the value looks
//!   like a credential, never for placeholders or code;
//! - personal data by policy: payment cards (Luhn), Taiwan and mainland
//!   China national IDs (check digits); e-mail and phone when asked for.
//!
//! A finding is the secret's byte range; the label before it stays.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder};
use regex::Regex;
use regex::bytes::{Regex as BytesRegex, RegexBuilder};

/// Where an allowlist's regexes look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
pub struct Allow {
    pub target: Target,
    pub regexes: &'static [&'static str],
    pub stopwords: &'static [&'static str],
}

#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub regex: &'static str,
    pub secret_group: usize,
    pub entropy: f64,
    pub keywords: &'static [&'static str],
    pub allow: &'static [Allow],
}

mod catalogue {
    use super::{Allow, Rule, Target};
    include!(concat!(env!("OUT_DIR"), "/gitleaks_rules.rs"));
}

pub use catalogue::RULES as GITLEAKS_RULES;

/// One secret or personal datum found: its byte range and kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub start: usize,
    pub end: usize,
    pub kind: String,
    /// The whole match, label included (`password=` before the secret).
    pub matched: (usize, usize),
}

impl Finding {
    /// A finding that is its whole match (personal data: no label).
    fn whole(m: regex::Match<'_>, kind: &str) -> Finding {
        Finding {
            start: m.start(),
            end: m.end(),
            kind: kind.to_owned(),
            matched: (m.start(), m.end()),
        }
    }
}

/// Which personal data to redact (cards and national IDs by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PersonalData {
    pub payment_cards: bool,
    pub national_ids: bool,
    pub emails: bool,
    pub phones: bool,
}

impl Default for PersonalData {
    fn default() -> PersonalData {
        PersonalData {
            payment_cards: true,
            national_ids: true,
            emails: false,
            phones: false,
        }
    }
}

fn bytes_regex(pattern: &str) -> Option<BytesRegex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(1 << 26)
        .build()
        .ok()
}

/// The catalogue, compiled as far as it has been needed.
struct Catalogue {
    keywords: AhoCorasick,
    /// For each keyword pattern, the rules it turns on.
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords: they always run.
    always: Vec<usize>,
    compiled: Vec<OnceLock<Option<BytesRegex>>>,
    allow: Vec<OnceLock<Vec<CompiledAllow>>>,
    global: CompiledAllow,
}

/// An allowlist with its regexes compiled.
struct CompiledAllow {
    spec: &'static Allow,
    regexes: Vec<BytesRegex>,
}

impl CompiledAllow {
    fn new(spec: &'static Allow) -> CompiledAllow {
        CompiledAllow {
            spec,
            regexes: spec.regexes.iter().filter_map(|r| bytes_regex(r)).collect(),
        }
    }

    /// Whether this allowlist lets a finding through: a regex matches its
    /// target, or the secret (lower-cased once by the caller) holds a stopword.
    fn allows<'a>(
        &self,
        secret: &'a [u8],
        lower: &str,
        matched: &'a [u8],
        line: &dyn Fn() -> &'a [u8],
    ) -> bool {
        let target = match self.spec.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line(),
        };
        self.regexes.iter().any(|r| r.is_match(target))
            || self.spec.stopwords.iter().any(|w| lower.contains(w))
    }
}

fn compile_allows(rule: &'static Rule) -> Vec<CompiledAllow> {
    rule.allow.iter().map(CompiledAllow::new).collect()
}

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    let mut words: Vec<&str> = Vec::new();
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    let mut always = Vec::new();
    for (i, rule) in GITLEAKS_RULES.iter().enumerate() {
        if rule.keywords.is_empty() {
            always.push(i);
        }
        for k in rule.keywords {
            match words.iter().position(|w| w == k) {
                Some(p) => keyword_rules[p].push(i),
                None => {
                    words.push(k);
                    keyword_rules.push(vec![i]);
                }
            }
        }
    }
    Catalogue {
        keywords: AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(&words)
            .expect("keywords build"),
        keyword_rules,
        always,
        compiled: GITLEAKS_RULES.iter().map(|_| OnceLock::new()).collect(),
        allow: GITLEAKS_RULES.iter().map(|_| OnceLock::new()).collect(),
        global: CompiledAllow::new(&catalogue::GLOBAL_ALLOW),
    }
});

/// Compiles every catalogue rule now (for a pre-initialised image).
pub fn warm() {
    let c = &*CATALOGUE;
    for (i, rule) in GITLEAKS_RULES.iter().enumerate() {
        c.compiled[i].get_or_init(|| bytes_regex(rule.regex));
        c.allow[i].get_or_init(|| compile_allows(rule));
    }
    let _ = &*OWN;
}

/// Shannon entropy in bits per byte, as gitleaks computes it.
pub fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Values that stand for a secret without being one: `${VAR}`, `$VAR`,
/// `<your-token>`, `{{ .Values.x }}`, `XXXX`, `****`, `your-…`, `changeme`,
/// elided values (`sk-...`), documented example keys.
pub fn is_placeholder(value: &str) -> bool {
    static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"(?ix)^(?:
                \$\{[^}]*\}? | \$[a-z_][a-z0-9_]* | \$\(.*\)? | %[a-z_]+%
              | <[^>]*>? | \{\{.*(?:\}\})? | \[[a-z_ -]+\]
              | .*(?:xxxx|\*\*\*\*|••••|\.\.\.\.|0000000000).* | .*(?:\.\.\.|…)
              | your.* | my[-_].* | <.* | .*(?:placeholder|changeme|change[-_]me|redacted|dummy|lorem[-_ ]?ipsum).*
              | (?:password|secret|token|passw0rd|test|todo|tbd|none|null|nil|undefined|true|false|empty|example|sample)
              | .*[A-Z0-9]EXAMPLE(?:KEY)?
            )$"#,
        )
        .expect("placeholder regex")
    });
    let v = value.trim_matches(|c: char| "'\"`“”「」".contains(c));
    v.is_empty() || SHAPES.is_match(v) || v.chars().all(|c| c == v.chars().next().unwrap_or(' '))
}

/// Whether a value looks like code rather than a credential:
/// `lexer.next_token();`, `os.getenv("X")`, `process.env.TOKEN`.
fn is_code(value: &str) -> bool {
    static WORDS: LazyLock<Regex> = LazyLock::new(|| {
        // identifiers (`lexer.next_token`, `REPLACE_ME`), header names
        // (`X-Api-Key`), names (`prod/payments/stripe`) and a variable's
        // member or element (`$_POST["password"]`, `$cfg->db`)
        Regex::new(
            r"^(?:[a-zA-Z]+(?:[-_.][a-zA-Z]+)+|[a-z0-9_-]+(?:/[a-z0-9_-]+)+)$|^\$[A-Za-z_][A-Za-z0-9_]*(?:\[|->|::|\.)",
        )
            .expect("identifier regex")
    });
    const CODE_STARTS: &[&str] = &[
        "/",
        "~/",
        "./",
        "../",
        "http://",
        "https://",
        "!",
        "&",
        "*",
        "process.env",
        "os.environ",
        "env.",
        "self.",
        "this.",
    ];
    value.contains('(')
        || value.ends_with(';')
        || CODE_STARTS.iter().any(|p| value.starts_with(p))
        || WORDS.is_match(value)
}

/// Whether a value written after "password is" or `KEY=` looks like a
/// credential: not a placeholder, not code, at least 6 characters, and
/// either a digit or symbol beside letters, or long and varied.
pub fn looks_like_credential(value: &str) -> bool {
    let v = value.trim_matches(|c: char| "'\"`“”「」".contains(c));
    if v.chars().count() < 6 || is_placeholder(v) || is_code(v) || is_schema_words(v) {
        return false;
    }
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let symbols = v.chars().any(|c| c.is_ascii_punctuation());
    let upper = v.chars().any(|c| c.is_ascii_uppercase());
    let lower = v.chars().any(|c| c.is_ascii_lowercase());
    let non_ascii = !v.is_ascii();
    if non_ascii {
        return false; // a sentence, not a credential
    }
    (letters && (digits || symbols))
        || (digits && symbols)
        || (upper && lower && v.len() >= 10)
        || (v.len() >= 16 && entropy(v.as_bytes()) >= 3.0)
}

fn line_of(text: &[u8], start: usize, end: usize) -> &[u8] {
    let from = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let to = text[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |p| end + p);
    &text[from..to]
}

/// Widens a byte range to whole characters.
fn snap(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

fn cjk_punctuation_as_spaces(text: &str) -> std::borrow::Cow<'_, str> {
    const MARKS: &str = "，。；：、「」『』（）！？“”‘’【】《》";
    if !text.chars().any(|c| MARKS.contains(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if MARKS.contains(c) {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn catalogue_findings(text: &str, out: &mut Vec<Finding>) {
    let c = &*CATALOGUE;
    // The catalogue's patterns end a secret at ASCII separators; Chinese
    // punctuation (`密碼：…，`) is one too. Each such character becomes
    // spaces of the same byte length, so offsets stay the text's.
    let shadow = cjk_punctuation_as_spaces(text);
    let bytes = shadow.as_bytes();
    let mut run = vec![false; GITLEAKS_RULES.len()];
    for i in &c.always {
        run[*i] = true;
    }
    for m in c.keywords.find_overlapping_iter(bytes) {
        for i in &c.keyword_rules[m.pattern().as_usize()] {
            run[*i] = true;
        }
    }
    for (i, rule) in GITLEAKS_RULES.iter().enumerate().filter(|(i, _)| run[*i]) {
        let Some(regex) = c.compiled[i].get_or_init(|| bytes_regex(rule.regex)) else {
            continue;
        };
        let allows = c.allow[i].get_or_init(|| compile_allows(rule));
        let mut at = 0;
        while at <= bytes.len()
            && let Some(caps) = regex.captures_at(bytes, at)
        {
            let whole = caps.get(0).expect("group 0");
            let secret = if caps.len() > 1 {
                if rule.secret_group > 0 {
                    caps.get(rule.secret_group)
                } else {
                    (1..caps.len()).find_map(|g| caps.get(g).filter(|m| !m.is_empty()))
                }
            } else {
                None
            }
            .unwrap_or(whole);
            at = resume_at(whole.start(), secret.end());
            let value = secret.as_bytes();
            if value.is_empty() || (rule.entropy > 0.0 && entropy(value) <= rule.entropy) {
                continue;
            }
            let value_text = String::from_utf8_lossy(value);
            let lower = value_text.to_lowercase();
            let line = || line_of(bytes, whole.start(), whole.end());
            let allowed = std::iter::once(&c.global)
                .chain(allows)
                .any(|a| a.allows(value, &lower, whole.as_bytes(), &line));
            if allowed
                || is_placeholder(&value_text)
                || is_public(&value_text)
                || is_schema_words(&value_text)
            {
                continue;
            }
            let (start, end) = snap(text, secret.start(), secret.end());
            out.push(Finding {
                start,
                end,
                kind: rule.id.to_owned(),
                matched: snap(text, whole.start(), whole.end()),
            });
        }
    }
}

/// Our own rules: `(kind, regex with a `secret` group, the value must look
/// like a credential)`.
struct OwnRule {
    kind: &'static str,
    regex: Regex,
    /// What the value must pass: [`looks_like_credential`] for key=value
    /// shapes and natural language; a fixed format's own shape test, or
    /// nothing ([`any_value`]).
    accepts: fn(&str) -> bool,
}

fn any_value(_: &str) -> bool {
    true
}

/// A quoted value where a password goes: ASCII, 4+ characters, no spaces,
/// not code or a name (`password_confirmation`, `getpass()`) and not
/// validation or type keywords (`required`, `string`, `required|min:8`).
fn quoted_literal(value: &str) -> bool {
    value.len() >= 4
        && value.is_ascii()
        && !value.contains(char::is_whitespace)
        && !is_code(value)
        && !is_schema_words(value)
}

/// Validation and type keywords where a value would go, alone or joined
/// by `|`, `:` or `,` (Laravel-style `required|string|min:8`).
fn is_schema_words(value: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "required",
        "optional",
        "nullable",
        "sometimes",
        "confirmed",
        "present",
        "bail",
        "string",
        "text",
        "number",
        "numeric",
        "integer",
        "boolean",
        "bool",
        "hidden",
        "visible",
        "masked",
        "min",
        "max",
        "size",
        "between",
        "regex",
        "unique",
        "email",
    ];
    let value = value.trim_matches(|c: char| "'\"`".contains(c));
    value.split(['|', ':', ',']).all(|w| {
        w.bytes().all(|b| b.is_ascii_digit()) || KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(w))
    })
}

/// Artifactory `AP…`/`AKC…` keys mix lower case and digits
/// (`APPLICATIONS`, `AKCHECKLIST` are words); other vendor shapes are
/// their regex.
fn vendor_shape(value: &str) -> bool {
    !(value.starts_with("AP") || value.starts_with("AKC"))
        || (value.bytes().any(|b| b.is_ascii_lowercase())
            && value.bytes().any(|b| b.is_ascii_digit()))
}

const CREDENTIAL_KEY: &str = r"[A-Za-z0-9_.-]*(?i:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth(?:[_-]?key)?|credentials?|signing[_-]?key|encryption[_-]?key|master[_-]?key)[A-Za-z0-9_.-]*";

/// "the password is", "密碼是", "口令改为" …: what a stated password follows.
/// "The password is", "the password for the staging box is now", "密碼現在是":
/// a credential word, what it belongs to (a short `for/of/on/to/at …`),
/// an adverb, the verb.
const PASSWORD_STATEMENT: &str = r"(?i)(?:password|passphrase|passcode|pin code|密碼|密码|口令|通關密語)(?:\s+(?:for|of|on|to|at)\s+[^\n.,;:!?，。；：「」]{1,40}?)?\s*(?:現在|现在|已經|已经|已|仍然|仍|還是|还是)?\s*(?:(?:is|was)\b|=|:|：|是|為|为|設為|设为|改成|改為|改为|換成|换成)\s*(?:now\s+|still\s+)?";

static OWN: LazyLock<Vec<OwnRule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, accepts: fn(&str) -> bool| OwnRule {
        kind,
        regex: Regex::new(pattern).unwrap_or_else(|e| panic!("rule {kind}: {e}")),
        accepts,
    };
    vec![
        // A password inside a URL: scheme://user:PASSWORD@host.
        rule(
            "url-password",
            r"(?:^|[^A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s/]*[^\s/@])@[A-Za-z0-9._-]+",
            any_value,
        ),
        // HTTP Basic and Bearer credentials in a header.
        rule(
            "http-basic-auth",
            r"(?i)\bauthorization\s*:\s*basic\s+(?P<secret>[A-Za-z0-9+/=]{8,})",
            any_value,
        ),
        rule(
            "http-bearer-token",
            r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})",
            looks_like_credential,
        ),
        // curl -u user:password, --user user:password.
        rule(
            "cli-user-password",
            r#"(?:^|\s|[：，。；])(?:-u|--user)[\s=]+['"]?[^\s:'"]+:(?P<secret>[^\s'"]+)"#,
            looks_like_credential,
        ),
        // --password VALUE, -p VALUE after a login, --token=VALUE.
        rule(
            "cli-flag-secret",
            r#"(?i)(?:^|\s)--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token)[\s=]+['"]?(?P<secret>[^\s'"]+)"#,
            looks_like_credential,
        ),
        rule(
            "cli-flag-secret",
            r#"\blogin\b[^\n]*?\s-p\s+['"]?(?P<secret>[^\s'"]+)"#,
            looks_like_credential,
        ),
        // -u USER -p PASSWORD (mysql, psexec, sqlcmd, docker login…).
        rule(
            "cli-flag-secret",
            r#"(?:^|\s)-[uU]\s+\S+\s+-[pP]\s*['"]?(?P<secret>[^\s'"]+)"#,
            looks_like_credential,
        ),
        // netrc: machine HOST login USER password SECRET.
        rule(
            "netrc-password",
            r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<secret>\S+)",
            any_value,
        ),
        // JSON: "password": "VALUE", "auth": "VALUE".
        rule(
            "config-secret",
            &format!(r#""(?:{CREDENTIAL_KEY}|auth)"\s*:\s*"(?P<secret>[^"\\]{{4,}})""#),
            looks_like_credential,
        ),
        // .env / YAML / TOML / ini: KEY=VALUE, key: value.
        rule(
            "config-secret",
            &format!(
                r#"(?m)(?:^|[^A-Za-z0-9_.-])(?:export\s+)?['"]?{CREDENTIAL_KEY}['"]?\s*(?:=>|:=|=|:|：)\s*(?P<secret>"[^"\n]+"|'[^'\n]+'|[^\s'",;，；。:][^\s'",;，；。]*)"#
            ),
            looks_like_credential,
        ),
        // Code comparing a credential with a literal: `password == "…"`
        // (compared with a name, `token.kind == Kind::X`, it is no secret).
        rule(
            "config-secret",
            &format!(
                r#"(?:^|[^A-Za-z0-9_.-]){CREDENTIAL_KEY}\s*(?:==|===)\s*(?P<secret>"[^"\n]+"|'[^'\n]+')"#
            ),
            looks_like_credential,
        ),
        // "the password is X", "密碼是 X", "口令为 X".
        rule(
            "password-statement",
            &format!(r#"{PASSWORD_STATEMENT}[「"'“]?(?P<secret>[^\s，。,;；」"'”]+)"#),
            looks_like_credential,
        ),
        // A quoted literal is a literal: after "the password is", assigned
        // to a name that ends in pass/password/secret (`$password =
        // "goodspec";`, escaped quotes too), or the password argument of a
        // well-known credential API — even a plain word.
        rule(
            "password-statement",
            &format!(r#"{PASSWORD_STATEMENT}\\?["“「'](?P<secret>[^\s"”」'\\]+)\\?["”」']"#),
            quoted_literal,
        ),
        rule(
            "config-secret",
            r#"(?:^|[^A-Za-z0-9_.-])\$?['"]?[A-Za-z0-9_.-]*(?i:pass(?:word|wd|phrase)?|pwd|secret)['"]?\s*(?:=>|:=|=|:)\s*\\?["'](?P<secret>[^\s"'\\]+)\\?["']"#,
            quoted_literal,
        ),
        rule(
            "api-password",
            r#"(?:\b(?:NetworkCredential|PasswordAuthentication|UsernamePasswordCredentials|HTTPBasicAuth|HTTPDigestAuth|HttpBasicAuth|BasicAuth)\(|\bauth\s*=\s*\(|\.login\()\s*["'][^"'\n]*["']\s*,\s*["'](?P<secret>[^"'\n]+)["']"#,
            quoted_literal,
        ),
        // Azure DevOps personal access tokens: 84 characters, the provider
        // signature `AZDO` at offset 76 (Microsoft's identifiable format).
        rule(
            "azure-devops-pat",
            r"\b(?P<secret>[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})\b",
            any_value,
        ),
        // A vendor prefix and a long random body (the "identifiable token"
        // design many providers use: vci_…, cfut_…, shpss_…).
        rule(
            "prefixed-token",
            r"\b(?P<secret>[a-z]{2,10}_(?:[a-z]{2,10}_)?[A-Za-z0-9]{30,})\b",
            random_body,
        ),
        // Formats documented by their providers that gitleaks ties to a
        // keyword: Discord bot tokens, Mailchimp API keys, Telegram bot tokens.
        rule(
            "discord-bot-token",
            r"\b(?P<secret>[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})",
            any_value,
        ),
        rule(
            "tailscale-key",
            r"\b(?P<secret>tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,})",
            any_value,
        ),
        rule(
            "slack-webhook-url",
            r"(?P<secret>(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[AB][A-Z0-9]+/[A-Za-z0-9]+)",
            any_value,
        ),
        rule(
            "mailchimp-api-key",
            r"\b(?P<secret>[0-9a-f]{32}-us[0-9]{1,2})\b",
            any_value,
        ),
        // Mailgun's private API keys (`key-` and 32 hex digits) named by
        // the provider anywhere before them on the line, with or without
        // an assignment (the catalogue's rule wants `=` or `:`).
        rule(
            "mailgun-private-api-key",
            r"(?i)\bmailgun\b[^\n]{0,80}?\b(?P<secret>key-[0-9a-f]{32})\b",
            any_value,
        ),
        rule(
            "telegram-bot-token",
            r"\b(?P<secret>[0-9]{8,10}:AA[A-Za-z0-9_-]{32,34})(?:[^A-Za-z0-9_-]|$)",
            any_value,
        ),
        // Formats their providers document that the catalogue lacks or
        // ties to a keyword: Databricks tokens in either case, Doppler,
        // Django's generated keys, GitLab runner tokens, Sourcegraph,
        // Artifactory API keys and identity tokens (detect-secrets' shape),
        // Twilio SIDs, unsigned JWTs, OpenSSH private key bodies outside
        // their armour (`openssh-key-v1` in base64), Microsoft Teams
        // webhook URLs (the whole URL grants posting).
        rule(
            "vendor-token",
            r#"(?x)(?:^|[^A-Za-z0-9_])(?P<secret>
                dapi[a-fA-F0-9]{32}(?:-[0-9]+)?
              | dp\.(?:ct|pt|st|sa|scim|audit)\.(?:[a-z0-9_-]{1,30}\.)?[A-Za-z0-9]{40,44}
              | django-insecure-[^\s'"]{30,}
              | GR1348941[A-Za-z0-9_-]{20,}
              | sgp_(?:local_|[a-f0-9]{16}_)?[a-f0-9]{40}
              | AKC[a-zA-Z0-9]{10,}
              | AP[0-9A-F][a-zA-Z0-9]{8,}
              | (?:AC|SK)[a-z0-9]{32}
              | eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?
              | b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,}
            )(?:[^A-Za-z0-9_]|$)"#,
            vendor_shape,
        ),
        rule(
            "teams-webhook-url",
            r"(?P<secret>(?:https://)?(?:outlook\.office\.com|[a-z0-9-]+\.webhook\.office\.com)/webhookb?2?/[A-Za-z0-9@/_-]{40,})",
            any_value,
        ),
        // Kubernetes Secret data and kubeconfig keys: long base64 values.
        rule(
            "kubernetes-secret-data",
            r"(?m)^\s*(?:client-key-data|client-certificate-data|token|password|[A-Za-z0-9_.-]*(?:key|secret|password|token)[A-Za-z0-9_.-]*)\s*:\s*(?P<secret>[A-Za-z0-9+/]{16,}={0,2})\s*$",
            any_value,
        ),
    ]
});

/// A token body that is random, not a word or an identifier: upper and
/// lower case and digits, and high entropy.
fn random_body(value: &str) -> bool {
    let body = value.rsplit('_').next().unwrap_or(value);
    body.bytes().any(|b| b.is_ascii_uppercase())
        && body.bytes().any(|b| b.is_ascii_lowercase())
        && body.bytes().any(|b| b.is_ascii_digit())
        && entropy(body.as_bytes()) >= 4.0
}

/// Whether a run of token characters is a random string — what entropy
/// scanners (detect-secrets, trufflehog) flag when no label or prefix says
/// what it is. Random: letters of both cases and digits, few vowels (words
/// and identifiers have about 40 % vowels among their letters, base62 text
/// 19 %), and high entropy for its length; or, in one case only, 40 or more
/// characters of base32/base36 text. Never hex (hashes, commit ids, UUIDs).
pub fn is_random_token(token: &str) -> bool {
    let len = token.len();
    if len < 24 || token.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return false;
    }
    let count = |f: fn(&u8) -> bool| token.as_bytes().iter().filter(|b| f(b)).count();
    let upper = count(u8::is_ascii_uppercase);
    let lower = count(u8::is_ascii_lowercase);
    let digits = count(u8::is_ascii_digit);
    // Vowels in the longest alphanumeric stretch: a vendor prefix
    // (`live_`, `dp.ct.`) is a word and says nothing about the body.
    let body = token
        .split(|c: char| !c.is_ascii_alphanumeric())
        .max_by_key(|s| s.len())
        .unwrap_or(token);
    let vowels = body.bytes().filter(|b| b"aeiouAEIOU".contains(b)).count();
    let letters = body.bytes().filter(u8::is_ascii_alphabetic).count();
    if letters == 0 || vowels * 100 / letters >= 30 {
        return false;
    }
    let floor = (0.85 * (len as f64).log2()).min(4.0);
    let h = entropy(token.as_bytes());
    if upper >= 2 && lower >= 2 && digits >= 1 {
        h >= floor
    } else {
        len >= 40 && digits >= 4 && (upper == 0 || lower == 0) && h >= 4.0
    }
}

/// A typed object id (`pi_3MtwBwLkdIwHu7ix28a3tqPa`, `cus_…`): one short
/// lower-case type prefix and at most 24 characters of body. API keys with
/// such prefixes are longer and are the catalogue's to find.
static OBJECT_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z]{2,6}_[A-Za-z0-9]{8,24}$").expect("object id regex"));

/// Whether text ending in `before` goes on with an OpenSSH public key's
/// body: `ssh-rsa` as a word of its own, then spaces on the same line.
fn after_ssh_key_type(before: &str) -> bool {
    let line = before.trim_end_matches([' ', '\t']);
    line.len() < before.len()
        && line.strip_suffix("ssh-rsa").is_some_and(|head| {
            !head.ends_with(|c: char| c.is_ascii_alphanumeric() || "+/_.-=".contains(c))
        })
}

/// Long random tokens nothing else named: runs of token characters, the
/// whole run. URLs and paths are names, not secrets (the webhook URLs that
/// are secrets have their own rules); neither are public keys
/// (`ssh-ed25519 AAAA…`), subresource-integrity hashes (`sha384-…`) or
/// `data:` URIs.
fn random_token_findings(text: &str, out: &mut Vec<Finding>) {
    // `=` only as padding at a run's end: `KEY=value` is two runs, so that
    // redacting the value (another rule's) leaves the key's run as it was
    // and a second pass finds nothing new.
    static RUN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_.-]+=*").expect("token run regex"));
    for m in RUN.find_iter(text).filter(|m| m.len() >= 20) {
        let before = &text[..m.start()];
        // A data URI's payload follows `;base64,` (RFC 2397); a bare
        // `base64,` may end a token that another rule redacts, and the
        // exception must not hang on text a first pass replaces (fuzzing).
        if before.ends_with(";base64,") || after_ssh_key_type(before) {
            continue;
        }
        let run = m.as_str();
        if run.starts_with("AAAA")
            || ["sha1-", "sha256-", "sha384-", "sha512-"]
                .iter()
                .any(|p| run.starts_with(p))
        {
            continue;
        }
        let digest = ["sha1:", "sha256:", "sha384:", "sha512:", "md5:", "h1:"]
            .iter()
            .any(|p| {
                let b = before.as_bytes();
                b.len() >= p.len() && b[b.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes())
            });
        let path = run.starts_with('/')
            || run.contains("//")
            || digest
            || run.split('/').count() > 1 && is_word_path(run.split('/').next().unwrap_or(""));
        if path {
            continue;
        }
        let token = run.trim_matches(['.', '-', '_', '=']);
        let start = m.start() + run.find(token).unwrap_or(0);
        if is_random_token(token)
            && !is_placeholder(token)
            && !is_public(token)
            && !OBJECT_ID.is_match(token)
        {
            out.push(Finding {
                start,
                end: start + token.len(),
                kind: "random-token".to_owned(),
                matched: (start, start + token.len()),
            });
        }
    }
}

/// A path's first segment: lower-case words (`acme-logs`, `prod`), where
/// a base64 secret's segments are random.
fn is_word_path(segment: &str) -> bool {
    let letters = segment.bytes().filter(u8::is_ascii_alphabetic).count();
    let vowels = segment.bytes().filter(|b| b"aeiou".contains(b)).count();
    letters >= 3
        && vowels * 100 / letters >= 30
        && segment
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// Keys and names published by design: Stripe publishable keys, SSH
/// public keys, age recipients (`age1` + bech32), IPFS content ids (CIDv1,
/// base32), Tor onion addresses.
pub fn is_public(value: &str) -> bool {
    [
        "pk_live_",
        "pk_test_",
        "AAAAB3NzaC1",
        "AAAAC3NzaC1",
        "AAAAE2VjZHNh",
        "bafy",
        "bafk",
    ]
    .iter()
    .any(|p| value.starts_with(p))
        || value.ends_with(".onion")
        || value
            .strip_prefix("age1")
            .is_some_and(|rest| rest.len() == 58 && rest.bytes().all(|b| BECH32.contains(&b)))
}

/// The bech32 data characters.
const BECH32: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";

/// Where the next search starts: after the secret, not after the whole
/// match — rules consume the separator after a secret, which may be the one
/// before the next (`KEY1 KEY2` found only once, and the second found by a
/// second pass once the first is a marker: fuzzing found it). Always past
/// the match's start.
fn resume_at(start: usize, secret_end: usize) -> usize {
    secret_end.max(start + 1)
}

fn own_findings(text: &str, out: &mut Vec<Finding>) {
    for rule in OWN.iter() {
        let mut at = 0;
        while at <= text.len()
            && let Some(caps) = rule.regex.captures_at(text, at)
        {
            let whole = caps.get(0).expect("group 0");
            let end = caps.name("secret").map_or(whole.end(), |m| m.end());
            at = text.ceil_char_boundary(resume_at(whole.start(), end));
            let Some(secret) = caps.name("secret") else {
                continue;
            };
            let raw = secret.as_str();
            let value = raw.trim_matches(|c: char| "'\"".contains(c));
            // Code is only a question for values a label introduces
            // (`looks_like_credential` asks it); a fixed format
            // (`django-insecure-…(^+=…`) may hold any character.
            if is_placeholder(value) || !(rule.accepts)(value) {
                // A value that is no secret may hold the next label
                // (`token = lex…:ACCESS_KEY=…`): search again inside it,
                // or a second pass would find what the first skipped
                // (fuzzing found it).
                at = text.ceil_char_boundary(whole.start() + 1);
                continue;
            }
            // Keep the quotes: only what is between them is the secret.
            let offset = raw.find(value).unwrap_or(0);
            let start = secret.start() + offset;
            out.push(Finding {
                start,
                end: start + value.len(),
                kind: rule.kind.to_owned(),
                matched: (whole.start(), whole.end()),
            });
        }
    }
}

fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let d2 = d * 2;
                if d2 > 9 { d2 - 9 } else { d2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Taiwan national ID (and the new resident certificate): a letter, 1/2
/// (or 8/9), eight digits, weighted check.
fn tw_id_valid(id: &str) -> bool {
    const LETTERS: &str = "ABCDEFGHJKLMNPQRSTUVXYWZIO";
    let b = id.as_bytes();
    let Some(p) = LETTERS.find(b[0] as char) else {
        return false;
    };
    let code = p as u32 + 10;
    let mut sum = code / 10 + (code % 10) * 9;
    for (i, &d) in b[1..9].iter().enumerate() {
        sum += u32::from(d - b'0') * (8 - i as u32);
    }
    sum += u32::from(b[9] - b'0');
    sum.is_multiple_of(10)
}

/// Mainland resident ID: 17 digits and an ISO 7064 MOD 11-2 check character,
/// with a plausible birth date.
fn cn_id_valid(id: &str) -> bool {
    const WEIGHTS: [u32; 17] = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2];
    const CHECK: &[u8; 11] = b"10X98765432";
    let b = id.as_bytes();
    let sum: u32 = b[..17]
        .iter()
        .zip(WEIGHTS)
        .map(|(&d, w)| u32::from(d - b'0') * w)
        .sum();
    let year: u32 = id[6..10].parse().unwrap_or(0);
    let month: u32 = id[10..12].parse().unwrap_or(0);
    let day: u32 = id[12..14].parse().unwrap_or(0);
    CHECK[(sum % 11) as usize] == b[17].to_ascii_uppercase()
        && (1900..=2100).contains(&year)
        && (1..=12).contains(&month)
        && (1..=31).contains(&day)
}

fn personal_findings(text: &str, policy: PersonalData, out: &mut Vec<Finding>) {
    static CARD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(?:\d[ -]?){12,18}\d\b").expect("card regex"));
    static TW_ID: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b[A-Z][1289]\d{8}\b").expect("tw id regex"));
    static CN_ID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^0-9])(?P<id>\d{17}[0-9Xx])(?:$|[^0-9A-Za-z])").expect("cn id regex")
    });
    static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b").expect("email regex")
    });
    static PHONE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:\+\d{1,3}[ -]?)?(?:\b1[3-9]\d{9}\b|\b09\d{2}[ -]?\d{3}[ -]?\d{3}\b|\(\d{2,4}\)\s?\d{3,4}[ -]?\d{4})")
            .expect("phone regex")
    });
    if policy.payment_cards {
        for m in CARD.find_iter(text) {
            let digits: Vec<u8> = m
                .as_str()
                .bytes()
                .filter(u8::is_ascii_digit)
                .map(|d| d - b'0')
                .collect();
            let issuer = matches!(digits.first(), Some(2..=6));
            if (13..=19).contains(&digits.len()) && issuer && luhn(&digits) {
                out.push(Finding::whole(m, "payment-card"));
            }
        }
    }
    if policy.national_ids {
        for m in TW_ID.find_iter(text) {
            if tw_id_valid(m.as_str()) {
                out.push(Finding::whole(m, "national-id"));
            }
        }
        for caps in CN_ID.captures_iter(text) {
            let m = caps.name("id").expect("id group");
            if cn_id_valid(m.as_str()) {
                out.push(Finding::whole(m, "national-id"));
            }
        }
    }
    if policy.emails {
        for m in EMAIL.find_iter(text) {
            out.push(Finding::whole(m, "email"));
        }
    }
    if policy.phones {
        for m in PHONE.find_iter(text) {
            out.push(Finding::whole(m, "phone"));
        }
    }
}

/// Every secret and (by `policy`) personal datum in `text`, merged: where
/// findings overlap, one span covers them, named by the most specific rule
/// (a provider's rule before our generic shapes before gitleaks' generic).
pub fn find(text: &str, policy: PersonalData) -> Vec<Finding> {
    let mut all = Vec::new();
    catalogue_findings(text, &mut all);
    own_findings(text, &mut all);
    random_token_findings(text, &mut all);
    personal_findings(text, policy, &mut all);
    let rank = |kind: &str| match kind {
        "generic-api-key" | "random-token" => 2,
        k if OWN.iter().any(|r| r.kind == k) => 1,
        _ => 0,
    };
    all.sort_by_key(|f| (f.start, rank(&f.kind), std::cmp::Reverse(f.end)));
    let mut merged: Vec<Finding> = Vec::new();
    for f in all {
        match merged.last_mut() {
            Some(last) if f.start < last.end => {
                if f.end > last.end {
                    last.end = f.end;
                }
                last.matched = (
                    last.matched.0.min(f.matched.0),
                    last.matched.1.max(f.matched.1),
                );
                if rank(&f.kind) < rank(&last.kind) {
                    last.kind = f.kind;
                }
            }
            _ => merged.push(f),
        }
    }
    merged
}
