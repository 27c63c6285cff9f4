//! Webhook deliveries (DESIGN.md §8.3, the Standard Webhooks scheme): the signature, the
//! secrets, and the transport a delivery goes through (HTTP lives outside core: the server
//! crate provides it, resolving and checking each address itself).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use crate::clock::Entropy;
use crate::model::Millis;

/// Every secret starts with this, as Standard Webhooks names them.
pub const SECRET_PREFIX: &str = "whsec_";

/// How long the secret before a rotation still signs.
pub const ROTATION_OVERLAP_MS: Millis = 24 * 3_600_000;

/// How long one attempt may take (connect, send, answer).
pub const TIMEOUT_MS: Millis = 10_000;

/// The default retry schedule (`DOCREVIEW_WEBHOOK_RETRY_SCHEDULE`): the delays before the
/// second, third, … attempt.
pub const DEFAULT_RETRY_SCHEDULE: &str = "5s,5m,30m,2h,5h,10h,10h";

/// The longest wait a receiver's `Retry-After` may ask for.
pub const MAX_RETRY_AFTER_MS: Millis = 24 * 3_600_000;

/// A new secret: `whsec_` + base64 of 24 random bytes.
pub fn new_secret(entropy: &dyn Entropy) -> String {
    let mut key = [0u8; 24];
    entropy.fill(&mut key);
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The key a secret holds (the base64 after the prefix); `None` for a malformed one.
fn key_of(secret: &str) -> Option<Vec<u8>> {
    STANDARD.decode(secret.strip_prefix(SECRET_PREFIX)?).ok()
}

/// HMAC-SHA256 (RFC 2104) over SHA-256's 64-byte blocks; written out rather than pulling in a
/// second SHA-2 generation for the `hmac` crate (the one in the tree is built on sha2 0.10).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner_key: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer_key: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let mut inner = Sha256::new();
    inner.update(&inner_key);
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(&outer_key);
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` per
/// secret, separated by spaces (during a rotation's overlap, both secrets sign).
pub fn signature(secrets: &[&str], id: &str, timestamp: i64, body: &str) -> String {
    let signed = format!("{id}.{timestamp}.{body}");
    secrets
        .iter()
        .filter_map(|secret| key_of(secret))
        .map(|key| {
            format!(
                "v1,{}",
                STANDARD.encode(hmac_sha256(&key, signed.as_bytes()))
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One HTTP request of a delivery: a POST of `body` with `headers`.
#[derive(Debug, Clone)]
pub struct WebhookRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// How the receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookAnswer {
    /// An HTTP status, and how long `Retry-After` asked to wait, if it did.
    Status {
        status: u16,
        retry_after: Option<Millis>,
    },
    /// No answer: the address was refused, the connection failed, or the time ran out.
    Unreachable(String),
}

/// Sends webhook requests: resolves the address itself, refuses the ranges DESIGN.md §8.3
/// forbids, connects only to the address it checked, follows no redirect, and gives up after
/// `TIMEOUT_MS`.
#[async_trait::async_trait]
pub trait WebhookTransport: Send + Sync {
    /// Whether `url` may be registered: its scheme and what its host resolves to. The error
    /// says why not, for a 400 `invalid_request`.
    async fn check(&self, url: &str) -> Result<(), String>;

    async fn send(&self, request: WebhookRequest) -> WebhookAnswer;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than a block.
        let mac = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex::encode(mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn signatures_follow_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(
                &[secret],
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                body
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert_eq!(
            signature(
                &[secret, secret],
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                body
            )
            .split(' ')
            .count(),
            2
        );
    }
}

/// Why a webhook may not be sent to `ip` (DESIGN.md §8.3: loopback, private, link-local,
/// multicast and unspecified addresses, and the other ranges no public receiver holds), or
/// `None` for a public address. IPv4 addresses inside IPv6 (mapped, NAT64) are judged as IPv4.
pub fn forbidden_range(ip: std::net::IpAddr) -> Option<&'static str> {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_v4(v4);
            }
            let segments = v6.segments();
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let octets = v6.octets();
                return forbidden_v4(std::net::Ipv4Addr::new(
                    octets[12], octets[13], octets[14], octets[15],
                ));
            }
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if v6.is_multicast() {
                Some("multicast")
            } else if segments[0] & 0xffc0 == 0xfe80 || segments[0] & 0xffc0 == 0xfec0 {
                Some("link-local")
            } else if segments[0] & 0xfe00 == 0xfc00 {
                Some("private (unique local)")
            } else if segments[0] == 0x2001 && segments[1] == 0x0db8 {
                Some("documentation")
            } else if segments[..6] == [0, 0, 0, 0, 0, 0] {
                Some("IPv4-compatible")
            } else {
                None
            }
        }
    }
}

fn forbidden_v4(ip: std::net::Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || a == 0 {
        Some("unspecified")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() || a >= 240 {
        Some("reserved")
    } else if a == 100 && (64..128).contains(&b) {
        Some("private (shared address space)")
    } else if (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) {
        Some("reserved")
    } else if (a == 192 && b == 0 && c == 2)
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
    {
        Some("documentation")
    } else {
        None
    }
}

#[cfg(test)]
mod range_tests {
    use super::forbidden_range;

    #[test]
    fn private_ranges_are_refused_and_public_ones_pass() {
        for refused in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "224.0.0.1",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(
                forbidden_range(refused.parse().unwrap()).is_some(),
                "{refused}"
            );
        }
        for allowed in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(forbidden_range(allowed.parse().unwrap()), None, "{allowed}");
        }
    }
}
