//! The columns each record is selected with, in the order `docreview_core::store::columns`
//! reads them back. JSON columns are stored as text.

pub const REVIEW_COLUMNS: &str = "r.id, r.title, r.owner_id, r.access_mode, r.tags, r.archived, r.comments_revision, \
     r.structure_revision, r.change_seq, r.created_at, r.updated_at, r.latest_version_id, v.source_hash, r.structure, r.project_code, r.finalized_at, r.finalized_by";
/// The document with its latest version, for `REVIEW_COLUMNS`.
pub const REVIEW_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id";
pub const USER_COLUMNS: &str = "u.id, u.provider, u.display_name, u.handle";
pub const ACCOUNT_COLUMNS: &str = "u.id, u.provider, u.display_name, u.handle, u.email, u.membership, u.status, u.is_admin, u.created_at";
pub const VERSION_COLUMNS: &str = "id, review_id, label, created_at, source_hash, sections";
pub const COMMENT_COLUMNS: &str = "id, review_id, author_id, category, status, body, version_id, anchor, run_id, created_at, edited_at, deleted_at, mentions, thread_revision, assignee_id, suggestion";
pub const MESSAGE_COLUMNS: &str = "id, comment_id, review_id, author_id, body, run_id, created_at, edited_at, deleted_at, mentions";
pub const EVENT_COLUMNS: &str = "comment_id, seq, status, by_id, ts, reason, version_id";
pub const RUN_COLUMNS: &str =
    "id, review_id, kind, status, title, version_id, summary, created_by, created_at, completed_at";
pub const TOKEN_COLUMNS: &str = "t.id, t.user_id, t.name, t.hash, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at";
pub const PROJECT_COLUMNS: &str = "p.code, p.name, p.company, p.status, p.in_snapshot";
pub const SESSION_COLUMNS: &str = "s.id, s.hash, s.user_id, s.created_at, s.expires_at";
pub const LOGIN_CODE_COLUMNS: &str =
    "hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at";

/// A list row of documents (`list_reviews`, `search_reviews`): `REVIEW_COLUMNS` followed by
/// these, from `SUMMARY_FROM`. Expects the named parameters `:user_id` and `:email` (the caller;
/// an email no grant names gives no grant).
pub const SUMMARY_EXTRA_COLUMNS: &str = "u.id, u.provider, u.display_name, u.handle, \
     (SELECT a.role FROM review_access a WHERE a.review_id = r.id AND a.email = :email), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL), \
     (SELECT count(*) FROM comments c WHERE c.review_id = r.id AND c.deleted_at IS NULL AND c.status = 'open'), \
     p.code, p.name, p.company, p.status, p.in_snapshot, pr.role";
pub const SUMMARY_FROM: &str = "reviews r JOIN versions v ON v.id = r.latest_version_id \
     JOIN users u ON u.id = r.owner_id \
     LEFT JOIN projects p ON p.code = r.project_code \
     LEFT JOIN project_roles pr ON pr.project_code = r.project_code AND pr.user_id = :user_id";
pub const REVIEWER_COLUMNS: &str = "review_id, user_id, requested_at, due_at, requested_by";
pub const DECISION_COLUMNS: &str = "id, review_id, user_id, decision, version_id, body, created_at";
pub const REACTION_COLUMNS: &str = "review_id, comment_id, message_id, user_id, emoji, created_at";
