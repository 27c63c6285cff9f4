//! Accounts, personal tokens, browser sessions, the command-line login, and authentication.
//!
//! Use cases whose arguments hold credentials (tokens, cookies, passwords, login codes) are
//! instrumented with `skip_all`: their spans name the use case and record none of them.

use docreview_api::requests::{CodeExchange, PageQuery, ProfileChange};
use docreview_api::views::{
    CurrentTokenView, ExchangedToken, MeView, MemberView, TokenList, TokenView,
};

use super::{Service, check_length, page};
use crate::access::{self, Actor, Credential, Operation};
use crate::clock::rfc3339;
use crate::error::{AuthFailure, Error, Result};
use crate::handles;
use crate::identity::{self, Secret, is_well_formed_personal_token, mint_personal_token, sha256};
use crate::model::{
    Account, LoginCodeRecord, Membership, Millis, Provider, Scope, SessionRecord, SharedKind,
    TokenRecord, User, UserStatus,
};
use crate::store::{MemberQuery, StoreError};

pub const TOKEN_LIFETIME_DAYS: i64 = 90;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// `lastUsedAt` is refreshed at most this often, so reads do not turn into writes.
const LAST_USED_GRANULARITY_MS: i64 = 60 * 1000;
/// A browser session lasts this long from sign-in (then the user signs in again).
pub const SESSION_LIFETIME_MS: Millis = 14 * DAY_MS;
/// A command-line login code is good for this long, once.
pub const LOGIN_CODE_LIFETIME_MS: Millis = 10 * 60 * 1000;
/// Failed sign-ins allowed per account and address, and code exchanges per address, in a
/// minute (then 429).
pub const MAX_FAILURES_PER_MINUTE: usize = 10;
/// Failed sign-ins allowed per address in a minute over every account: room for many people's
/// typos behind one address, not for guessing through the member list.
pub const MAX_FAILED_SIGN_INS_PER_ADDRESS: usize = 100;

/// A member as the organization endpoints show them.
pub fn member_view(account: &Account) -> MemberView {
    MemberView {
        id: account.user.id.clone(),
        provider: account.user.provider,
        display_name: account.user.display_name.clone(),
        handle: account.user.handle.clone(),
        email: account.email.clone(),
        membership: account.membership,
        status: account.status,
        is_admin: account.is_admin,
        created_at: rfc3339(account.created_at),
    }
}

fn token_view(token: &TokenRecord) -> TokenView {
    TokenView {
        id: token.id.clone(),
        name: token.name.clone(),
        scopes: token.scopes.clone(),
        created_at: rfc3339(token.created_at),
        expires_at: rfc3339(token.expires_at),
        last_used_at: token.last_used_at.map(rfc3339),
        revoked_at: token.revoked_at.map(rfc3339),
    }
}

/// What the approval page asks for on behalf of the CLI.
#[derive(Debug)]
pub struct CliLoginRequest {
    pub challenge: String,
    pub token_name: String,
    pub scopes: Vec<Scope>,
}

/// A new browser session: the cookie value goes to the browser, only its hash is stored.
#[derive(Debug)]
pub struct SignedIn {
    pub cookie_value: Secret,
    pub expires_at: Millis,
}

pub struct NewUser {
    pub email: String,
    pub display_name: String,
    pub admin: bool,
    pub external: bool,
    pub password_hash: Option<String>,
}

/// A freshly issued token: the value is shown once and never stored.
#[derive(Debug)]
pub struct IssuedToken {
    pub value: Secret,
    pub record: TokenRecord,
}

