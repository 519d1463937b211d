//! What is never captured, whatever it says: text inside code, questions,
//! greetings and chit-chat, time-bound information (dates, news, temporary
//! states) and bug reports / error messages.

use std::sync::LazyLock;

use regex::Regex;

use super::Exclusion;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("exclusion pattern compiles")
}

static FENCED: LazyLock<Regex> = LazyLock::new(|| re(r"(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)"));
static INLINE: LazyLock<Regex> = LazyLock::new(|| re(r"`[^`\n]*`"));
/// Lines indented as code (4 spaces or a tab) in a multi-line turn.
static INDENTED: LazyLock<Regex> = LazyLock::new(|| re(r"(?m)^(?: {4}|\t).*$"));

/// The turn without its code, and whether it had any.
pub fn without_code(turn: &str) -> (String, bool) {
    let mut had = false;
    let mut text = turn.to_owned();
    for pattern in [&*FENCED, &*INLINE] {
        if pattern.is_match(&text) {
            had = true;
            text = pattern.replace_all(&text, " ").into_owned();
        }
    }
    if text.lines().count() > 1 && INDENTED.is_match(&text) {
        had = true;
        text = INDENTED.replace_all(&text, " ").into_owned();
    }
    (text, had)
}

/// Interrogative openings (folded: lower case, Simplified).
const QUESTION_OPENINGS_EN: &[&str] = &[
    "what",
    "what's",
    "whats",
    "why",
    "how",
    "how's",
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "which",
    "is",
    "are",
    "am",
    "was",
    "were",
    "do",
    "does",
    "did",
    "can",
    "could",
    "should",
    "would",
    "will",
    "shall",
    "may",
    "might",
    "have",
    "has",
    "had",
    "isn't",
    "aren't",
    "don't",
    "doesn't",
    "didn't",
    "can't",
    "won't",
    "wouldn't",
    "shouldn't",
];
const WH_WORDS: &[&str] = &[
    "what", "what's", "whats", "why", "how", "how's", "when", "where", "who", "whom", "whose",
    "which",
];
/// Words that can follow an auxiliary in a question ("do you", "is this").
const SUBJECTS: &[&str] = &[
    "i", "you", "we", "they", "he", "she", "it", "there", "this", "that", "these", "those", "the",
    "my", "your", "our", "their", "his", "her", "its", "a", "an", "any", "anyone", "anybody",
    "someone", "somebody", "everyone",
];
const QUESTION_WORDS_ZH: &[&str] = &[
    "什么",
    "怎么",
    "为什么",
    "为何",
    "如何",
    "哪里",
    "哪儿",
    "哪个",
    "哪些",
    "哪位",
    "谁",
    "多少",
    "几个",
    "是否",
    "能不能",
    "可不可以",
    "会不会",
    "是不是",
    "有没有",
    "要不要",
    "对不对",
    "好不好",
    "行不行",
    "干嘛",
    "咋",
];
/// Particles that make a statement a question (吧 only with a question mark,
/// which is caught before: "忘了那個埠號吧" is a request).
const QUESTION_ENDINGS_ZH: &[&str] = &["吗", "么", "呢", "嘛"];

fn folded(text: &str) -> String {
    fast2s::convert(&text.to_lowercase())
}

fn is_question(s: &str) -> bool {
    let t = s.trim();
    if t.ends_with('?') || t.ends_with('？') {
        return true;
    }
    let f = folded(t);
    let core = f.trim_end_matches(|c: char| !c.is_alphanumeric());
    if QUESTION_ENDINGS_ZH.iter().any(|e| core.ends_with(e)) {
        return true;
    }
    let first = core
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .find(|w| !w.is_empty())
        .unwrap_or("");
    if WH_WORDS.contains(&first) && core.split_whitespace().count() > 1 {
        return true;
    }
    // "Is it …", "Do you …": a question without its mark — but "Don't use
    // emojis", "Do not forget…" are requests: an auxiliary asks only when a
    // subject follows it.
    let second = core
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .nth(1)
        .unwrap_or("");
    if QUESTION_OPENINGS_EN.contains(&first) && SUBJECTS.contains(&second) {
        return true;
    }
    // 你知道…嗎 is caught above; a Chinese question word asks unless it is
    // part of a statement ("我不知道為什麼" still states something, but is
    // not a fact worth keeping either).
    QUESTION_WORDS_ZH.iter().any(|w| core.contains(w))
}

