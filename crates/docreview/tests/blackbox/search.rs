//! Full-text search over HTTP: `GET /api/search/comments` and `GET /api/search/docs` (DESIGN.md
//! §4.7): the query language (word prefixes, quoted phrases, every part must match), result
//! fields and escaped snippets, filters, paging, keeping the index in step with edits,
//! cancellations, new versions and deletions, and visibility: nobody finds what they cannot read.

use std::collections::BTreeSet;

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, AnchorState, Category, CommentResult,
    CommentSearchQuery, CommentStatus, CommentView, DocResult, DocSearchQuery, FinishRun,
    GrantRole, NewComment, NewReply, Position, Provider, ReviewInput, Role, RunStatus,
    SharingChange, SourceInput, StartRun, StatusChange, TextEdit, TitleChange, User, VersionMode,
};
use docreview_client::{HtmlFile, VersionUpload};
use serde_json::Value;

use crate::support::{Client, Reply, Server, now_ms, quote, refused, rfc3339_ms};

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

/// Raw `GET path` with `params` URL-encoded, for what the typed client must not send.
async fn search(client: &Client, path: &str, params: &[(&str, &str)]) -> Reply {
    let query: Vec<String> = params
        .iter()
        .map(|(key, value)| format!("{key}={}", encode(value)))
        .collect();
    client.get(&format!("{path}?{}", query.join("&"))).await
}

/// The typed comment search `params` (`q`, `status`, `category`, `reviewId`, `limit`, `cursor`,
/// as the query string names them) spell; a value the typed query cannot hold is a test bug.
fn comment_query(params: &[(&str, &str)]) -> CommentSearchQuery {
    let mut query = CommentSearchQuery::default();
    for &(key, value) in params {
        match key {
            "q" => query.q = Some(value.to_string()),
            "status" => query.status = Some(CommentStatus::parse(value).expect("a status")),
            "category" => query.category = Some(Category::parse(value).expect("a category")),
            "reviewId" => query.review_id = Some(value.to_string()),
            "limit" => query.limit = Some(value.parse().expect("a limit")),
            "cursor" => query.cursor = Some(value.to_string()),
            other => panic!("no search parameter {other}"),
        }
    }
    query
}

/// The typed document search of `q`.
fn doc_query(q: &str) -> DocSearchQuery {
    DocSearchQuery {
        q: Some(q.to_string()),
        ..DocSearchQuery::default()
    }
}

/// The results of a comment search that must succeed; asserts a single page.
async fn comment_results(client: &Client, params: &[(&str, &str)]) -> Vec<CommentResult> {
    let page = client
        .api()
        .search_comments(&comment_query(params))
        .await
        .expect("comment search");
    assert_eq!(page.next_cursor, None, "one page: {page:?}");
    page.results
}

/// The results of a document search that must succeed; asserts a single page.
async fn doc_results(client: &Client, query: &DocSearchQuery) -> Vec<DocResult> {
    let page = client
        .api()
        .search_docs(query)
        .await
        .expect("document search");
    assert_eq!(page.next_cursor, None, "one page: {page:?}");
    page.results
}

/// The comment ids (with `#messageId` for replies) of a comment search, sorted.
async fn comment_hits(client: &Client, params: &[(&str, &str)]) -> Vec<String> {
    let mut ids: Vec<String> = comment_results(client, params)
        .await
        .iter()
        .map(|hit| match &hit.message_id {
            Some(message) => format!("{}#{message}", hit.comment_id),
            None => hit.comment_id.clone(),
        })
        .collect();
    ids.sort();
    ids
}

/// The review ids of a document search, sorted.
async fn doc_hits(client: &Client, q: &str) -> Vec<String> {
    let mut ids: Vec<String> = doc_results(client, &doc_query(q))
        .await
        .iter()
        .map(|hit| hit.review.review_id.clone())
        .collect();
    ids.sort();
    ids
}

fn sorted(ids: &[&str]) -> Vec<String> {
    let mut ids: Vec<String> = ids.iter().map(|id| (*id).to_string()).collect();
    ids.sort();
    ids
}

/// Creates a document and returns its id.
async fn document(client: &Client, title: &str, html: &str) -> String {
    client.upload(title, html).await.review_id
}

