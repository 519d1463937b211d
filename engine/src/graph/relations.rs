//! Relation templates, Chinese (both scripts, matched after folding) and
//! English: a cue word between a source and its targets, per sentence.
//!
//! `A uses B` · `A 用/使用/採用 B` · `不用/not use B` (avoids) · `prefers`
//! (喜歡/偏好/prefer/like) · `depends_on` (依賴/depends on/requires) ·
//! `replaces` (取代/替換/replace; 從 A 遷移到 B / migrate from A to B) ·
//! `owns` (我有/養了/own/have a) · `works_on` (負責/維護/works on/maintains) ·
//! `member_of` (加入/屬於/member of/joined) · `located_in` (部署在/跑在/住在/
//! deployed on/runs on/lives in) · `part_of` (…的一部分/part of) · `is_a`
//! (是/is a) · `name_is` (叫/名字是/my name is).
//!
//! The source is the nearest entity before the cue, else the sentence's
//! subject: the user (我/I/使用者/the user) or the project (我們/we/專案/
//! project, and statements with no subject at all, "用 Redis 做快取"). The
//! targets are the entities after the cue, up to the next cue. Profile-like
//! relations (`name_is`, `is_a`, `owns`, `prefers`) without a known entity
//! after the cue take the short noun phrase there as the target.

use std::sync::LazyLock;

use regex::Regex;

use super::fold::Folded;
use super::{EntityType, Mention};

/// One end of a triple, before the index resolves it.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// The person the memory is about (the scope's tenant).
    User,
    /// The project the memory belongs to (the scope's repository).
    Project,
    /// `mentions[i]`.
    Mention(usize),
    /// A name no extractor found, taken from the template's slot.
    Named { name: String, kind: EntityType },
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawTriple {
    pub source: End,
    pub relation: &'static str,
    pub target: End,
}

/// Cues per relation, folded (lower case, Simplified). Latin cues match
/// whole words.
const CUES: &[(&str, &[&str])] = &[
    // Words that contain a cue but are none: matched, then ignored.
    (
        "",
        &[
            "使用者",
            "用户",
            "用途",
            "费用",
            "作用",
            "应用",
            "信用",
            "常用",
            "用量",
            "使用率",
            "正在",
            "现在",
            "存在",
            "在线",
            "在于",
            "实在",
            "是否",
            "还是",
            "就是",
            "但是",
            "于是",
            "总是",
            "而是",
            "不是",
            "或是",
            "要是",
            "是不是",
            "只是",
            "可是",
            "用来",
            "used to",
            "user",
            "users",
        ],
    ),
    (
        "avoids",
        &[
            "不用",
            "不使用",
            "不采用",
            "不再用",
            "不再使用",
            "弃用",
            "放弃",
            "别用",
            "不要用",
            "避免用",
            "避免使用",
            "don't use",
            "do not use",
            "does not use",
            "doesn't use",
            "not use",
            "not using",
            "no longer use",
            "stopped using",
            "avoid",
            "avoids",
            "dropped",
            "instead of",
            "rather than",
            "而不是",
        ],
    ),
    (
        "replaces",
        &[
            "取代",
            "替代",
            "替换",
            "换掉",
            "replace",
            "replaces",
            "replaced",
            "supersedes",
        ],
    ),
    (
        "migrates",
        &[
            "迁移到",
            "迁到",
            "换成",
            "改成",
            "升级到",
            "migrate to",
            "migrated to",
            "moved to",
            "switched to",
            "switch to",
            "move to",
        ],
    ),
    (
        "uses",
        &[
            "用",
            "使用",
            "采用",
            "改用",
            "选用",
            "基于",
            "用的是",
            "use",
            "uses",
            "using",
            "used",
            "adopt",
            "adopted",
            "chose",
            "choose",
            "built on",
            "built with",
            "powered by",
            "relies on",
            "rely on",
        ],
    ),
    (
        "prefers",
        &[
            "喜欢用",
            "喜欢",
            "偏好",
            "偏爱",
            "更喜欢",
            "比较喜欢",
            "爱用",
            "倾向",
            "习惯用",
            "prefer",
            "prefers",
            "preferred",
            "like",
            "likes",
            "love",
            "loves",
            "favor",
            "favour",
            "fan of",
        ],
    ),
    (
        "depends_on",
        &[
            "依赖于",
            "依赖",
            "依靠",
            "需要用到",
            "depends on",
            "depend on",
            "requires",
            "required by",
        ],
    ),
    (
        "owns",
        &[
            "养了",
            "养的",
            "我有",
            "拥有",
            "own",
            "owns",
            "i have a",
            "i have an",
            "i've got",
            "has a",
            "has an",
        ],
    ),
    (
        "works_on",
        &[
            "负责",
            "维护",
            "在做",
            "works on",
            "working on",
            "work on",
            "maintains",
            "maintain",
            "responsible for",
            "in charge of",
            "leads",
        ],
    ),
    (
        "member_of",
        &[
            "加入",
            "属于",
            "的成员",
            "member of",
            "joined",
            "belongs to",
            "belong to",
            "works at",
            "work at",
            "works for",
            "work for",
            "在公司",
        ],
    ),
    (
        "located_in",
        &[
            "部署在",
            "部署到",
            "跑在",
            "运行在",
            "托管在",
            "放在",
            "住在",
            "位于",
            "在",
            "deployed on",
            "deployed to",
            "deployed in",
            "runs on",
            "running on",
            "hosted on",
            "hosted in",
            "lives in",
            "live in",
            "based in",
            "located in",
        ],
    ),
    (
        "part_of",
        &["的一部分", "part of", "module of", "component of"],
    ),
    (
        "name_is",
        &[
            "我叫",
            "名字是",
            "名叫",
            "叫做",
            "my name is",
            "name is",
            "call me",
            "i'm called",
            "i am called",
        ],
    ),
    (
        "is_a",
        &[
            "是一个",
            "是一名",
            "是一位",
            "是一种",
            "我是",
            "是",
            "is a",
            "is an",
            "i am a",
            "i am an",
            "i'm a",
            "i'm an",
        ],
    ),
];

