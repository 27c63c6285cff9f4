//! A document's Settings dialog on the review screen: rename, tags (known tags suggested),
//! archive and restore, link to and unlink from a project, new versions (file picker, drop, the
//! 409 race that keeps the file), delete with a confirmation naming the title; by mouse, by
//! keyboard and on a phone; every refusal said beside its form with what was typed kept; what
//! each role is offered. State is read back through the typed client.

use docreview_client::api::{
    AccessMode, AllowedUserEntry, GrantRole, ProjectRole, RoleGrant, RolesChange, SharingChange,
};
use serde_json::{Value, json};

use crate::support::{Client, Server};
use crate::web::harness::{self, Browser, NARROW, WIDE};
use crate::web::review::{DOC, PASSWORD, review_of};

/// A server with Ada (admin), Olga (owns the document "Launch plan", manager of ACME), Ed (an
/// editor of it by sharing) and Vic (an internal member: a viewer through link mode).
pub struct Team {
    pub server: Server,
    pub olga: Client,
    pub admin: Client,
    pub id: String,
}

pub async fn team() -> Team {
    let server = Server::start();
    server.create_user_with_password("ada@example.com", "Ada Lovelace", &["--admin"], PASSWORD);
    server.create_user_with_password("olga@example.com", "Olga Owner", &[], PASSWORD);
    server.create_user_with_password("ed@example.com", "Ed Editor", &[], PASSWORD);
    server.create_user_with_password("vic@example.com", "Vic Viewer", &[], PASSWORD);
    server.import_projects(&json!({ "projects": [
        { "code": "ACME", "name": "Acme rollout", "status": "active" },
    ]}));
    let admin = server.client(Some(
        &server.issue_token("ada@example.com", "docs,access,comments,org"),
    ));
    admin
        .api()
        .change_project_roles(
            "ACME",
            &RolesChange {
                add: vec![RoleGrant {
                    email: "olga@example.com".into(),
                    role: ProjectRole::Manager,
                }],
                remove: vec![],
            },
        )
        .await
        .expect("olga manages ACME");
    let olga = server.client(Some(
        &server.issue_token("olga@example.com", "docs,access,comments"),
    ));
    let review = olga.upload("Launch plan", DOC).await;
    let id = review.review_id.clone();
    olga.api()
        .change_sharing(
            &id,
            &SharingChange {
                mode: None,
                allowed_users: Some(vec![AllowedUserEntry {
                    email: "ed@example.com".into(),
                    role: GrantRole::Editor,
                }]),
            },
        )
        .await
        .expect("share with Ed");
    // Another document's tags are the known tags the dialog suggests.
    let other = olga.upload("Budget", "<p>Numbers.</p>").await;
    olga.api()
        .change_meta(
            &other.review_id,
            &docreview_client::api::MetaChange {
                tags: Some(vec!["launch".into(), "q3".into()]),
                archived: None,
            },
        )
        .await
        .expect("tags");
    Team {
        server,
        olga,
        admin,
        id,
    }
}

/// Signs `email` in and opens the review screen of `id`.
pub async fn screen(server: &Server, size: (u32, u32), email: &str, id: &str) -> Browser {
    let browser = Browser::open(server, size).await;
    browser.sign_in(email, PASSWORD).await;
    browser.goto(&format!("/reviews/{id}")).await;
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the review screen",
        )
        .await;
    browser
}

async fn open_settings(browser: &Browser) {
    browser.click("#settings-button").await;
    browser
        .wait_for(
            "document.getElementById('settings-dialog').open && document.getElementById('settings-content')",
            "the settings dialog",
        )
        .await;
}

/// Replaces what `css` holds with `text`.
async fn fill(browser: &Browser, css: &str, text: &str) {
    browser.find(css).await.clear().await.expect("clear");
    browser.type_into(css, text).await;
}

/// Waits for the dialog to say `done`.
async fn done(browser: &Browser, dialog: &str, words: &str) {
    browser
        .wait_for(
            &format!(
                "document.querySelector('#{dialog} .done')?.textContent.includes({})",
                json!(words)
            ),
            words,
        )
        .await;
}

