//! Browser tests of the web app, in real headless Chromium driven through Debian's chromedriver:
//! each test starts a fresh server, acts as a person would, and asserts on what the page shows
//! and on the state read back through the API. One binary, one chromedriver (`web/harness.rs`).

#[path = "support/mod.rs"]
mod support;

#[path = "web/harness.rs"]
mod harness;

#[path = "web/auth.rs"]
mod auth;

#[path = "web/pages.rs"]
mod pages;

#[path = "web/review.rs"]
mod review;

#[path = "web/demo.rs"]
mod demo;

#[path = "web/live.rs"]
mod live;

#[path = "web/anchoring.rs"]
mod anchoring;

#[path = "web/hostile.rs"]
mod hostile;

#[path = "web/bench.rs"]
mod bench;

#[path = "web/documents.rs"]
mod documents;

#[path = "web/account.rs"]
mod account;

#[path = "web/org.rs"]
mod org;

#[path = "web/api_docs.rs"]
mod api_docs;
