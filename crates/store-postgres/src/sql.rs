//! Running statements: transactions, rows read through the shared decoders
//! (`docreview_core::store::columns`), and text PostgreSQL can store.

use docreview_core::store::columns::{ColumnError, ColumnResult, Columns};
use docreview_core::store::{StoreError, StoreResult};
use sqlx::postgres::PgRow;
use sqlx::{Postgres, Row as _, Transaction};

use crate::PgStore;
use crate::error::map_error;

/// A sqlx row as the shared decoders read it.
struct Row<'a>(&'a PgRow);

impl Row<'_> {
    fn get<T>(&self, index: usize) -> ColumnResult<T>
    where
        T: for<'r> sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>,
    {
        self.0
            .try_get(index)
            .map_err(|error| ColumnError::new(index, error))
    }
}

impl Columns for Row<'_> {
    fn text(&self, index: usize) -> ColumnResult<String> {
        self.get(index)
    }
    fn optional_text(&self, index: usize) -> ColumnResult<Option<String>> {
        self.get(index)
    }
    fn integer(&self, index: usize) -> ColumnResult<i64> {
        self.get(index)
    }
    fn optional_integer(&self, index: usize) -> ColumnResult<Option<i64>> {
        self.get(index)
    }
    fn flag(&self, index: usize) -> ColumnResult<bool> {
        self.get(index)
    }
    fn real(&self, index: usize) -> ColumnResult<f64> {
        self.get(index)
    }
    fn bytes(&self, index: usize) -> ColumnResult<Vec<u8>> {
        self.get(index)
    }
}

/// Every row, read with `decode`.
pub(crate) fn decode_all<T>(
    rows: &[PgRow],
    decode: impl Fn(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Vec<T>> {
    Ok(rows
        .iter()
        .map(|row| decode(&Row(row)))
        .collect::<ColumnResult<Vec<_>>>()?)
}

/// One row, read with `decode`.
pub(crate) fn decode_one<T>(
    row: &PgRow,
    decode: impl FnOnce(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<T> {
    Ok(decode(&Row(row))?)
}

/// The row, if any, read with `decode`.
#[allow(
    clippy::needless_pass_by_value,
    reason = "takes what `fetch_optional` returns, as is"
)]
pub(crate) fn decode_optional<T>(
    row: Option<PgRow>,
    decode: impl FnOnce(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Option<T>> {
    row.as_ref().map(|row| decode_one(row, decode)).transpose()
}

impl PgStore {
    /// A read-only snapshot: every statement inside sees the same committed state, so a
    /// document never comes back with comments newer than its revision says.
    pub(crate) async fn snapshot(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await
    }

    pub(crate) async fn begin(&self) -> StoreResult<Transaction<'static, Postgres>> {
        self.begin_with("BEGIN").await
    }

    /// Starts a transaction on a task of its own. sqlx's `begin` is not cancel-safe on
    /// PostgreSQL (transact-rs/sqlx#4393, in 0.8.6 and 0.9.0): dropped between sending `BEGIN`
    /// and reading its answer, as a request is when its client goes away, it returns the
    /// connection to the pool inside a transaction nobody ends, and the next caller's writes
    /// are never committed. On its own task the `BEGIN` always completes; a transaction whose
    /// caller is gone is then dropped there, which rolls it back.
    async fn begin_with(
        &self,
        statement: &'static str,
    ) -> StoreResult<Transaction<'static, Postgres>> {
        let pool = self.pool.clone();
        tokio::spawn(async move { pool.begin_with(statement).await })
            .await
            .map_err(|error| StoreError::Internal(error.into()))?
            .map_err(map_error)
    }
}

/// Search text as PostgreSQL can store it. Derived text (never shown whole), so a U+0000 that
/// slipped through extraction is dropped rather than failing the document's write.
pub(crate) fn storable(text: String) -> String {
    if text.contains('\0') {
        text.replace('\0', "")
    } else {
        text
    }
}
