//! Accounts, personal tokens and authentication.

use super::{Service, check_length};
use crate::access::{Actor, Credential};
use crate::error::{Error, Result};
use crate::identity::{Secret, is_well_formed_personal_token, mint_personal_token, sha256};
use crate::ids::new_id;
use crate::model::{
    Account, Membership, Provider, Scope, SharedKind, TokenRecord, User, UserStatus,
};
use crate::store::StoreError;

pub const TOKEN_LIFETIME_DAYS: i64 = 90;
const DAY_MS: i64 = 24 * 60 * 60 * 1000;
/// `lastUsedAt` is refreshed at most this often, so reads do not turn into writes.
const LAST_USED_GRANULARITY_MS: i64 = 60 * 1000;

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
    pub async fn authenticate(&self, presented: &str) -> Result<Actor> {
        if let Some(kind) = self.shared.identify(presented) {
            return Ok(Actor {
                account: service_account(kind),
                credential: Credential::Shared(kind),
            });
        }
        if !is_well_formed_personal_token(presented) {
            return Err(Error::Unauthorized);
        }
        let (token, account) = self
            .store
            .token_by_hash(&sha256(presented.as_bytes()))
            .await?
            .ok_or(Error::Unauthorized)?;
        let now = self.clock.now();
        if token.revoked_at.is_some()
            || token.expires_at <= now
            || account.status != UserStatus::Active
        {
            return Err(Error::Unauthorized);
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

    /// Creates the service principals behind the shared tokens, so they can author comments.
    pub async fn ensure_service_accounts(&self) -> Result<()> {
        for kind in SharedKind::ALL {
            self.store.ensure_account(service_account(*kind)).await?;
        }
        Ok(())
    }

    /// `docreview admin create-user`.
    pub async fn create_user(&self, new: NewUser) -> Result<Account> {
        let email = normalize_email(&new.email)?;
        let display_name = new.display_name.trim().to_string();
        check_length("name", &display_name, 1, 200)?;
        let now = self.clock.now();
        let account = Account {
            user: User {
                id: new_id("usr_", now),
                provider: Provider::Local,
                display_name,
            },
            email,
            membership: if new.external {
                Membership::External
            } else {
                Membership::Internal
            },
            status: UserStatus::Active,
            is_admin: new.admin,
            created_at: now,
        };
        match self
            .store
            .create_account(account.clone(), new.password_hash)
            .await
        {
            Ok(()) => Ok(account),
            Err(StoreError::AlreadyExists(_)) => Err(Error::AlreadyExists(format!(
                "a user with email {} already exists",
                account.email
            ))),
            Err(other) => Err(other.into()),
        }
    }

    /// `docreview admin issue-token`: a personal token for the user with `email`.
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
        let days = expires_in_days.unwrap_or(TOKEN_LIFETIME_DAYS);
        if !(0..=TOKEN_LIFETIME_DAYS).contains(&days) {
            return Err(Error::invalid(format!(
                "expiry must be 0 to {TOKEN_LIFETIME_DAYS} days"
            )));
        }
        let scopes = if scopes.is_empty() {
            vec![Scope::Comments]
        } else {
            dedup(scopes)
        };
        let name = name.unwrap_or_else(|| "personal token".to_string());
        check_length("token name", &name, 1, 100)?;
        let now = self.clock.now();
        let (value, hash) = mint_personal_token();
        let record = TokenRecord {
            id: new_id("tok_", now),
            user_id: account.user.id,
            name,
            hash,
            scopes,
            created_at: now,
            expires_at: now + days * DAY_MS,
            last_used_at: None,
            revoked_at: None,
        };
        self.store.insert_token(record.clone()).await?;
        Ok(IssuedToken { value, record })
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
    let email = email.trim().to_lowercase();
    let valid = email.len() <= 254
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
