//! `GET /api/reviews` (visibility, role per row, pagination, filters) and
//! `GET /api/reviews/{id}` (404 for missing and invisible documents, `includeDeleted`).

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server};

/// Creates a document with `title` and access `mode`; returns its id.
async fn create_doc(client: &Client, title: &str, mode: &str) -> String {
    let reply = client
        .post(
            "/api/reviews",
            &json!({ "review": { "title": title, "access": { "mode": mode },
                                 "source": { "html": SAMPLE_HTML } } }),
        )
        .await;
    reply.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("reviewId")
        .to_string()
}

async fn create_tagged(client: &Client, title: &str, tags: Value) -> String {
    let reply = client
        .post(
            "/api/reviews",
            &json!({ "review": { "title": title, "tags": tags } }),
        )
        .await;
    reply.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("reviewId")
        .to_string()
}

/// One page of the list: its rows and `nextCursor`.
async fn list(client: &Client, query: &str) -> (Vec<Value>, Value) {
    let reply = client.get(&format!("/api/reviews{query}")).await;
    let body = reply.expect(200);
    let rows = body["reviews"].as_array().expect("reviews array").clone();
    assert!(
        body.get("nextCursor").is_some(),
        "nextCursor is always present (null on the last page): {body}"
    );
    (rows, body["nextCursor"].clone())
}

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|row| row["reviewId"].as_str().expect("reviewId").to_string())
        .collect()
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|row| row["reviewId"] == id)
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
    let secret = create_doc(&ada, "Secret", "restricted").await;
    let (rows, _) = list(&bob, "").await;
    assert!(rows.is_empty(), "bob sees nothing: {rows:?}");
    let (rows, _) = list(&ada, "").await;
    assert_eq!(ids(&rows), vec![secret]);
}

#[tokio::test]
async fn link_document_is_listed_for_internal_users_as_viewer() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let open = create_doc(&ada, "Open", "link").await;
    let (rows, _) = list(&bob, "").await;
    assert_eq!(ids(&rows), vec![open.clone()]);
    assert_eq!(row(&rows, &open)["role"], "viewer");
    let (rows, _) = list(&ada, "").await;
    assert_eq!(row(&rows, &open)["role"], "owner");
}

#[tokio::test]
async fn link_document_is_invisible_to_external_members() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let open = create_doc(&ada, "Open", "link").await;
    let (rows, _) = list(&xena, "").await;
    assert!(rows.is_empty(), "external members never see link documents");
    xena.get(&format!("/api/reviews/{open}"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn admin_lists_every_document_as_owner() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let root = server.user("root@example.com", "Root", &["--admin"], "");
    let secret = create_doc(&ada, "Secret", "restricted").await;
    let open = create_doc(&ada, "Open", "link").await;
    let (rows, _) = list(&root, "").await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![secret.clone(), open]));
    assert_eq!(row(&rows, &secret)["role"], "owner");
    let read = root.get(&format!("/api/reviews/{secret}")).await;
    assert_eq!(read.expect(200)["review"]["role"], "owner");
}

#[tokio::test]
async fn import_and_agent_shared_tokens_list_every_document() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let secret = create_doc(&ada, "Secret", "restricted").await;
    let open = create_doc(&ada, "Open", "link").await;
    for client in [server.importer(), server.agent()] {
        let (rows, _) = list(&client, "").await;
        assert_eq!(
            sorted(ids(&rows)),
            sorted(vec![secret.clone(), open.clone()])
        );
        client
            .get(&format!("/api/reviews/{secret}"))
            .await
            .expect(200);
    }
}

#[tokio::test]
async fn manage_shared_token_may_not_list_or_read() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let open = create_doc(&ada, "Open", "link").await;
    let manager = server.manager();
    manager
        .get("/api/reviews")
        .await
        .expect_error(403, "forbidden");
    manager
        .get(&format!("/api/reviews/{open}"))
        .await
        .expect_error(403, "forbidden");
}

