//! `AccountStore` on SQLite: accounts, personal tokens, browser sessions, login codes.

use docreview_core::model::{Account, LoginCodeRecord, Millis, SessionRecord, TokenRecord};
use docreview_core::store::columns::{self, SESSION_WIDTH, TOKEN_WIDTH, scopes_text, to_json};
use docreview_core::store::{AccountStore, StoreError, StoreResult, count_param};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::columns::{ACCOUNT_COLUMNS, LOGIN_CODE_COLUMNS, SESSION_COLUMNS, TOKEN_COLUMNS};
use crate::sql::{execute, internal, query_all, query_optional, unique};

pub(crate) fn insert_account(
    conn: &Connection,
    a: &Account,
    password_hash: Option<&str>,
) -> rusqlite::Result<usize> {
    execute(
        conn,
        "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, password_hash, created_at, handle) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            a.user.id,
            a.email,
            a.user.display_name,
            a.user.provider.as_str(),
            a.membership.as_str(),
            a.status.as_str(),
            a.is_admin,
            password_hash,
            a.created_at,
            (!a.user.handle.is_empty()).then_some(&a.user.handle),
        ],
    )
}

/// A taken unique key of `users`: the handle's, or the id's or email's (`user`).
pub(crate) fn taken(error: rusqlite::Error) -> StoreError {
    if error.to_string().contains("users.handle") {
        StoreError::AlreadyExists("handle")
    } else {
        unique("user")(error)
    }
}

fn account_where(conn: &Connection, condition: &str, value: &str) -> StoreResult<Option<Account>> {
    let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM users u WHERE {condition}");
    query_optional(conn, &sql, [value], |row| columns::account(row, 0))
}

pub(crate) fn insert_token(conn: &Connection, token: &TokenRecord) -> StoreResult<()> {
    execute(
        conn,
        "INSERT INTO tokens (id, user_id, name, hash, scopes, created_at, expires_at, last_used_at, revoked_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            token.id,
            token.user_id,
            token.name,
            token.hash.as_slice(),
            scopes_text(&token.scopes),
            token.created_at,
            token.expires_at,
            token.last_used_at,
            token.revoked_at
        ],
    )
    .map_err(unique("token"))?;
    Ok(())
}

#[async_trait::async_trait]
impl AccountStore for SqliteStore {
    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()> {
        self.write(move |conn| {
            insert_account(conn, &account, password_hash.as_deref()).map_err(taken)?;
            Ok(())
        })
        .await
    }

    async fn ensure_account(&self, account: Account) -> StoreResult<()> {
        // Writes are serialized, so checking first is race-free.
        self.write(move |conn| {
            let exists = query_optional(
                conn,
                "SELECT 1 FROM users WHERE id = ?1",
                [&account.user.id],
                |_| Ok(()),
            )?;
            if exists.is_none() {
                insert_account(conn, &account, None).map_err(taken)?;
            }
            Ok(())
        })
        .await
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        let email = email.to_lowercase();
        self.read(move |tx| account_where(tx, "u.email = ?1", &email))
            .await
    }

    async fn accounts_by_handles(&self, handles: &[String]) -> StoreResult<Vec<Account>> {
        let handles = to_json(&handles);
        self.read(move |tx| {
            let sql = format!(
                "SELECT {ACCOUNT_COLUMNS} FROM users u \
                 WHERE u.handle IN (SELECT value FROM json_each(?1))"
            );
            query_all(tx, &sql, [handles], |row| columns::account(row, 0))
        })
        .await
    }

    async fn handles_with_prefix(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let prefix = prefix.to_string();
        self.read(move |tx| {
            query_all(
                tx,
                "SELECT handle FROM users WHERE substr(handle, 1, length(?1)) = ?1",
                [prefix],
                |row| row.text(0),
            )
        })
        .await
    }

    async fn accounts_without_handle(&self, limit: usize) -> StoreResult<Vec<Account>> {
        self.read(move |tx| {
            let sql = format!(
                "SELECT {ACCOUNT_COLUMNS} FROM users u WHERE u.handle IS NULL \
                 ORDER BY u.created_at, u.id LIMIT ?1"
            );
            query_all(tx, &sql, [count_param(limit)], |row| {
                columns::account(row, 0)
            })
        })
        .await
    }

    async fn assign_handle(&self, user_id: &str, handle: &str) -> StoreResult<bool> {
        let (user_id, handle) = (user_id.to_string(), handle.to_string());
        self.write(move |conn| {
            let assigned = execute(
                conn,
                "UPDATE users SET handle = ?2 WHERE id = ?1 AND handle IS NULL",
                params![user_id, handle],
            )
            .map_err(taken)?;
            Ok(assigned > 0)
        })
        .await
    }

