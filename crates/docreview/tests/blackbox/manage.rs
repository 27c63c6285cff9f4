//! Managing a document over HTTP: the title, tags and the archive flag, sharing (link and
//! restricted modes, the allowed-user list), ownership transfer, deletion, and which credentials
//! may do each (DESIGN.md §2, §3, §4.6).

use serde_json::{Value, json};

use crate::support::{Client, Reply, Server};

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
    let review = owner.create_review("Plan", HTML).await;
    Fixture {
        id: review["reviewId"].as_str().expect("reviewId").to_string(),
        server,
        owner,
        owner_id,
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

    /// The document as `client` reads it (asserting 200).
    async fn read(&self, client: &Client) -> Value {
        client.get(&self.path("")).await.expect(200)["review"].clone()
    }

    /// The owner's sharing settings (asserting 200).
    async fn sharing(&self) -> Value {
        self.owner
            .get(&self.path("/access"))
            .await
            .expect(200)
            .clone()
    }

    /// Sets the sharing settings as the owner (asserting 200).
    async fn share(&self, change: Value) -> Value {
        self.owner
            .patch(&self.path("/access"), &change)
            .await
            .expect(200)
            .clone()
    }

    /// Makes the document restricted and shares it with `users` (`[{ email, role }]`).
    async fn restrict_to(&self, users: Value) {
        self.share(json!({ "mode": "restricted", "allowedUsers": users }))
            .await;
    }

    async fn rename(&self, client: &Client, title: Value) -> Reply {
        client
            .patch(&self.path("/title"), &json!({ "title": title }))
            .await
    }

    async fn meta(&self, client: &Client, change: Value) -> Reply {
        client.patch(&self.path("/meta"), &change).await
    }
}

/// The ids of the documents `client` lists with the extra `query` (e.g. `archived=true`).
async fn listed(client: &Client, query: &str) -> Vec<String> {
    let reply = client.get(&format!("/api/reviews?limit=200&{query}")).await;
    reply.expect(200)["reviews"]
        .as_array()
        .expect("reviews array")
        .iter()
        .map(|row| row["reviewId"].as_str().expect("reviewId").to_string())
        .collect()
}

/// The list row of document `id` as `client` sees it.
async fn list_row(client: &Client, id: &str) -> Value {
    let reply = client.get("/api/reviews?limit=200").await;
    reply.expect(200)["reviews"]
        .as_array()
        .expect("reviews array")
        .iter()
        .find(|row| row["reviewId"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} is not listed: {}", reply.text))
}

// ---------------------------------------------------------------------------------------------
// Title

#[tokio::test]
async fn rename_trims_the_title_and_answers_the_review() {
    let fx = setup().await;
    let reply = fx.rename(&fx.owner, json!("  Launch plan, final  ")).await;
    let review = &reply.expect(200)["review"];
    assert_eq!(review["reviewId"], fx.id.as_str());
    assert_eq!(review["title"], "Launch plan, final");
    assert_eq!(review["role"], "owner");
    assert!(
        review["source"]["versions"].is_array(),
        "a whole Review: {review}"
    );

    assert_eq!(fx.read(&fx.owner).await["title"], "Launch plan, final");
    assert_eq!(
        list_row(&fx.owner, &fx.id).await["title"],
        "Launch plan, final"
    );
}

#[tokio::test]
async fn title_length_is_1_to_300_characters_after_trimming() {
    let fx = setup().await;
    for bad in [json!(""), json!("   \t\n "), json!("x".repeat(301))] {
        fx.rename(&fx.owner, bad.clone())
            .await
            .expect_error(400, "invalid_request");
    }
    // Multi-byte characters count as one each.
    fx.rename(&fx.owner, json!("é".repeat(301)))
        .await
        .expect_error(400, "invalid_request");
    assert_eq!(fx.read(&fx.owner).await["title"], "Plan", "nothing changed");

    let longest = "é".repeat(300);
    let reply = fx.rename(&fx.owner, json!(format!(" {longest} "))).await;
    assert_eq!(reply.expect(200)["review"]["title"], longest.as_str());
    fx.rename(&fx.owner, json!("x")).await.expect(200);
    assert_eq!(fx.read(&fx.owner).await["title"], "x");
}

#[tokio::test]
async fn rename_needs_a_title_string_in_a_json_body() {
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
    assert_eq!(fx.read(&fx.owner).await["title"], "Plan");
}

#[tokio::test]
async fn an_editor_may_rename_a_viewer_may_not_and_an_outsider_sees_nothing() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.share(json!({ "allowedUsers": [{ "email": "ed@example.com", "role": "editor" }] }))
        .await;

    // Link mode: Vic is a viewer.
    assert_eq!(fx.read(&viewer).await["role"], "viewer");
    fx.rename(&viewer, json!("By a viewer"))
        .await
        .expect_error(403, "forbidden");

    let reply = fx.rename(&editor, json!("By an editor")).await;
    assert_eq!(reply.expect(200)["review"]["title"], "By an editor");
    assert_eq!(reply.json["review"]["role"], "editor");

    fx.restrict_to(json!([{ "email": "ed@example.com", "role": "editor" }]))
        .await;
    fx.rename(&outsider, json!("By an outsider"))
        .await
        .expect_error(404, "not_found");
    fx.rename(&viewer, json!("By a viewer"))
        .await
        .expect_error(404, "not_found");
    fx.owner
        .patch(
            "/api/reviews/no-such-document/title",
            &json!({ "title": "x" }),
        )
        .await
        .expect_error(404, "not_found");
    assert_eq!(fx.read(&fx.owner).await["title"], "By an editor");
}

