//! Entities that no dictionary knows, found by their shape: file paths,
//! URLs (their host), code identifiers (dotted names, calls, CamelCase,
//! inline code), quoted names, capitalised runs in English, Chinese person
//! names in a naming context, and project names after "project"/專案.
//! A precision filter keeps generic words out (`GENERIC`).

use std::sync::LazyLock;

use regex::Regex;

use super::EntityType;
use super::fold::key;

/// A candidate found by shape: its byte range, the name to show, its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Shaped {
    pub start: usize,
    pub end: usize,
    pub name: String,
    pub kind: EntityType,
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("entity pattern compiles")
}

const FILE_EXTENSIONS: &str = "rs|py|pyi|ts|tsx|js|jsx|mjs|cjs|go|java|kt|kts|scala|rb|php|c|h|cc|cpp|hpp|cs|swift|m|mm|lua|sh|bash|zsh|ps1|sql|md|rst|txt|json|jsonl|yaml|yml|toml|ini|cfg|conf|env|xml|html|htm|css|scss|sass|less|vue|svelte|proto|graphql|gql|wit|wasm|lock|csv|tsv|parquet|ipynb|dockerfile|tf|hcl|gradle|pom|mk|cmake|log|pdf|docx|xlsx|pptx|png|jpg|jpeg|gif|svg";

static URL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:https?|wss?|ftp)://([A-Za-z0-9.-]+)(?::\d+)?[^\s，。、；）)」』>]*")
});
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?:\.{{1,2}}/|~/|/)?(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+|\b[A-Za-z0-9_][A-Za-z0-9_-]*\.(?i:{FILE_EXTENSIONS})\b|\b(?:Dockerfile|Makefile|Cargo\.toml|package\.json|README)\b"
    ))
});
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?"));
static CALL: LazyLock<Regex> = LazyLock::new(|| re(r"\b[A-Za-z_][A-Za-z0-9_]*\(\)"));
static CAMEL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")
});
static SNAKE: LazyLock<Regex> = LazyLock::new(|| re(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"));
static INLINE_CODE: LazyLock<Regex> = LazyLock::new(|| re(r"`([^`\n]{2,60})`"));
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"“([^”\n]{2,40})”|"([^"\n]{2,40})"|「([^」\n]{2,40})」|『([^』\n]{2,40})』|《([^》\n]{2,40})》"#,
    )
});
static CAPITALISED: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[A-Z][a-zA-Z0-9]*(?:[ -][A-Z][a-zA-Z0-9]*)*\b"));
static PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:專案|专案|項目|项目|代號|代号|(?i:project|codename))\s*[「“『]?([A-Z][A-Za-z0-9_-]*(?: [A-Z][A-Za-z0-9_-]*)?|[\p{Han}]{2,6}[」”』])",
    )
});

