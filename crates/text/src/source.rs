//! Where each character of a document's text comes from in its HTML bytes.
//!
//! The parser that gives the text (`html::extract`) keeps no source positions, so the bytes are
//! scanned again here with the tokenizer's rules for what is text and what is markup (tags,
//! comments, doctypes, raw-text elements, character references, line breaks) and the tree
//! builder's few rules for which text ends up in `<body>` (nothing of the head, no script, style
//! or template contents, no newline right after `<pre>`). The scan yields *pieces*: stretches of
//! bytes that spell their characters verbatim, or a reference or line break that decodes to one
//! or two. The scanned text is then aligned with the parsed text (`Alignment`), so a rule the
//! scan misses (a table's text moved before it) leaves those characters unmapped rather than
//! mapped wrongly; splicing checks its result by parsing it again.

use std::ops::Range;
use std::time::{Duration, Instant};

use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use similar::{Algorithm, DiffOp};

/// Longest the alignment of a scan that differs from the parsed text may take.
const ALIGN_DEADLINE: Duration = Duration::from_millis(500);

/// One stretch of the source that holds text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Byte range in the source.
    pub bytes: (usize, usize),
    /// Code-point offset of the piece's first character in the scanned text.
    pub first_char: usize,
    pub kind: PieceKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PieceKind {
    /// The bytes are the characters themselves (this many of them).
    Verbatim { chars: usize },
    /// A character reference, a line break written `\r\n` or `\r`, or a lone `&` or `<`: one or
    /// two characters that do not stand for themselves byte by byte. `fragile` when what
    /// follows can change their meaning (`&` or `<` before a letter, `&amp` or `&#38` without
    /// their semicolon before a digit or letter, `\r` before `\n`): such a piece is written
    /// out in full when an edit starts right after it.
    Decoded {
        chars: [char; 2],
        count: u8,
        fragile: bool,
    },
}

impl Piece {
    pub fn char_count(&self) -> usize {
        match self.kind {
            PieceKind::Verbatim { chars } => chars,
            PieceKind::Decoded { count, .. } => usize::from(count),
        }
    }

    pub fn chars(&self) -> Range<usize> {
        self.first_char..self.first_char + self.char_count()
    }
}

/// The text-holding pieces of a document's source, in order.
#[derive(Debug, Clone)]
pub(crate) struct SourceMap {
    pub pieces: Vec<Piece>,
    /// The text the pieces make, in order: what the parser should give.
    pub text: String,
}

impl SourceMap {
    pub fn scan(html: &str) -> SourceMap {
        let mut scanner = Scanner::new(html);
        scanner.run();
        SourceMap {
            pieces: scanner.pieces,
            text: scanner.text,
        }
    }

    /// The piece holding scanned character `at`.
    pub fn piece_at(&self, at: usize) -> Option<usize> {
        let index = self
            .pieces
            .partition_point(|piece| piece.first_char + piece.char_count() <= at);
        (index < self.pieces.len() && self.pieces[index].first_char <= at).then_some(index)
    }
}

/// How text inside an element is tokenized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    /// Ordinary content: references decoded, NUL dropped by the tree builder.
    Data,
    /// `<title>`, `<textarea>`: references decoded, no tags until the end tag.
    Rcdata,
    /// `<style>`, `<script>`, `<xmp>`, `<iframe>`, `<noembed>`, `<noframes>`, `<plaintext>`:
    /// taken as written until the end tag.
    Raw,
}

/// Start tags that leave the parser in the head (their text is not the body's).
fn stays_in_head(name: &str) -> bool {
    matches!(
        name,
        "html"
            | "head"
            | "base"
            | "basefont"
            | "bgsound"
            | "link"
            | "meta"
            | "noframes"
            | "script"
            | "style"
            | "template"
            | "title"
            | "noscript"
    )
}