async fn value_of(browser: &Browser, css: &str) -> Value {
    browser
        .run(
            "return document.querySelector(arguments[0])?.value ?? null",
            vec![json!(css)],
        )
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn rename_tag_archive_and_link_from_the_settings_dialog() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;
    open_settings(&browser).await;
    browser.check_accessibility("the settings dialog").await;

    // Rename: the header follows.
    fill(&browser, "#settings-title-field", "Launch plan, final").await;
    browser
        .click("#settings-content form[hx-post$='/settings/title'] button")
        .await;
    done(&browser, "settings-dialog", "Renamed.").await;
    assert_eq!(
        browser.text(".review-title").await,
        "Launch plan, final",
        "the page's heading"
    );
    assert_eq!(review_of(&olga, &id).await.title, "Launch plan, final");

    // Tags: a known tag offered, clicked, another typed; then a refused one kept in place.
    browser.click("[data-add-tag='q3']").await;
    assert_eq!(
        value_of(&browser, "#settings-tags-field").await,
        json!("q3")
    );
    browser.type_into("#settings-tags-field", ", beta").await;
    browser
        .click("#settings-content form[hx-post$='/settings/tags'] button[type=submit]")
        .await;
    done(&browser, "settings-dialog", "Tags saved.").await;
    assert_eq!(review_of(&olga, &id).await.tags, vec!["q3", "beta"]);
    let too_long = format!("q3, {}", "x".repeat(70));
    fill(&browser, "#settings-tags-field", &too_long).await;
    browser
        .click("#settings-content form[hx-post$='/settings/tags'] button[type=submit]")
        .await;
    let refusal = browser
        .wait_for(
            "document.querySelector('#settings-content form[hx-post$=\"/settings/tags\"] .notice')?.textContent",
            "the refusal beside the tags",
        )
        .await;
    assert!(
        refusal.as_str().unwrap_or_default().contains("64"),
        "{refusal}"
    );
    assert_eq!(
        value_of(&browser, "#settings-tags-field").await,
        json!(too_long),
        "what was typed is kept"
    );
    assert_eq!(
        review_of(&olga, &id).await.tags,
        vec!["q3", "beta"],
        "nothing written"
    );
    browser.screenshot("settings-refusal").await;

    // Archive, then restore.
    browser
        .click("#settings-content form[hx-post$='/settings/archive'] button")
        .await;
    done(&browser, "settings-dialog", "Archived").await;
    assert!(review_of(&olga, &id).await.archived);
    assert!(browser.text(".review-meta").await.contains("Archived"));
    browser
        .click("#settings-content form[hx-post$='/settings/archive'] button")
        .await;
    done(&browser, "settings-dialog", "Restored").await;
    assert!(!review_of(&olga, &id).await.archived);

    // Link to a project, then unlink.
    browser
        .run(
            "document.getElementById('settings-project-field').value = 'ACME';",
            vec![],
        )
        .await;
    browser
        .click("#settings-content form[hx-post$='/settings/project'] button")
        .await;
    done(&browser, "settings-dialog", "Linked").await;
    let linked = review_of(&olga, &id).await;
    assert_eq!(linked.project.map(|p| p.code).as_deref(), Some("ACME"));
    browser.screenshot("settings-wide").await;
    browser
        .click("#settings-content form[hx-post$='/settings/unlink'] button")
        .await;
    done(&browser, "settings-dialog", "Unlinked").await;
    assert!(review_of(&olga, &id).await.project.is_none());

    // Linking without choosing is refused in place.
    browser
        .click("#settings-content form[hx-post$='/settings/project'] button")
        .await;
    browser
        .wait_for(
            "document.querySelector('#settings-content form[hx-post$=\"/settings/project\"] .notice')",
            "the refusal beside the project",
        )
        .await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_settings_dialog_works_from_the_keyboard_and_keeps_the_screens_keys_out() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;
    browser
        .run(
            "document.getElementById('settings-button').focus();",
            vec![],
        )
        .await;
    browser
        .find("#settings-button")
        .await
        .send_keys(thirtyfour::Key::Enter)
        .await
        .expect("Enter");
    browser
        .wait_for("document.getElementById('settings-content')", "the dialog")
        .await;
    fill(&browser, "#settings-title-field", "Keyboard title").await;
    // A screen shortcut typed in the dialog stays in the dialog: `d` (comment on the document)
    // pressed on a button does nothing behind it.
    browser
        .run(
            "document.querySelector('#settings-content button').focus();",
            vec![],
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("d")
        .perform()
        .await
        .expect("d");
    // Ctrl+Enter sends the form the focus is in.
    browser
        .find("#settings-title-field")
        .await
        .focus()
        .await
        .ok();
    browser
        .run(
            "document.getElementById('settings-title-field').focus();",
            vec![],
        )
        .await;
    browser
        .driver
        .action_chain()
        .key_down(thirtyfour::Key::Control)
        .send_keys(thirtyfour::Key::Enter)
        .key_up(thirtyfour::Key::Control)
        .perform()
        .await
        .expect("Ctrl+Enter");
    done(&browser, "settings-dialog", "Renamed.").await;
    assert_eq!(review_of(&olga, &id).await.title, "Keyboard title");
    let composing = browser
        .run(
            "return document.querySelector('#composer-slot form') !== null",
            vec![],
        )
        .await;
    assert_eq!(
        composing,
        json!(false),
        "`d` in the dialog opened the composer"
    );
    // Escape closes it.
    browser
        .driver
        .action_chain()
        .send_keys(thirtyfour::Key::Escape)
        .perform()
        .await
        .expect("Escape");
    browser
        .wait_for(
            "!document.getElementById('settings-dialog').open",
            "the dialog closed",
        )
        .await;
    browser.quit().await;
}

/// Writes `html` to a file named `name` in `dir`; its path.
fn html_file(dir: &tempfile::TempDir, name: &str, html: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, html).expect("write the file");
    path.display().to_string()
}

