//! Multipart uploads: `POST /api/reviews/import-html` (new document) and
//! `POST /api/reviews/{id}/import-html` (add a version or replace the latest), their validation,
//! size limits, permissions, and the re-anchoring of comments onto the new body.

use crate::support;

use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, html_part};

fn file_form(html: &[u8], file_name: &str) -> Form {
    Form::new().part("file", html_part(html, file_name))
}

async fn import(client: &Client, form: Form) -> support::Reply {
    client.multipart("/api/reviews/import-html", form).await
}

async fn import_version(client: &Client, review_id: &str, form: Form) -> support::Reply {
    client
        .multipart(&format!("/api/reviews/{review_id}/import-html"), form)
        .await
}

async fn create(client: &Client, html: &str, mode: &str) -> Value {
    let reply = client
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Doc", "access": { "mode": mode },
                                 "source": { "html": html } } }),
        )
        .await;
    reply.expect(201)["review"].clone()
}

fn id_of(review: &Value) -> String {
    review["reviewId"].as_str().expect("reviewId").to_string()
}

fn versions(review: &Value) -> &Vec<Value> {
    review["source"]["versions"].as_array().expect("versions")
}

async fn read(client: &Client, review_id: &str) -> Value {
    let reply = client.get(&format!("/api/reviews/{review_id}")).await;
    reply.expect(200)["review"].clone()
}

async fn bundle_text(client: &Client, review_id: &str, version_id: &str) -> String {
    let reply = client
        .get(&format!(
            "/api/reviews/{review_id}/versions/{version_id}/bundle"
        ))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.text
}

/// How many documents the import token can see (it sees them all).
async fn document_count(server: &Server) -> usize {
    let reply = server.importer().get("/api/reviews?limit=200").await;
    reply.expect(200)["reviews"]
        .as_array()
        .expect("reviews")
        .len()
}

// ---------------------------------------------------------------------------------------------
// New documents

#[tokio::test]
async fn import_html_creates_a_document_titled_after_the_file() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = import(
        &ada,
        file_form(SAMPLE_HTML.as_bytes(), "Quarterly Report.html"),
    )
    .await;
    let review = reply.expect(201)["review"].clone();
    assert_eq!(review["title"], "Quarterly Report");
    assert_eq!(review["role"], "owner");
    assert_eq!(versions(&review).len(), 1);
    assert_eq!(versions(&review)[0]["label"], "v1");
    let id = id_of(&review);
    let stored = read(&ada, &id).await;
    assert_eq!(stored["title"], "Quarterly Report");
    let latest = stored["latestVersionId"].as_str().expect("latest");
    assert_eq!(bundle_text(&ada, &id, latest).await, SAMPLE_HTML);
}

#[tokio::test]
async fn import_html_without_a_file_name_is_titled_after_the_first_heading() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let part = Part::bytes(SAMPLE_HTML.as_bytes().to_vec())
        .mime_str("text/html")
        .expect("mime");
    let review = import(&ada, Form::new().part("file", part))
        .await
        .expect(201)["review"]
        .clone();
    assert_eq!(review["title"], "Introduction");
}

#[tokio::test]
async fn import_html_title_and_label_fields_win() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let form = file_form(SAMPLE_HTML.as_bytes(), "ignored.html")
        .text("title", "Chosen title")
        .text("label", "draft-1");
    let review = import(&ada, form).await.expect(201)["review"].clone();
    assert_eq!(review["title"], "Chosen title");
    assert_eq!(versions(&review)[0]["label"], "draft-1");
}

