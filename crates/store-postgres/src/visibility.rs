//! Who may see a document (DESIGN.md §3), as PostgreSQL's queries filter it: the one place this
//! backend writes the rule. `access::visibility` decides the caller's `Visibility`; the
//! conformance suite's visibility matrix compares what these filters admit with
//! `access::role_on`, cell by cell.

use docreview_core::store::Visibility;
use sqlx::Postgres;
use sqlx::postgres::PgArguments;
use sqlx::query::Query;

/// Whether the caller may see document `r`: everything (`$1`, shared principals and org
/// admins); else what the member `$2` owns, what is linked to a project where they hold a role,
/// and — for internal members (`$4`) only — link-mode documents and those shared with their
/// email `$3`. The cheap tests come first: `OR` stops at the first true one.
pub(crate) const VISIBLE: &str = "($1::boolean OR r.owner_id = $2 \
     OR ($4::boolean AND r.access_mode = 'link') \
     OR ($4::boolean AND EXISTS (SELECT 1 FROM review_access a WHERE a.review_id = r.id AND a.email = $3)) \
     OR (r.project_code IS NOT NULL AND EXISTS \
         (SELECT 1 FROM project_roles pr WHERE pr.project_code = r.project_code AND pr.user_id = $2)))";

/// The ids of the documents `VISIBLE` admits for a member (`$2`–`$4`; `All` needs no filter), as
/// a union of index lookups: owned, linked to one of their projects, and — internal members
/// only — link-mode or shared with them. The same rule as `VISIBLE`, in a shape the planner can
/// count: an external member's few project documents are estimated as few, so a search of a
/// frequent word starts from them instead of from every match. A disabled branch (`$4` false)
/// folds away in a custom plan.
const VISIBLE_IDS: &str = "SELECT r.id FROM reviews r WHERE r.owner_id = $2 \
     UNION SELECT r.id FROM project_roles pr JOIN reviews r ON r.project_code = pr.project_code \
       WHERE pr.user_id = $2 \
     UNION SELECT r.id FROM reviews r WHERE $4::boolean AND r.access_mode = 'link' \
     UNION SELECT a.review_id FROM review_access a WHERE $4::boolean AND a.email = $3";

/// Binds `$1`–`$4` of `VISIBLE` and `visible_items` (and of `columns::SUMMARY_COLUMNS`, which
/// use `$2` and `$3`); bind them first.
pub(crate) fn bind<'q>(
    query: Query<'q, Postgres, PgArguments>,
    visibility: &'q Visibility,
) -> Query<'q, Postgres, PgArguments> {
    query
        .bind(visibility.sees_all())
        .bind(visibility.user_id())
        .bind(visibility.email())
        .bind(visibility.internal())
}

/// A filter (`AND …`; nothing for `All`) keeping rows whose document id, `column` (not of an `r`
/// alias), the caller may see, shaped for a search over many matches.
///
/// An internal member reaches most documents (every link-mode one), so the index of matches
/// leads and each match's document is looked up by key and checked (`VISIBLE`, cheap tests
/// first). An external member reaches only their own and their projects' documents: their ids
/// are collected first (`ARRAY(…)`, one value for the planner) and their items read in one
/// bitmap scan by document.
pub(crate) fn visible_items(column: &str, visibility: &Visibility) -> String {
    match visibility {
        Visibility::All { .. } => String::new(),
        Visibility::Member { internal: true, .. } => {
            format!("AND EXISTS (SELECT 1 FROM reviews r WHERE r.id = {column} AND {VISIBLE})")
        }
        Visibility::Member {
            internal: false, ..
        } => format!("AND {column} = ANY(ARRAY({VISIBLE_IDS}))"),
    }
}
