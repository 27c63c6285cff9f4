//! `serve --demo`: a fresh database with an organization, documents, versions, comments and a
//! finished agent run, so a newcomer can drive the API with curl within a minute.

use docreview_api::{
    CreateReview, FinishRun, NewComment, NewReply, RolesChange, StartRun, StatusChange,
};
use std::path::{Path, PathBuf};

use anyhow::Context;
use docreview_client::api::Quote;
use docreview_core::Service;
use docreview_core::access::{Actor, Credential};
use docreview_core::anchor::Locator;
use docreview_core::identity::Secret;
use docreview_core::model::{Category, CommentStatus, RunStatus, Scope, SharedKind};
use docreview_core::service::{
    NewUser, ProjectSnapshot, VersionMode, VersionUpload, service_account,
};

pub struct Seeded {
    pub token: Secret,
    pub review_id: String,
}

/// Ada's password for browser sign-in (a demo on a throwaway database, printed on start).
pub const DEMO_PASSWORD: &str = "demo-password";

/// The demo's data directory, removed when dropped.
pub struct Throwaway(pub PathBuf);

impl Drop for Throwaway {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir_all(&self.0) {
            eprintln!(
                "could not remove the demo data in {}: {error}",
                self.0.display()
            );
        }
    }
}

/// A new, empty directory under the system's temporary directory, its owner's alone whatever
/// the umask (every local user shares the temporary directory).
pub fn fresh_data_dir() -> anyhow::Result<PathBuf> {
    let mut suffix = [0u8; 6];
    docreview_core::clock::random_bytes(&mut suffix);
    let suffix: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join(format!("docreview-demo-{suffix}"));
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

const DESIGN_V1: &str = r#"<!doctype html>
<html><head><title>Caching layer design</title></head>
<body>
<h1 id="overview">Caching layer design</h1>
<p>We put a read-through cache in front of the document store so that popular reviews load in under five milliseconds.</p>
<h2 id="goals">Goals</h2>
<p>Serve repeated reads from memory. Never serve a stale comment list after a write is acknowledged.</p>
<h2 id="design">Design</h2>
<p>Entries are keyed by document id and comments revision, so a write makes old entries unreachable instead of requiring invalidation.</p>
<p>The cache holds at most 64 MiB and evicts the least recently used entry first.</p>
<h2 id="risks">Risks</h2>
<p>A cold start sends every read to the database at once.</p>
</body></html>
"#;

const DESIGN_V2: &str = r#"<!doctype html>
<html><head><title>Caching layer design</title></head>
<body>
<h1 id="overview">Caching layer design</h1>
<p>We put a read-through cache in front of the document store so that popular reviews load in under five milliseconds.</p>
<h2 id="goals">Goals</h2>
<p>Serve repeated reads from memory. Never serve a stale comment list after a write is acknowledged.</p>
<h2 id="design">Design</h2>
<p>Entries are keyed by document id and comments revision, so every write makes old entries unreachable without any invalidation.</p>
<p>The cache holds at most 128 MiB and evicts the least recently used entry first.</p>
<h2 id="rollout">Rollout</h2>
<p>We enable the cache for ten percent of traffic first and watch the p99 latency.</p>
</body></html>
"#;

const INCIDENT: &str = r#"<!doctype html>
<html><body>
<h1>Incident review: search outage</h1>
<h2 id="timeline">Timeline</h2>
<p>At 09:12 the search index stopped accepting writes. At 09:40 on-call restarted the indexer.</p>
<h2 id="cause">Root cause</h2>
<p>The disk holding the index filled up because old segments were never merged.</p>
<h2 id="actions">Actions</h2>
<p>Alert on disk usage above 80 percent. Merge segments nightly.</p>
</body></html>
"#;

fn person(service: &Service, account: docreview_core::model::Account) -> Actor {
    Actor {
        account,
        credential: Credential::Personal {
            token_id: "demo".into(),
            scopes: Scope::ALL.to_vec(),
            expires_at: service.now() + 90 * 24 * 3600 * 1000,
        },
    }
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "the value of an `Option` field, built inline"
)]
fn quote(exact: &str) -> Option<Locator> {
    Some(Locator {
        quote: Some(Quote {
            exact: exact.into(),
            prefix: String::new(),
            suffix: String::new(),
        }),
        ..Locator::default()
    })
}

fn comment(body: &str, category: Category, locator: Option<Locator>) -> NewComment {
    NewComment {
        body: body.into(),
        category: Some(category),
        locator,
        base_comments_revision: None,
        suggestion: None,
    }
}

