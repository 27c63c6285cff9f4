//! Pagination shared by every list: `limit` (default 50, at most 200) and opaque cursors.
//!
//! A cursor is the URL-safe base64 of a key only this server reads back: the last row's sort key
//! for keyset-paged lists, or an offset for ranked search results.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::{Error, Result};

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 200;

/// The page size asked for, checked.
pub fn limit(requested: Option<usize>) -> Result<usize> {
    let limit = requested.unwrap_or(DEFAULT_LIMIT);
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(Error::invalid(format!("limit must be 1 to {MAX_LIMIT}")))
    }
}

pub fn encode(key: &str) -> String {
    URL_SAFE_NO_PAD.encode(key)
}

/// The key inside a cursor; 400 for anything this server did not issue (no key it issues holds
/// NUL, which a database could not even compare).
pub fn decode(cursor: &str) -> Result<String> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|key| !key.contains('\0'))
        .ok_or_else(not_ours)
}

pub fn not_ours() -> Error {
    Error::invalid("cursor is not one this server issued")
}

/// The offset inside an offset cursor (`o:{offset}`), or 0 without a cursor; 400 beyond `max`.
pub fn offset(cursor: Option<&str>, max: usize) -> Result<usize> {
    let Some(cursor) = cursor else {
        return Ok(0);
    };
    let key = decode(cursor)?;
    let offset = key
        .strip_prefix("o:")
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or_else(not_ours)?;
    if offset > max {
        return Err(Error::invalid(format!(
            "results beyond the first {max} are not served; refine the query"
        )));
    }
    Ok(offset)
}

pub fn offset_cursor(offset: usize) -> String {
    encode(&format!("o:{offset}"))
}

/// One page of rows fetched with `limit + 1` at `offset`: the rows to show and the next cursor.
pub fn trim_offset_page<T>(
    mut rows: Vec<T>,
    offset: usize,
    limit: usize,
) -> (Vec<T>, Option<String>) {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = more.then(|| offset_cursor(offset + limit));
    (rows, next)
}

/// One page of a list held whole in memory (short lists, such as a user's tokens).
pub fn by_offset<T>(
    rows: Vec<T>,
    limit: Option<usize>,
    cursor: Option<&str>,
) -> Result<(Vec<T>, Option<String>)> {
    let limit = self::limit(limit)?;
    let offset = offset(cursor, usize::MAX)?;
    let rows: Vec<T> = rows.into_iter().skip(offset).take(limit + 1).collect();
    Ok(trim_offset_page(rows, offset, limit))
}

/// One page of rows fetched with `limit + 1` in key order: the rows to show and the cursor
/// carrying the last shown row's key.
pub fn trim_keyset_page<T>(
    mut rows: Vec<T>,
    limit: usize,
    key: impl Fn(&T) -> String,
) -> (Vec<T>, Option<String>) {
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = if more {
        rows.last().map(|row| encode(&key(row)))
    } else {
        None
    };
    (rows, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_cursors_are_checked() {
        assert_eq!(limit(None).ok(), Some(50));
        assert!(limit(Some(0)).is_err());
        assert!(limit(Some(201)).is_err());
        assert_eq!(offset(Some(&offset_cursor(40)), 100).ok(), Some(40));
        assert!(offset(Some("!!"), 100).is_err());
        assert!(offset(Some(&encode("k:x")), 100).is_err());
        assert!(offset(Some(&offset_cursor(101)), 100).is_err());
    }

    #[test]
    fn pages_in_memory_lists() {
        let (first, next) = by_offset((0..5).collect(), Some(2), None).unwrap_or_default();
        assert_eq!(first, vec![0, 1]);
        let (second, next) =
            by_offset((0..5).collect(), Some(2), next.as_deref()).unwrap_or_default();
        assert_eq!(second, vec![2, 3]);
        let (last, next) =
            by_offset((0..5).collect::<Vec<i32>>(), Some(2), next.as_deref()).unwrap_or_default();
        assert_eq!(last, vec![4]);
        assert!(next.is_none());
    }
}
