//! Handles, mentions and notifications (DESIGN.md §8.1): handles derived and changed, `@handle`
//! resolved only for readers, one notification per event and person with the strongest reason,
//! never to the actor or to someone who cannot read (checked again when read), undo withdrawing
//! them, paging, marking read, mail settings, the live count, and every refusal.
//!
//! Notifications are written by the outbox's worker after the change commits, so a test waits
//! for them: `Team::settle` writes a mention of a witness after the change under test and waits
//! until the witness sees it; events are fanned out in the order they were written, so by then
//! every earlier event has been too (including those that notify nobody).

use std::time::Duration;

use docreview_client::api::{
    EmailFrequency, NotificationQuery, NotificationReason, NotificationSettings, NotificationsRead,
    ProfileChange,
};
use serde_json::{Value, json};

use crate::support::{Client, SAMPLE_HTML, Server};

const PASSAGE: &str = "The quick brown fox jumps over the lazy dog";

/// Four internal people (Ada owns the documents), an external one, and a witness who only
/// serves `settle`.
struct Team {
    server: Server,
    ada: Client,
    bob: Client,
    cy: Client,
    ext: Client,
    witness: Client,
    /// A link-mode document of Ada's that the witness is mentioned on.
    beacon: String,
}

impl Team {
    async fn new() -> Team {
        let server = Server::start();
        let scopes = "docs,comments,access";
        let ada = server.user("ada@example.com", "Ada Lovelace", &[], scopes);
        let bob = server.user("bob@example.com", "Bob", &[], scopes);
        let cy = server.user("cy@example.com", "Cy", &[], scopes);
        let ext = server.user("ext@partner.org", "Ext", &["--external"], scopes);
        let witness = server.user("witness@example.com", "Witness", &[], scopes);
        let beacon = ada.upload("Beacon", SAMPLE_HTML).await.review_id;
        Team {
            server,
            ada,
            bob,
            cy,
            ext,
            witness,
            beacon,
        }
    }

    /// Waits until every event written so far is fanned out (see the module's note).
    async fn settle(&self) {
        let before = unread(&self.witness).await;
        self.ada
            .post(
                &format!("/api/reviews/{}/comments", self.beacon),
                &json!({ "body": "@witness" }),
            )
            .await
            .expect(201);
        wait_for_unread(&self.witness, before + 1).await;
    }
}

/// The caller's unread count, from the list.
async fn unread(client: &Client) -> i64 {
    let list = client.get("/api/notifications").await;
    list.expect(200)["unreadCount"]
        .as_i64()
        .expect("unreadCount")
}

