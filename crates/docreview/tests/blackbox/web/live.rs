//! Live and safe: a comment written in another session appears without a reload; a write
//! refused with 409 keeps the person's text and offers it again; a comment written while a new
//! version arrived finds its passage in the new version; an ended session keeps the draft.

use docreview_client::api::{AnchorState, VersionMode};
use docreview_client::{HtmlFile, VersionUpload};
use serde_json::json;

use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{DOC, PASSWORD, review_of, select_in_frame, setup};

/// Stops the browser from receiving the events stream, so the screen cannot refresh itself
/// before a racing write (the race is then certain, not likely).
async fn block_events(browser: &Browser) {
    let cdp = browser.driver.cdp();
    cdp.send_raw("Network.enable", json!({}))
        .await
        .expect("network");
    cdp.send_raw("Network.setBlockedURLs", json!({ "urls": ["*/events*"] }))
        .await
        .expect("block the events stream");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_comment_from_another_session_appears_without_a_reload() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    browser.run("window.__sameDocument = true;", vec![]).await;

    let grace = server.sign_in("grace@example.com", PASSWORD).await;
    let started = std::time::Instant::now();
    grace
        .post(
            &format!("/api/reviews/{id}/comments"),
            &json!({ "body": "Written in Grace's browser.", "category": "consult",
                     "locator": { "quote": { "exact": "runbook" } } }),
        )
        .await
        .expect(201);
    browser
        .wait_for(
            "document.getElementById('panel').textContent.includes(\"Written in Grace's browser.\") && document.getElementById('review').dataset.highlights === '1'",
            "Grace's comment and its highlight",
        )
        .await;
    let elapsed = started.elapsed();
    eprintln!("live update shown after {elapsed:?}");
    assert!(elapsed.as_secs_f64() < 5.0, "took {elapsed:?}");
    assert_eq!(
        browser
            .run("return window.__sameDocument === true", vec![])
            .await,
        json!(true),
        "no reload"
    );
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_refused_with_409_keeps_the_typed_text_and_offers_it_again() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    server.create_user_with_password("grace@example.com", "Grace Hopper", &[], PASSWORD);
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let written = api.note_on(&id, "final review", "Which review?").await;
    let comment = written.comment.id.clone();

    let browser = Browser::open(&server, WIDE).await;
    block_events(&browser).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .click(&format!("#thread-{comment} [data-action=reply]"))
        .await;
    browser
        .type_into(&format!("#reply-{comment}"), "The one on Friday.")
        .await;

    // Meanwhile Grace replies to the same thread.
    let grace = server.sign_in("grace@example.com", PASSWORD).await;
    grace
        .post(
            &format!("/api/reviews/{id}/comments/{comment}/thread"),
            &json!({ "body": "Grace was here first." }),
        )
        .await
        .expect(201);

    browser
        .click(&format!(
            "#thread-{comment} .reply-form button[type=submit]"
        ))
        .await;
    browser
        .wait_for(
            &format!("document.querySelector('#thread-{comment} .replies')?.textContent.includes('Grace was here first.')"),
            "the panel refreshed with Grace's reply",
        )
        .await;
    let kept = browser
        .run(
            &format!("return document.getElementById('reply-{comment}').value"),
            vec![],
        )
        .await;
    assert_eq!(kept, json!("The one on Friday."), "the typed text is kept");
    let notice = browser
        .text(&format!("#thread-{comment} .offer-notice"))
        .await;
    assert!(notice.contains("changed while you wrote"), "{notice}");
    let read = review_of(&api, &id).await;
    assert_eq!(read.comments[0].thread.len(), 1);

    // Sent again, it is written after Grace's.
    browser
        .click(&format!(
            "#thread-{comment} .reply-form button[type=submit]"
        ))
        .await;
    browser
        .wait_for(
            &format!("document.querySelectorAll('#thread-{comment} .replies li').length === 2"),
            "both replies",
        )
        .await;
    let read = review_of(&api, &id).await;
    assert_eq!(read.comments[0].thread[1].body, "The one on Friday.");
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_comment_written_while_a_new_version_arrived_moves_to_its_passage_there() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();

    let browser = Browser::open(&server, WIDE).await;
    block_events(&browser).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    select_in_frame(&browser, "needs a runbook").await;
    browser.click("#selection-button:not([hidden])").await;
    browser.type_into("#composer-body", "Who writes it?").await;

    // A new version moves the passage down.
    let v2 = DOC.replace(
        "<h1 id=\"plan\">",
        "<p>A new first paragraph.</p><h1 id=\"plan\">",
    );
    let file = HtmlFile {
        name: "plan.html".into(),
        bytes: v2.into_bytes(),
    };
    let upload = VersionUpload {
        mode: VersionMode::AddVersion,
        label: Some("v2".into()),
        base_version_id: None,
    };
    api.api()
        .import_version(&id, &file, &upload)
        .await
        .expect("new version");

    browser.click(".composer button[type=submit]").await;
    let notice = browser
        .wait_for(
            "!document.querySelector('.composer-notice')?.hidden && document.querySelector('.composer-notice').textContent",
            "the composer offered again",
        )
        .await;
    assert!(
        notice.as_str().unwrap_or_default().contains("new version"),
        "{notice}"
    );
    let kept = browser
        .run(
            "return document.getElementById('composer-body').value",
            vec![],
        )
        .await;
    assert_eq!(kept, json!("Who writes it?"));
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelectorAll('#panel .thread').length === 1",
            "the comment",
        )
        .await;
    let read = review_of(&api, &id).await;
    let anchor = &read.comments[0].anchor;
    assert_eq!(
        anchor.quote.as_ref().map(|q| q.exact.as_str()),
        Some("needs a runbook")
    );
    assert_eq!(anchor.state, AnchorState::Exact);
    assert_eq!(anchor.version_id, read.latest_version_id);
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ended_session_keeps_the_draft_through_signing_in_again() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let written = api.note_on(&id, "final review", "Which review?").await;
    let comment = written.comment.id.clone();

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .click(&format!("#thread-{comment} [data-action=reply]"))
        .await;
    browser
        .type_into(
            &format!("#reply-{comment}"),
            "Typed before the session ended.",
        )
        .await;

    // The session ends (signed out elsewhere).
    let cookie = browser
        .driver
        .get_named_cookie("docreview_session")
        .await
        .expect("the session cookie");
    let reply = reqwest::Client::new()
        .post(format!("{}/logout", server.base))
        .header("cookie", format!("docreview_session={}", cookie.value))
        .header("origin", &server.base)
        .send()
        .await
        .expect("sign out elsewhere");
    assert!(reply.status().is_success() || reply.status().is_redirection());

    browser
        .click(&format!(
            "#thread-{comment} .reply-form button[type=submit]"
        ))
        .await;
    let toast = browser
        .wait_for(
            "document.querySelector('#toasts .toast')?.textContent",
            "the notice",
        )
        .await;
    assert!(
        toast
            .as_str()
            .unwrap_or_default()
            .contains("session has ended"),
        "{toast}"
    );
    let kept = browser
        .run(
            &format!("return document.getElementById('reply-{comment}').value"),
            vec![],
        )
        .await;
    assert_eq!(kept, json!("Typed before the session ended."));

    // Signing in again (as the notice's link does) brings the person back with the draft.
    let link = browser
        .run(
            "return document.querySelector('#toasts .toast a').getAttribute('href')",
            vec![],
        )
        .await;
    browser.goto(link.as_str().expect("href")).await;
    browser.fill_sign_in("ada@example.com", PASSWORD).await;
    browser
        .wait_for(
            &format!("document.getElementById('reply-{comment}')?.value === 'Typed before the session ended.' && !document.querySelector('#thread-{comment} .reply-form').hidden"),
            "the draft restored in its open form",
        )
        .await;
    let read = review_of(&api, &id).await;
    assert!(read.comments[0].thread.is_empty());
    browser.quit().await;
}

