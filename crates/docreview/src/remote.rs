//! The command-line client: sign in to a server (`auth`), and review from the terminal
//! (`reviews`, `comments`), over the typed API client. Credentials are kept per server in
//! `$XDG_CONFIG_HOME/docreview/hosts.toml` (mode 0600); `DOCREVIEW_URL` and `DOCREVIEW_TOKEN`
//! override them.
//!
//! Exit codes: 0 done, 1 error, 2 usage, 4 not signed in or token expired, 5 conflict (409),
//! 6 not found.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use docreview_client::api::secret::Secret;
use docreview_client::api::{
    CodeExchange, CommentSearchQuery, CommentStatus, CommentView, DocSearchQuery, FinishRun,
    ListQuery, NewComment, NewReply, PageQuery, RunStatus, StartRun, StatusChange,
};
use docreview_client::{Client, DocumentUpload, Error, HtmlFile, Place};
use docreview_core::identity::{new_pkce_verifier, pkce_challenge};
use serde::{Deserialize, Serialize};

const DEFAULT_URL: &str = "http://127.0.0.1:8080";

#[derive(Args)]
pub struct Output {
    /// Print the API's JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
}

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
    /// What the token may do: docs, access, comments, org.
    #[arg(long, value_delimiter = ',', default_value = "docs,comments")]
    scopes: Vec<String>,
    /// Read a token from standard input instead of signing in through the browser.
    #[arg(long)]
    with_token: bool,
    /// Print the approval link instead of opening a browser.
    #[arg(long)]
    no_browser: bool,
}

#[derive(Subcommand)]
pub enum ReviewsCommand {
    /// The documents you can see, newest activity first.
    List {
        /// Only those with this tag.
        #[arg(long)]
        tag: Option<String>,
        /// How many (1 to 200).
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// A document with its versions and comments.
    Show { review: String },
    /// Upload an HTML file as a new document.
    Upload {
        file: PathBuf,
        #[arg(long)]
        title: Option<String>,
        /// A tag (repeat for more).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// A project code to link it to.
        #[arg(long)]
        project: Option<String>,
    },
}

/// A new comment: its text, category and place (a quote, a section, or the whole document).
#[derive(Args)]
pub struct CommentArgs {
    #[arg(long)]
    body: String,
    /// The passage, as it reads in the document.
    #[arg(long)]
    quote: Option<String>,
    /// Text just before the passage, when it occurs more than once.
    #[arg(long, requires = "quote")]
    prefix: Option<String>,
    /// Text just after the passage.
    #[arg(long, requires = "quote")]
    suffix: Option<String>,
    /// A heading section's id (see `reviews show`).
    #[arg(long, conflicts_with = "quote")]
    section: Option<String>,
    /// note, revise, add, delete, needs_review, consult or none.
    #[arg(long, default_value = "note")]
    category: String,
}

#[derive(Subcommand)]
pub enum CommentsCommand {
    /// A document's comments, in document order.
    List { review: String },
    /// Comment on a passage (`--quote`), a section (`--section`) or the whole document.
    Add {
        review: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Reply to a comment.
    Reply {
        review: String,
        comment: String,
        #[arg(long)]
        body: String,
    },
    /// Resolve a comment.
    Resolve { review: String, comment: String },
    /// Reopen a resolved comment.
    Reopen { review: String, comment: String },
}

#[derive(Subcommand)]
pub enum RunsCommand {
    /// Start a review run on the latest version; its comments stay drafts until it completes.
    Start {
        review: String,
        #[arg(long)]
        title: Option<String>,
    },
    /// Write a comment in a run (on a quote, a section or the whole document).
    Comment {
        review: String,
        run: String,
        #[command(flatten)]
        comment: CommentArgs,
    },
    /// Finish a run: `completed` (with a summary) keeps its comments; `failed` or `cancelled`
    /// drops them.
    Finish {
        review: String,
        run: String,
        #[arg(long, default_value = "completed")]
        status: String,
        #[arg(long)]
        summary: Option<String>,
    },
}

#[derive(Subcommand)]
pub enum SearchCommand {
    /// Comments and replies that contain the words.
    Comments {
        words: String,
        #[arg(long)]
        review: Option<String>,
    },
    /// Documents whose title or text contains the words.
    Docs { words: String },
}

#[derive(Subcommand)]
pub enum TokensCommand {
    /// Your personal tokens (never their values).
    List,
    /// Revoke one of your tokens by its id.
    Revoke { token: String },
}

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
            None => {
                "\nCheck the server's address (`docreview auth status`) and that it is running."
            }
            _ => "",
        };
        Failure::error(format!("{error}{next}"))
    }
}

type Outcome = Result<(), Failure>;

