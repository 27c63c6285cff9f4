//! How commands print: text for people (coloured only on a terminal, `NO_COLOR` honoured, by
//! anstream), the API's JSON with `--json`, or what a jq expression picks with `--jq`; and a
//! spinner on standard error while a long call runs.

use std::time::Duration;

use anstyle::{AnsiColor, Style};
use clap::Args;
use docreview_client::Client;
use serde::Serialize;
use serde_json::Value;

use super::jq::JqFilter;
use super::{Failure, Outcome};

#[derive(Args)]
pub struct Output {
    /// Print the API's answer unchanged (the JSON the server sent, every field, e.g. `runs
    /// start --json | jq -r .run.id`) instead of text. `comments list` and `runs list` print
    /// the `comments` and `aiReviewRuns` of the document's answer; `reviews text`, `reviews
    /// open` and `auth login|status` print JSON of their own.
    #[arg(long, global = true)]
    json: bool,
    /// Print what a jq expression picks from that JSON (e.g. `.reviews[].reviewId`); strings
    /// print without quotes.
    #[arg(long, global = true, value_name = "EXPR", value_parser = JqFilter::parse)]
    jq: Option<JqFilter>,
}

impl Output {
    /// Whether JSON is asked for (`--json` or `--jq`) rather than text.
    pub fn wants_json(&self) -> bool {
        self.json || self.jq.is_some()
    }

    /// Prints the API's answer to the client's last call as the server sent it (through `--jq`
    /// when given), else `value` as `text` prints it.
    pub fn answer<T: Serialize>(
        &self,
        client: &Client,
        value: &T,
        text: impl FnOnce(&T),
    ) -> Outcome {
        if !self.wants_json() {
            text(value);
            return Ok(());
        }
        let json = match client.take_answer() {
            Some(bytes) => serde_json::from_slice(&bytes),
            // Every answer is kept (see `signed_in_client`); this is a fallback, not a path.
            None => serde_json::to_value(value),
        }
        .map_err(|e| Failure::error(e.to_string()))?;
        self.print_json(&json)
    }

    /// Prints `value` as JSON (through `--jq` when given), else as `text` prints it: for what a
    /// command composes itself rather than one API answer.
    pub fn show<T: Serialize>(&self, value: &T, text: impl FnOnce(&T)) -> Outcome {
        if self.wants_json() {
            let json = serde_json::to_value(value).map_err(|e| Failure::error(e.to_string()))?;
            self.print_json(&json)
        } else {
            text(value);
            Ok(())
        }
    }

    fn print_json(&self, json: &Value) -> Outcome {
        if let Some(filter) = &self.jq {
            for line in filter.run(json)? {
                println!("{line}");
            }
        } else {
            let text =
                serde_json::to_string_pretty(json).map_err(|e| Failure::error(e.to_string()))?;
            println!("{text}");
        }
        Ok(())
    }
}

/// `count` and the noun, singular for one: "1 comment", "3 comments".
pub fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Ids and other secondary text.
pub const DIM: Style = Style::new().dimmed();
/// Open comments, running runs.
pub const OPEN: Style = AnsiColor::Green.on_default();
/// Resolved comments, finished runs.
pub const CLOSED: Style = AnsiColor::Magenta.on_default();
pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();

/// `text` in `style`; anstream's `println!` drops the style when it should not show.
pub fn paint(style: Style, text: impl std::fmt::Display) -> String {
    format!("{style}{text}{style:#}")
}

/// A spinner with `message` on standard error while the returned guard lives; drawn only on
/// a terminal.
pub fn spinner(message: impl Into<String>) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner().with_message(message.into());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
