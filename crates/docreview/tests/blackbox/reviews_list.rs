//! `GET /api/reviews` (visibility, role per row, pagination, filters) and
//! `GET /api/reviews/{id}` (404 for missing and invisible documents, `includeDeleted`).

use std::collections::HashSet;

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, CommentStatus, CreateReview, GrantRole, ListQuery,
    ReviewInput, ReviewSummaryView, Role, SourceInput, StatusChange,
};
use serde_json::Value;

use crate::support::{Client, SAMPLE_HTML, Server, refused};

/// Creates a document through the typed client; returns its id.
async fn create(client: &Client, review: ReviewInput) -> String {
    client.create(review).await.review_id
}

/// Creates a document with `title` and access `mode`; returns its id.
async fn create_doc(client: &Client, title: &str, mode: AccessMode) -> String {
    let review = ReviewInput {
        title: Some(title.to_string()),
        access: Some(AccessInput {
            mode: Some(mode),
            allowed_users: None,
        }),
        source: Some(SourceInput {
            html: Some(SAMPLE_HTML.to_string()),
            label: None,
        }),
        ..ReviewInput::default()
    };
    create(client, review).await
}

async fn create_tagged(client: &Client, title: &str, tags: &[&str]) -> String {
    let review = ReviewInput {
        title: Some(title.to_string()),
        tags: Some(tags.iter().map(|tag| (*tag).to_string()).collect()),
        ..ReviewInput::default()
    };
    create(client, review).await
}

/// A restricted document shared with `email` as editor (no title, no source).
fn shared_with_editor(email: &str) -> ReviewInput {
    ReviewInput {
        access: Some(AccessInput {
            mode: Some(AccessMode::Restricted),
            allowed_users: Some(vec![AllowedUserEntry {
                email: email.to_string(),
                role: GrantRole::Editor,
            }]),
        }),
        ..ReviewInput::default()
    }
}

/// One page of the list: its rows and `nextCursor`.
async fn list(client: &Client, query: &ListQuery) -> (Vec<ReviewSummaryView>, Option<String>) {
    let page = client.api().list_reviews(query).await.expect("list");
    (page.reviews, page.next_cursor)
}

/// The first page with the defaults.
async fn list_all(client: &Client) -> (Vec<ReviewSummaryView>, Option<String>) {
    list(client, &ListQuery::default()).await
}

/// A page of `limit` rows after `cursor`.
fn page(limit: Option<usize>, cursor: Option<&str>) -> ListQuery {
    ListQuery {
        limit,
        cursor: cursor.map(str::to_string),
        ..ListQuery::default()
    }
}

fn ids(rows: &[ReviewSummaryView]) -> Vec<String> {
    rows.iter().map(|row| row.review_id.clone()).collect()
}

fn row<'a>(rows: &'a [ReviewSummaryView], id: &str) -> &'a ReviewSummaryView {
    rows.iter()
        .find(|row| row.review_id == id)
        .unwrap_or_else(|| panic!("{id} not listed in {rows:?}"))
}

fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

// ---------------------------------------------------------------------------------------------
// Visibility and roles

#[tokio::test]
async fn restricted_document_is_invisible_to_another_internal_user() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let secret = create_doc(&ada, "Secret", AccessMode::Restricted).await;
    let (rows, _) = list_all(&bob).await;
    assert!(rows.is_empty(), "bob sees nothing: {rows:?}");
    let (rows, _) = list_all(&ada).await;
    assert_eq!(ids(&rows), vec![secret]);
}

#[tokio::test]
async fn link_document_is_listed_for_internal_users_as_viewer() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    let (rows, _) = list_all(&bob).await;
    assert_eq!(ids(&rows), vec![open.clone()]);
    assert_eq!(row(&rows, &open).role, Role::Viewer);
    let (rows, _) = list_all(&ada).await;
    assert_eq!(row(&rows, &open).role, Role::Owner);
}

#[tokio::test]
async fn link_document_is_invisible_to_external_members() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    let (rows, _) = list_all(&xena).await;
    assert!(rows.is_empty(), "external members never see link documents");
    refused(xena.api().review(&open, false).await, 404, "not_found");
}

#[tokio::test]
async fn admin_lists_every_document_as_owner() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let root = server.user("root@example.com", "Root", &["--admin"], "");
    let secret = create_doc(&ada, "Secret", AccessMode::Restricted).await;
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    let (rows, _) = list_all(&root).await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![secret.clone(), open]));
    assert_eq!(row(&rows, &secret).role, Role::Owner);
    let read = root.api().review(&secret, false).await.expect("read");
    assert_eq!(read.role, Role::Owner);
}

