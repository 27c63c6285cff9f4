//! Managing a document over HTTP: the title, tags and the archive flag, sharing (link and
//! restricted modes, the allowed-user list), ownership transfer, deletion, and which credentials
//! may do each (DESIGN.md §2, §3, §4.6).
//!
//! Requests go through the typed client; the raw helpers send only what it cannot: bodies that
//! break the schema, other content types, and deletions whose answer body is checked (the typed
//! `delete_review` does not return it).

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, CreateReview, GrantRole, ListQuery, MetaChange,
    NewComment, OwnerChange, ReviewInput, ReviewSummaryView, ReviewView, Role, SharingChange,
    SharingView, SourceInput, TitleChange,
};
use serde_json::{Value, json};

use crate::support::{Client, Server, refused};

const HTML: &str = "<!doctype html><html><body><h1 id=\"plan\">Plan</h1>\
<p>The rollout starts on Monday.</p></body></html>";

/// Every scope a personal token can hold on documents.
const ALL_DOC_SCOPES: &str = "docs,access,comments";

/// A server with one link-mode document owned by Ada (every document scope).
struct Fixture {
    server: Server,
    owner: Client,
    owner_id: String,
    id: String,
}

async fn setup() -> Fixture {
    let server = Server::start();
    let owner_id = server.create_user("ada@example.com", "Ada", &[]);
    let owner = server.client(Some(&server.issue_token("ada@example.com", ALL_DOC_SCOPES)));
    let review = owner.upload("Plan", HTML).await;
    Fixture {
        id: review.review_id,
        server,
        owner,
        owner_id,
    }
}

/// One entry of a sharing list.
fn grant(email: &str, role: GrantRole) -> AllowedUserEntry {
    AllowedUserEntry {
        email: email.to_string(),
        role,
    }
}

/// A sharing list as `(email, role)` pairs, in the order answered.
fn entries(list: &[AllowedUserEntry]) -> Vec<(String, GrantRole)> {
    list.iter()
        .map(|entry| (entry.email.clone(), entry.role))
        .collect()
}

/// Asserts a sharing answer: its mode and its list, `(email, role)` in order.
#[track_caller]
fn assert_sharing(view: &SharingView, mode: AccessMode, users: &[(&str, GrantRole)]) {
    assert_eq!(view.mode, mode, "{view:?}");
    let expected: Vec<(String, GrantRole)> = users
        .iter()
        .map(|(email, role)| ((*email).to_string(), *role))
        .collect();
    assert_eq!(entries(&view.allowed_users), expected, "{view:?}");
}

fn change(mode: Option<AccessMode>, users: Option<Vec<AllowedUserEntry>>) -> SharingChange {
    SharingChange {
        mode,
        allowed_users: users,
    }
}

fn owner_change(email: &str) -> OwnerChange {
    OwnerChange {
        email: email.to_string(),
    }
}

fn tags(list: &[&str]) -> MetaChange {
    MetaChange {
        tags: Some(list.iter().map(ToString::to_string).collect()),
        archived: None,
    }
}

fn archived(flag: bool) -> MetaChange {
    MetaChange {
        tags: None,
        archived: Some(flag),
    }
}

impl Fixture {
    /// `/api/reviews/{id}{suffix}`.
    fn path(&self, suffix: &str) -> String {
        format!("/api/reviews/{}{suffix}", self.id)
    }

    /// A new member (internal unless `flags` say otherwise) with a token holding `scopes`;
    /// returns their user id and a client.
    fn member(&self, email: &str, flags: &[&str], scopes: &str) -> (String, Client) {
        let id = self.server.create_user(email, email, flags);
        let client = self
            .server
            .client(Some(&self.server.issue_token(email, scopes)));
        (id, client)
    }

    /// The document as `client` reads it.
    async fn read(&self, client: &Client) -> ReviewView {
        client.api().review(&self.id, false).await.expect("read")
    }

    /// The owner's sharing settings.
    async fn sharing(&self) -> SharingView {
        self.owner.api().sharing(&self.id).await.expect("sharing")
    }

    /// Sets the sharing settings as the owner.
    async fn share(&self, change: SharingChange) -> SharingView {
        self.owner
            .api()
            .change_sharing(&self.id, &change)
            .await
            .expect("change sharing")
    }

    /// Makes the document restricted and shares it with `users`.
    async fn restrict_to(&self, users: Vec<AllowedUserEntry>) {
        self.share(change(Some(AccessMode::Restricted), Some(users)))
            .await;
    }

    async fn rename(&self, client: &Client, title: &str) -> docreview_client::Result<ReviewView> {
        let change = TitleChange {
            title: title.to_string(),
        };
        client.api().rename_review(&self.id, &change).await
    }

    async fn meta(
        &self,
        client: &Client,
        change: &MetaChange,
    ) -> docreview_client::Result<ReviewView> {
        client.api().change_meta(&self.id, change).await
    }

    async fn transfer(&self, client: &Client, email: &str) -> docreview_client::Result<ReviewView> {
        client
            .api()
            .transfer_owner(&self.id, &owner_change(email))
            .await
    }
}

