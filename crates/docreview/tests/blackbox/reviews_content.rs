//! `GET /api/reviews/{id}/dom-context` (heading sections, offsets, versions, structureRevision,
//! supplied structure) and `GET /api/reviews/{id}/versions/{versionId}/bundle` (exact bytes,
//! sandboxing headers, 404s).

use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server, html_part};

/// Creates a document from `html`; returns the Review.
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

fn id_of(review: &Value) -> &str {
    review["reviewId"].as_str().expect("reviewId")
}

fn latest_of(review: &Value) -> &str {
    review["latestVersionId"].as_str().expect("latestVersionId")
}

/// Adds a version through the multipart upload; returns the Review.
async fn add_version(client: &Client, review_id: &str, html: &[u8]) -> Value {
    let form = reqwest::multipart::Form::new().part("file", html_part(html, "next.html"));
    let reply = client
        .multipart(&format!("/api/reviews/{review_id}/import-html"), form)
        .await;
    reply.expect(201)["review"].clone()
}

async fn dom_context(client: &Client, review_id: &str, query: &str) -> Value {
    let reply = client
        .get(&format!("/api/reviews/{review_id}/dom-context{query}"))
        .await;
    reply.expect(200).clone()
}

/// `(id, level, text, path)` of each section.
fn outline(context: &Value) -> Vec<(String, i64, String, Vec<String>)> {
    context["sections"]
        .as_array()
        .expect("sections array")
        .iter()
        .map(|section| {
            (
                section["id"].as_str().expect("id").to_string(),
                section["level"].as_i64().expect("level"),
                section["text"].as_str().expect("text").to_string(),
                section["path"]
                    .as_array()
                    .expect("path array")
                    .iter()
                    .map(|p| p.as_str().expect("path id").to_string())
                    .collect(),
            )
        })
        .collect()
}

/// `(start, end)` of each section; both must be integers.
fn ranges(context: &Value) -> Vec<(u64, u64)> {
    context["sections"]
        .as_array()
        .expect("sections array")
        .iter()
        .map(|section| {
            (
                section["start"].as_u64().expect("start is an integer"),
                section["end"].as_u64().expect("end is an integer"),
            )
        })
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(std::string::ToString::to_string).collect()
}

fn chars(text: &str) -> u64 {
    text.chars().count() as u64
}

/// GET returning the raw body bytes (for byte-for-byte comparisons).
async fn get_bytes(client: &Client, path: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = client
        .raw("GET", path)
        .send()
        .await
        .expect("request failed");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("body").to_vec();
    (status, headers, body)
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("missing header {name}: {headers:?}"))
}

// ---------------------------------------------------------------------------------------------
// dom-context

#[tokio::test]
async fn dom_context_lists_heading_sections_in_order() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let context = dom_context(&ada, id_of(&review), "").await;
    assert_eq!(context["reviewId"], review["reviewId"]);
    assert_eq!(context["versionId"], review["latestVersionId"]);
    assert_eq!(context["structureRevision"], review["structureRevision"]);
    assert_eq!(
        outline(&context),
        vec![
            ("intro".into(), 1, "Introduction".into(), vec![]),
            ("details".into(), 2, "Details".into(), strings(&["intro"])),
            (
                "open-questions".into(),
                2,
                "Open Questions".into(),
                strings(&["intro"])
            ),
        ]
    );
}

#[tokio::test]
async fn dom_context_offsets_delimit_each_section_in_the_text() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let context = dom_context(&ada, id_of(&review), "").await;
    // The body text: headings and paragraphs concatenated (no whitespace between the tags).
    let intro = "IntroductionThe quick brown fox jumps over the lazy dog.";
    let details = "DetailsSecond paragraph with more words.";
    let questions = "Open QuestionsIs the fox quick enough?";
    let total = chars(intro) + chars(details) + chars(questions);
    let details_start = chars(intro);
    let questions_start = details_start + chars(details);
    assert_eq!(
        ranges(&context),
        vec![
            (0, total),
            (details_start, questions_start),
            (questions_start, total)
        ]
    );
}

