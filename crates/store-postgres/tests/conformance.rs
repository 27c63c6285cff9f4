//! Runs the storage conformance suite against the PostgreSQL backend, plus the checks only a
//! shared database has (several nodes on one database, startup while it is unreachable, the
//! statement timeout) and the upgrade of a version-1 database.
//!
//! Set `DOCREVIEW_TEST_DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`) to a
//! database whose user may create databases: each check creates its own scratch database
//! `docreview_t_<random>` through it and drops it when the check's store is dropped, also when
//! the check fails. Unset, every test returns early with a note.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use docreview_core::store::{
    CommentSearch, ReviewSearch, SearchQuery, SearchTerm, Store, StoreError, Visibility,
};
use docreview_store_conformance::FreshStore;
use docreview_store_conformance::fixtures::{T0, comment, comments_write, head, review, user};
use docreview_store_postgres::{PgOptions, PgStore};
use sqlx::{Connection, Executor, PgConnection};

const ADMIN_URL_VAR: &str = "DOCREVIEW_TEST_DATABASE_URL";

fn admin_url() -> Option<String> {
    std::env::var(ADMIN_URL_VAR)
        .ok()
        .filter(|url| !url.is_empty())
}

/// A name no other test (in this or a concurrent run) uses.
fn scratch_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "docreview_t_{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// `url` pointing at database `name` instead of its own (query parameters kept).
fn with_database(url: &str, name: &str) -> String {
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

/// Drops the scratch database when dropped. Runs on a thread of its own with its own runtime,
/// because `Drop` cannot await and may run inside (or after) the test's runtime.
struct ScratchDatabase {
    admin_url: String,
    name: String,
}

impl ScratchDatabase {
    async fn create() -> Option<(ScratchDatabase, String)> {
        let admin_url = admin_url()?;
        let name = scratch_name();
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .expect("connect to DOCREVIEW_TEST_DATABASE_URL");
        // A locale-aware (ICU) collation where the server has one: ordering and paging must
        // not depend on the database's locale, and under `C` any mistake there would hide.
        let icu = format!(
            "CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        );
        if admin.execute(icu.as_str()).await.is_err() {
            admin
                .execute(format!("CREATE DATABASE {name}").as_str())
                .await
                .expect("create scratch database");
        }
        let _ = admin.close().await;
        let url = with_database(&admin_url, &name);
        Some((ScratchDatabase { admin_url, name }, url))
    }
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        let dropper = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(mut admin) = PgConnection::connect(&admin_url).await else {
                    eprintln!("note: could not connect to drop scratch database {name}");
                    return;
                };
                // FORCE: the dropped store's pool may still hold connections.
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                if let Err(error) = admin.execute(sql.as_str()).await {
                    eprintln!("note: could not drop scratch database {name}: {error}");
                }
                let _ = admin.close().await;
            });
        });
        // Never panic in Drop (it may run while a failed check unwinds).
        let _ = dropper.join();
    }
}

fn test_options() -> PgOptions {
    PgOptions {
        max_connections: 20,
        statement_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(5),
        retry_for: Duration::from_secs(10),
    }
}

async fn fresh_store() -> Option<FreshStore> {
    let (scratch, url) = ScratchDatabase::create().await?;
    let store = PgStore::connect(&url, test_options())
        .await
        .expect("connect to the scratch database");
    Some(FreshStore::new(store, scratch))
}

docreview_store_conformance::conformance_tests!(fresh_store);

/// Several nodes starting at once on an empty database: each migration is applied exactly once,
/// and every node comes up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_starting_together_migrate_once() {
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let nodes: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { PgStore::connect(&url, test_options()).await })
        })
        .collect();
    let mut stores = Vec::new();
    for node in nodes {
        stores.push(node.await.expect("task").expect("every node connects"));
    }
    let (count, max): (i64, Option<i64>) =
        sqlx::query_as("SELECT count(*), max(version) FROM schema_migrations")
            .fetch_one(stores[0].pool())
            .await
            .expect("read schema_migrations");
    assert_eq!((count, max), shipped_migrations());
    for store in &stores {
        store.ping().await.expect("ping");
    }
    drop(stores);
    drop(scratch);
}

