//! Every route is either protected (401 without a usable credential, before any other check)
//! or on the explicit public list below.

mod support;

use support::Server;

/// Endpoints that answer without credentials: health, and the sign-in pages (which send an
/// anonymous browser to the sign-in form).
const PUBLIC: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/login"),
    ("GET", "/cli-login"),
    ("GET", "/"),
];

// `POST /api/auth/cli/token` takes no credentials either: the code and verifier are the proof
// (its answers are tested in `account.rs`).

/// Every API route of this server, with placeholder ids.
const PROTECTED: &[(&str, &str)] = &[
    ("GET", "/api/reviews"),
    ("POST", "/api/reviews"),
    ("GET", "/api/reviews/rv_x"),
    ("GET", "/api/reviews/rv_x/dom-context"),
    ("GET", "/api/reviews/rv_x/versions/ver_x/bundle"),
    ("GET", "/api/reviews/rv_x/events"),
    ("POST", "/api/reviews/import-html"),
    ("POST", "/api/reviews/rv_x/import-html"),
    ("POST", "/api/reviews/rv_x/ai-review-runs"),
    ("PATCH", "/api/reviews/rv_x/ai-review-runs/run_x"),
    ("POST", "/api/reviews/rv_x/ai-review-runs/run_x/comments"),
    ("POST", "/api/reviews/rv_x/comments"),
    ("PATCH", "/api/reviews/rv_x/comments/cm_x"),
    ("DELETE", "/api/reviews/rv_x/comments/cm_x"),
    ("PATCH", "/api/reviews/rv_x/comments/cm_x/anchor"),
    ("POST", "/api/reviews/rv_x/comments/cm_x/thread"),
    ("PATCH", "/api/reviews/rv_x/comments/cm_x/thread/msg_x"),
    ("DELETE", "/api/reviews/rv_x/comments/cm_x/thread/msg_x"),
    ("POST", "/api/reviews/rv_x/comments/cm_x/status-events"),
    ("DELETE", "/api/reviews/rv_x"),
    ("PATCH", "/api/reviews/rv_x/title"),
    ("PATCH", "/api/reviews/rv_x/meta"),
    ("GET", "/api/reviews/rv_x/access"),
    ("PATCH", "/api/reviews/rv_x/access"),
    ("PUT", "/api/reviews/rv_x/owner"),
    ("GET", "/api/search/comments"),
    ("GET", "/api/search/docs"),
    ("GET", "/api/me"),
    ("GET", "/api/me/tokens"),
    ("DELETE", "/api/me/tokens/tok_x"),
    ("GET", "/api/projects"),
    ("GET", "/api/projects/P/roles"),
    ("PATCH", "/api/projects/P/roles"),
    ("PUT", "/api/projects/P/docs/rv_x"),
    ("DELETE", "/api/projects/P/docs/rv_x"),
    ("GET", "/api/org/members"),
    ("POST", "/api/org/members"),
    ("PATCH", "/api/org/members"),
    ("DELETE", "/api/org/members"),
    ("GET", "/api/org/admins"),
    ("PUT", "/api/org/admins"),
    ("DELETE", "/api/org/admins"),
];

#[tokio::test]
async fn every_api_route_refuses_anonymous_and_bad_credentials() {
    let server = Server::start();
    let anonymous = server.client(None);
    let forged = server.client(Some("drp_notarealtokenatallnotarealtokenatallnotarealtok"));
    for (method, path) in PROTECTED {
        for client in [&anonymous, &forged] {
            let reply = client
                .send(
                    client
                        .raw(method, path)
                        .header("content-type", "application/json")
                        .body("{}"),
                )
                .await;
            assert_eq!(reply.status, 401, "{method} {path}: {}", reply.text);
            assert_eq!(reply.json["error"], "unauthorized", "{method} {path}");
        }
    }
}

#[tokio::test]
async fn public_routes_answer_without_credentials() {
    let server = Server::start();
    let anonymous = server.client(None);
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    for (method, path) in PUBLIC {
        let request = no_redirects.request(
            reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
            format!("{}{path}", anonymous.base),
        );
        let status = request.send().await.expect("request").status().as_u16();
        assert!(
            status == 200 || status == 303,
            "{method} {path}: answered {status}"
        );
    }
}
