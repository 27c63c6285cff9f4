//! Accepting connections with limits a slow or hostile client cannot get around: a connection
//! must send a request's headers within a deadline (also when it idles between requests) and its
//! body within another, must keep taking its answers, the server holds at most so many
//! connections, and one address at most so many of them. Without these, 1,100 connections that
//! send nothing locked every other client out until they closed.
//!
//! Event streams are held apart: a request that becomes one ([`StreamAdmission`]) gives its
//! connection's slot back and takes a stream slot, under caps of their own. An office behind
//! one address with many review tabs open must not use up the room its plain requests need.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;

use crate::deadlines::{BodyDeadline, StalledWrites};
use crate::refusals::JsonRefusals;

/// How many connections and event streams the server holds, and how long a client may take.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// All connections at once; beyond, new ones are closed at once.
    pub total: usize,
    /// Connections from one address at once (behind a proxy, every client shares its address:
    /// raise this there).
    pub per_address: usize,
    /// To send a request's headers, counted from the connection's start or its last response.
    pub header_timeout: Duration,
    /// To send a request's whole body, counted from its head.
    pub body_timeout: Duration,
    /// How long an answer's write may wait for the client to take bytes before the connection
    /// is closed.
    pub write_timeout: Duration,
    /// Event streams open at once, apart from connections.
    pub streams_total: usize,
    /// Event streams open at once from one address.
    pub streams_per_address: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            total: 4096,
            per_address: 256,
            header_timeout: Duration::from_secs(10),
            // A 10 MiB upload over a slow line fits.
            body_timeout: Duration::from_secs(120),
            write_timeout: Duration::from_secs(30),
            streams_total: 10_000,
            streams_per_address: 2_048,
        }
    }
}

/// What a connection holds against the caps while it is counted as a connection.
type ConnectionHold = (OwnedSemaphorePermit, AddressSlot);

/// Every request's way to become an event stream (a request extension the listener adds).
#[derive(Clone)]
pub struct StreamAdmission {
    /// The connection's own hold, given back when it serves a stream.
    connection: Arc<Mutex<Option<ConnectionHold>>>,
    streams: Arc<Semaphore>,
    stream_counts: Counts,
    streams_per_address: usize,
    address: IpAddr,
}

/// A stream's place under the stream caps, held while the stream lives.
pub struct StreamSlot {
    _held: ConnectionHold,
}

impl StreamAdmission {
    /// A stream slot for this request's connection, and the connection's own slot given back;
    /// `None` when the stream caps are full (the connection keeps its slot).
    pub fn admit(&self) -> Option<StreamSlot> {
        let permit = Arc::clone(&self.streams).try_acquire_owned().ok()?;
        let slot = AddressSlot::take(&self.stream_counts, self.address, self.streams_per_address)?;
        // The connection now serves the stream until it closes; it no longer counts as one of
        // the address's connections.
        drop(
            self.connection
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        Some(StreamSlot {
            _held: (permit, slot),
        })
    }
}

/// Serves `app` on `listener` until `stop` completes, then lets open requests finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: impl Future<Output = ()>,
) {
    // HTTP/1.1 only (HTTP/2 comes from a TLS proxy in front): sniffing for an HTTP/2 preface
    // would wait for a first byte with no deadline at all.
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        // Room above what we read (`middleware::reject_oversized_head`), so a request with too
        // many headers reaches it and gets the JSON 431: hyper's own refusal has no body.
        .max_headers(crate::middleware::MAX_HEADERS * 4);
    let total = Arc::new(Semaphore::new(limits.total));
    let per_address = Counts::default();
    let streams = Arc::new(Semaphore::new(limits.streams_total));
    let stream_counts = Counts::default();
    let graceful = GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = Arc::clone(&total).try_acquire_owned() else {
            tracing::warn!(%peer, "connection refused: the server holds its maximum");
            continue;
        };
        let Some(slot) = AddressSlot::take(&per_address, peer.ip(), limits.per_address) else {
            tracing::warn!(%peer, "connection refused: too many from this address");
            continue;
        };
        let hold = Arc::new(Mutex::new(Some((permit, slot))));
        let admission = StreamAdmission {
            connection: Arc::clone(&hold),
            streams: Arc::clone(&streams),
            stream_counts: Arc::clone(&stream_counts),
            streams_per_address: limits.streams_per_address,
            address: peer.ip(),
        };
        let app = app.clone();
        let body_timeout = limits.body_timeout;
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            request.extensions_mut().insert(admission.clone());
            app.clone()
                .oneshot(request.map(|body| Body::new(BodyDeadline::new(body, body_timeout))))
        });
        let stream = TokioIo::new(StalledWrites::new(
            JsonRefusals::new(stream),
            limits.write_timeout,
        ));
        let connection = graceful.watch(builder.serve_connection(stream, service));
        tokio::spawn(async move {
            // A client that goes away mid-request is not the server's error.
            let _ = connection.await;
            drop(hold);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// How many connections (or streams) each address holds.
type Counts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// One connection (or stream) counted against its address while it lives.
struct AddressSlot {
    counts: Counts,
    address: IpAddr,
}

impl AddressSlot {
    fn take(counts: &Counts, address: IpAddr, limit: usize) -> Option<AddressSlot> {
        let mut map = counts.lock().unwrap_or_else(PoisonError::into_inner);
        let count = map.entry(address).or_insert(0);
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            counts: Arc::clone(counts),
            address,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let mut map = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = map.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                map.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_slots_count_and_free() {
        let counts = Arc::new(Mutex::new(HashMap::new()));
        let here: IpAddr = "127.0.0.1".parse().expect("ip");
        let there: IpAddr = "127.0.0.2".parse().expect("ip");
        let first = AddressSlot::take(&counts, here, 2).expect("first");
        let second = AddressSlot::take(&counts, here, 2).expect("second");
        assert!(
            AddressSlot::take(&counts, here, 2).is_none(),
            "over the limit"
        );
        assert!(
            AddressSlot::take(&counts, there, 2).is_some(),
            "another address"
        );
        drop(first);
        assert!(
            AddressSlot::take(&counts, here, 2).is_some(),
            "a slot came free"
        );
        drop(second);
        assert!(
            counts.lock().expect("lock").is_empty(),
            "no entry is kept for an address without connections"
        );
    }
}
