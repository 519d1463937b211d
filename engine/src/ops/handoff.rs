//! handoff: a `handoff` atom summarising a session (done / why /
//! verification / risks / next); the session-start brief shows it first.

use super::Effect;
use super::memorize::NewAtom;
use crate::atom::{AtomId, Kind};
use crate::error::Result;
use crate::log::backend::Backend;
use crate::memory::Memory;
use crate::scope::Scope;

#[derive(Clone, Debug)]
pub struct HandoffRequest {
    pub summary: String,
    pub source: Option<String>,
    pub scope: Scope,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HandoffResult {
    pub atom_id: Option<AtomId>,
    pub effect: Effect,
    pub reason: Option<String>,
}

impl<B: Backend> Memory<B> {
    pub fn handoff(&mut self, req: &HandoffRequest) -> Result<HandoffResult> {
        self.refresh()?;
        let new = NewAtom {
            content: &req.summary,
            kind: Kind::Handoff,
            source: req.source.as_deref(),
            scope: &req.scope,
            what: "summary",
        };
        let result = self.write_new_atom(&new)?;
        Ok(HandoffResult {
            atom_id: result.atom_id,
            effect: result.effect,
            reason: result.reason,
        })
    }
}
