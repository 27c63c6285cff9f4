//! The tools' arguments, read strictly: an argument a tool does not take (`sectionID`,
//! `next_cursor`), a word that is not one of an argument's values (a `status` of `pending`) or a
//! value of the wrong type is refused with a message that names the argument, instead of being
//! ignored. The same structs give the tools' JSON schemas (`additionalProperties: false`).

use rmcp::model::JsonObject;
use rmcp::schemars;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::answer::refusal_value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadMethod {
    /// Documents you can see (`q` searches their text, `tag`).
    List,
    /// A document: title, versions, runs, comment counts.
    Get,
    /// Heading sections with ids and text ranges.
    Outline,
    /// The latest version's text, whole or `section_id`, paged by `offset`/`limit`.
    Text,
    /// Where phrase `q` occurs, each ready to comment on (optional `section_id`).
    Find,
    /// Comments, bodies shortened (`status`, `run_id`).
    Comments,
    /// One comment whole with its replies (`comment_id`).
    Thread,
    /// Comments and replies matching words `q`.
    Search,
    /// The rest of a long run_write comment answer (`cursor`).
    Results,
    /// Your unread notifications (mentions, replies), newest first.
    Notifications,
}

impl ReadMethod {
    pub fn name(self) -> &'static str {
        match self {
            ReadMethod::List => "list",
            ReadMethod::Get => "get",
            ReadMethod::Outline => "outline",
            ReadMethod::Text => "text",
            ReadMethod::Find => "find",
            ReadMethod::Comments => "comments",
            ReadMethod::Thread => "thread",
            ReadMethod::Search => "search",
            ReadMethod::Results => "results",
            ReadMethod::Notifications => "notifications",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Open,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    pub method: ReadMethod,
    pub review_id: Option<String>,
    /// Words (`list`, `search`) or a phrase (`find`).
    pub q: Option<String>,
    pub tag: Option<String>,
    pub status: Option<Status>,
    pub run_id: Option<String>,
    pub comment_id: Option<String>,
    /// An id from `outline`.
    pub section_id: Option<String>,
    /// `nextCursor` of the previous answer of the same method.
    pub cursor: Option<String>,
    /// Characters to skip (`text`; `nextOffset` of the previous answer).
    pub offset: Option<usize>,
    /// Characters to return (`text`; at most 20000).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunMethod {
    /// Start a run on the latest version (optional `title`).
    Start,
    /// Write `comments` (any number; 200 a request).
    Comment,
    /// Complete with a `summary`: its comments stop being drafts.
    Complete,
    /// Cancel: its comments are dropped.
    Cancel,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentItem {
    pub body: String,
    /// The passage, exactly as the text has it.
    pub quote: Option<String>,
    /// Text just before the passage, when it occurs more than once.
    pub prefix: Option<String>,
    pub suffix: Option<String>,
    /// A section from `outline`: narrows the quote, or without one, the whole section.
    pub section_id: Option<String>,
    /// Where the passage starts (from a candidate or `find`).
    pub position: Option<usize>,
    /// note, revise, add, delete, needs_review, consult or none (default note).
    pub category: Option<String>,
    /// revise/add/delete on a quote: the passage's replacement (add: text after it; delete: "").
    pub suggestion: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    pub method: RunMethod,
    pub review_id: String,
    pub run_id: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    #[serde(default)]
    pub comments: Vec<CommentItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommentMethod {
    /// Reply (`body`).
    Reply,
    Resolve,
    Reopen,
    /// Change your comment's text (`body`).
    Edit,
    /// Hand the thread to `email` (someone who can read the document).
    Assign,
    Unassign,
    /// Add `emoji` (+1 -1 laugh confused heart hooray rocket eyes), to `reply_id` if given.
    React,
    Unreact,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommentArgs {
    pub method: CommentMethod,
    pub review_id: String,
    pub comment_id: String,
    pub body: Option<String>,
    /// The thread's `threadRevision` as you read it: refused if the thread changed since.
    pub thread_revision: Option<i64>,
    pub email: Option<String>,
    pub emoji: Option<String>,
    pub reply_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentMethod {
    /// A new document (optional `title`).
    Upload,
    /// A new version of `review_id` (optional `label`).
    AddVersion,
    /// Your `decision` on `review_id`'s latest version (optional `body`): approved,
    /// approved_with_changes, changes_requested, not_relevant.
    Decide,
    /// Make comments' suggestions (`comment_ids`) a new version of `base_version_id`.
    ApplySuggestions,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    pub method: DocumentMethod,
    pub html: Option<String>,
    pub review_id: Option<String>,
    pub title: Option<String>,
    pub label: Option<String>,
    pub decision: Option<String>,
    pub body: Option<String>,
    pub comment_ids: Option<Vec<String>>,
    pub base_version_id: Option<String>,
}

/// A tool's arguments, or the refusal that names the one at fault.
pub fn parse<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, Value> {
    let arguments = Value::Object(arguments);
    serde_path_to_error::deserialize::<_, T>(&arguments).map_err(|error| {
        let path = error.path().to_string();
        let (argument, message) = explain(&path, &error.inner().to_string());
        refusal_value("invalid_argument", Some(&argument), &message)
    })
}

/// The argument a deserialization error is about, and a message for an agent.
fn explain(path: &str, error: &str) -> (String, String) {
    // `path` is where the error is (`.` at the top, `comments[3]` in an item); an unknown or
    // missing field is named in the message itself.
    let within = |name: &str| match path {
        "." | "" => name.to_string(),
        path if path.ends_with(name) => path.to_string(),
        path => format!("{path}.{name}"),
    };
    if let Some(name) = between(error, "unknown field `", "`") {
        let takes = expected_names(error);
        let guess = takes
            .iter()
            .find(|known| resembles(name, known))
            .map(|known| format!(" (did you mean `{known}`?)"))
            .unwrap_or_default();
        let argument = within(name);
        return (
            argument.clone(),
            format!(
                "unknown argument `{argument}`{guess}; the arguments are {}",
                takes.join(", ")
            ),
        );
    }
    if let Some(name) = between(error, "missing field `", "`") {
        let argument = within(name);
        return (
            argument.clone(),
            format!("argument `{argument}` is required"),
        );
    }
    let argument = if path == "." {
        "arguments".to_string()
    } else {
        path.to_string()
    };
    let message = match between(error, "unknown variant `", "`") {
        Some(value) => format!(
            "argument `{argument}`: `{value}` is not one of its values ({})",
            expected_names(error).join(", ")
        ),
        None => format!("argument `{argument}`: {error}"),
    };
    (argument, message)
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(&text[from..to])
}

/// The names serde lists after "expected" (`one of `a`, `b``, or `a` or `b``).
fn expected_names(error: &str) -> Vec<String> {
    let Some(at) = error.find("expected") else {
        return Vec::new();
    };
    error[at..]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Whether `sent` looks like a misspelling of `known`: the same letters but for case and
/// separators (`sectionID`, `section-id`), or one containing the other (`next_cursor`).
fn resembles(sent: &str, known: &str) -> bool {
    let plain = |name: &str| {
        name.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let (sent, known) = (plain(sent), plain(known));
    sent == known
        || (known.len() > 2 && sent.contains(&known))
        || (sent.len() > 2 && known.contains(&sent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused<T: DeserializeOwned + std::fmt::Debug>(arguments: Value) -> Value {
        let Value::Object(arguments) = arguments else {
            panic!("an object")
        };
        parse::<T>(arguments).expect_err("refused")
    }

    #[test]
    fn refusals_name_the_argument_and_guess_the_meant_one() {
        let no = refused::<ReadArgs>(json!({ "method": "text", "sectionID": "a" }));
        assert_eq!(no["argument"], "sectionID");
        assert!(
            no["message"]
                .as_str()
                .unwrap()
                .contains("did you mean `section_id`"),
            "{no}"
        );
        let no = refused::<ReadArgs>(json!({ "method": "list", "next_cursor": "a" }));
        assert!(
            no["message"]
                .as_str()
                .unwrap()
                .contains("did you mean `cursor`"),
            "{no}"
        );
        let no = refused::<ReadArgs>(json!({ "method": "comments", "status": "pending" }));
        assert_eq!(no["argument"], "status");
        assert!(
            no["message"].as_str().unwrap().contains("open, closed"),
            "{no}"
        );
        let no = refused::<ReadArgs>(json!({ "method": "browse" }));
        assert_eq!(no["argument"], "method");
        let no = refused::<ReadArgs>(json!({ "review_id": "rv" }));
        assert_eq!(no["argument"], "method");
        let no = refused::<ReadArgs>(json!({ "method": "text", "offset": -1 }));
        assert_eq!(no["argument"], "offset");
        let no = refused::<RunArgs>(json!({
            "method": "comment", "review_id": "rv",
            "comments": [{ "body": "a" }, { "body": "b", "sectionID": "x" }]
        }));
        assert_eq!(no["argument"], "comments[1].sectionID", "{no}");
        assert!(
            no["message"]
                .as_str()
                .unwrap()
                .contains("did you mean `section_id`"),
            "{no}"
        );
    }
}