/// How many migrations this backend ships, and the last one's version (from the file names,
/// `NNNN_name.sql`).
fn shipped_migrations() -> (i64, Option<i64>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let versions: Vec<i64> = std::fs::read_dir(dir)
        .expect("the migrations directory")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".sql")?.split('_').next()?.parse().ok()
        })
        .collect();
    (
        i64::try_from(versions.len()).expect("few"),
        versions.into_iter().max(),
    )
}

/// Two nodes claiming the outbox at once take each row once: `FOR UPDATE SKIP LOCKED` across
/// pools, as across servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outbox_claims_hold_across_nodes() {
    use docreview_core::outbox::{OutboxEntry, Sink};
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let nodes: Vec<Arc<dyn Store>> = vec![
        Arc::new(
            PgStore::connect(&url, test_options())
                .await
                .expect("node a"),
        ),
        Arc::new(
            PgStore::connect(&url, test_options())
                .await
                .expect("node b"),
        ),
    ];
    let entries: Vec<OutboxEntry> = (0..400)
        .map(|n| OutboxEntry {
            id: format!("dlv_{n:04}"),
            sink: Sink::Webhook,
            kind: "ping".into(),
            event_id: format!("evt_{n:04}"),
            target: None,
            payload: "{}".into(),
            created_at: T0,
            next_attempt_at: T0,
            dedupe_key: None,
        })
        .collect();
    nodes[0].add_outbox(entries).await.expect("add");
    let claimers: Vec<_> = (0..8)
        .map(|i| {
            let node = Arc::clone(&nodes[i % 2]);
            tokio::spawn(async move {
                let mut mine = Vec::new();
                for round in 0.. {
                    let rows = node
                        .claim_outbox(
                            Sink::Webhook,
                            &format!("node_{i}/{round}"),
                            T0,
                            T0 + 60_000,
                            9,
                        )
                        .await
                        .expect("claim");
                    if rows.is_empty() {
                        return mine;
                    }
                    mine.extend(rows.into_iter().map(|row| row.id));
                }
                mine
            })
        })
        .collect();
    let mut all = Vec::new();
    for claimer in claimers {
        all.extend(claimer.await.expect("claimer"));
    }
    let distinct: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(
        (all.len(), distinct.len()),
        (400, 400),
        "each row to one claimant"
    );
    drop(nodes);
    drop(scratch);
}

/// Two nodes (two pools) writing one document: every write gets a distinct revision or a
/// conflict, and the revisions taken are exactly 1..=N.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revision_check_holds_across_nodes() {
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let node_a: Arc<dyn Store> = Arc::new(
        PgStore::connect(&url, test_options())
            .await
            .expect("node a"),
    );
    let node_b: Arc<dyn Store> = Arc::new(
        PgStore::connect(&url, test_options())
            .await
            .expect("node b"),
    );
    user(&node_a, "usr_alice").await;
    review(&node_a, "rev", "usr_alice", T0).await;

    let writers: Vec<_> = (0..12)
        .map(|i| {
            let node = if i % 2 == 0 {
                Arc::clone(&node_a)
            } else {
                Arc::clone(&node_b)
            };
            tokio::spawn(async move {
                let mut conflicts = 0;
                loop {
                    let current = head(&node, "rev").await.review.comments_revision;
                    let at = T0 + 1 + i;
                    let write = comments_write(
                        current,
                        at,
                        vec![comment("rev", &format!("c{i}"), "usr_alice", at)],
                    );
                    match node.write_comments("rev", write).await {
                        Ok(revision) => return (revision, conflicts),
                        Err(StoreError::RevisionConflict { .. }) => conflicts += 1,
                        Err(other) => panic!("unexpected error: {other:?}"),
                    }
                }
            })
        })
        .collect();
    let mut revisions = Vec::new();
    for writer in writers {
        revisions.push(writer.await.expect("writer").0);
    }
    revisions.sort_unstable();
    assert_eq!(revisions, (1..=12).collect::<Vec<i64>>());
    let state = node_b
        .review_state("rev")
        .await
        .expect("state")
        .expect("exists");
    assert_eq!(state.head.review.comments_revision, 12);
    assert_eq!(state.comments.len(), 12);
    drop((node_a, node_b));
    drop(scratch);
}

