//! `docreview mcp`: a Model Context Protocol server over stdio (the official Rust SDK, rmcp)
//! for agents, acting with the command-line client's stored credentials or `DOCREVIEW_TOKEN`.
//!
//! Four tools, each with a `method`, in the pattern of GitHub's MCP server: read, then write a
//! run's comments, then complete it. Every answer is whole JSON of at most 25,000 characters
//! (`answer`); what does not fit comes with a cursor or an offset for the rest. Arguments are
//! read strictly (`args`); refusals are JSON that say what to do instead.

mod answer;
mod args;
mod stdio;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use docreview_client::api::{
    ApplySuggestions, AssigneeChange, DecisionKind, Emoji, NewDecision, ReactionView, WorkflowView,
};
use docreview_client::api::{
    BatchComment, BatchFailure, BatchItemError, CommentSearchQuery, CommentStatus, CommentView,
    DocSearchQuery, FindQuery, FinishRun, ListQuery, Locator, MAX_BATCH_COMMENTS, NewReply,
    NewRunComments, NotificationQuery, Position, Quote, QuoteCandidate, ReviewView, RunStatus,
    RunView, StartRun, StatusChange, TextEdit,
};
use docreview_client::{Client, DocumentUpload, Error, HtmlFile, VersionUpload};
use docreview_text::IndexedText;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde_json::{Value, json};

use answer::{
    ANSWER_LIMIT, Cursor, escaped_chars, fill, json_chars, page_end, refusal_value, shortened,
};
use args::{
    CommentArgs, CommentItem, CommentMethod, DocumentArgs, DocumentMethod, ReadArgs, ReadMethod,
    RunArgs, RunMethod,
};

/// Characters of text per page unless the caller asks for fewer (fewer when escapes make the
/// JSON longer than the answer limit).
const TEXT_PAGE: usize = 20_000;
/// Items asked of the API per page (fewer are asked when they do not fit an answer).
const API_PAGE: usize = 50;
/// How much of a comment's body and quote, of a reply, and of a heading or a run's summary a
/// listing shows; `thread`, `text` and `get` read them whole.
const BODY_SHOWN: usize = 1_000;
const QUOTE_SHOWN: usize = 300;
const REPLY_SHOWN: usize = 300;
const REPLIES_SHOWN: usize = 3;
const HEADING_SHOWN: usize = 200;
const SUMMARY_SHOWN: usize = 1_000;
/// The size a failed batch item may take with its candidates (an answer holds a few).
const FAILURE_CHARS: usize = 6_000;
/// How many batch answers are kept for `results` to page through.
const BATCHES_KEPT: usize = 16;

/// A version's text as anchors count it (code points), with where its blocks meet.
struct VersionText {
    version_id: String,
    text: IndexedText,
    breaks: Vec<usize>,
}

/// The answer to a batch of comments, kept so `results` can page through it.
struct StoredBatch {
    key: usize,
    failed: Vec<Value>,
    written: Vec<Value>,
    head: Value,
}

#[derive(Default)]
struct Batches {
    next_key: usize,
    kept: VecDeque<Arc<StoredBatch>>,
}

#[derive(Clone)]
pub struct DocreviewMcp {
    client: Client,
    /// The text of the version read last (versions never change): paging through a document
    /// fetches and parses it once, not once a page.
    last_text: Arc<Mutex<Option<Arc<VersionText>>>>,
    batches: Arc<Mutex<Batches>>,
    #[allow(dead_code)] // read by the `tool_handler` macro
    tool_router: ToolRouter<Self>,
}

/// An answer, or a refusal (both JSON).
type Answer = Result<Value, Value>;
type ToolResult = Result<CallToolResult, ErrorData>;

/// A tool's input schema from its arguments' struct (`additionalProperties: false`).
fn schema<T: schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|error| panic!("the arguments' schema is an object: {error}"))
}

#[tool_router]
impl DocreviewMcp {
    pub fn new(client: Client) -> Self {
        DocreviewMcp {
            client,
            last_text: Arc::default(),
            batches: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Read documents and comments. Answers are JSON of at most 25000 \
            characters: for the rest, send nextCursor back as cursor (same method and \
            arguments), or nextOffset as offset (text). Text shows a line break where blocks \
            meet; positions do not count it and quotes across it still anchor.",
        input_schema = schema::<ReadArgs>(),
        annotations(read_only_hint = true)
    )]
    async fn reviews_read(&self, arguments: JsonObject) -> ToolResult {
        let answer = match args::parse::<ReadArgs>(arguments) {
            Ok(args) => self.read(&args).await,
            Err(refusal) => Err(refusal),
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "A review run: start, comment, complete (its comments stop being \
            drafts), cancel. comments: [{body, quote (exact text) + optional prefix/suffix/\
            position, or section_id alone, category}]. A failed item's candidates can be sent \
            back as they are.",
        input_schema = schema::<RunArgs>()
    )]
    async fn run_write(&self, arguments: JsonObject) -> ToolResult {
        let answer = match args::parse::<RunArgs>(arguments) {
            Ok(args) => self.run(&args).await,
            Err(refusal) => Err(refusal),
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "Act on one comment: reply | resolve | reopen | edit (reply and edit \
            need body) | assign (email) | unassign | react | unreact (emoji).",
        input_schema = schema::<CommentArgs>()
    )]
    async fn comment_write(&self, arguments: JsonObject) -> ToolResult {
        let answer = match args::parse::<CommentArgs>(arguments) {
            Ok(args) => self.comment(&args).await,
            Err(refusal) => Err(refusal),
        };
        Ok(respond(answer))
    }

    #[tool(
        description = "Upload HTML: upload (a new document) | add_version (of review_id); or \
            decide | apply_suggestions on review_id.",
        input_schema = schema::<DocumentArgs>()
    )]
    async fn document_write(&self, arguments: JsonObject) -> ToolResult {
        let answer = match args::parse::<DocumentArgs>(arguments) {
            Ok(args) => self.document(&args).await,
            Err(refusal) => Err(refusal),
        };
        Ok(respond(answer))
    }
}

