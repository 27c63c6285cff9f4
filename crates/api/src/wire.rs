//! Values that appear inside requests and answers: people, places in a text.

use serde::{Deserialize, Serialize};

use crate::words::{AnchorState, Provider};

/// The public face of a user, as embedded in comments, replies and events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub provider: Provider,
    pub display_name: String,
    /// Their `@handle` (DESIGN.md §8.1): `[a-z0-9][a-z0-9._-]{0,38}`, unique.
    pub handle: String,
}

/// A person a comment or reply mentions (`@handle`), as resolved when it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mention {
    pub user_id: String,
    pub handle: String,
}

/// One heading section of a version, as `dom-context` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Section {
    pub id: String,
    pub level: u8,
    pub text: String,
    pub path: Vec<String>,
    pub start: usize,
    pub end: usize,
}

/// A heading section supplied with `review.structure` for documents without headings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SectionSpec {
    pub id: String,
    #[serde(deserialize_with = "crate::schema::whole::required")]
    #[schema(minimum = 1, maximum = 6)]
    pub level: u8,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Position {
    #[serde(deserialize_with = "crate::schema::whole::required")]
    pub start: usize,
    #[serde(deserialize_with = "crate::schema::whole::required")]
    pub end: usize,
}

/// A W3C-style text quote: the passage and a little context on each side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Quote {
    pub exact: String,
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub suffix: String,
}

/// Where a comment is shown, recomputed whenever the document gets a new body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    pub version_id: String,
    pub section_id: Option<String>,
    pub quote: Option<Quote>,
    pub position: Option<Position>,
    pub state: AnchorState,
}

/// What a client sends to say where a comment belongs (DESIGN.md §4.3).
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Locator {
    pub version_id: Option<String>,
    pub section_id: Option<String>,
    pub quote: Option<Quote>,
    pub position: Option<Position>,
}
