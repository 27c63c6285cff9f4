#!/usr/bin/env bash
# Full-text search latency over 1,000,000 comments (DESIGN.md §6: p95 < 50 ms), timed through the
# `Store` API exactly as the server calls it, per word-frequency band and per kind of caller
# (org admin, internal member, external member).
#   bench/search.sh                      # SQLite: seeds /tmp/docreview-search-bench.db (~4 min) on first run
#   bench/search.sh postgres://postgres@127.0.0.1:5432/docreview_bench   # PostgreSQL (database must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  postgres://*|postgresql://*)
    cargo run --release -q -p docreview-store-postgres --example search_bench -- "$1" ;;
  *)
    cargo run --release -q -p docreview-store-sqlite --example search_bench -- "${1:-/tmp/docreview-search-bench.db}" ;;
esac
