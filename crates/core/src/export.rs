//! A review written out for other tools and for people (DESIGN.md §8.6): a W3C Web Annotation
//! collection, docreview's own lossless file, a table, and a readable report.
//!
//! Every format is made from what the caller is shown ([`ReviewView`]), so an export never
//! holds more than a read of the review would: a running run's drafts and undone items stay
//! out. Comments come in document order (whole-document comments first, then by where their
//! passage or section starts, comments whose passage is lost last).

use std::collections::HashMap;

use docreview_api::views::{CommentView, MessageView, ReviewView};
use docreview_api::wire::{Section, User};
use docreview_api::words::{AnchorState, Category, ExportFormat, RunStatus};
use serde_json::{Value, json};

/// The `format` of the lossless file.
pub const NATIVE_FORMAT: &str = "docreview-export/1";

/// A written export: its bytes and how to serve them.
#[derive(Debug, Clone)]
pub struct Export {
    pub content_type: &'static str,
    /// A file name for `Content-Disposition` (ASCII: the review's id and the format).
    pub file_name: String,
    pub body: Vec<u8>,
}

/// A person as the lossless file names them: by email, so an import can match accounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub email: String,
    pub display_name: String,
}

/// One version with its uploaded HTML, for the lossless file.
#[derive(Debug, Clone)]
pub struct VersionSource {
    pub version_id: String,
    pub label: String,
    pub created_at: i64,
    pub html: String,
}

/// What an export is made from.
pub struct Exported<'a> {
    pub review: &'a ReviewView,
    /// The heading sections of the latest version (a section comment's place and title).
    pub sections: &'a [Section],
    /// Everyone the discussion names, by user id (the lossless file only).
    pub people: &'a HashMap<String, Person>,
    /// Every version's HTML, oldest first (the lossless file only).
    pub versions: &'a [VersionSource],
    /// When the export was made (RFC 3339).
    pub exported_at: &'a str,
}

/// The media type of each format.
pub fn content_type(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::W3c => "application/ld+json; charset=utf-8",
        ExportFormat::Native => "application/json; charset=utf-8",
        ExportFormat::Csv => "text/csv; charset=utf-8",
        ExportFormat::Markdown => "text/markdown; charset=utf-8",
    }
}

fn extension(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::W3c => "jsonld",
        ExportFormat::Native => "docreview.json",
        ExportFormat::Csv => "csv",
        ExportFormat::Markdown => "md",
    }
}

/// Writes `exported` in `format`.
pub fn write(format: ExportFormat, exported: &Exported<'_>) -> Export {
    let body = match format {
        ExportFormat::W3c => json_bytes(&w3c(exported)),
        ExportFormat::Native => json_bytes(&native(exported)),
        ExportFormat::Csv => csv(exported),
        ExportFormat::Markdown => markdown(exported).into_bytes(),
    };
    Export {
        content_type: content_type(format),
        file_name: format!("{}.{}", exported.review.review_id, extension(format)),
        body,
    }
}

fn json_bytes(value: &Value) -> Vec<u8> {
    // A `Value` always serializes.
    serde_json::to_vec_pretty(value).unwrap_or_default()
}

/// The comments everyone may see, in document order.
fn in_document_order<'a>(exported: &Exported<'a>) -> Vec<&'a CommentView> {
    let review = exported.review;
    let running: Vec<&str> = review
        .ai_review_runs
        .iter()
        .filter(|run| run.status == RunStatus::Running)
        .map(|run| run.id.as_str())
        .collect();
    let section_start = |id: &str| {
        exported
            .sections
            .iter()
            .find(|section| section.id == id)
            .map_or(0, |section| section.start)
    };
    let place = |comment: &CommentView| {
        let anchor = &comment.anchor;
        if anchor.state == AnchorState::Orphaned {
            return (2, 0);
        }
        match (&anchor.position, &anchor.section_id, &anchor.quote) {
            (Some(position), _, _) => (1, position.start),
            (None, Some(section), None) => (1, section_start(section)),
            (None, _, Some(_)) => (2, 0),
            (None, None, None) => (0, 0),
        }
    };
    let mut comments: Vec<&CommentView> = review
        .comments
        .iter()
        .filter(|c| {
            !c.run_id
                .as_deref()
                .is_some_and(|run| running.contains(&run))
        })
        .collect();
    // Stable: comments at one place keep the order they were written in.
    comments.sort_by_key(|comment| place(comment));
    comments
}