/// An unreachable server is retried until `retry_for` runs out, then `Unavailable`; a server
/// that refuses the credentials or lacks the database fails at once with `Internal`.
#[tokio::test]
async fn connect_retries_only_what_retrying_can_cure() {
    // Port 1 on loopback: nothing listens there, so every attempt is refused at once.
    let started = Instant::now();
    let options = PgOptions {
        retry_for: Duration::from_millis(700),
        connect_timeout: Duration::from_millis(500),
        ..PgOptions::default()
    };
    let outcome = PgStore::connect("postgres://app:hunter2@127.0.0.1:1/docs", options).await;
    let elapsed = started.elapsed();
    match outcome {
        Err(StoreError::Unavailable(error)) => {
            assert!(!error.to_string().contains("hunter2"));
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert!(
        elapsed >= Duration::from_millis(600),
        "retried for about retry_for: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_secs(5),
        "then gave up: {elapsed:?}"
    );

    assert!(matches!(
        PgStore::connect("mysql://nope", PgOptions::default()).await,
        Err(StoreError::Internal(_))
    ));

    let Some(admin_url) = admin_url() else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped the rest");
        return;
    };
    let started = Instant::now();
    let missing = with_database(&admin_url, "docreview_t_does_not_exist");
    match PgStore::connect(&missing, PgOptions::default()).await {
        Err(StoreError::Internal(_)) => {}
        other => panic!("a missing database is not retried: {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The statement timeout is set on every pooled connection, and a statement cut off by it
/// answers `Unavailable`.
#[tokio::test]
async fn statement_timeout_applies() {
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let options = PgOptions {
        statement_timeout: Duration::from_millis(250),
        ..test_options()
    };
    let store = PgStore::connect(&url, options).await.expect("connect");
    let shown: String = sqlx::query_scalar("SHOW statement_timeout")
        .fetch_one(store.pool())
        .await
        .expect("show");
    assert_eq!(shown, "250ms");
    let error = sqlx::query("SELECT pg_sleep(2)")
        .execute(store.pool())
        .await
        .expect_err("cut off by the timeout");
    let code = error
        .as_database_error()
        .and_then(|e| e.code().map(std::borrow::Cow::into_owned));
    assert_eq!(code.as_deref(), Some("57014"));
    assert!(!format!("{store:?}").contains("password"));
    drop(store);
    drop(scratch);
}

#[test]
fn with_database_replaces_only_the_database() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
        "postgres://postgres@127.0.0.1:5432/x"
    );
    assert_eq!(
        with_database("postgres://u:p@localhost/test?sslmode=disable", "x"),
        "postgres://u:p@localhost/x?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://localhost", "x"),
        "postgres://localhost/x"
    );
}

fn prefix_query(words: &[&str]) -> SearchQuery {
    SearchQuery {
        terms: words
            .iter()
            .map(|word| SearchTerm::Prefix((*word).to_string()))
            .collect(),
    }
}

async fn comment_hits(store: &Arc<dyn Store>, visibility: Visibility, words: &[&str]) -> usize {
    let search = CommentSearch {
        visibility,
        query: prefix_query(words),
        status: None,
        category: None,
        review_id: None,
        assignee_id: None,
        offset: 0,
        limit: 50,
    };
    store
        .search_comments(search)
        .await
        .expect("search comments")
        .len()
}

/// Migration 2 on a database holding version-1 data: comments are searchable at once, titles
/// too, and documents wait for the backfill of their text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migration_2_covers_existing_rows() {
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let mut conn = PgConnection::connect(&url).await.expect("connect");
    conn.execute(include_str!("../migrations/0001_initial.sql"))
        .await
        .expect("schema version 1");
    conn.execute(
        "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL); \
         INSERT INTO schema_migrations VALUES (1, 0); \
         INSERT INTO users VALUES ('usr_a', 'a@example.com', 'A', 'local', 'internal', 'active', FALSE, NULL, 0); \
         INSERT INTO reviews VALUES ('rev', 'Quarterly report', 'usr_a', 'link', '[]', FALSE, 1, 1, 1, 0, 0, 'rev_v1', NULL, NULL); \
         INSERT INTO versions VALUES ('rev_v1', 'rev', 1, 'v1', 0, 'sha256:x', '[]', ''); \
         INSERT INTO comments VALUES ('c1', 'rev', 'usr_a', 'note', 'open', 'Revenue figures look off', \
           'rev_v1', '{\"versionId\":\"rev_v1\",\"sectionId\":null,\"quote\":null,\"position\":null,\"state\":\"exact\"}', \
           NULL, 1, NULL, NULL);",
    )
    .await
    .expect("version-1 data");
    let _ = conn.close().await;

    let store: Arc<dyn Store> = Arc::new(
        PgStore::connect(&url, test_options())
            .await
            .expect("migrate"),
    );
    let view = Visibility::All {
        user_id: "usr_a".into(),
    };
    assert_eq!(comment_hits(&store, view.clone(), &["revenue"]).await, 1);
    let docs = |words: &'static [&'static str]| {
        let store = Arc::clone(&store);
        let view = view.clone();
        async move {
            store
                .search_reviews(ReviewSearch {
                    visibility: view,
                    query: prefix_query(words),
                    offset: 0,
                    limit: 10,
                })
                .await
                .expect("search reviews")
                .len()
        }
    };
    assert_eq!(docs(&["quarterly"]).await, 1, "titles are searchable");
    assert_eq!(docs(&["ledger"]).await, 0);
    assert_eq!(
        store
            .reviews_without_search_text(10)
            .await
            .expect("pending"),
        [("rev".to_string(), "rev_v1".to_string())]
    );
    // A stale version is ignored; the latest one sets the text.
    store
        .set_search_text("rev", "rev_v0", "ledger".into())
        .await
        .expect("stale");
    assert_eq!(docs(&["ledger"]).await, 0);
    store
        .set_search_text("rev", "rev_v1", "ledger lines".into())
        .await
        .expect("set");
    assert_eq!(docs(&["ledger"]).await, 1);
    assert!(
        store
            .reviews_without_search_text(10)
            .await
            .expect("pending")
            .is_empty()
    );
    // Set once: a later backfill (say, of a body replaced in place) never overwrites it.
    store
        .set_search_text("rev", "rev_v1", "stale words".into())
        .await
        .expect("ignored");
    assert_eq!(docs(&["ledger"]).await, 1);
    assert_eq!(docs(&["stale"]).await, 0);
    store
        .set_search_text("gone", "gone_v1", "x".into())
        .await
        .expect("a gone document is not an error");
    drop(store);
    drop(scratch);
}

