//! `comments …` and `runs …`: commenting, discussing, and agent runs.

use clap::{Args, Subcommand};
use docreview_client::api::{
    CommentStatus, CommentView, CommentWritten, FinishRun, NewComment, NewReply, Reanchor,
    RunStatus, StartRun, StatusChange, TextEdit,
};
use docreview_client::{Client, Place};

use super::output::{CLOSED, DIM, OPEN, WARNING, paint};
use super::{Failure, Outcome, Output, signed_in_client};

/// Where a comment goes: a passage (`--quote`), a section (`--section`), or neither (the
/// whole document).
#[derive(Args)]
pub struct PlaceArgs {
    /// The passage, as it reads in the document.
    #[arg(long)]
    quote: Option<String>,
    /// Text just before the passage, when it occurs more than once.
    #[arg(long, requires = "quote")]
    prefix: Option<String>,
    /// Text just after the passage.
    #[arg(long, requires = "quote")]
    suffix: Option<String>,
    /// A heading section's id (see `reviews show`).
    #[arg(long, conflicts_with = "quote")]
    section: Option<String>,
}

impl PlaceArgs {
    fn place(self) -> Place {
        Place {
            quote: self.quote,
            prefix: self.prefix,
            suffix: self.suffix,
            section_id: self.section,
        }
    }
}

/// A new comment: its text, category and place.
#[derive(Args)]
pub struct CommentArgs {
    #[arg(long)]
    body: String,
    #[command(flatten)]
    place: PlaceArgs,
    /// note, revise, add, delete, needs_review, consult or none.
    #[arg(long, default_value = "note")]
    category: String,
}

#[derive(Subcommand)]
pub enum CommentsCommand {
    /// A document's comments, in document order.
    List { review: String },
    /// Comment on a passage (`--quote`), a section (`--section`) or the whole document.
    Add {
        review: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Reply to a comment.
    Reply {
        review: String,
        comment: String,
        #[arg(long)]
        body: String,
    },
    /// Change your comment's text.
    Edit {
        review: String,
        comment: String,
        #[arg(long)]
        body: String,
    },
    /// Resolve a comment.
    Resolve { review: String, comment: String },
    /// Reopen a resolved comment.
    Reopen { review: String, comment: String },
    /// Take back your comment while it is still a draft.
    Cancel { review: String, comment: String },
    /// Move a comment to another passage or section of the latest version.
    Reanchor {
        review: String,
        comment: String,
        #[command(flatten)]
        place: PlaceArgs,
    },
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// Start a review run on the latest version; its comments stay drafts until it completes.
    Start {
        review: String,
        #[arg(long)]
        title: Option<String>,
    },
    /// Write a comment in a run (on a quote, a section or the whole document).
    Comment {
        review: String,
        run: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Finish a run: `completed` (with a summary) keeps its comments; `failed` or `cancelled`
    /// drops them.
    Finish {
        review: String,
        run: String,
        #[arg(long, default_value = "completed")]
        status: String,
        #[arg(long)]
        summary: Option<String>,
    },
}

pub async fn comments(command: CommentsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        CommentsCommand::List { review } => {
            let review = client.review(&review, false).await?;
            output.show(&review.comments, |comments| print_comments(comments))
        }
        CommentsCommand::Add { review, comment } => {
            let new = new_comment(comment)?;
            let written = client.add_comment(&review, &new).await?;
            report_comment(&written, output)
        }
        CommentsCommand::Reply {
            review,
            comment,
            body,
        } => {
            let reply = NewReply {
                body,
                run_id: None,
                base_comments_revision: None,
            };
            let written = client.reply(&review, &comment, &reply).await?;
            output.show(&written, |_| println!("Replied to {comment}."))
        }
        CommentsCommand::Edit {
            review,
            comment,
            body,
        } => {
            let edit = TextEdit {
                body,
                base_comments_revision: None,
            };
            let written = client.edit_comment(&review, &comment, &edit).await?;
            output.show(&written, |_| println!("Edited {comment}."))
        }
        CommentsCommand::Resolve { review, comment } => {
            set_status(&client, &review, &comment, CommentStatus::Closed, output).await
        }
        CommentsCommand::Reopen { review, comment } => {
            set_status(&client, &review, &comment, CommentStatus::Open, output).await
        }
        CommentsCommand::Cancel { review, comment } => {
            let revision = client.cancel_comment(&review, &comment, None).await?;
            let cancelled = serde_json::json!({ "commentsRevision": revision });
            output.show(&cancelled, |_| println!("Cancelled {comment}."))
        }
        CommentsCommand::Reanchor {
            review,
            comment,
            place,
        } => {
            let reanchor = Reanchor {
                locator: place.place().locator(),
                base_comments_revision: None,
            };
            let written = client
                .reanchor_comment(&review, &comment, &reanchor)
                .await?;
            output.show(&written, |written| {
                println!(
                    "Moved {comment} ({} on {}).",
                    written.comment.anchor.state,
                    place_of(&written.comment)
                );
            })
        }
    }
}

async fn set_status(
    client: &Client,
    review: &str,
    comment: &str,
    status: CommentStatus,
    output: &Output,
) -> Outcome {
    let change = StatusChange {
        status,
        base_comments_revision: None,
    };
    let written = client.set_status(review, comment, &change).await?;
    output.show(&written, |_| {
        let done = if status == CommentStatus::Closed {
            "Resolved"
        } else {
            "Reopened"
        };
        println!("{done} {comment}.");
    })
}

pub async fn runs(command: RunsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        RunsCommand::Start { review, title } => {
            let start = StartRun {
                title,
                ..StartRun::default()
            };
            let run = client.start_run(&review, &start).await?;
            output.show(&run, |run| {
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
            report_comment(&written, output)
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
            let finish = FinishRun {
                status,
                summary,
                base_comments_revision: None,
            };
            let run = client.finish_run(&review, &run, &finish).await?;
            output.show(&run, |run| {
                println!(
                    "Run {} {} with {} comments.",
                    run.id,
                    run.status,
                    run.comment_ids.len()
                );
            })
        }
    }
}

/// Comments as a person reads them: id, status, author, place, category, text and replies.
pub fn print_comments(comments: &[CommentView]) {
    for comment in comments {
        let status = if comment.status == CommentStatus::Open {
            paint(OPEN, comment.status)
        } else {
            paint(CLOSED, comment.status)
        };
        anstream::println!(
            "\n{}  [{status}] {} on {} ({}, {})",
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
    docreview_client::new_comment(args.body, Some(&args.category), args.place.place())
        .map_err(Failure::usage)
}

fn report_comment(written: &CommentWritten, output: &Output) -> Outcome {
    output.show(written, |written| {
        println!("Commented: {}", written.comment.id);
        if let Some(matches) = written.quote_matches.filter(|n| *n > 1) {
            anstream::eprintln!(
                "{} the quote occurs {matches} times; the comment is on the first. Add \
                 --prefix or --suffix to choose another.",
                paint(WARNING, "warning:")
            );
        }
    })
}
