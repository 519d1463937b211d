// HmgClient: the seed's TypeScript API over the engine component running in
// a module Worker on OPFS. Import it, construct it, await its calls:
//
//   const client = new HmgClient({ scope: { tenant_id: "me", workspace: "acme", repository: "shop" } });
//   const { atom_id, effect } = await client.memorize({ content: "專案用 PostgreSQL 16 做主資料庫" });
//   const { atoms } = await client.recall({ query: "資料庫選型" });
//
// Errors (storage, a malformed call) reject the promise with an Error;
// refusals are results with `effect: "rejected"` and a `reason`.

import type { ChangeNotice, InitMessage, Progress, Reply, Request } from "./protocol.js";
import type {
  BriefRequest,
  BriefResult,
  CorrectRequest,
  CorrectResult,
  FilterRequest,
  GovernRequest,
  GovernResult,
  HandoffRequest,
  HandoffResult,
  HistoryRequest,
  HistoryResult,
  ExtractResult,
  GraphViewRequest,
  GraphViewResult,
  ImportResult,
  MemorizeRequest,
  NeighborhoodRequest,
  NeighborhoodResult,
  ObserveRequest,
  ObserveResult,
  PathRequest,
  PathResult,
  RelateRequest,
  RelateResult,
  MemorizeResult,
  RecallRequest,
  RecallResult,
  Scope,
  StoreConfig,
  StoreStats,
} from "./types.js";
import type { Method } from "./wire.js";

export type * from "./types.js";
export type { Progress } from "./protocol.js";

export interface HmgClientOptions {
  /** The OPFS store (a directory under `hmg/`); tabs naming the same store share it. Default `"default"`. */
  store?: string;
  /**
   * Where memories are bound and recalled. Default `{ tenant_id: "local" }`
   * (personal memories of this browser profile); a page for one project sets
   * workspace / repository / branch.
   */
  scope?: Partial<Scope>;
  config?: StoreConfig;
  /**
   * Base URL of an embedding model (the files `./setup.sh` prepares: an ONNX
   * encoder, `tokenizer.bin`, optionally `hmg-model.json`). Fetched once and
   * kept in OPFS; recall is then hybrid, as natively. Default: none, recall
   * is keyword-only (`stats().model` says so).
   */
  model?: string | URL;
  /** URL of `hmg-worker.js` (default: beside this module). */
  workerUrl?: string | URL;
}

/** Where the Worker's time went (milliseconds) and what the OPFS layer did. */
export interface Timings {
  instantiateMs: number;
  openMs: number;
  /** The embedding model: fingerprint, where each file came from, load and preload times, or why there is none. */
  model: { fingerprint: string; source: Record<string, string>; loadMs: number; preloadMs: number; bytes: number; error: string };
  fs: { attaches: number; drains: number; queued: number; handleOpens: number };
}

export class HmgClient {
  readonly store: string;
  readonly scope: Scope;
  /** Resolves when the engine is instantiated and the store open. */
  readonly ready: Promise<{ instantiateMs: number; openMs: number }>;
  /**
   * Whether the browser agreed to keep this origin's storage (OPFS) out of
   * eviction under storage pressure (`navigator.storage.persist()`, asked
   * once per client; the browser decides, e.g. by site engagement).
   */
  readonly persisted: Promise<boolean>;
  private worker: Worker;
  private readonly id = crypto.randomUUID();
  private channel: BroadcastChannel;
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readyCallbacks!: { resolve: (v: any) => void; reject: (e: Error) => void };
  private progressListeners: ((p: Progress) => void)[] = [];