/// Creates a document from `review`; returns its id.
async fn create(client: &Client, review: ReviewInput) -> String {
    client.create(review).await.review_id
}

fn with_source(title: &str, html: &str) -> ReviewInput {
    ReviewInput {
        title: Some(title.to_string()),
        source: Some(SourceInput {
            html: Some(html.to_string()),
            label: None,
        }),
        ..ReviewInput::default()
    }
}

fn share(email: &str, role: GrantRole) -> AllowedUserEntry {
    AllowedUserEntry {
        email: email.to_string(),
        role,
    }
}

/// Creates a restricted document shared with `users`; returns its id.
async fn restricted_document(
    client: &Client,
    title: &str,
    html: &str,
    users: Vec<AllowedUserEntry>,
) -> String {
    let review = ReviewInput {
        access: Some(AccessInput {
            mode: Some(AccessMode::Restricted),
            allowed_users: Some(users),
        }),
        ..with_source(title, html)
    };
    create(client, review).await
}

/// Writes a document-level comment; returns the comment.
async fn comment(client: &Client, review_id: &str, body: &str, category: Category) -> CommentView {
    let input = NewComment {
        body: body.to_string(),
        category: Some(category),
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    };
    client
        .api()
        .add_comment(review_id, &input)
        .await
        .expect("comment")
        .comment
}

/// Writes a note; returns its id.
async fn note(client: &Client, review_id: &str, body: &str) -> String {
    comment(client, review_id, body, Category::Note).await.id
}

