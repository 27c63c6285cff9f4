//! Secret values: how personal tokens, session cookies and command-line login codes are minted
//! and recognised, how shared tokens compare, and how passwords are hashed.
//!
//! A personal token is `drp_` + 43 base62 characters (32 random bytes) + a 6-character checksum,
//! so secret scanners can spot leaked ones and typos are rejected without a database lookup.
//! Only the SHA-256 of a token, a session cookie or a login code is ever stored.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::clock::{Entropy, random_bytes};
use crate::model::SharedKind;

pub const PERSONAL_TOKEN_PREFIX: &str = "drp_";
const BODY_LEN: usize = 43;
const CHECKSUM_LEN: usize = 6;
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

pub use docreview_api::secret::Secret;

pub fn sha256(value: &[u8]) -> [u8; 32] {
    Sha256::digest(value).into()
}

/// Mints a new personal token value and its hash.
pub fn mint_personal_token(entropy: &dyn Entropy) -> (Secret, [u8; 32]) {
    let mut random = [0u8; 32];
    entropy.fill(&mut random);
    let body = base62(&random, BODY_LEN);
    let value = format!("{PERSONAL_TOKEN_PREFIX}{body}{}", checksum(&body));
    let hash = sha256(value.as_bytes());
    (Secret::new(value), hash)
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

/// Mints a session cookie value (`drs_` + 43 base62 characters) and its hash.
pub fn mint_session_value(entropy: &dyn Entropy) -> (Secret, [u8; 32]) {
    let mut random = [0u8; 32];
    entropy.fill(&mut random);
    let value = format!("drs_{}", base62(&random, BODY_LEN));
    let hash = sha256(value.as_bytes());
    (Secret::new(value), hash)
}

/// Mints the secret of a single-use link (an invitation, a password reset) and its hash: 32
/// random bytes in base62, URL-safe, stored only as the hash.
pub fn mint_link_secret(entropy: &dyn Entropy) -> (Secret, [u8; 32]) {
    let mut random = [0u8; 32];
    entropy.fill(&mut random);
    let value = base62(&random, BODY_LEN);
    let hash = sha256(value.as_bytes());
    (Secret::new(value), hash)
}

/// The CSRF token of a session: derived from the cookie value, so nothing more is stored, and
/// useless without the cookie it belongs to.
pub fn csrf_token(session_value: &str) -> String {
    let digest = sha256(format!("docreview-csrf:{session_value}").as_bytes());
    base62(&digest, BODY_LEN)
}

/// Whether `presented` is the CSRF token of `session_value`, compared in constant time.
pub fn csrf_matches(session_value: &str, presented: &str) -> bool {
    bool::from(
        csrf_token(session_value)
            .as_bytes()
            .ct_eq(presented.as_bytes()),
    )
}

/// Letters and digits a person can read off a screen and type without confusing them.
const CODE_ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LEN: usize = 10;

/// Mints a command-line login code, `XXXXX-XXXXX` (50 random bits), and the hash of its
/// normalized form.
pub fn mint_login_code(entropy: &dyn Entropy) -> (Secret, [u8; 32]) {
    let mut random = [0u8; CODE_LEN];
    entropy.fill(&mut random);
    let plain: String = random
        .iter()
        .map(|byte| char::from(CODE_ALPHABET[usize::from(*byte) % CODE_ALPHABET.len()]))
        .collect();
    let hash = sha256(plain.as_bytes());
    let shown = format!("{}-{}", &plain[..CODE_LEN / 2], &plain[CODE_LEN / 2..]);
    (Secret::new(shown), hash)
}

/// The hash a typed login code is looked up by: case, spaces and dashes do not matter.
pub fn login_code_hash(typed: &str) -> [u8; 32] {
    let plain: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    sha256(plain.as_bytes())
}

/// A PKCE (S256) challenge as the CLI sends it: BASE64URL(SHA-256(verifier)), 43 characters.
pub fn is_valid_pkce_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `verifier` hashes to `challenge` (RFC 7636 S256), compared in constant time.
pub fn pkce_verifies(verifier: &str, challenge: &str) -> bool {
    // RFC 7636: 43 to 128 characters of [A-Za-z0-9-._~].
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let computed = pkce_challenge(verifier);
    well_formed && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

/// The S256 challenge of a PKCE verifier: `BASE64URL(SHA-256(verifier))`.
pub fn pkce_challenge(verifier: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha256(verifier.as_bytes()))
}

/// A new PKCE verifier (32 random bytes, base64url: 43 characters) for a command-line login.
pub fn new_pkce_verifier() -> Secret {
    use base64::Engine;
    let mut random = [0u8; 32];
    random_bytes(&mut random);
    Secret::new(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random))
}

/// The shortest password anyone may set, in characters (DESIGN.md §8.2).
pub const MIN_PASSWORD_CHARS: usize = 10;
/// The longest: more is no safer, and hashing should not be a way to spend our CPU.
pub const MAX_PASSWORD_CHARS: usize = 1024;