#[tokio::test]
async fn dom_context_offsets_count_unicode_code_points() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<h1>Über</h1><p>日本語テキスト😀</p><h2 id=\"zwei\">Zwei</h2><p>ß</p>";
    let review = create(&ada, html, "link").await;
    let context = dom_context(&ada, id_of(&review), "").await;
    assert_eq!(
        outline(&context),
        vec![
            ("ber".into(), 1, "Über".into(), vec![]),
            ("zwei".into(), 2, "Zwei".into(), strings(&["ber"])),
        ]
    );
    // "Über" (4) + "日本語テキスト😀" (8 code points; 9 UTF-16 units; 28 bytes) = 12.
    assert_eq!(ranges(&context), vec![(0, 17), (12, 17)]);
}

#[tokio::test]
async fn dom_context_ids_come_from_element_ids_else_unique_slugs() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<h1 id=\"top\">Top</h1><h2>Hello, World!</h2><p>a</p><h2>Hello, World!</h2>\
                <p>b</p><h3 id=\"  \">API v2.0</h3><p>c</p><h6>!!!</h6><p>d</p>";
    let review = create(&ada, html, "link").await;
    let context = dom_context(&ada, id_of(&review), "").await;
    let sections = outline(&context);
    let ids: Vec<&str> = sections.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        ids,
        vec!["top", "hello-world", "hello-world-2", "api-v2-0", "section"]
    );
    let levels: Vec<i64> = sections.iter().map(|s| s.1).collect();
    assert_eq!(levels, vec![1, 2, 2, 3, 6]);
    assert_eq!(sections[3].3, strings(&["top", "hello-world-2"]));
    assert_eq!(
        sections[4].3,
        strings(&["top", "hello-world-2", "api-v2-0"])
    );
    for (start, end) in ranges(&context) {
        assert!(start < end, "start {start} < end {end}");
    }
}

#[tokio::test]
async fn dom_context_reads_an_older_version_by_version_id() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let first = latest_of(&review).to_string();
    let next = add_version(&ada, id, b"<h1 id=\"new\">Renamed</h1><p>Body</p>").await;
    let second = latest_of(&next).to_string();
    assert_ne!(first, second);

    let latest = dom_context(&ada, id, "").await;
    assert_eq!(latest["versionId"], second);
    assert_eq!(
        outline(&latest),
        vec![("new".into(), 1, "Renamed".into(), vec![])]
    );
    let old = dom_context(&ada, id, &format!("?versionId={first}")).await;
    assert_eq!(old["versionId"], first);
    let old_ids: Vec<String> = outline(&old).into_iter().map(|s| s.0).collect();
    assert_eq!(old_ids, strings(&["intro", "details", "open-questions"]));
}

#[tokio::test]
async fn dom_context_of_an_unknown_version_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let other = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    for version in ["ver_00000000000000000000000000", "nope", latest_of(&other)] {
        ada.get(&format!(
            "/api/reviews/{id}/dom-context?versionId={version}"
        ))
        .await
        .expect_error(404, "not_found");
    }
}