impl DocreviewMcp {
    async fn read(&self, args: &ReadArgs) -> Answer {
        let method = args.method.name();
        if args.method != ReadMethod::Text && (args.offset.is_some() || args.limit.is_some()) {
            let argument = if args.offset.is_some() {
                "offset"
            } else {
                "limit"
            };
            return Err(invalid(
                argument,
                &format!("`{argument}` is for method text; {method} pages with cursor"),
            ));
        }
        match args.method {
            ReadMethod::List => self.list(args).await,
            ReadMethod::Search => self.search(args).await,
            ReadMethod::Notifications => self.notifications(args).await,
            ReadMethod::Results => self.results(args),
            ReadMethod::Get => {
                let id = needed(args.review_id.as_deref(), "review_id", method)?;
                let at = positions(resume(args.cursor.as_deref(), method, id, "")?, 2)?;
                let review = self
                    .client
                    .review(id, false)
                    .await
                    .map_err(|error| api_refusal(&error))?;
                Ok(review_page(&review, &at))
            }
            ReadMethod::Outline => {
                let id = needed(args.review_id.as_deref(), "review_id", method)?;
                let at = positions(resume(args.cursor.as_deref(), method, id, "")?, 1)?;
                let context = self.client.dom_context(id, None).await;
                let context = context.map_err(|error| api_refusal(&error))?;
                let sections: Vec<Value> = context
                    .sections
                    .iter()
                    .map(|section| {
                        let (text, total) = shortened(&section.text, HEADING_SHOWN);
                        let mut item = json!({
                            "id": section.id, "level": section.level, "text": text,
                            "start": section.start, "end": section.end,
                        });
                        if let Some(total) = total {
                            item["headingChars"] = json!(total);
                        }
                        item
                    })
                    .collect();
                let mut page = json!({
                    "versionId": context.version_id,
                    "total": sections.len(),
                });
                let next = fill(&mut page, &[("sections", &sections)], &at);
                page["nextCursor"] =
                    json!(next.map(|next| Cursor::at_positions(method, id, "", &next).encode()));
                Ok(page)
            }
            ReadMethod::Text => {
                let id = needed(args.review_id.as_deref(), "review_id", method)?;
                if args.cursor.is_some() {
                    return Err(invalid(
                        "cursor",
                        "text pages with offset (nextOffset of the previous answer), not cursor",
                    ));
                }
                self.text(id, args).await
            }
            ReadMethod::Find => self.find(args).await,
            ReadMethod::Comments => {
                let id = needed(args.review_id.as_deref(), "review_id", method)?;
                let filter = format!(
                    "{}|{}",
                    args.status.map_or("", args::Status::as_str),
                    args.run_id.as_deref().unwrap_or_default()
                );
                let at = positions(resume(args.cursor.as_deref(), method, id, &filter)?, 1)?;
                let review = self
                    .client
                    .review(id, false)
                    .await
                    .map_err(|error| api_refusal(&error))?;
                let chosen: Vec<&CommentView> = review
                    .comments
                    .iter()
                    .filter(|c| args.status.is_none_or(|s| c.status.as_str() == s.as_str()))
                    .filter(|c| {
                        args.run_id
                            .as_ref()
                            .is_none_or(|run| c.run_id.as_ref() == Some(run))
                    })
                    .collect();
                let items: Vec<Value> = chosen.iter().map(|c| comment_item(c)).collect();
                let mut page = json!({ "total": items.len() });
                let next = fill(&mut page, &[("comments", &items)], &at);
                let shortened_any = page["comments"].as_array().is_some_and(|shown| {
                    shown
                        .iter()
                        .any(|c| c.get("bodyChars").is_some() || c.get("repliesShown").is_some())
                });
                if shortened_any {
                    page["details"] = json!(
                        "Long bodies and threads are shortened (bodyChars, repliesShown): \
                         method thread with comment_id reads one whole."
                    );
                }
                page["nextCursor"] = json!(
                    next.map(|next| Cursor::at_positions(method, id, &filter, &next).encode())
                );
                Ok(page)
            }
            ReadMethod::Thread => {
                let id = needed(args.review_id.as_deref(), "review_id", method)?;
                let comment_id = needed(args.comment_id.as_deref(), "comment_id", method)?;
                let at = positions(resume(args.cursor.as_deref(), method, id, comment_id)?, 2)?;
                let review = self
                    .client
                    .review(id, false)
                    .await
                    .map_err(|error| api_refusal(&error))?;
                let Some(comment) = review.comments.iter().find(|c| c.id == comment_id) else {
                    return Err(invalid(
                        "comment_id",
                        &format!(
                            "no comment `{comment_id}` in this document; method comments lists them"
                        ),
                    ));
                };
                let (mut page, next) = thread_page(comment, [at[0], at[1]]);
                page["nextCursor"] =
                    json!(next.map(|next| {
                        Cursor::at_positions(method, id, comment_id, &next).encode()
                    }));
                Ok(page)
            }
        }
    }

    /// `list`: the documents one can see, or with `q` those whose text matches.
    async fn list(&self, args: &ReadArgs) -> Answer {
        let client = &self.client;
        let filter = format!(
            "{}|{}",
            args.q.as_deref().unwrap_or_default(),
            args.tag.as_deref().unwrap_or_default()
        );
        let cursor = resume(args.cursor.as_deref(), "list", "", &filter)?.map(|c| c.at);
        let next = |at: String| Cursor::new("list", "", &filter, at);
        match args.q.clone() {
            Some(q) => {
                if args.tag.is_some() {
                    return Err(invalid("tag", "list takes q or tag, not both"));
                }
                fitted(
                    move |limit| {
                        let query = DocSearchQuery {
                            q: Some(q.clone()),
                            limit: Some(limit),
                            cursor: cursor.clone(),
                        };
                        async move { client.search_docs(&query).await }
                    },
                    |found| (json!({ "results": found.results }), found.next_cursor),
                    "results",
                    next,
                )
                .await
            }
            None => {
                fitted(
                    move |limit| {
                        let query = ListQuery {
                            tag: args.tag.clone(),
                            limit: Some(limit),
                            cursor: cursor.clone(),
                            ..ListQuery::default()
                        };
                        async move { client.list_reviews(&query).await }
                    },
                    |list| (json!({ "reviews": list.reviews }), list.next_cursor),
                    "reviews",
                    next,
                )
                .await
            }
        }
    }

