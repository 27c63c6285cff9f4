//! Agent runs: their comments stay provisional until the run completes, and vanish if it fails.

use docreview_api::requests::*;
use docreview_api::views::*;

use super::{Service, check_base, check_length, retrying};
use crate::access::{self, Actor, Operation};
use crate::error::{Error, Result};
use crate::ids::new_id;
use crate::model::{Role, RunKind, RunRecord, RunStatus};
use crate::store::CommentsWrite;
use crate::view::{self, RunView};

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
        self.require_latest(&head, input.version_id.as_deref())
            .await?;
        let now = self.clock.now();
        let run = RunRecord {
            id: new_id("run_", now),
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

    /// Finishes a running run. Completing makes its items final; failing or cancelling deletes them.
    /// Either way the items change, so this is one comment change (`commentsRevision` + 1).
    pub async fn finish_run(
        &self,
        actor: &Actor,
        review_id: &str,
        run_id: &str,
        input: FinishRun,
    ) -> Result<RunView> {
        access::permit(actor, Operation::Run)?;
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
                .finish(&review_id, &run_id, RunStatus::Failed, summary, None)
                .await
            {
                Ok(_) => expired += 1,
                Err(Error::InvalidTransition(_) | Error::NotFound(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(expired)
    }

    async fn finish(
        &self,
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
                    ..CommentsWrite::default()
                };
                let mut kept = Vec::new();
                if status == RunStatus::Completed {
                    kept = comments.into_iter().map(|c| c.id).collect();
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
