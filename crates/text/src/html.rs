//! HTML text extraction: the body's text content and its heading sections.
//!
//! Comment anchors are code-point offsets into exactly this text, so it must agree with
//! what a browser's `document.body.textContent` reports (minus script/style/template
//! bodies, which readers never see): whitespace is kept verbatim and entities decoded.
//! Documents are shown in a frame where scripts never run, so the text is parsed as such a
//! browser parses it: `<noscript>` holds markup, not raw text.

use std::collections::{HashMap, HashSet};

use html5ever::driver::{self, ParseOpts};
use html5ever::tendril::TendrilSink;
use html5ever::tree_builder::TreeBuilderOpts;
use scraper::{Html, HtmlTreeSink, Node};
use serde::{Deserialize, Serialize};

const HTML_NAMESPACE: &str = "http://www.w3.org/1999/xhtml";

/// The text of an HTML document as a browser's `body.textContent` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentText {
    /// Concatenated text of `<body>`, skipping `<script>`, `<style>` and `<template>`.
    pub text: String,
    /// One per h1–h6 element in document order.
    pub headings: Vec<Heading>,
    /// Code-point offsets in `text` where a block (paragraph, heading, list item, cell, line
    /// break, …) starts or ends. A browser renders a break there while `textContent` has none
    /// (`<h2>Scope</h2><p>alpha</p>` is "Scopealpha"): word-based uses (search) split there.
    #[serde(default)]
    pub block_breaks: Vec<usize>,
    /// The document's title as a browser shows it: the first `<title>`'s text, white space
    /// collapsed; `None` when there is none or it is blank.
    #[serde(default)]
    pub title: Option<String>,
    /// Where the document's `<img>` elements take their pictures from, in document order: the
    /// `src` attribute, else the first URL of `srcset` (trimmed, as written).
    #[serde(default)]
    pub images: Vec<String>,
}

/// A heading and the section of text it introduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heading {
    /// The `id` attribute when non-blank, else a slug of the text; unique within the document.
    pub id: String,
    /// 1..=6.
    pub level: u8,
    /// The heading's text, whitespace collapsed to single spaces and trimmed.
    pub text: String,
    /// Ids of the enclosing headings, outermost first.
    pub path: Vec<String>,
    /// Code-point offset in the document text where the heading's text starts.
    pub start: usize,
    /// Start of the next heading with a level <= this one, else the text's length (code points).
    pub end: usize,
}

/// Elements whose contents are not part of the readable text.
fn is_skipped(name: &str) -> bool {
    matches!(name, "script" | "style" | "template")
}

/// Elements a browser lays out apart from the text around them (a word never runs across).
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "br"
            | "caption"
            | "dd"
            | "details"
            | "dialog"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "legend"
            | "li"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}

