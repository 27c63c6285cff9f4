//! `POST /api/reviews` (create from JSON): the Review object, identifiers, titles, projects,
//! sharing rows, which credentials may create, and authentication failures.
//! Lists and reads: `reviews_list.rs`; dom-context and bundles: `reviews_content.rs`;
//! multipart uploads and versions: `reviews_import.rs`; malformed requests, headers and the
//! operator commands: `reviews_errors.rs`.
//!
//! Requests go through the typed client; the raw helpers send only bodies the schema refuses
//! (values of the wrong type, words that are not in a closed set, missing fields) and unusual
//! `Authorization` headers.

use docreview_client::api::{
    AccessInput, AccessMode, AllowedUserEntry, CreateReview, GrantRole, ListQuery, Provider,
    ReviewInput, ReviewView, Role, SourceInput, User, VersionMode,
};
use docreview_client::{DocumentUpload, HtmlFile, VersionUpload};
use serde_json::{Value, json};

use crate::support::{AGENT_TOKEN, Client, SAMPLE_HTML, Server, now_ms, refused, rfc3339_ms};

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

/// A new document described by `review`, in no project.
fn input(review: ReviewInput) -> CreateReview {
    CreateReview {
        review,
        project: None,
    }
}

/// A new document with just `html` (no title).
fn from_html(html: &str) -> CreateReview {
    input(ReviewInput {
        source: Some(SourceInput {
            html: Some(html.to_string()),
            label: None,
        }),
        ..ReviewInput::default()
    })
}

/// A new document with just a client-chosen id.
fn with_id(id: &str) -> CreateReview {
    input(ReviewInput {
        review_id: Some(id.to_string()),
        ..ReviewInput::default()
    })
}

/// A new document with nothing set but the project.
fn in_project(code: &str) -> CreateReview {
    CreateReview {
        review: ReviewInput::default(),
        project: Some(code.to_string()),
    }
}

/// A new document whose access is `access`.
fn with_access(mode: Option<AccessMode>, users: Option<Vec<AllowedUserEntry>>) -> CreateReview {
    input(ReviewInput {
        access: Some(AccessInput {
            mode,
            allowed_users: users,
        }),
        ..ReviewInput::default()
    })
}

fn grant(email: &str, role: GrantRole) -> AllowedUserEntry {
    AllowedUserEntry {
        email: email.to_string(),
        role,
    }
}

fn with_tags(tags: Vec<String>) -> CreateReview {
    input(ReviewInput {
        tags: Some(tags),
        ..ReviewInput::default()
    })
}

fn titled(title: &str) -> CreateReview {
    input(ReviewInput {
        title: Some(title.to_string()),
        ..ReviewInput::default()
    })
}

async fn create(client: &Client, body: &CreateReview) -> docreview_client::Result<ReviewView> {
    client.api().create_review(body).await
}

/// A raw create with a body the schema refuses; asserts 400 `invalid_request`.
async fn refused_raw(client: &Client, body: &Value) {
    client
        .post("/api/reviews", body)
        .await
        .expect_error(400, "invalid_request");
}

/// The ids of every document `client` can list.
async fn listed_ids(client: &Client) -> Vec<String> {
    let query = ListQuery {
        limit: Some(200),
        ..ListQuery::default()
    };
    let list = client.api().list_reviews(&query).await.expect("list");
    list.reviews.into_iter().map(|row| row.review_id).collect()
}

// ---------------------------------------------------------------------------------------------
// The Review object

