//! Webhooks (DESIGN.md §8.3) against a real receiver (`support::webhook_receiver`: an axum
//! server in the test on 127.0.0.1, so the docreview server runs with
//! `DOCREVIEW_WEBHOOK_ALLOW_PRIVATE=true`). Signatures are checked with the `hmac` crate, apart
//! from the server's own HMAC, following the Standard Webhooks text: `v1,` + base64 of
//! HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the base64 after `whsec_`.

use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use docreview_client::api::{NewWebhook, PageQuery, WebhookChange};
use serde_json::{Value, json};

use crate::support::webhook_receiver::{Receiver, signed_by};
use crate::support::{Client, Server};

const HTML: &str = "<h1>Plan</h1><p>The plan has a paragraph worth a comment.</p>";

/// A server whose webhooks may call 127.0.0.1, retrying after 100 ms, 100 ms and 100 ms.
fn server() -> Server {
    Server::start_with(&[
        ("DOCREVIEW_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("DOCREVIEW_WEBHOOK_RETRY_SCHEDULE", "100ms,100ms,100ms"),
    ])
}

fn admin(server: &Server) -> Client {
    server.user(
        "ada@example.com",
        "Ada",
        &["--admin"],
        "docs,access,comments,org",
    )
}

fn new_webhook(url: &str, events: &[&str]) -> NewWebhook {
    NewWebhook {
        url: url.to_string(),
        events: events.iter().map(|e| (*e).to_string()).collect(),
        project_code: None,
        description: Some("test receiver".to_string()),
    }
}

fn first_page() -> PageQuery {
    PageQuery {
        limit: None,
        cursor: None,
    }
}

/// Waits (up to 15 s) until the webhook's newest delivery is no longer pending; answers it.
async fn settled(client: &Client, webhook_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let list = client
            .get(&format!("/api/webhooks/{webhook_id}/deliveries"))
            .await;
        let newest = list.expect(200)["deliveries"][0].clone();
        if newest["status"] != "pending" && !newest.is_null() {
            return newest;
        }
        assert!(Instant::now() < deadline, "still pending: {newest}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_comment_is_delivered_signed_with_ids_only() {
    let server = server();
    let ada = admin(&server);
    let mut receiver = Receiver::start(&[]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["comment.created"]))
        .await
        .expect("create");
    let secret = webhook
        .secret
        .as_ref()
        .expect("secret on create")
        .expose()
        .to_string();
    assert!(secret.starts_with("whsec_"));
    let key = STANDARD.decode(&secret["whsec_".len()..]).expect("base64");
    assert!(key.len() >= 24, "24+ random bytes");
    assert!(webhook.active);
    assert_eq!(webhook.events, ["comment.created"]);
    assert!(webhook.id.starts_with("wh_"));

    let review = ada.upload("Plan", HTML).await;
    let written = ada
        .note_on(&review.review_id, "a paragraph", "Worth it")
        .await;
    let request = receiver.next().await;
    assert!(signed_by(&secret, &request), "signature verifies");
    assert_eq!(request.header("content-type"), "application/json");
    let timestamp: i64 = request
        .header("webhook-timestamp")
        .parse()
        .expect("seconds");
    let now = crate::support::now_ms() / 1000;
    assert!(
        (now - timestamp).abs() < 60,
        "timestamp is now: {timestamp}"
    );
    let body = request.json();
    assert_eq!(body["type"], "comment.created");
    assert!(body["timestamp"].is_string());
    assert_eq!(
        body["data"],
        json!({
            "reviewId": review.review_id,
            "commentId": written.comment.id,
            "actorId": written.comment.author.id,
        }),
        "ids only"
    );
    // The review's creation is not subscribed to: nothing else arrives.
    receiver.nothing_for(Duration::from_millis(700)).await;

    let delivery = settled(&ada, &webhook.id).await;
    assert_eq!(delivery["status"], "succeeded");
    assert_eq!(delivery["attempts"], 1);
    assert_eq!(delivery["lastResponseStatus"], 204);
    assert_eq!(delivery["type"], "comment.created");
    assert_eq!(delivery["webhookId"], webhook.id.as_str());
    assert_eq!(delivery["eventId"], request.header("webhook-id"));
    assert!(delivery["nextAttemptAt"].is_null());
    assert!(delivery["id"].as_str().unwrap().starts_with("dlv_"));

    // The secret is never shown again.
    let shown = ada.get(&format!("/api/webhooks/{}", webhook.id)).await;
    assert!(shown.expect(200)["webhook"].get("secret").is_none());
    let listed = ada.get("/api/webhooks").await;
    assert!(!listed.text.contains(&secret));
}

#[tokio::test]
async fn failures_are_retried_with_the_same_id_and_retry_after_is_honoured() {
    let server = server();
    let ada = admin(&server);
    let mut receiver = Receiver::start(&[(500, None), (503, Some("2")), (200, None)]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["*"]))
        .await
        .expect("create");
    let secret = webhook.secret.unwrap().expose().to_string();
    let review = ada.upload("Plan", HTML).await;
    let first = receiver.next().await;
    assert_eq!(first.json()["type"], "review.created");
    let second = receiver.next().await;
    let third = receiver.next().await;
    for request in [&first, &second, &third] {
        assert_eq!(request.header("webhook-id"), first.header("webhook-id"));
        assert_eq!(request.body, first.body, "the same bytes every time");
        assert!(signed_by(&secret, request));
    }
    assert!(
        third.at - second.at >= Duration::from_millis(1_900),
        "Retry-After: 2 was honoured (waited {:?})",
        third.at - second.at
    );
    let delivery = settled(&ada, &webhook.id).await;
    assert_eq!(delivery["status"], "succeeded");
    assert_eq!(delivery["attempts"], 3);
    assert_eq!(delivery["lastResponseStatus"], 200);
    assert_eq!(first.json()["data"]["reviewId"], review.review_id.as_str());
}

