//! Hostile content, loaded in the app in Chromium: script vectors in document bodies, titles,
//! headings, tags, comment bodies, replies and display names. None may run script in the app's
//! origin, read the session cookie, make an authenticated API call, navigate the top window or
//! open a window.
//!
//! Detection: every vector, if it ran, calls `top.__hit(id)` (or, where no hook exists, marks
//! its document with `data-pwned`); a hook installed in every page before its scripts records
//! those calls and every `window.open`; a beacon server on loopback records any request that
//! leaves; resource timings show every request the page and the frame made. A control proves
//! the detection can fail: the same vectors served without our protections do fire.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{Server, html_part};
use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::PASSWORD;

/// What a vector runs if it gets to: report to the page's hook, or mark its own document.
const RUN: &str = "(top.__hit||function(i){document.documentElement.dataset.pwned=i})(ID)";

/// Script vectors; `RUN` stands for the code, `BEACON` for the beacon's origin, `ID` for the
/// vector's number.
const VECTORS: &[&str] = &[
    "<script>RUN</script>",
    "<img src=x onerror=\"RUN\">",
    "<svg onload=\"RUN\"></svg>",
    "<svg><script>RUN</script></svg>",
    "<body onload=\"RUN\">",
    "<iframe src=\"javascript:RUN\"></iframe>",
    "<iframe srcdoc=\"<script>RUN</script>\"></iframe>",
    "<a href=\"javascript:RUN\" class=js-link>js link</a>",
    "<details open ontoggle=\"RUN\">toggle</details>",
    "<input autofocus onfocus=\"RUN\">",
    "<video><source onerror=\"RUN\"></video>",
    "<audio src=x onerror=\"RUN\"></audio>",
    "<object data=\"javascript:RUN\"></object>",
    "<embed src=\"javascript:RUN\">",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:RUN\">",
    "<meta http-equiv=\"refresh\" content=\"1;url=BEACON/refresh-ID\">",
    "<form action=\"BEACON/form-ID\"><button class=form-button>go</button></form>",
    "<a href=\"BEACON/top-ID\" target=\"_top\">top</a>",
    "<base href=\"BEACON/base-ID/\">",
    "<link rel=\"stylesheet\" href=\"BEACON/css-ID\">",
    "<style>@import url(\"BEACON/import-ID\");</style>",
    "<div style=\"background:url(BEACON/bg-ID)\">bg</div>",
    "<img src=\"BEACON/img-ID\">",
    "<img src=\"/api/me?ID\">",
    "<script src=\"/api/reviews?ID\"></script>",
    "\"><script>RUN</script>",
    "'><img src=x onerror=RUN>",
    "</textarea><script>RUN</script>",
    "</title><script>RUN</script>",
    "<noscript><p title=\"</noscript><img src=x onerror=RUN>\"></noscript>",
    "<math><mtext><table><mglyph><style><img src=x onerror=RUN>",
    "<svg><animate onbegin=\"RUN\" attributeName=x dur=1s></animate></svg>",
    "<marquee onstart=\"RUN\">m</marquee>",
    "{{constructor.constructor('RUN')()}}",
    "${RUN}",
    "<template><script>RUN</script></template>",
    "<a href=\"data:text/html,<script>RUN</script>\">data link</a>",
    "<iframe src=\"data:text/html,<script>RUN</script>\"></iframe>",
    "<object type=\"text/html\" data=\"/\"></object>",
    "<svg><a href=\"javascript:RUN\"><text y=20>svg link</text></a></svg>",
    "<img srcset=\"x 1x\" onerror=\"RUN\">",
    "<style>*{background-image:url(\"javascript:RUN\")}</style>",
    "<xmp><script>RUN</script></xmp>",
    "<img src=x onerror=RUN//",
    "<scr<script>ipt>RUN</scr</script>ipt>",
    "&lt;script&gt;RUN&lt;/script&gt;",
    "<a href=\"#\" onclick=\"RUN\">click</a>",
    "javascript:RUN",
    "<img src=\"x\" onerror=\"document.cookie&&RUN\">",
    "<iframe src=\"/api/me?ID\"></iframe>",
    "<link rel=\"prefetch\" href=\"BEACON/prefetch-ID\">",
    "<body background=\"BEACON/background-ID\">",
    "<svg/onload=RUN>",
    "<body onpageshow=\"RUN\">",
    "<style onload=\"RUN\"></style>",
    "<link rel=stylesheet href=x onerror=\"RUN\">",
    "<script>/*</script><svg onload=RUN>*/",
    "<iframe onload=\"RUN\"></iframe>",
    "<object data=x onerror=\"RUN\"></object>",
    "<select autofocus onfocus=\"RUN\"></select>",
    "<textarea autofocus onfocus=\"RUN\">x</textarea>",
    "<video src=x onerror=\"RUN\"></video>",
    "<video poster=javascript:RUN//></video>",
    "<a href=\"jav&#x09;ascript:RUN\">tab link</a>",
    "<a href=\"&#106;avascript:RUN\">entity link</a>",
    "<a href=\" javascript:RUN\">space link</a>",
    "<a href=\"javascript&colon;RUN\">colon entity</a>",
    "<a href=\"JaVaScRiPt:RUN\">mixed case</a>",
    "<form><button formaction=\"javascript:RUN\">formaction</button></form>",
    "<form action=\"javascript:RUN\"><input type=submit></form>",
    "<math href=\"javascript:RUN\">math link</math>",
    "<body/onload=RUN>",
    "<img/src=x/onerror=RUN>",
    "<svg><foreignObject><iframe onload=\"RUN\"></iframe></foreignObject></svg>",
    "<div onmouseover=\"RUN\">hover</div>",
    "<div contenteditable autofocus onfocus=\"RUN\">editable</div>",
    "<details/open/ontoggle=RUN>",
    "<img src=\"BEACON/lazy-ID\" loading=lazy>",
    "<picture><source srcset=\"BEACON/srcset-ID\"><img alt=p></picture>",
    "<video poster=\"BEACON/poster-ID\"></video>",
    "<audio src=\"BEACON/audio-ID\" autoplay></audio>",
    "<input type=image src=\"BEACON/inputimg-ID\" alt=i>",
    "<table background=\"BEACON/tablebg-ID\"><tr><td>t</td></tr></table>",
    "<svg><image href=\"BEACON/svgimg-ID\"/></svg>",
    "<style>body{background:url(BEACON/stylebg-ID)}</style>",
    "<link rel=preload as=image href=\"BEACON/preload-ID\">",
    "<link rel=icon href=\"BEACON/icon-ID\">",
    "<iframe src=\"BEACON/frame-ID\"></iframe>",
    "<embed src=\"BEACON/embed-ID\">",
    "<object data=\"BEACON/object-ID\"></object>",
    "<a ping=\"BEACON/ping-ID\" href=\"#p\">ping</a>",
    "<style>@font-face{font-family:f;src:url(BEACON/font-ID)}p{font-family:f}</style>",
    "<svg><script href=\"data:,RUN\"></script></svg>",
    "<script src=\"data:text/javascript,RUN\"></script>",
    "<script type=module>RUN</script>",
    "<script>import('data:text/javascript,RUN')</script>",
    "<iframe src=\"/\"></iframe>",
    "<form method=post action=\"/logout\"><button>sign out</button></form>",
    "<svg><a xlink:href=\"javascript:RUN\"><text y=20>xlink</text></a></svg>",
    "<svg><style><img src=x onerror=RUN></style></svg>",
    "<noembed><img title=\"</noembed><img src=x onerror=RUN>\"></noembed>",
    "<noframes><img title=\"</noframes><img src=x onerror=RUN>\"></noframes>",
    "<iframe><img title=\"</iframe><img src=x onerror=RUN>\"></iframe>",
    "<textarea><img title=\"</textarea><img src=x onerror=RUN>\"></textarea>",
    "<style><img title=\"</style><img src=x onerror=RUN>\"></style>",
    "<select><template><img src=x onerror=RUN></template></select>",
    "<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=RUN>",
    "<iframe srcdoc=\"&lt;img src=x onerror=RUN&gt;\"></iframe>",
    "<svg><animate attributeName=href to=javascript:RUN /></svg>",
    "<object data=\"data:text/html,<script>RUN</script>\"></object>",
    "<embed src=\"data:text/html,<script>RUN</script>\">",
    "<svg onload=RUN//",
    "<svg><discard onbegin=\"RUN\"></discard></svg>",
    "<div onpointerover=\"RUN\">pointer</div>",
    "<!--<img src=\"--><img src=x onerror=RUN//\">",
    "<svg><![CDATA[><img src=x onerror=RUN>]]></svg>",
    "<a href=\"vbscript:RUN\">vbscript</a>",
    "<meta http-equiv=\"set-cookie\" content=\"docreview_session=stolen\">",
    "<base target=_top><a href=\"BEACON/basetop-ID\">base target</a>",
    "<svg><feImage href=\"BEACON/feimage-ID\"/></svg>",
    "<img src=x onerror=\"fetch('/api/me?ID').then(function(){RUN})\">",
    "<img src=x onerror=\"window.open('BEACON/open-ID')\">",
    "<script>eval('RUN')</script>",
    "<script>setTimeout('RUN')</script>",
    "<script>new Function('RUN')()</script>",
    "<iframe src=\"javascript:'<script>RUN</script>'\"></iframe>",
    "<a href=\"javascript:void(0)\" onclick=\"RUN\">void link</a>",
    "<button onclick=\"RUN\">button</button>",
    "<label onclick=\"RUN\">label</label>",
    "<div hx-get=\"/api/me?ID\" hx-trigger=\"load\" hx-swap=\"outerHTML\">htmx get</div>",
    "<button hx-post=\"/logout\" hx-trigger=\"load\">htmx post</button>",
    "<div hx-on::load=\"RUN\">htmx on</div>",
    "<img src=x hx-on:htmx:load=\"RUN\">",
    "\" autofocus onfocus=\"RUN",
    "' onmouseover='RUN' x='",
    "</script><script>RUN</script>",
    "\u{2028}\u{2029}<script>RUN</script>",
    "--><script>RUN</script>",
    "]]><script>RUN</script>",
    "%3Cscript%3ERUN%3C/script%3E",
    "data:text/html,<script>RUN</script>",
    "<x onclick=\"RUN\">custom element</x>",
    "<svg><a><animate attributeName=href values=javascript:RUN /><text x=20 y=20>animated</text></a></svg>",
    "<img src=x onerror=\"document.cookie='x=1';RUN\">",
    // Markdown (comment and reply bodies are rendered from it): links and images that would
    // run or load, raw HTML in every Markdown context, attribute break-outs.
    "[md link](javascript:RUN)",
    "[md case](JaVaScRiPt:RUN)",
    "[md bracketed](<javascript:RUN>)",
    "[md entity](&#106;avascript:RUN)",
    "[md escaped](javascript\\:RUN)",
    "[md data](data:text/html;base64,PHNjcmlwdD5SVU48L3NjcmlwdD4=)",
    "[md vbscript](vbscript:RUN)",
    "<javascript:RUN>",
    "[md ref][evil]\n\n[evil]: javascript:RUN",
    "![md image](BEACON/mdimg-ID)",
    "![md js image](javascript:RUN)",
    "[![md nested](BEACON/mdnested-ID)](BEACON/mdouter-ID)",
    "[md title](https://example.com \"x\\\" onmouseover=\\\"RUN\")",
    "[<img src=x onerror=RUN>](https://example.com)",
    "*<img src=x onerror=RUN>* **<svg onload=RUN>**",
    "`<script>RUN</script>` and `` <img src=x onerror=RUN> ``",
    "```html\n<script>RUN</script>\n```",
    "> <iframe srcdoc=\"<script>RUN</script>\"></iframe>",
    "- <details open ontoggle=RUN>\n- <a href=\"javascript:RUN\">raw</a>",
    "# <svg/onload=RUN>\n\n---\n\n<style>*{background:url(BEACON/mdstyle-ID)}</style>",
    "<div>\n\n[md in html](javascript:RUN)\n\n</div>",
    "[md <b>html</b> text](javascript:RUN)",
    "[md space]( javascript:RUN )",
    "<!-- --><script>RUN</script>",
];

