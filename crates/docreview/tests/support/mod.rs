//! Test support: a real `docreview serve` process on a random port with a fresh database,
//! and a small HTTP client that returns status, headers and JSON.
#![allow(dead_code)] // each test binary uses a different part of the support code

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub const AGENT_TOKEN: &str = "test-agent-shared-token";
pub const IMPORT_TOKEN: &str = "test-import-shared-token";
pub const MANAGE_TOKEN: &str = "test-manage-shared-token";

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_docreview")
}

/// A running server owning its data directory; killed when dropped.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    data_dir: tempfile::TempDir,
    extra_env: Vec<(String, String)>,
}

impl Server {
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// Starts with extra environment variables (e.g. `DOCREVIEW_MAX_HTML_BYTES`).
    pub fn start_with(env: &[(&str, &str)]) -> Server {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut server = Server {
            child: None,
            base: String::new(),
            data_dir,
            extra_env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        server.spawn();
        server
    }

    pub fn data_dir(&self) -> PathBuf {
        self.data_dir.path().to_path_buf()
    }

    fn command(&self) -> Command {
        let mut command = Command::new(binary());
        command
            .env_remove("DATABASE_URL")
            .env_remove("DOCREVIEW_LISTEN")
            .env("DOCREVIEW_DATA_DIR", self.data_dir.path())
            .env("DOCREVIEW_AGENT_TOKEN", AGENT_TOKEN)
            .env("DOCREVIEW_IMPORT_TOKEN", IMPORT_TOKEN)
            .env("DOCREVIEW_MANAGE_TOKEN", MANAGE_TOKEN)
            .env("RUST_LOG", "warn");
        for (key, value) in &self.extra_env {
            command.env(key, value);
        }
        command
    }

    /// Starts the process and waits for its "listening on" line (printed after binding).
    fn spawn(&mut self) {
        let mut child = self
            .command()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn docreview serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("server exited before listening")
                .expect("read stdout");
            if let Some(address) = line.strip_prefix("docreview listening on ") {
                break address.trim().to_string();
            }
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

    /// Starts again on the same data directory (a new port).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Runs `docreview admin …` against this server's database.
    pub fn admin(&self, args: &[&str]) -> std::process::Output {
        self.command()
            .arg("admin")
            .args(args)
            .output()
            .expect("run docreview admin")
    }

    /// Creates a user and returns their id. `flags` may hold `--admin`, `--external`.
    pub fn create_user(&self, email: &str, name: &str, flags: &[&str]) -> String {
        let mut args = vec!["create-user", "--email", email, "--name", name];
        args.extend_from_slice(flags);
        let output = self.admin(&args);
        assert!(
            output.status.success(),
            "create-user failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("utf8")
            .trim()
            .to_string()
    }

    /// Issues a personal token (scopes comma-separated, "" for the default).
    pub fn issue_token(&self, email: &str, scopes: &str) -> String {
        let mut args = vec!["issue-token", "--email", email];
        if !scopes.is_empty() {
            args.extend_from_slice(&["--scopes", scopes]);
        }
        let output = self.admin(&args);
        assert!(
            output.status.success(),
            "issue-token failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("utf8")
            .trim()
            .to_string()
    }

    /// A new user with a token holding `scopes`.
    pub fn user(&self, email: &str, name: &str, flags: &[&str], scopes: &str) -> Client {
        self.create_user(email, name, flags);
        self.client(Some(&self.issue_token(email, scopes)))
    }

    pub fn client(&self, token: Option<&str>) -> Client {
        Client {
            http: reqwest::Client::new(),
            base: self.base.clone(),
            token: token.map(str::to_string),
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
    pub base: String,
    pub token: Option<String>,
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
    pub fn with_token(&self, token: Option<&str>) -> Client {
        Client {
            token: token.map(str::to_string),
            ..self.clone()
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
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

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(self.request(reqwest::Method::DELETE, path)).await
    }

    pub async fn multipart(&self, path: &str, form: reqwest::multipart::Form) -> Reply {
        self.send(self.request(reqwest::Method::POST, path).multipart(form))
            .await
    }

    /// Creates a review from HTML through the JSON endpoint; returns the Review object.
    pub async fn create_review(&self, title: &str, html: &str) -> Value {
        let reply = self
            .post(
                "/api/reviews",
                &serde_json::json!({ "review": { "title": title, "source": { "html": html } } }),
            )
            .await;
        reply.expect(201)["review"].clone()
    }

    /// Adds a comment quoting `exact`; returns the write answer `{ comment, commentsRevision }`.
    pub async fn comment_on(&self, review_id: &str, exact: &str, body: &str) -> Value {
        let reply = self
            .post(
                &format!("/api/reviews/{review_id}/comments"),
                &serde_json::json!({ "body": body, "locator": { "quote": { "exact": exact } } }),
            )
            .await;
        reply.expect(201).clone()
    }
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
