//! The use cases: one method per API operation, taking the caller's `Actor` and deciding access.

mod accounts;
mod comments;
mod export;
mod find;
mod invitations;
mod mail;
mod manage;
mod notifications;
mod org;
mod outbox;
mod page;
mod projects;
mod render;
pub use comments::WriteBase;
pub use render::{ReviewReading, Stamp};
mod reviews;
mod runs;
mod search;
mod suggestions;
mod versions;
mod webhooks;
mod workflow;

use std::sync::Arc;

pub use accounts::{CliLoginRequest, IssuedToken, NewUser, SignedIn, service_account};
pub use projects::{ProjectSnapshot, SnapshotProject, SnapshotStatus};
pub use reviews::{HtmlUpload, VersionMode, VersionUpload};
pub use versions::{TextChange, TextChangeKind, VersionCounts};
pub use webhooks::WebhookSettings;

use crate::access::{self, Actor};
use crate::cache::BoundedCache;
use tokio::sync::broadcast;

use crate::clock::{Clock, Entropy, OsEntropy};
use crate::error::{Error, Result};
use crate::events::{EventKind, ReviewEvent};
use crate::identity::SharedTokens;
use crate::limit::FailureLimiter;
use crate::model::{Millis, ProjectRole, ReviewHead, Role, VersionRecord};
use crate::store::Store;
use crate::texts::{TextCache, VersionText};

/// A write without `baseCommentsRevision` applies to whatever is current; when another write
/// slips in between our read and our write, we read again, at most this many times.
pub(crate) const MAX_ATTEMPTS: usize = 64;

pub struct Settings {
    pub max_html_bytes: usize,
    pub text_cache_bytes: usize,
    /// Mail delivery; `None`: no mail is written or sent, and everything else works.
    pub mail: Option<crate::mail::MailSetup>,
    /// The base of links the service hands out (an invitation's `acceptUrl`), without a
    /// trailing slash.
    pub public_url: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_html_bytes: 10 * 1024 * 1024,
            text_cache_bytes: 32 * 1024 * 1024,
            mail: None,
            public_url: "http://127.0.0.1:8080".to_string(),
        }
    }
}

pub struct Service {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    entropy: Arc<dyn Entropy>,
    shared: SharedTokens,
    texts: TextCache,
    /// Records of recently read documents (see `render`).
    states: BoundedCache<render::KeptState>,
    settings: Settings,
    /// Failed command-line code exchanges, per client address.
    failed_code_exchanges: FailureLimiter,
    /// Failed password sign-ins per account and address: one person's typos behind an
    /// office's shared address lock out only that person, there.
    failed_sign_ins: FailureLimiter,
    /// Failed password sign-ins per address over every account (guessing at many accounts).
    failed_sign_ins_from: FailureLimiter,
    /// Password reset requests per email as typed, known or not (so the limit tells nothing):
    /// nobody floods a mailbox with reset mails.
    reset_requests: FailureLimiter,
    /// This node's claims on the outbox, and its workers' wake-ups.
    outbox: outbox::OutboxState,
    /// How webhooks are delivered (`with_webhooks`).
    webhooks: webhooks::WebhookSettings,
}