#[tokio::test]
async fn create_with_html_returns_every_review_field() {
    let server = Server::start();
    let ada_id = server.create_user("ada@example.com", "Ada Lovelace", &[]);
    let ada = server.client(Some(&server.issue_token("ada@example.com", "docs")));
    let before = now_ms();
    let body = input(ReviewInput {
        title: Some("Engine notes".into()),
        source: Some(SourceInput {
            html: Some(SAMPLE_HTML.into()),
            label: None,
        }),
        ..ReviewInput::default()
    });
    // The typed answer decodes only when every field is there with its type.
    let review = create(&ada, &body).await.expect("create");
    let after = now_ms();

    let id = review.review_id.as_str();
    assert!(id.starts_with("rv_"), "server ids carry rv_: {id}");
    assert_eq!(review.title, "Engine notes");
    assert_eq!(review.comments_revision, 0);
    assert!(review.comments.is_empty());
    assert!(review.ai_review_runs.is_empty());
    let created = rfc3339_ms(&review.created_at);
    assert!(
        created >= before - 1000 && created <= after + 1000,
        "createdAt {created} not within [{before}, {after}]"
    );

    let versions = &review.source.versions;
    assert_eq!(versions.len(), 1);
    let version = &versions[0];
    let version_id = version.version_id.as_str();
    assert!(version_id.starts_with("ver_"), "{version_id}");
    assert_eq!(version.label, "v1");
    // An integer (UNIX ms), or the answer would not have decoded.
    let version_created = version.created_at;
    assert!(
        version_created >= before - 1000 && version_created <= after + 1000,
        "version createdAt {version_created} not within [{before}, {after}]"
    );
    let hash = version.source_hash.as_str();
    assert!(is_source_hash(hash), "sourceHash format: {hash}");

    assert!(review.tags.is_empty());
    assert!(!review.archived);
    assert_eq!(
        review.owner,
        User {
            id: ada_id,
            provider: Provider::Local,
            display_name: "Ada Lovelace".into(),
            handle: "ada".into(),
        }
    );
    assert_eq!(review.role, Role::Owner);
    assert_eq!(review.access.mode, AccessMode::Link);
    assert_eq!(review.latest_version_id, version_id);
    assert!(
        review.project.is_none(),
        "no _project without a project link: {review:?}"
    );
}

#[tokio::test]
async fn created_review_reads_back_identically() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let body = input(ReviewInput {
        title: Some("Persisted".into()),
        tags: Some(vec!["alpha".into(), "beta".into()]),
        source: Some(SourceInput {
            html: Some(SAMPLE_HTML.into()),
            label: Some("draft".into()),
        }),
        ..ReviewInput::default()
    });
    let created = create(&ada, &body).await.expect("create");
    assert_eq!(created.tags, ["alpha", "beta"]);
    assert_eq!(created.source.versions[0].label, "draft");

    let read = ada
        .api()
        .review(&created.review_id, false)
        .await
        .expect("read");
    assert_eq!(
        serde_json::to_value(&read).expect("read"),
        serde_json::to_value(&created).expect("created")
    );
}

#[tokio::test]
async fn source_hash_is_sha256_of_the_uploaded_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<h1>Grüße</h1>\r\n<p>日本語 and  two  spaces</p>\n";
    let first = create(&ada, &from_html(html)).await.expect("first");
    let second = create(&ada, &from_html(html)).await.expect("second");
    let other = create(&ada, &from_html(&format!("{html} ")))
        .await
        .expect("other");
    let hash_of = |review: &ReviewView| review.source.versions[0].source_hash.clone();
    let hash = hash_of(&first);
    assert!(is_source_hash(&hash), "{hash}");
    assert_eq!(hash, hash_of(&second), "identical bytes, identical hash");
    assert_ne!(hash, hash_of(&other), "one more byte, another hash");
    assert_eq!(hash, sha256sum(html.as_bytes()));
}

#[tokio::test]
async fn source_hash_of_an_upload_is_sha256_of_its_raw_bytes() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bytes = "\u{feff}<p>Zeile\r\n\tmit Umlaut: ä</p>  \r\n".as_bytes();
    let file = HtmlFile {
        name: "raw.html".into(),
        bytes: bytes.to_vec(),
    };
    let review = ada
        .api()
        .import_html(&file, &DocumentUpload::default())
        .await
        .expect("upload");
    assert_eq!(review.source.versions[0].source_hash, sha256sum(bytes));

    // Replacing the body gives the hash of the new bytes.
    let replacement = b"<p>replacement</p>\n";
    let file = HtmlFile {
        name: "new.html".into(),
        bytes: replacement.to_vec(),
    };
    let upload = VersionUpload {
        mode: VersionMode::Replace,
        label: None,
        base_version_id: None,
    };
    let replaced = ada
        .api()
        .import_version(&review.review_id, &file, &upload)
        .await
        .expect("replace");
    assert_eq!(
        replaced.source.versions[0].source_hash,
        sha256sum(replacement)
    );
}

