//! Running statements: cached statements, rows read through the shared decoders
//! (`docreview_core::store::columns`), and rusqlite's errors as `StoreError`s.

use docreview_core::store::StoreError;
use docreview_core::store::StoreResult;
use docreview_core::store::columns::{ColumnError, ColumnResult, Columns};
use rusqlite::{Connection, Params, ToSql};

/// A rusqlite row as the shared decoders read it.
struct Row<'a, 'b>(&'a rusqlite::Row<'b>);

impl Row<'_, '_> {
    fn get<T: rusqlite::types::FromSql>(&self, index: usize) -> ColumnResult<T> {
        self.0
            .get(index)
            .map_err(|error| ColumnError::new(index, error))
    }
}

impl Columns for Row<'_, '_> {
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

/// Reads every row `rows` yields with `decode`.
fn decode_all<T>(
    mut rows: rusqlite::Rows<'_>,
    decode: impl Fn(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Vec<T>> {
    let mut answer = Vec::new();
    while let Some(row) = rows.next().map_err(internal)? {
        answer.push(decode(&Row(row))?);
    }
    Ok(answer)
}

/// Every row of `sql` (a cached statement) with `params`.
pub(crate) fn query_all<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    decode: impl Fn(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Vec<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(internal)?;
    let rows = statement.query(params).map_err(internal)?;
    decode_all(rows, decode)
}

/// The first row of `sql` with `params`, if there is one.
pub(crate) fn query_optional<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    decode: impl FnOnce(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Option<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(internal)?;
    let mut rows = statement.query(params).map_err(internal)?;
    match rows.next().map_err(internal)? {
        Some(row) => Ok(Some(decode(&Row(row))?)),
        None => Ok(None),
    }
}

/// Runs `sql` binding each of `params` (`:name`, value) that the statement names, so one list
/// serves statements whose optional parts use only some of them.
pub(crate) fn query_named<T>(
    conn: &Connection,
    sql: &str,
    params: &[(&str, &dyn ToSql)],
    decode: impl Fn(&dyn Columns) -> ColumnResult<T>,
) -> StoreResult<Vec<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(internal)?;
    for (name, value) in params {
        if let Some(index) = statement.parameter_index(name).map_err(internal)? {
            statement
                .raw_bind_parameter(index, value)
                .map_err(internal)?;
        }
    }
    decode_all(statement.raw_query(), decode)
}

/// Runs `sql` (a cached statement) with `params`; how many rows it changed.
pub(crate) fn execute(
    conn: &Connection,
    sql: &str,
    params: impl Params,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// Maps a unique-key violation to `AlreadyExists(what)` and a missing referenced row (foreign
/// key) to `NotFound`, as the PostgreSQL backend does.
pub(crate) fn unique(what: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |error| match &error {
        rusqlite::Error::SqliteFailure(failure, _) => match failure.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => StoreError::AlreadyExists(what),
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => StoreError::NotFound,
            _ => internal(error),
        },
        _ => internal(error),
    }
}

pub(crate) fn internal(error: rusqlite::Error) -> StoreError {
    StoreError::Internal(Box::new(error))
}

pub(crate) fn unavailable(message: &str) -> StoreError {
    StoreError::Unavailable(message.to_string().into())
}