/// The ids of the documents `client` lists with `query` (its limit set to 200).
async fn listed(client: &Client, query: ListQuery) -> Vec<String> {
    let query = ListQuery {
        limit: Some(200),
        ..query
    };
    let list = client.api().list_reviews(&query).await.expect("list");
    list.reviews.into_iter().map(|row| row.review_id).collect()
}

/// The list row of document `id` as `client` sees it.
async fn list_row(client: &Client, id: &str) -> ReviewSummaryView {
    let query = ListQuery {
        limit: Some(200),
        ..ListQuery::default()
    };
    let list = client.api().list_reviews(&query).await.expect("list");
    let ids: Vec<String> = list.reviews.iter().map(|r| r.review_id.clone()).collect();
    list.reviews
        .into_iter()
        .find(|row| row.review_id == id)
        .unwrap_or_else(|| panic!("{id} is not listed: {ids:?}"))
}

/// A raw `PATCH`/`PUT` with `body`, which must be refused with 400 `invalid_request`.
async fn refused_raw(client: &Client, method: &str, path: &str, body: &Value) {
    let request = client.raw(method, path).json(body);
    let reply = client.send(request).await;
    assert_eq!(
        reply.status, 400,
        "{body} should be refused: {}",
        reply.text
    );
    reply.expect_error(400, "invalid_request");
}

// ---------------------------------------------------------------------------------------------
// Title

#[tokio::test]
async fn rename_trims_the_title_and_answers_the_review() {
    let fx = setup().await;
    let review = fx
        .rename(&fx.owner, "  Launch plan, final  ")
        .await
        .expect("rename");
    assert_eq!(review.review_id, fx.id);
    assert_eq!(review.title, "Launch plan, final");
    assert_eq!(review.role, Role::Owner);
    assert_eq!(
        review.source.versions.len(),
        1,
        "a whole Review: {review:?}"
    );

    assert_eq!(fx.read(&fx.owner).await.title, "Launch plan, final");
    assert_eq!(
        list_row(&fx.owner, &fx.id).await.title,
        "Launch plan, final"
    );
}

#[tokio::test]
async fn title_length_is_1_to_300_characters_after_trimming() {
    let fx = setup().await;
    for bad in [String::new(), "   \t\n ".to_string(), "x".repeat(301)] {
        refused(fx.rename(&fx.owner, &bad).await, 400, "invalid_request");
    }
    // Multi-byte characters count as one each.
    refused(
        fx.rename(&fx.owner, &"é".repeat(301)).await,
        400,
        "invalid_request",
    );
    assert_eq!(fx.read(&fx.owner).await.title, "Plan", "nothing changed");

    let longest = "é".repeat(300);
    let review = fx
        .rename(&fx.owner, &format!(" {longest} "))
        .await
        .expect("rename");
    assert_eq!(review.title, longest);
    fx.rename(&fx.owner, "x").await.expect("rename");
    assert_eq!(fx.read(&fx.owner).await.title, "x");
}

