//! Checks for accounts, personal tokens, `users` and `project`.

use std::sync::Arc;

use docreview_core::model::{Membership, Provider, Scope, TokenRecord, User, UserStatus};
use docreview_core::store::Store;

use crate::fixtures::{T0, account, assert_exists, user};

/// Accounts round-trip every field, are found by id and by email in any case, and a taken id or
/// email answers `AlreadyExists("user")` without writing anything.
pub async fn check_accounts(store: Arc<dyn Store>) {
    let alice = account("usr_alice", "alice@example.com", Membership::Internal);
    store
        .create_account(alice.clone(), Some("$argon2id$v=19$hash".to_string()))
        .await
        .expect("create alice");
    let mut bob = account("usr_bob", "bob@partner.example", Membership::External);
    bob.user.provider = Provider::Oidc;
    bob.user.display_name = "Böb \"the builder\" O'Neil".to_string();
    bob.status = UserStatus::Suspended;
    bob.is_admin = true;
    bob.created_at = T0 + 123;
    store
        .create_account(bob.clone(), None)
        .await
        .expect("create bob");

    assert_eq!(
        store.account_by_id("usr_alice").await.expect("by id"),
        Some(alice.clone())
    );
    assert_eq!(
        store.account_by_id("usr_bob").await.expect("by id"),
        Some(bob.clone())
    );
    assert_eq!(
        store.account_by_id("usr_nobody").await.expect("by id"),
        None
    );
    assert_eq!(
        store
            .account_by_email("alice@example.com")
            .await
            .expect("by email"),
        Some(alice.clone())
    );
    assert_eq!(
        store
            .account_by_email("ALICE@Example.COM")
            .await
            .expect("by email, other case"),
        Some(alice.clone()),
        "email lookup ignores case"
    );
    assert_eq!(
        store
            .account_by_email("Bob@Partner.Example")
            .await
            .expect("by email"),
        Some(bob.clone())
    );
    assert_eq!(
        store
            .account_by_email("nobody@example.com")
            .await
            .expect("by email"),
        None
    );

    // The same email under another id.
    let dup_email = account("usr_other", "alice@example.com", Membership::Internal);
    assert_exists(store.create_account(dup_email, None).await, "user");
    assert_eq!(store.account_by_id("usr_other").await.expect("by id"), None);
    // The same id under another email.
    let mut dup_id = account("usr_alice", "alice2@example.com", Membership::Internal);
    dup_id.user.handle = "alice2".into();
    assert_exists(store.create_account(dup_id, None).await, "user");
    assert_eq!(
        store
            .account_by_email("alice2@example.com")
            .await
            .expect("by email"),
        None
    );
    assert_eq!(
        store.account_by_id("usr_alice").await.expect("by id"),
        Some(alice)
    );
}

/// `ensure_account` creates a missing account and leaves an existing one exactly as it is.
pub async fn check_ensure_account(store: Arc<dyn Store>) {
    let mut service = account(
        "svc_agent",
        "svc_agent@service.invalid",
        Membership::Internal,
    );
    service.user.provider = Provider::Service;
    service.user.display_name = "Agent (shared token)".to_string();
    store
        .ensure_account(service.clone())
        .await
        .expect("ensure creates");
    assert_eq!(
        store.account_by_id("svc_agent").await.expect("by id"),
        Some(service.clone())
    );

    let mut changed = service.clone();
    changed.user.display_name = "Renamed".to_string();
    changed.is_admin = true;
    for _ in 0..3 {
        store
            .ensure_account(changed.clone())
            .await
            .expect("ensure is idempotent");
    }
    assert_eq!(
        store.account_by_id("svc_agent").await.expect("by id"),
        Some(service),
        "ensure_account never changes an existing account"
    );

    // Concurrent ensures of one new principal (several nodes starting at once) all succeed.
    let mut manage = account(
        "svc_manage",
        "svc_manage@service.invalid",
        Membership::Internal,
    );
    manage.user.provider = Provider::Service;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            let manage = manage.clone();
            tokio::spawn(async move { store.ensure_account(manage).await })
        })
        .collect();
    for task in tasks {
        task.await
            .expect("task")
            .expect("concurrent ensure succeeds");
    }
    assert_eq!(
        store.account_by_id("svc_manage").await.expect("by id"),
        Some(manage)
    );
}

