//! The document's event stream (Server-Sent Events), read as typed events.

use docreview_api::events::ReviewEvent;
use futures_util::StreamExt;

use crate::{Error, Result};

/// The events of one document, `review` first (its current revisions), then each change as it
/// is committed. Ends when the server closes the stream.
pub struct EventStream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    /// Bytes received and not yet parsed: kept as bytes, since a chunk may end inside a
    /// character.
    buffer: Vec<u8>,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl EventStream {
    pub(crate) fn new(response: reqwest::Response) -> Self {
        EventStream {
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
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
                Ok(chunk) => self.buffer.extend_from_slice(&chunk),
                Err(error) => return Some(Err(Error::transport(error))),
            }
        }
    }

    /// One complete frame (up to a blank line, `\n\n` or `\r\n\r\n`) out of the buffer.
    fn take_frame(&mut self) -> Option<String> {
        let (end, separator) = [&b"\n\n"[..], b"\r\n\r\n"]
            .into_iter()
            .filter_map(|separator| {
                let at = self
                    .buffer
                    .windows(separator.len())
                    .position(|w| w == separator)?;
                Some((at, separator.len()))
            })
            .min()?;
        let frame: Vec<u8> = self.buffer.drain(..end + separator).take(end).collect();
        Some(String::from_utf8_lossy(&frame).replace("\r\n", "\n"))
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
    use super::{EventStream, parse};
    use futures_util::StreamExt;

    /// A character split across two chunks arrives whole.
    #[tokio::test]
    async fn a_character_split_across_chunks_is_kept() {
        let frame = "data: {\"kind\":\"comments\",\"reviewId\":\"rv_é\",\"commentsRevision\":1,\
                     \"structureRevision\":1,\"latestVersionId\":\"ver_1\",\"changeSeq\":2}\r\n\r\n";
        let bytes = frame.as_bytes();
        let split = frame.find('é').expect("é") + 1; // inside the two bytes of `é`
        let chunks = vec![
            Ok(bytes::Bytes::copy_from_slice(&bytes[..split])),
            Ok(bytes::Bytes::copy_from_slice(&bytes[split..])),
        ];
        let mut stream = EventStream {
            body: futures_util::stream::iter(chunks).boxed(),
            buffer: Vec::new(),
        };
        let event = stream.next().await.expect("an event").expect("parsed");
        assert_eq!(event.review_id, "rv_é");
        assert!(stream.next().await.is_none());
    }

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