/// Common single surnames and the compound ones (Traditional and Simplified).
const SURNAMES: &str = "王李張张劉刘陳陈楊杨黃黄趙赵吳吴周徐孫孙馬马朱胡郭何林高羅罗鄭郑梁謝谢宋唐許许韓韩馮冯鄧邓曹彭曾蕭萧田董潘袁蔡蔣蒋余于杜葉叶程蘇苏魏呂吕丁任沈姚盧卢姜崔鍾钟譚谭陸陆汪范金石廖賈贾夏韋韦傅方白鄒邹孟熊秦邱江尹薛閻阎段雷侯龍龙史陶黎賀贺顧顾毛郝龔龚邵萬万錢钱嚴严賴赖覃洪武戴莫孔向湯汤常溫温康施文牛樊葛邢安齊齐易喬乔伍龐庞顏颜倪莊庄聶聂章魯鲁岳翟殷詹申歐欧耿關关蘭兰焦俞左柳甘祝包寧宁尚符舒阮柯紀纪梅童凌畢毕單单季裴霍涂成苗谷盛曲翁冉駱骆藍蓝路游辛靳管柴蒙鮑鲍華华喻祁蒲房滕屈饒饶解牟艾尤陽阳時时穆農农司卓古吉繆缪簡简車车項项連连芦麥麦褚婁娄竇窦戚岑景黨党宮宫費费卜冷晏席衛卫米柏宗瞿桂全佟應应臧閔闵苟鄔邬邊边卞姬師师和仇欒栾隋商刁沙榮荣巫寇桑郎甄叢丛仲虞敖鞏巩明佘池查麻苑遲迟鄺邝";
const COMPOUND_SURNAMES: &[&str] = &[
    "歐陽", "欧阳", "司馬", "司马", "諸葛", "诸葛", "上官", "東方", "东方", "皇甫", "令狐", "慕容",
    "司徒", "夏侯",
];
/// Words right before a Chinese name that say a person is named.
const NAME_BEFORE: &[&str] = &[
    "我叫",
    "叫做",
    "名叫",
    "名字是",
    "和",
    "跟",
    "與",
    "与",
    "找",
    "請",
    "请",
    "讓",
    "让",
    "問",
    "问",
    "由",
    "給",
    "给",
    "同事",
    "經理",
    "经理",
    "老闆",
    "老板",
    "主管",
    "組長",
    "组长",
    "負責人",
    "负责人",
    "@",
];
/// Words right after a Chinese name that say it is a person.
const NAME_AFTER: &[&str] = &[
    "負責",
    "负责",
    "說",
    "说",
    "提到",
    "先生",
    "小姐",
    "老師",
    "老师",
    "經理",
    "经理",
    "同學",
    "同学",
    "表示",
    "建議",
    "建议",
    "認為",
    "认为",
    "覺得",
    "觉得",
    "決定",
    "决定",
    "同意",
    "反對",
    "反对",
    "寫",
    "写",
    "確認",
    "确认",
    "處理",
    "处理",
    "審查",
    "审查",
    "看一下",
    "幫忙",
    "帮忙",
    "回覆",
    "回复",
    "問過",
    "问过",
];
/// Characters that never belong to a name (function words).
const NOT_IN_NAME: &str = "的了是在有和跟與与也都就還还要會会說说把被給给對对向從从到用做讓让請请這这那我你他她它們们個个";

/// Words that are never entities on their own, whatever their shape:
/// generic nouns, pronouns, sentence openers (folded keys).
const GENERIC: &[&str] = &[
    "i",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "my",
    "our",
    "your",
    "his",
    "her",
    "their",
    "its",
    "me",
    "us",
    "them",
    "mr",
    "ms",
    "mrs",
    "dr",
    "ok",
    "okay",
    "yes",
    "no",
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "please",
    "note",
    "todo",
    "fixme",
    "update",
    "system",
    "systems",
    "data",
    "user",
    "users",
    "file",
    "files",
    "service",
    "services",
    "server",
    "servers",
    "database",
    "databases",
    "api",
    "apis",
    "app",
    "apps",
    "code",
    "bug",
    "bugs",
    "test",
    "tests",
    "issue",
    "issues",
    "project",
    "projects",
    "team",
    "teams",
    "client",
    "clients",
    "frontend",
    "backend",
    "front end",
    "back end",
    "config",
    "configuration",
    "settings",
    "feature",
    "features",
    "module",
    "modules",
    "function",
    "functions",
    "class",
    "classes",
    "method",
    "methods",
    "error",
    "errors",
    "log",
    "logs",
    "cache",
    "queue",
    "job",
    "jobs",
    "task",
    "tasks",
    "page",
    "pages",
    "model",
    "models",
    "version",
    "release",
    "build",
    "deploy",
    "deployment",
    "production",
    "prod",
    "staging",
    "dev",
    "development",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "today",
    "tomorrow",
    "yesterday",
    "week",
    "month",
    "year",
    "morning",
    "evening",
    "night",
    "also",
    "however",
    "then",
    "after",
    "before",
    "when",
    "while",
    "if",
    "so",
    "but",
    "and",
    "or",
    "because",
    "since",
    "what",
    "why",
    "how",
    "where",
    "who",
    "which",
    "there",
    "here",
    "is",
    "are",
    "was",
    "were",
    "be",
    "do",
    "does",
    "did",
    "let",
    "lets",
    "let's",
    "should",
    "must",
    "can",
    "could",
    "would",
    "will",
    "just",
    "maybe",
    "sure",
    "great",
    "good",
    "nice",
    "new",
    "old",
    "next",
    "last",
    "first",
    "second",
    "all",
    "every",
    "some",
    "any",
    "none",
    "done",
    "readme",
    "json",
    "main",
    "master",
    "true",
    "false",
    "null",
    "none",
    "id",
    "ids",
    "url",
    "http",
    "https",
    "www",
    "etc",
    "e.g",
    "i.e",
    "vs",
    "via",
    "per",
    "re",
    "ps",
    "fyi",
    "asap",
    "q1",
    "q2",
    "q3",
    "q4",
    "ci",
    "cd",
    "pr",
    "prs",
    "mr",
    "qa",
    "ui",
    "ux",
    "db",
    "os",
    "系统",
    "数据",
    "资料",
    "用户",
    "使用者",
    "文件",
    "档案",
    "服务",
    "服务器",
    "伺服器",
    "数据库",
    "资料库",
    "项目",
    "专案",
    "团队",
    "问题",
    "功能",
    "模块",
    "模组",
    "配置",
    "设置",
    "设定",
    "前端",
    "后端",
    "代码",
    "程式",
    "程序",
    "接口",
    "版本",
    "测试",
    "环境",
    "日志",
    "缓存",
    "快取",
    "用户名",
    "密码",
    "我们",
    "你们",
    "他们",
    "大家",
    "今天",
    "明天",
    "昨天",
    "本周",
    "下周",
    "上周",
];