/// One server's credentials, as `hosts.toml` keeps them.
#[derive(Serialize, Deserialize, Clone)]
struct Host {
    token: String,
    token_id: String,
    user: String,
    scopes: Vec<String>,
    expires_at: String,
}

#[derive(Serialize, Deserialize, Default)]
struct Hosts {
    /// The server signed in to last, used when no `--base-url` or `DOCREVIEW_URL` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    current: Option<String>,
    #[serde(default)]
    hosts: BTreeMap<String, Host>,
}

fn hosts_path() -> Result<PathBuf, Failure> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .ok_or_else(|| Failure::error("set HOME or XDG_CONFIG_HOME to keep credentials"))?;
    Ok(config.join("docreview").join("hosts.toml"))
}

fn load_hosts() -> Result<Hosts, Failure> {
    let path = hosts_path()?;
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|error| {
            Failure::error(format!("{} is not readable: {error}", path.display()))
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Hosts::default()),
        Err(error) => Err(Failure::error(format!(
            "reading {}: {error}",
            path.display()
        ))),
    }
}

/// Writes `hosts.toml` readable by its owner only (it holds tokens).
fn save_hosts(hosts: &Hosts) -> Outcome {
    let path = hosts_path()?;
    let text = toml::to_string(hosts).map_err(|error| Failure::error(error.to_string()))?;
    let failed =
        |error: std::io::Error| Failure::error(format!("writing {}: {error}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        if path.exists() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .map_err(failed)?;
        }
    }
    let mut file = options.open(&path).map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)
}

