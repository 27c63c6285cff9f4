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
    /// Print the API's answer unchanged, as JSON (`runs start --json | jq -r .run.id`).
    ///
    /// The JSON the server sent, every field and in its order, indented. `comments list` and
    /// `runs list` print the `comments` and `aiReviewRuns` of the document's answer; `reviews
    /// text`, `reviews open` and `auth login|status` print JSON of their own.
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
        match client.take_answer().map(String::from_utf8) {
            Some(Ok(raw)) => self.print_raw(&raw),
            // Every answer is kept (see `signed_in_client`); this is a fallback, not a path.
            _ => self.show(value, |_| {}),
        }
    }

    /// Prints JSON text as it is (re-indented; keys in their order, numbers as spelled), or
    /// what `--jq` picks from it; else runs `text`.
    pub fn raw(&self, raw: &str, text: impl FnOnce()) -> Outcome {
        if self.wants_json() {
            self.print_raw(raw)
        } else {
            text();
            Ok(())
        }
    }

    fn print_raw(&self, raw: &str) -> Outcome {
        if self.jq.is_some() {
            let json: Value = serde_json::from_str(raw)
                .map_err(|e| Failure::error(format!("unexpected answer from the server: {e}")))?;
            return self.print_json(&json);
        }
        println!("{}", pretty(raw));
        Ok(())
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

/// JSON text indented as `jq .` prints it (two spaces a level, `": "` after keys, empty
/// objects and arrays kept on one line); every other character as it was, so keys keep their
/// order and numbers their spelling.
pub fn pretty(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    let mut depth = 0usize;
    let mut chars = json.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(c) = chars.next() {
                    out.push(c);
                    match c {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '{' | '[' => {
                while chars.next_if(char::is_ascii_whitespace).is_some() {}
                let close = if c == '{' { '}' } else { ']' };
                if chars.next_if_eq(&close).is_some() {
                    out.push(c);
                    out.push(close);
                } else {
                    out.push(c);
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_keeps_every_character_and_the_order_of_keys() {
        let raw = r#"{"z":1,"a":[1.50,{"k":"a \"q\" , : { ["}],"e":{},"f":[ ],"u":"\u00e9\\"}"#;
        let shown = pretty(raw);
        assert_eq!(
            shown,
            "{\n  \"z\": 1,\n  \"a\": [\n    1.50,\n    {\n      \"k\": \"a \\\"q\\\" , : { [\"\n    }\n  ],\n  \"e\": {},\n  \"f\": [],\n  \"u\": \"\\u00e9\\\\\"\n}"
        );
        let again: Value = serde_json::from_str(&shown).expect("still JSON");
        assert_eq!(again, serde_json::from_str::<Value>(raw).expect("JSON"));
        assert_eq!(pretty("[]"), "[]");
        assert_eq!(pretty("\"x\""), "\"x\"");
    }

    #[test]
    fn counts_read_well() {
        assert_eq!(counted(0, "comment"), "0 comments");
        assert_eq!(counted(1, "comment"), "1 comment");
        assert_eq!(counted(2, "run"), "2 runs");
    }
}
