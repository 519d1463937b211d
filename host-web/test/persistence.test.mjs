// Durability in the browser: what a call acknowledged is in OPFS — after a
// page reload, after a browser restart on the same profile, after Chromium
// is killed (SIGKILL) right after the answer, and across many compactions
// (new files, renames and removes queued and drained by the OPFS adapter).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, test } from "node:test";
import { atomIds, call, launch, newProfile, openPage, opfsFiles, removeProfile, startServer } from "./browser.mjs";

let server;
const profiles = [];

before(async () => {
  server = await startServer();
});

after(async () => {
  await server?.close();
  for (const p of profiles) removeProfile(p);
});

function profile() {
  const p = newProfile();
  profiles.push(p);
  return p;
}

test("memories survive a page reload and a browser restart", async () => {
  const dir = profile();
  let context = await launch(dir);
  let page = await openPage(context, server.url, "?store=persist");
  const written = [];
  for (let i = 0; i < 12; i++) {
    const r = await call(page, "memorize", { content: `第 ${i} 條決定：服務 svc-${i} 用 Go 1.${20 + i} 寫` });
    assert.equal(r.effect, "applied");
    written.push(r.atom_id);
  }
  const pg = (await call(page, "memorize", { content: "專案用 PostgreSQL 16 做主資料庫" })).atom_id;
  const pg17 = (await call(page, "correct", { target_atom: pg, action: "replace", reason: "升級", new_content: "專案用 PostgreSQL 17 做主資料庫" })).new_atom_id;
  const stats = await call(page, "stats");

  await page.reload();
  await page.waitForFunction(() => window.hmgReady === true, null, { timeout: 60_000 });
  assert.deepEqual(await call(page, "stats"), stats);
  assert.equal((await call(page, "recall", { query: "PostgreSQL 主資料庫" })).atoms[0].atom_id, pg17);

  await context.close();
  context = await launch(dir);
  page = await openPage(context, server.url, "?store=persist");
  assert.deepEqual(await call(page, "stats"), stats);
  const ids = await atomIds(page);
  for (const id of [...written, pg, pg17]) assert.ok(ids.includes(id), id);
  assert.equal((await call(page, "recall", { query: "svc-7" })).atoms[0].atom_id, written[7]);
  assert.deepEqual((await call(page, "history", { atom_id: pg17 })).relations.supersedes, [pg]);
  await context.close();
});

test("acknowledged writes survive Chromium being killed", async () => {
  const dir = profile();
  let context = await launch(dir);
  let page = await openPage(context, server.url, "?store=kill");
  const acked = [];
  for (let i = 0; i < 20; i++) {
    acked.push((await call(page, "memorize", { content: `kill test memory number ${i} about topic-${i}` })).atom_id);
  }
  // No goodbye: every Chromium process of this profile gets SIGKILL.
  execFileSync("pkill", ["-KILL", "-f", `user-data-dir=${dir}`]);
  await context.close().catch(() => {});

  context = await launch(dir);
  page = await openPage(context, server.url, "?store=kill");
  const ids = await atomIds(page);
  for (const id of acked) assert.ok(ids.includes(id), `lost ${id}`);
  assert.equal((await call(page, "stats")).atoms, 20);
  await context.close();
});

test("many compactions: queued creates, renames and removes reach OPFS in order", async () => {
  const dir = profile();
  let context = await launch(dir);
  let page = await openPage(context, server.url, "?store=compact");
  // A second client in the page with a tiny log limit: nearly every write compacts.
  const acked = await page.evaluate(async () => {
    const c = new window.HmgClient({ store: "compact-small", config: { compact_log_bytes: 600 } });
    await c.ready;
    const ids = [];
    for (let i = 0; i < 40; i++) {
      const r = await c.memorize({ content: `compaction round ${i}: cache layer uses Redis ${i}` });
      ids.push(r.atom_id);
      if (i % 10 === 9) await c.govern({ target_atom: ids[i - 1], action: "seal", reason: "test seal" });
    }
    const t = await c.timings();
    c.close();
    return { ids, t };
  });
  const files = await opfsFiles(page, "compact-small");
  const snaps = files.filter((f) => f.startsWith("snap-"));
  assert.equal(snaps.length, 1, files.join(" "));
  const generation = parseInt(snaps[0].slice(5, 21), 16);
  assert.ok(generation >= 5, `compactions: ${generation}`);
  assert.ok(acked.t.fs.queued >= 4 * generation, `queued ops: ${JSON.stringify(acked.t.fs)}`);
  assert.equal(files.filter((f) => f.startsWith("log-")).length, 1, files.join(" "));
  assert.ok(!files.some((f) => f.endsWith(".tmp")), files.join(" "));
  await context.close();

  context = await launch(dir);
  page = await openPage(context, server.url, "?store=compact-small");
  const ids = await atomIds(page);
  for (const id of acked.ids) assert.ok(ids.includes(id), `lost ${id}`);
  const sealed = await call(page, "history", { atom_id: acked.ids[8] });
  assert.equal(sealed.current.exposure_state, "sealed");
  assert.equal((await call(page, "recall", { query: "compaction round 39" })).atoms[0].atom_id, acked.ids[39]);
  await context.close();
});
