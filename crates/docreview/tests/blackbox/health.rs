//! Liveness, readiness and the database's availability: `/healthz` answers 200 whenever the
//! process serves, `/readyz` 200 only while the database takes queries (503 `unavailable`
//! otherwise); a server whose PostgreSQL never comes up exits non-zero with a message naming the
//! database, one whose PostgreSQL is briefly unreachable waits for it (retries with backoff);
//! `docreview admin migrate` applies the schema and is idempotent, on both backends.
//!
//! The outages are simulated with a loopback TCP proxy in front of the test's PostgreSQL (the
//! server's `DATABASE_URL` names the proxy), so nothing but the test's own connections is cut.
//!
//! `/healthz` and `/readyz` are read raw: the typed client has no call for them, their bodies are
//! plain text, a 503 is the point (the typed client would retry it), and `x-request-id` is a
//! header. The writes that show a server is usable go through the typed client.

use crate::support;

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::support::{AGENT_TOKEN, SAMPLE_HTML, Server, Storage};

/// A TCP proxy on 127.0.0.1 to the test's PostgreSQL that can be switched off: while down it
/// does not listen (connections are refused) and the connections it carried are cut.
struct Proxy {
    port: u16,
    up: watch::Sender<bool>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Proxy {
    /// A proxy to `upstream`, listening at once when `up`.
    fn start(upstream: SocketAddr, up: bool) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let first = if up {
            listener.set_nonblocking(true).expect("non-blocking");
            Some(listener)
        } else {
            drop(listener);
            None
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("proxy runtime");
        let (sender, receiver) = watch::channel(up);
        runtime.spawn(Proxy::serve(port, upstream, first, receiver));
        Proxy {
            port,
            up: sender,
            runtime: Some(runtime),
        }
    }

    fn set_up(&self, up: bool) {
        self.up.send_replace(up);
    }

    /// `url` with its host and port replaced by this proxy's.
    fn url_for(&self, url: &str) -> String {
        let scheme_end = url.find("://").expect("URL scheme") + 3;
        let rest = &url[scheme_end..];
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let user = rest[..authority_end]
            .rfind('@')
            .map_or("", |at| &rest[..=at]);
        format!(
            "{}{user}127.0.0.1:{}{}",
            &url[..scheme_end],
            self.port,
            &rest[authority_end..]
        )
    }

    async fn serve(
        port: u16,
        upstream: SocketAddr,
        mut first: Option<std::net::TcpListener>,
        mut up: watch::Receiver<bool>,
    ) {
        loop {
            while !*up.borrow_and_update() {
                if up.changed().await.is_err() {
                    return;
                }
            }
            let listener = match first.take() {
                Some(listener) => tokio::net::TcpListener::from_std(listener),
                None => tokio::net::TcpListener::bind(("127.0.0.1", port)).await,
            };
            let listener = listener.expect("listen on the proxy port again");
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        if let Ok((client, _)) = accepted {
                            tokio::spawn(Proxy::forward(client, upstream, up.clone()));
                        }
                    }
                    changed = up.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        if !*up.borrow_and_update() {
                            break;
                        }
                    }
                }
            }
        }
    }

    async fn forward(
        mut client: tokio::net::TcpStream,
        upstream: SocketAddr,
        mut up: watch::Receiver<bool>,
    ) {
        let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
            return;
        };
        let cut = async move {
            while *up.borrow_and_update() {
                if up.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
            () = cut => {}
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The host and port of the test's PostgreSQL (from `DOCREVIEW_TEST_DATABASE_URL`).
fn postgres_address(url: &str) -> SocketAddr {
    use std::net::ToSocketAddrs;
    let rest = &url[url.find("://").expect("URL scheme") + 3..];
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let host_port = authority
        .rfind('@')
        .map_or(authority, |at| &authority[at + 1..]);
    let host_port = if host_port
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok())
    {
        host_port.to_string()
    } else {
        format!("{host_port}:5432")
    };
    host_port
        .to_socket_addrs()
        .expect("resolve the test database host")
        .next()
        .expect("an address for the test database host")
}

/// Fresh PostgreSQL storage and a proxy to it, or `None` (with a note) on SQLite.
fn proxied_postgres(up: bool) -> Option<(Arc<Storage>, Proxy, String)> {
    let Some(admin_url) = support::test_database_url() else {
        eprintln!(
            "note: {} is not set; this PostgreSQL outage test was skipped",
            support::TEST_DATABASE_URL_VAR
        );
        return None;
    };
    let storage = Storage::fresh();
    let proxy = Proxy::start(postgres_address(&admin_url), up);
    let url = proxy.url_for(storage.database_url().expect("a PostgreSQL database"));
    Some((storage, proxy, url))
}

/// `serve` on `DATABASE_URL=url` (port 0), without the harness; returns its exit and run time.
fn serve_until_exit(url: &str, retry_secs: &str) -> (std::process::Output, Duration) {
    let data_dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let output = std::process::Command::new(support::binary())
        .env_remove("DOCREVIEW_LISTEN")
        .env("DOCREVIEW_DATA_DIR", data_dir.path())
        .env("DATABASE_URL", url)
        .env("DOCREVIEW_PG_CONNECT_RETRY_SECS", retry_secs)
        .env("RUST_LOG", "warn")
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .expect("run docreview serve");
    (output, started.elapsed())
}

const UNREACHABLE: &str = "postgres://docreview:s3cret-pa55@127.0.0.1:1/docreview";

// ---------------------------------------------------------------------------------------------
// /healthz and /readyz
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn every_answer_carries_a_request_id_and_a_callers_short_id_is_kept() {
    let server = Server::start();
    let client = server.client(None);
    let first = client.get("/healthz").await;
    let second = client.get("/api/me").await;
    let ids: Vec<_> = [&first, &second]
        .iter()
        .map(|reply| reply.header("x-request-id").unwrap_or_default().to_string())
        .collect();
    assert!(ids.iter().all(|id| id.len() == 24), "{ids:?}");
    assert_ne!(ids[0], ids[1]);
    assert!(
        second.json.get("requestId").is_none(),
        "a 4xx needs no id: {}",
        second.text
    );

    let kept = client
        .send(
            client
                .raw("GET", "/healthz")
                .header("x-request-id", "lb-7f3a.2"),
        )
        .await;
    assert_eq!(kept.header("x-request-id"), Some("lb-7f3a.2"));
    let uuid = "0b4c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3";
    let kept = client
        .send(client.raw("GET", "/healthz").header("x-request-id", uuid))
        .await;
    assert_eq!(kept.header("x-request-id"), Some(uuid));
    // Not plain: spaces, a personal token pasted by mistake, anything long.
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "comments");
    for sent in [
        "no spaces allowed".to_string(),
        token.clone(),
        "a".repeat(32),
        AGENT_TOKEN.to_string(),
        "semi;colon".to_string(),
    ] {
        let replaced = client
            .send(client.raw("GET", "/healthz").header("x-request-id", &sent))
            .await;
        let id = replaced.header("x-request-id").unwrap_or_default();
        assert_eq!(id.len(), 24, "{sent:?} must be replaced, got {id:?}");
        assert_ne!(id, sent);
    }
}

