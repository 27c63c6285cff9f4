//! Comment and reply bodies read as Markdown on the review screen (rendered by the server,
//! cleaned), the composer's preview (button, keyboard, following what is typed, the phone's
//! drawer, a refusal said in place), while the API keeps every body exactly as written.

use serde_json::{Value, json};

use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{DOC, PASSWORD, review_of, select_in_frame, setup};

const BODY: &str = "Please *tighten* this, see **the plan**:\n\n\
- keep `cache_ttl`\n- drop the [old link](https://example.com/old)\n\n\
> quoted advice\n\n\
<b>raw html</b> and [bad](javascript:alert(1))\nsecond line";

/// What the card of `comment_id` shows, element by element.
async fn rendered(browser: &Browser, selector: &str) -> Value {
    browser
        .run(
            "const body = document.querySelector(arguments[0]);
             const link = body.querySelector('a');
             return {
               em: body.querySelector('em')?.textContent ?? null,
               strong: body.querySelector('strong')?.textContent ?? null,
               code: body.querySelector('code')?.textContent ?? null,
               items: [...body.querySelectorAll('ul > li')].map((li) => li.textContent),
               quote: body.querySelector('blockquote')?.textContent.trim() ?? null,
               links: [...body.querySelectorAll('a')].map((a) => [a.getAttribute('href'), a.rel, a.target]),
               bold: body.querySelectorAll('b').length,
               breaks: body.querySelectorAll('br').length,
               text: body.textContent,
             };",
            vec![json!(selector)],
        )
        .await
}

