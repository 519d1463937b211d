// The TypeScript client's knowledge-graph and capture calls in Chromium:
// the same shapes the CLI's --json and MCP print (snake_case), scope kept.

import assert from "node:assert/strict";
import { test } from "node:test";
import { call, callError, openPage, withBrowser } from "./browser.mjs";

const env = withBrowser();

test("observe, entities, neighbourhood, path, relate, graph view and recall with the graph", async () => {
  const page = await openPage(env.context, env.server.url, "?store=graph&workspace=acme&repository=shop&branch=main");

  const observed = await call(page, "observe", { turn: "我叫李小明，我喜歡用 TypeScript" });
  assert.deepEqual(Object.keys(observed).sort(), ["candidates", "mode", "redactions", "threshold"]);
  assert.equal(observed.mode, "standard");
  assert.equal(observed.threshold, 0.65);
  assert.deepEqual(
    observed.candidates.map((c) => [c.signal, c.confidence, c.captured, c.effect, c.content]),
    [
      ["profile", 0.93, true, "applied", "使用者叫李小明"],
      ["preference", 0.88, true, "applied", "使用者喜歡用 TypeScript"],
    ],
  );
  const question = await call(page, "observe", { turn: "我是不是該改用 Rust？", mode: "relaxed" });
  assert.deepEqual([question.excluded, question.candidates], ["question", []]);
  const dry = await call(page, "observe", { turn: "I prefer Vim", dry_run: true });
  assert.equal(dry.candidates[0].captured, true);
  assert.equal(dry.candidates[0].atom_id, undefined);
  // An unknown enum value is a refusal, as for correct and govern; a wrong type a malformed call.
  assert.match((await call(page, "observe", { turn: "x", mode: "eager" })).reason, /unknown observe mode `eager` \(one of strict, standard, relaxed\)/);
  assert.match(await callError(page, "observe", { turn: 42 }), /observe: `turn` must be a string/);

  for (const content of ["專案用 PostgreSQL 16 做主資料庫", "PostgreSQL runs on Kubernetes", "Grafana depends on Prometheus, which runs on k8s"]) {
    assert.equal((await call(page, "memorize", { content })).effect, "applied");
  }
  const entities = await call(page, "extractEntities", { text: "前端用 React 和 Postgres，程式碼在 src/app.tsx" });
  assert.deepEqual(entities.entities, [
    { name: "React", type: "technology" },
    { name: "PostgreSQL", type: "technology" },
    { name: "src/app.tsx", type: "file" },
  ]);
  const around = await call(page, "neighborhood", { entity: "postgres", depth: 2 });
  assert.deepEqual(Object.keys(around).sort(), ["edges", "nodes", "truncated"]);
  assert.ok(around.nodes.some((n) => n.name === "Kubernetes" && n.type === "technology" && n.atom_count === 2));
  const edge = around.edges.find((e) => e.relation === "uses");
  assert.deepEqual(Object.keys(edge).sort(), ["atom_id", "relation", "source", "target", "valid_at"]);
  const path = await call(page, "shortestPath", { from: "Grafana", to: "PostgreSQL" });
  assert.equal(path.found, true);
  // Grafana and Kubernetes are named together, so two hops suffice.
  assert.deepEqual(path.nodes.map((n) => n.name), ["Grafana", "Kubernetes", "PostgreSQL"]);
  assert.deepEqual(path.edges.map((e) => e.relation), ["co_occurs_with", "located_in"]);
  const related = await call(page, "relate", { source: "payment-service", relation: "depends_on", target: "Redis", target_type: "technology" });
  assert.equal(related.effect, "applied");
  const view = await call(page, "graphView", { types: ["technology"] });
  assert.ok(view.nodes.every((n) => n.type === "technology"), JSON.stringify(view.nodes));
  assert.ok(view.mentions.some((m) => m.entity === "Redis" && m.atom_id === related.atom_id));
  const r = await call(page, "recall", { query: "k8s", include_graph: true });
  assert.ok(r.atoms.length > 0);
  assert.equal(r.graph.nodes[0].name, "Kubernetes");
  // Another scope sees none of it.
  const other = await openPage(env.context, env.server.url, "?store=graph&workspace=acme&repository=blog&branch=main");
  assert.match((await call(other, "neighborhood", { entity: "PostgreSQL" })).reason, /no entity/);
  assert.deepEqual(page.errors, []);
});