/// Verbs whose subject is a person ("Caroline leads the team").
const PERSON_VERBS: &[&str] = &[
    "said",
    "says",
    "told",
    "tells",
    "asked",
    "asks",
    "leads",
    "led",
    "wants",
    "wanted",
    "thinks",
    "thought",
    "believes",
    "knows",
    "knew",
    "likes",
    "liked",
    "loves",
    "loved",
    "prefers",
    "preferred",
    "works",
    "worked",
    "lives",
    "lived",
    "owns",
    "owned",
    "went",
    "wrote",
    "writes",
    "joined",
    "joins",
    "left",
    "manages",
    "managed",
    "maintains",
    "mentioned",
    "suggested",
    "suggests",
    "decided",
    "decides",
    "agreed",
    "agrees",
    "feels",
    "felt",
    "met",
    "meets",
    "visited",
    "visits",
    "moved",
    "bought",
];

/// Capitalised words that open sentences without naming anyone.
const SENTENCE_OPENERS: &[&str] = &[
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "we",
    "our",
    "they",
    "he",
    "she",
    "you",
    "i",
    "my",
    "your",
    "there",
    "here",
    "what",
    "which",
    "who",
    "when",
    "where",
    "why",
    "how",
    "everything",
    "everyone",
    "nothing",
    "someone",
    "something",
    "each",
    "every",
    "all",
    "some",
    "most",
    "many",
    "much",
    "one",
    "both",
    "either",
    "neither",
    "another",
    "other",
    "such",
    "also",
    "still",
    "then",
    "now",
    "today",
    "yesterday",
    "tomorrow",
    "maybe",
    "perhaps",
    "data",
    "code",
    "time",
    "work",
    "life",
    "music",
    "art",
    "news",
];

pub fn is_generic(name: &str) -> bool {
    let k = key(name);
    k.chars().count() < 2 && !k.chars().any(crate::index::tokenize::is_cjk)
        || GENERIC.contains(&k.as_str())
}