fn vector(index: usize, beacon: &str) -> String {
    let id = (index + 1).to_string();
    VECTORS[index]
        .replace("RUN", RUN)
        .replace("BEACON", beacon)
        .replace("ID", &id)
}

/// A loopback server recording every request it gets (and, at `/control`, serving `control`).
fn beacon(control: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind beacon");
    let origin = format!("http://{}", listener.local_addr().expect("address"));
    let hits = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&hits);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut line = String::new();
            let mut reader = BufReader::new(&stream);
            // A connection that sends no request is Chromium preconnecting to the host of a
            // link under the pointer (links in comments may point anywhere): nothing was sent.
            if reader.read_line(&mut line).is_err() || line.is_empty() {
                continue;
            }
            let path = line.split(' ').nth(1).unwrap_or_default().to_string();
            // Drain the headers.
            let mut header = String::new();
            while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                header.clear();
            }
            let body = if path == "/control" {
                control.clone()
            } else {
                recorded.lock().expect("lock").push(path);
                String::new()
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (origin, hits)
}

/// Installed in every page before its own scripts: records `__hit` calls and window opens.
const HOOK: &str = "window.__hits = []; window.__hit = (id) => window.__hits.push(String(id)); \
    const open = window.open; window.__opens = []; \
    window.open = function (...args) { window.__opens.push(String(args[0])); return null; };";

