//! Accounts, personal tokens, browser sessions and command-line login codes.

use crate::model::{Account, LoginCodeRecord, Millis, SessionRecord, TokenRecord};

use super::StoreResult;

#[async_trait::async_trait]
pub trait AccountStore: Send + Sync {
    /// Creates the account with its handle: `AlreadyExists("handle")` when another account
    /// holds the handle, `AlreadyExists("user")` when the id or email is taken.
    async fn create_account(
        &self,
        account: Account,
        password_hash: Option<String>,
    ) -> StoreResult<()>;
    /// Creates the account or, if its id exists, leaves it as it is (service principals). Safe
    /// to call from several nodes at once; an email taken by another id is `AlreadyExists`.
    async fn ensure_account(&self, account: Account) -> StoreResult<()>;
    async fn account_by_email(&self, email: &str) -> StoreResult<Option<Account>>;
    /// The accounts holding these handles (lower case), in no particular order.
    async fn accounts_by_handles(&self, handles: &[String]) -> StoreResult<Vec<Account>>;
    /// The handles in use that start with `prefix` (to pick a free one).
    async fn handles_with_prefix(&self, prefix: &str) -> StoreResult<Vec<String>>;
    /// Accounts without a handle (made before handles existed), at most `limit`.
    async fn accounts_without_handle(&self, limit: usize) -> StoreResult<Vec<Account>>;
    /// Gives the account `handle` if it has none yet; `false` when it has one (nothing
    /// written), `AlreadyExists("handle")` when another account holds it.
    async fn assign_handle(&self, user_id: &str, handle: &str) -> StoreResult<bool>;
    /// Changes what the person may change of their own profile (each field when given):
    /// `NotFound` when there is no such account, `AlreadyExists("handle")` when another
    /// account holds the handle (nothing written).
    async fn update_profile(
        &self,
        user_id: &str,
        handle: Option<String>,
        display_name: Option<String>,
    ) -> StoreResult<()>;
    async fn account_by_id(&self, id: &str) -> StoreResult<Option<Account>>;
    /// The argon2id PHC string of a local account's password, if it has one.
    async fn password_hash(&self, user_id: &str) -> StoreResult<Option<String>>;
    /// Replaces the account's password hash and ends the account's browser sessions, in one
    /// transaction; `false` when there is no such account.
    async fn set_password_hash(&self, user_id: &str, hash: String) -> StoreResult<bool>;

    async fn insert_token(&self, token: TokenRecord) -> StoreResult<()>;
    async fn token_by_hash(&self, hash: &[u8; 32]) -> StoreResult<Option<(TokenRecord, Account)>>;
    async fn touch_token(&self, token_id: &str, at: Millis) -> StoreResult<()>;
    /// The user's tokens that are not revoked (expired ones included), newest first.
    async fn tokens_of(&self, user_id: &str) -> StoreResult<Vec<TokenRecord>>;
    /// Who holds the token (revoked or not), for operators who know only its id.
    async fn token_holder(&self, token_id: &str) -> StoreResult<Option<String>>;
    /// Revokes the user's token; `false` when they have no such unrevoked token.
    async fn revoke_token(&self, user_id: &str, token_id: &str, at: Millis) -> StoreResult<bool>;

    async fn insert_session(&self, session: SessionRecord) -> StoreResult<()>;
    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
    ) -> StoreResult<Option<(SessionRecord, Account)>>;
    async fn delete_session(&self, hash: &[u8; 32]) -> StoreResult<()>;

    async fn insert_login_code(&self, code: LoginCodeRecord) -> StoreResult<()>;
    async fn login_code(&self, hash: &[u8; 32]) -> StoreResult<Option<LoginCodeRecord>>;
    /// Marks the code used at `at` and inserts `token`, both or neither, if the code is still
    /// unused; `false` (nothing written) when it was used already or does not exist.
    async fn redeem_login_code(
        &self,
        hash: &[u8; 32],
        at: Millis,
        token: TokenRecord,
    ) -> StoreResult<bool>;
}