#[tokio::test]
async fn import_html_tags_come_from_repeated_and_comma_separated_fields() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let form = file_form(SAMPLE_HTML.as_bytes(), "t.html")
        .text("tags", "alpha, beta")
        .text("tags", "gamma")
        .text("tags", "alpha");
    let review = import(&ada, form).await.expect(201)["review"].clone();
    assert_eq!(review["tags"], json!(["alpha", "beta", "gamma"]));
    let stored = read(&ada, &id_of(&review)).await;
    assert_eq!(stored["tags"], json!(["alpha", "beta", "gamma"]));
    let listed = ada.get("/api/reviews?tag=gamma").await;
    assert_eq!(
        listed.expect(200)["reviews"][0]["reviewId"],
        review["reviewId"]
    );
}

#[tokio::test]
async fn import_html_by_the_import_token_is_owned_by_the_service_principal() {
    let server = Server::start();
    let reply = import(
        &server.importer(),
        file_form(SAMPLE_HTML.as_bytes(), "delivery.html"),
    )
    .await;
    let review = reply.expect(201)["review"].clone();
    assert_eq!(review["owner"]["id"], "svc_import");
    assert_eq!(review["title"], "delivery");
}

#[tokio::test]
async fn import_html_by_manage_or_agent_token_is_403_forbidden() {
    let server = Server::start();
    for client in [server.manager(), server.agent()] {
        import(&client, file_form(SAMPLE_HTML.as_bytes(), "x.html"))
            .await
            .expect_error(403, "forbidden");
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_without_docs_scope_is_403_insufficient_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments,access");
    import(&ada, file_form(SAMPLE_HTML.as_bytes(), "x.html"))
        .await
        .expect_error(403, "insufficient_scope");
    import(
        &server.client(None),
        file_form(SAMPLE_HTML.as_bytes(), "x.html"),
    )
    .await
    .expect_error(401, "unauthorized");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_project_rules_match_json_create() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    import(&xena, file_form(SAMPLE_HTML.as_bytes(), "x.html"))
        .await
        .expect_error(403, "project_required");
    import(
        &ada,
        file_form(SAMPLE_HTML.as_bytes(), "x.html").text("project", "lower-case"),
    )
    .await
    .expect_error(400, "invalid_request");
    import(
        &ada,
        file_form(SAMPLE_HTML.as_bytes(), "x.html").text("project", "NOPE-1"),
    )
    .await
    .expect_error(404, "project_not_found");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_without_a_file_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    import(&ada, Form::new().text("title", "No file"))
        .await
        .expect_error(400, "invalid_request");
    import(&ada, Form::new())
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_with_two_files_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let form =
        file_form(SAMPLE_HTML.as_bytes(), "a.html").part("file", html_part(b"<p>b</p>", "b.html"));
    import(&ada, form)
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_with_an_unknown_field_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for field in ["mode", "reviewId", "Title", "color"] {
        let form = file_form(SAMPLE_HTML.as_bytes(), "x.html").text(field, "x");
        import(&ada, form)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_with_non_utf8_bytes_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    import(&ada, file_form(&[0xff, 0xfe, 0x00], "utf16.html"))
        .await
        .expect_error(400, "invalid_request");
    // Latin-1 "é" inside otherwise ASCII markup.
    import(&ada, file_form(b"<p>caf\xe9</p>", "latin1.html"))
        .await
        .expect_error(400, "invalid_request");
    // A text field that is not UTF-8.
    let form =
        file_form(SAMPLE_HTML.as_bytes(), "x.html").part("title", Part::bytes(vec![0x80, 0x81]));
    import(&ada, form)
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_that_is_not_multipart_is_415() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.post("/api/reviews/import-html", &json!({ "file": SAMPLE_HTML }))
        .await
        .expect_error(415, "unsupported_media_type");
    let raw = ada
        .raw("POST", "/api/reviews/import-html")
        .header("content-type", "text/html")
        .body(SAMPLE_HTML);
    ada.send(raw)
        .await
        .expect_error(415, "unsupported_media_type");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_with_a_broken_multipart_body_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let raw = ada
        .raw("POST", "/api/reviews/import-html")
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body("--XYZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n<p>cut off");
    let reply = ada.send(raw).await;
    reply.expect_error(400, "invalid_request");
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_over_the_size_limit_is_413() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let at_limit = format!("<p>{}</p>", "a".repeat(1000 - 7));
    assert_eq!(at_limit.len(), 1000);
    import(&ada, file_form(at_limit.as_bytes(), "ok.html"))
        .await
        .expect(201);
    let over = format!("<p>{}</p>", "a".repeat(1001 - 7));
    import(&ada, file_form(over.as_bytes(), "big.html"))
        .await
        .expect_error(413, "payload_too_large");
    assert_eq!(document_count(&server).await, 1);
}

/// Sends 20 uploads built by `form`; returns what each got (`"413 payload_too_large"`,
/// or "no response: …" when the connection was dropped instead of answered).
async fn oversized_outcomes(client: &Client, path: &str, form: impl Fn() -> Form) -> Vec<String> {
    let mut outcomes = Vec::new();
    for _ in 0..20 {
        let outcome = client.raw("POST", path).multipart(form()).send().await;
        outcomes.push(match outcome {
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                format!("{status} {}", json["error"].as_str().unwrap_or("?"))
            }
            Err(error) => format!("no response: {error:?}"),
        });
    }
    outcomes
}

/// DESIGN.md §5: no request, however malformed, drops the connection. An upload far beyond
/// the limit (HTML limit + 1 MiB) must be answered with 413 every time, not with a reset.
#[tokio::test]
async fn import_html_far_over_the_limit_is_answered_413_every_time() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let huge = vec![b'a'; 8 << 20];
    let outcomes = oversized_outcomes(&ada, "/api/reviews/import-html", || {
        file_form(&huge, "huge.html")
    })
    .await;
    assert!(
        outcomes.iter().all(|o| o == "413 payload_too_large"),
        "every oversized upload needs a 413 answer: {outcomes:#?}"
    );
    // The server is still fine afterwards.
    import(&ada, file_form(b"<p>small</p>", "small.html"))
        .await
        .expect(201);
    assert_eq!(document_count(&server).await, 1);
}

