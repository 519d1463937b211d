"""Peak memory of a real hmg-mcp serving a large store (issue 15).

    python3 benches/mcp-rss.py STORE_DIR [TENANT]     (after ./setup.sh --build)

Copies STORE_DIR (e.g. ~/.cache/hmg/bench/scale-100000, built by
`cargo run --release -p hmg-benches --bin scale`) to a temporary directory,
starts hmg-mcp on the copy with the model (tenant TENANT, default `bench`,
the scale stores' tenant, from a git checkout of acme/shop on main, their
scope), sends nine recalls (the first five semantic searches of a process go
over the rows, the sixth builds the vector index), then 30 more
memory_recall (10 queries, 3 rounds, timed as a warm server's) and 10
memory_memorize calls one at a time, and prints the server's peak and current resident
memory (VmHWM / VmRSS from /proc) with each phase's median call time (and
the recalls' 95th percentile).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/hmg/target"))
# Each query is recalled this many times (a repeated query is embedded again:
# the server keeps no cache of query embeddings).
ROUNDS = 3
# engine::index::UNINDEXED_SEARCHES: semantic searches of a process that go
# over the rows before one builds the vector index.
UNINDEXED = 5
ORDINAL = ["", "first", "second", "third", "fourth", "fifth", "sixth", "seventh"]
QUERIES = ["database choice", "資料庫選型", "what did Caroline research", "我們部署在哪裡？",
           "How long do access tokens last?", "cache key prefix", "誰負責值班", "error response format",
           "日誌保留多久？", "support group"]


def status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            fields[key] = int(value.split()[0]) // 1024
    return fields


def main():
    source = Path(sys.argv[1]).expanduser()
    tenant = sys.argv[2] if len(sys.argv) > 2 else "bench"
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(source, store)
        env = dict(os.environ, HMG_TENANT=tenant)
        # The scale stores' scope is acme/shop@main: the server infers it
        # from the git checkout it runs in.
        work = Path(tmp) / "shop"
        work.mkdir()
        for args in (["init", "-q", "-b", "main"], ["remote", "add", "origin", "https://example.com/acme/shop.git"]):
            subprocess.run(["git", *args], cwd=work, check=True)
        mcp = subprocess.Popen([str(TARGET / "release/hmg-mcp"), "--store", str(store), "--timeout-ms", "600000"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=work, text=True, bufsize=1, env=env)
        ids = iter(range(1, 10**6))

        def call(method, params):
            i = next(ids)
            mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
            started = time.perf_counter()
            while True:
                reply = json.loads(mcp.stdout.readline())
                if reply.get("id") == i:
                    assert "error" not in reply, reply
                    return (time.perf_counter() - started) * 1000, reply

        started = time.perf_counter()
        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "rss", "version": "1"}})
        mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        first, reply = call("tools/call", {"name": "memory_recall", "arguments": {"query": "deploy target"}})
        hits = len(reply["result"].get("structuredContent", {}).get("atoms", []))
        print(f"start + first recall: {(time.perf_counter() - started) * 1000:.0f} ms ({first:.0f} ms the call, {hits} results)")
        # The first UNINDEXED semantic searches go over the rows; the next
        # builds the index (docs/SEMANTICS.md).
        rows = [call("tools/call", {"name": "memory_recall", "arguments": {"query": q}})[0]
                for q in ["rollback plan", "retry budget", "feature flags", "log levels"][:UNINDEXED - 1]]
        print(f"second to {ORDINAL[UNINDEXED]} recall (over the rows, means kept from the first): "
              f"{', '.join(f'{m:.0f}' for m in rows)} ms")
        # The next builds the index, the ones after it use it: the recalls
        # timed below are a warm server's.
        more = [call("tools/call", {"name": "memory_recall", "arguments": {"query": q}})[0]
                for q in ["release checklist", "on-call rota", "backup schedule", "queue retention"]]
        print(f"{ORDINAL[UNINDEXED + 1]} recall (builds the vector index), the next three: "
              f"{', '.join(f'{m:.0f}' for m in more)} ms")
        recalls = [call("tools/call", {"name": "memory_recall", "arguments": {"query": q}})[0]
                   for _ in range(ROUNDS) for q in QUERIES]
        after_recall = status(mcp.pid)
        memorizes = [call("tools/call", {"name": "memory_memorize", "arguments": {
            "content": f"decision {i}: service {i % 13} keeps its queue for {i % 9} days"}})[0] for i in range(10)]
        after = status(mcp.pid)
        mcp.stdin.close()
        mcp.wait()
    p95 = sorted(recalls)[len(recalls) * 95 // 100]
    print(f"recall p50 {statistics.median(recalls):.1f} ms, p95 {p95:.1f} ms ({len(recalls)} calls); "
          f"memorize p50 {statistics.median(memorizes):.1f} ms")
    print(f"after recalls: VmRSS {after_recall['VmRSS']} MB; after memorizes: VmRSS {after['VmRSS']} MB; "
          f"peak (VmHWM) {after['VmHWM']} MB")


if __name__ == "__main__":
    main()
