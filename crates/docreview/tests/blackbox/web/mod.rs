//! Browser tests of the web app, in real headless Chromium driven through Debian's chromedriver:
//! each test starts a fresh server, acts as a person would, and asserts on what the page shows
//! and on the state read back through the API. One chromedriver for all of them (`harness.rs`).

mod account;
mod anchoring;
mod api_docs;
mod auth;
mod bench;
mod commenting;
mod demo;
mod documents;
mod everyday;
mod harness;
mod hostile;
mod inbox;
mod invitations;
mod live;
mod look;
mod markdown;
mod org;
mod pages;
mod review;
mod screen;
mod settings;
mod share;
mod updates;
mod webhooks;
mod workflow;