fn heading_level(element: &scraper::node::Element) -> Option<u8> {
    if &*element.name.ns != HTML_NAMESPACE {
        return None;
    }
    match element.name() {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// A heading whose element has been entered; its text is known once the element closes.
struct OpenHeading {
    index: usize,
    start_byte: usize,
}

/// Accumulates text and headings while walking the tree.
#[derive(Default)]
struct Extractor {
    text: String,
    char_len: usize,
    headings: Vec<Heading>,
    /// Raw `id` attribute per heading, resolved into unique ids at the end.
    attr_ids: Vec<Option<String>>,
    open: Vec<OpenHeading>,
    block_breaks: Vec<usize>,
}

impl Extractor {
    fn block_break(&mut self) {
        if self.block_breaks.last() != Some(&self.char_len) {
            self.block_breaks.push(self.char_len);
        }
    }

    fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
        self.char_len += text.chars().count();
    }

    fn open_heading(&mut self, level: u8, attr_id: Option<&str>) {
        self.open.push(OpenHeading {
            index: self.headings.len(),
            start_byte: self.text.len(),
        });
        self.attr_ids.push(
            attr_id
                .filter(|id| !id.trim().is_empty())
                .map(str::to_owned),
        );
        self.headings.push(Heading {
            id: String::new(),
            level,
            text: String::new(),
            path: Vec::new(),
            start: self.char_len,
            end: 0,
        });
    }

    fn close_heading(&mut self) {
        // The parser guarantees proper nesting, so the innermost open heading is the one closing.
        if let Some(open) = self.open.pop() {
            self.headings[open.index].text = collapse_whitespace(&self.text[open.start_byte..]);
        }
    }

    fn finish(mut self) -> DocumentText {
        let ids = unique_ids(&self.headings, &self.attr_ids);
        for (heading, id) in self.headings.iter_mut().zip(ids) {
            heading.id = id;
        }
        assign_sections(&mut self.headings, self.char_len);
        DocumentText {
            text: self.text,
            headings: self.headings,
            block_breaks: self.block_breaks,
            title: None,
            images: Vec::new(),
        }
    }
}

/// Extracts the body text and headings of an HTML document or fragment.
///
/// Parsing follows the HTML5 algorithm, so fragments get an implicit `<body>` and
/// malformed markup is repaired the way browsers repair it.
pub fn extract(html: &str) -> DocumentText {
    let document = parse_without_scripting(html);
    DocumentText {
        title: title_of(&document),
        images: images_of(&document),
        ..body_text(&document)
    }
}

/// The sources of the document's HTML `<img>` elements (see [`DocumentText::images`]).
fn images_of(document: &scraper::Html) -> Vec<String> {
    document
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
        .filter(|element| {
            element.value().name() == "img" && &*element.value().name.ns == HTML_NAMESPACE
        })
        .filter_map(|image| {
            let src = image.value().attr("src").map(str::trim).unwrap_or_default();
            let source = if src.is_empty() {
                image
                    .value()
                    .attr("srcset")
                    .and_then(|set| set.split_whitespace().next())
                    .unwrap_or_default()
            } else {
                src
            };
            (!source.is_empty()).then(|| source.to_string())
        })
        .collect()
}

/// The text of the document's first HTML `<title>` (in tree order, as `document.title` takes
/// it), white space collapsed, if not blank.
fn title_of(document: &scraper::Html) -> Option<String> {
    document
        .root_element()
        .descendants()
        .filter_map(scraper::ElementRef::wrap)
        .find(|element| {
            element.value().name() == "title" && &*element.value().name.ns == HTML_NAMESPACE
        })
        .map(|title| collapse_whitespace(&title.text().collect::<String>()))
        .filter(|title| !title.is_empty())
}

fn body_text(document: &scraper::Html) -> DocumentText {
    let mut out = Extractor::default();
    let body = document.root_element().children().find(|child| {
        child
            .value()
            .as_element()
            .is_some_and(|e| e.name() == "body" && &*e.name.ns == HTML_NAMESPACE)
    });
    let Some(body) = body else {
        // A frameset document has no body, hence no text.
        return out.finish();
    };

    // Iterative pre-order walk: deeply nested markup must not overflow the stack.
    let mut current = body.first_child();
    while let Some(node) = current {
        let mut descend = false;
        match node.value() {
            Node::Text(text) => out.push_text(text),
            Node::Element(element) if !is_skipped(element.name()) => {
                if is_block(element.name()) {
                    out.block_break();
                }
                if let Some(level) = heading_level(element) {
                    out.open_heading(level, element.id());
                }
                if node.has_children() {
                    descend = true;
                } else if heading_level(element).is_some() {
                    out.close_heading();
                }
            }
            _ => {}
        }
        if descend {
            current = node.first_child();
            continue;
        }
        // Move to the next sibling, closing every ancestor we climb out of.
        let mut done = node;
        current = loop {
            if let Some(next) = done.next_sibling() {
                break Some(next);
            }
            match done.parent() {
                Some(parent) if parent.id() != body.id() => {
                    if let Some(element) = parent.value().as_element() {
                        if heading_level(element).is_some() {
                            out.close_heading();
                        }
                        if is_block(element.name()) {
                            out.block_break();
                        }
                    }
                    done = parent;
                }
                _ => break None,
            }
        };
    }
    out.finish()
}

/// Parses `html` as a browser with scripting disabled does (the document frame's sandbox). A
/// byte order mark is the encoding's signature, never text: browsers drop it when decoding.
fn parse_without_scripting(html: &str) -> Html {
    let html = html.strip_prefix('\u{feff}').unwrap_or(html);
    let options = ParseOpts {
        tree_builder: TreeBuilderOpts {
            scripting_enabled: false,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    driver::parse_document(HtmlTreeSink::new(Html::new_document()), options).one(html)
}

/// Gives every heading an id: its attribute if present, else a slug of its text;
/// repeats get `-2`, `-3`, … so that links to sections are unambiguous.
fn unique_ids(headings: &[Heading], attr_ids: &[Option<String>]) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    // Next suffix to try per base, so many equal headings stay linear rather than quadratic.
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    let mut ids = Vec::with_capacity(headings.len());
    for (heading, attr) in headings.iter().zip(attr_ids) {
        let base = attr.clone().unwrap_or_else(|| slug(&heading.text));
        let id = if used.contains(&base) {
            let n = next_suffix.entry(base.clone()).or_insert(2);
            loop {
                let candidate = format!("{base}-{n}");
                *n += 1;
                if !used.contains(&candidate) {
                    break candidate;
                }
            }
        } else {
            base
        };
        used.insert(id.clone());
        ids.push(id);
    }
    ids
}

/// Fills `path` and `end` from the heading order and levels.
fn assign_sections(headings: &mut [Heading], text_len: usize) {
    // Headings still open at the current point, outermost first (levels strictly increase).
    let mut stack: Vec<(u8, String)> = Vec::new();
    for heading in headings.iter_mut() {
        while stack
            .last()
            .is_some_and(|(level, _)| *level >= heading.level)
        {
            stack.pop();
        }
        heading.path = stack.iter().map(|(_, id)| id.clone()).collect();
        stack.push((heading.level, heading.id.clone()));
    }
    // Walking backwards, the section end is the nearest later heading of level <= ours.
    let mut next_start_at_or_above = [text_len; 7];
    for heading in headings.iter_mut().rev() {
        let level = usize::from(heading.level);
        heading.end = next_start_at_or_above[level];
        for slot in &mut next_start_at_or_above[level..] {
            *slot = heading.start;
        }
    }
}

/// Lowercase ASCII alphanumerics, with every run of other characters (including '-')
/// turned into a single '-', trimmed of '-' at both ends; "section" when nothing is left.
pub fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_dash = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if out.is_empty() {
        "section".to_owned()
    } else {
        out
    }
}

/// Collapses whitespace runs into one space and trims the ends.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(doc: &DocumentText) -> Vec<&str> {
        doc.headings.iter().map(|h| h.id.as_str()).collect()
    }

    #[test]
    fn skips_script_style_template_and_comments() {
        let doc = extract(
            "<html><head><title>T</title><style>h1{}</style></head><body>\
             <p>a<script>var x = '<p>no</p>';</script>b</p>\
             <style>p { color: red }</style><!-- hidden -->\
             <template><p>tpl</p></template><p>c</p></body></html>",
        );
        assert_eq!(doc.text, "abc");
    }

    #[test]
    fn records_where_blocks_start_and_end() {
        let doc =
            extract("<h2>Scope</h2><p>alpha <b>beta</b></p>gamma<br>delta<ul><li>x</li></ul>");
        assert_eq!(doc.text, "Scopealpha betagammadeltax");
        // Scope [0,5) alpha beta [5,15) gamma [15,20) delta [20,25) x [25,26)
        assert_eq!(doc.block_breaks, [0, 5, 15, 20, 25, 26]);
    }

    #[test]
    fn noscript_holds_markup_as_in_a_frame_without_scripts() {
        let doc = extract("<p>a<noscript><b>b</b> &amp; c</noscript>d</p>");
        assert_eq!(doc.text, "ab & cd");
        let heading = extract("<noscript><h2>Only without scripts</h2></noscript><p>x</p>");
        assert_eq!(ids(&heading), ["only-without-scripts"]);
    }

    #[test]
    fn a_byte_order_mark_is_not_text() {
        assert_eq!(extract("\u{feff}<p>text</p>").text, "text");
        assert_eq!(extract("<p>\u{feff}text</p>").text, "\u{feff}text");
    }

    #[test]
    fn decodes_entities_and_flattens_inline_tags() {
        let doc =
            extract("<p>Fish &amp; <b>chips <i>&lt;hot&gt;</i></b>&nbsp;&eacute;&#x1F600;</p>");
        assert_eq!(doc.text, "Fish & chips <hot>\u{a0}é😀");
    }

    #[test]
    fn keeps_whitespace_verbatim() {
        let doc = extract("<body>\n  <p>one\n two</p>\n\t<p> three </p>\n</body>");
        assert_eq!(doc.text, "\n  one\n two\n\t three \n");
    }

    #[test]
    fn fragment_gets_implicit_body() {
        let doc = extract("<h1>A</h1><p>b</p>");
        assert_eq!(doc.text, "Ab");
        assert_eq!(doc.headings.len(), 1);
        assert_eq!((doc.headings[0].start, doc.headings[0].end), (0, 2));
    }

    #[test]
    fn the_title_is_the_first_title_elements_text() {
        let title = |html: &str| extract(html).title;
        assert_eq!(
            title(
                "<html><head><title>\n  Launch   plan &amp; budget </title></head><body>x</body></html>"
            ),
            Some("Launch plan & budget".into())
        );
        assert_eq!(
            title("<title>First</title><title>Second</title>"),
            Some("First".into())
        );
        assert_eq!(title("<title>  </title><h1>Heading</h1>"), None);
        assert_eq!(title("<h1>No title</h1>"), None);
        // An SVG's <title> names the drawing, not the document.
        assert_eq!(title("<body><svg><title>Chart</title></svg></body>"), None);
        assert_eq!(
            title("<title>A <b>bold</b> try</title>"),
            Some("A <b>bold</b> try".into())
        );
    }

    #[test]
    fn image_sources_in_document_order() {
        let doc = extract(
            "<p><img src=' chart.png '><img srcset='wide.png 2x, narrow.png 1x'>\
             <img alt='none'><img src='data:image/png;base64,AA'></p>\
             <svg><image href='svg-image.png'/><img src='breaks-out.png'></svg>",
        );
        // An `<img>` inside `<svg>` leaves the SVG (the parser makes it an HTML image, as a
        // browser does); SVG's own `<image>` is not one.
        assert_eq!(
            doc.images,
            [
                "chart.png",
                "wide.png",
                "data:image/png;base64,AA",
                "breaks-out.png"
            ]
        );
    }

    #[test]
    fn empty_and_malformed_input() {
        assert_eq!(
            extract(""),
            DocumentText {
                text: String::new(),
                headings: vec![],
                block_breaks: vec![],
                title: None,
                images: vec![],
            }
        );
        let doc = extract("<div><p>un<b>closed<i>tags</div><h2>after</p>x");
        assert_eq!(doc.text, "unclosedtagsafterx");
        // A stray </p> inside the heading becomes an empty <p>, so "x" stays in the heading.
        assert_eq!(doc.headings[0].text, "afterx");
        assert_eq!((doc.headings[0].start, doc.headings[0].end), (12, 18));
    }

    #[test]
    fn offsets_are_code_points() {
        let doc = extract("<p>日本é😀</p><h2 id=x>Über</h2><p>z</p>");
        assert_eq!(doc.text, "日本é😀Überz");
        let h = &doc.headings[0];
        assert_eq!((h.start, h.end), (4, 9));
        let chars: Vec<char> = doc.text.chars().collect();
        assert_eq!(
            chars[h.start..h.start + 4].iter().collect::<String>(),
            "Über"
        );
    }

    #[test]
    fn heading_ids_from_attribute_and_slug() {
        let doc = extract(
            "<h1 id='intro'>Intro</h1><h2>Hello,  World!</h2><h2 id=''>--Café au lait--</h2>\
             <h3>日本</h3><h3>  </h3>",
        );
        assert_eq!(
            ids(&doc),
            [
                "intro",
                "hello-world",
                "caf-au-lait",
                "section",
                "section-2"
            ]
        );
        assert_eq!(doc.headings[1].text, "Hello, World!");
    }

    #[test]
    fn duplicate_ids_get_numbered_suffixes() {
        let doc = extract(
            "<h2>Notes</h2><h2>Notes</h2><h2 id='notes-3'>x</h2><h2>notes</h2><h2 id='notes'>y</h2>",
        );
        assert_eq!(
            ids(&doc),
            ["notes", "notes-2", "notes-3", "notes-4", "notes-5"]
        );
    }

    #[test]
    fn heading_text_collapses_whitespace_and_includes_inline_children() {
        let doc = extract("<h1>\n  Big <em>and</em>\n\n   bold <script>x</script> </h1>");
        assert_eq!(doc.headings[0].text, "Big and bold");
        assert_eq!(doc.text, "\n  Big and\n\n   bold  ");
    }

    #[test]
    fn sections_nest_by_level() {
        let html = "<h1>A</h1>aa<h2>B</h2>bb<h3>C</h3>cc<h2>D</h2>dd<h1>E</h1>ee<h3>F</h3>ff";
        let doc = extract(html);
        assert_eq!(doc.text, "AaaBbbCccDddEeeFff");
        let summary: Vec<(&str, u8, Vec<&str>, usize, usize)> = doc
            .headings
            .iter()
            .map(|h| {
                let path = h.path.iter().map(String::as_str).collect();
                (h.id.as_str(), h.level, path, h.start, h.end)
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("a", 1, vec![], 0, 12),
                ("b", 2, vec!["a"], 3, 9),
                ("c", 3, vec!["a", "b"], 6, 9),
                ("d", 2, vec!["a"], 9, 12),
                ("e", 1, vec![], 12, 18),
                ("f", 3, vec!["e"], 15, 18),
            ]
        );
    }

    #[test]
    fn document_without_headings() {
        let doc = extract("<p>Just text</p>");
        assert_eq!(doc.text, "Just text");
        assert!(doc.headings.is_empty());
    }

    #[test]
    fn deeply_nested_markup_does_not_overflow() {
        let depth = 5_000;
        let html = format!(
            "{}<h3>deep</h3>x{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        let doc = extract(&html);
        assert_eq!(doc.text, "deepx");
        assert_eq!((doc.headings[0].start, doc.headings[0].end), (0, 5));
    }

    #[test]
    fn slug_rules() {
        assert_eq!(slug("Hello, World!"), "hello-world");
        assert_eq!(slug("  a - b  "), "a-b");
        assert_eq!(slug("API v2.0"), "api-v2-0");
        assert_eq!(slug("!!!"), "section");
        assert_eq!(slug(""), "section");
    }
}