#[tokio::test]
async fn rename_needs_a_title_string_in_a_json_body() {
    // Raw throughout: each body breaks the schema or is not JSON.
    let fx = setup().await;
    for body in [
        json!({}),
        json!({ "name": "Other" }),
        json!({ "title": null }),
        json!({ "title": 42 }),
        json!({ "title": ["Plan"] }),
        json!("Plan"),
    ] {
        fx.owner
            .patch(&fx.path("/title"), &body)
            .await
            .expect_error(400, "invalid_request");
    }
    let malformed = fx
        .owner
        .raw("PATCH", &fx.path("/title"))
        .header("content-type", "application/json")
        .body("{\"title\": ");
    fx.owner
        .send(malformed)
        .await
        .expect_error(400, "invalid_request");
    let form = fx
        .owner
        .raw("PATCH", &fx.path("/title"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("title=Other");
    fx.owner
        .send(form)
        .await
        .expect_error(415, "unsupported_media_type");
    let untyped = fx
        .owner
        .raw("PATCH", &fx.path("/title"))
        .body("{\"title\": \"Other\"}");
    fx.owner
        .send(untyped)
        .await
        .expect_error(415, "unsupported_media_type");
    assert_eq!(fx.read(&fx.owner).await.title, "Plan");
}

#[tokio::test]
async fn an_editor_may_rename_a_viewer_may_not_and_an_outsider_sees_nothing() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.share(change(
        None,
        Some(vec![grant("ed@example.com", GrantRole::Editor)]),
    ))
    .await;

    // Link mode: Vic is a viewer.
    assert_eq!(fx.read(&viewer).await.role, Role::Viewer);
    refused(fx.rename(&viewer, "By a viewer").await, 403, "forbidden");

    let review = fx.rename(&editor, "By an editor").await.expect("rename");
    assert_eq!(review.title, "By an editor");
    assert_eq!(review.role, Role::Editor);

    fx.restrict_to(vec![grant("ed@example.com", GrantRole::Editor)])
        .await;
    refused(
        fx.rename(&outsider, "By an outsider").await,
        404,
        "not_found",
    );
    refused(fx.rename(&viewer, "By a viewer").await, 404, "not_found");
    let title = TitleChange { title: "x".into() };
    refused(
        fx.owner
            .api()
            .rename_review("no-such-document", &title)
            .await,
        404,
        "not_found",
    );
    assert_eq!(fx.read(&fx.owner).await.title, "By an editor");
}

#[tokio::test]
async fn a_rename_leaves_comments_revision_alone_and_every_reader_sees_it_at_once() {
    let fx = setup().await;
    let (_, reader) = fx.member("rea@example.com", &[], "comments");
    fx.owner.note_on(&fx.id, "rollout", "Which Monday?").await;
    // Both readers have read the document (and so warmed any cache) before the change.
    let before = fx.read(&reader).await;
    assert_eq!(before.title, "Plan");
    assert_eq!(before.comments_revision, 1);
    assert_eq!(fx.read(&fx.owner).await.title, "Plan");

    let renamed = fx.rename(&fx.owner, "Plan B").await.expect("rename");
    assert_eq!(renamed.comments_revision, 1);

    let after = fx.read(&reader).await;
    assert_eq!(after.title, "Plan B", "no stale read after a rename");
    assert_eq!(after.comments_revision, 1, "a rename is no comment change");
    assert_eq!(
        serde_json::to_value(&after.comments).expect("comments"),
        serde_json::to_value(&before.comments).expect("comments")
    );
    assert_eq!(list_row(&reader, &fx.id).await.title, "Plan B");
}

// ---------------------------------------------------------------------------------------------
// Tags and archive flag

#[tokio::test]
async fn tags_replace_the_list_trimmed_and_deduplicated() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let input = CreateReview {
        review: ReviewInput {
            title: Some("Tagged".into()),
            tags: Some(vec!["old".into(), "legacy".into()]),
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

    let review = ada
        .api()
        .change_meta(&id, &tags(&[" beta ", "alpha", "beta", "alpha  ", "Beta"]))
        .await
        .expect("meta");
    assert_eq!(review.tags, ["beta", "alpha", "Beta"]);
    assert!(!review.archived, "only tags were sent");

    let read = ada.api().review(&id, false).await.expect("read");
    assert_eq!(read.tags, ["beta", "alpha", "Beta"]);
    assert_eq!(list_row(&ada, &id).await.tags, ["beta", "alpha", "Beta"]);
    let by_tag = |tag: &str| ListQuery {
        tag: Some(tag.to_string()),
        ..ListQuery::default()
    };
    assert_eq!(listed(&ada, by_tag("alpha")).await, vec![id.clone()]);
    assert!(
        listed(&ada, by_tag("old")).await.is_empty(),
        "old tags are gone"
    );

    let review = ada.api().change_meta(&id, &tags(&[])).await.expect("meta");
    assert!(review.tags.is_empty());
    let read = ada.api().review(&id, false).await.expect("read");
    assert!(read.tags.is_empty());
}

#[tokio::test]
async fn tag_limits_and_malformed_meta_are_rejected() {
    let fx = setup().await;
    fx.meta(&fx.owner, &tags(&["keep"])).await.expect("meta");

    let too_many: Vec<String> = (0..33).map(|n| format!("t{n}")).collect();
    let thirty_two: Vec<String> = (0..32).map(|n| format!("t{n}")).collect();
    let long_tag = "x".repeat(65);
    for bad in [
        MetaChange {
            tags: None,
            archived: None,
        },
        MetaChange {
            tags: Some(too_many),
            archived: None,
        },
        tags(&[long_tag.as_str()]),
        tags(&["ok", ""]),
        tags(&["   "]),
    ] {
        let result = fx.meta(&fx.owner, &bad).await;
        assert!(result.is_err(), "{bad:?} should be refused: {result:?}");
        refused(result, 400, "invalid_request");
    }
    // Bodies the schema refuses (raw: the typed client cannot send them).
    for bad in [
        json!({}),
        json!({ "tags": "keep" }),
        json!({ "tags": [1, 2] }),
        json!({ "archived": "yes" }),
        json!({ "archived": 1 }),
    ] {
        refused_raw(&fx.owner, "PATCH", &fx.path("/meta"), &bad).await;
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review.tags, ["keep"], "nothing changed");
    assert!(!review.archived);

    // The boundaries themselves are allowed; duplicates do not count towards the limit.
    let mut with_duplicates = thirty_two.clone();
    with_duplicates.push("t0".to_string());
    let with_duplicates = MetaChange {
        tags: Some(with_duplicates),
        archived: None,
    };
    let review = fx.meta(&fx.owner, &with_duplicates).await.expect("meta");
    assert_eq!(review.tags, thirty_two);
    let longest = "é".repeat(64);
    let review = fx
        .meta(&fx.owner, &tags(&[longest.as_str()]))
        .await
        .expect("meta");
    assert_eq!(review.tags, [longest]);
    // Another content type (raw).
    let form = fx
        .owner
        .raw("PATCH", &fx.path("/meta"))
        .header("content-type", "text/plain")
        .body("{\"archived\": true}");
    fx.owner
        .send(form)
        .await
        .expect_error(415, "unsupported_media_type");
}

#[tokio::test]
async fn archiving_is_reflected_in_reads_and_the_archived_filter() {
    let fx = setup().await;
    let other_id = fx.owner.upload("Other", HTML).await.review_id;
    fx.meta(&fx.owner, &tags(&["q3"])).await.expect("meta");
    let filter = |flag: bool| ListQuery {
        archived: Some(flag),
        ..ListQuery::default()
    };

    let review = fx.meta(&fx.owner, &archived(true)).await.expect("meta");
    assert!(review.archived);
    assert_eq!(review.tags, ["q3"], "tags stay when only archived is sent");
    assert!(fx.read(&fx.owner).await.archived);
    assert_eq!(listed(&fx.owner, filter(true)).await, vec![fx.id.clone()]);
    assert_eq!(
        listed(&fx.owner, filter(false)).await,
        vec![other_id.clone()]
    );

    let review = fx.meta(&fx.owner, &archived(false)).await.expect("meta");
    assert!(!review.archived);
    assert!(!fx.read(&fx.owner).await.archived);
    assert!(listed(&fx.owner, filter(true)).await.is_empty());
    let mut active = listed(&fx.owner, filter(false)).await;
    active.sort();
    let mut expected = vec![fx.id.clone(), other_id];
    expected.sort();
    assert_eq!(active, expected);

    // Both at once.
    let both = MetaChange {
        tags: Some(vec!["done".into()]),
        archived: Some(true),
    };
    let review = fx.meta(&fx.owner, &both).await.expect("meta");
    assert_eq!(review.tags, ["done"]);
    assert!(review.archived);
}

#[tokio::test]
async fn an_editor_may_change_meta_a_viewer_may_not() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    fx.share(change(
        None,
        Some(vec![grant("ed@example.com", GrantRole::Editor)]),
    ))
    .await;
    refused(fx.meta(&viewer, &archived(true)).await, 403, "forbidden");
    refused(fx.meta(&viewer, &tags(&["mine"])).await, 403, "forbidden");
    assert!(!fx.read(&fx.owner).await.archived);

    let review = fx.meta(&editor, &tags(&["edited"])).await.expect("meta");
    assert_eq!(review.tags, ["edited"]);
    assert_eq!(fx.read(&viewer).await.tags, ["edited"]);

    fx.restrict_to(vec![]).await;
    refused(fx.meta(&editor, &archived(true)).await, 404, "not_found");
}

// ---------------------------------------------------------------------------------------------
// Sharing

#[tokio::test]
async fn sharing_defaults_to_link_mode_with_nobody_listed() {
    let fx = setup().await;
    assert_sharing(&fx.sharing().await, AccessMode::Link, &[]);
    assert_eq!(fx.read(&fx.owner).await.access.mode, AccessMode::Link);
}

#[tokio::test]
async fn restricting_a_document_shows_it_only_to_the_people_it_is_shared_with() {
    let fx = setup().await;
    let (_, bob) = fx.member("bob@example.com", &[], "comments");
    let (_, carol) = fx.member("carol@example.com", &[], "comments");
    // Both read it while it is in link mode.
    assert_eq!(fx.read(&bob).await.role, Role::Viewer);
    assert_eq!(fx.read(&carol).await.role, Role::Viewer);

    let answer = fx
        .share(change(
            Some(AccessMode::Restricted),
            Some(vec![grant(" Bob@Example.COM ", GrantRole::Editor)]),
        ))
        .await;
    let expected = [("bob@example.com", GrantRole::Editor)];
    assert_sharing(&answer, AccessMode::Restricted, &expected);
    assert_sharing(&fx.sharing().await, AccessMode::Restricted, &expected);
    assert_eq!(fx.read(&fx.owner).await.access.mode, AccessMode::Restricted);

    assert_eq!(fx.read(&bob).await.role, Role::Editor);
    assert_eq!(list_row(&bob, &fx.id).await.role, Role::Editor);
    refused(carol.api().review(&fx.id, false).await, 404, "not_found");
    assert!(listed(&carol, ListQuery::default()).await.is_empty());

    // The list is replaced as a whole; the mode stays when only the list is sent.
    let answer = fx
        .share(change(
            None,
            Some(vec![grant("carol@example.com", GrantRole::Viewer)]),
        ))
        .await;
    let expected = [("carol@example.com", GrantRole::Viewer)];
    assert_sharing(&answer, AccessMode::Restricted, &expected);
    assert_sharing(&fx.sharing().await, AccessMode::Restricted, &expected);
    refused(bob.api().review(&fx.id, false).await, 404, "not_found");
    assert!(listed(&bob, ListQuery::default()).await.is_empty());
    assert_eq!(fx.read(&carol).await.role, Role::Viewer);

    // The list stays when only the mode is sent.
    let answer = fx.share(change(Some(AccessMode::Link), None)).await;
    assert_sharing(&answer, AccessMode::Link, &expected);
    assert_eq!(fx.read(&bob).await.role, Role::Viewer);
    assert_eq!(fx.read(&fx.owner).await.access.mode, AccessMode::Link);
}

#[tokio::test]
async fn link_mode_lets_every_internal_member_view_and_no_external_member() {
    let fx = setup().await;
    let (_, internal) = fx.member("ina@example.com", &[], "comments");
    let (_, external) = fx.member("ext@partner.example", &["--external"], ALL_DOC_SCOPES);

    let review = fx.read(&internal).await;
    assert_eq!(review.role, Role::Viewer);
    assert_eq!(
        listed(&internal, ListQuery::default()).await,
        vec![fx.id.clone()]
    );
    refused(external.api().review(&fx.id, false).await, 404, "not_found");
    assert!(listed(&external, ListQuery::default()).await.is_empty());

    // Sharing by email does not reach an external member either: they act only in projects.
    fx.share(change(
        None,
        Some(vec![grant("ext@partner.example", GrantRole::Editor)]),
    ))
    .await;
    refused(external.api().review(&fx.id, false).await, 404, "not_found");
    refused(fx.rename(&external, "By a partner").await, 404, "not_found");

    fx.share(change(Some(AccessMode::Restricted), Some(vec![])))
        .await;
    refused(internal.api().review(&fx.id, false).await, 404, "not_found");
    fx.share(change(Some(AccessMode::Link), None)).await;
    assert_eq!(fx.read(&internal).await.role, Role::Viewer);
}

#[tokio::test]
async fn an_org_admin_sees_a_restricted_document_as_owner() {
    let fx = setup().await;
    let (_, admin) = fx.member("root@example.com", &["--admin"], ALL_DOC_SCOPES);
    fx.restrict_to(vec![]).await;
    let review = fx.read(&admin).await;
    assert_eq!(review.role, Role::Owner);
    assert_eq!(review.owner.id, fx.owner_id, "Ada still owns it");
    let sharing = admin.api().sharing(&fx.id).await.expect("sharing");
    assert_eq!(sharing.mode, AccessMode::Restricted);
}

#[tokio::test]
async fn malformed_sharing_changes_are_rejected_and_change_nothing() {
    let fx = setup().await;
    let current = fx
        .share(change(
            Some(AccessMode::Restricted),
            Some(vec![grant("bob@example.com", GrantRole::Viewer)]),
        ))
        .await;
    // Well-formed changes the server refuses.
    for bad in [
        change(None, None),
        change(
            Some(AccessMode::Restricted),
            Some(vec![grant("not-an-email", GrantRole::Viewer)]),
        ),
        change(None, Some(vec![grant("bob@", GrantRole::Viewer)])),
        change(None, Some(vec![grant("", GrantRole::Viewer)])),
        change(
            None,
            Some(vec![
                grant("carol@example.com", GrantRole::Viewer),
                grant("Carol@Example.com", GrantRole::Editor),
            ]),
        ),
    ] {
        let result = fx.owner.api().change_sharing(&fx.id, &bad).await;
        assert!(result.is_err(), "{bad:?} should be refused: {result:?}");
        refused(result, 400, "invalid_request");
    }
    // Bodies the schema refuses (raw: the typed client cannot send them).
    for bad in [
        json!({}),
        json!({ "mode": "public" }),
        json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "owner" }] }),
        json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "admin" }] }),
        json!({ "allowedUsers": [{ "email": "carol@example.com" }] }),
        json!({ "allowedUsers": "carol@example.com" }),
    ] {
        refused_raw(&fx.owner, "PATCH", &fx.path("/access"), &bad).await;
    }
    let now = fx.sharing().await;
    assert_eq!(now.mode, current.mode, "nothing changed");
    assert_eq!(
        entries(&now.allowed_users),
        entries(&current.allowed_users),
        "nothing changed"
    );
}