#[tokio::test]
async fn a_spent_schedule_fails_the_delivery_and_tells_the_admins() {
    let metrics_token = "metrics-token-0123456789abcdef0123456789";
    let server = Server::start_with(&[
        ("DOCREVIEW_WEBHOOK_ALLOW_PRIVATE", "true"),
        ("DOCREVIEW_WEBHOOK_RETRY_SCHEDULE", "100ms,100ms,100ms"),
        ("DOCREVIEW_METRICS_TOKEN", metrics_token),
    ]);
    let ada = admin(&server);
    let grace = server.user("grace@example.com", "Grace", &["--admin"], "comments");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,comments,org");
    let mut receiver = Receiver::start(&[(500, None); 4]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["review.created"]))
        .await
        .expect("create");
    bob.upload("Plan", HTML).await;
    for _ in 0..4 {
        receiver.next().await;
    }
    let delivery = settled(&ada, &webhook.id).await;
    assert_eq!(delivery["status"], "failed");
    assert_eq!(
        delivery["attempts"], 4,
        "the first attempt and three retries"
    );
    assert_eq!(delivery["lastResponseStatus"], 500);
    assert!(delivery["lastError"].as_str().unwrap().contains("500"));
    receiver.nothing_for(Duration::from_millis(500)).await;
    // Still active: only 410 disables.
    assert!(ada.api().webhook(&webhook.id).await.unwrap().active);

    for admin in [&ada, &grace] {
        let deadline = Instant::now() + Duration::from_secs(10);
        let notice = loop {
            let list = admin.get("/api/notifications").await;
            let found = list.expect(200)["notifications"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["reason"] == "webhook_failed")
                .cloned();
            if let Some(found) = found {
                break found;
            }
            assert!(Instant::now() < deadline, "no webhook_failed notification");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(notice["reviewId"].is_null());
        assert!(notice["actor"].is_null());
        let excerpt = notice["excerpt"].as_str().unwrap();
        assert!(excerpt.contains(&webhook.id), "{excerpt}");
    }
    let bobs = bob.get("/api/notifications").await;
    assert!(
        !bobs.text.contains("webhook_failed"),
        "only admins are told"
    );

    // /metrics counts the webhook sink's four attempts, all failed.
    let metrics = server.client(Some(metrics_token)).get("/metrics").await;
    let count = |name: &str| -> u64 {
        metrics
            .text
            .lines()
            .find(|line| line.starts_with(&format!("{name}{{sink=\"webhook\"}}")))
            .and_then(|line| line.split(' ').next_back())
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no {name} for webhooks: {}", metrics.text))
    };
    assert_eq!(count("docreview_outbox_attempts_total"), 4);
    assert_eq!(count("docreview_outbox_failures_total"), 4);
}

