//! Running the server: the request log, `/metrics`, settings from a config file, refused short
//! tokens, write rate limits behind trusted proxies, and the JSON answers to oversized request
//! heads (issue 11, "Operability"; DESIGN.md §1, §4.7, §5).
//!
//! The documents, comments, replies, edits and status changes these tests need, and the calls
//! whose typed answer is checked, go through the typed client. Raw HTTP remains where the
//! request is the point (an `x-request-id`, a token in the query string, `X-Forwarded-For`,
//! oversized heads), for `/metrics`, for browser sessions, and around the 429s: a rate-limited
//! read must not be hidden by the typed client's retries.

use std::time::Duration;

use docreview_client::Error;
use docreview_client::api::{
    CommentStatus, CreateReview, ListQuery, NewComment, NewReply, ReviewInput, SourceInput,
    StatusChange, TextEdit,
};
use serde_json::{Value, json};

use crate::support::{AGENT_TOKEN, Client, SAMPLE_HTML, Server, Storage, refused};

/// A new document with only a title.
fn titled(title: String) -> CreateReview {
    CreateReview {
        review: ReviewInput {
            title: Some(title),
            ..ReviewInput::default()
        },
        project: None,
    }
}

/// A document-wide comment with only a body.
fn plain(body: String) -> NewComment {
    NewComment {
        body,
        category: None,
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    }
}

/// Polls `condition` on the server's log for up to five seconds (the log is written by
/// another process, after the answer).
async fn wait_for_log(server: &Server, condition: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let log = server.log();
        if condition(&log) {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.log()
}

/// The address of `/metrics` the server printed when it started.
fn metrics_url(server: &Server) -> String {
    server
        .startup
        .iter()
        .find_map(|line| line.strip_prefix("docreview metrics on "))
        .expect("the server prints its metrics address")
        .trim()
        .to_string()
}

async fn scrape(url: &str) -> String {
    let response = reqwest::get(url).await.expect("scrape");
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    response.text().await.expect("body")
}

/// The value of the sample `name{labels}` (labels written as Prometheus writes them), if any.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics.lines().find_map(|line| {
        line.strip_prefix(series)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|value| value.trim().parse().ok())
    })
}

// ---------------------------------------------------------------------------------------------
// The request log
// ---------------------------------------------------------------------------------------------