#[tokio::test]
async fn add_version_far_over_the_limit_is_answered_413_every_time() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, "<p>small</p>", "link").await;
    let id = id_of(&review);
    let huge = vec![b'a'; 8 << 20];
    let path = format!("/api/reviews/{id}/import-html");
    let outcomes = oversized_outcomes(&ada, &path, || file_form(&huge, "huge.html")).await;
    assert!(
        outcomes.iter().all(|o| o == "413 payload_too_large"),
        "every oversized upload needs a 413 answer: {outcomes:#?}"
    );
    assert_eq!(versions(&read(&ada, &id).await).len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Versions of an existing document

#[tokio::test]
async fn add_version_answers_201_with_two_versions_and_default_label() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let first = versions(&review)[0].clone();
    let v2_html = SAMPLE_HTML.replace("lazy dog", "sleepy cat");
    let reply = import_version(&ada, &id, file_form(v2_html.as_bytes(), "v2.html")).await;
    let updated = reply.expect(201)["review"].clone();
    let list = versions(&updated);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0], first, "the first version is unchanged");
    assert_eq!(list[1]["label"], "v2");
    assert_ne!(list[1]["versionId"], first["versionId"]);
    assert_ne!(list[1]["sourceHash"], first["sourceHash"]);
    assert_eq!(updated["latestVersionId"], list[1]["versionId"]);
    // Even without comments, a new body is one comment change (clients notice it).
    assert_eq!(updated["commentsRevision"], 1);

    let stored = read(&ada, &id).await;
    assert_eq!(stored["source"], updated["source"]);
    let v1 = first["versionId"].as_str().expect("v1");
    let v2 = list[1]["versionId"].as_str().expect("v2");
    assert_eq!(bundle_text(&ada, &id, v1).await, SAMPLE_HTML);
    assert_eq!(bundle_text(&ada, &id, v2).await, v2_html);

    let third = import_version(&ada, &id, file_form(b"<p>3</p>", "v3.html")).await;
    assert_eq!(versions(&third.expect(201)["review"])[2]["label"], "v3");
}

