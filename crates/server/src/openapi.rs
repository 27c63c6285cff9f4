//! The machine-readable contract: an OpenAPI 3.1 document built from the route table itself.
//!
//! Each handler carries its `#[utoipa::path]` (path, method, parameters, bodies, its success
//! answers and the conflicts only it can give); `routes::allow` adds, per operation class, the
//! schemes and scope that may call it (`secure`), from the same rule that enforces them; and
//! `complete` adds what every operation shares: the error answers, the version headers.
//! Served at `/api/openapi.json` and committed as `docs/openapi.json` (a test keeps the two equal).

use std::sync::LazyLock;

use docreview_core::access::Operation;
use docreview_core::model::SharedKind;
use utoipa::OpenApi;
use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::path::{Operation as PathOperation, ParameterBuilder, ParameterIn, PathItem};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    Content, KnownFormat, Object, OpenApi as Document, Ref, RefOr, Required, ResponseBuilder,
    Schema, SchemaFormat, Type,
};

use crate::error::ErrorBody;
use crate::middleware::API_VERSION;
use crate::session;

/// The extension naming an operation's class (DESIGN.md §2), e.g. `"x-cr-operation": "comment"`.
const OPERATION_EXTENSION: &str = "x-cr-operation";
const API_VERSION_HEADER: &str = "x-cr-api-version";
const TOKEN_EXPIRES_HEADER: &str = "x-cr-token-expires-at";
const REQUEST_ID_HEADER: &str = "x-request-id";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "docreview",
        description = "Review HTML documents with people and agents: versions, comments anchored \
            to the text, replies, resolve and reopen, agent runs, sharing, projects and the \
            organization.\n\nEvery answer carries `x-cr-api-version`; a request may send it too, \
            and an unknown version is refused with 400. Errors are the JSON error body \
            (`ErrorBody`): branch on `error`, show `message`.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(ErrorBody)),
    tags(
        (name = "reviews", description = "Documents and their versions"),
        (name = "comments", description = "Comments, replies, resolve and reopen"),
        (name = "runs", description = "Agent review runs"),
        (name = "manage", description = "Title, tags, archive, sharing, ownership, deletion"),
        (name = "search", description = "Full-text search over what the caller can see"),
        (name = "account", description = "The caller's profile and personal tokens"),
        (name = "notifications", description = "Mentions and notifications, read and live"),
        (name = "projects", description = "Projects, their roles and documents"),
        (name = "org", description = "Organization members and administrators"),
        (name = "webhooks", description = "Webhooks (Standard Webhooks): registration, secrets, deliveries"),
        (name = "health", description = "Liveness and readiness, without credentials"),
    )
)]
struct Contract;

/// The document without paths: info, the error schema and answers, the security schemes.
pub fn base() -> Document {
    let mut document = Contract::openapi();
    document.info.version = API_VERSION.to_string();
    let components = document.components.get_or_insert_with(Default::default);
    for kind in SharedKind::ALL {
        components.security_schemes.insert(
            shared_scheme(*kind),
            RefOr::T(SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(format!(
                        "The shared {kind} token, configured on the server (DOCREVIEW_{}_TOKEN).",
                        kind.as_str().to_uppercase()
                    )))
                    .build(),
            )),
        );
    }
    components.security_schemes.insert(
        "personalToken".into(),
        RefOr::T(SecurityScheme::Http(
            Http::builder()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "A personal token (`drp_…`), issued on the account page, by \
                     `docreview auth login` or by an operator. The scopes an operation lists \
                     are the ones the token must hold; it expires 90 days after issue."
                        .to_string(),
                ))
                .build(),
        )),
    );
    components.security_schemes.insert(
        "session".into(),
        RefOr::T(SecurityScheme::ApiKey(ApiKey::Cookie(
            ApiKeyValue::with_description(
                session::COOKIE,
                "A browser session. Writes must also send the session's CSRF token in \
             `X-CSRF-Token` (or come from this site's own pages).",
            ),
        ))),
    );
    for (name, description) in ERROR_ANSWERS {
        components.responses.insert(
            (*name).to_string(),
            RefOr::T(
                ResponseBuilder::new()
                    .description(*description)
                    .content(
                        "application/json",
                        Content::new(Some(Ref::from_schema_name("ErrorBody"))),
                    )
                    .header(API_VERSION_HEADER, version_header())
                    .header(REQUEST_ID_HEADER, request_id_header())
                    .build(),
            ),
        );
    }
    document
}

