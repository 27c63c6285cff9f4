//! The caller's own account, personal tokens, browser sign-in and the command-line login.
//!
//! Bearer-token requests go through the typed client. Raw requests remain for browser sign-in
//! (cookies, CSRF, the login and approval pages), response headers (`x-cr-token-expires-at`,
//! `WWW-Authenticate`, `Retry-After`), the exact bytes of the token listing, rate limits, and
//! malformed bodies.

use crate::support;

use crate::support::{Client, Server, refused, rfc3339_ms};
use base64::Engine;
use docreview_client::Error;
use docreview_client::api::{
    CodeExchange, ListQuery, MemberChange, MemberStatus, Membership, PageQuery, Provider, Scope,
};
use serde_json::json;
use sha2::{Digest, Sha256};

const PASSWORD: &str = "a long enough password";

#[tokio::test]
async fn me_shows_the_user_and_the_token_in_use() {
    let server = Server::start();
    let ada = server.user("Ada@Example.com", "Ada Lovelace", &[], "docs,comments");
    let me = ada.api().me().await.expect("me");
    assert_eq!(me.user.email, "ada@example.com");
    assert_eq!(me.user.display_name, "Ada Lovelace");
    assert_eq!(me.user.provider, Provider::Local);
    assert_eq!(me.user.membership, Membership::Internal);
    assert!(me.user.id.starts_with("usr_"), "{}", me.user.id);
    let token = me.token.expect("the token in use");
    assert!(token.id.starts_with("tok_"), "{}", token.id);
    assert_eq!(token.scopes, [Scope::Docs, Scope::Comments]);
    let expires = token.expires_at.as_str();
    // The header is the point (raw).
    let reply = ada.get("/api/me").await;
    reply.expect(200);
    assert_eq!(reply.header("x-cr-token-expires-at"), Some(expires));
    let ninety_days = 90 * 24 * 3600 * 1000;
    assert!((rfc3339_ms(expires) - support::now_ms() - ninety_days).abs() < 60_000);
}

#[tokio::test]
async fn tokens_are_listed_without_values_and_revoked_at_once() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let first = server.issue_token("ada@example.com", "docs");
    let second = server.issue_token("ada@example.com", "");
    let ada = server.client(Some(&first));
    // The answer's bytes and which fields it spells out are the point (raw).
    let list = ada.get("/api/me/tokens").await;
    let raw_tokens = list.expect(200)["tokens"]
        .as_array()
        .expect("tokens")
        .clone();
    assert_eq!(raw_tokens.len(), 2);
    assert!(
        !list.text.contains("drp_"),
        "a token value leaked: {}",
        list.text
    );
    for token in &raw_tokens {
        for field in [
            "id",
            "name",
            "scopes",
            "createdAt",
            "expiresAt",
            "lastUsedAt",
        ] {
            assert!(token.get(field).is_some(), "{field} missing in {token}");
        }
    }
    let tokens = ada
        .api()
        .my_tokens(&PageQuery::default())
        .await
        .expect("tokens")
        .tokens;
    assert_eq!(tokens.len(), 2);
    // Newest first; the default scope is `comments` only.
    assert_eq!(tokens[0].scopes, [Scope::Comments]);
    assert_eq!(tokens[1].scopes, [Scope::Docs]);
    assert!(
        tokens[1].last_used_at.is_some(),
        "the listing used the first token"
    );

    let second_id = tokens[0].id.clone();
    let holder = server.client(Some(&second));
    holder.api().me().await.expect("me");
    let revoked = ada.api().revoke_my_token(&second_id).await.expect("revoke");
    assert_eq!(revoked.id, second_id);
    assert!(revoked.revoked_at.is_some());
    refused(holder.api().me().await, 401, "unauthorized");
    let left = ada
        .api()
        .my_tokens(&PageQuery::default())
        .await
        .expect("tokens");
    assert_eq!(left.tokens.len(), 1);
    refused(
        ada.api().revoke_my_token(&second_id).await,
        404,
        "not_found",
    );

    // Someone else's token id is not yours to revoke.
    let grace = server.user("grace@example.com", "Grace", &[], "");
    let graces = grace.api().me().await.expect("me").token.expect("token").id;
    refused(ada.api().revoke_my_token(&graces).await, 404, "not_found");
    grace.api().me().await.expect("me");
}