#[tokio::test]
async fn healthz_answers_200_without_credentials() {
    let server = Server::start();
    let reply = server.client(None).get("/healthz").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.text, "ok");
}

#[tokio::test]
async fn readyz_answers_200_with_a_working_database() {
    let server = Server::start();
    let reply = server.client(None).get("/readyz").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.text, "ready");
    // Ready means usable: a write goes through right after.
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.upload("Ready", SAMPLE_HTML).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_answers_503_while_postgres_is_unreachable_and_200_once_it_is_back() {
    let Some((storage, proxy, url)) = proxied_postgres(true) else {
        return;
    };
    let server =
        tokio::task::spawn_blocking(move || Server::start_on(storage, &[("DATABASE_URL", &url)]))
            .await
            .expect("start the server");
    let anonymous = server.client(None);
    assert_eq!(anonymous.get("/readyz").await.status, 200);

    proxy.set_up(false);
    let reply = anonymous.get("/readyz").await;
    let id = reply.header("x-request-id").map(str::to_string);
    let body = reply.expect_error(503, "unavailable");
    assert_eq!(
        body["requestId"].as_str(),
        id.as_deref(),
        "a 5xx names its request, as x-request-id does: {body}"
    );
    let live = anonymous.get("/healthz").await;
    assert_eq!(live.status, 200, "liveness does not depend on the database");

    proxy.set_up(true);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let reply = anonymous.get("/readyz").await;
        if reply.status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still not ready 15 s after the database came back: {} {}",
            reply.status,
            reply.text
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    ada.upload("Back", SAMPLE_HTML).await;
}

