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

/// `auth login` with its default scopes as a person does it: the CLI prints the approval link,
/// the person approves it in the browser (`session`) and pastes the code back.
async fn browser_login(config: &Path, base: &str, session: &support::Client) -> Output {
    let mut login = cli(config)
        .args(["auth", "login", "--base-url", base, "--no-browser"])
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
    assert!(url.starts_with(&format!("{base}/cli-login?")), "{url}");
    let code = support::approve_cli_login(
        session,
        &query_value(&url, "challenge"),
        &query_value(&url, "name"),
        &query_value(&url, "scopes"),
    )
    .await;
    let mut stdin = login.stdin.take().expect("stdin");
    writeln!(stdin, "{code}").expect("paste the code");
    drop(stdin);
    login.wait_with_output().expect("login ends")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_user_signs_in_from_the_terminal_and_reviews_a_document() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let config = tempfile::tempdir().expect("config dir");

    // `auth login`: the CLI prints the approval link, the person approves in the browser and
    // pastes the code back.
    let done = browser_login(config.path(), &server.base, &session).await;
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
    let said = String::from_utf8_lossy(&lost.stderr);
    assert!(
        said.contains("reviews text") || said.contains("--at"),
        "says what to do: {said}"
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

/// The client against `server` as `token`, with `input` on standard input.
fn with_input(config: &Path, server: &Server, token: &str, args: &[&str], input: Stdio) -> Output {
    cli(config)
        .env("DOCREVIEW_URL", &server.base)
        .env("DOCREVIEW_TOKEN", token)
        .args(args)
        .stdin(input)
        .output()
        .expect("run the CLI")
}

/// Standard input that holds `text`.
fn input_of(dir: &Path, name: &str, text: &[u8]) -> Stdio {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the input");
    Stdio::from(std::fs::File::open(&path).expect("open the input"))
}

/// A failed command: its exit code, and its standard error, which must say `says`.
#[track_caller]
fn refused(output: &Output, code: i32, says: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    for words in says {
        assert!(stderr.contains(words), "`{words}` missing from: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// JSON text without the white space outside its strings.
fn compact(json: &str) -> String {
    let mut out = String::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

#[tokio::test]
async fn json_is_the_apis_answer_unchanged() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,access,comments");
    let api = server.client(Some(&token));
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write");
    let cmd = |args: &[&str]| json_of(&as_user(dir.path(), &server, &token, args));

    // Writes: the answer is the API's body (`{ review }`, `{ run }`, `{ comment, … }`), and what
    // it holds is what a read through the API shows next.
    let uploaded = cmd(&["reviews", "upload", file.to_str().expect("path"), "--json"]);
    let id = uploaded["review"]["reviewId"]
        .as_str()
        .expect("{ review } as the API answers")
        .to_string();
    let read = api.get(&format!("/api/reviews/{id}")).await;
    assert_eq!(
        uploaded["review"]["source"],
        read.expect(200)["review"]["source"]
    );
    let started = cmd(&["runs", "start", &id, "--title", "Pass", "--json"]);
    let run_id = started["run"]["id"]
        .as_str()
        .expect("`.run.id`")
        .to_string();
    let written = cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "lazy dog",
        "--body",
        "Which dog?",
        "--json",
    ]);
    assert!(written["commentsRevision"].is_i64(), "{written}");
    let read = api.get(&format!("/api/reviews/{id}")).await;
    let review = &read.expect(200)["review"];
    assert_eq!(review["aiReviewRuns"][0], started["run"]);
    assert_eq!(review["comments"][0], written["comment"]);

    // Reads: the same JSON as the same request to the API, field for field.
    let pairs: Vec<(Vec<&str>, String)> = vec![
        (vec!["reviews", "show", &id], format!("/api/reviews/{id}")),
        (vec!["reviews", "list"], "/api/reviews?limit=50".to_string()),
        (
            vec!["reviews", "outline", &id],
            format!("/api/reviews/{id}/dom-context"),
        ),
        (
            vec!["reviews", "share", &id],
            format!("/api/reviews/{id}/access"),
        ),
        (
            vec!["search", "comments", "dog"],
            "/api/search/comments?q=dog".to_string(),
        ),
        (
            vec!["search", "docs", "fox"],
            "/api/search/docs?q=fox".to_string(),
        ),
    ];
    for (args, path) in pairs {
        let output = as_user(
            dir.path(),
            &server,
            &token,
            &[&args[..], &["--json"]].concat(),
        );
        let shown = json_of(&output);
        let answered = api.get(&path).await;
        assert_eq!(&shown, answered.expect(200), "{args:?} against {path}");
        // Byte for byte but white space: keys in the server's order, numbers as it spelled them.
        assert_eq!(
            compact(&String::from_utf8_lossy(&output.stdout)),
            answered.text,
            "{args:?}"
        );
    }
    // The lists are the arrays of the document's answer, every field kept.
    let comments = cmd(&["comments", "list", &id, "--json"]);
    let runs = cmd(&["runs", "list", &id, "--json"]);
    let read = api.get(&format!("/api/reviews/{id}")).await;
    let review = &read.expect(200)["review"];
    assert_eq!(comments, review["comments"]);
    assert_eq!(runs, review["aiReviewRuns"]);

    // Finishing: `{ run }` again, and deletion answers as the API does.
    let cancelled = cmd(&["runs", "cancel", &id, &run_id, "--json"]);
    assert_eq!(cancelled["run"]["status"], "cancelled");
    let deleted = cmd(&["reviews", "delete", &id, "--yes", "--json"]);
    assert!(deleted.is_object(), "{deleted}");
    api.get(&format!("/api/reviews/{id}"))
        .await
        .expect_error(404, "not_found");

    // The help says so.
    let help = text_of(&as_user(
        dir.path(),
        &server,
        &token,
        &["runs", "start", "--help"],
    ));
    assert!(help.contains("answer unchanged"), "{help}");
}

#[tokio::test]
async fn the_text_the_outline_and_quotes_that_recover() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,comments");
    let api = server.client(Some(&token));
    let dir = tempfile::tempdir().expect("dir");
    let cmd = |args: &[&str]| as_user(dir.path(), &server, &token, args);
    let html = "<h1 id=\"plan\">Plan</h1><p>The backlog has grown since spring.</p>\
        <h2 id=\"risks\">Risks</h2><p>The backlog is a risk.</p><p>Staff is short.</p>";
    let id = api.upload("Plan", html).await.review_id;

    // The outline: each section's id (what --section takes) and heading, indented by level.
    let outline = text_of(&cmd(&["reviews", "outline", &id]));
    let lines: Vec<&str> = outline.lines().collect();
    assert_eq!(lines.len(), 2, "{outline}");
    assert!(
        lines[0].starts_with("plan") && lines[0].ends_with("Plan"),
        "{outline}"
    );
    assert!(
        lines[1].starts_with("risks") && lines[1].ends_with("  Risks"),
        "{outline}"
    );

    // The text as a reader sees it: blocks on their own lines (the HTML has no white space
    // between them), every other character the document's own.
    let text = text_of(&cmd(&["reviews", "text", &id]));
    assert_eq!(
        text,
        "Plan\nThe backlog has grown since spring.\nRisks\nThe backlog is a risk.\nStaff is short."
    );
    let section = text_of(&cmd(&["reviews", "text", &id, "--section", "risks"]));
    assert_eq!(section, "Risks\nThe backlog is a risk.\nStaff is short.");
    let json = json_of(&cmd(&[
        "reviews",
        "text",
        &id,
        "--section",
        "risks",
        "--json",
    ]));
    assert_eq!(json["sectionId"], "risks");
    assert_eq!(json["reviewId"], id.as_str());
    assert!(json["start"].as_u64() < json["end"].as_u64(), "{json}");

    // Unknown sections and documents are not found (6), and say where to look.
    refused(
        &cmd(&["reviews", "text", &id, "--section", "nope"]),
        6,
        &["nope", "reviews outline"],
    );
    refused(&cmd(&["reviews", "text", "rv_nope"]), 6, &["not found"]);
    refused(&cmd(&["reviews", "outline", "rv_nope"]), 6, &["not found"]);
    refused(&cmd(&["reviews", "text", "../../etc"]), 6, &["not found"]);

    // A quote that is not in the text: the passages it may mean, whole words, each with the
    // flags that send it back; sent back, it anchors exactly there.
    let missed = cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "backlog has grwn",
        "--body",
        "When?",
    ]);
    let said = refused(
        &missed,
        1,
        &["“backlog has grown”", "in section plan", "--at"],
    );
    let at = said
        .split("--at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("an offset")
        .to_string();
    assert!(said.contains("--quote 'backlog has grown'"), "{said}");
    let written = json_of(&cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "backlog has grown",
        "--at",
        &at,
        "--body",
        "When?",
        "--json",
    ]));
    let anchor = &written["comment"]["anchor"];
    assert_eq!(anchor["state"], "exact");
    assert_eq!(anchor["position"]["start"].to_string(), at);

    // --section narrows a quote: the second "backlog", and a refusal that names where it is.
    let narrowed = json_of(&cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "backlog",
        "--section",
        "risks",
        "--body",
        "Which?",
        "--json",
    ]));
    assert_eq!(narrowed["comment"]["anchor"]["sectionId"], "risks");
    assert!(narrowed.get("quoteMatches").is_none(), "{narrowed}");
    let elsewhere = cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "since spring",
        "--section",
        "risks",
        "--body",
        "x",
    ]);
    refused(
        &elsewhere,
        1,
        &["not in section `risks`", "in section plan"],
    );
    // Nothing close at all: where to read the text.
    let nothing = cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "zzxq qqzx",
        "--body",
        "x",
    ]);
    refused(&nothing, 1, &["reviews text", "reviews outline"]);
    // --at without a quote is a usage error.
    refused(
        &cmd(&["comments", "add", &id, "--at", "3", "--body", "x"]),
        2,
        &["--quote"],
    );
}