const CHIT_CHAT: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "yo",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "ok",
    "okay",
    "k",
    "cool",
    "nice",
    "great",
    "awesome",
    "lol",
    "haha",
    "hahaha",
    "good morning",
    "good night",
    "good evening",
    "good afternoon",
    "bye",
    "goodbye",
    "see you",
    "see ya",
    "got it",
    "sounds good",
    "sure",
    "yes",
    "no",
    "yep",
    "nope",
    "yeah",
    "alright",
    "all right",
    "np",
    "no problem",
    "welcome",
    "you're welcome",
    "how are you",
    "i'm fine",
    "i am fine",
    "fine",
    "well done",
    "good job",
    "nice work",
    "perfect",
    "exactly",
    "right",
    "indeed",
    "wow",
    "oops",
    "sorry",
    "my bad",
    "你好",
    "您好",
    "嗨",
    "哈喽",
    "哈囉",
    "谢谢",
    "谢啦",
    "多谢",
    "感谢",
    "好的",
    "好",
    "好啊",
    "好喔",
    "好哦",
    "嗯",
    "嗯嗯",
    "哈哈",
    "哈哈哈",
    "呵呵",
    "早安",
    "早",
    "早上好",
    "午安",
    "晚安",
    "拜拜",
    "再见",
    "回头见",
    "辛苦了",
    "没问题",
    "没事",
    "不客气",
    "收到",
    "了解",
    "明白",
    "知道了",
    "对",
    "对的",
    "是的",
    "不错",
    "厉害",
    "太棒了",
    "棒",
    "赞",
    "抱歉",
    "不好意思",
    "ok的",
    "行",
    "可以",
    "好吧",
];

/// What may come with a greeting or thanks and keep it chit-chat.
const FILLERS: &[&str] = &[
    "a lot",
    "so much",
    "very much",
    "again",
    "all",
    "guys",
    "man",
    "mate",
    "buddy",
    "team",
    "everyone",
    "for that",
    "for the help",
    "for your help",
    "你",
    "您",
    "啦",
    "喔",
    "哦",
    "呀",
    "哈",
    "啊",
    "了",
    "大家",
    "你们",
    "老师",
    "帮忙",
];

fn is_chit_chat(s: &str) -> bool {
    let f = folded(s);
    let words: Vec<&str> = f
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let core = words.join(" ");
    if core.is_empty() {
        return false;
    }
    let filler = |rest: &str| {
        let rest = rest.trim();
        rest.is_empty() || FILLERS.contains(&rest) || CHIT_CHAT.contains(&rest)
    };
    CHIT_CHAT.contains(&core.as_str())
        || CHIT_CHAT.iter().any(|c| {
            core.strip_prefix(c).is_some_and(filler) || core.strip_suffix(c).is_some_and(filler)
        })
        || words
            .iter()
            .all(|w| CHIT_CHAT.contains(w) || FILLERS.contains(w))
}

static DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}/\d{1,2}\b|\d{1,2}\s*月\s*\d{1,2}\s*[日号號]|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\d{1,2}\s*[点點]\s*(?:\d{1,2}\s*分|半)?|(?i)\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b",
    )
});
const TIME_WORDS_ZH: &[&str] = &[
    "今天",
    "明天",
    "昨天",
    "后天",
    "前天",
    "今晚",
    "明晚",
    "昨晚",
    "今早",
    "明早",
    "今天早上",
    "这周",
    "本周",
    "下周",
    "上周",
    "这礼拜",
    "下礼拜",
    "上礼拜",
    "这个月",
    "下个月",
    "上个月",
    "本月",
    "今年",
    "明年",
    "去年",
    "刚刚",
    "刚才",
    "现在",
    "此刻",
    "等一下",
    "等会",
    "待会",
    "一会儿",
    "马上",
    "这两天",
    "最近几天",
    // A weekday alone recurs ("禁止週五部署"); this or next week's is a date.
    "这周一",
    "这周五",
    "下周一",
    "下周五",
    "上周五",
    "这星期",
    "下星期",
    "上星期",
    "新闻",
    "股价",
    "股市",
    "天气",
    "气温",
    "下雨",
    "头条",
    "热搜",
];
const TEMPORARY_STATES_ZH: &[&str] = &[
    "很累",
    "好累",
    "有点累",
    "累了",
    "累死",
    "好困",
    "很困",
    "困了",
    "生病",
    "感冒",
    "发烧",
    "头痛",
    "头疼",
    "肚子痛",
    "不舒服",
    "心情不好",
    "心情很好",
    "很开心",
    "好开心",
    "很烦",
    "好烦",
    "很忙",
    "好忙",
    "在开会",
    "开会中",
    "出差中",
    "在出差",
    "在路上",
    "堵车",
    "饿了",
    "很饿",
    "好饿",
    "吃饱",
    "请假",
    "值班",
    "加班中",
    "在加班",
];
const TIME_WORDS_EN: &[&str] = &[
    "today",
    "tomorrow",
    "yesterday",
    "tonight",
    "this morning",
    "this afternoon",
    "this evening",
    "this week",
    "next week",
    "last week",
    "this weekend",
    "next weekend",
    "this month",
    "next month",
    "last month",
    "this year",
    "next year",
    "last year",
    "right now",
    "at the moment",
    "just now",
    "in a minute",
    "in an hour",
    "later today",
    "on monday",
    "on tuesday",
    "on wednesday",
    "on thursday",
    "on friday",
    "on saturday",
    "on sunday",
    "breaking news",
    "the news",
    "stock price",
    "the weather",
    "forecast",
    "this sprint",
];
const TEMPORARY_STATES_EN: &[&str] = &[
    "i'm tired",
    "i am tired",
    "so tired",
    "i'm sick",
    "i am sick",
    "i have a cold",
    "i have a headache",
    "i'm hungry",
    "i am hungry",
    "i'm busy",
    "i am busy",
    "i'm in a meeting",
    "on call",
    "out of office",
    "on vacation",
    "on holiday",
    "on leave",
    "i'm stuck in traffic",
    "i'm bored",
    "i feel",
    "i'm feeling",
    "i am feeling",
    "running late",
];

