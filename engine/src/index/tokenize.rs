//! CJK-aware tokenisation shared by indexing and querying.
//!
//! - Full-width ASCII folds to ASCII; everything is lower-cased.
//! - Traditional Chinese folds to Simplified (character level), so 資料庫,
//!   资料库 and mixtures meet in one term space.
//! - Latin-script words: stop words dropped, Snowball English stemming.
//! - CJK runs: split at function words (的, 了, 什麼, 來著…), then every
//!   overlapping character bigram plus every single character (unigrams are
//!   weighted down at query time; see [`is_unigram`]).
//! - Across languages: queries are translated with a real dictionary
//!   ([`super::dictionary`], CC-CEDICT); the hand-written concept glossary
//!   that was here is gone (on a set written after it, it changed nothing).

use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

const EN_STOP: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "of", "on",
    "once", "or", "other", "our", "ours", "out", "over", "own", "she", "should", "so", "some",
    "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you",
    "your", "yours", "s", "t", "d", "ll", "re", "ve", "m", "again", "did", "let", "us", "use",
    "used", "using", "tell", "know", "remind", "recall", "remember",
];

/// Function words removed from CJK runs, longest first (Simplified, since
/// text is folded before this list is applied).
const ZH_STOP_WORDS: &[&str] = &[
    "是什么",
    "为什么",
    "怎么样",
    "有没有",
    "什么",
    "来着",
    "我们",
    "你们",
    "他们",
    "她们",
    "怎么",
    "哪个",
    "哪些",
    "那个",
    "这个",
    "那些",
    "这些",
    "之前",
    "时候",
    "一下",
    "如何",
    "是否",
    "可以",
    "一个",
    "还是",
    "已经",
    "就是",
    "的话",
    "吗",
];
const ZH_STOP_CHARS: &[char] = &[
    '的', '了', '吗', '呢', '吧', '啊', '呀', '嘛', '么', '是', '在', '和', '与', '及', '或', '也',
    '都', '就', '把', '被', '让', '给', '着', '过', '这', '那', '哪', '我', '你', '他', '她', '它',
    '们', '啥', '谁', '要', '有',
];

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF
        | 0x3040..=0x309F | 0x30A0..=0x30FF | 0xAC00..=0xD7AF)
}

/// A single CJK character term (weighted down: it says little alone).
pub fn is_unigram(term: &str) -> bool {
    let mut chars = term.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if is_cjk(c))
}

/// Taiwan and mainland words for the same thing, after Traditional →
/// Simplified conversion: the first folds to the second (資料庫 → 数据库).
const REGIONAL: &[(&str, &str)] = &[
    ("资料库", "数据库"),
    ("资料", "数据"),
    ("专案", "项目"),
    ("软体", "软件"),
    ("硬体", "硬件"),
    ("程式码", "代码"),
    ("程式", "程序"),
    ("网路", "网络"),
    ("伺服器", "服务器"),
    ("记忆体", "内存"),
    ("预设", "默认"),
    ("档案", "文件"),
    ("资讯", "信息"),
    ("快取", "缓存"),
    ("连线", "连接"),
    ("介面", "接口"),
    ("函式", "函数"),
    ("物件", "对象"),
    ("执行绪", "线程"),
    ("品质", "质量"),
    ("硬碟", "硬盘"),
    ("影片", "视频"),
    ("部落格", "博客"),
    ("套件", "包"),
    ("登入", "登录"),
    ("登出", "退出"),
    ("帐号", "账号"),
    ("设定", "设置"),
    ("变数", "变量"),
    ("参数", "参数"),
    ("回传", "返回"),
    ("资安", "信息安全"),
    ("云端", "云"),
    ("运算", "计算"),
    ("演算法", "算法"),
    ("位元", "比特"),
    ("档名", "文件名"),
    ("列表", "列表"),
    ("脚本", "脚本"),
    ("讯息", "消息"),
    ("储存", "存储"),
    ("测试", "测试"),
];

/// Full-width ASCII to ASCII, lower case, Traditional to Simplified, Taiwan
/// vocabulary to mainland vocabulary.
pub fn fold(text: &str) -> String {
    let half: String = text
        .chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        })
        .flat_map(char::to_lowercase)
        .collect();
    let mut simplified = fast2s::convert(&half);
    for (taiwan, mainland) in REGIONAL {
        if taiwan != mainland && simplified.contains(taiwan) {
            simplified = simplified.replace(taiwan, mainland);
        }
    }
    simplified
}

