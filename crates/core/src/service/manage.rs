//! Managing a document: title, tags and archive flag, sharing, ownership, deletion.

use docreview_api::requests::{MetaChange, OwnerChange, SharingChange, TitleChange};
use docreview_api::views::{AllowedUserEntry, ReviewView, SharingView};

use super::reviews::normalize_tags;
use super::{Service, accounts::normalize_email, check_length};
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::model::{
    AccessGrant, AccessMode, GrantRole, Provider, Role, UserStatus, WebhookEventType,
};
use crate::outbox::Sink;
use crate::store::{ReviewUpdate, StoreError};

/// A document may be shared with at most this many people by email.
const MAX_ALLOWED_USERS: usize = 500;

impl Service {
    /// `PATCH /api/reviews/{id}/title` (editor).
    pub async fn rename_review(
        &self,
        actor: &Actor,
        review_id: &str,
        change: TitleChange,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::Manage)?;
        let title = change.title.trim().to_string();
        check_length("title", &title, 1, 300)?;
        let (_, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Editor, "changing the title")?;
        self.update(ReviewUpdate {
            title: Some(title),
            ..self.update_of(review_id)
        })
        .await?;
        self.review_after_change(actor, review_id, role).await
    }

    /// `PATCH /api/reviews/{id}/meta` (editor): tags replace the list; archive or restore.
    pub async fn change_meta(
        &self,
        actor: &Actor,
        review_id: &str,
        change: MetaChange,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::Manage)?;
        if change.tags.is_none() && change.archived.is_none() {
            return Err(Error::invalid("send `tags`, `archived` or both"));
        }
        let tags = change.tags.map(normalize_tags).transpose()?;
        let (_, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Editor, "changing tags or the archive flag")?;
        self.update(ReviewUpdate {
            tags,
            archived: change.archived,
            ..self.update_of(review_id)
        })
        .await?;
        self.review_after_change(actor, review_id, role).await
    }

    /// `GET /api/reviews/{id}/access` (editor: who else can see it is an editor's business).
    pub async fn sharing(&self, actor: &Actor, review_id: &str) -> Result<SharingView> {
        access::permit(actor, Operation::ReadSharing)?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Editor, "reading the sharing settings")?;
        Ok(sharing_view(head.review.access_mode, &head.grants))
    }

    /// `PATCH /api/reviews/{id}/access` (owner).
    pub async fn change_sharing(
        &self,
        actor: &Actor,
        review_id: &str,
        change: SharingChange,
    ) -> Result<SharingView> {
        access::permit(actor, Operation::ChangeSharing)?;
        if change.mode.is_none() && change.allowed_users.is_none() {
            return Err(Error::invalid("send `mode`, `allowedUsers` or both"));
        }
        let grants = change.allowed_users.map(grants_of).transpose()?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Owner, "changing the sharing settings")?;
        let mode = change.mode.unwrap_or(head.review.access_mode);
        let shown = sharing_view(mode, grants.as_deref().unwrap_or(&head.grants));
        self.update(ReviewUpdate {
            access_mode: change.mode,
            grants,
            ..self.update_of(review_id)
        })
        .await?;
        Ok(shown)
    }

    /// `PUT /api/reviews/{id}/owner` (owner or org admin): the new owner must be an active member
    /// who can already see the document; the old owner stays on as editor.
    pub async fn transfer_owner(
        &self,
        actor: &Actor,
        review_id: &str,
        change: OwnerChange,
    ) -> Result<ReviewView> {
        access::permit(actor, Operation::Grant)?;
        let email = normalize_email(&change.email)?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Owner, "transferring ownership")?;
        let no_such_member = || {
            Error::invalid(format!(
                "{email} is not an active member; the new owner must be one"
            ))
        };
        let new_owner = self
            .store
            .account_by_email(&email)
            .await?
            .filter(|account| {
                account.status == UserStatus::Active && account.user.provider != Provider::Service
            })
            .ok_or_else(no_such_member)?;
        if new_owner.id() == head.review.owner_id {
            return self.review_after_change(actor, review_id, role).await;
        }
        let project_role = match &head.review.project_code {
            Some(code) => self.store.project_role(code, new_owner.id()).await?,
            None => None,
        };
        if access::account_role(&new_owner, &head, project_role).is_none() {
            return Err(Error::invalid(format!(
                "{email} cannot see this document; share it with them first"
            )));
        }
        let mut grants: Vec<AccessGrant> = head
            .grants
            .iter()
            .filter(|grant| grant.email != new_owner.email)
            .cloned()
            .collect();
        let old_owner = self.store.account_by_id(&head.review.owner_id).await?;
        if let Some(old_owner) = old_owner.filter(|a| a.user.provider != Provider::Service) {
            grants.retain(|grant| grant.email != old_owner.email);
            grants.push(AccessGrant {
                email: old_owner.email,
                role: GrantRole::Editor,
            });
        }
        self.update(ReviewUpdate {
            owner_id: Some(new_owner.user.id),
            grants: Some(grants),
            ..self.update_of(review_id)
        })
        .await?;
        self.review_after_change(actor, review_id, role).await
    }

    /// `DELETE /api/reviews/{id}` (owner): the document and everything in it.
    pub async fn delete_review(&self, actor: &Actor, review_id: &str) -> Result<()> {
        access::permit(actor, Operation::Manage)?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_role(role, Role::Owner, "deleting the document")?;
        let deleted = self.event_on(
            WebhookEventType::ReviewDeleted,
            actor,
            &head.review,
            self.clock.now(),
        );
        match self
            .store
            .delete_review(review_id, vec![deleted.entry()])
            .await
        {
            Err(StoreError::NotFound) => Err(Error::NotFound("document")),
            outcome => {
                outcome?;
                self.wake(Sink::Event);
                Ok(())
            }
        }
    }

    /// An update of `review_id` stamped now, changing nothing yet.
    fn update_of(&self, review_id: &str) -> ReviewUpdate {
        ReviewUpdate {
            review_id: review_id.to_string(),
            at: self.clock.now(),
            ..ReviewUpdate::default()
        }
    }

    async fn update(&self, update: ReviewUpdate) -> Result<()> {
        match self.store.update_review(update).await {
            Err(StoreError::NotFound) => Err(Error::NotFound("document")),
            outcome => Ok(outcome?),
        }
    }
}

/// Checks and normalizes a sharing list: valid emails, each listed once.
pub(crate) fn grants_of(entries: Vec<AllowedUserEntry>) -> Result<Vec<AccessGrant>> {
    if entries.len() > MAX_ALLOWED_USERS {
        return Err(Error::invalid(format!(
            "a document can be shared with at most {MAX_ALLOWED_USERS} people"
        )));
    }
    let mut grants: Vec<AccessGrant> = Vec::with_capacity(entries.len());
    for entry in entries {
        let email = normalize_email(&entry.email)?;
        if grants.iter().any(|grant| grant.email == email) {
            return Err(Error::invalid(format!(
                "{email} is listed more than once in allowedUsers"
            )));
        }
        grants.push(AccessGrant {
            email,
            role: entry.role,
        });
    }
    Ok(grants)
}

fn sharing_view(mode: AccessMode, grants: &[AccessGrant]) -> SharingView {
    let mut allowed_users: Vec<AllowedUserEntry> = grants
        .iter()
        .map(|grant| AllowedUserEntry {
            email: grant.email.clone(),
            role: grant.role,
        })
        .collect();
    allowed_users.sort_by(|a, b| a.email.cmp(&b.email));
    SharingView {
        mode,
        allowed_users,
    }
}
