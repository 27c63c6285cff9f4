//! Multipart uploads: `POST /api/reviews/import-html` (new document) and
//! `POST /api/reviews/{id}/import-html` (add a version or replace the latest), their validation,
//! size limits, permissions, and the re-anchoring of comments onto the new body.
//!
//! Uploads go through the typed client (`import_html`, `import_version`); the raw multipart
//! helpers send only what it cannot: a file part without a file name, repeated or unknown
//! fields, no file or two files, a text field that is not UTF-8, an unknown `mode`, bodies that
//! are not multipart or are cut off, and floods of oversized uploads whose point is that each is
//! answered rather than reset. Three raw uploads are kept because their status is the point:
//! adding a version without a `mode` field answers 201, replacing answers 200; their answers are
//! still read as the typed `Review`.

use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, AnchorState, CreateReview, GrantRole, ListQuery,
    Position, ReviewBody, ReviewInput, ReviewView, Role, VersionMode,
};
use docreview_client::{DocumentUpload, Error, HtmlFile, VersionUpload};

use crate::support::{Client, Reply, SAMPLE_HTML, Server, html_part, refused};

fn file_form(html: &[u8], file_name: &str) -> Form {
    Form::new().part("file", html_part(html, file_name))
}

/// A raw upload of a new document (for multipart bodies the typed client cannot send).
async fn import_raw(client: &Client, form: Form) -> Reply {
    client.multipart("/api/reviews/import-html", form).await
}

/// A raw version upload (for multipart bodies the typed client cannot send).
async fn import_version_raw(client: &Client, review_id: &str, form: Form) -> Reply {
    client
        .multipart(&format!("/api/reviews/{review_id}/import-html"), form)
        .await
}

fn html_file(html: &[u8], file_name: &str) -> HtmlFile {
    HtmlFile {
        name: file_name.to_string(),
        bytes: html.to_vec(),
    }
}

/// Uploads `html` as a new document through the typed client.
async fn import(
    client: &Client,
    html: &[u8],
    file_name: &str,
    fields: &DocumentUpload,
) -> docreview_client::Result<ReviewView> {
    client
        .api()
        .import_html(&html_file(html, file_name), fields)
        .await
}

/// Adds `html` as a new version (`label` or the default) through the typed client.
async fn add_version(
    client: &Client,
    review_id: &str,
    html: &[u8],
    label: Option<&str>,
    base: Option<&str>,
) -> docreview_client::Result<ReviewView> {
    let upload = VersionUpload {
        mode: VersionMode::AddVersion,
        label: label.map(str::to_string),
        base_version_id: base.map(str::to_string),
    };
    client
        .api()
        .import_version(review_id, &html_file(html, "v.html"), &upload)
        .await
}

/// Replaces the latest version's body with `html` through the typed client.
async fn replace(
    client: &Client,
    review_id: &str,
    html: &[u8],
    base: Option<&str>,
) -> docreview_client::Result<ReviewView> {
    let upload = VersionUpload {
        mode: VersionMode::Replace,
        label: None,
        base_version_id: base.map(str::to_string),
    };
    client
        .api()
        .import_version(review_id, &html_file(html, "r.html"), &upload)
        .await
}

/// The typed `Review` of a raw answer, after asserting its status.
#[track_caller]
fn review_of(reply: &Reply, status: u16) -> ReviewView {
    let body: ReviewBody =
        serde_json::from_value(reply.expect(status).clone()).expect("a { review } answer");
    body.review
}

async fn read(client: &Client, review_id: &str) -> ReviewView {
    client.api().review(review_id, false).await.expect("read")
}

async fn bundle_text(client: &Client, review_id: &str, version_id: &str) -> String {
    client
        .api()
        .bundle(review_id, version_id)
        .await
        .expect("bundle")
}

/// A typed value as JSON, to compare values whose types do not implement `PartialEq`.
fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("serializable")
}

/// How many documents the import token can see (it sees them all).
async fn document_count(server: &Server) -> usize {
    let query = ListQuery {
        limit: Some(200),
        ..ListQuery::default()
    };
    let list = server.importer().api().list_reviews(&query).await;
    list.expect("list").reviews.len()
}

