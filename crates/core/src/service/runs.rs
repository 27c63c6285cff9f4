//! Agent runs: their comments stay provisional until the run completes, and vanish if it fails.

use docreview_api::BatchItemError;
use docreview_api::requests::{
    BatchComment, BatchItem, FinishRun, MAX_BATCH_COMMENTS, NewComment, NewRunComments, StartRun,
};
use docreview_api::views::{
    BatchFailure, BatchWritten, CommentWritten, RunCommentsWritten, RunView,
};

use super::comments::MAX_BODY;
use super::{Service, check_base, check_length, retrying};
use crate::access::{self, Actor, Operation};
use crate::anchor::{self, QuoteTrouble};
use crate::error::{Error, Result};
use crate::model::{
    Anchor, Category, CommentRecord, CommentStatus, CommentThread, ReviewHead, Role, RunKind,
    RunRecord, RunStatus, WebhookEventType,
};
use crate::store::CommentsWrite;
use crate::texts::VersionText;
use crate::view::{self, Users, Viewer};

/// A run left running this long is failed by the sweeper.
pub const RUN_TIMEOUT_MS: i64 = 24 * 60 * 60 * 1000;

impl Service {
    pub async fn start_run(
        &self,
        actor: &Actor,
        review_id: &str,
        input: StartRun,
    ) -> Result<RunView> {
        access::permit(actor, Operation::Run)?;
        let title = input.title.unwrap_or_else(|| "AI review".to_string());
        check_length("title", &title, 1, 300)?;
        let (head, _) = self.visible(actor, review_id).await?;
        if head.review.finalized.is_some() {
            return Err(Error::ReviewFinalized);
        }
        self.require_latest(&head, input.version_id.as_deref())
            .await?;
        let now = self.clock.now();
        let run = RunRecord {
            id: self.new_id("run_", now),
            review_id: review_id.to_string(),
            kind: input.kind.unwrap_or(RunKind::AiReview),
            status: RunStatus::Running,
            title,
            version_id: head.review.latest_version_id.clone(),
            summary: None,
            created_by: actor.id().to_string(),
            created_at: now,
            completed_at: None,
        };
        self.store.insert_run(run.clone()).await?;
        Ok(view::run_view(&run, Vec::new()))
    }

