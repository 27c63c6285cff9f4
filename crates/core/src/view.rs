//! The JSON shapes the API returns, built from records for one caller at one moment
//! (the `provisional` flag and `role` depend on who asks, and when).

use std::collections::HashMap;

use docreview_api::views::{
    AccessView, CommentView, DecisionView, EventView, MessageView, ProjectLinkView, ReactionView,
    ReviewView, ReviewerView, RunView, SourceView, VersionView, WorkflowView,
};

use crate::clock::rfc3339;
use crate::model::{
    CommentRecord, CommentThread, DecisionKind, DecisionRecord, Emoji, MessageRecord, Millis,
    Outcome, ProjectRecord, ProjectRole, Provider, ReactionRecord, ReviewState, ReviewerRecord,
    Role, RunRecord, RunStatus, StatusEventRecord, User, VersionRecord, WorkflowState,
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
    /// Whose reactions are `reactedByMe` (empty: nobody's).
    pub reactor: &'a str,
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
    let reactions: Vec<&ReactionRecord> = thread.reactions.iter().collect();
    thread_view(
        &thread.comment,
        &Parts {
            messages: &messages,
            events: &events,
            reactions: &reactions,
        },
        users,
        run_status,
        viewer,
    )
}

/// A comment's replies, status events and reactions (its own and its replies').
struct Parts<'a, 'b> {
    messages: &'b [&'a MessageRecord],
    events: &'b [&'a StatusEventRecord],
    reactions: &'b [&'a ReactionRecord],
}

/// One entry per emoji that has reactions from `reactions` (all on one item), in `Emoji`'s
/// order.
pub fn reaction_views(reactions: &[&ReactionRecord], reactor: &str) -> Vec<ReactionView> {
    Emoji::ALL
        .iter()
        .filter_map(|emoji| {
            let of: Vec<&&ReactionRecord> =
                reactions.iter().filter(|r| r.emoji == *emoji).collect();
            (!of.is_empty()).then(|| ReactionView {
                emoji: *emoji,
                count: i64::try_from(of.len()).unwrap_or(i64::MAX),
                reacted_by_me: !reactor.is_empty() && of.iter().any(|r| r.user_id == reactor),
            })
        })
        .collect()
}

/// Renders a comment from borrowed parts, so a whole review renders without copying records.
fn thread_view(
    comment: &CommentRecord,
    parts: &Parts<'_, '_>,
    users: &Users<'_>,
    run_status: &dyn Fn(&str) -> Option<RunStatus>,
    viewer: &Viewer<'_>,
) -> CommentView {
    let Parts {
        messages,
        events,
        reactions,
    } = parts;
    let reactions_on = |message_id: Option<&str>| {
        let on_item: Vec<&ReactionRecord> = reactions
            .iter()
            .copied()
            .filter(|r| r.message_id.as_deref() == message_id)
            .collect();
        reaction_views(&on_item, viewer.reactor)
    };
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
            reactions: reactions_on(Some(&message.id)),
        })
        .collect();
    let mut events = events.to_vec();
    events.sort_by_key(|event| event.seq);
    CommentView {
        suggestion: comment
            .suggestion
            .clone()
            .map(|text| docreview_api::requests::Suggestion { text }),
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
                reason: event.reason.clone(),
                version_id: event.version_id.clone(),
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
        assignee: comment.assignee_id.as_deref().map(|id| users.get(id)),
        reactions: reactions_on(None),
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
    let mut reactions_by_comment: HashMap<&str, Vec<&ReactionRecord>> = HashMap::new();
    for reaction in &state.reactions {
        reactions_by_comment
            .entry(reaction.comment_id.as_str())
            .or_default()
            .push(reaction);
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
            let reactions = reactions_by_comment
                .remove(comment.id.as_str())
                .unwrap_or_default();
            let parts = Parts {
                messages: &messages,
                events: &events,
                reactions: &reactions,
            };
            thread_view(comment, &parts, &users, &run_status, viewer)
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
        workflow: workflow_view(state, &users),
    }
}

/// A decision as shown: stale when made on a version other than the latest.
pub fn decision_view(decision: &DecisionRecord, users: &Users<'_>, latest: &str) -> DecisionView {
    DecisionView {
        id: decision.id.clone(),
        user: users.get(&decision.user_id),
        decision: decision.decision,
        version_id: decision.version_id.clone(),
        body: decision.body.clone(),
        created_at: rfc3339(decision.created_at),
        stale: decision.version_id != latest,
    }
}

/// The document's workflow (DESIGN.md §8.4).
pub fn workflow_view(state: &ReviewState, users: &Users<'_>) -> WorkflowView {
    let review = &state.head.review;
    let latest = review.latest_version_id.as_str();
    let decision_of = |user_id: &str| {
        state
            .decisions
            .iter()
            .find(|d| d.user_id == user_id)
            .map(|d| decision_view(d, users, latest))
    };
    WorkflowView {
        state: if review.finalized.is_some() {
            WorkflowState::Finalized
        } else {
            WorkflowState::Open
        },
        outcome: outcome(&state.reviewers, &state.decisions, latest),
        reviewers: state
            .reviewers
            .iter()
            .map(|reviewer| ReviewerView {
                user: users.get(&reviewer.user_id),
                requested_at: rfc3339(reviewer.requested_at),
                due_at: reviewer.due_at.map(rfc3339),
                decision: decision_of(&reviewer.user_id),
            })
            .collect(),
        decisions: state
            .decisions
            .iter()
            .map(|d| decision_view(d, users, latest))
            .collect(),
        finalized_at: review.finalized.as_ref().map(|(at, _)| rfc3339(*at)),
        finalized_by: review.finalized.as_ref().map(|(_, by)| users.get(by)),
    }
}

