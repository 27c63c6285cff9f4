//! Malformed requests and cross-cutting behaviour on the review endpoints: JSON and media-type
//! errors, unknown paths and methods, the interface-version header, the token-expiry header,
//! expired tokens, undecodable paths, oversized bodies, and the operator commands' failures.
//!
//! Most of it is about the wire itself and stays raw HTTP: malformed and mistyped bodies, media
//! types, unknown paths and methods, undecodable paths, the headers, and the connection that
//! must not drop. The setup, and the calls whose typed answer or refusal is what is checked (the
//! HTML limit, expired tokens, NUL inside well-typed values), go through the typed client.

use crate::support;

use docreview_client::Error;
use docreview_client::api::{
    CreateReview, ListQuery, Locator, NewComment, NewReply, PageQuery, ReviewInput, ReviewView,
    SourceInput, StartRun,
};
use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, now_ms, refused, rfc3339_ms};

const API_VERSION: &str = "2026-10-02";

/// POST with a raw body and content type.
async fn post_raw(
    client: &Client,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> support::Reply {
    let mut request = client.raw("POST", path).body(body.to_string());
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    client.send(request).await
}

async fn document_count(server: &Server) -> usize {
    let query = ListQuery {
        limit: Some(200),
        ..ListQuery::default()
    };
    let list = server.importer().api().list_reviews(&query).await;
    list.expect("list").reviews.len()
}

async fn create_doc(client: &Client) -> ReviewView {
    client.upload("Doc", SAMPLE_HTML).await
}

/// A new document with only `html` as its source (no title).
fn html_only(html: String) -> CreateReview {
    CreateReview {
        review: ReviewInput {
            source: Some(SourceInput {
                html: Some(html),
                label: None,
            }),
            ..ReviewInput::default()
        },
        project: None,
    }
}

/// A comment with only a body.
fn plain(body: &str) -> NewComment {
    NewComment {
        body: body.to_string(),
        category: None,
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    }
}

// ---------------------------------------------------------------------------------------------
// JSON bodies

#[tokio::test]
async fn malformed_json_is_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for body in [
        "{",
        "{\"review\": }",
        "not json",
        "",
        "{\"review\": {}} trailing",
        "{\"review\": {\"title\": \"\\uZZZZ\"}}",
    ] {
        post_raw(&ada, "/api/reviews", Some("application/json"), body)
            .await
            .expect_error(400, "invalid_request");
    }
    // Bytes that are not UTF-8 inside a JSON string.
    let request = ada
        .raw("POST", "/api/reviews")
        .header("content-type", "application/json")
        .body(b"{\"review\": {\"title\": \"caf\xe9\"}}".to_vec());
    ada.send(request).await.expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn wrong_json_types_are_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for body in [
        json!({ "review": { "title": 5 } }),
        json!({ "review": { "source": { "html": 5 } } }),
        json!({ "review": { "source": "<p>html</p>" } }),
        json!({ "review": { "tags": "one" } }),
        json!({ "review": { "access": [] } }),
        json!({ "review": "a string" }),
        json!({ "review": [] }),
        json!([{ "review": {} }]),
        json!("review"),
    ] {
        ada.post("/api/reviews", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn missing_review_object_is_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for body in [
        json!({}),
        json!({ "title": "Top level" }),
        json!({ "review": null }),
    ] {
        ada.post("/api/reviews", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(document_count(&server).await, 0);
}

/// docs/api.md "Authentication order": credentials and scheme/scope come before the body.
#[tokio::test]
async fn credentials_are_checked_before_the_body() {
    let server = Server::start();
    let reader = server.user("ada@example.com", "Ada", &[], "comments");
    let anonymous = server.client(None);
    for (content_type, body) in [(Some("application/json"), "{"), (Some("text/plain"), "{}")] {
        post_raw(&anonymous, "/api/reviews", content_type, body)
            .await
            .expect_error(401, "unauthorized");
        post_raw(&reader, "/api/reviews", content_type, body)
            .await
            .expect_error(403, "insufficient_scope");
        post_raw(&server.manager(), "/api/reviews", content_type, body)
            .await
            .expect_error(403, "forbidden");
        post_raw(&anonymous, "/api/reviews/import-html", content_type, body)
            .await
            .expect_error(401, "unauthorized");
    }
}

#[tokio::test]
async fn unknown_json_fields_are_ignored() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Extra", "colour": "blue" }, "extra": true }),
        )
        .await;
    assert_eq!(reply.expect(201)["review"]["title"], "Extra");
}

#[tokio::test]
async fn json_without_a_json_content_type_is_415() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let body = json!({ "review": { "title": "Typed wrong" } }).to_string();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        post_raw(&ada, "/api/reviews", content_type, &body)
            .await
            .expect_error(415, "unsupported_media_type");
    }
    // Parameters and case do not matter.
    post_raw(
        &ada,
        "/api/reviews",
        Some("Application/JSON; charset=utf-8"),
        &body,
    )
    .await
    .expect(201);
    assert_eq!(document_count(&server).await, 1);
}

