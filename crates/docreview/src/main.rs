//! The `docreview` binary: the server, the operator commands, and the command-line client.
#![allow(
    clippy::doc_markdown,
    reason = "doc comments here are mostly user-facing text (clap's --help, MCP tool and field \
              descriptions), shown verbatim rather than rendered as Markdown"
)]

mod config;
mod demo;
mod logging;
mod mail;
mod mcp;
mod remote;
mod webhooks;

/// mimalloc: the server allocates many short-lived strings per request from several threads,
/// where glibc's allocator spent a third of the CPU time in a read-load profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use docreview_core::Service;
use docreview_core::clock::{Clock, OffsetClock, SystemClock};
use docreview_core::identity::{Secret, SharedTokens};
use docreview_core::mail::MailSetup;
use docreview_core::model::{Scope, SharedKind};
use docreview_core::service::{NewUser, Settings};
use docreview_core::store::Store;
use docreview_store_postgres::{PgOptions, PgStore};
use docreview_store_sqlite::SqliteStore;

#[derive(Parser)]
#[command(
    name = "docreview",
    version,
    about = "Self-hostable review service for HTML documents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve(ServeArgs),
    /// Operator commands that work directly on the database (also while the server runs).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Sign in to a server from this terminal, see who you are, sign out.
    Auth {
        #[command(subcommand)]
        command: remote::AuthCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Documents: list, show, open, upload, add-version, replace, title, tags, archive, delete,
    /// share, owner.
    Reviews {
        #[command(subcommand)]
        command: remote::ReviewsCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Comments: list, add (on a quote, a section or the document), reply, edit, resolve,
    /// reopen, cancel, reanchor.
    Comments {
        #[command(subcommand)]
        command: remote::CommentsCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Agent review runs: start, comment, finish.
    Runs {
        #[command(subcommand)]
        command: remote::RunsCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Suggested changes: apply comments' suggestions as a new version.
    Suggestions {
        #[command(subcommand)]
        command: remote::SuggestionsCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Full-text search over the comments and documents you can see.
    Search {
        #[command(subcommand)]
        command: remote::SearchCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Your notifications (mentions, replies, comments on your documents), newest first.
    Notifications {
        #[command(flatten)]
        args: remote::NotificationsArgs,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Serve the Model Context Protocol over stdio, for agents (with `auth login`'s credentials
    /// or DOCREVIEW_URL and DOCREVIEW_TOKEN).
    Mcp,
    /// Your personal tokens: list, revoke.
    Tokens {
        #[command(subcommand)]
        command: remote::TokensCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Projects: list, roles, link, unlink.
    Projects {
        #[command(subcommand)]
        command: remote::ProjectsCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// The organization: members and admins.
    Org {
        #[command(subcommand)]
        command: remote::OrgCommand,
        #[command(flatten)]
        output: remote::Output,
    },
    /// Webhooks (org admins): list, create, show, update, delete, ping, rotate-secret,
    /// deliveries, redeliver.
    Webhooks {
        #[command(subcommand)]
        command: Option<remote::WebhooksCommand>,
        #[command(flatten)]
        output: remote::Output,
    },
}

#[derive(Args)]
struct StorageArgs {
    /// A TOML file of settings: the keys are this command's environment variables, written as
    /// they are (`DOCREVIEW_LISTEN = "…"`) or without the `DOCREVIEW_` prefix in lower case
    /// (`listen = "…"`). The environment and flags override the file.
    #[arg(long, env = "DOCREVIEW_CONFIG")]
    config: Option<PathBuf>,
    /// Directory for the SQLite database and anything else kept locally [default: ./data].
    #[arg(long, env = "DOCREVIEW_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// `postgres://…` selects PostgreSQL; `sqlite://PATH` an explicit SQLite file.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// PostgreSQL: most connections this node holds open.
    #[arg(long, env = "DOCREVIEW_PG_MAX_CONNECTIONS", default_value_t = 16)]
    pg_max_connections: u32,
    /// PostgreSQL: longest a single statement may run, in milliseconds (0: no limit).
    #[arg(
        long,
        env = "DOCREVIEW_PG_STATEMENT_TIMEOUT_MS",
        default_value_t = 30_000
    )]
    pg_statement_timeout_ms: u64,
    /// PostgreSQL: how long to keep retrying an unreachable database at start, in seconds.
    #[arg(long, env = "DOCREVIEW_PG_CONNECT_RETRY_SECS", default_value_t = 60)]
    pg_connect_retry_secs: u64,
}

/// Where the data lives.
enum Backend {
    Sqlite(PathBuf),
    Postgres(String),
}

#[derive(Args)]
struct ServeArgs {
    #[command(flatten)]
    storage: StorageArgs,
    /// Address to bind; port 0 picks a free port (the chosen address is printed).
    #[arg(long, env = "DOCREVIEW_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The base URL used in printed links [default: http://{listen}].
    #[arg(long, env = "DOCREVIEW_PUBLIC_URL")]
    public_url: Option<String>,
    /// Largest accepted HTML upload, in bytes (413 beyond).
    #[arg(long, env = "DOCREVIEW_MAX_HTML_BYTES", default_value_t = 10 * 1024 * 1024)]
    max_html_bytes: usize,
    /// Start on a fresh database seeded with demo users, documents and comments, and print a token.
    #[arg(long)]
    demo: bool,
    /// Connections held at once; beyond, new ones are closed.
    #[arg(long, env = "DOCREVIEW_MAX_CONNECTIONS", default_value_t = 4096)]
    max_connections: usize,
    /// Connections from one address at once (raise it behind a proxy, whose address every
    /// client shares).
    #[arg(
        long,
        env = "DOCREVIEW_MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = 256
    )]
    max_connections_per_address: usize,
    /// Seconds a client has to send a request's headers (also when idle between requests).
    #[arg(long, env = "DOCREVIEW_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    header_timeout_secs: u64,
    /// Seconds a client has to send a request's whole body, from its headers (however steadily
    /// it trickles in).
    #[arg(long, env = "DOCREVIEW_BODY_TIMEOUT_SECS", default_value_t = 120)]
    body_timeout_secs: u64,
    /// Seconds an answer may wait for the client to take any of it; then the connection is
    /// closed.
    #[arg(long, env = "DOCREVIEW_WRITE_TIMEOUT_SECS", default_value_t = 30)]
    write_timeout_secs: u64,
    /// Event streams held open at once (counted apart from connections).
    #[arg(long, env = "DOCREVIEW_MAX_STREAMS", default_value_t = 10_000)]
    max_streams: usize,
    /// Event streams held open at once from one address.
    #[arg(
        long,
        env = "DOCREVIEW_MAX_STREAMS_PER_ADDRESS",
        default_value_t = 2_048
    )]
    max_streams_per_address: usize,
    /// The shared agent token (at least 32 characters; unset disables it). Prefer the
    /// environment or the config file: flags show in the process list.
    #[arg(long, env = "DOCREVIEW_AGENT_TOKEN", hide_env_values = true)]
    agent_token: Option<String>,
    /// The shared import token (at least 32 characters; unset disables it).
    #[arg(long, env = "DOCREVIEW_IMPORT_TOKEN", hide_env_values = true)]
    import_token: Option<String>,
    /// The shared manage token (at least 32 characters; unset disables it).
    #[arg(long, env = "DOCREVIEW_MANAGE_TOKEN", hide_env_values = true)]
    manage_token: Option<String>,
    /// Request log format: one line a request at info level (RUST_LOG sets the level, e.g.
    /// `warn` to silence it).
    #[arg(long, env = "DOCREVIEW_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Serve `/metrics` (Prometheus text format) on this separate address, e.g.
    /// 127.0.0.1:9090 [default: off].
    #[arg(long, env = "DOCREVIEW_METRICS_ADDR")]
    metrics_addr: Option<SocketAddr>,
    /// Serve `/metrics` on the main listener too, to requests bearing this token (at least 32
    /// characters) [default: off].
    #[arg(long, env = "DOCREVIEW_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    /// Writes (POST, PUT, PATCH, DELETE) a minute per credential: token, shared token, or
    /// browser user; beyond, 429 `rate_limited` with Retry-After. 0: no limit.
    #[arg(
        long,
        env = "DOCREVIEW_RATE_LIMIT_WRITES_PER_CREDENTIAL",
        default_value_t = docreview_server::RateLimits::default().writes_per_credential
    )]
    rate_limit_writes_per_credential: u32,
    /// Writes a minute per client address (behind a proxy, see DOCREVIEW_TRUSTED_PROXIES).
    /// 0: no limit.
    #[arg(
        long,
        env = "DOCREVIEW_RATE_LIMIT_WRITES_PER_ADDRESS",
        default_value_t = docreview_server::RateLimits::default().writes_per_address
    )]
    rate_limit_writes_per_address: u32,
    /// Proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For names the
    /// client; from any other peer the header is ignored [default: none].
    #[arg(long, env = "DOCREVIEW_TRUSTED_PROXIES")]
    trusted_proxies: Option<String>,
    /// The mail server: smtp://[user:pass@]host:port (STARTTLS when offered; `?tls=required`
    /// insists on it) or smtps://… (TLS from the start). Unset: no mail is sent. Holds a
    /// password: prefer the environment or the config file.
    #[arg(long, env = "DOCREVIEW_SMTP_URL", hide_env_values = true)]
    smtp_url: Option<String>,
    /// The sender of every mail, e.g. `docreview <docreview@example.com>` (needed with
    /// DOCREVIEW_SMTP_URL).
    #[arg(long, env = "DOCREVIEW_MAIL_FROM")]
    mail_from: Option<String>,
    /// The hour (UTC, 0-23) daily digests are sent.
    #[arg(long, env = "DOCREVIEW_DIGEST_HOUR", default_value_t = 7,
          value_parser = clap::value_parser!(u8).range(0..=23))]
    digest_hour: u8,
    /// Let webhooks reach loopback, private and link-local addresses, and plain http:// (a
    /// receiver on the same machine or network; tests).
    #[arg(long, env = "DOCREVIEW_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: bool,
    /// Delays before each retry of a failed webhook delivery (ms, s, m, h, d); after the
    /// last, the delivery is failed and the org admins are notified.
    #[arg(long, env = "DOCREVIEW_WEBHOOK_RETRY_SCHEDULE", default_value = docreview_core::outbox::webhook::DEFAULT_RETRY_SCHEDULE)]
    webhook_retry_schedule: String,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object a line.
    Json,
}

