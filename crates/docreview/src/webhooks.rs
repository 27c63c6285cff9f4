//! The HTTP side of webhooks (core's `WebhookTransport`): every name is resolved here and every
//! address it gives is checked against the ranges DESIGN.md §8.3 refuses, at registration and
//! again when connecting; the connection goes to the address that was checked (reqwest asks
//! our resolver, never the system's directly), follows no redirect, and ends after 10 seconds.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use docreview_core::model::Millis;
use docreview_core::outbox::webhook::{
    TIMEOUT_MS, WebhookAnswer, WebhookRequest, WebhookTransport, forbidden_range,
};
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Sends webhook deliveries over HTTP(S).
pub struct HttpTransport {
    client: reqwest::Client,
    allow_private: bool,
}

impl HttpTransport {
    /// `allow_private`: `DOCREVIEW_WEBHOOK_ALLOW_PRIVATE` (private addresses and `http://`).
    pub fn new(allow_private: bool) -> anyhow::Result<Self> {
        let tls = docreview_client::tls::client_config(true)?;
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .dns_resolver(Arc::new(CheckedResolver { allow_private }))
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the name itself, past our check.
            .no_proxy()
            .timeout(Duration::from_millis(TIMEOUT_MS.unsigned_abs()))
            .user_agent(concat!("docreview-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(HttpTransport {
            client,
            allow_private,
        })
    }

    /// The url, when its scheme is allowed; an address written in it is checked here (reqwest
    /// resolves only names).
    fn parse(&self, url: &str) -> Result<Url, String> {
        let parsed = Url::parse(url).map_err(|error| format!("not a URL ({error})"))?;
        match parsed.scheme() {
            "https" => {}
            "http" if self.allow_private => {}
            "http" => {
                return Err(
                    "use https:// (http:// only when DOCREVIEW_WEBHOOK_ALLOW_PRIVATE=true)".into(),
                );
            }
            other => return Err(format!("the scheme `{other}` is not https")),
        }
        if let Some(ip) = literal_address(&parsed) {
            check(self.allow_private, ip)?;
        } else if parsed.host_str().is_none_or(str::is_empty) {
            return Err("the URL names no host".into());
        }
        Ok(parsed)
    }
}

/// The address a URL names in place of a host name.
fn literal_address(url: &Url) -> Option<IpAddr> {
    let host = url.host_str()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

fn check(allow_private: bool, ip: IpAddr) -> Result<(), String> {
    match forbidden_range(ip) {
        Some(range) if !allow_private => Err(format!(
            "{ip} is a {range} address; webhooks go to public addresses only"
        )),
        _ => Ok(()),
    }
}

/// Resolves a name and refuses it when any of its addresses is in a refused range (a name
/// that mixes public and private addresses could be steered to the private one).
async fn resolve(allow_private: bool, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let addresses: Vec<SocketAddr> = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::lookup_host((host, port)),
    )
    .await
    .map_err(|_| format!("resolving {host} took too long"))?
    .map_err(|error| format!("{host} does not resolve ({error})"))?
    .collect();
    if addresses.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    for address in &addresses {
        check(allow_private, address.ip()).map_err(|why| format!("{host} resolves to {why}"))?;
    }
    Ok(addresses)
}

struct CheckedResolver {
    allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port on the addresses it is given.
            let addresses = resolve(allow_private, &host, 0).await?;
            let addresses: Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

#[async_trait::async_trait]
impl WebhookTransport for HttpTransport {
    async fn check(&self, url: &str) -> Result<(), String> {
        let parsed = self.parse(url)?;
        if !self.allow_private
            && literal_address(&parsed).is_none()
            && let Some(host) = parsed.host_str()
        {
            resolve(false, host, parsed.port_or_known_default().unwrap_or(443)).await?;
        }
        Ok(())
    }

    async fn send(&self, request: WebhookRequest) -> WebhookAnswer {
        let url = match self.parse(&request.url) {
            Ok(url) => url,
            Err(why) => return WebhookAnswer::Unreachable(why),
        };
        let mut builder = self.client.post(url).body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        match builder.send().await {
            Ok(response) => WebhookAnswer::Status {
                status: response.status().as_u16(),
                retry_after: response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(retry_after),
            },
            Err(error) => WebhookAnswer::Unreachable(describe(&error)),
        }
    }
}

/// An error with its causes, without the URL (the webhook names it already).
fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "timed out after 10 s".to_string()
    } else if error.is_connect() {
        "could not connect".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `Retry-After`: seconds, or an HTTP date (as a delay from now).
fn retry_after(value: &str) -> Option<Millis> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<i64>() {
        return Some(seconds.max(0).saturating_mul(1_000));
    }
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let at = time::PrimitiveDateTime::parse(value, format)
        .ok()?
        .assume_utc();
    let delay = at - time::OffsetDateTime::now_utc();
    Some(i64::try_from(delay.whole_milliseconds()).ok()?.max(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        assert_eq!(retry_after("3"), Some(3_000));
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0));
        assert_eq!(retry_after("soon"), None);
    }

    #[tokio::test]
    async fn refused_addresses_and_schemes() {
        let transport = HttpTransport::new(false).unwrap();
        for url in [
            "https://127.0.0.1/hook",
            "https://10.0.0.8/hook",
            "https://[::1]/hook",
            "http://93.184.216.34/hook",
            "https://localhost/hook",
            "ftp://example.com/",
            "not a url",
        ] {
            assert!(transport.check(url).await.is_err(), "{url}");
        }
        let open = HttpTransport::new(true).unwrap();
        assert!(open.check("http://127.0.0.1:9/hook").await.is_ok());
    }
}