#[tokio::test]
async fn runs_list_and_cancel_comment_filters_and_counts() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada Lovelace", &[]);
    server.create_user("bob@example.com", "Bob", &[]);
    let ada = server.issue_token("ada@example.com", "docs,comments");
    let bob = server.issue_token("bob@example.com", "comments");
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write");
    let cmd = |args: &[&str]| as_user(dir.path(), &server, &ada, args);

    // Upload prints the id and the review screen's address.
    let uploaded = text_of(&cmd(&["reviews", "upload", file.to_str().expect("path")]));
    let id = uploaded
        .split_whitespace()
        .find(|word| word.starts_with("rv_"))
        .expect("the id")
        .trim_end_matches('.')
        .to_string();
    assert!(
        uploaded.contains(&format!("{}/reviews/{id}", server.base)),
        "{uploaded}"
    );

    // Runs: none, then two, one cancelled.
    assert!(text_of(&cmd(&["runs", "list", &id])).contains("No runs"));
    let first = text_of(&cmd(&[
        "runs", "start", &id, "--title", "Style", "--jq", ".run.id",
    ]));
    let second = text_of(&cmd(&["runs", "start", &id, "--jq", ".run.id"]));
    let cancelled = text_of(&cmd(&["runs", "cancel", &id, &second]));
    assert_eq!(cancelled, format!("Run {second} cancelled."));
    let listed = text_of(&cmd(&["runs", "list", &id]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].contains(&first) && lines[0].contains("[running] Style, 0 comments"),
        "{listed}"
    );
    assert!(
        lines[1].contains(&second) && lines[1].contains("[cancelled]"),
        "{listed}"
    );
    // A run that is over cannot be cancelled (409: 5); unknown runs and documents are 6.
    refused(&cmd(&["runs", "cancel", &id, &second]), 5, &["running"]);
    refused(
        &cmd(&["runs", "cancel", &id, "run_nope"]),
        6,
        &["not found"],
    );
    refused(&cmd(&["runs", "list", "rv_nope"]), 6, &["not found"]);
    // One comment in the first run, completed: "1 comment".
    text_of(&cmd(&[
        "runs",
        "comment",
        &id,
        &first,
        "--quote",
        "lazy dog",
        "--body",
        "Which dog?",
    ]));
    let finished = text_of(&cmd(&["runs", "finish", &id, &first, "--summary", "One."]));
    assert_eq!(finished, format!("Run {first} completed with 1 comment."));
    assert!(text_of(&cmd(&["runs", "list", &id])).contains("[completed] Style, 1 comment: One."));

    // Comments by two people, in two categories, one resolved.
    let ada_revise = text_of(&cmd(&[
        "comments",
        "add",
        &id,
        "--quote",
        "quick brown fox",
        "--body",
        "Fox?",
        "--category",
        "revise",
        "--jq",
        ".comment.id",
    ]));
    text_of(&cmd(&["comments", "resolve", &id, &ada_revise]));
    text_of(&as_user(
        dir.path(),
        &server,
        &bob,
        &[
            "comments",
            "add",
            &id,
            "--section",
            "details",
            "--body",
            "More?",
            "--category",
            "consult",
        ],
    ));
    let count = |filters: &[&str]| {
        let args = [&["comments", "list", &id][..], filters, &["--jq", "length"]].concat();
        text_of(&cmd(&args))
    };
    assert_eq!(count(&[]), "3");
    assert_eq!(count(&["--status", "open"]), "2");
    assert_eq!(count(&["--status", "closed"]), "1");
    assert_eq!(count(&["--category", "consult"]), "1");
    assert_eq!(count(&["--author", "me"]), "2");
    assert_eq!(count(&["--author", "bob"]), "1");
    assert_eq!(
        count(&["--author", "ada lovelace", "--status", "open"]),
        "1"
    );
    assert_eq!(count(&["--assignee", "me"]), "0", "nobody is assigned");
    refused(
        &cmd(&["comments", "list", &id, "--status", "done"]),
        2,
        &["open", "closed"],
    );
    refused(
        &cmd(&["comments", "list", &id, "--category", "nit"]),
        2,
        &["needs_review"],
    );
    refused(&cmd(&["comments", "list", "rv_nope"]), 6, &["not found"]);

    // Text for people: a count first ("1 comment"), no blank first line, a blank line between.
    let one = text_of(&cmd(&["comments", "list", &id, "--author", "bob"]));
    assert!(one.starts_with("1 comment\n\ncm_"), "{one}");
    let raw = String::from_utf8_lossy(&cmd(&["comments", "list", &id]).stdout).to_string();
    assert!(raw.starts_with("3 comments\n\ncm_"), "{raw}");
    assert_eq!(raw.matches("\n\ncm_").count(), 3, "{raw}");
    let none = text_of(&cmd(&["comments", "list", &id, "--category", "delete"]));
    assert_eq!(none, "No comments match.");
    let shown = String::from_utf8_lossy(&cmd(&["reviews", "show", &id]).stdout).to_string();
    assert!(
        !shown.starts_with('\n') && shown.contains("Comments: 3\n\ncm_"),
        "{shown}"
    );
}

