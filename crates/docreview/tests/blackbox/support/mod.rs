//! Test support: a real `docreview serve` process on a random port with a fresh database,
//! and the clients that talk to it.
//!
//! Tests make their well-formed requests through the typed client (`Client::api`, the
//! `docreview-client` crate users get), so every test also proves the client and the wire types
//! it decodes. The raw HTTP helpers (`get`, `post`, `raw`, …), which return status, headers and
//! JSON, are for what the typed client cannot or must not send: malformed bodies, unusual
//! headers, sign-in cookies, and answers whose headers or exact bytes are the point of the test.
//!
//! The backend follows `DOCREVIEW_TEST_DATABASE_URL`. Unset, every server gets a fresh SQLite
//! database in a temporary data directory. Set to a PostgreSQL URL whose user may create
//! databases (e.g. `postgres://postgres@127.0.0.1:5432/test`), every server gets a fresh database
//! `docreview_bb_<unique>` created through `psql` and dropped (`WITH (FORCE)`) when the last
//! server on it is dropped, also when the test fails. `Server::start_second_node` starts another
//! node on the same database.

pub mod smtp;
pub mod webhook_receiver;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use docreview_client::api::{
    AccessInput, AccessMode, CommentWritten, CreateReview, Locator, NewComment, Quote, ReviewInput,
    ReviewView, SourceInput, VersionMode,
};
use serde_json::Value;

pub const AGENT_TOKEN: &str = "test-agent-shared-token-0123456789abcdef";
pub const IMPORT_TOKEN: &str = "test-import-shared-token-0123456789abcdef";
pub const MANAGE_TOKEN: &str = "test-manage-shared-token-0123456789abcdef";

/// Names the PostgreSQL server the tests create their databases on.
pub const TEST_DATABASE_URL_VAR: &str = "DOCREVIEW_TEST_DATABASE_URL";

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_docreview")
}

/// The PostgreSQL URL the tests run against, or `None` for SQLite.
pub fn test_database_url() -> Option<String> {
    std::env::var(TEST_DATABASE_URL_VAR)
        .ok()
        .filter(|url| !url.trim().is_empty())
}

/// Whether this run uses PostgreSQL.
pub fn on_postgres() -> bool {
    test_database_url().is_some()
}

/// `url` pointing at database `name` instead of its own (user, host and query parameters kept).
pub fn with_database(url: &str, name: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((main, query)) => (main, Some(query)),
        None => (url, None),
    };
    let scheme_end = main.find("://").map_or(0, |at| at + 3);
    let base = match main[scheme_end..].find('/') {
        Some(at) => &main[..scheme_end + at],
        None => main,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

/// Runs one SQL statement with `psql` on `url`; returns its unaligned output, or the error text.
pub fn psql(url: &str, sql: &str) -> Result<String, String> {
    let output = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-w",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|error| {
            format!("could not run psql ({error}); {TEST_DATABASE_URL_VAR} needs the psql client")
        })?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// A fresh PostgreSQL database, dropped when this value is dropped.
