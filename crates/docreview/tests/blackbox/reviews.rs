//! `POST /api/reviews` (create from JSON): the Review object, identifiers, titles, projects,
//! sharing rows, which credentials may create, and authentication failures.
//! Lists and reads: `reviews_list.rs`; dom-context and bundles: `reviews_content.rs`;
//! multipart uploads and versions: `reviews_import.rs`; malformed requests, headers and the
//! operator commands: `reviews_errors.rs`.

use crate::support;

use serde_json::{Value, json};

use crate::support::{AGENT_TOKEN, Client, SAMPLE_HTML, Server, now_ms, rfc3339_ms};

fn is_source_hash(hash: &str) -> bool {
    hash.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    })
}

/// The SHA-256 of `bytes` as computed by coreutils' `sha256sum`, as `sha256:<hex>`.
fn sha256sum(bytes: &[u8]) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sha256sum (coreutils)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(bytes)
        .expect("write to sha256sum");
    let output = child.wait_with_output().expect("sha256sum output");
    let text = String::from_utf8(output.stdout).expect("utf8");
    format!("sha256:{}", text.split_whitespace().next().expect("hex"))
}

fn versions(review: &Value) -> &Vec<Value> {
    review["source"]["versions"]
        .as_array()
        .expect("source.versions is an array")
}

async fn create(client: &Client, body: Value) -> support::Reply {
    client.post("/api/reviews", &body).await
}

/// The ids of every document `client` can list.
async fn listed_ids(client: &Client) -> Vec<String> {
    let reply = client.get("/api/reviews?limit=200").await;
    reply.expect(200)["reviews"]
        .as_array()
        .expect("reviews array")
        .iter()
        .map(|row| row["reviewId"].as_str().expect("reviewId").to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The Review object

#[tokio::test]
async fn create_with_html_returns_every_review_field() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada Lovelace", &[]);
    let ada = server.client(Some(&server.issue_token("ada@example.com", "docs")));
    let before = now_ms();
    let reply = create(
        &ada,
        json!({ "review": { "title": "Engine notes", "source": { "html": SAMPLE_HTML } } }),
    )
    .await;
    let after = now_ms();
    let review = &reply.expect(201)["review"];

    let id = review["reviewId"].as_str().expect("reviewId string");
    assert!(id.starts_with("rv_"), "server ids carry rv_: {id}");
    assert_eq!(review["title"], "Engine notes");
    assert_eq!(review["commentsRevision"], 0);
    assert!(review["structureRevision"].is_i64(), "{review}");
    assert_eq!(review["comments"], json!([]));
    assert_eq!(review["aiReviewRuns"], json!([]));
    let created = rfc3339_ms(review["createdAt"].as_str().expect("createdAt string"));
    assert!(
        created >= before - 1000 && created <= after + 1000,
        "createdAt {created} not within [{before}, {after}]"
    );

    let versions = versions(review);
    assert_eq!(versions.len(), 1);
    let version = &versions[0];
    let version_id = version["versionId"].as_str().expect("versionId");
    assert!(version_id.starts_with("ver_"), "{version_id}");
    assert_eq!(version["label"], "v1");
    let version_created = version["createdAt"]
        .as_i64()
        .expect("versions[].createdAt is an integer (UNIX ms)");
    assert!(
        version_created >= before - 1000 && version_created <= after + 1000,
        "version createdAt {version_created} not within [{before}, {after}]"
    );
    let hash = version["sourceHash"].as_str().expect("sourceHash");
    assert!(is_source_hash(hash), "sourceHash format: {hash}");

    assert_eq!(review["tags"], json!([]));
    assert_eq!(review["archived"], false);
    assert_eq!(
        review["owner"],
        json!({ "id": ada_id, "provider": "local", "displayName": "Ada Lovelace" })
    );
    assert_eq!(review["role"], "owner");
    assert_eq!(review["access"]["mode"], "link");
    assert_eq!(review["latestVersionId"], version_id);
    assert!(
        review.get("_project").is_none(),
        "no _project without a project link: {review}"
    );
}

#[tokio::test]
async fn created_review_reads_back_identically() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = create(
        &ada,
        json!({ "review": { "title": "Persisted", "tags": ["alpha", "beta"],
                            "source": { "html": SAMPLE_HTML, "label": "draft" } } }),
    )
    .await;
    let created = reply.expect(201)["review"].clone();
    let id = created["reviewId"].as_str().expect("id");
    assert_eq!(created["tags"], json!(["alpha", "beta"]));
    assert_eq!(versions(&created)[0]["label"], "draft");

    let read = ada.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(read.expect(200)["review"], created);
}