/// The error answers every operation may give, by component name.
const ERROR_ANSWERS: &[(&str, &str)] = &[
    (
        "InvalidRequest",
        "`invalid_request`: a malformed body, query or parameter",
    ),
    (
        "Unauthorized",
        "`unauthorized`: no usable credential; `reason` says whether it was missing, malformed, \
         unknown, expired, revoked or its holder suspended",
    ),
    (
        "Forbidden",
        "`insufficient_scope` (the token lacks the scope the operation lists), `forbidden` (the \
         credential or the caller's role does not allow it), `project_required` or \
         `project_role_required`",
    ),
    (
        "NotFound",
        "`not_found`: no such document, comment or identifier, or one the caller cannot see; \
         `project_not_found` for a project",
    ),
    (
        "PayloadTooLarge",
        "`payload_too_large`: the body is over the configured limit",
    ),
    (
        "UnsupportedMediaType",
        "`unsupported_media_type`: the body is not of the type the operation reads",
    ),
    (
        "RateLimited",
        "`rate_limited`: too many failed attempts, or writes, from this address or credential; \
         wait for `Retry-After` seconds",
    ),
    (
        "Unavailable",
        "`unavailable`: the database cannot be reached; retry after `Retry-After` seconds",
    ),
];

/// Marks `paths` as operations of class `operation`: who may call them, with which scope.
pub fn secure(paths: &mut utoipa::openapi::path::Paths, operation: Operation) {
    for item in paths.paths.values_mut() {
        for op in operations_mut(item) {
            op.security = Some(requirements(operation));
            op.extensions
                .get_or_insert_with(Default::default)
                .insert(OPERATION_EXTENSION.into(), operation.as_str().into());
        }
    }
}

/// Any one of these credentials may perform `operation` (DESIGN.md §2), as `access::permit`
/// decides: a personal token with the operation's scope, the shared tokens the class accepts,
/// and a browser session unless the class is for agents only.
fn requirements(operation: Operation) -> Vec<SecurityRequirement> {
    let scopes: Vec<&str> = operation
        .scope()
        .map(docreview_api::Scope::as_str)
        .into_iter()
        .collect();
    let mut any_of = vec![SecurityRequirement::new("personalToken", scopes)];
    for kind in SharedKind::ALL {
        if operation.accepts_shared(*kind) {
            any_of.push(SecurityRequirement::new(
                shared_scheme(*kind),
                Vec::<String>::new(),
            ));
        }
    }
    if operation.accepts_session() {
        any_of.push(SecurityRequirement::new("session", Vec::<String>::new()));
    }
    any_of
}

fn shared_scheme(kind: SharedKind) -> String {
    format!("{}Token", kind.as_str())
}

/// Adds to every operation what all share: the optional version header, the error answers it
/// can give (401 and 403 only where credentials are needed; 413 and 415 only where a body is
/// read), and the headers of its successful answers.
pub fn complete(document: &mut Document) {
    for item in document.paths.paths.values_mut() {
        for (writes, op) in operations_by_kind_mut(item) {
            op.parameters.get_or_insert_with(Vec::new).push(RefOr::T(
                ParameterBuilder::new()
                    .name(API_VERSION_HEADER)
                    .parameter_in(ParameterIn::Header)
                    .required(Required::False)
                    .description(Some(
                        "The interface version the client speaks; another is refused with 400.",
                    ))
                    .schema(Some(version_schema()))
                    .build(),
            ));
            let secured = op.security.is_some();
            for response in op.responses.responses.values_mut() {
                if let RefOr::T(response) = response {
                    response
                        .headers
                        .insert(API_VERSION_HEADER.into(), RefOr::T(version_header()));
                    response
                        .headers
                        .insert(REQUEST_ID_HEADER.into(), RefOr::T(request_id_header()));
                    if secured {
                        response
                            .headers
                            .insert(TOKEN_EXPIRES_HEADER.into(), RefOr::T(expiry_header()));
                    }
                }
            }
            let reads_body = op.request_body.is_some();
            let mut answers = vec![
                ("400", "InvalidRequest"),
                ("404", "NotFound"),
                ("503", "Unavailable"),
            ];
            if secured {
                answers.extend([("401", "Unauthorized"), ("403", "Forbidden")]);
            }
            // Failed sign-in attempts are limited per address, and every write per credential
            // and per address (DESIGN.md §4.7).
            if writes || !secured {
                answers.push(("429", "RateLimited"));
            }
            if reads_body {
                answers.extend([("413", "PayloadTooLarge"), ("415", "UnsupportedMediaType")]);
            }
            for (status, name) in answers {
                op.responses
                    .responses
                    .entry(status.to_string())
                    .or_insert_with(|| RefOr::Ref(Ref::from_response_name(name)));
            }
        }
    }
}

fn version_schema() -> Schema {
    Schema::Object(
        Object::builder()
            .schema_type(Type::String)
            .enum_values(Some([API_VERSION]))
            .build(),
    )
}

fn version_header() -> Header {
    HeaderBuilder::new()
        .schema(Some(version_schema()))
        .description(Some("The interface version this server speaks."))
        .build()
}

fn request_id_header() -> Header {
    HeaderBuilder::new()
        .schema(Some(Object::builder().schema_type(Type::String)))
        .description(Some(
            "The request's id: the client's own `x-request-id` when it sent a short token, \
             else a new one; 5xx bodies repeat it as `requestId`.",
        ))
        .build()
}

fn expiry_header() -> Header {
    let schema = Object::builder()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)));
    HeaderBuilder::new()
        .schema(Some(schema))
        .description(Some(
            "When the personal token used expires (only for personal tokens).",
        ))
        .build()
}

fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut PathOperation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.patch,
        &mut item.head,
        &mut item.options,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// Each operation of `item`, with whether its method writes (what the write rate limits count).
fn operations_by_kind_mut(item: &mut PathItem) -> impl Iterator<Item = (bool, &mut PathOperation)> {
    [
        (false, &mut item.get),
        (true, &mut item.put),
        (true, &mut item.post),
        (true, &mut item.delete),
        (true, &mut item.patch),
        (false, &mut item.head),
        (false, &mut item.options),
        (true, &mut item.trace),
    ]
    .into_iter()
    .filter_map(|(writes, op)| op.as_mut().map(|op| (writes, op)))
}

/// The whole contract, as served and committed: built once from the route table.
pub static DOCUMENT: LazyLock<String> = LazyLock::new(|| {
    let document = crate::routes::contract();
    serde_json::to_string_pretty(&document).unwrap_or_else(|_| "{}".to_string())
});

#[cfg(test)]
mod tests {
    use super::DOCUMENT;

    const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

    /// `docs/openapi.json` is the contract the code serves; regenerate it with
    /// `DOCREVIEW_WRITE_OPENAPI=1 cargo test -p docreview-server openapi`.
    #[test]
    fn the_committed_openapi_file_is_what_the_code_serves() {
        let served = format!("{}\n", DOCUMENT.as_str());
        if std::env::var_os("DOCREVIEW_WRITE_OPENAPI").is_some() {
            std::fs::write(COMMITTED, &served).expect("write docs/openapi.json");
        }
        let committed = std::fs::read_to_string(COMMITTED).unwrap_or_default();
        assert!(
            committed == served,
            "docs/openapi.json differs from the contract the code serves; regenerate it with \
             `DOCREVIEW_WRITE_OPENAPI=1 cargo test -p docreview-server openapi` and review the diff"
        );
    }

    /// `docs/api.md` explains every operation of the contract: each method and path appears
    /// there in backticks, whole (`GET /api/me`) or by its end (`PATCH …/title`).
    #[test]
    fn docs_api_md_names_every_operation() {
        let docs = include_str!("../../../docs/api.md");
        let mentioned = mentioned_operations(docs);
        let document: serde_json::Value = serde_json::from_str(&DOCUMENT).expect("JSON");
        let mut missing = Vec::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            let path = without_parameter_names(path);
            for method in item.as_object().expect("item").keys() {
                let method = method.to_uppercase();
                let named = mentioned.iter().any(|(methods, mention)| {
                    methods.contains(&method)
                        && match mention.strip_prefix('…') {
                            Some(end) => path.ends_with(end),
                            None => *mention == path,
                        }
                });
                if !named {
                    missing.push(format!("{method} {path}"));
                }
            }
        }
        assert!(missing.is_empty(), "docs/api.md does not name {missing:?}");
    }

    /// `(methods, path)` for each backticked `METHOD path` (or `PUT`/`DELETE path`), with
    /// parameter names dropped (`{}`) and any query cut off.
    fn mentioned_operations(docs: &str) -> Vec<(Vec<String>, String)> {
        const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
        let spans: Vec<&str> = docs.split('`').collect();
        let mut found = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        // Inside backticks are the odd pieces; a bare method followed by `/` joins the next.
        for index in (1..spans.len()).step_by(2) {
            let span = spans[index].trim();
            if METHODS.contains(&span) {
                pending.push(span.to_string());
                if spans.get(index + 1) != Some(&"/") {
                    pending.clear();
                }
                continue;
            }
            let mut words = span.split_whitespace();
            let (Some(method), Some(path)) = (words.next(), words.next()) else {
                pending.clear();
                continue;
            };
            if METHODS.contains(&method) {
                let path = path.split('?').next().unwrap_or(path);
                pending.push(method.to_string());
                found.push((std::mem::take(&mut pending), without_parameter_names(path)));
            }
            pending.clear();
        }
        found
    }

    /// `/api/reviews/{review_id}` and `/api/reviews/{id}` both as `/api/reviews/{}`.
    fn without_parameter_names(path: &str) -> String {
        let mut out = String::with_capacity(path.len());
        let mut inside = false;
        for c in path.chars() {
            match c {
                '{' => {
                    inside = true;
                    out.push_str("{}");
                }
                '}' => inside = false,
                _ if !inside => out.push(c),
                _ => {}
            }
        }
        out
    }

    #[test]
    fn every_operation_has_a_unique_id_and_a_success_answer() {
        let document: serde_json::Value = serde_json::from_str(&DOCUMENT).expect("JSON");
        let mut ids = std::collections::HashSet::new();
        for (path, item) in document["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("item") {
                let id = operation["operationId"].as_str().unwrap_or_default();
                assert!(
                    ids.insert(id.to_string()),
                    "{method} {path}: operationId `{id}` twice"
                );
                let answers = operation["responses"].as_object().expect("responses");
                assert!(
                    answers.keys().any(|status| status.starts_with('2')),
                    "{method} {path}: no success answer"
                );
            }
        }
    }
}
