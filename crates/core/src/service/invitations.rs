//! Invitations to join the organization and password resets (DESIGN.md §8.2): single-use
//! links whose secret is stored only as its SHA-256, mailed through the outbox when mail is
//! set up, and the pages behind them (the web layer only renders what these answer).

use docreview_api::requests::{NewInvitation, PasswordResetRequest};
use docreview_api::views::{InvitationBody, InvitationList, InvitationView};

use super::accounts::{SESSION_LIFETIME_MS, SignedIn, new_password_hash, normalize_email};
use super::mail::KIND_LINK;
use super::org::require_admin;
use super::{Service, check_length};
use crate::access::{Actor, Operation};
use crate::clock::rfc3339;
use crate::error::{Error, Result};
use crate::handles;
use crate::identity::{self, Secret, sha256};
use crate::mail::{self, Mail};
use crate::model::{
    Account, InvitationRecord, Millis, PasswordResetRecord, Provider, SessionRecord, User,
    UserStatus,
};
use crate::outbox::{OutboxEntry, Sink};
use crate::store::{Acceptance, StoreError};

/// An invitation is valid this long.
pub const INVITATION_LIFETIME_MS: Millis = 7 * 24 * 3_600_000;
/// A password reset link is valid this long.
pub const PASSWORD_RESET_LIFETIME_MS: Millis = 3_600_000;

/// Reset requests one email (as typed, whether or not it has an account) may make in an hour
/// on one node; beyond, 429 `rate_limited`.
pub const RESET_REQUESTS_PER_HOUR: usize = 5;

/// What the invitation page shows before the person accepts.
#[derive(Debug, Clone)]
pub struct OpenInvitation {
    pub email: String,
    pub display_name: Option<String>,
    pub inviter: String,
}

impl Service {
    /// `POST /api/org/invitations` (org admins): invites `email` to join with `membership`
    /// (and a project role). 409 `already_exists` when the email has an account.
    pub async fn invite(&self, actor: &Actor, new: NewInvitation) -> Result<InvitationBody> {
        require_admin(actor, Operation::OrgWrite)?;
        let email = normalize_email(&new.email)?;
        let display_name = match new.display_name {
            Some(name) => {
                let name = name.trim().to_string();
                check_length("displayName", &name, 1, 200)?;
                Some(name)
            }
            None => None,
        };
        let project = match (new.project_code, new.project_role) {
            (None, None) => None,
            (Some(code), Some(role)) => {
                let project = self
                    .store
                    .project(code.trim())
                    .await?
                    .ok_or(Error::ProjectNotFound)?;
                if !project.in_snapshot {
                    return Err(Error::ProjectNotInSnapshot);
                }
                Some((project.code, role))
            }
            _ => {
                return Err(Error::invalid(
                    "send projectCode and projectRole together, or neither",
                ));
            }
        };
        if self.store.account_by_email(&email).await?.is_some() {
            return Err(Error::AlreadyExists(format!(
                "{email} already has an account; give them a project role instead"
            )));
        }
        let now = self.clock.now();
        let (secret, hash) = identity::mint_link_secret(&*self.entropy);
        let accept_url = format!("{}/invite/{}", self.settings.public_url, secret.expose());
        let record = InvitationRecord {
            id: self.new_id("inv_", now),
            hash,
            email,
            display_name,
            membership: new.membership,
            project,
            invited_by: actor.id().to_string(),
            created_at: now,
            expires_at: now + INVITATION_LIFETIME_MS,
            accepted_at: None,
            revoked_at: None,
        };
        let mails = match &self.settings.mail {
            Some(setup) => {
                let mail = mail::invitation_mail(
                    &record.email,
                    &actor.account.user.display_name,
                    &accept_url,
                    &setup.public_url,
                )
                .map_err(|error| Error::Internal(Box::new(error)))?;
                vec![self.link_mail_entry(&mail, &record.id, now)?]
            }
            None => Vec::new(),
        };
        let mailed = !mails.is_empty();
        self.store.create_invitation(record.clone(), mails).await?;
        if mailed {
            self.wake(Sink::Mail);
        }
        let mut invitation = invitation_view(&record);
        invitation.accept_url = Some(Secret::new(accept_url));
        Ok(InvitationBody { invitation })
    }