fn is_html_space(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

struct Scanner<'a> {
    html: &'a str,
    bytes: &'a [u8],
    at: usize,
    pieces: Vec<Piece>,
    text: String,
    chars: usize,
    /// No body content seen yet: white space is the head's, not the body's.
    in_head: bool,
    template_depth: usize,
    foreign_depth: usize,
    /// After `<pre>`, `<listing>`, `<textarea>`: a newline right after is dropped.
    drop_newline: bool,
}

impl<'a> Scanner<'a> {
    fn new(html: &'a str) -> Scanner<'a> {
        Scanner {
            html,
            bytes: html.as_bytes(),
            // The byte order mark is the encoding's, never text (as `extract` reads it).
            at: if html.starts_with('\u{feff}') { 3 } else { 0 },
            pieces: Vec::new(),
            text: String::new(),
            chars: 0,
            in_head: true,
            template_depth: 0,
            foreign_depth: 0,
            drop_newline: false,
        }
    }

    fn run(&mut self) {
        while self.at < self.bytes.len() {
            if self.bytes[self.at] == b'<' {
                self.markup();
            } else {
                let end = memchr::memchr(b'<', &self.bytes[self.at..])
                    .map_or(self.bytes.len(), |offset| self.at + offset);
                self.text_run(self.at, end, TextKind::Data, true);
                self.at = end;
            }
        }
    }

    // ---- text ----

    /// Records the text of `from..to`, tokenized as `kind`; `include` when it is body text.
    fn text_run(&mut self, from: usize, to: usize, kind: TextKind, include: bool) {
        let include = include && self.template_depth == 0;
        let mut at = from;
        while at < to {
            let special = self.bytes[at..to]
                .iter()
                .position(|&b| b == b'\r' || b == b'\0' || (b == b'&' && kind != TextKind::Raw))
                .map_or(to, |offset| at + offset);
            if special > at {
                self.verbatim(at, special, include);
            }
            if special == to {
                break;
            }
            at = match self.bytes[special] {
                b'\r' => {
                    let crlf = self.bytes.get(special + 1) == Some(&b'\n') && special + 1 < to;
                    let end = special + if crlf { 2 } else { 1 };
                    self.decoded(special, end, ['\n', '\0'], 1, !crlf, include);
                    end
                }
                b'\0' => {
                    // The tree builder drops NUL in content; elsewhere it becomes U+FFFD.
                    if kind != TextKind::Data {
                        self.decoded(special, special + 1, ['\u{fffd}', '\0'], 1, false, include);
                    }
                    special + 1
                }
                _ => {
                    if let Some((end, chars, count, fragile)) =
                        char_reference(self.html, special, to)
                    {
                        self.decoded(special, end, chars, count, fragile, include);
                        end
                    } else {
                        self.decoded(special, special + 1, ['&', '\0'], 1, true, include);
                        special + 1
                    }
                }
            };
        }
    }

    /// Text spelled as written, `from..to` free of references and line-break pairs.
    fn verbatim(&mut self, mut from: usize, to: usize, include: bool) {
        if !include {
            return;
        }
        if self.drop_newline {
            self.drop_newline = false;
            if self.bytes[from] == b'\n' {
                from += 1;
            }
        }
        if self.in_head {
            // White space before any body content belongs to the head.
            match self.bytes[from..to].iter().position(|&b| !is_html_space(b)) {
                Some(offset) => {
                    from += offset;
                    self.in_head = false;
                }
                None => return,
            }
        }
        if from == to {
            return;
        }
        let piece_text = &self.html[from..to];
        let chars = piece_text.chars().count();
        self.pieces.push(Piece {
            bytes: (from, to),
            first_char: self.chars,
            kind: PieceKind::Verbatim { chars },
        });
        self.text.push_str(piece_text);
        self.chars += chars;
    }

    fn decoded(
        &mut self,
        from: usize,
        to: usize,
        chars: [char; 2],
        count: u8,
        fragile: bool,
        include: bool,
    ) {
        if !include {
            return;
        }
        if std::mem::take(&mut self.drop_newline) && chars[0] == '\n' && count == 1 {
            return;
        }
        if self.in_head {
            if chars[0].is_ascii_whitespace() && count == 1 {
                return;
            }
            self.in_head = false;
        }
        self.pieces.push(Piece {
            bytes: (from, to),
            first_char: self.chars,
            kind: PieceKind::Decoded {
                chars,
                count,
                fragile,
            },
        });
        for &c in &chars[..usize::from(count)] {
            self.text.push(c);
        }
        self.chars += usize::from(count);
    }

    // ---- markup ----

    fn markup(&mut self) {
        let rest = &self.bytes[self.at..];
        let next = rest.get(1).copied();
        if rest.starts_with(b"<!--") {
            self.drop_newline = false;
            self.at = comment_end(self.bytes, self.at + 4);
        } else if rest.starts_with(b"<!") {
            self.drop_newline = false;
            if self.foreign_depth > 0 && rest[2..].starts_with(b"[CDATA[") {
                let start = self.at + 9;
                let (content_end, end) = find(self.bytes, start, b"]]>")
                    .map_or((self.bytes.len(), self.bytes.len()), |at| (at, at + 3));
                self.text_run(start, content_end, TextKind::Raw, true);
                self.at = end;
            } else {
                self.at = through(self.bytes, self.at + 2, b'>');
            }
        } else if rest.starts_with(b"</") {
            self.drop_newline = false;
            match rest.get(2) {
                Some(b) if b.is_ascii_alphabetic() => {
                    let (name, _, end) = tag(self.html, self.at + 2);
                    self.at = end;
                    self.end_tag(&name);
                }
                Some(b'>') => self.at += 3,
                Some(_) => self.at = through(self.bytes, self.at + 2, b'>'),
                // "</" at the end of the input is text.
                None => {
                    self.text_run(self.at, self.bytes.len(), TextKind::Data, true);
                    self.at = self.bytes.len();
                }
            }
        } else if next == Some(b'?') {
            self.drop_newline = false;
            self.at = through(self.bytes, self.at + 1, b'>');
        } else if next.is_some_and(|b| b.is_ascii_alphabetic()) {
            self.drop_newline = false;
            let (name, self_closing, end) = tag(self.html, self.at + 1);
            self.at = end;
            self.start_tag(&name, self_closing);
        } else {
            // A `<` that opens nothing is text; what follows it decides, so it is fragile.
            let include = self.template_depth == 0;
            self.decoded(self.at, self.at + 1, ['<', '\0'], 1, true, include);
            self.at += 1;
        }
    }

    fn start_tag(&mut self, name: &str, self_closing: bool) {
        if self.in_head && !stays_in_head(name) {
            self.in_head = false;
        }
        if self.foreign_depth > 0 {
            if matches!(name, "svg" | "math") && !self_closing {
                self.foreign_depth += 1;
            }
            return;
        }
        match name {
            "script" | "style" => self.element_text(name, TextKind::Raw, false),
            "xmp" | "iframe" | "noembed" | "noframes" => {
                let include = !self.in_head;
                self.element_text(name, TextKind::Raw, include);
            }
            "title" => {
                let include = !self.in_head;
                self.element_text(name, TextKind::Rcdata, include);
            }
            "textarea" => {
                self.drop_newline = true;
                self.element_text(name, TextKind::Rcdata, true);
            }
            "plaintext" => {
                self.text_run(self.at, self.bytes.len(), TextKind::Raw, true);
                self.at = self.bytes.len();
            }
            "template" => self.template_depth += 1,
            "pre" | "listing" => self.drop_newline = true,
            "svg" | "math" if !self_closing => self.foreign_depth += 1,
            _ => {}
        }
    }

    fn end_tag(&mut self, name: &str) {
        match name {
            "template" => self.template_depth = self.template_depth.saturating_sub(1),
            "svg" | "math" => self.foreign_depth = self.foreign_depth.saturating_sub(1),
            _ => {}
        }
    }

    /// The contents of a raw-text or RCDATA element, up to its end tag (left for `markup`).
    fn element_text(&mut self, name: &str, kind: TextKind, include: bool) {
        let end = raw_end(self.bytes, self.at, name);
        self.text_run(self.at, end, kind, include);
        self.drop_newline = false;
        self.at = end;
    }
}

/// Where `needle` next occurs at or after `from`.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(&bytes[from.min(bytes.len())..], needle).map(|offset| from + offset)
}

