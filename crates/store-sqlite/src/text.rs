//! Words in search results, handled in Rust: tokens as the FTS5 tokenizer
//! (`unicode61 remove_diacritics 2`) splits them, bm25 scores, and snippets.
//!
//! FTS5 alone decides which rows match. This module only weighs and shows them: it reads the
//! matches FTS5 marked with `highlight()` (comments), or finds them itself in a document's text,
//! where reading up to the first match is all a snippet needs. Its folding covers case and the
//! Latin diacritics; a word it folds differently from FTS5 costs only some score, never a hit.

use docreview_core::store::{MATCH_END, MATCH_START, SNIPPET_ELLIPSIS, SearchQuery, SearchTerm};

/// bm25 parameters, as FTS5's `bm25()` uses them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A query term with its words folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    Prefix(String),
    Phrase(Vec<String>),
}

/// The query's terms, folded, without empty ones.
pub fn terms(query: &SearchQuery) -> Vec<Term> {
    query
        .terms
        .iter()
        .filter_map(|term| match term {
            SearchTerm::Prefix(word) => {
                let word = fold(word);
                (!word.is_empty()).then_some(Term::Prefix(word))
            }
            SearchTerm::Phrase(words) => {
                let words: Vec<String> = words
                    .iter()
                    .map(|w| fold(w))
                    .filter(|w| !w.is_empty())
                    .collect();
                (!words.is_empty()).then_some(Term::Phrase(words))
            }
        })
        .collect()
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Lower case without the diacritics of Latin letters (what `remove_diacritics 2` removes).
pub fn fold(word: &str) -> String {
    word.chars()
        .flat_map(char::to_lowercase)
        .map(strip_diacritic)
        .filter(|c| is_token_char(*c))
        .collect()
}

fn strip_diacritic(c: char) -> char {
    match c {
        'à'..='å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => 'c',
        'ď' => 'd',
        'è'..='ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => 'e',
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => 'g',
        'ĥ' => 'h',
        'ì'..='ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' => 'i',
        'ĵ' => 'j',
        'ķ' => 'k',
        'ĺ' | 'ļ' | 'ľ' => 'l',
        'ñ' | 'ń' | 'ņ' | 'ň' => 'n',
        'ò'..='ö' | 'ō' | 'ŏ' | 'ő' => 'o',
        'ŕ' | 'ŗ' | 'ř' => 'r',
        'ś' | 'ŝ' | 'ş' | 'š' => 's',
        'ţ' | 'ť' => 't',
        'ù'..='ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => 'u',
        'ŵ' => 'w',
        'ý' | 'ÿ' | 'ŷ' => 'y',
        'ź' | 'ż' | 'ž' => 'z',
        other => other,
    }
}

#[derive(Debug, Clone)]
struct Token {
    /// Byte range in the text.
    start: usize,
    end: usize,
    folded: String,
}

/// Splits `text` into tokens, at most `limit` of them.
fn tokens(text: &str, limit: usize) -> Vec<Token> {
    let mut found = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (is_token_char(c), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                found.push(token(text, from, at));
                start = None;
                if found.len() >= limit {
                    return found;
                }
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        found.push(token(text, from, text.len()));
    }
    found
}

fn token(text: &str, start: usize, end: usize) -> Token {
    Token {
        start,
        end,
        folded: fold(&text[start..end]),
    }
}

/// A text with the passages that match a query marked.
#[derive(Debug, Clone)]
pub struct Marked {
    text: String,
    tokens: Vec<Token>,
    /// Byte ranges of the marked passages, in order, not overlapping.
    spans: Vec<(usize, usize)>,
    /// Whether `tokens` stops before the end of the text.
    truncated: bool,
}

impl Marked {
    /// Reads what FTS5's `highlight()` returns: the text with each match between `MATCH_START`
    /// and `MATCH_END`.
    pub fn from_highlight(highlighted: &str) -> Marked {
        let mut text = String::with_capacity(highlighted.len());
        let mut spans = Vec::new();
        let mut open = None;
        for c in highlighted.chars() {
            match c {
                MATCH_START => open = Some(text.len()),
                MATCH_END => {
                    if let Some(start) = open.take() {
                        spans.push((start, text.len()));
                    }
                }
                c => text.push(c),
            }
        }
        let tokens = tokens(&text, usize::MAX);
        Marked {
            text,
            tokens,
            spans,
            truncated: false,
        }
    }

    /// Finds the matches of `terms` in `text` itself, reading only as far as the first match and
    /// `window` tokens past it (a snippet shows no more).
    pub fn find(text: &str, terms: &[Term], window: usize) -> Marked {
        let mut tokens: Vec<Token> = Vec::new();
        let mut marked: Vec<(usize, usize)> = Vec::new();
        let mut stop_at = usize::MAX;
        let mut truncated = false;
        let mut from = 0;
        loop {
            // Tokens a chunk at a time, so a long text is read only as far as needed.
            let chunk = tokens_from(text, from, 256);
            let Some(last) = chunk.last() else { break };
            from = last.end;
            let done = chunk.len() < 256;
            for token in chunk {
                let index = tokens.len();
                tokens.push(token);
                for term in terms {
                    match term {
                        Term::Prefix(word) => {
                            if tokens[index].folded.starts_with(word.as_str()) {
                                marked.push((index, index));
                            }
                        }
                        Term::Phrase(words) => {
                            if index + 1 >= words.len() {
                                let first = index + 1 - words.len();
                                if tokens[first..=index]
                                    .iter()
                                    .zip(words)
                                    .all(|(t, w)| t.folded == *w)
                                {
                                    marked.push((first, index));
                                }
                            }
                        }
                    }
                }
                if stop_at == usize::MAX && !marked.is_empty() {
                    stop_at = index + window;
                }
                if index >= stop_at {
                    truncated = true;
                    break;
                }
            }
            if truncated || done {
                break;
            }
        }
        if truncated {
            // Reading stopped early: the snippet needs to know only whether a word follows.
            truncated = text[tokens.last().map_or(0, |t| t.end)..]
                .chars()
                .any(is_token_char);
        }
        marked.sort_unstable();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (first, last) in marked {
            let (start, end) = (tokens[first].start, tokens[last].end);
            match spans.last_mut() {
                Some(previous) if start <= previous.1 => previous.1 = previous.1.max(end),
                _ => spans.push((start, end)),
            }
        }
        Marked {
            text: text.to_string(),
            tokens,
            spans,
            truncated,
        }
    }

    pub fn has_matches(&self) -> bool {
        !self.spans.is_empty()
    }

    /// The number of tokens (the document length bm25 normalizes by).
    pub fn length(&self) -> usize {
        self.tokens.len()
    }

    /// How often each term occurs among the marked passages. A passage that none of the terms
    /// explains (a word folded differently than FTS5 folds it) counts for every term: FTS5
    /// found a match there.
    pub fn frequencies(&self, terms: &[Term]) -> Vec<f64> {
        let mut counts = vec![0.0; terms.len()];
        let mut next = 0;
        for &(start, end) in &self.spans {
            while next < self.tokens.len() && self.tokens[next].end <= start {
                next += 1;
            }
            let mut last = next;
            while last < self.tokens.len() && self.tokens[last].start < end {
                last += 1;
            }
            let inside = &self.tokens[next..last];
            let mut explained = false;
            for (term, count) in terms.iter().zip(counts.iter_mut()) {
                let found = match term {
                    Term::Prefix(word) => inside
                        .iter()
                        .filter(|t| t.folded.starts_with(word.as_str()))
                        .count(),
                    Term::Phrase(words) => inside
                        .windows(words.len())
                        .filter(|w| w.iter().zip(words).all(|(t, word)| t.folded == *word))
                        .count(),
                };
                if found > 0 {
                    explained = true;
                    *count += found as f64;
                }
            }
            if !explained {
                for count in &mut counts {
                    *count += 1.0;
                }
            }
        }
        counts
    }

    /// About `window` tokens of the text around the best place (the most matches, the earliest
    /// of equals), the matches between `MATCH_START` and `MATCH_END`, and `SNIPPET_ELLIPSIS` where
    /// text was left out.
    pub fn snippet(&self, window: usize) -> String {
        let count = self.tokens.len();
        if count == 0 {
            return self.text.trim().to_string();
        }
        let window = window.max(1);
        // A few tokens of context before the first match shown.
        let lead = window / 4;
        let marked: Vec<usize> = self
            .tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| self.spans.iter().any(|&(s, e)| t.start < e && t.end > s))
            .map(|(i, _)| i)
            .collect();
        let mut start = 0;
        let mut best = 0;
        for &first in &marked {
            let candidate = first.saturating_sub(lead).min(count.saturating_sub(window));
            let covered = marked
                .iter()
                .filter(|&&m| m >= candidate && m < candidate + window)
                .count();
            if covered > best {
                best = covered;
                start = candidate;
            }
        }
        let end_token = (start + window).min(count);
        let from = if start == 0 {
            0
        } else {
            self.tokens[start].start
        };
        let to = if end_token == count && !self.truncated {
            self.text.len()
        } else {
            self.tokens[end_token - 1].end
        };
        let mut out = String::with_capacity(to - from + 16);
        if start > 0 {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        let mut at = from;
        for &(s, e) in &self.spans {
            let (s, e) = (s.max(from), e.min(to));
            if s >= e {
                continue;
            }
            out.push_str(&self.text[at..s]);
            out.push(MATCH_START);
            out.push_str(&self.text[s..e]);
            out.push(MATCH_END);
            at = e;
        }
        out.push_str(&self.text[at..to]);
        if end_token < count || self.truncated {
            out.push_str(SNIPPET_ELLIPSIS);
        }
        let trimmed = out.trim();
        if trimmed.len() == out.len() {
            out
        } else {
            trimmed.to_string()
        }
    }
}

/// Tokens of `text` from byte `from`, at most `limit`.
fn tokens_from(text: &str, from: usize, limit: usize) -> Vec<Token> {
    let mut found = tokens(&text[from..], limit);
    for token in &mut found {
        token.start += from;
        token.end += from;
    }
    found
}

/// FTS5's inverse document frequency of a term found in `hits` of `rows` rows.
pub fn idf(rows: f64, hits: f64) -> f64 {
    let idf = ((rows - hits + 0.5) / (hits + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// The bm25 score (higher is better) of a row `length` tokens long, where `average` is the
/// typical length.
pub fn bm25(frequencies: &[f64], idfs: &[f64], length: f64, average: f64) -> f64 {
    let norm = K1 * (1.0 - B + B * length / average.max(1.0));
    frequencies
        .iter()
        .zip(idfs)
        .map(|(tf, idf)| idf * tf * (K1 + 1.0) / (tf + norm))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn highlighted(text: &str) -> String {
        text.replace('[', &MATCH_START.to_string())
            .replace(']', &MATCH_END.to_string())
    }

    fn shown(snippet: &str) -> String {
        snippet.replace(MATCH_START, "[").replace(MATCH_END, "]")
    }

    #[test]
    fn folds_case_and_latin_diacritics() {
        assert_eq!(fold("Résumé"), "resume");
        assert_eq!(fold("ŽLUŤOUČKÝ"), "zlutoucky");
        assert_eq!(fold("Straße"), "straße");
    }

    #[test]
    fn counts_terms_in_marked_passages() {
        let marked = Marked::from_highlight(&highlighted(
            "[Deploy] the [deployment] after the [final review], then [deploy] again",
        ));
        let terms = vec![
            Term::Prefix("deploy".into()),
            Term::Phrase(vec!["final".into(), "review".into()]),
        ];
        assert_eq!(marked.frequencies(&terms), vec![3.0, 1.0]);
        assert_eq!(marked.length(), 10);
        // One passage (overlapping matches FTS5 merged) may hold several occurrences.
        let merged = Marked::from_highlight(&highlighted("a [deploy deployment] plan"));
        assert_eq!(
            merged.frequencies(&[
                Term::Prefix("deploy".into()),
                Term::Phrase(vec!["deploy".into(), "deployment".into()])
            ]),
            vec![2.0, 1.0]
        );
        // A passage no term explains counts for each.
        let odd = Marked::from_highlight(&highlighted("an [ǅemal] word"));
        assert_eq!(odd.frequencies(&terms), vec![1.0, 1.0]);
    }

    #[test]
    fn snippets_keep_short_texts_whole_and_cut_long_ones() {
        let short = Marked::from_highlight(&highlighted("Please [deploy] it before Friday."));
        assert_eq!(
            shown(&short.snippet(20)),
            "Please [deploy] it before Friday."
        );
        let words: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let mut text = words.join(" ");
        text = text.replace("w50 ", "[pineapple] ");
        let long = Marked::from_highlight(&highlighted(&text));
        let cut = shown(&long.snippet(20));
        assert!(cut.starts_with("…w45 "), "{cut}");
        assert!(cut.contains("[pineapple]") && cut.ends_with('…'), "{cut}");
        assert_eq!(cut.split(' ').count(), 20);
    }

    #[test]
    fn snippets_prefer_the_window_with_most_matches() {
        let text = format!(
            "[alpha] {} [beta] x [alpha] y [beta] end",
            vec!["pad"; 40].join(" ")
        );
        let marked = Marked::from_highlight(&highlighted(&text));
        let cut = shown(&marked.snippet(10));
        assert!(cut.contains("[beta] x [alpha] y [beta]"), "{cut}");
        assert!(cut.starts_with('…') && !cut.ends_with('…'), "{cut}");
    }

    #[test]
    fn finds_matches_itself_reading_only_what_a_snippet_needs() {
        let terms = vec![
            Term::Prefix("stag".into()),
            Term::Phrase(vec!["final".into(), "review".into()]),
        ];
        let text = format!(
            "{} the Final  Review on staging {}",
            vec!["lead"; 30].join(" "),
            vec!["tail"; 1000].join(" ")
        );
        let marked = Marked::find(&text, &terms, 20);
        assert!(marked.length() < 100, "stops reading after the window");
        let cut = shown(&marked.snippet(20));
        assert!(cut.contains("[Final  Review] on [staging]"), "{cut}");
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        let none = Marked::find("nothing here", &terms, 20);
        assert!(!none.has_matches());
        assert_eq!(none.snippet(20), "nothing here");
        let exact = Marked::find("on staging", &terms, 20);
        assert_eq!(shown(&exact.snippet(20)), "on [staging]");
    }

    #[test]
    #[allow(
        clippy::float_cmp,
        reason = "idf's floor is returned as the literal itself"
    )]
    fn bm25_prefers_more_occurrences_and_shorter_texts() {
        let one = [1.0];
        assert!(bm25(&[3.0], &one, 4.0, 4.0) > bm25(&[1.0], &one, 4.0, 4.0));
        assert!(bm25(&[1.0], &one, 4.0, 10.0) > bm25(&[1.0], &one, 40.0, 10.0));
        assert_eq!(
            idf(100.0, 80.0),
            1e-6,
            "a term in most rows weighs nothing, as in FTS5"
        );
        assert!(idf(1000.0, 1.0) > idf(1000.0, 10.0));
    }
}