/// Waits (up to 10 s) until the caller's unread count is `count`.
async fn wait_for_unread(client: &Client, count: i64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = unread(client).await;
        if now == count {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "unread count stayed {now}, expected {count}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The caller's notifications (newest first), as JSON.
async fn listed(client: &Client) -> Vec<Value> {
    client.get("/api/notifications?limit=200").await.expect(200)["notifications"]
        .as_array()
        .expect("notifications")
        .clone()
}

/// The reasons of the caller's notifications, newest first.
async fn reasons(client: &Client) -> Vec<String> {
    listed(client)
        .await
        .iter()
        .map(|n| n["reason"].as_str().expect("reason").to_string())
        .collect()
}

async fn comment(client: &Client, review_id: &str, body: &str) -> Value {
    client
        .post(
            &format!("/api/reviews/{review_id}/comments"),
            &json!({ "body": body, "locator": { "quote": { "exact": PASSAGE } } }),
        )
        .await
        .expect(201)
        .clone()
}

async fn reply(client: &Client, review_id: &str, comment_id: &str, body: &str) -> Value {
    client
        .post(
            &format!("/api/reviews/{review_id}/comments/{comment_id}/thread"),
            &json!({ "body": body }),
        )
        .await
        .expect(201)
        .clone()
}

fn id_of(written: &Value) -> String {
    written["comment"]["id"].as_str().expect("id").to_string()
}

async fn restricted(owner: &Client, title: &str, shared_with: &[&str]) -> String {
    let users: Vec<Value> = shared_with
        .iter()
        .map(|email| json!({ "email": email, "role": "viewer" }))
        .collect();
    let created = owner
        .post(
            "/api/reviews",
            &json!({ "review": { "title": title, "source": { "html": SAMPLE_HTML },
                "access": { "mode": "restricted", "allowedUsers": users } } }),
        )
        .await;
    created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("reviewId")
        .to_string()
}

#[tokio::test]
async fn handles_are_derived_from_emails_unique_and_shown_on_every_user() {
    let server = Server::start();
    let ada = server.user("Ada@Example.com", "Ada", &[], "docs,comments");
    let other = server.user("ada@elsewhere.org", "Other Ada", &[], "comments");
    let tagged = server.user("grace.hopper+news@example.com", "Grace", &[], "comments");
    let odd = server.user("__Ünï@example.com", "Odd", &[], "comments");
    assert_eq!(ada.api().me().await.expect("me").user.handle, "ada");
    assert_eq!(other.api().me().await.expect("me").user.handle, "ada2");
    assert_eq!(
        tagged.api().me().await.expect("me").user.handle,
        "grace.hopper"
    );
    assert_eq!(odd.api().me().await.expect("me").user.handle, "n");
    // On the User objects of documents and comments.
    let review = ada.upload("Doc", SAMPLE_HTML).await;
    let written = ada.note_on(&review.review_id, PASSAGE, "a note").await;
    assert_eq!(written.comment.author.handle, "ada");
    assert_eq!(review.owner.handle, "ada");
}

#[tokio::test]
async fn accounts_made_before_handles_get_theirs_at_start() {
    let mut server = Server::start();
    server.create_user("old@example.com", "Old", &[]);
    let token = server.issue_token("old@example.com", "comments");
    // As a database from before version 5 left it.
    let cleared = clear_handles(&server);
    if !cleared {
        return;
    }
    server.restart();
    let old = server.client(Some(&token));
    assert_eq!(old.api().me().await.expect("me").user.handle, "old");
}

/// Clears every handle in the server's database, as a database from before handles left it;
/// `false` when this machine has no client for it (`sqlite3`, `psql`).
fn clear_handles(server: &Server) -> bool {
    let sql = "UPDATE users SET handle = NULL";
    let storage = server.storage();
    match storage.database_url() {
        Some(url) => crate::support::psql(url, sql).is_ok(),
        None => std::process::Command::new("sqlite3")
            .arg(storage.data_dir().join("docreview.db"))
            .arg(sql)
            .status()
            .is_ok_and(|status| status.success()),
    }
}

#[tokio::test]
async fn people_change_their_handle_and_name() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments");
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let me = ada
        .api()
        .update_me(&ProfileChange {
            handle: Some("@Countess".into()),
            display_name: Some("  Ada King  ".into()),
        })
        .await
        .expect("update me");
    assert_eq!(me.user.handle, "countess");
    assert_eq!(me.user.display_name, "Ada King");
    assert_eq!(ada.api().me().await.expect("me").user.handle, "countess");
    // The old handle is free again; the new one is taken.
    let raw = bob.patch("/api/me", &json!({ "handle": "countess" })).await;
    raw.expect_error(409, "already_exists");
    let raw = bob.patch("/api/me", &json!({ "handle": "ada" })).await;
    assert_eq!(raw.expect(200)["user"]["handle"], "ada");
    // The service principals' handles are reserved.
    bob.patch("/api/me", &json!({ "handle": "svc-agent" }))
        .await
        .expect_error(409, "already_exists");
    // Only the name.
    let raw = bob
        .patch("/api/me", &json!({ "displayName": "Robert" }))
        .await;
    assert_eq!(raw.expect(200)["user"]["displayName"], "Robert");
    assert_eq!(raw.json["user"]["handle"], "ada");
}

#[tokio::test]
async fn bad_profile_changes_are_refused_with_the_error_body() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments");
    for body in [
        json!({}),
        json!({ "handle": "" }),
        json!({ "handle": "-ada" }),
        json!({ "handle": "a".repeat(40) }),
        json!({ "handle": "ada lovelace" }),
        json!({ "handle": "ädä" }),
        json!({ "handle": 5 }),
        json!({ "displayName": "   " }),
        json!({ "displayName": "x".repeat(201) }),
        json!({ "displayName": "a\u{0}b" }),
        json!([]),
    ] {
        ada.patch("/api/me", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    let raw = ada
        .send(
            ada.raw("PATCH", "/api/me")
                .header("content-type", "application/json")
                .body("{"),
        )
        .await;
    raw.expect_error(400, "invalid_request");
    // A token without `comments`; a shared token.
    let reader = server.user("reader@example.com", "Reader", &[], "docs");
    reader
        .patch("/api/me", &json!({ "handle": "reader2" }))
        .await
        .expect_error(403, "insufficient_scope");
    server
        .agent()
        .patch("/api/me", &json!({ "handle": "bot" }))
        .await
        .expect_error(403, "forbidden");
    assert_eq!(ada.api().me().await.expect("me").user.handle, "ada");
}

#[tokio::test]
async fn mentions_resolve_for_readers_only_and_the_rest_are_unresolved() {
    let team = Team::new().await;
    let doc = restricted(&team.ada, "Restricted", &["bob@example.com"]).await;
    let written = comment(
        &team.ada,
        &doc,
        "@Bob and @cy, see @nobody. Mail ada@example.com; @bob again.",
    )
    .await;
    assert_eq!(
        written["comment"]["mentions"],
        json!([{ "userId": team.bob.api().me().await.expect("me").user.id, "handle": "bob" }])
    );
    assert_eq!(written["unresolvedMentions"], json!(["cy", "nobody"]));
    // A reply, through the typed client: the external member cannot read it either.
    let id = id_of(&written);
    let answer = team
        .ada
        .api()
        .reply(
            &doc,
            &id,
            &docreview_client::api::NewReply {
                body: "@ext @ada".into(),
                base_comments_revision: None,
                base_thread_revision: None,
                run_id: None,
            },
        )
        .await
        .expect("reply");
    assert_eq!(answer.unresolved_mentions, ["ext"]);
    assert_eq!(answer.message.mentions.len(), 1);
    assert_eq!(answer.message.mentions[0].handle, "ada");
    // Shown when the document is read.
    let review = team.bob.get(&format!("/api/reviews/{doc}")).await;
    let shown = &review.expect(200)["review"]["comments"][0];
    assert_eq!(shown["mentions"][0]["handle"], "bob");
    assert_eq!(shown["thread"][0]["mentions"][0]["handle"], "ada");
    // Editing re-resolves.
    let edited = team
        .ada
        .patch(
            &format!("/api/reviews/{doc}/comments/{id}"),
            &json!({ "body": "now only @cy" }),
        )
        .await;
    assert_eq!(edited.expect(200)["comment"]["mentions"], json!([]));
    assert_eq!(edited.json["unresolvedMentions"], json!(["cy"]));
}

#[tokio::test]
async fn each_event_tells_each_person_once_with_the_strongest_reason_never_the_actor() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    // Bob comments on Ada's document: Ada (owner) is told `comment`; Bob is not told.
    let first = comment(&team.bob, &doc, "A question").await;
    let first_id = id_of(&first);
    // Cy comments and mentions Ada: one notification, `mention` (beats `comment`).
    comment(&team.cy, &doc, "@ada what do you think?").await;
    // Ada comments on her own document: nobody is told.
    comment(&team.ada, &doc, "my own note").await;
    // Cy replies to Bob's comment: Bob `reply` (wrote the thread), Ada `comment` (owner).
    reply(&team.cy, &doc, &first_id, "an answer").await;
    // Bob replies, mentioning Cy who wrote in the thread: Cy `mention`, Ada `comment`.
    reply(&team.bob, &doc, &first_id, "thanks @cy").await;
    // Ada replies in the thread: Bob and Cy `reply`; Ada herself nothing.
    reply(&team.ada, &doc, &first_id, "agreed").await;
    team.settle().await;
    assert_eq!(
        reasons(&team.ada).await,
        ["comment", "comment", "mention", "comment"]
    );
    assert_eq!(reasons(&team.bob).await, ["reply", "reply"]);
    assert_eq!(reasons(&team.cy).await, ["reply", "mention"]);
    // What a notification says.
    let newest = &listed(&team.bob).await[0];
    assert_eq!(newest["reviewId"], doc.as_str());
    assert_eq!(newest["reviewTitle"], "Plan");
    assert_eq!(newest["commentId"], first_id.as_str());
    assert_eq!(newest["actor"]["handle"], "ada");
    assert_eq!(newest["excerpt"], "agreed");
    assert!(newest["readAt"].is_null());
    assert!(newest["createdAt"].is_string());
    assert!(newest["id"].as_str().expect("id").starts_with("ntf_"));
    assert_eq!(unread(&team.ada).await, 4);
}

#[tokio::test]
async fn a_completed_run_tells_the_owner() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    let run = team
        .bob
        .post(
            &format!("/api/reviews/{doc}/ai-review-runs"),
            &json!({ "title": "Style pass" }),
        )
        .await;
    let run_id = run.expect(201)["run"]["id"]
        .as_str()
        .expect("run")
        .to_string();
    team.bob
        .post(
            &format!("/api/reviews/{doc}/ai-review-runs/{run_id}/comments"),
            &json!({ "body": "draft" }),
        )
        .await
        .expect(201);
    team.bob
        .patch(
            &format!("/api/reviews/{doc}/ai-review-runs/{run_id}"),
            &json!({ "status": "completed", "summary": "Two small fixes" }),
        )
        .await
        .expect(200);
    team.settle().await;
    let listed = listed(&team.ada).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["reason"], "run_completed");
    assert_eq!(listed[0]["excerpt"], "Two small fixes");
    assert!(listed[0].get("commentId").is_none());
}

