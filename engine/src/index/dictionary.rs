//! Cross-lingual query translation from a real bilingual dictionary:
//! CC-CEDICT (MDBG, CC BY-SA 4.0, `cedict/`), turned by build.rs into two
//! sorted tables — simplified headword → short English senses, and English
//! sense → the headwords with it among their first four senses (at most
//! six: the commonest first by wordfreq's Chinese frequencies, then
//! primary senses; words before single characters). Both are looked up by binary search over the
//! tables and their line offsets as compiled into the engine; nothing is
//! parsed or scanned at run time.
//!
//! A query becomes a *structured query* (Pirkola 1998; Ballesteros & Croft
//! 1997): each source word is one group whose alternatives are the word's
//! own index terms and the index terms of each of its translations, so an
//! ambiguous word with many translations counts once, and its many
//! alternatives lower its idf instead of swamping the query.

use super::tokenize::{fold, is_cjk, runs, stem, stop_word, tokens, zh_stop_word, zh_words};

static ZH: Table = Table {
    text: include_str!(concat!(env!("OUT_DIR"), "/cedict_zh.tsv")),
    starts: include_bytes!(concat!(env!("OUT_DIR"), "/cedict_zh.idx")),
};
static EN: Table = Table {
    text: include_str!(concat!(env!("OUT_DIR"), "/cedict_en.tsv")),
    starts: include_bytes!(concat!(env!("OUT_DIR"), "/cedict_en.idx")),
};

/// Longest headword tried when segmenting, in characters.
const MAX_WORD: usize = 6;
/// Senses of a Chinese word used as its English translations.
const SENSES: usize = 3;

/// A sorted `key\tvalue` table and where each line starts (u32 LE, written
/// by build.rs beside it: nothing is scanned at run time).
struct Table {
    text: &'static str,
    starts: &'static [u8],
}

impl Table {
    fn len(&self) -> usize {
        self.starts.len() / 4
    }

    fn start(&self, i: usize) -> usize {
        let b = &self.starts[i * 4..i * 4 + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
    }

    fn line(&self, i: usize) -> (&'static str, &'static str) {
        let start = self.start(i);
        let end = if i + 1 < self.len() {
            self.start(i + 1) - 1
        } else {
            self.text.len().saturating_sub(1).max(start)
        };
        let line = self.text[start..end].trim_end_matches('\n');
        line.split_once('\t').unwrap_or((line, ""))
    }

    fn get(&self, key: &str) -> Option<&'static str> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (k, v) = self.line(mid);
            match k.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(v),
            }
        }
        None
    }
}

/// Touches both tables (their pages are then in the pre-initialised image).
pub fn warm() {
    let _ = ZH.get("词典");
    let _ = EN.get("dictionari");
}

/// English senses of a Chinese word (simplified, lower case), primary first.
pub fn english(word: &str) -> Vec<&'static str> {
    ZH.get(word)
        .map(|senses| senses.split('/').take(SENSES).collect())
        .unwrap_or_default()
}

/// Chinese words for an English word or short phrase, as stems
/// ("databas", "blood pressur").
pub fn chinese(phrase: &str) -> Vec<&'static str> {
    EN.get(phrase)
        .map(|heads| heads.split(' ').collect())
        .unwrap_or_default()
}

/// Whether a folded CJK string is one word: a dictionary headword or a
/// function word of the tokenizer's list.
fn is_word(text: &str) -> bool {
    ZH.get(text).is_some() || zh_stop_word(text)
}

