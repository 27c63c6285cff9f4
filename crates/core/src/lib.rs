//! Domain types and rules of docreview: who may do what, how comments, runs and versions change,
//! and the `Store` port that each database backend implements. No HTTP and no SQL live here.

pub mod access;
pub mod anchor;
pub mod cache;
pub mod clock;
pub mod error;
pub mod events;
pub mod export;
pub mod handles;
pub mod identity;
pub mod ids;
pub mod import;
pub mod limit;
pub mod mail;
pub mod model;
pub mod outbox;
pub mod service;
pub mod store;
pub mod texts;
pub mod view;

pub use error::{AuthFailure, Error, Result};
pub use service::Service;
