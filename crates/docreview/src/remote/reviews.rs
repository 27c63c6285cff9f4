//! `reviews …`: documents, their versions, and who may see them.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use docreview_client::api::{
    AccessMode, AllowedUserEntry, DecisionKind, DecisionView, ExportFormat, GrantRole, ListQuery,
    MetaChange, NewDecision, NewReviewer, OwnerChange, ReviewList, ReviewSummaryView, ReviewView,
    Section, SharingChange, SharingView, TitleChange, VersionMode, WorkflowView,
};
use docreview_client::{Client, DocumentUpload, HtmlFile, VersionUpload};

use serde_json::json;

use super::comments::print_comments;
use super::output::{DIM, counted, paint, spinner};
use super::{Failure, Outcome, Output, interactive, io_reason, open_in_browser, signed_in_client};

/// Documents per page when listing.
const PAGE: usize = 200;

#[derive(Subcommand)]
pub enum ReviewsCommand {
    /// The documents you can see, newest activity first.
    List {
        /// Only those with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Only archived documents.
        #[arg(long)]
        archived: bool,
        /// How many (1 to 200).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=200))]
        limit: u16,
        /// Every page, not only the first.
        #[arg(long, conflicts_with = "limit")]
        all: bool,
    },
    /// A document with its versions and comments.
    Show {
        /// The document's id (rv_…).
        review: String,
    },
    /// The heading sections of the latest version, with the ids `--section` takes.
    Outline {
        /// The document's id (rv_…).
        review: String,
    },
    /// The latest version's text, as comments quote it (a line break where blocks meet), or
    /// one section's (`--section`).
    Text {
        /// The document's id (rv_…).
        review: String,
        /// Only this heading section's text (subsections included; `reviews outline` lists
        /// the ids).
        #[arg(long)]
        section: Option<String>,
    },
    /// Write a document out: `w3c` (W3C Web Annotations, JSON-LD), `native` (lossless, with every
    /// version's HTML; editors and owners), `csv` (a row per comment and reply) or `markdown`
    /// (a readable report). To standard output, or to `--out FILE`.
    Export {
        /// The document's id (rv_…).
        review: String,
        /// w3c, native, csv or markdown.
        #[arg(long, value_parser = ["w3c", "native", "csv", "markdown"])]
        format: String,
        /// Write the file here (replaced if it exists) instead of to standard output.
        #[arg(long, short, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Open the document's review screen in the browser (or print its address).
    Open {
        /// The document's id (rv_…).
        review: String,
    },
    /// Upload an HTML file as a new document; prints its id and its review screen's address.
    Upload {
        /// The HTML file.
        file: PathBuf,
        /// The title [default: the HTML's <title>, else its first <h1>, else the file's name].
        #[arg(long)]
        title: Option<String>,
        /// A tag (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// A project code to link it to.
        #[arg(long)]
        project: Option<String>,
    },
    /// Upload an HTML file as the document's new version; comments follow their passages.
    AddVersion {
        /// The document's id (rv_…).
        review: String,
        /// The new version's HTML file.
        file: PathBuf,
        /// The new version's label [default: v2, v3, … by count].
        #[arg(long)]
        label: Option<String>,
    },
    /// Replace the latest version's HTML (a correction, not a new version).
    Replace {
        /// The document's id (rv_…).
        review: String,
        /// The corrected HTML file.
        file: PathBuf,
    },
    /// Rename a document.
    Title {
        /// The document's id (rv_…).
        review: String,
        /// The new title.
        title: String,
    },
    /// Show a document's tags, or change them: `--add`, `--remove`, or `--set` the whole list.
    Tags {
        /// The document's id (rv_…).
        review: String,
        /// Tags to add (repeat for more).
        #[arg(long = "add")]
        add: Vec<String>,
        /// Tags to take away (repeat for more).
        #[arg(long = "remove")]
        remove: Vec<String>,
        /// The whole list, comma-separated (empty to clear).
        #[arg(long, value_delimiter = ',', conflicts_with_all = ["add", "remove"])]
        set: Option<Vec<String>>,
    },
    /// Archive a document (hidden from lists unless asked), or `--undo`.
    Archive {
        /// The document's id (rv_…).
        review: String,
        /// Restore an archived document instead.
        #[arg(long)]
        undo: bool,
    },
    /// Delete a document with its versions and comments.
    Delete {
        /// The document's id (rv_…).
        review: String,
        /// Do not ask first (needed when not at a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// Show who may see a document, or change it: `--mode`, `--add EMAIL=ROLE`, `--remove EMAIL`.
    Share {
        /// The document's id (rv_…).
        review: String,
        /// link (everyone in the organization) or restricted (only those listed).
        #[arg(long)]
        mode: Option<String>,
        /// Give someone access: `EMAIL=viewer` or `EMAIL=editor` (repeat for more).
        #[arg(long = "add", value_name = "EMAIL=ROLE")]
        add: Vec<String>,
        /// Take someone's access away (repeat for more).
        #[arg(long = "remove", value_name = "EMAIL")]
        remove: Vec<String>,
    },
    /// Hand the document to another member, who becomes its owner.
    Owner {
        /// The document's id (rv_…).
        review: String,
        /// The new owner's email.
        email: String,
    },
    /// The people asked to review a document and their decisions; `add` or `remove` one.
    Reviewers {
        /// The document's id (rv_…).
        review: String,
        #[command(subcommand)]
        change: Option<ReviewersChange>,
    },
    /// Record your decision on the latest version (a newer one replaces your older one).
    Decide {
        /// The document's id (rv_…).
        review: String,
        /// approved, approved_with_changes, changes_requested or not_relevant.
        decision: String,
        /// A note with the decision.
        #[arg(long)]
        note: Option<String>,
        /// The version decided on (the latest; another is refused as stale, exit 5).
        #[arg(long, value_name = "VID")]
        version: Option<String>,
    },
    /// Finalize the review: every comment must be closed; until reopened it takes no
    /// comments, replies, runs or versions.
    Finalize {
        /// The document's id (rv_…).
        review: String,
    },
    /// Reopen a finalized review.
    Reopen {
        /// The document's id (rv_…).
        review: String,
    },
}

/// `reviews reviewers ID add|remove`.
#[derive(Subcommand)]
pub enum ReviewersChange {
    /// Ask someone who can read the document to review it (again: change the due date).
    Add {
        /// Their email.
        email: String,
        /// When it is due: a date (2026-12-01, the end of that day UTC) or an RFC 3339 time.
        #[arg(long, value_name = "DATE")]
        due: Option<String>,
    },
    /// Take a review request back (or decline your own).
    Remove {
        /// The reviewer's user id (usr_…; `reviews reviewers ID` lists them).
        user_id: String,
    },
}

pub async fn reviews(command: ReviewsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        ReviewsCommand::List {
            tag,
            archived,
            limit,
            all,
        } => {
            let query = ListQuery {
                tag,
                archived: archived.then_some(true),
                limit: Some(if all { PAGE } else { usize::from(limit) }),
                ..ListQuery::default()
            };
            if all {
                let (list, raw) = list_all(&client, query).await?;
                return output.raw(&raw, || print_list(&list.reviews));
            }
            let list = client.list_reviews(&query).await?;
            output.answer(&client, &list, |list| print_list(&list.reviews))
        }
        ReviewsCommand::Show { review } => {
            let review = client.review(&review, false).await?;
            output.answer(&client, &review, |review| {
                let versions: Vec<_> = review
                    .source
                    .versions
                    .iter()
                    .map(|v| v.label.as_str())
                    .collect();
                anstream::println!("{}  {}", paint(DIM, &review.review_id), review.title);
                println!("Owner:    {}", review.owner.display_name);
                println!("Versions: {}", versions.join(", "));
                if !review.tags.is_empty() {
                    println!("Tags:     {}", review.tags.join(", "));
                }
                println!(
                    "Review:   {}, {}",
                    review.workflow.state, review.workflow.outcome
                );
                println!("Comments: {}", review.comments.len());
                if !review.comments.is_empty() {
                    println!();
                    print_comments(&review.comments);
                }
            })
        }
        ReviewsCommand::Outline { review } => {
            let context = client.dom_context(&review, None).await?;
            output.answer(&client, &context, |context| {
                print_outline(&context.sections);
            })
        }
        ReviewsCommand::Text { review, section } => {
            text(&client, &review, section.as_deref(), output).await
        }
        ReviewsCommand::Export {
            review,
            format,
            out,
        } => {
            // The parser allows only the four words.
            let format = ExportFormat::parse(&format).unwrap_or(ExportFormat::Markdown);
            let bytes = client.export_review(&review, format).await?;
            if let Some(path) = out {
                std::fs::write(&path, &bytes).map_err(|error| {
                    Failure::error(format!("writing {}: {}", path.display(), io_reason(&error)))
                })?;
                eprintln!(
                    "Wrote {} ({}).",
                    path.display(),
                    indicatif::HumanBytes(bytes.len() as u64)
                );
            } else {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(&bytes)
                    .and_then(|()| stdout.flush())
                    .map_err(|error| {
                        Failure::error(format!("writing the export: {}", io_reason(&error)))
                    })?;
            }
            Ok(())
        }
        ReviewsCommand::Open { review } => {
            let review = client.review(&review, false).await?;
            let url = format!("{}/reviews/{}", client.base_url(), review.review_id);
            if output.wants_json() {
                let shown = json!({ "reviewId": review.review_id, "url": url });
                return output.show(&shown, |_| {});
            }
            if !open_in_browser(&url) {
                println!("{url}");
            }
            Ok(())
        }
        ReviewsCommand::Upload {
            file,
            title,
            tags,
            project,
        } => {
            let file = html_file(&file)?;
            let fields = DocumentUpload {
                title,
                label: None,
                project,
                tags,
            };
            let progress = spinner(format!("Uploading {} ({})", file.name, size(&file)));
            let review = client.import_html(&file, &fields).await;
            progress.finish_and_clear();
            let review = review?;
            output.answer(&client, &review, |review| {
                println!("Uploaded {} as {}.", review.title, review.review_id);
                println!("{}/reviews/{}", client.base_url(), review.review_id);
            })
        }
        ReviewsCommand::AddVersion {
            review,
            file,
            label,
        } => {
            upload_version(
                &client,
                &review,
                &file,
                VersionMode::AddVersion,
                label,
                output,
            )
            .await
        }
        ReviewsCommand::Replace { review, file } => {
            upload_version(&client, &review, &file, VersionMode::Replace, None, output).await
        }
        ReviewsCommand::Title { review, title } => {
            let review = client
                .rename_review(&review, &TitleChange { title })
                .await?;
            output.answer(&client, &review, |review| {
                println!("Renamed to {}.", review.title);
            })
        }
        ReviewsCommand::Tags {
            review,
            add,
            remove,
            set,
        } => {
            let current = client.review(&review, false).await?;
            let tags = match set {
                Some(tags) => tags.into_iter().filter(|t| !t.is_empty()).collect(),
                None if add.is_empty() && remove.is_empty() => {
                    return output.answer(&client, &current.tags, |tags| {
                        println!("{}", tags.join(", "));
                    });
                }
                None => {
                    let mut tags = current.tags;
                    tags.retain(|tag| !remove.contains(tag));
                    tags.extend(
                        add.into_iter()
                            .filter(|tag| !tags.contains(tag))
                            .collect::<Vec<_>>(),
                    );
                    tags
                }
            };
            let change = MetaChange {
                tags: Some(tags),
                archived: None,
            };
            let review = client.change_meta(&review, &change).await?;
            output.answer(&client, &review.tags, |tags| {
                println!("Tags: {}", tags.join(", "));
            })
        }
        ReviewsCommand::Archive { review, undo } => {
            let change = MetaChange {
                tags: None,
                archived: Some(!undo),
            };
            let review = client.change_meta(&review, &change).await?;
            output.answer(&client, &review, |review| {
                let done = if review.archived {
                    "Archived"
                } else {
                    "Restored"
                };
                println!("{done} {}.", review.title);
            })
        }
        ReviewsCommand::Delete { review, yes } => {
            if !yes {
                let shown = client.review(&review, false).await?;
                confirm(&format!(
                    "Delete “{}” with its {} and {}?",
                    shown.title,
                    counted(shown.source.versions.len(), "version"),
                    counted(shown.comments.len(), "comment")
                ))?;
            }
            let deleted = client.delete_review(&review).await?;
            output.answer(&client, &deleted, |_| println!("Deleted {review}."))
        }
        ReviewsCommand::Share {
            review,
            mode,
            add,
            remove,
        } => share(&client, &review, mode, add, remove, output).await,
        ReviewsCommand::Owner { review, email } => {
            let review = client
                .transfer_owner(&review, &OwnerChange { email })
                .await?;
            output.answer(&client, &review, |review| {
                println!("{} now owns {}.", review.owner.display_name, review.title);
            })
        }
        ReviewsCommand::Reviewers { review, change } => {
            let workflow = match change {
                None => {
                    let shown = client.review(&review, false).await?;
                    let raw = workflow_part(&client)?;
                    return output.raw(&raw, || print_workflow(&shown.workflow));
                }
                Some(ReviewersChange::Add { email, due }) => {
                    let input = NewReviewer { email, due_at: due };
                    client.add_reviewer(&review, &input).await?
                }
                Some(ReviewersChange::Remove { user_id }) => {
                    client.remove_reviewer(&review, &user_id).await?
                }
            };
            output.answer(&client, &workflow, print_workflow)
        }
        ReviewsCommand::Decide {
            review,
            decision,
            note,
            version,
        } => {
            let kind = DecisionKind::parse(&decision).ok_or_else(|| {
                Failure::usage(format!(
                    "`{decision}`: decide approved, approved_with_changes, changes_requested \
                     or not_relevant"
                ))
            })?;
            let input = NewDecision {
                decision: kind,
                version_id: version,
                body: note,
            };
            let written = client.decide(&review, &input).await?;
            output.answer(&client, &written, |written| {
                println!(
                    "Decided {} on {}; the review's outcome is {}.",
                    written.decision.decision,
                    written.decision.version_id,
                    written.workflow.outcome
                );
            })
        }
        ReviewsCommand::Finalize { review } => {
            let workflow = client.finalize_review(&review).await?;
            output.answer(&client, &workflow, |workflow| {
                println!("Finalized {review} ({}).", workflow.outcome);
            })
        }
        ReviewsCommand::Reopen { review } => {
            let workflow = client.reopen_review(&review).await?;
            output.answer(&client, &workflow, |_| println!("Reopened {review}."))
        }
    }
}

/// `{"workflow": …}` from the document in the client's last answer, as the server sent it.
fn workflow_part(client: &Client) -> Result<String, Failure> {
    #[derive(serde::Deserialize)]
    struct Answer {
        review: Part,
    }
    #[derive(serde::Deserialize)]
    struct Part {
        workflow: Box<serde_json::value::RawValue>,
    }
    let bytes = client
        .take_answer()
        .ok_or_else(|| Failure::error("unexpected answer from the server: none was kept"))?;
    let answer: Answer = serde_json::from_slice(&bytes)
        .map_err(|e| Failure::error(format!("unexpected answer from the server: {e}")))?;
    Ok(format!(
        r#"{{"workflow":{}}}"#,
        answer.review.workflow.get()
    ))
}

/// The workflow as a person reads it: state and outcome, then each reviewer with their due
/// date and decision, then the decisions of people who were not asked.
fn print_workflow(workflow: &WorkflowView) {
    println!("Review {}, outcome {}.", workflow.state, workflow.outcome);
    if let (Some(at), Some(by)) = (&workflow.finalized_at, &workflow.finalized_by) {
        println!("Finalized {at} by {}.", by.display_name);
    }
    if workflow.reviewers.is_empty() {
        println!("No reviewers asked.");
    }
    let decided = |decision: Option<&DecisionView>| {
        decision.map_or_else(
            || "no decision".to_string(),
            |d| {
                let stale = if d.stale { " (stale)" } else { "" };
                format!("{}{stale}", d.decision)
            },
        )
    };
    for reviewer in &workflow.reviewers {
        let due = reviewer
            .due_at
            .as_ref()
            .map(|due| format!(", due {due}"))
            .unwrap_or_default();
        anstream::println!(
            "  {}  {}{due}: {}",
            paint(DIM, &reviewer.user.id),
            reviewer.user.display_name,
            decided(reviewer.decision.as_ref())
        );
    }
    for decision in &workflow.decisions {
        if workflow
            .reviewers
            .iter()
            .all(|r| r.user.id != decision.user.id)
        {
            anstream::println!(
                "  {}  {} (not asked): {}",
                paint(DIM, &decision.user.id),
                decision.user.display_name,
                decided(Some(decision))
            );
        }
    }
}

/// Every page of a listing, with a count on the terminal while it runs; also as JSON, the
/// pages' documents as the server sent them in one answer of the same shape.
async fn list_all(client: &Client, mut query: ListQuery) -> Result<(ReviewList, String), Failure> {
    let progress = spinner("Listing documents");
    let mut all = ReviewList {
        reviews: Vec::new(),
        next_cursor: None,
    };
    let mut json: Vec<String> = Vec::new();
    loop {
        let page = client.list_reviews(&query).await;
        let page = match page {
            Ok(page) => page,
            Err(error) => {
                progress.finish_and_clear();
                return Err(error.into());
            }
        };
        let answer: Option<Page> = client
            .take_answer()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let reviews = answer.into_iter().flat_map(|page| page.reviews);
        json.extend(reviews.map(|raw| raw.get().to_string()));
        all.reviews.extend(page.reviews);
        progress.set_message(format!("Listing documents: {}", all.reviews.len()));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    progress.finish_and_clear();
    let raw = format!(r#"{{"reviews":[{}],"nextCursor":null}}"#, json.join(","));
    Ok((all, raw))
}

/// A page of `GET /api/reviews`, its documents as the server sent them.
#[derive(serde::Deserialize)]
struct Page {
    reviews: Vec<Box<serde_json::value::RawValue>>,
}

/// Sections indented by level, each with its id.
fn print_outline(sections: &[Section]) {
    if sections.is_empty() {
        println!("No headings: comment on a --quote, or on the whole document.");
    }
    let width = sections
        .iter()
        .map(|s| s.id.chars().count())
        .max()
        .unwrap_or(0);
    for section in sections {
        let indent = "  ".repeat(usize::from(section.level.saturating_sub(1)));
        anstream::println!(
            "{}  {indent}{}",
            paint(DIM, format!("{:<width$}", section.id)),
            section.text
        );
    }
}

/// `reviews text`: the latest version's text (or a section's), read from its HTML with the
/// extraction the server anchors with, so a passage copied from it is a quote that anchors.
async fn text(client: &Client, review: &str, section: Option<&str>, output: &Output) -> Outcome {
    let context = client.dom_context(review, None).await?;
    let html = client.bundle(review, &context.version_id).await?;
    let extracted = docreview_text::extract(&html);
    let text = docreview_text::IndexedText::new(extracted.text);
    let (start, end) = match section {
        None => (0, text.char_len()),
        Some(id) => {
            let found = context
                .sections
                .iter()
                .find(|s| s.id == id)
                .ok_or_else(|| {
                    Failure::new(
                        6,
                        format!(
                            "no section `{id}` in the latest version of {review}; \
                         `docreview reviews outline {review}` lists them"
                        ),
                    )
                })?;
            (found.start, found.end)
        }
    };
    let readable = docreview_text::readable(&text, &extracted.block_breaks, start, end);
    let shown = json!({
        "reviewId": context.review_id,
        "versionId": context.version_id,
        "sectionId": section,
        "start": start.min(text.char_len()),
        "end": end.min(text.char_len()),
        "text": readable,
    });
    output.show(&shown, |_| println!("{}", readable.trim_end()))
}

fn print_list(reviews: &[ReviewSummaryView]) {
    if reviews.is_empty() {
        println!("No documents. Upload one with `docreview reviews upload FILE`.");
    }
    for row in reviews {
        anstream::println!(
            "{}  {:>3} open / {:>3}  {}{}",
            paint(DIM, &row.review_id),
            row.open_comment_count,
            row.comment_count,
            row.title,
            if row.archived { " (archived)" } else { "" }
        );
    }
}

async fn upload_version(
    client: &Client,
    review: &str,
    path: &Path,
    mode: VersionMode,
    label: Option<String>,
    output: &Output,
) -> Outcome {
    let file = html_file(path)?;
    let upload = VersionUpload {
        mode,
        label,
        base_version_id: None,
    };
    let progress = spinner(format!("Uploading {} ({})", file.name, size(&file)));
    let review = client.import_version(review, &file, &upload).await;
    progress.finish_and_clear();
    let review: ReviewView = review?;
    output.answer(client, &review, |review| {
        let latest = review
            .source
            .versions
            .last()
            .map_or("", |v| v.label.as_str());
        let done = if mode == VersionMode::Replace {
            "Replaced the latest version of"
        } else {
            "Added a version to"
        };
        println!("{done} {} (now {latest}).", review.title);
    })
}

async fn share(
    client: &Client,
    review: &str,
    mode: Option<String>,
    add: Vec<String>,
    remove: Vec<String>,
    output: &Output,
) -> Outcome {
    let mode = mode
        .map(|word| {
            AccessMode::parse(&word)
                .ok_or_else(|| Failure::usage(format!("--mode `{word}`: use link or restricted")))
        })
        .transpose()?;
    let grants = add
        .iter()
        .map(|entry| {
            let (email, role) = entry.split_once('=').unwrap_or((entry, "viewer"));
            let role = GrantRole::parse(role).ok_or_else(|| {
                Failure::usage(format!("--add {entry}: the role is viewer or editor"))
            })?;
            Ok(AllowedUserEntry {
                email: email.to_string(),
                role,
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let sharing: SharingView = if mode.is_none() && grants.is_empty() && remove.is_empty() {
        client.sharing(review).await?
    } else {
        let mut allowed = client.sharing(review).await?.allowed_users;
        let changed = |email: &str| {
            grants.iter().any(|g| g.email.eq_ignore_ascii_case(email))
                || remove.iter().any(|r| r.eq_ignore_ascii_case(email))
        };
        allowed.retain(|entry| !changed(&entry.email));
        allowed.extend(grants);
        let change = SharingChange {
            mode,
            allowed_users: Some(allowed),
        };
        client.change_sharing(review, &change).await?
    };
    output.answer(client, &sharing, |sharing| {
        println!("Mode: {}", sharing.mode);
        for entry in &sharing.allowed_users {
            println!("  {}  {}", entry.email, entry.role);
        }
    })
}

fn html_file(path: &Path) -> Result<HtmlFile, Failure> {
    let bytes = std::fs::read(path).map_err(|error| {
        Failure::error(format!("reading {}: {}", path.display(), io_reason(&error)))
    })?;
    let name = path.file_name().map_or_else(
        || "document.html".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(HtmlFile { name, bytes })
}

fn size(file: &HtmlFile) -> String {
    indicatif::HumanBytes(file.bytes.len() as u64).to_string()
}

/// Asks a person to confirm; refused (usage) when there is no one at a terminal to ask.
fn confirm(question: &str) -> Outcome {
    if !interactive() {
        return Err(Failure::usage(format!(
            "{question} Add --yes to do it without asking."
        )));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|error| Failure::error(format!("reading the answer: {error}")))?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(Failure::error("not done"))
    }
}
