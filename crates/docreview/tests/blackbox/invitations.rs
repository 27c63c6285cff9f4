//! Invitations and passwords (DESIGN.md §8.2), as a client and a browser would use them: who
//! may invite (org admins; a token needs `org`), every refusal, the pending list and revoking,
//! the accept page (bad password, cross-site, reuse, expiry: nothing created), the mails
//! through a real SMTP server, the enumeration-safe reset request, the reset page ending every
//! session, and an operator's `admin set-password` ending them too.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::smtp::SmtpServer;
use crate::support::{Client, Server};

const PASSWORD: &str = "a long enough password";
const WAIT: Duration = Duration::from_secs(20);

/// A browser-like HTTP client that does not follow redirects.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The path of a link (`{base}/invite/…` → `/invite/…`).
fn path_of(server: &Server, link: &str) -> String {
    link.strip_prefix(&server.base)
        .unwrap_or_else(|| panic!("{link} is not on {}", server.base))
        .to_string()
}

/// Posts a form from this site (its `Origin`, as a browser on the page sends).
async fn post_form(server: &Server, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
    browser()
        .post(format!("{}{path}", server.base))
        .header("origin", &server.base)
        .form(form)
        .send()
        .await
        .expect("post")
}

async fn get_page(server: &Server, path: &str) -> (u16, String) {
    let response = browser()
        .get(format!("{}{path}", server.base))
        .send()
        .await
        .expect("get");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// The session cookie a response sets, as a `Cookie` header value.
fn session_cookie(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("docreview_session=") && !v.starts_with("docreview_session=;"))
        .and_then(|v| v.split(';').next())
        .map(str::to_string)
}

fn with_cookie(server: &Server, cookie: &str) -> Client {
    let mut client = server.client(None);
    client.cookie = Some(cookie.to_string());
    client.origin = Some(server.base.clone());
    client
}

/// An admin with an `org` token.
fn admin(server: &Server) -> Client {
    server.user("root@example.com", "Root", &["--admin"], "org")
}

async fn invite(admin: &Client, body: &Value) -> Value {
    admin.post("/api/org/invitations", body).await.expect(201)["invitation"].clone()
}

