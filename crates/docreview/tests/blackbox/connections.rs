//! What a slow, stalled or many-tabbed client can hold, over raw TCP: a body's deadline is total
//! (bytes trickling in do not stretch it), an answer nobody reads closes its connection, and event
//! streams are counted apart from connections, so plain requests always find room.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{SAMPLE_HTML, Server};

fn address(server: &Server) -> SocketAddr {
    server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("the server's address")
}

/// Reads what the server sent until it closes the connection or `limit` passes.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut answer = Vec::new();
    let closed = tokio::time::timeout(limit, stream.read_to_end(&mut answer))
        .await
        .is_ok();
    (String::from_utf8_lossy(&answer).into_owned(), closed)
}

/// One plain request on a new connection, tried again for a second while the server closes it
/// unanswered (a connection the client just saw end may not have given its slot back yet).
async fn served(address: SocketAddr) -> Option<u16> {
    let started = Instant::now();
    loop {
        let status = plain_request(address).await;
        if status.is_some() || started.elapsed() > Duration::from_secs(1) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One plain request on a new connection; `None` when the server closed it unanswered.
async fn plain_request(address: SocketAddr) -> Option<u16> {
    let mut stream = TcpStream::connect(address).await.ok()?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .ok()?;
    let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    answer.get(9..12)?.parse().ok()
}

/// A body sent one byte every 300 ms keeps arriving, yet it is cut off when the total deadline
/// (2 s here) passes: 400 with the JSON error body, long before the bytes would end.
#[tokio::test]
async fn a_body_that_trickles_in_is_cut_off_at_its_total_deadline() {
    let server = Server::start_with(&[("DOCREVIEW_BODY_TIMEOUT_SECS", "2")]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let token = ada.token().expect("a token").to_string();
    let stream = TcpStream::connect(address(&server)).await.expect("connect");
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "POST /api/reviews HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\
         content-type: application/json\r\ncontent-length: 100\r\n\r\n"
    );
    writer.write_all(head.as_bytes()).await.expect("head");
    let started = Instant::now();
    // 100 bytes, one every 300 ms: 30 s of a body that never stops moving.
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if writer.write_all(b" ").await.is_err() {
                return;
            }
        }
    });
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains('}') {
        let read = tokio::time::timeout(Duration::from_secs(40), reader.read(&mut chunk))
            .await
            .expect("an answer")
            .expect("read");
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&chunk[..read]);
    }
    let elapsed = started.elapsed();
    trickle.abort();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("\"error\":\"invalid_request\""), "{answer}");
    assert!(answer.contains("did not arrive within 2 s"), "{answer}");
    assert!(
        elapsed < Duration::from_secs(6),
        "the deadline stretched with the bytes: answered after {elapsed:?}"
    );
}

