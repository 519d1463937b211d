#!/usr/bin/env bash
# Wall time of `hmg recall` from a fresh process on a store of N atoms:
# keyword-only (--model none), with the model loaded from its files each
# time, and with the pre-initialised engine (`hmg prepare`), each over RUNS
# runs; plus the very first run (compiles the component into an empty cache).
#   benches/cli-wall-time.sh [N=1000] [RUNS=30]
set -euo pipefail
n="${1:-1000}"; runs="${2:-30}"
hmg="${HMG_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/hmg/target}/release/hmg}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
model="${HMG_MODEL:-$HOME/.cache/hmg/model/e5-small-v2}"
export HMG_STORE="$work/store" HMG_CACHE_DIR="$work/cache" HMG_TENANT=bench HMG_MODEL="$model"
flags=(--workspace acme --repository shop --branch main)
python3 - "$n" > "$work/atoms.jsonl" <<'PY'
import json, sys
topics = "PostgreSQL Redis Kafka React TypeScript ECS K8s Stripe OAuth gRPC 資料庫 快取 部署 認證 監控 日誌".split()
alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def ulid(v): return "".join(alphabet[(v >> (5 * (25 - k))) & 31] for k in range(26))
scope = {"tenant_id": "bench", "workspace": "acme", "repository": "shop", "branch": "main"}
for i in range(1, int(sys.argv[1]) + 1):
    print(json.dumps({"type": "atom", "atom_id": ulid((1793491200000 << 80) | i),
        "content": f"decision {i}: use {topics[i % len(topics)]} for component {i}", "kind": "memory",
        "source": "agent", "scope": scope, "epistemic": "actual", "polarity": "affirmative",
        "exposure_state": "visible", "negated": False, "superseded_by": None,
        "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:00:00Z"}, ensure_ascii=False))
PY
ms() { python3 -c 'import sys,time,subprocess;t=time.perf_counter();subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,check=True);print(f"{(time.perf_counter()-t)*1000:.1f}")' "$@"; }
start=$(date +%s.%N)
"$hmg" "${flags[@]}" import "$work/atoms.jsonl" >/dev/null  # embeds every atom (batched) inside the component
echo "imported $n atoms with embeddings in $(python3 -c "print(f'{$(date +%s.%N)-$start:.1f}')") s"
rm -rf "$work/cache"
echo "recall, first run (compiles, empty cache, keyword-only): $(ms "$hmg" "${flags[@]}" --model none recall "Redis 快取") ms"
series() {
  local label="$1"; shift
  local times=(); for _ in $(seq 1 "$runs"); do times+=("$(ms "$hmg" "${flags[@]}" "$@" recall "Redis 快取")"); done
  printf '%s\n' "${times[@]}" | sort -n | awk -v l="$label" '{a[NR]=$1} END {printf "recall, %s (%d runs): median %.1f ms, p90 %.1f ms\n", l, NR, a[int((NR+1)/2)], a[int(NR*0.9)]}'
}
series "keyword-only" --model none
series "model loaded from files" 
"$hmg" prepare >&2
series "pre-initialised engine"
echo "store: $("$hmg" "${flags[@]}" stats --all --json), $(du -sk "$HMG_STORE" | cut -f1) KiB on disk"
