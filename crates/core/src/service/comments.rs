//! Comments, replies, status changes and re-anchoring: every write raises `commentsRevision` by one.

use std::sync::Arc;

use docreview_api::requests::{NewComment, NewReply, Reanchor, StatusChange, TextEdit};
use docreview_api::views::{CommentView, CommentWritten, ReplyWritten, StatusWritten};

use super::notifications::new_mentions;
use super::{Service, check_base, check_length, retrying};
use crate::access::{self, Actor, Operation};
use crate::anchor::{self, Locator};
use crate::error::{Error, Result};
use crate::model::{
    Anchor, Category, CommentRecord, CommentStatus, CommentThread, MessageRecord, ReviewHead, Role,
    RunRecord, RunStatus, StatusEventRecord, WebhookEventType,
};
use crate::outbox::{EventType, Sink};
use crate::store::{CommentsWrite, ThreadGuard};
use crate::texts::VersionText;
use crate::view::{self, Users, Viewer};

pub(super) const MAX_BODY: usize = 20_000;

impl Service {
    pub async fn add_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        input: NewComment,
    ) -> Result<CommentWritten> {
        access::permit(actor, Operation::Comment)?;
        self.write_new_comment(actor, review_id, None, input).await
    }

    /// Writes a comment, optionally inside run `run_id` (which must be running on the latest version).
    pub(super) async fn write_new_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        run_id: Option<&str>,
        input: NewComment,
    ) -> Result<CommentWritten> {
        check_length("body", &input.body, 1, MAX_BODY)?;
        let base = input.base_comments_revision;
        retrying!(
            base,
            async {
                let (head, _role) = self.visible(actor, review_id).await?;
                if let Some(run_id) = run_id {
                    let run = self.running_run(review_id, run_id).await?;
                    self.require_latest(&head, Some(&run.version_id)).await?;
                }
                check_base(base, head.review.comments_revision)?;
                let (anchor, quote_matches) = self
                    .resolve_new_locator(&head, input.locator.as_ref())
                    .await?;
                let category = input.category.unwrap_or(Category::Note);
                let suggestion = input
                    .suggestion
                    .as_ref()
                    .map(|s| super::suggestions::check_suggestion(category, &anchor, &s.text))
                    .transpose()?;
                let (mentions, unresolved_mentions) =
                    self.resolve_mentions(&head, &input.body).await?;
                let now = self.clock.now();
                let comment = CommentRecord {
                    id: self.new_id("cm_", now),
                    review_id: review_id.to_string(),
                    author_id: actor.id().to_string(),
                    category,
                    status: CommentStatus::Open,
                    body: input.body.clone(),
                    version_id: head.review.latest_version_id.clone(),
                    anchor,
                    run_id: run_id.map(str::to_string),
                    created_at: now,
                    edited_at: None,
                    deleted_at: None,
                    mentions,
                    thread_revision: CommentRecord::NEW_THREAD_REVISION,
                    assignee_id: None,
                    suggestion,
                };
                let thread = CommentThread {
                    comment: comment.clone(),
                    messages: vec![],
                    events: vec![],
                    reactions: vec![],
                };
                // A run's comments are drafts until the run completes, which is its own event.
                let outbox = if run_id.is_some() {
                    vec![]
                } else {
                    let mut event = self.comment_event(
                        WebhookEventType::CommentCreated,
                        actor,
                        &head,
                        &comment.id,
                        None,
                        now,
                    );
                    event.notify = new_mentions(&[], &comment.mentions);
                    vec![event.entry()]
                };
                let revision = self
                    .commit(
                        review_id,
                        &head,
                        CommentsWrite {
                            comments: vec![comment],
                            outbox,
                            // Without a base revision only the version matters (the anchor was
                            // resolved on it), and for a run's comment that the run still runs:
                            // writers who sent no base never conflict with each other.
                            on_latest_version: base
                                .is_none()
                                .then(|| head.review.latest_version_id.clone()),
                            in_running_run: run_id.map(str::to_string),
                            ..CommentsWrite::default()
                        },
                    )
                    .await?;
                let comment = self.render(actor, &thread).await?;
                Ok(CommentWritten {
                    comment,
                    comments_revision: revision,
                    quote_matches,
                    unresolved_mentions,
                })
            }
            .await
        )
    }

    pub async fn edit_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        input: TextEdit,
    ) -> Result<CommentWritten> {
        access::permit(actor, Operation::Comment)?;
        check_length("body", &input.body, 1, MAX_BODY)?;
        let base = WriteBase::of(input.base_comments_revision, input.base_thread_revision);
        retrying!(
            base.comments,
            async {
                let (head, _, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                if thread.comment.author_id != actor.id() {
                    return Err(Error::forbidden("only the author can edit a comment"));
                }
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                let (mentions, unresolved_mentions) =
                    self.resolve_mentions(&head, &input.body).await?;
                let now = self.clock.now();
                thread.comment.body = input.body.clone();
                thread.comment.edited_at = Some(now);
                let mut event = self.comment_event(
                    WebhookEventType::CommentEdited,
                    actor,
                    &head,
                    comment_id,
                    None,
                    now,
                );
                // Only the newly mentioned are told of an edit.
                event.notify = new_mentions(&thread.comment.mentions, &mentions);
                thread.comment.mentions = mentions;
                let write = CommentsWrite {
                    comments: vec![thread.comment.clone()],
                    on_latest_version,
                    unchanged_thread,
                    outbox: vec![event.entry()],
                    ..CommentsWrite::default()
                };
                let revision = self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await?;
                Ok(CommentWritten {
                    comment: self.render(actor, &thread).await?,
                    comments_revision: revision,
                    quote_matches: None,
                    unresolved_mentions,
                })
            }
            .await
        )
    }

    /// Cancels a provisional comment; a final one is 403.
    pub async fn cancel_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        base: WriteBase,
    ) -> Result<i64> {
        access::permit(actor, Operation::Comment)?;
        retrying!(
            base.comments,
            async {
                let (head, role, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                let now = self.clock.now();
                let live_replies = thread
                    .messages
                    .iter()
                    .filter(|m| m.deleted_at.is_none())
                    .count();
                let run = self
                    .run_of(review_id, thread.comment.run_id.as_deref())
                    .await?;
                let cancellable =
                    may_cancel(run.as_ref(), &thread.comment.author_id, actor, role, || {
                        view::comment_is_provisional(
                            &thread.comment,
                            live_replies,
                            None,
                            actor.id(),
                            now,
                        )
                    });
                if !cancellable {
                    return Err(Error::forbidden(
                        "only a provisional comment can be cancelled, by its author",
                    ));
                }
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                // A run's item may be cancelled only while its run runs: checked again when
                // the write applies.
                let in_running_run = run.as_ref().map(|run| run.id.clone());
                thread.comment.deleted_at = Some(now);
                // Its notifications go with it.
                let event = self.comment_event(
                    EventType::ItemCancelled,
                    actor,
                    &head,
                    comment_id,
                    None,
                    now,
                );
                let write = CommentsWrite {
                    comments: vec![thread.comment],
                    on_latest_version,
                    unchanged_thread,
                    in_running_run,
                    outbox: vec![event.entry()],
                    ..CommentsWrite::default()
                };
                self.commit(review_id, &head, write).await
            }
            .await
        )
    }

    pub async fn reanchor_comment(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        input: Reanchor,
    ) -> Result<CommentWritten> {
        access::permit(actor, Operation::Comment)?;
        let base = WriteBase::of(input.base_comments_revision, input.base_thread_revision);
        retrying!(
            base.comments,
            async {
                let (head, role, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                if thread.comment.author_id != actor.id() {
                    access::require_role(
                        role,
                        Role::Editor,
                        "re-anchoring another person's comment",
                    )?;
                }
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                thread.comment.anchor = self.resolve_locator(&head, Some(&input.locator)).await?;
                let write = CommentsWrite {
                    comments: vec![thread.comment.clone()],
                    on_latest_version,
                    unchanged_thread,
                    ..CommentsWrite::default()
                };
                let revision = self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await?;
                Ok(CommentWritten {
                    comment: self.render(actor, &thread).await?,
                    comments_revision: revision,
                    quote_matches: None,
                    unresolved_mentions: Vec::new(),
                })
            }
            .await
        )
    }

    pub async fn reply(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        input: NewReply,
    ) -> Result<ReplyWritten> {
        access::permit(actor, Operation::Comment)?;
        check_length("body", &input.body, 1, MAX_BODY)?;
        let base = WriteBase::of(input.base_comments_revision, input.base_thread_revision);
        retrying!(
            base.comments,
            async {
                let (head, _, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                if let Some(run_id) = &input.run_id {
                    access::permit(actor, Operation::Run)?;
                    let run = self.running_run(review_id, run_id).await?;
                    self.require_latest(&head, Some(&run.version_id)).await?;
                }
                let (mentions, unresolved_mentions) =
                    self.resolve_mentions(&head, &input.body).await?;
                let now = self.clock.now();
                let message = MessageRecord {
                    id: self.new_id("msg_", now),
                    comment_id: comment_id.to_string(),
                    review_id: review_id.to_string(),
                    author_id: actor.id().to_string(),
                    body: input.body.clone(),
                    run_id: input.run_id.clone(),
                    created_at: now,
                    edited_at: None,
                    deleted_at: None,
                    mentions,
                };
                thread.messages.push(message.clone());
                let outbox = if input.run_id.is_some() {
                    vec![]
                } else {
                    let mut event = self.comment_event(
                        WebhookEventType::CommentReplied,
                        actor,
                        &head,
                        comment_id,
                        Some(&message.id),
                        now,
                    );
                    event.notify = new_mentions(&[], &message.mentions);
                    vec![event.entry()]
                };
                let write = CommentsWrite {
                    messages: vec![message.clone()],
                    outbox,
                    // As for a new comment: a reply changes no other item, so without a base
                    // revision it needs only that the version, its comment (not cancelled
                    // meanwhile) and its run, if any, still stand; writers who sent no base
                    // never conflict with each other.
                    on_latest_version: base
                        .comments
                        .is_none()
                        .then(|| head.review.latest_version_id.clone()),
                    on_live_comment: Some(comment_id.to_string()),
                    // Unless the person answers the thread as they saw it.
                    unchanged_thread: base.thread.map(|_| ThreadGuard::of(&thread.comment)),
                    in_running_run: input.run_id.clone(),
                    ..CommentsWrite::default()
                };
                let revision = match self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await
                {
                    Err(Error::NotFound(_)) => return Err(Error::NotFound("comment")),
                    other => other?,
                };
                self.reply_written(actor, &thread, &message.id, revision, unresolved_mentions)
                    .await
            }
            .await
        )
    }

    pub async fn edit_reply(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        message_id: &str,
        input: TextEdit,
    ) -> Result<ReplyWritten> {
        access::permit(actor, Operation::Comment)?;
        check_length("body", &input.body, 1, MAX_BODY)?;
        let base = WriteBase::of(input.base_comments_revision, input.base_thread_revision);
        retrying!(
            base.comments,
            async {
                let (head, _, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                let message = live_message(&mut thread, message_id)?;
                if message.author_id != actor.id() {
                    return Err(Error::forbidden("only the author can edit a reply"));
                }
                let (mentions, unresolved_mentions) =
                    self.resolve_mentions(&head, &input.body).await?;
                let now = self.clock.now();
                message.body.clone_from(&input.body);
                message.edited_at = Some(now);
                let mut event = self.comment_event(
                    WebhookEventType::CommentEdited,
                    actor,
                    &head,
                    comment_id,
                    Some(message_id),
                    now,
                );
                event.notify = new_mentions(&message.mentions, &mentions);
                message.mentions = mentions;
                let write = CommentsWrite {
                    messages: vec![message.clone()],
                    on_latest_version,
                    unchanged_thread,
                    outbox: vec![event.entry()],
                    ..CommentsWrite::default()
                };
                let revision = self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await?;
                self.reply_written(actor, &thread, message_id, revision, unresolved_mentions)
                    .await
            }
            .await
        )
    }

    /// Cancels a provisional reply; a final one is 403.
    pub async fn cancel_reply(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        message_id: &str,
        base: WriteBase,
    ) -> Result<i64> {
        access::permit(actor, Operation::Comment)?;
        retrying!(
            base.comments,
            async {
                let (head, role, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                let now = self.clock.now();
                let replied_after = {
                    let target = thread
                        .messages
                        .iter()
                        .find(|m| m.id == message_id && m.deleted_at.is_none());
                    let target = target.ok_or(Error::NotFound("reply"))?;
                    thread.messages.iter().any(|m| {
                        m.deleted_at.is_none()
                            && m.id != target.id
                            && (m.created_at, &m.id) > (target.created_at, &target.id)
                    })
                };
                let message = live_message(&mut thread, message_id)?;
                let run = self.run_of(review_id, message.run_id.as_deref()).await?;
                let cancellable = may_cancel(run.as_ref(), &message.author_id, actor, role, || {
                    view::message_is_provisional(message, replied_after, None, actor.id(), now)
                });
                if !cancellable {
                    return Err(Error::forbidden(
                        "only a provisional reply can be cancelled, by its author",
                    ));
                }
                message.deleted_at = Some(now);
                let event = self.comment_event(
                    EventType::ItemCancelled,
                    actor,
                    &head,
                    comment_id,
                    Some(message_id),
                    now,
                );
                let write = CommentsWrite {
                    messages: vec![message.clone()],
                    on_latest_version,
                    unchanged_thread,
                    // A run's item may be cancelled only while its run runs.
                    in_running_run: run.as_ref().map(|run| run.id.clone()),
                    outbox: vec![event.entry()],
                    ..CommentsWrite::default()
                };
                self.commit(review_id, &head, write).await
            }
            .await
        )
    }

    /// Resolves (`closed`) or reopens (`open`) a comment, recording a status event.
    pub async fn set_status(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        input: StatusChange,
    ) -> Result<StatusWritten> {
        access::permit(actor, Operation::Comment)?;
        let base = WriteBase::of(input.base_comments_revision, input.base_thread_revision);
        retrying!(
            base.comments,
            async {
                let (head, _, mut thread) =
                    self.live_thread(actor, review_id, comment_id, base).await?;
                if thread.comment.status == input.status {
                    let refusal = Error::InvalidTransition(format!(
                        "the comment is already {}",
                        input.status
                    ));
                    return Err(self.refusal_at(review_id, &head, refusal).await);
                }
                let (on_latest_version, unchanged_thread) = one_comment_guard(base, &head, &thread);
                let event = StatusEventRecord {
                    comment_id: comment_id.to_string(),
                    seq: thread.events.iter().map(|e| e.seq).max().unwrap_or(0) + 1,
                    status: input.status,
                    by_id: actor.id().to_string(),
                    ts: self.clock.now(),
                    reason: None,
                    version_id: None,
                };
                thread.comment.status = input.status;
                thread.events.push(event.clone());
                let announced = self.comment_event(
                    WebhookEventType::CommentStatusChanged,
                    actor,
                    &head,
                    comment_id,
                    None,
                    event.ts,
                );
                let write = CommentsWrite {
                    comments: vec![thread.comment.clone()],
                    events: vec![event.clone()],
                    on_latest_version,
                    unchanged_thread,
                    outbox: vec![announced.entry()],
                    ..CommentsWrite::default()
                };
                let revision = self
                    .commit_to_thread(review_id, &head, &mut thread, write)
                    .await?;
                let comment = self.render(actor, &thread).await?;
                let event = comment
                    .status_events
                    .iter()
                    .find(|e| e.seq == event.seq)
                    .cloned()
                    .ok_or_else(|| {
                        Error::Internal("the new status event is missing from its comment".into())
                    })?;
                Ok(StatusWritten {
                    comment,
                    event,
                    comments_revision: revision,
                })
            }
            .await
        )
    }

    /// A rule's refusal, checked against the state the caller's base revision named: the
    /// comment was read after the head, so if the revision moved meanwhile the rule saw a newer
    /// state than `head`, and the honest answer is the conflict (with the current revision).
    async fn refusal_at(&self, review_id: &str, head: &ReviewHead, refusal: Error) -> Error {
        match self.store.review_head(review_id).await {
            Ok(Some(now)) if now.review.comments_revision != head.review.comments_revision => {
                Error::RevisionConflict {
                    current: now.review.comments_revision,
                }
            }
            _ => refusal,
        }
    }

    /// Loads a visible, non-deleted comment after checking the base revision.
    pub(super) async fn live_thread(
        &self,
        actor: &Actor,
        review_id: &str,
        comment_id: &str,
        base: WriteBase,
    ) -> Result<(ReviewHead, Role, CommentThread)> {
        let (head, role) = self.visible(actor, review_id).await?;
        check_base(base.comments, head.review.comments_revision)?;
        let thread = self
            .store
            .comment_thread(review_id, comment_id)
            .await?
            .filter(|thread| thread.comment.deleted_at.is_none())
            .ok_or(Error::NotFound("comment"))?;
        match base.thread {
            Some(seen) if seen != thread.comment.thread_revision => Err(Error::ThreadConflict {
                current: thread.comment.thread_revision,
            }),
            _ => Ok((head, role, thread)),
        }
    }

    /// Applies a write guarded by the revision `head` was read at; returns the new revision.
    pub(super) async fn commit(
        &self,
        review_id: &str,
        head: &ReviewHead,
        write: CommentsWrite,
    ) -> Result<i64> {
        let write = CommentsWrite {
            expected_revision: head.review.comments_revision,
            at: self.clock.now(),
            ..write
        };
        let announces = !write.outbox.is_empty();
        let revision = self.store.write_comments(review_id, write).await?;
        if announces {
            self.wake(Sink::Event);
        }
        Ok(revision)
    }

    /// Applies a write to `thread` (see `commit`), and brings the thread's revision to what the
    /// write left: the store raises it by one for each thread a write changes.
    pub(super) async fn commit_to_thread(
        &self,
        review_id: &str,
        head: &ReviewHead,
        thread: &mut CommentThread,
        write: CommentsWrite,
    ) -> Result<i64> {
        let revision = self.commit(review_id, head, write).await?;
        thread.comment.thread_revision += 1;
        Ok(revision)
    }

    /// Resolves a new comment's locator, and says how many places its quote could mean when
    /// nothing disambiguated it and it occurs more than once.
    async fn resolve_new_locator(
        &self,
        head: &ReviewHead,
        locator: Option<&Locator>,
    ) -> Result<(Anchor, Option<usize>)> {
        let text = self.latest_text(head).await?;
        let anchor = self.resolve_on(head, locator, &text).await?;
        let matches = locator.and_then(|locator| anchor::unguided_matches(locator, &text));
        Ok((anchor, matches))
    }

    pub(super) async fn resolve_locator(
        &self,
        head: &ReviewHead,
        locator: Option<&Locator>,
    ) -> Result<Anchor> {
        let text = self.latest_text(head).await?;
        self.resolve_on(head, locator, &text).await
    }

    /// The text of the document's latest version (what new anchors point into).
    pub(super) async fn latest_text(&self, head: &ReviewHead) -> Result<Arc<VersionText>> {
        let review = &head.review;
        self.version_text(
            &review.id,
            &review.latest_version_id,
            &review.latest_source_hash,
        )
        .await
    }

    async fn resolve_on(
        &self,
        head: &ReviewHead,
        locator: Option<&Locator>,
        text: &VersionText,
    ) -> Result<Anchor> {
        let review = &head.review;
        let locator = locator.cloned().unwrap_or_default();
        self.require_latest(head, locator.version_id.as_deref())
            .await?;
        anchor::resolve(
            &locator,
            &review.latest_version_id,
            text,
            review.structure.as_deref(),
        )
    }

    pub(super) async fn running_run(&self, review_id: &str, run_id: &str) -> Result<RunRecord> {
        let run = self
            .store
            .run(review_id, run_id)
            .await?
            .ok_or(Error::NotFound("run"))?;
        if run.status != RunStatus::Running {
            return Err(Error::InvalidTransition(format!(
                "the run is {}, not running",
                run.status
            )));
        }
        Ok(run)
    }

    async fn run_of(&self, review_id: &str, run_id: Option<&str>) -> Result<Option<RunRecord>> {
        match run_id {
            Some(run_id) => Ok(self.store.run(review_id, run_id).await?),
            None => Ok(None),
        }
    }

    /// Renders one thread for the caller, loading the users and runs it mentions.
    pub(super) async fn render(
        &self,
        actor: &Actor,
        thread: &CommentThread,
    ) -> Result<CommentView> {
        let mut ids: Vec<String> = std::iter::once(thread.comment.author_id.clone())
            .chain(thread.comment.assignee_id.clone())
            .chain(thread.messages.iter().map(|m| m.author_id.clone()))
            .chain(thread.events.iter().map(|e| e.by_id.clone()))
            .collect();
        ids.sort();
        ids.dedup();
        let users = self.store.users(&ids).await?;
        let mut runs = Vec::new();
        let run_ids = thread
            .comment
            .run_id
            .iter()
            .chain(thread.messages.iter().filter_map(|m| m.run_id.as_ref()));
        for run_id in run_ids {
            if let Some(run) = self.store.run(&thread.comment.review_id, run_id).await? {
                runs.push(run);
            }
        }
        let run_status = |id: &str| runs.iter().find(|run| run.id == id).map(|run| run.status);
        let viewer = Viewer {
            user_id: actor.id(),
            reactor: actor.id(),
            now: self.clock.now(),
            include_deleted: false,
        };
        Ok(view::comment_view(
            thread,
            &Users::new(&users),
            &run_status,
            &viewer,
        ))
    }

    async fn reply_written(
        &self,
        actor: &Actor,
        thread: &CommentThread,
        message_id: &str,
        revision: i64,
        unresolved_mentions: Vec<String>,
    ) -> Result<ReplyWritten> {
        let comment = self.render(actor, thread).await?;
        let message = comment
            .thread
            .iter()
            .find(|m| m.id == message_id)
            .cloned()
            .ok_or_else(|| Error::Internal("the reply is missing from its thread".into()))?;
        Ok(ReplyWritten {
            comment,
            message,
            comments_revision: revision,
            unresolved_mentions,
        })
    }
}

fn live_message<'a>(
    thread: &'a mut CommentThread,
    message_id: &str,
) -> Result<&'a mut MessageRecord> {
    thread
        .messages
        .iter_mut()
        .find(|m| m.id == message_id && m.deleted_at.is_none())
        .ok_or(Error::NotFound("reply"))
}

/// What a write to one existing comment was based on: the document's `commentsRevision`
/// and the thread's `threadRevision` as the client read them, each optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteBase {
    pub comments: Option<i64>,
    pub thread: Option<i64>,
}

impl WriteBase {
    pub fn of(comments: Option<i64>, thread: Option<i64>) -> WriteBase {
        WriteBase { comments, thread }
    }
}

impl ThreadGuard {
    /// The guard that `comment`'s thread is still as it was read.
    fn of(comment: &CommentRecord) -> ThreadGuard {
        ThreadGuard {
            comment_id: comment.id.clone(),
            thread_revision: comment.thread_revision,
        }
    }
}

/// The guard of a write to one existing comment: the caller's base revision when one was sent;
/// else only that the comment's thread is as it was read and the version is still the latest,
/// so writers without a base conflict (and retry, or with a thread base are refused) only over
/// the same thread, never because other comments of the document changed (DESIGN.md §4.4).
pub(super) fn one_comment_guard(
    base: WriteBase,
    head: &ReviewHead,
    thread: &CommentThread,
) -> (Option<String>, Option<ThreadGuard>) {
    match base.comments {
        Some(_) => (None, None),
        None => (
            Some(head.review.latest_version_id.clone()),
            Some(ThreadGuard::of(&thread.comment)),
        ),
    }
}

/// Whether `actor` may cancel an item by `author_id`: in a run, only while it runs, by the
/// item's author, the run's starter or an editor; outside runs, only while `provisional` (the
/// author's ten minutes before anyone answers, DESIGN.md §4.4).
fn may_cancel(
    run: Option<&RunRecord>,
    author_id: &str,
    actor: &Actor,
    role: Role,
    provisional: impl FnOnce() -> bool,
) -> bool {
    match run {
        Some(run) => {
            run.status == RunStatus::Running
                && (author_id == actor.id() || run.created_by == actor.id() || role >= Role::Editor)
        }
        None => provisional(),
    }
}
