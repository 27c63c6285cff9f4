//! A webhook receiver for the black-box tests: an axum server in the test on 127.0.0.1 (so the
//! docreview server runs with `DOCREVIEW_WEBHOOK_ALLOW_PRIVATE=true`), answering as each test
//! scripts it, and a signature check that follows the Standard Webhooks text with the `hmac`
//! crate, apart from the server's own HMAC.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde_json::Value;
use tokio::sync::mpsc;

/// One request the receiver got.
#[derive(Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header"))
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

/// How the receiver answers one request: a status and, optionally, `Retry-After`.
pub type Answer = (u16, Option<&'static str>);

/// A webhook receiver on 127.0.0.1: answers each request with the next scripted answer (204
/// once the script is spent) and hands the request over.
pub struct Receiver {
    pub url: String,
    requests: mpsc::UnboundedReceiver<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    pub async fn start(script: &[Answer]) -> Receiver {
        let (sender, requests) = mpsc::unbounded_channel();
        let script = Arc::new(Mutex::new(script.iter().copied().collect::<VecDeque<_>>()));
        let answers = script;
        let app = axum::Router::new().fallback(move |headers: HeaderMap, body: String| {
            let sender = sender.clone();
            let answers = Arc::clone(&answers);
            async move {
                let _ = sender.send(Received {
                    headers,
                    body,
                    at: Instant::now(),
                });
                let (status, retry_after) = answers
                    .lock()
                    .expect("script")
                    .pop_front()
                    .unwrap_or((204, None));
                let mut headers = HeaderMap::new();
                if let Some(retry_after) = retry_after {
                    headers.insert("retry-after", retry_after.parse().expect("a header value"));
                }
                (StatusCode::from_u16(status).expect("a status"), headers)
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("address"));
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serve");
        });
        Receiver {
            url,
            requests,
            task,
        }
    }

    /// The next request (within 15 s).
    pub async fn next(&mut self) -> Received {
        tokio::time::timeout(Duration::from_secs(15), self.requests.recv())
            .await
            .expect("the receiver got no request in time")
            .expect("receiver running")
    }

    /// Asserts that no request comes within `wait`.
    pub async fn nothing_for(&mut self, wait: Duration) {
        if let Ok(Some(request)) = tokio::time::timeout(wait, self.requests.recv()).await {
            panic!("unexpected request: {}", request.body);
        }
    }
}

/// Whether `secret` signed the request (one of the signatures in the header matches).
pub fn signed_by(secret: &str, request: &Received) -> bool {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 key");
    let mut mac = Hmac::<sha2_10::Sha256>::new_from_slice(&key).expect("key");
    mac.update(
        format!(
            "{}.{}.{}",
            request.header("webhook-id"),
            request.header("webhook-timestamp"),
            request.body
        )
        .as_bytes(),
    );
    let expected = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
    request
        .header("webhook-signature")
        .split(' ')
        .any(|signature| signature == expected)
}
