//! `comments …` and `runs …`: commenting, discussing, and agent runs.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use docreview_client::api::{
    AssigneeChange, Category, CommentStatus, CommentView, CommentWritten, Emoji, FinishRun,
    NewComment, NewReply, Position, Reanchor, RunStatus, RunView, StartRun, StatusChange,
    Suggestion, TextEdit,
};
use docreview_client::{Client, Place};
use serde_json::Value;
use serde_json::value::RawValue;

use super::output::{CLOSED, DIM, OPEN, WARNING, counted, paint};
use super::{Failure, Outcome, Output, io_reason, read_stdin, signed_in_client};

/// Where a comment goes: a passage (`--quote`), a section (`--section`), or neither (the
/// whole document).
#[derive(Args)]
pub struct PlaceArgs {
    /// The passage, as it reads in the document (`reviews text` prints the text).
    #[arg(long)]
    quote: Option<String>,
    /// Text just before the passage, when it occurs more than once.
    #[arg(long, requires = "quote")]
    prefix: Option<String>,
    /// Text just after the passage.
    #[arg(long, requires = "quote")]
    suffix: Option<String>,
    /// Where the passage starts (a character offset, as a not-found quote's candidates give
    /// it): picks that occurrence when the quote occurs more than once.
    #[arg(long, value_name = "OFFSET", requires = "quote")]
    at: Option<usize>,
    /// A heading section's id (`reviews outline` lists them): the comment is on that section,
    /// or with --quote, the passage is looked for in it.
    #[arg(long)]
    section: Option<String>,
}

impl PlaceArgs {
    /// The locator the flags name.
    fn locator(self) -> docreview_client::api::Locator {
        let at = self.at;
        let length = self.quote.as_ref().map_or(0, |q| q.chars().count());
        let mut locator = Place {
            quote: self.quote,
            prefix: self.prefix,
            suffix: self.suffix,
            section_id: self.section,
        }
        .locator();
        locator.position = at.map(|start| Position {
            start,
            end: start + length,
        });
        locator
    }
}

/// A comment's or reply's text (Markdown): `--body TEXT`, `--body -` for standard input, or
/// `--body-file PATH`.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct BodyArgs {
    /// The text (Markdown); `-` reads it from standard input.
    #[arg(long, allow_hyphen_values = true)]
    body: Option<String>,
    /// Read the text from this file.
    #[arg(long, value_name = "PATH")]
    body_file: Option<PathBuf>,
}

impl BodyArgs {
    /// The text to send; read from standard input or a file, its final line break dropped.
    fn text(self) -> Result<String, Failure> {
        let (text, from) = match (self.body, self.body_file) {
            (Some(body), _) if body == "-" => (read_stdin("the text")?, "standard input".into()),
            (Some(body), _) => return Ok(body),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(&path).map_err(|error| {
                    Failure::error(format!("reading {}: {}", path.display(), io_reason(&error)))
                })?;
                (text, path.display().to_string())
            }
            (None, None) => return Err(Failure::usage("give the text with --body or --body-file")),
        };
        let text = text.trim_end_matches(['\n', '\r']).to_string();
        if text.trim().is_empty() {
            return Err(Failure::error(format!(
                "{from} is empty: there is no text to send"
            )));
        }
        Ok(text)
    }
}

/// A write to a thread as the caller last read it.
#[derive(Args)]
pub struct ThreadGuardArgs {
    /// Write only if the thread is still at this `threadRevision` (as `comments list --json`
    /// shows it); if anyone changed the thread since, nothing is written and the command fails.
    #[arg(long, value_name = "N")]
    thread_revision: Option<i64>,
}

/// A new comment: its text, category and place.
#[derive(Args)]
pub struct CommentArgs {
    #[command(flatten)]
    body: BodyArgs,
    #[command(flatten)]
    place: PlaceArgs,
    /// note, revise, add, delete, needs_review, consult or none.
    #[arg(long, default_value = "note")]
    category: String,
    /// What the quoted passage should become (with --category revise; `add`: text inserted
    /// after it; `delete`: ""). `suggestions apply` makes it a new version.
    #[arg(
        long,
        value_name = "TEXT",
        requires = "quote",
        allow_hyphen_values = true
    )]
    suggestion: Option<String>,
}

