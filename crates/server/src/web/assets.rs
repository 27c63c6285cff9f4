//! The app's static files (`crates/server/assets/`: CSS, our ES modules, vendored htmx),
//! compiled into the binary and served under a content-hashed path with a one-year lifetime.
//!
//! We chose rust-embed over memory-serve because our ES modules import each other by relative
//! path: serving every file under one directory named by the hash of the whole set
//! (`/assets/<hash>/js/review/screen.js`) keeps those imports working without a bundler or an
//! import map (an inline import map would need `'unsafe-inline'` scripts), and any change to any
//! file gives every URL a new name. The set is small (well under 100 KB compressed), so
//! fetching it again after an upgrade is cheap. Responses are compressed (gzip or brotli) on the
//! way out by tower-http.

use std::collections::HashMap;
use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::Embed;
use tower_http::compression::CompressionLayer;

use crate::AppState;
use crate::headers::Policy;

#[derive(Embed)]
#[folder = "assets/"]
struct Files;

/// Every file with its media type, and the hash naming the set.
struct Catalog {
    hash: String,
    files: HashMap<String, (&'static str, std::borrow::Cow<'static, [u8]>)>,
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    let mut names: Vec<String> = Files::iter().map(|name| name.to_string()).collect();
    names.sort();
    // The set's hash: the SHA-256 of every file's name and SHA-256, in name order.
    let mut digest_input = Vec::new();
    let mut files = HashMap::new();
    for name in names {
        let Some(file) = Files::get(&name) else {
            continue;
        };
        digest_input.extend_from_slice(name.as_bytes());
        digest_input.push(0);
        digest_input.extend_from_slice(&file.metadata.sha256_hash());
        files.insert(name.clone(), (media_type(&name), file.data));
    }
    let digest = docreview_core::identity::sha256(&digest_input);
    let hash = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    Catalog { hash, files }
});

fn media_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("woff2") => "font/woff2",
        _ => "text/plain; charset=utf-8",
    }
}

/// The URL an asset is served at.
pub fn url(path: &str) -> String {
    format!("/assets/{}/{path}", CATALOG.hash)
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/assets/{hash}/{*path}", get(serve))
        .layer(CompressionLayer::new())
}

async fn serve(Path((hash, path)): Path<(String, String)>) -> Response {
    let catalog = &*CATALOG;
    let found = (hash == catalog.hash)
        .then(|| catalog.files.get(&path))
        .flatten();
    let mut response = match found {
        Some((media_type, bytes)) => {
            let mut response = bytes.clone().into_owned().into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
            headers.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            );
            response
        }
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    response.extensions_mut().insert(Policy::Asset);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_and_htmx_are_embedded() {
        assert!(CATALOG.files.contains_key("css/app.css"));
        assert!(CATALOG.files.contains_key("js/app.js"));
        assert!(CATALOG.files.contains_key("vendor/htmx.min.js"));
        assert!(url("css/app.css").starts_with("/assets/"));
        assert_eq!(media_type("x.js"), "text/javascript; charset=utf-8");
    }
}
