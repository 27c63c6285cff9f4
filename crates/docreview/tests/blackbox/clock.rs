//! Rules that depend on time, driven through the service with an injected clock over a real
//! SQLite store: the 10-minute undo window, the 24-hour run timeout, the 10-minute command-line
//! login code and the 14-day browser session; and ids and secrets drawn from injected entropy.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use docreview_api::{CreateReview, NewComment, ReviewInput, SourceInput, StartRun};
use docreview_core::access::{Actor, Credential};
use docreview_core::clock::{Clock, Entropy};
use docreview_core::identity::{Secret, SharedTokens};
use docreview_core::model::{RunStatus, Scope};
use docreview_core::service::{NewUser, Settings};
use docreview_core::{AuthFailure, Service};
use docreview_server::rendered::RenderedReviews;
use docreview_store_sqlite::SqliteStore;

const MINUTE: i64 = 60 * 1000;
const DAY: i64 = 24 * 60 * MINUTE;
const PASSWORD: &str = "a long enough password";
const START: i64 = 1_795_000_000_000;

/// A clock the test moves by hand.
struct ManualClock(AtomicI64);

impl Clock for ManualClock {
    fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

struct World {
    _dir: tempfile::TempDir,
    clock: Arc<ManualClock>,
    service: Service,
    author: Actor,
    review_id: String,
}

impl World {
    async fn new() -> World {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("docreview.db")).expect("open store");
        let clock = Arc::new(ManualClock(AtomicI64::new(START)));
        let service = Service::new(
            Arc::new(store),
            clock.clone(),
            SharedTokens::default(),
            Settings::default(),
        );
        service
            .ensure_service_accounts()
            .await
            .expect("service accounts");
        let account = service
            .create_user(NewUser {
                email: "ada@example.com".into(),
                display_name: "Ada".into(),
                admin: false,
                external: false,
                password_hash: Some(
                    docreview_core::identity::hash_password(PASSWORD).expect("hash"),
                ),
            })
            .await
            .expect("user");
        let author = Actor {
            account,
            credential: Credential::Personal {
                token_id: "tok_test".into(),
                scopes: Scope::ALL.to_vec(),
                expires_at: i64::MAX,
            },
        };
        let create = CreateReview {
            review: ReviewInput {
                title: Some("Clock".into()),
                source: Some(SourceInput {
                    html: Some("<p>tick tock</p>".into()),
                    label: None,
                }),
                ..ReviewInput::default()
            },
            project: None,
        };
        let review_id = service
            .create_review(&author, create)
            .await
            .expect("create")
            .review_id;
        World {
            _dir: dir,
            clock,
            service,
            author,
            review_id,
        }
    }

    fn advance(&self, millis: i64) {
        self.clock.0.fetch_add(millis, Ordering::SeqCst);
    }

    fn note(body: &str) -> NewComment {
        NewComment {
            body: body.into(),
            category: None,
            locator: None,
            base_comments_revision: None,
            suggestion: None,
        }
    }
}

#[tokio::test]
async fn the_author_may_cancel_within_ten_minutes_but_not_after() {
    let world = World::new().await;
    let early = world
        .service
        .add_comment(&world.author, &world.review_id, World::note("early"))
        .await
        .expect("comment");
    let late = world
        .service
        .add_comment(&world.author, &world.review_id, World::note("late"))
        .await
        .expect("comment");
    assert!(early.comment.provisional);

    world.advance(10 * MINUTE - 1);
    world
        .service
        .cancel_comment(
            &world.author,
            &world.review_id,
            &early.comment.id,
            docreview_core::service::WriteBase::default(),
        )
        .await
        .expect("still provisional");

    world.advance(1);
    let refused = world
        .service
        .cancel_comment(
            &world.author,
            &world.review_id,
            &late.comment.id,
            docreview_core::service::WriteBase::default(),
        )
        .await;
    assert!(
        matches!(refused, Err(docreview_core::Error::Forbidden(_))),
        "{refused:?}"
    );
    let review = world
        .service
        .get_review(&world.author, &world.review_id, false)
        .await
        .expect("read");
    let late_view = review
        .comments
        .iter()
        .find(|c| c.id == late.comment.id)
        .expect("late comment kept");
    assert!(!late_view.provisional);
    assert!(review.comments.iter().all(|c| c.id != early.comment.id));
}

#[tokio::test]
async fn the_cached_rendering_drops_the_provisional_flag_when_the_window_closes() {
    let world = World::new().await;
    world
        .service
        .add_comment(&world.author, &world.review_id, World::note("mine"))
        .await
        .expect("comment");
    // The server's cache of rendered answers, in front of the service as in `GET /api/reviews/…`.
    let rendered = RenderedReviews::default();
    let read = async || {
        let reading = world
            .service
            .review_reading(&world.author, &world.review_id)
            .await
            .expect("read");
        let body = rendered.answer(&reading).expect("render");
        let json: serde_json::Value = serde_json::from_slice(&body.body).expect("json");
        json["review"]["comments"][0]["provisional"].clone()
    };
    assert_eq!(read().await, true);
    assert_eq!(read().await, true, "the cached rendering still marks it");
    world.advance(10 * MINUTE);
    assert_eq!(
        read().await,
        false,
        "no write happened, yet the flag must flip on time"
    );
}

