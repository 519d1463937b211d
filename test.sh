#!/usr/bin/env bash
# The whole test suite: builds everything (./setup.sh --build), then runs the
# engine's unit and property tests natively and the end-to-end tests that
# drive the built component through the real hosts.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hmg/target}"

cargo fmt --all --check
./setup.sh --build
cargo test --release --locked --workspace
