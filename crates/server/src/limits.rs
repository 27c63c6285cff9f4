//! Rate limits on writes (DESIGN.md §4.7), per credential and per client address, and the
//! client address itself: the peer's, or behind a trusted proxy the one it forwards.
//!
//! Each node counts in memory (token buckets), so a write never waits for a shared counter.
//! With PostgreSQL the counts are also shared between nodes (`SharedWindows`): every node adds
//! what it counted to a per-minute row of each key about four times a second and reads back
//! the total over all nodes, so behind a load balancer a client gets its limit once, not once
//! per node, give or take what the nodes admit between two exchanges.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use docreview_core::access::{Actor, Credential};
use docreview_core::limit::RateLimiter;
use docreview_core::model::Millis;
use docreview_core::{Error, Service};
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

impl ClientAddress {
    /// The key failed sign-ins and code exchanges are counted under: an IPv4 address, or the
    /// /64 network of an IPv6 one. A host is routinely given a whole /64 and may send from any
    /// address in it, so counting single IPv6 addresses would give it 2^64 fresh counts.
    pub fn attempt_key(self) -> String {
        match canonical(self.0) {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => {
                let network = std::net::Ipv6Addr::from(u128::from(v6) & (u128::MAX << 64));
                format!("{network}/64")
            }
        }
    }
}

/// The limiters of this node.
pub struct WriteLimiter {
    limits: RateLimits,
    per_credential: RateLimiter,
    per_address: RateLimiter,
    shared: SharedWindows,
    proxies: TrustedProxies,
}

impl WriteLimiter {
    pub fn new(limits: RateLimits, proxies: TrustedProxies) -> Self {
        WriteLimiter {
            limits,
            per_credential: RateLimiter::new(limits.writes_per_credential),
            per_address: RateLimiter::new(limits.writes_per_address),
            shared: SharedWindows::default(),
            proxies,
        }
    }

    /// Spends one write of `key` locally, then of the shared count (when shared).
    fn spend(&self, local: &RateLimiter, limit: u32, key: &str, now: Millis) -> Result<(), Error> {
        local.spend(key, now)?;
        self.shared.spend(key, limit, now)
    }
}

/// How often a node exchanges its counts with the others.
const SHARE_EVERY: Duration = Duration::from_millis(250);
const MINUTE_MS: Millis = 60_000;

/// Counts shared through the database, by fixed one-minute windows: what all nodes counted
/// by their last exchange, plus what this node counted since.
#[derive(Default)]
struct SharedWindows {
    /// Set once the store said it shares counts (PostgreSQL).
    enabled: AtomicBool,
    state: Mutex<WindowState>,
}

#[derive(Default)]
struct WindowState {
    window: Millis,
    /// Counted here since the last exchange.
    pending: HashMap<String, i64>,
    /// Every node's total at the last exchange.
    totals: HashMap<String, i64>,
}

impl WindowState {
    fn roll(&mut self, now: Millis) {
        let window = now - now.rem_euclid(MINUTE_MS);
        if window != self.window {
            self.window = window;
            self.pending.clear();
            self.totals.clear();
        }
    }
}

impl SharedWindows {
    fn spend(&self, key: &str, limit: u32, now: Millis) -> Result<(), Error> {
        if limit == 0 || !self.enabled.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.roll(now);
        let total = state.totals.get(key).copied().unwrap_or(0);
        let pending = state.pending.get(key).copied().unwrap_or(0);
        if total + pending >= i64::from(limit) {
            let wait_ms = state.window + MINUTE_MS - now;
            return Err(Error::RateLimited {
                retry_after_secs: u64::try_from(wait_ms / 1000 + 1).unwrap_or(1),
            });
        }
        *state.pending.entry(key.to_string()).or_insert(0) += 1;
        Ok(())
    }

    /// One exchange: this node's counts out, every node's totals back. `false` when the store
    /// does not share counts (then there is nothing to exchange, ever).
    async fn exchange(&self, service: &Service) -> bool {
        let (window, counts) = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.roll(service.now());
            let pending = std::mem::take(&mut state.pending);
            // Keys seen this minute are asked again (with 0) to learn the other nodes' counts;
            // sorted, so concurrent exchanges lock their rows in one order.
            let known: Vec<(String, i64)> = state
                .totals
                .keys()
                .filter(|key| !pending.contains_key(*key))
                .map(|key| (key.clone(), 0))
                .collect();
            let mut counts: Vec<(String, i64)> = known.into_iter().chain(pending).collect();
            counts.sort();
            (state.window, counts)
        };
        if counts.is_empty() && self.enabled.load(Ordering::Relaxed) {
            return true;
        }
        let sent: Vec<(String, i64)> = counts.iter().filter(|(_, n)| *n > 0).cloned().collect();
        match service.share_rate_counts(window, counts).await {
            Ok(None) => false,
            Ok(Some(totals)) => {
                self.enabled.store(true, Ordering::Relaxed);
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.window == window {
                    state.totals.extend(totals);
                }
                true
            }
            Err(error) => {
                // Counted again with the next exchange.
                tracing::warn!(error = error.detail(), "could not share rate-limit counts");
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.window == window {
                    for (key, count) in sent {
                        *state.pending.entry(key).or_insert(0) += count;
                    }
                }
                true
            }
        }
    }
}

/// Exchanges this node's counts with the other nodes until `stop`, when the store shares them.
pub async fn share_counts(
    limiter: Arc<WriteLimiter>,
    service: Arc<Service>,
    stop: tokio_util::sync::CancellationToken,
) {
    if limiter.limits.writes_per_credential == 0 && limiter.limits.writes_per_address == 0 {
        return;
    }
    let mut tick = tokio::time::interval(SHARE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        if !limiter.shared.exchange(&service).await {
            return;
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
        && let Err(error) = limiter.spend(
            &limiter.per_address,
            limiter.limits.writes_per_address,
            &format!("address:{client}"),
            state.service.now(),
        )
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
    let limiter = &state.limits;
    limiter
        .spend(
            &limiter.per_credential,
            limiter.limits.writes_per_credential,
            &key,
            state.service.now(),
        )
        .map_err(ApiError::Core)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_keyed_by_ipv4_address_or_ipv6_network() {
        let key = |text: &str| ClientAddress(text.parse().expect("address")).attempt_key();
        assert_eq!(key("192.0.2.7"), "192.0.2.7");
        assert_eq!(key("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(key("2001:db8:0:7::1"), "2001:db8:0:7::/64");
        assert_eq!(key("2001:db8:0:7:ffff:1:2:3"), "2001:db8:0:7::/64");
        assert_ne!(key("2001:db8:0:8::1"), key("2001:db8:0:7::1"));
        assert_eq!(key("::1"), "::/64");
    }

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