/// Which of a document's comments `comments list` shows.
#[derive(Args)]
pub struct CommentFilter {
    /// Only open or only resolved (closed) comments.
    #[arg(long, value_parser = ["open", "closed"])]
    status: Option<String>,
    /// Only this category: note, revise, add, delete, needs_review, consult or none.
    #[arg(long)]
    category: Option<String>,
    /// Only those written by this person: `me`, a user id, a display name or a handle.
    #[arg(long, value_name = "WHO")]
    author: Option<String>,
    /// Only those assigned to this person: `me`, a user id, a display name, a handle or an
    /// email.
    #[arg(long, value_name = "WHO")]
    assignee: Option<String>,
}

#[derive(Subcommand)]
pub enum CommentsCommand {
    /// A document's comments, in document order (`--status`, `--category`, `--author`,
    /// `--assignee` narrow them).
    List {
        /// The document's id (rv_…).
        review: String,
        #[command(flatten)]
        filter: CommentFilter,
    },
    /// Comment on a passage (`--quote`), a section (`--section`) or the whole document.
    Add {
        /// The document's id (rv_…).
        review: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Reply to a comment.
    Reply {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        #[command(flatten)]
        body: BodyArgs,
        #[command(flatten)]
        guard: ThreadGuardArgs,
    },
    /// Change your comment's text.
    Edit {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        #[command(flatten)]
        body: BodyArgs,
        #[command(flatten)]
        guard: ThreadGuardArgs,
    },
    /// Resolve a comment.
    Resolve {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        #[command(flatten)]
        guard: ThreadGuardArgs,
    },
    /// Reopen a resolved comment.
    Reopen {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        #[command(flatten)]
        guard: ThreadGuardArgs,
    },
    /// Take back your comment while it is still a draft.
    Cancel {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
    },
    /// Move a comment to another passage or section of the latest version.
    Reanchor {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        #[command(flatten)]
        place: PlaceArgs,
        #[command(flatten)]
        guard: ThreadGuardArgs,
    },
    /// Hand a thread to someone who can read the document, or to nobody (`--none`).
    Assign {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        /// The assignee's email.
        #[arg(required_unless_present = "none", conflicts_with = "none")]
        email: Option<String>,
        /// Unassign the thread.
        #[arg(long)]
        none: bool,
    },
    /// React to a comment, or to one of its replies (`--reply`); `--remove` takes it back.
    React {
        /// The document's id (rv_…).
        review: String,
        /// The comment's id (cm_…).
        comment: String,
        /// One of +1 -1 laugh confused heart hooray rocket eyes.
        #[arg(allow_hyphen_values = true)]
        emoji: String,
        /// React to this reply of the thread instead (its id, msg_…).
        #[arg(long, value_name = "MSG")]
        reply: Option<String>,
        /// Take your reaction back.
        #[arg(long)]
        remove: bool,
    },
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// A document's review runs, oldest first, with their status and comment counts.
    List {
        /// The document's id (rv_…).
        review: String,
    },
    /// Start a review run on the latest version; its comments stay drafts until it completes.
    Start {
        /// The document's id (rv_…).
        review: String,
        /// What the run is for (shown with its comments).
        #[arg(long)]
        title: Option<String>,
    },
    /// Write a comment in a run (on a quote, a section or the whole document).
    Comment {
        /// The document's id (rv_…).
        review: String,
        /// The run's id (run_…).
        run: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Finish a run: `completed` (with a summary) keeps its comments; `failed` or `cancelled`
    /// drops them.
    Finish {
        /// The document's id (rv_…).
        review: String,
        /// The run's id (run_…).
        run: String,
        /// completed, failed or cancelled.
        #[arg(long, default_value = "completed")]
        status: String,
        /// What the run found, shown with it (for `completed`).
        #[arg(long)]
        summary: Option<String>,
    },
    /// Cancel a running run; its draft comments are dropped.
    Cancel {
        /// The document's id (rv_…).
        review: String,
        /// The run's id (run_…).
        run: String,
    },
}

pub async fn comments(command: CommentsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        CommentsCommand::List { review, filter } => list(&client, &review, &filter, output).await,
        CommentsCommand::Add { review, comment } => {
            let new = new_comment(comment)?;
            let written = client.add_comment(&review, &new).await?;
            report_comment(&client, &written, output)
        }
        CommentsCommand::Reply {
            review,
            comment,
            body,
            guard,
        } => {
            let reply = NewReply {
                body: body.text()?,
                run_id: None,
                base_comments_revision: None,
                base_thread_revision: guard.thread_revision,
            };
            let written = client.reply(&review, &comment, &reply).await?;
            output.answer(&client, &written, |_| println!("Replied to {comment}."))
        }
        CommentsCommand::Edit {
            review,
            comment,
            body,
            guard,
        } => {
            let edit = TextEdit {
                body: body.text()?,
                base_comments_revision: None,
                base_thread_revision: guard.thread_revision,
            };
            let written = client.edit_comment(&review, &comment, &edit).await?;
            output.answer(&client, &written, |_| println!("Edited {comment}."))
        }
        CommentsCommand::Resolve {
            review,
            comment,
            guard,
        } => {
            let change = StatusChange {
                status: CommentStatus::Closed,
                base_comments_revision: None,
                base_thread_revision: guard.thread_revision,
            };
            set_status(&client, &review, &comment, change, output).await
        }
        CommentsCommand::Reopen {
            review,
            comment,
            guard,
        } => {
            let change = StatusChange {
                status: CommentStatus::Open,
                base_comments_revision: None,
                base_thread_revision: guard.thread_revision,
            };
            set_status(&client, &review, &comment, change, output).await
        }
        CommentsCommand::Cancel { review, comment } => {
            let revision = client.cancel_comment(&review, &comment, None).await?;
            output.answer(&client, &revision, |_| println!("Cancelled {comment}."))
        }
        CommentsCommand::Reanchor {
            review,
            comment,
            place,
            guard,
        } => {
            let reanchor = Reanchor {
                locator: place.locator(),
                base_comments_revision: None,
                base_thread_revision: guard.thread_revision,
            };
            let written = client
                .reanchor_comment(&review, &comment, &reanchor)
                .await?;
            output.answer(&client, &written, |written| {
                println!(
                    "Moved {comment} ({} on {}).",
                    written.comment.anchor.state,
                    place_of(&written.comment)
                );
            })
        }
        CommentsCommand::Assign {
            review,
            comment,
            email,
            none,
        } => {
            let change = AssigneeChange {
                email: if none { None } else { email },
                base_comments_revision: None,
            };
            let written = client.assign_comment(&review, &comment, &change).await?;
            output.answer(&client, &written, |written| {
                match &written.comment.assignee {
                    Some(who) => println!("Assigned {comment} to {}.", who.display_name),
                    None => println!("{comment} is assigned to nobody."),
                }
            })
        }
        CommentsCommand::React {
            review,
            comment,
            emoji,
            reply,
            remove,
        } => {
            // Checked here so a typo is a usage error, with the words there are.
            let emoji = Emoji::from_word(&emoji).map_err(Failure::usage)?;
            let reactions = client
                .react(&review, &comment, reply.as_deref(), emoji.as_str(), !remove)
                .await?;
            output.answer(&client, &reactions, |reactions| {
                let shown: Vec<String> = reactions
                    .iter()
                    .map(|r| format!("{} {}", r.emoji, r.count))
                    .collect();
                let item = reply.as_deref().unwrap_or(&comment);
                if shown.is_empty() {
                    println!("No reactions on {item}.");
                } else {
                    println!("Reactions on {item}: {}", shown.join(", "));
                }
            })
        }
    }
}

/// `comments list`: the document's comments as its answer has them (every field), narrowed.
async fn list(client: &Client, review: &str, filter: &CommentFilter, output: &Output) -> Outcome {
    let category = filter
        .category
        .as_deref()
        .map(|word| {
            Category::from_word(word).map_err(|e| Failure::usage(format!("--category: {e}")))
        })
        .transpose()?;
    let wants_me = [&filter.author, &filter.assignee]
        .iter()
        .any(|who| who.as_deref().is_some_and(|w| w.eq_ignore_ascii_case("me")));
    let me = if wants_me {
        Some(client.me().await?.user.id)
    } else {
        None
    };
    client.review(review, false).await?;
    let comments = answer_part(client, "comments")?;
    let kept: Vec<(Value, String)> = comments
        .into_iter()
        .filter(|(comment, _)| {
            filter
                .status
                .as_deref()
                .is_none_or(|status| comment["status"] == status)
                && category.is_none_or(|category| comment["category"] == category.as_str())
                && filter
                    .author
                    .as_deref()
                    .is_none_or(|who| is_person(comment.get("author"), who, me.as_deref()))
                && filter
                    .assignee
                    .as_deref()
                    .is_none_or(|who| is_person(comment.get("assignee"), who, me.as_deref()))
        })
        .collect();
    let filtered = filter.status.is_some()
        || filter.category.is_some()
        || filter.author.is_some()
        || filter.assignee.is_some();
    output.raw(&raw_array(&kept), || {
        let views: Vec<CommentView> = kept
            .iter()
            .filter_map(|(c, _)| serde_json::from_value(c.clone()).ok())
            .collect();
        if views.is_empty() {
            println!(
                "{}",
                if filtered {
                    "No comments match."
                } else {
                    "No comments yet."
                }
            );
        } else {
            println!("{}", counted(views.len(), "comment"));
            println!();
            print_comments(&views);
        }
    })
}

/// The array `field` of the document in the client's last answer (`GET /api/reviews/{id}`):
/// each item as the server sent it, and read.
fn answer_part(client: &Client, field: &str) -> Result<Vec<(Value, String)>, Failure> {
    let unexpected =
        |what: String| Failure::error(format!("unexpected answer from the server: {what}"));
    let bytes = client
        .take_answer()
        .ok_or_else(|| unexpected("none was kept".into()))?;
    let answer: HashMap<String, HashMap<String, Box<RawValue>>> =
        serde_json::from_slice(&bytes).map_err(|e| unexpected(e.to_string()))?;
    let items: Vec<Box<RawValue>> = answer
        .get("review")
        .and_then(|review| review.get(field))
        .map(|raw| serde_json::from_str(raw.get()))
        .transpose()
        .map_err(|e| unexpected(e.to_string()))?
        .ok_or_else(|| unexpected(format!("the document has no `{field}`")))?;
    items
        .into_iter()
        .map(|raw| {
            let value = serde_json::from_str(raw.get()).map_err(|e| unexpected(e.to_string()))?;
            Ok((value, raw.get().to_string()))
        })
        .collect()
}

/// Items as the server sent them, in one JSON array.
fn raw_array<'a>(items: impl IntoIterator<Item = &'a (Value, String)>) -> String {
    let raw: Vec<&str> = items.into_iter().map(|(_, raw)| raw.as_str()).collect();
    format!("[{}]", raw.join(","))
}

