//! The first walk through the API: create, comment, reply, resolve, new version.

use crate::support;

use serde_json::json;

use crate::support::{SAMPLE_HTML, Server, html_part};

#[tokio::test]
async fn create_comment_reply_resolve_and_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.create_review("Sample", SAMPLE_HTML).await;
    let id = review["reviewId"].as_str().expect("id");
    assert_eq!(review["commentsRevision"], 0);
    assert_eq!(review["role"], "owner");

    let written = ada.comment_on(id, "quick brown fox", "Which fox?").await;
    assert_eq!(written["commentsRevision"], 1);
    let comment_id = written["comment"]["id"].as_str().expect("comment id");
    assert_eq!(written["comment"]["anchor"]["state"], "exact");
    assert_eq!(written["comment"]["anchor"]["sectionId"], "intro");

    let reply = ada
        .post(
            &format!("/api/reviews/{id}/comments/{comment_id}/thread"),
            &json!({ "body": "The brown one." }),
        )
        .await;
    assert_eq!(reply.expect(201)["commentsRevision"], 2);

    let resolved = ada
        .post(
            &format!("/api/reviews/{id}/comments/{comment_id}/status-events"),
            &json!({ "status": "closed", "baseCommentsRevision": 2 }),
        )
        .await;
    let resolved = resolved.expect(201);
    assert_eq!(resolved["event"]["seq"], 1);
    assert_eq!(resolved["comment"]["status"], "closed");

    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            html_part(
                SAMPLE_HTML.replace("lazy dog", "sleepy cat").as_bytes(),
                "v2.html",
            ),
        )
        .text("label", "second");
    let updated = ada
        .multipart(&format!("/api/reviews/{id}/import-html"), form)
        .await;
    let updated = &updated.expect(201)["review"];
    assert_eq!(
        updated["source"]["versions"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(updated["source"]["versions"][1]["label"], "second");
    assert_eq!(updated["comments"][0]["anchor"]["state"], "exact");
    // Adding a version re-anchors every comment: one more comment change.
    assert_eq!(updated["commentsRevision"], 4);
}

/// `serve --demo` keeps its throwaway database in a temporary directory and removes it when
/// it stops.
#[test]
fn the_demo_removes_its_data_when_it_stops() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let temp = tempfile::tempdir().expect("temp dir");
    let demo_dirs = || {
        std::fs::read_dir(temp.path())
            .expect("read temp dir")
            .filter_map(Result::ok)
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("docreview-demo-")
            })
            .count()
    };
    let mut child = Command::new(support::binary())
        .env_remove("DOCREVIEW_DATA_DIR")
        .env_remove("DATABASE_URL")
        .env("TMPDIR", temp.path())
        .env("RUST_LOG", "warn")
        .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the demo");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    while let Some(Ok(line)) = lines.next() {
        if line.starts_with("docreview listening on ") {
            break;
        }
    }
    assert_eq!(
        demo_dirs(),
        1,
        "the demo's data is in the temporary directory"
    );
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(stopped.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
    assert_eq!(demo_dirs(), 0, "the demo's data is removed");
}
