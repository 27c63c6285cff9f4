//! The review bar (DESIGN.md §8.4) in the browser: a decision with a note changes the outcome;
//! an editor asks someone to review (and a person who cannot be asked is refused in the bar);
//! finalizing is refused while a comment is open (said in the bar, with how many), allowed once
//! it is resolved, and then the screen reads as finalized (a banner, no composer, no "Comment"
//! buttons) until it is reopened. What the page shows, checked against what the API reads back.

use serde_json::{Value, json};

use crate::support::Client;
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{DOC, PASSWORD, setup};

async fn screen_ready(browser: &Browser, review_id: &str) {
    browser.goto(&format!("/reviews/{review_id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the screen",
        )
        .await;
}

async fn workflow(api: &Client, review_id: &str) -> Value {
    api.get(&format!("/api/reviews/{review_id}"))
        .await
        .expect(200)["review"]["workflow"]
        .clone()
}

/// A Revise comment on "ship on Monday" suggesting "ship on Tuesday"; its id.
async fn suggest_tuesday(api: &Client, review_id: &str) -> String {
    api.post(
        &format!("/api/reviews/{review_id}/comments"),
        &json!({
            "body": "Tuesday, surely.",
            "category": "revise",
            "locator": { "quote": { "exact": "ship on Monday" } },
            "suggestion": { "text": "ship on Tuesday" },
        }),
    )
    .await
    .expect(201)["comment"]["id"]
        .as_str()
        .expect("id")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_with_a_note_and_a_reviewer_requested_show_in_the_bar() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user("bob@example.com", "Bob Byte", &[]);
    let id = api.upload("Launch plan", DOC).await.review_id;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    assert_eq!(browser.text("#review-outcome").await, "Pending");

    // A decision with a note: the outcome follows, and the API reads the note back.
    browser.click("#decide-menu summary").await;
    browser
        .click("#decide-form input[value=changes_requested]")
        .await;
    browser
        .type_into("#decide-note", "The runbook is missing.")
        .await;
    browser.click("#decide-form button[type=submit]").await;
    browser
        .wait_for(
            "document.getElementById('review-outcome').textContent === 'Changes requested'",
            "the outcome after the decision",
        )
        .await;
    assert_eq!(
        browser.text("#decide-menu summary").await,
        "Your decision: Changes requested"
    );
    let now = workflow(&api, &id).await;
    assert_eq!(now["outcome"], "changes_requested");
    assert_eq!(now["decisions"][0]["decision"], "changes_requested");
    assert_eq!(now["decisions"][0]["body"], "The runbook is missing.");

    // Asking someone who is not a member is refused in the bar, the form still there.
    browser.click("#request-menu summary").await;
    browser
        .type_into("#request-email", "nobody@example.com")
        .await;
    browser.click("#request-form button[type=submit]").await;
    let refusal = browser
        .wait_for(
            "document.getElementById('request-refusal')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        refusal.as_str().is_some_and(|text| !text.is_empty()),
        "{refusal}"
    );
    assert_eq!(workflow(&api, &id).await["reviewers"], json!([]));

    // Asking Bob, due on a day: his row shows it, and the API has him.
    browser
        .run(
            "const email = document.getElementById('request-email'); email.value = 'bob@example.com'; \
             document.getElementById('request-due').value = '2026-12-01';",
            vec![],
        )
        .await;
    browser.click("#request-form button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelector('#review-reviewers .reviewer')?.textContent.includes('Bob Byte')",
            "Bob's row",
        )
        .await;
    let row = browser.text("#review-reviewers .reviewer").await;
    assert!(row.contains("due 2026-12-01"), "{row}");
    assert!(row.contains("no decision yet"), "{row}");
    assert!(browser.find_all("#request-refusal").await.is_empty());
    let now = workflow(&api, &id).await;
    assert_eq!(now["reviewers"][0]["user"]["displayName"], "Bob Byte");
    assert_eq!(now["reviewers"][0]["dueAt"], "2026-12-01T23:59:59.999Z");
    // With a reviewer who has not decided, Ada's request for changes still decides the outcome.
    assert_eq!(browser.text("#review-outcome").await, "Changes requested");
    browser.check_accessibility("review bar").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn finalizing_is_refused_with_open_comments_then_the_screen_reads_finalized_until_reopened() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let id = api.upload("Launch plan", DOC).await.review_id;
    let comment = api
        .note_on(&id, "ship on Monday", "Which Monday?")
        .await
        .comment
        .id;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;

    // Refused while the comment is open: said in the bar, with how many.
    browser.click("#finalize-review").await;
    let refusal = browser
        .wait_for(
            "document.getElementById('finalize-refusal')?.textContent",
            "the refusal",
        )
        .await;
    assert_eq!(
        refusal,
        json!("1 comment is still open. Resolve it before finalizing.")
    );
    assert_eq!(workflow(&api, &id).await["state"], "open");

    // Resolved, it finalizes: the screen reads as finalized.
    api.post(
        &format!("/api/reviews/{id}/comments/{comment}/status-events"),
        &json!({ "status": "closed" }),
    )
    .await
    .expect(201);
    browser.click("#finalize-review").await;
    browser
        .wait_for(
            "document.getElementById('finalized-banner') !== null \
             && document.getElementById('review').classList.contains('frame-ready')",
            "the finalized screen",
        )
        .await;
    assert_eq!(workflow(&api, &id).await["state"], "finalized");
    browser.screenshot("workflow-finalized").await;
    assert!(
        browser
            .text("#review-finalized")
            .await
            .starts_with("Finalized")
    );
    assert!(browser.find_all("#comment-document").await.is_empty());
    assert!(browser.find_all("[data-section-comment]").await.is_empty());
    assert!(browser.find_all("#finalize-review").await.is_empty());
    // The panel offers no reply or resolve (the core would refuse them with 409).
    assert_eq!(
        browser
            .run(
                "return [...document.querySelectorAll('#panel .thread-actions')] \
                 .every((actions) => getComputedStyle(actions).display === 'none')",
                vec![]
            )
            .await,
        json!(true)
    );
    // A selection offers no "Comment" button, and no composer opens.
    crate::web::review::select_in_frame(&browser, "ship on Monday").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        browser
            .run(
                "return document.getElementById('selection-button').hidden \
                 && document.querySelector('#composer-slot form') === null",
                vec![]
            )
            .await,
        json!(true)
    );

    // The keyboard's reply (r) on the current thread says why instead of opening a form.
    browser.goto(&format!("/reviews/{id}?status=all")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready') \
             && document.querySelector('#panel .thread') !== null",
            "the resolved thread shown",
        )
        .await;
    browser
        .run(
            "for (const key of ['j', 'r']) document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));",
            vec![],
        )
        .await;
    browser
        .wait_for(
            "[...document.querySelectorAll('#toasts .toast')].some((t) => t.textContent.includes('finalized'))",
            "the finalized notice",
        )
        .await;
    assert!(
        browser
            .find_all("#panel .reply-form:not([hidden])")
            .await
            .is_empty()
    );

    // Reopened: the banner goes, and comments can be written again.
    browser.click("#reopen-review").await;
    browser
        .wait_for(
            "document.getElementById('finalized-banner') === null \
             && document.getElementById('comment-document') !== null",
            "the reopened screen",
        )
        .await;
    assert_eq!(workflow(&api, &id).await["state"], "open");
    browser.quit().await;
}