#[tokio::test]
async fn json_html_over_the_limit_is_413() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // Within the body allowance but over the HTML limit.
    let over = ada.api().create_review(&html_only("a".repeat(1001))).await;
    refused(over, 413, "payload_too_large");
    // A body beyond the whole allowance is refused before it is read, naming the configured
    // limit (not the allowance, which is a mebibyte more).
    let huge = ada
        .api()
        .create_review(&html_only("a".repeat(1024 * 1024 + 2000)))
        .await;
    let Error::Api { body } = refused(huge, 413, "payload_too_large") else {
        panic!("a refusal with its error body")
    };
    assert!(
        body.message.contains("at most 1000 bytes"),
        "{}",
        body.message
    );
    ada.api()
        .create_review(&html_only("a".repeat(1000)))
        .await
        .expect("HTML at the limit");
    assert_eq!(document_count(&server).await, 1);
}

/// DESIGN.md §5: no request, however malformed, drops the connection. A body far beyond the
/// limit (HTML limit + 1 MiB) must be answered with 413 every time, not with a reset.
#[tokio::test]
async fn huge_json_body_is_answered_413_every_time() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let body = json!({ "review": { "source": { "html": "a".repeat(4 << 20) } } });
    let mut outcomes = Vec::new();
    for _ in 0..10 {
        let outcome = ada.raw("POST", "/api/reviews").json(&body).send().await;
        outcomes.push(match outcome {
            Ok(response) => {
                let status = response.status().as_u16();
                let version = response.headers().get("x-cr-api-version").cloned();
                let text = response.text().await.unwrap_or_default();
                let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                assert_eq!(
                    version.as_ref().and_then(|v| v.to_str().ok()),
                    Some(API_VERSION)
                );
                format!("{status} {}", json["error"].as_str().unwrap_or("?"))
            }
            Err(error) => format!("no response: {error:?}"),
        });
    }
    assert!(
        outcomes.iter().all(|o| o == "413 payload_too_large"),
        "every oversized request needs a 413 answer: {outcomes:#?}"
    );
    assert_eq!(document_count(&server).await, 0);
}

// ---------------------------------------------------------------------------------------------
// Paths and methods

