// Test helpers: the static server and Debian's Chromium driven by
// playwright-core (never a downloaded browser).

import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "../serve.mjs";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const artifacts = process.env.HMG_ARTIFACTS ?? join(root, "../tests/artifacts/browser");
mkdirSync(artifacts, { recursive: true });

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Serves dist/ on 127.0.0.1; returns { url, close }. */
export async function startServer() {
  const server = await serve(join(root, "dist"), 0);
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** A fresh browser profile directory. */
export function newProfile() {
  return mkdtempSync(join(tmpdir(), "hmg-chromium-"));
}

export function removeProfile(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** Chromium on a persistent profile (OPFS lives in the profile). */
export async function launch(profile) {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
}

/** Opens the page and waits until its client is ready. */
export async function openPage(context, url, query = "") {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  // Keyword-only unless a test asks for the model (loading it takes seconds).
  if (!query.includes("model=")) query += (query ? "&" : "?") + "model=none";
  await page.goto(url + query);
  await page.waitForFunction(() => window.hmgReady === true || window.hmgError, null, { timeout: 60_000 });
  const failed = await page.evaluate(() => window.hmgError);
  if (failed) throw new Error(`page failed: ${failed}`);
  page.errors = errors;
  return page;
}

/** Calls `client[method](args)` in the page (the TypeScript client in Chromium). */
export function call(page, method, args) {
  return page.evaluate(([m, a]) => window.client[m](a), [method, args]);
}

/** Like `call`, but returns the rejection's message instead of throwing. */
export function callError(page, method, args) {
  return page.evaluate(([m, a]) => window.client[m](a).then(() => null, (e) => e.message), [method, args]);
}

/** Names of the store's OPFS files that contain `needle` (UTF-8). */
export function opfsFilesContaining(page, store, needle) {
  return page.evaluate(
    async ([store, needle]) => {
      const want = new TextEncoder().encode(needle);
      let dir = await navigator.storage.getDirectory();
      dir = await (await dir.getDirectoryHandle("hmg")).getDirectoryHandle(store);
      const hits = [];
      for await (const [name, handle] of dir.entries()) {
        const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
        outer: for (let i = 0; i + want.length <= bytes.length; i++) {
          for (let j = 0; j < want.length; j++) if (bytes[i + j] !== want[j]) continue outer;
          hits.push(name);
          break;
        }
      }
      return hits;
    },
    [store, needle],
  );
}

/** The store's OPFS file names. */
export function opfsFiles(page, store) {
  return page.evaluate(async (store) => {
    let dir = await navigator.storage.getDirectory();
    dir = await (await dir.getDirectoryHandle("hmg")).getDirectoryHandle(store);
    const names = [];
    for await (const name of dir.keys()) names.push(name);
    return names.sort();
  }, store);
}
