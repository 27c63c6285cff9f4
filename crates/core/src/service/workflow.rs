//! The review workflow (DESIGN.md §8.4): reviewers with due dates, decisions tied to a version,
//! finalizing and reopening, assigning a thread, and reactions.
//!
//! Reviewers, decisions, finalizing and reactions are not comment changes: they raise the
//! document's `change_seq` (so every kept rendering is stale) but never `commentsRevision`, so
//! they never conflict with the discussion. Assigning a thread is a comment change and raises
//! it. While a review is finalized every write that would raise `commentsRevision` (comments,
//! replies, edits, status, assignment) and new runs and versions are refused with 409
//! `review_finalized`, checked in the write's own transaction; decisions and reactions are not.

use docreview_api::requests::{AssigneeChange, NewDecision, NewReviewer};
use docreview_api::views::{CommentWritten, DecisionWritten, ReactionsBody, WorkflowView};

use super::accounts::normalize_email;
use super::comments::{WriteBase, one_comment_guard};
use super::{Service, check_length, retrying};
use crate::access::{self, Actor, DocumentAction, Operation};
use crate::clock::{millis_of, rfc3339};
use crate::error::{Error, Result};
use crate::model::{
    Account, DecisionRecord, Emoji, Millis, NotificationReason, Provider, ReactionRecord,
    ReviewHead, ReviewerRecord, Role, UserStatus, WebhookEventType,
};
use crate::outbox::{EventType, Notice, Sink};
use crate::store::CommentsWrite;
use crate::view::{self, Users};

/// A decision's note, like a comment's body.
const MAX_DECISION_BODY: usize = 20_000;