#[tokio::test]
async fn gone_disables_the_webhook() {
    let server = server();
    let ada = admin(&server);
    let mut receiver = Receiver::start(&[(410, None)]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["review.created"]))
        .await
        .expect("create");
    ada.upload("One", HTML).await;
    receiver.next().await;
    let delivery = settled(&ada, &webhook.id).await;
    assert_eq!(delivery["status"], "failed");
    assert_eq!(delivery["attempts"], 1, "410 is not retried");
    assert_eq!(delivery["lastResponseStatus"], 410);
    assert!(!ada.api().webhook(&webhook.id).await.unwrap().active);
    // A disabled webhook gets nothing more.
    ada.upload("Two", HTML).await;
    receiver.nothing_for(Duration::from_millis(1_500)).await;
    // Turned back on, it does.
    let change = WebhookChange {
        active: Some(true),
        ..WebhookChange::default()
    };
    assert!(
        ada.api()
            .update_webhook(&webhook.id, &change)
            .await
            .unwrap()
            .active
    );
    ada.upload("Three", HTML).await;
    assert_eq!(receiver.next().await.json()["type"], "review.created");
}

#[tokio::test]
async fn rotation_signs_with_both_secrets_and_ping_and_redeliver_keep_the_id() {
    let server = server();
    let ada = admin(&server);
    let mut receiver = Receiver::start(&[]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["comment.created"]))
        .await
        .expect("create");
    let old = webhook.secret.unwrap().expose().to_string();

    let ping = ada
        .post(&format!("/api/webhooks/{}/ping", webhook.id), &json!({}))
        .await;
    let ping = ping.expect(202)["delivery"].clone();
    assert_eq!(ping["type"], "ping");
    assert_eq!(ping["status"], "pending");
    let request = receiver.next().await;
    assert_eq!(request.json()["type"], "ping");
    assert!(signed_by(&old, &request));
    assert_eq!(request.header("webhook-signature").split(' ').count(), 1);

    let rotated = ada
        .api()
        .rotate_webhook_secret(&webhook.id)
        .await
        .expect("rotate");
    let new = rotated.secret.unwrap().expose().to_string();
    assert_ne!(new, old);
    assert!(new.starts_with("whsec_"));
    ada.api().ping_webhook(&webhook.id).await.expect("ping");
    let request = receiver.next().await;
    assert_eq!(
        request.header("webhook-signature").split(' ').count(),
        2,
        "both secrets sign during the overlap"
    );
    assert!(signed_by(&old, &request));
    assert!(signed_by(&new, &request));
    let pinged_id = request.header("webhook-id").to_string();

    // Redelivery: a new delivery, the same body and webhook-id.
    let deliveries = ada
        .api()
        .webhook_deliveries(&webhook.id, &first_page())
        .await
        .expect("deliveries");
    assert_eq!(deliveries.deliveries.len(), 2);
    let latest = &deliveries.deliveries[0];
    assert_eq!(latest.event_id, pinged_id, "newest first");
    let path = format!(
        "/api/webhooks/{}/deliveries/{}/redeliver",
        webhook.id, latest.id
    );
    let again = ada.post(&path, &json!({})).await;
    let again = again.expect(202)["delivery"].clone();
    assert_ne!(again["id"], latest.id.as_str());
    assert_eq!(again["eventId"], pinged_id.as_str());
    let redelivered = receiver.next().await;
    assert_eq!(redelivered.header("webhook-id"), pinged_id);
    assert_eq!(redelivered.body, request.body);
    assert!(signed_by(&new, &redelivered));

    // Paging: one at a time, newest first, every delivery once.
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = ada
            .api()
            .webhook_deliveries(
                &webhook.id,
                &PageQuery {
                    limit: Some(1),
                    cursor: cursor.clone(),
                },
            )
            .await
            .expect("page");
        seen.extend(page.deliveries.into_iter().map(|d| d.id));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 3);
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.reverse();
    assert_eq!(seen, sorted);

    // Unknown ids are 404.
    ada.post(
        &format!("/api/webhooks/{}/deliveries/dlv_nope/redeliver", webhook.id),
        &json!({}),
    )
    .await
    .expect_error(404, "not_found");
    ada.post("/api/webhooks/wh_nope/ping", &json!({}))
        .await
        .expect_error(404, "not_found");
    ada.get("/api/webhooks/wh_nope/deliveries")
        .await
        .expect_error(404, "not_found");

    // Deleting ends deliveries and history.
    let deleted = ada.api().delete_webhook(&webhook.id).await.expect("delete");
    assert_eq!(deleted.id, webhook.id);
    ada.get(&format!("/api/webhooks/{}", webhook.id))
        .await
        .expect_error(404, "not_found");
    assert!(ada.api().webhooks().await.unwrap().webhooks.is_empty());
}