/// Every candidate found by shape, possibly overlapping (the caller
/// resolves overlaps, dictionary names first).
pub fn find(text: &str) -> Vec<Shaped> {
    let mut out = Vec::new();
    let mut push = |start: usize, end: usize, name: &str, kind: EntityType| {
        let name = name.trim_matches(|c: char| c.is_whitespace() || ".,;:!?".contains(c));
        if name.is_empty() || is_generic(name) {
            return;
        }
        out.push(Shaped {
            start,
            end,
            name: name.to_owned(),
            kind,
        });
    };
    let mut urls: Vec<(usize, usize)> = Vec::new();
    for m in URL.captures_iter(text) {
        let whole = m.get(0).expect("match");
        let host = m.get(1).expect("host");
        urls.push((whole.start(), whole.end()));
        push(
            whole.start(),
            whole.end(),
            host.as_str(),
            EntityType::Service,
        );
    }
    let in_url = |start: usize| urls.iter().any(|&(s, e)| s <= start && start < e);
    for m in PATH.find_iter(text) {
        if in_url(m.start()) {
            continue;
        }
        let s = m.as_str();
        // A bare "a/b" with no extension is as likely prose ("and/or") as a path.
        let looks_like_file =
            s.contains('.') || s.starts_with('/') || s.starts_with("./") || s.starts_with("~/");
        if looks_like_file && !s.contains("://") && !is_version(s) {
            push(m.start(), m.end(), s, EntityType::File);
        }
    }
    for m in DOTTED.find_iter(text) {
        if in_url(m.start()) {
            continue;
        }
        let s = m.as_str();
        if !is_version(s) && s.chars().any(|c| c.is_ascii_lowercase()) {
            push(m.start(), m.end(), s, EntityType::Code);
        }
    }
    for re in [&*CALL, &*CAMEL, &*SNAKE] {
        for m in re.find_iter(text) {
            push(m.start(), m.end(), m.as_str(), EntityType::Code);
        }
    }
    for m in INLINE_CODE.captures_iter(text) {
        let inner = m.get(1).expect("code");
        if !inner.as_str().contains(char::is_whitespace) {
            push(inner.start(), inner.end(), inner.as_str(), EntityType::Code);
        }
    }
    for m in QUOTED.captures_iter(text) {
        if let Some(inner) = (1..=5).find_map(|i| m.get(i)) {
            let words = inner.as_str().split_whitespace().count();
            if words <= 5 {
                push(
                    inner.start(),
                    inner.end(),
                    inner.as_str(),
                    EntityType::Other,
                );
            }
        }
    }
    for m in PROJECT.captures_iter(text) {
        let name = m.get(1).expect("project name");
        let clean = name.as_str().trim_end_matches(['」', '”', '』']);
        push(
            name.start(),
            name.start() + clean.len(),
            clean,
            EntityType::Project,
        );
    }
    capitalised(text, &mut push);
    chinese_names(text, &mut push);
    out
}