    /// `search`: comments and replies whose words match.
    async fn search(&self, args: &ReadArgs) -> Answer {
        let client = &self.client;
        let q = needed(args.q.as_deref(), "q", "search")?.to_string();
        let filter = format!(
            "{q}|{}|{}",
            args.status.map_or("", args::Status::as_str),
            args.review_id.as_deref().unwrap_or_default()
        );
        let cursor = resume(args.cursor.as_deref(), "search", "", &filter)?.map(|c| c.at);
        let status = args.status.map(|s| match s {
            args::Status::Open => CommentStatus::Open,
            args::Status::Closed => CommentStatus::Closed,
        });
        fitted(
            move |limit| {
                let query = CommentSearchQuery {
                    q: Some(q.clone()),
                    review_id: args.review_id.clone(),
                    status,
                    limit: Some(limit),
                    cursor: cursor.clone(),
                    ..CommentSearchQuery::default()
                };
                async move { client.search_comments(&query).await }
            },
            |found| (json!({ "results": found.results }), found.next_cursor),
            "results",
            |at| Cursor::new("search", "", &filter, at),
        )
        .await
    }

    /// `notifications`: the caller's unread notifications, newest first.
    async fn notifications(&self, args: &ReadArgs) -> Answer {
        let client = &self.client;
        let cursor = resume(args.cursor.as_deref(), "notifications", "", "")?.map(|c| c.at);
        fitted(
            move |limit| {
                let query = NotificationQuery {
                    unread: Some(true),
                    limit: Some(limit),
                    cursor: cursor.clone(),
                };
                async move { client.notifications(&query).await }
            },
            |list| {
                let shown = json!({
                    "notifications": list.notifications,
                    "unreadCount": list.unread_count,
                });
                (shown, list.next_cursor)
            },
            "notifications",
            |at| Cursor::new("notifications", "", "", at),
        )
        .await
    }

    /// `find`: where a phrase occurs in the latest version, each occurrence as the place of a
    /// comment.
    async fn find(&self, args: &ReadArgs) -> Answer {
        let client = &self.client;
        let id = needed(args.review_id.as_deref(), "review_id", "find")?;
        let q = needed(args.q.as_deref(), "q", "find")?.to_string();
        let filter = format!("{q}|{}", args.section_id.as_deref().unwrap_or_default());
        let cursor = resume(args.cursor.as_deref(), "find", id, &filter)?.map(|c| c.at);
        fitted(
            move |limit| {
                let query = FindQuery {
                    q: Some(q.clone()),
                    section_id: args.section_id.clone(),
                    limit: Some(limit),
                    cursor: cursor.clone(),
                    ..FindQuery::default()
                };
                async move { client.find(id, &query).await }
            },
            |found| {
                let occurrences: Vec<Value> = found
                    .occurrences
                    .iter()
                    .map(|o| {
                        let mut item = passage_item(&o.quote, &o.position, o.section_id.as_deref());
                        item["context"] = json!(o.context);
                        item
                    })
                    .collect();
                let page = json!({
                    "versionId": found.version_id,
                    "total": found.total,
                    "occurrences": occurrences,
                });
                (page, found.next_cursor)
            },
            "occurrences",
            |at| Cursor::new("find", id, &filter, at),
        )
        .await
    }

    /// One page of the latest version's text, of a section or the whole document.
    async fn text(&self, review_id: &str, args: &ReadArgs) -> Answer {
        let context = self.client.dom_context(review_id, None).await;
        let context = context.map_err(|error| api_refusal(&error))?;
        let doc = self.version_text(review_id, &context.version_id).await?;
        let length = doc.text.char_len();
        let (from, to) = match &args.section_id {
            None => (0, length),
            Some(id) => match context.sections.iter().find(|s| &s.id == id) {
                Some(section) => (section.start.min(length), section.end.min(length)),
                None => {
                    return Err(invalid(
                        "section_id",
                        &format!(
                            "no section `{id}` in the latest version; method outline lists them"
                        ),
                    ));
                }
            },
        };
        let start = from.saturating_add(args.offset.unwrap_or(0)).min(to);
        let most = args.limit.unwrap_or(TEXT_PAGE).clamp(1, TEXT_PAGE);
        let mut page = json!({
            "versionId": context.version_id,
            "sectionId": args.section_id,
            "start": start,
            "end": to,
            "text": "",
            "nextOffset": to,
        });
        // The room left for the text, with the line breaks shown where blocks meet (a break
        // at the page's start is not shown, as `readable` does).
        let budget = ANSWER_LIMIT.saturating_sub(json_chars(&page) + 16);
        let mut previous = (start > 0)
            .then(|| doc.text.slice(start - 1, start).chars().next())
            .flatten();
        let end = page_end(
            doc.text.slice(start, to).chars(),
            start,
            most,
            budget,
            |at, c| {
                let shown = at > start
                    && doc.breaks.binary_search(&at).is_ok()
                    && previous.is_some_and(|p| !p.is_whitespace())
                    && !c.is_whitespace();
                previous = Some(c);
                if shown { escaped_chars('\n') } else { 0 }
            },
        );
        page["end"] = json!(end);
        page["text"] = json!(docreview_text::readable(&doc.text, &doc.breaks, start, end));
        page["nextOffset"] = json!((end < to).then(|| end - from));
        Ok(page)
    }