#[tokio::test]
async fn a_project_filter_limits_the_events() {
    let server = server();
    let ada = admin(&server);
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme", "company": "Acme", "status": "active" }
    ]}));
    let mut receiver = Receiver::start(&[]).await;
    let mut new = new_webhook(&receiver.url, &["review.created"]);
    new.project_code = Some("ACME".to_string());
    let webhook = ada.api().create_webhook(&new).await.expect("create");
    assert_eq!(webhook.project_code.as_deref(), Some("ACME"));
    ada.upload("Outside", HTML).await;
    let inside = ada
        .post(
            "/api/reviews",
            &json!({ "project": "ACME", "review": { "title": "Inside" } }),
        )
        .await;
    let inside = inside.expect(201)["review"]["reviewId"].clone();
    let request = receiver.next().await;
    assert_eq!(request.json()["data"]["reviewId"], inside);
    receiver.nothing_for(Duration::from_millis(700)).await;

    let mut unknown = new_webhook(&receiver.url, &["*"]);
    unknown.project_code = Some("NOPE".to_string());
    ada.post("/api/webhooks", &serde_json::to_value(&unknown).unwrap())
        .await
        .expect_error(400, "invalid_request");
}

#[tokio::test]
async fn private_addresses_and_plain_http_are_refused_without_the_setting() {
    let server = Server::start();
    let ada = admin(&server);
    for url in [
        "https://127.0.0.1/hook",
        "https://127.1.2.3:8443/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://0.0.0.0/hook",
        "https://localhost/hook",
        "http://93.184.216.34/hook",
        "ftp://93.184.216.34/hook",
        "hook",
        "",
    ] {
        let reply = ada
            .post("/api/webhooks", &json!({ "url": url, "events": ["*"] }))
            .await;
        reply.expect_error(400, "invalid_request");
    }
    // A public address written out passes the check (no name to resolve).
    let webhook = ada
        .api()
        .create_webhook(&new_webhook("https://93.184.216.34/hook", &["ping"]))
        .await
        .expect("a public address");
    // Changing it to a private one is refused too.
    let reply = ada
        .patch(
            &format!("/api/webhooks/{}", webhook.id),
            &json!({ "url": "https://10.0.0.1/" }),
        )
        .await;
    reply.expect_error(400, "invalid_request");
    assert_eq!(
        ada.api().webhook(&webhook.id).await.unwrap().url,
        "https://93.184.216.34/hook"
    );
}

