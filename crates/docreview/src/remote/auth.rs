//! `auth login|status|logout|token` and `tokens list|revoke`.

use std::io::{BufRead, Write};

use clap::{Args, Subcommand};
use docreview_client::api::secret::Secret;
use docreview_client::api::{CodeExchange, PageQuery};
use docreview_client::{Client, Error};
use docreview_core::identity::{new_pkce_verifier, pkce_challenge};

use super::output::{DIM, WARNING, paint};
use super::{Failure, Outcome, Output, hosts, io_reason, signed_in_client};

#[derive(Subcommand)]
pub enum AuthCommand {
    /// Sign in: approve this terminal in the browser, then paste the code it shows.
    Login(LoginArgs),
    /// Show the server, the user, the token's scopes and when it expires.
    Status,
    /// Revoke this terminal's token on the server and forget it.
    Logout,
    /// Print the token, for scripts.
    Token,
}

#[derive(Args)]
pub struct LoginArgs {
    /// The server [default: DOCREVIEW_URL, else the server last signed in to, else
    /// http://127.0.0.1:8080].
    #[arg(long)]
    base_url: Option<String>,
    /// What the token may do, comma-separated: docs (upload, versions, titles, tags, delete),
    /// access (sharing, owners, project roles), comments (comments, replies, runs), org
    /// (members and admins). Reading needs none.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = DEFAULT_SCOPES,
        value_parser = ["docs", "access", "comments", "org"]
    )]
    scopes: Vec<String>,
    /// Read a token from standard input instead of signing in through the browser.
    #[arg(long)]
    with_token: bool,
    /// Print the approval link instead of opening a browser.
    #[arg(long)]
    no_browser: bool,
}

#[derive(Subcommand)]
pub enum TokensCommand {
    /// Your personal tokens (never their values).
    List,
    /// Revoke one of your tokens by its id.
    Revoke {
        /// The token's id (tok_…, as `tokens list` shows it), not its value.
        token: String,
    },
}

/// The scopes `auth login` asks for unless told: every command but `org`'s writes (a token can
/// never do more than its owner's roles allow).
pub const DEFAULT_SCOPES: &str = "docs,access,comments";

/// Days left under which `auth status` warns.
const WARN_DAYS: i64 = 14;

pub async fn auth(command: AuthCommand, output: &Output) -> Outcome {
    match command {
        AuthCommand::Login(args) => login(args, output).await,
        AuthCommand::Status => status(output).await,
        AuthCommand::Logout => logout().await,
        AuthCommand::Token => {
            let hosts = hosts::load()?;
            let base = hosts::base_url(None, &hosts);
            let host = hosts
                .hosts
                .get(&base)
                .ok_or_else(|| Failure::new(4, format!("not signed in to {base}")))?;
            println!("{}", host.token);
            Ok(())
        }
    }
}

async fn login(args: LoginArgs, output: &Output) -> Outcome {
    let mut hosts = hosts::load()?;
    let base = hosts::base_url(args.base_url.as_deref(), &hosts);
    let anonymous = Client::new(&base, None)?;
    let token = if args.with_token {
        Secret::new(read_line(
            "the token",
            "pipe it in, e.g. `printenv TOKEN | docreview auth login --with-token`",
        )?)
    } else {
        let verifier = new_pkce_verifier();
        let challenge = pkce_challenge(verifier.expose());
        let name = format!("docreview CLI on {}", hostname());
        let url = anonymous.cli_login_url(&challenge, &name, &args.scopes.join(","));
        if args.no_browser || !super::open_in_browser(&url) {
            eprintln!(
                "Open this link in a browser where you are signed in, and approve:\n\n  {url}\n"
            );
        } else {
            eprintln!("Approve this terminal in the browser that just opened (or open {url}).");
        }
        eprint!("Then paste the code it shows: ");
        let _ = std::io::stderr().flush();
        let code = read_line(
            "the code",
            "run `docreview auth login` again at a terminal and paste the code the browser \
             shows, or sign in with a token: `docreview auth login --with-token`",
        )
        .inspect_err(|_| eprintln!())?;
        let exchanged = anonymous
            .exchange_cli_code(&CodeExchange {
                code: Secret::new(code),
                verifier,
            })
            .await?;
        exchanged.token
    };
    let client = Client::new(&base, Some(token.clone()))?;
    let me = client.me().await?;
    let current = me
        .token
        .ok_or_else(|| Failure::error("that is not a personal token"))?;
    let host = hosts::Host {
        token: token.expose().to_string(),
        token_id: current.id,
        user: me.user.email.clone(),
        scopes: current
            .scopes
            .iter()
            .map(|s| s.as_str().to_string())
            .collect(),
        expires_at: current.expires_at.clone(),
    };
    hosts.hosts.insert(base.clone(), host);
    hosts.current = Some(base.clone());
    hosts::save(&hosts)?;
    let signed_in = serde_json::json!({
        "baseUrl": base, "user": me.user.email, "expiresAt": current.expires_at,
    });
    output.show(&signed_in, |_| {
        println!(
            "Signed in to {base} as {} (token expires {}).",
            me.user.email, current.expires_at
        );
    })
}

