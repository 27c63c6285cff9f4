//! Mail (DESIGN.md §8.1) through a real SMTP server process (aiosmtpd, `support::smtp`): the
//! instant mail of a mention with its thread link and one-click `List-Unsubscribe`, the
//! unsubscribe itself (RFC 8058 POST, and the page a browser sees), `off` and `daily` people
//! getting no instant mail, the daily digest, a mail server that is down and comes back, the
//! settings, and every refusal.
//!
//! A mail is a row the outbox delivers after the change commits, so a test waits for it (up to
//! a deadline). To show that someone got *no* mail, a witness is mentioned in the same comment:
//! the mails of one event are written together and sent in order, so once the witness's mail
//! is in, any other mail of that comment would be too.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::smtp::SmtpServer;
use crate::support::{Client, SAMPLE_HTML, Server, Storage};

const PASSAGE: &str = "The quick brown fox jumps over the lazy dog";
const WAIT: Duration = Duration::from_secs(20);

/// A server mailing through `smtp`, with Ada (who writes), Bob and Cy, and a document of
/// Ada's shared with both.
struct Mailroom {
    smtp: SmtpServer,
    server: Server,
    ada: Client,
    bob: Client,
    cy: Client,
    dan: Client,
    review: String,
}

fn env_of(smtp: &SmtpServer, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = smtp.env();
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

fn start_on(storage: std::sync::Arc<Storage>, env: &[(String, String)]) -> Server {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Server::start_on(storage, &env)
}

impl Mailroom {
    async fn new(extra: &[(&str, &str)]) -> Option<Mailroom> {
        let smtp = SmtpServer::start()?;
        let server = start_on(Storage::fresh(), &env_of(&smtp, extra));
        let scopes = "docs,comments,access";
        let ada = server.user("ada@example.com", "Ada Lovelace", &[], scopes);
        let bob = server.user("bob@example.com", "Bob", &[], scopes);
        let cy = server.user("cy@example.com", "Cy", &[], scopes);
        let dan = server.user("dan@example.com", "Dan", &[], scopes);
        let created = ada
            .post(
                "/api/reviews",
                &json!({ "review": { "title": "Budget 2027", "source": { "html": SAMPLE_HTML },
                    "access": { "mode": "restricted", "allowedUsers": [
                        { "email": "bob@example.com", "role": "viewer" },
                        { "email": "cy@example.com", "role": "viewer" },
                        { "email": "dan@example.com", "role": "viewer" } ] } } }),
            )
            .await;
        let review = created.expect(201)["review"]["reviewId"]
            .as_str()
            .expect("reviewId")
            .to_string();
        Some(Mailroom {
            smtp,
            server,
            ada,
            bob,
            cy,
            dan,
            review,
        })
    }

    /// Ada's comment on the document; answers its id.
    async fn comment(&self, body: &str) -> String {
        let written = self
            .ada
            .post(
                &format!("/api/reviews/{}/comments", self.review),
                &json!({ "body": body, "locator": { "quote": { "exact": PASSAGE } } }),
            )
            .await;
        written.expect(201)["comment"]["id"]
            .as_str()
            .expect("id")
            .to_string()
    }
}

async fn set_email(client: &Client, frequency: &str) {
    let answer = client
        .patch(
            "/api/me/notification-settings",
            &json!({ "email": frequency }),
        )
        .await;
    assert_eq!(answer.expect(200)["email"], frequency);
}

fn header<'a>(mail: &'a Value, name: &str) -> &'a str {
    mail["headers"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no {name} header in {mail:#}"))
}

/// The URL between the angle brackets of `List-Unsubscribe`.
fn unsubscribe_url(mail: &Value) -> String {
    header(mail, "List-Unsubscribe")
        .trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string()
}

/// A POST as a mail client sends it for RFC 8058: no cookie, no CSRF token, the one field.
async fn one_click(url: &str) -> (u16, String) {
    let answer = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .expect("unsubscribe");
    let status = answer.status().as_u16();
    (status, answer.text().await.expect("body"))
}

/// A GET as a browser (or a mail scanner) opening the link makes.
async fn open(url: &str) -> (u16, String) {
    let answer = reqwest::Client::new()
        .get(url)
        .send()
        .await
        .expect("open the link");
    let status = answer.status().as_u16();
    (status, answer.text().await.expect("body"))
}

#[tokio::test]
async fn a_mention_is_mailed_at_once_with_its_thread_link_and_one_click_unsubscribe() {
    let Some(room) = Mailroom::new(&[]).await else {
        return;
    };
    let comment_id = room.comment("@bob could you check the totals?").await;
    let mails = room.smtp.wait_for("bob@example.com", 1, WAIT).await;
    let mail = &mails[0];
    let link = format!(
        "{}/reviews/{}#thread-{comment_id}",
        room.server.base, room.review
    );
    assert_eq!(mail["mailFrom"], "docreview@example.com");
    assert_eq!(header(mail, "To"), "bob@example.com");
    assert!(header(mail, "From").contains("docreview@example.com"));
    assert_eq!(
        header(mail, "Subject"),
        "Ada Lovelace mentioned you on “Budget 2027”"
    );
    let text = mail["text"].as_str().expect("a plain-text part");
    let html = mail["html"].as_str().expect("an HTML part");
    assert!(text.contains(&link), "{text}");
    assert!(text.contains("@bob could you check the totals?"), "{text}");
    assert!(html.contains(&format!("href=\"{link}\"")), "{html}");
    // RFC 8058: a signed HTTPS-or-HTTP link and the one-click POST header.
    assert_eq!(
        header(mail, "List-Unsubscribe-Post"),
        "List-Unsubscribe=One-Click"
    );
    let unsubscribe = unsubscribe_url(mail);
    assert!(
        unsubscribe.starts_with(&format!("{}/unsubscribe/", room.server.base)),
        "{unsubscribe}"
    );
    assert!(text.contains(&unsubscribe) && html.contains(&unsubscribe));
    // Never to the actor.
    assert!(room.smtp.messages_to("ada@example.com").is_empty());

    // Opening the link only shows what it would do.
    let (status, page) = open(&unsubscribe).await;
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("bob@example.com"), "{page}");
    let settings = room.bob.get("/api/me/notification-settings").await;
    assert_eq!(
        settings.expect(200),
        &json!({ "email": "instant", "mailEnabled": true })
    );

    // The one-click POST turns Bob's mail off; it may be repeated.
    let (status, body) = one_click(&unsubscribe).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("no more notification mail"), "{body}");
    assert_eq!(one_click(&unsubscribe).await.0, 200);
    let settings = room.bob.get("/api/me/notification-settings").await;
    assert_eq!(settings.expect(200)["email"], "off");

    // Bob is still notified in the app, but mailed no more (Cy, mentioned with him, is).
    room.comment("@bob @cy once more").await;
    room.smtp.wait_for("cy@example.com", 1, WAIT).await;
    assert_eq!(room.smtp.messages_to("bob@example.com").len(), 1);
    let listed = room.bob.get("/api/notifications").await;
    assert_eq!(listed.expect(200)["unreadCount"], 2);
}

