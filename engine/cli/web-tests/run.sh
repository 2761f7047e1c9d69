#!/usr/bin/env bash
# Browser test of `engine serve`: builds the engine, installs playwright-core from the lock file,
# drives the page in headless Chromium, and leaves screenshots in target/screenshots/.
#
# Needs the Debian packages `chromium` and `fonts-wqy-microhei` (CJK glyphs for the page's titles
# and the Xiangqi pieces). REQUIRE_GAMES=liuzhou,xiangqi,go makes a missing game a failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"

cargo build --manifest-path "$root/Cargo.toml" -p engine --bin engine
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
ENGINE_BIN="${ENGINE_BIN:-$target/debug/engine}" \
SCREENSHOTS="${SCREENSHOTS:-$target/screenshots}" \
    node "$here/browser.test.mjs"