/// The screen's fallback: a comment being written on a passage that a new version removed goes
/// to the whole document, says so, and is written there.
#[tokio::test(flavor = "multi_thread")]
async fn a_comment_whose_passage_left_in_a_new_version_goes_to_the_whole_document() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();

    let browser = Browser::open(&server, WIDE).await;
    block_events(&browser).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    select_in_frame(&browser, "needs a runbook").await;
    browser.click("#selection-button:not([hidden])").await;
    browser.type_into("#composer-body", "Who writes it?").await;

    // The new version drops the paragraph.
    api.add_version(
        &id,
        &DOC.replace("<p>Support needs a runbook before launch.</p>", ""),
    )
    .await;

    browser.click(".composer button[type=submit]").await;
    let notice = browser
        .wait_for(
            "!document.querySelector('.composer-notice')?.hidden && document.querySelector('.composer-notice').textContent",
            "the composer offered again",
        )
        .await;
    assert!(
        notice
            .as_str()
            .unwrap_or_default()
            .contains("whole document"),
        "{notice}"
    );
    assert_eq!(
        browser.text(".composer-target").await,
        "On the whole document"
    );
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelectorAll('#panel .thread').length === 1",
            "the comment",
        )
        .await;
    let toasts = browser
        .run(
            "return [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent)",
            vec![],
        )
        .await;
    assert_eq!(toasts, json!([]));
    let read = review_of(&api, &id).await;
    assert_eq!(read.comments.len(), 1);
    let comment = &read.comments[0];
    assert_eq!(comment.body, "Who writes it?");
    assert!(comment.anchor.quote.is_none() && comment.anchor.section_id.is_none());
    browser.quit().await;
}
