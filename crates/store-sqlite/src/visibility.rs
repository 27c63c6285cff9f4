//! Who may see a document (DESIGN.md §3), as SQLite's queries filter it: the one place this
//! backend writes the rule. `access::visibility` decides the caller's `Visibility`; the
//! conformance suite's visibility matrix compares what these filters admit with
//! `access::role_on`, cell by cell.

use std::collections::HashSet;

use docreview_core::store::{StoreResult, Visibility};
use rusqlite::{Connection, ToSql};

use crate::sql::query_named;

/// Whether the member calling (`:user_id`, `:email`, `:internal`) may see document `r`: they own
/// it, hold a role in its project, or, if internal, it is in link mode or shared with their
/// email. External members reach documents only through projects. (`Visibility::All` needs no
/// filter; statements that may run for it test `:all` first.)
pub(crate) const MEMBER_SEES: &str = "(r.owner_id = :user_id \
     OR EXISTS (SELECT 1 FROM project_roles mine \
                WHERE mine.project_code = r.project_code AND mine.user_id = :user_id) \
     OR (:internal AND (r.access_mode = 'link' OR EXISTS \
         (SELECT 1 FROM review_access a WHERE a.review_id = r.id AND a.email = :email))))";

/// The ids of the documents an external member (`:user_id`) sees: `MEMBER_SEES` without its
/// internal part, as a set found by index (their own, and their projects').
const EXTERNAL_MEMBER_DOCUMENTS: &str = "SELECT id FROM reviews WHERE owner_id = :user_id \
     UNION ALL SELECT r.id FROM project_roles mine \
       JOIN reviews r ON r.project_code = mine.project_code WHERE mine.user_id = :user_id";

/// A filter (` AND …`; nothing for `All`) keeping the rows whose document id, `column` (not of
/// an `r` alias), the caller may see, shaped for a scan of many matches. Internal members
/// mostly see much (link mode): each match's document is checked. External members see their
/// own and their projects' documents: a set found by index and built once.
pub(crate) fn visible_items(caller: &Caller, column: &str) -> String {
    if caller.all {
        String::new()
    } else if caller.internal {
        format!(" AND EXISTS (SELECT 1 FROM reviews r WHERE r.id = {column} AND {MEMBER_SEES})")
    } else {
        format!(" AND {column} IN ({EXTERNAL_MEMBER_DOCUMENTS})")
    }
}

/// The caller, as the named parameters of the filters here and of `columns::SUMMARY_FROM` bind
/// it.
pub(crate) struct Caller<'a> {
    /// `Visibility::All`: every document.
    pub all: bool,
    pub internal: bool,
    user_id: &'a str,
    /// Empty for `All`: such callers carry no grant of their own.
    email: &'a str,
}

impl<'a> Caller<'a> {
    pub(crate) fn of(visibility: &'a Visibility) -> Self {
        Caller {
            all: visibility.sees_all(),
            internal: visibility.internal(),
            user_id: visibility.user_id(),
            email: visibility.email(),
        }
    }

    pub(crate) fn params(&self) -> [(&'static str, &dyn ToSql); 4] {
        [
            (":all", &self.all),
            (":user_id", &self.user_id),
            (":email", &self.email),
            (":internal", &self.internal),
        ]
    }
}

/// Which documents a member's search can be confined to.
pub(crate) enum Reach {
    /// They see no document at all.
    Nothing,
    /// Only these (their keys, `review_texts.id`).
    Few(Vec<i64>),
    /// More than `limit`.
    Many,
}

/// Finds out whether the member sees at most `limit` documents, by the indexes that lead to them
/// (`MEMBER_SEES` as a union: owned, project roles and, if internal, sharing and link mode),
/// reading at most `limit + 1` of them.
pub(crate) fn reach(conn: &Connection, caller: &Caller, limit: usize) -> StoreResult<Reach> {
    let mut sql = String::from(
        "SELECT t.id FROM reviews r JOIN review_texts t ON t.review_id = r.id WHERE r.owner_id = :user_id \
         UNION ALL SELECT t.id FROM project_roles mine JOIN reviews r ON r.project_code = mine.project_code \
           JOIN review_texts t ON t.review_id = r.id WHERE mine.user_id = :user_id",
    );
    if caller.internal {
        sql.push_str(
            " UNION ALL SELECT t.id FROM review_access a JOIN review_texts t ON t.review_id = a.review_id \
                WHERE a.email = :email \
              UNION ALL SELECT t.id FROM reviews r JOIN review_texts t ON t.review_id = r.id \
                WHERE r.access_mode = 'link'",
        );
    }
    sql.push_str(" LIMIT :limit");
    let read_limit = i64::try_from(limit + 1).unwrap_or(i64::MAX);
    let mut params: Vec<(&str, &dyn ToSql)> = caller.params().to_vec();
    params.push((":limit", &read_limit));
    let found: Vec<i64> = query_named(conn, &sql, &params, |row| row.integer(0))?;
    let read = found.len();
    let mut seen = HashSet::new();
    let distinct: Vec<i64> = found.into_iter().filter(|key| seen.insert(*key)).collect();
    Ok(if distinct.is_empty() {
        Reach::Nothing
    } else if read <= limit {
        Reach::Few(distinct)
    } else {
        Reach::Many
    })
}