    /// A version's text, from the one-entry cache or the server.
    async fn version_text(
        &self,
        review_id: &str,
        version_id: &str,
    ) -> Result<Arc<VersionText>, Value> {
        let cached = self
            .last_text
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(text) = cached
            && text.version_id == version_id
        {
            return Ok(text);
        }
        let html = self.client.bundle(review_id, version_id).await;
        let html = html.map_err(|error| api_refusal(&error))?;
        // The same extraction the server anchors with, so positions agree with anchors.
        let extracted = docreview_text::extract(&html);
        let text = Arc::new(VersionText {
            version_id: version_id.to_string(),
            text: IndexedText::new(extracted.text),
            breaks: extracted.block_breaks,
        });
        *self
            .last_text
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&text));
        Ok(text)
    }

    /// `results`: the next page of a batch's answer.
    fn results(&self, args: &ReadArgs) -> Answer {
        let Some(cursor) = args.cursor.as_deref() else {
            return Err(invalid(
                "cursor",
                "results needs cursor (nextCursor of a run_write comment answer)",
            ));
        };
        let at = positions(resume(Some(cursor), "results", "", "")?, 3)?;
        let kept = self
            .batches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .kept
            .iter()
            .find(|batch| batch.key == at[0])
            .cloned();
        let Some(batch) = kept else {
            return Err(invalid(
                "cursor",
                "these results are no longer kept (the last 16 batches are); method comments \
                 with run_id lists what the run wrote",
            ));
        };
        Ok(batch_page(&batch, at[1], at[2]))
    }

    async fn run(&self, args: &RunArgs) -> Answer {
        let client = &self.client;
        if args.method != RunMethod::Comment && !args.comments.is_empty() {
            return Err(invalid(
                "comments",
                "comments are written with method comment",
            ));
        }
        let run_id = || needed(args.run_id.as_deref(), "run_id", "this method (from start)");
        match args.method {
            RunMethod::Start => {
                let start = StartRun {
                    title: args.title.clone(),
                    ..StartRun::default()
                };
                let run = client.start_run(&args.review_id, &start).await;
                Ok(run_item(&run.map_err(|error| api_refusal(&error))?))
            }
            RunMethod::Comment => {
                let run = run_id()?;
                if args.comments.is_empty() {
                    return Err(invalid(
                        "comments",
                        "comment needs comments: [{body, quote or section_id}]",
                    ));
                }
                let sent: Vec<BatchComment> = args
                    .comments
                    .iter()
                    .enumerate()
                    .map(|(index, item)| batch_comment(index, item))
                    .collect::<Result<_, _>>()?;
                let batch = self.comment_in_run(&args.review_id, run, sent).await?;
                Ok(batch_page(&batch, 0, 0))
            }
            RunMethod::Complete | RunMethod::Cancel => {
                let run = run_id()?;
                let status = if args.method == RunMethod::Complete {
                    RunStatus::Completed
                } else {
                    RunStatus::Cancelled
                };
                let finish = FinishRun {
                    status,
                    summary: args.summary.clone(),
                    base_comments_revision: None,
                };
                let done = client.finish_run(&args.review_id, run, &finish).await;
                let mut item = run_item(&done.map_err(|error| api_refusal(&error))?);
                if status == RunStatus::Completed {
                    item["next"] = json!("reviews_read comments with run_id lists its comments");
                }
                Ok(item)
            }
        }
    }

    /// Writes comments in a run, 200 per request, and keeps what became of each item for
    /// `results`. A request that fails after others were written leaves its items and the
    /// rest reported as not written, with why.
    async fn comment_in_run(
        &self,
        review_id: &str,
        run_id: &str,
        items: Vec<BatchComment>,
    ) -> Result<Arc<StoredBatch>, Value> {
        let total = items.len();
        let mut written = Vec::new();
        let mut failed = Vec::new();
        let mut revision = None;
        let mut stopped = None;
        let mut items = items.into_iter();
        let mut first = 0;
        while first < total {
            let chunk: Vec<BatchComment> = items.by_ref().take(MAX_BATCH_COMMENTS).collect();
            let count = chunk.len();
            let batch = NewRunComments {
                comments: chunk.into_iter().map(Into::into).collect(),
                base_comments_revision: None,
                atomic: false,
            };
            let answer = match self
                .client
                .add_run_comments(review_id, run_id, &batch)
                .await
            {
                Ok(answer) => answer,
                Err(error) if first == 0 => return Err(api_refusal(&error)),
                Err(error) => {
                    stopped = Some((first, error));
                    break;
                }
            };
            revision = Some(answer.comments_revision);
            written.extend(answer.written.iter().map(|w| {
                json!({
                    "index": first + w.index,
                    "id": w.comment.id,
                    "anchor": w.comment.anchor.state,
                    "sectionId": w.comment.anchor.section_id,
                })
            }));
            failed.extend(answer.failed.iter().map(|failure| {
                let mut item = failure_item(failure);
                item["index"] = json!(first + failure.index);
                item
            }));
            first += count;
        }
        let mut kinds: Vec<BatchItemError> = Vec::new();
        for item in &failed {
            if let Some(kind) = item["error"].as_str().and_then(BatchItemError::parse)
                && !kinds.contains(&kind)
            {
                kinds.push(kind);
            }
        }
        if let Some((from, error)) = &stopped {
            let message = way_out(error);
            failed.extend(
                (*from..total).map(
                    |index| json!({ "index": index, "error": "not_sent", "message": message }),
                ),
            );
        }
        let mut head = json!({
            "writtenTotal": written.len(),
            "failedTotal": failed.len(),
            "commentsRevision": revision,
        });
        let next = batch_hint(&kinds, stopped.is_some());
        if !next.is_empty() {
            head["next"] = json!(next);
        }
        let mut batches = self.batches.lock().unwrap_or_else(PoisonError::into_inner);
        let key = batches.next_key;
        batches.next_key += 1;
        let stored = Arc::new(StoredBatch {
            key,
            failed,
            written,
            head,
        });
        batches.kept.push_back(Arc::clone(&stored));
        if batches.kept.len() > BATCHES_KEPT {
            batches.kept.pop_front();
        }
        Ok(stored)
    }

    async fn comment(&self, args: &CommentArgs) -> Answer {
        let client = &self.client;
        let (review, comment) = (args.review_id.as_str(), args.comment_id.as_str());
        let body = || needed(args.body.as_deref(), "body", "this method").map(str::to_string);
        match args.method {
            CommentMethod::Reply => {
                let reply = NewReply {
                    body: body()?,
                    run_id: None,
                    base_comments_revision: None,
                    base_thread_revision: args.thread_revision,
                };
                let written = client.reply(review, comment, &reply).await;
                let written = written.map_err(|error| api_refusal(&error))?;
                Ok(json!({
                    "commentId": written.comment.id,
                    "replyId": written.message.id,
                    "threadRevision": written.comment.thread_revision,
                    "commentsRevision": written.comments_revision,
                }))
            }
            CommentMethod::Edit => {
                let edit = TextEdit {
                    body: body()?,
                    base_comments_revision: None,
                    base_thread_revision: args.thread_revision,
                };
                let written = client.edit_comment(review, comment, &edit).await;
                let written = written.map_err(|error| api_refusal(&error))?;
                Ok(json!({
                    "commentId": written.comment.id,
                    "threadRevision": written.comment.thread_revision,
                    "commentsRevision": written.comments_revision,
                }))
            }
            CommentMethod::Resolve | CommentMethod::Reopen => {
                let status = if args.method == CommentMethod::Resolve {
                    CommentStatus::Closed
                } else {
                    CommentStatus::Open
                };
                let change = StatusChange {
                    status,
                    base_comments_revision: None,
                    base_thread_revision: args.thread_revision,
                };
                let written = client.set_status(review, comment, &change).await;
                let written = written.map_err(|error| api_refusal(&error))?;
                Ok(json!({
                    "commentId": written.comment.id,
                    "status": written.comment.status,
                    "threadRevision": written.comment.thread_revision,
                    "commentsRevision": written.comments_revision,
                }))
            }
            CommentMethod::Assign | CommentMethod::Unassign => {
                let email = if args.method == CommentMethod::Assign {
                    Some(needed(args.email.as_deref(), "email", "assign")?.to_string())
                } else {
                    None
                };
                let change = AssigneeChange {
                    email,
                    base_comments_revision: None,
                };
                let written = client.assign_comment(review, comment, &change).await;
                let written = written.map_err(|error| api_refusal(&error))?;
                Ok(json!({
                    "commentId": written.comment.id,
                    "assignee": written.comment.assignee.map(|user| user.display_name),
                    "threadRevision": written.comment.thread_revision,
                    "commentsRevision": written.comments_revision,
                }))
            }
            CommentMethod::React | CommentMethod::Unreact => {
                let method = if args.method == CommentMethod::React {
                    "react"
                } else {
                    "unreact"
                };
                let emoji = needed(args.emoji.as_deref(), "emoji", method)?;
                // Checked here so the refusal names the argument and the words there are.
                let emoji =
                    Emoji::from_word(emoji).map_err(|message| invalid("emoji", &message))?;
                let on = args.method == CommentMethod::React;
                let reactions = client
                    .react(
                        review,
                        comment,
                        args.reply_id.as_deref(),
                        emoji.as_str(),
                        on,
                    )
                    .await;
                let reactions = reactions.map_err(|error| api_refusal(&error))?;
                Ok(json!({
                    "commentId": comment,
                    "replyId": args.reply_id,
                    "reactions": reactions_item(&reactions),
                }))
            }
        }
    }

    async fn document(&self, args: &DocumentArgs) -> Answer {
        let method = match args.method {
            DocumentMethod::Upload => "upload",
            DocumentMethod::AddVersion => "add_version",
            DocumentMethod::Decide => return self.decide(args).await,
            DocumentMethod::ApplySuggestions => return self.apply_suggestions(args).await,
        };
        let file = HtmlFile {
            name: "document.html".into(),
            bytes: needed(args.html.as_deref(), "html", method)?
                .to_string()
                .into_bytes(),
        };
        let review = match args.method {
            DocumentMethod::Upload => {
                let fields = DocumentUpload {
                    title: args.title.clone(),
                    ..DocumentUpload::default()
                };
                self.client.import_html(&file, &fields).await
            }
            DocumentMethod::AddVersion => {
                let review = needed(args.review_id.as_deref(), "review_id", "add_version")?;
                let upload = VersionUpload {
                    mode: docreview_client::api::VersionMode::AddVersion,
                    label: args.label.clone(),
                    base_version_id: None,
                };
                self.client.import_version(review, &file, &upload).await
            }
            DocumentMethod::Decide | DocumentMethod::ApplySuggestions => {
                unreachable!("answered above")
            }
        };
        Ok(review_page(
            &review.map_err(|error| api_refusal(&error))?,
            &[0, 0],
        ))
    }
}

