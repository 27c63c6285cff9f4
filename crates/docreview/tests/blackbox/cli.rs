//! The command-line client as a person uses it: `auth login` approved through the real
//! `/cli-login` page, then a review entirely from the terminal; every exit code; the
//! credentials file's mode.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{SAMPLE_HTML, Server};
use serde_json::Value;

const PASSWORD: &str = "correct horse battery";

/// The binary, with its own config directory and no environment credentials.
fn cli(config: &Path) -> Command {
    let mut command = Command::new(support::binary());
    command
        .env("XDG_CONFIG_HOME", config)
        .env_remove("DOCREVIEW_URL")
        .env_remove("DOCREVIEW_TOKEN")
        .env("RUST_LOG", "off");
    command
}

fn run(config: &Path, args: &[&str]) -> Output {
    cli(config).args(args).output().expect("run the CLI")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

/// The value of `name` in a URL's query.
fn query_value(url: &str, name: &str) -> String {
    let url = reqwest::Url::parse(url).expect("a URL");
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_user_signs_in_from_the_terminal_and_reviews_a_document() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let config = tempfile::tempdir().expect("config dir");

    // `auth login`: the CLI prints the approval link, the person approves in the browser and
    // pastes the code back.
    let mut login = cli(config.path())
        .args(["auth", "login", "--base-url", &server.base, "--no-browser"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the login");
    let mut stderr = BufReader::new(login.stderr.take().expect("stderr"));
    let mut url = String::new();
    let mut line = String::new();
    while url.is_empty() {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("read") > 0,
            "no link printed"
        );
        if let Some(at) = line.find("http") {
            url = line[at..].trim().to_string();
        }
    }
    assert!(
        url.starts_with(&format!("{}/cli-login?", server.base)),
        "{url}"
    );
    let code = support::approve_cli_login(
        &session,
        &query_value(&url, "challenge"),
        &query_value(&url, "name"),
        &query_value(&url, "scopes"),
    )
    .await;
    let mut stdin = login.stdin.take().expect("stdin");
    writeln!(stdin, "{code}").expect("paste the code");
    drop(stdin);
    let done = login.wait_with_output().expect("login ends");
    assert!(done.status.success(), "login failed");
    let said = String::from_utf8_lossy(&done.stdout);
    assert!(
        said.contains("Signed in to") && said.contains("ada@example.com"),
        "{said}"
    );

    let hosts = config.path().join("docreview/hosts.toml");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&hosts)
            .expect("hosts.toml")
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "credentials readable by their owner only"
        );
    }
    let status = run(config.path(), &["auth", "status"]);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success() && shown.contains("docs, access, comments"),
        "{shown}"
    );

    // A review from the terminal.
    let file = config.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write the file");
    let uploaded = json_of(&run(
        config.path(),
        &[
            "reviews",
            "upload",
            file.to_str().expect("path"),
            "--title",
            "Plan",
            "--json",
        ],
    ));
    let id = uploaded["review"]["reviewId"]
        .as_str()
        .expect("an id")
        .to_string();
    let added = json_of(&run(
        config.path(),
        &[
            "comments",
            "add",
            &id,
            "--quote",
            "quick brown fox",
            "--body",
            "Which fox?",
            "--category",
            "revise",
            "--json",
        ],
    ));
    let cid = added["comment"]["id"]
        .as_str()
        .expect("a comment")
        .to_string();
    assert_eq!(
        added["comment"]["anchor"]["quote"]["exact"],
        "quick brown fox"
    );
    let replied = run(
        config.path(),
        &["comments", "reply", &id, &cid, "--body", "The red one."],
    );
    assert!(replied.status.success());
    let resolved = run(config.path(), &["comments", "resolve", &id, &cid]);
    assert!(resolved.status.success());
    let listed =
        String::from_utf8_lossy(&run(config.path(), &["comments", "list", &id]).stdout).to_string();
    assert!(
        listed.contains("Which fox?") && listed.contains("The red one."),
        "{listed}"
    );

    // What the server holds, read through the API.
    let read = session.get(&format!("/api/reviews/{id}")).await;
    let comment = &read.expect(200)["review"]["comments"][0];
    assert_eq!(comment["status"], "closed");
    assert_eq!(comment["category"], "revise");
    assert_eq!(comment["thread"][0]["body"], "The red one.");

    // A run from the terminal, search, and the token list.
    let started = json_of(&run(
        config.path(),
        &["runs", "start", &id, "--title", "Pass", "--json"],
    ));
    let run_id = started["run"]["id"].as_str().expect("a run").to_string();
    let draft = json_of(&run(
        config.path(),
        &[
            "runs",
            "comment",
            &id,
            &run_id,
            "--quote",
            "lazy dog",
            "--body",
            "Which dog?",
            "--json",
        ],
    ));
    assert_eq!(draft["comment"]["provisional"], true);
    let finished = json_of(&run(
        config.path(),
        &[
            "runs",
            "finish",
            &id,
            &run_id,
            "--summary",
            "One question.",
            "--json",
        ],
    ));
    assert_eq!(finished["run"]["status"], "completed");
    let bad_status = run(
        config.path(),
        &["runs", "finish", &id, &run_id, "--status", "running"],
    );
    assert_eq!(bad_status.status.code(), Some(2));
    let found = json_of(&run(
        config.path(),
        &["search", "comments", "fox", "--json"],
    ));
    assert_eq!(found["results"][0]["commentId"], cid.as_str());
    let shown =
        String::from_utf8_lossy(&run(config.path(), &["search", "docs", "fox"]).stdout).to_string();
    assert!(
        shown.contains("[fox]") || shown.contains("[Fox]"),
        "{shown}"
    );
    let tokens = json_of(&run(config.path(), &["tokens", "list", "--json"]));
    assert_eq!(tokens["tokens"].as_array().map(Vec::len), Some(1));

    // Exit codes: conflict 5, not found 6, usage 2.
    let again = run(config.path(), &["comments", "resolve", &id, &cid]);
    assert_eq!(
        again.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let missing = run(config.path(), &["reviews", "show", "rv_nope"]);
    assert_eq!(missing.status.code(), Some(6));
    let usage = run(config.path(), &["comments", "add", &id]);
    assert_eq!(usage.status.code(), Some(2), "no --body");
    let category = run(
        config.path(),
        &["comments", "add", &id, "--body", "x", "--category", "nit"],
    );
    assert_eq!(category.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&category.stderr).contains("needs_review"));

    // `auth logout` revokes the token on the server, then nothing is signed in (4).
    let token = String::from_utf8_lossy(&run(config.path(), &["auth", "token"]).stdout)
        .trim()
        .to_string();
    assert!(token.starts_with("drp_"), "{token}");
    assert!(run(config.path(), &["auth", "logout"]).status.success());
    server
        .client(Some(&token))
        .get("/api/me")
        .await
        .expect_error(401, "unauthorized");
    let after = run(config.path(), &["reviews", "list"]);
    assert_eq!(after.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&after.stderr).contains("docreview auth login"));
}

