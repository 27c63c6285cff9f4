//! Checks only the SQLite backend has: upgrading a version-1 database (search backfill), and the
//! full-text indexes staying exactly in step with the rows (FTS5's own integrity check).

use std::path::Path;

use docreview_core::model::{
    AccessMode, Anchor, AnchorState, Category, CommentRecord, CommentStatus, MessageRecord, Millis,
    Provider, User, UserStatus, VersionRecord,
};
use docreview_core::store::{
    AccountStore, CommentSearch, CommentStore, CommentsWrite, NewReview, ReviewSearch, ReviewStore,
    ReviewUpdate, SearchQuery, SearchStore, SearchTerm, VersionWrite, Visibility,
};
use docreview_store_sqlite::SqliteStore;
use rusqlite::Connection;

const T0: Millis = 1_700_000_000_000;

fn all() -> Visibility {
    Visibility::All {
        user_id: "usr_admin".to_string(),
    }
}

fn words(list: &[&str]) -> SearchQuery {
    SearchQuery {
        terms: list
            .iter()
            .map(|w| SearchTerm::Prefix(w.to_string()))
            .collect(),
    }
}

async fn comment_hits(store: &SqliteStore, word: &str) -> Vec<String> {
    let mut keys: Vec<String> = store
        .search_comments(CommentSearch {
            visibility: all(),
            query: words(&[word]),
            status: None,
            category: None,
            review_id: None,
            assignee_id: None,
            offset: 0,
            limit: 100,
        })
        .await
        .expect("search comments")
        .into_iter()
        .map(|h| match h.message_id {
            Some(m) => format!("{}/{m}", h.comment_id),
            None => h.comment_id,
        })
        .collect();
    keys.sort();
    keys
}

async fn doc_hits(store: &SqliteStore, word: &str) -> Vec<String> {
    let mut ids: Vec<String> = store
        .search_reviews(ReviewSearch {
            visibility: all(),
            query: words(&[word]),
            offset: 0,
            limit: 100,
        })
        .await
        .expect("search reviews")
        .into_iter()
        .map(|h| h.summary.review.id)
        .collect();
    ids.sort();
    ids
}

/// A version-1 database (as the previous release left it) with documents, comments and replies,
/// some deleted.
fn version_one_database(path: &Path) {
    let conn = Connection::open(path).expect("open");
    conn.execute_batch(include_str!("../migrations/0001_initial.sql"))
        .expect("schema 1");
    conn.execute_batch(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
         INSERT INTO schema_migrations VALUES (1, 0);
         INSERT INTO users VALUES ('usr_a', 'a@example.com', 'A', 'local', 'internal', 'active', 0, NULL, 0);
         INSERT INTO reviews VALUES ('old_1', 'Legacy harbour plan', 'usr_a', 'link', '[]', 0, 4, 1, 4, 1, 2, 'old_1_v1', NULL, NULL);
         INSERT INTO reviews VALUES ('old_2', 'Second legacy', 'usr_a', 'link', '[]', 0, 0, 1, 1, 3, 3, 'old_2_v2', NULL, NULL);
         INSERT INTO versions VALUES ('old_1_v1', 'old_1', 1, 'v1', 1, 'sha256:1', '[]', X'3c703e');
         INSERT INTO versions VALUES ('old_2_v1', 'old_2', 1, 'v1', 3, 'sha256:2', '[]', X'3c703e');
         INSERT INTO versions VALUES ('old_2_v2', 'old_2', 2, 'v2', 3, 'sha256:3', '[]', X'3c703e');
         INSERT INTO comments VALUES ('c_live', 'old_1', 'usr_a', 'note', 'open', 'lighthouse keeper', 'old_1_v1', '{}', NULL, 1, NULL, NULL);
         INSERT INTO comments VALUES ('c_gone', 'old_1', 'usr_a', 'note', 'open', 'lighthouse wreck', 'old_1_v1', '{}', NULL, 1, NULL, 2);
         INSERT INTO messages VALUES ('m_live', 'c_live', 'old_1', 'usr_a', 'lighthouse reply', NULL, 2, NULL, NULL);
         INSERT INTO messages VALUES ('m_gone', 'c_live', 'old_1', 'usr_a', 'lighthouse erased', NULL, 2, NULL, 3);
         INSERT INTO messages VALUES ('m_orphan', 'c_gone', 'old_1', 'usr_a', 'lighthouse under a deleted comment', NULL, 2, NULL, NULL);",
    )
    .expect("version 1 rows");
}

