// Semantic recall in the browser: the embedding model ./setup.sh prepared,
// served under /model/, fetched once into OPFS, preloaded into the same
// engine component; hybrid recall answers across languages as natively.
// A reload loads the model from OPFS, not the network.

import assert from "node:assert/strict";
import { test } from "node:test";
import { call, openPage, withBrowser } from "./browser.mjs";
import { modelDir } from "../serve.mjs";

const env = withBrowser(() => assert.ok(modelDir(), "no embedding model: run ./setup.sh (scripts/model/fetch.sh)"));

test("hybrid recall with the model, loaded from the network once, then from OPFS", async () => {
  const page = await openPage(env.context, env.server.url, "?store=semantic&model=./model/");
  const t = await call(page, "timings");
  assert.equal(t.model.error, "");
  assert.match(t.model.fingerprint, /^multilingual-e5-small:/);
  assert.deepEqual(Object.values(t.model.source).sort(), ["network", "network"]);
  assert.ok(t.model.bytes > 100e6, `${t.model.bytes}`);
  // The download showed its progress on the page, and the bar is gone now.
  const seen = await page.evaluate(() => window.hmgPage.progressSeen);
  assert.ok(seen.events > 10 && seen.bytes > 100e6 && seen.done, JSON.stringify(seen));
  assert.equal(await page.isVisible("#progress"), false);

  const ids = {};
  for (const [key, content] of [
    ["pg", "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"],
    ["react", "前端用 React 18 和 TypeScript"],
    ["retro", "每週五下午三點開迭代回顧會"],
    ["deploy", "正式環境部署在 AWS ECS，不用 Kubernetes"],
  ]) {
    ids[key] = (await call(page, "memorize", { content })).atom_id;
  }
  const stats = await call(page, "stats");
  assert.equal(stats.model, t.model.fingerprint);
  assert.equal(stats.indexes.semantic, 4);

  for (const [query, want] of [
    ["which database do we use?", "pg"],
    ["我们数据库用的什么来着？", "pg"],
    ["frontend framework", "react"],
    ["where is production deployed?", "deploy"],
  ]) {
    const r = await call(page, "recall", { query, explain: true });
    assert.equal(r.atoms[0]?.atom_id, ids[want], `${query}: ${JSON.stringify(r.atoms.slice(0, 2))}`);
    const semantic = r.atoms[0].explain.find((s) => s.name === "semantic");
    assert.ok(semantic.value > 0, `${query}: semantic signal ${JSON.stringify(semantic)}`);
  }

  await page.reload();
  await page.waitForFunction(() => window.hmgReady === true, null, { timeout: 120_000 });
  const again = await call(page, "timings");
  assert.deepEqual(Object.values(again.model.source).sort(), ["opfs", "opfs"]);
  assert.equal(again.model.fingerprint, t.model.fingerprint);
  assert.equal((await call(page, "stats")).indexes.semantic, 4, "vectors were stored, not recomputed");
  assert.equal((await call(page, "recall", { query: "which database do we use?" })).atoms[0].atom_id, ids.pg);
  assert.deepEqual(page.errors, []);
});

test("a model URL that serves nothing: keyword-only, and stats says why", async () => {
  const page = await openPage(env.context, env.server.url, "?store=nomodel&model=./no-such-model/");
  const stats = await call(page, "stats");
  assert.match(stats.model, /^none: .*no tokenizer\.bin or tokenizer\.json.*keyword-only/);
  assert.equal((await call(page, "memorize", { content: "用 Redis 做會話快取" })).effect, "applied");
  assert.equal((await call(page, "stats")).indexes.semantic, 0);
});
