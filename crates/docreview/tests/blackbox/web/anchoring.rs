//! The offsets contract between the browser and the server (issue 8, "Showing untrusted HTML"):
//! over documents full of what makes text offsets hard (emoji, CJK, combining marks, entities,
//! `<br>`, tables, lists, nested inline markup, white-space-only nodes, scripts and styles in the
//! body, …), every selection the browser makes produces the quote, prefix, suffix and position
//! the server resolves to the same place, and every anchor the server returns highlights
//! exactly its quote.
//!
//! Each document marks passages with `data-q`; the browser selects each one's whole contents
//! (element boundaries, the hardest case for offset mapping) and describes it with the app's
//! own code, as the composer does.

use serde_json::{Value, json};

use crate::web::harness::{self, Browser, WIDE};
use crate::web::review::{PASSWORD, setup};

/// The document whose file starts with a byte order mark (an encoding signature, not text).
const BYTE_ORDER_MARK: &str = "byte order mark";

/// (name, body) of each document.
const DOCUMENTS: &[(&str, &str)] = &[
    (
        "emoji",
        "<p>Before.</p><p data-q>Launch 🚀 today 👩‍👩‍👧 with flags 🇳🇴 and 👍🏽.</p><p>After 😀.</p>",
    ),
    (
        "cjk",
        "<p>前文。<span data-q>日本語のテキストと中文文本</span>、한국어 텍스트。</p>",
    ),
    (
        "combining marks",
        "<p>x</p><p data-q>Cafe\u{301} and n\u{303}o and Z\u{335}\u{321}a\u{336}lgo</p>",
    ),
    (
        "entities",
        "<p data-q>Fish &amp; chips &lt;b&gt; &nbsp;&eacute;&#x1F600;&copy;&#169;</p><p>&hellip;</p>",
    ),
    (
        "line breaks",
        "<p data-q>line one<br>line two<br><br>line four</p>",
    ),
    (
        "table",
        "<table><tr><td data-q>cell A1</td><td>cell B1</td></tr><tr><td>A2</td><td data-q>B2 with <b>bold</b></td></tr></table><p>after the table</p>",
    ),
    (
        "whole table",
        "<p>t</p><table data-q><tbody><tr><th>Head</th><th>Other</th></tr><tr><td>1</td><td>2</td></tr></tbody></table>",
    ),
    (
        "lists",
        "<ul data-q><li>first</li><li>second <i>item</i></li></ul><ol><li data-q>one</li><li>two</li></ol>",
    ),
    (
        "nested inline",
        "<p data-q>a <b>b <i>c <u>d <s>e</s></u></i></b> f</p>",
    ),
    (
        "white-space-only nodes",
        "<div>\n  <p data-q>  padded  text  </p>\n\n  <p>next</p>\n</div>",
    ),
    (
        "script and style in the body",
        "<p data-q>before<script>var x = \"hidden\";</script> after<style>.x { color: red }</style> end</p><script>document.write('x')</script><p>tail</p>",
    ),
    (
        "template",
        "<p data-q>see <template><p>template text</p></template>this</p>",
    ),
    (
        "preformatted",
        "<pre data-q>  indented\n\tTabbed   text\n</pre>",
    ),
    (
        "right to left",
        "<p data-q dir=\"rtl\">שלום עולם مرحبا بالعالم</p>",
    ),
    ("astral letters", "<p data-q>𝔸𝕓𝒸 and 𝟙𝟚𝟛 and 𓀀</p>"),
    (
        "repeated text",
        "<p>the word</p><p>the word</p><p data-q>the word</p><p>the word</p>",
    ),
    (
        "headings",
        "<h1>Title</h1><h2 data-q>Sub 🎉 heading</h2><p>body text</p>",
    ),
    (
        "svg text",
        "<p>x</p><svg width=\"200\" height=\"30\"><text x=\"0\" y=\"20\" data-q>svg label</text></svg><p>y</p>",
    ),
    (
        "deep nesting",
        "<div><span><span><span><span><span><span><span><span><em data-q>deep <strong>inside</strong> here</em></span></span></span></span></span></span></span></span></div>",
    ),
    (
        "html comments",
        "<p data-q>one<!-- hidden comment -->two</p>",
    ),
    (
        "zero-width and no-break spaces",
        "<p data-q>zero\u{200b}width\u{a0}space\u{200d} join</p>",
    ),
    (
        "mixed across elements",
        "<p data-q><b>😀</b>&amp;<i>漢字</i> e\u{301}</p>",
    ),
    (
        "noscript",
        "<p data-q>shown <noscript><b>only without scripts</b> &amp; more</noscript> after</p><noscript><p data-q>a whole paragraph</p></noscript>",
    ),
    (
        BYTE_ORDER_MARK,
        "<p>\u{feff}inner mark</p><p data-q>after the mark</p>",
    ),
    (
        "inline quote marks",
        "<p data-q>“Curly” ‘quotes’ — dashes – and … ellipsis</p>",
    ),
];

