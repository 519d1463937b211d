// The memory page driven like a person would: the empty-state hint,
// memorize through the form (with plain-language status, secrets named),
// search with filters, open an atom's history, correct and govern it from
// the page, read the stats, capture from a conversation turn, and use the
// knowledge graph (hubs / facts / entities in the seed's colours, label
// gates, click to drill down, path finding, type filter, search hits ringed).
// Saves screenshots of the results and of the graph as test artefacts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { artifacts, openPage, withBrowser } from "./browser.mjs";

let page;
withBrowser(undefined, async ({ context, server }) => {
  page = await openPage(context, server.url, "?store=page&workspace=acme&repository=shop&branch=main");
});

/** Memorizes through the form; returns `[effect, status text]`. */
async function memorizeViaForm(content) {
  await page.evaluate(() => delete document.querySelector("#memorize-status").dataset.effect);
  await page.fill("#content", content);
  await page.click("#memorize-form button");
  await page.waitForFunction(() => document.querySelector("#memorize-status").dataset.effect);
  return page.$eval("#memorize-status", (e) => [e.dataset.effect, e.textContent]);
}

const rgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(", ")})`;
const PALETTE = ["#f59e0b", "#10b981", "#ef4444", "#06b6d4", "#8b5cf6", "#ec4899", "#84cc16", "#f97316", "#14b8a6", "#64748b"];
/** djb2, written here again so the test checks the page rather than itself. */
function djb2(s) {
  let h = 5381;
  for (const c of s) h = (h * 33 + c.charCodeAt(0)) % 2 ** 32;
  return h;
}

test("search, history, correct, govern, capture, stats and the knowledge graph from the page", async () => {
  assert.ok(await page.isVisible("#empty-hint"), "an empty store says how to start");
  for (const m of [
    "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB",
    "前端用 React 18 和 TypeScript",
    "資料庫備份每天凌晨三點跑，保留 30 天",
    "資料庫密碼是 女兒生日加貓名，記得定期更換",
    "用 Redis 做會話快取",
  ]) {
    const [effect, text] = await memorizeViaForm(m);
    assert.equal(effect, "applied", text);
    assert.match(text, /^Remembered as 01/);
  }
  const [dup, dupText] = await memorizeViaForm("前端用 React 18 和 TypeScript");
  assert.equal(dup, "no_op");
  assert.match(dupText, /^Already remembered: the same as 01/);
  const [refused, refusedText] = await memorizeViaForm("password=hunter2");
  assert.equal(refused, "rejected");
  assert.match(refusedText, /^Not stored: /);
  // A secret inside a statement is stored redacted, and the page says so in plain words.
  const [, redacted] = await memorizeViaForm("staging 連線字串 postgres://app:s3cretpw@db.internal/app");
  assert.match(redacted, /Secret hidden before storing: /);
  await page.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("6 memories"));
  assert.ok(!(await page.isVisible("#empty-hint")));
  assert.match(await page.textContent("#stats"), /search by words only/);

  // Search: results with score, time and source; the hits are ringed in the graph.
  await page.fill("#query", "資料庫");
  await page.click("#search-form button");
  await page.waitForSelector(".hit");
  const hits = await page.$$eval(".hit", (els) =>
    els.map((e) => ({ id: e.dataset.atom, score: e.querySelector(".score").textContent, meta: e.querySelector(".meta").textContent })),
  );
  assert.ok(hits.length >= 3, JSON.stringify(hits));
  for (const h of hits) {
    assert.match(h.score, /^(0|1)\.\d\d$/);
    assert.match(h.meta, /2026|20\d\d/);
    assert.match(h.meta, /user/);
  }
  const ringed = await page.evaluate(() => window.hmgPage.graph.highlighted());
  assert.deepEqual(ringed.sort(), hits.map((h) => h.id).sort());
  // The kind filter applies to the results (and the graph's facts).
  await page.selectOption("#filter-kind", "lesson");
  await page.waitForSelector("#results .status:has-text('Nothing matches the filters')");
  await page.selectOption("#filter-kind", "");
  await page.waitForSelector(".hit");
  await page.screenshot({ path: join(artifacts, "page-results.png"), fullPage: true });

  // History of the PostgreSQL atom; replace it from the page.
  await page.click(".hit:has-text('PostgreSQL 16')");
  await page.waitForSelector("[data-testid=atom-content]:has-text('PostgreSQL 16')");
  const pg16 = await page.textContent("[data-testid=atom-id]");
  assert.match(await page.textContent("#atom"), /mem0|shop.*uses.*PostgreSQL/s, "the triples it states");
  await page.selectOption("#correct-action", "replace");
  await page.fill("#correct-reason", "已升級到 PostgreSQL 17");
  await page.fill("#correct-new", "專案用 PostgreSQL 17 做主資料庫");
  await page.click("#correct-form button");
  await page.waitForSelector("[data-testid=atom-content]:has-text('PostgreSQL 17')");
  const pg17 = await page.textContent("[data-testid=atom-id]");
  assert.notEqual(pg17, pg16);
  await page.waitForFunction(() => document.querySelector("#correct-status")?.dataset.effect === "applied");
  assert.match(await page.textContent("#correct-status"), /Replaced by a new version/);
  assert.ok(await page.isVisible(`#atom a[data-atom='${pg16}']`), "chain links the superseded atom");
  assert.match(await page.textContent("#atom table"), /已升級到 PostgreSQL 17|PostgreSQL/);

  // A refused correction shows its reason.
  await page.click(`#atom a[data-atom='${pg16}']`);
  await page.waitForSelector(`[data-testid=atom-id]:has-text('${pg16}')`);
  await page.selectOption("#correct-action", "negate");
  await page.fill("#correct-reason", "try");
  await page.click("#correct-form button");
  await page.waitForFunction(() => document.querySelector("#correct-status")?.dataset.effect === "rejected");
  assert.match(await page.textContent("#correct-status"), /^Not done: /);

  // derive_lesson from the page: the secret's history shows the exposure change.
  await page.fill("#query", "資料庫密碼");
  await page.click("#search-form button");
  await page.click(".hit:has-text('女兒生日加貓名')");
  await page.waitForSelector("[data-testid=atom-content]:has-text('女兒生日加貓名')");
  const secret = await page.textContent("[data-testid=atom-id]");
  await page.selectOption("#govern-action", "derive_lesson");
  await page.fill("#govern-reason", "內容含明文資料庫密碼");
  await page.fill("#govern-lesson", "不要在記憶中儲存資料庫密碼，使用環境變數");
  await page.click("#govern-form button");
  await page.waitForSelector("[data-testid=atom-content]:has-text('不要在記憶中儲存資料庫密碼')");
  assert.match(await page.textContent("#govern-status"), /Lesson kept as a new memory; the original content is destroyed/);
  const lesson = await page.textContent("[data-testid=atom-id]");
  await page.click(`#atom a[data-atom='${secret}']`);
  await page.waitForSelector("[data-testid=atom-content]:has-text('governed payload hidden: sealed')");
  assert.match(await page.textContent("#atom"), /visible.*sealed.*內容含明文資料庫密碼/s);
  assert.ok(!(await page.content()).includes("女兒生日加貓名"), "the secret is gone from the page");

  // Stats in plain words; the tooltip names the model and whether storage is persistent.
  await page.waitForFunction(() => document.querySelector("#stats").textContent.startsWith("8 memories · 2 links"));
  assert.match(await page.getAttribute("#stats", "title"), /^model: none: .*\nstorage: (persistent|best-effort)/s);
  assert.equal(typeof (await page.evaluate(() => window.client.persisted)), "boolean");

  // Conversation: a turn in, candidates with confidences out, what was captured.
  await page.fill("#turn", "我叫張三，以後請用中文回覆");
  await page.click("#observe-form button");
  await page.waitForSelector(".candidate");
  const captured = await page.$$eval(".candidate", (els) => els.map((e) => [e.dataset.captured, e.textContent]));
  assert.equal(captured.length, 2, JSON.stringify(captured));
  assert.ok(captured.every(([c]) => c === "true"), JSON.stringify(captured));
  assert.match(captured[0][1], /^0\.93 profile 使用者叫張三/);
  assert.match(captured[1][1], /^0\.86 assistant style 使用者希望助手以後用中文回覆/);
  await page.fill("#turn", "你記得我叫什麼嗎？");
  await page.click("#observe-form button");
  await page.waitForSelector("#observe-result li.status:has-text('reads as question')");

  // The graph: hubs, facts and entities in the seed's colours.
  await page.evaluate(() => window.hmgPage.refresh());
  const kinds = await page.evaluate(() => ({
    hub: window.hmgPage.graph.visibleOf("hub"),
    fact: window.hmgPage.graph.visibleOf("fact"),
    entity: window.hmgPage.graph.visibleOf("entity"),
  }));
  assert.deepEqual(kinds.hub.sort(), ["hub:organisation:acme", "hub:project:shop", "hub:user:local"]);
  assert.equal(kinds.fact.length, 10);
  for (const name of ["PostgreSQL", "React", "TypeScript", "Redis"]) {
    assert.ok(kinds.entity.includes(`entity:${name}`), `${name} in ${kinds.entity}`);
  }
  // MongoDB was named only by the replaced version: it is not current knowledge.
  assert.ok(!kinds.entity.includes("entity:MongoDB"));
  assert.ok(!kinds.entity.some((e) => /REDACTED|connection_string/.test(e)), "redaction markers are no entities");
  const links = await page.evaluate(() => window.hmgPage.graph.visible().links);
  assert.ok(links.some((l) => l.from === pg17 && l.to === pg16 && l.kind === "supersedes"));
  assert.ok(links.some((l) => l.from === lesson && l.to === secret && l.kind === "derived_lesson_from"));
  // The project's triples hang off its hub.
  assert.ok(links.some((l) => l.from === "hub:project:shop" && l.to === "entity:PostgreSQL" && l.kind === "uses"));
  const legend = Object.fromEntries(
    await page.$$eval("#legend span", (els) => els.map((e) => [e.dataset.type, e.querySelector("i").style.background])),
  );
  assert.equal(legend.hub, rgb("#6d28d9"));
  assert.equal(legend.memory, rgb("#2563eb"));
  assert.equal(legend.technology, rgb(PALETTE[djb2("technology") % 10]));
  assert.equal(await page.evaluate(() => window.hmgPage.djb2("technology")), djb2("technology"));

  // Label gates (seed): zoom ≥ 1.5 and ≥ 3000 px² per node on screen, both.
  const fits = (w, hgt, z, n) => page.evaluate(([w, hgt, z, n]) => window.hmgPage.labelsFit(w, hgt, z, n), [w, hgt, z, n]);
  assert.equal(await fits(600, 480, 1.4, 5), false, "too far out");
  assert.equal(await fits(600, 480, 2, 97), false, "too crowded: 2969 px² each");
  assert.equal(await fits(600, 480, 2, 96), true);
  await page.evaluate(() => window.hmgPage.graph.zoom(1));
  assert.equal(await page.evaluate(() => window.hmgPage.graph.labelsShown()), false);
  // Fitted, a small graph is close enough to read.
  await page.evaluate(() => window.hmgPage.graph.settled());
  await page.evaluate(() => window.hmgPage.graph.fit(0));
  await page.waitForTimeout(300);
  assert.ok(await page.evaluate(() => window.hmgPage.graph.zoom()) >= 1.5, "a small graph fits at a reading zoom");
  assert.equal(await page.evaluate(() => window.hmgPage.graph.labelsShown()), true);
  await page.locator("#graph-card").screenshot({ path: join(artifacts, "page-graph.png") });

  // Entity types filter: hide technology, bring it back.
  await page.uncheck("#type-filters input[value=technology]");
  assert.ok(!(await page.evaluate(() => window.hmgPage.graph.visibleOf("entity"))).includes("entity:PostgreSQL"));
  await page.check("#type-filters input[value=technology]");
  assert.ok((await page.evaluate(() => window.hmgPage.graph.visibleOf("entity"))).includes("entity:PostgreSQL"));

  // Path between two entities: drawn and named.
  await page.fill("#path-from", "React");
  await page.fill("#path-to", "postgres");
  await page.click("#path-form button");
  await page.waitForSelector("[data-testid=path-result]:has-text('→')");
  assert.equal(await page.textContent("[data-testid=path-result]"), "React → shop → PostgreSQL");

  // Drill-down: from the project hub alone, a click shows its memories; a
  // click on an entity brings its neighbourhood and opens its panel.
  await page.evaluate(async () => {
    await window.hmgPage.refresh();
    const gr = window.hmgPage.graph;
    gr.load({ atoms: [], edges: [], entities: [], mentions: [], triples: [] }, 0, true);
  });
  await page.evaluate(() => window.hmgPage.refresh());
  await page.evaluate(() => {
    const gr = window.hmgPage.graph;
    gr.expand("hub:project:shop");
  });
  const afterHub = await page.evaluate(() => window.hmgPage.graph.visibleOf("fact"));
  assert.ok(afterHub.includes(pg17), "the project's memories");
  await page.evaluate(() => window.hmgPage.graph.settled());
  await page.evaluate(() => window.hmgPage.graph.fit(0));
  await page.waitForTimeout(300);
  await page.locator("#graph").scrollIntoViewIfNeeded();
  const at = await page.evaluate(() => window.hmgPage.graph.screenOf("entity:Redis"));
  assert.ok(at, "Redis is drawn");
  const box = await page.locator("#graph").boundingBox();
  await page.mouse.move(box.x + at.x - 5, box.y + at.y);
  await page.mouse.move(box.x + at.x, box.y + at.y);
  await page.waitForTimeout(500);
  assert.match(await page.textContent("#graph .float-tooltip-kap"), /technology: Redis/, "hover names the node");
  // force-graph picks the node under the pointer on an animation frame: press, pause, release.
  await page.mouse.down();
  await page.waitForTimeout(50);
  await page.mouse.up();
  await page.waitForSelector("[data-testid=entity-name]:has-text('Redis')");
  assert.equal(await page.evaluate(() => window.hmgPage.graph.clicked), "entity:Redis");
  assert.match(await page.textContent("#atom"), /用 Redis 做會話快取/);

  // Many memories: the newest are shown first, not everything at once.
  const imported = await page.evaluate(async () => {
    const c = window.client;
    const r = await c.import({
      jsonl: (await c.export()).split("\n")[0] + "\n" +
        Array.from({ length: 300 }, (_, i) => JSON.stringify({
          type: "atom", atom_id: `01J${String(i).padStart(23, "0")}`, content: `bulk ${i} uses Kafka`, kind: "observation", source: "agent",
          scope: { tenant_id: "local", workspace: "acme", repository: "shop", branch: "main" }, epistemic: "actual",
          polarity: "affirmative", exposure_state: "visible", negated: false, created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z",
        })).join("\n"),
    });
    await window.hmgPage.refresh();
    return r;
  });
  assert.equal(imported.atoms_added, 300, JSON.stringify(imported));
  const facts = await page.evaluate(() => window.hmgPage.graph.visibleOf("fact").length);
  assert.ok(facts < 310 && facts >= 60, `${facts} facts drawn`);
  assert.deepEqual(page.errors, []);

  // Colours are a function of the type name alone: the same after a reload.
  await page.reload();
  await page.waitForFunction(() => window.hmgReady === true);
  const again = Object.fromEntries(
    await page.$$eval("#legend span", (els) => els.map((e) => [e.dataset.type, e.querySelector("i").style.background])),
  );
  assert.equal(again.technology, legend.technology);
  assert.equal(again.hub, legend.hub);
});