// ---------------------------------------------------------------------------------------------
// New documents

#[tokio::test]
async fn import_html_creates_a_document_titled_after_its_title_element() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = import(
        &ada,
        SAMPLE_HTML.as_bytes(),
        "Quarterly Report.html",
        &DocumentUpload::default(),
    )
    .await
    .expect("import");
    assert_eq!(review.title, "Sample", "the HTML's <title> comes first");
    assert_eq!(review.role, Role::Owner);
    assert_eq!(review.source.versions.len(), 1);
    assert_eq!(review.source.versions[0].label, "v1");
    let id = review.review_id;
    let stored = read(&ada, &id).await;
    assert_eq!(stored.title, "Sample");
    assert_eq!(
        bundle_text(&ada, &id, &stored.latest_version_id).await,
        SAMPLE_HTML
    );
}

/// A document's title, when none is given: its `<title>`, then its first `<h1>`, then the
/// file's name, then its first heading; "Untitled" when it has none of them.
#[tokio::test]
async fn an_untitled_upload_is_named_by_its_h1_then_its_file_then_any_heading() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for (html, file_name, title) in [
        (
            "<title>  Launch \n plan </title><h1>Heading</h1>",
            "file.html",
            "Launch plan",
        ),
        (
            "<title> </title><h2>Aside</h2><h1>Plan for Q3</h1>",
            "file.html",
            "Plan for Q3",
        ),
        (
            "<h2>Only a second level</h2><p>x</p>",
            "Quarterly Report.html",
            "Quarterly Report",
        ),
        (
            "<svg><title>A chart</title></svg><p>x</p>",
            "chart.htm",
            "chart",
        ),
    ] {
        let review = import(&ada, html.as_bytes(), file_name, &DocumentUpload::default())
            .await
            .expect("import");
        assert_eq!(review.title, title, "{html} from {file_name}");
    }
    // Without a file name (raw: the typed client always names the file).
    for (html, title) in [
        (
            "<h2>Only a second level</h2><p>x</p>",
            "Only a second level",
        ),
        ("<p>No heading at all.</p>", "Untitled"),
    ] {
        let part = Part::bytes(html.as_bytes().to_vec())
            .mime_str("text/html")
            .expect("mime");
        let reply = import_raw(&ada, Form::new().part("file", part)).await;
        assert_eq!(review_of(&reply, 201).title, title, "{html}");
    }
    // Created from JSON with no title: the same rule.
    let created = ada
        .create(docreview_client::api::ReviewInput {
            title: None,
            ..crate::support::review_input("ignored", "<title>From JSON</title><h1>H</h1>")
        })
        .await;
    assert_eq!(created.title, "From JSON");
}

#[tokio::test]
async fn import_html_without_a_file_name_is_titled_after_its_title_element() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // Raw: the typed client always names the file.
    let part = Part::bytes(SAMPLE_HTML.as_bytes().to_vec())
        .mime_str("text/html")
        .expect("mime");
    let reply = import_raw(&ada, Form::new().part("file", part)).await;
    assert_eq!(review_of(&reply, 201).title, "Sample");
}

#[tokio::test]
async fn import_html_title_and_label_fields_win() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let fields = DocumentUpload {
        title: Some("Chosen title".to_string()),
        label: Some("draft-1".to_string()),
        ..DocumentUpload::default()
    };
    let review = import(&ada, SAMPLE_HTML.as_bytes(), "ignored.html", &fields)
        .await
        .expect("import");
    assert_eq!(review.title, "Chosen title");
    assert_eq!(review.source.versions[0].label, "draft-1");
}

