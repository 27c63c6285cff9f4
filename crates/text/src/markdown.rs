//! Comment and reply bodies as people read them: Markdown (`CommonMark`, plus `~~strikethrough~~`)
//! rendered to HTML with pulldown-cmark, then cleaned by ammonia. The one renderer for every
//! screen (and later every mail) that shows a body; the API keeps the raw text.
//!
//! What a body may become, and nothing more: paragraphs, emphasis, code, links, lists, quotes,
//! headings, rules. Raw HTML in a body is shown as the text it is (escaped, never stripped
//! silently); images become links to their address (a comment never loads anything); links
//! other than `http`, `https`, `mailto` and relative ones are dropped to their text; every link
//! opens in a new tab with `rel="noopener nofollow ugc"`. A line break in a body is a line break
//! on screen, as people typing a comment expect (GitHub does the same).

use std::collections::HashSet;
use std::sync::LazyLock;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// A person a body mentions (`@handle`), shown as a link to `href`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mention<'a> {
    /// The handle without its `@`, in lower case.
    pub handle: &'a str,
    pub href: &'a str,
}

/// Link schemes a body may use; anything else (`javascript:`, `data:`, `vbscript:`, …) is
/// dropped to its text.
const LINK_SCHEMES: [&str; 3] = ["http", "https", "mailto"];

