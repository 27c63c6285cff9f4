//! The JSON shapes the API returns, built from records for one caller at one moment
//! (the `provisional` flag and `role` depend on who asks, and when).

use std::collections::HashMap;

use docreview_api::views::{
    AccessView, CommentView, EventView, MessageView, ProjectLinkView, ReviewView, RunView,
    SourceView, VersionView,
};

use crate::clock::rfc3339;
use crate::model::{
    CommentRecord, CommentThread, MessageRecord, Millis, ProjectRecord, ProjectRole, Provider,
    ReviewState, Role, RunRecord, RunStatus, StatusEventRecord, User, VersionRecord,
};

/// A human comment or reply can be cancelled by its author for this long after writing it.
pub const UNDO_WINDOW_MS: Millis = 10 * 60 * 1000;

/// `_project` of a document linked to `project`, for a caller holding `role` in it.
pub fn project_link(project: &ProjectRecord, role: Option<ProjectRole>) -> ProjectLinkView {
    {
        ProjectLinkView {
            code: project.code.clone(),
            name: project.name.clone(),
            company: project.company.clone(),
            status: project_status(project).to_string(),
            in_snapshot: project.in_snapshot,
            role,
        }
    }
}

/// A project's `status` word.
pub fn project_status(project: &ProjectRecord) -> &'static str {
    if project.active { "active" } else { "inactive" }
}

/// Who is looking, and when: the inputs of every per-caller field.
pub struct Viewer<'a> {
    pub user_id: &'a str,
    pub now: Millis,
    pub include_deleted: bool,
}

/// Resolves user ids to the public `User`, tolerating ids whose account is gone.
pub struct Users<'a>(HashMap<&'a str, &'a User>);

impl<'a> Users<'a> {
    pub fn new(users: impl IntoIterator<Item = &'a User>) -> Self {
        Users(
            users
                .into_iter()
                .map(|user| (user.id.as_str(), user))
                .collect(),
        )
    }

    pub fn get(&self, id: &str) -> User {
        self.0.get(id).map_or_else(
            || User {
                id: id.to_string(),
                provider: Provider::Local,
                display_name: "(unknown user)".into(),
                handle: String::new(),
            },
            |user| (*user).clone(),
        )
    }
}

/// Whether a comment is still provisional for `viewer` (DESIGN.md §4.4): inside a running run,
/// for everyone; a human comment, for its author during the undo window while nobody replied.
pub fn comment_is_provisional(
    comment: &CommentRecord,
    live_replies: usize,
    run_status: Option<RunStatus>,
    viewer_id: &str,
    now: Millis,
) -> bool {
    if comment.deleted_at.is_some() {
        return false;
    }
    match comment.run_id {
        Some(_) => run_status == Some(RunStatus::Running),
        None => {
            comment.author_id == viewer_id
                && now - comment.created_at < UNDO_WINDOW_MS
                && live_replies == 0
        }
    }
}

/// The same rule for a reply; "nobody replied" means no later live reply in the thread.
pub fn message_is_provisional(
    message: &MessageRecord,
    replied_after: bool,
    run_status: Option<RunStatus>,
    viewer_id: &str,
    now: Millis,
) -> bool {
    if message.deleted_at.is_some() {
        return false;
    }
    match message.run_id {
        Some(_) => run_status == Some(RunStatus::Running),
        None => {
            message.author_id == viewer_id
                && now - message.created_at < UNDO_WINDOW_MS
                && !replied_after
        }
    }
}

/// Renders one comment thread. `run_status` looks up the status of a run by id.
pub fn comment_view(
    thread: &CommentThread,
    users: &Users<'_>,
    run_status: &dyn Fn(&str) -> Option<RunStatus>,
    viewer: &Viewer<'_>,
) -> CommentView {
    let messages: Vec<&MessageRecord> = thread.messages.iter().collect();
    let events: Vec<&StatusEventRecord> = thread.events.iter().collect();
    thread_view(
        &thread.comment,
        &messages,
        &events,
        users,
        run_status,
        viewer,
    )
}

