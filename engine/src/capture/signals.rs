//! The signals of one sentence, with the seed's confidences:
//!
//! | signal | examples | confidence |
//! | --- | --- | --- |
//! | remember / forget | 記住… / 忘掉… / remember … / forget … | 0.99 |
//! | profile | 我叫… 我是… my name is… I am a… I work at… 我住在… | 0.93 |
//! | possession | 我有一隻… 我養了… I own… I have a… | 0.90 |
//! | preference | 我喜歡用… 我討厭… I prefer… I like… | 0.88 |
//! | assistant style | 以後請用中文回覆 / always use… / reply in… | 0.86 |
//! | decision | 我們決定… / we decided… / let's go with… | 0.80 |
//! | constraint | 必須… 不能… / must… never… | 0.75 |
//! | fact | 我們用 X / we use X (relaxed mode only) | 0.55 |
//!
//! Decisions and constraints are the only implicit signals an assistant's
//! turn can carry (at 0.8× the confidence: the assistant's words are less
//! authoritative than the user's); profile, possession, preference and
//! style are about the user and come only from the user. Hedged wording
//! (可能, 也許, maybe, I think…) lowers a confidence by 0.8×.
//!
//! Each candidate is rewritten as a self-contained statement with the
//! speaker explicit, in the sentence's language and script: 使用者/用户 and
//! 團隊/团队 in Chinese, "The user" and "The team" in English.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::{Candidate, Role, Signal, chinese, traditional};
use crate::graph::fold::Folded;

pub const EXPLICIT: f64 = 0.99;
pub const PROFILE: f64 = 0.93;
pub const POSSESSION: f64 = 0.90;
pub const PREFERENCE: f64 = 0.88;
pub const STYLE: f64 = 0.86;
pub const DECISION: f64 = 0.80;
pub const CONSTRAINT: f64 = 0.75;
pub const FACT: f64 = 0.55;
const ASSISTANT_FACTOR: f64 = 0.8;
const HEDGE_FACTOR: f64 = 0.8;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("capture pattern compiles")
}

/// Openers that do not change what follows (folded).
static OPENER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:(?:麻烦你|麻烦|帮我|帮忙|你|对了|另外|还有|顺便|其实|嗯|那|ok|okay|so|btw|by the way|also|and|hey|hi|please|pls|kindly|just|oh)[\s,，、:：!！]*)+",
    )
});
static REMEMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:帮我|请|你)?(?:以后|今后|之后|从现在起)?(?:都)?(?:要|务必|一定要|一定|千万要|千万|得)?(?:记住|记下|记着|记得|记一下|把(?:这件事|这个|这条|这些|以下内容|下面的内容|下面这些)?(?:存进|存到|储存到|保存到|记到|写进|加入|放进)(?:你的)?记忆(?:里|中)?|储存到记忆|储存记忆|存到记忆|存进记忆|保存到记忆|加入记忆|写进记忆|别忘了|不要忘记|不要忘了|remember that|please remember|remember|commit (?:this |that )?to memory|store (?:this |that )?in (?:your )?memory|save (?:this |that )?to (?:your )?memory|add (?:this |that )?to (?:your )?memory|note that|note:|please note(?: that)?|make a note(?: of this| that)?|take note(?: of this| that)?|keep in mind that|keep in mind|don't forget that|don't forget|do not forget)\b?[\s,，:：]*",
    )
});
static FORGET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:帮我|请|你可以|可以|你)?(?:忘掉|忘记|忘了|删除记忆|删掉记忆|删除这条记忆|删除那条记忆|移除记忆|(?:不用|不需要|不必|别|不要)再?(?:记得|记着|记住|记)|(?:you can |you may |you could |feel free to )?(?:forget about|forget that|forget)|remove (?:this |that )?from (?:your )?memory|delete (?:the |that |this )?memory(?: of| about)?|stop remembering|no need to remember)\b?[\s,，:：]*",
    )
});
/// A forget command wrapped around what to forget: 把…忘掉, 删掉…的记忆
/// (the object comes before the verb, or between the verb and 记忆).
static FORGET_WRAPPED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:帮我|请|你)?(?:把(.+?)(?:忘掉|忘记|忘了|删掉|删除|删了|去掉|移除|清除|清掉)|(?:删掉|删除|移除|去掉|清除|清掉)(.+?)记忆)(?:吧|了|掉)?$",
    )
});
/// Words around what to forget that are not what to look for.
static FORGET_FILLER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:之前|以前|先前|刚才|关于|有关|那条|这条|那个|这个|的记忆|记忆|的事|说过的|我说的|\bthe memory\b|\bmemories\b|\bmemory\b|\babout\b|\bthat\b|\bthe\b|\bmy\b|\bwhat i said\b|\bi said\b|\bprevious\b|\bearlier\b)",
    )
});

static HEDGE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"可能|也许|或许|大概|应该会|好像|似乎|考虑|打算|\bmaybe\b|\bperhaps\b|\bprobably\b|\bmight\b|\bi think\b|\bi guess\b|\bconsidering\b|\bthinking about\b|\bplan to\b",
    )
});

/// Occupations: a "我是… / I am a …" naming one is the user's role.
const OCCUPATIONS: &[&str] = &[
    "工程师",
    "开发",
    "程序员",
    "设计师",
    "经理",
    "学生",
    "老师",
    "教师",
    "研究员",
    "产品",
    "架构师",
    "分析师",
    "顾问",
    "医生",
    "护士",
    "律师",
    "会计",
    "创业",
    "创办人",
    "老板",
    "主管",
    "实习",
    "运维",
    "测试",
    "数据科学家",
    "科学家",
    "作家",
    "记者",
    "pm",
    "cto",
    "ceo",
    "engineer",
    "developer",
    "programmer",
    "designer",
    "manager",
    "student",
    "teacher",
    "researcher",
    "scientist",
    "analyst",
    "architect",
    "consultant",
    "founder",
    "doctor",
    "nurse",
    "lawyer",
    "accountant",
    "writer",
    "journalist",
    "intern",
    "devops",
    "sre",
    "tester",
    "lead",
    "professor",
    "admin",
    "administrator",
    "maintainer",
    "freelancer",
    "contractor",
];