impl DocreviewMcp {
    /// `document_write` method `decide`: the caller's decision on the latest version.
    async fn decide(&self, args: &DocumentArgs) -> Answer {
        let review = needed(args.review_id.as_deref(), "review_id", "decide")?;
        let word = needed(args.decision.as_deref(), "decision", "decide")?;
        let decision = DecisionKind::parse(word).ok_or_else(|| {
            invalid(
                "decision",
                &format!(
                    "`{word}` is not a decision; use approved, approved_with_changes, \
                     changes_requested or not_relevant"
                ),
            )
        })?;
        let input = NewDecision {
            decision,
            version_id: None,
            body: args.body.clone(),
        };
        let written = self.client.decide(review, &input).await;
        let written = written.map_err(|error| api_refusal(&error))?;
        Ok(json!({
            "reviewId": review,
            "decision": written.decision.decision,
            "versionId": written.decision.version_id,
            "workflow": workflow_item(&written.workflow),
        }))
    }
}

impl DocreviewMcp {
    /// `document_write` method `apply_suggestions`: the comments' suggestions as one new
    /// version; answers the new version and the document's page.
    async fn apply_suggestions(&self, args: &DocumentArgs) -> Answer {
        let method = "apply_suggestions";
        let review = needed(args.review_id.as_deref(), "review_id", method)?;
        let base = needed(args.base_version_id.as_deref(), "base_version_id", method)?;
        let comment_ids = args
            .comment_ids
            .clone()
            .filter(|ids| !ids.is_empty())
            .ok_or_else(|| invalid("comment_ids", "apply_suggestions needs `comment_ids`"))?;
        let input = ApplySuggestions {
            comment_ids,
            base_version_id: base.to_string(),
            label: args.label.clone(),
        };
        let applied = self.client.apply_suggestions(review, &input).await;
        let applied = applied.map_err(|error| api_refusal(&error))?;
        Ok(json!({
            "versionId": applied.version_id,
            "applied": applied.applied,
            "review": review_page(&applied.review, &[0, 0]),
        }))
    }
}

