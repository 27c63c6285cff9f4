//! The first walk through the API: create, comment, reply, resolve, new version.

use crate::support;

use docreview_client::api::{
    AnchorState, CommentStatus, NewReply, Role, StatusChange, VersionMode,
};
use docreview_client::{HtmlFile, VersionUpload};

use crate::support::{SAMPLE_HTML, Server};

#[tokio::test]
async fn create_comment_reply_resolve_and_version() {
    let server = Server::start();
    let ada = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = ada.upload("Sample", SAMPLE_HTML).await;
    let id = review.review_id.as_str();
    assert_eq!(review.comments_revision, 0);
    assert_eq!(review.role, Role::Owner);

    let written = ada.note_on(id, "quick brown fox", "Which fox?").await;
    assert_eq!(written.comments_revision, 1);
    let comment_id = written.comment.id.as_str();
    assert_eq!(written.comment.anchor.state, AnchorState::Exact);
    assert_eq!(written.comment.anchor.section_id.as_deref(), Some("intro"));

    let reply = NewReply {
        body: "The brown one.".into(),
        run_id: None,
        base_comments_revision: None,
        base_thread_revision: None,
    };
    let replied = ada
        .api()
        .reply(id, comment_id, &reply)
        .await
        .expect("reply");
    assert_eq!(replied.comments_revision, 2);

    let close = StatusChange {
        status: CommentStatus::Closed,
        base_comments_revision: Some(2),
        base_thread_revision: None,
    };
    let resolved = ada
        .api()
        .set_status(id, comment_id, &close)
        .await
        .expect("resolve");
    assert_eq!(resolved.event.seq, 1);
    assert_eq!(resolved.comment.status, CommentStatus::Closed);

    let file = HtmlFile {
        name: "v2.html".into(),
        bytes: SAMPLE_HTML.replace("lazy dog", "sleepy cat").into_bytes(),
    };
    let upload = VersionUpload {
        mode: VersionMode::AddVersion,
        label: Some("second".into()),
        base_version_id: None,
    };
    let updated = ada
        .api()
        .import_version(id, &file, &upload)
        .await
        .expect("new version");
    assert_eq!(updated.source.versions.len(), 2);
    assert_eq!(updated.source.versions[1].label, "second");
    assert_eq!(updated.comments[0].anchor.state, AnchorState::Exact);
    // Adding a version re-anchors every comment: one more comment change.
    assert_eq!(updated.comments_revision, 4);
}

/// `serve --demo` keeps its throwaway database in a temporary directory (its owner's alone, even
/// under `umask 000`: a temporary directory is shared by every local user) and removes it when
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
    // Under umask 000, set by a shell that then becomes the server.
    let mut child = Command::new("sh")
        .args(["-c", "umask 000 && exec \"$0\" \"$@\""])
        .arg(support::binary())
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
    #[cfg(unix)]
    let modes: Vec<u32> = std::fs::read_dir(temp.path())
        .expect("read temp dir")
        .map(|entry| {
            use std::os::unix::fs::PermissionsExt;
            entry
                .expect("entry")
                .metadata()
                .expect("mode")
                .permissions()
                .mode()
                & 0o777
        })
        .collect();
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(stopped.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
    #[cfg(unix)]
    assert_eq!(modes, [0o700], "the demo's folder is its owner's alone");
    assert_eq!(demo_dirs(), 0, "the demo's data is removed");
}