    /// `GET /api/org/invitations` (org admins): the pending ones, newest first.
    pub async fn list_invitations(&self, actor: &Actor) -> Result<InvitationList> {
        require_admin(actor, Operation::OrgRead)?;
        let pending = self.store.pending_invitations(self.clock.now()).await?;
        Ok(InvitationList {
            invitations: pending.iter().map(invitation_view).collect(),
        })
    }

    /// `DELETE /api/org/invitations/{id}` (org admins): its link stops working at once. 404
    /// when no pending invitation has that id.
    pub async fn revoke_invitation(&self, actor: &Actor, id: &str) -> Result<()> {
        require_admin(actor, Operation::OrgWrite)?;
        if self.store.revoke_invitation(id, self.clock.now()).await? {
            Ok(())
        } else {
            Err(Error::NotFound("invitation"))
        }
    }

    /// The pending invitation behind a link's secret; `NotFound` when it is unknown, used,
    /// revoked or expired (the page says so kindly, and creates nothing).
    pub async fn open_invitation(&self, secret: &str) -> Result<OpenInvitation> {
        let record = self.pending_invitation(secret).await?;
        let inviter = self
            .store
            .account_by_id(&record.invited_by)
            .await?
            .map_or_else(|| "An administrator".to_string(), |a| a.user.display_name);
        Ok(OpenInvitation {
            email: record.email,
            display_name: record.display_name,
            inviter,
        })
    }

    async fn pending_invitation(&self, secret: &str) -> Result<InvitationRecord> {
        self.store
            .invitation_by_hash(&sha256(secret.as_bytes()))
            .await?
            .filter(|record| record.pending_at(self.clock.now()))
            .ok_or(Error::NotFound("invitation"))
    }

    /// Accepts an invitation: the person, with the name and password they chose, becomes a
    /// member with the invited membership (and project role) and is signed in. Once only:
    /// `NotFound` when the link is unknown, used, revoked or expired; 400 for a password that
    /// breaks the rule or a bad name; 409 when the email got an account meanwhile.
    pub async fn accept_invitation(
        &self,
        secret: &str,
        display_name: &str,
        password: &str,
    ) -> Result<(Account, SignedIn)> {
        let record = self.pending_invitation(secret).await?;
        let display_name = display_name.trim().to_string();
        check_length("displayName", &display_name, 1, 200)?;
        if let Some(problem) = identity::password_problem(password) {
            return Err(Error::invalid(format!("password: {problem}")));
        }
        let password_hash = new_password_hash(password).await?;
        let now = self.clock.now();
        let mut account = Account {
            user: User {
                id: self.new_id("usr_", now),
                provider: Provider::Local,
                display_name,
                handle: String::new(),
            },
            email: record.email.clone(),
            membership: record.membership,
            status: UserStatus::Active,
            is_admin: false,
            created_at: now,
        };
        let base = handles::base_from_email(&account.email);
        loop {
            let taken = self.store.handles_with_prefix(&base).await?;
            account.user.handle = handles::first_free(&base, &taken);
            let (cookie_value, hash) = identity::mint_session_value(&*self.entropy);
            let session = SessionRecord {
                id: self.new_id("ses_", now),
                hash,
                user_id: account.id().to_string(),
                created_at: now,
                expires_at: now + SESSION_LIFETIME_MS,
            };
            let expires_at = session.expires_at;
            let acceptance = Acceptance {
                account: account.clone(),
                password_hash: password_hash.clone(),
                session,
            };
            match self
                .store
                .accept_invitation(&record.hash, now, acceptance)
                .await
            {
                Ok(true) => {
                    return Ok((
                        account,
                        SignedIn {
                            cookie_value,
                            expires_at,
                        },
                    ));
                }
                Ok(false) => return Err(Error::NotFound("invitation")),
                // Another account took the handle between our look and our write: pick again.
                Err(StoreError::AlreadyExists("handle")) => {}
                Err(StoreError::AlreadyExists(_)) => {
                    return Err(Error::AlreadyExists(format!(
                        "{} already has an account; sign in instead",
                        account.email
                    )));
                }
                Err(other) => return Err(other.into()),
            }
        }
    }