#[tokio::test]
async fn import_html_tags_come_from_repeated_and_comma_separated_fields() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // Raw: the typed client sends one comma-separated `tags` field, never repeated ones.
    let form = file_form(SAMPLE_HTML.as_bytes(), "t.html")
        .text("tags", "alpha, beta")
        .text("tags", "gamma")
        .text("tags", "alpha");
    let review = review_of(&import_raw(&ada, form).await, 201);
    assert_eq!(review.tags, ["alpha", "beta", "gamma"]);
    let stored = read(&ada, &review.review_id).await;
    assert_eq!(stored.tags, ["alpha", "beta", "gamma"]);
    let query = ListQuery {
        tag: Some("gamma".to_string()),
        ..ListQuery::default()
    };
    let listed = ada.api().list_reviews(&query).await.expect("list");
    assert_eq!(listed.reviews[0].review_id, review.review_id);
}

#[tokio::test]
async fn import_html_by_the_import_token_is_owned_by_the_service_principal() {
    let server = Server::start();
    let review = import(
        &server.importer(),
        SAMPLE_HTML.as_bytes(),
        "delivery.html",
        &DocumentUpload::default(),
    )
    .await
    .expect("import");
    assert_eq!(review.owner.id, "svc_import");
    assert_eq!(review.title, "Sample");
}

#[tokio::test]
async fn import_html_by_manage_or_agent_token_is_403_forbidden() {
    let server = Server::start();
    for client in [server.manager(), server.agent()] {
        let attempt = import(
            &client,
            SAMPLE_HTML.as_bytes(),
            "x.html",
            &DocumentUpload::default(),
        )
        .await;
        refused(attempt, 403, "forbidden");
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_without_docs_scope_is_403_insufficient_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments,access");
    let fields = DocumentUpload::default();
    refused(
        import(&ada, SAMPLE_HTML.as_bytes(), "x.html", &fields).await,
        403,
        "insufficient_scope",
    );
    refused(
        import(
            &server.client(None),
            SAMPLE_HTML.as_bytes(),
            "x.html",
            &fields,
        )
        .await,
        401,
        "unauthorized",
    );
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_project_rules_match_json_create() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    refused(
        import(
            &xena,
            SAMPLE_HTML.as_bytes(),
            "x.html",
            &DocumentUpload::default(),
        )
        .await,
        403,
        "project_required",
    );
    for (project, status, code) in [
        ("lower-case", 400, "invalid_request"),
        ("NOPE-1", 404, "project_not_found"),
    ] {
        let fields = DocumentUpload {
            project: Some(project.to_string()),
            ..DocumentUpload::default()
        };
        let attempt = import(&ada, SAMPLE_HTML.as_bytes(), "x.html", &fields).await;
        refused(attempt, status, code);
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_without_a_file_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    import_raw(&ada, Form::new().text("title", "No file"))
        .await
        .expect_error(400, "invalid_request");
    import_raw(&ada, Form::new())
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
    import_raw(&ada, form)
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
        import_raw(&ada, form)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(document_count(&server).await, 0);
}

#[tokio::test]
async fn import_html_with_non_utf8_bytes_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let fields = DocumentUpload::default();
    refused(
        import(&ada, &[0xff, 0xfe, 0x00], "utf16.html", &fields).await,
        400,
        "invalid_request",
    );
    // Latin-1 "é" inside otherwise ASCII markup.
    refused(
        import(&ada, b"<p>caf\xe9</p>", "latin1.html", &fields).await,
        400,
        "invalid_request",
    );
    // A text field that is not UTF-8 (raw: the typed client's fields are strings).
    let form =
        file_form(SAMPLE_HTML.as_bytes(), "x.html").part("title", Part::bytes(vec![0x80, 0x81]));
    import_raw(&ada, form)
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
    let fields = DocumentUpload::default();
    let at_limit = format!("<p>{}</p>", "a".repeat(1000 - 7));
    assert_eq!(at_limit.len(), 1000);
    import(&ada, at_limit.as_bytes(), "ok.html", &fields)
        .await
        .expect("an upload at the limit");
    let over = format!("<p>{}</p>", "a".repeat(1001 - 7));
    refused(
        import(&ada, over.as_bytes(), "big.html", &fields).await,
        413,
        "payload_too_large",
    );
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
    import(
        &ada,
        b"<p>small</p>",
        "small.html",
        &DocumentUpload::default(),
    )
    .await
    .expect("a small upload");
    assert_eq!(document_count(&server).await, 1);
}

#[tokio::test]
async fn add_version_far_over_the_limit_is_answered_413_every_time() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", "<p>small</p>", AccessMode::Link)
        .await
        .review_id;
    let huge = vec![b'a'; 8 << 20];
    let path = format!("/api/reviews/{id}/import-html");
    let outcomes = oversized_outcomes(&ada, &path, || file_form(&huge, "huge.html")).await;
    assert!(
        outcomes.iter().all(|o| o == "413 payload_too_large"),
        "every oversized upload needs a 413 answer: {outcomes:#?}"
    );
    assert_eq!(read(&ada, &id).await.source.versions.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Versions of an existing document

#[tokio::test]
async fn add_version_answers_201_with_two_versions_and_default_label() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.clone();
    let first = &review.source.versions[0];
    let v2_html = SAMPLE_HTML.replace("lazy dog", "sleepy cat");
    // Raw: the status is the point, and this upload sends no `mode` (the typed client always
    // does), so adding a version is also the default.
    let reply = import_version_raw(&ada, &id, file_form(v2_html.as_bytes(), "v2.html")).await;
    let updated = review_of(&reply, 201);
    let list = &updated.source.versions;
    assert_eq!(list.len(), 2);
    assert_eq!(
        json_of(&list[0]),
        json_of(first),
        "the first version is unchanged"
    );
    assert_eq!(list[1].label, "v2");
    assert_ne!(list[1].version_id, first.version_id);
    assert_ne!(list[1].source_hash, first.source_hash);
    assert_eq!(updated.latest_version_id, list[1].version_id);
    // Even without comments, a new body is one comment change (clients notice it).
    assert_eq!(updated.comments_revision, 1);

    let stored = read(&ada, &id).await;
    assert_eq!(json_of(&stored.source), json_of(&updated.source));
    assert_eq!(bundle_text(&ada, &id, &first.version_id).await, SAMPLE_HTML);
    assert_eq!(bundle_text(&ada, &id, &list[1].version_id).await, v2_html);

    let third = add_version(&ada, &id, b"<p>3</p>", None, None)
        .await
        .expect("third version");
    assert_eq!(third.source.versions[2].label, "v3");
}

#[tokio::test]
async fn add_version_with_a_label_uses_it() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    let updated = add_version(&ada, &id, b"<p>x</p>", Some("final"), None)
        .await
        .expect("add version");
    assert_eq!(updated.source.versions[1].label, "final");
}

