//! Invitations and password resets: stored whole, pending until accepted, revoked or
//! expired; accepting and redeeming are single use even when raced, and all or nothing.

use std::sync::Arc;

use docreview_core::model::{
    InvitationRecord, Membership, PasswordResetRecord, ProjectRole, SessionRecord, UserStatus,
};
use docreview_core::outbox::Sink;
use docreview_core::store::{Acceptance, Store, StoreError};

use crate::fixtures::{T0, account, hash_of, projects, user};
use crate::outbox::{claimed, entry};

const WEEK: i64 = 7 * 86_400_000;

fn invitation(id: &str, email: &str, byte: u8, at: i64) -> InvitationRecord {
    InvitationRecord {
        id: id.to_string(),
        hash: hash_of(byte),
        email: email.to_string(),
        display_name: Some("Dana".to_string()),
        membership: Membership::External,
        project: Some(("P1".to_string(), ProjectRole::Editor)),
        invited_by: "usr_admin".to_string(),
        created_at: at,
        expires_at: at + WEEK,
        accepted_at: None,
        revoked_at: None,
    }
}

fn acceptance(id: &str, email: &str, session_byte: u8) -> Acceptance {
    let mut new = account(id, email, Membership::External);
    new.user.handle = id.to_string();
    Acceptance {
        account: new,
        password_hash: "$argon2id$invited".to_string(),
        session: SessionRecord {
            id: format!("ses_{id}"),
            hash: hash_of(session_byte),
            user_id: id.to_string(),
            created_at: T0,
            expires_at: T0 + WEEK,
        },
    }
}

/// An invitation is stored whole with its mail row; the pending list leaves out accepted,
/// revoked and expired ones; revoking works once and only on pending ones.
pub async fn check_invitations_round_trip(store: Arc<dyn Store>) {
    user(&store, "usr_admin").await;
    projects(&store, &["P1"]).await;
    let first = invitation("inv_1", "dana@example.com", 1, T0);
    store
        .create_invitation(first.clone(), vec![entry("mail_inv", Sink::Mail, T0)])
        .await
        .expect("create");
    let mut plain = invitation("inv_2", "erin@example.com", 2, T0 + 1);
    plain.display_name = None;
    plain.project = None;
    plain.membership = Membership::Internal;
    store
        .create_invitation(plain.clone(), Vec::new())
        .await
        .expect("create");
    let rows = claimed(&store, Sink::Mail, "node", T0).await;
    assert_eq!(
        rows.iter().map(|row| row.id.as_str()).collect::<Vec<_>>(),
        ["mail_inv"]
    );
    assert!(matches!(
        store
            .create_invitation(invitation("inv_3", "x@example.com", 1, T0), Vec::new())
            .await,
        Err(StoreError::AlreadyExists(_))
    ));

    assert_eq!(
        store
            .invitation_by_hash(&hash_of(1))
            .await
            .expect("by hash"),
        Some(first.clone())
    );
    assert_eq!(
        store
            .invitation_by_hash(&hash_of(9))
            .await
            .expect("by hash"),
        None
    );
    assert_eq!(
        store.pending_invitations(T0 + 2).await.expect("pending"),
        vec![plain.clone(), first.clone()]
    );
    // Expired at its `expires_at`.
    assert_eq!(
        store.pending_invitations(T0 + WEEK).await.expect("pending"),
        vec![plain.clone()]
    );
    assert!(
        !store
            .revoke_invitation("inv_1", T0 + WEEK)
            .await
            .expect("revoke expired")
    );
    assert!(
        store
            .revoke_invitation("inv_1", T0 + 5)
            .await
            .expect("revoke")
    );
    assert!(
        !store
            .revoke_invitation("inv_1", T0 + 6)
            .await
            .expect("again")
    );
    assert!(
        !store
            .revoke_invitation("inv_none", T0 + 6)
            .await
            .expect("unknown")
    );
    let revoked = store
        .invitation_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("found");
    assert_eq!(revoked.revoked_at, Some(T0 + 5));
    assert_eq!(
        store.pending_invitations(T0 + 6).await.expect("pending"),
        vec![plain]
    );
    // A revoked invitation cannot be accepted.
    assert!(
        !store
            .accept_invitation(
                &hash_of(1),
                T0 + 7,
                acceptance("usr_dana", "dana@example.com", 7)
            )
            .await
            .expect("accept revoked")
    );
    assert!(
        store
            .account_by_id("usr_dana")
            .await
            .expect("read")
            .is_none()
    );
}