#[tokio::test]
async fn only_org_admins_manage_webhooks() {
    let server = server();
    let ada = admin(&server);
    let bob = server.user("bob@example.com", "Bob", &[], "docs,access,comments,org");
    let ada_reader = ada.with_token(Some(&server.issue_token("ada@example.com", "comments")));
    let anonymous = server.client(None);
    let receiver = Receiver::start(&[]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["*"]))
        .await
        .expect("create");
    let one = format!("/api/webhooks/{}", webhook.id);
    let body = json!({ "url": receiver.url, "events": ["*"] });

    bob.get("/api/webhooks")
        .await
        .expect_error(403, "forbidden");
    bob.get(&one).await.expect_error(403, "forbidden");
    bob.post("/api/webhooks", &body)
        .await
        .expect_error(403, "forbidden");
    bob.patch(&one, &json!({ "active": false }))
        .await
        .expect_error(403, "forbidden");
    bob.delete(&one).await.expect_error(403, "forbidden");
    bob.post(&format!("{one}/ping"), &json!({}))
        .await
        .expect_error(403, "forbidden");
    bob.post(&format!("{one}/rotate-secret"), &json!({}))
        .await
        .expect_error(403, "forbidden");
    bob.get(&format!("{one}/deliveries"))
        .await
        .expect_error(403, "forbidden");

    // An admin's token without `org` reads, but does not write.
    ada_reader.get("/api/webhooks").await.expect(200);
    ada_reader.get(&one).await.expect(200);
    ada_reader
        .post("/api/webhooks", &body)
        .await
        .expect_error(403, "insufficient_scope");
    ada_reader
        .post(&format!("{one}/rotate-secret"), &json!({}))
        .await
        .expect_error(403, "insufficient_scope");
    ada_reader
        .delete(&one)
        .await
        .expect_error(403, "insufficient_scope");

    anonymous
        .get("/api/webhooks")
        .await
        .expect_error(401, "unauthorized");
    anonymous
        .post("/api/webhooks", &body)
        .await
        .expect_error(401, "unauthorized");
    server
        .agent()
        .get("/api/webhooks")
        .await
        .expect_error(403, "forbidden");

    // A browser session of an admin may, with its Origin; without, the CSRF check refuses.
    server.create_user_with_password(
        "root@example.com",
        "Root",
        &["--admin"],
        "a long enough password",
    );
    let session = server
        .sign_in("root@example.com", "a long enough password")
        .await;
    session.get("/api/webhooks").await.expect(200);
    session.post("/api/webhooks", &body).await.expect(201);
    let refused = session.without_origin().post("/api/webhooks", &body).await;
    assert_eq!(refused.status, 403, "{}", refused.text);
}

#[tokio::test]
async fn malformed_requests_answer_the_json_error_body() {
    let server = server();
    let ada = admin(&server);
    let receiver = Receiver::start(&[]).await;
    let webhook = ada
        .api()
        .create_webhook(&new_webhook(&receiver.url, &["*"]))
        .await
        .expect("create");
    let one = format!("/api/webhooks/{}", webhook.id);
    let url = receiver.url.clone();
    let long_url = format!("{url}?{}", "a".repeat(3_000));
    let bad_creates = [
        json!(null),
        json!([]),
        json!("text"),
        json!({}),
        json!({ "url": url }),
        json!({ "events": ["*"] }),
        json!({ "url": url, "events": [] }),
        json!({ "url": url, "events": "*" }),
        json!({ "url": url, "events": ["*", "ping"] }),
        json!({ "url": url, "events": ["comment.nope"] }),
        json!({ "url": url, "events": [1] }),
        json!({ "url": 5, "events": ["*"] }),
        json!({ "url": url, "events": ["*"], "extra": true }),
        json!({ "url": url, "events": ["*"], "projectCode": 7 }),
        json!({ "url": url, "events": ["*"], "description": "x".repeat(501) }),
        json!({ "url": url, "events": ["*"], "description": "nul\u{0}" }),
        json!({ "url": long_url, "events": ["*"] }),
        json!({ "url": "http://exa mple.com/", "events": ["*"] }),
        json!({ "url": "https://\u{0}/", "events": ["*"] }),
    ];
    for body in &bad_creates {
        let reply = ada.post("/api/webhooks", body).await;
        assert!(
            (400..500).contains(&reply.status),
            "{body} answered {}: {}",
            reply.status,
            reply.text
        );
        reply.expect_error(reply.status, reply.json["error"].as_str().unwrap_or("?"));
    }
    let bad_changes = [
        json!(null),
        json!({ "events": [] }),
        json!({ "events": ["nope"] }),
        json!({ "active": "yes" }),
        json!({ "url": "" }),
        json!({ "url": "not a url" }),
        json!({ "unknown": 1 }),
        json!({ "projectCode": "NOPE" }),
    ];
    for body in &bad_changes {
        let reply = ada.patch(&one, body).await;
        reply.expect_error(400, "invalid_request");
    }
    // Raw bodies that are not JSON at all.
    for (content_type, raw) in [
        ("application/json", "{"),
        ("application/json", "\u{feff}{}"),
        ("text/plain", "{}"),
    ] {
        let reply = ada
            .send(
                ada.raw("POST", "/api/webhooks")
                    .header("content-type", content_type)
                    .body(raw),
            )
            .await;
        assert!(
            (400..500).contains(&reply.status),
            "{raw}: {}",
            reply.status
        );
        assert!(reply.json["error"].is_string(), "{}", reply.text);
    }
    for query in [
        "limit=0",
        "limit=201",
        "limit=x",
        "cursor=%%%",
        "cursor=AAAA",
    ] {
        let reply = ada.get(&format!("{one}/deliveries?{query}")).await;
        assert_eq!(reply.status, 400, "{query}: {}", reply.text);
        assert_eq!(reply.json["error"], "invalid_request");
    }
    // Nothing changed on the way.
    let kept = ada.api().webhook(&webhook.id).await.expect("kept");
    assert_eq!(kept.events, ["*"]);
    assert!(kept.active);
    // Clearing the description with null works.
    let cleared = ada.patch(&one, &json!({ "description": null })).await;
    assert!(cleared.expect(200)["webhook"]["description"].is_null());
}