/// A line of standard input: the pasted code, or the token piped in. A closed or unreadable
/// input is refused with what to do instead.
fn read_line(what: &str, instead: &str) -> Result<String, Failure> {
    let mut line = String::new();
    let read = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|error| {
            Failure::error(format!(
                "could not read {what} from standard input: {}; {instead}",
                io_reason(&error)
            ))
        })?;
    if read == 0 {
        return Err(Failure::error(format!(
            "standard input closed before {what} was given; {instead}"
        )));
    }
    let line = line.trim().to_string();
    if line.is_empty() {
        return Err(Failure::error(format!("{what} was empty; {instead}")));
    }
    Ok(line)
}

async fn status(output: &Output) -> Outcome {
    let client = signed_in_client()?;
    let me = client.me().await?;
    let token = me.token.as_ref();
    let status =
        serde_json::json!({ "baseUrl": client.base_url(), "user": me.user, "token": token });
    output.show(&status, |_| {
        println!("Server:  {}", client.base_url());
        println!("User:    {} <{}>", me.user.display_name, me.user.email);
        if let Some(token) = token {
            let scopes: Vec<_> = token.scopes.iter().map(|s| s.as_str()).collect();
            println!("Scopes:  {}", scopes.join(", "));
            println!("Expires: {}", token.expires_at);
        }
    })?;
    if let Some(token) = token
        && let Some(days) = days_left(&token.expires_at)
        && days < WARN_DAYS
    {
        anstream::eprintln!(
            "{} the token expires in {days} days; run `docreview auth login` for a new one",
            paint(WARNING, "warning:")
        );
    }
    Ok(())
}

async fn logout() -> Outcome {
    let mut hosts = hosts::load()?;
    let base = hosts::base_url(None, &hosts);
    let host = hosts
        .hosts
        .remove(&base)
        .ok_or_else(|| Failure::new(4, format!("not signed in to {base}")))?;
    let client = Client::new(&base, Some(Secret::new(host.token)))?;
    // Forget it even when the server already refuses it (expired or revoked elsewhere).
    let revoked = client.revoke_my_token(&host.token_id).await;
    if hosts.current.as_deref() == Some(base.as_str()) {
        hosts.current = None;
    }
    hosts::save(&hosts)?;
    match revoked {
        Ok(_) | Err(Error::Api { .. }) => {
            println!("Signed out of {base}.");
            Ok(())
        }
        Err(error) => Err(Failure::error(format!(
            "forgot the token, but could not revoke it on {base}: {error}"
        ))),
    }
}

pub async fn tokens(command: TokensCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        TokensCommand::List => {
            let list = client.my_tokens(&PageQuery::default()).await?;
            output.answer(&client, &list, |list| {
                for token in &list.tokens {
                    let scopes: Vec<_> = token.scopes.iter().map(|s| s.as_str()).collect();
                    let state = token.revoked_at.as_ref().map_or_else(
                        || format!("expires {}", token.expires_at),
                        |at| format!("revoked {at}"),
                    );
                    anstream::println!(
                        "{}  {}  [{}]  {state}",
                        paint(DIM, &token.id),
                        token.name,
                        scopes.join(",")
                    );
                }
            })
        }
        TokensCommand::Revoke { token } => {
            let revoked = client.revoke_my_token(&token).await?;
            output.answer(&client, &revoked, |revoked| {
                println!("Revoked {}.", revoked.id);
            })
        }
    }
}

/// Whole days from now until an RFC 3339 time (`2027-02-20T…`).
fn days_left(expires_at: &str) -> Option<i64> {
    let at =
        time::OffsetDateTime::parse(expires_at, &time::format_description::well_known::Rfc3339)
            .ok()?;
    Some((at - time::OffsetDateTime::now_utc()).whole_days())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "this computer".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_left_until_an_expiry() {
        let in_ten_days =
            time::OffsetDateTime::now_utc() + time::Duration::days(10) + time::Duration::hours(1);
        let text = in_ten_days
            .format(&time::format_description::well_known::Rfc3339)
            .expect("format");
        assert_eq!(days_left(&text), Some(10));
        assert_eq!(days_left("garbage"), None);
    }
}
