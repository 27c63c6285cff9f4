//! The command-line client: sign in to a server (`auth`), and review from the terminal
//! (`reviews`, `comments`, `runs`, `search`, `projects`, `org`, `tokens`), over the typed API
//! client. Credentials are kept per server in `$XDG_CONFIG_HOME/docreview/hosts.toml` (mode
//! 0600); `DOCREVIEW_URL` and `DOCREVIEW_TOKEN` override them.
//!
//! Exit codes: 0 done, 1 error, 2 usage, 4 not signed in or token expired, 5 conflict (409),
//! 6 not found.

mod auth;
mod comments;
mod hosts;
mod jq;
mod notifications;
mod org;
mod output;
mod reviews;
mod search;
mod suggestions;
mod webhooks;

use std::process::ExitCode;

use docreview_client::Error;
use docreview_client::api::secret::Secret;

pub use auth::{AuthCommand, TokensCommand, auth, tokens};
pub use comments::{CommentsCommand, RunsCommand, comments, runs};
pub use notifications::{NotificationsArgs, notifications};
pub use org::{OrgCommand, ProjectsCommand, org, projects};
pub use output::Output;
pub use reviews::{ReviewsCommand, reviews};
pub use search::{SearchCommand, search};
pub use suggestions::{SuggestionsCommand, suggestions};
pub use webhooks::{WebhooksCommand, webhooks};

/// Why a command failed, and the exit code that says so.
pub struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn new(code: u8, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
        }
    }

    fn error(message: impl Into<String>) -> Self {
        Failure::new(1, message)
    }

    fn usage(message: impl Into<String>) -> Self {
        Failure::new(2, message)
    }

    pub fn exit(self) -> ExitCode {
        eprintln!("error: {}", self.message);
        ExitCode::from(self.code)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let next = match error.status() {
            Some(401) => {
                return Failure::new(
                    4,
                    format!("{error}\nSign in again with `docreview auth login`."),
                );
            }
            Some(409) => {
                return Failure::new(5, format!("{error}\nRead the document again, then retry."));
            }
            Some(404) => return Failure::new(6, error.to_string()),
            Some(403) if error.code() == Some("insufficient_scope") => {
                return Failure::error(format!("{error}{}", scope_help(&error.to_string())));
            }
            Some(400) if error.to_string().contains("locator.quote") => {
                return Failure::error(format!("{error}{}", quote_help(&error)));
            }
            // Its message already says what to do.
            None if matches!(error, Error::Tls(_)) => "",
            None if error.to_string().contains("certificate") => {
                "\nThe server's certificate is not trusted here. If it comes from an internal \
                 certificate authority, add that authority to the system's certificates or name \
                 its PEM file in SSL_CERT_FILE."
            }
            None => {
                "\nCheck the server's address (`docreview auth status`) and that it is running."
            }
            _ => "",
        };
        Failure::error(format!("{error}{next}"))
    }
}

type Outcome = Result<(), Failure>;

/// How to get a token with the scope a refusal names (`… lacks the `access` scope …`).
fn scope_help(message: &str) -> String {
    let needed = message
        .split('`')
        .nth(1)
        .filter(|word| ["docs", "access", "comments", "org"].contains(word));
    let mut scopes: Vec<&str> = auth::DEFAULT_SCOPES.split(',').collect();
    if let Some(needed) = needed
        && !scopes.contains(&needed)
    {
        scopes.push(needed);
    }
    format!(
        "\nSign in again with it: `docreview auth login --scopes {}`.",
        scopes.join(",")
    )
}

/// What to do about a quote the server could not place: the passages it offered (each with the
/// flags that send it back), or where to read the text.
fn quote_help(error: &Error) -> String {
    let candidates = match error {
        Error::Api { body } => body.candidates.as_deref().unwrap_or_default(),
        _ => &[],
    };
    if candidates.is_empty() {
        return "\nCopy the passage exactly as `docreview reviews text REVIEW` prints it (its \
                sections: `docreview reviews outline REVIEW`), or comment on a --section instead."
            .to_string();
    }
    let mut help = String::from(
        "\nPassages it may mean (send one with its flags, in place of --quote and --section):",
    );
    for candidate in candidates {
        let section = candidate
            .section_id
            .as_ref()
            .map(|id| format!(" in section {id}"))
            .unwrap_or_default();
        help.push_str(&format!(
            "\n  “{}”{section}\n      --quote {} --at {}",
            candidate.quote.exact,
            shell_word(&candidate.quote.exact),
            candidate.position.start
        ));
    }
    help
}

/// `text` as one shell word (single-quoted unless plain).
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,/:@%+=".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What standard input holds, for a `--body -` or a pasted secret; a closed or unreadable input
/// is refused with what was expected.
fn read_stdin(what: &str) -> Result<String, Failure> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text).map_err(|error| {
        Failure::error(format!(
            "could not read {what} from standard input: {}",
            io_reason(&error)
        ))
    })?;
    Ok(text)
}

/// An I/O error as a person reads it: "Is a directory" rather than "Is a directory (os error 21)".
fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None if error.kind() == std::io::ErrorKind::InvalidData => "it is not UTF-8 text".into(),
        None => text,
    }
}

/// A client with the credentials for the current server, keeping every answer as the server
/// sent it (for `--json`).
fn signed_in_client() -> Result<docreview_client::Client, Failure> {
    Ok(credentials()?.keeping_answers())
}

/// A client with the credentials for the current server.
fn credentials() -> Result<docreview_client::Client, Failure> {
    let hosts = hosts::load()?;
    let base = hosts::base_url(None, &hosts);
    let token = std::env::var("DOCREVIEW_TOKEN")
        .ok()
        .or_else(|| hosts.hosts.get(&base).map(|host| host.token.clone()))
        .ok_or_else(|| {
            Failure::new(
                4,
                format!("not signed in to {base}; run `docreview auth login --base-url {base}`"),
            )
        })?;
    Ok(docreview_client::Client::new(
        &base,
        Some(Secret::new(token)),
    )?)
}

/// `docreview mcp`: the MCP server, with this terminal's credentials.
pub async fn mcp() -> Outcome {
    let client = credentials()?;
    crate::mcp::serve(client)
        .await
        .map_err(|error| Failure::error(format!("the MCP session ended: {error:#}")))
}

/// Ends the process quietly (exit 0) when standard output is a pipe its reader closed
/// (`docreview reviews text … | head`): Rust ignores SIGPIPE, so printing there panics with
/// "Broken pipe", which would otherwise show as a crash after the reader got what it wanted.
pub fn end_quietly_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Opens `url` in the desktop's browser; `false` when there is none (e.g. over SSH).
fn open_in_browser(url: &str) -> bool {
    if !interactive() || std::env::var_os("SSH_CONNECTION").is_some() {
        return false;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Whether standard error is a terminal (where a person can be asked and shown progress).
fn interactive() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr())
}