/// Relations whose target may be a bare phrase when no entity follows.
const PHRASE_TARGETS: &[&str] = &["name_is", "is_a", "owns", "prefers"];

struct Cues {
    regex: Regex,
    /// Relation of each alternative, in the regex's order.
    relation: Vec<&'static str>,
}

static CUE_SET: LazyLock<Cues> = LazyLock::new(|| {
    let mut all: Vec<(&str, &'static str)> = CUES
        .iter()
        .flat_map(|(rel, cues)| cues.iter().map(move |c| (*c, *rel)))
        .collect();
    // Longest first, so "不用" wins over "用" and "is an" over "is a".
    all.sort_by_key(|(c, _)| std::cmp::Reverse(c.len()));
    let alternatives: Vec<String> = all
        .iter()
        .map(|(c, _)| {
            let escaped = regex::escape(c);
            if c.is_ascii() {
                format!(r"(\b{escaped}\b)")
            } else {
                format!("({escaped})")
            }
        })
        .collect();
    Cues {
        regex: Regex::new(&alternatives.join("|")).expect("relation cues compile"),
        relation: all.into_iter().map(|(_, r)| r).collect(),
    }
});

const USER_WORDS: &[&str] = &[
    "我",
    "使用者",
    "用户",
    "i",
    "i'm",
    "i've",
    "my",
    "me",
    "the user",
    "user's",
];
const PROJECT_WORDS: &[&str] = &[
    "我们",
    "咱们",
    "团队",
    "专案",
    "项目",
    "本项目",
    "we",
    "we're",
    "we've",
    "our",
    "us",
    "team",
    "the project",
    "project",
];

/// A cue found in the folded sentence.
struct Cue {
    relation: &'static str,
    /// Byte range in the original text.
    start: usize,
    end: usize,
}

/// The triples the templates find in `text`, whose entities are `mentions`.
pub fn triples(text: &str, mentions: &[Mention]) -> Vec<RawTriple> {
    let mut out = Vec::new();
    for (s_start, s_end) in sentences(text) {
        let sentence = &text[s_start..s_end];
        let folded = Folded::new(sentence);
        let cues: Vec<Cue> = CUE_SET
            .regex
            .captures_iter(&folded.text)
            .filter_map(|caps| {
                let (i, m) = caps
                    .iter()
                    .enumerate()
                    .skip(1)
                    .find_map(|(i, m)| m.map(|m| (i, m)))?;
                let (start, end) = folded.original(m.start(), m.end());
                Some(Cue {
                    relation: CUE_SET.relation[i - 1],
                    start: s_start + start,
                    end: s_start + end,
                })
            })
            // A cue inside an entity name ("用户" in a name, "Use" in "UserService") is not a cue.
            .filter(|c| !mentions.iter().any(|m| c.start < m.end && m.start < c.end))
            .collect();
        let blockers = cues.iter().filter(|c| c.relation.is_empty()).count();
        let cues: Vec<Cue> = if blockers == 0 {
            cues
        } else {
            cues.into_iter()
                .filter(|c| !c.relation.is_empty())
                .collect()
        };
        let in_sentence: Vec<usize> = (0..mentions.len())
            .filter(|&i| mentions[i].start >= s_start && mentions[i].end <= s_end)
            .collect();
        // Entities a cue already took as targets are not the next cue's source
        // ("用 A 做主庫，不用 B": the project avoids B, not A).
        let mut consumed: Vec<usize> = Vec::new();
        for (n, cue) in cues.iter().enumerate() {
            // Targets run to the next cue, or to the end of a Chinese clause
            // (，；), whichever is first ("跑在 K8s 上，備份存到 S3": S3 is not
            // where it runs); a Chinese list uses 、 and stays whole.
            let clause_end = text[cue.end..s_end]
                .find(['，', '；'])
                .map_or(s_end, |at| cue.end + at);
            let window_end = cues
                .get(n + 1)
                .map_or(s_end, |next| next.start)
                .min(clause_end);
            let window_start = if n == 0 { s_start } else { cues[n - 1].end };
            let targets: Vec<usize> = in_sentence
                .iter()
                .copied()
                .filter(|&i| mentions[i].start >= cue.end && mentions[i].end <= window_end)
                .collect();
            let before = &text[window_start..cue.start];
            // "A uses B, which runs on C": a relative word hands B on as the source.
            let relative = {
                let f = Folded::new(before).text;
                f.split(|c: char| !c.is_alphanumeric())
                    .any(|w| matches!(w, "which" | "that" | "who"))
                    || f.contains('它')
                    || f.contains('其')
            };
            let source = in_sentence
                .iter()
                .copied()
                .filter(|&i| mentions[i].end <= cue.start && mentions[i].start >= s_start)
                // A thing just named may be what the next relation is about
                // ("用 A 跑在 B 上": A runs on B), but not a second choice
                // ("用 A，不用 B": the project avoids B).
                .rfind(|i| {
                    !consumed.contains(i)
                        || relative
                        || matches!(
                            cue.relation,
                            "replaces" | "migrates" | "located_in" | "depends_on" | "part_of"
                        )
                })
                .map(End::Mention)
                .unwrap_or_else(|| implicit_subject(before, cue, &text[s_start..cue.end]));
            consumed.extend(&targets);
            let mut ends: Vec<End> = targets.into_iter().map(End::Mention).collect();
            if ends.is_empty()
                && PHRASE_TARGETS.contains(&cue.relation)
                && let Some(named) = phrase_after(&text[cue.end..window_end], cue.relation)
            {
                ends.push(named);
            }
            for target in ends {
                push(&mut out, &source, cue.relation, target);
            }
        }
    }
    out
}

fn push(out: &mut Vec<RawTriple>, source: &End, relation: &'static str, target: End) {
    if *source == target {
        return;
    }
    let mut add = |source: End, relation: &'static str, target: End| {
        let triple = RawTriple {
            source,
            relation,
            target,
        };
        if !out.contains(&triple) {
            out.push(triple);
        }
    };
    match (relation, source) {
        // "(from) A migrate to B": B replaces A, and the project now uses B.
        ("migrates", End::Mention(_)) => {
            add(target.clone(), "replaces", source.clone());
            add(End::Project, "uses", target);
        }
        ("migrates", _) => add(source.clone(), "uses", target),
        _ => add(source.clone(), relation, target),
    }
}

