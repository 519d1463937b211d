//! Timestamps: milliseconds since the Unix epoch, shown as RFC 3339 UTC.
//! The current time is always passed in by the caller, never read here.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

/// Milliseconds since 1970-01-01T00:00:00Z.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Timestamp(pub i64);

pub const MS_PER_DAY: i64 = 86_400_000;

impl Timestamp {
    pub fn rfc3339(self) -> String {
        DateTime::<Utc>::from_timestamp_millis(self.0)
            .unwrap_or_default()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| Timestamp(t.timestamp_millis()))
    }

    pub fn days_since(self, earlier: Timestamp) -> f64 {
        (self.0 - earlier.0) as f64 / MS_PER_DAY as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip() {
        let t = Timestamp(1_785_074_400_123);
        let text = t.rfc3339();
        assert_eq!(text, "2026-07-26T14:00:00.123Z");
        assert_eq!(Timestamp::parse_rfc3339(&text), Some(t));
        assert_eq!(Timestamp::parse_rfc3339("yesterday"), None);
    }
}