#[tokio::test]
async fn bodies_from_standard_input_and_files_and_every_way_they_fail() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,comments");
    let api = server.client(Some(&token));
    let id = api.upload("Plan", SAMPLE_HTML).await.review_id;
    let dir = tempfile::tempdir().expect("dir");
    let run = |args: &[&str], input: Stdio| with_input(dir.path(), &server, &token, args, input);

    // `--body -`: standard input, its last line break dropped, Markdown kept as written.
    let text = "Two points:\n\n- the fox\n- the dog\n";
    let added = json_of(&run(
        &[
            "comments", "add", &id, "--quote", "lazy dog", "--body", "-", "--json",
        ],
        input_of(dir.path(), "body.md", text.as_bytes()),
    ));
    assert_eq!(
        added["comment"]["body"],
        "Two points:\n\n- the fox\n- the dog"
    );
    let comment = added["comment"]["id"].as_str().expect("id").to_string();
    // `--body-file`, for a reply and an edit.
    let reply = dir.path().join("reply.md");
    std::fs::write(&reply, "From a *file*.\n").expect("write");
    let reply = reply.to_str().expect("path");
    let replied = json_of(&run(
        &[
            "comments",
            "reply",
            &id,
            &comment,
            "--body-file",
            reply,
            "--json",
        ],
        Stdio::null(),
    ));
    assert_eq!(replied["message"]["body"], "From a *file*.");
    let edited = json_of(&run(
        &["comments", "edit", &id, &comment, "--body", "-", "--json"],
        input_of(dir.path(), "edit.md", "Edited.".as_bytes()),
    ));
    assert_eq!(edited["comment"]["body"], "Edited.");
    // A body may start with a dash.
    let dashed = json_of(&run(
        &["comments", "add", &id, "--body", "- one item", "--json"],
        Stdio::null(),
    ));
    assert_eq!(dashed["comment"]["body"], "- one item");

    // Refusals, each before anything is sent.
    let before =
        api.get(&format!("/api/reviews/{id}")).await.expect(200)["review"]["commentsRevision"]
            .clone();
    let missing = dir.path().join("nope.md");
    let missing = missing.to_str().expect("path");
    refused(
        &run(
            &["comments", "add", &id, "--body-file", missing],
            Stdio::null(),
        ),
        1,
        &["nope.md", "No such file or directory"],
    );
    refused(
        &run(
            &[
                "comments",
                "reply",
                &id,
                &comment,
                "--body-file",
                dir.path().to_str().expect("dir"),
            ],
            Stdio::null(),
        ),
        1,
        &["Is a directory"],
    );
    refused(
        &run(
            &["comments", "add", &id, "--body-file", missing],
            Stdio::null(),
        ),
        1,
        &["No such file"],
    );
    refused(
        &run(&["comments", "add", &id, "--body", "-"], Stdio::null()),
        1,
        &["standard input is empty"],
    );
    refused(
        &run(
            &["comments", "add", &id, "--body", "-"],
            input_of(dir.path(), "blank", b"\n \n"),
        ),
        1,
        &["standard input is empty"],
    );
    let directory = Stdio::from(std::fs::File::open(dir.path()).expect("open the directory"));
    refused(
        &run(&["comments", "add", &id, "--body", "-"], directory),
        1,
        &[
            "could not read the text from standard input",
            "Is a directory",
        ],
    );
    refused(
        &run(
            &["comments", "add", &id, "--body", "-"],
            input_of(dir.path(), "latin1", b"caf\xe9\n"),
        ),
        1,
        &["not UTF-8"],
    );
    let blank = dir.path().join("blank.md");
    std::fs::write(&blank, "").expect("write");
    refused(
        &run(
            &[
                "comments",
                "add",
                &id,
                "--body-file",
                blank.to_str().expect("path"),
            ],
            Stdio::null(),
        ),
        1,
        &["is empty"],
    );
    refused(
        &run(
            &["comments", "add", &id, "--body", "x", "--body-file", reply],
            Stdio::null(),
        ),
        2,
        &["--body-file"],
    );
    refused(
        &run(&["comments", "reply", &id, &comment], Stdio::null()),
        2,
        &["--body"],
    );
    // The category is checked before standard input is read.
    refused(
        &run(
            &["comments", "add", &id, "--body", "-", "--category", "nit"],
            Stdio::null(),
        ),
        2,
        &["needs_review"],
    );
    let after =
        api.get(&format!("/api/reviews/{id}")).await.expect(200)["review"]["commentsRevision"]
            .clone();
    assert_eq!(before, after, "nothing was written");

    // Bad ids: not found (6), from standard input too.
    refused(
        &run(
            &["comments", "add", "rv_nope", "--body", "-"],
            input_of(dir.path(), "x", b"x"),
        ),
        6,
        &["not found"],
    );
    refused(
        &run(
            &["comments", "reply", &id, "cm_nope", "--body-file", reply],
            Stdio::null(),
        ),
        6,
        &["not found"],
    );
}

