//! Invitations to join the organization and password resets (DESIGN.md §8.2): single-use
//! secrets, of which only the SHA-256 is stored.

use crate::model::{Account, InvitationRecord, Millis, PasswordResetRecord, SessionRecord};
use crate::outbox::OutboxEntry;

use super::StoreResult;

/// What accepting an invitation writes, all or nothing.
#[derive(Debug, Clone)]
pub struct Acceptance {
    /// The new account (with its handle), created with `password_hash`.
    pub account: Account,
    pub password_hash: String,
    /// The browser session that signs the person in.
    pub session: SessionRecord,
}

#[async_trait::async_trait]
pub trait InvitationStore: Send + Sync {
    /// Records the invitation and the mail rows that announce it, in one transaction.
    async fn create_invitation(
        &self,
        invitation: InvitationRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()>;
    /// The invitations pending at `now` (neither accepted nor revoked, not expired), newest
    /// first.
    async fn pending_invitations(&self, now: Millis) -> StoreResult<Vec<InvitationRecord>>;
    /// The invitation whose secret hashes to `hash`, whatever its state.
    async fn invitation_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<InvitationRecord>>;
    /// Revokes the invitation if it is pending at `at`; `false` (nothing written) otherwise.
    async fn revoke_invitation(&self, id: &str, at: Millis) -> StoreResult<bool>;
    /// Accepts the invitation if it is pending at `at`: marks it accepted, creates the account,
    /// gives it the invitation's project role, and inserts the session, all or nothing.
    /// `false` (nothing written) when it is not pending: of two acceptances racing, one wins.
    /// A taken email or handle is `AlreadyExists` as in `create_account` (nothing written).
    async fn accept_invitation(
        &self,
        hash: &[u8; 32],
        at: Millis,
        acceptance: Acceptance,
    ) -> StoreResult<bool>;

    /// Records a password reset and the mail that carries its link, in one transaction.
    async fn create_password_reset(
        &self,
        reset: PasswordResetRecord,
        mails: Vec<OutboxEntry>,
    ) -> StoreResult<()>;
    /// The reset whose secret hashes to `hash`, whatever its state.
    async fn password_reset(&self, hash: &[u8; 32]) -> StoreResult<Option<PasswordResetRecord>>;
    /// Uses the reset if it is unused and unexpired at `at`: marks it used, replaces the
    /// person's password hash and ends every session of theirs, all or nothing. Answers the
    /// person's id, or `None` (nothing written) when the reset cannot be used.
    async fn redeem_password_reset(
        &self,
        hash: &[u8; 32],
        at: Millis,
        password_hash: String,
    ) -> StoreResult<Option<String>>;
}
