//! A document's Share dialog on the review screen: link or restricted (each explained), the
//! people and their roles, adding by email with members suggested, a role changed at once,
//! removing, transferring ownership; refusals said beside their form with what was typed kept;
//! an editor reads sharing without controls; the keyboard and a phone. State is read back
//! through the typed client.

use docreview_client::api::{AccessMode, GrantRole};
use serde_json::json;

use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::review_of;
use crate::web::settings::{Team, screen, sharing_of, team};

async fn open_share(browser: &Browser) {
    browser.click("#share-button").await;
    browser
        .wait_for(
            "document.getElementById('share-dialog').open && document.getElementById('share-content')",
            "the share dialog",
        )
        .await;
}

async fn said(browser: &Browser, words: &str) {
    browser
        .wait_for(
            &format!(
                "document.querySelector('#share-content .done')?.textContent.includes({})",
                json!(words)
            ),
            words,
        )
        .await;
}

/// The refusal said beside the form matching `form`.
async fn refusal(browser: &Browser, form: &str) -> String {
    browser
        .wait_for(
            &format!("document.querySelector('#share-content {form} .notice')?.textContent"),
            &format!("the refusal beside {form}"),
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_owner_shares_changes_roles_removes_and_transfers() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;
    open_share(&browser).await;
    browser.check_accessibility("the share dialog").await;
    // Both kinds of access say what they mean; link mode is the default.
    let modes = browser
        .run(
            "return [...document.querySelectorAll('#share-content input[name=mode]')].map((r) => [r.value, r.checked, r.closest('label').textContent.replace(/\\s+/g, ' ').trim()])",
            vec![],
        )
        .await;
    assert_eq!(modes[0][0], "link");
    assert_eq!(modes[0][1], true);
    assert!(
        modes[0][2]
            .as_str()
            .unwrap_or_default()
            .contains("External members never see it")
    );
    assert!(
        modes[1][2]
            .as_str()
            .unwrap_or_default()
            .contains("Only the owner, the people below")
    );
    // Members are suggested for the email field.
    let suggested = browser
        .run(
            "return [...document.querySelectorAll('#share-members option')].map((o) => o.value)",
            vec![],
        )
        .await;
    for email in ["ada@example.com", "ed@example.com", "vic@example.com"] {
        assert!(
            suggested
                .as_array()
                .is_some_and(|all| all.contains(&json!(email))),
            "{email} suggested: {suggested}"
        );
    }
    // Ed is listed, by name, as an editor.
    assert!(browser.text(".person").await.contains("Ed Editor"));

    // Restricted.
    browser
        .click("#share-content input[name=mode][value=restricted]")
        .await;
    browser
        .click("#share-content form[hx-post$='/share/mode'] button")
        .await;
    said(&browser, "Saved.").await;
    assert_eq!(sharing_of(&olga, &id).await.0, AccessMode::Restricted);

    // Add Vic as a viewer.
    browser.type_into("#share-email", "vic@example.com").await;
    browser
        .click("#share-content .add-person button[type=submit]")
        .await;
    said(&browser, "Added.").await;
    assert_eq!(
        sharing_of(&olga, &id).await.1,
        vec![
            ("ed@example.com".to_string(), GrantRole::Editor),
            ("vic@example.com".to_string(), GrantRole::Viewer)
        ]
    );
    // An address the service refuses: said beside the field, the address kept.
    browser.type_into("#share-email", "vic@localhost").await;
    browser
        .click("#share-content .add-person button[type=submit]")
        .await;
    let why = refusal(&browser, ".add-person").await;
    assert!(why.contains("not a valid email address"), "{why}");
    assert_eq!(
        browser
            .run(
                "return document.getElementById('share-email').value",
                vec![]
            )
            .await,
        json!("vic@localhost")
    );
    browser.screenshot("share-refusal").await;

    // Vic's role changes as soon as it is chosen.
    browser
        .run(
            "const select = document.querySelector('.person[data-email=\"vic@example.com\"] select'); \
             select.value = 'editor'; select.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await;
    said(&browser, "Role changed.").await;
    assert!(
        sharing_of(&olga, &id)
            .await
            .1
            .contains(&("vic@example.com".to_string(), GrantRole::Editor))
    );
    browser.screenshot("share-wide").await;

    // Remove Ed.
    browser
        .click(".person[data-email='ed@example.com'] .person-remove button")
        .await;
    said(&browser, "Removed.").await;
    assert_eq!(
        sharing_of(&olga, &id).await.1,
        vec![("vic@example.com".to_string(), GrantRole::Editor)]
    );

    // Transfer: refused for someone who is no member (kept), then to Vic.
    browser
        .type_into("#owner-email", "nobody@example.com")
        .await;
    browser
        .click("#share-content form[hx-post$='/share/owner'] button")
        .await;
    let why = refusal(&browser, "form[hx-post$=\"/share/owner\"]").await;
    assert!(why.contains("not an active member"), "{why}");
    assert_eq!(
        browser
            .run(
                "return document.getElementById('owner-email').value",
                vec![]
            )
            .await,
        json!("nobody@example.com")
    );
    browser
        .find("#owner-email")
        .await
        .clear()
        .await
        .expect("clear");
    browser.type_into("#owner-email", "vic@example.com").await;
    browser
        .click("#share-content form[hx-post$='/share/owner'] button")
        .await;
    said(&browser, "Ownership transferred.").await;
    let read = review_of(&olga, &id).await;
    assert_eq!(read.owner.display_name, "Vic Viewer");
    assert_eq!(
        read.role.as_str(),
        "editor",
        "the old owner stays an editor"
    );
    // Olga, an editor now, reads sharing without the controls.
    let controls = browser
        .run(
            "return !!document.querySelector('#share-content input[name=mode], #share-content .add-person, #share-content .person-remove')",
            vec![],
        )
        .await;
    assert_eq!(controls, json!(false));
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_share_dialog_says_why_in_place() {
    if !harness::available() {
        return;
    }
    let Team {
        server,
        olga,
        id,
        admin,
    } = team().await;
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;
    open_share(&browser).await;
    browser.type_into("#share-email", "vic@example.com").await;
    // Meanwhile an admin hands the document to Ed: Olga may no longer share it.
    admin
        .api()
        .transfer_owner(
            &id,
            &docreview_client::api::OwnerChange {
                email: "ed@example.com".into(),
            },
        )
        .await
        .expect("transfer");
    browser
        .click("#share-content .add-person button[type=submit]")
        .await;
    let why = browser
        .wait_for(
            "document.querySelector('#share-content > .notice')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        why.as_str()
            .unwrap_or_default()
            .contains("changing the sharing settings needs the owner role"),
        "{why}"
    );
    assert!(
        !sharing_of(&olga, &id)
            .await
            .1
            .iter()
            .any(|(email, _)| email == "vic@example.com")
    );
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_reads_sharing_and_the_keyboard_and_a_phone_share() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let ed = screen(&server, WIDE, "ed@example.com", &id).await;
    open_share(&ed).await;
    let shown = ed
        .run(
            "const c = document.getElementById('share-content');
             return { controls: !!c.querySelector('form'), people: c.querySelector('.people')?.textContent.includes('ed@example.com'),
                      says: c.textContent.includes('Only its owner changes who can open it') };",
            vec![],
        )
        .await;
    assert_eq!(
        shown,
        json!({ "controls": false, "people": true, "says": true })
    );
    ed.quit().await;

    // The keyboard: the Share button, the email field, Enter adds.
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;
    browser
        .run("document.getElementById('share-button').focus();", vec![])
        .await;
    browser
        .find("#share-button")
        .await
        .send_keys(thirtyfour::Key::Enter)
        .await
        .expect("Enter");
    browser
        .wait_for("document.getElementById('share-email')", "the dialog")
        .await;
    browser
        .find("#share-email")
        .await
        .send_keys("vic@example.com")
        .await
        .expect("type");
    browser
        .find("#share-email")
        .await
        .send_keys(thirtyfour::Key::Enter)
        .await
        .expect("Enter");
    said(&browser, "Added.").await;
    assert!(
        sharing_of(&olga, &id)
            .await
            .1
            .contains(&("vic@example.com".to_string(), GrantRole::Viewer))
    );
    browser.quit().await;

    // A phone: the dialog is the screen; restricting works there.
    let phone = screen(&server, NARROW, "olga@example.com", &id).await;
    open_share(&phone).await;
    let width = phone
        .run(
            "return Math.round(document.getElementById('share-dialog').getBoundingClientRect().width)",
            vec![],
        )
        .await;
    assert_eq!(width, json!(390));
    phone
        .click("#share-content input[name=mode][value=restricted]")
        .await;
    phone
        .click("#share-content form[hx-post$='/share/mode'] button")
        .await;
    said(&phone, "Saved.").await;
    assert_eq!(sharing_of(&olga, &id).await.0, AccessMode::Restricted);
    phone.screenshot("share-narrow").await;
    phone.check_accessibility("the share dialog (narrow)").await;
    phone.quit().await;
}