#[tokio::test]
async fn login_refusals_read_well() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let config = tempfile::tempdir().expect("config dir");
    let login = |args: &[&str], input: Stdio| {
        cli(config.path())
            .args([&["auth", "login", "--base-url", &server.base][..], args].concat())
            .stdin(input)
            .output()
            .expect("run")
    };
    // Standard input closes before the code is pasted (a script, or Ctrl-D).
    let closed = refused(
        &login(&["--no-browser"], Stdio::null()),
        1,
        &[
            "standard input closed before the code was given",
            "--with-token",
        ],
    );
    assert!(
        closed.contains("/cli-login?"),
        "the link was shown first: {closed}"
    );
    refused(
        &login(&["--with-token"], Stdio::null()),
        1,
        &[
            "standard input closed before the token was given",
            "--with-token",
        ],
    );
    refused(
        &login(&["--with-token"], input_of(config.path(), "blank", b"\n")),
        1,
        &["the token was empty"],
    );
    let directory = Stdio::from(std::fs::File::open(config.path()).expect("open the directory"));
    refused(
        &login(&["--with-token"], directory),
        1,
        &[
            "could not read the token from standard input",
            "Is a directory",
        ],
    );
    // A wrong code and a wrong token are refused by the server, and nothing is saved.
    refused(
        &login(
            &["--no-browser"],
            input_of(config.path(), "code", b"AAAAA-BBBBB\n"),
        ),
        1,
        &["invalid_request"],
    );
    refused(
        &login(
            &["--with-token"],
            input_of(config.path(), "token", b"drp_not_a_token\n"),
        ),
        4,
        &["auth login"],
    );
    assert!(!config.path().join("docreview/hosts.toml").exists());
    // Unknown scopes are a usage error, before any link is made.
    let unknown = refused(
        &login(&["--scopes", "docs,admin"], Stdio::null()),
        2,
        &["admin"],
    );
    assert!(
        unknown.contains("access"),
        "the scopes there are: {unknown}"
    );
    assert!(!unknown.contains("cli-login"), "{unknown}");
}

#[tokio::test]
async fn refused_scopes_say_which_to_ask_for() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    server.create_user("bob@example.com", "Bob", &[]);
    let comments_only = server.issue_token("ada@example.com", "comments");
    let defaults = server.issue_token("ada@example.com", "docs,access,comments");
    let id = server
        .client(Some(&defaults))
        .upload("Plan", SAMPLE_HTML)
        .await
        .review_id;
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write");

    let share = ["reviews", "share", &id, "--mode", "restricted"];
    refused(
        &as_user(dir.path(), &server, &comments_only, &share),
        1,
        &[
            "insufficient_scope",
            "`access`",
            "docreview auth login --scopes docs,access,comments`",
        ],
    );
    let upload = ["reviews", "upload", file.to_str().expect("path")];
    refused(
        &as_user(dir.path(), &server, &comments_only, &upload),
        1,
        &["`docs`", "--scopes docs,access,comments`"],
    );
    // What the default scopes lack (org) is named with them.
    let admins = ["org", "admins", "add", "bob@example.com"];
    refused(
        &as_user(dir.path(), &server, &defaults, &admins),
        1,
        &["--scopes docs,access,comments,org`"],
    );
    // With the default scopes, sharing works.
    let shared = text_of(&as_user(dir.path(), &server, &defaults, &share));
    assert!(shared.contains("restricted"), "{shared}");
}

/// The names under a help page's heading (`Commands:`, `Arguments:`) with their text.
fn section<'a>(page: &'a str, heading: &str) -> Vec<(&'a str, &'a str)> {
    page.split(heading)
        .nth(1)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| {
            let line = line.trim_start();
            let (name, text) = line.split_once("  ").unwrap_or((line, ""));
            (!name.is_empty()).then_some((name, text.trim()))
        })
        .collect()
}