fn token(id: &str, user_id: &str, hash: [u8; 32]) -> TokenRecord {
    TokenRecord {
        id: id.to_string(),
        user_id: user_id.to_string(),
        name: format!("token {id}"),
        hash,
        scopes: vec![Scope::Docs, Scope::Comments],
        created_at: T0,
        expires_at: T0 + 90 * 86_400_000,
        last_used_at: None,
        revoked_at: None,
    }
}

/// Tokens are found by their hash together with their account, `touch_token` sets
/// `last_used_at`, and a taken hash answers `AlreadyExists("token")`.
pub async fn check_tokens(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let mut hash = [0u8; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        // Every byte value class: zero, high bit set, ASCII.
        *byte = u8::try_from(i * 37 % 256).expect("byte");
    }
    hash[0] = 0;
    hash[31] = 0xff;
    let first = token("tok_1", "usr_alice", hash);
    store
        .insert_token(first.clone())
        .await
        .expect("insert token");
    let (found, owner) = store
        .token_by_hash(&hash)
        .await
        .expect("by hash")
        .expect("token is found");
    assert_eq!(found, first);
    assert_eq!(found.scopes, first.scopes);
    assert_eq!(found.name, first.name);
    assert_eq!(found.created_at, first.created_at);
    assert_eq!(owner, alice);
    assert!(
        store
            .token_by_hash(&[9u8; 32])
            .await
            .expect("by hash")
            .is_none()
    );

    store.touch_token("tok_1", T0 + 5_000).await.expect("touch");
    let (touched, _) = store
        .token_by_hash(&hash)
        .await
        .expect("by hash")
        .expect("token");
    assert_eq!(touched.last_used_at, Some(T0 + 5_000));
    // Touching an unknown token is not an error.
    store
        .touch_token("tok_missing", T0)
        .await
        .expect("touch unknown");

    // Every scope, a revocation and a last use round-trip; so does an empty scope list.
    let mut full = token("tok_2", "usr_alice", [2u8; 32]);
    full.scopes = Scope::ALL.to_vec();
    full.last_used_at = Some(T0 + 1);
    full.revoked_at = Some(T0 + 2);
    store.insert_token(full.clone()).await.expect("insert");
    let (got, _) = store
        .token_by_hash(&[2u8; 32])
        .await
        .expect("by hash")
        .expect("token");
    assert_eq!(
        (got.scopes.clone(), got.last_used_at, got.revoked_at),
        (full.scopes.clone(), full.last_used_at, full.revoked_at)
    );
    let mut empty = token("tok_3", "usr_alice", [3u8; 32]);
    empty.scopes = Vec::new();
    store.insert_token(empty).await.expect("insert");
    let (got, _) = store
        .token_by_hash(&[3u8; 32])
        .await
        .expect("by hash")
        .expect("token");
    assert!(got.scopes.is_empty());

    // A taken hash (under a new id), or a taken id.
    assert_exists(
        store.insert_token(token("tok_4", "usr_alice", hash)).await,
        "token",
    );
    assert_exists(
        store
            .insert_token(token("tok_1", "usr_alice", [4u8; 32]))
            .await,
        "token",
    );
    assert!(
        store
            .token_by_hash(&[4u8; 32])
            .await
            .expect("by hash")
            .is_none()
    );
}

/// `users` answers the known ids in the order asked and skips unknown ones; `project` answers
/// `None` for an unknown code.
pub async fn check_users_and_projects(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let ids = |list: &[&str]| {
        list.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };
    let users = store
        .users(&ids(&["usr_bob", "usr_missing", "usr_alice"]))
        .await
        .expect("users");
    assert_eq!(users, vec![bob.user.clone(), alice.user.clone()]);
    assert_eq!(store.users(&[]).await.expect("users"), Vec::<User>::new());
    assert_eq!(
        store.users(&ids(&["usr_missing"])).await.expect("users"),
        Vec::<User>::new()
    );

    assert_eq!(store.project("PRJ-404").await.expect("project"), None);
}