#[tokio::test]
async fn only_admins_invite_and_every_refusal_says_why() {
    let server = Server::start();
    let admin = admin(&server);
    server.import_projects(&json!({ "projects": [
        { "code": "P1", "name": "One", "company": "ACME", "status": "active" } ] }));
    let member = server.user("bob@example.com", "Bob", &[], "org,comments");
    let admin_without_org =
        server.client(Some(&server.issue_token("root@example.com", "comments")));
    let body = json!({ "email": "new@example.com", "membership": "internal" });

    // Not an admin: 403 forbidden (the org endpoints' rule); an admin's token without `org`:
    // 403 insufficient_scope; nobody: 401.
    member
        .post("/api/org/invitations", &body)
        .await
        .expect_error(403, "forbidden");
    member
        .get("/api/org/invitations")
        .await
        .expect_error(403, "forbidden");
    admin_without_org
        .post("/api/org/invitations", &body)
        .await
        .expect_error(403, "insufficient_scope");
    server
        .client(None)
        .post("/api/org/invitations", &body)
        .await
        .expect_error(401, "unauthorized");

    // Bad requests.
    for bad in [
        json!({ "email": "not an email", "membership": "internal" }),
        json!({ "email": "new@example.com" }),
        json!({ "email": "new@example.com", "membership": "guest" }),
        json!({ "email": "new@example.com", "membership": "external", "projectCode": "P1" }),
        json!({ "email": "new@example.com", "membership": "external", "projectRole": "editor" }),
        json!({ "email": "new@example.com", "membership": "internal", "displayName": "  " }),
        json!({ "email": "new@example.com", "membership": "internal", "surprise": 1 }),
    ] {
        admin
            .post("/api/org/invitations", &bad)
            .await
            .expect_error(400, "invalid_request");
    }
    admin
        .post(
            "/api/org/invitations",
            &json!({ "email": "new@example.com", "membership": "external",
                "projectCode": "NOPE", "projectRole": "editor" }),
        )
        .await
        .expect_error(404, "project_not_found");
    // An email with an account: 409 already_exists, whatever its case.
    let taken = admin
        .post(
            "/api/org/invitations",
            &json!({ "email": "Bob@Example.com", "membership": "internal" }),
        )
        .await;
    assert!(
        taken.expect_error(409, "already_exists")["message"]
            .as_str()
            .is_some_and(|m| m.contains("bob@example.com"))
    );

    // Made: the shape, the link (shown once), the list without links, revoking once.
    let made = invite(
        &admin,
        &json!({ "email": "Dana@Example.com", "displayName": "Dana", "membership": "external",
            "projectCode": "P1", "projectRole": "editor" }),
    )
    .await;
    assert_eq!(made["email"], "dana@example.com");
    assert_eq!(made["membership"], "external");
    assert_eq!(made["projectCode"], "P1");
    assert_eq!(made["projectRole"], "editor");
    let id = made["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("inv_"));
    let link = made["acceptUrl"].as_str().expect("acceptUrl");
    assert!(
        link.starts_with(&format!("{}/invite/", server.base)),
        "{link}"
    );
    let created = made["createdAt"].as_str().expect("createdAt");
    let expires = made["expiresAt"].as_str().expect("expiresAt");
    let days = chrono_days(created, expires);
    assert_eq!(days, 7, "{created} → {expires}");

    let listed = admin.get("/api/org/invitations").await;
    let listed = listed.expect(200)["invitations"]
        .as_array()
        .expect("list")
        .clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert!(
        listed[0].get("acceptUrl").is_none(),
        "links are never listed"
    );
    // The same through the typed client.
    assert_eq!(admin.api().invitations().await.expect("list")[0].id, id);

    member
        .delete(&format!("/api/org/invitations/{id}"))
        .await
        .expect_error(403, "forbidden");
    admin_without_org
        .delete(&format!("/api/org/invitations/{id}"))
        .await
        .expect_error(403, "insufficient_scope");
    let revoked = admin.delete(&format!("/api/org/invitations/{id}")).await;
    assert_eq!(revoked.status, 204, "{}", revoked.text);
    admin
        .delete(&format!("/api/org/invitations/{id}"))
        .await
        .expect_error(404, "not_found");
    admin
        .delete("/api/org/invitations/inv_unknown")
        .await
        .expect_error(404, "not_found");
    assert!(admin.api().invitations().await.expect("list").is_empty());
    // A revoked link's page says so, and accepting it creates nothing.
    let path = path_of(&server, link);
    let (status, page) = get_page(&server, &path).await;
    assert_eq!(status, 404);
    assert!(page.contains("cannot be used"), "{page}");
    let refused = post_form(&server, &path, &[("name", "Dana"), ("password", PASSWORD)]).await;
    assert_eq!(refused.status().as_u16(), 404);
    assert!(session_cookie(&refused).is_none());
    admin.get("/api/org/members?limit=200").await.expect(200)["members"]
        .as_array()
        .expect("members")
        .iter()
        .for_each(|m| assert_ne!(m["email"], "dana@example.com"));
}

/// Days between two RFC 3339 times (whole days, as the invitation's lifetime is).
fn chrono_days(from: &str, to: &str) -> i64 {
    let parse =
        |text: &str| time_millis(text).unwrap_or_else(|| panic!("not an RFC 3339 time: {text}"));
    (parse(to) - parse(from)) / 86_400_000
}

/// Milliseconds of an RFC 3339 UTC time `YYYY-MM-DDTHH:MM:SS(.fff)Z`.
fn time_millis(text: &str) -> Option<i64> {
    let (date, time) = text.trim_end_matches('Z').split_once('T')?;
    let mut date = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (date.next()??, date.next()??, date.next()??);
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut clock = clock.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (clock.next()??, clock.next()??, clock.next()??);
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hh) * 60 + mm) * 60_000 + ss * 1000 + millis)
}