/// The HTML of a comment or reply body: Markdown rendered and cleaned, `@handle`s of
/// `mentions` made links. Safe to insert into a page as is.
pub fn render_markdown(body: &str, mentions: &[Mention<'_>]) -> String {
    let parser = Parser::new_ext(body, Options::ENABLE_STRIKETHROUGH);
    let mut events: Vec<Event<'_>> = Vec::new();
    // Per open link or image: whether its start was kept (so its end is kept too).
    let mut links: Vec<bool> = Vec::new();
    let mut in_code_block = false;
    let mut html_lines = 0usize;
    for event in parser {
        match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let kept = links.is_empty() && link_allowed(&dest_url);
                links.push(kept);
                if kept {
                    events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                }
            }
            // An image would load from wherever it points: it becomes a link to there, its
            // description the link's text (inside a link, just the text).
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let kept = links.is_empty() && link_allowed(&dest_url);
                links.push(kept);
                if kept {
                    events.push(Event::Start(Tag::Link {
                        link_type: image_link_type(link_type),
                        dest_url,
                        title,
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if links.pop().unwrap_or(false) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            // Raw HTML is the text someone typed: shown as such, a block as a paragraph.
            Event::Start(Tag::HtmlBlock) => {
                html_lines = 0;
                events.push(Event::Start(Tag::Paragraph));
            }
            Event::End(TagEnd::HtmlBlock) => events.push(Event::End(TagEnd::Paragraph)),
            Event::Html(line) => {
                if html_lines > 0 {
                    events.push(Event::HardBreak);
                }
                html_lines += 1;
                events.push(Event::Text(trim_line_end(line)));
            }
            Event::InlineHtml(html) => events.push(Event::Text(html)),
            Event::SoftBreak => events.push(Event::HardBreak),
            Event::Start(Tag::CodeBlock(kind)) => {
                in_code_block = true;
                events.push(Event::Start(Tag::CodeBlock(kind)));
            }
            Event::End(TagEnd::CodeBlock) => {
                in_code_block = false;
                events.push(Event::End(TagEnd::CodeBlock));
            }
            Event::Text(text) if !in_code_block && links.is_empty() && !mentions.is_empty() => {
                link_mentions(text, mentions, &mut events);
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(body.len() + body.len() / 4 + 16);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    CLEANER.clean(&html).to_string()
}

/// Only what `render_markdown` itself makes survives; attributes and schemes as the module
/// says. Built once: a `Builder` holds a few sets.
static CLEANER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::empty();
    builder
        .tags(HashSet::from([
            "p",
            "br",
            "em",
            "strong",
            "del",
            "code",
            "pre",
            "a",
            "ul",
            "ol",
            "li",
            "blockquote",
            "hr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
        ]))
        .add_tag_attributes("a", ["href", "title"])
        .add_tag_attributes("ol", ["start"])
        .add_allowed_classes("a", ["mention"])
        .url_schemes(HashSet::from(LINK_SCHEMES))
        .url_relative(ammonia::UrlRelative::PassThrough)
        .link_rel(Some("noopener nofollow ugc"))
        .set_tag_attribute_value("a", "target", "_blank")
        .strip_comments(true);
    builder
});

/// Whether a link's destination may be followed: one of `LINK_SCHEMES`, or relative. What
/// counts as the scheme is what a browser would take (ASCII whitespace and controls removed).
fn link_allowed(url: &str) -> bool {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect();
    let scheme_end = cleaned.find([':', '/', '?', '#']);
    match scheme_end {
        Some(at) if cleaned[at..].starts_with(':') => {
            let scheme = cleaned[..at].to_ascii_lowercase();
            LINK_SCHEMES.contains(&scheme.as_str())
        }
        _ => true,
    }
}

/// The link kind an image of `kind` becomes (an autolink stays one; the rest are inline).
fn image_link_type(kind: LinkType) -> LinkType {
    match kind {
        LinkType::Autolink | LinkType::Email => kind,
        _ => LinkType::Inline,
    }
}

fn trim_line_end(line: CowStr<'_>) -> CowStr<'_> {
    match line.strip_suffix('\n') {
        Some(trimmed) => CowStr::from(trimmed.trim_end_matches('\r').to_string()),
        None => line,
    }
}

/// Characters of a handle (`[a-z0-9._-]`, matched case-insensitively).
fn is_handle_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// Pushes `text` as text events, with every `@handle` of `mentions` as a link. An `@` inside a
/// word (an email address) mentions nobody; a handle's trailing dots end the sentence.
fn link_mentions<'a>(text: CowStr<'a>, mentions: &[Mention<'_>], events: &mut Vec<Event<'a>>) {
    let source: &str = &text;
    let mut plain_from = 0;
    let mut at = 0;
    let mut pieces: Vec<Event<'a>> = Vec::new();
    while let Some(offset) = source[at..].find('@') {
        let sign = at + offset;
        at = sign + 1;
        let after_word = source[..sign]
            .chars()
            .next_back()
            .is_some_and(|c| is_handle_char(c) || c == '@');
        if after_word {
            continue;
        }
        let rest = &source[sign + 1..];
        let length = rest
            .find(|c: char| !is_handle_char(c))
            .unwrap_or(rest.len());
        let handle = rest[..length].trim_end_matches('.');
        if handle.is_empty() {
            continue;
        }
        let Some(mention) = mentions
            .iter()
            .find(|mention| mention.handle.eq_ignore_ascii_case(handle))
        else {
            continue;
        };
        if plain_from < sign {
            pieces.push(Event::Text(CowStr::from(
                source[plain_from..sign].to_string(),
            )));
        }
        pieces.push(Event::InlineHtml(CowStr::from(format!(
            "<a class=\"mention\" href=\"{}\">@{}</a>",
            escape_attribute(mention.href),
            escape_attribute(handle)
        ))));
        at = sign + 1 + handle.len();
        plain_from = at;
    }
    if plain_from == 0 {
        events.push(Event::Text(text));
        return;
    }
    events.extend(pieces);
    if plain_from < source.len() {
        events.push(Event::Text(CowStr::from(source[plain_from..].to_string())));
    }
}

fn escape_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(body: &str) -> String {
        render_markdown(body, &[])
    }

    #[test]
    fn commonmark_basics() {
        assert_eq!(
            render("Some *emphasis*, **strong** and `code`."),
            "<p>Some <em>emphasis</em>, <strong>strong</strong> and <code>code</code>.</p>\n"
        );
        assert_eq!(
            render("- one\n- two\n\n3. three"),
            "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<ol start=\"3\">\n<li>three</li>\n</ol>\n"
        );
        assert_eq!(
            render("> quoted\n\n```\nfn main() {}\n```"),
            "<blockquote>\n<p>quoted</p>\n</blockquote>\n<pre><code>fn main() {}\n</code></pre>\n"
        );
        assert_eq!(render("~~gone~~"), "<p><del>gone</del></p>\n");
        assert_eq!(render(""), "");
    }

    #[test]
    fn line_breaks_are_kept() {
        assert_eq!(render("first\nsecond"), "<p>first<br>\nsecond</p>\n");
    }

    #[test]
    fn links_open_in_a_new_tab_without_the_opener() {
        assert_eq!(
            render("[docs](https://example.com/a?b=1&c=2 \"Title\")"),
            "<p><a href=\"https://example.com/a?b=1&amp;c=2\" title=\"Title\" \
             target=\"_blank\" rel=\"noopener nofollow ugc\">docs</a></p>\n"
        );
        assert_eq!(
            render("<https://example.com>"),
            "<p><a href=\"https://example.com\" target=\"_blank\" \
             rel=\"noopener nofollow ugc\">https://example.com</a></p>\n"
        );
        assert!(render("[mail](mailto:a@example.com)").contains("href=\"mailto:a@example.com\""));
        assert!(
            render("[here](/reviews/rv_1#thread-cm_2)")
                .contains("href=\"/reviews/rv_1#thread-cm_2\"")
        );
    }

    #[test]
    fn hostile_links_are_dropped_to_their_text() {
        for body in [
            "[click](javascript:alert(1))",
            "[click](JavaScript:alert(1))",
            "[click](java\tscript:alert(1))",
            "[click]( javascript:alert(1))",
            "[click](data:text/html;base64,PHNjcmlwdD4=)",
            "[click](vbscript:msgbox)",
            "[click][ref]\n\n[ref]: javascript:alert(1)",
        ] {
            let html = render(body);
            assert!(!html.contains("<a"), "{body} → {html}");
            assert!(html.contains("click"), "{body} → {html}");
        }
        let auto = render("<javascript:alert(1)>");
        assert!(!auto.contains("<a"), "{auto}");
        assert!(auto.contains("javascript:alert(1)"), "{auto}");
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        assert_eq!(
            render("a <script>alert(1)</script> b"),
            "<p>a &lt;script&gt;alert(1)&lt;/script&gt; b</p>\n"
        );
        assert_eq!(
            render("<div onclick=\"x()\">\nhi\n</div>"),
            "<p>&lt;div onclick=\"x()\"&gt;<br>\nhi<br>\n&lt;/div&gt;</p>\n"
        );
        assert_eq!(
            render("<img src=x onerror=alert(1)>"),
            "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"
        );
        assert_eq!(render("<!-- hidden -->"), "<p>&lt;!-- hidden --&gt;</p>\n");
        // Entities stay what they say, never markup.
        assert_eq!(render("&lt;b&gt;"), "<p>&lt;b&gt;</p>\n");
    }

    #[test]
    fn images_become_links_and_never_load() {
        assert_eq!(
            render("![a chart](https://example.com/c.png)"),
            "<p><a href=\"https://example.com/c.png\" target=\"_blank\" \
             rel=\"noopener nofollow ugc\">a chart</a></p>\n"
        );
        assert_eq!(render("![x](javascript:alert(1))"), "<p>x</p>\n");
        let nested = render("[![logo](https://e.com/l.png)](https://e.com)");
        assert_eq!(nested.matches("<a ").count(), 1, "{nested}");
        assert!(!nested.contains("<img"), "{nested}");
    }

    #[test]
    fn mentions_become_links_outside_code_and_links() {
        let ada = [Mention {
            handle: "ada",
            href: "/people/ada",
        }];
        assert_eq!(
            render_markdown("Ask @ada, or @Ada. Not @bob, nor ada@example.com.", &ada),
            "<p>Ask <a class=\"mention\" href=\"/people/ada\" target=\"_blank\" \
             rel=\"noopener nofollow ugc\">@ada</a>, or <a class=\"mention\" href=\"/people/ada\" \
             target=\"_blank\" rel=\"noopener nofollow ugc\">@Ada</a>. Not @bob, nor \
             ada@example.com.</p>\n"
        );
        assert_eq!(
            render_markdown("`@ada` [@ada](https://x.org)", &ada),
            "<p><code>@ada</code> <a href=\"https://x.org\" target=\"_blank\" \
             rel=\"noopener nofollow ugc\">@ada</a></p>\n"
        );
        assert_eq!(
            render_markdown("@adam", &ada),
            "<p>@adam</p>\n",
            "a longer handle is someone else"
        );
        let hostile = [Mention {
            handle: "eve",
            href: "\"><script>alert(1)</script>",
        }];
        let html = render_markdown("@eve", &hostile);
        assert!(!html.contains("<script"), "{html}");
    }

    #[test]
    fn deep_nesting_and_long_bodies_stay_bounded() {
        let quotes = format!("{}deep", "> ".repeat(5000));
        assert!(render(&quotes).contains("deep"));
        let lists = format!("{}x", "- ".repeat(5000));
        assert!(render(&lists).contains('x'));
        let emphasis = "*a ".repeat(6000);
        assert!(!render(&emphasis).is_empty());
        let links = "[a](".repeat(5000);
        assert!(!render(&links).is_empty());
    }
}