/// Objects of "I have a …" that are not possessions.
const NOT_POSSESSIONS: &[&str] = &[
    "点",
    "些",
    "空",
    "时间",
    "问题",
    "事",
    "想法",
    "个问题",
    "一个问题",
    "办法",
    "意见",
    "建议",
    "错",
    "疑问",
    "机会",
    "必要",
    "可能",
    "兴趣",
    "会",
    "课",
    "约",
    "话",
    "感觉",
    "印象",
    "经验",
    "权限",
    "需求",
    "任务",
    "bug",
    "question",
    "problem",
    "idea",
    "meeting",
    "issue",
    "doubt",
    "minute",
    "moment",
    "feeling",
    "appointment",
    "call",
    "suggestion",
    "request",
    "favor",
    "favour",
    "look",
    "chance",
    "lot",
    "few",
    "couple",
    "bit",
    "plan",
    "concern",
    "deadline",
    "task",
    "headache",
    "cold",
    "error",
];

/// Objects that say nothing on their own ("I like it").
const VAGUE: &[&str] = &[
    "it", "this", "that", "them", "these", "those", "you", "your", "yours", "it a lot", "this one",
    "that one", "这个", "那个", "它", "这样", "那样", "你", "这", "那", "你的", "这些", "那些",
];

struct Voice {
    zh: bool,
    traditional: bool,
}

impl Voice {
    /// The voice of a sentence; `turn_traditional`: the whole turn is written
    /// in Traditional characters (a short clause may not show it by itself).
    fn of(sentence: &str, turn_traditional: bool) -> Voice {
        Voice {
            zh: chinese(sentence),
            traditional: traditional(sentence) || turn_traditional,
        }
    }

    fn user(&self) -> &'static str {
        match (self.zh, self.traditional) {
            (true, true) => "使用者",
            (true, false) => "用户",
            _ => "The user",
        }
    }

    fn team(&self) -> &'static str {
        match (self.zh, self.traditional) {
            (true, true) => "團隊",
            (true, false) => "团队",
            _ => "The team",
        }
    }

    fn assistant(&self) -> &'static str {
        match (self.zh, self.traditional) {
            (true, true) => "助手",
            (true, false) => "助手",
            _ => "the assistant",
        }
    }
}

/// The candidates of one sentence (already known not to be excluded).
pub fn candidates(sentence: &str, role: Role) -> Vec<Candidate> {
    candidates_in(sentence, role, false)
}

/// As [`candidates`], for a sentence of a turn written in Traditional
/// characters (`turn_traditional`): statements are written in Traditional
/// too, even when the sentence alone does not show its script.
/// A sentence without its closing mark and its openers ("btw", "對了").
fn body_of(sentence: &str) -> &str {
    let trimmed = sentence
        .trim()
        .trim_end_matches(['。', '.', '!', '！', '；', ';']);
    let folded = Folded::new(trimmed);
    let opener = OPENER.find(&folded.text).map_or(0, |m| m.end());
    if opener > 0 && opener < folded.text.len() {
        let (start, _) = folded.original(opener, opener + 1);
        &trimmed[start..]
    } else {
        trimmed
    }
}

/// Whether a sentence opens with an explicit remember/forget command. Such
/// a sentence is one statement (not split into clauses), and what it asks
/// to keep is kept even when it mentions an error or a date: the user said so.
pub fn is_command(sentence: &str) -> bool {
    let folded = Folded::new(body_of(sentence)).text;
    REMEMBER.is_match(&folded) || FORGET.is_match(&folded) || FORGET_WRAPPED.is_match(&folded)
}

pub fn candidates_in(sentence: &str, role: Role, turn: bool) -> Vec<Candidate> {
    let body = body_of(sentence);
    if role == Role::User
        && let Some(c) = explicit(body, turn)
    {
        return c;
    }
    let mut out = Vec::new();
    if role == Role::User {
        out.extend(profile(body, turn));
        out.extend(possession(body, turn));
        out.extend(preference(body, turn));
        out.extend(style(body, turn));
    }
    out.extend(decision(body, turn));
    if out.is_empty() {
        out.extend(constraint(body, turn));
    }
    if out.is_empty() {
        out.extend(fact(body, turn));
    }
    let hedged = HEDGE.is_match(&Folded::new(body).text);
    for c in &mut out {
        if role == Role::Assistant {
            c.confidence *= ASSISTANT_FACTOR;
        }
        if hedged {
            c.confidence *= HEDGE_FACTOR;
        }
        c.confidence = (c.confidence * 1000.0).round() / 1000.0;
    }
    out
}

/// Whether a text says "remember"/"forget" at all (for the code exclusion:
/// a command that sits only inside code is not one).
pub fn mentions_command(text: &str) -> bool {
    let f = Folded::new(text).text;
    [
        "记住",
        "记下",
        "忘掉",
        "忘记",
        "remember",
        "forget",
        "store in memory",
    ]
    .iter()
    .any(|w| f.contains(w))
}

/// A match over the folded text, as a range of the original.
struct Found<'a> {
    text: &'a str,
    folded: Folded,
}

