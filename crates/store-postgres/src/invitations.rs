//! `InvitationStore` on PostgreSQL: invitations and password resets.

use docreview_core::model::{InvitationRecord, Millis, PasswordResetRecord};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::columns::{self, INVITATION_COLUMNS, PASSWORD_RESET_COLUMNS};
use docreview_core::store::{Acceptance, InvitationStore, StoreResult};
use sqlx::Row;

use crate::PgStore;
use crate::accounts::{INSERT_ACCOUNT, handle_of, taken};
use crate::error::{map_error, unique};
use crate::outbox::insert_entries;
use crate::sql::{decode_all, decode_optional};

#[async_trait::async_trait]
impl InvitationStore for PgStore {
    async fn create_invitation(
        &self,
        invitation: InvitationRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        let i = &invitation;
        let mut tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO invitations (id, hash, email, display_name, membership, project_code, \
             project_role, invited_by, created_at, expires_at, accepted_at, revoked_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(&i.id)
        .bind(i.hash.as_slice())
        .bind(&i.email)
        .bind(&i.display_name)
        .bind(i.membership.as_str())
        .bind(i.project.as_ref().map(|(code, _)| code.as_str()))
        .bind(i.project.as_ref().map(|(_, role)| role.as_str()))
        .bind(&i.invited_by)
        .bind(i.created_at)
        .bind(i.expires_at)
        .bind(i.accepted_at)
        .bind(i.revoked_at)
        .execute(&mut *tx)
        .await
        .map_err(unique("invitation"))?;
        insert_entries(&mut tx, &mails).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(())
    }

    async fn pending_invitations(&self, now: Millis) -> StoreResult<Vec<InvitationRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {INVITATION_COLUMNS} FROM invitations \
             WHERE accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1 \
             ORDER BY created_at DESC, id DESC"
        ))
        .bind(now)
        .fetch_all(&self.pool)
        .await
        .map_err(map_error)?;
        decode_all(&rows, |row| columns::invitation(row, 0))
    }

    async fn invitation_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<InvitationRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {INVITATION_COLUMNS} FROM invitations WHERE hash = $1"
        ))
        .bind(hash.as_slice())
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::invitation(row, 0))
    }

    async fn revoke_invitation(&self, id: &str, at: Millis) -> StoreResult<bool> {
        let changed = sqlx::query(
            "UPDATE invitations SET revoked_at = $2 WHERE id = $1 \
             AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2",
        )
        .bind(id)
        .bind(at)
        .execute(&self.pool)
        .await
        .map_err(map_error)?
        .rows_affected();
        Ok(changed == 1)
    }

    async fn accept_invitation(
        &self,
        hash: &[u8; 32],
        at: Millis,
        acceptance: Acceptance,
    ) -> StoreResult<bool> {
        let mut tx = self.begin().await?;
        // Of two acceptances racing for one invitation, the second waits for the first's row
        // lock and then finds `accepted_at` set: exactly one creates the account.
        let marked = sqlx::query(
            "UPDATE invitations SET accepted_at = $2 WHERE hash = $1 \
             AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 \
             RETURNING project_code, project_role",
        )
        .bind(hash.as_slice())
        .bind(at)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(marked) = marked else {
            return Ok(false);
        };
        let code: Option<String> = marked.try_get(0).map_err(map_error)?;
        let role: Option<String> = marked.try_get(1).map_err(map_error)?;
        let a = &acceptance.account;
        sqlx::query(INSERT_ACCOUNT)
            .bind(&a.user.id)
            .bind(&a.email)
            .bind(&a.user.display_name)
            .bind(a.user.provider.as_str())
            .bind(a.membership.as_str())
            .bind(a.status.as_str())
            .bind(a.is_admin)
            .bind(&acceptance.password_hash)
            .bind(a.created_at)
            .bind(handle_of(a))
            .execute(&mut *tx)
            .await
            .map_err(taken)?;
        if let (Some(code), Some(role)) = (code, role) {
            sqlx::query(
                "INSERT INTO project_roles (project_code, user_id, role) VALUES ($1, $2, $3)",
            )
            .bind(code)
            .bind(&a.user.id)
            .bind(role)
            .execute(&mut *tx)
            .await
            .map_err(unique("project role"))?;
        }
        let session = &acceptance.session;
        sqlx::query(
            "INSERT INTO sessions (id, hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&session.id)
        .bind(session.hash.as_slice())
        .bind(&session.user_id)
        .bind(session.created_at)
        .bind(session.expires_at)
        .execute(&mut *tx)
        .await
        .map_err(unique("session"))?;
        tx.commit().await.map_err(map_error)?;
        Ok(true)
    }

    async fn create_password_reset(
        &self,
        reset: PasswordResetRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "INSERT INTO password_resets (hash, user_id, created_at, expires_at, used_at) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(reset.hash.as_slice())
        .bind(&reset.user_id)
        .bind(reset.created_at)
        .bind(reset.expires_at)
        .bind(reset.used_at)
        .execute(&mut *tx)
        .await
        .map_err(unique("password reset"))?;
        insert_entries(&mut tx, &mails).await?;
        tx.commit().await.map_err(map_error)?;
        Ok(())
    }

    async fn password_reset(&self, hash: &[u8; 32]) -> StoreResult<Option<PasswordResetRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {PASSWORD_RESET_COLUMNS} FROM password_resets WHERE hash = $1"
        ))
        .bind(hash.as_slice())
        .fetch_optional(&self.pool)
        .await
        .map_err(map_error)?;
        decode_optional(row, |row| columns::password_reset(row, 0))
    }

    async fn redeem_password_reset(
        &self,
        hash: &[u8; 32],
        at: Millis,
        password_hash: String,
    ) -> StoreResult<Option<String>> {
        let mut tx = self.begin().await?;
        let user_id: Option<String> = sqlx::query_scalar(
            "UPDATE password_resets SET used_at = $2 WHERE hash = $1 \
             AND used_at IS NULL AND expires_at > $2 RETURNING user_id",
        )
        .bind(hash.as_slice())
        .bind(at)
        .fetch_optional(&mut *tx)
        .await
        .map_err(map_error)?;
        let Some(user_id) = user_id else {
            return Ok(None);
        };
        sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
            .bind(&user_id)
            .bind(password_hash)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        // A new password ends every browser session signed in with the old one.
        sqlx::query("DELETE FROM sessions WHERE user_id = $1")
            .bind(&user_id)
            .execute(&mut *tx)
            .await
            .map_err(map_error)?;
        tx.commit().await.map_err(map_error)?;
        Ok(Some(user_id))
    }
}