    /// `POST /api/auth/password-reset`: mails a reset link to the person with that email, if
    /// there is one who signs in with a password and mail is set up. The answer is the same
    /// whatever the email (no account enumeration), and so is its timing: only the rate limit
    /// is checked before answering; looking the email up and writing the reset with its mail
    /// happen after, in a task of their own.
    pub fn request_password_reset(
        self: &std::sync::Arc<Self>,
        request: PasswordResetRequest,
    ) -> Result<()> {
        // A malformed address is refused (400) whether or not anyone has an account: that
        // tells nothing about who has one.
        let typed = normalize_email(&request.email)?;
        let now = self.clock.now();
        self.reset_requests.check(&typed, now)?;
        self.reset_requests.record_failure(&typed, now);
        let service = std::sync::Arc::clone(self);
        tokio::spawn(async move {
            if let Err(error) = service.mail_password_reset(&request.email).await {
                tracing::warn!(%error, "a password reset request failed");
            }
        });
        Ok(())
    }

    /// Writes a reset and its mail for `email`, when it names an active member who signs in
    /// with a password and mail is set up; otherwise nothing.
    async fn mail_password_reset(&self, email: &str) -> Result<()> {
        let account = match normalize_email(email) {
            Ok(email) => self.store.account_by_email(&email).await?,
            Err(_) => None,
        };
        let (Some(setup), Some(account)) = (&self.settings.mail, account) else {
            return Ok(());
        };
        if account.status != UserStatus::Active || account.user.provider != Provider::Local {
            return Ok(());
        }
        let now = self.clock.now();
        let (secret, hash) = identity::mint_link_secret(&*self.entropy);
        let reset_url = format!("{}/reset/{}", setup.public_url, secret.expose());
        let mail = mail::password_reset_mail(&account.email, &reset_url, &setup.public_url)
            .map_err(|error| Error::Internal(Box::new(error)))?;
        let entry = self.link_mail_entry(&mail, account.id(), now)?;
        self.store
            .create_password_reset(
                PasswordResetRecord {
                    hash,
                    user_id: account.id().to_string(),
                    created_at: now,
                    expires_at: now + PASSWORD_RESET_LIFETIME_MS,
                    used_at: None,
                },
                vec![entry],
            )
            .await?;
        self.wake(Sink::Mail);
        Ok(())
    }

    /// Whether a reset link can still be used (for its page); `NotFound` otherwise.
    pub async fn open_password_reset(&self, secret: &str) -> Result<Account> {
        let reset = self
            .store
            .password_reset(&sha256(secret.as_bytes()))
            .await?
            .filter(|reset| reset.used_at.is_none() && self.clock.now() < reset.expires_at)
            .ok_or(Error::NotFound("password reset link"))?;
        self.store
            .account_by_id(&reset.user_id)
            .await?
            .ok_or(Error::NotFound("password reset link"))
    }

    /// Sets a new password through a reset link, once; every session of the person ends.
    /// 400 for a password that breaks the rule (the link stays usable), `NotFound` for a link
    /// that is unknown, used or expired.
    pub async fn reset_password(&self, secret: &str, password: &str) -> Result<Account> {
        let account = self.open_password_reset(secret).await?;
        if let Some(problem) = identity::password_problem(password) {
            return Err(Error::invalid(format!("password: {problem}")));
        }
        let password_hash = new_password_hash(password).await?;
        self.store
            .redeem_password_reset(&sha256(secret.as_bytes()), self.clock.now(), password_hash)
            .await?
            .ok_or(Error::NotFound("password reset link"))?;
        Ok(account)
    }

    /// The `mail` row of a single-use link's mail (written with the record it announces).
    /// The row holds the link itself until it is pruned: the mail must be sent after commit,
    /// and the stored record keeps only the hash.
    fn link_mail_entry(&self, mail: &Mail, target: &str, now: Millis) -> Result<OutboxEntry> {
        Ok(OutboxEntry {
            id: self.new_id(Sink::Mail.id_prefix(), now),
            sink: Sink::Mail,
            kind: KIND_LINK.to_string(),
            event_id: target.to_string(),
            target: None,
            payload: serde_json::to_string(mail)
                .map_err(|error| Error::Internal(Box::new(error)))?,
            created_at: now,
            next_attempt_at: now,
            dedupe_key: None,
        })
    }
}

/// An invitation as the API shows it (without its link).
fn invitation_view(record: &InvitationRecord) -> InvitationView {
    InvitationView {
        id: record.id.clone(),
        email: record.email.clone(),
        display_name: record.display_name.clone(),
        membership: record.membership,
        project_code: record.project.as_ref().map(|(code, _)| code.clone()),
        project_role: record.project.as_ref().map(|(_, role)| *role),
        expires_at: rfc3339(record.expires_at),
        created_at: rfc3339(record.created_at),
        accept_url: None,
    }
}
