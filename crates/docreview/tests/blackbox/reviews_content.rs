//! `GET /api/reviews/{id}/dom-context` (heading sections, offsets, versions, structureRevision,
//! supplied structure) and `GET /api/reviews/{id}/versions/{versionId}/bundle` (exact bytes,
//! sandboxing headers, 404s).

use docreview_client::api::{
    AccessMode, CreateReview, DomContext, ReviewInput, ReviewView, SectionSpec, SourceInput,
    StructureInput, VersionMode,
};
use docreview_client::{DocumentUpload, HtmlFile, VersionUpload};
use serde_json::json;

use crate::support::{Client, SAMPLE_HTML, Server, refused};

/// Uploads `html` as a new version (`mode`); returns the Review.
async fn upload(
    client: &Client,
    review_id: &str,
    html: &[u8],
    name: &str,
    mode: VersionMode,
) -> ReviewView {
    let file = HtmlFile {
        name: name.into(),
        bytes: html.to_vec(),
    };
    let upload = VersionUpload {
        mode,
        label: None,
        base_version_id: None,
    };
    client
        .api()
        .import_version(review_id, &file, &upload)
        .await
        .expect("upload a version")
}

/// Adds a version through the multipart upload; returns the Review.
async fn add_version(client: &Client, review_id: &str, html: &[u8]) -> ReviewView {
    upload(
        client,
        review_id,
        html,
        "next.html",
        VersionMode::AddVersion,
    )
    .await
}

/// The latest version's sections, or `version`'s.
async fn dom_context(client: &Client, review_id: &str, version: Option<&str>) -> DomContext {
    client
        .api()
        .dom_context(review_id, version)
        .await
        .expect("dom-context")
}

/// `(id, level, text, path)` of each section.
fn outline(context: &DomContext) -> Vec<(String, u8, String, Vec<String>)> {
    context
        .sections
        .iter()
        .map(|section| {
            (
                section.id.clone(),
                section.level,
                section.text.clone(),
                section.path.clone(),
            )
        })
        .collect()
}

/// `(start, end)` of each section (integers: the typed client reads them as `usize`).
fn ranges(context: &DomContext) -> Vec<(usize, usize)> {
    context
        .sections
        .iter()
        .map(|section| (section.start, section.end))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(std::string::ToString::to_string).collect()
}

fn chars(text: &str) -> usize {
    text.chars().count()
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

/// The bytes of a version, read through the typed client.
async fn bundle(client: &Client, review_id: &str, version_id: &str) -> Vec<u8> {
    client
        .api()
        .bundle(review_id, version_id)
        .await
        .expect("bundle")
        .into_bytes()
}

// ---------------------------------------------------------------------------------------------
// dom-context

#[tokio::test]
async fn dom_context_lists_heading_sections_in_order() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let context = dom_context(&ada, &review.review_id, None).await;
    assert_eq!(context.review_id, review.review_id);
    assert_eq!(context.version_id, review.latest_version_id);
    assert_eq!(context.structure_revision, review.structure_revision);
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
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let context = dom_context(&ada, &review.review_id, None).await;
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
    let review = ada.create_with_access("Doc", html, AccessMode::Link).await;
    let context = dom_context(&ada, &review.review_id, None).await;
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
    let review = ada.create_with_access("Doc", html, AccessMode::Link).await;
    let context = dom_context(&ada, &review.review_id, None).await;
    let sections = outline(&context);
    let ids: Vec<&str> = sections.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        ids,
        vec!["top", "hello-world", "hello-world-2", "api-v2-0", "section"]
    );
    let levels: Vec<u8> = sections.iter().map(|s| s.1).collect();
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
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    let first = review.latest_version_id.clone();
    let next = add_version(&ada, id, b"<h1 id=\"new\">Renamed</h1><p>Body</p>").await;
    let second = next.latest_version_id;
    assert_ne!(first, second);

    let latest = dom_context(&ada, id, None).await;
    assert_eq!(latest.version_id, second);
    assert_eq!(
        outline(&latest),
        vec![("new".into(), 1, "Renamed".into(), vec![])]
    );
    let old = dom_context(&ada, id, Some(&first)).await;
    assert_eq!(old.version_id, first);
    let old_ids: Vec<String> = outline(&old).into_iter().map(|s| s.0).collect();
    assert_eq!(old_ids, strings(&["intro", "details", "open-questions"]));
}

#[tokio::test]
async fn dom_context_of_an_unknown_version_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let other = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    for version in [
        "ver_00000000000000000000000000",
        "nope",
        &other.latest_version_id,
    ] {
        refused(
            ada.api().dom_context(id, Some(version)).await,
            404,
            "not_found",
        );
    }
}

#[tokio::test]
async fn dom_context_of_a_missing_or_invisible_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let secret = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Restricted)
        .await;
    refused(
        bob.api().dom_context(&secret.review_id, None).await,
        404,
        "not_found",
    );
    refused(
        ada.api().dom_context("rv_missing", None).await,
        404,
        "not_found",
    );
    refused(
        server
            .client(None)
            .api()
            .dom_context(&secret.review_id, None)
            .await,
        401,
        "unauthorized",
    );
}