#[tokio::test]
async fn source_hash_is_sha256_of_the_uploaded_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<h1>Grüße</h1>\r\n<p>日本語 and  two  spaces</p>\n";
    let first = create(&ada, json!({ "review": { "source": { "html": html } } })).await;
    let second = create(&ada, json!({ "review": { "source": { "html": html } } })).await;
    let other = create(
        &ada,
        json!({ "review": { "source": { "html": format!("{html} ") } } }),
    )
    .await;
    let hash_of =
        |reply: &support::Reply| versions(&reply.expect(201)["review"])[0]["sourceHash"].clone();
    let hash = hash_of(&first);
    assert!(is_source_hash(hash.as_str().expect("string")), "{hash}");
    assert_eq!(hash, hash_of(&second), "identical bytes, identical hash");
    assert_ne!(hash, hash_of(&other), "one more byte, another hash");
    assert_eq!(hash, sha256sum(html.as_bytes()));
}

#[tokio::test]
async fn source_hash_of_an_upload_is_sha256_of_its_raw_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bytes = "\u{feff}<p>Zeile\r\n\tmit Umlaut: ä</p>  \r\n".as_bytes();
    let form = reqwest::multipart::Form::new().part("file", support::html_part(bytes, "raw.html"));
    let reply = ada.multipart("/api/reviews/import-html", form).await;
    let review = reply.expect(201)["review"].clone();
    assert_eq!(versions(&review)[0]["sourceHash"], sha256sum(bytes));

    // Replacing the body gives the hash of the new bytes.
    let id = review["reviewId"].as_str().expect("id");
    let replacement = b"<p>replacement</p>\n";
    let form = reqwest::multipart::Form::new()
        .part("file", support::html_part(replacement, "new.html"))
        .text("mode", "replace");
    let reply = ada
        .multipart(&format!("/api/reviews/{id}/import-html"), form)
        .await;
    let replaced = &reply.expect(200)["review"];
    assert_eq!(versions(replaced)[0]["sourceHash"], sha256sum(replacement));
}

// ---------------------------------------------------------------------------------------------
// Defaults

#[tokio::test]
async fn create_without_html_makes_one_empty_untitled_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = create(&ada, json!({ "review": {} })).await;
    let review = &reply.expect(201)["review"];
    assert_eq!(review["title"], "Untitled");
    let versions = versions(review);
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0]["label"], "v1");
    assert_eq!(review["latestVersionId"], versions[0]["versionId"]);
    assert_eq!(versions[0]["sourceHash"], sha256sum(b""));

    let id = review["reviewId"].as_str().expect("id");
    let version = versions[0]["versionId"].as_str().expect("version");
    let bundle = ada
        .get(&format!("/api/reviews/{id}/versions/{version}/bundle"))
        .await;
    assert_eq!(bundle.status, 200);
    assert_eq!(bundle.text, "");
}

#[tokio::test]
async fn title_defaults_to_the_first_heading() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<p>preface</p><h2>Quarterly   Plan</h2><p>x</p><h1>Later</h1>";
    let reply = create(&ada, json!({ "review": { "source": { "html": html } } })).await;
    assert_eq!(reply.expect(201)["review"]["title"], "Quarterly Plan");
    // The <title> element is not a heading.
    let html = "<html><head><title>Head title</title></head><body><p>x</p></body></html>";
    let reply = create(&ada, json!({ "review": { "source": { "html": html } } })).await;
    assert_eq!(reply.expect(201)["review"]["title"], "Untitled");
}

