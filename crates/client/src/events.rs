//! The document's event stream (Server-Sent Events), read as typed events.

use docreview_api::events::ReviewEvent;
use futures_util::StreamExt;

use crate::{Error, Result};

/// The events of one document, `review` first (its current revisions), then each change as it
/// is committed. Ends when the server closes the stream.
pub struct EventStream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl EventStream {
    pub(crate) fn new(response: reqwest::Response) -> Self {
        EventStream {
            body: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event, or `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<Result<ReviewEvent>> {
        loop {
            if let Some(frame) = self.take_frame() {
                match parse(&frame) {
                    Some(event) => return Some(event),
                    // A comment (keep-alive) or a frame without data.
                    None => continue,
                }
            }
            match self.body.next().await? {
                Ok(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Err(error) => return Some(Err(Error::transport(error))),
            }
        }
    }

    /// One complete frame (up to a blank line) out of the buffer.
    fn take_frame(&mut self) -> Option<String> {
        let normalized = self.buffer.replace("\r\n", "\n");
        let end = normalized.find("\n\n")?;
        let frame = normalized[..end].to_string();
        self.buffer = normalized[end + 2..].to_string();
        Some(frame)
    }
}

/// The event a frame carries: its `data` lines, joined, as JSON.
fn parse(frame: &str) -> Option<Result<ReviewEvent>> {
    let data: Vec<&str> = frame
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|value| value.strip_prefix(' ').unwrap_or(value))
        .collect();
    if data.is_empty() {
        return None;
    }
    Some(serde_json::from_str(&data.join("\n")).map_err(|error| Error::Decode(error.to_string())))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn frames_become_events_and_comments_are_skipped() {
        assert!(parse(": keep-alive").is_none());
        let event = parse(
            "event: comments\ndata: {\"kind\":\"comments\",\"reviewId\":\"rv_1\",\"commentsRevision\":3,\
             \"structureRevision\":1,\"latestVersionId\":\"ver_1\",\"changeSeq\":9}",
        );
        let event = event.and_then(Result::ok).expect("an event");
        assert_eq!(event.comments_revision, 3);
        assert!(matches!(parse("data: not json"), Some(Err(_))));
    }
}
