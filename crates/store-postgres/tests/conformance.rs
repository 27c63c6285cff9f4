//! Runs the storage conformance suite against the PostgreSQL backend, plus the checks only a
//! shared database has (several nodes on one database, startup while it is unreachable).
//!
//! Set `DOCREVIEW_TEST_DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`) to a
//! database whose user may create databases: each check creates its own scratch database
//! `docreview_t_<random>` through it and drops it when the check's store is dropped, also when
//! the check fails. Unset, every test returns early with a note.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use docreview_core::events::EventKind;
use docreview_core::model::{AccessMode, CommentStatus, Membership, ProjectRole};
use docreview_core::store::{
    CommentHit, CommentSearch, MATCH_END, MATCH_START, ReviewHit, ReviewSearch, ReviewUpdate,
    SNIPPET_ELLIPSIS, SearchQuery, SearchTerm, Store, StoreError, Visibility,
};
use docreview_store_conformance::StoreWithCleanup;
use docreview_store_conformance::fixtures::{
    T0, comment, comments_write, head, member, member_view, message, new_review, projects, review,
    user, write_items,
};
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

async fn fresh_store() -> Option<Arc<dyn Store>> {
    let (scratch, url) = ScratchDatabase::create().await?;
    let store = PgStore::connect(&url, test_options())
        .await
        .expect("connect to the scratch database");
    Some(Arc::new(StoreWithCleanup::new(Arc::new(store), scratch)))
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
    assert_eq!((count, max), (2, Some(2)));
    for store in &stores {
        store.ping().await.expect("ping");
    }
    drop(stores);
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
        .and_then(|e| e.code().map(|c| c.into_owned()));
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

fn comment_search(visibility: Visibility, query: SearchQuery) -> CommentSearch {
    CommentSearch {
        visibility,
        query,
        status: None,
        category: None,
        review_id: None,
        offset: 0,
        limit: 50,
    }
}

async fn comment_hits(store: &Arc<dyn Store>, search: CommentSearch) -> Vec<CommentHit> {
    store
        .search_comments(search)
        .await
        .expect("search comments")
}

/// Words are runs of letters and digits on both sides: the index splits URLs, e-mail addresses
/// and hyphenated words where the query parser does, and snippets mark the match inside them
/// and show the text's punctuation unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_splits_words_at_punctuation() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let alice = user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let mut first = comment("rev", "c1", "usr_alice", T0 + 1);
    first.body =
        "See https://wiki.example.org/deploy-guide, or mail ops@example.com (v1.2) today.".into();
    let mut second = comment("rev", "c2", "usr_alice", T0 + 2);
    second.body = "Nothing to see here.".into();
    write_items(&store, "rev", vec![first, second], vec![]).await;

    let view = member_view(&alice);
    for words in [&["deploy"][..], &["guide"], &["ops", "example"], &["v1"]] {
        let hits = comment_hits(&store, comment_search(view.clone(), prefix_query(words))).await;
        let ids: Vec<&str> = hits.iter().map(|hit| hit.comment_id.as_str()).collect();
        assert_eq!(ids, ["c1"], "{words:?}");
    }
    let hits = comment_hits(
        &store,
        comment_search(view.clone(), prefix_query(&["deploy"])),
    )
    .await;
    assert_eq!(
        hits[0].snippet,
        format!(
            "See https://wiki.example.org/{MATCH_START}deploy{MATCH_END}-guide, or mail ops@example.com (v1.2) today"
        )
    );
    let phrase = SearchQuery {
        terms: vec![SearchTerm::Phrase(vec!["deploy".into(), "guide".into()])],
    };
    let hits = comment_hits(&store, comment_search(view.clone(), phrase)).await;
    assert_eq!(hits.len(), 1);
    // A phrase matches whole words only.
    let phrase = SearchQuery {
        terms: vec![SearchTerm::Phrase(vec!["deplo".into(), "guide".into()])],
    };
    assert!(
        comment_hits(&store, comment_search(view, phrase))
            .await
            .is_empty()
    );
}