#[tokio::test]
async fn a_token_from_standard_input_and_the_environment_work_too() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs");
    let config = tempfile::tempdir().expect("config dir");

    let mut login = cli(config.path())
        .args(["auth", "login", "--with-token", "--base-url", &server.base])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    writeln!(login.stdin.take().expect("stdin"), "{token}").expect("write");
    assert!(login.wait_with_output().expect("ends").status.success());
    let listed = json_of(&run(config.path(), &["reviews", "list", "--json"]));
    assert_eq!(listed["reviews"], serde_json::json!([]));

    // A bad token is refused as "not signed in" (4), and says what to do.
    let empty = tempfile::tempdir().expect("config dir");
    let refused = cli(empty.path())
        .env("DOCREVIEW_URL", &server.base)
        .env(
            "DOCREVIEW_TOKEN",
            "drp_notarealtokenatallnotarealtokenatallnotarealtok",
        )
        .args(["reviews", "list"])
        .output()
        .expect("run");
    assert_eq!(refused.status.code(), Some(4));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("docreview auth login") && !said.contains("notarealtoken"),
        "{said}"
    );

    // An unreachable server is a plain error (1) that says what to check.
    let down = cli(empty.path())
        .env("DOCREVIEW_URL", "http://127.0.0.1:9")
        .env("DOCREVIEW_TOKEN", &token)
        .args(["reviews", "list"])
        .output()
        .expect("run");
    assert_eq!(down.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&down.stderr).contains("running"));
}

/// The client against `server` as `token`, through the environment.
fn as_user(config: &Path, server: &Server, token: &str, args: &[&str]) -> Output {
    cli(config)
        .env("DOCREVIEW_URL", &server.base)
        .env("DOCREVIEW_TOKEN", token)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the CLI")
}

