// The embedding model for the browser host: fetched once from a URL, kept in
// OPFS (`hmg-models/<key>/`) so later sessions load it offline, and handed to
// the engine as a read-only directory of in-memory files for `preload`.
//
// Which files: `hmg-model.json` when the URL serves one (its `onnx` and
// `tokenizer` fields), otherwise the first of `model.onnx` / `e5-small.onnx`
// and of `tokenizer.bin` / `tokenizer.json` that the URL serves — the same
// choice the engine makes in a directory (engine/src/embed/onnx.rs).
//
// Freshness: each file's size and Last-Modified / ETag are recorded next to
// it; when the network answers, a changed file is fetched again; when it does
// not, the OPFS copy is used.

export interface LoadedModel {
  files: Map<string, Uint8Array>;
  /** Where the bytes came from, per file: "network" or "opfs". */
  sources: Record<string, "network" | "opfs">;
  bytes: number;
  ms: number;
}

interface Meta {
  size: number;
  validator: string;
}

async function head(url: string): Promise<Response | null> {
  try {
    const r = await fetch(url, { method: "HEAD", cache: "no-store" });
    return r.ok ? r : null;
  } catch {
    return null; // offline: the OPFS copy decides
  }
}

function validator(r: Response): string {
  return r.headers.get("etag") ?? r.headers.get("last-modified") ?? "";
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 24);
}

async function readCached(dir: FileSystemDirectoryHandle, name: string): Promise<{ meta: Meta; file: File } | null> {
  try {
    const meta = JSON.parse(await (await (await dir.getFileHandle(name + ".meta")).getFile()).text()) as Meta;
    const file = await (await dir.getFileHandle(name)).getFile();
    return file.size === meta.size ? { meta, file } : null;
  } catch {
    return null;
  }
}

async function writeCached(dir: FileSystemDirectoryHandle, name: string, bytes: Uint8Array, meta: Meta): Promise<void> {
  // The bytes first, then the record that vouches for them.
  for (const [file, data] of [
    [name, bytes],
    [name + ".meta", new TextEncoder().encode(JSON.stringify(meta))],
  ] as const) {
    const writable = await (await dir.getFileHandle(file, { create: true })).createWritable();
    await writable.write(data as Uint8Array<ArrayBuffer>);
    await writable.close();
  }
}

/** One file: the OPFS copy when it is current (or the network is gone), else the network. */
async function fetchFile(
  base: URL,
  dir: FileSystemDirectoryHandle,
  name: string,
  required: boolean,
  onProgress: OnProgress,
): Promise<{ bytes: Uint8Array; source: "network" | "opfs" } | null> {
  const url = new URL(name, base).href;
  const cached = await readCached(dir, name);
  const probe = await head(url);
  if (cached && (!probe || (validator(probe) === cached.meta.validator && Number(probe.headers.get("content-length")) === cached.meta.size))) {
    return { bytes: new Uint8Array(await cached.file.arrayBuffer()), source: "opfs" };
  }
  if (!probe) {
    if (required) throw new Error(`model file ${url}: not reachable and not in OPFS`);
    return null;
  }
  const r = await fetch(url, { cache: "no-store" });
  if (!r.ok) {
    if (required) throw new Error(`model file ${url}: HTTP ${r.status}`);
    return null;
  }
  const bytes = await readBody(r, name, onProgress);
  await writeCached(dir, name, bytes, { size: bytes.length, validator: validator(r) });
  return { bytes, source: "network" };
}

/** Told how far each file has come while it downloads. */
export type OnProgress = (file: string, loaded: number, total: number) => void;

/** A response body read in chunks, reporting progress. */
async function readBody(r: Response, file: string, onProgress: OnProgress): Promise<Uint8Array> {
  const total = Number(r.headers.get("content-length")) || 0;
  if (!r.body) return new Uint8Array(await r.arrayBuffer());
  const reader = r.body.getReader();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  let told = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    if (loaded - told > 1 << 20) {
      onProgress(file, loaded, total);
      told = loaded;
    }
  }
  onProgress(file, loaded, total);
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export async function loadModel(baseUrl: string, onProgress: OnProgress = () => {}): Promise<LoadedModel> {
  const started = performance.now();
  const base = new URL(baseUrl.endsWith("/") ? baseUrl : baseUrl + "/", self.location.href);
  let dir = await navigator.storage.getDirectory();
  for (const part of ["hmg-models", await sha256Hex(base.href)]) {
    dir = await dir.getDirectoryHandle(part, { create: true });
  }
  const files = new Map<string, Uint8Array>();
  const sources: Record<string, "network" | "opfs"> = {};
  const take = async (name: string, required: boolean) => {
    const got = await fetchFile(base, dir, name, required, onProgress);
    if (got) {
      files.set(name, got.bytes);
      sources[name] = got.source;
    }
    return got;
  };
  let manifest: { onnx?: string; tokenizer?: string } = {};
  const m = await take("hmg-model.json", false);
  if (m) manifest = JSON.parse(new TextDecoder().decode(m.bytes));
  for (const [chosen, names] of [
    [manifest.tokenizer, ["tokenizer.bin", "tokenizer.json"]],
    [manifest.onnx, ["model.onnx", "e5-small.onnx"]],
  ] as const) {
    if (chosen) {
      await take(chosen, true);
      continue;
    }
    let found = false;
    for (const name of names) {
      if (await take(name, false)) {
        found = true;
        break;
      }
    }
    if (!found) throw new Error(`no ${names.join(" or ")} at ${base.href}`);
  }
  let bytes = 0;
  for (const b of files.values()) bytes += b.length;
  return { files, sources, bytes, ms: performance.now() - started };
}
