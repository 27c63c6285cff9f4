//! What changed between two versions' texts, word by word, for the review screen's "changes
//! since the previous version" view. Unchanged stretches are cut to their ends, so a long
//! document with a few edits shows the edits with a little context, not the whole text.

use std::time::Duration;

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};

/// Longest a diff may compute before falling back to a coarser answer.
const DEADLINE: Duration = Duration::from_millis(500);
/// Characters of unchanged text kept on each side of an edit.
const CONTEXT_CHARS: usize = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Same,
    Added,
    Removed,
    /// Unchanged text left out between two edits.
    Skipped,
}

/// One stretch of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub text: String,
}

/// The word-level changes from `old` to `new`, unchanged stretches shortened to their context.
/// Empty when the texts are equal.
pub fn word_changes(old: &str, new: &str) -> Vec<Change> {
    if old == new {
        return Vec::new();
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DEADLINE)
        .diff_words(old, new);
    let mut merged: Vec<Change> = Vec::new();
    for change in diff.iter_all_changes() {
        let kind = match change.tag() {
            ChangeTag::Equal => ChangeKind::Same,
            ChangeTag::Insert => ChangeKind::Added,
            ChangeTag::Delete => ChangeKind::Removed,
        };
        match merged.last_mut() {
            Some(last) if last.kind == kind => last.text.push_str(change.value()),
            _ => merged.push(Change {
                kind,
                text: change.value().to_string(),
            }),
        }
    }
    let count = merged.len();
    merged
        .into_iter()
        .enumerate()
        .flat_map(|(index, change)| shorten(change, index == 0, index + 1 == count))
        .collect()
}

/// Cuts an unchanged stretch to the context around the edits next to it.
fn shorten(change: Change, first: bool, last: bool) -> Vec<Change> {
    if change.kind != ChangeKind::Same {
        return vec![change];
    }
    let chars: Vec<char> = change.text.chars().collect();
    let keep_before = if first { 0 } else { CONTEXT_CHARS };
    let keep_after = if last { 0 } else { CONTEXT_CHARS };
    if chars.len() <= keep_before + keep_after + 20 {
        return vec![change];
    }
    let mut parts = Vec::new();
    if keep_before > 0 {
        parts.push(Change {
            kind: ChangeKind::Same,
            text: chars[..keep_before].iter().collect(),
        });
    }
    parts.push(Change {
        kind: ChangeKind::Skipped,
        text: String::new(),
    });
    if keep_after > 0 {
        parts.push(Change {
            kind: ChangeKind::Same,
            text: chars[chars.len() - keep_after..].iter().collect(),
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_changes() {
        assert!(word_changes("same text", "same text").is_empty());
    }

    #[test]
    fn edits_show_with_context_and_long_stretches_are_skipped() {
        let filler = "word ".repeat(100);
        let old = format!("{filler}The cache holds 64 MiB.{filler}");
        let new = format!("{filler}The cache holds 128 MiB.{filler}");
        let changes = word_changes(&old, &new);
        let kinds: Vec<ChangeKind> = changes.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ChangeKind::Skipped,
                ChangeKind::Same,
                ChangeKind::Removed,
                ChangeKind::Added,
                ChangeKind::Same,
                ChangeKind::Skipped
            ]
        );
        assert_eq!(changes[2].text, "64");
        assert_eq!(changes[3].text, "128");
        assert!(changes[1].text.ends_with("The cache holds "));
    }
}
