//! Handles (`@ada`) and mentions (DESIGN.md §8.1): the rule a handle follows, how a new
//! account's handle is derived from its email, and where a comment's body mentions someone.
//!
//! A handle is `[a-z0-9][a-z0-9._-]{0,38}`, unique over all accounts. Handles are compared in
//! lower case: `@Ada` in a body and `Ada` sent to `PATCH /api/me` both mean `ada`.

use crate::model::SharedKind;

/// The longest handle, in characters (all ASCII).
pub const MAX_LEN: usize = 39;

/// Distinct handles one body may mention; more are left unresolved (bounds the lookups a
/// single write makes).
pub const MAX_MENTIONS: usize = 50;

/// Handles no person may take: the service principals' own.
pub fn reserved(handle: &str) -> bool {
    SharedKind::ALL.iter().any(|kind| kind.handle() == handle)
}

fn is_first(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_rest(c: char) -> bool {
    is_first(c) || matches!(c, '.' | '_' | '-')
}

/// Whether `handle` follows the rule (already in lower case).
pub fn is_valid(handle: &str) -> bool {
    let mut chars = handle.chars();
    chars.next().is_some_and(is_first) && handle.len() <= MAX_LEN && chars.all(is_rest)
}

/// A handle as a person sent it: without a leading `@`, lower-cased, checked; the message says
/// what is wrong otherwise.
pub fn normalize(typed: &str) -> Result<String, String> {
    let handle = typed
        .strip_prefix('@')
        .unwrap_or(typed)
        .to_ascii_lowercase();
    if is_valid(&handle) {
        Ok(handle)
    } else {
        Err(format!(
            "`{}` is not a handle: 1 to {MAX_LEN} characters of a-z, 0-9, `.`, `_` and `-`, \
             starting with a letter or digit",
            typed.chars().take(80).collect::<String>()
        ))
    }
}

/// The handle an email suggests, before uniqueness: its local part in lower case without a
/// `+tag`, keeping only the characters a handle may hold, shortened so a numeric suffix still
/// fits; `user` when nothing usable is left.
pub fn base_from_email(email: &str) -> String {
    let local = email.split('@').next().unwrap_or_default();
    let local = local.split('+').next().unwrap_or_default();
    let kept: String = local
        .to_ascii_lowercase()
        .chars()
        .filter(|c| is_rest(*c))
        .skip_while(|c| !is_first(*c))
        .take(MAX_LEN - 4)
        .collect();
    if kept.is_empty() {
        "user".to_string()
    } else {
        kept
    }
}

/// The first free handle from `base`: `base` itself, else `base2`, `base3`, … (`taken` holds
/// the handles in use that start with `base`).
pub fn first_free(base: &str, taken: &[String]) -> String {
    let free = |candidate: &str| !reserved(candidate) && !taken.iter().any(|t| t == candidate);
    if free(base) {
        return base.to_string();
    }
    // Bounded: at most `taken.len() + 4` candidates can be refused (the taken and the reserved).
    (2u64..=u64::MAX)
        .map(|n| {
            let suffix = n.to_string();
            let keep = MAX_LEN.saturating_sub(suffix.len()).min(base.len());
            format!("{}{suffix}", &base[..keep])
        })
        .find(|candidate| free(candidate))
        .unwrap_or_else(|| base.to_string())
}

/// The handles a body mentions, lower-cased, once each, in order of first mention (at most
/// `MAX_MENTIONS`). A mention is `@` at the start or after a character that cannot end an
/// email's local part (so `ada@example.com` mentions nobody), followed by a handle; a `.`, `_`
/// or `-` ending the handle is read as punctuation (`thanks @ada.`), unless the caller finds
/// the longer handle (see `candidates`).
pub fn mentioned(body: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let chars: Vec<char> = body.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        let at_mention = chars[index] == '@'
            && (index == 0 || !(chars[index - 1].is_alphanumeric() || is_rest(chars[index - 1])));
        if !at_mention {
            index += 1;
            continue;
        }
        let start = index + 1;
        let mut end = start;
        while end < chars.len() && is_rest(chars[end].to_ascii_lowercase()) && end - start < 64 {
            end += 1;
        }
        let word: String = chars[start..end]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase();
        index = end.max(start);
        let word = word.trim_end_matches(['.', '_', '-']);
        if is_valid(word) && !found.iter().any(|f| f == word) {
            found.push(word.to_string());
            if found.len() == MAX_MENTIONS {
                break;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_follow_the_rule() {
        for good in ["a", "ada", "ada.lovelace", "a_b-c", "0", &"a".repeat(39)] {
            assert!(is_valid(good), "{good}");
        }
        for bad in [
            "",
            ".ada",
            "-a",
            "Ada",
            "a b",
            "ädä",
            &"a".repeat(40),
            "a@b",
        ] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert_eq!(normalize("@Ada").unwrap(), "ada");
        assert!(normalize(" ada").is_err());
        assert!(normalize("a!").is_err());
    }

    #[test]
    fn handles_come_from_the_email() {
        assert_eq!(base_from_email("Ada.Lovelace@example.com"), "ada.lovelace");
        assert_eq!(base_from_email("grace+news@example.com"), "grace");
        assert_eq!(base_from_email("__x!y@example.com"), "xy");
        assert_eq!(base_from_email("éé@example.com"), "user");
        assert_eq!(
            base_from_email(&format!("{}@x.io", "b".repeat(60))).len(),
            35
        );
        let taken = vec!["ada".to_string(), "ada2".to_string()];
        assert_eq!(first_free("ada", &taken), "ada3");
        assert_eq!(first_free("grace", &taken), "grace");
        assert_eq!(first_free("svc-agent", &[]), "svc-agent2");
        let long = "c".repeat(39);
        assert_eq!(first_free(&long, std::slice::from_ref(&long)).len(), 39);
    }

    #[test]
    fn mentions_are_found() {
        assert_eq!(
            mentioned("@Ada, see this. cc @grace.hopper and @ada; mail ada@example.com @x."),
            vec!["ada", "grace.hopper", "x"]
        );
        assert_eq!(mentioned("(@bob) @-no @ @"), vec!["bob"]);
        assert!(mentioned("no one").is_empty());
        let many: String = (0..60).map(|n| format!("@u{n} ")).collect();
        assert_eq!(mentioned(&many).len(), MAX_MENTIONS);
    }
}