#[tokio::test]
async fn every_positional_argument_has_help() {
    let help = |args: &[String]| {
        let output = Command::new(support::binary())
            .args(args)
            .arg("-h") // the summary: one line a name
            .output()
            .expect("help");
        assert!(output.status.success(), "{args:?}");
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let mut pages: Vec<Vec<String>> = vec![vec![]];
    let mut checked = 0;
    while let Some(path) = pages.pop() {
        let page = help(&path);
        for (name, text) in section(&page, "Arguments:") {
            assert!(
                !text.is_empty(),
                "`docreview {} {name}` has no help",
                path.join(" ")
            );
            checked += 1;
        }
        for (name, _) in section(&page, "Commands:") {
            if name != "help" {
                pages.push([&path[..], &[name.to_string()]].concat());
            }
        }
    }
    assert!(checked > 40, "only {checked} positional arguments found");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_walk_through_works_as_written() {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada", &[], PASSWORD);
    server.create_user("bob@example.com", "Bob", &[]);
    let session = server.sign_in("ada@example.com", PASSWORD).await;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("plan.html"), SAMPLE_HTML).expect("write");
    std::fs::write(
        dir.path().join("plan-v2.html"),
        SAMPLE_HTML.replace("more words", "more words, revised"),
    )
    .expect("write");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("README.md");
    let block = readme
        .split("## From the terminal")
        .nth(1)
        .and_then(|part| part.split("```sh\n").nth(1))
        .and_then(|part| part.split("```").next())
        .expect("the walk-through");
    let binary_dir = Path::new(support::binary()).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        binary_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let has_jq = Command::new("jq").arg("--version").output().is_ok();
    // Each line as a shell runs it, `docreview` found on the PATH, signed in as the login left
    // it; a pipe fails when any of its commands does.
    let shell = |line: &str| {
        Command::new("bash")
            .args(["-o", "pipefail", "-c", line])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", dir.path())
            .env_remove("DOCREVIEW_URL")
            .env_remove("DOCREVIEW_TOKEN")
            .env("RUST_LOG", "off")
            .output()
            .expect("bash")
    };
    let (mut review, mut comment, mut run_id) = (String::new(), String::new(), String::new());
    let mut ran = 0;
    for line in block.lines() {
        // A comment starts after two spaces; none of the commands has "  #" in it.
        let line = line.split("  #").next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("docreview auth login") {
            // As a person does it: the default scopes, approved in the browser.
            let done = browser_login(dir.path(), &server.base, &session).await;
            assert!(
                done.status.success(),
                "{}",
                String::from_utf8_lossy(&done.stderr)
            );
            continue;
        }
        if line.contains("| jq") && !has_jq {
            eprintln!("note: jq is not installed; skipped `{line}`");
            continue;
        }
        let line = line
            .replace("rv_…", &review)
            .replace("cm_…", &comment)
            .replace("run_…", &run_id);
        let output = shell(&line);
        assert!(
            output.status.success(),
            "`{line}` failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        ran += 1;
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        if line.contains("reviews upload") {
            review = stdout
                .split_whitespace()
                .find(|w| w.starts_with("rv_"))
                .expect("the new id")
                .trim_end_matches('.')
                .to_string();
        }
        if line.contains("comments add") && line.contains("--quote") {
            comment = stdout.trim().trim_start_matches("Commented: ").to_string();
        }
        if line.contains("runs start") {
            run_id = stdout.trim().to_string();
            assert!(run_id.starts_with("run_"), "{stdout}");
        }
    }
    assert!(ran >= 15, "ran {ran} commands");
    // What the walk-through did, read through the API.
    let read = session.get(&format!("/api/reviews/{review}")).await;
    let review = &read.expect(200)["review"];
    assert_eq!(review["aiReviewRuns"][0]["status"], "completed");
    assert_eq!(
        review["source"]["versions"].as_array().map(Vec::len),
        Some(2)
    );
    let sharing = session
        .get(&format!(
            "/api/reviews/{}/access",
            review["reviewId"].as_str().unwrap_or_default()
        ))
        .await;
    assert_eq!(sharing.expect(200)["mode"], "restricted");
}

#[tokio::test]
async fn a_reader_that_stops_early_ends_the_command_quietly() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,comments");
    // Text well beyond a pipe's buffer, so the client is still writing when `head` leaves.
    let paragraphs: String = (0..4000)
        .map(|n| format!("<p>Paragraph {n} of a long document.</p>"))
        .collect();
    let id = server
        .client(Some(&token))
        .upload("Long", &format!("<h1>Long</h1>{paragraphs}"))
        .await
        .review_id;
    let dir = tempfile::tempdir().expect("dir");
    let mut text = cli(dir.path())
        .env("DOCREVIEW_URL", &server.base)
        .env("DOCREVIEW_TOKEN", &token)
        .args(["reviews", "text", &id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let mut first = String::new();
    BufReader::new(text.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("read a line");
    assert_eq!(first, "Long\n");
    // The reader is gone (its end of the pipe dropped with it).
    let done = text.wait_with_output().expect("ends");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(done.status.code(), Some(0));

    // `reviews open --json` says where the review screen is, without opening anything.
    let opened = json_of(&as_user(
        dir.path(),
        &server,
        &token,
        &["reviews", "open", &id, "--json"],
    ));
    assert_eq!(opened["url"], format!("{}/reviews/{id}", server.base));
}

#[tokio::test]
async fn bad_ids_and_missing_files_are_refused_with_their_exit_codes() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "docs,access,comments");
    let api = server.client(Some(&token));
    let id = api.upload("Plan", SAMPLE_HTML).await.review_id;
    let comment = api.note_on(&id, "lazy dog", "Which dog?").await.comment.id;
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("plan.html");
    std::fs::write(&file, SAMPLE_HTML).expect("write");
    let file = file.to_str().expect("path");
    let missing = dir.path().join("missing.html");
    let missing = missing.to_str().expect("path");
    let cmd = |args: &[&str]| as_user(dir.path(), &server, &token, args);

    // Not found (6): unknown documents, comments and runs, and ids no server makes.
    let not_found: Vec<Vec<&str>> = vec![
        vec!["reviews", "show", "rv_nope"],
        vec!["reviews", "outline", "rv_nope"],
        vec!["reviews", "open", "rv_nope"],
        vec!["reviews", "add-version", "rv_nope", file],
        vec!["reviews", "share", "rv_nope"],
        vec!["reviews", "title", "rv_nope", "T"],
        vec!["reviews", "show", "../../api/me"],
        vec!["reviews", "show", "rv_ü?#%"],
        vec!["comments", "resolve", &id, "cm_nope"],
        vec!["comments", "edit", &id, "cm_nope", "--body", "x"],
        vec![
            "comments",
            "reanchor",
            &id,
            "cm_nope",
            "--section",
            "details",
        ],
        vec!["comments", "cancel", "rv_nope", &comment],
        vec!["runs", "start", "rv_nope"],
        vec!["runs", "comment", &id, "run_nope", "--body", "x"],
        vec!["runs", "finish", &id, "run_nope"],
        vec!["tokens", "revoke", "tok_nope"],
    ];
    for args in not_found {
        refused(&cmd(&args), 6, &["not found"]);
    }
    // Missing or unreadable files (1), before anything is sent.
    refused(
        &cmd(&["reviews", "upload", missing]),
        1,
        &["reading", "missing.html", "No such file or directory"],
    );
    refused(
        &cmd(&["reviews", "add-version", &id, missing]),
        1,
        &["No such file"],
    );
    refused(
        &cmd(&["reviews", "replace", &id, dir.path().to_str().expect("dir")]),
        1,
        &["Is a directory"],
    );
    // A section that is not in the document, and a quote with an unknown section (400: 1).
    refused(
        &cmd(&["comments", "add", &id, "--section", "nope", "--body", "x"]),
        1,
        &["sectionId `nope`"],
    );
    // Usage (2): a missing id, an unknown flag, an unknown subcommand.
    refused(&cmd(&["runs", "cancel", &id]), 2, &["<RUN>"]);
    refused(
        &cmd(&["comments", "list", &id, "--colour"]),
        2,
        &["--colour"],
    );
    refused(&cmd(&["reviews", "nope"]), 2, &["nope"]);
    assert_eq!(
        api.get(&format!("/api/reviews/{id}")).await.expect(200)["review"]["source"]["versions"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

/// `reviews export`: every format to standard output byte for byte as the API serves it, or
/// to a file; the lossless file's refusal, an unknown format and an unwritable file fail
/// clearly.
#[tokio::test]
async fn reviews_export_writes_what_the_api_serves() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    server.create_user("bo@example.com", "Bo", &[]);
    let token = server.issue_token("ada@example.com", "docs,comments");
    let reader = server.issue_token("bo@example.com", "comments");
    let api = server.client(Some(&token));
    let dir = tempfile::tempdir().expect("dir");
    let id = api
        .create_with_access("Plan", SAMPLE_HTML, docreview_client::api::AccessMode::Link)
        .await
        .review_id;
    api.note_on(&id, "lazy dog", "=1+1, said the dog").await;
    for format in ["w3c", "native", "csv", "markdown"] {
        let output = as_user(
            dir.path(),
            &server,
            &token,
            &["reviews", "export", &id, "--format", format],
        );
        assert!(
            output.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let served = api
            .get(&format!("/api/reviews/{id}/export?format={format}"))
            .await;
        assert_eq!(served.status, 200);
        if format == "w3c" || format == "native" {
            // Each holds the time it was made; everything else is the same.
            let mut printed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
            let mut answered = served.json.clone();
            for value in [&mut printed, &mut answered] {
                value.as_object_mut().map(|o| o.remove("exportedAt"));
            }
            assert_eq!(printed, answered, "{format}");
        } else if format == "csv" {
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                served.text,
                "{format}"
            );
        } else {
            let printed = String::from_utf8_lossy(&output.stdout);
            assert!(printed.starts_with("# Plan\n"), "{printed}");
            assert!(printed.contains("=1+1, said the dog"), "{printed}");
        }
    }
    let file = dir.path().join("plan.csv");
    let output = as_user(
        dir.path(),
        &server,
        &token,
        &[
            "reviews",
            "export",
            &id,
            "--format",
            "csv",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty());
    let written = std::fs::read_to_string(&file).expect("the file");
    assert!(written.contains("'=1+1, said the dog"), "{written}");

    // A reader may have every format but the lossless one.
    let refusal = as_user(
        dir.path(),
        &server,
        &reader,
        &["reviews", "export", &id, "--format", "native"],
    );
    refused(&refusal, 1, &["editor"]);
    refused(
        &as_user(
            dir.path(),
            &server,
            &token,
            &["reviews", "export", &id, "--format", "pdf"],
        ),
        2,
        &["pdf", "csv"],
    );
    refused(
        &as_user(
            dir.path(),
            &server,
            &token,
            &[
                "reviews",
                "export",
                &id,
                "--format",
                "csv",
                "--out",
                dir.path().to_str().unwrap(),
            ],
        ),
        1,
        &["writing"],
    );
    refused(
        &as_user(
            dir.path(),
            &server,
            &token,
            &["reviews", "export", "rv_missing", "--format", "csv"],
        ),
        6,
        &["not found"],
    );
}

/// `docreview notifications [--unread] [--read-all]`, as text and as the API's JSON.
#[tokio::test]
async fn notifications_are_listed_and_marked_read_from_the_terminal() {
    let server = Server::start();
    let config = tempfile::tempdir().expect("config dir");
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let bob = server.user("bob@example.com", "Bob", &[], "comments");
    let review = ada.upload("Plan", support::SAMPLE_HTML).await;
    bob.post(
        &format!("/api/reviews/{}/comments", review.review_id),
        &serde_json::json!({ "body": "hello @ada" }),
    )
    .await
    .expect(201);
    let token = ada.token().expect("token");
    let mut listed = Value::Null;
    for _ in 0..250 {
        listed = json_of(&as_user(
            config.path(),
            &server,
            token,
            &["notifications", "--unread", "--json"],
        ));
        if listed["unreadCount"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(listed["unreadCount"], 1, "{listed}");
    assert_eq!(listed["notifications"][0]["reason"], "mention");
    let text = text_of(&as_user(config.path(), &server, token, &["notifications"]));
    assert!(text.contains("mention"), "{text}");
    assert!(text.contains("Plan: hello @ada"), "{text}");
    assert!(text.ends_with("1 unread"), "{text}");
    let after = json_of(&as_user(
        config.path(),
        &server,
        token,
        &["notifications", "--read-all", "--json"],
    ));
    assert_eq!(after["unreadCount"], 0, "{after}");
    assert_eq!(after["notifications"], serde_json::json!([]));
}

/// `--thread-revision`: a write to a thread someone changed since it was read is refused (exit
/// 5, nothing written); with the revision the thread now has, it goes through.
#[tokio::test]
async fn writes_can_name_the_thread_as_it_was_read() {
    let server = Server::start();
    let config = tempfile::tempdir().expect("config dir");
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.upload("Plan", support::SAMPLE_HTML).await;
    let id = review.review_id;
    let token = ada.token().expect("token");
    let cmd = |args: &[&str]| as_user(config.path(), &server, token, args);
    let added = json_of(&cmd(&["comments", "add", &id, "--body", "First", "--json"]));
    let cid = added["comment"]["id"].as_str().expect("id").to_string();
    assert_eq!(added["comment"]["threadRevision"], 1);
    text_of(&cmd(&[
        "comments",
        "reply",
        &id,
        &cid,
        "--body",
        "Meanwhile",
    ]));
    let stale = cmd(&["comments", "resolve", &id, &cid, "--thread-revision", "1"]);
    refused(
        &stale,
        5,
        &["thread revision conflict", "thread revision is now 2"],
    );
    let late = cmd(&[
        "comments",
        "reply",
        &id,
        &cid,
        "--body",
        "Late",
        "--thread-revision",
        "1",
    ]);
    refused(&late, 5, &["thread revision conflict"]);
    let read = ada.get(&format!("/api/reviews/{id}")).await;
    let comment = &read.expect(200)["review"]["comments"][0];
    assert_eq!(comment["status"], "open", "nothing written");
    assert_eq!(comment["thread"].as_array().expect("thread").len(), 1);
    let resolved = json_of(&cmd(&[
        "comments",
        "resolve",
        &id,
        &cid,
        "--thread-revision",
        "2",
        "--json",
    ]));
    assert_eq!(resolved["comment"]["status"], "closed");
    assert_eq!(resolved["comment"]["threadRevision"], 3);
}

/// `org invite`, `org invitations` and `org invitations revoke` (DESIGN.md §8.2): `--json`
/// is the API's answer, the link is printed once, refusals exit with their codes.
#[tokio::test]
async fn org_invite_lists_and_revokes_invitations() {
    let server = Server::start();
    server.create_user("root@example.com", "Root", &["--admin"]);
    server.create_user("bob@example.com", "Bob", &[]);
    server.import_projects(&serde_json::json!({ "projects": [
        { "code": "P1", "name": "One", "company": "ACME", "status": "active" } ] }));
    let token = server.issue_token("root@example.com", "org");
    let dir = tempfile::tempdir().expect("dir");
    let cmd = |args: &[&str]| as_user(dir.path(), &server, &token, args);

    let made = json_of(&cmd(&[
        "org",
        "invite",
        "dana@example.com",
        "--name",
        "Dana",
        "--external",
        "--project",
        "P1",
        "--role",
        "editor",
        "--json",
    ]));
    let invitation = &made["invitation"];
    assert_eq!(invitation["email"], "dana@example.com");
    assert_eq!(invitation["membership"], "external");
    assert_eq!(invitation["projectRole"], "editor");
    let id = invitation["id"].as_str().expect("id").to_string();
    assert!(
        invitation["acceptUrl"]
            .as_str()
            .is_some_and(|url| url.starts_with(&format!("{}/invite/", server.base)))
    );
    // Text: the link alone on its own line.
    let text = text_of(&cmd(&["org", "invite", "erin@example.com"]));
    assert!(
        text.lines()
            .any(|line| line.starts_with(&format!("{}/invite/", server.base))),
        "{text}"
    );
    let listed = json_of(&cmd(&["org", "invitations", "--json"]));
    assert_eq!(listed["invitations"].as_array().map(Vec::len), Some(2));
    assert!(text_of(&cmd(&["org", "invitations"])).contains("dana@example.com"));
    let revoked = json_of(&cmd(&["org", "invitations", "revoke", &id, "--json"]));
    assert_eq!(revoked["revoked"], true);
    let emails = text_of(&cmd(&[
        "org",
        "invitations",
        "--jq",
        ".invitations[].email",
    ]));
    assert_eq!(emails, "erin@example.com");
    // Refusals: revoked again (not found: 6), an existing account (conflict: 5), a bad role
    // (usage: 2), a non-admin (1).
    refused(
        &cmd(&["org", "invitations", "revoke", &id]),
        6,
        &["not found"],
    );
    refused(
        &cmd(&["org", "invite", "bob@example.com"]),
        5,
        &["already has an account"],
    );
    refused(
        &cmd(&[
            "org",
            "invite",
            "x@example.com",
            "--project",
            "P1",
            "--role",
            "boss",
        ]),
        2,
        &["viewer, editor or manager"],
    );
    let bob = server.issue_token("bob@example.com", "org");
    refused(
        &as_user(
            dir.path(),
            &server,
            &bob,
            &["org", "invite", "y@example.com"],
        ),
        1,
        &["administrators"],
    );
}

/// The review workflow from the terminal (DESIGN.md §8.4): reviewers, decisions, finalizing and
/// reopening, assignment and reactions, as text and as the API's JSON, and every refusal with
/// its exit code (2 usage, 5 conflict, 6 not found, 1 otherwise).
#[tokio::test]
async fn the_review_workflow_from_the_terminal() {
    let server = Server::start();
    let config = tempfile::tempdir().expect("config dir");
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id;
    let (ada_token, bob_token) = (ada.token().expect("token"), bob.token().expect("token"));
    let as_ada = |args: &[&str]| as_user(config.path(), &server, ada_token, args);
    let as_bob = |args: &[&str]| as_user(config.path(), &server, bob_token, args);

    // Reviewers: asked with a due date, listed, taken back.
    let asked = json_of(&as_ada(&[
        "reviews",
        "reviewers",
        &id,
        "add",
        "bob@example.com",
        "--due",
        "2026-12-01",
        "--json",
    ]));
    let bob_id = asked["workflow"]["reviewers"][0]["user"]["id"]
        .as_str()
        .expect("reviewer")
        .to_string();
    assert!(
        asked["workflow"]["reviewers"][0]["dueAt"]
            .as_str()
            .expect("due")
            .starts_with("2026-12-01T23:59:59"),
        "{asked}"
    );
    let listed = text_of(&as_ada(&["reviews", "reviewers", &id]));
    assert!(listed.contains("Review open, outcome pending."), "{listed}");
    assert!(listed.contains("Bob, due 2026-12-01"), "{listed}");
    assert!(listed.contains("no decision"), "{listed}");
    let listed = json_of(&as_ada(&["reviews", "reviewers", &id, "--json"]));
    assert_eq!(
        listed["workflow"]["reviewers"][0]["user"]["id"],
        bob_id.as_str()
    );
    refused(
        &as_ada(&["reviews", "reviewers", &id, "add", "nobody@example.com"]),
        1,
        &["not an active member"],
    );
    refused(
        &as_ada(&[
            "reviews",
            "reviewers",
            &id,
            "add",
            "bob@example.com",
            "--due",
            "soon",
        ]),
        1,
        &["dueAt `soon`"],
    );
    refused(
        &as_ada(&["reviews", "reviewers", &id, "remove", "usr_nobody"]),
        6,
        &["not found"],
    );

    // Decisions: a person's newer one replaces the older; a bad word is a usage error; an
    // older version is stale (exit 5).
    let decided = text_of(&as_bob(&["reviews", "decide", &id, "changes_requested"]));
    assert!(
        decided.contains("outcome is changes_requested"),
        "{decided}"
    );
    let decided = json_of(&as_bob(&[
        "reviews", "decide", &id, "approved", "--note", "Fine now", "--json",
    ]));
    assert_eq!(decided["decision"]["body"], "Fine now");
    assert_eq!(decided["workflow"]["outcome"], "approved");
    assert_eq!(
        decided["workflow"]["decisions"].as_array().map(Vec::len),
        Some(1)
    );
    refused(
        &as_bob(&["reviews", "decide", &id, "maybe"]),
        2,
        &["`maybe`"],
    );
    let first_version = review.latest_version_id.clone();
    let file = config.path().join("v2.html");
    std::fs::write(&file, SAMPLE_HTML.replace("Second", "2nd")).expect("write");
    text_of(&as_ada(&[
        "reviews",
        "add-version",
        &id,
        file.to_str().expect("path"),
    ]));
    refused(
        &as_bob(&[
            "reviews",
            "decide",
            &id,
            "approved",
            "--version",
            &first_version,
        ]),
        5,
        &["no longer the latest"],
    );
    let listed = text_of(&as_ada(&["reviews", "reviewers", &id]));
    assert!(listed.contains("approved (stale)"), "{listed}");
    let shown = text_of(&as_ada(&["reviews", "show", &id]));
    assert!(shown.contains("Review:   open, pending"), "{shown}");

    // Assignment: to someone, to nobody; an unknown person is refused; neither is usage.
    let added = json_of(&as_ada(&[
        "comments", "add", &id, "--body", "Fix", "--json",
    ]));
    let cid = added["comment"]["id"].as_str().expect("id").to_string();
    let assigned = json_of(&as_ada(&[
        "comments",
        "assign",
        &id,
        &cid,
        "bob@example.com",
        "--json",
    ]));
    assert_eq!(assigned["comment"]["assignee"]["id"], bob_id.as_str());
    let mine = text_of(&as_bob(&["comments", "list", &id, "--assignee", "me"]));
    assert!(mine.starts_with("1 comment"), "{mine}");
    let unassigned = text_of(&as_ada(&["comments", "assign", &id, &cid, "--none"]));
    assert_eq!(unassigned, format!("{cid} is assigned to nobody."));
    refused(
        &as_ada(&["comments", "assign", &id, &cid, "nobody@example.com"]),
        1,
        &["not an active member"],
    );
    refused(&as_ada(&["comments", "assign", &id, &cid]), 2, &["<EMAIL>"]);
    refused(
        &as_ada(&["comments", "assign", &id, "cm_nope", "--none"]),
        6,
        &["not found"],
    );

    // Reactions: idempotent, taken back, on a reply; a bad emoji is a usage error.
    for _ in 0..2 {
        let reacted = json_of(&as_bob(&["comments", "react", &id, &cid, "+1", "--json"]));
        assert_eq!(
            reacted,
            serde_json::json!({ "reactions": [{ "emoji": "+1", "count": 1, "reactedByMe": true }] })
        );
    }
    let text = text_of(&as_ada(&["comments", "react", &id, &cid, "heart"]));
    assert_eq!(text, format!("Reactions on {cid}: +1 1, heart 1"));
    let taken = json_of(&as_bob(&[
        "comments", "react", &id, &cid, "+1", "--remove", "--json",
    ]));
    assert_eq!(taken["reactions"][0]["emoji"], "heart");
    assert_eq!(taken["reactions"].as_array().map(Vec::len), Some(1));
    let replied = json_of(&as_bob(&[
        "comments", "reply", &id, &cid, "--body", "Ok", "--json",
    ]));
    let message = replied["message"]["id"]
        .as_str()
        .expect("reply id")
        .to_string();
    let on_reply = json_of(&as_ada(&[
        "comments", "react", &id, &cid, "rocket", "--reply", &message, "--json",
    ]));
    assert_eq!(on_reply["reactions"][0]["emoji"], "rocket");
    refused(
        &as_ada(&["comments", "react", &id, &cid, "thumbsup"]),
        2,
        &["unknown reaction `thumbsup`", "+1 -1 laugh"],
    );
    refused(
        &as_ada(&["comments", "react", &id, "cm_nope", "eyes"]),
        6,
        &["not found"],
    );

    // Finalizing: refused while a comment is open (exit 5), then done, then reopened.
    refused(
        &as_ada(&["reviews", "finalize", &id]),
        5,
        &["1 comments are still open"],
    );
    text_of(&as_ada(&["comments", "resolve", &id, &cid]));
    let finalized = json_of(&as_ada(&["reviews", "finalize", &id, "--json"]));
    assert_eq!(finalized["workflow"]["state"], "finalized");
    refused(
        &as_ada(&["comments", "add", &id, "--body", "Late"]),
        5,
        &["the review is finalized; reopen it first"],
    );
    refused(
        &as_ada(&["reviews", "finalize", &id]),
        5,
        &["already finalized"],
    );
    assert_eq!(
        text_of(&as_ada(&["reviews", "reopen", &id])),
        format!("Reopened {id}.")
    );
    refused(&as_ada(&["reviews", "reopen", &id]), 5, &["not finalized"]);
    refused(
        &as_bob(&["reviews", "finalize", "rv_nope"]),
        6,
        &["not found"],
    );

    let taken_back = json_of(&as_ada(&[
        "reviews",
        "reviewers",
        &id,
        "remove",
        &bob_id,
        "--json",
    ]));
    assert_eq!(taken_back["workflow"]["reviewers"], serde_json::json!([]));
}

/// `comments add --suggestion` and `suggestions apply`: the new version from the terminal, and
/// the refusals with their exit codes (5 conflict, 1 a comment without a suggestion, 2 usage).
#[tokio::test]
async fn suggestions_are_written_and_applied_from_the_terminal() {
    let server = Server::start();
    let config = tempfile::tempdir().expect("config dir");
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let (id, base) = (review.review_id, review.latest_version_id);
    let token = ada.token().expect("token");
    let cmd = |args: &[&str]| as_user(config.path(), &server, token, args);

    let added = json_of(&cmd(&[
        "comments",
        "add",
        &id,
        "--body",
        "Slower",
        "--category",
        "revise",
        "--quote",
        "quick brown",
        "--suggestion",
        "slow red",
        "--json",
    ]));
    assert_eq!(added["comment"]["suggestion"]["text"], "slow red");
    let cid = added["comment"]["id"].as_str().expect("id").to_string();
    refused(
        &cmd(&["comments", "add", &id, "--body", "x", "--suggestion", "y"]),
        2,
        &["--quote"],
    );
    refused(
        &cmd(&[
            "comments",
            "add",
            &id,
            "--body",
            "x",
            "--quote",
            "lazy",
            "--suggestion",
            "y",
        ]),
        1,
        &["a suggestion goes on a revise, add or delete comment"],
    );
    let plain = json_of(&cmd(&["comments", "add", &id, "--body", "Note", "--json"]));
    let plain = plain["comment"]["id"].as_str().expect("id").to_string();
    refused(
        &cmd(&["suggestions", "apply", &id, &plain, "--base", &base]),
        1,
        &["carries no suggestion"],
    );
    refused(
        &cmd(&["suggestions", "apply", &id, "--base", &base]),
        2,
        &["<COMMENTS>"],
    );

    let applied = text_of(&cmd(&[
        "suggestions",
        "apply",
        &id,
        &cid,
        "--base",
        &base,
        "--label",
        "edited",
    ]));
    assert!(
        applied.starts_with("Applied 1 suggestion as edited (ver_"),
        "{applied}"
    );
    refused(
        &cmd(&["suggestions", "apply", &id, &cid, "--base", &base]),
        5,
        &["no longer the latest"],
    );
    let text = text_of(&cmd(&["reviews", "text", &id]));
    assert!(text.contains("The slow red fox jumps"), "{text}");
}