// ---------------------------------------------------------------------------------------------
// Defaults

#[tokio::test]
async fn create_without_html_makes_one_empty_untitled_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let review = create(&ada, &input(ReviewInput::default()))
        .await
        .expect("create");
    assert_eq!(review.title, "Untitled");
    let versions = &review.source.versions;
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].label, "v1");
    assert_eq!(review.latest_version_id, versions[0].version_id);
    assert_eq!(versions[0].source_hash, sha256sum(b""));

    let bundle = ada
        .api()
        .bundle(&review.review_id, &versions[0].version_id)
        .await
        .expect("bundle");
    assert_eq!(bundle, "");
}

#[tokio::test]
async fn title_defaults_to_the_title_element_then_the_first_h1_then_any_heading() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let html = "<html><head><title>Head   title</title></head><body><h1>H</h1></body></html>";
    let review = create(&ada, &from_html(html)).await.expect("create");
    assert_eq!(review.title, "Head title");
    let html = "<p>preface</p><h2>Quarterly   Plan</h2><p>x</p><h1>Later</h1>";
    let review = create(&ada, &from_html(html)).await.expect("create");
    assert_eq!(review.title, "Later");
    let html = "<p>preface</p><h2>Quarterly   Plan</h2><p>x</p>";
    let review = create(&ada, &from_html(html)).await.expect("create");
    assert_eq!(review.title, "Quarterly Plan");
    let review = create(&ada, &from_html("<p>x</p>")).await.expect("create");
    assert_eq!(review.title, "Untitled");
}

#[tokio::test]
async fn tags_out_of_bounds_are_400_and_duplicates_collapse() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let too_many: Vec<String> = (0..33).map(|n| format!("t{n}")).collect();
    for tags in [too_many, vec![String::new()], vec!["x".repeat(65)]] {
        refused(create(&ada, &with_tags(tags)).await, 400, "invalid_request");
    }
    // A tag that is no string (raw: the typed client cannot send it).
    refused_raw(&ada, &json!({ "review": { "tags": [1] } })).await;
    assert!(listed_ids(&ada).await.is_empty());
    let most: Vec<String> = (0..32).map(|n| format!("t{n}")).collect();
    create(&ada, &with_tags(most)).await.expect("32 tags");
    let review = create(
        &ada,
        &with_tags(vec!["x".repeat(64), "a".into(), "a".into()]),
    )
    .await
    .expect("create");
    assert_eq!(review.tags, ["x".repeat(64), "a".to_string()]);
}

#[tokio::test]
async fn title_out_of_bounds_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for title in [String::new(), "   ".to_string(), "t".repeat(301)] {
        refused(create(&ada, &titled(&title)).await, 400, "invalid_request");
    }
    create(&ada, &titled(&"t".repeat(300)))
        .await
        .expect("300 characters");
    assert_eq!(listed_ids(&ada).await.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Client-chosen identifiers

#[tokio::test]
async fn client_review_id_is_used_and_readable() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    for id in ["my-doc_1", "A1b", &format!("x{}", "y".repeat(63))] {
        let review = create(&ada, &with_id(id)).await.expect("create");
        assert_eq!(review.review_id, id);
        let read = ada.api().review(id, false).await.expect("read");
        assert_eq!(read.review_id, id);
    }
}