#[tokio::test]
async fn structure_revision_rises_only_when_headings_change() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    let initial = review.structure_revision;

    // Same headings, different body text: unchanged.
    let body_only = SAMPLE_HTML.replace("lazy dog", "sleepy cat");
    let next = add_version(&ada, id, body_only.as_bytes()).await;
    assert_eq!(next.structure_revision, initial);
    assert_eq!(
        dom_context(&ada, id, None).await.structure_revision,
        initial
    );

    // A renamed heading: a new structure.
    let renamed = body_only.replace("Open Questions", "Open Issues");
    let next = add_version(&ada, id, renamed.as_bytes()).await;
    let changed = next.structure_revision;
    assert!(changed > initial, "{changed} > {initial}");
    assert_eq!(
        dom_context(&ada, id, None).await.structure_revision,
        changed
    );
    let read = ada.api().review(id, false).await.expect("read");
    assert_eq!(read.structure_revision, changed);

    // A changed level is a change too; the same HTML again is not.
    let relevelled = renamed.replace(
        "<h2 id=\"details\">Details</h2>",
        "<h3 id=\"details\">Details</h3>",
    );
    let next = add_version(&ada, id, relevelled.as_bytes()).await;
    let third = next.structure_revision;
    assert!(third > changed, "{third} > {changed}");
    let next = add_version(&ada, id, relevelled.as_bytes()).await;
    assert_eq!(next.structure_revision, third);
}

#[tokio::test]
async fn replacing_the_body_raises_structure_revision_only_for_new_headings() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    let initial = review.structure_revision;
    let replace = async |html: String| {
        upload(
            &ada,
            id,
            html.as_bytes(),
            "fixed.html",
            VersionMode::Replace,
        )
        .await
        .structure_revision
    };
    assert_eq!(
        replace(SAMPLE_HTML.replace("lazy dog", "sleepy cat")).await,
        initial
    );
    let renamed = replace(SAMPLE_HTML.replace("Introduction", "Preface")).await;
    assert!(renamed > initial, "{renamed} > {initial}");
    let context = dom_context(&ada, id, None).await;
    assert_eq!(context.structure_revision, renamed);
    assert_eq!(context.version_id, review.latest_version_id);
    assert_eq!(context.sections[0].text, "Preface");
}

#[tokio::test]
async fn supplied_structure_is_returned_for_a_document_without_headings() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let section = |id: &str, level: u8, text: &str| SectionSpec {
        id: id.into(),
        level,
        text: text.into(),
    };
    let input = CreateReview {
        review: ReviewInput {
            source: Some(SourceInput {
                html: Some("<p>Plain text only.</p>".into()),
                label: None,
            }),
            structure: Some(StructureInput {
                sections: vec![
                    section("part-a", 1, "Part A"),
                    section("part-b", 2, "Part B"),
                ],
            }),
            ..ReviewInput::default()
        },
        project: None,
    };
    let review = ada.api().create_review(&input).await.expect("create");
    let context = dom_context(&ada, &review.review_id, None).await;
    assert_eq!(context.version_id, review.latest_version_id);
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
    // Raw: bodies outside the schema (levels out of range, an empty or missing id, no list).
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
    let review = ada
        .create_with_access("Doc", TRICKY_HTML, AccessMode::Link)
        .await;
    let path = format!(
        "/api/reviews/{}/versions/{}/bundle",
        review.review_id, review.latest_version_id
    );
    // Raw: the headers are the point.
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
    assert_eq!(
        bundle(&ada, &review.review_id, &review.latest_version_id).await,
        TRICKY_HTML.as_bytes()
    );
}

#[tokio::test]
async fn bundle_keeps_uploaded_bytes_verbatim() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // A BOM, CRLF line ends, tabs, trailing spaces and an unterminated tag: nothing is normalised.
    let bytes = "\u{feff}<p>line one\r\n\tline two   \r\n<div>Ünïcödé</p".as_bytes();
    let file = HtmlFile {
        name: "raw.html".into(),
        bytes: bytes.to_vec(),
    };
    let review = ada
        .api()
        .import_html(&file, &DocumentUpload::default())
        .await
        .expect("upload");
    let body = bundle(&ada, &review.review_id, &review.latest_version_id).await;
    assert_eq!(body, bytes);
}

#[tokio::test]
async fn bundle_of_an_older_version_returns_its_own_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    let first = review.latest_version_id.clone();
    let next = add_version(&ada, id, TRICKY_HTML.as_bytes()).await;
    let second = next.latest_version_id;
    assert_eq!(bundle(&ada, id, &first).await, SAMPLE_HTML.as_bytes());
    assert_eq!(bundle(&ada, id, &second).await, TRICKY_HTML.as_bytes());
}

#[tokio::test]
async fn bundle_is_readable_with_shared_read_tokens_and_by_viewers() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let (id, version) = (&review.review_id, &review.latest_version_id);
    for client in [server.agent(), server.importer(), bob] {
        assert_eq!(bundle(&client, id, version).await, SAMPLE_HTML.as_bytes());
    }
    refused(
        server.manager().api().bundle(id, version).await,
        403,
        "forbidden",
    );
}

#[tokio::test]
async fn bundle_of_an_unknown_version_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    let other = ada
        .create_with_access("Doc", TRICKY_HTML, AccessMode::Link)
        .await;
    let id = review.review_id.as_str();
    // Made up, and a real version of another document.
    for version in ["ver_00000000000000000000000000", &other.latest_version_id] {
        refused(ada.api().bundle(id, version).await, 404, "not_found");
    }
}

#[tokio::test]
async fn bundle_of_an_invisible_or_missing_document_is_404() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let secret = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Restricted)
        .await;
    let open = ada
        .create_with_access("Doc", SAMPLE_HTML, AccessMode::Link)
        .await;
    refused(
        bob.api()
            .bundle(&secret.review_id, &secret.latest_version_id)
            .await,
        404,
        "not_found",
    );
    refused(
        xena.api()
            .bundle(&open.review_id, &open.latest_version_id)
            .await,
        404,
        "not_found",
    );
    refused(
        ada.api()
            .bundle("rv_missing", &open.latest_version_id)
            .await,
        404,
        "not_found",
    );
}
