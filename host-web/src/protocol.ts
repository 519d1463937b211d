// Messages between HmgClient and its Worker.

import type { Method } from "./wire.js";
import type { Scope, StoreConfig } from "./types.js";

export interface InitMessage {
  type: "init";
  /** OPFS directory name under `hmg/`. */
  store: string;
  scope: Scope;
  /** Identifies the client in change notices (BroadcastChannel `hmg:<store>`). */
  clientId: string;
  config?: StoreConfig;
  /** Base URL of the embedding model's files; none: keyword-only recall. */
  model?: string;
}

export interface Request {
  type: "call";
  id: number;
  method: Method;
  args: unknown;
}

export type Reply =
  | { type: "ready" | "reply"; id: number; ok: true; value: unknown }
  | { type: "ready" | "reply"; id: number; ok: false; error: string }
  | ({ type: "progress" } & Progress);

/** How far the embedding model's files have come (posted while they load). */
export interface Progress {
  file: string;
  loaded: number;
  /** 0 when the server does not say. */
  total: number;
  done: boolean;
}

/** Posted on the BroadcastChannel `hmg:<store>` after a call changed the store. */
export interface ChangeNotice {
  type: "changed";
  method: string;
  client: string;
}