#[tokio::test]
async fn each_row_carries_the_callers_role() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let shared = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Shared", "access": { "mode": "restricted",
                "allowedUsers": [{ "email": "bob@example.com", "role": "editor" }] } } }),
        )
        .await;
    let shared = shared.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let viewed = create_doc(&ada, "Link", "link").await;
    let hidden = create_doc(&ada, "Hidden", "restricted").await;
    let own = create_doc(&bob, "Own", "restricted").await;
    let (rows, _) = list(&bob, "").await;
    assert_eq!(
        sorted(ids(&rows)),
        sorted(vec![shared.clone(), viewed.clone(), own.clone()]),
        "{hidden} must not be listed"
    );
    assert_eq!(row(&rows, &shared)["role"], "editor");
    assert_eq!(row(&rows, &viewed)["role"], "viewer");
    assert_eq!(row(&rows, &own)["role"], "owner");
}

#[tokio::test]
async fn list_rows_carry_the_summary_fields() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada", &[]);
    let ada = server.client(Some(
        &server.issue_token("ada@example.com", "docs,comments"),
    ));
    let created = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Summary", "tags": ["t1"],
                                 "source": { "html": SAMPLE_HTML } } }),
        )
        .await;
    let created = created.expect(201)["review"].clone();
    let id = created["reviewId"].as_str().expect("id");
    ada.comment_on(id, "quick brown fox", "one").await;
    let second = ada.comment_on(id, "lazy dog", "two").await;
    let second_id = second["comment"]["id"].as_str().expect("comment id");
    ada.post(
        &format!("/api/reviews/{id}/comments/{second_id}/status-events"),
        &json!({ "status": "closed" }),
    )
    .await
    .expect(201);

    let (rows, next) = list(&ada, "").await;
    assert_eq!(next, Value::Null);
    let summary = row(&rows, id);
    assert_eq!(summary["title"], "Summary");
    assert_eq!(summary["tags"], json!(["t1"]));
    assert_eq!(summary["archived"], false);
    assert_eq!(summary["owner"]["id"], ada_id);
    assert_eq!(summary["owner"]["displayName"], "Ada");
    assert_eq!(summary["role"], "owner");
    assert_eq!(summary["createdAt"], created["createdAt"]);
    assert!(summary["updatedAt"].is_string());
    assert_eq!(summary["latestVersionId"], created["latestVersionId"]);
    assert_eq!(summary["commentCount"], 2);
    assert_eq!(summary["openCommentCount"], 1);
}

// ---------------------------------------------------------------------------------------------
// Order and pagination

#[tokio::test]
async fn list_is_newest_activity_first() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let mut created = Vec::new();
    for title in ["A", "B", "C"] {
        created.push(create_doc(&ada, title, "link").await);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (rows, _) = list(&ada, "").await;
    let expected: Vec<String> = created.iter().rev().cloned().collect();
    assert_eq!(ids(&rows), expected);

    // A comment on the oldest document is newer activity.
    ada.comment_on(&created[0], "quick brown fox", "bump").await;
    let (rows, _) = list(&ada, "").await;
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
        created.push(create_doc(&ada, &format!("Doc {n}"), "link").await);
    }
    let mut seen = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(cursor) => format!("?limit=3&cursor={cursor}"),
            None => "?limit=3".to_string(),
        };
        let (rows, next) = list(&ada, &query).await;
        sizes.push(rows.len());
        seen.extend(ids(&rows));
        match next {
            Value::Null => break,
            Value::String(next) => cursor = Some(next),
            other => panic!("nextCursor must be a string or null: {other}"),
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
        create_doc(&ada, &format!("Doc {n}"), "link").await;
    }
    let (rows, next) = list(&ada, "?limit=2").await;
    assert_eq!(rows.len(), 2);
    let cursor = next.as_str().expect("more pages");
    let (rows, next) = list(&ada, &format!("?limit=2&cursor={cursor}")).await;
    assert_eq!(rows.len(), 2);
    if let Some(cursor) = next.as_str() {
        let (rows, next) = list(&ada, &format!("?limit=2&cursor={cursor}")).await;
        assert!(rows.is_empty());
        assert_eq!(next, Value::Null);
    }
    let (rows, next) = list(&ada, "?limit=200").await;
    assert_eq!(rows.len(), 4);
    assert_eq!(next, Value::Null);
}

