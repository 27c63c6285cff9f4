//! `docreview mcp`: a Model Context Protocol server over stdio (the official Rust SDK, rmcp)
//! for agents, acting with the command-line client's stored credentials or `DOCREVIEW_TOKEN`.
//!
//! Four tools, each with a `method`, in the pattern of GitHub's MCP server: read, then write a
//! run's comments, then complete it. Answers are trimmed JSON of at most about 25,000
//! characters, with a `nextCursor` to continue; errors say what to do instead.

mod stdio;

use std::sync::{Arc, Mutex, PoisonError};

use docreview_client::api::{
    BatchComment, CommentSearchQuery, CommentStatus, CommentView, DocSearchQuery, FinishRun,
    ListQuery, MAX_BATCH_COMMENTS, NewReply, NewRunComments, NotificationQuery, ReviewView,
    RunStatus, StartRun, StatusChange, TextEdit,
};
use docreview_client::{Client, DocumentUpload, Error, HtmlFile, Place, VersionUpload};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most characters an answer carries; longer lists are paged.
const ANSWER_LIMIT: usize = 25_000;
/// Comments per page of `reviews_read` `comments`, before the size limit trims further.
const PAGE: usize = 50;
/// Characters per page of `reviews_read` `text` unless the caller asks for fewer.
const TEXT_PAGE: usize = 10_000;

/// A version's id and its text in code points.
type VersionText = (String, Arc<[char]>);