/// Just past the next `byte` at or after `from`, or the end of the input.
fn through(bytes: &[u8], from: usize, byte: u8) -> usize {
    memchr::memchr(byte, &bytes[from.min(bytes.len())..]).map_or(bytes.len(), |at| from + at + 1)
}

/// Just past a comment whose body starts at `from` (after `<!--`).
fn comment_end(bytes: &[u8], from: usize) -> usize {
    let rest = &bytes[from.min(bytes.len())..];
    if rest.starts_with(b">") {
        return from + 1;
    }
    if rest.starts_with(b"->") {
        return from + 2;
    }
    let mut at = from;
    while let Some(dashes) = find(bytes, at, b"--") {
        let after = &bytes[dashes + 2..];
        if after.starts_with(b">") {
            return dashes + 3;
        }
        if after.starts_with(b"!>") {
            return dashes + 4;
        }
        at = dashes + 1;
    }
    bytes.len()
}

/// Reads a tag whose name starts at `from`: its lower-cased name, whether it ends with `/>`,
/// and the offset just past it (the end of the input when it is not closed).
fn tag(html: &str, from: usize) -> (String, bool, usize) {
    let bytes = html.as_bytes();
    let mut at = from;
    while at < bytes.len() && !is_html_space(bytes[at]) && bytes[at] != b'/' && bytes[at] != b'>' {
        at += 1;
    }
    let name = html[from..at]
        .to_ascii_lowercase()
        .replace('\0', "\u{fffd}");
    loop {
        // Before an attribute name: a `/` right before `>` closes the tag itself.
        let mut slash = false;
        while at < bytes.len() && (is_html_space(bytes[at]) || bytes[at] == b'/') {
            slash = bytes[at] == b'/';
            at += 1;
        }
        match bytes.get(at) {
            None => return (name, false, bytes.len()),
            Some(b'>') => return (name, slash, at + 1),
            Some(_) => {}
        }
        // The name (its first character may be `=`).
        at += 1;
        while at < bytes.len()
            && !matches!(bytes[at], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
            && !matches!(bytes[at], b'/' | b'>' | b'=')
        {
            at += 1;
        }
        while at < bytes.len() && is_html_space(bytes[at]) {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            continue;
        }
        at += 1;
        while at < bytes.len() && is_html_space(bytes[at]) {
            at += 1;
        }
        match bytes.get(at) {
            Some(&quote @ (b'"' | b'\'')) => {
                at = through(bytes, at + 1, quote);
            }
            _ => {
                while at < bytes.len() && !is_html_space(bytes[at]) && bytes[at] != b'>' {
                    at += 1;
                }
            }
        }
    }
}

/// Where the end tag of a raw-text or RCDATA element named `name` starts (its `</`), or the
/// end of the input.
fn raw_end(bytes: &[u8], from: usize, name: &str) -> usize {
    let mut at = from;
    while let Some(open) = find(bytes, at, b"</") {
        let name_end = open + 2 + name.len();
        let matches_name = bytes
            .get(open + 2..name_end)
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(name.as_bytes()));
        if matches_name
            && bytes
                .get(name_end)
                .is_none_or(|&b| is_html_space(b) || b == b'/' || b == b'>')
        {
            return open;
        }
        at = open + 2;
    }
    bytes.len()
}