/// Everything the detectors saw on the page now.
const PROBE: &str = r"
const frame = document.getElementById('doc-frame');
let frameDoc = null; try { frameDoc = frame && frame.contentDocument; } catch (e) {}
const entries = (w) => { try { return w.performance.getEntriesByType('resource').map((e) => ({ url: e.name, status: e.responseStatus })); } catch (e) { return []; } };
return {
  hits: window.__hits || 'no hook',
  opens: window.__opens || [],
  pwned: document.documentElement.dataset.pwned || (frameDoc && frameDoc.documentElement.dataset.pwned) || null,
  cookie: document.cookie,
  same: window.__samePage === true,
  page: entries(window),
  frame: frame ? entries(frame.contentWindow) : [],
  frameAt: frameDoc ? frameDoc.location.pathname : null,
};
";

/// Fails on anything a vector achieved.
fn assert_clean(probe: &Value, beacon: &Arc<Mutex<Vec<String>>>, screen: &str, review_id: &str) {
    assert_eq!(probe["hits"], json!([]), "{screen}: script ran: {probe:#}");
    assert_eq!(
        probe["opens"],
        json!([]),
        "{screen}: a window was opened: {probe:#}"
    );
    assert_eq!(
        probe["pwned"],
        Value::Null,
        "{screen}: script ran in the frame: {probe:#}"
    );
    assert_eq!(
        probe["cookie"], "",
        "{screen}: the session cookie is readable: {probe:#}"
    );
    assert_eq!(
        probe["same"],
        json!(true),
        "{screen}: the top window navigated"
    );
    let events = format!("/api/reviews/{review_id}/events");
    for entry in probe["page"].as_array().into_iter().flatten() {
        let url = entry["url"].as_str().unwrap_or_default();
        if url.contains("/api/") {
            assert!(
                url.ends_with(&events),
                "{screen}: the page called the API: {entry}"
            );
        }
    }
    for entry in probe["frame"].as_array().into_iter().flatten() {
        let url = entry["url"].as_str().unwrap_or_default();
        if url.contains("/api/") {
            // 0: blocked by the frame's policy before it was sent; 401: sent without a credential.
            assert!(
                entry["status"] == 0 || entry["status"] == 401,
                "{screen}: the document called the API signed in: {entry}"
            );
        }
    }
    let left = beacon.lock().expect("lock").clone();
    assert!(
        left.is_empty(),
        "{screen}: requests left the page: {left:?}"
    );
}

