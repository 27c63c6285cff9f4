#!/usr/bin/env bash
# The review screen's speed in real Chromium (issue 16), for a 1 MB document with 1,000 comments:
# the page's own HTML (<= 600 KB), interactive (< 1.0 s: the document shown, every highlight
# drawn, the handlers installed, from the start of navigation), a resolve shown (< 300 ms, from
# the click), a comment from elsewhere shown (< 500 ms, from the API call), one write's update
# (<= 50 KB), and the Content-Security-Policy violations met on the way (0). Seeds a fresh server
# (release build), loads the screen five times, resolves five threads, receives five comments.
# Needs chromium and chromium-driver. DOCREVIEW_BENCH_PROFILE=debug measures the debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=(--release)
[ "${DOCREVIEW_BENCH_PROFILE:-release}" = debug ] && profile=()
cargo test "${profile[@]}" -p docreview --test blackbox -- --ignored --nocapture \
  web::bench::review_screen_of_a_1_mb_document_with_1000_comments 2>&1 \
  | grep -E "^(document|load [0-9]|review screen|\| )"
