//! The MCP server's standard streams, with JSON-RPC's answers to lines rmcp cannot take.
//!
//! rmcp ignores a line it cannot parse (invalid UTF-8, a lone surrogate escape, broken JSON) and
//! one longer than its limit, and answers JSON it cannot read as a message with an error that has
//! no `id`, so a client that sent one waits forever for its answer. JSON-RPC 2.0 answers the
//! first with a `-32700` parse error and the others with a `-32600` invalid request, each with the
//! request's `id` when it can be read and `null` otherwise; this module does that in front of
//! rmcp: every incoming line is checked here, good lines pass through to rmcp unchanged, and each
//! bad one is answered. rmcp's answers and ours leave through one writer, a whole line at a time,
//! so they never interleave.

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// How many bytes of lines may wait between this module and rmcp, each way.
const PIPE_BYTES: usize = 1 << 20;

/// The longest line taken, newline included: rmcp's own limit (it drops longer ones unanswered).
const MAX_LINE_BYTES: usize = DEFAULT_MAX_LINE_LENGTH;

/// The answer to a line that is not a JSON value.
const PARSE_ERROR: &str = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: the line is not JSON text (UTF-8 without lone surrogates)\"}}\n";

/// rmcp's answer to a message it cannot read, which lacks the `id` JSON-RPC requires (`null`
/// when the message has none: only notifications reach rmcp without an id that way), and ours.
const RMCP_INVALID_REQUEST: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n";
const INVALID_REQUEST_WITHOUT_ID: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n";

/// A UTF-8 byte order mark, which rmcp skips at the start of a line.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The reading and writing ends to hand to rmcp, fed from and draining into `input`/`output`
/// (standard input and output in `docreview mcp`; anything in tests).
pub fn transport(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, DuplexStream) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (refusals, refused) = mpsc::channel(64);
    tokio::spawn(read_lines(input, to_rmcp, refusals));
    tokio::spawn(write_lines(from_rmcp, refused, output));
    (rmcp_reads, rmcp_writes)
}

/// Passes each line rmcp can take on to it; asks for the answer to each it cannot.
/// Ends (closing rmcp's input) when `input` ends.
async fn read_lines(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    refusals: mpsc::Sender<String>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let refusal = match read_line(&mut input, &mut line).await {
            Ok(Line::End) | Err(_) => return,
            Ok(Line::TooLong) => Some(invalid_request(
                &Value::Null,
                &format!(
                    "the line is longer than {} MiB",
                    MAX_LINE_BYTES / (1024 * 1024)
                ),
            )),
            Ok(Line::Whole) => {
                let text = line.strip_suffix(b"\n").unwrap_or(&line);
                let text = text.strip_suffix(b"\r").unwrap_or(text);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                refusal_of(text.strip_prefix(BYTE_ORDER_MARK).unwrap_or(text))
            }
        };
        if let Some(answer) = refusal {
            if refusals.send(answer).await.is_err() {
                return;
            }
            continue;
        }
        if to_rmcp.write_all(&line).await.is_err() {
            return;
        }
        if !line.ends_with(b"\n") && to_rmcp.write_all(b"\n").await.is_err() {
            return;
        }
    }
}

/// How a read of one line ended.
enum Line {
    /// The line is in the buffer, with its newline unless the input ended first.
    Whole,
    /// The line was longer than [`MAX_LINE_BYTES`]; it was read to its end and dropped.
    TooLong,
    /// The input ended before another line.
    End,
}

/// Reads one line into `line`, holding at most [`MAX_LINE_BYTES`] of it in memory.
async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Whole
            });
        }
        let newline = available.iter().position(|&byte| byte == b'\n');
        let take = newline.map_or(available.len(), |at| at + 1);
        if !too_long {
            if line.len() + take > MAX_LINE_BYTES {
                too_long = true;
                *line = Vec::new();
            } else {
                line.extend_from_slice(&available[..take]);
            }
        }
        input.consume(take);
        if newline.is_some() {
            return Ok(if too_long { Line::TooLong } else { Line::Whole });
        }
    }
}

/// The answer to a line rmcp cannot take, or `None` for a line to pass on: a message rmcp
/// reads, or a notification it cannot (rmcp ignores those outside MCP's own, as other SDKs do,
/// and answers the others with an invalid request, given its `id` in `write_lines`).
fn refusal_of(text: &[u8]) -> Option<String> {
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        return Some(PARSE_ERROR.to_string());
    };
    if serde_json::from_slice::<ClientJsonRpcMessage>(text).is_ok() {
        return None;
    }
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null);
    if id.is_null() && value.get("method").is_some_and(Value::is_string) {
        return None;
    }
    Some(invalid_request(
        &id,
        "not a JSON-RPC 2.0 request, notification or response this server reads \
         (see jsonrpc, method and params)",
    ))
}