#[tokio::test]
async fn add_version_with_a_label_uses_it() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "link").await);
    let form = file_form(b"<p>x</p>", "x.html")
        .text("label", "final")
        .text("mode", "add_version");
    let reply = import_version(&ada, &id, form).await;
    assert_eq!(versions(&reply.expect(201)["review"])[1]["label"], "final");
}

#[tokio::test]
async fn replace_keeps_the_version_id_and_changes_the_hash() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let before = versions(&review)[0].clone();
    let new_html = SAMPLE_HTML.replace("Second paragraph", "Rewritten paragraph");
    let form = file_form(new_html.as_bytes(), "fixed.html").text("mode", "replace");
    let reply = import_version(&ada, &id, form).await;
    let updated = reply.expect(200)["review"].clone();
    let list = versions(&updated);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["versionId"], before["versionId"]);
    assert_eq!(list[0]["label"], before["label"]);
    assert_ne!(list[0]["sourceHash"], before["sourceHash"]);
    assert_eq!(updated["latestVersionId"], before["versionId"]);
    assert_eq!(
        updated["commentsRevision"], 1,
        "a new body is one comment change"
    );

    let stored = read(&ada, &id).await;
    assert_eq!(stored["source"], updated["source"]);
    let version = before["versionId"].as_str().expect("version");
    assert_eq!(bundle_text(&ada, &id, version).await, new_html);
}

#[tokio::test]
async fn unknown_mode_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "link").await);
    for mode in ["append", "REPLACE", "add-version"] {
        let form = file_form(b"<p>x</p>", "x.html").text("mode", mode);
        import_version(&ada, &id, form)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(versions(&read(&ada, &id).await).len(), 1);
}

#[tokio::test]
async fn stale_base_version_is_409_with_the_latest_version_id() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let v1 = review["latestVersionId"].as_str().expect("v1").to_string();

    // Based on the latest: accepted.
    let form = file_form(b"<p>two</p>", "2.html").text("baseVersionId", v1.clone());
    let second = import_version(&ada, &id, form).await;
    let v2 = second.expect(201)["review"]["latestVersionId"].clone();

    // Based on the first again: stale.
    let form = file_form(b"<p>three</p>", "3.html").text("baseVersionId", v1.clone());
    let reply = import_version(&ada, &id, form).await;
    let body = reply.expect_error(409, "stale_target_version");
    assert_eq!(body["latestVersionId"], v2);

    // Replacing, too, is a write aimed at a version.
    let form = file_form(b"<p>three</p>", "3.html")
        .text("baseVersionId", v1.clone())
        .text("mode", "replace");
    let reply = import_version(&ada, &id, form).await;
    let body = reply.expect_error(409, "stale_target_version");
    assert_eq!(body["latestVersionId"], v2);

    let stored = read(&ada, &id).await;
    assert_eq!(versions(&stored).len(), 2);
    assert_eq!(stored["latestVersionId"], v2);
    let latest = v2.as_str().expect("v2");
    assert_eq!(bundle_text(&ada, &id, latest).await, "<p>two</p>");
}

#[tokio::test]
async fn concurrent_uploads_on_the_same_base_version_admit_exactly_one() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let v1 = review["latestVersionId"].as_str().expect("v1").to_string();
    let uploads = (0..6).map(|n| {
        let form = file_form(format!("<p>racer {n}</p>").as_bytes(), "r.html")
            .text("baseVersionId", v1.clone());
        import_version(&ada, &id, form)
    });
    let replies = futures::future::join_all(uploads).await;
    let winners: Vec<&support::Reply> = replies.iter().filter(|r| r.status == 201).collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one upload on v1 wins: {replies:?}"
    );
    let latest = winners[0].json["review"]["latestVersionId"].clone();
    for reply in replies.iter().filter(|r| r.status != 201) {
        let body = reply.expect_error(409, "stale_target_version");
        assert_eq!(body["latestVersionId"], latest);
    }
    let stored = read(&ada, &id).await;
    assert_eq!(versions(&stored).len(), 2);
    assert_eq!(stored["latestVersionId"], latest);
    assert_eq!(stored["commentsRevision"], 1);
}

