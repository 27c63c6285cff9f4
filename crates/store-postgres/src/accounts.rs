//! `AccountStore` on PostgreSQL: accounts, personal tokens, browser sessions, login codes.

use docreview_core::model::{Account, LoginCodeRecord, Millis, SessionRecord, TokenRecord};
use docreview_core::store::columns::{self, SESSION_WIDTH, TOKEN_WIDTH, scopes_text};
use docreview_core::store::{AccountStore, StoreError, StoreResult, count_param};
use sqlx::PgConnection;

use crate::PgStore;
use crate::columns::{ACCOUNT_COLUMNS, LOGIN_CODE_COLUMNS, SESSION_COLUMNS, TOKEN_COLUMNS};
use crate::error::{map_error, unique};
use crate::sql::{decode_all, decode_optional};

impl PgStore {
    async fn account_where(&self, condition: &str, value: &str) -> StoreResult<Option<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM users u WHERE {condition}");
        let row = sqlx::query(&sql)
            .bind(value)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        decode_optional(row, |row| columns::account(row, 0))
    }
}

async fn insert_token(conn: &mut PgConnection, token: &TokenRecord) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO tokens (id, user_id, name, hash, scopes, created_at, expires_at, last_used_at, revoked_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&token.id)
    .bind(&token.user_id)
    .bind(&token.name)
    .bind(token.hash.as_slice())
    .bind(scopes_text(&token.scopes))
    .bind(token.created_at)
    .bind(token.expires_at)
    .bind(token.last_used_at)
    .bind(token.revoked_at)
    .execute(&mut *conn)
    .await
    .map_err(unique("token"))?;
    Ok(())
}

pub(crate) const INSERT_ACCOUNT: &str = "INSERT INTO users (id, email, display_name, provider, membership, status, is_admin, password_hash, created_at, handle) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

/// A taken unique key of `users`: the handle's (`users_by_handle`), or the id's or email's
/// (`user`).
pub(crate) fn taken(error: sqlx::Error) -> StoreError {
    let on_handle = match &error {
        sqlx::Error::Database(db) => db.constraint() == Some("users_by_handle"),
        _ => false,
    };
    if on_handle {
        StoreError::AlreadyExists("handle")
    } else {
        unique("user")(error)
    }
}

/// The handle column of an account: NULL until it has one.
pub(crate) fn handle_of(account: &Account) -> Option<&str> {
    (!account.user.handle.is_empty()).then_some(account.user.handle.as_str())
}

/// Queues a change event for the document's current revisions. `NOTIFY` is transactional:

#[async_trait::async_trait]
impl AccountStore for PgStore {
    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()> {
        let a = &account;
        sqlx::query(INSERT_ACCOUNT)
            .bind(&a.user.id)
            .bind(&a.email)
            .bind(&a.user.display_name)
            .bind(a.user.provider.as_str())
            .bind(a.membership.as_str())
            .bind(a.status.as_str())
            .bind(a.is_admin)
            .bind(password_hash)
            .bind(a.created_at)
            .bind(handle_of(a))
            .execute(&self.pool)
            .await
            .map_err(taken)?;
        Ok(())
    }

    async fn ensure_account(&self, account: Account) -> StoreResult<()> {
        // No conflict target: a concurrent insert of the same principal (another node starting)
        // may collide on the email's unique index before the id's, and `ON CONFLICT (id)` would
        // then fail. Whatever collided, the row is there unless another id holds the email.
        let a = &account;
        let inserted = sqlx::query(&format!("{INSERT_ACCOUNT} ON CONFLICT DO NOTHING"))
            .bind(&a.user.id)
            .bind(&a.email)
            .bind(&a.user.display_name)
            .bind(a.user.provider.as_str())
            .bind(a.membership.as_str())
            .bind(a.status.as_str())
            .bind(a.is_admin)
            .bind(None::<String>)
            .bind(a.created_at)
            .bind(handle_of(a))
            .execute(&self.pool)
            .await
            .map_err(taken)?
            .rows_affected();
        if inserted == 0 && self.account_by_id(&a.user.id).await?.is_none() {
            return Err(StoreError::AlreadyExists("user"));
        }
        Ok(())
    }

    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>> {
        // Emails are stored lower-cased; lower-casing here, in Rust, matches the SQLite backend
        // exactly (no dependence on the database's locale).
        self.account_where("u.email = $1", &email.to_lowercase())
            .await
    }

    async fn accounts_by_handles(&self, handles: &[String]) -> StoreResult<Vec<Account>> {
        let sql = format!("SELECT {ACCOUNT_COLUMNS} FROM users u WHERE u.handle = ANY($1)");
        let rows = sqlx::query(&sql)
            .bind(handles)
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        decode_all(&rows, |row| columns::account(row, 0))
    }

    async fn handles_with_prefix(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT handle FROM users WHERE left(handle, length($1)) = $1")
                .bind(prefix)
                .fetch_all(&self.pool)
                .await
                .map_err(map_error)?;
        Ok(rows.into_iter().map(|(handle,)| handle).collect())
    }