#[tokio::test]
async fn replace_keeps_the_version_id_and_changes_the_hash() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.clone();
    let before = &review.source.versions[0];
    let new_html = SAMPLE_HTML.replace("Second paragraph", "Rewritten paragraph");
    // Raw for its status: replacing answers 200 where adding a version answers 201.
    let form = file_form(new_html.as_bytes(), "fixed.html").text("mode", "replace");
    let updated = review_of(&import_version_raw(&ada, &id, form).await, 200);
    let list = &updated.source.versions;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].version_id, before.version_id);
    assert_eq!(list[0].label, before.label);
    assert_ne!(list[0].source_hash, before.source_hash);
    assert_eq!(updated.latest_version_id, before.version_id);
    assert_eq!(
        updated.comments_revision, 1,
        "a new body is one comment change"
    );

    let stored = read(&ada, &id).await;
    assert_eq!(json_of(&stored.source), json_of(&updated.source));
    assert_eq!(bundle_text(&ada, &id, &before.version_id).await, new_html);
}

#[tokio::test]
async fn unknown_mode_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    // Raw: the typed client's mode is one of the two words.
    for mode in ["append", "REPLACE", "add-version"] {
        let form = file_form(b"<p>x</p>", "x.html").text("mode", mode);
        import_version_raw(&ada, &id, form)
            .await
            .expect_error(400, "invalid_request");
    }
    assert_eq!(read(&ada, &id).await.source.versions.len(), 1);
}

