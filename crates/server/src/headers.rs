//! Security headers: one layer for every response, with one policy per kind of response.
//!
//! A handler (or a router's layer) names the kind by putting a [`Policy`] into the response's
//! extensions; the layer then writes that kind's headers. A response that names none is treated
//! as an API answer, the strictest kind, so a forgotten tag never loosens anything.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The kinds of response this server sends, each with its own headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// JSON answers (and anything untagged): never rendered, never framed, never cached.
    Api,
    /// The web app's own pages: scripts and styles from this origin only, no inline code.
    Page,
    /// Content-hashed static files (CSS, scripts): cacheable; the handler sets how long.
    Asset,
    /// A version's HTML for downloads and API clients: `sandbox`, so nothing in it runs.
    Bundle,
    /// A version's HTML for the review screen's frame (issue 8, "Showing untrusted HTML"): the
    /// app may reach its DOM to draw highlights (`allow-same-origin`), its scripts never run.
    DocumentView,
}

/// The page policy. `frame-src 'self'` admits the document frame; `connect-src 'self'` the
/// app's own requests and event stream; no `'unsafe-inline'` anywhere, so a `<script>` or a
/// `style` attribute that slipped into a page would not run.
const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/// Exactly the policy issue 8 prescribes for the document frame.
pub const DOCUMENT_VIEW_CSP: &str = "sandbox allow-same-origin; default-src 'none'; \
     script-src 'none'; object-src 'none'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self' data:; form-action 'none'; base-uri 'none'; \
     frame-ancestors 'self'";

impl Policy {
    /// The headers of this kind. `set` overwrites; `default` keeps what a handler chose.
    fn apply(self, headers: &mut HeaderMap) {
        let mut set = |name: HeaderName, value: &'static str| {
            headers.insert(name, HeaderValue::from_static(value));
        };
        set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
        match self {
            Policy::Api => {
                set(header::REFERRER_POLICY, "no-referrer");
                set(header::X_FRAME_OPTIONS, "DENY");
                set(
                    header::CONTENT_SECURITY_POLICY,
                    "default-src 'none'; frame-ancestors 'none'",
                );
            }
            Policy::Page => {
                set(header::REFERRER_POLICY, "same-origin");
                set(header::X_FRAME_OPTIONS, "DENY");
                set(header::CONTENT_SECURITY_POLICY, PAGE_CSP);
                set(
                    HeaderName::from_static("cross-origin-opener-policy"),
                    "same-origin",
                );
            }
            Policy::Asset => {
                set(
                    HeaderName::from_static("cross-origin-resource-policy"),
                    "same-origin",
                );
                set(header::CONTENT_SECURITY_POLICY, "default-src 'none'");
            }
            Policy::Bundle => {
                set(header::REFERRER_POLICY, "no-referrer");
                set(header::X_FRAME_OPTIONS, "SAMEORIGIN");
                set(header::CONTENT_SECURITY_POLICY, "sandbox");
            }
            Policy::DocumentView => {
                set(header::REFERRER_POLICY, "no-referrer");
                set(header::X_FRAME_OPTIONS, "SAMEORIGIN");
                set(header::CONTENT_SECURITY_POLICY, DOCUMENT_VIEW_CSP);
            }
        }
        let cache = match self {
            Policy::Api | Policy::Page => "no-store",
            Policy::Asset => "no-cache",
            Policy::Bundle | Policy::DocumentView => "private, no-cache",
        };
        headers
            .entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static(cache));
    }
}

/// The layer: writes the headers of the response's policy (API when it names none).
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let policy = response
        .extensions()
        .get::<Policy>()
        .copied()
        .unwrap_or(Policy::Api);
    policy.apply(response.headers_mut());
    response
}

/// A router layer naming `policy` for every response that has not named one itself.
pub async fn tag(policy: Policy, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if response.extensions().get::<Policy>().is_none() {
        response.extensions_mut().insert(policy);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers_of(policy: Policy) -> HeaderMap {
        let mut headers = HeaderMap::new();
        policy.apply(&mut headers);
        headers
    }

    #[test]
    fn each_kind_gets_its_policy() {
        let csp = |p| {
            headers_of(p)
                .get(header::CONTENT_SECURITY_POLICY)
                .and_then(|v| v.to_str().ok().map(str::to_string))
                .unwrap_or_default()
        };
        assert_eq!(csp(Policy::Bundle), "sandbox");
        assert!(csp(Policy::Page).contains("script-src 'self'"));
        assert!(!csp(Policy::Page).contains("unsafe"));
        assert!(csp(Policy::DocumentView).starts_with("sandbox allow-same-origin;"));
        assert!(!csp(Policy::DocumentView).contains("allow-scripts"));
        assert!(csp(Policy::Api).contains("frame-ancestors 'none'"));
        for policy in [
            Policy::Api,
            Policy::Page,
            Policy::Asset,
            Policy::Bundle,
            Policy::DocumentView,
        ] {
            assert_eq!(
                headers_of(policy).get(header::X_CONTENT_TYPE_OPTIONS),
                Some(&HeaderValue::from_static("nosniff"))
            );
        }
    }

    #[test]
    fn handlers_keep_their_cache_lifetime() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
        Policy::Asset.apply(&mut headers);
        assert_eq!(
            headers.get(header::CACHE_CONTROL),
            Some(&HeaderValue::from_static(
                "public, max-age=31536000, immutable"
            ))
        );
    }
}