impl<'a> Found<'a> {
    fn new(text: &'a str) -> Found<'a> {
        Found {
            text,
            folded: Folded::new(text),
        }
    }

    fn captures(&self, pattern: &Regex) -> Option<Captures<'_>> {
        pattern.captures(&self.folded.text)
    }

    /// The original text of a capture group.
    fn group(&self, caps: &Captures<'_>, i: usize) -> Option<&'a str> {
        let m = caps.get(i)?;
        if m.start() == m.end() {
            return Some("");
        }
        let (s, e) = self.folded.original(m.start(), m.end());
        Some(&self.text[s..e])
    }

    fn rest_after(&self, caps: &Captures<'_>) -> &'a str {
        let end = caps.get(0).map_or(0, |m| m.end());
        if end >= self.folded.text.len() {
            return "";
        }
        let (s, _) = self.folded.original(end, end + 1);
        &self.text[s..]
    }
}

fn explicit(body: &str, turn: bool) -> Option<Vec<Candidate>> {
    let found = Found::new(body);
    if let Some(caps) = found.captures(&REMEMBER) {
        let rest = found.rest_after(&caps).trim();
        let rest = ["that ", "这个", "這個", "一下"]
            .iter()
            .fold(rest, |r, lead| r.strip_prefix(lead).unwrap_or(r))
            .trim();
        if rest.chars().filter(|c| c.is_alphanumeric()).count() < 2
            || VAGUE.contains(&Folded::new(rest).text.as_str())
        {
            return Some(Vec::new());
        }
        // "記住我偏好用 dark 主題": the statement an implicit signal would make,
        // with the command's certainty.
        let implied = candidates_in(rest, Role::User, turn);
        let candidate = match implied.into_iter().next() {
            Some(c) if c.signal.personal() => Candidate {
                signal: Signal::Remember,
                confidence: EXPLICIT,
                ..c
            },
            Some(c) => candidate(c.content, Signal::Remember, EXPLICIT, None),
            None => candidate(
                first_person(rest, &Voice::of(rest, turn)),
                Signal::Remember,
                EXPLICIT,
                None,
            ),
        };
        return Some(vec![candidate]);
    }
    if let Some(caps) = found.captures(&FORGET_WRAPPED) {
        let inner = found
            .group(&caps, 1)
            .or_else(|| found.group(&caps, 2))
            .unwrap_or("");
        return Some(forget_candidate(inner));
    }
    if let Some(caps) = found.captures(&FORGET) {
        if ["忘了说", "忘了讲", "忘了告诉", "忘了提"]
            .iter()
            .any(|w| found.folded.text.starts_with(w))
        {
            // "忘了說，…": "I forgot to mention" — not a command.
            return None;
        }
        let rest = found.rest_after(&caps);
        return Some(forget_candidate(rest));
    }
    None
}

/// The forget candidate for what follows (or sits inside) the command.
fn forget_candidate(rest: &str) -> Vec<Candidate> {
    let query = FORGET_FILLER
        .replace_all(&Folded::new(rest).text, " ")
        .into_owned();
    let query = query.split_whitespace().collect::<Vec<_>>().join(" ");
    let query = query
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_owned();
    if query.chars().filter(|c| c.is_alphanumeric()).count() < 2 {
        return Vec::new();
    }
    // Look for what the user wrote, not its folded form.
    let content = if rest.trim().is_empty() {
        query
    } else {
        clean_forget(rest)
    };
    vec![candidate(content, Signal::Forget, EXPLICIT, None)]
}

fn clean_forget(rest: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for piece in rest.split(|c: char| c.is_whitespace() || "，,。.:：!！".contains(c)) {
        let f = FORGET_FILLER.replace_all(piece, " ");
        let kept = f.trim();
        if !kept.is_empty() && !FORGET_FILLER.is_match(&Folded::new(kept).text) {
            words.push(kept.to_owned());
        } else if !kept.is_empty() {
            let folded_kept = FORGET_FILLER
                .replace_all(&Folded::new(kept).text, " ")
                .trim()
                .to_owned();
            if !folded_kept.is_empty() {
                words.push(kept.to_owned());
            }
        }
    }
    let text = words.join(" ");
    // Strip fillers written in Traditional as well (the filler list is folded).
    let mut out = text.clone();
    for filler in [
        "之前",
        "以前",
        "關於",
        "关于",
        "有關",
        "有关",
        "的偏好",
        "那條",
        "這條",
        "記憶",
        "记忆",
        "的事",
    ] {
        out = out.replace(filler, " ");
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.is_empty() { text } else { out }
}

/// "我…" / "I …" rewritten with the speaker named.
fn first_person(text: &str, voice: &Voice) -> String {
    let t = text.trim();
    if voice.zh {
        let mut out = t.to_owned();
        for (from, to) in [
            ("我們", voice.team()),
            ("我们", voice.team()),
            ("我的", "__USER__的"),
            ("我", "__USER__"),
        ] {
            out = out.replace(from, to);
        }
        return out.replace("__USER__", voice.user());
    }
    english_third_person(t, voice)
}

/// "I prefer X" → "The user prefers X"; "We use X" → "The team uses X".
fn english_third_person(text: &str, voice: &Voice) -> String {
    let lower = text.to_lowercase();
    let (subject, rest) = if let Some(r) = strip_word(text, &lower, &["i", "i'm", "i've"]) {
        let r = match lower.split_whitespace().next() {
            Some("i'm") => format!("am {r}"),
            Some("i've") => format!("have {r}"),
            _ => r.to_owned(),
        };
        (voice.user(), r)
    } else if let Some(r) = strip_word(text, &lower, &["we", "we're", "we've"]) {
        let r = match lower.split_whitespace().next() {
            Some("we're") => format!("are {r}"),
            Some("we've") => format!("have {r}"),
            _ => r.to_owned(),
        };
        (voice.team(), r)
    } else if let Some(r) = lower.strip_prefix("my ") {
        return format!("The user's {}", &text[text.len() - r.len()..]);
    } else if let Some(r) = lower.strip_prefix("our ") {
        return format!("The team's {}", &text[text.len() - r.len()..]);
    } else {
        let mut chars = text.chars();
        return match chars.next() {
            Some(c) => c.to_uppercase().chain(chars).collect(),
            None => String::new(),
        };
    };
    format!("{subject} {}", conjugate(&rest))
}

fn strip_word<'a>(text: &'a str, lower: &str, words: &[&str]) -> Option<&'a str> {
    let first = lower.split_whitespace().next()?;
    words
        .contains(&first)
        .then(|| text[first.len()..].trim_start())
}

/// The third person singular of the first verb ("prefer X" → "prefers X").
fn conjugate(rest: &str) -> String {
    let mut words = rest.splitn(2, ' ');
    let verb = words.next().unwrap_or("");
    let tail = words.next().unwrap_or("");
    let lower = verb.to_lowercase();
    let third = match lower.as_str() {
        "am" | "are" => "is".to_owned(),
        "have" => "has".to_owned(),
        "do" => "does".to_owned(),
        "don't" => "doesn't".to_owned(),
        "go" => "goes".to_owned(),
        "was" | "were" => "was".to_owned(),
        v if v.ends_with('s') && !v.ends_with("ss") => v.to_owned(),
        "will" | "would" | "can" | "could" | "should" | "must" | "might" | "may" | "shall"
        | "never" | "always" | "usually" | "really" | "also" | "only" | "often" | "still"
        | "decided" | "agreed" | "chose" | "used" | "had" | "settled" | "opted" | "already"
        | "just" => lower.clone(),
        v if v.ends_with("ed") => v.to_owned(),
        v if v.ends_with('y') && !v.ends_with("ay") && !v.ends_with("ey") && !v.ends_with("oy") => {
            format!("{}ies", &v[..v.len() - 1])
        }
        v if v.ends_with("sh")
            || v.ends_with("ch")
            || v.ends_with('x')
            || v.ends_with("ss")
            || v.ends_with('o') =>
        {
            format!("{v}es")
        }
        v if v.chars().all(|c| c.is_ascii_alphabetic()) && !v.is_empty() => format!("{v}s"),
        _ => lower.clone(),
    };
    // An adverb first ("really like"): conjugate the verb after it.
    let adverbs = [
        "never",
        "always",
        "usually",
        "really",
        "also",
        "only",
        "often",
        "still",
        "generally",
        "strongly",
        "much",
    ];
    if adverbs.contains(&lower.as_str()) && !tail.is_empty() {
        return format!("{lower} {}", conjugate(tail));
    }
    if tail.is_empty() {
        third
    } else {
        format!("{third} {tail}")
    }
}

fn candidate(
    content: String,
    signal: Signal,
    confidence: f64,
    attribute: Option<String>,
) -> Candidate {
    Candidate {
        content,
        signal,
        confidence,
        attribute,
        about: signal,
    }
}

fn is_vague(object: &str) -> bool {
    let f = Folded::new(object.trim()).text;
    let f = f.trim_matches(|c: char| !c.is_alphanumeric());
    f.is_empty()
        || VAGUE.contains(&f)
        || VAGUE
            .iter()
            .any(|v| f.starts_with(&format!("{v} ")) && v.len() > 2)
}

/// The lexicon subtype of the first known name in a text (`language`,
/// `database`, `editor`…): what a preference or style is about.
fn category(text: &str) -> Option<String> {
    // A fragment is read as the middle of a sentence ("Rust" alone would
    // otherwise start one, where a common word is not taken as a name).
    crate::graph::mentions(&format!("x {text}"))
        .into_iter()
        .find(|m| !m.subtype.is_empty())
        .map(|m| m.subtype)
}

static ZH_NAME: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:我叫|我的名字(?:是|叫)|我名叫|叫我)\s*([^\s，。,.!！、]{1,20})"));
static EN_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:my name is|my name's|(?:you can )?call me)\s+([a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,3})",
    )
});
static ZH_IAM: LazyLock<Regex> =
    LazyLock::new(|| re(r"^我(?:是|算是)(?:一名|一个|一位|个|名)?\s*(.{2,24})$"));