impl Service {
    /// Resolves a Bearer value to an actor; anything unusable is 401.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(&self, presented: &str) -> Result<Actor> {
        if let Some(kind) = self.shared.identify(presented) {
            return Ok(Actor {
                account: service_account(kind),
                credential: Credential::Shared(kind),
            });
        }
        if !is_well_formed_personal_token(presented) {
            return Err(Error::Unauthorized(AuthFailure::Malformed));
        }
        let (token, account) = self
            .store
            .token_by_hash(&sha256(presented.as_bytes()))
            .await?
            .ok_or(Error::Unauthorized(AuthFailure::Unknown))?;
        let now = self.clock.now();
        if token.revoked_at.is_some() {
            return Err(Error::Unauthorized(AuthFailure::Revoked));
        }
        if token.expires_at <= now {
            return Err(Error::Unauthorized(AuthFailure::Expired));
        }
        if account.status != UserStatus::Active {
            return Err(Error::Unauthorized(AuthFailure::Suspended));
        }
        let stale = token
            .last_used_at
            .is_none_or(|at| now - at >= LAST_USED_GRANULARITY_MS);
        if stale && let Err(error) = self.store.touch_token(&token.id, now).await {
            tracing::warn!(token_id = %token.id, %error, "could not record token use");
        }
        Ok(Actor {
            account,
            credential: Credential::Personal {
                token_id: token.id,
                scopes: token.scopes,
                expires_at: token.expires_at,
            },
        })
    }

    /// Resolves a session cookie to an actor; anything unusable is 401.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate_session(&self, cookie_value: &str) -> Result<Actor> {
        let (session, account) = self
            .store
            .session_by_hash(&sha256(cookie_value.as_bytes()))
            .await?
            .ok_or(Error::Unauthorized(AuthFailure::Unknown))?;
        if session.expires_at <= self.clock.now() {
            return Err(Error::Unauthorized(AuthFailure::Expired));
        }
        if account.status != UserStatus::Active {
            return Err(Error::Unauthorized(AuthFailure::Suspended));
        }
        Ok(Actor {
            account,
            credential: Credential::Session {
                session_id: session.id,
            },
        })
    }

    /// Password sign-in for the browser. Every failure reads the same (no account enumeration)
    /// and counts against the email at this address, and against the address; an unknown email
    /// still costs one hash verification, so timing tells nothing either.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in(&self, email: &str, password: &str, address: &str) -> Result<SignedIn> {
        let now = self.clock.now();
        // Keyed by what was typed (trimmed, lower case), so a person and their typos share one
        // count whether or not the account exists.
        let attempt = format!("{}\u{0}{address}", email.trim().to_lowercase());
        self.failed_sign_ins.check(&attempt, now)?;
        self.failed_sign_ins_from.check(address, now)?;
        let account = match normalize_email(email) {
            Ok(email) => self.store.account_by_email(&email).await?,
            Err(_) => None,
        };
        let stored = match &account {
            Some(account) => self.store.password_hash(account.id()).await?,
            None => None,
        };
        let password = password.to_string();
        let matches = tokio::task::spawn_blocking(move || {
            if let Some(hash) = stored {
                identity::verify_password(&password, &hash)
            } else {
                identity::verify_password(&password, dummy_password_hash());
                false
            }
        })
        .await
        .map_err(|error| Error::Internal(Box::new(error)))?;
        let account = match account {
            Some(account) if matches && account.status == UserStatus::Active => account,
            _ => {
                self.failed_sign_ins.record_failure(&attempt, now);
                self.failed_sign_ins_from.record_failure(address, now);
                // The same for every failure: no account enumeration.
                return Err(Error::Unauthorized(AuthFailure::Unknown));
            }
        };
        self.start_session(account.id(), now).await
    }

    /// A new browser session for `user_id`, made at `now`.
    async fn start_session(&self, user_id: &str, now: Millis) -> Result<SignedIn> {
        let (cookie_value, hash) = identity::mint_session_value(&*self.entropy);
        let session = SessionRecord {
            id: self.new_id("ses_", now),
            hash,
            user_id: user_id.to_string(),
            created_at: now,
            expires_at: now + SESSION_LIFETIME_MS,
        };
        let expires_at = session.expires_at;
        self.store.insert_session(session).await?;
        Ok(SignedIn {
            cookie_value,
            expires_at,
        })
    }

    /// Ends a browser session (signing out); an unknown cookie is fine.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_out(&self, cookie_value: &str) -> Result<()> {
        Ok(self
            .store
            .delete_session(&sha256(cookie_value.as_bytes()))
            .await?)
    }

    /// `GET /api/me`.
    #[allow(
        clippy::unused_async,
        reason = "every Service operation is async, so handlers call them alike"
    )]
    pub async fn me(&self, actor: &Actor) -> Result<MeView> {
        access::permit(actor, Operation::Account)?;
        let token = match &actor.credential {
            Credential::Personal {
                token_id,
                scopes,
                expires_at,
            } => Some(CurrentTokenView {
                id: token_id.clone(),
                scopes: scopes.clone(),
                expires_at: rfc3339(*expires_at),
            }),
            _ => None,
        };
        Ok(MeView {
            user: member_view(&actor.account),
            token,
        })
    }

    /// `GET /api/me/tokens`: the caller's unrevoked tokens, newest first.
    pub async fn my_tokens(&self, actor: &Actor, query: PageQuery) -> Result<TokenList> {
        access::permit(actor, Operation::Account)?;
        let tokens = self.store.tokens_of(actor.id()).await?;
        let (tokens, next_cursor) = page::by_offset(tokens, query.limit, query.cursor.as_deref())?;
        Ok(TokenList {
            tokens: tokens.iter().map(token_view).collect(),
            next_cursor,
        })
    }

    /// `DELETE /api/me/tokens/{tokenId}`: the token stops working at once.
    pub async fn revoke_my_token(&self, actor: &Actor, token_id: &str) -> Result<TokenView> {
        access::permit(actor, Operation::Account)?;
        let mut token = self
            .store
            .tokens_of(actor.id())
            .await?
            .into_iter()
            .find(|token| token.id == token_id)
            .ok_or(Error::NotFound("token"))?;
        let now = self.clock.now();
        if !self.store.revoke_token(actor.id(), token_id, now).await? {
            return Err(Error::NotFound("token"));
        }
        token.revoked_at = Some(now);
        Ok(token_view(&token))
    }

    /// A personal token made on the owner's settings page (DESIGN.md §2): only a signed-in
    /// browser may make one, so a token can never mint another. Its value is shown once.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_my_token(
        &self,
        actor: &Actor,
        name: &str,
        scopes: Vec<Scope>,
    ) -> Result<IssuedToken> {
        if !matches!(actor.credential, Credential::Session { .. }) {
            return Err(Error::forbidden(
                "create personal tokens from a signed-in browser",
            ));
        }
        let name = name.trim().to_string();
        check_length("token name", &name, 1, 100)?;
        let (value, record) = self.new_token(
            &actor.account,
            default_scopes(scopes),
            name,
            TOKEN_LIFETIME_DAYS,
            self.clock.now(),
        )?;
        self.store.insert_token(record.clone()).await?;
        Ok(IssuedToken { value, record })
    }

    /// The approval step of the command-line login, by a signed-in user: a one-time code bound to
    /// the CLI's PKCE challenge, to be typed into the CLI.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn approve_cli_login(
        &self,
        actor: &Actor,
        request: CliLoginRequest,
    ) -> Result<Secret> {
        if !matches!(actor.credential, Credential::Session { .. }) {
            return Err(Error::forbidden(
                "approve a command-line login from a signed-in browser",
            ));
        }
        if !identity::is_valid_pkce_challenge(&request.challenge) {
            return Err(Error::invalid(
                "challenge must be BASE64URL(SHA-256(verifier)): 43 characters",
            ));
        }
        let token_name = request.token_name.trim().to_string();
        check_length("token name", &token_name, 1, 100)?;
        let now = self.clock.now();
        let (code, hash) = identity::mint_login_code(&*self.entropy);
        self.store
            .insert_login_code(LoginCodeRecord {
                hash,
                user_id: actor.id().to_string(),
                challenge: request.challenge,
                token_name,
                scopes: default_scopes(request.scopes),
                created_at: now,
                expires_at: now + LOGIN_CODE_LIFETIME_MS,
                used_at: None,
            })
            .await?;
        Ok(code)
    }

    /// `POST /api/auth/cli/token`: a code and its PKCE verifier become a personal token. Wrong,
    /// expired or reused codes are 400; too many failures from one address are 429.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn exchange_cli_code(
        &self,
        exchange: CodeExchange,
        address: &str,
    ) -> Result<ExchangedToken> {
        let now = self.clock.now();
        self.failed_code_exchanges.check(address, now)?;
        match self.redeem(&exchange, now).await {
            Err(Error::InvalidRequest(message)) => {
                self.failed_code_exchanges.record_failure(address, now);
                Err(Error::InvalidRequest(message))
            }
            outcome => outcome,
        }
    }

    async fn redeem(&self, exchange: &CodeExchange, now: Millis) -> Result<ExchangedToken> {
        let refused = || Error::invalid("the code is wrong, expired or already used");
        let hash = identity::login_code_hash(exchange.code.expose());
        let code = self.store.login_code(&hash).await?.ok_or_else(refused)?;
        let usable = code.used_at.is_none()
            && code.expires_at > now
            && identity::pkce_verifies(exchange.verifier.expose(), &code.challenge);
        if !usable {
            return Err(refused());
        }
        let account = self
            .store
            .account_by_id(&code.user_id)
            .await?
            .filter(|account| account.status == UserStatus::Active)
            .ok_or_else(refused)?;
        let (value, token) = self.new_token(
            &account,
            code.scopes.clone(),
            code.token_name.clone(),
            TOKEN_LIFETIME_DAYS,
            now,
        )?;
        if !self
            .store
            .redeem_login_code(&hash, now, token.clone())
            .await?
        {
            return Err(refused());
        }
        Ok(ExchangedToken {
            token: value,
            token_id: token.id,
            expires_at: rfc3339(token.expires_at),
            scopes: token.scopes,
        })
    }

    /// Creates the service principals behind the shared tokens, so they can author comments.
    pub async fn ensure_service_accounts(&self) -> Result<()> {
        for kind in SharedKind::ALL {
            self.store.ensure_account(service_account(*kind)).await?;
        }
        Ok(())
    }

    /// `docreview admin set-password`: gives a member (e.g. an external member an admin
    /// registered) a password for browser sign-in, or replaces theirs, ending their sessions.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn set_password(&self, email: &str, password: &str) -> Result<Account> {
        let account = self
            .store
            .account_by_email(&normalize_email(email)?)
            .await?
            .filter(|account| account.status != UserStatus::Removed)
            .ok_or(Error::NotFound("user"))?;
        if account.user.provider != Provider::Local {
            return Err(Error::invalid(format!(
                "{} signs in through {}, not with a password",
                account.email, account.user.provider
            )));
        }
        let hash = new_password_hash(password).await?;
        if !self.store.set_password_hash(account.id(), hash).await? {
            return Err(Error::NotFound("user"));
        }
        Ok(account)
    }

    /// `PUT /api/me/password`: a signed-in person changes their own password, proving the
    /// current one. Every session of theirs ends (a thief's too); the browser that asked gets a
    /// new one. Wrong current passwords count as failed sign-ins.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn change_my_password(
        &self,
        actor: &Actor,
        current: &str,
        new: &str,
        address: &str,
    ) -> Result<SignedIn> {
        if !matches!(actor.credential, Credential::Session { .. }) {
            return Err(Error::forbidden(
                "a password is changed from a signed-in browser (the Account page), not with a token",
            ));
        }
        if let Some(problem) = identity::password_problem(new) {
            return Err(Error::invalid(format!("newPassword: {problem}")));
        }
        let now = self.clock.now();
        let attempt = format!("{}\u{0}{address}", actor.account.email);
        self.failed_sign_ins.check(&attempt, now)?;
        let stored = self.store.password_hash(actor.id()).await?;
        let current = current.to_string();
        let matches = tokio::task::spawn_blocking(move || {
            stored.is_some_and(|hash| identity::verify_password(&current, &hash))
        })
        .await
        .map_err(|error| Error::Internal(Box::new(error)))?;
        if !matches {
            self.failed_sign_ins.record_failure(&attempt, now);
            return Err(Error::forbidden(
                "currentPassword is not your current password",
            ));
        }
        let hash = new_password_hash(new).await?;
        if !self.store.set_password_hash(actor.id(), hash).await? {
            return Err(Error::NotFound("user"));
        }
        self.start_session(actor.id(), now).await
    }

    /// `docreview admin list-users`: every member (not removed ones), by email.
    pub async fn all_users(&self) -> Result<Vec<Account>> {
        const PAGE: usize = 500;
        let mut users: Vec<Account> = Vec::new();
        loop {
            let page = self
                .store
                .list_accounts(MemberQuery {
                    admins_only: false,
                    after: users.last().map(|account| account.email.clone()),
                    limit: PAGE,
                })
                .await?;
            let full = page.len() == PAGE;
            users.extend(page);
            if !full {
                return Ok(users);
            }
        }
    }

    /// `docreview admin list-tokens`: a member's tokens in use, newest first.
    pub async fn tokens_of_member(&self, email: &str) -> Result<Vec<TokenRecord>> {
        let account = self
            .store
            .account_by_email(&normalize_email(email)?)
            .await?
            .ok_or(Error::NotFound("user"))?;
        Ok(self.store.tokens_of(account.id()).await?)
    }

    /// `docreview admin revoke-token`: any member's token, by id; it stops working at once.
    pub async fn revoke_token_by_id(&self, token_id: &str) -> Result<()> {
        let holder = self
            .store
            .token_holder(token_id)
            .await?
            .ok_or(Error::NotFound("token"))?;
        if !self
            .store
            .revoke_token(&holder, token_id, self.clock.now())
            .await?
        {
            return Err(Error::InvalidTransition(format!(
                "{token_id} is revoked already"
            )));
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_user(&self, new: NewUser) -> Result<Account> {
        let email = normalize_email(&new.email)?;
        let display_name = new.display_name.trim().to_string();
        check_length("name", &display_name, 1, 200)?;
        let now = self.clock.now();
        let account = Account {
            user: User {
                id: self.new_id("usr_", now),
                provider: Provider::Local,
                display_name,
                handle: String::new(),
            },
            email: email.clone(),
            membership: if new.external {
                Membership::External
            } else {
                Membership::Internal
            },
            status: UserStatus::Active,
            is_admin: new.admin,
            created_at: now,
        };
        match self.create_account(account, new.password_hash).await {
            Ok(account) => Ok(account),
            Err(StoreError::AlreadyExists(_)) => Err(Error::AlreadyExists(format!(
                "a user with email {email} already exists"
            ))),
            Err(other) => Err(other.into()),
        }
    }

    /// Stores a new account with a free handle derived from its email (DESIGN.md §8.1): picked
    /// from the handles in use, and picked again if another account took it meanwhile.
    pub(super) async fn create_account(
        &self,
        mut account: Account,
        password_hash: Option<String>,
    ) -> std::result::Result<Account, StoreError> {
        let base = handles::base_from_email(&account.email);
        loop {
            let taken = self.store.handles_with_prefix(&base).await?;
            account.user.handle = handles::first_free(&base, &taken);
            match self
                .store
                .create_account(account.clone(), password_hash.clone())
                .await
            {
                Err(StoreError::AlreadyExists("handle")) => {}
                other => return other.map(|()| account),
            }
        }
    }

    /// Gives every account made before handles existed its handle (run at server start, by
    /// every node: an account another node just gave one is skipped). Answers how many.
    pub async fn assign_missing_handles(&self) -> Result<usize> {
        let mut assigned = 0;
        let mut seen = std::collections::HashSet::new();
        loop {
            let missing = self.store.accounts_without_handle(64).await?;
            if missing.is_empty() || missing.iter().all(|a| seen.contains(&a.user.id)) {
                return Ok(assigned);
            }
            for account in missing {
                seen.insert(account.user.id.clone());
                let fixed = SharedKind::ALL
                    .iter()
                    .find(|kind| kind.user_id() == account.id())
                    .map(|kind| kind.handle().to_string());
                let base = handles::base_from_email(&account.email);
                loop {
                    let handle = if let Some(handle) = &fixed {
                        handle.clone()
                    } else {
                        let taken = self.store.handles_with_prefix(&base).await?;
                        handles::first_free(&base, &taken)
                    };
                    match self.store.assign_handle(account.id(), &handle).await {
                        Ok(done) => {
                            assigned += usize::from(done);
                            break;
                        }
                        // Another account took it meanwhile: pick again (a fixed one cannot be
                        // taken: no one else may hold a reserved handle).
                        Err(StoreError::AlreadyExists(_)) if fixed.is_none() => {}
                        Err(other) => return Err(other.into()),
                    }
                }
            }
        }
    }

    /// `PATCH /api/me`: the caller changes their handle or display name. A handle another
    /// account holds (or a reserved one) is 409 `already_exists`.
    pub async fn update_me(&self, actor: &Actor, change: ProfileChange) -> Result<MeView> {
        access::permit(actor, Operation::Profile)?;
        if change.handle.is_none() && change.display_name.is_none() {
            return Err(Error::invalid("send `handle`, `displayName` or both"));
        }
        if actor.account.user.provider == Provider::Service {
            return Err(Error::forbidden(
                "a shared token's principal has no profile to change",
            ));
        }
        let handle = change
            .handle
            .as_deref()
            .map(handles::normalize)
            .transpose()
            .map_err(Error::InvalidRequest)?;
        let display_name = match change.display_name {
            Some(name) => {
                let name = name.trim().to_string();
                check_length("displayName", &name, 1, 200)?;
                Some(name)
            }
            None => None,
        };
        let taken = || Error::AlreadyExists("that handle is taken".to_string());
        if handle.as_deref().is_some_and(handles::reserved) {
            return Err(taken());
        }
        match self
            .store
            .update_profile(actor.id(), handle.clone(), display_name.clone())
            .await
        {
            Err(StoreError::AlreadyExists(_)) => return Err(taken()),
            other => other?,
        }
        let mut account = actor.account.clone();
        if let Some(handle) = handle {
            account.user.handle = handle;
        }
        if let Some(name) = display_name {
            account.user.display_name = name;
        }
        let me = Actor {
            account,
            credential: actor.credential.clone(),
        };
        self.me(&me).await
    }

    /// `docreview admin issue-token`: a personal token for the user with `email`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn issue_token(
        &self,
        email: &str,
        scopes: Vec<Scope>,
        name: Option<String>,
        expires_in_days: Option<i64>,
    ) -> Result<IssuedToken> {
        let account = self
            .store
            .account_by_email(&normalize_email(email)?)
            .await?
            .ok_or(Error::NotFound("user"))?;
        if account.status != UserStatus::Active {
            return Err(Error::invalid(format!(
                "{} is {}; tokens are issued to active members only",
                account.email, account.status
            )));
        }
        let days = expires_in_days.unwrap_or(TOKEN_LIFETIME_DAYS);
        let name = name.unwrap_or_else(|| "personal token".to_string());
        let (value, record) = self.new_token(&account, scopes, name, days, self.clock.now())?;
        self.store.insert_token(record.clone()).await?;
        Ok(IssuedToken { value, record })
    }

    /// A new token for `account` (not yet stored) and its value.
    fn new_token(
        &self,
        account: &Account,
        scopes: Vec<Scope>,
        name: String,
        days: i64,
        now: Millis,
    ) -> Result<(Secret, TokenRecord)> {
        // A token that expires at once would be dead on arrival: at least a day.
        if !(1..=TOKEN_LIFETIME_DAYS).contains(&days) {
            return Err(Error::invalid(format!(
                "expiry must be 1 to {TOKEN_LIFETIME_DAYS} days (got {days})"
            )));
        }
        check_length("token name", &name, 1, 100)?;
        let (value, hash) = mint_personal_token(&*self.entropy);
        let record = TokenRecord {
            id: self.new_id("tok_", now),
            user_id: account.user.id.clone(),
            name,
            hash,
            scopes: default_scopes(scopes),
            created_at: now,
            expires_at: now + days * DAY_MS,
            last_used_at: None,
            revoked_at: None,
        };
        Ok((value, record))
    }
}

