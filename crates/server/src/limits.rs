//! Rate limits on writes (DESIGN.md §4.7), per credential and per client address, and the
//! client address itself: the peer's, or behind a trusted proxy the one it forwards.
//!
//! Each node counts its own requests (in memory, token buckets): with N nodes behind a load
//! balancer a client gets up to N times the limit. The limits are there to stop a runaway or
//! abusive client, not to meter, so we chose no per-write round trip to a shared counter (it
//! would cost the write path a database statement each).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use docreview_core::access::{Actor, Credential};
use docreview_core::limit::RateLimiter;
use ipnet::IpNet;

use crate::AppState;
use crate::error::ApiError;

/// Writes a minute allowed per credential and per client address (0: no limit).
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub writes_per_credential: u32,
    pub writes_per_address: u32,
}

impl Default for RateLimits {
    /// Generous: one agent writing thousands of comments a second is honest use (DESIGN.md
    /// §4.7), and the benchmarks run with these. They stop a runaway loop, not a busy agent.
    fn default() -> Self {
        RateLimits {
            writes_per_credential: 600_000,
            writes_per_address: 600_000,
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed: addresses or CIDR blocks.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma- or space-separated list such as `10.0.0.0/8, 127.0.0.1, ::1`.
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        list.split([',', ' '])
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                item.parse::<IpNet>()
                    .or_else(|_| item.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        format!(
                            "`{item}` is neither an IP address nor a CIDR block (e.g. 10.0.0.0/8)"
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies)
    }

    fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The client's address: the peer's, unless the peer is a trusted proxy; then the
    /// right-most address of `X-Forwarded-For` that is not itself a trusted proxy (the left
    /// part of the header is whatever the client chose to send, so it counts for nothing).
    fn client(&self, peer: IpAddr, request: &Request) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        let mut chain: Vec<IpAddr> = Vec::new();
        for value in request.headers().get_all("x-forwarded-for") {
            let Ok(value) = value.to_str() else {
                return canonical(peer);
            };
            for item in value.split(',') {
                match item.trim().parse::<IpAddr>() {
                    Ok(address) => chain.push(canonical(address)),
                    // A malformed list proves nothing: count the proxy itself.
                    Err(_) => return canonical(peer),
                }
            }
        }
        let mut client = canonical(peer);
        for address in chain.into_iter().rev() {
            client = address;
            if !self.trusts(address) {
                break;
            }
        }
        client
    }
}

/// An IPv4 address written as IPv6 (`::ffff:1.2.3.4`) is that IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        IpAddr::V4(_) => address,
    }
}

/// The address a request is counted under (see `TrustedProxies::client`).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub IpAddr);

/// The limiters of this node.
pub struct WriteLimiter {
    per_credential: RateLimiter,
    per_address: RateLimiter,
    proxies: TrustedProxies,
}

impl WriteLimiter {
    pub fn new(limits: RateLimits, proxies: TrustedProxies) -> Self {
        WriteLimiter {
            per_credential: RateLimiter::new(limits.writes_per_credential),
            per_address: RateLimiter::new(limits.writes_per_address),
            proxies,
        }
    }
}

/// Whether the method changes something (the requests the limits count).
fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Finds the client's address for every request (handlers and the sign-in limiter read it as
/// `ClientAddress`), and spends one of that address's writes on a write.
pub async fn per_address(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(peer) = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
    else {
        return next.run(request).await;
    };
    let limiter = Arc::clone(&state.limits);
    let client = limiter.proxies.client(peer, &request);
    request.extensions_mut().insert(ClientAddress(client));
    if is_write(request.method())
        && let Err(error) = limiter
            .per_address
            .spend(&client.to_string(), state.service.now())
    {
        return ApiError::Core(error).into_response();
    }
    next.run(request).await
}

/// Spends one of the credential's writes on a write: a personal token by its id, a shared
/// token by its kind, a browser session by its user (never by the secret itself).
pub fn per_credential(state: &AppState, method: &Method, actor: &Actor) -> Result<(), ApiError> {
    if !is_write(method) || state.limits.per_credential.is_unlimited() {
        return Ok(());
    }
    let key = match &actor.credential {
        Credential::Personal { token_id, .. } => format!("token:{token_id}"),
        // The shared principal's id (`svc_agent`, …) names its kind.
        Credential::Shared(_) => format!("shared:{}", actor.id()),
        Credential::Session { .. } => format!("user:{}", actor.id()),
    };
    state
        .limits
        .per_credential
        .spend(&key, state.service.now())
        .map_err(ApiError::Core)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_forwarded(value: Option<&str>) -> Request {
        let mut builder = axum::http::Request::get("/");
        if let Some(value) = value {
            builder = builder.header("x-forwarded-for", value);
        }
        builder.body(axum::body::Body::empty()).expect("request")
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("ip")
    }

    #[test]
    fn forwarded_addresses_count_only_from_trusted_proxies() {
        let proxies = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").expect("parse");
        let forwarded = with_forwarded(Some("6.6.6.6, 203.0.113.9, 10.1.2.3"));
        assert_eq!(
            proxies.client(ip("10.0.0.1"), &forwarded),
            ip("203.0.113.9")
        );
        assert_eq!(
            proxies.client(ip("198.51.100.1"), &forwarded),
            ip("198.51.100.1"),
            "an untrusted peer's header is ignored"
        );
        assert_eq!(
            proxies.client(ip("127.0.0.1"), &with_forwarded(None)),
            ip("127.0.0.1")
        );
        assert_eq!(
            proxies.client(ip("127.0.0.1"), &with_forwarded(Some("junk"))),
            ip("127.0.0.1")
        );
        assert_eq!(
            proxies.client(ip("::ffff:10.0.0.1"), &with_forwarded(Some("::1"))),
            ip("::1")
        );
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse("proxy.example").is_err());
        assert!(TrustedProxies::parse("").expect("empty").0.is_empty());
    }
}