/// Snippets of long texts are cut around the match, with `SNIPPET_ELLIPSIS` where text was left
/// out; replies are found with their comment's status; deleted items, and replies of deleted
/// comments, are not found; ranking puts more matches first, ties newest first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_comments_snippets_replies_and_order() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let alice = user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    review(&store, "rev", "usr_alice", T0).await;
    let words: Vec<String> = (0..60).map(|i| format!("w{i}")).collect();
    let mut long = comment("rev", "c_long", "usr_alice", T0 + 1);
    long.body = format!(
        "{} needle {}.",
        words[..30].join(" "),
        words[30..].join(" ")
    );
    let mut twice = comment("rev", "c_twice", "usr_alice", T0 + 2);
    twice.body = "needle and needle".into();
    let mut old = comment("rev", "c_old", "usr_alice", T0 + 3);
    old.body = "one needle".into();
    let mut new = comment("rev", "c_new", "usr_alice", T0 + 4);
    new.body = "two needle".into();
    let mut gone = comment("rev", "c_gone", "usr_alice", T0 + 5);
    gone.body = "deleted needle".into();
    let mut reply = message(&old, "m_reply", "usr_bob", T0 + 6);
    reply.body = "a needle in reply".into();
    let mut orphan = message(&gone, "m_orphan", "usr_bob", T0 + 7);
    orphan.body = "needle under a deleted comment".into();
    write_items(
        &store,
        "rev",
        vec![long, twice, old.clone(), new, gone.clone()],
        vec![reply, orphan],
    )
    .await;
    gone.deleted_at = Some(T0 + 8);
    old.status = CommentStatus::Closed;
    write_items(&store, "rev", vec![gone, old], vec![]).await;

    let view = member_view(&alice);
    let hits = comment_hits(
        &store,
        comment_search(view.clone(), prefix_query(&["needle"])),
    )
    .await;
    let ids: Vec<(&str, Option<&str>)> = hits
        .iter()
        .map(|hit| (hit.comment_id.as_str(), hit.message_id.as_deref()))
        .collect();
    assert_eq!(
        ids[0],
        ("c_twice", None),
        "more matches rank first: {ids:?}"
    );
    assert_eq!(ids.len(), 5, "{ids:?}");
    let reply_hit = hits
        .iter()
        .find(|hit| hit.message_id.is_some())
        .expect("the reply is found");
    assert_eq!(
        (reply_hit.comment_id.as_str(), reply_hit.author.id.as_str()),
        ("c_old", "usr_bob")
    );
    assert_eq!(reply_hit.status, CommentStatus::Closed);
    assert_eq!(reply_hit.created_at, T0 + 6);
    let position = |id: &str| ids.iter().position(|(c, m)| *c == id && m.is_none());
    assert!(
        position("c_new") < position("c_old"),
        "ties newest first: {ids:?}"
    );

    let long_hit = hits
        .iter()
        .find(|hit| hit.comment_id == "c_long")
        .expect("long comment found");
    let snippet = &long_hit.snippet;
    assert!(
        snippet.starts_with(SNIPPET_ELLIPSIS) && snippet.ends_with(SNIPPET_ELLIPSIS),
        "{snippet}"
    );
    assert!(
        snippet.contains(&format!("{MATCH_START}needle{MATCH_END}")),
        "{snippet}"
    );
    let shown = snippet.split_whitespace().count();
    assert!((16..=24).contains(&shown), "{shown} words: {snippet}");
    let short = hits
        .iter()
        .find(|hit| hit.comment_id == "c_twice")
        .expect("short comment found");
    assert_eq!(
        short.snippet,
        format!("{MATCH_START}needle{MATCH_END} and {MATCH_START}needle{MATCH_END}")
    );

    // Filters apply to the comment, also for replies; pages follow the same order.
    let mut closed = comment_search(view.clone(), prefix_query(&["needle"]));
    closed.status = Some(CommentStatus::Closed);
    let closed: Vec<Option<String>> = comment_hits(&store, closed)
        .await
        .into_iter()
        .map(|hit| hit.message_id)
        .collect();
    assert_eq!(closed.len(), 2, "c_old and its reply");
    let mut paged = Vec::new();
    for offset in 0..5 {
        let mut page = comment_search(view.clone(), prefix_query(&["needle"]));
        page.offset = offset;
        page.limit = 1;
        let hit = comment_hits(&store, page).await;
        assert_eq!(hit.len(), 1);
        paged.push((hit[0].comment_id.clone(), hit[0].message_id.clone()));
    }
    let all: Vec<(String, Option<String>)> = hits
        .into_iter()
        .map(|hit| (hit.comment_id, hit.message_id))
        .collect();
    assert_eq!(paged, all);
}

