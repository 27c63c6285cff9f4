//! Uploaded HTML never runs with the service's origin, checked in a real browser: headless
//! Chromium loads a version's bundle whose script would rewrite the page, and the script does
//! not run. As a control, the same bytes served without our `Content-Security-Policy` do run,
//! so the test can fail.
//!
//! A browser navigation cannot send a Bearer token, so Chromium talks to a small proxy that adds
//! it. Needs `chromium` (Debian's package); without it the test prints a note and passes, unless
//! `DOCREVIEW_REQUIRE_BROWSER` is set (CI sets it after installing Chromium).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::Server;

const PAGE: &str = r#"<!doctype html><html><body><p id="mark">static</p>
<script>document.getElementById('mark').textContent = 'script-ran';</script></body></html>"#;

fn chromium() -> Option<PathBuf> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("DOCREVIEW_REQUIRE_BROWSER").is_none(),
            "DOCREVIEW_REQUIRE_BROWSER is set but Chromium is not installed (apt-get install chromium)"
        );
        eprintln!("note: Chromium is not installed; skipping the browser check");
    }
    found
}

/// Forwards each request to `upstream` with `Authorization` added; with `strip_csp`, drops the
/// response's `Content-Security-Policy` (the control). One request per connection.
fn proxy(upstream: SocketAddr, token: String, strip_csp: bool) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    let address = listener.local_addr().expect("proxy address");
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let token = token.clone();
            std::thread::spawn(move || forward(client, upstream, &token, strip_csp));
        }
    });
    address
}

fn forward(mut client: TcpStream, upstream: SocketAddr, token: &str, strip_csp: bool) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut lines: Vec<&str> = head
        .split("\r\n")
        .filter(|line| !line.is_empty() && !line.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    let authorization = format!("Authorization: Bearer {token}");
    lines.push(&authorization);
    lines.push("Connection: close");
    let request = format!("{}\r\n\r\n", lines.join("\r\n"));
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    if server.write_all(request.as_bytes()).is_err() {
        return;
    }
    let mut response = Vec::new();
    if server.read_to_end(&mut response).is_err() {
        return;
    }
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(response.len(), |at| at + 4);
    let (headers, body) = response.split_at(split);
    let headers: String = String::from_utf8_lossy(headers)
        .split_inclusive("\r\n")
        .filter(|line| {
            !(strip_csp
                && line
                    .to_ascii_lowercase()
                    .starts_with("content-security-policy:"))
        })
        .collect();
    let _ = client.write_all(headers.as_bytes());
    let _ = client.write_all(body);
}

/// The DOM Chromium ends up with after loading `url`.
fn rendered_dom(chromium: &PathBuf, url: &str) -> String {
    let profile = tempfile::tempdir().expect("profile dir");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("poll chromium").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut dom = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut dom)
        .expect("read the DOM");
    dom
}

#[tokio::test]
async fn scripts_in_uploaded_html_never_run_with_the_services_origin() {
    let Some(chromium) = chromium() else { return };
    let server = Server::start();
    server.create_user("owner@example.com", "Owner", &[]);
    let token = server.issue_token("owner@example.com", "docs,comments");
    let owner = server.client(Some(&token));
    let created = owner
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Hostile", "source": { "html": PAGE } } }),
        )
        .await;
    let review = &created.expect(201)["review"];
    let path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        review["reviewId"].as_str().expect("id"),
        review["latestVersionId"].as_str().expect("version")
    );
    let upstream: SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("server address");

    let sandboxed = proxy(upstream, token.clone(), false);
    let dom = rendered_dom(&chromium, &format!("http://{sandboxed}{path}"));
    assert!(
        dom.contains(r#"<p id="mark">static</p>"#),
        "the uploaded script ran, or the bundle did not load: {dom}"
    );

    // Control: without our policy the very same bytes do run, so the check above can fail.
    let unprotected = proxy(upstream, token, true);
    let dom = rendered_dom(&chromium, &format!("http://{unprotected}{path}"));
    assert!(
        dom.contains(r#"<p id="mark">script-ran</p>"#),
        "the control page's script should have run: {dom}"
    );
}