#[tokio::test]
async fn nobody_who_cannot_read_is_told_and_losing_access_hides_it() {
    let team = Team::new().await;
    let doc = restricted(&team.ada, "Secret", &["bob@example.com"]).await;
    // Cy cannot read it: the mention is unresolved and Cy hears nothing.
    let written = comment(&team.ada, &doc, "@cy @bob please look").await;
    assert_eq!(written["unresolvedMentions"], json!(["cy"]));
    // The external member, on a link-mode document, cannot read it either.
    let open = team.ada.upload("Open", SAMPLE_HTML).await.review_id;
    let written = comment(&team.bob, &open, "@ext have a look").await;
    assert_eq!(written["unresolvedMentions"], json!(["ext"]));
    team.settle().await;
    assert_eq!(unread(&team.cy).await, 0);
    assert_eq!(unread(&team.ext).await, 0);
    assert_eq!(reasons(&team.bob).await, ["mention"]);
    // Bob loses access: the notification is hidden and no longer counted.
    team.ada
        .patch(
            &format!("/api/reviews/{doc}/access"),
            &json!({ "mode": "restricted", "allowedUsers": [] }),
        )
        .await
        .expect(200);
    assert_eq!(unread(&team.bob).await, 0);
    assert!(listed(&team.bob).await.is_empty());
    // Access restored: it is back.
    team.ada
        .patch(
            &format!("/api/reviews/{doc}/access"),
            &json!({ "mode": "restricted",
                "allowedUsers": [{ "email": "bob@example.com", "role": "viewer" }] }),
        )
        .await
        .expect(200);
    assert_eq!(unread(&team.bob).await, 1);
}

