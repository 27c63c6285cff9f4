//! The organization: members (registering external ones, suspending, removing) and
//! administrators. Only org admins may call these; writes need the `org` scope.

use docreview_api::requests::{MemberChange, MemberRef, MemberStatus, NewMember, PageQuery};
use docreview_api::views::{AdminList, MemberList, MemberView};

use super::accounts::{member_view, normalize_email};
use super::{Service, check_length, page};
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{Account, Membership, Provider, User, UserStatus};
use crate::store::{MemberQuery, StoreError};

impl Service {
    /// `GET /api/org/members`, ordered by email.
    pub async fn list_members(&self, actor: &Actor, query: PageQuery) -> Result<MemberList> {
        let (members, next_cursor) = self.members_page(actor, query, false).await?;
        Ok(MemberList {
            members,
            next_cursor,
        })
    }

    /// `GET /api/org/admins`, ordered by email.
    pub async fn list_admins(&self, actor: &Actor, query: PageQuery) -> Result<AdminList> {
        let (admins, next_cursor) = self.members_page(actor, query, true).await?;
        Ok(AdminList {
            admins,
            next_cursor,
        })
    }

    /// `POST /api/org/members`: registers an external member (who then acts only inside the
    /// projects where they are given a role). A removed member's email may be registered again.
    pub async fn register_member(&self, actor: &Actor, new: NewMember) -> Result<MemberView> {
        require_admin(actor, Operation::OrgWrite)?;
        let email = normalize_email(&new.email)?;
        let display_name = new.display_name.trim().to_string();
        check_length("displayName", &display_name, 1, 200)?;
        match self.store.account_by_email(&email).await? {
            Some(account) if account.status == UserStatus::Removed => {
                let account = Account {
                    user: User {
                        display_name,
                        ..account.user
                    },
                    membership: Membership::External,
                    status: UserStatus::Active,
                    is_admin: false,
                    ..account
                };
                self.store.update_account(account.clone()).await?;
                Ok(member_view(&account))
            }
            Some(_) => Err(Error::AlreadyExists(format!("{email} is a member already"))),
            None => {
                let now = self.clock.now();
                let account = Account {
                    user: User {
                        id: self.new_id("usr_", now),
                        provider: Provider::Local,
                        display_name,
                        handle: String::new(),
                    },
                    email,
                    membership: Membership::External,
                    status: UserStatus::Active,
                    is_admin: false,
                    created_at: now,
                };
                let email = account.email.clone();
                match self.create_account(account, None).await {
                    Ok(account) => Ok(member_view(&account)),
                    Err(StoreError::AlreadyExists(_)) => {
                        Err(Error::AlreadyExists(format!("{email} is a member already")))
                    }
                    Err(other) => Err(other.into()),
                }
            }
        }
    }

    /// `PATCH /api/org/members`: suspend, reactivate or rename a member. A suspended member's
    /// tokens and sessions stop working at once (every request checks the holder's status).
    pub async fn update_member(&self, actor: &Actor, change: MemberChange) -> Result<MemberView> {
        require_admin(actor, Operation::OrgWrite)?;
        if change.status.is_none() && change.display_name.is_none() {
            return Err(Error::invalid("send `status`, `displayName` or both"));
        }
        let mut account = self.member(&change.email).await?;
        if let Some(name) = change.display_name {
            let name = name.trim().to_string();
            check_length("displayName", &name, 1, 200)?;
            account.user.display_name = name;
        }
        match change.status {
            Some(MemberStatus::Suspended) if account.id() == actor.id() => {
                return Err(Error::forbidden("you cannot suspend yourself"));
            }
            Some(MemberStatus::Suspended) => account.status = UserStatus::Suspended,
            Some(MemberStatus::Active) => account.status = UserStatus::Active,
            None => {}
        }
        self.store.update_account(account.clone()).await?;
        Ok(member_view(&account))
    }

    /// `DELETE /api/org/members`: removes an external member; their tokens, sessions and project
    /// roles go at once. Internal members are suspended instead.
    pub async fn remove_member(&self, actor: &Actor, member: MemberRef) -> Result<MemberView> {
        require_admin(actor, Operation::OrgWrite)?;
        let mut account = self.member(&member.email).await?;
        if account.membership == Membership::Internal {
            return Err(Error::forbidden(
                "only external members can be removed; suspend internal members instead",
            ));
        }
        self.store
            .remove_account(account.id(), self.clock.now())
            .await?;
        account.status = UserStatus::Removed;
        account.is_admin = false;
        Ok(member_view(&account))
    }

    /// `PUT /api/org/admins`: makes an active internal member an administrator (idempotent).
    pub async fn add_admin(&self, actor: &Actor, member: MemberRef) -> Result<MemberView> {
        require_admin(actor, Operation::OrgWrite)?;
        let mut account = self.member(&member.email).await?;
        if account.membership == Membership::External {
            return Err(Error::invalid(
                "external members cannot be organization administrators",
            ));
        }
        if account.status != UserStatus::Active {
            return Err(Error::invalid(format!(
                "{} is {}; reactivate them first",
                account.email, account.status
            )));
        }
        if !account.is_admin {
            account.is_admin = true;
            self.store.update_account(account.clone()).await?;
        }
        Ok(member_view(&account))
    }

    /// `DELETE /api/org/admins`: the organization keeps at least one administrator.
    pub async fn remove_admin(&self, actor: &Actor, member: MemberRef) -> Result<MemberView> {
        require_admin(actor, Operation::OrgWrite)?;
        let mut account = self.member(&member.email).await?;
        if !account.is_admin {
            return Ok(member_view(&account));
        }
        // The store refuses to take the last active administrator away (`LastAdmin`), checked
        // atomically with the write.
        account.is_admin = false;
        self.store.update_account(account.clone()).await?;
        Ok(member_view(&account))
    }

    async fn members_page(
        &self,
        actor: &Actor,
        query: PageQuery,
        admins_only: bool,
    ) -> Result<(Vec<MemberView>, Option<String>)> {
        require_admin(actor, Operation::OrgRead)?;
        let limit = page::limit(query.limit)?;
        let after = query.cursor.as_deref().map(page::decode).transpose()?;
        let rows = self
            .store
            .list_accounts(MemberQuery {
                admins_only,
                after,
                limit: limit + 1,
            })
            .await?;
        let (rows, next) = page::trim_keyset_page(rows, limit, |account| account.email.clone());
        Ok((rows.iter().map(member_view).collect(), next))
    }

    /// A member by email: 404 for an unknown, removed or service account.
    async fn member(&self, email: &str) -> Result<Account> {
        let email = normalize_email(email)?;
        self.store
            .account_by_email(&email)
            .await?
            .filter(|account| {
                account.status != UserStatus::Removed && account.user.provider != Provider::Service
            })
            .ok_or(Error::NotFound("member"))
    }
}

/// The organization endpoints are for its administrators only.
pub(super) fn require_admin(actor: &Actor, operation: Operation) -> Result<()> {
    access::permit(actor, operation)?;
    if actor.account.is_admin {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only organization administrators can manage members",
        ))
    }
}