/// Upgrading indexes every live comment and reply and every title at once, and leaves the
/// documents' texts to the backfill, which `set_search_text` completes.
#[tokio::test]
async fn upgrade_indexes_what_existed_and_offers_texts_to_backfill() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("docreview.db");
    version_one_database(&path);
    let store = SqliteStore::open(&path).expect("open and migrate");

    assert_eq!(
        comment_hits(&store, "lighthouse").await,
        vec!["c_live".to_string(), "c_live/m_live".to_string()],
        "live comments and replies only (not deleted ones, nor replies of deleted comments)"
    );
    assert_eq!(doc_hits(&store, "legacy").await, vec!["old_1", "old_2"]);
    assert_eq!(doc_hits(&store, "harbour").await, vec!["old_1"]);

    let pending = store.reviews_without_search_text(1).await.expect("pending");
    assert_eq!(pending.len(), 1, "at most `limit`");
    let mut pending = store
        .reviews_without_search_text(10)
        .await
        .expect("pending");
    pending.sort();
    assert_eq!(
        pending,
        vec![
            ("old_1".to_string(), "old_1_v1".to_string()),
            ("old_2".to_string(), "old_2_v2".to_string())
        ],
        "each with its latest version"
    );
    store
        .set_search_text("old_2", "old_2_v2", "Quayside cranes".to_string())
        .await
        .expect("set");
    store
        .set_search_text("old_1", "old_1_v1", String::new())
        .await
        .expect("an empty text is a text");
    assert!(
        store
            .reviews_without_search_text(10)
            .await
            .expect("pending")
            .is_empty()
    );
    assert_eq!(doc_hits(&store, "quayside").await, vec!["old_2"]);
    assert_eq!(
        doc_hits(&store, "legacy").await,
        vec!["old_1", "old_2"],
        "titles stay found"
    );
    drop(store);
    assert_indexes_intact(&path);
}

/// FTS5 checks its index against the rows it indexes (`integrity-check` with rank 1 reads the
/// external content): any trigger that told it a wrong old text shows here.
fn assert_indexes_intact(path: &Path) {
    let conn = Connection::open(path).expect("open");
    for table in ["comment_search", "review_search"] {
        conn.execute(
            &format!("INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        )
        .unwrap_or_else(|e| panic!("{table} is out of step with its rows: {e}"));
    }
    let items: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM comment_search_items) - \
               ((SELECT count(*) FROM comments WHERE deleted_at IS NULL) + \
                (SELECT count(*) FROM messages m JOIN comments c ON c.id = m.comment_id \
                 WHERE m.deleted_at IS NULL AND c.deleted_at IS NULL))",
            [],
            |row| row.get(0),
        )
        .expect("count");
    assert_eq!(items, 0, "one item per live comment and live reply");
    let texts: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM review_texts) - (SELECT count(*) FROM reviews)",
            [],
            |row| row.get(0),
        )
        .expect("count");
    assert_eq!(texts, 0, "one text per document");
}

fn account(id: &str) -> docreview_core::model::Account {
    docreview_core::model::Account {
        user: User {
            id: id.to_string(),
            provider: Provider::Local,
            display_name: id.to_string(),
            handle: id.to_string(),
        },
        email: format!("{id}@example.com"),
        membership: docreview_core::model::Membership::Internal,
        status: UserStatus::Active,
        is_admin: false,
        created_at: T0,
    }
}

fn version(review_id: &str, id: &str) -> VersionRecord {
    VersionRecord {
        id: id.to_string(),
        review_id: review_id.to_string(),
        label: id.to_string(),
        created_at: T0,
        source_hash: format!("sha256:{id}"),
        sections: Vec::new(),
    }
}

fn new_review(id: &str, title: &str, text: &str) -> NewReview {
    let version = version(id, &format!("{id}_v1"));
    NewReview {
        review: docreview_core::model::ReviewRecord {
            id: id.to_string(),
            title: title.to_string(),
            owner_id: "usr_a".to_string(),
            access_mode: AccessMode::Link,
            tags: Vec::new(),
            archived: false,
            comments_revision: 0,
            structure_revision: 0,
            change_seq: 1,
            created_at: T0,
            updated_at: T0,
            latest_version_id: version.id.clone(),
            latest_source_hash: version.source_hash.clone(),
            structure: None,
            project_code: None,
            finalized: None,
        },
        grants: Vec::new(),
        html: b"<p></p>".to_vec(),
        search_text: text.to_string(),
        outbox: Vec::new(),
        version,
    }
}

fn comment(review_id: &str, id: &str, body: &str) -> CommentRecord {
    CommentRecord {
        id: id.to_string(),
        review_id: review_id.to_string(),
        author_id: "usr_a".to_string(),
        category: Category::Note,
        status: CommentStatus::Open,
        body: body.to_string(),
        version_id: format!("{review_id}_v1"),
        anchor: Anchor {
            version_id: format!("{review_id}_v1"),
            section_id: None,
            quote: None,
            position: None,
            state: AnchorState::Orphaned,
        },
        run_id: None,
        created_at: T0,
        edited_at: None,
        deleted_at: None,
        mentions: Vec::new(),
        thread_revision: CommentRecord::NEW_THREAD_REVISION,
        assignee_id: None,
        suggestion: None,
    }
}