#[tokio::test]
async fn accepting_an_invitation_creates_the_member_once_and_signs_them_in() {
    let server = Server::start();
    let admin = admin(&server);
    server.import_projects(&json!({ "projects": [
        { "code": "P1", "name": "One", "company": "ACME", "status": "active" } ] }));
    let made = invite(
        &admin,
        &json!({ "email": "dana@example.com", "displayName": "Dana D", "membership": "external",
            "projectCode": "P1", "projectRole": "editor" }),
    )
    .await;
    let path = path_of(&server, made["acceptUrl"].as_str().expect("acceptUrl"));

    let (status, page) = get_page(&server, &path).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("dana@example.com") && page.contains("Root"),
        "{page}"
    );
    assert!(
        page.contains("value=\"Dana D\""),
        "the suggested name is offered"
    );

    // A short password: the form again, saying why; nothing created.
    let short = post_form(
        &server,
        &path,
        &[("name", "Dana"), ("password", "too short")],
    )
    .await;
    assert_eq!(short.status().as_u16(), 400);
    assert!(session_cookie(&short).is_none());
    assert!(
        short
            .text()
            .await
            .expect("body")
            .contains("at least 10 characters")
    );
    // No name: refused the same way.
    let nameless = post_form(&server, &path, &[("name", " "), ("password", PASSWORD)]).await;
    assert_eq!(nameless.status().as_u16(), 400);
    // From another site: refused.
    let cross = browser()
        .post(format!("{}{path}", server.base))
        .header("origin", "https://evil.example")
        .form(&[("name", "Dana"), ("password", PASSWORD)])
        .send()
        .await
        .expect("post");
    assert_eq!(cross.status().as_u16(), 403);
    assert_eq!(admin.api().invitations().await.expect("list").len(), 1);

    // Accepted: signed in, on the documents page, with the invited membership and role.
    let accepted = post_form(
        &server,
        &path,
        &[("name", "Dana Doe"), ("password", PASSWORD)],
    )
    .await;
    assert_eq!(accepted.status().as_u16(), 303);
    assert_eq!(
        accepted
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok()),
        Some("/")
    );
    let cookie = session_cookie(&accepted).expect("a session cookie");
    let dana = with_cookie(&server, &cookie);
    let me = dana.get("/api/me").await;
    let me = me.expect(200);
    assert_eq!(me["user"]["email"], "dana@example.com");
    assert_eq!(me["user"]["displayName"], "Dana Doe");
    assert_eq!(me["user"]["membership"], "external");
    assert_eq!(me["user"]["handle"], "dana");
    let roles = admin.get("/api/projects/P1/roles").await;
    assert!(
        roles.text.contains("dana@example.com") && roles.text.contains("editor"),
        "{}",
        roles.text
    );
    // The password works for signing in.
    server
        .sign_in("dana@example.com", PASSWORD)
        .await
        .get("/api/me")
        .await
        .expect(200);

    // Single use: the page and the form refuse a used link; it is no longer pending.
    let (status, _) = get_page(&server, &path).await;
    assert_eq!(status, 404);
    let again = post_form(&server, &path, &[("name", "Eve"), ("password", PASSWORD)]).await;
    assert_eq!(again.status().as_u16(), 404);
    assert!(session_cookie(&again).is_none());
    assert!(admin.api().invitations().await.expect("list").is_empty());
    // An unknown link: the same friendly page.
    let (status, page) = get_page(&server, "/invite/nosuchsecret").await;
    assert_eq!(status, 404);
    assert!(page.contains("cannot be used"));
    // And now the email has an account: inviting it again is 409.
    admin
        .post(
            "/api/org/invitations",
            &json!({ "email": "dana@example.com", "membership": "internal" }),
        )
        .await
        .expect_error(409, "already_exists");
}