#[tokio::test]
async fn dom_context_of_a_missing_or_invisible_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let secret = create(&ada, SAMPLE_HTML, "restricted").await;
    bob.get(&format!("/api/reviews/{}/dom-context", id_of(&secret)))
        .await
        .expect_error(404, "not_found");
    ada.get("/api/reviews/rv_missing/dom-context")
        .await
        .expect_error(404, "not_found");
    server
        .client(None)
        .get(&format!("/api/reviews/{}/dom-context", id_of(&secret)))
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test]
async fn structure_revision_rises_only_when_headings_change() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let initial = review["structureRevision"].as_i64().expect("integer");

    // Same headings, different body text: unchanged.
    let body_only = SAMPLE_HTML.replace("lazy dog", "sleepy cat");
    let next = add_version(&ada, id, body_only.as_bytes()).await;
    assert_eq!(next["structureRevision"], initial);
    assert_eq!(
        dom_context(&ada, id, "").await["structureRevision"],
        initial
    );

    // A renamed heading: a new structure.
    let renamed = body_only.replace("Open Questions", "Open Issues");
    let next = add_version(&ada, id, renamed.as_bytes()).await;
    let changed = next["structureRevision"].as_i64().expect("integer");
    assert!(changed > initial, "{changed} > {initial}");
    assert_eq!(
        dom_context(&ada, id, "").await["structureRevision"],
        changed
    );
    let read = ada.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(read.expect(200)["review"]["structureRevision"], changed);

    // A changed level is a change too; the same HTML again is not.
    let relevelled = renamed.replace(
        "<h2 id=\"details\">Details</h2>",
        "<h3 id=\"details\">Details</h3>",
    );
    let next = add_version(&ada, id, relevelled.as_bytes()).await;
    let third = next["structureRevision"].as_i64().expect("integer");
    assert!(third > changed, "{third} > {changed}");
    let next = add_version(&ada, id, relevelled.as_bytes()).await;
    assert_eq!(next["structureRevision"], third);
}

#[tokio::test]
async fn replacing_the_body_raises_structure_revision_only_for_new_headings() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let initial = review["structureRevision"].as_i64().expect("integer");
    let replace = async |html: String| {
        let form = reqwest::multipart::Form::new()
            .part("file", html_part(html.as_bytes(), "fixed.html"))
            .text("mode", "replace");
        let reply = ada
            .multipart(&format!("/api/reviews/{id}/import-html"), form)
            .await;
        reply.expect(200)["review"]["structureRevision"]
            .as_i64()
            .expect("integer")
    };
    assert_eq!(
        replace(SAMPLE_HTML.replace("lazy dog", "sleepy cat")).await,
        initial
    );
    let renamed = replace(SAMPLE_HTML.replace("Introduction", "Preface")).await;
    assert!(renamed > initial, "{renamed} > {initial}");
    let context = dom_context(&ada, id, "").await;
    assert_eq!(context["structureRevision"], renamed);
    assert_eq!(context["versionId"], review["latestVersionId"]);
    assert_eq!(context["sections"][0]["text"], "Preface");
}

#[tokio::test]
async fn supplied_structure_is_returned_for_a_document_without_headings() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = ada
        .post(
            "/api/reviews",
            &json!({ "review": {
                "source": { "html": "<p>Plain text only.</p>" },
                "structure": { "sections": [
                    { "id": "part-a", "level": 1, "text": "Part A" },
                    { "id": "part-b", "level": 2, "text": "Part B" },
                ] },
            } }),
        )
        .await;
    let review = reply.expect(201)["review"].clone();
    let context = dom_context(&ada, id_of(&review), "").await;
    assert_eq!(context["versionId"], review["latestVersionId"]);
    assert_eq!(
        outline(&context),
        vec![
            ("part-a".into(), 1, "Part A".into(), vec![]),
            ("part-b".into(), 2, "Part B".into(), strings(&["part-a"])),
        ]
    );
    for (start, end) in ranges(&context) {
        assert!(
            start < end && end <= chars("Plain text only."),
            "{start}..{end}"
        );
    }
}

#[tokio::test]
async fn supplied_structure_with_invalid_sections_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for sections in [
        json!([{ "id": "a", "level": 7, "text": "A" }]),
        json!([{ "id": "a", "level": 0, "text": "A" }]),
        json!([{ "id": "", "level": 1, "text": "A" }]),
        json!([{ "level": 1, "text": "A" }]),
        json!("not a list"),
    ] {
        ada.post(
            "/api/reviews",
            &json!({ "review": { "structure": { "sections": sections } } }),
        )
        .await
        .expect_error(400, "invalid_request");
    }
}

// ---------------------------------------------------------------------------------------------
// Bundles