#[tokio::test]
async fn undoing_a_comment_or_reply_withdraws_its_notifications() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    let written = comment(&team.bob, &doc, "@cy oops").await;
    let id = id_of(&written);
    team.settle().await;
    assert_eq!(reasons(&team.ada).await, ["comment"]);
    assert_eq!(reasons(&team.cy).await, ["mention"]);
    team.bob
        .delete(&format!("/api/reviews/{doc}/comments/{id}"))
        .await
        .expect(200);
    team.settle().await;
    assert_eq!(unread(&team.ada).await, 0);
    assert!(listed(&team.cy).await.is_empty());
    // A reply's undo withdraws only the reply's.
    let kept = comment(&team.bob, &doc, "a question").await;
    let kept_id = id_of(&kept);
    let answer = reply(&team.cy, &doc, &kept_id, "hm @ada").await;
    let message_id = answer["message"]["id"]
        .as_str()
        .expect("message")
        .to_string();
    team.settle().await;
    assert_eq!(reasons(&team.ada).await, ["mention", "comment"]);
    assert_eq!(reasons(&team.bob).await, ["reply"]);
    team.cy
        .delete(&format!(
            "/api/reviews/{doc}/comments/{kept_id}/thread/{message_id}"
        ))
        .await
        .expect(200);
    team.settle().await;
    assert_eq!(reasons(&team.ada).await, ["comment"]);
    assert!(listed(&team.bob).await.is_empty());
}