test("the privacy panel sets which personal data the store hides", async () => {
  // Defaults: cards and national IDs hidden, e-mail kept.
  assert.deepEqual(
    await page.$$eval("#privacy input[type=checkbox]", (els) => els.map((e) => [e.id, e.checked])),
    [["pd-payment_cards", true], ["pd-national_ids", true], ["pd-emails", false], ["pd-phones", false]],
  );
  const [, kept] = await memorizeViaForm("週報寄給 pm.lin@example.com，每週五下午");
  assert.doesNotMatch(kept, /hidden before storing/);
  const [, card] = await memorizeViaForm("公司採購卡號 4111 1111 1111 1111 只能買雲端服務");
  assert.match(card, /Personal data hidden before storing: card number\./);

  // Hide e-mail addresses too: Apply reopens the store with the new policy.
  await page.click("#privacy summary");
  await page.check("#pd-emails");
  await Promise.all([page.waitForNavigation(), page.click("#privacy-apply")]);
  await page.waitForFunction(() => window.hmgReady === true);
  assert.ok(await page.isChecked("#pd-emails"), "the choice survives the reload");
  const [effect, hidden] = await memorizeViaForm("季報寄給 cfo.wang@example.com，每季第一週");
  assert.equal(effect, "applied", hidden);
  assert.match(hidden, /Personal data hidden before storing: e-mail address\./);
  const stored = await page.evaluate(async () => {
    const { atoms } = await window.client.recall({ query: "季報" });
    return atoms.map((a) => a.content).join("\n");
  });
  assert.match(stored, /\[REDACTED:email\]/);
  assert.doesNotMatch(stored, /cfo\.wang/);
  // What was stored before the change keeps its text.
  const earlier = await page.evaluate(async () => (await window.client.recall({ query: "週報" })).atoms.map((a) => a.content).join("\n"));
  assert.match(earlier, /pm\.lin@example\.com/);
  assert.deepEqual(page.errors, []);
});