/// Asserts that an upload was refused as aimed at a stale version, naming `latest`.
#[track_caller]
fn assert_stale(result: docreview_client::Result<ReviewView>, latest: &str) {
    let error = refused(result, 409, "stale_target_version");
    let Error::StaleVersion {
        latest_version_id, ..
    } = error
    else {
        panic!("a stale-version conflict: {error:?}")
    };
    assert_eq!(latest_version_id, latest);
}

#[tokio::test]
async fn stale_base_version_is_409_with_the_latest_version_id() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id;
    let v1 = review.latest_version_id;

    // Based on the latest: accepted.
    let second = add_version(&ada, &id, b"<p>two</p>", None, Some(&v1))
        .await
        .expect("based on the latest");
    let v2 = second.latest_version_id;

    // Based on the first again: stale.
    assert_stale(
        add_version(&ada, &id, b"<p>three</p>", None, Some(&v1)).await,
        &v2,
    );

    // Replacing, too, is a write aimed at a version.
    assert_stale(replace(&ada, &id, b"<p>three</p>", Some(&v1)).await, &v2);

    let stored = read(&ada, &id).await;
    assert_eq!(stored.source.versions.len(), 2);
    assert_eq!(stored.latest_version_id, v2);
    assert_eq!(bundle_text(&ada, &id, &v2).await, "<p>two</p>");
}

#[tokio::test]
async fn concurrent_uploads_on_the_same_base_version_admit_exactly_one() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id;
    let v1 = review.latest_version_id;
    let bodies: Vec<String> = (0..6).map(|n| format!("<p>racer {n}</p>")).collect();
    let uploads = bodies
        .iter()
        .map(|html| add_version(&ada, &id, html.as_bytes(), None, Some(&v1)));
    let (winners, losers): (Vec<_>, Vec<_>) = futures::future::join_all(uploads)
        .await
        .into_iter()
        .partition(Result::is_ok);
    assert_eq!(
        winners.len(),
        1,
        "exactly one upload on v1 wins: {winners:?} {losers:?}"
    );
    let latest = winners
        .into_iter()
        .next()
        .and_then(Result::ok)
        .expect("the winner")
        .latest_version_id;
    for loser in losers {
        assert_stale(loser, &latest);
    }
    let stored = read(&ada, &id).await;
    assert_eq!(stored.source.versions.len(), 2);
    assert_eq!(stored.latest_version_id, latest);
    assert_eq!(stored.comments_revision, 1);
}

#[tokio::test]
async fn concurrent_uploads_without_a_base_all_land_in_order() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    let bodies: Vec<String> = (0..6).map(|n| format!("<p>racer {n}</p>")).collect();
    let uploads = bodies
        .iter()
        .map(|html| add_version(&ada, &id, html.as_bytes(), None, None));
    for result in futures::future::join_all(uploads).await {
        result.expect("every upload lands");
    }
    let stored = read(&ada, &id).await;
    let list = &stored.source.versions;
    assert_eq!(list.len(), 7);
    let labels: Vec<&str> = list.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, vec!["v1", "v2", "v3", "v4", "v5", "v6", "v7"]);
    let unique: std::collections::HashSet<&str> =
        list.iter().map(|v| v.version_id.as_str()).collect();
    assert_eq!(unique.len(), 7);
    assert_eq!(stored.latest_version_id, list[6].version_id);
    assert_eq!(
        stored.comments_revision, 6,
        "each new body is exactly one comment change"
    );
}

#[tokio::test]
async fn version_upload_without_file_unknown_field_or_json_body_is_rejected() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    // Raw: no file, an unknown field, a JSON body.
    import_version_raw(&ada, &id, Form::new().text("label", "x"))
        .await
        .expect_error(400, "invalid_request");
    import_version_raw(
        &ada,
        &id,
        file_form(b"<p>x</p>", "x.html").text("title", "t"),
    )
    .await
    .expect_error(400, "invalid_request");
    refused(
        add_version(&ada, &id, &[0xff, 0xfe, 0x00], None, None).await,
        400,
        "invalid_request",
    );
    ada.post(
        &format!("/api/reviews/{id}/import-html"),
        &json!({ "file": "<p>x</p>" }),
    )
    .await
    .expect_error(415, "unsupported_media_type");
    assert_eq!(read(&ada, &id).await.source.versions.len(), 1);
}