/// Every rendered body (cards, replies, previews) holds only what Markdown makes: no element
/// that runs or loads, no event attribute, no link but `http`, `https`, `mailto` or relative,
/// each opening a new tab without its opener; raw HTML shows as text.
async fn assert_bodies_inert(browser: &Browser, screen: &str) {
    let found = browser
        .run(
            r"const allowed = new Set(['P','BR','EM','STRONG','DEL','CODE','PRE','A','UL','OL','LI',
                'BLOCKQUOTE','HR','H1','H2','H3','H4','H5','H6']);
              const bodies = [...document.querySelectorAll('.markdown')];
              const bad = [];
              for (const body of bodies) {
                for (const el of body.querySelectorAll('*')) {
                  if (!allowed.has(el.tagName)) bad.push('element ' + el.tagName);
                  for (const attr of el.attributes) {
                    if (!['href', 'title', 'rel', 'target', 'start', 'class'].includes(attr.name)) bad.push('attribute ' + attr.name);
                  }
                  if (el.tagName === 'A') {
                    const href = el.getAttribute('href');
                    if (href !== null && /^\s*[a-z][a-z0-9+.-]*:/i.test(href) && !/^(https?|mailto):/i.test(href)) bad.push('link ' + href);
                    if (el.getAttribute('rel') !== 'noopener nofollow ugc' || el.getAttribute('target') !== '_blank') bad.push('link without rel/target');
                  }
                }
              }
              const raw = bodies.some((b) => b.textContent.includes('<script>'));
              return { count: bodies.length, bad, raw };",
            vec![],
        )
        .await;
    assert!(
        found["count"].as_u64().unwrap_or_default() > 0,
        "{screen}: no rendered body"
    );
    assert_eq!(
        found["bad"],
        json!([]),
        "{screen}: a body holds markup it must not"
    );
    assert_eq!(
        found["raw"],
        json!(true),
        "{screen}: raw HTML in a body is shown as text"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_content_never_runs_reads_the_cookie_calls_the_api_navigates_or_opens_windows() {
    if !harness::available() {
        return;
    }
    let placeholder = "BEACON";
    let body_vectors: Vec<String> = (0..VECTORS.len()).map(|i| vector(i, placeholder)).collect();
    let document_body = |beacon: &str| {
        let mut html =
            String::from("<!doctype html><html><head><title>Hostile</title></head><body>");
        for (i, v) in body_vectors.iter().enumerate() {
            let v = v.replace(placeholder, beacon);
            // Each vector also as a heading's text (escaped, so it is text, not markup).
            let heading = v.replace('&', "&amp;").replace('<', "&lt;");
            html.push_str(&format!(
                "<h2>{heading}</h2><p>Passage number {i} here.</p>{v}\n"
            ));
        }
        html.push_str("</body></html>");
        html
    };
    // The control page: the same body served as any unprotected site would, with the hook.
    let (origin, hits) = beacon(String::new());
    let control_html = document_body(&origin).replacen(
        "<head>",
        "<head><script>window.__hits=[];window.__hit=function(i){window.__hits.push(String(i))};</script>",
        1,
    );
    let (control_origin, _) = beacon(control_html);

    let server = Server::start();
    // The signed-in reviewer and the other authors carry hostile display names.
    let names: Vec<String> = (0..6)
        .map(|i| vector(i * 7 % VECTORS.len(), &origin))
        .collect();
    server.create_user_with_password("eve@example.com", &names[0], &["--admin"], PASSWORD);
    let token = server.issue_token("eve@example.com", "docs,comments,access");
    let api = server.client(Some(&token));
    let mut authors = vec![api.clone()];
    for (i, name) in names.iter().enumerate().skip(1) {
        let email = format!("author{i}@example.com");
        server.create_user(&email, name, &[]);
        authors.push(server.client(Some(&server.issue_token(&email, "comments"))));
    }

    // Documents: hostile bodies and headings; titles and tags hostile too.
    let short: Vec<String> = (0..VECTORS.len())
        .map(|i| vector(i, &origin))
        .filter(|v| v.chars().count() <= 64)
        .collect();
    let created = api
        .post(
            "/api/reviews",
            &json!({ "review": {
                "title": vector(0, &origin),
                "tags": short.iter().take(32).collect::<Vec<_>>(),
                "source": { "html": document_body(&origin), "label": vector(26, &origin).chars().take(100).collect::<String>() },
            }}),
        )
        .await;
    let review_id = created.expect(201)["review"]["reviewId"]
        .as_str()
        .expect("id")
        .to_string();
    for i in [1usize, 2, 25, 27, 28] {
        api.post(
            "/api/reviews",
            &json!({ "review": { "title": vector(i, &origin), "source": { "html": "<p>plain</p>" } } }),
        )
        .await
        .expect(201);
    }
    // Comments and replies: every vector as a comment body and as a reply, by hostile names.
    let mut placed = 0;
    for i in 0..VECTORS.len() {
        let author = &authors[i % authors.len()];
        let path = format!("/api/reviews/{review_id}/comments");
        let mut written = author
            .post(
                &path,
                &json!({ "body": vector(i, &origin), "category": "note",
                         "locator": { "quote": { "exact": format!("Passage number {i} here.") } } }),
            )
            .await;
        if written.status == 400 {
            // An earlier vector swallowed this passage (an unclosed <xmp>, <style>, …): a
            // comment on the whole document instead.
            written = author
                .post(
                    &path,
                    &json!({ "body": vector(i, &origin), "category": "none" }),
                )
                .await;
        }
        let comment = written.expect(201)["comment"]["id"]
            .as_str()
            .expect("id")
            .to_string();
        authors[(i + 1) % authors.len()]
            .post(
                &format!("/api/reviews/{review_id}/comments/{comment}/thread"),
                &json!({ "body": vector(VECTORS.len() - 1 - i, &origin) }),
            )
            .await
            .expect(201);
        placed += 2;
    }
    // A second version, so the changes view shows hostile text too.
    let v2 = document_body(&origin).replace("Passage number 3 here.", "Passage changed.");
    let form = reqwest::multipart::Form::new()
        .part("file", html_part(v2.as_bytes(), "v2.html"))
        .text("label", "v2");
    api.multipart(&format!("/api/reviews/{review_id}/import-html"), form)
        .await
        .expect(201);
    let payloads = VECTORS.len() * 3 + names.len() + 6 + short.len().min(32) + 1;
    assert!(VECTORS.len() >= 120, "{} distinct vectors", VECTORS.len());
    assert!(payloads >= 360 && placed >= 240, "{payloads} payloads");

    let browser = Browser::open(&server, WIDE).await;
    browser
        .driver
        .cdp()
        .send_raw(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": HOOK }),
        )
        .await
        .expect("install the hook");

    // Control: unprotected, the very same vectors run and are detected.
    browser.goto_url(&format!("{control_origin}/control")).await;
    let control = browser
        .wait_for(
            "window.__hits && window.__hits.length > 3 && window.__hits",
            "the control's vectors to fire",
        )
        .await;
    eprintln!(
        "control: {} vectors fired unprotected",
        control.as_array().map_or(0, Vec::len)
    );
    hits.lock().expect("lock").clear();

    browser.sign_in("eve@example.com", PASSWORD).await;
    browser.run("window.__samePage = true;", vec![]).await;
    let probe = browser.run(PROBE, vec![]).await;
    assert_clean(&probe, &hits, "the documents list", &review_id);
    // Search results show snippets of hostile document text and comments as markup.
    for path in [
        "/?q=passage",
        "/?q=script&in=comments",
        "/?q=onerror&in=comments",
        "/?q=onerror+img&in=comments",
        "/?show=all",
    ] {
        browser.goto(path).await;
        browser.run("window.__samePage = true;", vec![]).await;
        let rows = browser
            .run(
                "return document.querySelectorAll('.doc-row').length",
                vec![],
            )
            .await;
        assert!(
            rows.as_u64().unwrap_or_default() > 0,
            "{path}: nothing listed"
        );
        let probe = browser.run(PROBE, vec![]).await;
        assert_clean(&probe, &hits, path, &review_id);
    }

    for (screen, path) in [
        ("the review screen", format!("/reviews/{review_id}")),
        (
            "the review screen, filtered",
            format!("/reviews/{review_id}?status=open"),
        ),
    ] {
        browser.goto(&path).await;
        browser
            .wait_for(
                "document.getElementById('review')?.classList.contains('frame-ready')",
                screen,
            )
            .await;
        browser.run("window.__samePage = true;", vec![]).await;
        // Open every menu (versions, changes, runs, outline) and the shortcuts list.
        browser
            .run(
                "document.querySelectorAll('details').forEach((d) => d.open = true);",
                vec![],
            )
            .await;
        browser
            .wait_for(
                "document.querySelector('.version-list') && document.querySelector('.changes-view')",
                "the menus' fragments",
            )
            .await;
        // Click every script link and button the document has (links to web pages open, by
        // design, in a new tab through the app; not clicked here).
        browser
            .run(
                "const doc = document.getElementById('doc-frame').contentDocument; \
                 doc.querySelectorAll('a[href^=\"javascript\"], a[href^=\"data\"], a[href=\"#\"], button').forEach((el) => el.click());",
                vec![],
            )
            .await;
        // Let whatever a vector might do happen: the frame settles back on its document.
        browser
            .wait_for(
                "document.getElementById('doc-frame').contentDocument?.location.pathname.endsWith('/view')",
                "the frame on its document",
            )
            .await;
        let probe = browser.run(PROBE, vec![]).await;
        assert_clean(&probe, &hits, screen, &review_id);
        assert_bodies_inert(&browser, screen).await;
        browser.check_accessibility(screen).await;
    }
    // The composer's preview renders hostile Markdown the same way, and nothing runs there.
    // (The menus opened above close first: the review bar's lie over the comments column.)
    browser
        .run(
            "document.querySelectorAll('details').forEach((d) => d.open = false);",
            vec![],
        )
        .await;
    browser.click("#comment-document").await;
    let typed: String = VECTORS
        .iter()
        .enumerate()
        .filter(|(_, v)| v.starts_with('[') || v.starts_with('!') || v.starts_with('<'))
        .map(|(i, _)| vector(i, &origin))
        .collect::<Vec<_>>()
        .join("\n\n");
    browser
        .run(
            "const field = document.getElementById('composer-body'); field.value = arguments[0]; \
             field.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![json!(typed)],
        )
        .await;
    browser.click(".composer [data-preview]").await;
    browser
        .wait_for(
            "document.querySelector('.composer .preview .markdown')",
            "the preview",
        )
        .await;
    let probe = browser.run(PROBE, vec![]).await;
    assert_clean(&probe, &hits, "the composer's preview", &review_id);
    assert_bodies_inert(&browser, "the composer's preview").await;
    browser.screenshot("hostile-review").await;

    // The view URL opened directly: nothing runs there either.
    let latest = crate::web::review::review_of(&api, &review_id)
        .await
        .latest_version_id;
    browser
        .goto(&format!("/reviews/{review_id}/versions/{latest}/view"))
        .await;
    let direct = browser
        .run(
            "return { hits: window.__hits || [], pwned: document.documentElement.dataset.pwned || null }",
            vec![],
        )
        .await;
    assert_eq!(
        direct["pwned"],
        Value::Null,
        "the view opened directly ran script: {direct}"
    );
    assert_eq!(direct["hits"], json!([]), "{direct}");
    let left = hits.lock().expect("lock").clone();
    assert!(left.is_empty(), "requests left the direct view: {left:?}");
    browser.quit().await;
}