static ZH_IAM_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^我(?:是|算是)(?:不是|说|在|想|要|觉得|来|去|因为|从|被|把|指|问|故意|真的|认真|开玩笑)")
});
static EN_IAM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^i(?:'m| am) (?:a|an) ([a-z][\w +#./-]{1,40})$|^i work as (?:a |an )?([a-z][\w +#./-]{1,40})$",
    )
});
static WORKS_AT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^我在(.{1,16}?)(?:工作|上班|任职|做事|实习)$|^i (?:work|am working|'m working|intern) (?:at|for) (.{1,40})$",
    )
});
static LIVES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^我(?:住在|住|定居在|来自|老家在|老家是)(.{1,16})$|^i (?:live|am based|'m based|reside) in (.{1,40})$|^i(?:'m| am| come) from (.{1,40})$",
    )
});

fn profile(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    let user = voice.user();
    if let Some(caps) = found.captures(&ZH_NAME) {
        let name = found.group(&caps, 1).unwrap_or("");
        if !name.is_empty() && !is_vague(name) {
            return vec![candidate(
                format!("{user}叫{name}"),
                Signal::Profile,
                PROFILE,
                Some("name".into()),
            )];
        }
    }
    if let Some(caps) = found.captures(&EN_NAME) {
        let name = found.group(&caps, 1).unwrap_or("").trim();
        if !name.is_empty() && !is_vague(name) {
            return vec![candidate(
                format!("The user's name is {name}"),
                Signal::Profile,
                PROFILE,
                Some("name".into()),
            )];
        }
    }
    if let Some(caps) = found.captures(&WORKS_AT) {
        let place = found
            .group(&caps, 1)
            .or_else(|| found.group(&caps, 2))
            .unwrap_or("")
            .trim();
        if !place.is_empty() && !is_vague(place) {
            let content = if voice.zh {
                format!("{user}在{place}工作")
            } else {
                format!("The user works at {place}")
            };
            return vec![candidate(
                content,
                Signal::Profile,
                PROFILE,
                Some("employer".into()),
            )];
        }
    }
    if let Some(caps) = found.captures(&LIVES) {
        let place = (1..=3)
            .find_map(|i| found.group(&caps, i))
            .unwrap_or("")
            .trim();
        let verb = found.group(&caps, 0).unwrap_or("").to_lowercase();
        if !place.is_empty() && !is_vague(place) {
            let from = verb.contains("from")
                || verb.contains("來自")
                || verb.contains("来自")
                || verb.contains("老家");
            let (content, attribute) = match (voice.zh, from) {
                (true, true) => (format!("{user}來自{place}"), "origin"),
                (true, false) => (format!("{user}住在{place}"), "location"),
                (false, true) => (format!("The user is from {place}"), "origin"),
                (false, false) => (format!("The user lives in {place}"), "location"),
            };
            let content = if voice.traditional || !voice.zh {
                content
            } else {
                fast2s::convert(&content)
            };
            return vec![candidate(
                content,
                Signal::Profile,
                PROFILE,
                Some(attribute.into()),
            )];
        }
    }
    if !ZH_IAM_NOT.is_match(&found.folded.text)
        && let Some(caps) = found.captures(&ZH_IAM)
    {
        let what = found.group(&caps, 1).unwrap_or("").trim();
        if !what.is_empty() && !is_vague(what) && !what.contains('我') {
            let f = Folded::new(what).text;
            let attribute = if OCCUPATIONS.iter().any(|o| f.contains(o)) {
                Some("role".to_owned())
            } else if f.ends_with('人') {
                Some("origin".to_owned())
            } else {
                None
            };
            return vec![candidate(
                format!("{user}是{what}"),
                Signal::Profile,
                PROFILE,
                attribute,
            )];
        }
    }
    if let Some(caps) = found.captures(&EN_IAM) {
        let what = found
            .group(&caps, 1)
            .or_else(|| found.group(&caps, 2))
            .unwrap_or("")
            .trim();
        let f = what.to_lowercase();
        let fan = f.starts_with("big fan") || f.starts_with("huge fan") || f.starts_with("fan of");
        if !what.is_empty()
            && !fan
            && !is_vague(what)
            && !f.starts_with("bit ")
            && !f.starts_with("little ")
        {
            let attribute = OCCUPATIONS
                .iter()
                .any(|o| f.split(|c: char| !c.is_alphanumeric()).any(|w| w == *o))
                .then(|| "role".to_owned());
            let article = if "aeiou".contains(f.chars().next().unwrap_or('x')) {
                "an"
            } else {
                "a"
            };
            return vec![candidate(
                format!("The user is {article} {what}"),
                Signal::Profile,
                PROFILE,
                attribute,
            )];
        }
    }
    Vec::new()
}

