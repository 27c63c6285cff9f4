//! Managing a document: title, tags and archive flag, sharing, ownership, deletion.

use docreview_api::requests::ListQuery;
use docreview_api::requests::{MetaChange, OwnerChange, SharingChange, TitleChange};
use docreview_api::views::{AllowedUserEntry, MemberView, ReviewView, SharingView};

use super::accounts::{member_view, normalize_email};
use super::reviews::normalize_tags;
use super::{Service, check_length};
use crate::access::{self, Actor, DocumentAction, Operation};
use crate::error::{Error, Result};
use crate::model::{AccessGrant, AccessMode, GrantRole, Provider, UserStatus, WebhookEventType};
use crate::outbox::Sink;
use crate::store::{MemberQuery, ReviewUpdate, StoreError};

/// A document may be shared with at most this many people by email.
const MAX_ALLOWED_USERS: usize = 500;
/// People offered when sharing (the organization's first members by email); past this many,
/// the email is typed in full.
const SHARE_SUGGESTIONS: usize = 500;
/// Documents whose tags are offered when tagging (the caller's most recently active ones).
const TAG_SOURCES: usize = 200;

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
        access::require_action(role, DocumentAction::Rename)?;
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
        access::require_action(role, DocumentAction::ChangeMeta)?;
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
        access::require_action(role, DocumentAction::ReadSharing)?;
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
        access::require_action(role, DocumentAction::ChangeSharing)?;
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

    /// One person's place in the sharing list (the web app's Share dialog): added, or given
    /// another role, with `Some(role)`; taken off with `None` (nothing to do when absent). The
    /// rest of the list stays as it is.
    pub async fn share_with(
        &self,
        actor: &Actor,
        review_id: &str,
        email: &str,
        role: Option<GrantRole>,
    ) -> Result<SharingView> {
        access::permit(actor, Operation::ChangeSharing)?;
        let email = normalize_email(email)?;
        let (head, role_here) = self.visible(actor, review_id).await?;
        access::require_action(role_here, DocumentAction::ChangeSharing)?;
        let mut grants = head.grants.clone();
        match (grants.iter_mut().find(|grant| grant.email == email), role) {
            (Some(grant), Some(role)) => grant.role = role,
            (None, Some(role)) => {
                if grants.len() >= MAX_ALLOWED_USERS {
                    return Err(Error::invalid(format!(
                        "a document can be shared with at most {MAX_ALLOWED_USERS} people"
                    )));
                }
                grants.push(AccessGrant { email, role });
            }
            (_, None) => grants.retain(|grant| grant.email != email),
        }
        let shown = sharing_view(head.review.access_mode, &grants);
        self.update(ReviewUpdate {
            grants: Some(grants),
            ..self.update_of(review_id)
        })
        .await?;
        Ok(shown)
    }

    /// The people a document's owner may share it with or hand it to, offered as they type:
    /// active members (never service principals), by email, at most `SHARE_SUGGESTIONS`.
    pub async fn share_suggestions(
        &self,
        actor: &Actor,
        review_id: &str,
    ) -> Result<Vec<MemberView>> {
        access::permit(actor, Operation::ChangeSharing)?;
        let (_, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::ChangeSharing)?;
        let accounts = self
            .store
            .list_accounts(MemberQuery {
                admins_only: false,
                after: None,
                limit: SHARE_SUGGESTIONS,
            })
            .await?;
        Ok(accounts
            .iter()
            .filter(|account| {
                account.status == UserStatus::Active && account.user.provider != Provider::Service
            })
            .map(member_view)
            .collect())
    }

    /// Tags already in use on the documents the caller can see (their `TAG_SOURCES` most
    /// recently active), sorted: what a tag field suggests.
    pub async fn known_tags(&self, actor: &Actor) -> Result<Vec<String>> {
        let listed = self
            .list_reviews(
                actor,
                ListQuery {
                    limit: Some(TAG_SOURCES),
                    ..ListQuery::default()
                },
            )
            .await?;
        let mut tags: Vec<String> = listed
            .reviews
            .into_iter()
            .flat_map(|review| review.tags)
            .collect();
        tags.sort();
        tags.dedup();
        Ok(tags)
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
        access::require_action(role, DocumentAction::TransferOwnership)?;
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
        access::require_action(role, DocumentAction::Delete)?;
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
