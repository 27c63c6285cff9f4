//! Full-text search over HTTP: `GET /api/search/comments` and `GET /api/search/docs` (DESIGN.md
//! §4.7): the query language (word prefixes, quoted phrases, every part must match), result
//! fields and escaped snippets, filters, paging, keeping the index in step with edits,
//! cancellations, new versions and deletions, and visibility: nobody finds what they cannot read.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::{Client, Reply, Server, html_part, now_ms, rfc3339_ms};

/// Every scope a personal token can hold on documents.
const ALL_DOC_SCOPES: &str = "docs,access,comments";

const COMMENTS: &str = "/api/search/comments";
const DOCS: &str = "/api/search/docs";

/// `text` percent-encoded for a query string (everything but unreserved characters).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// `GET path` with `params` URL-encoded.
async fn search(client: &Client, path: &str, params: &[(&str, &str)]) -> Reply {
    let query: Vec<String> = params
        .iter()
        .map(|(key, value)| format!("{key}={}", encode(value)))
        .collect();
    client.get(&format!("{path}?{}", query.join("&"))).await
}

/// The results of a search that must succeed; asserts a single page (`nextCursor: null`).
async fn results(client: &Client, path: &str, params: &[(&str, &str)]) -> Vec<Value> {
    let reply = search(client, path, params).await;
    let body = reply.expect(200);
    assert_eq!(body["nextCursor"], Value::Null, "one page: {}", reply.text);
    body["results"].as_array().expect("results array").clone()
}

/// The comment ids (with `#messageId` for replies) of a comment search, sorted.
async fn comment_hits(client: &Client, params: &[(&str, &str)]) -> Vec<String> {
    let mut ids: Vec<String> = results(client, COMMENTS, params)
        .await
        .iter()
        .map(|hit| {
            let comment = hit["commentId"].as_str().expect("commentId");
            match hit.get("messageId") {
                Some(message) => format!("{comment}#{}", message.as_str().expect("messageId")),
                None => comment.to_string(),
            }
        })
        .collect();
    ids.sort();
    ids
}

/// The review ids of a document search, sorted.
async fn doc_hits(client: &Client, q: &str) -> Vec<String> {
    let mut ids: Vec<String> = results(client, DOCS, &[("q", q)])
        .await
        .iter()
        .map(|hit| hit["reviewId"].as_str().expect("reviewId").to_string())
        .collect();
    ids.sort();
    ids
}

fn sorted(ids: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|id| (*id).to_string()).collect();
    ids.sort();
    ids
}

fn id_of(value: &Value) -> String {
    value["id"].as_str().expect("id").to_string()
}

/// Creates a document and returns its id.
async fn document(client: &Client, title: &str, html: &str) -> String {
    let review = client.create_review(title, html).await;
    review["reviewId"].as_str().expect("reviewId").to_string()
}

/// Creates a restricted document shared with `users` (`[{ email, role }]`); returns its id.
async fn restricted_document(client: &Client, title: &str, html: &str, users: Value) -> String {
    let reply = client
        .post(
            "/api/reviews",
            &json!({ "review": { "title": title, "source": { "html": html },
                                 "access": { "mode": "restricted", "allowedUsers": users } } }),
        )
        .await;
    reply.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("reviewId")
        .to_string()
}

/// Writes a document-level comment; returns the comment object.
async fn comment(client: &Client, review_id: &str, body: &str, category: &str) -> Value {
    let reply = client
        .post(
            &format!("/api/reviews/{review_id}/comments"),
            &json!({ "body": body, "category": category }),
        )
        .await;
    reply.expect(201)["comment"].clone()
}

/// Writes a note; returns its id.
async fn note(client: &Client, review_id: &str, body: &str) -> String {
    id_of(&comment(client, review_id, body, "note").await)
}

/// Replies to a comment; returns the message id.
async fn reply_to(client: &Client, review_id: &str, comment_id: &str, body: &str) -> String {
    let reply = client
        .post(
            &format!("/api/reviews/{review_id}/comments/{comment_id}/thread"),
            &json!({ "body": body }),
        )
        .await;
    id_of(&reply.expect(201)["message"])
}

async fn set_status(client: &Client, review_id: &str, comment_id: &str, status: &str) {
    client
        .post(
            &format!("/api/reviews/{review_id}/comments/{comment_id}/status-events"),
            &json!({ "status": status }),
        )
        .await
        .expect(201);
}

