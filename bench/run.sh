#!/usr/bin/env bash
# The speed and memory targets of DESIGN.md §7, measured in one run on this machine against the
# release build over loopback, each beside a comparison measured in the same run:
#   - reading a review with 100 and with 1,000 comments, against nginx serving the very same
#     bytes from a file (32 connections);
#   - durable comment writes across 200 documents, and on one document without
#     `baseCommentsRevision` (which must never conflict);
#   - resident memory idle and under load (nginx's beside it);
#   - re-anchoring 1,000 comments onto a new ~1 MB version, end to end through HTTP.
# Prints one table. Needs wrk, nginx, curl, jq and python3 (apt-get install wrk nginx-light jq).
# Search latency over 1,000,000 comments has its own script: bench/search.sh (both backends).
# Usage: bench/run.sh [seconds per load, default 15]; DOCREVIEW_BIN=path measures that binary.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15}
connections=32

for tool in wrk nginx curl jq python3; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh needs $tool (apt-get install wrk nginx-light jq)" >&2; exit 1; }
done

# DOCREVIEW_BIN names an already built binary (e.g. one kept from an earlier build) to measure.
bin=${DOCREVIEW_BIN:-target/release/docreview}
[ -n "${DOCREVIEW_BIN:-}" ] || cargo build --release -p docreview >&2
work=$(mktemp -d)
server=
nginx_pid=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

export DOCREVIEW_DATA_DIR=$work/data RUST_LOG=error
$bin admin create-user --email bench@example.com --name Bench >/dev/null
TOKEN=$($bin admin issue-token --email bench@example.com --scopes docs,comments)
export TOKEN
$bin serve --listen 127.0.0.1:0 >"$work/out" 2>"$work/err" &
server=$!
until grep -q "listening on" "$work/out"; do sleep 0.1; done
url=$(sed -n 's/^docreview listening on //p' "$work/out")
sleep 1
idle=$(awk '/^VmRSS/ {print $2}' "/proc/$server/status")
auth="Authorization: Bearer $TOKEN"
json="Content-Type: application/json"

html='<h1 id="intro">Benchmark</h1><p>The quick brown fox jumps over the lazy dog.</p>'
html+=$(for i in $(seq 1 40); do printf '<h2>Section %d</h2><p>Paragraph %d talks about caching, durability and anchors in some detail.</p>' "$i" "$i"; done)
create() { curl -sf -H "$auth" -H "$json" "$url/api/reviews" -d "$(jq -n --arg h "$html" --arg t "$1" '{review:{title:$t,source:{html:$h}}}')" | jq -r .review.reviewId; }
comment_on() { # review id, how many: comments of ~300 characters, on the sections' paragraphs
  local filler i
  filler=$(printf 'x%.0s' $(seq 1 300))
  for i in $(seq 1 "$2"); do
    printf '{"body":"Comment %d: %s","category":"note","locator":{"quote":{"exact":"Paragraph %d talks"}}}\n' \
      "$i" "$filler" $(( (i % 40) + 1 ))
  done | xargs -P 4 -d '\n' -I{} curl -sf -o /dev/null -H "$auth" -H "$json" "$url/api/reviews/$1/comments" -d {}
}

echo "== seeding: reviews with 100 and 1,000 comments, 200 reviews for writes" >&2
small=$(create "Read benchmark, 100 comments")
comment_on "$small" 100
large=$(create "Read benchmark, 1,000 comments")
comment_on "$large" 1000
for i in $(seq 1 200); do create "Write benchmark $i"; done >"$work/ids"
create "One document" >"$work/one"

