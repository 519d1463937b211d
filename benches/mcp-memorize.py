"""Memorize throughput through a real hmg-mcp server with the model (issue 15).

    python3 benches/mcp-memorize.py [N [STORE]]     (after ./setup.sh --build)

Starts hmg-mcp on a fresh store (or on a copy of STORE), sends N
memory_memorize calls pipelined (all written before the first answer is
read), and prints memorizes per second from the first request to the last
answer, and the server's peak memory (VmHWM). On a machine with a second
core the server embeds queued writes in a second instance; `taskset -c 0`
shows one core.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/hmg/target"))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        if len(sys.argv) > 2:
            shutil.copytree(sys.argv[2], store)
        mcp = subprocess.Popen([str(TARGET / "release/hmg-mcp"), "--store", store, "--timeout-ms", "600000"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=tmp, text=True, bufsize=1)
        send = lambda msg: mcp.stdin.write(json.dumps(msg) + "\n")
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rate", "version": "1"}}})
        json.loads(mcp.stdout.readline())
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # One call first: the model is mapped and warm before timing.
        send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "memory_memorize", "arguments": {"content": "warm-up: the deploy target is ECS"}}})
        json.loads(mcp.stdout.readline())
        started = time.perf_counter()
        for i in range(n):
            send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {
                "name": "memory_memorize",
                "arguments": {"content": f"decision {i}: service {i % 13} keeps its queue for {i % 9} days"}}})
        applied = 0
        for _ in range(n):
            reply = json.loads(mcp.stdout.readline())
            applied += '"applied"' in json.dumps(reply)
        secs = time.perf_counter() - started
        with open(f"/proc/{mcp.pid}/status") as f:
            peak = next(int(l.split()[1]) // 1024 for l in f if l.startswith("VmHWM"))
        mcp.stdin.close()
        mcp.wait()
    print(f"{n} memorize calls through hmg-mcp: {secs:.1f} s, {n / secs:.1f}/s ({applied} applied), peak RSS {peak} MB")


if __name__ == "__main__":
    main()