/// The snippet as plain text: marks removed, entities decoded, ellipses trimmed.
fn snippet_text(snippet: &str) -> String {
    snippet
        .replace("<mark>", "")
        .replace("</mark>", "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
        .trim_matches('…')
        .trim()
        .to_string()
}

/// Asserts a snippet, read as text, is a passage of `original` holding at least `passage`
/// (a snippet is an excerpt: it may end at a word, before trailing punctuation).
#[track_caller]
fn assert_excerpt(snippet: &Value, original: &str, passage: &str) {
    let text = snippet_text(snippet.as_str().expect("snippet is a string"));
    assert!(
        original.contains(&text) && text.contains(passage),
        "the snippet text `{text}` should be a passage of `{original}` holding `{passage}`"
    );
}

/// The texts inside `<mark>…</mark>`, in order.
fn marked(snippet: &str) -> Vec<String> {
    snippet
        .split("<mark>")
        .skip(1)
        .filter_map(|part| {
            part.split_once("</mark>")
                .map(|(inside, _)| inside.to_string())
        })
        .collect()
}

/// Asserts a snippet is HTML whose only tags are `<mark>` and that it marks `word`.
#[track_caller]
fn assert_snippet(snippet: &Value, word: &str) {
    let snippet = snippet.as_str().expect("snippet is a string");
    assert!(
        snippet.contains(&format!("<mark>{word}</mark>")),
        "`{word}` should be marked in {snippet}"
    );
    let without_marks = snippet.replace("<mark>", "").replace("</mark>", "");
    assert!(
        !without_marks.contains('<') && !without_marks.contains('>'),
        "no tag but <mark> may appear unescaped: {snippet}"
    );
}

/// A server with Ada (every document scope) and one link-mode document of hers.
struct Fixture {
    server: Server,
    ada: Client,
    ada_id: String,
    doc: String,
}

async fn setup() -> Fixture {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada Lovelace", &[]);
    let ada = server.client(Some(&server.issue_token("ada@example.com", ALL_DOC_SCOPES)));
    let doc = document(
        &ada,
        "Release plan",
        "<h1>Release</h1><p>Ship the service on Friday.</p>",
    )
    .await;
    Fixture {
        server,
        ada,
        ada_id,
        doc,
    }
}

// ---------------------------------------------------------------------------------------------
// Comments: the query language and the result fields

#[tokio::test]
async fn a_word_finds_every_word_it_begins_whatever_the_case() {
    let fx = setup().await;
    let before = now_ms();
    let written = comment(
        &fx.ada,
        &fx.doc,
        "The Deployment window is too short.",
        "revise",
    )
    .await;
    let cid = id_of(&written);
    let fonts = note(&fx.ada, &fx.doc, "Unrelated remark about fonts.").await;

    let hits = results(&fx.ada, COMMENTS, &[("q", "deploy")]).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_eq!(hit["reviewId"], fx.doc.as_str());
    assert_eq!(hit["reviewTitle"], "Release plan");
    assert_eq!(hit["commentId"], cid.as_str());
    assert!(
        hit.get("messageId").is_none(),
        "a comment's own body: {hit}"
    );
    assert_eq!(
        hit["author"],
        json!({ "id": fx.ada_id, "provider": "local", "displayName": "Ada Lovelace" })
    );
    assert_eq!(hit["category"], "revise");
    assert_eq!(hit["status"], "open");
    assert_eq!(hit["createdTs"], written["createdTs"]);
    let created = rfc3339_ms(hit["createdTs"].as_str().expect("createdTs"));
    assert!(created >= before - 1000 && created <= now_ms() + 1000);
    assert_snippet(&hit["snippet"], "Deployment");
    assert_excerpt(
        &hit["snippet"],
        "The Deployment window is too short.",
        "The Deployment window is too short",
    );

    for q in ["DEPLOY", "Deployment", "deploy window", "  deploy!  "] {
        assert_eq!(
            comment_hits(&fx.ada, &[("q", q)]).await,
            vec![cid.clone()],
            "q={q}"
        );
    }
    // A word matches words it begins, not words it is inside of or longer than.
    for q in ["ployment", "deployments", "deploy fonts"] {
        assert!(comment_hits(&fx.ada, &[("q", q)]).await.is_empty(), "q={q}");
    }
    assert_eq!(comment_hits(&fx.ada, &[("q", "font")]).await, vec![fonts]);
    // Query syntax is never passed through: operators are just words.
    assert!(
        comment_hits(&fx.ada, &[("q", "deploy OR fonts")])
            .await
            .is_empty()
    );
    assert!(
        comment_hits(&fx.ada, &[("q", "NEAR(deploy* -fonts")])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_quoted_phrase_matches_those_words_in_that_order() {
    let fx = setup().await;
    let staged = note(&fx.ada, &fx.doc, "We need a staged rollout plan.").await;
    let loose = note(&fx.ada, &fx.doc, "The rollout is not staged yet.").await;

    assert_eq!(
        comment_hits(&fx.ada, &[("q", "\"staged rollout\"")]).await,
        vec![staged.clone()]
    );
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "\"Staged Rollout Plan\"")]).await,
        vec![staged.clone()]
    );
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "staged rollout")]).await,
        sorted(&[&staged, &loose]),
        "unquoted words match anywhere"
    );
    assert!(
        comment_hits(&fx.ada, &[("q", "\"rollout staged\"")])
            .await
            .is_empty()
    );
    assert!(
        comment_hits(&fx.ada, &[("q", "\"staged rollout\" yet")])
            .await
            .is_empty(),
        "every part must match"
    );
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "\"not staged\" roll")]).await,
        vec![loose]
    );
    // A phrase is marked as a whole or word by word.
    let hits = results(&fx.ada, COMMENTS, &[("q", "\"staged rollout\"")]).await;
    let snippet = hits[0]["snippet"].as_str().expect("snippet");
    assert_eq!(marked(snippet).join(" "), "staged rollout", "{snippet}");
    assert_excerpt(
        &hits[0]["snippet"],
        "We need a staged rollout plan.",
        "staged rollout",
    );
}