#[tokio::test]
async fn an_editor_reads_sharing_but_only_the_owner_changes_it() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let settings = fx
        .share(change(
            None,
            Some(vec![
                grant("vic@example.com", GrantRole::Viewer),
                grant("ed@example.com", GrantRole::Editor),
            ]),
        ))
        .await;
    // Listed in email order.
    let expected = [
        ("ed@example.com", GrantRole::Editor),
        ("vic@example.com", GrantRole::Viewer),
    ];
    assert_sharing(&settings, AccessMode::Link, &expected);

    let seen = editor.api().sharing(&fx.id).await.expect("sharing");
    assert_sharing(&seen, AccessMode::Link, &expected);
    let restrict = change(Some(AccessMode::Restricted), None);
    refused(
        editor.api().change_sharing(&fx.id, &restrict).await,
        403,
        "forbidden",
    );
    refused(viewer.api().sharing(&fx.id).await, 403, "forbidden");
    refused(
        viewer.api().change_sharing(&fx.id, &restrict).await,
        403,
        "forbidden",
    );
    assert_sharing(&fx.sharing().await, AccessMode::Link, &expected);

    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.share(restrict).await;
    refused(outsider.api().sharing(&fx.id).await, 404, "not_found");
    refused(
        outsider
            .api()
            .change_sharing(&fx.id, &change(Some(AccessMode::Link), None))
            .await,
        404,
        "not_found",
    );
    refused(
        fx.owner.api().sharing("no-such-document").await,
        404,
        "not_found",
    );
}