static ZH_HAVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^我(?:家)?(?:还|也)?(?:有|养了|养着|养|拥有)(?:了)?\s*((?:一|两|二|三|四|五|六|七|八|九|十|几|\d+)?\s*(?:只|条|个|台|辆|匹|头|位|部|套|间|栋|张|把|盆)?\s*(.{1,14}))$",
    )
});
static EN_HAVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^i (?:own|have|have got|'ve got|got|keep|adopted) ((?:a|an|one|two|three|four|five|\d+|my own)\s+(?:pet\s+)?([a-z][\w -]{1,30}))$",
    )
});

fn possession(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    let (phrase, object) = if let Some(caps) = found.captures(&ZH_HAVE) {
        (
            found.group(&caps, 1).unwrap_or(""),
            found.group(&caps, 2).unwrap_or(""),
        )
    } else if let Some(caps) = found.captures(&EN_HAVE) {
        (
            found.group(&caps, 1).unwrap_or(""),
            found.group(&caps, 2).unwrap_or(""),
        )
    } else {
        return Vec::new();
    };
    let object_f = Folded::new(object.trim()).text;
    let first_word = object_f.split_whitespace().next().unwrap_or("");
    if object_f.is_empty()
        || is_vague(object)
        || NOT_POSSESSIONS
            .iter()
            .any(|n| object_f.starts_with(n) || first_word == *n)
    {
        return Vec::new();
    }
    // What is owned, as its identity: the known thing ("cat"), else the words.
    let attribute = crate::graph::mentions(object)
        .into_iter()
        .next()
        .map(|m| m.key)
        .unwrap_or_else(|| object_f.trim().to_owned());
    let content = if voice.zh {
        let verb = if found.folded.text.contains("养") {
            "養了"
        } else {
            "有"
        };
        let verb = if voice.traditional {
            verb.to_owned()
        } else {
            fast2s::convert(verb)
        };
        format!("{}{verb}{}", voice.user(), phrase.trim())
    } else {
        let verb = if found.folded.text.starts_with("i own") {
            "owns"
        } else {
            "has"
        };
        format!("The user {verb} {}", phrase.trim())
    };
    vec![candidate(
        content,
        Signal::Possession,
        POSSESSION,
        Some(attribute),
    )]
}