// ---------------------------------------------------------------------------------------------
// Starting without the database
// ---------------------------------------------------------------------------------------------

#[test]
fn serve_exits_non_zero_naming_the_database_when_postgres_stays_unreachable() {
    let (output, _) = serve_until_exit(UNREACHABLE, "2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "exit: {:?}", output.status);
    assert_eq!(output.status.code(), Some(1), "an error exit, not a signal");
    assert!(!stderr.contains("panicked"), "no panic: {stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: connecting to postgres://docreview:")
            && last.contains("@127.0.0.1:1/docreview")
            && last.contains("database unavailable"),
        "the last line names the database and the cause: {stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stdout).contains("listening"),
        "never listened"
    );
}

#[test]
fn the_unreachable_database_message_never_shows_the_password() {
    let (output, _) = serve_until_exit(UNREACHABLE, "1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("docreview:***@127.0.0.1:1"), "{stderr}");
    assert!(!stderr.contains("s3cret-pa55"), "password leaked: {stderr}");
}

#[test]
fn serve_retries_an_unreachable_postgres_for_the_configured_time_before_giving_up() {
    let (output, elapsed) = serve_until_exit(UNREACHABLE, "2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        elapsed >= Duration::from_millis(1_800),
        "gave up after {elapsed:?}, before DOCREVIEW_PG_CONNECT_RETRY_SECS=2"
    );
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    let retries = stderr.matches("retrying").count();
    assert!(retries >= 2, "{retries} logged retries: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_while_postgres_is_briefly_unreachable_serves_once_it_is_back() {
    let Some((storage, proxy, url)) = proxied_postgres(false) else {
        return;
    };
    let started = Instant::now();
    let starting = tokio::task::spawn_blocking(move || {
        Server::start_on(
            storage,
            &[
                ("DATABASE_URL", &url),
                ("DOCREVIEW_PG_CONNECT_RETRY_SECS", "30"),
            ],
        )
    });
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(
        !starting.is_finished(),
        "the server listened before its database was reachable"
    );
    proxy.set_up(true);
    let server = tokio::time::timeout(Duration::from_secs(20), starting)
        .await
        .expect("the server starts within 20 s of the database coming back")
        .expect("start the server");
    assert!(started.elapsed() >= Duration::from_millis(1_500));

    let anonymous = server.client(None);
    assert_eq!(anonymous.get("/readyz").await.status, 200);
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let id = ada.upload("Late start", SAMPLE_HTML).await.review_id;
    let written = ada.note_on(&id, "lazy dog", "works").await;
    assert_eq!(written.comments_revision, 1);
}

// ---------------------------------------------------------------------------------------------
// admin migrate
// ---------------------------------------------------------------------------------------------

/// The migration versions shipped in the binary (file names `NNNN_*.sql`).
fn shipped_migrations() -> Vec<i64> {
    let backend = if support::on_postgres() {
        "store-postgres"
    } else {
        "store-sqlite"
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(backend)
        .join("migrations");
    let mut versions: Vec<i64> = std::fs::read_dir(&dir)
        .expect("migrations directory")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".sql")?.split('_').next()?.parse().ok()
        })
        .collect();
    versions.sort_unstable();
    versions
}