#[tokio::test]
async fn a_rename_leaves_comments_revision_alone_and_every_reader_sees_it_at_once() {
    let fx = setup().await;
    let (_, reader) = fx.member("rea@example.com", &[], "comments");
    fx.owner
        .comment_on(&fx.id, "rollout", "Which Monday?")
        .await;
    // Both readers have read the document (and so warmed any cache) before the change.
    let before = fx.read(&reader).await;
    assert_eq!(before["title"], "Plan");
    assert_eq!(before["commentsRevision"], 1);
    assert_eq!(fx.read(&fx.owner).await["title"], "Plan");

    let renamed = fx.rename(&fx.owner, json!("Plan B")).await;
    assert_eq!(renamed.expect(200)["review"]["commentsRevision"], 1);

    let after = fx.read(&reader).await;
    assert_eq!(after["title"], "Plan B", "no stale read after a rename");
    assert_eq!(
        after["commentsRevision"], 1,
        "a rename is no comment change"
    );
    assert_eq!(after["comments"], before["comments"]);
    assert_eq!(list_row(&reader, &fx.id).await["title"], "Plan B");
}

// ---------------------------------------------------------------------------------------------
// Tags and archive flag

#[tokio::test]
async fn tags_replace_the_list_trimmed_and_deduplicated() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let created = ada
        .post(
            "/api/reviews",
            &json!({ "review": { "title": "Tagged", "tags": ["old", "legacy"] } }),
        )
        .await;
    let id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("reviewId")
        .to_string();
    let path = format!("/api/reviews/{id}/meta");

    let reply = ada
        .patch(
            &path,
            &json!({ "tags": [" beta ", "alpha", "beta", "alpha  ", "Beta"] }),
        )
        .await;
    let review = &reply.expect(200)["review"];
    assert_eq!(review["tags"], json!(["beta", "alpha", "Beta"]));
    assert_eq!(review["archived"], false, "only tags were sent");

    let read = ada.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(
        read.expect(200)["review"]["tags"],
        json!(["beta", "alpha", "Beta"])
    );
    assert_eq!(
        list_row(&ada, &id).await["tags"],
        json!(["beta", "alpha", "Beta"])
    );
    assert_eq!(listed(&ada, "tag=alpha").await, vec![id.clone()]);
    assert!(
        listed(&ada, "tag=old").await.is_empty(),
        "old tags are gone"
    );

    let reply = ada.patch(&path, &json!({ "tags": [] })).await;
    assert_eq!(reply.expect(200)["review"]["tags"], json!([]));
    let read = ada.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(read.expect(200)["review"]["tags"], json!([]));
}