#[tokio::test]
async fn tokens_list_pages_with_a_cursor() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let mut values = Vec::new();
    for _ in 0..3 {
        values.push(server.issue_token("ada@example.com", "comments"));
    }
    let ada = server.client(Some(&values[0]));
    let page = |limit: Option<usize>, cursor: Option<&str>| PageQuery {
        limit,
        cursor: cursor.map(str::to_string),
    };
    let first = ada
        .api()
        .my_tokens(&page(Some(2), None))
        .await
        .expect("first page");
    let next = first.next_cursor.clone().expect("a next page");
    assert_eq!(first.tokens.len(), 2);
    let second = ada
        .api()
        .my_tokens(&page(Some(2), Some(&next)))
        .await
        .expect("second page");
    assert_eq!(second.tokens.len(), 1);
    assert!(second.next_cursor.is_none());
    refused(
        ada.api().my_tokens(&page(Some(0), None)).await,
        400,
        "invalid_request",
    );
    refused(
        ada.api().my_tokens(&page(None, Some("bogus!"))).await,
        400,
        "invalid_request",
    );
}

#[tokio::test]
async fn expired_tokens_are_refused() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.expired_token("ada@example.com", "comments");
    let expired = server.client(Some(&token));
    refused(expired.api().me().await, 401, "unauthorized");
    refused(
        expired.api().list_reviews(&ListQuery::default()).await,
        401,
        "unauthorized",
    );
}

#[tokio::test]
async fn browser_sign_in_gives_a_revocable_http_only_session() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let login = |password: &'static str| {
        raw.post(format!("{}/login", server.base))
            .header("origin", &server.base)
            .form(&[
                ("email", "ada@example.com"),
                ("password", password),
                ("next", "/cli-login?x=1"),
            ])
            .send()
    };
    let refused = login("wrong password").await.expect("post");
    assert_eq!(refused.status().as_u16(), 401);
    assert!(refused.headers().get("set-cookie").is_none());
    let accepted = login(PASSWORD).await.expect("post");
    assert_eq!(accepted.status().as_u16(), 303);
    assert_eq!(accepted.headers()["location"], "/cli-login?x=1");
    let cookie = accepted.headers()["set-cookie"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(cookie.starts_with("docreview_session=drs_"));
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{attribute} missing: {cookie}");
    }

    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let me = session.get("/api/me").await;
    assert_eq!(me.expect(200)["user"]["email"], "ada@example.com");
    assert!(me.json.get("token").is_none(), "no token is in use");
    assert!(me.header("x-cr-token-expires-at").is_none());

    // Signing out ends that session at once.
    let logout = raw
        .post(format!("{}/logout", server.base))
        .header("origin", &server.base)
        .header("cookie", session.cookie.as_deref().expect("cookie"))
        .send()
        .await
        .expect("logout");
    assert_eq!(logout.status().as_u16(), 303);
    session
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
}

#[tokio::test]
async fn a_sign_in_posted_from_another_site_is_refused() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let response = reqwest::Client::new()
        .post(format!("{}/login", server.base))
        .header("origin", "https://evil.example")
        .form(&[("email", "ada@example.com"), ("password", PASSWORD)])
        .send()
        .await
        .expect("post");
    assert_eq!(response.status().as_u16(), 403);
    assert!(response.headers().get("set-cookie").is_none());
}

#[tokio::test]
async fn cookie_writes_need_a_same_origin_request_or_the_csrf_token() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let owner = server.user("owner@example.com", "Owner", &[], "docs,comments");
    let review = owner.upload("Plan", "<p>Ship it on Monday.</p>").await;
    let id = review.review_id.as_str();
    // The rest is the browser session's (raw: the typed client sends no cookie).
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let path = format!("/api/reviews/{id}/comments");
    let body = json!({ "body": "From the browser" });

    session.post(&path, &body).await.expect(201);
    session
        .without_origin()
        .post(&path, &body)
        .await
        .expect_error(403, "forbidden");
    let cross_site = session.with_origin(Some("https://evil.example"));
    cross_site
        .post(&path, &body)
        .await
        .expect_error(403, "forbidden");
    // Reads need no such proof.
    cross_site
        .get(&format!("/api/reviews/{id}"))
        .await
        .expect(200);
    // A script on our own pages may send the token instead of relying on Origin.
    let csrf = csrf_token_of(&server, &session).await;
    let with_token = session
        .without_origin()
        .send(
            session
                .without_origin()
                .raw("POST", &path)
                .header("x-csrf-token", csrf)
                .json(&body),
        )
        .await;
    with_token.expect(201);
}