#[track_caller]
fn migrate(storage: &Storage) -> String {
    let output = storage.admin(&["migrate"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "admin migrate failed: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8(output.stdout).expect("utf8")
}

#[test]
fn admin_migrate_applies_every_migration_to_a_fresh_database() {
    let storage = Storage::fresh();
    let printed = migrate(&storage);
    assert!(printed.contains("is up to date"), "{printed}");
    if let Some(url) = storage.database_url() {
        let applied = support::psql(
            url,
            "SELECT version FROM schema_migrations ORDER BY version",
        )
        .expect("read schema_migrations");
        let applied: Vec<i64> = applied
            .lines()
            .map(|line| line.trim().parse().expect("a version"))
            .collect();
        assert_eq!(applied, shipped_migrations());
        let name = url.rsplit('/').next().expect("database name");
        assert!(printed.contains(name), "names the database: {printed}");
    } else {
        let file = storage.data_dir().join("docreview.db");
        let header = std::fs::read(&file).expect("the database file exists");
        assert!(
            header.starts_with(b"SQLite format 3\0"),
            "a SQLite database"
        );
        assert!(printed.contains(&file.display().to_string()), "{printed}");
    }
}

#[tokio::test]
async fn admin_migrate_twice_in_a_row_succeeds_and_keeps_the_data() {
    let storage = Storage::fresh();
    migrate(&storage);
    let user = storage.admin(&["create-user", "--email", "ada@example.com", "--name", "Ada"]);
    assert!(user.status.success());
    let again = migrate(&storage);
    assert!(again.contains("is up to date"), "{again}");
    if let Some(url) = storage.database_url() {
        let applied = support::psql(url, "SELECT count(*) FROM schema_migrations")
            .expect("count schema_migrations");
        assert_eq!(
            applied,
            shipped_migrations().len().to_string(),
            "each applied once"
        );
    }

    let token = storage.admin(&[
        "issue-token",
        "--email",
        "ada@example.com",
        "--scopes",
        "docs",
    ]);
    assert!(
        token.status.success(),
        "the user survived the second migrate"
    );
    let token = String::from_utf8(token.stdout).expect("utf8");
    let server = Server::start_on(storage, &[]);
    let ada = server.client(Some(token.trim()));
    let created = ada.upload("After migrate", SAMPLE_HTML).await;
    assert_eq!(created.title, "After migrate");
}

/// 1,100 connections that send nothing (from another address) neither lock other clients out
/// nor stay open: beyond the per-address limit they are closed at once, and the rest when the
/// header deadline passes.
#[tokio::test]
async fn a_flood_of_silent_connections_locks_nobody_out() {
    use tokio::io::AsyncReadExt;

    let server = Server::start_with(&[
        ("DOCREVIEW_HEADER_TIMEOUT_SECS", "2"),
        ("DOCREVIEW_MAX_CONNECTIONS_PER_ADDRESS", "100"),
    ]);
    let address: std::net::SocketAddr = server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address");
    let mut silent = Vec::new();
    for _ in 0..1100 {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        // Loopback is 127.0.0.0/8: another source address, as another client would have.
        socket
            .bind("127.0.0.2:0".parse().expect("ip"))
            .expect("bind");
        silent.push(socket.connect(address).await.expect("connect"));
    }
    let started = std::time::Instant::now();
    server.client(None).get("/healthz").await.expect(200);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "a normal request waited {:?}",
        started.elapsed()
    );

    // Every silent connection is closed by the server, the last within the header deadline.
    let reads = silent.into_iter().map(|mut stream| async move {
        let mut byte = [0u8; 1];
        matches!(stream.read(&mut byte).await, Ok(0) | Err(_))
    });
    let closed = tokio::time::timeout(
        std::time::Duration::from_secs(8),
        futures::future::join_all(reads),
    )
    .await
    .expect("the server closes every silent connection within the header deadline")
    .into_iter()
    .filter(|closed| *closed)
    .count();
    assert_eq!(closed, 1100);
    server.client(None).get("/healthz").await.expect(200);
}
