//! The text of a version (what anchors point into) and a bounded cache of parsed texts.
//!
//! Parsing a large body costs milliseconds, and every anchored comment write needs the text, so
//! parsed texts are cached by `sourceHash`. The cache is content-addressed: a node never serves a
//! stale text, and nothing in it needs sharing between nodes.

use std::sync::Arc;

use docreview_text::IndexedText;

use crate::cache::BoundedCache;
use crate::model::Section;

/// A version's text with its heading sections.
pub struct VersionText {
    pub text: IndexedText,
    pub sections: Vec<Section>,
    /// Where blocks start and end in `text` (code points), for splitting words.
    pub block_breaks: Vec<usize>,
    /// The HTML's `<title>`, if it has a non-blank one.
    pub title: Option<String>,
    /// Where its `<img>` elements take their pictures from (see [`VersionText::unshown_images`]).
    pub images: Vec<String>,
}

/// An image of a document that readers will not see, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnshownImage {
    /// The image's source as written in the HTML.
    pub src: String,
    /// On another site (never loaded), else a file that was not uploaded with the HTML.
    pub elsewhere: bool,
}

impl VersionText {
    /// Extracts the text and headings of an HTML body with a real HTML parser.
    pub fn from_html(html: &str) -> Self {
        let extracted = docreview_text::extract(html);
        let sections = extracted
            .headings
            .into_iter()
            .map(|heading| Section {
                id: heading.id,
                level: heading.level,
                text: heading.text,
                path: heading.path,
                start: heading.start,
                end: heading.end,
            })
            .collect();
        VersionText {
            text: IndexedText::new(extracted.text),
            sections,
            block_breaks: extracted.block_breaks,
            title: extracted.title,
            images: extracted.images,
        }
    }

    /// The images a reader will not see. A document is one HTML file, shown in a frame whose
    /// policy loads only images inside it (`img-src 'self' data:`, and nothing of the service's
    /// own is an image of the document): a path names a file that was never uploaded, and
    /// another site is never contacted, so that opening a document tells no one who reads it.
    pub fn unshown_images(&self) -> Vec<UnshownImage> {
        self.images
            .iter()
            .filter(|src| !has_scheme(src, "data"))
            .map(|src| UnshownImage {
                src: src.clone(),
                elsewhere: src.starts_with("//")
                    || has_scheme(src, "http")
                    || has_scheme(src, "https"),
            })
            .collect()
    }

    /// The text full-text search indexes: a space where blocks meet (so `<h2>Scope</h2><p>alpha`
    /// indexes two words, as a reader sees them), whitespace runs collapsed, cut to
    /// `SEARCH_TEXT_MAX_CHARS`.
    pub fn search_text(&self) -> String {
        let text = self.text.as_str();
        let mut spaced = String::with_capacity(text.len() + self.block_breaks.len());
        let mut breaks = self.block_breaks.iter().peekable();
        for (at, c) in text.chars().enumerate() {
            if breaks.next_if(|&&offset| offset <= at).is_some() {
                while breaks.next_if(|&&offset| offset <= at).is_some() {}
                spaced.push(' ');
            }
            spaced.push(c);
        }
        let collapsed = docreview_text::collapse_whitespace(&spaced);
        match collapsed
            .char_indices()
            .nth(crate::store::SEARCH_TEXT_MAX_CHARS)
        {
            Some((cut, _)) => collapsed[..cut].to_string(),
            None => collapsed,
        }
    }

    /// The innermost section containing the code-point offset `at`.
    pub fn section_at(&self, at: usize) -> Option<&Section> {
        self.sections
            .iter()
            .filter(|section| section.start <= at && at < section.end.max(section.start + 1))
            .max_by_key(|section| (section.level, section.start))
    }

    fn weight(&self) -> usize {
        self.text.as_str().len() * 2 + 1024
    }
}

/// Parsed version texts keyed by `sourceHash` (content-addressed: never stale).
pub struct TextCache(BoundedCache<VersionText>);

impl TextCache {
    pub fn new(budget_bytes: usize) -> Self {
        TextCache(BoundedCache::new(budget_bytes))
    }

    pub fn get(&self, source_hash: &str) -> Option<Arc<VersionText>> {
        self.0.get(source_hash)
    }

    pub fn insert(&self, source_hash: &str, text: Arc<VersionText>) {
        let weight = text.weight();
        self.0.insert(source_hash, text, weight);
    }
}

/// `sha256:` + lowercase hex of the bytes as uploaded.
pub fn source_hash(html: &[u8]) -> String {
    format!("sha256:{}", hex::encode(crate::identity::sha256(html)))
}

/// Whether the URL `src` starts with `scheme:` (any case, as URL schemes are compared).
fn has_scheme(src: &str, scheme: &str) -> bool {
    src.len() > scheme.len()
        && src.as_bytes()[scheme.len()] == b':'
        && src[..scheme.len()].eq_ignore_ascii_case(scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_evicts_oldest_beyond_budget() {
        let cache = TextCache::new(3000);
        let small = || Arc::new(VersionText::from_html("<p>x</p>"));
        cache.insert("a", small());
        cache.insert("b", small());
        cache.insert("c", small());
        assert!(cache.get("a").is_none());
        assert!(cache.get("c").is_some());
    }

    #[test]
    fn images_show_only_when_inside_the_file() {
        let text = VersionText::from_html(
            "<img src='data:image/png;base64,AA'><img src='DATA:image/gif;base64,AA'>\
             <img src='img/chart.png'><img src='/logo.svg'><img src='HTTPS://cdn.example/a.png'>\
             <img src='//cdn.example/b.png'><img src='http://x.example/c.png'><img src='data'>",
        );
        let unshown: Vec<String> = text
            .unshown_images()
            .into_iter()
            .map(|image| {
                format!(
                    "{} {}",
                    image.src,
                    if image.elsewhere {
                        "elsewhere"
                    } else {
                        "missing"
                    }
                )
            })
            .collect();
        assert_eq!(
            unshown,
            [
                "img/chart.png missing",
                "/logo.svg missing",
                "HTTPS://cdn.example/a.png elsewhere",
                "//cdn.example/b.png elsewhere",
                "http://x.example/c.png elsewhere",
                "data missing",
            ]
        );
    }

    #[test]
    fn innermost_section_wins() {
        let text = VersionText::from_html("<h1>A</h1><p>intro</p><h2>B</h2><p>body</p>");
        let inner = text
            .section_at(text.text.char_len() - 1)
            .map(|s| s.id.clone());
        assert_eq!(inner.as_deref(), Some("b"));
        assert_eq!(text.section_at(2).map(|s| s.id.as_str()), Some("a"));
    }

    #[test]
    fn hashes_bytes() {
        assert_eq!(
            source_hash(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