/// Replies to a comment; returns the message id.
async fn reply_to(client: &Client, review_id: &str, comment_id: &str, body: &str) -> String {
    let input = NewReply {
        body: body.to_string(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    client
        .api()
        .reply(review_id, comment_id, &input)
        .await
        .expect("reply")
        .message
        .id
}

async fn set_status(client: &Client, review_id: &str, comment_id: &str, status: CommentStatus) {
    let change = StatusChange {
        status,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    client
        .api()
        .set_status(review_id, comment_id, &change)
        .await
        .expect("status change");
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
fn assert_excerpt(snippet: &str, original: &str, passage: &str) {
    let text = snippet_text(snippet);
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
fn assert_snippet(snippet: &str, word: &str) {
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
        Category::Revise,
    )
    .await;
    let cid = written.id.clone();
    let fonts = note(&fx.ada, &fx.doc, "Unrelated remark about fonts.").await;

    let hits = comment_results(&fx.ada, &[("q", "deploy")]).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_eq!(hit.review_id, fx.doc);
    assert_eq!(hit.review_title, "Release plan");
    assert_eq!(hit.comment_id, cid);
    assert!(hit.message_id.is_none(), "a comment's own body: {hit:?}");
    assert_eq!(
        hit.author,
        User {
            id: fx.ada_id.clone(),
            provider: Provider::Local,
            display_name: "Ada Lovelace".into(),
            handle: "ada".into(),
        }
    );
    assert_eq!(hit.category, Category::Revise);
    assert_eq!(hit.status, CommentStatus::Open);
    assert_eq!(hit.created_ts, written.created_ts);
    let created = rfc3339_ms(&hit.created_ts);
    assert!(created >= before - 1000 && created <= now_ms() + 1000);
    assert_snippet(&hit.snippet, "Deployment");
    assert_excerpt(
        &hit.snippet,
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
    let hits = comment_results(&fx.ada, &[("q", "\"staged rollout\"")]).await;
    let snippet = hits[0].snippet.as_str();
    assert_eq!(marked(snippet).join(" "), "staged rollout", "{snippet}");
    assert_excerpt(snippet, "We need a staged rollout plan.", "staged rollout");
}

#[tokio::test]
async fn replies_are_found_with_their_message_id_and_their_comment_s_status() {
    let fx = setup().await;
    let bob_id = fx.server.create_user("bob@example.com", "Bob", &[]);
    let bob = fx
        .server
        .client(Some(&fx.server.issue_token("bob@example.com", "comments")));
    let question = comment(&fx.ada, &fx.doc, "Do the fonts load?", Category::Consult)
        .await
        .id;
    let answer = reply_to(&bob, &fx.doc, &question, "The deployment fixes the fonts.").await;

    let hits = comment_results(&fx.ada, &[("q", "deployment")]).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_eq!(hit.comment_id, question);
    assert_eq!(hit.message_id.as_deref(), Some(answer.as_str()));
    assert_eq!(hit.review_id, fx.doc);
    assert_eq!(hit.author.id, bob_id, "the reply's author");
    assert_eq!(hit.category, Category::Consult, "the comment's category");
    assert_eq!(hit.status, CommentStatus::Open);
    assert_snippet(&hit.snippet, "deployment");

    assert_eq!(
        comment_hits(&fx.ada, &[("q", "fonts")]).await,
        sorted(&[&question, &format!("{question}#{answer}")])
    );

    set_status(&fx.ada, &fx.doc, &question, CommentStatus::Closed).await;
    let hits = comment_results(&fx.ada, &[("q", "deployment")]).await;
    assert_eq!(
        hits[0].status,
        CommentStatus::Closed,
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

    let hits = comment_results(&fx.ada, &[("q", "pwned")]).await;
    assert_eq!(hits.len(), 1);
    let snippet = hits[0].snippet.as_str();
    assert_snippet(snippet, "pwned");
    assert!(snippet.contains("&lt;script&gt;"), "{snippet}");
    assert!(!snippet.contains("<script"), "{snippet}");
    assert!(!snippet.contains("<b>"), "{snippet}");
    assert!(snippet.contains(" &amp; "), "{snippet}");
    // Nothing is lost but markup: the text reads back as written.
    assert_excerpt(
        snippet,
        body,
        "Ship <script>alert(\"pwned\")</script> & tell Bob's team <b>now",
    );

    // Markup-looking text is only text to the search too.
    assert_eq!(comment_results(&fx.ada, &[("q", "script")]).await.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Comments: filters, validation, paging

#[tokio::test]
async fn status_category_and_document_filters_narrow_the_results() {
    let fx = setup().await;
    let other = document(&fx.ada, "Other", "<p>Other text.</p>").await;
    let revise = comment(&fx.ada, &fx.doc, "alpha one", Category::Revise)
        .await
        .id;
    let note_a = comment(&fx.ada, &fx.doc, "alpha two", Category::Note)
        .await
        .id;
    let closed = comment(&fx.ada, &fx.doc, "alpha three", Category::Consult)
        .await
        .id;
    let note_b = comment(&fx.ada, &other, "alpha four", Category::Note)
        .await
        .id;
    set_status(&fx.ada, &fx.doc, &closed, CommentStatus::Closed).await;

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
    set_status(&fx.ada, &fx.doc, &closed, CommentStatus::Open).await;
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
    // Raw: a missing or empty `q`, statuses and categories the API does not have, and limits
    // outside 1 to 200 or no number at all cannot (or may not) be sent by the typed client.
    let bad_comment_queries: [&[(&str, &str)]; 10] = [
        &[],
        &[("q", "")],
        &[("q", "alpha"), ("status", "pending")],
        &[("q", "alpha"), ("status", "")],
        &[("q", "alpha"), ("category", "bogus")],
        &[("q", "alpha"), ("category", "")],
        &[("q", "alpha"), ("limit", "0")],
        &[("q", "alpha"), ("limit", "201")],
        &[("q", "alpha"), ("limit", "-1")],
        &[("q", "alpha"), ("limit", "ten")],
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
    // Well-formed queries the server refuses: no word to find, or a cursor it never issued.
    let refused_comment_queries: [&[(&str, &str)]; 6] = [
        &[("q", "   ")],
        &[("q", "!!! *** ---")],
        &[("q", "\"\"")],
        &[("q", "alpha"), ("cursor", "!!!")],
        // Valid base64 ("hello"), but no cursor this server issued.
        &[("q", "alpha"), ("cursor", "aGVsbG8")],
        &[("q", "alpha"), ("cursor", "")],
    ];
    for params in refused_comment_queries {
        refused(
            fx.ada.api().search_comments(&comment_query(params)).await,
            400,
            "invalid_request",
        );
    }
    // Raw, as above.
    let bad_doc_queries: [&[(&str, &str)]; 4] = [
        &[],
        &[("q", "")],
        &[("q", "release"), ("limit", "0")],
        &[("q", "release"), ("limit", "201")],
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
    let refused_doc_queries = [
        doc_query("?!"),
        DocSearchQuery {
            cursor: Some("!!!".into()),
            ..doc_query("release")
        },
        DocSearchQuery {
            cursor: Some("aGVsbG8".into()),
            ..doc_query("release")
        },
    ];
    for query in refused_doc_queries {
        refused(
            fx.ada.api().search_docs(&query).await,
            400,
            "invalid_request",
        );
    }
    // The bounds themselves are fine.
    for limit in [1, 200] {
        let limit_text = limit.to_string();
        assert_eq!(
            comment_results(&fx.ada, &[("q", "alpha"), ("limit", &limit_text)])
                .await
                .len(),
            1
        );
        let query = DocSearchQuery {
            limit: Some(limit),
            ..doc_query("release")
        };
        assert_eq!(doc_results(&fx.ada, &query).await.len(), 1);
    }
}

/// Follows `nextCursor` of a comment search from the first page to the last; returns the pages.
async fn comment_pages(client: &Client, q: &str, limit: usize) -> Vec<Vec<CommentResult>> {
    let mut pages = Vec::new();
    let mut query = CommentSearchQuery {
        q: Some(q.to_string()),
        limit: Some(limit),
        ..CommentSearchQuery::default()
    };
    loop {
        let page = client.api().search_comments(&query).await.expect("a page");
        pages.push(page.results);
        match page.next_cursor {
            None => return pages,
            next => query.cursor = next,
        }
        assert!(pages.len() < 20, "paging does not end");
    }
}

/// Follows `nextCursor` of a document search from the first page to the last; returns the pages.
async fn doc_pages(client: &Client, q: &str, limit: usize) -> Vec<Vec<DocResult>> {
    let mut pages = Vec::new();
    let mut query = DocSearchQuery {
        limit: Some(limit),
        ..doc_query(q)
    };
    loop {
        let page = client.api().search_docs(&query).await.expect("a page");
        pages.push(page.results);
        match page.next_cursor {
            None => return pages,
            next => query.cursor = next,
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

    let pages = comment_pages(&fx.ada, "marker", 3).await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![3, 3, 1]);
    let mut seen = BTreeSet::new();
    for hit in pages.iter().flatten() {
        let id = hit.comment_id.clone();
        assert!(seen.insert(id.clone()), "{id} appears on two pages");
    }
    assert_eq!(seen, written);

    // A page that ends exactly at the last hit says so.
    let pages = comment_pages(&fx.ada, "marker", 7).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), vec![7]);
    let pages = comment_pages(&fx.ada, "marker", 6).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), vec![6, 1]);
    // Without a limit, one page of up to 50.
    let page = fx
        .ada
        .api()
        .search_comments(&comment_query(&[("q", "marker")]))
        .await
        .expect("search");
    assert_eq!(page.results.len(), 7);
    assert_eq!(page.next_cursor, None);
}

#[tokio::test]
async fn document_pages_are_disjoint_and_cover_every_hit() {
    let fx = setup().await;
    let mut written = BTreeSet::new();
    for n in 0..5 {
        written.insert(document(&fx.ada, &format!("Ledger {n}"), "<p>Columns and rows.</p>").await);
    }
    let pages = doc_pages(&fx.ada, "ledger", 2).await;
    assert_eq!(
        pages.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![2, 2, 1]
    );
    let mut seen = BTreeSet::new();
    for hit in pages.iter().flatten() {
        let id = hit.review.review_id.clone();
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

    let edit = |body: &str| TextEdit {
        body: body.to_string(),
        base_comments_revision: None,
        base_thread_revision: None,
    };
    fx.ada
        .api()
        .edit_comment(&fx.doc, &cid, &edit("Check the cherry figures."))
        .await
        .expect("edit comment");
    fx.ada
        .api()
        .edit_reply(&fx.doc, &cid, &mid, &edit("The papaya column is off."))
        .await
        .expect("edit reply");

    assert!(comment_hits(&fx.ada, &[("q", "banana")]).await.is_empty());
    assert!(comment_hits(&fx.ada, &[("q", "mango")]).await.is_empty());
    let hits = comment_results(&fx.ada, &[("q", "cherry")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].comment_id, cid);
    assert_snippet(&hits[0].snippet, "cherry");
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

    fx.ada
        .api()
        .cancel_comment(&fx.doc, &cancelled, None)
        .await
        .expect("cancel comment");
    fx.ada
        .api()
        .cancel_reply(&fx.doc, &kept, &reply, None)
        .await
        .expect("cancel reply");
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
    let start = StartRun {
        title: Some("Pass".into()),
        ..StartRun::default()
    };
    let run_id = agent
        .api()
        .start_run(&fx.doc, &start)
        .await
        .expect("start run")
        .id;
    let input = NewComment {
        body: "A lychee suggestion from the run.".into(),
        category: None,
        locator: None,
        base_comments_revision: None,

        suggestion: None,
    };
    let run_comment = agent
        .api()
        .add_run_comment(&fx.doc, &run_id, &input)
        .await
        .expect("run comment")
        .comment
        .id;
    assert_eq!(
        comment_hits(&fx.ada, &[("q", "lychee")]).await,
        vec![run_comment]
    );
    let cancel = FinishRun {
        status: RunStatus::Cancelled,
        summary: None,
        base_comments_revision: None,
    };
    agent
        .api()
        .finish_run(&fx.doc, &run_id, &cancel)
        .await
        .expect("cancel run");
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
        vec![share("bob@example.com", GrantRole::Viewer)],
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
    let unshare = SharingChange {
        mode: None,
        allowed_users: Some(vec![share("carol@example.com", GrantRole::Viewer)]),
    };
    fx.ada
        .api()
        .change_sharing(&secret, &unshare)
        .await
        .expect("change sharing");
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
        vec![share("bob@example.com", GrantRole::Editor)],
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
    let role_of = |hits: &[DocResult], id: &str| {
        hits.iter()
            .find(|hit| hit.review.review_id == id)
            .map(|hit| hit.review.role)
    };
    let as_bob = doc_results(&bob, &doc_query("acquisition")).await;
    assert_eq!(role_of(&as_bob, &secret), Some(Role::Editor));
    assert_eq!(role_of(&as_bob, &open), Some(Role::Viewer));
    let as_root = doc_results(&root, &doc_query("acquisition")).await;
    assert_eq!(role_of(&as_root, &secret), Some(Role::Owner));
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

    let hits = doc_results(&fx.ada, &doc_query("Roadmap")).await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    let hit = &hits[0];
    assert_snippet(&hit.snippet, "roadmap");
    // Raw: every field of the list summary, as the list shows it, and nothing else besides the
    // snippet: the two answers' objects compared whole.
    let found = search(&fx.ada, DOCS, &[("q", "Roadmap")]).await;
    let mut summary = found.expect(200)["results"][0].clone();
    let list = fx.ada.get("/api/reviews?limit=200").await;
    let row = list.expect(200)["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .find(|row| row["reviewId"] == roadmap.as_str())
        .expect("listed")
        .clone();
    summary.as_object_mut().expect("object").remove("snippet");
    assert_eq!(summary, row);
    let review = &hit.review;
    assert_eq!(review.review_id, roadmap);
    assert_eq!(review.title, "Quarterly roadmap");
    assert_eq!(review.role, Role::Owner);
    assert_eq!(review.owner.id, fx.ada_id);
    assert_eq!(review.comment_count, 1);
    assert_eq!(review.open_comment_count, 1);
    for (field, value) in [
        ("createdAt", &review.created_at),
        ("updatedAt", &review.updated_at),
        ("latestVersionId", &review.latest_version_id),
    ] {
        assert!(!value.is_empty(), "{field}: {hit:?}");
    }

    let hits = doc_results(&fx.ada, &doc_query("budg")).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].review.review_id, roadmap);
    assert_snippet(&hits[0].snippet, "budget");
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

    let as_carol = doc_results(&carol, &doc_query("budget")).await;
    assert_eq!(as_carol.len(), 1);
    assert_eq!(as_carol[0].review.role, Role::Viewer);
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
    let hits = doc_results(&fx.ada, &doc_query("turbot")).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].review.review_id, id);
    let snippet = hits[0].snippet.as_str();
    assert_snippet(snippet, "turbot");
    assert!(snippet.contains("a&lt;b"), "{snippet}");
    assert!(snippet.contains("x&gt;y"), "{snippet}");
    assert!(snippet.contains(" &amp; co"), "{snippet}");

    let hits = doc_results(&fx.ada, &doc_query("chips")).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].review.title, "Fish & <Chips>");
    assert_snippet(&hits[0].snippet, "Chips");
    assert_excerpt(&hits[0].snippet, "Fish & <Chips>", "Fish & <Chips");
}

#[tokio::test]
async fn a_new_version_replaces_the_text_search_finds() {
    let fx = setup().await;
    let id = document(&fx.ada, "Zoo guide", "<p>The walrus sleeps all day.</p>").await;
    assert_eq!(doc_hits(&fx.ada, "walrus").await, vec![id.clone()]);

    let upload = async |client: &Client, html: &str, mode: VersionMode| {
        let file = HtmlFile {
            name: "guide.html".into(),
            bytes: html.as_bytes().to_vec(),
        };
        let upload = VersionUpload {
            mode,
            label: None,
            base_version_id: None,
        };
        client
            .api()
            .import_version(&id, &file, &upload)
            .await
            .expect("upload a version")
    };
    let added = upload(
        &fx.ada,
        "<p>The narwhal swims at night.</p>",
        VersionMode::AddVersion,
    )
    .await;
    let latest = added.latest_version_id;
    assert!(
        doc_hits(&fx.ada, "walrus").await.is_empty(),
        "the old text is gone"
    );
    let hits = doc_results(&fx.ada, &doc_query("narwhal")).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].review.review_id, id);
    assert_eq!(hits[0].review.latest_version_id, latest);
    assert_snippet(&hits[0].snippet, "narwhal");
    assert_eq!(
        doc_hits(&fx.ada, "zoo").await,
        vec![id.clone()],
        "the title stays"
    );

    upload(
        &fx.ada,
        "<p>The octopus hides in a jar.</p>",
        VersionMode::Replace,
    )
    .await;
    assert!(doc_hits(&fx.ada, "narwhal").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "octopus").await, vec![id.clone()]);

    // The import token delivers versions too.
    upload(
        &fx.server.importer(),
        "<p>A pelican arrives.</p>",
        VersionMode::AddVersion,
    )
    .await;
    assert!(doc_hits(&fx.ada, "octopus").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "pelican").await, vec![id]);
}