/// A request's method is the client's to choose (any token, of any length): a method HTTP does
/// not define is logged and counted as `other`, so nothing a client writes there reaches the
/// log, and the metrics do not grow a series for each made-up method.
#[tokio::test]
async fn made_up_methods_are_logged_and_counted_as_other() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Server::start_full(
        Storage::fresh(),
        &[
            ("RUST_LOG", "info"),
            ("DOCREVIEW_METRICS_ADDR", "127.0.0.1:0"),
        ],
        &[],
        true,
    );
    let address = server.base.trim_start_matches("http://").to_string();
    for n in 0..3 {
        let mut stream = tokio::net::TcpStream::connect(&address)
            .await
            .expect("connect");
        let request = format!(
            "DRP_PASTEDSECRET{n} /api/me HTTP/1.1\r\nhost: x\r\nx-request-id: made-up-{n}\r\n\
             connection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.expect("request");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("answer");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    }
    let log = wait_for_log(&server, |log| log.contains("made-up-2")).await;
    let line = log
        .lines()
        .find(|line| line.contains("made-up-2") && line.contains("status="))
        .unwrap_or_else(|| panic!("no request line for made-up-2 in:\n{log}"));
    assert!(line.contains("method=other"), "{line}");
    assert!(
        !log.contains("PASTEDSECRET"),
        "a made-up method reached the log:\n{log}"
    );
    let metrics = scrape(&metrics_url(&server)).await;
    assert!(!metrics.contains("PASTEDSECRET"), "{metrics}");
    assert!(metrics.contains(r#"method="other""#), "{metrics}");
}

/// One info line a request, by default: method, route template, status, latency, request id
/// and principal; never the raw path's query string or the token in it.
#[tokio::test]
async fn the_request_log_names_route_status_latency_request_id_and_principal() {
    let server = Server::start_full(Storage::fresh(), &[("RUST_LOG", "info")], &[], true);
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    let secret = "drp_querystringsecretvalue";
    let reply = ada
        .send(
            ada.raw("GET", &format!("/api/reviews/{id}?access_token={secret}"))
                .header("x-request-id", "trace-me-42"),
        )
        .await;
    reply.expect(200);
    let log = wait_for_log(&server, |log| log.contains("trace-me-42")).await;
    let line = log
        .lines()
        .find(|line| line.contains("trace-me-42") && line.contains("status=200"))
        .unwrap_or_else(|| panic!("no request line for trace-me-42 in:\n{log}"));
    assert!(line.contains("INFO"), "{line}");
    assert!(line.contains("route=/api/reviews/{review_id}"), "{line}");
    assert!(line.contains("method=GET"), "{line}");
    assert!(line.contains("latency_ms="), "{line}");
    assert!(line.contains("principal=usr_"), "{line}");
    assert!(
        !log.contains(secret),
        "a token in a query string reached the log"
    );
    assert!(
        !log.contains("access_token"),
        "the query string reached the log"
    );
    assert!(
        !line.contains(&id),
        "the raw path, not the template, was logged: {line}"
    );
    // The agent's token never appears, only its principal.
    server
        .agent()
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("the agent lists");
    let log = wait_for_log(&server, |log| log.contains("principal=svc_agent")).await;
    assert!(log.contains("principal=svc_agent"), "{log}");
    assert!(!log.contains(AGENT_TOKEN));
    // A secret pasted into x-request-id is replaced, never logged or echoed.
    let token = ada.token().expect("a token").to_string();
    for pasted in [token.as_str(), AGENT_TOKEN] {
        let reply = ada
            .send(ada.raw("GET", "/api/me").header("x-request-id", pasted))
            .await;
        reply.expect(200);
        assert_ne!(reply.header("x-request-id"), Some(pasted));
    }
    server
        .agent()
        .api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("the agent lists");
    let log = wait_for_log(&server, |log| {
        log.matches("principal=svc_agent").count() >= 2
    })
    .await;
    assert!(
        !log.contains(&token),
        "a token sent as a request id reached the log"
    );
    assert!(!log.contains(AGENT_TOKEN));
}

/// The HTML parser's complaints about an uploaded document (one a misplaced element) are facts
/// about the document, not the service: they stay out of the log at every level `RUST_LOG` sets
/// unless it names the parser.
#[tokio::test]
async fn an_uploaded_document_s_parse_errors_stay_out_of_the_log() {
    let server = Server::start_full(Storage::fresh(), &[("RUST_LOG", "info")], &[], true);
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let misnested =
        "<!doctype html><table><tr>text outside a cell<td>x</td><b>bold</b></tr></table>";
    ada.upload("Misnested", misnested).await;
    let reply = ada
        .send(
            ada.raw("GET", "/api/reviews")
                .header("x-request-id", "after-the-upload"),
        )
        .await;
    reply.expect(200);
    let log = wait_for_log(&server, |log| log.contains("after-the-upload")).await;
    assert!(log.contains("route=/api/reviews"), "{log}");
    assert!(
        !log.contains("html5ever"),
        "the parser's warnings reached the log:\n{log}"
    );
}

/// `--log-format json` (here through `DOCREVIEW_LOG_FORMAT`) writes each line as one JSON object.
#[tokio::test]
async fn the_request_log_can_be_json_lines() {
    let server = Server::start_full(
        Storage::fresh(),
        &[("RUST_LOG", "info"), ("DOCREVIEW_LOG_FORMAT", "json")],
        &[],
        true,
    );
    let anonymous = server.client(None);
    anonymous
        .send(
            anonymous
                .raw("GET", "/api/me")
                .header("x-request-id", "json-line-1"),
        )
        .await
        .expect_error(401, "unauthorized");
    let log = wait_for_log(&server, |log| log.contains("json-line-1")).await;
    let entry: Value = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|entry| entry["fields"]["request_id"] == "json-line-1")
        .unwrap_or_else(|| panic!("no JSON request line in:\n{log}"));
    assert_eq!(entry["level"], "INFO");
    assert_eq!(entry["fields"]["route"], "/api/me");
    assert_eq!(entry["fields"]["method"], "GET");
    assert_eq!(entry["fields"]["status"], 401);
    assert!(entry["fields"]["latency_ms"].is_number(), "{entry}");
    assert_eq!(entry["fields"]["principal"], "-");
}

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

/// `/metrics` on its own listener: requests by route template and status, latency
/// histograms, group-commit batch sizes, pool use, event subscribers; the public listener has
/// no `/metrics`.
#[tokio::test]
async fn metrics_are_served_on_their_own_listener() {
    let server = Server::start_with(&[("DOCREVIEW_METRICS_ADDR", "127.0.0.1:0")]);
    let url = metrics_url(&server);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    ada.api()
        .add_comment(&id, &plain("counted".to_string()))
        .await
        .expect("comment");
    ada.api().review(&id, false).await.expect("read");
    refused(
        ada.api().review("rv_missing", false).await,
        404,
        "not_found",
    );
    // An open event stream counts as a subscriber while it is open.
    let stream = ada.api().events(&id).await.expect("events");

    let metrics = scrape(&url).await;
    let read = r#"docreview_http_requests_total{method="GET",route="/api/reviews/{review_id}",status="200"}"#;
    assert_eq!(sample(&metrics, read), Some(1.0), "{metrics}");
    let missing = r#"docreview_http_requests_total{method="GET",route="/api/reviews/{review_id}",status="404"}"#;
    assert_eq!(sample(&metrics, missing), Some(1.0), "{metrics}");
    assert!(
        metrics.contains(
            r#"docreview_http_request_duration_seconds_bucket{method="POST",route="/api/reviews/{review_id}/comments",le="0.005"}"#
        ),
        "{metrics}"
    );
    assert_eq!(sample(&metrics, "docreview_sse_subscribers"), Some(1.0));
    assert!(
        metrics.contains(r#"docreview_db_pool_connections{state="idle"}"#),
        "{metrics}"
    );
    assert!(sample(&metrics, "docreview_db_pool_max_connections").unwrap_or(0.0) >= 1.0);
    if !crate::support::on_postgres() {
        assert!(
            sample(&metrics, "docreview_sqlite_commit_batch_size_count").unwrap_or(0.0) >= 2.0,
            "{metrics}"
        );
    }
    assert!(!metrics.contains(&id), "ids stay out of metric labels");
    drop(stream);

    // Not on the public listener.
    ada.get("/metrics").await.expect_error(404, "not_found");
}

/// With `DOCREVIEW_METRICS_TOKEN`, `/metrics` is on the public listener for that token only.
#[tokio::test]
async fn metrics_on_the_public_listener_need_their_token() {
    let token = "metrics-token-0123456789abcdef0123456789";
    let server = Server::start_with(&[("DOCREVIEW_METRICS_TOKEN", token)]);
    let anonymous = server.client(None);
    let refused = anonymous.get("/metrics").await;
    refused.expect_error(401, "unauthorized");
    server
        .agent()
        .get("/metrics")
        .await
        .expect_error(401, "unauthorized");
    let scraper = server.client(Some(token));
    let answer = scraper.get("/metrics").await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert!(
        answer.text.contains("docreview_http_requests_total"),
        "{}",
        answer.text
    );
}

/// Replies without a base revision are never retried (they take no revision guard): 32 at
/// once leave the retry counter untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_replies_without_base_revision_are_never_retried() {
    let server = Server::start_with(&[("DOCREVIEW_METRICS_ADDR", "127.0.0.1:0")]);
    let url = metrics_url(&server);
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    let cid = ada
        .api()
        .add_comment(&id, &plain("hub".to_string()))
        .await
        .expect("comment")
        .comment
        .id;
    let replies = futures::future::join_all((0..32).map(|i| {
        let reply = NewReply {
            body: format!("r{i}"),
            run_id: None,
            base_comments_revision: None,
            base_thread_revision: None,
        };
        let (ada, id, cid) = (&ada, &id, &cid);
        async move { ada.api().reply(id, cid, &reply).await }
    }))
    .await;
    for reply in replies {
        reply.expect("reply");
    }
    let metrics = scrape(&url).await;
    let retries = sample(&metrics, "docreview_comment_write_retries_total").unwrap_or(0.0);
    assert!(retries < 0.5, "no write was retried: {metrics}");
}

/// Writes to existing comments without a base revision conflict only over the same comment:
/// edits, status changes and re-anchors of sixteen different comments of one document at once
/// all succeed without one retry (issue 11: such writers got 409s under load).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_to_different_comments_are_never_retried() {
    const COMMENTS: usize = 16;
    let server = Server::start_with(&[("DOCREVIEW_METRICS_ADDR", "127.0.0.1:0")]);
    let url = metrics_url(&server);
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    let mut comments = Vec::new();
    for i in 0..COMMENTS {
        let written = ada
            .api()
            .add_comment(&id, &plain(format!("c{i}")))
            .await
            .expect("comment");
        comments.push(written.comment.id);
    }
    let edits = comments.iter().map(|cid| {
        let edit = TextEdit {
            body: "edited".to_string(),
            base_comments_revision: None,
            base_thread_revision: None,
        };
        let (ada, id) = (&ada, &id);
        async move { ada.api().edit_comment(id, cid, &edit).await }
    });
    let statuses = comments.iter().map(|cid| {
        let close = StatusChange {
            status: CommentStatus::Closed,
            base_comments_revision: None,
            base_thread_revision: None,
        };
        let (ada, id) = (&ada, &id);
        async move { ada.api().set_status(id, cid, &close).await }
    });
    let (edits, statuses) = tokio::join!(
        futures::future::join_all(edits),
        futures::future::join_all(statuses)
    );
    for edit in edits {
        edit.expect("edit");
    }
    for status in statuses {
        status.expect("status change");
    }
    let read = ada.api().review(&id, false).await.expect("read");
    assert_eq!(
        read.comments_revision,
        i64::try_from(3 * COMMENTS).expect("count"),
        "every write counted once"
    );
    for comment in &read.comments {
        assert_eq!(comment.body, "edited", "no edit lost: {comment:?}");
        assert_eq!(
            comment.status,
            CommentStatus::Closed,
            "no status lost: {comment:?}"
        );
    }
    let metrics = scrape(&url).await;
    // An edit and a status change of the same comment may race each other (the loser retries
    // once: only its pair writes that comment); writes to different comments never make each
    // other retry. Guarded by the document's revision instead, this was 196 to 271 retries.
    let retries = sample(&metrics, "docreview_comment_write_retries_total").unwrap_or(0.0);
    assert!(
        retries <= COMMENTS as f64,
        "{retries} retries for {} writes",
        2 * COMMENTS
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

/// `serve --config FILE` reads the settings by their variable names (with or without the
/// prefix); the environment overrides the file.
#[tokio::test]
async fn settings_come_from_a_toml_file_and_the_environment_overrides_it() {
    let storage = Storage::fresh();
    let file = storage.data_dir().join("docreview.toml");
    std::fs::write(
        &file,
        "max_html_bytes = 2000\n\
         DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL = 5\n\
         trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]\n",
    )
    .expect("write config");
    let path = file.to_str().expect("path").to_string();
    let server = Server::start_full(
        storage,
        &[("DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL", "0")],
        &["--config", &path],
        false,
    );
    let importer = server.importer();
    let big = CreateReview {
        review: ReviewInput {
            title: Some("Big".to_string()),
            source: Some(SourceInput {
                html: Some("x".repeat(3000)),
                label: None,
            }),
            ..ReviewInput::default()
        },
        project: None,
    };
    let too_big = importer.api().create_review(&big).await;
    let Error::Api { body } = refused(too_big, 413, "payload_too_large") else {
        panic!("a refusal with its error body")
    };
    assert!(body.message.contains("2000"), "{body:?}");
    // The environment's 0 (no limit) beat the file's 5 (a POST is never retried: a 429 would
    // fail here).
    for i in 0..8 {
        importer
            .api()
            .create_review(&titled(format!("Doc {i}")))
            .await
            .expect("no limit");
    }
}

/// Unknown keys, and shared tokens shorter than 32 characters, stop the server at start with
/// a message that says why.
#[test]
fn a_bad_config_or_a_short_token_is_refused_at_start() {
    let storage = Storage::fresh();
    let file = storage.data_dir().join("bad.toml");
    std::fs::write(&file, "lisen = \"127.0.0.1:1\"\n").expect("write config");
    let output = storage
        .command()
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown setting `lisen`"), "{stderr}");
    assert!(stderr.contains("DOCREVIEW_LISTEN"), "{stderr}");

    for (variable, value) in [
        ("DOCREVIEW_AGENT_TOKEN", "short-agent-token"),
        ("DOCREVIEW_MANAGE_TOKEN", "0123456789abcdef0123456789abcde"),
        ("DOCREVIEW_METRICS_TOKEN", "tiny"),
    ] {
        let output = storage
            .command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env(variable, value)
            .output()
            .expect("run");
        assert!(!output.status.success(), "{variable} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(variable) && stderr.contains("at least 32"),
            "{stderr}"
        );
        assert!(!stderr.contains(value), "the token was printed: {stderr}");
    }
}

/// `serve --help` lists every setting by its variable.
#[test]
fn serve_help_lists_every_setting() {
    let output = std::process::Command::new(crate::support::binary())
        .args(["serve", "--help"])
        .output()
        .expect("run");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for variable in [
        "DOCREVIEW_CONFIG",
        "DOCREVIEW_LISTEN",
        "DOCREVIEW_DATA_DIR",
        "DATABASE_URL",
        "DOCREVIEW_PUBLIC_URL",
        "DOCREVIEW_AGENT_TOKEN",
        "DOCREVIEW_IMPORT_TOKEN",
        "DOCREVIEW_MANAGE_TOKEN",
        "DOCREVIEW_MAX_HTML_BYTES",
        "DOCREVIEW_LOG_FORMAT",
        "DOCREVIEW_METRICS_ADDR",
        "DOCREVIEW_METRICS_TOKEN",
        "DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL",
        "DOCREVIEW_RATE_LIMIT_WRITES_PER_ADDRESS",
        "DOCREVIEW_TRUSTED_PROXIES",
        "DOCREVIEW_MAX_CONNECTIONS",
        "DOCREVIEW_HEADER_TIMEOUT_SECS",
        "DOCREVIEW_WEBHOOK_ALLOW_PRIVATE",
        "DOCREVIEW_WEBHOOK_RETRY_SCHEDULE",
    ] {
        assert!(help.contains(variable), "{variable} missing from:\n{help}");
    }
}

// ---------------------------------------------------------------------------------------------
// Rate limits
// ---------------------------------------------------------------------------------------------

/// Writes are limited per credential: beyond the limit 429 `rate_limited` with Retry-After;
/// reads go on, and another credential is not affected.
#[tokio::test]
async fn writes_are_limited_per_credential() {
    let server = Server::start_with(&[("DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL", "3")]);
    let importer = server.importer();
    for i in 0..3 {
        importer
            .api()
            .create_review(&titled(format!("Doc {i}")))
            .await
            .expect("under the limit");
    }
    // Raw from here: the 429 and Retry-After are the point, and a rate-limited read must not be
    // hidden by the typed client's retries.
    let refused = importer
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "One more" } }),
        )
        .await;
    refused.expect_error(429, "rate_limited");
    let retry_after: u64 = refused
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    importer.get("/api/reviews").await.expect(200);
    let listed = server.agent().get("/api/reviews").await;
    assert_eq!(
        listed.expect(200)["reviews"].as_array().map(Vec::len),
        Some(3),
        "the refused write wrote nothing"
    );
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.upload("Ada's", SAMPLE_HTML).await;
}