pub struct ScratchDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl ScratchDatabase {
    /// Creates `docreview_bb_<pid>_<time>_<n>` on the server `admin_url` names.
    pub fn create(admin_url: &str) -> ScratchDatabase {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name = format!(
            "docreview_bb_{}_{}_{}",
            std::process::id(),
            nanos % 1_000_000_000_000,
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        // A locale-aware (ICU) collation where the server has one, as the store's own tests use:
        // ordering must not depend on the database's locale. Plain `CREATE DATABASE` otherwise.
        let icu = format!(
            "CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        );
        if psql(admin_url, &icu).is_err()
            && let Err(error) = psql(admin_url, &format!("CREATE DATABASE {name}"))
        {
            panic!(
                "could not create the test database {name} through {TEST_DATABASE_URL_VAR}: {error}"
            );
        }
        ScratchDatabase {
            admin_url: admin_url.to_string(),
            url: with_database(admin_url, &name),
            name,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        // FORCE: a killed node's connections may not be gone yet. Never panic in Drop.
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(error) = psql(&self.admin_url, &sql) {
            eprintln!(
                "note: could not drop the test database {}: {error}",
                self.name
            );
        }
    }
}

/// Where a test's data lives: a data directory (the SQLite database, or nothing with
/// PostgreSQL) and, on PostgreSQL, a fresh database. Shared by every node started on it.
pub struct Storage {
    data_dir: tempfile::TempDir,
    database: Option<ScratchDatabase>,
}

impl Storage {
    /// A fresh, empty (not yet migrated) database on this run's backend.
    pub fn fresh() -> Arc<Storage> {
        Arc::new(Storage {
            data_dir: tempfile::tempdir().expect("temp dir"),
            database: test_database_url().map(|url| ScratchDatabase::create(&url)),
        })
    }

    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.path().to_path_buf()
    }

    /// `postgres://…` of this storage's database, `None` on SQLite.
    pub fn database_url(&self) -> Option<&str> {
        self.database.as_ref().map(ScratchDatabase::url)
    }

    /// The binary with this storage selected and nothing inherited that would pick another.
    pub fn command(&self) -> Command {
        let mut command = Command::new(binary());
        command
            .env_remove("DATABASE_URL")
            .env_remove("DOCREVIEW_LISTEN")
            .env_remove("DOCREVIEW_PG_MAX_CONNECTIONS")
            .env_remove("DOCREVIEW_PG_STATEMENT_TIMEOUT_MS")
            .env_remove("DOCREVIEW_PG_CONNECT_RETRY_SECS")
            .env("DOCREVIEW_DATA_DIR", self.data_dir.path())
            .env("RUST_LOG", "warn");
        if let Some(url) = self.database_url() {
            // A test database that is down fails the test in seconds, not after a minute.
            command
                .env("DATABASE_URL", url)
                .env("DOCREVIEW_PG_CONNECT_RETRY_SECS", "10");
        }
        command
    }

    /// Runs `docreview admin …` on this storage.
    pub fn admin(&self, args: &[&str]) -> std::process::Output {
        self.command()
            .arg("admin")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run docreview admin")
    }
}

/// A running server on its storage; killed when dropped. The storage (and a PostgreSQL
/// database) goes when the last node on it is dropped.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    storage: Arc<Storage>,
    extra_env: Vec<(String, String)>,
    /// Extra arguments of `serve`.
    extra_args: Vec<String>,
    /// A shell command run before the server (`ulimit -n 256`), which then becomes the server.
    shell_first: Option<String>,
    /// What the server printed on standard output before it said it listens.
    pub startup: Vec<String>,
    /// When set, the server's standard error (its log) is collected here instead of shown.
    log: Option<Arc<std::sync::Mutex<String>>>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// Where this server's data lives.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// Starts with extra environment variables (e.g. `DOCREVIEW_MAX_HTML_BYTES`).
    pub fn start_with(env: &[(&str, &str)]) -> Server {
        Server::start_on(Storage::fresh(), env)
    }

    /// Starts on existing storage (e.g. one an `admin` command prepared).
    pub fn start_on(storage: Arc<Storage>, env: &[(&str, &str)]) -> Server {
        Server::start_full(storage, env, &[], false)
    }

    /// Starts with extra environment variables and `serve` arguments; with `capture_log`, the
    /// server's standard error is kept for `log()`.
    pub fn start_full(
        storage: Arc<Storage>,
        env: &[(&str, &str)],
        args: &[&str],
        capture_log: bool,
    ) -> Server {
        // The typed client's reqwest feature reaches the harness's own reqwest clients (and
        // thirtyfour's): they need rustls' default provider (see `docreview_client::tls`).
        docreview_client::tls::install_default_provider();
        let mut server = Server {
            child: None,
            base: String::new(),
            storage,
            extra_env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            extra_args: args.iter().map(std::string::ToString::to_string).collect(),
            shell_first: None,
            startup: Vec::new(),
            log: capture_log.then(Default::default),
        };
        server.spawn();
        server
    }

    /// Starts after a shell ran `first` (e.g. `ulimit -n 256`: limits the server inherits).
    pub fn start_after_shell(first: &str, env: &[(&str, &str)]) -> Server {
        docreview_client::tls::install_default_provider();
        let mut server = Server {
            child: None,
            base: String::new(),
            storage: Storage::fresh(),
            extra_env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            extra_args: Vec::new(),
            shell_first: Some(first.to_string()),
            startup: Vec::new(),
            log: None,
        };
        server.spawn();
        server
    }

    /// What the server logged so far (only with `capture_log`).
    pub fn log(&self) -> String {
        self.log
            .as_ref()
            .map(|log| log.lock().expect("log").clone())
            .unwrap_or_default()
    }

    /// Another node on the same database, with the same settings and shared tokens (a new
    /// port). Meant for PostgreSQL; on SQLite both processes share the database file.
    pub fn start_second_node(&self) -> Server {
        let mut node = Server {
            child: None,
            base: String::new(),
            storage: Arc::clone(&self.storage),
            extra_env: self.extra_env.clone(),
            extra_args: self.extra_args.clone(),
            shell_first: self.shell_first.clone(),
            startup: Vec::new(),
            log: None,
        };
        node.spawn();
        node
    }

    fn command(&self) -> Command {
        let mut command = self.storage.command();
        command
            .env("DOCREVIEW_AGENT_TOKEN", AGENT_TOKEN)
            .env("DOCREVIEW_IMPORT_TOKEN", IMPORT_TOKEN)
            .env("DOCREVIEW_MANAGE_TOKEN", MANAGE_TOKEN);
        for (key, value) in &self.extra_env {
            command.env(key, value);
        }
        command
    }

    /// Starts the process and waits for its "listening on" line (printed after binding).
    fn spawn(&mut self) {
        let mut command = self.command();
        if let Some(first) = &self.shell_first {
            let server = command;
            command = Command::new("sh");
            command
                .arg("-c")
                .arg(format!("{first} && exec \"$0\" \"$@\""))
                .arg(server.get_program());
            for (key, value) in server.get_envs() {
                match value {
                    Some(value) => command.env(key, value),
                    None => command.env_remove(key),
                };
            }
        }
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if self.log.is_some() {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("spawn docreview serve");
        if let Some(log) = &self.log {
            let log = Arc::clone(log);
            let stderr = child.stderr.take().expect("stderr");
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut log = log.lock().expect("log");
                    log.push_str(&line);
                    log.push('\n');
                }
            });
        }
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        self.startup.clear();
        let base = loop {
            let line = lines
                .next()
                .expect("server exited before listening")
                .expect("read stdout");
            if let Some(address) = line.strip_prefix("docreview listening on ") {
                break address.trim().to_string();
            }
            self.startup.push(line);
        };
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        self.base = base;
        self.child = Some(child);
    }

    /// `kill -9`, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts again on the same database (a new port).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Runs `docreview admin …` against this server's database.
    pub fn admin(&self, args: &[&str]) -> std::process::Output {
        self.command()
            .arg("admin")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run docreview admin")
    }

    /// A personal token of `email` (scopes as `issue-token --scopes` takes them) that expired a
    /// day ago: issued for one day, by the operator command run with its clock two days back.
    pub fn expired_token(&self, email: &str, scopes: &str) -> String {
        let output = self
            .command()
            .env("DOCREVIEW_CLOCK_OFFSET_SECS", (-2 * 24 * 3600).to_string())
            .args(["admin", "issue-token", "--email", email, "--scopes", scopes])
            .args(["--expires-in-days", "1"])
            .stdin(Stdio::null())
            .output()
            .expect("run docreview admin issue-token");
        succeeded(&output, "issue-token")
    }

    /// Runs `docreview admin …` with `input` on standard input.
    pub fn admin_with_input(&self, args: &[&str], input: &str) -> std::process::Output {
        use std::io::Write;
        let mut child = self
            .command()
            .arg("admin")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run docreview admin");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("wait for docreview admin")
    }

    /// Creates a user who can sign in with `password`; returns their id.
    pub fn create_user_with_password(
        &self,
        email: &str,
        name: &str,
        flags: &[&str],
        password: &str,
    ) -> String {
        let mut args = vec![
            "create-user",
            "--email",
            email,
            "--name",
            name,
            "--password-stdin",
        ];
        args.extend_from_slice(flags);
        let output = self.admin_with_input(&args, &format!("{password}\n"));
        succeeded(&output, "create-user")
    }

    /// Loads a project snapshot through `docreview admin import-projects -`; returns stdout.
    pub fn import_projects(&self, snapshot: &Value) -> String {
        let output = self.admin_with_input(&["import-projects", "-"], &snapshot.to_string());
        succeeded(&output, "import-projects")
    }

    /// Signs in through the login form; returns a client carrying the session cookie (and this
    /// site's `Origin`, as a browser on one of its pages would send).
    pub async fn sign_in(&self, email: &str, password: &str) -> Client {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let response = http
            .post(format!("{}/login", self.base))
            .header("origin", &self.base)
            .form(&[("email", email), ("password", password), ("next", "/")])
            .send()
            .await
            .expect("sign in");
        assert_eq!(response.status().as_u16(), 303, "sign-in should redirect");
        let cookie = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.starts_with("docreview_session="))
            .and_then(|v| v.split(';').next())
            .expect("a session cookie")
            .to_string();
        Client {
            http: reqwest::Client::new(),
            api: typed_client(&self.base, None),
            base: self.base.clone(),
            token: None,
            cookie: Some(cookie),
            origin: Some(self.base.clone()),
        }
    }

    /// Creates a user and returns their id. `flags` may hold `--admin`, `--external`.
    pub fn create_user(&self, email: &str, name: &str, flags: &[&str]) -> String {
        let mut args = vec!["create-user", "--email", email, "--name", name];
        args.extend_from_slice(flags);
        let output = self.admin(&args);
        succeeded(&output, "create-user")
    }

    /// Issues a personal token (scopes comma-separated, "" for the default).
    pub fn issue_token(&self, email: &str, scopes: &str) -> String {
        let mut args = vec!["issue-token", "--email", email];
        if !scopes.is_empty() {
            args.extend_from_slice(&["--scopes", scopes]);
        }
        let output = self.admin(&args);
        succeeded(&output, "issue-token")
    }

    /// A new user with a token holding `scopes`.
    pub fn user(&self, email: &str, name: &str, flags: &[&str], scopes: &str) -> Client {
        self.create_user(email, name, flags);
        self.client(Some(&self.issue_token(email, scopes)))
    }

    pub fn client(&self, token: Option<&str>) -> Client {
        Client {
            http: reqwest::Client::new(),
            api: typed_client(&self.base, token),
            base: self.base.clone(),
            token: token.map(str::to_string),
            cookie: None,
            origin: None,
        }
    }

    pub fn agent(&self) -> Client {
        self.client(Some(AGENT_TOKEN))
    }

    pub fn importer(&self) -> Client {
        self.client(Some(IMPORT_TOKEN))
    }

    pub fn manager(&self) -> Client {
        self.client(Some(MANAGE_TOKEN))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// The typed client with the same credential (a bearer token, or none).
    api: docreview_client::Client,
    pub base: String,
    pub token: Option<String>,
    /// `docreview_session=…`, for a signed-in browser.
    pub cookie: Option<String>,
    /// The `Origin` header to send (a browser sends its page's origin on writes).
    pub origin: Option<String>,
}

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub json: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the status and returns the JSON body.
    #[track_caller]
    pub fn expect(&self, status: u16) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.text
        );
        &self.json
    }

    /// Asserts an error reply: status, `error` code, and the body's `status` and `message`.
    #[track_caller]
    pub fn expect_error(&self, status: u16, code: &str) -> &Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.text
        );
        assert_eq!(
            self.json["error"], code,
            "unexpected error code; body: {}",
            self.text
        );
        assert_eq!(
            self.json["status"], status,
            "error body status; body: {}",
            self.text
        );
        assert!(
            self.json["message"].is_string(),
            "error body needs a message: {}",
            self.text
        );
        &self.json
    }
}

