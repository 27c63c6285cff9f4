//! Reading a review after every kind of change: each node caches renderings, and a read must
//! still show every caller their own role and the state after the last acknowledged write.

use serde_json::json;

use crate::support::{SAMPLE_HTML, Server, html_part};

#[tokio::test]
async fn each_caller_sees_their_own_role_on_the_same_document() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access,comments");
    let editor = server.user("editor@example.com", "Editor", &[], "comments");
    let viewer = server.user("viewer@example.com", "Viewer", &[], "comments");
    let admin = server.user("admin@example.com", "Admin", &["--admin"], "comments");
    let created = owner
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Roles", "source": { "html": SAMPLE_HTML },
                     "access": { "mode": "link", "allowedUsers": [{ "email": "editor@example.com", "role": "editor" }] } } }),
        )
        .await;
    let id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let path = format!("/api/reviews/{id}");
    // Read twice each, interleaved, so later reads come from a cached rendering.
    for _ in 0..2 {
        for (client, role) in [
            (&owner, "owner"),
            (&editor, "editor"),
            (&viewer, "viewer"),
            (&admin, "owner"),
        ] {
            let reply = client.get(&path).await;
            assert_eq!(reply.expect(200)["review"]["role"], role);
            assert_eq!(reply.header("content-type"), Some("application/json"));
        }
        assert_eq!(
            server.agent().get(&path).await.expect(200)["review"]["role"],
            "editor"
        );
    }
}

#[tokio::test]
async fn every_kind_of_change_shows_on_the_next_read() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = owner.create_review("Changes", SAMPLE_HTML).await["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let path = format!("/api/reviews/{id}");
    let read = async || reader.get(&path).await.expect(200)["review"].clone();
    assert_eq!(read().await["comments"], json!([]));

    let comment = owner.comment_on(&id, "quick brown fox", "First").await;
    let comment_id = comment["comment"]["id"].as_str().expect("id").to_string();
    let seen = read().await;
    assert_eq!(seen["commentsRevision"], 1);
    assert_eq!(seen["comments"][0]["body"], "First");

    let run = server
        .agent()
        .post(&format!("{path}/ai-review-runs"), &json!({}))
        .await;
    let run_id = run.expect(201)["run"]["id"]
        .as_str()
        .expect("run")
        .to_string();
    assert_eq!(read().await["aiReviewRuns"][0]["status"], "running");

    let run_comment = server
        .agent()
        .post(
            &format!("{path}/ai-review-runs/{run_id}/comments"),
            &json!({ "body": "Draft" }),
        )
        .await;
    run_comment.expect(201);
    let seen = read().await;
    assert_eq!(seen["comments"][1]["provisional"], true);

    server
        .agent()
        .patch(
            &format!("{path}/ai-review-runs/{run_id}"),
            &json!({ "status": "completed" }),
        )
        .await
        .expect(200);
    let seen = read().await;
    assert_eq!(seen["aiReviewRuns"][0]["status"], "completed");
    assert_eq!(seen["comments"][1]["provisional"], false);

    owner
        .post(
            &format!("{path}/comments/{comment_id}/status-events"),
            &json!({ "status": "closed" }),
        )
        .await
        .expect(201);
    assert_eq!(read().await["comments"][0]["status"], "closed");

    let form = reqwest::multipart::Form::new()
        .part("file", html_part(b"<p>The quick brown fox.</p>", "v2.html"));
    owner
        .multipart(&format!("{path}/import-html"), form)
        .await
        .expect(201);
    let seen = read().await;
    assert_eq!(seen["source"]["versions"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        seen["comments"][0]["anchor"]["versionId"],
        seen["latestVersionId"]
    );
}

#[tokio::test]
async fn an_author_sees_their_own_fresh_comment_as_provisional_after_others_read_it() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = owner.create_review("Undo", SAMPLE_HTML).await["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    owner.comment_on(&id, "lazy dog", "Mine").await;
    let path = format!("/api/reviews/{id}");
    // The reader's read caches the rendering; the author's must still mark the comment.
    assert_eq!(
        reader.get(&path).await.expect(200)["review"]["comments"][0]["provisional"],
        false
    );
    assert_eq!(
        owner.get(&path).await.expect(200)["review"]["comments"][0]["provisional"],
        true
    );
    assert_eq!(
        reader.get(&path).await.expect(200)["review"]["comments"][0]["provisional"],
        false
    );
}

#[tokio::test]
async fn an_unchanged_review_answers_304_to_its_etag_and_a_change_gives_a_new_tag() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access,comments");
    let viewer = server.user("viewer@example.com", "Viewer", &[], "comments");
    let id = owner.create_review("Tags", SAMPLE_HTML).await["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    let path = format!("/api/reviews/{id}");
    let first = owner.get(&path).await;
    first.expect(200);
    let etag = first.header("etag").expect("an ETag").to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert_eq!(first.header("cache-control"), Some("private, no-cache"));

    let conditional =
        |tag: String| owner.send(owner.raw("GET", &path).header("if-none-match", tag));
    let unchanged = conditional(etag.clone()).await;
    assert_eq!(unchanged.status, 304);
    assert_eq!(unchanged.header("etag"), Some(etag.as_str()));
    assert_eq!(unchanged.text, "");
    assert_eq!(
        conditional(format!("\"other\", W/{etag}")).await.status,
        304
    );
    assert_eq!(conditional("\"stale\"".to_string()).await.status, 200);

    // Another role sees other bytes, so another tag; a change gives a new tag to everyone.
    let seen_by_viewer = viewer.get(&path).await;
    assert_ne!(seen_by_viewer.header("etag"), Some(etag.as_str()));
    owner.comment_on(&id, "quick brown fox", "A change").await;
    let changed = conditional(etag.clone()).await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    assert_eq!(
        changed.json["review"]["comments"].as_array().map(Vec::len),
        Some(1)
    );

    // A tag opens nothing: a caller who cannot see the document gets 404 whatever they send.
    let stranger = server.client(Some(&server.issue_token("viewer@example.com", "comments")));
    owner
        .patch(&format!("{path}/access"), &json!({ "mode": "restricted" }))
        .await
        .expect(200);
    let hidden = stranger
        .send(stranger.raw("GET", &path).header("if-none-match", etag))
        .await;
    assert_eq!(hidden.status, 404);
}
