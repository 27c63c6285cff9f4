//! `GET /api/reviews/{id}/export`: every format holds the discussion a reader sees, in document
//! order; the lossless file is for editors; a running run's drafts stay out; every refusal is
//! the JSON error body.

use docreview_client::api::{
    AccessMode, Category, CommentStatus, ExportFormat, FinishRun, Locator, NewComment, NewReply,
    RunStatus, StartRun, StatusChange,
};
use serde_json::Value;

use crate::support::{Client, SAMPLE_HTML, Server, quote};

/// A document with four comments written out of document order, a reply and a resolve:
/// answers its id.
async fn discussed(owner: &Client) -> String {
    let review = owner
        .create_with_access("Export me", SAMPLE_HTML, AccessMode::Link)
        .await;
    let id = review.review_id;
    let add = |body: &str, locator: Option<Locator>, category: Option<Category>| NewComment {
        body: body.into(),
        category,
        locator,
        base_comments_revision: None,
        suggestion: None,
    };
    let api = owner.api();
    let dog = api
        .add_comment(
            &id,
            &add("=HYPERLINK(\"http://evil\")", Some(quote("lazy dog")), None),
        )
        .await
        .expect("dog");
    let section = Locator {
        section_id: Some("details".into()),
        ..Locator::default()
    };
    api.add_comment(
        &id,
        &add("On the details, as a whole.", Some(section), None),
    )
    .await
    .expect("section");
    api.add_comment(
        &id,
        &add(
            "A body with a comma, a \"quote\"\nand a second line.",
            None,
            None,
        ),
    )
    .await
    .expect("document");
    api.add_comment(
        &id,
        &add(
            "Say *how* quick.",
            Some(quote("quick brown fox")),
            Some(Category::Revise),
        ),
    )
    .await
    .expect("fox");
    api.reply(
        &id,
        &dog.comment.id,
        &NewReply {
            body: "-1 from me".into(),
            run_id: None,
            base_comments_revision: None,
            base_thread_revision: None,
        },
    )
    .await
    .expect("reply");
    api.set_status(
        &id,
        &dog.comment.id,
        &StatusChange {
            status: CommentStatus::Closed,
            base_comments_revision: None,
            base_thread_revision: None,
        },
    )
    .await
    .expect("resolve");
    id
}

fn export_path(id: &str, format: &str) -> String {
    format!("/api/reviews/{id}/export?format={format}")
}

/// The rows of a CSV file, header included.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|record| {
            record
                .expect("a CSV record")
                .iter()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn every_format_holds_the_discussion_in_document_order() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = discussed(&owner).await;

    // A table: a header, then each comment and its replies, in document order.
    let reply = reader.get(&export_path(&id, "csv")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.header("content-type"),
        Some("text/csv; charset=utf-8")
    );
    assert_eq!(
        reply.header("content-disposition"),
        Some(format!("attachment; filename=\"{id}.csv\"").as_str())
    );
    let rows = csv_rows(&reply.text);
    assert_eq!(
        rows[0],
        [
            "kind",
            "commentId",
            "replyId",
            "category",
            "status",
            "author",
            "createdAt",
            "section",
            "quote",
            "anchorState",
            "body"
        ]
    );
    let bodies: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|row| (row[0].as_str(), row[10].as_str()))
        .collect();
    assert_eq!(
        bodies,
        [
            (
                "comment",
                "A body with a comma, a \"quote\"\nand a second line."
            ),
            ("comment", "Say *how* quick."),
            ("comment", "'=HYPERLINK(\"http://evil\")"),
            ("reply", "'-1 from me"),
            ("comment", "On the details, as a whole."),
        ],
        "document order; formulas neutralised"
    );
    assert_eq!(rows[2][8], "quick brown fox");
    assert_eq!(rows[2][3], "revise");
    assert_eq!(rows[3][4], "closed");
    assert_eq!(rows[5][7], "Details", "a section comment names its section");

    // A W3C Web Annotation collection.
    let reply = reader.get(&export_path(&id, "w3c")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.header("content-type"),
        Some("application/ld+json; charset=utf-8")
    );
    let collection: Value = serde_json::from_str(&reply.text).expect("JSON-LD");
    assert_eq!(collection["type"], "AnnotationCollection");
    assert_eq!(
        collection["@context"][0],
        "http://www.w3.org/ns/anno.jsonld"
    );
    assert_eq!(collection["label"], "Export me");
    assert_eq!(collection["total"], 5);
    let items = collection["first"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 5);
    let fox = &items[1];
    assert_eq!(fox["motivation"], "commenting");
    assert_eq!(fox["dr:category"], "revise");
    assert_eq!(fox["body"]["value"], "Say *how* quick.");
    assert_eq!(fox["body"]["format"], "text/markdown");
    let selectors = fox["target"]["selector"].as_array().expect("selectors");
    assert_eq!(selectors[0]["type"], "TextQuoteSelector");
    assert_eq!(selectors[0]["exact"], "quick brown fox");
    assert_eq!(selectors[1]["type"], "TextPositionSelector");
    assert!(selectors[1]["end"].as_u64() > selectors[1]["start"].as_u64());
    assert!(
        fox["target"]["source"]
            .as_str()
            .is_some_and(|s| s.starts_with(&format!("urn:docreview:review:{id}:version:")))
    );
    let dog = &items[2];
    assert_eq!(dog["dr:status"], "closed");
    assert_eq!(dog["dr:statusHistory"][0]["status"], "closed");
    let answer = &items[3];
    assert_eq!(answer["motivation"], "replying");
    assert_eq!(answer["target"], dog["id"]);
    assert!(
        items[0]["target"].get("selector").is_none(),
        "a whole-document comment targets the version"
    );
    assert_eq!(items[4]["dr:sectionId"], "details");

    // A readable report.
    let reply = reader.get(&export_path(&id, "markdown")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    let report = &reply.text;
    assert!(report.starts_with("# Export me\n"), "{report}");
    assert!(
        report.contains("4 comments (3 open, 1 closed), 1 reply"),
        "{report}"
    );
    let order: Vec<usize> = [
        "## 1. Note · open — Owner, on the whole document",
        "## 2. Revise · open — Owner, in “Introduction”",
        "## 3. Note · closed — Owner, in “Introduction”",
        "## 4. Note · open — Owner, on the section “Details”",
    ]
    .iter()
    .map(|heading| {
        report
            .find(heading)
            .unwrap_or_else(|| panic!("{heading} in {report}"))
    })
    .collect();
    assert!(order.is_sorted(), "{report}");
    assert!(report.contains("> quick brown fox"), "{report}");
}

