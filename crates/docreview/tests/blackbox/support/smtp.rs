//! A real SMTP server process for the mail tests: `aiosmtpd` (from the Python Package Index)
//! running `smtp_sink.py`, which writes each accepted message as JSON into a directory these
//! helpers read.
//!
//! aiosmtpd lives in a virtual environment (`.ci/run` installs it under
//! `~/.cache/docreview-ci/aiosmtpd-1.4.6`; `DOCREVIEW_AIOSMTPD_PYTHON` names another Python).
//! Without it the mail tests print a note and pass, unless `DOCREVIEW_REQUIRE_BROWSER` is set
//! (as CI does), the convention of the browser tests.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/blackbox/support/smtp_sink.py"
);

/// The Python that has aiosmtpd, if any.
fn python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("DOCREVIEW_AIOSMTPD_PYTHON") {
        return Some(PathBuf::from(python));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    let python = cache.join("docreview-ci/aiosmtpd-1.4.6/bin/python");
    python.exists().then_some(python)
}

pub struct SmtpServer {
    python: PathBuf,
    child: Option<(Child, ChildStdin)>,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl SmtpServer {
    /// A running SMTP server on a free port, or `None` (after a note) when aiosmtpd is missing.
    pub fn start() -> Option<SmtpServer> {
        let Some(python) = python() else {
            assert!(
                std::env::var_os("DOCREVIEW_REQUIRE_BROWSER").is_none(),
                "DOCREVIEW_REQUIRE_BROWSER is set but aiosmtpd is not installed (see .ci/run)"
            );
            eprintln!("note: aiosmtpd not installed (see .ci/run); skipping a mail test");
            return None;
        };
        let mut server = SmtpServer {
            python,
            child: None,
            port: 0,
            dir: tempfile::tempdir().expect("a directory for the mails"),
        };
        server.spawn();
        Some(server)
    }

    fn spawn(&mut self) {
        let mut child = Command::new(&self.python)
            .arg(SCRIPT)
            .arg(self.dir.path())
            .arg(self.port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the SMTP server");
        let stdin = child.stdin.take().expect("stdin");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the SMTP server's first line");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the SMTP server said {line:?}"));
        self.port = port;
        self.child = Some((child, stdin));
    }

    /// `DOCREVIEW_SMTP_URL` for this server.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The server settings a docreview server needs to mail through this one.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("DOCREVIEW_SMTP_URL".into(), self.url()),
            (
                "DOCREVIEW_MAIL_FROM".into(),
                "docreview <docreview@example.com>".into(),
            ),
        ]
    }

    /// Stops the server (the port is free until `resume`).
    pub fn stop(&mut self) {
        if let Some((mut child, stdin)) = self.child.take() {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and directory.
    pub fn resume(&mut self) {
        self.spawn();
    }

    /// Every message received so far, in the order received.
    pub fn messages(&self) -> Vec<Value> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .expect("the mail directory")
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        names.sort_by_key(|path| {
            std::fs::metadata(path)
                .and_then(|meta| meta.modified())
                .ok()
        });
        names
            .iter()
            .map(|path| {
                serde_json::from_str(&std::fs::read_to_string(path).expect("a mail"))
                    .expect("a mail's JSON")
            })
            .collect()
    }

    /// The messages to `to`.
    pub fn messages_to(&self, to: &str) -> Vec<Value> {
        self.messages()
            .into_iter()
            .filter(|mail| {
                mail["rcptTos"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|a| a == to))
            })
            .collect()
    }

    /// Waits (up to `within`) until `to` has received `count` messages; answers them.
    pub async fn wait_for(&self, to: &str, count: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let mails = self.messages_to(to);
            if mails.len() >= count {
                return mails;
            }
            assert!(
                Instant::now() < deadline,
                "{to} received {} mails within {within:?}, not {count}: {mails:#?}",
                mails.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        self.stop();
    }
}
