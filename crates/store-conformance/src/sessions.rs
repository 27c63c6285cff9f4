//! Checks for browser sessions and command-line login codes.

use std::sync::Arc;

use docreview_core::model::{LoginCodeRecord, Scope, SessionRecord};
use docreview_core::store::{Store, StoreError};

use crate::fixtures::{T0, hash_of, token, user};

fn session(id: &str, user_id: &str, byte: u8) -> SessionRecord {
    SessionRecord {
        id: id.to_string(),
        hash: hash_of(byte),
        user_id: user_id.to_string(),
        created_at: T0,
        expires_at: T0 + 7 * 86_400_000,
    }
}

/// Sessions are found by hash with their account, whole; deleting one leaves the others; a taken
/// hash is `AlreadyExists`.
pub async fn check_sessions(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    let bob = user(&store, "usr_bob").await;
    let mut mine = session("ses_1", "usr_alice", 1);
    mine.created_at = T0 + 5;
    mine.expires_at = T0 + 5_000;
    store.insert_session(mine.clone()).await.expect("insert");
    store
        .insert_session(session("ses_2", "usr_bob", 2))
        .await
        .expect("insert");
    // An expired session is still found: expiry is the caller's rule.
    let mut stale = session("ses_3", "usr_alice", 3);
    stale.expires_at = T0 - 1;
    store.insert_session(stale.clone()).await.expect("insert");

    let (found, owner) = store
        .session_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("found");
    assert_eq!(found, mine);
    assert_eq!(
        (found.id.as_str(), found.created_at, found.expires_at),
        ("ses_1", T0 + 5, T0 + 5_000)
    );
    assert_eq!(owner, alice);
    let (_, owner) = store
        .session_by_hash(&hash_of(2))
        .await
        .expect("by hash")
        .expect("found");
    assert_eq!(owner, bob);
    assert_eq!(
        store
            .session_by_hash(&hash_of(3))
            .await
            .expect("by hash")
            .map(|(s, _)| s),
        Some(stale)
    );
    assert!(
        store
            .session_by_hash(&hash_of(9))
            .await
            .expect("by hash")
            .is_none()
    );

    match store.insert_session(session("ses_4", "usr_bob", 1)).await {
        Err(StoreError::AlreadyExists(_)) => {}
        other => panic!("a taken hash must be AlreadyExists, got {other:?}"),
    }
    let (still, _) = store
        .session_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("found");
    assert_eq!(still.user_id, "usr_alice", "the first session is unchanged");

    store.delete_session(&hash_of(1)).await.expect("delete");
    assert!(
        store
            .session_by_hash(&hash_of(1))
            .await
            .expect("by hash")
            .is_none()
    );
    assert!(
        store
            .session_by_hash(&hash_of(2))
            .await
            .expect("by hash")
            .is_some()
    );
    assert!(
        store
            .session_by_hash(&hash_of(3))
            .await
            .expect("by hash")
            .is_some()
    );
    store
        .delete_session(&hash_of(1))
        .await
        .expect("deleting a missing session is not an error");
}

/// Setting a password ends every browser session of that account, and only of that account.
pub async fn check_setting_a_password_ends_sessions(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    user(&store, "usr_bob").await;
    for (id, owner, byte) in [
        ("ses_1", "usr_alice", 1),
        ("ses_2", "usr_alice", 2),
        ("ses_3", "usr_bob", 3),
    ] {
        store
            .insert_session(session(id, owner, byte))
            .await
            .expect("insert");
    }
    assert!(
        store
            .set_password_hash("usr_alice", "$argon2id$new".into())
            .await
            .expect("set")
    );
    for ended in [1, 2] {
        assert!(
            store
                .session_by_hash(&hash_of(ended))
                .await
                .expect("by hash")
                .is_none(),
            "session {ended} of the account whose password changed must end"
        );
    }
    assert!(
        store
            .session_by_hash(&hash_of(3))
            .await
            .expect("by hash")
            .is_some(),
        "another account's session stays"
    );
}

fn code(user_id: &str, byte: u8) -> LoginCodeRecord {
    LoginCodeRecord {
        hash: hash_of(byte),
        user_id: user_id.to_string(),
        challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".to_string(),
        token_name: "docreview CLI on laptop".to_string(),
        scopes: vec![Scope::Docs, Scope::Comments],
        created_at: T0,
        expires_at: T0 + 600_000,
        used_at: None,
    }
}