#[tokio::test]
async fn unknown_path_is_404_not_found_json() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for path in ["/api/nothing", "/api/reviews/x/y/z", "/no-such-page"] {
        let reply = ada.get(path).await;
        reply.expect_error(404, "not_found");
        assert!(
            reply
                .header("content-type")
                .is_some_and(|v| v.starts_with("application/json")),
            "{path}: {:?}",
            reply.headers
        );
    }
    server
        .client(None)
        .get("/api/nothing")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn wrong_method_on_a_known_path_is_405_json() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create_doc(&ada).await;
    let id = review.review_id.as_str();
    let version = review.latest_version_id.as_str();
    for (method, path) in [
        ("DELETE", "/api/reviews".to_string()),
        ("PUT", "/api/reviews".to_string()),
        ("POST", format!("/api/reviews/{id}/dom-context")),
        ("GET", "/api/reviews/import-html".to_string()),
        ("GET", format!("/api/reviews/{id}/import-html")),
        (
            "POST",
            format!("/api/reviews/{id}/versions/{version}/bundle"),
        ),
    ] {
        let reply = ada.send(ada.raw(method, &path)).await;
        assert_eq!(reply.status, 405, "{method} {path}: {}", reply.text);
        reply.expect_error(405, "method_not_allowed");
    }
    // Nothing was deleted.
    ada.api().review(id, false).await.expect("still there");
}

#[tokio::test]
async fn undecodable_percent_encoded_path_is_4xx_not_5xx() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create_doc(&ada).await;
    let id = review.review_id.as_str();
    for path in [
        "/api/reviews/%FF".to_string(),
        "/api/reviews/%C3%28".to_string(),
        "/api/reviews/%FF/dom-context".to_string(),
        format!("/api/reviews/{id}/versions/%FE%FF/bundle"),
        "/api/reviews/%FF/import-html".to_string(),
        "/api/reviews/%00".to_string(),
    ] {
        let reply = ada.get(&path).await;
        assert!(
            (400..500).contains(&reply.status),
            "{path}: {} {}",
            reply.status,
            reply.text
        );
        assert!(
            reply.json["error"].is_string(),
            "{path}: JSON error body: {}",
            reply.text
        );
    }
    let form =
        reqwest::multipart::Form::new().part("file", support::html_part(b"<p>x</p>", "x.html"));
    let reply = ada.multipart("/api/reviews/%FF/import-html", form).await;
    assert!((400..500).contains(&reply.status), "{}", reply.text);
}

// ---------------------------------------------------------------------------------------------
// Interface version

#[tokio::test]
async fn unknown_interface_version_is_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for version in ["1999-01-01", "2026-10-03", "latest", ""] {
        let request = ada
            .raw("GET", "/api/reviews")
            .header("x-cr-api-version", version);
        let reply = ada.send(request).await;
        reply.expect_error(400, "invalid_request");
        assert_eq!(reply.header("x-cr-api-version"), Some(API_VERSION));
    }
    // A refused create writes nothing.
    let request = ada
        .raw("POST", "/api/reviews")
        .header("x-cr-api-version", "1999-01-01")
        .json(&json!({ "review": {} }));
    ada.send(request).await.expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
    let request = ada
        .raw("GET", "/api/reviews")
        .header("x-cr-api-version", API_VERSION);
    ada.send(request).await.expect(200);
}