fn reply(to: &CommentRecord, id: &str, body: &str) -> MessageRecord {
    MessageRecord {
        id: id.to_string(),
        comment_id: to.id.clone(),
        review_id: to.review_id.clone(),
        author_id: "usr_a".to_string(),
        body: body.to_string(),
        run_id: None,
        created_at: T0,
        edited_at: None,
        deleted_at: None,
        mentions: Vec::new(),
    }
}

async fn write(
    store: &SqliteStore,
    review_id: &str,
    comments: Vec<CommentRecord>,
    messages: Vec<MessageRecord>,
) {
    let current = store
        .review_head(review_id)
        .await
        .expect("head")
        .expect("exists")
        .review
        .comments_revision;
    store
        .write_comments(
            review_id,
            CommentsWrite {
                expected_revision: current,
                at: T0,
                comments,
                messages,
                ..CommentsWrite::default()
            },
        )
        .await
        .expect("write");
}

/// Every kind of write that changes indexed text, then FTS5's own integrity check.
#[tokio::test]
async fn indexes_stay_in_step_with_every_write() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("docreview.db");
    let store = SqliteStore::open(&path).expect("open");
    store
        .create_account(account("usr_a"), None)
        .await
        .expect("account");
    for id in ["r1", "r2"] {
        store
            .create_review(new_review(id, &format!("Title {id}"), "first text"))
            .await
            .expect("create");
    }
    let c1 = comment("r1", "c1", "one body");
    let c2 = comment("r1", "c2", "two body");
    let m1 = reply(&c1, "m1", "reply one");
    let m2 = reply(&c2, "m2", "reply two");
    write(
        &store,
        "r1",
        vec![c1.clone(), c2.clone()],
        vec![m1.clone(), m2.clone()],
    )
    .await;
    write(
        &store,
        "r2",
        vec![comment("r2", "c3", "three body")],
        vec![],
    )
    .await;

    // Edit, edit-and-delete at once, status change, reply edit, reply delete.
    let mut c1b = c1.clone();
    c1b.body = "one edited".to_string();
    c1b.status = CommentStatus::Closed;
    let mut m1b = m1.clone();
    m1b.body = "reply edited".to_string();
    write(&store, "r1", vec![c1b.clone()], vec![m1b.clone()]).await;
    let mut m1c = m1b.clone();
    m1c.deleted_at = Some(T0 + 1);
    write(&store, "r1", vec![], vec![m1c.clone()]).await;
    // A comment deleted takes its live reply out; restored, both come back.
    let mut c2b = c2.clone();
    c2b.deleted_at = Some(T0 + 1);
    c2b.body = "two edited while deleted".to_string();
    write(&store, "r1", vec![c2b.clone()], vec![]).await;
    assert_eq!(comment_hits(&store, "two").await, Vec::<String>::new());
    let mut c2c = c2b.clone();
    c2c.deleted_at = None;
    write(
        &store,
        "r1",
        vec![c2c],
        vec![reply(&c2, "m3", "late reply")],
    )
    .await;
    assert_eq!(
        comment_hits(&store, "two").await,
        vec!["c2".to_string(), "c2/m2".to_string()]
    );
    // A reply restored.
    let mut m1d = m1c.clone();
    m1d.deleted_at = None;
    write(&store, "r1", vec![], vec![m1d]).await;
    assert_eq!(
        comment_hits(&store, "reply").await,
        vec![
            "c1/m1".to_string(),
            "c2/m2".to_string(),
            "c2/m3".to_string()
        ]
    );

    // Titles, texts (append and replace), set_search_text, deletion.
    store
        .update_review(ReviewUpdate {
            review_id: "r2".to_string(),
            at: T0 + 2,
            title: Some("Renamed".to_string()),
            ..ReviewUpdate::default()
        })
        .await
        .expect("rename");
    for (latest, id, append) in [("r1_v1", "r1_v2", true), ("r1_v2", "r1_v2", false)] {
        let revision = store
            .review_head("r1")
            .await
            .expect("head")
            .expect("exists")
            .review
            .comments_revision;
        store
            .write_version(VersionWrite {
                review_id: "r1".to_string(),
                expected_latest_version_id: latest.to_string(),
                expected_comments_revision: revision,
                version: version("r1", id),
                html: b"<p></p>".to_vec(),
                append,
                anchors: Vec::new(),
                structure_changed: false,
                at: T0 + 3,
                search_text: format!("text of {id} appended {append}"),
                outbox: Vec::new(),
                closed: Vec::new(),
            })
            .await
            .expect("version");
    }
    store
        .set_search_text("r2", "r2_v1", "backfilled text".to_string())
        .await
        .expect("set");
    store
        .create_review(new_review("r3", "Doomed", "doomed text"))
        .await
        .expect("create");
    write(
        &store,
        "r3",
        vec![comment("r3", "c9", "doomed comment")],
        vec![],
    )
    .await;
    store.delete_review("r3", Vec::new()).await.expect("delete");
    assert!(comment_hits(&store, "doomed").await.is_empty());
    assert!(doc_hits(&store, "doomed").await.is_empty());
    drop(store);
    assert_indexes_intact(&path);
}
