//! The visibility matrix: every backend's SQL against the core's rule, cell by cell.
//!
//! A world is generated from every kind of caller (internal and external members, admins or
//! not, active, suspended or removed, plus a shared-token principal and a plain owner) and, for
//! each member kind, a document for every combination of owner (the caller or someone else),
//! access mode, sharing grant naming the caller (none, viewer, editor, or their email in another
//! case) and project (none, or one of four, where each caller holds a different role: none,
//! viewer, editor, manager). Then, for every caller and every document, what the backend lists,
//! finds by document search and finds by comment search (across all documents, and within the
//! one document) must agree with `access::role_on` given the caller's `access::visibility`: the
//! same documents, and, from the grant and project role the rows carry, the same role.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use docreview_core::access::{self, Actor, Credential};
use docreview_core::model::{
    AccessMode, Account, GrantRole, Membership, ProjectRole, Provider, ReviewHead, Role,
    SharedKind, UserStatus,
};
use docreview_core::store::{
    CommentSearch, NewReview, ReviewSearch, SearchQuery, SearchTerm, Store, Visibility,
};
use tokio::task::JoinSet;

use crate::fixtures::{T0, account, comment, grant, new_review, projects, query, write_items};

const PROJECTS: [&str; 4] = ["PRJ-0", "PRJ-1", "PRJ-2", "PRJ-3"];
/// Caller `k` holds `PROJECT_ROLES[(j + k) % 4]` in project `j`: every caller meets every role.
const PROJECT_ROLES: [Option<ProjectRole>; 4] = [
    None,
    Some(ProjectRole::Viewer),
    Some(ProjectRole::Editor),
    Some(ProjectRole::Manager),
];

/// How a generated document's sharing list names its caller.
#[derive(Debug, Clone, Copy)]
enum Sharing {
    None,
    Grant(GrantRole),
    /// An editor grant to the caller's email in upper case: emails are stored normalized, and a
    /// grant names an account exactly, in the core as in SQL.
    OtherCase,
}

const SHARINGS: [Sharing; 4] = [
    Sharing::None,
    Sharing::Grant(GrantRole::Viewer),
    Sharing::Grant(GrantRole::Editor),
    Sharing::OtherCase,
];

/// One caller of the matrix.
struct Caller {
    actor: Actor,
    /// The word in the title, text and comment of the documents generated for this caller.
    group: String,
    /// `project code → role`.
    roles: HashMap<&'static str, ProjectRole>,
}

/// One generated document, as the core's rule reads it.
struct Document {
    head: ReviewHead,
    group: String,
}

fn caller_account(id: &str, membership: Membership, admin: bool, status: UserStatus) -> Account {
    let mut account = account(id, &format!("{id}@example.com"), membership);
    account.is_admin = admin;
    account.status = status;
    account
}

/// Every kind of member, then a plain owner of many documents and a shared-token principal.
fn callers() -> Vec<Caller> {
    let mut accounts: Vec<(Account, Credential)> = Vec::new();
    let session = || Credential::Session {
        session_id: "ses_matrix".to_string(),
    };
    for &membership in Membership::ALL {
        for admin in [false, true] {
            for &status in UserStatus::ALL {
                let id = format!(
                    "usr_{}_{}_{}",
                    membership.as_str(),
                    if admin { "admin" } else { "member" },
                    status.as_str()
                );
                let account = caller_account(&id, membership, admin, status);
                accounts.push((account, session()));
            }
        }
    }
    let owner = caller_account("usr_owner", Membership::Internal, false, UserStatus::Active);
    accounts.push((owner, session()));
    let mut agent = caller_account(
        SharedKind::Agent.user_id(),
        Membership::Internal,
        false,
        UserStatus::Active,
    );
    agent.user.provider = Provider::Service;
    accounts.push((agent, Credential::Shared(SharedKind::Agent)));
    accounts
        .into_iter()
        .enumerate()
        .map(|(k, (account, credential))| Caller {
            actor: Actor {
                account,
                credential,
            },
            group: format!("grp{k:02}"),
            roles: PROJECTS
                .iter()
                .enumerate()
                .filter_map(|(j, code)| PROJECT_ROLES[(j + k) % 4].map(|role| (*code, role)))
                .collect(),
        })
        .collect()
}

