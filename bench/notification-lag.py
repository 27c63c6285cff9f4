#!/usr/bin/env python3
"""Notification lag: one writer comments 200 times mentioning a reader; each write is timed, then
the time from the write's answer until the reader's unread count shows it (the outbox's fan-out).
A fresh data directory (DATA_DIR, default /tmp/docreview-lag; remove it first) or DATABASE_URL
(an empty database); DOCREVIEW_BIN names the binary (default target/release/docreview)."""
import json, subprocess, time, urllib.request, os, sys
BIN=os.environ.get("DOCREVIEW_BIN", "target/release/docreview")
env=dict(os.environ, DOCREVIEW_DATA_DIR=os.environ.get("DATA_DIR", "/tmp/docreview-lag"), RUST_LOG="warn")
def admin(*args):
    return subprocess.run([BIN,"admin",*args],env=env,capture_output=True,text=True,check=True).stdout.strip()
admin("create-user","--email","ada@example.com","--name","Ada")
admin("create-user","--email","bob@example.com","--name","Bob")
ta=admin("issue-token","--email","ada@example.com","--scopes","docs,comments")
tb=admin("issue-token","--email","bob@example.com","--scopes","comments")
srv=subprocess.Popen([BIN,"serve","--listen","127.0.0.1:18931"],env=env,stdout=subprocess.PIPE,stderr=subprocess.DEVNULL)
base="http://127.0.0.1:18931"
def call(method,path,token,body=None):
    req=urllib.request.Request(base+path,method=method,data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization":"Bearer "+token,"Content-Type":"application/json"})
    with urllib.request.urlopen(req) as r: return json.loads(r.read())
for _ in range(100):
    try: urllib.request.urlopen(base+"/readyz"); break
    except Exception: time.sleep(0.1)
rid=call("POST","/api/reviews",ta,{"review":{"title":"Lag","source":{"html":"<p>The quick brown fox.</p>"}}})["review"]["reviewId"]
lags=[]; writes=[]
for i in range(200):
    t0=time.monotonic()
    call("POST",f"/api/reviews/{rid}/comments",tb,{"body":f"@ada note {i}"})
    t1=time.monotonic(); writes.append(t1-t0)
    while call("GET","/api/notifications?limit=1",ta)["unreadCount"]<i+1: pass
    lags.append(time.monotonic()-t1)
srv.terminate()
def pct(xs,p): xs=sorted(xs); return xs[min(len(xs)-1,int(len(xs)*p))]*1000
print(f"200 writes ({os.path.basename(BIN)}, {'PostgreSQL' if os.environ.get('DATABASE_URL') else 'SQLite'}): write p50 {pct(writes,.5):.1f} ms p99 {pct(writes,.99):.1f} ms; "
      f"write-ack to notification visible p50 {pct(lags,.5):.1f} ms p99 {pct(lags,.99):.1f} ms max {max(lags)*1000:.1f} ms")