#[tokio::test]
async fn import_and_agent_shared_tokens_list_every_document() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let secret = create_doc(&ada, "Secret", AccessMode::Restricted).await;
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    for client in [server.importer(), server.agent()] {
        let (rows, _) = list_all(&client).await;
        assert_eq!(
            sorted(ids(&rows)),
            sorted(vec![secret.clone(), open.clone()])
        );
        client.api().review(&secret, false).await.expect("read");
    }
}

#[tokio::test]
async fn manage_shared_token_may_not_list_or_read() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    let manager = server.manager();
    refused(
        manager.api().list_reviews(&ListQuery::default()).await,
        403,
        "forbidden",
    );
    refused(manager.api().review(&open, false).await, 403, "forbidden");
}

#[tokio::test]
async fn each_row_carries_the_callers_role() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let shared = create(
        &ada,
        ReviewInput {
            title: Some("Shared".into()),
            ..shared_with_editor("bob@example.com")
        },
    )
    .await;
    let viewed = create_doc(&ada, "Link", AccessMode::Link).await;
    let hidden = create_doc(&ada, "Hidden", AccessMode::Restricted).await;
    let own = create_doc(&bob, "Own", AccessMode::Restricted).await;
    let (rows, _) = list_all(&bob).await;
    assert_eq!(
        sorted(ids(&rows)),
        sorted(vec![shared.clone(), viewed.clone(), own.clone()]),
        "{hidden} must not be listed"
    );
    assert_eq!(row(&rows, &shared).role, Role::Editor);
    assert_eq!(row(&rows, &viewed).role, Role::Viewer);
    assert_eq!(row(&rows, &own).role, Role::Owner);
}

#[tokio::test]
async fn list_rows_carry_the_summary_fields() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada", &[]);
    let ada = server.client(Some(
        &server.issue_token("ada@example.com", "docs,comments"),
    ));
    let input = CreateReview {
        review: ReviewInput {
            title: Some("Summary".into()),
            tags: Some(vec!["t1".into()]),
            source: Some(SourceInput {
                html: Some(SAMPLE_HTML.into()),
                label: None,
            }),
            ..ReviewInput::default()
        },
        project: None,
    };
    let created = ada.api().create_review(&input).await.expect("create");
    let id = created.review_id.as_str();
    ada.note_on(id, "quick brown fox", "one").await;
    let second = ada.note_on(id, "lazy dog", "two").await;
    let close = StatusChange {
        status: CommentStatus::Closed,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    ada.api()
        .set_status(id, &second.comment.id, &close)
        .await
        .expect("close");

    let (rows, next) = list_all(&ada).await;
    assert_eq!(next, None);
    let summary = row(&rows, id);
    assert_eq!(summary.title, "Summary");
    assert_eq!(summary.tags, ["t1"]);
    assert!(!summary.archived);
    assert_eq!(summary.owner.id, ada_id);
    assert_eq!(summary.owner.display_name, "Ada");
    assert_eq!(summary.role, Role::Owner);
    assert_eq!(summary.created_at, created.created_at);
    assert!(!summary.updated_at.is_empty());
    assert_eq!(summary.latest_version_id, created.latest_version_id);
    assert_eq!(summary.comment_count, 2);
    assert_eq!(summary.open_comment_count, 1);
}

// ---------------------------------------------------------------------------------------------
// Order and pagination

#[tokio::test]
async fn list_is_newest_activity_first() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut created = Vec::new();
    for title in ["A", "B", "C"] {
        created.push(create_doc(&ada, title, AccessMode::Link).await);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (rows, _) = list_all(&ada).await;
    let expected: Vec<String> = created.iter().rev().cloned().collect();
    assert_eq!(ids(&rows), expected);

    // A comment on the oldest document is newer activity.
    ada.note_on(&created[0], "quick brown fox", "bump").await;
    let (rows, _) = list_all(&ada).await;
    assert_eq!(
        ids(&rows),
        vec![created[0].clone(), created[2].clone(), created[1].clone()]
    );
}

#[tokio::test]
async fn pagination_walks_every_page_without_duplicates() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let mut created = Vec::new();
    for n in 0..7 {
        created.push(create_doc(&ada, &format!("Doc {n}"), AccessMode::Link).await);
    }
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let (rows, next) = list(&ada, &page(Some(3), cursor.as_deref())).await;
        sizes.push(rows.len());
        seen.extend(ids(&rows));
        match next {
            None => break,
            Some(next) => cursor = Some(next),
        }
        assert!(sizes.len() < 10, "pagination does not end");
    }
    assert_eq!(sizes, vec![3, 3, 1]);
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(
        unique.len(),
        seen.len(),
        "duplicates across pages: {seen:?}"
    );
    assert_eq!(sorted(seen), sorted(created));
}

