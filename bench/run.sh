#!/usr/bin/env bash
# Measures DESIGN.md §6 targets against the release build over loopback:
#   - reading a review with 100 comments (~60 KB JSON) at 32 connections
#   - durable comment writes across many documents at 32 connections
#   - resident memory idle and after the read load
#   - re-anchoring 1,000 comments onto a new ~1 MB version, end to end through HTTP
# Needs wrk (apt-get install wrk), curl and jq. Usage: bench/run.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
connections=32

cargo build --release -p docreview >&2
bin=target/release/docreview
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

export DOCREVIEW_DATA_DIR=$work RUST_LOG=error
$bin admin create-user --email bench@example.com --name Bench >/dev/null
TOKEN=$($bin admin issue-token --email bench@example.com --scopes docs,comments)
export TOKEN
$bin serve --listen 127.0.0.1:0 >"$work/out" 2>"$work/err" &
server=$!
until grep -q "listening on" "$work/out"; do sleep 0.1; done
url=$(sed -n 's/^docreview listening on //p' "$work/out")
auth="Authorization: Bearer $TOKEN"
json="Content-Type: application/json"

html='<h1 id="intro">Benchmark</h1><p>The quick brown fox jumps over the lazy dog.</p>'
html+=$(for i in $(seq 1 40); do printf '<h2>Section %d</h2><p>Paragraph %d talks about caching, durability and anchors in some detail.</p>' "$i" "$i"; done)
create() { curl -sf -H "$auth" -H "$json" "$url/api/reviews" -d "$(jq -n --arg h "$html" --arg t "$1" '{review:{title:$t,source:{html:$h}}}')" | jq -r .review.reviewId; }

echo "== seeding: one review with 100 comments, 200 reviews for writes" >&2
read_id=$(create "Read benchmark")
body=$(printf 'x%.0s' $(seq 1 300))
for i in $(seq 1 100); do
  curl -sf -o /dev/null -H "$auth" -H "$json" "$url/api/reviews/$read_id/comments" \
    -d "{\"body\":\"Comment $i: $body\",\"category\":\"note\",\"locator\":{\"quote\":{\"exact\":\"Paragraph $(( (i % 40) + 1 )) talks\"}}}"
done
bytes=$(curl -sf -H "$auth" "$url/api/reviews/$read_id" | wc -c)
for i in $(seq 1 200); do create "Write benchmark $i"; done >"$work/ids"
export REVIEW_IDS_FILE=$work/ids

rss() { awk '/^VmRSS/ {printf "%.1f MiB", $2/1024}' "/proc/$server/status"; }
echo "== idle resident memory: $(rss)"
echo "== read: GET one review with 100 comments ($bytes bytes of JSON), $connections connections, ${duration}s"
wrk -t2 -c$connections -d"${duration}s" --latency -H "$auth" "$url/api/reviews/$read_id"
echo "== resident memory after the read load: $(rss) (peak $(awk '/^VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$server/status"))"
echo "== write: POST comments across 200 reviews, $connections connections, ${duration}s"
wrk -t2 -c$connections -d"${duration}s" --latency -s bench/write.lua "$url"
echo "== resident memory after the write load: $(rss)"

echo "== re-anchor: 1,000 comments, then a new ~1 MB version (moved, edited and deleted passages)"
python3 bench/reanchor_docs.py "$work"
big=$(curl -sf -H "$auth" -F file=@"$work/v1.html" "$url/api/reviews/import-html" | jq -r .review.reviewId)
while read -r comment; do
  curl -sf -o /dev/null -H "$auth" -H "$json" "$url/api/reviews/$big/comments" -d "$comment"
done <"$work/comments.jsonl"
echo "v2: $(wc -c <"$work/v2.html") bytes"
curl -sf -o "$work/v2.json" -w "new version answered in %{time_total} s\n" -H "$auth" -F file=@"$work/v2.html" \
  "$url/api/reviews/$big/import-html"
jq -r '[.review.comments[].anchor.state] | group_by(.) | map("\(.[0]): \(length)") | join(", ")' "$work/v2.json"
