//! The typed client (`docreview-client`) against a real server: every answer it reads is the
//! wire type of `docreview-api`, refusals are typed, and the event stream arrives as events.

use crate::support::{AGENT_TOKEN, SAMPLE_HTML, Server};
use docreview_client::api::{
    Category, CodeExchange, CommentSearchQuery, CommentStatus, FinishRun, ListQuery, Locator,
    NewComment, NewReply, Quote, RunStatus, StartRun, StatusChange,
};
use docreview_client::{Client, DocumentUpload, Error, HtmlFile};

fn client(server: &Server, token: &str) -> Client {
    Client::new(&server.base, Some(token.into())).expect("client")
}

/// Ada, with `docs` and `comments`, and a document she uploaded.
async fn ada_with_a_document(server: &Server) -> (Client, String) {
    server.create_user("ada@example.com", "Ada", &[]);
    let ada = client(
        server,
        &server.issue_token("ada@example.com", "docs,comments"),
    );
    let file = HtmlFile {
        name: "a.html".into(),
        bytes: SAMPLE_HTML.as_bytes().to_vec(),
    };
    let review = ada
        .import_html(&file, &DocumentUpload::default())
        .await
        .expect("upload");
    (ada, review.review_id)
}

#[allow(
    clippy::unnecessary_wraps,
    reason = "the value of an `Option` field, built inline"
)]
fn by_quote(exact: &str) -> Option<Locator> {
    Some(Locator {
        quote: Some(Quote {
            exact: exact.into(),
            prefix: String::new(),
            suffix: String::new(),
        }),
        ..Locator::default()
    })
}

fn comment(body: &str, locator: Option<Locator>, base: Option<i64>) -> NewComment {
    NewComment {
        body: body.into(),
        category: Some(Category::Revise),
        locator,
        base_comments_revision: base,
        suggestion: None,
    }
}

#[tokio::test]
async fn a_review_from_upload_to_resolution_through_the_typed_client() {
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let ada = client(
        &server,
        &server.issue_token("ada@example.com", "docs,comments"),
    );

    let file = HtmlFile {
        name: "plan.html".into(),
        bytes: SAMPLE_HTML.as_bytes().to_vec(),
    };
    let fields = DocumentUpload {
        title: Some("Plan".into()),
        tags: vec!["q3".into()],
        ..DocumentUpload::default()
    };
    let review = ada.import_html(&file, &fields).await.expect("upload");
    assert_eq!(review.title, "Plan");
    assert_eq!(review.tags, ["q3"]);
    let id = review.review_id.clone();

    let listed = ada.list_reviews(&ListQuery::default()).await.expect("list");
    assert!(listed.reviews.iter().any(|row| row.review_id == id));

    let mut events = ada.events(&id).await.expect("events");
    let first = events.next().await.expect("an event").expect("typed");
    assert_eq!(first.review_id, id);

    let written = ada
        .add_comment(
            &id,
            &comment("Which fox?", by_quote("quick brown fox"), None),
        )
        .await
        .expect("comment");
    assert_eq!(written.comment.body, "Which fox?");
    let quote = written
        .comment
        .anchor
        .quote
        .clone()
        .expect("anchored by quote");
    assert_eq!(quote.exact, "quick brown fox");
    let change = events.next().await.expect("an event").expect("typed");
    assert_eq!(change.comments_revision, written.comments_revision);

    let cid = written.comment.id.clone();
    let reply = ada
        .reply(
            &id,
            &cid,
            &NewReply {
                body: "The red one.".into(),
                run_id: None,
                base_comments_revision: None,
                base_thread_revision: None,
            },
        )
        .await
        .expect("reply");
    let resolved = ada
        .set_status(
            &id,
            &cid,
            &StatusChange {
                status: CommentStatus::Closed,
                base_comments_revision: Some(reply.comments_revision),
                base_thread_revision: None,
            },
        )
        .await
        .expect("resolve");
    assert_eq!(resolved.comment.status, CommentStatus::Closed);

    let read = ada.review(&id, false).await.expect("read");
    let thread = &read.comments[0];
    assert_eq!(thread.thread[0].body, "The red one.");
    assert_eq!(thread.status_events.len(), 1);

    let found = ada
        .search_comments(&CommentSearchQuery {
            q: Some("fox".into()),
            ..CommentSearchQuery::default()
        })
        .await
        .expect("search");
    assert_eq!(found.results.len(), 1);
}

#[tokio::test]
async fn refusals_are_typed_and_conflicts_carry_what_a_retry_needs() {
    let server = Server::start();
    let (ada, id) = ada_with_a_document(&server).await;
    ada.add_comment(&id, &comment("First.", None, Some(0)))
        .await
        .expect("first");

    let stale = ada
        .add_comment(&id, &comment("Second.", None, Some(0)))
        .await
        .expect_err("a stale base revision");
    assert!(
        matches!(
            stale,
            Error::RevisionConflict {
                current_revision: 1,
                ..
            }
        ),
        "{stale:?}"
    );

    let missing = ada
        .review("rv_nope", false)
        .await
        .expect_err("no such review");
    assert_eq!(missing.status(), Some(404));
    assert_eq!(missing.code(), Some("not_found"));

    let anonymous = Client::new(&server.base, None).expect("client");
    let refused = anonymous.me().await.expect_err("no credentials");
    assert_eq!(refused.code(), Some("unauthorized"));
    let Error::Api { body } = refused else {
        panic!("an API refusal")
    };
    assert_eq!(body.reason.as_deref(), Some("missing"));

    let wrong = client(
        &server,
        "drp_notarealtokenatallnotarealtokenatallnotarealtok",
    );
    let shown = format!("{wrong:?} {}", wrong.me().await.expect_err("forged"));
    assert!(!shown.contains("notarealtoken"), "{shown}");

    let unused = ada
        .exchange_cli_code(&CodeExchange {
            code: "nope".into(),
            verifier: "nope".into(),
        })
        .await
        .expect_err("an unknown code");
    assert_eq!(unused.code(), Some("invalid_request"));
}

#[tokio::test]
async fn an_agent_runs_a_review_with_the_shared_token() {
    let server = Server::start();
    let (ada, id) = ada_with_a_document(&server).await;

    let agent = client(&server, AGENT_TOKEN);
    let run = agent
        .start_run(
            &id,
            &StartRun {
                title: Some("Pass".into()),
                ..StartRun::default()
            },
        )
        .await
        .expect("start");
    assert_eq!(run.status, RunStatus::Running);
    let draft = agent
        .add_run_comment(
            &id,
            &run.id,
            &comment("Say which fox.", by_quote("fox"), None),
        )
        .await
        .expect("run comment");
    assert!(draft.comment.provisional);
    assert_eq!(draft.quote_matches, Some(2), "the quote occurs twice");
    let done = agent
        .finish_run(
            &id,
            &run.id,
            &FinishRun {
                status: RunStatus::Completed,
                summary: Some("One note.".into()),
                base_comments_revision: None,
            },
        )
        .await
        .expect("finish");
    assert_eq!(done.comment_ids, std::slice::from_ref(&draft.comment.id));
    let read = ada.review(&id, false).await.expect("read");
    assert!(!read.comments[0].provisional, "kept once the run completed");
}