/// Who a sentence is about when no entity precedes the cue.
fn implicit_subject(before: &str, cue: &Cue, sentence_before: &str) -> End {
    let words_of = |s: &str| {
        let folded = Folded::new(s).text;
        let latin: Vec<String> = folded
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        (folded, latin)
    };
    for text in [before, sentence_before] {
        let (folded, latin) = words_of(text);
        let has = |list: &[&str]| {
            list.iter().any(|w| {
                if w.is_ascii() {
                    let parts: Vec<&str> = w.split(' ').collect();
                    latin
                        .windows(parts.len())
                        .any(|win| win.iter().zip(&parts).all(|(a, b)| a == b))
                } else {
                    folded.contains(w)
                }
            })
        };
        if has(PROJECT_WORDS) {
            return End::Project;
        }
        if has(USER_WORDS) {
            return End::User;
        }
    }
    match cue.relation {
        "prefers" | "owns" | "name_is" => End::User,
        _ => End::Project,
    }
}

/// The short noun phrase right after a cue (up to punctuation), for
/// relations whose target is often not a known entity ("我是前端開發").
fn phrase_after(rest: &str, relation: &str) -> Option<End> {
    const LEADING: &[&str] = &[
        "一个", "一個", "一名", "一位", "一只", "一隻", "一条", "一條", "一台", "一辆", "一輛",
        "一种", "一種", "个", "個", "用", "使用", "喝", "吃", "看", "玩", "听", "聽", "做", "a ",
        "an ", "the ", "using ", "to use ", "to ",
    ];
    let end = rest
        .find(|c: char| "，。,.!?！？;；\n:：()（）".contains(c))
        .unwrap_or(rest.len());
    let mut phrase = rest[..end].trim();
    for lead in LEADING {
        if let Some(stripped) = phrase.strip_prefix(lead) {
            phrase = stripped.trim_start();
        }
    }
    // Stop at a conjunction or a new clause.
    for stop in [
        " and ",
        " but ",
        " because ",
        " so ",
        "但是",
        "但",
        "因为",
        "因為",
        "所以",
        "而且",
        "也",
    ] {
        if let Some(at) = phrase.find(stop) {
            phrase = phrase[..at].trim_end();
        }
    }
    let chars = phrase.chars().count();
    let max = if phrase.is_ascii() { 40 } else { 12 };
    if chars < 1 || chars > max || super::patterns::is_generic(phrase) {
        return None;
    }
    let kind = if relation == "name_is" {
        EntityType::Person
    } else {
        EntityType::Other
    };
    Some(End::Named {
        name: phrase.to_owned(),
        kind,
    })
}