/// A document's review workflow as an agent needs it: state, outcome, who was asked (with due
/// dates and decisions) and how many decided. Notes are left out (few agents need them; the
/// API's `workflow` has them).
fn workflow_item(workflow: &WorkflowView) -> Value {
    let reviewers: Vec<Value> = workflow
        .reviewers
        .iter()
        .map(|reviewer| {
            json!({
                "name": reviewer.user.display_name,
                "dueAt": reviewer.due_at,
                "decision": reviewer.decision.as_ref().filter(|d| !d.stale).map(|d| d.decision),
            })
        })
        .collect();
    json!({
        "state": workflow.state,
        "outcome": workflow.outcome,
        "reviewers": reviewers,
        "decisions": workflow.decisions.iter().filter(|d| !d.stale).count(),
    })
}

/// Reactions as `{ "+1": 2, "eyes": 1 }`.
fn reactions_item(reactions: &[ReactionView]) -> Value {
    let counts: serde_json::Map<String, Value> = reactions
        .iter()
        .map(|r| (r.emoji.as_str().to_string(), json!(r.count)))
        .collect();
    Value::Object(counts)
}

#[tool_handler]
impl ServerHandler for DocreviewMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_instructions(
            "docreview: review HTML documents. Read with reviews_read (outline, text, find). \
             Review in a run: run_write start, then comment (quotes copied exactly from the \
             text), then complete with a summary. Act on existing comments with comment_write.",
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

/// A page of the API's (`fetch` with a limit), shaped by `shape` into an answer whose list is
/// `list`; asked again for fewer items while it does not fit an answer. The API's cursor is
/// handed out inside one of ours (`cursor`), so it comes back to the same method.
async fn fitted<T, F, Fut>(
    fetch: F,
    shape: impl Fn(T) -> (Value, Option<String>),
    list: &str,
    cursor: impl Fn(String) -> Cursor,
) -> Answer
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let mut limit = API_PAGE;
    loop {
        let page = fetch(limit).await.map_err(|error| api_refusal(&error))?;
        let (mut value, next) = shape(page);
        let count = value[list].as_array().map_or(0, Vec::len);
        value["nextCursor"] = json!(next.map(|next| cursor(next).encode()));
        if json_chars(&value) <= ANSWER_LIMIT || count <= 1 {
            return Ok(value);
        }
        limit = (count / 2).max(1);
    }
}

/// One item of a batch; the server checks its category and place, item by item.
fn batch_comment(index: usize, item: &CommentItem) -> Result<BatchComment, Value> {
    let quote = item.quote.clone().map(|exact| Quote {
        exact,
        prefix: item.prefix.clone().unwrap_or_default(),
        suffix: item.suffix.clone().unwrap_or_default(),
    });
    let position = match (item.position, &quote) {
        (None, _) => None,
        (Some(start), Some(quote)) => Some(Position {
            start,
            end: start + quote.exact.chars().count(),
        }),
        (Some(_), None) => {
            let argument = format!("comments[{index}].position");
            return Err(refusal_value(
                "invalid_argument",
                Some(&argument),
                &format!("`{argument}` goes with a quote (where that quote starts)"),
            ));
        }
    };
    Ok(BatchComment {
        body: item.body.clone(),
        category: item.category.clone(),
        locator: Some(Locator {
            version_id: None,
            section_id: item.section_id.clone(),
            quote,
            position,
        }),
        suggestion: item
            .suggestion
            .clone()
            .map(|text| docreview_client::api::Suggestion { text }),
    })
}

/// A passage in the form of a comment item's place, to send back as it is.
fn passage_item(quote: &Quote, position: &Position, section_id: Option<&str>) -> Value {
    json!({
        "quote": quote.exact,
        "prefix": quote.prefix,
        "suffix": quote.suffix,
        "section_id": section_id,
        "position": position.start,
    })
}

/// A failed item with as many of its candidates as keep it small.
fn failure_item(failure: &BatchFailure) -> Value {
    let mut item = json!({
        "index": failure.index,
        "error": failure.error,
        "message": failure.message,
    });
    let candidates: Vec<Value> = failure
        .candidates
        .iter()
        .map(|c: &QuoteCandidate| passage_item(&c.quote, &c.position, c.section_id.as_deref()))
        .collect();
    let mut shown = Vec::new();
    let mut size = json_chars(&item) + 20;
    for candidate in &candidates {
        let cost = json_chars(candidate) + 1;
        if size + cost > FAILURE_CHARS {
            break;
        }
        size += cost;
        shown.push(candidate.clone());
    }
    if shown.len() < candidates.len() {
        item["candidatesNotShown"] = json!(candidates.len() - shown.len());
    }
    if !shown.is_empty() {
        item["candidates"] = Value::Array(shown);
    }
    item
}