fn section_title<'a>(exported: &Exported<'a>, id: Option<&str>) -> Option<&'a str> {
    let id = id?;
    exported
        .sections
        .iter()
        .find(|section| section.id == id)
        .map(|section| section.text.as_str())
}

// ---------------------------------------------------------------------------------------
// W3C Web Annotation (https://www.w3.org/TR/annotation-model/)

/// docreview's own terms, under `dr:`.
const DR_CONTEXT: &str = "https://docreview.dev/ns/export#";

fn comment_iri(id: &str) -> String {
    format!("urn:docreview:comment:{id}")
}

fn message_iri(id: &str) -> String {
    format!("urn:docreview:message:{id}")
}

fn version_iri(review_id: &str, version_id: &str) -> String {
    format!("urn:docreview:review:{review_id}:version:{version_id}")
}

fn creator(user: &User) -> Value {
    json!({ "id": format!("urn:docreview:user:{}", user.id), "type": "Person", "name": user.display_name })
}

fn textual_body(text: &str) -> Value {
    json!({ "type": "TextualBody", "value": text, "format": "text/markdown", "purpose": "commenting" })
}

fn w3c_comment(review_id: &str, comment: &CommentView, section: Option<&str>) -> Value {
    let anchor = &comment.anchor;
    let mut selectors = Vec::new();
    if let Some(quote) = &anchor.quote {
        selectors.push(json!({
            "type": "TextQuoteSelector", "exact": quote.exact, "prefix": quote.prefix, "suffix": quote.suffix,
        }));
    }
    if let Some(position) = &anchor.position {
        selectors.push(
            json!({ "type": "TextPositionSelector", "start": position.start, "end": position.end }),
        );
    }
    let mut target = json!({ "source": version_iri(review_id, &anchor.version_id) });
    if !selectors.is_empty() {
        target["selector"] = Value::Array(selectors);
    }
    let mut annotation = json!({
        "id": comment_iri(&comment.id),
        "type": "Annotation",
        "motivation": "commenting",
        "created": comment.created_ts,
        "creator": creator(&comment.author),
        "body": textual_body(&comment.body),
        "target": target,
        "dr:category": comment.category.as_str(),
        "dr:status": comment.status.as_str(),
        "dr:anchorState": anchor.state.as_str(),
    });
    if let Some(edited) = &comment.edited_ts {
        annotation["modified"] = json!(edited);
    }
    if let Some(id) = &anchor.section_id {
        annotation["dr:sectionId"] = json!(id);
    }
    if let Some(title) = section {
        annotation["dr:sectionTitle"] = json!(title);
    }
    if let Some(run) = &comment.run_id {
        annotation["dr:runId"] = json!(run);
    }
    if !comment.status_events.is_empty() {
        annotation["dr:statusHistory"] = comment
            .status_events
            .iter()
            .map(|event| json!({ "status": event.status.as_str(), "by": creator(&event.by), "at": event.ts }))
            .collect();
    }
    annotation
}

fn w3c_reply(comment: &CommentView, message: &MessageView) -> Value {
    let mut annotation = json!({
        "id": message_iri(&message.id),
        "type": "Annotation",
        "motivation": "replying",
        "created": message.created_ts,
        "creator": creator(&message.author),
        "body": textual_body(&message.body),
        "target": comment_iri(&comment.id),
    });
    if let Some(edited) = &message.edited_ts {
        annotation["modified"] = json!(edited);
    }
    annotation
}