#[tokio::test]
async fn the_lossless_file_is_for_editors_and_holds_every_version_byte_for_byte() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = discussed(&owner).await;
    let second = SAMPLE_HTML.replace("lazy dog", "sleepy dog");
    owner.add_version(&id, &second).await;

    let reply = owner.get(&export_path(&id, "native")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(
        reply.header("content-type"),
        Some("application/json; charset=utf-8")
    );
    let file: Value = serde_json::from_str(&reply.text).expect("JSON");
    assert_eq!(file["format"], "docreview-export/1");
    assert_eq!(file["review"]["title"], "Export me");
    assert_eq!(file["review"]["owner"]["email"], "owner@example.com");
    let versions = file["versions"].as_array().expect("versions");
    assert_eq!(versions.len(), 2);
    assert_eq!(versions[0]["html"], SAMPLE_HTML);
    assert_eq!(versions[1]["html"], second.as_str());
    let comments = file["comments"].as_array().expect("comments");
    assert_eq!(comments.len(), 4);
    let dog = comments
        .iter()
        .find(|c| c["replies"].as_array().is_some_and(|r| !r.is_empty()))
        .expect("the comment with a reply");
    assert_eq!(dog["author"]["email"], "owner@example.com");
    assert_eq!(dog["replies"][0]["body"], "-1 from me");
    assert_eq!(dog["statusEvents"][0]["by"]["email"], "owner@example.com");
    assert_eq!(dog["anchor"]["quote"]["exact"], "lazy dog");

    // It names people by email: a reader may not have it (and the typed client says why).
    reader
        .get(&export_path(&id, "native"))
        .await
        .expect_error(403, "forbidden");
    let refused = reader
        .api()
        .export_review(&id, ExportFormat::Native)
        .await
        .expect_err("refused");
    assert!(refused.to_string().contains("editor"), "{refused}");
    let table = reader
        .api()
        .export_review(&id, ExportFormat::Csv)
        .await
        .expect("a reader's table");
    assert!(String::from_utf8(table).unwrap().starts_with("kind,"));
}