#[derive(Clone)]
pub struct DocreviewMcp {
    client: Client,
    /// The text of the version read last, by version id (versions never change): paging
    /// through a document fetches and parses it once, not once a page.
    last_text: Arc<Mutex<Option<VersionText>>>,
    #[allow(dead_code)] // read by the `tool_handler` macro
    tool_router: ToolRouter<Self>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ReadMethod {
    /// Documents you can see (optional `q` to search their text, `tag`, `cursor`).
    List,
    /// One document: title, versions, runs and comment counts (`review_id`).
    Get,
    /// The heading sections of the latest version, with their ids and text ranges (`review_id`).
    Outline,
    /// The latest version's text, of a section (`section_id`) or the whole document, paged by
    /// `offset` and `limit` (characters; positions are those anchors use).
    Text,
    /// A document's comments with their threads (`review_id`; optional `status`, `cursor`).
    Comments,
    /// Comments and replies matching words `q` (optional `review_id`, `status`, `cursor`).
    Search,
    /// Your unread notifications (mentions, replies, comments on your documents), newest
    /// first (`cursor`).
    Notifications,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct ReadArgs {
    method: ReadMethod,
    review_id: Option<String>,
    /// Words to search for (`list`).
    q: Option<String>,
    tag: Option<String>,
    /// `open` or `closed` (`comments`, `search`).
    status: Option<String>,
    /// `nextCursor` of the previous answer.
    cursor: Option<String>,
    /// A section's id from `outline` (`text`).
    section_id: Option<String>,
    /// Characters to skip (`text`; `nextOffset` of the previous answer).
    offset: Option<usize>,
    /// Characters to return (`text`; at most 10,000).
    limit: Option<usize>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum RunMethod {
    /// Start a review run on the latest version (`review_id`, optional `title`).
    Start,
    /// Write comments in the run (`review_id`, `run_id`, `comments`), in batches of up to 200:
    /// the answer lists the ids written and, per refused item, why, with the passages a quote
    /// that was not found (or occurs more than once) may mean.
    Comment,
    /// Complete the run with a `summary`: its comments stop being drafts.
    Complete,
    /// Cancel the run: its comments are dropped.
    Cancel,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct CommentItem {
    body: String,
    /// The passage, exactly as it reads in the document's text.
    quote: Option<String>,
    /// Text just before the passage, when the passage occurs more than once.
    prefix: Option<String>,
    suffix: Option<String>,
    /// A heading section's id from `outline`, for a comment on a whole section.
    section_id: Option<String>,
    /// note, revise, add, delete, needs_review, consult or none (default note).
    category: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct RunArgs {
    method: RunMethod,
    review_id: String,
    run_id: Option<String>,
    title: Option<String>,
    summary: Option<String>,
    #[serde(default)]
    comments: Vec<CommentItem>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CommentMethod {
    /// Reply to a comment (`body`).
    Reply,
    /// Resolve a comment.
    Resolve,
    /// Reopen a resolved comment.
    Reopen,
    /// Change your comment's text (`body`).
    Edit,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct CommentArgs {
    method: CommentMethod,
    review_id: String,
    comment_id: String,
    body: Option<String>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum DocumentMethod {
    /// A new document from `html` (optional `title`).
    Upload,
    /// A new version of `review_id` from `html` (optional `label`).
    AddVersion,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct DocumentArgs {
    method: DocumentMethod,
    html: String,
    review_id: Option<String>,
    title: Option<String>,
    label: Option<String>,
}

type ToolResult = Result<CallToolResult, ErrorData>;

#[tool_router]
impl DocreviewMcp {
    pub fn new(client: Client) -> Self {
        DocreviewMcp {
            client,
            last_text: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Read documents and their comments. method: list (q searches the text) | \
            get | outline (sections) | text (section_id or whole; offset/limit) | comments \
            (status, cursor) | search (q in comments) | notifications (unread). Answers are JSON; pass nextCursor back as \
            cursor (or nextOffset as offset) for more.",
        annotations(read_only_hint = true)
    )]
    async fn reviews_read(&self, Parameters(args): Parameters<ReadArgs>) -> ToolResult {
        let review_id = || {
            args.review_id
                .clone()
                .ok_or_else(|| "this method needs review_id".to_string())
        };
        let answer = match args.method {
            ReadMethod::List => match args.q.clone() {
                Some(q) => self
                    .client
                    .search_docs(&DocSearchQuery {
                        q: Some(q),
                        cursor: args.cursor.clone(),
                        ..DocSearchQuery::default()
                    })
                    .await
                    .map(|found| json!(found)),
                None => self
                    .client
                    .list_reviews(&ListQuery {
                        tag: args.tag.clone(),
                        cursor: args.cursor.clone(),
                        ..ListQuery::default()
                    })
                    .await
                    .map(|list| json!(list)),
            },
            ReadMethod::Get => match review_id() {
                Ok(id) => self.client.review(&id, false).await.map(|r| summary(&r)),
                Err(message) => return Ok(refusal(&message)),
            },
            ReadMethod::Outline => match review_id() {
                Ok(id) => self.client.dom_context(&id, None).await.map(|c| json!(c)),
                Err(message) => return Ok(refusal(&message)),
            },
            ReadMethod::Text => {
                let page = match review_id() {
                    Ok(id) => self.text(&id, &args).await,
                    Err(message) => Err(message),
                };
                return Ok(page.map_or_else(|message| refusal(&message), |page| respond(Ok(page))));
            }
            ReadMethod::Search => {
                let Some(q) = args.q.clone() else {
                    return Ok(refusal("search needs q (words to find)"));
                };
                let status = match args.status.as_deref().map(CommentStatus::parse) {
                    Some(None) => return Ok(refusal("status must be open or closed")),
                    Some(status) => status,
                    None => None,
                };
                self.client
                    .search_comments(&CommentSearchQuery {
                        q: Some(q),
                        review_id: args.review_id.clone(),
                        status,
                        cursor: args.cursor.clone(),
                        ..CommentSearchQuery::default()
                    })
                    .await
                    .map(|found| json!(found))
            }
            ReadMethod::Notifications => self
                .client
                .notifications(&NotificationQuery {
                    unread: Some(true),
                    limit: Some(50),
                    cursor: args.cursor.clone(),
                })
                .await
                .map(|list| json!(list)),
            ReadMethod::Comments => match review_id() {
                Ok(id) => self.client.review(&id, false).await.map(|review| {
                    comments_page(
                        &review.comments,
                        args.status.as_deref(),
                        args.cursor.as_deref(),
                    )
                }),
                Err(message) => return Ok(refusal(&message)),
            },
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "Operate a review run: method start | comment | complete | cancel. A run's \
            comments are drafts until it completes. For comment, send comments: [{body, quote \
            (exact text) with optional prefix/suffix, or section_id, category}]."
    )]
    async fn run_write(&self, Parameters(args): Parameters<RunArgs>) -> ToolResult {
        let client = &self.client;
        let run_id = || {
            args.run_id
                .clone()
                .ok_or_else(|| "this method needs run_id (from start)".to_string())
        };
        let answer = match args.method {
            RunMethod::Start => client
                .start_run(
                    &args.review_id,
                    &StartRun {
                        title: args.title.clone(),
                        ..StartRun::default()
                    },
                )
                .await
                .map(|run| json!(run)),
            RunMethod::Comment => {
                let run = match run_id() {
                    Ok(run) => run,
                    Err(message) => return Ok(refusal(&message)),
                };
                if args.comments.is_empty() {
                    return Ok(refusal(
                        "comment needs comments: [{body, quote or section_id}]",
                    ));
                }
                self.comment_in_run(&args.review_id, &run, &args.comments)
                    .await
            }
            RunMethod::Complete | RunMethod::Cancel => {
                let run = match run_id() {
                    Ok(run) => run,
                    Err(message) => return Ok(refusal(&message)),
                };
                let status = if matches!(args.method, RunMethod::Complete) {
                    RunStatus::Completed
                } else {
                    RunStatus::Cancelled
                };
                client
                    .finish_run(
                        &args.review_id,
                        &run,
                        &FinishRun {
                            status,
                            summary: args.summary.clone(),
                            base_comments_revision: None,
                        },
                    )
                    .await
                    .map(|run| json!(run))
            }
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "Act on one comment: method reply | resolve | reopen | edit (reply and \
        edit need body)."
    )]
    async fn comment_write(&self, Parameters(args): Parameters<CommentArgs>) -> ToolResult {
        let client = &self.client;
        let (review, comment) = (args.review_id.as_str(), args.comment_id.as_str());
        let body = || {
            args.body
                .clone()
                .ok_or_else(|| "this method needs body".to_string())
        };
        let answer = match args.method {
            CommentMethod::Reply => match body() {
                Ok(body) => client
                    .reply(
                        review,
                        comment,
                        &NewReply {
                            body,
                            run_id: None,
                            base_comments_revision: None,
                        },
                    )
                    .await
                    .map(|written| json!(written)),
                Err(message) => return Ok(refusal(&message)),
            },
            CommentMethod::Edit => match body() {
                Ok(body) => client
                    .edit_comment(
                        review,
                        comment,
                        &TextEdit {
                            body,
                            base_comments_revision: None,
                        },
                    )
                    .await
                    .map(|written| json!(written)),
                Err(message) => return Ok(refusal(&message)),
            },
            CommentMethod::Resolve | CommentMethod::Reopen => {
                let status = if matches!(args.method, CommentMethod::Resolve) {
                    CommentStatus::Closed
                } else {
                    CommentStatus::Open
                };
                client
                    .set_status(
                        review,
                        comment,
                        &StatusChange {
                            status,
                            base_comments_revision: None,
                        },
                    )
                    .await
                    .map(|written| json!(written))
            }
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "Upload HTML: method upload (a new document) | add_version (a new \
        version of review_id)."
    )]
    async fn document_write(&self, Parameters(args): Parameters<DocumentArgs>) -> ToolResult {
        let file = HtmlFile {
            name: "document.html".into(),
            bytes: args.html.clone().into_bytes(),
        };
        let answer = match args.method {
            DocumentMethod::Upload => {
                let fields = DocumentUpload {
                    title: args.title.clone(),
                    ..DocumentUpload::default()
                };
                self.client.import_html(&file, &fields).await
            }
            DocumentMethod::AddVersion => {
                let Some(review) = args.review_id.as_deref() else {
                    return Ok(refusal("add_version needs review_id"));
                };
                let upload = VersionUpload {
                    mode: docreview_client::api::VersionMode::AddVersion,
                    label: args.label.clone(),
                    base_version_id: None,
                };
                self.client.import_version(review, &file, &upload).await
            }
        };
        Ok(respond(answer.map(|review| summary(&review))))
    }
}

impl DocreviewMcp {
    /// The latest version's text, of one section or the whole document, one page of it.
    async fn text(&self, review_id: &str, args: &ReadArgs) -> Result<Value, String> {
        let context = self.client.dom_context(review_id, None).await;
        let context = context.map_err(|error| way_out(&error))?;
        let text = self.version_text(review_id, &context.version_id).await?;
        let (from, to) = match &args.section_id {
            None => (0, text.len()),
            Some(id) => match context.sections.iter().find(|s| &s.id == id) {
                Some(section) => (section.start.min(text.len()), section.end.min(text.len())),
                None => {
                    return Err(format!(
                        "no section `{id}` in the latest version; method outline lists them"
                    ));
                }
            },
        };
        let start = from.saturating_add(args.offset.unwrap_or(0)).min(to);
        let end = start
            .saturating_add(args.limit.unwrap_or(TEXT_PAGE).min(TEXT_PAGE))
            .min(to);
        Ok(json!({
            "versionId": context.version_id,
            "sectionId": args.section_id,
            "start": start,
            "end": end,
            "text": text[start..end].iter().collect::<String>(),
            "nextOffset": (end < to).then(|| end - from),
        }))
    }

    /// A version's text as anchors count it (code points), from the one-entry cache or the
    /// server.
    async fn version_text(&self, review_id: &str, version_id: &str) -> Result<Arc<[char]>, String> {
        let cached = self
            .last_text
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some((id, text)) = cached
            && id == version_id
        {
            return Ok(text);
        }
        let html = self.client.bundle(review_id, version_id).await;
        let html = html.map_err(|error| way_out(&error))?;
        // The same extraction the server anchors with, so positions agree with anchors.
        let text: Arc<[char]> = docreview_text::extract(&html).text.chars().collect();
        *self
            .last_text
            .lock()
            .unwrap_or_else(PoisonError::into_inner) =
            Some((version_id.to_string(), Arc::clone(&text)));
        Ok(text)
    }

    /// Writes comments in a run, 200 per request, and reports per item what became of it.
    async fn comment_in_run(
        &self,
        review_id: &str,
        run_id: &str,
        items: &[CommentItem],
    ) -> Result<Value, Error> {
        let mut written = Vec::new();
        let mut failed = Vec::new();
        let mut revision = None;
        for (chunk, items) in items.chunks(MAX_BATCH_COMMENTS).enumerate() {
            let first = chunk * MAX_BATCH_COMMENTS;
            let batch = NewRunComments {
                comments: items
                    .iter()
                    .map(|item| batch_comment(item).into())
                    .collect(),
                base_comments_revision: None,
                atomic: false,
            };
            let answer = self
                .client
                .add_run_comments(review_id, run_id, &batch)
                .await?;
            revision = Some(answer.comments_revision);
            written.extend(answer.written.iter().map(|w| {
                json!({ "index": first + w.index, "id": w.comment.id, "state": w.comment.anchor.state })
            }));
            failed.extend(answer.failed.into_iter().map(|mut f| {
                f.index += first;
                json!(f)
            }));
        }
        let mut answer =
            json!({ "written": written, "failed": failed, "commentsRevision": revision });
        if !failed.is_empty() {
            answer["next"] = json!(
                "Send the failed items again with a quote copied exactly from the text; \
                 a candidate's quote (with its prefix/suffix) names one passage."
            );
        }
        Ok(answer)
    }
}

#[tool_handler]
impl ServerHandler for DocreviewMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "docreview: review HTML documents. Read with reviews_read (list, get, outline, \
             comments). Review in a run: run_write start, then comment (quotes copied exactly \
             from the text), then complete with a summary. Act on existing comments with \
             comment_write.",
        )
    }
}

/// Serves MCP over stdio until the client hangs up.
pub async fn serve(client: Client) -> anyhow::Result<()> {
    let service = DocreviewMcp::new(client)
        .serve(stdio::transport(tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    service.waiting().await?;
    Ok(())
}

/// One item of a batch; the server checks its category and place, item by item.
fn batch_comment(item: &CommentItem) -> BatchComment {
    let place = Place {
        quote: item.quote.clone(),
        prefix: item.prefix.clone(),
        suffix: item.suffix.clone(),
        section_id: item.section_id.clone(),
    };
    BatchComment {
        body: item.body.clone(),
        category: item.category.clone(),
        locator: Some(place.locator()),
    }
}

/// What an agent needs of a document, without its comments' full text.
fn summary(review: &ReviewView) -> Value {
    let open = review
        .comments
        .iter()
        .filter(|c| c.status == CommentStatus::Open)
        .count();
    json!({
        "reviewId": review.review_id,
        "title": review.title,
        "role": review.role,
        "latestVersionId": review.latest_version_id,
        "versions": review.source.versions,
        "commentsRevision": review.comments_revision,
        "comments": { "total": review.comments.len(), "open": open },
        "runs": review.ai_review_runs,
        "tags": review.tags,
    })
}

/// A page of comments (from `cursor`, an offset) that fits the answer limit.
fn comments_page(comments: &[CommentView], status: Option<&str>, cursor: Option<&str>) -> Value {
    let chosen: Vec<&CommentView> = comments
        .iter()
        .filter(|c| status.is_none_or(|s| c.status.as_str() == s))
        .collect();
    let start = cursor
        .and_then(|c| c.parse::<usize>().ok())
        .unwrap_or(0)
        .min(chosen.len());
    let mut page: Vec<Value> = Vec::new();
    let mut size = 0;
    for comment in chosen[start..].iter().take(PAGE) {
        let item = json!({
            "id": comment.id,
            "status": comment.status,
            "category": comment.category,
            "author": comment.author.display_name,
            "body": comment.body,
            "quote": comment.anchor.quote.as_ref().map(|q| &q.exact),
            "sectionId": comment.anchor.section_id,
            "anchor": comment.anchor.state,
            "provisional": comment.provisional,
            "replies": comment.thread.iter().map(|m| json!({ "author": m.author.display_name, "body": m.body })).collect::<Vec<_>>(),
        });
        size += item.to_string().len();
        if size > ANSWER_LIMIT - 500 && !page.is_empty() {
            break;
        }
        page.push(item);
    }
    let end = start + page.len();
    json!({
        "comments": page,
        "total": chosen.len(),
        "nextCursor": (end < chosen.len()).then(|| end.to_string()),
    })
}

fn respond(answer: Result<Value, Error>) -> CallToolResult {
    match answer {
        Ok(value) => {
            let mut text = value.to_string();
            if text.len() > ANSWER_LIMIT {
                let mut cut = ANSWER_LIMIT;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str("… (trimmed: ask for less, or page with cursor)");
            }
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(error) => refusal(&way_out(&error)),
    }
}

fn refusal(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// An error with what to do about it.
fn way_out(error: &Error) -> String {
    let hint = match error.code() {
        Some("comments revision conflict") => " Read the comments again, then retry.",
        Some("stale_target_version") => {
            " A newer version arrived: read the document again and start a new run on it."
        }
        Some("invalid_request") if error.to_string().contains("quote") => {
            " Copy the quote exactly from the document's text (reviews_read get/outline), or add \
             prefix/suffix when it occurs more than once."
        }
        Some("unauthorized") => " Sign in again: `docreview auth login`.",
        Some("not_found") => " Check the id with reviews_read list.",
        _ => "",
    };
    format!("{error}{hint}")
}