/// A hash of a random password, verified against when the email is unknown so that a failed
/// sign-in takes as long either way.
fn dummy_password_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| {
        let mut random = [0u8; 16];
        crate::clock::random_bytes(&mut random);
        identity::hash_password(&hex::encode(random)).unwrap_or_default()
    })
}

/// Scopes default to `comments` only (reference §Authentication 8); duplicates are dropped.
fn default_scopes(scopes: Vec<Scope>) -> Vec<Scope> {
    if scopes.is_empty() {
        vec![Scope::Comments]
    } else {
        dedup(scopes)
    }
}

fn dedup(scopes: Vec<Scope>) -> Vec<Scope> {
    let mut unique = Vec::with_capacity(scopes.len());
    for scope in scopes {
        if !unique.contains(&scope) {
            unique.push(scope);
        }
    }
    unique
}

/// The account behind a shared token.
pub fn service_account(kind: SharedKind) -> Account {
    Account {
        user: User {
            id: kind.user_id().to_string(),
            provider: Provider::Service,
            display_name: kind.display_name().to_string(),
            handle: kind.handle().to_string(),
        },
        email: format!("{}@service.invalid", kind.as_str()),
        membership: Membership::Internal,
        status: UserStatus::Active,
        is_admin: false,
        created_at: 0,
    }
}