#[tokio::test]
async fn an_edit_tells_only_the_newly_mentioned() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    let written = comment(&team.ada, &doc, "@bob first").await;
    let id = id_of(&written);
    team.ada
        .patch(
            &format!("/api/reviews/{doc}/comments/{id}"),
            &json!({ "body": "@bob and now @cy" }),
        )
        .await
        .expect(200);
    team.settle().await;
    assert_eq!(reasons(&team.bob).await, ["mention"]);
    assert_eq!(reasons(&team.cy).await, ["mention"]);
}

#[tokio::test]
async fn notifications_are_paged_newest_first() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    for n in 0..5 {
        comment(&team.bob, &doc, &format!("note {n}")).await;
    }
    team.settle().await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let query = NotificationQuery {
            unread: None,
            limit: Some(2),
            cursor: cursor.clone(),
        };
        let page = team.ada.api().notifications(&query).await.expect("page");
        pages += 1;
        assert_eq!(page.unread_count, 5);
        seen.extend(page.notifications.iter().map(|n| n.excerpt.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, ["note 4", "note 3", "note 2", "note 1", "note 0"]);
    // Errors: a cursor this server did not issue, limits out of range, a bad flag.
    for query in [
        "cursor=nonsense",
        "cursor=bm9wZQ",
        "limit=0",
        "limit=201",
        "limit=x",
        "unread=maybe",
    ] {
        team.ada
            .get(&format!("/api/notifications?{query}"))
            .await
            .expect_error(400, "invalid_request");
    }
}