#[tokio::test]
async fn a_bearer_token_wins_over_a_cookie() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let grace_token = {
        server.create_user("grace@example.com", "Grace", &[]);
        server.issue_token("grace@example.com", "")
    };
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let both = session.with_token(Some(&grace_token));
    assert_eq!(
        both.get("/api/me").await.expect(200)["user"]["email"],
        "grace@example.com"
    );
    // A bad Bearer token is 401 even next to a good cookie.
    let bad = session.with_token(Some("drp_bogus"));
    bad.get("/api/me").await.expect_error(401, "unauthorized");
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    let verifier = format!("verifier-{}-{}", std::process::id(), support::now_ms()).repeat(2);
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// The session's CSRF token, as the approval page embeds it.
async fn csrf_token_of(server: &Server, session: &Client) -> String {
    let (_, challenge) = pkce();
    let page = session
        .get(&format!("/cli-login?challenge={challenge}&name=x"))
        .await;
    assert_eq!(page.status, 200, "{}", page.text);
    let _ = server;
    support::hidden_input(&page.text, "csrf")
}

#[tokio::test]
async fn command_line_login_exchanges_a_one_time_code_for_a_token() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let (verifier, challenge) = pkce();

    // Not signed in: the page sends the browser to sign in first, and back.
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let bounce = raw
        .get(format!(
            "{}/cli-login?challenge={challenge}&name=laptop",
            server.base
        ))
        .send()
        .await
        .expect("get");
    assert_eq!(bounce.status().as_u16(), 303);
    let location = bounce.headers()["location"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(
        location.starts_with("/login?next=/cli-login%3Fchallenge%3D"),
        "{location}"
    );

    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let code = support::approve_cli_login(&session, &challenge, "laptop", "docs,comments").await;
    assert_eq!(code.len(), 11, "XXXXX-XXXXX: {code}");

    let anonymous = server.client(None);
    let exchange = |code: &str, verifier: &str| CodeExchange {
        code: code.into(),
        verifier: verifier.into(),
    };
    // The wrong verifier is refused and does not use the code up.
    refused(
        anonymous
            .api()
            .exchange_cli_code(&exchange(&code, &"x".repeat(43)))
            .await,
        400,
        "invalid_request",
    );
    let body = anonymous
        .api()
        .exchange_cli_code(&exchange(&code.to_lowercase(), &verifier))
        .await
        .expect("exchange");
    assert_eq!(body.scopes, [Scope::Docs, Scope::Comments]);
    assert!(body.token_id.starts_with("tok_"), "{}", body.token_id);
    assert!(!body.expires_at.is_empty());
    let token = body.token.expose();
    assert!(token.starts_with("drp_"));

    let cli = server.client(Some(token));
    let me = cli.api().me().await.expect("me");
    assert_eq!(me.user.email, "ada@example.com");
    assert_eq!(me.token.expect("token").id, body.token_id);
    let listed = cli
        .api()
        .my_tokens(&PageQuery::default())
        .await
        .expect("tokens");
    assert_eq!(listed.tokens[0].name, "laptop");

    // Single use.
    refused(
        anonymous
            .api()
            .exchange_cli_code(&exchange(&code, &verifier))
            .await,
        400,
        "invalid_request",
    );
}