impl Client {
    /// The Bearer token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    pub fn with_token(&self, token: Option<&str>) -> Client {
        Client {
            api: typed_client(&self.base, token),
            token: token.map(str::to_string),
            ..self.clone()
        }
    }

    /// The typed client acting with this client's token (a signed-in browser's cookie is not
    /// sent: sessions are the web app's, and the raw helpers test them).
    pub fn api(&self) -> &docreview_client::Client {
        &self.api
    }

    /// Uploads `html` as a new document through the typed client; returns the Review.
    pub async fn upload(&self, title: &str, html: &str) -> ReviewView {
        self.create(review_input(title, html)).await
    }

    /// Creates `review` (in no project) through the typed client; returns the Review.
    pub async fn create(&self, review: ReviewInput) -> ReviewView {
        let input = CreateReview {
            review,
            project: None,
        };
        self.api.create_review(&input).await.expect("create review")
    }

    /// Creates a document titled `title` from `html` with access `mode`; returns the Review.
    pub async fn create_with_access(
        &self,
        title: &str,
        html: &str,
        mode: AccessMode,
    ) -> ReviewView {
        self.create(ReviewInput {
            access: Some(access(mode)),
            ..review_input(title, html)
        })
        .await
    }

    /// Adds `html` as the document's next version (default label); returns the Review.
    pub async fn add_version(&self, review_id: &str, html: &str) -> ReviewView {
        let file = docreview_client::HtmlFile {
            name: "next.html".into(),
            bytes: html.as_bytes().to_vec(),
        };
        let upload = docreview_client::VersionUpload {
            mode: VersionMode::AddVersion,
            label: None,
            base_version_id: None,
        };
        self.api
            .import_version(review_id, &file, &upload)
            .await
            .expect("add a version")
    }

    /// Adds a comment (a note) quoting `exact` through the typed client.
    pub async fn note_on(&self, review_id: &str, exact: &str, body: &str) -> CommentWritten {
        let input = NewComment {
            body: body.to_string(),
            category: None,
            locator: Some(quote(exact)),
            base_comments_revision: None,
            suggestion: None,
        };
        self.api
            .add_comment(review_id, &input)
            .await
            .expect("add comment")
    }

    /// The same session without its `Origin` header (as a cross-site script or a tool would).
    pub fn without_origin(&self) -> Client {
        self.with_origin(None)
    }

    /// The same session sending another `Origin` header.
    pub fn with_origin(&self, origin: Option<&str>) -> Client {
        Client {
            origin: origin.map(str::to_string),
            ..self.clone()
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut builder = self.http.request(method, format!("{}{path}", self.base));
        if let Some(token) = &self.token {
            builder = builder.bearer_auth(token);
        }
        if let Some(cookie) = &self.cookie {
            builder = builder.header("cookie", cookie);
        }
        if let Some(origin) = &self.origin {
            builder = builder.header("origin", origin);
        }
        builder
    }

    pub async fn send(&self, builder: reqwest::RequestBuilder) -> Reply {
        let response = builder
            .send()
            .await
            .expect("request failed (connection dropped?)");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("read body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            text,
            json,
        }
    }

    /// A request builder with this client's token, for unusual requests.
    pub fn raw(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.request(
            reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
            path,
        )
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(self.request(reqwest::Method::GET, path)).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.send(self.request(reqwest::Method::POST, path).json(body))
            .await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Reply {
        self.send(self.request(reqwest::Method::PATCH, path).json(body))
            .await
    }

    pub async fn put(&self, path: &str, body: &Value) -> Reply {
        self.send(self.request(reqwest::Method::PUT, path).json(body))
            .await
    }

    /// `DELETE` with a JSON body.
    pub async fn delete_json(&self, path: &str, body: &Value) -> Reply {
        self.send(self.request(reqwest::Method::DELETE, path).json(body))
            .await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(self.request(reqwest::Method::DELETE, path)).await
    }

    pub async fn multipart(&self, path: &str, form: reqwest::multipart::Form) -> Reply {
        self.send(self.request(reqwest::Method::POST, path).multipart(form))
            .await
    }
}

/// A new document's fields: its title and HTML. Other fields by struct update:
/// `ReviewInput { tags: Some(…), ..review_input("Plan", html) }`.
pub fn review_input(title: &str, html: &str) -> ReviewInput {
    ReviewInput {
        title: Some(title.to_string()),
        source: Some(SourceInput {
            html: Some(html.to_string()),
            label: None,
        }),
        ..ReviewInput::default()
    }
}

/// Access in `mode`, with nobody named.
pub fn access(mode: AccessMode) -> AccessInput {
    AccessInput {
        mode: Some(mode),
        allowed_users: None,
    }
}

/// The trimmed standard output of an operator command, which must have succeeded.
#[track_caller]
fn succeeded(output: &std::process::Output, command: &str) -> String {
    assert!(
        output.status.success(),
        "{command} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::str::from_utf8(&output.stdout)
        .expect("utf8")
        .trim()
        .to_string()
}

fn typed_client(base: &str, token: Option<&str>) -> docreview_client::Client {
    docreview_client::Client::new(base, token.map(Into::into)).expect("typed client")
}

/// The locator of the passage `exact` (no context, no position).
pub fn quote(exact: &str) -> Locator {
    Locator {
        quote: Some(Quote {
            exact: exact.to_string(),
            prefix: String::new(),
            suffix: String::new(),
        }),
        ..Locator::default()
    }
}

/// Asserts that a typed call was refused with `status` and the error code `code`, and returns
/// the refusal. The conflicts come back as their own variants (`RevisionConflict`,
/// `StaleVersion`), whose codes `Error::code` gives.
#[track_caller]
pub fn refused<T: std::fmt::Debug>(
    result: docreview_client::Result<T>,
    status: u16,
    code: &str,
) -> docreview_client::Error {
    let error = result.expect_err("the call should have been refused");
    assert_eq!(
        error.status(),
        Some(status),
        "unexpected refusal: {error:?}"
    );
    assert_eq!(error.code(), Some(code), "unexpected refusal: {error:?}");
    error
}

/// A file part for multipart uploads.
pub fn html_part(html: &[u8], file_name: &str) -> reqwest::multipart::Part {
    reqwest::multipart::Part::bytes(html.to_vec())
        .file_name(file_name.to_string())
        .mime_str("text/html")
        .expect("mime")
}

pub const SAMPLE_HTML: &str = "<!doctype html><html><head><title>Sample</title><script>var x = 1;</script></head>\
<body><h1 id=\"intro\">Introduction</h1><p>The quick brown fox jumps over the lazy dog.</p>\
<h2 id=\"details\">Details</h2><p>Second paragraph with more words.</p>\
<h2>Open Questions</h2><p>Is the fox quick enough?</p></body></html>";

/// The wall clock in UNIX milliseconds.
pub fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970");
    i64::try_from(since.as_millis()).expect("millis fit i64")
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` into UNIX milliseconds; panics on anything else.
pub fn rfc3339_ms(text: &str) -> i64 {
    let b = text.as_bytes();
    assert!(
        text.len() >= 20
            && text.ends_with('Z')
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':',
        "not an RFC 3339 UTC time: {text}"
    );
    let num = |range: std::ops::Range<usize>| -> i64 {
        text[range]
            .parse()
            .unwrap_or_else(|_| panic!("not an RFC 3339 time: {text}"))
    };
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let (hour, minute, second) = (num(11..13), num(14..16), num(17..19));
    let fraction = &text[19..text.len() - 1];
    let millis = match fraction.strip_prefix('.') {
        None if fraction.is_empty() => 0,
        Some(digits) if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) => {
            format!("{:0<3}", &digits[..digits.len().min(3)])
                .parse()
                .expect("digits")
        }
        _ => panic!("not an RFC 3339 time: {text}"),
    };
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
}

/// The value of the hidden `name` input on an HTML page.
pub fn hidden_input(page: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = page
        .find(&marker)
        .map(|at| at + marker.len())
        .expect("the input");
    page[start..].split('"').next().expect("value").to_string()
}

/// Approves a command-line login in the browser; returns the code the page shows.
pub async fn approve_cli_login(
    session: &Client,
    challenge: &str,
    name: &str,
    scopes: &str,
) -> String {
    let page = session
        .get(&format!(
            "/cli-login?challenge={challenge}&name={name}&scopes={scopes}"
        ))
        .await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(name), "the page names the client");
    let csrf = hidden_input(&page.text, "csrf");
    let approved = session
        .send(session.raw("POST", "/cli-login").form(&[
            ("challenge", challenge),
            ("name", name),
            ("scopes", scopes),
            ("csrf", csrf.as_str()),
        ]))
        .await;
    assert_eq!(approved.status, 200, "{}", approved.text);
    let marker = "id=\"login-code\">";
    let start = approved.text.find(marker).expect("a code") + marker.len();
    approved.text[start..]
        .split('<')
        .next()
        .expect("code")
        .to_string()
}