/// Standard output of a successful command, trimmed.
fn text_of(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

#[tokio::test]
async fn every_operation_group_works_from_the_terminal_with_jq() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &["--admin"]);
    server.create_user("bob@example.com", "Bob", &[]);
    server.import_projects(&serde_json::json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "company": "Acme Corp", "status": "active" }
    ]}));
    let token = server.issue_token("ada@example.com", "docs,access,comments,org");
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write");
    let file = file.to_str().expect("path");
    let cmd = |args: &[&str]| as_user(dir.path(), &server, &token, args);

    let id = text_of(&cmd(&[
        "reviews",
        "upload",
        file,
        "--title",
        "Plan",
        "--jq",
        ".review.reviewId",
    ]));
    assert!(id.starts_with("rv_"), "{id}");
    assert_eq!(
        text_of(&cmd(&["reviews", "list", "--jq", ".reviews[].title"])),
        "Plan"
    );

    // A bad expression is a usage error before anything is sent.
    let bad = cmd(&["reviews", "title", &id, "Never", "--jq", ".title["]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("jq"));
    assert_eq!(
        text_of(&cmd(&["reviews", "show", &id, "--jq", ".review.title"])),
        "Plan"
    );

    assert_eq!(
        text_of(&cmd(&[
            "reviews",
            "title",
            &id,
            "Plan B",
            "--jq",
            ".review.title"
        ])),
        "Plan B"
    );
    let tags = [
        "reviews",
        "tags",
        &id,
        "--add",
        "alpha",
        "--add",
        "beta",
        "--jq",
        ".review.tags | join(\",\")",
    ];
    assert_eq!(text_of(&cmd(&tags)), "alpha,beta");
    let tags = [
        "reviews",
        "tags",
        &id,
        "--remove",
        "alpha",
        "--jq",
        ".review.tags | join(\",\")",
    ];
    assert_eq!(text_of(&cmd(&tags)), "beta");
    assert_eq!(text_of(&cmd(&["reviews", "tags", &id])), "beta");
    let cleared = [
        "reviews",
        "tags",
        &id,
        "--set",
        "",
        "--jq",
        ".review.tags | length",
    ];
    assert_eq!(text_of(&cmd(&cleared)), "0");
    let set = [
        "reviews",
        "tags",
        &id,
        "--set",
        "beta,gamma",
        "--jq",
        ".review.tags | join(\",\")",
    ];
    assert_eq!(text_of(&cmd(&set)), "beta,gamma");
    // Without a browser (no terminal here), `open` prints the review screen's address.
    let opened = text_of(&cmd(&["reviews", "open", &id]));
    assert_eq!(opened, format!("{}/reviews/{id}", server.base));
    let versions = ".review.source.versions | length";
    let added = [
        "reviews",
        "add-version",
        &id,
        file,
        "--label",
        "v2",
        "--jq",
        versions,
    ];
    assert_eq!(text_of(&cmd(&added)), "2");
    assert_eq!(
        text_of(&cmd(&["reviews", "replace", &id, file, "--jq", versions])),
        "2"
    );
    assert_eq!(
        text_of(&cmd(&[
            "reviews",
            "archive",
            &id,
            "--jq",
            ".review.archived"
        ])),
        "true"
    );
    let restored = [
        "reviews",
        "archive",
        &id,
        "--undo",
        "--jq",
        ".review.archived",
    ];
    assert_eq!(text_of(&cmd(&restored)), "false");

    // Comments: add, edit, move, take back.
    let added = [
        "comments",
        "add",
        &id,
        "--quote",
        "quick brown fox",
        "--body",
        "Hi",
    ];
    let comment = text_of(&cmd(&[&added[..], &["--jq", ".comment.id"]].concat()));
    let edited = [
        "comments",
        "edit",
        &id,
        &comment,
        "--body",
        "Changed",
        "--jq",
        ".comment.body",
    ];
    assert_eq!(text_of(&cmd(&edited)), "Changed");
    let moved = [
        "comments",
        "reanchor",
        &id,
        &comment,
        "--section",
        "details",
    ];
    let moved = [&moved[..], &["--jq", ".comment.anchor.sectionId"]].concat();
    assert_eq!(text_of(&cmd(&moved)), "details");
    let lost = cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "no such words",
        "--body",
        "Hi",
    ]);
    assert_eq!(lost.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&lost.stderr).contains("reviews show"),
        "says what to do"
    );
    let cancelled = cmd(&["comments", "cancel", &id, &comment, "--json"]);
    assert!(json_of(&cancelled)["commentsRevision"].is_i64());
    assert_eq!(
        text_of(&cmd(&["comments", "list", &id, "--jq", "length"])),
        "0"
    );

    // Sharing and projects.
    let shared = [
        "reviews",
        "share",
        &id,
        "--mode",
        "restricted",
        "--add",
        "bob@example.com=editor",
    ];
    let shared = json_of(&cmd(&[&shared[..], &["--json"]].concat()));
    assert_eq!(shared["mode"], "restricted");
    assert_eq!(shared["allowedUsers"][0]["email"], "bob@example.com");
    assert_eq!(shared["allowedUsers"][0]["role"], "editor");
    let unshared = [
        "reviews",
        "share",
        &id,
        "--remove",
        "bob@example.com",
        "--jq",
        ".allowedUsers | length",
    ];
    assert_eq!(text_of(&cmd(&unshared)), "0");
    let bad_role = cmd(&["reviews", "share", &id, "--add", "bob@example.com=owner"]);
    assert_eq!(bad_role.status.code(), Some(2));

    assert_eq!(
        text_of(&cmd(&["projects", "list", "--jq", ".projects[].code"])),
        "ACME"
    );
    let linked = [
        "projects",
        "link",
        "ACME",
        &id,
        "--jq",
        ".review._project.code",
    ];
    assert_eq!(text_of(&cmd(&linked)), "ACME");
    let roles = [
        "projects",
        "roles",
        "ACME",
        "--add",
        "bob@example.com=viewer",
    ];
    let roles = [&roles[..], &["--jq", ".roles[] | .email + \" \" + .role"]].concat();
    assert_eq!(text_of(&cmd(&roles)), "bob@example.com viewer");
    let unlinked = [
        "projects",
        "unlink",
        "ACME",
        &id,
        "--jq",
        ".review._project",
    ];
    assert_eq!(text_of(&cmd(&unlinked)), "null");

    // The organization.
    let members = text_of(&cmd(&["org", "members", "--jq", ".members[].email"]));
    assert!(members.contains("ada@example.com") && members.contains("bob@example.com"));
    assert_eq!(
        text_of(&cmd(&[
            "org",
            "admins",
            "add",
            "bob@example.com",
            "--jq",
            ".admin.isAdmin"
        ])),
        "true"
    );
    let admins = text_of(&cmd(&["org", "admins", "list", "--jq", ".admins | length"]));
    assert_eq!(admins, "2");
    cmd(&["org", "admins", "remove", "bob@example.com"]);
    let suspended = [
        "org",
        "members",
        "suspend",
        "bob@example.com",
        "--jq",
        ".member.status",
    ];
    assert_eq!(text_of(&cmd(&suspended)), "suspended");
    let active = [
        "org",
        "members",
        "reactivate",
        "bob@example.com",
        "--jq",
        ".member.status",
    ];
    assert_eq!(text_of(&cmd(&active)), "active");

    // Ownership, then deletion, which asks first (and cannot ask without a terminal).
    text_of(&cmd(&["reviews", "share", &id, "--mode", "link"]));
    let owner = [
        "reviews",
        "owner",
        &id,
        "bob@example.com",
        "--jq",
        ".review.owner.displayName",
    ];
    assert_eq!(text_of(&cmd(&owner)), "Bob");
    let unasked = cmd(&["reviews", "delete", &id]);
    assert_eq!(unasked.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unasked.stderr).contains("--yes"));
    text_of(&cmd(&["reviews", "delete", &id, "--yes"]));
    assert_eq!(cmd(&["reviews", "show", &id]).status.code(), Some(6));
}