/// The reactions the API reads back for Ada on the comment (`None`) or its first reply.
async fn reactions_of(api: &Client, review_id: &str, reply: bool) -> Value {
    let review = api
        .get(&format!("/api/reviews/{review_id}"))
        .await
        .expect(200)["review"]
        .clone();
    let comment = &review["comments"][0];
    if reply {
        comment["thread"][0]["reactions"].clone()
    } else {
        comment["reactions"].clone()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reactions_on_a_comment_and_a_reply_toggle_and_read_back() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let bob = server.user("bob@example.com", "Bob Byte", &[], "docs,comments");
    let id = api.upload("Launch plan", DOC).await.review_id;
    let comment = api
        .note_on(&id, "ship on Monday", "Which Monday?")
        .await
        .comment
        .id;
    api.post(
        &format!("/api/reviews/{id}/comments/{comment}/thread"),
        &json!({ "body": "The first one." }),
    )
    .await
    .expect(201);
    bob.put(
        &format!("/api/reviews/{id}/comments/{comment}/reactions/+1"),
        &json!({}),
    )
    .await
    .expect(200);

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    let on_comment = format!("#thread-{comment} > .reactions");

    // Bob's 👍 shows with its count, not pressed for Ada; her press makes it 2.
    let thumbs = format!("{on_comment} .reaction[data-emoji='+1']");
    assert_eq!(
        browser
            .find(&thumbs)
            .await
            .attr("aria-pressed")
            .await
            .ok()
            .flatten(),
        Some("false".to_string())
    );
    browser.click(&thumbs).await;
    browser
        .wait_for(
            &format!(
                "document.querySelector(\"{thumbs}\")?.getAttribute('aria-pressed') === 'true'"
            ),
            "Ada's 👍",
        )
        .await;
    assert_eq!(browser.text(&format!("{thumbs} .count")).await, "2");
    assert_eq!(
        reactions_of(&api, &id, false).await,
        json!([{ "emoji": "+1", "count": 2, "reactedByMe": true }])
    );

    // Taken back: 1 again, Bob's.
    browser.click(&thumbs).await;
    browser
        .wait_for(
            &format!(
                "document.querySelector(\"{thumbs}\")?.getAttribute('aria-pressed') === 'false'"
            ),
            "Ada's 👍 taken back",
        )
        .await;
    assert_eq!(
        reactions_of(&api, &id, false).await,
        json!([{ "emoji": "+1", "count": 1, "reactedByMe": false }])
    );

    // On the reply, from the picker: 🎉, then taken back (it goes, nobody else gave it).
    let on_reply = format!("#thread-{comment} .reply .reactions");
    browser
        .click(&format!("{on_reply} .reaction-picker summary"))
        .await;
    browser
        .click(&format!("{on_reply} [data-pick='hooray']"))
        .await;
    let hooray = format!("{on_reply} .reaction[data-emoji='hooray']");
    browser
        .wait_for(
            &format!(
                "document.querySelector(\"{hooray}\")?.getAttribute('aria-pressed') === 'true'"
            ),
            "Ada's 🎉 on the reply",
        )
        .await;
    browser.screenshot("workflow-reactions").await;
    assert_eq!(
        reactions_of(&api, &id, true).await,
        json!([{ "emoji": "hooray", "count": 1, "reactedByMe": true }])
    );
    browser.click(&hooray).await;
    browser
        .wait_for(
            &format!("document.querySelector(\"{hooray}\") === null"),
            "the 🎉 gone",
        )
        .await;
    assert_eq!(reactions_of(&api, &id, true).await, json!([]));
    assert_eq!(
        reactions_of(&api, &id, false).await,
        json!([{ "emoji": "+1", "count": 1, "reactedByMe": false }])
    );
    browser.check_accessibility("reactions").await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_applies_a_suggestion_and_the_screen_shows_the_new_version() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let id = api.upload("Launch plan", DOC).await.review_id;
    let first_version = crate::web::review::review_of(&api, &id)
        .await
        .latest_version_id;
    let comment = suggest_tuesday(&api, &id).await;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    let card = format!("#thread-{comment}");
    assert_eq!(
        browser.text(&format!("{card} .suggestion del")).await,
        "ship on Monday"
    );
    assert_eq!(
        browser.text(&format!("{card} .suggestion ins")).await,
        "ship on Tuesday"
    );
    browser.screenshot("workflow-suggestion").await;
    browser.check_accessibility("a suggestion").await;

    browser.click(&format!("{card} [data-action=apply]")).await;
    browser
        .wait_for(
            &format!(
                "(() => {{ const r = document.getElementById('review'); \
                 return r.classList.contains('frame-ready') && r.dataset.version === r.dataset.latest \
                 && r.dataset.version !== '{first_version}'; }})()"
            ),
            "the new version on screen",
        )
        .await;
    let review = crate::web::review::review_of(&api, &id).await;
    assert_eq!(review.source.versions.len(), 2);
    let shown = browser
        .run(
            "return document.getElementById('review').dataset.version",
            vec![],
        )
        .await;
    assert_eq!(shown, json!(review.latest_version_id));
    let text = browser
        .run(
            "return document.getElementById('doc-frame').contentDocument.body.textContent",
            vec![],
        )
        .await;
    assert!(
        text.as_str().is_some_and(|t| t.contains("ship on Tuesday")),
        "{text}"
    );
    let thread = api.get(&format!("/api/reviews/{id}")).await.expect(200)["review"]["comments"][0]
        ["status"]
        .clone();
    assert_eq!(thread, "closed");
    browser.quit().await;
}

/// Posts a form from the page as htmx would (the session's CSRF token in the header); returns
/// the status.
async fn post_from_page(browser: &Browser, path: &str, body: &str) -> Value {
    browser
        .run(
            "return fetch(arguments[0], { method: 'POST', headers: { \
               'HX-Request': 'true', 'Content-Type': 'application/x-www-form-urlencoded', \
               'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content }, \
               body: arguments[1] }).then((r) => r.status);",
            vec![json!(path), json!(body)],
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reader_decides_but_is_offered_no_editor_action_and_bad_forms_are_refused() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("bob@example.com", "Bob Byte", &[], PASSWORD);
    let id = api.upload("Launch plan", DOC).await.review_id;
    let comment = suggest_tuesday(&api, &id).await;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("bob@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    // A reader: the suggestion shows, but no Apply, no Request, no Finalize.
    assert_eq!(
        browser
            .text(&format!("#thread-{comment} .suggestion ins"))
            .await,
        "ship on Tuesday"
    );
    for editor_only in ["[data-action=apply]", "#request-menu", "#finalize-review"] {
        assert!(
            browser.find_all(editor_only).await.is_empty(),
            "{editor_only} is offered to a reader"
        );
    }

    // Sending no decision is refused in the bar; then an approval counts.
    browser.click("#decide-menu summary").await;
    browser.click("#decide-form button[type=submit]").await;
    let refusal = browser
        .wait_for(
            "document.getElementById('decide-refusal')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        refusal.as_str().is_some_and(|t| t.contains("decision")),
        "{refusal}"
    );
    browser.click("#decide-form input[value=approved]").await;
    browser.click("#decide-form button[type=submit]").await;
    browser
        .wait_for(
            "document.getElementById('review-outcome').textContent === 'Approved'",
            "the approval",
        )
        .await;
    assert_eq!(workflow(&api, &id).await["outcome"], "approved");

    // Forms no page sends are refused, never a 5xx: a reaction that is no emoji, or says
    // neither on nor off; finalizing as a reader; applying as a reader.
    let reactions = format!("/reviews/{id}/comments/{comment}/reactions");
    assert_eq!(
        post_from_page(&browser, &reactions, "react=unicorn+on").await,
        json!(400)
    );
    assert_eq!(
        post_from_page(&browser, &reactions, "react=heart").await,
        json!(400)
    );
    assert_eq!(
        post_from_page(
            &browser,
            &format!("/reviews/{id}/comments/cm_nothing/reactions"),
            "react=heart+on"
        )
        .await,
        json!(404)
    );
    // The reader's finalize is answered in the bar (200), and nothing changed.
    assert_eq!(
        post_from_page(&browser, &format!("/reviews/{id}/workflow/finalize"), "").await,
        json!(200)
    );
    assert_eq!(workflow(&api, &id).await["state"], "open");
    let status = post_from_page(
        &browser,
        &format!("/reviews/{id}/comments/{comment}/apply"),
        "base=ver_nothing",
    )
    .await;
    assert_eq!(status, json!(403));
    assert_eq!(
        crate::web::review::review_of(&api, &id)
            .await
            .source
            .versions
            .len(),
        1
    );
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_and_a_reaction_made_elsewhere_arrive_live() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let bob = server.user("bob@example.com", "Bob Byte", &[], "docs,comments");
    let id = api.upload("Launch plan", DOC).await.review_id;
    let comment = api
        .note_on(&id, "ship on Monday", "Which Monday?")
        .await
        .comment
        .id;

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    screen_ready(&browser, &id).await;
    assert_eq!(browser.text("#review-outcome").await, "Pending");

    bob.post(
        &format!("/api/reviews/{id}/decisions"),
        &json!({ "decision": "approved_with_changes", "body": "Two fixes." }),
    )
    .await
    .expect(201);
    browser
        .wait_for(
            "document.getElementById('review-outcome').textContent === 'Approved with changes' \
             && document.getElementById('review-reviewers').textContent.includes('Bob Byte')",
            "Bob's decision, live",
        )
        .await;

    bob.put(
        &format!("/api/reviews/{id}/comments/{comment}/reactions/heart"),
        &json!({}),
    )
    .await
    .expect(200);
    let heart = format!("#thread-{comment} > .reactions .reaction[data-emoji='heart']");
    browser
        .wait_for(
            &format!(
                "document.querySelector(\"{heart}\")?.getAttribute('aria-pressed') === 'false'"
            ),
            "Bob's heart, live",
        )
        .await;
    assert_eq!(browser.text(&format!("{heart} .count")).await, "1");
    browser.quit().await;
}