#[tokio::test]
async fn concurrent_uploads_without_a_base_all_land_in_order() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let uploads = (0..6).map(|n| {
        let form = file_form(format!("<p>racer {n}</p>").as_bytes(), "r.html");
        import_version(&ada, &id, form)
    });
    for reply in futures::future::join_all(uploads).await {
        reply.expect(201);
    }
    let stored = read(&ada, &id).await;
    let list = versions(&stored);
    assert_eq!(list.len(), 7);
    let labels: Vec<&str> = list
        .iter()
        .map(|v| v["label"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, vec!["v1", "v2", "v3", "v4", "v5", "v6", "v7"]);
    let unique: std::collections::HashSet<&Value> = list.iter().map(|v| &v["versionId"]).collect();
    assert_eq!(unique.len(), 7);
    assert_eq!(stored["latestVersionId"], list[6]["versionId"]);
    assert_eq!(
        stored["commentsRevision"], 6,
        "each new body is exactly one comment change"
    );
}

#[tokio::test]
async fn version_upload_without_file_unknown_field_or_json_body_is_rejected() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "link").await);
    import_version(&ada, &id, Form::new().text("label", "x"))
        .await
        .expect_error(400, "invalid_request");
    import_version(
        &ada,
        &id,
        file_form(b"<p>x</p>", "x.html").text("title", "t"),
    )
    .await
    .expect_error(400, "invalid_request");
    import_version(&ada, &id, file_form(&[0xff, 0xfe, 0x00], "x.html"))
        .await
        .expect_error(400, "invalid_request");
    ada.post(
        &format!("/api/reviews/{id}/import-html"),
        &json!({ "file": "<p>x</p>" }),
    )
    .await
    .expect_error(415, "unsupported_media_type");
    assert_eq!(versions(&read(&ada, &id).await).len(), 1);
}

#[tokio::test]
async fn version_over_the_size_limit_is_413() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = id_of(&create(&ada, "<p>small</p>", "link").await);
    let over = vec![b'a'; 1001];
    import_version(&ada, &id, file_form(&over, "big.html"))
        .await
        .expect_error(413, "payload_too_large");
    let form = file_form(&over, "big.html").text("mode", "replace");
    import_version(&ada, &id, form)
        .await
        .expect_error(413, "payload_too_large");
    let stored = read(&ada, &id).await;
    assert_eq!(versions(&stored).len(), 1);
    let latest = stored["latestVersionId"].as_str().expect("latest");
    assert_eq!(bundle_text(&ada, &id, latest).await, "<p>small</p>");
}

#[tokio::test]
async fn viewer_adding_a_version_is_403_forbidden() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "link").await);
    import_version(&bob, &id, file_form(b"<p>x</p>", "x.html"))
        .await
        .expect_error(403, "forbidden");
    let form = file_form(b"<p>x</p>", "x.html").text("mode", "replace");
    import_version(&bob, &id, form)
        .await
        .expect_error(403, "forbidden");
    assert_eq!(versions(&read(&ada, &id).await).len(), 1);
}

#[tokio::test]
async fn shared_editor_may_add_a_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let eve = server.user("eve@example.com", "Eve", &[], "docs");
    let reply = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "access": { "mode": "restricted",
                "allowedUsers": [{ "email": "eve@example.com", "role": "editor" }] } } }),
        )
        .await;
    let id = id_of(&reply.expect(201)["review"]);
    import_version(&eve, &id, file_form(b"<p>x</p>", "x.html"))
        .await
        .expect(201);
    assert_eq!(versions(&read(&ada, &id).await).len(), 2);
}