/// The words of a folded text joined by single spaces, with a space at
/// each end, so that `contains(" on call ")` matches whole words only.
fn padded_words(folded: &str) -> String {
    let words: Vec<&str> = folded
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    format!(" {} ", words.join(" "))
}

fn is_time_bound(s: &str) -> bool {
    if DATE.is_match(s) {
        return true;
    }
    let f = folded(s);
    let words = padded_words(&f);
    TIME_WORDS_ZH
        .iter()
        .chain(TEMPORARY_STATES_ZH)
        .any(|w| f.contains(w))
        || TIME_WORDS_EN
            .iter()
            .chain(TEMPORARY_STATES_EN)
            .any(|w| words.contains(&format!(" {w} ")))
}

static ERROR_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b[A-Z]?[a-z]*(?:Error|Exception|Panic)\b|\btraceback\b|\bstack ?trace\b|\bsegfault\b|segmentation fault|\bpanicked at\b|\bat [\w.$<>]+\s?\([^)]*:\d+(?::\d+)?\)|File "[^"]+", line \d+|\bline \d+, in\b|\berrno\b|\bexit (?:code|status) \d+|\bHTTP [45]\d\d\b|\b[45]\d\d (?:error|internal|bad|not found)|\bE\d{4}\b|\bcore dumped\b"#,
    )
});
const BUG_WORDS_EN: &[&str] = &[
    "error",
    "errors",
    "exception",
    "crash",
    "crashes",
    "crashed",
    "crashing",
    "bug",
    "bugs",
    "broken",
    "fails",
    "failed",
    "failing",
    "failure",
    "doesn't work",
    "does not work",
    "not working",
    "stopped working",
    "won't start",
    "hangs",
    "freezes",
    "timeout",
    "timed out",
    "regression",
];
const BUG_WORDS_ZH: &[&str] = &[
    "报错",
    "错误",
    "异常",
    "崩溃",
    "闪退",
    "失败",
    "坏了",
    "挂了",
    "卡死",
    "卡住",
    "跑不起来",
    "起不来",
    "不能用",
    "用不了",
    "没反应",
    "出bug",
    "有bug",
    "有个bug",
    "bug",
    "超时",
    "报了",
];

fn is_bug_report(s: &str) -> bool {
    if ERROR_SHAPES.is_match(s) {
        return true;
    }
    let f = folded(s);
    let words = padded_words(&f);
    BUG_WORDS_ZH.iter().any(|w| f.contains(w))
        || BUG_WORDS_EN
            .iter()
            .any(|w| words.contains(&format!(" {w} ")))
}

/// Why a sentence must not be captured, if it must not.
pub fn exclusion(sentence: &str) -> Option<Exclusion> {
    if is_bug_report(sentence) {
        return Some(Exclusion::BugReport);
    }
    if is_question(sentence) {
        return Some(Exclusion::Question);
    }
    if is_chit_chat(sentence) {
        return Some(Exclusion::ChitChat);
    }
    if is_time_bound(sentence) {
        return Some(Exclusion::TimeBound);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_cut_out() {
        let (text, had) = without_code("記住這段:\n```\nremember = True\n```\n然後 `x = 1` 也是");
        assert!(had);
        assert!(!text.contains("remember"));
        assert!(!text.contains("x = 1"));
    }

    #[test]
    fn each_exclusion() {
        for (s, want) in [
            ("我是不是應該用 Rust？", Exclusion::Question),
            ("你知道我叫什麼嗎", Exclusion::Question),
            ("What is my name", Exclusion::Question),
            ("謝謝！", Exclusion::ChitChat),
            ("thanks a lot", Exclusion::ChitChat),
            ("今天很累", Exclusion::TimeBound),
            ("this week I'm on call", Exclusion::TimeBound),
            ("明天下午 3 點開會", Exclusion::TimeBound),
            (
                "I prefer the old build but it crashes with TypeError",
                Exclusion::BugReport,
            ),
            ("登入頁面一直報錯", Exclusion::BugReport),
        ] {
            assert_eq!(exclusion(s), Some(want), "{s}");
        }
        for s in [
            "我叫張三",
            "I prefer TypeScript",
            "我們決定用 pnpm",
            "以後請用中文回覆",
        ] {
            assert_eq!(exclusion(s), None, "{s}");
        }
    }
}