/// JSON-RPC's invalid request (`-32600`), as a line.
fn invalid_request(id: &Value, why: &str) -> String {
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32600, "message": format!("Invalid Request: {why}") },
    });
    format!("{answer}\n")
}

/// Writes rmcp's lines and the parse errors to `output`, each line whole.
async fn write_lines(
    from_rmcp: DuplexStream,
    mut refused: mpsc::Receiver<String>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut rmcp_open = true;
    let mut refusals_open = true;
    while rmcp_open || refusals_open {
        let written = tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match read {
                Ok(0) | Err(_) => {
                    rmcp_open = false;
                    Ok(())
                }
                Ok(_) => {
                    let line_out = if line == RMCP_INVALID_REQUEST {
                        INVALID_REQUEST_WITHOUT_ID
                    } else {
                        &line
                    };
                    let result = output.write_all(line_out).await;
                    line.clear();
                    result
                }
            },
            refusal = refused.recv(), if refusals_open => {
                if let Some(answer) = refusal {
                    output.write_all(answer.as_bytes()).await
                } else {
                    refusals_open = false;
                    Ok(())
                }
            }
        };
        if written.is_err() || output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Sends `input` through the filter and has rmcp's side answer `rmcp_answers`: what rmcp was
    /// given, and every line the client got back.
    async fn through(input: Vec<u8>, rmcp_answers: &[u8]) -> (String, Vec<Value>) {
        let (mut client_writes, server_reads) = tokio::io::duplex(4096);
        let (server_writes, mut client_reads) = tokio::io::duplex(4096);
        let (mut rmcp_reads, mut rmcp_writes) = transport(server_reads, server_writes);
        let writer = tokio::spawn(async move {
            client_writes.write_all(&input).await.expect("write");
        });
        let mut passed = String::new();
        rmcp_reads.read_to_string(&mut passed).await.expect("read");
        writer.await.expect("writer");
        rmcp_writes.write_all(rmcp_answers).await.expect("write");
        drop(rmcp_writes);
        let mut answered = String::new();
        client_reads
            .read_to_string(&mut answered)
            .await
            .expect("read");
        let lines = answered
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is JSON"))
            .collect();
        (passed, lines)
    }

    #[tokio::test]
    async fn good_lines_pass_and_bad_lines_are_answered() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let input = format!(
            "{ping}\n\u{feff}{ping}\n\n{note}\r\n{{\"a\":1}}\n[2]\n\
             {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":7}}\n\
             {{\"jsonrpc\":\"1.0\",\"id\":\"four\",\"method\":\"ping\"}}\n{{broken\n"
        );
        let mut input = input.into_bytes();
        input.extend_from_slice(b"\xff\xfe\n{\"s\":\"\\ud800\"}\n");
        let mut rmcp_answers = b"{\"ok\":true}\n".to_vec();
        rmcp_answers.extend_from_slice(RMCP_INVALID_REQUEST);
        let (passed, lines) = through(input, &rmcp_answers).await;
        assert_eq!(passed, format!("{ping}\n\u{feff}{ping}\n{note}\r\n"));
        let codes = |code: i64| {
            lines
                .iter()
                .filter(|line| line["error"]["code"] == code)
                .map(|line| line["id"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(-32700), [Value::Null, Value::Null, Value::Null]);
        // Ours in order; rmcp's (the last `null`) may come between them.
        let ids = codes(-32600);
        assert_eq!(ids.iter().filter(|id| id.is_null()).count(), 3, "{ids:?}");
        let with_ids: Vec<&Value> = ids.iter().filter(|id| !id.is_null()).collect();
        assert_eq!(with_ids, [&json!(5), &json!("four")]);
        assert!(lines.iter().any(|line| line["ok"] == true), "{lines:?}");
        assert!(
            lines
                .iter()
                .all(|line| line.get("id").is_some() || line["ok"] == true)
        );
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_answered_and_the_next_one_passes() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let mut input =
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"x\":\"".to_vec();
        input.resize(MAX_LINE_BYTES + 10, b'x');
        input.extend_from_slice(format!("\"}}}}\n{ping}\n").as_bytes());
        let (passed, lines) = through(input, b"").await;
        assert_eq!(passed, format!("{ping}\n"));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0]["error"]["code"], -32600);
        assert!(lines[0]["id"].is_null());
        assert!(
            lines[0]["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("16 MiB")),
            "{lines:?}"
        );
    }
}