/// A request the client gives up on drops the store call wherever it is waiting, including
/// between sending `BEGIN` and reading its answer. The connection must not go back to the pool
/// inside that transaction: the next caller's writes would then never be committed (and hold
/// their locks) while they answer success. Cancelled after every number of polls up to where
/// the call finishes, on a pool of one connection so that the next caller gets the same one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_mid_begin_leaves_no_transaction_on_the_pool() {
    let Some((scratch, url)) = ScratchDatabase::create().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let options = PgOptions {
        max_connections: 1,
        ..test_options()
    };
    let store = PgStore::connect(&url, options).await.expect("connect");
    let mut observer = PgConnection::connect(&url).await.expect("observer");
    observer
        .execute("CREATE TABLE probe (n int)")
        .await
        .expect("probe table");
    for polls in 1..200_i32 {
        let call = store.share_rate_counts(T0, vec![("key".to_string(), 1)]);
        if finishes_within(call, polls).await {
            assert!(
                polls > 1,
                "the call finished at its first poll: nothing was cancelled"
            );
            break;
        }
        sqlx::query("INSERT INTO probe VALUES ($1)")
            .bind(polls)
            .execute(store.pool())
            .await
            .expect("insert");
        let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM probe WHERE n = $1")
            .bind(polls)
            .fetch_one(&mut observer)
            .await
            .expect("count");
        assert_eq!(
            seen, 1,
            "after a call dropped at poll {polls}, a write through the pool was not committed"
        );
    }
    drop(store);
    drop(scratch);
}

/// Polls `future` up to `polls` times, letting the runtime (and so the network) run between
/// polls; drops it unfinished unless it finished. Whether it finished.
async fn finishes_within<F: std::future::Future>(future: F, polls: i32) -> bool {
    let mut future = std::pin::pin!(future);
    for _ in 0..polls {
        let polled = std::future::poll_fn(|cx| std::task::Poll::Ready(future.as_mut().poll(cx)));
        if polled.await.is_ready() {
            return true;
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    false
}
