// The TypeScript side follows wit/hmg.wit: the contract build.mjs derives
// from jco's declarations holds exactly the WIT's enums and records, and a
// variant the WIT gains that the page does not handle fails the type check.
// (No browser: plain Node.)

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const wit = readFileSync(join(here, "../wit/hmg.wit"), "utf8");
const { ENUMS, RECORDS, METHODS } = await import(join(here, "gen/contract.js"));

const pascal = (kebab) => kebab.split("-").map((p) => p[0].toUpperCase() + p.slice(1)).join("");

test("the contract holds every enum, record and method of the WIT", () => {
  const witEnums = {};
  for (const [, name, body] of wit.matchAll(/^\s*enum ([\w-]+) \{([^}]*)\}/gm)) {
    const cases = body
      .split("\n")
      .map((l) => l.replace(/\/\/.*$/, ""))
      .join(" ")
      .split(",")
      .map((c) => c.trim())
      .filter(Boolean);
    witEnums[pascal(name)] = cases.map((c) => c.replaceAll("-", "_"));
  }
  assert.ok(Object.keys(witEnums).length >= 7, JSON.stringify(witEnums));
  assert.deepEqual(ENUMS, witEnums);

  for (const [, name, body] of wit.matchAll(/^\s*record ([\w-]+) \{([^}]*)\}/gm)) {
    const fields = [...body.matchAll(/^\s*%?([\w-]+):/gm)].map((m) => m[1].replaceAll("-", "_"));
    assert.deepEqual(
      RECORDS[pascal(name)].map((f) => f.name),
      fields,
      name,
    );
  }
  const resource = wit.slice(wit.indexOf("resource store {"));
  for (const [, name] of resource.matchAll(/^\s*%?([\w-]+): func/gm)) {
    const camel = name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
    assert.ok(METHODS[camel], `method ${name} missing from the contract`);
  }
});

test("a govern action the page does not know fails the type check", () => {
  // Inside host-web, so that node_modules resolves as for the real sources.
  const work = mkdtempSync(join(here, ".contract-check-"));
  try {
    for (const dir of ["src", "gen"]) cpSync(join(here, dir), join(work, dir), { recursive: true });
    const config = JSON.parse(readFileSync(join(here, "tsconfig.json"), "utf8"));
    config.compilerOptions = { ...config.compilerOptions, noEmit: true, declaration: false, emitDeclarationOnly: false };
    writeFileSync(join(work, "tsconfig.json"), JSON.stringify(config));
    const tsc = join(here, "node_modules/.bin/tsc");
    const check = () => {
      try {
        execFileSync(tsc, ["-p", join(work, "tsconfig.json")], { encoding: "utf8" });
        return "";
      } catch (e) {
        return e.stdout;
      }
    };
    assert.equal(check(), "", "the unchanged sources type-check");
    const types = join(work, "gen/interfaces/hmg-memory-types.d.ts");
    writeFileSync(types, readFileSync(types, "utf8").replace("'derive-lesson';", "'derive-lesson' | 'archive';"));
    const contract = join(work, "gen/contract.d.ts");
    writeFileSync(contract, readFileSync(contract, "utf8").replace('"derive_lesson"]', '"derive_lesson", "archive"]'));
    const errors = check();
    assert.match(errors, /page\.ts.*archive/s, errors);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