/// An HTTPS front for `server` on a random loopback port, with the certificate of
/// `fixtures/tls/server.pem` (for `localhost` and 127.0.0.1, issued by `fixtures/tls/ca.pem`):
/// it ends TLS and passes the bytes on, as a TLS-terminating proxy would.
async fn https_front(server: &Server) -> String {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/blackbox/fixtures/tls");
    let chain = CertificateDer::pem_file_iter(fixtures.join("server.pem"))
        .expect("server.pem")
        .collect::<Result<Vec<_>, _>>()
        .expect("certificates");
    let key = PrivateKeyDer::from_pem_file(fixtures.join("server.key")).expect("server.key");
    let config = rustls::ServerConfig::builder_with_provider(
        rustls::crypto::ring::default_provider().into(),
    )
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let backend = server.base.trim_start_matches("http://").to_string();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let backend = backend.clone();
            tokio::spawn(async move {
                // A refused handshake (the client distrusts the certificate) just ends here.
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let mut plain = tokio::net::TcpStream::connect(&backend)
                    .await
                    .expect("backend");
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    format!("https://localhost:{port}")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_speaks_https_and_trusts_only_what_the_system_trusts() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,comments");
    let base = https_front(&server).await;
    let config = tempfile::tempdir().expect("config dir");
    let ca = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/blackbox/fixtures/tls/ca.pem");

    let signed_in_at = |base: &str, trust: Option<&Path>| {
        let mut command = cli(config.path());
        command
            .env("DOCREVIEW_URL", base)
            .env("DOCREVIEW_TOKEN", &token)
            .env_remove("SSL_CERT_DIR")
            .args(["auth", "status", "--json"]);
        match trust {
            Some(file) => command.env("SSL_CERT_FILE", file),
            None => command.env_remove("SSL_CERT_FILE"),
        };
        command.output().expect("run the CLI")
    };
    let signed_in = |trust: Option<&Path>| signed_in_at(&base, trust);

    // Trusting the CA that issued the front's certificate (as an operator with an internal CA
    // would, through the system store or `SSL_CERT_FILE`), the whole exchange runs over TLS.
    let status = json_of(&signed_in(Some(&ca)));
    assert_eq!(status["user"]["email"], "ada@example.com", "{status}");
    assert_eq!(status["baseUrl"], base.as_str());

    // The system store alone does not know that CA: the handshake is refused, and the CLI says
    // so instead of sending the token anywhere.
    let refused = signed_in(None);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("could not reach the server"), "{stderr}");
    assert!(
        stderr.contains("UnknownIssuer"),
        "the cause is named: {stderr}"
    );
    assert!(stderr.contains("SSL_CERT_FILE"), "and what to do: {stderr}");
    assert!(
        !stderr.contains(&token),
        "the token stays out of errors: {stderr}"
    );

    // A machine with no certificates at all cannot speak HTTPS, and says what to do; plain HTTP
    // (a server on the same machine) still works there.
    let no_certificates = Path::new("/dev/null");
    let refused = signed_in(Some(no_certificates));
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("cannot set up HTTPS"), "{stderr}");
    assert!(stderr.contains("SSL_CERT_FILE"), "{stderr}");
    assert!(
        !stderr.contains("could not reach"),
        "nothing was sent: {stderr}"
    );
    let plain = json_of(&signed_in_at(&server.base, Some(no_certificates)));
    assert_eq!(plain["user"]["email"], "ada@example.com", "{plain}");
}