static ZH_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^我((?:很|比较|更|最|还是|一直|真的|超|特别|平常|平时|通常|向来)?(?:不喜欢|讨厌|不爱|不想用|受不了|喜欢|偏好|偏爱|爱用|习惯用|习惯|倾向于|倾向|钟意|爱)(?:用|使用|喝|吃|看|听|玩|写)?)\s*(.{1,30})$",
    )
});
static EN_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^i ((?:really |much |strongly |generally |usually |always |still |definitely )?(?:prefer|like|love|enjoy|favou?r|don't like|do not like|dislike|hate|can't stand|cannot stand)(?: to use| using| to)?)\s+(.{1,60})$|^i(?:'m| am) a (?:big |huge )?fan of (.{1,60})$|^my favou?rite ([a-z][a-z ]{1,30}?) is (.{1,60})$",
    )
});

fn preference(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    if let Some(caps) = found.captures(&ZH_LIKE) {
        let verb = found.group(&caps, 1).unwrap_or("");
        let object = found.group(&caps, 2).unwrap_or("").trim();
        if is_vague(object) {
            return Vec::new();
        }
        let negative = ["不喜", "讨厌", "討厭", "不爱", "不愛", "不想", "受不了"]
            .iter()
            .any(|n| verb.contains(n));
        let spacer = if object.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            " "
        } else {
            ""
        };
        let content = format!("{}{verb}{spacer}{object}", voice.user());
        return vec![candidate(
            content,
            Signal::Preference,
            PREFERENCE,
            preference_key(object, negative),
        )];
    }
    if let Some(caps) = found.captures(&EN_LIKE) {
        if let Some(object) = found.group(&caps, 2) {
            let verb = found.group(&caps, 1).unwrap_or("").to_lowercase();
            if is_vague(object) {
                return Vec::new();
            }
            let negative = ["don't", "do not", "dislike", "hate", "stand"]
                .iter()
                .any(|n| verb.contains(n));
            let content = format!("The user {} {}", conjugate(&verb), object.trim());
            return vec![candidate(
                content,
                Signal::Preference,
                PREFERENCE,
                preference_key(object, negative),
            )];
        }
        if let Some(object) = found.group(&caps, 3) {
            let content = format!("The user is a fan of {}", object.trim());
            return vec![candidate(
                content,
                Signal::Preference,
                PREFERENCE,
                preference_key(object, false),
            )];
        }
        if let (Some(what), Some(object)) = (found.group(&caps, 4), found.group(&caps, 5)) {
            let content = format!("The user's favourite {} is {}", what.trim(), object.trim());
            let key = format!("favourite {}", what.trim().to_lowercase());
            return vec![candidate(
                content,
                Signal::Preference,
                PREFERENCE,
                Some(key),
            )];
        }
    }
    Vec::new()
}

/// A preference replaces an older one of the same polarity about the same
/// kind of thing (a language, an editor…); unknown kinds never replace.
fn preference_key(object: &str, negative: bool) -> Option<String> {
    let polarity = if negative { "dislike" } else { "like" };
    category(object).map(|c| format!("{polarity}/{c}"))
}

static ZH_STYLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:以后|之后|今后|往后|接下来|从现在开始|一律|统一)?(?:请你|请|麻烦你|麻烦)?(?:都|一律|总是|统一|全部|尽量)?(?:用|使用|以)\s*(.{1,12}?)\s*(?:来)?(?:回复|回覆|回答|回应|答复|写|交流|沟通|说明|解释|输出)|(?:回答|回复|回覆|回应)(?:请|要|尽量|都)?(?:简短|简洁|精简|详细|短一点|长一点|直接一点|直接|条列|分点|用条列)|(?:用)?(?:条列式?|分点|列点|表格|markdown)(?:来|地)?(?:回答|回复|回覆|说明|列出)|(?:不要|别|请不要|请别|以后不要|以后别)(?:再)?(?:用|使用|加|放|写|说)?(?:表情符号|emoji|表情|客套话|废话|markdown|英文|中文|简体|繁体)|(?:(?:请你|你)(?:以后|今后|往后|从现在开始)|(?:以后|今后|往后|从现在开始)(?:请你|请|你))(?:都|一律|总是)?(?:用|使用|说|讲)\s*(.{1,12})$",
    )
});
static EN_STYLE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:please )?(?:always |from now on,? (?:always )?|in (?:the )?future,? (?:always )?|going forward,? )(?:use|reply in|respond in|answer in|write in|write|format|give|include|keep|answer|reply|respond)\b.{1,80}$|^(?:please )?(?:reply|respond|answer|talk|write)(?: to me)? in [a-z]+.{0,40}$|^(?:please )?(?:don't|do not|never) (?:use|add|include|write|give me|start with) .{1,60}$|^(?:please )?keep (?:your )?(?:answers|responses|replies|explanations) .{1,40}$|^(?:please )?be (?:brief|concise|more concise|more detailed|terse)\b.{0,40}$",
    )
});