const V2: &str = "<!doctype html><html><head><title>Plan</title></head><body>\
<h1 id=\"plan\">Launch plan</h1><p>We ship on Tuesday after the final review.</p>\
<h2 id=\"risks\">Risks</h2><p>The cache may be cold at start; we warm it with a replay of yesterday's reads.</p>\
</body></html>";

/// Drops a file holding `html` on the dialog's drop zone, as a person dragging it from their
/// desktop would.
async fn drop_file(browser: &Browser, name: &str, html: &str) {
    browser
        .run(
            "const zone = document.querySelector('#settings-content [data-dropzone]');
             const data = new DataTransfer();
             data.items.add(new File([arguments[1]], arguments[0], { type: 'text/html' }));
             for (const type of ['dragenter', 'dragover', 'drop']) {
               zone.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: data }));
             }",
            vec![json!(name), json!(html)],
        )
        .await;
    browser
        .wait_for(
            &format!(
                "document.querySelector('#settings-content [data-file-name]').textContent.includes({})",
                json!(name)
            ),
            "the dropped file named",
        )
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn new_versions_by_picker_and_by_drop_and_a_race_keeps_the_file() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let files = tempfile::tempdir().expect("dir");
    let browser = screen(&server, WIDE, "olga@example.com", &id).await;

    // Nothing chosen: said in place.
    open_settings(&browser).await;
    browser.click("#version-upload button[type=submit]").await;
    browser
        .wait_for(
            "document.querySelector('#version-upload [data-upload-status] .notice')?.textContent.includes('Choose an HTML file')",
            "the missing file said",
        )
        .await;

    // The file picker, with a label: a new version, shown at once.
    let path = html_file(&files, "plan-v2.html", V2.as_bytes());
    browser
        .find("#version-file")
        .await
        .send_keys(path.as_str())
        .await
        .expect("choose the file");
    fill(&browser, "#version-label", "Tuesday").await;
    let before = review_of(&olga, &id).await.latest_version_id;
    let submit = browser.find("#version-upload button[type=submit]").await;
    browser.click_and_wait_for_new_page(&submit).await;
    let read = review_of(&olga, &id).await;
    assert_eq!(read.source.versions.len(), 2);
    assert_eq!(read.source.versions[1].label, "Tuesday");
    assert_ne!(read.latest_version_id, before);
    browser
        .wait_for(
            &format!(
                "document.getElementById('review')?.dataset.version === {}",
                json!(read.latest_version_id)
            ),
            "the new version shown",
        )
        .await;

    // Dropped, replacing the latest version in place.
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    open_settings(&browser).await;
    drop_file(
        &browser,
        "dropped.html",
        &V2.replace("Tuesday", "Wednesday"),
    )
    .await;
    browser
        .run(
            "document.querySelector('#version-upload input[value=replace]').click();",
            vec![],
        )
        .await;
    let submit = browser.find("#version-upload button[type=submit]").await;
    browser.click_and_wait_for_new_page(&submit).await;
    let replaced = review_of(&olga, &id).await;
    assert_eq!(replaced.source.versions.len(), 2, "replaced, not added");
    assert_eq!(replaced.latest_version_id, read.latest_version_id);
    assert_ne!(
        replaced.source.versions[1].source_hash,
        read.source.versions[1].source_hash
    );

    // A race: someone adds a version after the dialog opened. The upload is refused with
    // 409 `stale_target_version`, says so, keeps the file; sent again on top, it lands.
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    open_settings(&browser).await;
    drop_file(&browser, "mine.html", &V2.replace("Tuesday", "Friday")).await;
    olga.add_version(&id, &V2.replace("Tuesday", "Thursday"))
        .await;
    browser.click("#version-upload button[type=submit]").await;
    let said = browser
        .wait_for(
            "document.querySelector('#version-upload [data-upload-status] .notice')?.textContent",
            "the race said",
        )
        .await;
    assert!(
        said.as_str()
            .unwrap_or_default()
            .contains("newer version while you were choosing"),
        "{said}"
    );
    let kept = browser
        .run(
            "return document.getElementById('version-file').files[0]?.name ?? null",
            vec![],
        )
        .await;
    assert_eq!(kept, json!("mine.html"), "the file is still chosen");
    assert_eq!(
        review_of(&olga, &id).await.source.versions.len(),
        3,
        "nothing uploaded"
    );
    browser.screenshot("settings-upload-race").await;
    let again = browser.find("[data-upload-again]").await;
    browser.click_and_wait_for_new_page(&again).await;
    let after = review_of(&olga, &id).await;
    assert_eq!(after.source.versions.len(), 4);
    let latest = olga
        .api()
        .bundle(&id, &after.latest_version_id)
        .await
        .expect("bundle");
    assert!(latest.contains("Friday"));

    // A file the service refuses (not UTF-8): said in place, the file still chosen.
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the screen",
        )
        .await;
    open_settings(&browser).await;
    let bad = html_file(&files, "latin1.html", b"<p>caf\xe9</p>");
    browser
        .find("#version-file")
        .await
        .send_keys(bad.as_str())
        .await
        .expect("choose");
    browser.click("#version-upload button[type=submit]").await;
    let said = browser
        .wait_for(
            "document.querySelector('#version-upload [data-upload-status] .notice')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        said.as_str().unwrap_or_default().contains("UTF-8"),
        "{said}"
    );
    let kept = browser
        .run(
            "return document.getElementById('version-file').files.length",
            vec![],
        )
        .await;
    assert_eq!(kept, json!(1));
    assert_eq!(review_of(&olga, &id).await.source.versions.len(), 4);
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_names_the_title_and_needs_confirming() {
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
    open_settings(&browser).await;
    browser.click("[data-confirm-open]").await;
    let confirm = browser.text("#confirm-delete").await;
    assert!(confirm.contains("Delete “Launch plan”?"), "{confirm}");
    assert_eq!(
        browser.text("#confirm-delete button[type=submit]").await,
        "Delete “Launch plan”"
    );
    let focused = browser
        .run(
            "return document.activeElement?.hasAttribute('data-confirm-cancel')",
            vec![],
        )
        .await;
    assert_eq!(focused, json!(true), "the safe choice has the focus");
    browser.screenshot("settings-delete-confirm").await;
    // Keep it: nothing happens.
    browser.click("[data-confirm-cancel]").await;
    assert!(
        browser
            .run(
                "return document.getElementById('confirm-delete').hidden",
                vec![]
            )
            .await
            .as_bool()
            .unwrap_or_default()
    );
    assert_eq!(review_of(&olga, &id).await.title, "Launch plan");

    // A refusal in place: the owner lost the document to an admin's transfer meanwhile.
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
    browser.click("[data-confirm-open]").await;
    browser.click("#confirm-delete button[type=submit]").await;
    let said = browser
        .wait_for(
            "document.querySelector('#settings-content .notice')?.textContent",
            "the refusal",
        )
        .await;
    assert!(
        said.as_str().unwrap_or_default().contains("owner"),
        "{said}"
    );
    assert!(olga.api().review(&id, false).await.is_ok(), "not deleted");
    browser.quit().await;

    // Ed, the owner now, deletes it and lands on the documents list, which says so.
    let ed = screen(&server, WIDE, "ed@example.com", &id).await;
    open_settings(&ed).await;
    ed.click("[data-confirm-open]").await;
    let delete = ed.find("#confirm-delete button[type=submit]").await;
    ed.click_and_wait_for_new_page(&delete).await;
    assert_eq!(ed.path().await, "/?deleted=1");
    assert_eq!(ed.text(".done").await, "The document was deleted.");
    let gone = olga.api().review(&id, false).await;
    assert!(gone.is_err(), "{gone:?}");
    ed.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn each_role_is_offered_only_what_it_may_do() {
    if !harness::available() {
        return;
    }
    let Team { server, id, .. } = team().await;
    // A viewer: neither dialog.
    let vic = screen(&server, WIDE, "vic@example.com", &id).await;
    let buttons = vic
        .run(
            "return [!!document.getElementById('settings-button'), !!document.getElementById('share-button')]",
            vec![],
        )
        .await;
    assert_eq!(buttons, json!([false, false]));
    vic.quit().await;

    // An editor: settings without deletion; sharing read, not changed.
    let ed = screen(&server, WIDE, "ed@example.com", &id).await;
    open_settings(&ed).await;
    let offered = ed
        .run(
            "const c = document.getElementById('settings-content');
             return { title: !!c.querySelector('#settings-title-field'), tags: !!c.querySelector('#settings-tags-field'),
                      version: !!c.querySelector('#version-upload'), remove: !!c.querySelector('.danger-zone') };",
            vec![],
        )
        .await;
    assert_eq!(
        offered,
        json!({ "title": true, "tags": true, "version": true, "remove": false })
    );
    ed.quit().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_on_a_phone() {
    if !harness::available() {
        return;
    }
    let Team {
        server, olga, id, ..
    } = team().await;
    let phone = screen(&server, NARROW, "olga@example.com", &id).await;
    open_settings(&phone).await;
    let fits = phone
        .run(
            "const r = document.getElementById('settings-dialog').getBoundingClientRect(); \
             const inside = [...document.querySelectorAll('#settings-dialog input, #settings-dialog button, #settings-dialog select')] \
               .filter((e) => e.offsetParent !== null) \
               .every((e) => { const b = e.getBoundingClientRect(); return b.left >= 0 && b.right <= window.innerWidth + 1; }); \
             return { width: Math.round(r.width), inside };",
            vec![],
        )
        .await;
    assert_eq!(fits, json!({ "width": 390, "inside": true }));
    fill(&phone, "#settings-title-field", "From a phone").await;
    phone
        .click("#settings-content form[hx-post$='/settings/title'] button")
        .await;
    done(&phone, "settings-dialog", "Renamed.").await;
    assert_eq!(review_of(&olga, &id).await.title, "From a phone");
    phone.screenshot("settings-narrow").await;
    phone
        .check_accessibility("the settings dialog (narrow)")
        .await;
    phone.quit().await;
}

/// Shares by typed client: `mode` and the people.
pub async fn sharing_of(client: &Client, id: &str) -> (AccessMode, Vec<(String, GrantRole)>) {
    let sharing = client.api().sharing(id).await.expect("sharing");
    (
        sharing.mode,
        sharing
            .allowed_users
            .into_iter()
            .map(|entry| (entry.email, entry.role))
            .collect(),
    )
}

/// The session's CSRF token, as a page carries it.
async fn csrf_of(session: &Client, id: &str) -> String {
    let page = session.get(&format!("/reviews/{id}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let marker = "name=\"csrf-token\" content=\"";
    let start = page.text.find(marker).expect("the token") + marker.len();
    page.text[start..]
        .split('"')
        .next()
        .expect("value")
        .to_string()
}

#[tokio::test]
async fn the_dialogs_forms_need_the_token_and_no_malformed_form_fails() {
    let Team {
        server, olga, id, ..
    } = team().await;
    let session = server.sign_in("olga@example.com", PASSWORD).await;
    let csrf = csrf_of(&session, &id).await;
    let before = review_of(&olga, &id).await;
    let sharing_before = sharing_of(&olga, &id).await;
    let writes = [
        "/markdown-preview".to_string(),
        format!("/reviews/{id}/settings/title"),
        format!("/reviews/{id}/settings/tags"),
        format!("/reviews/{id}/settings/archive"),
        format!("/reviews/{id}/settings/project"),
        format!("/reviews/{id}/settings/unlink"),
        format!("/reviews/{id}/delete"),
        format!("/reviews/{id}/share/mode"),
        format!("/reviews/{id}/share/people"),
        format!("/reviews/{id}/share/remove"),
        format!("/reviews/{id}/share/owner"),
    ];
    let valid = "title=T&tags=a&archived=true&project=ACME&mode=restricted&email=vic%40example.com&role=editor&body=x";
    for path in &writes {
        // Without the session's token: refused, nothing done.
        let refused = session
            .send(
                session
                    .raw("POST", path)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(valid),
            )
            .await;
        assert_eq!(refused.status, 403, "{path}: {}", refused.text);
        // Malformed forms: a refusal, never a failure (deletion has no fields to get wrong).
        if path.ends_with("/delete") {
            continue;
        }
        for body in [
            "",
            "title",
            "archived=maybe",
            "role=boss&email=vic%40localhost",
            "mode=open",
            "tags=%00",
            "email=%ZZ",
            "project=NOPE",
            "email=&role=",
            "tags=,,,&title=%20%20",
        ] {
            let answer = session
                .send(
                    session
                        .raw("POST", path)
                        .header("x-csrf-token", &csrf)
                        .header("hx-request", "true")
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(body),
                )
                .await;
            assert!(
                (200..500).contains(&answer.status),
                "{path} `{body}`: {} {}",
                answer.status,
                answer.text
            );
        }
    }
    let after = review_of(&olga, &id).await;
    assert_eq!(after.title, before.title);
    assert_eq!(after.tags, before.tags);
    assert_eq!(after.archived, before.archived);
    assert!(after.project.is_none());
    assert_eq!(sharing_of(&olga, &id).await, sharing_before);

    // Another document, or one that does not exist: 404, never a hint.
    for path in ["/reviews/rv_nope/settings", "/reviews/rv_nope/share"] {
        assert_eq!(session.get(path).await.status, 404, "{path}");
    }
    let missing = session
        .send(
            session
                .raw("POST", "/reviews/rv_nope/settings/title")
                .header("x-csrf-token", &csrf)
                .header("hx-request", "true")
                .form(&[("title", "x")]),
        )
        .await;
    assert_eq!(missing.status, 404, "{}", missing.text);
    // A viewer's write is refused by the core and said in place (422), changing nothing.
    let vic = server.sign_in("vic@example.com", PASSWORD).await;
    let vic_csrf = csrf_of(&vic, &id).await;
    let refused = vic
        .send(
            vic.raw("POST", &format!("/reviews/{id}/settings/title"))
                .header("x-csrf-token", &vic_csrf)
                .header("hx-request", "true")
                .form(&[("title", "Vic's title")]),
        )
        .await;
    assert_eq!(refused.status, 422, "{}", refused.text);
    assert!(
        refused
            .text
            .contains("changing the title needs the editor role"),
        "{}",
        refused.text
    );
    assert_eq!(review_of(&olga, &id).await.title, before.title);
}
