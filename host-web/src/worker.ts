// The module Worker that runs the engine component (transpiled by jco) over
// one OPFS store directory. Calls arrive from `HmgClient` as messages and run
// one at a time; each runs under the store's Web Lock, between `attach` and
// `drain` + `detach` of the OPFS directory (see opfs-fs.ts), so its answer is
// posted only once its bytes are in OPFS, and another tab's Worker can take
// the lock next.

import { createCli } from "@bytecodealliance/preview2-shim/cli";
import * as clocks from "@bytecodealliance/preview2-shim/clocks";
import { createFilesystem } from "@bytecodealliance/preview2-shim/filesystem";
import * as io from "@bytecodealliance/preview2-shim/io";
import * as random from "@bytecodealliance/preview2-shim/random";
import { instantiate } from "../gen/engine.js";
import { loadModel } from "./model.js";
import { OpfsDirectory, opfsAdapter } from "./opfs-fs.js";
import { fromWit, resultType, toWit, type Method } from "./wire.js";
import type { InitMessage, Progress, Reply, Request } from "./protocol.js";

let store: any = null;
let dir: OpfsDirectory | null = null;
let init: InitMessage | null = null;
let chain: Promise<unknown> = Promise.resolve();
let lockName = "";
/** Tells the store's other clients (other tabs) that it changed. */
let changes: BroadcastChannel | null = null;
const WRITES = new Set<Method>(["memorize", "correct", "govern", "handoff", "import", "relate", "observe"]);

/**
 * Runs `fn` with the store's lock held and its directory attached. What the
 * call did to the files is drained to OPFS before the answer, also when it
 * failed (natively, too, a failed call's writes stay on disk).
 */
async function locked<T>(fn: () => T): Promise<T> {
  return navigator.locks.request(lockName, async () => {
    await dir!.attach();
    try {
      let value: T | undefined;
      let failure: { error: unknown } | undefined;
      try {
        value = fn();
      } catch (error) {
        failure = { error };
        // A trap leaves the instance unusable: the next call starts afresh from OPFS.
        if (!isComponentError(error)) store = null;
      }
      try {
        await dir!.drain();
      } catch (e) {
        // The instance may be ahead of OPFS: the next call reopens from the files.
        store = null;
        throw e;
      }
      if (failure) throw failure.error;
      return value as T;
    } finally {
      dir!.detach();
    }
  });
}

function isComponentError(e: unknown): e is { payload: { tag: string; val: string } | string } {
  return typeof e === "object" && e !== null && "payload" in e;
}

async function openStore(): Promise<void> {
  const msg = init!;
  const started = performance.now();
  let root = await navigator.storage.getDirectory();
  for (const part of ["hmg", msg.store]) {
    root = await root.getDirectoryHandle(part, { create: true });
  }
  dir = new OpfsDirectory(root);
  // The model, when asked for: read-only, in memory only until `preload` has it.
  const modelDir = new OpfsDirectory(root, true);
  model = { fingerprint: "", source: {}, loadMs: 0, preloadMs: 0, bytes: 0, error: "" };
  if (msg.model) {
    const post = (p: Progress) => (self as any).postMessage({ type: "progress", ...p } satisfies Reply);
    try {
      const loaded = await loadModel(msg.model, (file, bytes, total) => post({ file, loaded: bytes, total, done: false }));
      modelDir.attachBuffers(loaded.files);
      Object.assign(model, { source: loaded.sources, loadMs: loaded.ms, bytes: loaded.bytes });
    } catch (e) {
      model.error = describe(e);
    }
    post({ file: "", loaded: model.bytes, total: model.bytes, done: true });
  }
  const fs = createFilesystem({ adapter: opfsAdapter, preopens: { "/store": dir, "/model": modelDir } });
  const cli = createCli({});
  const imports = {
    "wasi:cli/environment": cli.environment,
    "wasi:cli/exit": cli.exit,
    "wasi:cli/stdin": cli.stdin,
    "wasi:cli/stdout": cli.stdout,
    "wasi:cli/stderr": cli.stderr,
    "wasi:cli/terminal-input": cli.terminalInput,
    "wasi:cli/terminal-output": cli.terminalOutput,
    "wasi:cli/terminal-stdin": cli.terminalStdin,
    "wasi:cli/terminal-stdout": cli.terminalStdout,
    "wasi:cli/terminal-stderr": cli.terminalStderr,
    "wasi:clocks/monotonic-clock": clocks.monotonicClock,
    "wasi:clocks/wall-clock": clocks.wallClock,
    "wasi:filesystem/preopens": fs.preopens,
    "wasi:filesystem/types": fs.types,
    "wasi:io/error": io.error,
    "wasi:io/poll": io.poll,
    "wasi:io/streams": io.streams,
    "wasi:random/insecure-seed": random.insecureSeed,
    "wasi:random/random": random.random,
  };
  // engine.core*.wasm sit beside the Worker's script.
  const base = new URL("./engine.core.wasm", import.meta.url).href;
  const engine = await instantiate(
    (name: string) => WebAssembly.compileStreaming(fetch(new URL(name, base))),
    imports as any,
  );
  const instantiated = performance.now();
  timings.instantiateMs = instantiated - started - model.loadMs;
  let modelPath: string | undefined;
  if (msg.model && !model.error) {
    try {
      model.fingerprint = engine.preload("/model");
      modelPath = "/model";
    } catch (e) {
      model.error = `preload: ${describe(e)}`;
    }
    model.preloadMs = performance.now() - instantiated;
    modelDir.detach(); // the bytes are in the engine now
  }
  const opened = performance.now();
  store = await locked(() => engine.memory.Store.open("/store", toWit.config(msg.config ?? {}, modelPath)));
  timings.openMs = performance.now() - opened;
}

