//! Epistemic status and polarity, inferred from wording at write time
//! (Traditional Chinese, Simplified Chinese and English). Never an input.
//!
//! Rules, in order:
//! - epistemic: a hard-constraint marker (必須/必须/must/never…) → `necessary`;
//!   else a hedge (考慮/考虑/評估/评估/maybe/considering…) → `possible`; else `actual`.
//! - polarity: a condition marker (如果/若/除非/if/unless…) → `conditional`; else
//!   a negation in the first clause (不要/不用/沒有/not/never…) → `negative`;
//!   else `affirmative`. Only the first clause decides negation, so
//!   "用 PostgreSQL，不用 MongoDB" is a decision for something: affirmative.

use crate::atom::{Epistemic, Polarity};

const NECESSARY_ZH: &[&str] = &[
    "必須",
    "必须",
    "務必",
    "务必",
    "一定要",
    "不得",
    "不准",
    "禁止",
    "嚴禁",
    "严禁",
    "絕不",
    "绝不",
    "絕對不",
    "绝对不",
    "不可以",
    "不允許",
    "不允许",
    "強制",
    "强制",
    "硬性",
    "合規要求",
    "合规要求",
    "一律",
    "永遠不",
    "永远不",
    "只能",
];
const NECESSARY_EN: &[&str] = &[
    "must",
    "never",
    "always",
    "shall",
    "required",
    "requires",
    "mandatory",
    "forbidden",
    "prohibited",
    "cannot",
    "can't",
];
const POSSIBLE_ZH: &[&str] = &[
    "考慮",
    "考虑",
    "評估",
    "评估",
    "可能",
    "也許",
    "也许",
    "或許",
    "或许",
    "大概",
    "聽說",
    "听说",
    "據說",
    "据说",
    "打算",
    "計劃",
    "计划",
    "暫定",
    "暂定",
    "待定",
    "不確定",
    "不确定",
    "似乎",
    "好像",
    "傾向",
    "倾向",
    "候選",
    "候选",
    "試試",
    "试试",
    "調研",
    "调研",
    "研究一下",
    "待確認",
    "待确认",
];
const POSSIBLE_EN: &[&str] = &[
    "maybe",
    "perhaps",
    "might",
    "possibly",
    "probably",
    "considering",
    "consider",
    "evaluate",
    "evaluating",
    "tentative",
    "tentatively",
    "rumor",
    "rumour",
    "heard",
    "unsure",
    "uncertain",
    "planning",
    "plan to",
    "thinking about",
    "could",
    "may",
    "candidate",
];
const CONDITIONAL_ZH: &[&str] = &[
    "如果", "假如", "若是", "若", "除非", "只要", "一旦", "的話", "的话", "否則", "否则",
];
const CONDITIONAL_EN: &[&str] = &[
    "if",
    "unless",
    "when",
    "whenever",
    "provided",
    "in case",
    "otherwise",
    "as long as",
];
const NEGATIVE_ZH: &[&str] = &[
    "不要", "不用", "不能", "不可", "不會", "不会", "不是", "不再", "不該", "不该", "不應", "不应",
    "沒有", "没有", "沒", "没", "無", "无", "別", "别", "勿", "禁止", "不得", "不准", "放棄",
    "放弃", "廢棄", "废弃", "未", "非",
];
const NEGATIVE_EN: &[&str] = &[
    "not",
    "no",
    "never",
    "don't",
    "doesn't",
    "didn't",
    "won't",
    "isn't",
    "aren't",
    "wasn't",
    "shouldn't",
    "cannot",
    "can't",
    "avoid",
    "without",
    "stop",
    "stopped",
    "drop",
    "dropped",
    "abandon",
    "abandoned",
];

pub fn epistemic(content: &str) -> Epistemic {
    let lower = content.to_lowercase();
    if has_zh(&lower, NECESSARY_ZH) || has_en(&lower, NECESSARY_EN) {
        Epistemic::Necessary
    } else if has_zh(&lower, POSSIBLE_ZH)
        || has_en(&lower, POSSIBLE_EN)
        || lower.trim_end().ends_with(['?', '？'])
    {
        Epistemic::Possible
    } else {
        Epistemic::Actual
    }
}

pub fn polarity(content: &str) -> Polarity {
    let lower = content.to_lowercase();
    if has_zh(&lower, CONDITIONAL_ZH) || has_en(&lower, CONDITIONAL_EN) {
        return Polarity::Conditional;
    }
    let first = lower
        .split(['，', ',', '。', '.', ';', '；', '\n', '!', '！'])
        .find(|c| !c.trim().is_empty())
        .unwrap_or("");
    if has_zh(first, NEGATIVE_ZH) || has_en(first, NEGATIVE_EN) {
        Polarity::Negative
    } else {
        Polarity::Affirmative
    }
}

fn has_zh(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| text.contains(w))
}

/// Whole-word match for English phrases (letters on either side break it).
fn has_en(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| {
        text.match_indices(w).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + w.len()..].chars().next();
            !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
        })
    })
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\''
}

#[cfg(test)]
mod tests {
    use super::*;
    use Epistemic::*;
    use Polarity::*;

    #[test]
    fn epistemic_in_three_scripts() {
        let cases = [
            ("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB", Actual),
            ("考慮用 K8s 部署", Possible),
            ("正在评估 Kafka 和 Pulsar", Possible),
            ("We might move to ECS", Possible),
            ("所有 API 必須加認證", Necessary),
            ("所有 API 必须加认证", Necessary),
            ("Never commit secrets to git", Necessary),
            ("Deploys must go through CI", Necessary),
            ("API gateway is Kong", Actual),
            ("The homepage uses React", Actual),
        ];
        for (text, want) in cases {
            assert_eq!(epistemic(text), want, "{text}");
        }
    }

    #[test]
    fn polarity_in_three_scripts() {
        let cases = [
            ("專案用 PostgreSQL 16 做主資料庫，不用 MongoDB", Affirmative),
            ("不要在記憶中儲存資料庫密碼和連線串，使用環境變數", Negative),
            ("不用 Redis 做快取", Negative),
            ("如果流量超過 1 萬 QPS 就加快取", Conditional),
            ("若超时则重试三次", Conditional),
            ("We do not use MongoDB", Negative),
            ("Use feature flags if the change is risky", Conditional),
            ("Nothing special: notes are in docs", Affirmative),
            ("The cache is Redis", Affirmative),
        ];
        for (text, want) in cases {
            assert_eq!(polarity(text), want, "{text}");
        }
    }
}