impl Service {
    /// `POST /api/reviews/{id}/reviewers` (editor+): asks someone who can read the document to
    /// review it; asking again changes the due date.
    pub async fn add_reviewer(
        &self,
        actor: &Actor,
        review_id: &str,
        input: NewReviewer,
    ) -> Result<WorkflowView> {
        access::permit(actor, Operation::Workflow)?;
        let due_at = input.due_at.as_deref().map(parse_due).transpose()?;
        let email = normalize_email(&input.email)?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::RequestReview)?;
        let reviewer = self.reader_by_email(&head, &email, "reviewer").await?;
        let now = self.clock.now();
        let mut event = self.event_on(EventType::ReviewRequested, actor, &head.review, now);
        event.notify.push(Notice {
            user_id: reviewer.user.id.clone(),
            reason: NotificationReason::ReviewRequested,
        });
        event.excerpt = Some(match due_at {
            Some(due) => format!("Review requested, due {}", &rfc3339(due)[..10]),
            None => "Review requested".to_string(),
        });
        let record = ReviewerRecord {
            review_id: review_id.to_string(),
            user_id: reviewer.user.id.clone(),
            requested_at: now,
            due_at,
            requested_by: actor.id().to_string(),
        };
        self.store.put_reviewer(record, vec![event.entry()]).await?;
        self.wake(Sink::Event);
        self.workflow_of(review_id).await
    }

    /// `DELETE /api/reviews/{id}/reviewers/{userId}` (editor+, or the reviewer declining).
    pub async fn remove_reviewer(
        &self,
        actor: &Actor,
        review_id: &str,
        user_id: &str,
    ) -> Result<WorkflowView> {
        access::permit(actor, Operation::Workflow)?;
        let (_, role) = self.visible(actor, review_id).await?;
        if user_id != actor.id() {
            access::require_action(role, DocumentAction::RequestReview)?;
        }
        let now = self.clock.now();
        if !self.store.remove_reviewer(review_id, user_id, now).await? {
            return Err(Error::NotFound("reviewer"));
        }
        self.workflow_of(review_id).await
    }

    /// `POST /api/reviews/{id}/decisions` (anyone who can read): the caller's decision on the
    /// latest version, replacing their earlier one.
    pub async fn decide(
        &self,
        actor: &Actor,
        review_id: &str,
        input: NewDecision,
    ) -> Result<DecisionWritten> {
        access::permit(actor, Operation::Workflow)?;
        let body = input.body.filter(|body| !body.trim().is_empty());
        if let Some(body) = &body {
            check_length("body", body, 1, MAX_DECISION_BODY)?;
        }
        let (head, _) = self.visible(actor, review_id).await?;
        self.require_latest(&head, input.version_id.as_deref())
            .await?;
        let now = self.clock.now();
        let decision = DecisionRecord {
            id: self.new_id("dec_", now),
            review_id: review_id.to_string(),
            user_id: actor.id().to_string(),
            decision: input.decision,
            version_id: head.review.latest_version_id.clone(),
            body,
            created_at: now,
        };
        let mut event = self.event_on(WebhookEventType::ReviewDecision, actor, &head.review, now);
        event.version_id = Some(decision.version_id.clone());
        event.excerpt = Some(match &decision.body {
            Some(body) => super::notifications::excerpt(&format!("{}: {body}", decision.decision)),
            None => decision.decision.to_string(),
        });
        // Guarded by the version: a version added since we read the head makes it stale (409).
        self.store
            .put_decision(decision.clone(), vec![event.entry()])
            .await?;
        self.wake(Sink::Event);
        let state = self.state_of(review_id).await?;
        let users = Users::new(&state.users);
        let workflow = view::workflow_view(&state, &users);
        let decision = view::decision_view(&decision, &users, &state.head.review.latest_version_id);
        Ok(DecisionWritten { decision, workflow })
    }

    /// `POST /api/reviews/{id}/finalize` (editor+): only with no open comment (409
    /// `open_comments_remain` with `openCount`); finalizing a finalized review is 409
    /// `invalid_transition`.
    pub async fn finalize(&self, actor: &Actor, review_id: &str) -> Result<WorkflowView> {
        self.set_finalized(actor, review_id, true).await
    }

    /// `POST /api/reviews/{id}/reopen` (editor+): the review takes writes again.
    pub async fn reopen(&self, actor: &Actor, review_id: &str) -> Result<WorkflowView> {
        self.set_finalized(actor, review_id, false).await
    }

    async fn set_finalized(
        &self,
        actor: &Actor,
        review_id: &str,
        finalize: bool,
    ) -> Result<WorkflowView> {
        access::permit(actor, Operation::Workflow)?;
        let (head, role) = self.visible(actor, review_id).await?;
        access::require_action(role, DocumentAction::Finalize)?;
        let now = self.clock.now();
        let mut outbox = Vec::new();
        if finalize {
            let event = self.event_on(WebhookEventType::ReviewFinalized, actor, &head.review, now);
            outbox.push(event.entry());
        }
        let finalized = finalize.then(|| (now, actor.id().to_string()));
        let changed = self
            .store
            .set_finalized(review_id, finalized, now, outbox)
            .await?;
        if !changed {
            return Err(Error::InvalidTransition(if finalize {
                "the review is already finalized".into()
            } else {
                "the review is not finalized".into()
            }));
        }
        if finalize {
            self.wake(Sink::Event);
        }
        self.workflow_of(review_id).await
    }

    /// `PUT …/comments/{commentId}/assignee`: hands the thread to someone who can read the
    /// document (anyone who can read it may), or to nobody; raises `commentsRevision`.
    pub async fn set_assignee(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        input: AssigneeChange,
    ) -> Result<CommentWritten> {
        access::permit(actor, Operation::Workflow)?;
        let email = input.email.as_deref().map(normalize_email).transpose()?;
        let base = WriteBase::of(input.base_comments_revision, None);
        retrying!(
            base.comments,
            async {
                let (head, _, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                let assignee = match &email {
                    Some(email) => Some(self.reader_by_email(&head, email, "assignee").await?),
                    None => None,
                };
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                let before = thread.comment.assignee_id.take();
                thread.comment.assignee_id = assignee.as_ref().map(|a| a.user.id.clone());
                let mut outbox = Vec::new();
                if let Some(assignee) = &assignee
                    && before.as_deref() != Some(assignee.id())
                {
                    let now = self.clock.now();
                    let mut event = self.comment_event(
                        EventType::CommentAssigned,
                        actor,
                        &head,
                        comment_id,
                        None,
                        now,
                    );
                    event.notify.push(Notice {
                        user_id: assignee.user.id.clone(),
                        reason: NotificationReason::Assigned,
                    });
                    outbox.push(event.entry());
                }
                let write = CommentsWrite {
                    comments: vec![thread.comment.clone()],
                    on_latest_version,
                    unchanged_thread,
                    outbox,
                    ..CommentsWrite::default()
                };
                let revision = self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await?;
                let comment = self.render(actor, &thread).await?;
                Ok(CommentWritten {
                    comment,
                    comments_revision: revision,
                    quote_matches: None,
                    unresolved_mentions: Vec::new(),
                })
            }
            .await
        )
    }

    /// `PUT`/`DELETE …/reactions/{emoji}` on a comment, or on a reply (`message_id`):
    /// idempotent; answers the item's reactions after the change. Never raises
    /// `commentsRevision`; announced as a `reactions` event.
    pub async fn react(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        message_id: Option<&str>,
        emoji: &str,
        on: bool,
    ) -> Result<ReactionsBody> {
        access::permit(actor, Operation::Workflow)?;
        let emoji = Emoji::from_word(emoji).map_err(Error::InvalidRequest)?;
        self.visible(actor, review_id).await?;
        let reaction = ReactionRecord {
            review_id: review_id.to_string(),
            comment_id: comment_id.to_string(),
            message_id: message_id.map(str::to_string),
            user_id: actor.id().to_string(),
            emoji,
            created_at: self.clock.now(),
        };
        match self.store.set_reaction(reaction, on).await {
            Ok(_) => {}
            Err(crate::store::StoreError::NotFound) => {
                return Err(Error::NotFound(if message_id.is_some() {
                    "reply"
                } else {
                    "comment"
                }));
            }
            Err(other) => return Err(other.into()),
        }
        let thread = self
            .store
            .comment_thread(review_id, comment_id)
            .await?
            .ok_or(Error::NotFound("comment"))?;
        let on_item: Vec<&ReactionRecord> = thread
            .reactions
            .iter()
            .filter(|r| r.message_id.as_deref() == message_id)
            .collect();
        let reactions = view::reaction_views(&on_item, actor.id());
        Ok(ReactionsBody { reactions })
    }

    /// The document's workflow as it stands now.
    async fn workflow_of(&self, review_id: &str) -> Result<WorkflowView> {
        let state = self.state_of(review_id).await?;
        let users = Users::new(&state.users);
        Ok(view::workflow_view(&state, &users))
    }

    /// The active person with `email` who can read the document, for a reviewer or assignee:
    /// 400 `invalid_request` otherwise (an unknown address and one who cannot read are told
    /// apart, as sharing and ownership transfer do: only editors of the document or readers
    /// who name an email get here).
    async fn reader_by_email(&self, head: &ReviewHead, email: &str, what: &str) -> Result<Account> {
        let account = self
            .store
            .account_by_email(email)
            .await?
            .filter(|account| {
                account.status == UserStatus::Active && account.user.provider != Provider::Service
            })
            .ok_or_else(|| {
                Error::invalid(format!(
                    "{email} is not an active member; a {what} must be one"
                ))
            })?;
        let project_role = match &head.review.project_code {
            Some(code) => self.store.project_role(code, account.id()).await?,
            None => None,
        };
        match access::account_role(&account, head, project_role) {
            Some(role) if role >= Role::Viewer => Ok(account),
            _ => Err(Error::invalid(format!(
                "{email} cannot read this document; share it with them first"
            ))),
        }
    }
}

/// A due date: an RFC 3339 time, or a date (the end of that day, UTC).
fn parse_due(text: &str) -> Result<Millis> {
    let refusal = || {
        Error::invalid(format!(
            "dueAt `{text}` is neither an RFC 3339 time nor a date such as 2026-12-01"
        ))
    };
    if let Some(at) = millis_of(text) {
        return Ok(at);
    }
    let is_date = text.len() == 10 && text.chars().filter(|c| *c == '-').count() == 2;
    if is_date {
        return millis_of(&format!("{text}T23:59:59.999Z")).ok_or_else(refusal);
    }
    Err(refusal())
}

#[cfg(test)]
mod tests {
    use super::parse_due;

    #[test]
    fn due_dates_are_times_or_whole_days() {
        assert_eq!(parse_due("1970-01-01T00:00:01Z").unwrap(), 1_000);
        assert_eq!(parse_due("1970-01-01").unwrap(), 86_399_999);
        assert!(parse_due("tomorrow").is_err());
        assert!(parse_due("1970-13-01").is_err());
        assert!(parse_due("").is_err());
    }
}