/// Whether `person` (a User object, or none) is `who`: `me` (the caller, `me_id`), or their
/// id, handle (with or without `@`), email or display name, case not compared.
fn is_person(person: Option<&Value>, who: &str, me_id: Option<&str>) -> bool {
    let Some(person) = person.filter(|p| p.is_object()) else {
        return false;
    };
    let field = |name: &str| person.get(name).and_then(Value::as_str).unwrap_or_default();
    if who.eq_ignore_ascii_case("me") {
        return me_id.is_some_and(|id| field("id") == id);
    }
    let who = who.strip_prefix('@').unwrap_or(who);
    ["id", "handle", "email", "displayName"]
        .iter()
        .any(|name| !field(name).is_empty() && field(name).eq_ignore_ascii_case(who))
}

async fn set_status(
    client: &Client,
    review: &str,
    comment: &str,
    change: StatusChange,
    output: &Output,
) -> Outcome {
    let closed = change.status == CommentStatus::Closed;
    let written = client.set_status(review, comment, &change).await?;
    output.answer(client, &written, |_| {
        let done = if closed { "Resolved" } else { "Reopened" };
        println!("{done} {comment}.");
    })
}

pub async fn runs(command: RunsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        RunsCommand::List { review } => {
            client.review(&review, false).await?;
            let runs = answer_part(&client, "aiReviewRuns")?;
            output.raw(&raw_array(&runs), || {
                let views: Vec<RunView> = runs
                    .iter()
                    .filter_map(|(r, _)| serde_json::from_value(r.clone()).ok())
                    .collect();
                if views.is_empty() {
                    println!("No runs. Start one with `docreview runs start {review}`.");
                }
                for run in &views {
                    print_run(run);
                }
            })
        }
        RunsCommand::Start { review, title } => {
            let start = StartRun {
                title,
                ..StartRun::default()
            };
            let run = client.start_run(&review, &start).await?;
            output.answer(&client, &run, |run| {
                println!("Started run {} on version {}.", run.id, run.version_id);
            })
        }
        RunsCommand::Comment {
            review,
            run,
            comment,
        } => {
            let new = new_comment(comment)?;
            let written = client.add_run_comment(&review, &run, &new).await?;
            report_comment(&client, &written, output)
        }
        RunsCommand::Finish {
            review,
            run,
            status,
            summary,
        } => {
            let status = RunStatus::parse(&status)
                .filter(|status| *status != RunStatus::Running)
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "`{status}`: finish as completed, failed or cancelled"
                    ))
                })?;
            finish(&client, &review, &run, status, summary, output).await
        }
        RunsCommand::Cancel { review, run } => {
            finish(&client, &review, &run, RunStatus::Cancelled, None, output).await
        }
    }
}