#[tokio::test]
async fn version_over_the_size_limit_is_413() {
    let server = Server::start_with(&[("DOCREVIEW_MAX_HTML_BYTES", "1000")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", "<p>small</p>", AccessMode::Link)
        .await
        .review_id;
    let over = vec![b'a'; 1001];
    refused(
        add_version(&ada, &id, &over, None, None).await,
        413,
        "payload_too_large",
    );
    refused(
        replace(&ada, &id, &over, None).await,
        413,
        "payload_too_large",
    );
    let stored = read(&ada, &id).await;
    assert_eq!(stored.source.versions.len(), 1);
    assert_eq!(
        bundle_text(&ada, &id, &stored.latest_version_id).await,
        "<p>small</p>"
    );
}

#[tokio::test]
async fn viewer_adding_a_version_is_403_forbidden() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    refused(
        add_version(&bob, &id, b"<p>x</p>", None, None).await,
        403,
        "forbidden",
    );
    refused(
        replace(&bob, &id, b"<p>x</p>", None).await,
        403,
        "forbidden",
    );
    assert_eq!(read(&ada, &id).await.source.versions.len(), 1);
}

#[tokio::test]
async fn shared_editor_may_add_a_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let eve = server.user("eve@example.com", "Eve", &[], "docs");
    let input = CreateReview {
        review: ReviewInput {
            access: Some(AccessInput {
                mode: Some(AccessMode::Restricted),
                allowed_users: Some(vec![AllowedUserEntry {
                    email: "eve@example.com".to_string(),
                    role: GrantRole::Editor,
                }]),
            }),
            ..ReviewInput::default()
        },
        project: None,
    };
    let id = ada
        .api()
        .create_review(&input)
        .await
        .expect("create")
        .review_id;
    add_version(&eve, &id, b"<p>x</p>", None, None)
        .await
        .expect("an editor adds a version");
    assert_eq!(read(&ada, &id).await.source.versions.len(), 2);
}

#[tokio::test]
async fn version_upload_to_an_invisible_or_missing_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Restricted)
        .await
        .review_id;
    refused(
        add_version(&bob, &id, b"<p>x</p>", None, None).await,
        404,
        "not_found",
    );
    refused(
        add_version(&ada, "rv_missing", b"<p>x</p>", None, None).await,
        404,
        "not_found",
    );
    assert_eq!(read(&ada, &id).await.source.versions.len(), 1);
}

#[tokio::test]
async fn import_token_may_add_a_version_but_manage_and_agent_may_not() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Restricted)
        .await
        .review_id;
    for client in [server.manager(), server.agent()] {
        refused(
            add_version(&client, &id, b"<p>x</p>", None, None).await,
            403,
            "forbidden",
        );
    }
    let updated = add_version(&server.importer(), &id, b"<p>x</p>", None, None)
        .await
        .expect("the import token adds a version");
    assert_eq!(updated.source.versions.len(), 2);
    assert_eq!(read(&ada, &id).await.source.versions.len(), 2);
}