#[tokio::test]
async fn approval_needs_the_pages_csrf_token_and_a_valid_challenge() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let (_, challenge) = pkce();
    let forged = session
        .send(session.raw("POST", "/cli-login").form(&[
            ("challenge", challenge.as_str()),
            ("name", "evil"),
            ("csrf", "guess"),
        ]))
        .await;
    assert_eq!(forged.status, 403);
    assert!(!forged.text.contains("class=\"code\""));
    let bad = session.get("/cli-login?challenge=short&name=x").await;
    assert_eq!(bad.status, 400);
    let scopes = session
        .get(&format!(
            "/cli-login?challenge={challenge}&name=x&scopes=root"
        ))
        .await;
    assert_eq!(scopes.status, 400);
}

#[tokio::test]
async fn failed_code_exchanges_are_rate_limited_per_address() {
    // Raw: the 429 and its `Retry-After` header are the point.
    let server = Server::start();
    let anonymous = server.client(None);
    let attempt = json!({ "code": "AAAAA-BBBBB", "verifier": "v".repeat(43) });
    for _ in 0..10 {
        anonymous
            .post("/api/auth/cli/token", &attempt)
            .await
            .expect_error(400, "invalid_request");
    }
    let limited = anonymous.post("/api/auth/cli/token", &attempt).await;
    limited.expect_error(429, "rate_limited");
    let retry: u64 = limited
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry));
}

#[tokio::test]
async fn code_exchange_rejects_malformed_bodies() {
    let server = Server::start();
    let anonymous = server.client(None);
    anonymous
        .post("/api/auth/cli/token", &json!({ "code": "x" }))
        .await
        .expect_error(400, "invalid_request");
    let text = anonymous
        .send(anonymous.raw("POST", "/api/auth/cli/token").body("code=x"))
        .await;
    text.expect_error(415, "unsupported_media_type");
}

#[tokio::test]
async fn failed_sign_ins_are_rate_limited_and_a_cross_site_sign_out_is_refused() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    server.create_user_with_password("bob@example.com", "Bob", &[], PASSWORD);
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let attempt = |email: &'static str, password: &'static str| {
        raw.post(format!("{}/login", server.base))
            .header("origin", &server.base)
            .form(&[("email", email), ("password", password)])
            .send()
    };
    for _ in 0..10 {
        let wrong = attempt("ada@example.com", "wrong").await.expect("post");
        assert_eq!(wrong.status().as_u16(), 401);
    }
    let limited = attempt(" ADA@example.com", PASSWORD).await.expect("post");
    assert_eq!(
        limited.status().as_u16(),
        429,
        "even the right password waits, however the email is typed"
    );
    assert!(limited.headers().get("set-cookie").is_none());
    // Ada's typos lock out only Ada: Bob, behind the same address, signs in, and command-line
    // code exchanges from there are not counted with sign-ins.
    let bob = attempt("bob@example.com", PASSWORD).await.expect("post");
    assert_eq!(
        bob.status().as_u16(),
        303,
        "another member at the same address"
    );
    server
        .client(None)
        .post(
            "/api/auth/cli/token",
            &json!({ "code": "AAAAA-BBBBB", "verifier": "v".repeat(43) }),
        )
        .await
        .expect_error(400, "invalid_request");

    let other = Server::start();
    other.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = other.sign_in("ada@example.com", PASSWORD).await;
    let cross = raw
        .post(format!("{}/logout", other.base))
        .header("origin", "https://evil.example")
        .header("cookie", session.cookie.as_deref().expect("cookie"))
        .send()
        .await
        .expect("logout");
    assert_eq!(cross.status().as_u16(), 403);
    session.get("/api/me").await.expect(200);
}

#[tokio::test]
async fn an_operator_sets_a_members_password() {
    let server = Server::start();
    server.create_user("eve@example.com", "Eve", &[]);
    let set = |email: &str, password: &str| {
        server.admin_with_input(
            &["set-password", "--email", email, "--password-stdin"],
            password,
        )
    };
    // Refusals say why and change nothing.
    let short = set("eve@example.com", "short\n");
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("at least 10 characters"));
    // The same rule when an operator creates a member with a password.
    let created = server.admin_with_input(
        &[
            "create-user",
            "--email",
            "sam@example.com",
            "--name",
            "Sam",
            "--password-stdin",
        ],
        "nine char\n",
    );
    assert!(!created.status.success());
    assert!(String::from_utf8_lossy(&created.stderr).contains("at least 10 characters"));
    let nobody = set("nobody@example.com", "long enough password\n");
    assert!(!nobody.status.success());
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("not found"));
    let without_stdin = server.admin(&["set-password", "--email", "eve@example.com"]);
    assert!(
        !without_stdin.status.success(),
        "the password never comes from the command line"
    );

    let done = set("eve@example.com", "long enough password\n");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let before = server
        .sign_in("eve@example.com", "long enough password")
        .await;
    before.get("/api/me").await.expect(200);

    // A new password ends the sessions signed in with the old one (as a reset would).
    let again = set("eve@example.com", "another long password\n");
    assert!(again.status.success());
    before.get("/api/me").await.expect(401);
    server
        .sign_in("eve@example.com", "another long password")
        .await
        .get("/api/me")
        .await
        .expect(200);
}