/// Search sees what the list sees: owners, project members (external ones too), and internal
/// members through link mode and sharing; `All` sees everything and carries the caller's
/// project role.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_follows_visibility_and_projects() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    user(&store, "usr_owner").await;
    let internal = user(&store, "usr_internal").await;
    let external = member(&store, "usr_external", Membership::External).await;
    projects(&store, &["PRJ-1"]).await;
    store
        .change_project_roles(
            "PRJ-1",
            vec![("usr_external".into(), ProjectRole::Viewer)],
            vec![],
        )
        .await
        .expect("roles");
    let mut restricted = new_review("restricted", "usr_owner", T0);
    restricted.review.access_mode = AccessMode::Restricted;
    restricted.review.title = "Zebra restricted".into();
    store.create_review(restricted).await.expect("create");
    let mut linked = new_review("linked", "usr_owner", T0 + 1);
    linked.review.access_mode = AccessMode::Restricted;
    linked.review.title = "Zebra linked".into();
    linked.search_text = "The zebra crossing is in the linked document.".into();
    store.create_review(linked).await.expect("create");
    let mut open = new_review("open", "usr_owner", T0 + 2);
    open.review.title = "Open zebra".into();
    store.create_review(open).await.expect("create");
    assert!(
        store
            .link_project("linked", None, Some("PRJ-1"), T0 + 3)
            .await
            .expect("link")
    );

    let docs = |visibility: Visibility| {
        let store = Arc::clone(&store);
        async move {
            let hits = store
                .search_reviews(ReviewSearch {
                    visibility,
                    query: prefix_query(&["zebra"]),
                    offset: 0,
                    limit: 50,
                })
                .await
                .expect("search reviews");
            hits.into_iter()
                .map(|hit| (hit.summary.review.id.clone(), hit))
                .collect::<Vec<_>>()
        }
    };
    let ids = |hits: &[(String, ReviewHit)]| {
        let mut ids: Vec<String> = hits.iter().map(|(id, _)| id.clone()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&docs(member_view(&external)).await), ["linked"]);
    assert_eq!(ids(&docs(member_view(&internal)).await), ["open"]);
    let all = docs(Visibility::All {
        user_id: "usr_external".into(),
    })
    .await;
    assert_eq!(ids(&all), ["linked", "open", "restricted"]);
    let (_, linked_hit) = all.iter().find(|(id, _)| id == "linked").expect("linked");
    assert_eq!(linked_hit.summary.project_role, Some(ProjectRole::Viewer));
    assert_eq!(
        linked_hit.summary.project.as_ref().map(|p| p.code.as_str()),
        Some("PRJ-1")
    );
    // The text's snippet when the text matches, else the title's.
    assert_eq!(
        linked_hit.snippet,
        format!("The {MATCH_START}zebra{MATCH_END} crossing is in the linked document")
    );
    let (_, open_hit) = all.iter().find(|(id, _)| id == "open").expect("open");
    assert_eq!(
        open_hit.snippet,
        format!("Open {MATCH_START}zebra{MATCH_END}")
    );

    let found = comment_hits(
        &store,
        comment_search(member_view(&external), prefix_query(&["body"])),
    )
    .await;
    assert!(found.is_empty(), "no comments yet");

    // Comment search: the same rule, by both plans (external members read their documents'
    // items; everyone else goes through the index).
    for id in ["restricted", "linked", "open"] {
        let mut item = comment("", "", "usr_owner", T0 + 10);
        item.review_id = id.to_string();
        item.version_id = format!("{id}_v1");
        item.id = format!("c_{id}");
        item.body = format!("A giraffe in {id}.");
        let mut reply = message(&item, &format!("m_{id}"), "usr_owner", T0 + 11);
        reply.body = "Another giraffe.".into();
        write_items(&store, id, vec![item], vec![reply]).await;
    }
    let comment_ids = |visibility: Visibility| {
        let store = Arc::clone(&store);
        async move {
            let mut ids: Vec<String> =
                comment_hits(&store, comment_search(visibility, prefix_query(&["gir"])))
                    .await
                    .into_iter()
                    .map(|hit| hit.message_id.unwrap_or(hit.comment_id))
                    .collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(
        comment_ids(member_view(&external)).await,
        ["c_linked", "m_linked"]
    );
    assert_eq!(
        comment_ids(member_view(&internal)).await,
        ["c_open", "m_open"]
    );
    assert_eq!(
        comment_ids(Visibility::All {
            user_id: "usr_internal".into()
        })
        .await
        .len(),
        6
    );
    let mut only_linked = comment_search(member_view(&external), prefix_query(&["giraffe"]));
    only_linked.review_id = Some("open".into());
    assert!(comment_hits(&store, only_linked).await.is_empty());
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
    let hits = comment_hits(
        &store,
        comment_search(view.clone(), prefix_query(&["revenue"])),
    )
    .await;
    assert_eq!(hits.len(), 1);
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

/// `update_review`, `link_project` and `delete_review` announce `review` events through
/// NOTIFY, the last one with the state just before deletion, one change later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_changes_are_announced() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let mut events = store.subscribe();
    user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    projects(&store, &["PRJ-1"]).await;
    // The listener connects in the background: write until its first event arrives.
    let mut seq = head(&store, "rev").await.review.change_seq;
    let first = loop {
        store
            .update_review(ReviewUpdate {
                review_id: "rev".into(),
                at: T0 + 1,
                title: Some("Renamed".into()),
                ..ReviewUpdate::default()
            })
            .await
            .expect("update");
        seq += 1;
        if let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await
        {
            break event;
        }
    };
    assert_eq!(
        (first.kind, first.review_id.as_str()),
        (EventKind::Review, "rev")
    );
    // Drain anything from earlier attempts.
    while events.try_recv().is_ok() {}
    let _ = tokio::time::timeout(Duration::from_millis(300), async {
        while events.recv().await.is_ok() {}
    })
    .await;
    assert!(
        store
            .link_project("rev", None, Some("PRJ-1"), T0 + 2)
            .await
            .expect("link")
    );
    seq += 1;
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("link event")
        .expect("event");
    assert_eq!((event.kind, event.change_seq), (EventKind::Review, seq));
    assert!(
        !store
            .link_project("rev", None, None, T0 + 3)
            .await
            .expect("stale link")
    );
    store.delete_review("rev").await.expect("delete");
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("delete event")
        .expect("event");
    assert_eq!((event.kind, event.change_seq), (EventKind::Review, seq + 1));
    assert!(store.review_head("rev").await.expect("head").is_none());
    assert!(matches!(
        store.delete_review("rev").await,
        Err(StoreError::NotFound)
    ));
}

/// Ranking covers the newest 1,000 matches (as on SQLite): an older, better match outside them
/// is not found, and pages end there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_ranks_the_newest_thousand_matches() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let alice = user(&store, "usr_alice").await;
    review(&store, "rev", "usr_alice", T0).await;
    let items: Vec<_> = (0..1001)
        .map(|i| {
            let mut item = comment("rev", &format!("c{i:04}"), "usr_alice", T0 + 1 + i);
            item.body = if i == 0 {
                "needle needle needle".into()
            } else {
                format!("needle number {i}")
            };
            item
        })
        .collect();
    write_items(&store, "rev", items, vec![]).await;
    let mut search = comment_search(member_view(&alice), prefix_query(&["needle"]));
    search.limit = 200;
    let first = comment_hits(&store, search.clone()).await;
    assert_ne!(
        first[0].comment_id, "c0000",
        "the oldest match is outside the window"
    );
    search.offset = 950;
    assert_eq!(comment_hits(&store, search.clone()).await.len(), 50);
    search.offset = 1000;
    assert!(comment_hits(&store, search).await.is_empty());
}

