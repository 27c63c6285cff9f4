//! Annotations made elsewhere, read for `POST /api/reviews/{id}/import-annotations`
//! (DESIGN.md §8.6): a W3C Web Annotation collection, page, list or single annotation (ours
//! from `export?format=w3c`, or another tool's), or a Hypothesis export (`{ annotations }`, the
//! search API's `{ rows }`, or a plain list).
//!
//! Only what anchors by meaning is kept: the quote with its prefix and suffix. Offsets are
//! left out, because another tool counts them over its own idea of the text.

use docreview_api::wire::Quote;
use docreview_api::words::{Category, CommentStatus};
use serde_json::{Map, Value};

/// The most annotations one import may hold.
pub const MAX_ANNOTATIONS: usize = 2_000;

/// One annotation, as this service can write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// Its id in the file (for the report, and for replies to find it).
    pub source_id: Option<String>,
    pub body: String,
    /// Who wrote it and when, as the file says (kept in the imported body).
    pub creator: Option<String>,
    pub created: Option<String>,
    pub quote: Option<Quote>,
    /// The id of the annotation it answers, or of its thread's first (then it becomes a reply).
    pub reply_to: Option<String>,
    pub category: Option<Category>,
    pub status: Option<CommentStatus>,
}

/// The annotations of `file`, in its order; `Err` when it is none of the shapes read here.
pub fn annotations(file: &Value) -> Result<Vec<Value>, String> {
    let list = match file {
        Value::Array(items) => items.clone(),
        Value::Object(object) => {
            let listed = ["annotations", "rows", "items"]
                .iter()
                .find_map(|key| object.get(*key).and_then(Value::as_array));
            if let Some(items) = listed {
                items.clone()
            } else if let Some(first) = object.get("first") {
                first
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .ok_or("the collection's `first` page has no `items`")?
            } else if object.get("type").and_then(Value::as_str) == Some("Annotation") {
                vec![file.clone()]
            } else {
                return Err(
                    "expected a W3C Web Annotation collection, page or annotation, or a \
                     Hypothesis export (`annotations` or `rows`)"
                        .into(),
                );
            }
        }
        _ => return Err("expected a JSON object or list of annotations".into()),
    };
    if list.len() > MAX_ANNOTATIONS {
        return Err(format!(
            "{} annotations; at most {MAX_ANNOTATIONS} may be imported at once",
            list.len()
        ));
    }
    Ok(list)
}

/// Reads one annotation of either kind; `Err` says why it cannot become a comment.
pub fn read(annotation: &Value) -> Result<Incoming, String> {
    let object = annotation
        .as_object()
        .ok_or("an annotation must be a JSON object")?;
    let source_id = object.get("id").and_then(|id| {
        id.as_str()
            .map(str::to_string)
            .or_else(|| id.as_i64().map(|n| n.to_string()))
    });
    // Hypothesis's own fields; a W3C annotation has none of them.
    if ["text", "references", "uri"]
        .iter()
        .any(|key| object.contains_key(*key))
    {
        return Ok(hypothesis(object, source_id));
    }
    w3c(object, source_id)
}

fn text_of(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

fn quote_of(selectors: &[Value]) -> Option<Quote> {
    selectors
        .iter()
        .find(|s| s.get("type").and_then(Value::as_str) == Some("TextQuoteSelector"))
        .and_then(|selector| {
            Some(Quote {
                exact: text_of(selector.get("exact")).filter(|e| !e.trim().is_empty())?,
                prefix: text_of(selector.get("prefix")).unwrap_or_default(),
                suffix: text_of(selector.get("suffix")).unwrap_or_default(),
            })
        })
}

/// `selector` as one selector or a list of them.
fn selectors(selector: Option<&Value>) -> Vec<Value> {
    match selector {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    }
}

/// The motivations that make a comment here (`replying` makes a reply).
const COMMENTING: [&str; 7] = [
    "commenting",
    "editing",
    "questioning",
    "assessing",
    "describing",
    "highlighting",
    "classifying",
];

fn w3c(object: &Map<String, Value>, source_id: Option<String>) -> Result<Incoming, String> {
    let motivation = object
        .get("motivation")
        .and_then(|m| m.as_str().or_else(|| m.as_array()?.first()?.as_str()))
        .unwrap_or("commenting");
    let target = object.get("target");
    let reply_to = if motivation == "replying" {
        let parent = match target {
            Some(Value::String(iri)) => Some(iri.clone()),
            Some(Value::Object(t)) => text_of(t.get("id").or_else(|| t.get("source"))),
            _ => None,
        };
        Some(parent.ok_or("a reply must target the annotation it answers")?)
    } else if COMMENTING.contains(&motivation) {
        None
    } else {
        return Err(format!("motivation `{motivation}` is not a comment"));
    };
    let body = match object.get("body").or_else(|| object.get("bodyValue")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(bodies)) => bodies
            .iter()
            .find_map(|b| {
                b.get("value")
                    .and_then(Value::as_str)
                    .or_else(|| b.as_str())
            })
            .unwrap_or_default()
            .to_string(),
        Some(body) => text_of(body.get("value")).unwrap_or_default(),
        None => String::new(),
    };
    let quote = match target {
        Some(Value::Object(t)) => quote_of(&selectors(t.get("selector"))),
        Some(Value::Array(targets)) => targets
            .iter()
            .find_map(|t| quote_of(&selectors(t.get("selector")))),
        _ => None,
    };
    let creator = match object.get("creator") {
        Some(Value::String(name)) => Some(name.clone()),
        Some(creator) => text_of(creator.get("name").or_else(|| creator.get("nickname"))),
        None => None,
    };
    Ok(Incoming {
        source_id,
        body,
        creator,
        created: text_of(object.get("created")),
        quote,
        reply_to,
        category: object
            .get("dr:category")
            .and_then(Value::as_str)
            .and_then(Category::parse),
        status: object
            .get("dr:status")
            .and_then(Value::as_str)
            .and_then(CommentStatus::parse),
    })
}