/// An invitation made eight days ago (by a node whose clock is that far back) has expired.
#[tokio::test]
async fn an_expired_invitation_cannot_be_accepted() {
    let server = Server::start();
    let admin = admin(&server);
    let past = Server::start_on(
        std::sync::Arc::clone(server.storage()),
        &[("DOCREVIEW_CLOCK_OFFSET_SECS", &(-8 * 86_400).to_string())],
    );
    let old = past
        .client(admin.token())
        .post(
            "/api/org/invitations",
            &json!({ "email": "late@example.com", "membership": "internal" }),
        )
        .await;
    let link = old.expect(201)["invitation"]["acceptUrl"]
        .as_str()
        .expect("acceptUrl")
        .replace(&past.base, &server.base);
    drop(past);
    let path = path_of(&server, &link);
    assert!(admin.api().invitations().await.expect("list").is_empty());
    let (status, _) = get_page(&server, &path).await;
    assert_eq!(status, 404);
    let refused = post_form(&server, &path, &[("name", "Late"), ("password", PASSWORD)]).await;
    assert_eq!(refused.status().as_u16(), 404);
    assert!(session_cookie(&refused).is_none());
}

#[tokio::test]
async fn a_reset_request_tells_nothing_and_without_mail_sends_nothing() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let anonymous = server.client(None);
    for email in ["ada@example.com", "nobody@example.com"] {
        let reply = anonymous
            .post("/api/auth/password-reset", &json!({ "email": email }))
            .await;
        assert_eq!(reply.status, 202, "{email}: {}", reply.text);
        assert!(reply.text.is_empty());
    }
    // Not an address at all: refused, which tells nothing about who has an account.
    for email in ["not an email", ""] {
        anonymous
            .post("/api/auth/password-reset", &json!({ "email": email }))
            .await
            .expect_error(400, "invalid_request");
    }
    anonymous
        .post("/api/auth/password-reset", &json!({}))
        .await
        .expect_error(400, "invalid_request");
    anonymous
        .send(
            anonymous
                .raw("POST", "/api/auth/password-reset")
                .header("content-type", "application/json")
                .body("{"),
        )
        .await
        .expect_error(400, "invalid_request");
    anonymous
        .api()
        .request_password_reset("ada@example.com")
        .await
        .expect("202");
    // Five requests an hour per email, known or not; then 429 alike (nothing told).
    for email in ["ada@example.com", "nobody@example.com"] {
        for _ in 0..5 {
            let _ = anonymous
                .post("/api/auth/password-reset", &json!({ "email": email }))
                .await;
        }
        anonymous
            .post("/api/auth/password-reset", &json!({ "email": email }))
            .await
            .expect_error(429, "rate_limited");
    }
    // The sign-in page links to the form, which answers the same whatever the email.
    let (_, login) = get_page(&server, "/login").await;
    assert!(login.contains("href=\"/forgot-password\""));
    for email in ["cy@example.com", "nobody2@example.com"] {
        let sent = post_form(&server, "/forgot-password", &[("email", email)]).await;
        assert_eq!(sent.status().as_u16(), 200);
        assert!(
            sent.text()
                .await
                .expect("body")
                .contains("If an account with that email")
        );
    }
    // A typo is said beside the field, which keeps what was typed.
    let refused = post_form(&server, "/forgot-password", &[("email", "cy at example")]).await;
    assert_eq!(refused.status().as_u16(), 400);
    let page = refused.text().await.expect("body");
    assert!(page.contains("role=\"alert\""), "{page}");
    assert!(page.contains("value=\"cy at example\""), "{page}");
}