#[tokio::test]
async fn replies_are_found_with_their_message_id_and_their_comment_s_status() {
    let fx = setup().await;
    let bob_id = fx.server.create_user("bob@example.com", "Bob", &[]);
    let bob = fx
        .server
        .client(Some(&fx.server.issue_token("bob@example.com", "comments")));
    let question = id_of(&comment(&fx.ada, &fx.doc, "Do the fonts load?", "consult").await);
    let answer = reply_to(&bob, &fx.doc, &question, "The deployment fixes the fonts.").await;

    let hits = results(&fx.ada, COMMENTS, &[("q", "deployment")]).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_eq!(hit["commentId"], question.as_str());
    assert_eq!(hit["messageId"], answer.as_str());
    assert_eq!(hit["reviewId"], fx.doc.as_str());
    assert_eq!(hit["author"]["id"], bob_id.as_str(), "the reply's author");
    assert_eq!(hit["category"], "consult", "the comment's category");
    assert_eq!(hit["status"], "open");
    assert_snippet(&hit["snippet"], "deployment");

    assert_eq!(
        comment_hits(&fx.ada, &[("q", "fonts")]).await,
        sorted(&[&question, &format!("{question}#{answer}")])
    );

    set_status(&fx.ada, &fx.doc, &question, "closed").await;
    let hits = results(&fx.ada, COMMENTS, &[("q", "deployment")]).await;
    assert_eq!(
        hits[0]["status"], "closed",
        "replies follow their comment's status"
    );
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "fonts"), ("status", "closed")]).await,
        sorted(&[&question, &format!("{question}#{answer}")])
    );
}

#[tokio::test]
async fn snippets_escape_user_text() {
    let fx = setup().await;
    let body = "Ship <script>alert(\"pwned\")</script> & tell Bob's team <b>now</b>";
    note(&fx.ada, &fx.doc, body).await;

    let hits = results(&fx.ada, COMMENTS, &[("q", "pwned")]).await;
    assert_eq!(hits.len(), 1);
    let snippet = hits[0]["snippet"].as_str().expect("snippet");
    assert_snippet(&hits[0]["snippet"], "pwned");
    assert!(snippet.contains("&lt;script&gt;"), "{snippet}");
    assert!(!snippet.contains("<script"), "{snippet}");
    assert!(!snippet.contains("<b>"), "{snippet}");
    assert!(snippet.contains(" &amp; "), "{snippet}");
    // Nothing is lost but markup: the text reads back as written.
    assert_excerpt(
        &hits[0]["snippet"],
        body,
        "Ship <script>alert(\"pwned\")</script> & tell Bob's team <b>now",
    );

    // Markup-looking text is only text to the search too.
    assert_eq!(
        results(&fx.ada, COMMENTS, &[("q", "script")]).await.len(),
        1
    );
}

// ---------------------------------------------------------------------------------------------
// Comments: filters, validation, paging

#[tokio::test]
async fn status_category_and_document_filters_narrow_the_results() {
    let fx = setup().await;
    let other = document(&fx.ada, "Other", "<p>Other text.</p>").await;
    let revise = id_of(&comment(&fx.ada, &fx.doc, "alpha one", "revise").await);
    let note_a = id_of(&comment(&fx.ada, &fx.doc, "alpha two", "note").await);
    let closed = id_of(&comment(&fx.ada, &fx.doc, "alpha three", "consult").await);
    let note_b = id_of(&comment(&fx.ada, &other, "alpha four", "note").await);
    set_status(&fx.ada, &fx.doc, &closed, "closed").await;

    let hits = |params: Vec<(&'static str, String)>| {
        let ada = fx.ada.clone();
        async move {
            let mut all = vec![("q", "alpha".to_string())];
            all.extend(params);
            let borrowed: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
            comment_hits(&ada, &borrowed).await
        }
    };
    let doc = fx.doc.clone();
    assert_eq!(
        hits(vec![]).await,
        sorted(&[&revise, &note_a, &closed, &note_b])
    );
    assert_eq!(
        hits(vec![("status", "open".into())]).await,
        sorted(&[&revise, &note_a, &note_b])
    );
    assert_eq!(
        hits(vec![("status", "closed".into())]).await,
        vec![closed.clone()]
    );
    assert_eq!(
        hits(vec![("category", "note".into())]).await,
        sorted(&[&note_a, &note_b])
    );
    assert_eq!(
        hits(vec![("category", "revise".into())]).await,
        vec![revise.clone()]
    );
    assert!(hits(vec![("category", "delete".into())]).await.is_empty());
    assert_eq!(
        hits(vec![("reviewId", doc.clone())]).await,
        sorted(&[&revise, &note_a, &closed])
    );
    assert_eq!(
        hits(vec![
            ("reviewId", other.clone()),
            ("category", "note".into())
        ])
        .await,
        vec![note_b.clone()]
    );
    assert!(
        hits(vec![
            ("status", "open".into()),
            ("category", "consult".into())
        ])
        .await
        .is_empty()
    );
    assert!(
        hits(vec![("reviewId", "no-such-document".into())])
            .await
            .is_empty()
    );

    // The filters follow later changes of status.
    set_status(&fx.ada, &fx.doc, &closed, "open").await;
    assert!(hits(vec![("status", "closed".into())]).await.is_empty());
    assert_eq!(
        hits(vec![("status", "open".into()), ("reviewId", doc)]).await,
        sorted(&[&revise, &note_a, &closed])
    );
}

