//! `InvitationStore` on SQLite: invitations and password resets.

use docreview_core::model::{InvitationRecord, Millis, PasswordResetRecord};
use docreview_core::outbox::OutboxEntry;
use docreview_core::store::columns::{self, INVITATION_COLUMNS, PASSWORD_RESET_COLUMNS};
use docreview_core::store::{Acceptance, InvitationStore, StoreResult};
use rusqlite::params;

use crate::SqliteStore;
use crate::accounts::{insert_account, taken};
use crate::outbox::insert_entries;
use crate::sql::{execute, internal, query_all, query_optional, unique};

#[async_trait::async_trait]
impl InvitationStore for SqliteStore {
    async fn create_invitation(
        &self,
        invitation: InvitationRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        self.write(move |conn| {
            let i = &invitation;
            execute(
                conn,
                "INSERT INTO invitations (id, hash, email, display_name, membership, project_code, \
                 project_role, invited_by, created_at, expires_at, accepted_at, revoked_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    i.id,
                    i.hash.as_slice(),
                    i.email,
                    i.display_name,
                    i.membership.as_str(),
                    i.project.as_ref().map(|(code, _)| code),
                    i.project.as_ref().map(|(_, role)| role.as_str()),
                    i.invited_by,
                    i.created_at,
                    i.expires_at,
                    i.accepted_at,
                    i.revoked_at,
                ],
            )
            .map_err(unique("invitation"))?;
            insert_entries(conn, &mails)?;
            Ok(())
        })
        .await
    }

    async fn pending_invitations(&self, now: Millis) -> StoreResult<Vec<InvitationRecord>> {
        self.read(move |conn| {
            let sql = format!(
                "SELECT {INVITATION_COLUMNS} FROM invitations \
                 WHERE accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?1 \
                 ORDER BY created_at DESC, id DESC"
            );
            query_all(conn, &sql, [now], |row| columns::invitation(row, 0))
        })
        .await
    }

    async fn invitation_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<InvitationRecord>> {
        let hash = *hash;
        self.read(move |conn| {
            let sql = format!("SELECT {INVITATION_COLUMNS} FROM invitations WHERE hash = ?1");
            query_optional(conn, &sql, [hash.as_slice()], |row| {
                columns::invitation(row, 0)
            })
        })
        .await
    }

    async fn revoke_invitation(&self, id: &str, at: Millis) -> StoreResult<bool> {
        let id = id.to_string();
        self.write(move |conn| {
            let changed = execute(
                conn,
                "UPDATE invitations SET revoked_at = ?2 WHERE id = ?1 \
                 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?2",
                params![id, at],
            )
            .map_err(internal)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn accept_invitation(
        &self,
        hash: &[u8; 32],
        at: Millis,
        acceptance: Acceptance,
    ) -> StoreResult<bool> {
        let hash = *hash;
        self.write(move |conn| {
            // Marking the invitation accepted is the guard: of two acceptances one finds it
            // accepted. Anything failing after it rolls the mark back (one savepoint).
            let project = query_optional(
                conn,
                "UPDATE invitations SET accepted_at = ?2 WHERE hash = ?1 \
                 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?2 \
                 RETURNING project_code, project_role",
                params![hash.as_slice(), at],
                |row| Ok((row.optional_text(0)?, row.optional_text(1)?)),
            )?;
            let Some((code, role)) = project else {
                return Ok(false);
            };
            let account = &acceptance.account;
            insert_account(conn, account, Some(&acceptance.password_hash)).map_err(taken)?;
            if let (Some(code), Some(role)) = (code, role) {
                execute(
                    conn,
                    "INSERT INTO project_roles (project_code, user_id, role) VALUES (?1, ?2, ?3)",
                    params![code, account.user.id, role],
                )
                .map_err(unique("project role"))?;
            }
            let session = &acceptance.session;
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
            Ok(true)
        })
        .await
    }

    async fn create_password_reset(
        &self,
        reset: PasswordResetRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()> {
        self.write(move |conn| {
            execute(
                conn,
                "INSERT INTO password_resets (hash, user_id, created_at, expires_at, used_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    reset.hash.as_slice(),
                    reset.user_id,
                    reset.created_at,
                    reset.expires_at,
                    reset.used_at
                ],
            )
            .map_err(unique("password reset"))?;
            insert_entries(conn, &mails)?;
            Ok(())
        })
        .await
    }

    async fn password_reset(&self, hash: &[u8; 32]) -> StoreResult<Option<PasswordResetRecord>> {
        let hash = *hash;
        self.read(move |conn| {
            let sql =
                format!("SELECT {PASSWORD_RESET_COLUMNS} FROM password_resets WHERE hash = ?1");
            query_optional(conn, &sql, [hash.as_slice()], |row| {
                columns::password_reset(row, 0)
            })
        })
        .await
    }

    async fn redeem_password_reset(
        &self,
        hash: &[u8; 32],
        at: Millis,
        password_hash: String,
    ) -> StoreResult<Option<String>> {
        let hash = *hash;
        self.write(move |conn| {
            let user_id = query_optional(
                conn,
                "UPDATE password_resets SET used_at = ?2 WHERE hash = ?1 \
                 AND used_at IS NULL AND expires_at > ?2 RETURNING user_id",
                params![hash.as_slice(), at],
                |row| row.text(0),
            )?;
            let Some(user_id) = user_id else {
                return Ok(None);
            };
            execute(
                conn,
                "UPDATE users SET password_hash = ?2 WHERE id = ?1",
                params![user_id, password_hash],
            )
            .map_err(internal)?;
            // A new password ends every browser session signed in with the old one.
            execute(conn, "DELETE FROM sessions WHERE user_id = ?1", [&user_id])
                .map_err(internal)?;
            Ok(Some(user_id))
        })
        .await
    }
}