#[tokio::test]
async fn tags_out_of_bounds_are_400_and_duplicates_collapse() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let too_many: Vec<String> = (0..33).map(|n| format!("t{n}")).collect();
    for tags in [
        json!(too_many),
        json!([""]),
        json!(["x".repeat(65)]),
        json!([1]),
    ] {
        create(&ada, json!({ "review": { "tags": tags } }))
            .await
            .expect_error(400, "invalid_request");
    }
    assert!(listed_ids(&ada).await.is_empty());
    let most: Vec<String> = (0..32).map(|n| format!("t{n}")).collect();
    create(&ada, json!({ "review": { "tags": most } }))
        .await
        .expect(201);
    let reply = create(
        &ada,
        json!({ "review": { "tags": ["x".repeat(64), "a", "a"] } }),
    )
    .await;
    assert_eq!(
        reply.expect(201)["review"]["tags"],
        json!(["x".repeat(64), "a"])
    );
}

#[tokio::test]
async fn title_out_of_bounds_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for title in [String::new(), "   ".to_string(), "t".repeat(301)] {
        create(&ada, json!({ "review": { "title": title } }))
            .await
            .expect_error(400, "invalid_request");
    }
    let ok = create(&ada, json!({ "review": { "title": "t".repeat(300) } })).await;
    ok.expect(201);
    assert_eq!(listed_ids(&ada).await.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Client-chosen identifiers

#[tokio::test]
async fn client_review_id_is_used_and_readable() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for id in ["my-doc_1", "A1b", &format!("x{}", "y".repeat(63))] {
        let reply = create(&ada, json!({ "review": { "reviewId": id } })).await;
        assert_eq!(reply.expect(201)["review"]["reviewId"], id);
        let read = ada.get(&format!("/api/reviews/{id}")).await;
        assert_eq!(read.expect(200)["review"]["reviewId"], id);
    }
}

/// `import-html` matches the identifier pattern but is also a fixed path segment under
/// `/api/reviews`; a document created with it must be readable, or the id refused.
#[tokio::test]
async fn client_review_id_that_collides_with_a_route_is_readable_or_refused() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = create(&ada, json!({ "review": { "reviewId": "import-html" } })).await;
    if reply.status == 201 {
        let read = ada.get("/api/reviews/import-html").await;
        assert_eq!(
            read.status, 200,
            "created document `import-html` cannot be read: {}",
            read.text
        );
        assert_eq!(read.json["review"]["reviewId"], "import-html");
    } else {
        reply.expect_error(400, "invalid_request");
    }
}

#[tokio::test]
async fn client_review_id_not_matching_the_pattern_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let too_long = format!("x{}", "y".repeat(64));
    for id in [
        "ab",
        "-abc",
        "_abc",
        "has space",
        "a/b/c",
        "dot.ted",
        "ünï",
        &too_long,
        "",
    ] {
        let reply = create(&ada, json!({ "review": { "reviewId": id } })).await;
        reply.expect_error(400, "invalid_request");
    }
    let reply = create(&ada, json!({ "review": { "reviewId": 42 } })).await;
    reply.expect_error(400, "invalid_request");
    assert!(listed_ids(&ada).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn duplicate_client_review_id_is_409_already_exists() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    create(
        &ada,
        json!({ "review": { "reviewId": "shared-name", "title": "First" } }),
    )
    .await
    .expect(201);
    for client in [&ada, &bob] {
        let again = create(
            client,
            json!({ "review": { "reviewId": "shared-name", "title": "Second" } }),
        )
        .await;
        again.expect_error(409, "already_exists");
    }
    let read = ada.get("/api/reviews/shared-name").await;
    assert_eq!(read.expect(200)["review"]["title"], "First");
    assert_eq!(listed_ids(&ada).await, vec!["shared-name".to_string()]);
}

// ---------------------------------------------------------------------------------------------
// Projects