#[tokio::test]
async fn tag_limits_and_malformed_meta_are_rejected() {
    let fx = setup().await;
    fx.meta(&fx.owner, json!({ "tags": ["keep"] }))
        .await
        .expect(200);

    let too_many: Vec<String> = (0..33).map(|n| format!("t{n}")).collect();
    let thirty_two: Vec<String> = (0..32).map(|n| format!("t{n}")).collect();
    for bad in [
        json!({}),
        json!({ "tags": null, "archived": null }),
        json!({ "tags": too_many }),
        json!({ "tags": ["x".repeat(65)] }),
        json!({ "tags": ["ok", ""] }),
        json!({ "tags": ["   "] }),
        json!({ "tags": "keep" }),
        json!({ "tags": [1, 2] }),
        json!({ "archived": "yes" }),
        json!({ "archived": 1 }),
    ] {
        let reply = fx.meta(&fx.owner, bad.clone()).await;
        assert_eq!(reply.status, 400, "{bad} should be refused: {}", reply.text);
        reply.expect_error(400, "invalid_request");
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review["tags"], json!(["keep"]), "nothing changed");
    assert_eq!(review["archived"], false);

    // The boundaries themselves are allowed; duplicates do not count towards the limit.
    let mut with_duplicates = thirty_two.clone();
    with_duplicates.push("t0".to_string());
    let reply = fx.meta(&fx.owner, json!({ "tags": with_duplicates })).await;
    assert_eq!(reply.expect(200)["review"]["tags"], json!(thirty_two));
    let longest = "é".repeat(64);
    let reply = fx.meta(&fx.owner, json!({ "tags": [longest] })).await;
    assert_eq!(reply.expect(200)["review"]["tags"], json!([longest]));
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
    let other = fx.owner.create_review("Other", HTML).await;
    let other_id = other["reviewId"].as_str().expect("id").to_string();
    fx.meta(&fx.owner, json!({ "tags": ["q3"] }))
        .await
        .expect(200);

    let reply = fx.meta(&fx.owner, json!({ "archived": true })).await;
    let review = &reply.expect(200)["review"];
    assert_eq!(review["archived"], true);
    assert_eq!(
        review["tags"],
        json!(["q3"]),
        "tags stay when only archived is sent"
    );
    assert_eq!(fx.read(&fx.owner).await["archived"], true);
    assert_eq!(
        listed(&fx.owner, "archived=true").await,
        vec![fx.id.clone()]
    );
    assert_eq!(
        listed(&fx.owner, "archived=false").await,
        vec![other_id.clone()]
    );

    let reply = fx.meta(&fx.owner, json!({ "archived": false })).await;
    assert_eq!(reply.expect(200)["review"]["archived"], false);
    assert_eq!(fx.read(&fx.owner).await["archived"], false);
    assert!(listed(&fx.owner, "archived=true").await.is_empty());
    let mut active = listed(&fx.owner, "archived=false").await;
    active.sort();
    let mut expected = vec![fx.id.clone(), other_id];
    expected.sort();
    assert_eq!(active, expected);

    // Both at once.
    let reply = fx
        .meta(&fx.owner, json!({ "tags": ["done"], "archived": true }))
        .await;
    let review = &reply.expect(200)["review"];
    assert_eq!(review["tags"], json!(["done"]));
    assert_eq!(review["archived"], true);
}

#[tokio::test]
async fn an_editor_may_change_meta_a_viewer_may_not() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    fx.share(json!({ "allowedUsers": [{ "email": "ed@example.com", "role": "editor" }] }))
        .await;
    fx.meta(&viewer, json!({ "archived": true }))
        .await
        .expect_error(403, "forbidden");
    fx.meta(&viewer, json!({ "tags": ["mine"] }))
        .await
        .expect_error(403, "forbidden");
    assert_eq!(fx.read(&fx.owner).await["archived"], false);

    let reply = fx.meta(&editor, json!({ "tags": ["edited"] })).await;
    assert_eq!(reply.expect(200)["review"]["tags"], json!(["edited"]));
    assert_eq!(fx.read(&viewer).await["tags"], json!(["edited"]));

    fx.restrict_to(json!([])).await;
    fx.meta(&editor, json!({ "archived": true }))
        .await
        .expect_error(404, "not_found");
}

// ---------------------------------------------------------------------------------------------
// Sharing

#[tokio::test]
async fn sharing_defaults_to_link_mode_with_nobody_listed() {
    let fx = setup().await;
    assert_eq!(
        fx.sharing().await,
        json!({ "mode": "link", "allowedUsers": [] })
    );
    assert_eq!(fx.read(&fx.owner).await["access"]["mode"], "link");
}