#[tokio::test]
async fn unsubscribe_links_that_this_server_did_not_sign_are_refused() {
    let Some(room) = Mailroom::new(&[]).await else {
        return;
    };
    room.comment("@bob a note").await;
    let mail = &room.smtp.wait_for("bob@example.com", 1, WAIT).await[0];
    let genuine = unsubscribe_url(mail);
    let token = genuine.rsplit('/').next().expect("token").to_string();
    let cy_id = room.cy.api().me().await.expect("me").user.id;
    let (_, signature) = token.rsplit_once('.').expect("signed");
    let forged_for_cy = format!("{cy_id}.{signature}");
    let long = "x".repeat(5000);
    for bad in [
        forged_for_cy.as_str(),
        "nonsense",
        "usr_1.",
        ".",
        "usr_1.%00",
        "usr_1.!!!",
        long.as_str(),
    ] {
        let url = format!("{}/unsubscribe/{bad}", room.server.base);
        let (status, _) = open(&url).await;
        assert!(
            status == 404 || status == 400 || status == 414,
            "GET {bad}: {status}"
        );
        let (status, _) = one_click(&url).await;
        assert!(
            status == 404 || status == 400 || status == 414,
            "POST {bad}: {status}"
        );
    }
    // Nobody's setting moved.
    for client in [&room.bob, &room.cy] {
        let settings = client.get("/api/me/notification-settings").await;
        assert_eq!(settings.expect(200)["email"], "instant");
    }
}