/// Shared tokens and the metrics token shorter than this are refused at start: a short one
/// can be guessed.
const MIN_TOKEN_CHARS: usize = 32;

#[derive(Subcommand)]
enum AdminCommand {
    /// Create a user; prints the new user's id.
    CreateUser {
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// Make the user an organization administrator.
        #[arg(long)]
        admin: bool,
        /// An external member: acts only inside projects where they hold a role.
        #[arg(long)]
        external: bool,
        /// Read a password for browser sign-in from standard input.
        #[arg(long)]
        password_stdin: bool,
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Give a member a password for browser sign-in (or replace theirs), read from standard
    /// input; e.g. for an external member an admin registered.
    SetPassword {
        #[arg(long)]
        email: String,
        /// Read the new password from standard input (the only way: never on the command line).
        #[arg(long, required = true)]
        password_stdin: bool,
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// List the members: email, name, membership, status and whether they are admins.
    ListUsers {
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// List a member's personal tokens in use: id, name, scopes, expiry, last use.
    ListTokens {
        #[arg(long)]
        email: String,
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Revoke a personal token by its id (`tok_…`, as `list-tokens` shows it).
    RevokeToken {
        /// The token's id (tok_…), not its value.
        token_id: String,
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Apply pending schema migrations and exit (for operators who migrate before rolling out).
    Migrate {
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Load a project snapshot `{ "projects": [{ "code", "name", "company", "status" }] }`:
    /// listed projects are in the snapshot, every other known project drops out of it.
    ImportProjects {
        /// The snapshot file (JSON); `-` reads standard input.
        file: PathBuf,
        #[command(flatten)]
        storage: StorageArgs,
    },
    /// Issue a personal token; prints its value alone (the only time it is ever shown).
    IssueToken {
        #[arg(long)]
        email: String,
        /// Comma-separated: docs, access, comments, org [default: comments].
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
        #[arg(long)]
        name: Option<String>,
        /// Days until the token expires, 1 to 90 [default: 90].
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=90))]
        expires_in_days: Option<i64>,
        #[command(flatten)]
        storage: StorageArgs,
    },
}

fn main() -> std::process::ExitCode {
    let cli = match config::parse_cli() {
        Ok(cli) => cli,
        Err(error) => {
            eprintln!("error: {error:#}");
            return std::process::ExitCode::from(2);
        }
    };
    let json = matches!(&cli.command, Command::Serve(args) if args.log_format == LogFormat::Json);
    logging::init(json);
    let code = run(cli);
    logging::flush();
    code
}

fn run(cli: Cli) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: could not start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // The server and operator commands fail with 1; the client commands answer with their own
    // exit codes (see `remote`).
    if !matches!(
        cli.command,
        Command::Serve(_) | Command::Admin { .. } | Command::Mcp
    ) {
        remote::end_quietly_on_closed_pipe();
    }
    let outcome = match cli.command {
        Command::Serve(args) => return operator_exit(runtime.block_on(serve(args))),
        Command::Admin { command } => return operator_exit(runtime.block_on(admin(command))),
        Command::Auth { command, output } => runtime.block_on(remote::auth(command, &output)),
        Command::Reviews { command, output } => runtime.block_on(remote::reviews(command, &output)),
        Command::Comments { command, output } => {
            runtime.block_on(remote::comments(command, &output))
        }
        Command::Runs { command, output } => runtime.block_on(remote::runs(command, &output)),
        Command::Search { command, output } => runtime.block_on(remote::search(command, &output)),
        Command::Suggestions { command, output } => {
            runtime.block_on(remote::suggestions(command, &output))
        }
        Command::Notifications { args, output } => {
            runtime.block_on(remote::notifications(args, &output))
        }
        Command::Tokens { command, output } => runtime.block_on(remote::tokens(command, &output)),
        Command::Projects { command, output } => {
            runtime.block_on(remote::projects(command, &output))
        }
        Command::Org { command, output } => runtime.block_on(remote::org(command, &output)),
        Command::Webhooks { command, output } => runtime.block_on(remote::webhooks(
            command.unwrap_or(remote::WebhooksCommand::List),
            &output,
        )),
        Command::Mcp => runtime.block_on(remote::mcp()),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

fn operator_exit(outcome: anyhow::Result<()>) -> std::process::ExitCode {
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            logging::flush();
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The backend named by `DATABASE_URL`, else SQLite in the data directory.
fn backend(storage: &StorageArgs, data_dir: &Path) -> anyhow::Result<Backend> {
    match storage.database_url.as_deref() {
        None | Some("") => Ok(Backend::Sqlite(data_dir.join("docreview.db"))),
        Some(url) => match url.split_once("://") {
            Some(("sqlite", path)) if !path.is_empty() => Ok(Backend::Sqlite(PathBuf::from(path))),
            Some(("postgres" | "postgresql", _)) => Ok(Backend::Postgres(url.to_string())),
            _ => bail!(
                "DATABASE_URL must be postgres://… or sqlite://PATH (or unset to use the data directory)"
            ),
        },
    }
}

/// Opens the store, applying pending migrations.
async fn open_store(backend: &Backend, storage: &StorageArgs) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match backend {
        Backend::Sqlite(path) => Arc::new(
            SqliteStore::open(path)
                .with_context(|| format!("opening the database {}", path.display()))?,
        ),
        Backend::Postgres(url) => {
            let options = PgOptions {
                max_connections: storage.pg_max_connections,
                statement_timeout: Duration::from_millis(storage.pg_statement_timeout_ms),
                retry_for: Duration::from_secs(storage.pg_connect_retry_secs),
                ..PgOptions::default()
            };
            let store = PgStore::connect(url, options).await.with_context(|| {
                format!(
                    "connecting to {}",
                    docreview_store_postgres::redact_url(url)
                )
            })?;
            Arc::new(store)
        }
    })
}

fn describe(backend: &Backend) -> String {
    match backend {
        Backend::Sqlite(path) => path.display().to_string(),
        Backend::Postgres(url) => docreview_store_postgres::redact_url(url),
    }
}

fn service_on(
    store: Arc<dyn Store>,
    shared: SharedTokens,
    max_html_bytes: usize,
    mail: Option<MailSetup>,
    public_url: Option<String>,
) -> Arc<Service> {
    let mut settings = Settings {
        max_html_bytes,
        mail,
        ..Settings::default()
    };
    if let Some(public_url) = public_url {
        settings.public_url = public_url;
    }
    Arc::new(Service::new(store, clock(), shared, settings))
}

/// The wall clock; moved by `DOCREVIEW_CLOCK_OFFSET_SECS` when set, which only the test suite
/// does (to issue tokens that have already expired).
fn clock() -> Arc<dyn Clock> {
    match std::env::var("DOCREVIEW_CLOCK_OFFSET_SECS")
        .ok()
        .and_then(|secs| secs.parse::<i64>().ok())
    {
        Some(secs) => Arc::new(OffsetClock(secs.saturating_mul(1000))),
        None => Arc::new(SystemClock),
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let data_dir = match (&args.storage.data_dir, args.demo) {
        (Some(dir), _) => dir.clone(),
        (None, true) => demo::fresh_data_dir()?,
        (None, false) => PathBuf::from("./data"),
    };
    // A demo's throwaway database goes when the server stops (however `serve` returns).
    let _throwaway =
        (args.demo && args.storage.data_dir.is_none()).then(|| demo::Throwaway(data_dir.clone()));
    let backend = backend(&args.storage, &data_dir)?;
    match &backend {
        Backend::Sqlite(path) if args.demo && path.exists() => bail!(
            "--demo needs a fresh database, but {} already exists; pick another --data-dir",
            path.display()
        ),
        Backend::Postgres(_) if args.demo => {
            bail!("--demo seeds a fresh SQLite database; unset DATABASE_URL to use it")
        }
        _ => {}
    }
    let shared = shared_tokens(&args)?;
    let trusted_proxies = docreview_server::TrustedProxies::parse(
        args.trusted_proxies.as_deref().unwrap_or_default(),
    )
    .map_err(|error| anyhow::anyhow!("DOCREVIEW_TRUSTED_PROXIES: {error}"))?;
    let metrics_token = match args.metrics_token.as_deref() {
        None | Some("") => None,
        Some(token) => Some(long_enough("DOCREVIEW_METRICS_TOKEN", token)?),
    };
    // The recorder is installed only when something reads it (without, counting costs
    // nothing), and before the store opens, so its first writes count too.
    let recorder = if args.metrics_addr.is_some() || metrics_token.is_some() {
        Some(docreview_server::telemetry::install().map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    // Bound before the service is made: mail links need the address when no public URL is set.
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let address = listener.local_addr()?;
    let base_url = args
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{address}"));
    let mail = mail_setup(&args, &base_url)?;
    let service = service_on(
        open_store(&backend, &args.storage).await?,
        shared,
        args.max_html_bytes,
        mail,
        Some(base_url.trim_end_matches('/').to_string()),
    );
    let retry_schedule = docreview_core::outbox::parse_schedule(&args.webhook_retry_schedule)
        .map_err(|error| anyhow::anyhow!("DOCREVIEW_WEBHOOK_RETRY_SCHEDULE: {error}"))?;
    let transport = webhooks::HttpTransport::new(args.webhook_allow_private)
        .context("setting up webhook deliveries")?;
    let service = Arc::new(
        Arc::into_inner(service)
            .context("the service is not shared yet")?
            .with_webhooks(docreview_core::service::WebhookSettings {
                transport: Some(Arc::new(transport)),
                retry_schedule,
            }),
    );
    service.ensure_service_accounts().await?;
    // Accounts made before handles existed get theirs before the first request is served.
    let assigned = service.assign_missing_handles().await?;
    if assigned > 0 {
        tracing::info!(count = assigned, "gave older accounts their handles");
    }
    if args.demo {
        let seeded = demo::seed(&service)
            .await
            .context("seeding the demo data")?;
        demo::print_welcome(&base_url, &data_dir, &seeded);
    }
    let stop = shutdown_signal();
    let metrics_server = match (args.metrics_addr, &recorder) {
        (Some(metrics_addr), Some(handle)) => {
            if !metrics_addr.ip().is_loopback() {
                tracing::warn!(%metrics_addr, "/metrics is served on a non-loopback address; keep it off the public network");
            }
            let listener = tokio::net::TcpListener::bind(metrics_addr)
                .await
                .with_context(|| format!("binding the metrics address {metrics_addr}"))?;
            let bound = listener.local_addr()?;
            println!("docreview metrics on http://{bound}/metrics");
            let app = docreview_server::telemetry::router(Arc::clone(&service), handle.clone());
            Some(tokio::spawn(docreview_server::serve(
                listener,
                app,
                docreview_server::ConnectionLimits::default(),
                std::future::pending(),
            )))
        }
        _ => None,
    };
    println!("docreview listening on http://{address}");
    tracing::info!(%address, database = %describe(&backend), "docreview started");

    let sweeper = tokio::spawn(sweep_stale_runs(Arc::clone(&service)));
    // Delivers what changes leave in the outbox (on every node; each row goes to one).
    let outbox_workers = docreview_core::outbox::worker::start(&service);
    tokio::spawn(backfill_search(Arc::clone(&service)));
    // The signal also ends open event streams, which would otherwise hold shutdown open.
    let shutdown = tokio_util::sync::CancellationToken::new();
    let web = docreview_server::WebSettings::for_public_url(args.public_url.as_deref());
    let operations = docreview_server::Operations {
        rate_limits: docreview_server::RateLimits {
            writes_per_credential: args.rate_limit_writes_per_credential,
            writes_per_address: args.rate_limit_writes_per_address,
        },
        trusted_proxies,
        metrics: match (metrics_token, recorder) {
            (Some(token), Some(handle)) => Some(docreview_server::MetricsPage {
                handle,
                token: Some(Arc::new(token)),
            }),
            _ => None,
        },
    };
    let app = docreview_server::app(service, shutdown.clone(), web, operations);
    let limits = docreview_server::ConnectionLimits {
        total: args.max_connections.max(1),
        per_address: args.max_connections_per_address.max(1),
        header_timeout: Duration::from_secs(args.header_timeout_secs.max(1)),
        body_timeout: Duration::from_secs(args.body_timeout_secs.max(1)),
        write_timeout: Duration::from_secs(args.write_timeout_secs.max(1)),
        streams_total: args.max_streams.max(1),
        streams_per_address: args.max_streams_per_address.max(1),
    };
    let (limits, fitted) = limits.fit_to_open_files();
    if let Some(fitted) = fitted {
        tracing::warn!("{fitted}");
    }
    docreview_server::serve(listener, app, limits, async move {
        stop.await;
        shutdown.cancel();
    })
    .await;
    sweeper.abort();
    drop(outbox_workers);
    if let Some(metrics_server) = metrics_server {
        metrics_server.abort();
    }
    Ok(())
}

/// Mail as configured: both the server and the sender, or neither (then no mail).
fn mail_setup(args: &ServeArgs, base_url: &str) -> anyhow::Result<Option<MailSetup>> {
    let url = args.smtp_url.as_deref().filter(|url| !url.is_empty());
    let from = args.mail_from.as_deref().filter(|from| !from.is_empty());
    let (url, from) = match (url, from) {
        (None, None) => return Ok(None),
        (Some(url), Some(from)) => (url, from),
        (Some(_), None) => bail!("DOCREVIEW_SMTP_URL is set: set DOCREVIEW_MAIL_FROM too"),
        (None, Some(_)) => bail!("DOCREVIEW_MAIL_FROM is set: set DOCREVIEW_SMTP_URL too"),
    };
    let mailer = mail::SmtpMailer::new(url, from)?;
    Ok(Some(MailSetup {
        mailer: Arc::new(mailer),
        public_url: base_url.trim_end_matches('/').to_string(),
        digest_hour: args.digest_hour,
    }))
}

/// The shared tokens configured, each at least `MIN_TOKEN_CHARS` long (empty means unset).
fn shared_tokens(args: &ServeArgs) -> anyhow::Result<SharedTokens> {
    let mut configured = Vec::new();
    for (kind, variable, value) in [
        (
            SharedKind::Agent,
            "DOCREVIEW_AGENT_TOKEN",
            &args.agent_token,
        ),
        (
            SharedKind::Import,
            "DOCREVIEW_IMPORT_TOKEN",
            &args.import_token,
        ),
        (
            SharedKind::Manage,
            "DOCREVIEW_MANAGE_TOKEN",
            &args.manage_token,
        ),
    ] {
        match value.as_deref() {
            None | Some("") => {}
            Some(value) => configured.push((kind, long_enough(variable, value)?)),
        }
    }
    Ok(SharedTokens::new(configured))
}

/// `value` as a secret, if it is long enough to be one.
fn long_enough(variable: &str, value: &str) -> anyhow::Result<Secret> {
    let length = value.chars().count();
    if length < MIN_TOKEN_CHARS {
        bail!(
            "{variable} is {length} characters long; tokens must have at least {MIN_TOKEN_CHARS} \
             (make one with `openssl rand -hex 32`)"
        );
    }
    Ok(Secret::new(value.to_string()))
}

/// Makes documents created before search existed searchable by their text too.
async fn backfill_search(service: Arc<Service>) {
    match service.backfill_search_text().await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "indexed the text of older documents for search"),
        Err(error) => {
            tracing::warn!(
                error = error.detail(),
                "could not index older documents for search"
            );
        }
    }
}

/// Fails runs left running for a day, once a minute; idempotent, so every node may run it.
async fn sweep_stale_runs(service: Arc<Service>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        match service.expire_stale_runs().await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "failed runs left running for 24 hours"),
            Err(error) => tracing::warn!(error = error.detail(), "could not sweep stale runs"),
        }
    }
}

/// Listens for Ctrl-C and SIGTERM from the moment it is called (not from the first poll), so a
/// stop sent right after the server says it listens still shuts it down gracefully.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    let interrupt = tokio::signal::ctrl_c();
    async move {
        #[cfg(unix)]
        let terminate = async {
            match terminate {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        tokio::select! {
            _ = interrupt => {},
            () = terminate => {},
        }
        tracing::info!("shutting down");
    }
}

async fn admin(command: AdminCommand) -> anyhow::Result<()> {
    match command {
        AdminCommand::CreateUser {
            email,
            name,
            admin,
            external,
            password_stdin,
            storage,
        } => {
            let password_hash = if password_stdin {
                let password = read_password()?;
                Some(
                    docreview_core::identity::hash_new_password(&password)
                        .map_err(anyhow::Error::msg)?,
                )
            } else {
                None
            };
            let service = open_admin_service(&storage).await?;
            let account = service
                .create_user(NewUser {
                    email,
                    display_name: name,
                    admin,
                    external,
                    password_hash,
                })
                .await?;
            println!("{}", account.user.id);
        }
        AdminCommand::SetPassword {
            email,
            password_stdin: _,
            storage,
        } => {
            let password = read_password()?;
            let service = open_admin_service(&storage).await?;
            let account = service.set_password(&email, &password).await?;
            println!("{} can now sign in with that password", account.email);
        }
        AdminCommand::ListUsers { storage } => {
            let service = open_admin_service(&storage).await?;
            println!("EMAIL\tNAME\tMEMBERSHIP\tSTATUS\tADMIN");
            for account in service.all_users().await? {
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    account.email,
                    account.user.display_name,
                    account.membership,
                    account.status,
                    if account.is_admin { "yes" } else { "no" }
                );
            }
        }
        AdminCommand::ListTokens { email, storage } => {
            let service = open_admin_service(&storage).await?;
            println!("ID\tNAME\tSCOPES\tEXPIRES\tLAST USED");
            for token in service.tokens_of_member(&email).await? {
                let scopes: Vec<&str> = token.scopes.iter().map(|scope| scope.as_str()).collect();
                println!(
                    "{}\t{}\t{}\t{}\t{}",
                    token.id,
                    token.name,
                    scopes.join(","),
                    docreview_core::clock::rfc3339(token.expires_at),
                    token
                        .last_used_at
                        .map_or_else(|| "never".to_string(), docreview_core::clock::rfc3339)
                );
            }
        }
        AdminCommand::RevokeToken { token_id, storage } => {
            let service = open_admin_service(&storage).await?;
            service.revoke_token_by_id(&token_id).await?;
            println!("{token_id} is revoked; it stops working at once");
        }
        AdminCommand::IssueToken {
            email,
            scopes,
            name,
            expires_in_days,
            storage,
        } => {
            let scopes = scopes
                .iter()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .map(|s| {
                    Scope::parse(s).with_context(|| {
                        format!("unknown scope `{s}`; use docs, access, comments, org")
                    })
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let service = open_admin_service(&storage).await?;
            let issued = service
                .issue_token(&email, scopes, name, expires_in_days)
                .await?;
            println!("{}", issued.value.expose());
        }
        AdminCommand::ImportProjects { file, storage } => {
            let text = if file.as_os_str() == "-" {
                let mut text = String::new();
                std::io::stdin()
                    .read_to_string(&mut text)
                    .context("reading the snapshot from standard input")?;
                text
            } else {
                std::fs::read_to_string(&file)
                    .with_context(|| format!("reading {}", file.display()))?
            };
            let snapshot = serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not a project snapshot {{ \"projects\": [{{ \"code\", \"name\", \"company\", \"status\" }}] }}",
                    file.display()
                )
            })?;
            let service = open_admin_service(&storage).await?;
            let imported = service.import_projects(snapshot).await?;
            println!(
                "imported {} projects: {} new, {} updated; {} no longer in the snapshot",
                imported.added + imported.updated,
                imported.added,
                imported.updated,
                imported.dropped
            );
        }
        AdminCommand::Migrate { storage } => {
            let backend = admin_backend(&storage)?;
            open_store(&backend, &storage).await?;
            println!("the schema of {} is up to date", describe(&backend));
        }
    }
    Ok(())
}

fn admin_backend(storage: &StorageArgs) -> anyhow::Result<Backend> {
    let data_dir = storage
        .data_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("./data"));
    backend(storage, &data_dir)
}

async fn open_admin_service(storage: &StorageArgs) -> anyhow::Result<Arc<Service>> {
    let store = open_store(&admin_backend(storage)?, storage).await?;
    Ok(service_on(
        store,
        SharedTokens::default(),
        Settings::default().max_html_bytes,
        None,
        None,
    ))
}

fn read_password() -> anyhow::Result<String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("reading the password from standard input")?;
    // The rule a password must meet is core's (identity::password_problem), checked where it
    // is set.
    Ok(input.trim_end_matches(['\r', '\n']).to_string())
}