#[tokio::test]
async fn restricting_a_document_shows_it_only_to_the_people_it_is_shared_with() {
    let fx = setup().await;
    let (_, bob) = fx.member("bob@example.com", &[], "comments");
    let (_, carol) = fx.member("carol@example.com", &[], "comments");
    // Both read it while it is in link mode.
    assert_eq!(fx.read(&bob).await["role"], "viewer");
    assert_eq!(fx.read(&carol).await["role"], "viewer");

    let answer = fx
        .share(json!({
            "mode": "restricted",
            "allowedUsers": [{ "email": " Bob@Example.COM ", "role": "editor" }]
        }))
        .await;
    let expected = json!({
        "mode": "restricted",
        "allowedUsers": [{ "email": "bob@example.com", "role": "editor" }]
    });
    assert_eq!(answer, expected);
    assert_eq!(fx.sharing().await, expected);
    assert_eq!(fx.read(&fx.owner).await["access"]["mode"], "restricted");

    assert_eq!(fx.read(&bob).await["role"], "editor");
    assert_eq!(list_row(&bob, &fx.id).await["role"], "editor");
    carol.get(&fx.path("")).await.expect_error(404, "not_found");
    assert!(listed(&carol, "").await.is_empty());

    // The list is replaced as a whole; the mode stays when only the list is sent.
    let answer = fx
        .share(json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "viewer" }] }))
        .await;
    let expected = json!({
        "mode": "restricted",
        "allowedUsers": [{ "email": "carol@example.com", "role": "viewer" }]
    });
    assert_eq!(answer, expected);
    assert_eq!(fx.sharing().await, expected);
    bob.get(&fx.path("")).await.expect_error(404, "not_found");
    assert!(listed(&bob, "").await.is_empty());
    assert_eq!(fx.read(&carol).await["role"], "viewer");

    // The list stays when only the mode is sent.
    let answer = fx.share(json!({ "mode": "link" })).await;
    assert_eq!(answer["mode"], "link");
    assert_eq!(answer["allowedUsers"], expected["allowedUsers"]);
    assert_eq!(fx.read(&bob).await["role"], "viewer");
    assert_eq!(fx.read(&fx.owner).await["access"]["mode"], "link");
}

#[tokio::test]
async fn link_mode_lets_every_internal_member_view_and_no_external_member() {
    let fx = setup().await;
    let (_, internal) = fx.member("ina@example.com", &[], "comments");
    let (_, external) = fx.member("ext@partner.example", &["--external"], ALL_DOC_SCOPES);

    let review = fx.read(&internal).await;
    assert_eq!(review["role"], "viewer");
    assert_eq!(listed(&internal, "").await, vec![fx.id.clone()]);
    external
        .get(&fx.path(""))
        .await
        .expect_error(404, "not_found");
    assert!(listed(&external, "").await.is_empty());

    // Sharing by email does not reach an external member either: they act only in projects.
    fx.share(json!({ "allowedUsers": [{ "email": "ext@partner.example", "role": "editor" }] }))
        .await;
    external
        .get(&fx.path(""))
        .await
        .expect_error(404, "not_found");
    fx.rename(&external, json!("By a partner"))
        .await
        .expect_error(404, "not_found");

    fx.share(json!({ "mode": "restricted", "allowedUsers": [] }))
        .await;
    internal
        .get(&fx.path(""))
        .await
        .expect_error(404, "not_found");
    fx.share(json!({ "mode": "link" })).await;
    assert_eq!(fx.read(&internal).await["role"], "viewer");
}

#[tokio::test]
async fn an_org_admin_sees_a_restricted_document_as_owner() {
    let fx = setup().await;
    let (_, admin) = fx.member("root@example.com", &["--admin"], ALL_DOC_SCOPES);
    fx.restrict_to(json!([])).await;
    let review = fx.read(&admin).await;
    assert_eq!(review["role"], "owner");
    assert_eq!(
        review["owner"]["id"],
        fx.owner_id.as_str(),
        "Ada still owns it"
    );
    assert_eq!(
        admin.get(&fx.path("/access")).await.expect(200)["mode"],
        "restricted"
    );
}

#[tokio::test]
async fn malformed_sharing_changes_are_rejected_and_change_nothing() {
    let fx = setup().await;
    let current = fx
        .share(json!({
            "mode": "restricted",
            "allowedUsers": [{ "email": "bob@example.com", "role": "viewer" }]
        }))
        .await;
    for bad in [
        json!({}),
        json!({ "mode": null, "allowedUsers": null }),
        json!({ "mode": "public" }),
        json!({ "mode": "restricted", "allowedUsers": [{ "email": "not-an-email", "role": "viewer" }] }),
        json!({ "allowedUsers": [{ "email": "bob@", "role": "viewer" }] }),
        json!({ "allowedUsers": [{ "email": "", "role": "viewer" }] }),
        json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "owner" }] }),
        json!({ "allowedUsers": [{ "email": "carol@example.com", "role": "admin" }] }),
        json!({ "allowedUsers": [{ "email": "carol@example.com" }] }),
        json!({ "allowedUsers": [
            { "email": "carol@example.com", "role": "viewer" },
            { "email": "Carol@Example.com", "role": "editor" }
        ] }),
        json!({ "allowedUsers": "carol@example.com" }),
    ] {
        let reply = fx.owner.patch(&fx.path("/access"), &bad).await;
        assert_eq!(reply.status, 400, "{bad} should be refused: {}", reply.text);
        reply.expect_error(400, "invalid_request");
    }
    assert_eq!(fx.sharing().await, current, "nothing changed");
}

