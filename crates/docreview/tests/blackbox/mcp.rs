//! `docreview mcp` as an agent uses it: the real binary as a child process, driven by the
//! official SDK's client over stdio; a full review in one run, with the state read back
//! through the API.

use crate::support;

use crate::support::{SAMPLE_HTML, Server};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// The tool's answer as JSON (or its error text), and whether it was an error.
fn answer(result: &CallToolResult) -> (Value, bool) {
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default();
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (value, result.is_error.unwrap_or(false))
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> (Value, bool) {
    let params = CallToolRequestParams::new(tool)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    let result = client.call_tool(params).await.expect("the tool answers");
    answer(&result)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_reviews_a_document_in_one_run() {
    let server = Server::start();
    let owner = server.user("ada@example.com", "Ada", &[], "docs,comments");
    let review = owner.upload("Plan", SAMPLE_HTML).await;
    let id = review.review_id.clone();
    let token = server.issue_token("ada@example.com", "docs,comments");
    let config = tempfile::tempdir().expect("config dir");

    let command = tokio::process::Command::new(support::binary()).configure(|cmd| {
        cmd.arg("mcp")
            .env("XDG_CONFIG_HOME", config.path())
            .env("DOCREVIEW_URL", &server.base)
            .env("DOCREVIEW_TOKEN", &token)
            .env("RUST_LOG", "off");
    });
    let transport = TokioChildProcess::new(command).expect("spawn docreview mcp");
    let client = ().serve(transport).await.expect("initialize");

    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
    for expected in [
        "reviews_read",
        "run_write",
        "comment_write",
        "document_write",
    ] {
        assert!(names.contains(&expected.to_string()), "{names:?}");
    }
    let read_only = tools
        .iter()
        .find(|tool| tool.name == "reviews_read")
        .and_then(|tool| tool.annotations.as_ref())
        .and_then(|annotations| annotations.read_only_hint);
    assert_eq!(read_only, Some(true));

    let (outline, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "outline", "review_id": id }),
    )
    .await;
    assert!(!failed, "{outline}");
    assert!(outline.to_string().contains("Introduction"), "{outline}");

    let (run, failed) = call(
        &client,
        "run_write",
        json!({ "method": "start", "review_id": id, "title": "Pass" }),
    )
    .await;
    assert!(!failed, "{run}");
    let run_id = run["id"].as_str().expect("run id").to_string();

    // Twenty comments, one on a quote the document does not have.
    let mut comments: Vec<Value> = (0..19)
        .map(|i| json!({ "body": format!("Note {i}"), "quote": "quick brown fox", "category": "revise" }))
        .collect();
    comments.insert(7, json!({ "body": "Lost", "quote": "a purple elephant" }));
    let (written, failed) = call(
        &client,
        "run_write",
        json!({ "method": "comment", "review_id": id, "run_id": run_id, "comments": comments }),
    )
    .await;
    assert!(!failed, "{written}");
    assert_eq!(
        written["written"].as_array().map(Vec::len),
        Some(19),
        "{written}"
    );
    assert_eq!(written["commentsRevision"], 1, "one batch, one change");
    let refused = written["failed"].as_array().expect("failed");
    assert_eq!(refused.len(), 1, "{written}");
    assert_eq!(refused[0]["index"], 7);
    assert_eq!(refused[0]["error"], "quote_not_found");
    assert!(
        written["next"]
            .as_str()
            .unwrap_or_default()
            .contains("copied exactly")
    );

    // The text of a section, paged, at the positions anchors use.
    let (text, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "section_id": "intro", "offset": 4, "limit": 9 }),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(text["text"], "oductionT");
    assert_eq!(text["start"], 4);
    assert_eq!(text["nextOffset"], 13);
    let (whole, _) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id }),
    )
    .await;
    assert!(
        whole["text"]
            .as_str()
            .unwrap_or_default()
            .ends_with("Is the fox quick enough?")
    );
    assert!(whole["nextOffset"].is_null());
    let (_, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "text", "review_id": id, "section_id": "nowhere" }),
    )
    .await;
    assert!(failed, "an unknown section is refused");

    let (done, failed) = call(
        &client,
        "run_write",
        json!({ "method": "complete", "review_id": id, "run_id": run_id, "summary": "19 notes." }),
    )
    .await;
    assert!(!failed, "{done}");
    assert_eq!(done["status"], "completed");

    let (page, _) = call(
        &client,
        "reviews_read",
        json!({ "method": "comments", "review_id": id }),
    )
    .await;
    assert_eq!(page["total"], 19);
    let (found, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "search", "q": "Note", "review_id": id }),
    )
    .await;
    assert!(!failed, "{found}");
    assert!(
        !found["results"].as_array().expect("results").is_empty(),
        "{found}"
    );
    let (refused, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "search", "q": "Note", "status": "pending" }),
    )
    .await;
    assert!(failed, "an unknown status is refused: {refused}");
    assert!(refused.to_string().contains("open or closed"), "{refused}");

    // An error names the way out instead of failing the session.
    let (missing, failed) = call(
        &client,
        "reviews_read",
        json!({ "method": "get", "review_id": "rv_nope" }),
    )
    .await;
    assert!(failed);
    assert!(
        missing
            .as_str()
            .unwrap_or_default()
            .contains("reviews_read list"),
        "{missing}"
    );

    client.cancel().await.expect("close");

    // The server holds what the run wrote, no longer as drafts.
    let read = owner.get(&format!("/api/reviews/{id}")).await;
    let body = read.expect(200);
    let kept = body["review"]["comments"].as_array().expect("comments");
    assert_eq!(kept.len(), 19);
    assert!(
        kept.iter()
            .all(|c| c["provisional"] == false && c["runId"] == run_id.as_str())
    );
    assert_eq!(body["review"]["aiReviewRuns"][0]["summary"], "19 notes.");
}

/// A line that is not JSON text (invalid UTF-8, a lone surrogate escape, cut-off JSON) is
/// answered with JSON-RPC's parse error (`-32700`, `id` null), and the server keeps serving:
/// an `initialize` sent after them is answered as usual.
#[tokio::test(flavor = "multi_thread")]
async fn lines_that_are_not_json_get_a_parse_error_and_the_server_goes_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let server = Server::start();
    server.create_user("ada@example.com", "Ada", &[]);
    let token = server.issue_token("ada@example.com", "comments");
    let config = tempfile::tempdir().expect("config dir");
    let mut child = tokio::process::Command::new(support::binary())
        .arg("mcp")
        .env("XDG_CONFIG_HOME", config.path())
        .env("DOCREVIEW_URL", &server.base)
        .env("DOCREVIEW_TOKEN", &token)
        .env("RUST_LOG", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn docreview mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "1" } }
    });
    stdin
        .write_all(b"\xff\xfe not UTF-8\n{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\"}\n{\"jsonrpc\":\n")
        .await
        .expect("write");
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .expect("write");
    stdin.flush().await.expect("flush");

    let mut parse_errors = 0;
    let mut initialized = false;
    while parse_errors < 3 || !initialized {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), stdout.next_line())
            .await
            .expect("an answer within 20 s")
            .expect("read")
            .expect("a line before the end");
        let answer: Value = serde_json::from_str(&line).expect("every answer is JSON");
        if answer["error"]["code"] == -32700 {
            assert!(answer["id"].is_null(), "{answer}");
            assert_eq!(answer["jsonrpc"], "2.0");
            parse_errors += 1;
        } else {
            assert_eq!(answer["id"], 1, "{answer}");
            assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
            initialized = true;
        }
    }
    assert_eq!(parse_errors, 3);
}