/// `docreview webhooks …` from the terminal: create (the secret printed once), list, show,
/// update, ping, deliveries, redeliver, rotate-secret, delete; `--json` is the API's answer.
#[tokio::test]
async fn the_command_line_manages_webhooks() {
    let server = server();
    let ada = admin(&server);
    let token = ada.token().expect("token").to_string();
    let config = tempfile::tempdir().expect("config dir");
    let mut receiver = Receiver::start(&[]).await;
    let run = |args: &[&str]| {
        let output = std::process::Command::new(crate::support::binary())
            .env("XDG_CONFIG_HOME", config.path())
            .env("DOCREVIEW_URL", &server.base)
            .env("DOCREVIEW_TOKEN", &token)
            .env("RUST_LOG", "off")
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the CLI");
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let created: Value = serde_json::from_str(&run(&[
        "webhooks",
        "create",
        &receiver.url,
        "--event",
        "comment.created",
        "--json",
    ]))
    .expect("JSON");
    let id = created["webhook"]["id"].as_str().expect("id").to_string();
    let secret = created["webhook"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    assert_eq!(created["webhook"]["events"], json!(["comment.created"]));
    let listed = run(&["webhooks"]);
    assert!(
        listed.contains(&id) && !listed.contains(&secret),
        "{listed}"
    );
    let shown = run(&["webhooks", "show", &id]);
    assert!(shown.contains(&receiver.url), "{shown}");
    let updated = run(&[
        "webhooks",
        "update",
        &id,
        "--event",
        "*",
        "--description",
        "CI",
    ]);
    assert!(updated.contains('*'), "{updated}");
    let pinged = run(&["webhooks", "ping", &id]);
    assert!(pinged.contains("ping"), "{pinged}");
    let request = receiver.next().await;
    assert!(signed_by(&secret, &request));
    settled(&ada, &id).await;
    let deliveries: Value =
        serde_json::from_str(&run(&["webhooks", "deliveries", &id, "--json"])).expect("JSON");
    let delivery = deliveries["deliveries"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(deliveries["deliveries"][0]["status"], "succeeded");
    run(&["webhooks", "redeliver", &id, &delivery]);
    assert_eq!(
        receiver.next().await.header("webhook-id"),
        request.header("webhook-id")
    );
    let rotated = run(&["webhooks", "rotate-secret", &id]);
    assert!(
        rotated.contains("whsec_") && !rotated.contains(&secret),
        "{rotated}"
    );
    let disabled = run(&["webhooks", "update", &id, "--disable"]);
    assert!(disabled.contains("disabled"), "{disabled}");
    run(&["webhooks", "delete", &id]);
    assert!(
        ada.api()
            .webhooks()
            .await
            .expect("list")
            .webhooks
            .is_empty()
    );
}
