//! Record builders and small helpers shared by the checks. Every record is complete and valid,
//! so a check changes only the fields it is about.

use std::sync::Arc;

use docreview_core::model::{
    AccessGrant, AccessMode, Account, Anchor, AnchorState, Category, CommentRecord, CommentStatus,
    GrantRole, Membership, MessageRecord, Millis, Position, ProjectRecord, Provider, Quote,
    ReviewHead, ReviewRecord, RunKind, RunRecord, RunStatus, Scope, Section, StatusEventRecord,
    TokenRecord, User, UserStatus, VersionRecord,
};
use docreview_core::store::{CommentsWrite, NewReview, ReviewQuery, Store, StoreError, Visibility};

/// A fixed point in time (2023-11-14); checks count from here.
pub const T0: Millis = 1_700_000_000_000;

pub fn account(id: &str, email: &str, membership: Membership) -> Account {
    Account {
        user: User {
            id: id.to_string(),
            provider: Provider::Local,
            display_name: format!("User {id}"),
            handle: id.to_lowercase(),
        },
        email: email.to_string(),
        membership,
        status: UserStatus::Active,
        is_admin: false,
        created_at: T0,
    }
}

/// Creates an internal, active account `id` with email `{id}@example.com`.
pub async fn user(store: &Arc<dyn Store>, id: &str) -> Account {
    let account = account(id, &format!("{id}@example.com"), Membership::Internal);
    store
        .create_account(account.clone(), None)
        .await
        .expect("create account");
    account
}

/// Creates an account with the given membership.
pub async fn member(store: &Arc<dyn Store>, id: &str, membership: Membership) -> Account {
    let account = account(id, &format!("{id}@example.com"), membership);
    store
        .create_account(account.clone(), None)
        .await
        .expect("create account");
    account
}

pub fn section(id: &str, start: usize, end: usize) -> Section {
    Section {
        id: id.to_string(),
        level: 2,
        text: format!("Heading {id}"),
        path: vec!["Root".to_string(), format!("Heading {id}")],
        start,
        end,
    }
}

pub fn version(review_id: &str, id: &str, at: Millis) -> VersionRecord {
    VersionRecord {
        id: id.to_string(),
        review_id: review_id.to_string(),
        label: format!("label of {id}"),
        created_at: at,
        source_hash: format!("sha256-{id}"),
        sections: vec![section("intro", 0, 10), section("body", 10, 42)],
    }
}

/// A link-mode document owned by `owner`, created and last updated at `at`, whose first version
/// is `{id}_v1` with a small HTML body.
pub fn new_review(id: &str, owner: &str, at: Millis) -> NewReview {
    let version = version(id, &format!("{id}_v1"), at);
    NewReview {
        review: ReviewRecord {
            id: id.to_string(),
            title: format!("Title of {id}"),
            owner_id: owner.to_string(),
            access_mode: AccessMode::Link,
            tags: Vec::new(),
            archived: false,
            comments_revision: 0,
            structure_revision: 1,
            change_seq: 1,
            created_at: at,
            updated_at: at,
            latest_version_id: version.id.clone(),
            latest_source_hash: version.source_hash.clone(),
            structure: None,
            project_code: None,
            finalized: None,
        },
        grants: Vec::new(),
        html: format!("<h1>{id}</h1><p>body</p>").into_bytes(),
        search_text: format!("{id} body"),
        version,
        outbox: Vec::new(),
    }
}

/// Stores `new_review(id, owner, at)` and returns it.
pub async fn review(store: &Arc<dyn Store>, id: &str, owner: &str, at: Millis) -> NewReview {
    let new = new_review(id, owner, at);
    store
        .create_review(new.clone())
        .await
        .expect("create review");
    new
}

pub fn grant(email: &str, role: GrantRole) -> AccessGrant {
    AccessGrant {
        email: email.to_string(),
        role,
    }
}

pub fn anchor(version_id: &str, exact: &str) -> Anchor {
    Anchor {
        version_id: version_id.to_string(),
        section_id: Some("intro".to_string()),
        quote: Some(Quote {
            exact: exact.to_string(),
            prefix: "before ".to_string(),
            suffix: " after".to_string(),
        }),
        position: Some(Position {
            start: 3,
            end: 3 + exact.len(),
        }),
        state: AnchorState::Exact,
    }
}

pub fn comment(review_id: &str, id: &str, author: &str, at: Millis) -> CommentRecord {
    CommentRecord {
        id: id.to_string(),
        review_id: review_id.to_string(),
        author_id: author.to_string(),
        category: Category::Note,
        status: CommentStatus::Open,
        body: format!("body of {id} — ünïcödé ✓"),
        version_id: format!("{review_id}_v1"),
        anchor: anchor(&format!("{review_id}_v1"), "quoted text"),
        run_id: None,
        created_at: at,
        edited_at: None,
        deleted_at: None,
        mentions: Vec::new(),
        thread_revision: CommentRecord::NEW_THREAD_REVISION,
        assignee_id: None,
        suggestion: None,
    }
}

pub fn message(comment: &CommentRecord, id: &str, author: &str, at: Millis) -> MessageRecord {
    MessageRecord {
        id: id.to_string(),
        comment_id: comment.id.clone(),
        review_id: comment.review_id.clone(),
        author_id: author.to_string(),
        body: format!("reply {id}"),
        run_id: None,
        created_at: at,
        edited_at: None,
        deleted_at: None,
        mentions: Vec::new(),
    }
}