/// `import-html` matches the identifier pattern but is also a fixed path segment under
/// `/api/reviews`; a document created with it must be readable, or the id refused.
#[tokio::test]
async fn client_review_id_that_collides_with_a_route_is_readable_or_refused() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let result = create(&ada, &with_id("import-html")).await;
    if result.is_ok() {
        let read = ada
            .api()
            .review("import-html", false)
            .await
            .unwrap_or_else(|error| {
                panic!("created document `import-html` cannot be read: {error:?}")
            });
        assert_eq!(read.review_id, "import-html");
    } else {
        refused(result, 400, "invalid_request");
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
        refused(create(&ada, &with_id(id)).await, 400, "invalid_request");
    }
    // An id that is no string (raw: the typed client cannot send it).
    refused_raw(&ada, &json!({ "review": { "reviewId": 42 } })).await;
    assert!(listed_ids(&ada).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn duplicate_client_review_id_is_409_already_exists() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "docs");
    let named = |title: &str| {
        input(ReviewInput {
            review_id: Some("shared-name".into()),
            title: Some(title.into()),
            ..ReviewInput::default()
        })
    };
    create(&ada, &named("First")).await.expect("create");
    for client in [&ada, &bob] {
        refused(
            create(client, &named("Second")).await,
            409,
            "already_exists",
        );
    }
    let read = ada.api().review("shared-name", false).await.expect("read");
    assert_eq!(read.title, "First");
    assert_eq!(listed_ids(&ada).await, vec!["shared-name".to_string()]);
}

// ---------------------------------------------------------------------------------------------
// Projects