/// Renders a comment from borrowed parts, so a whole review renders without copying records.
fn thread_view(
    comment: &CommentRecord,
    messages: &[&MessageRecord],
    events: &[&StatusEventRecord],
    users: &Users<'_>,
    run_status: &dyn Fn(&str) -> Option<RunStatus>,
    viewer: &Viewer<'_>,
) -> CommentView {
    let by_time =
        |a: &&MessageRecord, b: &&MessageRecord| (a.created_at, &a.id).cmp(&(b.created_at, &b.id));
    let mut live: Vec<&MessageRecord> = messages
        .iter()
        .copied()
        .filter(|m| m.deleted_at.is_none())
        .collect();
    live.sort_by(by_time);
    let mut shown: Vec<&MessageRecord> = if viewer.include_deleted {
        messages.to_vec()
    } else {
        live.clone()
    };
    shown.sort_by(by_time);
    let last_live = live.last().map(|m| m.id.as_str());
    let thread_views = shown
        .into_iter()
        .map(|message| MessageView {
            id: message.id.clone(),
            author: users.get(&message.author_id),
            body: message.body.clone(),
            created_ts: rfc3339(message.created_at),
            edited_ts: message.edited_at.map(rfc3339),
            deleted_ts: message.deleted_at.map(rfc3339),
            provisional: message_is_provisional(
                message,
                last_live.is_some_and(|last| last != message.id),
                message.run_id.as_deref().and_then(run_status),
                viewer.user_id,
                viewer.now,
            ),
            run_id: message.run_id.clone(),
            mentions: message.mentions.clone(),
        })
        .collect();
    let mut events = events.to_vec();
    events.sort_by_key(|event| event.seq);
    CommentView {
        id: comment.id.clone(),
        author: users.get(&comment.author_id),
        category: comment.category,
        status: comment.status,
        body: comment.body.clone(),
        anchor: (&comment.anchor).into(),
        thread: thread_views,
        status_events: events
            .into_iter()
            .map(|event| EventView {
                seq: event.seq,
                status: event.status,
                by: users.get(&event.by_id),
                ts: rfc3339(event.ts),
            })
            .collect(),
        version_id: comment.version_id.clone(),
        created_ts: rfc3339(comment.created_at),
        edited_ts: comment.edited_at.map(rfc3339),
        deleted_ts: comment.deleted_at.map(rfc3339),
        provisional: comment_is_provisional(
            comment,
            live.len(),
            comment.run_id.as_deref().and_then(run_status),
            viewer.user_id,
            viewer.now,
        ),
        run_id: comment.run_id.clone(),
        mentions: comment.mentions.clone(),
        thread_revision: comment.thread_revision,
    }
}

pub fn run_view(run: &RunRecord, comment_ids: Vec<String>) -> RunView {
    RunView {
        id: run.id.clone(),
        kind: run.kind,
        status: run.status,
        title: run.title.clone(),
        version_id: run.version_id.clone(),
        comment_ids,
        summary: run.summary.clone(),
        created_ts: rfc3339(run.created_at),
        completed_ts: run.completed_at.map(rfc3339),
    }
}

pub fn version_view(version: &VersionRecord) -> VersionView {
    VersionView {
        version_id: version.id.clone(),
        label: version.label.clone(),
        created_at: version.created_at,
        source_hash: version.source_hash.clone(),
    }
}