/// A 401 says why (DESIGN.md §6): `reason` tells missing, malformed, unknown, expired, revoked
/// and suspended credentials apart, and `WWW-Authenticate` follows RFC 6750.
#[tokio::test]
async fn every_401_says_why() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &["--admin"]);
    server.create_user("bob@example.com", "Bob", &[]);
    let admin = server.client(Some(&server.issue_token("ada@example.com", "org")));
    let bob_token = server.issue_token("bob@example.com", "comments");
    let expired = server.expired_token("ada@example.com", "comments");
    let revoked = server.issue_token("ada@example.com", "comments");
    let revoker = server.client(Some(&revoked));
    let revoked_id = revoker
        .api()
        .me()
        .await
        .expect("me")
        .token
        .expect("token")
        .id;
    revoker
        .api()
        .revoke_my_token(&revoked_id)
        .await
        .expect("revoke");
    let suspend = MemberChange {
        email: "bob@example.com".into(),
        status: Some(MemberStatus::Suspended),
        display_name: None,
    };
    admin.api().update_member(&suspend).await.expect("suspend");
    // A well-formed token (prefix, length, checksum) that this server never issued.
    let (unknown, _) =
        docreview_core::identity::mint_personal_token(&docreview_core::clock::OsEntropy);
    let unknown = unknown.expose().to_string();

    let anonymous = server.client(None);
    let cases: Vec<(&str, Client, &str)> = vec![
        ("missing", anonymous.clone(), "Bearer"),
        (
            "malformed",
            anonymous.with_token(Some("not-a-token")),
            "Bearer error=\"invalid_token\"",
        ),
        (
            "unknown",
            server.client(Some(&unknown)),
            "Bearer error=\"invalid_token\"",
        ),
        (
            "expired",
            server.client(Some(&expired)),
            "Bearer error=\"invalid_token\"",
        ),
        (
            "revoked",
            server.client(Some(&revoked)),
            "Bearer error=\"invalid_token\"",
        ),
        (
            "suspended",
            server.client(Some(&bob_token)),
            "Bearer error=\"invalid_token\"",
        ),
    ];
    // Raw: the `WWW-Authenticate` header is the point.
    for (reason, client, challenge) in cases {
        let reply = client.get("/api/reviews").await;
        assert_eq!(
            reply.expect_error(401, "unauthorized")["reason"],
            reason,
            "{}",
            reply.text
        );
        assert_eq!(
            reply.header("www-authenticate"),
            Some(challenge),
            "{reason}"
        );
    }
    // A wrong scheme is malformed too.
    let basic = anonymous
        .send(
            anonymous
                .raw("GET", "/api/reviews")
                .header("authorization", "Basic YTpi"),
        )
        .await;
    assert_eq!(
        basic.expect_error(401, "unauthorized")["reason"],
        "malformed"
    );
}

