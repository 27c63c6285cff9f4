//! Token values: how personal tokens are minted and recognised, and how shared tokens compare.
//!
//! A personal token is `drp_` + 43 base62 characters (32 random bytes) + a 6-character checksum,
//! so secret scanners can spot leaked ones and typos are rejected without a database lookup.
//! Only the SHA-256 of a token is ever stored.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::clock::random_bytes;
use crate::model::SharedKind;

pub const PERSONAL_TOKEN_PREFIX: &str = "drp_";
const BODY_LEN: usize = 43;
const CHECKSUM_LEN: usize = 6;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A secret that must never be logged: its `Debug` shows nothing of the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Self {
        Secret(value)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

pub fn sha256(value: &[u8]) -> [u8; 32] {
    Sha256::digest(value).into()
}

/// Mints a new personal token value and its hash.
pub fn mint_personal_token() -> (Secret, [u8; 32]) {
    let mut random = [0u8; 32];
    random_bytes(&mut random);
    let body = base62(&random, BODY_LEN);
    let value = format!("{PERSONAL_TOKEN_PREFIX}{body}{}", checksum(&body));
    let hash = sha256(value.as_bytes());
    (Secret(value), hash)
}

/// Whether `value` is shaped like a personal token with a valid checksum.
pub fn is_well_formed_personal_token(value: &str) -> bool {
    let Some(rest) = value.strip_prefix(PERSONAL_TOKEN_PREFIX) else {
        return false;
    };
    if rest.len() != BODY_LEN + CHECKSUM_LEN || !rest.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return false;
    }
    let (body, sum) = rest.split_at(BODY_LEN);
    bool::from(checksum(body).as_bytes().ct_eq(sum.as_bytes()))
}

fn checksum(body: &str) -> String {
    let digest = sha256(body.as_bytes());
    base62(&digest[..4], CHECKSUM_LEN)
}

/// Big-endian base62 of `bytes`, left-padded with zeros to `width` characters.
fn base62(bytes: &[u8], width: usize) -> String {
    let mut number = bytes.to_vec();
    let mut digits = Vec::with_capacity(width);
    while number.iter().any(|b| *b != 0) {
        let mut remainder = 0u32;
        for byte in &mut number {
            let acc = (remainder << 8) | u32::from(*byte);
            *byte = u8::try_from(acc / 62).unwrap_or(0);
            remainder = acc % 62;
        }
        digits.push(BASE62[remainder as usize]);
    }
    while digits.len() < width {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// The shared tokens configured in the environment, kept only as hashes.
#[derive(Default, Clone)]
pub struct SharedTokens {
    hashes: Vec<(SharedKind, [u8; 32])>,
}

impl SharedTokens {
    pub fn new(configured: impl IntoIterator<Item = (SharedKind, Secret)>) -> Self {
        let hashes = configured
            .into_iter()
            .filter(|(_, value)| !value.expose().is_empty())
            .map(|(kind, value)| (kind, sha256(value.expose().as_bytes())))
            .collect();
        SharedTokens { hashes }
    }

    /// Which shared token `value` is, compared in constant time against each configured one.
    pub fn identify(&self, value: &str) -> Option<SharedKind> {
        let presented = sha256(value.as_bytes());
        let mut found = None;
        for (kind, hash) in &self.hashes {
            if bool::from(hash.ct_eq(&presented)) {
                found = Some(*kind);
            }
        }
        found
    }

    pub fn kinds(&self) -> impl Iterator<Item = SharedKind> + '_ {
        self.hashes.iter().map(|(kind, _)| *kind)
    }
}

impl std::fmt::Debug for SharedTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.kinds()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_are_well_formed_and_distinct() {
        let (first, first_hash) = mint_personal_token();
        let (second, _) = mint_personal_token();
        assert!(first.expose().starts_with("drp_"));
        assert_eq!(first.expose().len(), 4 + BODY_LEN + CHECKSUM_LEN);
        assert!(is_well_formed_personal_token(first.expose()));
        assert_ne!(first, second);
        assert_eq!(first_hash, sha256(first.expose().as_bytes()));
        assert_eq!(format!("{first:?}"), "Secret(<redacted>)");
    }

    #[test]
    fn a_typo_breaks_the_checksum() {
        let (token, _) = mint_personal_token();
        let mut altered = token.expose().to_string();
        let last = altered.pop().unwrap_or('0');
        altered.push(if last == 'a' { 'b' } else { 'a' });
        assert!(!is_well_formed_personal_token(&altered));
        assert!(!is_well_formed_personal_token("drp_short"));
        assert!(!is_well_formed_personal_token("nope"));
    }

    #[test]
    fn shared_tokens_are_identified() {
        let shared = SharedTokens::new([
            (SharedKind::Agent, Secret::new("agent-secret".into())),
            (SharedKind::Import, Secret::new(String::new())),
        ]);
        assert_eq!(shared.identify("agent-secret"), Some(SharedKind::Agent));
        assert_eq!(shared.identify(""), None);
        assert_eq!(shared.identify("other"), None);
    }
}
