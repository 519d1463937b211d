//! The operations of SPEC §2, one file each, as methods on [`Memory`]. Every
//! operation first catches up with other processes, then answers with a
//! result record; a domain refusal is `Effect::Rejected` with a reason.

mod brief;
pub(crate) mod correct;
mod govern;
mod graph;
#[cfg(test)]
mod graph_tests;
mod handoff;
mod history;
pub(crate) mod memorize;
mod observe;
#[cfg(test)]
mod observe_tests;
pub(crate) mod recall;
mod stats;
#[cfg(test)]
mod tenancy_tests;
mod transfer;
#[cfg(test)]
mod vector_tests;

pub use brief::{BriefRequest, BriefResult};
pub use correct::{CorrectRequest, CorrectResult};
pub use govern::{GovernRequest, GovernResult};
pub use graph::{
    Edge as GraphEdge, GraphScope, MentionEdge, NeighborhoodRequest, NeighborhoodResult, Node,
    PathRequest, PathResult, RelateRequest, RelateResult, ViewRequest, ViewResult,
    extract_entities,
};
pub use handoff::{HandoffRequest, HandoffResult};
pub use history::{
    AtomView, CorrectionRecord, ExposureRecord, HistoryRequest, HistoryResult, Relations,
};
pub use memorize::{MemorizeRequest, MemorizeResult};
pub use observe::{Captured, ObserveRequest, ObserveResult};
pub use recall::{RecallRequest, RecallResult, Recalled, Signal};
pub use stats::{IndexCoverage, Stats};
pub use transfer::ImportResult;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Applied,
    NoOp,
    Rejected,
}

/// The actor for audit records: the explicit `by`, else the source, else `agent`.
pub(crate) fn actor(by: Option<&str>, source: Option<&str>) -> String {
    by.or(source)
        .filter(|s| !s.trim().is_empty())
        .unwrap_or("agent")
        .trim()
        .to_owned()
}

/// A required free-text reason, trimmed, or the refusal.
pub(crate) fn required_reason(reason: &str) -> Result<String, String> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err("a reason is required".into());
    }
    if reason.len() > 2048 {
        return Err("reason is longer than 2048 bytes".into());
    }
    Ok(reason.to_owned())
}

#[cfg(test)]
pub(crate) mod testing;
