//! The hosts' request and result types, generated at build time from
//! `wit/hmg.wit` (`build/api_gen.rs`): one struct per WIT record, one enum
//! per WIT enum or variant, the WIT doc comments as docs and JSON Schema
//! descriptions. JSON is snake_case with the seed's field names; `None`
//! fields are left out; enums are snake_case strings. The CLI's `--json`,
//! MCP's structured content and output schemas all come from these.
//!
//! Only the helpers below are written by hand.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

include!(concat!(env!("OUT_DIR"), "/api.rs"));

impl Scope {
    /// This scope cut to `{tenant}` (personal) or `{tenant, workspace}` (organisation).
    pub fn truncated(&self, keep_workspace: bool) -> Scope {
        Scope {
            tenant_id: self.tenant_id.clone(),
            workspace: if keep_workspace {
                self.workspace.clone()
            } else {
                None
            },
            ..Scope::default()
        }
    }

    /// `tenant/workspace/repository/branch#session`.
    pub fn display(&self) -> String {
        let mut out = self.tenant_id.clone();
        for part in [&self.workspace, &self.repository, &self.branch]
            .into_iter()
            .flatten()
        {
            out.push('/');
            out.push_str(part);
        }
        if let Some(s) = &self.session {
            out.push('#');
            out.push_str(s);
        }
        out
    }
}