/// Two connections ask for answers bigger than any socket buffer and read none of them: with
/// the per-address cap at 2, nobody else from that address is served, until the write
/// deadline (2 s here) closes them.
#[tokio::test]
async fn connections_whose_client_reads_nothing_are_closed_at_the_write_deadline() {
    let server = Server::start_with(&[
        ("DOCREVIEW_WRITE_TIMEOUT_SECS", "2"),
        ("DOCREVIEW_MAX_CONNECTIONS_PER_ADDRESS", "2"),
    ]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let token = ada.token().expect("a token").to_string();
    let paragraph = "<p>A paragraph that is long enough to make the answer weigh a little.</p>";
    let html = format!("<h1>Big</h1>{}", paragraph.repeat(1500));
    let review = ada.upload("Big", &html).await;
    let bundle = format!(
        "GET /api/reviews/{}/versions/{}/bundle HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n",
        review.review_id, review.latest_version_id
    );
    // 100 pipelined requests for ~110 KB each: ~11 MB of answers nobody reads.
    let address = address(&server);
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(4096).expect("small buffer");
        let mut stream = socket.connect(address).await.expect("connect");
        stream
            .write_all(bundle.repeat(100).as_bytes())
            .await
            .expect("requests");
        stalled.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        plain_request(address).await,
        None,
        "the cap is full while the stalled connections are held"
    );
    let started = Instant::now();
    let served = loop {
        if let Some(status) = plain_request(address).await {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "stalled connections were never closed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(served, 200);
    drop(stalled);
}

/// Many open review pages from one address (event streams) do not use up the connections its
/// plain requests need: with 2 connections allowed per address, 6 streams are open and plain
/// requests are still served; streams have their own cap (6 here), beyond which a stream is
/// refused with 429 and the JSON error body, and room comes back when one closes.
#[tokio::test]
async fn event_streams_are_counted_apart_from_connections() {
    let server = Server::start_with(&[
        ("DOCREVIEW_MAX_CONNECTIONS_PER_ADDRESS", "2"),
        ("DOCREVIEW_MAX_STREAMS_PER_ADDRESS", "6"),
    ]);
    let ada = server.user("ada@example.com", "Ada", &[], "docs");
    let token = ada.token().expect("a token").to_string();
    let review = ada.upload("Plan", SAMPLE_HTML).await;
    let address = address(&server);
    let request = format!(
        "GET /api/reviews/{}/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n",
        review.review_id
    );
    // The stream and the head of its answer; an empty head when the server closed it at once.
    // The stream and the head of its answer, tried again for a second while the server closes
    // the connection at once (see `served`).
    let open_stream = || async {
        let started = Instant::now();
        loop {
            let mut stream = TcpStream::connect(address).await.expect("connect");
            stream.write_all(request.as_bytes()).await.expect("request");
            let mut head = vec![0u8; 4096];
            let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut head))
                .await
                .expect("an answer")
                .unwrap_or(0);
            if read > 0 || started.elapsed() > Duration::from_secs(1) {
                return (stream, String::from_utf8_lossy(&head[..read]).into_owned());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let mut streams = Vec::new();
    for n in 0..6 {
        let (stream, head) = open_stream().await;
        assert!(head.starts_with("HTTP/1.1 200"), "stream {n}: {head}");
        assert!(head.contains("text/event-stream"), "stream {n}: {head}");
        streams.push(stream);
        assert_eq!(
            served(address).await,
            Some(200),
            "a plain request beside {} streams",
            n + 1
        );
    }
    let (mut refused, head) = open_stream().await;
    let (rest, _) = read_until_closed(&mut refused, Duration::from_secs(2)).await;
    let answer = head + rest.as_str();
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.to_lowercase().contains("retry-after: 10"),
        "{answer}"
    );
    assert!(answer.contains("\"error\":\"rate_limited\""), "{answer}");
    assert!(answer.contains("event streams"), "{answer}");
    drop(refused);

    // A closed page's stream gives its room back once the server notices (at the latest with
    // the next keep-alive comment, every 15 s).
    drop(streams.pop());
    let started = Instant::now();
    loop {
        let (stream, head) = open_stream().await;
        if head.starts_with("HTTP/1.1 200") {
            streams.push(stream);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(25),
            "a closed stream's room never came back: {head}"
        );
        drop(stream);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(served(address).await, Some(200));
}

/// Every event stream holds a file descriptor, and a service's soft limit on open files is often
/// far below the caps (1024 under systemd): the server raises its soft limit to the hard one,
/// and when even that is too low it fits its caps under it, so that a stream beyond them is
/// refused with 429 rather than the descriptors running out, and plain requests are still
/// served. First a soft limit of 256 (the hard one stays high), then both at 256; 300 streams.
#[tokio::test]
async fn event_streams_cannot_use_up_the_open_file_limit() {
    for limit in ["ulimit -Sn 256", "ulimit -n 256"] {
        let server = Server::start_after_shell(limit, &[]);
        let ada = server.user("ada@example.com", "Ada", &[], "docs");
        let token = ada.token().expect("a token").to_string();
        let review = ada.upload("Plan", SAMPLE_HTML).await;
        let address = address(&server);
        let request = format!(
            "GET /api/reviews/{}/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n",
            review.review_id
        );
        let mut streams = Vec::new();
        let mut refused = 0;
        for n in 0..300 {
            let mut stream = TcpStream::connect(address).await.expect("connect");
            stream.write_all(request.as_bytes()).await.expect("request");
            let mut head = vec![0u8; 4096];
            let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut head))
                .await
                .unwrap_or_else(|_| panic!("{limit}: stream {n} was never answered"))
                .unwrap_or(0);
            let head = String::from_utf8_lossy(&head[..read]).into_owned();
            if head.starts_with("HTTP/1.1 200") {
                streams.push(stream);
            } else {
                assert!(
                    head.starts_with("HTTP/1.1 429"),
                    "{limit}: stream {n}: {head}"
                );
                assert!(
                    head.contains("event streams"),
                    "{limit}: stream {n}: {head}"
                );
                refused += 1;
            }
        }
        assert_eq!(
            served(address).await,
            Some(200),
            "{limit}: a plain request beside {} streams",
            streams.len()
        );
        if limit.contains("-S") {
            // Raised to the hard limit, where that leaves room for 300 streams.
            let hard = std::process::Command::new("sh")
                .args(["-c", "ulimit -Hn"])
                .output()
                .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
                .unwrap_or_default();
            if hard == "unlimited" || hard.parse::<u64>().is_ok_and(|hard| hard >= 1024) {
                assert_eq!(
                    refused, 0,
                    "{limit}: the soft limit was raised (hard: {hard})"
                );
            }
        } else {
            assert!(refused > 0, "{limit}: the caps fit under the limit");
            assert!(streams.len() >= 50, "{limit}: {} streams", streams.len());
        }
    }
}
