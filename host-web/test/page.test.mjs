// The memory page driven like a person would: memorize through the form,
// search, open an atom's history, correct and govern it from the page, read
// the stats, and use the graph (colours, labels, click to expand). Saves
// screenshots of the results and of the graph as test artefacts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { artifacts, openPage, withBrowser } from "./browser.mjs";

let page;
withBrowser(undefined, async ({ context, server }) => {
  page = await openPage(context, server.url, "?store=page&workspace=acme&repository=shop&branch=main");
});

async function memorizeViaForm(content) {
  await page.fill("#content", content);
  await page.click("#memorize-form button");
  await page.waitForFunction(() => /applied|no_op|rejected/.test(document.querySelector("#memorize-status").textContent));
  const status = await page.textContent("#memorize-status");
  await page.evaluate(() => (document.querySelector("#memorize-status").textContent = ""));
  return status;
}

test("search, history, correct, govern, stats and graph from the page", async () => {
  for (const m of [
    "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
    "前端用 React 18 和 TypeScript",
    "資料庫備份每天凌晨三點跑，保留 30 天",
    "資料庫密碼是 pg_admin_123，記得定期更換",
    "用 Redis 做會話快取",
  ]) {
    assert.match(await memorizeViaForm(m), /^applied 01/);
  }
  assert.match(await memorizeViaForm("前端用 React 18 和 TypeScript"), /^no_op/);
  assert.match(await memorizeViaForm("password=hunter2"), /^rejected: /);
  await page.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("5 atoms"));

  // Search: results with score, time and source.
  await page.fill("#query", "資料庫");
  await page.click("#search-form button");
  await page.waitForSelector(".hit");
  const hits = await page.$$eval(".hit", (els) =>
    els.map((e) => ({ text: e.textContent, score: e.querySelector(".score").textContent, meta: e.querySelector(".meta").textContent })),
  );
  assert.ok(hits.length >= 3, JSON.stringify(hits));
  for (const h of hits) {
    assert.match(h.score, /^(0|1)\.\d\d$/);
    assert.match(h.meta, /2026|20\d\d/);
    assert.match(h.meta, /user/);
  }
  await page.screenshot({ path: join(artifacts, "page-results.png"), fullPage: true });

  // History of the PostgreSQL atom; replace it from the page.
  await page.click(".hit:has-text('PostgreSQL 16')");
  await page.waitForSelector("[data-testid=atom-content]:has-text('PostgreSQL 16')");
  const pg16 = await page.textContent("[data-testid=atom-id]");
  await page.selectOption("#correct-action", "replace");
  await page.fill("#correct-reason", "已升級到 PostgreSQL 17");
  await page.fill("#correct-new", "專案用 PostgreSQL 17 做主資料庫");
  await page.click("#correct-form button");
  await page.waitForSelector("[data-testid=atom-content]:has-text('PostgreSQL 17')");
  const pg17 = await page.textContent("[data-testid=atom-id]");
  assert.notEqual(pg17, pg16);
  assert.equal(await page.textContent("#correct-status"), "applied");
  assert.ok(await page.isVisible(`#atom a[data-atom='${pg16}']`), "chain links the superseded atom");
  assert.match(await page.textContent("#atom table"), /已升級到 PostgreSQL 17/);

  // A refused correction shows its reason.
  await page.click(`#atom a[data-atom='${pg16}']`);
  await page.waitForSelector(`[data-testid=atom-id]:has-text('${pg16}')`);
  await page.selectOption("#correct-action", "negate");
  await page.fill("#correct-reason", "try");
  await page.click("#correct-form button");
  await page.waitForFunction(() => document.querySelector("#correct-status")?.textContent.startsWith("rejected"));

  // derive_lesson from the page: the secret's history shows the exposure change.
  await page.fill("#query", "資料庫密碼");
  await page.click("#search-form button");
  await page.click(".hit:has-text('pg_admin_123')");
  await page.waitForSelector("[data-testid=atom-content]:has-text('pg_admin_123')");
  const secret = await page.textContent("[data-testid=atom-id]");
  await page.selectOption("#govern-action", "derive_lesson");
  await page.fill("#govern-reason", "內容含明文資料庫密碼");
  await page.fill("#govern-lesson", "不要在記憶中儲存資料庫密碼，使用環境變數");
  await page.click("#govern-form button");
  await page.waitForSelector("[data-testid=atom-content]:has-text('不要在記憶中儲存資料庫密碼')");
  const lesson = await page.textContent("[data-testid=atom-id]");
  await page.click(`#atom a[data-atom='${secret}']`);
  await page.waitForSelector("[data-testid=atom-content]:has-text('governed payload hidden: sealed')");
  assert.match(await page.textContent("#atom"), /visible.*sealed.*內容含明文資料庫密碼/s);
  assert.ok(!(await page.content()).includes("pg_admin_123"), "the secret is gone from the page");

  // Stats line follows the store; its tooltip names the model and whether storage is persistent.
  await page.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("7 atoms · 2 edges"));
  assert.match(await page.getAttribute("#stats", "title"), /^model: none: .*\nstorage: (persistent|best-effort)/s);
  assert.equal(typeof (await page.evaluate(() => window.client.persisted)), "boolean");

  // Graph: every atom, both edges, colours by type from the hash.
  const graph = await page.evaluate(() => window.hmgPage.graph.visible());
  assert.equal(graph.nodes.length, 7);
  assert.deepEqual(graph.links.map((l) => l.kind).sort(), ["derived_lesson_from", "supersedes"]);
  assert.ok(graph.links.some((l) => l.from === pg17 && l.to === pg16));
  assert.ok(graph.links.some((l) => l.from === lesson && l.to === secret));
  const legend = await page.$$eval("#legend span", (els) => els.map((e) => [e.textContent, e.querySelector("i").style.background]));
  assert.deepEqual(legend.map(([t]) => t), ["lesson", "memory"]);
  assert.notEqual(legend[0][1], legend[1][1], "distinct colours");
  const nodeColours = Object.fromEntries(legend);

  // Few nodes: labels drawn at zoom 1.
  await page.evaluate(() => window.hmgPage.graph.zoom(1));
  assert.equal(await page.evaluate(() => window.hmgPage.graph.labelsShown()), true);
  await page.evaluate(() => window.hmgPage.graph.fit());
  await page.waitForTimeout(300);
  await page.locator("#graph-card").screenshot({ path: join(artifacts, "page-graph.png") });

  // Click to expand: show only the newest atom, then click the lesson node.
  await page.evaluate(async () => {
    const g = window.hmgPage.graph;
    g.load(await window.client.export(), 0, true);
  });
  await page.evaluate((id) => window.hmgPage.graph.expand(id), lesson);
  let shown = await page.evaluate(() => window.hmgPage.graph.visible().nodes.sort());
  assert.deepEqual(shown, [lesson, secret].sort());
  // A real click on the drawn secret node expands nothing new (its only neighbour is shown) but opens its history.
  await page.evaluate(() => window.hmgPage.graph.settled());
  await page.evaluate(() => window.hmgPage.graph.fit());
  await page.waitForTimeout(200);
  const pos = await page.evaluate((id) => window.hmgPage.graph.screenOf(id), pg17);
  assert.equal(pos, undefined, "pg17 is not drawn yet");
  await page.evaluate((id) => window.hmgPage.graph.expand(id), pg16);
  await page.evaluate(() => window.hmgPage.graph.settled());
  await page.evaluate(() => window.hmgPage.graph.fit());
  await page.waitForTimeout(300);
  shown = await page.evaluate(() => window.hmgPage.graph.visible().nodes);
  assert.ok(shown.includes(pg17) && shown.includes(pg16));
  // Click pg17 on the canvas: its history opens.
  await page.locator("#graph").scrollIntoViewIfNeeded();
  const at = await page.evaluate((id) => window.hmgPage.graph.screenOf(id), pg17);
  const box = await page.locator("#graph").boundingBox();
  await page.mouse.move(box.x + at.x - 5, box.y + at.y);
  await page.mouse.move(box.x + at.x, box.y + at.y);
  await page.waitForTimeout(500);
  assert.match(await page.textContent("#graph .float-tooltip-kap"), /memory: 專案用 PostgreSQL 17/, "hover shows the node");
  // force-graph picks the node under the pointer on an animation frame: press, pause, release.
  await page.mouse.down();
  await page.waitForTimeout(50);
  await page.mouse.up();
  await page.waitForSelector(`[data-testid=atom-id]:has-text('${pg17}')`);
  assert.equal(await page.evaluate(() => window.hmgPage.graph.clicked), pg17);

  // Many nodes at low zoom: no labels.
  const imported = await page.evaluate(async () => {
    const c = window.client;
    const r = await c.import({
      jsonl: (await c.export()).split("\n")[0] + "\n" +
        Array.from({ length: 300 }, (_, i) => JSON.stringify({
          type: "atom", atom_id: `01J${String(i).padStart(23, "0")}`, content: `bulk ${i}`, kind: "observation", source: "agent",
          scope: { tenant_id: "local", workspace: "acme", repository: "shop", branch: "main" }, epistemic: "actual",
          polarity: "affirmative", exposure_state: "visible", negated: false, created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z",
        })).join("\n"),
    });
    await window.hmgPage.refresh();
    window.hmgPage.graph.zoom(0.8);
    return r;
  });
  assert.equal(imported.atoms_added, 300, JSON.stringify(imported));
  assert.equal(await page.evaluate(() => window.hmgPage.graph.visible().nodes.length), 150, "the 150 newest of 307");
  assert.equal(await page.evaluate(() => window.hmgPage.graph.labelsShown()), false);
  assert.deepEqual(page.errors, []);

  // Colours are a function of the type name alone: the same after a reload.
  await page.reload();
  await page.waitForFunction(() => window.hmgReady === true);
  const after = Object.fromEntries(
    await page.$$eval("#legend span", (els) => els.map((e) => [e.textContent, e.querySelector("i").style.background])),
  );
  assert.deepEqual(Object.keys(after), ["lesson", "memory", "observation"]);
  assert.equal(after.lesson, nodeColours.lesson);
  assert.equal(after.memory, nodeColours.memory);
});