/// The operator's view of members and tokens: `admin list-users`, `admin list-tokens`,
/// `admin revoke-token`, with their refusals.
#[tokio::test]
async fn operators_list_members_and_tokens_and_revoke_a_token() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada Lovelace", &["--admin"]);
    server.create_user("eve@example.com", "Eve", &["--external"]);
    let token = server.issue_token("eve@example.com", "comments");
    let stdout = |output: std::process::Output| {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf8")
    };

    let users = stdout(server.admin(&["list-users"]));
    assert!(
        users.contains("ada@example.com\tAda Lovelace\tinternal\tactive\tyes"),
        "{users}"
    );
    assert!(
        users.contains("eve@example.com\tEve\texternal\tactive\tno"),
        "{users}"
    );
    assert!(!users.contains("svc_"), "no service principals: {users}");

    let tokens = stdout(server.admin(&["list-tokens", "--email", "eve@example.com"]));
    let line = tokens.lines().nth(1).expect("one token");
    let id = line.split('\t').next().expect("id").to_string();
    assert!(
        id.starts_with("tok_") && line.contains("\tcomments\t"),
        "{tokens}"
    );
    assert!(line.ends_with("\tnever"), "{line}");

    stdout(server.admin(&["revoke-token", &id]));
    let refusal = refused(
        server.client(Some(&token)).api().me().await,
        401,
        "unauthorized",
    );
    let Error::Api { body } = refusal else {
        panic!("not an API refusal: {refusal:?}")
    };
    assert_eq!(body.reason.as_deref(), Some("revoked"));
    let listed = stdout(server.admin(&["list-tokens", "--email", "eve@example.com"]));
    assert_eq!(
        listed.lines().count(),
        1,
        "only the header is left: {listed}"
    );

    // Refusals say why.
    for (args, why) in [
        (vec!["revoke-token", id.as_str()], "revoked already"),
        (vec!["revoke-token", "tok_nobody"], "not found"),
        (
            vec!["list-tokens", "--email", "nobody@example.com"],
            "not found",
        ),
    ] {
        let output = server.admin(&args);
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

/// Guessing across accounts from one address is limited too: after 100 failed sign-ins a
/// minute from one address, every sign-in from there waits, also for an email not tried yet.
#[tokio::test]
async fn failed_sign_ins_across_accounts_from_one_address_are_limited() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let attempt = |email: String, password: &'static str| {
        raw.post(format!("{}/login", server.base))
            .header("origin", &server.base)
            .form(&[("email", email.as_str()), ("password", password)])
            .send()
    };
    for n in 0..100 {
        let guess = attempt(format!("guess{}@example.com", n % 20), "wrong")
            .await
            .expect("post");
        assert_eq!(guess.status().as_u16(), 401, "attempt {n}");
    }
    let limited = attempt("ada@example.com".into(), PASSWORD)
        .await
        .expect("post");
    assert_eq!(limited.status().as_u16(), 429);
    assert!(limited.headers().get("retry-after").is_some());
}

/// An IPv6 host is given a whole /64 and may take any address in it: failed sign-ins from one
/// /64 count together, so trying the next address does not start a new count. Another /64, and
/// another member in the same one, sign in as usual.
#[tokio::test]
async fn failed_sign_ins_from_one_ipv6_network_count_together() {
    let server = Server::start_with(&[("DOCREVIEW_TRUSTED_PROXIES", "127.0.0.1")]);
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    server.create_user_with_password("bob@example.com", "Bob", &[], PASSWORD);
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let attempt = |from: String, email: &'static str, password: &'static str| {
        raw.post(format!("{}/login", server.base))
            .header("origin", &server.base)
            .header("x-forwarded-for", from)
            .form(&[("email", email), ("password", password)])
            .send()
    };
    for n in 1..=10 {
        let wrong = attempt(format!("2001:db8:0:7::{n:x}"), "ada@example.com", "wrong")
            .await
            .expect("post");
        assert_eq!(wrong.status().as_u16(), 401, "attempt {n}");
    }
    for from in ["2001:db8:0:7::ff", "2001:db8:0:7:ffff:1:2:3"] {
        let limited = attempt(from.to_string(), "ada@example.com", "wrong")
            .await
            .expect("post");
        assert_eq!(limited.status().as_u16(), 429, "from {from}");
    }
    let limited = attempt("2001:db8:0:7::abc".into(), "ada@example.com", PASSWORD)
        .await
        .expect("post");
    assert_eq!(
        limited.status().as_u16(),
        429,
        "the right password waits too"
    );
    let bob = attempt("2001:db8:0:7::5".into(), "bob@example.com", PASSWORD)
        .await
        .expect("post");
    assert_eq!(
        bob.status().as_u16(),
        303,
        "another member in the same network"
    );
    let elsewhere = attempt("2001:db8:0:8::1".into(), "ada@example.com", PASSWORD)
        .await
        .expect("post");
    assert_eq!(elsewhere.status().as_u16(), 303, "Ada from another network");
}

