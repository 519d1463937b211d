//! The temporal signal: recency, and time words in a query ("昨天", "上週",
//! "last week", "3 days ago") turned into a window of UTC days.
//!
//! - With a window: 1 inside it, decaying with half-life 7 days outside.
//! - Without: recency `0.5^(age / 30 days)`.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use regex::Regex;
use std::sync::LazyLock;

use crate::time::{MS_PER_DAY, Timestamp};

/// `[start, end)` in milliseconds, and the words that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub start: Timestamp,
    pub end: Timestamp,
    pub words: Vec<String>,
}

const RECENCY_HALF_LIFE_DAYS: f64 = 30.0;
const OUTSIDE_HALF_LIFE_DAYS: f64 = 7.0;

fn day_start(date: NaiveDate) -> Timestamp {
    Timestamp(
        date.and_hms_opt(0, 0, 0)
            .expect("midnight")
            .and_utc()
            .timestamp_millis(),
    )
}

/// Days `[from, to)` relative to today (0 = today, -1 = yesterday).
fn days(today: NaiveDate, from: i64, to: i64) -> (Timestamp, Timestamp) {
    (
        day_start(today + Duration::days(from)),
        day_start(today + Duration::days(to)),
    )
}

fn week_start(today: NaiveDate) -> i64 {
    -i64::from(today.weekday().num_days_from_monday())
}

fn month_start(today: NaiveDate, months_back: u32) -> NaiveDate {
    let mut year = today.year();
    let mut month = today.month() as i32 - months_back as i32;
    while month < 1 {
        month += 12;
        year -= 1;
    }
    NaiveDate::from_ymd_opt(year, month as u32, 1).expect("first of month")
}

type Span = fn(NaiveDate) -> (Timestamp, Timestamp);
type Rule = (&'static str, Span);

static FIXED: &[Rule] = &[
    (r"今天|今日|today", |t| days(t, 0, 1)),
    (r"昨天|昨日|yesterday", |t| days(t, -1, 0)),
    (r"前天|day before yesterday", |t| days(t, -2, -1)),
    (
        r"上週|上周|上星期|上個星期|上个星期|上禮拜|上礼拜|last week",
        |t| {
            let ws = week_start(t);
            days(t, ws - 7, ws)
        },
    ),
    (
        r"本週|本周|這週|这周|这星期|這星期|this week",
        |t| {
            let ws = week_start(t);
            days(t, ws, ws + 7)
        },
    ),
    (r"上個月|上个月|上月|last month", |t| {
        (day_start(month_start(t, 1)), day_start(month_start(t, 0)))
    }),
    (r"本月|這個月|这个月|this month", |t| {
        (
            day_start(month_start(t, 0)),
            day_start(t + Duration::days(1)),
        )
    }),
    (r"去年|last year", |t| {
        let y = t.year();
        (
            day_start(NaiveDate::from_ymd_opt(y - 1, 1, 1).expect("jan 1")),
            day_start(NaiveDate::from_ymd_opt(y, 1, 1).expect("jan 1")),
        )
    }),
    (r"最近|近期|recently|lately|recent", |t| days(t, -7, 1)),
];

static FIXED_RE: LazyLock<Vec<(Regex, Span)>> = LazyLock::new(|| {
    // "day before yesterday" must win over "yesterday": longer rules first.
    let mut rules: Vec<_> = FIXED
        .iter()
        .map(|(p, f)| (Regex::new(&format!("(?i){p}")).expect("time rule"), *f))
        .collect();
    rules.swap(1, 2);
    rules
});

static AGO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(\d+)\s*(?:(天|日)前|(週|周|星期|個星期|个星期)前|(?:days?)\s+ago|(?:weeks?)\s+ago)",
    )
    .expect("ago rule")
});

/// The window a query's time words name, if any.
pub fn window(query: &str, now: Timestamp) -> Option<Window> {
    let today = DateTime::<Utc>::from_timestamp_millis(now.0)?.date_naive();
    for (re, rule) in FIXED_RE.iter() {
        if let Some(m) = re.find(query) {
            let (start, end) = rule(today);
            return Some(Window {
                start,
                end,
                words: vec![m.as_str().to_owned()],
            });
        }
    }
    let caps = AGO.captures(query)?;
    let n: i64 = caps[1].parse().ok()?;
    let whole = caps.get(0)?.as_str();
    let weeks = caps.get(3).is_some() || whole.to_lowercase().contains("week");
    let back = if weeks { n * 7 } else { n };
    let (start, end) = days(
        today,
        -back - i64::from(weeks) * 3,
        -back + 1 + i64::from(weeks) * 3,
    );
    Some(Window {
        start,
        end,
        words: vec![whole.to_owned()],
    })
}

/// The query without its time words, for the keyword and semantic signals.
pub fn strip(query: &str, window: &Window) -> String {
    window
        .words
        .iter()
        .fold(query.to_owned(), |q, w| q.replace(w, " "))
}

/// The temporal signal in [0, 1].
pub fn signal(created: Timestamp, now: Timestamp, window: Option<&Window>) -> f64 {
    match window {
        Some(w) if created >= w.start && created < w.end => 1.0,
        Some(w) => {
            let gap = if created < w.start {
                w.start.0 - created.0
            } else {
                created.0 - w.end.0
            };
            0.5f64.powf(gap as f64 / MS_PER_DAY as f64 / OUTSIDE_HALF_LIFE_DAYS)
        }
        None => 0.5f64.powf(now.days_since(created).max(0.0) / RECENCY_HALF_LIFE_DAYS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-07-29 (a Wednesday) 10:00 UTC.
    const NOW: Timestamp = Timestamp(1_785_319_200_000);

    fn date(ts: Timestamp) -> String {
        ts.rfc3339()[..10].to_owned()
    }

    #[test]
    fn words_in_three_scripts() {
        let w = window("昨天的決定", NOW).unwrap();
        assert_eq!(
            (date(w.start), date(w.end)),
            ("2026-07-28".into(), "2026-07-29".into())
        );
        let w = window("what did we decide yesterday", NOW).unwrap();
        assert_eq!(date(w.start), "2026-07-28");
        let w = window("上週的部署", NOW).unwrap();
        assert_eq!(
            (date(w.start), date(w.end)),
            ("2026-07-20".into(), "2026-07-27".into())
        );
        assert_eq!(
            window("上周的部署", NOW),
            window("last week deploys", NOW).map(|mut w| {
                w.words = vec!["上周".into()];
                w
            })
        );
        let w = window("the day before yesterday", NOW).unwrap();
        assert_eq!(date(w.start), "2026-07-27");
        let w = window("3 days ago", NOW).unwrap();
        assert_eq!(date(w.start), "2026-07-26");
        assert!(window("資料庫選型", NOW).is_none());
    }

    #[test]
    fn signal_prefers_inside_and_recent() {
        let w = window("yesterday", NOW).unwrap();
        let inside = Timestamp(NOW.0 - MS_PER_DAY / 2 - 10 * 3_600_000);
        assert_eq!(signal(inside, NOW, Some(&w)), 1.0);
        assert!(signal(Timestamp(NOW.0 - 30 * MS_PER_DAY), NOW, Some(&w)) < 0.1);
        assert!((signal(Timestamp(NOW.0 - 30 * MS_PER_DAY), NOW, None) - 0.5).abs() < 1e-9);
        assert_eq!(strip("yesterday db choice", &w).trim(), "db choice");
    }
}
