//! Suggestions that apply (DESIGN.md §8.5): a suggestion is accepted only on a `revise`, `add`
//! or `delete` comment on a passage and returned on the comment; applying makes one new version
//! whose source, read back through the API, is the base's bytes with exactly those passages
//! changed; the applied comments are closed (`reason: "applied"`, `versionId`), the others
//! re-anchored; every refusal writes nothing, never a 5xx.

use serde_json::{Value, json};

use crate::support::{Client, Server};

/// A page whose bytes outside the passages are easy to get wrong when re-serializing: a
/// doctype, attributes in odd quoting, a comment, an entity, a style sheet and a script.
const PAGE: &str = "<!DOCTYPE html>\n<html lang=en><head><title>Plan</title>\
<style>p{color:red}</style><script>var kept = \"<p>\";</script></head>\n<body>\
<h1 id='intro'>Introduction</h1>\n<p class=\"lead\" data-x='1'>The quick brown fox jumps over the lazy dog.</p>\
<!-- a comment kept as it is -->\n<p>Second paragraph &amp; more words.</p>\
<ul><li>One</li><li>Two</li></ul>\n</body></html>\n";

struct Doc {
    server: Server,
    ada: Client,
    bob: Client,
    id: String,
    base: String,
}

async fn doc() -> Doc {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let bob = server.user("bob@example.com", "Bob", &[], "docs,comments");
    let review = ada.upload("Plan", PAGE).await;
    Doc {
        server,
        ada,
        bob,
        base: review.latest_version_id,
        id: review.review_id,
    }
}

impl Doc {
    /// A comment of `category` on `exact`, with `suggestion` (none when `None`); the reply.
    async fn suggest(
        &self,
        category: &str,
        exact: &str,
        suggestion: Option<&str>,
    ) -> crate::support::Reply {
        let mut body = json!({
            "body": format!("{category} this"),
            "category": category,
            "locator": { "quote": { "exact": exact } },
        });
        if let Some(text) = suggestion {
            body["suggestion"] = json!({ "text": text });
        }
        self.ada
            .post(&format!("/api/reviews/{}/comments", self.id), &body)
            .await
    }

    async fn suggested(&self, category: &str, exact: &str, text: &str) -> String {
        let reply = self.suggest(category, exact, Some(text)).await;
        let comment = &reply.expect(201)["comment"];
        assert_eq!(comment["suggestion"], json!({ "text": text }), "{comment}");
        comment["id"].as_str().expect("id").to_string()
    }

    async fn apply(&self, who: &Client, ids: &[&str], base: &str) -> crate::support::Reply {
        who.post(
            &format!("/api/reviews/{}/suggestions/apply", self.id),
            &json!({ "commentIds": ids, "baseVersionId": base }),
        )
        .await
    }

    async fn review(&self) -> Value {
        self.ada
            .get(&format!("/api/reviews/{}", self.id))
            .await
            .expect(200)["review"]
            .clone()
    }

    async fn source(&self, version_id: &str) -> String {
        self.ada
            .api()
            .bundle(&self.id, version_id)
            .await
            .expect("the version's source")
    }

    /// Nothing was written: still one version, every comment open and where it was.
    async fn unchanged(&self, before: &Value) {
        let after = self.review().await;
        assert_eq!(after["source"]["versions"], before["source"]["versions"]);
        assert_eq!(after["commentsRevision"], before["commentsRevision"]);
        assert_eq!(after["comments"], before["comments"]);
    }
}

