// Between the seed's JSON shapes (snake_case fields, snake_case enum values)
// and jco's bindings of wit/hmg.wit (camelCase fields, kebab-case enum
// values, u64 as bigint). Driven by gen/contract.js — every record, enum and
// method of the WIT as data — so a field or value added to the WIT needs no
// change here. Runs in the Worker.

import { ENUMS, METHODS, RECORDS, type Field } from "../gen/contract.js";
import type { Scope, StoreConfig } from "./types.js";

/** The store's methods (from the WIT), plus the Worker's own `timings`. */
export type Method = keyof typeof METHODS | "timings";

type Prepared = { method: string; args: unknown[] } | { refused: unknown };

const U32_MAX = 0xffffffff;
const enums: Record<string, readonly string[]> = ENUMS;

/** A call the Worker cannot even make: the promise rejects with this. */
function bad(method: string, field: string, what: string): TypeError {
  return new TypeError(`${method}: \`${field}\` must be ${what}`);
}

/** An enum value the WIT does not know: answered as a refusal, like the engine's. */
class Unknown {
  constructor(readonly reason: string) {}
}

function scopeToWit(s: Scope) {
  return record("Scope", s, "scope");
}

/** One value of a WIT field's type, from JSON. */
function value(field: Field, v: unknown, method: string): unknown {
  const type = field.type;
  switch (type) {
    case "string":
      if (typeof v !== "string") throw bad(method, field.name, "a string");
      return v;
    case "boolean":
      if (typeof v !== "boolean") throw bad(method, field.name, "a boolean");
      return v;
    case "number":
      if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > U32_MAX) {
        throw bad(method, field.name, `an integer in 0..=${U32_MAX}`);
      }
      return v;
    case "bigint":
      if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > Number.MAX_SAFE_INTEGER) {
        throw bad(method, field.name, `an integer in 0..=${Number.MAX_SAFE_INTEGER}`);
      }
      return BigInt(v as number);
  }
  if (enums[type]) {
    if (typeof v !== "string") throw bad(method, field.name, "a string");
    if (!enums[type].includes(v)) {
      throw new Unknown(`unknown ${method} ${field.name} \`${v}\` (one of ${enums[type].join(", ")})`);
    }
    return v.replaceAll("_", "-");
  }
  if (RECORDS[type]) {
    if (typeof v !== "object" || v === null) throw bad(method, field.name, "an object");
    return record(type, v, method);
  }
  throw bad(method, field.name, `a ${type} (not supported by the browser client)`);
}

/** A WIT record from its JSON shape; `scope` fields are the client's. */
function record(name: string, json: any, method: string, scope?: Scope): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of RECORDS[name]) {
    if (scope && field.type === "Scope") {
      out[field.wit] = scopeToWit(scope);
      continue;
    }
    const v = json?.[field.name];
    if (v === undefined || v === null) {
      if (!field.optional) throw bad(method, field.name, field.type === "string" ? "a string" : `given (${field.type})`);
      out[field.wit] = undefined;
      continue;
    }
    if (field.list) {
      if (!Array.isArray(v)) throw bad(method, field.name, "a list");
      out[field.wit] = v.map((item) => value(field, item, method));
    } else {
      out[field.wit] = value(field, v, method);
    }
  }
  return out;
}

export const toWit = {
  config(c: StoreConfig, modelDir?: string) {
    return { ...record("StoreConfig", c, "config"), modelDir };
  },

  request(method: Method, args: any, scope: Scope): Prepared {
    const spec = (METHODS as Record<string, { arg: string; param: string; result: string }>)[method];
    if (!spec) throw new TypeError(`unknown method \`${String(method)}\``);
    try {
      switch (spec.param) {
        case "StoreFilter":
          // What the client's scope sees unless the whole store is asked for.
          return {
            method,
            args: [args?.all ? { tag: "whole-store" } : { tag: "visible-from", val: scopeToWit(scope) }],
          };
        case "none":
          return { method, args: [] };
        case "string": {
          // A plain string parameter (`import(jsonl)`) is passed as `{ <name>: "…" }`.
          const text = args?.[spec.arg];
          if (typeof text !== "string") throw bad(method, spec.arg, "a string");
          return { method, args: [text] };
        }
        case "Array<string>": {
          // `embedAhead(texts)`: `{ texts: ["…"] }`.
          const texts = args?.[spec.arg];
          if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string")) {
            throw bad(method, spec.arg, "a list of strings");
          }
          return { method, args: [texts] };
        }
        default:
          return { method, args: [record(spec.param, args, method, scope)] };
      }
    } catch (e) {
      if (!(e instanceof Unknown)) throw e;
      const refused: Record<string, unknown> = { effect: "rejected", reason: e.reason };
      if (typeof args?.target_atom === "string") refused.target_atom = args.target_atom;
      return { refused };
    }
  },
};

/** A result of WIT type `type` as JSON: snake_case keys and enum values, u64 as number. */
export function fromWit(value: unknown, type: string): unknown {
  if (value === undefined || value === null) return value;
  if (typeof value === "bigint") return Number(value);
  if (enums[type]) return (value as string).replaceAll("-", "_");
  const fields = RECORDS[type];
  if (!fields) return value;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const v = (value as Record<string, unknown>)[field.wit];
    if (v === undefined) continue;
    out[field.name] = field.list ? (v as unknown[]).map((x) => fromWit(x, field.type)) : fromWit(v, field.type);
  }
  return out;
}

/** The WIT type a method answers with. */
export function resultType(method: Method): string {
  return (METHODS as Record<string, { result: string }>)[method]?.result ?? "string";
}
