//! Checks for the organization and a member's own credentials: `tokens_of`, `revoke_token`,
//! `password_hash`, `list_accounts`, `update_account` and `remove_account`.

use std::sync::Arc;

use docreview_core::model::{
    Account, LoginCodeRecord, Membership, ProjectRole, Provider, Scope, SessionRecord, UserStatus,
};
use docreview_core::store::{MemberQuery, Store, StoreError};

use crate::fixtures::{T0, account, assert_not_found, hash_of, member, projects, token, user};

fn ids(tokens: &[docreview_core::model::TokenRecord]) -> Vec<&str> {
    tokens.iter().map(|t| t.id.as_str()).collect()
}

/// `tokens_of` answers the user's unrevoked tokens (expired ones too), newest first, whole;
/// `revoke_token` revokes only the caller's own unrevoked token and says whether it did.
pub async fn check_token_listing_and_revocation(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    let oldest = token("tok_a1", "usr_alice", hash_of(1), T0);
    let newest = token("tok_a2", "usr_alice", hash_of(2), T0 + 20);
    let mut middle = token("tok_a3", "usr_alice", hash_of(3), T0 + 10);
    middle.scopes = vec![Scope::Docs, Scope::Org];
    middle.last_used_at = Some(T0 + 15);
    let mut expired = token("tok_a4", "usr_alice", hash_of(4), T0 - 100);
    expired.expires_at = T0 - 50;
    let mut revoked = token("tok_a5", "usr_alice", hash_of(5), T0 + 30);
    revoked.revoked_at = Some(T0 + 31);
    let bobs = token("tok_b1", "usr_bob", hash_of(6), T0 + 40);
    for t in [&oldest, &newest, &middle, &expired, &revoked, &bobs] {
        store.insert_token(t.clone()).await.expect("insert token");
    }

    let listed = store.tokens_of("usr_alice").await.expect("tokens");
    assert_eq!(
        ids(&listed),
        vec!["tok_a2", "tok_a3", "tok_a1", "tok_a4"],
        "unrevoked tokens, expired included, newest first"
    );
    assert_eq!(listed[1], middle, "records come back whole");
    assert_eq!(listed[1].scopes, middle.scopes);
    assert_eq!(listed[1].last_used_at, Some(T0 + 15));
    assert_eq!(
        ids(&store.tokens_of("usr_bob").await.expect("tokens")),
        vec!["tok_b1"]
    );
    assert!(
        store
            .tokens_of("usr_nobody")
            .await
            .expect("tokens")
            .is_empty()
    );

    // Someone else's token, an unknown one, an already revoked one: nothing happens.
    assert!(
        !store
            .revoke_token("usr_bob", "tok_a1", T0 + 50)
            .await
            .expect("revoke")
    );
    assert!(
        !store
            .revoke_token("usr_alice", "tok_b1", T0 + 50)
            .await
            .expect("revoke")
    );
    assert!(
        !store
            .revoke_token("usr_alice", "tok_missing", T0 + 50)
            .await
            .expect("revoke")
    );
    assert!(
        !store
            .revoke_token("usr_alice", "tok_a5", T0 + 50)
            .await
            .expect("revoke")
    );
    let (still, _) = store
        .token_by_hash(&hash_of(5))
        .await
        .expect("by hash")
        .expect("token");
    assert_eq!(
        still.revoked_at,
        Some(T0 + 31),
        "revoking again keeps the first time"
    );
    let (bob_token, _) = store
        .token_by_hash(&hash_of(6))
        .await
        .expect("by hash")
        .expect("token");
    assert_eq!(bob_token.revoked_at, None);

    assert!(
        store
            .revoke_token("usr_alice", "tok_a1", T0 + 60)
            .await
            .expect("revoke")
    );
    let (gone, _) = store
        .token_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("a revoked token is still found by its hash");
    assert_eq!(gone.revoked_at, Some(T0 + 60));
    assert_eq!(
        ids(&store.tokens_of("usr_alice").await.expect("tokens")),
        vec!["tok_a2", "tok_a3", "tok_a4"]
    );
    assert!(
        !store
            .revoke_token("usr_alice", "tok_a1", T0 + 70)
            .await
            .expect("revoke twice")
    );

    // Operators find a token's holder by its id, revoked or not.
    for (id, holder) in [
        ("tok_a1", "usr_alice"),
        ("tok_a5", "usr_alice"),
        ("tok_b1", "usr_bob"),
    ] {
        assert_eq!(
            store.token_holder(id).await.expect("holder").as_deref(),
            Some(holder)
        );
    }
    assert_eq!(
        store.token_holder("tok_nobody").await.expect("holder"),
        None
    );
}

