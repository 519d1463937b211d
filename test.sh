#!/usr/bin/env bash
# The whole test suite: builds everything (./setup.sh --build), then runs the
# engine's unit and property tests natively and the end-to-end tests that
# drive the built component through the real hosts (hmg, hmg-mcp with the
# official MCP SDK, the browser host in Debian's Chromium).
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hmg/target}"

cargo fmt --all --check
./setup.sh --build
# Chromium (Debian's) and CJK fonts for the browser tests in tests/tests/browser.rs.
if [ ! -x /usr/bin/chromium ] || ! ls /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -qq chromium fonts-noto-cjk >/dev/null ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium fonts-noto-cjk >/dev/null; }
fi
# The official MCP SDK that drives hmg-mcp in tests/tests/mcp_sdk.rs.
npm ci --prefix tests/mcp-sdk --no-audit --no-fund --loglevel=error
log="$(mktemp)"
cargo test --release --locked --workspace 2>&1 | tee "$log"
awk '/^test result:/ { passed += $4; failed += $6 } END { printf "\nall suites: %d passed, %d failed\n", passed, failed }' "$log"