const timings = { instantiateMs: 0, openMs: 0 };
let model = { fingerprint: "", source: {} as Record<string, string>, loadMs: 0, preloadMs: 0, bytes: 0, error: "" };

async function call(method: Method, args: any): Promise<unknown> {
  if (!store) await openStore();
  if (method === "timings") return { ...timings, model: { ...model }, fs: { ...dir!.counters } };
  const scope = init!.scope;
  const prepared = toWit.request(method, args, scope);
  if ("refused" in prepared) return prepared.refused;
  const target = store;
  // The content is embedded before the store lock is taken, so that other
  // tabs' calls do not wait for the model (the engine touches no file).
  const ahead = method === "memorize" ? args?.content : method === "correct" ? args?.new_content : undefined;
  if (typeof ahead === "string") target.embedAhead([ahead]);
  const value = await locked(() => target[prepared.method](...prepared.args));
  const { effect, atomsAdded, candidates } = value as {
    effect?: string;
    atomsAdded?: bigint;
    candidates?: { effect?: string }[];
  };
  const changed = effect === "applied" || (atomsAdded ?? 0n) > 0n || !!candidates?.some((c) => c.effect === "applied");
  if (WRITES.has(method) && changed) {
    changes?.postMessage({ type: "changed", method, client: init!.clientId });
  }
  const result = fromWit(value, resultType(method)) as Record<string, unknown>;
  if (method === "stats" && model.error) result.model = `none: ${model.error}; recall is keyword-only`;
  return result;
}

function describe(e: unknown): string {
  if (isComponentError(e)) {
    if (typeof e.payload === "string") return e.payload;
    return `${e.payload.tag}: ${e.payload.val}`;
  }
  if (e instanceof Error) return e.message;
  if (typeof e === "string") return `filesystem: ${e}`;
  return String(e);
}

self.onmessage = (event: MessageEvent<InitMessage | Request>) => {
  const msg = event.data;
  if (msg.type === "init") {
    init = msg;
    lockName = `hmg:${msg.store}`;
    changes = new BroadcastChannel(lockName);
    chain = chain.then(() => openStore()).then(
      () => (self as any).postMessage({ type: "ready", id: 0, ok: true, value: { ...timings } } satisfies Reply),
      (e) => (self as any).postMessage({ type: "ready", id: 0, ok: false, error: describe(e) } satisfies Reply),
    );
    return;
  }
  const { id, method, args } = msg;
  const run = () =>
    call(method, args).then(
      (value) => (self as any).postMessage({ type: "reply", id, ok: true, value } satisfies Reply),
      (e) => (self as any).postMessage({ type: "reply", id, ok: false, error: describe(e) } satisfies Reply),
    );
  chain = chain.then(run, run);
};
