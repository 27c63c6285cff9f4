//! The MCP server's standard streams, with JSON-RPC's answer to a line that is not JSON.
//!
//! rmcp ignores a line it cannot parse (invalid UTF-8, a lone surrogate escape, broken JSON),
//! so a client that sent one waits forever. JSON-RPC 2.0 answers such a line with a `-32700`
//! parse error whose `id` is null; this module does that in front of rmcp: every incoming line
//! is checked here, good lines pass through to rmcp unchanged, and each bad one is answered.
//! rmcp's answers and ours leave through one writer, a whole line at a time, so they never
//! interleave.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// How many bytes of lines may wait between this module and rmcp, each way.
const PIPE_BYTES: usize = 1 << 20;

/// The answer to a line that is not a JSON value.
const PARSE_ERROR: &str = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: the line is not JSON text (UTF-8 without lone surrogates)\"}}\n";

/// The reading and writing ends to hand to rmcp, fed from and draining into `input`/`output`
/// (standard input and output in `docreview mcp`; anything in tests).
pub fn transport(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, DuplexStream) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (refusals, refused) = mpsc::unbounded_channel();
    tokio::spawn(read_lines(input, to_rmcp, refusals));
    tokio::spawn(write_lines(from_rmcp, refused, output));
    (rmcp_reads, rmcp_writes)
}

/// Passes each line that is JSON on to rmcp; asks for a parse error for each that is not.
/// Ends (closing rmcp's input) when `input` ends.
async fn read_lines(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    refusals: mpsc::UnboundedSender<()>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if serde_json::from_slice::<serde_json::Value>(text).is_ok() {
            if to_rmcp.write_all(&line).await.is_err() {
                return;
            }
            if !line.ends_with(b"\n") && to_rmcp.write_all(b"\n").await.is_err() {
                return;
            }
        } else if refusals.send(()).is_err() {
            return;
        }
    }
}

/// Writes rmcp's lines and the parse errors to `output`, each line whole.
async fn write_lines(
    from_rmcp: DuplexStream,
    mut refused: mpsc::UnboundedReceiver<()>,
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
                    let result = output.write_all(&line).await;
                    line.clear();
                    result
                }
            },
            refusal = refused.recv(), if refusals_open => {
                if refusal.is_some() {
                    output.write_all(PARSE_ERROR.as_bytes()).await
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

    #[tokio::test]
    async fn good_lines_pass_and_bad_lines_are_answered_in_order() {
        let (mut client_writes, server_reads) = tokio::io::duplex(4096);
        let (server_writes, mut client_reads) = tokio::io::duplex(4096);
        let (mut rmcp_reads, mut rmcp_writes) = transport(server_reads, server_writes);

        client_writes
            .write_all(b"{\"a\":1}\n\xff\xfe\n{\"s\":\"\\ud800\"}\n\n{broken\n[2]\r\n")
            .await
            .expect("write");
        drop(client_writes);
        let mut passed = String::new();
        rmcp_reads.read_to_string(&mut passed).await.expect("read");
        assert_eq!(passed, "{\"a\":1}\n[2]\r\n");

        rmcp_writes
            .write_all(b"{\"ok\":true}\n")
            .await
            .expect("write");
        drop(rmcp_writes);
        let mut answered = String::new();
        client_reads
            .read_to_string(&mut answered)
            .await
            .expect("read");
        let lines: Vec<serde_json::Value> = answered
            .lines()
            .map(|line| serde_json::from_str(line).expect("every line is JSON"))
            .collect();
        let errors = lines
            .iter()
            .filter(|line| line["error"]["code"] == -32700 && line["id"].is_null())
            .count();
        assert_eq!(errors, 3, "{answered}");
        assert!(lines.iter().any(|line| line["ok"] == true), "{answered}");
    }
}
