//! Document text for docreview: HTML text extraction with heading sections, text-quote
//! anchoring (exact and approximate) for comments that must survive edits, and comment bodies
//! rendered from Markdown.
//!
//! All offsets are Unicode code points, matching what browsers report for text ranges.

mod approx;
mod diff;
mod html;
mod indexed;
mod markdown;
mod passages;
mod quote;

pub use diff::{Change, ChangeKind, word_changes};
pub use html::{DocumentText, Heading, collapse_whitespace, extract, slug};
pub use indexed::IndexedText;
pub use markdown::{Mention, render_markdown};
pub use passages::{find_ignoring_whitespace, find_phrase, is_word_char, readable, widen_to_words};
pub use quote::{
    MatchKind, QUOTE_CONTEXT, TextMatch, TextQuote, count_exact, find_exact, find_exact_within,
    max_errors, nearest, occurrences, quote_at, reanchor,
};
