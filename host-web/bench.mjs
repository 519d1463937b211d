// Browser sizes and timings, printed (docs/BENCHMARKS.md records one run):
//   node host-web/bench.mjs            (after ./setup.sh --build; needs /usr/bin/chromium)
//
// - bundle: what a page downloads (raw and gzip -9), source maps excluded;
// - instantiate: fetch + compile + instantiate of the component in the Worker,
//   first load of a fresh profile and the median of reloads, plus store open;
// - memorize: 1,000 memories one call at a time (150 from benches/data, then
//   variants), median and p95 per call as the page sees it (message to the
//   Worker, Web Lock, OPFS attach, engine, drain, reply);
// - recall: the 100 queries of benches/data at 1k memories, median and p95;
// - stats: the cheapest call, i.e. the fixed cost of one round trip;
// - reopen: a reload at 1k memories (instantiate + open reads the store).
//
// Twice: keyword-only, then with the embedding model served under /model/
// (first load from the network into OPFS, reloads from OPFS; preload time).
// Keyword-only also at 10k memories (9,000 more imported in one call):
// recall, the page's refresh (export + graph), reopen.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { launch, newProfile, openPage, removeProfile, root, startServer } from "./test/browser.mjs";

const dist = join(root, "dist");
const data = join(root, "../benches/data");
const memories = readFileSync(join(data, "agent-memory-memories.tsv"), "utf8").trim().split("\n").map((l) => l.split("\t")[1]);
const queries = readFileSync(join(data, "agent-memory-queries.tsv"), "utf8").trim().split("\n").map((l) => l.split("\t")[1]);

const kb = (n) => `${(n / 1024).toFixed(0)} KB`;
const mb = (n) => `${(n / 1048576).toFixed(2)} MB`;
let raw = 0;
let gz = 0;
console.log("bundle (what the page loads):");
for (const name of readdirSync(dist).sort()) {
  if (name.endsWith(".map") || statSync(join(dist, name)).isDirectory()) continue;
  const bytes = readFileSync(join(dist, name));
  const z = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gz += z;
  console.log(`  ${name.padEnd(20)} ${kb(bytes.length).padStart(10)}  gzip ${kb(z).padStart(9)}`);
}
console.log(`  ${"total".padEnd(20)} ${mb(raw).padStart(10)}  gzip ${mb(gz).padStart(9)}`);

const server = await startServer();
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `median ${q(0.5).toFixed(2)} ms, p95 ${q(0.95).toFixed(2)} ms (n=${s.length})`;
};

for (const model of ["none", "./model/"]) {
  console.log(`\n== ${model === "none" ? "keyword-only" : "with the embedding model (hybrid recall)"}`);
  const profile = newProfile();
  const context = await launch(profile);
  try {
    await run(context, model);
  } finally {
    await context.close();
    removeProfile(profile);
  }
}
await server.close();