/// A browser session counts as its user: its writes through the API are limited too, and its
/// pages keep working.
#[tokio::test]
async fn browser_session_writes_are_limited_per_user() {
    let server = Server::start_with(&[("DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL", "2")]);
    server.create_user_with_password("ada@example.com", "Ada", &[], "correct horse battery");
    let session = server
        .sign_in("ada@example.com", "correct horse battery")
        .await;
    for i in 0..2 {
        let reply = session
            .post(
                "/api/reviews",
                &json!({ "review": { "title": format!("Doc {i}") } }),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
    }
    session
        .post("/api/reviews", &json!({ "review": { "title": "Third" } }))
        .await
        .expect_error(429, "rate_limited");
    assert_eq!(session.get("/").await.status, 200, "reads are not counted");
}

/// Per client address: behind a trusted proxy the address comes from `X-Forwarded-For`; from
/// any other peer the header is ignored.
#[tokio::test]
async fn writes_are_limited_per_address_forwarded_only_by_trusted_proxies() {
    let trusted = Server::start_with(&[
        ("DOCREVIEW_RATE_LIMIT_WRITES_PER_ADDRESS", "2"),
        ("DOCREVIEW_TRUSTED_PROXIES", "10.0.0.0/8, 127.0.0.1"),
    ]);
    let importer = trusted.importer();
    let create = |client: &Client, forwarded: &str| {
        let builder = client
            .raw("POST", "/api/reviews")
            .header("x-forwarded-for", forwarded)
            .json(&json!({ "review": { "title": "Doc" } }));
        let client = client.clone();
        async move { client.send(builder).await }
    };
    create(&importer, "203.0.113.1").await.expect(201);
    create(&importer, "198.51.100.7, 203.0.113.1")
        .await
        .expect(201);
    create(&importer, "203.0.113.1")
        .await
        .expect_error(429, "rate_limited");
    create(&importer, "203.0.113.2").await.expect(201);
    // A sign-in attempt is a write too, counted with no credential at all.
    let anonymous = trusted.client(None);
    for _ in 0..2 {
        let reply = anonymous
            .send(
                anonymous
                    .raw("POST", "/api/auth/cli/token")
                    .header("x-forwarded-for", "203.0.113.3")
                    .json(&json!({ "code": "nope", "verifier": "nope" })),
            )
            .await;
        assert_eq!(reply.status, 400, "{}", reply.text);
    }
    anonymous
        .send(
            anonymous
                .raw("POST", "/api/auth/cli/token")
                .header("x-forwarded-for", "203.0.113.3")
                .json(&json!({ "code": "nope", "verifier": "nope" })),
        )
        .await
        .expect_error(429, "rate_limited");

    let untrusted = Server::start_with(&[("DOCREVIEW_RATE_LIMIT_WRITES_PER_ADDRESS", "2")]);
    let importer = untrusted.importer();
    create(&importer, "203.0.113.1").await.expect(201);
    create(&importer, "203.0.113.2").await.expect(201);
    create(&importer, "203.0.113.3")
        .await
        .expect_error(429, "rate_limited");
}

// ---------------------------------------------------------------------------------------------
// Oversized request heads
// ---------------------------------------------------------------------------------------------

/// A request target or header block larger than the server reads is answered with the JSON
/// error body (414, 431), and the connection stays usable for the next request.
#[tokio::test]
async fn oversized_request_heads_get_the_json_error_body() {
    let server = Server::start();
    let anonymous = server.client(None);
    let long_path = format!("/api/reviews/{}", "a".repeat(20_000));
    anonymous
        .get(&long_path)
        .await
        .expect_error(414, "uri_too_long");
    let long_query = format!("/healthz?{}", "q=1&".repeat(5_000));
    anonymous
        .get(&long_query)
        .await
        .expect_error(414, "uri_too_long");

    let mut many = anonymous.raw("GET", "/healthz");
    for i in 0..150 {
        many = many.header(format!("x-filler-{i}"), "1");
    }
    anonymous
        .send(many)
        .await
        .expect_error(431, "headers_too_large");
    let big = anonymous
        .raw("GET", "/healthz")
        .header("x-filler", "b".repeat(70_000));
    anonymous
        .send(big)
        .await
        .expect_error(431, "headers_too_large");
    assert_eq!(anonymous.get("/healthz").await.status, 200);
}

/// Under `umask 000` the server's data folder is still its owner's alone (0700), and the SQLite
/// database (password and token hashes, every document) and its write-ahead log are 0600:
/// SQLite would make them readable by every local user, and the folder writable by them.
#[cfg(unix)]
#[tokio::test]
async fn the_data_folder_is_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    if crate::support::test_database_url().is_some() {
        return; // PostgreSQL keeps nothing in the data folder.
    }
    let parent = tempfile::tempdir().expect("temp dir");
    let data = parent.path().join("data");
    let data_text = data.to_str().expect("a UTF-8 path").to_string();
    let server = Server::start_after_shell("umask 000", &[("DOCREVIEW_DATA_DIR", &data_text)]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.upload("Doc", SAMPLE_HTML).await;
    let mode = |name: &str| {
        std::fs::metadata(data.join(name))
            .unwrap_or_else(|error| panic!("{name}: {error}"))
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(""), 0o700, "the data folder");
    assert_eq!(mode("docreview.db"), 0o600);
    assert_eq!(mode("docreview.db-wal"), 0o600);
}
