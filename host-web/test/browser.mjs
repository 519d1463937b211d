// Test helpers: the static server and Debian's Chromium driven by
// playwright-core (never a downloaded browser).

import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";
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

/**
 * Registers the suite's hooks: `setup` (if any), then the server and Chromium
 * on a fresh profile, then `launched(env)` (if any); all of it is closed and
 * removed after the suite. The returned object holds `server` and `context`
 * once the hooks have run.
 */
export function withBrowser(setup, launched) {
  const env = {};
  before(async () => {
    await setup?.();
    env.server = await startServer();
    env.profile = newProfile();
    env.context = await launch(env.profile);
    await launched?.(env);
  });
  after(async () => {
    await env.context?.close();
    await env.server?.close();
    if (env.profile) removeProfile(env.profile);
  });
  return env;
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

/** The ids of every atom in the page's store (its whole-store export), sorted. */
export async function atomIds(page) {
  return (await call(page, "export", { all: true }))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === "atom")
    .map((l) => l.atom_id)
    .sort();
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
