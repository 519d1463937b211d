//! Known names (`lexicon.txt`): technologies, products, services,
//! organisations, places, natural languages and a few everyday things, each
//! with its type, a subtype and aliases, found in text by one Aho-Corasick
//! pass over the folded text (case, width and script folded).
//!
//! Precision rules, so that everyday words do not become entities:
//! - a Latin alias that is also a common English word (`Rust`, `Go`,
//!   `Swift`, `Spark`…, see [`COMMON_WORDS`]) matches only in its listed
//!   case, and the commonest of them (`Go`, `Make`, `Spring`…, see
//!   [`SENTENCE_WORDS`]) not as the first word of a sentence;
//! - Latin aliases match whole words only;
//! - a one-character Chinese alias (貓, 狗, 車) matches only after a
//!   classifier or number (一隻貓, 兩台車).

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};

use super::EntityType;
use super::fold::Folded;

const LEXICON_TEXT: &str = include_str!("lexicon.txt");

/// Latin aliases that are also everyday English words: matched only in the
/// lexicon's own case, never sentence-initial.
const COMMON_WORDS: &[&str] = &[
    "go",
    "rust",
    "swift",
    "ruby",
    "dart",
    "julia",
    "r",
    "v",
    "fish",
    "less",
    "make",
    "switch",
    "edge",
    "teams",
    "word",
    "atom",
    "render",
    "railway",
    "linear",
    "echo",
    "fiber",
    "rocket",
    "ray",
    "spark",
    "flux",
    "chef",
    "puppet",
    "apple",
    "amazon",
    "meta",
    "elastic",
    "lambda",
    "aurora",
    "bedrock",
    "solid",
    "remix",
    "express",
    "hive",
    "neon",
    "cargo",
    "spring",
    "gin",
    "phoenix",
    "unity",
    "line",
    "claude",
    "gemini",
    "llama",
    "whisper",
    "mocha",
    "jest",
    "bun",
    "node",
    "pandas",
    "beam",
    "vault",
    "consul",
    "nomad",
    "sentry",
    "pulsar",
    "yarn",
    "pip",
    "poetry",
    "nix",
    "chrome",
    "safari",
    "brave",
    "opera",
    "copilot",
    "mistral",
    "zoom",
    "notion",
    "slack",
    "discord",
    "excel",
    "outlook",
    "kindle",
    "arm",
    "oracle",
    "sketch",
    "zed",
    "cursor",
    "ember",
    "rails",
    "tornado",
    "pyramid",
    "redux",
    "babel",
    "parcel",
    "rollup",
    "biome",
    "chroma",
    "sled",
    "es",
    "ts",
    "js",
    "py",
    "la",
    "us",
    "sf",
    "uk",
    "ort",
    "e5",
    "asf",
    "apache",
    "iam",
    "canonical",
    "helm",
    "flask",
    "beam",
    "dask",
    "polars",
    "actix",
    "tract",
    "prettier",
    "alpine",
    "arch linux",
    "git",
    "uv",
    "maven",
    "vim",
    "eclipse",
    "traefik",
    "envoy",
    "ceph",
    "windows",
    "edge",
    "opera",
    "aurora",
    "doris",
    "x.com",
    "mcp",
    "ray",
    "english",
    "chinese",
    "japanese",
    "korean",
    "french",
    "german",
    "spanish",
    "russian",
    "italian",
    "thai",
    "arabic",
    "hindi",
    "portuguese",
    "vietnamese",
    "cantonese",
    "taiwanese",
    "mandarin",
];

/// Common words that, capitalised, still usually start a sentence as
/// English ("Go ahead", "Make sure", "Spring is here"): never matched
/// sentence-initial.
const SENTENCE_WORDS: &[&str] = &[
    "go", "make", "less", "switch", "edge", "word", "line", "echo", "render", "spring", "swift",
    "spark", "express", "solid", "ray", "rocket", "apple", "amazon", "meta", "unity", "linear",
    "atom", "flux", "fish", "chef", "puppet", "hive", "neon", "cargo", "gin", "phoenix", "remix",
    "railway", "fiber", "lambda", "aurora", "bedrock", "vault", "brave", "sketch", "cursor",
    "zoom", "notion", "slack", "discord", "excel", "outlook", "teams", "r", "v", "us", "la",
];

/// Lower-case Latin words that are nouns people use for their things; they
/// match in lower case (the everyday spelling) but still never start a
/// sentence-level capitalised run (`Cat` as a name is another thing).
const EVERYDAY_LOWER: &[&str] = &[
    "cat",
    "dog",
    "car",
    "rabbit",
    "hamster",
    "parrot",
    "goldfish",
    "turtle",
    "kitten",
    "puppy",
    "motorcycle",
    "bicycle",
    "bike",
];

/// Classifiers and numerals that may precede a one-character Chinese alias.
const CLASSIFIERS: &str = "隻只條条台臺輛辆個个匹頭头一二兩两三四五六七八九十幾几";

#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub kind: EntityType,
    pub subtype: String,
}

pub struct Lexicon {
    pub entries: Vec<Entry>,
    aliases: Vec<Alias>,
    automaton: AhoCorasick,
    by_key: HashMap<String, usize>,
}

struct Alias {
    entry: usize,
    /// As written in the lexicon (for case-sensitive matching).
    written: String,
    case_sensitive: bool,
    /// Never matched as the first word of a sentence.
    not_initial: bool,
    latin: bool,
    single_cjk: bool,
}