fn create(
    html: &str,
    title: &str,
    mode: &str,
    shared_with: &[(&str, &str)],
) -> anyhow::Result<CreateReview> {
    let allowed: Vec<_> = shared_with
        .iter()
        .map(|(email, role)| serde_json::json!({ "email": email, "role": role }))
        .collect();
    Ok(serde_json::from_value(serde_json::json!({
        "review": {
            "title": title,
            "source": { "html": html, "label": "v1" },
            "access": { "mode": mode, "allowedUsers": allowed },
        }
    }))?)
}

const ROLLOUT: &str = r#"<!doctype html>
<html><body>
<h1>Acme rollout plan</h1>
<h2 id="scope">Scope</h2>
<p>We move Acme's three review teams onto docreview in two waves.</p>
<h2 id="schedule">Schedule</h2>
<p>Wave one starts on the first Monday of next month; wave two follows after a two-week soak.</p>
</body></html>
"#;

pub async fn seed(service: &Service) -> anyhow::Result<Seeded> {
    let user = async |email: &str, name: &str, admin: bool, external: bool| {
        service
            .create_user(NewUser {
                email: email.into(),
                display_name: name.into(),
                admin,
                external,
                password_hash: None,
            })
            .await
    };
    let password_hash =
        tokio::task::spawn_blocking(|| docreview_core::identity::hash_password(DEMO_PASSWORD))
            .await?
            .map_err(anyhow::Error::msg)?;
    let ada = person(
        service,
        service
            .create_user(NewUser {
                email: "ada@example.com".into(),
                display_name: "Ada Lovelace".into(),
                admin: true,
                external: false,
                password_hash: Some(password_hash),
            })
            .await?,
    );
    let grace = person(
        service,
        user("grace@example.com", "Grace Hopper", false, false).await?,
    );
    let alan = person(
        service,
        user("alan@example.com", "Alan Turing", false, false).await?,
    );
    user(
        "katherine@partner.example",
        "Katherine Johnson",
        false,
        true,
    )
    .await?;
    let agent = Actor {
        account: service_account(SharedKind::Agent),
        credential: Credential::Shared(SharedKind::Agent),
    };

    // A design document with a discussion, then a second version that moves the anchors.
    let design = service
        .create_review(
            &ada,
            create(DESIGN_V1, "Caching layer design", "link", &[])?,
        )
        .await?;
    let id = design.review_id.as_str();
    let size = service
        .add_comment(
            &grace,
            id,
            comment(
                "64 MiB seems small for our largest tenants.",
                Category::Revise,
                quote("at most 64 MiB"),
            ),
        )
        .await?;
    service
        .reply(
            &ada,
            id,
            &size.comment.id,
            NewReply {
                body: "Agreed, raising it to 128 MiB in v2.".into(),
                run_id: None,
                base_comments_revision: None,
                base_thread_revision: None,
            },
        )
        .await?;
    let cold = service
        .add_comment(
            &alan,
            id,
            comment(
                "How do we warm the cache after a deploy?",
                Category::Consult,
                quote("A cold start sends every read"),
            ),
        )
        .await?;
    service
        .add_comment(
            &grace,
            id,
            comment(
                "Nice: no invalidation needed.",
                Category::Note,
                quote("keyed by document id and comments revision"),
            ),
        )
        .await?;
    service
        .add_comment(
            &alan,
            id,
            comment(
                "Say what \"popular\" means: the top 1% of documents by reads?",
                Category::NeedsReview,
                quote("popular reviews load in under five milliseconds"),
            ),
        )
        .await?;
    service
        .add_comment(
            &grace,
            id,
            comment(
                "Add how we measure this in production (a p99 per endpoint?).",
                Category::Add,
                Some(Locator {
                    section_id: Some("goals".into()),
                    ..Locator::default()
                }),
            ),
        )
        .await?;
    service
        .add_comment(
            &alan,
            id,
            comment(
                "Overall this is ready for a first rollout once the sizing question is settled.",
                Category::Note,
                None,
            ),
        )
        .await?;
    service
        .set_status(
            &ada,
            id,
            &size.comment.id,
            StatusChange {
                status: CommentStatus::Closed,
                base_comments_revision: None,
                base_thread_revision: None,
            },
        )
        .await?;
    service
        .import_version(
            &ada,
            id,
            VersionUpload {
                html: DESIGN_V2.as_bytes().to_vec(),
                label: Some("v2".into()),
                mode: VersionMode::AddVersion,
                base_version_id: None,
            },
        )
        .await?;
    drop(cold);
    // An agent reviewed the new version: a completed run with its suggestions.
    let run = service
        .start_run(
            &agent,
            id,
            StartRun {
                title: Some("Style and clarity pass".into()),
                ..StartRun::default()
            },
        )
        .await?;
    service
        .add_run_comment(
            &agent,
            id,
            &run.id,
            comment(
                "\"Watch the p99 latency\": name the threshold that stops the rollout.",
                Category::Revise,
                quote("watch the p99 latency"),
            ),
        )
        .await?;
    service
        .add_run_comment(
            &agent,
            id,
            &run.id,
            comment(
                "\"without any invalidation\" repeats the previous sentence; consider deleting it.",
                Category::Delete,
                quote("without any invalidation"),
            ),
        )
        .await?;
    service
        .finish_run(
            &agent,
            id,
            &run.id,
            FinishRun {
                status: RunStatus::Completed,
                summary: Some("2 suggestions on wording".into()),
                base_comments_revision: None,
            },
        )
        .await?;

    // A restricted incident review, shared with Grace, reviewed by an agent run.
    let incident = service
        .create_review(
            &ada,
            create(
                INCIDENT,
                "Incident review: search outage",
                "restricted",
                &[("grace@example.com", "editor")],
            )?,
        )
        .await?;
    let incident_id = incident.review_id.as_str();
    let run = service
        .start_run(
            &agent,
            incident_id,
            StartRun {
                title: Some("Automated review".into()),
                ..StartRun::default()
            },
        )
        .await?;
    service
        .add_run_comment(
            &agent,
            incident_id,
            &run.id,
            comment(
                "Which alert fired first, if any?",
                Category::NeedsReview,
                quote("At 09:12 the search index stopped accepting writes."),
            ),
        )
        .await?;
    service
        .add_run_comment(
            &agent,
            incident_id,
            &run.id,
            comment(
                "Consider an owner and a due date for each action.",
                Category::Add,
                quote("Merge segments nightly."),
            ),
        )
        .await?;
    service
        .finish_run(
            &agent,
            incident_id,
            &run.id,
            FinishRun {
                status: RunStatus::Completed,
                summary: Some("2 suggestions".into()),
                base_comments_revision: None,
            },
        )
        .await?;

    // A project from the case register, where an external partner works on one document.
    let snapshot: ProjectSnapshot = serde_json::from_value(serde_json::json!({
        "projects": [
            { "code": "ACME-2026", "name": "Acme rollout", "company": "Acme Corp", "status": "active" },
            { "code": "GLOBEX-2025", "name": "Globex pilot", "company": "Globex", "status": "inactive" }
        ]
    }))?;
    service.import_projects(snapshot).await?;
    let roles: RolesChange = serde_json::from_value(serde_json::json!({
        "add": [
            { "email": "grace@example.com", "role": "manager" },
            { "email": "katherine@partner.example", "role": "editor" }
        ]
    }))?;
    service
        .change_project_roles(&ada, "ACME-2026", roles)
        .await?;
    let mut rollout = create(ROLLOUT, "Acme rollout plan", "restricted", &[])?;
    rollout.project = Some("ACME-2026".into());
    service.create_review(&ada, rollout).await?;

    let token = service
        .issue_token(
            "ada@example.com",
            Scope::ALL.to_vec(),
            Some("demo".into()),
            None,
        )
        .await?
        .value;
    Ok(Seeded {
        token,
        review_id: design.review_id,
    })
}

pub fn print_welcome(base_url: &str, data_dir: &Path, seeded: &Seeded) {
    let token = seeded.token.expose();
    let review = &seeded.review_id;
    println!();
    println!("docreview demo is ready (data in {}).", data_dir.display());
    println!();
    println!("  Base URL:        {base_url}");
    println!("  Demo user:       ada@example.com (Ada Lovelace, organization admin)");
    println!("  Personal token:  {token}");
    println!(
        "  Web app:         {base_url}/ (sign in as ada@example.com, password {DEMO_PASSWORD})"
    );
    println!("  Review screen:   {base_url}/reviews/{review}");
    println!();
    println!("Try it:");
    println!("  export DOCREVIEW_URL={base_url}");
    println!("  export DOCREVIEW_TOKEN={token}");
    println!("  curl -s -H \"Authorization: Bearer $DOCREVIEW_TOKEN\" $DOCREVIEW_URL/api/reviews");
    println!(
        "  curl -s -H \"Authorization: Bearer $DOCREVIEW_TOKEN\" $DOCREVIEW_URL/api/reviews/{review}"
    );
    println!();
}