/// What to do about a batch's failures, one sentence per kind that occurred.
fn batch_hint(kinds: &[BatchItemError], stopped: bool) -> String {
    let mut hints = Vec::new();
    for kind in kinds {
        hints.push(match kind {
            BatchItemError::QuoteNotFound => {
                "quote_not_found: send one of the item's candidates back as its place, or a \
                 quote copied exactly from reviews_read text."
            }
            BatchItemError::QuoteAmbiguous => {
                "quote_ambiguous: send one of the item's candidates back, or add section_id, \
                 prefix or suffix; reviews_read find lists every occurrence."
            }
            BatchItemError::InvalidRequest => {
                "invalid_request: fix what the item's message names and send that item again."
            }
        });
    }
    if stopped {
        hints.push("not_sent: the run refused more; read its message, then send those again.");
    }
    hints.join(" ")
}

/// A page of a batch's answer: failures first, then what was written.
fn batch_page(batch: &StoredBatch, failed_at: usize, written_at: usize) -> Value {
    let mut page = batch.head.clone();
    let next = fill(
        &mut page,
        &[("failed", &batch.failed), ("written", &batch.written)],
        &[failed_at, written_at],
    );
    if let Some(next) = next {
        page["nextCursor"] =
            json!(Cursor::at_positions("results", "", "", &[batch.key, next[0], next[1]]).encode());
        page["more"] = json!("reviews_read method results with this cursor gives the rest");
    }
    page
}

/// A run without its comments' ids (`comments` counts them) and with its summary shortened.
fn run_item(run: &RunView) -> Value {
    let mut item = json!({
        "id": run.id,
        "kind": run.kind,
        "status": run.status,
        "title": run.title,
        "versionId": run.version_id,
        "comments": run.comment_ids.len(),
        "createdTs": run.created_ts,
        "completedTs": run.completed_ts,
    });
    if let Some(summary) = &run.summary {
        let (summary, total) = shortened(summary, SUMMARY_SHOWN);
        item["summary"] = json!(summary);
        if let Some(total) = total {
            item["summaryChars"] = json!(total);
        }
    }
    item
}

/// What an agent needs of a document, without its comments' text: counts, and its versions
/// and runs, newest first, paged.
fn review_page(review: &ReviewView, at: &[usize]) -> Value {
    let open = review
        .comments
        .iter()
        .filter(|c| c.status == CommentStatus::Open)
        .count();
    let versions: Vec<Value> = review
        .source
        .versions
        .iter()
        .rev()
        .map(|v| json!({ "versionId": v.version_id, "label": v.label, "createdAt": v.created_at }))
        .collect();
    let runs: Vec<Value> = review.ai_review_runs.iter().rev().map(run_item).collect();
    let mut page = json!({
        "reviewId": review.review_id,
        "title": review.title,
        "role": review.role,
        "latestVersionId": review.latest_version_id,
        "commentsRevision": review.comments_revision,
        "comments": { "total": review.comments.len(), "open": open },
        "tags": review.tags,
        "versionsTotal": versions.len(),
        "runsTotal": runs.len(),
        "workflow": workflow_item(&review.workflow),
    });
    let next = fill(&mut page, &[("versions", &versions), ("runs", &runs)], at);
    page["nextCursor"] =
        json!(next.map(|next| Cursor::at_positions("get", &review.review_id, "", &next).encode()));
    page
}

/// A comment in a listing: long bodies, quotes and threads shortened (`thread` reads it whole).
fn comment_item(comment: &CommentView) -> Value {
    let (body, body_chars) = shortened(&comment.body, BODY_SHOWN);
    let quote = comment
        .anchor
        .quote
        .as_ref()
        .map(|q| shortened(&q.exact, QUOTE_SHOWN).0);
    let replies: Vec<&docreview_client::api::MessageView> = comment
        .thread
        .iter()
        .filter(|m| m.deleted_ts.is_none())
        .collect();
    let mut item = json!({
        "id": comment.id,
        "status": comment.status,
        "threadRevision": comment.thread_revision,
        "category": comment.category,
        "author": comment.author.display_name,
        "body": body,
        "quote": quote,
        "sectionId": comment.anchor.section_id,
        "anchor": comment.anchor.state,
        "provisional": comment.provisional,
        "runId": comment.run_id,
        "replies": replies
            .iter()
            .take(REPLIES_SHOWN)
            .map(|m| json!({ "author": m.author.display_name, "body": shortened(&m.body, REPLY_SHOWN).0 }))
            .collect::<Vec<_>>(),
    });
    if let Some(total) = body_chars {
        item["bodyChars"] = json!(total);
    }
    if let Some(assignee) = &comment.assignee {
        item["assignee"] = json!(assignee.display_name);
    }
    if let Some(suggestion) = &comment.suggestion {
        item["suggestion"] = json!(shortened(&suggestion.text, QUOTE_SHOWN).0);
    }
    if !comment.reactions.is_empty() {
        item["reactions"] = reactions_item(&comment.reactions);
    }
    let replies_cut = replies.len() > REPLIES_SHOWN
        || replies.iter().any(|m| m.body.chars().count() > REPLY_SHOWN);
    if replies_cut {
        item["repliesShown"] = json!(format!(
            "{} of {}, shortened",
            replies.len().min(REPLIES_SHOWN),
            replies.len()
        ));
    }
    item
}