/// `password_hash` answers the stored hash, `None` for an account without one or no account.
pub async fn check_password_hash(store: Arc<dyn Store>) {
    let phc = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".to_string();
    store
        .create_account(
            account("usr_alice", "alice@example.com", Membership::Internal),
            Some(phc.clone()),
        )
        .await
        .expect("create");
    user(&store, "usr_bob").await;
    assert_eq!(
        store.password_hash("usr_alice").await.expect("hash"),
        Some(phc)
    );
    assert_eq!(store.password_hash("usr_bob").await.expect("hash"), None);
    assert_eq!(store.password_hash("usr_nobody").await.expect("hash"), None);

    // Setting one replaces it (or gives one to an account without); no account, no change.
    let other = "$argon2id$v=19$m=19456,t=2,p=1$b3RoZXI$aGFzaA".to_string();
    assert!(
        store
            .set_password_hash("usr_bob", other.clone())
            .await
            .expect("set")
    );
    assert_eq!(
        store.password_hash("usr_bob").await.expect("hash"),
        Some(other)
    );
    assert!(
        !store
            .set_password_hash("usr_nobody", "x".into())
            .await
            .expect("set")
    );
    assert_eq!(store.password_hash("usr_nobody").await.expect("hash"), None);
}

fn emails(accounts: &[Account]) -> Vec<&str> {
    accounts.iter().map(|a| a.email.as_str()).collect()
}

