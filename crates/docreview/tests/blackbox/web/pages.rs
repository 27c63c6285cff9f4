//! The web app over plain HTTP: each kind of response carries its security policy, pages have
//! no inline script or style for the CSP to allow, assets are cached for a year and compressed,
//! and writes without the session's CSRF token are refused.

use crate::support::Server;

const PASSWORD: &str = "correct horse battery";

/// Every `src`/`href` of `/assets/…` in a page.
fn asset_urls(page: &str) -> Vec<String> {
    page.split(['"', '\''])
        .filter(|part| part.starts_with("/assets/"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn pages_assets_bundles_and_api_answers_each_carry_their_policy() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;

    let page = session.get("/").await;
    assert_eq!(page.status, 200, "{}", page.text);
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert!(!page.text.contains(" style=\""), "no style attributes");
    for script in page.text.split("<script").skip(1) {
        let tag = script.split('>').next().unwrap_or_default();
        assert!(tag.contains("src="), "no inline script: <script{tag}>");
    }

    let assets = asset_urls(&page.text);
    assert!(assets.len() >= 3, "{assets:?}");
    for url in &assets {
        let asset = server
            .client(None)
            .send(
                server
                    .client(None)
                    .raw("GET", url)
                    .header("accept-encoding", "gzip"),
            )
            .await;
        assert_eq!(asset.status, 200, "{url}");
        assert_eq!(
            asset.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "{url}"
        );
        assert_eq!(asset.header("content-encoding"), Some("gzip"), "{url}");
        assert_eq!(asset.header("x-content-type-options"), Some("nosniff"));
    }
    let stale = server
        .client(None)
        .get("/assets/000000000000/css/app.css")
        .await;
    assert_eq!(stale.status, 404);

    // The API keeps its policy; a bundle keeps `sandbox`.
    let token = server.issue_token("ada@example.com", "docs,comments");
    let api = server.client(Some(&token));
    let created = api.upload("Doc", "<p>Hello</p>").await;
    let listed = api.get("/api/reviews").await;
    assert_eq!(
        listed.header("content-security-policy"),
        Some("default-src 'none'; frame-ancestors 'none'")
    );
    let bundle = api
        .get(&format!(
            "/api/reviews/{}/versions/{}/bundle",
            created.review_id, created.latest_version_id
        ))
        .await;
    assert_eq!(bundle.header("content-security-policy"), Some("sandbox"));
    assert_eq!(bundle.header("x-content-type-options"), Some("nosniff"));
}

#[tokio::test]
async fn page_writes_need_the_sessions_csrf_token() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    // Same origin but no token: the approval form refuses.
    let refused = session
        .send(
            session
                .raw("POST", "/cli-login")
                .form(&[("challenge", "x".repeat(43).as_str()), ("name", "laptop")]),
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    // Another site, even with a token-shaped field: refused by the credential layer.
    let cross = session
        .with_origin(Some("http://evil.example"))
        .send(session.raw("POST", "/cli-login/deny").form(&[
            ("challenge", "x"),
            ("name", "x"),
            ("csrf", "x"),
        ]))
        .await;
    assert_eq!(cross.status, 403, "{}", cross.text);
    // Sign-out keeps working from this site's pages.
    let out = session.send(session.raw("POST", "/logout")).await;
    assert_eq!(
        out.status, 200,
        "redirected to the sign-in page: {}",
        out.text
    );
}

#[tokio::test]
async fn a_session_cookie_is_no_credential_for_an_api_subresource() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let fetched = session
        .send(
            session
                .raw("GET", "/api/me")
                .header("sec-fetch-dest", "empty"),
        )
        .await;
    assert_eq!(fetched.status, 200, "{}", fetched.text);
    let navigated = session
        .send(
            session
                .raw("GET", "/api/me")
                .header("sec-fetch-dest", "document"),
        )
        .await;
    assert_eq!(navigated.status, 200, "{}", navigated.text);
    // `<img src="/api/me">` in an uploaded document: the cookie counts for nothing.
    for dest in ["image", "style", "script", "iframe"] {
        let embedded = session
            .send(session.raw("GET", "/api/me").header("sec-fetch-dest", dest))
            .await;
        embedded.expect_error(401, "unauthorized");
    }
}