#[tokio::test]
async fn malformed_search_parameters_are_rejected() {
    let fx = setup().await;
    note(&fx.ada, &fx.doc, "alpha").await;
    let bad_comment_queries: [&[(&str, &str)]; 16] = [
        &[],
        &[("q", "")],
        &[("q", "   ")],
        &[("q", "!!! *** ---")],
        &[("q", "\"\"")],
        &[("q", "alpha"), ("status", "pending")],
        &[("q", "alpha"), ("status", "")],
        &[("q", "alpha"), ("category", "bogus")],
        &[("q", "alpha"), ("category", "")],
        &[("q", "alpha"), ("limit", "0")],
        &[("q", "alpha"), ("limit", "201")],
        &[("q", "alpha"), ("limit", "-1")],
        &[("q", "alpha"), ("limit", "ten")],
        &[("q", "alpha"), ("cursor", "!!!")],
        // Valid base64 ("hello"), but no cursor this server issued.
        &[("q", "alpha"), ("cursor", "aGVsbG8")],
        &[("q", "alpha"), ("cursor", "")],
    ];
    for params in bad_comment_queries {
        let reply = search(&fx.ada, COMMENTS, params).await;
        assert_eq!(
            reply.status, 400,
            "{params:?} should be refused: {}",
            reply.text
        );
        reply.expect_error(400, "invalid_request");
    }
    let bad_doc_queries: [&[(&str, &str)]; 7] = [
        &[],
        &[("q", "")],
        &[("q", "?!")],
        &[("q", "release"), ("limit", "0")],
        &[("q", "release"), ("limit", "201")],
        &[("q", "release"), ("cursor", "!!!")],
        &[("q", "release"), ("cursor", "aGVsbG8")],
    ];
    for params in bad_doc_queries {
        let reply = search(&fx.ada, DOCS, params).await;
        assert_eq!(
            reply.status, 400,
            "{params:?} should be refused: {}",
            reply.text
        );
        reply.expect_error(400, "invalid_request");
    }
    // The bounds themselves are fine.
    for limit in ["1", "200"] {
        assert_eq!(
            results(&fx.ada, COMMENTS, &[("q", "alpha"), ("limit", limit)])
                .await
                .len(),
            1
        );
        assert_eq!(
            results(&fx.ada, DOCS, &[("q", "release"), ("limit", limit)])
                .await
                .len(),
            1
        );
    }
}

/// Follows `nextCursor` from the first page to the last; returns the pages.
async fn all_pages(client: &Client, path: &str, q: &str, limit: &str) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = vec![("q", q), ("limit", limit)];
        if let Some(cursor) = &cursor {
            params.push(("cursor", cursor));
        }
        let reply = search(client, path, &params).await;
        let body = reply.expect(200);
        pages.push(body["results"].as_array().expect("results").clone());
        match &body["nextCursor"] {
            Value::Null => return pages,
            Value::String(next) => cursor = Some(next.clone()),
            other => panic!("nextCursor must be a string or null: {other}"),
        }
        assert!(pages.len() < 20, "paging does not end");
    }
}

#[tokio::test]
async fn comment_pages_are_disjoint_and_cover_every_hit() {
    let fx = setup().await;
    let mut written = BTreeSet::new();
    for n in 0..7 {
        written.insert(note(&fx.ada, &fx.doc, &format!("paging marker number {n}")).await);
    }
    note(&fx.ada, &fx.doc, "something else").await;

    let pages = all_pages(&fx.ada, COMMENTS, "marker", "3").await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    let mut seen = BTreeSet::new();
    for hit in pages.iter().flatten() {
        let id = hit["commentId"].as_str().expect("commentId").to_string();
        assert!(seen.insert(id.clone()), "{id} appears on two pages");
    }
    assert_eq!(seen, written);

    // A page that ends exactly at the last hit says so.
    let pages = all_pages(&fx.ada, COMMENTS, "marker", "7").await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), vec![7]);
    let pages = all_pages(&fx.ada, COMMENTS, "marker", "6").await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), vec![6, 1]);
    // Without a limit, one page of up to 50.
    let reply = search(&fx.ada, COMMENTS, &[("q", "marker")]).await;
    assert_eq!(
        reply.expect(200)["results"].as_array().map(Vec::len),
        Some(7)
    );
    assert_eq!(reply.json["nextCursor"], Value::Null);
}

