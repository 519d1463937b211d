// The client's request and result types: the seed's call shapes and field
// names (snake_case), as the CLI's --json output and the MCP tools use them.

export interface Scope {
  tenant_id: string;
  workspace?: string;
  repository?: string;
  branch?: string;
  session?: string;
}

export type Effect = "applied" | "no_op" | "rejected";
export type Kind = "memory" | "handoff" | "lesson" | "observation";
export type Epistemic = "possible" | "actual" | "necessary";
export type Polarity = "affirmative" | "negative" | "conditional";
export type ExposureState = "visible" | "quarantined" | "sealed" | "tombstoned";
export type CorrectAction = "negate" | "confirm_actual" | "confirm_necessary" | "demote" | "replace";
export type GovernAction = "quarantine" | "restore" | "seal" | "tombstone" | "derive_lesson";

/** Options fixed when the store is opened. */
export interface StoreConfig {
  max_content_bytes?: number;
  compact_log_bytes?: number;
  brief_budget_chars?: number;
}

export interface MemorizeRequest {
  content: string;
  /** `user`, `agent` (default) or any other attribution. */
  source?: string;
}
export interface MemorizeResult {
  atom_id?: string;
  effect: Effect;
  reason?: string;
  deduped_with?: string;
}

export interface RecallRequest {
  query: string;
  max_results?: number;
  include_negated?: boolean;
  /** Fill `explain` on every hit. */
  explain?: boolean;
}
export interface Signal {
  name: string;
  value: number;
  contribution: number;
}
export interface RecalledAtom {
  atom_id: string;
  content: string;
  score: number;
  created_at: string;
  source: string;
  kind: Kind;
  epistemic: Epistemic;
  polarity: Polarity;
  negated: boolean;
  explain: Signal[];
}
export interface RecallResult {
  atoms: RecalledAtom[];
  reason?: string;
}

export interface CorrectRequest {
  target_atom: string;
  action: CorrectAction;
  reason: string;
  new_content?: string;
  by?: string;
}
export interface CorrectResult {
  effect: Effect;
  target_atom: string;
  new_atom_id?: string;
  reason?: string;
}

export interface GovernRequest {
  target_atom: string;
  action: GovernAction;
  reason: string;
  lesson_content?: string;
  by?: string;
}
export interface GovernResult {
  effect: Effect;
  target_atom: string;
  lesson_atom_id?: string;
  reason?: string;
}

export interface HandoffRequest {
  summary: string;
  source?: string;
}
export interface HandoffResult {
  atom_id?: string;
  effect: Effect;
  reason?: string;
}

export interface HistoryRequest {
  atom_id: string;
}
export interface AtomView {
  atom_id: string;
  content: string;
  kind: Kind;
  source: string;
  scope: Scope;
  epistemic: Epistemic;
  polarity: Polarity;
  exposure_state: ExposureState;
  negated: boolean;
  superseded_by?: string;
  created_at: string;
  updated_at: string;
}
export interface Relations {
  supersedes: string[];
  superseded_by: string[];
  related_lessons: string[];
}
export interface CorrectionRecord {
  action: CorrectAction;
  reason: string;
  at: string;
  by: string;
  new_atom_id?: string;
  change: string;
}
export interface ExposureRecord {
  from: ExposureState;
  to: ExposureState;
  reason: string;
  at: string;
  by: string;
}
export interface HistoryResult {
  current?: AtomView;
  relations: Relations;
  corrections: CorrectionRecord[];
  exposure_history: ExposureRecord[];
  reason?: string;
}

export interface StoreStats {
  atoms: number;
  edges: number;
  indexes: { semantic: number; keyword: number; temporal: number; categorical: number };
  snapshot_version: number;
  /** The embedding model's fingerprint, or why recall is keyword-only. */
  model: string;
}

export interface BriefResult {
  text: string;
  atom_ids: string[];
}

export interface ImportResult {
  atoms_added: number;
  atoms_skipped: number;
  edges_added: number;
  events_added: number;
  rejected_lines: number;
  reason?: string;
}
