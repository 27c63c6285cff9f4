//! Every route is either protected (401 without a usable credential, before any other check)
//! or on the explicit public list below.

mod support;

use support::Server;

/// Endpoints that answer without credentials.
const PUBLIC: &[(&str, &str)] = &[("GET", "/healthz"), ("GET", "/readyz")];

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
    for (method, path) in PUBLIC {
        let reply = anonymous.send(anonymous.raw(method, path)).await;
        assert_eq!(reply.status, 200, "{method} {path}: {}", reply.text);
    }
}