#[tokio::test]
async fn version_upload_to_an_invisible_or_missing_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "restricted").await);
    import_version(&bob, &id, file_form(b"<p>x</p>", "x.html"))
        .await
        .expect_error(404, "not_found");
    import_version(&ada, "rv_missing", file_form(b"<p>x</p>", "x.html"))
        .await
        .expect_error(404, "not_found");
    assert_eq!(versions(&read(&ada, &id).await).len(), 1);
}

#[tokio::test]
async fn import_token_may_add_a_version_but_manage_and_agent_may_not() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = id_of(&create(&ada, SAMPLE_HTML, "restricted").await);
    for client in [server.manager(), server.agent()] {
        import_version(&client, &id, file_form(b"<p>x</p>", "x.html"))
            .await
            .expect_error(403, "forbidden");
    }
    let reply = import_version(&server.importer(), &id, file_form(b"<p>x</p>", "x.html")).await;
    assert_eq!(versions(&reply.expect(201)["review"]).len(), 2);
    assert_eq!(versions(&read(&ada, &id).await).len(), 2);
}

#[tokio::test]
async fn version_upload_without_docs_scope_is_403_before_lookup() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reader = server.user("bob@example.com", "Bob", &[], "comments");
    let id = id_of(&create(&ada, SAMPLE_HTML, "restricted").await);
    // Visible or not, existing or not: the scope is checked first, so nothing leaks.
    for target in [id.as_str(), "rv_missing"] {
        import_version(&reader, target, file_form(b"<p>x</p>", "x.html"))
            .await
            .expect_error(403, "insufficient_scope");
    }
}

// ---------------------------------------------------------------------------------------------
// Re-anchoring

const V1: &str = "<h1 id=\"a\">Alpha</h1><p>Opening words that never change at all.</p>\
<h1 id=\"b\">Beta</h1><p>Budgets for the coming quarter must be approved by the finance committee.</p>\
<h1 id=\"c\">Gamma</h1><p>Closing words that also never change.</p>\
<p>The quick brown fox jumps over the lazy dog.</p>\
<h1 id=\"d\">Delta</h1><p>This paragraph will be deleted entirely from the document.</p>";

/// V1 with one word of the budget sentence changed (its surroundings intact), the fox
/// sentence moved from Gamma to Delta, and the last paragraph deleted.
const V2: &str = "<h1 id=\"a\">Alpha</h1><p>Opening words that never change at all.</p>\
<h1 id=\"b\">Beta</h1><p>Budgets for the next quarter must be approved by the finance committee.</p>\
<h1 id=\"c\">Gamma</h1><p>Closing words that also never change.</p>\
<h1 id=\"d\">Delta</h1><p>The quick brown fox jumps over the lazy dog.</p>";

/// The code-point offset of `needle` in the concatenated text of V2.
fn offset_in_v2(needle: &str) -> u64 {
    let text = "AlphaOpening words that never change at all.\
BetaBudgets for the next quarter must be approved by the finance committee.\
GammaClosing words that also never change.\
DeltaThe quick brown fox jumps over the lazy dog.";
    let byte = text.find(needle).expect("needle in V2 text");
    text[..byte].chars().count() as u64
}

const MOVED: &str = "quick brown fox jumps over the lazy dog";
const EDITED: &str = "Budgets for the coming quarter must be approved by the finance committee";
const DELETED: &str = "This paragraph will be deleted entirely";

/// Writes the three comments on V1; returns the review id and the V1 version id.
async fn document_with_three_comments(ada: &Client) -> (String, String) {
    let review = create(ada, V1, "link").await;
    let id = id_of(&review);
    for quote in [MOVED, EDITED, DELETED] {
        let written = ada.comment_on(&id, quote, quote).await;
        assert_eq!(written["comment"]["anchor"]["state"], "exact");
    }
    let v1 = review["latestVersionId"].as_str().expect("v1").to_string();
    (id, v1)
}