fn assert_rendered(shown: &Value, what: &str) {
    assert_eq!(shown["em"], "tighten", "{what}: {shown:#}");
    assert_eq!(shown["strong"], "the plan", "{what}");
    assert_eq!(shown["code"], "cache_ttl", "{what}");
    assert_eq!(
        shown["items"],
        json!(["keep cache_ttl", "drop the old link"]),
        "{what}"
    );
    assert_eq!(shown["quote"], "quoted advice", "{what}");
    assert_eq!(
        shown["links"],
        json!([["https://example.com/old", "noopener nofollow ugc", "_blank"]]),
        "{what}: only the http link is a link, opening a new tab"
    );
    assert_eq!(shown["bold"], 0, "{what}: raw HTML is not markup");
    let text = shown["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("<b>raw html</b>"),
        "{what}: raw HTML is shown as text: {text}"
    );
    assert!(
        text.contains("bad"),
        "{what}: a dropped link keeps its text"
    );
    assert!(
        shown["breaks"].as_u64().unwrap_or_default() >= 1,
        "{what}: a line break stays a line break"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_and_replies_read_as_markdown_and_the_api_keeps_them_raw() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let written = api.note_on(&id, "final review", BODY).await;
    let comment = written.comment.id.clone();

    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    let card = format!("#thread-{comment} > .body");
    browser.find(&card).await;
    assert_rendered(&rendered(&browser, &card).await, "the card");

    // A reply written on the screen is Markdown too.
    browser
        .click(&format!("#thread-{comment} [data-action=reply]"))
        .await;
    browser
        .run(
            "const field = document.getElementById(arguments[0]); field.value = arguments[1];",
            vec![json!(format!("reply-{comment}")), json!(BODY)],
        )
        .await;
    browser
        .click(&format!(
            "#thread-{comment} .reply-form button[type=submit]"
        ))
        .await;
    let reply = format!("#thread-{comment} .reply .body");
    browser.find(&reply).await;
    assert_rendered(&rendered(&browser, &reply).await, "the reply");

    // The API keeps both bodies exactly as written.
    let read = review_of(&api, &id).await;
    assert_eq!(read.comments[0].body, BODY);
    assert_eq!(read.comments[0].thread[0].body, BODY);
    browser.screenshot("markdown-card").await;
    browser.check_accessibility("Markdown bodies").await;
    browser.quit().await;
}

/// Opens the composer on a passage, with `text` typed into it.
async fn compose(browser: &Browser, text: &str) {
    select_in_frame(browser, "warm it with a replay").await;
    browser.click("#selection-button:not([hidden])").await;
    browser.type_into("#composer-body", text).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_composer_previews_what_will_be_shown() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the document",
        )
        .await;
    compose(&browser, "Use *replay* with `--warm`").await;

    // The button shows the preview, rendered by the server.
    browser.click(".composer [data-preview]").await;
    browser
        .wait_for(
            "document.querySelector('.composer .preview em')?.textContent === 'replay'",
            "the preview",
        )
        .await;
    assert_eq!(
        browser.text(".composer [data-preview]").await,
        "Hide preview"
    );
    // It follows what is typed.
    browser
        .type_into("#composer-body", " and **strong words**")
        .await;
    browser
        .wait_for(
            "document.querySelector('.composer .preview strong')?.textContent === 'strong words'",
            "the preview following the typing",
        )
        .await;
    browser.screenshot("markdown-preview").await;
    // The keyboard: the button is reached and pressed without a mouse (Enter), hiding it.
    browser
        .run(
            "document.querySelector('.composer [data-preview]').focus();",
            vec![],
        )
        .await;
    browser
        .find(".composer [data-preview]")
        .await
        .send_keys(thirtyfour::Key::Enter)
        .await
        .expect("press Enter");
    browser
        .wait_for(
            "!document.querySelector('.composer .preview')",
            "the preview hidden",
        )
        .await;
    // Space shows it again.
    browser
        .find(".composer [data-preview]")
        .await
        .send_keys(" ")
        .await
        .expect("press Space");
    browser
        .wait_for(
            "document.querySelector('.composer .preview code')?.textContent === '--warm'",
            "the preview again",
        )
        .await;

    // Sending stores the raw text and the card shows it rendered like the preview did.
    browser.click(".composer button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelector('#panel .thread .body em')?.textContent === 'replay'",
            "the card rendered",
        )
        .await;
    let read = review_of(&api, &id).await;
    assert_eq!(
        read.comments[0].body,
        "Use *replay* with `--warm` and **strong words**"
    );

    // A refused preview (here: no CSRF token) says so in place and keeps the text; the composer
    // on the whole document this time.
    browser.click("#comment-document").await;
    browser.type_into("#composer-body", "Kept *text*").await;
    browser
        .run(
            "document.querySelector('meta[name=csrf-token]').content = 'wrong';",
            vec![],
        )
        .await;
    browser.click(".composer [data-preview]").await;
    let said = browser
        .wait_for(
            "document.querySelector('.composer .preview')?.textContent.includes('could not be made') && document.querySelector('.composer .preview').textContent",
            "the refusal",
        )
        .await;
    assert!(
        said.as_str().unwrap_or_default().contains("HTTP 403"),
        "{said}"
    );
    let kept = browser
        .run(
            "return document.getElementById('composer-body').value",
            vec![],
        )
        .await;
    assert_eq!(kept, json!("Kept *text*"));
    browser.quit().await;

    // The phone: the composer opens in the drawer and previews there.
    let phone = Browser::open(&server, NARROW).await;
    phone.sign_in("ada@example.com", PASSWORD).await;
    phone.goto(&format!("/reviews/{id}")).await;
    phone
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "the document",
        )
        .await;
    compose(&phone, "On a *phone*").await;
    phone
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open')",
            "the drawer",
        )
        .await;
    phone.click(".composer [data-preview]").await;
    phone
        .wait_for(
            "document.querySelector('.composer .preview em')?.textContent === 'phone'",
            "the preview on a phone",
        )
        .await;
    let visible = phone
        .run(
            "const r = document.querySelector('.composer .preview').getBoundingClientRect(); \
             return r.width > 0 && r.right <= window.innerWidth + 1;",
            vec![],
        )
        .await;
    assert_eq!(visible, json!(true), "the preview fits the phone");
    phone.screenshot("markdown-preview-narrow").await;
    phone.check_accessibility("the preview (narrow)").await;
    phone.quit().await;
}