#[tokio::test]
async fn a_running_runs_drafts_stay_out_until_it_completes() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let agent = server.agent();
    let id = owner
        .create_with_access("Drafts", SAMPLE_HTML, AccessMode::Link)
        .await
        .review_id;
    let run = agent
        .api()
        .start_run(
            &id,
            &StartRun {
                kind: None,
                title: Some("A pass".into()),
                version_id: None,
            },
        )
        .await
        .expect("run");
    agent
        .api()
        .add_run_comment(
            &id,
            &run.id,
            &NewComment {
                body: "A draft of the run.".into(),
                category: None,
                locator: Some(quote("lazy dog")),
                base_comments_revision: None,
                suggestion: None,
            },
        )
        .await
        .expect("draft");
    let before = owner.get(&export_path(&id, "csv")).await;
    assert_eq!(before.status, 200);
    assert!(
        !before.text.contains("A draft of the run."),
        "{}",
        before.text
    );
    agent
        .api()
        .finish_run(
            &id,
            &run.id,
            &FinishRun {
                status: RunStatus::Completed,
                summary: None,
                base_comments_revision: None,
            },
        )
        .await
        .expect("complete");
    let after = owner.get(&export_path(&id, "csv")).await;
    assert!(after.text.contains("A draft of the run."), "{}", after.text);
}

#[tokio::test]
async fn refusals_are_the_json_error_body() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let stranger = server.user("stranger@example.com", "Stranger", &[], "comments");
    let id = owner
        .create_with_access("Private", SAMPLE_HTML, AccessMode::Restricted)
        .await
        .review_id;
    let missing = owner
        .get(&format!("/api/reviews/{id}/export"))
        .await
        .expect_error(400, "invalid_request")
        .clone();
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("w3c, native, csv, markdown")),
        "{missing}"
    );
    for format in ["", "pdf", "CSV", "csv%00", "%E2%9C%93"] {
        owner
            .get(&export_path(&id, format))
            .await
            .expect_error(400, "invalid_request");
    }
    // Someone who cannot see the document learns nothing about it, whatever the format.
    for format in ["csv", "native", "markdown"] {
        stranger
            .get(&export_path(&id, format))
            .await
            .expect_error(404, "not_found");
    }
    owner
        .get(&export_path("rv_nosuchdocument", "csv"))
        .await
        .expect_error(404, "not_found");
    server
        .client(None)
        .get(&export_path(&id, "csv"))
        .await
        .expect_error(401, "unauthorized");
}

/// Our own W3C export written into another document with the same text: every comment comes
/// back on its passage with its category and status, replies in their threads, authors named.
#[tokio::test]
async fn a_w3c_export_imports_into_another_document() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let id = discussed(&owner).await;
    let exported = owner.get(&export_path(&id, "w3c")).await;
    let file: Value = serde_json::from_str(&exported.text).expect("JSON-LD");
    let copy = owner.upload("Copy", SAMPLE_HTML).await.review_id;

    let report = owner
        .api()
        .import_annotations(&copy, &file)
        .await
        .expect("imported");
    assert_eq!((report.imported, report.replies), (4, 1), "{report:?}");
    assert!(report.failed.is_empty(), "{report:?}");
    let read = owner.api().review(&copy, false).await.expect("read");
    assert_eq!(read.comments_revision, report.comments_revision);
    let fox = read
        .comments
        .iter()
        .find(|c| c.body.starts_with("Say *how* quick."))
        .expect("the fox comment");
    assert_eq!(fox.category, Category::Revise);
    assert_eq!(
        fox.anchor.quote.as_ref().map(|q| q.exact.as_str()),
        Some("quick brown fox")
    );
    assert!(fox.body.contains("*Imported: Owner, "), "{}", fox.body);
    let dog = read
        .comments
        .iter()
        .find(|c| {
            c.anchor
                .quote
                .as_ref()
                .is_some_and(|q| q.exact == "lazy dog")
        })
        .expect("the dog comment");
    assert_eq!(dog.status, CommentStatus::Closed);
    assert_eq!(dog.thread.len(), 1);
    assert!(dog.thread[0].body.starts_with("-1 from me"));
    let section = read
        .comments
        .iter()
        .find(|c| c.body.starts_with("On the details"))
        .expect("the section comment");
    assert!(section.anchor.quote.is_none(), "{section:?}");
}