fn comment_on<'a>(review: &'a Value, body: &str) -> &'a Value {
    review["comments"]
        .as_array()
        .expect("comments")
        .iter()
        .find(|c| c["body"] == body)
        .unwrap_or_else(|| panic!("no comment {body:?} in {review}"))
}

fn check_reanchored(review: &Value, v1: &str, v2: &str) {
    let moved = &comment_on(review, MOVED)["anchor"];
    assert_eq!(moved["state"], "exact", "{moved}");
    assert_eq!(moved["versionId"], v2);
    assert_eq!(moved["sectionId"], "d");
    let start = offset_in_v2(MOVED);
    assert_eq!(
        moved["position"],
        json!({ "start": start, "end": start + MOVED.chars().count() as u64 })
    );
    assert_eq!(moved["quote"]["exact"], MOVED);

    let edited = &comment_on(review, EDITED)["anchor"];
    assert_eq!(edited["state"], "fuzzy", "{edited}");
    assert_eq!(edited["versionId"], v2);
    assert_eq!(edited["sectionId"], "b");
    assert_eq!(
        edited["quote"]["exact"], EDITED,
        "the original quote is kept"
    );
    let sentence = offset_in_v2("Budgets for the next");
    let start = edited["position"]["start"].as_u64().expect("start");
    let end = edited["position"]["end"].as_u64().expect("end");
    let sentence_end = sentence
        + "Budgets for the next quarter must be approved by the finance committee".len() as u64;
    assert!(
        start >= sentence.saturating_sub(2)
            && start <= sentence + 2
            && end <= sentence_end + 2
            && end + 2 >= sentence_end,
        "fuzzy match {start}..{end} should cover the edited sentence {sentence}..{sentence_end}"
    );

    let deleted = &comment_on(review, DELETED)["anchor"];
    assert_eq!(deleted["state"], "orphaned", "{deleted}");
    assert_eq!(deleted["position"], Value::Null);
    assert_eq!(deleted["versionId"], v2);
    assert_eq!(deleted["quote"]["exact"], DELETED);

    for body in [MOVED, EDITED, DELETED] {
        assert_eq!(
            comment_on(review, body)["versionId"],
            v1,
            "Comment.versionId stays the version the comment was written on"
        );
    }
}

#[tokio::test]
async fn adding_a_version_reanchors_comments_exact_fuzzy_and_orphaned() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let (id, v1) = document_with_three_comments(&ada).await;
    let reply = import_version(&ada, &id, file_form(V2.as_bytes(), "v2.html")).await;
    let updated = reply.expect(201)["review"].clone();
    let v2 = updated["latestVersionId"].as_str().expect("v2").to_string();
    assert_ne!(v1, v2);
    assert_eq!(
        updated["commentsRevision"], 4,
        "three comments, then one re-anchoring"
    );
    check_reanchored(&updated, &v1, &v2);
    let stored = read(&ada, &id).await;
    check_reanchored(&stored, &v1, &v2);
    assert_eq!(stored["comments"], updated["comments"]);
}

#[tokio::test]
async fn replacing_the_body_reanchors_comments_too() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let (id, v1) = document_with_three_comments(&ada).await;
    let form = file_form(V2.as_bytes(), "v1-fixed.html").text("mode", "replace");
    let reply = import_version(&ada, &id, form).await;
    let updated = reply.expect(200)["review"].clone();
    assert_eq!(updated["latestVersionId"], v1.as_str());
    assert_eq!(updated["commentsRevision"], 4);
    check_reanchored(&updated, &v1, &v1);
    check_reanchored(&read(&ada, &id).await, &v1, &v1);
}
