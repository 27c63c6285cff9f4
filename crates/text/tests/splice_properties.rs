//! The splicing property (DESIGN.md §8.5): for generated documents (nested inline markup,
//! references, comments, CDATA-like text, white space, multi-byte characters) and generated
//! passages and replacements, the spliced document's text is the old text with the passage
//! replaced, the bytes before and after the element enclosing the passage are unchanged, its
//! elements are the same, and it parses.

use docreview_text::{TextEdit, extract, splice};
use proptest::prelude::*;
use scraper::Html;

/// A generated piece of a document: what it writes and the text a browser reads from it.
#[derive(Debug, Clone)]
enum Node {
    /// Characters, escaped when written.
    Text(String),
    /// Written as is: references, and `&` and `<` that open nothing.
    Source(&'static str, &'static str),
    /// A comment, or CDATA-like text (outside `<svg>` and `<math>`, `<![CDATA[…]]>` is a comment).
    Hidden(&'static str),
    Element {
        open: &'static str,
        close: &'static str,
        children: Vec<Node>,
    },
}

const REFERENCES: &[(&str, &str)] = &[
    ("&amp;", "&"),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", "\""),
    ("&eacute;", "é"),
    ("&#233;", "é"),
    ("&#x1F600;", "😀"),
    ("&nbsp;", "\u{a0}"),
    ("&hellip;", "…"),
    ("&copy ", "© "),
    ("& ", "& "),
    (" < ", " < "),
    ("AT&T ", "AT&T "),
];

const HIDDEN: &[&str] = &[
    "<!-- note -->",
    "<!---->",
    "<!-- a -- b -->",
    "<![CDATA[ x < y ]]>",
    "<![CDATA[]]>",
    "<?pi data?>",
];

const INLINE: &[(&str, &str)] = &[
    ("<b>", "</b>"),
    ("<i class='x'>", "</i>"),
    ("<em>", "</em>"),
    ("<strong data-n=\"a>b\">", "</strong>"),
    ("<span title=\"x &gt; y\">", "</span>"),
    ("<code>", "</code>"),
    ("<sup>", "</sup>"),
];

const BLOCKS: &[(&str, &str)] = &[
    ("<p>", "</p>"),
    ("<div class=\"section\">", "</div>"),
    ("<blockquote>", "</blockquote>"),
    ("<h2 id=\"h\">", "</h2>"),
];

/// Characters of generated text and replacements: ASCII, white space, markup characters,
/// two-, three- and four-byte characters, a combining accent.
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::char::range('a', 'z'),
        2 => Just(' '),
        1 => prop::sample::select(vec![
            '\n', '\t', '&', '<', '>', '"', '\'', ';', '#', 'é', '日', '😀', '\u{301}', '\u{a0}',
            'Z', '0',
        ]),
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(text_char(), 0..max).prop_map(|chars| chars.into_iter().collect())
}

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        5 => text(12).prop_map(Node::Text),
        2 => prop::sample::select(REFERENCES).prop_map(|(source, text)| Node::Source(source, text)),
        1 => prop::sample::select(HIDDEN).prop_map(Node::Hidden),
        1 => prop::sample::select(vec![" ", "\n  ", "\t"]).prop_map(|s| Node::Text(s.to_string())),
    ]
}

fn inline() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        (
            prop::sample::select(INLINE),
            prop::collection::vec(inner, 0..4),
        )
            .prop_map(|((open, close), children)| Node::Element {
                open,
                close,
                children,
            })
    })
}

fn block() -> impl Strategy<Value = Node> {
    (
        prop::sample::select(BLOCKS),
        prop::collection::vec(inline(), 0..5),
    )
        .prop_map(|((open, close), children)| Node::Element {
            open,
            close,
            children,
        })
}

fn body() -> impl Strategy<Value = Vec<Node>> {
    prop::collection::vec(prop_oneof![4 => block(), 1 => leaf()], 1..6)
}

/// Where an element is in the source (bytes) and in the text (code points).
#[derive(Debug, Clone, Copy)]
struct Span {
    bytes: (usize, usize),
    chars: (usize, usize),
}

#[derive(Default)]
struct Rendered {
    html: String,
    text: String,
    chars: usize,
    elements: Vec<Span>,
}

impl Rendered {
    fn push(&mut self, source: &str, text: &str) {
        self.html.push_str(source);
        self.text.push_str(text);
        self.chars += text.chars().count();
    }

    fn node(&mut self, node: &Node) {
        match node {
            Node::Text(text) => {
                let escaped = text
                    .replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;");
                self.push(&escaped, text);
            }
            Node::Source(source, text) => self.push(source, text),
            Node::Hidden(source) => self.push(source, ""),
            Node::Element {
                open,
                close,
                children,
            } => {
                let (byte_start, char_start) = (self.html.len(), self.chars);
                self.push(open, "");
                for child in children {
                    self.node(child);
                }
                self.push(close, "");
                self.elements.push(Span {
                    bytes: (byte_start, self.html.len()),
                    chars: (char_start, self.chars),
                });
            }
        }
    }
}