#[tokio::test]
async fn pagination_with_an_exact_multiple_ends_with_null_cursor() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for n in 0..4 {
        create_doc(&ada, &format!("Doc {n}"), AccessMode::Link).await;
    }
    let (rows, next) = list(&ada, &page(Some(2), None)).await;
    assert_eq!(rows.len(), 2);
    let cursor = next.expect("more pages");
    let (rows, next) = list(&ada, &page(Some(2), Some(&cursor))).await;
    assert_eq!(rows.len(), 2);
    if let Some(cursor) = next {
        let (rows, next) = list(&ada, &page(Some(2), Some(&cursor))).await;
        assert!(rows.is_empty());
        assert_eq!(next, None);
    }
    let (rows, next) = list(&ada, &page(Some(200), None)).await;
    assert_eq!(rows.len(), 4);
    assert_eq!(next, None);
    // Raw: on the wire, `nextCursor` is always present, and null on the last page.
    let body = ada.get("/api/reviews?limit=200").await.expect(200).clone();
    assert_eq!(
        body.get("nextCursor"),
        Some(&Value::Null),
        "nextCursor is always present (null on the last page): {body}"
    );
}

#[tokio::test]
async fn pagination_of_another_users_view_skips_invisible_documents() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let mut visible = Vec::new();
    for n in 0..6 {
        let mode = if n % 2 == 0 {
            AccessMode::Link
        } else {
            AccessMode::Restricted
        };
        let id = create_doc(&ada, &format!("Doc {n}"), mode).await;
        if mode == AccessMode::Link {
            visible.push(id);
        }
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let (rows, next) = list(&bob, &page(Some(2), cursor.as_deref())).await;
        seen.extend(ids(&rows));
        match next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(sorted(seen), sorted(visible));
}

#[tokio::test]
async fn default_page_size_is_50() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for n in 0..51 {
        let review = ReviewInput {
            title: Some(format!("Doc {n}")),
            ..ReviewInput::default()
        };
        create(&ada, review).await;
    }
    let (rows, next) = list_all(&ada).await;
    assert_eq!(rows.len(), 50);
    let cursor = next.expect("a second page");
    let (rest, next) = list(&ada, &page(None, Some(&cursor))).await;
    assert_eq!(rest.len(), 1);
    assert_eq!(next, None);
}

#[tokio::test]
async fn limit_outside_1_to_200_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    // Raw: limits outside the schema's 1 to 200, and ones that are no whole number.
    for limit in ["0", "201", "-1", "abc", "1.5", "99999999999999999999999"] {
        ada.get(&format!("/api/reviews?limit={limit}"))
            .await
            .expect_error(400, "invalid_request");
    }
    for limit in [1, 200] {
        ada.api()
            .list_reviews(&page(Some(limit), None))
            .await
            .expect("a limit at the bounds");
    }
}

#[tokio::test]
async fn cursor_not_issued_by_the_server_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    create_doc(&ada, "Doc", AccessMode::Link).await;
    // Garbage, base64 of text without the separator, base64 of a non-number, a short word.
    for cursor in ["!!!", "bm9jb2xvbg", "YWJjOnJ2X3g", "x"] {
        refused(
            ada.api().list_reviews(&page(None, Some(cursor))).await,
            400,
            "invalid_request",
        );
    }
    // Raw: bytes that are not UTF-8 (no string can carry them).
    ada.get("/api/reviews?cursor=%FF%FE")
        .await
        .expect_error(400, "invalid_request");
}

// ---------------------------------------------------------------------------------------------
// Filters

#[tokio::test]
async fn owner_me_lists_only_own_documents() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada", &[]);
    let ada = server.client(Some(&server.issue_token("ada@example.com", "docs")));
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let adas = create_doc(&ada, "Ada's", AccessMode::Link).await;
    let bobs = create_doc(&bob, "Bob's", AccessMode::Link).await;
    let (rows, _) = list_all(&bob).await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![adas, bobs.clone()]));
    let by_owner = |owner: &str| ListQuery {
        owner: Some(owner.to_string()),
        ..ListQuery::default()
    };
    let (rows, _) = list(&bob, &by_owner("me")).await;
    assert_eq!(ids(&rows), vec![bobs]);
    for owner in ["other", ada_id.as_str(), "ME", ""] {
        refused(
            bob.api().list_reviews(&by_owner(owner)).await,
            400,
            "invalid_request",
        );
    }
}