/// One `AnnotationCollection` with every comment and reply on its one page.
fn w3c(exported: &Exported<'_>) -> Value {
    let review = exported.review;
    let mut items = Vec::new();
    for comment in in_document_order(exported) {
        let section = section_title(exported, comment.anchor.section_id.as_deref());
        items.push(w3c_comment(&review.review_id, comment, section));
        items.extend(comment.thread.iter().map(|m| w3c_reply(comment, m)));
    }
    json!({
        "@context": ["http://www.w3.org/ns/anno.jsonld", { "dr": DR_CONTEXT }],
        "id": format!("urn:docreview:review:{}:annotations", review.review_id),
        "type": "AnnotationCollection",
        "label": review.title,
        "total": items.len(),
        "first": { "type": "AnnotationPage", "startIndex": 0, "items": items },
    })
}

// ---------------------------------------------------------------------------------------
// The lossless file

fn person(exported: &Exported<'_>, user: &User) -> Value {
    match exported.people.get(&user.id) {
        Some(person) => json!({ "email": person.email, "displayName": person.display_name }),
        None => json!({ "email": Value::Null, "displayName": user.display_name }),
    }
}

fn native(exported: &Exported<'_>) -> Value {
    let review = exported.review;
    let versions: Vec<Value> = exported
        .versions
        .iter()
        .map(|version| {
            json!({
                "id": version.version_id, "label": version.label,
                "createdAt": version.created_at, "html": version.html,
            })
        })
        .collect();
    let comments: Vec<Value> = in_document_order(exported)
        .into_iter()
        .map(|comment| {
            let replies: Vec<Value> = comment
                .thread
                .iter()
                .map(|message| {
                    json!({
                        "id": message.id, "author": person(exported, &message.author),
                        "body": message.body, "createdAt": message.created_ts,
                        "editedAt": message.edited_ts, "runId": message.run_id,
                    })
                })
                .collect();
            let events: Vec<Value> = comment
                .status_events
                .iter()
                .map(|event| {
                    let mut item = json!({ "status": event.status.as_str(), "by": person(exported, &event.by), "at": event.ts });
                    if let Some(reason) = &event.reason {
                        item["reason"] = json!(reason);
                        item["versionId"] = json!(event.version_id);
                    }
                    item
                })
                .collect();
            json!({
                "id": comment.id, "author": person(exported, &comment.author),
                "category": comment.category.as_str(), "status": comment.status.as_str(),
                "body": comment.body, "versionId": comment.version_id, "anchor": comment.anchor,
                "createdAt": comment.created_ts, "editedAt": comment.edited_ts, "runId": comment.run_id,
                "replies": replies, "statusEvents": events,
                "suggestion": comment.suggestion,
            })
        })
        .collect();
    let runs: Vec<Value> = review
        .ai_review_runs
        .iter()
        .filter(|run| run.status != RunStatus::Running)
        .map(|run| serde_json::to_value(run).unwrap_or(Value::Null))
        .collect();
    json!({
        "format": NATIVE_FORMAT,
        "exportedAt": exported.exported_at,
        "review": {
            "id": review.review_id, "title": review.title, "tags": review.tags,
            "createdAt": review.created_at, "owner": person(exported, &review.owner),
            "latestVersionId": review.latest_version_id,
        },
        "versions": versions,
        "comments": comments,
        "runs": runs,
    })
}

// ---------------------------------------------------------------------------------------
// The table

/// A cell a spreadsheet would read as a formula (`= + - @`, or a tab or carriage return first)
/// gets a leading `'`, so opening the file runs nothing.
fn neutralised(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
}

const CSV_HEADER: [&str; 11] = [
    "kind",
    "commentId",
    "replyId",
    "category",
    "status",
    "author",
    "createdAt",
    "section",
    "quote",
    "anchorState",
    "body",
];