#[tokio::test]
async fn notifications_are_marked_read_by_id_or_all() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    for n in 0..3 {
        comment(&team.bob, &doc, &format!("note {n}")).await;
    }
    team.settle().await;
    let all = listed(&team.ada).await;
    let first = all[0]["id"].as_str().expect("id").to_string();
    let count = team
        .ada
        .api()
        .mark_notifications_read(&NotificationsRead {
            ids: Some(vec![first.clone()]),
            all: None,
        })
        .await
        .expect("mark read");
    assert_eq!(count.unread_count, 2);
    let unread_only = team.ada.get("/api/notifications?unread=true").await;
    assert_eq!(
        unread_only.expect(200)["notifications"]
            .as_array()
            .expect("list")
            .len(),
        2
    );
    assert!(listed(&team.ada).await[0]["readAt"].is_string());
    // Someone else's id changes nothing.
    let answer = team
        .bob
        .post("/api/notifications/read", &json!({ "ids": [all[1]["id"]] }))
        .await;
    assert_eq!(answer.expect(200)["unreadCount"], 0);
    assert_eq!(unread(&team.ada).await, 2);
    let answer = team
        .ada
        .post("/api/notifications/read", &json!({ "all": true }))
        .await;
    assert_eq!(answer.expect(200)["unreadCount"], 0);
    // Bad bodies.
    for body in [
        json!({}),
        json!({ "ids": [] }),
        json!({ "all": false }),
        json!({ "ids": [first], "all": true }),
        json!({ "ids": "ntf_x" }),
        json!({ "ids": vec!["ntf_x"; 201] }),
        json!({ "all": "yes" }),
    ] {
        team.ada
            .post("/api/notifications/read", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    // Scopes: writes need `comments`; reading needs any scope.
    let reader = team
        .server
        .user("reader@example.com", "Reader", &[], "docs");
    reader
        .post("/api/notifications/read", &json!({ "all": true }))
        .await
        .expect_error(403, "insufficient_scope");
    reader.get("/api/notifications").await.expect(200);
    team.server
        .agent()
        .get("/api/notifications")
        .await
        .expect_error(403, "forbidden");
    team.server
        .client(None)
        .get("/api/notifications")
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test]
async fn mail_settings_default_to_instant_and_can_change() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "comments");
    let settings = ada.api().notification_settings().await.expect("settings");
    assert_eq!(settings.email, EmailFrequency::Instant);
    let changed = ada
        .api()
        .set_notification_settings(&NotificationSettings {
            email: EmailFrequency::Daily,
            mail_enabled: true,
        })
        .await
        .expect("change");
    assert_eq!(changed.email, EmailFrequency::Daily);
    let raw = ada.get("/api/me/notification-settings").await;
    // Mail is not set up on this server: the setting is kept, and the answer says so.
    assert_eq!(
        raw.expect(200),
        &json!({ "email": "daily", "mailEnabled": false })
    );
    ada.patch("/api/me/notification-settings", &json!({ "email": "off" }))
        .await
        .expect(200);
    for body in [
        json!({}),
        json!({ "email": "hourly" }),
        json!({ "email": null }),
        json!("off"),
    ] {
        ada.patch("/api/me/notification-settings", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    let reader = server.user("reader@example.com", "Reader", &[], "docs");
    reader
        .patch("/api/me/notification-settings", &json!({ "email": "off" }))
        .await
        .expect_error(403, "insufficient_scope");
    assert_eq!(
        ada.api()
            .notification_settings()
            .await
            .expect("settings")
            .email,
        EmailFrequency::Off
    );
}

#[tokio::test]
async fn the_unread_count_is_live() {
    let team = Team::new().await;
    let doc = team.ada.upload("Plan", SAMPLE_HTML).await.review_id;
    let mut stream = Stream::open(&team.bob).await;
    assert_eq!(stream.next().await, json!({ "unreadCount": 0 }));
    comment(&team.ada, &doc, "@bob look").await;
    assert_eq!(stream.next().await, json!({ "unreadCount": 1 }));
    team.bob
        .post("/api/notifications/read", &json!({ "all": true }))
        .await
        .expect(200);
    assert_eq!(stream.next().await, json!({ "unreadCount": 0 }));
    // Shared tokens have no notifications.
    team.server
        .agent()
        .get("/api/me/events")
        .await
        .expect_error(403, "forbidden");
}

/// `GET /api/me/events`, read event by event.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    async fn open(client: &Client) -> Stream {
        let response = client
            .raw("GET", "/api/me/events")
            .send()
            .await
            .expect("open the stream");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(
            response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        Stream {
            response,
            buffer: String::new(),
        }
    }

    /// The next `notification` event's data; fails after 10 s.
    async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim());
                    }
                }
                if name.is_empty() {
                    continue;
                }
                assert_eq!(name, "notification");
                return serde_json::from_str(&data).expect("event data");
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .expect("an event within 10 s")
                .expect("read the stream")
                .expect("the stream stays open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

#[tokio::test]
async fn the_reasons_rank_as_designed() {
    // The order the API lists them in is the order they win in.
    let order: Vec<&str> = NotificationReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        &order[..7],
        [
            "mention",
            "assigned",
            "review_requested",
            "decision",
            "reply",
            "comment",
            "run_completed"
        ]
    );
}

/// Two nodes on one PostgreSQL database: a mention written through node A moves the count on
/// a stream open on node B, and so does marking read through A (`NOTIFY docreview_people`).
#[tokio::test]
async fn a_mention_through_one_node_moves_the_count_live_on_the_other() {
    if !crate::support::on_postgres() {
        eprintln!("note: two nodes need PostgreSQL; skipped");
        return;
    }
    let a = Server::start();
    let b = a.start_second_node();
    let ada = a.user("ada@example.com", "Ada", &[], "docs,comments");
    let bob = a.user("bob@example.com", "Bob", &[], "comments");
    let doc = ada.upload("Plan", SAMPLE_HTML).await.review_id;
    let mut stream = Stream::open(&b.client(bob.token())).await;
    assert_eq!(stream.next().await, json!({ "unreadCount": 0 }));
    comment(&ada, &doc, "@bob look").await;
    assert_eq!(stream.next().await, json!({ "unreadCount": 1 }));
    bob.post("/api/notifications/read", &json!({ "all": true }))
        .await
        .expect(200);
    assert_eq!(stream.next().await, json!({ "unreadCount": 0 }));
}