/// The one rule for a new password, whichever way it is set (an operator's command, the
/// Account page, a reset or an invitation): a reason when `password` may not be used.
pub fn password_problem(password: &str) -> Option<String> {
    let length = password.chars().count();
    if length < MIN_PASSWORD_CHARS {
        Some(format!(
            "the password must be at least {MIN_PASSWORD_CHARS} characters (it has {length})"
        ))
    } else if length > MAX_PASSWORD_CHARS {
        Some(format!(
            "the password must be at most {MAX_PASSWORD_CHARS} characters"
        ))
    } else if password.contains('\0') {
        Some("the password must not hold a NUL character".into())
    } else if password.trim().is_empty() {
        Some("the password must not be only white space".into())
    } else {
        None
    }
}

/// A new password's hash, once [`password_problem`] finds nothing wrong with it.
/// Costs tens of milliseconds of CPU: call it off the async threads.
pub fn hash_new_password(password: &str) -> Result<String, String> {
    match password_problem(password) {
        Some(problem) => Err(problem),
        None => hash_password(password),
    }
}

/// Hashes a password with argon2id and the crate's recommended parameters, as a PHC string.
/// Costs tens of milliseconds of CPU: call it off the async threads.
pub fn hash_password(password: &str) -> Result<String, String> {
    use argon2::PasswordHasher;
    argon2::Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| format!("hashing the password: {error}"))
}

/// Checks a password against a stored PHC string; any malformed hash is a mismatch.
/// Costs tens of milliseconds of CPU: call it off the async threads.
pub fn verify_password(password: &str, phc: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::PasswordHash::new(phc).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
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
    use crate::clock::OsEntropy;

    #[test]
    fn link_secrets_are_url_safe_and_stored_only_as_their_hash() {
        let (first, hash) = mint_link_secret(&OsEntropy);
        let (second, _) = mint_link_secret(&OsEntropy);
        assert_ne!(first.expose(), second.expose());
        assert_eq!(first.expose().len(), BODY_LEN);
        assert!(first.expose().chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(hash, sha256(first.expose().as_bytes()));
        assert_eq!(format!("{first:?}"), "Secret(<redacted>)");
    }

    #[test]
    fn one_rule_for_every_new_password() {
        assert!(password_problem("nine char").is_some());
        assert!(password_problem("ten chars!").is_none());
        // Characters, not bytes.
        assert!(password_problem("ééééééééé").is_some());
        assert!(password_problem("éééééééééé").is_none());
        assert!(password_problem("          ").is_some());
        assert!(password_problem("with a \0 inside").is_some());
        assert!(password_problem(&"x".repeat(MAX_PASSWORD_CHARS + 1)).is_some());
        assert!(hash_new_password("short").is_err());
        assert!(verify_password(
            "long enough",
            &hash_new_password("long enough").unwrap()
        ));
    }

    #[test]
    fn minted_tokens_are_well_formed_and_distinct() {
        let (first, first_hash) = mint_personal_token(&OsEntropy);
        let (second, _) = mint_personal_token(&OsEntropy);
        assert!(first.expose().starts_with("drp_"));
        assert_eq!(first.expose().len(), 4 + BODY_LEN + CHECKSUM_LEN);
        assert!(is_well_formed_personal_token(first.expose()));
        assert_ne!(first, second);
        assert_eq!(first_hash, sha256(first.expose().as_bytes()));
        assert_eq!(format!("{first:?}"), "Secret(<redacted>)");
    }

    #[test]
    fn a_typo_breaks_the_checksum() {
        let (token, _) = mint_personal_token(&OsEntropy);
        let mut altered = token.expose().to_string();
        let last = altered.pop().unwrap_or('0');
        altered.push(if last == 'a' { 'b' } else { 'a' });
        assert!(!is_well_formed_personal_token(&altered));
        assert!(!is_well_formed_personal_token("drp_short"));
        assert!(!is_well_formed_personal_token("nope"));
    }

    #[test]
    fn login_codes_normalize_and_pkce_verifies() {
        let (code, hash) = mint_login_code(&OsEntropy);
        assert_eq!(code.expose().len(), 11);
        assert_eq!(login_code_hash(code.expose()), hash);
        let sloppy = code.expose().to_lowercase().replace('-', " ");
        assert_eq!(login_code_hash(&sloppy), hash);
        // RFC 7636, appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(is_valid_pkce_challenge(challenge));
        assert!(pkce_verifies(verifier, challenge));
        assert!(!pkce_verifies(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx",
            challenge
        ));
        assert!(!pkce_verifies("short", challenge));
        assert!(!is_valid_pkce_challenge("not a challenge"));
    }

    #[test]
    fn csrf_tokens_belong_to_their_session() {
        let (first, _) = mint_session_value(&OsEntropy);
        let (second, _) = mint_session_value(&OsEntropy);
        let token = csrf_token(first.expose());
        assert!(csrf_matches(first.expose(), &token));
        assert!(!csrf_matches(second.expose(), &token));
        assert!(!csrf_matches(first.expose(), ""));
    }

    #[test]
    fn passwords_verify_only_against_their_hash() {
        let hash = hash_password("correct horse").unwrap_or_default();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
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