/// Accepting creates the account with its password, project role and session, all or
/// nothing, once: of many acceptances racing, exactly one wins. A taken email writes nothing.
pub async fn check_accepting_an_invitation_is_single_use(store: Arc<dyn Store>) {
    user(&store, "usr_admin").await;
    let taken = user(&store, "usr_taken").await;
    projects(&store, &["P1"]).await;
    store
        .create_invitation(invitation("inv_1", "dana@example.com", 1, T0), Vec::new())
        .await
        .expect("create");
    let mut racers = Vec::new();
    for n in 0..8u8 {
        let store = Arc::clone(&store);
        racers.push(tokio::spawn(async move {
            let id = format!("usr_dana{n}");
            store
                .accept_invitation(
                    &hash_of(1),
                    T0 + 10,
                    acceptance(&id, "dana@example.com", 100 + n),
                )
                .await
        }));
    }
    let mut winners = Vec::new();
    for racer in racers {
        match racer.await.expect("join") {
            Ok(true) => winners.push(()),
            Ok(false) | Err(StoreError::AlreadyExists(_)) => {}
            Err(other) => panic!("accept failed: {other}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one acceptance wins");
    let account = store
        .account_by_email("dana@example.com")
        .await
        .expect("read")
        .expect("created");
    assert_eq!(account.membership, Membership::External);
    assert_eq!(account.status, UserStatus::Active);
    assert_eq!(
        store
            .password_hash(account.id())
            .await
            .expect("hash")
            .as_deref(),
        Some("$argon2id$invited")
    );
    assert_eq!(
        store.project_role("P1", account.id()).await.expect("role"),
        Some(ProjectRole::Editor)
    );
    let accepted = store
        .invitation_by_hash(&hash_of(1))
        .await
        .expect("by hash")
        .expect("found");
    assert_eq!(accepted.accepted_at, Some(T0 + 10));
    assert!(
        store
            .pending_invitations(T0 + 11)
            .await
            .expect("pending")
            .is_empty()
    );
    // The winner's session signs them in; the losers' were never written.
    let (_, holder) = store
        .session_by_hash(&hash_of(
            100 + account
                .id()
                .trim_start_matches("usr_dana")
                .parse::<u8>()
                .expect("racer"),
        ))
        .await
        .expect("read")
        .expect("the winner's session");
    assert_eq!(holder.id(), account.id());
    for n in 0..8u8 {
        if format!("usr_dana{n}") != account.id() {
            assert!(
                store
                    .session_by_hash(&hash_of(100 + n))
                    .await
                    .expect("read")
                    .is_none()
            );
        }
    }

    // An email taken by then: nothing written, the invitation stays pending.
    let mut late = invitation("inv_2", &taken.email, 2, T0);
    late.project = None;
    store
        .create_invitation(late, Vec::new())
        .await
        .expect("create");
    assert!(matches!(
        store
            .accept_invitation(
                &hash_of(2),
                T0 + 20,
                acceptance("usr_other", &taken.email, 50)
            )
            .await,
        Err(StoreError::AlreadyExists(_))
    ));
    assert!(
        store
            .account_by_id("usr_other")
            .await
            .expect("read")
            .is_none()
    );
    assert!(
        store
            .session_by_hash(&hash_of(50))
            .await
            .expect("read")
            .is_none()
    );
    assert_eq!(
        store
            .invitation_by_hash(&hash_of(2))
            .await
            .expect("by hash")
            .expect("found")
            .accepted_at,
        None
    );
    // Expired: refused.
    assert!(
        !store
            .accept_invitation(
                &hash_of(2),
                T0 + WEEK,
                acceptance("usr_late", "late@example.com", 51)
            )
            .await
            .expect("accept expired")
    );
}

/// A reset is stored with its mail row, used once (even when raced) before it expires; using
/// it replaces the password hash and ends every session of the person.
pub async fn check_password_resets_are_single_use(store: Arc<dyn Store>) {
    let alice = user(&store, "usr_alice").await;
    store
        .insert_session(SessionRecord {
            id: "ses_a".to_string(),
            hash: hash_of(40),
            user_id: alice.id().to_string(),
            created_at: T0,
            expires_at: T0 + WEEK,
        })
        .await
        .expect("session");
    let reset = PasswordResetRecord {
        hash: hash_of(1),
        user_id: alice.id().to_string(),
        created_at: T0,
        expires_at: T0 + 3_600_000,
        used_at: None,
    };
    store
        .create_password_reset(reset.clone(), vec![entry("mail_reset", Sink::Mail, T0)])
        .await
        .expect("create");
    assert_eq!(
        claimed(&store, Sink::Mail, "node", T0)
            .await
            .iter()
            .map(|row| row.id.as_str())
            .collect::<Vec<_>>(),
        ["mail_reset"]
    );
    assert_eq!(
        store.password_reset(&hash_of(1)).await.expect("read"),
        Some(reset.clone())
    );
    assert_eq!(store.password_reset(&hash_of(2)).await.expect("read"), None);
    // Expired at `expires_at`.
    assert_eq!(
        store
            .redeem_password_reset(&hash_of(1), T0 + 3_600_000, "$argon2id$late".into())
            .await
            .expect("expired"),
        None
    );
    let mut racers = Vec::new();
    for n in 0..8 {
        let store = Arc::clone(&store);
        racers.push(tokio::spawn(async move {
            store
                .redeem_password_reset(&hash_of(1), T0 + 10, format!("$argon2id${n}"))
                .await
        }));
    }
    let mut winners = Vec::new();
    for racer in racers {
        if let Some(user_id) = racer.await.expect("join").expect("redeem") {
            winners.push(user_id);
        }
    }
    assert_eq!(winners, vec![alice.id().to_string()]);
    assert!(
        store
            .password_hash(alice.id())
            .await
            .expect("hash")
            .is_some_and(|hash| hash.starts_with("$argon2id$"))
    );
    assert!(
        store
            .session_by_hash(&hash_of(40))
            .await
            .expect("read")
            .is_none()
    );
    assert_eq!(
        store
            .password_reset(&hash_of(1))
            .await
            .expect("read")
            .and_then(|r| r.used_at),
        Some(T0 + 10)
    );
}
