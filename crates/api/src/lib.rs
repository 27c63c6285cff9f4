//! The wire format of the docreview API: every request and answer body, the words they use,
//! and their OpenAPI schemas. The server answers with these types and the client reads them;
//! neither holds the domain's rules (those are in `docreview-core`).

pub mod error;
pub mod events;
pub mod requests;
pub mod schema;
pub mod secret;
pub mod views;
pub mod webhooks;
pub mod wire;
pub mod words;

pub use error::ErrorBody;
pub use requests::*;
pub use views::*;
pub use webhooks::*;
pub use wire::*;
pub use words::*;