/// A login code round-trips; redeeming it marks it used and inserts the token together, once:
/// a second redemption (or one of an unknown code) answers `false` and inserts nothing, a
/// failed token insert leaves the code unused, and of concurrent redemptions exactly one wins.
pub async fn check_login_codes(store: Arc<dyn Store>) {
    user(&store, "usr_alice").await;
    let first = code("usr_alice", 1);
    store
        .insert_login_code(first.clone())
        .await
        .expect("insert");
    assert_eq!(
        store.login_code(&hash_of(1)).await.expect("code"),
        Some(first.clone())
    );
    assert!(store.login_code(&hash_of(9)).await.expect("code").is_none());
    match store.insert_login_code(code("usr_alice", 1)).await {
        Err(StoreError::AlreadyExists(_)) => {}
        other => panic!("a taken code hash must be AlreadyExists, got {other:?}"),
    }

    let issued = token("tok_cli", "usr_alice", hash_of(101), T0 + 10);
    assert!(
        store
            .redeem_login_code(&hash_of(1), T0 + 10, issued.clone())
            .await
            .expect("redeem")
    );
    let used = store
        .login_code(&hash_of(1))
        .await
        .expect("code")
        .expect("still there");
    assert_eq!(used.used_at, Some(T0 + 10));
    let (stored, _) = store
        .token_by_hash(&hash_of(101))
        .await
        .expect("by hash")
        .expect("the token is issued with the redemption");
    assert_eq!(stored, issued);

    // Used already: nothing written.
    assert!(
        !store
            .redeem_login_code(
                &hash_of(1),
                T0 + 20,
                token("tok_again", "usr_alice", hash_of(102), T0 + 20)
            )
            .await
            .expect("redeem twice")
    );
    assert!(
        store
            .token_by_hash(&hash_of(102))
            .await
            .expect("by hash")
            .is_none()
    );
    assert_eq!(
        store
            .login_code(&hash_of(1))
            .await
            .expect("code")
            .and_then(|c| c.used_at),
        Some(T0 + 10)
    );
    // Unknown code: nothing written.
    assert!(
        !store
            .redeem_login_code(
                &hash_of(9),
                T0 + 20,
                token("tok_none", "usr_alice", hash_of(103), T0 + 20)
            )
            .await
            .expect("redeem unknown")
    );
    assert!(
        store
            .token_by_hash(&hash_of(103))
            .await
            .expect("by hash")
            .is_none()
    );

    // The token cannot be inserted (its hash is taken): the code is not spent either.
    store
        .insert_login_code(code("usr_alice", 2))
        .await
        .expect("insert");
    let clash = token("tok_clash", "usr_alice", hash_of(101), T0 + 30);
    assert!(
        store
            .redeem_login_code(&hash_of(2), T0 + 30, clash)
            .await
            .is_err(),
        "a token that cannot be stored fails the redemption"
    );
    assert_eq!(
        store
            .login_code(&hash_of(2))
            .await
            .expect("code")
            .and_then(|c| c.used_at),
        None,
        "both or neither: the code stays unused"
    );
    assert!(
        store
            .redeem_login_code(
                &hash_of(2),
                T0 + 31,
                token("tok_ok", "usr_alice", hash_of(104), T0 + 31)
            )
            .await
            .expect("redeem")
    );

    // Concurrent redemptions of one code: exactly one wins, exactly one token exists.
    store
        .insert_login_code(code("usr_alice", 3))
        .await
        .expect("insert");
    let tasks: Vec<_> = (0..8u8)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store
                    .redeem_login_code(
                        &hash_of(3),
                        T0 + 40,
                        token(
                            &format!("tok_race{i}"),
                            "usr_alice",
                            hash_of(200 + i),
                            T0 + 40,
                        ),
                    )
                    .await
            })
        })
        .collect();
    let mut wins = 0;
    for task in tasks {
        if task.await.expect("task").expect("redeem") {
            wins += 1;
        }
    }
    assert_eq!(wins, 1, "exactly one concurrent redemption wins");
    let mut issued = 0;
    for i in 0..8u8 {
        if store
            .token_by_hash(&hash_of(200 + i))
            .await
            .expect("by hash")
            .is_some()
        {
            issued += 1;
        }
    }
    assert_eq!(issued, 1, "exactly one token was issued");
}