/// Reads the character reference at `at` (an `&`) within `..limit`: the offset past it, its
/// characters, how many, and whether it is fragile (no closing semicolon). `None` when the
/// `&` starts no reference and stands for itself.
fn char_reference(html: &str, at: usize, limit: usize) -> Option<(usize, [char; 2], u8, bool)> {
    let bytes = &html.as_bytes()[..limit];
    let mut i = at + 1;
    if bytes.get(i) == Some(&b'#') {
        i += 1;
        let hex = matches!(bytes.get(i), Some(b'x' | b'X'));
        if hex {
            i += 1;
        }
        let digits_start = i;
        let mut value: u32 = 0;
        let mut too_big = false;
        while let Some(digit) = bytes
            .get(i)
            .and_then(|&b| char::from(b).to_digit(if hex { 16 } else { 10 }))
        {
            match value
                .checked_mul(if hex { 16 } else { 10 })
                .and_then(|v| v.checked_add(digit))
            {
                Some(next) => value = next,
                None => too_big = true,
            }
            i += 1;
        }
        if i == digits_start {
            return None;
        }
        let semicolon = bytes.get(i) == Some(&b';');
        if semicolon {
            i += 1;
        }
        let c = numeric_reference(if too_big { u32::MAX } else { value });
        return Some((i, [c, '\0'], 1, !semicolon));
    }
    // The longest name in the table, as the tokenizer finds it (the table holds every prefix).
    let mut found: Option<(usize, (u32, u32))> = None;
    let mut end = i;
    while end < bytes.len() && bytes[end].is_ascii() {
        end += 1;
        match NAMED_ENTITIES.get(&html[i..end]) {
            Some(&(first, second)) => {
                if first != 0 {
                    found = Some((end, (first, second)));
                }
            }
            None => break,
        }
    }
    let (end, (first, second)) = found?;
    let first = char::from_u32(first)?;
    let (second, count) = match second {
        0 => ('\0', 1),
        code => (char::from_u32(code)?, 2),
    };
    Some((end, [first, second], count, bytes[end - 1] != b';'))
}