# nginx serves the very bytes the API answers, from files, with keep-alive and no access log.
mkdir -p "$work/www" "$work/nginx"
curl -sf -H "$auth" "$url/api/reviews/$small" >"$work/www/small.json"
curl -sf -H "$auth" "$url/api/reviews/$large" >"$work/www/large.json"
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log error;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  server {
    listen 127.0.0.1:$nginx_port;
    default_type application/json;
    root $work/www;
  }
}
EOF
chmod a+rx "$work" "$work/www" && chmod a+r "$work/www"/*.json  # nginx's workers run as nobody
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 1 50); do
  curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/small.json" && break
  sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/small.json" || { echo "nginx does not serve the files" >&2; exit 1; }

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
nginx_rss_kib() { # the master and its workers
  local total=0 pid
  for pid in $nginx_pid $(pgrep -P "$nginx_pid"); do total=$((total + $(rss_kib "$pid"))); done
  echo "$total"
}
mib() { awk -v k="$1" 'BEGIN {printf "%.0f MiB", k / 1024}'; }
seeded=$(rss_kib "$server")

# wrk's figures: requests per second, p99 latency in ms, and answers that were not 2xx/3xx.
load() { # output file, then wrk's arguments
  local out=$1
  shift
  wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" >"$out"
}
rate() { awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$1"; }
p99() {
  awk '$1 == "99%" { v = $2; u = v; gsub(/[0-9.]/, "", u); gsub(/[a-z]/, "", v);
         if (u == "us") v /= 1000; else if (u == "s") v *= 1000; printf "%.1f", v }' "$1"
}
non2xx() { awk '/Non-2xx or 3xx responses:/ {n = $NF} END {print n + 0}' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "== read loads" >&2
load "$work/read-small" -H "$auth" "$url/api/reviews/$small"
load "$work/nginx-small" "http://127.0.0.1:$nginx_port/small.json"
load "$work/read-large" -H "$auth" "$url/api/reviews/$large"
load "$work/nginx-large" "http://127.0.0.1:$nginx_port/large.json"
nginx_peak=$(nginx_rss_kib)
echo "== write loads" >&2
REVIEW_IDS_FILE=$work/ids load "$work/write-many" -s bench/write.lua "$url"
REVIEW_IDS_FILE=$work/one load "$work/write-one" -s bench/write.lua "$url"
peak=$(hwm_kib "$server")

echo "== re-anchoring 1,000 comments onto a new ~1 MB version" >&2
python3 bench/reanchor_docs.py "$work"
big=$(curl -sf -H "$auth" -F file=@"$work/v1.html" "$url/api/reviews/import-html" | jq -r .review.reviewId)
xargs -P 4 -d '\n' -I{} curl -sf -o /dev/null -H "$auth" -H "$json" "$url/api/reviews/$big/comments" -d {} \
  <"$work/comments.jsonl"
reanchor_s=$(curl -sf -o "$work/v2.json" -w "%{time_total}" -H "$auth" -F file=@"$work/v2.html" \
  "$url/api/reviews/$big/import-html")
anchors=$(jq -r '[.review.comments[].anchor.state] | group_by(.) | map("\(length) \(.[0])") | join(", ")' "$work/v2.json")

small_bytes=$(wc -c <"$work/www/small.json")
large_bytes=$(wc -c <"$work/www/large.json")
many=$(rate "$work/write-many")
one=$(rate "$work/write-one")
cat <<EOF

| workload | docreview | comparison in the same run | ratio | target |
|---|---:|---:|---:|---:|
| read one review with 100 comments ($((small_bytes / 1024)) KB) | $(rate "$work/read-small") req/s, p99 $(p99 "$work/read-small") ms | nginx, same bytes: $(rate "$work/nginx-small") req/s | $(ratio "$(rate "$work/read-small")" "$(rate "$work/nginx-small")") | ≥ 0.50, p99 < 5 ms |
| read one review with 1,000 comments ($((large_bytes / 1024)) KB) | $(rate "$work/read-large") req/s, p99 $(p99 "$work/read-large") ms | nginx, same bytes: $(rate "$work/nginx-large") req/s | $(ratio "$(rate "$work/read-large")" "$(rate "$work/nginx-large")") | ≥ 0.80 |
| durable comment writes across 200 documents | $many writes/s, p99 $(p99 "$work/write-many") ms, $(non2xx "$work/write-many") refused | | | ≥ 5,600/s, p99 < 20 ms |
| comment writes on one document, no \`baseCommentsRevision\` | $one writes/s, p99 $(p99 "$work/write-one") ms, $(non2xx "$work/write-one") refused | across documents: $many writes/s | $(ratio "$one" "$many") | 0 refused; ≥ 0.50 |
| resident memory | idle $(mib "$idle") (after seeding $(mib "$seeded")), peak $(mib "$peak") | nginx under the read load: $(mib "$nginx_peak") | | < 64 MiB idle, < 256 MiB |
| re-anchor 1,000 comments on a new $(( $(wc -c <"$work/v2.html") / 1024 )) KB version | $(printf '%.2f' "$reanchor_s") s ($anchors) | | | < 1 s |

$(nproc) cores, ${connections} connections, ${duration} s per load, wrk over loopback; release build, SQLite.
EOF