// ---------------------------------------------------------------------------------------------
// Ownership

#[tokio::test]
async fn transferring_ownership_keeps_the_old_owner_as_editor() {
    let fx = setup().await;
    let (bob_id, bob) = fx.member("bob@example.com", &[], ALL_DOC_SCOPES);
    fx.restrict_to(vec![grant("bob@example.com", GrantRole::Viewer)])
        .await;

    let review = fx
        .transfer(&fx.owner, "Bob@Example.com")
        .await
        .expect("transfer");
    assert_eq!(review.owner.id, bob_id);
    assert_eq!(review.owner.display_name, "bob@example.com");
    assert_eq!(review.role, Role::Editor, "Ada now holds the editor role");

    let as_bob = fx.read(&bob).await;
    assert_eq!(as_bob.owner.id, bob_id);
    assert_eq!(as_bob.role, Role::Owner);
    assert_eq!(fx.read(&fx.owner).await.role, Role::Editor);
    assert_eq!(list_row(&bob, &fx.id).await.owner.id, bob_id);

    let sharing = bob.api().sharing(&fx.id).await.expect("sharing");
    // The new owner needs no grant; the old one is an editor.
    assert_sharing(
        &sharing,
        AccessMode::Restricted,
        &[("ada@example.com", GrantRole::Editor)],
    );

    // Owner-only operations follow the ownership.
    refused(
        fx.owner
            .api()
            .change_sharing(&fx.id, &change(Some(AccessMode::Link), None))
            .await,
        403,
        "forbidden",
    );
    refused(fx.owner.api().delete_review(&fx.id).await, 403, "forbidden");
    refused(
        fx.transfer(&fx.owner, "ada@example.com").await,
        403,
        "forbidden",
    );
    fx.rename(&fx.owner, "Still editable")
        .await
        .expect("rename");
    bob.api().delete_review(&fx.id).await.expect("delete");
    refused(bob.api().review(&fx.id, false).await, 404, "not_found");
}

