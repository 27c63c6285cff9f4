//! `serve --demo` as a new user meets it: sign in with the printed credentials, open the printed
//! review screen, review with the keyboard, and switch versions to see a moved and an orphaned
//! comment. Takes the README's screenshots.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use serde_json::json;

use crate::support::Storage;
use crate::web::harness::{self, Browser, NARROW, WIDE};

struct Demo {
    child: Child,
    base: String,
    review_path: String,
    _storage: std::sync::Arc<Storage>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `docreview serve --demo` (always on SQLite: the demo seeds a fresh embedded database).
fn start_demo() -> Demo {
    let storage = Storage::fresh();
    let mut child = storage
        .command()
        .env_remove("DATABASE_URL")
        .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the demo");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut review_url = None;
    let base = loop {
        let line = lines.next().expect("demo output").expect("read");
        if let Some(url) = line.trim().strip_prefix("Review screen:") {
            review_url = Some(url.trim().to_string());
        }
        if let Some(address) = line.strip_prefix("docreview listening on ") {
            break address.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let review_url = review_url.expect("the demo prints the review screen's URL");
    Demo {
        review_path: review_url
            .strip_prefix(&base)
            .expect("on the base")
            .to_string(),
        base,
        child,
        _storage: storage,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_user_reviews_the_demo_document_and_compares_versions() {
    if !harness::available() {
        return;
    }
    let demo = start_demo();
    let browser = Browser::open_at(&demo.base, WIDE).await;
    browser.goto(&demo.review_path).await;
    // Not signed in: the sign-in page first, then straight to the review screen.
    browser
        .fill_sign_in("ada@example.com", "demo-password")
        .await;
    assert_eq!(browser.path().await, demo.review_path);
    // The open threads show first; all of them, resolved too, with the Status filter.
    browser
        .wait_for(
            "document.getElementById('review')?.classList.contains('frame-ready')",
            "the review screen",
        )
        .await;
    assert!(
        browser.text("#panel-count").await.contains(" of "),
        "the count says some threads are not shown"
    );
    browser
        .run(
            "const status = document.getElementById('filter-status'); status.value = 'all'; \
             status.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await;
    browser
        .wait_for(
            "document.querySelector('#panel .thread.is-closed')",
            "the resolved threads",
        )
        .await;
    let drawn = browser
        .wait_for(
            "Number(document.getElementById('review').dataset.highlights) >= 5 && document.getElementById('review').dataset.highlights",
            "the demo's highlights",
        )
        .await;
    assert!(drawn.as_str().is_some(), "{drawn}");
    // Resolved threads show one line until opened: open them.
    browser
        .run(
            "document.querySelectorAll('#panel .thread.is-closed [data-action=expand]').forEach((b) => b.click());",
            vec![],
        )
        .await;
    // Rendered text (group titles are upper-cased by CSS): compare without case.
    let page = browser.text("#panel").await.to_lowercase();
    for expected in [
        "Lost their passage",
        "A cold start sends every read",
        "Approximate",
        "Resolved",
        "Agreed, raising it to 128 MiB in v2.",
        "On the whole document",
        "Goals",
    ] {
        assert!(
            page.contains(&expected.to_lowercase()),
            "the panel shows {expected:?}: {page}"
        );
    }
    browser.check_accessibility("the demo review screen").await;

    // Keyboard: next comment, reply, send with Ctrl+Enter.
    browser
        .run(
            "document.activeElement.blur(); document.body.focus();",
            vec![],
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("j")
        .perform()
        .await
        .expect("j");
    let active = browser
        .wait_for(
            "document.querySelector('.thread.is-active')?.dataset.comment",
            "a current comment",
        )
        .await;
    let active = active.as_str().expect("id").to_string();
    browser
        .driver
        .action_chain()
        .send_keys("r")
        .perform()
        .await
        .expect("r");
    browser
        .wait_for(
            &format!("document.activeElement?.id === 'reply-{active}'"),
            "the reply field focused",
        )
        .await;
    browser
        .driver
        .action_chain()
        .send_keys("Agreed.")
        .key_down(thirtyfour::Key::Control)
        .send_keys(thirtyfour::Key::Enter)
        .key_up(thirtyfour::Key::Control)
        .perform()
        .await
        .expect("type and send");
    browser
        .wait_for(
            &format!("document.querySelector('#thread-{active} .replies')?.textContent.includes('Agreed.')"),
            "the reply sent from the keyboard",
        )
        .await;
    browser.run("window.scrollTo(0, 0)", vec![]).await;
    browser.screenshot("demo-review-wide").await;

    // Versions: the picker counts per version; v1 holds every comment exactly.
    browser.click("#versions-menu summary").await;
    let versions = browser
        .wait_for(
            "document.querySelector('.version-list')?.innerText",
            "the versions with their counts",
        )
        .await;
    let versions = versions.as_str().unwrap_or_default().to_string();
    assert!(
        versions.contains("1 approximate") && versions.contains("1 lost"),
        "{versions}"
    );
    browser.screenshot("demo-versions").await;
    browser.click("#changes-menu summary").await;
    let changes = browser
        .wait_for(
            "document.querySelector('.changes-view')?.innerText",
            "the changes",
        )
        .await;
    assert!(
        changes.as_str().unwrap_or_default().contains("128"),
        "{changes}"
    );
    let old_version = browser
        .run(
            "return [...document.querySelectorAll('.version-list a')].find(a => !a.textContent.includes('latest')).getAttribute('href')",
            vec![],
        )
        .await;
    browser.goto(old_version.as_str().expect("href")).await;
    browser
        .wait_for(
            "document.getElementById('review').classList.contains('frame-ready')",
            "v1",
        )
        .await;
    // On v1 the moved and the orphaned comment are exact; only the agent's comments, written
    // on v2's new text, have no passage there.
    let states = browser
        .run(
            "return Object.fromEntries([...document.querySelectorAll('#panel .thread')].map(t => [t.dataset.exact, t.dataset.state]))",
            vec![],
        )
        .await;
    assert_eq!(states["at most 64 MiB"], "exact", "{states}");
    assert_eq!(states["A cold start sends every read"], "exact", "{states}");
    assert_eq!(states["watch the p99 latency"], "orphaned", "{states}");
    let cold = browser
        .run(
            "const h = document.getElementById('doc-frame').contentWindow.CSS.highlights; \
             return [...h.values()].flatMap(x => [...x]).map(r => r.toString());",
            vec![],
        )
        .await;
    let cold = cold.as_array().expect("ranges").clone();
    assert!(
        cold.contains(&json!("A cold start sends every read")),
        "{cold:?}"
    );
    assert!(cold.contains(&json!("at most 64 MiB")), "{cold:?}");
    browser.quit().await;

    let phone = Browser::open_at(&demo.base, NARROW).await;
    phone
        .goto(&format!("{}?status=all", demo.review_path))
        .await;
    phone.fill_sign_in("ada@example.com", "demo-password").await;
    phone
        .wait_for(
            "Number(document.getElementById('review').dataset.highlights) >= 5",
            "highlights",
        )
        .await;
    phone.screenshot("demo-review-narrow").await;
    let width = phone
        .run("return document.documentElement.scrollWidth", vec![])
        .await;
    assert!(
        width.as_u64().is_some_and(|w| w <= 390),
        "nothing wider than the phone: {width}"
    );
    phone.click("#drawer-toggle").await;
    phone
        .wait_for(
            "document.getElementById('review').classList.contains('drawer-open')",
            "the drawer",
        )
        .await;
    phone.screenshot("demo-review-narrow-drawer").await;
    phone
        .check_accessibility("the demo review screen on a phone")
        .await;
    phone.quit().await;
}