/// A Hypothesis export: notes on passages, a reply, a page note, and what cannot come in,
/// each reported by its place while the rest is written.
#[tokio::test]
async fn a_hypothesis_export_imports_with_a_report_of_what_did_not() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let id = owner.upload("Hypothesis", SAMPLE_HTML).await.review_id;
    let quote = |exact: &str, prefix: &str| {
        serde_json::json!([{ "source": "https://example.com/doc", "selector": [
            { "type": "RangeSelector", "startContainer": "/main[1]/p[1]", "startOffset": 4 },
            { "type": "TextPositionSelector", "start": 9999, "end": 10010 },
            { "type": "TextQuoteSelector", "exact": exact, "prefix": prefix, "suffix": "" }
        ]}])
    };
    let file = serde_json::json!({
        "export_date": "2026-11-01T10:00:00Z",
        "annotations": [
            { "id": "h1", "text": "Which fox?", "user": "acct:grace@hypothes.is",
              "user_info": { "display_name": "Grace Hopper" }, "created": "2026-10-01T09:00:00Z",
              "uri": "https://example.com/doc", "target": quote("quick brown fox", "The ") },
            { "id": "h2", "text": "The red one.", "user": "acct:alan@hypothes.is",
              "created": "2026-10-02T09:00:00Z", "uri": "https://example.com/doc",
              "references": ["h1"], "target": [{ "source": "https://example.com/doc" }] },
            { "id": "h3", "text": "A page note.", "user": "acct:alan@hypothes.is",
              "uri": "https://example.com/doc", "target": [{ "source": "https://example.com/doc" }] },
            { "id": "h4", "text": "Gone.", "uri": "https://example.com/doc",
              "target": quote("a passage this document never had", "") },
            { "id": "h5", "text": "", "uri": "https://example.com/doc", "target": quote("lazy dog", "") },
            { "id": "h6", "text": "Orphan reply.", "uri": "x", "references": ["h404"] },
            "not an annotation"
        ]
    });
    let reply = owner
        .post(&format!("/api/reviews/{id}/import-annotations"), &file)
        .await;
    let report = reply.expect(200);
    assert_eq!(report["imported"], 2, "{report}");
    assert_eq!(report["replies"], 1, "{report}");
    let failed: Vec<(u64, &str)> = report["failed"]
        .as_array()
        .expect("failed")
        .iter()
        .map(|f| (f["index"].as_u64().unwrap(), f["error"].as_str().unwrap()))
        .collect();
    assert_eq!(
        failed,
        [
            (3, "quote_not_found"),
            (4, "not_a_comment"),
            (6, "not_a_comment"),
            (5, "parent_not_imported"),
        ],
        "{report}"
    );
    let read = owner.api().review(&id, false).await.expect("read");
    let fox = read
        .comments
        .iter()
        .find(|c| c.body.starts_with("Which fox?"))
        .expect("h1");
    assert_eq!(
        fox.anchor.quote.as_ref().map(|q| q.exact.as_str()),
        Some("quick brown fox")
    );
    assert!(
        fox.body
            .ends_with("*Imported: Grace Hopper, 2026-10-01T09:00:00Z*")
    );
    assert_eq!(fox.thread.len(), 1);
    assert!(
        fox.thread[0]
            .body
            .starts_with("The red one.\n\n*Imported: alan, ")
    );
    let page_note = read
        .comments
        .iter()
        .find(|c| c.body.starts_with("A page note."))
        .expect("h3");
    assert!(page_note.anchor.quote.is_none());
}

#[tokio::test]
async fn an_import_that_is_not_an_annotations_file_writes_nothing() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let stranger = server.user("stranger@example.com", "Stranger", &[], "comments");
    let reader_only = server.user("reader@example.com", "Reader", &[], "docs");
    let id = owner
        .create_with_access("Private", SAMPLE_HTML, AccessMode::Restricted)
        .await
        .review_id;
    let path = format!("/api/reviews/{id}/import-annotations");
    let too_many: Vec<Value> = (0..2001).map(|_| serde_json::json!({})).collect();
    for body in [
        serde_json::json!({ "what": "ever" }),
        serde_json::json!(42),
        serde_json::json!({ "type": "AnnotationCollection", "first": "nope" }),
        Value::Array(too_many),
    ] {
        owner
            .post(&path, &body)
            .await
            .expect_error(400, "invalid_request");
    }
    let malformed = owner
        .send(
            owner
                .raw("POST", &path)
                .header("content-type", "application/json")
                .body("{ not json"),
        )
        .await;
    malformed.expect_error(400, "invalid_request");
    stranger
        .post(&path, &serde_json::json!([]))
        .await
        .expect_error(404, "not_found");
    reader_only
        .post(&path, &serde_json::json!([]))
        .await
        .expect_error(403, "insufficient_scope");
    let read = owner.api().review(&id, false).await.expect("read");
    assert!(read.comments.is_empty());
    // An empty list is a file with nothing in it.
    let empty = owner.post(&path, &serde_json::json!([])).await;
    assert_eq!(empty.expect(200)["imported"], 0);
}