/// Terms of a text to index.
pub fn tokens(text: &str) -> Vec<String> {
    tokenize(text)
}

/// Terms of a query: the same as a text's (cross-lingual matching is the
/// dictionary's, [`super::dictionary`]).
pub fn query_tokens(text: &str) -> Vec<String> {
    tokenize(text)
}

fn tokenize(text: &str) -> Vec<String> {
    let folded = fold(text);
    let mut out = Vec::new();
    for (run, cjk) in runs(&folded) {
        if cjk {
            cjk_terms(run, &mut out);
        } else if !EN_STOP.contains(&run) {
            out.push(STEMMER.stem(run).into_owned());
        }
    }
    out
}

/// A folded text's runs in order, each with whether it is CJK: CJK runs
/// and Latin-script words; anything else only separates them.
pub fn runs(folded: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, bool)> = None;
    for (at, c) in folded.char_indices() {
        let cjk = is_cjk(c);
        let kind = (cjk || c.is_alphanumeric()).then_some(cjk);
        match open {
            Some((_, k)) if kind == Some(k) => {}
            Some((start, k)) => {
                out.push((&folded[start..at], k));
                open = kind.map(|k| (at, k));
            }
            None => open = kind.map(|k| (at, k)),
        }
    }
    if let Some((start, k)) = open {
        out.push((&folded[start..], k));
    }
    out
}

/// Text holding two or more CJK characters (the script bucket of a memory
/// or a query for language-neutral scoring).
pub fn is_cjk_text(text: &str) -> bool {
    // Most memories are ASCII, told at a word a time without decoding
    // characters (a first semantic search asks this of every memory).
    !text.is_ascii() && text.chars().filter(|c| is_cjk(*c)).nth(1).is_some()
}

/// Whether a folded CJK word is a function word (的, 了, 什么, 来着…).
pub fn zh_stop_word(word: &str) -> bool {
    let mut chars = word.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => ZH_STOP_CHARS.contains(&c),
        _ => ZH_STOP_WORDS.contains(&word),
    }
}

/// A folded CJK run as dictionary words (`dictionary::segment`), in pieces
/// split where a function word stands as a word of its own: 过 goes in
/// 去过 but stays in 过敏.
pub fn zh_words(run: &str) -> Vec<Vec<String>> {
    let mut pieces = Vec::new();
    let mut piece = Vec::new();
    for word in super::dictionary::segment(run) {
        if zh_stop_word(&word) {
            if !piece.is_empty() {
                pieces.push(std::mem::take(&mut piece));
            }
        } else {
            piece.push(word);
        }
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// The Snowball English stem of a lower-case word, as the index keeps it.
pub fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// An English stop word (never an index term).
pub fn stop_word(word: &str) -> bool {
    EN_STOP.contains(&word)
}

fn cjk_terms(run: &str, out: &mut Vec<String>) {
    for piece in zh_words(run) {
        let chars: Vec<char> = piece.concat().chars().collect();
        for (i, c) in chars.iter().enumerate() {
            out.push(c.to_string());
            if let Some(next) = chars.get(i + 1) {
                out.push([*c, *next].iter().collect());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traditional_and_simplified_meet() {
        assert_eq!(tokens("資料庫"), tokens("资料库"));
        assert!(tokens("專案用 PostgreSQL 16 做主資料庫").contains(&"数据".to_owned()));
    }

    #[test]
    fn regional_vocabulary_folds() {
        assert_eq!(tokens("資料庫選型"), tokens("数据库选型"));
        assert_eq!(tokens("專案快取"), tokens("项目缓存"));
    }

    #[test]
    fn latin_words_are_stemmed_and_stopped() {
        assert_eq!(tokens("The Databases are Running"), vec!["databas", "run"]);
        assert_eq!(tokens("ＰｏｓｔｇｒｅＳＱＬ 16"), vec!["postgresql", "16"]);
    }

    #[test]
    fn question_words_do_not_become_terms() {
        let terms = tokens("我們資料庫用的什麼來著？");
        assert!(terms.contains(&"数据".to_owned()));
        for noise in ["什么", "来着", "我们", "的什"] {
            assert!(!terms.contains(&noise.to_owned()), "{noise} in {terms:?}");
        }
    }

    #[test]
    fn mixed_scripts_split_cleanly() {
        assert_eq!(tokens("用K8s部署"), vec!["用", "k8s", "部", "部署", "署"]);
    }
}