    async fn accounts_without_handle(&self, limit: usize) -> StoreResult<Vec<Account>> {
        let sql = format!(
            "SELECT {ACCOUNT_COLUMNS} FROM users u WHERE u.handle IS NULL \
             ORDER BY u.created_at, u.id LIMIT $1"
        );
        let rows = sqlx::query(&sql)
            .bind(count_param(limit))
            .fetch_all(&self.pool)
            .await
            .map_err(map_error)?;
        decode_all(&rows, |row| columns::account(row, 0))
    }

    async fn assign_handle(&self, user_id: &str, handle: &str) -> StoreResult<bool> {
        let assigned = sqlx::query("UPDATE users SET handle = $2 WHERE id = $1 AND handle IS NULL")
            .bind(user_id)
            .bind(handle)
            .execute(&self.pool)
            .await
            .map_err(taken)?
            .rows_affected();
        Ok(assigned > 0)
    }

    async fn update_profile(
        &self,
        user_id: &str,
        handle: Option<String>,
        display_name: Option<String>,
    ) -> StoreResult<()> {
        let updated = sqlx::query(
            "UPDATE users SET handle = coalesce($2, handle), \
             display_name = coalesce($3, display_name) WHERE id = $1",
        )
        .bind(user_id)
        .bind(handle)
        .bind(display_name)
        .execute(&self.pool)
        .await
        .map_err(taken)?
        .rows_affected();
        if updated == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>> {
        self.account_where("u.id = $1", id).await
    }

    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await.map_err(map_error)?;
        insert_token(&mut conn, &token).await
    }

    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>> {
        let sql = format!(
            "SELECT {TOKEN_COLUMNS}, {ACCOUNT_COLUMNS} FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = $1"
        );
        let row = sqlx::query(&sql)
            .bind(hash.as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        decode_optional(row, |row| {
            Ok((columns::token(row, 0)?, columns::account(row, TOKEN_WIDTH)?))
        })
    }

    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()> {
        sqlx::query("UPDATE tokens SET last_used_at = $2 WHERE id = $1")
            .bind(token_id)
            .bind(at)
            .execute(&self.pool)
            .await
            .map_err(map_error)?;
        Ok(())
    }

    async fn token_holder(&self, token_id: &str) -> StoreResult<Option<String>> {
        sqlx::query_scalar("SELECT user_id FROM tokens WHERE id = $1")
            .bind(token_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)
    }

    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM tokens t WHERE t.user_id = $1 AND t.revoked_at IS NULL \
             ORDER BY t.created_at DESC, t.id DESC"
        ))
        .bind(user_id)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::token(row, 0))
    }

    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool> {
        let revoked = sqlx::query(
            "UPDATE tokens SET revoked_at = $3 WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL",
        )
        .bind(user_id)
        .bind(token_id)
        .bind(at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?
        .rows_affected();
        Ok(revoked > 0)
    }

    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>> {
        let hash: Option<Option<String>> =
            sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1")
                .bind(user_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(map_error)?;
        Ok(hash.flatten())
    }

    async fn set_password_hash(&self, user_id: &str, hash: String) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        let changed = sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
            .bind(user_id)
            .bind(hash)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?
            .rows_affected();
        // A new password ends every browser session signed in with the old one.
        sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(changed == 1)
    }

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO sessions (id, hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&session.id)
        .bind(session.hash.as_slice())
        .bind(&session.user_id)
        .bind(session.created_at)
        .bind(session.expires_at)
        .execute(&self.pool)
        .await
        .map_err(unique("session"))?;
        Ok(())
    }

    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>> {
        let sql = format!(
            "SELECT {SESSION_COLUMNS}, {ACCOUNT_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = $1"
        );
        let row = sqlx::query(&sql)
            .bind(hash.as_slice())
            .fetch_optional(&self.pool)
            .await
            .map_err(map_error)?;
        decode_optional(row, |row| {
            Ok((
                columns::session(row, 0)?,
                columns::account(row, SESSION_WIDTH)?,
            ))
        })
    }

    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()> {
        sqlx::query("DELETE FROM sessions WHERE hash = $1")
            .bind(hash.as_slice())
            .execute(&self.pool)
            .await
            .map_err(map_error)?;
        Ok(())
    }

    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO login_codes (hash, user_id, challenge, token_name, scopes, created_at, expires_at, used_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(code.hash.as_slice())
        .bind(&code.user_id)
        .bind(&code.challenge)
        .bind(&code.token_name)
        .bind(scopes_text(&code.scopes))
        .bind(code.created_at)
        .bind(code.expires_at)
        .bind(code.used_at)
        .execute(&self.pool)
        .await
        .map_err(unique("login code"))?;
        Ok(())
    }

    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {LOGIN_CODE_COLUMNS} FROM login_codes WHERE hash = $1"
        ))
        .bind(hash.as_slice())
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::login_code(row, 0))
    }

    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        // Of two exchanges racing for one code, the second waits for the first's row lock and
        // then finds `used_at` set: exactly one gets a token.
        let claimed =
            sqlx::query("UPDATE login_codes SET used_at = $2 WHERE hash = $1 AND used_at IS NULL")
                .bind(hash.as_slice())
                .bind(at)
                .execute(&mut *tx)
                .await
                .map_err(map_error)?
                .rows_affected();
        if claimed == 0 {
            return Ok(false);
        }
        insert_token(&mut tx, &token).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }
}