/// Dictionary words of a folded CJK run: of all the ways to cut it into
/// words (headwords of up to six characters, else lone characters), the one
/// with the fewest words, then the fewest lone characters; at a tie the
/// longer word nearer the end (backward matching is the better guess for
/// Chinese). Forward maximum matching cut 研究生命起源 as 研究生 / 命 / 起源;
/// this gives 研究 / 生命 / 起源.
pub fn segment(run: &str) -> Vec<String> {
    // at[k]: the byte offset of character k (and the end)
    let at: Vec<usize> = run
        .char_indices()
        .map(|(i, _)| i)
        .chain([run.len()])
        .collect();
    let n = at.len() - 1;
    // cost[j]: (words, lone characters) of the best cut of the first j
    // characters; last[j]: the length of its last word.
    let mut cost = vec![(0u32, 0u32); n + 1];
    let mut last = vec![1usize; n + 1];
    for j in 1..=n {
        let (words, singles) = cost[j - 1];
        let (mut best, mut len) = ((words + 1, singles + 1), 1);
        for l in 2..=MAX_WORD.min(j) {
            let (words, singles) = cost[j - l];
            let candidate = (words + 1, singles);
            if candidate <= best && is_word(&run[at[j - l]..at[j]]) {
                (best, len) = (candidate, l);
            }
        }
        cost[j] = best;
        last[j] = len;
    }
    let mut out = Vec::new();
    let mut j = n;
    while j > 0 {
        out.push(run[at[j - last[j]]..at[j]].to_owned());
        j -= last[j];
    }
    out.reverse();
    out
}

/// One source word of a query and what stands for it in the index.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The word as the query wrote it (folded).
    pub source: String,
    /// Weight in the query (a lone CJK character says little).
    pub weight: f64,
    /// Each alternative matches a document holding all its index terms:
    /// the word itself first, then its translations.
    pub alternatives: Vec<Vec<String>>,
    /// The translations, as words, for `--explain`.
    pub translations: Vec<String>,
}

/// Index terms of a dictionary word or sense, without lone characters when
/// the word is longer (its bigrams say it).
fn terms_of(text: &str) -> Vec<String> {
    let all: Vec<String> = tokens(text);
    let multi: Vec<String> = all
        .iter()
        .filter(|t| !(t.chars().count() == 1 && t.chars().all(is_cjk)))
        .cloned()
        .collect();
    let mut terms = if multi.is_empty() { all } else { multi };
    terms.sort();
    terms.dedup();
    terms
}

/// The query as groups, one per source word, each with the word's
/// dictionary translations; `None` when no word of it has a translation
/// (the plain keyword search then says everything).
pub fn translate(query: &str) -> Option<Vec<Group>> {
    let folded = fold(query);
    let mut groups: Vec<Group> = Vec::new();
    // English words wait for the next CJK run (or the end): two of them may
    // be one dictionary phrase.
    let mut latin: Vec<String> = Vec::new();
    for (run, cjk) in runs(&folded) {
        if cjk {
            latin_groups(&mut latin, &mut groups);
            for word in zh_words(run).into_iter().flatten() {
                groups.push(chinese_group(&word));
            }
        } else {
            latin.push(run.to_owned());
        }
    }
    latin_groups(&mut latin, &mut groups);
    groups.retain(|g| !g.alternatives.is_empty());
    groups
        .iter()
        .any(|g| !g.translations.is_empty())
        .then_some(groups)
}

impl Group {
    /// A group for a source word with its own index terms (none: the word
    /// is all stop words, and only translations can stand for it).
    fn new(source: &str, weight: f64, own: Vec<String>) -> Group {
        Group {
            source: source.to_owned(),
            weight,
            alternatives: if own.is_empty() {
                Vec::new()
            } else {
                vec![own]
            },
            translations: Vec::new(),
        }
    }

    /// Adds an alternative unless it is empty or already there; a named
    /// translation is listed for `--explain`.
    fn add(&mut self, terms: Vec<String>, translation: Option<&str>) {
        if !terms.is_empty() && !self.alternatives.contains(&terms) {
            self.alternatives.push(terms);
            self.translations.extend(translation.map(str::to_owned));
        }
    }
}

fn chinese_group(word: &str) -> Group {
    let single = word.chars().count() == 1;
    let mut group = Group::new(word, if single { 0.3 } else { 1.0 }, terms_of(word));
    if !single {
        for sense in english(word) {
            group.add(terms_of(sense), Some(sense));
            // An open compound ("front end") may be written closed.
            if sense.contains(' ') && sense.chars().all(|c| c.is_ascii_lowercase() || c == ' ') {
                group.add(vec![stem(&sense.replace(' ', ""))], None);
            }
        }
    }
    group
}