#[tokio::test]
async fn a_renamed_document_is_found_by_its_new_title() {
    let fx = setup().await;
    let id = document(&fx.ada, "Budget draft", "<p>Numbers.</p>").await;
    let cid = note(&fx.ada, &id, "Numbers look odd").await;
    let rename = TitleChange {
        title: "Forecast final".into(),
    };
    fx.ada
        .api()
        .rename_review(&id, &rename)
        .await
        .expect("rename");
    assert!(doc_hits(&fx.ada, "draft").await.is_empty());
    assert_eq!(doc_hits(&fx.ada, "forecast").await, vec![id.clone()]);
    assert_eq!(
        doc_hits(&fx.ada, "numbers").await,
        vec![id.clone()],
        "the text stays"
    );
    let hits = comment_results(&fx.ada, &[("q", "odd")]).await;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].comment_id, cid);
    assert_eq!(hits[0].review_title, "Forecast final");
}

#[tokio::test]
async fn deleted_documents_disappear_from_both_searches() {
    let fx = setup().await;
    let root = fx
        .server
        .user("root@example.com", "Root", &["--admin"], "comments");
    let with_id = |title: &str, html: &str| ReviewInput {
        review_id: Some("gone-doc".into()),
        ..with_source(title, html)
    };
    create(&fx.ada, with_id("Zebra notes", "<p>Zebra stripes.</p>")).await;
    let gone = note(&fx.ada, "gone-doc", "zebra comment").await;
    reply_to(&fx.ada, "gone-doc", &gone, "zebra reply").await;
    let keeper = document(&fx.ada, "Keeper", "<p>Zebra crossing.</p>").await;
    let kept = note(&fx.ada, &keeper, "zebra keeper").await;
    assert_eq!(
        comment_results(&fx.server.agent(), &[("q", "zebra")])
            .await
            .len(),
        3
    );
    assert_eq!(
        doc_hits(&fx.ada, "zebra").await,
        sorted(&["gone-doc", &keeper])
    );

    fx.ada
        .api()
        .delete_review("gone-doc")
        .await
        .expect("delete");
    for client in [&fx.ada, &root, &fx.server.agent()] {
        assert_eq!(
            comment_hits(client, &[("q", "zebra")]).await,
            vec![kept.clone()]
        );
        assert_eq!(doc_hits(client, "zebra").await, vec![keeper.clone()]);
        assert!(doc_hits(client, "notes").await.is_empty());
    }

    // A new document under the same id inherits nothing of the old one's index entries.
    create(&fx.ada, with_id("Yak notes", "<p>Yak wool.</p>")).await;
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

    let q = [("q", "friday")];
    for (client, status, code) in [
        (fx.server.client(None), 401, "unauthorized"),
        (
            fx.server.client(Some("drp_not_a_real_token")),
            401,
            "unauthorized",
        ),
        (fx.server.manager(), 403, "forbidden"),
    ] {
        refused(
            client.api().search_comments(&comment_query(&q)).await,
            status,
            code,
        );
        refused(
            client.api().search_docs(&doc_query("friday")).await,
            status,
            code,
        );
    }
    for client in [
        &fx.ada,
        &docs_only,
        &fx.server.agent(),
        &fx.server.importer(),
    ] {
        assert_eq!(comment_results(client, &q).await.len(), 1, "{COMMENTS}");
        assert_eq!(
            doc_results(client, &doc_query("friday")).await.len(),
            1,
            "{DOCS}"
        );
    }
    // Raw: a signed-in browser's session cookie.
    for path in [COMMENTS, DOCS] {
        let found = search(&cookie, path, &q).await;
        let body = found.expect(200);
        assert_eq!(body["nextCursor"], Value::Null, "one page: {}", found.text);
        assert_eq!(body["results"].as_array().map(Vec::len), Some(1), "{path}");
    }
}

