// Runs fs-oracle.worker.ts (bundled here with esbuild) in a Chromium Worker:
// the OPFS adapter against a naive in-memory oracle over random operations.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import * as esbuild from "esbuild";
import { launch, newProfile, removeProfile, root, startServer } from "./browser.mjs";

let server, profile, context;

before(async () => {
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
  server = await startServer();
  profile = newProfile();
  context = await launch(profile);
});

after(async () => {
  await context?.close();
  await server?.close();
  removeProfile(profile);
});

test("OPFS adapter equals a naive oracle over random operations", async () => {
  const page = await context.newPage();
  await page.goto(server.url + "__test__/blank.html");
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