#[tokio::test]
async fn every_response_carries_the_interface_version() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let anonymous = server.client(None);
    let review = create_doc(&server.importer()).await;
    let id = review.review_id.as_str();
    let version = review.latest_version_id.as_str();
    let mut replies = vec![
        ("200 list", ada.get("/api/reviews").await),
        (
            "200 bundle",
            ada.get(&format!("/api/reviews/{id}/versions/{version}/bundle"))
                .await,
        ),
        (
            "201 create",
            ada.post("/api/reviews", &json!({ "review": {} })).await,
        ),
        ("400", ada.post("/api/reviews", &json!({})).await),
        ("401", anonymous.get("/api/reviews").await),
        ("403", server.manager().get("/api/reviews").await),
        ("404", ada.get("/api/reviews/rv_missing").await),
        ("404 path", anonymous.get("/nowhere").await),
        ("405", ada.delete("/api/reviews").await),
        (
            "413",
            ada.post(
                "/api/reviews",
                &json!({ "review": { "source": { "html": "a".repeat(2000) } } }),
            )
            .await,
        ),
        (
            "415",
            post_raw(&ada, "/api/reviews", Some("text/plain"), "{}").await,
        ),
    ];
    replies.push(("healthz", anonymous.get("/healthz").await));
    for (what, reply) in &replies {
        assert_eq!(
            reply.header("x-cr-api-version"),
            Some(API_VERSION),
            "{what} ({}) lacks x-cr-api-version",
            reply.status
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Token expiry

#[tokio::test]
async fn personal_token_responses_carry_the_expiry_header() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments");
    let before = now_ms();
    let replies = [
        ("200", ada.get("/api/reviews").await),
        ("404", ada.get("/api/reviews/rv_missing").await),
        (
            "403",
            ada.post("/api/reviews", &json!({ "review": {} })).await,
        ),
        ("400", ada.get("/api/reviews?limit=0").await),
    ];
    for (what, reply) in &replies {
        let expires = reply
            .header("x-cr-token-expires-at")
            .unwrap_or_else(|| panic!("{what} ({}) lacks x-cr-token-expires-at", reply.status));
        let at = rfc3339_ms(expires);
        let ninety_days = 90 * 24 * 3600 * 1000;
        assert!(
            (at - (before + ninety_days)).abs() < 10 * 60 * 1000,
            "{what}: expiry {expires} is not issue + 90 days"
        );
    }
    assert_eq!(replies[0].1.status, 200);
    assert_eq!(replies[1].1.status, 404);
}

/// docs/api.md: "on every response, errors included" — also where routing, not a handler,
/// answers (an unknown path, a wrong method).
#[tokio::test]
async fn personal_token_routing_errors_carry_the_expiry_header_too() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let big_html = json!({ "review": { "source": { "html": "a".repeat(1001) } } });
    let replies = [
        ("404 unknown path", ada.get("/api/nothing").await),
        ("405 wrong method", ada.delete("/api/reviews").await),
        ("413", ada.post("/api/reviews", &big_html).await),
        (
            "415",
            post_raw(&ada, "/api/reviews", Some("text/plain"), "{}").await,
        ),
    ];
    let lacking: Vec<String> = replies
        .iter()
        .filter(|(_, reply)| reply.header("x-cr-token-expires-at").is_none())
        .map(|(what, reply)| format!("{what} (got {})", reply.status))
        .collect();
    assert!(
        lacking.is_empty(),
        "responses without x-cr-token-expires-at: {lacking:?}"
    );
}

#[tokio::test]
async fn shared_token_and_anonymous_responses_have_no_expiry_header() {
    let server = Server::start();
    for client in [
        server.agent(),
        server.importer(),
        server.manager(),
        server.client(None),
    ] {
        let reply = client.get("/api/reviews").await;
        assert!(
            reply.header("x-cr-token-expires-at").is_none(),
            "status {}: {:?}",
            reply.status,
            reply.headers
        );
    }
}

#[tokio::test]
async fn expired_token_is_401_unauthorized() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.expired_token("ada@example.com", "docs");
    let expired = server.client(Some(&token));
    let api = expired.api();
    refused(
        api.list_reviews(&ListQuery::default()).await,
        401,
        "unauthorized",
    );
    let empty = CreateReview {
        review: ReviewInput::default(),
        project: None,
    };
    refused(api.create_review(&empty).await, 401, "unauthorized");
    refused(api.review("rv_missing", false).await, 401, "unauthorized");
    assert_eq!(document_count(&server).await, 0);
}

// ---------------------------------------------------------------------------------------------
// Operator commands

#[tokio::test]
async fn create_user_with_a_duplicate_email_fails_clearly() {
    let server = Server::start();
    let first = server.create_user("ada@example.com", "Ada", &[]);
    for email in ["ada@example.com", "ADA@Example.COM"] {
        let output = server.admin(&["create-user", "--email", email, "--name", "Other Ada"]);
        assert!(!output.status.success(), "a second {email} must be refused");
        let stderr = String::from_utf8_lossy(&output.stderr).to_lowercase();
        assert!(
            stderr.contains("already exists") && stderr.contains("ada@example.com"),
            "stderr should say the email is taken: {stderr}"
        );
        assert!(output.stdout.is_empty(), "no user id printed");
    }
    // The first account is untouched and still usable.
    let ada = server.client(Some(&server.issue_token("ada@example.com", "docs")));
    let review = create_doc(&ada).await;
    assert_eq!(review.owner.id, first);
    assert_eq!(review.owner.display_name, "Ada");
}