#[tokio::test]
async fn pagination_of_another_users_view_skips_invisible_documents() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let mut visible = Vec::new();
    for n in 0..6 {
        let mode = if n % 2 == 0 { "link" } else { "restricted" };
        let id = create_doc(&ada, &format!("Doc {n}"), mode).await;
        if mode == "link" {
            visible.push(id);
        }
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let query = match &cursor {
            Some(cursor) => format!("?limit=2&cursor={cursor}"),
            None => "?limit=2".to_string(),
        };
        let (rows, next) = list(&bob, &query).await;
        seen.extend(ids(&rows));
        match next.as_str() {
            Some(next) => cursor = Some(next.to_string()),
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
        ada.post(
            "/api/reviews",
            &json!({ "review": { "title": format!("Doc {n}") } }),
        )
        .await
        .expect(201);
    }
    let (rows, next) = list(&ada, "").await;
    assert_eq!(rows.len(), 50);
    let cursor = next.as_str().expect("a second page");
    let (rest, next) = list(&ada, &format!("?cursor={cursor}")).await;
    assert_eq!(rest.len(), 1);
    assert_eq!(next, Value::Null);
}

#[tokio::test]
async fn limit_outside_1_to_200_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for limit in ["0", "201", "-1", "abc", "1.5", "99999999999999999999999"] {
        ada.get(&format!("/api/reviews?limit={limit}"))
            .await
            .expect_error(400, "invalid_request");
    }
    for limit in ["1", "200"] {
        ada.get(&format!("/api/reviews?limit={limit}"))
            .await
            .expect(200);
    }
}

#[tokio::test]
async fn cursor_not_issued_by_the_server_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    create_doc(&ada, "Doc", "link").await;
    // Garbage, base64 of text without the separator, base64 of a non-number, non-base64 bytes.
    for cursor in ["!!!", "bm9jb2xvbg", "YWJjOnJ2X3g", "%FF%FE", "x"] {
        ada.get(&format!("/api/reviews?cursor={cursor}"))
            .await
            .expect_error(400, "invalid_request");
    }
}

// ---------------------------------------------------------------------------------------------
// Filters

#[tokio::test]
async fn owner_me_lists_only_own_documents() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada", &[]);
    let ada = server.client(Some(&server.issue_token("ada@example.com", "docs")));
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let adas = create_doc(&ada, "Ada's", "link").await;
    let bobs = create_doc(&bob, "Bob's", "link").await;
    let (rows, _) = list(&bob, "").await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![adas, bobs.clone()]));
    let (rows, _) = list(&bob, "?owner=me").await;
    assert_eq!(ids(&rows), vec![bobs]);
    for owner in ["other", ada_id.as_str(), "ME", ""] {
        bob.get(&format!("/api/reviews?owner={owner}"))
            .await
            .expect_error(400, "invalid_request");
    }
}

#[tokio::test]
async fn tag_filter_matches_whole_tags() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let alpha = create_tagged(&ada, "Alpha", json!(["alpha", "shared"])).await;
    let beta = create_tagged(&ada, "Beta", json!(["beta", "shared"])).await;
    let (rows, _) = list(&ada, "?tag=alpha").await;
    assert_eq!(ids(&rows), vec![alpha.clone()]);
    let (rows, _) = list(&ada, "?tag=shared").await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![alpha, beta]));
    let (rows, _) = list(&ada, "?tag=alp").await;
    assert!(rows.is_empty(), "a tag prefix is not a tag");
}

