//! How commands print: text for people (coloured only on a terminal, `NO_COLOR` honoured, by
//! anstream), the API's JSON with `--json`, or what a jq expression picks with `--jq`; and a
//! spinner on standard error while a long call runs.

use std::time::Duration;

use anstyle::{AnsiColor, Style};
use clap::Args;
use serde::Serialize;

use super::jq::JqFilter;
use super::{Failure, Outcome};

#[derive(Args)]
pub struct Output {
    /// Print the API's JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Print what a jq expression picks from the JSON (e.g. `.reviews[].reviewId`); strings
    /// print without quotes.
    #[arg(long, global = true, value_name = "EXPR", value_parser = JqFilter::parse)]
    jq: Option<JqFilter>,
}

impl Output {
    /// Prints `value` as JSON (through `--jq` when given), else as `text` prints it.
    pub fn show<T: Serialize>(&self, value: &T, text: impl FnOnce(&T)) -> Outcome {
        if let Some(filter) = &self.jq {
            let json = serde_json::to_value(value).map_err(|e| Failure::error(e.to_string()))?;
            for line in filter.run(&json)? {
                println!("{line}");
            }
        } else if self.json {
            let text =
                serde_json::to_string_pretty(value).map_err(|e| Failure::error(e.to_string()))?;
            println!("{text}");
        } else {
            text(value);
        }
        Ok(())
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