#[tokio::test]
async fn issue_token_with_an_unknown_scope_fails_clearly() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    for scopes in ["docs,admin", "everything", "Docs"] {
        let output = server.admin(&[
            "issue-token",
            "--email",
            "ada@example.com",
            "--scopes",
            scopes,
        ]);
        assert!(
            !output.status.success(),
            "--scopes {scopes} must be refused"
        );
        let stderr = String::from_utf8_lossy(&output.stderr).to_lowercase();
        assert!(
            stderr.contains("scope"),
            "stderr names the problem: {stderr}"
        );
        assert!(output.stdout.is_empty(), "no token printed");
    }
}

#[tokio::test]
async fn issue_token_for_an_unknown_user_or_bad_expiry_fails() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    for args in [
        vec!["issue-token", "--email", "nobody@example.com"],
        vec![
            "issue-token",
            "--email",
            "ada@example.com",
            "--expires-in-days",
            "91",
        ],
        vec![
            "issue-token",
            "--email",
            "ada@example.com",
            "--expires-in-days",
            "-1",
        ],
        // A token that expires at once would be dead on arrival.
        vec![
            "issue-token",
            "--email",
            "ada@example.com",
            "--expires-in-days",
            "0",
        ],
    ] {
        let output = server.admin(&args);
        assert!(!output.status.success(), "{args:?} must fail");
        assert!(output.stdout.is_empty(), "{args:?}: no token printed");
        assert!(!output.stderr.is_empty(), "{args:?}: says why");
    }
}

/// NUL reaches no database (PostgreSQL cannot even compare it): in a cursor, in ids inside JSON
/// bodies, in page paths, queries and forms, both backends answer the same 4xx.
#[tokio::test]
async fn nul_characters_are_refused_before_any_database() {
    use base64::Engine;
    let server = Server::start();
    server.create_user_with_password(
        "ada@example.com",
        "Ada",
        &["--admin"],
        "correct horse battery",
    );
    let ada = server.client(Some(
        &server.issue_token("ada@example.com", "docs,access,comments,org"),
    ));
    let nul_cursor = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("a\0b");
    let page = PageQuery {
        limit: None,
        cursor: Some(nul_cursor.clone()),
    };
    let api = ada.api();
    refused(api.projects(&page).await, 400, "invalid_request");
    refused(api.members(&page).await, 400, "invalid_request");
    refused(api.admins(&page).await, 400, "invalid_request");
    let list = ListQuery {
        cursor: Some(nul_cursor),
        ..ListQuery::default()
    };
    refused(api.list_reviews(&list).await, 400, "invalid_request");
    refused(api.my_tokens(&page).await, 400, "invalid_request");

    let id = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    let at_nul_version = NewComment {
        locator: Some(Locator {
            version_id: Some("ver_\u{0}x".to_string()),
            ..Locator::default()
        }),
        ..plain("x")
    };
    refused(
        api.add_comment(&id, &at_nul_version).await,
        400,
        "invalid_request",
    );
    let comment_id = api
        .add_comment(&id, &plain("first"))
        .await
        .expect("comment")
        .comment
        .id;
    let in_nul_run = NewReply {
        body: "reply".to_string(),
        run_id: Some("run_\u{0}".to_string()),
        base_comments_revision: None,
        base_thread_revision: None,
    };
    refused(
        api.reply(&id, &comment_id, &in_nul_run).await,
        400,
        "invalid_request",
    );
    let on_nul_version = StartRun {
        version_id: Some("\u{0}".to_string()),
        ..StartRun::default()
    };
    refused(
        server.agent().api().start_run(&id, &on_nul_version).await,
        400,
        "invalid_request",
    );
    // A backslash followed by the text "u0000" is ordinary text.
    let text = api
        .add_comment(&id, &plain("JSON writes NUL as \\u0000"))
        .await
        .expect("comment");
    assert_eq!(text.comment.body, "JSON writes NUL as \\u0000");

    // The web app's pages, queries and forms.
    let session = server
        .sign_in("ada@example.com", "correct horse battery")
        .await;
    assert_eq!(session.get("/reviews/rv_%00").await.status, 404);
    assert_eq!(session.get("/?tag=%00").await.status, 400);
    assert_eq!(
        session
            .get(&format!("/reviews/{id}?version=%00"))
            .await
            .status,
        400
    );
    let page = session.get("/org").await;
    let csrf = page
        .text
        .split("name=\"csrf-token\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's CSRF token")
        .to_string();
    let form = session
        .send(
            session
                .raw("POST", "/org/members/change")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!(
                    "csrf={csrf}&email=a%00b%40example.com&action=suspend"
                )),
        )
        .await;
    assert_eq!(form.status, 400, "{}", form.text);
}