/// Words of neighbouring blocks are indexed apart (`textContent` glues "Scope" and "alphaword"
/// together; a reader sees two words), while anchoring keeps the text as it is.
#[tokio::test]
async fn words_of_neighbouring_blocks_are_found_apart() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let id = document(
        &ada,
        "Blocks",
        "<h2>Scope</h2><p>alphaword</p><ul><li>firstitem</li><li>seconditem</li></ul>",
    )
    .await;
    for word in ["scope", "alphaword", "firstitem", "seconditem"] {
        let results = doc_results(&ada, &doc_query(word)).await;
        assert_eq!(results.len(), 1, "{word}: {results:?}");
        assert_eq!(results[0].review.review_id, id);
    }
    // The anchoring text is unchanged: the glued passage is still one quote, and a quote
    // copied from the rendered page (a line break where the blocks meet) finds the same passage.
    let quoting = |exact: &str| NewComment {
        body: "x".into(),
        category: None,
        locator: Some(quote(exact)),
        base_comments_revision: None,
        suggestion: None,
    };
    for exact in ["Scopealphaword", "Scope\nalphaword", "Scope\n\nalphaword\n"] {
        let written = ada
            .api()
            .add_comment(&id, &quoting(exact))
            .await
            .expect("comment");
        let anchor = written.comment.anchor;
        assert_eq!(
            anchor.position,
            Some(Position { start: 0, end: 14 }),
            "{exact:?}"
        );
        assert_eq!(
            anchor.quote.map(|q| q.exact).as_deref(),
            Some("Scopealphaword")
        );
        assert_eq!(anchor.state, AnchorState::Exact);
    }
    refused(
        ada.api().add_comment(&id, &quoting("Scope\nnothing")).await,
        400,
        "invalid_request",
    );
}