#[tokio::test]
async fn an_org_admin_may_transfer_ownership() {
    let fx = setup().await;
    let (_, admin) = fx.member("root@example.com", &["--admin"], ALL_DOC_SCOPES);
    let (carol_id, carol) = fx.member("carol@example.com", &[], ALL_DOC_SCOPES);
    let review = fx
        .transfer(&admin, "carol@example.com")
        .await
        .expect("transfer");
    assert_eq!(review.owner.id, carol_id);
    assert_eq!(fx.read(&carol).await.role, Role::Owner);
    assert_eq!(fx.read(&fx.owner).await.role, Role::Editor);
}

#[tokio::test]
async fn the_new_owner_must_be_an_active_member_who_can_see_the_document() {
    let fx = setup().await;
    fx.member("carol@example.com", &[], "comments");
    fx.member("ext@partner.example", &["--external"], "comments");

    // An external member cannot see a link-mode document.
    for email in ["nobody@example.com", "ext@partner.example"] {
        refused(fx.transfer(&fx.owner, email).await, 400, "invalid_request");
    }
    fx.restrict_to(vec![]).await;
    // Carol is a member, but cannot see the restricted document.
    refused(
        fx.transfer(&fx.owner, "carol@example.com").await,
        400,
        "invalid_request",
    );
    for email in ["not-an-email", ""] {
        let result = fx.transfer(&fx.owner, email).await;
        assert!(result.is_err(), "{email:?} should be refused: {result:?}");
        refused(result, 400, "invalid_request");
    }
    // Bodies the schema refuses (raw: the typed client cannot send them).
    for bad in [
        json!({ "email": 7 }),
        json!({}),
        json!({ "owner": "carol@example.com" }),
    ] {
        refused_raw(&fx.owner, "PUT", &fx.path("/owner"), &bad).await;
    }
    let form = fx
        .owner
        .raw("PUT", &fx.path("/owner"))
        .header("content-type", "text/plain")
        .body("carol@example.com");
    fx.owner
        .send(form)
        .await
        .expect_error(415, "unsupported_media_type");

    let review = fx.read(&fx.owner).await;
    assert_eq!(review.owner.id, fx.owner_id, "still Ada's");
    assert_eq!(review.role, Role::Owner);
    assert_sharing(&fx.sharing().await, AccessMode::Restricted, &[]);
}

#[tokio::test]
async fn editors_and_viewers_cannot_transfer_ownership() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    fx.share(change(
        None,
        Some(vec![grant("ed@example.com", GrantRole::Editor)]),
    ))
    .await;
    for (client, email) in [
        (&editor, "ed@example.com"),
        (&viewer, "vic@example.com"),
        (&editor, "vic@example.com"),
    ] {
        refused(fx.transfer(client, email).await, 403, "forbidden");
    }
    assert_eq!(fx.read(&fx.owner).await.owner.id, fx.owner_id);
    assert_eq!(fx.read(&editor).await.role, Role::Editor);
}

// ---------------------------------------------------------------------------------------------
// Deletion

/// Deletes the fixture's document as `client` and checks the answer.
async fn delete_and_check_answer(fx: &Fixture, client: &Client) {
    let deleted = client.api().delete_review(&fx.id).await.expect("delete");
    assert_eq!(deleted.review_id, fx.id);
    assert!(deleted.deleted);
}

