// Runs fs-oracle.worker.ts (bundled here with esbuild) in a Chromium Worker:
// the OPFS adapter against a naive in-memory oracle over random operations.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as esbuild from "esbuild";
import { root, withBrowser } from "./browser.mjs";

const env = withBrowser(async () => {
  const out = join(root, "dist/__test__");
  mkdirSync(out, { recursive: true });
  await esbuild.build({
    entryPoints: [join(root, "test/fs-oracle.worker.ts")],
    outfile: join(out, "fs-oracle.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    logLevel: "warning",
  });
  writeFileSync(join(out, "blank.html"), "<!doctype html><meta charset=utf-8><link rel=icon href='data:,'>");
});

test("OPFS adapter equals a naive oracle over random operations", async () => {
  const page = await env.context.newPage();
  await page.goto(env.server.url + "__test__/blank.html");
  const result = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const w = new Worker("./fs-oracle.js", { type: "module" });
        w.onmessage = (e) => resolve(e.data);
        w.onerror = (e) => resolve({ ok: false, error: e.message });
        w.postMessage({ seeds: Array.from({ length: 40 }, (_, i) => i + 1), cycles: 12, ops: 25 });
      }),
  );
  assert.equal(result.ok, true, result.error);
  assert.equal(result.ops, 40 * 12 * 25);
  assert.ok(result.queued > 1000, `namespace operations exercised: ${result.queued}`);
});