#[tokio::test]
async fn runs_left_running_for_a_day_fail_and_their_comments_go() {
    let world = World::new().await;
    let run = world
        .service
        .start_run(&world.author, &world.review_id, StartRun::default())
        .await
        .expect("run");
    let draft = world
        .service
        .add_run_comment(
            &world.author,
            &world.review_id,
            &run.id,
            World::note("draft"),
        )
        .await
        .expect("run comment");

    world.advance(24 * 60 * MINUTE - 1);
    assert_eq!(world.service.expire_stale_runs().await.expect("sweep"), 0);

    world.advance(2); // just past 24 hours
    assert_eq!(world.service.expire_stale_runs().await.expect("sweep"), 1);
    let review = world
        .service
        .get_review(&world.author, &world.review_id, false)
        .await
        .expect("read");
    assert_eq!(review.ai_review_runs[0].status, RunStatus::Failed);
    assert!(review.ai_review_runs[0].completed_ts.is_some());
    assert!(
        review.comments.iter().all(|c| c.id != draft.comment.id),
        "the failed run's comment is deleted"
    );
    assert_eq!(
        world
            .service
            .expire_stale_runs()
            .await
            .expect("sweep again"),
        0
    );
}

/// A PKCE verifier and its S256 challenge.
fn pkce() -> (String, String) {
    use base64::Engine;
    use sha2::Digest;
    let verifier = "a-verifier-of-sufficient-length-for-rfc-7636-pkce".to_string();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

#[tokio::test]
async fn sessions_last_fourteen_days_and_login_codes_ten_minutes() {
    use docreview_api::CodeExchange;
    use docreview_core::Error;
    use docreview_core::service::CliLoginRequest;

    let world = World::new().await;
    let signed_in = world
        .service
        .sign_in("ada@example.com", PASSWORD, "127.0.0.1")
        .await
        .expect("sign in");
    let cookie = signed_in.cookie_value.expose().to_string();
    let session = world
        .service
        .authenticate_session(&cookie)
        .await
        .expect("session");

    let approve = async |world: &World| {
        let (verifier, challenge) = pkce();
        let code = world
            .service
            .approve_cli_login(
                &session,
                CliLoginRequest {
                    challenge,
                    token_name: "laptop".into(),
                    scopes: vec![],
                },
            )
            .await
            .expect("approve");
        CodeExchange {
            code,
            verifier: Secret::new(verifier),
        }
    };
    let in_time = approve(&world).await;
    world.advance(10 * MINUTE - 1);
    let token = world
        .service
        .exchange_cli_code(in_time, "127.0.0.1")
        .await
        .expect("a code is good for ten minutes");
    assert_eq!(token.scopes, vec![Scope::Comments]);
    let late = approve(&world).await;
    world.advance(10 * MINUTE);
    assert!(matches!(
        world.service.exchange_cli_code(late, "127.0.0.1").await,
        Err(Error::InvalidRequest(_))
    ));

    world.advance(14 * DAY - 20 * MINUTE);
    world
        .service
        .authenticate_session(&cookie)
        .await
        .expect("still signed in just before fourteen days");
    world.advance(MINUTE);
    assert!(matches!(
        world.service.authenticate_session(&cookie).await,
        Err(Error::Unauthorized(AuthFailure::Expired))
    ));
}

/// Gives zero bytes every time.
struct ZeroEntropy;

impl Entropy for ZeroEntropy {
    fn fill(&self, buffer: &mut [u8]) {
        buffer.fill(0);
    }
}

#[tokio::test]
async fn ids_and_secrets_come_from_the_injected_entropy() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("docreview.db")).expect("open store");
    let clock = Arc::new(ManualClock(AtomicI64::new(START)));
    let service = Service::new(
        Arc::new(store),
        clock,
        SharedTokens::default(),
        Settings::default(),
    )
    .with_entropy(Arc::new(ZeroEntropy));
    let account = service
        .create_user(NewUser {
            email: "ada@example.com".into(),
            display_name: "Ada".into(),
            admin: false,
            external: false,
            password_hash: None,
        })
        .await
        .expect("user");
    assert!(
        account.user.id.ends_with(&"0".repeat(16)),
        "{}",
        account.user.id
    );
    let issued = service
        .issue_token("ada@example.com", Vec::new(), None, None)
        .await
        .expect("token");
    let (expected, _) = docreview_core::identity::mint_personal_token(&ZeroEntropy);
    assert_eq!(issued.value.expose(), expected.expose());
    assert!(issued.record.id.ends_with(&"0".repeat(16)));
}