#[tokio::test]
async fn an_editor_reads_sharing_but_only_the_owner_changes_it() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let settings = fx
        .share(json!({
            "allowedUsers": [
                { "email": "vic@example.com", "role": "viewer" },
                { "email": "ed@example.com", "role": "editor" }
            ]
        }))
        .await;
    // Listed in email order.
    assert_eq!(
        settings["allowedUsers"],
        json!([
            { "email": "ed@example.com", "role": "editor" },
            { "email": "vic@example.com", "role": "viewer" }
        ])
    );

    assert_eq!(editor.get(&fx.path("/access")).await.expect(200), &settings);
    editor
        .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
        .await
        .expect_error(403, "forbidden");
    viewer
        .get(&fx.path("/access"))
        .await
        .expect_error(403, "forbidden");
    viewer
        .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
        .await
        .expect_error(403, "forbidden");
    assert_eq!(fx.sharing().await, settings, "nothing changed");

    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.share(json!({ "mode": "restricted" })).await;
    outsider
        .get(&fx.path("/access"))
        .await
        .expect_error(404, "not_found");
    outsider
        .patch(&fx.path("/access"), &json!({ "mode": "link" }))
        .await
        .expect_error(404, "not_found");
    fx.owner
        .get("/api/reviews/no-such-document/access")
        .await
        .expect_error(404, "not_found");
}

// ---------------------------------------------------------------------------------------------
// Ownership

#[tokio::test]
async fn transferring_ownership_keeps_the_old_owner_as_editor() {
    let fx = setup().await;
    let (bob_id, bob) = fx.member("bob@example.com", &[], ALL_DOC_SCOPES);
    fx.restrict_to(json!([{ "email": "bob@example.com", "role": "viewer" }]))
        .await;

    let reply = fx
        .owner
        .put(&fx.path("/owner"), &json!({ "email": "Bob@Example.com" }))
        .await;
    let review = &reply.expect(200)["review"];
    assert_eq!(review["owner"]["id"], bob_id.as_str());
    assert_eq!(review["owner"]["displayName"], "bob@example.com");
    assert_eq!(review["role"], "editor", "Ada now holds the editor role");

    let as_bob = fx.read(&bob).await;
    assert_eq!(as_bob["owner"]["id"], bob_id.as_str());
    assert_eq!(as_bob["role"], "owner");
    assert_eq!(fx.read(&fx.owner).await["role"], "editor");
    assert_eq!(list_row(&bob, &fx.id).await["owner"]["id"], bob_id.as_str());

    let sharing = bob.get(&fx.path("/access")).await;
    assert_eq!(
        sharing.expect(200),
        &json!({
            "mode": "restricted",
            "allowedUsers": [{ "email": "ada@example.com", "role": "editor" }]
        }),
        "the new owner needs no grant; the old one is an editor"
    );

    // Owner-only operations follow the ownership.
    fx.owner
        .patch(&fx.path("/access"), &json!({ "mode": "link" }))
        .await
        .expect_error(403, "forbidden");
    fx.owner
        .delete(&fx.path(""))
        .await
        .expect_error(403, "forbidden");
    fx.owner
        .put(&fx.path("/owner"), &json!({ "email": "ada@example.com" }))
        .await
        .expect_error(403, "forbidden");
    fx.rename(&fx.owner, json!("Still editable"))
        .await
        .expect(200);
    bob.delete(&fx.path("")).await.expect(200);
    bob.get(&fx.path("")).await.expect_error(404, "not_found");
}

#[tokio::test]
async fn an_org_admin_may_transfer_ownership() {
    let fx = setup().await;
    let (_, admin) = fx.member("root@example.com", &["--admin"], ALL_DOC_SCOPES);
    let (carol_id, carol) = fx.member("carol@example.com", &[], ALL_DOC_SCOPES);
    let reply = admin
        .put(&fx.path("/owner"), &json!({ "email": "carol@example.com" }))
        .await;
    assert_eq!(
        reply.expect(200)["review"]["owner"]["id"],
        carol_id.as_str()
    );
    assert_eq!(fx.read(&carol).await["role"], "owner");
    assert_eq!(fx.read(&fx.owner).await["role"], "editor");
}