#[tokio::test]
async fn document_pages_are_disjoint_and_cover_every_hit() {
    let fx = setup().await;
    let mut written = BTreeSet::new();
    for n in 0..5 {
        written.insert(document(&fx.ada, &format!("Ledger {n}"), "<p>Columns and rows.</p>").await);
    }
    let pages = all_pages(&fx.ada, DOCS, "ledger", "2").await;
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![2, 2, 1]
    );
    let mut seen = BTreeSet::new();
    for hit in pages.iter().flatten() {
        let id = hit["reviewId"].as_str().expect("reviewId").to_string();
        assert!(seen.insert(id.clone()), "{id} appears on two pages");
    }
    assert_eq!(seen, written);
}

// ---------------------------------------------------------------------------------------------
// Comments: the index follows every change

#[tokio::test]
async fn edited_comments_and_replies_are_found_by_their_new_text_only() {
    let fx = setup().await;
    let cid = note(&fx.ada, &fx.doc, "Check the banana figures.").await;
    let mid = reply_to(&fx.ada, &fx.doc, &cid, "The mango column is off.").await;
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "banana")]).await,
        vec![cid.clone()]
    );

    let path = format!("/api/reviews/{}/comments/{cid}", fx.doc);
    fx.ada
        .patch(&path, &json!({ "body": "Check the cherry figures." }))
        .await
        .expect(200);
    fx.ada
        .patch(
            &format!("{path}/thread/{mid}"),
            &json!({ "body": "The papaya column is off." }),
        )
        .await
        .expect(200);

    assert!(comment_hits(&fx.ada, &[("q", "banana")]).await.is_empty());
    assert!(comment_hits(&fx.ada, &[("q", "mango")]).await.is_empty());
    let hits = results(&fx.ada, COMMENTS, &[("q", "cherry")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["commentId"], cid.as_str());
    assert_snippet(&hits[0]["snippet"], "cherry");
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "papaya")]).await,
        vec![format!("{cid}#{mid}")]
    );
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "column")]).await,
        vec![format!("{cid}#{mid}")]
    );
}

#[tokio::test]
async fn cancelled_comments_replies_and_run_comments_are_not_found() {
    let fx = setup().await;
    let kept = note(&fx.ada, &fx.doc, "A kiwi that stays.").await;
    let cancelled = note(&fx.ada, &fx.doc, "A kiwi remark, withdrawn.").await;
    let reply = reply_to(&fx.ada, &fx.doc, &kept, "A kiwi reply, withdrawn.").await;
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "kiwi")]).await,
        sorted(&[&kept, &cancelled, &format!("{kept}#{reply}")])
    );

    let base = format!("/api/reviews/{}/comments", fx.doc);
    fx.ada
        .delete(&format!("{base}/{cancelled}"))
        .await
        .expect(200);
    fx.ada
        .delete(&format!("{base}/{kept}/thread/{reply}"))
        .await
        .expect(200);
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "kiwi")]).await,
        vec![kept.clone()]
    );
    assert!(
        comment_hits(&fx.ada, &[("q", "withdrawn")])
            .await
            .is_empty()
    );

    // A run's provisional comments are found while the run is open, and not once it is cancelled.
    let agent = fx.server.agent();
    let runs = format!("/api/reviews/{}/ai-review-runs", fx.doc);
    let run = agent.post(&runs, &json!({ "title": "Pass" })).await;
    let run_id = id_of(&run.expect(201)["run"]);
    let run_comment = agent
        .post(
            &format!("{runs}/{run_id}/comments"),
            &json!({ "body": "A lychee suggestion from the run." }),
        )
        .await;
    let run_comment = id_of(&run_comment.expect(201)["comment"]);
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "lychee")]).await,
        vec![run_comment]
    );
    agent
        .patch(
            &format!("{runs}/{run_id}"),
            &json!({ "status": "cancelled" }),
        )
        .await
        .expect(200);
    assert!(comment_hits(&fx.ada, &[("q", "lychee")]).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Visibility

#[tokio::test]
async fn comments_of_a_restricted_document_are_found_only_by_those_who_may_read_it() {
    let fx = setup().await;
    let bob = fx.server.user("bob@example.com", "Bob", &[], "comments");
    let carol = fx
        .server
        .user("carol@example.com", "Carol", &[], ALL_DOC_SCOPES);
    let root = fx
        .server
        .user("root@example.com", "Root", &["--admin"], "comments");
    let ext = fx.server.user(
        "ext@partner.example",
        "Ext",
        &["--external"],
        ALL_DOC_SCOPES,
    );
    let secret = restricted_document(
        &fx.ada,
        "Secret",
        "<p>Board papers.</p>",
        json!([{ "email": "bob@example.com", "role": "viewer" }]),
    )
    .await;
    let hidden = note(&fx.ada, &secret, "confidential merger terms").await;
    let hidden_reply = reply_to(&bob, &secret, &hidden, "confidential indeed").await;
    let open = note(&fx.ada, &fx.doc, "confidential lunch order").await;
    let everything = sorted(&[&hidden, &format!("{hidden}#{hidden_reply}"), &open]);

    for (who, client) in [
        ("owner", &fx.ada),
        ("shared with", &bob),
        ("org admin", &root),
        ("agent token", &fx.server.agent()),
        ("import token", &fx.server.importer()),
    ] {
        assert_eq!(
            comment_hits(client, &[("q", "confidential")]).await,
            everything,
            "{who}"
        );
    }
    assert_eq!(
        comment_hits(&carol, &[("q", "confidential")]).await,
        vec![open.clone()],
        "an internal member it is not shared with"
    );
    for params in [
        [("q", "merger"), ("reviewId", secret.as_str())],
        [("q", "confidential"), ("reviewId", secret.as_str())],
    ] {
        assert!(comment_hits(&carol, &params).await.is_empty());
    }
    // External members see nothing of link-mode documents.
    assert!(
        comment_hits(&ext, &[("q", "confidential")])
            .await
            .is_empty()
    );
    assert!(comment_hits(&ext, &[("q", "lunch")]).await.is_empty());

    // Visibility is decided at query time: unsharing takes effect at once.
    fx.ada
        .patch(
            &format!("/api/reviews/{secret}/access"),
            &json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "viewer" }] }),
        )
        .await
        .expect(200);
    assert_eq!(
        comment_hits(&bob, &[("q", "confidential")]).await,
        vec![open.clone()]
    );
    assert_eq!(
        comment_hits(&carol, &[("q", "confidential")]).await,
        everything
    );
}

