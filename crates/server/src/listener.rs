//! Accepting connections with limits a slow or hostile client cannot get around: a connection
//! must send a request's headers within a deadline (also when it idles between requests), the
//! server holds at most so many connections, and one address at most so many of them. Without
//! these, 1,100 connections that send nothing locked every other client out until they closed.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
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

use crate::refusals::JsonRefusals;

/// How many connections the server holds, and how long a client may take to send headers.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// All connections at once; beyond, new ones are closed at once.
    pub total: usize,
    /// Connections from one address at once (behind a proxy, every client shares its address:
    /// raise this there).
    pub per_address: usize,
    /// To send a request's headers, counted from the connection's start or its last response.
    pub header_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            total: 4096,
            per_address: 256,
            header_timeout: Duration::from_secs(10),
        }
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
    let per_address = Arc::new(Mutex::new(HashMap::new()));
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
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(request.map(Body::new))
        });
        let stream = TokioIo::new(JsonRefusals::new(stream));
        let connection = graceful.watch(builder.serve_connection(stream, service));
        tokio::spawn(async move {
            let _held: (OwnedSemaphorePermit, AddressSlot) = (permit, slot);
            // A client that goes away mid-request is not the server's error.
            let _ = connection.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// One connection counted against its address while it lives.
struct AddressSlot {
    counts: Arc<Mutex<HashMap<IpAddr, usize>>>,
    address: IpAddr,
}

impl AddressSlot {
    fn take(
        counts: &Arc<Mutex<HashMap<IpAddr, usize>>>,
        address: IpAddr,
        limit: usize,
    ) -> Option<AddressSlot> {
        let mut map = counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        let mut map = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