/// `1.2.3`, `v16.4`: a version, not an identifier.
fn is_version(s: &str) -> bool {
    s.trim_start_matches(['v', 'V'])
        .split('.')
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Runs of capitalised English words, not sentence-initial unless the run
/// has two words or more (`Project Alpha`); a run after "with", "told",
/// "Mr." … is a person.
fn capitalised(text: &str, push: &mut impl FnMut(usize, usize, &str, EntityType)) {
    const PERSON_BEFORE: &[&str] = &[
        "with", "told", "asked", "met", "called", "named", "mr.", "ms.", "mrs.", "dr.", "by",
        "from", "to", "and", "thanked", "emailed", "pinged",
    ];
    for m in CAPITALISED.find_iter(text) {
        let mut start = m.start();
        let mut words: Vec<&str> = m.as_str().split([' ', '-']).collect();
        // Drop leading generic words ("The Redis team" → "Redis team").
        while words.len() > 1 && is_generic(words[0]) {
            start += words[0].len() + 1;
            words.remove(0);
        }
        let name = &text[start..m.end()];
        let all_caps = name
            .chars()
            .filter(|c| c.is_alphabetic())
            .all(|c| c.is_uppercase());
        if all_caps && name.len() <= 3 {
            continue; // an acronym the dictionary does not know
        }
        let initial = super::sentence_start(text, start);
        // One capitalised word opening a sentence is usually just the
        // sentence's first word — unless a verb only people do follows it
        // ("Caroline leads…", "Melanie said…"), which makes it a person.
        let next = text[m.end()..].split_whitespace().next().unwrap_or("");
        let verb_follows = PERSON_VERBS.contains(&next);
        let opener = SENTENCE_OPENERS.contains(&name.to_lowercase().as_str());
        if words.len() == 1 && initial && (!verb_follows || opener) {
            continue;
        }
        let before = text[..start]
            .split_whitespace()
            .next_back()
            .unwrap_or("")
            .to_lowercase();
        let kind = if PERSON_BEFORE.contains(&before.as_str()) && words.len() <= 3 {
            EntityType::Person
        } else {
            EntityType::Other
        };
        push(start, m.end(), name, kind);
    }
}

/// A surname and one or two more Han characters, with a naming word right
/// before or a person word right after.
fn chinese_names(text: &str, push: &mut impl FnMut(usize, usize, &str, EntityType)) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let compound = COMPOUND_SURNAMES.iter().any(|s| text[at..].starts_with(s));
        let surname_len = if compound {
            2
        } else if SURNAMES.contains(c) {
            1
        } else {
            i += 1;
            continue;
        };
        let before = &text[..at];
        let named_before = NAME_BEFORE.iter().any(|w| before.ends_with(w));
        let mut found = None;
        for given in [2, 1] {
            let end_i = i + surname_len + given;
            if end_i > chars.len() {
                continue;
            }
            let given_ok = chars[i + surname_len..end_i]
                .iter()
                .all(|(_, c)| crate::index::tokenize::is_cjk(*c) && !NOT_IN_NAME.contains(*c));
            if !given_ok {
                continue;
            }
            let end = chars.get(end_i).map_or(text.len(), |(b, _)| *b);
            let named_after = NAME_AFTER.iter().any(|w| text[end..].starts_with(w));
            let boundary_after = chars.get(end_i).is_none_or(|(_, c)| {
                !crate::index::tokenize::is_cjk(*c) || NOT_IN_NAME.contains(*c)
            });
            if named_after || (named_before && boundary_after) {
                found = Some((end, end_i));
                break;
            }
        }
        if let Some((end, end_i)) = found {
            push(at, end, &text[at..end], EntityType::Person);
            i = end_i;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shaped(text: &str) -> Vec<(String, EntityType)> {
        find(text).into_iter().map(|s| (s.name, s.kind)).collect()
    }

    #[test]
    fn files_urls_and_code() {
        let found =
            shaped("修了 src/auth/login.py 的 get_session()，文件在 https://docs.example.com/a 上");
        assert!(
            found.contains(&("src/auth/login.py".into(), EntityType::File)),
            "{found:?}"
        );
        assert!(
            found.contains(&("get_session()".into(), EntityType::Code)),
            "{found:?}"
        );
        assert!(
            found.contains(&("docs.example.com".into(), EntityType::Service)),
            "{found:?}"
        );
        let found = shaped("call os.path.join in UserService and see README.md, not v1.2.3");
        assert!(
            found.contains(&("os.path.join".into(), EntityType::Code)),
            "{found:?}"
        );
        assert!(
            found.contains(&("UserService".into(), EntityType::Code)),
            "{found:?}"
        );
        assert!(
            found.contains(&("README.md".into(), EntityType::File)),
            "{found:?}"
        );
        assert!(!found.iter().any(|(n, _)| n.contains("1.2.3")), "{found:?}");
    }

    #[test]
    fn quoted_capitalised_projects_and_people() {
        let found = shaped("We met with Caroline Smith about Project Alpha yesterday");
        assert!(
            found.contains(&("Caroline Smith".into(), EntityType::Person)),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|(n, _)| n == "Project Alpha" || n == "Alpha"),
            "{found:?}"
        );
        let found = shaped("找張三確認一下");
        assert!(
            found.contains(&("張三".into(), EntityType::Person)),
            "{found:?}"
        );
        let found = shaped("專案代號「星河」由張三負責，我叫李小明");
        assert!(
            found.contains(&("星河".into(), EntityType::Project)),
            "{found:?}"
        );
        assert!(
            found.contains(&("張三".into(), EntityType::Person)),
            "{found:?}"
        );
        assert!(
            found.contains(&("李小明".into(), EntityType::Person)),
            "{found:?}"
        );
    }

    #[test]
    fn generic_words_are_never_entities() {
        let found = shaped("The system and The Database. Today we fix the API. 系統和資料庫");
        assert!(found.is_empty(), "{found:?}");
        assert!(shaped("王道是用測試驅動").is_empty());
    }
}