async fn finish(
    client: &Client,
    review: &str,
    run: &str,
    status: RunStatus,
    summary: Option<String>,
    output: &Output,
) -> Outcome {
    let finish = FinishRun {
        status,
        summary,
        base_comments_revision: None,
    };
    let run = client.finish_run(review, run, &finish).await?;
    output.answer(client, &run, |run| {
        let comments = if run.status == RunStatus::Completed {
            format!(" with {}", counted(run.comment_ids.len(), "comment"))
        } else {
            String::new()
        };
        println!("Run {} {}{comments}.", run.id, run.status);
    })
}

/// A run on one line: id, status, title, comments, summary.
fn print_run(run: &RunView) {
    let status = if run.status == RunStatus::Running {
        paint(OPEN, run.status)
    } else {
        paint(CLOSED, run.status)
    };
    let title = if run.title.is_empty() {
        "(untitled)"
    } else {
        run.title.as_str()
    };
    anstream::println!(
        "{}  [{status}] {title}, {}{}",
        paint(DIM, &run.id),
        counted(run.comment_ids.len(), "comment"),
        run.summary
            .as_ref()
            .map(|s| format!(": {s}"))
            .unwrap_or_default()
    );
}

/// Comments as a person reads them: id, status, author, place, category, text and replies; a
/// blank line between two comments.
pub fn print_comments(comments: &[CommentView]) {
    for (index, comment) in comments.iter().enumerate() {
        if index > 0 {
            println!();
        }
        let status = if comment.status == CommentStatus::Open {
            paint(OPEN, comment.status)
        } else {
            paint(CLOSED, comment.status)
        };
        anstream::println!(
            "{}  [{status}] {} on {} ({}, {})",
            paint(DIM, &comment.id),
            comment.author.display_name,
            place_of(comment),
            comment.category,
            comment.anchor.state
        );
        println!("  {}", comment.body);
        for reply in &comment.thread {
            println!("    ↳ {}: {}", reply.author.display_name, reply.body);
        }
    }
}