fn render(nodes: &[Node]) -> Rendered {
    let mut out = Rendered::default();
    out.push(
        "<!DOCTYPE html>\n<html><head><title>T &amp; t</title>\n<style>p { color: red }</style></head>\n",
        "",
    );
    let body_start = out.html.len();
    out.push("<body>", "");
    for node in nodes {
        out.node(node);
    }
    out.push("</body>", "");
    out.elements.push(Span {
        bytes: (body_start, out.html.len()),
        chars: (0, out.chars),
    });
    out.push("</html>", "");
    out
}

/// The smallest element holding every character the edit may touch (the characters it
/// replaces, or the one an insertion follows); the body when there is none.
fn enclosing(elements: &[Span], start: usize, end: usize) -> Span {
    let (first, last) = if start < end {
        (start, end - 1)
    } else {
        (start.saturating_sub(1), start.saturating_sub(1))
    };
    let body = *elements.last().expect("the body is always there");
    elements
        .iter()
        .filter(|span| span.chars.0 <= first && last < span.chars.1)
        .min_by_key(|span| span.bytes.1 - span.bytes.0)
        .copied()
        .unwrap_or(body)
}

fn element_names(html: &str) -> Vec<String> {
    Html::parse_document(html)
        .root_element()
        .descendants()
        .filter_map(|node| node.value().as_element().map(|e| e.name().to_string()))
        .collect()
}

fn document_and_edit() -> impl Strategy<Value = (Vec<Node>, usize, usize, String)> {
    body().prop_flat_map(|nodes| {
        let len = render(&nodes).chars;
        (Just(nodes), 0..=len, 0..=len, text(10))
            .prop_map(|(nodes, a, b, replacement)| (nodes, a.min(b), a.max(b), replacement))
    })
}

/// A document and up to four edits of it that touch different text.
fn document_and_edits() -> impl Strategy<Value = (Vec<Node>, Vec<(usize, usize, String)>)> {
    body().prop_flat_map(|nodes| {
        let len = render(&nodes).chars;
        (
            Just(nodes),
            prop::collection::vec(0..=len, 2..=8),
            prop::collection::vec(text(6), 4),
        )
            .prop_map(|(nodes, mut cuts, replacements)| {
                cuts.sort_unstable();
                cuts.dedup();
                let edits = cuts
                    .chunks_exact(2)
                    .zip(replacements)
                    .map(|(pair, replacement)| (pair[0], pair[1], replacement))
                    .collect();
                (nodes, edits)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn a_spliced_passage_changes_only_its_text((nodes, start, end, replacement) in document_and_edit()) {
        let doc = render(&nodes);
        prop_assume!(!doc.text.is_empty(), "a document without text has no passage");
        let parsed = extract(&doc.html);
        prop_assert_eq!(&parsed.text, &doc.text, "the generator reads as a browser does");

        let spliced = splice(&doc.html, &doc.text, &[TextEdit { start, end, text: &replacement }])
            .map_err(|error| TestCaseError::fail(format!("{error}: {:?}", doc.html)))?;

        let chars: Vec<char> = doc.text.chars().collect();
        let expected: String = chars[..start]
            .iter()
            .copied()
            .chain(replacement.chars())
            .chain(chars[end..].iter().copied())
            .collect();
        prop_assert_eq!(&spliced.text.text, &expected);
        prop_assert_eq!(extract(&spliced.html).text, expected, "the result parses to the text");

        let span = enclosing(&doc.elements, start, end);
        let (before, after) = (span.bytes.0, doc.html.len() - span.bytes.1);
        prop_assert!(spliced.html.len() >= before + after);
        prop_assert_eq!(&spliced.html[..before], &doc.html[..before]);
        prop_assert_eq!(
            &spliced.html[spliced.html.len() - after..],
            &doc.html[doc.html.len() - after..]
        );
        prop_assert_eq!(element_names(&spliced.html), element_names(&doc.html));
    }

    #[test]
    fn unchanged_text_leaves_the_bytes((nodes, start, end, _replacement) in document_and_edit()) {
        let doc = render(&nodes);
        prop_assume!(!doc.text.is_empty());
        let same: String = doc.text.chars().skip(start).take(end - start).collect();
        let spliced = splice(&doc.html, &doc.text, &[TextEdit { start, end, text: &same }])
            .map_err(|error| TestCaseError::fail(format!("{error}")))?;
        prop_assert_eq!(spliced.html, doc.html);
    }

    #[test]
    fn several_passages_at_once((nodes, edits) in document_and_edits()) {
        let doc = render(&nodes);
        prop_assume!(!doc.text.is_empty() && !edits.is_empty());
        // Given last to first: the order they are given in does not matter.
        let given: Vec<TextEdit> = edits
            .iter()
            .rev()
            .map(|(start, end, text)| TextEdit { start: *start, end: *end, text })
            .collect();
        let spliced = splice(&doc.html, &doc.text, &given)
            .map_err(|error| TestCaseError::fail(format!("{error}: {:?}", doc.html)))?;
        let chars: Vec<char> = doc.text.chars().collect();
        let mut expected = String::new();
        let mut cursor = 0;
        for (start, end, text) in &edits {
            expected.extend(&chars[cursor..*start]);
            expected.push_str(text);
            cursor = *end;
        }
        expected.extend(&chars[cursor..]);
        prop_assert_eq!(&spliced.text.text, &expected);
        prop_assert_eq!(element_names(&spliced.html), element_names(&doc.html));
    }
}