#[tokio::test]
async fn applying_splices_exactly_the_passages_into_the_base_bytes() {
    let doc = doc().await;
    let revise = doc.suggested("revise", "quick brown", "slow red").await;
    let delete = doc.suggested("delete", "lazy ", "").await;
    let add = doc.suggested("add", "Two", " and three").await;
    let unrelated = doc.suggested("revise", "more words", "fewer words").await;
    let note = doc
        .ada
        .note_on(&doc.id, "Second paragraph", "Keep this")
        .await
        .comment
        .id;

    let applied = doc
        .apply(&doc.ada, &[&revise, &delete, &add], &doc.base)
        .await;
    let applied = applied.expect(201).clone();
    let version = applied["versionId"]
        .as_str()
        .expect("versionId")
        .to_string();
    assert_eq!(applied["applied"], json!([revise, delete, add]));
    assert_eq!(applied["review"]["latestVersionId"], version.as_str());
    assert_eq!(
        applied["review"]["source"]["versions"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );

    // The new source, read back through the API: the base's bytes with exactly the three
    // passages changed, every other byte as it was.
    let base = doc.source(&doc.base).await;
    assert_eq!(base, PAGE, "the base is kept byte for byte");
    let expected = PAGE
        .replace("quick brown", "slow red")
        .replace("lazy ", "")
        .replace("<li>Two</li>", "<li>Two and three</li>");
    assert_eq!(doc.source(&version).await, expected);

    let review = doc.review().await;
    let comment = |id: &str| {
        review["comments"]
            .as_array()
            .expect("comments")
            .iter()
            .find(|c| c["id"] == id)
            .cloned()
            .expect("the comment")
    };
    for id in [&revise, &delete, &add] {
        let closed = comment(id);
        assert_eq!(closed["status"], "closed", "{closed}");
        let event = closed["statusEvents"]
            .as_array()
            .and_then(|events| events.last())
            .cloned()
            .expect("an event");
        assert_eq!(event["status"], "closed");
        assert_eq!(event["reason"], "applied", "{event}");
        assert_eq!(event["versionId"], version.as_str());
    }
    // The others are re-anchored onto the new version, as for any new version.
    for id in [&unrelated, &note] {
        let open = comment(id);
        assert_eq!(open["status"], "open");
        assert_eq!(open["anchor"]["versionId"], version.as_str(), "{open}");
        assert_eq!(open["anchor"]["state"], "exact", "{open}");
        assert!(open["statusEvents"].as_array().expect("events").is_empty());
    }

    // The rest can be applied on the new version, and only there.
    let stale = doc.apply(&doc.ada, &[&unrelated], &doc.base).await;
    let body = stale.expect_error(409, "stale_target_version");
    assert_eq!(body["latestVersionId"], version.as_str());
    doc.apply(&doc.ada, &[&unrelated], &version)
        .await
        .expect(201);
    // An applied comment is closed: applying it again is refused.
    let latest = doc.review().await["latestVersionId"]
        .as_str()
        .expect("latest")
        .to_string();
    doc.apply(&doc.ada, &[&revise], &latest)
        .await
        .expect_error(409, "suggestion_closed");
}

#[tokio::test]
async fn suggestions_are_only_for_passages_of_revise_add_and_delete_comments() {
    let doc = doc().await;
    for category in ["note", "needs_review", "consult", "none"] {
        doc.suggest(category, "quick brown", Some("x"))
            .await
            .expect_error(400, "not_a_suggestion");
    }
    let whole = doc
        .ada
        .post(
            &format!("/api/reviews/{}/comments", doc.id),
            &json!({ "body": "b", "category": "revise", "suggestion": { "text": "x" } }),
        )
        .await;
    whole.expect_error(400, "not_a_suggestion");
    doc.suggest("delete", "lazy", Some("not empty"))
        .await
        .expect_error(400, "invalid_request");
    doc.suggest("add", "lazy", Some(""))
        .await
        .expect_error(400, "invalid_request");
    let unknown = doc
        .ada
        .post(
            &format!("/api/reviews/{}/comments", doc.id),
            &json!({ "body": "b", "category": "revise",
                     "locator": { "quote": { "exact": "lazy" } },
                     "suggestion": { "text": "x", "extra": 1 } }),
        )
        .await;
    unknown.expect_error(400, "invalid_request");
    // A revise comment without a suggestion is still a plain comment.
    let plain = doc.suggest("revise", "lazy", None).await;
    assert!(plain.expect(201)["comment"].get("suggestion").is_none());
    assert_eq!(
        doc.review().await["comments"].as_array().map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn every_refusal_writes_nothing() {
    let doc = doc().await;
    let revise = doc.suggested("revise", "quick brown", "slow red").await;
    let overlapping = doc.suggested("revise", "brown fox", "grey wolf").await;
    let plain = doc.suggest("revise", "lazy dog", None).await;
    let plain = plain.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let closed = doc.suggested("delete", "Second ", "").await;
    doc.ada
        .post(
            &format!("/api/reviews/{}/comments/{closed}/status-events", doc.id),
            &json!({ "status": "closed" }),
        )
        .await
        .expect(201);
    let before = doc.review().await;

    doc.apply(&doc.ada, &[&revise, &overlapping], &doc.base)
        .await
        .expect_error(409, "suggestions_overlap");
    doc.apply(&doc.ada, &[&revise, &plain], &doc.base)
        .await
        .expect_error(400, "not_a_suggestion");
    doc.apply(&doc.ada, &[&revise, &closed], &doc.base)
        .await
        .expect_error(409, "suggestion_closed");
    doc.apply(&doc.ada, &[&revise, "cm_nope"], &doc.base)
        .await
        .expect_error(404, "not_found");
    doc.apply(&doc.ada, &[&revise], "ver_nope")
        .await
        .expect_error(400, "invalid_request");
    doc.apply(&doc.ada, &[&revise, &revise], &doc.base)
        .await
        .expect_error(400, "invalid_request");
    doc.apply(&doc.ada, &[], &doc.base)
        .await
        .expect_error(400, "invalid_request");
    // Bob can read and comment but is no editor; a token without `docs` may not either.
    doc.apply(&doc.bob, &[&revise], &doc.base)
        .await
        .expect_error(403, "forbidden");
    let commenter = doc
        .ada
        .with_token(Some(&doc.server.issue_token("ada@example.com", "comments")));
    doc.apply(&commenter, &[&revise], &doc.base)
        .await
        .expect_error(403, "insufficient_scope");
    doc.unchanged(&before).await;

    // A new version moves the passage: the suggestion is outdated on it.
    let moved = PAGE.replace("quick brown", "quick grey");
    let review = doc.ada.add_version(&doc.id, &moved).await;
    let latest = review.latest_version_id;
    let before = doc.review().await;
    let stale_anchor = doc.apply(&doc.ada, &[&revise], &latest).await;
    stale_anchor.expect_error(409, "suggestion_outdated");
    doc.apply(&doc.ada, &[&overlapping], &doc.base)
        .await
        .expect_error(409, "stale_target_version");
    doc.unchanged(&before).await;

    // A finalized review refuses before anything else.
    for comment in before["comments"].as_array().expect("comments") {
        if comment["status"] == "open" {
            let id = comment["id"].as_str().expect("id");
            doc.ada
                .post(
                    &format!("/api/reviews/{}/comments/{id}/status-events", doc.id),
                    &json!({ "status": "closed" }),
                )
                .await
                .expect(201);
        }
    }
    doc.ada
        .post(&format!("/api/reviews/{}/finalize", doc.id), &json!({}))
        .await
        .expect(200);
    let before = doc.review().await;
    doc.apply(&doc.ada, &[&revise], &latest)
        .await
        .expect_error(409, "review_finalized");
    doc.unchanged(&before).await;
}

/// A passage with no single place in the source (half of a character reference that stands for
/// two characters, `&NotEqualTilde;`) cannot be spliced: applying it is refused with 400
/// `invalid_request` naming the comment, and nothing is written.
#[tokio::test]
async fn a_passage_without_a_place_in_the_source_is_refused_whole() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let page = "<!doctype html><html><body><p>Left &NotEqualTilde; right.</p></body></html>";
    let review = ada.upload("Math", page).await;
    let id = review.review_id;
    let written = ada
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "b", "category": "revise",
                     "locator": { "quote": { "exact": "\u{2242}", "prefix": "Left " } },
                     "suggestion": { "text": "=" } }),
        )
        .await;
    let comment = written.expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let before = ada
        .get(&format!("/api/reviews/{id}"))
        .await
        .expect(200)
        .clone();
    let refused = ada
        .post(
            &format!("/api/reviews/{id}/suggestions/apply"),
            &json!({ "commentIds": [comment], "baseVersionId": review.latest_version_id }),
        )
        .await;
    let body = refused.expect_error(400, "invalid_request");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&comment),
        "{body}"
    );
    let after = ada
        .get(&format!("/api/reviews/{id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(after, before, "nothing written");
}