/// Lower-cases and checks an email address: one `@`, a non-empty local part, a dotted domain.
pub fn normalize_email(email: &str) -> Result<String> {
    let email = email.trim();
    let too_long = email.chars().count() > 254;
    let email = email.to_lowercase();
    let valid = !too_long
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains("..")
        });
    if valid {
        Ok(email)
    } else {
        Err(Error::invalid(format!(
            "`{email}` is not a valid email address"
        )))
    }
}

/// The hash of a new password that passes the one rule (`identity::password_problem`),
/// computed off the async threads.
pub async fn new_password_hash(password: &str) -> Result<String> {
    let password = password.to_string();
    tokio::task::spawn_blocking(move || identity::hash_new_password(&password))
        .await
        .map_err(|error| Error::Internal(Box::new(error)))?
        .map_err(Error::invalid)
}

#[cfg(test)]
mod tests {
    use super::normalize_email;

    #[test]
    fn emails_are_validated_and_lowercased() {
        assert_eq!(
            normalize_email(" Ada@Example.COM ").ok().as_deref(),
            Some("ada@example.com")
        );
        for bad in [
            "",
            "ada",
            "@example.com",
            "ada@",
            "ada@example",
            "a b@example.com",
            "a@b@c.com",
            "ada@.com",
        ] {
            assert!(normalize_email(bad).is_err(), "{bad} should be rejected");
        }
    }
}