#[tokio::test]
async fn the_new_owner_must_be_an_active_member_who_can_see_the_document() {
    let fx = setup().await;
    fx.member("carol@example.com", &[], "comments");
    fx.member("ext@partner.example", &["--external"], "comments");

    // An external member cannot see a link-mode document.
    for email in ["nobody@example.com", "ext@partner.example"] {
        fx.owner
            .put(&fx.path("/owner"), &json!({ "email": email }))
            .await
            .expect_error(400, "invalid_request");
    }
    fx.restrict_to(json!([])).await;
    // Carol is a member, but cannot see the restricted document.
    fx.owner
        .put(&fx.path("/owner"), &json!({ "email": "carol@example.com" }))
        .await
        .expect_error(400, "invalid_request");
    for bad in [
        json!({ "email": "not-an-email" }),
        json!({ "email": "" }),
        json!({ "email": 7 }),
        json!({}),
        json!({ "owner": "carol@example.com" }),
    ] {
        let reply = fx.owner.put(&fx.path("/owner"), &bad).await;
        assert_eq!(reply.status, 400, "{bad} should be refused: {}", reply.text);
        reply.expect_error(400, "invalid_request");
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
    assert_eq!(review["owner"]["id"], fx.owner_id.as_str(), "still Ada's");
    assert_eq!(review["role"], "owner");
    assert_eq!(
        fx.sharing().await,
        json!({ "mode": "restricted", "allowedUsers": [] })
    );
}

#[tokio::test]
async fn editors_and_viewers_cannot_transfer_ownership() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    fx.share(json!({ "allowedUsers": [{ "email": "ed@example.com", "role": "editor" }] }))
        .await;
    for (client, email) in [
        (&editor, "ed@example.com"),
        (&viewer, "vic@example.com"),
        (&editor, "vic@example.com"),
    ] {
        client
            .put(&fx.path("/owner"), &json!({ "email": email }))
            .await
            .expect_error(403, "forbidden");
    }
    assert_eq!(
        fx.read(&fx.owner).await["owner"]["id"],
        fx.owner_id.as_str()
    );
    assert_eq!(fx.read(&editor).await["role"], "editor");
}

// ---------------------------------------------------------------------------------------------
// Deletion

#[tokio::test]
async fn the_owner_deletes_a_document_and_it_is_gone() {
    let fx = setup().await;
    let other = fx.owner.create_review("Other", HTML).await;
    let other_id = other["reviewId"].as_str().expect("id").to_string();
    fx.owner
        .comment_on(&fx.id, "rollout", "Which Monday?")
        .await;
    let (_, reader) = fx.member("rea@example.com", &[], "comments");
    fx.read(&reader).await;

    let reply = fx.owner.delete(&fx.path("")).await;
    assert_eq!(
        reply.expect(200),
        &json!({ "reviewId": fx.id.as_str(), "deleted": true })
    );

    for client in [&fx.owner, &reader] {
        client
            .get(&fx.path(""))
            .await
            .expect_error(404, "not_found");
        assert_eq!(listed(client, "").await, vec![other_id.clone()]);
    }
    fx.owner
        .get(&fx.path("/access"))
        .await
        .expect_error(404, "not_found");
    fx.rename(&fx.owner, json!("Ghost"))
        .await
        .expect_error(404, "not_found");
    fx.owner
        .post(&fx.path("/comments"), &json!({ "body": "late" }))
        .await
        .expect_error(404, "not_found");
    fx.owner
        .delete(&fx.path(""))
        .await
        .expect_error(404, "not_found");
    // The other document is untouched.
    assert_eq!(
        fx.owner
            .get(&format!("/api/reviews/{other_id}"))
            .await
            .expect(200)["review"]["title"],
        "Other"
    );
}