/// A long document's snippet is cut around its first match, however deep in the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_document_snippets_find_the_match() {
    let Some(store) = fresh_store().await else {
        eprintln!("note: {ADMIN_URL_VAR} is not set; skipped");
        return;
    };
    let alice = user(&store, "usr_alice").await;
    let mut long = new_review("long", "usr_alice", T0);
    let filler: Vec<String> = (0..20_000).map(|i| format!("w{i}")).collect();
    // "aardvark" inside another word first: the window must start at a word.
    long.search_text = format!(
        "{} xaardvark {} (Aardvark) sighted. {}",
        filler[..5000].join(" "),
        filler[5000..15_000].join(" "),
        filler[15_000..].join(" ")
    );
    store.create_review(long).await.expect("create");
    let hits = store
        .search_reviews(ReviewSearch {
            visibility: member_view(&alice),
            query: prefix_query(&["aardvark"]),
            offset: 0,
            limit: 10,
        })
        .await
        .expect("search");
    assert_eq!(hits.len(), 1);
    let snippet = &hits[0].snippet;
    assert!(
        snippet.contains(&format!("({MATCH_START}Aardvark{MATCH_END}) sighted")),
        "{snippet}"
    );
    assert!(
        snippet.starts_with(SNIPPET_ELLIPSIS) && snippet.ends_with(SNIPPET_ELLIPSIS),
        "{snippet}"
    );
}