#[tokio::test]
async fn archived_filter_and_its_validation() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let one = create_doc(&ada, "One", "link").await;
    let (rows, _) = list(&ada, "?archived=false").await;
    assert_eq!(ids(&rows), vec![one]);
    assert_eq!(rows[0]["archived"], false);
    let (rows, _) = list(&ada, "?archived=true").await;
    assert!(rows.is_empty(), "nothing is archived yet");
    ada.get("/api/reviews?archived=maybe")
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn q_matches_title_substrings_case_insensitively() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let budget = create_doc(&ada, "Budget 2026", "link").await;
    let notes = create_doc(&ada, "Team budget notes", "link").await;
    create_doc(&ada, "Hiring plan", "link").await;
    let (rows, _) = list(&ada, "?q=BUDGET").await;
    assert_eq!(sorted(ids(&rows)), sorted(vec![budget, notes]));
    let (rows, _) = list(&ada, "?q=nothing-like-this").await;
    assert!(rows.is_empty());
    let (rows, _) = list(&ada, "?q=%25").await;
    assert!(rows.is_empty(), "`%` is literal, not a wildcard");
}

// ---------------------------------------------------------------------------------------------
// Reading one document

#[tokio::test]
async fn missing_document_is_404_not_found() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for id in ["rv_00000000000000000000000000", "nothing-here"] {
        ada.get(&format!("/api/reviews/{id}"))
            .await
            .expect_error(404, "not_found");
    }
}

#[tokio::test]
async fn invisible_document_is_404_never_403() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,access,comments");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let secret = create_doc(&ada, "Secret", "restricted").await;
    for client in [&bob, &xena] {
        client
            .get(&format!("/api/reviews/{secret}"))
            .await
            .expect_error(404, "not_found");
        client
            .get(&format!("/api/reviews/{secret}?includeDeleted=true"))
            .await
            .expect_error(404, "not_found");
    }
}

#[tokio::test]
async fn include_deleted_by_a_viewer_is_403_forbidden() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,comments");
    let open = create_doc(&ada, "Open", "link").await;
    bob.get(&format!("/api/reviews/{open}?includeDeleted=true"))
        .await
        .expect_error(403, "forbidden");
    let read = bob
        .get(&format!("/api/reviews/{open}?includeDeleted=false"))
        .await;
    assert_eq!(read.expect(200)["review"]["role"], "viewer");
}

#[tokio::test]
async fn include_deleted_by_the_owner_shows_cancelled_comments() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = create_doc(&ada, "Open", "link").await;
    let written = ada.comment_on(&id, "quick brown fox", "oops").await;
    let comment_id = written["comment"]["id"].as_str().expect("comment id");
    ada.delete(&format!("/api/reviews/{id}/comments/{comment_id}"))
        .await
        .expect(200);

    let plain = ada.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(plain.expect(200)["review"]["comments"], json!([]));
    let all = ada
        .get(&format!("/api/reviews/{id}?includeDeleted=true"))
        .await;
    let comments = all.expect(200)["review"]["comments"]
        .as_array()
        .expect("comments")
        .clone();
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0]["id"], comment_id);
    assert!(comments[0]["deletedTs"].is_string(), "{:?}", comments[0]);
}

#[tokio::test]
async fn include_deleted_by_an_editor_or_shared_token_is_200() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let eve = server.user("eve@example.com", "Eve", &[], "");
    let reply = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "access": { "mode": "restricted",
                "allowedUsers": [{ "email": "eve@example.com", "role": "editor" }] } } }),
        )
        .await;
    let id = reply.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    for client in [eve, server.agent(), server.importer()] {
        client
            .get(&format!("/api/reviews/{id}?includeDeleted=true"))
            .await
            .expect(200);
    }
}

#[tokio::test]
async fn include_deleted_must_be_a_boolean() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let id = create_doc(&ada, "Open", "link").await;
    ada.get(&format!("/api/reviews/{id}?includeDeleted=yes-please"))
        .await
        .expect_error(400, "invalid_request");
}