/// The documents generated for `caller`, owned by them or by `usr_owner`.
fn documents_for(caller: &Caller, at: &mut i64) -> Vec<NewReview> {
    let account = &caller.actor.account;
    let mut documents = Vec::new();
    for owner in [account.id(), "usr_owner"] {
        for &mode in AccessMode::ALL {
            for (s, sharing) in SHARINGS.iter().enumerate() {
                for project in std::iter::once(None).chain(PROJECTS.iter().map(Some)) {
                    *at += 1;
                    let id = format!(
                        "doc_{}_{}_{}_{s}_{}",
                        caller.group,
                        if owner == account.id() {
                            "own"
                        } else {
                            "other"
                        },
                        mode.as_str(),
                        project.unwrap_or(&"none")
                    );
                    let mut new = new_review(&id, owner, *at);
                    new.review.title = format!("Matrix {}", caller.group);
                    new.review.access_mode = mode;
                    new.review.project_code = project.map(std::string::ToString::to_string);
                    new.search_text = format!("{} {id}", caller.group);
                    new.grants = match sharing {
                        Sharing::None => Vec::new(),
                        Sharing::Grant(role) => vec![grant(&account.email, *role)],
                        Sharing::OtherCase => {
                            vec![grant(&account.email.to_uppercase(), GrantRole::Editor)]
                        }
                    };
                    documents.push(new);
                }
            }
        }
    }
    documents
}

/// Creates the accounts, projects, roles and documents (each with one comment carrying its
/// group's word), returning the documents by id.
async fn build(store: &Arc<dyn Store>, callers: &[Caller]) -> BTreeMap<String, Document> {
    for caller in callers {
        store
            .create_account(caller.actor.account.clone(), None)
            .await
            .expect("create account");
    }
    projects(store, &PROJECTS).await;
    for code in PROJECTS {
        let set: Vec<(String, ProjectRole)> = callers
            .iter()
            .filter_map(|c| c.roles.get(code).map(|r| (c.actor.id().to_string(), *r)))
            .collect();
        store
            .change_project_roles(code, set, vec![])
            .await
            .expect("project roles");
    }
    let mut at = T0;
    let members = callers
        .iter()
        .filter(|c| matches!(c.actor.credential, Credential::Session { .. }))
        .filter(|c| c.actor.id() != "usr_owner");
    let mut documents = BTreeMap::new();
    let mut pending = Vec::new();
    for caller in members {
        for new in documents_for(caller, &mut at) {
            let head = ReviewHead {
                review: new.review.clone(),
                grants: new.grants.clone(),
            };
            let group = caller.group.clone();
            documents.insert(new.review.id.clone(), Document { head, group });
            pending.push(new);
        }
    }
    // Written concurrently, a bounded number at a time.
    for chunk in pending.chunks(32) {
        let mut writes = JoinSet::new();
        for new in chunk.iter().cloned() {
            let store = Arc::clone(store);
            writes.spawn(async move {
                let id = new.review.id.clone();
                let mut item = comment(
                    &id,
                    &format!("c_{id}"),
                    &new.review.owner_id,
                    new.review.created_at,
                );
                item.body = format!("A remark {}", new.search_text);
                store.create_review(new).await.expect("create review");
                write_items(&store, &id, vec![item], vec![]).await;
            });
        }
        while let Some(done) = writes.join_next().await {
            done.expect("write task");
        }
    }
    documents
}

fn word(word: &str) -> SearchQuery {
    SearchQuery {
        terms: vec![SearchTerm::Prefix(word.to_string())],
    }
}

/// One cell: what the backend answered for a document (`None`: absent; else the role the core
/// computes from the row's grant and project role, itself `None` if the core would not show the
/// row) against the core's rule.
#[allow(
    clippy::option_option,
    reason = "absent, present without a role, present with one: three cases"
)]
fn agrees(answered: Option<Option<Role>>, expected: Option<Role>) -> bool {
    match answered {
        None => expected.is_none(),
        Some(role) => role.is_some() && role == expected,
    }
}

#[allow(
    clippy::option_option,
    reason = "absent, present without a role, present with one: three cases"
)]
fn describe(answered: Option<Option<Role>>) -> String {
    match answered {
        None => "absent".to_string(),
        Some(None) => "present, with a row the core gives no role".to_string(),
        Some(Some(role)) => format!("present as {role}"),
    }
}