#[tokio::test]
async fn version_upload_without_docs_scope_is_403_before_lookup() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reader = server.user("bob@example.com", "Bob", &[], "comments");
    let id = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Restricted)
        .await
        .review_id;
    // Visible or not, existing or not: the scope is checked first, so nothing leaks.
    for target in [id.as_str(), "rv_missing"] {
        refused(
            add_version(&reader, target, b"<p>x</p>", None, None).await,
            403,
            "insufficient_scope",
        );
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
fn offset_in_v2(needle: &str) -> usize {
    let text = "AlphaOpening words that never change at all.\
BetaBudgets for the next quarter must be approved by the finance committee.\
GammaClosing words that also never change.\
DeltaThe quick brown fox jumps over the lazy dog.";
    let byte = text.find(needle).expect("needle in V2 text");
    text[..byte].chars().count()
}

const MOVED: &str = "quick brown fox jumps over the lazy dog";
const EDITED: &str = "Budgets for the coming quarter must be approved by the finance committee";
const DELETED: &str = "This paragraph will be deleted entirely";

/// Writes the three comments on V1; returns the review id and the V1 version id.
async fn document_with_three_comments(ada: &Client) -> (String, String) {
    let review = ada.create_with_access("Doc", V1, AccessMode::Link).await;
    let id = review.review_id;
    for quote in [MOVED, EDITED, DELETED] {
        let written = ada.note_on(&id, quote, quote).await;
        assert_eq!(written.comment.anchor.state, AnchorState::Exact);
    }
    (id, review.latest_version_id)
}

fn comment_on<'a>(review: &'a ReviewView, body: &str) -> &'a docreview_client::api::CommentView {
    review
        .comments
        .iter()
        .find(|c| c.body == body)
        .unwrap_or_else(|| panic!("no comment {body:?} in {review:?}"))
}

/// The exact text of an anchor's quote.
fn quoted(anchor: &docreview_client::api::Anchor) -> Option<&str> {
    anchor.quote.as_ref().map(|quote| quote.exact.as_str())
}

fn check_reanchored(review: &ReviewView, v1: &str, v2: &str) {
    let moved = &comment_on(review, MOVED).anchor;
    assert_eq!(moved.state, AnchorState::Exact, "{moved:?}");
    assert_eq!(moved.version_id, v2);
    assert_eq!(moved.section_id.as_deref(), Some("d"));
    let start = offset_in_v2(MOVED);
    assert_eq!(
        moved.position,
        Some(Position {
            start,
            end: start + MOVED.chars().count()
        })
    );
    assert_eq!(quoted(moved), Some(MOVED));

    let edited = &comment_on(review, EDITED).anchor;
    assert_eq!(edited.state, AnchorState::Fuzzy, "{edited:?}");
    assert_eq!(edited.version_id, v2);
    assert_eq!(edited.section_id.as_deref(), Some("b"));
    assert_eq!(quoted(edited), Some(EDITED), "the original quote is kept");
    let sentence = offset_in_v2("Budgets for the next");
    let position = edited.position.as_ref().expect("position");
    let (start, end) = (position.start, position.end);
    let sentence_end =
        sentence + "Budgets for the next quarter must be approved by the finance committee".len();
    assert!(
        start >= sentence.saturating_sub(2)
            && start <= sentence + 2
            && end <= sentence_end + 2
            && end + 2 >= sentence_end,
        "fuzzy match {start}..{end} should cover the edited sentence {sentence}..{sentence_end}"
    );

    let deleted = &comment_on(review, DELETED).anchor;
    assert_eq!(deleted.state, AnchorState::Orphaned, "{deleted:?}");
    assert_eq!(deleted.position, None);
    assert_eq!(deleted.version_id, v2);
    assert_eq!(quoted(deleted), Some(DELETED));

    for body in [MOVED, EDITED, DELETED] {
        assert_eq!(
            comment_on(review, body).version_id,
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
    let updated = add_version(&ada, &id, V2.as_bytes(), None, None)
        .await
        .expect("add version");
    let v2 = updated.latest_version_id.clone();
    assert_ne!(v1, v2);
    assert_eq!(
        updated.comments_revision, 4,
        "three comments, then one re-anchoring"
    );
    check_reanchored(&updated, &v1, &v2);
    let stored = read(&ada, &id).await;
    check_reanchored(&stored, &v1, &v2);
    assert_eq!(json_of(&stored.comments), json_of(&updated.comments));
}

#[tokio::test]
async fn replacing_the_body_reanchors_comments_too() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let (id, v1) = document_with_three_comments(&ada).await;
    let updated = replace(&ada, &id, V2.as_bytes(), None)
        .await
        .expect("replace");
    assert_eq!(updated.latest_version_id, v1);
    assert_eq!(updated.comments_revision, 4);
    check_reanchored(&updated, &v1, &v1);
    check_reanchored(&read(&ada, &id).await, &v1, &v1);
}
