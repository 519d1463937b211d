#!/usr/bin/env bash
# Fuzzes the engine: each target in fuzz_targets/ for SECONDS (default 60),
# seeded from real store files, an export and sample texts. Prints the
# executions per target; any input that breaks an invariant is copied to
# regressions/<target>/ (replayed by `cargo test -p engine` ever after) and
# the script exits 1.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(log_files import redact tokenize operations)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export CARGO_TARGET_DIR="${HMG_FUZZ_TARGET_DIR:-$HOME/.cache/hmg/fuzz-target}"

# Seeds (regenerated each run, not committed).
fixtures=../engine/tests/fixtures/v1
mkdir -p seeds/log_files seeds/import seeds/redact seeds/tokenize seeds/operations
python3 - "$fixtures" <<'PY'
import struct, sys, pathlib
fx = pathlib.Path(sys.argv[1])
snap = (fx / "snap-0000000000000001.hmg").read_bytes()
log = (fx / "log-0000000000000001.hmg").read_bytes()
# log_files: [split u16][snapshot][log] as generation 1; the fixture's log
# is generation 1 too.
pathlib.Path("seeds/log_files/v1").write_bytes(struct.pack("<H", len(snap)) + snap + log)
pathlib.Path("seeds/log_files/log-only").write_bytes(struct.pack("<H", 0) + log)
# A version-5 store (XXH3 frames; written by `hmg --model none`: five
# memories, one sealed — the seal compacted —, one more after it): random
# mutation cannot forge a checksum, so the newer kind needs its own seed.
v5 = pathlib.Path("fixtures/v5")
snap5 = (v5 / "snap-0000000000000001.hmg").read_bytes()
log5 = (v5 / "log-0000000000000001.hmg").read_bytes()
pathlib.Path("seeds/log_files/v5").write_bytes(struct.pack("<H", len(snap5)) + snap5 + log5)
# A version-6 store with vector rows (written by `hmg` with the e5 model:
# four memories, one sealed — its row dropped, the seal compacted —, one
# more after it, its row an `EmbedRow` record in the log).
v6 = pathlib.Path("fixtures/v6")
snap6 = (v6 / "snap-0000000000000001.hmg").read_bytes()
log6 = (v6 / "log-0000000000000001.hmg").read_bytes()
pathlib.Path("seeds/log_files/v6").write_bytes(struct.pack("<H", len(snap6)) + snap6 + log6)
pathlib.Path("seeds/import/v1.jsonl").write_bytes((fx / "export.jsonl").read_bytes())
texts = [
    "主庫連線 postgres://admin:s3cr3t@db.internal:5432/app 已設定",
    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "password: hunter2, token = ghp_0123456789abcdefABCDEF0123456789ab",
    "let token = lexer.next_token();  密码=${DB_PASSWORD}",
    "部署前要先跑 smoke test，Kafka 的 retention 改成 7 天。",
    "The deploy uses kubectl apply -f k8s/ and the API at https://api.example.com/v1",
]
for i, t in enumerate(texts):
    pathlib.Path(f"seeds/redact/{i}").write_text(t)
    pathlib.Path(f"seeds/tokenize/{i}").write_text(t)
pathlib.Path("seeds/operations/walk").write_bytes(bytes([0, 1, 0, 9, 3, 0, 4, 0, 5, 0, 6, 8, 0, 3, 7, 0, 0, 5, 5, 0, 7, 0]))
PY

status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "regressions/$t"
  # Earlier findings are in regressions/ already; only this run's count.
  rm -rf "artifacts/$t"
  log="$(mktemp)"
  # -rss_limit_mb: the operations target holds a whole store in memory.
  if ! cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$secs" -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1; then
    status=1
  fi
  runs="$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$" | tail -1 || true)"
  echo "$t: ${runs:-?} executions in ${secs}s"
  for crash in artifacts/"$t"/*; do
    [ -e "$crash" ] || continue
    cp "$crash" "regressions/$t/"
    echo "  found: $crash (kept in regressions/$t/)"
    status=1
  done
  [ "$status" -eq 0 ] || tail -40 "$log"
  rm -f "$log"
done
exit "$status"