#[tokio::test]
async fn review_id_together_with_project_is_400_invalid_request() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let mut body = with_id("client-id");
    body.project = Some("ACME-1".into());
    refused(create(&ada, &body).await, 400, "invalid_request");
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn external_member_without_project_is_403_project_required() {
    let server = Server::start();
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    refused(
        create(&xena, &titled("Mine")).await,
        403,
        "project_required",
    );
    let admin = server.user("root@example.com", "Root", &["--admin"], "");
    assert!(listed_ids(&admin).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn project_code_not_matching_the_pattern_is_400() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let too_long = format!("A{}", "B".repeat(32));
    for code in ["acme", "-ACME", "AC ME", "ACME_1", "", &too_long] {
        refused(
            create(&ada, &in_project(code)).await,
            400,
            "invalid_request",
        );
    }
    // A code that is no string (raw: the typed client cannot send it).
    refused_raw(&ada, &json!({ "review": {}, "project": 7 })).await;
}

#[tokio::test]
async fn unknown_project_is_404_project_not_found() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let xena = server.user("xena@partner.example", "Xena", &["--external"], "docs");
    let longest = format!("Z{}", "9".repeat(31));
    for code in ["NOPE-1", "0", longest.as_str()] {
        refused(
            create(&ada, &in_project(code)).await,
            404,
            "project_not_found",
        );
    }
    refused(
        create(&xena, &in_project("NOPE-1")).await,
        404,
        "project_not_found",
    );
    assert!(listed_ids(&ada).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Sharing rows on create

#[tokio::test]
async fn allowed_users_without_access_scope_is_403_insufficient_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let body = with_access(
        Some(AccessMode::Restricted),
        Some(vec![grant("bob@example.com", GrantRole::Viewer)]),
    );
    refused(create(&ada, &body).await, 403, "insufficient_scope");
    assert!(listed_ids(&ada).await.is_empty(), "nothing was created");
}

#[tokio::test]
async fn access_mode_without_allowed_users_needs_no_access_scope() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let review = create(
        &ada,
        &with_access(Some(AccessMode::Restricted), Some(vec![])),
    )
    .await
    .expect("create");
    assert_eq!(review.access.mode, AccessMode::Restricted);
    refused(
        bob.api().review(&review.review_id, false).await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn allowed_users_with_access_scope_grant_roles() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    let bob = server.user("bob@example.com", "Bob", &[], "");
    let eve = server.user("eve@example.com", "Eve", &[], "");
    let carol = server.user("carol@example.com", "Carol", &[], "");
    let mut body = with_access(
        Some(AccessMode::Restricted),
        Some(vec![
            grant("BOB@Example.com", GrantRole::Viewer),
            grant("eve@example.com", GrantRole::Editor),
        ]),
    );
    body.review.title = Some("Shared".into());
    let review = create(&ada, &body).await.expect("create");
    assert_eq!(review.access.mode, AccessMode::Restricted);
    let id = review.review_id.as_str();

    let as_bob = bob.api().review(id, false).await.expect("read");
    assert_eq!(as_bob.role, Role::Viewer);
    let as_eve = eve.api().review(id, false).await.expect("read");
    assert_eq!(as_eve.role, Role::Editor);
    refused(carol.api().review(id, false).await, 404, "not_found");
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
        let body = with_access(None, Some(vec![grant(email, GrantRole::Viewer)]));
        refused(create(&ada, &body).await, 400, "invalid_request");
    }
    // A grant without an email (raw: the typed client cannot send it).
    refused_raw(
        &ada,
        &json!({ "review": { "access": { "allowedUsers": [{ "role": "viewer" }] } } }),
    )
    .await;
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn unknown_role_or_mode_word_is_400() {
    // Raw: words outside the closed sets cannot be sent through the typed client.
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,access");
    for role in [json!("owner"), json!("admin"), json!("Viewer"), json!(null)] {
        let grant = json!({ "email": "bob@example.com", "role": role });
        refused_raw(
            &ada,
            &json!({ "review": { "access": { "allowedUsers": [grant] } } }),
        )
        .await;
    }
    for mode in ["public", "private", "Link"] {
        refused_raw(&ada, &json!({ "review": { "access": { "mode": mode } } })).await;
    }
    assert!(listed_ids(&ada).await.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Who may create

#[tokio::test]
async fn import_shared_token_may_create() {
    let server = Server::start();
    let review = server.importer().upload("Delivered", SAMPLE_HTML).await;
    assert_eq!(review.owner.id, "svc_import");
    assert_eq!(review.owner.provider, Provider::Service);
    let read = server
        .agent()
        .api()
        .review(&review.review_id, false)
        .await
        .expect("read");
    assert_eq!(read.title, "Delivered");
}

#[tokio::test]
async fn manage_and_agent_shared_tokens_may_not_create() {
    let server = Server::start();
    for client in [server.manager(), server.agent()] {
        refused(create(&client, &titled("Nope")).await, 403, "forbidden");
    }
    assert!(listed_ids(&server.importer()).await.is_empty());
}

#[tokio::test]
async fn personal_token_without_docs_scope_is_403_insufficient_scope() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    for scopes in ["", "comments", "access,comments,org"] {
        let ada = server.client(Some(&server.issue_token("ada@example.com", scopes)));
        refused(
            create(&ada, &titled("Nope")).await,
            403,
            "insufficient_scope",
        );
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
    refused(
        create(&root, &input(ReviewInput::default())).await,
        403,
        "insufficient_scope",
    );
}

// ---------------------------------------------------------------------------------------------
// Authentication

#[tokio::test]
async fn create_without_token_is_401_unauthorized() {
    let server = Server::start();
    let anonymous = server.client(None);
    refused(
        create(&anonymous, &input(ReviewInput::default())).await,
        401,
        "unauthorized",
    );
    refused(
        anonymous.api().list_reviews(&ListQuery::default()).await,
        401,
        "unauthorized",
    );
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
        refused(
            create(&client, &input(ReviewInput::default())).await,
            401,
            "unauthorized",
        );
        // Even where the answer would otherwise be 404.
        refused(
            client.api().review("rv_missing", false).await,
            401,
            "unauthorized",
        );
    }
    assert!(listed_ids(&ada).await.is_empty());
}

#[tokio::test]
async fn malformed_authorization_header_is_401_unauthorized() {
    // Raw: the `Authorization` header itself is the point.
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
    // Raw: the query string is the point.
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
    // Raw: the spelling of the scheme in the header is the point.
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let real = ada.token.clone().expect("token");
    let anonymous = server.client(None);
    let request = anonymous
        .raw("GET", "/api/reviews")
        .header("authorization", format!("bearer {real}"));
    anonymous.send(request).await.expect(200);
}
