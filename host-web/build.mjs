// Builds the browser host into dist/: the engine component transpiled by jco
// (same engine.wasm as the native hosts), the Worker, the client module, the
// memory page, and the client's type declarations.
//
//   node build.mjs            (after `cargo build --release --target wasm32-wasip2 -p engine`)
//
// ENGINE_WASM overrides where the component is read from.

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/hmg/target");
const wasm = process.env.ENGINE_WASM ?? join(target, "wasm32-wasip2/release/engine.wasm");
if (!existsSync(wasm)) {
  console.error(`no engine component at ${wasm}: run cargo build --release --target wasm32-wasip2 -p engine`);
  process.exit(1);
}

const gen = join(here, "gen");
const dist = join(here, "dist");
rmSync(gen, { recursive: true, force: true });
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const bin = (name) => join(here, "node_modules/.bin", name);
execFileSync(
  bin("jco"),
  ["transpile", wasm, "-o", gen, "--name", "engine", "--instantiation", "async", "--no-nodejs-compat", "--quiet"],
  { stdio: "inherit" },
);

// Types first: a type error stops the build.
execFileSync(bin("tsc"), ["-p", join(here, "tsconfig.json")], { stdio: "inherit" });

const common = { bundle: true, format: "esm", platform: "browser", target: "es2022", minify: true, sourcemap: true, logLevel: "warning" };
await esbuild.build({ ...common, entryPoints: [join(here, "src/worker.ts")], outfile: join(dist, "hmg-worker.js") });
await esbuild.build({ ...common, entryPoints: [join(here, "src/client.ts")], outfile: join(dist, "hmg.js") });
await esbuild.build({ ...common, entryPoints: [join(here, "src/page.ts")], outfile: join(dist, "page.js") });

for (const name of ["engine.core.wasm", "engine.core2.wasm", "engine.core3.wasm", "engine.core4.wasm"]) {
  cpSync(join(gen, name), join(dist, name));
}
cpSync(join(here, "page"), dist, { recursive: true });
console.log(`built ${dist}`);
