//! The black-box suite: the real `docreview` binary driven over HTTP, the command line, MCP and a
//! browser, one module per area. One test binary, so the harness (`support`) and the dependencies
//! are compiled and linked once rather than once per file.
//!
//! `cargo test -p docreview --test blackbox` runs it on SQLite; with
//! `DOCREVIEW_TEST_DATABASE_URL=postgres://…` every server gets a fresh PostgreSQL database
//! instead (see `support`). Filter by module: `cargo test -p docreview --test blackbox comments::`.

mod support;

mod account;
mod authorization_matrix;
mod browser;
mod cli;
mod client;
mod clock;
mod comments;
mod connections;
mod durability;
mod events;
mod health;
mod invitations;
mod mail;
mod manage;
mod mcp;
mod notifications;
mod operations;
mod org;
mod projects;
mod reading;
mod reviews;
mod reviews_content;
mod reviews_errors;
mod reviews_export;
mod reviews_import;
mod reviews_list;
mod routes;
mod runs;
mod search;
mod smoke;
mod suggestions;
mod thread_revisions;
mod two_nodes;
mod web;
mod webhooks;
mod workflow;