/// One lexicon name found in a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub entry: usize,
    /// Byte range in the original text.
    pub start: usize,
    pub end: usize,
}

pub static LEXICON: LazyLock<Lexicon> = LazyLock::new(|| Lexicon::parse(LEXICON_TEXT));

fn is_common(alias: &str) -> bool {
    COMMON_WORDS.iter().any(|w| w.eq_ignore_ascii_case(alias))
}

impl Lexicon {
    fn parse(text: &str) -> Lexicon {
        let mut entries = Vec::new();
        let mut aliases = Vec::new();
        let mut patterns = Vec::new();
        let mut by_key = HashMap::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((typ, names)) = line.split_once(':') else {
                continue;
            };
            let (kind, subtype) = typ.split_once('/').unwrap_or((typ, ""));
            let Some(kind) = EntityType::parse(kind.trim()) else {
                continue;
            };
            let names: Vec<&str> = names
                .split('|')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .collect();
            let Some(first) = names.first() else {
                continue;
            };
            let entry = entries.len();
            entries.push(Entry {
                name: (*first).to_owned(),
                kind,
                subtype: subtype.trim().to_owned(),
            });
            for name in names {
                let key = super::fold::key(name);
                by_key.entry(key.clone()).or_insert(entry);
                let latin = name.is_ascii();
                let distinctive = name
                    .chars()
                    .skip(1)
                    .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || ".#+/-_".contains(c));
                let everyday = EVERYDAY_LOWER.contains(&name);
                aliases.push(Alias {
                    entry,
                    written: name.to_owned(),
                    case_sensitive: latin && !distinctive && !everyday && is_common(name),
                    not_initial: latin
                        && SENTENCE_WORDS.iter().any(|w| w.eq_ignore_ascii_case(name)),
                    latin,
                    single_cjk: !latin && name.chars().count() == 1,
                });
                patterns.push(Folded::new(name).text);
            }
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("lexicon aliases build an automaton");
        Lexicon {
            entries,
            aliases,
            automaton,
            by_key,
        }
    }

    /// The entry a folded name or alias belongs to.
    pub fn lookup(&self, name: &str) -> Option<&Entry> {
        self.by_key
            .get(&super::fold::key(name))
            .map(|&i| &self.entries[i])
    }

    /// Every lexicon name in `text`, leftmost-longest, not overlapping.
    pub fn find(&self, text: &str, folded: &Folded) -> Vec<Found> {
        let mut out = Vec::new();
        for m in self.automaton.find_iter(&folded.text) {
            let alias = &self.aliases[m.pattern().as_usize()];
            let (start, end) = folded.original(m.start(), m.end());
            let original = &text[start..end];
            if alias.latin {
                if !word_boundary(text, start, end) {
                    continue;
                }
                if alias.case_sensitive && original != alias.written {
                    continue;
                }
                if alias.not_initial && sentence_initial(text, start) {
                    continue;
                }
            }
            if alias.single_cjk && !after_classifier(text, start) {
                continue;
            }
            out.push(Found {
                entry: alias.entry,
                start,
                end,
            });
        }
        out
    }
}

/// No letter or digit right before `start` or right after `end`.
fn word_boundary(text: &str, start: usize, end: usize) -> bool {
    let before = text[..start].chars().next_back();
    let after = text[end..].chars().next();
    let joins = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    !joins(before) && !joins(after)
}

/// Whether `start` begins a sentence (only spaces and quotes since the
/// previous sentence end, or the text start).
fn sentence_initial(text: &str, start: usize) -> bool {
    for c in text[..start].chars().rev() {
        if c.is_whitespace() || "\"'“‘(「『".contains(c) {
            continue;
        }
        return ".!?。！？\n:：".contains(c);
    }
    true
}

fn after_classifier(text: &str, start: usize) -> bool {
    text[..start]
        .chars()
        .next_back()
        .is_some_and(|c| CLASSIFIERS.contains(c) || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        let folded = Folded::new(text);
        LEXICON
            .find(text, &folded)
            .into_iter()
            .map(|f| LEXICON.entries[f.entry].name.clone())
            .collect()
    }

    #[test]
    fn aliases_fold_case_width_and_script() {
        assert_eq!(
            names("we run postgres and K8S"),
            ["PostgreSQL", "Kubernetes"]
        );
        assert_eq!(names("ＰｏｓｔｇｒｅＳＱＬ 16"), ["PostgreSQL"]);
        assert_eq!(
            names("用阿里云和阿里雲"),
            ["Alibaba Cloud", "Alibaba Cloud"]
        );
        assert_eq!(names("前端用 React.js"), ["React"]);
        assert_eq!(LEXICON.lookup("k8s").unwrap().name, "Kubernetes");
        assert!(LEXICON.lookup("數據庫").is_none());
    }

    #[test]
    fn common_words_need_their_case_and_a_sentence_middle() {
        assert_eq!(names("the pipe will rust, go on"), Vec::<String>::new());
        assert_eq!(names("Go home now"), Vec::<String>::new());
        assert_eq!(names("we rewrote it in Rust and Go"), ["Rust", "Go"]);
        assert_eq!(names("a spark of hope"), Vec::<String>::new());
        assert_eq!(names("I own a cat"), ["cat"]);
        assert!(names("concatenate").is_empty(), "whole words only");
    }

    #[test]
    fn one_character_chinese_names_need_a_classifier() {
        assert_eq!(names("我有一隻貓"), ["cat"]);
        assert!(names("貓頭鷹很可愛").is_empty());
    }
}