    pub async fn add_run_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        run_id: &str,
        input: NewComment,
    ) -> Result<CommentWritten> {
        access::permit(actor, Operation::Run)?;
        self.write_new_comment(actor, review_id, Some(run_id), input)
            .await
    }

    /// Writes a batch of comments in a run: every item is checked and anchored first; those
    /// that pass are written in one step (one `commentsRevision` bump), those that fail come
    /// back with why. With `atomic`, one failure writes nothing.
    pub async fn add_run_comments(
        &self,
        actor: &Actor,
        review_id: &str,
        run_id: &str,
        input: NewRunComments,
    ) -> Result<RunCommentsWritten> {
        access::permit(actor, Operation::Run)?;
        let count = input.comments.len();
        if !(1..=MAX_BATCH_COMMENTS).contains(&count) {
            return Err(Error::invalid(format!(
                "comments must hold 1 to {MAX_BATCH_COMMENTS} items (got {count})"
            )));
        }
        let base = input.base_comments_revision;
        retrying!(
            base,
            async {
                let (head, _) = self.visible(actor, review_id).await?;
                let run = self.running_run(review_id, run_id).await?;
                self.require_latest(&head, Some(&run.version_id)).await?;
                check_base(base, head.review.comments_revision)?;
                let text = self.latest_text(&head).await?;
                let now = self.clock.now();
                let mut indexes = Vec::new();
                let mut comments = Vec::new();
                let mut failed = Vec::new();
                for (index, item) in input.comments.iter().enumerate() {
                    match batch_item(index, item, &head, &text) {
                        Ok((category, anchor, body, suggestion)) => {
                            indexes.push(index);
                            comments.push(CommentRecord {
                                id: self.new_id("cm_", now),
                                review_id: review_id.to_string(),
                                author_id: actor.id().to_string(),
                                category,
                                status: CommentStatus::Open,
                                body,
                                version_id: head.review.latest_version_id.clone(),
                                anchor,
                                run_id: Some(run_id.to_string()),
                                created_at: now,
                                edited_at: None,
                                deleted_at: None,
                                // A run's batch is not scanned for mentions: agents' drafts
                                // notify their document's owner when the run completes.
                                mentions: Vec::new(),
                                thread_revision: CommentRecord::NEW_THREAD_REVISION,
                                assignee_id: None,
                                suggestion,
                            });
                        }
                        Err(failure) => failed.push(failure),
                    }
                }
                if input.atomic && !failed.is_empty() {
                    return Err(Error::BatchRejected(failed));
                }
                if comments.is_empty() {
                    return Ok(RunCommentsWritten {
                        written: Vec::new(),
                        failed,
                        comments_revision: head.review.comments_revision,
                    });
                }
                let write = CommentsWrite {
                    comments: comments.clone(),
                    // As for one comment: without a base revision only the version and the
                    // run's state matter, so concurrent batches never conflict.
                    on_latest_version: base
                        .is_none()
                        .then(|| head.review.latest_version_id.clone()),
                    in_running_run: Some(run_id.to_string()),
                    ..CommentsWrite::default()
                };
                let revision = self.commit(review_id, &head, write).await?;
                let users = self.store.users(&[actor.id().to_string()]).await?;
                let users = Users::new(&users);
                let viewer = Viewer {
                    user_id: actor.id(),
                    reactor: actor.id(),
                    now,
                    include_deleted: false,
                };
                let running = |_: &str| Some(RunStatus::Running);
                let written = indexes
                    .into_iter()
                    .zip(comments)
                    .map(|(index, comment)| {
                        let thread = CommentThread {
                            comment,
                            messages: Vec::new(),
                            events: Vec::new(),
                            reactions: Vec::new(),
                        };
                        BatchWritten {
                            index,
                            comment: view::comment_view(&thread, &users, &running, &viewer),
                        }
                    })
                    .collect();
                Ok(RunCommentsWritten {
                    written,
                    failed,
                    comments_revision: revision,
                })
            }
            .await
        )
    }

    /// Finishes a running run. Completing makes its items final; failing or cancelling deletes them.
    /// Either way the items change, so this is one comment change (`commentsRevision` + 1).
    pub async fn finish_run(
        &self,
        actor: &Actor,
        review_id: &str,
        run_id: &str,
        input: FinishRun,
    ) -> Result<RunView> {
        // Cancelling is the one finish a person may make (from the web app's Runs menu).
        let operation = if input.status == RunStatus::Cancelled {
            Operation::StopRun
        } else {
            Operation::Run
        };
        access::permit(actor, operation)?;
        if input.status == RunStatus::Running {
            return Err(Error::invalid(
                "status must be completed, failed or cancelled",
            ));
        }
        if let Some(summary) = &input.summary {
            check_length("summary", summary, 0, 20_000)?;
        }
        let (_, role) = self.visible(actor, review_id).await?;
        let run = self
            .store
            .run(review_id, run_id)
            .await?
            .ok_or(Error::NotFound("run"))?;
        if run.created_by != actor.id() {
            access::require_role(role, Role::Editor, "finishing another caller's run")?;
        }
        self.finish(
            Some(actor),
            review_id,
            run_id,
            input.status,
            input.summary,
            input.base_comments_revision,
        )
        .await
    }

    /// Fails runs that have been running for more than a day; returns how many.
    pub async fn expire_stale_runs(&self) -> Result<usize> {
        let cutoff = self.clock.now() - RUN_TIMEOUT_MS;
        let stale = self.store.running_runs_before(cutoff).await?;
        let mut expired = 0;
        for (review_id, run_id) in stale {
            let summary = Some("failed: still running 24 hours after it started".to_string());
            match self
                .finish(None, &review_id, &run_id, RunStatus::Failed, summary, None)
                .await
            {
                Ok(_) => expired += 1,
                Err(Error::InvalidTransition(_) | Error::NotFound(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(expired)
    }

    /// Finishes a run, by `actor` (none when the system fails a stale run).
    async fn finish(
        &self,
        actor: Option<&Actor>,
        review_id: &str,
        run_id: &str,
        status: RunStatus,
        summary: Option<String>,
        base: Option<i64>,
    ) -> Result<RunView> {
        retrying!(
            base,
            async {
                let head = self
                    .store
                    .review_head(review_id)
                    .await?
                    .ok_or(Error::NotFound("document"))?;
                check_base(base, head.review.comments_revision)?;
                let mut run = self.running_run(review_id, run_id).await?;
                let now = self.clock.now();
                run.status = status;
                run.summary = summary.clone().or(run.summary);
                run.completed_at = Some(now);
                let (mut comments, mut messages) = self.store.run_items(review_id, run_id).await?;
                comments.retain(|c| c.deleted_at.is_none());
                messages.retain(|m| m.deleted_at.is_none());
                // Completing needs no item written: run items are provisional only while
                // their run runs. Failing or cancelling deletes them.
                let mut write = CommentsWrite {
                    runs: vec![run.clone()],
                    // A run started before the review was finalized may still finish.
                    even_if_finalized: true,
                    ..CommentsWrite::default()
                };
                let mut kept = Vec::new();
                if status == RunStatus::Completed {
                    kept = comments.into_iter().map(|c| c.id).collect();
                    if let Some(actor) = actor {
                        let mut event =
                            self.event_on(WebhookEventType::RunCompleted, actor, &head.review, now);
                        event.run_id = Some(run.id.clone());
                        write.outbox.push(event.entry());
                    }
                } else {
                    for comment in &mut comments {
                        comment.deleted_at = Some(now);
                    }
                    for message in &mut messages {
                        message.deleted_at = Some(now);
                    }
                    write.comments = comments;
                    write.messages = messages;
                }
                self.commit(review_id, &head, write).await?;
                Ok(view::run_view(&run, kept))
            }
            .await
        )
    }
}

/// Checks item `index` of a batch and anchors it on the latest version, or says why not.
fn batch_item(
    index: usize,
    item: &BatchItem,
    head: &ReviewHead,
    text: &VersionText,
) -> std::result::Result<(Category, Anchor, String, Option<String>), BatchFailure> {
    let failure = |trouble: QuoteTrouble| BatchFailure {
        index,
        error: trouble.error,
        message: trouble.message,
        candidates: trouble.candidates,
    };
    let invalid = |message: String| BatchFailure {
        index,
        error: BatchItemError::InvalidRequest,
        message,
        candidates: Vec::new(),
    };
    let item = match item {
        BatchItem::Comment(comment) => comment,
        BatchItem::Unreadable { reason, .. } => {
            return Err(invalid(format!("not a comment: {reason}")));
        }
    };
    if let Some(field) = field_with_nul(item) {
        return Err(invalid(format!("{field} must not contain NUL characters")));
    }
    check_length("body", &item.body, 1, MAX_BODY).map_err(|e| invalid(e.to_string()))?;
    let category = match item.category.as_deref() {
        None => Category::Note,
        Some(word) => Category::from_word(word).map_err(invalid)?,
    };
    let locator = item.locator.clone().unwrap_or_default();
    let latest = &head.review.latest_version_id;
    if let Some(version_id) = locator.version_id.as_deref()
        && version_id != latest
    {
        return Err(invalid(format!(
            "locator.versionId `{version_id}` is not the run's version (the latest, `{latest}`)"
        )));
    }
    if let Some(trouble) = anchor::quote_trouble(&locator, text) {
        return Err(failure(trouble));
    }
    let anchor = anchor::resolve(&locator, latest, text, head.review.structure.as_deref())
        .map_err(|e| invalid(e.to_string()))?;
    let suggestion = item
        .suggestion
        .as_ref()
        .map(|s| super::suggestions::check_suggestion(category, &anchor, &s.text))
        .transpose()
        .map_err(|e| invalid(e.to_string()))?;
    Ok((category, anchor, item.body.clone(), suggestion))
}

/// The first text field of a batch item that holds NUL, which no field accepts (the batch reads
/// its items one by one, so such an item fails alone).
fn field_with_nul(item: &BatchComment) -> Option<&'static str> {
    let has_nul = |text: &str| text.contains('\0');
    let locator = item.locator.as_ref();
    let quote = locator.and_then(|l| l.quote.as_ref());
    [
        ("body", has_nul(&item.body)),
        ("category", item.category.as_deref().is_some_and(has_nul)),
        (
            "locator.versionId",
            locator
                .and_then(|l| l.version_id.as_deref())
                .is_some_and(has_nul),
        ),
        (
            "locator.sectionId",
            locator
                .and_then(|l| l.section_id.as_deref())
                .is_some_and(has_nul),
        ),
        (
            "locator.quote.exact",
            quote.is_some_and(|q| has_nul(&q.exact)),
        ),
        (
            "locator.quote.prefix",
            quote.is_some_and(|q| has_nul(&q.prefix)),
        ),
        (
            "locator.quote.suffix",
            quote.is_some_and(|q| has_nul(&q.suffix)),
        ),
        (
            "suggestion.text",
            item.suggestion.as_ref().is_some_and(|s| has_nul(&s.text)),
        ),
    ]
    .into_iter()
    .find_map(|(field, found)| found.then_some(field))
}