const TRICKY_HTML: &str = "<!doctype html><html><head><meta charset=\"utf-8\">\
<script>document.title = \"pwned\"; fetch(\"/api/reviews\");</script></head>\
<body><h1>Grüße — 日本語 😀</h1><p>a &amp; b &lt;c&gt;</p></body></html>";

#[tokio::test]
async fn bundle_returns_the_exact_bytes_sandboxed() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, TRICKY_HTML, "link").await;
    let path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        id_of(&review),
        latest_of(&review)
    );
    let (status, headers, body) = get_bytes(&ada, &path).await;
    assert_eq!(status, 200);
    assert_eq!(body, TRICKY_HTML.as_bytes());
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    let csp = header(&headers, "content-security-policy");
    assert!(
        csp.split([';', ' ']).any(|token| token.trim() == "sandbox"),
        "CSP needs sandbox: {csp}"
    );
    assert!(
        !csp.contains("allow-same-origin"),
        "scripts must never run with the service's origin: {csp}"
    );
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
}

#[tokio::test]
async fn bundle_keeps_uploaded_bytes_verbatim() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // A BOM, CRLF line ends, tabs, trailing spaces and an unterminated tag: nothing is normalised.
    let bytes = "\u{feff}<p>line one\r\n\tline two   \r\n<div>Ünïcödé</p".as_bytes();
    let form = reqwest::multipart::Form::new().part("file", html_part(bytes, "raw.html"));
    let reply = ada.multipart("/api/reviews/import-html", form).await;
    let review = reply.expect(201)["review"].clone();
    let path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        id_of(&review),
        latest_of(&review)
    );
    let (status, _, body) = get_bytes(&ada, &path).await;
    assert_eq!(status, 200);
    assert_eq!(body, bytes);
}

#[tokio::test]
async fn bundle_of_an_older_version_returns_its_own_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let id = id_of(&review);
    let first = latest_of(&review).to_string();
    let next = add_version(&ada, id, TRICKY_HTML.as_bytes()).await;
    let second = latest_of(&next).to_string();
    let (_, _, old) = get_bytes(&ada, &format!("/api/reviews/{id}/versions/{first}/bundle")).await;
    assert_eq!(old, SAMPLE_HTML.as_bytes());
    let (_, _, new) = get_bytes(&ada, &format!("/api/reviews/{id}/versions/{second}/bundle")).await;
    assert_eq!(new, TRICKY_HTML.as_bytes());
}

#[tokio::test]
async fn bundle_is_readable_with_shared_read_tokens_and_by_viewers() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        id_of(&review),
        latest_of(&review)
    );
    for client in [server.agent(), server.importer(), bob] {
        let (status, _, body) = get_bytes(&client, &path).await;
        assert_eq!(status, 200);
        assert_eq!(body, SAMPLE_HTML.as_bytes());
    }
    server
        .manager()
        .get(&path)
        .await
        .expect_error(403, "forbidden");
}

#[tokio::test]
async fn bundle_of_an_unknown_version_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, SAMPLE_HTML, "link").await;
    let other = create(&ada, TRICKY_HTML, "link").await;
    let id = id_of(&review);
    // Made up, and a real version of another document.
    for version in ["ver_00000000000000000000000000", latest_of(&other)] {
        let reply = ada
            .get(&format!("/api/reviews/{id}/versions/{version}/bundle"))
            .await;
        reply.expect_error(404, "not_found");
    }
}

#[tokio::test]
async fn bundle_of_an_invisible_or_missing_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let secret = create(&ada, SAMPLE_HTML, "restricted").await;
    let open = create(&ada, SAMPLE_HTML, "link").await;
    let secret_path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        id_of(&secret),
        latest_of(&secret)
    );
    let open_path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        id_of(&open),
        latest_of(&open)
    );
    bob.get(&secret_path).await.expect_error(404, "not_found");
    xena.get(&open_path).await.expect_error(404, "not_found");
    ada.get(&format!(
        "/api/reviews/rv_missing/versions/{}/bundle",
        latest_of(&open)
    ))
    .await
    .expect_error(404, "not_found");
}
