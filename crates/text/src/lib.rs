//! Document text for docreview: HTML text extraction with heading sections, and
//! text-quote anchoring (exact and approximate) for comments that must survive edits.
//!
//! All offsets are Unicode code points, matching what browsers report for text ranges.

mod approx;
mod html;
mod indexed;
mod quote;

pub use html::{DocumentText, Heading, collapse_whitespace, extract, slug};
pub use indexed::IndexedText;
pub use quote::{
    MatchKind, QUOTE_CONTEXT, TextMatch, TextQuote, find_exact, max_errors, quote_at, reanchor,
};