/// What a numeric reference stands for, with the tokenizer's replacements.
fn numeric_reference(value: u32) -> char {
    match value {
        0 | 0xD800..=0xDFFF | 0x11_0000.. => '\u{fffd}',
        0x80..=0x9F => C1_REPLACEMENTS[(value - 0x80) as usize]
            .or_else(|| char::from_u32(value))
            .unwrap_or('\u{fffd}'),
        _ => char::from_u32(value).unwrap_or('\u{fffd}'),
    }
}

/// Which scanned character each character of the parsed text is.
#[derive(Debug, Clone)]
pub(crate) enum Alignment {
    /// The scan gave exactly the parsed text.
    Same,
    /// Runs of characters the two texts share: `(parsed start, scanned start, length)`,
    /// ordered. Parsed characters outside every run have no known source.
    Runs(Vec<(usize, usize, usize)>),
}

impl Alignment {
    pub fn new(scanned: &str, parsed: &str) -> Alignment {
        if scanned == parsed {
            return Alignment::Same;
        }
        let scanned: Vec<char> = scanned.chars().collect();
        let parsed: Vec<char> = parsed.chars().collect();
        let ops = similar::capture_diff_deadline(
            Algorithm::Myers,
            &parsed,
            0..parsed.len(),
            &scanned,
            0..scanned.len(),
            Some(Instant::now() + ALIGN_DEADLINE),
        );
        let runs = ops
            .into_iter()
            .filter_map(|op| match op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => Some((old_index, new_index, len)),
                _ => None,
            })
            .collect();
        Alignment::Runs(runs)
    }

    /// The scanned ranges that hold parsed characters `range`, in order; `None` when one of
    /// them has no known source.
    pub fn scanned(&self, range: Range<usize>) -> Option<Vec<Range<usize>>> {
        match self {
            Alignment::Same => Some(vec![range]),
            Alignment::Runs(runs) => {
                let mut out: Vec<Range<usize>> = Vec::new();
                let mut at = range.start;
                let mut index = runs.partition_point(|&(start, _, len)| start + len <= at);
                while at < range.end {
                    let &(start, scanned, len) = runs.get(index)?;
                    if start > at {
                        return None;
                    }
                    let end = range.end.min(start + len);
                    let piece = scanned + (at - start)..scanned + (end - start);
                    match out.last_mut() {
                        Some(last) if last.end == piece.start => last.end = piece.end,
                        _ => out.push(piece),
                    }
                    at = end;
                    index += 1;
                }
                Some(out)
            }
        }
    }

    /// The scanned character that is parsed character `at`.
    pub fn scanned_char(&self, at: usize) -> Option<usize> {
        self.scanned(at..at + 1)?.first().map(|range| range.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;

    fn spans(html: &str) -> Vec<(&str, String)> {
        let map = SourceMap::scan(html);
        map.pieces
            .iter()
            .map(|piece| {
                let chars: String = map
                    .text
                    .chars()
                    .skip(piece.first_char)
                    .take(piece.char_count())
                    .collect();
                (&html[piece.bytes.0..piece.bytes.1], chars)
            })
            .collect()
    }

    #[test]
    fn scans_text_between_markup() {
        assert_eq!(
            spans("<p>a <b>bold</b> &amp; <!-- no --> x&lt;y</p>"),
            [
                ("a ", "a ".to_string()),
                ("bold", "bold".to_string()),
                (" ", " ".to_string()),
                ("&amp;", "&".to_string()),
                (" ", " ".to_string()),
                (" x", " x".to_string()),
                ("&lt;", "<".to_string()),
                ("y", "y".to_string()),
            ]
        );
    }

    #[test]
    fn the_scan_agrees_with_the_parser() {
        for html in [
            "<!doctype html><html><head><title>T &amp; U</title>\n<style>p{}</style>\n</head>\n<body>\n<p>One &copy 2 &#233;&#x1F600; &notit; &unknown; a&b a < b</p>\r\n<pre>\nkept</pre>\n<script>no</script><template><p>no</p></template>x<!---->y<!-->z<![CDATA[bogus]]>w</body></html>",
            "plain text only",
            "  leading space",
            "<title>In the head</title>Body",
            "<p>x</p><textarea>\n&amp;<b></textarea><xmp>&amp;<b></xmp><svg><![CDATA[<cdata>]]></svg>",
            "<p title='a>b' data-x=\"c>d\" e=f>text</p><?pi>after</ b>c",
            "\u{feff}<p>日本 é 😀 &NotEqualTilde;</p>",
            "<p>a\rb\r\nc\0d</p>",
        ] {
            let map = SourceMap::scan(html);
            assert_eq!(map.text, extract(html).text, "{html:?}");
        }
    }

    #[test]
    fn references_without_semicolons_are_fragile() {
        let map = SourceMap::scan("<p>&amp &amp; &#38 &#38; & x</p>");
        let fragile: Vec<bool> = map
            .pieces
            .iter()
            .filter_map(|piece| match piece.kind {
                PieceKind::Decoded { fragile, .. } => Some(fragile),
                PieceKind::Verbatim { .. } => None,
            })
            .collect();
        assert_eq!(fragile, [true, false, true, false, true]);
    }

    #[test]
    fn alignment_maps_around_what_the_scan_got_wrong() {
        let alignment = Alignment::new("headbody text", "body text");
        assert_eq!(
            alignment.scanned(0..4),
            Some(vec![Range { start: 4, end: 8 }])
        );
        let gap = Alignment::new("ab", "aXb");
        assert_eq!(gap.scanned(0..1), Some(vec![Range { start: 0, end: 1 }]));
        assert_eq!(gap.scanned(1..2), None);
        assert_eq!(gap.scanned_char(2), Some(1));
    }
}