#[tokio::test]
async fn the_owner_deletes_a_document_and_it_is_gone() {
    let fx = setup().await;
    let other_id = fx.owner.upload("Other", HTML).await.review_id;
    fx.owner.note_on(&fx.id, "rollout", "Which Monday?").await;
    let (_, reader) = fx.member("rea@example.com", &[], "comments");
    fx.read(&reader).await;

    delete_and_check_answer(&fx, &fx.owner).await;

    for client in [&fx.owner, &reader] {
        refused(client.api().review(&fx.id, false).await, 404, "not_found");
        assert_eq!(
            listed(client, ListQuery::default()).await,
            vec![other_id.clone()]
        );
    }
    refused(fx.owner.api().sharing(&fx.id).await, 404, "not_found");
    refused(fx.rename(&fx.owner, "Ghost").await, 404, "not_found");
    let late = NewComment {
        body: "late".into(),
        category: None,
        locator: None,
        base_comments_revision: None,
        suggestion: None,
    };
    refused(
        fx.owner.api().add_comment(&fx.id, &late).await,
        404,
        "not_found",
    );
    refused(fx.owner.api().delete_review(&fx.id).await, 404, "not_found");
    // The other document is untouched.
    let other = fx.owner.api().review(&other_id, false).await.expect("read");
    assert_eq!(other.title, "Other");
}

#[tokio::test]
async fn only_the_owner_may_delete() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.restrict_to(vec![
        grant("ed@example.com", GrantRole::Editor),
        grant("vic@example.com", GrantRole::Viewer),
    ])
    .await;
    refused(editor.api().delete_review(&fx.id).await, 403, "forbidden");
    refused(viewer.api().delete_review(&fx.id).await, 403, "forbidden");
    refused(outsider.api().delete_review(&fx.id).await, 404, "not_found");
    assert_eq!(fx.read(&editor).await.title, "Plan", "still there");
    refused(
        fx.owner.api().delete_review("no-such-document").await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn a_client_chosen_id_can_be_used_again_after_deletion() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let create = |title: &str, html: &str, access: AccessInput| CreateReview {
        review: ReviewInput {
            review_id: Some("design-doc".into()),
            title: Some(title.into()),
            tags: Some(vec![title.into()]),
            source: Some(SourceInput {
                html: Some(html.into()),
                label: None,
            }),
            access: Some(access),
            ..ReviewInput::default()
        },
        project: None,
    };
    let link = || AccessInput {
        mode: Some(AccessMode::Link),
        allowed_users: None,
    };
    let old = ada
        .api()
        .create_review(&create(
            "Old",
            "<p>The old text about cats.</p>",
            AccessInput {
                mode: Some(AccessMode::Restricted),
                allowed_users: Some(vec![grant("bob@example.com", GrantRole::Editor)]),
            },
        ))
        .await
        .expect("create the old document");
    ada.note_on("design-doc", "cats", "An old remark").await;
    ada.note_on("design-doc", "old text", "Another old remark")
        .await;
    // Everyone reads the old document first, so any cached rendering is warm.
    for client in [&ada, &bob] {
        let read = client
            .api()
            .review("design-doc", false)
            .await
            .expect("read");
        assert_eq!(read.comments.len(), 2);
    }
    // The id is taken while the document exists.
    refused(
        ada.api()
            .create_review(&create("Clash", "<p>x</p>", link()))
            .await,
        409,
        "already_exists",
    );

    ada.api().delete_review("design-doc").await.expect("delete");
    refused(
        bob.api().review("design-doc", false).await,
        404,
        "not_found",
    );

    let new = ada
        .api()
        .create_review(&create("New", "<p>The new text about dogs.</p>", link()))
        .await
        .expect("create the new document");
    assert_eq!(new.review_id, "design-doc");
    assert_ne!(new.latest_version_id, old.latest_version_id);

    for client in [&ada, &bob] {
        let review = client
            .api()
            .review("design-doc", false)
            .await
            .expect("read");
        assert_eq!(review.title, "New");
        assert_eq!(review.tags, ["New"]);
        assert!(review.comments.is_empty(), "no comment of the old document");
        assert_eq!(review.comments_revision, 0);
        assert_eq!(review.access.mode, AccessMode::Link);
        assert_eq!(review.latest_version_id, new.latest_version_id);
        assert_eq!(review.source.versions.len(), 1);
    }
    let as_ada = ada.api().review("design-doc", false).await.expect("read");
    assert_eq!(as_ada.role, Role::Owner);
    let as_bob = bob.api().review("design-doc", false).await.expect("read");
    assert_eq!(
        as_bob.role,
        Role::Viewer,
        "the old document's sharing does not carry over"
    );
    let sharing = ada.api().sharing("design-doc").await.expect("sharing");
    assert_sharing(&sharing, AccessMode::Link, &[]);
    let written = ada.note_on("design-doc", "dogs", "A new remark").await;
    assert_eq!(written.comments_revision, 1);
    let read = bob.api().review("design-doc", false).await.expect("read");
    assert_eq!(read.comments.len(), 1);
    assert_eq!(read.comments[0].body, "A new remark");
    let row = list_row(&ada, "design-doc").await;
    assert_eq!(row.title, "New");
    assert_eq!(row.comment_count, 1);
}

// ---------------------------------------------------------------------------------------------
// Credentials