#[tokio::test]
async fn tag_filter_matches_whole_tags() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let alpha = create_tagged(&ada, "Alpha", &["alpha", "shared"]).await;
    let beta = create_tagged(&ada, "Beta", &["beta", "shared"]).await;
    let by_tag = |tag: &str| ListQuery {
        tag: Some(tag.to_string()),
        ..ListQuery::default()
    };
    let (rows, _) = list(&ada, &by_tag("alpha")).await;
    assert_eq!(ids(&rows), vec![alpha.clone()]);
    let (rows, _) = list(&ada, &by_tag("shared")).await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![alpha, beta]));
    let (rows, _) = list(&ada, &by_tag("alp")).await;
    assert!(rows.is_empty(), "a tag prefix is not a tag");
}

#[tokio::test]
async fn archived_filter_and_its_validation() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let one = create_doc(&ada, "One", AccessMode::Link).await;
    let archived = |archived: bool| ListQuery {
        archived: Some(archived),
        ..ListQuery::default()
    };
    let (rows, _) = list(&ada, &archived(false)).await;
    assert_eq!(ids(&rows), vec![one]);
    assert!(!rows[0].archived);
    let (rows, _) = list(&ada, &archived(true)).await;
    assert!(rows.is_empty(), "nothing is archived yet");
    // Raw: not a boolean.
    ada.get("/api/reviews?archived=maybe")
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn q_matches_title_substrings_case_insensitively() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let budget = create_doc(&ada, "Budget 2026", AccessMode::Link).await;
    let notes = create_doc(&ada, "Team budget notes", AccessMode::Link).await;
    create_doc(&ada, "Hiring plan", AccessMode::Link).await;
    let titled = |q: &str| ListQuery {
        q: Some(q.to_string()),
        ..ListQuery::default()
    };
    let (rows, _) = list(&ada, &titled("BUDGET")).await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![budget, notes]));
    let (rows, _) = list(&ada, &titled("nothing-like-this")).await;
    assert!(rows.is_empty());
    let (rows, _) = list(&ada, &titled("%")).await;
    assert!(rows.is_empty(), "`%` is literal, not a wildcard");
}

// ---------------------------------------------------------------------------------------------
// Reading one document

#[tokio::test]
async fn missing_document_is_404_not_found() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for id in ["rv_00000000000000000000000000", "nothing-here"] {
        refused(ada.api().review(id, false).await, 404, "not_found");
    }
}

#[tokio::test]
async fn invisible_document_is_404_never_403() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,access,comments");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let secret = create_doc(&ada, "Secret", AccessMode::Restricted).await;
    for client in [&bob, &xena] {
        refused(client.api().review(&secret, false).await, 404, "not_found");
        refused(client.api().review(&secret, true).await, 404, "not_found");
    }
}

#[tokio::test]
async fn include_deleted_by_a_viewer_is_403_forbidden() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,comments");
    let open = create_doc(&ada, "Open", AccessMode::Link).await;
    refused(bob.api().review(&open, true).await, 403, "forbidden");
    let read = bob.api().review(&open, false).await.expect("read");
    assert_eq!(read.role, Role::Viewer);
}

#[tokio::test]
async fn include_deleted_by_the_owner_shows_cancelled_comments() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = create_doc(&ada, "Open", AccessMode::Link).await;
    let written = ada.note_on(&id, "quick brown fox", "oops").await;
    let comment_id = written.comment.id.as_str();
    ada.api()
        .cancel_comment(&id, comment_id, None)
        .await
        .expect("cancel");

    let plain = ada.api().review(&id, false).await.expect("read");
    assert!(plain.comments.is_empty());
    let all = ada.api().review(&id, true).await.expect("read all");
    let comments = all.comments;
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0].id, comment_id);
    assert!(comments[0].deleted_ts.is_some(), "{:?}", comments[0]);
}

#[tokio::test]
async fn include_deleted_by_an_editor_or_shared_token_is_200() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let eve = server.user("eve@example.com", "Eve", &[], "");
    let id = create(&ada, shared_with_editor("eve@example.com")).await;
    for client in [eve, server.agent(), server.importer()] {
        client
            .api()
            .review(&id, true)
            .await
            .expect("read with deleted");
    }
}

#[tokio::test]
async fn include_deleted_must_be_a_boolean() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = create_doc(&ada, "Open", AccessMode::Link).await;
    // Raw: not a boolean.
    ada.get(&format!("/api/reviews/{id}?includeDeleted=yes-please"))
        .await
        .expect_error(400, "invalid_request");
}