/// A page of one comment's thread: the comment, then its replies, whole; a message too long
/// for the rest of the page is continued on the next (`from` says where its part starts).
fn thread_page(comment: &CommentView, at: [usize; 2]) -> (Value, Option<Vec<usize>>) {
    let (quote, quote_chars) = comment.anchor.quote.as_ref().map_or((None, None), |q| {
        let (short, total) = shortened(&q.exact, BODY_SHOWN);
        (Some(short), total)
    });
    let mut page = json!({
        "commentId": comment.id,
        "status": comment.status,
        "threadRevision": comment.thread_revision,
        "category": comment.category,
        "sectionId": comment.anchor.section_id,
        "anchor": comment.anchor.state,
        "quote": quote,
        "position": comment.anchor.position.as_ref().map(|p| json!({ "start": p.start, "end": p.end })),
        "messages": [],
    });
    if let Some(total) = quote_chars {
        page["quoteChars"] = json!(total);
    }
    if let Some(assignee) = &comment.assignee {
        page["assignee"] = json!(assignee.display_name);
    }
    if let Some(suggestion) = &comment.suggestion {
        let (short, total) = shortened(&suggestion.text, BODY_SHOWN);
        page["suggestion"] = json!(short);
        if let Some(total) = total {
            page["suggestionChars"] = json!(total);
        }
    }
    let with_reactions = |mut head: Value, reactions: &[ReactionView]| {
        if !reactions.is_empty() {
            head["reactions"] = reactions_item(reactions);
        }
        head
    };
    let mut messages = vec![(
        with_reactions(
            json!({ "id": comment.id, "author": comment.author.display_name, "createdTs": comment.created_ts }),
            &comment.reactions,
        ),
        comment.body.as_str(),
    )];
    messages.extend(
        comment
            .thread
            .iter()
            .filter(|m| m.deleted_ts.is_none())
            .map(|m| {
                (
                    with_reactions(
                        json!({ "id": m.id, "author": m.author.display_name, "createdTs": m.created_ts }),
                        &m.reactions,
                    ),
                    m.body.as_str(),
                )
            }),
    );
    let room = ANSWER_LIMIT - 1_000;
    let mut used = json_chars(&page);
    let mut shown = Vec::new();
    let (mut index, mut from) = (at[0].min(messages.len()), at[1]);
    let mut next = None;
    while index < messages.len() {
        let (head, body) = &messages[index];
        let head_cost = json_chars(head) + 40;
        if used + head_cost + 200 > room && !shown.is_empty() {
            next = Some(vec![index, from]);
            break;
        }
        let length = body.chars().count();
        let from_here = from.min(length);
        let end = page_end(
            body.chars().skip(from_here),
            from_here,
            usize::MAX,
            room.saturating_sub(used + head_cost),
            |_, _| 0,
        );
        let mut item = head.clone();
        item["body"] = json!(
            body.chars()
                .skip(from_here)
                .take(end - from_here)
                .collect::<String>()
        );
        if from_here > 0 {
            item["from"] = json!(from_here);
        }
        if end < length {
            item["bodyChars"] = json!(length);
            shown.push(item);
            next = Some(vec![index, end]);
            break;
        }
        used += json_chars(&item) + 1;
        shown.push(item);
        index += 1;
        from = 0;
    }
    page["messages"] = Value::Array(shown);
    (page, next)
}

/// The cursor sent, checked against the method, document and arguments it must continue.
fn resume(
    cursor: Option<&str>,
    method: &str,
    scope: &str,
    filter: &str,
) -> Result<Option<Cursor>, Value> {
    let Some(text) = cursor else {
        return Ok(None);
    };
    let Some(cursor) = Cursor::decode(text) else {
        return Err(invalid(
            "cursor",
            "`cursor` is not one this server gave: send nextCursor of the previous answer as it \
             is, or leave cursor out for the first page",
        ));
    };
    if cursor.method != method {
        return Err(invalid(
            "cursor",
            &format!(
                "this cursor continues method `{}`, not `{method}`",
                cursor.method
            ),
        ));
    }
    if cursor.scope != scope {
        return Err(invalid(
            "cursor",
            &format!(
                "this cursor continues document `{}`, not `{scope}`",
                cursor.scope
            ),
        ));
    }
    if cursor.filter != filter {
        return Err(invalid(
            "cursor",
            "this cursor was given for other arguments (q, tag, status, run_id, section_id, \
             comment_id): send the same ones with it, or leave cursor out to start again",
        ));
    }
    Ok(Some(cursor))
}

/// The positions a cursor holds (all 0 without one).
fn positions(cursor: Option<Cursor>, count: usize) -> Result<Vec<usize>, Value> {
    match cursor {
        None => Ok(vec![0; count]),
        Some(cursor) => cursor.positions(count).ok_or_else(|| {
            invalid(
                "cursor",
                "`cursor` is not one this server gave: send nextCursor of the previous answer as it is",
            )
        }),
    }
}

fn needed<'a>(value: Option<&'a str>, argument: &str, method: &str) -> Result<&'a str, Value> {
    value.ok_or_else(|| invalid(argument, &format!("{method} needs `{argument}`")))
}

fn invalid(argument: &str, message: &str) -> Value {
    refusal_value("invalid_argument", Some(argument), message)
}

fn respond(answer: Answer) -> CallToolResult {
    match answer {
        Ok(value) => {
            let text = value.to_string();
            if text.chars().count() <= ANSWER_LIMIT {
                CallToolResult::success(vec![ContentBlock::text(text)])
            } else {
                // Not reached by any method (each pages to fit); a whole refusal beats a cut answer.
                let refusal = refusal_value(
                    "answer_too_long",
                    None,
                    "the answer would pass 25000 characters; ask for less (a section, a smaller limit)",
                );
                CallToolResult::error(vec![ContentBlock::text(refusal.to_string())])
            }
        }
        Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal.to_string())]),
    }
}

fn api_refusal(error: &Error) -> Value {
    let message = way_out(error);
    let (message, _) = shortened(&message, 4_000);
    let argument = message.contains("cursor").then_some("cursor");
    refusal_value(error.code().unwrap_or("request_failed"), argument, &message)
}

/// An error with what to do about it; a hint only where it is about the error's cause.
fn way_out(error: &Error) -> String {
    let text = error.to_string();
    let hint = match error.code() {
        Some("comments revision conflict") => " Read the comments again, then retry.",
        Some("thread revision conflict") => {
            " Someone changed this thread: read it again (thread), then decide again."
        }
        Some("stale_target_version") => {
            " A newer version arrived: read the document again and start a new run on it."
        }
        Some("quote_not_found" | "quote_ambiguous") => {
            " Copy the quote exactly from reviews_read text, or send a candidate back."
        }
        Some("unauthorized") => " Sign in again: `docreview auth login`.",
        Some("not_found") => " Check the id with reviews_read list (or get, comments).",
        _ => "",
    };
    format!("{text}{hint}")
}