fn csv(exported: &Exported<'_>) -> Vec<u8> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut row = |cells: [&str; 11]| {
        // Writing to memory cannot fail.
        let _ = writer.write_record(cells.map(neutralised));
    };
    row(CSV_HEADER);
    for comment in in_document_order(exported) {
        let section = section_title(exported, comment.anchor.section_id.as_deref()).unwrap_or("");
        let quote = comment
            .anchor
            .quote
            .as_ref()
            .map_or("", |q| q.exact.as_str());
        row([
            "comment",
            &comment.id,
            "",
            comment.category.as_str(),
            comment.status.as_str(),
            &comment.author.display_name,
            &comment.created_ts,
            section,
            quote,
            comment.anchor.state.as_str(),
            &comment.body,
        ]);
        for message in &comment.thread {
            row([
                "reply",
                &comment.id,
                &message.id,
                "",
                "",
                &message.author.display_name,
                &message.created_ts,
                section,
                "",
                "",
                &message.body,
            ]);
        }
    }
    writer.into_inner().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// The report

fn category_label(category: Category) -> &'static str {
    match category {
        Category::Note => "Note",
        Category::Revise => "Revise",
        Category::Add => "Add",
        Category::Delete => "Delete",
        Category::NeedsReview => "Needs review",
        Category::Consult => "Consult",
        Category::None => "Comment",
    }
}

/// `text` as one Markdown block quote (every line quoted; Markdown in it is kept literal).
fn block_quote(text: &str) -> String {
    text.lines()
        .map(|line| format!("> {}", escape_markdown(line)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with Markdown's active characters escaped, so a document's words read as written.
fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A body (Markdown already) indented under its heading; raw HTML in it is shown as text by
/// renderers that follow our own rule, and left to the reader's tool otherwise.
fn indented(body: &str, prefix: &str) -> String {
    body.lines()
        .map(|line| {
            if line.is_empty() {
                prefix.trim_end().to_string()
            } else {
                format!("{prefix}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// "1 reply", "2 replies".
fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn markdown(exported: &Exported<'_>) -> String {
    let review = exported.review;
    let comments = in_document_order(exported);
    let open = comments
        .iter()
        .filter(|c| c.status == docreview_api::words::CommentStatus::Open)
        .count();
    let replies: usize = comments.iter().map(|c| c.thread.len()).sum();
    let mut out = format!(
        "# {}\n\n{} ({} open, {} closed), {}. Exported {}.\n",
        escape_markdown(&review.title),
        counted(comments.len(), "comment", "comments"),
        open,
        comments.len() - open,
        counted(replies, "reply", "replies"),
        exported.exported_at,
    );
    for (number, comment) in comments.iter().enumerate() {
        let place = match (
            &comment.anchor.quote,
            section_title(exported, comment.anchor.section_id.as_deref()),
        ) {
            _ if comment.anchor.state == AnchorState::Orphaned => {
                "on a passage no longer in the document".to_string()
            }
            (Some(_), Some(section)) => format!("in “{}”", escape_markdown(section)),
            (Some(_), None) => "on a passage".to_string(),
            (None, Some(section)) => format!("on the section “{}”", escape_markdown(section)),
            (None, None) => "on the whole document".to_string(),
        };
        out.push_str(&format!(
            "\n## {}. {} · {} — {}, {}\n\n",
            number + 1,
            category_label(comment.category),
            comment.status,
            escape_markdown(&comment.author.display_name),
            place,
        ));
        if let Some(quote) = &comment.anchor.quote {
            out.push_str(&block_quote(&quote.exact));
            out.push_str("\n\n");
        }
        out.push_str(&comment.body);
        out.push('\n');
        for message in &comment.thread {
            out.push_str(&format!(
                "\n- **{}** ({}):\n\n{}\n",
                escape_markdown(&message.author.display_name),
                message.created_ts,
                indented(&message.body, "  "),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised() {
        for cell in ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert!(neutralised(cell).starts_with('\''), "{cell:?}");
        }
        assert_eq!(neutralised("plain, with a comma"), "plain, with a comma");
        assert_eq!(neutralised(""), "");
    }

    #[test]
    fn quoted_document_text_stays_literal() {
        assert_eq!(block_quote("a *b*\n# c"), "> a \\*b\\*\n> \\# c");
    }
}
