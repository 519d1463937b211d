// The client's request and result types: jco's declarations of wit/hmg.wit
// (gen/interfaces/hmg-memory-types.d.ts) turned into the seed's JSON shapes
// — snake_case fields, snake_case enum values, u64 as number — the same
// shapes the CLI's --json output and the MCP tools use. Nothing here lists a
// field or an enum value: they all come from the WIT.

import type * as wit from "../gen/interfaces/hmg-memory-types.js";

/** `tenantId` → `tenant_id`. */
type SnakeKey<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeKey<T>}`
  : S;
/** `confirm-actual` → `confirm_actual`. */
type SnakeValue<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${SnakeValue<B>}` : S;

/** A WIT type as JSON: snake_case keys and enum values, u64 as number. */
export type Json<T> = T extends bigint
  ? number
  : T extends string
    ? SnakeValue<T>
    : T extends Array<infer U>
      ? Json<U>[]
      : T extends object
        ? { [K in keyof T as SnakeKey<K & string>]: Json<T[K]> }
        : T;

/** A request as the client takes it: the scope is the client's own. */
type Request<T> = Omit<Json<T>, "scope">;

export type Scope = Json<wit.Scope>;
export type Effect = Json<wit.Effect>;
export type Kind = Json<wit.Kind>;
export type Epistemic = Json<wit.Epistemic>;
export type Polarity = Json<wit.Polarity>;
export type ExposureState = Json<wit.ExposureState>;
export type CorrectAction = Json<wit.CorrectAction>;
export type GovernAction = Json<wit.GovernAction>;

/** Options fixed when the store is opened (the model is the client's `model` option). */
export type StoreConfig = Omit<Json<wit.StoreConfig>, "model_dir">;

export type MemorizeRequest = Request<wit.MemorizeRequest>;
export type MemorizeResult = Json<wit.MemorizeResult>;
export type RecallRequest = Request<wit.RecallRequest>;
export type Signal = Json<wit.Signal>;
export type RecalledAtom = Json<wit.RecalledAtom>;
export type RecallResult = Json<wit.RecallResult>;
export type CorrectRequest = Request<wit.CorrectRequest>;
export type CorrectResult = Json<wit.CorrectResult>;
export type GovernRequest = Request<wit.GovernRequest>;
export type GovernResult = Json<wit.GovernResult>;
export type HandoffRequest = Request<wit.HandoffRequest>;
export type HandoffResult = Json<wit.HandoffResult>;
export type HistoryRequest = Request<wit.HistoryRequest>;
export type AtomView = Json<wit.AtomView>;
export type Relations = Json<wit.Relations>;
export type CorrectionRecord = Json<wit.CorrectionRecord>;
export type ExposureRecord = Json<wit.ExposureRecord>;
export type HistoryResult = Json<wit.HistoryResult>;
export type StoreStats = Json<wit.StoreStats>;
export type BriefRequest = Request<wit.BriefRequest>;
export type BriefResult = Json<wit.BriefResult>;
export type ImportResult = Json<wit.ImportResult>;

export type EntityType = Json<wit.EntityType>;
export type NamedEntity = Json<wit.NamedEntity>;
export type ExtractResult = Json<wit.ExtractResult>;
export type GraphNode = Json<wit.GraphNode>;
export type GraphEdge = Json<wit.GraphEdge>;
export type GraphExpansion = Json<wit.GraphExpansion>;
export type NeighborhoodRequest = Request<wit.NeighborhoodRequest>;
export type NeighborhoodResult = Json<wit.NeighborhoodResult>;
export type PathRequest = Request<wit.PathRequest>;
export type PathResult = Json<wit.PathResult>;
export type RelateRequest = Request<wit.RelateRequest>;
export type RelateResult = Json<wit.RelateResult>;
export type GraphViewRequest = Request<wit.GraphViewRequest>;
export type Mention = Json<wit.Mention>;
export type GraphViewResult = Json<wit.GraphViewResult>;
export type CaptureMode = Json<wit.CaptureMode>;
export type Speaker = Json<wit.Speaker>;
export type CaptureSignal = Json<wit.CaptureSignal>;
export type Exclusion = Json<wit.Exclusion>;
export type ObserveRequest = Request<wit.ObserveRequest>;
export type CaptureCandidate = Json<wit.CaptureCandidate>;
export type ObserveResult = Json<wit.ObserveResult>;

/** What `stats` and `export` cover: what the client's scope sees, or (`all: true`) every tenant's atoms. */
export interface FilterRequest {
  all?: boolean;
}