#[tokio::test]
async fn the_manage_token_renames_tags_shares_and_deletes_but_cannot_transfer() {
    let fx = setup().await;
    fx.member("bob@example.com", &[], "comments");
    fx.restrict_to(vec![]).await;
    let manager = fx.server.manager();

    let review = fx.rename(&manager, "Managed").await.expect("rename");
    assert_eq!(review.title, "Managed");
    assert_eq!(review.role, Role::Owner);
    let both = MetaChange {
        tags: Some(vec!["ops".into()]),
        archived: Some(true),
    };
    let review = fx.meta(&manager, &both).await.expect("meta");
    assert_eq!(review.tags, ["ops"]);
    let sharing = manager.api().sharing(&fx.id).await.expect("sharing");
    assert_sharing(&sharing, AccessMode::Restricted, &[]);
    manager
        .api()
        .change_sharing(
            &fx.id,
            &change(
                None,
                Some(vec![grant("bob@example.com", GrantRole::Viewer)]),
            ),
        )
        .await
        .expect("change sharing");
    refused(
        fx.transfer(&manager, "bob@example.com").await,
        403,
        "forbidden",
    );

    let review = fx.read(&fx.owner).await;
    assert_eq!(review.title, "Managed");
    assert_eq!(review.tags, ["ops"]);
    assert!(review.archived);
    assert_eq!(review.owner.id, fx.owner_id);
    assert_eq!(
        entries(&fx.sharing().await.allowed_users),
        [("bob@example.com".to_string(), GrantRole::Viewer)]
    );

    delete_and_check_answer(&fx, &manager).await;
    refused(fx.owner.api().review(&fx.id, false).await, 404, "not_found");
}

#[tokio::test]
async fn the_import_and_agent_tokens_cannot_manage() {
    let fx = setup().await;
    fx.member("bob@example.com", &[], "comments");
    for client in [fx.server.importer(), fx.server.agent()] {
        refused(fx.rename(&client, "Imported").await, 403, "forbidden");
        refused(fx.meta(&client, &archived(true)).await, 403, "forbidden");
        refused(client.api().delete_review(&fx.id).await, 403, "forbidden");
        refused(client.api().sharing(&fx.id).await, 403, "forbidden");
        refused(
            client
                .api()
                .change_sharing(&fx.id, &change(Some(AccessMode::Restricted), None))
                .await,
            403,
            "forbidden",
        );
        refused(
            fx.transfer(&client, "bob@example.com").await,
            403,
            "forbidden",
        );
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review.title, "Plan");
    assert!(!review.archived);
    assert_eq!(review.access.mode, AccessMode::Link);
}

#[tokio::test]
async fn personal_tokens_need_docs_for_title_meta_and_delete_and_access_for_sharing() {
    let fx = setup().await;
    fx.member("bob@example.com", &[], "comments");
    let token = |scopes: &str| {
        fx.server
            .client(Some(&fx.server.issue_token("ada@example.com", scopes)))
    };
    let comments_only = token("comments");
    let docs_only = token("docs");
    let access_only = token("access");
    let restrict = change(Some(AccessMode::Restricted), None);

    for client in [&comments_only, &access_only] {
        refused(fx.rename(client, "Scoped").await, 403, "insufficient_scope");
        refused(
            fx.meta(client, &archived(true)).await,
            403,
            "insufficient_scope",
        );
        refused(
            client.api().delete_review(&fx.id).await,
            403,
            "insufficient_scope",
        );
    }
    for client in [&comments_only, &docs_only] {
        refused(
            client.api().change_sharing(&fx.id, &restrict).await,
            403,
            "insufficient_scope",
        );
        refused(
            fx.transfer(client, "bob@example.com").await,
            403,
            "insufficient_scope",
        );
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review.title, "Plan");
    assert!(!review.archived);
    assert_eq!(review.access.mode, AccessMode::Link);
    assert_eq!(review.owner.id, fx.owner_id);

    // Reading the sharing settings needs no particular scope.
    for client in [&comments_only, &docs_only, &access_only] {
        let sharing = client.api().sharing(&fx.id).await.expect("sharing");
        assert_eq!(sharing.mode, AccessMode::Link);
    }
    fx.rename(&docs_only, "Scoped").await.expect("rename");
    fx.meta(&docs_only, &tags(&["s"])).await.expect("meta");
    access_only
        .api()
        .change_sharing(&fx.id, &restrict)
        .await
        .expect("change sharing");
    assert_eq!(fx.sharing().await.mode, AccessMode::Restricted);
    docs_only.api().delete_review(&fx.id).await.expect("delete");
}

#[tokio::test]
async fn manage_endpoints_require_credentials() {
    let fx = setup().await;
    let anonymous = fx.server.client(None);
    let bogus = fx.server.client(Some("drp_not_a_real_token"));
    for client in [&anonymous, &bogus] {
        refused(fx.rename(client, "Anon").await, 401, "unauthorized");
        refused(fx.meta(client, &archived(true)).await, 401, "unauthorized");
        refused(client.api().sharing(&fx.id).await, 401, "unauthorized");
        refused(
            client
                .api()
                .change_sharing(&fx.id, &change(Some(AccessMode::Restricted), None))
                .await,
            401,
            "unauthorized",
        );
        refused(
            fx.transfer(client, "ada@example.com").await,
            401,
            "unauthorized",
        );
        refused(
            client.api().delete_review(&fx.id).await,
            401,
            "unauthorized",
        );
    }
    assert_eq!(fx.read(&fx.owner).await.title, "Plan");
}