/// English words of a query (lower case) as groups: a two-word phrase the
/// dictionary knows is one group. The English table is keyed by stems (as
/// the index keeps English words), so "deployed" finds "to deploy".
fn latin_groups(words: &mut Vec<String>, groups: &mut Vec<Group>) {
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if let Some(next) = words.get(i + 1) {
            let heads = chinese(&format!("{} {}", stem(word), stem(next)));
            if !heads.is_empty() {
                groups.push(english_group(&format!("{word} {next}"), &heads));
                i += 2;
                continue;
            }
        }
        if !stop_word(word) {
            groups.push(english_group(word, &chinese(&stem(word))));
        }
        i += 1;
    }
    words.clear();
}

fn english_group(phrase: &str, heads: &[&'static str]) -> Group {
    let own: Vec<String> = phrase
        .split(' ')
        .filter(|w| !stop_word(w))
        .map(stem)
        .collect();
    let mut group = Group::new(phrase, 1.0, own);
    for head in heads {
        group.add(terms_of(head), Some(head));
    }
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_answer() {
        assert!(english("数据库").contains(&"database"));
        assert!(chinese(&stem("database")).contains(&"数据库"));
        assert!(english("不存在的词语").is_empty());
        assert!(chinese("no such sense here").is_empty());
    }

    #[test]
    fn segmentation_takes_the_fewest_words() {
        assert_eq!(segment("备用钥匙"), vec!["备用", "钥匙"]);
        assert_eq!(segment("数据库备份"), vec!["数据库", "备份"]);
        // forward maximum matching would take 研究生 / 命 / 起源
        assert_eq!(segment("研究生命起源"), vec!["研究", "生命", "起源"]);
        // and 一对 / 一会 / 议
        assert_eq!(segment("一对一会议"), vec!["一对", "一", "会议"]);
        // a function character inside a word stays in it
        assert_eq!(segment("我对药物过敏"), vec!["我", "对", "药物", "过敏"]);
        assert_eq!(segment("x"), vec!["x"]);
        assert!(segment("").is_empty());
    }

    #[test]
    fn a_chinese_query_carries_english_alternatives() {
        let groups = translate("備用鑰匙").expect("translated");
        let key = groups.iter().find(|g| g.source == "钥匙").unwrap();
        assert!(
            key.alternatives.contains(&vec!["key".to_owned()]),
            "{key:?}"
        );
        assert_eq!(key.alternatives[0], vec!["钥匙".to_owned()]);
    }

    #[test]
    fn an_english_query_carries_chinese_alternatives() {
        let groups = translate("database backup").expect("translated");
        let db = groups.iter().find(|g| g.source == "database").unwrap();
        assert!(db.translations.iter().any(|t| t == "数据库"), "{db:?}");
        // the commonest translations of a word with many come first
        for (word, common) in [("key", "关键"), ("state", "状态"), ("release", "发布")] {
            let groups = translate(word).expect("translated");
            assert!(
                groups[0].translations.iter().any(|t| t == common),
                "{word}: {groups:?}"
            );
        }
        // a known two-word phrase is one group
        let groups = translate("blood pressure").expect("translated");
        assert_eq!(groups.len(), 1);
        assert!(groups[0].translations.iter().any(|t| t == "血压"));
        // inflected forms find the dictionary's base form
        let groups = translate("deployed").expect("translated");
        assert!(
            groups[0].translations.iter().any(|t| t == "部署"),
            "{groups:?}"
        );
        // a closed compound finds the open one's words, and back
        let groups = translate("frontend").expect("translated");
        assert!(
            groups[0].translations.iter().any(|t| t == "前端"),
            "{groups:?}"
        );
        let groups = translate("前端").expect("translated");
        assert!(
            groups[0]
                .alternatives
                .contains(&vec!["frontend".to_owned()]),
            "{groups:?}"
        );
    }

    #[test]
    fn nothing_to_translate() {
        assert_eq!(translate("PostgreSQL 16"), None);
        assert_eq!(translate(""), None);
    }
}