pub fn event(
    comment_id: &str,
    seq: i64,
    status: CommentStatus,
    by: &str,
    at: Millis,
) -> StatusEventRecord {
    StatusEventRecord {
        comment_id: comment_id.to_string(),
        seq,
        status,
        by_id: by.to_string(),
        ts: at,
        reason: None,
        version_id: None,
    }
}

pub fn run(review_id: &str, id: &str, by: &str, at: Millis) -> RunRecord {
    RunRecord {
        id: id.to_string(),
        review_id: review_id.to_string(),
        kind: RunKind::AiReview,
        status: RunStatus::Running,
        title: format!("run {id}"),
        version_id: format!("{review_id}_v1"),
        summary: None,
        created_by: by.to_string(),
        created_at: at,
        completed_at: None,
    }
}

/// A comments write expecting `expected`, at `at`, carrying only `comments`.
pub fn comments_write(expected: i64, at: Millis, comments: Vec<CommentRecord>) -> CommentsWrite {
    CommentsWrite {
        expected_revision: expected,
        at,
        comments,
        ..CommentsWrite::default()
    }
}

/// A list query with no filter, no cursor and room for everything a check creates.
pub fn query(visibility: Visibility) -> ReviewQuery {
    ReviewQuery {
        visibility,
        title_contains: None,
        tag: None,
        archived: None,
        project: None,
        owner_id: None,
        after: None,
        limit: 1000,
    }
}

/// What a shared-token principal or an org admin (here `usr_admin`) sees: everything.
pub fn all_view() -> Visibility {
    Visibility::All {
        user_id: "usr_admin".to_string(),
    }
}

pub fn member_view(account: &Account) -> Visibility {
    Visibility::Member {
        user_id: account.user.id.clone(),
        email: account.email.clone(),
        internal: account.membership == Membership::Internal,
    }
}

/// The ids of a list answer, in the order given.
pub async fn listed(store: &Arc<dyn Store>, query: ReviewQuery) -> Vec<String> {
    store
        .list_reviews(query)
        .await
        .expect("list reviews")
        .into_iter()
        .map(|row| row.review.id)
        .collect()
}

pub async fn head(store: &Arc<dyn Store>, review_id: &str) -> ReviewHead {
    store
        .review_head(review_id)
        .await
        .expect("review head")
        .unwrap_or_else(|| panic!("review {review_id} should exist"))
}

/// Panics unless `result` is `RevisionConflict { current }`.
pub fn assert_conflict<T: std::fmt::Debug>(result: Result<T, StoreError>, current: i64) {
    match result {
        Err(StoreError::RevisionConflict { current: got }) => {
            assert_eq!(
                got, current,
                "RevisionConflict should carry the current revision"
            );
        }
        other => panic!("expected RevisionConflict {{ current: {current} }}, got {other:?}"),
    }
}

/// Panics unless `result` is `AlreadyExists(what)`.
pub fn assert_exists<T: std::fmt::Debug>(result: Result<T, StoreError>, what: &str) {
    match result {
        Err(StoreError::AlreadyExists(got)) => assert_eq!(got, what, "AlreadyExists names the key"),
        other => panic!("expected AlreadyExists({what:?}), got {other:?}"),
    }
}

/// Panics unless `result` is `NotFound`.
pub fn assert_not_found<T: std::fmt::Debug>(result: Result<T, StoreError>) {
    match result {
        Err(StoreError::NotFound) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// `items` sorted by `key`, for comparing answers whose order the trait leaves open.
pub fn sorted_by<T, K: Ord>(mut items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    items.sort_by_key(|item| key(item));
    items
}

/// A personal token of `user_id` created at `at`, expiring 90 days later, hashed to `hash`.
pub fn token(id: &str, user_id: &str, hash: [u8; 32], at: Millis) -> TokenRecord {
    TokenRecord {
        id: id.to_string(),
        user_id: user_id.to_string(),
        name: format!("token {id}"),
        hash,
        scopes: vec![Scope::Comments],
        created_at: at,
        expires_at: at + 90 * 86_400_000,
        last_used_at: None,
        revoked_at: None,
    }
}

/// A 32-byte hash whose bytes are all `byte`.
pub fn hash_of(byte: u8) -> [u8; 32] {
    [byte; 32]
}

/// An active project in the snapshot.
pub fn project(code: &str) -> ProjectRecord {
    ProjectRecord {
        code: code.to_string(),
        name: Some(format!("Project {code}")),
        company: Some("ACME".to_string()),
        active: true,
        in_snapshot: true,
    }
}

/// Imports `codes` as the project snapshot (every other known project drops out of it).
pub async fn projects(store: &Arc<dyn Store>, codes: &[&str]) {
    store
        .import_projects(codes.iter().map(|code| project(code)).collect())
        .await
        .expect("import projects");
}

/// Writes `comments` and `messages` to `review_id` at its current revision.
pub async fn write_items(
    store: &Arc<dyn Store>,
    review_id: &str,
    comments: Vec<CommentRecord>,
    messages: Vec<MessageRecord>,
) {
    let current = head(store, review_id).await.review;
    store
        .write_comments(
            review_id,
            CommentsWrite {
                expected_revision: current.comments_revision,
                at: current.updated_at,
                comments,
                messages,
                ..CommentsWrite::default()
            },
        )
        .await
        .expect("write comments");
}