/// Members are listed by email (byte order), without service principals or removed accounts
/// (suspended ones stay), optionally admins only, a page at a time after an email.
pub async fn check_list_accounts(store: Arc<dyn Store>) {
    let mut made = Vec::new();
    for (id, email, admin, status) in [
        ("usr_d", "dora@example.com", false, UserStatus::Active),
        ("usr_a", "anna@example.com", true, UserStatus::Active),
        (
            "usr_c",
            "carl@partner.example",
            false,
            UserStatus::Suspended,
        ),
        ("usr_e", "emil@example.com", true, UserStatus::Active),
        ("usr_b", "bert@example.com", false, UserStatus::Active),
        ("usr_f", "fred@example.com", true, UserStatus::Active),
    ] {
        let mut a = account(id, email, Membership::Internal);
        a.is_admin = admin;
        a.status = status;
        if id == "usr_c" {
            a.membership = Membership::External;
        }
        store.create_account(a.clone(), None).await.expect("create");
        made.push(a);
    }
    let mut service = account("svc_agent", "agent@service.invalid", Membership::Internal);
    service.user.provider = Provider::Service;
    store.ensure_account(service).await.expect("service");
    store
        .remove_account("usr_f", T0 + 1)
        .await
        .expect("remove fred");

    let page = |admins_only: bool, after: Option<&str>, limit: usize| MemberQuery {
        admins_only,
        after: after.map(str::to_string),
        limit,
    };
    let all = store
        .list_accounts(page(false, None, 100))
        .await
        .expect("list");
    assert_eq!(
        emails(&all),
        vec![
            "anna@example.com",
            "bert@example.com",
            "carl@partner.example",
            "dora@example.com",
            "emil@example.com"
        ]
    );
    let carl = made.iter().find(|a| a.user.id == "usr_c").expect("carl");
    assert_eq!(&all[2], carl, "accounts come back whole");

    assert_eq!(
        emails(
            &store
                .list_accounts(page(true, None, 100))
                .await
                .expect("list")
        ),
        vec!["anna@example.com", "emil@example.com"],
        "admins only (a removed admin is no admin)"
    );
    let first = store
        .list_accounts(page(false, None, 2))
        .await
        .expect("list");
    assert_eq!(emails(&first), vec!["anna@example.com", "bert@example.com"]);
    let second = store
        .list_accounts(page(false, Some("bert@example.com"), 2))
        .await
        .expect("list");
    assert_eq!(
        emails(&second),
        vec!["carl@partner.example", "dora@example.com"]
    );
    let third = store
        .list_accounts(page(false, Some("dora@example.com"), 2))
        .await
        .expect("list");
    assert_eq!(emails(&third), vec!["emil@example.com"]);
    assert!(
        store
            .list_accounts(page(false, Some("emil@example.com"), 2))
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(
        emails(
            &store
                .list_accounts(page(true, Some("anna@example.com"), 1))
                .await
                .expect("list")
        ),
        vec!["emil@example.com"]
    );
}

/// `update_account` overwrites display name, membership, status and admin flag, and nothing
/// else; an unknown id is `NotFound`.
pub async fn check_update_account(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let mut changed = alice.clone();
    changed.user.display_name = "Alice Liddell".to_string();
    changed.membership = Membership::External;
    changed.status = UserStatus::Suspended;
    changed.is_admin = true;
    // Fields that are not changeable stay as they were.
    changed.email = "other@example.com".to_string();
    changed.created_at = T0 + 999;
    store
        .update_account(changed.clone())
        .await
        .expect("update account");
    let stored = store
        .account_by_id("usr_alice")
        .await
        .expect("by id")
        .expect("exists");
    let mut expected = changed.clone();
    expected.email = alice.email.clone();
    expected.created_at = alice.created_at;
    assert_eq!(stored, expected);
    assert_eq!(
        store
            .account_by_email(&alice.email)
            .await
            .expect("by email")
            .map(|a| a.user.id),
        Some("usr_alice".to_string()),
        "still found by the old email"
    );
    assert_eq!(
        store.account_by_id("usr_bob").await.expect("by id"),
        Some(bob)
    );

    // Back to active: a removed account comes back this way too.
    let mut restored = expected.clone();
    restored.status = UserStatus::Active;
    restored.is_admin = false;
    store
        .update_account(restored.clone())
        .await
        .expect("update");
    assert_eq!(
        store.account_by_id("usr_alice").await.expect("by id"),
        Some(restored)
    );

    let mut ghost = alice;
    ghost.user.id = "usr_ghost".to_string();
    assert_not_found(store.update_account(ghost).await);
    assert_eq!(store.account_by_id("usr_ghost").await.expect("by id"), None);
}

/// `remove_account` marks the account removed and no admin, revokes its tokens, deletes its
/// sessions, login codes and project roles, all at once; it stays readable by id (authorship)
/// and leaves everyone else's records alone.
pub async fn check_remove_account(store: Arc<dyn Store>) {
    let mut alice = member(&store, "usr_alice", Membership::External).await;
    alice.is_admin = true;
    store.update_account(alice.clone()).await.expect("admin");
    user(&store, "usr_bob").await;
    projects(&store, &["PRJ-1", "PRJ-2"]).await;
    for code in ["PRJ-1", "PRJ-2"] {
        store
            .change_project_roles(
                code,
                vec![
                    ("usr_alice".to_string(), ProjectRole::Editor),
                    ("usr_bob".to_string(), ProjectRole::Viewer),
                ],
                vec![],
            )
            .await
            .expect("roles");
    }
    store
        .insert_token(token("tok_a1", "usr_alice", hash_of(1), T0))
        .await
        .expect("token");
    let mut old = token("tok_a2", "usr_alice", hash_of(2), T0);
    old.revoked_at = Some(T0 + 1);
    store.insert_token(old).await.expect("token");
    store
        .insert_token(token("tok_b1", "usr_bob", hash_of(3), T0))
        .await
        .expect("token");
    for (id, user_id, byte) in [("ses_a", "usr_alice", 10), ("ses_b", "usr_bob", 11)] {
        store
            .insert_session(SessionRecord {
                id: id.to_string(),
                hash: hash_of(byte),
                user_id: user_id.to_string(),
                created_at: T0,
                expires_at: T0 + 86_400_000,
            })
            .await
            .expect("session");
    }
    for (user_id, byte) in [("usr_alice", 20), ("usr_bob", 21)] {
        store
            .insert_login_code(LoginCodeRecord {
                hash: hash_of(byte),
                user_id: user_id.to_string(),
                challenge: "challenge".to_string(),
                token_name: "cli".to_string(),
                scopes: vec![Scope::Comments],
                created_at: T0,
                expires_at: T0 + 600_000,
                used_at: None,
            })
            .await
            .expect("login code");
    }

    store
        .remove_account("usr_alice", T0 + 50)
        .await
        .expect("remove");

    let removed = store
        .account_by_id("usr_alice")
        .await
        .expect("by id")
        .expect("a removed account stays readable");
    assert_eq!(removed.status, UserStatus::Removed);
    assert!(!removed.is_admin, "a removed account is no admin");
    assert_eq!(removed.user, alice.user);
    assert_eq!(removed.email, alice.email);
    assert!(
        store
            .tokens_of("usr_alice")
            .await
            .expect("tokens")
            .is_empty()
    );
    let (live, _) = store
        .token_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("token row stays");
    assert_eq!(live.revoked_at, Some(T0 + 50));
    let (earlier, _) = store
        .token_by_hash(&hash_of(2))
        .await
        .expect("by hash")
        .expect("token row stays");
    assert!(earlier.revoked_at.is_some());
    assert!(
        store
            .session_by_hash(&hash_of(10))
            .await
            .expect("session")
            .is_none()
    );
    assert!(
        store
            .login_code(&hash_of(20))
            .await
            .expect("code")
            .is_none()
    );
    for code in ["PRJ-1", "PRJ-2"] {
        assert_eq!(
            store.project_role(code, "usr_alice").await.expect("role"),
            None
        );
        let members: Vec<String> = store
            .project_members(code)
            .await
            .expect("members")
            .into_iter()
            .map(|m| m.account.user.id)
            .collect();
        assert_eq!(members, vec!["usr_bob".to_string()]);
    }
    let listed = store
        .list_accounts(MemberQuery {
            admins_only: false,
            after: None,
            limit: 100,
        })
        .await
        .expect("list");
    assert_eq!(emails(&listed), vec!["usr_bob@example.com"]);

    // Bob keeps everything.
    assert_eq!(
        store
            .tokens_of("usr_bob")
            .await
            .expect("tokens")
            .into_iter()
            .map(|t| t.id)
            .collect::<Vec<_>>(),
        vec!["tok_b1".to_string()]
    );
    assert!(
        store
            .session_by_hash(&hash_of(11))
            .await
            .expect("session")
            .is_some()
    );
    assert!(
        store
            .login_code(&hash_of(21))
            .await
            .expect("code")
            .is_some()
    );
    assert_eq!(
        store.project_role("PRJ-1", "usr_bob").await.expect("role"),
        Some(ProjectRole::Viewer)
    );
}

/// Two admins demoting each other at the same moment: exactly one succeeds and one active
/// administrator remains, round after round (the check is atomic with the write). Suspending
/// the last active admin is refused too, with nothing written; an organization that never had
/// an admin can still update its accounts.
pub async fn check_the_last_admin_stays(store: Arc<dyn Store>) {
    let plain = user(&store, "usr_plain").await;
    store
        .update_account(Account {
            user: docreview_core::model::User {
                display_name: "Renamed".into(),
                ..plain.user.clone()
            },
            ..plain
        })
        .await
        .expect("no admins yet: nothing to keep");

    let mut admins = Vec::new();
    for id in ["usr_ann", "usr_ben"] {
        let mut admin = account(id, &format!("{id}@example.com"), Membership::Internal);
        admin.is_admin = true;
        store
            .create_account(admin.clone(), None)
            .await
            .expect("create admin");
        admins.push(admin);
    }
    let active_admins = |store: Arc<dyn Store>| async move {
        admins_of(&store)
            .await
            .into_iter()
            .filter(|a| a.status == UserStatus::Active)
            .count()
    };
    for round in 0..8 {
        for admin in &admins {
            store
                .update_account(admin.clone())
                .await
                .expect("both admins again");
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let tasks: Vec<_> = admins
            .iter()
            .map(|admin| {
                let store = Arc::clone(&store);
                let barrier = Arc::clone(&barrier);
                let demoted = Account {
                    is_admin: false,
                    ..admin.clone()
                };
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.update_account(demoted).await
                })
            })
            .collect();
        let mut succeeded = 0;
        for task in tasks {
            match task.await.expect("task") {
                Ok(()) => succeeded += 1,
                Err(StoreError::LastAdmin) => {}
                Err(other) => panic!("round {round}: unexpected {other:?}"),
            }
        }
        assert_eq!(succeeded, 1, "round {round}: exactly one demotion");
        assert_eq!(active_admins(Arc::clone(&store)).await, 1, "round {round}");
    }

    // The one admin left cannot be suspended either.
    let left = admins_of(&store).await.remove(0);
    let suspended = Account {
        status: UserStatus::Suspended,
        ..left.clone()
    };
    assert!(matches!(
        store.update_account(suspended).await,
        Err(StoreError::LastAdmin)
    ));
    let unchanged = store
        .account_by_id(left.id())
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(unchanged, left, "a refused update writes nothing");
}

async fn admins_of(store: &Arc<dyn Store>) -> Vec<Account> {
    store
        .list_accounts(MemberQuery {
            admins_only: true,
            after: None,
            limit: 10,
        })
        .await
        .expect("admins")
}
