#!/usr/bin/env bash
# A scripted agent drives `docreview mcp` with rmcp's client (issue 19) over a generated 1 MB,
# 40-section document: a skimming agent (outline, the first page of 6 sections, 50 comments,
# complete; target ≤ 12 calls) and a thorough one (every character read, 50 comments; ≤ 65
# calls). Prints the tool definitions' size (≤ 4,000 tokens) and a table: calls, the largest
# answer, answers over 25,000 characters or not JSON, comments lost or misplaced (not exact, or
# not where the agent saw the passage). Call counts do not depend on the build; the test binary
# is the debug one the black-box suite uses.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p docreview --tests
cargo test -q -p docreview --test blackbox -- --ignored --nocapture --exact mcp::agent_bench 2>&1 \
  | grep -E "^(document|tool definitions|\|)"