/// The mails go through a real SMTP server: an invitation's link, and a reset link that works
/// once, ends every session, and never goes to an unknown email.
#[tokio::test]
async fn invitations_and_resets_are_mailed_and_a_reset_ends_every_session() {
    let Some(smtp) = SmtpServer::start() else {
        return;
    };
    let env = smtp.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let server = Server::start_with(&env);
    let admin = admin(&server);

    let made = invite(
        &admin,
        &json!({ "email": "dana@example.com", "membership": "internal" }),
    )
    .await;
    let link = made["acceptUrl"].as_str().expect("acceptUrl");
    let mails = smtp.wait_for("dana@example.com", 1, WAIT).await;
    let text = mails[0]["text"].as_str().expect("text part");
    let html = mails[0]["html"].as_str().expect("html part");
    assert!(text.contains(link) && html.contains(link), "{text}");
    assert!(
        mails[0]["headers"]["Subject"]
            .as_str()
            .is_some_and(|s| s.contains("Root")),
        "{:#}",
        mails[0]
    );
    assert!(
        mails[0]["headers"].get("List-Unsubscribe").is_none(),
        "not a notification"
    );

    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let first = server.sign_in("ada@example.com", PASSWORD).await;
    let second = server.sign_in("ada@example.com", PASSWORD).await;
    first.get("/api/me").await.expect(200);
    let anonymous = server.client(None);
    let unknown = anonymous
        .post(
            "/api/auth/password-reset",
            &json!({ "email": "ghost@example.com" }),
        )
        .await;
    assert_eq!(unknown.status, 202);
    let known = anonymous
        .post(
            "/api/auth/password-reset",
            &json!({ "email": "ADA@example.com" }),
        )
        .await;
    assert_eq!(known.status, 202);
    assert_eq!(known.text, unknown.text, "the same answer either way");
    let mails = smtp.wait_for("ada@example.com", 1, WAIT).await;
    let text = mails[0]["text"].as_str().expect("text part");
    let prefix = format!("{}/reset/", server.base);
    let start = text.find(&prefix).expect("a reset link");
    let reset_link: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    let path = path_of(&server, &reset_link);
    assert!(smtp.messages_to("ghost@example.com").is_empty());

    let (status, page) = get_page(&server, &path).await;
    assert_eq!(status, 200);
    assert!(page.contains("ada@example.com"));
    let short = post_form(&server, &path, &[("password", "short")]).await;
    assert_eq!(short.status().as_u16(), 400);
    first.get("/api/me").await.expect(200);
    let done = post_form(&server, &path, &[("password", "a brand new password")]).await;
    assert_eq!(done.status().as_u16(), 200);
    // Every session ended; the old password no longer works, the new one does.
    first.get("/api/me").await.expect(401);
    second.get("/api/me").await.expect(401);
    let old = post_form(
        &server,
        "/login",
        &[
            ("email", "ada@example.com"),
            ("password", PASSWORD),
            ("next", "/"),
        ],
    )
    .await;
    assert_eq!(old.status().as_u16(), 401);
    server
        .sign_in("ada@example.com", "a brand new password")
        .await
        .get("/api/me")
        .await
        .expect(200);
    // Single use.
    let (status, _) = get_page(&server, &path).await;
    assert_eq!(status, 404);
    let again = post_form(&server, &path, &[("password", "yet another password")]).await;
    assert_eq!(again.status().as_u16(), 404);
}

/// An operator's `admin set-password` ends the member's open sessions, as a reset does
/// (issue 21).
#[tokio::test]
async fn admin_set_password_ends_the_members_sessions() {
    let server = Server::start();
    server.create_user_with_password("eve@example.com", "Eve", &[], PASSWORD);
    let session = server.sign_in("eve@example.com", PASSWORD).await;
    session.get("/api/me").await.expect(200);
    let set = server.admin_with_input(
        &[
            "set-password",
            "--email",
            "eve@example.com",
            "--password-stdin",
        ],
        "another long password\n",
    );
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    session.get("/api/me").await.expect(401);
}

/// Changing one's password needs the current one (a clear 403) and a cookie session.
#[tokio::test]
async fn changing_a_password_needs_the_current_one() {
    let server = Server::start();
    server.create_user_with_password("eve@example.com", "Eve", &[], PASSWORD);
    let session = server.sign_in("eve@example.com", PASSWORD).await;
    let csrf_free = session
        .put(
            "/api/me/password",
            &json!({ "currentPassword": "wrong password!", "newPassword": "another long password" }),
        )
        .await;
    csrf_free.expect_error(403, "forbidden");
    session
        .put(
            "/api/me/password",
            &json!({ "currentPassword": PASSWORD, "newPassword": "short" }),
        )
        .await
        .expect_error(400, "invalid_request");
    let token = server.client(Some(&server.issue_token("eve@example.com", "comments")));
    token
        .put(
            "/api/me/password",
            &json!({ "currentPassword": PASSWORD, "newPassword": "another long password" }),
        )
        .await
        .expect_error(403, "forbidden");
}
