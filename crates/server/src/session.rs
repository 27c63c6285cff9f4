//! Browser sessions on the HTTP side: the cookie, and the cross-site request check that every
//! cookie-authenticated write must pass (DESIGN.md §2).

use axum::http::{HeaderMap, HeaderValue, Method, header};
use docreview_core::identity;

/// The session cookie's name.
pub const COOKIE: &str = "docreview_session";
/// The header a script may send the session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// How the web side is reached, for cookies and origin checks.
#[derive(Debug, Clone, Default)]
pub struct WebSettings {
    /// `scheme://host[:port]` of `DOCREVIEW_PUBLIC_URL`, when one is configured.
    pub public_origin: Option<String>,
    /// Mark cookies `Secure` (the public URL is https).
    pub secure_cookies: bool,
}

impl WebSettings {
    /// Settings for a service reached at `public_url` (e.g. `https://review.example.com/`).
    pub fn for_public_url(public_url: Option<&str>) -> Self {
        let public_origin = public_url.and_then(origin_of);
        let secure_cookies = public_origin
            .as_deref()
            .is_some_and(|origin| origin.starts_with("https://"));
        WebSettings {
            public_origin,
            secure_cookies,
        }
    }

    /// `Set-Cookie` for a new session lasting `max_age_secs`.
    pub fn session_cookie(&self, value: &str, max_age_secs: i64) -> HeaderValue {
        self.cookie(&format!("{COOKIE}={value}; Max-Age={max_age_secs}"))
    }

    /// `Set-Cookie` that removes the session cookie.
    pub fn cleared_cookie(&self) -> HeaderValue {
        self.cookie(&format!("{COOKIE}=; Max-Age=0"))
    }

    fn cookie(&self, start: &str) -> HeaderValue {
        let secure = if self.secure_cookies { "; Secure" } else { "" };
        HeaderValue::from_str(&format!("{start}; Path=/; HttpOnly; SameSite=Lax{secure}"))
            .unwrap_or_else(|_| HeaderValue::from_static("docreview_session=; Max-Age=0"))
    }

    /// Whether a request comes from a page of this service: its `Origin` (or, lacking one, its
    /// `Referer`) is the public origin or the origin of the `Host` it was sent to.
    pub fn is_same_origin(&self, headers: &HeaderMap) -> bool {
        let claimed = headers
            .get(header::ORIGIN)
            .or_else(|| headers.get(header::REFERER))
            .and_then(|value| value.to_str().ok())
            .and_then(origin_of);
        let Some(claimed) = claimed else {
            return false;
        };
        if self.public_origin.as_deref() == Some(claimed.as_str()) {
            return true;
        }
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok());
        host.is_some_and(|host| {
            claimed == format!("http://{host}") || claimed == format!("https://{host}")
        })
    }

    /// The CSRF rule for a cookie-authenticated request: safe methods pass; writes need the
    /// session's token in `X-CSRF-Token` or a same-origin `Origin`.
    pub fn passes_csrf(&self, method: &Method, headers: &HeaderMap, cookie_value: &str) -> bool {
        if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
            return true;
        }
        let token_matches = headers
            .get(CSRF_HEADER)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|token| identity::csrf_matches(cookie_value, token));
        token_matches || self.is_same_origin(headers)
    }
}

/// The session cookie's value, if the request carries one.
pub fn cookie_value(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == COOKIE && !value.is_empty())
        .map(|(_, value)| value)
}

/// `scheme://host[:port]` of a URL, lower-cased; `None` for anything else (including `null`).
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    Some(format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                *name,
                HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static("")),
            );
        }
        map
    }

    #[test]
    fn reads_the_session_cookie_among_others() {
        let map = headers(&[("cookie", "a=1; docreview_session=drs_x; b=2")]);
        assert_eq!(cookie_value(&map), Some("drs_x"));
        assert_eq!(
            cookie_value(&headers(&[("cookie", "docreview_session=")])),
            None
        );
        assert_eq!(cookie_value(&HeaderMap::new()), None);
    }

    #[test]
    fn same_origin_follows_public_url_or_host() {
        let web = WebSettings::for_public_url(Some("https://Review.example.com/base"));
        assert!(web.secure_cookies);
        assert!(web.is_same_origin(&headers(&[("origin", "https://review.example.com")])));
        assert!(!web.is_same_origin(&headers(&[("origin", "https://evil.example")])));
        assert!(!web.is_same_origin(&headers(&[("origin", "null")])));
        let local = WebSettings::for_public_url(None);
        let from_page = headers(&[
            ("origin", "http://127.0.0.1:8080"),
            ("host", "127.0.0.1:8080"),
        ]);
        assert!(local.is_same_origin(&from_page));
        let referred = headers(&[
            ("referer", "http://127.0.0.1:8080/cli-login?x=1"),
            ("host", "127.0.0.1:8080"),
        ]);
        assert!(local.is_same_origin(&referred));
        let cross = headers(&[
            ("origin", "http://127.0.0.1:9999"),
            ("host", "127.0.0.1:8080"),
        ]);
        assert!(!local.is_same_origin(&cross));
    }

    #[test]
    fn writes_need_the_token_or_same_origin() {
        let web = WebSettings::default();
        let token = identity::csrf_token("drs_value");
        assert!(web.passes_csrf(&Method::GET, &HeaderMap::new(), "drs_value"));
        assert!(!web.passes_csrf(&Method::POST, &HeaderMap::new(), "drs_value"));
        assert!(web.passes_csrf(
            &Method::POST,
            &headers(&[("x-csrf-token", &token)]),
            "drs_value"
        ));
        assert!(!web.passes_csrf(
            &Method::POST,
            &headers(&[("x-csrf-token", &token)]),
            "drs_other"
        ));
    }
}
