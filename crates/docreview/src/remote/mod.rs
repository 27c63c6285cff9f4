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
                "\nSign in again with the scope it names: `docreview auth login --scopes …`."
            }
            Some(400) if error.to_string().contains("locator.quote") => {
                "\nCopy the passage exactly as `docreview reviews show` prints it, add --prefix or \
                 --suffix when it occurs more than once, or comment on a --section instead."
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

/// A client with the credentials for the current server.
fn signed_in_client() -> Result<docreview_client::Client, Failure> {
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
    let client = signed_in_client()?;
    crate::mcp::serve(client)
        .await
        .map_err(|error| Failure::error(format!("the MCP session ended: {error:#}")))
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
