// Test helpers: the static server and Debian's Chromium driven by
// playwright-core (never a downloaded browser).

import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "../serve.mjs";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const artifacts = process.env.HMG_ARTIFACTS ?? join(root, "test-results");
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
  await page.goto(url + query);
  await page.waitForFunction(() => window.hmgReady === true || window.hmgError, null, { timeout: 60_000 });
  const failed = await page.evaluate(() => window.hmgError);
  if (failed) throw new Error(`page failed: ${failed}`);
  page.errors = errors;
  return page;
}