/// `PUT /api/me/password`: a signed-in browser changes its person's password with the current
/// one; every session ends and this browser is signed in again; each refusal changes nothing.
#[tokio::test]
async fn a_person_changes_their_password_from_a_signed_in_browser() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let browser = server.sign_in("ada@example.com", PASSWORD).await;
    let elsewhere = server.sign_in("ada@example.com", PASSWORD).await;
    let change = |current: &str, new: &str| serde_json::json!({ "currentPassword": current, "newPassword": new });

    // Refusals, each with the JSON error body, and nothing changed.
    browser
        .put(
            "/api/me/password",
            &change("wrong password", "a brand new password"),
        )
        .await
        .expect_error(403, "forbidden");
    for (body, says) in [
        (change(PASSWORD, "too short"), "at least 10 characters"),
        (change(PASSWORD, "          "), "white space"),
        (change(PASSWORD, &"x".repeat(1025)), "at most 1024"),
        (change(PASSWORD, "with a \u{0} inside"), "NUL"),
    ] {
        let refused = browser.put("/api/me/password", &body).await;
        let error = refused.expect_error(400, "invalid_request");
        assert!(
            error["message"].as_str().is_some_and(|m| m.contains(says)),
            "{error}"
        );
    }
    for body in [
        serde_json::json!({ "currentPassword": PASSWORD }),
        serde_json::json!({ "currentPassword": PASSWORD, "newPassword": "a brand new password", "confirm": "x" }),
        serde_json::json!({ "currentPassword": 7, "newPassword": "a brand new password" }),
    ] {
        browser
            .put("/api/me/password", &body)
            .await
            .expect_error(400, "invalid_request");
    }
    // A token cannot do it, nor a cross-site page riding the cookie.
    let token = server.issue_token("ada@example.com", "docs,access,comments,org");
    server
        .client(Some(&token))
        .put(
            "/api/me/password",
            &change(PASSWORD, "a brand new password"),
        )
        .await
        .expect_error(403, "forbidden");
    browser
        .with_origin(Some("https://evil.example"))
        .put(
            "/api/me/password",
            &change(PASSWORD, "a brand new password"),
        )
        .await
        .expect_error(403, "forbidden");
    elsewhere.get("/api/me").await.expect(200);

    // Done: every session ends, and this browser gets a new one.
    let done = browser
        .put(
            "/api/me/password",
            &change(PASSWORD, "a brand new password"),
        )
        .await;
    assert_eq!(done.status, 204, "{}", done.text);
    let cookie = done
        .header("set-cookie")
        .and_then(|v| v.split(';').next())
        .expect("a new session cookie")
        .to_string();
    assert!(cookie.starts_with("docreview_session="), "{cookie}");
    browser.get("/api/me").await.expect(401);
    elsewhere.get("/api/me").await.expect(401);
    let mut renewed = browser.clone();
    renewed.cookie = Some(cookie);
    assert_eq!(
        renewed.get("/api/me").await.expect(200)["user"]["email"],
        "ada@example.com"
    );
    server
        .sign_in("ada@example.com", "a brand new password")
        .await
        .get("/api/me")
        .await
        .expect(200);
    // The token was not a session: it still works.
    server.client(Some(&token)).get("/api/me").await.expect(200);
}

/// Wrong current passwords count as failed sign-ins: the eleventh in a minute is 429.
#[tokio::test]
async fn guessing_the_current_password_is_throttled() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let browser = server.sign_in("ada@example.com", PASSWORD).await;
    let wrong = serde_json::json!({ "currentPassword": "a wrong guess", "newPassword": "a brand new password" });
    for _ in 0..10 {
        browser
            .put("/api/me/password", &wrong)
            .await
            .expect_error(403, "forbidden");
    }
    let limited = browser.put("/api/me/password", &wrong).await;
    limited.expect_error(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
    browser.get("/api/me").await.expect(200);
}
