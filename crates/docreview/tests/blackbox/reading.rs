//! Reading a review after every kind of change: each node caches renderings, and a read must
//! still show every caller their own role and the state after the last acknowledged write.

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, CommentStatus, FinishRun, GrantRole, NewComment,
    ReviewInput, Role, RunStatus, SharingChange, StartRun, StatusChange, VersionMode,
};
use docreview_client::{HtmlFile, VersionUpload};

use crate::support::review_input;
use crate::support::{Client, SAMPLE_HTML, Server};

#[tokio::test]
async fn each_caller_sees_their_own_role_on_the_same_document() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access,comments");
    let editor = server.user("editor@example.com", "Editor", &[], "comments");
    let viewer = server.user("viewer@example.com", "Viewer", &[], "comments");
    let admin = server.user("admin@example.com", "Admin", &["--admin"], "comments");
    let access = AccessInput {
        mode: Some(AccessMode::Link),
        allowed_users: Some(vec![AllowedUserEntry {
            email: "editor@example.com".into(),
            role: GrantRole::Editor,
        }]),
    };
    let id = owner
        .create(ReviewInput {
            access: Some(access),
            ..review_input("Roles", SAMPLE_HTML)
        })
        .await
        .review_id;
    let path = format!("/api/reviews/{id}");
    // Read twice each, interleaved, so later reads come from a cached rendering.
    for _ in 0..2 {
        for (client, role) in [
            (&owner, Role::Owner),
            (&editor, Role::Editor),
            (&viewer, Role::Viewer),
            (&admin, Role::Owner),
        ] {
            let read = client.api().review(&id, false).await.expect("read");
            assert_eq!(read.role, role);
            // Raw as well: the content type is the point.
            let reply = client.get(&path).await;
            assert_eq!(reply.expect(200)["review"]["role"], role.as_str());
            assert_eq!(reply.header("content-type"), Some("application/json"));
        }
        let read = server.agent().api().review(&id, false).await.expect("read");
        assert_eq!(read.role, Role::Editor);
    }
}

#[tokio::test]
async fn every_kind_of_change_shows_on_the_next_read() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let agent = server.agent();
    let id = owner.upload("Changes", SAMPLE_HTML).await.review_id;
    let read = async || reader.api().review(&id, false).await.expect("read");
    assert!(read().await.comments.is_empty());

    let comment = owner.note_on(&id, "quick brown fox", "First").await;
    let comment_id = comment.comment.id;
    let seen = read().await;
    assert_eq!(seen.comments_revision, 1);
    assert_eq!(seen.comments[0].body, "First");

    let run = agent
        .api()
        .start_run(&id, &StartRun::default())
        .await
        .expect("start a run");
    assert_eq!(read().await.ai_review_runs[0].status, RunStatus::Running);

    let draft = NewComment {
        body: "Draft".into(),
        category: None,
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    };
    agent
        .api()
        .add_run_comment(&id, &run.id, &draft)
        .await
        .expect("run comment");
    let seen = read().await;
    assert!(seen.comments[1].provisional);

    let finish = FinishRun {
        status: RunStatus::Completed,
        summary: None,
        base_comments_revision: None,
    };
    agent
        .api()
        .finish_run(&id, &run.id, &finish)
        .await
        .expect("finish the run");
    let seen = read().await;
    assert_eq!(seen.ai_review_runs[0].status, RunStatus::Completed);
    assert!(!seen.comments[1].provisional);

    let close = StatusChange {
        status: CommentStatus::Closed,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    owner
        .api()
        .set_status(&id, &comment_id, &close)
        .await
        .expect("resolve");
    assert_eq!(read().await.comments[0].status, CommentStatus::Closed);

    let file = HtmlFile {
        name: "v2.html".into(),
        bytes: b"<p>The quick brown fox.</p>".to_vec(),
    };
    let upload = VersionUpload {
        mode: VersionMode::AddVersion,
        label: None,
        base_version_id: None,
    };
    owner
        .api()
        .import_version(&id, &file, &upload)
        .await
        .expect("a new version");
    let seen = read().await;
    assert_eq!(seen.source.versions.len(), 2);
    assert_eq!(seen.comments[0].anchor.version_id, seen.latest_version_id);
}

#[tokio::test]
async fn an_author_sees_their_own_fresh_comment_as_provisional_after_others_read_it() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let reader = server.user("reader@example.com", "Reader", &[], "comments");
    let id = owner.upload("Undo", SAMPLE_HTML).await.review_id;
    owner.note_on(&id, "lazy dog", "Mine").await;
    let provisional = async |client: &Client| {
        let read = client.api().review(&id, false).await.expect("read");
        read.comments[0].provisional
    };
    // The reader's read caches the rendering; the author's must still mark the comment.
    assert!(!provisional(&reader).await);
    assert!(provisional(&owner).await);
    assert!(!provisional(&reader).await);
}

#[tokio::test]
async fn an_unchanged_review_answers_304_to_its_etag_and_a_change_gives_a_new_tag() {
    let server = Server::start();
    let owner = server.user("owner@example.com", "Owner", &[], "docs,access,comments");
    let viewer = server.user("viewer@example.com", "Viewer", &[], "comments");
    let id = owner.upload("Tags", SAMPLE_HTML).await.review_id;
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
    owner.note_on(&id, "quick brown fox", "A change").await;
    let changed = conditional(etag.clone()).await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    assert_eq!(
        changed.json["review"]["comments"].as_array().map(Vec::len),
        Some(1)
    );

    // A tag opens nothing: a caller who cannot see the document gets 404 whatever they send.
    let stranger = server.client(Some(&server.issue_token("viewer@example.com", "comments")));
    let restrict = SharingChange {
        mode: Some(AccessMode::Restricted),
        allowed_users: None,
    };
    owner
        .api()
        .change_sharing(&id, &restrict)
        .await
        .expect("restrict");
    let hidden = stranger
        .send(stranger.raw("GET", &path).header("if-none-match", etag))
        .await;
    assert_eq!(hidden.status, 404);
}
