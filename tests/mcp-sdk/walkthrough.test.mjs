// The seed walk-through against the real `hmg-mcp` binary, driven by the
// official MCP TypeScript SDK over stdio. HMG_MCP_BIN names the binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const bin = process.env.HMG_MCP_BIN;
assert.ok(bin, "set HMG_MCP_BIN to the hmg-mcp binary");

/** A git checkout of mem0ai/mem0 on main, and an empty store. */
function workspace() {
  const root = mkdtempSync(join(tmpdir(), "hmg-mcp-sdk-"));
  const repo = join(root, "mem0");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(repo, ".git", "config"), '[remote "origin"]\n\turl = git@github.com:mem0ai/mem0.git\n');
  return { repo, store: join(root, "store") };
}

async function connect({ repo, store }) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["--store", store],
    cwd: repo,
    env: { ...process.env, HMG_TENANT: "qiankun" },
    stderr: "pipe",
  });
  const client = new Client({ name: "hmg-sdk-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client, name, args = {}) {
  const r = await client.callTool({ name, arguments: args });
  assert.notEqual(r.isError, true, `${name} ${JSON.stringify(args)} -> ${JSON.stringify(r)}`);
  assert.equal(r.content[0].type, "text");
  return r.structuredContent;
}

function filesContaining(dir, needle) {
  return readdirSync(dir).filter((f) => readFileSync(join(dir, f)).includes(needle));
}

test("seed walk-through over MCP", async (t) => {
  const ws = workspace();
  const client = await connect(ws);
  t.after(() => client.close()); // a failed assertion must not leave the server running
  assert.equal(client.getServerVersion().name, "hmg-mcp");

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.deepEqual(Object.keys(byName).sort(), [
    "memory_correct", "memory_govern", "memory_graph", "memory_handoff", "memory_memorize", "memory_observe",
    "memory_recall", "memory_stats",
  ]);
  assert.deepEqual(byName.memory_memorize.inputSchema.required, ["content"]);
  assert.deepEqual(byName.memory_correct.inputSchema.required.sort(), ["action", "reason", "target_atom"]);
  for (const t of tools) assert.ok(t.description.length > 40, `${t.name} needs a real description`);

  const m = await call(client, "memory_memorize", { content: "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB", source: "user" });
  assert.equal(m.effect, "applied");
  const pg16 = m.atom_id;
  assert.match(pg16, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  const dup = await call(client, "memory_memorize", { content: "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB" });
  assert.deepEqual([dup.effect, dup.deduped_with], ["no_op", pg16]);

  for (const query of ["資料庫選型", "数据库选型", "我們資料庫用的什麼來著？"]) {
    const r = await call(client, "memory_recall", { query });
    assert.equal(r.atoms[0].atom_id, pg16, query);
    assert.ok(r.atoms[0].score > 0 && r.atoms[0].score <= 1);
    assert.equal(r.atoms[0].source, "user");
    assert.match(r.atoms[0].created_at, /Z$/);
  }

  const rep = await call(client, "memory_correct", {
    target_atom: pg16, action: "replace", reason: "已升級到 PostgreSQL 17", new_content: "專案用 PostgreSQL 17 做主資料庫",
  });
  assert.equal(rep.effect, "applied");
  const pg17 = rep.new_atom_id;
  const after = await call(client, "memory_recall", { query: "PostgreSQL 主資料庫" });
  assert.equal(after.atoms[0].atom_id, pg17);
  assert.ok(!after.atoms.some((a) => a.atom_id === pg16));
  const stale = await call(client, "memory_correct", { target_atom: pg16, action: "replace", reason: "x", new_content: "y" });
  assert.equal(stale.effect, "rejected");
  assert.match(stale.reason, /head/);

  const mongo = (await call(client, "memory_memorize", { content: "用 MongoDB 做會話快取" })).atom_id;
  assert.equal((await call(client, "memory_correct", { target_atom: mongo, action: "negate", reason: "MongoDB 快取方案已廢棄，改用 Redis" })).effect, "applied");
  const hidden = await call(client, "memory_recall", { query: "MongoDB 會話快取" });
  assert.ok(!hidden.atoms.some((a) => a.atom_id === mongo));
  const negated = await call(client, "memory_recall", { query: "MongoDB 會話快取", include_negated: true });
  assert.equal(negated.atoms[0].atom_id, mongo);
  const back = await call(client, "memory_correct", {
    target_atom: mongo, action: "replace", reason: "negate 有誤", new_content: "用 MongoDB 做會話快取，仍在使用",
  });
  assert.equal((await call(client, "memory_recall", { query: "MongoDB 會話快取" })).atoms[0].atom_id, back.new_atom_id);

  const kong = (await call(client, "memory_memorize", { content: "考慮 API 閘道器用 Kong" })).atom_id;
  for (const [action, effect] of [
    ["confirm_actual", "applied"], ["confirm_actual", "rejected"], ["confirm_necessary", "applied"],
    ["confirm_actual", "rejected"], ["demote", "applied"], ["demote", "rejected"],
  ]) {
    assert.equal((await call(client, "memory_correct", { target_atom: kong, action, reason: "ladder" })).effect, effect, action);
  }

  const red = await call(client, "memory_memorize", { content: "staging 連線 postgres://admin:s3cr3t@db:5432/app" });
  assert.equal(red.effect, "applied");
  assert.equal((await call(client, "memory_memorize", { content: "Bearer abcdefghijklmnop1234" })).effect, "rejected");
  assert.deepEqual(filesContaining(ws.store, "s3cr3t"), []);

  const secret = (await call(client, "memory_memorize", { content: "資料庫密碼是 女兒生日加貓名" })).atom_id;
  const lesson = await call(client, "memory_govern", {
    target_atom: secret, action: "derive_lesson", reason: "內容含明文資料庫密碼",
    lesson_content: "不要在記憶中儲存資料庫密碼和連線串，使用環境變數",
  });
  assert.equal(lesson.effect, "applied");
  assert.ok(lesson.lesson_atom_id);
  assert.deepEqual(filesContaining(ws.store, "女兒生日加貓名"), []);
  assert.equal((await call(client, "memory_recall", { query: "資料庫密碼" })).atoms[0].atom_id, lesson.lesson_atom_id);

  const k8s = (await call(client, "memory_memorize", { content: "用 K8s 部署" })).atom_id;
  assert.equal((await call(client, "memory_govern", { target_atom: k8s, action: "quarantine", reason: "待確認" })).effect, "applied");
  assert.ok(!(await call(client, "memory_recall", { query: "K8s 部署" })).atoms.some((a) => a.atom_id === k8s));
  assert.equal((await call(client, "memory_govern", { target_atom: k8s, action: "restore", reason: "確認" })).effect, "applied");
  assert.equal((await call(client, "memory_govern", { target_atom: k8s, action: "tombstone", reason: "不再需要" })).effect, "applied");

  const handoff = await call(client, "memory_handoff", {
    summary: "修復了 login.py 的空指標問題。根因是 session 過期時 get_session() 返回 None。下一步：補整合測試。",
  });
  assert.equal(handoff.effect, "applied");

  const stats = await call(client, "memory_stats");
  assert.deepEqual(Object.keys(stats).sort(), ["atoms", "edges", "indexes", "kept_aside", "model", "snapshot_version"]);
  assert.match(stats.model, /^multilingual-e5-small:/);
  assert.equal(stats.indexes.semantic, stats.indexes.keyword);
  assert.deepEqual(Object.keys(stats.indexes).sort(), ["categorical", "keyword", "semantic", "temporal"]);
  assert.equal(stats.atoms, 10);

  // Latency per call, median of 40 (reported, not asserted).
  const median = async (fn) => {
    const times = [];
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      await fn(i);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return times[20].toFixed(2);
  };
  const recallMs = await median(() => call(client, "memory_recall", { query: "資料庫選型" }));
  const memorizeMs = await median((i) => call(client, "memory_memorize", { content: `latency probe number ${i}` }));
  console.log(`hmg-mcp per-call latency over stdio (median of 40): recall ${recallMs} ms, memorize ${memorizeMs} ms`);
});

test("two servers and the CLI share one store without loss", async (t) => {
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const run = promisify(execFile);
  const cli = process.env.HMG_BIN;
  assert.ok(cli, "set HMG_BIN to the hmg binary");
  const ws = workspace();
  const [a, b] = [await connect(ws), await connect(ws)];
  t.after(() => Promise.all([a.close(), b.close()]));
  const write = async (client, name, n) => {
    const ids = [];
    for (let i = 0; i < n; i++) {
      const r = await call(client, "memory_memorize", { content: `${name} wrote memory number ${i}` });
      assert.equal(r.effect, "applied");
      ids.push(r.atom_id);
    }
    return ids;
  };
  const viaCli = async (n) => {
    const ids = [];
    for (let i = 0; i < n; i++) {
      const { stdout } = await run(cli, ["--store", ws.store, "--json", "memorize", `cli wrote memory number ${i}`], {
        cwd: ws.repo, env: { ...process.env, HMG_TENANT: "qiankun" },
      });
      ids.push(JSON.parse(stdout).atom_id);
    }
    return ids;
  };
  const [ia, ib, ic] = await Promise.all([write(a, "alpha", 40), write(b, "beta", 40), viaCli(10)]);
  // Each server sees the others' writes on its next call.
  for (const client of [a, b]) {
    const stats = await call(client, "memory_stats");
    assert.equal(stats.atoms, 90);
    assert.equal(stats.snapshot_version, 90);
  }
  assert.equal((await call(a, "memory_recall", { query: "beta wrote memory number 7" })).atoms[0].atom_id, ib[7]);
  assert.equal((await call(b, "memory_recall", { query: "cli wrote memory number 3" })).atoms[0].atom_id, ic[3]);
  assert.equal((await call(b, "memory_recall", { query: "alpha wrote memory number 39" })).atoms[0].atom_id, ia[39]);
  const { stdout } = await run(cli, ["--store", ws.store, "export"], { cwd: ws.repo, env: { ...process.env, HMG_TENANT: "qiankun" } });
  for (const id of [...ia, ...ib, ...ic]) assert.ok(stdout.includes(id), `${id} lost`);
  // The session-start hook sees the same store.
  await call(a, "memory_handoff", { summary: "alpha finished the migration; next: clean up" });
  const hook = await run(cli, ["--store", ws.store, "hook", "session-start"], { cwd: ws.repo, env: { ...process.env, HMG_TENANT: "qiankun" } });
  const out = JSON.parse(hook.stdout);
  assert.equal(out.hookSpecificOutput.hookEventName, "SessionStart");
  assert.match(out.hookSpecificOutput.additionalContext, /alpha finished the migration/);
});