    async fn update_profile(
        &self,
        user_id: &str,
        handle: Option<String>,
        display_name: Option<String>,
    ) -> StoreResult<()> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            let updated = execute(
                conn,
                "UPDATE users SET handle = coalesce(?2, handle), \
                 display_name = coalesce(?3, display_name) WHERE id = ?1",
                params![user_id, handle, display_name],
            )
            .map_err(taken)?;
            if updated == 0 {
                return Err(StoreError::NotFound);
            }
            Ok(())
        })
        .await
    }

    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>> {
        let id = id.to_string();
        self.read(move |tx| account_where(tx, "u.id = ?1", &id))
            .await
    }

    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            let hash = query_optional(
                tx,
                "SELECT password_hash FROM users WHERE id = ?1",
                [user_id],
                |row| row.optional_text(0),
            )?;
            Ok(hash.flatten())
        })
        .await
    }

    async fn set_password_hash(&self, user_id: &str, hash: String) -> StoreResult<bool> {
        let user_id = user_id.to_string();
        self.write(move |conn| {
            let changed = execute(
                conn,
                "UPDATE users SET password_hash = ?2 WHERE id = ?1",
                params![user_id, hash],
            )
            .map_err(internal)?;
            // A new password ends every browser session signed in with the old one.
            execute(conn, "DELETE FROM sessions WHERE user_id = ?1", [&user_id])
                .map_err(internal)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()> {
        self.write(move |conn| insert_token(conn, &token)).await
    }

    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>> {
        self.lookup(|conn| {
            let sql = format!(
                "SELECT {TOKEN_COLUMNS}, {ACCOUNT_COLUMNS} FROM tokens t JOIN users u ON u.id = t.user_id \
                 WHERE t.hash = ?1"
            );
            query_optional(conn, &sql, [hash.as_slice()], |row| {
                Ok((columns::token(row, 0)?, columns::account(row, TOKEN_WIDTH)?))
            })
        })
    }

    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()> {
        let token_id = token_id.to_string();
        self.write(move |conn| {
            execute(
                conn,
                "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1",
                params![token_id, at],
            )
            .map_err(internal)?;
            Ok(())
        })
        .await
    }

    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>> {
        let user_id = user_id.to_string();
        self.read(move |tx| {
            let sql = format!(
                "SELECT {TOKEN_COLUMNS} FROM tokens t WHERE t.user_id = ?1 AND t.revoked_at IS NULL \
                 ORDER BY t.created_at DESC, t.id DESC"
            );
            query_all(tx, &sql, [user_id], |row| columns::token(row, 0))
        })
        .await
    }

    async fn token_holder(&self, token_id: &str) -> StoreResult<Option<String>> {
        let token_id = token_id.to_string();
        self.read(move |tx| {
            query_optional(
                tx,
                "SELECT user_id FROM tokens WHERE id = ?1",
                [token_id],
                |row| row.text(0),
            )
        })
        .await
    }

    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool> {
        let (user_id, token_id) = (user_id.to_string(), token_id.to_string());
        self.write(move |conn| {
            let revoked = execute(
                conn,
                "UPDATE tokens SET revoked_at = ?3 \
                 WHERE id = ?2 AND user_id = ?1 AND revoked_at IS NULL",
                params![user_id, token_id, at],
            )
            .map_err(internal)?;
            Ok(revoked > 0)
        })
        .await
    }

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        self.write(move |conn| {
            execute(
                conn,
                "INSERT INTO sessions (id, hash, user_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    session.id,
                    session.hash.as_slice(),
                    session.user_id,
                    session.created_at,
                    session.expires_at
                ],
            )
            .map_err(unique("session"))?;
            Ok(())
        })
        .await
    }

    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>> {
        self.lookup(|conn| {
            let sql = format!(
                "SELECT {SESSION_COLUMNS}, {ACCOUNT_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id \
                 WHERE s.hash = ?1"
            );
            query_optional(conn, &sql, [hash.as_slice()], |row| {
                Ok((
                    columns::session(row, 0)?,
                    columns::account(row, SESSION_WIDTH)?,
                ))
            })
        })
    }

    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()> {
        let hash = *hash;
        self.write(move |conn| {
            execute(
                conn,
                "DELETE FROM sessions WHERE hash = ?1",
                [hash.as_slice()],
            )
            .map_err(internal)?;
            Ok(())
        })
        .await
    }

    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()> {
        self.write(move |conn| {
            execute(
                conn,
                "INSERT INTO login_codes (hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    code.hash.as_slice(),
                    code.user_id,
                    code.challenge,
                    code.token_name,
                    scopes_text(&code.scopes),
                    code.created_at,
                    code.expires_at,
                    code.used_at
                ],
            )
            .map_err(unique("login code"))?;
            Ok(())
        })
        .await
    }

    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>> {
        let hash = *hash;
        self.read(move |tx| {
            let sql = format!("SELECT {LOGIN_CODE_COLUMNS} FROM login_codes WHERE hash = ?1");
            query_optional(tx, &sql, [hash.as_slice()], |row| {
                columns::login_code(row, 0)
            })
        })
        .await
    }

    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool> {
        let hash = *hash;
        self.write(move |conn| {
            // Marking the code used is the guard: of two concurrent redemptions one finds it
            // used. A failed token insert rolls the mark back with it (one savepoint).
            let marked = execute(
                conn,
                "UPDATE login_codes SET used_at = ?2 WHERE hash = ?1 AND used_at IS NULL",
                params![hash.as_slice(), at],
            )
            .map_err(internal)?;
            if marked == 0 {
                return Ok(false);
            }
            insert_token(conn, &token)?;
            Ok(true)
        })
        .await
    }
}