#[tokio::test]
async fn restricted_documents_are_found_only_by_those_who_may_read_them() {
    let fx = setup().await;
    let bob = fx.server.user("bob@example.com", "Bob", &[], "comments");
    let carol = fx
        .server
        .user("carol@example.com", "Carol", &[], "comments");
    let root = fx
        .server
        .user("root@example.com", "Root", &["--admin"], "comments");
    let ext = fx
        .server
        .user("ext@partner.example", "Ext", &["--external"], "comments");
    let secret = restricted_document(
        &fx.ada,
        "Secret acquisition",
        "<p>The acquisition closes in May.</p>",
        json!([{ "email": "bob@example.com", "role": "editor" }]),
    )
    .await;
    let open = document(&fx.ada, "Open acquisition notes", "<p>Public.</p>").await;

    for client in [
        &fx.ada,
        &bob,
        &root,
        &fx.server.agent(),
        &fx.server.importer(),
    ] {
        assert_eq!(
            doc_hits(client, "acquisition").await,
            sorted(&[&secret, &open])
        );
    }
    assert_eq!(doc_hits(&carol, "acquisition").await, vec![open.clone()]);
    assert!(
        doc_hits(&carol, "closes").await.is_empty(),
        "nor by its text"
    );
    assert!(doc_hits(&ext, "acquisition").await.is_empty());
    assert!(doc_hits(&ext, "release").await.is_empty());

    // Each result carries the caller's own role.
    let role_of = |hits: Vec<Value>, id: &str| {
        hits.iter()
            .find(|hit| hit["reviewId"] == id)
            .map(|hit| hit["role"].clone())
    };
    let as_bob = results(&bob, DOCS, &[("q", "acquisition")]).await;
    assert_eq!(role_of(as_bob.clone(), &secret), Some(json!("editor")));
    assert_eq!(role_of(as_bob, &open), Some(json!("viewer")));
    let as_root = results(&root, DOCS, &[("q", "acquisition")]).await;
    assert_eq!(role_of(as_root, &secret), Some(json!("owner")));
}

// ---------------------------------------------------------------------------------------------
// Documents