async function run(context, model) {
  const page = await openPage(context, server.url, `?store=bench&model=${model}`);
  const first = await page.evaluate(() => window.client.timings());
  const modelLine = (t) =>
    `model ${(t.model.bytes / 1048576).toFixed(0)} MB from ${[...new Set(Object.values(t.model.source))].join("+")} in ${t.model.loadMs.toFixed(0)} ms, preload ${t.model.preloadMs.toFixed(0)} ms`;
  if (model !== "none") console.log(`first load: ${modelLine(first)}`);
  const inst = [];
  const open = [];
  for (let i = 0; i < 5; i++) {
    await page.reload();
    await page.waitForFunction(() => window.hmgReady === true, null, { timeout: 60_000 });
    const t = await page.evaluate(() => window.client.timings());
    inst.push(t.instantiateMs);
    open.push(t.openMs);
    if (model !== "none" && i === 4) console.log(`reload: ${modelLine(t)}`);
  }
  console.log(`instantiate: first load ${first.instantiateMs.toFixed(0)} ms; reloads ${stats(inst)}`);
  console.log(`open (empty store): ${stats(open)}`);

  const contents = Array.from({ length: 1000 }, (_, i) =>
    i < memories.length ? memories[i] : `${memories[i % memories.length]}（服務 svc-${i}，第 ${Math.floor(i / memories.length)} 版）`,
  );
  const mem = await page.evaluate(async (contents) => {
    const out = [];
    for (const content of contents) {
      const t = performance.now();
      const r = await window.client.memorize({ content });
      out.push(performance.now() - t);
      if (r.effect !== "applied") throw new Error(`${r.effect}: ${r.reason}`);
    }
    return out;
  }, contents);
  console.log(`memorize, store growing 0 -> 1k: ${stats(mem)}; last 100: ${stats(mem.slice(-100))}`);

  console.log(`recall at 1k memories: ${stats(await recallTimes(page, 2))}`);

  const st = await page.evaluate(async () => {
    const out = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      await window.client.stats();
      out.push(performance.now() - t);
    }
    return out;
  });
  console.log(`stats (round-trip floor): ${stats(st)}`);

  console.log(`open at 1k memories (after reload): ${stats(await reopenTimes(page))}`);
  if (model === "none") await tenThousand(page);
  const ua = await page.evaluate(() => navigator.userAgent);
  console.log(`browser: ${ua.match(/(Headless)?Chrome\/[\d.]+/)?.[0]}; stats.model: ${(await page.evaluate(() => window.client.stats())).model}`);
}

async function tenThousand(page) {
  const took = await page.evaluate(async (memories) => {
    const c = window.client;
    const header = (await c.export()).split("\n")[0];
    const scope = { tenant_id: "local" };
    const lines = Array.from({ length: 9000 }, (_, i) => {
      const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
      let id = "";
      for (let n = i; id.length < 23; n = Math.floor(n / 32)) id = crockford[n % 32] + id;
      id = "01K" + id;
      return JSON.stringify({
        type: "atom", atom_id: id, content: `${memories[i % memories.length]}（模組 m${i}）`, kind: "memory", source: "agent", scope,
        epistemic: "actual", polarity: "affirmative", exposure_state: "visible", negated: false,
        created_at: "2026-06-01T00:00:00Z", updated_at: "2026-06-01T00:00:00Z",
      });
    });
    const t = performance.now();
    const r = await c.import({ jsonl: header + "\n" + lines.join("\n") });
    if (r.atoms_added !== 9000) throw new Error(JSON.stringify(r));
    return performance.now() - t;
  }, memories);
  console.log(`import 9,000 atoms in one call: ${took.toFixed(0)} ms`);
  console.log(`recall at 10k memories: ${stats(await recallTimes(page, 1))}`);
  const refresh = await page.evaluate(async () => {
    const out = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await window.hmgPage.refresh();
      out.push(performance.now() - t);
    }
    return out;
  });
  console.log(`page refresh at 10k (stats + export + graph of the newest 150): ${stats(refresh)}`);
  console.log(`open at 10k memories (after reload): ${stats(await reopenTimes(page))}`);
}

/** Per-query recall latencies (ms) of the last of `rounds` passes over the queries (earlier passes warm up). */
function recallTimes(page, rounds) {
  return page.evaluate(
    async ([queries, rounds]) => {
      const out = [];
      for (let round = 0; round < rounds; round++) {
        for (const query of queries) {
          const t = performance.now();
          await window.client.recall({ query, max_results: 10 });
          if (round === rounds - 1) out.push(performance.now() - t);
        }
      }
      return out;
    },
    [queries, rounds],
  );
}

/** The store's open time after each of three reloads. */
async function reopenTimes(page) {
  const times = [];
  for (let i = 0; i < 3; i++) {
    await page.reload();
    await page.waitForFunction(() => window.client !== undefined);
    await page.evaluate(() => window.client.ready);
    times.push((await page.evaluate(() => window.client.timings())).openMs);
  }
  return times;
}
