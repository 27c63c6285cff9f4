#!/usr/bin/env bash
# The review screen's speed in real Chromium (issue 8: a 1 MB document with 1,000 comments is
# interactive in under 1.5 s, every highlight drawn). Seeds a fresh release server, loads the
# screen five times, and prints the browser's timings ("ready" = the document shown, every
# highlight drawn and the screen's handlers installed, from the start of navigation).
# Needs chromium and chromium-driver.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release -p docreview --test web -- --ignored --nocapture review_screen_of_a_1_mb_document 2>&1 \
  | grep -E "^(document|load|review screen)"