fn style(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    if let Some(caps) = found.captures(&ZH_STYLE) {
        let clause = found.group(&caps, 0).unwrap_or("").trim();
        // "用 X 寫/回覆" is about answers only for a language, or when it
        // is asked of the assistant (請, 以後, 你…).
        let asked = [
            "请",
            "以后",
            "今后",
            "之后",
            "往后",
            "你",
            "麻烦",
            "一律",
            "统一",
            "从现在开始",
        ]
        .iter()
        .any(|w| found.folded.text.contains(w));
        let what = found.group(&caps, 1).or_else(|| found.group(&caps, 2));
        let named_language =
            what.is_some_and(|l| category(l).as_deref() == Some("natural-language"));
        if found.group(&caps, 1).is_some() && !asked && !named_language {
            return Vec::new();
        }
        let clause = ["麻煩你", "麻烦你", "請你", "请你", "請", "请"]
            .iter()
            .fold(clause.to_owned(), |c, w| c.replace(w, ""));
        let language = named_language;
        let attribute = if language { "language" } else { "format" };
        let wants = "希望";
        let content = format!("{}{wants}{}{clause}", voice.user(), voice.assistant());
        let attribute = if language
            || !clause.contains("不要") && !clause.contains("別") && !clause.contains("别")
        {
            Some(attribute.to_owned())
        } else {
            None
        };
        return vec![candidate(content, Signal::AssistantStyle, STYLE, attribute)];
    }
    if found.captures(&EN_STYLE).is_some() {
        let mut clause = body.trim().to_owned();
        for lead in ["Please ", "please "] {
            if let Some(r) = clause.strip_prefix(lead) {
                clause = r.to_owned();
            }
        }
        let mut chars = clause.chars();
        let clause: String = chars
            .next()
            .map(|c| c.to_lowercase().chain(chars).collect())
            .unwrap_or_default();
        let language = Found::new(&clause)
            .captures(&re(
                r"\b(?:reply|respond|answer|talk|write|use) (?:to me )?in ([a-z]+)",
            ))
            .is_some()
            || category(&clause).as_deref() == Some("natural-language");
        let negative = clause.starts_with("don't")
            || clause.starts_with("do not")
            || clause.starts_with("never");
        let attribute = if language {
            Some("language".to_owned())
        } else if negative {
            None
        } else {
            Some("format".to_owned())
        };
        let content = format!("The user wants the assistant to {clause}");
        let content = content
            .replace("to don't ", "not to ")
            .replace("to do not ", "not to ");
        return vec![candidate(content, Signal::AssistantStyle, STYLE, attribute)];
    }
    Vec::new()
}

static ZH_DECIDED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:决定|确定|定了|选定|敲定|拍板|达成共识|共识是)(?:了)?(?:要|用|采用|改用|使用|把|将)?.{2,}",
    )
});
static EN_DECIDED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bwe(?:'ve| have)? (?:decided|agreed|chose|settled on|opted)\b|\bwe(?:'ll| will| are going to|'re going to|'re| are) go(?:ing)? with\b|\blet's go with\b|\bthe decision (?:is|was)\b|\bwe made the (?:call|decision)\b|\bit was decided\b",
    )
});

fn decision(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    if voice.zh && found.captures(&ZH_DECIDED).is_some() {
        return vec![candidate(
            first_person(body, &voice),
            Signal::Decision,
            DECISION,
            None,
        )];
    }
    if !voice.zh && found.captures(&EN_DECIDED).is_some() {
        let lower = body.to_lowercase();
        let content = if let Some(rest) = lower.strip_prefix("let's go with ") {
            format!(
                "The team decided to go with {}",
                &body[body.len() - rest.len()..]
            )
        } else {
            english_third_person(body, &voice)
        };
        return vec![candidate(content, Signal::Decision, DECISION, None)];
    }
    Vec::new()
}

static ZH_MUST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"必须|必需|一定要|务必|不能|不可以|不得|禁止|不允许|只能|绝对不要|绝对不能|严禁|不准|一律要|永远不要",
    )
});
static EN_MUST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:must not|mustn't|shall not|is required to|are required to|has to|is not allowed|are not allowed|forbidden|prohibited|may only|can only)\b|\bmust (?:be [a-z]+(?:ed|en)\b|have (?:a|an|the|at least|tests|\d)\b|(?:always |never |only )?(?:use|support|run|pass|go|include|expose|follow|stay|keep|come|live|leave|contain|log|call|return|handle|check|validate|respond|reply|deploy|build|sign|review|target|match|start|end|wait|own|write)\b)|^(?:never|always|do not|don't) (?:use|deploy|commit|push|merge|store|log|expose|run|call|write|put|share|send|delete|change|edit|skip|disable|enable|hardcode|check in|test in|touch|force|rebase|release|ship|print|leak|reuse)\b",
    )
});

fn constraint(body: &str, turn: bool) -> Vec<Candidate> {
    let found = Found::new(body);
    let voice = Voice::of(body, turn);
    let f = &found.folded.text;
    let words = f.chars().filter(|c| c.is_alphanumeric()).count();
    if words < 4 {
        return Vec::new();
    }
    let hit = if voice.zh {
        found.captures(&ZH_MUST).is_some()
    } else {
        found.captures(&EN_MUST).is_some()
    };
    // "I have to go" is the speaker's moment, not a rule.
    // "I have to go", "我不能去" are the speaker's moment, not a rule; a rule
    // is about a thing ("API 必須…") or asked of everyone ("Never deploy…").
    let personal_moment = [
        "i ", "i'm", "he ", "she ", "they ", "that ", "it ", "我", "他", "她",
    ]
    .iter()
    .any(|p| f.starts_with(p) && !f.starts_with("我们"));
    if !hit || personal_moment {
        return Vec::new();
    }
    vec![candidate(
        first_person(body, &voice),
        Signal::Constraint,
        CONSTRAINT,
        None,
    )]
}