fn hypothesis(object: &Map<String, Value>, source_id: Option<String>) -> Incoming {
    // The thread's first annotation: threads here are one comment and its replies.
    let reply_to = object
        .get("references")
        .and_then(Value::as_array)
        .and_then(|refs| refs.first())
        .and_then(Value::as_str)
        .map(str::to_string);
    let quote = object
        .get("target")
        .and_then(Value::as_array)
        .and_then(|targets| {
            targets
                .iter()
                .find_map(|t| quote_of(&selectors(t.get("selector"))))
        });
    let creator = object
        .get("user_info")
        .and_then(|info| text_of(info.get("display_name")))
        .or_else(|| {
            // `acct:name@authority`
            text_of(object.get("user")).map(|user| {
                let user = user.trim_start_matches("acct:");
                user.split('@').next().unwrap_or(user).to_string()
            })
        });
    Incoming {
        source_id,
        body: text_of(object.get("text")).unwrap_or_default(),
        creator,
        created: text_of(object.get("created")),
        quote,
        reply_to,
        category: None,
        status: None,
    }
}

/// The body as written here: the annotation's own words, then who wrote it and when, if the
/// file says.
pub fn body_with_attribution(incoming: &Incoming) -> String {
    let body = incoming.body.trim_end();
    match (&incoming.creator, &incoming.created) {
        (Some(creator), Some(created)) => format!("{body}\n\n*Imported: {creator}, {created}*"),
        (Some(creator), None) => format!("{body}\n\n*Imported: {creator}*"),
        _ => body.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_hypothesis_annotations_and_replies() {
        let note = json!({
            "id": "h1", "text": "Nice.", "user": "acct:grace@hypothes.is", "created": "2026-01-02",
            "uri": "https://example.com",
            "target": [{ "source": "https://example.com", "selector": [
                { "type": "RangeSelector", "startContainer": "/p[1]" },
                { "type": "TextPositionSelector", "start": 4, "end": 9 },
                { "type": "TextQuoteSelector", "exact": "quick", "prefix": "The ", "suffix": " brown" }
            ]}]
        });
        let note = read(&note).unwrap();
        assert_eq!(note.source_id.as_deref(), Some("h1"));
        assert_eq!(note.creator.as_deref(), Some("grace"));
        assert_eq!(note.quote.as_ref().map(|q| q.exact.as_str()), Some("quick"));
        assert_eq!(note.reply_to, None);
        assert_eq!(
            body_with_attribution(&note),
            "Nice.\n\n*Imported: grace, 2026-01-02*"
        );
        let reply =
            json!({ "id": "h2", "text": "Agreed.", "uri": "x", "references": ["h1", "h9"] });
        assert_eq!(read(&reply).unwrap().reply_to.as_deref(), Some("h1"));
    }

    #[test]
    fn reads_w3c_collections_and_refuses_what_is_not_a_comment() {
        let collection = json!({ "type": "AnnotationCollection", "first": { "items": [
            { "id": "a1", "type": "Annotation", "body": { "type": "TextualBody", "value": "Hm." },
              "target": { "source": "urn:x", "selector": { "type": "TextQuoteSelector", "exact": "fox" } },
              "dr:category": "revise", "dr:status": "closed" },
            { "id": "a2", "type": "Annotation", "motivation": "replying", "body": "Yes.", "target": "a1" },
            { "id": "a3", "type": "Annotation", "motivation": "bookmarking", "target": "urn:x" }
        ]}});
        let items = annotations(&collection).unwrap();
        assert_eq!(items.len(), 3);
        let first = read(&items[0]).unwrap();
        assert_eq!(first.category, Some(Category::Revise));
        assert_eq!(first.status, Some(CommentStatus::Closed));
        assert_eq!(first.quote.map(|q| q.exact), Some("fox".into()));
        assert_eq!(read(&items[1]).unwrap().reply_to.as_deref(), Some("a1"));
        assert!(read(&items[2]).is_err());
        assert!(annotations(&json!({ "what": 1 })).is_err());
        assert!(annotations(&json!(7)).is_err());
        assert!(annotations(&json!((0..2001).collect::<Vec<_>>())).is_err());
    }
}