/// Under `umask 000` the credentials' folder is still the owner's alone (0700) and the file
/// 0600; a folder left open by an older client is closed on the next save.
#[cfg(unix)]
#[tokio::test]
async fn the_credentials_folder_is_private_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs");
    let config = tempfile::tempdir().expect("config dir");
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("exists")
            .permissions()
            .mode()
            & 0o777
    };
    let folder = config.path().join("docreview");
    let sign_in = || {
        // The login runs under umask 000, set by a shell that then becomes the client.
        let mut login = Command::new("sh")
            .args(["-c", "umask 000 && exec \"$0\" \"$@\""])
            .arg(support::binary())
            .args(["auth", "login", "--with-token", "--base-url", &server.base])
            .env("XDG_CONFIG_HOME", config.path())
            .env_remove("DOCREVIEW_URL")
            .env_remove("DOCREVIEW_TOKEN")
            .env("RUST_LOG", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start");
        writeln!(login.stdin.take().expect("stdin"), "{token}").expect("write");
        let done = login.wait_with_output().expect("ends");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    };
    sign_in();
    assert_eq!(mode(&folder), 0o700, "the folder is its owner's alone");
    assert_eq!(mode(&folder.join("hosts.toml")), 0o600);

    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).expect("open it");
    sign_in();
    assert_eq!(mode(&folder), 0o700, "an open folder is closed again");
    assert!(
        !folder.join("hosts.toml.tmp").exists(),
        "no temporary file is left behind"
    );
    let listed = json_of(&run(config.path(), &["reviews", "list", "--json"]));
    assert_eq!(listed["reviews"], serde_json::json!([]));
}