#[tokio::test]
async fn only_the_owner_may_delete() {
    let fx = setup().await;
    let (_, editor) = fx.member("ed@example.com", &[], ALL_DOC_SCOPES);
    let (_, viewer) = fx.member("vic@example.com", &[], ALL_DOC_SCOPES);
    let (_, outsider) = fx.member("otto@example.com", &[], ALL_DOC_SCOPES);
    fx.restrict_to(json!([
        { "email": "ed@example.com", "role": "editor" },
        { "email": "vic@example.com", "role": "viewer" }
    ]))
    .await;
    editor
        .delete(&fx.path(""))
        .await
        .expect_error(403, "forbidden");
    viewer
        .delete(&fx.path(""))
        .await
        .expect_error(403, "forbidden");
    outsider
        .delete(&fx.path(""))
        .await
        .expect_error(404, "not_found");
    assert_eq!(fx.read(&editor).await["title"], "Plan", "still there");
    fx.owner
        .delete("/api/reviews/no-such-document")
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn a_client_chosen_id_can_be_used_again_after_deletion() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], ALL_DOC_SCOPES);
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let create = |title: &str, html: &str, access: Value| {
        json!({ "review": {
            "reviewId": "design-doc", "title": title, "tags": [title],
            "source": { "html": html }, "access": access
        } })
    };
    let old = ada
        .post(
            "/api/reviews",
            &create(
                "Old",
                "<p>The old text about cats.</p>",
                json!({ "mode": "restricted",
                        "allowedUsers": [{ "email": "bob@example.com", "role": "editor" }] }),
            ),
        )
        .await;
    let old = old.expect(201)["review"].clone();
    ada.comment_on("design-doc", "cats", "An old remark").await;
    ada.comment_on("design-doc", "old text", "Another old remark")
        .await;
    // Everyone reads the old document first, so any cached rendering is warm.
    for client in [&ada, &bob] {
        let read = client.get("/api/reviews/design-doc").await;
        assert_eq!(
            read.expect(200)["review"]["comments"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }
    // The id is taken while the document exists.
    ada.post(
        "/api/reviews",
        &create("Clash", "<p>x</p>", json!({ "mode": "link" })),
    )
    .await
    .expect_error(409, "already_exists");

    ada.delete("/api/reviews/design-doc").await.expect(200);
    bob.get("/api/reviews/design-doc")
        .await
        .expect_error(404, "not_found");

    let new = ada
        .post(
            "/api/reviews",
            &create(
                "New",
                "<p>The new text about dogs.</p>",
                json!({ "mode": "link" }),
            ),
        )
        .await;
    let new = new.expect(201)["review"].clone();
    assert_eq!(new["reviewId"], "design-doc");
    assert_ne!(new["latestVersionId"], old["latestVersionId"]);

    for client in [&ada, &bob] {
        let read = client.get("/api/reviews/design-doc").await;
        let review = &read.expect(200)["review"];
        assert_eq!(review["title"], "New");
        assert_eq!(review["tags"], json!(["New"]));
        assert_eq!(
            review["comments"],
            json!([]),
            "no comment of the old document"
        );
        assert_eq!(review["commentsRevision"], 0);
        assert_eq!(review["access"]["mode"], "link");
        assert_eq!(review["latestVersionId"], new["latestVersionId"]);
        assert_eq!(
            review["source"]["versions"].as_array().map(Vec::len),
            Some(1)
        );
    }
    assert_eq!(
        ada.get("/api/reviews/design-doc").await.json["review"]["role"],
        "owner"
    );
    assert_eq!(
        bob.get("/api/reviews/design-doc").await.json["review"]["role"],
        "viewer",
        "the old document's sharing does not carry over"
    );
    assert_eq!(
        ada.get("/api/reviews/design-doc/access").await.expect(200),
        &json!({ "mode": "link", "allowedUsers": [] })
    );
    let written = ada.comment_on("design-doc", "dogs", "A new remark").await;
    assert_eq!(written["commentsRevision"], 1);
    let read = bob.get("/api/reviews/design-doc").await;
    let comments = &read.expect(200)["review"]["comments"];
    assert_eq!(comments.as_array().map(Vec::len), Some(1));
    assert_eq!(comments[0]["body"], "A new remark");
    let row = list_row(&ada, "design-doc").await;
    assert_eq!(row["title"], "New");
    assert_eq!(row["commentCount"], 1);
}

// ---------------------------------------------------------------------------------------------
// Credentials

#[tokio::test]
async fn the_manage_token_renames_tags_shares_and_deletes_but_cannot_transfer() {
    let fx = setup().await;
    fx.member("bob@example.com", &[], "comments");
    fx.restrict_to(json!([])).await;
    let manager = fx.server.manager();

    let reply = fx.rename(&manager, json!("Managed")).await;
    assert_eq!(reply.expect(200)["review"]["title"], "Managed");
    assert_eq!(reply.json["review"]["role"], "owner");
    let reply = fx
        .meta(&manager, json!({ "tags": ["ops"], "archived": true }))
        .await;
    assert_eq!(reply.expect(200)["review"]["tags"], json!(["ops"]));
    assert_eq!(
        manager.get(&fx.path("/access")).await.expect(200),
        &json!({ "mode": "restricted", "allowedUsers": [] })
    );
    let changed = manager
        .patch(
            &fx.path("/access"),
            &json!({ "allowedUsers": [{ "email": "bob@example.com", "role": "viewer" }] }),
        )
        .await;
    changed.expect(200);
    manager
        .put(&fx.path("/owner"), &json!({ "email": "bob@example.com" }))
        .await
        .expect_error(403, "forbidden");

    let review = fx.read(&fx.owner).await;
    assert_eq!(review["title"], "Managed");
    assert_eq!(review["tags"], json!(["ops"]));
    assert_eq!(review["archived"], true);
    assert_eq!(review["owner"]["id"], fx.owner_id.as_str());
    assert_eq!(
        fx.sharing().await["allowedUsers"],
        json!([{ "email": "bob@example.com", "role": "viewer" }])
    );

    let reply = manager.delete(&fx.path("")).await;
    assert_eq!(
        reply.expect(200),
        &json!({ "reviewId": fx.id.as_str(), "deleted": true })
    );
    fx.owner
        .get(&fx.path(""))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn the_import_and_agent_tokens_cannot_manage() {
    let fx = setup().await;
    fx.member("bob@example.com", &[], "comments");
    for client in [fx.server.importer(), fx.server.agent()] {
        fx.rename(&client, json!("Imported"))
            .await
            .expect_error(403, "forbidden");
        fx.meta(&client, json!({ "archived": true }))
            .await
            .expect_error(403, "forbidden");
        client
            .delete(&fx.path(""))
            .await
            .expect_error(403, "forbidden");
        client
            .get(&fx.path("/access"))
            .await
            .expect_error(403, "forbidden");
        client
            .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
            .await
            .expect_error(403, "forbidden");
        client
            .put(&fx.path("/owner"), &json!({ "email": "bob@example.com" }))
            .await
            .expect_error(403, "forbidden");
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review["title"], "Plan");
    assert_eq!(review["archived"], false);
    assert_eq!(review["access"]["mode"], "link");
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

    for client in [&comments_only, &access_only] {
        fx.rename(client, json!("Scoped"))
            .await
            .expect_error(403, "insufficient_scope");
        fx.meta(client, json!({ "archived": true }))
            .await
            .expect_error(403, "insufficient_scope");
        client
            .delete(&fx.path(""))
            .await
            .expect_error(403, "insufficient_scope");
    }
    for client in [&comments_only, &docs_only] {
        client
            .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
            .await
            .expect_error(403, "insufficient_scope");
        client
            .put(&fx.path("/owner"), &json!({ "email": "bob@example.com" }))
            .await
            .expect_error(403, "insufficient_scope");
    }
    let review = fx.read(&fx.owner).await;
    assert_eq!(review["title"], "Plan");
    assert_eq!(review["archived"], false);
    assert_eq!(review["access"]["mode"], "link");
    assert_eq!(review["owner"]["id"], fx.owner_id.as_str());

    // Reading the sharing settings needs no particular scope.
    for client in [&comments_only, &docs_only, &access_only] {
        assert_eq!(
            client.get(&fx.path("/access")).await.expect(200)["mode"],
            "link"
        );
    }
    fx.rename(&docs_only, json!("Scoped")).await.expect(200);
    fx.meta(&docs_only, json!({ "tags": ["s"] }))
        .await
        .expect(200);
    access_only
        .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
        .await
        .expect(200);
    assert_eq!(fx.sharing().await["mode"], "restricted");
    docs_only.delete(&fx.path("")).await.expect(200);
}

#[tokio::test]
async fn manage_endpoints_require_credentials() {
    let fx = setup().await;
    let anonymous = fx.server.client(None);
    let bogus = fx.server.client(Some("drp_not_a_real_token"));
    for client in [&anonymous, &bogus] {
        fx.rename(client, json!("Anon"))
            .await
            .expect_error(401, "unauthorized");
        fx.meta(client, json!({ "archived": true }))
            .await
            .expect_error(401, "unauthorized");
        client
            .get(&fx.path("/access"))
            .await
            .expect_error(401, "unauthorized");
        client
            .patch(&fx.path("/access"), &json!({ "mode": "restricted" }))
            .await
            .expect_error(401, "unauthorized");
        client
            .put(&fx.path("/owner"), &json!({ "email": "ada@example.com" }))
            .await
            .expect_error(401, "unauthorized");
        client
            .delete(&fx.path(""))
            .await
            .expect_error(401, "unauthorized");
    }
    assert_eq!(fx.read(&fx.owner).await["title"], "Plan");
}