/// Every caller against every document of the generated world, by listing, by document search
/// and by comment search; see the module's notes. Prints how many cells were compared.
pub async fn check_visibility_matrix(store: Arc<dyn Store>) {
    let callers = callers();
    let documents = build(&store, &callers).await;
    let groups: Vec<&String> = {
        let mut groups: Vec<&String> = documents.values().map(|d| &d.group).collect();
        groups.sort();
        groups.dedup();
        groups
    };
    let mut disagreements = Vec::new();
    let mut cells = 0usize;
    for caller in &callers {
        let role_in = |document: &Document| {
            let project_role = document
                .head
                .review
                .project_code
                .as_deref()
                .and_then(|code| caller.roles.get(code).copied());
            (
                project_role,
                access::role_on(&caller.actor, &document.head, project_role),
            )
        };
        let Some(visibility) = access::visibility(&caller.actor) else {
            // The store is never asked: the caller must see nothing by the core's rule either.
            for (id, document) in &documents {
                let expected = role_in(document).1;
                if !agrees(None, expected) {
                    disagreements.push(format!(
                        "{} sees nothing, but the core gives {expected:?} on {id}",
                        caller.actor.id()
                    ));
                }
                // Listing, document search and comment search, answered by the core alone.
                cells += 3;
            }
            continue;
        };

        // Listing: the documents, and the role computed from each row's grant and project role.
        let mut listed = HashMap::new();
        let mut list = query(visibility.clone());
        list.limit = documents.len() + 1;
        for row in store.list_reviews(list).await.expect("list reviews") {
            listed.insert(row.review.id.clone(), row);
        }
        // Document search: one search per group's word (each well inside the search window).
        let mut found_documents = HashMap::new();
        let mut found_comments = HashSet::new();
        for group in &groups {
            let search = ReviewSearch {
                visibility: visibility.clone(),
                query: word(group),
                offset: 0,
                limit: 1000,
            };
            for hit in store
                .search_reviews(search)
                .await
                .expect("search documents")
            {
                found_documents.insert(hit.summary.review.id.clone(), hit.summary);
            }
            let search = comment_search(visibility.clone(), group, None);
            for hit in store
                .search_comments(search)
                .await
                .expect("search comments")
            {
                found_comments.insert(hit.review_id);
            }
        }
        for (id, document) in &documents {
            let (project_role, expected) = role_in(document);
            for (what, rows) in [("list", &listed), ("document search", &found_documents)] {
                let answered = rows.get(id).map(|row| {
                    if row.project_role != project_role {
                        disagreements.push(format!(
                            "{what}: {} on {id}: project role {:?}, expected {project_role:?}",
                            caller.actor.id(),
                            row.project_role
                        ));
                    }
                    access::role_with_grant(
                        &caller.actor,
                        &row.review.owner_id,
                        row.review.access_mode,
                        row.grant,
                        row.project_role,
                    )
                });
                if !agrees(answered, expected) {
                    disagreements.push(format!(
                        "{what}: {} on {id}: {}, but the core says {expected:?}",
                        caller.actor.id(),
                        describe(answered)
                    ));
                }
                cells += 1;
            }
            let found = found_comments.contains(id);
            if found != expected.is_some() {
                disagreements.push(format!(
                    "comment search: {} on {id}: store {}, core {expected:?}",
                    caller.actor.id(),
                    if found { "found" } else { "not found" }
                ));
            }
            cells += 1;
        }

        // Comment search within one document: each of the caller's own group's documents.
        let own = if documents.values().any(|d| d.group == caller.group) {
            caller.group.clone()
        } else {
            groups[0].clone()
        };
        for (id, document) in documents.iter().filter(|(_, d)| d.group == own) {
            let expected = role_in(document).1;
            let search = comment_search(visibility.clone(), &own, Some(id));
            let found = !store
                .search_comments(search)
                .await
                .expect("search comments")
                .is_empty();
            if found != expected.is_some() {
                disagreements.push(format!(
                    "comment search in {id}: {}: store {}, core {expected:?}",
                    caller.actor.id(),
                    if found { "found" } else { "not found" }
                ));
            }
            cells += 1;
        }
    }
    eprintln!(
        "visibility matrix: {} callers × {} documents, {cells} cells compared",
        callers.len(),
        documents.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} of {cells} cells disagree with the core, e.g.:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(20)].join("\n")
    );
}

fn comment_search(visibility: Visibility, group: &str, review_id: Option<&str>) -> CommentSearch {
    CommentSearch {
        visibility,
        query: word(group),
        status: None,
        category: None,
        review_id: review_id.map(str::to_string),
        assignee_id: None,
        offset: 0,
        limit: 1000,
    }
}
