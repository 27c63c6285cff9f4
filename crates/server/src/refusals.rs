//! hyper's own refusals with the JSON error body. hyper answers a request it cannot parse (a
//! garbled request line, a target over 64 KiB, more than 400 headers) by itself, before any
//! service runs: a status line and `content-length: 0`. Every other refusal of this server is
//! the JSON error body, so a connection's writes pass through [`JsonRefusals`], which puts that
//! body in when the connection's first answer is such a bodiless refusal.
//!
//! Only the first answer of a connection is looked at: later answers follow requests the server
//! read, and their first write may be any bytes of a body. A parse error after earlier
//! requests on the same keep-alive connection still gets hyper's empty answer.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::error::error_body;

/// The refusals hyper writes itself, by status line, with the error code each gets.
const HYPER_REFUSALS: [(&str, http::StatusCode, &str); 3] = [
    (
        "HTTP/1.1 400 Bad Request\r\n",
        http::StatusCode::BAD_REQUEST,
        "invalid_request",
    ),
    (
        "HTTP/1.1 414 URI Too Long\r\n",
        http::StatusCode::URI_TOO_LONG,
        "uri_too_long",
    ),
    (
        "HTTP/1.1 431 Request Header Fields Too Large\r\n",
        http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "headers_too_large",
    ),
];

/// A connection's stream, whose first answer gets the JSON error body when hyper wrote it.
pub struct JsonRefusals<S> {
    inner: S,
    /// No byte written yet: the next write starts the connection's first answer.
    first: bool,
    /// The replacement answer's bytes not yet written.
    pending: Vec<u8>,
}

impl<S> JsonRefusals<S> {
    pub fn new(inner: S) -> Self {
        JsonRefusals {
            inner,
            first: true,
            pending: Vec::new(),
        }
    }
}

/// The JSON answer for `head`, when `head` is one of hyper's bodiless refusals, whole.
fn json_refusal(head: &[u8]) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(head).ok()?;
    let (status_line, status, code) = HYPER_REFUSALS
        .into_iter()
        .find(|(line, _, _)| head.starts_with(line))?;
    let bodiless = head.ends_with("\r\n\r\n")
        && head
            .lines()
            .any(|line| line.eq_ignore_ascii_case("content-length: 0"));
    if !bodiless {
        return None;
    }
    let message = match code {
        "uri_too_long" => "the request target is longer than the server reads",
        "headers_too_large" => "the request has more header lines than the server reads",
        _ => "the request could not be read as HTTP/1.1",
    };
    let body = serde_json::to_vec(&error_body(status, code, message)).ok()?;
    let mut answer = format!(
        "{status_line}content-type: application/json\r\ncontent-length: {}\r\n\
         x-content-type-options: nosniff\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    Some(answer)
}

impl<S: AsyncWrite + Unpin> JsonRefusals<S> {
    /// Writes what is left of a replacement answer.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }

    /// Takes `head` as written when it is hyper's refusal, queueing the JSON answer instead.
    fn replaced(&mut self, head: &[u8]) -> bool {
        if !std::mem::take(&mut self.first) {
            return false;
        }
        match json_refusal(head) {
            Some(answer) => {
                self.pending = answer;
                true
            }
            None => false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonRefusals<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonRefusals<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if self.replaced(buf) {
            // Reported written whole; the replacement goes out now or on the next flush.
            let _ = self.poll_pending(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        // hyper writes a response's head as the first slice; a refusal has no other.
        if let [head] = bufs
            && self.replaced(head)
        {
            let _ = self.poll_pending(cx)?;
            return Poll::Ready(Ok(head.len()));
        }
        self.first = false;
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::json_refusal;

    #[test]
    fn only_hypers_bodiless_refusals_are_replaced() {
        let hyper = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Wed, 25 Nov 2026 17:00:00 GMT\r\n\r\n";
        let answer = String::from_utf8(json_refusal(hyper).expect("replaced")).expect("utf8");
        let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(body["error"], "invalid_request");
        assert_eq!(body["status"], 400);

        // The server's own answers, and a head not yet whole, go out as they are.
        let own = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 61\r\n\r\n";
        assert!(json_refusal(own).is_none());
        assert!(json_refusal(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
        assert!(json_refusal(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
