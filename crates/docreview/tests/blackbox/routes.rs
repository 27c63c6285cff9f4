//! Every route is either protected (401 without a usable credential, before any other check)
//! or on the explicit public list below.
//!
//! All raw HTTP, on purpose: the routes come from the served contract (which the typed client
//! does not fetch), every one is called by method and path template with the same `{}` body,
//! and the public pages are read without following their redirects.

use crate::support::Server;

/// Endpoints that answer without credentials: health, and the sign-in pages (which send an
/// anonymous browser to the sign-in form).
const PUBLIC: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/login"),
    ("GET", "/cli-login"),
    ("GET", "/"),
    ("GET", "/forgot-password"),
];

/// The API operations that take no credentials: the command-line code exchange (the code and
/// verifier are the proof; its answers are tested in `account.rs`) and the contract itself.
const OPEN_API: &[(&str, &str)] = &[
    ("POST", "/api/auth/cli/token"),
    ("POST", "/api/auth/password-reset"),
    ("GET", "/api/openapi.json"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
];

/// Every operation of the served contract, which the server builds from its own route table:
/// `(METHOD, path template, whether it lists security requirements)`.
async fn operations(server: &Server) -> Vec<(String, String, bool)> {
    let contract = server.client(None).get("/api/openapi.json").await;
    let contract = contract.expect(200);
    let mut operations = Vec::new();
    for (path, item) in contract["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            if ["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                let secured = operation.get("security").is_some();
                operations.push((method.to_uppercase(), path.clone(), secured));
            }
        }
    }
    operations
}

/// A template's parameters filled with placeholders (`{review_id}` -> `x_review_id`).
fn concrete(template: &str) -> String {
    let mut path = String::new();
    for part in template.split('{') {
        match part.split_once('}') {
            Some((name, rest)) => {
                path.push_str("x_");
                path.push_str(name);
                path.push_str(rest);
            }
            None => path.push_str(part),
        }
    }
    path
}

#[tokio::test]
async fn every_api_route_refuses_anonymous_and_bad_credentials() {
    let server = Server::start();
    let anonymous = server.client(None);
    let forged = server.client(Some("drp_notarealtokenatallnotarealtokenatallnotarealtok"));
    let operations = operations(&server).await;
    assert!(
        operations.len() >= 45,
        "the contract lists {}",
        operations.len()
    );
    for (method, template, secured) in operations {
        let open = OPEN_API.contains(&(method.as_str(), template.as_str()));
        assert!(
            secured != open,
            "{method} {template}: every operation is secured or on the open list"
        );
        if open {
            continue;
        }
        let path = concrete(&template);
        for client in [&anonymous, &forged] {
            let reply = client
                .send(
                    client
                        .raw(&method, &path)
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