fn place_of(comment: &CommentView) -> String {
    let anchor = &comment.anchor;
    anchor
        .quote
        .as_ref()
        .map(|quote| format!("“{}”", quote.exact))
        .or_else(|| anchor.section_id.as_ref().map(|id| format!("section {id}")))
        .unwrap_or_else(|| "the document".to_string())
}

/// The comment the command line describes.
fn new_comment(args: CommentArgs) -> Result<NewComment, Failure> {
    // The category is checked before standard input is read.
    let category = Category::from_word(&args.category).map_err(Failure::usage)?;
    Ok(NewComment {
        body: args.body.text()?,
        category: Some(category),
        locator: Some(args.place.locator()),
        base_comments_revision: None,
        suggestion: args.suggestion.map(|text| Suggestion { text }),
    })
}

fn report_comment(client: &Client, written: &CommentWritten, output: &Output) -> Outcome {
    output.answer(client, written, |written| {
        println!("Commented: {}", written.comment.id);
        if let Some(matches) = written.quote_matches.filter(|n| *n > 1) {
            anstream::eprintln!(
                "{} the quote occurs {matches} times; the comment is on the first. Add \
                 --prefix, --suffix, --at or --section to choose another.",
                paint(WARNING, "warning:")
            );
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_person_is_named_by_id_handle_email_or_name() {
        let ada = json!({ "id": "usr_1", "displayName": "Ada Lovelace", "handle": "ada",
            "email": "ada@example.com" });
        for who in ["usr_1", "ada", "@ada", "ADA@example.com", "ada lovelace"] {
            assert!(is_person(Some(&ada), who, None), "{who}");
        }
        assert!(is_person(Some(&ada), "me", Some("usr_1")));
        assert!(!is_person(Some(&ada), "me", Some("usr_2")));
        assert!(!is_person(Some(&ada), "bob", Some("usr_1")));
        // No one assigned (absent or null) is nobody.
        assert!(!is_person(None, "ada", None));
        assert!(!is_person(Some(&Value::Null), "ada", None));
        // A field the server left out never matches an empty name.
        assert!(!is_person(Some(&json!({ "id": "usr_3" })), "", None));
    }
}