#[tokio::test]
async fn documents_are_found_by_title_and_by_body_text() {
    let fx = setup().await;
    let carol = fx
        .server
        .user("carol@example.com", "Carol", &[], "comments");
    let roadmap = document(
        &fx.ada,
        "Quarterly roadmap",
        "<!doctype html><html><head><title>Head title</title>\
         <script>var hiddenword = 1;</script></head><body><h1>Goals</h1>\
         <p>Increase the marketing budget by ten percent.</p></body></html>",
    )
    .await;
    document(&fx.ada, "Fonts", "<p>Nothing here.</p>").await;
    note(&fx.ada, &roadmap, "Looks fine").await;

    let hits = results(&fx.ada, DOCS, &[("q", "Roadmap")]).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_snippet(&hit["snippet"], "roadmap");
    // Every field of the list summary, as the list shows it.
    let list = fx.ada.get("/api/reviews?limit=200").await;
    let row = list.expect(200)["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .find(|row| row["reviewId"] == roadmap.as_str())
        .expect("listed")
        .clone();
    let mut summary = hit.clone();
    summary.as_object_mut().expect("object").remove("snippet");
    assert_eq!(summary, row);
    assert_eq!(hit["title"], "Quarterly roadmap");
    assert_eq!(hit["role"], "owner");
    assert_eq!(hit["owner"]["id"], fx.ada_id.as_str());
    assert_eq!(hit["commentCount"], 1);
    assert_eq!(hit["openCommentCount"], 1);
    for field in ["createdAt", "updatedAt", "latestVersionId"] {
        assert!(hit[field].is_string(), "{field}: {hit}");
    }

    let hits = results(&fx.ada, DOCS, &[("q", "budg")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["reviewId"], roadmap.as_str());
    assert_snippet(&hits[0]["snippet"], "budget");
    assert_eq!(
        doc_hits(&fx.ada, "\"marketing budget\"").await,
        vec![roadmap.clone()]
    );
    assert!(doc_hits(&fx.ada, "\"budget marketing\"").await.is_empty());
    assert_eq!(
        doc_hits(&fx.ada, "goals quarterly").await,
        vec![roadmap.clone()]
    );
    assert!(doc_hits(&fx.ada, "roadmap fonts").await.is_empty());
    // Only the body's text counts: not scripts, not the head.
    assert!(doc_hits(&fx.ada, "hiddenword").await.is_empty());
    assert!(doc_hits(&fx.ada, "var").await.is_empty());

    let as_carol = results(&carol, DOCS, &[("q", "budget")]).await;
    assert_eq!(as_carol.len(), 1);
    assert_eq!(as_carol[0]["role"], "viewer");
}

#[tokio::test]
async fn document_snippets_escape_text() {
    let fx = setup().await;
    let id = document(
        &fx.ada,
        "Fish & <Chips>",
        "<p>Compare a&lt;b and x&gt;y with &quot;turbot&quot; &amp; co.</p>",
    )
    .await;
    let hits = results(&fx.ada, DOCS, &[("q", "turbot")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["reviewId"], id.as_str());
    let snippet = hits[0]["snippet"].as_str().expect("snippet");
    assert_snippet(&hits[0]["snippet"], "turbot");
    assert!(snippet.contains("a&lt;b"), "{snippet}");
    assert!(snippet.contains("x&gt;y"), "{snippet}");
    assert!(snippet.contains(" &amp; co"), "{snippet}");

    let hits = results(&fx.ada, DOCS, &[("q", "chips")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["title"], "Fish & <Chips>");
    assert_snippet(&hits[0]["snippet"], "Chips");
    assert_excerpt(&hits[0]["snippet"], "Fish & <Chips>", "Fish & <Chips");
}

#[tokio::test]
async fn a_new_version_replaces_the_text_search_finds() {
    let fx = setup().await;
    let id = document(&fx.ada, "Zoo guide", "<p>The walrus sleeps all day.</p>").await;
    assert_eq!(doc_hits(&fx.ada, "walrus").await, vec![id.clone()]);

    let upload = |html: &'static str, mode: Option<&'static str>| {
        let mut form =
            reqwest::multipart::Form::new().part("file", html_part(html.as_bytes(), "guide.html"));
        if let Some(mode) = mode {
            form = form.text("mode", mode);
        }
        form
    };
    let path = format!("/api/reviews/{id}/import-html");
    let added = fx
        .ada
        .multipart(&path, upload("<p>The narwhal swims at night.</p>", None))
        .await;
    let latest = added.expect(201)["review"]["latestVersionId"].clone();
    assert!(
        doc_hits(&fx.ada, "walrus").await.is_empty(),
        "the old text is gone"
    );
    let hits = results(&fx.ada, DOCS, &[("q", "narwhal")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["reviewId"], id.as_str());
    assert_eq!(hits[0]["latestVersionId"], latest);
    assert_snippet(&hits[0]["snippet"], "narwhal");
    assert_eq!(
        doc_hits(&fx.ada, "zoo").await,
        vec![id.clone()],
        "the title stays"
    );

    let replaced = fx
        .ada
        .multipart(
            &path,
            upload("<p>The octopus hides in a jar.</p>", Some("replace")),
        )
        .await;
    replaced.expect(200);
    assert!(doc_hits(&fx.ada, "narwhal").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "octopus").await, vec![id.clone()]);

    // The import token delivers versions too.
    fx.server
        .importer()
        .multipart(&path, upload("<p>A pelican arrives.</p>", None))
        .await
        .expect(201);
    assert!(doc_hits(&fx.ada, "octopus").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "pelican").await, vec![id]);
}

#[tokio::test]
async fn a_renamed_document_is_found_by_its_new_title() {
    let fx = setup().await;
    let id = document(&fx.ada, "Budget draft", "<p>Numbers.</p>").await;
    let cid = note(&fx.ada, &id, "Numbers look odd").await;
    fx.ada
        .patch(
            &format!("/api/reviews/{id}/title"),
            &json!({ "title": "Forecast final" }),
        )
        .await
        .expect(200);
    assert!(doc_hits(&fx.ada, "draft").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "forecast").await, vec![id.clone()]);
    assert_eq!(
        doc_hits(&fx.ada, "numbers").await,
        vec![id.clone()],
        "the text stays"
    );
    let hits = results(&fx.ada, COMMENTS, &[("q", "odd")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["commentId"], cid.as_str());
    assert_eq!(hits[0]["reviewTitle"], "Forecast final");
}

#[tokio::test]
async fn deleted_documents_disappear_from_both_searches() {
    let fx = setup().await;
    let root = fx
        .server
        .user("root@example.com", "Root", &["--admin"], "comments");
    let created = fx
        .ada
        .post(
            "/api/reviews",
            &json!({ "review": { "reviewId": "gone-doc", "title": "Zebra notes",
                                 "source": { "html": "<p>Zebra stripes.</p>" } } }),
        )
        .await;
    created.expect(201);
    let gone = note(&fx.ada, "gone-doc", "zebra comment").await;
    reply_to(&fx.ada, "gone-doc", &gone, "zebra reply").await;
    let keeper = document(&fx.ada, "Keeper", "<p>Zebra crossing.</p>").await;
    let kept = note(&fx.ada, &keeper, "zebra keeper").await;
    assert_eq!(
        results(&fx.server.agent(), COMMENTS, &[("q", "zebra")])
            .await
            .len(),
        3
    );
    assert_eq!(
        doc_hits(&fx.ada, "zebra").await,
        sorted(&["gone-doc", &keeper])
    );

    fx.ada.delete("/api/reviews/gone-doc").await.expect(200);
    for client in [&fx.ada, &root, &fx.server.agent()] {
        assert_eq!(
            comment_hits(client, &[("q", "zebra")]).await,
            vec![kept.clone()]
        );
        assert_eq!(doc_hits(client, "zebra").await, vec![keeper.clone()]);
        assert!(doc_hits(client, "notes").await.is_empty());
    }

    // A new document under the same id inherits nothing of the old one's index entries.
    let created = fx
        .ada
        .post(
            "/api/reviews",
            &json!({ "review": { "reviewId": "gone-doc", "title": "Yak notes",
                                 "source": { "html": "<p>Yak wool.</p>" } } }),
        )
        .await;
    created.expect(201);
    assert_eq!(comment_hits(&fx.ada, &[("q", "zebra")]).await, vec![kept]);
    assert!(
        comment_hits(&fx.ada, &[("q", "zebra"), ("reviewId", "gone-doc")])
            .await
            .is_empty()
    );
    assert_eq!(doc_hits(&fx.ada, "zebra").await, vec![keeper]);
    assert_eq!(
        doc_hits(&fx.ada, "notes").await,
        vec!["gone-doc".to_string()]
    );
    assert_eq!(doc_hits(&fx.ada, "yak").await, vec!["gone-doc".to_string()]);
}

// ---------------------------------------------------------------------------------------------
// Credentials

#[tokio::test]
async fn search_takes_a_reading_credential() {
    let fx = setup().await;
    note(&fx.ada, &fx.doc, "Friday it is").await;
    fx.server
        .create_user_with_password("pat@example.com", "Pat", &[], "correct horse battery");
    let cookie = fx
        .server
        .sign_in("pat@example.com", "correct horse battery")
        .await;
    let docs_only = fx
        .server
        .client(Some(&fx.server.issue_token("ada@example.com", "docs")));

    for path in [COMMENTS, DOCS] {
        let q = [("q", "friday")];
        search(&fx.server.client(None), path, &q)
            .await
            .expect_error(401, "unauthorized");
        search(&fx.server.client(Some("drp_not_a_real_token")), path, &q)
            .await
            .expect_error(401, "unauthorized");
        search(&fx.server.manager(), path, &q)
            .await
            .expect_error(403, "forbidden");
        for client in [
            &fx.ada,
            &docs_only,
            &cookie,
            &fx.server.agent(),
            &fx.server.importer(),
        ] {
            assert_eq!(results(client, path, &q).await.len(), 1, "{path}");
        }
    }
}

/// Words of neighbouring blocks are indexed apart (`textContent` glues "Scope" and "alphaword"
/// together; a reader sees two words), while anchoring keeps the text as it is.
#[tokio::test]
async fn words_of_neighbouring_blocks_are_found_apart() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let review = ada
        .create_review(
            "Blocks",
            "<h2>Scope</h2><p>alphaword</p><ul><li>firstitem</li><li>seconditem</li></ul>",
        )
        .await;
    let id = review["reviewId"].as_str().expect("id").to_string();
    for word in ["scope", "alphaword", "firstitem", "seconditem"] {
        let found = search(&ada, DOCS, &[("q", word)]).await;
        let results = found.expect(200)["results"]
            .as_array()
            .expect("results")
            .clone();
        assert_eq!(results.len(), 1, "{word}: {}", found.text);
        assert_eq!(results[0]["reviewId"], id.as_str());
    }
    // The anchoring text is unchanged: the glued passage is still one quote, and a quote
    // copied from the rendered page (a line break where the blocks meet) finds the same passage.
    for exact in ["Scopealphaword", "Scope\nalphaword", "Scope\n\nalphaword\n"] {
        let written = ada
            .post(
                &format!("/api/reviews/{id}/comments"),
                &json!({ "body": "x", "locator": { "quote": { "exact": exact } } }),
            )
            .await;
        let anchor = written.expect(201)["comment"]["anchor"].clone();
        assert_eq!(
            anchor["position"],
            json!({ "start": 0, "end": 14 }),
            "{exact:?}"
        );
        assert_eq!(anchor["quote"]["exact"], "Scopealphaword");
        assert_eq!(anchor["state"], "exact");
    }
    ada.post(
        &format!("/api/reviews/{id}/comments"),
        &json!({ "body": "x", "locator": { "quote": { "exact": "Scope\nnothing" } } }),
    )
    .await
    .expect_error(400, "invalid_request");
}
