// Between the seed's JSON shapes (snake_case fields, snake_case enum values)
// and jco's bindings of wit/hmg.wit (camelCase fields, kebab-case enum
// values, u64 as bigint). Runs in the Worker.

import type { Scope, StoreConfig } from "./types.js";

export type Method =
  | "memorize"
  | "recall"
  | "correct"
  | "govern"
  | "handoff"
  | "history"
  | "stats"
  | "brief"
  | "export"
  | "import"
  | "timings";

const CORRECT_ACTIONS = ["negate", "confirm_actual", "confirm_necessary", "demote", "replace"];
const GOVERN_ACTIONS = ["quarantine", "restore", "seal", "tombstone", "derive_lesson"];

/** Fields whose values are WIT enums (converted kebab-case <-> snake_case). */
const ENUM_FIELDS = new Set(["effect", "kind", "epistemic", "polarity", "exposure_state", "action", "from", "to"]);

type Prepared = { method: string; args: unknown[] } | { refused: unknown };

function str(args: any, field: string, method: string): string {
  const value = args?.[field];
  if (typeof value !== "string") {
    throw new TypeError(`${method}: \`${field}\` must be a string`);
  }
  return value;
}

function optStr(args: any, field: string, method: string): string | undefined {
  const value = args?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new TypeError(`${method}: \`${field}\` must be a string`);
  return value;
}

function optBool(args: any, field: string, method: string): boolean | undefined {
  const value = args?.[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new TypeError(`${method}: \`${field}\` must be a boolean`);
  return value;
}

function optUint(args: any, field: string, method: string, max: number): number | undefined {
  const value = args?.[field];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new TypeError(`${method}: \`${field}\` must be an integer in 0..=${max}`);
  }
  return value;
}

function scope(s: Scope) {
  return {
    tenantId: s.tenant_id,
    workspace: s.workspace,
    repository: s.repository,
    branch: s.branch,
    session: s.session,
  };
}

export const toWit = {
  config(c: StoreConfig, modelDir?: string) {
    const u64 = optUint(c, "compact_log_bytes", "config", Number.MAX_SAFE_INTEGER);
    return {
      maxContentBytes: optUint(c, "max_content_bytes", "config", 0xffffffff),
      compactLogBytes: u64 === undefined ? undefined : BigInt(u64),
      briefBudgetChars: optUint(c, "brief_budget_chars", "config", 0xffffffff),
      // Granted by the Worker when a model was loaded and preloaded.
      modelDir,
    };
  },

  request(method: Method, args: any, s: Scope): Prepared {
    const m = method;
    switch (m) {
      case "memorize":
        return {
          method: m,
          args: [{ content: str(args, "content", m), source: optStr(args, "source", m), scope: scope(s) }],
        };
      case "recall":
        return {
          method: m,
          args: [
            {
              query: str(args, "query", m),
              maxResults: optUint(args, "max_results", m, 0xffffffff),
              includeNegated: optBool(args, "include_negated", m),
              scope: scope(s),
              remote: undefined,
              explain: optBool(args, "explain", m),
            },
          ],
        };
      case "correct":
      case "govern": {
        const target = str(args, "target_atom", m);
        const action = str(args, "action", m);
        const reason = str(args, "reason", m);
        const known = m === "correct" ? CORRECT_ACTIONS : GOVERN_ACTIONS;
        if (!known.includes(action)) {
          return {
            refused: {
              effect: "rejected",
              target_atom: target,
              reason: `unknown ${m} action \`${action}\` (one of ${known.join(", ")})`,
            },
          };
        }
        const req: Record<string, unknown> = {
          targetAtom: target,
          action: action.replaceAll("_", "-"),
          reason,
          scope: scope(s),
          by: optStr(args, "by", m),
        };
        if (m === "correct") req.newContent = optStr(args, "new_content", m);
        else req.lessonContent = optStr(args, "lesson_content", m);
        return { method: m, args: [req] };
      }
      case "handoff":
        return {
          method: m,
          args: [{ summary: str(args, "summary", m), source: optStr(args, "source", m), scope: scope(s) }],
        };
      case "history":
        return { method: m, args: [{ atomId: str(args, "atom_id", m), scope: scope(s), remote: undefined }] };
      case "stats":
        // The whole store unless asked for what the client's scope sees.
        return { method: m, args: [args?.scoped ? scope(s) : undefined] };
      case "brief":
        return {
          method: m,
          args: [{ scope: scope(s), remote: undefined, budgetChars: optUint(args, "budget_chars", m, 0xffffffff) }],
        };
      case "export":
        return { method: "export", args: [args?.all ? undefined : scope(s)] };
      case "import":
        return { method: "import", args: [str(args, "jsonl", m)] };
      default:
        throw new TypeError(`unknown method \`${String(m)}\``);
    }
  },
};

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
}

/** camelCase -> snake_case keys, kebab-case enum values -> snake_case, bigint -> number. */
export function fromWit(value: unknown): unknown {
  return convert(value);
}

function convert(value: unknown, key?: string): unknown {
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "string") return key && ENUM_FIELDS.has(key) ? value.replaceAll("-", "_") : value;
  if (Array.isArray(value)) return value.map((v) => convert(v));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      const name = snake(k);
      out[name] = convert(v, name);
    }
    return out;
  }
  return value;
}
