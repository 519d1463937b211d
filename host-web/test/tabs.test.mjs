// Two tabs on one store: each tab has its own Worker and engine instance;
// the Web Lock lets one call at a time touch the files. Writes from both,
// interleaved, all land; each tab sees the other's writes and corrections,
// also across compactions (generation changes) made by the other tab.

import assert from "node:assert/strict";
import { test } from "node:test";
import { atomIds, call, openPage, withBrowser } from "./browser.mjs";

const env = withBrowser();

test("two tabs write at once and nothing is lost", async () => {
  const a = await openPage(env.context, env.server.url, "?store=shared");
  const b = await openPage(env.context, env.server.url, "?store=shared");
  const burst = (page, tab) =>
    page.evaluate(async (tab) => {
      // Fire all calls at once: the tab's Worker queues them, the two Workers contend for the lock.
      const rs = await Promise.all(
        Array.from({ length: 25 }, (_, i) => window.client.memorize({ content: `tab ${tab} note ${i}: module ${tab}${i} owns billing step ${i}` })),
      );
      return rs.map((r) => [r.effect, r.atom_id]);
    }, tab);
  const [fromA, fromB] = await Promise.all([burst(a, "A"), burst(b, "B")]);
  for (const [effect] of [...fromA, ...fromB]) assert.equal(effect, "applied");
  const written = [...fromA, ...fromB].map(([, id]) => id).sort();
  assert.equal(new Set(written).size, 50);

  assert.deepEqual(await atomIds(a), written);
  assert.deepEqual(await atomIds(b), written);
  assert.equal((await call(a, "stats")).atoms, 50);

  // B sees what A wrote last, A sees B's correction of it.
  const last = (await call(a, "memorize", { content: "發布流程用 GitHub Actions" })).atom_id;
  assert.equal((await call(b, "recall", { query: "發布流程" })).atoms[0].atom_id, last);
  const fixed = await call(b, "correct", { target_atom: last, action: "replace", reason: "遷移", new_content: "發布流程用 Buildkite" });
  assert.equal(fixed.effect, "applied");
  const seenByA = await call(a, "recall", { query: "發布流程" });
  assert.equal(seenByA.atoms[0].atom_id, fixed.new_atom_id);
  assert.ok(!seenByA.atoms.some((x) => x.atom_id === last));
  // A cannot replace the superseded atom again: it knows B's replace.
  assert.equal((await call(a, "correct", { target_atom: last, action: "replace", reason: "x", new_content: "y" })).effect, "rejected");
  await a.close();
  await b.close();
});

test("a tab catches up after the other tab compacted (new generation)", async () => {
  const a = await openPage(env.context, env.server.url, "?store=gen");
  const b = await openPage(env.context, env.server.url, "?store=gen");
  const secret = (await call(a, "memorize", { content: "staging 密碼是 tabs_secret_42" })).atom_id;
  assert.equal((await call(b, "recall", { query: "staging 密碼" })).atoms[0].atom_id, secret);
  // Sealing compacts: a new snapshot and log, the old files removed.
  assert.equal((await call(b, "govern", { target_atom: secret, action: "seal", reason: "secret" })).effect, "applied");
  assert.equal((await call(a, "history", { atom_id: secret })).current.exposure_state, "sealed");
  assert.ok(!(await call(a, "recall", { query: "staging 密碼" })).atoms.some((x) => x.atom_id === secret));
  const next = (await call(a, "memorize", { content: "after the seal, tab A writes again" })).atom_id;
  assert.equal((await call(b, "recall", { query: "tab A writes again" })).atoms[0].atom_id, next);
  assert.equal((await call(b, "stats")).atoms, 2);
  await a.close();
  await b.close();
});

test("a write in one tab shows up on the other tab's page without a reload", async () => {
  const a = await openPage(env.context, env.server.url, "?store=live");
  const b = await openPage(env.context, env.server.url, "?store=live");
  await b.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("0 memories"));
  const notices = b.evaluate(
    () => new Promise((resolve) => window.client.onChange((c) => resolve(c.method))),
  );
  await call(a, "memorize", { content: "live update: 發布流程用 GitHub Actions" });
  assert.equal(await notices, "memorize");
  await b.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("1 memories"));
  await b.waitForFunction(() => window.hmgPage.graph.visibleOf("fact").length === 1);
  // A refusal changes nothing and tells no one; A's own page is not told about its own write.
  assert.equal((await call(a, "memorize", { content: "password=hunter2" })).effect, "rejected");
  const ownNotice = await a.evaluate(
    () => new Promise((resolve) => {
      window.client.onChange(() => resolve("told"));
      setTimeout(() => resolve("quiet"), 300);
    }),
  );
  assert.equal(ownNotice, "quiet");
  await a.close();
  await b.close();
});
