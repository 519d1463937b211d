// Property test of the OPFS adapter (src/opfs-fs.ts) against a naive oracle:
// random file operations through the wasi:filesystem descriptors, in cycles
// of attach → operations → drain → detach, mirrored on a Map of byte arrays.
// Every read, size and listing during a cycle must equal the oracle's, and
// after each drain the OPFS directory, read back through the async File API,
// must equal it byte for byte. Bundled and run in Chromium by
// fs-oracle.test.mjs.

import { OpfsDirectory, opfsAdapter } from "../src/opfs-fs.js";

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ["log-1.hmg", "snap-2.hmg", "snap-2.hmg.tmp", "a", "b"];

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function check(seed: number, cycles: number, opsPerCycle: number) {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: T[]) => xs[int(xs.length)];
  let root = await navigator.storage.getDirectory();
  await root.removeEntry(`fs-oracle-${seed}`, { recursive: true }).catch(() => {});
  root = await root.getDirectoryHandle(`fs-oracle-${seed}`, { create: true });
  const dir = new OpfsDirectory(root);
  const d = opfsAdapter.getRoot(dir);
  const model = new Map<string, Uint8Array>();
  const log: string[] = [];
  const fail = (what: string) => {
    throw new Error(`seed ${seed}: ${what}\nlast ops:\n${log.slice(-15).join("\n")}`);
  };
  const open = (name: string, create: boolean) => d.openAt({}, name, { create }, { read: true, write: true });
  let ops = 0;

  for (let cycle = 0; cycle < cycles; cycle++) {
    await dir.attach();
    log.push(`-- cycle ${cycle}`);
    for (let i = 0; i < opsPerCycle; i++) {
      ops++;
      const name = pick(NAMES);
      const have = model.get(name);
      switch (int(8)) {
        case 0:
        case 1: {
          // pwrite (creating the file if needed), sometimes past the end.
          const at = int((have?.length ?? 0) + 8);
          const bytes = crypto.getRandomValues(new Uint8Array(int(64)));
          log.push(`write ${name} @${at} +${bytes.length}`);
          open(name, true).write(bytes, BigInt(at));
          const next = new Uint8Array(Math.max(have?.length ?? 0, at + bytes.length));
          if (have) next.set(have);
          next.set(bytes, at);
          model.set(name, next);
          break;
        }
        case 2: {
          if (!have) break;
          const bytes = crypto.getRandomValues(new Uint8Array(1 + int(40)));
          log.push(`append ${name} +${bytes.length}`);
          const stream = open(name, false).appendViaStream();
          stream.checkWrite();
          stream.write(bytes);
          const next = new Uint8Array(have.length + bytes.length);
          next.set(have);
          next.set(bytes, have.length);
          model.set(name, next);
          break;
        }
        case 3: {
          if (!have) break;
          const size = int(have.length + 16);
          log.push(`truncate ${name} ${size}`);
          open(name, false).setSize(BigInt(size));
          const next = new Uint8Array(size);
          next.set(have.subarray(0, Math.min(size, have.length)));
          model.set(name, next);
          break;
        }
        case 4: {
          if (!have) {
            let code = "";
            try {
              open(name, false);
            } catch (e) {
              code = String(e);
            }
            if (code !== "no-entry") fail(`open of missing ${name}: ${code || "succeeded"}`);
            break;
          }
          const at = int(have.length + 4);
          const len = int(80);
          const [bytes] = open(name, false).read(BigInt(len), BigInt(at));
          log.push(`read ${name} @${at} ${len}`);
          if (!equal(bytes, have.subarray(at, at + len))) fail(`read ${name} @${at} ${len}: differs`);
          break;
        }
        case 5: {
          if (!have) break;
          const to = pick(NAMES);
          log.push(`rename ${name} -> ${to}`);
          d.renameAt(name, d, to);
          model.delete(name);
          model.set(to, have);
          break;
        }
        case 6: {
          log.push(`remove ${name}`);
          let code = "";
          try {
            d.unlinkFileAt(name);
          } catch (e) {
            code = String(e);
          }
          if (have ? code !== "" : code !== "no-entry") fail(`remove ${name}: '${code}'`);
          model.delete(name);
          break;
        }
        case 7: {
          if (have) {
            open(name, false).sync();
            const size = Number(d.statAt({}, name).size);
            if (size !== have.length) fail(`size of ${name}: ${size} != ${have.length}`);
          }
          const listed: string[] = [];
          const entries = d.readDirectory();
          for (let e = entries.readDirectoryEntry(); e; e = entries.readDirectoryEntry()) listed.push(e.name);
          const want = [...model.keys()].sort();
          if (listed.join() !== want.join()) fail(`listing ${listed} != ${want}`);
          break;
        }
      }
    }
    await dir.drain();
    dir.detach();
    // What OPFS holds now, through the async API, must be the oracle.
    const onDisk = new Map<string, Uint8Array>();
    for await (const [name, handle] of (root as any).entries() as AsyncIterable<[string, FileSystemFileHandle]>) {
      onDisk.set(name, new Uint8Array(await (await handle.getFile()).arrayBuffer()));
    }
    const names = [...onDisk.keys()].sort().join();
    if (names !== [...model.keys()].sort().join()) fail(`after drain, OPFS has [${names}], oracle [${[...model.keys()].sort()}]`);
    for (const [name, bytes] of model) {
      if (!equal(onDisk.get(name)!, bytes)) fail(`after drain, ${name} differs (${onDisk.get(name)!.length} vs ${bytes.length} bytes)`);
    }
  }
  await (await navigator.storage.getDirectory()).removeEntry(`fs-oracle-${seed}`, { recursive: true });
  return { ops, counters: dir.counters };
}

self.onmessage = async (event: MessageEvent<{ seeds: number[]; cycles: number; ops: number }>) => {
  const { seeds, cycles, ops } = event.data;
  try {
    let total = 0;
    let queued = 0;
    for (const seed of seeds) {
      const r = await check(seed, cycles, ops);
      total += r.ops;
      queued += r.counters.queued;
    }
    self.postMessage({ ok: true, ops: total, queued });
  } catch (e) {
    self.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