/// The outcome over the decisions made on the latest version (DESIGN.md §8.4, as written):
/// `changes_requested` if any, else `approved_with_changes` if any, else `approved` if every
/// requested reviewer approved (or, with none requested, at least one approval), else
/// `not_relevant` if all are, else `pending`. `decisions` holds one per person (the newer
/// replaces the older when stored).
pub fn outcome(
    reviewers: &[ReviewerRecord],
    decisions: &[DecisionRecord],
    latest: &str,
) -> Outcome {
    let current: Vec<&DecisionRecord> = decisions
        .iter()
        .filter(|d| d.version_id == latest)
        .collect();
    let any = |kind: DecisionKind| current.iter().any(|d| d.decision == kind);
    let approved = |user_id: &str| {
        current
            .iter()
            .any(|d| d.user_id == user_id && d.decision == DecisionKind::Approved)
    };
    if any(DecisionKind::ChangesRequested) {
        Outcome::ChangesRequested
    } else if any(DecisionKind::ApprovedWithChanges) {
        Outcome::ApprovedWithChanges
    } else if (reviewers.is_empty() && any(DecisionKind::Approved))
        || (!reviewers.is_empty() && reviewers.iter().all(|r| approved(&r.user_id)))
    {
        Outcome::Approved
    } else if !current.is_empty()
        && current
            .iter()
            .all(|d| d.decision == DecisionKind::NotRelevant)
    {
        Outcome::NotRelevant
    } else {
        Outcome::Pending
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
            assignee_id: None,
            suggestion: None,
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

    fn decided(user: &str, kind: DecisionKind, version: &str) -> DecisionRecord {
        DecisionRecord {
            id: format!("dec_{user}"),
            review_id: "rv".into(),
            user_id: user.into(),
            decision: kind,
            version_id: version.into(),
            body: None,
            created_at: 0,
        }
    }

    fn asked(user: &str) -> ReviewerRecord {
        ReviewerRecord {
            review_id: "rv".into(),
            user_id: user.into(),
            requested_at: 0,
            due_at: None,
            requested_by: "owner".into(),
        }
    }

    #[test]
    fn the_outcome_follows_the_rule_over_current_decisions() {
        use DecisionKind::{Approved, ApprovedWithChanges, ChangesRequested, NotRelevant};
        let v2 = "ver_2";
        assert_eq!(outcome(&[], &[], v2), Outcome::Pending);
        assert_eq!(
            outcome(&[], &[decided("a", Approved, v2)], v2),
            Outcome::Approved
        );
        assert_eq!(
            outcome(
                &[],
                &[
                    decided("a", Approved, v2),
                    decided("b", ChangesRequested, v2)
                ],
                v2
            ),
            Outcome::ChangesRequested
        );
        assert_eq!(
            outcome(
                &[],
                &[
                    decided("a", ApprovedWithChanges, v2),
                    decided("b", Approved, v2)
                ],
                v2
            ),
            Outcome::ApprovedWithChanges
        );
        // A stale decision does not count, whatever it says.
        assert_eq!(
            outcome(
                &[],
                &[
                    decided("a", ChangesRequested, "ver_1"),
                    decided("b", Approved, v2)
                ],
                v2
            ),
            Outcome::Approved
        );
        assert_eq!(
            outcome(&[], &[decided("a", Approved, "ver_1")], v2),
            Outcome::Pending
        );
        // With reviewers asked, every one of them must approve.
        let asked_ab = [asked("a"), asked("b")];
        assert_eq!(
            outcome(&asked_ab, &[decided("a", Approved, v2)], v2),
            Outcome::Pending
        );
        assert_eq!(
            outcome(
                &asked_ab,
                &[decided("a", Approved, v2), decided("b", Approved, v2)],
                v2
            ),
            Outcome::Approved
        );
        assert_eq!(
            outcome(
                &asked_ab,
                &[decided("a", Approved, v2), decided("b", Approved, "ver_1")],
                v2
            ),
            Outcome::Pending
        );
        assert_eq!(
            outcome(
                &asked_ab,
                &[decided("a", Approved, v2), decided("b", NotRelevant, v2)],
                v2
            ),
            Outcome::Pending
        );
        assert_eq!(
            outcome(
                &[],
                &[decided("a", NotRelevant, v2), decided("b", NotRelevant, v2)],
                v2
            ),
            Outcome::NotRelevant
        );
        assert_eq!(
            outcome(&asked_ab, &[decided("c", NotRelevant, v2)], v2),
            Outcome::NotRelevant
        );
    }
}
