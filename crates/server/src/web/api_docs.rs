//! `/api/docs`: the API contract (`/api/openapi.json`) in the vendored Swagger UI, for anyone,
//! with a way back to the app.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::routing::get;

use crate::AppState;
use crate::web::assets;
use crate::web::paths;

#[derive(Template, WebTemplate)]
#[template(path = "api_docs.html")]
struct ApiDocs {
    swagger_css: String,
    swagger_js: String,
    init_js: String,
    /// The link back to the app, in the app's look (Swagger UI styles the rest).
    page_css: String,
    favicon: String,
}

pub fn router() -> Router<AppState> {
    Router::new().route(paths::route::api_docs, get(page))
}

async fn page() -> ApiDocs {
    ApiDocs {
        swagger_css: assets::url("vendor/swagger-ui/swagger-ui.css"),
        swagger_js: assets::url("vendor/swagger-ui/swagger-ui-bundle.js"),
        init_js: assets::url("js/api-docs.js"),
        page_css: assets::url("css/api-docs.css"),
        favicon: assets::url("favicon.svg"),
    }
}