/// Outside the API router too (the code exchange, health checks, pages), a method a path does
/// not have is the JSON error body, with `Allow`.
#[tokio::test]
async fn every_405_is_the_json_error_body() {
    let server = Server::start();
    let anonymous = server.client(None);
    for (method, path) in [
        ("PUT", "/api/auth/cli/token"),
        ("GET", "/api/auth/cli/token"),
        ("DELETE", "/healthz"),
        ("PATCH", "/login"),
        ("PUT", "/"),
    ] {
        let reply = anonymous.send(anonymous.raw(method, path)).await;
        reply.expect_error(405, "method_not_allowed");
        assert!(
            reply.header("allow").is_some(),
            "{method} {path}: no Allow header"
        );
    }
}

/// Sends `request` as raw bytes on a new connection and reads the whole answer (the server
/// closes the connection after refusing what it could not parse).
async fn raw_exchange(server: &Server, request: &[u8]) -> (String, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = server.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    stream.write_all(request).await.expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let answer = String::from_utf8(answer).expect("utf8");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let json = serde_json::from_str(body).unwrap_or_else(|_| panic!("a JSON body: {answer}"));
    (head.to_string(), json)
}

/// Requests the HTTP parser itself refuses (it answers before any route runs) still get the
/// JSON error body, with a content type and length that say so.
#[tokio::test]
async fn requests_the_parser_cannot_read_get_the_json_error_body() {
    let server = Server::start();
    let long_target = format!("GET /{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70 * 1024));
    let many_headers = format!(
        "GET /api/reviews HTTP/1.1\r\nhost: x\r\n{}\r\n",
        (0..450)
            .map(|i| format!("x-h{i}: v\r\n"))
            .collect::<String>()
    );
    for (request, status, code) in [
        (
            &b"\x01\x02 not http at all\r\n\r\n"[..],
            400,
            "invalid_request",
        ),
        (b"GET /api/reviews HTTP/9.9\r\n\r\n", 400, "invalid_request"),
        (
            b"GET /api/reviews HTTP/1.1\r\nbad header line\r\n\r\n",
            400,
            "invalid_request",
        ),
        (long_target.as_bytes(), 414, "uri_too_long"),
        (many_headers.as_bytes(), 431, "headers_too_large"),
    ] {
        let (head, body) = raw_exchange(&server, request).await;
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert_eq!(body["error"], code, "{body}");
        assert_eq!(body["status"], status, "{body}");
        assert!(body["message"].is_string(), "{body}");
    }
    // The server is still there for everyone else.
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.api()
        .list_reviews(&ListQuery::default())
        .await
        .expect("list");
}
