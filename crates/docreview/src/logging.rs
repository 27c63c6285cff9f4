//! The log: text or JSON lines on standard error, written by a thread of their own.
//!
//! With a request line per request at the default level, writing each line with its own
//! write(2) on the request's thread cost a fifth of the requests per second of a trivial
//! endpoint (debug build, 2 cores). Lines are appended to a buffer instead, which a background
//! thread writes out every 50 ms; a full buffer is written at once by the thread that filled it,
//! so a flood of lines slows the server rather than growing memory. The cost: a `kill -9` may
//! lose the last 50 ms of lines.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

/// Beyond this many buffered bytes, the writer writes them out itself.
const MAX_BUFFERED: usize = 1024 * 1024;
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Clones share one buffer; `flush` writes it to standard error.
#[derive(Clone, Default)]
pub struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl LogBuffer {
    /// A buffer, and the thread that writes it out.
    pub fn start() -> LogBuffer {
        let buffer = LogBuffer::default();
        let flusher = buffer.clone();
        let spawned = std::thread::Builder::new()
            .name("log-writer".to_string())
            .spawn(move || {
                loop {
                    std::thread::sleep(FLUSH_EVERY);
                    flusher.write_out();
                }
            });
        if spawned.is_err() {
            eprintln!(
                "warning: no log writer thread; log lines are written when 1 MiB is buffered"
            );
        }
        buffer
    }

    /// Writes what is buffered to standard error (also at exit).
    pub fn write_out(&self) {
        let pending = {
            let mut buffer = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if buffer.is_empty() {
                return;
            }
            std::mem::take(&mut *buffer)
        };
        let mut stderr = std::io::stderr().lock();
        // Nowhere to report a failure to write the log.
        let _ = stderr.write_all(&pending);
        let _ = stderr.flush();
    }
}

impl Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let full = {
            let mut buffer = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            buffer.extend_from_slice(bytes);
            buffer.len() >= MAX_BUFFERED
        };
        if full {
            self.write_out();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

static BUFFER: OnceLock<LogBuffer> = OnceLock::new();

/// Writes out what the log holds, before anything else is printed to standard error (an
/// error message must come after the log lines that led to it) and at exit.
pub fn flush() {
    if let Some(buffer) = BUFFER.get() {
        buffer.write_out();
    }
}

/// html5ever warns about every parse error it recovers from ("foster parenting not
/// implemented"): facts about an uploaded document, not about the service. Kept out of the log
/// unless `RUST_LOG` names html5ever itself.
const QUIET_PARSER: &str = "html5ever=off";

/// The log filter: `RUST_LOG` (default `info`; a value that does not parse is ignored) with
/// [`QUIET_PARSER`] added.
fn filter() -> tracing_subscriber::EnvFilter {
    let asked = std::env::var("RUST_LOG").unwrap_or_default();
    let asked = if asked.trim().is_empty() {
        "info"
    } else {
        asked.as_str()
    };
    let directives = if asked.contains("html5ever") {
        asked.to_string()
    } else {
        format!("{asked},{QUIET_PARSER}")
    };
    tracing_subscriber::EnvFilter::try_new(directives)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("info,{QUIET_PARSER}")))
}

/// Installs the global subscriber: [`filter`], text or JSON lines.
pub fn init(json: bool) {
    let buffer = BUFFER.get_or_init(LogBuffer::start);
    let writer = buffer.clone();
    let make_writer = move || writer.clone();
    let filter = filter();
    if json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(make_writer)
            .init();
    } else {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(make_writer)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
}