  constructor(options: HmgClientOptions = {}) {
    this.store = options.store ?? "default";
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(this.store) || this.store.startsWith(".")) {
      throw new TypeError(`store name \`${this.store}\`: use 1-64 letters, digits, '.', '_' or '-'`);
    }
    const s = options.scope ?? {};
    this.scope = {
      tenant_id: s.tenant_id ?? "local",
      workspace: s.workspace,
      repository: s.repository,
      branch: s.branch,
      session: s.session,
    };
    const url = options.workerUrl ?? new URL("./hmg-worker.js", import.meta.url);
    this.worker = new Worker(url, { type: "module", name: `hmg:${this.store}` });
    this.ready = new Promise((resolve, reject) => {
      this.readyCallbacks = { resolve, reject };
    });
    this.ready.catch(() => {});
    this.persisted = (navigator.storage?.persist?.() ?? Promise.resolve(false)).catch(() => false);
    this.worker.onmessage = (event: MessageEvent<Reply>) => this.receive(event.data);
    this.worker.onerror = (event) => this.fail(new Error(`hmg worker: ${event.message || "failed to start"}`));
    this.channel = new BroadcastChannel(`hmg:${this.store}`);
    const init: InitMessage = {
      type: "init",
      store: this.store,
      scope: this.scope,
      clientId: this.id,
      config: options.config,
      model: options.model === undefined ? undefined : new URL(options.model, location.href).href,
    };
    this.worker.postMessage(init);
  }

  /** Writes one memory; `no_op` when the same content is already stored. */
  memorize(req: MemorizeRequest): Promise<MemorizeResult> {
    return this.call("memorize", req);
  }

  /** The memories that best answer `query` (noun phrases work best). */
  recall(req: RecallRequest): Promise<RecallResult> {
    return this.call("recall", req);
  }

  /** Changes what is believed: negate, confirm_actual, confirm_necessary, demote, replace. */
  correct(req: CorrectRequest): Promise<CorrectResult> {
    return this.call("correct", req);
  }

  /** Changes what exists: quarantine, restore, seal, tombstone, derive_lesson. */
  govern(req: GovernRequest): Promise<GovernResult> {
    return this.call("govern", req);
  }

  /** Hands the session's context to the next one. */
  handoff(req: HandoffRequest): Promise<HandoffResult> {
    return this.call("handoff", req);
  }

  /** An atom's audit trail: current view, relations, corrections, exposure changes. */
  history(req: HistoryRequest): Promise<HistoryResult> {
    return this.call("history", req);
  }

  /** Counts of what this client's scope sees (`{ all: true }`: the whole store, every tenant). */
  stats(req: FilterRequest = {}): Promise<StoreStats> {
    return this.call("stats", req);
  }

  /** The session-start brief for this client's scope. */
  brief(req: BriefRequest = {}): Promise<BriefResult> {
    return this.call("brief", req);
  }

  /** JSON Lines of atoms, edges and events this client's scope sees (`{ all: true }`: the whole store). */
  export(req: FilterRequest = {}): Promise<string> {
    return this.call("export", req);
  }

  /** Imports JSON Lines written by `export` (all-or-nothing, idempotent). */
  import(req: { jsonl: string }): Promise<ImportResult> {
    return this.call("import", req);
  }

  /** Looks at one conversation turn and captures what it says to remember (`dry_run`: only say what would be). */
  observe(req: ObserveRequest): Promise<ObserveResult> {
    return this.call("observe", req);
  }

  /** The entities named in a text (technologies, products, people, files, projects…). */
  /** What recovery did since the last call of this (bytes kept aside, repairs waiting for a writable store), in plain words. */
  notices(): Promise<string[]> {
    return this.call("notices", {});
  }

  extractEntities(req: { text: string }): Promise<ExtractResult> {
    return this.call("extractEntities", req);
  }

  /** Entities within `depth` hops (1-4) of `entity`, and the edges between them, inside this client's scope. */
  neighborhood(req: NeighborhoodRequest): Promise<NeighborhoodResult> {
    return this.call("neighborhood", req);
  }

  /** The shortest chain of edges between two entities, inside this client's scope. */
  shortestPath(req: PathRequest): Promise<PathResult> {
    return this.call("shortestPath", req);
  }

  /** Stores a triple you already know, `source -[relation]-> target` (as a memory of its own). */
  relate(req: RelateRequest): Promise<RelateResult> {
    return this.call("relate", req);
  }

  /** The newest memories and the entities they name (what the graph page draws). */
  graphView(req: GraphViewRequest = {}): Promise<GraphViewResult> {
    return this.call("graphView", req);
  }

  /** Instantiate and open times, and the OPFS layer's counters. */
  timings(): Promise<Timings> {
    return this.call("timings", {});
  }

  /**
   * Calls `listener` when another client of the same store (another tab, or
   * another client in this page) changed it; returns the unsubscribe function.
   */
  onChange(listener: (change: { method: string }) => void): () => void {
    const handler = (event: MessageEvent<ChangeNotice>) => {
      if (event.data?.type === "changed" && event.data.client !== this.id) listener({ method: event.data.method });
    };
    this.channel.addEventListener("message", handler);
    return () => this.channel.removeEventListener("message", handler);
  }

  /**
   * Calls `listener` while the embedding model downloads (bytes so far and
   * in all, per file) and once with `done: true`; returns the unsubscribe.
   */
  onProgress(listener: (p: Progress) => void): () => void {
    this.progressListeners.push(listener);
    return () => {
      this.progressListeners = this.progressListeners.filter((l) => l !== listener);
    };
  }

  /** Stops the Worker; pending calls reject. */
  close(): void {
    this.channel.close();
    this.worker.terminate();
    this.fail(new Error("hmg client closed"));
  }

  private call<T>(method: Method, args: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const msg: Request = { type: "call", id, method, args };
      try {
        this.worker.postMessage(msg);
      } catch (e) {
        this.pending.delete(id);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  private receive(reply: Reply): void {
    if (reply.type === "progress") {
      for (const l of this.progressListeners) l(reply);
      return;
    }
    const target = reply.type === "ready" ? this.readyCallbacks : this.pending.get(reply.id);
    if (!target) return;
    if (reply.type === "reply") this.pending.delete(reply.id);
    if (reply.ok) target.resolve(reply.value);
    else target.reject(new Error(reply.error));
  }

  private fail(error: Error): void {
    this.readyCallbacks.reject(error);
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