#[tokio::test]
async fn review_id_together_with_project_is_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let reply = create(
        &ada,
        json!({ "review": { "reviewId": "client-id" }, "project": "ACME-1" }),
    )
    .await;
    reply.expect_error(400, "invalid_request");
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn external_member_without_project_is_403_project_required() {
    let server = Server::start();
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let reply = create(&xena, json!({ "review": { "title": "Mine" } })).await;
    reply.expect_error(403, "project_required");
    let admin = server.user("root@example.com", "Root", &["--admin"], "");
    assert!(listed_ids(&admin).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn project_code_not_matching_the_pattern_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let too_long = format!("A{}", "B".repeat(32));
    for code in ["acme", "-ACME", "AC ME", "ACME_1", "", &too_long] {
        let reply = create(&ada, json!({ "review": {}, "project": code })).await;
        reply.expect_error(400, "invalid_request");
    }
    let reply = create(&ada, json!({ "review": {}, "project": 7 })).await;
    reply.expect_error(400, "invalid_request");
}

#[tokio::test]
async fn unknown_project_is_404_project_not_found() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let longest = format!("Z{}", "9".repeat(31));
    for code in ["NOPE-1", "0", longest.as_str()] {
        let reply = create(&ada, json!({ "review": {}, "project": code })).await;
        reply.expect_error(404, "project_not_found");
    }
    let reply = create(&xena, json!({ "review": {}, "project": "NOPE-1" })).await;
    reply.expect_error(404, "project_not_found");
    assert!(listed_ids(&ada).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Sharing rows on create

#[tokio::test]
async fn allowed_users_without_access_scope_is_403_insufficient_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let reply = create(
        &ada,
        json!({ "review": { "access": { "mode": "restricted",
            "allowedUsers": [{ "email": "bob@example.com", "role": "viewer" }] } } }),
    )
    .await;
    reply.expect_error(403, "insufficient_scope");
    assert!(listed_ids(&ada).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn access_mode_without_allowed_users_needs_no_access_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let reply = create(
        &ada,
        json!({ "review": { "access": { "mode": "restricted", "allowedUsers": [] } } }),
    )
    .await;
    let review = &reply.expect(201)["review"];
    assert_eq!(review["access"]["mode"], "restricted");
    let id = review["reviewId"].as_str().expect("id");
    bob.get(&format!("/api/reviews/{id}"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn allowed_users_with_access_scope_grant_roles() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let eve = server.user("eve@example.com", "Eve", &[], "");
    let carol = server.user("carol@example.com", "Carol", &[], "");
    let reply = create(
        &ada,
        json!({ "review": { "title": "Shared", "access": { "mode": "restricted", "allowedUsers": [
            { "email": "BOB@Example.com", "role": "viewer" },
            { "email": "eve@example.com", "role": "editor" },
        ] } } }),
    )
    .await;
    let review = &reply.expect(201)["review"];
    assert_eq!(review["access"]["mode"], "restricted");
    let id = review["reviewId"].as_str().expect("id");

    let as_bob = bob.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(as_bob.expect(200)["review"]["role"], "viewer");
    let as_eve = eve.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(as_eve.expect(200)["review"]["role"], "editor");
    carol
        .get(&format!("/api/reviews/{id}"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn allowed_users_with_invalid_email_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    for email in [
        "not-an-email",
        "",
        "@example.com",
        "bob@",
        "two words@example.com",
    ] {
        let grant = json!({ "email": email, "role": "viewer" });
        let reply = create(
            &ada,
            json!({ "review": { "access": { "allowedUsers": [grant] } } }),
        )
        .await;
        reply.expect_error(400, "invalid_request");
    }
    let reply = create(
        &ada,
        json!({ "review": { "access": { "allowedUsers": [{ "role": "viewer" }] } } }),
    )
    .await;
    reply.expect_error(400, "invalid_request");
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn unknown_role_or_mode_word_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    for role in [json!("owner"), json!("admin"), json!("Viewer"), json!(null)] {
        let grant = json!({ "email": "bob@example.com", "role": role });
        let reply = create(
            &ada,
            json!({ "review": { "access": { "allowedUsers": [grant] } } }),
        )
        .await;
        reply.expect_error(400, "invalid_request");
    }
    for mode in ["public", "private", "Link"] {
        let reply = create(&ada, json!({ "review": { "access": { "mode": mode } } })).await;
        reply.expect_error(400, "invalid_request");
    }
    assert!(listed_ids(&ada).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Who may create

#[tokio::test]
async fn import_shared_token_may_create() {
    let server = Server::start();
    let reply = create(
        &server.importer(),
        json!({ "review": { "title": "Delivered", "source": { "html": SAMPLE_HTML } } }),
    )
    .await;
    let review = &reply.expect(201)["review"];
    assert_eq!(review["owner"]["id"], "svc_import");
    assert_eq!(review["owner"]["provider"], "service");
    let id = review["reviewId"].as_str().expect("id");
    let read = server.agent().get(&format!("/api/reviews/{id}")).await;
    assert_eq!(read.expect(200)["review"]["title"], "Delivered");
}

#[tokio::test]
async fn manage_and_agent_shared_tokens_may_not_create() {
    let server = Server::start();
    for client in [server.manager(), server.agent()] {
        let reply = create(&client, json!({ "review": { "title": "Nope" } })).await;
        reply.expect_error(403, "forbidden");
    }
    assert!(listed_ids(&server.importer()).await.is_empty());
}

#[tokio::test]
async fn personal_token_without_docs_scope_is_403_insufficient_scope() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    for scopes in ["", "comments", "access,comments,org"] {
        let ada = server.client(Some(&server.issue_token("ada@example.com", scopes)));
        let reply = create(&ada, json!({ "review": { "title": "Nope" } })).await;
        reply.expect_error(403, "insufficient_scope");
    }
    assert!(listed_ids(&server.importer()).await.is_empty());
}

#[tokio::test]
async fn admin_without_docs_scope_is_still_403_insufficient_scope() {
    let server = Server::start();
    let root = server.user(
        "root@example.com",
        "Root",
        &["--admin"],
        "access,comments,org",
    );
    let reply = create(&root, json!({ "review": {} })).await;
    reply.expect_error(403, "insufficient_scope");
}

// ---------------------------------------------------------------------------------------------
// Authentication

#[tokio::test]
async fn create_without_token_is_401_unauthorized() {
    let server = Server::start();
    let reply = create(&server.client(None), json!({ "review": {} })).await;
    reply.expect_error(401, "unauthorized");
    let reply = server.client(None).get("/api/reviews").await;
    reply.expect_error(401, "unauthorized");
    assert!(listed_ids(&server.importer()).await.is_empty());
}

#[tokio::test]
async fn unknown_token_is_401_unauthorized() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let real = ada.token.clone().expect("token");
    // A typo in a real token, a shared token with a suffix, and plain garbage.
    let mut typo = real.clone();
    let last = typo.pop().expect("non-empty");
    typo.push(if last == 'a' { 'b' } else { 'a' });
    for token in [
        "garbage".to_string(),
        "drp_".to_string(),
        typo,
        format!("{AGENT_TOKEN}x"),
        format!("x{real}"),
    ] {
        let client = server.client(Some(&token));
        create(&client, json!({ "review": {} }))
            .await
            .expect_error(401, "unauthorized");
        // Even where the answer would otherwise be 404.
        client
            .get("/api/reviews/rv_missing")
            .await
            .expect_error(401, "unauthorized");
    }
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn malformed_authorization_header_is_401_unauthorized() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let real = ada.token.clone().expect("token");
    let anonymous = server.client(None);
    for header in [
        format!("Basic {real}"),
        format!("Token {real}"),
        real.clone(),
        "Bearer".to_string(),
        "Bearer    ".to_string(),
        format!("Bearer{real}"),
        format!("Bearer {real} extra"),
    ] {
        let request = anonymous
            .raw("POST", "/api/reviews")
            .header("authorization", header.as_str())
            .json(&json!({ "review": {} }));
        let reply = anonymous.send(request).await;
        assert_eq!(
            reply.status, 401,
            "Authorization: {header:?} gave {}: {}",
            reply.status, reply.text
        );
        reply.expect_error(401, "unauthorized");
    }
    // A header value that is not ASCII (an obs-text byte after the token).
    let mut bytes = format!("Bearer {real}").into_bytes();
    bytes.push(0xe9);
    let value = reqwest::header::HeaderValue::from_bytes(&bytes).expect("obs-text is allowed");
    let request = anonymous
        .raw("POST", "/api/reviews")
        .header("authorization", value)
        .json(&json!({ "review": {} }));
    anonymous
        .send(request)
        .await
        .expect_error(401, "unauthorized");
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn token_in_the_query_string_is_not_a_credential() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let real = ada.token.clone().expect("token");
    let anonymous = server.client(None);
    for parameter in ["access_token", "token"] {
        anonymous
            .get(&format!("/api/reviews?{parameter}={real}"))
            .await
            .expect_error(401, "unauthorized");
    }
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let real = ada.token.clone().expect("token");
    let anonymous = server.client(None);
    let request = anonymous
        .raw("GET", "/api/reviews")
        .header("authorization", format!("bearer {real}"));
    anonymous.send(request).await.expect(200);
}