/// Byte ranges of the sentences of `text` (a '.' ends one only before
/// whitespace or the end, so "Node.js" and "1.2" stay whole).
fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (n, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(n + 1).map(|(_, c)| *c);
        let ends = match c {
            '。' | '！' | '？' | '!' | '?' | ';' | '；' | '\n' => true,
            '.' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            let end = at + c.len_utf8();
            if end > start {
                out.push((start, end));
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::mentions;
    use super::*;

    fn show(text: &str) -> Vec<String> {
        let ms = mentions(text);
        let name = |e: &End| match e {
            End::User => "USER".to_owned(),
            End::Project => "PROJECT".to_owned(),
            End::Mention(i) => ms[*i].name.clone(),
            End::Named { name, .. } => format!("'{name}'"),
        };
        triples(text, &ms)
            .iter()
            .map(|t| format!("{} {} {}", name(&t.source), t.relation, name(&t.target)))
            .collect()
    }

    #[test]
    fn uses_and_avoids() {
        assert_eq!(
            show("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"),
            ["PROJECT uses PostgreSQL", "PROJECT avoids MongoDB"]
        );
        assert_eq!(show("We use Redis for caching."), ["PROJECT uses Redis"]);
        assert_eq!(
            show("The API gateway depends on Redis and Kafka"),
            ["PROJECT depends_on Redis", "PROJECT depends_on Kafka"]
        );
    }

    #[test]
    fn between_entities() {
        assert_eq!(
            show("Grafana depends on Prometheus"),
            ["Grafana depends_on Prometheus"]
        );
        assert_eq!(
            show("Grafana depends on Prometheus, which runs on k8s"),
            [
                "Grafana depends_on Prometheus",
                "Prometheus located_in Kubernetes"
            ]
        );
        assert_eq!(
            show("後端服務部署在 AWS 的 EKS 上"),
            ["PROJECT located_in AWS", "PROJECT located_in Amazon EKS"]
        );
        assert_eq!(
            show("PostgreSQL 跑在 Kubernetes 上，備份存到 S3"),
            ["PostgreSQL located_in Kubernetes"]
        );
        assert_eq!(
            show("我們決定用 PostgreSQL 跑在 Kubernetes 上"),
            [
                "PROJECT uses PostgreSQL",
                "PostgreSQL located_in Kubernetes"
            ]
        );
        assert_eq!(
            show("從 MySQL 遷移到 PostgreSQL"),
            ["PostgreSQL replaces MySQL", "PROJECT uses PostgreSQL"]
        );
    }

    #[test]
    fn profile_relations() {
        assert_eq!(show("我叫張三"), ["USER name_is 張三"]);
        assert_eq!(show("my name is Li Wei"), ["USER name_is Li Wei"]);
        assert_eq!(show("我是前端開發"), ["USER is_a '前端開發'"]);
        assert_eq!(show("I prefer TypeScript"), ["USER prefers TypeScript"]);
        assert_eq!(show("我有一隻貓"), ["USER owns cat"]);
        assert_eq!(show("使用者喜歡用 Python"), ["USER prefers Python"]);
    }
}
