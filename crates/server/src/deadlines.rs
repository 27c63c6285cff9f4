//! Deadlines a slow or stalled client cannot stretch: a request's body must arrive whole within
//! a fixed time from its head (a deadline that restarted with every byte let one byte a minute
//! hold a connection forever), and an answer's bytes must keep leaving (a client that never
//! reads would otherwise hold its connection, and a slot of the connection cap, forever).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body that fails once its deadline passes, however steadily bytes trickle in.
pub struct BodyDeadline<B> {
    inner: B,
    deadline: Pin<Box<Sleep>>,
    limit: Duration,
}

impl<B> BodyDeadline<B> {
    /// `inner`, which must arrive whole within `limit` from now (when the head was read).
    pub fn new(inner: B, limit: Duration) -> Self {
        BodyDeadline {
            inner,
            deadline: Box::pin(tokio::time::sleep(limit)),
            limit,
        }
    }
}

/// The error a body's reader gets when its deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {} s", .0.as_secs())]
pub struct BodyTooSlow(Duration);

impl<B> Body for BodyDeadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(BodyTooSlow(self.limit)))));
        }
        Pin::new(&mut self.inner)
            .poll_frame(cx)
            .map(|frame| frame.map(|frame| frame.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A connection's stream whose writes fail once the client has taken none of its bytes for
/// `limit`: hyper then closes the connection. Time spent with nothing to write (a keep-alive
/// idle, an event stream between events) does not count; only a write that cannot proceed.
pub struct StalledWrites<S> {
    inner: S,
    limit: Duration,
    /// Set while a write waits for room; cleared whenever a write goes through.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> StalledWrites<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        StalledWrites {
            inner,
            limit,
            stalled: None,
        }
    }

    /// What a write that went nowhere means: wait on, or give up once the stall is too long.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + limit)));
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client took none of the answer in time",
            )));
        }
        Poll::Pending
    }

    fn progress<T>(
        &mut self,
        cx: &mut Context<'_>,
        outcome: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        match outcome {
            Poll::Pending => self.pending(cx),
            ready @ Poll::Ready(_) => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StalledWrites<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StalledWrites<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progress(cx, outcome)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let outcome = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.progress(cx, outcome)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let outcome = Pin::new(&mut self.inner).poll_flush(cx);
        self.progress(cx, outcome)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let outcome = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.progress(cx, outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test(start_paused = true)]
    async fn a_write_nobody_takes_fails_after_the_limit_and_progress_resets_it() {
        let (server, mut client) = tokio::io::duplex(8);
        let mut stream = StalledWrites::new(server, Duration::from_secs(5));
        stream.write_all(b"12345678").await.expect("room for 8");
        // The client reads now and then: every write gets through, however long it all takes.
        let reader = tokio::spawn(async move {
            let mut buf = [0u8; 8];
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_secs(4)).await;
                tokio::io::AsyncReadExt::read_exact(&mut client, &mut buf)
                    .await
                    .expect("read");
            }
            client
        });
        for _ in 0..3 {
            stream.write_all(b"abcdefgh").await.expect("a slow reader");
        }
        let _client = reader.await.expect("reader");
        // Then it stops reading: the next write that finds no room fails after the limit.
        let started = Instant::now();
        let error = stream.write_all(b"stalled!").await.expect_err("stalled");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_must_arrive_whole_by_its_deadline() {
        let (sender, body) = http_body_channel();
        let mut body = BodyDeadline::new(body, Duration::from_secs(10));
        let feeder = tokio::spawn(async move {
            for _ in 0..20 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                if sender.send(Bytes::from_static(b"x")).await.is_err() {
                    return;
                }
            }
        });
        let mut frames = 0;
        let error = loop {
            match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                Some(Ok(_)) => frames += 1,
                Some(Err(error)) => break error,
                None => panic!("the body ended"),
            }
        };
        assert!(error.is::<BodyTooSlow>(), "{error}");
        assert!(frames < 10, "{frames} frames arrived after the deadline");
        feeder.abort();
    }

    /// A body fed by a channel, one frame per message.
    fn http_body_channel() -> (
        tokio::sync::mpsc::Sender<Bytes>,
        impl Body<Data = Bytes, Error = std::convert::Infallible> + Unpin,
    ) {
        let (sender, receiver) = tokio::sync::mpsc::channel(1);
        let stream = tokio_stream_of(receiver);
        (sender, http_body_util::StreamBody::new(stream))
    }

    fn tokio_stream_of(
        mut receiver: tokio::sync::mpsc::Receiver<Bytes>,
    ) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, std::convert::Infallible>> + Unpin
    {
        Box::pin(futures_util::stream::poll_fn(move |cx| {
            receiver
                .poll_recv(cx)
                .map(|item| item.map(|bytes| Ok(Frame::data(bytes))))
        }))
    }
}
