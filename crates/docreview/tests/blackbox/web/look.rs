//! The app's look where the tour found it lacking: dark mode follows the system (and stays
//! readable: axe's contrast rules), a favicon served as SVG and linked from every page,
//! `/api/docs` leads back to the app, the organization table fits a phone, and the role select
//! shows its options whole.

use serde_json::{Value, json};

use crate::support::Server;
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{DOC, PASSWORD, setup};
use crate::web::updates::violations;

/// Makes the browser report `prefers-color-scheme: dark` (or light).
async fn emulate_scheme(browser: &Browser, scheme: &str) {
    browser
        .driver
        .cdp()
        .send_raw(
            "Emulation.setEmulatedMedia",
            json!({ "features": [{ "name": "prefers-color-scheme", "value": scheme }] }),
        )
        .await
        .expect("emulate the colour scheme");
}

async fn page_colours(browser: &Browser) -> Value {
    browser
        .run(
            "const body = getComputedStyle(document.body); \
             return { background: body.backgroundColor, text: body.color, \
                      dark: matchMedia('(prefers-color-scheme: dark)').matches };",
            vec![],
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn dark_mode_follows_the_system_and_stays_readable() {
    if !harness::available() {
        return;
    }
    let (server, api) = setup().await;
    let review = api.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    let comment = api
        .note_on(&id, "final review", "Which review?")
        .await
        .comment
        .id;

    let browser = crate::web::updates::recording_browser(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    assert_eq!(
        page_colours(&browser).await,
        json!({ "background": "rgb(246, 247, 249)", "text": "rgb(31, 35, 40)", "dark": false })
    );
    emulate_scheme(&browser, "dark").await;
    browser.goto("/").await;
    assert_eq!(
        page_colours(&browser).await,
        json!({ "background": "rgb(13, 17, 23)", "text": "rgb(230, 237, 243)", "dark": true })
    );
    browser
        .check_accessibility("the documents page, dark")
        .await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            &format!("document.getElementById('review').classList.contains('frame-ready') && document.getElementById('thread-{comment}')"),
            "the review screen",
        )
        .await;
    // The document keeps its author's (light) look inside the dark app.
    assert_eq!(
        browser
            .run(
                "return getComputedStyle(document.getElementById('doc-frame')).backgroundColor",
                vec![]
            )
            .await,
        json!("rgb(255, 255, 255)")
    );
    browser.check_accessibility("the review screen, dark").await;
    browser.screenshot("review-dark").await;
    browser.goto("/account").await;
    browser.check_accessibility("the account page, dark").await;
    assert_eq!(violations(&browser).await, json!([]));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_favicon_is_an_svg_linked_from_every_page() {
    let (server, _api) = setup().await;
    let anonymous = server.client(None);
    let ada = server.sign_in("ada@example.com", PASSWORD).await;
    let mut hrefs = Vec::new();
    for (client, path) in [
        (&anonymous, "/login"),
        (&ada, "/"),
        (&ada, "/account"),
        (&anonymous, "/api/docs"),
        (&ada, "/reviews/no-such-review"),
    ] {
        let page = client.get(path).await;
        let link = "<link rel=\"icon\" type=\"image/svg+xml\" href=\"";
        let start = page
            .text
            .find(link)
            .unwrap_or_else(|| panic!("{path} links no favicon: {}", page.text));
        let rest = &page.text[start + link.len()..];
        hrefs.push(rest[..rest.find('"').expect("href")].to_string());
    }
    hrefs.dedup();
    assert_eq!(hrefs.len(), 1, "{hrefs:?}");
    let icon = anonymous.get(&hrefs[0]).await;
    assert_eq!(icon.status, 200);
    assert_eq!(icon.header("content-type"), Some("image/svg+xml"));
    assert!(
        icon.text
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")
    );
    assert!(!icon.text.contains("<script"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_reference_leads_back_to_the_app() {
    if !harness::available() {
        return;
    }
    let (server, _api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    browser.goto("/api/docs").await;
    browser
        .wait_for(
            "document.querySelectorAll('.opblock').length > 0",
            "the reference",
        )
        .await;
    let back = browser.find(".api-docs-back a").await;
    assert_eq!(back.text().await.expect("text"), "← Back to docreview");
    browser.click_and_wait_for_new_page(&back).await;
    assert_eq!(browser.path().await, "/");
    browser.find(".signout").await;
    browser.quit().await;
}

/// Whether the page scrolls sideways, and the members table's right edge.
const OVERFLOW: &str = "return { page: document.documentElement.scrollWidth, width: document.documentElement.clientWidth, \
    table: Math.ceil(document.querySelector('.table.members').getBoundingClientRect().right) };";

/// The widest option of the register form's role select against the room its box gives text.
const ROLE_FITS: &str = r"
const select = document.querySelector('.register select[name=role]');
const style = getComputedStyle(select);
const context = document.createElement('canvas').getContext('2d');
context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
const widest = Math.max(...[...select.options].map((o) => context.measureText(o.text).width));
// Chromium's arrow takes about 20 px at the end of the box.
const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
return { widest: Math.ceil(widest), room: Math.floor(room) };
";

#[tokio::test(flavor = "multi_thread")]
async fn the_organization_page_fits_a_phone_and_shows_roles_whole() {
    if !harness::available() {
        return;
    }
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    for (email, name) in [
        (
            "grace.brewster.hopper@navy-research.example",
            "Grace Brewster Murray Hopper",
        ),
        (
            "katherine.johnson@flight-research.example",
            "Katherine Johnson",
        ),
    ] {
        server.create_user(email, name, &[]);
    }
    for size in [(1280, 800), (1024, 768), (800, 900), NARROW] {
        let browser = Browser::open(&server, size).await;
        browser.sign_in("ada@example.com", PASSWORD).await;
        browser.goto("/org").await;
        browser.find(".table.members").await;
        let overflow = browser.run(OVERFLOW, vec![]).await;
        let width = overflow["width"].as_i64().expect("width");
        assert!(
            overflow["page"].as_i64() <= Some(width) && overflow["table"].as_i64() <= Some(width),
            "at {size:?} the page scrolls sideways: {overflow}"
        );
        let role = browser.run(ROLE_FITS, vec![]).await;
        assert!(
            role["widest"].as_i64() <= role["room"].as_i64(),
            "at {size:?} the role select cuts its options: {role}"
        );
        if size == NARROW {
            // Each member reads as labelled lines.
            let email = browser
                .run(
                    "const cell = document.querySelector('.table.members td[data-label=Email]'); \
                     return [getComputedStyle(cell).display, getComputedStyle(cell, '::before').content];",
                    vec![],
                )
                .await;
            assert_eq!(email[0], "block", "{email}");
            assert!(email[1].as_str().is_some_and(|c| c != "none"), "{email}");
            browser
                .check_accessibility("the organization page on a phone")
                .await;
            browser.screenshot("org-phone").await;
        }
        browser.quit().await;
    }
}
