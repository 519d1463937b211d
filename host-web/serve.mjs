// A small static server for dist/ on 127.0.0.1 (OPFS needs a secure
// context; loopback is one), and for the embedding model under /model/
// (HMG_MODEL, or the directory ./setup.sh prepared) when there is one.
//
//   node serve.mjs [--port N]     prints the page's URL

import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { homedir } from "node:os";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".map": "application/json",
  ".json": "application/json",
  ".png": "image/png",
};

/** The model directory to serve: $HMG_MODEL or ./setup.sh's cache; none if absent. */
export function modelDir() {
  if (process.env.HMG_MODEL) return ["none", "off"].includes(process.env.HMG_MODEL) ? null : process.env.HMG_MODEL;
  const dir = join(homedir(), ".cache/hmg/model/e5-small-v2");
  return existsSync(dir) ? dir : null;
}

const MODEL_FILES = new Set(["hmg-model.json", "model.onnx", "e5-small.onnx", "tokenizer.bin", "tokenizer.json"]);

export function serve(root, port = 0, model = modelDir()) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file;
    if (path.startsWith("/model/")) {
      const name = path.slice("/model/".length);
      file = model && MODEL_FILES.has(name) ? join(model, name) : "";
    } else {
      file = normalize(join(root, path.endsWith("/") ? path + "index.html" : path));
      if (!file.startsWith(root)) file = "";
    }
    let st;
    try {
      st = file && statSync(file);
      if (!st || !st.isFile()) throw new Error("not a file");
    } catch {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": st.size,
      "last-modified": st.mtime.toUTCString(),
      etag: `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`,
      "cache-control": "no-cache",
    });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--port");
  const port = i > 0 ? Number(process.argv[i + 1]) : 8787;
  const root = join(dirname(fileURLToPath(import.meta.url)), "dist");
  const server = await serve(root, port);
  const model = modelDir();
  console.log(`HMG memory page: http://127.0.0.1:${server.address().port}/`);
  console.log(model ? `embedding model: ${model} (served under /model/)` : "no embedding model: recall in the page is keyword-only");
}