impl Service {
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        shared: SharedTokens,
        settings: Settings,
    ) -> Self {
        let texts = TextCache::new(settings.text_cache_bytes);
        let states = BoundedCache::new(render::STATE_CACHE_BYTES);
        let node = crate::ids::new_id("node_", clock.now(), &OsEntropy);
        Service {
            outbox: outbox::OutboxState::new(node),
            webhooks: webhooks::WebhookSettings::default(),
            states,
            store,
            clock,
            entropy: Arc::new(OsEntropy),
            shared,
            texts,
            settings,
            failed_code_exchanges: FailureLimiter::new(accounts::MAX_FAILURES_PER_MINUTE, 60_000),
            failed_sign_ins: FailureLimiter::new(accounts::MAX_FAILURES_PER_MINUTE, 60_000),
            failed_sign_ins_from: FailureLimiter::new(
                accounts::MAX_FAILED_SIGN_INS_PER_ADDRESS,
                60_000,
            ),
            reset_requests: FailureLimiter::new(invitations::RESET_REQUESTS_PER_HOUR, 3_600_000),
        }
    }

    /// The same service drawing its ids and secrets from `entropy` (tests; production uses
    /// the operating system's).
    #[must_use]
    pub fn with_entropy(self, entropy: Arc<dyn Entropy>) -> Self {
        Service { entropy, ..self }
    }

    /// A new id of the kind `prefix` names, made at `now`.
    fn new_id(&self, prefix: &str, now: Millis) -> String {
        crate::ids::new_id(prefix, now, &*self.entropy)
    }

    /// Live changes of one document the caller can see: its current state first, then every
    /// change committed from now on (the receiver carries every document's; filter by id).
    pub async fn watch(
        &self,
        actor: &Actor,
        review_id: &str,
    ) -> Result<(ReviewEvent, broadcast::Receiver<ReviewEvent>)> {
        access::permit(actor, access::Operation::Read)?;
        // Subscribe before reading the state, so no change can fall between the two.
        let receiver = self.store.subscribe();
        let (head, _) = self.visible(actor, review_id).await?;
        let review = head.review;
        let current = ReviewEvent {
            kind: EventKind::Review,
            review_id: review.id,
            comments_revision: review.comments_revision,
            structure_revision: review.structure_revision,
            latest_version_id: review.latest_version_id,
            change_seq: review.change_seq,
        };
        Ok((current, receiver))
    }

    /// The ids of the people whose notifications change from now on, through any node.
    pub fn watch_people(&self) -> broadcast::Receiver<String> {
        self.store.subscribe_people()
    }

    /// Indexes the text of documents created before search existed, a batch at a time; returns
    /// how many were indexed. Idempotent, so every node may run it.
    pub async fn backfill_search_text(&self) -> Result<usize> {
        let mut indexed = 0;
        let mut seen = std::collections::HashSet::new();
        loop {
            let missing = self.store.reviews_without_search_text(64).await?;
            // A document offered again was not indexed by our write: stop rather than spin.
            if missing.is_empty() || missing.iter().all(|(id, _)| seen.contains(id)) {
                return Ok(indexed);
            }
            for (review_id, version_id) in missing {
                seen.insert(review_id.clone());
                let text = match self.store.version_html(&review_id, &version_id).await? {
                    Some((_, html)) => parse_html(html).await?.search_text(),
                    None => String::new(),
                };
                self.store
                    .set_search_text(&review_id, &version_id, text)
                    .await?;
                indexed += 1;
            }
        }
    }

    /// Readiness: whether the database answers.
    pub async fn ready(&self) -> Result<()> {
        Ok(self.store.ping().await?)
    }

    pub fn max_html_bytes(&self) -> usize {
        self.settings.max_html_bytes
    }

    pub fn now(&self) -> crate::model::Millis {
        self.clock.now()
    }

    /// See `Store::share_rate_counts`.
    pub async fn share_rate_counts(
        &self,
        window: crate::model::Millis,
        counts: Vec<(String, i64)>,
    ) -> Result<Option<Vec<(String, i64)>>> {
        Ok(self.store.share_rate_counts(window, counts).await?)
    }

    /// The store's connection pool right now (for `/metrics`).
    pub fn pool_usage(&self) -> crate::store::PoolUsage {
        self.store.pool_usage()
    }

    /// Loads a document and the caller's role on it; 404 when it is missing or invisible.
    async fn visible(&self, actor: &Actor, review_id: &str) -> Result<(ReviewHead, Role)> {
        let head = self
            .store
            .review_head(review_id)
            .await?
            .ok_or(Error::NotFound("document"))?;
        let (role, _) = self.access_of(actor, &head).await?;
        Ok((head, role))
    }

    /// The caller's role on a document they can see (else 404), and their role in its project.
    async fn access_of(
        &self,
        actor: &Actor,
        head: &ReviewHead,
    ) -> Result<(Role, Option<ProjectRole>)> {
        let project_role = self.project_role_of(actor, head).await?;
        let role = access::visible_role(actor, head, project_role)?;
        Ok((role, project_role))
    }

    /// The caller's role in the project the document is linked to (a point lookup, made only
    /// for linked documents and members).
    async fn project_role_of(
        &self,
        actor: &Actor,
        head: &ReviewHead,
    ) -> Result<Option<ProjectRole>> {
        match (&head.review.project_code, &actor.credential) {
            (
                Some(code),
                access::Credential::Personal { .. } | access::Credential::Session { .. },
            ) => Ok(self.store.project_role(code, actor.id()).await?),
            _ => Ok(None),
        }
    }

    /// The parsed text of a version, from the cache or parsed now (off the async threads).
    async fn version_text(
        &self,
        review_id: &str,
        version_id: &str,
        source_hash: &str,
    ) -> Result<Arc<VersionText>> {
        if let Some(text) = self.texts.get(source_hash) {
            return Ok(text);
        }
        let (version, html) = self
            .store
            .version_html(review_id, version_id)
            .await?
            .ok_or(Error::NotFound("version"))?;
        let text = Arc::new(parse_html(html).await?);
        self.texts.insert(&version.source_hash, Arc::clone(&text));
        Ok(text)
    }

    /// Rejects a write aimed at a version other than the latest.
    async fn require_latest(&self, head: &ReviewHead, version_id: Option<&str>) -> Result<()> {
        let Some(version_id) = version_id else {
            return Ok(());
        };
        if version_id == head.review.latest_version_id {
            return Ok(());
        }
        let known: Option<VersionRecord> = self.store.version(&head.review.id, version_id).await?;
        match known {
            Some(_) => Err(Error::StaleVersion {
                latest: head.review.latest_version_id.clone(),
            }),
            None => Err(Error::invalid(format!(
                "version `{version_id}` is not a version of this document"
            ))),
        }
    }
}