#[tokio::test]
async fn people_set_to_off_or_daily_get_no_instant_mail_and_daily_ones_get_a_digest() {
    let Some(room) = Mailroom::new(&[("DOCREVIEW_DIGEST_HOUR", "0")]).await else {
        return;
    };
    set_email(&room.bob, "off").await;
    set_email(&room.cy, "daily").await;
    let comment_id = room.comment("@bob @cy @dan the totals are off").await;
    // Dan (instant) is the witness: the comment's mails are all out once his is.
    let dan_mails = room.smtp.wait_for("dan@example.com", 1, WAIT).await;
    assert_eq!(dan_mails.len(), 1);
    assert!(room.smtp.messages_to("bob@example.com").is_empty());
    assert!(room.smtp.messages_to("cy@example.com").is_empty());
    let dan_settings = room.dan.get("/api/me/notification-settings").await;
    assert_eq!(dan_settings.expect(200)["email"], "instant");

    // A day later (the server's clock moved on), past the digest hour: Cy gets one digest of
    // what is unread; Bob (off) gets nothing. Two nodes schedule it; one digest is sent.
    let storage = std::sync::Arc::clone(room.server.storage());
    let env = env_of(
        &room.smtp,
        &[
            ("DOCREVIEW_DIGEST_HOUR", "0"),
            ("DOCREVIEW_CLOCK_OFFSET_SECS", "86400"),
        ],
    );
    let Mailroom {
        smtp,
        server,
        review,
        ..
    } = room;
    drop(server);
    let later = start_on(storage, &env);
    let second = later.start_second_node();
    let digests = smtp.wait_for("cy@example.com", 1, WAIT).await;
    let digest = &digests[0];
    assert_eq!(
        header(digest, "Subject"),
        "docreview: 1 unread notification"
    );
    let text = digest["text"].as_str().expect("text");
    assert!(
        text.contains(&format!("/reviews/{review}#thread-{comment_id}")),
        "{text}"
    );
    assert!(text.contains("the totals are off"), "{text}");
    assert!(
        digest["html"]
            .as_str()
            .expect("html")
            .contains("the totals are off")
    );
    assert_eq!(
        header(digest, "List-Unsubscribe-Post"),
        "List-Unsubscribe=One-Click"
    );
    assert!(smtp.messages_to("bob@example.com").is_empty());
    // Nothing says "no second digest" but time: both nodes scheduled theirs at start, and the
    // mail workers poll every half second; three polls later there is still one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(smtp.messages_to("cy@example.com").len(), 1);
    drop(second);
}

#[tokio::test]
async fn a_mail_server_that_is_down_gets_the_mail_once_it_is_back() {
    let Some(mut room) = Mailroom::new(&[]).await else {
        return;
    };
    room.smtp.stop();
    room.comment("@bob while the mail server is down").await;
    // The notification (and the mail's row) are written; the first attempt fails.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let listed = room.bob.get("/api/notifications").await;
        if listed.expect(200)["unreadCount"] == 1 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never notified");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    room.smtp.resume();
    let mails = room
        .smtp
        .wait_for("bob@example.com", 1, Duration::from_secs(30))
        .await;
    assert!(
        mails[0]["text"]
            .as_str()
            .expect("text")
            .contains("while the mail server is down")
    );
}

#[tokio::test]
async fn without_mail_settings_nothing_is_mailed_and_the_settings_say_so() {
    let Some(smtp) = SmtpServer::start() else {
        return;
    };
    // Only the SMTP server runs; the docreview server is not told about it.
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments,access");
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let review = ada.upload("Doc", SAMPLE_HTML).await.review_id;
    ada.post(
        &format!("/api/reviews/{review}/comments"),
        &json!({ "body": "@bob hello" }),
    )
    .await
    .expect(201);
    let settings = bob.get("/api/me/notification-settings").await;
    assert_eq!(settings.expect(200)["mailEnabled"], false);
    assert!(smtp.messages().is_empty());
}

#[tokio::test]
async fn half_a_mail_configuration_or_a_bad_one_stops_the_server_at_start() {
    let storage = Storage::fresh();
    for (env, says) in [
        (
            vec![("DOCREVIEW_SMTP_URL", "smtp://127.0.0.1:2525")],
            "DOCREVIEW_MAIL_FROM",
        ),
        (
            vec![("DOCREVIEW_MAIL_FROM", "docreview@example.com")],
            "DOCREVIEW_SMTP_URL",
        ),
        (
            vec![
                ("DOCREVIEW_SMTP_URL", "http://127.0.0.1:2525"),
                ("DOCREVIEW_MAIL_FROM", "docreview@example.com"),
            ],
            "scheme",
        ),
        (
            vec![
                ("DOCREVIEW_SMTP_URL", "smtp://127.0.0.1:2525"),
                ("DOCREVIEW_MAIL_FROM", "not an address"),
            ],
            "DOCREVIEW_MAIL_FROM",
        ),
        (
            vec![
                ("DOCREVIEW_SMTP_URL", "smtp://127.0.0.1:2525"),
                ("DOCREVIEW_MAIL_FROM", "docreview@example.com"),
                ("DOCREVIEW_DIGEST_HOUR", "24"),
            ],
            "DIGEST_HOUR",
        ),
    ] {
        let output = storage
            .command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run serve");
        assert!(!output.status.success(), "{env:?} started");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{env:?}: {stderr}");
    }
}