/// The app's own modules (the composer's code), imported into the page.
const DESCRIBE_ALL: &str = r#"
const done = arguments[arguments.length - 1];
const base = document.querySelector('script[src*="/js/review/screen.js"]').src.replace('screen.js', '');
Promise.all([import(base + 'text.js'), import(base + 'anchoring.js')]).then(([text, anchoring]) => {
  const doc = document.getElementById('doc-frame').contentDocument;
  const map = new text.TextMap(doc);
  done([...doc.querySelectorAll('[data-q]')].map((element) => {
    const range = doc.createRange();
    range.selectNodeContents(element);
    return anchoring.describe(map, range);
  }));
}).catch((error) => done({ error: String(error) }));
"#;

/// The text of every highlighted range, as the server counts text (skipped elements left out).
const HIGHLIGHTED: &str = r"
const frameWindow = document.getElementById('doc-frame').contentWindow;
const skipped = new Set(['SCRIPT', 'STYLE', 'TEMPLATE']);
const textOf = (range) => {
  const walker = range.commonAncestorContainer.ownerDocument.createTreeWalker(
    range.commonAncestorContainer.nodeType === 3 ? range.commonAncestorContainer.parentNode : range.commonAncestorContainer,
    NodeFilter.SHOW_TEXT);
  let out = '';
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!range.intersectsNode(node)) continue;
    let up = node.parentNode, hidden = false;
    while (up) { if (skipped.has(up.nodeName.toUpperCase())) hidden = true; up = up.parentNode; }
    if (hidden) continue;
    const start = node === range.startContainer ? range.startOffset : 0;
    const end = node === range.endContainer ? range.endOffset : node.data.length;
    out += node.data.slice(start, end);
  }
  return out;
};
return [...frameWindow.CSS.highlights.values()].flatMap((h) => [...h]).map(textOf).sort();
";

#[tokio::test(flavor = "multi_thread")]
async fn browser_selections_and_server_anchors_agree_on_hard_documents() {
    if !harness::available() {
        return;
    }
    assert!(DOCUMENTS.len() >= 20);
    let (server, api) = setup().await;
    let browser = Browser::open(&server, WIDE).await;
    browser.sign_in("ada@example.com", PASSWORD).await;
    for (name, body) in DOCUMENTS {
        let bom = if *name == BYTE_ORDER_MARK {
            "\u{feff}"
        } else {
            ""
        };
        let html = format!(
            "{bom}<!doctype html><html><head><title>{name}</title></head><body>{body}</body></html>"
        );
        let review = api.upload(name, &html).await;
        let id = review.review_id.clone();
        let path = format!("/reviews/{id}");
        browser.goto(&path).await;
        browser
            .wait_for(
                "document.getElementById('review').classList.contains('frame-ready')",
                name,
            )
            .await;
        let described = browser
            .driver
            .execute_async(DESCRIBE_ALL, Vec::new())
            .await
            .expect("describe")
            .json()
            .clone();
        let locators = described
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {described}"))
            .clone();
        assert!(!locators.is_empty(), "{name}: no passages");

        // Every selection resolves, on the server, to the very passage the browser described.
        let mut exacts = Vec::new();
        for locator in &locators {
            let written = api
                .post(
                    &format!("/api/reviews/{id}/comments"),
                    &json!({ "body": format!("on {name}"), "locator": {
                        "quote": { "exact": locator["exact"], "prefix": locator["prefix"], "suffix": locator["suffix"] },
                        "position": { "start": locator["start"], "end": locator["end"] },
                    }}),
                )
                .await;
            let anchor = written.expect(201)["comment"]["anchor"].clone();
            assert_eq!(anchor["state"], "exact", "{name}: {locator}");
            assert_eq!(
                (&anchor["position"]["start"], &anchor["position"]["end"]),
                (&locator["start"], &locator["end"]),
                "{name}: the server resolved the selection elsewhere: {locator} vs {anchor}"
            );
            for part in ["exact", "prefix", "suffix"] {
                assert_eq!(
                    anchor["quote"][part], locator[part],
                    "{name}: {part} differs between browser and server"
                );
            }
            exacts.push(locator["exact"].as_str().expect("exact").to_string());
        }

        // And every anchor the server returns highlights exactly its quote.
        browser.goto(&path).await;
        browser
            .wait_for(
                &format!(
                    "document.getElementById('review').dataset.highlights === '{}'",
                    locators.len()
                ),
                name,
            )
            .await;
        let highlighted = browser.run(HIGHLIGHTED, Vec::new()).await;
        exacts.sort();
        assert_eq!(
            highlighted,
            Value::from(exacts),
            "{name}: highlights differ from quotes"
        );
    }
    browser.quit().await;
}