/// The server to talk to: `--base-url`, else `DOCREVIEW_URL`, else the current one.
fn base_url(given: Option<&str>, hosts: &Hosts) -> String {
    given
        .map(str::to_string)
        .or_else(|| std::env::var("DOCREVIEW_URL").ok())
        .or_else(|| hosts.current.clone())
        .unwrap_or_else(|| DEFAULT_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}

/// A client with the credentials for the current server.
fn signed_in_client() -> Result<Client, Failure> {
    let hosts = load_hosts()?;
    let base = base_url(None, &hosts);
    let token = std::env::var("DOCREVIEW_TOKEN")
        .ok()
        .or_else(|| hosts.hosts.get(&base).map(|host| host.token.clone()))
        .ok_or_else(|| {
            Failure::new(
                4,
                format!("not signed in to {base}; run `docreview auth login --base-url {base}`"),
            )
        })?;
    Ok(Client::new(&base, Some(Secret::new(token)))?)
}

pub async fn auth(command: AuthCommand, output: &Output) -> Outcome {
    match command {
        AuthCommand::Login(args) => login(args, output).await,
        AuthCommand::Status => status(output).await,
        AuthCommand::Logout => logout().await,
        AuthCommand::Token => {
            let hosts = load_hosts()?;
            let base = base_url(None, &hosts);
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
    let mut hosts = load_hosts()?;
    let base = base_url(args.base_url.as_deref(), &hosts);
    let anonymous = Client::new(&base, None)?;
    let token = if args.with_token {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|error| Failure::error(format!("reading the token: {error}")))?;
        Secret::new(line.trim().to_string())
    } else {
        let verifier = new_pkce_verifier();
        let challenge = pkce_challenge(verifier.expose());
        let name = format!("docreview CLI on {}", hostname());
        let url = anonymous.cli_login_url(&challenge, &name, &args.scopes.join(","));
        if args.no_browser || !open_browser(&url) {
            eprintln!(
                "Open this link in a browser where you are signed in, and approve:\n\n  {url}\n"
            );
        } else {
            eprintln!("Approve this terminal in the browser that just opened (or open {url}).");
        }
        eprint!("Then paste the code it shows: ");
        let _ = std::io::stderr().flush();
        let mut code = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut code)
            .map_err(|error| Failure::error(format!("reading the code: {error}")))?;
        let exchanged = anonymous
            .exchange_cli_code(&CodeExchange {
                code: Secret::new(code.trim().to_string()),
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
    let host = Host {
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
    save_hosts(&hosts)?;
    if output.json {
        print_json(
            &serde_json::json!({ "baseUrl": base, "user": me.user.email, "expiresAt": current.expires_at }),
        );
    } else {
        println!(
            "Signed in to {base} as {} (token expires {}).",
            me.user.email, current.expires_at
        );
    }
    Ok(())
}

async fn status(output: &Output) -> Outcome {
    let client = signed_in_client()?;
    let me = client.me().await?;
    let token = me.token.as_ref();
    if output.json {
        print_json(
            &serde_json::json!({ "baseUrl": client.base_url(), "user": me.user, "token": token }),
        );
        return Ok(());
    }
    println!("Server:  {}", client.base_url());
    println!("User:    {} <{}>", me.user.display_name, me.user.email);
    if let Some(token) = token {
        let scopes: Vec<_> = token.scopes.iter().map(|s| s.as_str()).collect();
        println!("Scopes:  {}", scopes.join(", "));
        println!("Expires: {}", token.expires_at);
        if let Some(days) = days_left(&token.expires_at)
            && days < 14
        {
            eprintln!(
                "warning: the token expires in {days} days; run `docreview auth login` for a new one"
            );
        }
    }
    Ok(())
}

async fn logout() -> Outcome {
    let mut hosts = load_hosts()?;
    let base = base_url(None, &hosts);
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
    save_hosts(&hosts)?;
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

pub async fn reviews(command: ReviewsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        ReviewsCommand::List { tag, limit } => {
            let list = client
                .list_reviews(&ListQuery {
                    tag,
                    limit: Some(limit),
                    ..ListQuery::default()
                })
                .await?;
            if output.json {
                print_json(&list);
            } else if list.reviews.is_empty() {
                println!("No documents. Upload one with `docreview reviews upload FILE`.");
            } else {
                for row in &list.reviews {
                    println!(
                        "{}  {:>3} open / {:>3}  {}",
                        row.review_id, row.open_comment_count, row.comment_count, row.title
                    );
                }
            }
        }
        ReviewsCommand::Show { review } => {
            let review = client.review(&review, false).await?;
            if output.json {
                print_json(&review);
            } else {
                let versions: Vec<_> = review
                    .source
                    .versions
                    .iter()
                    .map(|v| v.label.as_str())
                    .collect();
                println!("{}  {}", review.review_id, review.title);
                println!("Versions: {}", versions.join(", "));
                println!("Comments: {}", review.comments.len());
                print_comments(&review.comments);
            }
        }
        ReviewsCommand::Upload {
            file,
            title,
            tags,
            project,
        } => {
            let bytes = std::fs::read(&file)
                .map_err(|error| Failure::error(format!("reading {}: {error}", file.display())))?;
            let name = file.file_name().map_or_else(
                || "document.html".to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let review = client
                .import_html(
                    &HtmlFile { name, bytes },
                    &DocumentUpload {
                        title,
                        label: None,
                        project,
                        tags,
                    },
                )
                .await?;
            if output.json {
                print_json(&review);
            } else {
                println!("Uploaded {} as {}.", review.title, review.review_id);
            }
        }
    }
    Ok(())
}

pub async fn comments(command: CommentsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        CommentsCommand::List { review } => {
            let review = client.review(&review, false).await?;
            if output.json {
                print_json(&review.comments);
            } else {
                print_comments(&review.comments);
            }
        }
        CommentsCommand::Add { review, comment } => {
            let new = new_comment(comment)?;
            let written = client.add_comment(&review, &new).await?;
            report_comment(&written, output);
        }
        CommentsCommand::Reply {
            review,
            comment,
            body,
        } => {
            let written = client
                .reply(
                    &review,
                    &comment,
                    &NewReply {
                        body,
                        run_id: None,
                        base_comments_revision: None,
                    },
                )
                .await?;
            if output.json {
                print_json(&written);
            } else {
                println!("Replied to {comment}.");
            }
        }
        CommentsCommand::Resolve { review, comment } => {
            set_status(&client, &review, &comment, CommentStatus::Closed, output).await?;
        }
        CommentsCommand::Reopen { review, comment } => {
            set_status(&client, &review, &comment, CommentStatus::Open, output).await?;
        }
    }
    Ok(())
}

async fn set_status(
    client: &Client,
    review: &str,
    comment: &str,
    status: CommentStatus,
    output: &Output,
) -> Outcome {
    let written = client
        .set_status(
            review,
            comment,
            &StatusChange {
                status,
                base_comments_revision: None,
            },
        )
        .await?;
    if output.json {
        print_json(&written);
    } else {
        let done = if status == CommentStatus::Closed {
            "Resolved"
        } else {
            "Reopened"
        };
        println!("{done} {comment}.");
    }
    Ok(())
}

fn print_comments(comments: &[CommentView]) {
    for comment in comments {
        let place = comment
            .anchor
            .quote
            .as_ref()
            .map(|quote| format!("“{}”", quote.exact))
            .or_else(|| {
                comment
                    .anchor
                    .section_id
                    .as_ref()
                    .map(|id| format!("section {id}"))
            })
            .unwrap_or_else(|| "the document".to_string());
        println!(
            "\n{}  [{}] {} on {place} ({}, {})",
            comment.id,
            comment.status,
            comment.author.display_name,
            comment.category,
            comment.anchor.state
        );
        println!("  {}", comment.body);
        for reply in &comment.thread {
            println!("    ↳ {}: {}", reply.author.display_name, reply.body);
        }
    }
}

fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(error) => eprintln!("error: {error}"),
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

/// Opens `url` in the desktop's browser; `false` when there is none (e.g. over SSH).
fn open_browser(url: &str) -> bool {
    if !std::io::stderr().is_terminal() || std::env::var_os("SSH_CONNECTION").is_some() {
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

/// The comment the command line describes.
fn new_comment(args: CommentArgs) -> Result<NewComment, Failure> {
    let place = Place {
        quote: args.quote,
        prefix: args.prefix,
        suffix: args.suffix,
        section_id: args.section,
    };
    docreview_client::new_comment(args.body, Some(&args.category), place)
        .map_err(|message| Failure::new(2, message))
}

fn report_comment(written: &docreview_client::api::CommentWritten, output: &Output) {
    if output.json {
        print_json(written);
        return;
    }
    println!("Commented: {}", written.comment.id);
    if let Some(matches) = written.quote_matches.filter(|n| *n > 1) {
        eprintln!(
            "warning: the quote occurs {matches} times; the comment is on the first. Add \
             --prefix or --suffix to choose another."
        );
    }
}

pub async fn runs(command: RunsCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        RunsCommand::Start { review, title } => {
            let run = client
                .start_run(
                    &review,
                    &StartRun {
                        title,
                        ..StartRun::default()
                    },
                )
                .await?;
            if output.json {
                print_json(&run);
            } else {
                println!("Started run {} on version {}.", run.id, run.version_id);
            }
        }
        RunsCommand::Comment {
            review,
            run,
            comment,
        } => {
            let new = new_comment(comment)?;
            let written = client.add_run_comment(&review, &run, &new).await?;
            report_comment(&written, output);
        }
        RunsCommand::Finish {
            review,
            run,
            status,
            summary,
        } => {
            let status = RunStatus::parse(&status)
                .filter(|status| *status != RunStatus::Running)
                .ok_or_else(|| {
                    Failure::new(
                        2,
                        format!("`{status}`: finish as completed, failed or cancelled"),
                    )
                })?;
            let run = client
                .finish_run(
                    &review,
                    &run,
                    &FinishRun {
                        status,
                        summary,
                        base_comments_revision: None,
                    },
                )
                .await?;
            if output.json {
                print_json(&run);
            } else {
                println!(
                    "Run {} {} with {} comments.",
                    run.id,
                    run.status,
                    run.comment_ids.len()
                );
            }
        }
    }
    Ok(())
}

pub async fn search(command: SearchCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        SearchCommand::Comments { words, review } => {
            let found = client
                .search_comments(&CommentSearchQuery {
                    q: Some(words),
                    review_id: review,
                    ..CommentSearchQuery::default()
                })
                .await?;
            if output.json {
                print_json(&found);
            } else {
                for hit in &found.results {
                    println!(
                        "{} {}  [{}] {}: {}",
                        hit.review_id,
                        hit.comment_id,
                        hit.status,
                        hit.author.display_name,
                        plain(&hit.snippet)
                    );
                }
            }
        }
        SearchCommand::Docs { words } => {
            let found = client
                .search_docs(&DocSearchQuery {
                    q: Some(words),
                    ..DocSearchQuery::default()
                })
                .await?;
            if output.json {
                print_json(&found);
            } else {
                for hit in &found.results {
                    println!(
                        "{}  {}: {}",
                        hit.review.review_id,
                        hit.review.title,
                        plain(&hit.snippet)
                    );
                }
            }
        }
    }
    Ok(())
}

pub async fn tokens(command: TokensCommand, output: &Output) -> Outcome {
    let client = signed_in_client()?;
    match command {
        TokensCommand::List => {
            let list = client.my_tokens(&PageQuery::default()).await?;
            if output.json {
                print_json(&list);
            } else {
                for token in &list.tokens {
                    let scopes: Vec<_> = token.scopes.iter().map(|s| s.as_str()).collect();
                    let state = token.revoked_at.as_ref().map_or_else(
                        || format!("expires {}", token.expires_at),
                        |at| format!("revoked {at}"),
                    );
                    println!(
                        "{}  {}  [{}]  {state}",
                        token.id,
                        token.name,
                        scopes.join(",")
                    );
                }
            }
        }
        TokensCommand::Revoke { token } => {
            let revoked = client.revoke_my_token(&token).await?;
            if output.json {
                print_json(&revoked);
            } else {
                println!("Revoked {}.", revoked.id);
            }
        }
    }
    Ok(())
}

/// `docreview mcp`: the MCP server, with this terminal's credentials.
pub async fn mcp() -> Outcome {
    let client = signed_in_client()?;
    crate::mcp::serve(client)
        .await
        .map_err(|error| Failure::error(format!("the MCP session ended: {error:#}")))
}

/// A search snippet as terminal text: its `<mark>`s as brackets, entities decoded.
fn plain(snippet: &str) -> String {
    snippet
        .replace("<mark>", "[")
        .replace("</mark>", "]")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
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