/// "我們用 X / we use X": a project fact the graph templates read as the
/// project using, depending on or running on something.
fn fact(body: &str, turn: bool) -> Vec<Candidate> {
    let mentions = crate::graph::mentions(body);
    if mentions.is_empty() {
        return Vec::new();
    }
    let about_project = crate::graph::relations::triples(body, &mentions)
        .iter()
        .any(|t| {
            t.source == crate::graph::relations::End::Project
                && matches!(t.relation, "uses" | "depends_on" | "located_in" | "avoids")
        });
    if !about_project {
        return Vec::new();
    }
    let voice = Voice::of(body, turn);
    vec![candidate(
        first_person(body, &voice),
        Signal::Fact,
        FACT,
        None,
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> (String, Signal, f64, Option<String>) {
        let c = candidates(s, Role::User);
        assert_eq!(c.len(), 1, "{s}: {c:?}");
        let c = c.into_iter().next().unwrap();
        (c.content, c.signal, c.confidence, c.attribute)
    }

    #[test]
    fn profile_in_three_scripts() {
        assert_eq!(
            one("我叫張三"),
            (
                "使用者叫張三".into(),
                Signal::Profile,
                PROFILE,
                Some("name".into())
            )
        );
        assert_eq!(one("我叫张三").0, "用户叫张三");
        assert_eq!(one("My name is Li Wei").0, "The user's name is Li Wei");
        assert_eq!(one("我是前端開發").0, "使用者是前端開發");
        assert_eq!(one("我是前端開發").3.as_deref(), Some("role"));
        assert_eq!(
            one("I am a backend engineer").0,
            "The user is a backend engineer"
        );
        assert_eq!(one("I live in Taipei").3.as_deref(), Some("location"));
    }

    #[test]
    fn possession_preference_style() {
        assert_eq!(one("我有一隻貓").0, "使用者有一隻貓");
        assert_eq!(one("我養了兩條狗").1, Signal::Possession);
        assert_eq!(one("I own a dog").0, "The user owns a dog");
        assert!(candidates("我有一個問題", Role::User).is_empty());
        assert_eq!(one("我喜歡用 TypeScript").0, "使用者喜歡用 TypeScript");
        assert_eq!(
            one("我喜歡用 TypeScript").3.as_deref(),
            Some("like/language")
        );
        assert_eq!(
            one("I prefer TypeScript over JavaScript").0,
            "The user prefers TypeScript over JavaScript"
        );
        assert!(candidates("I like it", Role::User).is_empty());
        assert_eq!(one("以後請用中文回覆").0, "使用者希望助手以後用中文回覆");
        assert_eq!(one("以後請用中文回覆").3.as_deref(), Some("language"));
        assert_eq!(one("請你以後都用台灣用語").1, Signal::AssistantStyle);
        // Said to the team, not to the assistant: a plain statement, not a style.
        assert!(
            candidates("以後都用 pnpm", Role::User)
                .iter()
                .all(|c| c.signal != Signal::AssistantStyle)
        );
        assert_eq!(
            one("Always reply in English").0,
            "The user wants the assistant to always reply in English"
        );
    }

    #[test]
    fn decisions_constraints_and_commands() {
        assert_eq!(
            one("我們決定用 pnpm 管理依賴").0,
            "團隊決定用 pnpm 管理依賴"
        );
        assert_eq!(
            one("We decided to use pnpm").0,
            "The team decided to use pnpm"
        );
        assert_eq!(one("API 必須向後相容").1, Signal::Constraint);
        let (content, signal, conf, attr) = one("記住我偏好用 dark 主題");
        assert_eq!(
            (content.as_str(), signal, conf),
            ("使用者偏好用 dark 主題", Signal::Remember, EXPLICIT)
        );
        assert_eq!(attr, None, "dark 主題 is no known kind of thing");
        let c = &candidates("記住我喜歡用 Rust", Role::User)[0];
        assert_eq!(
            (c.signal, c.about, c.attribute.as_deref()),
            (Signal::Remember, Signal::Preference, Some("like/language"))
        );
        assert_eq!(
            one("remember that the staging DB is on port 5433").0,
            "The staging DB is on port 5433"
        );
        let (query, signal, ..) = one("忘掉之前關於 Python 的偏好");
        assert_eq!(signal, Signal::Forget);
        assert!(query.contains("Python"), "{query}");
    }

    #[test]
    fn command_forms_beyond_the_bare_verb() {
        // The object before the verb (把…忘掉) or between verb and 記憶.
        for (turn, what) in [
            ("把關於 Redis 快取的記憶忘掉", "Redis"),
            ("把关于 Kafka 的记忆删掉", "Kafka"),
            ("請刪掉關於 Jenkins 的記憶", "Jenkins"),
            ("忘了我剛說的那個埠號吧", "埠號"),
            ("不用再記得舊的 VPN 位址了", "VPN"),
            ("You can forget that we were on Heroku", "Heroku"),
        ] {
            let (query, signal, ..) = one(turn);
            assert_eq!(signal, Signal::Forget, "{turn}");
            assert!(query.contains(what), "{turn}: {query}");
        }
        for turn in [
            "以後都要記得程式碼審查至少兩個人",
            "务必记住生产库只读账号叫 reader",
            "請把這件事存進記憶：設計稿都在 Figma",
            "Please note: the design system lives in Storybook",
            "Make a note that invoices go out on the 1st",
        ] {
            assert_eq!(one(turn).1, Signal::Remember, "{turn}");
        }
        // "I forgot to mention" opens a statement, not a command.
        assert!(
            candidates("忘了說，明天的會取消", Role::User)
                .iter()
                .all(|c| c.signal != Signal::Forget)
        );
    }

    #[test]
    fn assistants_and_hedges_weigh_less() {
        let c = candidates("We decided to use pnpm", Role::Assistant);
        assert_eq!(c[0].confidence, 0.64);
        assert!(candidates("I prefer tabs", Role::Assistant).is_empty());
        let c = candidates("我們可能會決定用 Rust 重寫", Role::User);
        assert_eq!(c[0].confidence, 0.64);
    }
}