/// Renders a whole review for one caller, who holds `role` on it and sees `project` as its
/// `_project`.
pub fn review_view(
    state: &ReviewState,
    role: Role,
    project: Option<ProjectLinkView>,
    viewer: &Viewer<'_>,
) -> ReviewView {
    let users = Users::new(&state.users);
    let run_status = |id: &str| {
        state
            .runs
            .iter()
            .find(|run| run.id == id)
            .map(|run| run.status)
    };
    let mut messages_by_comment: HashMap<&str, Vec<&MessageRecord>> = HashMap::new();
    for message in &state.messages {
        messages_by_comment
            .entry(message.comment_id.as_str())
            .or_default()
            .push(message);
    }
    let mut events_by_comment: HashMap<&str, Vec<&StatusEventRecord>> = HashMap::new();
    for event in &state.events {
        events_by_comment
            .entry(event.comment_id.as_str())
            .or_default()
            .push(event);
    }
    let mut comments: Vec<&CommentRecord> = state
        .comments
        .iter()
        .filter(|comment| viewer.include_deleted || comment.deleted_at.is_none())
        .collect();
    comments.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let comment_views = comments
        .into_iter()
        .map(|comment| {
            let messages = messages_by_comment
                .remove(comment.id.as_str())
                .unwrap_or_default();
            let events = events_by_comment
                .remove(comment.id.as_str())
                .unwrap_or_default();
            thread_view(comment, &messages, &events, &users, &run_status, viewer)
        })
        .collect();
    let mut runs: Vec<&RunRecord> = state.runs.iter().collect();
    runs.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let run_views = runs
        .into_iter()
        .map(|run| {
            let ids = state
                .comments
                .iter()
                .filter(|c| c.run_id.as_deref() == Some(run.id.as_str()) && c.deleted_at.is_none())
                .map(|c| c.id.clone())
                .collect();
            run_view(run, ids)
        })
        .collect();
    let review = &state.head.review;
    ReviewView {
        review_id: review.id.clone(),
        title: review.title.clone(),
        comments_revision: review.comments_revision,
        structure_revision: review.structure_revision,
        comments: comment_views,
        ai_review_runs: run_views,
        created_at: rfc3339(review.created_at),
        updated_at: rfc3339(review.updated_at),
        source: SourceView {
            versions: state.versions.iter().map(version_view).collect(),
        },
        tags: review.tags.clone(),
        archived: review.archived,
        owner: users.get(&review.owner_id),
        role,
        access: AccessView {
            mode: review.access_mode,
        },
        latest_version_id: review.latest_version_id.clone(),
        project,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Anchor, AnchorState, Category, CommentStatus};

    fn comment(author: &str, created_at: Millis, run_id: Option<&str>) -> CommentRecord {
        CommentRecord {
            id: "cm_1".into(),
            review_id: "rv".into(),
            author_id: author.into(),
            category: Category::Note,
            status: CommentStatus::Open,
            body: "b".into(),
            version_id: "v".into(),
            anchor: Anchor {
                version_id: "v".into(),
                section_id: None,
                quote: None,
                position: None,
                state: AnchorState::Exact,
            },
            run_id: run_id.map(str::to_string),
            created_at,
            edited_at: None,
            deleted_at: None,
            mentions: Vec::new(),
            thread_revision: CommentRecord::NEW_THREAD_REVISION,
        }
    }

    #[test]
    fn human_comments_are_provisional_for_their_author_during_the_undo_window() {
        let c = comment("ada", 1_000, None);
        assert!(comment_is_provisional(
            &c,
            0,
            None,
            "ada",
            1_000 + UNDO_WINDOW_MS - 1
        ));
        assert!(!comment_is_provisional(
            &c,
            0,
            None,
            "ada",
            1_000 + UNDO_WINDOW_MS
        ));
        assert!(!comment_is_provisional(&c, 0, None, "bob", 1_001));
        assert!(!comment_is_provisional(&c, 1, None, "ada", 1_001));
    }

    #[test]
    fn run_comments_are_provisional_for_everyone_while_the_run_runs() {
        let c = comment("agent", 1_000, Some("run_1"));
        assert!(comment_is_provisional(
            &c,
            3,
            Some(RunStatus::Running),
            "bob",
            10 * UNDO_WINDOW_MS
        ));
        assert!(!comment_is_provisional(
            &c,
            0,
            Some(RunStatus::Completed),
            "agent",
            1_001
        ));
    }
}
