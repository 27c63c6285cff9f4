//! Identifiers: a type prefix over a time-ordered random part, URL-safe and opaque.

use crate::clock::Entropy;
use crate::model::Millis;

/// Crockford's base32, lower case: sortable and free of look-alike letters.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// `prefix` + 10 characters of milliseconds + 16 random characters (80 bits from `entropy`).
pub fn new_id(prefix: &str, now: Millis, entropy: &dyn Entropy) -> String {
    let mut id = String::with_capacity(prefix.len() + 26);
    id.push_str(prefix);
    let time = u64::try_from(now).unwrap_or(0);
    for shift in (0..10).rev() {
        id.push(char::from(ALPHABET[((time >> (shift * 5)) & 31) as usize]));
    }
    let mut random = [0u8; 10];
    entropy.fill(&mut random);
    let bits = random
        .iter()
        .fold(0u128, |acc, byte| (acc << 8) | u128::from(*byte));
    for shift in (0..16).rev() {
        id.push(char::from(ALPHABET[((bits >> (shift * 5)) & 31) as usize]));
    }
    id
}

/// A client-chosen review id: `^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$`.
pub fn is_valid_client_review_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    (3..=64).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// A project code: `^[A-Z0-9][A-Z0-9-]{0,31}$`.
pub fn is_valid_project_code(code: &str) -> bool {
    let bytes = code.as_bytes();
    (1..=32).contains(&bytes.len())
        && (bytes[0].is_ascii_uppercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::OsEntropy;

    /// Gives the same byte every time.
    struct Constant(u8);

    impl Entropy for Constant {
        fn fill(&self, buffer: &mut [u8]) {
            buffer.fill(self.0);
        }
    }

    #[test]
    fn ids_sort_by_time() {
        let earlier = new_id("cm_", 1_000, &OsEntropy);
        let later = new_id("cm_", 2_000, &OsEntropy);
        assert!(earlier < later);
        assert_eq!(earlier.len(), 3 + 26);
    }

    #[test]
    fn the_random_part_comes_from_the_entropy_given() {
        assert_eq!(
            new_id("cm_", 0, &Constant(0)),
            "cm_00000000000000000000000000"
        );
        assert_eq!(
            new_id("cm_", 0, &Constant(0xff)),
            "cm_0000000000zzzzzzzzzzzzzzzz"
        );
        assert_ne!(new_id("cm_", 0, &OsEntropy), new_id("cm_", 0, &OsEntropy));
    }

    #[test]
    fn client_review_ids() {
        assert!(is_valid_client_review_id("abc"));
        assert!(is_valid_client_review_id("A1_-x"));
        assert!(!is_valid_client_review_id("ab"));
        assert!(!is_valid_client_review_id("_abc"));
        assert!(!is_valid_client_review_id("a b c"));
        assert!(!is_valid_client_review_id(&"a".repeat(65)));
    }

    #[test]
    fn project_codes() {
        assert!(is_valid_project_code("A"));
        assert!(is_valid_project_code("ACME-2026"));
        assert!(!is_valid_project_code("-A"));
        assert!(!is_valid_project_code("acme"));
        assert!(!is_valid_project_code(&"A".repeat(33)));
    }
}