/// Parses HTML on the blocking pool: a large body takes milliseconds of CPU.
async fn parse_html(html: Vec<u8>) -> Result<VersionText> {
    tokio::task::spawn_blocking(move || VersionText::from_html(&String::from_utf8_lossy(&html)))
        .await
        .map_err(|error| Error::Internal(Box::new(error)))
}

/// 409 `comments revision conflict` when the client's base is not the current revision.
fn check_base(base: Option<i64>, current: i64) -> Result<()> {
    match base {
        Some(base) if base != current => Err(Error::RevisionConflict { current }),
        _ => Ok(()),
    }
}

/// Evaluates `attempt` (an `async { … }.await` expression) again while it loses a race it may
/// retry: only writes without a base revision may be re-applied to a newer state; with a base,
/// the conflict is the caller's answer. A macro, not a function taking an async closure, because
/// each attempt must be a fresh future that borrows the caller's locals.
macro_rules! retrying {
    ($base:expr, $attempt:expr) => {{
        let mut tries = 1;
        loop {
            match $attempt {
                Err($crate::error::Error::RevisionConflict { .. })
                    if $base.is_none() && tries < $crate::service::MAX_ATTEMPTS =>
                {
                    // Seen on /metrics: writes without a base revision that had to try again
                    // (new comments and replies never should; see `on_latest_version`).
                    ::metrics::counter!("docreview_comment_write_retries_total").increment(1);
                    tries += 1
                }
                outcome => break outcome,
            }
        }
    }};
}
pub(crate) use retrying;

/// Checks a text field's length in characters.
fn check_length(field: &str, value: &str, min: usize, max: usize) -> Result<()> {
    // NUL has no use in text, and PostgreSQL cannot store it: refuse it here, for both backends.
    if value.contains('\0') {
        return Err(Error::invalid(format!(
            "{field} must not contain NUL characters"
        )));
    }
    let length = value.chars().count();
    if length < min || length > max {
        return Err(Error::invalid(format!(
            "{field} must be {min} to {max} characters (got {length})"
        )));
    }
    Ok(())
}
